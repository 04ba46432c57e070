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

/* The largest size the kernels take for any one dimension: the attention's sequence here,
 * and every size of a configuration (vocabulary, width, heads, layers, context, hidden
 * size: mygpt_config_validate). It keeps their int arithmetic safe. */
#define MYGPT_MAX_DIM (1 << 24)

#ifdef __cplusplus
extern "C" {
#endif

/* everything declared here is exported by libmygpt.so (lib/exports.txt) */
#pragma GCC visibility push(default)

/* The KV cache (mygpt/kv_cache.h) keeps the keys a second time, transposed in blocks of
 * MYGPT_KT_BLOCK positions (block b holds, for each of the KV channels, the block's keys side by side),
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
 * sizes below 1, T past MYGPT_MAX_DIM, C not divisible by NH, too
 * little scratch and kernels that are neither MYGPT_IMPL_FAST nor MYGPT_IMPL_REFERENCE
 * (MYGPT_EINVAL). */
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
 * nthreads < 1 counts as 1; pass omp_get_max_threads() to let every thread work. 0 for
 * a T below 0 or past MYGPT_MAX_DIM (which the forward refuses) or a negative d. */
size_t mygpt_attention_scratch_size(int T, int head_dim, int nthreads);

/* The k positions query t attends to most, from its row of probabilities (positions
 * 0..t): their indices into best[0..], largest first, ties to the earlier position.
 * Returns how many (min(k, t + 1)). */
int mygpt_attention_top(const float *row, int t, int k, int *best);

/* ---- attention step by step (attention_steps.c): the book's chapter 3 ---------------- */
/* Small tensors, plain loops, every intermediate kept: what the chapter prints, with
 * PyTorch 1.13's bits at the book's chapter-3 sizes (each product's sum in order in
 * float32, with fused multiply-adds where PyTorch hands the product to OpenBLAS: torch.mm,
 * nn.Linear, a torch.bmm of 400 multiply-adds a matrix or more, whose kernel sums so at
 * these sizes; larger ones it groups otherwise: docs/model-spec.md; exp and softmax as
 * PyTorch's AVX2 kernels compute them, lib/kernels/sleef_rows.h). */

/* out (M, N) = a (M, K) @ b (K, N): torch.matmul of two matrices (torch.mm), each sum
 * fused multiply-adds from zero, k in order. */
void mygpt_mm(float *out, const float *a, const float *b, int M, int K, int N);


/* out = torch.exp(x), n values (out may be x). */
void mygpt_exp_torch(float *out, const float *x, size_t n);

/* torch.softmax(x, dim=-1) over rows of n (out may be x): exp(x - max) in PyTorch's
 * lanes, their sum, then times 1 / sum. n < 1: nothing is written. */
void mygpt_softmax_lastdim(float *out, const float *x, size_t rows, int n);

/* attn_scores.masked_fill_(torch.triu(torch.ones(T, T), diagonal=1).bool(), -torch.inf):
 * every score of a later position set to -inf, in each of the n (T, T) blocks. */
void mygpt_causal_mask(float *scores, size_t n, int T);

/* attn_weights = torch.softmax(attn_scores / d_k**0.5, dim=-1) over rows of n: the
 * division by sqrt(d_k) as a float32, then mygpt_softmax_lastdim. */
void mygpt_attention_weights(float *weights, const float *scores, size_t rows, int n, int d_k);

struct mygpt_rng;

/* The book's attention modules as one: MultiHeadAttention (num_heads heads of
 * d_out / num_heads channels, out_proj), CausalAttention (one head, out_proj_w NULL) and
 * SelfAttention_v2 (causal 0). Weights are nn.Linear's, (out, in) row-major. */
typedef struct mygpt_mha {
    int d_in, d_out, num_heads;
    int causal;     /* 1: the mask of mygpt_causal_mask */
    int unbatched;  /* 1: x is one (T, d_in) matrix, as SelfAttention_v1/v2 take it: the
                       scores and the context are torch.mm's (fused), not torch.bmm's */
    double dropout; /* nn.Dropout(p) on the weights; drawn only with an rng and p > 0 */
    const float *W_query, *W_key, *W_value; /* (d_out, d_in) each */
    const float *b_query, *b_key, *b_value; /* (d_out) each, or NULL (qkv_bias=False) */
    const float *out_proj_w, *out_proj_b;   /* (d_out, d_out) and (d_out), or NULL */
} mygpt_mha;

/* Every tensor of a forward pass; B sequences of T positions, H = num_heads. */
typedef struct mygpt_mha_steps {
    int B, T, d_out, H;
    float *queries, *keys, *values; /* (B, T, d_out) each: W_query(x), W_key(x), W_value(x) */
    float *scores;                  /* (B, H, T, T): queries @ keys^T per head, masked */
    float *weights;                 /* (B, H, T, T): softmax(scores / sqrt(head_dim)), dropped */
    float *context;                 /* (B, T, d_out): weights @ values, the heads side by side */
    float *out;                     /* (B, T, d_out): out_proj(context), or context itself */
} mygpt_mha_steps;

/* Allocates s's tensors for B, T and m's sizes (MYGPT_EOVERFLOW for sizes that do not
 * fit; MYGPT_EINVAL for sizes below 1, d_out not divisible by num_heads or a dropout
 * outside [0, 1);
 * MYGPT_ENOMEM). */
mygpt_status mygpt_mha_steps_init(mygpt_mha_steps *s, const mygpt_mha *m, int B, int T, mygpt_error *err);
void mygpt_mha_steps_free(mygpt_mha_steps *s);

/* The forward pass of x (B, T, d_in) into s (mygpt_mha_steps_init'd for m, B, T); rng
 * not NULL is training mode (the dropout draws from it), NULL is eval mode. MYGPT_EINVAL
 * for an s not made, or made for another d_out or number of heads. */
mygpt_status mygpt_mha_forward(mygpt_mha_steps *s, const mygpt_mha *m, const float *x, struct mygpt_rng *rng,
                               mygpt_error *err);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
