/*
 * test_classify.c - classification fine-tuning as the book's chapter 6 does it, against
 * tests/golden/classify.txt (tools/reference_book_ch6.py --classify-golden, PyTorch 1.13):
 * the new head's initial values bit for bit, the trainable count, the loss and the accuracy
 * on the last position, every trainable gradient within docs/training-parity.md's tolerance
 * (1e-5 x max(1, max |g|) per tensor), frozen parameters without a gradient and bit-identical
 * after AdamW steps, the steps' losses and parameters; the same bits for 1, 2 and 3 threads;
 * checkpoints that keep the head. The cases with a LoRA rank run appendix E instead: every
 * Linear wrapped, the adapters' initial A bit for bit, only A and B training; the adapters
 * saved alone and loaded back, and merged.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mygpt.h>

#include "golden.h"
#include "model/params.h"

static float unhex32(const char *h)
{
    const uint32_t u = (uint32_t)strtoul(h, NULL, 16);
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* One configuration of the golden file. */
typedef struct classify_case {
    unsigned long long seed;
    mygpt_config cfg;
    int B, T, steps;
    double lr;
    int lora_rank;     /* 0: chapter 6's freezing; else appendix E's adapters */
    double lora_alpha;
    int64_t *ids, *labels;
} classify_case;

/* the reference draws the adapters' A after torch.manual_seed(seed + this) */
#define LORA_SEED_OFFSET 500

/* Compares a golden's sampled tensor (after its tag) with block (g's parameters or
 * gradients): the worst |difference| / max(1, max |want|), expected within tol. */
static double compare_sampled(const mygpt_gpt *g, const float *block, const char *rest, const char *what, double tol)
{
    char name[160];
    const double worst = golden_sampled_worst(g, block, rest, name, sizeof name);
    cr_assert_geq(worst, 0, "%s: %s", what, name);
    cr_expect_leq(worst, tol, "%s %s: |d| %.3g x max(1, max|v|)", what, name, worst);
    return worst;
}

/* A tensor after the AdamW steps against PyTorch's run (param: NAME NUMEL MAXABS
 * INDEX:BITS...) and the same run in float64 (param64: NAME INDEX:BITS64..., the same
 * entries), entry by entry: within tol x max(1, max |v|) of PyTorch float32; failing
 * that, within tol, or twice PyTorch float32's own distance, of float64. Float64 judges
 * where float32 itself is the limit (docs/model-spec.md): an entry whose gradients are
 * near AdamW's eps (1e-8) takes a step that float32 rounding decides, in PyTorch as here
 * (measured: a LoRA B 1.7e-5 from its float64 value in PyTorch). *by_f64 counts the
 * tensors with such entries. Returns the worst |difference from PyTorch| / max(1, max |v|). */
static double compare_trained(const mygpt_gpt *g, const char *param, const char *param64, double tol, int *by_f64)
{
    char name[160], name64[160], maxhex[16];
    size_t numel;
    int used, used64;
    cr_assert(sscanf(param, "%159s %zu %15s %n", name, &numel, maxhex, &used) == 3, "param %.60s", param);
    cr_assert(sscanf(param64, "%159s %n", name64, &used64) == 1 && strcmp(name, name64) == 0, "param64 %.60s",
              param64);
    const int j = golden_entry_named(g, name);
    cr_assert_geq(j, 0, "no tensor %s", name);
    mygpt_state_entry e;
    mygpt_state_dict_entry(&g->config, &g->params, j, &e);
    cr_assert_eq(e.numel, numel, "%s", name);
    const double scale = fmax(1.0, fabs(unhex32(maxhex)));
    double from_torch = 0;
    const char *p = param + used, *q = param64 + used64;
    int entries = 0, judged = 0;
    for (;; entries++) {
        size_t i, i64;
        char hex[16], hex64[24];
        int k, k64;
        if (sscanf(p, "%zu:%15s%n", &i, hex, &k) != 2)
            break;
        cr_assert(sscanf(q, "%zu:%23s%n", &i64, hex64, &k64) == 2 && i64 == i && i < numel, "%s: entry %d", name,
                  entries);
        p += k, q += k64;
        const uint64_t bits = strtoull(hex64, NULL, 16);
        double truth;
        memcpy(&truth, &bits, sizeof truth);
        const double mine = e.data[i], torch = unhex32(hex);
        const double d = fabs(mine - torch) / scale, mine_f64 = fabs(mine - truth) / scale,
                     torch_f64 = fabs(torch - truth) / scale;
        from_torch = fmax(from_torch, d);
        if (d > tol) {
            cr_expect_leq(mine_f64, fmax(tol, 2 * torch_f64), "parameter %s[%zu]: %.3g x max(1, max|v|) from PyTorch, "
                          "and %.3g from float64 where PyTorch is %.3g", name, i, d, mine_f64, torch_f64);
            cr_log_info("parameter %s[%zu]: %.3g from PyTorch; from float64 %.3g, PyTorch %.3g", name, i, d, mine_f64,
                        torch_f64);
            judged++;
        }
    }
    cr_assert_gt(entries, 0, "%s: no entries", name);
    *by_f64 += judged > 0;
    return from_torch;
}

/* Reads the next configuration's header lines (config, ids, labels); 0 at the end of the file. */
static int next_case(FILE *f, char **line, size_t *cap, long *lineno, classify_case *c)
{
    while (golden_next_line(f, line, cap, lineno) >= 0) {
        char arch[32], lr[32];
        int qkv;
        memset(c, 0, sizeof *c);
        if (sscanf(*line, "config %llu %31s %d %d %d %d %d %d %d %d %d %31s %d %d %lf", &c->seed, arch, &qkv,
                   &c->cfg.vocab_size, &c->cfg.embed_dim, &c->cfg.num_heads, &c->cfg.num_layers,
                   &c->cfg.max_seq_len, &c->B, &c->T, &c->cfg.num_classes, lr, &c->steps, &c->lora_rank,
                   &c->lora_alpha) != 15)
            continue;
        cr_assert_eq(mygpt_arch_parse(arch, &c->cfg.arch, NULL), MYGPT_OK);
        c->cfg.qkv_bias = qkv;
        c->lr = strtod(lr, NULL);
        c->ids = malloc((size_t)c->B * c->T * sizeof *c->ids);
        c->labels = malloc((size_t)c->B * sizeof *c->labels);
        cr_assert(c->ids && c->labels);
        cr_assert(golden_next_line(f, line, cap, lineno) >= 0 && strncmp(*line, "ids ", 4) == 0);
        cr_assert_eq(golden_parse_i64(*line + 4, c->ids, (size_t)c->B * c->T), (size_t)c->B * c->T);
        cr_assert(golden_next_line(f, line, cap, lineno) >= 0 && strncmp(*line, "labels ", 7) == 0);
        cr_assert_eq(golden_parse_i64(*line + 7, c->labels, (size_t)c->B), (size_t)c->B);
        return 1;
    }
    return 0;
}

/* opt.zero_grad(); loss = calc_loss_batch(...); loss.backward() */
static mygpt_status forward_backward(mygpt_trainer *tr, const classify_case *c, float *loss)
{
    mygpt_error err = {0};
    mygpt_status st = mygpt_trainer_zero_grad(tr, &err);
    if (st == MYGPT_OK)
        st = mygpt_trainer_forward_last(tr, c->ids, c->labels, c->B, c->T, loss, &err);
    if (st == MYGPT_OK)
        st = mygpt_trainer_backward(tr, &err);
    cr_expect_eq(st, MYGPT_OK, "%s", err.message);
    return st;
}

/* state_dict entries that train */
static int trainable_entries(const mygpt_trainer *tr)
{
    int n = 0;
    for (int j = 0; j < mygpt_state_dict_len(&tr->model->config); j++)
        n += mygpt_trainer_is_trainable(tr, j);
    return n;
}

