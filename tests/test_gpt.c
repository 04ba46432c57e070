/*
 * test_gpt.c - the GPT against the PyTorch reference (tests/golden/model.txt from
 * tools/gen_model_goldens.py): parameters bit for bit, logits within 1e-5 relative;
 * identical bits for any thread count; the fast matmul equals the naive one; the
 * chapter's parameter counts; and every bad input is an error, not a crash.
 */
#include <criterion/criterion.h>
#include <limits.h>
#include <math.h>
#include <omp.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "golden.h"
#include "kernels/cpu.h"
#include "kernel_sets.h"
#include "kernels/matmul.h"
#include "kernels/attention.h"
#include "base/parallel.h"
#include "base/simd.h"
#include "mygpt.h"
#include "mygpt/gpt.h"
#include "mygpt/llama2c_sample.h"
#include "mygpt/sp_tokenizer.h"
#include "mygpt/layers.h"
#include "mygpt/train.h"

typedef struct golden_model {
    uint64_t seed;
    mygpt_config cfg;
    int B, T;
    int64_t *ids;
    int nparam;              /* tensors the golden lists, by name (golden_param_span) */
    char names[MYGPT_NUM_PARAM_TENSORS][16];
    uint64_t sums[MYGPT_NUM_PARAM_TENSORS];
    size_t numel[MYGPT_NUM_PARAM_TENSORS];
    float *logits;
} golden_model;

/* Reads the next configuration block; returns 0 at end of file. */
static int read_model(FILE *f, golden_model *g)
{
    char *line = NULL;
    size_t cap = 0;
    long lineno = 0;
    int nparam = 0, got = 0;
    memset(g, 0, sizeof *g);
    while (golden_next_line(f, &line, &cap, &lineno) >= 0) {
        if (strncmp(line, "config ", 7) == 0) {
            unsigned long long seed;
            sscanf(line + 7, "%llu %d %d %d %d %d %d %d", &seed, &g->cfg.vocab_size,
                   &g->cfg.embed_dim, &g->cfg.num_heads, &g->cfg.num_layers, &g->cfg.max_seq_len,
                   &g->B, &g->T);
            g->seed = seed;
            got = 1;
        } else if (strncmp(line, "ids ", 4) == 0) {
            g->ids = malloc((size_t)g->B * g->T * sizeof *g->ids);
            golden_parse_i64(line + 4, g->ids, (size_t)g->B * g->T);
        } else if (strncmp(line, "param ", 6) == 0) {
            unsigned long long n, sum;
            cr_assert_lt(nparam, MYGPT_NUM_PARAM_TENSORS);
            sscanf(line + 6, "%15s %llu %llu", g->names[nparam], &n, &sum);
            g->numel[nparam] = n;
            g->sums[nparam++] = sum;
            g->nparam = nparam;
        } else if (strncmp(line, "logits ", 7) == 0) {
            size_t n = (size_t)g->B * g->T * g->cfg.vocab_size;
            g->logits = malloc(n * sizeof *g->logits);
            cr_assert_eq(golden_parse_f32(line + 7, g->logits, n), n);
        } else if (strcmp(line, "end") == 0) {
            break;
        }
    }
    free(line);
    return got;
}

static void free_model(golden_model *g)
{
    free(g->ids);
    free(g->logits);
}

/* max over elements of |got - ref| / max(1, |ref|) */
static double max_rel_diff(const float *got, const float *ref, size_t n)
{
    double worst = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)got[i] - (double)ref[i]) / fmax(1.0, fabs((double)ref[i]));
        if (!(d <= worst))
            worst = isnan(d) ? INFINITY : d;
    }
    return worst;
}

Test(gpt_parity, parameters_bit_exact_and_logits_within_1e5)
{
    FILE *f = golden_open("model.txt");
    cr_assert_not_null(f, "missing tests/golden/model.txt");
    golden_model g;
    int configs = 0;
    while (read_model(f, &g)) {
        mygpt_gpt *gpt;
        mygpt_error err = {0};
        cr_assert_eq(mygpt_gpt_create(&gpt, &g.cfg, g.seed, &err), MYGPT_OK, "%s", err.message);
        size_t covered = 0;
        for (int i = 0; i < g.nparam; i++) {
            size_t off, n;
            cr_assert(golden_param_span(&g.cfg, g.names[i], &off, &n), "unknown tensor %s", g.names[i]);
            cr_expect_eq(n, g.numel[i], "config %d tensor %s: size", configs, g.names[i]);
            cr_expect_eq(golden_checksum(gpt->params_memory + off, n), g.sums[i],
                         "config %d (seed %llu): %s differs from PyTorch", configs, (unsigned long long)g.seed,
                         g.names[i]);
            covered += n;
        }
        cr_expect_eq(covered, gpt->num_parameters, "config %d: the golden covers %zu of %zu parameters", configs,
                     covered, gpt->num_parameters);
        cr_assert_eq(mygpt_gpt_forward(gpt, g.ids, g.B, g.T, &err), MYGPT_OK, "%s", err.message);
        size_t n = (size_t)g.B * g.T * g.cfg.vocab_size;
        double d = max_rel_diff(gpt->acts.logits, g.logits, n);
        cr_expect_leq(d, 1e-5, "config %d (V=%d C=%d h=%d N=%d B=%d T=%d): logits differ by %g",
                      configs, g.cfg.vocab_size, g.cfg.embed_dim, g.cfg.num_heads,
                      g.cfg.num_layers, g.B, g.T, d);
        mygpt_gpt_free(gpt);
        free_model(&g);
        configs++;
    }
    cr_expect_geq(configs, 12, "only %d configurations in the golden file", configs);
    fclose(f);
}

/* Runs config `which` of model.txt under each thread count; all logits bit-equal. */
Test(gpt_threads, logits_identical_for_1_2_3_8_threads)
{
    FILE *f = golden_open("model.txt");
    cr_assert_not_null(f);
    golden_model g;
    for (int i = 0; i < 4; i++) { // config 3: V65 C16 h4 N3, B2 T32
        cr_assert(read_model(f, &g));
        if (i < 3)
            free_model(&g);
    }
    fclose(f);
    const int threads[] = {1, 2, 3, 8};
    float *first = NULL;
    const size_t n = (size_t)g.B * g.T * g.cfg.vocab_size;
    for (int k = 0; k < 4; k++) {
        omp_set_num_threads(threads[k]);
        mygpt_gpt *gpt;
        cr_assert_eq(mygpt_gpt_create(&gpt, &g.cfg, g.seed, NULL), MYGPT_OK);
        cr_assert_eq(mygpt_gpt_forward(gpt, g.ids, g.B, g.T, NULL), MYGPT_OK);
        if (!first) {
            first = malloc(n * sizeof *first);
            memcpy(first, gpt->acts.logits, n * sizeof *first);
        } else {
            cr_expect(memcmp(first, gpt->acts.logits, n * sizeof *first) == 0,
                      "logits with %d threads differ from 1 thread", threads[k]);
        }
        mygpt_gpt_free(gpt);
    }
    free(first);
    free_model(&g);
}

Test(gpt_kernels, fast_matmul_equals_naive)
{
    const int shapes[][3] = {{1, 4, 4}, {5, 8, 3}, {17, 33, 65}, {64, 128, 512}, {7, 1, 9}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        const size_t N = (size_t)shapes[s][0];
        const int C = shapes[s][1], OC = shapes[s][2];
        float *x = malloc(N * C * sizeof *x), *w = malloc((size_t)OC * C * sizeof *w);
        float *b = malloc((size_t)OC * sizeof *b);
        float *o1 = malloc(N * OC * sizeof *o1), *o2 = malloc(N * OC * sizeof *o2);
        mygpt_rng r = {0};
        mygpt_rng_seed(&r, s);
        mygpt_normal_(&r, x, N * C, 0, 1, NULL);
        mygpt_normal_(&r, w, (size_t)OC * C, 0, 1, NULL);
        mygpt_normal_(&r, b, (size_t)OC, 0, 1, NULL);
        for (int with_bias = 0; with_bias < 2; with_bias++) {
            mygpt_matmul_naive(o1, x, w, with_bias ? b : NULL, N, C, OC);
            cr_assert_eq(mygpt_matmul(o2, x, w, with_bias ? b : NULL, N, C, OC, NULL), MYGPT_OK);
            /* fused vs unfused rounding, blocked vs sequential sums: float32 noise */
            cr_expect_leq(max_rel_diff(o2, o1, N * OC), 1e-5, "shape %zu", s);
        }
        free(x); free(w); free(b); free(o1); free(o2);
    }
}

