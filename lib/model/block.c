/*
 * block.c - the transformer block, forward and backward side by side, and the one
 * linear dispatcher every product of the model goes through (see block.h).
 *
 *   x   = x + W_o(attention(LN1(x)))          mid
 *   out = mid + fc2(GELU(fc1(LN2(mid))))
 */
#include "model/block.h"

#include <string.h>

#include "mygpt/layers.h"
#include "base/parallel.h"
#include "model/params.h"
#include "kernels/attention.h"

/* ---- the linear dispatcher ------------------------------------------------------------ */

mygpt_status mygpt_linear(const mygpt_pass *p, float *out, const float *inp, const float *weight,
                          const float *bias, const mygpt_packed_weight *pw, size_t N, int C, int OC,
                          int gelu, mygpt_error *err)
{
    if (p->naive) {
        mygpt_matmul_naive(out, inp, weight, bias, N, C, OC);
        if (gelu)
            mygpt_gelu_forward(out, out, N * (size_t)OC);
        return MYGPT_OK;
    }
    if (mygpt_matmul_packed_fits(pw))
        return mygpt_matmul_prepacked(out, inp, pw, bias, N, gelu, err);
    return mygpt_matmul_ex(out, inp, weight, bias, N, C, OC, gelu, err);
}

mygpt_status mygpt_linear_backward(const mygpt_pass *p, float *dinp, int set_dinp, float *dw, float *db,
                                   const float *dout, const float *inp, const float *w, size_t N, int C,
                                   int OC, float *ws, size_t ws_len, mygpt_error *err)
{
    if (p->naive) {
        if (set_dinp)
            memset(dinp, 0, N * (size_t)C * sizeof *dinp);
        memset(dw, 0, (size_t)OC * C * sizeof *dw);
        mygpt_matmul_backward_naive(dinp, dw, db, dout, inp, w, N, C, OC);
        return MYGPT_OK;
    }
    // the caller's workspace when it is large enough, else the kernel's own allocations
    if (ws_len < mygpt_matmul_backward_workspace(N, C, OC, set_dinp, 1))
        ws = NULL;
    return mygpt_matmul_backward_ws(dinp, set_dinp, dw, 1, db, dout, inp, w, N, C, OC, ws, err);
}

/* A layer's tensor i of the parameter table (or of its gradients), l's slice. */
static float *slice(const mygpt_config *cfg, const mygpt_params *w, int i, int l)
{
    mygpt_param_info info;
    mygpt_param_info_get(cfg, i, &info);
    return mygpt_param_tensor(w, i) + (info.per_layer ? (size_t)l * (size_t)info.shape[0] * (size_t)info.shape[1] : 0);
}

/* The table's LINEAR tensor i of layer l applied to N rows: its weight (out, in), its
 * bias when the table gives it one, its packing when the pass has one. */
static mygpt_status layer_linear(const mygpt_pass *p, int i, int l, float *out, const float *inp, size_t N,
                                 int gelu, mygpt_error *err)
{
    mygpt_param_info info;
    mygpt_param_info_get(p->cfg, i, &info);
    const float *bias = info.bias == MYGPT_PARAM_none ? NULL : slice(p->cfg, p->w, info.bias, l);
    return mygpt_linear(p, out, inp, slice(p->cfg, p->w, i, l), bias, mygpt_packed_find(p->packed, i, l), N,
                        (int)info.shape[1], (int)info.shape[0], gelu, err);
}

static mygpt_status layer_linear_backward(const mygpt_pass *p, const mygpt_block_grads *g, int i, int l,
                                          float *dinp, int set_dinp, const float *dout, const float *inp,
                                          size_t N, mygpt_error *err)
{
    mygpt_param_info info;
    mygpt_param_info_get(p->cfg, i, &info);
    float *db = info.bias == MYGPT_PARAM_none ? NULL : slice(p->cfg, g->d, info.bias, l);
    return mygpt_linear_backward(p, dinp, set_dinp, slice(p->cfg, g->d, i, l), db, dout, inp,
                                 slice(p->cfg, p->w, i, l), N, (int)info.shape[1], (int)info.shape[0], g->ws,
                                 g->ws_len, err);
}

/* ---- pieces of the block ---------------------------------------------------------------- */

/* LayerNorm, keeping each row's mean and 1/std for the backward when asked to (the same
 * bits either way) */
