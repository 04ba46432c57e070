/*
 * gpt.c - the chapter-12 GPT: construction in PyTorch's draw order, the forward
 * pass top to bottom, and parameter accounting (docs/model-spec.md).
 */
#include "mygpt/gpt.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "mygpt/layers.h"
#include "mygpt/print.h"
#include "internal.h"
#include "mygpt/train.h"

/* ---- sizes ------------------------------------------------------------------- */

/* Largest size we accept for any single dimension: keeps int arithmetic in the
 * kernels safe. */
#define MAX_DIM (1 << 24)

static int mul_u64(uint64_t a, uint64_t b, uint64_t *out)
{
    if (a != 0 && b > UINT64_MAX / a)
        return 1;
    *out = a * b;
    return 0;
}

mygpt_status mygpt_config_validate(const mygpt_config *cfg, mygpt_error *err)
{
    const struct { const char *name; int v; } dims[] = {
        {"vocab_size", cfg->vocab_size}, {"embed_dim", cfg->embed_dim},
        {"num_heads", cfg->num_heads},   {"num_layers", cfg->num_layers},
        {"max_seq_len", cfg->max_seq_len}};
    for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++) {
        if (dims[i].v < 1)
            return mygpt_fail(err, MYGPT_EINVAL, "%s must be at least 1, got %d", dims[i].name,
                              dims[i].v);
        if (dims[i].v > MAX_DIM)
            return mygpt_fail(err, MYGPT_EOVERFLOW, "%s=%d is larger than the supported %d",
                              dims[i].name, dims[i].v, MAX_DIM);
    }
    if (cfg->embed_dim % cfg->num_heads != 0)
        return mygpt_fail(err, MYGPT_EINVAL,
                          "embed_dim=%d is not divisible by num_heads=%d", cfg->embed_dim,
                          cfg->num_heads);
    mygpt_param_counts pc;
    return mygpt_param_count(cfg, &pc, err);
}

mygpt_status mygpt_param_count(const mygpt_config *cfg, mygpt_param_counts *out, mygpt_error *err)
{
    const uint64_t V = (uint64_t)(cfg->vocab_size > 0 ? cfg->vocab_size : 0);
    const uint64_t C = (uint64_t)(cfg->embed_dim > 0 ? cfg->embed_dim : 0);
    const uint64_t L = (uint64_t)(cfg->num_layers > 0 ? cfg->num_layers : 0);
    const uint64_t maxT = (uint64_t)(cfg->max_seq_len > 0 ? cfg->max_seq_len : 0);
    uint64_t c2, per_block;
    memset(out, 0, sizeof *out);
    if (mul_u64(V, C, &out->token_embedding) || mul_u64(maxT, C, &out->position_embedding) ||
        mul_u64(C, C, &c2) || mul_u64(12, c2, &per_block) || per_block > UINT64_MAX - 9 * C ||
        mul_u64(L, per_block + 9 * C, &out->blocks))
        return mygpt_fail(err, MYGPT_EOVERFLOW, "parameter count overflows for V=%d C=%d N=%d",
                          cfg->vocab_size, cfg->embed_dim, cfg->num_layers);
    out->per_block = per_block + 9 * C;
    out->final_layernorm = 2 * C;
    out->head = 0;
    out->total = out->token_embedding + out->position_embedding + out->blocks +
                 out->final_layernorm;
    if (out->total < out->blocks || out->total > SIZE_MAX / sizeof(float))
        return mygpt_fail(err, MYGPT_EOVERFLOW, "%s", "the model would not fit in memory");
    return MYGPT_OK;
}

mygpt_status mygpt_param_table(mygpt_strbuf *sb, const mygpt_config *cfg,
                               const mygpt_param_counts *pc)
{
    // f"{n:>5}" right-aligns in 5 columns and never truncates, like %5llu
    mygpt_sb_printf(sb, "Token embedding       (V*C):       %5llu\n",
                    (unsigned long long)pc->token_embedding);
    mygpt_sb_printf(sb, "Position embedding (max_seq*C):    %5llu\n",
                    (unsigned long long)pc->position_embedding);
    mygpt_sb_printf(sb, "%d TransformerBlocks  (N*%llu):     %5llu\n", cfg->num_layers,
                    (unsigned long long)pc->per_block, (unsigned long long)pc->blocks);
    mygpt_sb_printf(sb, "Final LayerNorm       (2*C):        %5llu\n",
                    (unsigned long long)pc->final_layernorm);
    mygpt_sb_printf(sb, "Tied head            (0 extra):     %5llu\n",
                    (unsigned long long)pc->head);
    return mygpt_sb_printf(sb, "Total parameters:                  %5llu\n",
                           (unsigned long long)pc->total);
}

