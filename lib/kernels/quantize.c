/*
 * quantize.c - the recipes of the weight formats (mygpt/weights.h): bfloat16 rounding
 * as torch rounds, and int8 in groups with a float32 scale; over plain arrays.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mygpt/weights.h"
#include "base/base.h"

static const char *const NAMES[] = {[MYGPT_WEIGHTS_FP32] = "fp32", [MYGPT_WEIGHTS_BF16] = "bf16",
                                    [MYGPT_WEIGHTS_INT8] = "int8"};

const char *mygpt_weights_name(mygpt_weights w)
{
    return (unsigned)w < sizeof NAMES / sizeof NAMES[0] ? NAMES[w] : "?";
}

mygpt_status mygpt_weights_parse(const char *name, mygpt_weights *out, mygpt_error *err)
{
    for (unsigned i = 0; i < sizeof NAMES / sizeof NAMES[0]; i++)
        if (name && strcmp(name, NAMES[i]) == 0) {
            *out = (mygpt_weights)i;
            return MYGPT_OK;
        }
    return mygpt_fail(err, MYGPT_EINVAL, "unknown weight format '%s' (fp32, bf16, int8)", name ? name : "");
}

/* ---- the recipes ------------------------------------------------------------------ */

/* c10::BFloat16's round_to_nearest_even: add 0x7FFF plus the lowest kept bit, keep the
 * top 16 bits (a tie goes to the even neighbour; a carry moves the exponent up) */
uint16_t mygpt_bf16_round(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return (uint16_t)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

float mygpt_bf16_widen(uint16_t b)
{
    const uint32_t u = (uint32_t)b << 16;
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

mygpt_status mygpt_bf16_quantize(const float *w, size_t n, uint16_t *out, mygpt_error *err)
{
    size_t bad = n;
#pragma omp parallel for schedule(static) reduction(min : bad) if (n > ((size_t)1 << 20))
    for (size_t i = 0; i < n; i++) {
        out[i] = mygpt_bf16_round(w[i]);
        if (!isfinite(w[i]) || (out[i] & 0x7F80u) == 0x7F80u) // all-ones exponent: inf or NaN
            bad = i < bad ? i : bad;
    }
    if (bad < n)
        return mygpt_fail(err, MYGPT_ERANGE, "weight %zu (%g) has no bfloat16 value: %s", bad, (double)w[bad],
                          isfinite(w[bad]) ? "it rounds to infinity" : "not finite");
    return MYGPT_OK;
}

size_t mygpt_weights_value_bytes(mygpt_weights w)
{
    return w == MYGPT_WEIGHTS_BF16 ? 2 : w == MYGPT_WEIGHTS_INT8 ? 1 : sizeof(float);
}

size_t mygpt_int8_groups(int cols)
{
    return cols < 1 ? 0 : ((size_t)cols + MYGPT_INT8_GROUP - 1) / MYGPT_INT8_GROUP;
}

/* One row: each group's scale max|w| / 127, then each weight's round(w / s), clamped.
 * Returns -1, or the index of a weight that is not finite, or the first index of a group
 * whose scale would dequantize to infinity (127 * s overflows: max|w| next to FLT_MAX) */
static int int8_row(const float *w, int cols, int8_t *q, float *scales)
{
    for (int k0 = 0, g = 0; k0 < cols; k0 += MYGPT_INT8_GROUP, g++) {
        const int k1 = cols - k0 < MYGPT_INT8_GROUP ? cols : k0 + MYGPT_INT8_GROUP;
        float m = 0.0f;
        for (int k = k0; k < k1; k++) {
            if (!isfinite(w[k]))
                return k;
            m = fabsf(w[k]) > m ? fabsf(w[k]) : m;
        }
        const float s = m / 127.0f; // float32 division, as torch's amax(...) / 127
        if (!isfinite(127.0f * s))
            return k0;
        scales[g] = s;
        for (int k = k0; k < k1; k++) {
            // nearbyintf: the current rounding mode, to nearest with ties to even (torch.round)
            const float r = s > 0.0f ? nearbyintf(w[k] / s) : 0.0f;
            q[k] = (int8_t)(r > 127.0f ? 127 : r < -127.0f ? -127 : (int)r);
        }
    }
    return -1;
}

mygpt_status mygpt_int8_quantize(const float *w, size_t rows, int cols, int8_t *q, float *scales,
                                 mygpt_error *err)
{
    const size_t groups = mygpt_int8_groups(cols);
    size_t bad = rows * (size_t)cols;
#pragma omp parallel for schedule(static) reduction(min : bad) if (rows * (size_t)cols > ((size_t)1 << 20))
    for (size_t r = 0; r < rows; r++) {
        const int k = int8_row(w + r * cols, cols, q + r * cols, scales + r * groups);
        if (k >= 0)
            bad = r * cols + (size_t)k < bad ? r * cols + (size_t)k : bad;
    }
    if (bad < rows * (size_t)cols && !isfinite(w[bad]))
        return mygpt_fail(err, MYGPT_ERANGE, "weight %zu (%g) is not finite: no int8 value", bad, (double)w[bad]);
    if (bad < rows * (size_t)cols)
        return mygpt_fail(err, MYGPT_ERANGE,
                          "the int8 group from weight %zu has a scale whose 127 x scale is not finite "
                          "(|weights| up to the float32 maximum): no int8 value",
                          bad);
    return MYGPT_OK;
}

void mygpt_int8_dequantize(const int8_t *q, const float *scales, size_t rows, int cols, float *out)
{
    const size_t groups = mygpt_int8_groups(cols);
#pragma omp parallel for schedule(static) if (rows * (size_t)cols > ((size_t)1 << 20))
    for (size_t r = 0; r < rows; r++)
        for (int k = 0; k < cols; k++)
            out[r * cols + k] = (float)q[r * cols + k] * scales[r * groups + (size_t)k / MYGPT_INT8_GROUP];
}
