/*
 * loss.c - the cross-entropy loss as PyTorch 1.13 computes it on CPU, bit for bit:
 * F.cross_entropy(logits.view(-1, V), targets.view(-1)) = nll_loss(log_softmax(x), y),
 * reduction 'mean'.
 *
 * log_softmax of a row (ATen's vectorised kernel, AVX2 build: 8 float lanes):
 *   max of the row; s = sum of exp(x - max), with SLEEF's expf (u10) on 8 lanes: lane l
 *   takes elements l, l + 8, ...; the last r < 8 elements go to lanes 0..r-1; the lanes
 *   are then combined as ((l0 + l4) + (l2 + l6)) + ((l1 + l5) + (l3 + l7)); rows shorter
 *   than 8 are summed in order; then out = (x - max) - log(s), log being SLEEF's logf.
 * nll_loss: a cascade sum of -logp[target] over blocks of 16 rows, divided by float(N).
 * Backward (nll_loss_backward, then log_softmax's): with g = -(1/N) at each row's target
 * and 0 elsewhere, dx = fma(-exp(logp), g_row_sum, g), exp again SLEEF's (PyTorch's
 * `x - y.exp() * sum` on vectors is compiled into one fused multiply-add).
 *
 * PyTorch calls Debian's libsleef for those exp/log (its AVX2 kernels use
 * Sleef_expf8_u10 / Sleef_logf8_u10), so mygpt links the same library and calls the same
 * AVX2 functions: the loss is bit-identical. On a CPU without AVX2, PyTorch's kernels and
 * SLEEF's scalar functions differ from these in the last bit now and then.
 */
#include <limits.h>
#include <math.h>
#include <omp.h>
#include <string.h>

#include "mygpt/sample.h"
#include "mygpt/train.h"
#include "cpu.h"
#include "internal.h"
#include "parallel.h"
#include "simd.h"

#if defined(MYGPT_X86_KERNELS)
#include <immintrin.h>
#include <sleef.h>
/* sleef.h declares its 256-bit functions only when the whole file is compiled for AVX;
 * here only two functions are, so their prototypes (sleef.h's) are repeated, marked
 * AVX2 as they are (clang refuses to pass a __m256 to a function declared without). */
MYGPT_AVX2 extern __m256 Sleef_expf8_u10avx2(__m256);
MYGPT_AVX2 extern __m256 Sleef_logf8_u10avx2(__m256);

MYGPT_AVX2 static void exp8_avx2(float *out, const float *in)
{
    _mm256_storeu_ps(out, Sleef_expf8_u10avx2(_mm256_loadu_ps(in)));
}
MYGPT_AVX2 static void log8_avx2(float *out, const float *in)
{
    _mm256_storeu_ps(out, Sleef_logf8_u10avx2(_mm256_loadu_ps(in)));
}
static int have_avx2(void)
{
    return mygpt_cpu_isa(MYGPT_FAMILY_LOSS) >= MYGPT_ISA_AVX2;
}

/* The same rows as log_softmax_row and the backward's loop below, 8 floats a step in
 * registers instead of through arrays (256 rows of V = 50257 on one thread: forward 48
 * -> 9 ms, backward 41 -> 6 ms; `mygpt-bench --loss 256,50257`): every lane sees the
 * same operations in the same order, so the bits are the same. */

