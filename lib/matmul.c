/*
 * matmul.c - the fast linear layer: out (M, N) = inp (M, K) @ weight (N, K)^T + bias,
 * optionally followed by GELU, with the same math as mygpt_matmul_naive.
 *
 * How it is fast (GotoBLAS's scheme, in plain C):
 *   - the weight is packed, a block of KC x NC at a time, into panels of NR columns
 *     laid out k-major, so the inner loop reads NR consecutive floats;
 *   - a register micro-tile of MR rows x NR columns of accumulators, as many as the
 *     vector registers allow: AVX2 has 16 ymm registers, so MR x NR = 6 x 16 (12
 *     accumulators, 2 for the loaded panel row, 1 for the broadcast); AVX-512 has 32
 *     zmm registers, so 14 x 32 (28 + 2 + 1). Each k then takes MR broadcasts and 2
 *     loads for 2 MR fused multiply-adds. Other CPUs run the same C as 6 x 16;
 *   - the kernel is written once and compiled three times (target attributes); the
 *     widest one the CPU supports is picked at run time. So are the packing (vector
 *     gathers of NR weight rows) and fc1's GELU epilogue (lib/vecmath.h's erf);
 *   - threads take (row block, panel) tiles from a shared queue (dynamic schedule):
 *     on a shared virtual machine one core is often slower than the other.
 *
 * Determinism (stb's rule): every multiply-add is written as fmaf(), which the
 * AVX2 and AVX-512 kernels turn into vfmadd instructions and the generic one
 * computes with the C library; the tile shape only decides which elements are
 * computed together, never how: all three give the same bits. Each output element is
 * summed by one thread in a fixed order, so the result does not depend on the number
 * of threads or on which thread took which tile
 * either: out = ((bias + S_0) + S_1) + ..., where S_j is the fused-multiply-add sum
 * of the j-th block of KC products, k in order. That is OpenBLAS's order (the BLAS
 * under PyTorch on Debian), so the remaining differences from PyTorch are mostly in
 * other operations. It differs from the naive kernel only by rounding.
 */
#include <limits.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "mygpt/layers.h"
#include "parallel.h"
#include "vecmath.h"
#include "internal.h"
#include "simd.h"

#define NR_MAX 32 /* widest panel (AVX-512: two zmm registers per row) */
#define MR_MAX 14 /* tallest tile (AVX-512) */
/* k-depth of a packed block. It is part of the summation order (each block's products
 * are summed from zero, then added), so every kernel must use the same KC. */
#define KC 256
#define NC 256 /* columns per packed block: KC x NC floats stay in L2 */

/* c (rows x NR, row stride ldc) = (first ? init : c) + a (rows x kc) . bp (kc x NR, packed),
 * the product summed from zero, k in order, one fused multiply-add at a time, then
 * added to c. init is the bias (or NULL for zero). The body is written once; the
 * wrappers below compile it for a given tile height MR and instruction set. */
