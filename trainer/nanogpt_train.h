/*
 * nanogpt_train.h - `mygpt train --arch nanogpt` (the shakespeare-char preset): nanoGPT's
 * train.py (karpathy/nanoGPT) on a character-level text, step for step.
 */
#ifndef MYGPT_NANOGPT_TRAIN_H
#define MYGPT_NANOGPT_TRAIN_H

#include "train_session.h"

/* Runs s as nanoGPT's train.py runs its settings (PyTorch 1.13, float32, CPU):
 *   the text's characters are the vocabulary (data/shakespeare_char/prepare.py), its
 *   first 90 % train, the rest validate;
 *   torch.manual_seed(seed); model = GPT(...) (bias=False, its _init_weights);
 *   AdamW in two groups (weight decay on the tensors of 2 dimensions, none on the others),
 *   betas (0.9, 0.99);
 *   X, Y = get_batch('train'): B random windows of T (torch.randint);
 *   for iter 0 .. steps (steps + 1 updates, as train.py stops when iter_num > max_iters):
 *     lr = get_lr(iter): a linear warmup (--warmup), then a cosine to --lr-min at --steps
 *          (--cosine), else --lr;
 *     every --eval-every iterations: estimate_loss(), the mean loss of --eval-batches
 *          random batches of each split, printed as "step N: train loss X, val loss Y";
 *     loss of X, Y; the next X, Y; backward; clip_grad_norm_(--clip-grad); step;
 *     "iter N: loss X, time Tms".
 * --save FILE gets the model at the end (or at a Ctrl-C), --log FILE.csv the losses.
 * Returns the exit status (0, or the status after one line on stderr). */
int nanogpt_train_run(const train_settings *s);

#endif
