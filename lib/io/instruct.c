/*
 * instruct.c - the book's chapter-7 instruction data: the Alpaca-style prompt that
 * format_input builds (Raschka, section 7.2), which instruction fine-tuning trains on
 * and a chat wraps each line in; instruction-data.json read into entries, the book's
 * 85/5/10 split, InstructionDataset and custom_collate_fn (section 7.3), with exercise
 * 7.2's masking of the prompt in the targets; the DataLoader over it (section 7.4), and
 * the responses to the test set as the book writes them (section 7.7).
 */
#include <stdlib.h>
#include <string.h>

#include "mygpt/data.h"
#include "mygpt/tokenizer.h"
#include "mygpt/train.h"
#include "base/base.h"
#include "io/loader.h"
#include "base/text.h"
#include "io/json.h"

#define PREAMBLE                                                                                                 \
    "Below is an instruction that describes a task. Write a response that appropriately completes the request."
#define INSTRUCTION_HEADER "\n\n### Instruction:\n"
#define INPUT_HEADER "\n\n### Input:\n"

mygpt_status mygpt_instruct_prompt(char **out, const char *instruction, const char *input, mygpt_error *err)
{
    *out = NULL;
    if (!instruction)
        return mygpt_fail(err, MYGPT_EINVAL, "an entry needs an instruction");
    const int has_input = input && input[0]; // the book: `if entry["input"] else ""`
    const size_t len = strlen(PREAMBLE INSTRUCTION_HEADER) + strlen(instruction) +
                       (has_input ? strlen(INPUT_HEADER) + strlen(input) : 0);
    char *s = malloc(len + 1);
    if (!s)
        return mygpt_fail(err, MYGPT_ENOMEM, "out of memory for a prompt of %zu bytes", len);
    // lesson: template
    strcpy(s, PREAMBLE INSTRUCTION_HEADER);
    strcat(s, instruction);
    if (has_input) {
        strcat(s, INPUT_HEADER);
        strcat(s, input);
    }
    // end lesson: template
    *out = s;
    return MYGPT_OK;
}

/* ---- instruction-data.json ---------------------------------------------------------- */

void mygpt_instruct_data_free(mygpt_instruct_data *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->n; i++) {
        free(d->entry[i].instruction);
        free(d->entry[i].input);
        free(d->entry[i].output);
    }
    free(d->entry);
    d->entry = NULL;
    d->n = 0;
}

/* Member key of entry e (the object at value obj) decoded into *out (malloc'd). */
static mygpt_status entry_string(char **out, const mygpt_json *j, size_t obj, const char *key, const char *name,
                                 size_t e, mygpt_error *err)
{
    size_t count = 0;
    const size_t v = mygpt_json_get(j, obj, key, &count);
    if (count == 0)
        return mygpt_fail(err, MYGPT_EFORMAT, "%s: entry %zu has no \"%s\"", name, e, key);
    if (count > 1) // json.load would keep the last one silently
        return mygpt_fail(err, MYGPT_EFORMAT, "%s: entry %zu has \"%s\" %zu times", name, e, key, count);
    if (j->v[v].type != MYGPT_JSON_STRING)
        return mygpt_fail(err, MYGPT_EFORMAT, "%s: entry %zu: \"%s\" is not a string", name, e, key);
    const size_t cap = (size_t)(j->v[v].end - j->v[v].start) + 1; // decoding never lengthens a string
    char *s = malloc(cap);
    if (!s)
        return mygpt_fail(err, MYGPT_ENOMEM, "out of memory for a string of %zu bytes", cap);
    const size_t len = mygpt_json_string(j, v, s, cap);
    if (len == (size_t)-1 || strlen(s) != len) {
        free(s);
        return mygpt_fail(err, MYGPT_EFORMAT, "%s: entry %zu: \"%s\" holds a NUL character (\\u0000)", name, e,
                          key);
    }
    *out = s;
    return MYGPT_OK;
}

