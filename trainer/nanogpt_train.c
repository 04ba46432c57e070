/*
 * nanogpt_train.c - nanoGPT's train.py on a character-level text (see nanogpt_train.h):
 * its get_batch, estimate_loss, get_lr, two AdamW groups and gradient clipping around
 * the library's model, loss and optimizer.
 */
#include "nanogpt_train.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "run_folder.h"
#include "char_vocab.h"
#include "mygpt/checkpoint.h"
#include "mygpt/data.h"
#include "train_extras.h"
#include "train_step.h"

/* Returns call's status when it fails */
#define TRY(call)                                                                                                  \
    do {                                                                                                           \
        const mygpt_status try_st_ = (call);                                                                       \
        if (try_st_ != MYGPT_OK)                                                                                   \
            return try_st_;                                                                                        \
    } while (0)

/* The AdamW of nanoGPT's shakespeare-char config: betas (0.9, 0.99) (beta2 "a bit bigger
 * because number of tokens per iter is small") */
#define NANOGPT_BETA2 0.99

typedef struct run {
    const train_settings *s;
    const char *cmd;
    char_vocab vocab;
    int64_t *ids;            /* the whole text's ids                        */
    size_t ntrain, nval;     /* train = ids[0, ntrain), val = the rest      */
    int64_t *x, *y;          /* (B, T) the training batch                   */
    int64_t *ex, *ey;        /* (B, T) an evaluation's batch                */
    int64_t *ix;             /* (B) a batch's window starts                 */
    mygpt_rng rng;           /* torch's global generator                    */
    mygpt_gpt *g;
    mygpt_trainer *tr;
    mygpt_optimizer opt;     /* AdamW in configure_optimizers' two groups   */
    float **clip_grads;      /* model.parameters()'s gradients, nanoGPT's tensors */
    size_t *clip_sizes;
    int clip_count;
    float *qkv;              /* (L, 3C, C) each c_attn's gradient, W_q | W_k | W_v rows */
    train_log log;
    mygpt_error err;
} run;

/* ---- data ------------------------------------------------------------------------------ */

/* The text's vocabulary and ids, split as prepare.py splits: n = len(data);
 * data[:int(n*0.9)] trains. 0, or the exit status after the error. */
static int read_text(run *r)
{
    const train_settings *s = r->s;
    char *text = NULL;
    size_t len = 0, n = 0;
    mygpt_status st = mygpt_read_file(s->text, &text, &len, &r->err);
    if (st == MYGPT_OK && (st = char_vocab_build(&r->vocab, text, len, &r->err)) == MYGPT_OK)
        st = char_vocab_encode(&r->vocab, text, len, &r->ids, &n, &r->err);
    free(text);
    if (st != MYGPT_OK) {
        cli_error(r->cmd, "--text %s: %s", s->text, r->err.message);
        return cli_exit_code(st);
    }
    r->ntrain = (size_t)((double)n * 0.9); // int(n*0.9)
    r->nval = n - r->ntrain;
    if (r->ntrain <= (size_t)s->T || r->nval <= (size_t)s->T) {
        cli_error(r->cmd, "--text %s: %zu characters; each split needs more than --context %lld", s->text, n,
                  (long long)s->T);
        return EXIT_USAGE;
    }
    if (s->cfg.vocab_size != r->vocab.n) {
        cli_error(r->cmd, "the model's vocabulary is %d (--vocab, or the preset's), but --text %s has %d distinct "
                  "characters, the vocabulary of --arch nanogpt: give --vocab %d", s->cfg.vocab_size, s->text,
                  r->vocab.n, r->vocab.n);
        return EXIT_USAGE;
    }
    return 0;
}

/* get_batch(split) into x, y: ix = torch.randint(len(data) - block_size, (batch_size,)),
 * then x = data[i:i+T], y = data[i+1:i+1+T] for each i */
static mygpt_status get_batch(run *r, int val, int64_t *x, int64_t *y)
{
    const int64_t *data = val ? r->ids + r->ntrain : r->ids;
    const size_t n = val ? r->nval : r->ntrain, T = (size_t)r->s->T, B = (size_t)r->s->B;
    int64_t *ix = r->ix;
    // lesson: get_batch
    TRY(mygpt_randint(&r->rng, ix, B, 0, (int64_t)(n - T), &r->err));
    for (size_t b = 0; b < B; b++) {
        memcpy(x + b * T, data + ix[b], T * sizeof *data);
        memcpy(y + b * T, data + ix[b] + 1, T * sizeof *data);
    }
    // end lesson: get_batch
    return MYGPT_OK;
}

