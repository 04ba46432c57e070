/*
 * optim.c - torch.optim.SGD and torch.optim.AdamW (PyTorch 1.13, the default
 * single-tensor path), bit for bit. PyTorch's CPU kernels for add(alpha=), addcmul and
 * addcdiv are compiled with FMA contraction, so where they compute a + alpha * b the
 * result is one fused multiply-add; the formulas below say exactly where. f32(x) is a
 * Python float (double) rounded to float32, as a Scalar becomes when it meets a float
 * tensor. Every element is independent: the loops are parallel and give the same bits
 * for any thread count.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mygpt/train.h"
#include "base/base.h"
#include "base/parallel.h"
#include "base/simd.h" /* MYGPT_CLONES: fmaf as the vfmadd instruction (same bits), not a libm call */

void mygpt_sgd_init(mygpt_optimizer *opt, double lr)
{
    memset(opt, 0, sizeof *opt);
    opt->kind = MYGPT_SGD;
    opt->lr = lr;
}

void mygpt_adamw_init(mygpt_optimizer *opt, double lr)
{
    memset(opt, 0, sizeof *opt);
    opt->kind = MYGPT_ADAMW;
    opt->lr = lr;
    opt->beta1 = 0.9;
    opt->beta2 = 0.999;
    opt->eps = 1e-8;
    opt->weight_decay = 1e-2;
}

void mygpt_optimizer_free(mygpt_optimizer *opt)
{
    if (!opt)
        return;
    free(opt->buf);
    free(opt->buf2);
    opt->buf = opt->buf2 = NULL;
}

static mygpt_status check(const mygpt_optimizer *o, mygpt_error *err)
{
    if (!(o->lr >= 0.0))
        return mygpt_fail(err, MYGPT_EINVAL, "Invalid learning rate: %g", o->lr);
    if (!(o->weight_decay >= 0.0))
        return mygpt_fail(err, MYGPT_EINVAL, "Invalid weight_decay value: %g", o->weight_decay);
    if (o->kind == MYGPT_SGD) {
        if (!(o->momentum >= 0.0))
            return mygpt_fail(err, MYGPT_EINVAL, "Invalid momentum value: %g", o->momentum);
        if (o->nesterov && (o->momentum <= 0.0 || o->dampening != 0.0))
            return mygpt_fail(err, MYGPT_EINVAL, "%s", "Nesterov momentum requires a momentum and zero dampening");
        return MYGPT_OK;
    }
    if (o->kind != MYGPT_ADAMW)
        return mygpt_fail(err, MYGPT_EINVAL, "unknown optimizer kind %d", (int)o->kind);
    if (!(o->eps >= 0.0))
        return mygpt_fail(err, MYGPT_EINVAL, "Invalid epsilon value: %g", o->eps);
    if (!(o->beta1 >= 0.0 && o->beta1 < 1.0))
        return mygpt_fail(err, MYGPT_EINVAL, "Invalid beta parameter at index 0: %g", o->beta1);
    if (!(o->beta2 >= 0.0 && o->beta2 < 1.0))
        return mygpt_fail(err, MYGPT_EINVAL, "Invalid beta parameter at index 1: %g", o->beta2);
    return MYGPT_OK;
}

/* SGD (torch/optim/sgd.py, _single_tensor_sgd), per element:
 *   g = fma(p, f32(wd), g)                        if wd != 0   (d_p.add(p, alpha=wd))
 *   buf = g                                       first step   (torch.clone(d_p))
 *   buf = fma(g, f32(1 - dampening), buf * f32(momentum))      later steps
 *   g = nesterov ? fma(buf, f32(momentum), g) : buf           if momentum != 0
 *   p = fma(g, f32(-lr), p)                                    (p.add_(d_p, alpha=-lr)) */
/* Both steps return whether a value they wrote is not finite (NaN, an infinity): a check
 * on values already in registers, where a pass of its own would read the whole state again.
 * Each thread runs its run of the elements through the step's clone (base/simd.h). */
typedef struct sgd_factors {
    float wd, mom, one_minus_damp, neg_lr;
    int first, use_mom, nesterov, use_wd;
} sgd_factors;

