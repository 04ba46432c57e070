/*
 * quantized.c - a model stored in fewer bytes (mygpt/quantize.h): which tensors are
 * quantized and what a token reads, the model's quantized tensors, and the switch
 * between formats. The recipes themselves are kernels/quantize.c's.
 */
#include <stdlib.h>

#include "mygpt/quantize.h"
#include "base/base.h"
#include "model/packed.h"
#include "model/quantized.h"
#include "model/params.h"

/* ---- which tensors, and their bytes ---------------------------------------------- */

int mygpt_weights_quantizes(const mygpt_config *cfg, int i)
{
    if (i < 0 || i >= MYGPT_NUM_PARAM_TENSORS)
        return 0; // no such row
    mygpt_param_info info;
    mygpt_param_info_get(cfg, i, &info);
    return info.present && (info.role == MYGPT_ROLE_LINEAR || i == MYGPT_PARAM_wte);
}

/* Bytes of a (rows, cols) tensor stored in format w */
static double stored_bytes(double rows, int cols, mygpt_weights w)
{
    const double scales = sizeof(float) * (double)mygpt_weights_scales(w, cols);
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
    if (format == MYGPT_WEIGHTS_FP32 || !mygpt_weights_traits_of(format))
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
        total += (qz->rows[i] * mygpt_weights_scales(format, qz->cols[i]) * sizeof(float) + 63) / 64 * 64;
    }
    if (!(qz->memory = mygpt_aligned_block(total ? total : 64, (size_t)64 << 20, 0))) { // as the parameters' block
        free(qz);
        return mygpt_fail(err, MYGPT_ENOMEM, "out of memory for the quantized weights (%zu bytes)", total);
    }
    for (int i = 0; i < MYGPT_NUM_PARAM_TENSORS; i++)
        if (qz->cols[i]) {
            qz->q[i] = (char *)qz->memory + at[i][0];
            qz->scales[i] = mygpt_weights_traits_of(format)->group ? (float *)((char *)qz->memory + at[i][1]) : NULL;
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

/* err's message prefixed with table row i's name, as "wte: ..." */
static mygpt_status named(mygpt_status st, int i, mygpt_error *err)
{
    const mygpt_error inner = err ? *err : (mygpt_error){0};
    return mygpt_fail(err, st, "%s: %s", mygpt_param_tensor_name(i), inner.message);
}

/* Every stored value of table row i is one the recipe can give: what a file must be
 * checked for (the message names the tensor) */
static mygpt_status check_stored(const mygpt_quantized *qz, int i, mygpt_error *err)
{
    const mygpt_status st = mygpt_weights_traits_of(qz->format)->check(qz->q[i], qz->scales[i], qz->rows[i],
                                                                      qz->cols[i], err);
    return st == MYGPT_OK ? st : named(st, i, err);
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
        mygpt_weights_traits_of(qz->format)->dequantize(qz->q[i], qz->scales[i], qz->rows[i], qz->cols[i],
                                                        mygpt_param_tensor(&g->params, i));
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
        st = mygpt_weights_traits_of(w)->quantize(mygpt_param_tensor(&g->params, i), qz->rows[i], qz->cols[i],
                                                   qz->q[i], qz->scales[i], err);
        if (st != MYGPT_OK) {
            st = named(st, i, err);
            mygpt_quantized_free(qz);
        }
    }
    return st == MYGPT_OK ? mygpt_gpt_attach_quantized(g, qz, err) : st;
}
