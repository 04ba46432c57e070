/*
 * lora.c - adding LoRA adapters to a model and merging them into its weights
 * (mygpt/lora.h). The adapters are rows of the one parameter table, so adding or
 * dropping them is carving a new block for the new configuration and copying every
 * tensor the two share; the products are in kernels/lora.c, called by the linear
 * dispatcher (model/block.c).
 */
#include "mygpt/lora.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "model/lora.h"
#include "model/params.h"

/* The checks both operations share. */
static mygpt_status check_model(const mygpt_gpt *g, const char *what, mygpt_error *err)
{
    if (g->trainers > 0)
        return mygpt_fail(err, MYGPT_EINVAL, "cannot %s while a trainer holds the model (free it first: its "
                          "gradients are sized for the model as it is)", what);
    if (g->weights != MYGPT_WEIGHTS_FP32)
        return mygpt_fail(err, MYGPT_EINVAL, "cannot %s: the model is quantized (LoRA works on float32 weights)", what);
    return MYGPT_OK;
}

/* A model of configuration cfg holding every tensor of g's that both have (the others
 * zero). */
static mygpt_status copy_to(const mygpt_gpt *g, const mygpt_config *cfg, mygpt_gpt **out, mygpt_error *err)
{
    MYGPT_TRY(mygpt_gpt_alloc(out, cfg, err));
    for (int i = 0; i < MYGPT_NUM_PARAM_TENSORS; i++) {
        float *dst = mygpt_param_tensor(&(*out)->params, i);
        if (g->param_sizes[i] == (*out)->param_sizes[i])
            memcpy(dst, mygpt_param_tensor(&g->params, i), (*out)->param_sizes[i] * sizeof *dst);
        else
            memset(dst, 0, (*out)->param_sizes[i] * sizeof *dst);
    }
    return MYGPT_OK;
}

/* g takes fresh's configuration and parameters (its activations, settings and
 * buffers stay); fresh is freed. */
static void adopt(mygpt_gpt *g, mygpt_gpt *fresh)
{
    mygpt_gpt_unpack(g); // a packing of the old weights
    free(g->params_memory);
    g->config = fresh->config;
    g->arch = fresh->arch;
    g->params_memory = fresh->params_memory;
    g->num_parameters = fresh->num_parameters;
    memcpy(g->param_sizes, fresh->param_sizes, sizeof g->param_sizes);
    mygpt_params_carve(&g->params, g->params_memory, g->param_sizes);
    fresh->params_memory = NULL;
    mygpt_gpt_free(fresh);
}

int mygpt_lora_untied_config(const mygpt_config *cfg, mygpt_config *out)
{
    if (cfg->arch != MYGPT_ARCH_GPT2 || cfg->num_classes > 0 || cfg->lora_rank > 0)
        return 0;
    *out = *cfg;
    out->arch = MYGPT_ARCH_LLMS_FROM_SCRATCH; // GPT-2's switches, but out_head of its own
    out->qkv_bias = 1;
    return 1;
}

static mygpt_status merge_into(const mygpt_gpt *g, mygpt_gpt *plain, mygpt_error *err);

/* g takes a model of configuration cfg holding every tensor of g's (untie: out_head a copy
 * of wte, as load_weights_into_gpt), each LoRA A drawn from rng (NULL: zeros), each B
 * zeros, or with fill the adapters fill puts in, refused (MYGPT_ERANGE) when merging them
 * would make a weight that is not finite; g unchanged on failure. */
