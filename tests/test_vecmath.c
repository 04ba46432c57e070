/*
 * test_vecmath.c - the library's own exp and erf (lib/kernels/vecmath.h): their ends and
 * special values, and the same bits whether a loop over them is vectorised (AVX2,
 * AVX-512, NEON) or not. Their accuracy over the whole float line: test_vecmath_accuracy.c.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "mygpt/layers.h"
#include "kernels/vecmath.h"
#include "base/simd.h"

Test(vecmath, expf_ends_and_special_values)
{
    cr_expect_eq(mygpt_expf(0.0f), 1.0f);
    cr_expect_eq(mygpt_expf(-0.0f), 1.0f);
    cr_expect_eq(mygpt_expf(88.72283f), expf(88.72283f)); /* the largest finite result */
    cr_expect(isinf(mygpt_expf(88.7229f)));
    cr_expect(isinf(mygpt_expf(INFINITY)));
    cr_expect_eq(mygpt_expf(-87.5f), expf(-87.5f)); /* subnormal results, not 0 */
    cr_expect_eq(mygpt_expf(-103.9f), 0x1p-149f);
    cr_expect_eq(mygpt_expf(-104.0f), 0.0f);
    cr_expect_eq(mygpt_expf(-INFINITY), 0.0f);
    cr_expect(isnan(mygpt_expf(NAN)));
}

Test(vecmath, erff_special_values)
{
    cr_expect_eq(mygpt_erff(0.0f), 0.0f);
    cr_expect(signbit(mygpt_erff(-0.0f)));
    cr_expect_eq(mygpt_erff(4.0f), 1.0f);
    cr_expect_eq(mygpt_erff(INFINITY), 1.0f);
    cr_expect_eq(mygpt_erff(-INFINITY), -1.0f);
    cr_expect_eq(mygpt_erff(1e-30f), (float)erf(1e-30)); /* tiny: x P(0), correctly rounded */
    cr_expect(isnan(mygpt_erff(NAN)));
    cr_expect_eq(mygpt_gelu(0.0f), 0.0f);
    cr_expect_eq(mygpt_gelu(-10.0f), -0.0f);
    cr_expect_eq(mygpt_gelu(10.0f), 10.0f);
}

#define N_VEC 4099
/* o = exp(x), erf(x / 8) and GELU(x / 8): one loop, so all three vectorise together */
#define BODY                                                                                       \
    for (int i = 0; i < n; i++) {                                                                  \
        o[i] = mygpt_expf(x[i]);                                                                   \
        o[n + i] = mygpt_erff(x[i] * 0.125f);                                                      \
        o[2 * n + i] = mygpt_gelu(x[i] * 0.125f);                                                  \
    }
static void exp_plain(float *o, const float *x, int n)
{
    BODY
}
#ifdef MYGPT_X86_KERNELS
MYGPT_AVX2 static void exp_avx2(float *o, const float *x, int n)
{
#pragma omp simd
    BODY
}
MYGPT_AVX512 static void exp_avx512(float *o, const float *x, int n)
{
#pragma omp simd
    BODY
}
#elif defined(__aarch64__)
/* NEON is aarch64's baseline: the same loop, four floats a vector */
static void exp_neon(float *o, const float *x, int n)
{
#pragma omp simd
    BODY
}
#endif

Test(vecmath, vectorised_loops_give_the_same_bits)
{
    static float x[N_VEC], ref[3 * N_VEC], got[3 * N_VEC];
    for (int i = 0; i < N_VEC; i++) /* -110 .. 90 and the special values */
        x[i] = -110.0f + 200.0f * (float)i / N_VEC;
    x[0] = NAN, x[1] = INFINITY, x[2] = -INFINITY, x[3] = -0.0f;
    exp_plain(ref, x, N_VEC);
#ifdef MYGPT_X86_KERNELS
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
        exp_avx2(got, x, N_VEC);
        cr_expect(memcmp(got, ref, sizeof ref) == 0, "AVX2 loop differs");
    }
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq")) {
        exp_avx512(got, x, N_VEC);
        cr_expect(memcmp(got, ref, sizeof ref) == 0, "AVX-512 loop differs");
    }
#elif defined(__aarch64__)
    exp_neon(got, x, N_VEC);
    cr_expect(memcmp(got, ref, sizeof ref) == 0, "NEON loop differs");
#else
    (void)got;
#endif
}

/* GELU's gradient in float32 (layers.c) against the same formula in double with libm's
 * erf and exp: within the 2e-7 that mygpt/layers.h promises, over x in [-12, 12] with
 * dout 1 (1.3e-7 measured); and a second call adds (dinp += ...), which doubles every
 * value exactly. */
Test(vecmath, gelu_backward_is_within_2e_7_of_float64)
{
    enum { n = 240001 };
    static float x[n], dout[n], dinp[n], once[n];
    for (int i = 0; i < n; i++) {
        x[i] = -12.0f + 24.0f * (float)i / (float)(n - 1);
        dout[i] = 1.0f;
        dinp[i] = 0.0f;
    }
    mygpt_gelu_backward(dinp, x, dout, n);
    memcpy(once, dinp, sizeof once);
    double worst = 0;
    for (int i = 0; i < n; i++) {
        const double xd = x[i];
        const double exact = 0.5 * (1.0 + erf(xd * 0.70710678118654752440)) +
                             xd * exp(-0.5 * xd * xd) * 0.39894228040143267794;
        const double err = fabs((double)once[i] - exact);
        worst = err > worst ? err : worst;
    }
    cr_expect_leq(worst, 2e-7, "worst |error| %.3g", worst);
    mygpt_gelu_backward(dinp, x, dout, n);
    int doubled = 1;
    for (int i = 0; i < n; i++)
        doubled &= dinp[i] == 2.0f * once[i];
    cr_expect(doubled, "a second call did not add to dinp");
    cr_log_info("gelu_backward: worst |error| %.3g", worst);
}
