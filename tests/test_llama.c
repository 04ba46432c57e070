/*
 * test_llama.c - the llama architecture (llama2.c's model.py: RMSNorm, rotary positions,
 * SwiGLU, grouped-query attention) against tools/reference_llama.py's goldens
 * (tests/golden/llama): logits within 1e-5 on llama2.c's stories260K and on 8 random
 * models, through the full forward and the KV cache (the full forward's bits, the grouped
 * heads cached once: n_kv_heads * head_size a position); the greedy ids of 200 positions from
 * BOS; every parameter's gradient within 1e-5 of model.py's after one backward (stories260K
 * and the random models); llama2.c's .bin read and written back the same; its errors; and
 * the counts.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "data.h"
#include "golden.h"
#include "model/kv_layout.h"
#include "model/params.h"
#include "runproc.h"
#include "mygpt/checkpoint.h"
#include "mygpt/data.h"
#include "mygpt/generate.h"
#include "mygpt/gpt.h"
#include "mygpt/kv_cache.h"
#include "mygpt/layers.h"
#include "mygpt/llama2c_sample.h"
#include "mygpt/posenc.h"
#include "mygpt/sample.h"
#include "mygpt/train.h"

/* the docs' tolerance of a forward (docs/model-spec.md): 1e-5 x max(1, |logit|) */
#define TOL 1e-5

/* One golden: the header's sizes, the ids (B, T), the logits (B * T, V), the greedy ids */
typedef struct llama_golden {
    int config[8];
    int B, T, V;
    int64_t *ids;
    float *logits;
    int64_t *greedy;
    int ngreedy;
    int seed, multiple_of; /* model.py's initialisation's (init_N.txt) */
} llama_golden;

/* the floats or ints of a line after its first `skip` words */
static const char *after_words(const char *s, int skip)
{
    for (int i = 0; i < skip; i++) {
        while (*s == ' ')
            s++;
        while (*s && *s != ' ')
            s++;
    }
    return s;
}

static llama_golden read_golden(const char *name)
{
    llama_golden g = {0};
    golden_reader r = golden_reader_must_open(name);
    char *line;
    size_t row = 0;
    while ((line = golden_read(&r))) {
        if (strncmp(line, "config ", 7) == 0) {
            cr_assert_eq(sscanf(line, "config %d %d %d %d %d %d %d %d", &g.config[0], &g.config[1], &g.config[2],
                                &g.config[3], &g.config[4], &g.config[5], &g.config[6], &g.config[7]), 8);
            g.V = g.config[5];
        } else if (strncmp(line, "ids ", 4) == 0) {
            cr_assert_eq(sscanf(line, "ids %d %d", &g.B, &g.T), 2);
            g.ids = malloc((size_t)g.B * g.T * sizeof *g.ids);
            cr_assert_eq(golden_parse_i64(after_words(line, 3), g.ids, (size_t)g.B * g.T), (size_t)g.B * g.T);
            g.logits = malloc((size_t)g.B * g.T * g.V * sizeof *g.logits);
        } else if (strncmp(line, "seed ", 5) == 0) {
            cr_assert_eq(sscanf(line, "seed %d multiple_of %d", &g.seed, &g.multiple_of), 2);
        } else if (strncmp(line, "greedy ", 7) == 0) {
            cr_assert_eq(sscanf(line, "greedy %d", &g.ngreedy), 1);
            g.greedy = malloc((size_t)g.ngreedy * sizeof *g.greedy);
            cr_assert_eq(golden_parse_i64(after_words(line, 2), g.greedy, (size_t)g.ngreedy), (size_t)g.ngreedy);
        } else if (strcmp(line, "logits") != 0) { // a row of logits
            char *s = line, *end;
            cr_assert_lt(row, (size_t)g.B * g.T, "%s: too many rows", name);
            for (int v = 0; v < g.V; v++, s = end) {
                g.logits[row * g.V + v] = strtof(s, &end);
                cr_assert_neq(s, end, "%s line %ld: %d numbers, not %d", name, r.lineno, v, g.V);
            }
            row++;
        }
    }
    golden_reader_close(&r);
    cr_assert_eq(row, (size_t)g.B * g.T, "%s: %zu rows of logits", name, row);
    return g;
}

static void free_golden(llama_golden *g)
{
    free(g->ids);
    free(g->logits);
    free(g->greedy);
}

/* the largest |a - b| / max(1, |b|) over n (b the golden) */
static double worst(const float *a, const float *b, size_t n)
{
    double w = 0;
    for (size_t i = 0; i < n; i++) { // a comparison, not fmax: gcc 12 for aarch64 cannot vectorise that
        const double d = fabs((double)a[i] - (double)b[i]) / fmax(1.0, fabs((double)b[i]));
        if (d > w || d != d)
            w = d;
    }
    return w;
}

/* a file name of this process's in the system's temporary folder */
static void temp_path(char *buf, size_t n, const char *stem, const char *ext)
{
    const char *dir = getenv("TMPDIR");
    snprintf(buf, n, "%s/%s_%d.%s", dir && *dir ? dir : P_tmpdir, stem, (int)getpid(), ext);
}

static char *path_of(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/llama/%s", golden_dir(), name);
    return buf;
}

/* the model of a .bin, read by mygpt_model_load (which tells the format by content) */
static mygpt_gpt *load(const char *path)
{
    mygpt_gpt *m = NULL;
    mygpt_error err = {0};
    cr_assert_eq(mygpt_model_load(&m, path, &err), MYGPT_OK, "%s: %s", path, err.message);
    cr_assert_eq(m->config.arch, MYGPT_ARCH_LLAMA);
    return m;
}

/* The full forward over (B, T), then each sequence through the KV cache one position at a
 * time and its first half in one step: every row within TOL of the golden's, and the
 * cached rows the full forward's bits (mygpt_gpt_forward_cached's promise, which the
 * grouped heads, shared in the cache rather than repeated, keep) */
static void check_logits(mygpt_gpt *m, const llama_golden *g, const char *name)
{
    mygpt_error err = {0};
    const size_t V = (size_t)g->V, BT = (size_t)g->B * g->T;
    cr_assert_eq(mygpt_gpt_forward(m, g->ids, g->B, g->T, &err), MYGPT_OK, "%s", err.message);
    const double full = worst(m->acts.logits, g->logits, BT * V);
    cr_expect_leq(full, TOL, "%s: full forward off by %g", name, full);
    cr_log_info("%s: full forward within %.3g x max(1, |logit|)", name, full);
    mygpt_kv_cache c;
    cr_assert_eq(mygpt_kv_cache_init(&c, m, &err), MYGPT_OK, "%s", err.message);
    for (int b = 0; b < g->B; b++) {
        mygpt_kv_cache_reset(&c);
        const int64_t *ids = g->ids + (size_t)b * g->T;
        const int first = g->T / 2 > 0 ? g->T / 2 : 1; // a step of several rows, then one at a time
        for (int t = first - 1; t < g->T; t++) {
            const int n = t == first - 1 ? first : 1;
            cr_assert_eq(mygpt_gpt_forward_cached(m, &c, ids + t + 1 - n, n, &err), MYGPT_OK, "%s", err.message);
            const double w = worst(c.logits, g->logits + ((size_t)b * g->T + t) * V, V);
            cr_expect_leq(w, TOL, "%s: KV cache, sequence %d position %d off by %g", name, b, t, w);
            cr_expect(memcmp(c.logits, m->acts.logits + ((size_t)b * g->T + t) * V, V * sizeof(float)) == 0,
                      "%s: KV cache, sequence %d position %d: not the full forward's bits", name, b, t);
        }
    }
    mygpt_kv_cache_free(&c);
}