/* Two models *a and *b of cfg made from the same seed (the same weights), and the ids to run
 * them on: ids[i] = (i * step) % V for i < n */
static void twin_models(const mygpt_config *cfg, uint64_t seed, int64_t *ids, int n, int step, mygpt_gpt **a,
                        mygpt_gpt **b)
{
    for (int i = 0; i < n; i++)
        ids[i] = (i * step) % cfg->vocab_size;
    cr_assert_eq(mygpt_gpt_create(a, cfg, seed, NULL), MYGPT_OK);
    cr_assert_eq(mygpt_gpt_create(b, cfg, seed, NULL), MYGPT_OK);
}

Test(gpt_kernels, naive_model_agrees_with_fast_model)
{
    const mygpt_config cfg = {97, 48, 6, 2, 20};
    int64_t ids[2 * 20];
    mygpt_gpt *fast, *naive;
    twin_models(&cfg, 5, ids, 2 * 20, 37, &fast, &naive);
    naive->impl = MYGPT_IMPL_REFERENCE;
    cr_assert_eq(mygpt_gpt_forward(fast, ids, 2, 20, NULL), MYGPT_OK);
    cr_assert_eq(mygpt_gpt_forward(naive, ids, 2, 20, NULL), MYGPT_OK);
    cr_expect_leq(max_rel_diff(fast->acts.logits, naive->acts.logits, 2 * 20 * 97), 1e-5);
    mygpt_gpt_free(fast);
    mygpt_gpt_free(naive);
}

Test(gpt_acts, activations_are_reused_and_resized)
{
    const mygpt_config cfg = {11, 8, 2, 2, 16};
    int64_t ids[3 * 16];
    mygpt_gpt *a, *b;
    twin_models(&cfg, 9, ids, 3 * 16, 5, &a, &b);
    cr_assert_eq(mygpt_gpt_forward(a, ids, 3, 16, NULL), MYGPT_OK); // large first
    cr_assert_eq(mygpt_gpt_forward(a, ids, 1, 5, NULL), MYGPT_OK);  // then smaller, reused
    cr_assert_eq(mygpt_gpt_forward(b, ids, 1, 5, NULL), MYGPT_OK);  // fresh
    cr_expect(memcmp(a->acts.logits, b->acts.logits, 5 * 11 * sizeof(float)) == 0);
    cr_assert_eq(mygpt_gpt_forward(b, ids, 3, 16, NULL), MYGPT_OK); // grows
    mygpt_gpt_free(a);
    mygpt_gpt_free(b);
}

static uint64_t total_params(int V, int C, int h, int N, int maxT)
{
    mygpt_config cfg = {V, C, h, N, maxT};
    mygpt_param_counts pc;
    cr_assert_eq(mygpt_param_count(&cfg, &pc, NULL), MYGPT_OK);
    cr_expect_eq(pc.total, pc.token_embedding + pc.position_embedding + pc.blocks +
                               pc.final_layernorm + pc.head);
    return pc.total;
}

Test(gpt_counts, the_chapter_figures)
{
    cr_expect_eq(total_params(4, 4, 2, 2, 64), 736);
    cr_expect_eq(total_params(4, 8, 2, 2, 64), 2240);
    cr_expect_eq(total_params(4, 4, 2, 4, 64), 1192);
    cr_expect_eq(total_params(4, 4, 2, 2, 8), 512);
    /* GPT-2 small. Document 000 (exercise 3) prints 124,412,160, but its own formula
     * V C + maxT C + N (12 C^2 + 9 C) + 2 C gives 124,402,944, and so does PyTorch
     * counting the model (tools/reference_gpt.py): see chapters/ERRATA.md. */
    cr_expect_eq(total_params(50257, 768, 12, 12, 1024), 124402944);
    mygpt_config cfg = {4, 4, 2, 2, 64};
    mygpt_param_counts pc;
    mygpt_param_count(&cfg, &pc, NULL);
    cr_expect_eq(pc.token_embedding, 16);
    cr_expect_eq(pc.position_embedding, 256);
    cr_expect_eq(pc.per_block, 228);
    cr_expect_eq(pc.blocks, 456);
    cr_expect_eq(pc.final_layernorm, 8);
    cr_expect_eq(pc.head, 0);
    mygpt_gpt *g;
    cr_assert_eq(mygpt_gpt_create(&g, &cfg, 0, NULL), MYGPT_OK);
    cr_expect_eq(g->num_parameters, 736, "the built model holds exactly the counted parameters");
    mygpt_gpt_free(g);
}