static void free_case(classify_case *c)
{
    free(c->ids);
    free(c->labels);
}

/* Reads on to the end of the current configuration. */
static void skip_case(FILE *f, char **line, size_t *cap, long *lineno)
{
    while (golden_next_line(f, line, cap, lineno) >= 0 && strcmp(*line, "end") != 0)
        continue;
}

Test(classify, the_book_s_fine_tuning_and_its_lora_follow_pytorch_in_thirteen_configurations, .timeout = 600)
{
    FILE *f = golden_open("classify.txt");
    cr_assert(f, "tests/golden/classify.txt is missing");
    char *line = NULL;
    size_t cap = 0;
    long lineno = 0;
    classify_case c;
    int configs = 0, exact_losses = 0, losses = 0;
    double worst_grad = 0, worst_param = 0;
    char *param = NULL; // a param line, until its param64 line
    int by_f64 = 0;
    // under the sanitizers the first three (the book's GPTModel with and without qkv_bias, and
    // gpt2) and the first with LoRA
    int index = 0, lora_cases = 0;
    while (next_case(f, &line, &cap, &lineno, &c)) {
        const int first_lora = c.lora_rank > 0 && lora_cases++ == 0;
        if (TEST_SANITIZED && index++ >= 3 && !first_lora) {
            skip_case(f, &line, &cap, &lineno);
            free_case(&c);
            continue;
        }
        mygpt_error err = {0};
        mygpt_gpt *g;
        mygpt_trainer *tr;
        cr_assert_eq(mygpt_gpt_create(&g, &c.cfg, c.seed, &err), MYGPT_OK, "%s", err.message);
        if (c.lora_rank > 0) { // replace_linear_with_lora(model, rank, alpha)
            mygpt_rng rng = {0};
            mygpt_rng_seed(&rng, c.seed + LORA_SEED_OFFSET);
            cr_assert_eq(mygpt_lora_add(g, c.lora_rank, c.lora_alpha, &rng, &err), MYGPT_OK, "%s", err.message);
        }
        cr_assert_eq(mygpt_trainer_create(&tr, g, &err), MYGPT_OK, "%s", err.message);
        if (c.lora_rank > 0)
            cr_assert_eq(mygpt_trainer_freeze_for_lora(tr, &err), MYGPT_OK, "%s", err.message);
        else
            cr_assert_eq(mygpt_trainer_freeze_for_classification(tr, &err), MYGPT_OK);
        float *initial = malloc(g->num_parameters * sizeof *initial);
        cr_assert_not_null(initial);
        memcpy(initial, g->params_memory, g->num_parameters * sizeof *initial);
        const int n = c.cfg.num_classes, C = c.cfg.embed_dim;
        mygpt_optimizer opt;
        mygpt_adamw_init(&opt, c.lr);
        opt.weight_decay = 0.1;
        int step = 0, pending = 0, frozen_total = 0;
        float pending_loss = 0;
        while (golden_next_line(f, &line, &cap, &lineno) >= 0 && strcmp(line, "end") != 0) {
            unsigned long long sum;
            int used;
            size_t trainable, total;
            if (sscanf(line, "head %llu%n", &sum, &used) == 1) { // bit for bit
                float bias[16];
                cr_assert_eq(golden_parse_f32(line + used, bias, 16), (size_t)n);
                cr_expect_eq(golden_checksum(g->params.lmw, (size_t)n * C), sum, "config %d: the head's weight",
                             configs);
                cr_expect_eq(memcmp(g->params.lmb, bias, (size_t)n * sizeof *bias), 0, "config %d: the head's bias",
                             configs);
            } else if (strncmp(line, "lora ", 5) == 0) { // an adapter's A, bit for bit
                char name[96];
                cr_assert_eq(sscanf(line + 5, "%95s %llu", name, &sum), 2);
                const int j = golden_entry_named(g, name);
                cr_assert_geq(j, 0, "config %d: no adapter %s", configs, name);
                mygpt_state_entry e;
                mygpt_state_dict_entry(&g->config, &g->params, j, &e);
                cr_expect_eq(golden_checksum(e.data, e.numel), sum, "config %d: %s's initial values", configs, name);
            } else if (sscanf(line, "counts %zu %zu", &trainable, &total) == 2) {
                cr_expect_eq(mygpt_trainer_trainable_count(tr), trainable, "config %d: %zu trainable, torch %zu",
                             configs, mygpt_trainer_trainable_count(tr), trainable);
                cr_expect_eq(g->num_parameters, total, "config %d: %zu parameters, torch %zu", configs,
                             g->num_parameters, total);
                mygpt_param_counts pc; // the formula's count agrees, the head n C + n
                cr_assert_eq(mygpt_param_count(&g->config, &pc, &err), MYGPT_OK);
                cr_expect_eq(pc.total, total, "config %d: mygpt_param_count %llu", configs,
                             (unsigned long long)pc.total);
                cr_expect_eq(pc.head, (uint64_t)n * C + n, "config %d: the head counts %llu", configs,
                             (unsigned long long)pc.head);
            } else if (strncmp(line, "loss ", 5) == 0) { // calc_loss_batch under no_grad
                float loss;
                const float want = unhex32(line + 5);
                int correct;
                cr_assert_eq(mygpt_classifier_batch(g, c.ids, c.labels, c.B, c.T, &loss, &correct, &err), MYGPT_OK,
                             "%s", err.message);
                cr_expect_leq(fabs(loss - want), 1e-5 * fmax(1, fabs(want)), "config %d: loss %.9g, torch %.9g",
                              configs, loss, want);
                exact_losses += memcmp(&loss, &want, sizeof loss) == 0;
                losses++;
                cr_assert(golden_next_line(f, &line, &cap, &lineno) >= 0);
                int want_correct;
                cr_assert_eq(sscanf(line, "correct %d", &want_correct), 1);
                cr_expect_eq(correct, want_correct, "config %d: %d correct, torch %d", configs, correct,
                             want_correct);
            } else if (strncmp(line, "grad ", 5) == 0) {
                if (!pending) // the first step's forward and backward, compared before its update
                    cr_assert_eq(forward_backward(tr, &c, &pending_loss), MYGPT_OK);
                pending = 1;
                worst_grad = fmax(worst_grad, compare_sampled(g, tr->grads_memory, line + 5, "gradient", 1e-5));
            } else if (strncmp(line, "frozen ", 7) == 0) { // no gradient: .grad is None
                char *save, *name = strtok_r(line + 7, " ", &save);
                int frozen = 0;
                for (; name; name = strtok_r(NULL, " ", &save), frozen++) {
                    const int j = golden_entry_named(g, name);
                    cr_assert_geq(j, 0, "no tensor %s", name);
                    cr_expect_not(mygpt_trainer_is_trainable(tr, j), "config %d: %s trains", configs, name);
                    mygpt_state_entry e;
                    mygpt_state_dict_entry(&g->config, &tr->grads, j, &e);
                    for (size_t i = 0; i < e.numel; i++)
                        cr_assert_eq(e.data[i], 0.0f, "config %d: frozen %s has a gradient", configs, name);
                }
                frozen_total = frozen;
            } else if (strncmp(line, "step ", 5) == 0) { // one step of train_classifier_simple
                int k;
                char hex[16];
                cr_assert_eq(sscanf(line + 5, "%d %15s", &k, hex), 2);
                cr_assert_eq(k, step);
                float loss = pending_loss;
                if (!pending)
                    cr_assert_eq(forward_backward(tr, &c, &loss), MYGPT_OK);
                pending = 0;
                const float want = unhex32(hex);
                cr_expect_leq(fabs(loss - want), 1e-5 * fmax(1, fabs(want)), "config %d step %d: loss %.9g, torch %.9g",
                              configs, k, loss, want);
                cr_assert_eq(mygpt_trainer_step(tr, &opt, &err), MYGPT_OK, "%s", err.message);
                step++;
            } else if (strncmp(line, "param ", 6) == 0) {
                cr_assert_null(param, "line %ld: a param line without its param64 line before it", lineno);
                param = strdup(line + 6);
            } else if (strncmp(line, "param64 ", 8) == 0) {
                cr_assert_not_null(param, "line %ld: param64 without its param line", lineno);
                /* W_key's bias has a gradient of 0 in exact arithmetic (it adds q . b to every score
                 * of a query's row, which softmax ignores): both gradients are float32 rounding noise
                 * (within the gradient tolerance above), and AdamW, dividing by sqrt(v), turns noise
                 * into steps of up to lr in either direction. Its values are within steps x lr. */
                if (strstr(param, "att.W_key.bias "))
                    compare_sampled(g, g->params_memory, param, "parameter", 1.01 * c.steps * c.lr);
                else
                    worst_param = fmax(worst_param, compare_trained(g, param, line + 8, 1e-5, &by_f64));
                free(param);
                param = NULL;
            }
        }
        cr_assert_null(param, "config %d: a param line without its param64 line", configs);
        cr_expect_eq(step, c.steps, "config %d: %d steps", configs, step);
        cr_expect_not(mygpt_trainer_is_trainable(tr, mygpt_state_dict_len(&g->config)), "no such entry");
        cr_expect_not(mygpt_trainer_is_trainable(tr, -1), "no such entry");
        cr_expect_eq(frozen_total, mygpt_state_dict_len(&g->config) - trainable_entries(tr),
                     "config %d: %d frozen tensors in PyTorch", configs, frozen_total);
        cr_expect_eq(opt.n, mygpt_trainer_trainable_count(tr), "config %d: AdamW holds state for %zu floats",
                     configs, opt.n);
        for (int j = 0; j < mygpt_state_dict_len(&g->config); j++) { // frozen: the same bits
            if (mygpt_trainer_is_trainable(tr, j))
                continue;
            mygpt_state_entry e;
            mygpt_state_dict_entry(&g->config, &g->params, j, &e);
            cr_expect_eq(memcmp(e.data, initial + (e.data - g->params_memory), e.numel * sizeof(float)), 0,
                         "config %d: frozen %s moved", configs, e.name);
        }
        mygpt_optimizer_free(&opt);
        free(initial);
        mygpt_trainer_free(tr);
        mygpt_gpt_free(g);
        free_case(&c);
        configs++;
    }
    free(line);
    fclose(f);
    if (golden_is_committed()) { // a truncated golden file fails
        cr_expect_geq(configs, TEST_SANITIZED ? 4 : 13);
        cr_expect_geq(lora_cases, 5);
    }
    cr_log_info("classify: %d of %d losses bit-exact; worst gradient %.3g, parameter %.3g x max(1, max|v|) (%d "
                "tensors judged against float64)", exact_losses, losses, worst_grad, worst_param, by_f64);
}

