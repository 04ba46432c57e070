/*
 * test_arch.c - other people's GPTs against tools/reference_llms.py (goldens from
 * tools/gen_arch_goldens.py): Raschka's GPTModel and GPT-2, their parameters bit for bit,
 * logits, loss and gradients in eval and train mode (dropout), 30-step curves, F.dropout's
 * masks, and the same bits for any thread count.
 */
#define _GNU_SOURCE /* memmem */
#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <omp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "golden.h"
#include "mygpt/checkpoint.h"
#include "mygpt/data.h"
#include "mygpt/generate.h"
#include "mygpt/gpt.h"
#include "mygpt/layers.h"
#include "mygpt/rng.h"
#include "mygpt/train.h"

/* ---- dropout's masks -------------------------------------------------------------- */

Test(dropout, masks_are_pytorchs_over_chains_of_calls)
{
    golden_reader gold = golden_reader_must_open("dropout.txt");
    char *line;
    mygpt_rng rng = {0};
    double p = 0;
    int chains = 0, calls = 0;
    while ((line = golden_read(&gold))) {
        unsigned long long seed;
        if (sscanf(line, "chain %llu %lf", &seed, &p) == 2) {
            mygpt_rng_seed(&rng, seed);
            chains++;
            continue;
        }
        size_t n;
        char hex[1100], scale_hex[16];
        cr_assert_eq(sscanf(line, "keep %zu %1099s scale %15s", &n, hex, scale_hex), 3, "line %ld", gold.lineno);
        cr_assert_eq(strlen(hex), (n + 7) / 8 * 2);
        uint8_t *keep = malloc(n);
        float *x = malloc(n * sizeof *x);
        cr_assert_eq(mygpt_dropout_mask(&rng, keep, n, p, NULL), MYGPT_OK);
        for (size_t i = 0; i < n; i++)
            x[i] = 1.0f;
        mygpt_dropout_apply(x, x, keep, n, p);
        const float scale = golden_unhex32(scale_hex);
        for (size_t i = 0; i < n; i++) {
            unsigned byte;
            cr_assert_eq(sscanf(hex + 2 * (i / 8), "%2x", &byte), 1);
            const int want = (byte >> (i % 8)) & 1;
            cr_assert_eq(keep[i], want, "line %ld: element %zu of %zu: keep %d, PyTorch %d", gold.lineno, i, n, keep[i],
                         want);
            if (want)
                cr_assert(x[i] == scale, "line %ld: kept value %a, PyTorch %a", gold.lineno, (double)x[i],
                          (double)scale);
            else
                cr_assert(x[i] == 0.0f);
        }
        free(keep);
        free(x);
        calls++;
    }
    golden_reader_close(&gold);
    cr_assert_geq(chains, 20);
    cr_assert_gt(calls, chains);
}

Test(dropout, bad_probabilities_are_refused)
{
    mygpt_rng rng = {0};
    uint8_t keep[1];
    mygpt_error err = {0};
    cr_expect_eq(mygpt_dropout_mask(&rng, keep, 1, 1.0, &err), MYGPT_EINVAL);
    cr_expect_eq(mygpt_dropout_mask(&rng, keep, 1, -0.1, &err), MYGPT_EINVAL);
    cr_expect_eq(mygpt_dropout_mask(&rng, keep, 1, NAN, &err), MYGPT_EINVAL);
    const mygpt_config course = {4, 4, 2, 1, 8, MYGPT_ARCH_COURSE, 0, 0.1};
    cr_expect_eq(mygpt_config_validate(&course, &err), MYGPT_EINVAL, "the course's model has no dropout");
    const mygpt_config book = {4, 4, 2, 1, 8, MYGPT_ARCH_LLMS_FROM_SCRATCH, 0, 1.5};
    cr_expect_eq(mygpt_config_validate(&book, &err), MYGPT_EINVAL);
}

/* ---- the tanh GELU ----------------------------------------------------------------- */

Test(arch, tanh_gelu_and_its_gradient_are_pytorchs_bits)
{
    golden_reader gold = golden_reader_must_open("arch.txt");
    char *line;
    size_t n = 0;
    float *v[4] = {NULL};
    const char *keys[4] = {"x ", "dy ", "y ", "dx "};
    while ((line = golden_read(&gold)) && !v[3]) {
        if (sscanf(line, "gelu %zu", &n) == 1)
            continue;
        for (int k = 0; k < 4; k++)
            if (n && strncmp(line, keys[k], strlen(keys[k])) == 0) {
                v[k] = malloc(n * sizeof(float));
                cr_assert_eq(golden_parse_f32(line + strlen(keys[k]), v[k], n), n);
            }
    }
    cr_assert(n > 0 && v[3], "no gelu block in arch.txt");
    float *y = malloc(n * sizeof *y), *dx = calloc(n, sizeof *dx);
    mygpt_gelu_tanh_forward(y, v[0], n);
    mygpt_gelu_tanh_backward(dx, v[0], v[1], n);
    for (size_t i = 0; i < n; i++) {
        cr_assert(memcmp(&y[i], &v[2][i], sizeof *y) == 0, "GELU(%a) = %a, PyTorch %a", (double)v[0][i], (double)y[i],
                  (double)v[2][i]);
        cr_assert(memcmp(&dx[i], &v[3][i], sizeof *dx) == 0, "GELU'(%a) dy = %a, PyTorch %a", (double)v[0][i],
                  (double)dx[i], (double)v[3][i]);
    }
    for (int k = 0; k < 4; k++)
        free(v[k]);
    free(y);
    free(dx);
    golden_reader_close(&gold);
}

