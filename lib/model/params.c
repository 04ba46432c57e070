/*
 * params.c - everything that derives from the parameter table (MYGPT_PARAMETERS in
 * mygpt/config.h): each tensor's shape and size for a configuration, the carving of the
 * one block, the state_dict's names and order, the counts (and document 000's table of
 * them), and the initial draws; and the configuration's checks (its sizes must fit the table).
 */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "mygpt/attention.h"
#include "mygpt/config.h"
#include "mygpt/print.h"
#include "base/base.h"
#include "base/draws.h"
#include "base/text.h"
#include "model/params.h"
#include "kernels/lora.h"

_Static_assert(MYGPT_LORA_MAX_RANK <= MYGPT_LORA_KERNEL_MAX_RANK, "the LoRA kernels hold a rank's values in a row");

/* the sizes a shape is written in */
enum { DIM_ONE, DIM_C, DIM_KV, DIM_H, DIM_V, DIM_MAXT, DIM_HEAD, DIM_R };

/* which architectures have a tensor (the table's `when`) */
enum { WHEN_ALWAYS, WHEN_QKV_BIAS, WHEN_OUT_BIAS, WHEN_UNTIED, WHEN_CLASSES, WHEN_LORA, WHEN_LORA_HEAD, WHEN_BIASED,
       WHEN_POSITIONS, WHEN_SWIGLU, WHEN_NEVER };

typedef struct param_row {
    const char *field, *course, *book, *hf, *llama;
    int per_layer, rows, cols;
    mygpt_param_role role;
    int link, when; /* a LINEAR's bias; a LORA_A's or LORA_B's LINEAR */
    size_t view; /* offsetof(mygpt_params, field) */
} param_row;

