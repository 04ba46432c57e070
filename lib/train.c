/*
 * train.c - the GPT's training forward pass (keeping activations) and its backward
 * pass, top to bottom; the layers' backward functions are beside their forwards
 * (layers.c, matmul.c, loss.c).
 */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "mygpt/layers.h"
#include "mygpt/train.h"
#include "internal.h"
#include "parallel.h"

void mygpt_train_acts_free(mygpt_train_acts *a)
{
    if (!a)
        return;
    free(a->memory);
    free(a->workspace);
    free(a->att_scratch);
    free(a->ids);
    free(a->targets);
    free(a);
}

/* Makes room for (B, T) in g->train, keeping the old buffers when they fit. */
static mygpt_status ensure_train_acts(mygpt_gpt *g, int B, int T, mygpt_error *err)
{
    const size_t C = (size_t)g->config.embed_dim, V = (size_t)g->config.vocab_size;
    const size_t L = (size_t)g->config.num_layers, NH = (size_t)g->config.num_heads;
    const size_t BT = (size_t)B * T, Ts = (size_t)T;
    if (!g->train && !(g->train = calloc(1, sizeof *g->train)))
        return mygpt_fail(err, MYGPT_ENOMEM, "%s", "out of memory for training activations");
    mygpt_train_acts *a = g->train;
    // floats per row of B*T (att's T*NH per row is the (NH, T) slice of each query)
    const size_t per_row = (L + 1) * C                /* resid */
                           + L * (3 * C + 2)          /* ln1, mean, denom; q k v below */
                           + L * 3 * C + L * NH * Ts  /* q, k, v; att */
                           + L * 2 * C                /* atty, resid_mid */
                           + L * (C + 2)              /* ln2, mean, denom */
                           + L * 8 * C                /* fch, fch_gelu */
                           + C + 2 + 2 * V            /* lnf, mean, denom; logits, logp */
                           + 7 * C + 8 * C;           /* gradient scratch */
    if (a->memory && BT <= a->capacity_bt && BT * Ts <= a->capacity_btt) {
        a->B = B;
        a->T = T;
        return MYGPT_OK;
    }
    size_t total;
    if (mygpt_mul_overflows(BT, per_row, &total) || total > SIZE_MAX / sizeof(float))
        return mygpt_fail(err, MYGPT_EOVERFLOW, "training activations for B=%d, T=%d overflow", B, T);
    float *mem = malloc(total * sizeof(float));
    int64_t *ids = malloc(BT * sizeof *ids), *targets = malloc(BT * sizeof *targets);
    if (!mem || !ids || !targets) {
        free(mem);
        free(ids);
        free(targets);
        return mygpt_fail(err, MYGPT_ENOMEM, "out of memory for training activations (%zu floats)", total);
    }
    free(a->memory);
    free(a->workspace);
    free(a->att_scratch);
    free(a->ids);
    free(a->targets);
    memset(a, 0, sizeof *a);
    a->memory = mem;
    a->memory_len = total;
    a->ids = ids;
    a->targets = targets;
    a->capacity_bt = BT;
    a->capacity_btt = BT * Ts;
    a->B = B;
    a->T = T;
    float *p = mem;
#define TAKE(field, n) (a->field = p, p += (n))
    TAKE(resid, (L + 1) * BT * C);
    TAKE(ln1, L * BT * C);
    TAKE(ln1_mean, L * BT);
    TAKE(ln1_denom, L * BT);
    TAKE(q, L * BT * C);
    TAKE(k, L * BT * C);
    TAKE(v, L * BT * C);
    TAKE(att, L * BT * NH * Ts);
    TAKE(atty, L * BT * C);
    TAKE(resid_mid, L * BT * C);
    TAKE(ln2, L * BT * C);
    TAKE(ln2_mean, L * BT);
    TAKE(ln2_denom, L * BT);
    TAKE(fch, L * BT * 4 * C);
    TAKE(fch_gelu, L * BT * 4 * C);
    TAKE(lnf, BT * C);
    TAKE(lnf_mean, BT);
    TAKE(lnf_denom, BT);
    TAKE(logits, BT * V);
    TAKE(logp, BT * V);
    TAKE(dresid, BT * C);
    TAKE(dresid2, BT * C);
    TAKE(dln, BT * C);
    TAKE(datty, BT * C);
    TAKE(dq, BT * C);
    TAKE(dk, BT * C);
    TAKE(dv, BT * C);
    TAKE(dfch, BT * 4 * C);
    TAKE(dfch_gelu, BT * 4 * C);
#undef TAKE
    // the matmul backward's partial sums: only the attention's k and v add their dln
    // to q's (every other gradient is written into zeros: see linear_backward)
    a->ws_len = mygpt_matmul_backward_workspace(BT, (int)C, (int)C, 0, 1);
    if (a->ws_len && !(a->workspace = malloc(a->ws_len * sizeof(float)))) {
        a->ws_len = 0; // the kernel then allocates its own
    }
    return MYGPT_OK;
}

