/*
 * test_rng.c - the generator against PyTorch: the test vectors of
 * pytorch-parity.md section 10, then every call chain of tests/golden/rng*.txt
 * (made by tools/gen_goldens.py from torch 1.13) replayed bit for bit.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "golden.h"
#include "mygpt/rng.h"

static uint32_t bits(float f)
{
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
}

static void expect_bits(const float *got, const uint32_t *want, size_t n, const char *what)
{
    for (size_t i = 0; i < n; i++)
        cr_expect_eq(bits(got[i]), want[i], "%s[%zu]: got %08x, want %08x", what, i, bits(got[i]),
                     want[i]);
}

/* ---- spec section 10 -------------------------------------------------------- */

Test(rng_spec, seed0_first_draws)
{
    static const uint32_t want[16] = {0x8c7f0aac, 0x97c4aa2f, 0xb716a675, 0xd821ccc0, 0x9a4eb343,
                                      0xdba252fb, 0x8b7d76c3, 0xd8e57d67, 0x6c74a409, 0x9fa1ded3,
                                      0xa5595115, 0x6266d6f2, 0x7005b724, 0x4c2b3a57, 0xe44b3c46,
                                      0x0e84bdd8};
    mygpt_rng r = {0};
    mygpt_rng_seed(&r, 0);
    for (int i = 0; i < 16; i++)
        cr_expect_eq(mygpt_rng_random(&r), want[i], "draw %d", i);
    mygpt_rng_seed(&r, 0);
    cr_expect_eq(mygpt_rng_random64(&r), UINT64_C(0x8c7f0aac97c4aa2f));
    cr_expect_eq(mygpt_rng_random64(&r), UINT64_C(0xb716a675d821ccc0));
}

Test(rng_spec, only_low_32_bits_of_seed_matter)
{
    mygpt_rng a = {0}, b = {0};
    mygpt_rng_seed(&a, 1337);
    mygpt_rng_seed(&b, (UINT64_C(1) << 32) + 1337);
    float x[2], y[2];
    mygpt_normal_(&a, x, 2, 0, 1, NULL);
    mygpt_normal_(&b, y, 2, 0, 1, NULL);
    static const uint32_t want[2] = {0xc001a9db, 0xc004314c};
    expect_bits(x, want, 2, "seed 1337");
    expect_bits(y, want, 2, "seed 2^32+1337");
    cr_expect_eq(b.seed, (UINT64_C(1) << 32) + 1337, "the full seed is remembered");
}

Test(rng_spec, randn_4x4_large_path_avx2_and_scalar)
{
    static const uint32_t avx2[16] = {0xbf901b85, 0xbf93808a, 0xbe804bd6, 0xbede255d,
                                      0x3f594515, 0x3f312783, 0xbea1cc6d, 0xc0075fc1,
                                      0x3ea50138, 0xbfa1b4f4, 0x3eb330ff, 0x3e9dc3bb,
                                      0x3df56f77, 0x3f9e6b93, 0x3f8ef28e, 0xbe7d367c};
    static const uint32_t scalar[16] = {0xbf901b85, 0xbf93808a, 0xbe804bd6, 0xbede255e,
                                        0x3f594515, 0x3f312784, 0xbea1cc6d, 0xc0075fc2,
                                        0x3ea50138, 0xbfa1b4f4, 0x3eb330ff, 0x3e9dc3ba,
                                        0x3df56f77, 0x3f9e6b93, 0x3f8ef28e, 0xbe7d365a};
    mygpt_rng r = {0};
    float d[16];
    mygpt_rng_seed(&r, 0);
    cr_assert_eq(mygpt_normal_(&r, d, 16, 0.0, 1.0, NULL), MYGPT_OK);
    expect_bits(d, avx2, 16, "avx2");
    r.torch_cpu = MYGPT_TORCH_SCALAR;
    mygpt_rng_seed(&r, 0);
    mygpt_normal_(&r, d, 16, 0.0, 1.0, NULL);
    expect_bits(d, scalar, 16, "scalar");
}

