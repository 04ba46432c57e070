/*
 * attention.c - causal multi-head self-attention, the fast way, with the same bits
 * as the plain loops of mygpt_attention_forward (layers.c).
 *
 * Per (batch, head), one thread:
 *   1. K of the head is transposed into the thread's scratch, kt (d, T), so the
 *      scores of a query against 8 or 16 consecutive keys come out of one vector
 *      operation: score[s] = fmaf(q[i], kt[i][s], score[s]) for i = 0..d-1. Each
 *      score is still the same chain of fused multiply-adds over i in order.
 *   2. Queries go in blocks of QB = 4 rows, and a 4 x 16 tile of scores stays in
 *      registers while i runs (a small matmul micro-kernel).
 *   3. softmax over s <= t (max, exp, sum, times 1/sum), then out[t] = sum over s of
 *      p[s] v[s]: a 4 x 16 tile of outputs in registers, s in order.
 * Only QB rows of scores (QB x T floats) exist at a time per thread.
 */
#include <math.h>
#include <omp.h>

#include "mygpt/layers.h"

#define QB 4

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define MULTIVERSION __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define MULTIVERSION
#endif

#define KW 16 /* keys (or channels) per register tile */

static int padded(int T)
{
    return (T + KW - 1) / KW * KW;
}

size_t mygpt_attention_scratch_size(int T, int head_dim)
{
    const size_t Tp = (size_t)padded(T);
    return (size_t)omp_get_max_threads() * ((size_t)head_dim * Tp + (size_t)QB * Tp);
}

/* scores[r][s] = q_r . k_s for rows r < rows and keys s < ns, each a chain of
 * fused multiply-adds over i = 0..d-1 from 0. A QB x KW tile of scores stays in
 * registers while i runs; kt rows are padded to a multiple of KW (zeros). */
MULTIVERSION
static void block_scores(float *restrict scores, int Tp, const float *restrict q, size_t ldq,
                         int rows, const float *restrict kt, int d, int ns)
{
    for (int s0 = 0; s0 < ns; s0 += KW) {
        float acc[QB][KW];
        for (int r = 0; r < QB; r++)
            for (int j = 0; j < KW; j++)
                acc[r][j] = 0.0f;
        if (rows == QB) {
            for (int i = 0; i < d; i++) {
                const float *kr = kt + (size_t)i * Tp + s0;
                for (int r = 0; r < QB; r++) {
                    const float qi = q[(size_t)r * ldq + i];
#pragma omp simd
                    for (int j = 0; j < KW; j++)
                        acc[r][j] = fmaf(qi, kr[j], acc[r][j]);
                }
            }
        } else {
            for (int i = 0; i < d; i++) {
                const float *kr = kt + (size_t)i * Tp + s0;
                for (int r = 0; r < rows; r++) {
                    const float qi = q[(size_t)r * ldq + i];
#pragma omp simd
                    for (int j = 0; j < KW; j++)
                        acc[r][j] = fmaf(qi, kr[j], acc[r][j]);
                }
            }
        }
        for (int r = 0; r < rows; r++)
            for (int j = 0; j < KW; j++)
                scores[(size_t)r * Tp + s0 + j] = acc[r][j];
    }
}

/* out_row (d) = sum over s < ns of p[s] * v[s] (row stride ldv), s in order */
MULTIVERSION
static void weighted_values(float *restrict out_row, const float *restrict p, int ns,
                            const float *restrict v, size_t ldv, int d)
{
    for (int i = 0; i < d; i++)
        out_row[i] = 0.0f;
    for (int s = 0; s < ns; s++) {
        const float ps = p[s];
        const float *vs = v + (size_t)s * ldv;
#pragma omp simd
        for (int i = 0; i < d; i++)
            out_row[i] = fmaf(ps, vs[i], out_row[i]);
    }
}

/* The same for a block of rows r < rows whose row r uses keys s <= t0 + r, with a
 * QB x KW tile of outputs in registers; d must be a multiple of KW. */