/* SGD on elements [i0, i1) (built per instruction set); whether a value is not finite */
MYGPT_CLONES static int sgd_run(const sgd_factors *f, float *p, const float *grads, float *buf, size_t i0, size_t i1)
{
    const float wd = f->wd, mom = f->mom, one_minus_damp = f->one_minus_damp, neg_lr = f->neg_lr;
    const int first = f->first, use_mom = f->use_mom, nesterov = f->nesterov, use_wd = f->use_wd;
    int bad = 0;
    for (size_t i = i0; i < i1; i++) {
        // lesson: sgd
        float g = grads[i];
        if (use_wd)
            g = fmaf(p[i], wd, g);
        if (use_mom) {
            buf[i] = first ? g : fmaf(g, one_minus_damp, buf[i] * mom);
            g = nesterov ? fmaf(buf[i], mom, g) : buf[i];
        }
        p[i] = fmaf(g, neg_lr, p[i]);
        // end lesson: sgd
        bad |= !(fabsf(p[i]) <= FLT_MAX) | (use_mom && !(fabsf(buf[i]) <= FLT_MAX));
    }
    return bad;
}

/* One SGD step over n elements, each thread its run; whether a value is not finite */
static int sgd_step(const mygpt_optimizer *o, double weight_decay, float *p, const float *grads, float *buf, size_t n)
{
    const sgd_factors f = {(float)weight_decay, (float)o->momentum, (float)(1.0 - o->dampening), (float)-o->lr,
                           o->step == 0, o->momentum != 0.0, o->nesterov, weight_decay != 0.0};
    int bad = 0;
#pragma omp parallel reduction(| : bad) if (n > MYGPT_STREAM_MIN)
    {
        size_t i0, i1;
        mygpt_thread_run(n, &i0, &i1);
        bad |= sgd_run(&f, p, grads, buf, i0, i1);
    }
    return bad;
}

/* AdamW (torch/optim/adamw.py, _single_tensor_adamw), with step t after += 1:
 *   p = p * f32(1 - lr * wd)
 *   m = fma(g, f32(1 - beta1), m * f32(beta1))
 *   v = fma(f32(1 - beta2) * g, g, v * f32(beta2))
 *   denom = sqrt(v) / f32(sqrt(1 - beta2^t)) + f32(eps)
 *   p = p + (f32(-lr / (1 - beta1^t)) * m) / denom
 * (bias corrections in double, as Python computes them). */
typedef struct adamw_factors {
    float decay, b1, one_minus_b1, b2, one_minus_b2, bc2_sqrt, eps, neg_step;
} adamw_factors;

/* AdamW on elements [i0, i1) (built per instruction set); whether a value is not finite */
MYGPT_CLONES static int adamw_run(const adamw_factors *f, float *p, const float *grads, float *m, float *v, size_t i0,
                                  size_t i1)
{
    const float decay = f->decay, b1 = f->b1, one_minus_b1 = f->one_minus_b1, b2 = f->b2;
    const float one_minus_b2 = f->one_minus_b2, bc2_sqrt = f->bc2_sqrt, eps = f->eps, neg_step = f->neg_step;
    int bad = 0;
    for (size_t i = i0; i < i1; i++) {
        // lesson: adamw
        const float g = grads[i];
        p[i] = p[i] * decay;
        m[i] = fmaf(g, one_minus_b1, m[i] * b1);
        v[i] = fmaf(one_minus_b2 * g, g, v[i] * b2);
        const float denom = sqrtf(v[i]) / bc2_sqrt + eps;
        p[i] = p[i] + (neg_step * m[i]) / denom;
        // end lesson: adamw
        bad |= !(fabsf(p[i]) <= FLT_MAX) | !(fabsf(m[i]) <= FLT_MAX) | !(fabsf(v[i]) <= FLT_MAX);
    }
    return bad;
}

