/*
 * book_train.h - the training loop of Raschka's *Build a Large Language Model (From
 * Scratch)* chapter 5 (train_model_simple, evaluate_model, generate_and_print_sample), as
 * tools/reference_book_ch5.py runs it in PyTorch: what `mygpt train --epochs` and the
 * book's chapter-5 program (chapters/src/38_book_training.c) share; with a schedule and
 * clipping, appendix D's train_model (tools/reference_book_appD.py, chapter 40). The loop
 * reads its batches through book_loader: chapter 5's windows of the-verdict, or chapter
 * 7's instruction data (tools/reference_book_ch7.py --finetune, chapter 86).
 */
#ifndef MYGPT_BOOK_TRAIN_H
#define MYGPT_BOOK_TRAIN_H

#include <stdio.h>

#include "mygpt/data.h"
#include "mygpt/tokenizer.h"
#include "mygpt/train.h"

/* A DataLoader as the loop sees it: num_batches batches an epoch; epoch() starts one
 * (iter(loader), with its draws from rng), batch() writes batch b of it: inputs x and
 * targets y (*B rows of *T tokens; T may change from batch to batch). */
typedef struct book_loader {
    void *self;
    size_t num_batches;
    mygpt_status (*epoch)(void *self, mygpt_rng *rng, int shuffle, mygpt_error *err);
    mygpt_status (*batch)(void *self, size_t b, int64_t *x, int64_t *y, int *B, int *T, mygpt_error *err);
} book_loader;

/* create_dataloader_v1's windows of a token stream (chapter 5) as a book_loader */
book_loader book_windows(mygpt_dataloader *dl);

/* DataLoader(InstructionDataset, collate_fn=custom_collate_fn) (chapter 7) as a book_loader */
book_loader book_instructions(mygpt_instruct_loader *dl);

typedef struct book_run {
    long epochs;             /* num_epochs                                               */
    long eval_every;         /* eval_freq: evaluate after the steps where step % it == 0  */
    size_t eval_batches;     /* eval_iter: batches of each loader an evaluation averages */
    const mygpt_tokenizer *tok;
    const int64_t *prompt;   /* start_context's tokens, or NULL: no samples              */
    size_t n_prompt;
    int sample_tokens;       /* greedy tokens of each sample (the book: 50)              */
    FILE *progress;          /* or NULL: after each step, the step, the time a step takes
                                and the time left, one line (a long run that talks) */
    /* a resumed run (mygpt train --resume): the steps taken, and the epoch and batch the
     * next step takes (batch 0: the epoch's order is not drawn yet); all 0 from the start */
    long start_step, start_epoch;
    size_t start_batch;
    /* or NULL: called after every step, once what it prints is printed (the evaluation's
     * line; after an epoch's last batch, its sample too), with the steps taken, the epoch
     * and batch of the next step, the step's loss and the evaluation's train and
     * validation losses (NULL when it did not evaluate). Nonzero stops the loop there. */
    int (*after_step)(void *ctx, long steps, long epoch, size_t batch, double loss, const double *eval);
    void (*before_print)(void *ctx); /* or NULL: called before each line the loop prints */
    void *ctx;
    /* appendix D's train_model (zero for chapter 5's train_model_simple): */
    const mygpt_lr_schedule *schedule; /* or NULL: the optimizer's lr throughout; else each
                                          step's lr = mygpt_lr_at(schedule, step)           */
    double clip_norm;        /* > 0: clip_grad_norm_(max_norm=clip_norm) on the steps...   */
    long clip_from;          /* ... >= clip_from (the book's notebook: warmup_steps)      */
    const char *step_word;   /* the log's "Step" (NULL) or appendix D's "Iter"            */
} book_run;

/* The book's calc_loss_loader(loader, model, num_batches) with torch.no_grad(): the mean
 * loss of the first `batches` batches of a fresh iter(loader) (drawing from rng as it does),
 * in eval mode. x, y: room for one batch. */
mygpt_status book_loader_loss(mygpt_gpt *g, mygpt_dataloader *dl, int shuffle, mygpt_rng *rng, size_t batches,
                              int64_t *x, int64_t *y, double *out, mygpt_error *err);

/* book_loader_loss over any book_loader. */
mygpt_status book_loss(mygpt_gpt *g, const book_loader *dl, int shuffle, mygpt_rng *rng, size_t batches, int64_t *x,
                       int64_t *y, double *out, mygpt_error *err);

/* generate_and_print_sample: n greedy tokens after the prompt, decoded, newlines as
 * spaces, one line on out. */
mygpt_status book_print_sample(FILE *out, mygpt_gpt *g, const mygpt_tokenizer *tok, const int64_t *prompt,
                               size_t n_prompt, int n, mygpt_error *err);

/* train_model_simple: for each epoch, a step on every batch of train (shuffled, drop_last;
 * train mode: dropout draws from rng, as tr->dropout_rng must be), after the steps with
 * step % eval_every == 0 evaluate_model printed as
 *   Ep 1 (Step 000000): Train loss 9.781, Val loss 9.933
 * and after each epoch a sample. train and val as create_dataloader_v1 makes them; x, y:
 * room for one batch. *steps counts the steps taken (run->start_step included). With
 * run->schedule and run->clip_norm, appendix D's train_model: each step's learning rate
 * from the schedule (opt->lr is left at the last step's), the gradient clipped from step
 * clip_from on. */
mygpt_status book_train(FILE *out, mygpt_trainer *tr, mygpt_optimizer *opt, mygpt_dataloader *train,
                        mygpt_dataloader *val, mygpt_rng *rng, const book_run *run, int64_t *x, int64_t *y,
                        long *steps, mygpt_error *err);

/* book_train over book_loaders: train for the steps, train_eval (another loader over the
 * same data, so evaluate_model's iter(train_loader) leaves the epoch's order alone) and
 * val for the evaluations; x, y: room for the largest batch any of them gives. */
mygpt_status book_train_loaders(FILE *out, mygpt_trainer *tr, mygpt_optimizer *opt, const book_loader *train,
                                const book_loader *train_eval, const book_loader *val, mygpt_rng *rng,
                                const book_run *run, int64_t *x, int64_t *y, long *steps, mygpt_error *err);

#endif
