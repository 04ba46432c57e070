/*
 * train.c - the GPT's training forward pass (keeping activations) and its backward
 * pass, top to bottom; the block's backward is beside its forward (model/block.c), and
 * each layer's beside its own (kernels/layers.c, matmul.c, attention.c, learn/loss.c).
 */
#include <omp.h>
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "mygpt/layers.h"
#include "mygpt/train.h"
#include "model/block.h"
#include "base/base.h"
#include "model/params.h"
#include "kernels/matmul.h"
#include "base/parallel.h"

/* Frees what the activations hold (not the struct). */
static void train_acts_release(mygpt_train_acts *a)
{
    free(a->memory);
    free(a->workspace);
    free(a->ids);
    free(a->targets);
    free(a->keep);
    memset(a, 0, sizeof *a);
}

/* The sizes the activations are carved for: `rows` rows of T, and the model's (H the
 * feed-forward's hidden size, H3 SwiGLU's third Linear's: H or none) */
typedef struct acts_shape {
    size_t rows, T, L, C, NH, V, H, H3;
} acts_shape;

static acts_shape shape_of(const mygpt_config *cfg, size_t rows, int T)
{
    const size_t H = (size_t)mygpt_ffn_hidden(cfg);
    return (acts_shape){rows, (size_t)T, (size_t)cfg->num_layers, (size_t)cfg->embed_dim, (size_t)cfg->num_heads,
                        (size_t)mygpt_head_size(cfg), H, mygpt_arch_get(cfg).swiglu ? H : 0};
}

/* The activations the backward needs and its scratch, for z's rows and layers: one list
 * that sizes them (base NULL), carves them (l = 0) and gives layer l's slice of each (a
 * buffer of one layer is the same for every l). Returns floats. */
static size_t carve_train_acts(mygpt_train_acts *a, float *base, size_t l, const acts_shape *z)
{
    const size_t rows = z->rows, T = z->T, L = z->L, C = z->C, NH = z->NH, V = z->V, H = z->H;
    size_t n = 0;
#define TAKE(field, layers, count)                                                                 \
    (a->field = base ? base + n + ((layers) > 1 ? l * (count) : 0) : NULL, n += (layers) * (count))
    TAKE(resid, L + 1, rows * C); // (L + 1, B, T, C) the residual stream entering each layer, and the last
    TAKE(ln1, L, rows * C);
    TAKE(ln1_mean, L, rows);
    TAKE(ln1_denom, L, rows);
    TAKE(q, L, rows * C);
    TAKE(k, L, rows * C);
    TAKE(v, L, rows * C);
    TAKE(att, L, rows * NH * T);  // (L, B, NH, T, T): each query's probabilities
    TAKE(atty, L, rows * C);
    TAKE(resid_mid, L, rows * C);
    TAKE(ln2, L, rows * C);
    TAKE(ln2_mean, L, rows);
    TAKE(ln2_denom, L, rows);
    TAKE(fch, L, rows * H);
    TAKE(fch_gelu, L, rows * H);
    TAKE(fc3, L, rows * z->H3);
    TAKE(lnf, 1, rows * C);
    TAKE(lnf_mean, 1, rows);
    TAKE(lnf_denom, 1, rows);
    TAKE(logits, 1, rows * V);
    TAKE(logp, 1, rows * V);
    // the backward's scratch, one layer at a time
    TAKE(dresid, 1, rows * C);
    TAKE(dresid2, 1, rows * C);
    TAKE(dln, 1, rows * C);
    TAKE(datty, 1, rows * C);
    TAKE(dq, 1, rows * C);
    TAKE(dk, 1, rows * C);
    TAKE(dv, 1, rows * C);
    TAKE(dfch, 1, rows * H);
    TAKE(dfch_gelu, 1, rows * H);
#undef TAKE
    return n;
}