Test(gpt_errors, bad_configurations)
{
    const struct { mygpt_config cfg; mygpt_status st; const char *msg; } cases[] = {
        {{4, 6, 4, 2, 64}, MYGPT_EINVAL, "embed_dim=6 is not divisible by num_heads=4"},
        {{0, 4, 2, 2, 64}, MYGPT_EINVAL, "vocab_size must be at least 1, got 0"},
        {{4, -4, 2, 2, 64}, MYGPT_EINVAL, "embed_dim must be at least 1"},
        {{4, 4, 0, 2, 64}, MYGPT_EINVAL, "num_heads must be at least 1"},
        {{4, 4, 2, -1, 64}, MYGPT_EINVAL, "num_layers must be at least 1"},
        {{4, 4, 2, 2, 0}, MYGPT_EINVAL, "max_seq_len must be at least 1"},
        {{4, 100000000, 2, 2, 64}, MYGPT_EOVERFLOW, "larger than the supported"},
        {{16000000, 16000000, 1, 16000000, 16000000}, MYGPT_EOVERFLOW, "overflow"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mygpt_gpt *g = (mygpt_gpt *)1;
        mygpt_error err = {0};
        cr_expect_eq(mygpt_gpt_create(&g, &cases[i].cfg, 0, &err), cases[i].st, "case %zu", i);
        cr_expect_null(g, "case %zu: no model on failure", i);
        cr_expect(strstr(err.message, cases[i].msg) != NULL, "case %zu: message '%s'", i,
                  err.message);
    }
}

Test(gpt_errors, bad_inputs_to_forward)
{
    mygpt_config cfg = {4, 4, 2, 2, 8};
    mygpt_gpt *g;
    mygpt_error err = {0};
    cr_assert_eq(mygpt_gpt_create(&g, &cfg, 0, &err), MYGPT_OK);
    int64_t ids[16] = {0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3};
    ids[2] = 4;
    cr_expect_eq(mygpt_gpt_forward(g, ids, 1, 4, &err), MYGPT_ERANGE);
    cr_expect_str_eq(err.message, "token id 4 at (0, 2) is outside [0, 4)");
    ids[2] = -1;
    cr_expect_eq(mygpt_gpt_forward(g, ids, 1, 4, &err), MYGPT_ERANGE);
    cr_expect_str_eq(err.message, "token id -1 at (0, 2) is outside [0, 4)");
    ids[2] = 2;
    cr_expect_eq(mygpt_gpt_forward(g, ids, 1, 9, &err), MYGPT_ERANGE);
    cr_expect_str_eq(err.message, "input length T=9 exceeds max_seq_len=8");
    cr_expect_eq(mygpt_gpt_forward(g, ids, 0, 4, &err), MYGPT_EINVAL);
    cr_expect_eq(mygpt_gpt_forward(g, ids, 1, 0, &err), MYGPT_EINVAL);
    cr_expect_eq(mygpt_gpt_forward(g, ids, -2, 4, &err), MYGPT_EINVAL);
    cr_expect_eq(mygpt_gpt_forward(g, ids, 2, 8, &err), MYGPT_OK, "%s", err.message);
    mygpt_gpt_free(g);
}

Test(gpt_errors, allocation_failure_is_an_error)
{
    /* 2^24 x 2^16 embedding = 2^40 floats (4 TiB): malloc refuses, nothing crashes */
    mygpt_config cfg = {1 << 24, 1 << 16, 1, 1, 1};
    mygpt_gpt *g = (mygpt_gpt *)1;
    mygpt_error err = {0};
    mygpt_status st = mygpt_gpt_create(&g, &cfg, 0, &err);
    cr_expect_eq(st, MYGPT_ENOMEM, "status %d: %s", st, err.message);
    cr_expect_null(g);
    cr_expect(strstr(err.message, "out of memory") != NULL, "%s", err.message);
}

Test(gpt_kernels, fast_attention_gives_the_naive_bits)
{
    /* head sizes 4, 4, 16, 48, 64, 32, 64, 16, 32, 64: the 64-wide AVX-512 tiles, the
     * 16-wide ones and the row-by-row fallback; T around the tiles' rows (4, 6), the blocks
     * of queries (24), the panels of keys (16, 64) and past a chunk of values (256 keys,
     * with short tiles: the last block's 11 rows are 6 + 5 and 4 + 4 + 3) */
    const int shapes[][4] = {{1, 1, 8, 2},    {2, 7, 12, 3},   {1, 33, 64, 4},  {3, 64, 48, 1},
                             {1, 130, 128, 2}, {2, 67, 96, 3}, {1, 129, 64, 1}, {2, 24, 16, 1},
                             {1, 49, 64, 2},   {1, 299, 128, 2}};
    for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++) {
        const int B = shapes[c][0], T = shapes[c][1], C = shapes[c][2], NH = shapes[c][3];
        const mygpt_attention_shape shape = {B, T, C, NH};
        const size_t n = (size_t)B * T * C;
        float *q = malloc(n * sizeof *q), *k = malloc(n * sizeof *k), *v = malloc(n * sizeof *v);
        float *o1 = malloc(n * sizeof *o1), *o2 = malloc(n * sizeof *o2);
        const size_t slen = mygpt_attention_scratch_size(T, C / NH, omp_get_max_threads());
        float *scratch = malloc(slen * sizeof *scratch);
        mygpt_rng r = {0};
        mygpt_rng_seed(&r, c);
        mygpt_normal_(&r, q, n, 0, 1, NULL);
        mygpt_normal_(&r, k, n, 0, 1, NULL);
        mygpt_normal_(&r, v, n, 0, 1, NULL);
        const mygpt_qkv in = {q, k, v};
        cr_assert_eq(mygpt_attention_forward(o1, NULL, in, scratch, slen, shape, MYGPT_IMPL_REFERENCE, NULL), MYGPT_OK);
        const size_t na = (size_t)B * NH * T * T;
        float *a1 = malloc(na * sizeof *a1), *a2 = malloc(na * sizeof *a2);
        cr_assert_eq(mygpt_attention_forward(o2, a1, in, NULL, 0, shape, MYGPT_IMPL_REFERENCE, NULL), MYGPT_OK);
        cr_expect(memcmp(o1, o2, n * sizeof *o1) == 0, "shape %zu: the training attention differs", c);
        EACH_KERNEL_SET(isa, MYGPT_FAMILY_ATTENTION) {
            const char *set = mygpt_isa_name(isa);
            memset(o2, 0xff, n * sizeof *o2);
            cr_assert_eq(mygpt_attention_forward(o2, NULL, in, scratch, slen, shape, MYGPT_IMPL_FAST, NULL), MYGPT_OK);
            cr_expect(memcmp(o1, o2, n * sizeof *o1) == 0, "shape %zu: %s attention differs", c,
                      set);
            memset(o2, 0xff, n * sizeof *o2);
            memset(a2, 0xff, na * sizeof *a2);
            cr_assert_eq(mygpt_attention_forward(o2, a2, in, scratch, slen, shape, MYGPT_IMPL_FAST, NULL), MYGPT_OK);
            cr_expect(memcmp(o1, o2, n * sizeof *o1) == 0, "shape %zu: %s attention (probs) differs", c,
                      set);
            cr_expect(memcmp(a1, a2, na * sizeof *a1) == 0, "shape %zu: %s probabilities differ", c,
                      set);
        }
        free(a1); free(a2);
        use_widest_kernel_set(MYGPT_FAMILY_ATTENTION);
        free(q); free(k); free(v); free(o1); free(o2); free(scratch);
    }
}

/* The attention's backward per instruction set (each set's tile and vector width) gives
 * the generic set's bits (test_alloc compares the widest set's with the plain loops):
 * head sizes 20 (the single-channel tail), 16 (8-channel tiles) and 64 (the 64- and
 * 32-channel tiles), T past a block of 32 queries, with and without dropout. */
Test(gpt_kernels, every_attention_backward_path_gives_the_same_bits)
{
    const int shapes[][4] = {{2, 70, 60, 3}, {1, 37, 48, 3}, {1, 45, 128, 2}}; /* B, T, C, NH */
    for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++)
        for (int dropout = 0; dropout < 2; dropout++) {
            const int B = shapes[c][0], T = shapes[c][1], C = shapes[c][2], NH = shapes[c][3];
            const mygpt_attention_shape shape = {B, T, C, NH};
            const size_t n = (size_t)B * T * C, na = (size_t)B * NH * T * T;
            float *x = malloc(4 * n * sizeof *x), *out = malloc(n * sizeof *out), *att = malloc(na * sizeof *att);
            float *g = malloc(2 * 3 * n * sizeof *g); /* dq, dk, dv: the generic set's, then another's */
            uint8_t *keep = malloc(na);
            mygpt_rng r = {0};
            mygpt_rng_seed(&r, 11);
            mygpt_normal_(&r, x, 4 * n, 0, 1, NULL); /* q, k, v, dout */
            cr_assert_eq(mygpt_dropout_mask(&r, keep, na, 0.25, NULL), MYGPT_OK);
            const mygpt_qkv in = {x, x + n, x + 2 * n};
            cr_assert_eq(mygpt_attention_forward(out, att, in, NULL, 0, shape, MYGPT_IMPL_REFERENCE, NULL), MYGPT_OK);
            EACH_KERNEL_SET(isa, MYGPT_FAMILY_ATTENTION) { /* generic first */
                const char *set = mygpt_isa_name(isa);
                float *d = isa == MYGPT_ISA_GENERIC ? g : g + 3 * n;
                memset(d, 0, 3 * n * sizeof *d);
                if (dropout)
                    mygpt_attention_backward_dropout(d, d + n, d + 2 * n, x + 3 * n, att, in,
                                                     (mygpt_attention_dropout){keep, 0.25}, shape);
                else
                    mygpt_attention_backward(d, d + n, d + 2 * n, x + 3 * n, att, in, shape);
                if (isa != MYGPT_ISA_GENERIC)
                    cr_expect(memcmp(d, g, 3 * n * sizeof *g) == 0, "shape %zu dropout %d: the %s backward differs",
                              c, dropout, set);
            }
            use_widest_kernel_set(MYGPT_FAMILY_ATTENTION);
            free(x), free(out), free(att), free(g), free(keep);
        }
}

Test(gpt_kernels, every_matmul_path_gives_the_same_bits)
{
    /* stb's rule: every set (AVX-512, AVX2, NEON) computes the generic C's sums in the same
     * order, and the fused GELU gives GELU of them */
    const int M = 37, K = 300, N = 70; /* edges in every direction, two k blocks */
    float *x = malloc(M * K * sizeof *x), *w = malloc(N * K * sizeof *w), *b = malloc(N * sizeof *b);
    float *ref = malloc(M * N * sizeof *ref), *gelu_ref = malloc(M * N * sizeof *gelu_ref);
    float *o = malloc(M * N * sizeof *o);
    mygpt_rng r = {0};
    mygpt_rng_seed(&r, 3);
    mygpt_normal_(&r, x, M * K, 0, 1, NULL);
    mygpt_normal_(&r, w, N * K, 0, 1, NULL);
    mygpt_normal_(&r, b, N, 0, 1, NULL);
    EACH_KERNEL_SET(isa, MYGPT_FAMILY_MATMUL) { /* generic first */
        const char *set = mygpt_isa_name(isa);
        cr_assert_eq(mygpt_matmul(o, x, w, b, M, K, N, NULL), MYGPT_OK);
        if (isa == MYGPT_ISA_GENERIC) {
            memcpy(ref, o, M * N * sizeof *o);
            mygpt_gelu_forward(gelu_ref, ref, M * N);
        } else
            cr_expect(memcmp(o, ref, M * N * sizeof *o) == 0, "the %s set differs from the generic C", set);
        cr_assert_eq(mygpt_matmul_gelu(o, x, w, b, M, K, N, NULL), MYGPT_OK);
        cr_expect(memcmp(o, gelu_ref, M * N * sizeof *o) == 0, "the %s set's fused GELU differs", set);
    }
    use_widest_kernel_set(MYGPT_FAMILY_MATMUL);
    free(ref); free(gelu_ref); free(o); free(x); free(w); free(b);
}

