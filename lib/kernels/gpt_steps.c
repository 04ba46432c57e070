/*
 * gpt_steps.c - the GPT's parts step by step, the book's chapter 4 (see mygpt/layers.h):
 * a row's mean and variance as PyTorch takes them, the book's LayerNorm op by op, and the
 * shortcut example's small network with its gradients.
 */
#include "mygpt/attention.h"
#include "mygpt/layers.h"
#include "mygpt/rng.h"
#include "mygpt/tensor.h"
#include "base/base.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

float mygpt_mean_torch(const float *x, size_t n)
{
    return mygpt_sum_torch(x, n) / (float)n; // at::sum(...).div_(n)
}

float mygpt_var_torch(const float *x, size_t n, int correction)
{
    // lesson: var_torch
    double mean = 0.0, m2 = 0.0; // WelfordOps<float, double>: mean and squared deviations
    for (size_t i = 0; i < n; i++) {
        const double delta = (double)x[i] - mean;
        mean += delta / (double)(i + 1);
        m2 += delta * ((double)x[i] - mean);
    }
    return (float)(m2 / (double)((long long)n - correction));
    // end lesson: var_torch
}

void mygpt_book_layernorm(float *out, const float *x, const float *scale, const float *shift, size_t rows, int n)
{
    const float eps = 1e-5f; // self.eps = 1e-5, added to a float32 tensor
    for (size_t r = 0; r < rows; r++) {
        const float *xr = x + r * (size_t)n; // (n,)
        float *o = out + r * (size_t)n;
        // lesson: book_layernorm
        const float mean = mygpt_mean_torch(xr, (size_t)n);
        const float denom = sqrtf(mygpt_var_torch(xr, (size_t)n, 0) + eps); // torch.sqrt(var + eps)
        for (int i = 0; i < n; i++) {
            const float norm_x = (xr[i] - mean) / denom;
            o[i] = scale[i] * norm_x + shift[i];
        }
        // end lesson: book_layernorm
    }
}

mygpt_status mygpt_shortcut_net_init(mygpt_shortcut_net *net, const int *sizes, int n_layers, int use_shortcut,
                                     struct mygpt_rng *rng, mygpt_error *err)
{
    if (n_layers < 1 || n_layers > MYGPT_SHORTCUT_MAX_LAYERS)
        return mygpt_fail(err, MYGPT_EINVAL, "the network has %d layers, not 1 to %d", n_layers,
                          MYGPT_SHORTCUT_MAX_LAYERS);
    for (int l = 0; l <= n_layers; l++)
        if (sizes[l] < 1 || sizes[l] > MYGPT_SHORTCUT_MAX_WIDTH)
            return mygpt_fail(err, MYGPT_EINVAL, "layer size %d is not 1 to %d", sizes[l], MYGPT_SHORTCUT_MAX_WIDTH);
    memset(net, 0, sizeof *net);
    net->n_layers = n_layers;
    net->use_shortcut = use_shortcut;
    memcpy(net->sizes, sizes, (size_t)(n_layers + 1) * sizeof *sizes);
    for (int l = 0; l < n_layers; l++) // nn.Sequential(nn.Linear(sizes[l], sizes[l + 1]), GELU())
        MYGPT_TRY(mygpt_init_linear(rng, net->weight[l], net->bias[l], (size_t)sizes[l], (size_t)sizes[l + 1], err));
    return MYGPT_OK;
}

mygpt_status mygpt_shortcut_net_grads(mygpt_shortcut_net *net, const float *x, float *loss, mygpt_error *err)
{
    enum { W = MYGPT_SHORTCUT_MAX_WIDTH };
    const int L = net->n_layers;
    float xs[MYGPT_SHORTCUT_MAX_LAYERS + 1][W]; // each layer's input, then the output
    float zs[MYGPT_SHORTCUT_MAX_LAYERS][W];     // each layer's Linear output, before GELU
    memcpy(xs[0], x, (size_t)net->sizes[0] * sizeof *x);
    // lesson: shortcut_forward
    for (int l = 0; l < L; l++) {
        const int in = net->sizes[l], out = net->sizes[l + 1];
        float y[W];
        MYGPT_TRY(mygpt_matmul(zs[l], xs[l], net->weight[l], net->bias[l], 1, in, out, err));
        mygpt_gelu_tanh_forward(y, zs[l], (size_t)out);
        const int shortcut = net->use_shortcut && in == out; // x.shape == layer_output.shape
        for (int i = 0; i < out; i++)
            xs[l + 1][i] = shortcut ? xs[l][i] + y[i] : y[i];
    }
    // end lesson: shortcut_forward
    // loss = nn.MSELoss()(output, torch.tensor([[0.]])), and its gradient 2 (output - 0) / n
    const int n = net->sizes[L];
    float sq[W], g[W];
    for (int i = 0; i < n; i++)
        sq[i] = (xs[L][i] - 0.0f) * (xs[L][i] - 0.0f);
    *loss = mygpt_mean_torch(sq, (size_t)n);
    const float norm = (float)(2.0 / n);
    for (int i = 0; i < n; i++)
        g[i] = norm * (xs[L][i] - 0.0f) * 1.0f;
    for (int l = L - 1; l >= 0; l--) { // g: the gradient of layer l's output x_{l+1}
        const int in = net->sizes[l], out = net->sizes[l + 1];
        float dz[W] = {0}, dx[W] = {0};
        mygpt_gelu_tanh_backward(dz, zs[l], g, (size_t)out);
        memset(net->dweight[l], 0, sizeof net->dweight[l]);
        memset(net->dbias[l], 0, sizeof net->dbias[l]);
        MYGPT_TRY(mygpt_matmul_backward((mygpt_linear_grads){dx, net->dweight[l], net->dbias[l]}, dz, xs[l],
                                        net->weight[l], 1, in, out, err));
        if (net->use_shortcut && in == out) // x = x + layer_output: both paths carry g back
            for (int i = 0; i < in; i++)
                dx[i] += g[i];
        memcpy(g, dx, (size_t)in * sizeof *g);
    }
    return MYGPT_OK;
}

