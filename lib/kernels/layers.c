/*
 * layers.c - the GPT's layers other than attention (attention.c) and the fast matmul
 * (matmul.c), forward and backward (see mygpt/layers.h).
 *
 * Parallelism: rows (b, t) are shared among OpenMP threads with a static schedule; each output element is
 * produced by one thread with a fixed summation order, so the bits never depend
 * on the thread count.
 */
#include "mygpt/layers.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>

#include "mygpt/rng.h"
#include "mygpt/tensor.h"
#include "base/parallel.h"
#include "kernels/sleef_rows.h"
#include "kernels/vecmath.h"
#include "base/base.h"
#include "base/simd.h"

/* out[b, t] = wte[ids[b, t]] (+ wpe[t]) */
static void embed_row(float *out, const int64_t *ids, const float *wte, const float *wpe, int T,
                      int C, int b, int t)
{
    // lesson: embed_row
    float *o = out + ((size_t)b * T + t) * C;                    // (C,)
    const float *tok = wte + (size_t)ids[(size_t)b * T + t] * C; // (C,)
    for (int i = 0; i < C; i++)
        o[i] = wpe ? tok[i] + wpe[(size_t)t * C + i] : tok[i];
    // end lesson: embed_row
}

mygpt_status mygpt_embedding_forward(float *out, const int64_t *ids, mygpt_embedding_tables tables, int B, int T,
                                     int C, mygpt_error *err)
{
    const float *wte = tables.wte, *wpe = tables.wpe;
    const int V = tables.V, max_pos = tables.max_pos;
    if (B < 1 || T < 1 || C < 1 || V < 1)
        return mygpt_fail(err, MYGPT_EINVAL, "embedding sizes must be at least 1 (B=%d T=%d C=%d V=%d)",
                          B, T, C, V);
    if (wpe && T > max_pos)
        return mygpt_fail(err, MYGPT_ERANGE, "input length T=%d exceeds max_seq_len=%d", T, max_pos);
    for (size_t i = 0; i < (size_t)B * T; i++)
        if (ids[i] < 0 || ids[i] >= V)
            return mygpt_fail(err, MYGPT_ERANGE, "token id %lld at (%zu, %zu) is outside [0, %d)",
                              (long long)ids[i], i / (size_t)T, i % (size_t)T, V);
    if ((size_t)B * T * C <= MYGPT_PARALLEL_MIN) {
        for (int b = 0; b < B; b++)
            for (int t = 0; t < T; t++)
                embed_row(out, ids, wte, wpe, T, C, b, t);
        return MYGPT_OK;
    }
#pragma omp parallel for collapse(2) schedule(static)
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++)
            embed_row(out, ids, wte, wpe, T, C, b, t);
    return MYGPT_OK;
}

/* dwte[ids[b,t]] += dout[b,t] and dwpe[t] += sum over b of dout[b,t]. A token that
 * appears twice gets two additions into one row, so threads split the channels, not the
 * positions: thread j owns channels [c0, c1) of every row and adds the positions in
 * (b, t) order, whatever the thread count. */
void mygpt_embedding_backward(float *dwte, float *dwpe, const float *dout, const int64_t *ids,
                              int B, int T, int C)
{
    const int chunk = 16; // channels per task: one cache line of floats
    const int ntasks = (C + chunk - 1) / chunk;
#pragma omp parallel for schedule(static) if ((size_t)B * T * C > MYGPT_PARALLEL_MIN)
    for (int task = 0; task < ntasks; task++) {
        const int c0 = task * chunk, c1 = c0 + chunk < C ? c0 + chunk : C;
        for (int b = 0; b < B; b++)
            for (int t = 0; t < T; t++) {
                const float *d = dout + ((size_t)b * T + t) * C;                  // (C,)
                float *w = dwte + (size_t)ids[(size_t)b * T + t] * C;            // (C,)
                float *p = dwpe ? dwpe + (size_t)t * C : NULL;                    // (C,)
                for (int c = c0; c < c1; c++) {
                    w[c] += d[c];
                    if (p)
                        p[c] += d[c];
                }
            }
    }
}

