/*
 * spam.c - the book's chapter-6 SpamDataset (a Label,Text CSV file encoded with GPT-2's
 * tokenizer, every text truncated or padded to one length) and its DataLoader, batch for
 * batch as torch's orders it.
 */
#include <stdlib.h>
#include <string.h>

#include "mygpt/attention.h" /* MYGPT_MAX_DIM */
#include "mygpt/data.h"
#include "mygpt/tokenizer.h"
#include "base/base.h"
#include "io/loader.h"

/* The texts pandas 1.5 reads as a missing value (NaN; "None" too from pandas 2), quoted
 * or not: the book's tokenizer.encode would then fail on a float. */
static const char *const PANDAS_NA[] = {"",     "#N/A", "#N/A N/A", "#NA",  "-1.#IND", "-1.#QNAN", "-NaN",
                                        "-nan", "1.#IND", "1.#QNAN", "<NA>", "N/A",     "NA",       "NULL",
                                        "NaN",  "n/a",  "nan",      "null", "None"};

static int pandas_na(const char *s)
{
    for (size_t i = 0; i < sizeof PANDAS_NA / sizeof PANDAS_NA[0]; i++)
        if (strcmp(s, PANDAS_NA[i]) == 0)
            return 1;
    return 0;
}

/* A label as pandas reads an int64 column, strictly: decimal digits, at most 18 of them. */
static int parse_label(const char *s, int64_t *out)
{
    size_t n = strlen(s);
    if (n == 0 || n > 18)
        return 1;
    int64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return 1;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return 0;
}

mygpt_status mygpt_spam_dataset_load(mygpt_spam_dataset *ds, const char *path, const mygpt_tokenizer *tok,
                                     size_t max_length, int64_t pad_id, int num_classes, mygpt_error *err)
{
    memset(ds, 0, sizeof *ds);
    if (max_length > MYGPT_MAX_DIM) // rows no model takes, whose (rows, max_length) batches could overflow
        return mygpt_fail(err, MYGPT_EINVAL, "%s: max_length %zu is more than the longest context a model takes (%d)",
                          path, max_length, MYGPT_MAX_DIM);
    mygpt_csv csv;
    MYGPT_TRY(mygpt_csv_read(&csv, path, err));
    mygpt_status st = MYGPT_OK;
    int64_t *enc = NULL; // one text's ids
    if (csv.cols != 2 || strcmp(mygpt_csv_field(&csv, 0, 0, NULL), "Label") != 0 ||
        strcmp(mygpt_csv_field(&csv, 0, 1, NULL), "Text") != 0) {
        st = mygpt_fail(err, MYGPT_EFORMAT, "%s line %zu: the header must be Label,Text", path, csv.line[0]);
        goto done;
    }
    const size_t n = csv.rows;
    if (n == 0) { // the book's accuracy over it would divide by zero (its loss: nan)
        st = mygpt_fail(err, MYGPT_EFORMAT,
                        "%s line %zu: a header and no text after it: nothing to train or evaluate on", path,
                        csv.line[0]);
        goto done;
    }
    ds->start = calloc(n + 1, sizeof *ds->start);
    ds->labels = malloc(n * sizeof *ds->labels);
    if (!ds->start || !ds->labels) {
        st = mygpt_fail(err, MYGPT_ENOMEM, "out of memory for the %zu texts of %s", n, path);
        goto done;
    }
    // self.encoded_texts = [tokenizer.encode(text) for text in self.data["Text"]], one after
    // another: a row is cut and padded when a batch is made (mygpt_spam_dataset_row), so a
    // file costs its tokens' memory, not its rows times its longest text's
    size_t cap = 0;
    for (size_t r = 0; r < n; r++) {
        const size_t line = csv.line[r + 1];
        size_t len, m;
        const char *label = mygpt_csv_field(&csv, r + 1, 0, NULL);
        const char *text = mygpt_csv_field(&csv, r + 1, 1, &len);
        if (parse_label(label, &ds->labels[r])) {
            st = mygpt_fail(err, MYGPT_EFORMAT,
                            "%s line %zu: the label must be an integer 0 or more (digits only)", path, line);
            goto done;
        }
        if (ds->labels[r] >= num_classes) { // met by the classifier's loss only after the training
            st = mygpt_fail(err, MYGPT_EFORMAT,
                            "%s line %zu: label %lld is outside the classifier's %d classes [0, %d)", path, line,
                            (long long)ds->labels[r], num_classes, num_classes);
            goto done;
        }
        if (pandas_na(text)) {
            st = mygpt_fail(err, MYGPT_EFORMAT,
                            "%s line %zu: the text \"%s\" is what pandas reads as missing (NaN)", path, line, text);
            goto done;
        }
        if (strstr(text, MYGPT_ENDOFTEXT)) { // tiktoken's encode refuses special tokens in text
            st = mygpt_fail(err, MYGPT_EFORMAT,
                            "%s line %zu: the text holds %s, which tokenizer.encode refuses", path, line,
                            MYGPT_ENDOFTEXT);
            goto done;
        }
        st = mygpt_encode(tok, text, len, &enc, &m, err);
        if (st != MYGPT_OK)
            goto done;
        if (m > ds->longest)
            ds->longest = m;
        if ((st = mygpt_ids_append(&ds->ids, &cap, ds->start, r, enc, m, err)) != MYGPT_OK)
            goto done;
        free(enc);
        enc = NULL;
    }
    // max_length None: the longest encoded text; else every text cut to it
    if (!max_length && ds->longest > MYGPT_MAX_DIM) {
        st = mygpt_fail(err, MYGPT_EINVAL, "%s: its longest text is %zu tokens, more than the longest context a model "
                        "takes (%d)", path, ds->longest, MYGPT_MAX_DIM);
        goto done;
    }
    ds->n = n;
    ds->max_length = max_length ? max_length : ds->longest; // a text pandas reads has a token: > 0
    ds->pad_id = pad_id;
done:
    free(enc);
    mygpt_csv_free(&csv);
    if (st != MYGPT_OK)
        mygpt_spam_dataset_free(ds);
    return st;
}

