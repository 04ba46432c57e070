/*
 * vecmath.h - exp and erf for float32 that vectorise (private to the library).
 *
 * Why not expf()/erff() from libm: a libm call inside a loop stops the compiler
 * from vectorising it, and softmax (75 million exps in a GPT-2 forward pass) and
 * GELU (38 million erfs) then run one value at a time. These two are plain C over
 * +, *, fmaf and integer bit moves, with selects instead of branches (mygpt_select), so
 * `#pragma omp simd` turns a loop over them into AVX2, AVX-512 and NEON code.
 * Each is always inlined (MYGPT_IN_CLONES): a call left out of line (clang 14 left
 * mygpt_gelu so) keeps the loop scalar, and runs the baseline code in a clone.
 *
 * Same bits everywhere (stb's rule): every operation is an IEEE-754 float32
 * operation or fmaf (exactly rounded wherever it runs), so the vector code, the
 * scalar code and every thread give identical results; that is why the naive and
 * the fast attention both use mygpt_expf and stay bit-identical.
 *
 * Accuracy (against libm's double exp and erf, tests/test_vecmath.c): mygpt_expf is
 * Cephes' expf scheme (range reduction by ln 2 split in two parts, a degree-5
 * polynomial), within 1.02 ulp; mygpt_erff (two fitted polynomials, see below)
 * within 1.2 ulp. Both are far inside the 1e-5 by which the model's logits may differ
 * from PyTorch's.
 */
#ifndef MYGPT_VECMATH_H
#define MYGPT_VECMATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "base/simd.h"

static MYGPT_IN_CLONES float mygpt_bits_to_float(int32_t i)
{
    float f;
    memcpy(&f, &i, sizeof f);
    return f;
}

/* c ? a : b, the same bits, as integer bit operations: gcc 12 compiles a ternary as a
 * branch and moves the arithmetic that only one side uses into it; float arithmetic
 * under a branch may trap (-ftrapping-math), so the loop then vectorises only where
 * there are masked instructions (AVX-512), not on AVX2 or NEON. */
static MYGPT_IN_CLONES float mygpt_select(int c, float a, float b)
{
    uint32_t ua, ub;
    memcpy(&ua, &a, sizeof ua);
    memcpy(&ub, &b, sizeof ub);
    const uint32_t m = 0u - (uint32_t)(c != 0);
    return mygpt_bits_to_float((int32_t)((ua & m) | (ub & ~m)));
}

/* c[0] x^(n-1) + c[1] x^(n-2) + ... + c[n-1] by Horner's rule, one fmaf a step from the
 * highest power: the same operations in the same order wherever it runs */
static MYGPT_IN_CLONES float mygpt_horner(float x, const float *c, int n)
{
    float p = c[0];
    for (int i = 1; i < n; i++)
        p = fmaf(p, x, c[i]);
    return p;
}

/* 2^k as a float, for k in [-126, 127] (built from the exponent bits) */
static MYGPT_IN_CLONES float mygpt_pow2i(int32_t k)
{
    return mygpt_bits_to_float((int32_t)((uint32_t)(k + 127) << 23));
}

/* exp(x) for float32, about 1 ulp; inf above ln(FLT_MAX), 0 below the smallest
 * subnormal, NaN for NaN. */
static MYGPT_IN_CLONES float mygpt_expf(float x)
{
    /* clamp so the arithmetic below stays finite (NaN goes to the low end, so the
     * conversion to int below is always defined); the selects at the end fix the ends */
    float xc = mygpt_select(x > -103.5f, x, -103.5f);
    xc = mygpt_select(xc < 88.72283935546875f, xc, 88.72283935546875f);
    /* k = round(x / ln 2): adding 1.5 * 2^23 rounds the fused product to an integer */
    const float kf = fmaf(xc, 1.44269504088896341f, 12582912.0f) - 12582912.0f;
    /* r = x - k ln 2, with ln 2 = 0.693359375 - 2.12194440e-4 (the first part is exact
     * in 9 bits, so k * 0.693359375 is exact) */
    float r = fmaf(kf, -0.693359375f, xc);
    r = fmaf(kf, 2.12194440e-4f, r);
    /* exp(r) = 1 + r + r^2 P(r) on |r| <= ln2 / 2 (Cephes' minimax coefficients) */
    static const float P[] = {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f,
                              4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f};
    const float y = fmaf(mygpt_horner(r, P, 6), r * r, r) + 1.0f;
    /* times 2^k in two steps, so results below 2^-126 come out subnormal, not 0 */
    const int32_t k = (int32_t)kf, k1 = k / 2, k2 = k - k1;
    float e = y * mygpt_pow2i(k1) * mygpt_pow2i(k2);
    e = mygpt_select(x > 88.72283935546875f, INFINITY, e);
    e = mygpt_select(x < -103.97208404541015625f, 0.0f, e);
    return mygpt_select(x != x, x, e);
}

/* erf(x) for float32, within a few ulp (the worst case is asserted in
 * tests/test_vecmath.c). Two polynomials fitted by tools/fit_erf.py:
 *   |x| <= 1:      erf(x) = x + x P(x^2)
 *   1 < |x| < 4:   erf(x) = 1 - exp(-x^2) Q((|x| - 2.5) / 1.5)  (1 in float beyond 3.92)
 * Both are computed and one is selected, so a vector of mixed arguments needs no
 * branch. */
static MYGPT_IN_CLONES float mygpt_erff(float x)
{
    const float a = fabsf(x);
    const float z = x * x;
    static const float P[] = {-9.728410078e-06f, 1.128817530e-04f, -8.487267769e-04f, 5.221261643e-03f,
                              -2.686551772e-02f, 1.128378436e-01f,  -3.761263788e-01f, 1.283791661e-01f};
    const float small = fmaf(x, mygpt_horner(z, P, 8), x); /* x + x P: the leading x is exact */
    float ac = mygpt_select(a > 1.0f, a, 1.0f);
    ac = mygpt_select(ac < 4.0f, ac, 4.0f);
    const float t = (ac - 2.5f) * 0.666666686534881591796875f;
    static const float Q[] = {1.244564919e-05f, -3.665494660e-05f, 5.902049452e-05f, -1.446941023e-04f,
                              4.099893558e-04f, -1.016381313e-03f, 2.404004335e-03f, -5.567650311e-03f,
                              1.248917542e-02f, -2.700567059e-02f, 5.611051619e-02f, -1.115210056e-01f,
                              2.108063698e-01f};
    const float big = 1.0f - mygpt_expf(-(ac * ac)) * mygpt_horner(t, Q, 13);
    const float r = mygpt_select(a <= 1.0f, small, mygpt_select(x < 0.0f, -big, big));
    return mygpt_select(x != x, x, r);
}

/* GELU, exact form (erf, not tanh): x/2 (1 + erf(x / sqrt 2)), as nn.GELU() */
static MYGPT_IN_CLONES float mygpt_gelu(float x)
{
    return 0.5f * x * (1.0f + mygpt_erff(x * 0.70710678118654752440f));
}

#endif
