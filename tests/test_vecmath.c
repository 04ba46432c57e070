/*
 * test_vecmath.c - the library's own exp and erf (lib/vecmath.h): accurate against
 * libm's double exp and erf, and the same bits whether a loop over them is
 * vectorised (AVX2, AVX-512) or not.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "vecmath.h"

static float from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* distance from the exact value in units of the float spacing there */
static double ulps(float got, double exact)
{
    const float r = fabsf((float)exact);
    const double spacing = r >= 0x1p-126f ? (double)(nextafterf(r, INFINITY) - r) : 0x1p-149;
    return fabs((double)got - exact) / spacing;
}

Test(vecmath, expf_is_within_about_one_ulp_everywhere)
{
    double worst = 0;
    float worst_x = 0;
    long n = 0;
    /* every 61st float: 70 million arguments, all exponents, both signs */
    for (uint64_t u = 0; u <= 0xffffffffu; u += 61) {
        const float x = from_bits((uint32_t)u);
        if (!(x > -103.9f && x < 88.72f))
            continue;
        const double e = ulps(mygpt_expf(x), exp((double)x));
        if (e > worst) {
            worst = e;
            worst_x = x;
        }
        n++;
    }
    cr_expect_gt(n, 10000000);
    cr_expect_leq(worst, 1.02, "worst %.3f ulp at x = %a", worst, (double)worst_x);
}

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

Test(vecmath, erff_is_within_a_few_ulp_everywhere)
{
    double worst = 0;
    float worst_x = 0;
    long n = 0;
    /* every 61st float, both signs: the small-argument polynomial, the exp branch, the
     * switch at |x| = 1 and the saturation to 1 */
    for (uint64_t u = 0; u <= 0xffffffffu; u += 61) {
        const float x = from_bits((uint32_t)u);
        if (isnan(x))
            continue;
        const double exact = erf((double)x);
        /* at +-1 the spacing below 1 is the one that counts */
        const double e = fabs(exact) >= 1.0 - 0x1p-25 ? fabs((double)mygpt_erff(x) - exact) / 0x1p-24
                                                     : ulps(mygpt_erff(x), exact);
        if (e > worst) {
            worst = e;
            worst_x = x;
        }
        n++;
    }
    cr_expect_gt(n, 60000000);
    cr_expect_leq(worst, 2.5, "worst %.3f ulp at x = %a", worst, (double)worst_x);
}

Test(vecmath, erff_special_values)
{
    cr_expect_eq(mygpt_erff(0.0f), 0.0f);
    cr_expect(signbit(mygpt_erff(-0.0f)));
    cr_expect_eq(mygpt_erff(4.0f), 1.0f);
    cr_expect_eq(mygpt_erff(INFINITY), 1.0f);
    cr_expect_eq(mygpt_erff(-INFINITY), -1.0f);
    cr_expect_leq(ulps(mygpt_erff(1e-30f), erf(1e-30)), 1.0); /* tiny: x P(0) */
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
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target("arch=x86-64-v3"))) static void exp_avx2(float *o, const float *x, int n)
{
#pragma omp simd
    BODY
}
__attribute__((target("arch=x86-64-v4"))) static void exp_avx512(float *o, const float *x, int n)
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
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
        exp_avx2(got, x, N_VEC);
        cr_expect(memcmp(got, ref, sizeof ref) == 0, "AVX2 loop differs");
    }
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq")) {
        exp_avx512(got, x, N_VEC);
        cr_expect(memcmp(got, ref, sizeof ref) == 0, "AVX-512 loop differs");
    }
#endif
}
