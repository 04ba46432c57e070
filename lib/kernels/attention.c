/*
 * attention.c - causal multi-head self-attention made fast (mygpt/attention.h): the
 * dispatcher, the fast kernel with the same bits as the plain loops (reference.c, over
 * attention_rows.h's row functions), the KV-cache step's rows, the fast backward, and
 * where a head looks most.
 *
 * The fast kernel,
 * Per (batch, head), one thread:
 *   1. K of the head is transposed into the thread's scratch, kt, in panels of KS
 *      consecutive keys (each panel (d, KS), contiguous, as matmul.c packs B), so the
 *      scores of a query against KS keys come out of vector operations:
 *      score[s] = fmaf(q[i], kt[i][s], score[s]) for i = 0..d-1. Each score is still
 *      the same chain of fused multiply-adds over i in order.
 *   2. Queries go in blocks of QB = 24 rows; an RG x KS tile of scores stays in
 *      registers while i runs (a small matmul micro-kernel), and the panel it reads
 *      stays in L1 while the block's row tiles pass.
 *   3. softmax of each row over s <= t, vectorised: divide by sqrt(d), max, exp
 *      (mygpt_expf, the same function the plain loops call), the sum in s order (the
 *      QB rows' sums run side by side), times 1/sum.
 *   4. out[t] = sum over s of p[s] v[s]: an RG x KV tile of outputs in registers, s in
 *      order, V in chunks of SC keys (a tile stores and reloads its sums between them).
 * Only QB rows of scores (QB x Tp floats) exist at a time per thread (Tp = T rounded up
 * to a multiple of 64).
 *
 * Tiles follow the vector registers, as in matmul.c: AVX-512 takes 4 rows of 64 keys (or
 * channels), 16 zmm accumulators of its 32; AVX2 6 rows of 16, 12 ymm of its 16 (as its
 * matmul tile: bench/results/design-notes.md); plain C (NEON's 32 registers of 4 floats;
 * clang's full tiles are intrinsics, below) 4 rows of 16. The tile decides which values
 * are computed together, never how, so every path gives the same bits;
 * MYGPT_ATTENTION_KERNEL=generic|avx2|avx512 picks a narrower one for tests.
 */
#include <assert.h>
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mygpt/attention.h"
#include "base/parallel.h"
#include "kernels/vecmath.h"
#include "kernels/cpu.h"
#include "base/base.h"
#include "kernels/attention.h"
#include "kernels/attention_rows.h"
#include "kernels/reference.h"
#include "base/simd.h"

#define QB 24      /* query rows per block: their scores are kept */
#define RG_MAX 6   /* rows per register tile, at most (AVX2's; the others take 4) */
#define KW_MAX 64  /* widest tile row (AVX-512); kt's keys are padded to a multiple of it */
#define SC 256     /* keys per chunk of V, whose SC x KV floats row tiles pass over */

static int padded(int T)
{
    return (T + KW_MAX - 1) / KW_MAX * KW_MAX;
}

/* Row stride of the scores: Tp plus one cache line, so their rows (Tp is often a multiple
 * of 1024 floats = 4 KiB) do not all fall into the same L1 set. kt takes d of these
 * strides too (its panels fill d x Tp of them). */
static int scores_stride(int T)
{
    return padded(T) + 16;
}

/* Floats at the start of each thread's scratch that hold its work queue (parallel.h):
 * 128 bytes, so a 64-byte line inside them holds the queue alone whatever the alignment. */
#define QUEUE_FLOATS 32

static mygpt_queue *slice_queue(float *slice)
{
    return (mygpt_queue *)(((uintptr_t)slice + 63) / 64 * 64);
}

/* Floats one thread's scratch takes: its queue, kt (d x ldk floats: its panels) and QB
 * rows of scores (QB, ldk). The plain loops (reference.c) need less (one row of T scores),
 * so this serves both. */
static size_t scratch_per_thread(int T, int head_dim)
{
    return QUEUE_FLOATS + ((size_t)head_dim + QB) * (size_t)scores_stride(T);
}

size_t mygpt_attention_scratch_size(int T, int head_dim, int nthreads)
{
    if (T < 0 || T > MYGPT_MAX_DIM || head_dim < 0)
        return 0; // no such attention (the forward refuses it)
    return (size_t)(nthreads < 1 ? 1 : nthreads) * scratch_per_thread(T, head_dim);
}

/* The team attention may use: OpenMP's thread count, clamped to the slices scratch holds.
 * Returns 0 when scratch cannot hold even one slice (or the sizes are bad). */
static int attention_team(size_t scratch_len, mygpt_attention_shape shape)
{
    const int B = shape.B, T = shape.T, C = shape.C, NH = shape.NH;
    if (B < 1 || T < 1 || C < 1 || NH < 1 || C % NH != 0)
        return 0;
    const size_t slices = scratch_len / scratch_per_thread(T, C / NH);
    const int max = omp_get_max_threads();
    return slices >= (size_t)max ? max : (int)slices;
}

static mygpt_status attention_refuse(size_t scratch_len, mygpt_attention_shape shape, mygpt_error *err)
{
    const int B = shape.B, T = shape.T, C = shape.C, NH = shape.NH;
    if (B < 1 || T < 1 || C < 1 || NH < 1 || C % NH != 0)
        return mygpt_fail(err, MYGPT_EINVAL,
                          "attention needs sizes >= 1 and C divisible by the heads (B=%d T=%d C=%d heads=%d)",
                          B, T, C, NH);
    return mygpt_fail(err, MYGPT_EINVAL,
                      "attention scratch of %zu floats is less than one thread's %zu (T=%d, d=%d)",
                      scratch_len, scratch_per_thread(T, C / NH), T, C / NH);
}

/* One (batch, head) of the fast kernel: the head's slices and this thread's scratch. */
typedef struct head_job {
    float *out, *probs;     // (T, d) rows C apart; (T, T) or NULL
    const float *q, *k, *v; // (T, d) each, rows C apart
    float *kt, *scores;     // K^T as panels (Tp / KS of (d, KS)), keys past T zero; (QB, ldk): a block's scores
    size_t ldk;             // scores_stride(T)
    int T, C, d;
    float scale;            // sqrt(d) as a float
} head_job;

/* c (RG, cols) = [c +] sum over k in [k0, k1) of a[r][k] b[k], each element a chain
 * of fused multiply-adds in k order (from c's values when from_c, else from 0): the full
 * tiles of block_scores and block_values, given where they run under clang. gcc keeps
 * their plain C's sums in registers; clang 14 keeps them on the stack, one scalar fused
 * multiply-add at a time (the attention ~10x slower with AVX2), so there they are
 * intrinsics, as the matmul's clang tiles (matmul_isa.c). NULL: the plain C. */
typedef void (*full_tile_fn)(int RG, int cols, const float *a, size_t lda, const float *b, size_t ldb, int k0,
                             int k1, float *c, size_t ldc, int from_c);