/* lanes 0..r-1 on, the rest off (r <= 8) */
MYGPT_AVX2 static __m256i first_lanes(int r)
{
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(r), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* The row's max as the scalar loop `m = x[i] > m ? x[i] : m` finds it: _mm256_max_ps(x, m)
 * is that select lane by lane, and the lanes are then taken in the same way. Only a NaN
 * (dropped or kept depending on where it sits) or a zero max (+0 or -0, whichever came
 * first) can depend on the order: such rows go back to the scalar loop. */
MYGPT_AVX2 static float row_max_avx2(const float *x, int V)
{
    __m256 m = _mm256_loadu_ps(x);
    __m256 nan = _mm256_cmp_ps(m, m, _CMP_UNORD_Q);
    int i = 8;
    for (; i + 8 <= V; i += 8) {
        const __m256 v = _mm256_loadu_ps(x + i);
        nan = _mm256_or_ps(nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
        m = _mm256_max_ps(v, m);
    }
    float lanes[8];
    _mm256_storeu_ps(lanes, m);
    float maxv = lanes[0];
    for (int l = 1; l < 8; l++)
        maxv = lanes[l] > maxv ? lanes[l] : maxv;
    int odd = _mm256_movemask_ps(nan) != 0;
    for (; i < V; i++) {
        odd |= x[i] != x[i];
        maxv = x[i] > maxv ? x[i] : maxv;
    }
    if (odd || maxv == 0.0f) {
        maxv = x[0];
        for (int k = 1; k < V; k++)
            maxv = x[k] > maxv ? x[k] : maxv;
    }
    return maxv;
}

/* The sum of exp(x - max) over a row of n >= 8 in PyTorch's lane order: lane l takes
 * elements l, l + 8, ..., the last n % 8 go to the first lanes, and the lanes are
 * combined as the scalar code combines them. e, when not NULL, receives the exps. */
MYGPT_AVX2 static float exp_sum_avx2(float *e, const float *x, int n, __m256 mx)
{
    __m256 acc = _mm256_setzero_ps();
    int d = 0;
    for (; d + 8 <= n; d += 8) {
        const __m256 v = Sleef_expf8_u10avx2(_mm256_sub_ps(_mm256_loadu_ps(x + d), mx));
        if (e)
            _mm256_storeu_ps(e + d, v);
        acc = d == 0 ? v : _mm256_add_ps(acc, v);
    }
    if (d < n) { /* the tail goes into the first n - d lanes */
        const __m256i on = first_lanes(n - d);
        const __m256 v = Sleef_expf8_u10avx2(_mm256_sub_ps(_mm256_maskload_ps(x + d, on), mx));
        if (e)
            _mm256_maskstore_ps(e + d, on, v);
        acc = _mm256_blendv_ps(acc, _mm256_add_ps(acc, v), _mm256_castsi256_ps(on));
    }
    float a[8];
    _mm256_storeu_ps(a, acc);
    return ((a[0] + a[4]) + (a[2] + a[6])) + ((a[1] + a[5]) + (a[3] + a[7]));
}

/* log_softmax_row for V >= 8 */
MYGPT_AVX2 static void log_softmax_row_avx2(float *logp, const float *x, int V)
{
    const float maxv = row_max_avx2(x, V);
    const __m256 mx = _mm256_set1_ps(maxv);
    float in[8] = {exp_sum_avx2(NULL, x, V, mx), 1, 1, 1, 1, 1, 1, 1}, out[8];
    log8_avx2(out, in);
    const __m256 ls = _mm256_set1_ps(out[0]);
    int i = 0;
    for (; i + 8 <= V; i += 8)
        _mm256_storeu_ps(logp + i, _mm256_sub_ps(_mm256_sub_ps(_mm256_loadu_ps(x + i), mx), ls));
    for (; i < V; i++)
        logp[i] = (x[i] - maxv) - out[0];
}

/* One row of the backward: dx = fma(-exp(logp), g, g at the target, else 0) */
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
        const __m256i on = first_lanes(V - i0);
        const __m256 e = Sleef_expf8_u10avx2(_mm256_maskload_ps(lp + i0, on));
        _mm256_maskstore_ps(dx + i0, on, _mm256_fmadd_ps(_mm256_xor_ps(e, sign), gv, zero));
    }
    /* the target's entry: the same exp of the same float, then + g instead of + 0 (a
     * target outside the row, which the forward refuses, adds g nowhere, as the loop does) */
    if (target < 0 || target >= V)
        return;
    const int64_t t0 = target - target % 8;
    const __m256i on = first_lanes(V - t0 < 8 ? (int)(V - t0) : 8);
    float e[8];
    _mm256_storeu_ps(e, Sleef_expf8_u10avx2(_mm256_maskload_ps(lp + t0, on)));
    dx[target] = fmaf(-e[target - t0], g, g);
}

/* mygpt_softmax_torch's row for 8 <= n: exps into probs, their lane sums, then probs
 * times 1 / sum */
