/*
 * kernels/matmul_isa.h - private: what the matmul's driver (matmul.c) and its
 * micro-kernels (matmul_isa.c) share: the block sizes that fix the summation order, how
 * a packed value is read, and the table of one instruction set's kernels.
 */
#ifndef MYGPT_KERNELS_MATMUL_ISA_H
#define MYGPT_KERNELS_MATMUL_ISA_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "mygpt/weights.h"

#define NR_MAX 32 /* widest panel (AVX-512: two zmm registers per row) */
#define MR_MAX 14 /* tallest tile (AVX-512) */
/* k-depth of a packed block. It is part of the summation order (each block's products
 * are summed from zero, then added), so every kernel must use the same KC. */
#define KC 256
#define NC 256 /* columns per packed block: KC x NC floats stay in L2 */

/* Element j of packed row k of B, as a float: B stored as float32 (BF 0), or quantized
 * (mygpt/quantize.h) and widened to exactly its dequantized float: bf16's 16 bits
 * shifted up (BF 1), or int8's (float)q * s with its group's scale (BF 2; s holds the NR
 * scales of the group row k is in). The decoding kernels (QROWS_BODY) widen the same way
 * with intrinsics. */
static inline __attribute__((always_inline)) float b_at(const int BF, const int NR, const void *restrict bp,
                                                        const float *restrict s, int k, int j)
{
    if (BF == MYGPT_WEIGHTS_BF16) {
        const uint32_t u = (uint32_t)((const uint16_t *)bp)[(size_t)k * NR + j] << 16;
        float x;
        memcpy(&x, &u, sizeof x);
        return x;
    }
    if (BF == MYGPT_WEIGHTS_INT8)
        return (float)((const int8_t *)bp)[(size_t)k * NR + j] * s[j];
    return ((const float *)bp)[(size_t)k * NR + j];
}

/* Cache lines the kernel asks for while it runs (the A its unit reads next: next_a_lines):
 * segs runs of seg_lines lines, the runs stride bytes apart from base. Asked for all at
 * once before the kernel, the lines stalled it: more misses at a time than the core
 * tracks. The kernel spreads them over its k steps. A hint only. */
typedef struct lines_ahead {
    const char *base;
    size_t stride;
    int segs, seg_lines;
} lines_ahead;

/* One register tile's work: c (rows x NR, row stride ldc) = (first ? init : c) + a (rows
 * x kc, row stride lda, or transposed) . bp (kc x NR, packed), asking for pf's lines on
 * the way (pf may be NULL). */
typedef struct tile_args {
    const float *a;
    size_t lda;
    const float *bp;
    float *c;
    size_t ldc;
    const float *init; /* the bias, or NULL for zero (first only) */
    const lines_ahead *pf;
    int rows, kc, first;
} tile_args;
typedef void (*kernel_fn)(const tile_args *t);
typedef void (*gelu_fn)(float *c, size_t ldc, int rows, int cols);

/* One NR-wide panel of B: dst[k*NR + j] = B(k0 + k, n0 + j) for k < kc, j < cols;
 * columns j >= cols (past N) are zero. src points at B(k0, n0). B is either a weight
 * (N, K), element (k, n) at src[n * ldb + k] (the forward and dinp's weight^T), or a
 * (K, N) matrix, b_kmajor, element (k, n) at src[k * ldb + n] (the backward's weight and
 * inp). NR is the set's. */
typedef void (*pack_fn)(float *restrict dst, const float *restrict src, size_t ldb, int kc, int cols, int b_kmajor);
typedef void (*copy_strips_fn)(float *restrict dst, size_t stride, int MR, const float *restrict a, size_t lda, int kc,
                               size_t rows);
typedef void (*store_swapped_fn)(float *restrict o, size_t ldo, const float *restrict c, int NR, int rows, int cols,
                                 int add);

/* One row of a prepacked or quantized B over np panels at once (decoding; QROWS_BODY), 1
 * to 4: c (cols of np panels of NR) = (first ? init : c) + a (kc) . the panels at bp,
 * panel i's values bstride elements after panel i - 1's, int8's scales sstride floats
 * apart from sc. A last panel past N is read whole (its columns past N are zero) and
 * written only up to cols. Returns 0 for np outside 1 to 4 (the tiles then). */
typedef struct qrows_args {
    const float *a;
    const void *bp;
    size_t bstride;
    const float *sc;
    size_t sstride;
    float *c;
    const float *init;
    int kc, first;
} qrows_args;
typedef int (*qrows_fn)(const qrows_args *r, int np, int cols);

/* The kernels of one instruction set: its tile MR x NR (the packing follows NR). */
typedef struct matmul_isa {
    const char *name;
    int MR, NR;
    kernel_fn rows_a, transposed_a; /* a stored row by row, or transposed */
    gelu_fn gelu;
    pack_fn pack;             /* B's panels (NR wide) */
    copy_strips_fn copy_strips; /* A read transposed: a unit's strips (copy_unit_a) */
    store_swapped_fn store_swapped; /* a swapped tile back into out (swapped_tile_finish) */
    int decode_panels;        /* one row of a prepacked B: panels at once, 1 to 4 (0: tile by tile) */
    qrows_fn decode[MYGPT_WEIGHTS_COUNT]; /* by format: a quantized row's values widened */
} matmul_isa;

/* The kernels of the instruction set this CPU runs (kernels/cpu.h's choice, after
 * MYGPT_MATMUL_KERNEL); every set gives the same bits. */
matmul_isa mygpt_matmul_isa(void);

#endif