#if defined(__clang__) && (defined(MYGPT_X86_KERNELS) || defined(MYGPT_NEON_KERNELS))
#define HAVE_CLANG_TILES 1
#ifdef MYGPT_X86_KERNELS
#include <immintrin.h>
#else
#include <arm_neon.h>
#endif
/* each loop over a tile's rows or vectors unrolled whole, so its sums are registers */
#define UNROLLED _Pragma("clang loop unroll(full) vectorize(disable)")
#define CLANG_FULL_TILE(NAME, TARGET, V, W, LOADU, SET1, FMADD, STOREU, ZERO)                      \
    TARGET static inline __attribute__((always_inline)) void NAME##_body(                          \
        const int RG, const int NV, const float *a, size_t lda, const float *b, size_t ldb, int k0, int k1, \
        float *c, size_t ldc, int from_c)                                                          \
    {                                                                                              \
        V acc[RG_MAX][4];                                                                          \
        UNROLLED for (int r = 0; r < RG; r++)                                                      \
            UNROLLED for (int w = 0; w < NV; w++)                                                  \
                acc[r][w] = from_c ? LOADU(c + (size_t)r * ldc + W * w) : ZERO();                  \
        for (int k = k0; k < k1; k++) {                                                            \
            V bv[4];                                                                               \
            UNROLLED for (int w = 0; w < NV; w++)                                                  \
                bv[w] = LOADU(b + (size_t)k * ldb + W * w);                                        \
            UNROLLED for (int r = 0; r < RG; r++) {                                                \
                const V ar = SET1(a[(size_t)r * lda + k]);                                         \
                UNROLLED for (int w = 0; w < NV; w++)                                              \
                    acc[r][w] = FMADD(ar, bv[w], acc[r][w]);                                       \
            }                                                                                      \
        }                                                                                          \
        UNROLLED for (int r = 0; r < RG; r++)                                                      \
            UNROLLED for (int w = 0; w < NV; w++)                                                  \
                STOREU(c + (size_t)r * ldc + W * w, acc[r][w]);                                    \
    }
#ifdef MYGPT_X86_KERNELS
CLANG_FULL_TILE(full_tile_avx2, MYGPT_AVX2, __m256, 8, _mm256_loadu_ps, _mm256_set1_ps, _mm256_fmadd_ps,
                _mm256_storeu_ps, _mm256_setzero_ps)
CLANG_FULL_TILE(full_tile_avx512, MYGPT_AVX512, __m512, 16, _mm512_loadu_ps, _mm512_set1_ps, _mm512_fmadd_ps,
                _mm512_storeu_ps, _mm512_setzero_ps)
/* the shapes head_avx2 and head_avx512 run: 6 rows x 16 (2 ymm); 4 rows x 64 or 16 (4 or 1 zmm) */
/* (not inlined: inside head_body clang kept the tile's sums on the stack again) */
MYGPT_AVX2 __attribute__((noinline)) static void full_tile_avx2(int RG, int cols, const float *a, size_t lda,
                                                                const float *b, size_t ldb, int k0, int k1, float *c,
                                                                size_t ldc, int from_c)
{
    assert(RG == 6 && cols == 16);
    (void)RG, (void)cols;
    full_tile_avx2_body(6, 2, a, lda, b, ldb, k0, k1, c, ldc, from_c);
}
MYGPT_AVX512 __attribute__((noinline)) static void full_tile_avx512(int RG, int cols, const float *a, size_t lda,
                                                                    const float *b, size_t ldb, int k0, int k1,
                                                                    float *c, size_t ldc, int from_c)
{
    assert(RG == 4 && (cols == 64 || cols == 16));
    (void)RG;
    if (cols == 64)
        full_tile_avx512_body(4, 4, a, lda, b, ldb, k0, k1, c, ldc, from_c);
    else
        full_tile_avx512_body(4, 1, a, lda, b, ldb, k0, k1, c, ldc, from_c);
}
#define FULL_TILE_AVX2 full_tile_avx2
#define FULL_TILE_AVX512 full_tile_avx512
#else
CLANG_FULL_TILE(full_tile_neon, , float32x4_t, 4, vld1q_f32, vdupq_n_f32, MYGPT_NEON_FMA, vst1q_f32, MYGPT_NEON_ZERO)
/* the shape head_neon runs: 4 rows x 16 (4 q registers) */
__attribute__((noinline)) static void full_tile_neon(int RG, int cols, const float *a, size_t lda, const float *b,
                                                     size_t ldb, int k0, int k1, float *c, size_t ldc, int from_c)
{
    assert(RG == 4 && cols == 16);
    (void)RG, (void)cols;
    full_tile_neon_body(4, 4, a, lda, b, ldb, k0, k1, c, ldc, from_c);
}
#define FULL_TILE_NEON full_tile_neon
#endif
#undef CLANG_FULL_TILE
#undef UNROLLED
#else
#define FULL_TILE_AVX2 NULL
#define FULL_TILE_AVX512 NULL
#define FULL_TILE_NEON NULL
#endif

/* scores[r][s] = (q_r . k_s) / scale for the block's rows r < rows (queries t0 + r)
 * and keys s <= t0 + r (the rest of each KS-wide chunk is computed and ignored), each
 * dot a chain of fused multiply-adds over i = 0..d-1 from 0. An RG x KS tile stays in registers while i
 * runs; the panel of kt, (d, KS), stays in L1 while the row tiles pass (its keys past
 * T are zeros, up to a multiple of KW_MAX). Dividing by a power of two is
 * multiplying by its inverse, exactly; other scales are divided, as PyTorch does. */
static inline __attribute__((always_inline)) void block_scores(const int RG, const int KS, full_tile_fn tile,
                                                                const head_job *h, int t0, int rows)
{
    (void)tile; // read only where the clang tiles are built (HAVE_CLANG_TILES)
    float *restrict scores = h->scores;                    // (rows, Tp)
    const float *restrict q = h->q + (size_t)t0 * h->C;    // (rows, d), rows ldq apart
    const float *restrict kt = h->kt;                      // (Tp / KS, d, KS)
    const size_t ldq = (size_t)h->C;
    const int Tp = (int)h->ldk, d = h->d;
    const float scale = h->scale;
    int e;
    const int scale_pow2 = frexpf(scale, &e) == 0.5f;
    const float inv_scale = 1.0f / scale;
    const int ns = t0 + rows;
    for (int s0 = 0; s0 < ns; s0 += KS) {
        for (int r0 = 0; r0 < rows; r0 += RG) {
            if (s0 > t0 + r0 + RG - 1) /* every row of the tile stops before s0 */
                continue;
            float acc[RG_MAX][KW_MAX];
            for (int r = 0; r < RG; r++)
                for (int j = 0; j < KS; j++)
                    acc[r][j] = 0.0f;
            const float *qr = q + (size_t)r0 * ldq;
            const int nr = rows - r0 < RG ? rows - r0 : RG;
#ifdef HAVE_CLANG_TILES
            if (tile && nr == RG) {
                float *sr = scores + (size_t)r0 * Tp + s0;
                tile(RG, KS, qr, ldq, kt + (size_t)s0 * d, (size_t)KS, 0, d, sr, (size_t)Tp, 0);
                for (int r = 0; r < RG; r++)
                    for (int j = 0; j < KS; j++)
                        sr[(size_t)r * Tp + j] = scale_pow2 ? sr[(size_t)r * Tp + j] * inv_scale
                                                            : sr[(size_t)r * Tp + j] / scale;
                continue;
            }
#endif
            if (nr == RG) { /* a full tile: no row checks in the loop */
                for (int i = 0; i < d; i++) {
                    const float *kr = kt + (size_t)s0 * d + (size_t)i * KS;
                    for (int r = 0; r < RG; r++) {
                        const float qi = qr[(size_t)r * ldq + i];
#pragma omp simd
                        for (int j = 0; j < KS; j++)
                            acc[r][j] = fmaf(qi, kr[j], acc[r][j]);
                    }
                }
            } else {
                for (int i = 0; i < d; i++) {
                    const float *kr = kt + (size_t)s0 * d + (size_t)i * KS;
                    for (int r = 0; r < nr; r++) {
                        const float qi = qr[(size_t)r * ldq + i];
#pragma omp simd
                        for (int j = 0; j < KS; j++)
                            acc[r][j] = fmaf(qi, kr[j], acc[r][j]);
                    }
                }
            }
            for (int r = 0; r < RG && r0 + r < rows; r++) {
                float *sr = scores + (size_t)(r0 + r) * Tp + s0;
                if (scale_pow2) {
#pragma omp simd
                    for (int j = 0; j < KS; j++)
                        sr[j] = acc[r][j] * inv_scale;
                } else {
#pragma omp simd
                    for (int j = 0; j < KS; j++)
                        sr[j] = acc[r][j] / scale;
                }
            }
        }
    }
}