/* dst = src (or 0 when src is NULL), n floats, each thread filling its static run (as
 * the loops around it share rows): a fill is bound by one core's write bandwidth, so
 * the gradients' 475 MB at GPT-2 size go faster shared out. */
static void fill_floats(float *dst, const float *src, size_t n)
{
    if (n <= 65536) {
        if (src)
            memcpy(dst, src, n * sizeof *dst);
        else
            memset(dst, 0, n * sizeof *dst);
        return;
    }
#pragma omp parallel
    {
        const int me = omp_get_thread_num(), nt = omp_get_num_threads();
        const size_t i0 = mygpt_run_start(n, me, nt), i1 = mygpt_run_start(n, me + 1, nt);
        if (src)
            memcpy(dst + i0, src + i0, (i1 - i0) * sizeof *dst);
        else
            memset(dst + i0, 0, (i1 - i0) * sizeof *dst);
    }
}

mygpt_status mygpt_gpt_zero_grad(mygpt_gpt *g, mygpt_error *err)
{
    mygpt_gpt_unpack(g); /* a training step is about to change the weights */
    if (!g->grads_memory) {
        if (!(g->grads_memory = malloc(g->num_parameters * sizeof(float))))
            return mygpt_fail(err, MYGPT_ENOMEM, "out of memory for %zu gradients", g->num_parameters);
        mygpt_params_carve(&g->grads, g->grads_memory, g->param_sizes, (size_t)g->config.embed_dim);
    }
    fill_floats(g->grads_memory, NULL, g->num_parameters);
    g->grads_are_zero = 1;
    return MYGPT_OK;
}

/* nn.Linear through the model's kernel choice (naive for tests, else fast) */
static mygpt_status linear(const mygpt_gpt *g, float *out, const float *inp, const float *w,
                           const float *b, size_t N, int C, int OC, mygpt_error *err)
{
    if (g->use_naive_kernels) {
        mygpt_matmul_naive(out, inp, w, b, N, C, OC);
        return MYGPT_OK;
    }
    return mygpt_matmul(out, inp, w, b, N, C, OC, err);
}

/* nn.Linear's backward: db += its gradient; dinp += its gradient, or, with set_dinp,
 * dinp = it (the same bits as adding it to zeros, without the zeros); dw = its gradient:
 * every weight's gradient block is zero before a backward (zero_grad, or the scratch
 * block of an accumulating backward) and gets one matmul's gradient in it. */
static mygpt_status linear_backward(const mygpt_gpt *g, float *dinp, int set_dinp, float *dw,
                                    float *db, const float *dout, const float *inp, const float *w,
                                    size_t N, int C, int OC, mygpt_error *err)
{
    if (g->use_naive_kernels) {
        if (set_dinp)
            memset(dinp, 0, N * (size_t)C * sizeof *dinp);
        memset(dw, 0, (size_t)OC * C * sizeof *dw);
        mygpt_matmul_backward_naive(dinp, dw, db, dout, inp, w, N, C, OC);
        return MYGPT_OK;
    }
    // the kept workspace when it is large enough (it is sized for the head), else the
    // kernel's own allocations
    float *ws = g->train->ws_len >= mygpt_matmul_backward_workspace(N, C, OC, set_dinp, 1) ? g->train->workspace
                                                                                           : NULL;
    return mygpt_matmul_backward_ws(dinp, set_dinp, dw, 1, db, dout, inp, w, N, C, OC, ws, err);
}

