/*
 * sleef_rows.h - private: SLEEF's functions over rows of floats as PyTorch 1.13's AVX2
 * kernels call them (Debian's libsleef). The loss's and sampling's softmax (loss.c,
 * sample.c) take expf and logf in the lane order of ATen's vectorised log_softmax and
 * softmax: lane l takes elements l, l + 8, ...; the last n % 8 go to the first lanes; the
 * lanes are combined as ((l0 + l4) + (l2 + l6)) + ((l1 + l5) + (l3 + l7)). The position
 * encodings (posenc.c) take torch.sin, torch.cos, torch.exp and `base ** tensor` over
 * a contiguous tensor: eight values a vector from the tensor's start. Which set of
 * SLEEF's functions runs is cpu.h's choice for the loss family, made once: the functions
 * below ask it themselves, and the loss's and the softmax's own rows index their tables
 * with it (the _avx2 functions run only there).
 */
#ifndef MYGPT_SLEEF_ROWS_H
#define MYGPT_SLEEF_ROWS_H

#include <stddef.h>

#include "base/simd.h"

/* out[l] = expf(in[l]) for 8 values, as PyTorch's kernel computes them (with AVX2:
 * SLEEF's 8-lane function, else its scalar one). */
void mygpt_exp8(float *out, const float *in);

/* x[i] = tanhf(x[i]) for n values, as PyTorch's tanh computes them (with AVX2: vml's map
 * over SLEEF's 8-lane function; else its scalar one). SLEEF's deterministic functions
 * give the same bits at every width, so on an AVX-512 CPU its 16-lane one runs. */
void mygpt_tanh_row(float *x, size_t n);

/* logf(x) as PyTorch's kernel computes it. */
float mygpt_log1f(float x);

/* s[i] = sinf(x[i]) and c[i] = cosf(x[i]) for n values, as torch.sin and torch.cos compute
 * a contiguous tensor: ATen's vml map gives SLEEF's 8-lane functions eight values at a
 * time from x[0], the last n % 8 in a vector padded with zeros. Those functions reduce
 * the 8 angles together: by Cody and Waite's steps when every |x| of the 8 is under 125,
 * else each by Payne and Hanek's, so an angle's last bit can depend on the 7 beside it.
 * s or c may be x. (On an x86-64 CPU without AVX2: the C library's sinf and cosf, as
 * PyTorch's default kernels.) */
void mygpt_sincos_row(float *s, float *c, const float *x, size_t n);

/* out[i] = expf(x[i]) for n values, as torch.exp computes a contiguous tensor (SLEEF's
 * 8-lane function; on an x86-64 CPU without AVX2 the C library's expf, as PyTorch's default
 * kernels).
 * out may be x. */
void mygpt_exp_map_row(float *out, const float *x, size_t n);

/* out[i] = base^x[i] for n values, as PyTorch's pow kernel computes `base ** tensor` for a
 * contiguous tensor: SLEEF's 8-lane powf on the first n - n % 16 values (its loop takes two
 * vectors a step), the C library's powf on the rest (its scalar loop). out may be x. */
void mygpt_pow_row(float *out, float base, const float *x, size_t n);

/* out[l] = base^x[l] for 8 values that are the elements at[l] of a row of n, each as
 * mygpt_pow_row computes that element (SLEEF's powf before n - n % 16, the C library's
 * from there): for a caller that needs a few elements of a row it never holds whole. */
void mygpt_pow_at8(float *out, float base, const float *x, const size_t *at, size_t n);

/* The sum of exp(x - maxv) over a row of n in PyTorch's lane order (rows under 8 are
 * summed in order); e (n) receives the exps. */
float mygpt_exp_sum_row(float *e, const float *x, size_t n, float maxv);

#if defined(MYGPT_X86_KERNELS)
#include <immintrin.h>
/* sleef.h declares its 256-bit functions only when the whole file is compiled for AVX;
 * here only some functions are, so their prototypes (sleef.h's) are repeated, marked
 * AVX2 as they are (clang refuses to pass a __m256 to a function declared without). */
MYGPT_AVX2 extern __m256 Sleef_expf8_u10avx2(__m256);
MYGPT_AVX2 extern __m256 Sleef_logf8_u10avx2(__m256);
MYGPT_AVX2 extern __m256 Sleef_tanhf8_u10avx2(__m256);
MYGPT_AVX2 extern __m256 Sleef_sinf8_u10avx2(__m256);
MYGPT_AVX2 extern __m256 Sleef_cosf8_u10avx2(__m256);
MYGPT_AVX2 extern __m256 Sleef_powf8_u10avx2(__m256, __m256);

/* lanes 0..r-1 on, the rest off (r <= 8) */
MYGPT_AVX2 static inline __m256i mygpt_first_lanes(int r)
{
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(r), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* logf of 8 values with SLEEF's AVX2 function */
MYGPT_AVX2 void mygpt_log8_avx2(float *out, const float *in);

/* The row's max (V >= 8) exactly as the scalar loop `m = x[i] > m ? x[i] : m` finds it. */
MYGPT_AVX2 float mygpt_row_max_avx2(const float *x, int V);

/* mygpt_exp_sum_row for n >= 8, 8 floats a step in registers, with mx = maxv in every
 * lane; e may be NULL. The same bits. */
MYGPT_AVX2 float mygpt_exp_sum_avx2(float *e, const float *x, int n, __m256 mx);
#endif

#if defined(MYGPT_NEON_KERNELS)
/* The row's max (V >= 8) exactly as the scalar loop `m = x[i] > m ? x[i] : m` finds it. */
float mygpt_row_max_neon(const float *x, int V);

/* mygpt_exp_sum_row for n >= 8 with SLEEF's AdvSIMD expf, in registers; e may be NULL.
 * The same bits. */
float mygpt_exp_sum_neon(float *e, const float *x, int n, float maxv);
#endif

#endif
