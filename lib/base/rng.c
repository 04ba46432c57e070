/*
 * rng.c - the Mersenne Twister behind torch.manual_seed, and the integer and
 * uniform draws built on it (docs/pytorch-parity.md sections 1, 2 and 4).
 */
#include "mygpt/rng.h"
#include "base/base.h"
#include "base/draws.h"
#include "base/simd.h"

#include <float.h>
#include <math.h>
#include <string.h>

#define MT_M 397
#define MT_MATRIX_A 0x9908b0dfu
#define MT_UPPER 0x80000000u
#define MT_LOWER 0x7fffffffu

void mygpt_rng_init(mygpt_rng *rng, uint64_t seed)
{
    memset(rng, 0, sizeof *rng);
    rng->torch_cpu = MYGPT_TORCH_AVX2;
    mygpt_rng_seed(rng, seed);
}

void mygpt_rng_seed(mygpt_rng *rng, uint64_t seed)
{
    rng->seed = seed;
    rng->mt[0] = (uint32_t)(seed & 0xffffffffu); /* only the low 32 bits matter */
    for (int j = 1; j < MYGPT_MT_N; j++)
        rng->mt[j] = 1812433253u * (rng->mt[j - 1] ^ (rng->mt[j - 1] >> 30)) + (uint32_t)j;
    rng->left = 1; /* so the first draw twists */
    rng->next = 0;
    rng->has_cached_normal = 0;
    rng->cached_normal = 0.0;
}

mygpt_status mygpt_rng_check(const mygpt_rng *rng, mygpt_error *err)
{
    const int seeded = rng->left == 1 && rng->next == 0;
    if (!seeded && (rng->left < 1 || rng->left > MYGPT_MT_N || rng->left + rng->next != MYGPT_MT_N + 1))
        return mygpt_fail(err, MYGPT_EFORMAT,
                          "the generator's left (%d) and next (%d) disagree: a generator keeps left + next = %d, "
                          "left 1 to %d (or left 1, next 0 when seeded)",
                          rng->left, rng->next, MYGPT_MT_N + 1, MYGPT_MT_N);
    if ((rng->has_cached_normal != 0 && rng->has_cached_normal != 1) ||
        (rng->has_cached_normal && !isfinite(rng->cached_normal)))
        return mygpt_fail(err, MYGPT_EFORMAT, "%s", "the generator's cached normal is not a finite value it drew");
    uint32_t any = 0; // all zero: the twist keeps it so (no seed leads there), every draw 0
    for (int i = 0; i < MYGPT_MT_N; i++)
        any |= rng->mt[i];
    if (!any)
        return mygpt_fail(err, MYGPT_EFORMAT, "the generator's %d words are all 0, a state no seed leads to",
                          MYGPT_MT_N);
    if (rng->torch_cpu != MYGPT_TORCH_AVX2 && rng->torch_cpu != MYGPT_TORCH_SCALAR)
        return mygpt_fail(err, MYGPT_EFORMAT, "the generator's torch_cpu (%d) is not one of PyTorch's kernels",
                          (int)rng->torch_cpu);
    return MYGPT_OK;
}

/* One word of the twist: the top bit of a, the low 31 of b, shifted and mixed. */
static inline uint32_t mt_mix(uint32_t a, uint32_t b)
{
    return (((a & MT_UPPER) | (b & MT_LOWER)) >> 1) ^ ((b & 1u) ? MT_MATRIX_A : 0u);
}

/* Regenerates all 624 words in place, word i from the old words i and i + 1 (for the
 * last word, the new word 0) and from word i + 397 (old) or i - 227 (already new). Split
 * where the indices wrap, each loop only reads ahead of what it writes or 227 words
 * behind it, so it runs as vectors. */
MYGPT_CLONES static void mt_twist(uint32_t *mt)
{
    int i = 0;
    for (; i < MYGPT_MT_N - MT_M; i++)
        mt[i] = mt[i + MT_M] ^ mt_mix(mt[i], mt[i + 1]);
    for (; i < MYGPT_MT_N - 1; i++)
        mt[i] = mt[i + MT_M - MYGPT_MT_N] ^ mt_mix(mt[i], mt[i + 1]);
    mt[MYGPT_MT_N - 1] = mt[MT_M - 1] ^ mt_mix(mt[MYGPT_MT_N - 1], mt[0]);
}

static inline uint32_t mt_temper(uint32_t y)
{
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= y >> 18;
    return y;
}

uint32_t mygpt_rng_random(mygpt_rng *rng)
{
    if (--rng->left <= 0) {
        mt_twist(rng->mt);
        rng->left = MYGPT_MT_N;
        rng->next = 0;
    }
    return mt_temper(rng->mt[rng->next++]);
}

