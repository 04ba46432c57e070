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

/* Every byte of the file from i on checked first (no NUL, UTF-8 as Python's strict
 * decoder reads it): the fields are then plain bytes. */
static mygpt_status check_bytes(const unsigned char *s, size_t i, size_t len, const char *name, mygpt_error *err)
{
    for (size_t j = i, l = 1; j < len;) {
        if (s[j] == 0)
            return mygpt_fail(err, MYGPT_EFORMAT, "%s line %zu: a NUL byte", name, l);
        const size_t k = utf8_sequence(s + j, len - j);
        if (k == 0)
            return mygpt_fail(err, MYGPT_EFORMAT, "%s line %zu: not UTF-8 (byte 0x%02x)", name, l, s[j]);
        l += s[j] == '\n';
        j += k;
    }
    return MYGPT_OK;
}

/* The parse as it goes: the input at i (on line), the fields' bytes written into text at
 * out, each followed by a NUL (a field's terminator, a comma or a line break, or its
 * quotes take at least the byte its NUL needs, except at the very end); starts holds
 * each field's offset in text, SIZE_MAX after a record's last; lines each record's line. */
typedef struct csv_scan {
    const unsigned char *s;
    size_t len, i, line;
    const char *name;
    char *text;
    size_t out;
    offsets starts, lines;
} csv_scan;

/* push, or MYGPT_ENOMEM said */
static mygpt_status add(csv_scan *c, offsets *a, size_t x, mygpt_error *err)
{
    return push(a, x) ? mygpt_fail(err, MYGPT_ENOMEM, "out of memory reading %s", c->name) : MYGPT_OK;
}

/* A quoted field: up to the lone closing quote, "" one quote */
static mygpt_status scan_quoted(csv_scan *c, mygpt_error *err)
{
    const unsigned char *s = c->s;
    const size_t field_line = c->line;
    c->i++;
    for (;;) {
        if (c->i == c->len)
            return mygpt_fail(err, MYGPT_EFORMAT, "%s line %zu: a quoted field is not closed before the end",
                              c->name, field_line);
        if (s[c->i] == '"') {
            if (c->i + 1 < c->len && s[c->i + 1] == '"') {
                c->text[c->out++] = '"';
                c->i += 2;
                continue;
            }
            c->i++;
            break;
        }
        c->line += s[c->i] == '\n';
        c->text[c->out++] = (char)s[c->i++];
    }
    if (c->i < c->len && s[c->i] != ',' && s[c->i] != '\n' && s[c->i] != '\r')
        return mygpt_fail(err, MYGPT_EFORMAT, "%s line %zu: text after a quoted field's closing quote", c->name,
                          c->line);
    return MYGPT_OK;
}

/* One field from c->i, and what ends it: a comma, the record's end (a line break) or the
 * file's */
static mygpt_status scan_field(csv_scan *c, mygpt_error *err)
{
    const unsigned char *s = c->s;
    const size_t len = c->len;
    MYGPT_TRY(add(c, &c->starts, c->out, err));
    if (s[c->i] == '"') {
        MYGPT_TRY(scan_quoted(c, err));
    } else { // a plain field: up to a comma or the line's end; a quote in it is a quote
        while (c->i < len && s[c->i] != ',' && s[c->i] != '\n' && s[c->i] != '\r')
            c->text[c->out++] = (char)s[c->i++];
    }
    c->text[c->out++] = '\0';
    if (c->i == len)
        return MYGPT_OK;
    if (s[c->i] == ',') {
        c->i++;
        if (c->i == len) { // a last empty field
            MYGPT_TRY(add(c, &c->starts, c->out, err));
            c->text[c->out++] = '\0';
        }
        return MYGPT_OK;
    }
    if (s[c->i] == '\r' && !(c->i + 1 < len && s[c->i + 1] == '\n'))
        return mygpt_fail(err, MYGPT_EFORMAT, "%s line %zu: a carriage return outside quotes, not before a line feed",
                          c->name, c->line);
    c->i += s[c->i] == '\r' ? 2 : 1;
    c->line++;
    return add(c, &c->starts, SIZE_MAX, err); // the record's end
}

