/*
 * cmd_train.c - `mygpt loss`, `mygpt grad` and `mygpt train`: what
 * tools/reference_train.py computes in PyTorch, from the command line. train reads its
 * flags into a train_settings and runs trainer/train_session.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "data_parallel.h"
#include "commands.h"
#include "model_args.h"
#include "mygpt/checkpoint.h"
#include "mygpt/print.h"
#include "mygpt/train.h"
#include "output.h"
#include "run_folder.h"
#include "train_extras.h"
#include "train_session.h"

/* What loss and grad read: the output format, the model built with set_seed(S) (and the
 * generator as it is after, for the dropouts in train mode), ids and targets (B, T) each. */
typedef struct loss_grad_input {
    out_options o;
    mygpt_rng rng;
    mygpt_gpt *g;
    int64_t *ids, *tg;
    int B, T;
} loss_grad_input;

static void loss_grad_free(loss_grad_input *in)
{
    free(in->ids);
    free(in->tg);
    mygpt_gpt_free(in->g);
}

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
static int loss_grad_setup(const char *cmd, int argc, char **argv, const char *usage, loss_grad_input *in)
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
    *in = (loss_grad_input){0};
    if (out_options_parse(cmd, args_get(&a, "format"), NULL, &in->o))
        return EXIT_USAGE;
    return model_ids_targets(cmd, &a, &in->g, &in->rng, &in->ids, &in->tg, &in->B, &in->T);
}

int cmd_loss(int argc, char **argv)
{
    const char *cmd = "loss";
    loss_grad_input in;
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
        &in);
    if (rc)
        return rc < 0 ? 0 : rc;
    float loss;
    mygpt_error err = {0};
    mygpt_trainer *tr = NULL;
    mygpt_status st;
    if (in.g->config.dropout > 0.0) { // model.train(): the dropouts draw
        if ((st = mygpt_trainer_create(&tr, in.g, &err)) == MYGPT_OK) {
            tr->dropout_rng = &in.rng;
            st = mygpt_trainer_forward(tr, in.ids, in.tg, in.B, in.T, &loss, &err);
        }
        mygpt_trainer_free(tr);
    } else {
        st = mygpt_gpt_loss(in.g, in.ids, in.tg, in.B, in.T, &loss, &err);
    }
    if (st != MYGPT_OK) {
        rc = cli_fail(cmd, st, &err);
    } else {
        mygpt_tview v;
        mygpt_tview_make(&v, MYGPT_F32, &loss, 0, NULL, NULL);
        const mygpt_torch_opts opts = {.grad_fn = "NllLossBackward0"};
        rc = out_print(cmd, &in.o, &v, &opts);
    }
    loss_grad_free(&in);
    return rc;
}

int cmd_grad(int argc, char **argv)
{
    const char *cmd = "grad";
    loss_grad_input in;
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
        &in);
    if (rc)
        return rc < 0 ? 0 : rc;
    float loss;
    mygpt_error err = {0};
    mygpt_trainer *tr = NULL;
    mygpt_status st = mygpt_trainer_create(&tr, in.g, &err);
    if (st == MYGPT_OK) {
        tr->dropout_rng = in.g->config.dropout > 0.0 ? &in.rng : NULL; // model.train() with dropout
        st = mygpt_trainer_forward(tr, in.ids, in.tg, in.B, in.T, &loss, &err);
    }
    if (st == MYGPT_OK)
        st = mygpt_trainer_backward(tr, &err);
    rc = st != MYGPT_OK ? cli_fail(cmd, st, &err)
                        : print_named_tensors(cmd, &in.o, &in.g->config, &tr->grads, NULL);
    mygpt_trainer_free(tr);
    loss_grad_free(&in);
    return rc;
}

