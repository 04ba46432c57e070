/*
 * mygpt/sample.h - choosing the next token (document 000's chapter 15), as a PyTorch
 * 1.13 reader writes it, with PyTorch's numbers and PyTorch's random draws:
 *
 *   logits = torch.where(logits < torch.topk(logits, k).values[:, -1:], -inf, logits)
 *   probs = torch.softmax(logits / temperature, dim=-1)       # top-p filtering next
 *   next = torch.multinomial(probs, 1)   # or torch.argmax(logits) when temperature == 0
 *
 * Every draw comes from the caller's generator (the global one, after manual_seed), so
 * a seed gives PyTorch's tokens.
 */
#ifndef MYGPT_SAMPLE_H
#define MYGPT_SAMPLE_H

#include <stddef.h>
#include <stdint.h>

#include "mygpt/error.h"
#include "mygpt/rng.h"

#ifdef __cplusplus
extern "C" {
#endif

/* everything declared here is exported by libmygpt.so (lib/exports.txt) */
#pragma GCC visibility push(default)

/* torch.argmax: the index of the largest of n values, the first one on ties. */
int64_t mygpt_argmax(const float *x, size_t n);

/* Top-k: every value below the k-th largest becomes -inf (values equal to it stay, as
 * with `logits < topk(logits, k).values[-1]`). 1 <= k <= n, else MYGPT_EINVAL. */
mygpt_status mygpt_top_k_mask(float *logits, size_t n, int k, mygpt_error *err);

/* torch.softmax over n values bit for bit (PyTorch's AVX2 kernel: SLEEF's expf on 8
 * lanes, its lane sums, then times 1/sum). probs may be x. */
void mygpt_softmax_torch(float *probs, const float *x, size_t n);

/* Nucleus filtering of probabilities (n): sorted descending, the cumulative sum (in
 * double, as torch.cumsum accumulates), and every sorted probability whose
 * `cum - p > top_p` set to 0. Not renormalised (multinomial does not need it).
 * 0 < top_p <= 1, else MYGPT_EINVAL; MYGPT_ENOMEM if the sort's scratch fails. */
mygpt_status mygpt_top_p_filter(float *probs, size_t n, double top_p, mygpt_error *err);

/* torch.multinomial(probs, 1, replacement) for one row of n probabilities (need not sum
 * to 1). replacement = 0 (PyTorch's default): q ~ Exponential(1) per entry (one 64-bit
 * draw each), the argmax of probs / q. replacement = 1: a float32 cumulative sum divided
 * by the total, and one 53-bit uniform searched in it. Errors as PyTorch's: an entry that
 * is negative, inf or nan, or a sum of 0 (MYGPT_EINVAL); rng NULL too. */
mygpt_status mygpt_multinomial(mygpt_rng *rng, const float *probs, size_t n, int replacement,
                               int64_t *out, mygpt_error *err);

/* How to pick the next token. temperature 0 is greedy (argmax); top_k 0 and top_p 0 are
 * off (top_p otherwise in (0, 1]). */
typedef struct mygpt_sampling {
    double temperature;
    int top_k;
    double top_p;
    int replacement; /* torch.multinomial's replacement flag (default 0) */
} mygpt_sampling;

/* The whole step above for one row of logits (n, modified in place: masked and
 * divided), scratch of n floats: the next token in *out. MYGPT_EINVAL for a temperature
 * below 0 or NaN, a top_k below 0, a top_p outside [0, 1] or NaN, and a draw (temperature
 * above 0) with rng NULL; multinomial's errors. */
mygpt_status mygpt_sample_next(mygpt_rng *rng, float *logits, size_t n, const mygpt_sampling *s,
                               float *scratch, int64_t *out, mygpt_error *err);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
