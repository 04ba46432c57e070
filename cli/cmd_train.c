/*
 * cmd_train.c - `mygpt loss`, `mygpt grad` and `mygpt train`: what
 * tools/reference_train.py computes in PyTorch, from the command line.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "data_parallel.h"
#include "train_step.h"
#include "commands.h"
#include "book_train.h"
#include "model_args.h"
#include "mygpt/checkpoint.h"
#include "mygpt/generate.h"
#include "mygpt/print.h"
#include "mygpt/data.h"
#include "mygpt/tokenizer.h"
#include "mygpt/train.h"
#include "mygpt/train_state.h"
#include "output.h"
#include "train_extras.h"

/* --seed, the model, --ids and --targets (the same shape) for loss and grad. */
static int model_ids_targets(const char *cmd, const parsed_args *a, mygpt_gpt **gpt, mygpt_rng *rng,
                             int64_t **ids, int64_t **tg, int *B, int *T)
{
    mygpt_config cfg;
    uint64_t seed;
    int rc, B2, T2;
    if (read_seed_and_config(cmd, a, &seed, &cfg))
        return EXIT_USAGE;
    if (!args_has(a, "ids") || !args_has(a, "targets")) {
        cli_error(cmd, "--ids and --targets are required (e.g. --ids \"0,1,2\" --targets \"1,2,3\")");
        return EXIT_USAGE;
    }
    if ((rc = parse_ids(cmd, args_get(a, "ids"), ids, B, T)))
        return rc;
    if ((rc = parse_ids(cmd, args_get(a, "targets"), tg, &B2, &T2))) {
        free(*ids);
        return rc;
    }
    if (B2 != *B || T2 != *T) {
        cli_error(cmd, "--targets is %d x %d but --ids is %d x %d: they must have the same shape", B2, T2,
                  *B, *T);
        free(*ids);
        free(*tg);
        return EXIT_USAGE;
    }
    // set_seed(S); GPT(...): the generator goes on to the dropouts in train mode
    mygpt_error err = {0};
    mygpt_rng_seed(rng, seed);
    const mygpt_status st = mygpt_gpt_create_from(gpt, &cfg, rng, &err);
    if (st != MYGPT_OK) {
        free(*ids);
        free(*tg);
        return cli_fail(cmd, st, &err);
    }
    return 0;
}

/* What loss and grad share: their flags (usage printed for --help: returns -1), the
 * output format, the model, ids and targets. */
static int loss_grad_setup(const char *cmd, int argc, char **argv, const char *usage, out_options *o,
                           mygpt_gpt **g, mygpt_rng *rng, int64_t **ids, int64_t **tg, int *B, int *T)
{
    static const arg_spec ARGS[] = {MODEL_FLAGS, {"ids", 1, 0}, {"targets", 1, 0}, {"format", 1, 0},
                                    {NULL, 0, 0}};
    parsed_args a;
    const int rc = args_parse(cmd, argc, argv, ARGS, 0, &a);
    if (rc < 0) {
        fputs(usage, stdout);
        return -1;
    }
    if (rc)
        return rc;
    if (out_options_parse(cmd, args_get(&a, "format"), NULL, o))
        return EXIT_USAGE;
    return model_ids_targets(cmd, &a, g, rng, ids, tg, B, T);
}

int cmd_loss(int argc, char **argv)
{
    const char *cmd = "loss";
    out_options o;
    mygpt_rng rng = {0};
    mygpt_gpt *g;
    int64_t *ids, *tg;
    int B, T;
    int rc = loss_grad_setup(
        cmd, argc, argv,
        "usage: mygpt loss --seed S --vocab V --embed C --heads H --layers N [--max-seq M]\n"
        "                  --ids \"0,1,2;...\" --targets \"1,2,3;...\" [--format torch|exact]\n"
        "\n"
        "                  [--arch NAME [--qkv-bias] [--dropout P]]\n"
        "\n"
        "set_seed(S); gpt = GPT(V, C, H, N, M); print(F.cross_entropy(gpt(ids).flatten(0, 1),\n"
        "targets.flatten())): the mean cross-entropy, bit for bit as PyTorch computes it\n"
        "from these logits. --format exact prints its float32 bits as 8 hex digits. With\n"
        "--dropout P (llms-from-scratch, gpt2) the model is in train mode: its dropouts draw\n"
        "from the generator as it is after building the model.\n",
        &o, &g, &rng, &ids, &tg, &B, &T);
    if (rc)
        return rc < 0 ? 0 : rc;
    float loss;
    mygpt_error err = {0};
    mygpt_trainer *tr = NULL;
    mygpt_status st;
    if (g->config.dropout > 0.0) { // model.train(): the dropouts draw
        if ((st = mygpt_trainer_create(&tr, g, &err)) == MYGPT_OK) {
            tr->dropout_rng = &rng;
            st = mygpt_trainer_forward(tr, ids, tg, B, T, &loss, &err);
        }
        mygpt_trainer_free(tr);
    } else {
        st = mygpt_gpt_loss(g, ids, tg, B, T, &loss, &err);
    }
    if (st != MYGPT_OK) {
        rc = cli_fail(cmd, st, &err);
    } else {
        mygpt_tview v;
        mygpt_tview_make(&v, MYGPT_F32, &loss, 0, NULL, NULL);
        const mygpt_torch_opts opts = {.grad_fn = "NllLossBackward0"};
        rc = out_print(cmd, &o, &v, &opts);
    }
    free(ids);
    free(tg);
    mygpt_gpt_free(g);
    return rc;
}