/* One row of LayerNorm: the tutorial's float32 code, (x - x.mean()) /
 * torch.sqrt(x.var(unbiased=False) + 1e-5) * gamma + beta. The statistics are
 * accumulated in double (PyTorch's var accumulates in double too) and rounded to float
 * where PyTorch rounds: this matters for ill-conditioned rows (C = 2, nearly equal
 * values), where a different rounding point is visible in the output. */
static MYGPT_IN_CLONES void layernorm_row(float *o, const float *x, const float *gamma, const float *beta, int C,
                                          float *mean_out, float *denom_out)
{
    // lesson: layernorm_row
    double sum = 0.0;
    for (int i = 0; i < C; i++)
        sum += x[i];
    const double mean = sum / C;
    double ss = 0.0;
    for (int i = 0; i < C; i++)
        ss += (x[i] - mean) * (x[i] - mean);
    const float mean_f = (float)mean;
    const float var_f = (float)(ss / C);      // biased variance
    const float denom = sqrtf(var_f + 1e-5f); // torch.sqrt(var + eps), in float32
    if (beta)
        for (int i = 0; i < C; i++)
            o[i] = (x[i] - mean_f) / denom * gamma[i] + beta[i];
    else // LayerNorm(bias=False): F.layer_norm(x, ..., weight, None)
        for (int i = 0; i < C; i++)
            o[i] = (x[i] - mean_f) / denom * gamma[i];
    // end lesson: layernorm_row
    if (mean_out) { // kept for the backward pass
        *mean_out = mean_f;
        *denom_out = denom;
    }
}

void mygpt_layernorm_forward(float *out, const float *inp, const float *gamma, const float *beta,
                             size_t N, int C)
{
    mygpt_layernorm_forward_train(out, NULL, NULL, inp, gamma, beta, N, C);
}

/* Rows [n0, n1) of mygpt_layernorm_forward_train, built per instruction set: the output
 * loop is a row's vector work (its two sums are one double chain each, in order, on every
 * set) */
MYGPT_CLONES static void layernorm_rows(float *out, float *mean, float *denom, const float *inp,
                                        const float *gamma, const float *beta, size_t n0, size_t n1, int C)
{
    for (size_t n = n0; n < n1; n++) // (C,) each
        layernorm_row(out + n * C, inp + n * C, gamma, beta, C, mean ? mean + n : NULL,
                      denom ? denom + n : NULL);
}

void mygpt_layernorm_forward_train(float *out, float *mean, float *denom, const float *inp,
                                   const float *gamma, const float *beta, size_t N, int C)
{
    if (N * (size_t)C <= MYGPT_PARALLEL_MIN) { // small work stays out of the OpenMP runtime
        layernorm_rows(out, mean, denom, inp, gamma, beta, 0, N, C);
        return;
    }
#pragma omp parallel
    {
        size_t n0, n1;
        mygpt_thread_run(N, &n0, &n1);
        layernorm_rows(out, mean, denom, inp, gamma, beta, n0, n1, C);
    }
}

/* ---- torch.nn.LayerNorm ----------------------------------------------------------- */

#define TORCH_LANES 8  /* floats in PyTorch's AVX2 vector: each lane keeps its own moments */
#define TORCH_CHUNK 16 /* vectors per Welford chunk (PyTorch's kChunkSize) */

/* Welford's moments of a run of values: how many, their mean, their squared deviations */
typedef struct moments {
    int64_t n;
    float mean, m2;
} moments;

/* a += b: two runs' moments merged (Chan et al.), in float, in PyTorch's order of operations */
static void moments_merge(moments *a, moments b)
{
    const int64_t n = a->n + b.n;
    const float c = n == 0 ? 0.0f : (float)b.n / (float)n;
    const float delta = b.mean - a->mean;
    a->mean += c * delta;
    a->m2 += b.m2 + delta * delta * c * (float)a->n;
    a->n = n;
}

