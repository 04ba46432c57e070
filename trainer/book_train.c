/*
 * book_train.c - the training loop of the book's chapter 5 (see book_train.h).
 */
#include "book_train.h"

#include <stdlib.h>
#include <time.h>

#include "mygpt/generate.h"
#include "mygpt/print.h"
#include "train_step.h"

static mygpt_status windows_epoch(void *self, mygpt_rng *rng, int shuffle, mygpt_error *err)
{
    return mygpt_dataloader_epoch(self, rng, shuffle, err);
}

static mygpt_status windows_batch(void *self, size_t b, int64_t *x, int64_t *y, int *B, int *T, mygpt_error *err)
{
    const mygpt_dataloader *dl = self;
    *B = (int)mygpt_dataloader_batch_rows(dl, b);
    *T = (int)dl->max_length;
    return mygpt_dataloader_batch(dl, b, x, y, err);
}

book_loader book_windows(mygpt_dataloader *dl)
{
    return (book_loader){dl, dl->num_batches, windows_epoch, windows_batch};
}

static mygpt_status instructions_epoch(void *self, mygpt_rng *rng, int shuffle, mygpt_error *err)
{
    return mygpt_instruct_loader_epoch(self, rng, shuffle, err);
}

static mygpt_status instructions_batch(void *self, size_t b, int64_t *x, int64_t *y, int *B, int *T,
                                       mygpt_error *err)
{
    const mygpt_instruct_loader *dl = self;
    size_t t = 0;
    *B = (int)mygpt_instruct_loader_batch_rows(dl, b);
    const mygpt_status st = mygpt_instruct_loader_batch(dl, b, x, y, &t, err);
    *T = (int)t;
    return st;
}

book_loader book_instructions(mygpt_instruct_loader *dl)
{
    return (book_loader){dl, dl->num_batches, instructions_epoch, instructions_batch};
}

mygpt_status book_loss(mygpt_gpt *g, const book_loader *dl, int shuffle, mygpt_rng *rng, size_t batches, int64_t *x,
                       int64_t *y, double *out, mygpt_error *err)
{
    mygpt_status st = dl->epoch(dl->self, rng, shuffle, err); // iter(data_loader)
    const size_t n = batches < dl->num_batches ? batches : dl->num_batches;
    double sum = 0.0; // total_loss += loss.item(): Python floats
    for (size_t b = 0; b < n && st == MYGPT_OK; b++) {
        float loss = 0.0f;
        int B = 0, T = 0;
        st = dl->batch(dl->self, b, x, y, &B, &T, err);
        if (st == MYGPT_OK)
            st = mygpt_gpt_loss(g, x, y, B, T, &loss, err);
        sum += loss;
    }
    *out = sum / (double)n; // an empty loader: nan, as the book's calc_loss_loader returns
    return st;
}

mygpt_status book_loader_loss(mygpt_gpt *g, mygpt_dataloader *dl, int shuffle, mygpt_rng *rng, size_t batches,
                              int64_t *x, int64_t *y, double *out, mygpt_error *err)
{
    const book_loader l = book_windows(dl);
    return book_loss(g, &l, shuffle, rng, batches, x, y, out, err);
}

mygpt_status book_print_sample(FILE *out, mygpt_gpt *g, const mygpt_tokenizer *tok, const int64_t *prompt,
                               size_t n_prompt, int n, mygpt_error *err)
{
    int64_t *ids = malloc((n_prompt + (size_t)n) * sizeof *ids);
    if (!ids) {
        err->code = MYGPT_ENOMEM;
        snprintf(err->message, sizeof err->message, "out of memory for %d tokens", n);
        return MYGPT_ENOMEM;
    }
    // generate_text_simple: argmax
    const mygpt_generation greedy = {.max_new = n, .sampling = {0}, .eos = -1, .use_cache = 1};
    int got = 0;
    char *text = NULL;
    size_t len = 0;
    mygpt_status st = mygpt_generate(g, NULL, prompt, (int)n_prompt, &greedy, ids, &got, err);
    if (st == MYGPT_OK)
        st = mygpt_decode(tok, ids, (size_t)got, &text, &len, err);
    mygpt_strbuf shown = {0}; // tiktoken's decode: a cut character is U+FFFD
    if (st == MYGPT_OK)
        st = mygpt_sb_append_replaced(&shown, text, len);
    if (st == MYGPT_OK) {
        for (size_t i = 0; i < shown.len; i++) // decoded_text.replace("\n", " ")
            fputc(shown.data[i] == '\n' ? ' ' : shown.data[i], out);
        fputc('\n', out);
        fflush(out);
    } else if (st == MYGPT_ENOMEM && !err->message[0]) {
        snprintf(err->message, sizeof err->message, "%s", "out of memory for a sample");
    }
    mygpt_sb_free(&shown);
    free(text);
    free(ids);
    return st;
}

