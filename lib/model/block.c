/*
 * block.c - the transformer block, forward and backward side by side, and the one
 * linear dispatcher every product of the model goes through (see block.h).
 *
 *   mid = x + W_o(attention(LN1(x)))
 *   out = mid + fc2(GELU(fc1(LN2(mid))))
 */
#include "model/block.h"

#include <string.h>

#include "mygpt/layers.h"
#include "base/base.h"
#include "base/parallel.h"
#include "model/params.h"
#include "kernels/attention.h"
#include "kernels/lora.h"

/* ---- a pass's input -------------------------------------------------------------------- */

mygpt_status mygpt_pass_check_input(const mygpt_config *cfg, const int64_t *ids, int B, int T, int t0,
                                    mygpt_error *err)
{
    const int M = cfg->max_seq_len, V = cfg->vocab_size;
    if (B < 1 || T < 1)
        return mygpt_fail(err, MYGPT_EINVAL, "batch and sequence sizes must be at least 1, got B=%d T=%d", B, T);
    if (t0 == 0 && T > M)
        return mygpt_fail(err, MYGPT_ERANGE, "input length T=%d exceeds max_seq_len=%d", T, M);
    if (t0 > 0 && T > M - t0)
        return mygpt_fail(err, MYGPT_ERANGE, "the KV cache holds %d positions: %d + %d exceed max_seq_len=%d",
                          M, t0, T, M);
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++) {
            const int64_t id = ids[(size_t)b * T + t];
            if (id < 0 || id >= V)
                return mygpt_fail(err, MYGPT_ERANGE, "token id %lld at (%d, %d) is outside [0, %d)", (long long)id,
                                  b, t, V);
        }
    return MYGPT_OK;
}

/* ---- the linear dispatcher ------------------------------------------------------------ */

const mygpt_adapter *mygpt_adapter_of(const mygpt_config *cfg, mygpt_adapter *keep, const float *a, const float *b,
                                      float *da, float *db)
{
    if (cfg->lora_rank <= 0 || !a)
        return NULL;
    // (self.alpha / self.rank) in Python's double, then float32 as it multiplies a float tensor
    *keep = (mygpt_adapter){a, b, da, db, cfg->lora_rank, (float)(cfg->lora_alpha / cfg->lora_rank)};
    return keep;
}

const mygpt_adapter *mygpt_head_adapter(const mygpt_config *cfg, mygpt_adapter *keep, const mygpt_params *w,
                                        const mygpt_params *d)
{
    if (mygpt_head_weight(cfg, w) == w->wte) // tied: every row of the table carves a pointer, lmA's is past the end
        return NULL;
    return mygpt_adapter_of(cfg, keep, w->lmA, w->lmB, d ? d->lmA : NULL, d ? d->lmB : NULL);
}

mygpt_status mygpt_linear(const mygpt_pass *p, float *out, const float *inp, const float *weight,
                          const float *bias, const mygpt_packed_weight *pw, const mygpt_adapter *lora, size_t N,
                          int C, int OC, int gelu, mygpt_error *err)
{
    const int fuse = gelu && !lora; // with an adapter, GELU comes after its share is added
    if (p->impl == MYGPT_IMPL_REFERENCE)
        mygpt_matmul_naive(out, inp, weight, bias, N, C, OC);
    else if (mygpt_matmul_packed_fits(pw))
        MYGPT_TRY(mygpt_matmul_prepacked(out, inp, pw, bias, N, fuse, err));
    else
        MYGPT_TRY(mygpt_matmul_ex(out, inp, weight, bias, N, C, OC, fuse, err));
    if (lora) // self.linear(x) + self.lora(x)
        mygpt_lora_forward(out, inp, (mygpt_lora_weights){lora->a, lora->b, C, lora->r, OC, lora->scale}, N);
    if (gelu && (lora || p->impl == MYGPT_IMPL_REFERENCE))
        mygpt_gelu_forward(out, out, N * (size_t)OC);
    return MYGPT_OK;
}

