/*
 * train_session.c - one run of `mygpt train` (see train_session.h), read top to bottom:
 * the team, the data, the model, the settings a resume must share, the loop, the end.
 */
#include "train_session.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "run_folder.h"
#include "book_train.h"
#include "nanogpt_train.h"
#include "data_parallel.h"
#include "mygpt/checkpoint.h"
#include "mygpt/data.h"
#include "mygpt/print.h"
#include "mygpt/sp_tokenizer.h"
#include "mygpt/tokenizer.h"
#include "mygpt/train_state.h"
#include "train_extras.h"
#include "train_step.h"

/* The settings a resumed run must share with the run that saved its state: what
 * decides the numbers of every step (not --steps or --epochs: a run may go on longer) */
typedef struct run_settings {
    char v[20][96];
    mygpt_train_setting s[20];
    int n;
} run_settings;

/* A run as it goes: what it holds, and what the steps' callback keeps between steps */
typedef struct session {
    const train_settings *s;
    const char *cmd;
    dp_team team;
    char *text;                      /* --text's bytes                                 */
    size_t tn;
    mygpt_tokenizer *tok;            /* GPT-2's, or NULL with --tokenizer               */
    mygpt_sp_tokenizer *sp;          /* --tokenizer's, or NULL                          */
    int64_t *train_ids, *val_ids;    /* its two parts' tokens                          */
    int64_t *prompt;                 /* --sample-prompt's tokens (np), or NULL          */
    size_t np;
    size_t ntrain, nval;
    mygpt_dataloader train, val;
    int64_t *x, *y;                  /* one batch: (B, T) inputs and targets           */
    mygpt_rng rng;
    mygpt_gpt *g;
    mygpt_trainer *tr;
    mygpt_optimizer opt;
    mygpt_lr_schedule schedule;      /* the settings', its length known                */
    run_settings rs;
    mygpt_train_position pos;        /* where the run starts (0, or --resume's)        */
    mygpt_error err;
    /* after each step (after_step): */
    train_progress progress;
    train_log log;
    train_log *logp;                 /* &log with --log on rank 0, else NULL           */
    const char *state;               /* where the training state goes, or NULL        */
    double last;                     /* when the previous step ended                  */
    mygpt_train_position at;         /* where the run is                              */
    long long saved_at;              /* the step of the last state saved, or -1       */
    double best_val;                 /* --keep-best: the lowest validation loss so far */
    long long best_step;             /* and the step it was evaluated after, or -1   */
    int interrupted, rc;             /* Ctrl-C came; a failure's exit code (said)     */
} session;

/* ---- small helpers ------------------------------------------------------------------- */

/* An error after MPI started: this rank says what and ends the job (no rank may be left
 * waiting for it); with one process, the usual one line and status. */
static int train_fail(const dp_team *team, const char *cmd, mygpt_status st, const mygpt_error *err)
{
    if (team->size > 1)
        dp_abort(team, "mygpt train", cli_exit_code(st), err->message);
    return train_loop_fail(cmd, st, err);
}

/* A double's bits, as the ranks compare them */
static unsigned long long bits_of(double v)
{
    unsigned long long u;
    memcpy(&u, &v, sizeof u);
    return u;
}

/* FNV-1a over n bytes: what ranks compare */
static unsigned long long checksum(const void *p, size_t n)
{
    unsigned long long h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ ((const unsigned char *)p)[i]) * 1099511628211ull;
    return h;
}

/* err becomes an MYGPT_EINVAL with the printf-formatted message */
static void say(mygpt_error *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    err->code = MYGPT_EINVAL;
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
}

/* err's message behind a prefix ("--save: ") */
static void prefix(mygpt_error *err, const char *what)
{
    const mygpt_error inner = *err;
    snprintf(err->message, sizeof err->message, "%s%.*s", what, (int)(sizeof err->message - strlen(what) - 1),
             inner.message);
}

/* run.c's encode(text, bos 1, eos 0) with sp, what `mygpt encode --tokenizer` prints, as
 * int64 ids (malloc'd into *ids, *n of them) */
static mygpt_status sp_encode_ids(const mygpt_sp_tokenizer *sp, const char *text, size_t len, int64_t **ids, size_t *n,
                                  mygpt_error *err)
{
    int *got = NULL;
    mygpt_status st = mygpt_sp_encode(sp, text, len, 1, 0, &got, n, err);
    if (st == MYGPT_OK && !(*ids = malloc((*n ? *n : 1) * sizeof **ids))) {
        say(err, "%s", "out of memory for the text's ids");
        st = err->code = MYGPT_ENOMEM;
    }
    for (size_t i = 0; st == MYGPT_OK && i < *n; i++)
        (*ids)[i] = got[i];
    free(got);
    return st;
}

/* The token ids of text, GPT-2's or --tokenizer's (malloc'd into *ids, *n of them): 0, or
 * the status after the error, which names `what` (--text FILE, --sample-prompt) */
