/*
 * block.c - a pass's plan, the transformer block (forward and backward side by side), the
 * one Linear every product of the model goes through, and the driver of the forward
 * passes (see block.h).
 *
 *   mid = x + W_o(attention(LN1(x)))
 *   out = mid + fc2(GELU(fc1(LN2(mid))))
 */
#include "model/block.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "mygpt/layers.h"
#include "base/base.h"
#include "base/parallel.h"
#include "model/params.h"
#include "model/kv_layout.h"
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

/* ---- the plan ---------------------------------------------------------------------------- */

float *mygpt_head_weight(const mygpt_config *cfg, const mygpt_params *w)
{
    return mygpt_arch_get(cfg).untied_head || cfg->num_classes > 0 ? w->lmw : w->wte;
}

/* The Linear whose weight is table row `row` in layer l's views lw (weights) and dw
 * (gradients, or NULL), with its bias, packing, adapter and gradient slots. */
static mygpt_linear_plan linear_of(const mygpt_pass *p, const mygpt_pass_model *m, int row, int l,
                                   const mygpt_params *lw, const mygpt_params *dw)
{
    const mygpt_config *cfg = p->cfg;
    mygpt_param_info info;
    mygpt_param_info_get(cfg, row, &info);
    const int bias = mygpt_param_info_bias(cfg, row);
    mygpt_linear_plan f = {.weight = mygpt_param_tensor(lw, row), .bias = bias >= 0 ? mygpt_param_tensor(lw, bias) : NULL,
                           .pw = mygpt_packed_find(m->packed, row, l), .C = (int)info.shape[1],
                           .OC = (int)info.shape[0]};
    const int frozen = m->frozen && m->frozen[row], frozen_bias = bias >= 0 && m->frozen && m->frozen[bias];
    if (dw) {
        f.dweight = frozen ? NULL : mygpt_param_tensor(dw, row);
        f.dbias = bias < 0 || frozen_bias ? NULL : mygpt_param_tensor(dw, bias);
    }
    int a, b;
    if (mygpt_param_info_adapter(cfg, row, &a, &b)) // (self.alpha / self.rank) in Python's double, then float32
        f.lora = (mygpt_adapter){mygpt_param_tensor(lw, a), mygpt_param_tensor(lw, b), dw ? mygpt_param_tensor(dw, a) : NULL,
                                 dw ? mygpt_param_tensor(dw, b) : NULL, cfg->lora_rank,
                                 (float)(cfg->lora_alpha / cfg->lora_rank)};
    return f;
}

/* Layer l's plan */
static void plan_layer(mygpt_pass *p, const mygpt_pass_model *m, int l, mygpt_layer_plan *lp)
{
    mygpt_params lw, dw; // layer l's weights, as the math names them: W_q is lw.wq (C, C), b_q lw.bq (C) or NULL
    mygpt_params_layer(p->cfg, m->w, l, &lw);
    if (m->d)
        mygpt_params_layer(p->cfg, m->d, l, &dw);
    const mygpt_params *d = m->d ? &dw : NULL;
    *lp = (mygpt_layer_plan){.ln1w = lw.ln1w, .ln1b = lw.ln1b, .ln2w = lw.ln2w, .ln2b = lw.ln2b,
                             .dln1w = d ? dw.ln1w : NULL, .dln1b = d ? dw.ln1b : NULL,
                             .dln2w = d ? dw.ln2w : NULL, .dln2b = d ? dw.ln2b : NULL,
                             .q = linear_of(p, m, MYGPT_PARAM_wq, l, &lw, d),
                             .k = linear_of(p, m, MYGPT_PARAM_wk, l, &lw, d),
                             .v = linear_of(p, m, MYGPT_PARAM_wv, l, &lw, d),
                             .o = linear_of(p, m, MYGPT_PARAM_wo, l, &lw, d),
                             .fc1 = linear_of(p, m, MYGPT_PARAM_fc1w, l, &lw, d),
                             .fc2 = linear_of(p, m, MYGPT_PARAM_fc2w, l, &lw, d)};
    if (p->cache) {
        const mygpt_kv_layer kv = mygpt_kv_cache_layer(p->cache, p->cfg, l);
        lp->cache_k = kv.k, lp->cache_v = kv.v, lp->cache_kt = kv.kt;
    }
}

/* The head: the untied head or the token embedding (tied: no Linear of its own, so no
 * adapter: the table has no lmA, lmB), a classification head's bias */
