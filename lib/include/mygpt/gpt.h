/*
 * mygpt/gpt.h - the GPT of chapter 12 (docs/model-spec.md): token + learned
 * position embeddings, N pre-LayerNorm transformer blocks (causal multi-head
 * attention without biases, a 4C GELU MLP), a final LayerNorm and a head tied to
 * the token embedding; and, by the configuration's architecture, the book's GPTModel
 * and GPT-2 (mygpt_arch).
 *
 *   mygpt_gpt *gpt;
 *   mygpt_config cfg = {.vocab_size = 4, .embed_dim = 4, .num_heads = 2,
 *                       .num_layers = 2, .max_seq_len = 64};
 *   if (mygpt_gpt_create(&gpt, &cfg, 0, &err)) ...       // set_seed(0); GPT(...)
 *   if (mygpt_gpt_forward(gpt, ids, B, T, &err)) ...     // gpt(ids) in eval mode
 *   float *logits = gpt->acts.logits;                     // (B, T, V)
 *   mygpt_gpt_free(gpt);
 *
 * Thread safety: one model must not run two forward passes at once (they share
 * its activations); separate models are independent. The configuration and the
 * parameter table the model is built from are mygpt/config.h's.
 */
#ifndef MYGPT_GPT_H
#define MYGPT_GPT_H

#include <stddef.h>
#include <stdint.h>

#include "mygpt/attention.h"
#include "mygpt/config.h"
#include "mygpt/error.h"
#include "mygpt/rng.h"
#include "mygpt/weights.h"

