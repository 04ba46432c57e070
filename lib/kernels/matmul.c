/*
 * matmul.c - the fast linear layer: out (M, N) = inp (M, K) @ weight (N, K)^T + bias,
 * optionally followed by GELU, with the same math as mygpt_matmul_naive (reference.c).
 * Here M is the rows (the block's N = B * T), K the inputs (its C), N the outputs (its
 * OC). This file is the driver; the register tiles per instruction set are matmul_isa.c's.
 *
 * How it is fast (GotoBLAS's scheme, in plain C):
 *   - B (the weight, or in the backward the weight / input read k-major) is packed into
 *     panels of NR columns laid out k-major, so the inner loop reads NR consecutive
 *     floats; a slab of panels small enough for the last-level cache is packed at once
 *     by the whole team (by each thread whole, into a slab of its own, where a swapped
 *     product shares out the weight's rows and the slab holds all of K: own_slabs; or
 *     not at all: weights packed once, mygpt_matmul_pack);
 *   - a register micro-tile of MR rows x NR columns of accumulators, as many as the
 *     vector registers allow: AVX2 has 16 ymm registers, so MR x NR = 6 x 16 (12
 *     accumulators, 2 for the loaded panel row, 1 for the broadcast); AVX-512 has 32
 *     zmm registers, so 14 x 32 (28 + 2 + 1). Each k then takes MR broadcasts and 2
 *     loads for 2 MR fused multiply-adds. aarch64's NEON has 32 registers of 4 floats:
 *     6 x 16 there too (24 + 4 + 2, matmul_isa.c). Other CPUs run the same C as 6 x 16;
 *   - the kernel is written once and compiled for two layouts of A (rows, or
 *     transposed: the backward's dout^T) and three instruction sets (target
 *     attributes; AVX2's tile is the same body in intrinsics, which gcc keeps in
 *     registers); the widest the CPU supports is picked at run time. So are the
 *     packing and fc1's GELU epilogue (lib/kernels/vecmath.h's erf);
 *   - a slab's tiles go out in units (up to 16 row blocks x NC columns): each thread
 *     owns the units of its run of the tokens (the rows it also handles in the loops
 *     before and after, so they stay in its core's cache) and steals from the others'
 *     runs once its own are done (on a shared virtual machine one core is often slower
 *     than the other); a unit runs all of the slab's k, so there is one barrier per
 *     slab;
 *   - when there are fewer activation rows than weight rows (training's tokens, the
 *     head's 50257 outputs) the product runs swapped, out^T = W X^T: the weight is read
 *     in place and only the activations are packed (swap_operands);
 *   - a weight packed once may be stored quantized (bf16, or int8 with a scale per group
 *     of 64: mygpt/quantize.h): decoding widens each value to its dequantized float in a
 *     register, so the bytes read per token shrink; more rows (a prompt) widen a unit's
 *     panels once into floats (widen_block) and run the float kernel: the same values
 *     (b_at), so the sums do not change;
 *   - decoding (one activation row) takes several prepacked panels at once
 *     (decode_panels): more independent fused multiply-add chains and memory streams,
 *     each group read from its first k to its last before the next group;
 *   - the panels and tiles start on a cache line (so does every large buffer of the
 *     library: mygpt_float_block), and the kernel asks for what it reads next while it
 *     computes: its panel's rows a few k steps ahead, and, spread over its k steps, the
 *     A its unit reads next (lines_ahead).
 *
 * Determinism (stb's rule): every multiply-add is written as fmaf(), which the
 * AVX2 and AVX-512 kernels turn into vfmadd instructions and the generic one
 * computes with the C library; the tile shape only decides which elements are
 * computed together, never how: all three give the same bits. Each output element is
 * summed by one thread in a fixed order, so the result does not depend on the number
 * of threads or on which thread took which tile
 * either: out = ((bias + S_0) + S_1) + ..., where S_j is the fused-multiply-add sum
 * of the j-th block of KC products, k in order. OpenBLAS (the BLAS under PyTorch on
 * Debian) sums with fused multiply-adds too, but groups otherwise: its blocks are cut
 * by its own rule (320 + 224 + 224 for K = 768), and some of its register tiles keep
 * even and odd k in two running sums; so a product's elements differ from PyTorch's in
 * their last bits, more or less often by shape (docs/model-spec.md, "Which sums are
 * PyTorch's"), as they differ from the naive kernel's.
 */
#include <assert.h>
#include <limits.h>
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mygpt/layers.h"
#include "mygpt/weights.h"
#include "base/parallel.h"
#include "base/simd.h"
#include "kernels/vecmath.h"
#include "kernels/cpu.h"
#include "base/base.h"
#include "kernels/matmul.h"
#include "kernels/matmul_isa.h"

/* scratch for one NR-wide edge tile: out has fewer than NR columns left */
typedef struct edge_tile {
    float c[MR_MAX * NR_MAX];
} edge_tile;

/* What one matmul call works on (shared by the threads of its team):
 * out (M, N) = A (M, K) . B (K, N) + bias, then GELU, or acc_into += that. */
typedef struct matmul_job {
    float *out;           /* (M, N); partial sums between k blocks. NULL if K <= KC and acc_into */
    float *acc_into;      /* NULL, or (M, N): acc_into += out once a tile is complete */
    const float *a;       /* (M, K) row by row (lda = K), or transposed when a_t */
    size_t lda;
    int a_t;
    const float *b;       /* B as matmul_isa.h's pack_fn reads it (when prepacked: what was packed) */
    size_t ldb;
    int b_kmajor;
    const float *prepacked; /* every panel of B, all K each (mygpt_matmul_pack) */
    mygpt_weights format;   /* quantized B (mygpt_matmul_pack_quantized): its panels and scales */
    const void *qpanels;
    const float *qscales;
    size_t value_bytes;     /* of a value of the panels packed once: 4, or the quantized format's */
    const float *bias;
    size_t M;
    int K, N, apply_gelu;
    int swapped;          /* computing out^T = B^T A^T: see swap_operands */
    matmul_isa kern;
    float *slab;           /* the packed panels of one slab of B (not prepacked) */
    float *unit_buf;       /* swapped: per thread, one unit's tiles (unit_len floats) */
    float *a_buf;          /* a_t: per thread, a_slots blocks of a unit's strips of A (unit_mb x KC x MR), or NULL */
    float *w_buf;          /* quantized B: per thread, a unit's panels widened (unit_p x KC x NR) */
    float *r_buf;          /* rows of A that alias in L1: per thread, a row block's k block (MR x ROWS_LD) */
    int ns, ks;            /* slab: ns columns (multiple of NR) x ks rows of B */
    int unit_mb, unit_p;   /* a thread's unit of work: unit_mb row blocks x unit_p panels */
    int a_slots;           /* k blocks of strips a thread's a_buf keeps (A_SLOTS at most) */
    mygpt_queue *queues;   /* one per thread of the team (matmul_blocks) */
    int queues_filled;     /* filled for the team before its region (prefill_queues) */
    int small, team;       /* prepare's: run on this thread alone, or by a team of `team` */
    int on_stack;          /* small enough for panels on the stack (SMALL_SLAB floats) */
    int own_slabs;         /* each thread packs every panel into a slab of its own (prepare) */
    size_t slab_len, ub_len, ab_len, wb_len, rb_len; /* floats of slab, unit_buf, a_buf, w_buf and r_buf */
} matmul_job;

/* Row stride of r_buf's copied rows (rows_alias_in_l1): 17 lines */
#define ROWS_LD (KC + 16)

/* Floats of packed panels a small product keeps on the stack */
#define SMALL_SLAB 2048

/* Floats of packed panels for a slab: B cut into slabs small enough to stay in the
 * last-level cache; each slab is packed once (threads share the panels, or each packs
 * its own copy: own_slabs), then its tiles are computed. */
#define SLAB_FLOATS (2u << 20)

/* Floats of the team's own slabs together at most: beyond, the team shares one */
#define OWN_SLABS_FLOATS (4 * (size_t)SLAB_FLOATS)

/* Floats of one k block of a unit's strips of A (unit_mb of KC x MR; a thread's slice of
 * a_buf holds a_slots of them) and of w_buf (a unit's panels widened, unit_p blocks of
 * KC x NR) */
