/* posenc.c - sinusoidal, ALiBi and RoPE position encodings (see mygpt/posenc.h). */
#include "mygpt/posenc.h"
#include "base/base.h"
#include "base/parallel.h"
#include "kernels/sleef_rows.h"

#include <math.h>
#include <stdint.h>
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
    const size_t half = (size_t)n_embd / 2, cells = (size_t)block_size * half;
    float *scratch = malloc((half + 3 * cells) * sizeof(float));
    if (!scratch)
        return mygpt_fail(err, MYGPT_ENOMEM, "no memory for a %d x %d sinusoidal table", block_size, n_embd);
    float *inv_freq = scratch, *angles = inv_freq + half;   // (C/2,), (T, C/2)
    float *sin_t = angles + cells, *cos_t = sin_t + cells; // (T, C/2) each
    // lesson: sinusoidal
    // the tensor code's steps, each over a whole tensor in float32 with PyTorch's functions
    const float neg_log = (float)-log(10000.0);
    for (size_t k = 0; k < half; k++) // i = arange(0, n_embd, 2): -log(10000) * i / n_embd
        inv_freq[k] = neg_log * (float)(2 * k) / (float)n_embd;
    mygpt_exp_map_row(inv_freq, inv_freq, half); // inv_freq = torch.exp(...)    (C/2,)
    for (int p = 0; p < block_size; p++)         // angles = pos * inv_freq       (T, C/2)
        for (size_t k = 0; k < half; k++)
            angles[(size_t)p * half + k] = (float)p * inv_freq[k];
    mygpt_sincos_row(sin_t, cos_t, angles, cells); // torch.sin(angles), torch.cos(angles)
    for (size_t c = 0; c < cells; c++) {
        pe[2 * c] = sin_t[c];     // pe[:, 0::2]: even dims get sin
        pe[2 * c + 1] = cos_t[c]; // pe[:, 1::2]: odd dims get cos
    }
    // end lesson: sinusoidal
    free(scratch);
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
    if (!(base > 0.0 && isfinite(base)))
        return mygpt_fail(err, MYGPT_EINVAL, "base must be positive and finite, got %g", base);
    // lesson: rope_inv_freq
    const int half = d_model / 2;
    for (int i = 0; i < half; i++) // arange(0, d, 2).float() / d
        inv_freq[i] = (float)(2 * i) / (float)d_model;
    mygpt_pow_row(inv_freq, (float)base, inv_freq, (size_t)half); // base ** (...), PyTorch's pow
    for (int i = 0; i < half; i++)                                 // 1.0 / (...)
        inv_freq[i] = 1.0f / inv_freq[i];
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
        !(s->original_context > 0.0) || !isfinite(s->factor) || !isfinite(s->high_freq_factor) ||
        !isfinite(s->original_context))
        return mygpt_fail(err, MYGPT_EINVAL, "RoPE scaling needs a finite factor >= 1, 0 < low_freq_factor < "
                          "high_freq_factor and a positive context, all finite, got %g, %g, %g, %g", s->factor,
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
    const size_t cells = (size_t)seq_len * half;
    for (int t = 0; t < seq_len; t++) // freqs = torch.outer(positions, inv_freq), kept in cos_cache
        for (int i = 0; i < half; i++)
            cos_cache[(size_t)t * half + i] = (float)t * inv_freq[i];
    mygpt_sincos_row(sin_cache, cos_cache, cos_cache, cells); // freqs.sin(), freqs.cos()
    // end lesson: rope_cache
    return MYGPT_OK;
}

