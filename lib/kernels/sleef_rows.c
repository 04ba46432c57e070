/*
 * sleef_rows.c - SLEEF's functions over rows as PyTorch's AVX2 kernels call them (see
 * sleef_rows.h): the loss's and sampling's softmax (expf, logf in their lane order), tanh,
 * and the position encodings' sin, cos, exp and pow.
 */
#include "kernels/sleef_rows.h"

#if defined(__aarch64__)
#include <arm_neon.h>
#endif
#include <math.h>
#include <sleef.h>

#include "kernels/cpu.h"

/* The end of a row's max found in vectors up to element i: maxv, the largest of x[0..i),
 * then x[i..V) in order; a row with a NaN (odd) or a zero max (+0 or -0, whichever came
 * first) is done again by the scalar loop, the only order in which those are defined. */
static inline __attribute__((always_inline)) float row_max_finish(const float *x, int i, int V, float maxv, int odd)
{
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

#if defined(MYGPT_X86_KERNELS)
MYGPT_AVX2 static void exp8_avx2(float *out, const float *in)
{
    _mm256_storeu_ps(out, Sleef_expf8_u10avx2(_mm256_loadu_ps(in)));
}

MYGPT_AVX512 extern __m512 Sleef_finz_tanhf16_u10avx512f(__m512);

MYGPT_AVX2 static void tanh_row_avx2(float *out, const float *in, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(out + i, Sleef_tanhf8_u10avx2(_mm256_loadu_ps(in + i)));
    if (i < n) {
        const __m256i on = mygpt_first_lanes((int)(n - i));
        _mm256_maskstore_ps(out + i, on, Sleef_tanhf8_u10avx2(_mm256_maskload_ps(in + i, on)));
    }
}

/* Sleef_tanhf8_u10avx2 is Sleef_finz_tanhf8_u10avx2: its 16-lane twin gives the same
 * bits on all 2^32 inputs but NaNs, whose payloads may differ (tools/sleef_tanh_widths.c). */
MYGPT_AVX512 static void tanh_row_avx512(float *out, const float *in, size_t n)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(out + i, Sleef_finz_tanhf16_u10avx512f(_mm512_loadu_ps(in + i)));
    if (i < n) {
        const __mmask16 on = (__mmask16)((1u << (n - i)) - 1);
        _mm512_mask_storeu_ps(out + i, on, Sleef_finz_tanhf16_u10avx512f(_mm512_maskz_loadu_ps(on, in + i)));
    }
}

MYGPT_AVX2 void mygpt_log8_avx2(float *out, const float *in)
{
    _mm256_storeu_ps(out, Sleef_logf8_u10avx2(_mm256_loadu_ps(in)));
}

MYGPT_AVX2 static void sincos8_avx2(float *s, float *c, const float *x)
{
    const __m256 v = _mm256_loadu_ps(x);
    _mm256_storeu_ps(s, Sleef_sinf8_u10avx2(v));
    _mm256_storeu_ps(c, Sleef_cosf8_u10avx2(v));
}

MYGPT_AVX2 static void pow8_avx2(float *out, float base, const float *x)
{
    _mm256_storeu_ps(out, Sleef_powf8_u10avx2(_mm256_set1_ps(base), _mm256_loadu_ps(x)));
}

/* The row's max as the scalar loop `m = x[i] > m ? x[i] : m` finds it: _mm256_max_ps(x, m)
 * is that select lane by lane, and the lanes are then taken in the same way. Only a NaN
 * (dropped or kept depending on where it sits) or a zero max (+0 or -0, whichever came
 * first) can depend on the order: such rows go back to the scalar loop. */
MYGPT_AVX2 float mygpt_row_max_avx2(const float *x, int V)
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
    return row_max_finish(x, i, V, maxv, _mm256_movemask_ps(nan) != 0);
}

/* The sum of exp(x - max) over a row of n >= 8 in PyTorch's lane order: lane l takes
 * elements l, l + 8, ..., the last n % 8 go to the first lanes, and the lanes are
 * combined as the scalar code combines them. e, when not NULL, receives the exps. */
MYGPT_AVX2 float mygpt_exp_sum_avx2(float *e, const float *x, int n, __m256 mx)
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
        const __m256i on = mygpt_first_lanes(n - d);
        const __m256 v = Sleef_expf8_u10avx2(_mm256_sub_ps(_mm256_maskload_ps(x + d, on), mx));
        if (e)
            _mm256_maskstore_ps(e + d, on, v);
        acc = _mm256_blendv_ps(acc, _mm256_add_ps(acc, v), _mm256_castsi256_ps(on));
    }
    float a[8];
    _mm256_storeu_ps(a, acc);
    return ((a[0] + a[4]) + (a[2] + a[6])) + ((a[1] + a[5]) + (a[3] + a[7]));
}
#endif