int cmd_grad(int argc, char **argv)
{
    const char *cmd = "grad";
    out_options o;
    mygpt_rng rng = {0};
    mygpt_gpt *g;
    int64_t *ids, *tg;
    int B, T;
    int rc = loss_grad_setup(
        cmd, argc, argv,
        "usage: mygpt grad --seed S --vocab V --embed C --heads H --layers N [--max-seq M]\n"
        "                  --ids \"0,1,2;...\" --targets \"1,2,3;...\" [--format torch|exact]\n"
        "\n"
        "                  [--arch NAME [--qkv-bias] [--dropout P]]\n"
        "\n"
        "After one F.cross_entropy(...).backward() of GPT(V, C, H, N, M) built with set_seed(S):\n"
        "for name, p in gpt.named_parameters(): print(name); print(p.grad).\n"
        "--format exact prints only the values, one float32 per line as 8 hex digits. With\n"
        "--dropout P the model is in train mode (the generator as after building it).\n",
        &o, &g, &rng, &ids, &tg, &B, &T);
    if (rc)
        return rc < 0 ? 0 : rc;
    float loss;
    mygpt_error err = {0};
    mygpt_trainer *tr = NULL;
    mygpt_status st = mygpt_trainer_create(&tr, g, &err);
    if (st == MYGPT_OK) {
        tr->dropout_rng = g->config.dropout > 0.0 ? &rng : NULL; // model.train() with dropout
        st = mygpt_trainer_forward(tr, ids, tg, B, T, &loss, &err);
    }
    if (st == MYGPT_OK)
        st = mygpt_trainer_backward(tr, &err);
    rc = st != MYGPT_OK ? cli_fail(cmd, st, &err) : print_named_tensors(cmd, &o, &g->config, &tr->grads, NULL);
    free(ids);
    free(tg);
    mygpt_trainer_free(tr);
    mygpt_gpt_free(g);
    return rc;
}

/* An error after MPI started: this rank says what and ends the job (no rank may be left
 * waiting for it); with one process, the usual one line and status. */
static int train_fail(const dp_team *team, const char *cmd, mygpt_status st, const mygpt_error *err)
{
    if (team->size > 1)
        dp_abort(team, "mygpt train", err->message);
    return train_loop_fail(cmd, st, err);
}

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

static void say(mygpt_error *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    err->code = MYGPT_EINVAL;
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
}

/* --init-from takes the checkpoint's architecture and sizes: a model flag given beside it
 * must say the same (a contradiction is refused, not ignored). 0, or a message in err. */
static int init_from_agrees(const parsed_args *a, const mygpt_gpt *g, mygpt_error *err)
{
    const mygpt_config *c = &g->config;
    const struct {
        const char *flag, *field;
        int have;
    } f[] = {{"vocab", "vocab_size", c->vocab_size},
             {"embed", "embed_dim", c->embed_dim},
             {"heads", "num_heads", c->num_heads},
             {"layers", "num_layers", c->num_layers},
             {"max-seq", "max_seq_len", c->max_seq_len}};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        const char *v = args_get(a, f[i].flag);
        char *end;
        if (!v)
            continue;
        errno = 0;
        const long long n = strtoll(v, &end, 10);
        if (*v == '\0' || *end != '\0' || errno || n != f[i].have) {
            say(err, "--%s %s contradicts --init-from's checkpoint (%s %d): leave it out",
                       f[i].flag, v, f[i].field, f[i].have);
            return 1;
        }
    }
    mygpt_arch arch;
    if (args_has(a, "arch") &&
        (mygpt_arch_parse(args_get(a, "arch"), &arch, NULL) != MYGPT_OK || arch != c->arch)) {
        say(err, "--arch %s contradicts --init-from's checkpoint (arch %s): leave it out",
                   args_get(a, "arch"), mygpt_arch_name(c->arch));
        return 1;
    }
    if (args_has(a, "qkv-bias") && !c->qkv_bias) {
        say(err, "%s", "--qkv-bias contradicts --init-from's checkpoint (no qkv bias): leave it out");
        return 1;
    }
    if (g->weights != MYGPT_WEIGHTS_FP32) {
        say(err,
                   "--init-from %s holds %s weights, for inference: training needs float32 ('mygpt quantize %s OUT "
                   "--weights fp32' writes its dequantized float32 model)",
                   args_get(a, "init-from"), mygpt_weights_name(g->weights), args_get(a, "init-from"));
        return 1;
    }
    return 0;
}

/* What a run does after each step, for both loops: the progress line, the log's row,
 * the periodic save of the training state, Ctrl-C. */
typedef struct run_ctx {
    const char *cmd;
    train_progress progress;
    int show;                       /* this rank prints (rank 0)                     */
    train_log *log;                 /* or NULL                                       */
    double last;                    /* when the previous step ended                  */
    const char *state;              /* where the training state goes, or NULL        */
    long long every;                /* --checkpoint-every, or 0                      */
    mygpt_gpt *g;
    mygpt_optimizer *opt;
    mygpt_rng *rng;
    mygpt_dataloader *train;
    const mygpt_train_setting *settings;
    int nsettings;
    mygpt_train_position at;        /* where the run is                              */
    long long saved_at;             /* the step of the last state saved, or -1       */
    int interrupted, rc;            /* Ctrl-C came; a failure's exit code (said)     */
} run_ctx;

static int save_state(run_ctx *c)
{
    mygpt_error err = {0};
    mygpt_rng *rngs[1] = {c->rng};
    const mygpt_status st = mygpt_train_state_save(
        c->state, c->g, &(mygpt_train_run){c->opt, rngs, 1, c->train, &c->at, c->settings, c->nsettings}, &err);
    if (st != MYGPT_OK) {
        progress_clear(&c->progress);
        const mygpt_error inner = err;
        snprintf(err.message, sizeof err.message, "the training state: %.*s", (int)sizeof err.message - 24,
                 inner.message);
        c->rc = cli_write_fail(c->cmd, st, &err);
        return 1;
    }
    c->saved_at = c->at.step;
    return 0;
}

static void before_print(void *vctx)
{
    progress_clear(&((run_ctx *)vctx)->progress);
}

/* After every step (steps taken; the next step's epoch and batch; its loss; the
 * evaluation's train and validation losses or NULL): nonzero stops the run. */