/* Row r of the block (query t0 + r) sees keys s <= t0 + r: its scores become
 * softmax probabilities, as in the plain loops (max, exp(x - max), the sum in s
 * order, times 1/sum). */
static inline __attribute__((always_inline)) void
block_softmax(float *restrict scores, int Tp, int rows, int t0)
{
    float sum[QB];
    for (int r = 0; r < rows; r++) {
        float *sr = scores + (size_t)r * Tp;
        const int n = t0 + r + 1;
        /* the row's max in 16 lanes, then across them: a max is exact in any order (a tie
         * of -0 and +0 gives the same exp(x - m)), and clang 14 vectorises a float max
         * reduction only under -ffast-math */
        float lane[16], m = -INFINITY;
        for (int j = 0; j < 16; j++)
            lane[j] = -INFINITY;
        int s = 0;
        for (; s + 16 <= n; s += 16)
#pragma omp simd
            for (int j = 0; j < 16; j++)
                lane[j] = sr[s + j] > lane[j] ? sr[s + j] : lane[j];
        for (; s < n; s++)
            m = sr[s] > m ? sr[s] : m;
        for (int j = 0; j < 16; j++)
            m = lane[j] > m ? lane[j] : m;
#pragma omp simd
        for (int s = 0; s < n; s++)
            sr[s] = mygpt_expf(sr[s] - m);
        sum[r] = 0.0f;
    }
    /* the sums are sequential in s (the plain loops' order); the rows run side by side */
    for (int s = 0; s <= t0; s++)
        for (int r = 0; r < rows; r++)
            sum[r] += scores[(size_t)r * Tp + s];
    for (int r = 1; r < rows; r++)
        for (int s = t0 + 1; s <= t0 + r; s++)
            sum[r] += scores[(size_t)r * Tp + s];
    for (int r = 0; r < rows; r++) {
        float *sr = scores + (size_t)r * Tp;
        const float inv_sum = 1.0f / sum[r];
#pragma omp simd
        for (int s = 0; s <= t0 + r; s++)
            sr[s] = sr[s] * inv_sum;
    }
}

/* out row t0 + r (d floats, row stride ldo) = sum over s <= t0 + r of p[r][s] v[s], s in
 * order, each a chain of fused multiply-adds from 0. With d a multiple of KV: V goes
 * in chunks of SC keys x KV channels (16 KiB at AVX2's KV of 16: in L1; 64 KiB at
 * AVX-512's 64: in L2), and for each chunk every RG-row tile of outputs is loaded into
 * registers, carried through the chunk's keys in order and stored back (storing and
 * reloading a float is exact, so the chain is unbroken).
 * Otherwise row by row. */
static inline __attribute__((always_inline)) void block_values(const int RG, const int KV, full_tile_fn tile,
                                                                const head_job *h, int t0, int rows)
{
    (void)tile; // read only where the clang tiles are built (HAVE_CLANG_TILES)
    float *restrict out = h->out + (size_t)t0 * h->C;      // (rows, d), rows ldo apart
    const float *restrict p = h->scores;                   // (rows, Tp): the probabilities
    const float *restrict v = h->v;                        // (t0 + rows, d), rows ldv apart
    const size_t ldo = (size_t)h->C, ldv = (size_t)h->C;
    const int Tp = (int)h->ldk, d = h->d;
    if (d % KV != 0) {
        for (int r = 0; r < rows; r++) {
            float *o = out + (size_t)r * ldo;
            const float *pr = p + (size_t)r * Tp;
            for (int i = 0; i < d; i++)
                o[i] = 0.0f;
            for (int s = 0; s <= t0 + r; s++) {
                const float ps = pr[s];
                const float *vs = v + (size_t)s * ldv;
#pragma omp simd
                for (int i = 0; i < d; i++)
                    o[i] = fmaf(ps, vs[i], o[i]);
            }
        }
        return;
    }
    const int ns = t0 + rows; /* keys the block uses */
    for (int i0 = 0; i0 < d; i0 += KV) {
        for (int s0 = 0; s0 < ns; s0 += SC) {
            const int s1 = s0 + SC < ns ? s0 + SC : ns;
            for (int r0 = 0; r0 < rows; r0 += RG) {
                const int nr = rows - r0 < RG ? rows - r0 : RG;
                if (s0 > t0 + r0 + nr - 1) /* every row of the tile stops before s0 */
                    continue;
#ifdef HAVE_CLANG_TILES
                if (tile && nr == RG) { /* the keys every row sees, then the causal edge in place */
                    const int common = t0 + r0 + 1 < s1 ? t0 + r0 + 1 : s1;
                    float *o = out + (size_t)r0 * ldo + i0;
                    tile(RG, KV, p + (size_t)r0 * Tp, (size_t)Tp, v + i0, ldv, s0, common, o, ldo, s0 > 0);
                    for (int s = common > s0 ? common : s0; s < s1; s++)
                        for (int r = 0; r < RG; r++) {
                            if (s > t0 + r0 + r)
                                continue;
                            const float ps = p[(size_t)(r0 + r) * Tp + s], *vs = v + (size_t)s * ldv + i0;
                            for (int j = 0; j < KV; j++)
                                o[(size_t)r * ldo + j] = fmaf(ps, vs[j], o[(size_t)r * ldo + j]);
                        }
                    continue;
                }
#endif
                float acc[RG_MAX][KW_MAX];
                for (int r = 0; r < RG; r++)
                    for (int j = 0; j < KV; j++)
                        acc[r][j] = r < nr && s0 > 0 ? out[(size_t)(r0 + r) * ldo + i0 + j] : 0.0f;
                /* keys every row of the tile sees, then the causal edge row by row */
                const int common = t0 + r0 + 1 < s1 ? t0 + r0 + 1 : s1;
                const float *pr = p + (size_t)r0 * Tp;
                if (nr == RG) { /* a full tile: no row checks in the loop */
                    for (int s = s0; s < common; s++) {
                        const float *vs = v + (size_t)s * ldv + i0;
                        for (int r = 0; r < RG; r++) {
                            const float ps = pr[(size_t)r * Tp + s];
#pragma omp simd
                            for (int j = 0; j < KV; j++)
                                acc[r][j] = fmaf(ps, vs[j], acc[r][j]);
                        }
                    }
                } else {
                    for (int s = s0; s < common; s++) {
                        const float *vs = v + (size_t)s * ldv + i0;
                        for (int r = 0; r < nr; r++) {
                            const float ps = pr[(size_t)r * Tp + s];
#pragma omp simd
                            for (int j = 0; j < KV; j++)
                                acc[r][j] = fmaf(ps, vs[j], acc[r][j]);
                        }
                    }
                }
                for (int s = common > s0 ? common : s0; s < s1; s++) {
                    const float *vs = v + (size_t)s * ldv + i0;
                    for (int r = 0; r < nr; r++) {
                        if (s > t0 + r0 + r)
                            continue;
                        const float ps = p[(size_t)(r0 + r) * Tp + s];
#pragma omp simd
                        for (int j = 0; j < KV; j++)
                            acc[r][j] = fmaf(ps, vs[j], acc[r][j]);
                    }
                }
                for (int r = 0; r < nr; r++)
#pragma omp simd
                    for (int j = 0; j < KV; j++)
                        out[(size_t)(r0 + r) * ldo + i0 + j] = acc[r][j];
            }
        }
    }
}

