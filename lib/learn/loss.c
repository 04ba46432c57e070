/*
 * loss.c - the cross-entropy loss as PyTorch 1.13 computes it on CPU, bit for bit:
 * F.cross_entropy(logits.view(-1, V), targets.view(-1)) = nll_loss(log_softmax(x), y),
 * reduction 'mean', ignore_index -100.
 *
 * log_softmax of a row (ATen's vectorised kernel, AVX2 build: 8 float lanes):
 *   max of the row; s = sum of exp(x - max), with SLEEF's expf (u10) on 8 lanes: lane l
 *   takes elements l, l + 8, ...; the last r < 8 elements go to lanes 0..r-1; the lanes
 *   are then combined as ((l0 + l4) + (l2 + l6)) + ((l1 + l5) + (l3 + l7)); rows shorter
 *   than 8 are summed in order; then out = (x - max) - log(s), log being SLEEF's logf.
 * nll_loss: a cascade sum of -logp[target] over blocks of 16 rows, divided by float(K),
 * K the rows whose target is not -100. An ignored row adds nothing and does not advance
 * the cascade (ATen skips it before the carry), though its index still counts in the
 * block test; every row ignored gives 0 / 0 = NaN.
 * Backward (nll_loss_backward, then log_softmax's): with g = -(1/K) at each kept row's
 * target and 0 elsewhere, dx = fma(-exp(logp), g_row_sum, g), exp again SLEEF's
 * (PyTorch's `x - y.exp() * sum` on vectors is compiled into one fused multiply-add); an
 * ignored row's g is 0, so its dx is fma(-exp(logp), 0, 0) = +0.
 *
 * PyTorch calls Debian's libsleef for those exp/log (its AVX2 kernels use
 * Sleef_expf8_u10 / Sleef_logf8_u10), so mygpt links the same library and calls the same
 * AVX2 functions: the loss is bit-identical. On a CPU without AVX2, PyTorch's kernels and
 * SLEEF's scalar functions differ from these in the last bit now and then.
 */
#include <math.h>
#include <omp.h>

#include "mygpt/train.h"
#include "base/base.h"
#include "base/parallel.h"
#include "base/simd.h"
#include "kernels/cpu.h"
#include "kernels/sleef_rows.h"

#if defined(MYGPT_NEON_KERNELS)
#include <arm_neon.h>
#include <sleef.h>
#endif

/* One row of log_softmax: logp (V) from x (V). */
static void log_softmax_row(float *logp, const float *x, int V)
{
    float maxv = x[0];
    for (int i = 1; i < V; i++)
        maxv = x[i] > maxv ? x[i] : maxv; // max is exact whatever the order
    float in[8], e[8], acc[8];
    float sum;
    if (V < 8) { // map the padded vector, then add the lanes in order
        for (int l = 0; l < 8; l++)
            in[l] = (l < V ? x[l] : 0.0f) - maxv;
        mygpt_exp8(e, in);
        sum = e[0];
        for (int l = 1; l < V; l++)
            sum += e[l];
    } else {
        for (int l = 0; l < 8; l++)
            in[l] = x[l] - maxv;
        mygpt_exp8(acc, in);
        int d = 8;
        for (; d < V - V % 8; d += 8) {
            for (int l = 0; l < 8; l++)
                in[l] = x[d + l] - maxv;
            mygpt_exp8(e, in);
            for (int l = 0; l < 8; l++)
                acc[l] += e[l];
        }
        const int r = V - d; // the tail goes into the first r lanes
        if (r > 0) {
            for (int l = 0; l < 8; l++)
                in[l] = (l < r ? x[d + l] : 0.0f) - maxv;
            mygpt_exp8(e, in);
            for (int l = 0; l < r; l++)
                acc[l] += e[l];
        }
        sum = ((acc[0] + acc[4]) + (acc[2] + acc[6])) + ((acc[1] + acc[5]) + (acc[3] + acc[7]));
    }
    // lesson: log_softmax
    const float logsum = mygpt_log1f(sum);
    for (int i = 0; i < V; i++)
        logp[i] = (x[i] - maxv) - logsum;
    // end lesson: log_softmax
}

/* One row of the backward: dx (V) = fma(-exp(logp), g, g at the target, else 0), the row's
 * gradient summing to g (one non-zero entry) */
static void cross_entropy_backward_row(float *dx, const float *lp, int64_t target, int V, float g)
{
    float in[8], e[8];
    for (int i0 = 0; i0 < V; i0 += 8) {
        const int m = V - i0 < 8 ? V - i0 : 8;
        for (int l = 0; l < 8; l++)
            in[l] = l < m ? lp[i0 + l] : 0.0f;
        mygpt_exp8(e, in);
        for (int l = 0; l < m; l++) // x - exp(y) * sum, contracted to one FMA by the compiler
            dx[i0 + l] = fmaf(-e[l], g, i0 + l == target ? g : 0.0f);
    }
}