/* The golden llama/STEM_i.txt into *g (its name in txt) and the model of STEM_i.bin */
static mygpt_gpt *golden_model(const char *stem, int i, llama_golden *g, char txt[64])
{
    char bin[64], path[4096];
    snprintf(txt, 64, "llama/%s_%d.txt", stem, i);
    snprintf(bin, sizeof bin, "%s_%d.bin", stem, i);
    *g = read_golden(txt);
    return load(path_of(path, sizeof path, bin));
}

Test(llama, random_models_logits_full_and_cached)
{
    for (int i = 0; i < 8; i++) {
        char txt[64];
        llama_golden g;
        mygpt_gpt *m = golden_model("random", i, &g, txt);
        cr_assert_eq(m->config.embed_dim, g.config[0]);
        cr_assert_eq(mygpt_ffn_hidden(&m->config), g.config[1]);
        cr_assert_eq(mygpt_kv_heads(&m->config), g.config[4]);
        cr_assert_eq(m->config.untied_head, g.config[7]);
        check_logits(m, &g, txt);
        m->impl = MYGPT_IMPL_REFERENCE; // the plain loops too
        check_logits(m, &g, txt);
        mygpt_gpt_free(m);
        free_golden(&g);
    }
}

/* A grouped model (8 query heads on 2 heads of keys and values) caches n_kv_heads *
 * head_size floats a position, as llama2.c's kv_dim: a quarter of the repeated heads'
 * C, in k, v and kt alike */
Test(llama, kv_cache_holds_the_kv_heads_alone)
{
    const mygpt_config cfg = {.arch = MYGPT_ARCH_LLAMA, .vocab_size = 50, .embed_dim = 64, .num_heads = 8,
                              .num_kv_heads = 2, .num_layers = 3, .max_seq_len = 100};
    mygpt_config full = cfg; // the same model with a head of keys and values for every query head
    full.num_kv_heads = 0;
    const size_t L = 3, M = 100, ldk = 128, KV = 2 * (64 / 8); // ldk: 100 rounded up to MYGPT_KT_BLOCK
    cr_assert_eq(mygpt_kv_dim(&cfg), (int)KV);
    cr_assert_eq(mygpt_kv_dim(&full), 64);
    cr_expect_eq(mygpt_kv_cache_floats(&cfg), L * (2 * M * KV + KV * ldk));
    cr_expect_eq(mygpt_kv_cache_floats(&full), 4 * mygpt_kv_cache_floats(&cfg));
    mygpt_gpt *m = NULL;
    mygpt_error err = {0};
    cr_assert_eq(mygpt_gpt_create(&m, &cfg, 7, &err), MYGPT_OK, "%s", err.message);
    mygpt_kv_cache c;
    cr_assert_eq(mygpt_kv_cache_init(&c, m, &err), MYGPT_OK, "%s", err.message);
    cr_expect_eq(c.ldk, (int)ldk);
    cr_expect_eq((size_t)(c.v - c.k), L * M * KV, "every layer's keys (maxT, KV), then the values");
    cr_expect_eq((size_t)(c.kt - c.v), L * M * KV, "every layer's values (maxT, KV), then kt");
    cr_expect_eq(c.k, c.memory);
    mygpt_kv_cache_free(&c);
    mygpt_gpt_free(m);
}

/* The model's full forward over ids (1, T), then the cache: the first P positions in one
 * step, then one position at a time, each row of logits the full forward's bits */
static void expect_cached_bits(mygpt_gpt *m, const int64_t *ids, int T, int P, const char *what)
{
    const size_t V = (size_t)m->config.vocab_size;
    mygpt_error err = {0};
    cr_assert_eq(mygpt_gpt_forward(m, ids, 1, T, &err), MYGPT_OK, "%s", err.message);
    mygpt_kv_cache c;
    cr_assert_eq(mygpt_kv_cache_init(&c, m, &err), MYGPT_OK, "%s", err.message);
    cr_assert_eq(mygpt_gpt_forward_cached(m, &c, ids, P, &err), MYGPT_OK, "%s", err.message);
    for (int t = P; t <= T; t++) {
        cr_expect(memcmp(c.logits, m->acts.logits + (size_t)(t - 1) * V, V * sizeof(float)) == 0,
                  "%s, position %d: cached logits differ from the full forward's", what, t - 1);
        if (t < T)
            cr_assert_eq(mygpt_gpt_forward_cached(m, &c, ids + t, 1, &err), MYGPT_OK, "%s", err.message);
    }
    mygpt_kv_cache_free(&c);
}

/* Grouped heads through the cache at the size of every parallel path (the (row, head)
 * pairs shared among threads) and past kt's first blocks: a long prompt, then one position
 * at a time, each the full forward's bits; fast, packed and with the plain loops */
Test(llama, kv_cache_of_grouped_heads_gives_the_full_forwards_bits)
{
    const mygpt_config cfg = {.arch = MYGPT_ARCH_LLAMA, .vocab_size = 301, .embed_dim = 256, .num_heads = 8,
                              .num_kv_heads = 2, .num_layers = 2, .max_seq_len = 300};
    mygpt_gpt *m = NULL;
    mygpt_error err = {0};
    cr_assert_eq(mygpt_gpt_create(&m, &cfg, 11, &err), MYGPT_OK, "%s", err.message);
    enum { T = 180, P = 140, V = 301 };
    int64_t ids[T];
    for (int i = 0; i < T; i++)
        ids[i] = (i * 131 + 7) % V;
    for (int mode = 0; mode < 3; mode++) { // unpacked, packed, the plain loops
        m->impl = mode == 2 ? MYGPT_IMPL_REFERENCE : MYGPT_IMPL_FAST;
        if (mode == 1)
            cr_assert_eq(mygpt_gpt_pack(m, &err), MYGPT_OK, "%s", err.message);
        char what[32];
        snprintf(what, sizeof what, "mode %d", mode);
        expect_cached_bits(m, ids, T, P, what);
        mygpt_gpt_unpack(m);
    }
    mygpt_gpt_free(m);
}

/* The cached attention at every head size it has a copy for (8, 16, 32, 48, 64: several
 * heads of a row at once) and at others (4, 24: one head at a time), grouped or not: a
 * long prompt in one step (the threads share it), then one position at a time, each the
 * full forward's bits */
Test(llama, kv_cache_at_every_head_size_gives_the_full_forwards_bits)
{
    static const int shapes[][3] = {{32, 4, 2}, {64, 8, 4}, {96, 6, 3}, {128, 4, 4}, {48, 1, 1},
                                    {128, 2, 1}, {40, 10, 5}, {72, 3, 3}}; // C, NH, kv heads
    enum { T = 150, P = 120, V = 97 };
    int64_t ids[T];
    for (int i = 0; i < T; i++)
        ids[i] = (i * 37 + 5) % V;
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        const mygpt_config cfg = {.arch = MYGPT_ARCH_LLAMA, .vocab_size = V, .embed_dim = shapes[i][0],
                                  .num_heads = shapes[i][1], .num_kv_heads = shapes[i][2], .num_layers = 2,
                                  .max_seq_len = T};
        mygpt_gpt *m = NULL;
        mygpt_error err = {0};
        cr_assert_eq(mygpt_gpt_create(&m, &cfg, 5 + (uint64_t)i, &err), MYGPT_OK, "%s", err.message);
        char what[32];
        snprintf(what, sizeof what, "C %d, %d heads", cfg.embed_dim, cfg.num_heads);
        expect_cached_bits(m, ids, T, P, what);
        mygpt_gpt_free(m);
    }
}