static inline __attribute__((always_inline)) void
kernel_body(const int MR, const int NR, int rows, int kc, const float *restrict a, size_t lda,
            const float *restrict bp, float *restrict c, size_t ldc, int first,
            const float *restrict init)
{
    float acc[MR_MAX][NR_MAX];
    for (int i = 0; i < MR; i++)
        for (int j = 0; j < NR; j++)
            acc[i][j] = 0.0f;
    if (rows == MR) {
        for (int k = 0; k < kc; k++) {
            const float *b = bp + (size_t)k * NR;
            for (int i = 0; i < MR; i++) {
                const float ai = a[i * lda + k];
#pragma omp simd
                for (int j = 0; j < NR; j++)
                    acc[i][j] = fmaf(ai, b[j], acc[i][j]);
            }
        }
    } else {
        for (int k = 0; k < kc; k++) {
            const float *b = bp + (size_t)k * NR;
            for (int i = 0; i < rows; i++) {
                const float ai = a[i * lda + k];
#pragma omp simd
                for (int j = 0; j < NR; j++)
                    acc[i][j] = fmaf(ai, b[j], acc[i][j]);
            }
        }
    }
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
typedef void (*gelu_fn)(float *c, size_t ldc, int rows, int cols);
static void gelu_generic(float *c, size_t ldc, int rows, int cols)
{
    gelu_body(c, ldc, rows, cols);
}

typedef void (*kernel_fn)(int rows, int kc, const float *restrict a, size_t lda,
                          const float *restrict bp, float *restrict c, size_t ldc, int first,
                          const float *restrict init);

#define KERNEL_ARGS                                                                                \
    int rows, int kc, const float *restrict a, size_t lda, const float *restrict bp,              \
        float *restrict c, size_t ldc, int first, const float *restrict init
#define KERNEL_CALL(MR, NR) kernel_body(MR, NR, rows, kc, a, lda, bp, c, ldc, first, init)

/* any CPU: fmaf() from the C library (same results, slower) */
static void kernel_6x16(KERNEL_ARGS)
{
    KERNEL_CALL(6, 16);
}

#ifdef MYGPT_X86_KERNELS
#define HAVE_X86_KERNELS 1
/* AVX2 + FMA: 6 x 16 accumulators = 12 ymm registers */
MYGPT_AVX2 static void kernel_6x16_avx2(KERNEL_ARGS)
{
    KERNEL_CALL(6, 16);
}
/* AVX-512: 14 x 32 accumulators = 28 zmm registers, twice the width and more than
 * twice the rows of AVX2, so each loaded panel row feeds 28 fused multiply-adds */
MYGPT_AVX512 static void kernel_14x32_avx512(KERNEL_ARGS)
{
    KERNEL_CALL(14, 32);
}
MYGPT_AVX2 static void gelu_avx2(float *c, size_t ldc, int rows,
                                                                int cols)
{
    gelu_body(c, ldc, rows, cols);
}
MYGPT_AVX512 static void gelu_avx512(float *c, size_t ldc, int rows,
                                                                  int cols)
{
    gelu_body(c, ldc, rows, cols);
}
#endif

/* The widest kernel this CPU runs, and its tile MR x NR (the packing follows NR).
 * MYGPT_MATMUL_KERNEL=generic|avx2|avx512 asks for a narrower one (for tests and
 * benchmarks; the results are the same bits either way). */
static kernel_fn pick_kernel(int *mr, int *nr, gelu_fn *gelu)
{
    const char *want = getenv("MYGPT_MATMUL_KERNEL");
    *gelu = gelu_generic;
    if (want && strcmp(want, "generic") == 0) {
        *mr = 6;
        *nr = 16;
        return kernel_6x16;
    }
#ifdef HAVE_X86_KERNELS
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
        !(want && strcmp(want, "avx2") == 0)) {
        *mr = 14;
        *nr = 32;
        *gelu = gelu_avx512;
        return kernel_14x32_avx512;
    }
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
        *mr = 6;
        *nr = 16;
        *gelu = gelu_avx2;
        return kernel_6x16_avx2;
    }
#endif
    *mr = 6;
    *nr = 16;
    return kernel_6x16;
}

const char *mygpt_matmul_kernel_name(void)
{
    int mr, nr;
    gelu_fn gelu;
    const kernel_fn k = pick_kernel(&mr, &nr, &gelu);
#ifdef HAVE_X86_KERNELS
    if (k == kernel_14x32_avx512)
        return "avx512";
    if (k == kernel_6x16_avx2)
        return "avx2";
#endif
    return k == kernel_6x16 ? "generic" : "?";
}

#ifdef MYGPT_X86_KERNELS
#define PACK_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define PACK_CLONES
#endif

/* One NR-wide panel: dst[k*NR + j] = src[j*K + k] for k < kc, j < cols; columns
 * j >= cols (past N) are zero. Writing dst in order (j innermost) lets the compiler
 * gather the NR rows with vector loads: ~1.6x faster than walking each row. */
PACK_CLONES
static void pack_panel(float *restrict dst, const float *restrict src, int K, int kc, int cols,
                       const int NR)
{
    for (int k = 0; k < kc; k++)
#pragma omp simd
        for (int j = 0; j < NR; j++)
            dst[(size_t)k * NR + j] = j < cols ? src[(size_t)j * K + k] : 0.0f;
}

