/*
 * mygpt/rng.h - PyTorch 1.13's CPU random number generator, bit for bit.
 *
 * A mygpt_rng is an explicit generator object (PyTorch keeps one hidden global
 * generator; mygpt makes you hold it). Seed it with mygpt_rng_seed(), the
 * equivalent of torch.manual_seed(), then draw from it with the functions below.
 * Each function consumes the generator exactly as the PyTorch operation named in
 * its comment does, so a sequence of calls reproduces a sequence of PyTorch
 * statements. The specification, with test vectors, is docs/pytorch-parity.md.
 *
 * Thread safety: a generator must not be used by two threads at once; distinct
 * generators are fully independent (the library has no hidden global state).
 */
#ifndef MYGPT_RNG_H
#define MYGPT_RNG_H

#include <stddef.h>
#include <stdint.h>

#include "mygpt/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* everything declared here is exported by libmygpt.so (lib/exports.txt) */
#pragma GCC visibility push(default)

#define MYGPT_MT_N 624

/* Which of PyTorch's CPU float32 kernels to imitate for uniform_ and the large
 * normal_ path. PyTorch picks one by CPU: AVX2 machines (the reference) use a
 * fused multiply-add and Cephes polynomials; ATEN_CPU_CAPABILITY=default uses
 * glibc's logf/sinf/cosf without fusion. The results of mygpt never depend on
 * the CPU it runs on, only on this setting. */
typedef enum mygpt_torch_cpu {
    MYGPT_TORCH_AVX2 = 0,   /* default: what torch 1.13 does on AVX2 CPUs */
    MYGPT_TORCH_SCALAR = 1  /* what torch does with ATEN_CPU_CAPABILITY=default */
} mygpt_torch_cpu;

typedef struct mygpt_rng {
    uint32_t mt[MYGPT_MT_N];   /* Mersenne Twister state                        */
    int left;                  /* draws left before the next twist (+1)         */
    int next;                  /* index of the next state word to temper        */
    uint64_t seed;             /* the full 64-bit seed (torch.initial_seed())   */
    int has_cached_normal;     /* small-path Box-Muller partner pending?        */
    double cached_normal;      /* the unscaled partner z                        */
    mygpt_torch_cpu torch_cpu; /* which of torch's float kernels to imitate     */
} mygpt_rng;

/* Starts a generator: every field set, torch_cpu = MYGPT_TORCH_AVX2, then mygpt_rng_seed(seed).
 * Use it (or `mygpt_rng rng = {0};`) before anything else touches a generator. */
void mygpt_rng_init(mygpt_rng *rng, uint64_t seed);

/* torch.manual_seed(seed) on a started generator: resets the state from the low 32
 * bits of `seed`, remembers all 64, clears the cached normal. Keeps torch_cpu (which
 * must have been set: by mygpt_rng_init or by zero-initialising the struct). */
void mygpt_rng_seed(mygpt_rng *rng, uint64_t seed);

/* Whether rng's state is one the generator can be in, as a whole: seeded and not drawn
 * from (left 1, next 0), or left + next = MYGPT_MT_N + 1 with left 1 .. MYGPT_MT_N (each
 * draw moves one from left to next; the twist starts them at MYGPT_MT_N and 0 before its
 * first word), a cached normal only when one is pending and finite, torch_cpu one of the
 * two, and words that are not all 0 (a fixed point of the twist: every draw 0). A state
 * read from a file is checked with this before it is drawn from: words that disagree
 * would have a draw read past the MYGPT_MT_N state words. MYGPT_EFORMAT naming what
 * disagrees. */
mygpt_status mygpt_rng_check(const mygpt_rng *rng, mygpt_error *err);

/* One 32-bit draw (PyTorch's generator->random()). */
uint32_t mygpt_rng_random(mygpt_rng *rng);

/* out[0..n) = the next n draws, as n calls of mygpt_rng_random give them (faster:
 * the words are tempered as vectors). */
void mygpt_rng_fill(mygpt_rng *rng, uint32_t *out, size_t n);

/* Two draws, the first in the high half (generator->random64()). */
uint64_t mygpt_rng_random64(mygpt_rng *rng);

/* Tensor.uniform_(from, to) on n contiguous float32 values (torch.rand is
 * uniform_(0, 1)). One draw per element. Fails (MYGPT_EINVAL) if from > to, either
 * bound is not finite, or to - from is past float's largest value, like PyTorch. */
mygpt_status mygpt_uniform_(mygpt_rng *rng, float *data, size_t n, double from, double to,
                            mygpt_error *err);

/* Tensor.normal_(mean, std) on n contiguous float32 values (torch.randn is
 * normal_(0, 1); nn.init.normal_ is the same). n >= 16 takes PyTorch's
 * vectorised path, n < 16 the double-precision Box-Muller path that shares a
 * cached partner value across calls. Fails if std < 0, std is not finite or mean is not
 * finite. */
mygpt_status mygpt_normal_(mygpt_rng *rng, float *data, size_t n, double mean, double std,
                           mygpt_error *err);

/* The normal_ of a non-contiguous tensor: every element takes the small
 * (double Box-Muller) path, in the order given, whatever n is. */
mygpt_status mygpt_normal_small_(mygpt_rng *rng, float *data, size_t n, double mean, double std,
                                 mygpt_error *err);

/* torch.randint(low, high, (n,)): n int64 values in [low, high). Ranges of
 * 2^32 or more use 64-bit draws. Fails (MYGPT_EINVAL) if low >= high. */
mygpt_status mygpt_randint(mygpt_rng *rng, int64_t *out, size_t n, int64_t low, int64_t high,
                           mygpt_error *err);

/* torch.randperm(n) as in torch 1.13: a permutation of 0..n-1 in out[0..n-1],
 * n - 1 draws. */
void mygpt_randperm(mygpt_rng *rng, int64_t *out, size_t n);

/* nn.Embedding(num, dim)'s initialiser: the (num, dim) weight ~ N(0, 1). */
mygpt_status mygpt_init_embedding(mygpt_rng *rng, float *weight, size_t num, size_t dim,
                                  mygpt_error *err);

/* nn.Linear(in, out, bias)'s initialiser: weight (out, in) ~ U(-bw, bw) as
 * kaiming_uniform_(a=sqrt(5)) computes bw, then, if bias is not NULL, bias
 * (out,) ~ U(-1/sqrt(in), 1/sqrt(in)). in == 0 gives bounds of 0. */
mygpt_status mygpt_init_linear(mygpt_rng *rng, float *weight, float *bias, size_t in, size_t out,
                               mygpt_error *err);

/* The weight bound of nn.Linear's default init, computed as PyTorch does. */
double mygpt_linear_weight_bound(size_t fan_in);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