static int after_step(void *vctx, long steps, long epoch, size_t batch, double loss, const double *eval)
{
    run_ctx *c = vctx;
    const double now = cli_now_s(), ms = 1e3 * (now - c->last);
    c->last = now;
    c->at = (mygpt_train_position){steps, epoch, (long long)batch};
    if (c->show) // opt->lr: the step's (a schedule sets it before each step)
        progress_step(&c->progress, steps, loss, c->opt->lr, eval != NULL);
    if (c->log) {
        train_log_row(c->log, steps - 1, loss, eval ? &eval[1] : NULL, c->opt->lr, ms);
        if ((eval || steps == c->progress.total) && (c->rc = train_log_write(c->cmd, c->log)))
            return 1;
    }
    mygpt_error err = {0};
    if (eval && train_eval_check(steps - 1, eval, &err) != MYGPT_OK) { // logged, never saved
        cli_error(c->cmd, "%s", err.message);
        c->rc = EXIT_RUNTIME;
        return 1;
    }
    train_test_sigint(steps);
    if (c->every > 0 && steps % c->every == 0 && save_state(c))
        return 1;
    c->interrupted = train_interrupted() && steps < c->progress.total; // after the last step: the run is done
    return c->interrupted;
}

/* The settings a resumed run must share with the run that saved its state: what
 * decides the numbers of every step (not --steps or --epochs: a run may go on longer) */
typedef struct run_settings {
    char v[20][96];
    mygpt_train_setting s[20];
    int n;
} run_settings;

static void setting(run_settings *r, const char *key, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->v[r->n], sizeof r->v[r->n], fmt, ap);
    va_end(ap);
    r->s[r->n] = (mygpt_train_setting){key, r->v[r->n]};
    r->n++;
}

/* The schedule's length (total steps of the run, which `length` names) and whether the
 * library takes it; 0, or EXIT_USAGE after one line naming the flags. The values were
 * checked as flags were read: what is left is a cosine with no step after the warmup. */
static int schedule_check(const char *cmd, mygpt_lr_schedule *s, long long total, const char *length)
{
    s->total_steps = (long)total;
    mygpt_error err = {0};
    if (mygpt_lr_schedule_check(s, &err) == MYGPT_OK)
        return 0;
    cli_error(cmd, "--cosine: %s (give fewer --warmup steps, or more %s)", err.message, length);
    return EXIT_USAGE;
}

/* A double as the shortest text that reads back as the same bits (a setting's value) */
static void shortest(char *out, size_t n, double v)
{
    for (int digits = 1; digits <= 17; digits++) {
        snprintf(out, n, "%.*g", digits, v);
        if (strtod(out, NULL) == v)
            return;
    }
}