mygpt_status mygpt_instruct_data_parse(mygpt_instruct_data *d, const char *name, const char *text, size_t len,
                                       mygpt_error *err)
{
    d->n = 0;
    d->entry = NULL;
    mygpt_json j;
    // a value takes at least one byte of the text: len + 1 values bound any document;
    // members besides the three may nest (json.load reads them; they are ignored)
    MYGPT_TRY(mygpt_json_parse(&j, text, len, 64, len + 1, name, err));
    mygpt_status st = MYGPT_OK;
    if (j.v[0].type != MYGPT_JSON_ARRAY)
        MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_EFORMAT, "%s: not a JSON array of entries", name));
    const size_t n = j.v[0].count;
    d->entry = calloc(n ? n : 1, sizeof *d->entry);
    if (!d->entry)
        MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_ENOMEM, "out of memory for %zu entries", n));
    size_t v = 1; // the first element
    for (size_t e = 0; e < n; e++, v = j.v[v].next) {
        if (j.v[v].type != MYGPT_JSON_OBJECT)
            MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_EFORMAT, "%s: entry %zu is not an object", name, e));
        mygpt_instruct_entry *en = &d->entry[e];
        d->n = e + 1; // freed from here on
        MYGPT_TRY_CLEANUP(st, entry_string(&en->instruction, &j, v, "instruction", name, e, err));
        MYGPT_TRY_CLEANUP(st, entry_string(&en->input, &j, v, "input", name, e, err));
        MYGPT_TRY_CLEANUP(st, entry_string(&en->output, &j, v, "output", name, e, err));
    }
    d->n = n;
cleanup:
    mygpt_json_free(&j);
    if (st != MYGPT_OK)
        mygpt_instruct_data_free(d);
    return st;
}

mygpt_status mygpt_instruct_data_read(mygpt_instruct_data *d, const char *path, mygpt_error *err)
{
    d->n = 0;
    d->entry = NULL;
    char *text;
    size_t len;
    MYGPT_TRY(mygpt_read_file(path, &text, &len, err));
    const mygpt_status st = mygpt_instruct_data_parse(d, path, text, len, err);
    free(text);
    return st;
}

/* entries[0 .. n) as tiktoken's encode takes their texts: MYGPT_EFORMAT for one holding
 * <|endoftext|> (in a field: the template's parts between them hold none), named by its
 * index first + i, in the file name when there is one */
static mygpt_status check_endoftext(const mygpt_instruct_entry *entries, size_t n, const char *name, size_t first,
                                    mygpt_error *err)
{
    for (size_t i = 0; i < n; i++) {
        const char *field[3] = {entries[i].instruction, entries[i].input, entries[i].output};
        for (int f = 0; f < 3; f++)
            if (field[f] && strstr(field[f], MYGPT_ENDOFTEXT))
                return mygpt_fail(err, MYGPT_EFORMAT, "%s%sentry %zu holds %s, which tokenizer.encode refuses",
                                  name ? name : "", name ? ": " : "", first + i, MYGPT_ENDOFTEXT);
    }
    return MYGPT_OK;
}

mygpt_status mygpt_instruct_data_check(const mygpt_instruct_data *d, const char *name, size_t from, size_t n,
                                       mygpt_error *err)
{
    if (from > d->n)
        from = d->n;
    return check_endoftext(d->entry + from, n < d->n - from ? n : d->n - from, name, from, err);
}

void mygpt_instruct_split(size_t n, size_t *train, size_t *test, size_t *val)
{
    *train = (size_t)((double)n * 0.85); // int(len(data) * 0.85)
    *test = (size_t)((double)n * 0.1);   // int(len(data) * 0.1)
    *val = n - *train - *test;
}

/* ---- InstructionDataset ------------------------------------------------------------- */

void mygpt_instruct_dataset_free(mygpt_instruct_dataset *ds)
{
    if (!ds)
        return;
    free(ds->start);
    free(ds->prompt_len);
    free(ds->ids);
    memset(ds, 0, sizeof *ds);
}