static void layernorm(float *out, float *mean, float *rstd, const float *x, const float *gamma,
                      const float *beta, size_t N, int C)
{
    if (mean)
        mygpt_layernorm_forward_train(out, mean, rstd, x, gamma, beta, N, C);
    else
        mygpt_layernorm_forward(out, x, gamma, beta, N, C);
}

float *mygpt_head_weight(const mygpt_config *cfg, const mygpt_params *w)
{
    return mygpt_arch_get(cfg).untied_head ? w->lmw : w->wte;
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
        const size_t MC = (size_t)p->cfg->max_seq_len * (size_t)C;
        const size_t KTC = (size_t)C * p->cache->ldk;
        mygpt_attention_cached(a->atty, a->q, p->cache->k + l * MC, p->cache->kt + l * KTC, p->cache->v + l * MC,
                               T, p->t0, p->cfg->max_seq_len, C, NH, p->cache->att, p->cache->att_rows);
        return MYGPT_OK;
    }
    mygpt_status st = mygpt_attention_forward(a->atty, a->att, a->q, a->k, a->v, p->att_scratch, p->att_scratch_len,
                                              B, T, C, NH, p->naive ? MYGPT_KERNELS_NAIVE : MYGPT_KERNELS_FAST, err);
    if (st == MYGPT_OK && a->keep_att) // train mode: the values weighted by dropout(P)
        mygpt_attention_dropout_values(a->atty, a->att, a->v, a->keep_att, p->dropout, B, T, C, NH);
    return st;
}

#define CHECK(call)                                                                                \
    do {                                                                                       \
        if ((st = (call)) != MYGPT_OK)                                                         \
            return st;                                                                         \
    } while (0)

/* ---- the block ---------------------------------------------------------------------------- */

mygpt_status mygpt_block_forward(const mygpt_pass *p, int l, const mygpt_block_acts *a, mygpt_error *err)
{
    const mygpt_config *cfg = p->cfg;
    const int C = cfg->embed_dim;
    const size_t N = (size_t)p->B * p->T, NC = N * (size_t)C, lc = (size_t)l * C;
    const mygpt_params *w = p->w;
    mygpt_status st;
    // in a KV-cache step the keys and values go to the cache's rows t0 ..
    const size_t at = (size_t)p->t0 * C, MC = (size_t)cfg->max_seq_len * C;
    float *k = p->cache ? p->cache->k + l * MC + at : a->k;
    float *v = p->cache ? p->cache->v + l * MC + at : a->v;

    // mid = x + W_o(attention(LN1(x)))
    layernorm(a->ln1, a->ln1_mean, a->ln1_rstd, a->x, w->ln1w + lc, w->ln1b + lc, N, C);
    CHECK(layer_linear(p, MYGPT_PARAM_wq, l, a->q, a->ln1, N, 0, err));
    CHECK(layer_linear(p, MYGPT_PARAM_wk, l, k, a->ln1, N, 0, err));
    CHECK(layer_linear(p, MYGPT_PARAM_wv, l, v, a->ln1, N, 0, err));
    mygpt_block_acts with_kv = *a;
    with_kv.k = k;
    with_kv.v = v;
    CHECK(attention(p, l, &with_kv, err));
    CHECK(layer_linear(p, MYGPT_PARAM_wo, l, a->proj, a->atty, N, 0, err));
    if (a->keep_attn)
        mygpt_dropout_apply(a->proj, a->proj, a->keep_attn, NC, p->dropout);
    add(a->mid, a->x, a->proj, NC);
    // out = mid + fc2(GELU(fc1(LN2(mid))))
    layernorm(a->ln2, a->ln2_mean, a->ln2_rstd, a->mid, w->ln2w + lc, w->ln2b + lc, N, C);
    // the exact GELU is fused into fc1's product unless the backward needs fc1's output too
    const int fused = !a->fch_gelu && !mygpt_arch_get(cfg).gelu_tanh;
    CHECK(layer_linear(p, MYGPT_PARAM_fc1w, l, a->fch, a->ln2, N, fused, err));
    if (!fused)
        gelu(cfg, a->fch_gelu ? a->fch_gelu : a->fch, a->fch, 4 * NC);
    CHECK(layer_linear(p, MYGPT_PARAM_fc2w, l, a->proj, a->fch_gelu ? a->fch_gelu : a->fch, N, 0, err));
    if (a->keep_mlp)
        mygpt_dropout_apply(a->proj, a->proj, a->keep_mlp, NC, p->dropout);
    add(a->out, a->mid, a->proj, NC);
    return MYGPT_OK;
}