/* One AdamW step over n elements, each thread its run; whether a value is not finite */
static int adamw_step(const mygpt_optimizer *o, double weight_decay, float *p, const float *grads, float *m, float *v,
                      size_t n)
{
    const double t = (double)o->step; // already incremented
    const double bc1 = 1.0 - pow(o->beta1, t), bc2 = 1.0 - pow(o->beta2, t);
    const adamw_factors f = {(float)(1.0 - o->lr * weight_decay),
                             (float)o->beta1, (float)(1.0 - o->beta1), (float)o->beta2, (float)(1.0 - o->beta2),
                             (float)sqrt(bc2), (float)o->eps, (float)(-(o->lr / bc1))};
    int bad = 0;
#pragma omp parallel reduction(| : bad) if (n > MYGPT_STREAM_MIN)
    {
        size_t i0, i1;
        mygpt_thread_run(n, &i0, &i1);
        bad |= adamw_run(&f, p, grads, m, v, i0, i1);
    }
    return bad;
}

mygpt_status mygpt_optimizer_step(mygpt_optimizer *o, float *params, const float *grads, size_t n,
                                  mygpt_error *err)
{
    const size_t start = 0;
    return mygpt_optimizer_step_ranges(o, params, grads, &start, &n, 1, err);
}

mygpt_status mygpt_optimizer_step_ranges(mygpt_optimizer *o, float *params, const float *grads, const size_t *start,
                                         const size_t *len, int count, mygpt_error *err)
{
    return mygpt_optimizer_step_groups(o, params, grads, start, len, NULL, count, err);
}

mygpt_status mygpt_optimizer_step_groups(mygpt_optimizer *o, float *params, const float *grads, const size_t *start,
                                         const size_t *len, const uint8_t *decays, int count, mygpt_error *err)
{
    mygpt_status st = check(o, err);
    if (st != MYGPT_OK)
        return st;
    if (count < 0)
        return mygpt_fail(err, MYGPT_EINVAL, "%d ranges of parameters", count);
    size_t n = 0; // the parameters it updates: its state holds one float (two for AdamW) each
    for (int k = 0; k < count; k++) {
        if (len[k] > SIZE_MAX - n || len[k] > SIZE_MAX / sizeof(float) ||
            start[k] > SIZE_MAX / sizeof(float) - len[k])
            return mygpt_fail(err, MYGPT_EOVERFLOW, "%s", "the ranges of parameters overflow");
        n += len[k];
    }
    if (o->step > 0 && n != o->n)
        return mygpt_fail(err, MYGPT_EINVAL, "the optimizer holds %zu parameters, not %zu", o->n, n);
    const int needs_buf = o->kind == MYGPT_ADAMW || o->momentum != 0.0;
    if (needs_buf && !o->buf) {
        o->buf = mygpt_float_block(n ? n : 1); // AdamW: exp_avg = zeros_like(p)
        if (o->kind == MYGPT_ADAMW)
            o->buf2 = mygpt_float_block(n ? n : 1);
        if (!o->buf || (o->kind == MYGPT_ADAMW && !o->buf2)) {
            mygpt_optimizer_free(o);
            return mygpt_fail(err, MYGPT_ENOMEM, "out of memory for the optimizer's state (%zu floats)", n);
        }
        // Zeros written, not calloc's: a page calloc leaves to be read first maps the
        // shared zero page, and the step's write then copies it and stops every thread
        // to flush the old mapping (much of the first step at GPT-2 small: bench/results/design-notes.md).
        mygpt_fill_floats(o->buf, NULL, n);
        if (o->buf2)
            mygpt_fill_floats(o->buf2, NULL, n);
    }
    o->n = n;
    if (o->kind == MYGPT_ADAMW)
        o->step++; // AdamW counts the step before using it, SGD after
    size_t at = 0; // range k's state follows range k - 1's
    o->nonfinite = 0;
    for (int k = 0; k < count; at += len[k], k++) {
        float *p = params + start[k];
        const float *g = grads + start[k];
        const double wd = !decays || decays[k] ? o->weight_decay : 0.0; // its group's weight_decay
        if (o->kind == MYGPT_SGD)
            o->nonfinite |= sgd_step(o, wd, p, g, o->buf ? o->buf + at : NULL, len[k]);
        else
            o->nonfinite |= adamw_step(o, wd, p, g, o->buf + at, o->buf2 + at, len[k]);
    }
    if (o->kind == MYGPT_SGD)
        o->step++;
    return MYGPT_OK;
}
