/*
 * model/block.h - private: the transformer block, once. The full forward (gpt.c), the
 * training forward and backward (learn/train.c) and the KV-cache step (gpt.c's
 * mygpt_gpt_forward_cached) all run
 * their layers through mygpt_block_forward (and train.c back through
 * mygpt_block_backward), and every product through one linear dispatcher, so the three
 * passes cannot drift apart: what differs is only where each pass keeps its
 * activations (the pointers of mygpt_block_acts) and which attention it runs.
 */
#ifndef MYGPT_MODEL_BLOCK_H
#define MYGPT_MODEL_BLOCK_H

#include <stddef.h>
#include <stdint.h>

#include "mygpt/gpt.h"
#include "mygpt/kv_cache.h"
#include "model/kv_layout.h"
#include "kernels/matmul.h"
#include "model/packed.h"

/* What every block of one pass shares. */
typedef struct mygpt_pass {
    const mygpt_config *cfg;
    const mygpt_params *w;            /* the weights                                  */
    const mygpt_packed_model *packed; /* or NULL: each product packs its weight       */
    mygpt_impl impl;                  /* the products' and attention's code (attention.h) */
    int B, T;                         /* rows N = B * T, in sequences of T            */
    float *att_scratch;               /* the fast attention's per-thread scratch      */
    size_t att_scratch_len;
    mygpt_kv_cache *cache;            /* a KV-cache step (B = 1): the keys and values */
    int t0;                           /* go to the cache's rows t0 .. t0 + T - 1      */
    double dropout;                   /* train mode: the p of the blocks' keeps       */
    const uint8_t *frozen;            /* training: per table row, 1 when no layer of it
                                         trains (its gradient is not computed), or NULL */
} mygpt_pass;

/* A Linear's LoRA adapter (mygpt/lora.h) in one layer: A (C, r), B (r, OC), and where
 * their gradients go (NULL: not computed); scale = alpha / r. */
typedef struct mygpt_adapter {
    const float *a, *b;
    float *da, *db;
    int r;
    float scale;
} mygpt_adapter;

/* The checks every pass runs on its input first, one message each: B and T at least 1,
 * the positions t0 .. t0 + T - 1 within max_seq_len (t0 > 0: a KV-cache step after t0
 * cached positions), every id (B, T) in [0, V). */
mygpt_status mygpt_pass_check_input(const mygpt_config *cfg, const int64_t *ids, int B, int T, int t0,
                                    mygpt_error *err);

/* Where one layer's pass reads and writes, each (N, C) unless said. Pointers that may
 * be the same buffer say so; the rest must not overlap. */
typedef struct mygpt_block_acts {
    const float *x;            /* the block's input                                    */
    float *ln1;                /* LN1(x)                                               */
    float *ln1_mean, *ln1_denom; /* (N) each: mean, sqrt(var + eps); kept for the backward, or NULL */
    float *q, *k, *v;          /* (k and v: ignored in a KV-cache step: the cache's)   */
    float *att;                /* (B, NH, T, T) the attention's probabilities, or NULL */
    float *atty;               /* the attention's output, before W_o                   */
    float *mid;                /* x + W_o(atty) (may be x)                             */
    float *ln2, *ln2_mean, *ln2_denom;
    float *fch;                /* (N, 4C) fc1's output (GELU fused in if no fch_gelu)  */
    float *fch_gelu;           /* (N, 4C) GELU(fch), kept for the backward, or NULL    */
    float *proj;               /* scratch: W_o's and fc2's outputs                     */
    float *out;                /* mid + fc2(GELU(fch)) (may be mid)                    */
    /* train mode with dropout (mygpt_dropout_mask's keeps), else NULL: on the attention's
     * probabilities (B, NH, T, T; att then required), on W_o's and on fc2's output (N, C) */
    const uint8_t *keep_att, *keep_attn, *keep_mlp;
} mygpt_block_acts;

/* x = x + W_o(attention(LN1(x))); x = x + fc2(GELU(fc1(LN2(x)))) for layer l, with the
 * architecture's biases and GELU, and the dropouts when a has keeps. */