/* A small classifier (V 300: the bits do not depend on the vocabulary's size) after two
 * AdamW steps with every parameter frozen but the book's three (lora_rank > 0: but the
 * adapters), on `threads` threads: the gradients of the last step and the parameters, in
 * out_grads and out_params. */
static void train_small(mygpt_arch arch, int lora_rank, int threads, float **out_grads, float **out_params,
                        size_t *n)
{
    const mygpt_config cfg = {.vocab_size = 300, .embed_dim = 32, .num_heads = 4, .num_layers = 3,
                              .max_seq_len = 16, .arch = arch, .qkv_bias = 1, .num_classes = 2};
    enum { B = 4, T = 16 };
    int64_t ids[B * T], labels[B] = {1, 0, 0, 1};
    for (int i = 0; i < B * T; i++)
        ids[i] = (i * 37 + 11) % 300;
    omp_set_num_threads(threads);
    mygpt_error err = {0};
    mygpt_gpt *g;
    mygpt_trainer *tr;
    cr_assert_eq(mygpt_gpt_create(&g, &cfg, 5, &err), MYGPT_OK, "%s", err.message);
    mygpt_rng rng = {0};
    mygpt_rng_seed(&rng, 6);
    if (lora_rank > 0)
        cr_assert_eq(mygpt_lora_add(g, lora_rank, 2.0 * lora_rank, &rng, &err), MYGPT_OK, "%s", err.message);
    cr_assert_eq(mygpt_trainer_create(&tr, g, &err), MYGPT_OK);
    if (lora_rank > 0)
        cr_assert_eq(mygpt_trainer_freeze_for_lora(tr, &err), MYGPT_OK);
    else
        cr_assert_eq(mygpt_trainer_freeze_for_classification(tr, &err), MYGPT_OK);
    mygpt_optimizer opt;
    mygpt_adamw_init(&opt, lora_rank > 0 ? 1e-2 : 5e-5); // LoRA's B starts at zero: a step that moves it
    opt.weight_decay = 0.1;
    for (int step = 0; step < 2; step++) {
        float loss;
        cr_assert_eq(mygpt_trainer_zero_grad(tr, &err), MYGPT_OK);
        cr_assert_eq(mygpt_trainer_forward_last(tr, ids, labels, B, T, &loss, &err), MYGPT_OK, "%s", err.message);
        cr_assert_eq(mygpt_trainer_backward(tr, &err), MYGPT_OK);
        cr_assert_eq(mygpt_trainer_step(tr, &opt, &err), MYGPT_OK);
    }
    *n = g->num_parameters;
    *out_grads = malloc(*n * sizeof(float));
    *out_params = malloc(*n * sizeof(float));
    cr_assert(*out_grads && *out_params);
    memcpy(*out_grads, tr->grads_memory, *n * sizeof(float));
    memcpy(*out_params, g->params_memory, *n * sizeof(float));
    mygpt_optimizer_free(&opt);
    mygpt_trainer_free(tr);
    mygpt_gpt_free(g);
}

Test(classify, the_same_bits_for_1_2_and_3_threads)
{
    const int saved = omp_get_max_threads();
    for (int lora_rank = 0; lora_rank <= 8; lora_rank += 8) // chapter 6's freezing, then appendix E's
        for (int a = MYGPT_ARCH_LLMS_FROM_SCRATCH; a <= MYGPT_ARCH_GPT2; a++) {
            float *grads1, *params1;
            size_t n;
            train_small((mygpt_arch)a, lora_rank, 1, &grads1, &params1, &n);
            for (int threads = 2; threads <= 3; threads++) {
                float *grads, *params;
                size_t m;
                train_small((mygpt_arch)a, lora_rank, threads, &grads, &params, &m);
                cr_assert_eq(m, n);
                cr_expect_eq(memcmp(grads, grads1, n * sizeof(float)), 0, "%s, rank %d: %d threads' gradients differ",
                             mygpt_arch_name((mygpt_arch)a), lora_rank, threads);
                cr_expect_eq(memcmp(params, params1, n * sizeof(float)), 0,
                             "%s, rank %d: %d threads' parameters differ", mygpt_arch_name((mygpt_arch)a), lora_rank,
                             threads);
                free(grads);
                free(params);
            }
            free(grads1);
            free(params1);
        }
    omp_set_num_threads(saved);
}

/* The adapter tests' model: the book's GPTModel of two layers, C = 32 and 300 tokens */
static const mygpt_config ADAPTER_CFG = {.vocab_size = 300, .embed_dim = 32, .num_heads = 4, .num_layers = 2,
                                         .max_seq_len = 16, .arch = MYGPT_ARCH_LLMS_FROM_SCRATCH, .qkv_bias = 1};

/* A model of cfg from seed 3 with LoRA adapters of rank 4 and alpha 8 on every Linear, their
 * A drawn from seed 9 (B still zero) */
