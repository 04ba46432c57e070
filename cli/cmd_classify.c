/*
 * cmd_classify.c - `mygpt classify`: the book's classify_review (Build a Large Language
 * Model (From Scratch), chapter 6) on the user's own texts, with a classifier that
 * `mygpt finetune --task classify --save FILE` wrote: the label of each text and its
 * probability.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "commands.h"
#include "finetune_setup.h"
#include "model_args.h"
#include "mygpt/data.h"
#include "mygpt/tokenizer.h"
#include "output.h"

static const char USAGE[] =
    "usage: mygpt classify --checkpoint FILE [--adapters FILE] [--text TEXT]\n"
    "                      [--max-length T] [--data DIR]\n"
    "\n"
    "The book's classify_review (chapter 6) with the classifier in FILE (what\n"
    "`mygpt finetune --task classify --save FILE` writes, or its training state): the\n"
    "text's GPT-2 tokens cut to T and padded with <|endoftext|> to T, the model's logits\n"
    "at the last position, their argmax and its softmax probability. Prints one line a\n"
    "text, the label and the probability, a tab between:\n"
    "  spam\t0.9987\n"
    "The book's two classes are 0 'not spam' and 1 'spam'; a head of other classes prints\n"
    "'class K'. --text TEXT classifies TEXT; without it every line of standard input is a\n"
    "text (a line of no characters is one too). --max-length T: the length the rows are\n"
    "padded to, as the classifier was trained (default: the longest text of the book's\n"
    "training set, sms_spam_train.csv in --data DIR or the data folder, as `mygpt finetune\n"
    "--task classify` pads them; the model's context when that is shorter). --adapters FILE:\n"
    "the LoRA adapters `mygpt finetune --task classify --lora R --save FILE` wrote for FILE.\n";

/* What a text is classified with */
typedef struct classifier {
    mygpt_gpt *g;
    mygpt_tokenizer *tok;
    size_t T; /* the rows' length */
} classifier;

/* The rows' length: --max-length, else the book's (the longest training text, cut to the
 * model's context). 0, or the exit code after one line. */
static int row_length(const char *cmd, const parsed_args *a, const char *dir, classifier *c)
{
    const size_t context = (size_t)c->g->config.max_seq_len;
    int64_t t = 0;
    if (args_i64_in(cmd, a, "max-length", 1, (int64_t)context, 0, &t))
        return EXIT_USAGE;
    if (t > 0) {
        c->T = (size_t)t;
        return 0;
    }
    char path[4300];
    snprintf(path, sizeof path, "%s/%s", args_has(a, "data") ? args_get(a, "data") : dir, SPAM_FILES[0]);
    mygpt_spam_dataset ds = {0};
    mygpt_error err = {0};
    const mygpt_status st = mygpt_spam_dataset_load(&ds, path, c->tok, 0, MYGPT_ENDOFTEXT_ID, SPAM_CLASSES, &err);
    if (st != MYGPT_OK) {
        cli_error(cmd, "--max-length T is needed: the book's length comes from its training set, and %s", err.message);
        return EXIT_USAGE;
    }
    c->T = ds.max_length < context ? ds.max_length : context;
    mygpt_spam_dataset_free(&ds);
    return 0;
}

/* One text classified and printed: "LABEL\tPROBABILITY". 0, or the exit code after one line
 * that names where the text came from (`where`: --text, or a line of standard input). */
static int classify_one(const char *cmd, const classifier *c, const char *text, const char *where)
{
    int label;
    double p;
    mygpt_error err = {0};
    const mygpt_status st = classify_review(c->g, c->tok, text, c->T, &label, &p, &err);
    if (st != MYGPT_OK) {
        cli_error(cmd, "%s: %s", where, err.message);
        return cli_exit_code(st);
    }
    char name[32];
    if (c->g->config.num_classes == SPAM_CLASSES)
        snprintf(name, sizeof name, "%s", label == 1 ? "spam" : "not spam");
    else
        snprintf(name, sizeof name, "class %d", label);
    printf("%s\t%.4f\n", name, p);
    return out_flush(cmd); // a line a text, as it is classified
}

/* Every line of standard input (its newline, and a carriage return before it, left out) */
static int classify_lines(const char *cmd, const classifier *c)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t got;
    int rc = 0;
    char where[64];
    for (long n = 1; !rc && (got = getline(&line, &cap, stdin)) >= 0; n++) {
        while (got > 0 && (line[got - 1] == '\n' || line[got - 1] == '\r'))
            line[--got] = '\0';
        snprintf(where, sizeof where, "standard input line %ld", n);
        if (memchr(line, '\0', (size_t)got)) {
            cli_error(cmd, "%s holds a NUL byte: not text", where);
            rc = EXIT_USAGE;
        } else {
            rc = classify_one(cmd, c, line, where);
        }
    }
    if (!rc && ferror(stdin)) { // closed, a folder: bad input
        cli_error(cmd, "cannot read standard input");
        rc = EXIT_USAGE;
    }
    free(line);
    return rc;
}

/* `mygpt classify`: the label and probability of each text; returns the exit status. */
int cmd_classify(int argc, char **argv)
{
    const char *cmd = "classify";
    static const arg_spec ARGS[] = {CHECKPOINT_FLAGS, {"text", 1, 0}, {"max-length", 1, 0}, {"data", ARG_PATH, 0},
                                    {NULL, 0, 0}};
    parsed_args a;
    int rc = cli_parse_or_help(cmd, argc, argv, ARGS, 0, USAGE, &a);
    if (rc)
        return rc < 0 ? 0 : rc;
    if (!args_has(&a, "checkpoint")) {
        cli_error(cmd, "--checkpoint FILE is required: a classifier (mygpt finetune --task classify --save FILE)");
        return EXIT_USAGE;
    }
    classifier c = {0};
    if ((rc = load_checkpoint(cmd, &a, &c.g)))
        return rc;
    if (c.g->config.num_classes == 0) {
        cli_error(cmd, "--checkpoint %s: a language model, not a classifier (mygpt finetune --task classify --save "
                       "FILE makes one from it)", args_get(&a, "checkpoint"));
        mygpt_gpt_free(c.g);
        return EXIT_USAGE;
    }
    char dir[4096];
    mygpt_error err = {0};
    mygpt_status st = mygpt_data_dir(dir, sizeof dir, &err);
    if (st == MYGPT_OK)
        st = mygpt_tokenizer_load_dir(&c.tok, dir, &err);
    if (st != MYGPT_OK)
        rc = cli_fail(cmd, st, &err);
    if (!rc)
        rc = row_length(cmd, &a, dir, &c);
    if (!rc)
        rc = args_has(&a, "text") ? classify_one(cmd, &c, args_get(&a, "text"), "--text") : classify_lines(cmd, &c);
    mygpt_tokenizer_free(c.tok);
    mygpt_gpt_free(c.g);
    return rc;
}
