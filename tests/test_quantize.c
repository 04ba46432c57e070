/*
 * test_quantize.c - bf16 and int8 weights (mygpt/quantize.h): the quantizer against
 * torch's recipe (tests/golden/quantize.txt, tools/quantize_reference.py), a quantized
 * model against the float32 model of its dequantized weights (the same bits, whichever
 * kernel, thread count or pass), against PyTorch on those weights, and its checkpoints.
 */
#define _GNU_SOURCE /* memmem */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernels/cpu.h"
#include "kernel_sets.h"
#include "golden.h"
#include "mygpt/checkpoint.h"
#include "mygpt/generate.h"
#include "mygpt/gpt.h"
#include "mygpt/quantize.h"
#include "mygpt/rng.h"
#include "mygpt/train.h"

static uint32_t bits_of(float v)
{
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    return u;
}

/* sum over i of (i + 1) * v[i] mod 2^64, v the n values of `bytes` bytes at p read as
 * unsigned integers, as tools/quantize_reference.py's weighted() */
static uint64_t weighted(const void *p, size_t n, size_t bytes)
{
    uint64_t s = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t v = 0;
        memcpy(&v, (const char *)p + i * bytes, bytes); // little-endian, as the golden file
        s += (uint64_t)(i + 1) * v;
    }
    return s;
}

/* Each quantized format of the table: every one after float32 */
#define EACH_QUANTIZED(w) for (mygpt_weights w = MYGPT_WEIGHTS_FP32 + 1; w < MYGPT_WEIGHTS_COUNT; w++)

Test(quantizer, the_table_holds_every_format_once_and_its_names_read_back)
{
    for (int i = 0; i < MYGPT_WEIGHTS_COUNT; i++) {
        const mygpt_weights_traits *t = mygpt_weights_traits_of((mygpt_weights)i);
        cr_assert_not_null(t);
        mygpt_weights back;
        cr_expect_eq(mygpt_weights_parse(t->name, &back, NULL), MYGPT_OK);
        cr_expect_eq(back, (mygpt_weights)i, "%s", t->name);
        cr_expect_str_eq(mygpt_weights_name((mygpt_weights)i), t->name);
        cr_expect_eq(mygpt_weights_value_bytes((mygpt_weights)i), t->value_bytes, "%s", t->name);
        cr_expect(t->quantize && t->dequantize && (i == MYGPT_WEIGHTS_FP32) == !t->check, "%s", t->name);
        cr_expect_eq(mygpt_weights_scales((mygpt_weights)i, 130), (size_t)(t->group ? (130 + t->group - 1) / t->group : 0));
    }
    cr_expect_null(mygpt_weights_traits_of(MYGPT_WEIGHTS_COUNT));
    cr_expect_str_eq(mygpt_weights_name(MYGPT_WEIGHTS_COUNT), "?");
    // rows of no value (cols < 1): nothing read or written (a negative cols read out of bounds)
    float wv[4] = {1, 2, 3, 4}, sc[1] = {7}, out[4] = {9, 9, 9, 9};
    int8_t q[4] = {5, 5, 5, 5};
    for (int i = 0; i < MYGPT_WEIGHTS_COUNT; i++) {
        const mygpt_weights_traits *t = mygpt_weights_traits_of((mygpt_weights)i);
        cr_expect_eq(t->quantize(wv, 2, -4, q, sc, NULL), MYGPT_OK, "%s", t->name);
        t->dequantize(q, sc, 2, -1, out);
        if (t->check)
            cr_expect_eq(t->check(q, sc, 2, -4, NULL), MYGPT_OK, "%s", t->name);
        cr_expect(q[0] == 5 && q[3] == 5 && out[0] == 9 && out[3] == 9 && sc[0] == 7, "%s wrote", t->name);
    }
    cr_expect_eq(mygpt_weights_quantizes(&(mygpt_config){.vocab_size = 8, .embed_dim = 4, .num_heads = 1,
                                                         .num_layers = 1, .max_seq_len = 4},
                                         999),
                 0, "no such row");
    mygpt_weights w;
    cr_expect_eq(mygpt_weights_parse("int4", &w, NULL), MYGPT_EINVAL);
}

