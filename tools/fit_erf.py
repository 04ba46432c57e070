#!/usr/bin/python3
"""Fits the two polynomials of mygpt_erff (lib/kernels/vecmath.h) and prints them as C.

    erf(x) = x + x * P(x^2)                     for |x| <= 1
    erf(x) = 1 - exp(-x^2) * Q((|x| - 2.5) / 1.5)   for 1 < |x| < 4 (1 beyond)

P fits erf(x)/x - 1 on [0, 1] in the variable x^2 (absolute error: the leading x is
added exactly by the final fused multiply-add, as fdlibm's erf does, so no rounded
2/sqrt(pi) spoils it); Q fits erfc(x) exp(x^2) on [1, 4] (relative error). Both are
least-squares fits on Chebyshev nodes (numpy) of Python's double-precision math.erf /
math.erfc; the C code evaluates them by Horner with fmaf. Rerun to reproduce the
constants:

    /usr/bin/python3 tools/fit_erf.py
"""
import math

import numpy as np

DEG_P, DEG_Q = 7, 12


def fit(f, a, b, deg, var, relative):
    """Monomial coefficients (lowest first) of the fit of f on [a, b] in var(x)."""
    k = np.arange(4000)
    x = (a + b) / 2 + (b - a) / 2 * np.cos(np.pi * (k + 0.5) / len(k))
    y = np.array([f(v) for v in x])
    t = var(x)
    return np.polynomial.polynomial.polyfit(t, y, deg, w=1 / np.abs(y) if relative else None)


def horner32(c, t):
    """Evaluates like the C code: float32 Horner with fused multiply-adds."""
    acc = np.float32(c[-1])
    for ci in c[-2::-1]:
        acc = np.float32(np.float64(acc) * np.float64(np.float32(t)) + np.float64(np.float32(ci)))
    return acc


def main():
    p = fit(lambda x: (math.erf(x) / x if x else 2 / math.sqrt(math.pi)) - 1, 0.0, 1.0, DEG_P,
            lambda x: x * x, relative=False)
    q = fit(lambda x: math.erfc(x) * math.exp(x * x), 1.0, 4.0, DEG_Q, lambda x: (x - 2.5) / 1.5,
            relative=True)
    for name, c in (("P", p), ("Q", q)):
        print("/* %s, lowest degree first */" % name)
        print(",\n".join("    %.9ef" % np.float32(v) for v in c))
    # the worst error of each fit itself (float32 Horner), for the record: P absolute
    # (on erf(x)/x, about 1), Q relative
    xs = np.linspace(1e-3, 1, 20001)
    ep = max(abs(float(horner32(p, np.float32(x) * np.float32(x))) - (math.erf(x) / x - 1)) for x in xs)
    xs = np.linspace(1, 4, 20001)
    eq = max(abs(float(horner32(q, (x - 2.5) / 1.5)) - math.erfc(x) * math.exp(x * x)) /
             (math.erfc(x) * math.exp(x * x)) for x in xs)
    print("/* worst error of the fits: P %.2e (absolute), Q %.2e (relative) */" % (ep, eq))


if __name__ == "__main__":
    main()