Test(rng_spec, small_path_cache_persists_across_calls)
{
    mygpt_rng r = {0};
    float a, b, c[3];
    mygpt_rng_seed(&r, 0);
    mygpt_normal_(&r, &a, 1, 0, 1, NULL);
    mygpt_normal_(&r, &b, 1, 0, 1, NULL); /* comes from the cache: no draws */
    cr_expect_eq(bits(a), 0x3fc53f5cu);
    cr_expect_eq(bits(b), 0xbe963c50u);
    mygpt_rng_seed(&r, 0);
    mygpt_normal_(&r, c, 3, 0, 1, NULL);
    static const uint32_t want[3] = {0x3fc53f5c, 0xbe963c50, 0xc00b7149};
    expect_bits(c, want, 3, "randn(3)");
    cr_expect(r.has_cached_normal, "randn(3) leaves a sine cached");
    mygpt_rng_seed(&r, 0);
    cr_expect(!r.has_cached_normal, "manual_seed clears the cache");
}

Test(rng_spec, seed42_randn17_tail_redraw)
{
    static const uint32_t want[17] = {0x3ff6a529, 0xbe236d85, 0xbefeaae4, 0x3ee111d8, 0xbf4214e2,
                                      0x3f8a0650, 0x3f4d0144, 0x3fd71e93, 0x3eb63345, 0x3fa5f12f,
                                      0x3f1c4788, 0x3faad8b0, 0xbe6d2eed, 0x3d2b0c00, 0xbe80ce7a,
                                      0x3f5c1fb0, 0xbe9e9482};
    mygpt_rng r = {0};
    float d[17];
    mygpt_rng_seed(&r, 42);
    mygpt_normal_(&r, d, 17, 0, 1, NULL);
    expect_bits(d, want, 17, "randn(17)");
}

Test(rng_spec, uniform_randint_randperm_linear_embedding)
{
    mygpt_rng r = {0};
    float d[20], w[12], b[3];
    int64_t q[10];
    mygpt_rng_seed(&r, 0);
    mygpt_uniform_(&r, d, 5, 0.0, 1.0, NULL);
    static const uint32_t rand5[5] = {0x3efe1558, 0x3f44aa2f, 0x3db533a8, 0x3e073300, 0x3e9d6686};
    expect_bits(d, rand5, 5, "rand(5)");

    mygpt_rng_seed(&r, 0);
    mygpt_normal_(&r, d, 20, 0.0, 0.02, NULL);
    static const uint32_t n002[4] = {0xbcb87525, 0xbcbccd7d, 0xbba4381c, 0xbc0e2c64};
    expect_bits(d, n002, 4, "normal_(0, 0.02)");

    mygpt_rng_seed(&r, 0);
    mygpt_randint(&r, q, 8, 0, 10, NULL);
    static const int64_t ri[8] = {4, 9, 3, 0, 3, 9, 7, 3};
    for (int i = 0; i < 8; i++)
        cr_expect_eq(q[i], ri[i]);
    mygpt_rng_seed(&r, 0);
    mygpt_randint(&r, q, 2, 0, INT64_C(1) << 40, NULL);
    cr_expect_eq(q[0], INT64_C(741280623151));
    cr_expect_eq(q[1], INT64_C(506137267392));

    mygpt_rng_seed(&r, 0);
    mygpt_randperm(&r, q, 10);
    static const int64_t rp[10] = {4, 1, 7, 5, 3, 9, 0, 8, 6, 2};
    for (int i = 0; i < 10; i++)
        cr_expect_eq(q[i], rp[i]);

    mygpt_rng_seed(&r, 0);
    mygpt_init_linear(&r, w, b, 4, 3, NULL);
    static const uint32_t lw[12] = {0xbb755400, 0x3e89545e, 0xbed2b316, 0xbebc6680,
                                    0xbe4532f4, 0x3e094bec, 0xbc224f40, 0x3ecaface,
                                    0xbd35bf70, 0x3e077b4c, 0xbe1abbac, 0xbdc94870};
    static const uint32_t lb[3] = {0xbef491b8, 0xbea98b52, 0xbe530ee8};
    expect_bits(w, lw, 12, "Linear(4,3).weight");
    expect_bits(b, lb, 3, "Linear(4,3).bias");

    mygpt_rng_seed(&r, 0);
    mygpt_init_embedding(&r, d, 3, 4, NULL);
    static const uint32_t e34[4] = {0x3fc53f5c, 0xbe963c50, 0xc00b7149, 0x3f1184b6};
    expect_bits(d, e34, 4, "Embedding(3,4) row 0");
}