/* The flags of `mygpt train` */
static const arg_spec TRAIN_ARGS[] = {MODEL_FLAGS,              {"text", ARG_PATH, 0},    {"context", 1, 0},
                                      {"batch", 1, 0},          {"steps", 1, 0},          {"optimizer", 1, 0},
                                      {"lr", 1, 0},             {"momentum", 1, 0},       {"weight-decay", 1, 0},
                                      {"eval-every", 1, 0},     {"save", ARG_PATH, 0},    {"data-parallel", 0, 0},
                                      {"check-replicas", 0, 0}, {"epochs", 1, 0},         {"eval-batches", 1, 0},
                                      {"sample-prompt", 1, 0},  {"sample-tokens", 1, 0},  {"init-from", ARG_PATH, 0},
                                      {"preset", 1, 0},         {"log", ARG_PATH, 0},     {"checkpoint-every", 1, 0},
                                      {"state", ARG_PATH, 0},   {"resume", ARG_PATH, 0},  {"warmup", 1, 0},
                                      {"lr-initial", 1, 0},     {"cosine", 0, 0},         {"lr-min", 1, 0},
                                      {"clip-grad", 1, 0},      {"out", ARG_PATH, 0},     {"keep-best", 0, 0},
                                      {"decay-groups", 0, 0},   {"tokenizer", ARG_PATH, 0}, {NULL, 0, 0}};