mygpt_status mygpt_linear_backward(const mygpt_pass *p, float *dinp, int set_dinp, float *dw, float *db,
                                   const float *dout, const float *inp, const float *w, const mygpt_adapter *lora,
                                   size_t N, int C, int OC, float *ws, size_t ws_len, mygpt_error *err)
{
    if (p->impl == MYGPT_IMPL_REFERENCE) {
        if (set_dinp)
            memset(dinp, 0, N * (size_t)C * sizeof *dinp);
        if (dw)
            memset(dw, 0, (size_t)OC * C * sizeof *dw);
        mygpt_matmul_backward_naive(dinp, dw, db, dout, inp, w, N, C, OC);
    } else {
        // the caller's workspace when it is large enough, else the kernel's own allocations
        if (ws_len < mygpt_matmul_backward_workspace(N, C, OC, set_dinp, 1)) // dw written (or not computed)
            ws = NULL;
        MYGPT_TRY(mygpt_matmul_backward_ws(dinp, set_dinp, dw, 1, db, dout, inp, w, N, C, OC, ws, err));
    }
    if (!lora)
        return MYGPT_OK;
    return mygpt_lora_backward(dinp, lora->da, lora->db, dout, inp,
                               (mygpt_lora_weights){lora->a, lora->b, C, lora->r, OC, lora->scale}, N, err);
}

/* ---- pieces of the block ---------------------------------------------------------------- */

/* LayerNorm, keeping each row's mean and sqrt(var + eps) for the backward when asked to
 * (the same bits either way) */
static void layernorm(float *out, float *mean, float *denom, const float *x, const float *gamma,
                      const float *beta, size_t N, int C)
{
    if (mean)
        mygpt_layernorm_forward_train(out, mean, denom, x, gamma, beta, N, C);
    else
        mygpt_layernorm_forward(out, x, gamma, beta, N, C);
}

float *mygpt_head_weight(const mygpt_config *cfg, const mygpt_params *w)
{
    return mygpt_arch_get(cfg).untied_head || cfg->num_classes > 0 ? w->lmw : w->wte;
}

float *mygpt_head_bias(const mygpt_config *cfg, const mygpt_params *w)
{
    return cfg->num_classes > 0 ? w->lmb : NULL;
}

/* GELU of the architecture (exact or tanh) over n floats, and its backward (dinp +=) */
static void gelu(const mygpt_config *cfg, float *out, const float *inp, size_t n)
{
    if (mygpt_arch_get(cfg).gelu_tanh)
        mygpt_gelu_tanh_forward(out, inp, n);
    else
        mygpt_gelu_forward(out, inp, n);
}

static void gelu_backward(const mygpt_config *cfg, float *dinp, const float *inp, const float *dout, size_t n)
{
    if (mygpt_arch_get(cfg).gelu_tanh)
        mygpt_gelu_tanh_backward(dinp, inp, dout, n);
    else
        mygpt_gelu_backward(dinp, inp, dout, n);
}

/* out = a + b, n values (out may be a) */
static void add(float *out, const float *a, const float *b, size_t n)
{
#pragma omp parallel for schedule(static) if (n > MYGPT_PARALLEL_MIN)
    for (size_t i = 0; i < n; i++)
        out[i] = a[i] + b[i];
}

/* causal self-attention of the pass: cached, or over (B, T) with or without the
 * probabilities, with the plain loops or the fast kernel (the same bits) */