/* ceil(log2(m)), at least 1: how many levels the pairwise merging of m chunks keeps */
static int merge_depth(int64_t m)
{
    int d = 1;
    while (m > 2 && ((int64_t)1 << d) < m)
        d++;
    return d;
}

/* A row's mean and biased variance as PyTorch's RowwiseMoments computes them: lane l of
 * each vector of 8 values feeds moments of its own, chunk by chunk of 16 vectors; the
 * chunks are merged pairwise like a binary counter (level j holds 2^j chunks); the values
 * past the last whole vector run one by one, and the 8 lanes are merged into them last. */
static void torch_row_moments(const float *x, int C, float *mean, float *var)
{
    const int64_t nvec = C / TORCH_LANES, chunks = (nvec + TORCH_CHUNK - 1) / TORCH_CHUNK;
    const int depth = merge_depth(chunks);
    moments level[64][TORCH_LANES] = {{{0}}};
    for (int64_t i = 0; i < chunks; i++) {
        const int64_t rows = nvec - i * TORCH_CHUNK < TORCH_CHUNK ? nvec - i * TORCH_CHUNK : TORCH_CHUNK;
        for (int l = 0; l < TORCH_LANES; l++) {
            moments chunk = {rows, 0.0f, 0.0f};
            for (int64_t j = 0; j < rows; j++) {
                const float v = x[(i * TORCH_CHUNK + j) * TORCH_LANES + l];
                const float delta = v - chunk.mean;
                chunk.mean += delta * (1.0f / (float)(j + 1));
                chunk.m2 += delta * (v - chunk.mean);
            }
            moments_merge(&level[0][l], chunk);
        }
        for (int64_t j = 1, carry = i + 1; j < depth && (carry & 1) == 0; j++, carry >>= 1)
            for (int l = 0; l < TORCH_LANES; l++) {
                moments_merge(&level[j][l], level[j - 1][l]);
                level[j - 1][l] = (moments){0, 0.0f, 0.0f};
            }
    }
    for (int j = 1; j < depth; j++)
        for (int l = 0; l < TORCH_LANES; l++)
            moments_merge(&level[0][l], level[j][l]);
    moments row = {0, 0.0f, 0.0f};
    for (int64_t i = nvec * TORCH_LANES; i < C; i++) {
        const float delta = x[i] - row.mean;
        row.n++;
        row.mean += delta / (float)row.n;
        row.m2 += delta * (x[i] - row.mean);
    }
    for (int l = 0; l < TORCH_LANES; l++)
        moments_merge(&row, (moments){nvec, level[0][l].mean, level[0][l].m2});
    *mean = row.mean;
    *var = row.m2 / (float)C;
}

void mygpt_layernorm_torch(float *out, const float *inp, const float *gamma, const float *beta, size_t N,
                           int C, float eps)
{
#pragma omp parallel for schedule(static) if (N * (size_t)C > MYGPT_PARALLEL_MIN)
    for (size_t n = 0; n < N; n++) {
        const float *x = inp + n * C; // (C,)
        float *o = out + n * C;       // (C,)
        float mean, var;
        torch_row_moments(x, C, &mean, &var);
        const float rstd = 1.0f / sqrtf(var + eps);
        const float shift = -rstd * mean;
        for (int i = 0; i < C; i++) // PyTorch's compiler fuses both multiply-adds
            o[i] = fmaf(fmaf(x[i], rstd, shift), gamma ? gamma[i] : 1.0f, beta ? beta[i] : 0.0f);
    }
}

/* dgamma's and dbeta's sums, COLS channels at a time: the rows in order for each channel
 * as one vector lane (the order of the sum is the channel's own, whatever the width) */
#define LN_BACKWARD_COLS 64