#if defined(__aarch64__)
/* On aarch64 SLEEF's scalar functions round otherwise than its vector ones (4 million
 * inputs apart, expf, logf and tanhf each differ), while its 4-lane AdvSIMD functions
 * give the bits of the AVX2 ones that PyTorch calls: NEON is aarch64's baseline, so
 * they are this CPU's plain set. */
static void exp8_scalar(float *out, const float *in)
{
    vst1q_f32(out, Sleef_expf4_u10advsimd(vld1q_f32(in)));
    vst1q_f32(out + 4, Sleef_expf4_u10advsimd(vld1q_f32(in + 4)));
}

static void log8_scalar(float *out, const float *in)
{
    vst1q_f32(out, Sleef_logf4_u10advsimd(vld1q_f32(in)));
    vst1q_f32(out + 4, Sleef_logf4_u10advsimd(vld1q_f32(in + 4)));
}

static void tanh_row_scalar(float *out, const float *in, size_t n)
{
    size_t i = 0;
    for (; i + 4 <= n; i += 4)
        vst1q_f32(out + i, Sleef_tanhf4_u10advsimd(vld1q_f32(in + i)));
    if (i < n) { /* the tail in the first lanes of a zeroed vector */
        float v[4] = {0};
        for (size_t l = 0; l < n - i; l++)
            v[l] = in[i + l];
        vst1q_f32(v, Sleef_tanhf4_u10advsimd(vld1q_f32(v)));
        for (size_t l = 0; l < n - i; l++)
            out[i + l] = v[l];
    }
}

/* sin and cos of 4 values with SLEEF's AdvSIMD functions */
static void sincos4(float *s, float *c, const float *x)
{
    const float32x4_t v = vld1q_f32(x);
    vst1q_f32(s, Sleef_sinf4_u10advsimd(v));
    vst1q_f32(c, Sleef_cosf4_u10advsimd(v));
}

/* 1 when every |x| of the n is under 125: SLEEF's sin and cos then take the short way */
static int all_small(const float *x, int n)
{
    for (int l = 0; l < n; l++)
        if (!(fabsf(x[l]) < 125.0f)) // a NaN too takes the long way
            return 0;
    return 1;
}

/* One of PyTorch's vectors of 8 angles. SLEEF's sinf and cosf reduce a vector's angles by
 * Cody and Waite's steps when all are under 125 in magnitude, else all by Payne and Hanek's:
 * AVX2 decides for 8 lanes, AdvSIMD for 4. A vector of 8 that takes the long way takes it
 * in both halves here: a half whose own 4 angles are all small is computed 3 angles and 1
 * large one at a time (each lane's result is its own angle's once the way is chosen). The
 * AVX2 functions' bits, NaN payloads aside (docs/pytorch-parity.md, section 13; the posenc
 * suite runs under qemu). */
static void sincos8_scalar(float *s, float *c, const float *x)
{
    float in[8], vs[8], vc[8];
    for (int l = 0; l < 8; l++)
        in[l] = x[l];
    const int long_way = !all_small(in, 8);
    for (int h = 0; h < 8; h += 4) {
        if (!long_way || !all_small(in + h, 4)) {
            sincos4(vs + h, vc + h, in + h);
            continue;
        }
        float a[4] = {in[h], in[h + 1], in[h + 2], 1000.0f}, b[4] = {in[h + 3], 1000.0f, 1000.0f, 1000.0f};
        float as[4], ac[4], bs[4], bc[4];
        sincos4(as, ac, a);
        sincos4(bs, bc, b);
        for (int l = 0; l < 3; l++) {
            vs[h + l] = as[l];
            vc[h + l] = ac[l];
        }
        vs[h + 3] = bs[0];
        vc[h + 3] = bc[0];
    }
    for (int l = 0; l < 8; l++) {
        s[l] = vs[l];
        c[l] = vc[l];
    }
}

/* torch.exp's vector of 8: AdvSIMD's expf, as the loss's */
static void exp8_map_scalar(float *out, const float *in)
{
    exp8_scalar(out, in);
}

/* pow's vector of 8: AdvSIMD's powf, value by value the AVX2 function's bits */
static void pow8_scalar(float *out, float base, const float *x)
{
    const float32x4_t b = vdupq_n_f32(base);
    const float32x4_t lo = Sleef_powf4_u10advsimd(b, vld1q_f32(x)), hi = Sleef_powf4_u10advsimd(b, vld1q_f32(x + 4));
    vst1q_f32(out, lo);
    vst1q_f32(out + 4, hi);
}

/* The row's max (V >= 8): any order finds the same largest value but for a NaN or a zero
 * max (+0 or -0, whichever came first), and such rows go back to the scalar loop
 * `m = x[i] > m ? x[i] : m`, as mygpt_row_max_avx2 does. fmaxv keeps a NaN, so one is seen. */