/* train.py's eval_iters: --eval-batches, or its default 200 */
static int64_t eval_iters(const train_settings *s)
{
    return s->eval_batches > 0 ? s->eval_batches : 200;
}

/* estimate_loss(): for each split, the mean of the losses of eval_iters fresh batches
 * (model.eval(), torch.no_grad()). The mean is summed in double and rounded once;
 * torch's float32 mean of the same floats may differ in its last bit. */
static mygpt_status estimate_loss(run *r, float out[2])
{
    const int B = (int)r->s->B, T = (int)r->s->T;
    for (int split = 0; split < 2; split++) {
        double sum = 0.0;
        for (int64_t k = 0; k < eval_iters(r->s); k++) {
            float loss;
            TRY(get_batch(r, split, r->ex, r->ey));
            TRY(mygpt_gpt_loss(r->g, r->ex, r->ey, B, T, &loss, &r->err));
            sum += loss;
        }
        out[split] = (float)(sum / (double)eval_iters(r->s));
    }
    return MYGPT_OK;
}

/* get_lr(it): learning_rate * (it + 1) / (warmup_iters + 1) during the warmup; then, with
 * the cosine, min_lr + 0.5 (1 + cos(pi r)) (learning_rate - min_lr) for r the decay's
 * share done (min_lr after lr_decay_iters = --steps); learning_rate without it */
static double get_lr(const mygpt_lr_schedule *sc, long it, long decay)
{
    const long warmup = sc->warmup_steps;
    if (it < warmup)
        return sc->peak * (double)(it + 1) / (double)(warmup + 1);
    if (!sc->cosine)
        return sc->peak;
    if (it > decay)
        return sc->min;
    const double ratio = (double)(it - warmup) / (double)(decay - warmup);
    const double coeff = 0.5 * (1.0 + cos(M_PI * ratio));
    return sc->min + coeff * (sc->peak - sc->min);
}

/* ---- the optimizer and the clipping ---------------------------------------------------- */

/* configure_optimizers: AdamW whose first group (the state_dict entries of 2 or more
 * dimensions) decays by train.py's weight_decay, 0.1 unless given, the second not */
static void make_optimizer(run *r)
{
    mygpt_adamw_init(&r->opt, r->s->lr);
    r->opt.beta2 = NANOGPT_BETA2;
    r->opt.weight_decay = r->s->weight_decay >= 0 ? r->s->weight_decay : 0.1;
    r->tr->decay_groups = 1;
}

/* model.parameters() as nanoGPT lists them: wte (the tied head), wpe, each block's ln_1,
 * c_attn (one tensor: W_q | W_k | W_v, copied into r->qkv), c_proj, ln_2, c_fc, c_proj,
 * then ln_f: clip_grad_norm_ takes one norm per tensor, so c_attn's is of all three */
static mygpt_status make_clip_list(run *r)
{
    const mygpt_config *cfg = &r->g->config;
    const size_t C = (size_t)cfg->embed_dim, L = (size_t)cfg->num_layers, CC = C * C;
    r->clip_grads = malloc((3 + 6 * L) * sizeof *r->clip_grads);
    r->clip_sizes = malloc((3 + 6 * L) * sizeof *r->clip_sizes);
    r->qkv = malloc(L * 3 * CC * sizeof *r->qkv);
    if (!r->clip_grads || !r->clip_sizes || !r->qkv)
        return trainer_fail(&r->err, MYGPT_ENOMEM, "%s", "out of memory for the gradients' norms");
    const mygpt_params *d = &r->tr->grads;
    int k = 0;
#define ADD(ptr, size) (r->clip_grads[k] = (ptr), r->clip_sizes[k++] = (size))
    ADD(d->wte, (size_t)cfg->vocab_size * C);
    ADD(d->wpe, (size_t)cfg->max_seq_len * C);
    for (size_t l = 0; l < L; l++) {
        ADD(d->ln1w + l * C, C);
        ADD(r->qkv + l * 3 * CC, 3 * CC);
        ADD(d->wo + l * CC, CC);
        ADD(d->ln2w + l * C, C);
        ADD(d->fc1w + l * 4 * CC, 4 * CC);
        ADD(d->fc2w + l * 4 * CC, 4 * CC);
    }
    ADD(d->lnfw, C);
#undef ADD
    r->clip_count = k;
    return MYGPT_OK;
}