static int encode(const session *S, const char *what, const char *text, size_t len, int64_t **ids, size_t *n)
{
    mygpt_error err = {0};
    const mygpt_status st = S->sp ? sp_encode_ids(S->sp, text, len, ids, n, &err)
                                  : mygpt_encode(S->tok, text, len, ids, n, &err);
    const mygpt_error inner = err;
    if (st == MYGPT_EFORMAT && S->sp) // what the vocabulary lacks, said of its file
        say(&err, "--tokenizer %s: %s", S->s->tokenizer, inner.message);
    else if (st != MYGPT_OK) // the text's fault
        say(&err, "%s: %s", what, inner.message);
    return st == MYGPT_OK ? 0 : cli_fail(S->cmd, st, &err);
}

int train_schedule_check(const char *cmd, mygpt_lr_schedule *s, long long total, const char *length)
{
    s->total_steps = (long)total;
    mygpt_error err = {0};
    if (mygpt_lr_schedule_check(s, &err) == MYGPT_OK)
        return 0;
    cli_error(cmd, "--cosine: %s (give fewer --warmup steps, or more %s)", err.message, length);
    return EXIT_USAGE;
}

/* ---- the team: --data-parallel's processes ------------------------------------------- */

/* Starts MPI for --data-parallel and checks that every rank was given the same flags
 * (before anything that may fail or need a collective), and that each has a row of the
 * batch. 0 (a team of one without the flag), or the status after the error. */
static int session_team(session *S)
{
    const train_settings *s = S->s;
    if (!s->data_parallel)
        return 0;
    if (!dp_available()) {
        cli_error(S->cmd, "--data-parallel: this mygpt was built without MPI (install libopenmpi-dev and "
                          "openmpi-bin, then rebuild)");
        return EXIT_USAGE;
    }
    if (dp_start(&S->team, NULL, NULL)) {
        cli_error(S->cmd, "--data-parallel: MPI_Init failed");
        return EXIT_RUNTIME;
    }
    if (S->team.rank != dp_launch_rank()) { // only rank 0 made the run's folder (cmd_train.c)
        cli_error(S->cmd, "--data-parallel: MPI made this process rank %d, its launcher's environment says %d",
                  S->team.rank, dp_launch_rank());
        dp_stop(&S->team);
        return EXIT_USAGE;
    }
    const mygpt_config *c = &s->cfg;
    const dp_field flags[] = {
        {"--batch", (unsigned long long)s->B, 'i'}, {"--context", (unsigned long long)s->T, 'i'},
        {"--steps", (unsigned long long)s->steps, 'i'}, {"--seed", (unsigned long long)s->seed, 'i'},
        {"--eval-every", (unsigned long long)s->eval_every, 'i'},
        {"--optimizer (0 sgd, 1 adamw)", (unsigned long long)s->adamw, 'i'},
        {"--lr", bits_of(s->lr), 'f'}, {"--momentum", bits_of(s->momentum), 'f'},
        {"--weight-decay", bits_of(s->weight_decay), 'f'},
        {"--check-replicas", (unsigned long long)s->check_replicas, 'i'},
        {"--init-from (given)", (unsigned long long)(s->init_from != NULL), 'i'},
        {"--vocab", (unsigned long long)c->vocab_size, 'i'}, {"--embed", (unsigned long long)c->embed_dim, 'i'},
        {"--heads", (unsigned long long)c->num_heads, 'i'}, {"--layers", (unsigned long long)c->num_layers, 'i'},
        {"--max-seq", (unsigned long long)c->max_seq_len, 'i'}, {"--arch", (unsigned long long)c->arch, 'i'},
        {"--qkv-bias", (unsigned long long)c->qkv_bias, 'i'}, {"--dropout", bits_of(c->dropout), 'f'},
        {"--warmup", (unsigned long long)s->schedule.warmup_steps, 'i'},
        {"--lr-initial", bits_of(s->schedule.initial), 'f'},
        {"--cosine", (unsigned long long)s->schedule.cosine, 'i'}, {"--lr-min", bits_of(s->schedule.min), 'f'},
        {"--clip-grad", bits_of(s->clip), 'f'}, {"--decay-groups", (unsigned long long)s->decay_groups, 'i'}};
    dp_agree(&S->team, "mygpt train", flags, (int)(sizeof flags / sizeof flags[0]));
    if (S->team.size > s->B) { // every rank sees the same: rank 0 says it, all stop
        if (S->team.rank == 0)
            cli_error(S->cmd, "--data-parallel: %d processes for a batch of %lld rows: each needs at least one "
                              "row (use at most %lld processes, or a larger --batch)",
                      S->team.size, (long long)s->B, (long long)s->B);
        dp_stop(&S->team);
        return EXIT_USAGE;
    }
    return 0;
}

/* ---- the data: --text split, tokenised, in loaders ------------------------------------ */

/* --text split by characters as text[:int(0.9 * len(text))], each part GPT-2's tokens
 * (--tokenizer's) in a loader of windows of T every T (the validation's keeps its short
 * last batch); with --epochs, the schedule's length is now known. 0, or the status after
 * the error. */