/* One (batch, head): kt and scores are this thread's scratch. */
static inline __attribute__((always_inline)) void head_body(const int RG, const int KS, const int KV, full_tile_fn tile,
                                                             const head_job *h)
{
    const int T = h->T, C = h->C, d = h->d;
    const int Tp = padded(T);
    const size_t ldk = h->ldk;
    float *kt = h->kt;
    const float *kb = h->k;
    /* kt = K^T in panels of KS keys, each (d, KS) contiguous; 16 keys at a time: the 16
     * rows read stay in L1, each write is a line */
    for (int s0 = 0; s0 < Tp; s0 += 16)
        for (int i = 0; i < d; i++)
            for (int s = s0; s < s0 + 16; s++)
                kt[(size_t)(s / KS * KS) * d + (size_t)i * KS + s % KS] = s < T ? kb[(size_t)s * C + i] : 0.0f;
    for (int t0 = 0; t0 < T; t0 += QB) {
        const int rows = T - t0 < QB ? T - t0 : QB;
        // keys 0 .. t0 + rows - 1; row r only uses s <= t0 + r (causal mask)
        block_scores(RG, KS, tile, h, t0, rows);
        block_softmax(h->scores, (int)ldk, rows, t0);
        for (int r = 0; h->probs && r < rows; r++) { /* kept for the backward: row t, 0 past t */
            float *pt = h->probs + (size_t)(t0 + r) * T;
            memcpy(pt, h->scores + (size_t)r * ldk, (size_t)(t0 + r + 1) * sizeof *pt);
            memset(pt + t0 + r + 1, 0, (size_t)(T - t0 - r - 1) * sizeof *pt);
        }
        block_values(RG, KV, tile, h, t0, rows);
    }
}

typedef void (*head_fn)(const head_job *h);

static void head_generic(const head_job *h)
{
    head_body(4, 16, 16, NULL, h);
}
#ifdef MYGPT_X86_KERNELS
#define HAVE_X86_KERNELS 1
MYGPT_AVX2 static void head_avx2(const head_job *h)
{
    head_body(6, 16, 16, FULL_TILE_AVX2, h); /* 6 x 2 ymm accumulators */
}
MYGPT_AVX512 static void head_avx512(const head_job *h)
{
    if (h->d % 64 == 0)
        head_body(4, 64, 64, FULL_TILE_AVX512, h); /* 4 x 4 zmm accumulators */
    else
        head_body(4, 64, 16, FULL_TILE_AVX512, h); /* head sizes like 16, 48, 80: one zmm per row */
}
#endif
#ifdef MYGPT_NEON_KERNELS
#define HAVE_NEON_KERNELS 1
/* NEON: the plain body's 4 x 16 tile, 4 x 4 q accumulators of the 32 registers, which gcc
 * compiles for aarch64's baseline, NEON (so with gcc this is the generic kernel); clang's
 * full tiles are intrinsics */
static void head_neon(const head_job *h)
{
    head_body(4, 16, 16, FULL_TILE_NEON, h);
}
#endif

/* The head kernel of each instruction set (cpu.h decides which one runs; the same bits). */
static const head_fn HEADS[MYGPT_ISA_COUNT] = {
    [MYGPT_ISA_GENERIC] = head_generic,
#ifdef HAVE_X86_KERNELS
    [MYGPT_ISA_AVX2] = head_avx2,
    [MYGPT_ISA_AVX512] = head_avx512,
#endif
#ifdef HAVE_NEON_KERNELS
    [MYGPT_ISA_NEON] = head_neon,
#endif
};

static head_fn pick_head(void)
{
    return HEADS[mygpt_cpu_isa(MYGPT_FAMILY_ATTENTION)];
}

const char *mygpt_attention_kernel_name(void)
{
    return mygpt_isa_name(mygpt_cpu_isa(MYGPT_FAMILY_ATTENTION));
}

/* job's slices for (b, h): out, q, k and v at the head's channels of sequence b, probs
 * (when kept) at its (T, T) probabilities, probs[((b * NH + h) * T + t) * T + s] */
static void head_at(head_job *job, float *out, float *probs, mygpt_qkv in, int b, int h, int NH)
{
    const size_t off = (size_t)b * job->T * job->C + (size_t)h * job->d;
    job->out = out + off;
    job->probs = probs ? probs + ((size_t)b * NH + h) * job->T * job->T : NULL;
    job->q = in.q + off;
    job->k = in.k + off;
    job->v = in.v + off;
}

/* Both entry points: probs, when not NULL, receives each head's (T, T) probabilities
 * (0 for s > t), the same floats that weighted the values. */
static mygpt_status attention_fast(float *out, float *probs, mygpt_qkv in, float *scratch, size_t scratch_len,
                                   mygpt_attention_shape shape, mygpt_error *err)
{
    const int team = attention_team(scratch_len, shape);
    if (team < 1)
        return attention_refuse(scratch_len, shape, err);
    const head_fn head = pick_head();
    const int B = shape.B, T = shape.T, C = shape.C, NH = shape.NH, d = C / NH;
    const size_t per_thread = scratch_per_thread(T, d);
    const head_job sizes = {.ldk = (size_t)scores_stride(T), .T = T, .C = C, .d = d,
                            .scale = (float)sqrt((double)d)}; // PyTorch divides by math.sqrt(d)
    /* small work (the chapter's tiny GPT) stays out of the OpenMP runtime altogether */
    if (B * NH == 1 || (size_t)B * T * T * C <= MYGPT_KERNEL_SMALL) {
        head_job job = sizes;
        job.kt = scratch + QUEUE_FLOATS;
        job.scores = job.kt + (size_t)d * scores_stride(T);
        for (int b = 0; b < B; b++)
            for (int h = 0; h < NH; h++) {
                head_at(&job, out, probs, in, b, h, NH);
                head(&job);
            }
        return MYGPT_OK;
    }
    /* Items (b, h) in order: thread t owns the t-th run of them, the batches whose tokens
     * the static loops and the matmul around it handle on that thread (parallel.h). */
    const size_t items = (size_t)B * NH;
    if (items > UINT32_MAX) /* a queue counts in 32 bits: out would be over 16 GiB */
        return mygpt_fail(err, MYGPT_EINVAL, "attention over %zu (batch, head) pairs is too many to share out",
                          items);
    /* num_threads(team): never more threads than scratch has slices for */
#pragma omp parallel num_threads(team)
    {
        const int me = omp_get_thread_num(), nt = omp_get_num_threads();
        mygpt_queue *queues = slice_queue(scratch); // one in each slice, whole cache lines apart
        float *slice = scratch + (size_t)me * per_thread;
        head_job job = sizes;
        job.kt = slice + QUEUE_FLOATS;                     // panels, d x ldk floats
        job.scores = job.kt + (size_t)d * scores_stride(T);    // (QB, ldk)
        const uint32_t mine = (uint32_t)(mygpt_run_start(items, me + 1, nt) - mygpt_run_start(items, me, nt));
        mygpt_steal steal = mygpt_steal_start(queues, per_thread * sizeof(float), me, nt, mine);
#pragma omp barrier
        /* my run first, then the others' from their ends */
        int owner;
        size_t i;
        while (mygpt_steal_next(&steal, &owner, &i)) {
            const size_t bh = mygpt_run_start(items, owner, nt) + i;
            head_at(&job, out, probs, in, (int)(bh / NH), (int)(bh % NH), NH);
            head(&job);
        }
    }
    return MYGPT_OK;
}