static mygpt_gpt *adapted_model(const mygpt_config *cfg)
{
    mygpt_error err = {0};
    mygpt_rng rng = {0};
    mygpt_rng_seed(&rng, 9);
    mygpt_gpt *g;
    cr_assert_eq(mygpt_gpt_create(&g, cfg, 3, &err), MYGPT_OK, "%s", err.message);
    cr_assert_eq(mygpt_lora_add(g, 4, 8, &rng, &err), MYGPT_OK, "%s", err.message);
    return g;
}

/* Every adapter's B as if trained (B starts at zero: the adapters would change nothing),
 * each row of the table with other values, so a mix-up of two Linears shows. */
static void fill_adapters_b(mygpt_gpt *g)
{
    for (int i = 0; i < MYGPT_NUM_PARAM_TENSORS; i++) {
        const char *name = mygpt_param_tensor_name(i);
        if (name[strlen(name) - 1] != 'B' || strcmp(name, "wte") == 0)
            continue;
        float *b = mygpt_param_tensor(&g->params, i);
        for (size_t k = 0; k < g->param_sizes[i]; k++)
            b[k] = 0.01f * (float)((int)((k * 7 + (size_t)i * 3) % 11) - 5);
    }
}

/* The logits (B, T, 2) of g on a fixed input, copied to out. */
static void small_logits(mygpt_gpt *g, float *out, size_t len)
{
    int64_t ids[2 * 16];
    for (int i = 0; i < 2 * 16; i++)
        ids[i] = (i * 53 + 7) % 300;
    mygpt_error err = {0};
    cr_assert_eq(mygpt_gpt_forward(g, ids, 2, 16, &err), MYGPT_OK, "%s", err.message);
    memcpy(out, g->acts.logits, len * sizeof *out);
}

/* Writes to `to` the safetensors file `from` with the first `what` in its header replaced by
 * `with` (the header padded again), or cut to `cut` bytes (cut > 0), or with the bytes at data
 * offsets `poke` and the one before set to 0xff (a float's two high bytes: NaN). */
static void broken_copy(const char *from, const char *to, const char *what, const char *with, long cut, long poke)
{
    FILE *f = fopen(from, "rb");
    cr_assert_not_null(f);
    static unsigned char buf[1 << 20];
    const size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    uint64_t hlen = 0;
    for (int b = 0; b < 8; b++)
        hlen |= (uint64_t)buf[b] << (8 * b);
    char header[8192];
    cr_assert_lt(hlen, sizeof header);
    memcpy(header, buf + 8, hlen);
    header[hlen] = '\0';
    char *at = what ? strstr(header, what) : NULL;
    char fixed[8400];
    if (at)
        snprintf(fixed, sizeof fixed, "%.*s%s%s", (int)(at - header), header, with, at + strlen(what));
    else
        snprintf(fixed, sizeof fixed, "%s", header);
    size_t flen = strlen(fixed);
    while (flen > 0 && fixed[flen - 1] == ' ') // the old padding, then new
        flen--;
    while (flen % 8)
        fixed[flen++] = ' ';
    unsigned char *data = buf + 8 + hlen;
    size_t dlen = n - 8 - hlen;
    if (poke >= 1)
        data[poke] = data[poke - 1] = 0xff;
    FILE *o = fopen(to, "wb");
    cr_assert_not_null(o);
    golden_write_safetensors_header(o, fixed, flen);
    fwrite(data, 1, cut > 0 ? (size_t)cut : dlen, o);
    cr_assert_eq(fclose(o), 0);
}

Test(classify, lora_adapters_save_alone_load_onto_their_model_and_merge)
{
    mygpt_config cfg = ADAPTER_CFG;
    cfg.num_classes = 2;
    enum { LOGITS = 2 * 16 * 2 };
    mygpt_error err = {0};
    mygpt_gpt *g = adapted_model(&cfg), *base, *other;
    mygpt_rng rng = {0};
    cr_expect_eq(mygpt_lora_add(g, 4, 8, &rng, &err), MYGPT_EINVAL, "adapters twice");
    fill_adapters_b(g);
    float with[LOGITS], loaded[LOGITS], merged[LOGITS], plain[LOGITS];
    small_logits(g, with, LOGITS);
    char dir[] = "/tmp/mygpt_lora_XXXXXX", path[64], full[64];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/adapters.safetensors", dir);
    snprintf(full, sizeof full, "%s/model.safetensors", dir);
    cr_expect_eq(mygpt_checkpoint_save(g, full, &err), MYGPT_EINVAL, "a model with adapters saves them alone");
    cr_assert_eq(mygpt_checkpoint_save_adapters(g, path, &err), MYGPT_OK, "%s", err.message);
    mygpt_gpt *none = NULL;
    cr_expect_eq(mygpt_checkpoint_load(&none, path, &err), MYGPT_EINVAL, "adapters are not a model");
    cr_expect(strstr(err.message, "adapters"), "%s", err.message);
    // the adapters onto their model (the same seed: the same weights) give the same bits
    cr_assert_eq(mygpt_gpt_create(&base, &cfg, 3, &err), MYGPT_OK);
    small_logits(base, plain, LOGITS);
    cr_assert_eq(mygpt_checkpoint_load_adapters(base, path, &err), MYGPT_OK, "%s", err.message);
    cr_expect_eq(base->config.lora_rank, 4);
    cr_expect_eq(base->config.lora_alpha, 8.0);
    small_logits(base, loaded, LOGITS);
    cr_expect_eq(memcmp(loaded, with, sizeof with), 0, "the loaded adapters compute other logits");
    cr_expect(memcmp(plain, with, sizeof with) != 0, "the adapters change nothing: the test proves nothing");
    // broken files: one error each, the model unchanged
    static const struct {
        const char *what, *with;
        long cut, poke;
        const char *says;
    } broken[] = {
        {"\"lora_rank\":\"4\"", "\"lora_rank\":\"1e20\"", 0, -1, "lora_rank"},
        {"\"lora_rank\":\"4\"", "\"lora_rank\":\"0\"", 0, -1, "lora_rank"},
        {",\"lora_alpha\":\"8\"", "", 0, -1, "not a file of LoRA adapters"},
        {"\"lora_rank\":\"4\"", "\"lora_rank\":\"2\"", 0, -1, "not F32 of shape"},
        {"\"dtype\":\"F32\"", "\"dtype\":\"F16\"", 0, -1, "not F32"},
        {"\"embed_dim\":\"32\"", "\"embed_dim\":\"48\"", 0, -1, "for another model"},
        {NULL, NULL, 100, -1, ""},
        {NULL, NULL, 0, 3, "non-finite"},
    };
    mygpt_gpt *victim;
    cr_assert_eq(mygpt_gpt_create(&victim, &cfg, 3, &err), MYGPT_OK);
    char bad[80];
    snprintf(bad, sizeof bad, "%s/broken.safetensors", dir);
    for (size_t i = 0; i < sizeof broken / sizeof broken[0]; i++) {
        broken_copy(path, bad, broken[i].what, broken[i].with, broken[i].cut, broken[i].poke);
        err.message[0] = '\0';
        cr_expect_neq(mygpt_checkpoint_load_adapters(victim, bad, &err), MYGPT_OK, "broken file %zu loads", i);
        cr_expect(strstr(err.message, broken[i].says) != NULL, "broken file %zu: '%s' lacks '%s'", i, err.message,
                  broken[i].says);
        cr_expect_eq(victim->config.lora_rank, 0, "broken file %zu changed the model", i);
    }
    unlink(bad);
    mygpt_gpt_free(victim);
    // onto another model: refused, the model unchanged
    mygpt_config wide = cfg;
    wide.embed_dim = 48;
    cr_assert_eq(mygpt_gpt_create(&other, &wide, 3, &err), MYGPT_OK);
    cr_expect_eq(mygpt_checkpoint_load_adapters(other, path, &err), MYGPT_EINVAL);
    cr_expect_eq(other->config.lora_rank, 0);
    // merged: a plain model computing the same logits within float32 rounding, saved as one
    cr_assert_eq(mygpt_lora_merge(base, &err), MYGPT_OK, "%s", err.message);
    cr_expect_eq(base->config.lora_rank, 0);
    mygpt_param_counts pc;
    cr_assert_eq(mygpt_param_count(&cfg, &pc, &err), MYGPT_OK);
    cr_expect_eq(base->num_parameters, pc.total, "the merged model keeps %zu floats", base->num_parameters);
    small_logits(base, merged, LOGITS);
    for (int i = 0; i < LOGITS; i++)
        cr_expect_leq(fabsf(merged[i] - with[i]), 1e-5f * fmaxf(1.0f, fabsf(with[i])), "logit %d: %g merged, %g", i,
                      merged[i], with[i]);
    cr_expect_eq(mygpt_lora_merge(base, &err), MYGPT_EINVAL, "nothing left to merge");
    cr_expect_eq(mygpt_checkpoint_save(base, full, &err), MYGPT_OK, "%s", err.message);
    unlink(full);
    unlink(path);
    rmdir(dir);
    mygpt_gpt_free(g);
    mygpt_gpt_free(base);
    mygpt_gpt_free(other);
}

