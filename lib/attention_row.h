/*
 * attention_row.h - private: one query row of causal attention, the plain loops that
 * mygpt_attention_forward, the training forward and the KV-cache forward all run, so
 * all three give the same bits.
 */
#ifndef MYGPT_ATTENTION_ROW_H
#define MYGPT_ATTENTION_ROW_H

#include <math.h>

#include "vecmath.h"

/* One query row of one head: out_t = sum over s <= t of p_s v_s with p = softmax of
 * (q_t . k_s) / scale. att holds T floats: the scores, then exp(score - max); when
 * keep_probs, it ends holding the probabilities p_s (0 for s > t) for the backward pass.
 * The mathematics of both attentions in one place, so both give the same bits. */
static inline void mygpt_attention_row(float *ot, float *att, const float *qt, const float *kb,
                                 const float *vb, int t, int T, int C, int d, float scale,
                                 int keep_probs)
{
    // scores of query t against keys 0..t (the causal mask drops s > t)
    float maxv = -INFINITY;
    for (int s = 0; s <= t; s++) {
        const float *ks = kb + (size_t)s * C; // (d,)
        float dot = 0.0f;
        for (int i = 0; i < d; i++) // fused, in order, as a BLAS dot product
            dot = fmaf(qt[i], ks[i], dot);
        att[s] = dot / scale;
        if (att[s] > maxv)
            maxv = att[s];
    }
    float sum = 0.0f;
    for (int s = 0; s <= t; s++) {
        att[s] = mygpt_expf(att[s] - maxv); // vecmath.h: the fast path's exp
        sum += att[s];
    }
    const float inv_sum = 1.0f / sum; // PyTorch's softmax multiplies by 1/sum
    for (int i = 0; i < d; i++)
        ot[i] = 0.0f;
    for (int s = 0; s <= t; s++) {
        const float p = att[s] * inv_sum;
        if (keep_probs)
            att[s] = p;
        const float *vs = vb + (size_t)s * C; // (d,)
        for (int i = 0; i < d; i++)
            ot[i] = fmaf(p, vs[i], ot[i]);
    }
    if (keep_probs)
        for (int s = t + 1; s < T; s++)
            att[s] = 0.0f;
}

#endif