/* torch.manual_seed(S); Transformer(ModelArgs(...)): model.py's _init_weights drawn from
 * mygpt's generator, every weight the same bits as the file the reference wrote of it */
Test(llama, model_pys_initialisation_bit_for_bit)
{
    for (int i = 0; i < 3; i++) {
        char txt[64];
        llama_golden g;
        mygpt_gpt *m = NULL, *want = golden_model("init", i, &g, txt);
        const mygpt_config cfg = {.arch = MYGPT_ARCH_LLAMA, .embed_dim = g.config[0], .num_layers = g.config[2],
                                  .num_heads = g.config[3], .num_kv_heads = g.config[4], .vocab_size = g.config[5],
                                  .max_seq_len = g.config[6],
                                  .ffn_hidden = mygpt_llama_hidden_dim(g.config[0], g.multiple_of)};
        cr_assert_eq(cfg.ffn_hidden, g.config[1], "model.py's hidden size");
        mygpt_error err = {0};
        cr_assert_eq(mygpt_gpt_create(&m, &cfg, (uint64_t)g.seed, &err), MYGPT_OK, "%s", err.message);
        cr_assert_eq(m->num_parameters, want->num_parameters);
        for (int t = 0; t < MYGPT_NUM_PARAM_TENSORS; t++)
            cr_expect_eq(memcmp(mygpt_param_tensor(&m->params, t), mygpt_param_tensor(&want->params, t),
                                m->param_sizes[t] * sizeof(float)), 0, "%s: %s differs", txt, mygpt_param_tensor_name(t));
        check_logits(m, &g, txt);
        mygpt_gpt_free(want);
        mygpt_gpt_free(m);
        free_golden(&g);
    }
}

/* corpus/llama/stories260K.bin, beside the tests' folder */
static const char *stories(char *buf, size_t n)
{
    snprintf(buf, n, "%s/../../corpus/llama/stories260K.bin", golden_dir());
    return buf;
}

Test(llama, stories260K_logits_and_greedy_ids)
{
    char path[4096];
    if (access(stories(path, sizeof path), R_OK) != 0)
        skip_or_fail_missing("%s is absent", path); // under CI=true: a failure
    llama_golden g = read_golden("llama/stories260K.txt");
    mygpt_gpt *m = load(path);
    m->impl = MYGPT_IMPL_REFERENCE;
    check_logits(m, &g, "stories260K (plain loops)");
    m->impl = MYGPT_IMPL_FAST;
    check_logits(m, &g, "stories260K");
    mygpt_error perr = {0}; // and the weights packed once, as generate packs them (the same bits)
    cr_assert_eq(mygpt_gpt_pack(m, &perr), MYGPT_OK, "%s", perr.message);
    check_logits(m, &g, "stories260K (packed)");
    // run.c -t 0 -n 200: BOS at position 0, each argmax fed back, a 1 stops it
    mygpt_kv_cache c;
    mygpt_error err = {0};
    cr_assert_eq(mygpt_kv_cache_init(&c, m, &err), MYGPT_OK);
    int64_t token = 1;
    int n = 0;
    for (int pos = 0; pos < 200; pos++) {
        cr_assert_eq(mygpt_gpt_forward_cached(m, &c, &token, 1, &err), MYGPT_OK, "%s", err.message);
        token = mygpt_argmax(c.logits, (size_t)m->config.vocab_size);
        if (token == 1)
            break;
        cr_assert_lt(n, g.ngreedy, "more ids than llama2.c chooses");
        cr_assert_eq(token, g.greedy[n], "greedy id %d: %lld, llama2.c's model.py %lld", n, (long long)token,
                     (long long)g.greedy[n]);
        n++;
    }
    cr_assert_eq(n, g.ngreedy);
    mygpt_kv_cache_free(&c);
    mygpt_gpt_free(m);
    free_golden(&g);
}

/* the whole of a file */
static char *slurp(const char *path, size_t *len)
{
    char *data;
    cr_assert_eq(mygpt_read_file(path, &data, len, NULL), MYGPT_OK, "%s", path);
    return data;
}

Test(llama, bin_written_reads_back_the_same)
{
    char path[4096], out[4096];
    temp_path(out, sizeof out, "mygpt_test_llama", "bin");
    for (int i = 0; i < 8; i++) {
        char bin[32];
        snprintf(bin, sizeof bin, "random_%d.bin", i);
        mygpt_gpt *m = load(path_of(path, sizeof path, bin));
        mygpt_error err = {0};
        cr_assert_eq(mygpt_llama2c_save(m, out, &err), MYGPT_OK, "%s", err.message);
        mygpt_gpt *back = load(out);
        cr_assert_eq(back->num_parameters, m->num_parameters);
        cr_assert_eq(memcmp(back->params_memory, m->params_memory, m->num_parameters * sizeof(float)), 0,
                     "%s: the weights read back differ", bin);
        // the file too, but for the RoPE tables, which model.py computes with its own cos and sin
        size_t la, lb;
        char *a = slurp(path, &la), *b = slurp(out, &lb);
        cr_assert_eq(la, lb);
        const size_t tables = (size_t)m->config.max_seq_len * (m->config.embed_dim / m->config.num_heads) * 4;
        const size_t head = la - tables - (m->config.untied_head ? m->param_sizes[MYGPT_PARAM_lmw] * 4 : 0);
        cr_assert_eq(memcmp(a, b, head), 0, "%s: the bytes before the RoPE tables differ", bin);
        cr_assert_eq(memcmp(a + head + tables, b + head + tables, la - head - tables), 0);
        free(a);
        free(b);
        mygpt_gpt_free(back);
        mygpt_gpt_free(m);
    }
    unlink(out);
}

/* writes the first n bytes of src to dst, then `extra` zero bytes */
static void write_cut(const char *dst, const char *src, size_t n, size_t extra)
{
    size_t len;
    char *data = slurp(src, &len);
    FILE *f = fopen(dst, "wb");
    cr_assert(f);
    fwrite(data, 1, n < len ? n : len, f);
    for (size_t i = 0; i < extra; i++)
        fputc(0, f);
    fclose(f);
    free(data);
}

Test(llama, cut_long_or_hostile_files_are_errors)
{
    char path[4096], bad[4096];
    path_of(path, sizeof path, "random_1.bin");
    temp_path(bad, sizeof bad, "mygpt_test_llama_bad", "bin");
    size_t len;
    free(slurp(path, &len));
    const size_t cuts[] = {0, 10, 28, 100, len - 4, len - 1};
    mygpt_gpt *m = NULL;
    mygpt_error err = {0};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        write_cut(bad, path, cuts[i], 0);
        cr_expect_neq(mygpt_llama2c_load(&m, bad, &err), MYGPT_OK, "cut at %zu", cuts[i]);
        cr_expect_null(m);
    }
    write_cut(bad, path, len, 4); // longer than its header says
    cr_expect_eq(mygpt_llama2c_load(&m, bad, &err), MYGPT_EFORMAT);
    cr_expect(strstr(err.message, "bytes, not the"), "%s", err.message);
    // hostile headers: sizes that overflow, heads that do not divide, a negative size
    const int32_t headers[][7] = {{1 << 30, 1 << 30, 1 << 30, 1, 1, 1 << 30, 1 << 30},
                                  {64, 172, 5, 8, 3, 512, 512},
                                  {64, 172, -5, 8, 4, 512, 512},
                                  {63, 172, 5, 7, 7, 512, 512},
                                  {64, 0, 5, 8, 4, 512, 512},
                                  {64, 172, 5, 8, 4, INT32_MIN, 512},
                                  {64, 172, 5, 0, 0, 512, 512},
                                  {64, 172, 5, 8, 4, 512, 0},
                                  {64, 172, 5, 16, 4, 512, 512}}; // (an odd head size: no rotary pairs)
    for (size_t i = 0; i < sizeof headers / sizeof headers[0]; i++) {
        FILE *f = fopen(bad, "wb");
        fwrite(headers[i], sizeof headers[i], 1, f);
        for (int k = 0; k < 4096; k++)
            fputc(0, f);
        fclose(f);
        cr_expect_neq(mygpt_llama2c_load(&m, bad, &err), MYGPT_OK, "header %zu", i);
        cr_expect_null(m);
    }
    unlink(bad);
}