static const param_row TABLE[MYGPT_NUM_PARAM_TENSORS] = {
#define ROW(field, course, book, hf, llama, per_layer, rows, cols, role, link, when)                     \
    {#field, course, book, hf, llama, per_layer, DIM_##rows, DIM_##cols, MYGPT_ROLE_##role, MYGPT_PARAM_##link, \
     WHEN_##when, offsetof(mygpt_params, field)},
    MYGPT_PARAMETERS(ROW)
#undef ROW
};

/* ---- the configuration's checks ------------------------------------------------ */


/* The checks of llama's fields: the key/value heads divide the query heads, the head
 * size is even (rotary pairs), the hidden size in range; the GPTs keep their one head
 * of keys per query head and their 4C. What llama has no code for yet is refused. */
static mygpt_status validate_llama(const mygpt_config *cfg, mygpt_error *err)
{
    const int NH = cfg->num_heads, KV = cfg->num_kv_heads;
    if (cfg->ffn_hidden < 0 || cfg->ffn_hidden > MYGPT_MAX_DIM)
        return mygpt_fail(err, MYGPT_EINVAL, "ffn_hidden must be 0 (the default) or 1 to %d, got %d", MYGPT_MAX_DIM,
                          cfg->ffn_hidden);
    if (KV < 0 || KV > NH || (KV > 0 && NH % KV != 0))
        return mygpt_fail(err, MYGPT_EINVAL, "num_kv_heads=%d must divide num_heads=%d (or be 0)", KV, NH);
    if (cfg->arch != MYGPT_ARCH_LLAMA) {
        if ((KV != 0 && KV != NH) || (cfg->ffn_hidden != 0 && cfg->ffn_hidden != 4 * cfg->embed_dim) ||
            cfg->rope != 0 || cfg->untied_head != 0)
            return mygpt_fail(err, MYGPT_EINVAL, "the %s architecture has a key head per query head, a hidden size "
                              "of 4C, no rotary positions and its own head choice: num_kv_heads, ffn_hidden, rope "
                              "and untied_head are llama's", mygpt_arch_name(cfg->arch));
        return MYGPT_OK;
    }
    if ((cfg->embed_dim / NH) % 2 != 0)
        return mygpt_fail(err, MYGPT_EINVAL, "llama's head size embed_dim / num_heads = %d must be even (rotary pairs)",
                          cfg->embed_dim / NH);
    if (cfg->rope != MYGPT_ROPE_INTERLEAVED && cfg->rope != MYGPT_ROPE_HALVES)
        return mygpt_fail(err, MYGPT_EINVAL, "unknown rotary convention %d", cfg->rope);
    if (mygpt_ffn_hidden(cfg) < 1)
        return mygpt_fail(err, MYGPT_EINVAL, "%s", "llama's hidden size is out of range");
    if (cfg->dropout != 0.0 || cfg->num_classes != 0 || cfg->lora_rank != 0)
        return mygpt_fail(err, MYGPT_EINVAL, "%s", "llama has no dropout, classification head or LoRA adapters yet");
    return MYGPT_OK;
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
        if (dims[i].v > MYGPT_MAX_DIM)
            return mygpt_fail(err, MYGPT_EOVERFLOW, "%s=%d is larger than the supported %d",
                              dims[i].name, dims[i].v, MYGPT_MAX_DIM);
    }
    if (cfg->num_classes < 0 || cfg->num_classes > MYGPT_MAX_DIM)
        return mygpt_fail(err, MYGPT_EINVAL, "num_classes must be 0 (the language-model head) or 1 to %d, got %d",
                          MYGPT_MAX_DIM, cfg->num_classes);
    if (cfg->lora_rank < 0 || cfg->lora_rank > MYGPT_LORA_MAX_RANK)
        return mygpt_fail(err, MYGPT_EINVAL, "lora_rank must be 0 (no adapters) or 1 to %d, got %d", MYGPT_LORA_MAX_RANK,
                          cfg->lora_rank);
    if (cfg->lora_rank > 0 && !(cfg->lora_alpha >= MYGPT_LORA_ALPHA_MIN && cfg->lora_alpha <= MYGPT_LORA_ALPHA_MAX))
        return mygpt_fail(err, MYGPT_EINVAL, "lora_alpha must be a number from %g to %g, got %g", MYGPT_LORA_ALPHA_MIN,
                          MYGPT_LORA_ALPHA_MAX, cfg->lora_alpha);
    if ((unsigned)cfg->arch >= MYGPT_ARCH_COUNT)
        return mygpt_fail(err, MYGPT_EINVAL, "unknown architecture %d", (int)cfg->arch);
    if (cfg->qkv_bias != 0 && cfg->qkv_bias != 1)
        return mygpt_fail(err, MYGPT_EINVAL, "qkv_bias is 0 or 1, got %d", cfg->qkv_bias);
    if (!(cfg->dropout >= 0.0 && cfg->dropout < 1.0))
        return mygpt_fail(err, MYGPT_EINVAL, "dropout must be in [0, 1), got %g", cfg->dropout);
    if (cfg->dropout != 0.0 && cfg->arch == MYGPT_ARCH_COURSE)
        return mygpt_fail(err, MYGPT_EINVAL, "%s", "the course's model has no dropout (llms-from-scratch, gpt2 and nanogpt do)");
    if (cfg->embed_dim % cfg->num_heads != 0)
        return mygpt_fail(err, MYGPT_EINVAL,
                          "embed_dim=%d is not divisible by num_heads=%d", cfg->embed_dim,
                          cfg->num_heads);
    MYGPT_TRY(validate_llama(cfg, err));
    mygpt_param_counts pc; // the parameters must fit in memory
    return mygpt_param_count(cfg, &pc, err);
}

/* ---- the table for a configuration ---------------------------------------------- */

/* Whether cfg's tensors take the course's names and order: nanoGPT's Block registers
 * ln_1, attn, ln_2, mlp, the table's order, as the course's does (llama's TransformerBlock
 * registers its norms last, as the book's) */
static int course_layout(const mygpt_config *c)
{
    return c->arch == MYGPT_ARCH_COURSE || c->arch == MYGPT_ARCH_NANOGPT;
}

/* whether cfg's architecture has table row r */
static int present(const mygpt_config *c, const param_row *r)
{
    const mygpt_arch_switches a = mygpt_arch_get(c);
    switch (r->when) {
    case WHEN_QKV_BIAS: return a.qkv_bias;
    case WHEN_OUT_BIAS: return a.out_bias;
    case WHEN_UNTIED: return a.untied_head || c->num_classes > 0; // a classification head is its own
    case WHEN_CLASSES: return c->num_classes > 0;
    case WHEN_LORA: return c->lora_rank > 0;
    case WHEN_LORA_HEAD: return c->lora_rank > 0 && (a.untied_head || c->num_classes > 0);
    case WHEN_BIASED: return !a.bias_free;
    case WHEN_POSITIONS: return !a.rope;
    case WHEN_SWIGLU: return a.swiglu;
    case WHEN_NEVER: return 0;
    default: return 1;
    }
}

