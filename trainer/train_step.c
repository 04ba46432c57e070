/*
 * train_step.c - one training step and the validation loss (see train_step.h).
 */
#include "train_step.h"

#include <math.h>
#include <stdio.h>

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
            dp_abort(team, program, "averaging the gradients failed (MPI)");
        *shown = dp_sum(team, (double)loss * rows / (double)B); // each rank's mean, weighted by its rows
    }
    // a batch whose every target is ignore_index (-100) has the loss 0 / 0 = NaN and a zero
    // gradient: PyTorch's loop still steps (AdamW decays the weights and moves them by its
    // moments), and so does this
    int all_ignored = 1;
    for (size_t i = 0; i < (size_t)rows * (size_t)T && all_ignored; i++)
        all_ignored = y[at + i] == MYGPT_IGNORE_INDEX;
    if (!isfinite(*shown) && !(all_ignored && team->size == 1)) { // the same on every rank: all stop here
        err->code = MYGPT_ERANGE;
        snprintf(err->message, sizeof err->message,
                 "step %ld: the loss is %g: training stopped before its optimizer step (nothing saved)", step, *shown);
        return MYGPT_ERANGE;
    }
    if (grad_norm)
        *grad_norm = -1.0f;
    if (clip_norm > 0.0) // clip_grad_norm_: every rank holds the same averaged gradient, so the same norm
        st = mygpt_trainer_clip_grad_norm(tr, clip_norm, grad_norm, err);
    if (st == MYGPT_OK)
        st = mygpt_trainer_step(tr, opt, err); // opt.step() over what trains (all without a mask)
    if (st == MYGPT_OK && check_replicas && !dp_same_everywhere(team, g->params_memory, g->num_parameters))
        dp_abort(team, program, "the ranks' parameters differ after a step");
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