Test(rng_spec, linear_weight_bound_is_computed_like_pytorch)
{
    cr_expect_eq(mygpt_linear_weight_bound(4), 0.49999999999999994);
    cr_expect_eq(mygpt_linear_weight_bound(0), 0.0);
}

/* ---- bad arguments are errors, not crashes ---------------------------------- */

Test(rng_errors, bad_arguments_return_errors)
{
    mygpt_rng r = {0};
    mygpt_error err = {0};
    float d[4];
    int64_t q[4];
    mygpt_rng_seed(&r, 0);
    cr_expect_eq(mygpt_uniform_(&r, d, 4, 1.0, 0.0, &err), MYGPT_EINVAL);
    cr_expect(strstr(err.message, "from=1 > to=0") != NULL, "message: %s", err.message);
    cr_expect_eq(mygpt_normal_(&r, d, 4, 0.0, -1.0, &err), MYGPT_EINVAL);
    cr_expect(strstr(err.message, "std >= 0.0") != NULL, "message: %s", err.message);
    cr_expect_eq(mygpt_randint(&r, q, 4, 5, 5, &err), MYGPT_EINVAL);
    cr_expect(strstr(err.message, "low=5, high=5") != NULL, "message: %s", err.message);
    cr_expect_eq(mygpt_init_embedding(&r, d, SIZE_MAX / 2, 3, &err), MYGPT_EOVERFLOW);
    cr_expect_eq(mygpt_init_linear(&r, d, NULL, SIZE_MAX / 2, 3, &err), MYGPT_EOVERFLOW);
    /* a failed call draws nothing: the stream continues as if it never happened */
    mygpt_rng fresh = {0};
    mygpt_rng_seed(&fresh, 0);
    cr_expect_eq(mygpt_rng_random(&r), mygpt_rng_random(&fresh));
}

/* mygpt_rng_check: every state the draws leave passes (single draws, runs, normals across
 * twists), and a state whose words disagree, as a file may hold one, is refused */
Test(rng_errors, a_state_whose_words_disagree_is_refused)
{
    mygpt_rng r = {0};
    mygpt_error err = {0};
    mygpt_rng_seed(&r, 5);
    cr_expect_eq(mygpt_rng_check(&r, &err), MYGPT_OK, "seeded: %s", err.message);
    uint32_t words[700];
    float z[3];
    for (int round = 0; round < 40; round++) {
        if (round % 3 == 0)
            mygpt_rng_fill(&r, words, (size_t)(round * 31) % 700);
        else if (round % 3 == 1)
            for (int k = 0; k < round * 17; k++)
                mygpt_rng_random(&r);
        else
            cr_assert_eq(mygpt_normal_(&r, z, 3, 0.0, 1.0, &err), MYGPT_OK); // leaves a normal cached
        cr_expect_eq(mygpt_rng_check(&r, &err), MYGPT_OK, "round %d (left %d, next %d): %s", round, r.left, r.next,
                     err.message);
    }
    const struct {
        int left, next;
    } bad[] = {{625, 624}, {624, 624}, {1, 1}, {0, 625}, {2, 0}, {626, -1}, {-1, 626}, {624, 0}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        mygpt_rng b = r;
        b.left = bad[i].left;
        b.next = bad[i].next;
        cr_expect_eq(mygpt_rng_check(&b, &err), MYGPT_EFORMAT, "left %d, next %d accepted", b.left, b.next);
        cr_expect(strstr(err.message, "disagree") != NULL, "%s", err.message);
    }
    mygpt_rng c = r;
    c.has_cached_normal = 1;
    c.cached_normal = NAN;
    cr_expect_eq(mygpt_rng_check(&c, &err), MYGPT_EFORMAT, "a NaN cached normal accepted");
    c.has_cached_normal = 2;
    c.cached_normal = 0.5;
    cr_expect_eq(mygpt_rng_check(&c, &err), MYGPT_EFORMAT, "has_cached_normal 2 accepted");
    mygpt_rng zero = r; // words all 0: a file's zeroed block, which drew 0 forever after the twist
    memset(zero.mt, 0, sizeof zero.mt);
    cr_expect_eq(mygpt_rng_check(&zero, &err), MYGPT_EFORMAT, "words all 0 accepted");
    cr_expect(strstr(err.message, "all 0") != NULL, "%s", err.message);
}

