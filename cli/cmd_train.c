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
#include "mygpt/data.h"
#include "mygpt/tokenizer.h"
#include "mygpt/train.h"
#include "output.h"

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
    return cli_fail(cmd, st, err);
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

int cmd_train(int argc, char **argv)
{
    const char *cmd = "train";
    static const arg_spec ARGS[] = {MODEL_FLAGS,          {"text", 1, 0},  {"context", 1, 0},
                                    {"batch", 1, 0},      {"steps", 1, 0}, {"optimizer", 1, 0},
                                    {"lr", 1, 0},         {"momentum", 1, 0}, {"weight-decay", 1, 0},
                                    {"eval-every", 1, 0}, {"save", 1, 0},  {"data-parallel", 0, 0},
                                    {"check-replicas", 0, 0}, {"epochs", 1, 0}, {"eval-batches", 1, 0},
                                    {"sample-prompt", 1, 0}, {"sample-tokens", 1, 0}, {"init-from", 1, 0},
                                    {NULL, 0, 0}};
    parsed_args a;
    int rc = args_parse(cmd, argc, argv, ARGS, 0, &a);
    if (rc < 0) {
        printf("usage: mygpt train --seed S (--vocab V --embed C --heads H --layers N [--max-seq M]\n"
               "                   [--arch A [--qkv-bias]] | --init-from FILE) [--dropout P]\n"
               "                   --text FILE --context T --batch B (--steps K | --epochs N)\n"
               "                   --optimizer sgd|adamw --lr LR [--momentum M] [--weight-decay WD]\n"
               "                   [--eval-every E] [--save FILE.safetensors]\n"
               "                   [--data-parallel [--check-replicas]]\n"
               "                   [--eval-batches K] [--sample-prompt TEXT] [--sample-tokens N]\n"
               "\n"
               "--epochs N runs the book's train_model_simple instead (Build a Large Language Model\n"
               "(From Scratch), chapter 5): N epochs of the shuffled batches; after the steps with\n"
               "step %% E == 0 the mean loss of the first K batches of fresh train and validation\n"
               "loaders in eval mode, as 'Ep 1 (Step 000000): Train loss 9.781, Val loss 9.933';\n"
               "after each epoch N greedy tokens (default 50) after TEXT, newlines as spaces.\n"
               "--init-from FILE starts from a checkpoint (its architecture and sizes; the book's\n"
               "model or a Hugging Face GPT-2 too), the generator moved on as if the model were\n"
               "built first. --dropout P: train mode (llms-from-scratch, gpt2).\n"
               "\n"
               "Trains GPT(V, C, H, N, M) (built with set_seed(S)) on FILE's GPT-2 tokens: the first\n"
               "90%% of its characters train, the rest validate, in windows of T tokens every T;\n"
               "training batches shuffled as DataLoader(shuffle=True, drop_last=True) orders them,\n"
               "with torch.optim.SGD (momentum and weight decay 0 unless given) or AdamW (weight\n"
               "decay 0.01 unless given). Every E steps (default 1) and at the last step prints\n"
               "  step N train_loss X val_loss Y\n"
               "the batch's loss and the mean loss over every validation batch; tokens/s on stderr.\n"
               "tools/reference_train.py is the same in PyTorch. The GPT-2 vocabulary comes from the\n"
               "data folder ($MYGPT_DATA, else build/data beside the program, else PREFIX/share/mygpt).\n"
               "\n"
               "--data-parallel, under mpirun -np P (a build with MPI): every process holds the model\n"
               "and takes rows [r*B/P, (r+1)*B/P) of each global batch of B; the gradients are\n"
               "averaged (reduced on rank 0 and broadcast) before the same optimizer step on every\n"
               "rank, so the batches, their order and the losses do not depend on P (up to the\n"
               "grouping of sums). Rank 0 alone prints and saves. --check-replicas compares the\n"
               "parameters' checksums across ranks after every step. P must not exceed B.\n");
        return 0;
    }
    if (rc)
        return rc;
    mygpt_config cfg;
    uint64_t seed;
    int64_t T, B, steps = 0, every = 1, epochs = 0, eval_batches = 0, sample_tokens = 50;
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
        args_double_min(cmd, &a, "momentum", 0, &momentum) || args_double_min(cmd, &a, "weight-decay", 0, &wd))
        return EXIT_USAGE;
    if (!args_has(&a, "lr") || !args_has(&a, "text") || !args_has(&a, "optimizer")) {
        cli_error(cmd, "--text, --optimizer and --lr are required");
        return EXIT_USAGE;
    }
    if (args_double_min(cmd, &a, "lr", 0, &lr))
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
    mygpt_error perr = {0}; // a --save that cannot be written is said now, not after the training
    if (args_has(&a, "save") && mygpt_checkpoint_check_path(args_get(&a, "save"), &perr) != MYGPT_OK) {
        cli_error(cmd, "--save: %s", perr.message);
        return EXIT_USAGE;
    }
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
            {"--qkv-bias", (unsigned long long)cfg.qkv_bias, 'i'}, {"--dropout", bits_of(cfg.dropout), 'f'}};
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
    const double t0 = cli_now_s();
    long long step = 0, tokens = 0;
    if (epochs > 0) { // the book's train_model_simple
        int64_t *prompt = NULL;
        size_t np = 0;
        const char *sp = args_get(&a, "sample-prompt");
        if (sp && (rc = encode_text(cmd, tok, sp, strlen(sp), &prompt, &np)))
            goto done;
        if (sp && np == 0) {
            cli_error(cmd, "--sample-prompt: the prompt has no tokens");
            free(prompt);
            rc = EXIT_USAGE;
            goto done;
        }
        const book_run run = {.epochs = epochs, .eval_every = every,
                              .eval_batches = eval_batches > 0 ? (size_t)eval_batches : SIZE_MAX, .tok = tok,
                              .prompt = prompt, .n_prompt = np, .sample_tokens = (int)sample_tokens};
        long taken = 0;
        st = book_train(stdout, tr, &opt, &train, &val, &rng, &run, x, y, &taken, &err);
        step = taken;
        tokens = taken * B * T;
        free(prompt);
    }
    while (step < steps && st == MYGPT_OK) {
        st = mygpt_dataloader_epoch(&train, &rng, 1, &err); // for x, y in train_loader:
        for (size_t b = 0; b < train.num_batches && st == MYGPT_OK && step < steps; b++) {
            double shown = 0, vl = 0; // the global batch's loss
            st = mygpt_dataloader_batch(&train, b, x, y, &err);
            if (st == MYGPT_OK)
                st = dp_train_step(&team, tr, &opt, x, y, (int)B, (int)T, (long)step, args_has(&a, "check-replicas"), "mygpt train",
                                   &shown, &err);
            tokens += B * T;
            if (st == MYGPT_OK && (step % every == 0 || step == steps - 1)) {
                st = dp_val_loss(&team, g, &val, &rng, x, y, &vl, &err);
                if (st == MYGPT_OK && team.rank == 0)
                    printf("step %lld train_loss %.6f val_loss %.6f\n", step, shown, vl);
                fflush(stdout);
            }
            step++;
        }
    }
    if (st != MYGPT_OK) {
        rc = train_fail(&team, cmd, st, &err);
        goto done;
    }
    const double secs = cli_now_s() - t0;
    if (team.rank == 0) {
        fprintf(stderr, "mygpt train: %lld steps, %lld tokens in %.2f s: %.0f tokens/s", step, tokens, secs,
                tokens / secs);
        fprintf(stderr, team.size > 1 ? " (%d processes)\n" : "\n", team.size);
    }
    if (team.rank == 0 && args_has(&a, "save") &&
        (st = mygpt_checkpoint_save(g, args_get(&a, "save"), &err)) != MYGPT_OK) {
        if (team.size > 1)
            dp_abort(&team, "mygpt train", err.message);
        rc = cli_write_fail(cmd, st, &err); // a full disk: a runtime failure, 1
    }
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
    return rc;
}