/* --help: what train does, its presets and flags. Returns 0. */
static int train_usage(void)
{
    printf("usage: mygpt train --text FILE [--preset NAME] [flags that change it]\n"
           "\n"
           "       flags: --seed S (--vocab V --embed C --heads H --layers N [--max-seq M]\n"
           "                   [--arch A [--qkv-bias]] | --init-from FILE) [--dropout P]\n"
           "                   --context T --batch B (--steps K | --epochs N)\n"
           "                   --optimizer sgd|adamw --lr LR [--momentum M] [--weight-decay WD]\n"
           "                   [--decay-groups]\n"
           "                   [--warmup K [--lr-initial LR0]] [--cosine [--lr-min LRMIN]]\n"
           "                   [--clip-grad NORM]\n"
           "                   [--tokenizer FILE.bin]\n"
           "                   [--eval-every E] [--out DIR] [--save FILE.safetensors] [--log FILE.csv]\n"
           "                   [--checkpoint-every K] [--state FILE] [--resume FILE] [--keep-best]\n"
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
           "--arch llama trains llama2.c's model.py (its initialisation, with --kv-heads K,\n"
           "--ffn-hidden H or --multiple-of M, --untied-head) in the same loop\n"
           "(tools/reference_llama.py --train-cases); --save FILE.bin then writes llama2.c's\n"
           "file, which its run.c reads. --decay-groups (with adamw) is the AdamW of its train.py\n"
           "(configure_optimizers, nanoGPT's too): the weight decay on the tensors of 2 or more\n"
           "dimensions only, none on the norms' weights and the biases.\n"
           "--tokenizer FILE.bin (llama2.c's tokenizer.bin: corpus/llama/tok512.bin) tokenises each\n"
           "part of the text as run.c's encode(text, bos=1, eos=0), the ids `mygpt encode\n"
           "--tokenizer FILE` prints, instead of GPT-2's; the model's --vocab is FILE's size (given,\n"
           "it must be). `mygpt generate --checkpoint MODEL --tokenizer FILE` and llama2.c's run.c\n"
           "(-z FILE) read them back.\n"
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
           "step on a terminal, one line per evaluation in a pipe; at the end, tokens/s. Its ETA is\n"
           "the time the run will take, measured as it goes: the presets state none.\n"
           "tools/reference_train.py is the same in PyTorch. The GPT-2 vocabulary comes from the\n"
           "data folder ($MYGPT_DATA, else build/data beside the program, else PREFIX/share/mygpt).\n"
           "\n");
    printf("Every run keeps what it makes in its folder (nanoGPT's out_dir): runs/PRESET-DATE-TIME/\n"
           "in the current folder (-2, -3, ... after it when that is taken; PRESET is --preset's\n"
           "name, verdict by default), or --out DIR (made when absent; one that is there must be\n"
           "empty, or hold the state --resume continues). It holds model.safetensors (the model\n"
           "at the end), state.safetensors (the training state: every K steps with\n"
           "--checkpoint-every K, on Ctrl-C and at the end), log.csv and log.svg (as --log); the\n"
           "first and the last line the run prints on stderr name it. --resume DIR/state.safetensors\n"
           "continues a run in its own folder. --save FILE without --out writes the model to FILE\n"
           "and makes no folder (the state then goes beside FILE, the log only with --log); with\n"
           "--out the model goes to FILE, the rest to the folder. --log FILE.csv puts the log there.\n"
           "A file at --save, --state or --log is replaced only by its own kind: a model, a\n"
           "training state, a log (or plot) mygpt wrote; any other file is refused, kept.\n"
           "--keep-best: after every evaluation whose validation loss is the lowest yet, the model\n"
           "is saved as best.safetensors in the folder (beside --save's FILE without one:\n"
           "FILE.best.safetensors, where a file that is not a model mygpt saved is never\n"
           "replaced), kept beside the last; the run's end names its step and loss (a resumed\n"
           "run starts from the lowest in its log).\n"
           "\n");
    printf("--log FILE.csv writes a row per step (step,train_loss,val_loss,lr,ms; val_loss only\n"
           "where the step evaluated) and FILE.svg, the plot of both losses, after every\n"
           "evaluation and at the end (a CSV or an SVG there that is not such a log or plot is\n"
           "not replaced).\n"
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
           "generator, the loader's epoch and order) goes to --state FILE (default: the run's\n"
           "folder's state.safetensors, or --save's name with .state.safetensors without a\n"
           "folder; a file there that is not a training state is never replaced) every K steps\n"
           "with --checkpoint-every K, and on Ctrl-C: the step finishes, the state is saved, the\n"
           "run ends (a second Ctrl-C ends it at once). A state is a model too: generate, chat,\n"
           "attention, forward, classify and finetune read it with --checkpoint. --resume FILE\n"
           "continues such a state with the same flags (--steps\n"
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

/* The model's flags, the seed and the numbers of the run (the sizes and architecture
 * left to the checkpoint with --init-from), --text; 0, or EXIT_USAGE after the error. */
static int read_numbers(const char *cmd, const parsed_args *a, train_settings *s)
{
    // --init-from: the architecture and sizes are the checkpoint's (only --dropout is taken)
    const int init_from = args_has(a, "init-from");
    s->eval_every = 1, s->sample_tokens = 50, s->weight_decay = -1;
    s->cfg.max_seq_len = 1 << 24; // --context is checked against the checkpoint's once it is read
    if (init_from && (!args_has(a, "seed") || parse_seed(cmd, "seed", args_get(a, "seed"), &s->seed) ||
                      (args_has(a, "dropout") && parse_double(cmd, "dropout", args_get(a, "dropout"), &s->cfg.dropout)))) {
        if (!args_has(a, "seed"))
            cli_error(cmd, "--seed is required");
        return EXIT_USAGE;
    }
    if ((!init_from && read_seed_and_config(cmd, a, &s->seed, &s->cfg)) ||
        args_i64_in(cmd, a, "context", 1, s->cfg.max_seq_len, 1, &s->T) ||
        args_i64_in(cmd, a, "batch", 1, 1 << 20, 1, &s->B) ||
        args_i64_in(cmd, a, "steps", 1, 1 << 30, !args_has(a, "epochs"), &s->steps) ||
        args_i64_in(cmd, a, "epochs", 1, 1 << 20, 0, &s->epochs) ||
        args_i64_in(cmd, a, "eval-batches", 1, 1 << 30, 0, &s->eval_batches) ||
        args_i64_in(cmd, a, "sample-tokens", 0, 1 << 20, 0, &s->sample_tokens) ||
        args_i64_in(cmd, a, "eval-every", 1, 1 << 30, 0, &s->eval_every) ||
        args_i64_in(cmd, a, "checkpoint-every", 1, 1 << 30, 0, &s->checkpoint_every) ||
        args_double_min(cmd, a, "momentum", 0, &s->momentum) ||
        args_double_min(cmd, a, "weight-decay", 0, &s->weight_decay))
        return EXIT_USAGE;
    if (!args_has(a, "text")) {
        cli_error(cmd, "--text FILE is required: the text to train on (the course's: corpus/the-verdict.txt)");
        return EXIT_USAGE;
    }
    return args_double_min(cmd, a, "lr", 0, &s->lr) ? EXIT_USAGE : 0;
}

/* --arch nanogpt: nanoGPT's own loop (nanogpt_train.h) */
static int is_nanogpt(const parsed_args *a)
{
    return args_has(a, "arch") && strcmp(args_get(a, "arch"), "nanogpt") == 0;
}

/* Appendix D's flags: the schedule (its length known here for --steps) and clipping.
 * 0, or EXIT_USAGE after the error. */
static int read_schedule(const char *cmd, const parsed_args *a, train_settings *s)
{
    mygpt_lr_schedule *sc = &s->schedule;
    *sc = (mygpt_lr_schedule){.peak = s->lr, .initial = 1e-5, .min = 1e-5, .cosine = args_has(a, "cosine")};
    int64_t warmup = 0;
    s->warmup_given = args_has(a, "warmup");
    s->scheduled = s->warmup_given || sc->cosine;
    if (args_i64_in(cmd, a, "warmup", 0, 1 << 30, 0, &warmup) ||
        args_double_min(cmd, a, "lr-initial", 0, &sc->initial) || args_double_min(cmd, a, "lr-min", 0, &sc->min) ||
        args_double_min(cmd, a, "clip-grad", -HUGE_VAL, &s->clip)) // (more than 0: below)
        return EXIT_USAGE;
    sc->warmup_steps = (long)warmup;
    if (args_has(a, "clip-grad") && !(s->clip > 0)) {
        cli_error(cmd, "--clip-grad must be more than 0 (the longest gradient kept), got %s", args_get(a, "clip-grad"));
        return EXIT_USAGE;
    }
    if (args_has(a, "lr-initial") && !s->warmup_given) {
        cli_error(cmd, "--lr-initial goes with --warmup (the learning rate the warmup starts from)");
        return EXIT_USAGE;
    }
    if (args_has(a, "lr-min") && !sc->cosine) {
        cli_error(cmd, "--lr-min goes with --cosine (the learning rate the decay ends at)");
        return EXIT_USAGE;
    }
    // nanoGPT's get_lr never reaches its cosine when the run ends in the warmup
    const int warmup_only = is_nanogpt(a) && s->steps < warmup; // (iteration --steps runs too)
    if (s->scheduled && !args_has(a, "epochs") && !warmup_only && train_schedule_check(cmd, sc, s->steps, "--steps"))
        return EXIT_USAGE;
    return 0;
}

/* The flags that go only with others (--epochs' own, --data-parallel's); 0, or
 * EXIT_USAGE after the error. */
static int check_combinations(const char *cmd, const parsed_args *a)
{
    if (args_has(a, "epochs") && (args_has(a, "steps") || args_has(a, "data-parallel"))) {
        cli_error(cmd, "--epochs (the book's loop) cannot be used with --steps or --data-parallel");
        return EXIT_USAGE;
    }
    const int nanogpt = is_nanogpt(a); // its eval_iters
    if (!args_has(a, "epochs") && ((args_has(a, "eval-batches") && !nanogpt) || args_has(a, "sample-prompt") ||
                                   args_has(a, "sample-tokens"))) {
        cli_error(cmd, "--eval-batches (but with --arch nanogpt), --sample-prompt and --sample-tokens go with --epochs");
        return EXIT_USAGE;
    }
    if (args_has(a, "sample-tokens") && !args_has(a, "sample-prompt")) { // no sample to size
        cli_error(cmd, "--sample-tokens goes with --sample-prompt (the text each epoch's sample continues)");
        return EXIT_USAGE;
    }
    if (args_has(a, "tokenizer") && (args_has(a, "epochs") || nanogpt)) {
        cli_error(cmd, "--tokenizer goes with the course's loop (--steps), not with --epochs or --arch nanogpt");
        return EXIT_USAGE;
    }
    if (args_has(a, "data-parallel") &&
        (args_has(a, "checkpoint-every") || args_has(a, "resume") || args_has(a, "state"))) {
        cli_error(cmd, "--checkpoint-every, --state and --resume cannot be used with --data-parallel yet (the "
                       "state its run's folder keeps resumes as one process: --resume FILE without mpirun)");
        return EXIT_USAGE;
    }
    return 0;
}

/* FILE.safetensors's FILE followed by tail (".state.safetensors") into path (cap bytes):
 * 0, or EXIT_USAGE after the error (a path too long) */
static int beside_save(const char *cmd, const char *save, const char *tail, char *path, size_t cap)
{
    const size_t sl = strlen(save), ext = sl > 12 && strcmp(save + sl - 12, ".safetensors") == 0 ? 12 : 0;
    if (sl - ext + strlen(tail) >= cap) {
        cli_error(cmd, "--save: the path is too long");
        return EXIT_USAGE;
    }
    snprintf(path, cap, "%.*s%s", (int)(sl - ext), save, tail);
    return 0;
}

/* --save checked, and the training state's file: named, or in the run's folder, or
 * beside --save (into path, cap bytes); one not named is never put over a file that is
 * not a training state (s->state_refused says why). 0, or EXIT_USAGE after the error. */
static int read_state_path(const char *cmd, const parsed_args *a, train_settings *s, char *path, size_t cap)
{
    mygpt_error perr = {0}; // a --save that cannot be written is said now, not after the training
    if (args_has(a, "save") && mygpt_checkpoint_check_path(args_get(a, "save"), &perr) != MYGPT_OK) {
        cli_error(cmd, "--save: %s", perr.message);
        return EXIT_USAGE;
    }
    s->state = path;
    s->state_at_end = s->run_dir != NULL; // a run folder holds the state of its end too
    if (args_has(a, "state")) {
        snprintf(path, cap, "%s", args_get(a, "state"));
        if (mygpt_checkpoint_check_path(path, &perr) != MYGPT_OK) {
            cli_error(cmd, "--state: %s", perr.message);
            return EXIT_USAGE;
        }
        return 0;
    }
    if (s->run_dir) {
        snprintf(path, cap, "%s/state.safetensors", s->run_dir);
    } else if (beside_save(cmd, args_get(a, "save"), ".state.safetensors", path, cap)) {
        return EXIT_USAGE;
    }
    static char refused[sizeof perr.message];
    if (!train_state_path_is_free(path)) {
        s->state_refused = "a file there is not a training state: not replaced (name another with --state FILE)";
    } else if (mygpt_checkpoint_check_path(path, &perr) != MYGPT_OK) {
        snprintf(refused, sizeof refused, "%s", perr.message);
        s->state_refused = refused;
    }
    if (s->state_refused && args_has(a, "checkpoint-every")) {
        cli_error(cmd, "--checkpoint-every: %s: %s", path, s->state_refused);
        return EXIT_USAGE;
    }
    return 0;
}

/* What the run writes, apart from each other and from what it reads (but the state it
 * resumes and the model it starts from, which it saves again as it goes on: each is
 * read whole before the first step, and replaced only by a whole, finite file), and
 * not over a user's file. 0, or the status after the error. */
static int check_files(const char *cmd, const parsed_args *a, const train_settings *s)
{
    char plot[4100], vocab[2][4200], model[2][4200], conf[4200];
    cli_file tokenizer[2], init[2];
    if (s->log)
        train_log_plot_path(plot, sizeof plot, s->log);
    tokenizer_files(tokenizer, vocab);
    cli_checkpoint_files("--init-from", args_get(a, "init-from"), init, model);
    init[0].shared = 2;
    const int gpt2 = args_has(a, "init-from") || s->cfg.arch == MYGPT_ARCH_GPT2; // --init-from's: not read yet
    const cli_file files[] = {{args_has(a, "save") ? "--save" : "the run's model", s->save, 1, 2},
                              cli_save_config_file(s->save, gpt2, conf),
                              {args_has(a, "state") ? "--state" : "the training state",
                               s->state_refused ? NULL : s->state, 1, 1},
                              {args_has(a, "log") ? "--log" : "the run's log", s->log, 1, 0},
                              {args_has(a, "log") ? "--log's plot" : "the run's plot", s->log ? plot : NULL, 1, 0},
                              {"--keep-best", s->best, 1, 0},
                              {"--text", args_get(a, "text"), 0, 0},
                              {"--tokenizer", args_get(a, "tokenizer"), 0, 0},
                              init[0],
                              init[1],
                              {"--resume", args_get(a, "resume"), 0, 1},
                              tokenizer[0],
                              tokenizer[1]};
    int rc = cli_distinct_files(cmd, files, (int)(sizeof files / sizeof files[0]));
    // and none over a file of another kind (a model or a state the tool saved is replaced,
    // and the model the run starts from, whatever saved it: the user named it twice;
    // --log's table and plot: train_log_open). (Ranks past 0 of --data-parallel have none.)
    const char *init_from = args_get(a, "init-from");
    if (!rc && args_has(a, "save") && s->save && !(init_from && cli_same_file(s->save, init_from)) &&
        !train_model_path_is_free(s->save)) {
        cli_error(cmd, "--save: %s is there and is not a model mygpt saved: not replaced (move it, or save elsewhere)",
                  s->save);
        rc = EXIT_USAGE;
    } else if (!rc && args_has(a, "state") && s->state && !train_state_path_is_free(s->state)) {
        cli_error(cmd, "--state: %s is there and is not a training state: not replaced (move it, or name another)",
                  s->state);
        rc = EXIT_USAGE;
    }
    return rc;
}

/* --optimizer sgd|adamw (--momentum for sgd only) and --check-replicas' --data-parallel;
 * 0, or EXIT_USAGE after the error. */
static int read_optimizer(const char *cmd, const parsed_args *a, train_settings *s)
{
    const char *name = args_get(a, "optimizer");
    s->adamw = strcmp(name, "adamw") == 0;
    if (!s->adamw && strcmp(name, "sgd") != 0) {
        cli_error(cmd, "--optimizer: '%s' is not sgd or adamw", name);
        return EXIT_USAGE;
    }
    if (s->adamw && args_has(a, "momentum")) {
        cli_error(cmd, "--momentum applies to sgd only");
        return EXIT_USAGE;
    }
    s->decay_groups = args_has(a, "decay-groups");
    if (s->decay_groups && !s->adamw) {
        cli_error(cmd, "--decay-groups goes with --optimizer adamw (configure_optimizers' two AdamW groups)");
        return EXIT_USAGE;
    }
    if (args_has(a, "check-replicas") && !args_has(a, "data-parallel")) {
        cli_error(cmd, "--check-replicas goes with --data-parallel");
        return EXIT_USAGE;
    }
    return 0;
}

/* The paths of a run's files, as long as it runs */
typedef struct run_paths {
    char model[4200], state[4200], log[4200], best[4200];
} run_paths;

/* The run's folder (runs/NAME/, --out DIR; none for --save alone) made, and the files the
 * run writes: the model (--save, else the folder's), the training state, the log (--log,
 * else the folder's) and --keep-best's model (in the folder, else beside --save). 0, or
 * EXIT_USAGE after the error (the folder removed again when it is empty). */
static int read_run_files(const char *cmd, const parsed_args *a, train_settings *s, run_folder *rf, run_paths *p)
{
    *rf = (run_folder){0};
    int rc = 0;
    // under --data-parallel only rank 0 writes, so only it makes (and checks) the folder:
    // another rank would find rank 0's files there, or make a second folder
    if (args_has(a, "data-parallel") && dp_launch_rank() != 0)
        return 0;
    if ((args_has(a, "out") || !args_has(a, "save")) &&
        (rc = run_folder_open(cmd, rf, args_get(a, "out"), args_get(a, "resume"), args_get(a, "preset"))))
        return rc;
    if (args_has(a, "data-parallel"))
        run_folder_close_on_abort(rf); // another rank's failure ends this process before its close
    s->run_dir = rf->dir[0] ? rf->dir : NULL;
    s->save = args_get(a, "save");
    s->log = args_get(a, "log");
    if (s->run_dir && !s->save) {
        run_folder_path(rf, "model.safetensors", p->model, sizeof p->model);
        s->save = p->model;
    }
    if (s->run_dir && !s->log) {
        run_folder_path(rf, "log.csv", p->log, sizeof p->log);
        s->log = p->log;
    }
    if (args_has(a, "keep-best")) { // checked now, as --save is: not at the first evaluation
        mygpt_error perr;
        if (s->run_dir)
            run_folder_path(rf, "best.safetensors", p->best, sizeof p->best);
        else
            rc = beside_save(cmd, s->save, ".best.safetensors", p->best, sizeof p->best);
        if (!rc && mygpt_checkpoint_check_path(p->best, &perr) != MYGPT_OK) {
            cli_error(cmd, "--keep-best: %s", perr.message);
            rc = EXIT_USAGE;
        } else if (!rc && !train_model_path_is_free(p->best)) {
            cli_error(cmd, "--keep-best: %s is there and is not a model mygpt saved: not replaced (move it, or "
                           "name another --save)", p->best);
            rc = EXIT_USAGE;
        }
        s->best = p->best;
    }
    if (!rc)
        rc = read_state_path(cmd, a, s, p->state, sizeof p->state);
    if (rc)
        run_folder_close(rf);
    return rc;
}

/* The rest of the settings from the flags, then the run */
static int run_train(const parsed_args *a, train_settings *s);

int cmd_train(int argc, char **argv)
{
    const char *cmd = "train";
    parsed_args a;
    int rc = args_parse(cmd, argc, argv, TRAIN_ARGS, 0, &a);
    if (rc < 0)
        return train_usage();
    if (rc || (rc = train_apply_preset(cmd, &a, TRAIN_ARGS)))
        return rc;
    train_settings s = {.cmd = cmd};
    if ((rc = read_numbers(cmd, &a, &s)) || (rc = read_schedule(cmd, &a, &s)) || (rc = check_combinations(cmd, &a)) ||
        (rc = read_optimizer(cmd, &a, &s)))
        return rc;
    run_folder rf;
    run_paths p;
    if ((rc = read_run_files(cmd, &a, &s, &rf, &p)))
        return rc;
    rc = check_files(cmd, &a, &s);
    if (!rc)
        rc = run_train(&a, &s);
    run_folder_close(&rf);
    return rc;
}

/* The rest of the settings from the flags, then the run */
static int run_train(const parsed_args *a, train_settings *s)
{
    s->text = args_get(a, "text");
    s->tokenizer = args_get(a, "tokenizer");
    s->sample_prompt = args_get(a, "sample-prompt");
    s->init_from = args_get(a, "init-from");
    static const char *const sizes[8] = {"vocab", "embed", "heads", "layers", "max-seq", "kv-heads", "ffn-hidden",
                                         "multiple-of"};
    for (int i = 0; i < 8; i++)
        s->sizes[i] = args_get(a, sizes[i]);
    s->untied_head = args_has(a, "untied-head");
    s->arch = args_get(a, "arch");
    s->qkv_bias = args_has(a, "qkv-bias");
    s->resume = args_get(a, "resume");
    s->data_parallel = args_has(a, "data-parallel");
    s->check_replicas = args_has(a, "check-replicas");
    return train_session_run(s);
}
