/*
 * mygpt/config.h - the model's configuration and vocabulary: whose GPT (mygpt_arch) and
 * its sizes (mygpt_config), the parameter table every tensor of every architecture is a
 * row of (MYGPT_PARAMETERS) with the views it gives (mygpt_params), the state_dict's
 * entries and the counts. What the model's lower parts read (the block, the table's
 * layout, the packing, the KV cache); the model object itself is mygpt/gpt.h's.
 */
#ifndef MYGPT_CONFIG_H
#define MYGPT_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "mygpt/error.h"
#include "mygpt/rng.h"

#ifdef __cplusplus
extern "C" {
#endif

/* everything declared here is exported by libmygpt.so (lib/exports.txt) */
#pragma GCC visibility push(default)

/* Whose GPT: the switches of the parameter table and of the block (mygpt_arch_get).
 *   course             the course's model (docs/model-spec.md): no attention biases, exact
 *                      GELU, the head tied to the token embedding, no dropout
 *   llms-from-scratch  Raschka's GPTModel (Build a Large Language Model (From Scratch),
 *                      ch. 4): out_proj's bias (and W_query/W_key/W_value's when
 *                      qkv_bias), the tanh GELU, an untied out_head drawn last, dropout
 *   gpt2               GPT-2 (Hugging Face's gpt2 checkpoints): the book's GPTModel with
 *                      qkv_bias and the head tied to the token embedding
 *   nanogpt            nanoGPT's GPT (karpathy/nanoGPT, model.py) with bias=False: no bias
 *                      in any Linear or LayerNorm, exact GELU, the head tied to the token
 *                      embedding, dropout; its own initialisation (_init_weights)
 *   llama              Llama 2 as llama2.c's model.py builds it: RMSNorm (eps 1e-5, no bias),
 *                      rotary positions (no position embedding), a SwiGLU feed-forward
 *                      (w1, w2, w3 of the hidden size), grouped-query attention, no biases,
 *                      a tied or untied classifier; forward, backward (training) and KV
 *                      cache */
typedef enum mygpt_arch {
    MYGPT_ARCH_COURSE = 0,
    MYGPT_ARCH_LLMS_FROM_SCRATCH = 1,
    MYGPT_ARCH_GPT2 = 2,
    MYGPT_ARCH_NANOGPT = 3,
    MYGPT_ARCH_LLAMA = 4,
    MYGPT_ARCH_COUNT /* how many there are */
} mygpt_arch;

typedef struct mygpt_config {
    int vocab_size;  /* V */
    int embed_dim;   /* C, divisible by num_heads */
    int num_heads;   /* NH */
    int num_layers;  /* L (N in the chapter) */
    int max_seq_len; /* maxT: rows of the position embedding */
    mygpt_arch arch; /* 0: the course's model */
    int qkv_bias;    /* llms-from-scratch: the book's qkv_bias, 0 or 1 (the others' architecture decides) */
    double dropout;  /* p of the book's four dropouts, in train mode (course: must be 0) */
    int num_classes; /* 0: the language-model head (V rows); n > 0: a classification head
                        nn.Linear(C, n) with its bias, drawn as the book's chapter 6 draws it
                        (MYGPT_CLASSIFIER_SEED: torch.manual_seed(123), then the new head) */
    int lora_rank;     /* 0: no adapters; r > 0: every nn.Linear is the book's LinearWithLoRA
                          (appendix E): W x + b + (alpha / r) (x A) B, A (in, r), B (r, out)
                          (mygpt/lora.h) */
    double lora_alpha; /* alpha of the adapters (used when lora_rank > 0) */
    /* llama's sizes and choices (0 in every field: as the other architectures have it) */
    int num_kv_heads;  /* heads of keys and values, each shared by num_heads / num_kv_heads
                          query heads (grouped-query attention); 0 or num_heads: one each */
    int ffn_hidden;    /* the feed-forward's hidden size; 0: 4C, or for llama model.py's
                          rule mygpt_llama_hidden_dim(C, 256) */
    int rope;          /* llama's rotary convention (mygpt_rope_style) */
    int untied_head;   /* llama: 1 for a classifier of its own (output.weight), 0 for the
                          token embedding's (model.py's default) */
} mygpt_config;

/* How rotary positions pair a head's channels (pair i turned by pos * 10000^(-2i/d)):
 * llama2.c's and Meta's interleaved pairs (2i, 2i + 1), or Hugging Face's halves (i,
 * i + d/2, its rotate_half) */
typedef enum mygpt_rope_style {
    MYGPT_ROPE_INTERLEAVED = 0,
    MYGPT_ROPE_HALVES = 1
} mygpt_rope_style;

/* llama's RMSNorm epsilon (model.py's norm_eps, run.c's 1e-5f) */
#define MYGPT_RMSNORM_EPS 1e-5f

/* model.py's hidden size of the feed-forward for dim C: int(2 * 4C / 3) rounded up to a
 * multiple of multiple_of (>= 1); 11008 for C = 4096 and 256. 0 for sizes out of range. */
int mygpt_llama_hidden_dim(int dim, int multiple_of);

/* The heads of keys and values: num_kv_heads, or num_heads when it is 0. */
int mygpt_kv_heads(const mygpt_config *cfg);

/* The feed-forward's hidden size: ffn_hidden, or its default (4C; llama: model.py's rule
 * with multiple_of 256). */
int mygpt_ffn_hidden(const mygpt_config *cfg);

/* The largest lora_rank (the book's runs use 8 to 16). */
#define MYGPT_LORA_MAX_RANK 1024

/* lora_alpha's bounds, both included: a normal number, which a checkpoint writes as text
 * and reads back as the same double, and whose scale alpha / rank is a normal float for
 * every rank */
#define MYGPT_LORA_ALPHA_MIN 1e-30
#define MYGPT_LORA_ALPHA_MAX 1e30

/* The seed the book sets right before drawing its classification head. */
#define MYGPT_CLASSIFIER_SEED 123

/* The switches an architecture sets. */
typedef struct mygpt_arch_switches {
    int qkv_bias;     /* biases on W_q, W_k, W_v                                   */
    int out_bias;     /* a bias on the attention's output projection W_o           */
    int gelu_tanh;    /* GELU 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), else exact */
    int untied_head;  /* a head of its own (V, C), drawn last; else the token embedding */
    int bias_free;    /* no bias in fc1, fc2 or any LayerNorm (nanoGPT's bias=False)    */
    int rmsnorm;      /* RMSNorm (eps 1e-5, a weight only) where the GPT has LayerNorm   */
    int rope;         /* rotary positions on q and k, and no position embedding (wpe)   */
    int swiglu;       /* fc2(SiLU(fc1(x)) * w3(x)) where the GPT has fc2(GELU(fc1(x)))   */
} mygpt_arch_switches;

/* The switches of cfg's architecture. */
mygpt_arch_switches mygpt_arch_get(const mygpt_config *cfg);

/* Columns of the logits: num_classes for a classification head, else vocab_size. */
int mygpt_head_size(const mygpt_config *cfg);

/* "course", "llms-from-scratch", "gpt2", "nanogpt", "llama"; and back (MYGPT_EINVAL for another name). */
const char *mygpt_arch_name(mygpt_arch arch);
mygpt_status mygpt_arch_parse(const char *name, mygpt_arch *out, mygpt_error *err);

/* One nn.Linear as the table's rows: its weight w (out, in), its bias b (out), then its
 * LoRA adapter's A (in, R) and B (R, out) (appendix E; named as the Linear with ".lora.A"
 * and ".lora.B", in the state_dict only, drawn by mygpt_lora_add); course, book, hf and
 * llama name the Linear, ".weight" and ".bias" are added. */
#define MYGPT_LINEAR_ROWS(X, w, b, x, course, book, hf, llama, per_layer, in, out, w_when, b_when, lora_when)      \
    X(w, course ".weight", book ".weight", hf ".weight", llama ".weight", per_layer, out, in, LINEAR, b, w_when) \
    X(b, course ".bias", book ".bias", hf ".bias", llama ".bias", per_layer, out, ONE, BIAS, none, b_when)     \
    X(x##A, course ".lora.A", book ".lora.A", NULL, NULL, per_layer, in, R, LORA_A, w, lora_when)             \
    X(x##B, course ".lora.B", book ".lora.B", NULL, NULL, per_layer, R, out, LORA_B, w, lora_when)

/* The parameter table: every tensor of every architecture, one line each, in the
 * order of the one block that holds them (llm.c's layout: a per-layer tensor is
 * stacked over the layers, so wq is (L, C, C) and layer l's W_q is wq + l * C * C).
 * Everything about the parameters derives from it: the struct below, the sizes that
 * carve the block (lib/model/params.c), the state_dict names and shapes a checkpoint and
 * `mygpt init gpt` list, the draws that initialise them, the weights packed for the
 * matmul, the counts. A bias is one row here and its weight's link column (the block's
 * products read it from the table); a tensor of a new kind needs its use in the block too.
 *
 *   X(field, course name, book name, Hugging Face name, llama name, per layer, rows, cols, role, link, when)
 *
 * names: the state_dict's under each architecture (gpt2's in memory are the book's;
 * Hugging Face's are its files'; llama's are llama2.c's model.py's), after "blocks.<l>." /
 * "trf_blocks.<l>." / "h.<l>." / "layers.<l>." for a per-layer tensor (NULL: never there). Hugging Face's Conv1D stores a weight (in, out), and rows
 * that share a name there are one tensor, concatenated along out in table order
 * (c_attn = W_q | W_k | W_v). rows x cols: the shape of one layer's tensor (cols ONE:
 * a vector) in sizes of the config (V, MAXT, C, KV = the keys' and values' width, C
 * without grouped heads, H = the feed-forward's hidden size, 4C in a GPT, HEAD =
 * num_classes, or V without, R = lora_rank).
 * role: how __init__ fills it: EMBEDDING (normal(0, 1)), LINEAR (a weight (out, in),
 * kaiming-uniform, with its bias, the `link` row, drawn right after it when it has one),
 * BIAS (drawn by its weight), ONES, ZEROS (LayerNorm's gamma and beta), LORA_A, LORA_B
 * (appendix E's adapter of the LINEAR row `link`: drawn by mygpt_lora_add, not by
 * __init__). A Linear's four rows (weight, bias, adapter) are one line, MYGPT_LINEAR_ROWS. when:
 * the architectures that have it (ALWAYS, QKV_BIAS, OUT_BIAS, UNTIED, BIASED (not bias_free),
 * POSITIONS (not rope), SWIGLU: mygpt_arch_switches; NEVER: a row kept only for its
 * Linear's shape,
 * or a classification head; CLASSES: a classification head, num_classes > 0; LORA:
 * lora_rank > 0; LORA_HEAD: that and a head of its own, as a tied head is the embedding,
 * not a Linear); an absent tensor has no floats. The state_dict order is the tensors before the first per-layer one,
 * then each layer's (the book's and GPT-2's list a layer's LayerNorms last, as their
 * TransformerBlock registers them), then the rest, and it is also the order of the
 * draws (the book's out_head is drawn last: a classification head after the generator is
 * seeded again with MYGPT_CLASSIFIER_SEED). A tied head is the token embedding. */
#define MYGPT_PARAMETERS(X)                                                                                                                          \
    X(wte,  "token_embedding.embedding.weight", "tok_emb.weight",   "wte.weight",  "tok_embeddings.weight",  0, V,    C,   EMBEDDING, none, ALWAYS)       \
    X(wpe,  "position_embedding.weight",        "pos_emb.weight",   "wpe.weight",  NULL,                     0, MAXT, C,   EMBEDDING, none, POSITIONS)    \
    X(ln1w, "ln1.gamma",                        "norm1.scale",      "ln_1.weight", "attention_norm.weight",  1, C,    ONE, ONES,      none, ALWAYS)       \
    X(ln1b, "ln1.beta",                         "norm1.shift",      "ln_1.bias",   NULL,                     1, C,    ONE, ZEROS,     none, BIASED)       \
    MYGPT_LINEAR_ROWS(X, wq,   bq,   q,   "attn.W_q", "att.W_query",  "attn.c_attn", "attention.wq",    1, C,  C,    ALWAYS, QKV_BIAS, LORA)             \
    MYGPT_LINEAR_ROWS(X, wk,   bk,   k,   "attn.W_k", "att.W_key",    "attn.c_attn", "attention.wk",    1, C,  KV,   ALWAYS, QKV_BIAS, LORA)             \
    MYGPT_LINEAR_ROWS(X, wv,   bv,   v,   "attn.W_v", "att.W_value",  "attn.c_attn", "attention.wv",    1, C,  KV,   ALWAYS, QKV_BIAS, LORA)             \
    MYGPT_LINEAR_ROWS(X, wo,   bo,   o,   "attn.W_o", "att.out_proj", "attn.c_proj", "attention.wo",    1, C,  C,    ALWAYS, OUT_BIAS, LORA)             \
    X(ln2w, "ln2.gamma",                        "norm2.scale",      "ln_2.weight", "ffn_norm.weight",        1, C,    ONE, ONES,      none, ALWAYS)       \
    X(ln2b, "ln2.beta",                         "norm2.shift",      "ln_2.bias",   NULL,                     1, C,    ONE, ZEROS,     none, BIASED)       \
    MYGPT_LINEAR_ROWS(X, fc1w, fc1b, fc1, "mlp.fc1",  "ff.layers.0",  "mlp.c_fc",    "feed_forward.w1", 1, C,  H,    ALWAYS, BIASED,   LORA)             \
    MYGPT_LINEAR_ROWS(X, fc2w, fc2b, fc2, "mlp.fc2",  "ff.layers.2",  "mlp.c_proj",  "feed_forward.w2", 1, H,  C,    ALWAYS, BIASED,   LORA)             \
    MYGPT_LINEAR_ROWS(X, w3w,  w3b,  w3,  "mlp.fc3",  "ff.w3",        "mlp.w3",      "feed_forward.w3", 1, C,  H,    SWIGLU, NEVER,    NEVER)            \
    X(lnfw, "ln_f.gamma",                       "final_norm.scale", "ln_f.weight", "norm.weight",            0, C,    ONE, ONES,      none, ALWAYS)       \
    X(lnfb, "ln_f.beta",                        "final_norm.shift", "ln_f.bias",   NULL,                     0, C,    ONE, ZEROS,     none, BIASED)       \
    MYGPT_LINEAR_ROWS(X, lmw,  lmb,  lm,  "lm_head",  "out_head",     "lm_head",     "output",          0, C,  HEAD, UNTIED, CLASSES,  LORA_HEAD)

/* MYGPT_PARAM_wte, MYGPT_PARAM_wpe, ...: a tensor's index in the table */
enum mygpt_param_index {
#define MYGPT_PARAM_INDEX_(field, ...) MYGPT_PARAM_##field,
    MYGPT_PARAMETERS(MYGPT_PARAM_INDEX_)
#undef MYGPT_PARAM_INDEX_
    MYGPT_NUM_PARAM_TENSORS,
    MYGPT_PARAM_none = -1
};

/* The parameters (or the gradients: the same layout), views into one block. */
typedef struct mygpt_params {
#define MYGPT_PARAM_FIELD_(field, ...) float *field;
    MYGPT_PARAMETERS(MYGPT_PARAM_FIELD_)
#undef MYGPT_PARAM_FIELD_
} mygpt_params;

/* One entry of the state_dict: its full name, its data in a parameter (or gradient)
 * block and its shape. */
typedef struct mygpt_state_entry {
    char name[96];
    int tensor;              /* the table row                                  */
    int layer;               /* -1 for a tensor of the whole model             */
    int ndim;
    int64_t shape[2];
    float *data;
    size_t numel;
} mygpt_state_entry;

/* Tensors in the state_dict (named_parameters()) of a model of this configuration. */
int mygpt_state_dict_len(const mygpt_config *cfg);

/* Entry j (0 <= j < mygpt_state_dict_len) of the state_dict of the tensors w holds. */
void mygpt_state_dict_entry(const mygpt_config *cfg, const mygpt_params *w, int j,
                            mygpt_state_entry *out);

/* Parameter counts as the chapter tabulates them (sum of numel per module). */
typedef struct mygpt_param_counts {
    uint64_t token_embedding;    /* V * C                      */
    uint64_t position_embedding; /* maxT * C                   */
    uint64_t per_block;          /* 12 C^2 + 9 C (course)      */
    uint64_t blocks;             /* L * per_block              */
    uint64_t final_layernorm;    /* 2 C                        */
    uint64_t head;               /* 0 when tied to the embedding */
    uint64_t lora;               /* the adapters' A and B, all layers and the head (0 without) */
    uint64_t total;
} mygpt_param_counts;

/* Checks a configuration: every size >= 1, C divisible by num_heads, and the
 * parameter count fits in memory arithmetic (each forward pass checks its own
 * activations' sizes). */
mygpt_status mygpt_config_validate(const mygpt_config *cfg, mygpt_error *err);

/* Counts parameters without building the model (works for GPT-2 small too). */
mygpt_status mygpt_param_count(const mygpt_config *cfg, mygpt_param_counts *out, mygpt_error *err);

/* Moves rng on exactly as mygpt_gpt_create_from would (torch.manual_seed(S); GPT(...)
 * when the weights come from elsewhere, a checkpoint say), without building the model
 * or computing its values: the big tensors' draws are skipped, not transformed. */
mygpt_status mygpt_gpt_skip_init(const mygpt_config *cfg, mygpt_rng *rng, mygpt_error *err);

/* Appends document 000's parameter table (the first tutorial: chapters/README.md; its
 * `main`'s six f-string lines, each ending in a newline) for a model with these counts
 * and num_layers N:
 *   Token embedding       (V*C):          16
 *   ...
 *   Total parameters:                    736                                    */
struct mygpt_strbuf;
mygpt_status mygpt_param_table(struct mygpt_strbuf *sb, const mygpt_config *cfg,
                               const mygpt_param_counts *pc);

/* The field name of table row i ("wte", "wpe", "ln1w", ...), "?" outside the table. */
const char *mygpt_param_tensor_name(int i);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