static size_t dim(const mygpt_config *c, int d)
{
    switch (d) {
    case DIM_ONE: return 1;
    case DIM_C: return (size_t)c->embed_dim;
    case DIM_KV: return (size_t)c->embed_dim / (size_t)c->num_heads * (size_t)mygpt_kv_heads(c);
    case DIM_H: return (size_t)mygpt_ffn_hidden(c);
    case DIM_V: return (size_t)c->vocab_size;
    case DIM_MAXT: return (size_t)c->max_seq_len;
    case DIM_HEAD: return (size_t)mygpt_head_size(c);
    case DIM_R: return (size_t)c->lora_rank;
    default: return 0;
    }
}

/* one layer's floats of row r, with the product checked: 1 if it overflows */
static int row_numel(const mygpt_config *c, const param_row *r, uint64_t *out)
{
    *out = 0;
    if (!present(c, r))
        return 0;
    const uint64_t a = dim(c, r->rows), b = dim(c, r->cols);
    if (a != 0 && b > UINT64_MAX / a)
        return 1;
    *out = a * b;
    return 0;
}

/* tensor i's floats in the block, every layer's (the one size the carving uses) */
static size_t tensor_floats(const mygpt_config *c, int i)
{
    const param_row *r = &TABLE[i];
    if (!present(c, r))
        return 0;
    return dim(c, r->rows) * dim(c, r->cols) * (r->per_layer ? (size_t)c->num_layers : 1);
}

void mygpt_param_info_get(const mygpt_config *cfg, int i, mygpt_param_info *out)
{
    const param_row *r = &TABLE[i];
    memset(out, 0, sizeof *out);
    out->field = r->field;
    out->name = cfg->arch == MYGPT_ARCH_LLAMA ? r->llama : course_layout(cfg) ? r->course : r->book;
    out->hf_name = r->hf;
    out->present = present(cfg, r);
    out->per_layer = r->per_layer;
    out->ndim = r->cols == DIM_ONE ? 1 : 2;
    out->shape[0] = (int64_t)dim(cfg, r->rows);
    out->shape[1] = out->ndim == 2 ? (int64_t)dim(cfg, r->cols) : 1;
    out->role = r->role;
    out->bias = mygpt_param_info_bias(cfg, i);
    out->numel = tensor_floats(cfg, i);
    for (int j = 0; j < i; j++)
        out->offset += tensor_floats(cfg, j);
}

const char *mygpt_param_tensor_name(int i)
{
    return i >= 0 && i < MYGPT_NUM_PARAM_TENSORS ? TABLE[i].field : "?";
}

void mygpt_param_sizes(const mygpt_config *cfg, size_t *sizes)
{
    for (int i = 0; i < MYGPT_NUM_PARAM_TENSORS; i++)
        sizes[i] = tensor_floats(cfg, i);
}

void mygpt_params_carve(mygpt_params *w, float *block, const size_t *sizes)
{
    for (int i = 0; i < MYGPT_NUM_PARAM_TENSORS; i++) {
        *(float **)((char *)w + TABLE[i].view) = block;
        block += sizes[i];
    }
}

float *mygpt_param_tensor(const mygpt_params *w, int i)
{
    return *(float *const *)((const char *)w + TABLE[i].view);
}

void mygpt_params_layer(const size_t *sizes, int L, const mygpt_params *w, int l, mygpt_params *out)
{
    for (int i = 0; i < MYGPT_NUM_PARAM_TENSORS; i++) {
        const param_row *r = &TABLE[i];
        float *t = mygpt_param_tensor(w, i);
        if (sizes[i] == 0)
            t = NULL;
        else if (r->per_layer)
            t += (size_t)l * (sizes[i] / (size_t)L);
        *(float **)((char *)out + r->view) = t;
    }
}

/* The k-th per-layer tensor of cfg's state_dict, or -1: the table's order, except that
 * the book's TransformerBlock (and GPT-2's, built as the book's) registers att and ff
 * before norm1 and norm2, so its LayerNorm rows come last. No draw moves: a LayerNorm
 * draws nothing. */