/* A model of 123 layers has '{' at byte 8, where a safetensors file's JSON starts: its
 * hidden_dim (bytes 4 to 7, a safetensors header length's high half) tells it apart, and
 * it reads back as the model it is */
Test(llama, a_header_with_a_brace_at_byte_8_is_still_llama2cs)
{
    const mygpt_config cfg = {.arch = MYGPT_ARCH_LLAMA, .vocab_size = 4, .embed_dim = 2, .num_heads = 1,
                              .num_layers = '{', .max_seq_len = 2, .ffn_hidden = 2};
    mygpt_gpt *m = NULL, *back = NULL;
    mygpt_error err = {0};
    cr_assert_eq(mygpt_gpt_create(&m, &cfg, 5, &err), MYGPT_OK, "%s", err.message);
    char path[4096];
    temp_path(path, sizeof path, "mygpt_test_llama_brace", "bin");
    cr_assert_eq(mygpt_llama2c_save(m, path, &err), MYGPT_OK, "%s", err.message);
    cr_expect_eq(mygpt_model_load(&back, path, &err), MYGPT_OK, "%s", err.message);
    if (back) {
        cr_expect_eq(back->config.num_layers, 123);
        cr_expect_eq(memcmp(back->params_memory, m->params_memory, m->num_parameters * sizeof(float)), 0);
    }
    mygpt_gpt_free(back);
    mygpt_gpt_free(m);
    unlink(path);
}

/* A llama2.c model given where a safetensors file is read (LoRA adapters, mygpt_checkpoint_load)
 * is said to be what it is, not a safetensors file cut short; a llama2.c file one float short is
 * still none, and keeps the safetensors reader's word */
Test(llama, a_llama2c_model_read_as_safetensors_is_named)
{
    const mygpt_config cfg = {.arch = MYGPT_ARCH_LLAMA, .vocab_size = 8, .embed_dim = 4, .num_heads = 2,
                              .num_kv_heads = 1, .num_layers = 1, .max_seq_len = 4, .ffn_hidden = 6};
    mygpt_gpt *m = NULL, *g = NULL;
    mygpt_error err = {0};
    cr_assert_eq(mygpt_gpt_create(&m, &cfg, 5, &err), MYGPT_OK, "%s", err.message);
    char path[4096];
    temp_path(path, sizeof path, "mygpt_test_llama_as_st", "bin");
    cr_assert_eq(mygpt_llama2c_save(m, path, &err), MYGPT_OK, "%s", err.message);
    cr_expect_eq(mygpt_checkpoint_load_adapters(m, path, &err), MYGPT_EFORMAT);
    cr_expect(strstr(err.message, "is a llama2.c model") && strstr(err.message, path), "%s", err.message);
    err = (mygpt_error){0};
    cr_expect_eq(mygpt_checkpoint_load(&g, path, &err), MYGPT_EFORMAT);
    cr_expect(strstr(err.message, "is a llama2.c model"), "%s", err.message);
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    cr_assert_eq(truncate(path, st.st_size - 4), 0); // one float shorter than its header says
    err = (mygpt_error){0};
    cr_expect_eq(mygpt_checkpoint_load_adapters(m, path, &err), MYGPT_EFORMAT);
    cr_expect(strstr(err.message, "larger than the file"), "%s", err.message);
    mygpt_gpt_free(g);
    mygpt_gpt_free(m);
    unlink(path);
}

/* mygpt_model_save's rule, asked first (mygpt_model_check_save): a llama model goes to a
 * .bin as llama2.c's file when the format holds it (interleaved rotary pairs, float32),
 * and is refused with the way out otherwise; any name else takes it as a checkpoint */
Test(llama, model_check_save_says_what_llama2cs_file_cannot_hold)
{
    mygpt_config cfg = {.arch = MYGPT_ARCH_LLAMA, .vocab_size = 8, .embed_dim = 4, .num_heads = 2,
                        .num_kv_heads = 1, .num_layers = 1, .max_seq_len = 4, .ffn_hidden = 6};
    char bin[4096], st[4096];
    temp_path(bin, sizeof bin, "mygpt_test_llama_check_save", "bin");
    temp_path(st, sizeof st, "mygpt_test_llama_check_save", "safetensors");
    for (int halves = 0; halves < 2; halves++) {
        cfg.rope = halves ? MYGPT_ROPE_HALVES : MYGPT_ROPE_INTERLEAVED;
        mygpt_gpt *m = NULL, *back = NULL;
        mygpt_error err = {0};
        cr_assert_eq(mygpt_gpt_create(&m, &cfg, 5, &err), MYGPT_OK, "%s", err.message);
        cr_expect_eq(mygpt_model_check_save(m, st, &err), MYGPT_OK, "%s", err.message);
        const mygpt_status s = mygpt_model_check_save(m, bin, &err);
        if (halves) {
            cr_expect_eq(s, MYGPT_EINVAL);
            cr_expect(strstr(err.message, "not halves") && strstr(err.message, "a name not ending in .bin"), "%s",
                      err.message);
        } else {
            cr_expect_eq(s, MYGPT_OK, "%s", err.message);
            cr_assert_eq(mygpt_model_save(m, bin, &err), MYGPT_OK, "%s", err.message);
            cr_expect(mygpt_llama2c_file(bin), "%s is not llama2.c's file", bin);
            cr_expect_eq(mygpt_model_load(&back, bin, &err), MYGPT_OK, "%s", err.message);
        }
        mygpt_gpt_free(back);
        mygpt_gpt_free(m);
        unlink(bin);
    }
}

/* A header of no model, read as any model file is (mygpt_model_load, as `generate
 * --checkpoint` reads it), is said to be llama2.c's and why, not a safetensors header's
 * length; a header of a model far larger than its file is the two lengths, before any of
 * its memory is asked for (245 TB here, more than any address space) */