static mygpt_linear_plan plan_head(const mygpt_pass *p, const mygpt_pass_model *m)
{
    const mygpt_config *cfg = p->cfg;
    const int row = mygpt_head_weight(cfg, m->w) == m->w->wte ? MYGPT_PARAM_wte : MYGPT_PARAM_lmw;
    if (row == MYGPT_PARAM_lmw) {
        mygpt_linear_plan f = linear_of(p, m, MYGPT_PARAM_lmw, 0, m->w, m->d);
        f.pw = m->packed ? &m->packed->head : NULL;
        return f;
    }
    return (mygpt_linear_plan){.weight = m->w->wte, .pw = m->packed ? &m->packed->head : NULL,
                               .dweight = m->d && !(m->frozen && m->frozen[row]) ? m->d->wte : NULL,
                               .C = cfg->embed_dim, .OC = mygpt_head_size(cfg)};
}

/* The bytes of workspace Linear f needs over `rows` rows: its product, and in a training
 * pass its gradient's (dinp written, or added for the attention's k and v) */
static mygpt_status linear_workspace(const mygpt_pass *p, const mygpt_linear_plan *f, size_t rows, int set_dinp,
                                     size_t *most, mygpt_error *err)
{
    size_t bytes;
    const mygpt_product pr = {.pw = f->pw, .M = rows, .K = f->C, .N = f->OC};
    MYGPT_TRY(mygpt_product_workspace(&pr, &bytes, err));
    *most = bytes > *most ? bytes : *most;
    if (!p->fault) // no backward
        return MYGPT_OK;
    float marker; // (a gradient's sizing reads only whether an output is there)
    const mygpt_product_grad g = {.dinp = &marker, .dweight = f->dweight, .N = rows, .C = f->C, .OC = f->OC,
                                  .set_dinp = set_dinp, .set_dweight = 1};
    MYGPT_TRY(mygpt_product_grad_workspace(&g, &bytes, err));
    *most = bytes > *most ? bytes : *most;
    return MYGPT_OK;
}

static mygpt_status size_workspace(const mygpt_pass *p, size_t *most, mygpt_error *err)
{
    *most = 0;
    if (p->impl == MYGPT_IMPL_REFERENCE)
        return MYGPT_OK;
    const size_t N = (size_t)p->B * p->T;
    for (int l = 0; l < p->cfg->num_layers; l++) {
        const mygpt_layer_plan *lp = &p->layer[l];
        MYGPT_TRY(linear_workspace(p, &lp->q, N, 1, most, err));
        MYGPT_TRY(linear_workspace(p, &lp->k, N, 0, most, err));
        MYGPT_TRY(linear_workspace(p, &lp->v, N, 0, most, err));
        MYGPT_TRY(linear_workspace(p, &lp->o, N, 1, most, err));
        MYGPT_TRY(linear_workspace(p, &lp->fc1, N, 1, most, err));
        MYGPT_TRY(linear_workspace(p, &lp->fc2, N, 1, most, err));
    }
    return linear_workspace(p, &p->head, p->cache ? 1 : N, 1, most, err);
}

/* Bytes rounded up to a cache line */
static size_t lines(size_t bytes)
{
    return (bytes + 63) / 64 * 64;
}

