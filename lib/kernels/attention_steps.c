/*
 * attention_steps.c - attention step by step, the book's chapter 3 (see mygpt/attention.h):
 * the products, the mask, the softmax and the modules' forward pass, with every
 * intermediate tensor kept for printing. Plain loops over small tensors.
 */
#include "mygpt/attention.h"
#include "mygpt/layers.h"
#include "mygpt/rng.h"
#include "base/base.h"
#include "kernels/sleef_rows.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void mygpt_mm(float *out, const float *a, const float *b, int M, int K, int N)
{
    // lesson: mm
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float sum = 0.0f; // k in order, each product added unrounded (as OpenBLAS's FMA does)
            for (int k = 0; k < K; k++)
                sum = fmaf(a[(size_t)i * K + k], b[(size_t)k * N + j], sum);
            out[(size_t)i * N + j] = sum;
        }
    // end lesson: mm
}

/* Whether a module's attention products add fused multiply-adds: torch.mm does (OpenBLAS),
 * for SelfAttention_v1/v2's one matrix; torch.bmm of a batch does for 400 multiply-adds
 * or more a matrix, and below that adds each product rounded (its own loop) */
static int products_fused(const mygpt_mha *m, int T, int hd)
{
    return m->unbatched || (size_t)T * T * hd >= 400;
}

void mygpt_exp_torch(float *out, const float *x, size_t n)
{
    float in[8], v[8];
    for (size_t d = 0; d < n; d += 8) { // 8 lanes at a time, the last ones padded
        const size_t r = n - d < 8 ? n - d : 8;
        for (size_t l = 0; l < 8; l++)
            in[l] = l < r ? x[d + l] : 0.0f;
        mygpt_exp8(v, in);
        memcpy(out + d, v, r * sizeof *v);
    }
}

void mygpt_softmax_lastdim(float *out, const float *x, size_t rows, int n)
{
    if (n < 1)
        return; // rows of no value (the header says so)
    for (size_t r = 0; r < rows; r++) {
        // lesson: softmax_lastdim
        const float *xr = x + r * (size_t)n; // (n,)
        float *o = out + r * (size_t)n;
        float maxv = -INFINITY;
        for (int i = 0; i < n; i++)
            maxv = xr[i] > maxv ? xr[i] : maxv;
        const float inv = 1.0f / mygpt_exp_sum_row(o, xr, (size_t)n, maxv);
        for (int i = 0; i < n; i++)
            o[i] *= inv;
        // end lesson: softmax_lastdim
    }
}

void mygpt_causal_mask(float *scores, size_t n, int T)
{
    // lesson: causal_mask
    for (size_t b = 0; b < n; b++)
        for (int i = 0; i < T; i++)
            for (int j = i + 1; j < T; j++) // above the diagonal: a later position
                scores[(b * T + i) * T + j] = -INFINITY;
    // end lesson: causal_mask
}

void mygpt_attention_weights(float *weights, const float *scores, size_t rows, int n, int d_k)
{
    // lesson: scaled_softmax
    const float scale = (float)sqrt((double)d_k); // d_k**0.5, divided in float32
    for (size_t i = 0; i < rows * (size_t)n; i++)
        weights[i] = scores[i] / scale;
    mygpt_softmax_lastdim(weights, weights, rows, n);
    // end lesson: scaled_softmax
}

mygpt_status mygpt_mha_steps_init(mygpt_mha_steps *s, const mygpt_mha *m, int B, int T, mygpt_error *err)
{
    memset(s, 0, sizeof *s);
    if (B < 1 || T < 1 || m->d_in < 1 || m->d_out < 1 || m->num_heads < 1 || m->d_out % m->num_heads)
        return mygpt_fail(err, MYGPT_EINVAL, "attention of B=%d, T=%d, d_in=%d, d_out=%d, %d heads: %s", B, T,
                          m->d_in, m->d_out, m->num_heads,
                          m->num_heads > 0 && m->d_out % m->num_heads ? "d_out must be divisible by num_heads"
                                                                       : "sizes must be positive");
    if (!(m->dropout >= 0.0 && m->dropout < 1.0)) // (a NaN was taken as none)
        return mygpt_fail(err, MYGPT_EINVAL, "dropout probability has to be in [0, 1), got %g", m->dropout);
    size_t btd, bhtt;
    if (mygpt_mul_overflows((size_t)B * T, (size_t)m->d_out, &btd) ||
        mygpt_mul_overflows((size_t)B * m->num_heads, (size_t)T * T, &bhtt))
        return mygpt_fail(err, MYGPT_EOVERFLOW, "attention of B=%d, T=%d is too large", B, T);
    *s = (mygpt_mha_steps){B, T, m->d_out, m->num_heads};
    float **btd_parts[5] = {&s->queries, &s->keys, &s->values, &s->context, &s->out};
    for (int i = 0; i < 5; i++)
        *btd_parts[i] = calloc(btd, sizeof(float));
    s->scores = calloc(bhtt, sizeof(float));
    s->weights = calloc(bhtt, sizeof(float));
    if (!s->queries || !s->keys || !s->values || !s->context || !s->out || !s->scores || !s->weights) {
        mygpt_mha_steps_free(s);
        return mygpt_fail(err, MYGPT_ENOMEM, "out of memory for the attention's tensors");
    }
    return MYGPT_OK;
}