/* The attention, keeping its probabilities for the backward: the fast kernel (same
 * bits as the plain loops) with scratch for this call's team, or the plain loops. */
static mygpt_status attention(mygpt_gpt *g, float *out, float *att, const float *q, const float *k,
                              const float *v, int B, int T, int C, int NH, mygpt_error *err)
{
    if (g->use_naive_kernels)
        return mygpt_attention_forward_train(out, att, q, k, v, B, T, C, NH, err);
    mygpt_train_acts *a = g->train;
    const size_t len = mygpt_attention_scratch_size(T, C / NH, omp_get_max_threads());
    if (a->att_scratch_len < len) {
        free(a->att_scratch);
        a->att_scratch_len = 0;
        if (!(a->att_scratch = malloc(len * sizeof(float))))
            return mygpt_fail(err, MYGPT_ENOMEM, "out of memory for attention scratch (%zu floats)", len);
        a->att_scratch_len = len;
    }
    return mygpt_attention_forward_probs(out, att, q, k, v, a->att_scratch, a->att_scratch_len, B, T,
                                         C, NH, err);
}

/* out = a + b, n values */
static void add(float *out, const float *a, const float *b, size_t n)
{
#pragma omp parallel for schedule(static) if (n > 65536)
    for (size_t i = 0; i < n; i++)
        out[i] = a[i] + b[i];
}

#define CHECK(call)                                                                                \
    do {                                                                                       \
        if ((st = (call)) != MYGPT_OK)                                                         \
            return st;                                                                         \
    } while (0)

mygpt_status mygpt_gpt_forward_train(mygpt_gpt *g, const int64_t *ids, const int64_t *targets,
                                     int B, int T, float *loss, mygpt_error *err)
{
    const mygpt_config *cfg = &g->config;
    mygpt_status st;
    mygpt_gpt_unpack(g); /* a training step is about to change the weights */
    if (B < 1 || T < 1)
        return mygpt_fail(err, MYGPT_EINVAL, "batch and sequence sizes must be at least 1, got B=%d T=%d", B, T);
    if (T > cfg->max_seq_len)
        return mygpt_fail(err, MYGPT_ERANGE, "input length T=%d exceeds max_seq_len=%d", T, cfg->max_seq_len);
    CHECK(ensure_train_acts(g, B, T, err));
    mygpt_train_acts *a = g->train;
    a->has_forward = 0;
    const int C = cfg->embed_dim, NH = cfg->num_heads, V = cfg->vocab_size;
    const size_t N = (size_t)B * T, NC = N * C, NC4 = 4 * NC;
    const mygpt_params *w = &g->params;
    memcpy(a->ids, ids, N * sizeof *ids);
    memcpy(a->targets, targets, N * sizeof *targets);

    // x = E[ids] + P[0..T-1]                                            (B, T, C)
    CHECK(mygpt_embedding_forward(a->resid, ids, w->wte, w->wpe, B, T, C, V, cfg->max_seq_len, err));
    for (int l = 0; l < cfg->num_layers; l++) {
        const size_t lc = (size_t)l * C, lcc = (size_t)l * C * C;
        const float *x = a->resid + l * NC;                // (B, T, C) layer input
        float *ln1 = a->ln1 + l * NC, *q = a->q + l * NC, *k = a->k + l * NC, *v = a->v + l * NC;
        float *atty = a->atty + l * NC, *mid = a->resid_mid + l * NC, *ln2 = a->ln2 + l * NC;
        float *fch = a->fch + l * NC4, *fchg = a->fch_gelu + l * NC4;
        // mid = x + W_o(attention(LN1(x)))
        mygpt_layernorm_forward_train(ln1, a->ln1_mean + l * N, a->ln1_denom + l * N, x,
                                      w->ln1w + lc, w->ln1b + lc, N, C);
        CHECK(linear(g, q, ln1, w->wq + lcc, NULL, N, C, C, err));
        CHECK(linear(g, k, ln1, w->wk + lcc, NULL, N, C, C, err));
        CHECK(linear(g, v, ln1, w->wv + lcc, NULL, N, C, C, err));
        CHECK(attention(g, atty, a->att + (size_t)l * B * NH * T * T, q, k, v, B, T, C, NH, err));
        CHECK(linear(g, a->dresid, atty, w->wo + lcc, NULL, N, C, C, err)); // dresid: scratch
        add(mid, x, a->dresid, NC);
        // x' = mid + fc2(GELU(fc1(LN2(mid))))
        mygpt_layernorm_forward_train(ln2, a->ln2_mean + l * N, a->ln2_denom + l * N, mid,
                                      w->ln2w + lc, w->ln2b + lc, N, C);
        CHECK(linear(g, fch, ln2, w->fc1w + 4 * lcc, w->fc1b + 4 * lc, N, C, 4 * C, err));
        mygpt_gelu_forward(fchg, fch, NC4);
        CHECK(linear(g, a->dresid, fchg, w->fc2w + 4 * lcc, w->fc2b + lc, N, 4 * C, C, err));
        add(a->resid + (l + 1) * NC, mid, a->dresid, NC);
    }
    // logits = LN_f(x) E^T, then the loss                              (B, T, V)
    const float *xf = a->resid + (size_t)cfg->num_layers * NC;
    mygpt_layernorm_forward_train(a->lnf, a->lnf_mean, a->lnf_denom, xf, w->lnfw, w->lnfb, N, C);
    CHECK(linear(g, a->logits, a->lnf, w->wte, NULL, N, C, V, err));
    CHECK(mygpt_cross_entropy_forward(loss, a->logp, a->logits, targets, N, V, err));
    a->has_forward = 1;
    return MYGPT_OK;
}