/* What a file is checked for: every quantized format's check passes what its recipe
 * gives and refuses some stored values (a NaN bfloat16, int8's -128) and bad scales */
Test(quantizer, each_check_passes_the_recipes_values_and_refuses_others)
{
    enum { ROWS = 3, COLS = 130 };
    float w[ROWS * COLS], s[ROWS * 8];
    for (int i = 0; i < ROWS * COLS; i++)
        w[i] = (float)(i % 37 - 18) * 0.01f;
    EACH_QUANTIZED(fmt) {
        const mygpt_weights_traits *t = mygpt_weights_traits_of(fmt);
        unsigned char q[ROWS * COLS * 8];
        mygpt_error err = {0};
        cr_assert_eq(t->quantize(w, ROWS, COLS, q, s, NULL), MYGPT_OK);
        cr_expect_eq(t->check(q, s, ROWS, COLS, &err), MYGPT_OK, "%s: %s", t->name, err.message);
        int refused = 0; // some value of every stored byte the same
        for (int byte = 0; byte < 256; byte++) {
            unsigned char bad[ROWS * COLS * 8];
            memset(bad, byte, sizeof bad);
            refused += t->check(bad, s, ROWS, COLS, &err) == MYGPT_EFORMAT;
        }
        cr_expect_gt(refused, 0, "%s refuses no stored value", t->name);
        if (t->group) {
            const float bad[] = {-1.0f, NAN, INFINITY, FLT_MAX};
            for (int k = 0; k < 4; k++) {
                const float keep = s[4];
                s[4] = bad[k];
                cr_expect_eq(t->check(q, s, ROWS, COLS, &err), MYGPT_EFORMAT, "%s scale %g", t->name, (double)bad[k]);
                cr_expect(strstr(err.message, "scale 4") != NULL, "%s", err.message);
                s[4] = keep;
            }
        }
    }
}

Test(quantizer, random_and_gpt2_shaped_tensors_match_the_torch_recipe)
{
    golden_reader gold = golden_reader_must_open("quantize.txt");
    char *line;
    int cases = 0;
    while ((line = golden_read(&gold))) {
        int seed, rows, cols;
        double scale;
        if (sscanf(line, "random %d %d %d %lf", &seed, &rows, &cols, &scale) != 4)
            continue;
        const size_t n = (size_t)rows * cols;
        float *w = malloc(n * sizeof *w);
        mygpt_rng rng = {0};
        mygpt_rng_seed(&rng, (uint64_t)seed);
        cr_assert_eq(mygpt_normal_(&rng, w, n, 0, 1, NULL), MYGPT_OK); // torch.randn(rows, cols) * scale
        for (size_t i = 0; i < n; i++)
            w[i] *= (float)scale;
        // a line per quantized format: its name, its values weighted, its scales weighted
        int seen = 0;
        for (int k = 0; k < MYGPT_WEIGHTS_COUNT - 1; k++) {
            char name[8];
            unsigned long long want_q, want_s = 0;
            mygpt_weights fmt;
            cr_assert_not_null(line = golden_read(&gold));
            const int got = sscanf(line, "%7s %llu %llu", name, &want_q, &want_s);
            cr_assert_eq(mygpt_weights_parse(name, &fmt, NULL), MYGPT_OK, "line %ld: %s", gold.lineno, line);
            const mygpt_weights_traits *t = mygpt_weights_traits_of(fmt);
            cr_assert_eq(got, t->group ? 3 : 2, "line %ld: %s", gold.lineno, line);
            const size_t ns = (size_t)rows * mygpt_weights_scales(fmt, cols);
            void *q = malloc(n * t->value_bytes);
            float *s = ns ? malloc(ns * sizeof *s) : NULL;
            cr_assert_eq(t->quantize(w, (size_t)rows, cols, q, s, NULL), MYGPT_OK);
            cr_expect_eq(weighted(q, n, t->value_bytes), want_q, "random %d %dx%d: %s values differ from torch's",
                         seed, rows, cols, t->name);
            cr_expect_eq(weighted(s, ns, sizeof *s), want_s, "random %d %dx%d: %s scales differ from torch's", seed,
                         rows, cols, t->name);
            seen |= 1 << fmt;
            free(q), free(s);
        }
        EACH_QUANTIZED(fmt)
        cr_expect(seen & 1 << fmt, "random %d: no %s line", seed, mygpt_weights_name(fmt));
        free(w);
        cases++;
    }
    cr_expect_geq(cases, 9);
    golden_reader_close(&gold);
}

