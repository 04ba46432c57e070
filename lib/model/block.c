/*
 * block.c - a pass's plan, the transformer block (forward and backward side by side), the
 * one Linear every product of the model goes through, and the driver of the forward
 * passes (see block.h).
 *
 *   mid = x + W_o(attention(LN1(x)))
 *   out = mid + fc2(GELU(fc1(LN2(mid))))
 *
 * and llama's (llama2.c's model.py), the same block with RMSNorm for LN, rotary positions
 * on q and k, keys and values of fewer heads repeated (grouped-query attention), and
 * SwiGLU: out = mid + w2(SiLU(w1(RMSNorm(mid))) * w3(RMSNorm(mid))).
 */
#include "model/block.h"

#include <assert.h>
#include <omp.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "mygpt/layers.h"
#include "mygpt/posenc.h"
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
    // lesson: max_seq_len
    if (t0 == 0 && T > M)
        return mygpt_fail(err, MYGPT_ERANGE, "input length T=%d exceeds max_seq_len=%d", T, M);
    // end lesson: max_seq_len
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

/* One Linear of layer l's views: its weight W (OC, C) and bias b as the table's rows
 * (lw.W, lw.b: NULL when the architecture has none), its packing, its adapter (lw.xA,
 * lw.xB: present only with LoRA), and where dw (or none) takes its gradients: a frozen
 * weight's or bias's is not computed, an adapter's always is. */
