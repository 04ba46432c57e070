/*
 * model/quantized.h - private: a model's quantized storage (model/quantized.c), which a
 * checkpoint fills and the packing reads.
 */
#ifndef MYGPT_MODEL_QUANTIZED_H
#define MYGPT_MODEL_QUANTIZED_H

#include <stddef.h>

#include "mygpt/gpt.h"
#include "mygpt/weights.h"

/* A model's quantized tensors (model/quantized.c): for each table row that
 * mygpt_weights_quantizes, all its layers as one (rows, cols) matrix of stored values
 * (int8_t or uint16_t), and int8's scales (rows, mygpt_int8_groups(cols)); NULL for a
 * row kept in float32. One allocation. */
typedef struct mygpt_quantized {
    mygpt_weights format;
    void *q[MYGPT_NUM_PARAM_TENSORS];
    float *scales[MYGPT_NUM_PARAM_TENSORS];
    size_t rows[MYGPT_NUM_PARAM_TENSORS];
    int cols[MYGPT_NUM_PARAM_TENSORS];
    void *memory;
} mygpt_quantized;
/* Room for cfg's quantized tensors in format (not filled). */
mygpt_status mygpt_quantized_alloc(mygpt_quantized **out, const mygpt_config *cfg, mygpt_weights format,
                                   mygpt_error *err);
void mygpt_quantized_free(mygpt_quantized *qz);
/* Gives g the quantized tensors qz (filled, g float32): checks every stored value (int8
 * in [-127, 127], finite non-negative scales, finite bf16), packs them, and writes their
 * dequantized values into g->params. On failure g is unchanged and qz freed. */
mygpt_status mygpt_gpt_attach_quantized(mygpt_gpt *g, mygpt_quantized *qz, mygpt_error *err);

#endif