static int per_layer_row(const mygpt_config *cfg, int k)
{
    const int book = !course_layout(cfg);
    for (int pass = 0; pass < (book ? 2 : 1); pass++)
        for (int i = 0; i < MYGPT_NUM_PARAM_TENSORS; i++) {
            const int norm = TABLE[i].role == MYGPT_ROLE_ONES || TABLE[i].role == MYGPT_ROLE_ZEROS;
            if (!TABLE[i].per_layer || !present(cfg, &TABLE[i]) || (book && norm != pass))
                continue;
            if (k-- == 0)
                return i;
        }
    return -1;
}

/* The state_dict's order: the tensors cfg has, the whole-model ones before the first
 * per-layer row, then each layer's, then the remaining whole-model ones. Entry j's table
 * row and layer (-1: a whole-model tensor); j past the end gives row -1. */
static int state_dict_walk(const mygpt_config *cfg, int j, int *layer)
{
    int first = 0, per = 0;
    while (first < MYGPT_NUM_PARAM_TENSORS && !TABLE[first].per_layer)
        first++;
    for (int i = 0; i < MYGPT_NUM_PARAM_TENSORS; i++)
        per += TABLE[i].per_layer && present(cfg, &TABLE[i]);
    *layer = -1;
    for (int i = 0; i < first; i++) // the leading whole-model tensors
        if (present(cfg, &TABLE[i]) && j-- == 0)
            return i;
    if (j < cfg->num_layers * per) { // layer j / per's tensors
        *layer = j / per;
        return per_layer_row(cfg, j % per);
    }
    j -= cfg->num_layers * per;
    *layer = -1;
    for (int i = first; i < MYGPT_NUM_PARAM_TENSORS; i++)
        if (!TABLE[i].per_layer && present(cfg, &TABLE[i]) && j-- == 0)
            return i;
    return -1;
}

int mygpt_state_dict_len(const mygpt_config *cfg)
{
    int n = 0;
    for (int i = 0; i < MYGPT_NUM_PARAM_TENSORS; i++)
        if (present(cfg, &TABLE[i]))
            n += TABLE[i].per_layer ? cfg->num_layers : 1;
    return n;
}

/* The per-layer prefix of an architecture's names. */
static const char *layer_prefix(const mygpt_config *cfg)
{
    return cfg->arch == MYGPT_ARCH_LLAMA ? "layers" : course_layout(cfg) ? "blocks" : "trf_blocks";
}

void mygpt_state_dict_entry(const mygpt_config *cfg, const mygpt_params *w, int j, mygpt_state_entry *out)
{
    int layer;
    const int i = state_dict_walk(cfg, j, &layer);
    mygpt_param_info info;
    mygpt_param_info_get(cfg, i, &info);
    memset(out, 0, sizeof *out);
    if (layer >= 0)
        snprintf(out->name, sizeof out->name, "%s.%d.%s", layer_prefix(cfg), layer, info.name);
    else
        snprintf(out->name, sizeof out->name, "%s", info.name);
    out->tensor = i;
    out->layer = layer;
    out->ndim = info.ndim;
    out->shape[0] = info.shape[0];
    out->shape[1] = info.shape[1];
    out->numel = (size_t)info.shape[0] * (size_t)info.shape[1];
    out->data = w ? mygpt_param_tensor(w, i) + (layer >= 0 ? (size_t)layer * out->numel : 0) : NULL;
}

int mygpt_param_info_bias(const mygpt_config *cfg, int i)
{
    const int b = TABLE[i].role == MYGPT_ROLE_LINEAR ? TABLE[i].link : MYGPT_PARAM_none;
    return b != MYGPT_PARAM_none && present(cfg, &TABLE[b]) ? b : MYGPT_PARAM_none;
}

int mygpt_param_info_adapter(const mygpt_config *cfg, int w, int *a, int *b)
{
    *a = *b = MYGPT_PARAM_none;
    for (int i = 0; i < MYGPT_NUM_PARAM_TENSORS; i++)
        if (TABLE[i].link == w && present(cfg, &TABLE[i]) && TABLE[i].role == MYGPT_ROLE_LORA_A)
            *a = i;
        else if (TABLE[i].link == w && present(cfg, &TABLE[i]) && TABLE[i].role == MYGPT_ROLE_LORA_B)
            *b = i;
    assert((*a == MYGPT_PARAM_none) == (*b == MYGPT_PARAM_none));
    return *a != MYGPT_PARAM_none;
}