Test(quantizer, ties_zeros_denormals_and_short_groups_match_the_torch_recipe)
{
    golden_reader gold = golden_reader_must_open("quantize.txt");
    char *line;
    int cases = 0;
    while ((line = golden_read(&gold))) {
        int rows, cols;
        if (sscanf(line, "explicit %d %d", &rows, &cols) != 2)
            continue;
        const size_t n = (size_t)rows * cols, groups = mygpt_int8_groups(cols);
        float *w = malloc(n * sizeof *w), *s = malloc(rows * groups * sizeof *s), *ws = malloc(n * sizeof *ws);
        int64_t *wq = malloc(n * sizeof *wq);
        int8_t *q = malloc(n);
        uint16_t *b = malloc(n * sizeof *b);
        cr_assert_not_null(line = golden_read(&gold));
        cr_assert_eq(golden_parse_f32(line + 2, w, n), n);
        cr_assert_not_null(line = golden_read(&gold));
        cr_assert_eq(golden_parse_i64(line + 2, wq, n), n);
        cr_assert_not_null(line = golden_read(&gold));
        cr_assert_eq(golden_parse_f32(line + 2, ws, rows * groups), rows * groups);
        cr_assert_eq(mygpt_int8_quantize(w, (size_t)rows, cols, q, s, NULL), MYGPT_OK);
        cr_assert_eq(mygpt_bf16_quantize(w, n, b, NULL), MYGPT_OK);
        for (size_t i = 0; i < n; i++)
            cr_expect_eq(q[i], wq[i], "explicit %d: q[%zu] = %d, torch %lld (w %a)", cases, i, q[i], (long long)wq[i],
                         (double)w[i]);
        for (size_t i = 0; i < rows * groups; i++)
            cr_expect_eq(bits_of(s[i]), bits_of(ws[i]), "explicit %d: scale %zu %a, torch %a", cases, i, (double)s[i],
                         (double)ws[i]);
        cr_assert_not_null(line = golden_read(&gold));
        const char *p = line + 2;
        for (size_t i = 0; i < n; i++) {
            unsigned v;
            int used;
            cr_assert_eq(sscanf(p, "%x%n", &v, &used), 1);
            p += used;
            cr_expect_eq(b[i], v, "explicit %d: bf16[%zu] %04x, torch %04x", cases, i, b[i], v);
            cr_expect_eq(bits_of(mygpt_bf16_widen(b[i])), (uint32_t)v << 16);
        }
        free(w), free(s), free(ws), free(wq), free(q), free(b);
        cases++;
    }
    cr_expect_eq(cases, 4);
    golden_reader_close(&gold);
}