/* torch.nn.utils.clip_grad_norm_(model.parameters(), clip) over nanoGPT's tensors: each
 * c_attn gathered from W_q, W_k, W_v's gradients, clipped, and put back */
static mygpt_status clip_grads(run *r)
{
    const mygpt_config *cfg = &r->g->config;
    const size_t CC = (size_t)cfg->embed_dim * (size_t)cfg->embed_dim;
    const mygpt_params *d = &r->tr->grads;
    float *const parts[3] = {d->wq, d->wk, d->wv};
    for (int l = 0; l < cfg->num_layers; l++)
        for (int p = 0; p < 3; p++)
            memcpy(r->qkv + ((size_t)l * 3 + (size_t)p) * CC, parts[p] + (size_t)l * CC, CC * sizeof(float));
    TRY(mygpt_clip_grad_norm(r->clip_grads, r->clip_sizes, r->clip_count, r->s->clip, NULL, &r->err));
    for (int l = 0; l < cfg->num_layers; l++)
        for (int p = 0; p < 3; p++)
            memcpy(parts[p] + (size_t)l * CC, r->qkv + ((size_t)l * 3 + (size_t)p) * CC, CC * sizeof(float));
    return MYGPT_OK;
}

/* ---- the loop -------------------------------------------------------------------------- */

/* One iteration's update after its loss: the next batch (train.py fetches it before the
 * backward), the backward, the clipping, the step of both groups at lr, zero_grad */
static mygpt_status update(run *r, double lr)
{
    TRY(get_batch(r, 0, r->x, r->y));
    TRY(mygpt_trainer_backward(r->tr, &r->err));
    if (r->s->clip > 0)
        TRY(clip_grads(r));
    r->opt.lr = lr;
    TRY(mygpt_trainer_step(r->tr, &r->opt, &r->err));
    return mygpt_trainer_zero_grad(r->tr, &r->err);
}

/* The iterations 0 .. steps, their lines, the log; -1 when Ctrl-C stopped them */
static mygpt_status loop(run *r, int *stopped)
{
    const train_settings *s = r->s;
    const int B = (int)s->B, T = (int)s->T;
    TRY(get_batch(r, 0, r->x, r->y)); // X, Y = get_batch('train'): the very first batch
    double t0 = cli_now_s();
    for (long it = 0; it <= s->steps; it++) {
        const double lr = get_lr(&s->schedule, it, (long)s->steps); // lr_decay_iters = max_iters
        float losses[2], loss;
        const int evaluated = it % s->eval_every == 0;
        if (evaluated) {
            TRY(estimate_loss(r, losses));
            printf("step %ld: train loss %.4f, val loss %.4f\n", it, (double)losses[0], (double)losses[1]);
        }
        TRY(mygpt_trainer_forward(r->tr, r->x, r->y, B, T, &loss, &r->err));
        if (!isfinite(loss))
            return trainer_fail(&r->err, MYGPT_ERANGE, "iter %ld: the training diverged (loss %g)", it,
                                  (double)loss);
        TRY(update(r, lr));
        const double t1 = cli_now_s(), ms = (t1 - t0) * 1000.0;
        t0 = t1;
        printf("iter %ld: loss %.4f, time %.2fms\n", it, (double)loss, ms);
        fflush(stdout);
        const double val = losses[1];
        if (s->log)
            train_log_row(&r->log, it, loss, evaluated ? &val : NULL, lr, ms);
        if (train_interrupted()) {
            *stopped = 1;
            break;
        }
    }
    return MYGPT_OK;
}