int cmd_train(int argc, char **argv)
{
    const char *cmd = "train";
    static const arg_spec ARGS[] = {MODEL_FLAGS,          {"text", 1, 0},  {"context", 1, 0},
                                    {"batch", 1, 0},      {"steps", 1, 0}, {"optimizer", 1, 0},
                                    {"lr", 1, 0},         {"momentum", 1, 0}, {"weight-decay", 1, 0},
                                    {"eval-every", 1, 0}, {"save", 1, 0},  {"data-parallel", 0, 0},
                                    {"check-replicas", 0, 0}, {"epochs", 1, 0}, {"eval-batches", 1, 0},
                                    {"sample-prompt", 1, 0}, {"sample-tokens", 1, 0}, {"init-from", 1, 0},
                                    {"preset", 1, 0}, {"log", 1, 0}, {"checkpoint-every", 1, 0},
                                    {"state", 1, 0}, {"resume", 1, 0}, {"warmup", 1, 0},
                                    {"lr-initial", 1, 0}, {"cosine", 0, 0}, {"lr-min", 1, 0},
                                    {"clip-grad", 1, 0}, {NULL, 0, 0}};
    parsed_args a;
    int rc = args_parse(cmd, argc, argv, ARGS, 0, &a);
    if (rc < 0) {
        printf("usage: mygpt train --text FILE [--preset NAME] [flags that change it]\n"
               "\n"
               "       flags: --seed S (--vocab V --embed C --heads H --layers N [--max-seq M]\n"
               "                   [--arch A [--qkv-bias]] | --init-from FILE) [--dropout P]\n"
               "                   --context T --batch B (--steps K | --epochs N)\n"
               "                   --optimizer sgd|adamw --lr LR [--momentum M] [--weight-decay WD]\n"
               "                   [--warmup K [--lr-initial LR0]] [--cosine [--lr-min LRMIN]]\n"
               "                   [--clip-grad NORM]\n"
               "                   [--eval-every E] [--save FILE.safetensors] [--log FILE.csv]\n"
               "                   [--checkpoint-every K] [--state FILE] [--resume FILE]\n"
               "                   [--data-parallel [--check-replicas]]\n"
               "                   [--eval-batches K] [--sample-prompt TEXT] [--sample-tokens N]\n"
               "\n"
               "Every flag but --text has a default: the preset's (verdict unless --preset names\n"
               "another); a flag given wins over the preset's. The presets:\n");
        train_print_presets(stdout);
        printf("\n"
               "--epochs N runs the book's train_model_simple instead (Build a Large Language Model\n"
               "(From Scratch), chapter 5): N epochs of the shuffled batches; after the steps with\n"
               "step %% E == 0 (default 1) the mean loss of the first K batches of fresh train and\n"
               "validation loaders in eval mode, as 'Ep 1 (Step 000000): Train loss 9.781, Val loss 9.933';\n"
               "after each epoch N greedy tokens (default 50) after TEXT, newlines as spaces.\n"
               "--init-from FILE starts from a checkpoint (its architecture and sizes; the book's\n"
               "model or a Hugging Face GPT-2 too), the generator moved on as if the model were\n"
               "built first. --dropout P: train mode (llms-from-scratch, gpt2).\n"
               "\n"
               "Trains GPT(V, C, H, N, M) (built with set_seed(S)) on FILE's GPT-2 tokens: the first\n"
               "90%% of its characters train, the rest validate, in windows of T tokens every T;\n"
               "training batches shuffled as DataLoader(shuffle=True, drop_last=True) orders them,\n"
               "with torch.optim.SGD (momentum and weight decay 0 unless given) or AdamW (weight\n"
               "decay 0.01 unless given). Every E steps (the preset's: 20 for verdict) and at the\n"
               "last step prints\n"
               "  step N train_loss X val_loss Y\n"
               "the batch's loss and the mean loss over every validation batch. On stderr, a\n"
               "progress line (step, loss, ms/step, tokens/s, the time left): redrawn after every\n"
               "step on a terminal, one line per evaluation in a pipe; at the end, tokens/s.\n"
               "tools/reference_train.py is the same in PyTorch. The GPT-2 vocabulary comes from the\n"
               "data folder ($MYGPT_DATA, else build/data beside the program, else PREFIX/share/mygpt).\n"
               "\n"
               "--log FILE.csv writes a row per step (step,train_loss,val_loss,lr,ms; val_loss only\n"
               "where the step evaluated) and FILE.svg, the plot of both losses, after every\n"
               "evaluation and at the end (an SVG there that is not such a plot is not replaced).\n"
               "\n"
               "The book's appendix D (train_model), for either loop: --warmup K raises the learning\n"
               "rate linearly from --lr-initial (default 1e-5, the book's) to the peak --lr over the\n"
               "first K steps (lr = LR0 + step * (LR - LR0) / K); --cosine then lowers it along half\n"
               "a cosine to --lr-min (default 1e-5, the book's) at the run's end (--steps, or --epochs\n"
               "times the batches of an epoch); without --cosine it stays at --lr. --clip-grad NORM\n"
               "scales the gradient down to norm NORM when it is longer (clip_grad_norm_), from the\n"
               "first step after the warmup (step >= K) on. The log's lr column is each step's; the\n"
               "progress line shows it too, and the plot its curve.\n"
               "\n"
               "The training state (the weights, AdamW's moments or SGD's momentum, the step, the\n"
               "generator, the loader's epoch and order) goes to --state FILE (default: --save's\n"
               "name with .state.safetensors, else mygpt-train.state.safetensors; a file there that\n"
               "is not a training state is never replaced) every K steps with --checkpoint-every K,\n"
               "and on Ctrl-C: the step finishes, the state is saved, the run ends (a second Ctrl-C\n"
               "ends it at once). --resume FILE continues such a state with the same flags (--steps\n"
               "or --epochs may grow, but for --cosine, whose decay spans the run): it prints what\n"
               "the run would have printed, bit for bit.\n"
               "\n"
               "--data-parallel, under mpirun -np P (a build with MPI): every process holds the model\n"
               "and takes rows [r*B/P, (r+1)*B/P) of each global batch of B; the gradients are\n"
               "averaged (reduced on rank 0 and broadcast) before the same optimizer step on every\n"
               "rank, so the batches, their order and the losses do not depend on P (up to the\n"
               "grouping of sums). Rank 0 alone prints and saves. --check-replicas compares the\n"
               "parameters' checksums across ranks after every step. P must not exceed B. The\n"
               "schedule and --clip-grad work there too (the norm is the averaged gradient's).\n");
        return 0;
    }
    if (rc || (rc = train_apply_preset(cmd, &a, ARGS)))
        return rc;
    mygpt_config cfg;
    uint64_t seed;
    int64_t T, B, steps = 0, every = 1, epochs = 0, eval_batches = 0, sample_tokens = 50, ckpt_every = 0;
    double lr = 0, momentum = 0, wd = -1;
    // --init-from: the architecture and sizes are the checkpoint's (only --dropout is taken)
    const int init_from = args_has(&a, "init-from");
    memset(&cfg, 0, sizeof cfg);
    cfg.max_seq_len = 1 << 24; // --context is checked against the checkpoint's once it is read
    if (init_from && (!args_has(&a, "seed") || parse_seed(cmd, "seed", args_get(&a, "seed"), &seed) ||
                      (args_has(&a, "dropout") && parse_double(cmd, "dropout", args_get(&a, "dropout"), &cfg.dropout)))) {
        if (!args_has(&a, "seed"))
            cli_error(cmd, "--seed is required");
        return EXIT_USAGE;
    }
    if ((!init_from && read_seed_and_config(cmd, &a, &seed, &cfg)) ||
        args_i64_in(cmd, &a, "context", 1, cfg.max_seq_len, 1, &T) ||
        args_i64_in(cmd, &a, "batch", 1, 1 << 20, 1, &B) ||
        args_i64_in(cmd, &a, "steps", 1, 1 << 30, !args_has(&a, "epochs"), &steps) ||
        args_i64_in(cmd, &a, "epochs", 1, 1 << 20, 0, &epochs) ||
        args_i64_in(cmd, &a, "eval-batches", 1, 1 << 30, 0, &eval_batches) ||
        args_i64_in(cmd, &a, "sample-tokens", 0, 1 << 20, 0, &sample_tokens) ||
        args_i64_in(cmd, &a, "eval-every", 1, 1 << 30, 0, &every) ||
        args_i64_in(cmd, &a, "checkpoint-every", 1, 1 << 30, 0, &ckpt_every) ||
        args_double_min(cmd, &a, "momentum", 0, &momentum) || args_double_min(cmd, &a, "weight-decay", 0, &wd))
        return EXIT_USAGE;
    if (!args_has(&a, "text")) {
        cli_error(cmd, "--text FILE is required: the text to train on (the course's: corpus/the-verdict.txt)");
        return EXIT_USAGE;
    }
    if (args_double_min(cmd, &a, "lr", 0, &lr))
        return EXIT_USAGE;
    // appendix D's bells: the schedule's length is known once the loop's steps are
    mygpt_lr_schedule schedule = {.peak = lr, .initial = 1e-5, .min = 1e-5, .cosine = args_has(&a, "cosine")};
    int64_t warmup = 0;
    double clip = 0;
    const int scheduled = args_has(&a, "warmup") || args_has(&a, "cosine");
    if (args_i64_in(cmd, &a, "warmup", 0, 1 << 30, 0, &warmup) ||
        args_double_min(cmd, &a, "lr-initial", 0, &schedule.initial) ||
        args_double_min(cmd, &a, "lr-min", 0, &schedule.min) || args_double_min(cmd, &a, "clip-grad", 0, &clip))
        return EXIT_USAGE;
    schedule.warmup_steps = (long)warmup;
    if (args_has(&a, "clip-grad") && !(clip > 0)) {
        cli_error(cmd, "--clip-grad must be more than 0 (the longest gradient kept), got %s", args_get(&a, "clip-grad"));
        return EXIT_USAGE;
    }
    if (args_has(&a, "lr-initial") && !args_has(&a, "warmup")) {
        cli_error(cmd, "--lr-initial goes with --warmup (the learning rate the warmup starts from)");
        return EXIT_USAGE;
    }
    if (args_has(&a, "lr-min") && !args_has(&a, "cosine")) {
        cli_error(cmd, "--lr-min goes with --cosine (the learning rate the decay ends at)");
        return EXIT_USAGE;
    }
    if (scheduled && !args_has(&a, "epochs") && schedule_check(cmd, &schedule, steps, "--steps"))
        return EXIT_USAGE;
    if (args_has(&a, "epochs") && (args_has(&a, "steps") || args_has(&a, "data-parallel"))) {
        cli_error(cmd, "--epochs (the book's loop) goes without --steps and --data-parallel");
        return EXIT_USAGE;
    }
    if (!args_has(&a, "epochs") && (args_has(&a, "eval-batches") || args_has(&a, "sample-prompt") ||
                                     args_has(&a, "sample-tokens"))) {
        cli_error(cmd, "--eval-batches, --sample-prompt and --sample-tokens go with --epochs");
        return EXIT_USAGE;
    }
    if (args_has(&a, "data-parallel") &&
        (args_has(&a, "checkpoint-every") || args_has(&a, "resume") || args_has(&a, "state"))) {
        cli_error(cmd, "--checkpoint-every, --state and --resume go without --data-parallel");
        return EXIT_USAGE;
    }
    mygpt_error perr = {0}; // a --save that cannot be written is said now, not after the training
    if (args_has(&a, "save") && mygpt_checkpoint_check_path(args_get(&a, "save"), &perr) != MYGPT_OK) {
        cli_error(cmd, "--save: %s", perr.message);
        return EXIT_USAGE;
    }
    // the training state's file: named, or beside --save, or in the current folder; one
    // not named is never put over a file that is not a training state
    char state_path[4200];
    const char *state_refused = NULL;
    if (args_has(&a, "state")) {
        snprintf(state_path, sizeof state_path, "%s", args_get(&a, "state"));
        if (mygpt_checkpoint_check_path(state_path, &perr) != MYGPT_OK) {
            cli_error(cmd, "--state: %s", perr.message);
            return EXIT_USAGE;
        }
    } else {
        const char *save = args_get(&a, "save");
        const size_t sl = save ? strlen(save) : 0, ext = sl > 12 && strcmp(save + sl - 12, ".safetensors") == 0 ? 12 : 0;
        if (save && sl + 20 >= sizeof state_path) {
            cli_error(cmd, "--save: the path is too long");
            return EXIT_USAGE;
        }
        snprintf(state_path, sizeof state_path, "%.*s.state.safetensors", (int)(sl - ext),
                 save ? save : "mygpt-train");
        if (!train_state_path_is_free(state_path))
            state_refused = "a file there is not a training state: not replaced (name another with --state FILE)";
        else if (mygpt_checkpoint_check_path(state_path, &perr) != MYGPT_OK)
            state_refused = perr.message;
        if (state_refused && args_has(&a, "checkpoint-every")) {
            cli_error(cmd, "--checkpoint-every: %s: %s", state_path, state_refused);
            return EXIT_USAGE;
        }
    }
    // what the run writes, apart from each other and from what it reads (but the state it
    // resumes and the model it starts from, which it saves again as it goes on: each is
    // read whole before the first step, and replaced only by a whole, finite file)
    char plot[4100], vocab[2][4200], model[2][4200], conf[4200];
    cli_file tokenizer[2], init[2];
    if (args_has(&a, "log"))
        train_log_plot_path(plot, sizeof plot, args_get(&a, "log"));
    tokenizer_files(tokenizer, vocab);
    cli_checkpoint_files("--init-from", args_get(&a, "init-from"), init, model);
    init[0].shared = 2;
    const cli_file files[] = {{"--save", args_get(&a, "save"), 1, 2},
                              cli_save_config_file(args_get(&a, "save"), init_from || cfg.arch == MYGPT_ARCH_GPT2,
                                                   conf), // --init-from's architecture: not read yet
                              {args_has(&a, "state") ? "--state" : "the training state",
                               state_refused ? NULL : state_path, 1, 1},
                              {"--log", args_get(&a, "log"), 1, 0},
                              {"--log's plot", args_has(&a, "log") ? plot : NULL, 1, 0},
                              {"--text", args_get(&a, "text"), 0, 0},
                              init[0],
                              init[1],
                              {"--resume", args_get(&a, "resume"), 0, 1},
                              tokenizer[0],
                              tokenizer[1]};
    if ((rc = cli_distinct_files(cmd, files, (int)(sizeof files / sizeof files[0]))))
        return rc;
    const char *optname = args_get(&a, "optimizer");
    mygpt_optimizer opt;
    if (strcmp(optname, "sgd") == 0) {
        mygpt_sgd_init(&opt, lr);
        opt.momentum = momentum;
        if (wd >= 0)
            opt.weight_decay = wd;
    } else if (strcmp(optname, "adamw") == 0) {
        if (args_has(&a, "momentum")) {
            cli_error(cmd, "--momentum applies to sgd only");
            return EXIT_USAGE;
        }
        mygpt_adamw_init(&opt, lr);
        if (wd >= 0)
            opt.weight_decay = wd;
    } else {
        cli_error(cmd, "--optimizer: '%s' is not sgd or adamw", optname);
        return EXIT_USAGE;
    }
    dp_team team = {0, 1, 0};
    if (args_has(&a, "check-replicas") && !args_has(&a, "data-parallel")) {
        cli_error(cmd, "--check-replicas goes with --data-parallel");
        return EXIT_USAGE;
    }
    if (args_has(&a, "data-parallel")) {
        if (!dp_available()) {
            cli_error(cmd, "--data-parallel: this mygpt was built without MPI (install libopenmpi-dev and "
                           "openmpi-bin, then rebuild)");
            return EXIT_USAGE;
        }
        if (dp_start(&team, NULL, NULL)) {
            cli_error(cmd, "--data-parallel: MPI_Init failed");
            return EXIT_RUNTIME;
        }
        // before anything that may fail or need a collective: the flags are the same
        // everywhere, or the job ends naming the rank and the flag
        const int is_adamw = strcmp(optname, "adamw") == 0;
        const dp_field flags[] = {
            {"--batch", (unsigned long long)B, 'i'}, {"--context", (unsigned long long)T, 'i'},
            {"--steps", (unsigned long long)steps, 'i'}, {"--seed", (unsigned long long)seed, 'i'},
            {"--eval-every", (unsigned long long)every, 'i'}, {"--optimizer (0 sgd, 1 adamw)", (unsigned long long)is_adamw, 'i'},
            {"--lr", bits_of(lr), 'f'}, {"--momentum", bits_of(momentum), 'f'}, {"--weight-decay", bits_of(wd), 'f'},
            {"--check-replicas", (unsigned long long)args_has(&a, "check-replicas"), 'i'},
            {"--init-from (given)", (unsigned long long)init_from, 'i'},
            {"--vocab", (unsigned long long)cfg.vocab_size, 'i'}, {"--embed", (unsigned long long)cfg.embed_dim, 'i'},
            {"--heads", (unsigned long long)cfg.num_heads, 'i'}, {"--layers", (unsigned long long)cfg.num_layers, 'i'},
            {"--max-seq", (unsigned long long)cfg.max_seq_len, 'i'}, {"--arch", (unsigned long long)cfg.arch, 'i'},
            {"--qkv-bias", (unsigned long long)cfg.qkv_bias, 'i'}, {"--dropout", bits_of(cfg.dropout), 'f'},
            {"--warmup", (unsigned long long)warmup, 'i'}, {"--lr-initial", bits_of(schedule.initial), 'f'},
            {"--cosine", (unsigned long long)schedule.cosine, 'i'}, {"--lr-min", bits_of(schedule.min), 'f'},
            {"--clip-grad", bits_of(clip), 'f'}};
        dp_agree(&team, "mygpt train", flags, (int)(sizeof flags / sizeof flags[0]));
        if (team.size > B) { // every rank sees the same: rank 0 says it, all stop
            if (team.rank == 0)
                cli_error(cmd, "--data-parallel: %d processes for a batch of %lld rows: each needs at least one "
                               "row (use at most %lld processes, or a larger --batch)",
                          team.size, (long long)B, (long long)B);
            dp_stop(&team);
            return EXIT_USAGE;
        }
    }
    // text, split by characters as text[:int(0.9 * len(text))], each part tokenised
    char *text;
    size_t tn;
    mygpt_error err = {0};
    mygpt_status st = mygpt_read_file(args_get(&a, "text"), &text, &tn, &err);
    if (st != MYGPT_OK) {
        rc = train_fail(&team, cmd, st, &err);
        dp_stop(&team);
        return rc;
    }
    mygpt_tokenizer *tok = NULL;
    int64_t *train_ids = NULL, *val_ids = NULL, *x = NULL, *y = NULL;
    size_t ntrain = 0, nval = 0;
    mygpt_gpt *g = NULL;
    mygpt_trainer *tr = NULL;
    mygpt_dataloader train = {0}, val = {0};
    const size_t split = mygpt_utf8_offset(text, tn, (size_t)(0.9 * (double)mygpt_utf8_length(text, tn)));
    if ((rc = load_tokenizer(cmd, &tok)) || (rc = encode_text(cmd, tok, text, split, &train_ids, &ntrain)) ||
        (rc = encode_text(cmd, tok, text + split, tn - split, &val_ids, &nval)))
        goto done;
    if (mygpt_dataloader_init(&train, train_ids, ntrain, (size_t)B, (size_t)T, (size_t)T, &err) != MYGPT_OK ||
        mygpt_dataloader_init(&val, val_ids, nval, (size_t)B, (size_t)T, (size_t)T, &err) != MYGPT_OK) {
        rc = train_fail(&team, cmd, MYGPT_EINVAL, &err);
        goto done;
    }
    mygpt_dataloader_set_drop_last(&val, 0);
    if (train.num_batches == 0 || val.num_batches == 0) {
        cli_error(cmd, "the %s part of the text (%zu tokens) holds no batch of %lld windows of %lld tokens",
                  train.num_batches == 0 ? "training" : "validation", train.num_batches == 0 ? ntrain : nval,
                  (long long)(train.num_batches == 0 ? B : 1), (long long)T);
        rc = EXIT_USAGE;
        goto done;
    }
    if (scheduled && epochs > 0 &&
        (rc = schedule_check(cmd, &schedule, epochs * (long long)train.num_batches, "--epochs")))
        goto done;
    // torch.manual_seed(seed); model = GPT(...): the generator goes on to the loaders
    // (and to dropout); --init-from: the model built, then its weights loaded
    mygpt_rng rng = {0};
    mygpt_rng_seed(&rng, seed);
    if (args_has(&a, "init-from")) {
        if ((st = mygpt_checkpoint_load(&g, args_get(&a, "init-from"), &err)) == MYGPT_OK &&
            init_from_agrees(&a, g, &err))
            st = MYGPT_EINVAL;
        if (st == MYGPT_OK) {
            g->config.dropout = cfg.dropout; // the architecture and sizes are the file's, p --dropout's
            cfg = g->config;
            st = mygpt_config_validate(&cfg, &err);
        }
        if (st == MYGPT_OK && T > cfg.max_seq_len) {
            cli_error(cmd, "--context %lld exceeds the checkpoint's max_seq_len %d", (long long)T, cfg.max_seq_len);
            rc = EXIT_USAGE;
            goto done;
        }
        if (st == MYGPT_OK)
            st = mygpt_gpt_skip_init(&cfg, &rng, &err);
    } else {
        st = mygpt_gpt_create_from(&g, &cfg, &rng, &err);
    }
    if (st != MYGPT_OK || (st = mygpt_trainer_create(&tr, g, &err)) != MYGPT_OK) {
        rc = train_fail(&team, cmd, st, &err);
        goto done;
    }
    tr->dropout_rng = &rng; // model.train(): dropout draws when the model has any
    // the save as it will find its place (a gpt2's config.json too): said now, not after the training
    if (team.rank == 0 && args_has(&a, "save") &&
        (st = mygpt_checkpoint_check_save(g, args_get(&a, "save"), &err)) != MYGPT_OK) {
        const mygpt_error inner = err;
        snprintf(err.message, sizeof err.message, "--save: %.*s", (int)sizeof err.message - 9, inner.message);
        rc = train_fail(&team, cmd, st, &err);
        goto done;
    }
    { // the model (its sizes and initial weights, from --init-from too) and the data are the same everywhere
        const dp_field model[] = {
            {"the model's parameter count", (unsigned long long)g->num_parameters, 'i'},
            {"the model's vocab_size", (unsigned long long)g->config.vocab_size, 'i'},
            {"the model's embed_dim", (unsigned long long)g->config.embed_dim, 'i'},
            {"the model's num_heads", (unsigned long long)g->config.num_heads, 'i'},
            {"the model's num_layers", (unsigned long long)g->config.num_layers, 'i'},
            {"the model's max_seq_len", (unsigned long long)g->config.max_seq_len, 'i'},
            {"the model's architecture", (unsigned long long)g->config.arch, 'i'},
            {"the initial weights", checksum(g->params_memory, g->num_parameters * sizeof(float)), 'h'},
            {"the training tokens (their count)", (unsigned long long)ntrain, 'i'},
            {"the validation tokens (their count)", (unsigned long long)nval, 'i'},
            {"the training tokens", checksum(train_ids, ntrain * sizeof *train_ids), 'h'}};
        dp_agree(&team, "mygpt train", model, (int)(sizeof model / sizeof model[0]));
    }
    x = malloc((size_t)(B * T) * sizeof *x);
    y = malloc((size_t)(B * T) * sizeof *y);
    if (!x || !y) {
        cli_error(cmd, "out of memory");
        rc = EXIT_RUNTIME;
        goto done;
    }
    // what a resumed run must share with the run that saved its state
    run_settings rs = {.n = 0};
    setting(&rs, "--seed", "%llu", (unsigned long long)seed);
    setting(&rs, "the loop", "%s", epochs > 0 ? "--epochs (the book's)" : "--steps (the course's)");
    setting(&rs, "--context", "%lld", (long long)T);
    setting(&rs, "--batch", "%lld", (long long)B);
    setting(&rs, "--dropout", "%.17g", g->config.dropout);
    setting(&rs, "--optimizer", "%s", optname);
    setting(&rs, "--lr", "%.17g", opt.lr);
    setting(&rs, "--momentum", "%.17g", opt.momentum);
    setting(&rs, "--weight-decay", "%.17g", opt.weight_decay);
    setting(&rs, "--eval-every", "%lld", (long long)every);
    setting(&rs, "--eval-batches", "%lld", epochs > 0 ? (long long)eval_batches : 0LL);
    setting(&rs, "--text", "%zu + %zu tokens, FNV-1a %016llx", ntrain, nval,
            checksum(train_ids, ntrain * sizeof *train_ids) ^ checksum(val_ids, nval * sizeof *val_ids));
    // appendix D's, only when given (a state saved without them resumes as before)
    char value[40];
    if (args_has(&a, "warmup")) {
        setting(&rs, "--warmup", "%lld", (long long)warmup);
        shortest(value, sizeof value, schedule.initial);
        setting(&rs, "--lr-initial", "%s", value);
    }
    if (schedule.cosine) { // its decay spans the run: --steps or --epochs may not grow
        setting(&rs, "--cosine", "over %ld steps", schedule.total_steps);
        shortest(value, sizeof value, schedule.min);
        setting(&rs, "--lr-min", "%s", value);
    }
    if (clip > 0) {
        shortest(value, sizeof value, clip);
        setting(&rs, "--clip-grad", "%s", value);
    }
    mygpt_train_position pos = {0, 0, 0};
    if (args_has(&a, "resume")) {
        mygpt_rng *rngs[1] = {&rng};
        if ((st = mygpt_train_state_load(args_get(&a, "resume"), g,
                                         &(mygpt_train_run){&opt, rngs, 1, &train, &pos, rs.s, rs.n}, &err)) !=
            MYGPT_OK) {
            const mygpt_error inner = err;
            snprintf(err.message, sizeof err.message, "--resume: %.*s", (int)sizeof err.message - 11, inner.message);
            rc = cli_fail(cmd, st, &err);
            goto done;
        }
        if (epochs > 0 ? pos.epoch > epochs || (pos.epoch == epochs && pos.batch > 0) : pos.step > steps) {
            cli_error(cmd, "--resume: %s is at step %lld, past the run's end (%s %lld): give more", args_get(&a, "resume"),
                      pos.step, epochs > 0 ? "--epochs" : "--steps", (long long)(epochs > 0 ? epochs : steps));
            rc = EXIT_USAGE;
            goto done;
        }
    }
    train_log log = {0};
    run_ctx ctx = {.cmd = cmd, .show = team.rank == 0, .state = state_refused ? NULL : state_path,
                   .every = ckpt_every, .g = g, .opt = &opt, .rng = &rng,
                   .train = &train, .settings = rs.s, .nsettings = rs.n, .at = pos, .saved_at = -1};
    if (team.rank == 0 && args_has(&a, "log") && (rc = train_log_open(cmd, &log, args_get(&a, "log"), pos.step)))
        goto done;
    ctx.log = team.rank == 0 && args_has(&a, "log") ? &log : NULL;
    progress_start(&ctx.progress, stderr, pos.step, epochs > 0 ? epochs * (long long)train.num_batches : steps, B * T,
                   scheduled);
    log.lr_curve = scheduled;
    if (team.size == 1)
        train_catch_sigint();
    const double t0 = cli_now_s();
    ctx.last = t0;
    long long step = pos.step, tokens = 0;
    int stop = 0;
    if (epochs > 0) { // the book's train_model_simple
        int64_t *prompt = NULL;
        size_t np = 0;
        const char *sp = args_get(&a, "sample-prompt");
        if (sp && (rc = encode_text(cmd, tok, sp, strlen(sp), &prompt, &np)))
            goto done_log;
        if (sp && np == 0) {
            cli_error(cmd, "--sample-prompt: the prompt has no tokens");
            free(prompt);
            rc = EXIT_USAGE;
            goto done_log;
        }
        const book_run run = {.epochs = epochs, .eval_every = every,
                              .eval_batches = eval_batches > 0 ? (size_t)eval_batches : SIZE_MAX, .tok = tok,
                              .prompt = prompt, .n_prompt = np, .sample_tokens = (int)sample_tokens,
                              .start_step = (long)pos.step, .start_epoch = (long)pos.epoch,
                              .start_batch = (size_t)pos.batch, .after_step = after_step,
                              .before_print = before_print, .ctx = &ctx,
                              .schedule = scheduled ? &schedule : NULL, .clip_norm = clip,
                              .clip_from = schedule.warmup_steps};
        long taken = 0;
        st = book_train(stdout, tr, &opt, &train, &val, &rng, &run, x, y, &taken, &err);
        tokens = (taken - step) * B * T;
        step = taken;
        free(prompt);
    }
    for (long long epoch = pos.epoch; step < steps && st == MYGPT_OK && !stop; epoch++) {
        const int resumed = epoch == pos.epoch && pos.batch > 0; // its order came with the state
        if (!resumed)
            st = mygpt_dataloader_epoch(&train, &rng, 1, &err); // for x, y in train_loader:
        for (size_t b = resumed ? (size_t)pos.batch : 0; b < train.num_batches && st == MYGPT_OK && step < steps && !stop;
             b++) {
            double shown = 0, ev[2] = {0, 0}; // the global batch's loss; the step's and the validation loss
            int evaluated = 0;
            st = mygpt_dataloader_batch(&train, b, x, y, &err);
            if (scheduled) // appendix D: for param_group in optimizer.param_groups: param_group["lr"] = lr
                opt.lr = mygpt_lr_at(&schedule, (long)step);
            const double clip_now = clip > 0 && step >= schedule.warmup_steps ? clip : 0.0; // after the warmup
            if (st == MYGPT_OK)
                st = dp_train_step_clipped(&team, tr, &opt, x, y, (int)B, (int)T, (long)step,
                                           args_has(&a, "check-replicas"), "mygpt train", clip_now, &shown, NULL, &err);
            tokens += B * T;
            if (st == MYGPT_OK && (step % every == 0 || step == steps - 1)) {
                st = dp_val_loss(&team, g, &val, &rng, x, y, &ev[1], &err);
                ev[0] = shown;
                evaluated = st == MYGPT_OK;
                progress_clear(&ctx.progress);
                char tl[64], vl[64];
                if (st == MYGPT_OK && team.rank == 0)
                    printf("step %lld train_loss %s val_loss %s\n", step, mygpt_py_fixed_str(tl, sizeof tl, shown, 6),
                           mygpt_py_fixed_str(vl, sizeof vl, ev[1], 6));
                fflush(stdout);
            }
            step++;
            const int last = b + 1 == train.num_batches;
            if (st == MYGPT_OK)
                stop = after_step(&ctx, (long)step, (long)(last ? epoch + 1 : epoch), last ? 0 : b + 1, shown,
                                  evaluated ? ev : NULL);
        }
    }
    progress_clear(&ctx.progress);
    if (st != MYGPT_OK) {
        rc = train_fail(&team, cmd, st, &err);
        goto done_log;
    }
    if (ctx.rc) { // a save or the log failed (said)
        rc = ctx.rc;
        goto done_log;
    }
    if (ctx.interrupted) { // Ctrl-C: the step finished; the state saved; the run ends as Ctrl-C ends it
        if (ctx.log)
            rc = train_log_write(cmd, ctx.log);
        if (!ctx.state)
            fprintf(stderr, "mygpt train: interrupted after step %lld: no training state saved (%s: %s)\n",
                    ctx.at.step, state_path, state_refused);
        else if (ctx.saved_at == ctx.at.step || !save_state(&ctx))
            fprintf(stderr, "mygpt train: interrupted after step %lld: the training state is in %s (the same "
                            "command with --resume %s continues it)\n", ctx.at.step, state_path, state_path);
        rc = rc ? rc : ctx.rc ? ctx.rc : -1;
        goto done_log;
    }
    const double secs = cli_now_s() - t0;
    if (team.rank == 0) {
        fprintf(stderr, "mygpt train: %lld steps, %lld tokens in %.2f s: %.0f tokens/s", step - pos.step, tokens, secs,
                tokens / secs);
        if (pos.step > 0)
            fprintf(stderr, " (resumed at step %lld)", pos.step);
        fprintf(stderr, team.size > 1 ? " (%d processes)\n" : "\n", team.size);
    }
    if (team.rank == 0 && args_has(&a, "save") &&
        (st = mygpt_checkpoint_save(g, args_get(&a, "save"), &err)) != MYGPT_OK) {
        if (team.size > 1)
            dp_abort(&team, "mygpt train", err.message);
        rc = cli_write_fail(cmd, st, &err); // a full disk: a runtime failure, 1
    }
done_log:
    train_log_free(&log);
done:
    if (rc != 0 && team.size > 1) // whatever failed here (said above) ends every rank, none is left waiting
        dp_abort(&team, "mygpt train", "this rank failed (its error is above): the job ends");
    dp_stop(&team);
    mygpt_optimizer_free(&opt);
    mygpt_dataloader_free(&train);
    mygpt_dataloader_free(&val);
    mygpt_tokenizer_free(tok);
    mygpt_trainer_free(tr);
    mygpt_gpt_free(g);
    free(text);
    free(train_ids);
    free(val_ids);
    free(x);
    free(y);
    if (rc == -1) // interrupted, the state saved: the run ends as Ctrl-C ends it
        train_end_by_sigint();
    return rc;
}