mygpt_status mygpt_instruct_dataset_init(mygpt_instruct_dataset *ds, const mygpt_instruct_entry *entries, size_t n,
                                         const mygpt_tokenizer *tok, mygpt_error *err)
{
    memset(ds, 0, sizeof *ds);
    mygpt_status st = MYGPT_OK;
    char *prompt = NULL, *full = NULL;
    int64_t *enc = NULL;
    size_t cap = 0;
    ds->start = calloc(n + 1, sizeof *ds->start);
    ds->prompt_len = calloc(n ? n : 1, sizeof *ds->prompt_len);
    if (!ds->start || !ds->prompt_len)
        MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_ENOMEM, "out of memory for %zu entries", n));
    MYGPT_TRY_CLEANUP(st, check_endoftext(entries, n, NULL, 0, err));
    for (size_t i = 0; i < n; i++) {
        const mygpt_instruct_entry *e = &entries[i];
        if (!e->output)
            MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_EINVAL, "entry %zu has no output", i));
        // full_text = format_input(entry) + f"\n\n### Response:\n{entry['output']}"
        MYGPT_TRY_CLEANUP(st, mygpt_instruct_prompt(&prompt, e->instruction, e->input, err));
        const size_t plen = strlen(prompt), len = plen + strlen(MYGPT_INSTRUCT_RESPONSE) + strlen(e->output);
        if (!(full = malloc(len + 1)))
            MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_ENOMEM, "out of memory for a text of %zu bytes", len));
        strcpy(full, prompt);
        strcat(full, MYGPT_INSTRUCT_RESPONSE);
        strcat(full, e->output);
        // instruction_length = len(tokenizer.encode(instruction_plus_input)) (exercise 7.2)
        size_t m;
        MYGPT_TRY_CLEANUP(st, mygpt_encode(tok, prompt, plen, &enc, &m, err));
        free(enc);
        enc = NULL;
        ds->prompt_len[i] = m;
        MYGPT_TRY_CLEANUP(st, mygpt_encode(tok, full, len, &enc, &m, err));
        MYGPT_TRY_CLEANUP(st, mygpt_ids_append(&ds->ids, &cap, ds->start, i, enc, m, err));
        free(enc);
        free(full);
        free(prompt);
        enc = NULL;
        full = prompt = NULL;
    }
    ds->n = n;
cleanup:
    free(enc);
    free(full);
    free(prompt);
    if (st != MYGPT_OK)
        mygpt_instruct_dataset_free(ds);
    return st;
}

const int64_t *mygpt_instruct_item(const mygpt_instruct_dataset *ds, size_t i, size_t *len)
{
    if (i >= ds->n) {
        *len = 0;
        return NULL;
    }
    *len = ds->start[i + 1] - ds->start[i];
    return ds->ids + ds->start[i];
}

/* ---- custom_collate_fn -------------------------------------------------------------- */

size_t mygpt_instruct_collate_length(const size_t *lengths, size_t B, size_t allowed_max_length)
{
    size_t T = 0; // batch_max_length - 1: the rows drop one token each
    for (size_t b = 0; b < B; b++)
        T = lengths[b] > T ? lengths[b] : T;
    return allowed_max_length && allowed_max_length < T ? allowed_max_length : T;
}