/* ---- the cases ----------------------------------------------------------------------- */

typedef struct arch_case {
    unsigned long long seed;
    mygpt_config cfg;
    int B, T;
    int64_t *ids, *targets;
} arch_case;

static int parse_case(const char *line, arch_case *c)
{
    char arch[32];
    arch_case n = {0};
    if (sscanf(line, "case %31s %llu %d %d %d %d %d %d %lf %d %d", arch, &n.seed, &n.cfg.vocab_size,
               &n.cfg.embed_dim, &n.cfg.num_heads, &n.cfg.num_layers, &n.cfg.max_seq_len, &n.cfg.qkv_bias,
               &n.cfg.dropout, &n.B, &n.T) != 11)
        return 0;
    *c = n;
    cr_assert_eq(mygpt_arch_parse(arch, &c->cfg.arch, NULL), MYGPT_OK);
    c->ids = malloc((size_t)c->B * c->T * sizeof *c->ids);
    c->targets = malloc((size_t)c->B * c->T * sizeof *c->targets);
    return 1;
}

/* a tensor's gradients against PyTorch's: within 1e-5 * max(1, max|g|) each (every value
 * when the golden has them, else the largest magnitude); returns the worst ratio */
static double check_grad(const char *line, const char *tag, const mygpt_config *cfg, const float *grads)
{
    char name[16], maxhex[16];
    int used;
    cr_assert_eq(sscanf(line + strlen(tag) + 1, "%15s %15s %n", name, maxhex, &used), 2);
    size_t off, numel;
    cr_assert(golden_param_span(cfg, name, &off, &numel), "unknown tensor %s", name);
    const double gmax = golden_unhex32(maxhex), tol = 1e-5 * fmax(1.0, gmax);
    const char *vals = line + strlen(tag) + 1 + used;
    double worst = 0;
    if (*vals) {
        float *want = malloc(numel * sizeof *want);
        cr_assert_eq(golden_parse_f32(vals, want, numel), numel, "%s %s", tag, name);
        for (size_t i = 0; i < numel; i++) {
            const double d = fabs((double)grads[off + i] - want[i]);
            worst = fmax(worst, d / tol);
            cr_assert(d <= tol, "%s %s[%zu]: %.9g vs PyTorch %.9g", tag, name, i, grads[off + i], want[i]);
        }
        free(want);
    } else {
        double m = 0;
        for (size_t i = 0; i < numel; i++) { /* not fmax: gcc 12 for aarch64 fails vectorising it */
            const double a = fabs(grads[off + i]);
            m = a > m ? a : m;
        }
        cr_assert(fabs(m - gmax) <= tol, "%s %s: max |g| %.9g vs PyTorch %.9g", tag, name, m, gmax);
        worst = fabs(m - gmax) / tol;
    }
    return worst;
}

Test(arch, parameters_logits_losses_and_gradients_follow_pytorch)
{
    golden_reader gold = golden_reader_must_open("arch.txt");
    char *line;
    arch_case c = {0};
    mygpt_gpt *g = NULL;
    mygpt_trainer *tr = NULL;
    mygpt_rng rng = {0};
    int cases = 0, per_arch[3] = {0};
    double worst = 0;
    while ((line = golden_read(&gold))) {
        const size_t N = (size_t)c.B * c.T;
        mygpt_error err = {0};
        if (strncmp(line, "curve ", 6) == 0)
            break;
        if (parse_case(line, &c)) {
            mygpt_rng_seed(&rng, c.seed);
            cr_assert_eq(mygpt_gpt_create_from(&g, &c.cfg, &rng, &err), MYGPT_OK, "%s", err.message);
        } else if (strncmp(line, "ids ", 4) == 0) {
            cr_assert_eq(golden_parse_i64(line + 4, c.ids, N), N);
        } else if (strncmp(line, "targets ", 8) == 0) {
            cr_assert_eq(golden_parse_i64(line + 8, c.targets, N), N);
        } else if (strncmp(line, "param ", 6) == 0) {
            char name[16];
            size_t numel, off, have;
            unsigned long long sum;
            cr_assert_eq(sscanf(line, "param %15s %zu %llu", name, &numel, &sum), 3);
            cr_assert(golden_param_span(&g->config, name, &off, &have), "%s: no tensor %s", mygpt_arch_name(c.cfg.arch), name);
            cr_assert_eq(have, numel, "%s: %s has %zu floats, PyTorch %zu", mygpt_arch_name(c.cfg.arch), name, have, numel);
            cr_assert_eq(golden_checksum(g->params_memory + off, numel), sum, "line %ld: %s's values differ",
                         gold.lineno, name);
        } else if (strncmp(line, "logits ", 7) == 0) {
            const size_t n = N * (size_t)c.cfg.vocab_size;
            float *want = malloc(n * sizeof *want);
            cr_assert_eq(golden_parse_f32(line + 7, want, n), n);
            cr_assert_eq(mygpt_gpt_forward(g, c.ids, c.B, c.T, &err), MYGPT_OK, "%s", err.message);
            for (size_t i = 0; i < n; i++) {
                const double d = fabs((double)g->acts.logits[i] - want[i]), tol = 1e-5 * fmax(1.0, fabs(want[i]));
                worst = fmax(worst, d / tol);
                cr_assert(d <= tol, "line %ld: logit %zu: %.9g vs PyTorch %.9g", gold.lineno, i, g->acts.logits[i],
                          want[i]);
            }
            free(want);
            cr_assert_eq(mygpt_trainer_create(&tr, g, &err), MYGPT_OK);
        } else if (strncmp(line, "loss ", 5) == 0 || strncmp(line, "trainloss ", 10) == 0) {
            const int train = line[0] == 't';
            // train mode draws from the generator as it is after building the model
            tr->dropout_rng = train ? &rng : NULL;
            float loss;
            cr_assert_eq(mygpt_trainer_zero_grad(tr, &err), MYGPT_OK);
            cr_assert_eq(mygpt_trainer_forward(tr, c.ids, c.targets, c.B, c.T, &loss, &err), MYGPT_OK, "%s", err.message);
            cr_assert_eq(mygpt_trainer_backward(tr, &err), MYGPT_OK);
            const float want = golden_unhex32(line + (train ? 10 : 5));
            cr_assert(fabs(loss - want) <= 1e-5 * fmax(1.0, fabs(want)), "line %ld: loss %.9g vs PyTorch %.9g",
                      gold.lineno, loss, want);
        } else if (strncmp(line, "grad ", 5) == 0) {
            worst = fmax(worst, check_grad(line, "grad", &g->config, tr->grads_memory));
        } else if (strncmp(line, "traingrad ", 10) == 0) {
            worst = fmax(worst, check_grad(line, "traingrad", &g->config, tr->grads_memory));
        } else if (strcmp(line, "end") == 0) {
            mygpt_trainer_free(tr);
            mygpt_gpt_free(g);
            tr = NULL;
            g = NULL;
            free(c.ids);
            free(c.targets);
            per_arch[c.cfg.arch]++;
            cases++;
        }
    }
    golden_reader_close(&gold);
    cr_log_info("worst difference from PyTorch: %.2f of the tolerance", worst);
    cr_assert_geq(per_arch[MYGPT_ARCH_LLMS_FROM_SCRATCH], 10);
    cr_assert_geq(per_arch[MYGPT_ARCH_GPT2], 10);
}

