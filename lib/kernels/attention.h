/*
 * kernels/attention.h - private to the library: the attention's entry points beyond the
 * public mygpt/attention.h.
 */
#ifndef MYGPT_KERNELS_ATTENTION_H
#define MYGPT_KERNELS_ATTENTION_H

#include "mygpt/attention.h"

/* Heads of one query row that a thread of the KV-cache step takes at once (their
 * scores side by side, a row of M floats each): up to 64 output channels in registers */
#define MYGPT_CACHED_HEADS 8

/* One layer's KV cache as the step's attention reads it (model/kv_cache.c keeps them),
 * KV = kv_heads * d channels a position, d = C / NH the head size. */
typedef struct mygpt_attention_cache {
    const float *k, *v; // (M, KV) each: the keys and values of the positions so far
    float *kt;          // the keys again, transposed block by block (MYGPT_KT_BLOCK)
    int M;              // the positions it holds (max_seq_len)
    int kv_heads;       // heads of keys and values: NH, or fewer (grouped-query attention)
    float *rows;        // (nrows * MYGPT_CACHED_HEADS, M): rows of scores for each thread that may run
    int nrows;
} mygpt_attention_cache;

/* The KV-cache step's attention: shape.T new query rows q (T, C) at positions t0 ..
 * t0 + T - 1 (one sequence: shape.B is 1) against the layer's cached keys and values,
 * rows 0 to each query's position, into out (T, C). Query head h reads key and value head
 * h / (NH / kv_heads), as model.py's repeat_kv means. The new keys (kv.k's rows t0 ..)
 * are first copied into kv.kt, which the scores read. The same sums as the forward's
 * attention_row over the repeated heads: the same bits. */
void mygpt_attention_cached(float *out, const float *q, mygpt_attention_cache kv, int t0,
                            mygpt_attention_shape shape);

/* The attention kernel this CPU gets ("avx512", "avx2", "neon" or "generic"), after
 * MYGPT_ATTENTION_KERNEL: for tests and the benchmark. */
const char *mygpt_attention_kernel_name(void);

#endif