#ifdef __cplusplus
extern "C" {
#endif

/* everything declared here is exported by libmygpt.so (lib/exports.txt) */
#pragma GCC visibility push(default)

/* Activations of one forward pass, sized for (B, T); reused while they fit. */
typedef struct mygpt_acts {
    int B, T;        /* the last pass's sizes                      */
    float *x;        /* (B, T, C)  residual stream                */
    float *ln;       /* (B, T, C)  LayerNorm output               */
    float *q, *k, *v;/* (B, T, C)  attention projections          */
    float *atty;     /* (B, T, C)  attention output before W_o    */
    float *proj;     /* (B, T, C)  W_o or fc2 output              */
    float *fch;      /* (B, T, H) fc1 output, then GELU (H = 4C; llama: its hidden size, SwiGLU's product) */
    float *fc3;      /* (B, T, H) w3's output (llama's SwiGLU), else none */
    float *logits;   /* (B, T, V), V the head's size (mygpt_head_size) */
    float *memory;   /* the single allocation behind all of them  */
    size_t capacity_bt; /* rows the memory holds: the largest B * T so far */
    float *logp;     /* (B, T, V) log-probabilities of mygpt_gpt_loss */
    size_t logp_cap;
    float *plan;     /* the pass's plan, kept while its (B, T) and the model stay, and its
                        products' workspace (model/block.h) */
    size_t plan_len;
} mygpt_acts;

typedef struct mygpt_gpt {
    mygpt_config config;
    mygpt_arch_switches arch;                   /* config's architecture, resolved once */
    mygpt_params params;
    float *params_memory;                       /* one block of num_parameters floats */
    size_t param_sizes[MYGPT_NUM_PARAM_TENSORS];/* floats per tensor, in the table's order */
    size_t num_parameters;
    mygpt_acts acts;
    mygpt_impl impl;                            /* MYGPT_IMPL_FAST, or _REFERENCE: the plain
                                                   loops (mygpt/attention.h)            */
    struct mygpt_packed_model *packed;          /* NULL, or mygpt_gpt_pack's weights   */
    int trainers;                               /* trainers holding it (mygpt/train.h): no
                                                   packing while a training step may come */
    mygpt_weights weights;                      /* FP32, or quantized (mygpt/quantize.h):
                                                   params then hold the dequantized values */
    struct mygpt_quantized *quantized;          /* the quantized bytes, NULL for FP32    */
    uint64_t lora_from;                         /* the checksum of the adapters
                                                   mygpt_checkpoint_load_adapters gave it, or 0 */
    uint64_t lora_merged;                       /* the checksum of adapters merged into its
                                                   weights (its checkpoint's lora_merged), or 0 */
} mygpt_gpt;

/* Counts the parameters of a built model module by module, by adding up the
 * sizes of the tensors it holds (what sum(p.numel() for p in m.parameters()) does),
 * as opposed to mygpt_param_count's formula. */
void mygpt_gpt_counts(const mygpt_gpt *gpt, mygpt_param_counts *out);

/* Allocates a model of this configuration (validated first) without initialising its
 * parameters: for a caller that fills them (a checkpoint). Draws nothing. */
mygpt_status mygpt_gpt_alloc(mygpt_gpt **out, const mygpt_config *cfg, mygpt_error *err);

/* Builds the model, drawing its initial parameters from rng exactly in the order
 * PyTorch's __init__ does (token embedding, position embedding, then per block W_q,
 * W_k, W_v, W_o, fc1, fc2, each weight followed by its bias when it has one; the book's
 * out_head last). A configuration with lora_rank > 0 is MYGPT_EINVAL: adapters are added
 * to a built model (mygpt_lora_add), as the book wraps a built one. */
mygpt_status mygpt_gpt_create_from(mygpt_gpt **out, const mygpt_config *cfg, mygpt_rng *rng,
                                   mygpt_error *err);

/* The same from a fresh generator: set_seed(seed); GPT(...). */
mygpt_status mygpt_gpt_create(mygpt_gpt **out, const mygpt_config *cfg, uint64_t seed,
                              mygpt_error *err);

/* Runs the model on ids (B, T), B >= 1, 1 <= T <= max_seq_len, ids in [0, V).
 * On success the logits (B, T, V) are in gpt->acts.logits (valid until the next
 * call). Errors: bad ids, T > max_seq_len, sizes that overflow, out of memory. */
mygpt_status mygpt_gpt_forward(mygpt_gpt *gpt, const int64_t *ids, int B, int T, mygpt_error *err);

/* mygpt_gpt_forward that also hands out where every head looks: att (caller-owned,
 * att_len floats, at least mygpt_gpt_attention_len(gpt, B, T)) receives each layer's
 * attention probabilities, att[(((l * B + b) * NH + h) * T + t) * T + s] = the softmax
 * weight of key s for query t (0 for s > t): the floats that weighted the values, so
 * the logits are the same bits as mygpt_gpt_forward's. With att NULL it is
 * mygpt_gpt_forward (nothing extra is computed or kept). MYGPT_EINVAL when att_len is
 * too small; otherwise the errors of mygpt_gpt_forward. */
mygpt_status mygpt_gpt_forward_attention(mygpt_gpt *gpt, const int64_t *ids, int B, int T, float *att,
                                         size_t att_len, mygpt_error *err);
/* Packs every matmul weight (W_q, W_k, W_v, W_o, fc1, fc2 of each layer and the head)
 * once into the matmul kernel's panels and keeps them with the model: the forward
 * passes (mygpt_gpt_forward, _attention, mygpt_gpt_loss) and generation then read them
 * as they are, where otherwise every call packs its weights again (a GPT-2 forward at
 * B*T = 1024 packs 226 MB of them). The logits are the same bits either way. Costs as
 * much memory again as those weights (494 MB for GPT-2 small).
 * The packing is a snapshot of the parameters: after changing them yourself (writing
 * gpt->params) call mygpt_gpt_unpack, or this again. While a trainer holds the model
 * (mygpt/train.h) it refuses (MYGPT_EINVAL), since a training step changes the weights.
 * Packing again replaces the old copy; on failure the model keeps what it had. */
mygpt_status mygpt_gpt_pack(mygpt_gpt *gpt, mygpt_error *err);
/* Drops mygpt_gpt_pack's copy (if any): every call packs its weights again. */
void mygpt_gpt_unpack(mygpt_gpt *gpt);

/* Floats of the attention probabilities of a (B, T) forward: L * B * heads * T * T. */
size_t mygpt_gpt_attention_len(const mygpt_gpt *gpt, int B, int T);

void mygpt_gpt_free(mygpt_gpt *gpt);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
