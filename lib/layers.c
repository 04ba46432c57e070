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
#include <stdlib.h>

#include "attention_row.h"
#include "attention_scratch.h"
#include "parallel.h"
#include "vecmath.h"
#include "internal.h"
#include "simd.h"

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

/* dwte[ids[b,t]] += dout[b,t] and dwpe[t] += sum over b of dout[b,t]. A token that
 * appears twice gets two additions into one row, so threads split the channels, not the
 * positions: thread j owns channels [c0, c1) of every row and adds the positions in
 * (b, t) order, whatever the thread count. */
void mygpt_embedding_backward(float *dwte, float *dwpe, const float *dout, const int64_t *ids,
                              int B, int T, int C)
{
    const int chunk = 16; // channels per task: one cache line of floats
    const int ntasks = (C + chunk - 1) / chunk;
#pragma omp parallel for schedule(static) if ((size_t)B * T * C > PARALLEL_MIN)
    for (int task = 0; task < ntasks; task++) {
        const int c0 = task * chunk, c1 = c0 + chunk < C ? c0 + chunk : C;
        for (int b = 0; b < B; b++)
            for (int t = 0; t < T; t++) {
                const float *d = dout + ((size_t)b * T + t) * C;                  // (C,)
                float *w = dwte + (size_t)ids[(size_t)b * T + t] * C;            // (C,)
                float *p = dwpe ? dwpe + (size_t)t * C : NULL;                    // (C,)
                for (int c = c0; c < c1; c++) {
                    w[c] += d[c];
                    if (p)
                        p[c] += d[c];
                }
            }
    }
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
static void layernorm_row(float *o, const float *x, const float *gamma, const float *beta, int C,
                          float *mean_out, float *denom_out)
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
    if (mean_out) { // kept for the backward pass
        *mean_out = mean_f;
        *denom_out = denom;
    }
}

void mygpt_layernorm_forward(float *out, const float *inp, const float *gamma, const float *beta,
                             size_t N, int C)
{
    mygpt_layernorm_forward_train(out, NULL, NULL, inp, gamma, beta, N, C);
}

void mygpt_layernorm_forward_train(float *out, float *mean, float *denom, const float *inp,
                                   const float *gamma, const float *beta, size_t N, int C)
{
    if (N * (size_t)C <= PARALLEL_MIN) { // small work stays out of the OpenMP runtime
        for (size_t n = 0; n < N; n++)
            layernorm_row(out + n * C, inp + n * C, gamma, beta, C, mean ? mean + n : NULL,
                          denom ? denom + n : NULL);
        return;
    }
#pragma omp parallel for schedule(static)
    for (size_t n = 0; n < N; n++) // (C,) each
        layernorm_row(out + n * C, inp + n * C, gamma, beta, C, mean ? mean + n : NULL,
                      denom ? denom + n : NULL);
}

/* With xhat = (x - mean) / denom and y = xhat * gamma + beta (per row of C):
 *   dgamma += sum over rows of dy * xhat,   dbeta += sum over rows of dy,
 *   dx += (g - mean(g) - xhat * mean(g * xhat)) / denom,   where g = dy * gamma.
 * The row means are summed in double. dx rows are independent (parallel over rows);
 * dgamma and dbeta sum over every row, so threads split the channels and each adds
 * the rows in order: the same bits for any thread count. */
void mygpt_layernorm_backward(float *dinp, float *dgamma, float *dbeta, const float *dout,
                              const float *inp, const float *gamma, const float *mean,
                              const float *denom, size_t N, int C)
{
    const int par = N * (size_t)C > PARALLEL_MIN;
#pragma omp parallel for schedule(static) if (par)
    for (size_t n = 0; n < N; n++) {
        const float *x = inp + n * C, *dy = dout + n * C; // (C,)
        float *dx = dinp + n * C;                         // (C,)
        double g_sum = 0.0, gx_sum = 0.0;
        for (int i = 0; i < C; i++) {
            const double xhat = ((double)x[i] - mean[n]) / denom[n];
            const double g = (double)dy[i] * gamma[i];
            g_sum += g;
            gx_sum += g * xhat;
        }
        const double g_mean = g_sum / C, gx_mean = gx_sum / C;
        for (int i = 0; i < C; i++) {
            const double xhat = ((double)x[i] - mean[n]) / denom[n];
            const double g = (double)dy[i] * gamma[i];
            dx[i] += (float)((g - g_mean - xhat * gx_mean) / denom[n]);
        }
    }
#pragma omp parallel for schedule(static) if (par)
    for (int i = 0; i < C; i++) {
        double gs = 0.0, bs = 0.0;
        for (size_t n = 0; n < N; n++) {
            const float dy = dout[n * C + i];
            gs += (double)dy * (((double)inp[n * C + i] - mean[n]) / denom[n]);
            bs += dy;
        }
        dgamma[i] += (float)gs;
        dbeta[i] += (float)bs;
    }
}

