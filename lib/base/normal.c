/*
 * normal.c - Tensor.normal_ / torch.randn, bit for bit (pytorch-parity.md section 3).
 *
 * PyTorch has two algorithms. Tensors of fewer than 16 elements (or non-contiguous
 * ones) take the "small path": double-precision Box-Muller, one pair of samples per
 * four 32-bit draws, with the unused partner cached in the generator for the next
 * small-path element anywhere. Larger tensors take the "large path": all elements
 * are first filled with float uniforms, then transformed in blocks of 16 by an
 * 8-lane float32 Box-Muller kernel; an incomplete last block is redrawn over the
 * final 16 elements. On AVX2 CPUs that kernel uses Cephes polynomial log/sin/cos
 * with particular fused multiply-adds, reproduced here with explicit fmaf() so
 * the result never depends on the CPU or compiler flags.
 */
#include <math.h>
#include <string.h>

#include "mygpt/rng.h"
#include "base/base.h"
#include "base/draws.h"
#include "base/simd.h"

/* ---- small path ------------------------------------------------------------ */

/* One standard normal sample in double, using or refilling the cache. */
static double small_path_sample(mygpt_rng *rng)
{
    if (rng->has_cached_normal) {
        rng->has_cached_normal = 0;
        return rng->cached_normal;
    }
    const uint64_t mask53 = (UINT64_C(1) << 53) - 1;
    const double u1 = (double)(mygpt_rng_random64(rng) & mask53) * 0x1p-53;
    const double u2 = (double)(mygpt_rng_random64(rng) & mask53) * 0x1p-53;
    const double r = sqrt(-2.0 * log(1.0 - u2));
    const double theta = (2.0 * M_PI) * u1;
    rng->cached_normal = r * sin(theta);
    rng->has_cached_normal = 1;
    return r * cos(theta);
}

/* ---- large path, AVX2 kernel (Cephes polynomials, all float32) -------------- */