/* The order every fast path promises (matmul.c): out = ((init + S_0) + S_1) + ..., S_j the
 * fused-multiply-add sum from zero of the j-th block of 256 products, k in order.
 * a(k) = a[k * as], b(k) = b[k * bs]. */
static float blocked_sum(const float *a, size_t as, const float *b, size_t bs, int K, float init)
{
    float out = init;
    for (int k0 = 0; k0 < K; k0 += 256) {
        float s = 0.0f;
        for (int k = k0; k < K && k < k0 + 256; k++)
            s = fmaf(a[k * as], b[k * bs], s);
        out = out + s;
    }
    return out;
}

Test(gpt_kernels, every_matmul_layout_sums_in_the_promised_order)
{
    /* forward (weight packed per call, or once), and both backward products (dout read
     * transposed, B read k-major), against the order written out above, to the bit:
     * shapes with one and several KC blocks, K cut into slabs (K * 256 > the slab) and
     * N cut into slabs (K * N > the slab), one row (decoding) and row/column edges, and
     * products computed swapped (out^T = W X^T: M >= 64 rows, N > M), once with K cut,
     * and rows of the kernel's A 4 KiB apart (1024 floats: copied, rows_alias_in_l1) in
     * the forward, swapped, and dinp's dout; one row over many whole panels (decoding several
     * panels at once, prepacked); swapped products whose last row block has 1, 2, 3 or 5
     * rows (N and K one to five past a multiple of AVX2's 6: every partial store); dweight
     * read transposed over three k blocks by two groups of 16 panels of 16 (the second
     * group's units find the first's strips, every k block's); dinp swapped with its K of
     * 27000 cut into slabs, the weight's rows shared out (the tied head's) */
    const int shapes[][3] = {{37, 300, 70},  {1, 768, 97},   {3, 9000, 300}, {5, 700, 3100},
                             {20, 50, 33},   {100, 300, 700}, {66, 24000, 70}, {45, 1024, 30},
                             {70, 1024, 150}, {30, 64, 1024}, {1, 600, 300}, {1, 64, 1024},
                             {40, 301, 67},  {40, 302, 68},  {40, 303, 69},  {40, 305, 71},
                             {520, 300, 320}, {66, 67, 27000}};
    for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++) {
        const int M = shapes[c][0], K = shapes[c][1], N = shapes[c][2];
        float *x = malloc((size_t)M * K * sizeof *x), *w = malloc((size_t)N * K * sizeof *w);
        float *b = malloc(N * sizeof *b), *o = malloc((size_t)M * N * sizeof *o);
        float *ref = malloc((size_t)M * N * sizeof *ref);
        mygpt_rng r = {0};
        mygpt_rng_seed(&r, 10 + c);
        mygpt_normal_(&r, x, (size_t)M * K, 0, 1, NULL);
        mygpt_normal_(&r, w, (size_t)N * K, 0, 1, NULL);
        mygpt_normal_(&r, b, N, 0, 1, NULL);
        for (int m = 0; m < M; m++)
            for (int n = 0; n < N; n++)
                ref[(size_t)m * N + n] = blocked_sum(x + (size_t)m * K, 1, w + (size_t)n * K, 1, K, b[n]);
        float *gelu_ref = malloc((size_t)M * N * sizeof *gelu_ref);
        mygpt_gelu_forward(gelu_ref, ref, (size_t)M * N);
        EACH_KERNEL_SET(isa, MYGPT_FAMILY_MATMUL) {
            const char *set = mygpt_isa_name(isa);
            memset(o, 0xff, (size_t)M * N * sizeof *o);
            cr_assert_eq(mygpt_matmul(o, x, w, b, M, K, N, NULL), MYGPT_OK);
            cr_expect(memcmp(o, ref, (size_t)M * N * sizeof *o) == 0, "shape %zu %s: forward", c, set);
            cr_assert_eq(mygpt_matmul_gelu(o, x, w, b, M, K, N, NULL), MYGPT_OK); /* fused GELU */
            cr_expect(memcmp(o, gelu_ref, (size_t)M * N * sizeof *o) == 0, "shape %zu %s: forward with GELU", c,
                      set);
            mygpt_packed_weight pw;
            cr_assert_eq(mygpt_matmul_pack(&pw, w, K, N, NULL), MYGPT_OK);
            memset(o, 0xff, (size_t)M * N * sizeof *o);
            cr_assert_eq(mygpt_matmul_prepacked(o, x, &pw, b, M, 0, NULL), MYGPT_OK);
            cr_expect(memcmp(o, ref, (size_t)M * N * sizeof *o) == 0, "shape %zu %s: prepacked", c, set);
            mygpt_matmul_packed_free(&pw);
        }
        /* backward with out (M, N) = x (M, K) w^T: dx (M, K) += dout w, dw (N, K) += dout^T x */
        float *dout = o, *dx = malloc((size_t)M * K * sizeof *dx), *dw = malloc((size_t)N * K * sizeof *dw);
        float *rx = malloc((size_t)M * K * sizeof *rx), *rw = malloc((size_t)N * K * sizeof *rw);
        mygpt_normal_(&r, dout, (size_t)M * N, 0, 1, NULL);
        mygpt_normal_(&r, rx, (size_t)M * K, 0, 1, NULL);
        mygpt_normal_(&r, rw, (size_t)N * K, 0, 1, NULL);
        float *x0 = malloc((size_t)M * K * sizeof *x0), *w0 = malloc((size_t)N * K * sizeof *w0);
        memcpy(x0, rx, (size_t)M * K * sizeof *x0);
        memcpy(w0, rw, (size_t)N * K * sizeof *w0);
        for (int m = 0; m < M; m++)
            for (int k = 0; k < K; k++)
                rx[(size_t)m * K + k] += blocked_sum(dout + (size_t)m * N, 1, w + k, (size_t)K, N, 0.0f);
        for (int n = 0; n < N; n++)
            for (int k = 0; k < K; k++)
                rw[(size_t)n * K + k] += blocked_sum(dout + n, (size_t)N, x + k, (size_t)K, M, 0.0f);
        EACH_KERNEL_SET(isa, MYGPT_FAMILY_MATMUL) {
            const char *set = mygpt_isa_name(isa);
            memcpy(dx, x0, (size_t)M * K * sizeof *dx);
            memcpy(dw, w0, (size_t)N * K * sizeof *dw);
            cr_assert_eq(mygpt_matmul_backward((mygpt_linear_grads){dx, dw, NULL}, dout, x, w, M, K, N, NULL), MYGPT_OK);
            cr_expect(memcmp(dx, rx, (size_t)M * K * sizeof *dx) == 0, "shape %zu %s: dinp", c, set);
            cr_expect(memcmp(dw, rw, (size_t)N * K * sizeof *dw) == 0, "shape %zu %s: dweight", c, set);
        }
        use_widest_kernel_set(MYGPT_FAMILY_MATMUL);
        free(x); free(w); free(b); free(o); free(ref); free(gelu_ref); free(dx); free(dw); free(rx); free(rw);
        free(x0); free(w0);
    }
}

/* One row through a weight packed once in each format (decoding): the promised order over
 * the dequantized weights, to the bit, whatever the set, the threads, and however the
 * panels fall: groups of decode_panels, the whole panels left over (1 to 3), a last panel
 * past N (in a group and left over); K of one or three KC blocks, int8 groups cut short;
 * a bias or none; GELU fused or not */
