/*
 * vecmath.h - exp and erf for float32 that vectorise (private to the library).
 *
 * Why not expf()/erff() from libm: a libm call inside a loop stops the compiler
 * from vectorising it, and softmax (75 million exps in a GPT-2 forward pass) and
 * GELU (37 million erfs) then run one value at a time. These two are plain C over
 * +, *, fmaf and integer bit moves, with selects instead of branches, so
 * `#pragma omp simd` turns a loop over them into AVX2 / AVX-512 code.
 *
 * Same bits everywhere (stb's rule): every operation is an IEEE-754 float32
 * operation or fmaf (exactly rounded wherever it runs), so the vector code, the
 * scalar code and every thread give identical results; that is why the naive and
 * the fast attention both use mygpt_expf and stay bit-identical.
 *
 * Accuracy: mygpt_expf is Cephes' expf scheme (range reduction by ln 2 split in two
 * parts, a degree-5 polynomial): about 1 ulp. mygpt_erff is within a few ulp of erff
 * (measured over all floats by tests/test_vecmath.c against libm). Both are well
 * inside the 1e-5 by which the model's logits may differ from PyTorch's.
 */
#ifndef MYGPT_VECMATH_H
#define MYGPT_VECMATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

static inline float mygpt_bits_to_float(int32_t i)
{
    float f;
    memcpy(&f, &i, sizeof f);
    return f;
}

/* 2^k as a float, for k in [-126, 127] (built from the exponent bits) */
static inline float mygpt_pow2i(int32_t k)
{
    return mygpt_bits_to_float((k + 127) << 23);
}

/* exp(x) for float32, about 1 ulp; inf above ln(FLT_MAX), 0 below the smallest
 * subnormal, NaN for NaN. */
static inline float mygpt_expf(float x)
{
    /* clamp so the arithmetic below stays finite; the selects at the end fix the ends */
    float xc = x > 88.72283935546875f ? 88.72283935546875f : x;
    xc = xc < -103.5f ? -103.5f : xc;
    /* k = round(x / ln 2): adding 1.5 * 2^23 rounds the fused product to an integer */
    const float kf = fmaf(xc, 1.44269504088896341f, 12582912.0f) - 12582912.0f;
    /* r = x - k ln 2, with ln 2 = 0.693359375 - 2.12194440e-4 (the first part is exact
     * in 9 bits, so k * 0.693359375 is exact) */
    float r = fmaf(kf, -0.693359375f, xc);
    r = fmaf(kf, 2.12194440e-4f, r);
    /* exp(r) = 1 + r + r^2 P(r) on |r| <= ln2 / 2 (Cephes' minimax coefficients) */
    float p = 1.9875691500e-4f;
    p = fmaf(p, r, 1.3981999507e-3f);
    p = fmaf(p, r, 8.3334519073e-3f);
    p = fmaf(p, r, 4.1665795894e-2f);
    p = fmaf(p, r, 1.6666665459e-1f);
    p = fmaf(p, r, 5.0000001201e-1f);
    const float y = fmaf(p, r * r, r) + 1.0f;
    /* times 2^k in two steps, so results below 2^-126 come out subnormal, not 0 */
    const int32_t k = (int32_t)kf, k1 = k / 2, k2 = k - k1;
    float e = y * mygpt_pow2i(k1) * mygpt_pow2i(k2);
    e = x > 88.72283935546875f ? INFINITY : e;
    e = x < -103.97208404541015625f ? 0.0f : e;
    return x != x ? x : e;
}

#endif
