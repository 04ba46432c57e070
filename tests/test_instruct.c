/*
 * test_instruct.c - the book's chapter-7 data and the loss that ignores -100, against PyTorch
 * 1.13 (tests/golden/instruct.txt, from tools/reference_book_ch7.py --golden): the 85/5/10
 * split; InstructionDataset's ids (and exercise 7.2's prompt lengths) for all 1,100 entries;
 * custom_collate_fn's inputs and targets on the book's toy batch, on items holding the pad
 * and on batches of the data (with and without the prompt masked, cut or not); the
 * cross-entropy with ignore_index=-100 (loss bits and every gradient bit, NaN when all are
 * ignored, 1/2/3 threads the same); the model's loss and gradients on collated batches;
 * broken JSON and bad targets refused with a message.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data.h"
#include "golden.h"
#include "mygpt/data.h"
#include "mygpt/gpt.h"
#include "mygpt/train.h"

enum { MAX_VALUES = 1 << 16 };

/* sum over i of (i + 1) * v[i] mod 2^64, as the reference's checksum */
static uint64_t checksum_i64(const int64_t *v, size_t n)
{
    uint64_t s = 0;
    for (size_t i = 0; i < n; i++)
        s += (uint64_t)(i + 1) * (uint64_t)v[i];
    return s;
}


/* The whole instruction-data.json as an InstructionDataset (skips when the file or the
 * vocabulary is absent). */
static mygpt_tokenizer *load_dataset(mygpt_instruct_dataset *ds, mygpt_instruct_data *d)
{
    mygpt_tokenizer *tok = instruction_data_or_skip(d);
    if (!tok)
        return NULL;
    mygpt_error err = {0};
    cr_assert_eq(mygpt_instruct_dataset_init(ds, d->entry, d->n, tok, &err), MYGPT_OK, "%s", err.message);
    return tok;
}

Test(instruct, the_split_is_the_books)
{
    golden_reader gold = golden_reader_must_open("instruct.txt");
    char *line;
    int cases = 0;
    while ((line = golden_read(&gold))) {
        size_t n, tr, te, va, got_tr, got_te, got_va;
        if (sscanf(line, "split %zu %zu %zu %zu", &n, &tr, &te, &va) != 4)
            continue;
        mygpt_instruct_split(n, &got_tr, &got_te, &got_va);
        cr_expect(got_tr == tr && got_te == te && got_va == va, "n=%zu: %zu %zu %zu, Python %zu %zu %zu", n,
                  got_tr, got_te, got_va, tr, te, va);
        cases++;
    }
    golden_reader_close(&gold);
    cr_expect_geq(cases, 10);
}

Test(instruct, every_entry_encodes_as_the_books_dataset, .timeout = 120)
{
    mygpt_instruct_dataset ds;
    mygpt_instruct_data d;
    mygpt_tokenizer *tok = load_dataset(&ds, &d);
    golden_reader gold = golden_reader_must_open("instruct.txt");
    char *line;
    int entries = 0, full = 0;
    int64_t *ids = malloc(MAX_VALUES * sizeof *ids);
    while ((line = golden_read(&gold))) {
        size_t n, i, len, plen;
        unsigned long long sum;
        int used;
        if (sscanf(line, "dataset %zu %llu", &n, &sum) == 2) {
            cr_assert_eq(ds.n, n);
            cr_expect_eq(checksum_i64(ds.ids, ds.start[n]), sum, "the ids of all entries");
        } else if (sscanf(line, "entry %zu %zu %zu %llu", &i, &len, &plen, &sum) == 4) {
            cr_assert_lt(i, ds.n);
            size_t got;
            const int64_t *item = mygpt_instruct_item(&ds, i, &got);
            cr_expect(got == len && ds.prompt_len[i] == plen && checksum_i64(item, got) == sum,
                      "entry %zu: %zu tokens (prompt %zu), Python %zu (%zu)", i, got, ds.prompt_len[i], len, plen);
            entries++;
        } else if (sscanf(line, "tokens %zu %n", &i, &used) == 1) {
            const size_t m = golden_parse_i64(line + used, ids, MAX_VALUES);
            size_t got;
            const int64_t *item = mygpt_instruct_item(&ds, i, &got);
            cr_expect(got == m && memcmp(item, ids, m * sizeof *ids) == 0, "entry %zu's ids", i);
            full++;
        }
    }
    cr_expect_eq(entries, 1100);
    cr_expect_geq(full, 4);
    size_t got = 5;
    cr_expect(mygpt_instruct_item(&ds, ds.n, &got) == NULL && got == 0, "an entry past the end"); // (it read past)
    free(ids);
    golden_reader_close(&gold);
    mygpt_instruct_dataset_free(&ds);
    mygpt_instruct_data_free(&d);
    mygpt_tokenizer_free(tok);
}