/* dx of rows [n0, n1) of mygpt_layernorm_backward, built per instruction set */
MYGPT_CLONES static void layernorm_backward_rows(float *dinp, const float *dout, mygpt_layernorm_saved saved, size_t n0,
                                                 size_t n1, int C)
{
    const float *inp = saved.inp, *gamma = saved.gamma, *mean = saved.mean, *denom = saved.denom;
    for (size_t n = n0; n < n1; n++) {
        const float *x = inp + n * C, *dy = dout + n * C; // (C,)
        float *dx = dinp + n * C;                         // (C,)
        const double m = mean[n], d = denom[n]; // read once: dx could alias them for all the compiler knows
        double g_sum = 0.0, gx_sum = 0.0;
        for (int i = 0; i < C; i++) {
            const double xhat = ((double)x[i] - m) / d;
            const double g = (double)dy[i] * gamma[i];
            g_sum += g;
            gx_sum += g * xhat;
        }
        const double g_mean = g_sum / C, gx_mean = gx_sum / C;
#pragma omp simd
        for (int i = 0; i < C; i++) {
            const double xhat = ((double)x[i] - m) / d;
            const double g = (double)dy[i] * gamma[i];
            dx[i] += (float)((g - g_mean - xhat * gx_mean) / d);
        }
    }
}

/* dgamma and dbeta of channels [i0, i1) of mygpt_layernorm_backward, built per instruction set */
MYGPT_CLONES static void layernorm_backward_params(float *dgamma, float *dbeta, const float *dout,
                                                   mygpt_layernorm_saved saved, size_t N, int C, int i0, int i1)
{
    const float *inp = saved.inp, *mean = saved.mean, *denom = saved.denom;
    for (int c0 = i0; c0 < i1; c0 += LN_BACKWARD_COLS) {
        const int nc = i1 - c0 < LN_BACKWARD_COLS ? i1 - c0 : LN_BACKWARD_COLS;
        double gs[LN_BACKWARD_COLS] = {0}, bs[LN_BACKWARD_COLS] = {0};
        for (size_t n = 0; n < N; n++) {
            const float *dy = dout + n * C + c0, *x = inp + n * C + c0;
            const double m = mean[n], d = denom[n];
#pragma omp simd
            for (int i = 0; i < nc; i++) {
                gs[i] += (double)dy[i] * (((double)x[i] - m) / d);
                bs[i] += dy[i];
            }
        }
        for (int i = 0; i < nc; i++) {
            dgamma[c0 + i] += (float)gs[i];
            if (dbeta) // NULL: a LayerNorm without a bias
                dbeta[c0 + i] += (float)bs[i];
        }
    }
}

/* With xhat = (x - mean) / denom and y = xhat * gamma + beta (per row of C):
 *   dgamma += sum over rows of dy * xhat,   dbeta += sum over rows of dy,
 *   dx += (g - mean(g) - xhat * mean(g * xhat)) / denom,   where g = dy * gamma.
 * The row means are summed in double. dx rows are independent (parallel over rows);
 * dgamma and dbeta sum over every row, so threads split the channels and each adds
 * the rows in order: the same bits for any thread count. */
void mygpt_layernorm_backward(float *dinp, float *dgamma, float *dbeta, const float *dout,
                              mygpt_layernorm_saved saved, size_t N, int C)
{
    const int par = N * (size_t)C > MYGPT_PARALLEL_MIN;
#pragma omp parallel if (par)
    {
        size_t n0, n1, i0, i1;
        mygpt_thread_run(N, &n0, &n1);
        layernorm_backward_rows(dinp, dout, saved, n0, n1, C);
#pragma omp barrier /* the rows all done before the channels' sums, as two regions were */
        mygpt_thread_run((size_t)C, &i0, &i1);
        layernorm_backward_params(dgamma, dbeta, dout, saved, N, C, (int)i0, (int)i1);
    }
}

/* (the public functions call a static clone set, so no ifunc resolver is exported) */
MYGPT_CLONES static void gelu_forward_run(float *out, const float *inp, size_t i0, size_t i1)
{
#pragma omp simd
    for (size_t i = i0; i < i1; i++)
        out[i] = mygpt_gelu(inp[i]); // x/2 (1 + erf(x / sqrt 2)), vecmath.h
}