/* A lora_rank or lora_alpha out of bounds is refused with the bounds as numbers (1 to
 * 1024, 1e-30 to 1e+30), never the names of the C macros that hold them */
Test(classify, lora_metadata_out_of_bounds_says_the_bounds_not_macro_names)
{
    mygpt_config cfg = ADAPTER_CFG;
    cfg.num_classes = 2;
    mygpt_error err = {0};
    mygpt_gpt *g = adapted_model(&cfg), *victim;
    char dir[] = "/tmp/mygpt_lora_meta_XXXXXX", path[80], bad[80];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/adapters.safetensors", dir);
    snprintf(bad, sizeof bad, "%s/broken.safetensors", dir);
    cr_assert_eq(mygpt_checkpoint_save_adapters(g, path, &err), MYGPT_OK, "%s", err.message);
    cr_assert_eq(mygpt_gpt_create(&victim, &cfg, 3, &err), MYGPT_OK);
    static const char *const cases[][3] = {
        {"\"lora_rank\":\"4\"", "\"lora_rank\":\"0\"", "lora_rank is not a whole number from 1 to 1024"},
        {"\"lora_alpha\":\"8\"", "\"lora_alpha\":\"0\"", "lora_alpha is not a number from 1e-30 to 1e+30"},
    };
    for (size_t i = 0; i < 2; i++) {
        broken_copy(path, bad, cases[i][0], cases[i][1], 0, -1);
        cr_expect_eq(mygpt_checkpoint_load_adapters(victim, bad, &err), MYGPT_EFORMAT, "case %zu loads", i);
        cr_expect(strstr(err.message, cases[i][2]) != NULL, "case %zu: '%s' lacks '%s'", i, err.message, cases[i][2]);
        cr_expect(strstr(err.message, "MYGPT_") == NULL, "case %zu names a macro: %s", i, err.message);
    }
    unlink(bad);
    unlink(path);
    rmdir(dir);
    mygpt_gpt_free(victim);
    mygpt_gpt_free(g);
}

/* Adapters whose values are finite (3e38) but whose merge overflows float32:
 * mygpt_lora_merge and the adapters' load refuse them, naming the weight, and leave the
 * model as it was (its adapters, or none, and every bit) */
Test(classify, adapters_whose_merge_is_not_finite_leave_the_model_unchanged)
{
    mygpt_error err = {0};
    mygpt_gpt *g = adapted_model(&ADAPTER_CFG), *base;
    for (int i = 0; i < MYGPT_NUM_PARAM_TENSORS; i++) { // one Linear's adapters: its B, and A already drawn
        const char *name = mygpt_param_tensor_name(i);
        if (strcmp(name, "fc1B") == 0 || strcmp(name, "fc1A") == 0)
            for (size_t k = 0; k < g->param_sizes[i]; k++)
                mygpt_param_tensor(&g->params, i)[k] = 3e38f;
    }
    const size_t n = g->num_parameters;
    float *before = malloc(n * sizeof *before);
    cr_assert_not_null(before);
    memcpy(before, g->params_memory, n * sizeof *before);
    cr_expect_eq(mygpt_lora_merge(g, &err), MYGPT_ERANGE, "%s", err.message);
    cr_expect(strstr(err.message, "trf_blocks.0.ff.layers.0.weight[0][0] a NaN or an infinity") != NULL, "%s",
              err.message);
    cr_expect_eq(g->config.lora_rank, 4, "the adapters were dropped");
    cr_expect(g->num_parameters == n && memcmp(g->params_memory, before, n * sizeof *before) == 0,
              "the model changed");
    // saved (finite values), then loaded onto their model: refused, the model as it was
    char dir[] = "/tmp/mygpt_lora_huge_XXXXXX", path[80];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/adapters.safetensors", dir);
    cr_assert_eq(mygpt_checkpoint_save_adapters(g, path, &err), MYGPT_OK, "%s", err.message);
    cr_assert_eq(mygpt_gpt_create(&base, &ADAPTER_CFG, 3, &err), MYGPT_OK);
    const size_t nb = base->num_parameters;
    float *plain = malloc(nb * sizeof *plain);
    cr_assert_not_null(plain);
    memcpy(plain, base->params_memory, nb * sizeof *plain);
    cr_expect_eq(mygpt_checkpoint_load_adapters(base, path, &err), MYGPT_ERANGE, "%s", err.message);
    cr_expect(strstr(err.message, path) && strstr(err.message, "ff.layers.0.weight"), "%s", err.message);
    cr_expect_eq(base->config.lora_rank, 0, "the adapters were added");
    cr_expect(base->num_parameters == nb && memcmp(base->params_memory, plain, nb * sizeof *plain) == 0,
              "the model changed");
    unlink(path);
    rmdir(dir);
    free(before);
    free(plain);
    mygpt_gpt_free(g);
    mygpt_gpt_free(base);
}

/* Adapters go on their base only, never on another model of the same shape, and merge
 * once: they record their base's checksum (every base tensor: a LayerNorm of the base
 * changed is another base), a merge records theirs; a file without lora_base is taken on
 * the sizes alone */
