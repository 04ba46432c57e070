/*
 * csv.c - comma-separated files as pandas.read_csv reads them (RFC 4180 quoting: a field in
 * double quotes may hold commas, line breaks and "" for one quote), strictly: what pandas
 * would read some other way than the plain rule is refused with the file and the line.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mygpt/data.h"
#include "base/base.h"

/* A growing array of size_t (the fields' offsets, the records' lines). */
typedef struct offsets {
    size_t *v, n, cap;
} offsets;

static int push(offsets *a, size_t x)
{
    if (a->n == a->cap) {
        const size_t cap = a->cap ? 2 * a->cap : 64;
        if (cap > SIZE_MAX / sizeof *a->v)
            return 1;
        size_t *v = realloc(a->v, cap * sizeof *v);
        if (!v)
            return 1;
        a->v = v;
        a->cap = cap;
    }
    a->v[a->n++] = x;
    return 0;
}

/* Bytes of the UTF-8 sequence starting at s (n bytes left), or 0 if it is not one
 * (an overlong form, a surrogate, past U+10FFFF, cut short): Python's strict decoder. */
static size_t utf8_sequence(const unsigned char *s, size_t n)
{
    if (s[0] < 0x80)
        return 1;
    size_t k;
    uint32_t cp;
    if (s[0] >= 0xc2 && s[0] <= 0xdf)
        k = 2, cp = s[0] & 0x1f;
    else if (s[0] >= 0xe0 && s[0] <= 0xef)
        k = 3, cp = s[0] & 0x0f;
    else if (s[0] >= 0xf0 && s[0] <= 0xf4)
        k = 4, cp = s[0] & 0x07;
    else
        return 0;
    if (n < k)
        return 0;
    for (size_t i = 1; i < k; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    if (k == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff)))
        return 0;
    if (k == 4 && (cp < 0x10000 || cp > 0x10ffff))
        return 0;
    return k;
}