mygpt_status mygpt_instruct_collate(int64_t *inputs, int64_t *targets, size_t *T, const mygpt_instruct_items *batch,
                                    size_t allowed_max_length, int64_t pad_id, mygpt_error *err)
{
    const int64_t *const *items = batch->items;
    const size_t *lengths = batch->lengths, *prompt_lengths = batch->prompt_lengths, B = batch->B;
    if (B == 0)
        return mygpt_fail(err, MYGPT_EINVAL, "%s", "a batch needs at least one item");
    for (size_t b = 0; b < B; b++)
        if (!items[b] && lengths[b])
            return mygpt_fail(err, MYGPT_EINVAL, "item %zu has %zu tokens and no data", b, lengths[b]);
    const size_t full = mygpt_instruct_collate_length(lengths, B, 0); // before the cut
    const size_t t_out = mygpt_instruct_collate_length(lengths, B, allowed_max_length);
    for (size_t b = 0; b < B; b++) {
        int64_t *x = inputs + b * t_out, *y = targets + b * t_out; // (t_out) each
        const size_t len = lengths[b];
        // padded = item + [pad] * (full + 1 - len); inputs = padded[:-1], targets = padded[1:],
        // then both cut to t_out (what a position holds depends on the positions before it only)
        // lesson: collate
        size_t seen_pad = 0;
        for (size_t t = 0; t < t_out; t++) {
            const int64_t in = t < len ? items[b][t] : pad_id;
            int64_t out = t + 1 < len ? items[b][t + 1] : pad_id;
            if (out == pad_id && seen_pad++) // every pad in the targets after the first
                out = MYGPT_IGNORE_INDEX;
            if (prompt_lengths) { // targets[:instruction_length - 1] = -100, a Python slice
                const size_t p = prompt_lengths[b];
                const size_t stop = p >= 1 ? p - 1 : (full >= 1 ? full - 1 : 0);
                if (t < stop)
                    out = MYGPT_IGNORE_INDEX;
            }
            x[t] = in;
            y[t] = out;
        // end lesson: collate
        }
    }
    *T = t_out;
    return MYGPT_OK;
}

size_t mygpt_instruct_batch_length(const mygpt_instruct_dataset *ds, const int64_t *rows, size_t B,
                                   size_t allowed_max_length)
{
    size_t T = 0;
    for (size_t b = 0; b < B; b++) {
        if (rows[b] < 0 || (size_t)rows[b] >= ds->n)
            continue; // mygpt_instruct_batch refuses it
        const size_t len = ds->start[rows[b] + 1] - ds->start[rows[b]];
        T = len > T ? len : T;
    }
    return allowed_max_length && allowed_max_length < T ? allowed_max_length : T;
}

mygpt_status mygpt_instruct_batch(const mygpt_instruct_dataset *ds, const int64_t *rows, size_t B,
                                  const mygpt_instruct_collation *how, int64_t *inputs, int64_t *targets, size_t *T,
                                  mygpt_error *err)
{
    if (B == 0)
        return mygpt_fail(err, MYGPT_EINVAL, "%s", "a batch needs at least one item");
    for (size_t b = 0; b < B; b++)
        if (rows[b] < 0 || (size_t)rows[b] >= ds->n)
            return mygpt_fail(err, MYGPT_ERANGE, "row %lld is outside the dataset's %zu entries",
                              (long long)rows[b], ds->n);
    const int64_t **items = malloc(B * sizeof *items);
    size_t *lengths = malloc(B * sizeof *lengths), *prompts = malloc(B * sizeof *prompts);
    mygpt_status st = MYGPT_OK;
    if (!items || !lengths || !prompts)
        MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_ENOMEM, "out of memory for a batch of %zu", B));
    for (size_t b = 0; b < B; b++) {
        items[b] = mygpt_instruct_item(ds, (size_t)rows[b], &lengths[b]);
        prompts[b] = ds->prompt_len[rows[b]];
    }
    const mygpt_instruct_items batch = {items, lengths, how->mask_instruction ? prompts : NULL, B};
    st = mygpt_instruct_collate(inputs, targets, T, &batch, how->allowed_max_length, MYGPT_ENDOFTEXT_ID, err);
cleanup:
    free(items);
    free(lengths);
    free(prompts);
    return st;
}

