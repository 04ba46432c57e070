/*
 * mygpt.c - the `mygpt` command-line tool: PyTorch's numbers from C, so a learner
 * can check them against their own notebook. `mygpt --help` lists the
 * subcommands; `mygpt SUB --help` explains one; `mygpt --version` says which mygpt. Usage errors exit with status 2,
 * runtime failures with 1, always with one line on stderr.
 */
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "commands.h"
#include "output.h"

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} command;

static const command COMMANDS[] = {
    {"randn", cmd_randn, "torch.randn / normal_(mean, std) with a seed"},
    {"rand", cmd_rand, "torch.rand / uniform_(low, high) with a seed"},
    {"randint", cmd_randint, "torch.randint(low, high, shape) with a seed"},
    {"randperm", cmd_randperm, "torch.randperm(n) with a seed"},
    {"init", cmd_init, "default init of nn.Linear / nn.Embedding with a seed"},
    {"forward", cmd_forward, "logits of the chapter-12 GPT for given token ids"},
    {"params", cmd_params, "parameter count of a GPT configuration, per module"},
    {"encode", cmd_encode, "GPT-2 token ids of a text (tiktoken's gpt2)"},
    {"decode", cmd_decode, "the text of GPT-2 token ids"},
    {"loss", cmd_loss, "F.cross_entropy of the GPT's logits and targets"},
    {"grad", cmd_grad, "every parameter's gradient after one backward"},
    {"train", cmd_train, "train the GPT on a text with SGD or AdamW"},
    {"generate", cmd_generate, "continue a prompt: greedy, temperature, top-k, top-p"},
    {"finetune", cmd_finetune, "the book's fine-tunings: a spam classifier, an instruction follower"},
    {"chat", cmd_chat, "talk to an instruction-tuned model: a line in, its response out"},
    {"classify", cmd_classify, "a fine-tuned classifier's label and probability for your texts"},
    {"attention", cmd_attention, "where each head looks: top-3 attended tokens, heatmaps"},
    {"quantize", cmd_quantize, "a checkpoint's weights as bf16 or int8 (exact: see --help)"},
    {"merge", cmd_merge, "fold LoRA adapters into their model's weights (appendix E)"},
    {"download", cmd_download, "OpenAI's GPT-2 from Hugging Face, sha256 checked, resumable"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: mygpt COMMAND [OPTIONS]   (mygpt COMMAND --help for details; mygpt --version)\n\n"
               "OMP_NUM_THREADS sets the threads (at most 4 per online CPU are used).\n\ncommands:\n");
    for (size_t i = 0; i < sizeof COMMANDS / sizeof COMMANDS[0]; i++)
        fprintf(f, "  %-10s %s\n", COMMANDS[i].name, COMMANDS[i].summary);
}

#ifndef MYGPT_CLI_MAIN
#define MYGPT_CLI_MAIN main
#endif
int MYGPT_CLI_MAIN(int argc, char **argv)
{
    cli_cap_threads();
    if (cli_check_kernel_env("mygpt"))
        return EXIT_USAGE;
    cli_ignore_file_size_signal();
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        if (strcmp(argv[1], "--version") == 0)
            printf("mygpt %s\n", MYGPT_VERSION);
        else
            usage(stdout);
        args_set_prefix(""); // "mygpt: error writing output" (a full disk, a closed pipe): 1, as any command's
        return out_flush("mygpt");
    }
    if (argc > 2 && strcmp(argv[1], "init") == 0 && strcmp(argv[2], "gpt") == 0) { // beside init linear
        const int rc = cmd_init_gpt(argc - 3, argv + 3);
        return out_flush(argv[1]) ? EXIT_RUNTIME : rc;
    }
    for (size_t i = 0; i < sizeof COMMANDS / sizeof COMMANDS[0]; i++)
        if (strcmp(argv[1], COMMANDS[i].name) == 0) {
            const int rc = COMMANDS[i].run(argc - 2, argv + 2);
            return out_flush(argv[1]) ? EXIT_RUNTIME : rc;
        }
    // the nearest command, when a typo (at most two edits) away
    const char *near = NULL;
    int best = 3;
    for (size_t i = 0; i < sizeof COMMANDS / sizeof COMMANDS[0]; i++) {
        const int d = args_distance(argv[1], strlen(argv[1]), COMMANDS[i].name);
        if (d < best)
            best = d, near = COMMANDS[i].name;
    }
    args_set_prefix(""); // "mygpt: ...", through cli_error, which escapes the word's control bytes
    if (near)
        cli_error("mygpt", "unknown command '%s' (did you mean '%s'? see 'mygpt --help')", argv[1], near);
    else
        cli_error("mygpt", "unknown command '%s' (see 'mygpt --help')", argv[1]);
    return EXIT_USAGE;
}