Test(quantizer, nan_and_infinities_are_refused)
{
    const float bad[] = {NAN, INFINITY, -INFINITY};
    for (int k = 0; k < 3; k++) {
        float w[130];
        for (int i = 0; i < 130; i++)
            w[i] = (float)i * 0.01f;
        w[70] = bad[k];
        EACH_QUANTIZED(fmt) {
            uint64_t q[130];
            float s[3];
            mygpt_error err = {0};
            cr_expect_eq(mygpt_weights_traits_of(fmt)->quantize(w, 1, 130, q, s, &err), MYGPT_ERANGE);
            cr_expect(strstr(err.message, "70") != NULL, "%s: %s", mygpt_weights_name(fmt), err.message);
        }
    }
    // finite, but no quantized format holds it: bfloat16 rounds it to infinity, and
    // int8's 127 x scale is infinite
    const float top = FLT_MAX;
    EACH_QUANTIZED(fmt) {
        uint64_t q;
        float s;
        cr_expect_eq(mygpt_weights_traits_of(fmt)->quantize(&top, 1, 1, &q, &s, NULL), MYGPT_ERANGE, "%s",
                     mygpt_weights_name(fmt));
    }
    // a model with a NaN weight is left as it was
    EACH_QUANTIZED(fmt) {
        mygpt_gpt *g;
        const mygpt_config cfg = {31, 16, 2, 1, 8};
        cr_assert_eq(mygpt_gpt_create(&g, &cfg, 0, NULL), MYGPT_OK);
        g->params.fc2w[5] = NAN;
        float *before = malloc(g->num_parameters * sizeof *before);
        memcpy(before, g->params_memory, g->num_parameters * sizeof *before);
        mygpt_error err = {0};
        cr_expect_eq(mygpt_gpt_quantize(g, fmt, &err), MYGPT_ERANGE);
        cr_expect(strstr(err.message, "fc2w") != NULL, "%s: %s", mygpt_weights_name(fmt), err.message);
        cr_expect_eq(g->weights, MYGPT_WEIGHTS_FP32);
        cr_expect_null(g->packed);
        cr_expect(memcmp(before, g->params_memory, g->num_parameters * sizeof *before) == 0);
        free(before);
        mygpt_gpt_free(g);
    }
}

/* ---- the quantized model is the float32 model of its dequantized weights ---------------- */

static const mygpt_config SHAPES[] = {
    {97, 48, 3, 2, 16, MYGPT_ARCH_COURSE},
    {211, 96, 2, 2, 17, MYGPT_ARCH_LLMS_FROM_SCRATCH, 1},
    {300, 130, 2, 2, 24, MYGPT_ARCH_GPT2}, // C = 130: rows of 3 groups, the last of 2
    {64, 64, 4, 1, 40, MYGPT_ARCH_LLMS_FROM_SCRATCH},
    {64, 256, 4, 1, 16, MYGPT_ARCH_LLMS_FROM_SCRATCH}, // fc2's rows of 1024 floats: copied (rows_alias_in_l1)
};

/* The float32 model whose parameters are q's (the dequantized values) */
static mygpt_gpt *float_twin(const mygpt_gpt *q)
{
    mygpt_gpt *f;
    cr_assert_eq(mygpt_gpt_alloc(&f, &q->config, NULL), MYGPT_OK);
    memcpy(f->params_memory, q->params_memory, q->num_parameters * sizeof(float));
    return f;
}

static int same_floats(const float *a, const float *b, size_t n)
{
    return memcmp(a, b, n * sizeof *a) == 0;
}