Test(llama, model_load_names_what_is_wrong_with_a_header)
{
    char bad[4096];
    temp_path(bad, sizeof bad, "mygpt_test_llama_header", "bin");
    static const struct { int32_t h[7]; const char *why; } cases[] = {
        {{64, 172, 5, 8, 3, 512, 512}, "num_kv_heads=3 must divide num_heads=8"},
        {{64, 172, 5, 7, 7, 512, 512}, "not divisible by num_heads=7"},
        {{0, 172, 5, 8, 4, 512, 512}, "embed_dim must be at least 1"},
        {{64, 172, 5, 8, 4, 512, 0}, "max_seq_len must be at least 1"},
        {{64, 172, 5, 8, 4, 512, -1}, "max_seq_len must be at least 1"},
        {{64, 172, 2147483647, 8, 4, 512, 512}, "num_layers=2147483647 is larger"},
        {{65536, 262144, 1000, 64, 8, -1000000, 100000}, "1028 bytes, not the 245338358022172"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        FILE *f = fopen(bad, "wb");
        cr_assert(f);
        fwrite(cases[i].h, sizeof cases[i].h, 1, f);
        for (int k = 0; k < 1000; k++)
            fputc(0, f);
        fclose(f);
        mygpt_gpt *m = NULL;
        mygpt_error err = {0};
        cr_expect_eq(mygpt_model_load(&m, bad, &err), MYGPT_EFORMAT, "case %zu: %s", i, err.message);
        cr_expect_null(m);
        cr_expect(strstr(err.message, bad) && strstr(err.message, cases[i].why) && !strstr(err.message, "safetensors"),
                  "case %zu: %s", i, err.message);
    }
    unlink(bad);
}

/* Finite weights can still compute logits that overflow (a final norm of 3e38): run.c's
 * loop refuses them where it would draw, argmax too, rather than print token 0 */
Test(llama, run_cs_loop_refuses_logits_that_are_not_finite)
{
    char path[4096];
    if (access(stories(path, sizeof path), R_OK) != 0)
        skip_or_fail_missing("%s is absent", path);
    mygpt_gpt *m = load(path);
    float *norm = mygpt_param_tensor(&m->params, MYGPT_PARAM_lnfw);
    for (size_t i = 0; i < m->param_sizes[MYGPT_PARAM_lnfw]; i++)
        norm[i] = 3e38f;
    mygpt_llama2c_sampler s;
    mygpt_error err = {0};
    cr_assert_eq(mygpt_llama2c_sampler_init(&s, m->config.vocab_size, 0.0f, 0.9f, 1, &err), MYGPT_OK);
    const int64_t prompt[2] = {1, 403};
    int pos = -1;
    cr_expect_eq(mygpt_generate_llama2c(m, &s, prompt, 2, 8, NULL, NULL, &pos, &err), MYGPT_ERANGE);
    cr_expect(strstr(err.message, "at position 1 is") && strstr(err.message, "no distribution"), "%s", err.message);
    cr_expect_eq(pos, 1); // the prompt's first position forced its next token; the second would draw
    mygpt_llama2c_sampler_free(&s);
    mygpt_gpt_free(m);
}

/* A classifier picks a class: run.c's loop refuses it, as the tutorial's does, rather than
 * print tokens from its class scores; no sampler is refused too */
Test(llama, run_cs_loop_refuses_a_classifier)
{
    const mygpt_config cfg = {.vocab_size = 16, .embed_dim = 8, .num_heads = 2, .num_layers = 1, .max_seq_len = 8,
                              .num_classes = 2};
    mygpt_gpt *m = NULL;
    mygpt_error err = {0};
    cr_assert_eq(mygpt_gpt_create(&m, &cfg, 7, &err), MYGPT_OK, "%s", err.message);
    mygpt_llama2c_sampler s;
    cr_assert_eq(mygpt_llama2c_sampler_init(&s, 16, 0.0f, 0.9f, 1, &err), MYGPT_OK);
    const int64_t prompt[1] = {1};
    cr_expect_eq(mygpt_generate_llama2c(m, &s, prompt, 1, 4, NULL, NULL, NULL, &err), MYGPT_EINVAL);
    cr_expect(strstr(err.message, "a classifier (num_classes 2) picks a class"), "%s", err.message);
    mygpt_llama2c_sampler_free(&s);
    mygpt_gpt_free(m);
    // and a language model with no sampler (it crashed)
    mygpt_config lm = cfg;
    lm.num_classes = 0;
    cr_assert_eq(mygpt_gpt_create(&m, &lm, 7, &err), MYGPT_OK, "%s", err.message);
    cr_expect_eq(mygpt_generate_llama2c(m, NULL, prompt, 1, 4, NULL, NULL, NULL, &err), MYGPT_EINVAL);
    cr_expect(strstr(err.message, "none was given"), "%s", err.message);
    mygpt_gpt_free(m);
}

/* A NaN or an infinity in any of a .bin's tensors is refused naming it as run.c does (the
 * model could only print token 0), and never written, nor a model whose rotary pairs are
 * not run.c's: the file there stays as it was */
Test(llama, nonfinite_weights_are_neither_read_nor_written)
{
    char path[4096], bad[4096];
    path_of(path, sizeof path, "random_5.bin"); // untied: the classifier comes after the RoPE tables
    temp_path(bad, sizeof bad, "mygpt_test_llama_nan", "bin");
    mygpt_gpt *m = load(path);
    size_t len;
    char *good = slurp(path, &len);
    const size_t wcls = len - m->param_sizes[MYGPT_PARAM_lmw] * 4;
    const struct { size_t at; float v; const char *name; } cases[] = {
        {28 + 4 * 3, NAN, "token_embedding_table holds a non-finite value (nan at 3)"},
        {wcls - m->param_sizes[MYGPT_PARAM_lnfw] * 4 - 2 * 4 * (size_t)m->config.max_seq_len *
                                                        (m->config.embed_dim / m->config.num_heads) / 2,
         INFINITY, "rms_final_weight holds a non-finite value (inf at 0)"},
        {len - 4, -INFINITY, "wcls holds a non-finite value (-inf at"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *b = malloc(len);
        memcpy(b, good, len);
        memcpy(b + cases[i].at, &cases[i].v, 4);
        FILE *f = fopen(bad, "wb");
        cr_assert(f);
        fwrite(b, 1, len, f);
        fclose(f);
        free(b);
        mygpt_gpt *back = NULL;
        mygpt_error err = {0};
        cr_expect_eq(mygpt_model_load(&back, bad, &err), MYGPT_EFORMAT, "case %zu", i);
        cr_expect_null(back);
        cr_expect(strstr(err.message, bad) && strstr(err.message, cases[i].name), "case %zu: %s", i, err.message);
    }
    // written: refused, the file there kept byte for byte
    FILE *f = fopen(bad, "wb");
    cr_assert(f);
    fwrite(good, 1, len, f);
    fclose(f);
    const int tensors[] = {MYGPT_PARAM_wq, MYGPT_PARAM_lmw};
    for (size_t i = 0; i < 2; i++) {
        float *x = mygpt_param_tensor(&m->params, tensors[i]);
        const float was = x[1];
        x[1] = NAN;
        mygpt_error err = {0};
        cr_expect_eq(mygpt_llama2c_save(m, bad, &err), MYGPT_ERANGE);
        cr_expect(strstr(err.message, i ? "wcls holds" : "wq holds") && strstr(err.message, "not saved"), "%s",
                  err.message);
        x[1] = was;
    }
    // rotary pairs as halves (Hugging Face's): run.c would rotate other channels together
    m->config.rope = MYGPT_ROPE_HALVES;
    mygpt_error err = {0};
    cr_expect_eq(mygpt_llama2c_save(m, bad, &err), MYGPT_EINVAL);
    cr_expect(strstr(err.message, "interleaved (run.c's), not halves"), "%s", err.message);
    size_t now_len;
    char *now = slurp(bad, &now_len);
    cr_expect(now_len == len && memcmp(now, good, len) == 0, "%s was replaced", bad);
    free(now);
    free(good);
    mygpt_gpt_free(m);
    unlink(bad);
}

/* grad_NAME.txt's ids and targets (B, T) and model.py's loss */
typedef struct grad_golden {
    int B, T;
    int64_t *ids, *targets;
    float loss;
} grad_golden;

static grad_golden read_grad_golden(const char *name)
{
    grad_golden g = {0};
    golden_reader r = golden_reader_must_open(name);
    char *line;
    while ((line = golden_read(&r))) {
        if (strncmp(line, "ids ", 4) == 0) {
            cr_assert_eq(sscanf(line, "ids %d %d", &g.B, &g.T), 2);
            const size_t n = (size_t)g.B * g.T;
            g.ids = malloc(n * sizeof *g.ids);
            g.targets = malloc(n * sizeof *g.targets);
            cr_assert_eq(golden_parse_i64(after_words(line, 3), g.ids, n), n);
        } else if (strncmp(line, "targets ", 8) == 0) {
            cr_assert(g.ids, "%s: targets before ids", name);
            cr_assert_eq(golden_parse_i64(after_words(line, 1), g.targets, (size_t)g.B * g.T), (size_t)g.B * g.T);
        } else {
            cr_assert_eq(sscanf(line, "loss %f", &g.loss), 1, "%s: %s", name, line);
        }
    }
    golden_reader_close(&r);
    return g;
}

/* The model of llama/NAME.bin (or stories260K) trained one forward and backward on
 * grad_NAME.txt's ids and targets: the loss and every parameter's gradient within TOL of
 * model.py's (grad_NAME.bin), with the fast kernels and with the plain loops */
static void check_grads(const char *name, const char *model_path)
{
    char txt[96], bin[96], path[4096];
    snprintf(txt, sizeof txt, "llama/grad_%s.txt", name);
    snprintf(bin, sizeof bin, "grad_%s.bin", name);
    grad_golden g = read_grad_golden(txt);
    mygpt_gpt *m = load(model_path), *want = load(path_of(path, sizeof path, bin));
    cr_assert_eq(m->num_parameters, want->num_parameters);
    for (int impl = 0; impl < 2; impl++) {
        m->impl = impl ? MYGPT_IMPL_REFERENCE : m->impl;
        mygpt_trainer *tr = NULL;
        mygpt_error err = {0};
        float loss = 0;
        cr_assert_eq(mygpt_trainer_create(&tr, m, &err), MYGPT_OK, "%s", err.message);
        cr_assert_eq(mygpt_trainer_forward(tr, g.ids, g.targets, g.B, g.T, &loss, &err), MYGPT_OK, "%s",
                     err.message);
        cr_expect_leq(fabs(loss - g.loss), TOL * fmax(1.0, fabs(g.loss)), "%s: loss %.9g, model.py %.9g", name, loss,
                      g.loss);
        cr_assert_eq(mygpt_trainer_backward(tr, &err), MYGPT_OK, "%s", err.message);
        double most = 0;
        for (int t = 0; t < MYGPT_NUM_PARAM_TENSORS; t++) {
            const size_t n = m->param_sizes[t];
            if (!n)
                continue;
            const double w = worst(mygpt_param_tensor(&tr->grads, t), mygpt_param_tensor(&want->params, t), n);
            cr_expect_leq(w, TOL, "%s: d %s off by %g", name, mygpt_param_tensor_name(t), w);
            most = fmax(most, w);
        }
        cr_log_info("%s (%s): gradients within %.3g x max(1, |grad|)", name, impl ? "plain loops" : "fast", most);
        mygpt_trainer_free(tr);
    }
    mygpt_gpt_free(want);
    mygpt_gpt_free(m);
    free(g.ids);
    free(g.targets);
}

Test(llama, gradients_are_model_pys_random_models)
{
    char name[32], path[4096], file[64];
    for (int i = 0; i < 8; i++) {
        snprintf(name, sizeof name, "random_%d", i);
        snprintf(file, sizeof file, "random_%d.bin", i);
        check_grads(name, path_of(path, sizeof path, file));
    }
}

/* random_N.bin, model.py's gradients of it and its weights after model.py's AdamW step */
static void load_adamw_case(int i, mygpt_gpt **m, mygpt_gpt **grads, mygpt_gpt **want)
{
    char path[4096], file[64];
    snprintf(file, sizeof file, "random_%d.bin", i);
    *m = load(path_of(path, sizeof path, file));
    snprintf(file, sizeof file, "grad_random_%d.bin", i);
    *grads = load(path_of(path, sizeof path, file));
    snprintf(file, sizeof file, "adamw_random_%d.bin", i);
    *want = load(path_of(path, sizeof path, file));
}

/* model.py's configure_optimizers(0.1, 5e-4, (0.9, 0.95)): AdamW in two groups, weight
 * decay on the state_dict's tensors of 2 or more dimensions only, each group a mygpt
 * optimizer over its ranges of the block. One step from model.py's gradients
 * (grad_random_N.bin) gives adamw_random_N.bin's weights bit for bit. */
Test(llama, adamw_step_of_model_pys_groups_bit_for_bit)
{
    for (int i = 0; i < 8; i++) {
        mygpt_gpt *m, *grads, *want;
        load_adamw_case(i, &m, &grads, &want);
        const int n = mygpt_state_dict_len(&m->config);
        size_t start[2][64], len[2][64];
        int count[2] = {0, 0};
        cr_assert_leq(n, 64);
        for (int j = 0; j < n; j++) {
            mygpt_state_entry e;
            mygpt_state_dict_entry(&m->config, &m->params, j, &e);
            const int k = e.ndim >= 2 ? 0 : 1; // decay, no decay
            start[k][count[k]] = (size_t)(e.data - m->params_memory);
            len[k][count[k]++] = e.numel;
        }
        for (int k = 0; k < 2; k++) {
            mygpt_optimizer opt;
            mygpt_adamw_init(&opt, 5e-4);
            opt.beta2 = 0.95;
            opt.weight_decay = k == 0 ? 0.1 : 0.0;
            mygpt_error err = {0};
            cr_assert_eq(mygpt_optimizer_step_ranges(&opt, m->params_memory, grads->params_memory, start[k], len[k],
                                                     count[k], &err),
                         MYGPT_OK, "%s", err.message);
            mygpt_optimizer_free(&opt);
        }
        cr_assert_eq(m->num_parameters, want->num_parameters);
        for (int t = 0; t < MYGPT_NUM_PARAM_TENSORS; t++)
            cr_expect_eq(memcmp(mygpt_param_tensor(&m->params, t), mygpt_param_tensor(&want->params, t),
                                m->param_sizes[t] * sizeof(float)), 0, "random_%d: %s differs after the step", i,
                         mygpt_param_tensor_name(t));
        mygpt_gpt_free(m);
        mygpt_gpt_free(grads);
        mygpt_gpt_free(want);
    }
}

/* The same step as one optimizer: a trainer with decay_groups (what `mygpt train
 * --decay-groups` and --arch nanogpt step with) gives adamw_random_N.bin's weights bit for bit. */
Test(llama, trainer_step_with_decay_groups_is_configure_optimizers)
{
    for (int i = 0; i < 8; i++) {
        mygpt_gpt *m, *grads, *want;
        load_adamw_case(i, &m, &grads, &want);
        mygpt_error err = {0};
        mygpt_trainer *tr = NULL;
        cr_assert_eq(mygpt_trainer_create(&tr, m, &err), MYGPT_OK, "%s", err.message);
        cr_assert_eq(grads->num_parameters, m->num_parameters);
        memcpy(tr->grads_memory, grads->params_memory, m->num_parameters * sizeof(float));
        tr->decay_groups = 1;
        mygpt_optimizer opt;
        mygpt_adamw_init(&opt, 5e-4);
        opt.beta2 = 0.95;
        opt.weight_decay = 0.1;
        cr_assert_eq(mygpt_trainer_step(tr, &opt, &err), MYGPT_OK, "%s", err.message);
        cr_expect_eq(opt.n, m->num_parameters, "random_%d: the state is not one float a parameter", i);
        cr_assert_eq(m->num_parameters, want->num_parameters);
        cr_expect_eq(memcmp(m->params_memory, want->params_memory, m->num_parameters * sizeof(float)), 0,
                     "random_%d differs after the step", i);
        mygpt_optimizer_free(&opt);
        mygpt_trainer_free(tr);
        mygpt_gpt_free(m);
        mygpt_gpt_free(grads);
        mygpt_gpt_free(want);
    }
}

Test(llama, gradients_are_model_pys_stories260K)
{
    char path[4096];
    check_grads("stories260K", stories(path, sizeof path));
}

/* `mygpt train --arch llama --save FILE.bin` writes llama2.c's file (run.c's format): read
 * back, every weight the same bits as the same run's --save FILE.safetensors */
Test(llama_cli, train_saves_llama2cs_bin, .timeout = 120)
{
    const char *text = data_file_or_skip("the-verdict.txt");
    char bin[4096], st[4096];
    temp_path(bin, sizeof bin, "llama_train", "bin");
    temp_path(st, sizeof st, "llama_train", "safetensors");
    mygpt_gpt *m[2] = {NULL, NULL};
    for (int i = 0; i < 2; i++) {
        char *const argv[] = {MYGPT_EXE, "train", "--text", (char *)text, "--preset", "tiny", "--arch", "llama",
                              "--kv-heads", "1", "--ffn-hidden", "24", "--steps", "3", "--save", i ? st : bin, NULL};
        proc_result r;
        cr_assert_eq(run_process(argv, &r), 0);
        cr_assert_eq(r.status, 0, "%s", r.err);
        proc_result_free(&r);
        mygpt_error err = {0};
        cr_assert_eq(i ? mygpt_model_load(&m[i], st, &err) : mygpt_llama2c_load(&m[i], bin, &err), MYGPT_OK, "%s",
                     err.message);
    }
    cr_assert_eq(mygpt_kv_heads(&m[0]->config), 1);
    cr_assert_eq(mygpt_ffn_hidden(&m[0]->config), 24);
    cr_assert_eq(m[0]->num_parameters, m[1]->num_parameters);
    for (int t = 0; t < MYGPT_NUM_PARAM_TENSORS; t++)
        cr_expect_eq(memcmp(mygpt_param_tensor(&m[0]->params, t), mygpt_param_tensor(&m[1]->params, t),
                            m[0]->param_sizes[t] * sizeof(float)), 0, "%s differs", mygpt_param_tensor_name(t));
    mygpt_gpt_free(m[0]);
    mygpt_gpt_free(m[1]);
    unlink(bin);
    unlink(st);
}

Test(llama, counts_llama2_7b)
{
    // Llama 2 7B: dim 4096, 32 layers, 32 heads, vocabulary 32000, hidden 11008 (multiple_of 256), untied
    const mygpt_config cfg = {.arch = MYGPT_ARCH_LLAMA, .vocab_size = 32000, .embed_dim = 4096, .num_heads = 32,
                              .num_layers = 32, .max_seq_len = 4096, .untied_head = 1};
    mygpt_param_counts pc;
    cr_assert_eq(mygpt_param_count(&cfg, &pc, NULL), MYGPT_OK);
    cr_expect_eq(mygpt_ffn_hidden(&cfg), 11008);
    cr_expect_eq(pc.total, 6738415616ULL, "%llu", (unsigned long long)pc.total);
    cr_expect_eq(pc.position_embedding, 0);
    cr_expect_eq(mygpt_llama_hidden_dim(64, 4), 172); // stories260K's
}

Test(llama, state_dict_is_model_pys_and_safetensors_read_back)
{
    char path[4096], out[4096];
    mygpt_gpt *m = load(path_of(path, sizeof path, "random_5.bin")); // untied, 4 key/value heads of 8
    // model.py's named_parameters: each layer's Linears, then its two norms (registered last)
    static const char *const want[] = {"tok_embeddings.weight", "layers.0.attention.wq.weight",
                                       "layers.0.attention.wk.weight", "layers.0.attention.wv.weight",
                                       "layers.0.attention.wo.weight", "layers.0.feed_forward.w1.weight",
                                       "layers.0.feed_forward.w2.weight", "layers.0.feed_forward.w3.weight",
                                       "layers.0.attention_norm.weight", "layers.0.ffn_norm.weight",
                                       "norm.weight", "output.weight"};
    const int n = mygpt_state_dict_len(&m->config);
    cr_assert_eq(n, 12);
    for (int j = 0; j < n; j++) {
        mygpt_state_entry e;
        mygpt_state_dict_entry(&m->config, &m->params, j, &e);
        cr_expect_str_eq(e.name, want[j]);
    }
    temp_path(out, sizeof out, "mygpt_test_llama", "safetensors");
    mygpt_error err = {0};
    cr_assert_eq(mygpt_checkpoint_save(m, out, &err), MYGPT_OK, "%s", err.message);
    mygpt_gpt *back = NULL;
    cr_assert_eq(mygpt_model_load(&back, out, &err), MYGPT_OK, "%s", err.message);
    const mygpt_config *a = &m->config, *b = &back->config;
    cr_expect(b->arch == a->arch && b->vocab_size == a->vocab_size && b->embed_dim == a->embed_dim &&
              b->num_heads == a->num_heads && b->num_layers == a->num_layers && b->max_seq_len == a->max_seq_len &&
              mygpt_kv_heads(b) == mygpt_kv_heads(a) && mygpt_ffn_hidden(b) == mygpt_ffn_hidden(a) &&
              b->untied_head == a->untied_head && b->rope == a->rope, "the configuration read back differs");
    cr_assert_eq(back->num_parameters, m->num_parameters);
    cr_expect_eq(memcmp(back->params_memory, m->params_memory, m->num_parameters * sizeof(float)), 0);
    unlink(out);
    mygpt_gpt_free(back);
    mygpt_gpt_free(m);
}

/* ---- the tool ------------------------------------------------------------------------ */

Test(llama_cli, forward_prints_stories260Ks_logits_and_params_counts_llama2_7b, .timeout = 60)
{
    char path[4096];
    if (access(stories(path, sizeof path), R_OK) != 0)
        skip_or_fail_missing("%s is absent", path); // under CI=true: a failure
    llama_golden g = read_golden("llama/stories260K.txt");
    char ids[4096] = "", *at = ids;
    for (int t = 0; t < g.T; t++)
        at += snprintf(at, sizeof ids - (size_t)(at - ids), "%s%lld", t ? "," : "", (long long)g.ids[t]);
    char *const argv[] = {MYGPT_EXE, "forward", "--checkpoint", path, "--ids", ids, "--format", "exact", NULL};
    proc_result r;
    cr_assert_eq(run_process(argv, &r), 0);
    cr_assert_eq(r.status, 0, "%s", r.err);
    const size_t n = (size_t)g.T * g.V;
    float *got = malloc(n * sizeof *got);
    char *line = r.out;
    for (size_t i = 0; i < n; i++) { // one float32 a line, as 8 hex digits
        char hex[9] = {0};
        cr_assert_eq(sscanf(line, "%8s", hex), 1, "logit %zu of %zu missing", i, n);
        got[i] = golden_unhex32(hex);
        line = strchr(line, '\n') + 1;
    }
    const double w = worst(got, g.logits, n);
    cr_expect_leq(w, TOL, "mygpt forward off by %g", w);
    free(got);
    proc_result_free(&r);
    free_golden(&g);

    cr_assert_eq(run_words(MYGPT_EXE, "params --arch llama --vocab 32000 --embed 4096 --heads 32 --layers 32 "
                                      "--untied-head", &r), 0);
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "Total parameters:                  6738415616\n"), "%s", r.out);
    proc_result_free(&r);
    // a cut model is one line naming the file and both lengths
    char cut[4096];
    temp_path(cut, sizeof cut, "mygpt_test_llama_cut", "bin");
    write_cut(cut, path, 1000, 0);
    char *const bad[] = {MYGPT_EXE, "forward", "--checkpoint", cut, "--ids", "1,2", NULL};
    cr_assert_eq(run_process(bad, &r), 0);
    cr_expect_neq(r.status, 0);
    cr_expect(strstr(r.err, cut) && strstr(r.err, "1000 bytes, not the 1056540") && count_lines(r.err) == 1, "%s",
              r.err);
    proc_result_free(&r);
    unlink(cut);
}

