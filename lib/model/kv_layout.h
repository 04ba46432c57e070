/*
 * model/kv_layout.h - private: where a layer's keys and values sit in a KV cache
 * (mygpt/kv_cache.h), and room for a step's rows: what kv_cache.c gives the passes.
 */
#ifndef MYGPT_MODEL_KV_LAYOUT_H
#define MYGPT_MODEL_KV_LAYOUT_H

#include "mygpt/config.h"
#include "mygpt/kv_cache.h"

/* The width KV of a cached position's keys, and of its values: the heads of keys and
 * values (mygpt_kv_heads) times the head size, n_kv_heads * head_size as llama2.c's
 * kv_dim. C for a GPT; with grouped-query attention n_heads / n_kv_heads times less, each
 * head serving that many query heads (the attention shares it, never copies it). */
int mygpt_kv_dim(const mygpt_config *cfg);

/* Layer l's part of a KV cache: its keys k and values v (maxT, KV), and its keys again,
 * transposed, kt: (ldk / MYGPT_KT_BLOCK, KV, MYGPT_KT_BLOCK), block b holding positions
 * b * MYGPT_KT_BLOCK .. side by side for each channel. The cache's layout is kv_cache.c's
 * alone; the block and the attention read it through this. */
typedef struct mygpt_kv_layer {
    float *k, *v, *kt;
} mygpt_kv_layer;
mygpt_kv_layer mygpt_kv_cache_layer(const mygpt_kv_cache *c, const mygpt_config *cfg, int l);
/* The floats of a cache of configuration cfg's keys, values and keys transposed (its
 * memory): L (2 maxT KV + KV ldk), ldk maxT rounded up to MYGPT_KT_BLOCK. */
size_t mygpt_kv_cache_floats(const mygpt_config *cfg);
/* An empty cache for a model of configuration cfg (mygpt_kv_cache_init's). MYGPT_ENOMEM. */
mygpt_status mygpt_kv_cache_make(mygpt_kv_cache *c, const mygpt_config *cfg, mygpt_error *err);
/* Whether c was made (mygpt_kv_cache_make) for a model of cfg's sizes: MYGPT_EINVAL if not. */
mygpt_status mygpt_kv_cache_check(const mygpt_kv_cache *c, const mygpt_config *cfg, mygpt_error *err);
/* Room in c's scratch for a step of n new rows (kv_cache.c). MYGPT_ENOMEM. */
mygpt_status mygpt_kv_cache_reserve(mygpt_kv_cache *c, const mygpt_config *cfg, int n, mygpt_error *err);

#endif
