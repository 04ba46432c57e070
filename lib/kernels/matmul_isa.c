/*
 * matmul_isa.c - the matmul's micro-kernels, one set per instruction set: the register
 * tile c += a . b of kernel_body compiled for each tile shape and layout of A, fc1's GELU
 * epilogue, B's packing, the strip copies and swapped-tile stores, and the one-row
 * decoding kernels over packed (float32, bf16 or int8) panels. matmul.c's driver calls
 * them through the table of the set the CPU runs (mygpt_matmul_isa). Every set computes
 * every value the same way (fmaf in the same order), so all give the same bits.
 */
#include <assert.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "mygpt/weights.h"
#include "base/simd.h"
#include "kernels/cpu.h"
#include "kernels/matmul.h"
#include "kernels/matmul_isa.h"
#include "kernels/vecmath.h"

#ifdef MYGPT_X86_KERNELS
#include <immintrin.h>
#endif
#ifdef MYGPT_NEON_KERNELS
#include <arm_neon.h>
#endif

/* The kernel asks for the packed panel's row PANEL_PREFETCH k steps ahead: the panel
 * streams from L2 (a unit's panels are larger than L1) and the hardware's prefetcher
 * alone left its loads waiting. A hint only: no value or order changes. */
#define PANEL_PREFETCH 8

/* The register tiles are not instrumented by the sanitizers: AddressSanitizer gives the
 * accumulator array redzones on the stack and UndefinedBehaviorSanitizer checks each of
 * its indices, so the tile lives in memory, unvectorised, and every product of the test
 * suite runs some fifty times slower. UBSan's checks follow the body, ASan's the function
 * it is inlined into: the body and every wrapper carry the attribute. What a tile reads
 * is the packed panel and the rows of A its driver hands it (both made by instrumented
 * code); valgrind (stage 3 of scripts/test.sh) checks those reads in the AVX2 and
 * generic tiles (it runs no AVX-512: there the 14 x 32 tile runs under no memory
 * checker), and the tests compare every path with the naive kernel. */
#define REGISTER_TILE __attribute__((no_sanitize("address", "undefined")))

/* c (rows x NR, row stride ldc) = (first ? init : c) + a (rows x kc) . bp (kc x NR, packed),
 * the product summed from zero, k in order, one fused multiply-add at a time, then
 * added to c. init is the bias (or NULL for zero). A_T says how a is stored: row by row
 * (element (i, k) at a[i * lda + k]) or transposed (at a[k * lda + i]: the backward's
 * dout^T). The body is written once; the wrappers below compile it for a tile height
 * MR, a layout of a and an instruction set. */
REGISTER_TILE static inline __attribute__((always_inline)) void kernel_body(const int MR, const int NR, const int A_T,
                                                                           const tile_args *t)
{
    const float *restrict a = t->a, *restrict bp = t->bp, *restrict init = t->init;
    float *restrict c = t->c;
    const size_t lda = t->lda, ldc = t->ldc;
    const int rows = t->rows, kc = t->kc, first = t->first;
    const lines_ahead *pf = t->pf;
    // pf's lines, one every `every` k steps (the rest after the loop), counted down: a
    // k % every in the loop is a division at every step
    const int segs = pf ? pf->segs : 0, seg_lines = pf ? pf->seg_lines : 0, lines = segs * seg_lines;
    const int every = lines > kc ? 1 : (lines ? kc / lines : 1);
    int seg = 0, line = 0, wait = 1;
    const char *run = pf ? pf->base : NULL;
#define A_AT(i, k) (A_T ? a[(size_t)(k) * lda + (i)] : a[(size_t)(i) * lda + (k)])
    float acc[MR_MAX][NR_MAX];
    for (int i = 0; i < MR; i++)
        for (int j = 0; j < NR; j++)
            acc[i][j] = 0.0f;
    if (rows == MR) {
        for (int k = 0; k < kc; k++) {
            const float *b = bp + (size_t)k * NR;
            for (int l = 0; l < NR; l += 16) // one line of 16 floats at a time
                __builtin_prefetch(b + PANEL_PREFETCH * NR + l, 0, 3);
            if (seg < segs && --wait == 0) {
                wait = every;
                __builtin_prefetch(run + (size_t)line * 64, 0, 3);
                if (++line == seg_lines)
                    line = 0, seg++, run += pf->stride;
            }
            for (int i = 0; i < MR; i++) {
                const float ai = A_AT(i, k);
#pragma omp simd
                for (int j = 0; j < NR; j++)
                    acc[i][j] = fmaf(ai, b[j], acc[i][j]);
            }
        }
    } else {
        for (int k = 0; k < kc; k++) {
            const float *b = bp + (size_t)k * NR;
            for (int i = 0; i < rows; i++) {
                const float ai = A_AT(i, k);
#pragma omp simd
                for (int j = 0; j < NR; j++)
                    acc[i][j] = fmaf(ai, b[j], acc[i][j]);
            }
        }
    }
#undef A_AT
    for (; seg < segs; seg++, run += pf->stride, line = 0)
        for (; line < seg_lines; line++)
            __builtin_prefetch(run + (size_t)line * 64, 0, 3);
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < NR; j++) {
            const float base = first ? (init ? init[j] : 0.0f) : c[i * ldc + j];
            c[i * ldc + j] = base + acc[i][j];
        }
}

/* GELU over a rows x cols tile of c, in place: the epilogue of fc1, while the tile is
 * still in cache. Compiled per instruction set like the kernels so it vectorises. */
static inline __attribute__((always_inline)) void gelu_body(float *c, size_t ldc, int rows,
                                                            int cols)
{
    for (int i = 0; i < rows; i++)
#pragma omp simd
        for (int j = 0; j < cols; j++)
            c[i * ldc + j] = mygpt_gelu(c[i * ldc + j]);
}
static void gelu_generic(float *c, size_t ldc, int rows, int cols)
{
    gelu_body(c, ldc, rows, cols);
}

/* B's panel (pack_fn, matmul_isa.h), written in order (j innermost) so that the
 * compiler gathers the NR weight rows with vector loads, faster than walking each row
 * (bench/results/design-notes.md). Compiled per set like the kernels: a forced set packs
 * with its own instructions too. Values are only moved: the same bits on every set. */
static inline __attribute__((always_inline)) void pack_body(const int NR, float *restrict dst,
                                                            const float *restrict src, size_t ldb, int kc, int cols,
                                                            int b_kmajor)
{
    if (b_kmajor) {
        for (int k = 0; k < kc; k++)
#pragma omp simd
            for (int j = 0; j < NR; j++)
                dst[(size_t)k * NR + j] = j < cols ? src[(size_t)k * ldb + j] : 0.0f;
    } else {
        for (int k = 0; k < kc; k++)
#pragma omp simd
            for (int j = 0; j < NR; j++)
                dst[(size_t)k * NR + j] = j < cols ? src[(size_t)j * ldb + k] : 0.0f;
    }
}
static void pack_generic(float *restrict dst, const float *restrict src, size_t ldb, int kc, int cols, int b_kmajor)
{
    pack_body(16, dst, src, ldb, kc, cols, b_kmajor);
}

