/*
 * test_posenc.c - mygpt/posenc.h. The tables against PyTorch's own code, every value's bits
 * (tests/golden/posenc.txt, tools/gen_goldens.py --posenc): document 001's sinusoidal
 * encoding, RoPE's frequencies and document 002's cache, and the notebook's halves
 * convention with its gradient, at sizes whose angles pass 125 radians (where SLEEF's sin
 * and cos, PyTorch's, reduce a vector of 8 angles the long way) and rows of 12 and 24,
 * whose vectors straddle two positions. Then mygpt_rope_scale_llama3, Llama 3.1's
 * rescaling of RoPE's frequencies: on head size 128 with base 500,000, the fast pairs
 * (wavelength under 2048) keep their bits, the slow ones (over 8192) are divided by the
 * factor exactly, the band between lies between the two and the frequencies still fall
 * pair by pair; and its bad arguments. The rescaled values themselves are checked against
 * PyTorch by chapter 94 (tools/reference_book_llama.py).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "golden.h"
#include "kernels/sleef_rows.h"
#include "mygpt/config.h"
#include "mygpt/posenc.h"
#include "mygpt/rng.h"

enum { HALF = 64 };

/* The golden's fields after " : " (at most max of them, in place) */
static int fields(char *line, char **f, int max)
{
    int n = 0;
    for (char *p = strstr(line, " : "); p && n < max; p = strstr(p, " : ")) {
        *p = '\0';
        p += 3;
        f[n++] = p;
    }
    return n;
}

/* got (n) against the hex words of want, bit for bit; names the first value that differs */
static void expect_bits(const float *got, const char *want, size_t n, const char *what)
{
    float *w = malloc(n * sizeof(float) + 1);
    cr_assert_not_null(w);
    cr_assert_eq(golden_parse_f32(want, w, n), n, "%s: the golden has not %zu values", what, n);
    for (size_t i = 0; i < n; i++)
        cr_assert(golden_same_bits(got[i], w[i]), "%s: value %zu is %.9g, PyTorch's %.9g", what, i,
                  (double)got[i], (double)w[i]);
    free(w);
}

