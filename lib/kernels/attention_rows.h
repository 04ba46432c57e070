/*
 * kernels/attention_rows.h - private: attention's arithmetic for one query row, and what
 * one head's backward reads (head_grads; the plain loop itself is reference.c's), shared
 * by the plain loops (kernels/reference.c) and the fast paths (kernels/attention.c), so
 * that every path computes each value the same way.
 */
#ifndef MYGPT_KERNELS_ATTENTION_ROWS_H
#define MYGPT_KERNELS_ATTENTION_ROWS_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "base/simd.h"
#include "kernels/vecmath.h"

/* One head of one sequence as its query rows read it: the head's keys and values, d
 * channels of rows C apart (C is the row's width: the model's, or the KV cache's
 * n_kv_heads * d), and the scale the scores are divided by. */
typedef struct head_view {
    const float *k, *v; // (T, d) each, rows C apart (the KV-cache step reads its keys from kt)
    int T, C, d;
    float scale;        // sqrt(d) as a float, as PyTorch's math.sqrt(d)
} head_view;

static MYGPT_IN_CLONES void softmax_values(float *ot, float *att, const head_view *hv, int t, int keep_probs);

/* One query row of one head: out_t = sum over s <= t of p_s v_s with p = softmax of
 * (q_t . k_s) / scale. att holds T floats: the scores, then exp(score - max); when
 * keep_probs, it ends holding the probabilities p_s (0 for s > t) for the backward pass.
 * The mathematics of both attentions in one place, so both give the same bits. */
static MYGPT_IN_CLONES void attention_row(float *ot, float *att, const float *qt, const head_view *hv, int t,
                                          int keep_probs)
{
    const float *kb = hv->k;
    const int C = hv->C, d = hv->d;
    const float scale = hv->scale;
    // lesson: attention_scores
    // scores of query t against keys 0..t (the causal mask drops s > t)
    for (int s = 0; s <= t; s++) {
        const float *ks = kb + (size_t)s * C; // (d,)
        float dot = 0.0f;
        for (int i = 0; i < d; i++) // fused, in order, as a BLAS dot product
            dot = fmaf(qt[i], ks[i], dot);
        att[s] = dot / scale;
    }
    // end lesson: attention_scores
    softmax_values(ot, att, hv, t, keep_probs);
}

/* The second half of attention_row (and of attention.c's cached_unit): att[0..t] holds the scores;
 * out_t = sum of p_s v_s. */
static MYGPT_IN_CLONES void softmax_values(float *ot, float *att, const head_view *hv, int t, int keep_probs)
{
    const float *vb = hv->v;
    const int T = hv->T, C = hv->C, d = hv->d;
    // lesson: softmax
    float maxv = -INFINITY;
    for (int s = 0; s <= t; s++)
        if (att[s] > maxv)
            maxv = att[s];
    float sum = 0.0f;
    for (int s = 0; s <= t; s++) {
        att[s] = mygpt_expf(att[s] - maxv); // vecmath.h: the fast path's exp
        sum += att[s];
    }
    const float inv_sum = 1.0f / sum; // PyTorch's softmax multiplies by 1/sum
    for (int s = 0; keep_probs && s <= t; s++) // the probabilities, kept for the backward
        att[s] = att[s] * inv_sum;
    // end lesson: softmax
    // out_t = sum of p_s v_s, s in order; VW columns at a time kept in registers (through
    // memory each sum would wait on a store and a load every step)
    enum { VW = 64 };
    int i0 = 0;
    for (; i0 + VW <= d; i0 += VW) {
        float acc[VW] = {0};
        for (int s = 0; s <= t; s++) {
            const float p = keep_probs ? att[s] : att[s] * inv_sum;
            const float *vs = vb + (size_t)s * C + i0;
#pragma omp simd
            for (int j = 0; j < VW; j++)
                acc[j] = fmaf(p, vs[j], acc[j]);
        }
        for (int j = 0; j < VW; j++)
            ot[i0 + j] = acc[j];
    }
    for (int i = i0; i < d; i++)
        ot[i] = 0.0f;
    for (int s = 0; s <= t && i0 < d; s++) {
        const float p = keep_probs ? att[s] : att[s] * inv_sum;
        const float *vs = vb + (size_t)s * C; // (d,)
        for (int i = i0; i < d; i++)
            ot[i] = fmaf(p, vs[i], ot[i]);
    }
    if (keep_probs)
        for (int s = t + 1; s < T; s++)
            att[s] = 0.0f;
}

/* dO_t . v_s, a double sum over i in order: one entry of dP. (The fast path's dp_rows
 * computes the same sums, many side by side.) */
static inline double dp_dot(const float *restrict dot, const float *restrict vs, int d)
{
    double acc = 0.0;
    for (int i = 0; i < d; i++)
        acc += (double)dot[i] * vs[i];
    return acc;
}

/* The backward of one head, one (b, h). With P the (T, T) probabilities, S = Q K^T / scale
 * and O = P V:
 *   dV = P^T dO,  dP = dO V^T,  dS = P * (dP - rowsum(P * dP)),
 *   dQ = dS K / scale,  dK = dS^T Q / scale.
 * Double accumulators keep the sums close to exact; each product is rounded to float
 * and added to the gradient in a fixed order: dq_t over keys s ascending, dk_s and dv_s
 * over queries t ascending. The arguments are the head's slices (rows C apart). */
typedef struct head_grads {
    float *dq, *dk, *dv;                    // (T, d) each, rows C apart
    const float *dout, *q, *k, *v;          // (T, d) each, rows C apart
    const float *probs;                     // (T, T)
    const uint8_t *keep;                    // (T, T) dropout's keeps, or NULL
    float noise;                            // 1 / (1 - p) with dropout
    double scale;                           // sqrt(d) as a float, widened
    int T, C, d;
} head_grads;

/* p_ts as the values saw it: dropped (0) or scaled by noise when there is dropout */
static inline double kept_prob(const head_grads *h, int t, int s)
{
    const float p = h->probs[(size_t)t * h->T + s];
    return h->keep ? p * (h->keep[(size_t)t * h->T + s] ? h->noise : 0.0f) : p;
}

#endif