/* (the public functions call a static clone set, so no ifunc resolver is exported) */
MYGPT_CLONES static void gelu_forward(float *out, const float *inp, size_t n)
{
#pragma omp parallel for schedule(static) if (n > PARALLEL_MIN)
    for (size_t i = 0; i < n; i++)
        out[i] = mygpt_gelu(inp[i]); // x/2 (1 + erf(x / sqrt 2)), vecmath.h
}

void mygpt_gelu_forward(float *out, const float *inp, size_t n)
{
    gelu_forward(out, inp, n);
}

/* d/dx of x/2 (1 + erf(x / sqrt 2)) = (1 + erf(x / sqrt 2)) / 2 + x exp(-x^2 / 2) / sqrt(2 pi),
 * in float32 as PyTorch's kernel computes it (cdf + x * pdf, then times dout), with
 * vecmath.h's erf and exp so the loop vectorises */
MYGPT_CLONES static void gelu_backward(float *dinp, const float *inp, const float *dout, size_t n)
{
#pragma omp parallel for schedule(static) if (n > PARALLEL_MIN)
    for (size_t i = 0; i < n; i++) {
        const float x = inp[i];
        const float cdf = 0.5f * (1.0f + mygpt_erff(x * 0.70710678118654752440f));
        const float pdf = 0.39894228040143267794f * mygpt_expf(x * x * -0.5f);
        dinp[i] += dout[i] * (cdf + x * pdf);
    }
}

void mygpt_gelu_backward(float *dinp, const float *inp, const float *dout, size_t n)
{
    gelu_backward(dinp, inp, dout, n);
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
            const size_t off = (size_t)b * T * C + (size_t)h * d;
            for (int t = 0; t < T; t++)
                mygpt_attention_row(out + off + (size_t)t * C, att, q + off + (size_t)t * C, k + off,
                              v + off, t, T, C, d, scale, 0);
        }
    }
    return MYGPT_OK;
}

mygpt_status mygpt_attention_forward_train(float *out, float *att, const float *q, const float *k,
                                           const float *v, int B, int T, int C, int NH,
                                           mygpt_error *err)
{
    if (B < 1 || T < 1 || C < 1 || NH < 1 || C % NH != 0)
        return mygpt_attention_refuse(0, B, T, C, NH, err);
    const int d = C / NH;
    const float scale = (float)sqrt((double)d);
#pragma omp parallel for collapse(2) schedule(static) if ((size_t)B * T * T * C > PARALLEL_MIN)
    for (int b = 0; b < B; b++) {
        for (int h = 0; h < NH; h++) {
            const size_t off = (size_t)b * T * C + (size_t)h * d;
            float *ah = att + ((size_t)b * NH + h) * T * T; // (T, T)
            for (int t = 0; t < T; t++)
                mygpt_attention_row(out + off + (size_t)t * C, ah + (size_t)t * T, q + off + (size_t)t * C,
                              k + off, v + off, t, T, C, d, scale, 1);
        }
    }
    return MYGPT_OK;
}

/* dp[s] = dO_t . v_s for s <= t, each a double sum over i in order. With vt (V of the
 * head transposed, (d, ldv), zero past T) the dots of DPS keys run side by side as
 * vector lanes: the same sums, in the same order, DPS at a time. */
#define DPS 32
static inline __attribute__((always_inline)) void dp_row(double *restrict dp, const float *restrict dot, const float *restrict vb,
                          const float *restrict vt, size_t ldv, int t, int C, int d)
{
    if (!vt) {
        for (int s = 0; s <= t; s++) {
            const float *vs = vb + (size_t)s * C;
            double acc = 0.0;
            for (int i = 0; i < d; i++)
                acc += (double)dot[i] * vs[i];
            dp[s] = acc;
        }
        return;
    }
    for (int s0 = 0; s0 <= t; s0 += DPS) {
        double acc[DPS];
        for (int j = 0; j < DPS; j++)
            acc[j] = 0.0;
        for (int i = 0; i < d; i++) {
            const double di = dot[i];
            const float *vr = vt + (size_t)i * ldv + s0;
#pragma omp simd
            for (int j = 0; j < DPS; j++)
                acc[j] += di * vr[j];
        }
        for (int j = 0; j < DPS && s0 + j <= t; j++)
            dp[s0 + j] = acc[j];
    }
}