Test(gpt_kernels, decoding_every_format_sums_in_the_promised_order)
{
    const int Ks[] = {64, 130, 600}, Ns[] = {16, 32, 48, 60, 64, 80, 97, 130, 172, 300, 520};
    for (size_t kc = 0; kc < sizeof Ks / sizeof Ks[0]; kc++)
        for (size_t nc = 0; nc < sizeof Ns / sizeof Ns[0]; nc++) {
            const int K = Ks[kc], N = Ns[nc];
            const size_t groups = mygpt_int8_groups(K);
            float *x = malloc(K * sizeof *x), *w = malloc((size_t)N * K * sizeof *w), *b = malloc(N * sizeof *b);
            float *deq = malloc((size_t)N * K * sizeof *deq), *sc = malloc(N * groups * sizeof *sc);
            float *ref = malloc(N * sizeof *ref), *o = malloc(N * sizeof *o);
            int8_t *q8 = malloc((size_t)N * K);
            uint16_t *q16 = malloc((size_t)N * K * sizeof *q16);
            mygpt_rng r = {0};
            mygpt_rng_seed(&r, 40 + 10 * kc + nc);
            mygpt_normal_(&r, x, K, 0, 1, NULL);
            mygpt_normal_(&r, w, (size_t)N * K, 0, 1, NULL);
            mygpt_normal_(&r, b, N, 0, 1, NULL);
            for (int f = 0; f < MYGPT_WEIGHTS_COUNT; f++) {
                const void *q = NULL;
                if (f == MYGPT_WEIGHTS_INT8) {
                    cr_assert_eq(mygpt_int8_quantize(w, N, K, q8, sc, NULL), MYGPT_OK);
                    mygpt_int8_dequantize(q8, sc, N, K, deq);
                    q = q8;
                } else if (f == MYGPT_WEIGHTS_BF16) {
                    cr_assert_eq(mygpt_bf16_quantize(w, (size_t)N * K, q16, NULL), MYGPT_OK);
                    for (size_t i = 0; i < (size_t)N * K; i++)
                        deq[i] = mygpt_bf16_widen(q16[i]);
                    q = q16;
                } else
                    memcpy(deq, w, (size_t)N * K * sizeof *deq);
                EACH_KERNEL_SET(isa, MYGPT_FAMILY_MATMUL) {
                    const char *set = mygpt_isa_name(isa);
                    mygpt_packed_weight pw;
                    cr_assert_eq(f == MYGPT_WEIGHTS_FP32
                                     ? mygpt_matmul_pack(&pw, deq, K, N, NULL)
                                     : mygpt_matmul_pack_quantized(&pw, (mygpt_weights)f, q, sc, deq, K, N, NULL),
                                 MYGPT_OK);
                    for (int t = 1; t <= 3; t++) {
                        omp_set_num_threads(t);
                        for (int v = 0; v < 4; v++) {
                            const int gelu = v & 1;
                            const float *bias = v & 2 ? NULL : b;
                            for (int n = 0; n < N; n++)
                                ref[n] = blocked_sum(x, 1, deq + (size_t)n * K, 1, K, bias ? bias[n] : 0.0f);
                            memset(o, 0xff, N * sizeof *o);
                            cr_assert_eq(mygpt_matmul_prepacked(o, x, &pw, bias, 1, gelu, NULL), MYGPT_OK);
                            int same = 1;
                            for (int n = 0; n < N; n++) {
                                float want = ref[n];
                                if (gelu)
                                    mygpt_gelu_forward(&want, ref + n, 1);
                                same &= memcmp(&want, o + n, sizeof want) == 0;
                            }
                            cr_expect(same, "K %d N %d %s %s, %d threads%s%s", K, N,
                                      mygpt_weights_name((mygpt_weights)f), set, t, bias ? "" : ", no bias",
                                      gelu ? ", GELU" : "");
                        }
                    }
                    mygpt_matmul_packed_free(&pw);
                }
            }
            use_widest_kernel_set(MYGPT_FAMILY_MATMUL);
            omp_set_num_threads(2);
            free(x), free(w), free(b), free(deq), free(sc), free(ref), free(o), free(q8), free(q16);
        }
}

Test(gpt_kernels, a_packing_for_another_kernel_is_refused)
{
    float w[4 * 3] = {0};
    mygpt_packed_weight pw;
    setenv("MYGPT_MATMUL_KERNEL", "generic", 1);
    mygpt_cpu_reset(); /* the kernels are chosen once: choose again */
    cr_assert_eq(mygpt_matmul_pack(&pw, w, 3, 4, NULL), MYGPT_OK);
    unsetenv("MYGPT_MATMUL_KERNEL");
    mygpt_cpu_reset(); /* the kernels are chosen once: choose again */
    float x[3] = {1, 2, 3}, o[4];
    mygpt_error err = {0};
    const mygpt_status st = mygpt_matmul_prepacked(o, x, &pw, NULL, 1, 0, &err);
    if (strcmp(mygpt_matmul_kernel_name(), "avx512") == 0) /* NR 32, not the generic 16 */
        cr_expect_eq(st, MYGPT_EINVAL, "%s", err.message);
    else
        cr_expect_eq(st, MYGPT_OK);
    mygpt_matmul_packed_free(&pw);
}

/* mygpt_gpt_pack: the same logits bits with the weights packed once as packed at every
 * call, for batches whose products run prepacked (M = 256 rows >= the 256 outputs of
 * W_q..fc2) and swapped with the weight read in place (M = 80; fc2's 1024-float rows
 * then copied, rows_alias_in_l1); a packing made for another kernel is passed over, not an
 * error; the training functions drop the packing (the weights are about to change). */
Test(gpt_packed, packed_once_the_same_logits_and_never_while_training)
{
    const mygpt_config cfg = {.vocab_size = 300, .embed_dim = 256, .num_heads = 4, .num_layers = 2,
                              .max_seq_len = 64};
    const int shapes[2][2] = {{4, 64}, {2, 40}}; /* B, T */
    mygpt_gpt *g;
    mygpt_error err = {0};
    cr_assert_eq(mygpt_gpt_create(&g, &cfg, 21, &err), MYGPT_OK);
    int64_t ids[4 * 64];
    for (int i = 0; i < 4 * 64; i++)
        ids[i] = (i * 37 + 11) % 300;
    float *ref = malloc(4 * 64 * 300 * sizeof *ref);
    for (int s = 0; s < 2; s++) {
        const int B = shapes[s][0], T = shapes[s][1];
        const size_t n = (size_t)B * T * 300;
        mygpt_gpt_unpack(g);
        cr_assert_eq(mygpt_gpt_forward(g, ids, B, T, &err), MYGPT_OK);
        memcpy(ref, g->acts.logits, n * sizeof *ref);
        cr_assert_eq(mygpt_gpt_pack(g, &err), MYGPT_OK);
        cr_assert_eq(mygpt_gpt_pack(g, &err), MYGPT_OK); /* again: replaces the first */
        cr_assert_not_null(g->packed);
        memset(g->acts.logits, 0xff, n * sizeof *ref);
        cr_assert_eq(mygpt_gpt_forward(g, ids, B, T, &err), MYGPT_OK);
        cr_expect(memcmp(ref, g->acts.logits, n * sizeof *ref) == 0, "B %d T %d: packed logits differ", B, T);
    }
    setenv("MYGPT_MATMUL_KERNEL", "generic", 1); /* NR 16: the packing (made for this CPU) does not fit */
    mygpt_cpu_reset(); /* the kernels are chosen once: choose again */
    cr_assert_eq(mygpt_gpt_forward(g, ids, 2, 40, &err), MYGPT_OK, "%s", err.message);
    cr_expect(memcmp(ref, g->acts.logits, (size_t)2 * 40 * 300 * sizeof *ref) == 0, "generic kernel");
    unsetenv("MYGPT_MATMUL_KERNEL");
    mygpt_cpu_reset(); /* the kernels are chosen once: choose again */
    /* a training step changes the weights: a packed model is not trained, a trained one not packed */
    mygpt_trainer *tr = NULL;
    cr_expect_eq(mygpt_trainer_create(&tr, g, &err), MYGPT_EINVAL, "a trainer for a packed model");
    cr_expect_null(tr);
    mygpt_gpt_unpack(g);
    cr_assert_eq(mygpt_trainer_create(&tr, g, &err), MYGPT_OK);
    cr_expect_eq(mygpt_gpt_pack(g, &err), MYGPT_EINVAL, "packing a model a trainer holds");
    cr_expect_null(g->packed);
    mygpt_trainer_free(tr);
    cr_assert_eq(mygpt_gpt_pack(g, &err), MYGPT_OK, "packing once the trainer is gone");
    free(ref);
    mygpt_gpt_free(g); /* frees a packing too (the sanitizer and valgrind runs see leaks) */
}

