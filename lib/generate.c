/*
 * generate.c - the KV-cache forward pass and the generation loop (mygpt/generate.h).
 * Each new row goes through the same per-row arithmetic as mygpt_gpt_forward (the
 * matmul kernel computes every output the same way whatever the number of rows, and
 * attention uses the same row function), so cached logits are the full forward's bits.
 */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "mygpt/generate.h"
#include "mygpt/layers.h"
#include "attention_row.h"
#include "internal.h"
#include "simd.h"

mygpt_status mygpt_kv_cache_pack(mygpt_kv_cache *c, const mygpt_gpt *g, mygpt_error *err)
{
    mygpt_packed_model_free(c->packed);
    c->packed = NULL;
    return mygpt_packed_model_make(&c->packed, g, err);
}

/* out (n, OC) = inp (n, C) @ W^T + b through the packed weight when there is one */
static mygpt_status linear(float *out, const float *inp, const float *w, const float *b, int n,
                           int C, int OC, int gelu, const mygpt_packed_weight *pw, mygpt_error *err)
{
    if (mygpt_matmul_packed_fits(pw))
        return mygpt_matmul_prepacked(out, inp, pw, b, (size_t)n, gelu, err);
    return mygpt_matmul_ex(out, inp, w, b, (size_t)n, C, OC, gelu, err);
}

mygpt_status mygpt_kv_cache_init(mygpt_kv_cache *c, const mygpt_gpt *g, mygpt_error *err)
{
    memset(c, 0, sizeof *c);
    const size_t L = (size_t)g->config.num_layers, M = (size_t)g->config.max_seq_len;
    const size_t C = (size_t)g->config.embed_dim;
    c->capacity = g->config.max_seq_len;
    if (!(c->memory = malloc(2 * L * M * C * sizeof(float))))
        return mygpt_fail(err, MYGPT_ENOMEM, "out of memory for a KV cache of %zu floats", 2 * L * M * C);
    c->k = c->memory;
    c->v = c->memory + L * M * C;
    return MYGPT_OK;
}

void mygpt_kv_cache_reset(mygpt_kv_cache *c)
{
    c->len = 0;
}

void mygpt_kv_cache_free(mygpt_kv_cache *c)
{
    free(c->memory);
    free(c->scratch);
    mygpt_packed_model_free(c->packed);
    memset(c, 0, sizeof *c);
}

/* room for n rows of scratch */
static mygpt_status ensure_rows(mygpt_kv_cache *c, const mygpt_gpt *g, int n, mygpt_error *err)
{
    const int threads = omp_get_max_threads();
    if (n <= c->rows_cap && threads <= c->att_rows)
        return MYGPT_OK;
    n = n > c->rows_cap ? n : c->rows_cap;
    const size_t C = (size_t)g->config.embed_dim, V = (size_t)g->config.vocab_size;
    const size_t M = (size_t)g->config.max_seq_len, r = (size_t)n;
    const size_t team = (size_t)threads;
    const size_t total = V + r * (5 * C + 4 * C) + team * M; // logits; x ln q atty proj, fch; att rows
    float *s = malloc(total * sizeof *s);
    if (!s)
        return mygpt_fail(err, MYGPT_ENOMEM, "out of memory for %d cached rows", n);
    free(c->scratch);
    c->scratch = s;
    c->rows_cap = n;
    c->att_rows = threads;
    c->logits = s;
    s += V;
    c->x = s;    s += r * C;
    c->ln = s;   s += r * C;
    c->q = s;    s += r * C;
    c->atty = s; s += r * C;
    c->proj = s; s += r * C;
    c->fch = s;  s += r * 4 * C;
    c->att = s;
    return MYGPT_OK;
}

/* Each new row's query against the cached keys 0 .. its position, head by head: the
 * same row function as the full forward (same bits), compiled for the widest vector
 * unit (fmaf becomes an instruction), the (row, head) pairs shared among the threads
 * when there is enough work. */
