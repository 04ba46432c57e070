/*
 * numfmt.c - Python's and numpy's ways of turning one number into text.
 *
 * The core is "shortest round-trip digits": the decimal with the fewest
 * significant digits that reads back as the same binary value (numpy's Dragon4
 * for float32, Python's repr for double). We find it with the procedure of
 * pytorch-parity.md 8.4: for p = 1, 2, ... take the correctly rounded p-digit
 * decimal; if it does not read back, try its neighbour one unit towards the
 * value; the first p that works wins.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mygpt/print.h"
#include "base/text.h"

/* value = M * 10^(E - (p-1)) with M a p-digit integer */
typedef struct decimal {
    unsigned long long m;
    int e;
    int p;
} decimal;

static unsigned long long pow10ull(int p)
{
    unsigned long long r = 1;
    while (p-- > 0)
        r *= 10;
    return r;
}

static int read_back_equal(decimal d, double v, int is_float)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%llue%d", d.m, d.e - (d.p - 1));
    if (is_float)
        return strtof(buf, NULL) == (float)v;
    return strtod(buf, NULL) == v;
}

/* Shortest digits of |v| (finite, non-zero); max_p is 9 for float32, 17 for double. */
static decimal shortest(double v, int is_float)
{
    const int max_p = is_float ? 9 : 17;
    double a = fabs(v);
    decimal d = {0, 0, 1};
    for (int p = 1; p <= max_p; p++) {
        char buf[64];
        snprintf(buf, sizeof buf, "%.*e", p - 1, a);
        /* buf = "D.DDDDe+XX": collect digits and exponent */
        unsigned long long m = 0;
        const char *s = buf;
        for (; *s && *s != 'e'; s++)
            if (*s >= '0' && *s <= '9')
                m = m * 10 + (unsigned long long)(*s - '0');
        d.m = m;
        d.e = atoi(s + 1);
        d.p = p;
        if (read_back_equal(d, a, is_float))
            return d;
        /* one unit in the last place towards the value */
        char back[64];
        snprintf(back, sizeof back, "%llue%d", d.m, d.e - (p - 1));
        double c1 = is_float ? (double)strtof(back, NULL) : strtod(back, NULL);
        decimal n = d;
        if (c1 > a) {
            if (n.m == pow10ull(p - 1)) { /* 1.00 -> 0.999 */
                n.m = pow10ull(p) - 1;
                n.e -= 1;
            } else {
                n.m -= 1;
            }
        } else {
            n.m += 1;
            if (n.m == pow10ull(p)) { /* 9.99 -> 10.0 */
                n.m = pow10ull(p - 1);
                n.e += 1;
            }
        }
        if (read_back_equal(n, a, is_float))
            return n;
    }
    return d; /* unreachable for max_p digits, which always round-trip */
}

/* digits without trailing zeros; returns their count */
static int decimal_digits(decimal d, char *out)
{
    char buf[32];
    int n = snprintf(buf, sizeof buf, "%llu", d.m);
    while (n > 1 && buf[n - 1] == '0')
        n--;
    memcpy(out, buf, (size_t)n);
    out[n] = '\0';
    return n;
}

int mygpt_shortest_f32(float x, char digits[16], int *exp10)
{
    decimal d = shortest((double)x, 1);
    *exp10 = d.e;
    return decimal_digits(d, digits);
}

/* Writes digits d1d2...dn * 10^exp10 (as d1.d2...) in positional form, with at
 * least `min_frac` fraction digits and always the dot (0 -> "12."). */
static mygpt_status append_positional(mygpt_strbuf *sb, int neg, const char *dg, int n, int exp10,
                                      int min_frac)
{
    if (neg)
        mygpt_sb_append(sb, "-");
    if (exp10 >= 0) {
        for (int i = 0; i <= exp10; i++)
            mygpt_sb_appendn(sb, i < n ? dg + i : "0", 1);
        mygpt_sb_append(sb, ".");
        int frac = 0;
        for (int i = exp10 + 1; i < n; i++, frac++)
            mygpt_sb_appendn(sb, dg + i, 1);
        if (frac < min_frac)
            mygpt_sb_repeat(sb, '0', (size_t)(min_frac - frac));
    } else {
        mygpt_sb_append(sb, "0.");
        mygpt_sb_repeat(sb, '0', (size_t)(-exp10 - 1));
        mygpt_sb_appendn(sb, dg, (size_t)n);
    }
    return sb->failed ? MYGPT_ENOMEM : MYGPT_OK;
}

