/*
 * model/block.h - private: a pass planned when it first meets its sizes (and kept), then
 * the transformer block and the head run as llm.c runs them. The full forward (gpt.c), the
 * KV-cache step (gpt.c's mygpt_gpt_forward_cached) and the training forward (learn/train.c)
 * all ask for their pass's plan (mygpt_pass_plan: the architecture's choices resolved, one
 * descriptor per Linear, the products' and the attention's workspace; made again only when
 * what it was made from changes) and run it through one driver, mygpt_pass_forward; train.c goes
 * back through mygpt_block_backward. What differs between the passes is only where each
 * keeps its activations (the pointers of mygpt_block_acts) and which attention it runs.
 * Once planned, nothing in a pass allocates, looks anything up or fails.
 */
#ifndef MYGPT_MODEL_BLOCK_H
#define MYGPT_MODEL_BLOCK_H

#include <stddef.h>
#include <stdint.h>

#include "mygpt/attention.h"
#include "mygpt/config.h"
#include "mygpt/kv_cache.h"
#include "mygpt/layers.h"
#include "kernels/matmul.h"
#include "model/packed.h"

/* A Linear's LoRA adapter (mygpt/lora.h) in one layer: A (C, r), B (r, OC), and where
 * their gradients go (NULL: not computed); scale = alpha / r. r = 0: no adapter. */
typedef struct mygpt_adapter {
    const float *a, *b;
    float *da, *db;
    int r;
    float scale;
} mygpt_adapter;

/* One nn.Linear of the pass: out (N, OC) = inp (N, C) W^T + bias (+ its adapter's share),
 * the weight as it is or packed once (pw: float32 or the quantized storage), and where its
 * gradients go (NULL: not computed, a frozen tensor or no training). */
typedef struct mygpt_linear_plan {
    const float *weight, *bias;
    const mygpt_packed_weight *pw;
    mygpt_adapter lora;
    float *dweight, *dbias;
    int C, OC;
} mygpt_linear_plan;

/* One layer's weights as the math names them, their gradients, and in a KV-cache step the
 * layer's part of the cache (kv_cache.c's layout: keys, values (maxT, KV), keys transposed). */
typedef struct mygpt_layer_plan {
    const float *ln1w, *ln1b, *ln2w, *ln2b;
    float *dln1w, *dln1b, *dln2w, *dln2b;
    mygpt_linear_plan q, k, v, o, fc1, fc2, w3; /* (w3: SwiGLU's third Linear, or no weight) */
    float *cache_k, *cache_v, *cache_kt;
} mygpt_layer_plan;

/* Where one layer's pass reads and writes, each (N, C) unless said. Pointers that may
 * be the same buffer say so; the rest must not overlap. */
typedef struct mygpt_block_acts {
    const float *x;            /* the block's input                                    */
    float *ln1;                /* LN1(x)                                               */
    float *ln1_mean, *ln1_denom; /* (N) each: mean, sqrt(var + eps); kept for the backward, or NULL */
    float *q, *k, *v;          /* (k and v: ignored in a KV-cache step: the cache's);
                                  with grouped heads proj and atty first hold the keys and
                                  values (N, KV), then repeated into k and v (a KV-cache
                                  step keeps them unrepeated)                            */
    float *att;                /* (B, NH, T, T) the attention's probabilities, or NULL */
    float *atty;               /* the attention's output, before W_o                   */
    float *mid;                /* x + W_o(atty) (may be x)                             */
    float *ln2, *ln2_mean, *ln2_denom;
    float *fch;                /* (N, H) fc1's output (GELU fused in if no fch_gelu; the
                                  SwiGLU product in place), H the hidden size (4C: GPT) */
    float *fc3;                /* (N, H) w3's output (SwiGLU), else unused             */
    float *fch_gelu;           /* (N, 4C) GELU(fch), kept for the backward, or NULL    */
    float *proj;               /* scratch: W_o's and fc2's outputs                     */
    float *out;                /* mid + fc2(GELU(fch)) (may be mid)                    */
    /* train mode with dropout (mygpt_dropout_mask's keeps), else NULL: on the attention's
     * probabilities (B, NH, T, T; att then required), on W_o's and on fc2's output (N, C) */
    const uint8_t *keep_att, *keep_attn, *keep_mlp;
} mygpt_block_acts;

/* Where the embedding and the head read and write: x (N, C) the embedding's output (and
 * its dropout's keeps, or NULL); the head reads `rows` rows from x_final and writes ln
 * (rows, C) (keeping mean and denom when not NULL) and logits (rows, V or num_classes). */
typedef struct mygpt_ends_acts {
    float *x;
    const uint8_t *keep_embed;
    const float *x_final;
    size_t rows;
    float *ln, *mean, *denom, *logits;
} mygpt_ends_acts;

/* A pass planned: what the caller sets (every field up to `gelu_tanh`), then what
 * mygpt_pass_plan resolves (from `gelu_tanh` on: a kept plan is handed back by copying
 * them). */