static int session_data(session *S)
{
    const train_settings *s = S->s;
    const size_t B = (size_t)s->B, T = (size_t)s->T;
    mygpt_error *err = &S->err;
    mygpt_status st = mygpt_read_file(s->text, &S->text, &S->tn, err);
    if (st != MYGPT_OK)
        return train_fail(&S->team, S->cmd, st, err);
    const char *text = S->text;
    const size_t valid = s->tokenizer ? S->tn : mygpt_utf8_valid_prefix(text, S->tn);
    if (valid < S->tn) { // said here, at its offset in the file, not in the part that holds it
        cli_error(S->cmd, "--text %s: the text is not valid UTF-8 (byte offset %zu)", s->text, valid);
        return EXIT_USAGE;
    }
    const size_t tn = S->tn, split = mygpt_utf8_offset(text, tn, (size_t)(0.9 * (double)mygpt_utf8_length(text, tn)));
    char dir[4096];
    if (s->tokenizer && (st = mygpt_sp_load(&S->sp, s->tokenizer, 0, err)) != MYGPT_OK) {
        prefix(err, "--tokenizer: ");
        return cli_fail(S->cmd, st, err);
    }
    if (!s->tokenizer && ((st = mygpt_data_dir(dir, sizeof dir, err)) != MYGPT_OK ||
                          (st = mygpt_tokenizer_load_dir(&S->tok, dir, err)) != MYGPT_OK))
        return cli_fail(S->cmd, st, err);
    int rc;
    char what[4200];
    snprintf(what, sizeof what, "--text %s", s->text);
    if ((rc = encode(S, what, text, split, &S->train_ids, &S->ntrain)) ||
        (rc = encode(S, what, text + split, tn - split, &S->val_ids, &S->nval)))
        return rc;
    if (mygpt_dataloader_init(&S->train, S->train_ids, S->ntrain, B, T, T, err) != MYGPT_OK ||
        mygpt_dataloader_init(&S->val, S->val_ids, S->nval, B, T, T, err) != MYGPT_OK)
        return train_fail(&S->team, S->cmd, MYGPT_EINVAL, err);
    mygpt_dataloader_set_drop_last(&S->val, 0);
    const int none = S->train.num_batches == 0;
    if (none || S->val.num_batches == 0) {
        cli_error(S->cmd, "--text %s: the %s part of the text (%zu tokens) holds no batch of %lld windows of %lld "
                  "tokens", s->text, none ? "training" : "validation", none ? S->ntrain : S->nval, (long long)(none ? s->B : 1),
                  (long long)s->T);
        return EXIT_USAGE;
    }
    if (s->scheduled && s->epochs > 0)
        return train_schedule_check(S->cmd, &S->schedule, s->epochs * (long long)S->train.num_batches, "--epochs");
    return 0;
}

/* ---- the model -------------------------------------------------------------------------- */

/* --init-from takes the checkpoint's architecture and sizes: a model flag given beside it
 * must say the same (a contradiction is refused, not ignored). 0, or a message in err. */
static int init_from_agrees(const train_settings *s, const mygpt_gpt *g, mygpt_error *err)
{
    const mygpt_config *c = &g->config;
    static const char *const flag[8] = {"vocab", "embed", "heads", "layers", "max-seq", "kv-heads", "ffn-hidden",
                                        "multiple-of"},
                             *const field[8] = {"vocab_size", "embed_dim", "num_heads", "num_layers", "max_seq_len",
                                                "heads of keys and values", "ffn_hidden", "ffn_hidden"};
    const int have[8] = {c->vocab_size, c->embed_dim, c->num_heads, c->num_layers, c->max_seq_len,
                         mygpt_kv_heads(c), mygpt_ffn_hidden(c), mygpt_ffn_hidden(c)};
    for (int i = 0; i < 8; i++) {
        const char *v = s->sizes[i];
        char *end;
        if (!v)
            continue;
        errno = 0;
        const long long n = strtoll(v, &end, 10);
        const long long as = i == 7 && n > 0 && n <= INT_MAX ? mygpt_llama_hidden_dim(c->embed_dim, (int)n) : n;
        if (*v == '\0' || *end != '\0' || errno || as != have[i]) { // (--multiple-of: the hidden size it gives)
            say(err, "--%s %s contradicts --init-from's checkpoint (%s %d): leave it out", flag[i], v, field[i],
                have[i]);
            return 1;
        }
    }
    if (s->untied_head && (c->arch != MYGPT_ARCH_LLAMA || !c->untied_head)) { // (a switch of llama's)
        if (c->arch != MYGPT_ARCH_LLAMA)
            say(err, "--untied-head is llama's switch: --init-from's checkpoint is a %s model: leave it out",
                mygpt_arch_name(c->arch));
        else
            say(err, "%s", "--untied-head contradicts --init-from's checkpoint (its head is the token embedding): "
                           "leave it out");
        return 1;
    }
    mygpt_arch arch;
    if (s->arch && (mygpt_arch_parse(s->arch, &arch, NULL) != MYGPT_OK || arch != c->arch)) {
        say(err, "--arch %s contradicts --init-from's checkpoint (arch %s): leave it out", s->arch,
            mygpt_arch_name(c->arch));
        return 1;
    }
    if (s->qkv_bias && !c->qkv_bias) {
        say(err, "%s", "--qkv-bias contradicts --init-from's checkpoint (no qkv bias): leave it out");
        return 1;
    }
    if (c->num_classes > 0) {
        say(err, "--init-from %s: a classifier (a head of %d classes), not a language model: train trains a language "
                 "model (mygpt finetune --task classify tunes a classifier)", s->init_from, c->num_classes);
        return 1;
    }
    if (g->weights != MYGPT_WEIGHTS_FP32) {
        say(err,
            "--init-from %s holds %s weights, for inference: training needs float32 ('mygpt quantize %s OUT "
            "--weights fp32' writes its dequantized float32 model)",
            s->init_from, mygpt_weights_name(g->weights), s->init_from);
        return 1;
    }
    return 0;
}