MYGPT_CLONES static void cached_attention(mygpt_kv_cache *c, const float *kc, const float *vc,
                                          int n, int t0, int M, int C, int NH, int d, float scale)
{
    const int pairs = n * NH;
    const int par = (size_t)pairs * (t0 + n) * d > 32768;
    const int max = omp_get_max_threads(), team = !par ? 1 : max < c->att_rows ? max : c->att_rows;
#pragma omp parallel for schedule(static) num_threads(team) if (par)
    for (int ph = 0; ph < pairs; ph++) {
        const int r = ph / NH, h = ph % NH;
        float *att = c->att + (size_t)omp_get_thread_num() * M; // one row of scores per thread
        mygpt_attention_row(c->atty + (size_t)r * C + h * d, att, c->q + (size_t)r * C + h * d, kc + h * d,
                            vc + h * d, t0 + r, M, C, d, scale, 0);
    }
}

#define CHECK(call)                                                                                \
    do {                                                                                       \
        if ((st = (call)) != MYGPT_OK)                                                         \
            return st;                                                                         \
    } while (0)

mygpt_status mygpt_gpt_forward_cached(mygpt_gpt *g, mygpt_kv_cache *c, const int64_t *ids, int n,
                                      mygpt_error *err)
{
    const mygpt_config *cfg = &g->config;
    const int C = cfg->embed_dim, NH = cfg->num_heads, V = cfg->vocab_size, M = cfg->max_seq_len;
    const int d = C / NH, t0 = c->len;
    mygpt_status st;
    if (n < 1)
        return mygpt_fail(err, MYGPT_EINVAL, "need at least one new token, got %d", n);
    if (t0 + n > M)
        return mygpt_fail(err, MYGPT_ERANGE, "the KV cache holds %d positions: %d + %d exceed max_seq_len=%d",
                          M, t0, n, M);
    for (int r = 0; r < n; r++)
        if (ids[r] < 0 || ids[r] >= V)
            return mygpt_fail(err, MYGPT_ERANGE, "token id %lld at %d is outside [0, %d)",
                              (long long)ids[r], r, V);
    CHECK(ensure_rows(c, g, n, err));
    mygpt_packed_model *packed = c->packed ? c->packed : g->packed; /* the cache's, or the model's */
    const mygpt_params *w = &g->params;
    const size_t N = (size_t)n, Cs = (size_t)C, MC = (size_t)M * C;
    const float scale = (float)sqrt((double)d);
    // x = E[ids] + P[t0 .. t0 + n - 1]                                  (n, C)
    for (int r = 0; r < n; r++)
        for (int i = 0; i < C; i++)
            c->x[(size_t)r * C + i] = w->wte[(size_t)ids[r] * C + i] + w->wpe[(size_t)(t0 + r) * C + i];
    for (int l = 0; l < cfg->num_layers; l++) {
        const size_t lc = (size_t)l * Cs, lcc = (size_t)l * Cs * Cs;
        float *kc = c->k + l * MC, *vc = c->v + l * MC; // (maxT, C) this layer's cache
        const mygpt_packed_weight *pl = packed ? mygpt_packed_layer(packed, l) : NULL;
#define PW(i) (pl ? pl + (i) : NULL)
        mygpt_layernorm_forward(c->ln, c->x, w->ln1w + lc, w->ln1b + lc, N, C);
        CHECK(linear(c->q, c->ln, w->wq + lcc, NULL, n, C, C, 0, PW(MYGPT_P_WQ), err));
        CHECK(linear(kc + (size_t)t0 * C, c->ln, w->wk + lcc, NULL, n, C, C, 0, PW(MYGPT_P_WK), err));
        CHECK(linear(vc + (size_t)t0 * C, c->ln, w->wv + lcc, NULL, n, C, C, 0, PW(MYGPT_P_WV), err));
        cached_attention(c, kc, vc, n, t0, M, C, NH, d, scale);
        CHECK(linear(c->proj, c->atty, w->wo + lcc, NULL, n, C, C, 0, PW(MYGPT_P_WO), err));
        mygpt_residual_forward(c->x, c->proj, N * Cs);
        mygpt_layernorm_forward(c->ln, c->x, w->ln2w + lc, w->ln2b + lc, N, C);
        CHECK(linear(c->fch, c->ln, w->fc1w + 4 * lcc, w->fc1b + 4 * lc, n, C, 4 * C, 1, PW(MYGPT_P_FC1), err));
        CHECK(linear(c->proj, c->fch, w->fc2w + 4 * lcc, w->fc2b + lc, n, 4 * C, C, 0, PW(MYGPT_P_FC2), err));
#undef PW
        mygpt_residual_forward(c->x, c->proj, N * Cs);
    }
    // only the last position's logits are needed to pick the next token    (V)
    const float *last = c->x + (N - 1) * Cs;
    mygpt_layernorm_forward(c->ln, last, w->lnfw, w->lnfb, 1, C);
    CHECK(linear(c->logits, c->ln, w->wte, NULL, 1, C, V, 0, packed ? &packed->head : NULL, err));
    c->len = t0 + n;
    return MYGPT_OK;
}