typedef struct mygpt_pass {
    const mygpt_config *cfg;
    mygpt_impl impl;                  /* the products' and attention's code (attention.h) */
    int B, T;                         /* rows N = B * T, in sequences of T            */
    mygpt_kv_cache *cache;            /* a KV-cache step (B = 1): the keys and values */
    int t0;                           /* go to the cache's rows t0 .. t0 + T - 1      */
    double dropout;                   /* train mode: the p of the blocks' keeps       */
    mygpt_ends_acts ends;             /* where the embedding and the head write       */
    mygpt_status *fault;              /* a LoRA backward's failure (its allocation), kept */
    mygpt_error *err;                 /* for the caller to report after the block     */
    /* resolved by mygpt_pass_plan */
    int gelu_tanh;                    /* the architecture's GELU: tanh, else exact    */
    int untied_head;                  /* a head of its own, else the token embedding  */
    int rmsnorm, swiglu;              /* llama's RMSNorm and SwiGLU (mygpt_arch_switches) */
    int rope;                         /* rotary positions: 0 none, else 1 + mygpt_rope_style */
    int hidden;                       /* the feed-forward's hidden size H             */
    int kv_heads;                     /* heads of keys and values (num_heads: no grouping) */
    const float *wte, *wpe;           /* the embeddings                               */
    const float *lnfw, *lnfb;
    float *dlnfw, *dlnfb;
    mygpt_linear_plan head;
    mygpt_layer_plan *layer;          /* num_layers of them                           */
    mygpt_block_acts *acts;           /* num_layers: the caller fills them after planning */
    void *ws;                         /* the products' workspace                      */
    size_t ws_bytes;
    float *att_scratch;               /* the attention's per-thread scratch (none in a
                                         KV-cache step: the cache has its rows)       */
    size_t att_scratch_len;
} mygpt_pass;

/* The model a pass reads: its weights (laid out by sizes, mygpt_param_sizes's), its
 * architecture resolved, their packing (or NULL), and for a training pass where the
 * gradients go (d, or NULL for none) with, per table row, 1 when no layer of it trains
 * (frozen, or NULL: everything trains). */
typedef struct mygpt_pass_model {
    const mygpt_params *w;
    const size_t *sizes;
    mygpt_arch_switches arch;
    const mygpt_packed_model *packed;
    const mygpt_params *d;
    const uint8_t *frozen;
} mygpt_pass_model;

/* The checks every pass runs on its input first, one message each: B and T at least 1,
 * the positions t0 .. t0 + T - 1 within max_seq_len (t0 > 0: a KV-cache step after t0
 * cached positions), every id (B, T) in [0, V). */
mygpt_status mygpt_pass_check_input(const mygpt_config *cfg, const int64_t *ids, int B, int T, int t0,
                                    mygpt_error *err);

/* Plans p (its first fields set, its sizes checked: mygpt_pass_check_input) over model m:
 * resolves every layer's descriptors and sizes the products' workspace and the attention's
 * scratch, in *mem (len floats; grown, never shrunk; the caller frees it), which also holds
 * p->layer and p->acts.
 * The plan stays in *mem: the next call with the same sizes, code, thread count and model
 * (the same tensors, packing and gradients) takes it as it is. MYGPT_ENOMEM, or
 * MYGPT_EINVAL for a product too large to share out. */
mygpt_status mygpt_pass_plan(mygpt_pass *p, const mygpt_pass_model *m, float **mem, size_t *len, mygpt_error *err);

/* The forward of a planned pass over ids (checked): x = E[ids] + P[t0 ..] (then its
 * dropout), the blocks, then the head. */
void mygpt_pass_forward(const mygpt_pass *p, const int64_t *ids);

/* x = x + W_o(attention(LN1(x))); x = x + fc2(GELU(fc1(LN2(x)))) for layer l, with the
 * architecture's biases and GELU, and the dropouts when its acts have keeps; llama's
 * x = x + W_o(attention(RoPE(q), RoPE(k), v of RMSNorm(x))), x = x + w2(SiLU(w1(x')) * w3(x'))
 * with x' = RMSNorm(x). */
void mygpt_block_forward(const mygpt_pass *p, int l);

/* The gradients of one layer, and its scratch: each (N, C) unless said. */
typedef struct mygpt_block_grads {
    float *dx;                  /* in: d out; out: d x (the block's input)           */
    float *dmid;                /* scratch: d mid                                     */
    float *dln;                 /* scratch: d LN2(mid), then d LN1(x); also the
                                   dropouts' d output before a product's backward      */
    float *datty, *dq, *dk, *dv;/* scratch: d of the attention's output and inputs     */
    float *dfch, *dfch_gelu;    /* scratch (N, H) each: d fc1's output, d GELU's (SwiGLU's) */
} mygpt_block_grads;

/* The backward of mygpt_block_forward for layer l over the activations it kept (every
 * pointer of its acts set, with ln*_mean, ln*_denom, att and fch_gelu): g->dx goes from
 * d out to d x, and layer l's gradients (its plan's) are written. */
void mygpt_block_backward(const mygpt_pass *p, int l, const mygpt_block_grads *g);

/* The backward of the architecture's norm (RMSNorm: saved.inp and saved.gamma only, no
 * bias): dinp += d/dinp, dgamma += (and dbeta +=) where not NULL. */
void mygpt_norm_backward(const mygpt_pass *p, float *dinp, float *dgamma, float *dbeta, const float *dout,
                         mygpt_layernorm_saved saved, size_t N);

/* nn.Linear's backward through the pass's kernels: dinp (+)= dout W (set_dinp: written),
 * the weight's gradient written and the bias's added (where f has them); with an adapter,
 * dinp gets its share too and its da, db are written. */
void mygpt_linear_backward(const mygpt_pass *p, const mygpt_linear_plan *f, float *dinp, int set_dinp,
                           const float *dout, const float *inp, size_t N);

/* The head's weight (V or num_classes, C): the untied head, or the token embedding. */
float *mygpt_head_weight(const mygpt_config *cfg, const mygpt_params *w);

#endif