/* --qkv-bias, which llama's attention has no place for, is refused by every command that
 * builds a model from flags (it was ignored: the model built had no biases) */
Test(llama_cli, qkv_bias_is_refused)
{
    static const char *const CMDS[] = {
        "params --arch llama --qkv-bias --vocab 10 --embed 8 --heads 2 --layers 1",
        "forward --seed 1 --arch llama --qkv-bias --vocab 10 --embed 8 --heads 2 --layers 1 --ids 1,2",
        "train --text /nonexistent --seed 1 --arch llama --qkv-bias --vocab 10 --embed 8 --heads 2 --layers 1"};
    for (size_t i = 0; i < sizeof CMDS / sizeof CMDS[0]; i++) {
        proc_result r;
        cr_assert_eq(run_words(MYGPT_EXE, CMDS[i], &r), 0);
        cr_expect_eq(r.status, 2, "%s: %d", CMDS[i], r.status);
        cr_expect(strstr(r.err, "--qkv-bias: the llama model has no bias") && count_lines(r.err) == 1 &&
                      r.out[0] == '\0', "%s: %s", CMDS[i], r.err);
        proc_result_free(&r);
    }
}

/* Hugging Face's halves are llama2.c's pairs with the channels reordered: channel i and
 * i + d/2 of a head are pair i's two, so rotating the halves of x is rotating the pairs of
 * x interleaved (x[i] to 2i, x[i + d/2] to 2i + 1), then undoing the interleaving. Each
 * takes its reference's cosines and sines (the notebook's PyTorch: SLEEF's functions;
 * run.c: the C library's), which differ in the last bit now and then: equal to 1e-6. */