/* Every record from c->i to the end, blank lines skipped as pandas skips them */
static mygpt_status scan_records(csv_scan *c, mygpt_error *err)
{
    const unsigned char *s = c->s;
    int in_record = 0;
    while (c->i < c->len) {
        if (!in_record) {
            if (s[c->i] == '\n' || (s[c->i] == '\r' && c->i + 1 < c->len && s[c->i + 1] == '\n')) {
                c->i += s[c->i] == '\r' ? 2 : 1;
                c->line++;
                continue;
            }
            MYGPT_TRY(add(c, &c->lines, c->line, err));
            in_record = 1;
        }
        MYGPT_TRY(scan_field(c, err));
        in_record = c->i < c->len && c->starts.v[c->starts.n - 1] != SIZE_MAX;
    }
    if (c->lines.n && c->starts.v[c->starts.n - 1] != SIZE_MAX)
        MYGPT_TRY(add(c, &c->starts, SIZE_MAX, err));
    if (c->lines.n == 0)
        return mygpt_fail(err, MYGPT_EFORMAT, "%s: no header line (the file is empty)", c->name);
    return MYGPT_OK;
}

/* The header's number of fields (*cols), which every record has */
static mygpt_status check_widths(const csv_scan *c, size_t *cols, mygpt_error *err)
{
    const size_t *starts = c->starts.v;
    *cols = 0;
    while (starts[*cols] != SIZE_MAX)
        (*cols)++;
    for (size_t r = 0, k = 0; r < c->lines.n; r++, k++) {
        size_t n = 0;
        while (starts[k] != SIZE_MAX)
            k++, n++;
        if (n != *cols)
            return mygpt_fail(err, MYGPT_EFORMAT, "%s line %zu: %zu field%s where the header has %zu", c->name,
                              c->lines.v[r], n, n == 1 ? "" : "s", *cols);
    }
    return MYGPT_OK;
}

/* The table of the scanned fields into csv, which takes c's text and lines */
static mygpt_status make_table(mygpt_csv *csv, csv_scan *c, size_t cols, mygpt_error *err)
{
    const size_t nfields = c->lines.n * cols;
    csv->field = malloc((nfields ? nfields : 1) * sizeof *csv->field);
    csv->len = malloc((nfields ? nfields : 1) * sizeof *csv->len);
    if (!csv->field || !csv->len)
        return mygpt_fail(err, MYGPT_ENOMEM, "out of memory reading %s", c->name);
    for (size_t k = 0, f = 0; k < c->starts.n; k++)
        if (c->starts.v[k] != SIZE_MAX) {
            csv->field[f] = c->text + c->starts.v[k];
            csv->len[f] = strlen(csv->field[f]);
            f++;
        }
    csv->cols = cols;
    csv->rows = c->lines.n - 1;
    csv->line = c->lines.v;
    csv->text = c->text;
    c->lines.v = NULL;
    c->text = NULL;
    return MYGPT_OK;
}

mygpt_status mygpt_csv_parse(mygpt_csv *csv, const char *name, const char *data, size_t len, mygpt_error *err)
{
    memset(csv, 0, sizeof *csv);
    csv_scan c = {.s = (const unsigned char *)data, .len = len, .line = 1, .name = name};
    if (len >= 3 && c.s[0] == 0xef && c.s[1] == 0xbb && c.s[2] == 0xbf)
        c.i = 3; // a byte-order mark, which pandas skips
    MYGPT_TRY(check_bytes(c.s, c.i, len, name, err));
    mygpt_status st = MYGPT_OK;
    size_t cols = 0;
    if (!(c.text = malloc(len + 2)))
        st = mygpt_fail(err, MYGPT_ENOMEM, "out of memory reading %s (%zu bytes)", name, len);
    if (st == MYGPT_OK)
        st = scan_records(&c, err);
    if (st == MYGPT_OK)
        st = check_widths(&c, &cols, err);
    if (st == MYGPT_OK)
        st = make_table(csv, &c, cols, err);
    free(c.starts.v);
    free(c.lines.v);
    free(c.text);
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
    if (!csv)
        return;
    free(csv->field);
    free(csv->len);
    free(csv->line);
    free(csv->text);
    memset(csv, 0, sizeof *csv);
}
