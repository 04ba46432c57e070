/*
 * cmd_attention.c - mygpt attention: where a model's heads look for any input. One
 * forward pass keeps every head's attention probabilities (mygpt_gpt_forward_attention);
 * for each head asked for it prints every position's three most attended positions,
 * and --svg draws every head as a heatmap (as chapter 36 does for the trained model).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "commands.h"
#include "model_args.h"
#include "mygpt/checkpoint.h"
#include "mygpt/print.h"
#include "mygpt/svg.h"
#include "mygpt/tokenizer.h"
#include "output.h"

#define TOP 3
#define LABEL 64

static const char USAGE[] =
    "usage: mygpt attention (--seed S --vocab V --embed C --heads H --layers N [--max-seq M]\n"
    "                        | --checkpoint FILE [--adapters FILE]) (--prompt TEXT | --ids \"1,2,3\")\n"
    "                       [--layer L] [--head H] [--svg FILE] [--weights fp32|bf16|int8]\n"
    "\n"
    "Runs the model once on the input (its last max_seq_len tokens, with a note on\n"
    "stderr, as generate reads a longer prompt) keeping every head's attention\n"
    "probabilities, and prints, for each head (or only layer L, head H), every\n"
    "position's three most attended positions (itself included) with their probabilities:\n"
    "  LAYER l, head h\n"
    "     t TOKEN  TOKEN p, TOKEN p, TOKEN p\n"
    "Tokens are their text with --prompt (GPT-2's tokenizer from the data folder) or\n"
    "with a GPT-2-vocabulary model, else #id. --svg FILE draws every head as a heatmap,\n"
    "layers down and heads across (as chapter 36; a file there that is no figure of\n"
    "mygpt's is not replaced). --weights: as in mygpt generate.\n";

/* token t's label: its text quoted ('...', \n \\ \' escaped; a control byte, or a byte of
 * a character the token splits, as \xNN) with a tokenizer, else its id; cut at a
 * character's end to fit LABEL bytes */
static void label(const mygpt_tokenizer *tok, int64_t id, char *out)
{
    char *bytes = NULL;
    size_t n = 0;
    if (!tok || mygpt_decode(tok, &id, 1, &bytes, &n, NULL) != MYGPT_OK) {
        snprintf(out, LABEL, "#%lld", (long long)id);
        return;
    }
    mygpt_strbuf sb = {0};
    for (size_t i = 0; i < n;) {
        const char c = bytes[i];
        if (c == '\n' || c == '\\' || c == '\'') {
            const char *esc = c == '\n' ? "\\n" : c == '\\' ? "\\\\" : "\\'";
            mygpt_sb_append_shown(&sb, esc, strlen(esc), 0);
            i++;
            continue;
        }
        size_t j = i; // up to the next byte escaped above (never inside a character)
        while (j < n && bytes[j] != '\n' && bytes[j] != '\\' && bytes[j] != '\'')
            j++;
        mygpt_sb_append_shown(&sb, bytes + i, j - i, 0);
        i = j;
    }
    free(bytes);
    size_t len = sb.failed ? 0 : sb.len, keep = 0;
    for (size_t i = 0; i < len;) { // whole characters while they fit, with both quotes
        uint32_t cp;
        const int l = mygpt_utf8_decode(sb.data + i, len - i, &cp);
        if (l == 0 || keep + (size_t)l + 3 > LABEL)
            break;
        keep += (size_t)l;
        i += (size_t)l;
    }
    snprintf(out, LABEL, "'%.*s'", (int)keep, sb.data ? sb.data : "");
    mygpt_sb_free(&sb);
}

/* --svg's path can take the figure (tried now, as a training's --save: a path that cannot
 * is said before any work, not after the heads are printed), and no file written is one
 * read: the checkpoint and its config.json, the adapters, the tokenizer's files. 0, or
 * EXIT_USAGE after the error. */
static int check_files(const char *cmd, const parsed_args *a)
{
    mygpt_error err = {0};
    if (args_has(a, "svg") && mygpt_checkpoint_check_path(args_get(a, "svg"), &err) != MYGPT_OK) {
        cli_error(cmd, "--svg: %s", err.message);
        return EXIT_USAGE;
    }
    char vocab[2][4200], model[2][4200];
    cli_file tokenizer[2], checkpoint[2];
    tokenizer_files(tokenizer, vocab);
    cli_checkpoint_files("--checkpoint", args_get(a, "checkpoint"), checkpoint, model);
    const cli_file files[] = {{"--svg", args_get(a, "svg"), 1, 0},
                              checkpoint[0],
                              checkpoint[1],
                              {"--adapters", args_get(a, "adapters"), 0, 0},
                              tokenizer[0],
                              tokenizer[1]};
    const int rc = cli_distinct_files(cmd, files, (int)(sizeof files / sizeof files[0]));
    if (!rc && args_has(a, "svg") && !mygpt_svg_replaceable(args_get(a, "svg"))) {
        cli_error(cmd, "--svg: %s is there and is not a figure of mygpt's: not replaced (move it, or draw elsewhere)",
                  args_get(a, "svg"));
        return EXIT_USAGE;
    }
    return rc;
}

/* The input's ids, its last max_seq_len when longer (said on stderr), and a tokenizer for
 * the labels when there is one; 0, or the exit code after saying why not. */
