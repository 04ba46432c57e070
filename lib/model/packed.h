/*
 * model/packed.h - private to the library: a model's weights packed once for the
 * matmul kernel (model/packed.c), and its quantized storage (model/quantized.c).
 */
#ifndef MYGPT_MODEL_PACKED_H
#define MYGPT_MODEL_PACKED_H

#include <stddef.h>
#include <stdint.h>

#include "mygpt/config.h"
#include "kernels/matmul.h"

/* Every matmul weight of a model packed once (model/packed.c): each LINEAR tensor of the
 * parameter table, layer by layer, and the head's weight (V x C: lmw, or the tied wte). */
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
struct mygpt_gpt;
mygpt_status mygpt_packed_model_make(mygpt_packed_model **out, const struct mygpt_gpt *g, mygpt_error *err);
void mygpt_packed_model_free(mygpt_packed_model *p);

#endif