static size_t strip_len(const matmul_job *j)
{
    return (size_t)KC * j->kern.MR;
}
static size_t strips_len(const matmul_job *j)
{
    return (size_t)j->unit_mb * strip_len(j);
}
static size_t widened_len(const matmul_job *j)
{
    return (size_t)j->unit_p * KC * j->kern.NR;
}

/* Where thread me's slice of a scratch buffer of per-thread slices of len floats starts,
 * and the buffer's floats for a team: in a team, each slice is followed by as many unused
 * floats. With the next thread's strips right after its own, each of two threads ran its
 * units slower than one thread alone, though no line is written by both: most likely a
 * core's prefetchers, which run ahead of the strides it walks, reaching past its slice
 * into lines the other core writes (bench/results/design-notes.md). */
static size_t slice_at(int me, size_t len)
{
    return (size_t)me * 2 * len;
}
static size_t slices_len(int team, size_t len)
{
    return team > 1 ? (size_t)team * 2 * len : len;
}

/* Where block kb of panel p of a B packed once starts (float32 or quantized, all K to a
 * panel), and int8's scales for it (*sc; NULL otherwise) */
static const void *packed_block(const matmul_job *j, int p, int kb, const float **sc)
{
    const int NR = j->kern.NR;
    const size_t es = j->value_bytes;
    *sc = j->qscales ? j->qscales + ((size_t)p * mygpt_int8_groups(j->K) + (size_t)kb / MYGPT_INT8_GROUP) * NR
                     : NULL;
    const void *panels = j->format ? j->qpanels : (const void *)j->prepacked;
    return (const char *)panels + ((size_t)p * j->K + (size_t)kb) * NR * es;
}

static inline __attribute__((always_inline)) void widen_rows(const int BF, const int NR, const void *qb,
                                                              const float *sc, int kc, float *dst)
{
    for (int k = 0; k < kc; k++) {
        const float *s = BF == MYGPT_WEIGHTS_INT8 ? sc + (size_t)(k / MYGPT_INT8_GROUP) * NR : NULL;
#pragma omp simd
        for (int jj = 0; jj < NR; jj++)
            dst[(size_t)k * NR + jj] = b_at(BF, NR, qb, s, k, jj);
    }
}

/* Quantized panel p's block at kb (kc rows of k) widened into dst as float32 panel rows:
 * each value exactly its dequantized float (b_at), so the float kernel computes what a
 * kernel widening in registers would, without widening again for every row block. */
static void widen_block(const matmul_job *j, int p, int kb, int kc, float *dst)
{
    const float *sc;
    const void *qb = packed_block(j, p, kb, &sc);
    switch (j->format) { // (each case a constant format, so widen_rows is specialised for it)
    case MYGPT_WEIGHTS_INT8: widen_rows(MYGPT_WEIGHTS_INT8, j->kern.NR, qb, sc, kc, dst); break;
    case MYGPT_WEIGHTS_BF16: widen_rows(MYGPT_WEIGHTS_BF16, j->kern.NR, qb, sc, kc, dst); break;
    default: assert(!"a quantized format with no widening here");
    }
}

/* The kernel on one tile: B's packed float panel rows at t->bp */
static void tile_kernel(const matmul_job *j, const tile_args *t)
{
    (j->a_t ? j->kern.transposed_a : j->kern.rows_a)(t);
}

/* The end of the rows of A a unit's row blocks [mb0, mb1) hold (they start at mb0 * MR) */
static size_t unit_rows_end(const matmul_job *j, size_t mb1)
{
    return mb1 * j->kern.MR < j->M ? mb1 * j->kern.MR : j->M;
}

/* A read transposed (a_t: the backward's dout^T and the swapped products' activations)
 * has its k rows lda floats apart: 3 or 12 KiB for GPT-2's widths, which puts the lines
 * one tile reads into 4 or 1 of the L1 cache's 64 sets, and the head's 50257 a page
 * apart. With a buffer (a_buf), the unit's row blocks [mb0, mb1) are copied at k block
 * kb into strips of MR floats a k, for all the panels the unit passes them to: the same
 * values in the same order, read from consecutive lines. The copy walks k rows, each a
 * run of whole lines for all the unit's row blocks: strip by strip, a line shared by two
 * strips was fetched twice, and each strip's lines were waited on one at a time.
 * *held says what each of the thread's a_slots blocks of strips holds (block kb in slot
 * kb / KC % a_slots): the next unit of the same row blocks (another group of panels)
 * finds its strips there, for each of its k blocks when they are a_slots or fewer (a
 * unit runs all its k blocks, so with one slot a K of several blocks was copied again
 * for every group of panels). */
#define A_SLOTS 4
typedef struct strips_held {
    size_t mb0[A_SLOTS], mb1[A_SLOTS];
    int kb[A_SLOTS];
} strips_held;
/* The strips of k block kb in the thread's a_buf (its slot) */
static float *strips_at(const matmul_job *j, int me, int kb)
{
    const size_t slot = (size_t)(kb / KC % j->a_slots);
    return j->a_buf + slice_at(me, (size_t)j->a_slots * strips_len(j)) + slot * strips_len(j);
}
static void copy_unit_a(const matmul_job *j, int me, strips_held *held, size_t mb0, size_t mb1, int kb, int kc)
{
    const int slot = kb / KC % (j->a_slots > 0 ? j->a_slots : 1);
    if (!j->a_t || !j->a_buf || (held->mb0[slot] == mb0 && held->mb1[slot] == mb1 && held->kb[slot] == kb))
        return;
    held->mb0[slot] = mb0, held->mb1[slot] = mb1, held->kb[slot] = kb;
    const int MR = j->kern.MR;
    const size_t m0 = mb0 * MR, m1 = unit_rows_end(j, mb1);
    j->kern.copy_strips(strips_at(j, me, kb), strip_len(j), MR, j->a + (size_t)kb * j->lda + m0, j->lda, kc, m1 - m0);
}

/* Part `part` of `parts` of the A the unit reads after row block mb at k block kb (the
 * slab ending at kend), for the kernel to ask for while it works on this one: with
 * strips (a_t and a_buf) the unit's next k block, which copy_unit_a will copy; read in
 * place row by row (the swapped products' weights) the next row block's rows. Otherwise
 * each line is waited for when it is needed: the rows lie 3 KiB or more apart and no
 * hardware prefetcher follows them. */
static lines_ahead next_a_lines(const matmul_job *j, size_t mb0, size_t mb1, size_t mb, int kb, int kend, int part,
                                int parts)
{
    const lines_ahead none = {NULL, 0, 0, 0};
    const int MR = j->kern.MR;
    size_t m0, m1;     // rows [m0, m1) of the next A ...
    int k_from, k_to;  // ... at k [k_from, k_to): this part's share of them
    if (j->a_t && j->a_buf) {
        const int nk = kend - (kb + KC) < KC ? kend - (kb + KC) : KC;
        const size_t n = (mb1 - mb0) * (size_t)parts, i = (mb - mb0) * (size_t)parts + (size_t)part;
        m0 = mb0 * MR;
        m1 = unit_rows_end(j, mb1);
        k_from = kb + KC + (int)(i * (size_t)(nk > 0 ? nk : 0) / n);
        k_to = kb + KC + (int)((i + 1) * (size_t)(nk > 0 ? nk : 0) / n);
        // k rows of the unit's columns (their first line may start mid-run: one more)
        return (lines_ahead){(const char *)(j->a + (size_t)k_from * j->lda + m0), j->lda * sizeof(float),
                             k_to - k_from, (int)(((m1 - m0) * sizeof(float) + 63) / 64) + 1};
    }
    if (j->a_t)
        return none;
    const size_t next = mb + 1 < mb1 ? mb + 1 : mb0;
    k_from = mb + 1 < mb1 ? kb : kb + KC;
    if (k_from >= kend)
        return none;
    k_to = kend - k_from < KC ? kend : k_from + KC;
    const size_t rows = j->M - next * MR < (size_t)MR ? j->M - next * MR : (size_t)MR;
    m0 = next * MR + (size_t)part * rows / (size_t)parts;
    m1 = next * MR + (size_t)(part + 1) * rows / (size_t)parts;
    // rows m0 .. m1 - 1 of the next row block, its k block
    return (lines_ahead){(const char *)(j->a + m0 * j->lda + k_from), j->lda * sizeof(float), (int)(m1 - m0),
                         (int)(((size_t)(k_to - k_from) * sizeof(float) + 63) / 64) + 1};
}

