/*
 * train_step.h - one training step and the validation loss as the course's loop takes
 * them (tools/reference_train.py), for a team of data-parallel ranks or a team of one:
 * what `mygpt train` and the chapters' training (chapters/src/verdict.c) share.
 */
#ifndef MYGPT_TRAIN_STEP_H
#define MYGPT_TRAIN_STEP_H

#include "data_parallel.h"
#include "mygpt/data.h"
#include "mygpt/train.h"

/* loss = F.cross_entropy(model(x), y); opt.zero_grad(); loss.backward(); opt.step() for
 * the global batch x, y (B rows of T): this rank takes its rows (dp_share), the team's
 * gradients are averaged before the step (weighted by rows), and with check_replicas
 * the ranks' parameters are compared after it. *shown: the global batch's loss; a loss
 * that is not finite stops there, before the step, with MYGPT_ERANGE naming step, except
 * on a team of one for a batch whose every target is -100 (the loss 0 / 0, a zero
 * gradient: PyTorch steps, so this does); after the step, train_check_finite. The step
 * honours the trainer's trainable mask (mygpt_trainer_step). A
 * failure of the team itself (MPI) ends the job with program's name (dp_abort); the
 * library's errors are returned. */
mygpt_status dp_train_step(const dp_team *team, mygpt_trainer *tr, mygpt_optimizer *opt, const int64_t *x,
                           const int64_t *y, int B, int T, long step, int check_replicas, const char *program,
                           double *shown, mygpt_error *err);

/* The same step with the book's appendix-D clipping: clip_norm > 0 clips the (global,
 * averaged) gradient by its norm before the optimizer's step, as
 * torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=clip_norm) after
 * loss.backward() (mygpt_trainer_clip_grad_norm); *grad_norm (or NULL) gets the norm
 * before clipping, or -1 when nothing was clipped. The learning rate is opt->lr: a
 * schedule sets it before the step (opt->lr = mygpt_lr_at(&schedule, step)). */
mygpt_status dp_train_step_clipped(const dp_team *team, mygpt_trainer *tr, mygpt_optimizer *opt, const int64_t *x,
                                   const int64_t *y, int B, int T, long step, int check_replicas,
                                   const char *program, double clip_norm, double *shown, float *grad_norm,
                                   mygpt_error *err);

/* After step `step` (from 0): every parameter that trains and the optimizer's state
 * (exp_avg and exp_avg_sq, or the momentum buffer) are finite, or MYGPT_ERANGE naming the
 * step and the first tensor that is not ("step 7: the training diverged (... holds nan
 * after the step's update) ..."). Every loop checks this after its update and before
 * anything may save the model or its state, so a NaN or an infinity is never saved. */
mygpt_status train_check_finite(const mygpt_trainer *tr, const mygpt_optimizer *opt, long step, mygpt_error *err);

/* An evaluation after step `step` (from 0) of a loop whose every target counts (no -100:
 * mygpt train, the classifier): its training and validation losses finite, or
 * MYGPT_ERANGE as train_check_finite's. Finite weights can still compute NaN logits (an
 * update of 1e35), and such a model is not saved either. */
mygpt_status train_eval_check(long step, const double losses[2], mygpt_error *err);

/* Whether err is the stop of a training that diverged (a loss, a weight or the optimizer's
 * state not finite: train_check_finite, dp_train_step): a runtime failure, the programs'
 * status 1, where their other errors of the step are bad input. */
int train_diverged(const mygpt_error *err);

/* with torch.no_grad(): the mean loss over every batch of val, one iter(val_loader)
 * (drawing from rng as it does); the ranks take every size-th batch and add their sums.
 * x, y: room for one batch. */
mygpt_status dp_val_loss(const dp_team *team, mygpt_gpt *g, mygpt_dataloader *val, mygpt_rng *rng, int64_t *x,
                         int64_t *y, double *out, mygpt_error *err);

#endif