mygpt_status mygpt_instruct_loader_init(mygpt_instruct_loader *dl, const mygpt_instruct_dataset *ds,
                                        size_t batch_size, int drop_last, size_t allowed_max_length,
                                        int mask_instruction, mygpt_error *err)
{
    memset(dl, 0, sizeof *dl);
    MYGPT_TRY(mygpt_loader_batches(ds->n, batch_size, drop_last, &dl->num_batches, err));
    dl->ds = ds;
    dl->batch_size = batch_size;
    dl->drop_last = drop_last != 0;
    dl->allowed_max_length = allowed_max_length;
    dl->mask_instruction = mask_instruction != 0;
    size_t longest = 0;
    for (size_t i = 0; i < ds->n; i++)
        if (ds->start[i + 1] - ds->start[i] > longest)
            longest = ds->start[i + 1] - ds->start[i];
    dl->max_length = mygpt_instruct_collate_length(&longest, 1, allowed_max_length);
    return MYGPT_OK;
}

mygpt_status mygpt_instruct_loader_epoch(mygpt_instruct_loader *dl, mygpt_rng *global, int shuffle,
                                         mygpt_error *err)
{
    return mygpt_loader_epoch(&dl->order, dl->ds->n, global, shuffle, "entries", err);
}

size_t mygpt_instruct_loader_batch_rows(const mygpt_instruct_loader *dl, size_t b)
{
    return mygpt_loader_batch_rows(dl->ds->n, dl->batch_size, dl->num_batches, b);
}

mygpt_status mygpt_instruct_loader_batch(const mygpt_instruct_loader *dl, size_t b, int64_t *inputs,
                                         int64_t *targets, size_t *T, mygpt_error *err)
{
    if (b >= dl->num_batches)
        return mygpt_fail(err, MYGPT_ERANGE, "batch %zu is outside [0, %zu)", b, dl->num_batches);
    const size_t rows = mygpt_instruct_loader_batch_rows(dl, b);
    int64_t *picked = malloc(rows * sizeof *picked);
    if (!picked)
        return mygpt_fail(err, MYGPT_ENOMEM, "out of memory for a batch of %zu", rows);
    for (size_t r = 0; r < rows; r++)
        picked[r] = (int64_t)mygpt_loader_item(dl->order, dl->batch_size, b, r);
    const mygpt_instruct_collation how = {dl->allowed_max_length, dl->mask_instruction};
    mygpt_status st = mygpt_instruct_batch(dl->ds, picked, rows, &how, inputs, targets, T, err);
    free(picked);
    return st;
}

void mygpt_instruct_loader_free(mygpt_instruct_loader *dl)
{
    if (!dl)
        return;
    free(dl->order);
    dl->order = NULL;
}