MULTIVERSION
static void weighted_values_block(float *restrict out, size_t ldo, const float *restrict p,
                                  int Tp, int rows, int t0, const float *restrict v, size_t ldv,
                                  int d)
{
    for (int i0 = 0; i0 < d; i0 += KW) {
        float acc[QB][KW];
        for (int r = 0; r < QB; r++)
            for (int j = 0; j < KW; j++)
                acc[r][j] = 0.0f;
        for (int s = 0; s <= t0; s++) { /* keys every row of the block sees */
            const float *vs = v + (size_t)s * ldv + i0;
            for (int r = 0; r < QB; r++) {
                if (r >= rows)
                    break;
                const float ps = p[(size_t)r * Tp + s];
#pragma omp simd
                for (int j = 0; j < KW; j++)
                    acc[r][j] = fmaf(ps, vs[j], acc[r][j]);
            }
        }
        for (int s = t0 + 1; s < t0 + rows; s++) { /* the causal triangle inside the block */
            const float *vs = v + (size_t)s * ldv + i0;
            for (int r = s - t0; r < rows; r++) {
                const float ps = p[(size_t)r * Tp + s];
#pragma omp simd
                for (int j = 0; j < KW; j++)
                    acc[r][j] = fmaf(ps, vs[j], acc[r][j]);
            }
        }
        for (int r = 0; r < rows; r++)
            for (int j = 0; j < KW; j++)
                out[(size_t)r * ldo + i0 + j] = acc[r][j];
    }
}

mygpt_status mygpt_attention_forward_fast(float *out, const float *q, const float *k,
                                          const float *v, float *scratch, int B, int T, int C,
                                          int NH, mygpt_error *err)
{
    if (B < 1 || T < 1 || C < 1 || NH < 1 || C % NH != 0)
        return mygpt_fail(err, MYGPT_EINVAL,
                          "attention needs sizes >= 1 and C divisible by the heads (B=%d T=%d C=%d heads=%d)",
                          B, T, C, NH);
    const int d = C / NH;
    const float scale = (float)sqrt((double)d);
    const int Tp = padded(T);
    const size_t per_thread = (size_t)d * Tp + (size_t)QB * Tp;
#pragma omp parallel for collapse(2) schedule(static) if (B * NH > 1 && (size_t)B * T * T * C > 65536)
    for (int b = 0; b < B; b++) {
        for (int h = 0; h < NH; h++) {
            float *kt = scratch + (size_t)omp_get_thread_num() * per_thread; // (d, Tp)
            float *scores = kt + (size_t)d * Tp;                             // (QB, Tp)
            const float *kb = k + (size_t)b * T * C + h * d, *vb = v + (size_t)b * T * C + h * d;
            for (int s = 0; s < Tp; s++)
                for (int i = 0; i < d; i++)
                    kt[(size_t)i * Tp + s] = s < T ? kb[(size_t)s * C + i] : 0.0f;
            for (int t0 = 0; t0 < T; t0 += QB) {
                const int rows = T - t0 < QB ? T - t0 : QB;
                const float *qb = q + ((size_t)b * T + t0) * C + h * d;
                // keys 0 .. t0 + rows - 1; row r only uses s <= t0 + r (causal mask)
                block_scores(scores, Tp, qb, (size_t)C, rows, kt, d, t0 + rows);
                for (int r = 0; r < rows; r++) {
                    const int t = t0 + r;
                    float *sr = scores + (size_t)r * Tp;
                    float maxv = -INFINITY;
                    for (int s = 0; s <= t; s++) {
                        sr[s] = sr[s] / scale;
                        if (sr[s] > maxv)
                            maxv = sr[s];
                    }
                    float sum = 0.0f;
                    for (int s = 0; s <= t; s++) {
                        sr[s] = expf(sr[s] - maxv);
                        sum += sr[s];
                    }
                    const float inv_sum = 1.0f / sum;
                    for (int s = 0; s <= t; s++)
                        sr[s] = sr[s] * inv_sum;
                    if (d % KW != 0)
                        weighted_values(out + ((size_t)b * T + t) * C + h * d, sr, t + 1, vb,
                                        (size_t)C, d);
                }
                if (d % KW == 0)
                    weighted_values_block(out + ((size_t)b * T + t0) * C + h * d, (size_t)C, scores,
                                          Tp, rows, t0, vb, (size_t)C, d);
            }
        }
    }
    return MYGPT_OK;
}
