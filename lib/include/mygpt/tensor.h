/*
 * mygpt/tensor.h - small whole-tensor helpers the chapters use: the comparisons
 * (torch.equal, torch.allclose), reductions (dot, mean, std) and the documents'
 * "toy attention" (no projections, no mask).
 */
#ifndef MYGPT_TENSOR_H
#define MYGPT_TENSOR_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* everything declared here is exported by libmygpt.so (lib/exports.txt) */
#pragma GCC visibility push(default)

/* torch.equal: same values element for element (NaN != NaN). */
int mygpt_equal(const float *a, const float *b, size_t n);

/* torch.allclose(a, b, rtol, atol): |a - b| <= atol + rtol * |b| everywhere.
 * PyTorch's defaults are rtol = 1e-5, atol = 1e-8. */
int mygpt_allclose(const float *a, const float *b, size_t n, double rtol, double atol);

/* The index of the first value of x[0..n) that is a NaN or an infinity, or n when all
 * are finite (torch.isfinite(x).all()): what the savers and the training loops check
 * before a model or a state is kept. */
size_t mygpt_first_nonfinite(const float *x, size_t n);

/* x.sum(dim=-1) of a row of n floats as PyTorch 1.13's CPU kernel adds it, bit for bit:
 * shorter than 8, four running sums over the row seen as (n / 4, 4), the last n % 4 added
 * to the first, then ((s0 + s1) + s2) + s3; from 8, 32 running sums (4 vectors of 8
 * lanes) over the whole vectors, each carried up through levels every 16 steps so that
 * none grows long, the 4 vectors then added lane by lane, and the n % 8 values left over
 * summed before the 8 lanes are added in order (tests/golden/sums.txt). */
float mygpt_sum_torch(const float *x, size_t n);

/* x.pow(2).mean(dim=-1) of a row of n: each square rounded to float, summed as
 * mygpt_sum_torch sums, divided by n (RMSNorm's mean square). */
float mygpt_mean_sq_torch(const float *x, size_t n);

/* a . b of two float32 vectors, accumulated in double and rounded to float32. */
float mygpt_dot(const float *a, const float *b, size_t n);

/* Mean, and standard deviation with Bessel's correction (torch.std's default),
 * accumulated in double. */
double mygpt_mean(const float *x, size_t n);
double mygpt_std(const float *x, size_t n);

/* Document 001's toy_attention: for each batch b,
 *   out[b] = softmax(x[b] x[b]^T / sqrt(C)) x[b]
 * out, x (B, T, C); scratch holds T floats. No projections, no causal mask. */
void mygpt_toy_attention(float *out, const float *x, float *scratch, int B, int T, int C);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