Test(arch, thirty_steps_in_train_mode_follow_pytorch)
{
    golden_reader gold = golden_reader_must_open("arch.txt");
    char *line;
    int curves = 0;
    mygpt_config cfg = {0};
    char arch[32], opt[16];
    double lr, wd;
    unsigned long long seed;
    int B = 0, T = 0;
    int64_t *ids = NULL, *tg = NULL;
    while ((line = golden_read(&gold))) {
        if (sscanf(line, "curve %31s %15s %lf %lf %llu %d %d %d %d %d %d %lf %d %d", arch, opt, &lr, &wd, &seed,
                   &cfg.vocab_size, &cfg.embed_dim, &cfg.num_heads, &cfg.num_layers, &cfg.max_seq_len, &cfg.qkv_bias,
                   &cfg.dropout, &B, &T) == 14) {
            cr_assert_eq(mygpt_arch_parse(arch, &cfg.arch, NULL), MYGPT_OK);
            ids = realloc(ids, (size_t)B * T * sizeof *ids);
            tg = realloc(tg, (size_t)B * T * sizeof *tg);
        } else if (strncmp(line, "ids ", 4) == 0 && ids) {
            golden_parse_i64(line + 4, ids, (size_t)B * T);
        } else if (strncmp(line, "targets ", 8) == 0 && tg) {
            golden_parse_i64(line + 8, tg, (size_t)B * T);
        } else if (strncmp(line, "losses ", 7) == 0) {
            float want[30];
            cr_assert_eq(golden_parse_f32(line + 7, want, 30), 30);
            mygpt_rng rng = {0};
            mygpt_rng_seed(&rng, seed);
            mygpt_gpt *g;
            mygpt_trainer *tr;
            mygpt_error err = {0};
            cr_assert_eq(mygpt_gpt_create_from(&g, &cfg, &rng, &err), MYGPT_OK);
            cr_assert_eq(mygpt_trainer_create(&tr, g, &err), MYGPT_OK);
            tr->dropout_rng = &rng;
            mygpt_optimizer o;
            if (strcmp(opt, "adamw") == 0)
                mygpt_adamw_init(&o, lr);
            else
                mygpt_sgd_init(&o, lr);
            o.weight_decay = wd;
            for (int s = 0; s < 30; s++) {
                float loss;
                cr_assert_eq(mygpt_trainer_zero_grad(tr, &err), MYGPT_OK);
                cr_assert_eq(mygpt_trainer_forward(tr, ids, tg, B, T, &loss, &err), MYGPT_OK);
                cr_assert_eq(mygpt_trainer_backward(tr, &err), MYGPT_OK);
                cr_assert_eq(mygpt_optimizer_step(&o, g->params_memory, tr->grads_memory, g->num_parameters, &err),
                             MYGPT_OK);
                cr_assert(fabs(loss - want[s]) <= 1e-4 * fabs(want[s]), "%s %s step %d: loss %.9g vs PyTorch %.9g",
                          arch, opt, s, loss, want[s]);
            }
            mygpt_optimizer_free(&o);
            mygpt_trainer_free(tr);
            mygpt_gpt_free(g);
            curves++;
        }
    }
    free(ids);
    free(tg);
    golden_reader_close(&gold);
    cr_assert_geq(curves, 4);
}