Test(posenc, tables_are_pytorchs_bit_for_bit)
{
    golden_reader r = golden_reader_must_open("posenc.txt");
    int cases = 0;
    for (char *line; (line = golden_read(&r));) {
        char kind[32], *f[4];
        int a, b;
        long c = 0;
        cr_assert_eq(sscanf(line, "%31s %d %d %ld", kind, &a, &b, &c) >= 3, 1, "line %ld", r.lineno);
        const int nf = fields(line, f, 4);
        char what[96];
        snprintf(what, sizeof what, "posenc.txt line %ld (%s %d %d)", r.lineno, kind, a, b);
        mygpt_error err = {0};
        if (strcmp(kind, "sinusoidal") == 0) { // T C
            float *pe = malloc((size_t)a * b * sizeof(float));
            cr_assert_eq(mygpt_sinusoidal_encoding(pe, a, b, &err), MYGPT_OK, "%s: %s", what, err.message);
            expect_bits(pe, f[0], (size_t)a * b, what);
            free(pe);
        } else if (strcmp(kind, "inv_freq") == 0) { // D BASE
            float *fr = malloc((size_t)a / 2 * sizeof(float));
            cr_assert_eq(mygpt_rope_inv_freq(fr, a, b, &err), MYGPT_OK, "%s: %s", what, err.message);
            expect_bits(fr, f[0], (size_t)a / 2, what);
            free(fr);
        } else if (strcmp(kind, "rope_cache") == 0) { // D L
            const size_t half = (size_t)a / 2, n = (size_t)b * half;
            float *fr = malloc(half * sizeof(float)), *cs = malloc(2 * n * sizeof(float));
            cr_assert_eq(mygpt_rope_inv_freq(fr, a, 10000.0, &err), MYGPT_OK);
            cr_assert_eq(mygpt_rope_cache(cs, cs + n, fr, b, (int)half, &err), MYGPT_OK, "%s: %s", what, err.message);
            cr_assert_eq(nf, 2, "%s: not two tables", what);
            expect_bits(cs, f[0], n, what);
            expect_bits(cs + n, f[1], n, what);
            free(fr);
            free(cs);
        } else if (strcmp(kind, "halves_tables") == 0) { // HD L: the tables, read off rotations
            // a row (1, ..., 1 | 0, ..., 0) turns into (cos_a | sin_b), (0 | 1) into (-sin_a | cos_b)
            const size_t n = (size_t)a * b;
            const int half = a / 2;
            float *rows = calloc(2 * n, sizeof(float)), *cs = malloc(2 * n * sizeof(float)), *sn = cs + n;
            for (int r = 0; r < 2 * b; r++)
                for (int i = 0; i < half; i++)
                    rows[(size_t)r * a + (r < b ? i : half + i)] = 1.0f;
            mygpt_rope_heads(rows, 2 * (size_t)b, b, 0, 1, a, MYGPT_ROPE_HALVES, b); // rows at positions r % b
            for (int t = 0; t < b; t++)
                for (int i = 0; i < half; i++) {
                    const float *one_a = rows + (size_t)t * a, *one_b = rows + (size_t)(b + t) * a;
                    cs[(size_t)t * a + i] = one_a[i];
                    sn[(size_t)t * a + half + i] = one_a[half + i];
                    sn[(size_t)t * a + i] = 0.0f - one_b[i]; // (+0 for sin 0)
                    cs[(size_t)t * a + half + i] = one_b[half + i];
                }
            cr_assert_eq(nf, 2, "%s: not two tables", what);
            expect_bits(cs, f[0], n, what);
            expect_bits(sn, f[1], n, what);
            free(rows);
            free(cs);
        } else if (strcmp(kind, "sincos") == 0) { // N SEED: x drawn here
            const size_t n = (size_t)a;
            float *x = malloc(3 * n * sizeof(float)), *sn = x + n, *cs = sn + n;
            mygpt_rng rng;
            mygpt_rng_init(&rng, (uint64_t)b);
            cr_assert_eq(mygpt_uniform_(&rng, x, n, 0.0, 1.0, &err), MYGPT_OK);
            for (size_t i = 0; i < n; i++)
                x[i] = x[i] * 260.0f - 130.0f; // torch.rand(N) * 260 - 130
            cr_assert_eq(nf, 2, "%s: not two tensors", what);
            mygpt_sincos_row(sn, cs, x, n);
            expect_bits(sn, f[0], n, what);
            expect_bits(cs, f[1], n, what);
            free(x);
        } else if (strcmp(kind, "halves") == 0) { // HD L SEED: x and the gradient drawn here
            const size_t n = (size_t)a * b;
            float *x = malloc(n * sizeof(float)), *g = malloc(n * sizeof(float)), *row = malloc(a * sizeof(float));
            mygpt_rng rng;
            mygpt_rng_init(&rng, (uint64_t)c);
            cr_assert_eq(mygpt_normal_(&rng, x, n, 0.0, 1.0, &err), MYGPT_OK);
            cr_assert_eq(mygpt_normal_(&rng, g, n, 0.0, 1.0, &err), MYGPT_OK);
            cr_assert_eq(nf, 2, "%s: not two tensors", what);
            // one position at a time (a KV-cache step) turns a row as the whole sequence does
            const int last = b - 1;
            memcpy(row, x + (size_t)last * a, a * sizeof(float));
            mygpt_rope_heads(row, 1, 1, last, 1, a, MYGPT_ROPE_HALVES, b);
            mygpt_rope_heads(x, (size_t)b, b, 0, 1, a, MYGPT_ROPE_HALVES, b);
            expect_bits(x, f[0], n, what);
            cr_assert_eq(memcmp(row, x + (size_t)last * a, a * sizeof(float)), 0, "%s: position %d alone", what, last);
            mygpt_rope_heads_backward(g, (size_t)b, b, 0, 1, a, MYGPT_ROPE_HALVES, b);
            expect_bits(g, f[1], n, what);
            free(x);
            free(g);
            free(row);
        } else {
            cr_assert_fail("%s: unknown kind", what);
        }
        cases++;
    }
    golden_reader_close(&r);
    cr_assert(cases >= 50, "posenc.txt has %d cases", cases);
}

static const mygpt_rope_scaling LLAMA31 = {.factor = 8, .low_freq_factor = 1, .high_freq_factor = 4,
                                           .original_context = 8192};

/* Shapes with no position or no pair turn nothing and do not fault (a division by T or by
 * the pairs would), nor hang */