static mygpt_status rebuild(mygpt_gpt *g, const mygpt_config *cfg, int untie, mygpt_rng *rng,
                            void (*fill)(void *ctx, mygpt_gpt *m), void *ctx, mygpt_error *err)
{
    mygpt_gpt *fresh;
    MYGPT_TRY(copy_to(g, cfg, &fresh, err)); // validates cfg
    if (untie)
        memcpy(fresh->params.lmw, g->params.wte, fresh->param_sizes[MYGPT_PARAM_lmw] * sizeof *fresh->params.lmw);
    // LoRALayer.__init__: A = kaiming_uniform_(empty(in, r), a=sqrt(5)), whose fan_in is
    // A.size(1) = r; visited in the state_dict's order, which is the modules'
    const double bound = cfg->lora_rank > 0 ? mygpt_linear_weight_bound((size_t)cfg->lora_rank) : 0.0;
    const int n = mygpt_state_dict_len(cfg);
    mygpt_status st = MYGPT_OK;
    for (int j = 0; j < n && rng && cfg->lora_rank > 0 && st == MYGPT_OK; j++) {
        mygpt_state_entry e;
        mygpt_param_info info;
        mygpt_state_dict_entry(cfg, &fresh->params, j, &e);
        mygpt_param_info_get(cfg, e.tensor, &info);
        if (info.role == MYGPT_ROLE_LORA_A)
            st = mygpt_uniform_(rng, e.data, e.numel, -bound, bound, err);
    }
    if (fill) { // a file's adapters: applied, the model computes what the merge would, so finite
        fill(ctx, fresh);
        st = merge_into(fresh, NULL, err);
    }
    if (st != MYGPT_OK) {
        mygpt_gpt_free(fresh);
        return st;
    }
    adopt(g, fresh);
    return MYGPT_OK;
}

/* Where new adapters' values come from: drawn from rng, or put in by fill(ctx, model). */
typedef struct adapter_source {
    mygpt_rng *rng;
    void (*fill)(void *ctx, mygpt_gpt *m);
    void *ctx;
} adapter_source;

/* mygpt_lora_add_to's checks, then rebuild with its adapters from src */
static mygpt_status add(mygpt_gpt *g, int rank, double alpha, int untie, adapter_source src, mygpt_error *err)
{
    MYGPT_TRY(check_model(g, "add adapters", err));
    if (g->config.lora_rank > 0)
        return mygpt_fail(err, MYGPT_EINVAL, "the model has LoRA adapters already (rank %d): merge them first",
                          g->config.lora_rank);
    if (rank < 1 || rank > MYGPT_LORA_MAX_RANK)
        return mygpt_fail(err, MYGPT_EINVAL, "a LoRA rank is 1 to %d, got %d", MYGPT_LORA_MAX_RANK, rank);
    mygpt_config cfg = g->config;
    if (untie && !mygpt_lora_untied_config(&g->config, &cfg))
        return mygpt_fail(err, MYGPT_EINVAL, "%s", "only a GPT-2 language model has a tied head to untie");
    cfg.lora_rank = rank;
    cfg.lora_alpha = alpha;
    return rebuild(g, &cfg, untie, src.rng, src.fill, src.ctx, err);
}

mygpt_status mygpt_lora_add_to(mygpt_gpt *g, int rank, double alpha, int untie, mygpt_rng *rng, mygpt_error *err)
{
    return add(g, rank, alpha, untie, (adapter_source){.rng = rng}, err);
}

mygpt_status mygpt_lora_add_values(mygpt_gpt *g, int rank, double alpha, int untie,
                                   void (*fill)(void *ctx, mygpt_gpt *m), void *ctx, mygpt_error *err)
{
    return add(g, rank, alpha, untie, (adapter_source){.fill = fill, .ctx = ctx}, err);
}

mygpt_status mygpt_lora_add(mygpt_gpt *g, int rank, double alpha, mygpt_rng *rng, mygpt_error *err)
{
    return mygpt_lora_add_to(g, rank, alpha, 0, rng, err);
}

mygpt_status mygpt_lora_untie_head(mygpt_gpt *g, mygpt_error *err)
{
    MYGPT_TRY(check_model(g, "untie the head", err));
    mygpt_config cfg;
    if (!mygpt_lora_untied_config(&g->config, &cfg))
        return mygpt_fail(err, MYGPT_EINVAL, "only a GPT-2 language model without adapters has a tied head to "
                          "untie (this one: %s%s%s)", mygpt_arch_name(g->config.arch),
                          g->config.num_classes > 0 ? ", a classification head" : "",
                          g->config.lora_rank > 0 ? ", with adapters" : "");
    return rebuild(g, &cfg, 1, NULL, NULL, NULL, err);
}