/* ---- every thread count ----------------------------------------------------------------- */

/* logits and train-mode gradients of one model, the fast kernels and the naive ones */
static void run_threads(mygpt_arch arch, int threads, int naive, float **logits, float **grads, size_t *nl, size_t *ng)
{
    const mygpt_config cfg = {97, 48, 4, 2, 40, arch, 1, 0.1};
    const int B = 3, T = 37;
    int64_t ids[3 * 37], tg[3 * 37];
    for (int i = 0; i < B * T; i++)
        ids[i] = (i * 31 + 7) % 97, tg[i] = (i * 17 + 3) % 97;
    omp_set_num_threads(threads);
    mygpt_rng rng = {0};
    mygpt_rng_seed(&rng, 5);
    mygpt_gpt *g;
    mygpt_trainer *tr;
    cr_assert_eq(mygpt_gpt_create_from(&g, &cfg, &rng, NULL), MYGPT_OK);
    g->impl = naive ? MYGPT_IMPL_REFERENCE : MYGPT_IMPL_FAST;
    cr_assert_eq(mygpt_gpt_forward(g, ids, B, T, NULL), MYGPT_OK);
    *nl = (size_t)B * T * cfg.vocab_size;
    *logits = malloc(*nl * sizeof **logits);
    memcpy(*logits, g->acts.logits, *nl * sizeof **logits);
    cr_assert_eq(mygpt_trainer_create(&tr, g, NULL), MYGPT_OK);
    tr->dropout_rng = &rng;
    float loss;
    cr_assert_eq(mygpt_trainer_forward(tr, ids, tg, B, T, &loss, NULL), MYGPT_OK);
    cr_assert_eq(mygpt_trainer_backward(tr, NULL), MYGPT_OK);
    *ng = g->num_parameters;
    *grads = malloc(*ng * sizeof **grads);
    memcpy(*grads, tr->grads_memory, *ng * sizeof **grads);
    mygpt_trainer_free(tr);
    mygpt_gpt_free(g);
}

Test(arch, the_same_bits_for_1_2_3_and_8_threads)
{
    const int counts[] = {1, 2, 3, 8};
    for (int a = MYGPT_ARCH_COURSE + 1; a <= MYGPT_ARCH_GPT2; a++)
        for (int naive = 0; naive < 2; naive++) {
            float *l0, *g0;
            size_t nl, ng;
            run_threads((mygpt_arch)a, 1, naive, &l0, &g0, &nl, &ng);
            for (int i = 1; i < 4; i++) {
                float *l, *g;
                run_threads((mygpt_arch)a, counts[i], naive, &l, &g, &nl, &ng);
                cr_assert(memcmp(l, l0, nl * sizeof *l) == 0, "%s: logits differ on %d threads",
                          mygpt_arch_name((mygpt_arch)a), counts[i]);
                cr_assert(memcmp(g, g0, ng * sizeof *g) == 0, "%s: gradients differ on %d threads",
                          mygpt_arch_name((mygpt_arch)a), counts[i]);
                free(l);
                free(g);
            }
            free(l0);
            free(g0);
        }
}

/* ---- checkpoints: Hugging Face's GPT-2 and the book's state_dict ---------------------------- */



/* A model read from a golden file has the reference's parameters and greedy tokens. */
Test(arch_checkpoint, reference_files_load_and_generate_the_references_tokens)
{
    golden_reader gold = golden_reader_must_open("arch.txt");
    char *line, name[64], arch[32], path[4096];
    mygpt_gpt *g = NULL;
    int files = 0;
    while ((line = golden_read(&gold))) {
        unsigned long long seed;
        mygpt_error err = {0};
        if (sscanf(line, "file %63s %31s %llu", name, arch, &seed) == 3) {
            mygpt_gpt_free(g);
            snprintf(path, sizeof path, "%s/%s", golden_dir(), name);
            cr_assert_eq(mygpt_checkpoint_load(&g, path, &err), MYGPT_OK, "%s: %s", name, err.message);
            cr_assert_str_eq(mygpt_arch_name(g->config.arch), arch, "%s", name);
            files++;
        } else if (g && strncmp(line, "param ", 6) == 0) {
            char field[16];
            size_t numel, off, have;
            unsigned long long sum;
            cr_assert_eq(sscanf(line, "param %15s %zu %llu", field, &numel, &sum), 3);
            cr_assert(golden_param_span(&g->config, field, &off, &have), "%s: no %s", name, field);
            cr_assert_eq(have, numel, "%s: %s", name, field);
            cr_assert_eq(golden_checksum(g->params_memory + off, numel), sum, "%s: %s differs", name, field);
        } else if (g && strncmp(line, "greedy ", 7) == 0) {
            int64_t want[64], got[64];
            const char *arrow = strstr(line, "->");
            const size_t nw = golden_parse_i64(arrow + 2, want, 64);
            const int64_t prompt[3] = {5, 17, 3};
            const mygpt_generation greedy = {.max_new = (int)nw - 3, .sampling = {0}, .eos = -1, .use_cache = 1};
            int n = 0;
            cr_assert_eq(mygpt_generate(g, NULL, prompt, 3, &greedy, got, &n, &err), MYGPT_OK, "%s", err.message);
            cr_assert_eq((size_t)n, nw);
            for (size_t i = 0; i < nw; i++)
                cr_assert_eq(got[i], want[i], "%s: token %zu is %lld, the reference's %lld", name, i, (long long)got[i],
                             (long long)want[i]);
        }
    }
    mygpt_gpt_free(g);
    golden_reader_close(&gold);
    cr_assert_eq(files, 3);
}

