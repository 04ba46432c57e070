/*
 * test_instruct_finetune.c - the book's chapter-7 instruction fine-tuning against PyTorch
 * 1.13 (tests/golden/instruct_finetune.txt, from tools/reference_book_ch7.py
 * --finetune-golden): over twelve small configurations (width, heads, layers, context, batch,
 * learning rate, the book's GPTModel with and without qkv_bias or GPT-2, the prompt masked
 * or not (once cut so short that whole batches are -100: NaN losses, printed "nan"),
 * dropout, everything training, a part frozen, or exercise 7.4's LoRA adapters alone, a
 * head of its own wrapped too), train_model_simple on slices of
 * instruction-data.json through trainer/book_train.c's book_loader (batches of varying
 * T): each step's batch the same tensors (checksums of its inputs and targets) and its loss
 * within docs/training-parity.md's 1e-4 relative; the first step's gradient of every
 * trainable tensor within 1e-5 x max(1, max |g|); frozen tensors without a gradient and
 * bit-identical after training; the printed log (the evaluations, the samples,
 * instruction-data-with-response.json) line for line, the initial losses' full repr
 * digits within the same tolerance; the greedy responses' token ids (eos 50256) the same
 * as PyTorch's, and with the KV cache as without. The same run on 1, 2 and 3 threads
 * gives the same bytes. The response text and the JSON writer alone: Python's .strip()
 * and json.dump's escapes.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "book_train.h"
#include "finetune_setup.h"
#include "train_step.h"
#include "data.h"
#include "golden.h"
#include "mygpt/data.h"
#include "mygpt/generate.h"
#include "mygpt/print.h"
#include "mygpt/train.h"

enum { MAX_CASES = 16, MAX_STEPS = 64, MAX_LOG = 256, MAX_GRADS = 64 };
enum { SMALLEST = 2 };     /* the golden's dropout_b3: width 8, 9 entries, batches of 3 */
enum { SMALL_FROZEN = 7 }; /* gpt2_frozen_dropout: GPT-2 with dropout, parts of two blocks training */
enum { MASKED_OUT = 9 };   /* masked_out_nan: batches whose every target is -100, the losses NaN */
enum { LORA_HEAD = 10 };   /* lora_r4_a8_head: exercise 7.4, the vocabulary's head wrapped too */

typedef struct ft_case {
    char name[64];
    int C, NH, L, ctx, B, mask, n, epochs, allowed, max_new, qkv;
    double lr, drop;
    mygpt_arch arch;
    char trains[128]; /* "all", the comma-separated name prefixes that train, or lora-RANK-ALPHA */
    int steps;
    int step_B[MAX_STEPS], step_T[MAX_STEPS]; /* each step's batch shape */
    unsigned long long x_sum[MAX_STEPS], y_sum[MAX_STEPS]; /* and its inputs' and targets' checksums */
    float loss[MAX_STEPS];
    int n_grads;
    char *grad[MAX_GRADS]; /* "NAME NUMEL MAXABS INDEX:HEX...": the first step's gradients */
    char *frozen;          /* the names without a gradient, space-separated */
    int n_responses;
    size_t response_len[16];
    int64_t *response[16]; /* the new tokens of response i */
    int n_log;
    char *log[MAX_LOG];
} ft_case;

typedef struct ft_result {
    int steps;
    double loss[MAX_STEPS];
    int batches, B[MAX_STEPS], T[MAX_STEPS]; /* the training batches' shapes, in order */
    unsigned long long x_sum[MAX_STEPS], y_sum[MAX_STEPS];
    book_loader train;                       /* what recorded_batch reads through */
    mygpt_trainer *tr;
    float *grads; /* the gradients of the first step, in the parameter block's layout */
    size_t n_params;       /* the model's parameters */
    int trainable, frozen; /* state_dict entries that train, that do not */
    double worst_grad;     /* the worst gradient's |difference| / max(1, max |g|) */
    int64_t *response[16];
    size_t response_len[16];
    char *text; /* what the run prints */
    size_t len;
} ft_result;