Test(classify, adapters_are_refused_on_another_base_and_where_they_are_merged)
{
    mygpt_error err = {0};
    mygpt_gpt *g = adapted_model(&ADAPTER_CFG), *same, *other, *shifted, *reloaded;
    fill_adapters_b(g);
    char dir[] = "/tmp/mygpt_lorabase_XXXXXX", path[80], old[80], bad[80], merged[80];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/adapters.safetensors", dir);
    snprintf(old, sizeof old, "%s/old.safetensors", dir);
    snprintf(bad, sizeof bad, "%s/bad.safetensors", dir);
    snprintf(merged, sizeof merged, "%s/merged.safetensors", dir);
    cr_assert_eq(mygpt_checkpoint_save_adapters(g, path, &err), MYGPT_OK, "%s", err.message);
    cr_assert_eq(mygpt_gpt_create(&same, &ADAPTER_CFG, 3, &err), MYGPT_OK);
    cr_assert_eq(mygpt_gpt_create(&other, &ADAPTER_CFG, 4, &err), MYGPT_OK);
    cr_assert_eq(mygpt_gpt_create(&shifted, &ADAPTER_CFG, 3, &err), MYGPT_OK);
    shifted->params.lnfw[0] += 0.5f;
    for (int k = 0; k < 2; k++) {
        mygpt_gpt *m = k ? shifted : other;
        cr_expect_eq(mygpt_checkpoint_load_adapters(m, path, &err), MYGPT_EINVAL, "onto another base (%d)", k);
        cr_expect(strstr(err.message, "the adapters were trained on another base model (checksum "), "%s", err.message);
        cr_expect_eq(m->config.lora_rank, 0, "a refused load changed the model");
    }
    cr_assert_eq(mygpt_checkpoint_load_adapters(same, path, &err), MYGPT_OK, "%s", err.message);
    // merged: in memory, and as its file reads back, the same adapters are not added again
    cr_assert_eq(mygpt_lora_merge(same, &err), MYGPT_OK, "%s", err.message);
    cr_expect_eq(mygpt_checkpoint_load_adapters(same, path, &err), MYGPT_EINVAL, "added twice");
    cr_expect(strstr(err.message, "the adapters are already merged into this model"), "%s", err.message);
    cr_assert_eq(mygpt_checkpoint_save(same, merged, &err), MYGPT_OK, "%s", err.message);
    cr_assert_eq(mygpt_checkpoint_load(&reloaded, merged, &err), MYGPT_OK, "%s", err.message);
    cr_expect_eq(mygpt_checkpoint_load_adapters(reloaded, path, &err), MYGPT_EINVAL, "merged file: added twice");
    cr_expect(strstr(err.message, "already merged"), "%s", err.message);
    cr_expect_eq(reloaded->config.lora_rank, 0);
    // a file without lora_base (written before it was recorded): the sizes alone decide
    size_t n = 0;
    FILE *f = fopen(path, "rb");
    static char text[1 << 16];
    n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    const char *at = strstr(text + 8, ",\"lora_base\":\"");
    cr_assert_not_null(at);
    char field[64];
    snprintf(field, sizeof field, "%.*s", (int)strlen(",\"lora_base\":\"") + 17, at);
    broken_copy(path, old, field, "", 0, -1);
    cr_expect_eq(mygpt_checkpoint_load_adapters(other, old, &err), MYGPT_OK, "an old file: %s", err.message);
    broken_copy(path, bad, field, ",\"lora_base\":\"12345\"", 0, -1);
    cr_expect_eq(mygpt_checkpoint_load_adapters(shifted, bad, &err), MYGPT_EFORMAT, "a broken lora_base");
    cr_expect(strstr(err.message, "not a checksum"), "%s", err.message);
    unlink(path);
    unlink(old);
    unlink(bad);
    unlink(merged);
    rmdir(dir);
    mygpt_gpt_free(g);
    mygpt_gpt_free(same);
    mygpt_gpt_free(other);
    mygpt_gpt_free(shifted);
    mygpt_gpt_free(reloaded);
}

/* Every alpha the writer writes the reader takes back (a subnormal's %.17g would not be):
 * every alpha within [MYGPT_LORA_ALPHA_MIN, MYGPT_LORA_ALPHA_MAX] reads back as the same
 * double, and one outside is refused before it is written */
Test(classify, lora_alpha_round_trips_at_its_bounds_and_is_refused_past_them)
{
    const mygpt_config cfg = {.vocab_size = 30, .embed_dim = 8, .num_heads = 2, .num_layers = 1, .max_seq_len = 4,
                              .arch = MYGPT_ARCH_LLMS_FROM_SCRATCH};
    const double fine[] = {MYGPT_LORA_ALPHA_MIN, MYGPT_LORA_ALPHA_MAX, 0.1, 1.0 / 3.0, 1.0000000000000002e-30,
                           9.999999999999998e29};
    char dir[] = "/tmp/mygpt_alpha_XXXXXX", path[64];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/adapters.safetensors", dir);
    mygpt_error err = {0};
    for (size_t i = 0; i < sizeof fine / sizeof fine[0]; i++) {
        mygpt_gpt *g, *base;
        cr_assert_eq(mygpt_gpt_create(&g, &cfg, 3, &err), MYGPT_OK);
        cr_assert_eq(mygpt_lora_add(g, i % 2 ? 1 : MYGPT_LORA_MAX_RANK, fine[i], NULL, &err), MYGPT_OK, "alpha %.17g: %s",
                     fine[i], err.message);
        cr_assert_eq(mygpt_checkpoint_save_adapters(g, path, &err), MYGPT_OK, "%s", err.message);
        cr_assert_eq(mygpt_gpt_create(&base, &cfg, 3, &err), MYGPT_OK);
        cr_expect_eq(mygpt_checkpoint_load_adapters(base, path, &err), MYGPT_OK, "alpha %.17g: %s", fine[i],
                     err.message);
        cr_expect_eq(base->config.lora_alpha, fine[i], "alpha %.17g read back as %.17g", fine[i],
                     base->config.lora_alpha);
        mygpt_gpt_free(g);
        mygpt_gpt_free(base);
    }
    const double past[] = {1e-310, 9.999999999999999e-31, 1.0000001e30, 1e300, 0.0, -1.0, NAN,
                           INFINITY};
    for (size_t i = 0; i < sizeof past / sizeof past[0]; i++) {
        mygpt_gpt *g;
        cr_assert_eq(mygpt_gpt_create(&g, &cfg, 3, &err), MYGPT_OK);
        cr_expect_eq(mygpt_lora_add(g, 4, past[i], NULL, &err), MYGPT_EINVAL, "alpha %g taken", past[i]);
        cr_expect(strstr(err.message, "lora_alpha must be a number from 1e-30 to 1e+30") != NULL, "%s", err.message);
        mygpt_gpt_free(g);
    }
    unlink(path);
    rmdir(dir);
}

Test(classify, a_checkpoint_keeps_the_classification_head)
{
    for (int a = MYGPT_ARCH_LLMS_FROM_SCRATCH; a <= MYGPT_ARCH_GPT2; a++) {
        float *grads, *params;
        size_t n;
        train_small((mygpt_arch)a, 0, 2, &grads, &params, &n);
        const mygpt_config cfg = {.vocab_size = 300, .embed_dim = 32, .num_heads = 4, .num_layers = 3,
                                  .max_seq_len = 16, .arch = (mygpt_arch)a, .qkv_bias = 1, .num_classes = 2};
        mygpt_error err = {0};
        mygpt_gpt *g, *back;
        cr_assert_eq(mygpt_gpt_alloc(&g, &cfg, &err), MYGPT_OK);
        memcpy(g->params_memory, params, n * sizeof(float));
        // the state_dict ends as PyTorch's: ..., out_head.weight (2, C), out_head.bias (2)
        mygpt_state_entry e;
        mygpt_state_dict_entry(&cfg, &g->params, mygpt_state_dict_len(&cfg) - 1, &e);
        cr_expect_str_eq(e.name, "out_head.bias");
        cr_expect_eq(e.numel, 2);
        mygpt_state_dict_entry(&cfg, &g->params, mygpt_state_dict_len(&cfg) - 2, &e);
        cr_expect_str_eq(e.name, "out_head.weight");
        cr_expect(e.shape[0] == 2 && e.shape[1] == 32);
        char dir[] = "/tmp/mygpt_classify_XXXXXX", path[64], json[64];
        cr_assert_not_null(mkdtemp(dir));
        snprintf(path, sizeof path, "%s/model.safetensors", dir);
        snprintf(json, sizeof json, "%s/config.json", dir);
        cr_assert_eq(mygpt_checkpoint_save(g, path, &err), MYGPT_OK, "%s", err.message);
        cr_assert_eq(mygpt_checkpoint_load(&back, path, &err), MYGPT_OK, "%s", err.message);
        cr_expect_eq(back->config.num_classes, 2, "%s: num_classes %d", mygpt_arch_name(cfg.arch),
                     back->config.num_classes);
        cr_assert_eq(back->num_parameters, n);
        cr_expect_eq(memcmp(back->params_memory, params, n * sizeof(float)), 0, "%s: the parameters differ",
                     mygpt_arch_name(cfg.arch));
        mygpt_gpt_free(back);
        mygpt_gpt_free(g);
        unlink(path);
        unlink(json);
        rmdir(dir);
        free(grads);
        free(params);
    }
}