/* --init-from: the checkpoint read, the generator moved on as if its model were drawn.
 * MYGPT_OK, an error in err, or EXIT_USAGE in *rc after its message (a context too long). */
static mygpt_status model_from_checkpoint(session *S, int *rc)
{
    const train_settings *s = S->s;
    mygpt_error *err = &S->err;
    // llama2.c's .bin too, as --checkpoint reads it (a training state stays refused, named)
    mygpt_status st = mygpt_llama2c_file(s->init_from) ? mygpt_llama2c_load(&S->g, s->init_from, err)
                                                       : mygpt_checkpoint_load(&S->g, s->init_from, err);
    if (st == MYGPT_OK && init_from_agrees(s, S->g, err))
        st = MYGPT_EINVAL;
    if (st != MYGPT_OK)
        return st;
    S->g->config.dropout = s->cfg.dropout; // the architecture and sizes are the file's, p --dropout's
    const mygpt_config cfg = S->g->config;
    if ((st = mygpt_config_validate(&cfg, err)) != MYGPT_OK)
        return st;
    if (s->T > cfg.max_seq_len) {
        cli_error(S->cmd, "--context %lld exceeds the checkpoint's max_seq_len %d", (long long)s->T, cfg.max_seq_len);
        *rc = EXIT_USAGE;
        return MYGPT_OK;
    }
    return mygpt_gpt_skip_init(&cfg, &S->rng, err);
}

/* GPT-2 tokens (n ids, of `what`: --text FILE, --sample-prompt), each a row of the model's
 * embedding (a vocabulary smaller than GPT-2's lacks most of them): 0, or EXIT_USAGE after
 * the error */
static int ids_in_vocab(const session *S, const char *what, const int64_t *ids, size_t n)
{
    const long long V = S->g->config.vocab_size;
    for (size_t i = 0; i < n; i++)
        if (ids[i] >= V) {
            cli_error(S->cmd, "%s: its GPT-2 token %lld is outside the model's vocabulary of %lld (GPT-2's tokens "
                      "need --vocab 50257)", what, (long long)ids[i], V);
            return EXIT_USAGE;
        }
    return 0;
}

/* --sample-prompt's tokens into S->prompt, each one the model has: read before the first
 * step (not at the first epoch's end). 0, or EXIT_USAGE after the error. */
static int sample_prompt(session *S)
{
    const char *sp = S->s->sample_prompt;
    int rc;
    if (!sp)
        return 0;
    if ((rc = encode(S, "--sample-prompt", sp, strlen(sp), &S->prompt, &S->np)) ||
        (!S->sp && (rc = ids_in_vocab(S, "--sample-prompt", S->prompt, S->np))))
        return rc;
    if (S->np == 0) {
        cli_error(S->cmd, "--sample-prompt: the prompt has no tokens");
        return EXIT_USAGE;
    }
    return 0;
}

/* torch.manual_seed(seed); model = GPT(...) (or --init-from's), its trainer in train
 * mode; --save checked as it will find its place; the ranks agree on the model and the
 * data; room for a batch. 0, or the status after the error. */
static int session_model(session *S)
{
    const train_settings *s = S->s;
    mygpt_error *err = &S->err;
    int rc = 0;
    mygpt_rng_seed(&S->rng, s->seed); // the generator goes on to the loaders (and to dropout)
    mygpt_status st = s->init_from ? model_from_checkpoint(S, &rc) : mygpt_gpt_create_from(&S->g, &s->cfg, &S->rng, err);
    if (rc)
        return rc;
    if (st != MYGPT_OK || (st = mygpt_trainer_create(&S->tr, S->g, err)) != MYGPT_OK)
        return train_fail(&S->team, S->cmd, st, err);
    const int sp_vocab = S->sp ? mygpt_sp_vocab_size(S->sp) : 0;
    if (S->sp && sp_vocab != S->g->config.vocab_size) { // its ids are the model's rows, as run.c reads them
        cli_error(S->cmd, "--tokenizer %s holds %d tokens: the model's vocabulary must be the same (--vocab %d, "
                          "not %d)", s->tokenizer, sp_vocab, sp_vocab, S->g->config.vocab_size);
        return EXIT_USAGE;
    }
    char what[4200];
    snprintf(what, sizeof what, "--text %s", s->text);
    if (!S->sp && ((rc = ids_in_vocab(S, what, S->train_ids, S->ntrain)) ||
                   (rc = ids_in_vocab(S, what, S->val_ids, S->nval))))
        return rc;
    if ((rc = sample_prompt(S)))
        return rc;
    S->tr->dropout_rng = &S->rng; // model.train(): dropout draws when the model has any
    S->tr->decay_groups = s->decay_groups;
    // the save as it will find its place (a gpt2's config.json too): said now, not after the training
    if (S->team.rank == 0 && s->save && (st = mygpt_model_check_save(S->g, s->save, err)) != MYGPT_OK) {
        prefix(err, "--save: ");
        return train_fail(&S->team, S->cmd, st, err);
    }
    const mygpt_gpt *g = S->g;
    const dp_field model[] = {
        {"the model's parameter count", (unsigned long long)g->num_parameters, 'i'},
        {"the model's vocab_size", (unsigned long long)g->config.vocab_size, 'i'},
        {"the model's embed_dim", (unsigned long long)g->config.embed_dim, 'i'},
        {"the model's num_heads", (unsigned long long)g->config.num_heads, 'i'},
        {"the model's num_layers", (unsigned long long)g->config.num_layers, 'i'},
        {"the model's max_seq_len", (unsigned long long)g->config.max_seq_len, 'i'},
        {"the model's architecture", (unsigned long long)g->config.arch, 'i'},
        {"the initial weights", checksum(g->params_memory, g->num_parameters * sizeof(float)), 'h'},
        {"the training tokens (their count)", (unsigned long long)S->ntrain, 'i'},
        {"the validation tokens (their count)", (unsigned long long)S->nval, 'i'},
        {"the training tokens", checksum(S->train_ids, S->ntrain * sizeof *S->train_ids), 'h'}};
    dp_agree(&S->team, "mygpt train", model, (int)(sizeof model / sizeof model[0]));
    S->x = malloc((size_t)(s->B * s->T) * sizeof *S->x);
    S->y = malloc((size_t)(s->B * s->T) * sizeof *S->y);
    if (!S->x || !S->y) {
        cli_error(S->cmd, "out of memory");
        return EXIT_RUNTIME;
    }
    return 0;
}

