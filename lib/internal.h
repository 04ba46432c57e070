/*
 * internal.h - private to the library (hidden from libmygpt.so's exports): error
 * filling, overflow checks, string building, shortest float digits, the RdBu colour
 * map, skipping draws, the parameter table's rows, and the kernels' private entry
 * points (the matmul's workspace and packed weights, the KV-cache attention). Programs of this repository that link the static library may use them;
 * users of the installed library see only the public headers.
 */
#ifndef MYGPT_INTERNAL_H
#define MYGPT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "mygpt/error.h"
#include "mygpt/gpt.h"
#include "mygpt/print.h"

/* Records `code` and a printf-style message in *err (if err is not NULL) and
 * returns `code`, so library code can write `return mygpt_fail(err, ...)`. */
mygpt_status mygpt_fail(mygpt_error *err, mygpt_status code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Multiplies a * b into *out; returns 0 if the product fits in size_t,
 * 1 (and leaves *out untouched) if it would overflow. */
int mygpt_mul_overflows(size_t a, size_t b, size_t *out);

/* n floats aligned for the vector kernels (huge pages for a big block), or NULL (gpt.c) */
float *mygpt_float_block(size_t n);

/* A view's row-major strides (strides[d], in elements) and element count. A zero size
 * anywhere makes the count 0 (strides unset) before any product is formed, so the other
 * sizes may be as large as they like; MYGPT_EOVERFLOW if the count overflows int64. */
mygpt_status mygpt_row_major_strides(const mygpt_tview *t, int64_t *strides, int64_t *numel);

/* Appends text; on allocation failure sets sb->failed and returns MYGPT_ENOMEM. */
mygpt_status mygpt_sb_append(mygpt_strbuf *sb, const char *s);
mygpt_status mygpt_sb_appendn(mygpt_strbuf *sb, const char *s, size_t n);
mygpt_status mygpt_sb_printf(mygpt_strbuf *sb, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
mygpt_status mygpt_sb_repeat(mygpt_strbuf *sb, char c, size_t count);

/* The shortest decimal digits that round-trip to float32 x, as numpy's Dragon4
 * finds them: writes the significant digits (no sign, no dot) to digits and
 * returns the decimal exponent e such that x = 0.d1d2... * 10^e... precisely:
 * |x| = d1.d2d3... * 10^(*exp10). x must be finite and non-zero. */
int mygpt_shortest_f32(float x, char digits[16], int *exp10);

/* The RdBu colour of t in [0, 1] (0 = dark red, 0.5 = white, 1 = dark blue). */
void mygpt_rdbu(double t, int rgb[3]);

/* The generator as after uniform_ (rng.c) or normal_ (normal.c) over n floats, the
 * floats not computed: the big draws are skipped as 32-bit outputs; normal_'s small
 * path (n < 16) keeps a Box-Muller partner pending, so those samples are drawn. */
struct mygpt_rng;
void mygpt_uniform_skip(struct mygpt_rng *rng, size_t n);
mygpt_status mygpt_normal_skip(struct mygpt_rng *rng, size_t n, mygpt_error *err);

/* How GPT.__init__ fills a tensor of the parameter table (its role column). */
typedef enum mygpt_param_role {
    MYGPT_ROLE_EMBEDDING, MYGPT_ROLE_LINEAR, MYGPT_ROLE_BIAS, MYGPT_ROLE_ONES, MYGPT_ROLE_ZEROS
} mygpt_param_role;

/* One table row, with its sizes for a configuration. */
typedef struct mygpt_param_info {
    const char *field;       /* "wq"                                           */
    const char *name;        /* "attn.W_q.weight" (after "blocks.<l>." if per layer): the arch's */
    const char *hf_name;     /* Hugging Face's ("attn.c_attn.weight", after "h.<l>.")   */
    int present;             /* 0: the architecture has no such tensor (numel 0)      */
    int per_layer;           /* 1: stacked over the layers                     */
    int ndim;                /* 1 or 2                                         */
    int64_t shape[2];        /* one layer's shape                              */
    mygpt_param_role role;
    int bias;                /* a LINEAR weight's bias tensor, or MYGPT_PARAM_none */
    size_t numel;            /* floats in the block, all layers                */
    size_t offset;           /* where the tensor starts in the block           */
} mygpt_param_info;

/* Table row i (0 <= i < MYGPT_NUM_PARAM_TENSORS) for cfg (a validated configuration). */
void mygpt_param_info_get(const mygpt_config *cfg, int i, mygpt_param_info *out);
/* Row i's bias under cfg's architecture, or MYGPT_PARAM_none. */
int mygpt_param_info_bias(const mygpt_config *cfg, int i);

/* From the parameter table (lib/params.c): each tensor's floats, all layers; the views
 * of w into a block of that layout (parameters, or gradients); tensor i's view; and the
 * initial values GPT.__init__ draws from rng, in its order (w NULL: only the generator
 * moves on, as mygpt_gpt_skip_init). */
struct mygpt_params;
struct mygpt_config;
struct mygpt_rng;
void mygpt_param_sizes(const struct mygpt_config *cfg, size_t *sizes);
void mygpt_params_carve(struct mygpt_params *w, float *block, const size_t *sizes);
float *mygpt_param_tensor(const struct mygpt_params *w, int i);
mygpt_status mygpt_params_init(const struct mygpt_config *cfg, const struct mygpt_params *w,
                               struct mygpt_rng *rng, mygpt_error *err);

/* mygpt_matmul_backward with a caller's workspace of
 * mygpt_matmul_backward_workspace(N, C, OC, set_dinp, set_dweight) floats (0: none
 * needed) instead of its own allocation (the training loop keeps one, so the partial
 * sums do not fault in fresh pages every step). set_dinp / set_dweight: the gradient
 * is written instead of added (what adding it to zeros gives, bit for bit: a sum from
 * +0 is never -0), with no partial sums to keep apart. */
size_t mygpt_matmul_backward_workspace(size_t N, int C, int OC, int set_dinp, int set_dweight);
mygpt_status mygpt_matmul_backward_ws(float *dinp, int set_dinp, float *dweight, int set_dweight, float *dbias, const float *dout,
                                      const float *inp, const float *weight, size_t N, int C, int OC,
                                      float *ws, mygpt_error *err);

/* A weight (N, K) packed once into the fast kernel's panels (NR columns each, all K,
 * k-major), for products that reuse it many times (decoding token after token): the
 * matmul then reads each weight once per call and packs nothing. The panels follow the
 * CPU's kernel (NR); mygpt_matmul_prepacked refuses a packing made for another. Same
 * bits as mygpt_matmul_ex with the unpacked weight. */
typedef struct mygpt_packed_weight {
    float *panels;
    const float *weight; /* what was packed, (N, K): read as it is by products computed
                            swapped (many weight rows, few activation rows) */
    int K, N, NR;
    /* A quantized weight (mygpt_matmul_pack_quantized): qpanels hold the stored values
     * (int8 or bf16) in the same panel layout and panels is NULL; int8's scales sit
     * panel by panel, group by group, NR to a group (qscales). The kernels widen each
     * value to its dequantized float in a register: the bits of the float32 product
     * with the dequantized weight, which is `weight`. */
    mygpt_weights format;
    void *qpanels;
    float *qscales;
} mygpt_packed_weight;
mygpt_status mygpt_matmul_pack(mygpt_packed_weight *pw, const float *weight, int K, int N,
                               mygpt_error *err);
/* Packs a quantized weight (N, K): q holds N * K int8_t or uint16_t (bf16) values, row
 * by row, scales (int8) N rows of mygpt_int8_groups(K). weight is its dequantized float
 * copy (N, K), kept as the packing's `weight`. */
mygpt_status mygpt_matmul_pack_quantized(mygpt_packed_weight *pw, mygpt_weights format, const void *q,
                                         const float *scales, const float *weight, int K, int N,
                                         mygpt_error *err);
void mygpt_matmul_packed_free(mygpt_packed_weight *pw);
/* Whether pw is a packing this CPU's kernel can use (not NULL, made for its NR) */
int mygpt_matmul_packed_fits(const mygpt_packed_weight *pw);
mygpt_status mygpt_matmul_prepacked(float *out, const float *inp, const mygpt_packed_weight *pw,
                                    const float *bias, size_t M, int apply_gelu, mygpt_error *err);

/* Every matmul weight of a model packed once (lib/packed.c): each LINEAR tensor of the
 * parameter table, layer by layer, and the head (the tied token embedding, V x C). */
typedef struct mygpt_packed_model {
    int layers;
    mygpt_packed_weight head;
    mygpt_packed_weight *linear[MYGPT_NUM_PARAM_TENSORS]; /* per LINEAR tensor: one per layer, in weights[] */
    mygpt_packed_weight weights[];                        /* every layer's LINEAR tensors, one allocation */
} mygpt_packed_model;
/* Tensor i's packing for layer l (0 for a whole-model tensor), NULL when p is NULL. */
static inline const mygpt_packed_weight *mygpt_packed_find(const mygpt_packed_model *p, int i, int l)
{
    return p && p->linear[i] ? &p->linear[i][l] : NULL;
}
struct mygpt_gpt;
/* A model's quantized tensors (lib/quantize.c): for each table row that
 * mygpt_weights_quantizes, all its layers as one (rows, cols) matrix of stored values
 * (int8_t or uint16_t), and int8's scales (rows, mygpt_int8_groups(cols)); NULL for a
 * row kept in float32. One allocation. */
typedef struct mygpt_quantized {
    mygpt_weights format;
    void *q[MYGPT_NUM_PARAM_TENSORS];
    float *scales[MYGPT_NUM_PARAM_TENSORS];
    size_t rows[MYGPT_NUM_PARAM_TENSORS];
    int cols[MYGPT_NUM_PARAM_TENSORS];
    void *memory;
} mygpt_quantized;
/* Room for cfg's quantized tensors in format (not filled). */
mygpt_status mygpt_quantized_alloc(mygpt_quantized **out, const mygpt_config *cfg, mygpt_weights format,
                                   mygpt_error *err);
void mygpt_quantized_free(mygpt_quantized *qz);
/* Gives g the quantized tensors qz (filled, g float32): checks every stored value (int8
 * in [-127, 127], finite non-negative scales, finite bf16), packs them, and writes their
 * dequantized values into g->params. On failure g is unchanged and qz freed. */
mygpt_status mygpt_gpt_attach_quantized(struct mygpt_gpt *g, mygpt_quantized *qz, mygpt_error *err);
mygpt_status mygpt_packed_model_make(mygpt_packed_model **out, const struct mygpt_gpt *g, mygpt_error *err);
void mygpt_packed_model_free(mygpt_packed_model *p);

/* The KV-cache step's attention (attention.c): n new query rows (n, C) at positions
 * t0 .. t0 + n - 1 against one layer's cached keys and values kc, vc (M, C), rows 0 to
 * each query's position, into out (n, C). The new keys (kc's rows t0 ..) are first
 * copied into kt, the layer's keys transposed block by block (mygpt_kv_cache), which the
 * scores read. rows holds nrows rows of M scores, one per thread that may run. The same
 * sums as the forward's attention_row: the same bits. */
void mygpt_attention_cached(float *out, const float *q, const float *kc, float *kt, const float *vc, int n, int t0,
                            int M, int C, int NH, float *rows, int nrows);

/* The matmul / attention kernel this CPU gets ("avx512", "avx2" or "generic"), after
 * MYGPT_MATMUL_KERNEL / MYGPT_ATTENTION_KERNEL: for tests and the benchmark. */
const char *mygpt_matmul_kernel_name(void);
const char *mygpt_attention_kernel_name(void);

#endif
