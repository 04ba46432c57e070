/*
 * layers.c - forward functions of the GPT's layers (see mygpt/layers.h).
 *
 * Parallelism: rows (b, t) of the matmuls and (b, h) pairs of attention are
 * shared among OpenMP threads with a static schedule; each output element is
 * produced by one thread with a fixed summation order, so the bits never depend
 * on the thread count.
 */
#include "mygpt/layers.h"

#include <math.h>
#include <omp.h>

#include "attention_scratch.h"
#include "parallel.h"
#include "vecmath.h"
#include "internal.h"

/* Below this many floats of work a parallel region costs more than it saves (the
 * chapter's tiny GPT runs on one thread). Results never depend on it. Small work does
 * not even enter the OpenMP runtime: an `if (false)` parallel region still costs a
 * microsecond or so, a lot next to a 16-microsecond forward pass. */
#define PARALLEL_MIN MYGPT_PARALLEL_MIN

/* out[b, t] = wte[ids[b, t]] (+ wpe[t]) */
static void embed_row(float *out, const int64_t *ids, const float *wte, const float *wpe, int T,
                      int C, int b, int t)
{
    float *o = out + ((size_t)b * T + t) * C;                    // (C,)
    const float *tok = wte + (size_t)ids[(size_t)b * T + t] * C; // (C,)
    for (int i = 0; i < C; i++)
        o[i] = wpe ? tok[i] + wpe[(size_t)t * C + i] : tok[i];
}

mygpt_status mygpt_embedding_forward(float *out, const int64_t *ids, const float *wte,
                                     const float *wpe, int B, int T, int C, int V, int max_pos,
                                     mygpt_error *err)
{
    if (B < 1 || T < 1 || C < 1 || V < 1)
        return mygpt_fail(err, MYGPT_EINVAL, "embedding sizes must be at least 1 (B=%d T=%d C=%d V=%d)",
                          B, T, C, V);
    if (wpe && T > max_pos)
        return mygpt_fail(err, MYGPT_ERANGE, "input length T=%d exceeds max_seq_len=%d", T, max_pos);
    for (size_t i = 0; i < (size_t)B * T; i++)
        if (ids[i] < 0 || ids[i] >= V)
            return mygpt_fail(err, MYGPT_ERANGE, "token id %lld at (%zu, %zu) is outside [0, %d)",
                              (long long)ids[i], i / (size_t)T, i % (size_t)T, V);
    if ((size_t)B * T * C <= PARALLEL_MIN) {
        for (int b = 0; b < B; b++)
            for (int t = 0; t < T; t++)
                embed_row(out, ids, wte, wpe, T, C, b, t);
        return MYGPT_OK;
    }
#pragma omp parallel for collapse(2) schedule(static)
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++)
            embed_row(out, ids, wte, wpe, T, C, b, t);
    return MYGPT_OK;
}

void mygpt_matmul_naive(float *out, const float *inp, const float *weight, const float *bias,
                        size_t N, int C, int OC)
{
#pragma omp parallel for schedule(static) if (N * (size_t)C * OC > PARALLEL_MIN)
    for (size_t n = 0; n < N; n++) {
        const float *x = inp + n * C; // (C,)
        for (int o = 0; o < OC; o++) {
            const float *w = weight + (size_t)o * C; // (C,)
            float sum = 0.0f;
            for (int i = 0; i < C; i++)
                sum += x[i] * w[i];
            out[n * OC + o] = bias ? sum + bias[o] : sum;
        }
    }
}

/* One row of LayerNorm: the tutorial's float32 code, (x - x.mean()) /
 * torch.sqrt(x.var(unbiased=False) + 1e-5) * gamma + beta. The statistics are
 * accumulated in double (PyTorch's var accumulates in double too) and rounded to float
 * where PyTorch rounds: this matters for ill-conditioned rows (C = 2, nearly equal
 * values), where a different rounding point is visible in the output. */