/* Moving values, no arithmetic but acc_into's one addition, so every instruction set
 * gives the same bits; compiled per set because as scalar loops they were a large share of
 * a training step (bench/results/design-notes.md).
 * copy_strips: for k < kc and i < rows, a[k * lda + i] to strip i / MR (strips stride
 * floats apart from dst), at k * MR + i % MR (copy_unit_a).
 * store_swapped: o[j * ldo + i] = c[i * NR + j] (or +=, with add) for i < rows, j < cols:
 * a swapped tile (weight rows x tokens) put back into out (tokens x weight rows). */
static void copy_strips_generic(float *restrict dst, size_t stride, int MR, const float *restrict a, size_t lda,
                                int kc, size_t rows)
{
    for (int k = 0; k < kc; k++) { // a's row k, MR values to each strip (no i / MR, i % MR)
        const float *src = a + (size_t)k * lda;
        float *d = dst + (size_t)k * MR;
        size_t i = 0;
        for (; i + (size_t)MR <= rows; i += (size_t)MR, d += stride)
            for (int r = 0; r < MR; r++)
                d[r] = src[i + (size_t)r];
        for (int r = 0; i + (size_t)r < rows; r++)
            d[r] = src[i + (size_t)r];
    }
}
static void store_swapped_generic(float *restrict o, size_t ldo, const float *restrict c, int NR, int rows,
                                  int cols, int add)
{
    for (int j = 0; j < cols; j++)
        for (int i = 0; i < rows; i++)
            if (add)
                o[j * ldo + i] += c[i * NR + j];
            else
                o[j * ldo + i] = c[i * NR + j];
}

#define KERNEL_ARGS const tile_args *t
#define KERNEL_CALL(MR, NR, A_T) kernel_body(MR, NR, A_T, t)

/* any CPU: fmaf() from the C library (same results, slower) */
REGISTER_TILE static void kernel_6x16(KERNEL_ARGS)
{
    KERNEL_CALL(6, 16, 0);
}
REGISTER_TILE static void kernel_6x16_t(KERNEL_ARGS)
{
    KERNEL_CALL(6, 16, 1);
}

/* Decoding reads each panel once, as a stream: asking for its lines DECODE_PREFETCH bytes
 * ahead keeps enough reads in flight while the core is busy widening quantized values
 * (the hardware's prefetchers alone leave bf16 and int8 well short of the bandwidth;
 * bench/results/quantized_decoding.txt). A hint only: no value or order changes. */
#define DECODE_PREFETCH 1024
#define PREFETCH_AHEAD(p, n)                                                                       \
    for (size_t l_ = 0; l_ < (n) * sizeof *(p); l_ += 64)                                          \
    __builtin_prefetch((const char *)(p) + DECODE_PREFETCH + l_, 0, 3)
/* One row of a product (decoding a token) over P panels side by side, written with
 * intrinsics: kernel_body's arithmetic exactly (b = the float32 value, or the widened
 * one, times its group's scale for int8; one fused multiply-add per k in order for every
 * column; then added to the bias or to c), but int8's values widened by one instruction
 * (gcc's vectoriser sizes the loop by int8's narrow type and widens in two steps with
 * extracts), bf16's split two vectors from one load (SPLIT_BF16: each 32-bit lane's low
 * half shifted up is an even column's float, its high half masked an odd one's; two
 * plain instructions for 2 V values, no widening), so a pair of accumulators holds its
 * even columns, then its odd ones, put back in order at the end; and P panels at once: a
 * column's sum is a chain of fused multiply-adds (4 cycles each), so one panel's chains
 * leave the core waiting and read one stream; P panels give NV P independent chains and
 * P streams, closer to the read bandwidth (bench/results/design-notes.md); fewer at a
 * unit's end, down to one. Panel
 * i's values start i * bstride elements after bp, its scales i * sstride floats after sc,
 * its columns i * NV V after c and init; the first cols columns are written. A panel's
 * row is NV vectors of V floats: NR = NV V (AVX2 2 x 8, AVX-512 2 x 16, NEON 4 x 4). */