/* The state's words are handed out in runs: `left - 1` remain before the next twist
 * (mygpt_rng_random's bookkeeping). A run is tempered as vectors when the words are
 * wanted, and only stepped over when they are not. */
static size_t next_run(mygpt_rng *rng, size_t n)
{
    if (rng->left <= 1) {
        mt_twist(rng->mt);
        rng->left = MYGPT_MT_N + 1;
        rng->next = 0;
    }
    const size_t run = n < (size_t)(rng->left - 1) ? n : (size_t)(rng->left - 1);
    rng->left -= (int)run;
    rng->next += (int)run;
    return run;
}

MYGPT_CLONES static void temper_run(uint32_t *out, const uint32_t *words, size_t n)
{
    for (size_t i = 0; i < n; i++)
        out[i] = mt_temper(words[i]);
}

void mygpt_rng_fill(mygpt_rng *rng, uint32_t *out, size_t n)
{
    while (n) {
        const size_t run = next_run(rng, n);
        temper_run(out, rng->mt + rng->next - run, run);
        out += run;
        n -= run;
    }
}

uint64_t mygpt_rng_random64(mygpt_rng *rng)
{
    uint64_t hi = mygpt_rng_random(rng);
    uint64_t lo = mygpt_rng_random(rng);
    return (hi << 32) | lo;
}

mygpt_status mygpt_uniform_(mygpt_rng *rng, float *data, size_t n, double from, double to,
                            mygpt_error *err)
{
    // PyTorch's checks for a float tensor, in its order and words (an infinity is out of
    // bounds; a NaN, which PyTorch lets through, is refused too)
    if (fabs(from) > FLT_MAX || fabs(to) > FLT_MAX)
        return mygpt_fail(err, MYGPT_EINVAL, "%s is out of bounds for float", fabs(from) > FLT_MAX ? "from" : "to");
    if (isnan(from) || isnan(to))
        return mygpt_fail(err, MYGPT_EINVAL, "uniform_ bounds must be numbers, got from=%g to=%g", from, to);
    if (from > to)
        return mygpt_fail(err, MYGPT_EINVAL,
                          "uniform_ expects to return a [from, to) range, but found from=%g > to=%g",
                          from, to);
    if (to - from > FLT_MAX)
        return mygpt_fail(err, MYGPT_EINVAL,
                          "uniform_ expects to-from <= std::numeric_limits<Float>::max(), but found to=%g and "
                          "from=%g which result in to-from to exceed the limit", to, from);
    const float lo = (float)from, hi = (float)to;
    const float range = hi - lo; /* rounded to float32, as PyTorch's float arithmetic does */
    uint32_t words[MYGPT_MT_N];
    for (size_t i = 0; i < n; i += MYGPT_MT_N) {
        const size_t len = n - i < MYGPT_MT_N ? n - i : MYGPT_MT_N;
        mygpt_rng_fill(rng, words, len);
        for (size_t j = 0; j < len; j++) {
            float x = (float)(words[j] & 0xffffffu) * 0x1p-24f; /* exact */
            if (rng->torch_cpu == MYGPT_TORCH_AVX2)
                data[i + j] = fmaf(x, range, lo); /* GCC fused this in torch's AVX2 build */
            else
                data[i + j] = x * range + lo; /* two roundings (built with -ffp-contract=off) */
        }
    }
    return MYGPT_OK;
}

mygpt_status mygpt_randint(mygpt_rng *rng, int64_t *out, size_t n, int64_t low, int64_t high,
                           mygpt_error *err)
{
    if (low >= high)
        return mygpt_fail(err, MYGPT_EINVAL,
                          "randint expects low < high, but got low=%lld, high=%lld", (long long)low,
                          (long long)high);
    const uint64_t range = (uint64_t)high - (uint64_t)low;
    for (size_t i = 0; i < n; i++) {
        uint64_t v = range >= (UINT64_C(1) << 32) ? mygpt_rng_random64(rng)
                                                   : (uint64_t)mygpt_rng_random(rng);
        out[i] = (int64_t)((uint64_t)low + v % range); /* modulo bias kept, as in torch */
    }
    return MYGPT_OK;
}

void mygpt_randperm(mygpt_rng *rng, int64_t *out, size_t n)
{
    for (size_t i = 0; i < n; i++)
        out[i] = (int64_t)i;
    for (size_t i = 0; i + 1 < n; i++) { /* torch 1.13: a forward Fisher-Yates with 32-bit draws */
        size_t z = (size_t)(mygpt_rng_random(rng) % (uint64_t)(n - i));
        int64_t t = out[i];
        out[i] = out[i + z];
        out[i + z] = t;
    }
}

void mygpt_uniform_skip(mygpt_rng *rng, size_t n)
{
    while (n) // uniform_ takes one 32-bit output a float
        n -= next_run(rng, n);
}