mygpt_status mygpt_csv_parse(mygpt_csv *csv, const char *name, const char *data, size_t len, mygpt_error *err)
{
    memset(csv, 0, sizeof *csv);
    const unsigned char *s = (const unsigned char *)data;
    size_t i = 0, line = 1;
    if (len >= 3 && s[0] == 0xef && s[1] == 0xbb && s[2] == 0xbf)
        i = 3; // a byte-order mark, which pandas skips
    // every byte of the whole file is checked first: the fields are then plain bytes
    for (size_t j = i, l = 1; j < len;) {
        if (s[j] == 0)
            return mygpt_fail(err, MYGPT_EFORMAT, "%s line %zu: a NUL byte", name, l);
        const size_t k = utf8_sequence(s + j, len - j);
        if (k == 0)
            return mygpt_fail(err, MYGPT_EFORMAT, "%s line %zu: not UTF-8 (byte 0x%02x)", name, l, s[j]);
        l += s[j] == '\n';
        j += k;
    }
    // the fields' bytes, each followed by a NUL: a field's terminator (a comma, a line
    // break) or its quotes take at least the byte its NUL needs, except at the very end
    char *text = malloc(len + 2);
    offsets starts = {0}, lines = {0};
    mygpt_status st = MYGPT_OK;
    if (!text) {
        st = mygpt_fail(err, MYGPT_ENOMEM, "out of memory reading %s (%zu bytes)", name, len);
        goto done;
    }
    size_t out = 0, in_record = 0;
    while (i < len) {
        if (!in_record) {
            // a blank line: pandas skips it
            if (s[i] == '\n' || (s[i] == '\r' && i + 1 < len && s[i + 1] == '\n')) {
                i += s[i] == '\r' ? 2 : 1;
                line++;
                continue;
            }
            if (push(&lines, line))
                goto nomem;
            in_record = 1;
        }
        if (push(&starts, out))
            goto nomem;
        const size_t field_line = line;
        if (s[i] == '"') { // a quoted field: up to the lone closing quote
            i++;
            for (;;) {
                if (i == len) {
                    st = mygpt_fail(err, MYGPT_EFORMAT,
                                    "%s line %zu: a quoted field is not closed before the end", name, field_line);
                    goto done;
                }
                if (s[i] == '"') {
                    if (i + 1 < len && s[i + 1] == '"') {
                        text[out++] = '"';
                        i += 2;
                        continue;
                    }
                    i++;
                    break;
                }
                line += s[i] == '\n';
                text[out++] = (char)s[i++];
            }
            if (i < len && s[i] != ',' && s[i] != '\n' && s[i] != '\r') {
                st = mygpt_fail(err, MYGPT_EFORMAT, "%s line %zu: text after a quoted field's closing quote",
                                name, line);
                goto done;
            }
        } else { // a plain field: up to a comma or the line's end; a quote in it is a quote
            while (i < len && s[i] != ',' && s[i] != '\n' && s[i] != '\r')
                text[out++] = (char)s[i++];
        }
        text[out++] = '\0';
        if (i == len)
            break;
        if (s[i] == ',') {
            i++;
            if (i == len && push(&starts, out)) // a last empty field
                goto nomem;
            if (i == len)
                text[out++] = '\0';
            continue;
        }
        if (s[i] == '\r' && !(i + 1 < len && s[i + 1] == '\n')) {
            st = mygpt_fail(err, MYGPT_EFORMAT,
                            "%s line %zu: a carriage return outside quotes, not before a line feed", name, line);
            goto done;
        }
        i += s[i] == '\r' ? 2 : 1;
        line++;
        if (push(&starts, SIZE_MAX)) // the record's end
            goto nomem;
        in_record = 0;
    }
    if (in_record && push(&starts, SIZE_MAX))
        goto nomem;
    if (lines.n == 0) {
        st = mygpt_fail(err, MYGPT_EFORMAT, "%s: no header line (the file is empty)", name);
        goto done;
    }
    // every record has the header's number of fields
    size_t cols = 0;
    while (starts.v[cols] != SIZE_MAX)
        cols++;
    for (size_t r = 0, k = 0; r < lines.n; r++, k++) {
        size_t n = 0;
        while (starts.v[k] != SIZE_MAX)
            k++, n++;
        if (n != cols) {
            st = mygpt_fail(err, MYGPT_EFORMAT, "%s line %zu: %zu field%s where the header has %zu", name,
                            lines.v[r], n, n == 1 ? "" : "s", cols);
            goto done;
        }
    }
    const size_t nfields = lines.n * cols;
    csv->field = malloc((nfields ? nfields : 1) * sizeof *csv->field);
    csv->len = malloc((nfields ? nfields : 1) * sizeof *csv->len);
    if (!csv->field || !csv->len)
        goto nomem;
    for (size_t k = 0, f = 0; k < starts.n; k++)
        if (starts.v[k] != SIZE_MAX) {
            csv->field[f] = text + starts.v[k];
            csv->len[f] = strlen(csv->field[f]);
            f++;
        }
    csv->cols = cols;
    csv->rows = lines.n - 1;
    csv->line = lines.v;
    csv->text = text;
    lines.v = NULL;
    text = NULL;
    goto done;
nomem:
    st = mygpt_fail(err, MYGPT_ENOMEM, "out of memory reading %s", name);
done:
    free(starts.v);
    free(lines.v);
    free(text);
    if (st != MYGPT_OK)
        mygpt_csv_free(csv);
    return st;
}

mygpt_status mygpt_csv_read(mygpt_csv *csv, const char *path, mygpt_error *err)
{
    memset(csv, 0, sizeof *csv);
    char *data;
    size_t len;
    MYGPT_TRY(mygpt_read_file(path, &data, &len, err));
    const mygpt_status st = mygpt_csv_parse(csv, path, data, len, err);
    free(data);
    return st;
}

const char *mygpt_csv_field(const mygpt_csv *csv, size_t row, size_t col, size_t *len)
{
    if (row > csv->rows || col >= csv->cols)
        return NULL;
    if (len)
        *len = csv->len[row * csv->cols + col];
    return csv->field[row * csv->cols + col];
}

void mygpt_csv_free(mygpt_csv *csv)
{
    free(csv->field);
    free(csv->len);
    free(csv->line);
    free(csv->text);
    memset(csv, 0, sizeof *csv);
}