/* Makes room for (B, T) in a, keeping the old memory when it fits, and carves it for (B, T). */
static mygpt_status ensure_train_acts(mygpt_train_acts *a, const mygpt_config *cfg, int B, int T, mygpt_error *err)
{
    const size_t BT = (size_t)B * T;
    const acts_shape z = shape_of(cfg, BT, T), one = shape_of(cfg, 1, T);
    if (a->memory && BT <= a->capacity_bt && BT * (size_t)T <= a->capacity_btt) { // fits: carved for (B, T)
        a->B = B;
        a->T = T;
        const size_t used = carve_train_acts(a, a->memory, 0, &z);
        assert(used <= a->memory_len); // every term grows with B * T or B * T * T, which fit
        (void)used;
        return MYGPT_OK;
    }
    mygpt_train_acts sizing;
    size_t total;
    if (mygpt_mul_overflows(BT, carve_train_acts(&sizing, NULL, 0, &one), &total) ||
        total > SIZE_MAX / sizeof(float))
        return mygpt_fail(err, MYGPT_EOVERFLOW, "training activations for B=%d, T=%d overflow", B, T);
    float *mem = mygpt_float_block(total);
    int64_t *ids = malloc(BT * sizeof *ids), *targets = malloc(BT * sizeof *targets);
    if (!mem || !ids || !targets) {
        free(mem);
        free(ids);
        free(targets);
        return mygpt_fail(err, MYGPT_ENOMEM, "out of memory for training activations (%zu floats)", total);
    }
    train_acts_release(a);
    a->memory = mem;
    a->memory_len = total;
    a->ids = ids;
    a->targets = targets;
    a->capacity_bt = BT;
    a->capacity_btt = BT * T;
    a->B = B;
    a->T = T;
    carve_train_acts(a, mem, 0, &z);
    return MYGPT_OK;
}

mygpt_status mygpt_trainer_create(mygpt_trainer **out, mygpt_gpt *model, mygpt_error *err)
{
    *out = NULL;
    if (model->weights != MYGPT_WEIGHTS_FP32)
        return mygpt_fail(err, MYGPT_EINVAL, "a model with %s weights is for inference: training stays float32 "
                          "(mygpt_gpt_quantize to MYGPT_WEIGHTS_FP32 trains its dequantized values)",
                          mygpt_weights_name(model->weights));
    if (model->packed)
        return mygpt_fail(err, MYGPT_EINVAL, "%s",
                          "a packed model cannot be trained: its packing would go stale (mygpt_gpt_unpack first)");
    mygpt_trainer *tr = calloc(1, sizeof *tr);
    if (!tr || !(tr->grads_memory = mygpt_float_block(model->num_parameters))) {
        free(tr);
        return mygpt_fail(err, MYGPT_ENOMEM, "out of memory for %zu gradients", model->num_parameters);
    }
    tr->model = model;
    mygpt_params_carve(&tr->grads, tr->grads_memory, model->param_sizes);
    mygpt_fill_floats(tr->grads_memory, NULL, model->num_parameters);
    tr->grads_are_zero = 1;
    model->trainers++;
    *out = tr;
    return MYGPT_OK;
}

void mygpt_trainer_free(mygpt_trainer *tr)
{
    if (!tr)
        return;
    tr->model->trainers--;
    free(tr->grads_memory);
    free(tr->grads_scratch);
    free(tr->trainable);
    train_acts_release(&tr->acts);
    free(tr);
}

mygpt_status mygpt_trainer_zero_grad(mygpt_trainer *tr, mygpt_error *err)
{
    (void)err;
    mygpt_fill_floats(tr->grads_memory, NULL, tr->model->num_parameters);
    tr->grads_are_zero = 1;
    return MYGPT_OK;
}

/* The attention's per-thread scratch for this call's team (the fast kernel's). */
/* The pass over (B, T) of a training step, planned (its gradients in m->d, or none for
 * the forward) in a's workspace, its blocks reading and writing their slices of the kept
 * activations. */
static mygpt_status training_pass(mygpt_pass *p, const mygpt_gpt *g, mygpt_train_acts *a, const mygpt_pass_model *m,
                                  mygpt_error *err);

/* The keeps' layout, in the order they are drawn: the embedding's (B, T, C), then per
 * layer the attention's (B, NH, T, T), W_o's and fc2's (B, T, C). The one place that sizes
 * and carves them: layer l's start (l = L: the total) and its three offsets. */
typedef struct keep_layout {
    size_t start, att, attn, mlp;
} keep_layout;

static keep_layout keeps_of(const mygpt_config *cfg, const mygpt_train_acts *a, int l)
{
    const size_t N = (size_t)a->B * a->T, NC = N * (size_t)cfg->embed_dim;
    const size_t NTT = (size_t)cfg->num_heads * N * a->T;
    const size_t start = NC + (size_t)l * (NTT + 2 * NC);
    return (keep_layout){start, start, start + NTT, start + NTT + NC};
}