/* d1[.d2...]e+XX with at least two exponent digits */
static mygpt_status append_scientific(mygpt_strbuf *sb, int neg, const char *dg, int n, int exp10)
{
    if (neg)
        mygpt_sb_append(sb, "-");
    mygpt_sb_appendn(sb, dg, 1);
    if (n > 1) {
        mygpt_sb_append(sb, ".");
        mygpt_sb_appendn(sb, dg + 1, (size_t)(n - 1));
    }
    return mygpt_sb_printf(sb, "e%c%02d", exp10 < 0 ? '-' : '+', abs(exp10));
}

static int append_nonfinite(mygpt_strbuf *sb, double x)
{
    if (isnan(x))
        mygpt_sb_append(sb, "nan");
    else if (isinf(x))
        mygpt_sb_append(sb, x < 0 ? "-inf" : "inf");
    else
        return 0;
    return 1;
}

mygpt_status mygpt_py_float_repr(mygpt_strbuf *sb, double x)
{
    if (append_nonfinite(sb, x))
        return sb->failed ? MYGPT_ENOMEM : MYGPT_OK;
    if (x == 0.0)
        return mygpt_sb_append(sb, signbit(x) ? "-0.0" : "0.0");
    decimal d = shortest(x, 0);
    char dg[32];
    int n = decimal_digits(d, dg);
    /* Python switches to exponent notation when the exponent is < -4 or >= 16 */
    if (d.e < -4 || d.e >= 16)
        return append_scientific(sb, x < 0, dg, n, d.e);
    return append_positional(sb, x < 0, dg, n, d.e, 1);
}

mygpt_status mygpt_np_float32_str(mygpt_strbuf *sb, float x)
{
    if (append_nonfinite(sb, x))
        return sb->failed ? MYGPT_ENOMEM : MYGPT_OK;
    if (x == 0.0f)
        return mygpt_sb_append(sb, signbit(x) ? "-0.0" : "0.0");
    char dg[16];
    int e;
    int n = mygpt_shortest_f32(x, dg, &e);
    double a = fabs((double)x);
    if (a < 1e16 && a >= 1e-4)
        return append_positional(sb, x < 0, dg, n, e, 1);
    return append_scientific(sb, x < 0, dg, n, e);
}

mygpt_status mygpt_py_int_commas(mygpt_strbuf *sb, long long n)
{
    char buf[32];
    int len = snprintf(buf, sizeof buf, "%lld", n);
    int start = buf[0] == '-' ? 1 : 0;
    if (start)
        mygpt_sb_append(sb, "-");
    int digits = len - start;
    for (int i = 0; i < digits; i++) {
        if (i > 0 && (digits - i) % 3 == 0)
            mygpt_sb_append(sb, ",");
        mygpt_sb_appendn(sb, buf + start + i, 1);
    }
    return sb->failed ? MYGPT_ENOMEM : MYGPT_OK;
}

mygpt_status mygpt_py_fixed(mygpt_strbuf *sb, double x, int decimals)
{
    if (append_nonfinite(sb, x))
        return sb->failed ? MYGPT_ENOMEM : MYGPT_OK;
    return mygpt_sb_printf(sb, "%.*f", decimals, x);
}

const char *mygpt_py_fixed_str(char *buf, size_t n, double x, int decimals)
{
    if (isnan(x) || isinf(x)) // no allocation: the text fits any buffer a caller gives it
        snprintf(buf, n, "%s", isnan(x) ? "nan" : x < 0 ? "-inf" : "inf");
    else
        snprintf(buf, n, "%.*f", decimals, x);
    return buf;
}

mygpt_status mygpt_py_sci(mygpt_strbuf *sb, double x, int decimals)
{
    if (append_nonfinite(sb, x))
        return sb->failed ? MYGPT_ENOMEM : MYGPT_OK;
    return mygpt_sb_printf(sb, "%.*e", decimals, x);
}
