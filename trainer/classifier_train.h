/*
 * classifier_train.h - the training loop of Raschka's *Build a Large Language Model (From
 * Scratch)* chapter 6 (train_classifier_simple, evaluate_model, calc_loss_loader,
 * calc_accuracy_loader over the SpamDataset's loaders), as tools/reference_book_ch6.py
 * --train runs it in PyTorch: the book's chapter-6 program (chapters/src/81_book_classifier.c).
 */
#ifndef MYGPT_CLASSIFIER_TRAIN_H
#define MYGPT_CLASSIFIER_TRAIN_H

#include <stdio.h>

#include "mygpt/data.h"
#include "mygpt/train.h"

/* calc_loss_loader(loader, model, num_batches) under torch.no_grad(): the mean of the last
 * position's cross-entropy over the first num_batches batches (0: None, every batch; more
 * than there are: all of them) of a fresh iter(loader), drawing from rng as iter() does
 * (shuffle: the training loader's RandomSampler); NaN for an empty loader. x, y: room for
 * one batch. */
mygpt_status classifier_loader_loss(mygpt_gpt *g, mygpt_spam_loader *dl, int shuffle, mygpt_rng *rng,
                                    size_t num_batches, int64_t *x, int64_t *y, double *out, mygpt_error *err);

/* calc_accuracy_loader(loader, model, num_batches): the share of rows of those batches whose
 * last-position argmax is the label. */
mygpt_status classifier_loader_accuracy(mygpt_gpt *g, mygpt_spam_loader *dl, int shuffle, mygpt_rng *rng,
                                        size_t num_batches, int64_t *x, int64_t *y, double *out, mygpt_error *err);

typedef struct classifier_run {
    long epochs;      /* num_epochs (the book: 5)                                        */
    long eval_freq;   /* evaluate after the steps where global_step % eval_freq == 0 (50) */
    size_t eval_iter; /* batches each evaluation and accuracy reads (5)                  */
} classifier_run;

/* train_classifier_simple: for each epoch a step (zero_grad, calc_loss_batch, backward,
 * mygpt_trainer_step) on every batch of train (shuffled, drop_last); after the steps with
 * global_step % eval_freq == 0 evaluate_model printed as
 *   Ep 1 (Step 000000): Train loss 0.xxx, Val loss 0.xxx
 * and after each epoch
 *   Training accuracy: 50.00% | Validation accuracy: 50.00%
 * The evaluations read train through train_eval, a second loader over the same dataset (a
 * fresh iter() of the same DataLoader: its own order, drawn from rng), so the epoch's order
 * stays. x, y: room for one batch; *examples_seen (or NULL): the rows trained on. */
mygpt_status classifier_train(FILE *out, mygpt_trainer *tr, mygpt_optimizer *opt, mygpt_spam_loader *train,
                              mygpt_spam_loader *train_eval, mygpt_spam_loader *val, mygpt_rng *rng,
                              const classifier_run *run, int64_t *x, int64_t *y, long *examples_seen,
                              mygpt_error *err);

#endif