void mygpt_gelu_forward(float *out, const float *inp, size_t n)
{
#pragma omp parallel if (n > MYGPT_PARALLEL_MIN)
    {
        size_t i0, i1;
        mygpt_thread_run(n, &i0, &i1);
        gelu_forward_run(out, inp, i0, i1);
    }
}

/* d/dx of x/2 (1 + erf(x / sqrt 2)) = (1 + erf(x / sqrt 2)) / 2 + x exp(-x^2 / 2) / sqrt(2 pi),
 * in float32 as PyTorch's kernel computes it (cdf + x * pdf, then times dout), with
 * vecmath.h's erf and exp so the loop vectorises */
MYGPT_CLONES static void gelu_backward_run(float *dinp, const float *inp, const float *dout, size_t i0, size_t i1)
{
#pragma omp simd
    for (size_t i = i0; i < i1; i++) {
        const float x = inp[i];
        const float cdf = 0.5f * (1.0f + mygpt_erff(x * 0.70710678118654752440f));
        const float pdf = 0.39894228040143267794f * mygpt_expf(x * x * -0.5f);
        dinp[i] += dout[i] * (cdf + x * pdf);
    }
}

void mygpt_gelu_backward(float *dinp, const float *inp, const float *dout, size_t n)
{
#pragma omp parallel if (n > MYGPT_PARALLEL_MIN)
    {
        size_t i0, i1;
        mygpt_thread_run(n, &i0, &i1);
        gelu_backward_run(dinp, inp, dout, i0, i1);
    }
}

/* ---- the tanh GELU ----------------------------------------------------------------- */

/* The book's constant: torch.sqrt(torch.tensor(2.0 / torch.pi)), a float32 square root */
static float gelu_tanh_k(void)
{
    return sqrtf((float)(2.0 / 3.14159265358979323846));
}

/* The tanh GELU over a run of n <= GELU_RUN values: with dout NULL, out = GELU(inp);
 * else the backward, out += d/dx given dout. (Built so that fmaf is an instruction.) */
#define GELU_RUN 512
MYGPT_CLONES static void gelu_tanh_run(float *out, const float *inp, const float *dout, size_t n, float K)
{
    float t[GELU_RUN];
#pragma omp simd
    for (size_t i = 0; i < n; i++) // u = K * (x + 0.044715 x^3), pow(x, 3) being x * x * x
        t[i] = K * (inp[i] + (inp[i] * inp[i] * inp[i]) * 0.044715f);
    mygpt_tanh_row(t, n); // t = tanh(u)
    if (!dout) {
#pragma omp simd
        for (size_t i = 0; i < n; i++)
            out[i] = (0.5f * inp[i]) * (1.0f + t[i]); // y = (0.5 x) * (1 + t)
        return;
    }
#pragma omp simd
    for (size_t i = 0; i < n; i++) {
        const float x = inp[i], dy = dout[i];
        const float dhalf = dy * (1.0f + t[i]);
        // tanh's backward, grad * (1 - t * t) with the 1 - t * t fused as PyTorch's AVX2 build has it
        const float du = (dy * (0.5f * x)) * fmaf(-t[i], t[i], 1.0f);
        const float ds = du * K;                                // u = K * s
        const float dpow = (ds * 0.044715f) * ((x * x) * 3.0f); // s = x + 0.044715 x^3
        out[i] += (ds + dpow) + dhalf * 0.5f;                   // autograd adds x's three in this order
    }
}

/* The tanh GELU over n values, a run of GELU_RUN at a time: with dout NULL, out =
 * GELU(inp); else the backward, out += d/dx given dout. */
