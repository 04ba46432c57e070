/*
 * cmd_model.c - `mygpt forward` (logits of the chapter-12 GPT for given ids) and
 * `mygpt params` (its parameter accounting, in document 000's table layout) and `mygpt
 * init gpt` (every parameter by name).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "commands.h"
#include "mygpt/gpt.h"
#include "model_args.h"
#include "output.h"

static const arg_spec FORWARD_ARGS[] = {
    {"seed", 1, 0}, {"vocab", 1, 0}, {"embed", 1, 0}, {"heads", 1, 0}, {"layers", 1, 0},
    {"max-seq", 1, 0}, {"ids", 1, 0}, {"format", 1, 0}, {"naive", 0, 0}, ARCH_FLAGS, WEIGHTS_FLAG, CHECKPOINT_FLAGS,
    {NULL, 0, 0}};

static const arg_spec PARAMS_ARGS[] = {
    {"vocab", 1, 0}, {"embed", 1, 0}, {"heads", 1, 0}, {"layers", 1, 0}, {"max-seq", 1, 0},
    ARCH_FLAGS, {"classes", 1, 0}, {"lora", 1, 0}, {NULL, 0, 0}};

/* --seed, the model sizes and --format (and --round) of `forward` and `init gpt`;
 * 0, or EXIT_USAGE after saying what is wrong. */
static int read_model_args(const char *cmd, const parsed_args *a, const char *round,
                           uint64_t *seed, mygpt_config *cfg, out_options *o)
{
    if (read_seed_and_config(cmd, a, seed, cfg))
        return EXIT_USAGE;
    if (out_options_parse(cmd, args_get(a, "format"), round, o))
        return EXIT_USAGE;
    return 0;
}

static const char FORWARD_USAGE[] =
    "usage: mygpt forward (--seed S --vocab V --embed C --heads H --layers N [--max-seq M]\n"
    "                      [--arch A [--qkv-bias]] | --checkpoint FILE [--adapters FILE])\n"
    "                     --ids \"0,1,2,3;3,2,1,0\" [--format torch|numpy|exact] [--weights fp32|bf16|int8]\n"
    "\n"
    "set_seed(S); gpt = GPT(V, C, H, N, M).eval(); print(gpt(ids)) under\n"
    "torch.no_grad(): the logits (B, T, V) of the chapter-12 GPT. Rows of ids are\n"
    "separated by ';' (all of the same length T <= M); --max-seq defaults to 64.\n"
    "--checkpoint FILE: the model of a checkpoint or a training state instead (its sizes;\n"
    "a classifier's logits are (B, T, classes)), with --adapters FILE's LoRA adapters.\n"
    "  --format torch|numpy|exact  as print(logits), print(logits.numpy()), or one\n"
    "                              float32 per line as 8 hex digits\n"
    "  --naive                     use the reference (naive) kernels\n"
    "  --weights fp32|bf16|int8    store the weights so (mygpt quantize --help): the\n"
    "                              logits of float32 on the dequantized weights\n";

/* --checkpoint's model gives its own sizes (checkpoint_flags_check, before anything
 * else is read), and --adapters needs it. 0, or EXIT_USAGE after the error. */
static int forward_model_flags(const char *cmd, const parsed_args *a)
{
    if (checkpoint_flags_check(cmd, a, 1))
        return EXIT_USAGE;
    if (args_has(a, "adapters") && !args_has(a, "checkpoint")) {
        cli_error(cmd, "--adapters FILE needs --checkpoint FILE: the model the adapters were trained on");
        return EXIT_USAGE;
    }
    return 0;
}

/* `mygpt forward`: the logits (B, T, V) of a seeded GPT for the given ids; returns the
 * exit status. */
int cmd_forward(int argc, char **argv)
{
    const char *cmd = "forward";
    parsed_args a;
    int rc = cli_parse_or_help(cmd, argc, argv, FORWARD_ARGS, 0, FORWARD_USAGE, &a);
    if (rc)
        return rc < 0 ? 0 : rc;
    out_options o;
    if ((rc = forward_model_flags(cmd, &a)) || out_options_parse(cmd, args_get(&a, "format"), NULL, &o))
        return rc ? rc : EXIT_USAGE;
    if (!args_has(&a, "ids")) {
        cli_error(cmd, "--ids is required (e.g. --ids \"0,1,2,3\")");
        return EXIT_USAGE;
    }
    int64_t *ids;
    int B, T;
    if ((rc = parse_ids(cmd, args_get(&a, "ids"), &ids, &B, &T)))
        return rc;
    mygpt_gpt *gpt;
    if ((rc = model_from_args(cmd, &a, &gpt))) {
        free(ids);
        return rc;
    }
    gpt->impl = args_has(&a, "naive") ? MYGPT_IMPL_REFERENCE : MYGPT_IMPL_FAST;
    mygpt_error err = {0};
    const mygpt_status st = mygpt_gpt_forward(gpt, ids, B, T, &err);
    if (st != MYGPT_OK) {
        rc = cli_fail(cmd, st, &err);
    } else {
        const int64_t shape[3] = {B, T, mygpt_head_size(&gpt->config)};
        mygpt_tview v;
        mygpt_tview_make(&v, MYGPT_F32, gpt->acts.logits, 3, shape, NULL);
        rc = out_print(cmd, &o, &v, NULL);
    }
    mygpt_gpt_free(gpt);
    free(ids);
    return rc;
}