/* Every `collate` case of the golden: with_rows 0 the explicit items, 1 the dataset's rows. */
static void check_collates(int with_rows, const mygpt_instruct_dataset *ds)
{
    golden_reader gold = golden_reader_must_open("instruct.txt");
    char *line = NULL, name[64] = "";
    int cases = 0, rows_case = 0;
    size_t allowed = 0, B = 0, b = 0;
    int mask = 0;
    int64_t *items[16] = {0}, rows[16];
    size_t lengths[16], prompts[16];
    int64_t *inputs = NULL, *targets = NULL, *want = malloc(MAX_VALUES * sizeof *want);
    size_t T = 0;
    while ((line = golden_read(&gold))) {
        int used;
        if (sscanf(line, "collate %63s %zu %d %zu", name, &allowed, &mask, &B) == 4) {
            cr_assert_leq(B, 16);
            for (size_t k = 0; k < b; k++) // the last case's items
                free(items[k]);
            b = 0;
            rows_case = -1;
        } else if (sscanf(line, "item %zu %n", &prompts[b], &used) == 1) {
            rows_case = 0;
            items[b] = malloc(MAX_VALUES * sizeof *items[b]);
            lengths[b] = golden_parse_i64(line + used, items[b], MAX_VALUES);
            b++;
        } else if (strncmp(line, "rows ", 5) == 0) {
            rows_case = 1;
            cr_assert_eq(golden_parse_i64(line + 5, rows, 16), B);
        } else if (sscanf(line, "inputs %zu %n", &T, &used) == 1 && rows_case == with_rows) {
            mygpt_error err = {0};
            size_t got_T = 0, want_T;
            if (with_rows)
                want_T = mygpt_instruct_batch_length(ds, rows, B, allowed);
            else
                want_T = mygpt_instruct_collate_length(lengths, B, allowed);
            cr_expect_eq(want_T, T, "%s: T %zu, Python %zu", name, want_T, T);
            inputs = malloc((B * T + 1) * sizeof *inputs);
            targets = malloc((B * T + 1) * sizeof *targets);
            if (with_rows)
                cr_assert_eq(mygpt_instruct_batch(ds, rows, B, &(mygpt_instruct_collation){allowed, mask}, inputs,
                                                  targets, &got_T, &err),
                             MYGPT_OK, "%s: %s", name, err.message);
            else
                cr_assert_eq(mygpt_instruct_collate(inputs, targets, &got_T,
                                                    &(mygpt_instruct_items){(const int64_t *const *)items, lengths,
                                                                            mask ? prompts : NULL, B},
                                                    allowed, MYGPT_ENDOFTEXT_ID, &err),
                             MYGPT_OK, "%s: %s", name, err.message);
            cr_assert_eq(got_T, T, "%s", name);
            cr_assert_eq(golden_parse_i64(line + used, want, MAX_VALUES), B * T);
            cr_expect(memcmp(inputs, want, B * T * sizeof *want) == 0, "%s: inputs differ from PyTorch's", name);
        } else if (strncmp(line, "targets ", 8) == 0 && inputs) {
            cr_assert_eq(golden_parse_i64(line + 8, want, MAX_VALUES), B * T);
            size_t diff = 0;
            for (size_t i = 0; i < B * T; i++)
                diff += targets[i] != want[i];
            cr_expect_eq(diff, 0, "%s: %zu of %zu targets differ from PyTorch's", name, diff, B * T);
            free(inputs);
            free(targets);
            inputs = targets = NULL;
            cases++;
        }
    }
    for (size_t k = 0; k < b; k++)
        free(items[k]);
    free(want);
    golden_reader_close(&gold);
    cr_expect_geq(cases, with_rows ? 7 : 4);
}