Test(quantized_model, logits_generation_and_attention_are_the_dequantized_float32_models_bits, .timeout = 240)
{
    const int threads[] = {1, 2, 3};
    for (size_t c = 0; c < sizeof SHAPES / sizeof SHAPES[0]; c++)
        EACH_QUANTIZED(w) {
            const mygpt_config cfg = SHAPES[c];
            // the float32 reference, once: unpacked, through the default kernels, 1 thread
            mygpt_gpt *q0;
            cr_assert_eq(mygpt_gpt_create(&q0, &cfg, 5 + c, NULL), MYGPT_OK);
            cr_assert_eq(mygpt_gpt_quantize(q0, w, NULL), MYGPT_OK);
            mygpt_gpt *f = float_twin(q0);
            const int B = 2, T = cfg.max_seq_len < 12 ? cfg.max_seq_len : 12;
            int64_t ids[24];
            for (int i = 0; i < B * T; i++)
                ids[i] = (i * 37 + 11) % cfg.vocab_size;
            omp_set_num_threads(1);
            const size_t nl = (size_t)B * T * cfg.vocab_size, na = mygpt_gpt_attention_len(f, B, T);
            float *att_f = malloc(na * sizeof *att_f), *att_q = malloc(na * sizeof *att_q);
            cr_assert_eq(mygpt_gpt_forward_attention(f, ids, B, T, att_f, na, NULL), MYGPT_OK);
            float *want = malloc(nl * sizeof *want);
            memcpy(want, f->acts.logits, nl * sizeof *want);
            // greedy, past the context (the window then slides)
            const mygpt_generation greedy = {.max_new = cfg.max_seq_len + 4 - 3, .sampling = {.temperature = 0},
                                             .eos = -1, .use_cache = 1};
            int64_t gen_f[64], gen_q[64];
            int n_f, n_q;
            cr_assert_eq(mygpt_generate(f, NULL, ids, 3, &greedy, gen_f, &n_f, NULL), MYGPT_OK);
            // the naive kernels read the same dequantized floats
            f->impl = MYGPT_IMPL_REFERENCE;
            cr_assert_eq(mygpt_gpt_forward(f, ids, B, T, NULL), MYGPT_OK);
            float *naive = malloc(nl * sizeof *naive);
            memcpy(naive, f->acts.logits, nl * sizeof *naive);
            q0->impl = MYGPT_IMPL_REFERENCE;
            cr_assert_eq(mygpt_gpt_forward(q0, ids, B, T, NULL), MYGPT_OK);
            cr_expect(same_floats(q0->acts.logits, naive, nl), "config %zu %s: naive kernels differ", c,
                      mygpt_weights_name(w));
            EACH_KERNEL_SET(isa, MYGPT_FAMILY_MATMUL) { // every kernel set: quantized (and packed) under it
                const char *set = mygpt_isa_name(isa);
                mygpt_gpt *q;
                cr_assert_eq(mygpt_gpt_create(&q, &cfg, 5 + c, NULL), MYGPT_OK);
                cr_assert_eq(mygpt_gpt_quantize(q, w, NULL), MYGPT_OK);
                cr_assert(same_floats(q->params_memory, f->params_memory, q->num_parameters));
                for (int t = 0; t < 3; t++) {
                    omp_set_num_threads(threads[t]);
                    cr_assert_eq(mygpt_gpt_forward_attention(q, ids, B, T, att_q, na, NULL), MYGPT_OK);
                    cr_expect(same_floats(q->acts.logits, want, nl), "config %zu %s %s %d threads: logits differ", c,
                              mygpt_weights_name(w), set, threads[t]);
                    cr_expect(same_floats(att_q, att_f, na), "config %zu %s %s %d threads: attention differs", c,
                              mygpt_weights_name(w), set, threads[t]);
                    // KV-cache generation past the context (the window then slides)
                    cr_assert_eq(mygpt_generate(q, NULL, ids, 3, &greedy, gen_q, &n_q, NULL), MYGPT_OK);
                    cr_expect(n_q == n_f && memcmp(gen_q, gen_f, (size_t)n_f * sizeof *gen_f) == 0,
                              "config %zu %s %s %d threads: generated tokens differ", c, mygpt_weights_name(w), set,
                              threads[t]);
                }
                mygpt_gpt_free(q);
            }
            use_widest_kernel_set(MYGPT_FAMILY_MATMUL);
            omp_set_num_threads(2);
            free(att_f), free(att_q), free(want), free(naive);
            mygpt_gpt_free(q0);
            mygpt_gpt_free(f);
        }
}