/* ---- counts ------------------------------------------------------------------------ */

static int is_lora(int i)
{
    return TABLE[i].role == MYGPT_ROLE_LORA_A || TABLE[i].role == MYGPT_ROLE_LORA_B;
}

/* Adds one tensor's floats (all layers) to the module of the chapter's table it is in
 * (the adapters apart: they are the book's "trainable LoRA parameters"). */
static int count_into(mygpt_param_counts *pc, int i, uint64_t numel)
{
    // lesson: param_modules
    uint64_t *module = is_lora(i)             ? &pc->lora
                       : i == MYGPT_PARAM_wte ? &pc->token_embedding
                       : i == MYGPT_PARAM_wpe ? &pc->position_embedding
                       : i == MYGPT_PARAM_lmw ? &pc->head
                       : i == MYGPT_PARAM_lmb ? &pc->head
                       : TABLE[i].per_layer   ? &pc->per_block
                                              : &pc->final_layernorm;
    // end lesson: param_modules
    if (*module > UINT64_MAX - numel)
        return 1;
    *module += numel;
    return 0;
}

mygpt_status mygpt_param_count(const mygpt_config *cfg, mygpt_param_counts *out, mygpt_error *err)
{
    mygpt_config c = *cfg;
    c.vocab_size = cfg->vocab_size > 0 ? cfg->vocab_size : 0;
    c.embed_dim = cfg->embed_dim > 0 ? cfg->embed_dim : 0;
    c.max_seq_len = cfg->max_seq_len > 0 ? cfg->max_seq_len : 0;
    c.num_heads = cfg->num_heads > 0 && cfg->embed_dim % cfg->num_heads == 0 ? cfg->num_heads : 1;
    c.num_kv_heads = cfg->num_kv_heads > 0 && c.num_heads % cfg->num_kv_heads == 0 ? cfg->num_kv_heads : 0;
    c.ffn_hidden = cfg->ffn_hidden > 0 ? cfg->ffn_hidden : 0;
    c.num_layers = 0;
    const uint64_t L = (uint64_t)(cfg->num_layers > 0 ? cfg->num_layers : 0);
    memset(out, 0, sizeof *out);
    int overflow = 0;
    for (int i = 0; i < MYGPT_NUM_PARAM_TENSORS && !overflow; i++) {
        uint64_t n; // one layer's; an adapter's are counted over the layers here
        overflow = row_numel(&c, &TABLE[i], &n);
        if (!overflow && is_lora(i) && TABLE[i].per_layer)
            overflow = n != 0 && L > UINT64_MAX / n;
        overflow = overflow || count_into(out, i, is_lora(i) && TABLE[i].per_layer ? n * L : n);
    }
    // per_block is 12 C^2 + 9 C for the course's model
    if (overflow || (out->per_block != 0 && L > UINT64_MAX / out->per_block))
        return mygpt_fail(err, MYGPT_EOVERFLOW, "parameter count overflows for V=%d C=%d N=%d",
                          cfg->vocab_size, cfg->embed_dim, cfg->num_layers);
    out->blocks = L * out->per_block; // the head is 0 when tied to the token embedding
    out->total = out->token_embedding + out->position_embedding;
    if (out->total < out->token_embedding || out->total > UINT64_MAX - out->blocks ||
        out->total + out->blocks > UINT64_MAX - out->final_layernorm ||
        out->total + out->blocks + out->final_layernorm > UINT64_MAX - out->head ||
        out->total + out->blocks + out->final_layernorm + out->head > UINT64_MAX - out->lora)
        return mygpt_fail(err, MYGPT_EOVERFLOW, "%s", "the model would not fit in memory");
    out->total += out->blocks + out->final_layernorm + out->head + out->lora;
    if (out->total > SIZE_MAX / sizeof(float))
        return mygpt_fail(err, MYGPT_EOVERFLOW, "%s", "the model would not fit in memory");
    return MYGPT_OK;
}