/* The run's model, trainer, groups and clipping list; 0, or the status after the error */
static int build(run *r)
{
    const train_settings *s = r->s;
    mygpt_rng_init(&r->rng, s->seed); // torch.manual_seed(1337 + seed_offset)
    r->x = malloc((size_t)(s->B * s->T) * sizeof *r->x);
    r->y = malloc((size_t)(s->B * s->T) * sizeof *r->y);
    r->ex = malloc((size_t)(s->B * s->T) * sizeof *r->ex);
    r->ey = malloc((size_t)(s->B * s->T) * sizeof *r->ey);
    r->ix = malloc((size_t)s->B * sizeof *r->ix);
    mygpt_status st = r->x && r->y && r->ex && r->ey && r->ix ? MYGPT_OK : trainer_fail(&r->err, MYGPT_ENOMEM, "%s", "out of memory for a batch");
    if (st == MYGPT_OK)
        st = mygpt_gpt_create_from(&r->g, &s->cfg, &r->rng, &r->err);
    if (st == MYGPT_OK && (st = mygpt_trainer_create(&r->tr, r->g, &r->err)) == MYGPT_OK)
        r->tr->dropout_rng = &r->rng; // model.train(): dropout draws, when the model has any
    if (st == MYGPT_OK && s->save && (st = mygpt_checkpoint_check_save(r->g, s->save, &r->err)) != MYGPT_OK) {
        cli_error(r->cmd, "--save: %s", r->err.message);
        return EXIT_USAGE;
    }
    if (st == MYGPT_OK) {
        make_optimizer(r);
        st = make_clip_list(r);
    }
    return st == MYGPT_OK ? 0 : cli_fail(r->cmd, st, &r->err);
}

static void run_free(run *r)
{
    mygpt_optimizer_free(&r->opt);
    free(r->clip_grads);
    free(r->clip_sizes);
    free(r->qkv);
    train_log_free(&r->log);
    mygpt_trainer_free(r->tr);
    mygpt_gpt_free(r->g);
    char_vocab_free(&r->vocab);
    free(r->ids);
    free(r->x);
    free(r->y);
    free(r->ex);
    free(r->ey);
    free(r->ix);
}

int nanogpt_train_run(const train_settings *s)
{
    run r = {.s = s, .cmd = s->cmd};
    int rc = 0, stopped = 0;
    if (s->data_parallel || s->resume || s->epochs || s->checkpoint_every || s->best || s->init_from || !s->adamw) {
        cli_error(s->cmd, "--arch nanogpt trains as nanoGPT's train.py: with --optimizer adamw, without "
                  "--data-parallel, --resume, --checkpoint-every, --keep-best, --init-from or --epochs");
        rc = EXIT_USAGE;
    }
    if (!rc && !(rc = read_text(&r)) && !(rc = build(&r)) && !(rc = s->log ? train_log_open(s->cmd, &r.log, s->log, 0) : 0)) {
        if (s->run_dir)
            run_folder_announce(s->cmd, s->run_dir, s->save, NULL, s->log);
        fprintf(stderr, "mygpt %s: nanoGPT's train.py: %d characters, %zu train and %zu validation ids; %zu parameters\n",
                s->cmd, r.vocab.n, r.ntrain, r.nval, r.g->num_parameters);
        train_catch_sigint();
        const double t0 = cli_now_s();
        mygpt_status st = loop(&r, &stopped);
        if (st != MYGPT_OK)
            rc = train_loop_fail(s->cmd, st, &r.err);
        else
            fprintf(stderr, "mygpt %s: %lld iterations in %.1f s\n", s->cmd, (long long)s->steps + 1,
                    cli_now_s() - t0);
        if (!rc && s->log)
            rc = train_log_write(s->cmd, &r.log);
        if (!rc && s->save && (st = mygpt_checkpoint_save(r.g, s->save, &r.err)) != MYGPT_OK)
            rc = cli_write_fail(s->cmd, st, &r.err);
        else if (!rc && s->save)
            cli_say(stderr, "mygpt %s: saved the model to %s (its characters are --text's: mygpt generate "
                    "--checkpoint %s --chars %s)", s->cmd, s->save, s->save, s->text);
        if (!rc && s->run_dir) { // the folder's files by name, --save's and --log's by path
            char plot[4100];
            if (s->log)
                train_log_plot_path(plot, sizeof plot, s->log);
            const char *files[3] = {s->save, s->log, s->log ? plot : NULL};
            run_folder_say(s->cmd, s->run_dir, files, 3);
        }
    }
    run_free(&r);
    if (stopped && !rc)
        train_end_by_sigint();
    return rc;
}