mygpt_status mygpt_block_forward(const mygpt_pass *p, int l, const mygpt_block_acts *a, mygpt_error *err);

/* The final LayerNorm and the head for `rows` rows of x: ln = LN_f(x) (keeping mean and
 * denom when they are not NULL), logits (rows, V) = ln H^T, H the untied head or the token
 * embedding E; a classification head's logits (rows, num_classes) = ln H^T + b. */
mygpt_status mygpt_head_forward(const mygpt_pass *p, float *logits, float *ln, float *mean, float *denom,
                                const float *x, size_t rows, mygpt_error *err);

/* nn.Linear through the pass's kernels: out (N, OC) = inp (N, C) W^T + bias, plus the
 * adapter's (alpha / r) (inp A) B when lora is not NULL (the book's LinearWithLoRA), then
 * GELU when gelu; the reference loops, or the fast kernel with the weight packed once
 * (pw) or packed by the call: the same bits. */
mygpt_status mygpt_linear(const mygpt_pass *p, float *out, const float *inp, const float *weight,
                          const float *bias, const mygpt_packed_weight *pw, const mygpt_adapter *lora, size_t N,
                          int C, int OC, int gelu, mygpt_error *err);

/* The gradients of one layer, and its scratch: each (N, C) unless said. */
typedef struct mygpt_block_grads {
    float *dx;                  /* in: d out; out: d x (the block's input)           */
    float *dmid;                /* scratch: d mid                                     */
    float *dln;                 /* scratch: d LN2(mid), then d LN1(x); also the
                                   dropouts' d output before a product's backward      */
    float *datty, *dq, *dk, *dv;/* scratch: d of the attention's output and inputs     */
    float *dfch, *dfch_gelu;    /* scratch (N, 4C) each: d fc1's output, d GELU's      */
    const mygpt_params *d;      /* the parameters' gradients (written, not added)     */
    float *ws;                  /* the matmul backward's partial sums, or NULL        */
    size_t ws_len;
} mygpt_block_grads;

/* The backward of mygpt_block_forward for layer l over the activations a kept (every
 * pointer of a set, with ln*_mean, ln*_denom, att and fch_gelu): g->dx goes from d out
 * to d x, and layer l's slices of g->d receive its weights' gradients. */
mygpt_status mygpt_block_backward(const mygpt_pass *p, int l, const mygpt_block_acts *a,
                                  const mygpt_block_grads *g, mygpt_error *err);

/* The head's weight (V or num_classes, C): the untied head, or the token embedding. */
float *mygpt_head_weight(const mygpt_config *cfg, const mygpt_params *w);

/* The head's bias (num_classes): a classification head's, else NULL. */
float *mygpt_head_bias(const mygpt_config *cfg, const mygpt_params *w);

/* nn.Linear's backward through the pass's kernels: dinp (+)= dout W (set_dinp: written),
 * dw = dout^T inp (written: its block is zero; NULL: a frozen weight, not computed), db
 * += column sums of dout (db may be NULL); with an adapter, dinp gets its share too and
 * its da, db are written. ws: workspace of ws_len floats, or the kernel's own. */
mygpt_status mygpt_linear_backward(const mygpt_pass *p, float *dinp, int set_dinp, float *dw, float *db,
                                   const float *dout, const float *inp, const float *w, const mygpt_adapter *lora,
                                   size_t N, int C, int OC, float *ws, size_t ws_len, mygpt_error *err);

/* Layer l's adapter of the Linear whose A and B are a and b in w and d (gradients, or
 * NULL), or NULL when cfg has none; kept in *keep. */
const mygpt_adapter *mygpt_adapter_of(const mygpt_config *cfg, mygpt_adapter *keep, const float *a, const float *b,
                                      float *da, float *db);

/* The head's adapter (its gradients in d, or d NULL), or NULL: without adapters, or with a
 * tied head (the token embedding is no Linear of its own: the table has no lmA, lmB). */
const mygpt_adapter *mygpt_head_adapter(const mygpt_config *cfg, mygpt_adapter *keep, const mygpt_params *w,
                                        const mygpt_params *d);

#endif