void mygpt_param_counts_of(const mygpt_config *cfg, const size_t *sizes, mygpt_param_counts *out)
{
    memset(out, 0, sizeof *out);
    for (int i = 0; i < MYGPT_NUM_PARAM_TENSORS; i++) // the sizes of the tensors it holds
        count_into(out, i, sizes[i]);
    out->blocks = out->per_block;
    out->per_block /= (uint64_t)cfg->num_layers; // a tied head counts 0: it is wte
    out->total = out->token_embedding + out->position_embedding + out->blocks + out->final_layernorm + out->head +
                 out->lora;
}

/* Document 000's table of the counts (its main's f-strings). */
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
    if (mygpt_arch_get(cfg).rmsnorm) // llama's: a weight only
        mygpt_sb_printf(sb, "Final RMSNorm           (C):        %5llu\n", (unsigned long long)pc->final_layernorm);
    else
        mygpt_sb_printf(sb, "Final LayerNorm       (2*C):        %5llu\n",
                        (unsigned long long)pc->final_layernorm);
    if (pc->head == 0)
        mygpt_sb_printf(sb, "Tied head            (0 extra):     %5llu\n", (unsigned long long)pc->head);
    else if (cfg->num_classes > 0) // the book's chapter-6 head, with its bias
        mygpt_sb_printf(sb, "Class head        (n*C + n):       %5llu\n", (unsigned long long)pc->head);
    else // an untied head (the book's out_head)
        mygpt_sb_printf(sb, "Output head           (V*C):       %5llu\n", (unsigned long long)pc->head);
    if (pc->lora > 0) // appendix E's A and B beside every Linear
        mygpt_sb_printf(sb, "LoRA adapters       (rank %d):     %5llu\n", cfg->lora_rank, (unsigned long long)pc->lora);
    return mygpt_sb_printf(sb, "Total parameters:                  %5llu\n",
                           (unsigned long long)pc->total);
}

/* ---- initialisation ---------------------------------------------------------------- */

/* normal_(mean 0, std) over n floats at data, or the generator moved as if (data NULL) */
static mygpt_status normal_or_skip(mygpt_rng *rng, float *data, size_t n, double std, mygpt_error *err)
{
    return data ? mygpt_normal_(rng, data, n, 0.0, std, err) : mygpt_normal_skip(rng, n, err);
}

/* Ones into the norms' weights (w NULL: nothing) */
static void norms_ones(const mygpt_config *cfg, const mygpt_params *w)
{
    const size_t C = (size_t)cfg->embed_dim, L = (size_t)cfg->num_layers;
    const size_t ones[3] = {L * C, L * C, C}; // the layers' two, the final one
    float *const gammas[3] = {w ? w->ln1w : NULL, w ? w->ln2w : NULL, w ? w->lnfw : NULL};
    for (int i = 0; i < 3 && w; i++)
        for (size_t k = 0; k < ones[i]; k++)
            gammas[i][k] = 1.0f;
}

/* Layer l's c_attn, nanoGPT's one nn.Linear(C, 3C) whose rows are W_q | W_k | W_v: one
 * normal_ over the 3C x C floats (its draws are not three draws of C x C unless C * C is a
 * multiple of 16), then split into the table's wq, wk, wv. */
static mygpt_status nanogpt_c_attn(const mygpt_config *cfg, const mygpt_params *w, int l, mygpt_rng *rng,
                                   mygpt_error *err)
{
    const size_t CC = (size_t)cfg->embed_dim * (size_t)cfg->embed_dim;
    if (!w)
        return mygpt_normal_skip(rng, 3 * CC, err);
    float *qkv = mygpt_float_block(3 * CC); // (3C, C)
    if (!qkv)
        return mygpt_fail(err, MYGPT_ENOMEM, "out of memory for a (%d, %d) c_attn", 3 * cfg->embed_dim,
                          cfg->embed_dim);
    const mygpt_status st = mygpt_normal_(rng, qkv, 3 * CC, 0.0, 0.02, err);
    memcpy(w->wq + (size_t)l * CC, qkv, CC * sizeof(float));
    memcpy(w->wk + (size_t)l * CC, qkv + CC, CC * sizeof(float));
    memcpy(w->wv + (size_t)l * CC, qkv + 2 * CC, CC * sizeof(float));
    free(qkv);
    return st;
}