/* ---- the settings a resume must share, and --resume ----------------------------------- */

/* Adds one setting, its value printf-formatted */
static void setting(run_settings *r, const char *key, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->v[r->n], sizeof r->v[r->n], fmt, ap);
    va_end(ap);
    r->s[r->n] = (mygpt_train_setting){key, r->v[r->n]};
    r->n++;
}

/* What a resumed run must share with the run that saved its state, into S->rs */
static void session_settings(session *S)
{
    const train_settings *s = S->s;
    run_settings *rs = &S->rs;
    const int book = s->epochs > 0;
    setting(rs, "--seed", "%llu", (unsigned long long)s->seed);
    setting(rs, "the loop", "%s", book ? "--epochs (the book's)" : "--steps (the course's)");
    setting(rs, "--context", "%lld", (long long)s->T);
    setting(rs, "--batch", "%lld", (long long)s->B);
    setting(rs, "--dropout", "%.17g", S->g->config.dropout);
    setting(rs, "--optimizer", "%s", s->adamw ? "adamw" : "sgd");
    setting(rs, "--lr", "%.17g", S->opt.lr);
    setting(rs, "--momentum", "%.17g", S->opt.momentum);
    setting(rs, "--weight-decay", "%.17g", S->opt.weight_decay);
    setting(rs, "--eval-every", "%lld", (long long)s->eval_every);
    setting(rs, "--eval-batches", "%lld", book ? (long long)s->eval_batches : 0LL);
    setting(rs, "--text", "%zu + %zu tokens, FNV-1a %016llx", S->ntrain, S->nval,
            checksum(S->train_ids, S->ntrain * sizeof *S->train_ids) ^
                checksum(S->val_ids, S->nval * sizeof *S->val_ids));
    // appendix D's, only when given (a state saved without them resumes as before)
    char value[40];
    if (s->warmup_given) {
        setting(rs, "--warmup", "%lld", (long long)S->schedule.warmup_steps);
        train_shortest(value, sizeof value, S->schedule.initial);
        setting(rs, "--lr-initial", "%s", value);
    }
    if (S->schedule.cosine) { // its decay spans the run: --steps or --epochs may not grow
        setting(rs, "--cosine", "over %ld steps", S->schedule.total_steps);
        train_shortest(value, sizeof value, S->schedule.min);
        setting(rs, "--lr-min", "%s", value);
    }
    if (s->clip > 0) {
        train_shortest(value, sizeof value, s->clip);
        setting(rs, "--clip-grad", "%s", value);
    }
    if (s->decay_groups)
        setting(rs, "--decay-groups", "%s", "on");
}

/* --resume FILE: the weights, the optimizer's state, the generator and the loader's order
 * read back, and S->pos where it stopped (not past the run's end). 0 (nothing to do
 * without the flag), or the status after the error. */
static int session_resume(session *S)
{
    const train_settings *s = S->s;
    if (!s->resume)
        return 0;
    mygpt_rng *rngs[1] = {&S->rng};
    const mygpt_status st = mygpt_train_state_load(
        s->resume, S->g, &(mygpt_train_run){&S->opt, rngs, 1, &S->train, &S->pos, S->rs.s, S->rs.n}, &S->err);
    if (st != MYGPT_OK) {
        prefix(&S->err, "--resume: ");
        return cli_fail(S->cmd, st, &S->err);
    }
    const mygpt_train_position *p = &S->pos;
    if (s->epochs > 0 ? p->epoch > s->epochs || (p->epoch == s->epochs && p->batch > 0) : p->step > s->steps) {
        cli_error(S->cmd, "--resume: %s is at step %lld, past the run's end (%s %lld): give more", s->resume, p->step,
                  s->epochs > 0 ? "--epochs" : "--steps", (long long)(s->epochs > 0 ? s->epochs : s->steps));
        return EXIT_USAGE;
    }
    return 0;
}