static void gelu_tanh(float *out, const float *inp, const float *dout, size_t n)
{
    const float K = gelu_tanh_k();
    const size_t runs = (n + GELU_RUN - 1) / GELU_RUN;
#pragma omp parallel for schedule(static) if (n > MYGPT_PARALLEL_MIN)
    for (size_t r = 0; r < runs; r++) {
        const size_t i0 = r * GELU_RUN, m = n - i0 < GELU_RUN ? n - i0 : GELU_RUN;
        gelu_tanh_run(out + i0, inp + i0, dout ? dout + i0 : NULL, m, K);
    }
}

void mygpt_gelu_tanh_forward(float *out, const float *inp, size_t n)
{
    gelu_tanh(out, inp, NULL, n);
}

void mygpt_gelu_tanh_backward(float *dinp, const float *inp, const float *dout, size_t n)
{
    gelu_tanh(dinp, inp, dout, n);
}

/* ---- dropout --------------------------------------------------------------------- */

/* keep[j] = whether the 53 low bits of random64 number j (two words, the first high)
 * are below `below`. */
MYGPT_CLONES static void keep_below(uint8_t *keep, const uint32_t *words, size_t n, uint64_t below)
{
    const uint64_t mask53 = (UINT64_C(1) << 53) - 1;
    for (size_t j = 0; j < n; j++)
        keep[j] = ((((uint64_t)words[2 * j] << 32) | words[2 * j + 1]) & mask53) < below;
}

mygpt_status mygpt_dropout_mask(mygpt_rng *rng, uint8_t *keep, size_t n, double p, mygpt_error *err)
{
    if (!(p >= 0.0 && p < 1.0))
        return mygpt_fail(err, MYGPT_EINVAL, "dropout probability has to be in [0, 1), got %g", p);
    // bernoulli_(1 - p): a uniform double r * 2^-53 (r of 53 bits of a random64) below
    // q = 1 - p. The scaling is exact, so that is r < ceil(q * 2^53) in integers.
    const uint64_t below = (uint64_t)ceil((1.0 - p) * 0x1p53);
    enum { CHUNK = 512 };
    uint32_t words[2 * CHUNK];
    for (size_t i = 0; i < n; i += CHUNK) {
        const size_t len = n - i < CHUNK ? n - i : CHUNK;
        mygpt_rng_fill(rng, words, 2 * len);
        keep_below(keep + i, words, len, below);
    }
    return MYGPT_OK;
}

void mygpt_dropout_apply(float *out, const float *x, const uint8_t *keep, size_t n, double p)
{
    // lesson: dropout_apply
    const float scale = 1.0f / (float)(1.0 - p); // noise.div_(1 - p): 1 / 0.9f, or 0 / 0.9f
#pragma omp parallel for schedule(static) if (n > MYGPT_PARALLEL_MIN)
    for (size_t i = 0; i < n; i++)
        out[i] = x[i] * (keep[i] ? scale : 0.0f);
    // end lesson: dropout_apply
}

void mygpt_residual_forward(float *out, const float *x, const float *y, const uint8_t *keep, double p, size_t n)
{
    if (!keep) {
#pragma omp parallel for schedule(static) if (n > MYGPT_PARALLEL_MIN)
        for (size_t i = 0; i < n; i++)
            out[i] = x[i] + y[i];
        return;
    }
    const float scale = 1.0f / (float)(1.0 - p); // as mygpt_dropout_apply
#pragma omp parallel for schedule(static) if (n > MYGPT_PARALLEL_MIN)
    for (size_t i = 0; i < n; i++)
        out[i] = x[i] + y[i] * (keep[i] ? scale : 0.0f);
}

void mygpt_softmax_rows(float *x, size_t rows, int n)
{
    for (size_t r = 0; r < rows; r++) {
        float *row = x + r * (size_t)n;
        float maxv = -INFINITY;
        for (int i = 0; i < n; i++)
            if (row[i] > maxv)
                maxv = row[i];
        if (maxv == -INFINITY)
            continue;
        float sum = 0.0f;
        for (int i = 0; i < n; i++) {
            row[i] = expf(row[i] - maxv);
            sum += row[i];
        }
        for (int i = 0; i < n; i++)
            row[i] /= sum;
    }
}