static float f32_from_bits(uint32_t b)
{
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

static uint32_t bits_from_f32(float f)
{
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
}

/* Cephes constants as PyTorch's AVX2 kernel has them (hex = float32 bits). */
#define C_SQRTHF 0x3f3504f3u
#define C_P0 0x3d9021bbu
#define C_P1 0xbdebd1b8u
#define C_P2 0x3def251au
#define C_P3 0xbdfe5d4fu
#define C_P4 0x3e11e9bfu
#define C_P5 0xbe2aae50u
#define C_P6 0x3e4cceacu
#define C_P7 0xbe7ffffcu
#define C_P8 0x3eaaaaaau
#define C_Q1 0xb95e8083u
#define C_Q2 0x3f318000u
#define C_FOPI 0x3fa2f983u
#define C_DP1 0x3f490000u
#define C_DP2 0x397da000u
#define C_DP3 0x33222169u
#define C_S0 0xb94ca1f9u
#define C_S1 0x3c08839eu
#define C_S2 0xbe2aaaa3u
#define C_C0 0x37ccf5ceu
#define C_C1 0xbab6061au
#define C_C2 0x3d2aaaa5u
#define C_TWO_PI 0x40c90fdbu

/* Natural log of u in (0, 1], as the Cephes log256_ps kernel computes it. */
static MYGPT_IN_CLONES float cephes_log(float u)
{
    const float min_norm = 0x1p-126f;
    float x = u > min_norm ? u : min_norm;
    uint32_t b = bits_from_f32(x);
    float e = (float)((int32_t)(b >> 23) - 127) + 1.0f;
    float m = f32_from_bits((b & 0x807fffffu) | 0x3f000000u); /* mantissa in [0.5, 1) */
    float t = m < f32_from_bits(C_SQRTHF) ? m : 0.0f;
    if (m < f32_from_bits(C_SQRTHF))
        e = e - 1.0f;
    m = (m - 1.0f) + t;
    const float z = m * m;
    static const uint32_t P[9] = {C_P0, C_P1, C_P2, C_P3, C_P4, C_P5, C_P6, C_P7, C_P8};
    float y = f32_from_bits(P[0]);
    for (int k = 1; k <= 8; k++)
        y = fmaf(y, m, f32_from_bits(P[k]));
    y = y * m;
    y = fmaf(y, z, e * f32_from_bits(C_Q1));
    y = y - z * 0.5f;
    return (m + y) + e * f32_from_bits(C_Q2);
}

/* sin and cos of theta >= 0, as the Cephes sincos256_ps kernel computes them. */
static MYGPT_IN_CLONES void cephes_sincos(float theta, float *sin_out, float *cos_out)
{
    int32_t j = (int32_t)(theta * f32_from_bits(C_FOPI)); /* truncation */
    j = (j + 1) & ~1;
    const float y = (float)j;
    float x = fmaf(y, -f32_from_bits(C_DP1), theta);
    x = fmaf(y, -f32_from_bits(C_DP2), x);
    x = fmaf(y, -f32_from_bits(C_DP3), x);
    const float z = x * x;

    float c = fmaf(f32_from_bits(C_C0), z, f32_from_bits(C_C1));
    c = fmaf(c, z, f32_from_bits(C_C2));
    c = c * z;
    c = fmaf(c, z, -(z * 0.5f));
    c = c + 1.0f;

    float s = fmaf(f32_from_bits(C_S0), z, f32_from_bits(C_S1));
    s = fmaf(s, z, f32_from_bits(C_S2));
    s = s * z;
    s = fmaf(s, x, x);

    float sn, cs;
    if (j & 2) {
        sn = c;
        cs = s;
    } else {
        sn = s;
        cs = c;
    }
    sn = sn + 0.0f; /* the vector code turns -0 into +0 here */
    cs = cs + 0.0f;
    if (j & 4)
        sn = -sn;
    if (((j - 2) & 4) == 0)
        cs = -cs;
    *sin_out = sn;
    *cos_out = cs;
}

/* Transforms d[0..15] (uniforms in [0, 1)) into normals in place. */
static MYGPT_IN_CLONES void normal_block16(float *d, float mean, float std, mygpt_torch_cpu torch_cpu)
{
    for (int j = 0; j < 8; j++) {
        // lesson: box_muller
        const float u1 = 1.0f - d[j]; /* exact */
        const float u2 = d[j + 8];
        if (torch_cpu == MYGPT_TORCH_AVX2) {
            const float radius = sqrtf(-2.0f * cephes_log(u1));
            const float theta = f32_from_bits(C_TWO_PI) * u2;
            float sn, cs;
            cephes_sincos(theta, &sn, &cs);
            d[j] = fmaf(radius * cs, std, mean);
            d[j + 8] = fmaf(radius * sn, std, mean);
        } else {
            const float radius = sqrtf(-2.0f * logf(u1));
            const float theta = (float)((2.0 * M_PI) * (double)u2);
            d[j] = radius * cosf(theta) * std + mean;
            d[j + 8] = radius * sinf(theta) * std + mean;
        }
        // end lesson: box_muller
    }
}

/* normal_block16 on each of d's `blocks` blocks of 16 (built so that fmaf is an
 * instruction, not a call). */
MYGPT_CLONES static void normal_blocks(float *d, size_t blocks, float mean, float std, mygpt_torch_cpu torch_cpu)
{
    for (size_t b = 0; b < blocks; b++)
        normal_block16(d + 16 * b, mean, std, torch_cpu);
}

static void fill_uniform24(mygpt_rng *rng, float *d, size_t n)
{
    uint32_t words[MYGPT_MT_N];
    for (size_t i = 0; i < n; i += MYGPT_MT_N) {
        const size_t len = n - i < MYGPT_MT_N ? n - i : MYGPT_MT_N;
        mygpt_rng_fill(rng, words, len);
        for (size_t j = 0; j < len; j++)
            d[i + j] = (float)(words[j] & 0xffffffu) * 0x1p-24f;
    }
}

static mygpt_status check_normal_args(double mean, double std, mygpt_error *err)
{
    if (!isfinite(mean))
        return mygpt_fail(err, MYGPT_EINVAL, "normal_ expects a finite mean, but found mean=%g",
                          mean);
    if (!(std >= 0.0) || !isfinite(std))
        return mygpt_fail(err, MYGPT_EINVAL,
                          "normal_ expects std >= 0.0 and finite, but found std=%g", std);
    return MYGPT_OK;
}

mygpt_status mygpt_normal_small_(mygpt_rng *rng, float *data, size_t n, double mean, double std,
                                 mygpt_error *err)
{
    mygpt_status st = check_normal_args(mean, std, err);
    if (st != MYGPT_OK)
        return st;
    for (size_t i = 0; i < n; i++)
        data[i] = (float)fma(small_path_sample(rng), std, mean);
    return MYGPT_OK;
}

mygpt_status mygpt_normal_(mygpt_rng *rng, float *data, size_t n, double mean, double std,
                           mygpt_error *err)
{
    if (n < 16)
        return mygpt_normal_small_(rng, data, n, mean, std, err);
    mygpt_status st = check_normal_args(mean, std, err);
    if (st != MYGPT_OK)
        return st;
    const float fmean = (float)mean, fstd = (float)std;
    fill_uniform24(rng, data, n);
    normal_blocks(data, n / 16, fmean, fstd, rng->torch_cpu);
    if (n % 16 != 0) { /* tail: redraw the last 16 and transform them as a block */
        fill_uniform24(rng, data + n - 16, 16);
        normal_blocks(data + n - 16, 1, fmean, fstd, rng->torch_cpu);
    }
    return MYGPT_OK;
}

mygpt_status mygpt_normal_skip(mygpt_rng *rng, size_t n, mygpt_error *err)
{
    if (n < 16) { // each pair of samples draws two doubles and keeps the second: drawn for real
        float sample;
        mygpt_status st = MYGPT_OK;
        for (size_t i = 0; i < n && st == MYGPT_OK; i++)
            st = mygpt_normal_small_(rng, &sample, 1, 0.0, 1.0, err);
        return st;
    }
    mygpt_uniform_skip(rng, n + (n % 16 != 0 ? 16 : 0)); // the uniforms, and a ragged tail's 16 again
    return MYGPT_OK;
}