#define QROWS_BODY(P, NV, V, VEC, SET1, ZERO, LOADS, FMA, STORE, WIDEN_I8, SPLIT_BF16, MUL)       \
    _Static_assert((NV) % 2 == 0, "bf16 splits a panel row's vectors in pairs");                  \
    VEC acc[NV * P], s[NV * P];                                                                    \
    _Pragma("GCC unroll 16") for (int i = 0; i < NV * P; i++) acc[i] = s[i] = ZERO;               \
    const int chunk = BF == MYGPT_WEIGHTS_INT8 ? MYGPT_INT8_GROUP : kc;                            \
    const size_t elem = BF == MYGPT_WEIGHTS_FP32 ? 4 : BF == MYGPT_WEIGHTS_BF16 ? 2 : 1;             \
    const size_t row_bytes = (size_t)NV * V * elem;                                               \
    for (int k0 = 0; k0 < kc; k0 += chunk) {                                                       \
        const int k1 = kc - k0 < chunk ? kc : k0 + chunk;                                          \
        if (BF == MYGPT_WEIGHTS_INT8) {                                                            \
            _Pragma("GCC unroll 8") for (int i = 0; i < P; i++) {                                  \
                const float *g = sc + (size_t)i * sstride + (size_t)(k0 / MYGPT_INT8_GROUP) * NV * V; \
                _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) s[NV * i + v] = LOADS(g + v * V); \
            }                                                                                      \
        }                                                                                          \
        for (int k = k0; k < k1; k++) {                                                            \
            const VEC ai = SET1(a[k]);                                                             \
            _Pragma("GCC unroll 8") for (int i = 0; i < P; i++) {                                  \
                const size_t at = (size_t)i * bstride + (size_t)k * NV * V; /* the panel's row k */ \
                const char *row = (const char *)bp + at * elem;                                    \
                /* a hint for the line each row starts in, once: an int8 line holds 4 rows */     \
                if (k == 0 || ((uintptr_t)row & 63) < row_bytes)                                   \
                    PREFETCH_AHEAD(row, row_bytes);                                                \
                if (BF == MYGPT_WEIGHTS_BF16) {                                                    \
                    _Pragma("GCC unroll 4") for (int v = 0; v < NV; v += 2) {                      \
                        VEC even, odd;                                                             \
                        SPLIT_BF16((const uint16_t *)bp + at + (size_t)v * V, even, odd);          \
                        acc[NV * i + v] = FMA(ai, even, acc[NV * i + v]);                          \
                        acc[NV * i + v + 1] = FMA(ai, odd, acc[NV * i + v + 1]);                   \
                    }                                                                              \
                    continue;                                                                      \
                }                                                                                  \
                _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) {                             \
                    const size_t e = at + (size_t)v * V;                                           \
                    const VEC b = BF == MYGPT_WEIGHTS_INT8 ? MUL(WIDEN_I8((const int8_t *)bp + e), s[NV * i + v]) \
                                                           : LOADS((const float *)bp + e);         \
                    acc[NV * i + v] = FMA(ai, b, acc[NV * i + v]);                                 \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
    }                                                                                              \
    float lanes[NV * P * V], sums[NV * P * V];                                                     \
    for (int i = 0; i < NV * P; i++)                                                               \
        STORE(lanes + i * V, acc[i]);                                                              \
    for (int j = 0; j < NV * P * V; j++) /* bf16: each pair's even columns, then its odd ones */   \
        sums[j] = BF == MYGPT_WEIGHTS_BF16 ? lanes[j / (2 * V) * 2 * V + (j & 1) * V + j % (2 * V) / 2] : lanes[j]; \
    for (int j = 0; j < cols; j++)                                                                 \
        c[j] = (first ? (init ? init[j] : 0.0f) : c[j]) + sums[j];
/* The decoding kernel NAME of one format (FORMAT) and instruction set (TARGET, BODY):
 * np panels at once, 1 to 4 (qrows_fn, matmul_isa.h) */
#define DECODE_FN(NAME, TARGET, BODY, FORMAT)                                                      \
    TARGET static int NAME(const qrows_args *r, int np, int cols)                                  \
    {                                                                                              \
        const int BF = FORMAT;                                                                     \
        const float *restrict a = r->a, *restrict sc = r->sc, *restrict init = r->init;            \
        const void *restrict bp = r->bp;                                                           \
        float *restrict c = r->c;                                                                  \
        const size_t bstride = r->bstride, sstride = r->sstride;                                   \
        const int kc = r->kc, first = r->first;                                                    \
        switch (np) {                                                                              \
        case 1: { BODY(1) } return 1;                                                              \
        case 2: { BODY(2) } return 1;                                                              \
        case 3: { BODY(3) } return 1;                                                              \
        case 4: { BODY(4) } return 1;                                                              \
        default: return 0;                                                                         \
        }                                                                                          \
    }

#if defined(MYGPT_X86_KERNELS) || defined(MYGPT_NEON_KERNELS)
#define HAVE_INTRINSICS_TILES 1
/* pf's lines spread over the kc steps of a tile written with intrinsics: one line asked
 * for, then a run of `every` k steps with no other work than the tile's (the same lines
 * at the same k steps as kernel_body's full tile), the lines left over asked for at the
 * end. */
typedef struct line_walk {
    const lines_ahead *pf;
    const char *run;
    int seg, line, segs, every;
} line_walk;
static inline __attribute__((always_inline)) line_walk line_walk_start(const lines_ahead *pf, int kc)
{
    const int segs = pf ? pf->segs : 0, lines = pf ? segs * pf->seg_lines : 0;
    return (line_walk){pf, pf ? pf->base : NULL, 0, 0, segs, lines > kc ? 1 : (lines ? kc / lines : 1)};
}
/* Asks for the next line; returns where the run of tile steps from k ends. */
static inline __attribute__((always_inline)) int line_walk_next(line_walk *w, int k, int kc)
{
    if (w->seg < w->segs) {
        __builtin_prefetch(w->run + (size_t)w->line * 64, 0, 3);
        if (++w->line == w->pf->seg_lines)
            w->line = 0, w->seg++, w->run += w->pf->stride;
    }
    return w->seg < w->segs && kc - k > w->every ? k + w->every : kc;
}
static inline __attribute__((always_inline)) void line_walk_finish(line_walk *w)
{
    for (; w->seg < w->segs; w->seg++, w->run += w->pf->stride, w->line = 0)
        for (; w->line < w->pf->seg_lines; w->line++)
            __builtin_prefetch(w->run + (size_t)w->line * 64, 0, 3);
}
#if defined(__clang__)
/* Tiles for clang: kernel_body's MR x NV W tile (NV vectors of W floats a row) with
 * intrinsics, the accumulators in an array that the unrolled loops keep in MR NV
 * registers. gcc vectorises kernel_body itself so; clang 14 leaves it scalar, each
 * accumulator passing through the stack (a training step 3.3 times slower than with the
 * AVX2 tile), so under clang every tile of the AVX-512 and NEON sets and the AVX2 set's
 * last row block run these, built for each row count (tile_rows_*). The
 * arithmetic is kernel_body's: each element summed from zero with one fused multiply-add
 * per k in order, then added to its base; the prefetch hints as line_walk gives them.
 * Each loop over the tile's rows or vectors is unrolled whole (UNROLLED), so that its
 * accumulators are registers. */
#define UNROLLED _Pragma("clang loop unroll(full) vectorize(disable)")
#define CLANG_TILE(NAME, TARGET, V, W, NV, LOADU, SET1, FMADD, ADD, STOREU, ZERO)                  \
    TARGET REGISTER_TILE static inline __attribute__((always_inline)) void NAME(const int MR, const int A_T, \
                                                                                const tile_args *t) \
    {                                                                                              \
        const float *restrict a = t->a, *restrict bp = t->bp, *restrict init = t->init;            \
        float *restrict c = t->c;                                                                  \
        const size_t lda = t->lda, ldc = t->ldc, step = A_T ? lda : 1, di = A_T ? 1 : lda;         \
        const int kc = t->kc;                                                                      \
        line_walk pf = line_walk_start(t->pf, kc);                                                 \
        V acc[MR_MAX][NV]; /* row i's columns v W .. v W + W - 1 in acc[i][v] */                   \
        UNROLLED for (int i = 0; i < MR; i++)                                                      \
            UNROLLED for (int v = 0; v < NV; v++)                                                  \
                acc[i][v] = ZERO();                                                                \
        const float *ak = a; /* a's element (i, k): ak[i * di], ak moving with k */                \
        for (int k = 0; k < kc;) {                                                                 \
            const int kend = line_walk_next(&pf, k, kc);                                           \
            for (; k < kend; k++, ak += step) {                                                    \
                const float *b = bp + (size_t)k * NV * W;                                          \
                for (int l = 0; l < NV * W; l += 16) /* the panel's lines PANEL_PREFETCH rows on */ \
                    __builtin_prefetch(b + PANEL_PREFETCH * NV * W + l, 0, 3);                     \
                V bv[NV];                                                                          \
                UNROLLED for (int v = 0; v < NV; v++)                                              \
                    bv[v] = LOADU(b + v * W);                                                      \
                UNROLLED for (int i = 0; i < MR; i++) {                                            \
                    const V ai = SET1(ak[(size_t)i * di]);                                         \
                    UNROLLED for (int v = 0; v < NV; v++)                                          \
                        acc[i][v] = FMADD(ai, bv[v], acc[i][v]);                                   \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
        line_walk_finish(&pf);                                                                     \
        UNROLLED for (int i = 0; i < MR; i++) {                                                    \
            float *d = c + (size_t)i * ldc;                                                        \
            UNROLLED for (int v = 0; v < NV; v++) {                                                \
                const V base = t->first ? (init ? LOADU(init + v * W) : ZERO()) : LOADU(d + v * W); \
                STOREU(d + v * W, ADD(base, acc[i][v]));                                           \
            }                                                                                      \
        }                                                                                          \
    }
#define TILE_ROWS(TILE, R, A_T)                                                                    \
    case R:                                                                                        \
        TILE(R, A_T, t);                                                                           \
        return
#endif
#endif
#ifdef MYGPT_X86_KERNELS
#define HAVE_X86_KERNELS 1
#if defined(__clang__)
CLANG_TILE(clang_tile_avx2, MYGPT_AVX2, __m256, 8, 2, _mm256_loadu_ps, _mm256_set1_ps, _mm256_fmadd_ps,
           _mm256_add_ps, _mm256_storeu_ps, _mm256_setzero_ps)
CLANG_TILE(clang_tile_avx512, MYGPT_AVX512, __m512, 16, 2, _mm512_loadu_ps, _mm512_set1_ps, _mm512_fmadd_ps,
           _mm512_add_ps, _mm512_storeu_ps, _mm512_setzero_ps)
/* the AVX2 tile's last row block, of 1 to 5 rows */
MYGPT_AVX2 REGISTER_TILE static inline __attribute__((always_inline)) void tile_rows_avx2(const int A_T,
                                                                                         const tile_args *t)
{
    switch (t->rows) {
        TILE_ROWS(clang_tile_avx2, 5, A_T); TILE_ROWS(clang_tile_avx2, 4, A_T); TILE_ROWS(clang_tile_avx2, 3, A_T);
        TILE_ROWS(clang_tile_avx2, 2, A_T); TILE_ROWS(clang_tile_avx2, 1, A_T);
    default:
        kernel_body(6, 16, A_T, t);
    }
}
/* every AVX-512 tile, of 1 to 14 rows */
MYGPT_AVX512 REGISTER_TILE static inline __attribute__((always_inline)) void tile_rows_avx512(const int A_T,
                                                                                           const tile_args *t)
{
    switch (t->rows) {
        TILE_ROWS(clang_tile_avx512, 14, A_T); TILE_ROWS(clang_tile_avx512, 13, A_T);
        TILE_ROWS(clang_tile_avx512, 12, A_T); TILE_ROWS(clang_tile_avx512, 11, A_T);
        TILE_ROWS(clang_tile_avx512, 10, A_T); TILE_ROWS(clang_tile_avx512, 9, A_T);
        TILE_ROWS(clang_tile_avx512, 8, A_T); TILE_ROWS(clang_tile_avx512, 7, A_T);
        TILE_ROWS(clang_tile_avx512, 6, A_T); TILE_ROWS(clang_tile_avx512, 5, A_T);
        TILE_ROWS(clang_tile_avx512, 4, A_T); TILE_ROWS(clang_tile_avx512, 3, A_T);
        TILE_ROWS(clang_tile_avx512, 2, A_T); TILE_ROWS(clang_tile_avx512, 1, A_T);
    default:
        kernel_body(14, 32, A_T, t);
    }
}
#endif
/* AVX2 + FMA: kernel_body's 6 x 16 tile written with intrinsics, 12 ymm accumulators
 * in named registers, and A's prefetch hints given between runs of k steps instead of
 * checked for at every step: each k is then two panel loads, six broadcasts of a and
 * twelve vfmadd231ps, and the panel's prefetch (with 16 ymm registers there is no room
 * for more; bench/results/design-notes.md has the measurement). The arithmetic is
 * kernel_body's exactly: each element summed from zero with one fused multiply-add per k
 * in order, then added to its base. A tile of fewer rows (the last row block) runs
 * kernel_body (under clang, the clang tile of its rows). */
#define FMA_ROW(i, A)                                                                              \
    do {                                                                                           \
        const __m256 a_ = _mm256_broadcast_ss(A);                                                  \
        c##i##0 = _mm256_fmadd_ps(a_, b0, c##i##0);                                                \
        c##i##1 = _mm256_fmadd_ps(a_, b1, c##i##1);                                                \
    } while (0)
#define STORE_ROW(i)                                                                               \
    do {                                                                                           \
        float *d_ = c + (size_t)(i) * ldc;                                                         \
        const __m256 base0 = first ? (init ? _mm256_loadu_ps(init) : z) : _mm256_loadu_ps(d_);     \
        const __m256 base1 = first ? (init ? _mm256_loadu_ps(init + 8) : z) : _mm256_loadu_ps(d_ + 8); \
        _mm256_storeu_ps(d_, _mm256_add_ps(base0, c##i##0));                                       \
        _mm256_storeu_ps(d_ + 8, _mm256_add_ps(base1, c##i##1));                                   \
    } while (0)
MYGPT_AVX2 REGISTER_TILE static inline __attribute__((always_inline)) void tile_6x16_avx2(const int A_T,
                                                                                         const tile_args *t)
{
    if (t->rows != 6) {
#if defined(__clang__)
        tile_rows_avx2(A_T, t);
#else
        kernel_body(6, 16, A_T, t);
#endif
        return;
    }
    const float *restrict a = t->a, *restrict bp = t->bp, *restrict init = t->init;
    float *restrict c = t->c;
    const size_t lda = t->lda, ldc = t->ldc;
    const int kc = t->kc, first = t->first;
    line_walk pf = line_walk_start(t->pf, kc);
    const __m256 z = _mm256_setzero_ps();
    __m256 c00 = z, c01 = z, c10 = z, c11 = z, c20 = z, c21 = z, c30 = z, c31 = z, c40 = z, c41 = z, c50 = z,
           c51 = z;
    // a's element (i, k): a0[i * lda] (rows) or a0[i] (transposed), a0 moving with k
    const float *a0 = a, *a3 = a + (A_T ? 3 : 3 * lda);
    const size_t step = A_T ? lda : 1, di = A_T ? 1 : lda;
    for (int k = 0; k < kc;) {
        const int kend = line_walk_next(&pf, k, kc);
        for (; k < kend; k++, a0 += step, a3 += step) {
            const float *b = bp + (size_t)k * 16;
            _mm_prefetch((const char *)(b + PANEL_PREFETCH * 16), _MM_HINT_T0);
            const __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8);
            FMA_ROW(0, a0);
            FMA_ROW(1, a0 + di);
            FMA_ROW(2, a0 + 2 * di);
            FMA_ROW(3, a3);
            FMA_ROW(4, a3 + di);
            FMA_ROW(5, a3 + 2 * di);
        }
    }
    line_walk_finish(&pf);
    STORE_ROW(0);
    STORE_ROW(1);
    STORE_ROW(2);
    STORE_ROW(3);
    STORE_ROW(4);
    STORE_ROW(5);
}
#undef FMA_ROW
#undef STORE_ROW
MYGPT_AVX2 REGISTER_TILE static void kernel_6x16_avx2(KERNEL_ARGS)
{
    tile_6x16_avx2(0, t);
}
MYGPT_AVX2 REGISTER_TILE static void kernel_6x16_avx2_t(KERNEL_ARGS)
{
    tile_6x16_avx2(1, t);
}
#if defined(__clang__)
#define AVX512_TILE(MR, A_T) tile_rows_avx512(A_T, t) /* (MR is 14: its switch takes 1 to 14 rows) */
#else
#define AVX512_TILE(MR, A_T) KERNEL_CALL(MR, 32, A_T)
#endif
/* AVX-512: 14 x 32 accumulators = 28 zmm registers, twice the width and more than
 * twice the rows of AVX2, so each loaded panel row feeds 28 fused multiply-adds */
MYGPT_AVX512 REGISTER_TILE static void kernel_14x32_avx512(KERNEL_ARGS)
{
    AVX512_TILE(14, 0);
}
MYGPT_AVX512 REGISTER_TILE static void kernel_14x32_avx512_t(KERNEL_ARGS)
{
    AVX512_TILE(14, 1);
}
#define I8_16(q) _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(q))))
#define BF_32(h, even, odd)                                                                        \
    do {                                                                                           \
        const __m512i x_ = _mm512_loadu_si512((const void *)(h));                                  \
        even = _mm512_castsi512_ps(_mm512_slli_epi32(x_, 16));                                     \
        odd = _mm512_castsi512_ps(_mm512_and_si512(x_, _mm512_set1_epi32((int)0xffff0000u)));      \
    } while (0)
#define I8_8(q) _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(q))))
#define BF_16(h, even, odd)                                                                        \
    do {                                                                                           \
        const __m256i x_ = _mm256_loadu_si256((const __m256i *)(h));                               \
        even = _mm256_castsi256_ps(_mm256_slli_epi32(x_, 16));                                     \
        odd = _mm256_castsi256_ps(_mm256_and_si256(x_, _mm256_set1_epi32((int)0xffff0000u)));      \
    } while (0)
#define QROWS_AVX512(P) QROWS_BODY(P, 2, 16, __m512, _mm512_set1_ps, _mm512_setzero_ps(), _mm512_loadu_ps, \
                                   _mm512_fmadd_ps, _mm512_storeu_ps, I8_16, BF_32, _mm512_mul_ps)
#define QROWS_AVX2(P) QROWS_BODY(P, 2, 8, __m256, _mm256_set1_ps, _mm256_setzero_ps(), _mm256_loadu_ps, \
                                 _mm256_fmadd_ps, _mm256_storeu_ps, I8_8, BF_16, _mm256_mul_ps)
/* The panels decoding takes at once (DECODE_P) and their kernels, by format: 4 panels of
 * 2 vectors, 8 independent chains, what two FMA pipes of 4 cycles' latency keep busy (as
 * NEON's 2 panels of 4); AVX2's int8 kernel then keeps 2 of its 8 scales on the stack */
#define DECODE_P_AVX512 4
#define DECODE_P_AVX2 4
DECODE_FN(decode_avx512_fp32, MYGPT_AVX512, QROWS_AVX512, MYGPT_WEIGHTS_FP32)
DECODE_FN(decode_avx512_bf16, MYGPT_AVX512, QROWS_AVX512, MYGPT_WEIGHTS_BF16)
DECODE_FN(decode_avx512_int8, MYGPT_AVX512, QROWS_AVX512, MYGPT_WEIGHTS_INT8)
DECODE_FN(decode_avx2_fp32, MYGPT_AVX2, QROWS_AVX2, MYGPT_WEIGHTS_FP32)
DECODE_FN(decode_avx2_bf16, MYGPT_AVX2, QROWS_AVX2, MYGPT_WEIGHTS_BF16)
DECODE_FN(decode_avx2_int8, MYGPT_AVX2, QROWS_AVX2, MYGPT_WEIGHTS_INT8)

MYGPT_AVX2 static void gelu_avx2(float *c, size_t ldc, int rows, int cols)
{
    gelu_body(c, ldc, rows, cols);
}
MYGPT_AVX512 static void gelu_avx512(float *c, size_t ldc, int rows, int cols)
{
    gelu_body(c, ldc, rows, cols);
}
/* The strip copies and swapped-tile stores of AVX-512 and AVX2, one body each: a vector
 * of W floats, MASK(n) the mask of its first n lanes (a register on AVX-512, a vector on
 * AVX2), LOADM the masked load, STOREN(p, n, m, v) the store of v's first n lanes (m:
 * their mask). */
static const int32_t LANES[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
#define MASK16(n) ((__mmask16)((1u << (n)) - 1))
#define LOADM16(p, m) _mm512_maskz_loadu_ps(m, p)
#define STOREN16(p, n, m, v) _mm512_mask_storeu_ps(p, m, v)
#define MASK8(n) _mm256_loadu_si256((const __m256i *)(LANES + 8 - (n)))
#define LOADM8(p, m) _mm256_maskload_ps(p, m)
#define STOREN8(p, n, m, v) store_first8(p, n, v)
/* v's first n (0 to 8) lanes stored at p by plain stores of 4, 2 and 1 lanes, not by
 * AVX2's masked store: vmaskmovps's store form is microcoded on AMD's Zen 1 to 3 (42
 * micro-ops, some 12 cycles, in LLVM's scheduling model of Zen 3, where a plain store is
 * one), and a strip's row or a swapped tile's token row was one such store. AVX-512's
 * masked stores are single instructions on every CPU that has them. */
MYGPT_AVX2 static inline __attribute__((always_inline)) void store_first8(float *p, int n, __m256 v)
{
    if (n == 8) {
        _mm256_storeu_ps(p, v);
        return;
    }
    __m128 x = _mm256_castps256_ps128(v);
    if (n >= 4) {
        _mm_storeu_ps(p, x);
        x = _mm256_extractf128_ps(v, 1), p += 4, n -= 4;
    }
    if (n >= 2) {
        _mm_storel_pi((__m64 *)p, x);
        x = _mm_movehl_ps(x, x), p += 2, n -= 2;
    }
    if (n)
        _mm_store_ss(p, x);
}

/* MR <= W: a strip's k row is one masked load and one store; the source's rows (lda apart,
 * often a page or more: no hardware prefetcher follows them) are asked for
 * STRIP_PREFETCH rows ahead, a hint only */
#define STRIP_PREFETCH 8
#define COPY_STRIPS(NAME, TARGET, W, MASK_T, MASK, LOADM, STOREN)                                  \
    TARGET static void NAME(float *restrict dst, size_t stride, int MR, const float *restrict a,   \
                            size_t lda, int kc, size_t rows)                                       \
    {                                                                                              \
        assert(MR <= W); /* a strip's row is one mask */                                           \
        for (int k = 0; k < kc; k++) {                                                             \
            const float *src = a + (size_t)k * lda;                                                \
            for (size_t l = 0; k + STRIP_PREFETCH < kc && l < rows * sizeof *src + 63; l += 64)    \
                _mm_prefetch((const char *)(src + STRIP_PREFETCH * lda) + l, _MM_HINT_T0);         \
            for (size_t i0 = 0, b = 0; i0 < rows; i0 += MR, b++) {                                 \
                const size_t n = rows - i0 < (size_t)MR ? rows - i0 : (size_t)MR;                  \
                const MASK_T m = MASK(n);                                                          \
                STOREN(dst + b * stride + (size_t)k * MR, (int)n, m, LOADM(src + i0, m));          \
            }                                                                                      \
        }                                                                                          \
    }
COPY_STRIPS(copy_strips_avx512, MYGPT_AVX512, 16, __mmask16, MASK16, LOADM16, STOREN16)
COPY_STRIPS(copy_strips_avx2, MYGPT_AVX2, 8, __m256i, MASK8, LOADM8, STOREN8)

/* The first two rounds of a transpose of N rows (r) of vectors: pairs of rows
 * interleaved (t), then pairs of pairs (u[4g + e], lane L: rows 4g..4g+3 of column
 * 4L + e). PFX names the intrinsics' width, VD its vector of doubles. */
#define INTERLEAVE_ROWS(N, PFX, VD)                                                                \
    for (int i = 0; i < (N) / 2; i++) {                                                            \
        t[2 * i] = PFX##_unpacklo_ps(r[2 * i], r[2 * i + 1]);                                      \
        t[2 * i + 1] = PFX##_unpackhi_ps(r[2 * i], r[2 * i + 1]);                                  \
    }                                                                                              \
    for (int g = 0; g < (N) / 4; g++) {                                                            \
        const VD a = PFX##_castps_pd(t[4 * g]), b = PFX##_castps_pd(t[4 * g + 1]);                 \
        const VD c = PFX##_castps_pd(t[4 * g + 2]), d = PFX##_castps_pd(t[4 * g + 3]);             \
        u[4 * g] = PFX##_castpd_ps(PFX##_unpacklo_pd(a, c));                                       \
        u[4 * g + 1] = PFX##_castpd_ps(PFX##_unpackhi_pd(a, c));                                   \
        u[4 * g + 2] = PFX##_castpd_ps(PFX##_unpacklo_pd(b, d));                                   \
        u[4 * g + 3] = PFX##_castpd_ps(PFX##_unpackhi_pd(b, d));                                   \
    }
/* r[0..15] (rows of 16 floats) transposed in place: r[c][i] becomes the old r[i][c].
 * Four rounds of shuffles: pairs of rows interleaved, then pairs of pairs, then the
 * 128-bit lanes gathered in two steps. (A gather per column, vgatherdps, was slower
 * than scalar moves: bench/results/design-notes.md.) */
MYGPT_AVX512 static inline __attribute__((always_inline)) void transpose16(__m512 r[16])
{
    __m512 t[16], u[16];
    INTERLEAVE_ROWS(16, _mm512, __m512d)
    for (int e = 0; e < 4; e++) { // column 4L + e: lane L of u[e], u[4+e], u[8+e], u[12+e]
        const __m512 v0 = _mm512_shuffle_f32x4(u[e], u[4 + e], 0x88), w0 = _mm512_shuffle_f32x4(u[e], u[4 + e], 0xdd);
        const __m512 v1 = _mm512_shuffle_f32x4(u[8 + e], u[12 + e], 0x88),
                     w1 = _mm512_shuffle_f32x4(u[8 + e], u[12 + e], 0xdd);
        r[e] = _mm512_shuffle_f32x4(v0, v1, 0x88);
        r[4 + e] = _mm512_shuffle_f32x4(w0, w1, 0x88);
        r[8 + e] = _mm512_shuffle_f32x4(v0, v1, 0xdd);
        r[12 + e] = _mm512_shuffle_f32x4(w0, w1, 0xdd);
    }
}
/* r[0..7] (rows of 8 floats) transposed in place: two rounds as transpose16's, then
 * the 128-bit lanes gathered in one */
MYGPT_AVX2 static inline __attribute__((always_inline)) void transpose8(__m256 r[8])
{
    __m256 t[8], u[8];
    INTERLEAVE_ROWS(8, _mm256, __m256d)
    for (int e = 0; e < 4; e++) { // column e from the low lanes, column 4 + e from the high
        r[e] = _mm256_permute2f128_ps(u[e], u[4 + e], 0x20);
        r[4 + e] = _mm256_permute2f128_ps(u[e], u[4 + e], 0x31);
    }
}
/* rows <= W: the tile's W-column blocks transposed in registers, then each token's sums
 * stored as one masked row */
#define STORE_SWAPPED(NAME, TARGET, W, PFX, VEC, MASK_T, MASK, LOADM, STOREN, TRANSPOSE)           \
    TARGET static void NAME(float *restrict o, size_t ldo, const float *restrict c, int NR, int rows, \
                            int cols, int add)                                                     \
    {                                                                                              \
        assert(rows <= W); /* a token's sums are one mask */                                       \
        const MASK_T m = MASK(rows);                                                               \
        for (int j0 = 0; j0 < cols; j0 += W) {                                                     \
            VEC r[W];                                                                              \
            for (int i = 0; i < W; i++)                                                            \
                r[i] = i < rows ? PFX##_loadu_ps(c + i * NR + j0) : PFX##_setzero_ps();            \
            TRANSPOSE(r);                                                                          \
            for (int j = j0; j < cols && j < j0 + W; j++) {                                        \
                float *d = o + j * ldo;                                                            \
                const VEC v = add ? PFX##_add_ps(LOADM(d, m), r[j - j0]) : r[j - j0];              \
                STOREN(d, rows, m, v);                                                             \
            }                                                                                      \
        }                                                                                          \
    }
STORE_SWAPPED(store_swapped_avx512, MYGPT_AVX512, 16, _mm512, __m512, __mmask16, MASK16, LOADM16, STOREN16,
              transpose16)
STORE_SWAPPED(store_swapped_avx2, MYGPT_AVX2, 8, _mm256, __m256, __m256i, MASK8, LOADM8, STOREN8, transpose8)

/* The pack of a weight's whole panel (2W rows of B^T, W floats a vector): W x W blocks
 * loaded as W rows, transposed in registers, stored as W panel rows of W; gcc's gather
 * of pack_body moved one float (AVX2) or lane (AVX-512) at a time. The last kc % W rows,
 * a panel at N's edge and a k-major B (already in panel order) take pack_body. */
#define PACK_TRANSPOSED(NAME, TARGET, W, PFX, VEC, TRANSPOSE)                                      \
    TARGET static void NAME(float *restrict dst, const float *restrict src, size_t ldb, int kc,    \
                            int cols, int b_kmajor)                                                \
    {                                                                                              \
        int k = 0;                                                                                 \
        if (!b_kmajor && cols == 2 * W)                                                            \
            for (; k + W <= kc; k += W)                                                            \
                for (int h = 0; h < 2; h++) { /* columns W h .. W h + W - 1 */                     \
                    VEC r[W];                                                                      \
                    for (int i = 0; i < W; i++)                                                    \
                        r[i] = PFX##_loadu_ps(src + (size_t)(W * h + i) * ldb + k);                \
                    TRANSPOSE(r);                                                                  \
                    for (int i = 0; i < W; i++)                                                    \
                        PFX##_storeu_ps(dst + (size_t)(k + i) * 2 * W + W * h, r[i]);              \
                }                                                                                  \
        const float *rest = src + (b_kmajor ? (size_t)k * ldb : (size_t)k);                        \
        pack_body(2 * W, dst + (size_t)k * 2 * W, rest, ldb, kc - k, cols, b_kmajor);              \
    }
PACK_TRANSPOSED(pack_avx2, MYGPT_AVX2, 8, _mm256, __m256, transpose8)
PACK_TRANSPOSED(pack_avx512, MYGPT_AVX512, 16, _mm512, __m512, transpose16)
#endif

#ifdef MYGPT_NEON_KERNELS
#define HAVE_NEON_KERNELS 1
/* NEON (aarch64's baseline, chosen at build time): kernel_body's 6 x 16 tile written with
 * intrinsics. aarch64 has 32 vector registers of 4 floats: 24 hold the accumulators (6
 * rows x 4 vectors), 4 the panel's row k, and a's six values 2 (rows 0-3 in one, 4-5 in
 * half of another, each fmla taking its value by lane), 30 in all. Each k is then 2
 * paired loads of the panel (4 vectors), 6 loads of a (a lane from each row; transposed,
 * the column as it lies: 2) and 24 fmla: 192 FLOP for 10 loads (6 transposed). Loaded one
 * at a time into a register each, a's values take 6 and, with 28, spill. 8 x 16 would need
 * 32 accumulators alone; 8 x 12 fills 24 with 3 + 8 loads per k; and NR 16 is the generic
 * set's, so a weight packed for one fits the other and the decoding kernels read 4
 * vectors a panel row. gcc compiling kernel_body for 6 x 16 keeps all six of a's values
 * live at once and moves an accumulator through the stack at every k. The arithmetic is
 * kernel_body's exactly (vfmaq_f32 is fmaf lane by lane, k in order, then added to the
 * base); a tile of fewer rows runs kernel_body, and pf's lines are asked for as
 * line_walk gives them. Under clang every NEON tile is CLANG_TILE's (tile_rows_neon). */
#if defined(__clang__)
CLANG_TILE(clang_tile_neon, , float32x4_t, 4, 4, vld1q_f32, vdupq_n_f32, MYGPT_NEON_FMA, vaddq_f32, vst1q_f32,
           MYGPT_NEON_ZERO)
/* every NEON tile under clang, of 1 to 6 rows: clang 14 compiled tile_6x16_neon below with
 * two of its accumulators reloaded from the stack at every k step (this one has none) */
REGISTER_TILE static inline __attribute__((always_inline)) void tile_rows_neon(const int A_T, const tile_args *t)
{
    switch (t->rows) {
        TILE_ROWS(clang_tile_neon, 6, A_T); TILE_ROWS(clang_tile_neon, 5, A_T); TILE_ROWS(clang_tile_neon, 4, A_T);
        TILE_ROWS(clang_tile_neon, 3, A_T); TILE_ROWS(clang_tile_neon, 2, A_T); TILE_ROWS(clang_tile_neon, 1, A_T);
    default:
        kernel_body(6, 16, A_T, t);
    }
}
#define NEON_TILE(A_T) tile_rows_neon(A_T, t)
#else
#define NEON_ROW(i, A)                                                                             \
    do {                                                                                           \
        const float32x4_t a_ = (A);                                                                \
        c##i##0 = vfmaq_f32(c##i##0, b0, a_);                                                      \
        c##i##1 = vfmaq_f32(c##i##1, b1, a_);                                                      \
        c##i##2 = vfmaq_f32(c##i##2, b2, a_);                                                      \
        c##i##3 = vfmaq_f32(c##i##3, b3, a_);                                                      \
    } while (0)
/* row i of the tile: its base (the bias, zero, or c) plus its sums */
#define NEON_STORE(i)                                                                              \
    do {                                                                                           \
        float *d_ = t->c + (size_t)(i) * t->ldc;                                                   \
        const float32x4_t r_[4] = {c##i##0, c##i##1, c##i##2, c##i##3};                            \
        for (int v = 0; v < 4; v++) {                                                              \
            const float32x4_t base_ = !t->first ? vld1q_f32(d_ + 4 * v) : t->init ? vld1q_f32(t->init + 4 * v) : z; \
            vst1q_f32(d_ + 4 * v, vaddq_f32(base_, r_[v]));                                        \
        }                                                                                          \
    } while (0)
REGISTER_TILE static inline __attribute__((always_inline)) void tile_6x16_neon(const int A_T, const tile_args *t)
{
    if (t->rows != 6) {
        kernel_body(6, 16, A_T, t);
        return;
    }
    const float *restrict a = t->a, *restrict bp = t->bp;
    const size_t lda = t->lda;
    const int kc = t->kc;
    line_walk pf = line_walk_start(t->pf, kc);
    const float32x4_t z = vdupq_n_f32(0.0f);
    float32x4_t c00 = z, c01 = z, c02 = z, c03 = z, c10 = z, c11 = z, c12 = z, c13 = z, c20 = z, c21 = z, c22 = z,
                c23 = z, c30 = z, c31 = z, c32 = z, c33 = z, c40 = z, c41 = z, c42 = z, c43 = z, c50 = z, c51 = z,
                c52 = z, c53 = z;
    for (int k = 0; k < kc;) {
        const int kend = line_walk_next(&pf, k, kc);
        for (; k < kend; k++) {
            const float *bk = bp + (size_t)k * 16;
            __builtin_prefetch(bk + PANEL_PREFETCH * 16, 0, 3);
            const float32x4_t b0 = vld1q_f32(bk), b1 = vld1q_f32(bk + 4), b2 = vld1q_f32(bk + 8),
                              b3 = vld1q_f32(bk + 12);
            // a's values at k of rows 0-3 (lo) and 4-5 (hi): loaded as they lie, a column, or
            // lane by lane from the six rows
            float32x4_t lo;
            float32x2_t hi;
            if (A_T) {
                lo = vld1q_f32(a + (size_t)k * lda);
                hi = vld1_f32(a + (size_t)k * lda + 4);
            } else {
                const float *ak = a + k;
                lo = vld1q_lane_f32(ak + 3 * lda,
                                    vld1q_lane_f32(ak + 2 * lda, vld1q_lane_f32(ak + lda, vld1q_dup_f32(ak), 1), 2), 3);
                hi = vld1_lane_f32(ak + 5 * lda, vld1_dup_f32(ak + 4 * lda), 1);
            }
            NEON_ROW(0, vdupq_laneq_f32(lo, 0));
            NEON_ROW(1, vdupq_laneq_f32(lo, 1));
            NEON_ROW(2, vdupq_laneq_f32(lo, 2));
            NEON_ROW(3, vdupq_laneq_f32(lo, 3));
            NEON_ROW(4, vdupq_lane_f32(hi, 0));
            NEON_ROW(5, vdupq_lane_f32(hi, 1));
        }
    }
    line_walk_finish(&pf);
    NEON_STORE(0);
    NEON_STORE(1);
    NEON_STORE(2);
    NEON_STORE(3);
    NEON_STORE(4);
    NEON_STORE(5);
}
#undef NEON_STORE
#undef NEON_ROW
#define NEON_TILE(A_T) tile_6x16_neon(A_T, t)
#endif
REGISTER_TILE static void kernel_6x16_neon(KERNEL_ARGS)
{
    NEON_TILE(0);
}
REGISTER_TILE static void kernel_6x16_neon_t(KERNEL_ARGS)
{
    NEON_TILE(1);
}

/* Decoding with NEON: QROWS_BODY with a panel row as 4 vectors of 4 floats. Two panels
 * at once: 8 accumulators, 8 scales (int8), a's broadcast and the row's vector: 18 of
 * the 32 registers, and 8 independent chains of fmla, what 2 pipes of 4 cycles' latency
 * (Cortex-A76, Neoverse N1) keep busy. Per k and panel: 4 fmla (32 FLOP) for one row of
 * 64 bytes (fp32), 32 (bf16) or 16 (int8), widened exactly as b_at: bf16 split as
 * SPLIT_BF16 does (shl, and), int8 widened twice (sxtl) and converted (scvtf, exact), times
 * its scale. */
static inline float32x4_t neon_i8_4(const int8_t *q)
{
    int32_t w; // 4 bytes, no more: the last vector of a panel ends the buffer
    memcpy(&w, q, sizeof w);
    return vcvtq_f32_s32(vmovl_s16(vget_low_s16(vmovl_s8(vreinterpret_s8_s32(vdup_n_s32(w))))));
}
#define NEON_BF_8(h, even, odd)                                                                    \
    do {                                                                                           \
        const uint32x4_t x_ = vreinterpretq_u32_u16(vld1q_u16(h));                                 \
        even = vreinterpretq_f32_u32(vshlq_n_u32(x_, 16));                                         \
        odd = vreinterpretq_f32_u32(vandq_u32(x_, vdupq_n_u32(0xffff0000u)));                      \
    } while (0)
#define QROWS_NEON(P) QROWS_BODY(P, 4, 4, float32x4_t, vdupq_n_f32, vdupq_n_f32(0.0f), vld1q_f32, MYGPT_NEON_FMA, \
                                 vst1q_f32, neon_i8_4, NEON_BF_8, vmulq_f32)
#define DECODE_P_NEON 2
DECODE_FN(decode_neon_fp32, , QROWS_NEON, MYGPT_WEIGHTS_FP32)
DECODE_FN(decode_neon_bf16, , QROWS_NEON, MYGPT_WEIGHTS_BF16)
DECODE_FN(decode_neon_int8, , QROWS_NEON, MYGPT_WEIGHTS_INT8)
#endif
#if defined(HAVE_INTRINSICS_TILES) && defined(__clang__)
#undef CLANG_TILE
#undef TILE_ROWS
#undef UNROLLED
#endif

/* The kernels of each instruction set (cpu.h decides which one runs; every set gives
 * the same bits). */
static const matmul_isa KERNELS[MYGPT_ISA_COUNT] = {
    [MYGPT_ISA_GENERIC] = {"generic", 6, 16, kernel_6x16, kernel_6x16_t, gelu_generic, pack_generic,
                           copy_strips_generic, store_swapped_generic},
#ifdef HAVE_X86_KERNELS
    [MYGPT_ISA_AVX2] = {"avx2", 6, 16, kernel_6x16_avx2, kernel_6x16_avx2_t, gelu_avx2, pack_avx2,
                        copy_strips_avx2, store_swapped_avx2,
                        DECODE_P_AVX2, {decode_avx2_fp32, decode_avx2_bf16, decode_avx2_int8}},
    [MYGPT_ISA_AVX512] = {"avx512", 14, 32, kernel_14x32_avx512, kernel_14x32_avx512_t, gelu_avx512, pack_avx512,
                          copy_strips_avx512, store_swapped_avx512,
                          DECODE_P_AVX512, {decode_avx512_fp32, decode_avx512_bf16, decode_avx512_int8}},
#endif
#ifdef HAVE_NEON_KERNELS
    /* GELU, the packing, the strip copies and the swapped stores: the generic loops,
     * which gcc vectorises for NEON (the baseline) as they stand */
    [MYGPT_ISA_NEON] = {"neon", 6, 16, kernel_6x16_neon, kernel_6x16_neon_t, gelu_generic, pack_generic,
                        copy_strips_generic, store_swapped_generic,
                        DECODE_P_NEON, {decode_neon_fp32, decode_neon_bf16, decode_neon_int8}},
#endif
};

matmul_isa mygpt_matmul_isa(void)
{
    return KERNELS[mygpt_cpu_isa(MYGPT_FAMILY_MATMUL)];
}

const char *mygpt_matmul_kernel_name(void)
{
    return mygpt_matmul_isa().name;
}