static int read_cases(ft_case *cases)
{
    FILE *f = golden_open("instruct_finetune.txt");
    cr_assert(f, "tests/golden/instruct_finetune.txt is missing");
    char *line = NULL;
    size_t cap = 0;
    long lineno = 0;
    int n = -1;
    while (golden_next_line(f, &line, &cap, &lineno) >= 0) {
        ft_case *c = n >= 0 ? &cases[n] : NULL;
        if (strncmp(line, "run ", 4) == 0) {
            cr_assert_lt(++n, MAX_CASES);
            c = &cases[n];
            memset(c, 0, sizeof *c);
            char arch[32];
            cr_assert_eq(sscanf(line, "run %63s %d %d %d %d %d %lf %d %d %d %d %d %lf %31s %d %127s", c->name, &c->C,
                                &c->NH, &c->L, &c->ctx, &c->B, &c->lr, &c->mask, &c->n, &c->epochs, &c->allowed,
                                &c->max_new, &c->drop, arch, &c->qkv, c->trains),
                         16, "line %ld", lineno);
            cr_assert_eq(mygpt_arch_parse(arch, &c->arch, NULL), MYGPT_OK, "line %ld", lineno);
        } else if (strncmp(line, "step ", 5) == 0) {
            int i, b, t;
            char hex[16];
            cr_assert(c && sscanf(line, "step %d %d %d %15s %llu %llu", &i, &b, &t, hex, &c->x_sum[c->steps],
                                  &c->y_sum[c->steps]) == 6 &&
                          i == c->steps && i < MAX_STEPS,
                      "line %ld", lineno);
            c->step_B[i] = b;
            c->step_T[i] = t;
            cr_assert_eq(golden_parse_f32(hex, &c->loss[i], 1), 1);
            c->steps++;
        } else if (strncmp(line, "response ", 9) == 0) {
            int i, used;
            size_t np;
            cr_assert(c && sscanf(line, "response %d %zu %n", &i, &np, &used) == 2 && i == c->n_responses && i < 16,
                      "line %ld", lineno);
            int64_t *ids = malloc(512 * sizeof *ids);
            size_t k = 0;
            for (char *p = line + used; *p && *p != '-';) {
                char *end;
                long long v = strtoll(p, &end, 10);
                if (end == p)
                    break;
                cr_assert_lt(k, 512);
                ids[k++] = v;
                p = end;
            }
            c->response[i] = ids;
            c->response_len[i] = k;
            c->n_responses++;
        } else if (strncmp(line, "grad ", 5) == 0) {
            cr_assert(c && c->n_grads < MAX_GRADS, "line %ld", lineno);
            c->grad[c->n_grads++] = strdup(line + 5);
        } else if (strncmp(line, "frozen", 6) == 0) {
            cr_assert(c && !c->frozen, "line %ld", lineno);
            c->frozen = strdup(line[6] ? line + 7 : "");
        } else if (strncmp(line, "log ", 4) == 0 || strcmp(line, "log") == 0) {
            cr_assert(c && c->n_log < MAX_LOG, "line %ld", lineno);
            c->log[c->n_log++] = strdup(line[3] ? line + 4 : "");
        }
    }
    free(line);
    fclose(f);
    return n + 1;
}

/* The initial losses print Python's repr of a mean of float32 losses: all its digits, so
 * one unit in the last place of a batch's loss shows; those two lines are numbers within
 * docs/training-parity.md's 1e-4 relative, every other line is text. */
static int same_number_line(const char *got, const char *want)
{
    static const char *labels[2] = {"   Training loss: ", "   Validation loss: "};
    for (int k = 0; k < 2; k++) {
        const size_t n = strlen(labels[k]);
        if (strncmp(got, labels[k], n) == 0 && strncmp(want, labels[k], n) == 0) {
            const double a = strtod(got + n, NULL), b = strtod(want + n, NULL);
            return fabs(a - b) <= 1e-4 * fabs(b);
        }
    }
    return 0;
}

