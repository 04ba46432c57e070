/*
 * gpt.c - the chapter-12 GPT (docs/model-spec.md): the model's memory (the parameters
 * as params.c lays out the table MYGPT_PARAMETERS of mygpt/config.h, initialised there in PyTorch's draw order) and
 * its forward passes top to bottom: the whole sequence, and the KV-cache step.
 */
#include "mygpt/gpt.h"
#include "mygpt/kv_cache.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "mygpt/layers.h"
#include "model/block.h"
#include "model/kv_layout.h"
#include "base/base.h"
#include "model/params.h"
#include "model/packed.h"
#include "model/quantized.h"

/* ---- construction -------------------------------------------------------------- */

mygpt_status mygpt_gpt_alloc(mygpt_gpt **out, const mygpt_config *cfg, mygpt_error *err)
{
    *out = NULL;
    mygpt_status st = mygpt_config_validate(cfg, err);
    if (st != MYGPT_OK)
        return st;
    mygpt_gpt *g = calloc(1, sizeof *g);
    if (!g)
        return mygpt_fail(err, MYGPT_ENOMEM, "%s", "out of memory for the model");
    g->config = *cfg;
    g->arch = mygpt_arch_get(cfg);
    mygpt_param_sizes(cfg, g->param_sizes);
    size_t total = 0;
    for (int i = 0; i < MYGPT_NUM_PARAM_TENSORS; i++)
        total += g->param_sizes[i];
    g->num_parameters = total;
    g->params_memory = mygpt_float_block(total);
    if (!g->params_memory) {
        free(g);
        return mygpt_fail(err, MYGPT_ENOMEM, "out of memory for %zu parameters", total);
    }
    mygpt_params_carve(&g->params, g->params_memory, g->param_sizes);
    *out = g;
    return MYGPT_OK;
}

mygpt_status mygpt_gpt_create_from(mygpt_gpt **out, const mygpt_config *cfg, mygpt_rng *rng,
                                   mygpt_error *err)
{
    mygpt_gpt *g;
    *out = NULL;
    if (cfg->lora_rank > 0) // GPT.__init__ draws no adapters: they come after, where the program adds them
        return mygpt_fail(err, MYGPT_EINVAL, "%s", "a model is built without LoRA adapters (lora_rank 0): add them "
                          "with mygpt_lora_add, where the book calls replace_linear_with_lora");
    MYGPT_TRY(mygpt_gpt_alloc(&g, cfg, err));
    const mygpt_status st = mygpt_params_init(cfg, &g->params, rng, err);
    if (st != MYGPT_OK) {
        mygpt_gpt_free(g);
        return st;
    }
    *out = g;
    return MYGPT_OK;
}

mygpt_status mygpt_gpt_create(mygpt_gpt **out, const mygpt_config *cfg, uint64_t seed,
                              mygpt_error *err)
{
    mygpt_rng rng = {0};
    mygpt_rng_seed(&rng, seed);
    return mygpt_gpt_create_from(out, cfg, &rng, err);
}

void mygpt_gpt_counts(const mygpt_gpt *g, mygpt_param_counts *out)
{
    mygpt_param_counts_of(&g->config, g->param_sizes, out);
}

void mygpt_gpt_free(mygpt_gpt *gpt)
{
    if (!gpt)
        return;
    free(gpt->params_memory);
    mygpt_gpt_unpack(gpt);
    mygpt_quantized_free(gpt->quantized);
    free(gpt->acts.memory);
    free(gpt->acts.logp);
    free(gpt->acts.plan);
    free(gpt);
}

/* ---- activations ---------------------------------------------------------------- */

/* The forward's activations for `rows` rows, one list that both sizes them (base NULL)
 * and carves them (as llm.c's fill_in_activation_sizes): returns their floats. */
static size_t carve_acts(mygpt_acts *a, float *base, size_t rows, const mygpt_config *cfg, size_t V)
{
    const size_t C = (size_t)cfg->embed_dim, H = (size_t)mygpt_ffn_hidden(cfg);
    const size_t H3 = mygpt_arch_get(cfg).swiglu ? H : 0;
    size_t n = 0;
#define TAKE(field, count) (a->field = base ? base + n : NULL, n += (count))
    TAKE(x, rows * C);      // residual stream
    TAKE(ln, rows * C);     // LayerNorm output
    TAKE(q, rows * C);
    TAKE(k, rows * C);
    TAKE(v, rows * C);
    TAKE(atty, rows * C);   // attention output before W_o
    TAKE(proj, rows * C);   // W_o's or fc2's output
    TAKE(fch, rows * H);    // fc1's output, GELU fused in (SwiGLU's product)
    TAKE(fc3, rows * H3);   // w3's output (SwiGLU)
    TAKE(logits, rows * V);
#undef TAKE
    return n;
}

/* Makes room for (B, T) with a head of V columns; keeps the old buffers if they are big
 * enough. */
static mygpt_status ensure_acts(mygpt_gpt *g, int B, int T, int V, mygpt_error *err)
{
    mygpt_acts *a = &g->acts;
    const size_t C = (size_t)g->config.embed_dim;
    size_t BT, total;
    if (mygpt_mul_overflows((size_t)B, (size_t)T, &BT))
        return mygpt_fail(err, MYGPT_EOVERFLOW, "B=%d x T=%d overflows", B, T);
    mygpt_acts sizing;
    if (mygpt_mul_overflows(BT, carve_acts(&sizing, NULL, 1, &g->config, (size_t)V), &total) ||
        total > SIZE_MAX / sizeof(float))
        return mygpt_fail(err, MYGPT_EOVERFLOW,
                          "activations for B=%d, T=%d, V=%d, C=%zu overflow", B, T, V, C);
    if (BT > a->capacity_bt || !a->memory) {
        float *mem = mygpt_float_block(total);
        if (!mem)
            return mygpt_fail(err, MYGPT_ENOMEM,
                              "out of memory for activations (B=%d, T=%d: %zu floats)", B, T,
                              total);
        free(a->memory);
        a->memory = mem;
        a->capacity_bt = BT;
    }
    carve_acts(a, a->memory, a->capacity_bt, &g->config, (size_t)V);
    a->B = B;
    a->T = T;
    return MYGPT_OK;
}

