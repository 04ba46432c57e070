/*
 * reference.c - the plain loops of the kernels, written as a textbook writes them: the
 * place to read how a product or an attention is computed before reading how it is made
 * fast. Every fast path must agree with these:
 *   - the matmul, forward and backward (mygpt/layers.h): the triple loops. The fast
 *     kernel (matmul.c) sums in blocks of 256 with fused multiply-adds, so these
 *     differ from it by rounding only (the tests bound it);
 *   - attention forward, one query row at a time (attention_rows.h's attention_row),
 *     and one head's backward with double sums: the fast kernels of attention.c give
 *     these same bits, which the tests check for every instruction set.
 * The dispatchers choose (mygpt_impl MYGPT_IMPL_REFERENCE, --naive on the command
 * line): a model then runs these for its products and its attention forward. The
 * attention's backward runs its plain loops when it has no scratch memory; the KV-cache
 * step has no plain path of its own (its row is attention_row's arithmetic, kv-blocked).
 */
#include <math.h>
#include <omp.h>
#include <stddef.h>
#include <stdint.h>

#include "mygpt/attention.h"
#include "mygpt/layers.h"
#include "base/parallel.h"
#include "base/simd.h"
#include "kernels/attention_rows.h"
#include "kernels/reference.h"

/* ---- the matmul: out (N, OC) = inp (N, C) weight (OC, C)^T + bias ------------------------- */

void mygpt_matmul_naive(float *out, const float *inp, const float *weight, const float *bias,
                        size_t N, int C, int OC)
{
#pragma omp parallel for schedule(static) if (N * (size_t)C * OC > MYGPT_PARALLEL_MIN)
    for (size_t n = 0; n < N; n++) {
        const float *x = inp + n * C; // (C,)
        for (int o = 0; o < OC; o++) {
            const float *w = weight + (size_t)o * C; // (C,)
            float sum = 0.0f;
            for (int i = 0; i < C; i++)
                sum += x[i] * w[i];
            out[n * OC + o] = bias ? sum + bias[o] : sum;
        }
    }
}

void mygpt_matmul_backward_naive(mygpt_linear_grads d, const float *dout, const float *inp,
                                 const float *weight, size_t N, int C, int OC)
{
    float *dinp = d.dinp, *dweight = d.dweight, *dbias = d.dbias;
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

/* ---- attention, forward: each query row by attention_row ---------------------------------- */

void mygpt_attention_reference(float *out, float *probs, mygpt_qkv in, float *scratch, size_t per_thread, int team,
                               mygpt_attention_shape shape)
{
    const int B = shape.B, T = shape.T, C = shape.C, NH = shape.NH, d = C / NH;
    const float scale = (float)sqrt((double)d); // PyTorch divides by math.sqrt(d)
#pragma omp parallel for collapse(2) schedule(static) num_threads(team) \
    if ((size_t)B * T * T * C > MYGPT_PARALLEL_MIN)
    for (int b = 0; b < B; b++) {
        for (int h = 0; h < NH; h++) {
            const size_t off = (size_t)b * T * C + (size_t)h * d;
            // (T, T) the head's probabilities, or one row of scores (T,) of this thread's
            float *ph = probs ? probs + ((size_t)b * NH + h) * T * T
                              : scratch + (size_t)omp_get_thread_num() * per_thread;
            const head_view hv = {in.k + off, in.v + off, T, C, d, scale};
            for (int t = 0; t < T; t++)
                attention_row(out + off + (size_t)t * C, probs ? ph + (size_t)t * T : ph, in.q + off + (size_t)t * C,
                              &hv, t, probs != NULL);
        }
    }
}

/* ---- attention, backward: one head ------------------------------------------------------------ */

/* The plain loops, with no scratch: per query t, the row of dS one key at a time, and
 * the three gradients updated as it goes (dP_t[s] is summed twice, identically). */
MYGPT_CLONES static void head_backward_plain(const head_grads *h)
{
    const int T = h->T, C = h->C, d = h->d;
    for (int t = 0; t < T; t++) {
        const float *dot = h->dout + (size_t)t * C, *qt = h->q + (size_t)t * C;
        const float *p = h->probs + (size_t)t * T;
        float *dqt = h->dq + (size_t)t * C;
        double pdp = 0.0;
        for (int pass = 0; pass < 2; pass++)
            for (int s = 0; s <= t; s++) {
                double dp = dp_dot(dot, h->v + (size_t)s * C, d);
                if (h->keep)
                    dp *= h->keep[(size_t)t * T + s] ? h->noise : 0.0f;
                if (pass == 0) {
                    pdp += p[s] * dp;
                    continue;
                }
                const double ds = p[s] * (dp - pdp) / h->scale, ps = kept_prob(h, t, s);
                const float *ks = h->k + (size_t)s * C;
                float *dks = h->dk + (size_t)s * C, *dvs = h->dv + (size_t)s * C;
                for (int i = 0; i < d; i++) {
                    dqt[i] += (float)(ds * ks[i]);
                    dks[i] += (float)(ds * qt[i]);
                    dvs[i] += (float)(ps * dot[i]);
                }
            }
    }
}

/* (a wrapper: a non-static function with target clones would export its resolver) */
void mygpt_attention_head_backward_reference(const head_grads *h)
{
    head_backward_plain(h);
}
