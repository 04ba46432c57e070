/*
 * cmd_merge.c - `mygpt merge BASE ADAPTERS OUT`: the book's appendix E for inference:
 * LoRA adapters folded into the weights of the model they were trained on
 * (mygpt_lora_merge), saved as one plain checkpoint in BASE's layout.
 */
#include <stdio.h>

#include "args.h"
#include "commands.h"
#include "model_args.h"
#include "mygpt/checkpoint.h"
#include "mygpt/lora.h"
#include "output.h"

static const char MERGE_USAGE[] =
    "usage: mygpt merge BASE ADAPTERS OUT [--force]\n"
    "\n"
    "Folds LoRA adapters (ADAPTERS: what mygpt finetune --lora saved, A and B of every\n"
    "Linear) into the weights of the model they were trained on (BASE: any checkpoint\n"
    "generate reads), W + (alpha / r) (A B)^T in float32, and writes OUT: a plain\n"
    "checkpoint in BASE's layout that computes what BASE with --adapters ADAPTERS does,\n"
    "within float32 rounding, at the cost of the model alone. OUT is never BASE or\n"
    "ADAPTERS, and a file already there is replaced only with --force.\n";

/* `mygpt merge BASE ADAPTERS OUT`: LoRA adapters folded into their model's weights,
 * saved as one checkpoint; returns the exit status. */
int cmd_merge(int argc, char **argv)
{
    const char *cmd = "merge";
    static const arg_spec ARGS[] = {{"force", 0, 0}, {NULL, 0, 0}};
    parsed_args a;
    int rc = cli_parse_or_help(cmd, argc, argv, ARGS, 1, MERGE_USAGE, &a);
    if (rc)
        return rc < 0 ? 0 : rc;
    if (a.npositional != 3) {
        cli_error(cmd, "give the model, its adapters and the file to write: mygpt merge BASE ADAPTERS OUT");
        return EXIT_USAGE;
    }
    const char *base = a.positional[0], *adapters = a.positional[1], *out = a.positional[2];
    char model[2][4200];
    cli_file model_files[2];
    cli_checkpoint_files("BASE", base, model_files, model);
    const cli_file files[] = {{"OUT", out, 1, 0}, model_files[0], model_files[1], {"ADAPTERS", adapters, 0, 0}};
    if ((rc = cli_distinct_files(cmd, files, 4)))
        return rc;
    if ((rc = cli_check_output(cmd, "OUT", out, args_has(&a, "force"))))
        return rc;
    mygpt_error err = {0};
    mygpt_gpt *g = NULL;
    mygpt_status st = mygpt_model_load(&g, base, &err);
    if (st == MYGPT_OK && (rc = adapters_base_check(cmd, "BASE", base, g))) {
        mygpt_gpt_free(g);
        return rc;
    }
    if (st == MYGPT_OK)
        st = mygpt_checkpoint_load_adapters(g, adapters, &err);
    const int rank = g ? g->config.lora_rank : 0;
    const double alpha = g ? g->config.lora_alpha : 0;
    if (st == MYGPT_OK)
        st = mygpt_lora_merge(g, &err);
    if (st == MYGPT_OK)
        st = mygpt_checkpoint_check_save(g, out, &err);
    if (st != MYGPT_OK) {
        mygpt_gpt_free(g);
        return cli_fail(cmd, st, &err);
    }
    // without --force, never over a file that appeared meanwhile; a full disk: 1
    if ((st = (args_has(&a, "force") ? mygpt_checkpoint_save : mygpt_checkpoint_save_new)(g, out, &err)) != MYGPT_OK)
        rc = cli_write_fail(cmd, st, &err);
    else
        cli_say(stdout, "%s: %s with the adapters of %s (rank %d, alpha %g) merged into its weights", out, base, adapters,
               rank, alpha);
    mygpt_gpt_free(g);
    return rc;
}
