/*
 * kv_cache.c - the KV cache's memory and layout (mygpt/kv_cache.h): every layer's keys,
 * values and transposed keys in one block, and the scratch of a step's new rows. The
 * forward pass that reads and extends it is gpt.c's (mygpt_gpt_forward_cached).
 */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "mygpt/attention.h"
#include "mygpt/kv_cache.h"
#include "base/base.h"
#include "model/kv_layout.h"
#include "kernels/attention.h" /* MYGPT_CACHED_HEADS */

/* The cache's block, one list that sizes it (base NULL) and carves it: every layer's keys,
 * then values, then keys transposed; *layer gets layer l's part of each. Returns its floats. */
static size_t carve_layers(mygpt_kv_layer *layer, float *base, size_t l, size_t L, size_t M, size_t KV, size_t ldk)
{
    size_t n = 0;
#define TAKE(field, per_layer) (layer->field = base ? base + n + l * (per_layer) : NULL, n += L * (per_layer))
    TAKE(k, M * KV);    // (L, maxT, KV)
    TAKE(v, M * KV);    // (L, maxT, KV)
    TAKE(kt, KV * ldk); // (L, ldk / MYGPT_KT_BLOCK, KV, MYGPT_KT_BLOCK)
#undef TAKE
    return n;
}

int mygpt_kv_dim(const mygpt_config *cfg)
{
    return cfg->embed_dim / cfg->num_heads * mygpt_kv_heads(cfg);
}

/* maxT rounded up to a whole block of kt's */
static size_t kt_positions(const mygpt_config *cfg)
{
    return ((size_t)cfg->max_seq_len + MYGPT_KT_BLOCK - 1) / MYGPT_KT_BLOCK * MYGPT_KT_BLOCK;
}

size_t mygpt_kv_cache_floats(const mygpt_config *cfg)
{
    mygpt_kv_layer all;
    return carve_layers(&all, NULL, 0, (size_t)cfg->num_layers, (size_t)cfg->max_seq_len,
                        (size_t)mygpt_kv_dim(cfg), kt_positions(cfg));
}

mygpt_status mygpt_kv_cache_make(mygpt_kv_cache *c, const mygpt_config *cfg, mygpt_error *err)
{
    memset(c, 0, sizeof *c);
    const size_t total = mygpt_kv_cache_floats(cfg), ldk = kt_positions(cfg);
    c->capacity = cfg->max_seq_len;
    c->config = *cfg;
    // zeroed: a block of scores past the cached keys reads kt's padding (then dropped)
    if (!(c->memory = calloc(total, sizeof(float))))
        return mygpt_fail(err, MYGPT_ENOMEM, "out of memory for a KV cache of %zu floats", total);
    c->ldk = (int)ldk;
    const mygpt_kv_layer first = mygpt_kv_cache_layer(c, cfg, 0); // layer 0's parts: the starts
    c->k = first.k;
    c->v = first.v;
    c->kt = first.kt;
    return MYGPT_OK;
}

mygpt_kv_layer mygpt_kv_cache_layer(const mygpt_kv_cache *c, const mygpt_config *cfg, int l)
{
    mygpt_kv_layer layer;
    carve_layers(&layer, c->memory, (size_t)l, (size_t)cfg->num_layers, (size_t)cfg->max_seq_len,
                 (size_t)mygpt_kv_dim(cfg), (size_t)c->ldk);
    return layer;
}

void mygpt_kv_cache_reset(mygpt_kv_cache *c)
{
    if (c)
        c->len = 0;
}

void mygpt_kv_cache_free(mygpt_kv_cache *c)
{
    if (!c)
        return;
    free(c->memory);
    free(c->scratch);
    free(c->plan);
    memset(c, 0, sizeof *c);
}

/* The scratch of a step of `rows` rows and a team of `threads`, one list that both
 * sizes it (base NULL) and carves it: returns its floats. */
static size_t carve_rows(mygpt_kv_cache *c, float *base, size_t rows, size_t threads, const mygpt_config *cfg,
                         size_t V)
{
    const size_t C = (size_t)cfg->embed_dim, M = (size_t)cfg->max_seq_len, H = (size_t)mygpt_ffn_hidden(cfg);
    const size_t H3 = mygpt_arch_get(cfg).swiglu ? H : 0;
    size_t n = 0;
#define TAKE(field, count) (c->field = base ? base + n : NULL, n += (count))
    TAKE(logits, V);        // the last row's
    TAKE(x, rows * C);      // residual stream
    TAKE(ln, rows * C);
    TAKE(q, rows * C);
    TAKE(atty, rows * C);
    TAKE(proj, rows * C);
    TAKE(fch, rows * H);
    TAKE(fc3, rows * H3);   // w3's output (SwiGLU)
    TAKE(att, threads * MYGPT_CACHED_HEADS * M); // rows of scores per thread
#undef TAKE
    return n;
}

mygpt_status mygpt_kv_cache_check(const mygpt_kv_cache *c, const mygpt_config *cfg, mygpt_error *err)
{
    if (!c->memory)
        return mygpt_fail(err, MYGPT_EINVAL, "%s", "the KV cache was not made (mygpt_kv_cache_init)");
    const mygpt_config *m = &c->config;
    // every size the cache's memory and scratch are carved by
    if (m->vocab_size != cfg->vocab_size || m->embed_dim != cfg->embed_dim || m->num_heads != cfg->num_heads ||
        m->num_layers != cfg->num_layers || m->max_seq_len != cfg->max_seq_len ||
        mygpt_kv_dim(m) != mygpt_kv_dim(cfg) || mygpt_ffn_hidden(m) != mygpt_ffn_hidden(cfg) ||
        mygpt_arch_get(m).swiglu != mygpt_arch_get(cfg).swiglu || mygpt_head_size(m) != mygpt_head_size(cfg))
        return mygpt_fail(err, MYGPT_EINVAL, "%s", "the KV cache was made for a model of other sizes");
    return MYGPT_OK;
}

mygpt_status mygpt_kv_cache_reserve(mygpt_kv_cache *c, const mygpt_config *cfg, int n, mygpt_error *err)
{
    const int threads = omp_get_max_threads();
    if (n <= c->rows_cap && threads <= c->att_rows)
        return MYGPT_OK;
    n = n > c->rows_cap ? n : c->rows_cap;
    const size_t H = (size_t)mygpt_head_size(cfg);
    const size_t V = H > (size_t)cfg->vocab_size ? H : (size_t)cfg->vocab_size; // logits' room
    float *s = mygpt_float_block(carve_rows(c, NULL, (size_t)n, (size_t)threads, cfg, V));
    if (!s)
        return mygpt_fail(err, MYGPT_ENOMEM, "out of memory for %d cached rows", n);
    free(c->scratch);
    c->scratch = s;
    c->rows_cap = n;
    c->att_rows = threads;
    carve_rows(c, s, (size_t)n, (size_t)threads, cfg, V);
    return MYGPT_OK;
}
