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

/* The matmul kernel this CPU gets ("avx512", "avx2" or "generic"), after
 * MYGPT_MATMUL_KERNEL: for tests and the benchmark. */
const char *mygpt_matmul_kernel_name(void);

#endif