mygpt_status mygpt_pass_plan(mygpt_pass *p, const mygpt_pass_model *m, float **mem, size_t *len, mygpt_error *err)
{
    const mygpt_config *cfg = p->cfg;
    const size_t L = (size_t)cfg->num_layers;
    const size_t layers_bytes = lines(L * sizeof(mygpt_layer_plan)), acts_bytes = lines(L * sizeof(mygpt_block_acts));
    // the descriptors first, on the stack's worth of room, to size the workspace
    mygpt_layer_plan *layer = malloc(L * sizeof *layer);
    if (!layer)
        return mygpt_fail(err, MYGPT_ENOMEM, "out of memory for the plan of %zu layers", L);
    p->gelu_tanh = mygpt_arch_get(cfg).gelu_tanh;
    p->wte = m->w->wte;
    p->wpe = m->w->wpe + (size_t)p->t0 * cfg->embed_dim;
    p->lnfw = m->w->lnfw, p->lnfb = m->w->lnfb;
    p->dlnfw = m->d ? m->d->lnfw : NULL, p->dlnfb = m->d ? m->d->lnfb : NULL;
    p->head = plan_head(p, m);
    for (int l = 0; l < (int)L; l++)
        plan_layer(p, m, l, &layer[l]);
    p->layer = layer;
    size_t ws_bytes;
    mygpt_status st = size_workspace(p, &ws_bytes, err);
    const size_t need = (layers_bytes + acts_bytes + lines(ws_bytes)) / sizeof(float);
    if (st == MYGPT_OK && need > *len) {
        float *grown = mygpt_float_block(need);
        if (!grown)
            st = mygpt_fail(err, MYGPT_ENOMEM, "out of memory for a pass's plan and workspace (%zu floats)", need);
        else {
            free(*mem);
            *mem = grown;
            *len = need;
        }
    }
    if (st == MYGPT_OK) {
        char *base = (char *)*mem;
        p->layer = memcpy(base, layer, L * sizeof *layer);
        p->acts = (mygpt_block_acts *)(base + layers_bytes);
        memset(p->acts, 0, L * sizeof *p->acts);
        p->ws = ws_bytes ? base + layers_bytes + acts_bytes : NULL;
        p->ws_bytes = ws_bytes;
    } else {
        p->layer = NULL;
    }
    free(layer);
    return st;
}

/* ---- pieces of the block ---------------------------------------------------------------- */

/* nn.Linear through the pass's kernels: out (N, OC) = inp (N, C) W^T + bias, plus the
 * adapter's (alpha / r) (inp A) B (the book's LinearWithLoRA), then GELU when gelu; the
 * reference loops, or the fast kernel with the weight packed once or packed by the call:
 * the same bits. */
static void linear(const mygpt_pass *p, const mygpt_linear_plan *f, float *out, const float *inp, size_t N, int gelu)
{
    const mygpt_adapter *lora = f->lora.r ? &f->lora : NULL;
    if (p->impl == MYGPT_IMPL_REFERENCE) {
        mygpt_matmul_naive(out, inp, f->weight, f->bias, N, f->C, f->OC);
    } else {
        const mygpt_product pr = {.out = out, .inp = inp, .weight = f->weight, .bias = f->bias, .pw = f->pw,
                                  .M = N, .K = f->C, .N = f->OC, .gelu = gelu && !lora}; // with an adapter, GELU after its share
        mygpt_product_run(&pr, p->ws, p->ws_bytes);
    }
    if (lora) // self.linear(x) + self.lora(x)
        mygpt_lora_forward(out, inp, lora->a, lora->b, N, f->C, f->OC, lora->r, lora->scale);
    if (gelu && (lora || p->impl == MYGPT_IMPL_REFERENCE))
        mygpt_gelu_forward(out, out, N * (size_t)f->OC);
}

void mygpt_linear_backward(const mygpt_pass *p, const mygpt_linear_plan *f, float *dinp, int set_dinp,
                           const float *dout, const float *inp, size_t N)
{
    const int C = f->C, OC = f->OC;
    if (p->impl == MYGPT_IMPL_REFERENCE) {
        if (set_dinp)
            memset(dinp, 0, N * (size_t)C * sizeof *dinp);
        if (f->dweight)
            memset(f->dweight, 0, (size_t)OC * C * sizeof *f->dweight);
        mygpt_matmul_backward_naive(dinp, f->dweight, f->dbias, dout, inp, f->weight, N, C, OC);
    } else {
        const mygpt_product_grad g = {.dinp = dinp, .dweight = f->dweight, .dbias = f->dbias, .dout = dout,
                                      .inp = inp, .weight = f->weight, .N = N, .C = C, .OC = OC,
                                      .set_dinp = set_dinp, .set_dweight = 1}; // dw written (or not computed)
        mygpt_product_grad_run(&g, p->ws, p->ws_bytes);
    }
    if (!f->lora.r)
        return;
    const mygpt_adapter *a = &f->lora;
    const mygpt_status st = mygpt_lora_backward(dinp, a->da, a->db, dout, inp, a->a, a->b, N, C, OC, a->r, a->scale,
                                                *p->fault ? NULL : p->err);
    if (!*p->fault)
        *p->fault = st;
}

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

/* GELU of the architecture (exact or tanh) over n floats, and its backward (dinp +=) */
static void gelu(const mygpt_pass *p, float *out, const float *inp, size_t n)
{
    if (p->gelu_tanh)
        mygpt_gelu_tanh_forward(out, inp, n);
    else
        mygpt_gelu_forward(out, inp, n);
}