/* Where row block mb's A starts at k block kb (kc deep), and its row stride (*lda): in
 * place; its strip in a_buf (copied by copy_unit_a for the unit whose first row block is
 * mb0); or, for rows that alias in L1 (r_buf), its rows copied here ROWS_LD floats apart,
 * once for all the panels the unit passes them to. */
static const float *row_block_a(const matmul_job *j, int me, size_t mb0, size_t mb, int kb, int kc, size_t *lda)
{
    const size_t m0 = mb * j->kern.MR;
    *lda = j->lda;
    if (!j->a_t && j->r_buf) {
        const float *src = j->a + m0 * j->lda + kb;
        float *rows = j->r_buf + slice_at(me, (size_t)j->kern.MR * ROWS_LD);
        for (size_t i = 0; i < (size_t)j->kern.MR && m0 + i < j->M; i++)
            memcpy(rows + i * ROWS_LD, src + i * j->lda, (size_t)kc * sizeof(float));
        *lda = ROWS_LD;
        return rows;
    }
    if (!j->a_t)
        return j->a + m0 * j->lda + kb;
    if (!j->a_buf)
        return j->a + (size_t)kb * j->lda + m0;
    *lda = (size_t)j->kern.MR;
    return strips_at(j, me, kb) + (mb - mb0) * strip_len(j);
}

/* One MR x NR tile of out, row block mb x panel p, over k in [kb, kb + in->kc): in holds
 * its row block's A (row_block_a), its panel's packed block and the lines to ask for. On
 * the last k block the epilogue runs while the tile is hot: GELU, or adding it into
 * acc_into. */
static void matmul_tile(const matmul_job *j, size_t mb, int p, int kb, const tile_args *in)
{
    const int MR = j->kern.MR, NR = j->kern.NR, N = j->N;
    const size_t m0 = mb * MR;
    const int rows = j->M - m0 < (size_t)MR ? (int)(j->M - m0) : MR;
    const int col0 = p * NR;
    const int cols = N - col0 < NR ? N - col0 : NR;
    const int first = kb == 0, last = kb + in->kc == j->K;
    const float *bias = j->bias ? j->bias + col0 : NULL;
    // field by field: a copy of the whole struct read the caller's fresh 8-byte stores
    // with 16-byte loads, which the core cannot forward from them (a stall a tile)
    tile_args ta = {.a = in->a, .lda = in->lda, .bp = in->bp, .pf = in->pf, .kc = in->kc};
    ta.rows = rows;
    if (j->acc_into && first && last) { /* one k block: the sum from zero, then added in */
        edge_tile t;
        ta.c = t.c, ta.ldc = NR, ta.first = 1, ta.init = NULL;
        tile_kernel(j, &ta);
        float *d = j->acc_into + m0 * N + col0;
        for (int i = 0; i < rows; i++)
            for (int jj = 0; jj < cols; jj++)
                d[i * (size_t)N + jj] += t.c[i * NR + jj];
        return;
    }
    float *c = j->out + m0 * N + col0;
    if (cols == NR) {
        ta.c = c, ta.ldc = (size_t)N, ta.first = first, ta.init = bias;
        tile_kernel(j, &ta);
    } else { /* right edge: work in a full-width scratch tile */
        edge_tile t;
        float init[NR_MAX] = {0};
        for (int jj = 0; jj < cols && bias; jj++)
            init[jj] = bias[jj];
        for (int i = 0; i < rows; i++)
            for (int jj = 0; jj < NR; jj++)
                t.c[i * NR + jj] = jj < cols && !first ? c[i * (size_t)N + jj] : 0.0f;
        ta.c = t.c, ta.ldc = NR, ta.first = first, ta.init = init;
        tile_kernel(j, &ta);
        for (int i = 0; i < rows; i++)
            for (int jj = 0; jj < cols; jj++)
                c[i * (size_t)N + jj] = t.c[i * NR + jj];
    }
    if (last && j->apply_gelu) /* epilogue while the tile is hot */
        j->kern.gelu(c, (size_t)N, rows, cols);
    if (last && j->acc_into) {
        float *d = j->acc_into + m0 * N + col0;
        for (int i = 0; i < rows; i++)
#pragma omp simd
            for (int jj = 0; jj < cols; jj++)
                d[i * (size_t)N + jj] += c[i * (size_t)N + jj];
    }
}

/* The panels this job decodes at once: decode_panels when it is decoding (one row of
 * out, straight, against a B packed once, float32 or quantized) and the set has kernels
 * for it; 0 when its tiles run. */
static int decoding_panels(const matmul_job *j)
{
    return (j->format || j->prepacked) && j->M == 1 && !j->acc_into && !j->a_t ? j->kern.decode_panels : 0;
}

/* Decoding: np panels from p (decode_panels of them, or the fewer left at the end of a
 * unit, the last of which may end past N) over k in [kb, kb + kc), as matmul_tile would
 * do them one by one: the same bits. Then GELU. 0 when the set has no decoding kernel for
 * np panels (the tiles then). */
static int decode_panels(const matmul_job *j, int p, int np, int kb, int kc)
{
    const int NR = j->kern.NR, cols = j->N - p * NR < np * NR ? j->N - p * NR : np * NR;
    const float *sc;
    const void *b = packed_block(j, p, kb, &sc);
    const qrows_args r = {.a = j->a + kb, .bp = b, .bstride = (size_t)j->K * NR, .sc = sc,
                          .sstride = mygpt_int8_groups(j->K) * NR, .c = j->out + (size_t)p * NR,
                          .init = j->bias ? j->bias + (size_t)p * NR : NULL, .kc = kc, .first = kb == 0};
    const qrows_fn decode = j->kern.decode[j->format];
    if (!decode || !decode(&r, np, cols))
        return 0;
    if (kb + kc == j->K && j->apply_gelu)
        j->kern.gelu(r.c, (size_t)j->N, 1, cols);
    return 1;
}

/* A slab of B as the units read it: panel q of the slab (B's panel p0 + q) at panels +
 * q * panel_len, over k in [k0, k0 + ks) */
typedef struct slab_at {
    const float *panels;
    size_t panel_len; /* floats from one packed panel to the next */
    int p0, k0, ks;
} slab_at;

/* A unit of work: row blocks [mb0, mb1) x the slab's panels [q0, q1) */
typedef struct unit_span {
    size_t mb0, mb1;
    int q0, q1;
} unit_span;

/* Floats of one unit's tiles */
static size_t unit_len(const matmul_job *j)
{
    return (size_t)j->unit_mb * j->unit_p * j->kern.MR * j->kern.NR;
}

/* The swapped product (see swap_operands) keeps each unit's sums in a local buffer of
 * MR x NR tiles (weight rows x tokens of out^T) through the k slab, so out is read and
 * written transposed once per slab, not once per KC block. swapped_tile_start fills a
 * tile with the sums so far (the bias, 0, or out's partial sums), swapped_tile_finish
 * puts it back (after GELU, or added into acc_into, on the last slab). The kernel adds
 * each KC block's sum to the tile exactly as it adds to out: every element gets the
 * same ((bias + S_0) + S_1) + ... as the unswapped product, fmaf being the same with
 * its two factors exchanged. */
typedef struct swapped_tile {
    size_t m0;   /* first weight row */
    int rows;    /* weight rows, <= MR */
    int col0;    /* first token */
    int cols;    /* tokens, <= NR */
} swapped_tile;

static swapped_tile swapped_tile_at(const matmul_job *j, size_t mb, int p)
{
    const int MR = j->kern.MR, NR = j->kern.NR;
    swapped_tile t = {mb * MR, 0, p * NR, 0};
    t.rows = j->M - t.m0 < (size_t)MR ? (int)(j->M - t.m0) : MR;
    t.cols = j->N - t.col0 < NR ? j->N - t.col0 : NR;
    return t;
}

static void swapped_tile_start(const matmul_job *j, swapped_tile t, float *c, int first)
{
    const int NR = j->kern.NR;
    const size_t ldo = j->M; /* out is (N, M): tokens x weight rows */
    if (!first) { /* the partial sums so far, transposed in; columns past cols are 0 */
        const float *o = j->out + (size_t)t.col0 * ldo + t.m0;
        if (t.cols < NR)
            memset(c, 0, (size_t)t.rows * NR * sizeof *c);
        for (int jj = 0; jj < t.cols; jj++)
            for (int i = 0; i < t.rows; i++)
                c[i * NR + jj] = o[jj * ldo + i];
        return;
    }
    for (int i = 0; i < t.rows; i++) {
        const float b0 = j->bias ? j->bias[t.m0 + i] : 0.0f;
        for (int jj = 0; jj < NR; jj++)
            c[i * NR + jj] = b0;
    }
}