/* sum over i of (i + 1) * v[i] mod 2^64, as the reference's checksum */
static unsigned long long checksum_i64(const int64_t *v, size_t n)
{
    unsigned long long s = 0;
    for (size_t i = 0; i < n; i++)
        s += (unsigned long long)(i + 1) * (unsigned long long)v[i];
    return s;
}

/* Whether word is one of list's space-separated words (NULL: how many there are). */
static int word_in(const char *list, const char *word)
{
    int n = 0;
    for (const char *p = list; p && *p;) {
        const size_t len = strcspn(p, " ");
        if (len && word && strlen(word) == len && strncmp(p, word, len) == 0)
            return 1;
        n += len > 0;
        p += len + strspn(p + len, " ");
    }
    return word ? 0 : n;
}

/* A golden "grad NAME NUMEL MAXABS INDEX:HEX..." line against grads (laid out as g's
 * parameters): the worst |difference| / max(1, max |want|), expected within 1e-5. */
static double compare_grad(const char *label, const mygpt_gpt *g, const float *grads, const char *line)
{
    char name[160];
    const double worst = golden_sampled_worst(g, grads, line, name, sizeof name);
    cr_assert_geq(worst, 0, "%s: %s", label, name);
    cr_expect_leq(worst, 1e-5, "%s: the gradient of %s within %.3g x max(1, max|g|)", label, name, worst);
    return worst;
}

/* the training loader's batch, its shape and checksums recorded */
static mygpt_status recorded_epoch(void *self, mygpt_rng *rng, int shuffle, mygpt_error *err)
{
    ft_result *r = self;
    return r->train.epoch(r->train.self, rng, shuffle, err);
}

static mygpt_status recorded_batch(void *self, size_t b, int64_t *x, int64_t *y, int *B, int *T, mygpt_error *err)
{
    ft_result *r = self;
    const mygpt_status st = r->train.batch(r->train.self, b, x, y, B, T, err);
    if (r->batches < MAX_STEPS && st == MYGPT_OK) {
        r->B[r->batches] = *B;
        r->T[r->batches] = *T;
        r->x_sum[r->batches] = checksum_i64(x, (size_t)*B * (size_t)*T);
        r->y_sum[r->batches] = checksum_i64(y, (size_t)*B * (size_t)*T);
    }
    r->batches++;
    return st;
}

static int after_step(void *ctx, long steps, long epoch, size_t batch, double loss, const double *eval)
{
    (void)epoch, (void)batch, (void)eval;
    ft_result *r = ctx;
    if (steps - 1 < MAX_STEPS)
        r->loss[steps - 1] = loss;
    r->steps = (int)steps;
    if (steps == 1) { // the optimizer step leaves the gradients of loss.backward() as they were
        const size_t n = r->tr->model->num_parameters;
        r->n_params = n;
        r->grads = malloc(n * sizeof *r->grads);
        cr_assert_not_null(r->grads);
        memcpy(r->grads, r->tr->grads_memory, n * sizeof *r->grads);
    }
    return 0;
}

#define OK(call) cr_assert_eq((call), MYGPT_OK, "%s", err.message)

/* tools/reference_book_ch7.py's finetune() for case c: what it prints into r->text, the
 * steps' losses and the responses' new tokens */