/* ---- no hidden global state: two models in two threads = the same two in sequence --- */

typedef struct build_job {
    uint64_t seed;
    float logits[2 * 9 * 37];
    float wq0;
    int ok;
} build_job;

static void *build_and_run(void *arg)
{
    build_job *j = arg;
    mygpt_config cfg = {37, 24, 3, 2, 12};
    int64_t ids[2 * 9];
    for (int i = 0; i < 18; i++)
        ids[i] = (i * 11 + (int)j->seed) % 37;
    mygpt_gpt *g;
    j->ok = mygpt_gpt_create(&g, &cfg, j->seed, NULL) == MYGPT_OK &&
            mygpt_gpt_forward(g, ids, 2, 9, NULL) == MYGPT_OK;
    if (j->ok) {
        memcpy(j->logits, g->acts.logits, sizeof j->logits);
        j->wq0 = g->params.wq[0];
        mygpt_gpt_free(g);
    }
    return NULL;
}

Test(gpt_threads, two_models_in_two_threads_equal_the_sequential_ones)
{
    build_job par[2] = {{.seed = 5}, {.seed = 6}}, seq[2] = {{.seed = 5}, {.seed = 6}};
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        cr_assert_eq(pthread_create(&th[i], NULL, build_and_run, &par[i]), 0);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < 2; i++) {
        build_and_run(&seq[i]);
        cr_assert(par[i].ok && seq[i].ok);
        cr_expect(memcmp(par[i].logits, seq[i].logits, sizeof par[i].logits) == 0, "model %d", i);
        cr_expect_eq(par[i].wq0, seq[i].wq0);
    }
    cr_expect_neq(par[0].wq0, par[1].wq0, "different seeds, different models");
}

Test(gpt_errors, layer_functions_refuse_what_would_read_out_of_bounds)
{
    float wte[4 * 2] = {0}, wpe[3 * 2] = {0}, out[8 * 2];
    const int64_t ids[4] = {0, 1, 4, 2};
    mygpt_error err = {0};
    const mygpt_embedding_tables tokens = {wte, 4, NULL, 0}, both = {wte, 4, wpe, 3};
    cr_expect_eq(mygpt_embedding_forward(out, ids, tokens, 1, 4, 2, &err), MYGPT_ERANGE);
    cr_expect_str_eq(err.message, "token id 4 at (0, 2) is outside [0, 4)");
    const int64_t ok[4] = {0, 1, 2, 3};
    cr_expect_eq(mygpt_embedding_forward(out, ok, both, 1, 4, 2, &err), MYGPT_ERANGE);
    cr_expect_str_eq(err.message, "input length T=4 exceeds max_seq_len=3");
    cr_expect_eq(mygpt_embedding_forward(out, ok, both, 0, 4, 2, &err), MYGPT_EINVAL);
    cr_expect_eq(mygpt_embedding_forward(out, ok, both, 1, 3, 2, &err), MYGPT_OK);
    float q[6], s[64];
    const mygpt_qkv qqq = {q, q, q};
    const mygpt_attention_shape four_heads = {1, 1, 6, 4}, no_heads = {1, 1, 6, 0}, three_heads = {1, 1, 6, 3};
    cr_expect_eq(mygpt_attention_forward(q, NULL, qqq, s, 64, four_heads, MYGPT_IMPL_REFERENCE, &err), MYGPT_EINVAL);
    cr_expect_eq(mygpt_attention_forward(q, NULL, qqq, s, 64, no_heads, MYGPT_IMPL_FAST, &err), MYGPT_EINVAL);
    cr_expect_eq(mygpt_attention_forward(q, s, qqq, NULL, 0, four_heads, MYGPT_IMPL_REFERENCE, &err), MYGPT_EINVAL);
    /* scratch smaller than one thread's slice is refused, not overrun */
    cr_expect_eq(mygpt_attention_forward(q, NULL, qqq, s, 0, three_heads, MYGPT_IMPL_FAST, &err), MYGPT_EINVAL);
    cr_expect_eq(mygpt_attention_forward(q, NULL, qqq, s, 0, three_heads, MYGPT_IMPL_REFERENCE, &err), MYGPT_EINVAL);
    // kernels that are no implementation, a T past 2^24 (its padding overflowed an int)
    // (scratch said to be endless: these are refused for themselves, before anything is read)
    const mygpt_attention_shape one_head = {1, 1, 6, 1}, long_t = {1, MYGPT_MAX_DIM + 1, 6, 1};
    cr_expect_eq(mygpt_attention_forward(q, NULL, qqq, s, SIZE_MAX, one_head, (mygpt_impl)7, &err), MYGPT_EINVAL);
    cr_expect(strstr(err.message, "neither MYGPT_IMPL_FAST nor"), "%s", err.message);
    cr_expect_eq(mygpt_attention_forward(q, NULL, qqq, s, SIZE_MAX, long_t, MYGPT_IMPL_FAST, &err), MYGPT_EINVAL);
    cr_expect(strstr(err.message, "positions: at most"), "%s", err.message);
    cr_expect_eq(mygpt_attention_scratch_size(MYGPT_MAX_DIM + 1, 6, 1), 0);
    // a configuration's qkv_bias: 0 or 1
    mygpt_config cfg = {.vocab_size = 8, .embed_dim = 4, .num_heads = 2, .num_layers = 1, .max_seq_len = 4,
                        .arch = MYGPT_ARCH_LLMS_FROM_SCRATCH, .qkv_bias = 1};
    cr_expect_eq(mygpt_config_validate(&cfg, &err), MYGPT_OK, "%s", err.message);
    cfg.qkv_bias = -1;
    cr_expect_eq(mygpt_config_validate(&cfg, &err), MYGPT_EINVAL);
}

/* Every *_free takes NULL and a zeroed struct, and does nothing (mygpt.h says so): the
 * structs a caller holds, then those the library hands out by pointer (NULL only) */
#define HELD_STRUCTS(X)                                                                          \
    X(mygpt_csv, mygpt_csv_free)                                                                 \
    X(mygpt_dataloader, mygpt_dataloader_free)                                                   \
    X(mygpt_instruct_data, mygpt_instruct_data_free)                                             \
    X(mygpt_instruct_dataset, mygpt_instruct_dataset_free)                                       \
    X(mygpt_instruct_loader, mygpt_instruct_loader_free)                                         \
    X(mygpt_kv_cache, mygpt_kv_cache_free)                                                       \
    X(mygpt_kv_cache, mygpt_kv_cache_reset)                                                      \
    X(mygpt_llama2c_sampler, mygpt_llama2c_sampler_free)                                         \
    X(mygpt_mha_steps, mygpt_mha_steps_free)                                                     \
    X(mygpt_optimizer, mygpt_optimizer_free)                                                     \
    X(mygpt_strbuf, mygpt_sb_free)                                                               \
    X(mygpt_spam_dataset, mygpt_spam_dataset_free)                                               \
    X(mygpt_spam_loader, mygpt_spam_loader_free)                                                 \
    X(mygpt_words, mygpt_words_free)                                                             \
    X(mygpt_simple_tokenizer, mygpt_simple_tokenizer_free)
#define FREE_NULL_AND_ZEROED(type, free_fn)                                                      \
    {                                                                                            \
        type zeroed = {0};                                                                       \
        free_fn(NULL);                                                                           \
        free_fn(&zeroed);                                                                        \
    }
Test(gpt_errors, every_free_takes_null_and_a_zeroed_struct)
{
    HELD_STRUCTS(FREE_NULL_AND_ZEROED)
    mygpt_gpt_free(NULL);
    mygpt_sp_free(NULL);
    mygpt_tokenizer_free(NULL);
    mygpt_trainer_free(NULL);
}
#undef FREE_NULL_AND_ZEROED
#undef HELD_STRUCTS

/* Sizes whose own arithmetic would overflow (M rows past memory: a division by zero in the
 * planning; N at INT_MAX: its panels' rounding) are refused before any operand is read */