MYGPT_AVX2 static void softmax_row_avx2(float *probs, const float *x, int n)
{
    const float sum = exp_sum_avx2(probs, x, n, _mm256_set1_ps(row_max_avx2(x, n)));
    const __m256 inv = _mm256_set1_ps(1.0f / sum);
    int i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(probs + i, _mm256_mul_ps(_mm256_loadu_ps(probs + i), inv));
    for (; i < n; i++)
        probs[i] = probs[i] * (1.0f / sum);
}
#else
#include <sleef.h>
static int have_avx2(void)
{
    return 0;
}
static void exp8_avx2(float *out, const float *in) { (void)out; (void)in; }
static void log8_avx2(float *out, const float *in) { (void)out; (void)in; }
#endif

/* out[i] = exp(in[i]) (or log) for 8 values, as PyTorch's AVX2 kernels compute them */
static void exp8(float *out, const float *in, int avx2)
{
    if (avx2)
        exp8_avx2(out, in);
    else
        for (int l = 0; l < 8; l++)
            out[l] = Sleef_expf_u10(in[l]);
}

static float log1f_sleef(float x, int avx2)
{
    float in[8] = {x, 1, 1, 1, 1, 1, 1, 1}, out[8];
    if (avx2)
        log8_avx2(out, in);
    else
        out[0] = Sleef_logf_u10(x);
    return out[0];
}

/* One row of log_softmax: logp (V) from x (V). */
static void log_softmax_row(float *logp, const float *x, int V, int avx2)
{
    float maxv = x[0];
    for (int i = 1; i < V; i++)
        maxv = x[i] > maxv ? x[i] : maxv; // max is exact whatever the order
    float in[8], e[8], acc[8];
    float sum;
    if (V < 8) { // map the padded vector, then add the lanes in order
        for (int l = 0; l < 8; l++)
            in[l] = (l < V ? x[l] : 0.0f) - maxv;
        exp8(e, in, avx2);
        sum = e[0];
        for (int l = 1; l < V; l++)
            sum += e[l];
    } else {
        for (int l = 0; l < 8; l++)
            in[l] = x[l] - maxv;
        exp8(acc, in, avx2);
        int d = 8;
        for (; d < V - V % 8; d += 8) {
            for (int l = 0; l < 8; l++)
                in[l] = x[d + l] - maxv;
            exp8(e, in, avx2);
            for (int l = 0; l < 8; l++)
                acc[l] += e[l];
        }
        const int r = V - d; // the tail goes into the first r lanes
        if (r > 0) {
            for (int l = 0; l < 8; l++)
                in[l] = (l < r ? x[d + l] : 0.0f) - maxv;
            exp8(e, in, avx2);
            for (int l = 0; l < r; l++)
                acc[l] += e[l];
        }
        sum = ((acc[0] + acc[4]) + (acc[2] + acc[6])) + ((acc[1] + acc[5]) + (acc[3] + acc[7]));
    }
    const float logsum = log1f_sleef(sum, avx2);
    for (int i = 0; i < V; i++)
        logp[i] = (x[i] - maxv) - logsum;
}

/* sum of exp(x - max) over a row, in PyTorch's lane order; e (n) receives the exps */
static float exp_sum_row(float *e, const float *x, size_t n, float maxv, int avx2)
{
    float in[8], v[8], acc[8];
    if (n < 8) {
        for (size_t l = 0; l < 8; l++)
            in[l] = (l < n ? x[l] : 0.0f) - maxv;
        exp8(v, in, avx2);
        float sum = v[0];
        e[0] = v[0];
        for (size_t l = 1; l < n; l++) {
            e[l] = v[l];
            sum += v[l];
        }
        return sum;
    }
    size_t d = 0;
    for (; d + 8 <= n; d += 8) {
        for (int l = 0; l < 8; l++)
            in[l] = x[d + l] - maxv;
        exp8(e + d, in, avx2);
        for (int l = 0; l < 8; l++)
            acc[l] = d == 0 ? e[l] : acc[l] + e[d + l];
    }
    const size_t r = n - d;
    if (r > 0) { // the tail goes into the first r lanes
        for (size_t l = 0; l < 8; l++)
            in[l] = (l < r ? x[d + l] : 0.0f) - maxv;
        exp8(v, in, avx2);
        for (size_t l = 0; l < r; l++) {
            e[d + l] = v[l];
            acc[l] += v[l];
        }
    }
    return ((acc[0] + acc[4]) + (acc[2] + acc[6])) + ((acc[1] + acc[5]) + (acc[3] + acc[7]));
}