/* ---- llama's layers ------------------------------------------------------------------ */

/* RMSNorm's scale of a row, r = 1 / sqrt(mean(x^2) + eps): x.pow(2).mean(-1) summed in
 * PyTorch's order (model.py's and the book's RMSNorm, bit for bit) */
static float rms_scale(const float *x, int C, float eps)
{
    return 1.0f / sqrtf(mygpt_mean_sq_torch(x, (size_t)C) + eps); // x * torch.rsqrt(mean + eps), then * weight
}

/* one row of RMSNorm */
static void rmsnorm_row(float *o, const float *x, const float *weight, int C, float eps)
{
    const float r = rms_scale(x, C, eps);
    for (int j = 0; j < C; j++)
        o[j] = (x[j] * r) * weight[j];
}

void mygpt_rmsnorm_forward(float *out, const float *inp, const float *weight, size_t N, int C, float eps)
{
#pragma omp parallel for schedule(static) if (N * (size_t)C > MYGPT_PARALLEL_MIN)
    for (size_t n = 0; n < N; n++) // (C,) each
        rmsnorm_row(out + n * C, inp + n * C, weight, C, eps);
}

/* one row of RMSNorm's backward: r recomputed as the forward has it */
static void rmsnorm_backward_row(float *dx, const float *dy, const float *x, const float *weight, int C, float eps)
{
    const float r = rms_scale(x, C, eps);
    double dot = 0.0;
    for (int j = 0; j < C; j++) // sum_j d(x * r)_j x_j: what r's gradient is made of
        dot += (double)(dy[j] * weight[j]) * x[j];
    // y = x r w, r = (mean(x^2) + eps)^-1/2: dx = r (dy w) - r^3 x sum(dy w x) / C
    const float k = (float)((double)r * r * r * dot / C);
    for (int j = 0; j < C; j++)
        dx[j] += r * (dy[j] * weight[j]) - k * x[j];
}

void mygpt_rmsnorm_backward(float *dinp, float *dweight, const float *dout, const float *inp, const float *weight,
                            size_t N, int C, float eps)
{
#pragma omp parallel for schedule(static) if (N * (size_t)C > MYGPT_PARALLEL_MIN)
    for (size_t n = 0; n < N; n++) // (C,) each
        rmsnorm_backward_row(dinp + n * C, dout + n * C, inp + n * C, weight, C, eps);
    if (!dweight)
        return;
    // dweight_j += sum_n dy_nj (x_nj r_n), the normalized x as the forward rounds it
    for (size_t n = 0; n < N; n++) {
        const float *x = inp + n * C, *dy = dout + n * C;
        const float r = rms_scale(x, C, eps);
        for (int j = 0; j < C; j++)
            dweight[j] += dy[j] * (x[j] * r);
    }
}

void mygpt_swiglu_forward(float *out, const float *a, const float *b, size_t n)
{
#pragma omp parallel for schedule(static) if (n > MYGPT_PARALLEL_MIN)
    for (size_t i = 0; i < n; i++) {
        float v = a[i];
        v *= 1.0f / (1.0f + expf(-v)); // silu(x) = x * sigmoid(x), as run.c computes it
        out[i] = v * b[i];
    }
}

void mygpt_swiglu_backward(float *da, float *db, const float *dout, const float *a, const float *b, size_t n)
{
#pragma omp parallel for schedule(static) if (n > MYGPT_PARALLEL_MIN)
    for (size_t i = 0; i < n; i++) {
        const float v = a[i], d = dout[i], s = 1.0f / (1.0f + expf(-v)); // sigmoid(a)
        // out = silu(a) b: d a = d b silu'(a), silu'(a) = s (1 + a (1 - s)); d b = d silu(a)
        da[i] = d * b[i] * (s * (1.0f + v * (1.0f - s)));
        db[i] = d * (v * s);
    }
}