/* Packs weight rows [n0, n0 + nc) x columns [k0, k0 + kc) into NR-wide panels:
 * panel p holds, for k = 0..kc-1, the NR values weight[n0 + p*NR + j][k0 + k]
 * (k-major), so the micro-kernel reads NR consecutive floats per k. Rows past N are
 * zero. Panels are split among the threads; the implicit barrier ends the packing. */
static void pack_weight(float *packed, const float *weight, int K, int N, int n0, int nc, int k0,
                        int kc, const int NR)
{
    const int panels = (nc + NR - 1) / NR;
#pragma omp for schedule(static)
    for (int p = 0; p < panels; p++) {
        const int first_row = n0 + p * NR;
        const int cols = N - first_row < NR ? N - first_row : NR;
        pack_panel(packed + (size_t)p * kc * NR, weight + (size_t)first_row * K + k0, K, kc, cols,
                   NR);
    }
}


/* scratch for one NR-wide edge tile: out has fewer than NR columns left */
typedef struct edge_tile {
    float c[MR_MAX * NR_MAX];
} edge_tile;

/* What one matmul call works on (shared by the threads of its team). */
typedef struct matmul_job {
    float *out;
    const float *inp, *weight, *bias;
    size_t M;
    int K, N, apply_gelu, MR, NR;
    kernel_fn micro_kernel;
    gelu_fn gelu_tile;
    float *packed; /* one KC x NC block of weight panels */
} matmul_job;

/* The blocked loops. Called by every thread of a parallel region (the omp for's share
 * the work among them), or by one thread outside any region for small products. */
static void matmul_blocks(const matmul_job *j)
{
    const size_t M = j->M;
    const int K = j->K, N = j->N, MR = j->MR, NR = j->NR;
    const size_t mblocks = (M + MR - 1) / MR;
    for (int n0 = 0; n0 < N; n0 += NC) {
        const int nc = N - n0 < NC ? N - n0 : NC;
        const int panels = (nc + NR - 1) / NR;
        for (int k0 = 0; k0 < K; k0 += KC) {
            const int kc = K - k0 < KC ? K - k0 : KC;
            const int last_k = k0 + kc == K;
            pack_weight(j->packed, j->weight, K, N, n0, nc, k0, kc, NR); /* ends with a barrier */
            /* each thread takes whole (row block, panel) tiles, so every element is summed
             * by one thread in a fixed k order however the tiles are handed out:
             * dynamically, so a core the host preempts does not hold up the other (the
             * barrier at the end orders the k blocks) */
#pragma omp for schedule(dynamic, 8) collapse(2)
            for (size_t mb = 0; mb < mblocks; mb++) {
                for (int p = 0; p < panels; p++) {
                    const size_t m0 = mb * MR;
                    const int rows = M - m0 < (size_t)MR ? (int)(M - m0) : MR;
                    const int col0 = n0 + p * NR;
                    const int cols = N - col0 < NR ? N - col0 : NR;
                    const float *a = j->inp + m0 * K + k0;
                    const float *bp = j->packed + (size_t)p * kc * NR;
                    const float *bias = j->bias ? j->bias + col0 : NULL;
                    float *c = j->out + m0 * N + col0;
                    if (cols == NR) {
                        j->micro_kernel(rows, kc, a, (size_t)K, bp, c, (size_t)N, k0 == 0, bias);
                    } else { /* right edge: work in a full-width scratch tile */
                        edge_tile t;
                        float init[NR_MAX] = {0};
                        for (int jj = 0; jj < cols && bias; jj++)
                            init[jj] = bias[jj];
                        for (int i = 0; i < rows; i++)
                            for (int jj = 0; jj < NR; jj++)
                                t.c[i * NR + jj] = jj < cols ? c[i * (size_t)N + jj] : 0.0f;
                        j->micro_kernel(rows, kc, a, (size_t)K, bp, t.c, NR, k0 == 0, init);
                        for (int i = 0; i < rows; i++)
                            for (int jj = 0; jj < cols; jj++)
                                c[i * (size_t)N + jj] = t.c[i * NR + jj];
                    }
                    if (last_k && j->apply_gelu) /* epilogue while the tile is hot */
                        j->gelu_tile(c, (size_t)N, rows, cols);
                }
            }
        }
    }
}