static const char *const PARAM_NAMES[MYGPT_NUM_PARAM_TENSORS] = {
    "wte", "wpe", "ln1w", "ln1b", "wq", "wk", "wv", "wo", "ln2w", "ln2b", "fc1w", "fc1b",
    "fc2w", "fc2b"};

const char *mygpt_param_tensor_name(int i)
{
    if (i == MYGPT_NUM_PARAM_TENSORS)
        return "lnfw/lnfb";
    return i >= 0 && i < MYGPT_NUM_PARAM_TENSORS ? PARAM_NAMES[i] : "?";
}

/* The size table that carves the parameter block (llm.c style). lnf is appended. */
static void fill_param_sizes(const mygpt_config *c, size_t sizes[MYGPT_NUM_PARAM_TENSORS])
{
    const size_t V = (size_t)c->vocab_size, C = (size_t)c->embed_dim, L = (size_t)c->num_layers;
    const size_t maxT = (size_t)c->max_seq_len;
    sizes[0] = V * C;         // wte
    sizes[1] = maxT * C;      // wpe
    sizes[2] = L * C;         // ln1w
    sizes[3] = L * C;         // ln1b
    sizes[4] = L * C * C;     // wq
    sizes[5] = L * C * C;     // wk
    sizes[6] = L * C * C;     // wv
    sizes[7] = L * C * C;     // wo
    sizes[8] = L * C;         // ln2w
    sizes[9] = L * C;         // ln2b
    sizes[10] = L * 4 * C * C; // fc1w
    sizes[11] = L * 4 * C;    // fc1b
    sizes[12] = L * C * 4 * C; // fc2w
    sizes[13] = L * C;        // fc2b
}

void mygpt_gpt_counts(const mygpt_gpt *g, mygpt_param_counts *out)
{
    memset(out, 0, sizeof *out);
    out->token_embedding = g->param_sizes[0];
    out->position_embedding = g->param_sizes[1];
    for (int i = 2; i < MYGPT_NUM_PARAM_TENSORS; i++) // ln1 .. fc2b: everything in the blocks
        out->blocks += g->param_sizes[i];
    out->per_block = out->blocks / (uint64_t)g->config.num_layers;
    out->final_layernorm = 2 * (uint64_t)g->config.embed_dim;
    out->head = 0; // the head is wte itself: nothing more to count
    out->total = out->token_embedding + out->position_embedding + out->blocks +
                 out->final_layernorm + out->head;
}

/* ---- construction -------------------------------------------------------------- */

void mygpt_params_carve(mygpt_params *w, float *block, const size_t sizes[MYGPT_NUM_PARAM_TENSORS],
                        size_t C)
{
    float **views[MYGPT_NUM_PARAM_TENSORS] = {&w->wte,  &w->wpe,  &w->ln1w, &w->ln1b, &w->wq,
                                              &w->wk,   &w->wv,   &w->wo,   &w->ln2w, &w->ln2b,
                                              &w->fc1w, &w->fc1b, &w->fc2w, &w->fc2b};
    float *p = block;
    for (int i = 0; i < MYGPT_NUM_PARAM_TENSORS; i++) {
        *views[i] = p;
        p += sizes[i];
    }
    w->lnfw = p;
    w->lnfb = p + C;
}

