/*
 * test_spam.c - the book's chapter-6 data against PyTorch 1.13 (tests/golden/spam.txt, from
 * tools/reference_book_ch6.py --golden): CSV files read as pandas reads them or refused with
 * the line; the SpamDataset's tensors for the three splits and four max_length settings; the
 * training loader's orders and first batches for two seeds; broken files never a crash.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "data.h"
#include "golden.h"
#include "mygpt/attention.h"
#include "mygpt/data.h"
#include "mygpt/rng.h"

/* sum over i of (i + 1) * v[i] mod 2^64, as the reference's checksum */
static uint64_t checksum_i64(const int64_t *v, size_t n)
{
    uint64_t s = 0;
    for (size_t i = 0; i < n; i++)
        s += (uint64_t)(i + 1) * (uint64_t)v[i];
    return s;
}

/* hex (or "-": nothing) into bytes; returns the length */
static size_t unhex(const char *hex, char *out)
{
    if (strcmp(hex, "-") == 0)
        return 0;
    size_t n = 0;
    for (; hex[0] && hex[1]; hex += 2) {
        unsigned v;
        cr_assert_eq(sscanf(hex, "%2x", &v), 1);
        out[n++] = (char)v;
    }
    out[n] = '\0';
    return n;
}

Test(spam, csv_files_read_as_pandas_reads_them_or_refused_with_the_line)
{
    golden_reader g = golden_reader_must_open("spam.txt");
    char *line = NULL, raw[512], want[512];
    int cases = 0;
    while ((line = golden_read(&g))) {
        char expect[16], hex[1024];
        int refuse_line = -1;
        if (sscanf(line, "csv same %1023s", hex) == 1)
            strcpy(expect, "same");
        else if (sscanf(line, "csv refuse %d %1023s", &refuse_line, hex) == 2)
            strcpy(expect, "refuse");
        else
            continue;
        const size_t len = unhex(hex, raw);
        mygpt_csv csv;
        mygpt_error err = {0};
        const mygpt_status st = mygpt_csv_parse(&csv, "case.csv", raw, len, &err);
        size_t row = 0;
        while ((line = golden_read(&g)) && strcmp(line, "end") != 0) {
            char label[64], texthex[1024];
            cr_assert_eq(sscanf(line, "want %63s %1023s", label, texthex), 2, "golden line %ld", g.lineno);
            cr_assert_eq(st, MYGPT_OK, "golden line %ld: %s", g.lineno, err.message);
            row++;
            const size_t n = unhex(texthex, want);
            size_t got_len;
            cr_expect_str_eq(mygpt_csv_field(&csv, row, 0, NULL), label, "golden line %ld", g.lineno);
            const char *got = mygpt_csv_field(&csv, row, 1, &got_len);
            cr_expect(got_len == n && memcmp(got, want, n) == 0, "golden line %ld: row %zu is \"%s\"", g.lineno, row,
                      got);
        }
        if (strcmp(expect, "same") == 0) {
            cr_assert_eq(st, MYGPT_OK);
            cr_expect_eq(csv.rows, row, "golden line %ld: %zu rows, pandas %zu", g.lineno, csv.rows, row);
            cr_expect_str_eq(mygpt_csv_field(&csv, 0, 0, NULL), "Label");
            cr_expect_str_eq(mygpt_csv_field(&csv, 0, 1, NULL), "Text");
            cr_expect_null(mygpt_csv_field(&csv, row + 1, 0, NULL));
            mygpt_csv_free(&csv);
        } else {
            cr_expect_eq(st, MYGPT_EFORMAT, "golden line %ld: accepted", g.lineno);
            char where[64];
            if (refuse_line > 0)
                snprintf(where, sizeof where, "case.csv line %d: ", refuse_line);
            else
                snprintf(where, sizeof where, "case.csv: ");
            cr_expect(strncmp(err.message, where, strlen(where)) == 0, "golden line %ld: \"%s\" is not \"%s...\"",
                      g.lineno, err.message, where);
        }
        cases++;
    }
    golden_reader_close(&g);
    cr_expect_geq(cases, 15);
}

