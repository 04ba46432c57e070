/*
 * init.c - the default initialisers of nn.Embedding and nn.Linear
 * (pytorch-parity.md section 5). Construction order is draw order, so a model
 * built by calling these in its __init__ order reproduces PyTorch's parameters.
 */
#include <math.h>

#include "mygpt/rng.h"
#include "base/base.h"

mygpt_status mygpt_init_embedding(mygpt_rng *rng, float *weight, size_t num, size_t dim,
                                  mygpt_error *err)
{
    size_t n;
    if (mygpt_mul_overflows(num, dim, &n))
        return mygpt_fail(err, MYGPT_EOVERFLOW, "embedding size %zu x %zu overflows", num, dim);
    return mygpt_normal_(rng, weight, n, 0.0, 1.0, err);
}

/* kaiming_uniform_(w, a=sqrt(5)): every step in double, exactly as torch.nn.init. */
double mygpt_linear_weight_bound(size_t fan_in)
{
    if (fan_in == 0)
        return 0.0;
    const double a = sqrt(5.0);
    const double gain = sqrt(2.0 / (1.0 + a * a));
    const double std = gain / sqrt((double)fan_in);
    return sqrt(3.0) * std;
}

mygpt_status mygpt_init_linear(mygpt_rng *rng, float *weight, float *bias, size_t in, size_t out,
                               mygpt_error *err)
{
    size_t n;
    if (mygpt_mul_overflows(in, out, &n))
        return mygpt_fail(err, MYGPT_EOVERFLOW, "linear size %zu x %zu overflows", out, in);
    const double bw = mygpt_linear_weight_bound(in);
    mygpt_status st = mygpt_uniform_(rng, weight, n, -bw, bw, err);
    if (st != MYGPT_OK || bias == NULL)
        return st;
    const double bb = in == 0 ? 0.0 : 1.0 / sqrt((double)in);
    return mygpt_uniform_(rng, bias, out, -bb, bb, err);
}
