/*
 * quantized.c - a model stored in fewer bytes (mygpt/quantize.h): which tensors are
 * quantized and what a token reads, the model's quantized tensors, and the switch
 * between formats. The recipes themselves are kernels/quantize.c's.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mygpt/quantize.h"
#include "base/base.h"
#include "model/packed.h"
#include "model/quantized.h"
#include "model/params.h"

/* ---- which tensors, and their bytes ---------------------------------------------- */

int mygpt_weights_quantizes(const mygpt_config *cfg, int i)
{
    mygpt_param_info info;
    mygpt_param_info_get(cfg, i, &info);
    return info.present && (info.role == MYGPT_ROLE_LINEAR || i == MYGPT_PARAM_wte);
}

/* Bytes of a (rows, cols) tensor stored in format w */
static double stored_bytes(double rows, int cols, mygpt_weights w)
{
    const double scales = w == MYGPT_WEIGHTS_INT8 ? sizeof(float) * (double)mygpt_int8_groups(cols) : 0;
    return rows * ((double)cols * (double)mygpt_weights_value_bytes(w) + scales);
}

double mygpt_weights_bytes_per_token(const mygpt_config *cfg, mygpt_weights w)
{
    const int untied = mygpt_arch_get(cfg).untied_head;
    double bytes = 0;
    for (int i = 0; i < MYGPT_NUM_PARAM_TENSORS; i++) {
        mygpt_param_info info;
        mygpt_param_info_get(cfg, i, &info);
        if (!info.present)
            continue;
        const double rows = (double)info.numel / (double)info.shape[1]; // all layers
        const mygpt_weights as = mygpt_weights_quantizes(cfg, i) ? w : MYGPT_WEIGHTS_FP32;
        if (i == MYGPT_PARAM_wpe || (i == MYGPT_PARAM_wte && untied)) // one row looked up
            bytes += stored_bytes(1, (int)info.shape[1], as);
        else // the whole tensor: a matmul weight (the tied head: wte), or a vector
            bytes += stored_bytes(rows, (int)info.shape[1], as);
    }
    return bytes;
}

/* ---- a model's quantized tensors ------------------------------------------------- */

mygpt_status mygpt_quantized_alloc(mygpt_quantized **out, const mygpt_config *cfg, mygpt_weights format,
                                   mygpt_error *err)
{
    *out = NULL;
    if (format != MYGPT_WEIGHTS_BF16 && format != MYGPT_WEIGHTS_INT8)
        return mygpt_fail(err, MYGPT_EINVAL, "%s is not a quantized format", mygpt_weights_name(format));
    mygpt_quantized *qz = calloc(1, sizeof *qz);
    if (!qz)
        return mygpt_fail(err, MYGPT_ENOMEM, "%s", "out of memory for the quantized weights");
    qz->format = format;
    size_t at[MYGPT_NUM_PARAM_TENSORS][2], total = 0; // offsets of each tensor's values and scales
    for (int i = 0; i < MYGPT_NUM_PARAM_TENSORS; i++) {
        if (!mygpt_weights_quantizes(cfg, i))
            continue;
        mygpt_param_info info;
        mygpt_param_info_get(cfg, i, &info);
        qz->cols[i] = (int)info.shape[1];
        qz->rows[i] = info.numel / (size_t)info.shape[1];
        at[i][0] = total;
        total += (info.numel * mygpt_weights_value_bytes(format) + 63) / 64 * 64;
        at[i][1] = total;
        if (format == MYGPT_WEIGHTS_INT8)
            total += (qz->rows[i] * mygpt_int8_groups(qz->cols[i]) * sizeof(float) + 63) / 64 * 64;
    }
    if (posix_memalign(&qz->memory, 64, total ? total : 64) != 0) {
        free(qz);
        return mygpt_fail(err, MYGPT_ENOMEM, "out of memory for the quantized weights (%zu bytes)", total);
    }
    for (int i = 0; i < MYGPT_NUM_PARAM_TENSORS; i++)
        if (qz->cols[i]) {
            qz->q[i] = (char *)qz->memory + at[i][0];
            qz->scales[i] = format == MYGPT_WEIGHTS_INT8 ? (float *)((char *)qz->memory + at[i][1]) : NULL;
        }
    *out = qz;
    return MYGPT_OK;
}

void mygpt_quantized_free(mygpt_quantized *qz)
{
    if (!qz)
        return;
    free(qz->memory);
    free(qz);
}