/* nanoGPT's GPT.__init__ after torch.manual_seed: the modules built (nn.Embedding's
 * normal_, nn.Linear's kaiming-uniform, lm_head's last), then self.apply(_init_weights)
 * (every Linear and Embedding normal(0, 0.02), children before parents: wte, wpe, each
 * block's c_attn, attn.c_proj, c_fc, mlp.c_proj, then lm_head, whose weight the tied wte
 * is), then every c_proj weight again with std 0.02 / sqrt(2 L). LayerNorms are ones. */
static mygpt_status nanogpt_init(const mygpt_config *cfg, const mygpt_params *w, mygpt_rng *rng,
                                 mygpt_error *err)
{
    const size_t C = (size_t)cfg->embed_dim, V = (size_t)cfg->vocab_size, L = (size_t)cfg->num_layers;
    const size_t CC = C * C, M = (size_t)cfg->max_seq_len * C;
    MYGPT_TRY(mygpt_normal_skip(rng, V * C, err)); // nn.Embedding(V, C), then (maxT, C)
    MYGPT_TRY(mygpt_normal_skip(rng, M, err));
    mygpt_uniform_skip(rng, L * 12 * CC); // each block's four nn.Linear: 3CC + CC + 4CC + 4CC
    mygpt_uniform_skip(rng, V * C);       // lm_head
    MYGPT_TRY(normal_or_skip(rng, w ? w->wte : NULL, V * C, 0.02, err)); // apply(_init_weights)
    MYGPT_TRY(normal_or_skip(rng, w ? w->wpe : NULL, M, 0.02, err));
    for (size_t l = 0; l < L; l++) {
        MYGPT_TRY(nanogpt_c_attn(cfg, w, (int)l, rng, err));
        MYGPT_TRY(normal_or_skip(rng, w ? w->wo + l * CC : NULL, CC, 0.02, err));
        MYGPT_TRY(normal_or_skip(rng, w ? w->fc1w + l * 4 * CC : NULL, 4 * CC, 0.02, err));
        MYGPT_TRY(normal_or_skip(rng, w ? w->fc2w + l * 4 * CC : NULL, 4 * CC, 0.02, err));
    }
    MYGPT_TRY(normal_or_skip(rng, w ? w->wte : NULL, V * C, 0.02, err)); // lm_head.weight is wte
    const double std = 0.02 / sqrt(2.0 * (double)L);                      // 0.02/math.sqrt(2 * n_layer)
    for (size_t l = 0; l < L; l++) {
        MYGPT_TRY(normal_or_skip(rng, w ? w->wo + l * CC : NULL, CC, std, err));
        MYGPT_TRY(normal_or_skip(rng, w ? w->fc2w + l * 4 * CC : NULL, 4 * CC, std, err));
    }
    norms_ones(cfg, w); // ln_1, ln_2, ln_f weights
    return MYGPT_OK;
}

/* llama2.c's Transformer.__init__ after torch.manual_seed: the modules built
 * (tok_embeddings' normal_, then each layer's wq, wk, wv, wo, w1, w2, w3 and the output
 * Linear kaiming-uniform), then apply(_init_weights) (each Linear and the Embedding
 * normal(0, 0.02) in that order, output's last, into the tied token embedding), then every
 * wo and w3 weight again with std 0.02 / sqrt(2 L), in named_parameters' order. The norms
 * are ones. (An untied classifier takes output's draw; model.py always ties.) */