/* Train mode: every dropout's keeps for (B, T), drawn in the forward's order, or none. */
static mygpt_status draw_keeps(mygpt_trainer *tr, mygpt_error *err)
{
    mygpt_train_acts *a = &tr->acts;
    const mygpt_config *cfg = &tr->model->config;
    a->dropped = 0;
    if (!tr->dropout_rng || cfg->dropout == 0.0)
        return MYGPT_OK;
    const size_t n = keeps_of(cfg, a, cfg->num_layers).start;
    if (n > a->keep_len) {
        free(a->keep);
        a->keep_len = 0;
        if (!(a->keep = malloc(n)))
            return mygpt_fail(err, MYGPT_ENOMEM, "out of memory for the dropout masks (%zu bytes)", n);
        a->keep_len = n;
    }
    mygpt_status st = mygpt_dropout_mask(tr->dropout_rng, a->keep, n, cfg->dropout, err);
    a->dropped = st == MYGPT_OK;
    return st;
}

/* Layer l's slices of a's buffers for its (B, T), from carve_train_acts's list (l = L:
 * resid's last, the stream after the last block). */
static mygpt_train_acts layer_slices(const mygpt_gpt *g, const mygpt_train_acts *a, int l)
{
    const mygpt_config *cfg = &g->config;
    mygpt_train_acts s;
    const acts_shape z = shape_of(cfg, (size_t)a->B * a->T, a->T);
    carve_train_acts(&s, a->memory, (size_t)l, &z);
    return s;
}

/* What block l reads and writes: its slices of the kept activations. */
static mygpt_block_acts kept_block(const mygpt_gpt *g, const mygpt_train_acts *a, int l)
{
    const mygpt_train_acts s = layer_slices(g, a, l), next = layer_slices(g, a, l + 1);
    const keep_layout k = keeps_of(&g->config, a, l);
    return (mygpt_block_acts){
        .keep_att = a->dropped ? a->keep + k.att : NULL, .keep_attn = a->dropped ? a->keep + k.attn : NULL,
        .keep_mlp = a->dropped ? a->keep + k.mlp : NULL,
        .x = s.resid, .ln1 = s.ln1, .ln1_mean = s.ln1_mean, .ln1_denom = s.ln1_denom, .q = s.q, .k = s.k, .v = s.v,
        .att = s.att, .atty = s.atty, .mid = s.resid_mid, .ln2 = s.ln2, .ln2_mean = s.ln2_mean,
        .ln2_denom = s.ln2_denom, .fch = s.fch, .fc3 = s.fc3, .fch_gelu = s.fch_gelu,
        .proj = a->dresid /* free until the backward */, .out = next.resid};
}

static mygpt_status training_pass(mygpt_pass *p, const mygpt_gpt *g, mygpt_train_acts *a, const mygpt_pass_model *m,
                                  mygpt_error *err)
{
    /* no packing: mygpt_trainer_create refuses a packed model and mygpt_gpt_pack a trained one */
    const mygpt_config *cfg = &g->config;
    p->cfg = cfg, p->impl = g->impl, p->B = a->B, p->T = a->T;
    p->dropout = a->dropped ? cfg->dropout : 0.0;
    MYGPT_TRY(mygpt_pass_plan(p, m, &a->workspace, &a->ws_len, err));
    for (int l = 0; l < cfg->num_layers; l++)
        p->acts[l] = kept_block(g, a, l);
    // x = dropout(E[ids] + P[0..T-1]) into the first layer's input; the head reads the last's
    p->ends = (mygpt_ends_acts){.x = a->resid, .keep_embed = a->dropped ? a->keep : NULL,
                                .x_final = layer_slices(g, a, cfg->num_layers).resid, .rows = (size_t)a->B * a->T,
                                .ln = a->lnf, .mean = a->lnf_mean, .denom = a->lnf_denom, .logits = a->logits};
    return MYGPT_OK;
}

mygpt_status mygpt_trainer_forward(mygpt_trainer *tr, const int64_t *ids, const int64_t *targets, int B,
                                   int T, float *loss, mygpt_error *err)
{
    const mygpt_gpt *g = tr->model;
    const mygpt_config *cfg = &g->config;
    MYGPT_TRY(mygpt_pass_check_input(cfg, ids, B, T, 0, err));
    mygpt_train_acts *a = &tr->acts;
    MYGPT_TRY(ensure_train_acts(a, cfg, B, T, err));
    a->has_forward = 0;
    a->last_only = 0;
    const size_t N = (size_t)B * T;
    memcpy(a->ids, ids, N * sizeof *ids);
    if (targets)
        memcpy(a->targets, targets, N * sizeof *targets);
    MYGPT_TRY(draw_keeps(tr, err));
    mygpt_pass p = {0};
    MYGPT_TRY(training_pass(&p, g, a,
                            &(mygpt_pass_model){.w = &g->params, .sizes = g->param_sizes, .arch = g->arch}, err));
    // logits = LN_f(blocks(dropout(E[ids] + P[0..T-1]))) H^T, then the loss   (B, T, V)
    mygpt_pass_forward(&p, ids);
    if (!targets) // model(ids) in train mode: the logits only
        return MYGPT_OK;
    MYGPT_TRY(mygpt_cross_entropy_forward(loss, a->logp, a->logits, targets, N, mygpt_head_size(cfg), err));
    a->has_forward = 1;
    return MYGPT_OK;
}

