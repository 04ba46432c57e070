/* posenc.c - sinusoidal, ALiBi and RoPE position encodings (see mygpt/posenc.h). */
#include "mygpt/posenc.h"
#include "base/base.h"
#include "base/parallel.h"

#include <math.h>
#include <stdlib.h>

static mygpt_status check_even(const char *what, int n, mygpt_error *err)
{
    if (n < 2 || n % 2 != 0)
        return mygpt_fail(err, MYGPT_EINVAL, "%s must be even and at least 2, got %d", what, n);
    return MYGPT_OK;
}

mygpt_status mygpt_sinusoidal_encoding(float *pe, int block_size, int n_embd, mygpt_error *err)
{
    if (block_size < 1)
        return mygpt_fail(err, MYGPT_EINVAL, "block_size must be at least 1, got %d", block_size);
    mygpt_status st = check_even("n_embd", n_embd, err);
    if (st != MYGPT_OK)
        return st;
    // lesson: sinusoidal
    // inv_freq = exp(-log(10000) * i / n_embd), in float32 like the tensor code
    const float neg_log = (float)-log(10000.0);
    for (int i = 0; i < n_embd; i += 2) {
        const float inv_freq = expf(neg_log * (float)i / (float)n_embd);
        for (int p = 0; p < block_size; p++) {
            const float angle = (float)p * inv_freq;
            pe[(size_t)p * n_embd + i] = sinf(angle);     // even dims: sin
            pe[(size_t)p * n_embd + i + 1] = cosf(angle); // odd dims: cos
        }
    }
    // end lesson: sinusoidal
    return MYGPT_OK;
}

mygpt_status mygpt_alibi_slopes(float *slopes, int num_heads, mygpt_error *err)
{
    if (num_heads < 1)
        return mygpt_fail(err, MYGPT_EINVAL, "num_heads must be at least 1, got %d", num_heads);
    // lesson: alibi_slopes
    for (int h = 0; h < num_heads; h++) // Python: 2 ** (-8 * (i + 1) / num_heads), a double
        slopes[h] = (float)pow(2.0, -8.0 * (h + 1) / num_heads);
    // end lesson: alibi_slopes
    return MYGPT_OK;
}

mygpt_status mygpt_alibi_bias(float *bias, const float *slopes, int num_heads, int T,
                              mygpt_error *err)
{
    if (num_heads < 1 || T < 1)
        return mygpt_fail(err, MYGPT_EINVAL, "num_heads and T must be at least 1, got %d and %d",
                          num_heads, T);
    // lesson: alibi_bias
    for (int h = 0; h < num_heads; h++)
        for (int i = 0; i < T; i++)
            for (int j = 0; j < T; j++) // (-slope) * distance, so distance 0 gives -0.
                bias[((size_t)h * T + i) * T + j] = -slopes[h] * (float)abs(i - j);
    // end lesson: alibi_bias
    return MYGPT_OK;
}

mygpt_status mygpt_rope_inv_freq(float *inv_freq, int d_model, double base, mygpt_error *err)
{
    mygpt_status st = check_even("d_model", d_model, err);
    if (st != MYGPT_OK)
        return st;
    if (!(base > 0.0))
        return mygpt_fail(err, MYGPT_EINVAL, "base must be positive, got %g", base);
    // lesson: rope_inv_freq
    for (int i = 0; i < d_model / 2; i++) // 1.0 / (base ** (arange(0, d, 2).float() / d))
        inv_freq[i] = 1.0f / powf((float)base, (float)(2 * i) / (float)d_model);
    // end lesson: rope_inv_freq
    return MYGPT_OK;
}

/* math.pi (M_PI is not C11's) */
static const double PI = 3.141592653589793;