Test(instruct, the_collate_of_items_is_custom_collate_fns)
{
    check_collates(0, NULL);
}

Test(instruct, the_collate_of_the_datas_batches_is_custom_collate_fns, .timeout = 120)
{
    mygpt_instruct_dataset ds;
    mygpt_instruct_data d;
    mygpt_tokenizer *tok = load_dataset(&ds, &d);
    check_collates(1, &ds);
    mygpt_instruct_dataset_free(&ds);
    mygpt_instruct_data_free(&d);
    mygpt_tokenizer_free(tok);
}

/* The reference's formula_logits: small integers over 512, exact in float32 */
static void formula_logits(float *x, size_t N, int V, long long seed)
{
    for (size_t i = 0; i < N * (size_t)V; i++)
        x[i] = (float)(((long long)i * 40503 + seed * 977) % 8191 - 4095) / 512.0f;
}

Test(instruct, the_loss_ignores_minus_100_as_pytorch_bit_for_bit, .timeout = 120)
{
    FILE *f = golden_open("instruct.txt");
    cr_assert(f);
    char *line = NULL, name[64];
    size_t cap = 0, N = 0;
    long lineno = 0;
    int V = 0, cases = 0, explicit = 0;
    long long seed = 0;
    float *x = NULL;
    int64_t *y = NULL;
    while (golden_next_line(f, &line, &cap, &lineno) >= 0) {
        if (sscanf(line, "loss %63s %zu %d %lld", name, &N, &V, &seed) == 4) {
            free(x);
            free(y);
            x = malloc(N * V * sizeof *x);
            y = malloc(N * sizeof *y);
            explicit = 0;
        } else if (strncmp(line, "logits ", 7) == 0 && x) {
            cr_assert_eq(golden_parse_f32(line + 7, x, N * V), N * V);
            explicit = 1;
        } else if (strncmp(line, "targets ", 8) == 0 && x) {
            cr_assert_eq(golden_parse_i64(line + 8, y, N), N);
        } else if (strncmp(line, "want ", 5) == 0 && x) {
            char hex[16];
            unsigned long long gsum;
            cr_assert_eq(sscanf(line + 5, "%15s %llu", hex, &gsum), 2);
            if (!explicit)
                formula_logits(x, N, V, seed);
            float *lp = malloc(N * V * sizeof *lp), *dx = malloc(N * V * sizeof *dx);
            float loss[3];
            uint64_t sums[3];
            for (int threads = 1; threads <= 3; threads++) {
                omp_set_num_threads(threads);
                mygpt_error err = {0};
                cr_assert_eq(mygpt_cross_entropy_forward(&loss[threads - 1], lp, x, y, N, V, &err), MYGPT_OK,
                             "%s: %s", name, err.message);
                mygpt_cross_entropy_backward(dx, lp, y, N, V);
                sums[threads - 1] = golden_checksum(dx, N * V);
            }
            omp_set_num_threads(1);
            const float want = golden_unhex32(hex);
            cr_expect(golden_same_bits_as_x86(loss[0], want), "%s: loss %.9g, PyTorch %.9g", name, loss[0], want);
            cr_expect_eq(sums[0], gsum, "%s: the gradient's bits differ from PyTorch's", name);
            cr_expect(golden_same_bits(loss[0], loss[1]) && golden_same_bits(loss[0], loss[2]) && sums[0] == sums[1] &&
                          sums[0] == sums[2], "%s: 1, 2 and 3 threads differ", name);
            size_t nonzero = 0; // an ignored row's gradient is +0 throughout
            for (size_t n = 0; n < N; n++)
                if (y[n] == MYGPT_IGNORE_INDEX)
                    for (int v = 0; v < V; v++)
                        nonzero += !golden_same_bits(dx[n * V + v], 0.0f);
            cr_expect_eq(nonzero, 0, "%s: ignored rows have gradient", name);
            free(lp);
            free(dx);
            free(x);
            free(y);
            x = NULL;
            y = NULL;
            cases++;
        }
    }
    free(x);
    free(y);
    free(line);
    fclose(f);
    cr_expect_geq(cases, 8);
}