static double seconds_since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + 1e-9 * (double)(t.tv_nsec - t0->tv_nsec);
}

/* "step 30 of 90, 2.4 s a step, about 2 min 24 s left": `step` steps taken of `total`, `done` of
 * them by this process in `elapsed` seconds (a resumed run started later) */
static void report_progress(FILE *f, long step, long total, long done, double elapsed)
{
    const double per_step = elapsed / (double)done, left = per_step * (double)(total - step);
    fprintf(f, "book_train: step %ld of %ld, %.1f s a step, about %d min %02d s left\n", step, total, per_step,
            (int)(left / 60), (int)left % 60);
    fflush(f);
}

mygpt_status book_train_loaders(FILE *out, mygpt_trainer *tr, mygpt_optimizer *opt, const book_loader *train,
                                const book_loader *train_eval, const book_loader *val, mygpt_rng *rng,
                                const book_run *run, int64_t *x, int64_t *y, long *steps, mygpt_error *err)
{
    const dp_team one = {0, 1, 0};
    mygpt_gpt *g = tr->model;
    mygpt_status st = run->schedule ? mygpt_lr_schedule_check(run->schedule, err) : MYGPT_OK;
    *steps = run->start_step;
    const long total = run->epochs * (long)train->num_batches;
    struct timespec started;
    clock_gettime(CLOCK_MONOTONIC, &started);
    int stop = 0;
    for (long ep = run->start_epoch; ep < run->epochs && st == MYGPT_OK && !stop; ep++) {
        const int resumed = ep == run->start_epoch && run->start_batch > 0; // its order came with the state
        if (!resumed)
            st = train->epoch(train->self, rng, 1, err); // for input_batch, target_batch in train_loader
        for (size_t b = resumed ? run->start_batch : 0; b < train->num_batches && st == MYGPT_OK && !stop; b++) {
            double loss, ev[2];
            int evaluated = 0, B = 0, T = 0;
            st = train->batch(train->self, b, x, y, &B, &T, err);
            if (run->schedule) // for param_group in optimizer.param_groups: param_group["lr"] = lr
                opt->lr = mygpt_lr_at(run->schedule, *steps);
            const double clip = run->clip_norm > 0.0 && *steps >= run->clip_from ? run->clip_norm : 0.0;
            if (st == MYGPT_OK)
                st = dp_train_step_clipped(&one, tr, opt, x, y, B, T, *steps, 0, "book_train", clip, &loss, NULL,
                                           err);
            if (st == MYGPT_OK && *steps % run->eval_every == 0) { // evaluate_model, in eval mode
                st = book_loss(g, train_eval, 1, rng, run->eval_batches, x, y, &ev[0], err);
                if (st == MYGPT_OK)
                    st = book_loss(g, val, 0, rng, run->eval_batches, x, y, &ev[1], err);
                if (st == MYGPT_OK && run->before_print)
                    run->before_print(run->ctx);
                char tl[64], vl[64];
                if (st == MYGPT_OK)
                    fprintf(out, "Ep %ld (%s %06ld): Train loss %s, Val loss %s\n", ep + 1,
                            run->step_word ? run->step_word : "Step", *steps, mygpt_py_fixed_str(tl, sizeof tl, ev[0], 3),
                            mygpt_py_fixed_str(vl, sizeof vl, ev[1], 3));
                fflush(out);
                evaluated = st == MYGPT_OK;
            }
            ++*steps;
            if (st == MYGPT_OK && run->progress) // every step: a long run is never silent for long
                report_progress(run->progress, *steps, total, *steps - run->start_step, seconds_since(&started));
            const int last = b + 1 == train->num_batches;
            if (st == MYGPT_OK && last && run->prompt && run->before_print)
                run->before_print(run->ctx);
            if (st == MYGPT_OK && last && run->prompt)
                st = book_print_sample(out, g, run->tok, run->prompt, run->n_prompt, run->sample_tokens, err);
            if (st == MYGPT_OK && run->after_step)
                stop = run->after_step(run->ctx, *steps, last ? ep + 1 : ep, last ? 0 : b + 1, loss,
                                       evaluated ? ev : NULL);
        }
    }
    return st;
}

mygpt_status book_train(FILE *out, mygpt_trainer *tr, mygpt_optimizer *opt, mygpt_dataloader *train,
                        mygpt_dataloader *val, mygpt_rng *rng, const book_run *run, int64_t *x, int64_t *y,
                        long *steps, mygpt_error *err)
{
    mygpt_dataloader train_eval = *train; // evaluate_model's own iter(train_loader)
    train_eval.order = NULL;
    const book_loader t = book_windows(train), te = book_windows(&train_eval), v = book_windows(val);
    const mygpt_status st = book_train_loaders(out, tr, opt, &t, &te, &v, rng, run, x, y, steps, err);
    mygpt_dataloader_free(&train_eval);
    return st;
}