Test(gpt_errors, a_product_larger_than_memory_is_refused)
{
    float out[16], in[16] = {0}, w[16] = {0};
    mygpt_error err = {0};
    cr_expect_eq(mygpt_matmul(out, in, w, NULL, SIZE_MAX, 4, 4, &err), MYGPT_EINVAL);
    cr_expect(strstr(err.message, "is too large"), "%s", err.message);
    cr_expect_eq(mygpt_matmul(out, in, w, NULL, 2, 4, INT_MAX, &err), MYGPT_EINVAL);
    cr_expect_eq(mygpt_matmul(out, in, w, NULL, 2, INT_MAX, 4, &err), MYGPT_EINVAL);
    cr_expect_eq(mygpt_matmul(out, in, w, NULL, SIZE_MAX / 16, 8, 8, &err), MYGPT_EINVAL);
    cr_expect_eq(mygpt_matmul(out, in, w, NULL, 1, INT_MAX - 1000, 1, &err), MYGPT_EINVAL); // k0 += ks overflowed
    mygpt_packed_weight pw;
    cr_expect_eq(mygpt_matmul_pack(&pw, w, 4, INT_MAX, &err), MYGPT_EINVAL);
}

/* Scratch sized for one thread, called with a team of 4: the team is clamped to the slices
 * scratch holds (no write past its end, which the sanitizer stage would report), and the
 * bits are those of the full team. */
Test(gpt_kernels, attention_scratch_sized_for_one_thread_is_safe_with_more)
{
    const int B = 2, T = 40, C = 64, NH = 4; /* B * NH = 8 heads, enough to go parallel */
    const mygpt_attention_shape shape = {B, T, C, NH};
    const size_t n = (size_t)B * T * C;
    float *q = malloc(n * sizeof *q), *o1 = malloc(n * sizeof *o1), *o2 = malloc(n * sizeof *o2);
    mygpt_rng r = {0};
    mygpt_rng_seed(&r, 5);
    mygpt_normal_(&r, q, n, 0, 1, NULL);
    const int saved = omp_get_max_threads();
    omp_set_num_threads(4);
    const size_t one = mygpt_attention_scratch_size(T, C / NH, 1);
    const size_t four = mygpt_attention_scratch_size(T, C / NH, 4);
    cr_assert_eq(four, 4 * one);
    float *s1 = malloc(one * sizeof *s1), *s4 = malloc(four * sizeof *s4);
    for (int fast = 0; fast < 2; fast++) {
        const mygpt_impl kernels = fast ? MYGPT_IMPL_FAST : MYGPT_IMPL_REFERENCE;
        cr_assert_eq(mygpt_attention_forward(o1, NULL, (mygpt_qkv){q, q, q}, s4, four, shape, kernels, NULL), MYGPT_OK);
        cr_assert_eq(mygpt_attention_forward(o2, NULL, (mygpt_qkv){q, q, q}, s1, one, shape, kernels, NULL), MYGPT_OK);
        cr_expect(memcmp(o1, o2, n * sizeof *o1) == 0, "fast=%d: 1-slice scratch changed bits", fast);
    }
    omp_set_num_threads(saved);
    free(q); free(o1); free(o2); free(s1); free(s4);
}

/* A model big enough that every parallel loop of the forward pass enters its OpenMP
 * region (the sizes are checked against lib/base/parallel.h), fast and naive kernels,
 * under 1, 2, 3 and 8 threads: the logits are the same bits. */
Test(gpt_threads, every_parallel_loop_gives_the_same_bits_for_1_2_3_8_threads)
{
    const mygpt_config cfg = {.vocab_size = 300, .embed_dim = 128, .num_heads = 4,
                              .num_layers = 2, .max_seq_len = 96};
    const int B = 4, T = 96, C = cfg.embed_dim, V = cfg.vocab_size;
    const size_t N = (size_t)B * T;
    cr_assert_gt(N * C, MYGPT_PARALLEL_MIN);                          /* embedding, LayerNorm, residual */
    cr_assert_gt(N * C * C, MYGPT_KERNEL_SMALL);                      /* q k v o, the smallest matmul */
    cr_assert_gt((size_t)B * T * T * C, MYGPT_KERNEL_SMALL);          /* attention, both kernels */
    cr_assert_gt(B * cfg.num_heads, 1);
    cr_assert_gt(N * 4 * C, MYGPT_PARALLEL_MIN);                      /* GELU of the naive path */
    int64_t *ids = malloc(N * sizeof *ids);
    for (size_t i = 0; i < N; i++)
        ids[i] = (int64_t)((i * 7919) % (size_t)V);
    const size_t n = N * (size_t)V;
    const int threads[] = {1, 2, 3, 8};
    const int saved = omp_get_max_threads();
    for (int naive = 0; naive < 2; naive++) {
        float *first = malloc(n * sizeof *first);
        for (int k = 0; k < 4; k++) {
            omp_set_num_threads(threads[k]);
            mygpt_gpt *gpt;
            cr_assert_eq(mygpt_gpt_create(&gpt, &cfg, 17, NULL), MYGPT_OK);
            gpt->impl = naive ? MYGPT_IMPL_REFERENCE : MYGPT_IMPL_FAST;
            cr_assert_eq(mygpt_gpt_forward(gpt, ids, B, T, NULL), MYGPT_OK);
            if (k == 0)
                memcpy(first, gpt->acts.logits, n * sizeof *first);
            else
                cr_expect(memcmp(first, gpt->acts.logits, n * sizeof *first) == 0,
                          "%s kernels: logits with %d threads differ from 1 thread",
                          naive ? "naive" : "fast", threads[k]);
            mygpt_gpt_free(gpt);
        }
        free(first);
    }
    omp_set_num_threads(saved);
    free(ids);
}

/* The work queue the matmul and the attention share items out with (lib/base/parallel.h).
 * The owner takes from the front, a thief from the back, and once a queue is empty neither
 * gets anything. */
Test(gpt_threads, work_queue_takes_from_the_front_and_steals_from_the_back)
{
    mygpt_queue q;
    size_t item = 99;
    const int own = 1, steal = 0;
    const size_t want[] = {0, 4, 1, 3, 2};
    const int who[] = {own, steal, own, steal, steal};
    mygpt_queue_fill(&q, 5);
    for (int i = 0; i < 5; i++) {
        cr_assert(mygpt_queue_take(&q, who[i], &item), "take %d found the queue empty", i);
        cr_expect_eq(item, want[i], "take %d: item %zu, not %zu", i, item, want[i]);
    }
    cr_expect(!mygpt_queue_take(&q, own, &item));
    cr_expect(!mygpt_queue_take(&q, steal, &item));
    mygpt_queue_fill(&q, 0);
    cr_expect(!mygpt_queue_take(&q, own, &item));
    const size_t starts[] = {0, 3, 6, 10}; /* 10 items in 3 runs */
    for (int t = 0; t <= 3; t++)
        cr_expect_eq(mygpt_run_start(10, t, 3), starts[t]);
}

/* Six threads, the first 50x slower, so the others finish their runs and steal from
 * its: every item is taken exactly once. */
Test(gpt_threads, work_queue_hands_out_every_item_exactly_once)
{
    enum { TEAM = 6, ITEMS = 6000 };
    static mygpt_queue queues[TEAM];
    static int taken[ITEMS];
    int stolen = 0;
#pragma omp parallel num_threads(TEAM) reduction(+ : stolen)
    {
        const int me = omp_get_thread_num(), nt = omp_get_num_threads();
        mygpt_steal steal = mygpt_steal_start(
            queues, sizeof *queues, me, nt,
            (uint32_t)(mygpt_run_start(ITEMS, me + 1, nt) - mygpt_run_start(ITEMS, me, nt)));
#pragma omp barrier
        int owner;
        size_t i;
        while (mygpt_steal_next(&steal, &owner, &i)) {
            volatile double spin = 0;
            for (int k = 0; k < (me == 0 ? 5000 : 100); k++)
                spin += k;
            (void)spin; /* read once: clang warns on a volatile that is only written */
#pragma omp atomic
            taken[mygpt_run_start(ITEMS, owner, nt) + i]++;
            stolen += owner != me;
        }
    }
    for (int i = 0; i < ITEMS; i++)
        cr_assert_eq(taken[i], 1, "item %d taken %d times", i, taken[i]);
    cr_log_info("%d of %d items stolen", stolen, ITEMS);
}