static void run_case(const ft_case *c, const mygpt_instruct_data *data, const mygpt_tokenizer *tok, ft_result *r)
{
    mygpt_error err = {0};
    memset(r, 0, sizeof *r);
    FILE *out = open_memstream(&r->text, &r->len);
    size_t n_train, n_test, n_val;
    mygpt_instruct_split(data->n, &n_train, &n_test, &n_val);
    const mygpt_instruct_entry *train_data = data->entry, *test_data = data->entry + n_train,
                               *val_data = data->entry + n_train + n_test;
    const size_t n = (size_t)c->n;
    n_train = n_train < n ? n_train : n;
    n_val = n_val < n ? n_val : n;
    n_test = n_test < n ? n_test : n;
    fprintf(out, "Training set length: %zu\nValidation set length: %zu\nTest set length: %zu\n", n_train, n_val,
            n_test);
    fprintf(out, "--------------------------------------------------\n");
    mygpt_rng rng = {0};
    mygpt_rng_seed(&rng, 123);
    mygpt_instruct_dataset train_ds, val_ds;
    OK(mygpt_instruct_dataset_init(&train_ds, train_data, n_train, tok, &err));
    OK(mygpt_instruct_dataset_init(&val_ds, val_data, n_val, tok, &err));
    mygpt_instruct_loader train, train_eval, val;
    OK(mygpt_instruct_loader_init(&train, &train_ds, (size_t)c->B, 1, (size_t)c->allowed, c->mask, &err));
    OK(mygpt_instruct_loader_init(&train_eval, &train_ds, (size_t)c->B, 1, (size_t)c->allowed, c->mask, &err));
    OK(mygpt_instruct_loader_init(&val, &val_ds, (size_t)c->B, 0, (size_t)c->allowed, c->mask, &err));
    r->train = book_instructions(&train);
    const book_loader l_train = {r, train.num_batches, recorded_epoch, recorded_batch},
                      l_train_eval = book_instructions(&train_eval), l_val = book_instructions(&val);
    const mygpt_config cfg = {50257, c->C, c->NH, c->L, c->ctx, c->arch, c->qkv, c->drop};
    mygpt_gpt *g;
    OK(mygpt_gpt_create_from(&g, &cfg, &rng, &err));
    if (c->C == 12)
        fprintf(out, "Loaded model: Small test model\n");
    else
        fprintf(out, "Loaded model: GPTModel(emb_dim=%d, n_heads=%d, n_layers=%d, context_length=%d)\n", c->C,
                c->NH, c->L, c->ctx);
    fprintf(out, "--------------------------------------------------\n");
    int rank = 0, alpha = 0;
    mygpt_trainer *tr = NULL;
    if (sscanf(c->trains, "lora-%d-%d", &rank, &alpha) == 2) // exercise 7.4
        OK(lora_wrap_print(out, g, rank, alpha, &rng, &tr, &err));
    const size_t room = (size_t)c->B * (train.max_length > val.max_length ? train.max_length : val.max_length);
    int64_t *x = malloc(room * sizeof *x), *y = malloc(room * sizeof *y);
    double losses[2];
    OK(book_loss(g, &l_train_eval, 1, &rng, 5, x, y, &losses[0], &err));
    OK(book_loss(g, &l_val, 0, &rng, 5, x, y, &losses[1], &err));
    fprintf(out, "Initial losses\n");
    for (int k = 0; k < 2; k++) {
        mygpt_strbuf sb = {0};
        cr_assert_eq(mygpt_py_float_repr(&sb, losses[k]), MYGPT_OK);
        fprintf(out, "%s %s\n", k ? "   Validation loss:" : "   Training loss:", mygpt_sb_str(&sb));
        mygpt_sb_free(&sb);
    }
    if (!tr)
        OK(mygpt_trainer_create(&tr, g, &err));
    if (!rank && strcmp(c->trains, "all") != 0) { // for p in model.parameters(): p.requires_grad = named in trains
        char *save, *names = strdup(c->trains);
        OK(mygpt_trainer_set_trainable(tr, "", 0, NULL, &err));
        for (char *t = strtok_r(names, ",", &save); t; t = strtok_r(NULL, ",", &save))
            OK(mygpt_trainer_set_trainable(tr, t, 1, NULL, &err));
        free(names);
    }
    r->tr = tr;
    float *initial = malloc(g->num_parameters * sizeof *initial);
    cr_assert_not_null(initial);
    memcpy(initial, g->params_memory, g->num_parameters * sizeof *initial);
    mygpt_optimizer opt;
    mygpt_adamw_init(&opt, c->lr);
    opt.weight_decay = 0.1;
    mygpt_rng_seed(&rng, 123);
    tr->dropout_rng = &rng;
    int64_t *start;
    size_t n_start;
    OK(instruct_encode_prompt(tok, &val_data[0], &start, &n_start, &err));
    const book_run run = {.epochs = c->epochs, .eval_every = 2, .eval_batches = 2, .tok = tok, .prompt = start,
                          .n_prompt = n_start, .sample_tokens = 10, .after_step = after_step, .ctx = r};
    long steps;
    OK(book_train_loaders(out, tr, &opt, &l_train, &l_train_eval, &l_val, &rng, &run, x, y, &steps, &err));
    cr_expect_eq(opt.n, mygpt_trainer_trainable_count(tr), "%s: AdamW holds state for %zu floats", c->name, opt.n);
    for (int j = 0; j < mygpt_state_dict_len(&g->config); j++) { // frozen: no gradient, the same bits after training
        if (mygpt_trainer_is_trainable(tr, j)) {
            r->trainable++;
            continue;
        }
        mygpt_state_entry e, eg;
        mygpt_state_dict_entry(&g->config, &g->params, j, &e);
        mygpt_state_dict_entry(&g->config, &tr->grads, j, &eg);
        cr_expect_eq(memcmp(e.data, initial + (e.data - g->params_memory), e.numel * sizeof(float)), 0,
                     "%s: frozen %s moved", c->name, e.name);
        size_t nonzero = 0;
        for (size_t i = 0; i < eg.numel; i++)
            nonzero += eg.data[i] != 0.0f;
        cr_expect_eq(nonzero, 0, "%s: frozen %s has %zu gradients", c->name, e.name, nonzero);
        cr_expect(word_in(c->frozen, e.name), "%s: %s is frozen here, not in PyTorch", c->name, e.name);
        r->frozen++;
    }
    free(initial);
    r->tr = NULL;
    mygpt_trainer_free(tr);
    fprintf(out, "--------------------------------------------------\nGenerating responses\n");
    char **responses = calloc(n_test, sizeof *responses);
    for (size_t i = 0; i < n_test; i++) {
        OK(instruct_respond(g, tok, &test_data[i], c->max_new, 1, &responses[i], &r->response[i], &r->response_len[i],
                            &err));
        if (i == 0) { // the KV cache gives the tokens of the whole window's forward
            char *text;
            int64_t *full;
            size_t nfull;
            OK(instruct_respond(g, tok, &test_data[i], c->max_new, 0, &text, &full, &nfull, &err));
            cr_expect(nfull == r->response_len[i] && memcmp(full, r->response[i], nfull * sizeof *full) == 0 &&
                          strcmp(text, responses[i]) == 0,
                      "%s: the cached generation differs from the full forward's", c->name);
            free(text);
            free(full);
        }
    }
    char *json;
    size_t json_len;
    OK(mygpt_instruct_json(&json, &json_len, test_data, (const char *const *)responses, n_test, &err));
    fprintf(out, "instruction-data-with-response.json:\n");
    fwrite(json, 1, json_len, out);
    fprintf(out, "\n");
    fclose(out);
    free(json);
    for (size_t i = 0; i < n_test; i++)
        free(responses[i]);
    free(responses);
    free(start);
    free(x);
    free(y);
    mygpt_optimizer_free(&opt);
    for (int k = 0; k < c->n_grads; k++) { // the first step's gradients, while g gives the tensors' places
        cr_assert_not_null(r->grads, "%s: no step", c->name);
        r->worst_grad = fmax(r->worst_grad, compare_grad(c->name, g, r->grads, c->grad[k]));
    }
    mygpt_gpt_free(g);
    mygpt_instruct_loader_free(&train);
    mygpt_instruct_loader_free(&train_eval);
    mygpt_instruct_loader_free(&val);
    mygpt_instruct_dataset_free(&train_ds);
    mygpt_instruct_dataset_free(&val_ds);
}