/* ---- after each step: progress, the log, the training state, Ctrl-C ------------------- */

/* Writes the training state where the run is to S->state: 0, or 1 after the error (its
 * status in S->rc) */
static int save_state(session *S)
{
    mygpt_error err = {0};
    mygpt_rng *rngs[1] = {&S->rng};
    const mygpt_status st = mygpt_train_state_save(
        S->state, S->g, &(mygpt_train_run){&S->opt, rngs, 1, &S->train, &S->at, S->rs.s, S->rs.n}, &err);
    if (st != MYGPT_OK) {
        progress_clear(&S->progress);
        const mygpt_error inner = err;
        snprintf(err.message, sizeof err.message, "the training state: %.*s", (int)sizeof err.message - 24,
                 inner.message);
        S->rc = cli_write_fail(S->cmd, st, &err);
        return 1;
    }
    S->saved_at = S->at.step;
    return 0;
}

/* --keep-best, after an evaluation of the model as it is after `steps` steps: the model
 * saved when val is the lowest validation loss yet (rank 0). 0, or 1 after the error (its
 * status in S->rc) */
static int keep_best(session *S, long steps, double val)
{
    if (!S->s->best || S->team.rank != 0 || (S->best_step >= 0 && !(val < S->best_val)))
        return 0;
    mygpt_error err = {0};
    const mygpt_status st = mygpt_model_save(S->g, S->s->best, &err);
    if (st != MYGPT_OK) {
        progress_clear(&S->progress);
        prefix(&err, "--keep-best: ");
        S->rc = cli_write_fail(S->cmd, st, &err);
        return 1;
    }
    S->best_val = val;
    S->best_step = steps;
    return 0;
}

/* Before a line the loop prints: the progress line goes first */
static void before_print(void *vctx)
{
    progress_clear(&((session *)vctx)->progress);
}

/* After every step (steps taken; the next step's epoch and batch; its loss; the
 * evaluation's train and validation losses or NULL): the progress line, the log's row,
 * the evaluation checked, the periodic save, Ctrl-C. Nonzero stops the run. */
static int after_step(void *vctx, long steps, long epoch, size_t batch, double loss, const double *eval)
{
    session *S = vctx;
    const double now = cli_now_s(), ms = 1e3 * (now - S->last);
    S->last = now;
    S->at = (mygpt_train_position){steps, epoch, (long long)batch};
    if (S->team.rank == 0) // opt->lr: the step's (a schedule sets it before each step)
        progress_step(&S->progress, steps, loss, S->opt.lr, eval != NULL);
    if (S->logp) {
        train_log_row(S->logp, steps - 1, loss, eval ? &eval[1] : NULL, S->opt.lr, ms);
        if ((eval || steps == S->progress.total) && (S->rc = train_log_write(S->cmd, S->logp)))
            return 1;
    }
    mygpt_error err = {0};
    if (eval && train_eval_check(steps - 1, eval, &err) != MYGPT_OK) { // logged, never saved
        cli_error(S->cmd, "%s", err.message);
        S->rc = EXIT_RUNTIME;
        return 1;
    }
    if (eval && keep_best(S, steps, eval[1]))
        return 1;
    train_test_sigint(steps);
    if (S->s->checkpoint_every > 0 && steps % S->s->checkpoint_every == 0 && save_state(S))
        return 1;
    S->interrupted = train_interrupted() && steps < S->progress.total; // after the last step: the run is done
    return S->interrupted;
}

/* ---- the two loops ----------------------------------------------------------------------- */

/* The book's train_model_simple (--epochs), from S->pos: *step the steps taken at the end,
 * *tokens the tokens this run trained on. MYGPT_OK, or an error in S->err. */
static mygpt_status run_book(session *S, long long *step, long long *tokens)
{
    const train_settings *s = S->s;
    const book_run run = {.epochs = s->epochs, .eval_every = s->eval_every,
                          .eval_batches = s->eval_batches > 0 ? (size_t)s->eval_batches : SIZE_MAX, .tok = S->tok,
                          .prompt = S->prompt, .n_prompt = S->np, .sample_tokens = (int)s->sample_tokens,
                          .start_step = (long)S->pos.step, .start_epoch = (long)S->pos.epoch,
                          .start_batch = (size_t)S->pos.batch, .after_step = after_step,
                          .before_print = before_print, .ctx = S,
                          .schedule = s->scheduled ? &S->schedule : NULL, .clip_norm = s->clip,
                          .clip_from = S->schedule.warmup_steps};
    long taken = 0;
    const mygpt_status st = book_train(stdout, S->tr, &S->opt, &S->train, &S->val, &S->rng, &run, S->x, S->y, &taken,
                                       &S->err);
    *tokens = (taken - *step) * s->B * s->T;
    *step = taken;
    return st;
}

/* The course's step on batch b (*step before it, counted): the schedule's lr, the step
 * (data-parallel, clipped after the warmup), and at an evaluation's step the validation
 * loss printed as "step N train_loss X val_loss Y". *shown the global batch's loss; ev
 * the step's and the validation loss when *evaluated. */
