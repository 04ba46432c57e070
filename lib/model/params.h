/*
 * model/params.h - private to the library: the parameter table's rows
 * (MYGPT_PARAMETERS in mygpt/config.h) as the model's files read them: each tensor's
 * shape, role and place in the one block for a configuration, the carving of a block,
 * and the draws GPT.__init__ makes (model/params.c).
 */
#ifndef MYGPT_MODEL_PARAMS_H
#define MYGPT_MODEL_PARAMS_H

#include <stddef.h>
#include <stdint.h>

#include "mygpt/config.h"

/* How GPT.__init__ fills a tensor of the parameter table (its role column). */
typedef enum mygpt_param_role {
    MYGPT_ROLE_EMBEDDING, MYGPT_ROLE_LINEAR, MYGPT_ROLE_BIAS, MYGPT_ROLE_ONES, MYGPT_ROLE_ZEROS,
    MYGPT_ROLE_LORA_A, MYGPT_ROLE_LORA_B
} mygpt_param_role;

/* One table row, with its sizes for a configuration. */
typedef struct mygpt_param_info {
    const char *field;       /* "wq"                                           */
    const char *name;        /* "attn.W_q.weight" (after "blocks.<l>." if per layer): the arch's */
    const char *hf_name;     /* Hugging Face's ("attn.c_attn.weight", after "h.<l>.")   */
    int present;             /* 0: the architecture has no such tensor (numel 0)      */
    int per_layer;           /* 1: stacked over the layers                     */
    int ndim;                /* 1 or 2                                         */
    int64_t shape[2];        /* one layer's shape                              */
    mygpt_param_role role;
    int bias;                /* a LINEAR weight's bias tensor, or MYGPT_PARAM_none */
    size_t numel;            /* floats in the block, all layers                */
    size_t offset;           /* where the tensor starts in the block           */
} mygpt_param_info;

/* Table row i (0 <= i < MYGPT_NUM_PARAM_TENSORS) for cfg (a validated configuration). */
void mygpt_param_info_get(const mygpt_config *cfg, int i, mygpt_param_info *out);
/* Row i's bias under cfg's architecture, or MYGPT_PARAM_none. */
int mygpt_param_info_bias(const mygpt_config *cfg, int i);
/* The rows of LINEAR row w's LoRA adapter under cfg, A in *a and B in *b: 1, or 0 (both
 * MYGPT_PARAM_none) when cfg gives w none (no lora_rank, or a tied head). */
int mygpt_param_info_adapter(const mygpt_config *cfg, int w, int *a, int *b);

/* From the parameter table (lib/model/params.c): each tensor's floats, all layers; the views
 * of w into a block of that layout (parameters, or gradients); tensor i's view; and the
 * initial values GPT.__init__ draws from rng, in its order (w NULL: only the generator
 * moves on, as mygpt_gpt_skip_init). */
void mygpt_param_sizes(const struct mygpt_config *cfg, size_t *sizes);
void mygpt_params_carve(struct mygpt_params *w, float *block, const size_t *sizes);
float *mygpt_param_tensor(const struct mygpt_params *w, int i);
mygpt_status mygpt_params_init(const struct mygpt_config *cfg, const struct mygpt_params *w,
                               struct mygpt_rng *rng, mygpt_error *err);

/* The counts of mygpt_gpt_counts from the floats of each tensor (sizes, in the table's
 * order) of a model of configuration cfg. */
void mygpt_param_counts_of(const struct mygpt_config *cfg, const size_t *sizes, mygpt_param_counts *out);

/* Layer l's view of w (parameters or gradients, laid out by sizes, mygpt_param_sizes's for
 * a model of L layers), so the block can name a layer's tensors as the math does (lw.wq,
 * lw.bq): each per-layer tensor points at layer l's slice, a tensor of no floats (one the
 * architecture lacks) is NULL, the whole-model tensors are w's. */
void mygpt_params_layer(const size_t *sizes, int L, const struct mygpt_params *w, int l, struct mygpt_params *out);

#endif