float mygpt_row_max_neon(const float *x, int V)
{
    float32x4_t m = vld1q_f32(x);
    int i = 4;
    for (; i + 4 <= V; i += 4)
        m = vmaxq_f32(m, vld1q_f32(x + i));
    const float maxv = vmaxvq_f32(m);
    return row_max_finish(x, i, V, maxv, maxv != maxv);
}

/* mygpt_exp_sum_row for n >= 8 in registers: PyTorch's 8 lanes as two vectors of 4 (lo:
 * lanes 0-3, hi: 4-7), each lane the same additions in the same order; the tail's
 * r < 8 values in the first r lanes, as the AVX2 function's masked load. */
float mygpt_exp_sum_neon(float *e, const float *x, int n, float maxv)
{
    const float32x4_t mx = vdupq_n_f32(maxv);
    float32x4_t lo = vdupq_n_f32(0.0f), hi = lo;
    int d = 0;
    for (; d + 8 <= n; d += 8) {
        const float32x4_t vl = Sleef_expf4_u10advsimd(vsubq_f32(vld1q_f32(x + d), mx));
        const float32x4_t vh = Sleef_expf4_u10advsimd(vsubq_f32(vld1q_f32(x + d + 4), mx));
        if (e) {
            vst1q_f32(e + d, vl);
            vst1q_f32(e + d + 4, vh);
        }
        lo = d == 0 ? vl : vaddq_f32(lo, vl);
        hi = d == 0 ? vh : vaddq_f32(hi, vh);
    }
    if (d < n) { /* the tail goes into the first n - d lanes */
        const int r = n - d;
        float in[8] = {0}, v[8], acc[8];
        for (int l = 0; l < r; l++)
            in[l] = x[d + l];
        vst1q_f32(v, Sleef_expf4_u10advsimd(vsubq_f32(vld1q_f32(in), mx)));
        vst1q_f32(v + 4, Sleef_expf4_u10advsimd(vsubq_f32(vld1q_f32(in + 4), mx)));
        vst1q_f32(acc, lo);
        vst1q_f32(acc + 4, hi);
        for (int l = 0; l < r; l++) {
            acc[l] += v[l];
            if (e)
                e[d + l] = v[l];
        }
        lo = vld1q_f32(acc);
        hi = vld1q_f32(acc + 4);
    }
    // ((l0 + l4) + (l2 + l6)) + ((l1 + l5) + (l3 + l7))
    const float32x4_t s = vaddq_f32(lo, hi);
    return (vgetq_lane_f32(s, 0) + vgetq_lane_f32(s, 2)) + (vgetq_lane_f32(s, 1) + vgetq_lane_f32(s, 3));
}
#else
/* SLEEF's scalar functions, as PyTorch's kernels call them without AVX2 */
static void exp8_scalar(float *out, const float *in)
{
    for (int l = 0; l < 8; l++)
        out[l] = Sleef_expf_u10(in[l]);
}

static void log8_scalar(float *out, const float *in)
{
    for (int l = 0; l < 8; l++)
        out[l] = Sleef_logf_u10(in[l]);
}

static void tanh_row_scalar(float *out, const float *in, size_t n)
{
    for (size_t i = 0; i < n; i++)
        out[i] = Sleef_tanhf_u10(in[i]);
}

/* PyTorch's default kernels map the C library's functions over a tensor */
static void sincos8_scalar(float *s, float *c, const float *x)
{
    for (int l = 0; l < 8; l++) {
        const float v = x[l];
        s[l] = sinf(v);
        c[l] = cosf(v);
    }
}

static void exp8_map_scalar(float *out, const float *in)
{
    for (int l = 0; l < 8; l++)
        out[l] = expf(in[l]);
}

static void pow8_scalar(float *out, float base, const float *x)
{
    for (int l = 0; l < 8; l++)
        out[l] = powf(base, x[l]);
}
#endif