Test(llama, rope_halves_are_the_pairs_reordered)
{
    enum { ROWS = 6, T = 3, HEADS = 2, D = 8, W = HEADS * D };
    float halves[ROWS * W], pairs[ROWS * W], before[ROWS * W];
    for (int i = 0; i < ROWS * W; i++)
        before[i] = halves[i] = (float)((i * 37) % 23) / 7.0f - 1.5f;
    for (int r = 0; r < ROWS; r++)
        for (int h = 0; h < HEADS; h++)
            for (int i = 0; i < D / 2; i++) {
                const float *x = halves + r * W + h * D;
                pairs[r * W + h * D + 2 * i] = x[i];
                pairs[r * W + h * D + 2 * i + 1] = x[i + D / 2];
            }
    mygpt_rope_heads(halves, ROWS, T, 5, HEADS, D, 1, 0);
    mygpt_rope_heads(pairs, ROWS, T, 5, HEADS, D, 0, 0);
    for (int r = 0; r < ROWS; r++)
        for (int h = 0; h < HEADS; h++)
            for (int i = 0; i < D / 2; i++) {
                const float *x = halves + r * W + h * D, *y = pairs + r * W + h * D;
                cr_expect(fabsf(x[i] - y[2 * i]) <= 1e-6f && fabsf(x[i + D / 2] - y[2 * i + 1]) <= 1e-6f,
                          "row %d head %d pair %d: %.9g, %.9g against %.9g, %.9g", r, h, i, (double)x[i],
                          (double)x[i + D / 2], (double)y[2 * i], (double)y[2 * i + 1]);
            }
    int moved = 0; // (positions 5 to 7: every pair turns)
    for (int i = 0; i < ROWS * W; i++)
        moved += halves[i] != before[i];
    cr_expect_gt(moved, ROWS * W / 2, "the rotation moved %d of %d values", moved, ROWS * W);
}