/* mygpt's saves of each architecture: the names a reader of that architecture expects,
 * config.json beside a gpt2, and the same model back. */
Test(arch_checkpoint, saves_round_trip_under_each_architectures_names)
{
    char dir[] = "/tmp/mygpt_arch_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    for (int a = MYGPT_ARCH_COURSE; a <= MYGPT_ARCH_GPT2; a++) {
        const mygpt_config cfg = {40, 24, 3, 2, 12, (mygpt_arch)a, 1, a ? 0.1 : 0.0};
        mygpt_gpt *g, *back;
        mygpt_error err = {0};
        char path[256], conf[256];
        snprintf(path, sizeof path, "%s/%s.safetensors", dir, mygpt_arch_name((mygpt_arch)a));
        snprintf(conf, sizeof conf, "%s/config.json", dir);
        cr_assert_eq(mygpt_gpt_create(&g, &cfg, 3, &err), MYGPT_OK);
        cr_assert_eq(mygpt_checkpoint_save(g, path, &err), MYGPT_OK, "%s", err.message);
        cr_assert_eq(access(conf, F_OK) == 0, a == MYGPT_ARCH_GPT2, "config.json beside a %s save",
                     mygpt_arch_name((mygpt_arch)a));
        cr_assert_eq(mygpt_checkpoint_load(&back, path, &err), MYGPT_OK, "%s", err.message);
        cr_assert_eq(back->config.arch, cfg.arch);
        cr_assert_eq(back->config.num_heads, 3);
        cr_assert_eq(back->num_parameters, g->num_parameters);
        cr_assert(memcmp(back->params_memory, g->params_memory, g->num_parameters * sizeof(float)) == 0);
        char *file;
        size_t len;
        cr_assert_eq(mygpt_read_file(path, &file, &len, NULL), MYGPT_OK);
        const char *expect = a == MYGPT_ARCH_COURSE ? "\"blocks.1.attn.W_o.weight\""
                             : a == MYGPT_ARCH_LLMS_FROM_SCRATCH ? "\"trf_blocks.1.att.out_proj.bias\""
                                                                 : "\"h.1.attn.c_attn.weight\":{\"dtype\":\"F32\",\"shape\":[24,72]";
        cr_assert_not_null(memmem(file, len, expect, strlen(expect)), "%s lacks %s", path, expect);
        free(file);
        mygpt_gpt_free(back);
        // a config.json that describes another model is not replaced
        if (a == MYGPT_ARCH_GPT2) {
            FILE *c = fopen(conf, "w");
            fputs("{\"n_head\": 2}\n", c);
            fclose(c);
            cr_assert_eq(mygpt_checkpoint_save(g, path, &err), MYGPT_EINVAL);
            unlink(conf);
        }
        unlink(path);
        mygpt_gpt_free(g);
    }
    rmdir(dir);
}

/* A safetensors file of zero-filled F32 tensors: names and shapes (0 for a vector's
 * second size), with __metadata__ meta (a JSON object's insides, or NULL). */
static void write_zeros(const char *path, const char *meta, int n, const char *const *names, const int64_t (*shapes)[2])
{
    char header[8192];
    size_t at = 0, off = 0;
    at += (size_t)snprintf(header + at, sizeof header - at, "{\"__metadata__\":{%s}", meta ? meta : "\"format\":\"pt\"");
    for (int i = 0; i < n; i++) {
        const size_t bytes = (size_t)shapes[i][0] * (size_t)(shapes[i][1] ? shapes[i][1] : 1) * 4;
        if (shapes[i][1])
            at += (size_t)snprintf(header + at, sizeof header - at,
                                   ",\"%s\":{\"dtype\":\"F32\",\"shape\":[%lld,%lld],\"data_offsets\":[%zu,%zu]}", names[i],
                                   (long long)shapes[i][0], (long long)shapes[i][1], off, off + bytes);
        else
            at += (size_t)snprintf(header + at, sizeof header - at,
                                   ",\"%s\":{\"dtype\":\"F32\",\"shape\":[%lld],\"data_offsets\":[%zu,%zu]}", names[i],
                                   (long long)shapes[i][0], off, off + bytes);
        off += bytes;
    }
    at += (size_t)snprintf(header + at, sizeof header - at, "}");
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    golden_write_safetensors_header(f, header, at);
    for (size_t i = 0; i < off; i++)
        fputc(0, f);
    fclose(f);
}

/* A GPT-2 of one layer, C = 64 (one head of 64), V = 10, 8 positions, in Hugging Face's
 * layout: its tensors, which the cases below spoil one at a time. */
#define HF_TENSORS 14
static const char *const HF_NAMES[HF_TENSORS] = {
    "wte.weight", "wpe.weight", "h.0.ln_1.weight", "h.0.ln_1.bias", "h.0.attn.c_attn.weight", "h.0.attn.c_attn.bias",
    "h.0.attn.c_proj.weight", "h.0.attn.c_proj.bias", "h.0.ln_2.weight", "h.0.ln_2.bias", "h.0.mlp.c_fc.weight",
    "h.0.mlp.c_fc.bias", "h.0.mlp.c_proj.weight", "h.0.mlp.c_proj.bias"};