/* The model as a pass reads it */
static mygpt_pass_model pass_model(const mygpt_gpt *g)
{
    return (mygpt_pass_model){.w = &g->params, .sizes = g->param_sizes, .arch = g->arch, .packed = g->packed};
}

/* ---- forward ----------------------------------------------------------------------- */

mygpt_status mygpt_gpt_forward(mygpt_gpt *g, const int64_t *ids, int B, int T, mygpt_error *err)
{
    return mygpt_gpt_forward_attention(g, ids, B, T, NULL, 0, err);
}

size_t mygpt_gpt_attention_len(const mygpt_gpt *g, int B, int T)
{
    const size_t L = (size_t)g->config.num_layers, NH = (size_t)g->config.num_heads;
    return B < 1 || T < 1 ? 0 : L * (size_t)B * NH * (size_t)T * (size_t)T;
}

mygpt_status mygpt_gpt_forward_attention(mygpt_gpt *g, const int64_t *ids, int B, int T, float *att,
                                         size_t att_len, mygpt_error *err)
{
    const mygpt_config *cfg = &g->config;
    mygpt_acts *a = &g->acts;
    if (att && att_len < mygpt_gpt_attention_len(g, B, T)) // (0 for sizes the check refuses)
        return mygpt_fail(err, MYGPT_EINVAL, "the attention buffer holds %zu floats, not the %zu of (L, B, heads, T, T)",
                          att_len, mygpt_gpt_attention_len(g, B, T));
    mygpt_pass p = {.cfg = cfg, .impl = g->impl, .B = B, .T = T};
    const mygpt_pass_model m = pass_model(g);
    mygpt_status st;
    if ((st = mygpt_pass_check_input(cfg, ids, B, T, 0, err)) != MYGPT_OK ||
        (st = mygpt_pass_plan(&p, &m, &a->plan, &a->plan_len, err)) != MYGPT_OK ||
        (st = ensure_acts(g, B, T, p.head.OC, err)) != MYGPT_OK)
        return st;
    // each block updates x in place; LN1 and LN2 share one buffer
    const size_t NH = (size_t)cfg->num_heads;
    for (int l = 0; l < cfg->num_layers; l++)
        p.acts[l] = (mygpt_block_acts){.x = a->x, .ln1 = a->ln, .q = a->q, .k = a->k, .v = a->v, .atty = a->atty,
                                       .mid = a->x, .ln2 = a->ln, .fch = a->fch, .fc3 = a->fc3, .proj = a->proj,
                                       .out = a->x,
                                       // (B, NH, T, T) when asked for
                                       .att = att ? att + (size_t)l * B * NH * T * T : NULL};
    p.ends = (mygpt_ends_acts){.x = a->x, .x_final = a->x, .rows = (size_t)B * T, .ln = a->ln, .logits = a->logits};
    mygpt_pass_forward(&p, ids);
    return MYGPT_OK;
}

/* ---- the KV-cache step ------------------------------------------------------------------ */

mygpt_status mygpt_kv_cache_init(mygpt_kv_cache *c, const mygpt_gpt *g, mygpt_error *err)
{
    return mygpt_kv_cache_make(c, &g->config, err);
}

/* Each new row goes through the same per-row arithmetic as mygpt_gpt_forward (the matmul
 * kernel computes every output the same way whatever the number of rows, and the cached
 * attention computes a row's sums in the order the full one does), so cached logits are
 * the full forward's bits. */
mygpt_status mygpt_gpt_forward_cached(mygpt_gpt *g, mygpt_kv_cache *c, const int64_t *ids, int n,
                                      mygpt_error *err)
{
    const mygpt_config *cfg = &g->config;
    const int t0 = c->len;
    mygpt_pass p = {.cfg = cfg, .impl = g->impl, .B = 1, .T = n, .cache = c, .t0 = t0};
    const mygpt_pass_model m = pass_model(g);
    MYGPT_TRY(mygpt_kv_cache_check(c, cfg, err));
    MYGPT_TRY(mygpt_pass_check_input(cfg, ids, 1, n, t0, err));
    MYGPT_TRY(mygpt_pass_plan(&p, &m, &c->plan, &c->plan_len, err));
    MYGPT_TRY(mygpt_kv_cache_reserve(c, cfg, n, err));
    // the keys and values go to the cache; x is updated in place
    for (int l = 0; l < cfg->num_layers; l++)
        p.acts[l] = (mygpt_block_acts){.x = c->x, .ln1 = c->ln, .q = c->q, .atty = c->atty, .mid = c->x,
                                       .ln2 = c->ln, .fch = c->fch, .fc3 = c->fc3, .proj = c->proj, .out = c->x};
    // only the last position's logits are needed to pick the next token    (V)
    p.ends = (mygpt_ends_acts){.x = c->x, .x_final = c->x + (size_t)(n - 1) * cfg->embed_dim, .rows = 1,
                               .ln = c->ln, .logits = c->logits};
    mygpt_pass_forward(&p, ids);
    c->len = t0 + n;
    return MYGPT_OK;
}