static mygpt_status attention(const mygpt_pass *p, int l, const mygpt_block_acts *a, mygpt_error *err)
{
    const int B = p->B, T = p->T, C = p->cfg->embed_dim, NH = p->cfg->num_heads;
    if (p->cache) {
        const mygpt_kv_layer kv = mygpt_kv_cache_layer(p->cache, p->cfg, l);
        mygpt_attention_cached(a->atty, a->q,
                               (mygpt_attention_cache){kv.k, kv.v, kv.kt, p->cfg->max_seq_len, p->cache->att,
                                                       p->cache->att_rows},
                               p->t0, (mygpt_attention_shape){B, T, C, NH});
        return MYGPT_OK;
    }
    MYGPT_TRY(mygpt_attention_forward(a->atty, a->att, (mygpt_qkv){a->q, a->k, a->v}, p->att_scratch,
                                      p->att_scratch_len, (mygpt_attention_shape){B, T, C, NH}, p->impl, err));
    if (a->keep_att) // train mode: the values weighted by dropout(P)
        mygpt_attention_dropout_values(a->atty, a->att, a->v, (mygpt_attention_dropout){a->keep_att, p->dropout},
                                       (mygpt_attention_shape){B, T, C, NH});
    return MYGPT_OK;
}

/* ---- the block ---------------------------------------------------------------------------- */

/* layer l's packing of the table's tensor `field`, or NULL (the product packs the weight) */
#define PACKED(field) mygpt_packed_find(p->packed, MYGPT_PARAM_##field, l)
/* layer l's adapter x (q, k, v, o, fc1, fc2: the rows xA, xB), or NULL without adapters */
#define ADAPTER(x) mygpt_adapter_of(cfg, &adapters[MYGPT_PARAM_##x##A], lw.x##A, lw.x##B, NULL, NULL)
/* the same with where its gradients go; a frozen weight's or bias's gradient is not computed */
#define ADAPTER_GRAD(x) mygpt_adapter_of(cfg, &adapters[MYGPT_PARAM_##x##A], lw.x##A, lw.x##B, dw.x##A, dw.x##B)
#define GRAD(field) (p->frozen && p->frozen[MYGPT_PARAM_##field] ? NULL : dw.field)

mygpt_status mygpt_block_forward(const mygpt_pass *p, int l, const mygpt_block_acts *a, mygpt_error *err)
{
    const mygpt_config *cfg = p->cfg;
    const int C = cfg->embed_dim, C4 = 4 * C;
    const size_t N = (size_t)p->B * p->T, NC = N * (size_t)C;
    mygpt_params lw; // layer l's weights, as the math names them: W_q is lw.wq (C, C), b_q lw.bq (C) or NULL
    mygpt_params_layer(cfg, p->w, l, &lw);
    mygpt_adapter adapters[MYGPT_NUM_PARAM_TENSORS]; // ADAPTER's, with LoRA (appendix E)
    // in a KV-cache step the keys and values go to the cache's rows t0 ..
    const mygpt_kv_layer kv = p->cache ? mygpt_kv_cache_layer(p->cache, cfg, l) : (mygpt_kv_layer){0};
    float *k = p->cache ? kv.k + (size_t)p->t0 * C : a->k; // (N, C)
    float *v = p->cache ? kv.v + (size_t)p->t0 * C : a->v; // (N, C)

    // mid = x + W_o(attention(LN1(x)))
    layernorm(a->ln1, a->ln1_mean, a->ln1_denom, a->x, lw.ln1w, lw.ln1b, N, C);          // ln1 (N, C)
    MYGPT_TRY(mygpt_linear(p, a->q, a->ln1, lw.wq, lw.bq, PACKED(wq), ADAPTER(q), N, C, C, 0, err)); // q (N, C)
    MYGPT_TRY(mygpt_linear(p, k, a->ln1, lw.wk, lw.bk, PACKED(wk), ADAPTER(k), N, C, C, 0, err));    // k (N, C)
    MYGPT_TRY(mygpt_linear(p, v, a->ln1, lw.wv, lw.bv, PACKED(wv), ADAPTER(v), N, C, C, 0, err));    // v (N, C)
    mygpt_block_acts with_kv = *a;
    with_kv.k = k;
    with_kv.v = v;
    MYGPT_TRY(attention(p, l, &with_kv, err));                                            // atty (N, C)
    MYGPT_TRY(mygpt_linear(p, a->proj, a->atty, lw.wo, lw.bo, PACKED(wo), ADAPTER(o), N, C, C, 0, err)); // (N, C)
    if (a->keep_attn)
        mygpt_dropout_apply(a->proj, a->proj, a->keep_attn, NC, p->dropout);
    add(a->mid, a->x, a->proj, NC);                                                       // mid (N, C)
    // out = mid + fc2(GELU(fc1(LN2(mid))))
    layernorm(a->ln2, a->ln2_mean, a->ln2_denom, a->mid, lw.ln2w, lw.ln2b, N, C);        // ln2 (N, C)
    // the exact GELU is fused into fc1's product unless the backward needs fc1's output too
    const int fused = !a->fch_gelu && !mygpt_arch_get(cfg).gelu_tanh;
    MYGPT_TRY(mygpt_linear(p, a->fch, a->ln2, lw.fc1w, lw.fc1b, PACKED(fc1w), ADAPTER(fc1), N, C, C4, fused,
                           err)); // fch (N, 4C)
    float *fch_gelu = a->fch_gelu ? a->fch_gelu : a->fch;                                 // (N, 4C)
    if (!fused)
        gelu(cfg, fch_gelu, a->fch, 4 * NC);
    MYGPT_TRY(mygpt_linear(p, a->proj, fch_gelu, lw.fc2w, lw.fc2b, PACKED(fc2w), ADAPTER(fc2), N, C4, C, 0,
                           err)); // proj (N, C)
    if (a->keep_mlp)
        mygpt_dropout_apply(a->proj, a->proj, a->keep_mlp, NC, p->dropout);
    add(a->out, a->mid, a->proj, NC);                                                     // out (N, C)
    return MYGPT_OK;
}