mygpt_status mygpt_rope_scale_llama3(float *inv_freq, int half, const mygpt_rope_scaling *s, mygpt_error *err)
{
    if (half < 1)
        return mygpt_fail(err, MYGPT_EINVAL, "d/2 must be at least 1, got %d", half);
    if (!(s->factor >= 1.0) || !(s->low_freq_factor > 0.0) || !(s->high_freq_factor > s->low_freq_factor) ||
        !(s->original_context > 0.0))
        return mygpt_fail(err, MYGPT_EINVAL, "RoPE scaling needs factor >= 1, 0 < low_freq_factor < "
                          "high_freq_factor and a positive context, got %g, %g, %g, %g", s->factor,
                          s->low_freq_factor, s->high_freq_factor, s->original_context);
    const double low_wavelen = s->original_context / s->low_freq_factor;   // 8192: slower pairs rescaled
    const double high_wavelen = s->original_context / s->high_freq_factor; // 2048: faster pairs kept
    // lesson: rope_scale_llama3
    for (int i = 0; i < half; i++) {
        const float f = inv_freq[i];
        const float wavelen = (1.0f / f) * (float)(2.0 * PI); // 2 * torch.pi / inv_freq
        const float slow = f / (float)s->factor;
        // where the wavelength sits between the two bounds: 0 at the slow end, 1 at the fast
        const float smooth = ((1.0f / wavelen) * (float)s->original_context - (float)s->low_freq_factor) /
                             (float)(s->high_freq_factor - s->low_freq_factor);
        if (wavelen > low_wavelen)
            inv_freq[i] = slow;
        else if (wavelen >= high_wavelen)
            inv_freq[i] = (1.0f - smooth) * slow + smooth * f;
    }
    // end lesson: rope_scale_llama3
    return MYGPT_OK;
}

mygpt_status mygpt_rope_cache(float *cos_cache, float *sin_cache, const float *inv_freq,
                              int seq_len, int half, mygpt_error *err)
{
    if (seq_len < 1 || half < 1)
        return mygpt_fail(err, MYGPT_EINVAL, "seq_len and d/2 must be at least 1, got %d and %d",
                          seq_len, half);
    // lesson: rope_cache
    for (int t = 0; t < seq_len; t++)
        for (int i = 0; i < half; i++) {
            const float f = (float)t * inv_freq[i]; // torch.outer(positions, inv_freq)
            cos_cache[(size_t)t * half + i] = cosf(f);
            sin_cache[(size_t)t * half + i] = sinf(f);
        }
    // end lesson: rope_cache
    return MYGPT_OK;
}

void mygpt_rope_apply(float *out, const float *x, const float *cos_cache, const float *sin_cache,
                      int rows, int T, int half)
{
    for (int r = 0; r < rows; r++) {
        const int t = r % T;
        const float *c = cos_cache + (size_t)t * half, *s = sin_cache + (size_t)t * half;
        const float *xr = x + (size_t)r * 2 * half;
        float *o = out + (size_t)r * 2 * half;
        // lesson: rope_rotation
        for (int i = 0; i < half; i++) {
            const float x1 = xr[2 * i], x2 = xr[2 * i + 1];
            o[2 * i] = x1 * c[i] - x2 * s[i];
            o[2 * i + 1] = x1 * s[i] + x2 * c[i];
        }
        // end lesson: rope_rotation
    }
}

/* mygpt_rope_heads's rotation, or its transpose (back 1: each pair turned by minus its angle) */
static void rope_heads_dir(float *x, size_t rows, int T, int t0, int heads, int head_size, int halves, int back)
{
    const int half = head_size / 2;
    const size_t width = (size_t)heads * head_size;
#pragma omp parallel for schedule(static) if (rows * width > MYGPT_PARALLEL_MIN)
    for (size_t r = 0; r < rows; r++) {
        const float pos = (float)(t0 + (int)(r % (size_t)T));
        float *row = x + r * width; // (heads, head_size)
        for (int i = 0; i < half; i++) {
            const float freq = 1.0f / powf(10000.0f, (float)(2 * i) / (float)head_size);
            const float val = pos * freq, fcr = cosf(val), fci = back ? -sinf(val) : sinf(val);
            // the pair's two channels: side by side, or half a head apart
            const int a = halves ? i : 2 * i, b = halves ? i + half : 2 * i + 1;
            for (int h = 0; h < heads; h++) {
                float *v = row + (size_t)h * head_size;
                const float v0 = v[a], v1 = v[b];
                v[a] = v0 * fcr - v1 * fci;
                v[b] = v0 * fci + v1 * fcr;
            }
        }
    }
}

void mygpt_rope_heads(float *x, size_t rows, int T, int t0, int heads, int head_size, int halves)
{
    rope_heads_dir(x, rows, T, t0, heads, head_size, halves, 0);
}

void mygpt_rope_heads_backward(float *dx, size_t rows, int T, int t0, int heads, int head_size, int halves)
{
    rope_heads_dir(dx, rows, T, t0, heads, head_size, halves, 1);
}