Test(classify, bad_labels_and_a_language_model_are_refused)
{
    const mygpt_config lm = {.vocab_size = 30, .embed_dim = 8, .num_heads = 2, .num_layers = 1, .max_seq_len = 4,
                             .arch = MYGPT_ARCH_LLMS_FROM_SCRATCH};
    mygpt_config cls = lm;
    cls.num_classes = 2;
    int64_t ids[4] = {1, 2, 3, 4}, bad[1] = {2}, good[1] = {1};
    mygpt_error err = {0};
    mygpt_gpt *g;
    mygpt_trainer *tr;
    float loss;
    int correct;
    cr_assert_eq(mygpt_gpt_create(&g, &lm, 1, &err), MYGPT_OK);
    cr_expect_eq(mygpt_classifier_batch(g, ids, good, 1, 4, &loss, &correct, &err), MYGPT_EINVAL);
    mygpt_gpt_free(g);
    cr_assert_eq(mygpt_gpt_create(&g, &cls, 1, &err), MYGPT_OK);
    cr_assert_eq(mygpt_trainer_create(&tr, g, &err), MYGPT_OK);
    cr_expect_eq(mygpt_trainer_forward_last(tr, ids, bad, 1, 4, &loss, &err), MYGPT_ERANGE);
    cr_expect(strstr(err.message, "label 2"), "%s", err.message);
    cr_expect_eq(mygpt_trainer_backward(tr, &err), MYGPT_EINVAL, "no forward to go back through");
    cr_expect_eq(mygpt_classifier_batch(g, ids, bad, 1, 4, &loss, &correct, &err), MYGPT_ERANGE);
    cr_expect_eq(mygpt_classifier_batch(g, ids, good, 1, 4, NULL, &correct, &err), MYGPT_OK);
    cr_expect(correct == 0 || correct == 1);
    mygpt_trainer_free(tr);
    mygpt_gpt_free(g);
    cls.num_classes = -1;
    cr_expect_eq(mygpt_gpt_create(&g, &cls, 1, &err), MYGPT_EINVAL);
    cr_expect(strstr(err.message, "num_classes"), "%s", err.message);
}

/* The gradients a masked backward computes are the full backward's, bit for bit, however
 * far down it goes; what is frozen has none. */
Test(classify, a_masked_backward_gives_the_full_backwards_bits_for_what_trains)
{
    const mygpt_config cfg = {.vocab_size = 300, .embed_dim = 32, .num_heads = 4, .num_layers = 3,
                              .max_seq_len = 16, .arch = MYGPT_ARCH_LLMS_FROM_SCRATCH, .qkv_bias = 1,
                              .num_classes = 3};
    enum { B = 3, T = 10 };
    int64_t ids[B * T], labels[B] = {2, 0, 1};
    for (int i = 0; i < B * T; i++)
        ids[i] = (i * 53 + 7) % 300;
    mygpt_error err = {0};
    mygpt_gpt *g;
    mygpt_trainer *full, *part;
    cr_assert_eq(mygpt_gpt_create(&g, &cfg, 11, &err), MYGPT_OK, "%s", err.message);
    cr_assert_eq(mygpt_trainer_create(&full, g, &err), MYGPT_OK);
    cr_assert_eq(mygpt_trainer_create(&part, g, &err), MYGPT_OK);
    float loss_full, loss_part;
    cr_assert_eq(mygpt_trainer_forward_last(full, ids, labels, B, T, &loss_full, &err), MYGPT_OK);
    cr_assert_eq(mygpt_trainer_backward(full, &err), MYGPT_OK);
    // the middle block and the head; then the position embedding too (the backward goes to the bottom)
    static const char *const sets[2][3] = {{"trf_blocks.1.", "out_head.", NULL},
                                           {"trf_blocks.1.", "out_head.", "pos_emb."}};
    static const int named[3] = {16, 2, 1}; // a block of the book's model with qkv biases: 16 tensors
    for (int s = 0; s < 2; s++) {
        int count;
        cr_assert_eq(mygpt_trainer_set_trainable(part, "", 0, &count, &err), MYGPT_OK);
        cr_expect_eq(count, mygpt_state_dict_len(&cfg));
        for (int k = 0; k < 3 && sets[s][k]; k++) {
            cr_assert_eq(mygpt_trainer_set_trainable(part, sets[s][k], 1, &count, &err), MYGPT_OK);
            cr_expect_eq(count, named[k], "%s names %d tensors", sets[s][k], count);
        }
        cr_assert_eq(mygpt_trainer_zero_grad(part, &err), MYGPT_OK);
        cr_assert_eq(mygpt_trainer_forward_last(part, ids, labels, B, T, &loss_part, &err), MYGPT_OK);
        cr_expect_eq(memcmp(&loss_full, &loss_part, sizeof loss_full), 0);
        cr_assert_eq(mygpt_trainer_backward(part, &err), MYGPT_OK);
        for (int j = 0; j < mygpt_state_dict_len(&cfg); j++) {
            mygpt_state_entry ef, ep;
            mygpt_state_dict_entry(&cfg, &full->grads, j, &ef);
            mygpt_state_dict_entry(&cfg, &part->grads, j, &ep);
            if (mygpt_trainer_is_trainable(part, j)) {
                cr_expect_eq(memcmp(ef.data, ep.data, ef.numel * sizeof(float)), 0, "set %d: %s differs", s, ef.name);
            } else {
                for (size_t i = 0; i < ep.numel; i++)
                    cr_assert_eq(ep.data[i], 0.0f, "set %d: frozen %s has a gradient", s, ep.name);
            }
        }
    }
    // a prefix names whole parts of a name; one that names nothing, or none, is refused
    int count = 0;
    cr_expect_eq(mygpt_trainer_set_trainable(part, "trf_blocks.1", 1, &count, &err), MYGPT_OK);
    cr_expect_eq(count, 16, "trf_blocks.1 named %d tensors, not block 1's 16", count);
    cr_expect_eq(mygpt_trainer_set_trainable(part, "trf_blocks.", 1, &count, &err), MYGPT_OK);
    cr_expect_eq(count, 48);
    cr_expect_eq(mygpt_trainer_set_trainable(part, "trf_block", 1, &count, &err), MYGPT_EINVAL);
    cr_expect_eq(mygpt_trainer_set_trainable(part, "trf_blocks.3", 1, &count, &err), MYGPT_EINVAL);
    cr_expect_eq(mygpt_trainer_set_trainable(part, NULL, 1, &count, &err), MYGPT_EINVAL);
    mygpt_trainer_free(part);
    mygpt_trainer_free(full);
    mygpt_gpt_free(g);
    // the book's freezing needs a classification head to train
    mygpt_config lm = cfg;
    lm.num_classes = 0;
    cr_assert_eq(mygpt_gpt_create(&g, &lm, 11, &err), MYGPT_OK, "%s", err.message);
    cr_assert_eq(mygpt_trainer_create(&part, g, &err), MYGPT_OK);
    cr_expect_eq(mygpt_trainer_freeze_for_classification(part, &err), MYGPT_EINVAL);
    mygpt_trainer_free(part);
    mygpt_gpt_free(g);
}

/* A tied head (the course's, GPT-2's) is the token embedding, no Linear of its own: with
 * adapters the blocks' Linears get theirs and the head none; forward, backward and merge run
 * within the model's memory (the sanitizers see any read past it) and the merged model
 * computes what the adapters did. */