mygpt_status mygpt_block_backward(const mygpt_pass *p, int l, const mygpt_block_acts *a,
                                  const mygpt_block_grads *g, mygpt_error *err)
{
    const mygpt_config *cfg = p->cfg;
    const int B = p->B, T = p->T, C = cfg->embed_dim, NH = cfg->num_heads;
    const size_t N = (size_t)B * T, NC = N * (size_t)C, lc = (size_t)l * C;
    const mygpt_params *w = p->w, *d = g->d;
    mygpt_status st;

    // out = mid + fc2(GELU(fc1(LN2(mid)))): dx holds d out; dmid = d out + the MLP's
    mygpt_fill_floats(g->dmid, g->dx, NC);
    const float *dfc2 = g->dx; // d fc2's output: through its dropout (dln is free until fc1's)
    if (a->keep_mlp) {
        mygpt_dropout_apply(g->dln, g->dx, a->keep_mlp, NC, p->dropout);
        dfc2 = g->dln;
    }
    CHECK(layer_linear_backward(p, g, MYGPT_PARAM_fc2w, l, g->dfch_gelu, 1, dfc2, a->fch_gelu, N, err));
    mygpt_fill_floats(g->dfch, NULL, 4 * NC);
    gelu_backward(cfg, g->dfch, a->fch, g->dfch_gelu, 4 * NC);
    CHECK(layer_linear_backward(p, g, MYGPT_PARAM_fc1w, l, g->dln, 1, g->dfch, a->ln2, N, err));
    mygpt_layernorm_backward(g->dmid, d->ln2w + lc, d->ln2b + lc, g->dln, a->mid, w->ln2w + lc, a->ln2_mean,
                             a->ln2_rstd, N, C);
    // mid = x + W_o(attention(LN1(x))): dx = d mid + the attention's
    mygpt_fill_floats(g->dx, g->dmid, NC);
    const float *dwo = g->dmid; // d W_o's output: through its dropout
    if (a->keep_attn) {
        mygpt_dropout_apply(g->dln, g->dmid, a->keep_attn, NC, p->dropout);
        dwo = g->dln;
    }
    CHECK(layer_linear_backward(p, g, MYGPT_PARAM_wo, l, g->datty, 1, dwo, a->atty, N, err));
    mygpt_fill_floats(g->dq, NULL, NC);
    mygpt_fill_floats(g->dk, NULL, NC);
    mygpt_fill_floats(g->dv, NULL, NC);
    mygpt_attention_backward_dropout(g->dq, g->dk, g->dv, g->datty, a->att, a->q, a->k, a->v, a->keep_att,
                                     p->dropout, B, T, C, NH);
    // q, k and v read the same LN1(x): their input gradients add up in dln
    CHECK(layer_linear_backward(p, g, MYGPT_PARAM_wq, l, g->dln, 1, g->dq, a->ln1, N, err));
    CHECK(layer_linear_backward(p, g, MYGPT_PARAM_wk, l, g->dln, 0, g->dk, a->ln1, N, err));
    CHECK(layer_linear_backward(p, g, MYGPT_PARAM_wv, l, g->dln, 0, g->dv, a->ln1, N, err));
    mygpt_layernorm_backward(g->dx, d->ln1w + lc, d->ln1b + lc, g->dln, a->x, w->ln1w + lc, a->ln1_mean,
                             a->ln1_rstd, N, C);
    return MYGPT_OK;
}

/* ---- the head ------------------------------------------------------------------------------ */

mygpt_status mygpt_head_forward(const mygpt_pass *p, float *logits, float *ln, float *mean, float *rstd,
                                const float *x, size_t rows, mygpt_error *err)
{
    const mygpt_config *cfg = p->cfg;
    layernorm(ln, mean, rstd, x, p->w->lnfw, p->w->lnfb, rows, cfg->embed_dim);
    // logits = LN_f(x) H^T, H the untied head or the token embedding   (rows, V)
    return mygpt_linear(p, logits, ln, mygpt_head_weight(cfg, p->w), NULL, p->packed ? &p->packed->head : NULL,
                        rows, cfg->embed_dim, cfg->vocab_size, 0, err);
}