/* The classification loss's d loss / d logits (B, T, V): zero but at each row's last
 * position, where it is the cross-entropy's over the B last logits (their log_softmax in
 * logp[0 .. B * V), the labels in targets[0 .. B)), as the backward of model(x)[:, -1, :]
 * scatters it. With T > 1 the B rows are computed in logp's next B * V floats first. */
static void last_position_backward(mygpt_train_acts *a, int V)
{
    const size_t B = (size_t)a->B, T = (size_t)a->T, rowV = (size_t)V;
    if (T == 1) { // the last positions are the rows
        mygpt_cross_entropy_backward(a->logits, a->logp, a->targets, B, V);
        return;
    }
    float *last = a->logp + B * rowV; // (B, V), inside logp's (B, T, V)
    mygpt_cross_entropy_backward(last, a->logp, a->targets, B, V);
    mygpt_fill_floats(a->logits, NULL, B * T * rowV);
    for (size_t b = 0; b < B; b++)
        memcpy(a->logits + ((b + 1) * T - 1) * rowV, last + b * rowV, rowV * sizeof *last);
}

/* The lowest layer the backward must go through: the lowest holding a trainable tensor,
 * -1 when an embedding trains (then the lookup's backward too), L when no block does. */
static int lowest_trainable_layer(const mygpt_trainer *tr)
{
    const mygpt_config *cfg = &tr->model->config;
    if (!tr->trainable)
        return -1;
    int lowest = cfg->num_layers;
    const int n = mygpt_state_dict_len(cfg);
    for (int j = 0; j < n; j++) {
        if (!tr->trainable[j])
            continue;
        mygpt_state_entry e;
        mygpt_state_dict_entry(cfg, NULL, j, &e);
        if (e.tensor == MYGPT_PARAM_wte || e.tensor == MYGPT_PARAM_wpe)
            return -1;
        if (e.layer >= 0 && e.layer < lowest)
            lowest = e.layer;
    }
    return lowest;
}

/* frozen[i] = 1 for each table row no layer of which trains: the backward computes no
 * gradient for it (as autograd, for a weight with requires_grad=False). */
static void frozen_rows(const mygpt_trainer *tr, uint8_t *frozen)
{
    const mygpt_config *cfg = &tr->model->config;
    memset(frozen, 1, MYGPT_NUM_PARAM_TENSORS);
    const int n = mygpt_state_dict_len(cfg);
    for (int j = 0; j < n; j++)
        if (!tr->trainable || tr->trainable[j]) {
            mygpt_state_entry e;
            mygpt_state_dict_entry(cfg, NULL, j, &e);
            frozen[e.tensor] = 0;
        }
}

/* Zeroes d's frozen entries: requires_grad=False leaves .grad None, here zero. */
static void zero_frozen(const mygpt_trainer *tr, const mygpt_params *d)
{
    const mygpt_config *cfg = &tr->model->config;
    const int n = tr->trainable ? mygpt_state_dict_len(cfg) : 0;
    for (int j = 0; j < n; j++)
        if (!tr->trainable[j]) {
            mygpt_state_entry e;
            mygpt_state_dict_entry(cfg, d, j, &e);
            mygpt_fill_floats(e.data, NULL, e.numel);
        }
}