static int read_input(const char *cmd, const parsed_args *a, const mygpt_gpt *g, mygpt_tokenizer **tok,
                      int64_t **ids, int *T)
{
    const int M = g->config.max_seq_len;
    int rc;
    if ((rc = read_sequence(cmd, a, g->config.vocab_size, tok, ids, T)))
        return rc;
    if (!*tok && g->config.vocab_size == 50257 && load_tokenizer(cmd, tok) != 0)
        *tok = NULL; // without the data folder the tokens show as ids
    if (*T < 1) {
        cli_error(cmd, "the input is empty: nothing to attend to");
        return EXIT_USAGE;
    }
    if (*T > M) { // as generate does: the last max_seq_len tokens, said on stderr
        say_cropped(cmd, "input", *T, M);
        memmove(*ids, *ids + (*T - M), (size_t)M * sizeof **ids);
        *T = M;
    }
    return 0;
}

/* For each head asked for (layer, head; -1: every one), every position's TOP most attended
 * positions and their probabilities; att holds (L, NH, T, T). */
static void print_heads(const mygpt_config *cfg, const float *att, int T, int64_t layer, int64_t head,
                        char (*text)[LABEL])
{
    const int L = cfg->num_layers, NH = cfg->num_heads;
    for (int l = 0; l < L; l++)
        for (int h = 0; h < NH; h++) {
            if ((layer >= 0 && l != layer) || (head >= 0 && h != head))
                continue;
            printf("layer %d, head %d\n", l, h);
            const float *p = att + ((size_t)l * NH + h) * T * T; // (T, T)
            for (int t = 0; t < T; t++) {
                int best[TOP];
                const int nb = mygpt_attention_top(p + (size_t)t * T, t, TOP, best);
                printf("%4d %-14s", t, text[t]);
                char prob[64];
                for (int j = 0; j < nb; j++)
                    printf("%s %s %s", j ? "," : "", text[best[j]], // "nan" as Python prints it
                           mygpt_py_fixed_str(prob, sizeof prob, (double)p[(size_t)t * T + best[j]], 3));
                printf("\n");
            }
        }
}

/* One forward pass keeping every head's probabilities, printed, and drawn with --svg;
 * 0, or the exit code after saying why not. */
static int show_attention(const char *cmd, const parsed_args *a, mygpt_gpt *g, int64_t layer, int64_t head)
{
    const int L = g->config.num_layers, NH = g->config.num_heads;
    mygpt_tokenizer *tok = NULL;
    int64_t *ids = NULL;
    float *att = NULL;
    char(*text)[LABEL] = NULL;
    const char **labels = NULL;
    mygpt_error err = {0};
    mygpt_status st;
    int T = 0, rc;
    if ((rc = read_input(cmd, a, g, &tok, &ids, &T)))
        goto done;
    const size_t len = mygpt_gpt_attention_len(g, 1, T);
    att = malloc(len * sizeof *att);
    text = malloc((size_t)T * sizeof *text);
    labels = malloc((size_t)T * sizeof *labels);
    if (!att || !text || !labels) {
        cli_error(cmd, "out of memory for %zu attention probabilities", len);
        rc = EXIT_RUNTIME;
        goto done;
    }
    if ((st = mygpt_gpt_forward_attention(g, ids, 1, T, att, len, &err)) != MYGPT_OK) {
        rc = cli_fail(cmd, st, &err);
        goto done;
    }
    for (int t = 0; t < T; t++) {
        label(tok, ids[t], text[t]);
        labels[t] = text[t];
    }
    print_heads(&g->config, att, T, layer, head, text);
    if (args_has(a, "svg")) {
        mygpt_svg fig;
        mygpt_svg_attention_grid(&fig, att, L, NH, T, labels);
        if ((st = mygpt_svg_save(&fig, args_get(a, "svg"), &err)) != MYGPT_OK) {
            rc = cli_write_fail(cmd, st, &err);
            goto done;
        }
        cli_say(stderr, "mygpt attention: figure written to %s", args_get(a, "svg"));
    }
done:
    free(labels);
    free(text);
    free(att);
    free(ids);
    mygpt_tokenizer_free(tok);
    return rc;
}

/* `mygpt attention`: every head's most attended positions for one input, each head
 * as a heatmap with --svg; returns the exit status. */
int cmd_attention(int argc, char **argv)
{
    const char *cmd = "attention";
    static const arg_spec ARGS[] = {MODEL_FLAGS,     CHECKPOINT_FLAGS, {"prompt", 1, 0},      {"ids", 1, 0},
                                    {"layer", 1, 0}, {"head", 1, 0},   {"svg", ARG_PATH, 0}, WEIGHTS_FLAG,
                                    {NULL, 0, 0}};
    parsed_args a;
    int rc = cli_parse_or_help(cmd, argc, argv, ARGS, 0, USAGE, &a);
    if (rc)
        return rc < 0 ? 0 : rc;
    mygpt_gpt *g = NULL;
    if ((rc = check_input_flags(cmd, &a)) || (rc = check_files(cmd, &a)) || (rc = model_from_args(cmd, &a, &g)))
        return rc;
    const int L = g->config.num_layers, NH = g->config.num_heads;
    int64_t layer = -1, head = -1;
    if ((args_has(&a, "layer") && parse_i64(cmd, "layer", args_get(&a, "layer"), 0, L - 1, &layer)) ||
        (args_has(&a, "head") && parse_i64(cmd, "head", args_get(&a, "head"), 0, NH - 1, &head)))
        rc = EXIT_USAGE;
    else
        rc = show_attention(cmd, &a, g, layer, head);
    mygpt_gpt_free(g);
    return rc;
}