/* The GPT's loss and gradients on collated batches (targets with -100), as the grads.txt
 * test compares them: within 1e-5 of autograd; mygpt_gpt_loss gives the trainer's bits. */
Test(instruct, the_model_trains_on_collated_batches_as_autograd, .timeout = 300)
{
    golden_reader gold = golden_reader_must_open("instruct.txt");
    char *line = NULL, name[64] = "";
    mygpt_config cfg = {0};
    unsigned long long seed = 0;
    int B = 0, T = 0, models = 0;
    int64_t *ids = NULL, *tg = NULL;
    mygpt_gpt *g = NULL;
    mygpt_trainer *tr = NULL;
    size_t covered = 0;
    while ((line = golden_read(&gold))) {
        if (sscanf(line, "model %63s %llu %d %d %d %d %d %d %d", name, &seed, &cfg.vocab_size, &cfg.embed_dim,
                   &cfg.num_heads, &cfg.num_layers, &cfg.max_seq_len, &B, &T) == 9) {
            ids = malloc((size_t)B * T * sizeof *ids);
            tg = malloc((size_t)B * T * sizeof *tg);
        } else if (strncmp(line, "ids ", 4) == 0 && ids) {
            cr_assert_eq(golden_parse_i64(line + 4, ids, (size_t)B * T), (size_t)B * T);
        } else if (strncmp(line, "targets ", 8) == 0 && tg) {
            cr_assert_eq(golden_parse_i64(line + 8, tg, (size_t)B * T), (size_t)B * T);
        } else if (strncmp(line, "loss ", 5) == 0 && ids) {
            mygpt_error err = {0};
            float loss, loss2;
            cr_assert_eq(mygpt_gpt_create(&g, &cfg, seed, &err), MYGPT_OK, "%s", err.message);
            cr_assert_eq(mygpt_trainer_create(&tr, g, &err), MYGPT_OK);
            cr_assert_eq(mygpt_trainer_zero_grad(tr, &err), MYGPT_OK);
            cr_assert_eq(mygpt_trainer_forward(tr, ids, tg, B, T, &loss, &err), MYGPT_OK, "%s: %s", name,
                         err.message);
            cr_assert_eq(mygpt_trainer_backward(tr, &err), MYGPT_OK, "%s", err.message);
            cr_assert_eq(mygpt_gpt_loss(g, ids, tg, B, T, &loss2, &err), MYGPT_OK, "%s", err.message);
            cr_expect(golden_same_bits(loss, loss2), "%s: mygpt_gpt_loss %.9g, the trainer %.9g", name, loss2, loss);
            const float want = golden_unhex32(line + 5);
            if (isnan(want))
                cr_expect(isnan(loss), "%s: loss %g, PyTorch NaN", name, loss);
            else
                cr_expect_leq(fabs(loss - want), 1e-5 * fmax(1, fabs(want)), "%s: loss %.8g vs %.8g", name, loss,
                              want);
            covered = 0;
        } else if (strncmp(line, "grad ", 5) == 0 && tr) {
            char pname[16];
            size_t numel;
            const double worst = golden_span_worst(&cfg, tr->grads_memory, line + 5, pname, &numel);
            cr_expect_leq(worst, 1e-5, "%s %s: |dg| %.3g x max(1, max|g|)", name, pname, worst);
            covered += numel;
        } else if (strcmp(line, "end") == 0 && g) {
            cr_expect_eq(covered, g->num_parameters, "%s: the golden covers %zu of %zu gradients", name, covered,
                         g->num_parameters);
            mygpt_trainer_free(tr);
            mygpt_gpt_free(g);
            tr = NULL;
            g = NULL;
            free(ids);
            free(tg);
            ids = tg = NULL;
            models++;
        }
    }
    golden_reader_close(&gold);
    cr_expect_geq(models, 4);
}