mygpt_status mygpt_gpt_create_from(mygpt_gpt **out, const mygpt_config *cfg, mygpt_rng *rng,
                                   mygpt_error *err)
{
    *out = NULL;
    mygpt_status st = mygpt_config_validate(cfg, err);
    if (st != MYGPT_OK)
        return st;
    mygpt_gpt *g = calloc(1, sizeof *g);
    if (!g)
        return mygpt_fail(err, MYGPT_ENOMEM, "%s", "out of memory for the model");
    g->config = *cfg;
    fill_param_sizes(cfg, g->param_sizes);
    const size_t C = (size_t)cfg->embed_dim;
    size_t total = 2 * C; // lnf gamma and beta
    for (int i = 0; i < MYGPT_NUM_PARAM_TENSORS; i++)
        total += g->param_sizes[i];
    g->num_parameters = total;
    g->params_memory = malloc(total * sizeof(float));
    if (!g->params_memory) {
        free(g);
        return mygpt_fail(err, MYGPT_ENOMEM, "out of memory for %zu parameters", total);
    }
    mygpt_params_carve(&g->params, g->params_memory, g->param_sizes, C);

    // Draw in GPT.__init__ order. LayerNorms draw nothing: gamma = 1, beta = 0.
    const mygpt_params *w = &g->params;
    const size_t L = (size_t)cfg->num_layers;
    st = mygpt_init_embedding(rng, w->wte, (size_t)cfg->vocab_size, C, err);
    if (st == MYGPT_OK)
        st = mygpt_init_embedding(rng, w->wpe, (size_t)cfg->max_seq_len, C, err);
    for (size_t l = 0; l < L && st == MYGPT_OK; l++) {
        float *mats[4] = {w->wq + l * C * C, w->wk + l * C * C, w->wv + l * C * C,
                          w->wo + l * C * C};
        for (int m = 0; m < 4 && st == MYGPT_OK; m++)
            st = mygpt_init_linear(rng, mats[m], NULL, C, C, err);
        if (st == MYGPT_OK)
            st = mygpt_init_linear(rng, w->fc1w + l * 4 * C * C, w->fc1b + l * 4 * C, C, 4 * C, err);
        if (st == MYGPT_OK)
            st = mygpt_init_linear(rng, w->fc2w + l * 4 * C * C, w->fc2b + l * C, 4 * C, C, err);
        for (size_t i = 0; i < C; i++) {
            w->ln1w[l * C + i] = 1.0f;
            w->ln1b[l * C + i] = 0.0f;
            w->ln2w[l * C + i] = 1.0f;
            w->ln2b[l * C + i] = 0.0f;
        }
    }
    for (size_t i = 0; i < C; i++) {
        w->lnfw[i] = 1.0f;
        w->lnfb[i] = 0.0f;
    }
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

void mygpt_gpt_free(mygpt_gpt *gpt)
{
    if (!gpt)
        return;
    free(gpt->params_memory);
    mygpt_gpt_unpack(gpt);
    free(gpt->grads_memory);
    free(gpt->grads_scratch);
    mygpt_train_acts_free(gpt->train);
    free(gpt->acts.memory);
    free(gpt->acts.logp);
    free(gpt->acts.scratch);
    free(gpt);
}

/* ---- activations ---------------------------------------------------------------- */

/* Makes room for (B, T); keeps the old buffers if they are big enough. */
static mygpt_status ensure_acts(mygpt_gpt *g, int B, int T, mygpt_error *err)
{
    mygpt_acts *a = &g->acts;
    const size_t C = (size_t)g->config.embed_dim, V = (size_t)g->config.vocab_size;
    size_t BT, per_token, total;
    if (mygpt_mul_overflows((size_t)B, (size_t)T, &BT))
        return mygpt_fail(err, MYGPT_EOVERFLOW, "B=%d x T=%d overflows", B, T);
    per_token = 7 * C + 4 * C + V; // x ln q k v atty proj (7C), fch (4C), logits (V)
    if (mygpt_mul_overflows(BT, per_token, &total) || total > SIZE_MAX / sizeof(float))
        return mygpt_fail(err, MYGPT_EOVERFLOW,
                          "activations for B=%d, T=%d, V=%zu, C=%zu overflow", B, T, V, C);
    const size_t scratch_len =
        mygpt_attention_scratch_size(T, g->config.embed_dim / g->config.num_heads,
                                     omp_get_max_threads());
    if (BT > a->capacity_bt || !a->memory) {
        float *mem = malloc(total * sizeof(float));
        if (!mem)
            return mygpt_fail(err, MYGPT_ENOMEM,
                              "out of memory for activations (B=%d, T=%d: %zu floats)", B, T,
                              total);
        free(a->memory);
        a->memory = mem;
        a->capacity_bt = BT;
    }
    if (scratch_len > a->scratch_len) {
        float *s = malloc(scratch_len * sizeof(float));
        if (!s)
            return mygpt_fail(err, MYGPT_ENOMEM, "%s", "out of memory for attention scratch");
        free(a->scratch);
        a->scratch = s;
        a->scratch_len = scratch_len;
    }
    const size_t cap = a->capacity_bt;
    float *p = a->memory;
    a->x = p;      p += cap * C;
    a->ln = p;     p += cap * C;
    a->q = p;      p += cap * C;
    a->k = p;      p += cap * C;
    a->v = p;      p += cap * C;
    a->atty = p;   p += cap * C;
    a->proj = p;   p += cap * C;
    a->fch = p;    p += cap * 4 * C;
    a->logits = p;
    a->B = B;
    a->T = T;
    return MYGPT_OK;
}

/* ---- forward ----------------------------------------------------------------------- */

/* nn.Linear, out (N, OC) = inp (N, C) weight^T + bias, then GELU when gelu: the naive
 * kernel when the model asks for the reference kernels, else the fast one (fc1's GELU
 * fused into its output pass) with the weight as it is or as mygpt_gpt_pack packed it
 * (pw; the same bits). */
static mygpt_status linear(int naive, float *out, const float *inp, const float *weight,
                           const mygpt_packed_weight *pw, const float *bias, size_t N, int C, int OC,
                           int gelu, mygpt_error *err)
{
    if (!naive && mygpt_matmul_packed_fits(pw))
        return mygpt_matmul_prepacked(out, inp, pw, bias, N, gelu, err);
    if (!naive)
        return mygpt_matmul_ex(out, inp, weight, bias, N, C, OC, gelu, err);
    mygpt_matmul_naive(out, inp, weight, bias, N, C, OC);
    if (gelu)
        mygpt_gelu_forward(out, out, N * (size_t)OC);
    return MYGPT_OK;
}

mygpt_status mygpt_gpt_forward(mygpt_gpt *g, const int64_t *ids, int B, int T, mygpt_error *err)
{
    return mygpt_gpt_forward_attention(g, ids, B, T, NULL, 0, err);
}

size_t mygpt_gpt_attention_len(const mygpt_gpt *g, int B, int T)
{
    const size_t L = (size_t)g->config.num_layers, NH = (size_t)g->config.num_heads;
    return B < 1 || T < 1 ? 0 : L * (size_t)B * NH * (size_t)T * (size_t)T;
}

int mygpt_attention_top(const float *row, int t, int k, int *best)
{
    int nb = 0;
    for (; nb < k && nb <= t; nb++) { // selection: k is a handful
        int arg = -1;
        for (int s = 0; s <= t; s++) {
            int taken = 0;
            for (int j = 0; j < nb; j++)
                taken |= best[j] == s;
            if (!taken && (arg < 0 || row[s] > row[arg]))
                arg = s;
        }
        best[nb] = arg;
    }
    return nb;
}

mygpt_status mygpt_gpt_forward_attention(mygpt_gpt *g, const int64_t *ids, int B, int T, float *att,
                                         size_t att_len, mygpt_error *err)
{
    const mygpt_config *cfg = &g->config;
    if (B < 1 || T < 1)
        return mygpt_fail(err, MYGPT_EINVAL, "batch and sequence sizes must be at least 1, got B=%d T=%d",
                          B, T);
    if (T > cfg->max_seq_len)
        return mygpt_fail(err, MYGPT_ERANGE, "input length T=%d exceeds max_seq_len=%d", T,
                          cfg->max_seq_len);
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++) {
            int64_t id = ids[(size_t)b * T + t];
            if (id < 0 || id >= cfg->vocab_size)
                return mygpt_fail(err, MYGPT_ERANGE,
                                  "token id %lld at (%d, %d) is outside [0, %d)", (long long)id, b,
                                  t, cfg->vocab_size);
        }
    if (att && att_len < mygpt_gpt_attention_len(g, B, T))
        return mygpt_fail(err, MYGPT_EINVAL, "the attention buffer holds %zu floats, not the %zu of (L, B, heads, T, T)",
                          att_len, mygpt_gpt_attention_len(g, B, T));
    mygpt_status st = ensure_acts(g, B, T, err);
    if (st != MYGPT_OK)
        return st;

    const int C = cfg->embed_dim, NH = cfg->num_heads, V = cfg->vocab_size;
    const size_t N = (size_t)B * T, Cs = (size_t)C;
    const mygpt_params *w = &g->params;
    mygpt_acts *a = &g->acts;
    const int naive = g->use_naive_kernels;
#define LINEAR(out, inp, wt, pw, bias, rows, in, outc, gelu)                                      \
    do {                                                                                       \
        if ((st = linear(naive, out, inp, wt, pw, bias, rows, in, outc, gelu, err)) != MYGPT_OK) \
            return st;                                                                         \
    } while (0)

    // x = E[ids] + P[0..T-1]                                    (B, T, C)
    st = mygpt_embedding_forward(a->x, ids, w->wte, w->wpe, B, T, C, V, cfg->max_seq_len, err);
    if (st != MYGPT_OK)
        return st;
    for (int l = 0; l < cfg->num_layers; l++) {
        const size_t lc = (size_t)l * Cs, lcc = (size_t)l * Cs * Cs;
        const mygpt_packed_weight *pl = g->packed ? mygpt_packed_layer(g->packed, l) : NULL;
#define PW(i) (pl ? pl + (i) : NULL)
        // x = x + W_o(attention(LN1(x)))
        mygpt_layernorm_forward(a->ln, a->x, w->ln1w + lc, w->ln1b + lc, N, C);
        LINEAR(a->q, a->ln, w->wq + lcc, PW(MYGPT_P_WQ), NULL, N, C, C, 0);
        LINEAR(a->k, a->ln, w->wk + lcc, PW(MYGPT_P_WK), NULL, N, C, C, 0);
        LINEAR(a->v, a->ln, w->wv + lcc, PW(MYGPT_P_WV), NULL, N, C, C, 0);
        float *att_l = att ? att + (size_t)l * B * NH * T * T : NULL; // (B, NH, T, T) when asked for
        if (!att_l)
            st = (g->use_naive_kernels ? mygpt_attention_forward : mygpt_attention_forward_fast)(
                a->atty, a->q, a->k, a->v, a->scratch, a->scratch_len, B, T, C, NH, err);
        else if (g->use_naive_kernels)
            st = mygpt_attention_forward_train(a->atty, att_l, a->q, a->k, a->v, B, T, C, NH, err);
        else
            st = mygpt_attention_forward_probs(a->atty, att_l, a->q, a->k, a->v, a->scratch, a->scratch_len, B,
                                               T, C, NH, err);
        if (st != MYGPT_OK)
            return st;
        LINEAR(a->proj, a->atty, w->wo + lcc, PW(MYGPT_P_WO), NULL, N, C, C, 0);
        mygpt_residual_forward(a->x, a->proj, N * Cs);
        // x = x + fc2(GELU(fc1(LN2(x))))
        mygpt_layernorm_forward(a->ln, a->x, w->ln2w + lc, w->ln2b + lc, N, C);
        LINEAR(a->fch, a->ln, w->fc1w + 4 * lcc, PW(MYGPT_P_FC1), w->fc1b + 4 * lc, N, C, 4 * C, 1); // + GELU
        LINEAR(a->proj, a->fch, w->fc2w + 4 * lcc, PW(MYGPT_P_FC2), w->fc2b + lc, N, 4 * C, C, 0);
#undef PW
        mygpt_residual_forward(a->x, a->proj, N * Cs);
    }
    // logits = LN_f(x) E^T: the head is the token embedding      (B, T, V)
    mygpt_layernorm_forward(a->ln, a->x, w->lnfw, w->lnfb, N, C);
    LINEAR(a->logits, a->ln, w->wte, g->packed ? &g->packed->head : NULL, NULL, N, C, V, 0);
#undef LINEAR
    return MYGPT_OK;
}