mygpt_status mygpt_attention_forward(float *out, float *probs, mygpt_qkv in, float *scratch, size_t scratch_len,
                                     mygpt_attention_shape shape, mygpt_impl kernels, mygpt_error *err)
{
    if (kernels != MYGPT_IMPL_FAST && kernels != MYGPT_IMPL_REFERENCE)
        return mygpt_fail(err, MYGPT_EINVAL, "kernels %d is neither MYGPT_IMPL_FAST nor MYGPT_IMPL_REFERENCE",
                          (int)kernels);
    if (shape.T > MYGPT_MAX_DIM) // the longest context a configuration takes
        return mygpt_fail(err, MYGPT_EINVAL, "attention over T=%d positions: at most %d", shape.T, MYGPT_MAX_DIM);
    if (kernels == MYGPT_IMPL_REFERENCE) { // the plain loops (reference.c): a row of scores in probs or scratch
        const int sizes_ok = shape.B >= 1 && shape.T >= 1 && shape.C >= 1 && shape.NH >= 1 && shape.C % shape.NH == 0;
        const int team = probs ? sizes_ok * omp_get_max_threads() : attention_team(scratch_len, shape);
        if (team < 1)
            return attention_refuse(scratch_len, shape, err);
        const size_t per_thread = sizes_ok ? scratch_per_thread(shape.T, shape.C / shape.NH) : 0;
        mygpt_attention_reference(out, probs, in, scratch, per_thread, team, shape);
        return MYGPT_OK;
    }
    return attention_fast(out, probs, in, scratch, scratch_len, shape, err);
}

/* ---- the KV-cache step -------------------------------------------------------------------- */

/* A KV-cache step's scores of one query row against keys 0..t of one head into att[0..t]:
 * attention_row's, read from kt, the keys transposed block by block (the head's channels
 * start at kt; a block is KV x MYGPT_KT_BLOCK floats, KV the cache's row of keys),
 * MYGPT_KT_BLOCK keys side by side as vector lanes, each lane the same in-order chain
 * fmaf(q_i, k_s[i], dot) as attention_row's. One key at a time, every fused multiply-add
 * waits on the one before (4 cycles); a block keeps the vector units busy (a step at 900
 * cached positions was mostly that wait). Lanes past t read zeros and are dropped. */
#define KB MYGPT_KT_BLOCK
static MYGPT_IN_CLONES void cached_scores(float *att, const float *qt, const float *kt, int KV, int d, float scale,
                                          int t)
{
    for (int s0 = 0; s0 <= t; s0 += KB) {
        const float *kblock = kt + (size_t)(s0 / KB) * KV * KB; // (d, KB): the head's channels
        float dot[KB] = {0};
        for (int i = 0; i < d; i++) {
            const float qi = qt[i], *kr = kblock + (size_t)i * KB;
#pragma omp simd
            for (int j = 0; j < KB; j++)
                dot[j] = fmaf(qi, kr[j], dot[j]);
        }
        const int keys = t - s0 + 1 < KB ? t - s0 + 1 : KB;
#pragma omp simd
        for (int j = 0; j < keys; j++)
            att[s0 + j] = dot[j] / scale;
    }
}

/* The largest of att[0..t] (-INFINITY for none), as softmax_values's scan finds it: a NaN
 * never wins, and which of two equal maxima wins cannot change exp(att[s] - max). Sixteen
 * lanes side by side, the scan's comparison in each. */
static MYGPT_IN_CLONES float cached_max(const float *att, int t)
{
    float lane[16];
    for (int i = 0; i < 16; i++)
        lane[i] = -INFINITY;
    int s = 0;
    for (; s + 16 <= t + 1; s += 16)
#pragma omp simd
        for (int i = 0; i < 16; i++)
            lane[i] = att[s + i] > lane[i] ? att[s + i] : lane[i];
    for (; s <= t; s++)
        lane[0] = att[s] > lane[0] ? att[s] : lane[0];
    float maxv = -INFINITY;
    for (int i = 0; i < 16; i++)
        maxv = lane[i] > maxv ? lane[i] : maxv;
    return maxv;
}

/* What a thread's unit of the step reads and writes: one query row at position t */
typedef struct cached_job {
    float *out, *att;    // out (C) of the row, att (MYGPT_CACHED_HEADS, M) this thread's scores
    const float *q, *kt, *v; // q (C) of the row; the layer's kt and v (M, KV)
    int M, KV, group, t; // group: query heads that share a head of keys and values
    float scale;
} cached_job;

/* The step's share of one query row: its heads h0 .. h0 + HC - 1 of D channels each
 * (HC * D <= 64, out's channels h0 * D .. side by side). Each head's scores get a row of
 * att (M apart), then out = sum over s <= t of p_s v_s with p_s = exp_s * (1 / sum), s in
 * order, as softmax_values sums them, the HC heads' sums side by side: with a small head
 * (llama2.c's stories260K has D = 8) one head's sum is a chain of t fused multiply-adds,
 * each waiting on the one before; HC heads in the same registers keep the unit busy. */
static MYGPT_IN_CLONES void cached_heads(const int D, const int HC, const cached_job *j, int h0)
{
    float sum[MYGPT_CACHED_HEADS] = {0}, inv[MYGPT_CACHED_HEADS];
    const float *vh[MYGPT_CACHED_HEADS]; // each head's values: channels g * D of v's rows
    for (int c = 0; c < HC; c++) { // softmax_values's softmax up to its sum: exp(score - max)
        const int h = h0 + c, g = h / j->group;
        float *att = j->att + (size_t)c * j->M;
        cached_scores(att, j->q + (size_t)h * D, j->kt + (size_t)g * D * KB, j->KV, D, j->scale, j->t);
        const float maxv = cached_max(att, j->t);
#pragma omp simd
        for (int s = 0; s <= j->t; s++)
            att[s] = mygpt_expf(att[s] - maxv);
        vh[c] = j->v + (size_t)g * D;
    }
    for (int s = 0; s <= j->t; s++) // each head's sum in s order, the heads side by side
        for (int c = 0; c < HC; c++)
            sum[c] += j->att[(size_t)c * j->M + s];
    for (int c = 0; c < HC; c++)
        inv[c] = 1.0f / sum[c];
    float acc[64] = {0}; // (HC, D)
    for (int s = 0; s <= j->t; s++)
        for (int c = 0; c < HC; c++) {
            const float p = j->att[(size_t)c * j->M + s] * inv[c], *vs = vh[c] + (size_t)s * j->KV;
#pragma omp simd
            for (int i = 0; i < D; i++)
                acc[c * D + i] = fmaf(p, vs[i], acc[c * D + i]);
        }
    memcpy(j->out + (size_t)h0 * D, acc, (size_t)HC * D * sizeof *acc);
}

/* Heads of a row a thread takes at once for head size d: as many as fill 64 channels
 * and divide NH; 0 for a head size cached_heads has no copy for (one head at a time then) */
