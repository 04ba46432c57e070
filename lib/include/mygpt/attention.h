/*
 * mygpt/attention.h - causal multi-head self-attention (lib/kernels/attention.c), forward and
 * backward: the core between the projections,
 *
 *   out[b,t,h*d:(h+1)*d] = sum_{s <= t} softmax_s(q_t . k_s / sqrt(d)) v_s
 *
 * for each batch b and head h, with d = C / NH and q, k, v the head's slices. Plain
 * float32 arrays, (B, T, C) row-major. exp is the library's own (lib/kernels/vecmath.h, within
 * 1.02 ulp of libm's), which vectorises. Every output is computed by one thread in a
 * fixed order: the same bits for any thread count, and for either kernel choice.
 */
#ifndef MYGPT_ATTENTION_H
#define MYGPT_ATTENTION_H

#include <stddef.h>
#include <stdint.h>

#include "mygpt/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* everything declared here is exported by libmygpt.so (lib/exports.txt) */
#pragma GCC visibility push(default)

/* The KV cache (mygpt/kv_cache.h) keeps the keys a second time, transposed in blocks of
 * MYGPT_KT_BLOCK positions (block b holds, for each of the C channels, the block's keys side by side),
 * so that a step's scores read a block's keys as vector lanes (one in-order chain of
 * fused multiply-adds per key: the forward's sums), and a new key touches one block. */
#define MYGPT_KT_BLOCK 64

/* Which code computes the products and the attention: the fast kernels, or the plain
 * loops kept as the reference (lib/kernels/reference.c; the same bits for attention, the
 * matmul's sum in another order). A model's impl (mygpt_gpt) picks them for its forward
 * passes and the training forward; the KV-cache step and the attention's backward have
 * one path each (their plain loops are the reference the tests hold them to). */
typedef enum mygpt_impl { MYGPT_IMPL_FAST = 0, MYGPT_IMPL_REFERENCE = 1 } mygpt_impl;

/* The attention's shape: B sequences of T positions, C channels split into NH heads of
 * d = C / NH channels each (llm.c's B, T, C, NH). */
typedef struct mygpt_attention_shape {
    int B, T, C, NH;
} mygpt_attention_shape;

/* Its inputs, the projections of the block's input: queries, keys and values, (B, T, C)
 * each, head h in channels h*d .. (h+1)*d - 1. */
typedef struct mygpt_qkv {
    const float *q, *k, *v;
} mygpt_qkv;

/* Dropout on the probabilities in train mode: keep (B, NH, T, T) from mygpt_dropout_mask
 * (mygpt/layers.h) with its rate p; a kept probability is scaled by 1 / (1 - p). */
typedef struct mygpt_attention_dropout {
    const uint8_t *keep;
    double p;
} mygpt_attention_dropout;

/* The forward: out (B, T, C) from in's q, k, v. probs, when not NULL, receives
 * each head's probabilities (B, NH, T, T): probs[b,h,t,s] = the softmax weight of key s
 * for query t (0 for s > t), the floats that weighted the values (the backward needs
 * them; they also show where a model looks). scratch (scratch_len floats) is per thread:
 * size it with mygpt_attention_scratch_size(T, d, nthreads); the call never runs more
 * threads than it holds slices for (fewer threads, same bits), so scratch for 1 thread
 * is safe under any OMP_NUM_THREADS (the plain loops with probs need none). Refuses
 * sizes below 1, C not divisible by NH and too little scratch (MYGPT_EINVAL). */
mygpt_status mygpt_attention_forward(float *out, float *probs, mygpt_qkv in, float *scratch, size_t scratch_len,
                                     mygpt_attention_shape shape, mygpt_impl kernels, mygpt_error *err);

/* The backward: dq, dk, dv += d/dq, d/dk, d/dv (each (B, T, C)) from dout (B, T, C),
 * the forward's probs and its inputs. */
void mygpt_attention_backward(float *dq, float *dk, float *dv, const float *dout, const float *probs, mygpt_qkv in,
                              mygpt_attention_shape shape);

/* Dropout on the probabilities in train mode (Raschka's attention: attn_weights =
 * dropout(softmax(...)); context = attn_weights @ values): out (B, T, C) = (probs * noise)
 * V, probs being the forward's and drop's keeps mygpt_dropout_mask's. Its backward:
 * mygpt_attention_backward_dropout, with the same keeps. */
void mygpt_attention_dropout_values(float *out, const float *probs, const float *v, mygpt_attention_dropout drop,
                                    mygpt_attention_shape shape);
void mygpt_attention_backward_dropout(float *dq, float *dk, float *dv, const float *dout, const float *probs,
                                      mygpt_qkv in, mygpt_attention_dropout drop, mygpt_attention_shape shape);

/* Floats of scratch the forward needs for length T, head size d = C / NH and up to
 * nthreads threads (per thread: K of one head transposed, and a few rows of scores).
 * nthreads < 1 counts as 1; pass omp_get_max_threads() to let every thread work. */
size_t mygpt_attention_scratch_size(int T, int head_dim, int nthreads);

/* The k positions query t attends to most, from its row of probabilities (positions
 * 0..t): their indices into best[0..], largest first, ties to the earlier position.
 * Returns how many (min(k, t + 1)). */
int mygpt_attention_top(const float *row, int t, int k, int *best);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
