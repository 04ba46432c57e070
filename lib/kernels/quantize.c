/*
 * quantize.c - the weight formats (mygpt/weights.h): their recipes, bfloat16 rounding
 * as torch rounds and int8 in groups with a float32 scale, over plain arrays; and the
 * table of each format's facts (at the end), which everything else reads.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mygpt/weights.h"
#include "base/base.h"

const char *mygpt_weights_name(mygpt_weights w)
{
    const mygpt_weights_traits *t = mygpt_weights_traits_of(w);
    return t ? t->name : "?";
}

mygpt_status mygpt_weights_parse(const char *name, mygpt_weights *out, mygpt_error *err)
{
    for (int i = 0; i < MYGPT_WEIGHTS_COUNT; i++)
        if (name && strcmp(name, mygpt_weights_traits_of((mygpt_weights)i)->name) == 0) {
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

size_t mygpt_int8_groups(int cols)
{
    return mygpt_weights_scales(MYGPT_WEIGHTS_INT8, cols);
}

/* One row: each group's scale max|w| / 127, then each weight's round(w / s), clamped.
 * Returns -1, or the index of a weight that is not finite, or the first index of a group
 * whose scale would dequantize to infinity (127 * s overflows: max|w| next to FLT_MAX) */
static int int8_row(const float *w, int cols, int8_t *q, float *scales)
{
    for (int k0 = 0, g = 0; k0 < cols; k0 += MYGPT_INT8_GROUP, g++) {
        const int k1 = cols - k0 < MYGPT_INT8_GROUP ? cols : k0 + MYGPT_INT8_GROUP;
        // lesson: int8_group
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
        // end lesson: int8_group
    }
    return -1;
}

mygpt_status mygpt_int8_quantize(const float *w, size_t rows, int cols, int8_t *q, float *scales,
                                 mygpt_error *err)
{
    if (cols < 1)
        return MYGPT_OK; // no values
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
    if (cols < 1)
        return; // no values
    const size_t groups = mygpt_int8_groups(cols);
#pragma omp parallel for schedule(static) if (rows * (size_t)cols > ((size_t)1 << 20))
    for (size_t r = 0; r < rows; r++)
        for (int k = 0; k < cols; k++)
            out[r * cols + k] = (float)q[r * cols + k] * scales[r * groups + (size_t)k / MYGPT_INT8_GROUP];
}

/* ---- the table's rows: each format's recipe, reading and check over (rows, cols) -------- */

static mygpt_status fp32_quantize(const float *w, size_t rows, int cols, void *q, float *scales, mygpt_error *err)
{
    if (cols < 1)
        return MYGPT_OK; // no values
    (void)scales, (void)err;
    memcpy(q, w, rows * (size_t)cols * sizeof *w);
    return MYGPT_OK;
}

static void fp32_dequantize(const void *q, const float *scales, size_t rows, int cols, float *out)
{
    if (cols < 1)
        return; // no values
    (void)scales;
    memcpy(out, q, rows * (size_t)cols * sizeof *out);
}

static mygpt_status bf16_quantize(const float *w, size_t rows, int cols, void *q, float *scales, mygpt_error *err)
{
    if (cols < 1)
        return MYGPT_OK; // no values
    (void)scales;
    return mygpt_bf16_quantize(w, rows * (size_t)cols, q, err);
}

static void bf16_dequantize(const void *q, const float *scales, size_t rows, int cols, float *out)
{
    if (cols < 1)
        return; // no values
    (void)scales;
    const uint16_t *b = q;
    const size_t n = rows * (size_t)cols;
#pragma omp parallel for schedule(static) if (n > ((size_t)1 << 20))
    for (size_t k = 0; k < n; k++)
        out[k] = mygpt_bf16_widen(b[k]);
}

static mygpt_status bf16_check(const void *q, const float *scales, size_t rows, int cols, mygpt_error *err)
{
    if (cols < 1)
        return MYGPT_OK; // no values
    (void)scales;
    const uint16_t *b = q;
    const size_t n = rows * (size_t)cols;
    for (size_t k = 0; k < n; k++)
        if ((b[k] & 0x7F80u) == 0x7F80u) // all-ones exponent: inf or NaN
            return mygpt_fail(err, MYGPT_EFORMAT, "bfloat16 value %zu is not finite", k);
    return MYGPT_OK;
}

static mygpt_status int8_quantize(const float *w, size_t rows, int cols, void *q, float *scales, mygpt_error *err)
{
    return mygpt_int8_quantize(w, rows, cols, q, scales, err);
}

static void int8_dequantize(const void *q, const float *scales, size_t rows, int cols, float *out)
{
    mygpt_int8_dequantize(q, scales, rows, cols, out);
}

static mygpt_status int8_check(const void *q8, const float *scales, size_t rows, int cols, mygpt_error *err)
{
    if (cols < 1)
        return MYGPT_OK; // no values
    const int8_t *q = q8;
    const size_t n = rows * (size_t)cols, ns = rows * mygpt_int8_groups(cols);
    for (size_t k = 0; k < n; k++)
        if (q[k] == -128)
            return mygpt_fail(err, MYGPT_EFORMAT, "int8 value %zu is -128 (the recipe clamps to -127)", k);
    for (size_t k = 0; k < ns; k++)
        if (!isfinite(scales[k]) || scales[k] < 0.0f)
            return mygpt_fail(err, MYGPT_EFORMAT, "int8 scale %zu (%g) is not a finite non-negative float", k,
                              (double)scales[k]);
        else if (!isfinite(127.0f * scales[k])) // the recipe never gives it: 127 * s would be inf
            return mygpt_fail(err, MYGPT_EFORMAT, "int8 scale %zu (%g) dequantizes to infinity (127 x scale)", k,
                              (double)scales[k]);
    return MYGPT_OK;
}

static const mygpt_weights_traits TRAITS[MYGPT_WEIGHTS_COUNT] = {
    [MYGPT_WEIGHTS_FP32] = {"fp32", "F32", sizeof(float), 0, fp32_quantize, fp32_dequantize, NULL},
    [MYGPT_WEIGHTS_BF16] = {"bf16", "BF16", sizeof(uint16_t), 0, bf16_quantize, bf16_dequantize, bf16_check},
    [MYGPT_WEIGHTS_INT8] = {"int8", "I8", sizeof(int8_t), MYGPT_INT8_GROUP, int8_quantize, int8_dequantize,
                            int8_check},
};

const mygpt_weights_traits *mygpt_weights_traits_of(mygpt_weights w)
{
    return (unsigned)w < MYGPT_WEIGHTS_COUNT ? &TRAITS[w] : NULL;
}

size_t mygpt_weights_value_bytes(mygpt_weights w)
{
    const mygpt_weights_traits *t = mygpt_weights_traits_of(w);
    return t ? t->value_bytes : sizeof(float);
}

size_t mygpt_weights_scales(mygpt_weights w, int cols)
{
    const mygpt_weights_traits *t = mygpt_weights_traits_of(w);
    return !t || !t->group || cols < 1 ? 0 : ((size_t)cols + (size_t)t->group - 1) / (size_t)t->group;
}
