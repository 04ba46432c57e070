/*
 * mygpt/kv_cache.h - the model's memory of a sequence while it decodes: the keys and
 * values of every layer for the positions seen so far, and the forward pass over new
 * tokens that reads them (llama2.c keeps the same in its RunState).
 *
 * With learned absolute positions, a cached key stays valid only while its position
 * does: once the context reaches max_seq_len and is cropped (idx[:, -M:]), every
 * position shifts, and each further token needs the whole window again. So the cache
 * serves a context up to max_seq_len; after that the loop recomputes the window.
 */
#ifndef MYGPT_KV_CACHE_H
#define MYGPT_KV_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "mygpt/config.h"
#include "mygpt/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* everything declared here is exported by libmygpt.so (lib/exports.txt) */
#pragma GCC visibility push(default)

/* Keys and values of every layer for one sequence (B = 1), and scratch for the rows
 * being added. A position's keys, and its values, are KV = num_kv_heads * head size
 * floats (llama2.c's kv_dim): C for a GPT; with grouped-query attention only the heads
 * of keys and values, each read by num_heads / num_kv_heads query heads, never repeated.
 * The keys are kept a second time, transposed in blocks of MYGPT_KT_BLOCK positions
 * (mygpt/attention.h: the layout the cached attention reads). */
typedef struct mygpt_kv_cache {
    int len;             /* positions cached                             */
    int capacity;        /* max_seq_len                                  */
    mygpt_config config; /* the configuration it was made for           */
    float *k, *v;        /* (L, maxT, KV) each                           */
    float *kt;           /* (L, ldk / MYGPT_KT_BLOCK, KV, MYGPT_KT_BLOCK):
                            the keys again, transposed block by block    */
    int ldk;             /* maxT rounded up to MYGPT_KT_BLOCK            */
    float *logits;       /* (V) the last added position's logits         */
    float *x, *ln, *q, *atty, *proj, *fch, *att; /* scratch for up to rows_cap rows */
    float *fc3;                                  /* (llama's w3 output)              */
    int rows_cap;
    int att_rows;        /* threads att has rows of scores for           */
    float *memory;       /* k, v and kt                                  */
    float *scratch;      /* the rest                                     */
    float *plan;         /* the step's plan and its products' workspace  */
    size_t plan_len;
} mygpt_kv_cache;

/* The model (mygpt/gpt.h) */
typedef struct mygpt_gpt mygpt_gpt;

/* An empty cache for gpt's configuration. MYGPT_ENOMEM. */
mygpt_status mygpt_kv_cache_init(mygpt_kv_cache *cache, const mygpt_gpt *gpt, mygpt_error *err);
/* Forgets the positions cached (the memory stays). NULL does nothing. */
void mygpt_kv_cache_reset(mygpt_kv_cache *cache);
/* Frees the cache's memory and zeroes it; NULL, or a cache zeroed or freed, does nothing. */
void mygpt_kv_cache_free(mygpt_kv_cache *cache);

/* Runs n new tokens at positions len .. len + n - 1, appending their keys and values;
 * cache->logits then holds the last one's logits, the same bits mygpt_gpt_forward gives
 * for that position. With the model packed (mygpt_gpt_pack) each token reads every
 * weight once as it is, which decoding needs to run near the memory bandwidth. Errors: ids
 * outside [0, V), len + n > max_seq_len (MYGPT_ERANGE); n < 1, a cache zeroed or freed
 * (not made by mygpt_kv_cache_init), or made for a model of other sizes (MYGPT_EINVAL);
 * no memory for the pass or the cache (MYGPT_ENOMEM). */
mygpt_status mygpt_gpt_forward_cached(mygpt_gpt *gpt, mygpt_kv_cache *cache, const int64_t *ids,
                                      int n, mygpt_error *err);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