static void free_result(ft_result *r)
{
    for (int i = 0; i < 16; i++)
        free(r->response[i]);
    free(r->text);
    free(r->grads);
}

Test(instruct_finetune, runs_as_pytorch_does)
{
    static ft_case cases[MAX_CASES];
    const int n_cases = read_cases(cases);
    cr_assert_geq(n_cases, 8, "the golden has %d runs", n_cases);
    mygpt_instruct_data data;
    mygpt_tokenizer *tok = instruction_data_or_skip(&data);
    if (!tok)
        return;
    double worst_grad = 0;
    int ran = 0;
    for (int k = 0; k < n_cases; k++) {
        if (TEST_SANITIZED && k != SMALL_FROZEN && k != MASKED_OUT && k != LORA_HEAD) // the sanitizers: three
            continue;
        const ft_case *c = &cases[k];
        ft_result r;
        run_case(c, &data, tok, &r);
        cr_expect_eq(r.steps, c->steps, "%s: %d steps, PyTorch %d", c->name, r.steps, c->steps);
        for (int i = 0; i < c->steps && i < r.steps; i++) {
            cr_expect(r.B[i] == c->step_B[i] && r.T[i] == c->step_T[i],
                      "%s step %d: batch (%d, %d), PyTorch (%d, %d)", c->name, i, r.B[i], r.T[i], c->step_B[i],
                      c->step_T[i]);
            cr_expect(r.x_sum[i] == c->x_sum[i] && r.y_sum[i] == c->y_sum[i],
                      "%s step %d: the batch's inputs or targets differ from PyTorch's", c->name, i);
            const int both_nan = isnan(r.loss[i]) && isnan(c->loss[i]); // a batch whose every target is -100
            cr_expect(both_nan || fabs(r.loss[i] - c->loss[i]) <= 1e-4 * fabs(c->loss[i]),
                      "%s step %d: loss %.9g, PyTorch %.9g", c->name, i, r.loss[i], (double)c->loss[i]);
        }
        const int frozen_names = word_in(c->frozen, NULL); // what PyTorch froze, and what trained there, did here
        cr_expect_eq(r.frozen, frozen_names, "%s: %d frozen tensors, PyTorch %d", c->name, r.frozen, frozen_names);
        cr_expect_eq(r.trainable, c->n_grads, "%s: %d tensors train, PyTorch %d", c->name, r.trainable, c->n_grads);
        worst_grad = fmax(worst_grad, r.worst_grad);
        ran++;
        for (int i = 0; i < c->n_responses; i++) {
            cr_expect_eq(r.response_len[i], c->response_len[i], "%s response %d: %zu tokens, PyTorch %zu", c->name, i,
                         r.response_len[i], c->response_len[i]);
            for (size_t t = 0; t < c->response_len[i] && t < r.response_len[i]; t++)
                if (r.response[i][t] != c->response[i][t]) {
                    cr_expect_fail("%s response %d token %zu: %lld, PyTorch %lld", c->name, i, t,
                                   (long long)r.response[i][t], (long long)c->response[i][t]);
                    break;
                }
        }
        // the log line for line
        char *save, *text = strdup(r.text);
        int li = 0;
        for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save), li++) {
            while (li < c->n_log && c->log[li][0] == '\0') // strtok skips the empty lines
                li++;
            cr_assert_lt(li, c->n_log, "%s: more lines than PyTorch's: %s", c->name, l);
            if (same_number_line(l, c->log[li]))
                continue;
            cr_expect_str_eq(l, c->log[li], "%s log line %d: \"%s\", PyTorch \"%s\"", c->name, li + 1, l, c->log[li]);
        }
        cr_expect_eq(li, c->n_log, "%s: %d lines, PyTorch %d", c->name, li, c->n_log);
        free(text);
        free_result(&r);
    }
    cr_log_info("instruct_finetune: %d runs; worst gradient %.3g x max(1, max|g|)", ran, worst_grad);
    mygpt_instruct_data_free(&data);
    mygpt_tokenizer_free(tok);
}