mygpt_status mygpt_gpt_backward(mygpt_gpt *g, mygpt_error *err)
{
    mygpt_train_acts *a = g->train;
    mygpt_status st;
    mygpt_gpt_unpack(g); /* a training step is about to change the weights */
    if (!a || !a->has_forward)
        return mygpt_fail(err, MYGPT_EINVAL, "%s", "backward needs a forward_train first");
    if (!g->grads_memory)
        CHECK(mygpt_gpt_zero_grad(g, err));
    /* As autograd: this backward's gradients are computed whole, then added to .grad.
     * After zero_grad they go straight into the (zero) gradient block; otherwise into a
     * scratch block of the same layout, added afterwards. */
    mygpt_params scratch_views;
    const mygpt_params *d = &g->grads;
    if (!g->grads_are_zero) {
        if (!g->grads_scratch && !(g->grads_scratch = malloc(g->num_parameters * sizeof(float))))
            return mygpt_fail(err, MYGPT_ENOMEM, "out of memory for %zu gradients", g->num_parameters);
        fill_floats(g->grads_scratch, NULL, g->num_parameters);
        mygpt_params_carve(&scratch_views, g->grads_scratch, g->param_sizes, (size_t)g->config.embed_dim);
        d = &scratch_views;
    }
    const mygpt_config *cfg = &g->config;
    const int B = a->B, T = a->T, C = cfg->embed_dim, NH = cfg->num_heads, V = cfg->vocab_size;
    const size_t N = (size_t)B * T, NC = N * C, NC4 = 4 * NC;
    const mygpt_params *w = &g->params;

    // d loss / d logits, written over the logits                        (B, T, V)
    mygpt_cross_entropy_backward(a->logits, a->logp, a->targets, N, V);
    // the tied head: logits = lnf E^T gives dlnf = dlogits E and dE += dlogits^T lnf
    CHECK(linear_backward(g, a->dln, 1, d->wte, NULL, a->logits, a->lnf, w->wte, N, C, V, err));
    fill_floats(a->dresid, NULL, NC);
    const float *xf = a->resid + (size_t)cfg->num_layers * NC;
    mygpt_layernorm_backward(a->dresid, d->lnfw, d->lnfb, a->dln, xf, w->lnfw, a->lnf_mean,
                             a->lnf_denom, N, C);
    for (int l = cfg->num_layers - 1; l >= 0; l--) {
        const size_t lc = (size_t)l * C, lcc = (size_t)l * C * C;
        const float *x = a->resid + l * NC, *ln1 = a->ln1 + l * NC, *q = a->q + l * NC;
        const float *k = a->k + l * NC, *v = a->v + l * NC, *atty = a->atty + l * NC;
        const float *mid = a->resid_mid + l * NC, *ln2 = a->ln2 + l * NC;
        const float *fch = a->fch + l * NC4, *fchg = a->fch_gelu + l * NC4;
        const float *att = a->att + (size_t)l * B * NH * T * T;
        // x' = mid + fc2(GELU(fc1(LN2(mid)))): dresid is d x'; dmid = dx' + the MLP's
        fill_floats(a->dresid2, a->dresid, NC);
        CHECK(linear_backward(g, a->dfch_gelu, 1, d->fc2w + 4 * lcc, d->fc2b + lc, a->dresid, fchg,
                              w->fc2w + 4 * lcc, N, 4 * C, C, err));
        fill_floats(a->dfch, NULL, NC4);
        mygpt_gelu_backward(a->dfch, fch, a->dfch_gelu, NC4);
        CHECK(linear_backward(g, a->dln, 1, d->fc1w + 4 * lcc, d->fc1b + 4 * lc, a->dfch, ln2,
                              w->fc1w + 4 * lcc, N, C, 4 * C, err));
        mygpt_layernorm_backward(a->dresid2, d->ln2w + lc, d->ln2b + lc, a->dln, mid, w->ln2w + lc,
                                 a->ln2_mean + l * N, a->ln2_denom + l * N, N, C);
        // mid = x + W_o(attention(LN1(x))): dresid2 is d mid; dx = dmid + the attention's
        fill_floats(a->dresid, a->dresid2, NC);
        CHECK(linear_backward(g, a->datty, 1, d->wo + lcc, NULL, a->dresid2, atty, w->wo + lcc, N, C,
                              C, err));
        fill_floats(a->dq, NULL, NC);
        fill_floats(a->dk, NULL, NC);
        fill_floats(a->dv, NULL, NC);
        mygpt_attention_backward(a->dq, a->dk, a->dv, a->datty, att, q, k, v, B, T, C, NH);
        CHECK(linear_backward(g, a->dln, 1, d->wq + lcc, NULL, a->dq, ln1, w->wq + lcc, N, C, C, err));
        CHECK(linear_backward(g, a->dln, 0, d->wk + lcc, NULL, a->dk, ln1, w->wk + lcc, N, C, C, err));
        CHECK(linear_backward(g, a->dln, 0, d->wv + lcc, NULL, a->dv, ln1, w->wv + lcc, N, C, C, err));
        mygpt_layernorm_backward(a->dresid, d->ln1w + lc, d->ln1b + lc, a->dln, x, w->ln1w + lc,
                                 a->ln1_mean + l * N, a->ln1_denom + l * N, N, C);
    }
    // x = E[ids] + P[0..T-1]: the lookup's gradient joins the head's in dE
    mygpt_embedding_backward(d->wte, d->wpe, a->dresid, a->ids, B, T, C);
    if (!g->grads_are_zero) {
        float *dst = g->grads_memory;
        const float *src = g->grads_scratch;
        const size_t n = g->num_parameters;
#pragma omp parallel for schedule(static) if (n > 65536)
        for (size_t i = 0; i < n; i++)
            dst[i] += src[i];
    }
    g->grads_are_zero = 0;
    a->has_forward = 0; // as autograd frees the graph: one backward per forward
    return MYGPT_OK;
}

mygpt_status mygpt_gpt_loss(mygpt_gpt *g, const int64_t *ids, const int64_t *targets, int B,
                            int T, float *loss, mygpt_error *err)
{
    mygpt_status st;
    CHECK(mygpt_gpt_forward(g, ids, B, T, err));
    const size_t n = (size_t)B * T * g->config.vocab_size;
    if (n > g->acts.logp_cap) { // kept between calls: an evaluation loop reuses it
        float *logp = malloc(n * sizeof *logp);
        if (!logp)
            return mygpt_fail(err, MYGPT_ENOMEM, "out of memory for the log-probabilities (%zu floats)", n);
        free(g->acts.logp);
        g->acts.logp = logp;
        g->acts.logp_cap = n;
    }
    return mygpt_cross_entropy_forward(loss, g->acts.logp, g->acts.logits, targets, (size_t)B * T,
                                       g->config.vocab_size, err);
}