static int cached_heads_at_once(int d, int NH)
{
    if (d != 8 && d != 16 && d != 32 && d != 48 && d != 64)
        return 0;
    int hc = 64 / d < MYGPT_CACHED_HEADS ? 64 / d : MYGPT_CACHED_HEADS;
    while (NH % hc)
        hc /= 2;
    return hc;
}

/* cached_heads for the head sizes it has a copy for (D and HC constant: the sums stay in
 * registers), one head at a time through softmax_values otherwise (built per instruction
 * set: the step's parallel loop calls it) */
MYGPT_CLONES static void cached_unit(const cached_job *j, int d, int hc, int h0)
{
#define CACHED_HEADS(D, HC)                                                                                        \
    case (D) * 16 + (HC):                                                                                          \
        cached_heads(D, HC, j, h0);                                                                                \
        return;
    switch (d * 16 + hc) {
        CACHED_HEADS(8, 1) CACHED_HEADS(8, 2) CACHED_HEADS(8, 4) CACHED_HEADS(8, 8)
        CACHED_HEADS(16, 1) CACHED_HEADS(16, 2) CACHED_HEADS(16, 4)
        CACHED_HEADS(32, 1) CACHED_HEADS(32, 2) CACHED_HEADS(48, 1) CACHED_HEADS(64, 1)
    default:
        break;
    }
#undef CACHED_HEADS
    const int g = h0 / j->group;
    const head_view hv = {NULL, j->v + (size_t)g * d, j->M, j->KV, d, j->scale};
    cached_scores(j->att, j->q + (size_t)h0 * d, j->kt + (size_t)g * d * KB, j->KV, d, j->scale, j->t);
    softmax_values(j->out + (size_t)h0 * d, j->att, &hv, j->t, 0);
}

/* The (row, group of heads) units of the step over team threads: kt (the new keys in it)
 * is read. Query head h shares key and value head g = h / group with the group's other
 * heads. */
static void cached_rows(float *out, const float *q, const mygpt_attention_cache *kv, int t0,
                        mygpt_attention_shape shape, int team)
{
    const int n = shape.T, C = shape.C, NH = shape.NH, d = C / NH;
    const int hc = cached_heads_at_once(d, NH), per_row = hc ? NH / hc : NH, units = n * per_row;
    const int KV = kv->kv_heads * d, group = NH / kv->kv_heads;
    const float scale = (float)sqrt((double)d);
#pragma omp parallel for schedule(static) num_threads(team) if (team > 1)
    for (int u = 0; u < units; u++) {
        const int r = u / per_row, h0 = u % per_row * (hc ? hc : 1);
        const cached_job j = {.out = out + (size_t)r * C,
                              .att = kv->rows + (size_t)omp_get_thread_num() * MYGPT_CACHED_HEADS * kv->M,
                              .q = q + (size_t)r * C, .kt = kv->kt, .v = kv->v, .M = kv->M, .KV = KV,
                              .group = group, .t = t0 + r, .scale = scale};
        cached_unit(&j, d, hc, h0);
    }
}

void mygpt_attention_cached(float *out, const float *q, mygpt_attention_cache kv, int t0,
                            mygpt_attention_shape shape)
{
    const int n = shape.T, C = shape.C, NH = shape.NH, KV = kv.kv_heads * (C / NH);
    for (int r = t0; r < t0 + n; r++) { // the new keys into their blocks of kt
        float *col = kv.kt + (size_t)(r / KB) * KV * KB + r % KB;
        for (int c = 0; c < KV; c++)
            col[(size_t)c * KB] = kv.k[(size_t)r * KV + c];
    }
    // the units shared among the threads when there is enough work
    const int par = (size_t)n * NH * (size_t)(t0 + n) * (size_t)(C / NH) > MYGPT_PARALLEL_MIN;
    const int max = omp_get_max_threads();
    cached_rows(out, q, &kv, t0, shape, !par ? 1 : max < kv.nrows ? max : kv.nrows);
}
#undef KB

/* ---- the backward ------------------------------------------------------------------------- */

/* dS_t[s] / scale for s <= t into ds, from dP_t in ds (dropout's keeps applied here) */
static inline void ds_row(double *ds, const head_grads *h, int t)
{
    const float *p = h->probs + (size_t)t * h->T;
    if (h->keep) // dP = d(dropped P) * noise
        for (int s = 0; s <= t; s++)
            ds[s] *= h->keep[(size_t)t * h->T + s] ? h->noise : 0.0f;
    double pdp = 0.0;
    for (int s = 0; s <= t; s++)
        pdp += p[s] * ds[s];
    for (int s = 0; s <= t; s++)
        ds[s] = p[s] * (ds[s] - pdp) / h->scale;
}

#define TB 32  /* queries per block of the fast backward */
#define DPS 32 /* keys whose dP the fast backward sums side by side */

/* Eight channels of a gradient row as one value of GCC's and clang's vector types: the
 * tiles' sums then stay in registers (as float arrays of 32 or 64 they went to memory). */
#pragma GCC diagnostic ignored "-Wpsabi" /* (gcc and clang) only inlined static functions pass them */
typedef float f8 __attribute__((vector_size(32)));
typedef double d8 __attribute__((vector_size(64)));
typedef double d4 __attribute__((vector_size(32)));
typedef float f4 __attribute__((vector_size(16)));