/* SLEEF's functions per instruction set, indexed by cpu.h's choice for the loss family */
static const struct sleef_set {
    void (*exp8)(float *out, const float *in);               // 8 values
    void (*log8)(float *out, const float *in);               // 8 values
    void (*tanh_row)(float *out, const float *in, size_t n); // n values
    void (*sincos8)(float *s, float *c, const float *x);     // 8 values, one of torch.sin's vectors
    void (*exp8_map)(float *out, const float *in);           // 8 values, one of torch.exp's vectors
    void (*pow8)(float *out, float base, const float *x);    // 8 values, one of pow's vectors
} SETS[MYGPT_ISA_COUNT] = {
    [MYGPT_ISA_GENERIC] = {exp8_scalar, log8_scalar, tanh_row_scalar, sincos8_scalar, exp8_map_scalar, pow8_scalar},
#if defined(MYGPT_X86_KERNELS)
    [MYGPT_ISA_AVX2] = {exp8_avx2, mygpt_log8_avx2, tanh_row_avx2, sincos8_avx2, exp8_avx2, pow8_avx2},
    // PyTorch's 8-lane functions
    [MYGPT_ISA_AVX512] = {exp8_avx2, mygpt_log8_avx2, tanh_row_avx512, sincos8_avx2, exp8_avx2, pow8_avx2},
#endif
#if defined(MYGPT_NEON_KERNELS)
    [MYGPT_ISA_NEON] = {exp8_scalar, log8_scalar, tanh_row_scalar, sincos8_scalar, exp8_map_scalar,
                        pow8_scalar}, // (AdvSIMD's, above)
#endif
};

static const struct sleef_set *set_here(void)
{
    return &SETS[mygpt_cpu_isa(MYGPT_FAMILY_LOSS)];
}

void mygpt_exp8(float *out, const float *in)
{
    set_here()->exp8(out, in);
}

void mygpt_tanh_row(float *x, size_t n)
{
    set_here()->tanh_row(x, x, n);
}

float mygpt_log1f(float x)
{
    float in[8] = {x, 1, 1, 1, 1, 1, 1, 1}, out[8];
    set_here()->log8(out, in);
    return out[0];
}

/* sum of exp(x - max) over a row, in PyTorch's lane order; e (n) receives the exps */
float mygpt_exp_sum_row(float *e, const float *x, size_t n, float maxv)
{
    void (*const exp8)(float *, const float *) = set_here()->exp8;
    float in[8], v[8], acc[8];
    if (n < 8) {
        for (size_t l = 0; l < 8; l++)
            in[l] = (l < n ? x[l] : 0.0f) - maxv;
        exp8(v, in);
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
        exp8(e + d, in);
        for (int l = 0; l < 8; l++)
            acc[l] = d == 0 ? e[l] : acc[l] + e[d + l];
    }
    const size_t r = n - d;
    if (r > 0) { // the tail goes into the first r lanes
        for (size_t l = 0; l < 8; l++)
            in[l] = (l < r ? x[d + l] : 0.0f) - maxv;
        exp8(v, in);
        for (size_t l = 0; l < r; l++) {
            e[d + l] = v[l];
            acc[l] += v[l];
        }
    }
    return ((acc[0] + acc[4]) + (acc[2] + acc[6])) + ((acc[1] + acc[5]) + (acc[3] + acc[7]));
}

/* vml's map: whole vectors of 8 from x[0], then the last n % 8 in a vector of zeros (as
 * mygpt_exp_map_row) */
void mygpt_sincos_row(float *s, float *c, const float *x, size_t n)
{
    void (*const sincos8)(float *, float *, const float *) = set_here()->sincos8;
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        sincos8(s + i, c + i, x + i);
    if (i < n) {
        float in[8] = {0}, vs[8], vc[8];
        for (size_t l = 0; l < n - i; l++)
            in[l] = x[i + l];
        sincos8(vs, vc, in);
        for (size_t l = 0; l < n - i; l++) {
            s[i + l] = vs[l];
            c[i + l] = vc[l];
        }
    }
}

void mygpt_exp_map_row(float *out, const float *x, size_t n)
{
    void (*const exp8)(float *, const float *) = set_here()->exp8_map;
    float in[8], v[8];
    for (size_t i = 0; i < n; i += 8) {
        const size_t m = n - i < 8 ? n - i : 8;
        for (size_t l = 0; l < 8; l++)
            in[l] = l < m ? x[i + l] : 0.0f;
        exp8(v, in);
        for (size_t l = 0; l < m; l++)
            out[i + l] = v[l];
    }
}

/* the elements of a row of n that PyTorch's pow kernel takes two vectors of 8 at a time;
 * its scalar loop takes the rest */
static size_t pow_vectors(size_t n)
{
    return n - n % 16;
}

void mygpt_pow_row(float *out, float base, const float *x, size_t n)
{
    void (*const pow8)(float *, float, const float *) = set_here()->pow8;
    const size_t vectors = pow_vectors(n);
    float v[8];
    size_t i = 0;
    for (; i < vectors; i += 8) {
        pow8(v, base, x + i);
        for (int l = 0; l < 8; l++)
            out[i + l] = v[l];
    }
    for (; i < n; i++)
        out[i] = powf(base, x[i]);
}

void mygpt_pow_at8(float *out, float base, const float *x, const size_t *at, size_t n)
{
    float v[8];
    set_here()->pow8(v, base, x);
    for (int l = 0; l < 8; l++)
        out[l] = at[l] < pow_vectors(n) ? v[l] : powf(base, x[l]);
}
