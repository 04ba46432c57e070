/*
 * mygpt/generate.h - speaking: a KV cache for the GPT and the tutorial's generation
 * loop (document 000's chapter 15).
 *
 * With learned absolute positions, a cached key stays valid only while its position
 * does: once the context reaches max_seq_len and is cropped (idx[:, -M:]), every
 * position shifts, and each further token needs the whole window again. So the cache
 * serves a context up to max_seq_len; after that the loop recomputes the window.
 */
#ifndef MYGPT_GENERATE_H
#define MYGPT_GENERATE_H

#include <stddef.h>
#include <stdint.h>

#include "mygpt/error.h"
#include "mygpt/gpt.h"
#include "mygpt/rng.h"
#include "mygpt/sample.h"

#ifdef __cplusplus
extern "C" {
#endif

/* everything declared here is exported by libmygpt.so (lib/exports.txt) */
#pragma GCC visibility push(default)

/* The cache keeps the keys a second time, transposed in blocks of MYGPT_KT_BLOCK
 * positions (block b holds, for each of the C channels, the block's keys side by side),
 * so that a step's scores read a block's keys as vector lanes (one in-order chain of
 * fused multiply-adds per key: the forward's sums), and a new key touches one block. */
#define MYGPT_KT_BLOCK 64

/* Keys and values of every layer for one sequence (B = 1), and scratch for the rows
 * being added. */
typedef struct mygpt_kv_cache {
    int len;             /* positions cached                             */
    int capacity;        /* max_seq_len                                  */
    float *k, *v;        /* (L, maxT, C) each                            */
    float *kt;           /* (L, ldk / MYGPT_KT_BLOCK, C, MYGPT_KT_BLOCK):
                            the keys again, transposed block by block    */
    int ldk;             /* maxT rounded up to MYGPT_KT_BLOCK            */
    float *logits;       /* (V) the last added position's logits         */
    float *x, *ln, *q, *atty, *proj, *fch, *att; /* scratch for up to rows_cap rows */
    int rows_cap;
    int att_rows;        /* rows of att: one per thread                  */
    float *memory;       /* k, v and kt                                  */
    float *scratch;      /* the rest                                     */
} mygpt_kv_cache;

/* An empty cache for gpt's configuration. MYGPT_ENOMEM. */
mygpt_status mygpt_kv_cache_init(mygpt_kv_cache *cache, const mygpt_gpt *gpt, mygpt_error *err);
void mygpt_kv_cache_reset(mygpt_kv_cache *cache);
void mygpt_kv_cache_free(mygpt_kv_cache *cache);

/* Runs n new tokens at positions len .. len + n - 1, appending their keys and values;
 * cache->logits then holds the last one's logits, the same bits mygpt_gpt_forward gives
 * for that position. With the model packed (mygpt_gpt_pack) each token reads every
 * weight once as it is, which decoding needs to run near the memory bandwidth. Errors: ids outside [0, V), len + n > max_seq_len (MYGPT_ERANGE). */
mygpt_status mygpt_gpt_forward_cached(mygpt_gpt *gpt, mygpt_kv_cache *cache, const int64_t *ids,
                                      int n, mygpt_error *err);

/* The tutorial's loop for one prompt:
 *   for _ in range(max_new):
 *       logits = model(idx[:, -M:])[:, -1, :];  next = sample(logits)  (mygpt_sample_next)
 *       if next == eos: break
 *       idx = cat([idx, next])
 * out receives the prompt and the new tokens (n_prompt + max_new ids at most), *n_out
 * their count. eos < 0: no end token. use_cache 0 recomputes the whole window every
 * step, as the tutorial writes it; 1 uses a KV cache while the context fits (the same
 * tokens either way). Draws come from rng. An unpacked model is packed for the call
 * (and unpacked before it returns) when more than one token is asked for. */
mygpt_status mygpt_generate(mygpt_gpt *gpt, mygpt_rng *rng, const int64_t *prompt, int n_prompt,
                            int max_new, const mygpt_sampling *sampling, int64_t eos,
                            int use_cache, int64_t *out, int *n_out, mygpt_error *err);

/* mygpt_generate, calling on_token(id, user) with each new token as soon as it is
 * chosen (to show text as it comes); on_token NULL is mygpt_generate. */
typedef void (*mygpt_token_fn)(int64_t id, void *user);
mygpt_status mygpt_generate_stream(mygpt_gpt *gpt, mygpt_rng *rng, const int64_t *prompt, int n_prompt,
                                   int max_new, const mygpt_sampling *sampling, int64_t eos, int use_cache,
                                   int64_t *out, int *n_out, mygpt_token_fn on_token, void *user,
                                   mygpt_error *err);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