mygpt_status mygpt_matmul_ex(float *out, const float *inp, const float *weight,
                             const float *bias, size_t M, int K, int N, int apply_gelu,
                             mygpt_error *err)
{
    if (K < 0 || N < 0)
        return mygpt_fail(err, MYGPT_EINVAL, "matmul sizes must not be negative (K=%d N=%d)", K, N);
    if (M == 0 || N == 0)
        return MYGPT_OK;
    if (K == 0) {
        for (size_t m = 0; m < M; m++)
            for (int n = 0; n < N; n++) {
                const float v = bias ? bias[n] : 0.0f;
                out[m * (size_t)N + n] = apply_gelu ? mygpt_gelu(v) : v;
            }
        return MYGPT_OK;
    }
    matmul_job job = {out, inp, weight, bias, M, K, N, apply_gelu, 0, 0, NULL, NULL, NULL};
    job.micro_kernel = pick_kernel(&job.MR, &job.NR, &job.gelu_tile);
    const int nc_max = N < NC ? N : NC;
    const int kc_max = K < KC ? K : KC;
    const size_t packed_len = (size_t)((nc_max + job.NR - 1) / job.NR) * job.NR * kc_max;
    /* small products (the chapter's tiny GPT): panels on the stack, no parallel region
     * (entering one, even with if (false), costs about a microsecond) */
    float small_packed[2048];
    if (M * (size_t)K * N <= MYGPT_KERNEL_SMALL && packed_len <= 2048) {
        job.packed = small_packed;
        matmul_blocks(&job);
        return MYGPT_OK;
    }
    /* No memory for the panels is an error, not a fall-back to the naive kernel: that
     * one sums in another order, and the promise is the same bits whichever path. */
    job.packed = malloc(packed_len * sizeof(float));
    if (!job.packed)
        return mygpt_fail(err, MYGPT_ENOMEM, "out of memory for the matmul's packed panels (%zu floats)",
                          packed_len);
    if (M * (size_t)K * N <= MYGPT_KERNEL_SMALL) {
        matmul_blocks(&job);
    } else {
#pragma omp parallel
        matmul_blocks(&job);
    }
    free(job.packed);
    return MYGPT_OK;
}

mygpt_status mygpt_matmul(float *out, const float *inp, const float *weight, const float *bias,
                          size_t N, int C, int OC, mygpt_error *err)
{
    return mygpt_matmul_ex(out, inp, weight, bias, N, C, OC, 0, err);
}

/* ---- backward ---------------------------------------------------------------------- */

/* dst (cols, rows) = src (rows, cols)^T, in 16 x 16 tiles (both sides stay in cache),
 * tiles shared among threads in both directions. */
static void transpose(float *dst, const float *src, size_t rows, size_t cols)
{
    const size_t nr = (rows + 15) / 16, nc = (cols + 15) / 16;
#pragma omp parallel for collapse(2) schedule(static) if (rows * cols > MYGPT_KERNEL_SMALL)
    for (size_t rb = 0; rb < nr; rb++)
        for (size_t cb = 0; cb < nc; cb++) {
            const size_t r0 = rb * 16, r1 = r0 + 16 < rows ? r0 + 16 : rows;
            const size_t c0 = cb * 16, c1 = c0 + 16 < cols ? c0 + 16 : cols;
            for (size_t c = c0; c < c1; c++)
                for (size_t r = r0; r < r1; r++)
                    dst[c * rows + r] = src[r * cols + c];
        }
}

/* dst += src, n values */
static void add_into(float *dst, const float *src, size_t n)
{
#pragma omp parallel for schedule(static) if (n > MYGPT_KERNEL_SMALL)
    for (size_t i = 0; i < n; i++)
        dst[i] += src[i];
}

size_t mygpt_matmul_backward_workspace(size_t N, int C, int OC)
{
    const size_t nc = N * (size_t)C, no = N * (size_t)OC, oc = (size_t)OC * C;
    return no + nc + oc > oc + nc ? no + nc + oc : oc + nc;
}

mygpt_status mygpt_matmul_backward(float *dinp, float *dweight, float *dbias, const float *dout,
                                   const float *inp, const float *weight, size_t N, int C, int OC,
                                   mygpt_error *err)
{
    return mygpt_matmul_backward_ws(dinp, dweight, dbias, dout, inp, weight, N, C, OC, NULL, err);
}