static void layernorm_row(float *o, const float *x, const float *gamma, const float *beta, int C)
{
    double sum = 0.0;
    for (int i = 0; i < C; i++)
        sum += x[i];
    const double mean = sum / C;
    double ss = 0.0;
    for (int i = 0; i < C; i++)
        ss += (x[i] - mean) * (x[i] - mean);
    const float mean_f = (float)mean;
    const float var_f = (float)(ss / C);      // biased variance
    const float denom = sqrtf(var_f + 1e-5f); // torch.sqrt(var + eps), in float32
    for (int i = 0; i < C; i++)
        o[i] = (x[i] - mean_f) / denom * gamma[i] + beta[i];
}

void mygpt_layernorm_forward(float *out, const float *inp, const float *gamma, const float *beta,
                             size_t N, int C)
{
    if (N * (size_t)C <= PARALLEL_MIN) {
        for (size_t n = 0; n < N; n++)
            layernorm_row(out + n * C, inp + n * C, gamma, beta, C);
        return;
    }
#pragma omp parallel for schedule(static)
    for (size_t n = 0; n < N; n++)
        layernorm_row(out + n * C, inp + n * C, gamma, beta, C); // (C,) each
}

void mygpt_gelu_forward(float *out, const float *inp, size_t n)
{
#pragma omp parallel for schedule(static) if (n > PARALLEL_MIN)
    for (size_t i = 0; i < n; i++)
        out[i] = mygpt_gelu(inp[i]); // x/2 (1 + erf(x / sqrt 2)), vecmath.h
}

void mygpt_residual_forward(float *out, const float *inp, size_t n)
{
    if (n <= PARALLEL_MIN) {
        for (size_t i = 0; i < n; i++)
            out[i] += inp[i];
        return;
    }
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++)
        out[i] += inp[i];
}

void mygpt_softmax_rows(float *x, size_t rows, int n)
{
    for (size_t r = 0; r < rows; r++) {
        float *row = x + r * (size_t)n;
        float maxv = -INFINITY;
        for (int i = 0; i < n; i++)
            if (row[i] > maxv)
                maxv = row[i];
        if (maxv == -INFINITY)
            continue;
        float sum = 0.0f;
        for (int i = 0; i < n; i++) {
            row[i] = expf(row[i] - maxv);
            sum += row[i];
        }
        for (int i = 0; i < n; i++)
            row[i] /= sum;
    }
}

mygpt_status mygpt_attention_forward(float *out, const float *q, const float *k, const float *v,
                                     float *scratch, size_t scratch_len, int B, int T, int C,
                                     int NH, mygpt_error *err)
{
    const int team = mygpt_attention_team(scratch_len, B, T, C, NH);
    if (team < 1)
        return mygpt_attention_refuse(scratch_len, B, T, C, NH, err);
    const int d = C / NH;
    const float scale = (float)sqrt((double)d); // PyTorch divides by math.sqrt(d)
    const size_t per_thread = mygpt_attention_scratch_per_thread(T, d);
#pragma omp parallel for collapse(2) schedule(static) num_threads(team) \
    if ((size_t)B * T * T * C > PARALLEL_MIN)
    for (int b = 0; b < B; b++) {
        for (int h = 0; h < NH; h++) {
            float *att = scratch + (size_t)omp_get_thread_num() * per_thread; // (T,) one row of scores
            for (int t = 0; t < T; t++) {
                const float *qt = q + ((size_t)b * T + t) * C + h * d; // (d,)
                // scores of query t against keys 0..t (the causal mask drops s > t)
                float maxv = -INFINITY;
                for (int s = 0; s <= t; s++) {
                    const float *ks = k + ((size_t)b * T + s) * C + h * d; // (d,)
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
                float *ot = out + ((size_t)b * T + t) * C + h * d; // (d,)
                const float inv_sum = 1.0f / sum; // PyTorch's softmax multiplies by 1/sum
                for (int i = 0; i < d; i++)
                    ot[i] = 0.0f;
                for (int s = 0; s <= t; s++) {
                    const float p = att[s] * inv_sum;
                    const float *vs = v + ((size_t)b * T + s) * C + h * d; // (d,)
                    for (int i = 0; i < d; i++)
                        ot[i] = fmaf(p, vs[i], ot[i]);
                }
            }
        }
    }
    return MYGPT_OK;
}