/* W (OC, C) + scale * (A (C, r) @ B (r, OC))^T, each product summed over r in order, into
 * dst (OC, C), or only computed when dst is NULL: the first index o * C + c whose value is
 * not finite, or -1 when all are */
static long long merge_one(float *dst, const float *W, const float *A, const float *B, int C, int OC, int r,
                           float scale)
{
    long long first = LLONG_MAX;
#pragma omp parallel for schedule(static) reduction(min : first)
    for (int o = 0; o < OC; o++)
        for (int c = 0; c < C; c++) {
            float u = 0.0f;
            for (int j = 0; j < r; j++)
                u += A[(size_t)c * r + j] * B[(size_t)j * OC + o];
            const float v = W[(size_t)o * C + c] + scale * u;
            if (dst)
                dst[(size_t)o * C + c] = v;
            if (!isfinite(v) && (long long)o * C + c < first)
                first = (long long)o * C + c;
        }
    return first == LLONG_MAX ? -1 : first;
}

/* Merges the adapters of g (a model with them) into plain's weights (a model of g's
 * configuration without them, holding g's other tensors), or, plain NULL, only computes
 * the merge: MYGPT_ERANGE naming the first weight the merge makes a NaN or an infinity
 * (the adapters' values are finite, but their product or its sum with W overflows). */
static mygpt_status merge_into(const mygpt_gpt *g, mygpt_gpt *plain, mygpt_error *err)
{
    const mygpt_config *cfg = &g->config;
    const int r = cfg->lora_rank;
    const float scale = (float)(cfg->lora_alpha / r);
    for (int i = 0; i < MYGPT_NUM_PARAM_TENSORS; i++) {
        mygpt_param_info w;
        int a, b;
        mygpt_param_info_get(cfg, i, &w);
        if (w.role != MYGPT_ROLE_LINEAR || !mygpt_param_info_adapter(cfg, i, &a, &b)) // a tied head has none
            continue;
        const int layers = w.per_layer ? cfg->num_layers : 1, OC = (int)w.shape[0], C = (int)w.shape[1];
        for (int l = 0; l < layers; l++) {
            const size_t at = (size_t)l * OC * C;
            const long long bad = merge_one(plain ? mygpt_param_tensor(&plain->params, i) + at : NULL,
                                            mygpt_param_tensor(&g->params, i) + at,
                                            mygpt_param_tensor(&g->params, a) + (size_t)l * C * r,
                                            mygpt_param_tensor(&g->params, b) + (size_t)l * r * OC, C, OC, r, scale);
            if (bad >= 0) {
                mygpt_state_entry e;
                for (int j = 0; j < mygpt_state_dict_len(cfg); j++) { // its state_dict name
                    mygpt_state_dict_entry(cfg, NULL, j, &e);
                    if (e.tensor == i && e.layer == (w.per_layer ? l : -1))
                        break;
                }
                return mygpt_fail(err, MYGPT_ERANGE, "merged, the adapters make %s[%lld][%lld] a NaN or an "
                                  "infinity: W + (alpha / r) (A B)^T overflows float32, though each value is finite",
                                  e.name, bad / C, bad % C);
            }
        }
    }
    return MYGPT_OK;
}

mygpt_status mygpt_lora_merge(mygpt_gpt *g, mygpt_error *err)
{
    MYGPT_TRY(check_model(g, "merge adapters", err));
    const mygpt_config *cfg = &g->config;
    if (cfg->lora_rank <= 0)
        return mygpt_fail(err, MYGPT_EINVAL, "%s", "the model has no LoRA adapters to merge");
    mygpt_config plain = *cfg;
    plain.lora_rank = 0;
    plain.lora_alpha = 0.0;
    mygpt_gpt *fresh; // the plain model, its weights then merged: g unchanged until it is done
    MYGPT_TRY(copy_to(g, &plain, &fresh, err));
    const mygpt_status st = merge_into(g, fresh, err);
    if (st != MYGPT_OK) {
        mygpt_gpt_free(fresh);
        return st;
    }
    if (g->lora_from) // recorded in its checkpoint: the same adapters are not added again
        g->lora_merged = g->lora_from;
    g->lora_from = 0;
    adopt(g, fresh);
    return MYGPT_OK;
}
