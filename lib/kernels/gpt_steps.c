/*
 * gpt_steps.c - the GPT's parts step by step, the book's chapter 4 (see mygpt/layers.h):
 * a row's mean and variance as PyTorch takes them, the book's LayerNorm op by op, and the
 * shortcut example's small network with its gradients.
 */
#include "mygpt/attention.h"
#include "mygpt/layers.h"
#include "mygpt/rng.h"
#include "base/base.h"

#include <math.h>
#include <string.h>

float mygpt_mean_torch(const float *x, size_t n)
{
    return mygpt_sum_torch(x, n) / (float)n; // at::sum(...).div_(n)
}

float mygpt_var_torch(const float *x, size_t n, int correction)
{
    double mean = 0.0, m2 = 0.0; // WelfordOps<float, double>: mean and squared deviations
    for (size_t i = 0; i < n; i++) {
        const double delta = (double)x[i] - mean;
        mean += delta / (double)(i + 1);
        m2 += delta * ((double)x[i] - mean);
    }
    return (float)(m2 / (double)((long long)n - correction));
}

void mygpt_book_layernorm(float *out, const float *x, const float *scale, const float *shift, size_t rows, int n)
{
    const float eps = 1e-5f; // self.eps = 1e-5, added to a float32 tensor
    for (size_t r = 0; r < rows; r++) {
        const float *xr = x + r * (size_t)n; // (n,)
        float *o = out + r * (size_t)n;
        const float mean = mygpt_mean_torch(xr, (size_t)n);
        const float denom = sqrtf(mygpt_var_torch(xr, (size_t)n, 0) + eps); // torch.sqrt(var + eps)
        for (int i = 0; i < n; i++) {
            const float norm_x = (xr[i] - mean) / denom;
            o[i] = scale[i] * norm_x + shift[i];
        }
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

void mygpt_shortcut_net_grads(mygpt_shortcut_net *net, const float *x, float *loss)
{
    enum { W = MYGPT_SHORTCUT_MAX_WIDTH };
    const int L = net->n_layers;
    float xs[MYGPT_SHORTCUT_MAX_LAYERS + 1][W]; // each layer's input, then the output
    float zs[MYGPT_SHORTCUT_MAX_LAYERS][W];     // each layer's Linear output, before GELU
    memcpy(xs[0], x, (size_t)net->sizes[0] * sizeof *x);
    for (int l = 0; l < L; l++) {
        const int in = net->sizes[l], out = net->sizes[l + 1];
        float y[W];
        mygpt_matmul_naive(zs[l], xs[l], net->weight[l], net->bias[l], 1, in, out);
        mygpt_gelu_tanh_forward(y, zs[l], (size_t)out);
        const int shortcut = net->use_shortcut && in == out; // x.shape == layer_output.shape
        for (int i = 0; i < out; i++)
            xs[l + 1][i] = shortcut ? xs[l][i] + y[i] : y[i];
    }
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
        mygpt_matmul_backward_naive((mygpt_linear_grads){dx, net->dweight[l], net->dbias[l]}, dz, xs[l],
                                    net->weight[l], 1, in, out);
        if (net->use_shortcut && in == out) // x = x + layer_output: both paths carry g back
            for (int i = 0; i < in; i++)
                dx[i] += g[i];
        memcpy(g, dx, (size_t)in * sizeof *g);
    }
}