#define LINEAR(W, b, x, in, out)                                                                                   \
    (mygpt_linear_plan)                                                                                              \
    {                                                                                                                \
        .weight = lw.W, .bias = lw.b, .pw = mygpt_packed_find(m->packed, MYGPT_PARAM_##W, l),                        \
        .lora = {lw.x##A, lw.x##B, d ? dw.x##A : NULL, d ? dw.x##B : NULL, lw.x##A ? cfg->lora_rank : 0, scale},    \
        .dweight = d && !frozen[MYGPT_PARAM_##W] ? dw.W : NULL,                                                      \
        .dbias = d && !frozen[MYGPT_PARAM_##b] ? dw.b : NULL, .C = (in), .OC = (out)                                 \
    }

/* Layer l's plan (layer 0's also plans the embeddings, the final norm and the head's Linear) */
static void plan_layer(mygpt_pass *p, const mygpt_pass_model *m, int l, mygpt_layer_plan *lp)
{
    const mygpt_config *cfg = p->cfg;
    const int C = cfg->embed_dim, KV = mygpt_kv_dim(cfg), H = p->hidden;
    static const uint8_t none[MYGPT_NUM_PARAM_TENSORS];
    const uint8_t *frozen = m->frozen ? m->frozen : none;
    // (self.alpha / self.rank) in Python's double, then float32 as it multiplies a float tensor
    const float scale = cfg->lora_rank > 0 ? (float)(cfg->lora_alpha / cfg->lora_rank) : 0.0f;
    mygpt_params lw, dw; // layer l's weights, as the math names them: W_q is lw.wq (C, C), b_q lw.bq (C) or NULL
    const mygpt_params *d = m->d;
    mygpt_params_layer(m->sizes, cfg->num_layers, m->w, l, &lw);
    if (d)
        mygpt_params_layer(m->sizes, cfg->num_layers, d, l, &dw);
    *lp = (mygpt_layer_plan){.ln1w = lw.ln1w, .ln1b = lw.ln1b, .ln2w = lw.ln2w, .ln2b = lw.ln2b,
                             .dln1w = d ? dw.ln1w : NULL, .dln1b = d ? dw.ln1b : NULL,
                             .dln2w = d ? dw.ln2w : NULL, .dln2b = d ? dw.ln2b : NULL,
                             .q = LINEAR(wq, bq, q, C, C), .k = LINEAR(wk, bk, k, C, KV), .v = LINEAR(wv, bv, v, C, KV),
                             .o = LINEAR(wo, bo, o, C, C), .fc1 = LINEAR(fc1w, fc1b, fc1, C, H),
                             .fc2 = LINEAR(fc2w, fc2b, fc2, H, C), .w3 = LINEAR(w3w, w3b, w3, C, H)};
    // the head: the untied head (its own Linear: a classification head's bias, an adapter)
    // or the token embedding E (tied: no Linear of its own, so no adapter)
    if (l == 0) {
        const int V = cfg->num_classes > 0 ? cfg->num_classes : cfg->vocab_size;
        // lesson: tied_head
        const mygpt_linear_plan tied = {.weight = lw.wte, .dweight = d && !frozen[MYGPT_PARAM_wte] ? dw.wte : NULL,
                                        .C = C, .OC = V};
        p->head = p->untied_head ? LINEAR(lmw, lmb, lm, C, V) : tied;
        // end lesson: tied_head
        p->head.pw = m->packed ? &m->packed->head : NULL;
        p->wte = lw.wte, p->wpe = lw.wpe;
        p->lnfw = lw.lnfw, p->lnfb = lw.lnfb;
        p->dlnfw = d ? dw.lnfw : NULL, p->dlnfb = d ? dw.lnfb : NULL;
    }
    if (p->cache) {
        const mygpt_kv_layer kv = mygpt_kv_cache_layer(p->cache, cfg, l);
        lp->cache_k = kv.k, lp->cache_v = kv.v, lp->cache_kt = kv.kt;
    }
}
#undef LINEAR

/* The bytes of workspace the pass's products need: each Linear's product, and in a
 * training pass its gradient's (dinp written, or added for the attention's k and v);
 * SIZE_MAX for one too large to share out. Layer 0's Linears stand for every layer's:
 * the same shapes, and the same packing (a table row is packed, or stored quantized, in
 * all its layers or none). */
static size_t size_workspace(const mygpt_pass *p)
{
    if (p->impl == MYGPT_IMPL_REFERENCE)
        return 0;
    const mygpt_layer_plan *lp = &p->layer[0];
    const mygpt_linear_plan *all[8] = {&lp->q, &lp->k, &lp->v, &lp->o, &lp->fc1, &lp->fc2, &lp->w3, &p->head};
    const size_t N = (size_t)p->B * p->T;
    size_t most = 0;
    for (int i = 0; i < 8; i++) {
        const mygpt_linear_plan *f = all[i];
        if (!f->weight) // (no w3 but in SwiGLU)
            continue;
        const size_t rows = i < 7 || !p->cache ? N : 1; // a KV-cache step's head: the last row
        float marker; // (the sizing reads only whether an output is there)
        const mygpt_product pr = {.pw = f->pw, .M = rows, .K = f->C, .N = f->OC};
        const mygpt_product_grad g = {.dinp = &marker, .dweight = f->dweight, .N = rows, .C = f->C, .OC = f->OC,
                                      .set_dinp = i != 1 && i != 2 && i != 6, .set_dweight = 1}; // k's, v's, w3's dinp add up
        const size_t bytes = mygpt_product_workspace(&pr, p->fault ? &g : NULL); // (only a backward has faults)
        most = bytes > most ? bytes : most;
    }
    return most;
}

/* Bytes rounded up to a cache line */
static size_t lines(size_t bytes)
{
    return (bytes + 63) / 64 * 64;
}

/* What a plan is made from beyond the model's configuration: compared whole (built from
 * zeros, so no padding differs) to tell whether the plan kept in a pass's memory serves. */
typedef struct plan_key {
    int B, T, impl, threads, backward;
    const mygpt_kv_cache *cache;
    int V, C, NH, L, M, classes, rank, kv_heads, hidden, rope;
    double alpha;
    mygpt_arch_switches arch;
    mygpt_params w, d;
    const mygpt_packed_model *packed;
    uint8_t frozen[MYGPT_NUM_PARAM_TENSORS];
} plan_key;

/* The head of a pass's memory: the key of the plan it holds and the plan's resolved
 * fields (valid 0: none, or one half written) */
typedef struct plan_head {
    plan_key key;
    mygpt_pass pass;
    int valid;
} plan_head;

static void key_of(plan_key *k, const mygpt_pass *p, const mygpt_pass_model *m)
{
    const mygpt_config *cfg = p->cfg;
    memset(k, 0, sizeof *k);
    k->B = p->B, k->T = p->T, k->impl = (int)p->impl, k->threads = omp_get_max_threads();
    k->backward = p->fault != NULL, k->cache = p->cache;
    k->V = cfg->vocab_size, k->C = cfg->embed_dim, k->NH = cfg->num_heads, k->L = cfg->num_layers;
    k->M = cfg->max_seq_len, k->classes = cfg->num_classes, k->rank = cfg->lora_rank, k->alpha = cfg->lora_alpha;
    k->kv_heads = mygpt_kv_heads(cfg), k->hidden = mygpt_ffn_hidden(cfg), k->rope = cfg->rope;
    k->arch = m->arch, k->w = *m->w, k->packed = m->packed;
    if (m->d)
        k->d = *m->d;
    if (m->frozen)
        memcpy(k->frozen, m->frozen, sizeof k->frozen);
}

/* p's resolved fields (from gelu_tanh on) = from's */
static void take_resolved(mygpt_pass *p, const mygpt_pass *from)
{
    const size_t at = offsetof(mygpt_pass, gelu_tanh);
    memcpy((char *)p + at, (const char *)from + at, sizeof *p - at);
}

mygpt_status mygpt_pass_plan(mygpt_pass *p, const mygpt_pass_model *m, float **mem, size_t *len, mygpt_error *err)
{
    const mygpt_config *cfg = p->cfg;
    plan_key key;
    key_of(&key, p, m);
    plan_head *kept = (plan_head *)*mem;
    if (kept && kept->valid && memcmp(&kept->key, &key, sizeof key) == 0) {
        take_resolved(p, &kept->pass);
        return MYGPT_OK;
    }
    const size_t L = (size_t)cfg->num_layers, head_bytes = lines(sizeof(plan_head));
    const size_t layers_bytes = lines(L * sizeof(mygpt_layer_plan)), acts_bytes = lines(L * sizeof(mygpt_block_acts));
    const size_t plan_bytes = head_bytes + layers_bytes + acts_bytes;
    p->gelu_tanh = m->arch.gelu_tanh;
    p->untied_head = m->arch.untied_head || cfg->num_classes > 0;
    p->rmsnorm = m->arch.rmsnorm, p->swiglu = m->arch.swiglu;
    p->rope = m->arch.rope ? 1 + cfg->rope : 0;
    p->hidden = mygpt_ffn_hidden(cfg), p->kv_heads = mygpt_kv_heads(cfg);
    // the layers' plans where they will stay (then the workspace they size after them)
    if (*len * sizeof(float) < plan_bytes) {
        float *grown = mygpt_float_block(plan_bytes / sizeof(float));
        if (!grown)
            return mygpt_fail(err, MYGPT_ENOMEM, "out of memory for the plan of %zu layers", L);
        free(*mem);
        *mem = grown;
        *len = plan_bytes / sizeof(float);
    }
    memset(*mem, 0, head_bytes); // no plan kept until this one is whole
    p->layer = (mygpt_layer_plan *)((char *)*mem + head_bytes);
    for (int l = 0; l < (int)L; l++)
        plan_layer(p, m, l, &p->layer[l]);
    const size_t ws_bytes = size_workspace(p);
    if (ws_bytes > SIZE_MAX / 2)
        return mygpt_fail(err, MYGPT_EINVAL, "a product of B=%d, T=%d is too large to share out", p->B, p->T);
    const size_t att_len = p->cache ? 0
                                    : mygpt_attention_scratch_size(p->T, cfg->embed_dim / cfg->num_heads,
                                                                   omp_get_max_threads());
    const size_t need = (plan_bytes + lines(ws_bytes) + lines(att_len * sizeof(float))) / sizeof(float);
    if (need > *len) {
        float *grown = mygpt_float_block(need);
        if (!grown)
            return mygpt_fail(err, MYGPT_ENOMEM, "out of memory for a pass's workspace (%zu floats)", need);
        memcpy(grown, *mem, head_bytes + layers_bytes);
        free(*mem);
        *mem = grown;
        *len = need;
    }
    char *base = (char *)*mem;
    p->layer = (mygpt_layer_plan *)(base + head_bytes);
    p->acts = (mygpt_block_acts *)(base + head_bytes + layers_bytes);
    memset(p->acts, 0, L * sizeof *p->acts);
    p->ws = ws_bytes ? base + plan_bytes : NULL;
    p->ws_bytes = ws_bytes;
    p->att_scratch = att_len ? (float *)(base + plan_bytes + lines(ws_bytes)) : NULL;
    p->att_scratch_len = att_len;
    kept = (plan_head *)base;
    kept->key = key;
    kept->pass = *p;
    kept->valid = 1;
    return MYGPT_OK;
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
        // (with an adapter, GELU comes after its share is added)
        const mygpt_product pr = {.out = out, .inp = inp, .weight = f->weight, .bias = f->bias, .pw = f->pw,
                                  .M = N, .K = f->C, .N = f->OC, .gelu = gelu && !lora};
        mygpt_product_run(&pr, p->ws, p->ws_bytes);
    }
    if (lora) // self.linear(x) + self.lora(x)
        mygpt_lora_forward(out, inp, (mygpt_lora_weights){lora->a, lora->b, f->C, lora->r, f->OC, lora->scale}, N);
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
        mygpt_matmul_backward_naive((mygpt_linear_grads){dinp, f->dweight, f->dbias}, dout, inp, f->weight, N, C, OC);
    } else {
        const mygpt_product_grad g = {.dinp = dinp, .dweight = f->dweight, .dbias = f->dbias, .dout = dout,
                                      .inp = inp, .weight = f->weight, .N = N, .C = C, .OC = OC,
                                      .set_dinp = set_dinp, .set_dweight = 1}; // dw written (or not computed)
        mygpt_product_grad_run(&g, p->ws, p->ws_bytes);
    }
    if (!f->lora.r)
        return;
    const mygpt_adapter *a = &f->lora;
    const mygpt_status st = mygpt_lora_backward(dinp, a->da, a->db, dout, inp,
                                                (mygpt_lora_weights){a->a, a->b, C, a->r, OC, a->scale}, N,
                                                *p->fault ? NULL : p->err);
    if (!*p->fault)
        *p->fault = st;
}

/* The architecture's norm: RMSNorm (llama), or LayerNorm, keeping each row's mean and
 * sqrt(var + eps) for the backward when asked to (the same bits either way) */
static void layernorm(const mygpt_pass *p, float *out, float *mean, float *denom, const float *x,
                      const float *gamma, const float *beta, size_t N)
{
    const int C = p->cfg->embed_dim;
    if (p->rmsnorm)
        mygpt_rmsnorm_forward(out, x, gamma, N, C, MYGPT_RMSNORM_EPS);
    else if (mean)
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

void mygpt_norm_backward(const mygpt_pass *p, float *dinp, float *dgamma, float *dbeta, const float *dout,
                         mygpt_layernorm_saved saved, size_t N)
{
    const int C = p->cfg->embed_dim;
    if (p->rmsnorm)
        mygpt_rmsnorm_backward(dinp, dgamma, dout, saved.inp, saved.gamma, N, C, MYGPT_RMSNORM_EPS);
    else
        mygpt_layernorm_backward(dinp, dgamma, dbeta, dout, saved, N, C);
}

/* causal self-attention of the pass: cached, or over (B, T) with or without the
 * probabilities, with the plain loops or the fast kernel (the same bits); k and v are
 * where this pass's keys and values went */
static void attention(const mygpt_pass *p, int l, const float *k, const float *v)
{
    const mygpt_attention_shape shape = {p->B, p->T, p->cfg->embed_dim, p->cfg->num_heads};
    const mygpt_block_acts *a = &p->acts[l];
    const mygpt_layer_plan *lp = &p->layer[l];
    if (p->cache) {
        const mygpt_attention_cache kv = {.k = lp->cache_k, .v = lp->cache_v, .kt = lp->cache_kt,
                                          .M = p->cfg->max_seq_len, .kv_heads = p->kv_heads,
                                          .rows = p->cache->att, .nrows = p->cache->att_rows};
        mygpt_attention_cached(a->atty, a->q, kv, p->t0, shape);
        return;
    }
    // (its only failures, sizes and a scratch too small, are the plan's to rule out)
    const mygpt_status st = mygpt_attention_forward(a->atty, a->att, (mygpt_qkv){a->q, k, v}, p->att_scratch,
                                                    p->att_scratch_len, shape, p->impl, NULL);
    assert(st == MYGPT_OK);
    (void)st;
    if (a->keep_att) // train mode: the values weighted by dropout(P)
        mygpt_attention_dropout_values(a->atty, a->att, v, (mygpt_attention_dropout){a->keep_att, p->dropout}, shape);
}

/* in (N, KV heads * hs) with each head repeated rep times into out (N, KV heads * rep * hs):
 * model.py's repeat_kv */
static void repeat_heads(float *out, const float *in, size_t N, int kv_heads, int rep, int hs)
{
    for (size_t n = 0; n < N; n++)
        for (int h = 0; h < kv_heads * rep; h++)
            memcpy(out + (n * kv_heads * rep + h) * hs, in + (n * kv_heads + h / rep) * hs, (size_t)hs * sizeof *out);
}

/* in (N, KV heads * rep * hs) summed over each group of rep heads into out (N, KV heads * hs):
 * repeat_heads's backward */
static void sum_heads(float *out, const float *in, size_t N, int kv_heads, int rep, int hs)
{
    for (size_t n = 0; n < N; n++)
        for (int h = 0; h < kv_heads; h++) {
            float *o = out + (n * kv_heads + h) * hs;
            for (int i = 0; i < hs; i++) {
                float acc = 0.0f;
                for (int r = 0; r < rep; r++)
                    acc += in[(n * kv_heads * rep + (size_t)h * rep + r) * hs + i];
                o[i] = acc;
            }
        }
}

/* The keys and values of layer l into k and v (N, C), from LN1(x): a GPT's products; or
 * llama's, turned by the rotary positions (the queries too), then with grouped heads
 * repeated from proj and atty, free until the attention's output and W_o's. A KV-cache
 * step keeps the grouped heads as they are, k and v (N, KV): its attention shares them. */
static void keys_values(const mygpt_pass *p, int l, float *k, float *v)
{
    const mygpt_block_acts *a = &p->acts[l];
    const mygpt_layer_plan *lp = &p->layer[l];
    const int NH = p->cfg->num_heads, hs = p->cfg->embed_dim / NH;
    const int rep = p->cache ? 1 : NH / p->kv_heads; // how many times each head is repeated
    const size_t N = (size_t)p->B * p->T;
    float *kk = rep > 1 ? a->proj : k, *vv = rep > 1 ? a->atty : v; // (N, KV)
    linear(p, &lp->k, kk, a->ln1, N, 0);
    linear(p, &lp->v, vv, a->ln1, N, 0);
    if (p->rope) { // pair by pair of each head, at positions t0 + t
        const int halves = p->rope - 1 == MYGPT_ROPE_HALVES, context = p->cfg->max_seq_len;
        mygpt_rope_heads(a->q, N, p->T, p->t0, NH, hs, halves, context);
        mygpt_rope_heads(kk, N, p->T, p->t0, p->kv_heads, hs, halves, context);
    }
    if (rep > 1) {
        repeat_heads(k, kk, N, p->kv_heads, rep, hs); // (N, C)
        repeat_heads(v, vv, N, p->kv_heads, rep, hs);
    }
}

/* ---- the block ---------------------------------------------------------------------------- */

void mygpt_block_forward(const mygpt_pass *p, int l)
{
    const mygpt_block_acts *a = &p->acts[l];
    const mygpt_layer_plan *lp = &p->layer[l];
    const int C = p->cfg->embed_dim;
    const size_t N = (size_t)p->B * p->T, NC = N * (size_t)C;
    // in a KV-cache step the keys and values go to the cache's rows t0 .., KV wide
    const size_t KV = (size_t)mygpt_kv_dim(p->cfg);
    float *k = p->cache ? lp->cache_k + (size_t)p->t0 * KV : a->k; // (N, C) or the cache's (N, KV)
    float *v = p->cache ? lp->cache_v + (size_t)p->t0 * KV : a->v; // (N, C) or the cache's (N, KV)

    // lesson: block_forward
    // mid = x + W_o(attention(LN1(x)))
    layernorm(p, a->ln1, a->ln1_mean, a->ln1_denom, a->x, lp->ln1w, lp->ln1b, N);  // ln1 (N, C)
    linear(p, &lp->q, a->q, a->ln1, N, 0);                                        // q (N, C)
    keys_values(p, l, k, v);                                                      // k, v (N, C)
    attention(p, l, k, v);                                                        // atty (N, C)
    linear(p, &lp->o, a->proj, a->atty, N, 0);                                    // proj (N, C)
    mygpt_residual_forward(a->mid, a->x, a->proj, a->keep_attn, p->dropout, NC);   // mid (N, C)
    // out = mid + fc2(GELU(fc1(LN2(mid))))
    layernorm(p, a->ln2, a->ln2_mean, a->ln2_denom, a->mid, lp->ln2w, lp->ln2b, N); // ln2 (N, C)
    const size_t NHid = N * (size_t)p->hidden;
    const float *act; // (N, H): what fc2 reads
    if (p->swiglu) { // w2(SiLU(w1(x)) * w3(x))
        linear(p, &lp->fc1, a->fch, a->ln2, N, 0);                                // fch (N, H)
        linear(p, &lp->w3, a->fc3, a->ln2, N, 0);                                 // fc3 (N, H)
        mygpt_swiglu_forward(a->fch, a->fch, a->fc3, NHid);                       // fch (N, H)
        act = a->fch;
    } else {
        // the exact GELU is fused into fc1's product unless the backward needs fc1's output too
        const int fused = !a->fch_gelu && !p->gelu_tanh;
        linear(p, &lp->fc1, a->fch, a->ln2, N, fused);                            // fch (N, 4C)
        float *fch_gelu = a->fch_gelu ? a->fch_gelu : a->fch;                     // (N, 4C)
        if (!fused)
            gelu(p, fch_gelu, a->fch, NHid);
        act = fch_gelu;
    }
    linear(p, &lp->fc2, a->proj, act, N, 0);                                      // proj (N, C)
    mygpt_residual_forward(a->out, a->mid, a->proj, a->keep_mlp, p->dropout, NC);  // out (N, C)
    // end lesson: block_forward
}

/* The feed-forward's backward from dfc2, d of fc2's output, into g->dln = d LN2(mid):
 * through GELU(fc1), or SwiGLU's w1 and w3 (whose input gradients add up; fch holds the
 * product, so w1's output is computed again, the same bits, into dfch) */
static void mlp_backward(const mygpt_pass *p, int l, const mygpt_block_grads *g, const float *dfc2)
{
    const mygpt_block_acts *a = &p->acts[l];
    const mygpt_layer_plan *lp = &p->layer[l];
    const size_t N = (size_t)p->B * p->T, NHid = N * (size_t)p->hidden;
    mygpt_linear_backward(p, &lp->fc2, g->dfch_gelu, 1, dfc2, p->swiglu ? a->fch : a->fch_gelu, N); // (N, H)
    if (p->swiglu) { // d w1's output over w1's output in dfch, d w3's over dfch_gelu
        linear(p, &lp->fc1, g->dfch, a->ln2, N, 0);
        mygpt_swiglu_backward(g->dfch, g->dfch_gelu, g->dfch_gelu, g->dfch, a->fc3, NHid);
        mygpt_linear_backward(p, &lp->fc1, g->dln, 1, g->dfch, a->ln2, N);
        mygpt_linear_backward(p, &lp->w3, g->dln, 0, g->dfch_gelu, a->ln2, N);
        return;
    }
    mygpt_fill_floats(g->dfch, NULL, NHid);
    gelu_backward(p, g->dfch, a->fch, g->dfch_gelu, NHid);          // dfch (N, 4C)
    mygpt_linear_backward(p, &lp->fc1, g->dln, 1, g->dfch, a->ln2, N);
}

/* The attention's backward from g->datty, d of its output, into g->dln = d LN1(x): dq, dk,
 * dv, then (llama) the rotary positions turned back and grouped heads' dk, dv summed into
 * datty and dmid (free by then), then q's, k's and v's products, whose input gradients add up */
static void qkv_backward(const mygpt_pass *p, int l, const mygpt_block_grads *g)
{
    const mygpt_block_acts *a = &p->acts[l];
    const mygpt_layer_plan *lp = &p->layer[l];
    const int C = p->cfg->embed_dim, NH = p->cfg->num_heads, hs = C / NH, rep = NH / p->kv_heads;
    const size_t N = (size_t)p->B * p->T, NC = N * (size_t)C;
    mygpt_fill_floats(g->dq, NULL, NC);
    mygpt_fill_floats(g->dk, NULL, NC);
    mygpt_fill_floats(g->dv, NULL, NC);
    mygpt_attention_backward_dropout(g->dq, g->dk, g->dv, g->datty, a->att, (mygpt_qkv){a->q, a->k, a->v},
                                     (mygpt_attention_dropout){a->keep_att, p->dropout},
                                     (mygpt_attention_shape){p->B, p->T, C, NH}); // dq, dk, dv (N, C) each
    float *dk = rep > 1 ? g->datty : g->dk, *dv = rep > 1 ? g->dmid : g->dv; // (N, KV)
    if (rep > 1) {
        sum_heads(dk, g->dk, N, p->kv_heads, rep, hs);
        sum_heads(dv, g->dv, N, p->kv_heads, rep, hs);
    }
    if (p->rope) {
        const int halves = p->rope - 1 == MYGPT_ROPE_HALVES, context = p->cfg->max_seq_len;
        mygpt_rope_heads_backward(g->dq, N, p->T, 0, NH, hs, halves, context);
        mygpt_rope_heads_backward(dk, N, p->T, 0, p->kv_heads, hs, halves, context);
    }
    mygpt_linear_backward(p, &lp->q, g->dln, 1, g->dq, a->ln1, N);
    mygpt_linear_backward(p, &lp->k, g->dln, 0, dk, a->ln1, N);
    mygpt_linear_backward(p, &lp->v, g->dln, 0, dv, a->ln1, N);
}

void mygpt_block_backward(const mygpt_pass *p, int l, const mygpt_block_grads *g)
{
    const mygpt_block_acts *a = &p->acts[l];
    const mygpt_layer_plan *lp = &p->layer[l];
    const size_t N = (size_t)p->B * p->T, NC = N * (size_t)p->cfg->embed_dim;

    // out = mid + fc2(GELU(fc1(LN2(mid)))): dx holds d out; dmid = d out + the MLP's
    mygpt_fill_floats(g->dmid, g->dx, NC);                          // dmid (N, C) = d out
    const float *dfc2 = g->dx; // d fc2's output: through its dropout (dln is free until fc1's)
    if (a->keep_mlp) {
        mygpt_dropout_apply(g->dln, g->dx, a->keep_mlp, NC, p->dropout);
        dfc2 = g->dln;
    }
    mlp_backward(p, l, g, dfc2);                                    // dln = d LN2(mid) (N, C)
    mygpt_norm_backward(p, g->dmid, lp->dln2w, lp->dln2b, g->dln,
                        (mygpt_layernorm_saved){a->mid, lp->ln2w, a->ln2_mean, a->ln2_denom}, N); // dmid +=
    // mid = x + W_o(attention(LN1(x))): dx = d mid + the attention's
    mygpt_fill_floats(g->dx, g->dmid, NC);                          // dx (N, C) = d mid
    const float *dwo = g->dmid; // d W_o's output: through its dropout
    if (a->keep_attn) {
        mygpt_dropout_apply(g->dln, g->dmid, a->keep_attn, NC, p->dropout);
        dwo = g->dln;
    }
    mygpt_linear_backward(p, &lp->o, g->datty, 1, dwo, a->atty, N); // datty (N, C)
    qkv_backward(p, l, g);                                          // dln = d LN1(x) (N, C)
    mygpt_norm_backward(p, g->dx, lp->dln1w, lp->dln1b, g->dln,
                        (mygpt_layernorm_saved){a->x, lp->ln1w, a->ln1_mean, a->ln1_denom}, N); // dx +=
}

/* ---- the pass -------------------------------------------------------------------------------- */

void mygpt_pass_forward(const mygpt_pass *p, const int64_t *ids)
{
    const mygpt_config *cfg = p->cfg;
    const mygpt_ends_acts *e = &p->ends;
    const size_t NC = (size_t)p->B * p->T * cfg->embed_dim;
    // x = E[ids] + P[t0 .. t0 + T - 1], then its dropout in train mode          (B, T, C)
    // (the ids and positions were checked: mygpt_pass_check_input)
    // (rotary positions: no position rows)
    const mygpt_embedding_tables tables = {.wte = p->wte, .V = cfg->vocab_size,
                                           .wpe = p->wpe ? p->wpe + (size_t)p->t0 * cfg->embed_dim : NULL,
                                           .max_pos = cfg->max_seq_len - p->t0};
    const mygpt_status st = mygpt_embedding_forward(e->x, ids, tables, p->B, p->T, cfg->embed_dim, NULL);
    assert(st == MYGPT_OK);
    (void)st;
    if (e->keep_embed)
        mygpt_dropout_apply(e->x, e->x, e->keep_embed, NC, p->dropout);
    for (int l = 0; l < cfg->num_layers; l++)
        mygpt_block_forward(p, l);
    // logits = LN_f(x) H^T (+ b), H the untied head or the token embedding E, b a
    // classification head's bias                                   (rows, V or num_classes)
    layernorm(p, e->ln, e->mean, e->denom, e->x_final, p->lnfw, p->lnfb, e->rows);
    linear(p, &p->head, e->logits, e->ln, e->rows, 0);
}
