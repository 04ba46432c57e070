/*
 * lora.c - adding LoRA adapters to a model and merging them into its weights
 * (mygpt/lora.h). The adapters are rows of the one parameter table, so adding or
 * dropping them is carving a new block for the new configuration and copying every
 * tensor the two share; the products are in kernels/lora.c, called by the linear
 * dispatcher (model/block.c).
 */
#include "mygpt/lora.h"

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

/* g takes a model of configuration cfg holding every tensor of g's (untie: out_head a copy
 * of wte, as load_weights_into_gpt), each LoRA A drawn from rng (NULL: zeros), each B
 * zeros; g unchanged on failure. */
static mygpt_status rebuild(mygpt_gpt *g, const mygpt_config *cfg, int untie, mygpt_rng *rng, mygpt_error *err)
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
    if (st != MYGPT_OK) {
        mygpt_gpt_free(fresh);
        return st;
    }
    adopt(g, fresh);
    return MYGPT_OK;
}

mygpt_status mygpt_lora_add_to(mygpt_gpt *g, int rank, double alpha, int untie, mygpt_rng *rng, mygpt_error *err)
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
    return rebuild(g, &cfg, untie, rng, err);
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
    return rebuild(g, &cfg, 1, NULL, err);
}

/* W (OC, C) += scale * (A (C, r) @ B (r, OC))^T, each product summed over r in order */
static void merge_one(float *W, const float *A, const float *B, int C, int OC, int r, float scale)
{
#pragma omp parallel for schedule(static)
    for (int o = 0; o < OC; o++)
        for (int c = 0; c < C; c++) {
            float u = 0.0f;
            for (int j = 0; j < r; j++)
                u += A[(size_t)c * r + j] * B[(size_t)j * OC + o];
            W[(size_t)o * C + c] += scale * u;
        }
}

mygpt_status mygpt_lora_merge(mygpt_gpt *g, mygpt_error *err)
{
    MYGPT_TRY(check_model(g, "merge adapters", err));
    const mygpt_config *cfg = &g->config;
    if (cfg->lora_rank <= 0)
        return mygpt_fail(err, MYGPT_EINVAL, "%s", "the model has no LoRA adapters to merge");
    const int r = cfg->lora_rank;
    const float scale = (float)(cfg->lora_alpha / r);
    mygpt_config plain = *cfg;
    plain.lora_rank = 0;
    plain.lora_alpha = 0.0;
    mygpt_gpt *fresh; // the plain model, its weights then merged: g unchanged until it is done
    MYGPT_TRY(copy_to(g, &plain, &fresh, err));
    for (int i = 0; i < MYGPT_NUM_PARAM_TENSORS; i++) {
        mygpt_param_info w;
        int a, b;
        mygpt_param_info_get(cfg, i, &w);
        if (w.role != MYGPT_ROLE_LINEAR || !mygpt_param_info_adapter(cfg, i, &a, &b)) // a tied head has none
            continue;
        const int layers = w.per_layer ? cfg->num_layers : 1, OC = (int)w.shape[0], C = (int)w.shape[1];
        for (int l = 0; l < layers; l++)
            merge_one(mygpt_param_tensor(&fresh->params, i) + (size_t)l * OC * C,
                      mygpt_param_tensor(&g->params, a) + (size_t)l * C * r,
                      mygpt_param_tensor(&g->params, b) + (size_t)l * r * OC, C, OC, r, scale);
    }
    if (g->lora_from) // recorded in its checkpoint: the same adapters are not added again
        g->lora_merged = g->lora_from;
    g->lora_from = 0;
    adopt(g, fresh);
    return MYGPT_OK;
}
