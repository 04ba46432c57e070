/*
 * lora.c - a LoRA adapter's products and their backward (kernels/lora.h). With
 * t = x A (one row: r values) and u = t B, the forward adds s u to the Linear's output;
 * the backward of y = s (x A) B for a gradient g of y is, with gu = s g and XA = x A,
 *   dXA = gu B^T (N, r),  dB = XA^T gu (r, OC),  dA = x^T dXA (C, r),  dx += dXA A^T (N, C).
 */
#include "kernels/lora.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/parallel.h"

#define MAX_RANK MYGPT_LORA_KERNEL_MAX_RANK
/* the columns one pass of the second product keeps in registers and cache */
#define COLS 256

/* t (r) = x (C) @ A (C, r), summed over C in order */
static void row_times_a(float *t, const float *x, const float *A, int C, int r)
{
    for (int j = 0; j < r; j++)
        t[j] = 0.0f;
    for (int k = 0; k < C; k++) {
        const float xk = x[k];
        const float *a = A + (size_t)k * r;
        for (int j = 0; j < r; j++)
            t[j] += xk * a[j];
    }
}

void mygpt_lora_forward(float *out, const float *inp, mygpt_lora_weights w, size_t N)
{
    const float *A = w.A, *B = w.B;
    const int C = w.C, OC = w.OC, r = w.r;
    const float scale = w.scale;
    assert(r >= 1 && r <= MAX_RANK);
#pragma omp parallel for schedule(static) if (N * (size_t)(C + OC) * r > MYGPT_PARALLEL_MIN)
    for (size_t n = 0; n < N; n++) {
        float t[MAX_RANK], u[COLS];
        // lesson: lora_forward
        row_times_a(t, inp + n * C, A, C, r); // t = x A      (r)
        float *y = out + n * OC;
        for (int o0 = 0; o0 < OC; o0 += COLS) { // u = t B, then y += s u, COLS columns at a time
            const int cols = OC - o0 < COLS ? OC - o0 : COLS;
            for (int o = 0; o < cols; o++)
                u[o] = 0.0f;
            for (int j = 0; j < r; j++) {
                const float tj = t[j];
                const float *b = B + (size_t)j * OC + o0;
                for (int o = 0; o < cols; o++)
                    u[o] += tj * b[o];
            }
            for (int o = 0; o < cols; o++)
                y[o0 + o] += scale * u[o];
        }
        // end lesson: lora_forward
    }
}

mygpt_status mygpt_lora_backward(float *dinp, float *dA, float *dB, const float *dout, const float *inp,
                                 mygpt_lora_weights lw, size_t N, mygpt_error *err)
{
    const float *A = lw.A, *B = lw.B;
    const int C = lw.C, OC = lw.OC, r = lw.r;
    const float scale = lw.scale;
    assert(r >= 1 && r <= MAX_RANK);
    float *XA = mygpt_float_block(N * (size_t)r), *dXA = mygpt_float_block(N * (size_t)r); // (N, r) each
    float *Bt = mygpt_float_block((size_t)OC * r);
    if (!XA || !dXA || !Bt) {
        free(XA);
        free(dXA);
        free(Bt);
        return mygpt_fail(err, MYGPT_ENOMEM, "out of memory for a LoRA backward (%zu floats)",
                          (2 * N + (size_t)OC) * (size_t)r);
    }
    for (int j = 0; j < r; j++) // Bt (OC, r) = B^T: a row of dXA then reads it in order
        for (int o = 0; o < OC; o++)
            Bt[(size_t)o * r + j] = B[(size_t)j * OC + o];
    const int big = N * (size_t)(C + OC) * r > MYGPT_PARALLEL_MIN;
    // per row: XA = x A again (not kept by the forward), dXA = (s g) B^T, dx += dXA A^T
#pragma omp parallel for schedule(static) if (big)
    for (size_t n = 0; n < N; n++) {
        float *t = XA + n * r, *dt = dXA + n * r;
        row_times_a(t, inp + n * C, A, C, r);
        for (int j = 0; j < r; j++)
            dt[j] = 0.0f;
        const float *g = dout + n * OC;
        for (int o = 0; o < OC; o++) {
            const float gu = scale * g[o];
            const float *bt = Bt + (size_t)o * r;
            for (int j = 0; j < r; j++)
                dt[j] += gu * bt[j];
        }
        for (int k = 0; dinp && k < C; k++) {
            const float *a = A + (size_t)k * r;
            float s = 0.0f;
            for (int j = 0; j < r; j++)
                s += dt[j] * a[j];
            dinp[n * C + k] += s;
        }
    }
    // dB (r, OC) = XA^T (s g): each thread its own columns, the rows summed in order
    const int oblocks = (OC + COLS - 1) / COLS;
#pragma omp parallel for schedule(static) if (big && dB)
    for (int ob = 0; ob < (dB ? oblocks : 0); ob++) {
        const int o0 = ob * COLS, w = OC - o0 < COLS ? OC - o0 : COLS;
        for (int j = 0; j < r; j++)
            memset(dB + (size_t)j * OC + o0, 0, (size_t)w * sizeof *dB);
        for (size_t n = 0; n < N; n++) {
            const float *g = dout + n * OC + o0;
            for (int j = 0; j < r; j++) {
                const float tj = XA[n * r + j];
                float *db = dB + (size_t)j * OC + o0;
                for (int o = 0; o < w; o++)
                    db[o] += tj * (scale * g[o]);
            }
        }
    }
    // dA (C, r) = x^T dXA: each thread 16 of its rows at a time, the rows of x summed in order
    const int kblocks = (C + 15) / 16;
#pragma omp parallel for schedule(static) if (big && dA)
    for (int kb = 0; kb < (dA ? kblocks : 0); kb++) {
        const int k0 = kb * 16, w = C - k0 < 16 ? C - k0 : 16;
        memset(dA + (size_t)k0 * r, 0, (size_t)w * r * sizeof *dA);
        for (size_t n = 0; n < N; n++) {
            const float *x = inp + n * C + k0, *dt = dXA + n * r;
            for (int k = 0; k < w; k++) {
                const float xk = x[k];
                float *da = dA + (size_t)(k0 + k) * r;
                for (int j = 0; j < r; j++)
                    da[j] += xk * dt[j];
            }
        }
    }
    free(XA);
    free(dXA);
    free(Bt);
    return MYGPT_OK;
}