/* Targets other than -100 outside [0, V) stay errors; every row ignored is NaN, not an error. */
Test(instruct, the_loss_refuses_other_negative_targets)
{
    float x[6] = {0}, lp[6], loss;
    int64_t y[3] = {0, MYGPT_IGNORE_INDEX, -1};
    mygpt_error err = {0};
    cr_expect_eq(mygpt_cross_entropy_forward(&loss, lp, x, y, 3, 2, &err), MYGPT_ERANGE);
    cr_expect(strstr(err.message, "target -1 at row 2") != NULL, "%s", err.message);
    y[2] = -101;
    cr_expect_eq(mygpt_cross_entropy_forward(&loss, lp, x, y, 3, 2, &err), MYGPT_ERANGE);
    y[2] = 2;
    cr_expect_eq(mygpt_cross_entropy_forward(&loss, lp, x, y, 3, 2, &err), MYGPT_ERANGE);
    y[0] = y[2] = MYGPT_IGNORE_INDEX;
    cr_expect_eq(mygpt_cross_entropy_forward(&loss, lp, x, y, 3, 2, &err), MYGPT_OK);
    cr_expect(isnan(loss));
}

Test(instruct, broken_files_are_refused_with_the_entry)
{
    static const struct {
        const char *json, *says;
    } cases[] = {
        {"", "malformed JSON"},
        {"[{\"instruction\": \"a\", \"input\": \"\", \"output\": \"b\"}", "malformed JSON"},
        {"{\"instruction\": \"a\"}", "not a JSON array"},
        {"[1]", "entry 0 is not an object"},
        {"[{\"instruction\": \"a\", \"input\": \"\", \"output\": \"b\"}, {\"input\": \"\", \"output\": \"b\"}]",
         "entry 1 has no \"instruction\""},
        {"[{\"instruction\": \"a\", \"output\": \"b\"}]", "entry 0 has no \"input\""},
        {"[{\"instruction\": \"a\", \"input\": null, \"output\": \"b\"}]", "entry 0: \"input\" is not a string"},
        {"[{\"instruction\": \"a\", \"input\": \"\", \"output\": \"b\", \"output\": \"c\"}]",
         "entry 0 has \"output\" 2 times"},
        {"[{\"instruction\": \"a\\u0000b\", \"input\": \"\", \"output\": \"b\"}]", "NUL character"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mygpt_instruct_data d;
        mygpt_error err = {0};
        cr_expect_eq(mygpt_instruct_data_parse(&d, "x.json", cases[i].json, strlen(cases[i].json), &err),
                     MYGPT_EFORMAT, "case %zu", i);
        cr_expect(strstr(err.message, "x.json") && strstr(err.message, cases[i].says), "case %zu: %s", i,
                  err.message);
        cr_expect_eq(d.n, 0);
        cr_expect_null(d.entry);
    }
    mygpt_instruct_data d;
    mygpt_error err = {0};
    const char *ok = "[{\"instruction\": \"caf\\u00e9\", \"input\": \"\", \"output\": \"b\", \"extra\": [1, {\"a\": []}]}, "
                     "{\"output\": \"y\", \"input\": \"i\", \"instruction\": \"x\"}]";
    cr_assert_eq(mygpt_instruct_data_parse(&d, "x.json", ok, strlen(ok), &err), MYGPT_OK, "%s", err.message);
    cr_expect_eq(d.n, 2);
    cr_expect_str_eq(d.entry[0].instruction, "caf\xc3\xa9");
    cr_expect_str_eq(d.entry[1].input, "i");
    mygpt_instruct_data_free(&d);
    cr_expect_eq(mygpt_instruct_data_read(&d, "no/such/file.json", &err), MYGPT_EIO);
    cr_expect(strstr(err.message, "no/such/file.json"), "%s", err.message);
}

Test(instruct, bad_batches_are_refused)
{
    const int64_t a[2] = {1, 2};
    const int64_t *items[1] = {a};
    const size_t len[1] = {2};
    int64_t in[4], out[4];
    size_t T;
    mygpt_error err = {0};
    cr_expect_eq(mygpt_instruct_collate(in, out, &T, &(mygpt_instruct_items){items, len, NULL, 0}, 0, MYGPT_ENDOFTEXT_ID,
                                        &err),
                 MYGPT_EINVAL);
    const int64_t *none[1] = {NULL};
    cr_expect_eq(mygpt_instruct_collate(in, out, &T, &(mygpt_instruct_items){none, len, NULL, 1}, 0, MYGPT_ENDOFTEXT_ID,
                                        &err),
                 MYGPT_EINVAL);
    mygpt_instruct_dataset ds = {0};
    const int64_t rows[1] = {0};
    cr_expect_eq(mygpt_instruct_batch(&ds, rows, 1, &(mygpt_instruct_collation){0, 0}, in, out, &T, &err), MYGPT_ERANGE);
    cr_expect(strstr(err.message, "row 0"), "%s", err.message);
}

Test(instruct, a_text_holding_endoftext_is_refused)
{
    mygpt_tokenizer *tok = tokenizer_or_skip();
    mygpt_instruct_entry e[2] = {{"a", "", "b"}, {"say", "", "it <|endoftext|> here"}};
    mygpt_instruct_dataset ds;
    mygpt_error err = {0};
    cr_expect_eq(mygpt_instruct_dataset_init(&ds, e, 2, tok, &err), MYGPT_EFORMAT);
    cr_expect(strstr(err.message, "entry 1") && strstr(err.message, "<|endoftext|>"), "%s", err.message);
    cr_expect_null(ds.ids);
    mygpt_tokenizer_free(tok);
    // checked in a file's entries: named by the file and the index in it, in the range asked only
    const char *json = "[{\"instruction\": \"a\", \"input\": \"\", \"output\": \"b\"}, "
                       "{\"instruction\": \"a\", \"input\": \"<|endoftext|>\", \"output\": \"b\"}, "
                       "{\"instruction\": \"a\", \"input\": \"\", \"output\": \"b\"}]";
    mygpt_instruct_data d;
    cr_assert_eq(mygpt_instruct_data_parse(&d, "d.json", json, strlen(json), NULL), MYGPT_OK);
    cr_expect_eq(mygpt_instruct_data_check(&d, "d.json", 0, 1, &err), MYGPT_OK);
    cr_expect_eq(mygpt_instruct_data_check(&d, "d.json", 2, 5, &err), MYGPT_OK);
    cr_expect_eq(mygpt_instruct_data_check(&d, "d.json", 4, 1, &err), MYGPT_OK);
    cr_expect_eq(mygpt_instruct_data_check(&d, "d.json", 1, 2, &err), MYGPT_EFORMAT);
    cr_expect_str_eq(err.message, "d.json: entry 1 holds <|endoftext|>, which tokenizer.encode refuses");
    mygpt_instruct_data_free(&d);
}