/* A file in a fresh temporary folder; its path in path (n bytes). */
static void write_temp(char *path, size_t n, const char *name, const char *data)
{
    char dir[] = "/tmp/mygpt_spam_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, n, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    fputs(data, f);
    fclose(f);
}

static void remove_temp(const char *path)
{
    char dir[4200];
    snprintf(dir, sizeof dir, "%s", path);
    unlink(path);
    *strrchr(dir, '/') = '\0';
    rmdir(dir);
}

Test(spam, the_datasets_errors_name_the_file_and_the_line)
{
    mygpt_tokenizer *tok = tokenizer_or_skip();
    static const struct { const char *file, *line, *why; } cases[] = {
        {"Text,Label\n0,x\n", "line 1", "the header must be Label,Text"},
        {"Label,Text,More\n0,x,y\n", "line 1", "the header must be Label,Text"},
        {"Label,Text\n0,fine\n\n-1,x\n", "line 4", "the label must be"},
        {"Label,Text\n1.0,x\n", "line 2", "the label must be"},
        {"Label,Text\n 1,x\n", "line 2", "the label must be"},
        {"Label,Text\n0,\"a\nb\"\n1,NA\n", "line 4", "pandas reads as missing"},
        {"Label,Text\n0,\n", "line 2", "pandas reads as missing"},
        {"Label,Text\n0,\"nan\"\n", "line 2", "pandas reads as missing"},
        {"Label,Text\n0,a <|endoftext|> b\n", "line 2", "tokenizer.encode refuses"},
        {"Label,Text\n0,\"open\n", "line 2", "not closed"},
        {"Label,Text\n0,a\n1,\"b\nc\"\n2,x\n", "line 5", "label 2 is outside the classifier's 2 classes [0, 2)"},
        {"Label,Text\n", "line 1", "a header and no text after it"},
        {"\nLabel,Text\n\n", "line 2", "a header and no text after it"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[4200], where[4300];
        write_temp(path, sizeof path, "broken.csv", cases[i].file);
        mygpt_spam_dataset ds;
        mygpt_error err = {0};
        cr_expect_neq(mygpt_spam_dataset_load(&ds, path, tok, 0, 50256, 2, &err), MYGPT_OK, "case %zu accepted", i);
        cr_expect_null(ds.ids, "case %zu: ids left", i);
        snprintf(where, sizeof where, "%s %s: ", path, cases[i].line);
        cr_expect(strncmp(err.message, where, strlen(where)) == 0, "case %zu: \"%s\" is not \"%s...\"", i,
                  err.message, where);
        cr_expect(strstr(err.message, cases[i].why), "case %zu: \"%s\" lacks \"%s\"", i, err.message, cases[i].why);
        remove_temp(path);
    }
    // an absent file and a folder are errors too, naming the path
    mygpt_spam_dataset ds;
    mygpt_error err = {0};
    cr_expect_eq(mygpt_spam_dataset_load(&ds, "/nonexistent/x.csv", tok, 0, 50256, 2, &err), MYGPT_EIO);
    cr_expect(strstr(err.message, "/nonexistent/x.csv"));
    cr_expect_eq(mygpt_spam_dataset_load(&ds, "/tmp", tok, 0, 50256, 2, &err), MYGPT_EIO);
    // rows longer than any model's context (a batch of them could overflow a size) are refused
    char path[4200];
    write_temp(path, sizeof path, "long.csv", "Label,Text\n0,fine\n");
    cr_expect_eq(mygpt_spam_dataset_load(&ds, path, tok, SIZE_MAX, 50256, 2, &err), MYGPT_EINVAL);
    cr_expect(strstr(err.message, "max_length") && strstr(err.message, path), "%s", err.message);
    cr_expect_null(ds.ids);
    cr_expect_eq(mygpt_spam_dataset_load(&ds, path, tok, (size_t)MYGPT_MAX_DIM, 50256, 2, &err), MYGPT_OK, "%s",
                 err.message);
    cr_expect_eq(ds.max_length, (size_t)MYGPT_MAX_DIM);
    mygpt_spam_dataset_free(&ds);
    remove_temp(path);
    // and with max_length None, a text longer than that is refused in its own file (the
    // training file's became the validation file's max_length, refused naming that file)
    const size_t words = (size_t)MYGPT_MAX_DIM + 1, head = strlen("Label,Text\n0,\"");
    char *file = malloc(head + 3 * words + 3);
    cr_assert_not_null(file);
    memcpy(file, "Label,Text\n0,\"", head);
    for (size_t w = 0; w < words; w++) // " ab", one token each
        memcpy(file + head + 3 * w, " ab", 3);
    memcpy(file + head + 3 * words, "\"\n", 3);
    write_temp(path, sizeof path, "longest.csv", file);
    free(file);
    cr_expect_eq(mygpt_spam_dataset_load(&ds, path, tok, 0, 50256, 2, &err), MYGPT_EINVAL, "a text of %zu tokens: "
                 "accepted", words);
    cr_expect(strstr(err.message, path) && strstr(err.message, "its longest text is 16777217 tokens"), "%s",
              err.message);
    cr_expect_null(ds.ids);
    remove_temp(path);
    mygpt_tokenizer_free(tok);
}

/* One long text among short ones: the dataset keeps each text's tokens once (a file of
 * 2,001 texts, one of 40,001 tokens, holds 42,001 ids, where the padded block would hold
 * 80 million), and a row is that text cut to max_length, or padded up to it. */
Test(spam, a_long_text_costs_its_own_tokens_and_rows_are_cut_and_padded)
{
    mygpt_tokenizer *tok = tokenizer_or_skip();
    enum { SHORT = 2000, WORDS = 40000 };
    size_t cap = 32 + SHORT * 8 + WORDS * 5, at = 0;
    char *file = malloc(cap), path[4200];
    cr_assert_not_null(file);
    at += (size_t)snprintf(file + at, cap - at, "Label,Text\n1,\"");
    for (int w = 0; w < WORDS; w++)
        at += (size_t)snprintf(file + at, cap - at, "%sword", w ? " " : "");
    at += (size_t)snprintf(file + at, cap - at, "\"\n");
    for (int r = 0; r < SHORT; r++)
        at += (size_t)snprintf(file + at, cap - at, "0,hi\n");
    write_temp(path, sizeof path, "long.csv", file);
    free(file);
    for (size_t max_length = 0; max_length <= 7; max_length += 7) {
        mygpt_spam_dataset ds;
        mygpt_error err = {0};
        cr_assert_eq(mygpt_spam_dataset_load(&ds, path, tok, max_length, 50256, 2, &err), MYGPT_OK, "%s",
                     err.message);
        cr_expect_eq(ds.n, SHORT + 1);
        cr_expect_eq(ds.longest, WORDS, "\"word word ...\": %d tokens, got %zu", WORDS, ds.longest);
        cr_expect_eq(ds.max_length, max_length ? max_length : WORDS);
        cr_expect_eq(ds.start[ds.n], WORDS + SHORT, "the ids held: %zu", ds.start[ds.n]);
        int64_t *row = malloc(ds.max_length * sizeof *row);
        cr_assert_not_null(row);
        mygpt_spam_dataset_row(&ds, 0, row); // "word" then " word" (1573) up to the cut
        cr_expect(row[0] == 4775 && row[1] == 1573 && row[ds.max_length - 1] == 1573, "%lld %lld %lld",
                  (long long)row[0], (long long)row[1], (long long)row[ds.max_length - 1]);
        mygpt_spam_dataset_row(&ds, SHORT, row); // "hi" (5303), then the padding
        cr_expect(row[0] == 5303 && row[1] == 50256 && row[ds.max_length - 1] == 50256, "%lld %lld %lld",
                  (long long)row[0], (long long)row[1], (long long)row[ds.max_length - 1]);
        row[0] = -7;
        mygpt_spam_dataset_row(&ds, ds.n, row); // no such text: nothing written
        cr_expect_eq(row[0], -7);
        free(row);
        mygpt_spam_dataset_free(&ds);
    }
    remove_temp(path);
    mygpt_tokenizer_free(tok);
}

/* The dataset's (n, max_length) block of ids, as the book's tensors hold it (malloc'd) */
static int64_t *padded_rows(const mygpt_spam_dataset *d)
{
    const size_t cells = d->n * d->max_length;
    int64_t *rows = malloc((cells ? cells : 1) * sizeof *rows);
    cr_assert_not_null(rows);
    for (size_t i = 0; i < d->n; i++)
        mygpt_spam_dataset_row(d, i, rows + i * d->max_length);
    return rows;
}

/* The three splits as the book makes them for a max_length setting (0: None). */
static void load_splits(mygpt_tokenizer *tok, size_t max_length, mygpt_spam_dataset ds[3])
{
    static const char *files[3] = {"sms_spam_train.csv", "sms_spam_validation.csv", "sms_spam_test.csv"};
    for (int s = 0; s < 3; s++) {
        const char *path = data_file_or_skip(files[s]);
        mygpt_error err = {0};
        // validation and test: max_length=train_dataset.max_length
        cr_assert_eq(mygpt_spam_dataset_load(&ds[s], path, tok, s ? ds[0].max_length : max_length, 50256, 2,
                                             &err),
                     MYGPT_OK, "%s", err.message);
    }
}

Test(spam, the_datasets_tensors_are_pytorchs_for_three_splits_and_four_max_lengths)
{
    mygpt_tokenizer *tok = tokenizer_or_skip();
    golden_reader g = golden_reader_must_open("spam.txt");
    char *line;
    mygpt_spam_dataset ds[3] = {{0}};
    int setting = -1, split = -1, datasets = 0, rows = 0;
    static const char *names[3] = {"train", "validation", "test"};
    int64_t want[1024];
    while ((line = golden_read(&g))) {
        int m;
        char name[32];
        size_t n, max_length, longest;
        unsigned long long ids_sum, labels_sum;
        if (sscanf(line, "dataset %d %31s %zu %zu %zu %llu %llu", &m, name, &n, &max_length, &longest, &ids_sum,
                   &labels_sum) == 7) {
            if (m != setting) {
                for (int s = 0; s < 3; s++)
                    mygpt_spam_dataset_free(&ds[s]);
                load_splits(tok, (size_t)m, ds);
                setting = m;
            }
            for (split = 0; split < 3 && strcmp(names[split], name) != 0; split++) {
            }
            cr_assert_lt(split, 3, "golden line %ld", g.lineno);
            const mygpt_spam_dataset *d = &ds[split];
            cr_expect_eq(d->n, n, "max_length %d %s: %zu texts, torch %zu", m, name, d->n, n);
            cr_expect_eq(d->max_length, max_length, "max_length %d %s: max_length %zu, torch %zu", m, name,
                         d->max_length, max_length);
            cr_expect_eq(d->longest, longest, "max_length %d %s: longest %zu, torch %zu", m, name, d->longest,
                         longest);
            int64_t *rows = padded_rows(d);
            cr_expect_eq(checksum_i64(rows, d->n * d->max_length), ids_sum, "max_length %d %s: the ids", m, name);
            free(rows);
            cr_expect_eq(checksum_i64(d->labels, d->n), labels_sum, "max_length %d %s: the labels", m, name);
            datasets++;
            continue;
        }
        size_t row;
        long long label;
        int used;
        if (sscanf(line, "row %zu %lld%n", &row, &label, &used) == 2) {
            const size_t k = golden_parse_i64(line + used, want, 1024);
            const mygpt_spam_dataset *d = &ds[split];
            cr_assert_lt(row, d->n);
            cr_assert_eq(k, d->max_length, "golden line %ld", g.lineno);
            cr_expect_eq(d->labels[row], label, "%s row %zu's label", names[split], row);
            int64_t got[1024];
            mygpt_spam_dataset_row(d, row, got);
            for (size_t j = 0; j < k; j++)
                cr_expect_eq(got[j], want[j], "max_length %d %s row %zu token %zu", setting, names[split], row, j);
            rows++;
        }
    }
    for (int s = 0; s < 3; s++)
        mygpt_spam_dataset_free(&ds[s]);
    golden_reader_close(&g);
    mygpt_tokenizer_free(tok);
    cr_expect_eq(datasets, 12, "4 settings x 3 splits, got %d", datasets);
    cr_expect_geq(rows, 36);
}

Test(spam, the_training_loaders_orders_and_first_batches_are_pytorchs_for_two_seeds)
{
    mygpt_tokenizer *tok = tokenizer_or_skip();
    golden_reader g = golden_reader_must_open("spam.txt");
    char *line;
    mygpt_spam_dataset ds[3] = {{0}};
    load_splits(tok, 0, ds);
    int loaders = 0, epochs = 0;
    int64_t *want = malloc(ds[0].n * sizeof *want);
    cr_assert_not_null(want);
    while ((line = golden_read(&g))) {
        unsigned long long seed;
        size_t batch, ntrain, nval;
        if (sscanf(line, "loader %llu %zu %zu %zu", &seed, &batch, &ntrain, &nval) != 4)
            continue;
        mygpt_rng rng = {0};
        mygpt_rng_seed(&rng, seed); // torch.manual_seed(seed)
        mygpt_spam_loader train, val;
        mygpt_error err = {0};
        cr_assert_eq(mygpt_spam_loader_init(&train, &ds[0], batch, 1, &err), MYGPT_OK);
        cr_assert_eq(mygpt_spam_loader_init(&val, &ds[1], batch, 0, &err), MYGPT_OK);
        cr_expect_eq(train.num_batches, ntrain, "seed %llu: %zu training batches, torch %zu", seed,
                     train.num_batches, ntrain);
        cr_expect_eq(val.num_batches, nval, "seed %llu: %zu validation batches, torch %zu", seed, val.num_batches,
                     nval);
        int64_t *x = malloc(batch * ds[0].max_length * sizeof *x), y[64];
        cr_assert(x && batch <= 64);
        while ((line = golden_read(&g)) && strcmp(line, "end") != 0) {
            // order: the rows the epoch reads (drop_last: the last n mod batch are never read)
            cr_assert(strncmp(line, "order ", 6) == 0, "golden line %ld", g.lineno);
            const size_t k = golden_parse_i64(line + 6, want, ds[0].n);
            cr_assert_eq(k, ntrain * batch);
            cr_assert_eq(mygpt_spam_loader_epoch(&train, &rng, 1, &err), MYGPT_OK);
            for (size_t i = 0; i < k; i++)
                cr_expect_eq(train.order[i], want[i], "seed %llu epoch %d: position %zu", seed, epochs, i);
            cr_assert((line = golden_read(&g)));
            unsigned long long sum;
            int used;
            cr_assert_eq(sscanf(line, "first %llu%n", &sum, &used), 1, "golden line %ld", g.lineno);
            cr_assert_eq(golden_parse_i64(line + used, want, batch), batch);
            cr_assert_eq(mygpt_spam_loader_batch(&train, 0, x, y, &err), MYGPT_OK);
            cr_expect_eq(checksum_i64(x, batch * ds[0].max_length), sum, "seed %llu epoch %d: first inputs", seed,
                         epochs);
            for (size_t i = 0; i < batch; i++)
                cr_expect_eq(y[i], want[i], "seed %llu epoch %d: first labels[%zu]", seed, epochs, i);
            cr_assert_eq(mygpt_spam_loader_epoch(&val, &rng, 0, &err), MYGPT_OK); // for _ in val_loader
            cr_expect_null(val.order);
            cr_expect_eq(mygpt_spam_loader_batch_rows(&val, val.num_batches - 1), ds[1].n % batch ? ds[1].n % batch
                                                                                                  : batch);
            epochs++;
        }
        cr_expect_eq(mygpt_spam_loader_batch(&train, train.num_batches, x, y, &err), MYGPT_ERANGE);
        free(x);
        mygpt_spam_loader_free(&train);
        mygpt_spam_loader_free(&val);
        loaders++;
    }
    free(want);
    for (int s = 0; s < 3; s++)
        mygpt_spam_dataset_free(&ds[s]);
    golden_reader_close(&g);
    mygpt_tokenizer_free(tok);
    cr_expect_eq(loaders, 2);
    cr_expect_eq(epochs, 4);
}

/* xorshift64: the broken files' mutations, the same every run */
static uint64_t next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

Test(spam, broken_csv_files_are_read_or_refused_never_a_crash)
{
    static const char good[] = "Label,Text\n0,plain\n1,\"quoted, \"\"with\"\" a\nline break\"\r\n\n0,x\n";
    static const char alphabet[] = {'"', ',', '\n', '\r', 'a', '0', '\0', (char)0xc3, (char)0xa9, (char)0xff};
    const size_t n = sizeof good - 1;
    char buf[256];
    uint64_t s = 0x9e3779b97f4a7c15u;
    int ok = 0, refused = 0;
    for (int trial = 0; trial < 20000; trial++) {
        size_t len = n;
        memcpy(buf, good, n);
        const int kind = trial % 3;
        if (kind == 0) // cut anywhere
            len = next(&s) % (n + 1);
        for (int k = kind == 0 ? 0 : 1 + (int)(next(&s) % 4); k > 0; k--) {
            const size_t at = next(&s) % len;
            const char c = alphabet[next(&s) % sizeof alphabet];
            if (kind == 1) { // overwrite
                buf[at] = c;
            } else if (len < sizeof buf) { // insert
                memmove(buf + at + 1, buf + at, len - at);
                buf[at] = c;
                len++;
            }
        }
        // on the heap, exactly len bytes: a read past the end is the sanitizers' to see
        char *data = malloc(len ? len : 1);
        cr_assert_not_null(data);
        memcpy(data, buf, len);
        mygpt_csv csv;
        mygpt_error err = {0};
        const mygpt_status st = mygpt_csv_parse(&csv, "fuzz.csv", data, len, &err);
        if (st == MYGPT_OK) {
            ok++;
            cr_assert_geq(csv.cols, 1);
            for (size_t r = 0; r <= csv.rows; r++) {
                cr_assert(r == 0 || csv.line[r] > csv.line[r - 1]);
                for (size_t c = 0; c < csv.cols; c++) {
                    size_t flen;
                    const char *field = mygpt_csv_field(&csv, r, c, &flen);
                    cr_assert_eq(strlen(field), flen);
                    cr_assert_leq(flen, len);
                }
            }
            mygpt_csv_free(&csv);
        } else {
            refused++;
            cr_assert_eq(st, MYGPT_EFORMAT, "%s", err.message);
            cr_assert(strncmp(err.message, "fuzz.csv", 8) == 0, "%s", err.message);
            cr_assert_null(csv.field);
        }
        free(data);
    }
    cr_expect_gt(ok, 1000, "%d read", ok);
    cr_expect_gt(refused, 1000, "%d refused", refused);
}

Test(spam, the_classification_heads_initial_values_are_nn_linears_after_manual_seed_123)
{
    // torch.manual_seed(123); model.out_head = torch.nn.Linear(in_features=C, out_features=num_classes)
    golden_reader g = golden_reader_must_open("spam.txt");
    char *line;
    int heads = 0;
    while ((line = golden_read(&g))) {
        size_t C, n;
        unsigned long long sum;
        int used;
        if (sscanf(line, "head %zu %zu %llu%n", &C, &n, &sum, &used) != 3)
            continue;
        float bias_want[8], *w = malloc(n * C * sizeof *w), bias[8];
        cr_assert(w && n <= 8);
        cr_assert_eq(golden_parse_f32(line + used, bias_want, 8), n, "golden line %ld", g.lineno);
        mygpt_rng rng = {0};
        mygpt_rng_seed(&rng, 123);
        cr_assert_eq(mygpt_init_linear(&rng, w, bias, C, n, NULL), MYGPT_OK);
        cr_expect_eq(golden_checksum(w, n * C), sum, "head (%zu, %zu): the weight", n, C);
        for (size_t i = 0; i < n; i++)
            cr_expect_eq(memcmp(&bias[i], &bias_want[i], sizeof(float)), 0, "head (%zu, %zu): bias[%zu]", n, C, i);
        free(w);
        heads++;
    }
    golden_reader_close(&g);
    cr_expect_eq(heads, 4);
}