void mygpt_rope_apply(float *out, const float *x, const float *cos_cache, const float *sin_cache,
                      int rows, int T, int half)
{
    if (T < 1)
        return; // no position to take (the header says so)
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

/* The notebook's cos and sin tables (precompute_rope_params): (context, head_size), row t
 * position t's angles t * inv_freq twice (torch.cat([angles, angles])), inv_freq =
 * 1 / 10000 ** (arange(0, head_size, 2) / head_size) by PyTorch's pow kernel. Flattened,
 * the table has `entries` values (context * head_size), or is taken as endless (SIZE_MAX). */
typedef struct notebook_table {
    int head_size;
    size_t entries;
} notebook_table;

/* cos and sin of the table's m <= 8 entries from the flattened index idx, as torch.cos and
 * torch.sin compute the whole table: eight entries a vector from its start, the last vector
 * padded with zeros (mygpt_sincos_row), so each entry's vector of 8 is computed whole. */
static void notebook_entries(float *c, float *s, const notebook_table *tb, size_t idx, int m)
{
    const size_t hs = (size_t)tb->head_size, half = hs / 2;
    // entries past the table's end are the padding's zeros, unless these are past it too
    const size_t end = idx < tb->entries ? tb->entries : SIZE_MAX;
    for (size_t g = idx - idx % 8; g < idx + (size_t)m; g += 8) {
        size_t pair[8];
        float e[8], power[8], angle[8], gs[8], gc[8];
        for (int l = 0; l < 8; l++) {
            pair[l] = (g + l) % hs % half;
            e[l] = (float)(2 * pair[l]) / (float)hs; // arange(0, head_size, 2) / head_size
        }
        mygpt_pow_at8(power, 10000.0f, e, pair, half); // 10000 ** (...)
        for (int l = 0; l < 8; l++) // position * inv_freq
            angle[l] = g + l < end ? (float)((g + l) / hs) * (1.0f / power[l]) : 0.0f;
        mygpt_sincos_row(gs, gc, angle, 8);
        for (int l = 0; l < 8; l++)
            if (g + l >= idx && g + l < idx + (size_t)m) {
                c[g + l - idx] = gc[l];
                s[g + l - idx] = gs[l];
            }
    }
}

/* Hugging Face's halves, as the notebook's compute_rope: x * cos + cat(-x2, x1) * sin, each
 * channel with its own entry of the tables (channel i's and channel i + half's can differ in
 * the last bit); back 1: the transpose. row (heads, head_size) at position pos. */
static void rope_halves_row(float *row, size_t pos, int heads, const notebook_table *tb, int back)
{
    const int half = tb->head_size / 2;
    const size_t first = pos * (size_t)tb->head_size; // the row's entries in the flattened tables
    for (int i0 = 0; i0 < half; i0 += 8) {
        const int m = half - i0 < 8 ? half - i0 : 8;
        float ca[8], sa[8], cb[8], sb[8]; // channels i (a) and i + half (b)
        notebook_entries(ca, sa, tb, first + (size_t)i0, m);
        notebook_entries(cb, sb, tb, first + (size_t)(half + i0), m);
        for (int h = 0; h < heads; h++) {
            float *v = row + (size_t)h * tb->head_size + i0;
            for (int l = 0; l < m; l++) {
                const float v0 = v[l], v1 = v[l + half];
                if (!back) {
                    v[l] = v0 * ca[l] - v1 * sa[l];        // x1 cos - x2 sin
                    v[l + half] = v1 * cb[l] + v0 * sb[l]; // x2 cos + x1 sin
                } else {
                    v[l] = v0 * ca[l] + v1 * sb[l];
                    v[l + half] = v1 * cb[l] - v0 * sa[l];
                }
            }
        }
    }
}

/* mygpt_rope_heads's rotation, or its transpose (back 1: each pair turned by minus its angle) */
static void rope_heads_dir(float *x, size_t rows, int T, int t0, int heads, int head_size, int halves, int context,
                           int back)
{
    const int half = head_size / 2;
    if (T < 1 || half < 1 || heads < 1 || (halves && t0 < 0))
        return; // no position to take (the notebook's table starts at 0) or no pair to turn (the header says so)
    const size_t width = (size_t)heads * head_size;
    const notebook_table tb = {head_size, context > 0 ? (size_t)context * head_size : SIZE_MAX};
#pragma omp parallel for schedule(static) if (rows * width > MYGPT_PARALLEL_MIN)
    for (size_t r = 0; r < rows; r++) {
        const long long t = (long long)t0 + (long long)(r % (size_t)T); // past INT_MAX too
        float *row = x + r * width; // (heads, head_size)
        if (halves) {
            rope_halves_row(row, (size_t)t, heads, &tb, back);
            continue;
        }
        // llama2.c's run.c: neighbours paired, its frequencies and the C library's cosf, sinf
        const float pos = (float)t;
        for (int i = 0; i < half; i++) {
            const float freq = 1.0f / powf(10000.0f, (float)(2 * i) / (float)head_size);
            const float val = pos * freq, fcr = cosf(val), fci = back ? -sinf(val) : sinf(val);
            for (int h = 0; h < heads; h++) {
                float *v = row + (size_t)h * head_size;
                const float v0 = v[2 * i], v1 = v[2 * i + 1];
                v[2 * i] = v0 * fcr - v1 * fci;
                v[2 * i + 1] = v0 * fci + v1 * fcr;
            }
        }
    }
}

void mygpt_rope_heads(float *x, size_t rows, int T, int t0, int heads, int head_size, int halves, int context)
{
    rope_heads_dir(x, rows, T, t0, heads, head_size, halves, context, 0);
}

void mygpt_rope_heads_backward(float *dx, size_t rows, int T, int t0, int heads, int head_size, int halves,
                               int context)
{
    rope_heads_dir(dx, rows, T, t0, heads, head_size, halves, context, 1);
}
