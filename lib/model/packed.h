/*
 * model/packed.h - private to the library: a model's weights packed once for the
 * matmul kernel (model/packed.c), and its quantized storage (model/quantized.c).
 */
#ifndef MYGPT_MODEL_PACKED_H
#define MYGPT_MODEL_PACKED_H

#include <stddef.h>
#include <stdint.h>

#include "mygpt/gpt.h"
#include "kernels/matmul.h"

/* Every matmul weight of a model packed once (model/packed.c): each LINEAR tensor of the
 * parameter table, layer by layer, and the head (the tied token embedding, V x C). */
typedef struct mygpt_packed_model {
    int layers;
    mygpt_packed_weight head;
    mygpt_packed_weight *linear[MYGPT_NUM_PARAM_TENSORS]; /* per LINEAR tensor: one per layer, in weights[] */
    mygpt_packed_weight weights[];                        /* every layer's LINEAR tensors, one allocation */
} mygpt_packed_model;
/* Tensor i's packing for layer l (0 for a whole-model tensor), NULL when p is NULL. */
static inline const mygpt_packed_weight *mygpt_packed_find(const mygpt_packed_model *p, int i, int l)
{
    return p && p->linear[i] ? &p->linear[i][l] : NULL;
}
mygpt_status mygpt_packed_model_make(mygpt_packed_model **out, const mygpt_gpt *g, mygpt_error *err);
void mygpt_packed_model_free(mygpt_packed_model *p);

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
