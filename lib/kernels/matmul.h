/*
 * kernels/matmul.h - private to the library: the matmul's entry points beyond the
 * public mygpt/layers.h: the backward with a caller's workspace, and weights packed
 * once into the fast kernel's panels (float32, or int8 / bf16 widened in registers).
 */
#ifndef MYGPT_KERNELS_MATMUL_H
#define MYGPT_KERNELS_MATMUL_H

#include <stddef.h>
#include <stdint.h>

#include "mygpt/error.h"
#include "mygpt/weights.h"

/* A weight (N, K) packed once into the fast kernel's panels (NR columns each, all K,
 * k-major), for products that reuse it many times (decoding token after token): the
 * matmul then reads each weight once per call and packs nothing. The panels follow the
 * CPU's kernel (NR); mygpt_matmul_prepacked refuses a packing made for another. Same
 * bits as mygpt_matmul (or mygpt_matmul_gelu) with the unpacked weight. */
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
    int value_bytes; /* of a value in the panels: 4 (float32), 2 (bf16), 1 (int8) */
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

/* One product of a pass, out (M, N) = inp (M, K) W^T + bias (or NULL), then GELU when
 * gelu: W (N, K) the weight as it is, or pw when it is a packing this CPU's kernel can use
 * (mygpt_matmul_packed_fits; then weight is ignored). */
typedef struct mygpt_product {
    float *out;
    const float *inp, *weight, *bias;
    const mygpt_packed_weight *pw;
    size_t M;
    int K, N, gelu;
} mygpt_product;

/* nn.Linear's gradient through the fast kernel, each output NULL to skip it:
 *   dinp (N, C) (+)= dout (N, OC) @ weight (OC, C)   (set_dinp: written instead of added)
 *   dweight (OC, C) (+)= dout^T @ inp (N, C)         (set_dweight: the same)
 *   dbias (OC) += the column sums of dout
 * Written is what adding to zeros gives, bit for bit (a sum from +0 is never -0), with no
 * partial sums to keep apart. */
typedef struct mygpt_product_grad {
    float *dinp, *dweight, *dbias;
    const float *dout, *inp, *weight;
    size_t N;
    int C, OC;
    int set_dinp, set_dweight;
} mygpt_product_grad;

/* A planned pass sizes its products' workspace once: the bytes pr and g (either may be
 * 0 or NULL: pr->M 0, g NULL) need with the current team (omp_get_max_threads()), 0 for
 * none, SIZE_MAX for a product too large to share out; their pointers are not read. Then
 * each runs in a workspace at least that large, and cannot fail. */
size_t mygpt_product_workspace(const mygpt_product *pr, const mygpt_product_grad *g);
void mygpt_product_run(const mygpt_product *pr, void *ws, size_t ws_bytes);
void mygpt_product_grad_run(const mygpt_product_grad *g, void *ws, size_t ws_bytes);

/* The gradient with a workspace of its own (MYGPT_ENOMEM when it cannot be had). */
mygpt_status mygpt_matmul_grad(const mygpt_product_grad *g, mygpt_error *err);

/* The matmul kernel this CPU gets ("avx512", "avx2", "neon" or "generic"), after
 * MYGPT_MATMUL_KERNEL: for tests and the benchmark. */
const char *mygpt_matmul_kernel_name(void);

#endif