mygpt_status mygpt_matmul_backward_ws(float *dinp, float *dweight, float *dbias, const float *dout,
                                      const float *inp, const float *weight, size_t N, int C, int OC,
                                      float *ws, mygpt_error *err)
{
    if (C < 1 || OC < 1 || N > (size_t)INT_MAX)
        return mygpt_fail(err, MYGPT_EINVAL, "matmul backward needs 1 <= C, OC and N <= INT_MAX (N=%zu C=%d OC=%d)",
                          N, C, OC);
    if (N == 0)
        return MYGPT_OK;
    const size_t nc = N * (size_t)C, no = N * (size_t)OC, oc = (size_t)OC * C;
    mygpt_status st = MYGPT_OK;
    // dinp += dout @ weight: the fast kernel with weight^T (C, OC) as its "weight"
    if (dinp) {
        float *wt = ws ? ws : malloc(oc * sizeof *wt), *tmp = ws ? ws + oc : malloc(nc * sizeof *tmp);
        if (!wt || !tmp)
            st = mygpt_fail(err, MYGPT_ENOMEM, "out of memory for the matmul backward (%zu floats)", oc + nc);
        if (st == MYGPT_OK) {
            transpose(wt, weight, (size_t)OC, (size_t)C);                 // (C, OC)
            st = mygpt_matmul(tmp, dout, wt, NULL, N, OC, C, err);         // (N, C)
            if (st == MYGPT_OK)
                add_into(dinp, tmp, nc);
        }
        if (!ws) {
            free(wt);
            free(tmp);
        }
    }
    // dweight += dout^T @ inp: (OC, N) times (C, N)^T; the sum over the N rows runs in
    // the kernel's fixed order (KC blocks, k in order), whatever the thread count
    if (st == MYGPT_OK && dweight) {
        float *dt = ws ? ws : malloc(no * sizeof *dt), *it = ws ? ws + no : malloc(nc * sizeof *it);
        float *tmp = ws ? ws + no + nc : malloc(oc * sizeof *tmp);
        if (!dt || !it || !tmp)
            st = mygpt_fail(err, MYGPT_ENOMEM, "out of memory for the matmul backward (%zu floats)",
                            no + nc + oc);
        if (st == MYGPT_OK) {
            transpose(dt, dout, N, (size_t)OC); // (OC, N)
            transpose(it, inp, N, (size_t)C);   // (C, N)
            st = mygpt_matmul(tmp, dt, it, NULL, (size_t)OC, (int)N, C, err);
            if (st == MYGPT_OK)
                add_into(dweight, tmp, oc);
        }
        if (!ws) {
            free(dt);
            free(it);
            free(tmp);
        }
    }
    // dbias += column sums of dout: threads own columns, rows in order
    if (st == MYGPT_OK && dbias) {
#pragma omp parallel for schedule(static) if (no > MYGPT_KERNEL_SMALL)
        for (int o = 0; o < OC; o++) {
            float s = 0.0f;
            for (size_t n = 0; n < N; n++)
                s += dout[n * OC + o];
            dbias[o] += s;
        }
    }
    return st;
}

void mygpt_matmul_backward_naive(float *dinp, float *dweight, float *dbias, const float *dout,
                                 const float *inp, const float *weight, size_t N, int C, int OC)
{
    for (size_t n = 0; dinp && n < N; n++) // dinp[n] += dout[n] @ weight
        for (int i = 0; i < C; i++) {
            float s = 0.0f;
            for (int o = 0; o < OC; o++)
                s += dout[n * OC + o] * weight[(size_t)o * C + i];
            dinp[n * C + i] += s;
        }
    for (int o = 0; dweight && o < OC; o++) // dweight[o] += sum over n of dout[n, o] inp[n]
        for (int i = 0; i < C; i++) {
            float s = 0.0f;
            for (size_t n = 0; n < N; n++)
                s += dout[n * OC + o] * inp[n * C + i];
            dweight[(size_t)o * C + i] += s;
        }
    for (int o = 0; dbias && o < OC; o++) {
        float s = 0.0f;
        for (size_t n = 0; n < N; n++)
            s += dout[n * OC + o];
        dbias[o] += s;
    }
}