static mygpt_status llama_init(const mygpt_config *cfg, const mygpt_params *w, mygpt_rng *rng, mygpt_error *err)
{
    const size_t C = (size_t)cfg->embed_dim, V = (size_t)cfg->vocab_size, L = (size_t)cfg->num_layers;
    const size_t KV = C / (size_t)cfg->num_heads * (size_t)mygpt_kv_heads(cfg), H = (size_t)mygpt_ffn_hidden(cfg);
    const size_t n[7] = {C * C, KV * C, KV * C, C * C, H * C, C * H, H * C}; // one layer's wq .. w3
    float *const t[7] = {w ? w->wq : NULL, w ? w->wk : NULL, w ? w->wv : NULL, w ? w->wo : NULL,
                         w ? w->fc1w : NULL, w ? w->fc2w : NULL, w ? w->w3w : NULL};
    size_t linears = V * C; // output's
    for (int k = 0; k < 7; k++)
        linears += L * n[k];
    MYGPT_TRY(mygpt_normal_skip(rng, V * C, err)); // nn.Embedding(V, C)
    mygpt_uniform_skip(rng, linears);              // every nn.Linear
    MYGPT_TRY(normal_or_skip(rng, w ? w->wte : NULL, V * C, 0.02, err)); // apply(_init_weights)
    for (size_t l = 0; l < L; l++)
        for (int k = 0; k < 7; k++)
            MYGPT_TRY(normal_or_skip(rng, t[k] ? t[k] + l * n[k] : NULL, n[k], 0.02, err));
    float *head = !w ? NULL : cfg->untied_head ? w->lmw : w->wte; // output.weight (the tied wte)
    MYGPT_TRY(normal_or_skip(rng, head, V * C, 0.02, err));
    const double std = 0.02 / sqrt(2.0 * (double)L); // 0.02/math.sqrt(2 * params.n_layers)
    for (size_t l = 0; l < L; l++) {
        MYGPT_TRY(normal_or_skip(rng, t[3] ? t[3] + l * n[3] : NULL, n[3], std, err));
        MYGPT_TRY(normal_or_skip(rng, t[6] ? t[6] + l * n[6] : NULL, n[6], std, err));
    }
    norms_ones(cfg, w);
    return MYGPT_OK;
}

mygpt_status mygpt_params_init(const mygpt_config *cfg, const mygpt_params *w, mygpt_rng *rng,
                               mygpt_error *err)
{
    if (cfg->arch == MYGPT_ARCH_NANOGPT && cfg->lora_rank == 0 && cfg->num_classes == 0)
        return nanogpt_init(cfg, w, rng, err);
    if (cfg->arch == MYGPT_ARCH_LLAMA) // (no adapters or classes: refused by its checks)
        return llama_init(cfg, w, rng, err);
    mygpt_status st = MYGPT_OK;
    const int n = mygpt_state_dict_len(cfg);
    for (int j = 0; j < n && st == MYGPT_OK; j++) { // GPT.__init__ draws in state_dict order
        mygpt_state_entry e;
        mygpt_state_dict_entry(cfg, w, j, &e);
        const size_t rows = (size_t)e.shape[0], cols = (size_t)e.shape[1];
        switch (TABLE[e.tensor].role) {
        case MYGPT_ROLE_EMBEDDING: // nn.Embedding: normal_(0, 1)
            st = w ? mygpt_init_embedding(rng, e.data, rows, cols, err) : mygpt_normal_skip(rng, e.numel, err);
            break;
        case MYGPT_ROLE_LINEAR: { // nn.Linear: kaiming-uniform weight, then its bias uniform
            const int b = mygpt_param_info_bias(cfg, e.tensor);
            if (e.tensor == MYGPT_PARAM_lmw && cfg->num_classes > 0) // the book's chapter 6:
                mygpt_rng_seed(rng, MYGPT_CLASSIFIER_SEED);          // torch.manual_seed(123); out_head = ...
            if (!w) {
                mygpt_uniform_skip(rng, e.numel + (b == MYGPT_PARAM_none ? 0 : rows));
                break;
            }
            float *bias = b == MYGPT_PARAM_none ? NULL : mygpt_param_tensor(w, b) + (e.layer >= 0 ? (size_t)e.layer * rows : 0);
            st = mygpt_init_linear(rng, e.data, bias, cols, rows, err);
            break;
        }
        case MYGPT_ROLE_BIAS:   // drawn with its weight
        case MYGPT_ROLE_LORA_A: // drawn when the adapters are added (mygpt_lora_add)
            break;
        case MYGPT_ROLE_LORA_B: // zeros, as LoRALayer makes them
            for (size_t k = 0; w && k < e.numel; k++)
                e.data[k] = 0.0f;
            break;
        case MYGPT_ROLE_ONES:
        case MYGPT_ROLE_ZEROS:
            for (size_t k = 0; w && k < e.numel; k++)
                e.data[k] = TABLE[e.tensor].role == MYGPT_ROLE_ONES ? 1.0f : 0.0f;
            break;
        }
    }
    return st;
}

mygpt_status mygpt_gpt_skip_init(const mygpt_config *cfg, mygpt_rng *rng, mygpt_error *err)
{
    mygpt_status st = mygpt_config_validate(cfg, err);
    return st == MYGPT_OK ? mygpt_params_init(cfg, NULL, rng, err) : st;
}