static mygpt_status course_step(session *S, size_t b, long long step, double *shown, double ev[2], int *evaluated)
{
    const train_settings *s = S->s;
    mygpt_error *err = &S->err;
    mygpt_status st = mygpt_dataloader_batch(&S->train, b, S->x, S->y, err);
    if (s->scheduled) // appendix D: for param_group in optimizer.param_groups: param_group["lr"] = lr
        S->opt.lr = mygpt_lr_at(&S->schedule, (long)step);
    const double clip_now = s->clip > 0 && step >= S->schedule.warmup_steps ? s->clip : 0.0; // after the warmup
    if (st == MYGPT_OK)
        st = dp_train_step_clipped(&S->team, S->tr, &S->opt, S->x, S->y, (int)s->B, (int)s->T, (long)step,
                                   s->check_replicas, "mygpt train", clip_now, shown, NULL, err);
    if (st != MYGPT_OK || !(step % s->eval_every == 0 || step == s->steps - 1))
        return st;
    st = dp_val_loss(&S->team, S->g, &S->val, &S->rng, S->x, S->y, &ev[1], err);
    ev[0] = *shown;
    *evaluated = st == MYGPT_OK;
    progress_clear(&S->progress);
    char tl[64], vl[64];
    if (st == MYGPT_OK && S->team.rank == 0)
        printf("step %lld train_loss %s val_loss %s\n", step, mygpt_py_fixed_str(tl, sizeof tl, *shown, 6),
               mygpt_py_fixed_str(vl, sizeof vl, ev[1], 6));
    fflush(stdout);
    return st;
}

/* The course's loop (--steps), from S->pos: for x, y in train_loader, a step each, every
 * epoch's order drawn (a resumed epoch's came with the state). *step, *tokens as
 * run_book's. */
static mygpt_status run_course(session *S, long long *step, long long *tokens)
{
    const train_settings *s = S->s;
    const mygpt_train_position pos = S->pos;
    mygpt_status st = MYGPT_OK;
    int stop = 0;
    for (long long epoch = pos.epoch; *step < s->steps && st == MYGPT_OK && !stop; epoch++) {
        const int resumed = epoch == pos.epoch && pos.batch > 0; // its order came with the state
        if (!resumed)
            st = mygpt_dataloader_epoch(&S->train, &S->rng, 1, &S->err); // for x, y in train_loader:
        for (size_t b = resumed ? (size_t)pos.batch : 0;
             b < S->train.num_batches && st == MYGPT_OK && *step < s->steps && !stop; b++) {
            double shown = 0, ev[2] = {0, 0}; // the global batch's loss; the step's and the validation loss
            int evaluated = 0;
            st = course_step(S, b, *step, &shown, ev, &evaluated);
            *tokens += s->B * s->T;
            ++*step;
            const int last = b + 1 == S->train.num_batches;
            if (st == MYGPT_OK)
                stop = after_step(S, (long)*step, (long)(last ? epoch + 1 : epoch), last ? 0 : b + 1, shown,
                                  evaluated ? ev : NULL);
        }
    }
    return st;
}

/* ---- the run's end ------------------------------------------------------------------------ */

/* Ctrl-C stopped the run after a step: the log written, the state saved (unless it has
 * no place). Returns the status after an error, or -1: end as Ctrl-C ends a program. */
static int end_interrupted(session *S)
{
    int rc = 0;
    if (S->logp)
        rc = train_log_write(S->cmd, S->logp);
    const char *path = S->s->state;
    if (!S->state)
        cli_say(stderr, "mygpt train: interrupted after step %lld: no training state saved (%s: %s)", S->at.step,
                path, S->s->state_refused);
    else if (S->saved_at == S->at.step || !save_state(S))
        cli_say(stderr, "mygpt train: interrupted after step %lld: the training state is in %s (the same "
                        "command with --resume %s continues it)", S->at.step, path, path);
    return rc ? rc : S->rc ? S->rc : -1;
}

/* The run's last lines (rank 0): where --keep-best's model is, and what its folder holds */
static void say_files(const session *S)
{
    const train_settings *s = S->s;
    char val[64];
    if (s->best && S->best_step >= 0)
        cli_say(stderr, "mygpt train: the lowest validation loss, %s at step %lld, is the model in %s",
                mygpt_py_fixed_str(val, sizeof val, S->best_val, 6), S->best_step - 1, s->best);
    if (!s->run_dir)
        return;
    char plot[4100];
    if (s->log)
        train_log_plot_path(plot, sizeof plot, s->log);
    const char *files[] = {s->save, S->saved_at >= 0 ? S->state : NULL, s->log, s->log ? plot : NULL,
                           S->best_step >= 0 ? s->best : NULL};
    run_folder_say("train", s->run_dir, files, 5);
}

/* After the loop (st its end; step and tokens its count, t0 its start): the failure said,
 * or Ctrl-C's end, or the summary on stderr and --save written. 0, -1 (Ctrl-C), or the
 * status after the error. */