/* Every stored value is one the recipe can give: what a file must be checked for */
static mygpt_status check_stored(const mygpt_quantized *qz, int i, mygpt_error *err)
{
    const size_t n = qz->rows[i] * (size_t)qz->cols[i];
    const char *name = mygpt_param_tensor_name(i);
    if (qz->format == MYGPT_WEIGHTS_BF16) {
        const uint16_t *b = qz->q[i];
        for (size_t k = 0; k < n; k++)
            if ((b[k] & 0x7F80u) == 0x7F80u)
                return mygpt_fail(err, MYGPT_EFORMAT, "%s: bfloat16 value %zu is not finite", name, k);
        return MYGPT_OK;
    }
    const int8_t *q = qz->q[i];
    for (size_t k = 0; k < n; k++)
        if (q[k] == -128)
            return mygpt_fail(err, MYGPT_EFORMAT, "%s: int8 value %zu is -128 (the recipe clamps to -127)", name, k);
    const size_t ns = qz->rows[i] * mygpt_int8_groups(qz->cols[i]);
    for (size_t k = 0; k < ns; k++)
        if (!isfinite(qz->scales[i][k]) || qz->scales[i][k] < 0.0f)
            return mygpt_fail(err, MYGPT_EFORMAT, "%s: int8 scale %zu (%g) is not a finite non-negative float",
                              name, k, (double)qz->scales[i][k]);
        else if (!isfinite(127.0f * qz->scales[i][k])) // the recipe never gives it: 127 * s would be inf
            return mygpt_fail(err, MYGPT_EFORMAT, "%s: int8 scale %zu (%g) dequantizes to infinity (127 x scale)",
                              name, k, (double)qz->scales[i][k]);
    return MYGPT_OK;
}

mygpt_status mygpt_gpt_attach_quantized(mygpt_gpt *g, mygpt_quantized *qz, mygpt_error *err)
{
    mygpt_status st = MYGPT_OK;
    if (g->weights != MYGPT_WEIGHTS_FP32 || g->trainers)
        st = mygpt_fail(err, MYGPT_EINVAL, "%s", g->trainers ? "a model being trained stays float32"
                                                             : "the model is quantized already");
    for (int i = 0; i < MYGPT_NUM_PARAM_TENSORS && st == MYGPT_OK; i++)
        if (qz->q[i])
            st = check_stored(qz, i, err);
    // packed first (from the stored values alone): a failure leaves params as they were
    mygpt_packed_model *packed = NULL;
    if (st == MYGPT_OK) {
        g->quantized = qz;
        g->weights = qz->format;
        st = mygpt_packed_model_make(&packed, g, err);
        g->quantized = NULL;
        g->weights = MYGPT_WEIGHTS_FP32;
    }
    if (st != MYGPT_OK) {
        mygpt_quantized_free(qz);
        return st;
    }
    for (int i = 0; i < MYGPT_NUM_PARAM_TENSORS; i++) {
        if (!qz->q[i])
            continue;
        float *w = mygpt_param_tensor(&g->params, i);
        if (qz->format == MYGPT_WEIGHTS_INT8) {
            mygpt_int8_dequantize(qz->q[i], qz->scales[i], qz->rows[i], qz->cols[i], w);
        } else {
            const uint16_t *b = qz->q[i];
            const size_t n = qz->rows[i] * (size_t)qz->cols[i];
#pragma omp parallel for schedule(static) if (n > ((size_t)1 << 20))
            for (size_t k = 0; k < n; k++)
                w[k] = mygpt_bf16_widen(b[k]);
        }
    }
    mygpt_packed_model_free(g->packed);
    g->packed = packed;
    g->quantized = qz;
    g->weights = qz->format;
    return MYGPT_OK;
}

mygpt_status mygpt_gpt_quantize(mygpt_gpt *g, mygpt_weights w, mygpt_error *err)
{
    if (w == g->weights)
        return MYGPT_OK;
    if (g->trainers)
        return mygpt_fail(err, MYGPT_EINVAL, "%s", "a model being trained is not quantized: training stays float32");
    if (g->config.lora_rank > 0)
        return mygpt_fail(err, MYGPT_EINVAL, "%s", "a model with LoRA adapters is not quantized: merge them into its "
                          "weights first (mygpt merge, or mygpt_lora_merge), then quantize that");
    if (w == MYGPT_WEIGHTS_FP32) { // the dequantized values, in float32 from now on
        const int was_packed = g->packed != NULL;
        mygpt_gpt_unpack(g);
        mygpt_quantized_free(g->quantized);
        g->quantized = NULL;
        g->weights = MYGPT_WEIGHTS_FP32;
        return was_packed ? mygpt_gpt_pack(g, err) : MYGPT_OK;
    }
    if (g->weights != MYGPT_WEIGHTS_FP32)
        return mygpt_fail(err, MYGPT_EINVAL, "the model's weights are %s already: quantize the float32 model to %s",
                          mygpt_weights_name(g->weights), mygpt_weights_name(w));
    mygpt_quantized *qz;
    mygpt_status st = mygpt_quantized_alloc(&qz, &g->config, w, err);
    for (int i = 0; i < MYGPT_NUM_PARAM_TENSORS && st == MYGPT_OK; i++) {
        if (!qz->q[i])
            continue;
        const float *src = mygpt_param_tensor(&g->params, i);
        st = w == MYGPT_WEIGHTS_BF16
                 ? mygpt_bf16_quantize(src, qz->rows[i] * (size_t)qz->cols[i], qz->q[i], err)
                 : mygpt_int8_quantize(src, qz->rows[i], qz->cols[i], qz->q[i], qz->scales[i], err);
        if (st != MYGPT_OK) {
            mygpt_error inner = err ? *err : (mygpt_error){0};
            st = mygpt_fail(err, st, "%s: %s", mygpt_param_tensor_name(i), inner.message);
            mygpt_quantized_free(qz);
        }
    }
    return st == MYGPT_OK ? mygpt_gpt_attach_quantized(g, qz, err) : st;
}