mygpt_status mygpt_trainer_backward(mygpt_trainer *tr, mygpt_error *err)
{
    const mygpt_gpt *g = tr->model;
    mygpt_train_acts *a = &tr->acts;
    if (!a->has_forward)
        return mygpt_fail(err, MYGPT_EINVAL, "%s", "backward needs a mygpt_trainer_forward first");
    /* As autograd: this backward's gradients are computed whole, then added to .grad.
     * After zero_grad they go straight into the (zero) gradient block; otherwise into a
     * scratch block of the same layout, added afterwards. */
    mygpt_params scratch_views;
    const mygpt_params *d = &tr->grads;
    if (!tr->grads_are_zero) {
        if (!tr->grads_scratch && !(tr->grads_scratch = mygpt_float_block(g->num_parameters)))
            return mygpt_fail(err, MYGPT_ENOMEM, "out of memory for %zu gradients", g->num_parameters);
        mygpt_fill_floats(tr->grads_scratch, NULL, g->num_parameters);
        mygpt_params_carve(&scratch_views, tr->grads_scratch, g->param_sizes);
        d = &scratch_views;
    }
    const mygpt_config *cfg = &g->config;
    const int C = cfg->embed_dim, V = mygpt_head_size(cfg);
    const size_t N = (size_t)a->B * a->T, NC = N * C;
    uint8_t frozen[MYGPT_NUM_PARAM_TENSORS];
    frozen_rows(tr, frozen);
    mygpt_status fault = MYGPT_OK; // a LoRA backward's
    mygpt_pass p = {.fault = &fault, .err = err};
    MYGPT_TRY(training_pass(&p, g, a,
                            &(mygpt_pass_model){.w = &g->params, .sizes = g->param_sizes, .arch = g->arch, .d = d,
                                                .frozen = frozen},
                            err));
    const mygpt_block_grads grads = {.dx = a->dresid, .dmid = a->dresid2, .dln = a->dln, .datty = a->datty,
                                     .dq = a->dq, .dk = a->dk, .dv = a->dv, .dfch = a->dfch,
                                     .dfch_gelu = a->dfch_gelu};

    // d loss / d logits, written over the logits                        (B, T, V)
    if (a->last_only)
        last_position_backward(a, V);
    else
        mygpt_cross_entropy_backward(a->logits, a->logp, a->targets, N, V);
    // the head: logits = lnf H^T (+ b) gives dlnf = dlogits H, dH = dlogits^T lnf and db the
    // column sums of dlogits (H tied: E), and its adapter's share with LoRA
    mygpt_linear_backward(&p, &p.head, a->dln, 1, a->logits, a->lnf, N);
    mygpt_fill_floats(a->dresid, NULL, NC);
    mygpt_norm_backward(&p, a->dresid, p.dlnfw, p.dlnfb, a->dln,
                        (mygpt_layernorm_saved){p.ends.x_final, p.lnfw, a->lnf_mean, a->lnf_denom}, N);
    // down to the lowest layer that trains (autograd stops where nothing needs a gradient)
    const int lowest = lowest_trainable_layer(tr);
    // dresid: d of layer l's output, then of its input
    for (int l = cfg->num_layers - 1; l >= (lowest > 0 ? lowest : 0) && !fault; l--)
        mygpt_block_backward(&p, l, &grads);
    MYGPT_TRY(fault);
    // x = dropout(E[ids] + P[0..T-1]): the lookup's gradient joins a tied head's in dE
    if (lowest < 0) {
        if (a->dropped)
            mygpt_dropout_apply(a->dresid, a->dresid, a->keep, NC, cfg->dropout);
        float *dwpe = g->param_sizes[MYGPT_PARAM_wpe] ? d->wpe : NULL; // (rotary positions: no table)
        mygpt_embedding_backward(d->wte, dwpe, a->dresid, a->ids, a->B, a->T, C);
    }
    zero_frozen(tr, d); // what a computed layer wrote for its frozen tensors
    if (!tr->grads_are_zero) {
        float *dst = tr->grads_memory;
        const float *src = tr->grads_scratch;
        const size_t n = g->num_parameters;
#pragma omp parallel for schedule(static) if (n > MYGPT_STREAM_MIN)
        for (size_t i = 0; i < n; i++)
            dst[i] += src[i];
    }
    tr->grads_are_zero = 0;
    a->has_forward = 0; // as autograd frees the graph: one backward per forward
    return MYGPT_OK;
}

mygpt_status mygpt_gpt_loss(mygpt_gpt *g, const int64_t *ids, const int64_t *targets, int B,
                            int T, float *loss, mygpt_error *err)
{
    MYGPT_TRY(mygpt_gpt_forward(g, ids, B, T, err));
    const size_t n = (size_t)B * T * mygpt_head_size(&g->config);
    if (n > g->acts.logp_cap) { // kept between calls: an evaluation loop reuses it
        float *logp = mygpt_float_block(n);
        if (!logp)
            return mygpt_fail(err, MYGPT_ENOMEM, "out of memory for the log-probabilities (%zu floats)", n);
        free(g->acts.logp);
        g->acts.logp = logp;
        g->acts.logp_cap = n;
    }
    return mygpt_cross_entropy_forward(loss, g->acts.logp, g->acts.logits, targets, (size_t)B * T,
                                       mygpt_head_size(&g->config), err);
}