static inline __attribute__((always_inline)) f8 f8_load(const float *p)
{
    f8 v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline __attribute__((always_inline)) void f8_store(float *p, f8 v)
{
    memcpy(p, &v, sizeof v);
}

static inline __attribute__((always_inline)) d8 d8_load(const double *p)
{
    d8 v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline __attribute__((always_inline)) d4 d4_load(const double *p)
{
    d4 v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* (float)(w * x) lane by lane for the 8 doubles x at p: the product in double, rounded
 * once. HALVES: as two vectors of 4 (AVX2's registers; gcc built a d8 holding w on the
 * stack there, at every use), else one of 8. The same values either way. */
static inline __attribute__((always_inline)) f8 f8_times(const int HALVES, double w, const double *p)
{
    if (HALVES) {
        const f4 lo = __builtin_convertvector(d4_load(p) * w, f4), hi = __builtin_convertvector(d4_load(p + 4) * w, f4);
        return __builtin_shufflevector(lo, hi, 0, 1, 2, 3, 4, 5, 6, 7);
    }
    return __builtin_convertvector(d8_load(p) * w, f8);
}

/* out (rows, d) = the (rows, d) slice at in (rows C apart), widened to double */
static inline void head_rows_to_double(double *restrict out, const float *restrict in, int rows, int C, int d)
{
    for (int r = 0; r < rows; r++)
        for (int i = 0; i < d; i++)
            out[(size_t)r * d + i] = in[(size_t)r * C + i];
}

/* One thread's scratch for a head's fast backward, in doubles. */
typedef struct head_scratch {
    double *vt;      // (d, ldv): V of the head transposed, zero past T
    double *dsb;     // (TB, ldv): the block's rows of dP, then of dS / scale
    double *kd;      // (T, d): K widened
    double *qd;      // (TB, d): the block's rows of Q widened
    size_t ldv;      // T rounded up to DPS
} head_scratch;

/* dq_t[0 .. 8 NC) += ds[s] k_s for s = 0..t in order (kd: K widened, rows d apart) */
static inline __attribute__((always_inline)) void dq_tile(const int HALVES, const int NC, float *restrict dqt,
                                                          const double *restrict ds, const double *restrict kd, int t,
                                                          int d)
{
    f8 acc[8];
    for (int c = 0; c < NC; c++)
        acc[c] = f8_load(dqt + 8 * c);
    for (int s = 0; s <= t; s++)
        for (int c = 0; c < NC; c++)
            acc[c] += f8_times(HALVES, ds[s], kd + (size_t)s * d + 8 * c);
    for (int c = 0; c < NC; c++)
        f8_store(dqt + 8 * c, acc[c]);
}

/* For key s and the block's queries t = max(s, t0) .. t1-1 in order (their dS / scale
 * in dsb's rows t - t0): dk_s[i0 .. i0 + 8 NC) += ds_t[s] q_t and dv_s[..] += p_t[s] dO_t
 * (the block's rows of Q widened in qd, rows d apart). dv's terms are float products: p
 * and dO are floats, so their product is exact in double and rounding it to float, as
 * the plain loops do, gives the float multiplication's result. */
static inline __attribute__((always_inline)) void dkv_tile(const int HALVES, const int NC, const head_grads *h,
                                                           const head_scratch *w, int s, int t0, int t1, int i0)
{
    float *restrict dks = h->dk + (size_t)s * h->C + i0, *restrict dvs = h->dv + (size_t)s * h->C + i0;
    const double *restrict dsb = w->dsb, *restrict qd = w->qd;
    const size_t ldv = w->ldv;
    const int ta = s > t0 ? s : t0;
    f8 ak[4], av[4];
    for (int c = 0; c < NC; c++) {
        ak[c] = f8_load(dks + 8 * c);
        av[c] = f8_load(dvs + 8 * c);
    }
    for (int t = ta; t < t1; t++) {
        const double ds = dsb[(size_t)(t - t0) * ldv + s];
        const float ps = (float)kept_prob(h, t, s);
        const double *qt = qd + (size_t)(t - t0) * h->d + i0;
        const float *dot = h->dout + (size_t)t * h->C + i0;
        for (int c = 0; c < NC; c++) {
            ak[c] += f8_times(HALVES, ds, qt + 8 * c);
            av[c] += ps * f8_load(dot + 8 * c);
        }
    }
    for (int c = 0; c < NC; c++) {
        f8_store(dks + 8 * c, ak[c]);
        f8_store(dvs + 8 * c, av[c]);
    }
}

/* dP rows of the R queries t0 .. t0 + R - 1 (into dsb's rows t - tb, each for s up to
 * its own t): with vt (V of the head transposed) the dots of KW keys (DPS, or 8 with
 * HALVES: vectors of 4 doubles) run side by side as vector lanes, the R queries sharing
 * each load of vt; each is dp_dot's sum, in the same order. */
static inline __attribute__((always_inline)) void dp_rows(const int HALVES, const int R, const head_grads *h,
                                                          const head_scratch *w, int tb, int t0)
{
    double *restrict dsb = w->dsb;
    const double *restrict vt = w->vt;
    const float *restrict dout = h->dout;
    const size_t ldv = w->ldv;
    const int C = h->C, d = h->d, KW = HALVES ? 8 : DPS; // keys a tile row
    for (int s0 = 0; s0 <= t0 + R - 1; s0 += KW) {
        d8 acc[4][DPS / 8];
        d4 acc4[4][2];
        for (int r = 0; r < R; r++) {
            for (int c = 0; c < DPS / 8; c++)
                acc[r][c] = (d8){0};
            acc4[r][0] = acc4[r][1] = (d4){0};
        }
        for (int i = 0; i < d; i++) {
            const double *vr = vt + (size_t)i * ldv + s0;
            if (HALVES) { // 4 x 2 ymm accumulators
                const d4 v0 = d4_load(vr), v1 = d4_load(vr + 4);
                for (int r = 0; r < R; r++) {
                    const double di = dout[(size_t)(t0 + r) * C + i];
                    acc4[r][0] += di * v0;
                    acc4[r][1] += di * v1;
                }
                continue;
            }
            d8 v[DPS / 8];
            for (int c = 0; c < DPS / 8; c++)
                v[c] = d8_load(vr + 8 * c);
            for (int r = 0; r < R; r++) {
                const double di = dout[(size_t)(t0 + r) * C + i];
                for (int c = 0; c < DPS / 8; c++)
                    acc[r][c] += di * v[c];
            }
        }
        for (int r = 0; r < R; r++) {
            double sums[DPS];
            if (HALVES)
                memcpy(sums, acc4[r], sizeof acc4[r]);
            else
                memcpy(sums, acc[r], sizeof acc[r]);
            double *dp = dsb + (size_t)(t0 + r - tb) * ldv;
            for (int j = 0; j < KW && s0 + j <= t0 + r; j++)
                dp[s0 + j] = sums[j];
        }
    }
}

/* The same sums with scratch: vt (V of the head transposed, (d, ldv), zero past T) lets
 * the dots of dP run side by side (four queries sharing each load of vt), and the
 * queries go in blocks of TB whose rows of dS (dsb, (TB, ldv) doubles) are kept, so that
 * each tile of dk and dv is read and written once a block instead of once a query. K,
 * and the block's rows of Q, are widened to double once (kd, qd). Tiles of
 * 64 (dq) or 32 (dk and dv) channels, then of 8, then single channels. */
static inline __attribute__((always_inline)) void backward_body(const int HALVES, const head_grads *h, double *vt,
                                                                size_t ldv)
{
    const int T = h->T, C = h->C, d = h->d;
    double *dsb = vt + (size_t)d * ldv, *kd = dsb + (size_t)TB * ldv, *qd = kd + (size_t)T * d;
    const head_scratch w = {vt, dsb, kd, qd, ldv};
    for (size_t s = 0; s < ldv; s++)
        for (int i = 0; i < d; i++)
            vt[(size_t)i * ldv + s] = s < (size_t)T ? h->v[s * C + i] : 0.0;
    head_rows_to_double(kd, h->k, T, C, d);
    for (int t0 = 0; t0 < T; t0 += TB) {
        const int t1 = t0 + TB < T ? t0 + TB : T;
        int tq = t0;
        for (; tq + 4 <= t1; tq += 4)
            dp_rows(HALVES, 4, h, &w, t0, tq);
        for (; tq < t1; tq++)
            dp_rows(HALVES, 1, h, &w, t0, tq);
        for (int t = t0; t < t1; t++) {
            double *ds = dsb + (size_t)(t - t0) * ldv;
            float *dqt = h->dq + (size_t)t * C;
            ds_row(ds, h, t);
            int i0 = 0;
            for (; i0 + 64 <= d; i0 += 64)
                dq_tile(HALVES, 8, dqt + i0, ds, kd + i0, t, d);
            for (; i0 + 8 <= d; i0 += 8)
                dq_tile(HALVES, 1, dqt + i0, ds, kd + i0, t, d);
            for (; i0 < d; i0++)
                for (int s = 0; s <= t; s++)
                    dqt[i0] += (float)(ds[s] * h->k[(size_t)s * C + i0]);
        }
        head_rows_to_double(qd, h->q + (size_t)t0 * C, t1 - t0, C, d);
        for (int s = 0; s < t1; s++) {
            const int ta = s > t0 ? s : t0;
            float *dks = h->dk + (size_t)s * C, *dvs = h->dv + (size_t)s * C;
            int i0 = 0;
            for (; i0 + 32 <= d; i0 += 32)
                dkv_tile(HALVES, 4, h, &w, s, t0, t1, i0);
            for (; i0 + 8 <= d; i0 += 8)
                dkv_tile(HALVES, 1, h, &w, s, t0, t1, i0);
            for (; i0 < d; i0++)
                for (int t = ta; t < t1; t++) {
                    dks[i0] += (float)(dsb[(size_t)(t - t0) * ldv + s] * h->q[(size_t)t * C + i0]);
                    dvs[i0] += (float)kept_prob(h, t, s) * h->dout[(size_t)t * C + i0];
                }
        }
    }
}

/* The fast backward of each instruction set (cpu.h decides which one runs; the same
 * bits). dp_rows' tile is 4 queries x 32 keys of double sums, 16 zmm registers on
 * AVX-512 but 32 ymm on AVX2, which has 16: there it went to memory at every step, and
 * 4 x 8 keys (8 ymm) stay in registers; AVX2 also computes in vectors of 4 doubles
 * (HALVES) where gcc's vectors of 8 went through the stack. */
typedef void (*backward_fn)(const head_grads *h, double *vt, size_t ldv);
static void backward_generic(const head_grads *h, double *vt, size_t ldv)
{
    backward_body(0, h, vt, ldv);
}
#ifdef HAVE_X86_KERNELS
MYGPT_AVX2 static void backward_avx2(const head_grads *h, double *vt, size_t ldv)
{
    backward_body(1, h, vt, ldv);
}
MYGPT_AVX512 static void backward_avx512(const head_grads *h, double *vt, size_t ldv)
{
    backward_body(0, h, vt, ldv);
}
#endif
#ifdef HAVE_NEON_KERNELS
/* NEON: dp_rows' tile in vectors of 4 doubles (HALVES), 4 queries x 8 keys = 16 of the 32
 * q registers of 2 doubles; the 4 x 32 keys of the plain one would need 64. gcc 12 still
 * moves some of the 4-double vectors through the stack (the whole function: 106 q-register
 * stack loads and stores in the aarch64 objdump, the plain one's 283). */
static void backward_neon(const head_grads *h, double *vt, size_t ldv)
{
    backward_body(1, h, vt, ldv);
}
#endif
static const backward_fn BACKWARDS[MYGPT_ISA_COUNT] = {
    [MYGPT_ISA_GENERIC] = backward_generic,
#ifdef HAVE_X86_KERNELS
    [MYGPT_ISA_AVX2] = backward_avx2,
    [MYGPT_ISA_AVX512] = backward_avx512,
#endif
#ifdef HAVE_NEON_KERNELS
    [MYGPT_ISA_NEON] = backward_neon,
#endif
};

/* Every (b, h) of the batch: each writes only its own slices of dq, dk, dv, so they run
 * in parallel. Without scratch (no memory) the plain loops give the same bits, slower. */
static void attention_backward(float *dq, float *dk, float *dv, const float *dout, const float *att, mygpt_qkv in,
                               mygpt_attention_dropout drop, mygpt_attention_shape shape)
{
    const int B = shape.B, T = shape.T, C = shape.C, NH = shape.NH, d = C / NH;
    const size_t ldv = ((size_t)T + DPS - 1) / DPS * DPS;
    // doubles: vt (d, ldv), dsb (TB, ldv), kd (T, d), qd (TB, d)
    const size_t per_thread = (size_t)d * ldv + (size_t)TB * ldv + (size_t)T * d + (size_t)TB * d;
    const int par = (size_t)B * T * T * C > MYGPT_PARALLEL_MIN;
    const int team = par ? omp_get_max_threads() : 1;
    double *scratch = malloc((size_t)team * per_thread * sizeof(double));
    const backward_fn head_backward_fast = BACKWARDS[mygpt_cpu_isa(MYGPT_FAMILY_ATTENTION)];
#pragma omp parallel for collapse(2) schedule(static) num_threads(team) if (par)
    for (int b = 0; b < B; b++) {
        for (int hd = 0; hd < NH; hd++) {
            const size_t off = (size_t)b * T * C + (size_t)hd * d, bh = ((size_t)b * NH + hd) * T * T;
            const head_grads h = {
                .dq = dq + off, .dk = dk + off, .dv = dv + off,
                .dout = dout + off, .q = in.q + off, .k = in.k + off, .v = in.v + off,
                .probs = att + bh, .keep = drop.keep ? drop.keep + bh : NULL,
                .noise = drop.keep ? 1.0f / (float)(1.0 - drop.p) : 1.0f, // as mygpt_dropout_apply's
                .scale = (double)(float)sqrt((double)d), .T = T, .C = C, .d = d};
            if (scratch) {
                head_backward_fast(&h, scratch + (size_t)omp_get_thread_num() * per_thread, ldv);
            } else {
                mygpt_attention_head_backward_reference(&h);
            }
        }
    }
    free(scratch);
}

void mygpt_attention_backward(float *dq, float *dk, float *dv, const float *dout, const float *probs, mygpt_qkv in,
                              mygpt_attention_shape shape)
{
    attention_backward(dq, dk, dv, dout, probs, in, (mygpt_attention_dropout){NULL, 0.0}, shape);
}

void mygpt_attention_backward_dropout(float *dq, float *dk, float *dv, const float *dout, const float *probs,
                                      mygpt_qkv in, mygpt_attention_dropout drop, mygpt_attention_shape shape)
{
    attention_backward(dq, dk, dv, dout, probs, in, drop, shape);
}

/* ---- dropout on the probabilities ----------------------------------------------------------- */

/* one (b, h): out_t = sum over s <= t of dropout(P)_ts v_s (built per instruction set) */
MYGPT_CLONES static void dropout_head_values(float *out, const float *probs, const float *v,
                                             mygpt_attention_dropout drop, mygpt_attention_shape shape, int b, int h)
{
    const int T = shape.T, C = shape.C, NH = shape.NH, d = C / NH;
    const uint8_t *keep = drop.keep;
    const float noise = 1.0f / (float)(1.0 - drop.p);
    const size_t off = (size_t)b * T * C + (size_t)h * d, bh = ((size_t)b * NH + h) * T * T;
    for (int t = 0; t < T; t++) {
        const float *pt = probs + bh + (size_t)t * T; // (T,)
        const uint8_t *kt = keep + bh + (size_t)t * T;
        float *ot = out + off + (size_t)t * C;        // (d,)
        for (int i = 0; i < d; i++)
            ot[i] = 0.0f;
        for (int s = 0; s <= t; s++) {
            const float w = pt[s] * (kt[s] ? noise : 0.0f); // attn_weights = dropout(P)
            const float *vs = v + off + (size_t)s * C;
            for (int i = 0; i < d; i++)
                ot[i] = fmaf(w, vs[i], ot[i]);
        }
    }
}

/* out = dropout(P) V for every (b, h), the pairs shared among the threads */
static void dropout_values(float *out, const float *probs, const float *v, mygpt_attention_dropout drop,
                           mygpt_attention_shape shape)
{
    const int B = shape.B, T = shape.T, C = shape.C, NH = shape.NH;
#pragma omp parallel for collapse(2) schedule(static) if ((size_t)B * T * T * C > MYGPT_PARALLEL_MIN)
    for (int b = 0; b < B; b++)
        for (int h = 0; h < NH; h++)
            dropout_head_values(out, probs, v, drop, shape, b, h);
}

void mygpt_attention_dropout_values(float *out, const float *probs, const float *v, mygpt_attention_dropout drop,
                                    mygpt_attention_shape shape)
{
    dropout_values(out, probs, v, drop, shape);
}

/* ---- where a head looks --------------------------------------------------------------------- */

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
