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

/* torch.dot(a, b) (a @ b of two vectors) as PyTorch 1.13 computes it, bit for bit: OpenBLAS's
 * sdot with its Haswell kernel (the one PyTorch's OpenBLAS takes on AVX2 CPUs). Whole
 * blocks of 32 go to four vectors of 8 running sums with fused multiply-adds, which are
 * then added (each vector's halves, the vectors pairwise, the four lanes pairwise); the last
 * n % 32 products, each rounded to float, are added in double, the blocks' sum last, and
 * the total is rounded to float (docs/pytorch-parity.md, section 12). */
float mygpt_dot(const float *a, const float *b, size_t n);

/* x.mean() and x.std() of a whole tensor of n values as PyTorch's CPU kernels compute
 * them (one thread: up to 32768 values PyTorch takes one too), as floats widened to double
 * as .item() widens them: the mean is mygpt_mean_torch's (mygpt/layers.h); the standard
 * deviation takes two passes, the squared deviations from that mean summed in double in
 * order, divided by n - 1 (Bessel's correction, torch.std's default), its square root
 * taken in double and rounded to float. NaN for n = 0 (the mean) or n < 2 (std). */
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