#if defined(MYGPT_X86_KERNELS)
/* The same rows as log_softmax_row and cross_entropy_backward_row above, 8 floats a step in
 * registers instead of through arrays (several times faster: bench/results/design-notes.md):
 * every lane sees the same operations in the same order, so the bits are the same. */

/* log_softmax_row (V >= 8; shorter rows go to it) */
MYGPT_AVX2 static void log_softmax_row_avx2(float *logp, const float *x, int V)
{
    if (V < 8) {
        log_softmax_row(logp, x, V);
        return;
    }
    const float maxv = mygpt_row_max_avx2(x, V);
    const __m256 mx = _mm256_set1_ps(maxv);
    float in[8] = {mygpt_exp_sum_avx2(NULL, x, V, mx), 1, 1, 1, 1, 1, 1, 1}, out[8];
    mygpt_log8_avx2(out, in);
    const __m256 ls = _mm256_set1_ps(out[0]);
    int i = 0;
    for (; i + 8 <= V; i += 8)
        _mm256_storeu_ps(logp + i, _mm256_sub_ps(_mm256_sub_ps(_mm256_loadu_ps(x + i), mx), ls));
    for (; i < V; i++)
        logp[i] = (x[i] - maxv) - out[0];
}

/* cross_entropy_backward_row */
MYGPT_AVX2 static void cross_entropy_backward_row_avx2(float *dx, const float *lp, int64_t target,
                                                      int V, float g)
{
    const __m256 gv = _mm256_set1_ps(g), zero = _mm256_setzero_ps(), sign = _mm256_set1_ps(-0.0f);
    int i0 = 0;
    for (; i0 + 8 <= V; i0 += 8) {
        const __m256 e = Sleef_expf8_u10avx2(_mm256_loadu_ps(lp + i0));
        _mm256_storeu_ps(dx + i0, _mm256_fmadd_ps(_mm256_xor_ps(e, sign), gv, zero));
    }
    if (i0 < V) {
        const __m256i on = mygpt_first_lanes(V - i0);
        const __m256 e = Sleef_expf8_u10avx2(_mm256_maskload_ps(lp + i0, on));
        _mm256_maskstore_ps(dx + i0, on, _mm256_fmadd_ps(_mm256_xor_ps(e, sign), gv, zero));
    }
    /* the target's entry: the same exp of the same float, then + g instead of + 0 (a
     * target outside the row, which the forward refuses, adds g nowhere, as the loop does) */
    if (target < 0 || target >= V)
        return;
    const int64_t t0 = target - target % 8;
    const __m256i on = mygpt_first_lanes(V - t0 < 8 ? (int)(V - t0) : 8);
    float e[8];
    _mm256_storeu_ps(e, Sleef_expf8_u10avx2(_mm256_maskload_ps(lp + t0, on)));
    dx[target] = fmaf(-e[target - t0], g, g);
}
#endif

#if defined(MYGPT_NEON_KERNELS)
/* The same rows with NEON, 4 floats a step in registers, SLEEF's AdvSIMD expf and logf
 * (the bits of its AVX2 functions: sleef_rows.c): every lane sees the same operations in
 * the same order, so the bits are the same. */

/* log_softmax_row (V >= 8; shorter rows go to it) */
static void log_softmax_row_neon(float *logp, const float *x, int V)
{
    if (V < 8) {
        log_softmax_row(logp, x, V);
        return;
    }
    const float maxv = mygpt_row_max_neon(x, V);
    const float logsum = vgetq_lane_f32(Sleef_logf4_u10advsimd(vsetq_lane_f32(mygpt_exp_sum_neon(NULL, x, V, maxv),
                                                                               vdupq_n_f32(1.0f), 0)), 0);
    const float32x4_t mx = vdupq_n_f32(maxv), ls = vdupq_n_f32(logsum);
    int i = 0;
    for (; i + 4 <= V; i += 4)
        vst1q_f32(logp + i, vsubq_f32(vsubq_f32(vld1q_f32(x + i), mx), ls));
    for (; i < V; i++)
        logp[i] = (x[i] - maxv) - logsum;
}

/* cross_entropy_backward_row: fma(-exp(logp), g, 0), then the target's entry again with
 * + g (the same exp of the same float) */