/* The widest kernels the CPU supports are used whichever compiler built the library (gcc
 * or clang). */
Test(gpt_kernels, the_cpu_decides_the_kernels_not_the_compiler)
{
#ifdef MYGPT_X86_KERNELS
    __builtin_cpu_init();
    const char *want = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
                               __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq")
                           ? "avx512"
                       : __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? "avx2"
                                                                                          : "generic";
#elif defined(MYGPT_NEON_KERNELS)
    const char *want = "neon"; /* every aarch64 CPU has NEON */
#else
    const char *want = "generic";
#endif
    unsetenv("MYGPT_MATMUL_KERNEL");
    mygpt_cpu_reset(); /* the kernels are chosen once: choose again */
    unsetenv("MYGPT_ATTENTION_KERNEL");
    mygpt_cpu_reset(); /* the kernels are chosen once: choose again */
    cr_expect_str_eq(mygpt_matmul_kernel_name(), want);
    cr_expect_str_eq(mygpt_attention_kernel_name(), want);
}

/* ---- where the heads look: mygpt_gpt_forward_attention -------------------------------- */

/* Every head's probabilities against the reference model's softmax outputs
 * (tests/golden/attention.txt, tools/gen_train_goldens.py) within 1e-6, with the fast
 * and the plain kernels; the logits the same bits as mygpt_gpt_forward's. */
Test(gpt_attention, probabilities_within_1e6_of_pytorch_and_logits_unchanged)
{
    golden_reader gold = golden_reader_must_open("attention.txt");
    char *line;
    mygpt_config cfg = {0};
    unsigned long long seed = 0;
    int T = 0, cases = 0;
    int64_t *ids = NULL;
    double worst = 0;
    while ((line = golden_read(&gold))) {
        if (sscanf(line, "config %llu %d %d %d %d %d %d", &seed, &cfg.vocab_size, &cfg.embed_dim, &cfg.num_heads,
                   &cfg.num_layers, &cfg.max_seq_len, &T) == 7) {
            free(ids);
            ids = malloc((size_t)T * sizeof *ids);
        } else if (strncmp(line, "ids ", 4) == 0) {
            cr_assert_eq(golden_parse_i64(line + 4, ids, (size_t)T), (size_t)T);
        } else if (strncmp(line, "probs ", 6) == 0) {
            mygpt_gpt *g;
            cr_assert_eq(mygpt_gpt_create(&g, &cfg, seed, NULL), MYGPT_OK);
            const size_t n = mygpt_gpt_attention_len(g, 1, T), nl = (size_t)T * cfg.vocab_size;
            float *want = malloc(n * sizeof *want), *att = malloc(n * sizeof *att);
            float *logits = malloc(nl * sizeof *logits);
            cr_assert_eq(golden_parse_f32(line + 6, want, n), n, "line %ld", gold.lineno);
            cr_assert_eq(mygpt_gpt_forward(g, ids, 1, T, NULL), MYGPT_OK);
            memcpy(logits, g->acts.logits, nl * sizeof *logits);
            for (int naive = 0; naive < 2; naive++) {
                g->impl = naive ? MYGPT_IMPL_REFERENCE : MYGPT_IMPL_FAST;
                memset(att, 0xff, n * sizeof *att);
                cr_assert_eq(mygpt_gpt_forward_attention(g, ids, 1, T, att, n, NULL), MYGPT_OK);
                for (size_t i = 0; i < n; i++) { /* not fmax: gcc 12 for aarch64 fails vectorising it */
                    const double d = fabs((double)att[i] - want[i]);
                    worst = d > worst ? d : worst;
                }
                if (!naive)
                    cr_expect(memcmp(logits, g->acts.logits, nl * sizeof *logits) == 0,
                              "case %d: the logits changed when the probabilities were kept", cases);
            }
            free(want);
            free(att);
            free(logits);
            mygpt_gpt_free(g);
            cases++;
        }
    }
    cr_expect_eq(cases, 3);
    cr_expect(worst <= 1e-6, "worst difference from PyTorch %.3g", worst);
    free(ids);
    golden_reader_close(&gold);
}

Test(gpt_attention, a_buffer_too_small_is_refused_and_top_positions_are_ordered)
{
    const mygpt_config cfg = {.vocab_size = 11, .embed_dim = 8, .num_heads = 2, .num_layers = 2, .max_seq_len = 8};
    mygpt_gpt *g;
    cr_assert_eq(mygpt_gpt_create(&g, &cfg, 0, NULL), MYGPT_OK);
    const int64_t ids[5] = {1, 2, 3, 4, 5};
    cr_expect_eq(mygpt_gpt_attention_len(g, 1, 5), (size_t)2 * 2 * 5 * 5);
    float att[100];
    mygpt_error err = {0};
    cr_expect_eq(mygpt_gpt_forward_attention(g, ids, 1, 5, att, 99, &err), MYGPT_EINVAL);
    cr_expect(strstr(err.message, "attention buffer") != NULL, "%s", err.message);
    cr_expect_eq(mygpt_gpt_forward_attention(g, ids, 1, 5, att, 100, &err), MYGPT_OK);
    for (int r = 0; r < 20; r++) { // every row: a distribution over positions 0..t, 0 after
        const int t = r % 5;
        double sum = 0;
        for (int s = 0; s < 5; s++) {
            sum += att[r * 5 + s];
            if (s > t)
                cr_expect_eq(att[r * 5 + s], 0.0f);
        }
        cr_expect(fabs(sum - 1) < 1e-6, "row %d sums to %g", r, sum);
    }
    const float row[5] = {0.1f, 0.3f, 0.1f, 0.3f, 0.2f};
    int best[3];
    cr_expect_eq(mygpt_attention_top(row, 4, 3, best), 3);
    cr_expect(best[0] == 1 && best[1] == 3 && best[2] == 4, "%d %d %d", best[0], best[1], best[2]);
    cr_expect_eq(mygpt_attention_top(row, 1, 3, best), 2);
    cr_expect(best[0] == 1 && best[1] == 0);
    mygpt_gpt_free(g);
}

/* mygpt_gpt_skip_init leaves the generator where building the model leaves it: the same
 * next draws, and the same Box-Muller partner pending (tiny embeddings take the small
 * path), for sizes with and without a ragged tail of 16. */
Test(gpt_build, skipping_the_draws_leaves_the_generator_as_building_does)
{
    const mygpt_config cfgs[] = {{3, 2, 1, 1, 2}, {5, 3, 3, 2, 4}, {17, 8, 2, 1, 7}, {101, 32, 4, 3, 33}};
    for (size_t c = 0; c < sizeof cfgs / sizeof cfgs[0]; c++) {
        mygpt_rng built = {0}, skipped = {0};
        mygpt_rng_seed(&built, 40 + c);
        mygpt_rng_seed(&skipped, 40 + c);
        mygpt_gpt *g;
        mygpt_error err = {0};
        cr_assert_eq(mygpt_gpt_create_from(&g, &cfgs[c], &built, &err), MYGPT_OK, "%s", err.message);
        cr_assert_eq(mygpt_gpt_skip_init(&cfgs[c], &skipped, &err), MYGPT_OK, "%s", err.message);
        cr_expect_eq(built.has_cached_normal, skipped.has_cached_normal, "config %zu: the pending normal", c);
        float a[5], b[5];
        cr_assert_eq(mygpt_normal_small_(&built, a, 5, 0, 1, NULL), MYGPT_OK);
        cr_assert_eq(mygpt_normal_small_(&skipped, b, 5, 0, 1, NULL), MYGPT_OK);
        cr_expect(memcmp(a, b, sizeof a) == 0, "config %zu: the next normals differ", c);
        for (int i = 0; i < 700; i++) // past a twist of the state
            cr_assert_eq(mygpt_rng_random(&built), mygpt_rng_random(&skipped), "config %zu: draw %d", c, i);
        mygpt_gpt_free(g);
    }
    mygpt_rng r = {0};
    const mygpt_config bad = {0, 2, 1, 1, 2};
    cr_expect_eq(mygpt_gpt_skip_init(&bad, &r, NULL), MYGPT_EINVAL);
}