Test(rng_spec, fill_is_the_same_stream_as_single_draws)
{
    /* runs of every length from 0 up, mixed with single draws, across many twists */
    mygpt_rng a = {0}, b = {0};
    mygpt_rng_seed(&a, 2718);
    mygpt_rng_seed(&b, 2718);
    uint32_t got[1500];
    size_t drawn = 0;
    for (size_t len = 0; len < 1500; len += 37) {
        mygpt_rng_fill(&a, got, len);
        for (size_t i = 0; i < len; i++) {
            const uint32_t want = mygpt_rng_random(&b);
            if (got[i] != want)
                cr_assert_fail("run of %zu, word %zu (draw %zu): got %08x, want %08x", len, i, drawn + i, got[i], want);
        }
        drawn += len + 1;
        cr_assert_eq(mygpt_rng_random(&a), mygpt_rng_random(&b), "the single draw after %zu words", drawn);
    }
    cr_assert_gt(drawn, 20 * MYGPT_MT_N, "the runs crossed many twists");
}

/* ---- golden call chains ----------------------------------------------------- */

#define MAXV (1 << 16)
/* the buffers hold MAXV values; a larger golden operation is a test bug */
#define CHECK_N(n) cr_assert((n) <= MAXV, "%s:%ld: %zu values exceed the buffer", file, lineno, (size_t)(n))

static size_t shape_numel(const char *s)
{
    size_t n = 1;
    char *end;
    for (;;) {
        n *= (size_t)strtoull(s, &end, 10);
        if (*end != ',')
            return n;
        s = end + 1;
    }
}