mygpt_status mygpt_block_backward(const mygpt_pass *p, int l, const mygpt_block_acts *a,
                                  const mygpt_block_grads *g, mygpt_error *err)
{
    const mygpt_config *cfg = p->cfg;
    const int B = p->B, T = p->T, C = cfg->embed_dim, C4 = 4 * C, NH = cfg->num_heads;
    const size_t N = (size_t)B * T, NC = N * (size_t)C;
    mygpt_params lw, dw; // layer l's weights and their gradients (written, not added)
    mygpt_params_layer(cfg, p->w, l, &lw);
    mygpt_params_layer(cfg, g->d, l, &dw);
    mygpt_adapter adapters[MYGPT_NUM_PARAM_TENSORS];
    float *ws = g->ws;
    const size_t ws_len = g->ws_len;

    // out = mid + fc2(GELU(fc1(LN2(mid)))): dx holds d out; dmid = d out + the MLP's
    mygpt_fill_floats(g->dmid, g->dx, NC);                          // dmid (N, C) = d out
    const float *dfc2 = g->dx; // d fc2's output: through its dropout (dln is free until fc1's)
    if (a->keep_mlp) {
        mygpt_dropout_apply(g->dln, g->dx, a->keep_mlp, NC, p->dropout);
        dfc2 = g->dln;
    }
    MYGPT_TRY(mygpt_linear_backward(p, g->dfch_gelu, 1, GRAD(fc2w), GRAD(fc2b), dfc2, a->fch_gelu, lw.fc2w,
                                    ADAPTER_GRAD(fc2), N, C4, C, ws, ws_len, err)); // dfch_gelu (N, 4C)
    mygpt_fill_floats(g->dfch, NULL, 4 * NC);
    gelu_backward(cfg, g->dfch, a->fch, g->dfch_gelu, 4 * NC);      // dfch (N, 4C)
    MYGPT_TRY(mygpt_linear_backward(p, g->dln, 1, GRAD(fc1w), GRAD(fc1b), g->dfch, a->ln2, lw.fc1w, ADAPTER_GRAD(fc1),
                                    N, C, C4, ws, ws_len, err));      // dln = d LN2(mid) (N, C)
    mygpt_layernorm_backward(g->dmid, dw.ln2w, dw.ln2b, g->dln,
                             (mygpt_layernorm_saved){a->mid, lw.ln2w, a->ln2_mean, a->ln2_denom}, N,
                             C);                                      // dmid += (N, C)
    // mid = x + W_o(attention(LN1(x))): dx = d mid + the attention's
    mygpt_fill_floats(g->dx, g->dmid, NC);                          // dx (N, C) = d mid
    const float *dwo = g->dmid; // d W_o's output: through its dropout
    if (a->keep_attn) {
        mygpt_dropout_apply(g->dln, g->dmid, a->keep_attn, NC, p->dropout);
        dwo = g->dln;
    }
    MYGPT_TRY(mygpt_linear_backward(p, g->datty, 1, GRAD(wo), GRAD(bo), dwo, a->atty, lw.wo, ADAPTER_GRAD(o), N, C,
                                    C, ws, ws_len, err));             // datty (N, C)
    mygpt_fill_floats(g->dq, NULL, NC);
    mygpt_fill_floats(g->dk, NULL, NC);
    mygpt_fill_floats(g->dv, NULL, NC);
    mygpt_attention_backward_dropout(g->dq, g->dk, g->dv, g->datty, a->att, (mygpt_qkv){a->q, a->k, a->v},
                                     (mygpt_attention_dropout){a->keep_att, p->dropout},
                                     (mygpt_attention_shape){B, T, C, NH}); // dq, dk, dv (N, C) each
    // q, k and v read the same LN1(x): their input gradients add up in dln
    MYGPT_TRY(mygpt_linear_backward(p, g->dln, 1, GRAD(wq), GRAD(bq), g->dq, a->ln1, lw.wq, ADAPTER_GRAD(q), N, C, C,
                                    ws, ws_len, err));
    MYGPT_TRY(mygpt_linear_backward(p, g->dln, 0, GRAD(wk), GRAD(bk), g->dk, a->ln1, lw.wk, ADAPTER_GRAD(k), N, C, C,
                                    ws, ws_len, err));
    MYGPT_TRY(mygpt_linear_backward(p, g->dln, 0, GRAD(wv), GRAD(bv), g->dv, a->ln1, lw.wv, ADAPTER_GRAD(v), N, C, C,
                                    ws, ws_len, err));
    // dln = d LN1(x) (N, C); dx += its LayerNorm's backward
    mygpt_layernorm_backward(g->dx, dw.ln1w, dw.ln1b, g->dln,
                             (mygpt_layernorm_saved){a->x, lw.ln1w, a->ln1_mean, a->ln1_denom}, N, C);
    return MYGPT_OK;
}

/* ---- the head ------------------------------------------------------------------------------ */

mygpt_status mygpt_head_forward(const mygpt_pass *p, float *logits, float *ln, float *mean, float *denom,
                                const float *x, size_t rows, mygpt_error *err)
{
    const mygpt_config *cfg = p->cfg;
    layernorm(ln, mean, denom, x, p->w->lnfw, p->w->lnfb, rows, cfg->embed_dim);
    // logits = LN_f(x) H^T (+ b), H the untied head or the token embedding, b a
    // classification head's bias                                      (rows, V or num_classes)
    mygpt_adapter keep;
    const mygpt_adapter *lora = mygpt_head_adapter(cfg, &keep, p->w, NULL);
    return mygpt_linear(p, logits, ln, mygpt_head_weight(cfg, p->w), mygpt_head_bias(cfg, p->w),
                        p->packed ? &p->packed->head : NULL, lora, rows, cfg->embed_dim, mygpt_head_size(cfg), 0, err);
}
