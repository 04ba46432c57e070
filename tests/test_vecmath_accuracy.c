/*
 * test_vecmath_accuracy.c - the library's own exp and erf (lib/kernels/vecmath.h) against
 * libm's double exp and erf over the whole float line. A suite of its own (vecmath_accuracy)
 * because it is the longest of the kernels' checks under emulation (a minute under qemu):
 * scripts/cross.sh --ci runs the vecmath suite, whose bits are the kernels', and leaves these
 * sweeps of the same C, run here on every build, to the whole cross run.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernels/vecmath.h"

static float from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* distance from the exact value in units of the float spacing there (below a power
 * of two, the finer spacing below it) */
static double ulps(float got, double exact)
{
    const float r = fabsf((float)exact);
    double spacing = 0x1p-149; /* subnormal */
    if (r >= 0x1p-126f)
        spacing = fabs(exact) < (double)r ? (double)(r - nextafterf(r, 0.0f))
                                          : (double)(nextafterf(r, INFINITY) - r);
    return fabs((double)got - exact) / spacing;
}

/* The worst error of f against the double-precision ref over every 61st float in
 * (lo, hi): about 70 million arguments for the whole line, all exponents, both signs. */
typedef struct sweep {
    double worst;
    float worst_x;
    long n;
} sweep;

static sweep sweep_floats(float (*f)(float), double (*ref)(double), float lo, float hi)
{
    sweep s = {0, 0, 0};
    for (uint64_t u = 0; u <= 0xffffffffu; u += 61) {
        const float x = from_bits((uint32_t)u);
        if (!(x > lo && x < hi)) /* also skips NaN */
            continue;
        const double e = ulps(f(x), ref((double)x));
        if (e > s.worst) {
            s.worst = e;
            s.worst_x = x;
        }
        s.n++;
    }
    return s;
}

Test(vecmath_accuracy, expf_is_within_about_one_ulp_everywhere)
{
    const sweep s = sweep_floats(mygpt_expf, exp, -103.9f, 88.72f);
    cr_expect_gt(s.n, 10000000);
    cr_expect_leq(s.worst, 1.02, "worst %.3f ulp at x = %a", s.worst, (double)s.worst_x);
}

Test(vecmath_accuracy, erff_is_within_about_one_ulp_everywhere)
{
    /* the small-argument polynomial, the exp branch, the switch at |x| = 1 and the
     * saturation to +-1 */
    const sweep s = sweep_floats(mygpt_erff, erf, -INFINITY, INFINITY);
    cr_expect_gt(s.n, 60000000);
    cr_expect_leq(s.worst, 1.2, "worst %.3f ulp at x = %a", s.worst, (double)s.worst_x);
}