/* Python's str.isspace() for one code point (what str.strip() removes) */
static int py_isspace(uint32_t c)
{
    return (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x20) || c == 0x85 || c == 0xa0 || c == 0x1680 ||
           (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 || c == 0x202f || c == 0x205f ||
           c == 0x3000;
}

mygpt_status mygpt_instruct_response(char **out, const char *bytes, size_t n, mygpt_error *err)
{
    static const char marker[] = "### Response:";
    const size_t m = sizeof marker - 1;
    mygpt_strbuf text = {0}, kept = {0};
    *out = NULL;
    mygpt_status st = mygpt_sb_append_replaced(&text, bytes, n);
    for (size_t i = 0; i < text.len && st == MYGPT_OK;) { // .replace("### Response:", "")
        if (text.len - i >= m && memcmp(text.data + i, marker, m) == 0) {
            i += m;
        } else {
            st = mygpt_sb_appendn(&kept, text.data + i, 1);
            i++;
        }
    }
    if (st == MYGPT_OK && !kept.data && !(kept.data = calloc(1, 1))) // nothing kept: ""
        st = MYGPT_ENOMEM;
    if (st != MYGPT_OK) {
        mygpt_sb_free(&text);
        mygpt_sb_free(&kept);
        return mygpt_fail(err, MYGPT_ENOMEM, "out of memory for a response of %zu bytes", n);
    }
    // .strip(): the text is valid UTF-8 now (every bad byte became U+FFFD)
    size_t a = 0, z = kept.len;
    uint32_t cp;
    for (int k; a < z && (k = mygpt_utf8_decode(kept.data + a, z - a, &cp)) > 0 && py_isspace(cp);)
        a += (size_t)k;
    while (z > a) {
        size_t s = z - 1;
        while (s > a && ((unsigned char)kept.data[s] & 0xc0) == 0x80) // back to the character's first byte
            s--;
        if (mygpt_utf8_decode(kept.data + s, z - s, &cp) <= 0 || !py_isspace(cp))
            break;
        z = s;
    }
    memmove(kept.data, kept.data + a, z - a);
    kept.data[z - a] = '\0';
    *out = kept.data;
    mygpt_sb_free(&text);
    return MYGPT_OK;
}

/* A Python str as json.dumps(ensure_ascii=True) writes it, quotes included */
static void json_string(mygpt_strbuf *sb, const char *s)
{
    const size_t n = strlen(s);
    mygpt_sb_append(sb, "\"");
    for (size_t i = 0; i < n;) {
        uint32_t c;
        int k = mygpt_utf8_decode(s + i, n - i, &c);
        if (k <= 0) { // not a character: what a decode with errors="replace" makes of it
            c = 0xfffd;
            k = 1;
        }
        i += (size_t)k;
        if (c == '"' || c == '\\')
            mygpt_sb_printf(sb, "\\%c", (char)c);
        else if (c == '\n')
            mygpt_sb_append(sb, "\\n");
        else if (c == '\r')
            mygpt_sb_append(sb, "\\r");
        else if (c == '\t')
            mygpt_sb_append(sb, "\\t");
        else if (c == '\b')
            mygpt_sb_append(sb, "\\b");
        else if (c == '\f')
            mygpt_sb_append(sb, "\\f");
        else if (c >= 0x20 && c <= 0x7e)
            mygpt_sb_appendn(sb, s + i - 1, 1);
        else if (c < 0x10000)
            mygpt_sb_printf(sb, "\\u%04x", (unsigned)c);
        else // a surrogate pair
            mygpt_sb_printf(sb, "\\u%04x\\u%04x", (unsigned)(0xd800 + ((c - 0x10000) >> 10)),
                            (unsigned)(0xdc00 + ((c - 0x10000) & 0x3ff)));
    }
    mygpt_sb_append(sb, "\"");
}

mygpt_status mygpt_instruct_json(char **out, size_t *len, const mygpt_instruct_entry *entries,
                                 const char *const *responses, size_t n, mygpt_error *err)
{
    mygpt_strbuf sb = {0};
    *out = NULL;
    *len = 0;
    for (size_t i = 0; i < n; i++) // (an input NULL is "", as format_input takes it)
        if (!entries[i].instruction || !entries[i].output || (responses && !responses[i]))
            return mygpt_fail(err, MYGPT_EINVAL, "entry %zu has no %s", i,
                              !entries[i].instruction ? "instruction"
                              : !entries[i].output    ? "output"
                                                      : "response");
    mygpt_sb_append(&sb, n ? "[" : "[]");
    for (size_t i = 0; i < n; i++) {
        mygpt_sb_append(&sb, i ? ",\n    {\n        \"instruction\": " : "\n    {\n        \"instruction\": ");
        json_string(&sb, entries[i].instruction);
        mygpt_sb_append(&sb, ",\n        \"input\": ");
        json_string(&sb, entries[i].input ? entries[i].input : "");
        mygpt_sb_append(&sb, ",\n        \"output\": ");
        json_string(&sb, entries[i].output);
        if (responses) {
            mygpt_sb_append(&sb, ",\n        \"model_response\": ");
            json_string(&sb, responses[i]);
        }
        mygpt_sb_append(&sb, "\n    }");
    }
    if (n)
        mygpt_sb_append(&sb, "\n]");
    if (sb.failed) {
        mygpt_sb_free(&sb);
        return mygpt_fail(err, MYGPT_ENOMEM, "out of memory for the JSON of %zu entries", n);
    }
    *out = sb.data;
    *len = sb.len;
    return MYGPT_OK;
}
