/*
 * kv_cache.c - the KV cache, its layout (every layer's keys, values and transposed keys
 * in one block), and the forward pass over new tokens that reads it (mygpt/kv_cache.h).
 * Each new row goes through the same per-row arithmetic as mygpt_gpt_forward (the
 * matmul kernel computes every output the same way whatever the number of rows, and
 * attention uses the same row function), so cached logits are the full forward's bits.
 */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "mygpt/kv_cache.h"
#include "mygpt/layers.h"
#include "base/base.h"
#include "model/block.h"

mygpt_status mygpt_kv_cache_init(mygpt_kv_cache *c, const mygpt_gpt *g, mygpt_error *err)
{
    memset(c, 0, sizeof *c);
    const size_t L = (size_t)g->config.num_layers, M = (size_t)g->config.max_seq_len;
    const size_t C = (size_t)g->config.embed_dim;
    const size_t ldk = (M + MYGPT_KT_BLOCK - 1) / MYGPT_KT_BLOCK * MYGPT_KT_BLOCK;
    c->capacity = g->config.max_seq_len;
    // zeroed: a block of scores past the cached keys reads kt's padding (then dropped)
    if (!(c->memory = calloc(2 * L * M * C + L * C * ldk, sizeof(float))))
        return mygpt_fail(err, MYGPT_ENOMEM, "out of memory for a KV cache of %zu floats",
                          2 * L * M * C + L * C * ldk);
    c->k = c->memory;
    c->v = c->memory + L * M * C;
    c->kt = c->memory + 2 * L * M * C;
    c->ldk = (int)ldk;
    return MYGPT_OK;
}

mygpt_kv_layer mygpt_kv_cache_layer(const mygpt_kv_cache *c, const mygpt_config *cfg, int l)
{
    const size_t MC = (size_t)cfg->max_seq_len * (size_t)cfg->embed_dim; // one layer's keys (maxT, C)
    const size_t KTC = (size_t)cfg->embed_dim * (size_t)c->ldk;         // one layer's kt
    return (mygpt_kv_layer){c->k + (size_t)l * MC, c->v + (size_t)l * MC, c->kt + (size_t)l * KTC};
}

void mygpt_kv_cache_reset(mygpt_kv_cache *c)
{
    c->len = 0;
}

void mygpt_kv_cache_free(mygpt_kv_cache *c)
{
    free(c->memory);
    free(c->scratch);
    memset(c, 0, sizeof *c);
}

/* The scratch of a step of `rows` rows and a team of `threads`, one list that both
 * sizes it (base NULL) and carves it: returns its floats. */
static size_t carve_rows(mygpt_kv_cache *c, float *base, size_t rows, size_t threads, size_t C, size_t V,
                         size_t M)
{
    size_t n = 0;
#define TAKE(field, count) (c->field = base ? base + n : NULL, n += (count))
    TAKE(logits, V);        // the last row's
    TAKE(x, rows * C);      // residual stream
    TAKE(ln, rows * C);
    TAKE(q, rows * C);
    TAKE(atty, rows * C);
    TAKE(proj, rows * C);
    TAKE(fch, rows * 4 * C);
    TAKE(att, threads * M); // a row of scores per thread
#undef TAKE
    return n;
}

/* room for n rows of scratch */
static mygpt_status ensure_rows(mygpt_kv_cache *c, const mygpt_gpt *g, int n, mygpt_error *err)
{
    const int threads = omp_get_max_threads();
    if (n <= c->rows_cap && threads <= c->att_rows)
        return MYGPT_OK;
    n = n > c->rows_cap ? n : c->rows_cap;
    const size_t C = (size_t)g->config.embed_dim, V = (size_t)g->config.vocab_size;
    const size_t M = (size_t)g->config.max_seq_len;
    float *s = mygpt_float_block(carve_rows(c, NULL, (size_t)n, (size_t)threads, C, V, M));
    if (!s)
        return mygpt_fail(err, MYGPT_ENOMEM, "out of memory for %d cached rows", n);
    free(c->scratch);
    c->scratch = s;
    c->rows_cap = n;
    c->att_rows = threads;
    carve_rows(c, s, (size_t)n, (size_t)threads, C, V, M);
    return MYGPT_OK;
}

mygpt_status mygpt_gpt_forward_cached(mygpt_gpt *g, mygpt_kv_cache *c, const int64_t *ids, int n,
                                      mygpt_error *err)
{
    const mygpt_config *cfg = &g->config;
    const int C = cfg->embed_dim, V = cfg->vocab_size, M = cfg->max_seq_len;
    const int t0 = c->len;
    MYGPT_TRY(mygpt_pass_check_input(cfg, ids, 1, n, t0, err));
    mygpt_status st = ensure_rows(c, g, n, err);
    if (st != MYGPT_OK)
        return st;
    const mygpt_pass p = {.cfg = cfg, .w = &g->params, .packed = g->packed,
                          .naive = g->use_naive_kernels, .B = 1, .T = n, .cache = c, .t0 = t0};
    // x = E[ids] + P[t0 .. t0 + n - 1]                                  (n, C)
    st = mygpt_embedding_forward(c->x, ids, g->params.wte, g->params.wpe + (size_t)t0 * C, 1, n, C, V, M - t0,
                                 err);
    // the keys and values go to the cache; x is updated in place
    const mygpt_block_acts block = {.x = c->x, .ln1 = c->ln, .q = c->q, .atty = c->atty, .mid = c->x,
                                    .ln2 = c->ln, .fch = c->fch, .proj = c->proj, .out = c->x};
    for (int l = 0; l < cfg->num_layers && st == MYGPT_OK; l++)
        st = mygpt_block_forward(&p, l, &block, err);
    // only the last position's logits are needed to pick the next token    (V)
    if (st == MYGPT_OK)
        st = mygpt_head_forward(&p, c->logits, c->ln, NULL, NULL, c->x + (size_t)(n - 1) * C, 1, err);
    if (st == MYGPT_OK)
        c->len = t0 + n;
    return st;
}