static void swapped_tile_finish(const matmul_job *j, swapped_tile t, float *c, int last)
{
    const int NR = j->kern.NR;
    const size_t ldo = j->M;
    if (last && j->apply_gelu)
        j->kern.gelu(c, NR, t.rows, t.cols);
    const int add = last && j->acc_into;
    j->kern.store_swapped((add ? j->acc_into : j->out) + (size_t)t.col0 * ldo + t.m0, ldo, c, NR, t.rows, t.cols, add);
}

/* One unit of the swapped product over the slab's k: row blocks [u->mb0, u->mb1) x
 * panels [u->q0, u->q1) of the slab. ub holds the unit's tiles. */
static void swapped_unit(const matmul_job *j, int me, strips_held *held, float *ub, const unit_span *u,
                         const slab_at *sl)
{
    const size_t mb0 = u->mb0, mb1 = u->mb1;
    const int q0 = u->q0, q1 = u->q1, p0 = sl->p0, k0 = sl->k0, ks = sl->ks;
    const int MR = j->kern.MR, NR = j->kern.NR, tile = MR * NR, nq = q1 - q0;
    const int first = k0 == 0, last = k0 + ks == j->K;
    for (size_t mb = mb0; mb < mb1; mb++)
        for (int q = q0; q < q1; q++)
            swapped_tile_start(j, swapped_tile_at(j, mb, p0 + q), ub + ((mb - mb0) * nq + (q - q0)) * tile, first);
    for (int kb = k0; kb < k0 + ks; kb += KC) {
        const int kc = k0 + ks - kb < KC ? k0 + ks - kb : KC;
        copy_unit_a(j, me, held, mb0, mb1, kb, kc);
        for (size_t mb = mb0; mb < mb1; mb++) {
            const swapped_tile t = swapped_tile_at(j, mb, p0 + q0);
            size_t lda;
            const float *a = row_block_a(j, me, mb0, mb, kb, kc, &lda);
            for (int q = q0; q < q1; q++) {
                const lines_ahead pf = next_a_lines(j, mb0, mb1, mb, kb, k0 + ks, q - q0, nq);
                const tile_args ta = {.a = a, .lda = lda,
                                      .bp = sl->panels + (size_t)q * sl->panel_len + (size_t)(kb - k0) * NR,
                                      .c = ub + ((mb - mb0) * nq + (q - q0)) * tile, .ldc = NR, .pf = &pf,
                                      .rows = t.rows, .kc = kc, .first = 0};
                tile_kernel(j, &ta);
            }
        }
    }
    // token panel by token panel: each row of out is written in one run (tile by tile,
    // out's lines were fetched for ownership one at a time, slowly)
    for (int q = q0; q < q1; q++)
        for (size_t mb = mb0; mb < mb1; mb++)
            swapped_tile_finish(j, swapped_tile_at(j, mb, p0 + q), ub + ((mb - mb0) * nq + (q - q0)) * tile, last);
}

/* The tiles of a slab one thread owns: its share of the tokens, whichever operand
 * holds them (out's rows, or swapped, out^T's columns: the slab's panels). Thread t of
 * a team of n owns the t-th of n equal runs of them (mygpt_run_start): about the tokens
 * the static loops before the product (LayerNorm, the residual, the packing) wrote on
 * that thread and those after it read there. On a machine whose cores share no cache a
 * token's row then stays in one core's cache from op to op; dealing tiles out
 * dynamically had the cores fetch each other's rows, each slower than alone
 * (bench/results/design-notes.md). With fewer token blocks than
 * threads (decoding's one row) the runs are of the other operand's blocks instead. So
 * are they where a swapped product copies its A, the weight read transposed, into
 * strips (the backward's dinp): each thread would copy all of the weight for its run of
 * the tokens; with runs of the weight's row blocks each thread copies only its rows. It
 * packs all of the other operand's panels (the smaller: for dinp the tokens') into a
 * slab of its own where the slab holds all of K and the team's slabs stay within
 * OWN_SLABS_FLOATS; else (the head's 50257 logits, K cut into slabs) the team packs one
 * shared slab, each thread its run of the panels, and reads the others' runs. So is
 * fc2's swapped dweight (its input copied). */
typedef struct share {
    size_t mb0, mb1; /* row blocks [mb0, mb1) */
    int q0, q1;      /* panels [q0, q1) of the slab */
    size_t ngb;      /* groups of unit_p panels: the units are row groups (outer) x these */
} share;

/* Whether a swapped product's shares are the weight's row blocks, not the tokens' panels:
 * its weight copied into strips (above) */
static int weight_rows_shared(const matmul_job *j)
{
    return j->swapped && j->a_t;
}

/* Whether the shares are runs of the slab's np panels (else of the mblocks row blocks) */
static int shares_by_panels(const matmul_job *j, size_t mblocks, int np, int team)
{
    /* the tokens' axis, but for the weight's rows where they are shared out... */
    const int by_panels = j->swapped && !weight_rows_shared(j);
    /* ...unless the chosen axis has fewer blocks than threads (decoding's one row) */
    return (by_panels ? (size_t)np : mblocks) < (size_t)team ? !by_panels : by_panels;
}

static share share_of(const matmul_job *j, size_t mblocks, int np, int t, int team)
{
    share s = {0, mblocks, 0, np, 0};
    if (shares_by_panels(j, mblocks, np, team)) {
        s.q0 = (int)mygpt_run_start((size_t)np, t, team);
        s.q1 = (int)mygpt_run_start((size_t)np, t + 1, team);
    } else {
        s.mb0 = mygpt_run_start(mblocks, t, team);
        s.mb1 = mygpt_run_start(mblocks, t + 1, team);
    }
    s.ngb = (size_t)(s.q1 - s.q0 + j->unit_p - 1) / j->unit_p;
    return s;
}

static size_t share_units(const matmul_job *j, share s)
{
    return (s.mb1 - s.mb0 + j->unit_mb - 1) / j->unit_mb * s.ngb;
}

/* Unit u of share s: row blocks [mb0, mb1) x panels [q0, q1) of the slab, all of its k. */
static void run_unit(const matmul_job *j, int me, strips_held *held, share s, size_t u, const slab_at *sl)
{
    const size_t mb0 = s.mb0 + u / s.ngb * j->unit_mb;
    const size_t mb1 = mb0 + j->unit_mb < s.mb1 ? mb0 + j->unit_mb : s.mb1;
    const int q0 = s.q0 + (int)(u % s.ngb) * j->unit_p;
    const int q1 = q0 + j->unit_p < s.q1 ? q0 + j->unit_p : s.q1;
    const int NR = j->kern.NR, p0 = sl->p0, k0 = sl->k0, ks = sl->ks;
    if (j->swapped) { /* the unit's sums stay in this thread's buffer */
        const unit_span span = {mb0, mb1, q0, q1};
        swapped_unit(j, me, held, j->unit_buf + slice_at(me, unit_len(j)), &span, sl);
        return;
    }
    const int P = decoding_panels(j);
    // decoding: P whole panels at once, each group all its k blocks in turn, so that its
    // panels are read as P unbroken streams (a panel holds all K: block kb + KC follows kb)
    int q_decoded = q0;
    for (; P && q_decoded + P <= q1 && (p0 + q_decoded + P) * NR <= j->N; q_decoded += P)
        for (int kb = k0; kb < k0 + ks; kb += KC) {
            const int done = decode_panels(j, p0 + q_decoded, P, kb, k0 + ks - kb < KC ? k0 + ks - kb : KC);
            assert(done); // (a set that decodes has every format's kernel, for 1 to 4 panels)
            (void)done;
        }
    for (int kb = k0; kb < k0 + ks; kb += KC) {
        const int kc = k0 + ks - kb < KC ? k0 + ks - kb : KC;
        int qd = q_decoded;
        // decoding: the unit's panels left over (fewer than P, or a group reaching past N)
        if (P && qd < q1 && decode_panels(j, p0 + qd, q1 - qd, kb, kc))
            qd = q1;
        // a quantized B: the unit's remaining panels widened once for all its row blocks
        const int widen = j->format && qd < q1;
        assert(!widen || j->w_buf); // (prepare sized w_buf wherever the tiles read a quantized B)
        float *wide = widen ? j->w_buf + slice_at(me, widened_len(j)) : NULL;
        for (int q = qd; wide && q < q1; q++)
            widen_block(j, p0 + q, kb, kc, wide + (size_t)(q - qd) * KC * NR);
        if (qd < q1)
            copy_unit_a(j, me, held, mb0, mb1, kb, kc);
        for (size_t mb = mb0; mb < mb1 && qd < q1; mb++) {
            size_t lda;
            const float *a = row_block_a(j, me, mb0, mb, kb, kc, &lda);
            for (int q = qd; q < q1; q++) {
                const lines_ahead pf = next_a_lines(j, mb0, mb1, mb, kb, k0 + ks, q - qd, q1 - qd);
                const tile_args in = {.a = a, .lda = lda,
                                      .bp = wide ? wide + (size_t)(q - qd) * KC * NR
                                                 : sl->panels + (size_t)q * sl->panel_len + (size_t)(kb - k0) * NR,
                                      .pf = &pf, .kc = kc};
                matmul_tile(j, mb, p0 + q, kb, &in);
            }
        }
    }
}