static const int64_t HF_SHAPES[HF_TENSORS + 2][2] = {
    {10, 64}, {8, 64}, {64, 0}, {64, 0}, {64, 192}, {192, 0}, {64, 64}, {64, 0}, {64, 0}, {64, 0}, {64, 256}, {256, 0},
    {256, 64}, {64, 0}};

Test(arch_checkpoint, hostile_files_of_the_new_layouts_are_refused_with_the_reason)
{
    char dir[] = "/tmp/mygpt_hostile_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    const char *names[HF_TENSORS + 3];
    int64_t shapes[HF_TENSORS + 3][2];
    mygpt_gpt *g = NULL;
    mygpt_error err = {0};
    // the file as it should be loads (ln_f added: a complete model)
    const char *lnf[2] = {"ln_f.weight", "ln_f.bias"};
    int n = 0;
    for (int i = 0; i < HF_TENSORS; i++, n++) {
        names[n] = HF_NAMES[i];
        shapes[n][0] = HF_SHAPES[i][0];
        shapes[n][1] = HF_SHAPES[i][1];
    }
    for (int i = 0; i < 2; i++, n++) {
        names[n] = lnf[i];
        shapes[n][0] = 64;
        shapes[n][1] = 0;
    }
    write_zeros(path, NULL, n, names, (const int64_t(*)[2])shapes);
    cr_assert_eq(mygpt_checkpoint_load(&g, path, &err), MYGPT_OK, "%s", err.message);
    cr_expect_eq(g->config.arch, MYGPT_ARCH_GPT2);
    cr_expect_eq(g->config.num_heads, 1, "heads of 64");
    mygpt_gpt_free(g);
    struct {
        int tensor;          /* which to spoil */
        int64_t r, c;        /* its new shape */
        const char *rename;  /* or its new name */
        const char *meta;
        const char *msg;
    } cases[] = {
        {4, 64, 191, NULL, NULL, "h.0.attn.c_attn.weight does not have the shape"},
        {4, 192, 64, NULL, NULL, "h.0.attn.c_attn.weight does not have the shape"}, // nn.Linear's layout, not Conv1D's
        {0, 10, 64, "lm_head.weight", NULL, "no token embedding names another layout"},
        {1, 8, 32, NULL, NULL, "the token and position embeddings are missing or misshapen"},
        {13, 64, 0, "h.0.mlp.c_proj.extra", NULL, "h.0.mlp.c_proj.bias is missing"},
        {1, 8, 64, "transformer.wte.weight", NULL, "named twice"},
        {2, 64, 0, NULL, "\"num_heads\":\"3\"", "embed_dim=64 is not divisible by num_heads=3"},
        {0, 10, 64, NULL, "\"arch\":\"gpt5\"", "unknown architecture"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const char *nm[HF_TENSORS + 3];
        int64_t sh[HF_TENSORS + 3][2];
        memcpy(nm, names, sizeof nm);
        memcpy(sh, shapes, sizeof sh);
        const int t = cases[k].tensor;
        sh[t][0] = cases[k].r;
        sh[t][1] = cases[k].c;
        if (cases[k].rename)
            nm[t] = cases[k].rename;
        write_zeros(path, cases[k].meta, n, nm, (const int64_t(*)[2])sh);
        memset(&err, 0, sizeof err);
        g = NULL;
        cr_expect_neq(mygpt_checkpoint_load(&g, path, &err), MYGPT_OK, "case %zu loaded", k);
        cr_expect_null(g);
        cr_expect(strstr(err.message, cases[k].msg) != NULL, "case %zu: '%s' lacks '%s'", k, err.message, cases[k].msg);
        mygpt_gpt_free(g);
    }
    // an lm_head that is not the token embedding: GPT-2's head is tied
    {
        const char *nm[HF_TENSORS + 3];
        int64_t sh[HF_TENSORS + 3][2];
        memcpy(nm, names, sizeof nm);
        memcpy(sh, shapes, sizeof sh);
        nm[n] = "lm_head.weight";
        sh[n][0] = 10;
        sh[n][1] = 64;
        write_zeros(path, NULL, n + 1, nm, (const int64_t(*)[2])sh); // zeros: equal to wte's zeros, accepted
        cr_expect_eq(mygpt_checkpoint_load(&g, path, &err), MYGPT_OK, "%s", err.message);
        mygpt_gpt_free(g);
        g = NULL;
        sh[n][0] = 5; // another size: not the token embedding
        write_zeros(path, NULL, n + 1, nm, (const int64_t(*)[2])sh);
        cr_expect_neq(mygpt_checkpoint_load(&g, path, &err), MYGPT_OK);
        cr_expect(strstr(err.message, "lm_head that is not the token embedding") != NULL, "%s", err.message);
        sh[n][0] = 64; // the same bytes, transposed: PyTorch's load_state_dict refuses the shape
        sh[n][1] = 10;
        write_zeros(path, NULL, n + 1, nm, (const int64_t(*)[2])sh);
        cr_expect_neq(mygpt_checkpoint_load(&g, path, &err), MYGPT_OK, "a transposed lm_head was accepted");
        cr_expect(strstr(err.message, "lm_head that is not the token embedding") != NULL, "%s", err.message);
    }
    // the book's state_dict without its out_head
    {
        const char *nm[3] = {"tok_emb.weight", "pos_emb.weight", "trf_blocks.0.norm1.scale"};
        const int64_t sh[3][2] = {{10, 64}, {8, 64}, {64, 0}};
        write_zeros(path, NULL, 3, nm, sh);
        cr_expect_neq(mygpt_checkpoint_load(&g, path, &err), MYGPT_OK);
        cr_expect(strstr(err.message, "the file holds 3") != NULL, "%s", err.message);
    }
    unlink(path);
    rmdir(dir);
}

/* A small file whose __metadata__ claims a huge model is refused before anything is
 * allocated for it (under an address-space limit of 512 MB where no sanitizer reserves
 * its shadow); a NUL or control byte in a name and a second __metadata__ are refused;
 * non-finite weights are refused, named. */

Test(arch_checkpoint, lying_metadata_duplicate_metadata_nul_names_and_nan_weights_are_refused)
{
    char dir[] = "/tmp/mygpt_lies_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/m.safetensors", dir);
    mygpt_gpt *g = NULL;
    mygpt_error err = {0};
    const char *one[1] = {"token_embedding.embedding.weight"};
    const int64_t small[1][2] = {{4, 4}};
    // item 1: vocab 4194304 x embed 512 would be 8 GB of parameters
    write_zeros(path,
                "\"vocab_size\":\"4194304\",\"embed_dim\":\"512\",\"num_heads\":\"8\",\"num_layers\":\"12\","
                "\"max_seq_len\":\"1024\"",
                1, one, small);
#if !defined(__SANITIZE_ADDRESS__) && !defined(__has_feature)
    const struct rlimit cap = {512u << 20, 512u << 20};
    cr_assert_eq(setrlimit(RLIMIT_AS, &cap), 0); // this test's own process (Criterion forks one per test)
#endif
    cr_expect_eq(mygpt_checkpoint_load(&g, path, &err), MYGPT_EFORMAT, "%s", err.message);
    cr_expect_null(g);
    cr_expect(strstr(err.message, "the file holds 1") != NULL, "%s", err.message);
    // item 8: a second __metadata__
    write_zeros(path, "\"format\":\"pt\"},\"__metadata__\":{\"format\":\"pt\"", 1, one, small);
    cr_expect_eq(mygpt_checkpoint_load(&g, path, &err), MYGPT_EFORMAT);
    cr_expect(strstr(err.message, "__metadata__ appears twice") != NULL, "%s", err.message);
    // one of mygpt's keys given two values in __metadata__ (which would count?)
    write_zeros(path, "\"embed_dim\":\"4\",\"embed_dim\":\"8\"", 1, one, small);
    cr_expect_eq(mygpt_checkpoint_load(&g, path, &err), MYGPT_EFORMAT);
    cr_expect(strstr(err.message, "gives one of mygpt's keys two values") != NULL, "%s", err.message);
    // item 8: a NUL inside a name (the bytes patched after writing)
    const char *patched[1] = {"wte.weightXtrailing"};
    write_zeros(path, NULL, 1, patched, small);
    char *file;
    size_t len;
    cr_assert_eq(mygpt_read_file(path, &file, &len, NULL), MYGPT_OK);
    char *x = memmem(file, len, "weightXtrailing", 15);
    cr_assert_not_null(x);
    x[6] = '\0';
    FILE *f = fopen(path, "wb");
    fwrite(file, 1, len, f);
    fclose(f);
    free(file);
    cr_expect_eq(mygpt_checkpoint_load(&g, path, &err), MYGPT_EFORMAT);
    cr_expect(strstr(err.message, "control character (or NUL)") != NULL, "%s", err.message);
    // item 9: a checkpoint with one NaN (the saver writes none: its bytes patched in) is
    // refused naming the tensor
    const mygpt_config cfg = {10, 8, 2, 1, 4, MYGPT_ARCH_GPT2, 1, 0.0};
    cr_assert_eq(mygpt_gpt_create(&g, &cfg, 1, &err), MYGPT_OK);
    const float marker = 1234.5678f, nan = NAN;
    g->params.fc2b[3] = marker;
    cr_assert_eq(mygpt_checkpoint_save(g, path, &err), MYGPT_OK, "%s", err.message);
    mygpt_gpt_free(g);
    g = NULL;
    cr_assert_eq(mygpt_read_file(path, &file, &len, NULL), MYGPT_OK);
    x = memmem(file, len, &marker, sizeof marker);
    cr_assert_not_null(x);
    memcpy(x, &nan, sizeof nan);
    f = fopen(path, "wb");
    cr_assert(f && fwrite(file, 1, len, f) == len && fclose(f) == 0);
    free(file);
    cr_expect_eq(mygpt_checkpoint_load(&g, path, &err), MYGPT_EFORMAT);
    cr_expect(strstr(err.message, "h.0.mlp.c_proj.bias holds a non-finite value") != NULL, "%s", err.message);
    char conf[300];
    snprintf(conf, sizeof conf, "%s/config.json", dir);
    unlink(conf);
    unlink(path);
    rmdir(dir);
}