static const char PARAMS_USAGE[] =
    "usage: mygpt params --vocab V --embed C --heads H --layers N [--max-seq M]\n"
    "                    [--arch A [--qkv-bias]] [--classes N] [--lora R]\n"
    "                    [--kv-heads K] [--ffn-hidden H | --multiple-of M] [--untied-head]\n"
    "\n"
    "The parameter count of GPT(V, C, H, N, M) per module, in the layout of\n"
    "chapter 12's table (--max-seq defaults to 64). Nothing is allocated, so\n"
    "GPT-2 small (--vocab 50257 --embed 768 --heads 12 --layers 12 --max-seq 1024)\n"
    "is instant. --classes N: the book's chapter-6 head nn.Linear(C, N) instead of the\n"
    "language model's; --lora R: appendix E's adapters of rank R on every Linear (the\n"
    "book's GPT-2 small with 2 classes and rank 16: 2,666,528 of them).\n"
    "--arch llama: llama2.c's model.py, with --kv-heads K (grouped-query attention),\n"
    "--ffn-hidden H or --multiple-of M (model.py's hidden size, M 256 by default) and\n"
    "--untied-head (Llama 2 7B: --vocab 32000 --embed 4096 --heads 32 --layers 32\n"
    "--untied-head, 6,738,415,616).\n";

/* `mygpt params`: the parameter table of a configuration, nothing allocated; returns
 * the exit status. */
int cmd_params(int argc, char **argv)
{
    const char *cmd = "params";
    parsed_args a;
    int rc = cli_parse_or_help(cmd, argc, argv, PARAMS_ARGS, 0, PARAMS_USAGE, &a);
    if (rc)
        return rc < 0 ? 0 : rc;
    mygpt_config cfg;
    int64_t classes = 0, rank = 0;
    if (read_config(cmd, &a, &cfg) || args_i64_in(cmd, &a, "classes", 1, 1 << 24, 0, &classes) ||
        args_i64_in(cmd, &a, "lora", 1, MYGPT_LORA_MAX_RANK, 0, &rank))
        return EXIT_USAGE;
    cfg.num_classes = (int)classes;
    cfg.lora_rank = (int)rank;
    cfg.lora_alpha = (double)rank; // the counts do not depend on it
    mygpt_param_counts pc;
    mygpt_error err = {0}; // (a table only of a model mygpt can build)
    if (mygpt_config_validate(&cfg, &err) != MYGPT_OK || mygpt_param_count(&cfg, &pc, &err) != MYGPT_OK) {
        cli_error(cmd, "%s", err.message);
        return EXIT_USAGE;
    }
    mygpt_strbuf sb = {0};
    mygpt_param_table(&sb, &cfg, &pc);
    fputs(mygpt_sb_str(&sb), stdout);
    mygpt_sb_free(&sb);
    return 0;
}

static const char INIT_GPT_USAGE[] =
    "usage: mygpt init gpt --seed S --vocab V --embed C --heads H --layers N [--max-seq M]\n"
    "                      [--arch A [--qkv-bias]] [--format torch|numpy|exact] [--round K]\n"
    "\n"
    "set_seed(S); gpt = GPT(V, C, H, N, M); then for name, p in\n"
    "gpt.named_parameters(): print(name); print(p). With --format exact, only the\n"
    "values, one float32 per line as 8 hex digits, in the same order.\n";

/* `mygpt init gpt`: every parameter in named_parameters() order. */
int cmd_init_gpt(int argc, char **argv)
{
    const char *cmd = "init gpt";
    static const arg_spec ARGS[] = {
        {"seed", 1, 0}, {"vocab", 1, 0}, {"embed", 1, 0}, {"heads", 1, 0}, {"layers", 1, 0},
        {"max-seq", 1, 0}, {"format", 1, 0}, {"round", 1, 0}, ARCH_FLAGS, {NULL, 0, 0}};
    parsed_args a;
    int rc = cli_parse_or_help(cmd, argc, argv, ARGS, 0, INIT_GPT_USAGE, &a);
    if (rc)
        return rc < 0 ? 0 : rc;
    mygpt_config cfg;
    uint64_t seed;
    out_options o;
    if (read_model_args(cmd, &a, args_get(&a, "round"), &seed, &cfg, &o))
        return EXIT_USAGE;
    mygpt_gpt *gpt;
    if ((rc = create_model(cmd, &cfg, seed, &gpt)))
        return rc;
    mygpt_torch_opts param = {0};
    param.parameter = 1;
    rc = print_named_tensors(cmd, &o, &cfg, &gpt->params, &param);
    mygpt_gpt_free(gpt);
    return rc;
}