/* The blocked loops. Called by every thread of a parallel region (me of team), or by
 * one thread alone for small products (0 of 1: no barrier then, so it may be called
 * from inside anyone's parallel region).
 *
 * For each slab of B (ns columns x ks rows): its panels are packed, shared by the team
 * or each thread's own (own_slabs; skipped when B is prepacked: then one slab is all of
 * B), then each thread runs its share of the slab's tiles (share_of) in units of
 * unit_mb row blocks x unit_p panels, and steals units from the others' shares once its
 * own are done. A unit runs its KC blocks in k order, so every element is summed by one
 * thread in the fixed order whoever takes the unit: the next k slab only starts after
 * the barrier that ends this one. Within a unit the KC x unit_p*NR block of panels stays in L2 while the row
 * blocks pass, and a row block's MR x KC of A stays in L1 while the panels pass. */
static void matmul_blocks(const matmul_job *j, int me, int team)
{
    const int MR = j->kern.MR, NR = j->kern.NR, K = j->K, N = j->N;
    const size_t mblocks = (j->M + MR - 1) / MR;
    strips_held held; // (A is the same for every slab of B)
    for (int s = 0; s < A_SLOTS; s++)
        held.mb0[s] = held.mb1[s] = 0, held.kb[s] = -1;
    for (int n0 = 0; n0 < N; n0 += j->ns) {
        const int nc = N - n0 < j->ns ? N - n0 : j->ns;
        const int np = (nc + NR - 1) / NR, p0 = n0 / NR;
        for (int k0 = 0; k0 < K; k0 += j->ks) {
            const int ks = K - k0 < j->ks ? K - k0 : j->ks;
            const uint32_t mine = (uint32_t)share_units(j, share_of(j, mblocks, np, me, team));
            const int filled = j->queues_filled && team == j->team; // (and then one slab: no barrier)
            mygpt_steal steal = filled ? (mygpt_steal){(char *)j->queues, sizeof *j->queues, me, team, 0}
                                       : mygpt_steal_start(j->queues, sizeof *j->queues, me, team, mine);
            slab_at sl = {.p0 = p0, .k0 = k0, .ks = ks};
            if (j->format) { /* quantized panels: one slab, all of B; packed_block finds each block */
                sl.panels = NULL;
                sl.panel_len = (size_t)K * NR;
            } else if (j->prepacked) {
                sl.panels = j->prepacked + (size_t)p0 * K * NR + (size_t)k0 * NR;
                sl.panel_len = (size_t)K * NR;
            } else { /* each thread packs its run of the panels, or all of them into its own slab */
                float *slab = j->own_slabs ? j->slab + (size_t)me * j->ns * j->ks : j->slab;
                const int pend = j->own_slabs ? np : (int)mygpt_run_start((size_t)np, me + 1, team);
                for (int p = j->own_slabs ? 0 : (int)mygpt_run_start((size_t)np, me, team); p < pend; p++) {
                    const int col = n0 + p * NR, cols = N - col < NR ? N - col : NR;
                    const float *src = j->b_kmajor ? j->b + (size_t)k0 * j->ldb + col
                                                   : j->b + (size_t)col * j->ldb + k0;
                    j->kern.pack(slab + (size_t)p * ks * NR, src, j->ldb, ks, cols, j->b_kmajor);
                }
                sl.panels = slab;
                sl.panel_len = (size_t)ks * NR;
            }
            if (team > 1 && !filled) {
#pragma omp barrier /* the panels are ready and every queue is filled */
            }
            /* my share first, then the others' from their ends */
            int owner;
            size_t u;
            while (mygpt_steal_next(&steal, &owner, &u))
                run_unit(j, me, &held, share_of(j, mblocks, np, owner, team), u, &sl);
            // the next slab adds to these tiles, refills the queues, or reuses the buffer;
            // after the last one the parallel region's own end is the wait (execute's)
            if (team > 1 && (n0 + j->ns < N || k0 + ks < K)) {
#pragma omp barrier
            }
        }
    }
}

/* Slab and unit sizes for a team of `threads`. The slab keeps all of K when at least
 * NC columns of it fit in SLAB_FLOATS (one pass, one barrier), else K is cut in
 * multiples of KC. Units start at 16 row blocks x NC columns and halve until every
 * thread has about eight to take (the balance), never below one tile: the row blocks
 * first where A is copied into strips (a_t), since each group of panels would copy a row
 * block's strips again. None of this touches the order of any sum: KC alone does. */
static void plan(matmul_job *j, int threads)
{
    const int MR = j->kern.MR, NR = j->kern.NR, K = j->K, N = j->N;
    const int all = (N + NR - 1) / NR * NR;
    j->ns = all;
    j->ks = K;
    if (!j->prepacked && !j->format && (size_t)all * K > SLAB_FLOATS) {
        const int fit = (int)(SLAB_FLOATS / (size_t)K) / NR * NR;
        if (fit >= NC) {
            const int slabs = (all + fit - 1) / fit;
            j->ns = ((N + slabs - 1) / slabs + NR - 1) / NR * NR;
        } else {
            j->ns = all < 4 * NC ? all : 4 * NC;
            j->ks = (int)(SLAB_FLOATS / (size_t)j->ns) / KC * KC;
        }
    }
    const size_t mblocks = (j->M + MR - 1) / MR;
    const int np = (j->ns + NR - 1) / NR;
    int mb = mblocks < 16 ? (int)mblocks : 16, p = np < NC / NR ? np : NC / NR;
    // decoding a B packed once (float32 or quantized) takes decode_panels panels at once: units of no fewer
    const int pmin = decoding_panels(j) ? decoding_panels(j) : 1;
    for (;;) {
        const size_t units = (mblocks + mb - 1) / mb * (size_t)((np + p - 1) / p);
        if (units >= (size_t)8 * threads || (mb == 1 && p <= pmin))
            break;
        if (mb > 1 && (mb >= p || p == 1 || j->a_t))
            mb = (mb + 1) / 2;
        else
            p = (p + 1) / 2;
    }
    j->unit_mb = mb;
    j->unit_p = p;
}

/* out (M, N) = A B is also out^T (N, M) = B^T A^T: the weight becomes the kernel's
 * A, read in place, and the activations are packed. Worth it when there are fewer
 * activation rows than weight rows (training's 256 tokens against 768..50257 outputs):
 * packing costs the B operand's size, and the weight's is the larger. A row-major
 * operand becomes a weight-layout one and vice versa, so a_t and b_kmajor trade
 * places. Even a prepacked weight is then read as it is: its panels would be swept
 * once for every group of row blocks, the weight in place once in all. Not for short
 * M (token panels of NR would be mostly empty). */
static void swap_operands(matmul_job *j)
{
    if (j->M < (size_t)2 * j->kern.NR || (size_t)j->N <= j->M || j->M > (size_t)INT_MAX || j->format)
        return; /* (a quantized weight has no float copy to read in place: never swapped) */
    j->prepacked = NULL; /* the weight as it is serves better (j->b: what was packed) */
    const float *a = j->a;
    const size_t lda = j->lda;
    const int a_t = j->a_t;
    j->a = j->b, j->lda = j->ldb, j->a_t = j->b_kmajor;
    j->b = a, j->ldb = lda, j->b_kmajor = a_t;
    const int n = j->N;
    j->N = (int)j->M;
    j->M = (size_t)n;
    j->swapped = 1;
}