Test(instruct_finetune, threads_give_the_same_bytes)
{
    static ft_case cases[MAX_CASES];
    const int n_cases = read_cases(cases);
    mygpt_instruct_data data;
    mygpt_tokenizer *tok = instruction_data_or_skip(&data);
    if (!tok)
        return;
    cr_assert_gt(n_cases, SMALL_FROZEN);
    const int saved = omp_get_max_threads();
    // with dropout, batch 3; GPT-2 with dropout and parts frozen (the plain build alone)
    static const int which[2] = {SMALLEST, SMALL_FROZEN};
    for (int w = 0; w < (TEST_SANITIZED ? 1 : 2); w++) {
        const ft_case *c = &cases[which[w]];
        ft_result first;
        for (int threads = 1; threads <= (TEST_SANITIZED ? 2 : 3); threads++) {
            omp_set_num_threads(threads);
            ft_result r;
            run_case(c, &data, tok, threads == 1 ? &first : &r);
            if (threads == 1)
                continue;
            cr_expect(r.len == first.len && memcmp(r.text, first.text, r.len) == 0, "%s: %d threads print otherwise",
                      c->name, threads);
            for (int i = 0; i < r.steps; i++)
                cr_expect(memcmp(&r.loss[i], &first.loss[i], sizeof r.loss[i]) == 0, "%s step %d: %d threads differ",
                          c->name, i, threads);
            cr_assert(r.grads && first.grads);
            cr_expect(memcmp(r.grads, first.grads, (size_t)r.n_params * sizeof *r.grads) == 0,
                      "%s: the first step's gradients differ on %d threads", c->name, threads);
            free_result(&r);
        }
        free_result(&first);
    }
    omp_set_num_threads(saved);
    mygpt_instruct_data_free(&data);
    mygpt_tokenizer_free(tok);
}