void mygpt_softmax_torch(float *probs, const float *x, size_t n)
{
    if (n == 0)
        return;
    const int avx2 = have_avx2();
#if defined(MYGPT_X86_KERNELS)
    if (avx2 && n >= 8 && n <= INT_MAX) {
        softmax_row_avx2(probs, x, (int)n);
        return;
    }
#endif
    float maxv = x[0];
    for (size_t i = 1; i < n; i++)
        maxv = x[i] > maxv ? x[i] : maxv;
    // vec::map exp into the output, reduce_all the sum, then x * (1 / sum)
    const float sum = exp_sum_row(probs, x, n, maxv, avx2);
    const float inv = 1.0f / sum;
    for (size_t i = 0; i < n; i++)
        probs[i] = probs[i] * inv;
}

mygpt_status mygpt_cross_entropy_forward(float *loss, float *logp, const float *logits,
                                         const int64_t *targets, size_t N, int V,
                                         mygpt_error *err)
{
    if (N < 1 || V < 1)
        return mygpt_fail(err, MYGPT_EINVAL, "cross-entropy needs N >= 1 rows of V >= 1 (N=%zu V=%d)", N, V);
    for (size_t n = 0; n < N; n++)
        if (targets[n] < 0 || targets[n] >= V)
            return mygpt_fail(err, MYGPT_ERANGE, "target %lld at row %zu is outside [0, %d)",
                              (long long)targets[n], n, V);
    const int avx2 = have_avx2();
#pragma omp parallel for schedule(static) if (N * (size_t)V > MYGPT_PARALLEL_MIN)
    for (size_t n = 0; n < N; n++) { // rows are independent
#if defined(MYGPT_X86_KERNELS)
        if (avx2 && V >= 8) {
            log_softmax_row_avx2(logp + n * V, logits + n * V, V);
            continue;
        }
#endif
        log_softmax_row(logp + n * V, logits + n * V, V, avx2);
    }
    // nll_loss, reduction mean: ATen's cascade sum (8 levels of 2^4 = 16 rows)
    int ceil_log2 = 0;
    while (((size_t)1 << ceil_log2) < N)
        ceil_log2++;
    const int level_power = ceil_log2 / 8 > 4 ? ceil_log2 / 8 : 4;
    const size_t level_mask = ((size_t)1 << level_power) - 1;
    float partial[8] = {0};
    for (size_t b = 0; b < N; b++) {
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
    *loss = total / (float)N;
    return MYGPT_OK;
}

MYGPT_CLONES static void cross_entropy_backward(float *dlogits, const float *logp,
                                                const int64_t *targets, size_t N, int V)
{
    const int avx2 = have_avx2();
    const float g = -(1.0f / (float)N); // nll_loss_backward: -(grad_output / total_weight)
#pragma omp parallel for schedule(static) if (N * (size_t)V > MYGPT_PARALLEL_MIN)
    for (size_t n = 0; n < N; n++) {
        const float *lp = logp + n * V; // (V,)
        float *dx = dlogits + n * V;    // (V,)
#if defined(MYGPT_X86_KERNELS)
        if (avx2) {
            cross_entropy_backward_row_avx2(dx, lp, targets[n], V, g);
            continue;
        }
#endif
        // the row's gradient sums to g (one non-zero entry); dx = grad - exp(logp) * g
        float in[8], e[8];
        for (int i0 = 0; i0 < V; i0 += 8) {
            const int m = V - i0 < 8 ? V - i0 : 8;
            for (int l = 0; l < 8; l++)
                in[l] = l < m ? lp[i0 + l] : 0.0f;
            exp8(e, in, avx2);
            for (int l = 0; l < m; l++) // x - exp(y) * sum, contracted to one FMA by the compiler
                dx[i0 + l] = fmaf(-e[l], g, i0 + l == targets[n] ? g : 0.0f);
        }
    }
}

void mygpt_cross_entropy_backward(float *dlogits, const float *logp, const int64_t *targets,
                                  size_t N, int V)
{
    cross_entropy_backward(dlogits, logp, targets, N, V); // a static clone set: no resolver exported
}