/* Replays every "case SEED ... end" block of a golden file on one generator. */
static void replay(const char *file, mygpt_torch_cpu torch_cpu)
{
    FILE *f = golden_open(file);
    cr_assert_not_null(f, "missing golden file %s", file);
    char *line = NULL;
    size_t cap = 0;
    long lineno = 0;
    mygpt_rng r = {0};
    r.torch_cpu = torch_cpu;
    float *got = malloc(MAXV * sizeof *got), *want = malloc(MAXV * sizeof *want);
    int64_t *gi = malloc(MAXV * sizeof *gi), *wi = malloc(MAXV * sizeof *wi);
    int ops = 0, cases = 0, bad_lines = 0;
    while (golden_next_line(f, &line, &cap, &lineno) >= 0) {
        if (strncmp(line, "case ", 5) == 0) {
            mygpt_rng_seed(&r, strtoull(line + 5, NULL, 10));
            cases++;
            continue;
        }
        if (strcmp(line, "end") == 0)
            continue;
        char *colon = strstr(line, " : ");
        cr_assert_not_null(colon, "%s:%ld: malformed", file, lineno);
        *colon = '\0';
        const char *values = colon + 3;
        char *w[5];
        int nw = golden_split(line, ' ', w, 5);
        mygpt_error err = {0};
        size_t n = 0, nwant;
        int is_int = 0;
        if (strcmp(w[0], "normal") == 0 && nw == 4) {
            n = shape_numel(w[1]);
            CHECK_N(n);
            cr_assert_eq(mygpt_normal_(&r, got, n, strtod(w[2], NULL), strtod(w[3], NULL), &err),
                         MYGPT_OK, "%s", err.message);
        } else if (strcmp(w[0], "uniform") == 0 && nw == 4) {
            n = shape_numel(w[1]);
            CHECK_N(n);
            cr_assert_eq(mygpt_uniform_(&r, got, n, strtod(w[2], NULL), strtod(w[3], NULL), &err),
                         MYGPT_OK, "%s", err.message);
        } else if (strcmp(w[0], "randint") == 0 && nw == 4) {
            n = shape_numel(w[1]);
            CHECK_N(n);
            is_int = 1;
            cr_assert_eq(mygpt_randint(&r, gi, n, strtoll(w[2], NULL, 10),
                                       strtoll(w[3], NULL, 10), &err),
                         MYGPT_OK, "%s", err.message);
        } else if (strcmp(w[0], "randperm") == 0 && nw == 2) {
            n = strtoull(w[1], NULL, 10);
            CHECK_N(n);
            is_int = 1;
            mygpt_randperm(&r, gi, n);
        } else if (strcmp(w[0], "linear") == 0 && nw == 4) {
            size_t in = strtoull(w[1], NULL, 10), out = strtoull(w[2], NULL, 10);
            int bias = atoi(w[3]);
            n = in * out + (bias ? out : 0);
            CHECK_N(n);
            cr_assert_eq(mygpt_init_linear(&r, got, bias ? got + in * out : NULL, in, out, &err),
                         MYGPT_OK, "%s", err.message);
        } else if (strcmp(w[0], "embedding") == 0 && nw == 3) {
            size_t num = strtoull(w[1], NULL, 10), dim = strtoull(w[2], NULL, 10);
            n = num * dim;
            CHECK_N(n);
            cr_assert_eq(mygpt_init_embedding(&r, got, num, dim, &err), MYGPT_OK, "%s",
                         err.message);
        } else {
            cr_assert_fail("%s:%ld: unknown op '%s'", file, lineno, w[0]);
        }
        nwant = is_int ? golden_parse_i64(values, wi, MAXV) : golden_parse_f32(values, want, MAXV);
        cr_assert_eq(nwant, n, "%s:%ld: %zu values in golden, %zu computed", file, lineno, nwant, n);
        int mismatches = 0;
        for (size_t i = 0; i < n; i++) {
            int same = is_int ? gi[i] == wi[i] : bits(got[i]) == bits(want[i]);
            if (!same && mismatches++ < 3) {
                if (is_int)
                    cr_log_error("%s:%ld %s[%zu]: got %lld want %lld", file, lineno, w[0], i,
                                 (long long)gi[i], (long long)wi[i]);
                else
                    cr_log_error("%s:%ld %s[%zu]: got %08x want %08x", file, lineno, w[0], i,
                                 bits(got[i]), bits(want[i]));
            }
        }
        if (mismatches)
            bad_lines++;
        ops++;
    }
    cr_expect_eq(bad_lines, 0, "%s: %d of %d operations differ from PyTorch", file, bad_lines, ops);
    cr_expect_gt(cases, 300, "%s: expected hundreds of cases, read %d", file, cases);
    free(line);
    free(got);
    free(want);
    free(gi);
    free(wi);
    fclose(f);
}

Test(rng_golden, avx2_chains_match_torch)
{
    replay("rng.txt", MYGPT_TORCH_AVX2);
}

Test(rng_golden, scalar_kernel_chains_match_torch_default_capability)
{
    replay("rng_scalar.txt", MYGPT_TORCH_SCALAR);
}