/* sum(out * wt) of RMSNorm (which 0), SwiGLU (1) or RoPE (2: pairs, 3: halves) over x
 * (N, C): the scalar whose gradient the backward kernels give, for central differences */
enum { FD_N = 3, FD_C = 8 };

static double fd_loss(int which, const float *x, const float *w, const float *b, const float *wt)
{
    float out[FD_N * FD_C];
    if (which == 0)
        mygpt_rmsnorm_forward(out, x, w, FD_N, FD_C, 1e-5f);
    else if (which == 1)
        mygpt_swiglu_forward(out, x, b, FD_N * FD_C);
    else {
        memcpy(out, x, sizeof out);
        mygpt_rope_heads(out, FD_N, FD_N, 2, 2, FD_C / 2, which == 3, 0);
    }
    double s = 0;
    for (int i = 0; i < FD_N * FD_C; i++)
        s += (double)out[i] * wt[i];
    return s;
}

/* RMSNorm's, SwiGLU's and the rotary positions' backward kernels: d x (and RMSNorm's d
 * weight, SwiGLU's d b) against central differences of sum(out * wt) */
Test(llama, backward_kernels_match_finite_differences)
{
    float x[FD_N * FD_C], w[FD_C], b[FD_N * FD_C], wt[FD_N * FD_C];
    for (int i = 0; i < FD_N * FD_C; i++) {
        x[i] = (float)((i * 37) % 23) / 9.0f - 1.2f;
        b[i] = (float)((i * 11) % 17) / 8.0f - 1.0f;
        wt[i] = (float)((i * 29) % 19) / 10.0f - 0.9f;
    }
    for (int j = 0; j < FD_C; j++)
        w[j] = 0.5f + 0.1f * (float)j;
    const float h = 1e-2f;
    for (int which = 0; which < 4; which++) {
        float dx[FD_N * FD_C] = {0}, dw[FD_C] = {0}, db[FD_N * FD_C] = {0};
        if (which == 0)
            mygpt_rmsnorm_backward(dx, dw, wt, x, w, FD_N, FD_C, 1e-5f);
        else if (which == 1)
            mygpt_swiglu_backward(dx, db, wt, x, b, FD_N * FD_C);
        else {
            memcpy(dx, wt, sizeof dx);
            mygpt_rope_heads_backward(dx, FD_N, FD_N, 2, 2, FD_C / 2, which == 3, 0);
        }
        for (int i = 0; i < FD_N * FD_C + FD_C; i++) { // each x, then (RMSNorm) each weight
            const int of_w = i >= FD_N * FD_C;
            if (of_w && which != 0)
                break;
            float *v = of_w ? &w[i - FD_N * FD_C] : &x[i];
            const float keep = *v;
            *v = keep + h;
            const double up = fd_loss(which, x, w, b, wt);
            *v = keep - h;
            const double down = fd_loss(which, x, w, b, wt);
            *v = keep;
            const double fd = (up - down) / (2.0 * h), got = of_w ? dw[i - FD_N * FD_C] : dx[i];
            cr_expect_leq(fabs(fd - got), 2e-3 * fmax(1.0, fabs(fd)), "kernel %d: d %s[%d] %g, differences %g",
                          which, of_w ? "w" : "x", i, got, fd);
        }
        for (int i = 0; which == 1 && i < FD_N * FD_C; i++) { // SwiGLU's d b: silu(a) exactly
            const double silu = x[i] / (1.0 + exp(-(double)x[i]));
            cr_expect_leq(fabs(db[i] - wt[i] * silu), 1e-6, "d b[%d]", i);
        }
    }
}