Test(instruct_finetune, the_response_is_strip_of_the_text_after_the_prompt)
{
    static const struct {
        const char *bytes, *want;
    } cases[] = {
        {"\n### Response:\nThe answer.\n", "The answer."},
        {"  ### Response:### Response: x ### Response:  ", "x"},
        {"\xc2\xa0\xe3\x80\x80 a \xe2\x80\xa8\x1c", "a"},  // NBSP, ideographic space, U+2028, U+001C
        {"\xe2\x80\x8b b", "\xe2\x80\x8b b"},                 // U+200B is no whitespace to Python
        {"c \xe2\x80", "c \xef\xbf\xbd"},                    // a cut character: U+FFFD, kept
        {"### Response", "### Response"},
        {" \t\n", ""},
        {"", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *got;
        mygpt_error err = {0};
        OK(mygpt_instruct_response(&got, cases[i].bytes, strlen(cases[i].bytes), &err));
        cr_expect_str_eq(got, cases[i].want, "case %zu", i);
        free(got);
    }
}

Test(instruct_finetune, the_json_is_json_dump_indent_4)
{
    // json.dump([{"instruction": 'Say "hi"\\', "input": "", "output": "caf\u00e9\t\x7f\x01",
    //             "model_response": "\U0001F600 \ufffd"}], f, indent=4)
    const mygpt_instruct_entry e = {"Say \"hi\"\\", "", "caf\xc3\xa9\t\x7f\x01"};
    const char *resp[1] = {"\xf0\x9f\x98\x80 \xef\xbf\xbd"};
    const char *want = "[\n    {\n        \"instruction\": \"Say \\\"hi\\\"\\\\\",\n        \"input\": \"\",\n"
                       "        \"output\": \"caf\\u00e9\\t\\u007f\\u0001\",\n"
                       "        \"model_response\": \"\\ud83d\\ude00 \\ufffd\"\n    }\n]";
    char *json;
    size_t len;
    mygpt_error err = {0};
    OK(mygpt_instruct_json(&json, &len, &e, resp, 1, &err));
    cr_expect_str_eq(json, want);
    cr_expect_eq(len, strlen(want));
    free(json);
    OK(mygpt_instruct_json(&json, &len, &e, NULL, 0, &err));
    cr_expect_str_eq(json, "[]");
    free(json);
    // a NULL field or response is refused, naming it (it crashed)
    const mygpt_instruct_entry no_output = {"Say", NULL, NULL}, no_input = {"Say", NULL, "x"};
    const char *no_resp[1] = {NULL};
    cr_expect_eq(mygpt_instruct_json(&json, &len, &no_output, NULL, 1, &err), MYGPT_EINVAL);
    cr_expect_str_eq(err.message, "entry 0 has no output");
    OK(mygpt_instruct_json(&json, &len, &no_input, NULL, 1, &err)); // no input: ""
    cr_expect(strstr(json, "\"input\": \"\""), "%s", json);
    free(json);
    cr_expect_eq(mygpt_instruct_json(&json, &len, &e, no_resp, 1, &err), MYGPT_EINVAL);
    cr_expect_str_eq(err.message, "entry 0 has no response");
    cr_expect_null(json);
}

/* A batch whose every target is -100 (exercise 7.2's masked prompts cut short): the loss is
 * 0 / 0 = NaN and the gradient zero, and the step is still taken, as PyTorch's
 * train_model_simple takes it: AdamW, its moments zero, only decays the weights. */
Test(instruct_finetune, a_batch_of_ignored_targets_still_steps)
{
    mygpt_error err = {0};
    mygpt_rng rng = {0};
    mygpt_rng_seed(&rng, 123);
    const mygpt_config cfg = {64, 8, 2, 1, 8, MYGPT_ARCH_LLMS_FROM_SCRATCH, 0, 0.0};
    mygpt_gpt *g;
    mygpt_trainer *tr;
    OK(mygpt_gpt_create_from(&g, &cfg, &rng, &err));
    OK(mygpt_trainer_create(&tr, g, &err));
    const size_t n = g->num_parameters;
    float *want = malloc(n * sizeof *want), *zero = calloc(n, sizeof *zero);
    cr_assert(want && zero);
    memcpy(want, g->params_memory, n * sizeof *want);
    mygpt_optimizer opt, expected;
    mygpt_adamw_init(&opt, 5e-5);
    opt.weight_decay = 0.1;
    expected = opt;
    OK(mygpt_optimizer_step(&expected, want, zero, n, &err)); // a step on a zero gradient
    enum { B = 2, T = 4 };
    int64_t x[B * T], y[B * T];
    for (int i = 0; i < B * T; i++) {
        x[i] = i % cfg.vocab_size;
        y[i] = MYGPT_IGNORE_INDEX;
    }
    const dp_team one = {0, 1, 0};
    double shown = 0.0;
    OK(dp_train_step_clipped(&one, tr, &opt, x, y, B, T, 0, 0, "test", 1.0, &shown, NULL, &err));
    cr_expect(isnan(shown), "the loss of no kept target is NaN, not %g", shown);
    cr_expect_eq(opt.step, 1, "the optimizer took %ld steps", opt.step);
    cr_expect_eq(memcmp(g->params_memory, want, n * sizeof *want), 0, "the weights are not a zero-gradient step's");
    // one kept target makes the loss finite again, and a NaN loss otherwise still stops
    y[3] = 5;
    OK(dp_train_step_clipped(&one, tr, &opt, x, y, B, T, 1, 0, "test", 1.0, &shown, NULL, &err));
    cr_expect(isfinite(shown));
    mygpt_optimizer_free(&opt);
    mygpt_optimizer_free(&expected);
    free(want);
    free(zero);
    mygpt_trainer_free(tr);
    mygpt_gpt_free(g);
}
