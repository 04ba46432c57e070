/*
 * verdict.h - what chapters 32-34 (the course's chapters 13-15) share: the-verdict as
 * LLMs-from-scratch reads it (the first 90% of its characters train, the rest
 * validate; create_dataloader_v1 windows of T tokens every T), chapter 14's model and
 * its training loop, exactly as tools/reference_train.py runs them in PyTorch.
 */
#ifndef MYGPT_VERDICT_H
#define MYGPT_VERDICT_H

#include "chapter.h"
#include "data_parallel.h"

/* The chapters' model and batch: GPT(50257, 64, 4, 2, 32) from torch.manual_seed(123),
 * batches of 8 windows of 32 tokens. */
enum { VERDICT_SEED = 123, VERDICT_EMBED = 64, VERDICT_HEADS = 4, VERDICT_LAYERS = 2,
       VERDICT_CONTEXT = 32, VERDICT_BATCH = 8 };

typedef struct verdict {
    mygpt_tokenizer *tok;
    int64_t *train_ids, *val_ids;
    size_t ntrain, nval;
    mygpt_dataloader train, val; /* train: shuffle, drop_last; val: in order, all batches */
    int64_t *x, *y;              /* one batch (B, T) */
    char *val_text;              /* the validation part's characters */
    size_t val_len;
} verdict;

/* Loads the vocabulary and the text from the data folder; when they are absent says so
 * and exits 77 (skipped; 1 under CI=true). */
void verdict_load(const chapter *ch, verdict *v);
void verdict_free(verdict *v);

/* The model's configuration (V from the tokenizer). */
mygpt_config verdict_config(const verdict *v);

/* Called at every printed step of verdict_train. */
typedef void (*verdict_eval_fn)(void *ctx, long step, int epoch, float train_loss, double val_loss,
                                long long tokens_seen);

/* The training loop of tools/reference_train.py: `steps` steps of opt on the shuffled
 * training batches (epochs drawn from rng), the validation loss every `every` steps and
 * at the last one. The model g and rng are the caller's (rng after building g). */
void verdict_train(const chapter *ch, verdict *v, mygpt_gpt *g, mygpt_rng *rng, mygpt_optimizer *opt,
                   long steps, long every, verdict_eval_fn on_eval, void *ctx);

/* The same loop run by a data-parallel team (chapter 35): rank r takes its rows of
 * every global batch (dp_share), the gradients are averaged before each step, the
 * parameters are compared across ranks after it (a difference ends the job), the
 * validation batches are shared out; on_eval gets the global batch's loss on every rank.
 * A team of one is verdict_train. */
void verdict_train_team(const chapter *ch, verdict *v, mygpt_gpt *g, mygpt_rng *rng,
                        mygpt_optimizer *opt, long steps, long every, const dp_team *team,
                        verdict_eval_fn on_eval, void *ctx);

/* Chapter 33's AdamW run (lr 1e-2, 60 steps; 3 with --smoke), the model chapter 34
 * speaks with. */
mygpt_gpt *verdict_adamw_model(const chapter *ch, verdict *v, verdict_eval_fn on_eval, void *ctx);

/* Where chapter 33 keeps its AdamW model: FIGURES/verdict_gpt.safetensors (the smoke
 * run's with --smoke), into path (len bytes). */
void verdict_model_path(const chapter *ch, char *path, size_t len);

/* The model at path when chapter 33 left it there; NULL when no file is there. A file
 * there that is not chapter 33's model (not a checkpoint, or another model) is refused,
 * one line and exit 2: the chapters make the name up, so they never replace a file. */
mygpt_gpt *verdict_saved_model(const chapter *ch, const verdict *v, const char *path);

/* Chapter 33's AdamW model: the one it saved (verdict_saved_model), or when there is
 * none, trained again the same way and saved for the next run (saying which on stderr). */
mygpt_gpt *verdict_model(const chapter *ch, verdict *v);

/* What chapters 34 and 36 run on: the vocabulary and text (verdict_load) and chapter 33's
 * AdamW model (verdict_model) with its weights stored as --weights says
 * (chapter_apply_weights). */
mygpt_gpt *verdict_load_model(const chapter *ch, verdict *v);

/* What the book's chapter 5 and appendix D (chapters 38 and 40) train on: create_dataloader_v1's
 * loaders of B windows of T tokens every T (train: shuffle, drop_last; val: in order, every
 * batch), the start context "Every effort moves you" encoded, and one batch x, y (B, T). */
typedef struct book_data {
    mygpt_dataloader train, val;
    int64_t *prompt;
    size_t n_prompt;
    int64_t *x, *y;
} book_data;

/* Builds d from v's ids and tokenizer; ends the program (chapter_check) on an error. */
void book_data_init(const chapter *ch, const verdict *v, size_t B, size_t T, book_data *d);
void book_data_free(book_data *d);

/* The first sentence of the validation part's first whole paragraph (after its first
 * blank line, up to and including the next '.'), as bytes: *len of them at the returned
 * pointer, which lives as long as v. */
const char *verdict_val_sentence(const verdict *v, size_t *len);

#endif