mygpt_status mygpt_generate(mygpt_gpt *g, mygpt_rng *rng, const int64_t *prompt, int n_prompt,
                            int max_new, const mygpt_sampling *s, int64_t eos, int use_cache,
                            int64_t *out, int *n_out, mygpt_error *err)
{
    const int M = g->config.max_seq_len, V = g->config.vocab_size;
    mygpt_status st = MYGPT_OK;
    if (n_prompt < 1 || max_new < 0)
        return mygpt_fail(err, MYGPT_EINVAL, "need a prompt of at least one token and max_new >= 0 (got %d, %d)",
                          n_prompt, max_new);
    memcpy(out, prompt, (size_t)n_prompt * sizeof *out);
    int n = n_prompt;
    *n_out = n;
    float *logits = malloc((size_t)V * sizeof *logits), *scratch = malloc((size_t)V * sizeof *scratch);
    mygpt_kv_cache cache = {0};
    if (!logits || !scratch)
        st = mygpt_fail(err, MYGPT_ENOMEM, "%s", "out of memory for sampling");
    if (st == MYGPT_OK && use_cache)
        st = mygpt_kv_cache_init(&cache, g, err);
    if (st == MYGPT_OK && use_cache && max_new > 1 && !g->packed) // the weights stay as they are until we return
        st = mygpt_kv_cache_pack(&cache, g, err);
    for (int step = 0; step < max_new && st == MYGPT_OK; step++) {
        const int start = n > M ? n - M : 0, len = n - start; // idx[:, -M:]
        if (use_cache && start == 0) {
            // positions 0 .. n-1: only those not yet cached run (the prompt, then one)
            st = mygpt_gpt_forward_cached(g, &cache, out + cache.len, n - cache.len, err);
            if (st == MYGPT_OK)
                memcpy(logits, cache.logits, (size_t)V * sizeof *logits);
        } else { // the whole window, as the tutorial (and a full cache) must
            st = mygpt_gpt_forward(g, out + start, 1, len, err);
            if (st == MYGPT_OK)
                memcpy(logits, g->acts.logits + (size_t)(len - 1) * V, (size_t)V * sizeof *logits);
        }
        int64_t next = 0;
        if (st == MYGPT_OK)
            st = mygpt_sample_next(rng, logits, (size_t)V, s, scratch, &next, err);
        if (st != MYGPT_OK || next == eos)
            break;
        out[n++] = next;
        *n_out = n;
    }
    mygpt_kv_cache_free(&cache);
    free(logits);
    free(scratch);
    return st;
}