void mygpt_spam_dataset_row(const mygpt_spam_dataset *ds, size_t i, int64_t *row)
{
    if (i >= ds->n)
        return; // no such text (the header says so)
    const int64_t *text = ds->ids + ds->start[i];
    const size_t len = ds->start[i + 1] - ds->start[i];
    // encoded_text[:max_length] + [pad_token_id] * (max_length - len(encoded_text))
    // lesson: pad
    const size_t keep = len < ds->max_length ? len : ds->max_length;
    memcpy(row, text, keep * sizeof *row);
    for (size_t j = keep; j < ds->max_length; j++)
        row[j] = ds->pad_id;
    // end lesson: pad
}

void mygpt_spam_dataset_free(mygpt_spam_dataset *ds)
{
    if (!ds)
        return;
    free(ds->ids);
    free(ds->start);
    free(ds->labels);
    memset(ds, 0, sizeof *ds);
}

mygpt_status mygpt_spam_loader_init(mygpt_spam_loader *dl, const mygpt_spam_dataset *ds, size_t batch_size,
                                    int drop_last, mygpt_error *err)
{
    memset(dl, 0, sizeof *dl);
    MYGPT_TRY(mygpt_loader_batches(ds->n, batch_size, drop_last, &dl->num_batches, err));
    dl->ds = ds;
    dl->batch_size = batch_size;
    dl->drop_last = drop_last != 0;
    return MYGPT_OK;
}

mygpt_status mygpt_spam_loader_epoch(mygpt_spam_loader *dl, mygpt_rng *global, int shuffle, mygpt_error *err)
{
    return mygpt_loader_epoch(&dl->order, dl->ds->n, global, shuffle, "texts", err);
}

size_t mygpt_spam_loader_batch_rows(const mygpt_spam_loader *dl, size_t b)
{
    return mygpt_loader_batch_rows(dl->ds->n, dl->batch_size, dl->num_batches, b);
}

mygpt_status mygpt_spam_loader_batch(const mygpt_spam_loader *dl, size_t b, int64_t *inputs, int64_t *labels,
                                     mygpt_error *err)
{
    if (b >= dl->num_batches)
        return mygpt_fail(err, MYGPT_ERANGE, "batch %zu is outside [0, %zu)", b, dl->num_batches);
    const size_t rows = mygpt_spam_loader_batch_rows(dl, b), T = dl->ds->max_length;
    for (size_t r = 0; r < rows; r++) {
        const size_t item = mygpt_loader_item(dl->order, dl->batch_size, b, r);
        mygpt_spam_dataset_row(dl->ds, item, inputs + r * T); // (rows, T)
        labels[r] = dl->ds->labels[item];                     // (rows)
    }
    return MYGPT_OK;
}

void mygpt_spam_loader_free(mygpt_spam_loader *dl)
{
    if (!dl)
        return;
    free(dl->order);
    dl->order = NULL;
}
