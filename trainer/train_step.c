/*
 * train_step.c - one training step and the validation loss (see train_step.h).
 */
#include "train_step.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mygpt/print.h"
#include "mygpt/tensor.h"

/* How every stop for a number that is not finite begins, after its step: what
 * train_diverged knows it by */
#define DIVERGED "the training diverged ("

/* MYGPT_ERANGE: "step N: the training diverged (NAME is|holds VALUE ...) and stops: ..."; updated
 * says whether the step's update was made */
static mygpt_status diverged(mygpt_error *err, long step, const char *name, double value, int updated)
{
    char shown[64];
    err->code = MYGPT_ERANGE;
    snprintf(err->message, sizeof err->message,
             "step %ld: " DIVERGED "%s %s %s %s the step's update) and stops: nothing more is saved, and what the "
             "run saved before stays as it was", step, name, updated ? "holds" : "is",
             mygpt_py_fixed_str(shown, sizeof shown, value, 0), updated ? "after" : "before");
    return MYGPT_ERANGE;
}

int train_diverged(const mygpt_error *err)
{
    return err->code == MYGPT_ERANGE && strstr(err->message, ": " DIVERGED) != NULL;
}

mygpt_status train_check_finite(const mygpt_trainer *tr, const mygpt_optimizer *opt, long step, mygpt_error *err)
{
    if (!opt->nonfinite) // the step's own check of every value it wrote; the names are looked up only then
        return MYGPT_OK;
    const mygpt_gpt *g = tr->model;
    for (int j = 0; j < mygpt_state_dict_len(&g->config); j++) {
        if (!mygpt_trainer_is_trainable(tr, j)) // a frozen tensor is what was loaded, and checked then
            continue;
        mygpt_state_entry e;
        mygpt_state_dict_entry(&g->config, &g->params, j, &e);
        const size_t at = mygpt_first_nonfinite(e.data, e.numel);
        if (at < e.numel)
            return diverged(err, step, e.name, e.data[at], 1);
    }
    // the optimizer's state too: AdamW's exp_avg_sq overflows first (a gradient of 1e20
    // squared), and then the weights stop moving, finite
    const float *bufs[2] = {opt->buf, opt->buf2};
    const char *names[2] = {opt->kind == MYGPT_ADAMW ? "AdamW's exp_avg" : "SGD's momentum_buffer",
                            "AdamW's exp_avg_sq"};
    for (int k = 0; k < 2; k++) {
        const size_t at = bufs[k] ? mygpt_first_nonfinite(bufs[k], opt->n) : opt->n;
        if (at < opt->n)
            return diverged(err, step, names[k], bufs[k][at], 1);
    }
    return MYGPT_OK;
}

mygpt_status train_eval_check(long step, const double losses[2], mygpt_error *err)
{
    static const char *const names[2] = {"the training loss", "the validation loss"};
    for (int k = 0; k < 2; k++)
        if (!isfinite(losses[k]))
            return diverged(err, step, names[k], losses[k], 1);
    return MYGPT_OK;
}

mygpt_status dp_train_step(const dp_team *team, mygpt_trainer *tr, mygpt_optimizer *opt, const int64_t *x,
                           const int64_t *y, int B, int T, long step, int check_replicas, const char *program,
                           double *shown, mygpt_error *err)
{
    return dp_train_step_clipped(team, tr, opt, x, y, B, T, step, check_replicas, program, 0.0, shown, NULL, err);
}

mygpt_status dp_train_step_clipped(const dp_team *team, mygpt_trainer *tr, mygpt_optimizer *opt, const int64_t *x,
                                   const int64_t *y, int B, int T, long step, int check_replicas,
                                   const char *program, double clip_norm, double *shown, float *grad_norm,
                                   mygpt_error *err)
{
    mygpt_gpt *g = tr->model;
    int first, rows; // this rank's rows of the global batch
    dp_share(team, B, &first, &rows);
    const size_t at = (size_t)first * (size_t)T;
    float loss;
    mygpt_status st = mygpt_trainer_forward(tr, x + at, y + at, rows, T, &loss, err);
    if (st == MYGPT_OK)
        st = mygpt_trainer_zero_grad(tr, err);
    if (st == MYGPT_OK)
        st = mygpt_trainer_backward(tr, err);
    if (st != MYGPT_OK)
        return st;
    *shown = loss;
    if (team->size > 1) { // the hook: the mean gradient of the global batch, on every rank
        if (dp_average_gradients(team, tr->grads_memory, g->num_parameters, rows, B))
            dp_abort(team, program, 1, "averaging the gradients failed (MPI)");
        *shown = dp_sum(team, (double)loss * rows / (double)B); // each rank's mean, weighted by its rows
    }
    // a batch whose every target is ignore_index (-100) has the loss 0 / 0 = NaN and a zero
    // gradient: PyTorch's loop still steps (AdamW decays the weights and moves them by its
    // moments), and so does this
    int all_ignored = 1;
    for (size_t i = 0; i < (size_t)rows * (size_t)T && all_ignored; i++)
        all_ignored = y[at + i] == MYGPT_IGNORE_INDEX;
    if (!isfinite(*shown) && !(all_ignored && team->size == 1)) // the same on every rank: all stop here
        return diverged(err, step, "the loss", *shown, 0);
    if (grad_norm)
        *grad_norm = -1.0f;
    if (clip_norm > 0.0) // clip_grad_norm_: every rank holds the same averaged gradient, so the same norm
        st = mygpt_trainer_clip_grad_norm(tr, clip_norm, grad_norm, err);
    if (st == MYGPT_OK)
        st = mygpt_trainer_step(tr, opt, err); // opt.step() over what trains (all without a mask)
    if (st == MYGPT_OK) // before anything may save them: a model or a state is never a NaN one
        st = train_check_finite(tr, opt, step, err);
    if (st == MYGPT_OK && check_replicas && !dp_same_everywhere(team, g->params_memory, g->num_parameters))
        dp_abort(team, program, 1, "the ranks' parameters differ after a step");
    return st;
}

mygpt_status dp_val_loss(const dp_team *team, mygpt_gpt *g, mygpt_dataloader *val, mygpt_rng *rng, int64_t *x,
                         int64_t *y, double *out, mygpt_error *err)
{
    mygpt_status st = mygpt_dataloader_epoch(val, rng, 0, err); // iter(val_loader)
    double sum = 0.0; // Python adds loss.item() values: doubles
    for (size_t b = (size_t)team->rank; b < val->num_batches && st == MYGPT_OK; b += (size_t)team->size) {
        float loss;
        const int rows = (int)mygpt_dataloader_batch_rows(val, b);
        st = mygpt_dataloader_batch(val, b, x, y, err);
        if (st == MYGPT_OK)
            st = mygpt_gpt_loss(g, x, y, rows, (int)val->max_length, &loss, err);
        if (st == MYGPT_OK)
            sum += loss;
    }
    if (team->size > 1) // every rank gets here (an error aborts the job instead)
        sum = dp_sum(team, sum);
    *out = sum / (double)val->num_batches;
    return st;
}