/* Whether the rows of a (stored row by row) lie a multiple of 4 KiB apart, as with
 * K = 3072 (fc2's input, 12 KiB a row). An L1 cache of 64 sets of 64-byte lines (8 to
 * 12 ways) then puts every row a tile reads side by side into one set: 14 rows do not
 * fit its ways, and they evict each other at every k step. Such products copy each row
 * block's k block (row_block_a) into r_buf, rows ROWS_LD floats apart: 17 lines, so
 * the rows fall into different sets (bench/results/design-notes.md has the
 * measurement). The same values in the same order: no sum changes. */
static int rows_alias_in_l1(const matmul_job *j)
{
    return !j->a_t && j->M > 1 && j->lda * sizeof(float) % 4096 == 0;
}

/* Makes a job ready to run: the operands swapped or not, the tile, the team and the
 * units chosen, and the sizes of what it needs besides out (job_bytes). MYGPT_EINVAL for
 * a product too large to share out. */
static mygpt_status prepare(matmul_job *j, mygpt_error *err)
{
    // the sizes' own arithmetic (N and K stepped through by slabs, rounded up to whole
    // panels and k blocks, M's row blocks, M x K and M x N floats) must not overflow
    const size_t wide = (size_t)(j->K > j->N ? j->K : j->N);
    if (j->N > INT_MAX - (int)SLAB_FLOATS || j->K > INT_MAX - (int)SLAB_FLOATS ||
        j->M > SIZE_MAX / sizeof(float) / (wide ? wide : 1))
        return mygpt_fail(err, MYGPT_EINVAL, "matmul of %zu x %d x %d is too large", j->M, j->K, j->N);
    const size_t kn = (size_t)j->K * (size_t)j->N;
    j->small = kn == 0 || j->M <= MYGPT_KERNEL_SMALL / kn; // M K N <= MYGPT_KERNEL_SMALL
    if (!j->small)
        swap_operands(j);
    j->team = j->small ? 1 : omp_get_max_threads();
    plan(j, j->team);
    const size_t units = (j->M / (size_t)j->kern.MR / (size_t)j->unit_mb + 1) *
                         ((size_t)j->ns / (size_t)j->kern.NR / (size_t)j->unit_p + 1);
    if (units > UINT32_MAX) /* a mygpt_queue counts in 32 bits: out would be terabytes */
        return mygpt_fail(err, MYGPT_EINVAL, "matmul of %zu x %d is too large to share out", j->M, j->N);
    const int kblocks = (j->ks + KC - 1) / KC, np = (j->ns + j->kern.NR - 1) / j->kern.NR;
    const size_t mblocks = (j->M + j->kern.MR - 1) / j->kern.MR;
    const int by_panels = shares_by_panels(j, mblocks, np, j->team);
    const int packs = !j->prepacked && !j->format;
    j->own_slabs = packs && j->team > 1 && weight_rows_shared(j) && j->ks == j->K && !by_panels &&
                   (size_t)j->team * j->ns * j->ks <= OWN_SLABS_FLOATS;
    j->slab_len = packs ? (size_t)(j->own_slabs ? j->team : 1) * j->ns * j->ks : 0;
    // a quantized B's panels are widened into w_buf for the tiles (decoding reads them as they are)
    const int widens = j->format && !decoding_panels(j);
    j->on_stack = j->small && j->slab_len <= SMALL_SLAB && !widens;
    j->ub_len = j->swapped ? slices_len(j->team, unit_len(j)) : 0;
    // strips kept for several k blocks only where a thread's share holds more than one
    // group of panels (the units that find them); else each copy would take fresh lines
    const int share_p = by_panels ? (np + j->team - 1) / j->team : np;
    j->a_slots = share_p > j->unit_p ? (kblocks < A_SLOTS ? kblocks : A_SLOTS) : 1;
    j->ab_len = j->a_t ? slices_len(j->team, (size_t)j->a_slots * strips_len(j)) : 0;
    j->wb_len = widens ? slices_len(j->team, widened_len(j)) : 0;
    j->rb_len = rows_alias_in_l1(j) && !j->small ? slices_len(j->team, (size_t)j->kern.MR * ROWS_LD) : 0;
    return MYGPT_OK;
}

/* Bytes of workspace a prepared job needs (0: none, its panels fit on the stack): one
 * block of the panels, the unit buffers, A's strips, the widened panels, the copied rows,
 * then (from a 64-byte boundary) the queues, all from a cache line (the kernels' vectors
 * of 16 floats). */
static size_t job_floats(const matmul_job *j)
{
    return j->slab_len + j->ub_len + j->ab_len + j->wb_len + j->rb_len;
}
static size_t job_bytes(const matmul_job *j)
{
    const size_t q_bytes = j->team > 1 ? (size_t)j->team * sizeof(mygpt_queue) + 64 : 0;
    return j->on_stack || !(job_floats(j) + q_bytes) ? 0 : job_floats(j) * sizeof(float) + q_bytes + 64;
}

/* A few rows against a prepacked or quantized B (decoding): nothing to pack, one slab, so
 * the queues are filled here, before the team's region, and its threads start at once
 * (with a barrier the first thread waited for the last to wake up and fill its queue:
 * twice per product, 43 products a token of the 15M shape). */
static void prefill_queues(matmul_job *j)
{
    const int np = (j->N + j->kern.NR - 1) / j->kern.NR;
    const size_t mblocks = (j->M + j->kern.MR - 1) / j->kern.MR;
    j->queues_filled = j->team > 1 && j->M <= 8 && (j->prepacked || j->format) && j->ns >= j->N && j->ks == j->K;
    for (int t = 0; j->queues_filled && t < j->team; t++)
        mygpt_queue_fill(&j->queues[t], (uint32_t)share_units(j, share_of(j, mblocks, np, t, j->team)));
}

/* Runs a prepared job with its workspace (job_bytes of it at ws): small products on this
 * thread (no parallel region: entering one, even with if (false), costs about a
 * microsecond), others on OpenMP's team. */
static void execute(matmul_job *j, void *ws)
{
    float small_slab[SMALL_SLAB];
    mygpt_queue solo_queue;
    j->queues = &solo_queue;
    if (j->on_stack) {
        j->slab = small_slab;
        matmul_blocks(j, 0, 1);
        return;
    }
    char *mem = ws ? (char *)ws + (64 - (uintptr_t)ws % 64) % 64 : NULL;
    j->slab = (float *)mem;
    j->unit_buf = j->slab + j->slab_len;
    j->a_buf = j->ab_len ? j->unit_buf + j->ub_len : NULL;
    j->w_buf = j->wb_len ? j->unit_buf + j->ub_len + j->ab_len : NULL;
    j->r_buf = j->rb_len ? j->unit_buf + j->ub_len + j->ab_len + j->wb_len : NULL;
    if (j->team > 1) {
        const uintptr_t end = (uintptr_t)(mem + job_floats(j) * sizeof(float));
        j->queues = (mygpt_queue *)(mem + ((end + 63) / 64 * 64 - (uintptr_t)mem));
        prefill_queues(j);
    }
    if (j->small) {
        matmul_blocks(j, 0, 1);
    } else {
        /* num_threads(team): never more threads than unit_buf has slices for (fewer when
         * called inside another parallel region: then the team is one) */
#pragma omp parallel num_threads(j->team)
        matmul_blocks(j, omp_get_thread_num(), omp_get_num_threads());
    }
}

/* Runs a job with a workspace of its own. No memory for it is an error, not a fall-back
 * to the naive kernel: that one sums in another order, and the promise is the same bits
 * whichever path. (malloc's block, moved up to a cache line: posix_memalign's blocks went
 * back to the system and came back as new pages, call after call.) */
static mygpt_status run(matmul_job *j, mygpt_error *err)
{
    MYGPT_TRY(prepare(j, err));
    const size_t bytes = job_bytes(j);
    void *block = NULL;
    if (bytes && !(block = malloc(bytes)))
        return mygpt_fail(err, MYGPT_ENOMEM, "out of memory for the matmul's packed panels and work queues (%zu bytes)",
                          bytes);
    execute(j, block);
    free(block);
    return MYGPT_OK;
}

/* Runs a job in the caller's workspace ws of ws_bytes, which its sizing (the same job
 * prepared with the same team) found enough: nothing can fail. */
