/*
 * mygpt/gpt.h - the GPT of chapter 12 (docs/model-spec.md): token + learned
 * position embeddings, N pre-LayerNorm transformer blocks (causal multi-head
 * attention without biases, a 4C GELU MLP), a final LayerNorm and a head tied to
 * the token embedding.
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
 * its activations); separate models are independent.
 */
#ifndef MYGPT_GPT_H
#define MYGPT_GPT_H

#include <stddef.h>
#include <stdint.h>

#include "mygpt/error.h"
#include "mygpt/rng.h"

#ifdef __cplusplus
extern "C" {
#endif

/* everything declared here is exported by libmygpt.so (lib/exports.txt) */
#pragma GCC visibility push(default)

typedef struct mygpt_config {
    int vocab_size;  /* V */
    int embed_dim;   /* C, divisible by num_heads */
    int num_heads;   /* NH */
    int num_layers;  /* L (N in the chapter) */
    int max_seq_len; /* maxT: rows of the position embedding */
} mygpt_config;

/* The parameters, carved out of one contiguous block in PyTorch's
 * named_parameters() order. Per-layer tensors are stacked: wq is (L, C, C), and
 * layer l's W_q is wq + l * C * C. Linear weights are (out, in) as in PyTorch. */
#define MYGPT_NUM_PARAM_TENSORS 14
typedef struct mygpt_params {
    float *wte;          /* (V, C)      token_embedding.embedding.weight, also the head */
    float *wpe;          /* (maxT, C)   position_embedding.weight                      */
    float *ln1w, *ln1b;  /* (L, C)      blocks[l].ln1 gamma, beta                      */
    float *wq, *wk;      /* (L, C, C)   blocks[l].attn.W_q / W_k weight                */
    float *wv, *wo;      /* (L, C, C)   blocks[l].attn.W_v / W_o weight                */
    float *ln2w, *ln2b;  /* (L, C)      blocks[l].ln2 gamma, beta                      */
    float *fc1w;         /* (L, 4C, C)  blocks[l].mlp.fc1 weight                       */
    float *fc1b;         /* (L, 4C)     blocks[l].mlp.fc1 bias                         */
    float *fc2w;         /* (L, C, 4C)  blocks[l].mlp.fc2 weight                       */
    float *fc2b;         /* (L, C)      blocks[l].mlp.fc2 bias                         */
    float *lnfw, *lnfb;  /* (C)         ln_f gamma, beta                               */
} mygpt_params;

/* Activations of one forward pass, sized for (B, T); reused while they fit. */
typedef struct mygpt_acts {
    int B, T;        /* capacity: the largest B * T seen so far is what counts */
    float *x;        /* (B, T, C)  residual stream                */
    float *ln;       /* (B, T, C)  LayerNorm output               */
    float *q, *k, *v;/* (B, T, C)  attention projections          */
    float *atty;     /* (B, T, C)  attention output before W_o    */
    float *proj;     /* (B, T, C)  W_o or fc2 output              */
    float *fch;      /* (B, T, 4C) fc1 output, then GELU          */
    float *logits;   /* (B, T, V)                                 */
    float *scratch;  /* attention score rows, one per thread      */
    size_t scratch_len;
    float *memory;   /* the single allocation behind all of them  */
    size_t capacity_bt;
    float *logp;     /* (B, T, V) log-probabilities of mygpt_gpt_loss */
    size_t logp_cap;
} mygpt_acts;

typedef struct mygpt_gpt {
    mygpt_config config;
    mygpt_params params;
    float *params_memory;                       /* one block of num_parameters floats */
    size_t param_sizes[MYGPT_NUM_PARAM_TENSORS];/* floats per tensor, in params order */
    size_t num_parameters;
    mygpt_acts acts;
    int use_naive_kernels;                      /* 1: reference matmul (for testing)  */
    /* training (mygpt/train.h): allocated by the first mygpt_gpt_zero_grad / forward_train */
    float *grads_memory;                        /* num_parameters floats, params' layout */
    mygpt_params grads;                         /* views into grads_memory             */
    int grads_are_zero;                         /* 1 after zero_grad, until a backward */
    float *grads_scratch;                       /* a later backward's own gradients    */
    struct mygpt_train_acts *train;             /* what the backward pass needs        */
    struct mygpt_packed_model *packed;          /* NULL, or mygpt_gpt_pack's weights   */
} mygpt_gpt;

/* Parameter counts as the chapter tabulates them (sum of numel per module). */
typedef struct mygpt_param_counts {
    uint64_t token_embedding;    /* V * C                      */
    uint64_t position_embedding; /* maxT * C                   */
    uint64_t per_block;          /* 12 C^2 + 9 C               */
    uint64_t blocks;             /* L * per_block              */
    uint64_t final_layernorm;    /* 2 C                        */
    uint64_t head;               /* 0: tied to the embedding   */
    uint64_t total;
} mygpt_param_counts;

/* Checks a configuration: every size >= 1, C divisible by num_heads, and every
 * size product (parameters, activations per token) fits in memory arithmetic. */
mygpt_status mygpt_config_validate(const mygpt_config *cfg, mygpt_error *err);

/* Counts parameters without building the model (works for GPT-2 small too). */
mygpt_status mygpt_param_count(const mygpt_config *cfg, mygpt_param_counts *out, mygpt_error *err);

/* Counts the parameters of a built model module by module, by adding up the
 * sizes of the tensors it holds (what sum(p.numel() for p in m.parameters()) does),
 * as opposed to mygpt_param_count's formula. */
void mygpt_gpt_counts(const mygpt_gpt *gpt, mygpt_param_counts *out);

/* Builds the model, drawing its initial parameters from rng exactly in the order
 * PyTorch's GPT.__init__ does (token embedding, position embedding, then per
 * block W_q, W_k, W_v, W_o, fc1.weight, fc1.bias, fc2.weight, fc2.bias). */
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
 * The packing is a snapshot of the parameters: after changing them yourself (an
 * optimizer step, writing gpt->params) call mygpt_gpt_unpack, or this again. The
 * training functions (mygpt_gpt_zero_grad, _forward_train, _backward) drop it
 * themselves, since a training step is about to change them. Packing again replaces
 * the old copy; on failure (MYGPT_ENOMEM) the model keeps what it had. */
mygpt_status mygpt_gpt_pack(mygpt_gpt *gpt, mygpt_error *err);
/* Drops mygpt_gpt_pack's copy (if any): every call packs its weights again. */
void mygpt_gpt_unpack(mygpt_gpt *gpt);

/* Floats of the attention probabilities of a (B, T) forward: L * B * heads * T * T. */
size_t mygpt_gpt_attention_len(const mygpt_gpt *gpt, int B, int T);

/* The k positions query t attends to most, from its row of probabilities (positions
 * 0..t): their indices into best[0..], largest first, ties to the earlier position.
 * Returns how many (min(k, t + 1)). */
int mygpt_attention_top(const float *row, int t, int k, int *best);

/* Appends document 000's parameter table (its `main`'s six f-string lines, each
 * ending in a newline) for a model with these counts and num_layers N:
 *   Token embedding       (V*C):          16
 *   ...
 *   Total parameters:                    736                                    */
struct mygpt_strbuf;
mygpt_status mygpt_param_table(struct mygpt_strbuf *sb, const mygpt_config *cfg,
                               const mygpt_param_counts *pc);

/* Names of the parameter tensors in named_parameters() order, for printing. */
const char *mygpt_param_tensor_name(int i);

void mygpt_gpt_free(mygpt_gpt *gpt);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