Test(posenc, no_position_or_no_pair_turns_nothing)
{
    float x[8] = {1, 2, 3, 4, 5, 6, 7, 8}, out[8] = {0}, c[4] = {1, 1, 1, 1}, s[4] = {0};
    const float before[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    for (int halves = 0; halves < 2; halves++) {
        mygpt_rope_heads(x, 2, 0, 0, 1, 4, halves, 0);  // T = 0
        mygpt_rope_heads(x, 8, 1, 3, 1, 1, halves, 8);  // head_size 1: no pair
        mygpt_rope_heads(x, 8, 1, 3, 8, 0, halves, 8);  // head_size 0
        mygpt_rope_heads_backward(x, 2, 0, 0, 1, 4, halves, 0);
        mygpt_rope_heads_backward(x, 8, 1, 3, 1, 1, halves, 8);
    }
    // an infinite base or factor is refused (it made zeros and NaNs)
    float f[4];
    mygpt_error err = {0};
    cr_expect_eq(mygpt_rope_inv_freq(f, 8, INFINITY, &err), MYGPT_EINVAL);
    const mygpt_rope_scaling inf_factor = {.factor = INFINITY, .low_freq_factor = 1, .high_freq_factor = 4,
                                           .original_context = 8192};
    cr_expect_eq(mygpt_rope_scale_llama3(f, 4, &inf_factor, &err), MYGPT_EINVAL);
    // the notebook's table has no position before 0 (a negative one looped for ever)
    mygpt_rope_heads(x, 1, 1, -1, 1, 8, 1, 0);
    mygpt_rope_heads(x, 1, 1, -1, 1, 8, 1, 16);
    mygpt_rope_heads_backward(x, 1, 1, -5, 1, 8, 1, 4);
    mygpt_rope_apply(out, x, c, s, 2, 0, 2); // T = 0
    cr_assert_eq(memcmp(x, before, sizeof x), 0, "x was changed");
    for (int i = 0; i < 8; i++)
        cr_assert_eq(out[i], 0.0f, "out[%d] was written", i);
}

Test(posenc, bands_of_llama31)
{
    mygpt_error err = {0};
    float base[HALF], scaled[HALF];
    cr_assert_eq(mygpt_rope_inv_freq(base, 2 * HALF, 500000.0, &err), MYGPT_OK);
    memcpy(scaled, base, sizeof scaled);
    cr_assert_eq(mygpt_rope_scale_llama3(scaled, HALF, &LLAMA31, &err), MYGPT_OK);
    int fast = 0, slow = 0, band = 0;
    for (int i = 0; i < HALF; i++) {
        const double wavelen = 2.0 * 3.141592653589793 / base[i];
        if (wavelen < 2047.0) {
            cr_assert_eq(scaled[i], base[i], "pair %d (wavelength %g) was changed", i, wavelen);
            fast++;
        } else if (wavelen > 8193.0) {
            cr_assert_eq(scaled[i], base[i] / 8.0f, "pair %d (wavelength %g) not divided by 8", i, wavelen);
            slow++;
        } else if (wavelen > 2049.0 && wavelen < 8191.0) {
            cr_assert(scaled[i] < base[i] && scaled[i] > base[i] / 8.0f, "pair %d of the band is out of it", i);
            band++;
        }
        if (i > 0)
            cr_assert(scaled[i] < scaled[i - 1], "pair %d turns faster than pair %d", i, i - 1);
    }
    cr_assert(fast > 0 && slow > 0 && band > 0, "fast %d, slow %d, band %d: a band is empty", fast, slow, band);
}

Test(posenc, refuses_bad_arguments)
{
    mygpt_error err = {0};
    float f[HALF];
    cr_assert_eq(mygpt_rope_inv_freq(f, 2 * HALF, 500000.0, &err), MYGPT_OK);
    const mygpt_rope_scaling bad[4] = {
        {.factor = 0.5, .low_freq_factor = 1, .high_freq_factor = 4, .original_context = 8192},
        {.factor = 8, .low_freq_factor = 4, .high_freq_factor = 4, .original_context = 8192},
        {.factor = 8, .low_freq_factor = 1, .high_freq_factor = 4, .original_context = 0},
        {.factor = NAN, .low_freq_factor = 1, .high_freq_factor = 4, .original_context = 8192}};
    for (int k = 0; k < 4; k++) {
        err = (mygpt_error){0};
        cr_assert_eq(mygpt_rope_scale_llama3(f, HALF, &bad[k], &err), MYGPT_EINVAL, "case %d accepted", k);
        cr_assert(err.message[0] != '\0', "case %d: no message", k);
    }
    cr_assert_eq(mygpt_rope_scale_llama3(f, 0, &LLAMA31, &err), MYGPT_EINVAL);
}