/* For one (b, h), with P the (T, T) probabilities, S = Q K^T / scale and O = P V:
 *   dV = P^T dO,  dP = dO V^T,  dS = P * (dP - rowsum(P * dP)),
 *   dQ = dS K / scale,  dK = dS^T Q / scale.
 * Each (b, h) writes only its own slice of dq, dk, dv: parallel over (b, h), and each
 * sum runs in a fixed order. Double accumulators keep the sums close to exact. Per
 * thread, scratch holds V^T of the head and one row of dP; without it (no memory) the
 * same sums run one at a time: same bits, slower. */
MYGPT_CLONES static void attention_backward(float *dq, float *dk, float *dv, const float *dout,
                                            const float *att, const float *q, const float *k,
                                            const float *v, int B, int T, int C, int NH)
{
    const int d = C / NH;
    const double scale = (double)(float)sqrt((double)d);
    const size_t ldv = ((size_t)T + DPS - 1) / DPS * DPS;
    const size_t per_thread = (size_t)d * ldv + 2 * (size_t)T; // vt, then dp (doubles)
    const int par = (size_t)B * T * T * C > PARALLEL_MIN;
    const int team = par ? omp_get_max_threads() : 1;
    float *scratch = malloc((size_t)team * per_thread * sizeof(float));
    double *dp_heap = scratch ? NULL : malloc((size_t)team * T * sizeof(double));
#pragma omp parallel for collapse(2) schedule(static) num_threads(team) if (par)
    for (int b = 0; b < B; b++) {
        for (int h = 0; h < NH; h++) {
            const size_t off = (size_t)b * T * C + (size_t)h * d;
            const float *ah = att + ((size_t)b * NH + h) * T * T; // (T, T)
            float *vt = scratch ? scratch + (size_t)omp_get_thread_num() * per_thread : NULL; // (d, ldv)
            double *dp = vt ? (double *)(vt + (size_t)d * ldv) : dp_heap ? dp_heap + (size_t)omp_get_thread_num() * T : NULL;
            if (vt)
                for (size_t s = 0; s < ldv; s++)
                    for (int i = 0; i < d; i++)
                        vt[(size_t)i * ldv + s] = s < (size_t)T ? v[off + s * C + i] : 0.0f;
            for (int t = 0; t < T; t++) {
                const float *p = ah + (size_t)t * T;                 // (T,)
                const float *restrict dot = dout + off + (size_t)t * C; // (d,)
                const float *restrict qt = q + off + (size_t)t * C;  // (d,)
                float *restrict dqt = dq + off + (size_t)t * C;      // (d,)
                double dp_one;
                // dP[t, s] = dO_t . v_s, and rowsum(P * dP)
                if (dp)
                    dp_row(dp, dot, v + off, vt, ldv, t, C, d);
                double pdp = 0.0;
                for (int s = 0; s <= t; s++) {
                    if (!dp)
                        dp_row(&dp_one, dot, v + off + (size_t)s * C, NULL, 0, 0, C, d);
                    pdp += p[s] * (dp ? dp[s] : dp_one);
                }
                for (int s = 0; s <= t; s++) {
                    const float *restrict ks = k + off + (size_t)s * C;
                    if (!dp)
                        dp_row(&dp_one, dot, v + off + (size_t)s * C, NULL, 0, 0, C, d);
                    const double ds = p[s] * ((dp ? dp[s] : dp_one) - pdp) / scale; // dS / scale
                    const double ps = p[s];
                    float *restrict dks = dk + off + (size_t)s * C, *restrict dvs = dv + off + (size_t)s * C;
#pragma omp simd
                    for (int i = 0; i < d; i++) {
                        dqt[i] += (float)(ds * ks[i]);
                        dks[i] += (float)(ds * qt[i]);
                        dvs[i] += (float)(ps * dot[i]);
                    }
                }
            }
        }
    }
    free(scratch);
    free(dp_heap);
}

void mygpt_attention_backward(float *dq, float *dk, float *dv, const float *dout, const float *att,
                              const float *q, const float *k, const float *v, int B, int T, int C,
                              int NH)
{
    attention_backward(dq, dk, dv, dout, att, q, k, v, B, T, C, NH);
}