static void run_in(matmul_job *j, void *ws, size_t ws_bytes)
{
    const mygpt_status st = prepare(j, NULL);
    assert(st == MYGPT_OK && job_bytes(j) <= ws_bytes);
    (void)st, (void)ws_bytes;
    execute(j, ws);
}

/* out = bias or GELU(...) when K is 0: nothing to multiply */
static void no_products(float *out, const float *bias, size_t M, int N, int apply_gelu)
{
    for (size_t m = 0; m < M; m++)
        for (int n = 0; n < N; n++) {
            const float v = bias ? bias[n] : 0.0f;
            out[m * (size_t)N + n] = apply_gelu ? mygpt_gelu(v) : v;
        }
}

/* out (M, N) = inp (M, K) W^T (+ bias), GELU on every output when apply_gelu */
static mygpt_status matmul(const mygpt_product *pr, mygpt_error *err)
{
    float *out = pr->out;
    const float *inp = pr->inp, *weight = pr->weight, *bias = pr->bias;
    const size_t M = pr->M;
    const int K = pr->K, N = pr->N, apply_gelu = pr->gelu;
    if (K < 0 || N < 0)
        return mygpt_fail(err, MYGPT_EINVAL, "matmul sizes must not be negative (K=%d N=%d)", K, N);
    if (M == 0 || N == 0)
        return MYGPT_OK;
    if (K == 0) {
        no_products(out, bias, M, N, apply_gelu);
        return MYGPT_OK;
    }
    matmul_job job = {.out = out, .a = inp, .lda = (size_t)K, .b = weight, .ldb = (size_t)K,
                      .bias = bias, .M = M, .K = K, .N = N, .apply_gelu = apply_gelu,
                      .kern = mygpt_matmul_isa()};
    return run(&job, err);
}

mygpt_status mygpt_matmul(float *out, const float *inp, const float *weight, const float *bias,
                          size_t N, int C, int OC, mygpt_error *err)
{
    return matmul(&(mygpt_product){.out = out, .inp = inp, .weight = weight, .bias = bias, .M = N, .K = C, .N = OC},
                  err);
}

mygpt_status mygpt_matmul_gelu(float *out, const float *inp, const float *weight, const float *bias,
                               size_t N, int C, int OC, mygpt_error *err)
{
    return matmul(&(mygpt_product){.out = out, .inp = inp, .weight = weight, .bias = bias, .M = N, .K = C, .N = OC,
                                   .gelu = 1},
                  err);
}

/* ---- weights packed once --------------------------------------------------------- */

/* Memory for a weight's panels packed once: in huge pages from 2 MB on (decoding reads
 * every panel for each token, and in 4 kB pages the address translations held it back),
 * its pages faulted in by one call (on a virtual machine, a fault for each page as the
 * packing first wrote it was most of a model's packing). NULL when out of memory. */
static void *panels_alloc(size_t bytes)
{
    return mygpt_aligned_block(bytes, (size_t)2 << 20, 1);
}

mygpt_status mygpt_matmul_pack(mygpt_packed_weight *pw, const float *weight, int K, int N,
                               mygpt_error *err)
{
    memset(pw, 0, sizeof *pw);
    if (K < 1 || N < 1 || K > INT_MAX - (int)SLAB_FLOATS || N > INT_MAX - (int)SLAB_FLOATS)
        return mygpt_fail(err, MYGPT_EINVAL, "a packed weight needs K, N >= 1 and not near INT_MAX (K=%d N=%d)", K, N);
    const matmul_isa kern = mygpt_matmul_isa();
    const int NR = kern.NR, panels = (N + NR - 1) / NR;
    const size_t len = (size_t)panels * NR * K;
    void *mem = panels_alloc(len * sizeof(float));
    if (!mem)
        return mygpt_fail(err, MYGPT_ENOMEM, "out of memory for a packed weight (%zu floats)", len);
    pw->panels = mem;
    pw->weight = weight;
    pw->value_bytes = sizeof(float);
    pw->K = K, pw->N = N, pw->NR = NR;
#pragma omp parallel for schedule(static) if (len > MYGPT_KERNEL_SMALL)
    for (int p = 0; p < panels; p++) {
        const int cols = N - p * NR < NR ? N - p * NR : NR;
        kern.pack(pw->panels + (size_t)p * K * NR, weight + (size_t)p * NR * K, (size_t)K, K, cols, 0);
    }
    return MYGPT_OK;
}

mygpt_status mygpt_matmul_pack_quantized(mygpt_packed_weight *pw, mygpt_weights format, const void *q,
                                         const float *scales, const float *weight, int K, int N,
                                         mygpt_error *err)
{
    memset(pw, 0, sizeof *pw);
    if (K < 1 || N < 1 || K > INT_MAX - (int)SLAB_FLOATS || N > INT_MAX - (int)SLAB_FLOATS ||
        (format != MYGPT_WEIGHTS_BF16 && format != MYGPT_WEIGHTS_INT8))
        return mygpt_fail(err, MYGPT_EINVAL, "a packed quantized weight needs K, N >= 1 and bf16 or int8 (K=%d N=%d)",
                          K, N);
    const int NR = mygpt_matmul_isa().NR, panels = (N + NR - 1) / NR;
    const size_t es = mygpt_weights_value_bytes(format), len = (size_t)panels * NR * K;
    const size_t groups = mygpt_int8_groups(K), slen = format == MYGPT_WEIGHTS_INT8 ? (size_t)panels * groups * NR : 0;
    void *mem = panels_alloc(len * es), *smem = NULL;
    if (!mem || (slen && !(smem = panels_alloc(slen * sizeof(float))))) {
        free(mem);
        return mygpt_fail(err, MYGPT_ENOMEM, "out of memory for a packed quantized weight (%zu values)", len);
    }
    // as the kernels' pack lays out floats: panel p, row k, column j is weight row p * NR + j,
    // input k (0 past N); int8's scales likewise, group g in place of k
#pragma omp parallel for schedule(static) if (len > MYGPT_KERNEL_SMALL)
    for (int p = 0; p < panels; p++) {
        const int cols = N - p * NR < NR ? N - p * NR : NR;
        for (int k = 0; k < K; k++)
            for (int j = 0; j < NR; j++) {
                const size_t src = ((size_t)p * NR + (size_t)j) * K + (size_t)k, dst = ((size_t)p * K + k) * NR + j;
                if (es == 2)
                    ((uint16_t *)mem)[dst] = j < cols ? ((const uint16_t *)q)[src] : 0;
                else
                    ((int8_t *)mem)[dst] = j < cols ? ((const int8_t *)q)[src] : 0;
            }
        for (size_t g = 0; g < (slen ? groups : 0); g++)
            for (int j = 0; j < NR; j++)
                ((float *)smem)[((size_t)p * groups + g) * NR + j] =
                    j < cols ? scales[((size_t)p * NR + (size_t)j) * groups + g] : 0.0f;
    }
    pw->qpanels = mem;
    pw->qscales = smem;
    pw->format = format;
    pw->value_bytes = (int)es;
    pw->weight = weight;
    pw->K = K, pw->N = N, pw->NR = NR;
    return MYGPT_OK;
}

void mygpt_matmul_packed_free(mygpt_packed_weight *pw)
{
    free(pw->panels);
    free(pw->qpanels);
    free(pw->qscales);
    memset(pw, 0, sizeof *pw);
}

int mygpt_matmul_packed_fits(const mygpt_packed_weight *pw)
{
    return pw && (pw->panels || pw->qpanels) && pw->NR == mygpt_matmul_isa().NR;
}

mygpt_status mygpt_matmul_prepacked(float *out, const float *inp, const mygpt_packed_weight *pw,
                                    const float *bias, size_t M, int apply_gelu, mygpt_error *err)
{
    matmul_isa kern = mygpt_matmul_isa();
    if (!mygpt_matmul_packed_fits(pw))
        return mygpt_fail(err, MYGPT_EINVAL, "the packed weight was made for another kernel (NR %d, not %d)",
                          pw->NR, kern.NR);
    if (M == 0)
        return MYGPT_OK;
    matmul_job job = {.out = out, .a = inp, .lda = (size_t)pw->K, .b = pw->weight, .ldb = (size_t)pw->K,
                      .prepacked = pw->panels, .format = pw->format, .qpanels = pw->qpanels,
                      .qscales = pw->qscales, .value_bytes = (size_t)pw->value_bytes, .bias = bias, .M = M,
                      .K = pw->K, .N = pw->N,
                      .apply_gelu = apply_gelu, .kern = kern};
    return run(&job, err);
}