void mygpt_mha_steps_free(mygpt_mha_steps *s)
{
    if (!s)
        return;
    float *parts[7] = {s->queries, s->keys, s->values, s->scores, s->weights, s->context, s->out};
    for (int i = 0; i < 7; i++)
        free(parts[i]);
    memset(s, 0, sizeof *s);
}

/* One head h of sequence b: scores, weights, and its channels of the context. */
static void head_forward(mygpt_mha_steps *s, const mygpt_mha *m, int b, int h)
{
    const int T = s->T, C = s->d_out, hd = C / s->H;
    const size_t bh = (size_t)b * s->H + h;
    float *scores = s->scores + bh * T * T, *weights = s->weights + bh * T * T; // (T, T)
    const float *q = s->queries + (size_t)b * T * C + h * hd; // (T, hd), row stride C
    const float *k = s->keys + (size_t)b * T * C + h * hd;
    const int fused = products_fused(m, T, hd);
    // lesson: head_scores
    for (int i = 0; i < T; i++) // attn_scores = queries @ keys.transpose(2, 3)
        for (int j = 0; j < T; j++) {
            float sum = 0.0f;
            for (int c = 0; c < hd; c++)
                sum = fused ? fmaf(q[(size_t)i * C + c], k[(size_t)j * C + c], sum)
                            : sum + q[(size_t)i * C + c] * k[(size_t)j * C + c];
            scores[i * T + j] = sum;
        }
    if (m->causal)
        mygpt_causal_mask(scores, 1, T);
    mygpt_attention_weights(weights, scores, (size_t)T, T, hd);
    // end lesson: head_scores
}

/* (attn_weights @ values) of head h into its channels of the context */
static void head_context(mygpt_mha_steps *s, const mygpt_mha *m, int b, int h)
{
    const int T = s->T, C = s->d_out, hd = C / s->H, fused = products_fused(m, T, hd);
    const float *w = s->weights + ((size_t)b * s->H + h) * T * T;
    // lesson: head_context
    const float *v = s->values + (size_t)b * T * C + h * hd;
    float *ctx = s->context + (size_t)b * T * C + h * hd;
    for (int i = 0; i < T; i++)
        for (int c = 0; c < hd; c++) {
            float sum = 0.0f;
            for (int j = 0; j < T; j++)
                sum = fused ? fmaf(w[i * T + j], v[(size_t)j * C + c], sum) : sum + w[i * T + j] * v[(size_t)j * C + c];
            ctx[(size_t)i * C + c] = sum;
        }
    // end lesson: head_context
}

/* out (N, d_out) = x (N, d_in) @ w (d_out, d_in)^T + bias: nn.Linear as addmm computes it
 * at chapter 3's sizes, the products fused in order from zero (OpenBLAS's kernel there),
 * then added to the bias */
static void linear(float *out, const float *x, const float *w, const float *bias, size_t N, int d_in, int d_out)
{
    for (size_t n = 0; n < N; n++)
        for (int o = 0; o < d_out; o++) {
            float sum = 0.0f;
            for (int i = 0; i < d_in; i++)
                sum = fmaf(x[n * d_in + i], w[(size_t)o * d_in + i], sum);
            out[n * d_out + o] = bias ? bias[o] + sum : sum;
        }
}

mygpt_status mygpt_mha_forward(mygpt_mha_steps *s, const mygpt_mha *m, const float *x, struct mygpt_rng *rng,
                               mygpt_error *err)
{
    if (!s->queries)
        return mygpt_fail(err, MYGPT_EINVAL, "%s", "the attention's tensors were not made (mygpt_mha_steps_init)");
    if (s->d_out != m->d_out || s->H != m->num_heads)
        return mygpt_fail(err, MYGPT_EINVAL, "the attention's tensors were made for d_out %d and %d heads, not %d and %d",
                          s->d_out, s->H, m->d_out, m->num_heads);
    // lesson: projections
    const size_t N = (size_t)s->B * s->T;
    // keys = self.W_key(x); queries = self.W_query(x); values = self.W_value(x): (B, T, d_out)
    linear(s->keys, x, m->W_key, m->b_key, N, m->d_in, m->d_out);
    linear(s->queries, x, m->W_query, m->b_query, N, m->d_in, m->d_out);
    linear(s->values, x, m->W_value, m->b_value, N, m->d_in, m->d_out);
    // end lesson: projections
    for (int b = 0; b < s->B; b++)
        for (int h = 0; h < s->H; h++)
            head_forward(s, m, b, h);
    // attn_weights = self.dropout(attn_weights): one mask over all (B, H, T, T) weights
    if (rng && m->dropout > 0) {
        const size_t n = (size_t)s->B * s->H * s->T * s->T;
        uint8_t *keep = malloc(n);
        if (!keep)
            return mygpt_fail(err, MYGPT_ENOMEM, "out of memory for the dropout's mask");
        const mygpt_status st = mygpt_dropout_mask(rng, keep, n, m->dropout, err);
        if (st == MYGPT_OK)
            mygpt_dropout_apply(s->weights, s->weights, keep, n, m->dropout);
        free(keep);
        MYGPT_TRY(st);
    }
    for (int b = 0; b < s->B; b++)
        for (int h = 0; h < s->H; h++)
            head_context(s, m, b, h);
    // context_vec = self.out_proj(context_vec), or the context as it is
    if (m->out_proj_w)
        linear(s->out, s->context, m->out_proj_w, m->out_proj_b, N, s->d_out, s->d_out);
    else
        memcpy(s->out, s->context, N * s->d_out * sizeof *s->out);
    return MYGPT_OK;
}