Test(quantized_model, logits_follow_pytorch_on_the_dequantized_weights)
{
    golden_reader gold = golden_reader_must_open("quantize.txt");
    char *line;
    int cases = 0;
    double worst = 0;
    while ((line = golden_read(&gold))) {
        char arch[32], fmt[8];
        int seed;
        mygpt_config cfg = {0};
        if (sscanf(line, "model %31s %d %d %d %d %d %d %7s", arch, &seed, &cfg.vocab_size, &cfg.embed_dim,
                   &cfg.num_heads, &cfg.num_layers, &cfg.max_seq_len, fmt) != 8)
            continue;
        mygpt_weights w;
        cr_assert_eq(mygpt_arch_parse(arch, &cfg.arch, NULL), MYGPT_OK);
        cr_assert_eq(mygpt_weights_parse(fmt, &w, NULL), MYGPT_OK);
        cfg.qkv_bias = cfg.arch == MYGPT_ARCH_GPT2;
        int64_t ids[64];
        float want[64 * 512];
        cr_assert_not_null(line = golden_read(&gold));
        const int T = (int)golden_parse_i64(line + 4, ids, 64);
        cr_assert_not_null(line = golden_read(&gold));
        const size_t n = (size_t)T * cfg.vocab_size;
        cr_assert_eq(golden_parse_f32(line + 7, want, 64 * 512), n);
        mygpt_gpt *g;
        cr_assert_eq(mygpt_gpt_create(&g, &cfg, (uint64_t)seed, NULL), MYGPT_OK);
        cr_assert_eq(mygpt_gpt_quantize(g, w, NULL), MYGPT_OK);
        cr_assert_eq(mygpt_gpt_forward(g, ids, 1, T, NULL), MYGPT_OK);
        for (size_t i = 0; i < n; i++) { // the forward's tolerance (test_arch.c, docs/model-spec.md)
            const double d = fabs((double)g->acts.logits[i] - want[i]), tol = 1e-5 * fmax(1.0, fabs(want[i]));
            worst = fmax(worst, d / tol);
            cr_expect(d <= tol, "%s %s logit %zu: %.9g vs PyTorch %.9g", arch, fmt, i, g->acts.logits[i], want[i]);
        }
        mygpt_gpt_free(g);
        cases++;
    }
    cr_expect_eq(cases, 6);
    cr_log_info("worst logit difference: %.2f of the tolerance", worst);
    golden_reader_close(&gold);
}

Test(quantized_model, back_to_float32_and_no_training)
{
    const mygpt_config cfg = SHAPES[1];
    EACH_QUANTIZED(w) {
        mygpt_gpt *g;
        mygpt_error err = {0};
        cr_assert_eq(mygpt_gpt_create(&g, &cfg, 3, NULL), MYGPT_OK);
        cr_assert_eq(mygpt_gpt_quantize(g, w, NULL), MYGPT_OK);
        EACH_QUANTIZED(other) { // quantized again: only from float32
            if (other != w)
                cr_expect_eq(mygpt_gpt_quantize(g, other, &err), MYGPT_EINVAL);
        }
        mygpt_trainer *tr = NULL;
        cr_expect_eq(mygpt_trainer_create(&tr, g, &err), MYGPT_EINVAL);
        cr_expect(strstr(err.message, "inference") != NULL, "%s", err.message);
        const int64_t ids[5] = {1, 2, 3, 4, 5};
        cr_assert_eq(mygpt_gpt_forward(g, ids, 1, 5, NULL), MYGPT_OK);
        float *was = malloc(5 * (size_t)cfg.vocab_size * sizeof *was);
        memcpy(was, g->acts.logits, 5 * (size_t)cfg.vocab_size * sizeof *was);
        cr_assert_eq(mygpt_gpt_quantize(g, MYGPT_WEIGHTS_FP32, NULL), MYGPT_OK); // the dequantized values, float32
        cr_expect_eq(g->weights, MYGPT_WEIGHTS_FP32);
        cr_expect_null(g->quantized);
        cr_assert_eq(mygpt_gpt_forward(g, ids, 1, 5, NULL), MYGPT_OK);
        cr_expect(same_floats(g->acts.logits, was, 5 * (size_t)cfg.vocab_size), "%s", mygpt_weights_name(w));
        mygpt_gpt_unpack(g);
        cr_expect_eq(mygpt_trainer_create(&tr, g, NULL), MYGPT_OK);
        mygpt_trainer_free(tr);
        free(was);
        mygpt_gpt_free(g);
    }
}

/* ---- checkpoints ----------------------------------------------------------------------- */

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f);
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    char *d = malloc(*len);
    cr_assert_eq(fread(d, 1, *len, f), *len);
    fclose(f);
    return d;
}

static void spit(const char *path, const char *d, size_t len)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(d, 1, len, f), len);
    fclose(f);
}

/* The file at path with its first `from` (in the header) replaced by `to` (as long),
 * or the data byte at `at` (from the data's start) set to `byte` */
static void corrupt(const char *path, const char *out, const char *from, const char *to, long at, int byte)
{
    size_t len;
    char *d = slurp(path, &len);
    uint64_t hlen = 0;
    memcpy(&hlen, d, 8);
    if (from) {
        char *p = memmem(d + 8, hlen, from, strlen(from));
        cr_assert_not_null(p, "%s not in the header", from);
        memcpy(p, to, strlen(to));
    } else {
        d[8 + hlen + at] = (char)byte;
    }
    spit(out, d, len);
    free(d);
}