mygpt_status mygpt_book_feedforward(float *out, const float *x, const mygpt_book_ff *ff, size_t N, mygpt_error *err)
{
    if (ff->C < 1 || ff->C > INT_MAX / 4)
        return mygpt_fail(err, MYGPT_EINVAL, "a feed-forward of C=%d: C must be from 1 to %d", ff->C, INT_MAX / 4);
    const int C = ff->C, H = 4 * ff->C;
    size_t n;
    if (mygpt_mul_overflows(N, (size_t)H, &n))
        return mygpt_fail(err, MYGPT_EOVERFLOW, "a hidden layer of %zu x %d is too large", N, H);
    float *hidden = mygpt_float_block(n); // (N, 4C)
    if (!hidden)
        return mygpt_fail(err, MYGPT_ENOMEM, "out of memory for a hidden layer of %zu x %d", N, H);
    // lesson: feedforward
    mygpt_status st = mygpt_matmul(hidden, x, ff->w1, ff->b1, N, C, H, err);
    if (st == MYGPT_OK) {
        mygpt_gelu_tanh_forward(hidden, hidden, n);
        st = mygpt_matmul(out, hidden, ff->w2, ff->b2, N, H, C, err);
    }
    // end lesson: feedforward
    free(hidden);
    return st;
}

/* x += dropout(y) over n values: the shortcut after a branch (keeps drawn from rng) */
static mygpt_status add_dropped(float *x, const float *y, size_t n, double p, struct mygpt_rng *rng,
                                mygpt_error *err)
{
    uint8_t *keep = NULL;
    if (rng && p > 0) {
        keep = malloc(n);
        if (!keep)
            return mygpt_fail(err, MYGPT_ENOMEM, "out of memory for a dropout mask of %zu", n);
        const mygpt_status st = mygpt_dropout_mask(rng, keep, n, p, err);
        if (st != MYGPT_OK) {
            free(keep);
            return st;
        }
    }
    mygpt_residual_forward(x, x, y, keep, p, n); // x = x + drop_shortcut(y)
    free(keep);
    return MYGPT_OK;
}

mygpt_status mygpt_book_block_forward(float *out, const float *x, const mygpt_book_block *blk, int B, int T,
                                      struct mygpt_rng *rng, mygpt_error *err)
{
    const int C = blk->ff.C;
    if (B < 1 || T < 1 || C < 1 || blk->att.d_in != C || blk->att.d_out != C)
        return mygpt_fail(err, MYGPT_EINVAL, "a block of B=%d, T=%d: sizes must be positive, and the attention's "
                          "d_in and d_out (%d, %d) the feed-forward's C (%d)", B, T, blk->att.d_in, blk->att.d_out, C);
    const size_t N = (size_t)B * T;
    float *normed = mygpt_float_block(N * C), *branch = mygpt_float_block(N * C); // (B, T, C) each
    mygpt_mha_steps s = {0};
    mygpt_status st = normed && branch ? MYGPT_OK : mygpt_fail(err, MYGPT_ENOMEM, "out of memory for a block");
    if (st == MYGPT_OK)
        st = mygpt_mha_steps_init(&s, &blk->att, B, T, err);
    // lesson: book_block
    if (st == MYGPT_OK) { // x = x + drop_shortcut(att(norm1(x)))
        memcpy(out, x, N * C * sizeof *out);
        mygpt_book_layernorm(normed, x, blk->norm1_scale, blk->norm1_shift, N, C);
        st = mygpt_mha_forward(&s, &blk->att, normed, rng, err);
    }
    if (st == MYGPT_OK)
        st = add_dropped(out, s.out, N * C, blk->drop_shortcut, rng, err);
    if (st == MYGPT_OK) { // x = x + drop_shortcut(ff(norm2(x)))
        mygpt_book_layernorm(normed, out, blk->norm2_scale, blk->norm2_shift, N, C);
        st = mygpt_book_feedforward(branch, normed, &blk->ff, N, err);
    }
    if (st == MYGPT_OK)
        st = add_dropped(out, branch, N * C, blk->drop_shortcut, rng, err);
    // end lesson: book_block
    mygpt_mha_steps_free(&s);
    free(normed);
    free(branch);
    return st;
}
