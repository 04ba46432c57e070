/*
 * clip.c - gradient clipping by the global norm, torch.nn.utils.clip_grad_norm_ as
 * PyTorch 1.13 computes it on an AVX2 CPU (torch/nn/utils/clip_grad.py):
 *
 *   total_norm = torch.norm(torch.stack([torch.norm(g, 2.0) for g in grads]), 2.0)
 *   clip_coef = max_norm / (total_norm + 1e-6)
 *   clip_coef_clamped = torch.clamp(clip_coef, max=1.0)
 *   for g in grads: g.mul_(clip_coef_clamped)
 *
 * everything in float32. torch.norm(x, 2) of a contiguous float32 tensor reduces over its
 * last (only, once coalesced) dimension with the vectorised kernel, on one thread
 * (ReduceOpsKernel.cpp, norm_kernel_tensor_iterator_impl): 8 lanes, lane l taking the
 * elements l, l + 8, ... of the whole multiples of 8 as acc += x * x; then buffer[0] +
 * buffer[1] + ... + buffer[7] in that order; then the tail (n mod 8 elements) one by one,
 * buffer[0] += x * x; and sqrtf. How the build compiled those lines decides the bits: the
 * lanes' acc += x * x is one fused multiply-add; the tail loop is vectorised four at a
 * time, so when 4 or more are left, the first 4 squares are rounded (a vector multiply)
 * and added in order, and the rest are fused multiply-adds again. (Measured against
 * PyTorch on random vectors of every tail length: every other reading of those lines
 * missed some; tools/gen_learn_goldens.py's goldens hold this one.) `max_norm / t` is
 * Python's float over a tensor, which PyTorch computes as t.reciprocal() * max_norm:
 * (1 / (total + f32(1e-6))) * f32(max_norm).
 */
#include <math.h>
#include <stdlib.h>

#include "mygpt/train.h"
#include "base/base.h"
#include "base/parallel.h"
#include "base/simd.h" /* MYGPT_CLONES: fmaf as the vfmadd instruction (same bits), not a libm call */

enum { NORM_LANES = 8 }; // one AVX2 register of floats

MYGPT_CLONES static float norm2(const float *x, size_t n)
{
    float acc[NORM_LANES] = {0};
    size_t d = 0;
    // the vector loop, fused, lane l its own chain: one 8-float fma (AVX2, AVX-512), two (NEON)
    for (; d + NORM_LANES <= n; d += NORM_LANES)
#pragma omp simd
        for (int l = 0; l < NORM_LANES; l++)
            acc[l] = fmaf(x[d + l], x[d + l], acc[l]);
    float sum = acc[0];
    for (int l = 1; l < NORM_LANES; l++)
        sum = sum + acc[l];
    if (n - d >= 4) // the tail's first 4: squares rounded, then added in order
        for (int k = 0; k < 4; k++, d++) {
            const float square = x[d] * x[d];
            sum = sum + square;
        }
    for (; d < n; d++) // the rest of the tail: fused
        sum = fmaf(x[d], x[d], sum);
    return sqrtf(sum);
}

float mygpt_norm2(const float *x, size_t n)
{
    return norm2(x, n); // exported: a target_clones function would export its resolver
}

mygpt_status mygpt_clip_grad_norm(float *const *grads, const size_t *sizes, int count, double max_norm,
                                  float *total_norm, mygpt_error *err)
{
    if (count < 0)
        return mygpt_fail(err, MYGPT_EINVAL, "%d gradient tensors", count);
    if (!(max_norm > 0.0) || isinf(max_norm))
        return mygpt_fail(err, MYGPT_EINVAL, "max_norm must be a finite number > 0, not %g", max_norm);
    if (count == 0) { // clip_grad_norm_ of no gradients returns torch.tensor(0.)
        if (total_norm)
            *total_norm = 0.0f;
        return MYGPT_OK;
    }
    float *norms = mygpt_float_block((size_t)count);
    if (!norms)
        return mygpt_fail(err, MYGPT_ENOMEM, "out of memory for %d norms", count);
    // each tensor's norm on one thread, as PyTorch computes it: the same bits for any team
#pragma omp parallel for schedule(dynamic, 1) if (count > 1)
    for (int i = 0; i < count; i++)
        norms[i] = norm2(grads[i], sizes[i]);
    // lesson: clip
    const float total = norm2(norms, (size_t)count); // torch.norm(torch.stack(norms))
    free(norms);
    const float coef = (1.0f / (total + (float)1e-6)) * (float)max_norm;
    const float clamped = coef > 1.0f ? 1.0f : coef; // torch.clamp(max=1.0): NaN stays NaN
    for (int i = 0; i < count; i++) {
        float *g = grads[i];
        const size_t n = sizes[i];
#pragma omp parallel for schedule(static) if (n > MYGPT_STREAM_MIN)
        for (size_t j = 0; j < n; j++)
            g[j] = g[j] * clamped;
    // end lesson: clip
    }
    if (total_norm)
        *total_norm = total;
    return MYGPT_OK;
}

mygpt_status mygpt_trainer_clip_grad_norm(mygpt_trainer *tr, double max_norm, float *total_norm,
                                          mygpt_error *err)
{
    const mygpt_config *cfg = &tr->model->config;
    const int count = mygpt_state_dict_len(cfg);
    float **grads = malloc((size_t)(count ? count : 1) * sizeof *grads);
    size_t *sizes = malloc((size_t)(count ? count : 1) * sizeof *sizes);
    mygpt_status st = MYGPT_OK;
    if (!grads || !sizes) {
        st = mygpt_fail(err, MYGPT_ENOMEM, "out of memory for %d gradient tensors", count);
    } else {
        int with_grad = 0; // model.parameters() in the state_dict's order, those with a .grad
        for (int j = 0; j < count; j++) {
            if (!mygpt_trainer_is_trainable(tr, j))
                continue;
            mygpt_state_entry e;
            mygpt_state_dict_entry(cfg, &tr->grads, j, &e);
            grads[with_grad] = e.data;
            sizes[with_grad++] = e.numel;
        }
        st = mygpt_clip_grad_norm(grads, sizes, with_grad, max_norm, total_norm, err);
    }
    free(grads);
    free(sizes);
    return st;
}