static void cross_entropy_backward_row_neon(float *dx, const float *lp, int64_t target, int V, float g)
{
    const float32x4_t gv = vdupq_n_f32(g), zero = vdupq_n_f32(0.0f);
    int i0 = 0;
    for (; i0 + 4 <= V; i0 += 4)
        vst1q_f32(dx + i0, vfmaq_f32(zero, vnegq_f32(Sleef_expf4_u10advsimd(vld1q_f32(lp + i0))), gv));
    if (i0 < V) { // the tail in the first lanes of a zeroed vector
        float in[4] = {0}, out[4];
        for (int l = 0; l < V - i0; l++)
            in[l] = lp[i0 + l];
        vst1q_f32(out, vfmaq_f32(zero, vnegq_f32(Sleef_expf4_u10advsimd(vld1q_f32(in))), gv));
        for (int l = 0; l < V - i0; l++)
            dx[i0 + l] = out[l];
    }
    if (target < 0 || target >= V) // (refused by the forward: adds g nowhere, as the loop does)
        return;
    const float e = vgetq_lane_f32(Sleef_expf4_u10advsimd(vdupq_n_f32(lp[target])), 0);
    dx[target] = fmaf(-e, g, g);
}
#endif

/* The rows per instruction set, indexed by cpu.h's choice for the loss family: AVX2's (and
 * AVX-512's) and NEON's in registers, the same bits */
static const struct loss_rows {
    void (*log_softmax)(float *logp, const float *x, int V);
    void (*backward)(float *dx, const float *lp, int64_t target, int V, float g);
} ROWS[MYGPT_ISA_COUNT] = {
    [MYGPT_ISA_GENERIC] = {log_softmax_row, cross_entropy_backward_row},
#if defined(MYGPT_X86_KERNELS)
    [MYGPT_ISA_AVX2] = {log_softmax_row_avx2, cross_entropy_backward_row_avx2},
    [MYGPT_ISA_AVX512] = {log_softmax_row_avx2, cross_entropy_backward_row_avx2},
#endif
#if defined(MYGPT_NEON_KERNELS)
    [MYGPT_ISA_NEON] = {log_softmax_row_neon, cross_entropy_backward_row_neon},
#endif
};

mygpt_status mygpt_cross_entropy_forward(float *loss, float *logp, const float *logits,
                                         const int64_t *targets, size_t N, int V,
                                         mygpt_error *err)
{
    if (N < 1 || V < 1)
        return mygpt_fail(err, MYGPT_EINVAL, "cross-entropy needs N >= 1 rows of V >= 1 (N=%zu V=%d)", N, V);
    for (size_t n = 0; n < N; n++)
        if ((targets[n] < 0 || targets[n] >= V) && targets[n] != MYGPT_IGNORE_INDEX)
            return mygpt_fail(err, MYGPT_ERANGE, "target %lld at row %zu is outside [0, %d) and not %d",
                              (long long)targets[n], n, V, MYGPT_IGNORE_INDEX);
    const struct loss_rows *rows = &ROWS[mygpt_cpu_isa(MYGPT_FAMILY_LOSS)];
#pragma omp parallel for schedule(static) if (N * (size_t)V > MYGPT_PARALLEL_MIN)
    for (size_t n = 0; n < N; n++) // rows are independent
        rows->log_softmax(logp + n * V, logits + n * V, V);
    // nll_loss, reduction mean: ATen's cascade sum (8 levels of 2^4 = 16 rows)
    int ceil_log2 = 0;
    while (((size_t)1 << ceil_log2) < N)
        ceil_log2++;
    const int level_power = ceil_log2 / 8 > 4 ? ceil_log2 / 8 : 4;
    const size_t level_mask = ((size_t)1 << level_power) - 1;
    float partial[8] = {0};
    size_t ignored = 0;
    for (size_t b = 0; b < N; b++) {
        if (targets[b] == MYGPT_IGNORE_INDEX) {
            ignored++;
            continue;
        }
        partial[0] -= logp[b * V + (size_t)targets[b]];
        for (int j = 0; j + 1 < 8; j++) {
            if ((b & (level_mask << (j * level_power))) != 0)
                break;
            partial[j + 1] += partial[j];
            partial[j] = 0.0f;
        }
    }
    float total = 0.0f;
    for (int j = 0; j < 8; j++)
        total += partial[j];
    *loss = total / (float)(N - ignored);
    return MYGPT_OK;
}

void mygpt_cross_entropy_backward(float *dlogits, const float *logp, const int64_t *targets,
                                  size_t N, int V)
{
    const struct loss_rows *rows = &ROWS[mygpt_cpu_isa(MYGPT_FAMILY_LOSS)];
    size_t kept = 0;
    for (size_t n = 0; n < N; n++)
        kept += targets[n] != MYGPT_IGNORE_INDEX;
    const float g = -(1.0f / (float)kept); // nll_loss_backward: -(grad_output / total_weight)
#pragma omp parallel for schedule(static) if (N * (size_t)V > MYGPT_PARALLEL_MIN)
    for (size_t n = 0; n < N; n++) // (V,) each
        rows->backward(dlogits + n * V, logp + n * V, targets[n], V, targets[n] == MYGPT_IGNORE_INDEX ? 0.0f : g);
}