Test(classify, a_tied_head_gets_no_adapter)
{
    for (int a = MYGPT_ARCH_COURSE; a <= MYGPT_ARCH_GPT2; a += MYGPT_ARCH_GPT2 - MYGPT_ARCH_COURSE) {
        const mygpt_config cfg = {.vocab_size = 300, .embed_dim = 32, .num_heads = 4, .num_layers = 2,
                                  .max_seq_len = 16, .arch = (mygpt_arch)a, .qkv_bias = a == MYGPT_ARCH_GPT2};
        mygpt_error err = {0};
        mygpt_gpt *g;
        mygpt_trainer *tr;
        mygpt_rng rng = {0};
        mygpt_rng_seed(&rng, 2);
        cr_assert_eq(mygpt_gpt_create(&g, &cfg, 3, &err), MYGPT_OK, "%s", err.message);
        cr_assert_eq(mygpt_lora_add(g, 4, 4, &rng, &err), MYGPT_OK, "%s", err.message);
        cr_expect_eq(g->param_sizes[MYGPT_PARAM_lmA] + g->param_sizes[MYGPT_PARAM_lmB], 0, "%s: a head adapter",
                     mygpt_arch_name((mygpt_arch)a));
        fill_adapters_b(g);
        enum { B = 2, T = 16, V = 300 };
        int64_t ids[B * T], targets[B * T];
        for (int i = 0; i < B * T; i++)
            ids[i] = (i * 31 + 5) % V, targets[i] = (i * 17 + 2) % V;
        static float with[B * T * V];
        cr_assert_eq(mygpt_gpt_forward(g, ids, B, T, &err), MYGPT_OK, "%s", err.message);
        memcpy(with, g->acts.logits, sizeof with);
        float loss;
        cr_assert_eq(mygpt_trainer_create(&tr, g, &err), MYGPT_OK);
        cr_assert_eq(mygpt_trainer_freeze_for_lora(tr, &err), MYGPT_OK);
        cr_assert_eq(mygpt_trainer_forward(tr, ids, targets, B, T, &loss, &err), MYGPT_OK, "%s", err.message);
        cr_assert_eq(mygpt_trainer_backward(tr, &err), MYGPT_OK, "%s", err.message);
        cr_expect(isfinite(loss));
        float most = 0; // the adapters' gradients are there, the embedding's (frozen) zero
        for (size_t k = 0; k < g->param_sizes[MYGPT_PARAM_qA]; k++)
            most = fmaxf(most, fabsf(tr->grads.qA[k]));
        cr_expect_gt(most, 0.0f, "no gradient reached the first block's adapter");
        for (size_t k = 0; k < g->param_sizes[MYGPT_PARAM_wte]; k++)
            cr_assert_eq(tr->grads.wte[k], 0.0f, "the frozen embedding has a gradient");
        mygpt_trainer_free(tr);
        cr_assert_eq(mygpt_lora_merge(g, &err), MYGPT_OK, "%s", err.message);
        cr_assert_eq(mygpt_gpt_forward(g, ids, B, T, &err), MYGPT_OK);
        for (int i = 0; i < B * T * V; i++)
            cr_assert_leq(fabsf(g->acts.logits[i] - with[i]), 1e-5f * fmaxf(1.0f, fabsf(with[i])), "%s: logit %d",
                          mygpt_arch_name((mygpt_arch)a), i);
        mygpt_gpt_free(g);
    }
}


/* Exercise 7.4 on a GPT-2: the book's GPTModel holds GPT-2's head as out_head, a copy of
 * wte (load_weights_into_gpt), which replace_linear_with_lora wraps. Untying gives that
 * model: the same logits bit for bit, then a head adapter; the adapters saved from it
 * untie a GPT-2 they are loaded onto and give the same logits there. */
Test(classify, a_gpt2_head_untied_is_the_books_gptmodel_and_its_adapters_load_onto_gpt2)
{
    const mygpt_config cfg = {.vocab_size = 300, .embed_dim = 32, .num_heads = 4, .num_layers = 2,
                              .max_seq_len = 16, .arch = MYGPT_ARCH_GPT2, .qkv_bias = 1};
    enum { B = 2, T = 16, V = 300 };
    int64_t ids[B * T];
    for (int i = 0; i < B * T; i++)
        ids[i] = (i * 31 + 5) % V;
    static float tied[B * T * V], untied[B * T * V], with[B * T * V];
    mygpt_error err = {0};
    mygpt_gpt *g, *base;
    mygpt_rng rng = {0};
    mygpt_rng_seed(&rng, 4);
    cr_assert_eq(mygpt_gpt_create(&g, &cfg, 3, &err), MYGPT_OK, "%s", err.message);
    cr_assert_eq(mygpt_gpt_forward(g, ids, B, T, &err), MYGPT_OK, "%s", err.message);
    memcpy(tied, g->acts.logits, sizeof tied);
    const size_t tied_floats = g->num_parameters;
    cr_assert_eq(mygpt_lora_untie_head(g, &err), MYGPT_OK, "%s", err.message);
    cr_expect_eq(g->config.arch, MYGPT_ARCH_LLMS_FROM_SCRATCH);
    cr_expect_eq(g->config.qkv_bias, 1);
    cr_expect_eq(g->num_parameters, tied_floats + (size_t)V * 32, "out_head adds V C floats");
    cr_expect_eq(memcmp(g->params.lmw, g->params.wte, (size_t)V * 32 * sizeof(float)), 0, "out_head is wte's copy");
    cr_assert_eq(mygpt_gpt_forward(g, ids, B, T, &err), MYGPT_OK, "%s", err.message);
    memcpy(untied, g->acts.logits, sizeof untied);
    cr_expect_eq(memcmp(tied, untied, sizeof tied), 0, "untying changed the logits");
    cr_expect_eq(mygpt_lora_untie_head(g, &err), MYGPT_EINVAL, "untied twice");
    cr_expect(strstr(err.message, "llms-from-scratch"), "%s", err.message);
    cr_assert_eq(mygpt_lora_add(g, 2, 4, &rng, &err), MYGPT_OK, "%s", err.message);
    cr_expect_eq(g->param_sizes[MYGPT_PARAM_lmA], (size_t)32 * 2, "the untied head has no adapter");
    cr_expect_eq(mygpt_lora_untie_head(g, &err), MYGPT_EINVAL, "a model with adapters untied");
    fill_adapters_b(g);
    cr_assert_eq(mygpt_gpt_forward(g, ids, B, T, &err), MYGPT_OK);
    memcpy(with, g->acts.logits, sizeof with);
    char dir[] = "/tmp/mygpt_untie_XXXXXX", path[64];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/adapters.safetensors", dir);
    cr_assert_eq(mygpt_checkpoint_save_adapters(g, path, &err), MYGPT_OK, "%s", err.message);
    // onto a GPT-2 of the same weights: untied, then the adapters, the same bits
    cr_assert_eq(mygpt_gpt_create(&base, &cfg, 3, &err), MYGPT_OK);
    cr_assert_eq(mygpt_checkpoint_load_adapters(base, path, &err), MYGPT_OK, "%s", err.message);
    cr_expect_eq(base->config.arch, MYGPT_ARCH_LLMS_FROM_SCRATCH);
    cr_assert_eq(mygpt_gpt_forward(base, ids, B, T, &err), MYGPT_OK);
    cr_expect_eq(memcmp(base->acts.logits, with, sizeof with), 0, "the adapters on a GPT-2 compute other logits");
    cr_expect(memcmp(untied, with, sizeof with) != 0, "the adapters change nothing: the test proves nothing");
    mygpt_gpt_free(base);
    // a classifier, and the book's GPTModel, have no tied head to untie
    mygpt_config other = cfg;
    other.num_classes = 2;
    cr_assert_eq(mygpt_gpt_create(&base, &other, 3, &err), MYGPT_OK);
    cr_expect_eq(mygpt_lora_untie_head(base, &err), MYGPT_EINVAL, "a classifier untied");
    cr_expect_eq(base->config.arch, MYGPT_ARCH_GPT2, "a refused untie changed the model");
    mygpt_gpt_free(base);
    unlink(path);
    rmdir(dir);
    mygpt_gpt_free(g);
}