static int session_end(session *S, mygpt_status st, long long step, long long tokens, double t0)
{
    progress_clear(&S->progress);
    if (st != MYGPT_OK)
        return train_fail(&S->team, S->cmd, st, &S->err);
    if (S->rc) // a save or the log failed (said)
        return S->rc;
    if (S->interrupted) // the step finished; the state saved; the run ends as Ctrl-C ends it
        return end_interrupted(S);
    const double secs = cli_now_s() - t0;
    const long long first = S->pos.step;
    if (S->team.rank == 0) {
        fprintf(stderr, "mygpt train: %lld steps, %lld tokens in %.2f s: %.0f tokens/s", step - first, tokens, secs,
                tokens / secs);
        if (first > 0)
            fprintf(stderr, " (resumed at step %lld)", first);
        fprintf(stderr, S->team.size > 1 ? " (%d processes)\n" : "\n", S->team.size);
    }
    if (S->team.rank == 0 && S->s->save && (st = mygpt_model_save(S->g, S->s->save, &S->err)) != MYGPT_OK) {
        if (S->team.size > 1)
            dp_abort(&S->team, "mygpt train", cli_write_exit_code(st), S->err.message);
        return cli_write_fail(S->cmd, st, &S->err); // a full disk: a runtime failure, 1
    }
    if (S->team.rank != 0)
        return 0;
    if (S->s->state_at_end && S->state && S->saved_at != S->at.step && save_state(S))
        return S->rc;
    say_files(S);
    return 0;
}

/* The log opened (rank 0), the progress line started, Ctrl-C caught (a team of one), then
 * the loop and its end. 0, -1 (Ctrl-C), or the status after the error. */
static int session_loop(session *S)
{
    const train_settings *s = S->s;
    int rc;
    S->state = s->state_refused ? NULL : s->state;
    S->at = S->pos;
    S->saved_at = -1;
    S->best_step = -1;
    if (S->team.rank == 0 && s->log && (rc = train_log_open(S->cmd, &S->log, s->log, S->pos.step)))
        return rc; // before the run is announced: a refusal is its one line
    if (S->team.rank == 0 && s->run_dir)
        run_folder_announce(S->cmd, s->run_dir, s->save, S->state, s->log);
    S->logp = S->team.rank == 0 && s->log ? &S->log : NULL;
    const int had_best = s->best && S->pos.step > 0 && access(s->best, F_OK) == 0;
    for (size_t i = 0; S->logp && had_best && i < S->log.nv; i++) // a resumed run's best so far, from its log
        if (S->best_step < 0 || S->log.val[i] < S->best_val) {
            S->best_val = S->log.val[i];
            S->best_step = (long long)S->log.vx[i] + 1;
        }
    progress_start(&S->progress, stderr, S->pos.step,
                   s->epochs > 0 ? s->epochs * (long long)S->train.num_batches : s->steps, s->B * s->T, s->scheduled);
    S->log.lr_curve = s->scheduled;
    if (S->team.size == 1)
        train_catch_sigint();
    const double t0 = cli_now_s();
    S->last = t0;
    long long step = S->pos.step, tokens = 0;
    const mygpt_status st = s->epochs > 0 ? run_book(S, &step, &tokens) : run_course(S, &step, &tokens);
    return session_end(S, st, step, tokens, t0);
}

/* ---- the run ---------------------------------------------------------------------------- */

/* sgd or adamw, with the settings' lr, momentum and weight decay */
static void session_optimizer(session *S)
{
    const train_settings *s = S->s;
    if (s->adamw) {
        mygpt_adamw_init(&S->opt, s->lr);
    } else {
        mygpt_sgd_init(&S->opt, s->lr);
        S->opt.momentum = s->momentum;
    }
    if (s->weight_decay >= 0)
        S->opt.weight_decay = s->weight_decay;
}

int train_session_run(const train_settings *s)
{
    if (s->cfg.arch == MYGPT_ARCH_NANOGPT) // nanoGPT's train.py, its own loop
        return nanogpt_train_run(s);
    session *S = calloc(1, sizeof *S);
    if (!S) {
        cli_error(s->cmd, "out of memory");
        return EXIT_RUNTIME;
    }
    S->s = s;
    S->cmd = s->cmd;
    S->team = (dp_team){0, 1, 0};
    S->schedule = s->schedule;
    int rc = session_team(S);
    if (rc) {
        free(S);
        return rc;
    }
    session_optimizer(S);
    if (!(rc = session_data(S)) && !(rc = session_model(S))) {
        session_settings(S);
        if (!(rc = session_resume(S)))
            rc = session_loop(S);
    }
    if (rc != 0 && S->team.size > 1) // whatever failed here (said above) ends every rank, none is left waiting
        dp_abort(&S->team, "mygpt train", rc, "this rank failed (its error is above): the job ends");
    dp_stop(&S->team);
    train_log_free(&S->log);
    mygpt_optimizer_free(&S->opt);
    mygpt_dataloader_free(&S->train);
    mygpt_dataloader_free(&S->val);
    mygpt_tokenizer_free(S->tok);
    mygpt_sp_free(S->sp);
    mygpt_trainer_free(S->tr);
    mygpt_gpt_free(S->g);
    free(S->text);
    free(S->train_ids);
    free(S->val_ids);
    free(S->prompt);
    free(S->x);
    free(S->y);
    free(S);
    if (rc == -1) // interrupted, the state saved: the run ends as Ctrl-C ends it
        train_end_by_sigint();
    return rc;
}