/* A save never replaces a symbolic link, a directory or a device; a path in a missing
 * directory is refused before anything is written; two processes saving to one path both
 * succeed, the file is whole (one of the two models) and no temporary file is left
 * behind. */

/* Files in dir (not . or ..), other than `except` when given: what a save left behind. */
static int files_in(const char *dir, const char *except)
{
    int n = 0;
    DIR *d = opendir(dir);
    cr_assert_not_null(d, "cannot list %s", dir);
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.' && !(except && strcmp(e->d_name, except) == 0);
    closedir(d);
    return n;
}

Test(arch_checkpoint, saves_keep_links_devices_and_races_safe)
{
    char dir[] = "/tmp/mygpt_saves_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[256], link_path[256], target[256];
    snprintf(path, sizeof path, "%s/m.safetensors", dir);
    snprintf(link_path, sizeof link_path, "%s/link.safetensors", dir);
    snprintf(target, sizeof target, "%s/target", dir);
    const mygpt_config cfg = {30, 8, 2, 1, 6};
    mygpt_gpt *a, *b, *back = NULL;
    mygpt_error err = {0};
    cr_assert_eq(mygpt_gpt_create(&a, &cfg, 1, &err), MYGPT_OK);
    cr_assert_eq(mygpt_gpt_create(&b, &cfg, 2, &err), MYGPT_OK);
    // a symbolic link stays a link, its target untouched
    cr_assert_eq(symlink(target, link_path), 0);
    cr_expect_eq(mygpt_checkpoint_save(a, link_path, &err), MYGPT_EINVAL);
    cr_expect(strstr(err.message, "symbolic link") != NULL, "%s", err.message);
    struct stat st;
    cr_expect(lstat(link_path, &st) == 0 && S_ISLNK(st.st_mode));
    cr_expect(access(target, F_OK) != 0, "the link's target was created");
    // a device stays a device
    cr_expect_eq(mygpt_checkpoint_save(a, "/dev/null", &err), MYGPT_EINVAL);
    cr_expect(stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode));
    // a directory, and a path whose directory is missing
    cr_expect_eq(mygpt_checkpoint_save(a, dir, &err), MYGPT_EINVAL);
    char missing[300];
    snprintf(missing, sizeof missing, "%s/no/such/dir.safetensors", dir);
    cr_expect_neq(mygpt_checkpoint_check_path(missing, &err), MYGPT_OK);
    cr_expect(strstr(err.message, "No such file or directory") != NULL, "%s", err.message);
    // two processes race to one path, 20 times: every save succeeds, the file is whole
    for (int round = 0; round < 20; round++) {
        pid_t kids[2];
        for (int k = 0; k < 2; k++)
            if ((kids[k] = fork()) == 0)
                _exit(mygpt_checkpoint_save(k ? b : a, path, NULL) == MYGPT_OK ? 0 : 1);
        for (int k = 0; k < 2; k++) {
            int status;
            cr_assert_eq(waitpid(kids[k], &status, 0), kids[k]);
            cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "round %d: a save failed", round);
        }
        cr_assert_eq(mygpt_checkpoint_load(&back, path, &err), MYGPT_OK, "round %d: %s", round, err.message);
        const size_t bytes = a->num_parameters * sizeof(float);
        cr_expect(memcmp(back->params_memory, a->params_memory, bytes) == 0 ||
                      memcmp(back->params_memory, b->params_memory, bytes) == 0,
                  "round %d: the file is neither model", round);
        mygpt_gpt_free(back);
        back = NULL;
    }
    const int left = files_in(dir, NULL); // only m.safetensors and the link: no m.safetensors.XXXXXX
    cr_expect_eq(left, 2, "files left in %s: %d", dir, left);
    unlink(path);
    unlink(link_path);
    rmdir(dir);
    mygpt_gpt_free(a);
    mygpt_gpt_free(b);
}

