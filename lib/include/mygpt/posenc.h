/*
 * mygpt/posenc.h - the three ways of telling attention where a token is, beside the
 * learned position embedding of the GPT (documents 001 and 002):
 *
 *   sinusoidal  PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i+1) = cos(...)
 *   ALiBi       a per-head bias -m_h |i - j| added to the attention scores
 *   RoPE        rotate each (even, odd) pair of q and k by pos * theta_i
 *
 * Each function follows the float32 operations of the documents' PyTorch code in
 * the same order (so e.g. the sinusoidal table's row 0 is exactly 0, 1, 0, 1, ...),
 * and takes PyTorch's sin, cos, exp and pow as its AVX2 kernels compute a tensor:
 * SLEEF's functions eight values at a time (docs/pytorch-parity.md, section 13), so
 * the tables are PyTorch's bit for bit (tests/golden/posenc.txt). llama2.c's
 * interleaved rotation alone takes the C library's, as run.c does. On an x86-64 CPU
 * without AVX2 the C library's functions run, as PyTorch's default kernels call them.
 */
#ifndef MYGPT_POSENC_H
#define MYGPT_POSENC_H

#include <stddef.h>

#include "mygpt/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* everything declared here is exported by libmygpt.so (lib/exports.txt) */
#pragma GCC visibility push(default)

/* pe (block_size, n_embd): document 001's sinusoidal_encoding(block_size, n_embd).
 * MYGPT_EINVAL for an odd n_embd or block_size under 1, MYGPT_ENOMEM when its scratch
 * tables (1.5 x pe) cannot be had. */
mygpt_status mygpt_sinusoidal_encoding(float *pe, int block_size, int n_embd, mygpt_error *err);

/* slopes (num_heads): 2^(-8 (h + 1) / num_heads), document 002's ALiBi slopes. */
mygpt_status mygpt_alibi_slopes(float *slopes, int num_heads, mygpt_error *err);

/* bias (num_heads, T, T): -slope_h * |i - j| (so the diagonal is -0.). */
mygpt_status mygpt_alibi_bias(float *bias, const float *slopes, int num_heads, int T,
                              mygpt_error *err);

/* inv_freq (d_model / 2): 1 / base^(2i / d_model). d_model must be even, base positive and
 * finite (else MYGPT_EINVAL). */
mygpt_status mygpt_rope_inv_freq(float *inv_freq, int d_model, double base, mygpt_error *err);

/* Llama 3.1's rescaling of RoPE's frequencies for a longer context (its rope_scaling, as
 * LLMs-from-scratch's converting-llama2-to-llama3.ipynb writes it): a pair whose wavelength
 * 2 pi / freq is over original_context / low_freq_factor turns factor times slower; one under
 * original_context / high_freq_factor is kept; one between moves smoothly from the one to the
 * other. Llama 3.1: factor 8, low 1, high 4, original context 8192; Llama 3.2: factor 32. */
typedef struct mygpt_rope_scaling {
    double factor;
    double low_freq_factor;
    double high_freq_factor;
    double original_context;
} mygpt_rope_scaling;

/* Rescales inv_freq (half values, from mygpt_rope_inv_freq) in place by s, in float32 as
 * PyTorch's tensor operations compute it. MYGPT_EINVAL for half < 1, a factor under 1, or
 * high_freq_factor not above low_freq_factor (both and the context positive, all finite). */
mygpt_status mygpt_rope_scale_llama3(float *inv_freq, int half, const mygpt_rope_scaling *s, mygpt_error *err);

/* cos, sin (seq_len, d_model / 2): cos and sin of outer(positions, inv_freq). */
mygpt_status mygpt_rope_cache(float *cos_cache, float *sin_cache, const float *inv_freq,
                              int seq_len, int half, mygpt_error *err);

/* apply_rotary_emb: for rows of length d = 2 * half, the row at position t becomes
 *   out[2i] = x[2i] cos[t,i] - x[2i+1] sin[t,i],  out[2i+1] = x[2i] sin[t,i] + x[2i+1] cos[t,i].
 * x, out (rows, d) with row r at position r % T; cos, sin (>= T, half). out may be x. With
 * T < 1 nothing is written. */
void mygpt_rope_apply(float *out, const float *x, const float *cos_cache, const float *sin_cache,
                      int rows, int T, int half);

/* Rotary positions on every head of x (rows, heads * head_size) in place, row r at
 * position t0 + r % T: channel pair i of a head turned by the angle pos * freq_i,
 * freq_i = 1 / 10000^(2i / head_size). halves 0: llama2.c's interleaved pairs (2i, 2i + 1),
 * computed as its run.c does (1.0f / powf(10000.0f, 2i / (float)head_size), the C library's
 * cosf and sinf of (float)pos * freq_i); 1: Hugging Face's halves (i, i + head_size / 2),
 * computed as LLMs-from-scratch's Llama notebook does in PyTorch (its precompute_rope_params
 * and compute_rope) (mygpt/config.h's mygpt_rope_style). head_size must be even; with T < 1,
 * heads < 1 or head_size < 2 nothing is turned, nor with halves and t0 < 0 (the notebook's
 * table has no position before 0). context:
 * the positions of the notebook's cos and sin table (its context_length), whose last of
 * PyTorch's vectors of 8 is padded with zeros, which matters when context * head_size is
 * not a multiple of 8; 0 takes the table as endless; the interleaved pairs ignore it. */
void mygpt_rope_heads(float *x, size_t rows, int T, int t0, int heads, int head_size, int halves, int context);

/* mygpt_rope_heads's gradient in place: dx (rows, heads * head_size), d of the turned
 * values in, d of the values before out; the rotation's transpose (each pair turned back
 * by its angle), same arguments. */
void mygpt_rope_heads_backward(float *dx, size_t rows, int T, int t0, int heads, int head_size, int halves,
                               int context);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