Test(quantized_checkpoint, saves_load_on_their_own_and_hostile_ones_are_refused)
{
    char dir[] = "/tmp/mygpt_quant_XXXXXX", path[128], bad[128];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/q.safetensors", dir);
    snprintf(bad, sizeof bad, "%s/bad.safetensors", dir);
    for (size_t c = 0; c < sizeof SHAPES / sizeof SHAPES[0]; c++)
        EACH_QUANTIZED(w) {
            mygpt_gpt *g, *h;
            mygpt_error err = {0};
            cr_assert_eq(mygpt_gpt_create(&g, &SHAPES[c], 9, NULL), MYGPT_OK);
            cr_assert_eq(mygpt_gpt_quantize(g, w, NULL), MYGPT_OK);
            cr_assert_eq(mygpt_checkpoint_save(g, path, &err), MYGPT_OK, "%s", err.message);
            cr_assert_eq(mygpt_checkpoint_load(&h, path, &err), MYGPT_OK, "%s", err.message);
            cr_expect_eq(h->weights, w);
            cr_expect(same_floats(h->params_memory, g->params_memory, g->num_parameters), "config %zu %s", c,
                      mygpt_weights_name(w));
            const int64_t ids[4] = {1, 0, 5, 7};
            cr_assert_eq(mygpt_gpt_forward(g, ids, 1, 4, NULL), MYGPT_OK);
            cr_assert_eq(mygpt_gpt_forward(h, ids, 1, 4, NULL), MYGPT_OK);
            cr_expect(same_floats(g->acts.logits, h->acts.logits, 4 * (size_t)SHAPES[c].vocab_size));
            mygpt_gpt_free(h);
            mygpt_gpt_free(g);
        }
    // hostile variants of an int8 course file (its first tensor, wte, starts the data)
    mygpt_gpt *g, *h = NULL;
    mygpt_error err = {0};
    cr_assert_eq(mygpt_gpt_create(&g, &SHAPES[0], 9, NULL), MYGPT_OK);
    cr_assert_eq(mygpt_gpt_quantize(g, MYGPT_WEIGHTS_INT8, NULL), MYGPT_OK);
    cr_assert_eq(mygpt_checkpoint_save(g, path, NULL), MYGPT_OK);
    const size_t wte_bytes = (size_t)SHAPES[0].vocab_size * SHAPES[0].embed_dim;
    struct {
        const char *from, *to;
        long at;
        int byte;
        const char *why;
    } cases[] = {
        {NULL, NULL, 3, 0x80, "token_embedding.embedding.weight: int8 value 3 is -128"}, // the file's name
        {NULL, NULL, (long)wte_bytes + 3, 0xbf, "scale"}, // scale 0's sign and exponent: negative
        {"\"group_size\":\"64\"", "\"group_size\":\"32\"", 0, 0, "group_size"},
        {"\"dtype\":\"I8\"", "\"dtype\":\"U8\"", 0, 0, "not I8"},
        {"embedding.weight.scales", "embedding.weight.scalez", 0, 0, "missing"},
        {"\"weights\":\"int8\"", "\"weights\":\"int4\"", 0, 0, "unknown weight format"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        corrupt(path, bad, cases[k].from, cases[k].to, cases[k].at, cases[k].byte);
        cr_expect_eq(mygpt_checkpoint_load(&h, bad, &err), MYGPT_EFORMAT, "case %zu loaded", k);
        cr_expect_null(h);
        cr_expect(strstr(err.message, cases[k].why) != NULL, "case %zu: %s", k, err.message);
    }
    mygpt_gpt_free(g);
    // GPT-2's fused, transposed c_attn: its last byte is the v part's last value as the
    // model holds it, said so (the file's index would be another)
    cr_assert_eq(mygpt_gpt_create(&g, &SHAPES[2], 9, NULL), MYGPT_OK);
    cr_assert_eq(mygpt_gpt_quantize(g, MYGPT_WEIGHTS_INT8, NULL), MYGPT_OK);
    cr_assert_eq(mygpt_checkpoint_save(g, path, NULL), MYGPT_OK);
    size_t len;
    char *d = slurp(path, &len);
    const char *entry = strstr(d + 8, "\"h.1.attn.c_attn.weight\":{");
    unsigned long long from = 0, to = 0;
    cr_assert(entry && sscanf(strstr(entry, "\"data_offsets\":["), "\"data_offsets\":[%llu,%llu]", &from, &to) == 2);
    free(d);
    corrupt(path, bad, NULL, NULL, (long)to - 1, 0x80);
    cr_expect_eq(mygpt_checkpoint_load(&h, bad, &err), MYGPT_EFORMAT, "c_attn's -128 loaded");
    cr_expect(strstr(err.message, "h.1.attn.c_attn.weight (its part 3 of 3, as the model holds it: (out, in)): int8 "
                                  "value 16899 is -128"), "%s", err.message); // the last of v's 130 x 130
    unlink(path);
    unlink(bad);
    rmdir(dir);
    mygpt_gpt_free(g);
}

/* A finite scale whose 127 * s overflows dequantizes to inf; the quantizer refuses to make
 * one and a checkpoint holding one is refused, naming the tensor */
Test(quantized_checkpoint, a_scale_that_dequantizes_to_infinity_is_refused)
{
    float w[130];
    for (int i = 0; i < 130; i++)
        w[i] = (float)i * 0.01f;
    int8_t q[130];
    float s[3];
    mygpt_error err = {0};
    w[70] = 1e38f; // large but 127 * (1e38 / 127) is finite: quantizes
    cr_expect_eq(mygpt_int8_quantize(w, 1, 130, q, s, &err), MYGPT_OK, "%s", err.message);
    w[70] = -FLT_MAX;
    cr_expect_eq(mygpt_int8_quantize(w, 1, 130, q, s, &err), MYGPT_ERANGE);
    cr_expect(strstr(err.message, "127 x scale") != NULL && strstr(err.message, "64") != NULL, "%s",
              err.message);
    // the model's tensor is named
    mygpt_gpt *g, *h = NULL;
    const mygpt_config cfg = {31, 16, 2, 1, 8};
    cr_assert_eq(mygpt_gpt_create(&g, &cfg, 0, NULL), MYGPT_OK);
    const float keep = g->params.fc2w[5];
    g->params.fc2w[5] = FLT_MAX;
    cr_expect_eq(mygpt_gpt_quantize(g, MYGPT_WEIGHTS_INT8, &err), MYGPT_ERANGE);
    cr_expect(strstr(err.message, "fc2w") != NULL && strstr(err.message, "127 x scale") != NULL, "%s",
              err.message);
    cr_expect_eq(g->weights, MYGPT_WEIGHTS_FP32);
    // a file whose first scale (wte's) is FLT_MAX: finite, non-negative, but 127 x it is inf
    g->params.fc2w[5] = keep;
    cr_assert_eq(mygpt_gpt_quantize(g, MYGPT_WEIGHTS_INT8, NULL), MYGPT_OK);
    char dir[] = "/tmp/mygpt_quant_XXXXXX", path[128];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/q.safetensors", dir);
    cr_assert_eq(mygpt_checkpoint_save(g, path, NULL), MYGPT_OK);
    size_t len;
    char *d = slurp(path, &len);
    uint64_t hlen = 0;
    memcpy(&hlen, d, 8);
    const float top = FLT_MAX;
    memcpy(d + 8 + hlen + (size_t)cfg.vocab_size * cfg.embed_dim, &top, sizeof top);
    spit(path, d, len);
    free(d);
    cr_expect_eq(mygpt_checkpoint_load(&h, path, &err), MYGPT_EFORMAT, "loaded");
    cr_expect_null(h);
    cr_expect(strstr(err.message, "token_embedding.embedding.weight: int8 scale 0") != NULL &&
                  strstr(err.message, "infinity") != NULL, "%s", err.message); // the file's name, not the table's wte
    unlink(path);
    rmdir(dir);
    mygpt_gpt_free(g);
}