static void gelu_backward(const mygpt_pass *p, float *dinp, const float *inp, const float *dout, size_t n)
{
    if (p->gelu_tanh)
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
 * probabilities, with the plain loops or the fast kernel (the same bits); k and v are
 * where this pass's keys and values went */
static void attention(const mygpt_pass *p, int l, const float *k, const float *v)
{
    const int B = p->B, T = p->T, C = p->cfg->embed_dim, NH = p->cfg->num_heads;
    const mygpt_block_acts *a = &p->acts[l];
    const mygpt_layer_plan *lp = &p->layer[l];
    if (p->cache) {
        mygpt_attention_cached(a->atty, a->q, lp->cache_k, lp->cache_kt, lp->cache_v, T, p->t0, p->cfg->max_seq_len,
                               C, NH, p->cache->att, p->cache->att_rows);
        return;
    }
    // (its only failures, sizes and a scratch too small, are the plan's to rule out)
    const mygpt_status st = mygpt_attention_forward(a->atty, a->att, a->q, k, v, p->att_scratch, p->att_scratch_len, B,
                                                    T, C, NH, p->impl, NULL);
    assert(st == MYGPT_OK);
    (void)st;
    if (a->keep_att) // train mode: the values weighted by dropout(P)
        mygpt_attention_dropout_values(a->atty, a->att, v, a->keep_att, p->dropout, B, T, C, NH);
}

/* ---- the block ---------------------------------------------------------------------------- */

void mygpt_block_forward(const mygpt_pass *p, int l)
{
    const mygpt_block_acts *a = &p->acts[l];
    const mygpt_layer_plan *lp = &p->layer[l];
    const int C = p->cfg->embed_dim;
    const size_t N = (size_t)p->B * p->T, NC = N * (size_t)C;
    // in a KV-cache step the keys and values go to the cache's rows t0 ..
    float *k = p->cache ? lp->cache_k + (size_t)p->t0 * C : a->k; // (N, C)
    float *v = p->cache ? lp->cache_v + (size_t)p->t0 * C : a->v; // (N, C)

    // mid = x + W_o(attention(LN1(x)))
    layernorm(a->ln1, a->ln1_mean, a->ln1_denom, a->x, lp->ln1w, lp->ln1b, N, C); // ln1 (N, C)
    linear(p, &lp->q, a->q, a->ln1, N, 0);                                        // q (N, C)
    linear(p, &lp->k, k, a->ln1, N, 0);                                           // k (N, C)
    linear(p, &lp->v, v, a->ln1, N, 0);                                           // v (N, C)
    attention(p, l, k, v);                                                        // atty (N, C)
    linear(p, &lp->o, a->proj, a->atty, N, 0);                                    // proj (N, C)
    if (a->keep_attn)
        mygpt_dropout_apply(a->proj, a->proj, a->keep_attn, NC, p->dropout);
    add(a->mid, a->x, a->proj, NC);                                               // mid (N, C)
    // out = mid + fc2(GELU(fc1(LN2(mid))))
    layernorm(a->ln2, a->ln2_mean, a->ln2_denom, a->mid, lp->ln2w, lp->ln2b, N, C); // ln2 (N, C)
    // the exact GELU is fused into fc1's product unless the backward needs fc1's output too
    const int fused = !a->fch_gelu && !p->gelu_tanh;
    linear(p, &lp->fc1, a->fch, a->ln2, N, fused);                                // fch (N, 4C)
    float *fch_gelu = a->fch_gelu ? a->fch_gelu : a->fch;                         // (N, 4C)
    if (!fused)
        gelu(p, fch_gelu, a->fch, 4 * NC);
    linear(p, &lp->fc2, a->proj, fch_gelu, N, 0);                                 // proj (N, C)
    if (a->keep_mlp)
        mygpt_dropout_apply(a->proj, a->proj, a->keep_mlp, NC, p->dropout);
    add(a->out, a->mid, a->proj, NC);                                             // out (N, C)
}

void mygpt_block_backward(const mygpt_pass *p, int l, const mygpt_block_grads *g)
{
    const mygpt_block_acts *a = &p->acts[l];
    const mygpt_layer_plan *lp = &p->layer[l];
    const int B = p->B, T = p->T, C = p->cfg->embed_dim, NH = p->cfg->num_heads;
    const size_t N = (size_t)B * T, NC = N * (size_t)C;

    // out = mid + fc2(GELU(fc1(LN2(mid)))): dx holds d out; dmid = d out + the MLP's
    mygpt_fill_floats(g->dmid, g->dx, NC);                          // dmid (N, C) = d out
    const float *dfc2 = g->dx; // d fc2's output: through its dropout (dln is free until fc1's)
    if (a->keep_mlp) {
        mygpt_dropout_apply(g->dln, g->dx, a->keep_mlp, NC, p->dropout);
        dfc2 = g->dln;
    }
    mygpt_linear_backward(p, &lp->fc2, g->dfch_gelu, 1, dfc2, a->fch_gelu, N); // dfch_gelu (N, 4C)
    mygpt_fill_floats(g->dfch, NULL, 4 * NC);
    gelu_backward(p, g->dfch, a->fch, g->dfch_gelu, 4 * NC);        // dfch (N, 4C)
    mygpt_linear_backward(p, &lp->fc1, g->dln, 1, g->dfch, a->ln2, N); // dln = d LN2(mid) (N, C)
    mygpt_layernorm_backward(g->dmid, lp->dln2w, lp->dln2b, g->dln, a->mid, lp->ln2w, a->ln2_mean, a->ln2_denom, N,
                             C);                                      // dmid += (N, C)
    // mid = x + W_o(attention(LN1(x))): dx = d mid + the attention's
    mygpt_fill_floats(g->dx, g->dmid, NC);                          // dx (N, C) = d mid
    const float *dwo = g->dmid; // d W_o's output: through its dropout
    if (a->keep_attn) {
        mygpt_dropout_apply(g->dln, g->dmid, a->keep_attn, NC, p->dropout);
        dwo = g->dln;
    }
    mygpt_linear_backward(p, &lp->o, g->datty, 1, dwo, a->atty, N); // datty (N, C)
    mygpt_fill_floats(g->dq, NULL, NC);
    mygpt_fill_floats(g->dk, NULL, NC);
    mygpt_fill_floats(g->dv, NULL, NC);
    mygpt_attention_backward_dropout(g->dq, g->dk, g->dv, g->datty, a->att, a->q, a->k, a->v, a->keep_att,
                                     p->dropout, B, T, C, NH);        // dq, dk, dv (N, C) each
    // q, k and v read the same LN1(x): their input gradients add up in dln
    mygpt_linear_backward(p, &lp->q, g->dln, 1, g->dq, a->ln1, N);
    mygpt_linear_backward(p, &lp->k, g->dln, 0, g->dk, a->ln1, N);
    mygpt_linear_backward(p, &lp->v, g->dln, 0, g->dv, a->ln1, N);
    // dln = d LN1(x) (N, C); dx += its LayerNorm's backward
    mygpt_layernorm_backward(g->dx, lp->dln1w, lp->dln1b, g->dln, a->x, lp->ln1w, a->ln1_mean, a->ln1_denom, N, C);
}

/* ---- the pass -------------------------------------------------------------------------------- */

void mygpt_pass_forward(const mygpt_pass *p, const int64_t *ids)
{
    const mygpt_config *cfg = p->cfg;
    const mygpt_ends_acts *e = &p->ends;
    const size_t NC = (size_t)p->B * p->T * cfg->embed_dim;
    // x = E[ids] + P[t0 .. t0 + T - 1], then its dropout in train mode          (B, T, C)
    // (the ids and positions were checked: mygpt_pass_check_input)
    const mygpt_status st = mygpt_embedding_forward(e->x, ids, p->wte, p->wpe, p->B, p->T, cfg->embed_dim,
                                                    cfg->vocab_size, cfg->max_seq_len - p->t0, NULL);
    assert(st == MYGPT_OK);
    (void)st;
    if (e->keep_embed)
        mygpt_dropout_apply(e->x, e->x, e->keep_embed, NC, p->dropout);
    for (int l = 0; l < cfg->num_layers; l++)
        mygpt_block_forward(p, l);
    // logits = LN_f(x) H^T (+ b), H the untied head or the token embedding E, b a
    // classification head's bias                                   (rows, V or num_classes)
    layernorm(e->ln, e->mean, e->denom, e->x_final, p->lnfw, p->lnfb, e->rows, cfg->embed_dim);
    linear(p, &p->head, e->logits, e->ln, e->rows, 0);
}