/* A save that hits the file-size limit (EFBIG) says so, names the path, leaves no
 * temporary file and keeps the old checkpoint as it was. */
Test(arch_checkpoint, a_full_disk_or_size_limit_keeps_the_old_file_and_says_why, .timeout = 60)
{
    char dir[] = "/tmp/mygpt_efbig_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/m.safetensors", dir);
    const mygpt_config small = {10, 8, 2, 1, 4}, big = {5000, 64, 2, 2, 64};
    mygpt_gpt *a, *b, *back = NULL;
    mygpt_error err = {0};
    cr_assert_eq(mygpt_gpt_create(&a, &small, 1, &err), MYGPT_OK);
    cr_assert_eq(mygpt_gpt_create(&b, &big, 2, &err), MYGPT_OK);
    cr_assert_eq(mygpt_checkpoint_save(a, path, &err), MYGPT_OK);
    signal(SIGXFSZ, SIG_IGN); // the write then fails with EFBIG instead of a signal
    const struct rlimit limit = {64 << 10, 64 << 10};
    struct rlimit was;
    cr_assert_eq(getrlimit(RLIMIT_FSIZE, &was), 0);
    cr_assert_eq(setrlimit(RLIMIT_FSIZE, &limit), 0); // this test's own process
    cr_expect_eq(mygpt_checkpoint_save(b, path, &err), MYGPT_EIO);
    setrlimit(RLIMIT_FSIZE, &was);
    cr_expect(strstr(err.message, path) != NULL && strstr(err.message, "File too large") != NULL, "%s", err.message);
    cr_assert_eq(mygpt_checkpoint_load(&back, path, &err), MYGPT_OK, "%s", err.message);
    cr_expect(back->num_parameters == a->num_parameters &&
              memcmp(back->params_memory, a->params_memory, a->num_parameters * sizeof(float)) == 0,
              "the old checkpoint changed");
    const int left = files_in(dir, NULL);
    cr_expect_eq(left, 1, "a temporary file was left");
    mygpt_gpt_free(back);
    mygpt_gpt_free(a);
    mygpt_gpt_free(b);
    unlink(path);
    rmdir(dir);
}