/* ---- products of a planned pass: the caller's workspace -------------------------- */

/* The job of a forward product (pr's pointers may be NULL while it is only sized) */
static matmul_job product_job(const mygpt_product *pr)
{
    const mygpt_packed_weight *pw = mygpt_matmul_packed_fits(pr->pw) ? pr->pw : NULL;
    matmul_job job = {.out = pr->out, .a = pr->inp, .lda = (size_t)pr->K, .b = pw ? pw->weight : pr->weight,
                      .ldb = (size_t)pr->K, .bias = pr->bias, .M = pr->M, .K = pr->K, .N = pr->N,
                      .apply_gelu = pr->gelu, .kern = mygpt_matmul_isa()};
    if (pw)
        job.prepacked = pw->panels, job.format = pw->format, job.qpanels = pw->qpanels, job.qscales = pw->qscales,
        job.value_bytes = (size_t)pw->value_bytes;
    return job;
}

void mygpt_product_run(const mygpt_product *pr, void *ws, size_t ws_bytes)
{
    if (pr->M == 0)
        return;
    matmul_job job = product_job(pr);
    run_in(&job, ws, ws_bytes);
}

/* ---- backward ---------------------------------------------------------------------- */

/* One of a gradient's two products, acc_into (M, Nn) (+)= A . B through the fast kernel:
 * A (M, K) at a (lda apart; transposed when a_t), B (K, Nn) k-major at b (ldb apart). */
typedef struct grad_product {
    float *acc_into;
    int set;
    const float *a, *b;
    size_t lda, ldb;
    int a_t;
    size_t M;
    int K, Nn;
} grad_product;

/* Its job: summed from zero into tmp (only needed when K spans more than one KC block),
 * then added, as PyTorch's autograd adds a gradient it computed; with set, acc_into =
 * A . B, summed in place. */
static matmul_job grad_job(const grad_product *gp, float *tmp)
{
    return (matmul_job){.out = gp->set ? gp->acc_into : tmp, .acc_into = gp->set ? NULL : gp->acc_into,
                        .a = gp->a, .lda = gp->lda, .a_t = gp->a_t, .b = gp->b, .ldb = gp->ldb, .b_kmajor = 1,
                        .M = gp->M, .K = gp->K, .N = gp->Nn, .kern = mygpt_matmul_isa()};
}

/* Floats of tmp, rounded up to a cache line */
static size_t grad_tmp_floats(const grad_product *gp)
{
    return !gp->set && gp->K > KC ? (gp->M * (size_t)gp->Nn + 15) / 16 * 16 : 0;
}

/* The gradient's two products: dinp (N, C) (+)= dout (N, OC) @ weight (OC, C), weight read
 * as B = (K = OC, C); dweight (OC, C) (+)= dout^T (OC, N) @ inp (N, C), dout read
 * transposed, the sum over the N rows in the kernel's fixed order (KC blocks, k in order).
 * A product whose output is NULL has M = 0. */
static void grad_products(const mygpt_product_grad *g, grad_product gp[2])
{
    gp[0] = (grad_product){g->dinp, g->set_dinp, g->dout, g->weight, (size_t)g->OC, (size_t)g->C, 0,
                           g->dinp ? g->N : 0, g->OC, g->C};
    gp[1] = (grad_product){g->dweight, g->set_dweight, g->dout, g->inp, (size_t)g->OC, (size_t)g->C, 1,
                           g->dweight ? (size_t)g->OC : 0, (int)g->N, g->C};
}

/* The bytes a job needs, SIZE_MAX when it cannot be shared out */
static size_t sized(matmul_job *j)
{
    return prepare(j, NULL) == MYGPT_OK ? job_bytes(j) : SIZE_MAX;
}

size_t mygpt_product_workspace(const mygpt_product *pr, const mygpt_product_grad *g)
{
    size_t most = 0;
    if (pr->M > 0) {
        matmul_job job = product_job(pr);
        most = sized(&job);
    }
    grad_product gp[2];
    for (int i = 0; g && g->N > 0 && i < 2; i++) {
        grad_products(g, gp);
        if (gp[i].M == 0)
            continue;
        matmul_job job = grad_job(&gp[i], NULL);
        const size_t bytes = sized(&job), tmp = grad_tmp_floats(&gp[i]) * sizeof(float);
        const size_t need = bytes > SIZE_MAX - 64 - tmp ? SIZE_MAX : tmp + bytes + 64;
        most = need > most ? need : most;
    }
    return most;
}

/* dbias (OC) += the column sums of dout (N, OC), each summed from zero over the rows in
 * order, as the plain loops sum it. Threads own runs of COLUMN_RUN columns and add a row's
 * run at once: the columns' sums go down side by side in vector lanes, each in its own
 * lane, so the order of every sum is the plain one. */
#define COLUMN_RUN 64
/* one run: columns [o0, o0 + w), w <= COLUMN_RUN (built per instruction set) */
MYGPT_CLONES static void column_run_add(float *dbias, const float *dout, size_t N, int OC, int o0, int w)
{
    float s[COLUMN_RUN] = {0};
    for (size_t n = 0; n < N; n++) {
        const float *row = dout + n * (size_t)OC + o0;
        for (int i = 0; i < w; i++)
            s[i] += row[i];
    }
    for (int i = 0; i < w; i++)
        dbias[o0 + i] += s[i];
}

static void column_sums_add(float *dbias, const float *dout, size_t N, int OC)
{
    const int runs = (OC + COLUMN_RUN - 1) / COLUMN_RUN;
#pragma omp parallel for schedule(static) if (N * (size_t)OC > MYGPT_KERNEL_SMALL)
    for (int r = 0; r < runs; r++) {
        const int o0 = r * COLUMN_RUN, w = OC - o0 < COLUMN_RUN ? OC - o0 : COLUMN_RUN;
        column_run_add(dbias, dout, N, OC, o0, w);
    }
}

void mygpt_product_grad_run(const mygpt_product_grad *g, void *ws, size_t ws_bytes)
{
    if (g->N == 0)
        return;
    grad_product gp[2];
    grad_products(g, gp);
    // tmp from ws's first cache line, the job's block after it
    float *base = ws ? (float *)((char *)ws + (64 - (uintptr_t)ws % 64) % 64) : NULL;
    for (int i = 0; i < 2; i++) {
        if (gp[i].M == 0)
            continue;
        const size_t tmp = grad_tmp_floats(&gp[i]);
        matmul_job job = grad_job(&gp[i], tmp ? base : NULL);
        run_in(&job, base ? base + tmp : NULL, ws_bytes - 64 - tmp * sizeof(float));
    }
    if (g->dbias)
        column_sums_add(g->dbias, g->dout, g->N, g->OC);
}

mygpt_status mygpt_matmul_grad(const mygpt_product_grad *g, mygpt_error *err)
{
    if (g->C < 1 || g->OC < 1 || g->N > (size_t)INT_MAX)
        return mygpt_fail(err, MYGPT_EINVAL, "matmul backward needs 1 <= C, OC and N <= INT_MAX (N=%zu C=%d OC=%d)",
                          g->N, g->C, g->OC);
    const size_t bytes = mygpt_product_workspace(&(mygpt_product){0}, g);
    if (bytes == SIZE_MAX)
        return mygpt_fail(err, MYGPT_EINVAL, "matmul backward of %zu x %d x %d is too large to share out", g->N, g->C,
                          g->OC);
    void *ws = NULL;
    if (bytes && !(ws = malloc(bytes)))
        return mygpt_fail(err, MYGPT_ENOMEM, "out of memory for the matmul backward (%zu bytes)", bytes);
    mygpt_product_grad_run(g, ws, bytes);
    free(ws);
    return MYGPT_OK;
}

mygpt_status mygpt_matmul_backward(mygpt_linear_grads d, const float *dout, const float *inp,
                                   const float *weight, size_t N, int C, int OC, mygpt_error *err)
{
    const mygpt_product_grad g = {.dinp = d.dinp, .dweight = d.dweight, .dbias = d.dbias, .dout = dout, .inp = inp,
                                  .weight = weight, .N = N, .C = C, .OC = OC};
    return mygpt_matmul_grad(&g, err);
}
