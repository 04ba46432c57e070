/*
 * cmd_tokens.c - `mygpt encode` and `mygpt decode`: GPT-2 token ids from text and
 * back, with the vocabulary of the data folder (mygpt_data_dir) or --vocab-dir DIR;
 * with --tokenizer FILE, llama2.c's ids (its tokenizer.bin, its run.c's encode and
 * decode).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "commands.h"
#include "mygpt/data.h"
#include "mygpt/sp_tokenizer.h"
#include "mygpt/tokenizer.h"
#include "output.h"

static int load(const char *cmd, const parsed_args *a, mygpt_tokenizer **tok)
{
    mygpt_error err = {0};
    char dir[4096];
    const char *d = args_get(a, "vocab-dir");
    mygpt_status st;
    if (!d && (st = mygpt_data_dir(dir, sizeof dir, &err)) != MYGPT_OK)
        return cli_fail(cmd, st, &err);
    if ((st = mygpt_tokenizer_load_dir(tok, d ? d : dir, &err)) != MYGPT_OK) {
        if (d)
            cli_error(cmd, "--vocab-dir: %s", err.message);
        return d ? cli_exit_code(st) : cli_fail(cmd, st, &err);
    }
    return 0;
}

/* --vocab-dir and --tokenizer name two vocabularies: 0, or the usage status after
 * saying so. */
static int one_vocabulary(const char *cmd, const parsed_args *a)
{
    if (args_get(a, "vocab-dir") && args_get(a, "tokenizer")) {
        cli_error(cmd, "--vocab-dir and --tokenizer name two vocabularies: give one");
        return EXIT_USAGE;
    }
    return 0;
}

/* All of standard input (a pipe has no size to ask for); on a terminal, first a line on
 * stderr saying how to end it, since nothing else shows that the command is waiting. */
static char *read_all(const char *cmd, const char *instead, FILE *f, size_t *n)
{
    if (isatty(fileno(f)))
        fprintf(stderr, "mygpt %s: reading standard input: end it with Ctrl-D (or give %s)\n", cmd, instead);
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    while (buf) {
        len += fread(buf + len, 1, cap - len, f);
        if (len < cap)
            break;
        char *nb = realloc(buf, cap *= 2);
        if (!nb)
            free(buf);
        buf = nb;
    }
    if (buf && ferror(f)) {
        free(buf);
        return NULL;
    }
    *n = len;
    return buf;
}

/* read_all's NULL said: standard input that cannot be read (closed, a folder) is bad
 * input, 2; otherwise memory ran out, 1 */
static int stdin_fail(const char *cmd)
{
    if (ferror(stdin)) {
        cli_error(cmd, "cannot read standard input: %s", strerror(errno));
        return EXIT_USAGE;
    }
    cli_error(cmd, "out of memory reading standard input");
    return EXIT_RUNTIME;
}

static const char ENCODE_USAGE[] =
    "usage: mygpt encode [--vocab-dir DIR | --tokenizer FILE] [FILE]\n"
    "\n"
    "GPT-2 token ids of FILE (or standard input), on one line separated by spaces:\n"
    "tiktoken.get_encoding(\"gpt2\").encode(text, allowed_special={\"<|endoftext|>\"}).\n"
    "The text must be UTF-8. DIR holds encoder.json and vocab.bpe (default: the data\n"
    "folder, $MYGPT_DATA, else build/data beside the program, else PREFIX/share/mygpt;\n"
    "bash scripts/fetch-data.sh fetches them).\n"
    "\n"
    "--tokenizer FILE: llama2.c's ids instead, FILE its tokenizer.bin (tok512.bin):\n"
    "run.c's encode(text, bos=1, eos=0), BOS (1) first. Any bytes but NUL.\n";

/* Prints llama2.c's ids of text (n bytes, read from `from`) with the tokenizer at path;
 * the exit status. */
static int encode_llama2c(const char *cmd, const char *path, const char *from, const char *text, size_t n)
{
    mygpt_sp_tokenizer *tok = NULL;
    mygpt_error err = {0};
    int *ids = NULL;
    size_t nids = 0;
    mygpt_status st = mygpt_sp_load(&tok, path, 0, &err);
    if (st != MYGPT_OK)
        return cli_fail(cmd, st, &err);
    st = mygpt_sp_encode(tok, text, n, 1, 0, &ids, &nids, &err);
    mygpt_sp_free(tok);
    if (st != MYGPT_OK) { // the text's fault (a NUL byte, its length), or what the vocabulary lacks
        if (st == MYGPT_EFORMAT)
            cli_error(cmd, "--tokenizer %s cannot encode %s: %s", path, from, err.message);
        else
            cli_error(cmd, "%s: %s", from, err.message);
        return cli_exit_code(st);
    }
    for (size_t i = 0; i < nids; i++)
        printf(i ? " %d" : "%d", ids[i]);
    printf("\n");
    free(ids);
    return 0;
}

/* `mygpt encode [FILE]`: GPT-2's token ids of a text on one line; returns the exit
 * status. */
int cmd_encode(int argc, char **argv)
{
    const char *cmd = "encode";
    static const arg_spec ARGS[] = {{"vocab-dir", ARG_PATH, 0}, {"tokenizer", ARG_PATH, 0}, {NULL, 0, 0}};
    parsed_args a;
    int rc = cli_parse_or_help(cmd, argc, argv, ARGS, 1, ENCODE_USAGE, &a);
    if (rc)
        return rc < 0 ? 0 : rc;
    if (a.npositional > 1) {
        cli_error(cmd, "expected at most one FILE, got %d", a.npositional);
        return EXIT_USAGE;
    }
    if ((rc = one_vocabulary(cmd, &a)))
        return rc;
    size_t n;
    char *text;
    const char *file = a.npositional == 1 && strcmp(a.positional[0], "-") != 0 ? a.positional[0] : NULL;
    if (file) {
        mygpt_error ferr = {0};
        const mygpt_status fst = mygpt_read_file(file, &text, &n, &ferr);
        if (fst != MYGPT_OK)
            return cli_fail(cmd, fst, &ferr);
    } else if (!(text = read_all(cmd, "a FILE", stdin, &n))) {
        return stdin_fail(cmd);
    }
    if (args_get(&a, "tokenizer")) {
        rc = encode_llama2c(cmd, args_get(&a, "tokenizer"), file ? file : "standard input", text, n);
        free(text);
        return rc;
    }
    mygpt_tokenizer *tok = NULL;
    if ((rc = load(cmd, &a, &tok))) {
        free(text);
        return rc;
    }
    int64_t *ids;
    size_t nids;
    mygpt_error err = {0};
    const mygpt_status est = mygpt_encode(tok, text, n, &ids, &nids, &err);
    if (est != MYGPT_OK) {
        cli_error(cmd, "%s: %s", file ? file : "standard input", err.message);
        rc = cli_exit_code(est);
    } else {
        for (size_t i = 0; i < nids; i++)
            printf(i ? " %lld" : "%lld", (long long)ids[i]);
        printf("\n");
        free(ids);
    }
    free(text);
    mygpt_tokenizer_free(tok);
    return rc;
}

static const char DECODE_USAGE[] =
    "usage: mygpt decode [--vocab-dir DIR | --tokenizer FILE] [ID...]\n"
    "\n"
    "The text of GPT-2 token ids (tokenizer.decode(ids)), written as raw bytes with\n"
    "nothing added. Without IDs, reads them from standard input (separated by spaces\n"
    "or newlines), so `mygpt encode FILE | mygpt decode` prints FILE back exactly.\n"
    "DIR holds encoder.json and vocab.bpe (default: the data folder, $MYGPT_DATA,\n"
    "else build/data beside the program, else PREFIX/share/mygpt).\n"
    "\n"
    "--tokenizer FILE: llama2.c's ids instead (FILE its tokenizer.bin), printed as its\n"
    "run.c prints a story: each piece after the id before it (no space after BOS),\n"
    "<0xXX> pieces as that byte, a lone byte only if printable or a space; BOS (1)\n"
    "prints nothing.\n";

/* Prints the text of llama2.c's ids (n) with the tokenizer at path; the exit status. */
static int decode_llama2c(const char *cmd, const char *path, const int64_t *ids64, size_t n)
{
    mygpt_sp_tokenizer *tok = NULL;
    mygpt_error err = {0};
    mygpt_status st = mygpt_sp_load(&tok, path, 0, &err);
    if (st != MYGPT_OK)
        return cli_fail(cmd, st, &err);
    const int vocab = mygpt_sp_vocab_size(tok);
    int *ids = malloc((n ? n : 1) * sizeof *ids);
    int rc = 0;
    if (!ids) {
        cli_error(cmd, "out of memory");
        rc = EXIT_RUNTIME;
    }
    for (size_t i = 0; !rc && i < n; i++) {
        if (ids64[i] < 0 || ids64[i] >= vocab) {
            cli_error(cmd, "token id %lld is outside [0, %d)", (long long)ids64[i], vocab);
            rc = EXIT_USAGE;
        } else {
            ids[i] = (int)ids64[i];
        }
    }
    char *text = NULL;
    size_t len = 0;
    if (!rc && (st = mygpt_sp_decode(tok, ids, n, &text, &len, &err)) != MYGPT_OK)
        rc = cli_fail(cmd, st, &err);
    if (!rc)
        fwrite(text, 1, len, stdout);
    free(text);
    free(ids);
    mygpt_sp_free(tok);
    return rc;
}

/* Every whitespace-separated word of standard input, split in place in *input (both
 * malloc'd); 0, or the exit code after saying why not. */
static int read_words(const char *cmd, char **input, char ***words, size_t *nwords)
{
    size_t len;
    if (!(*input = read_all(cmd, "the ids as arguments", stdin, &len)))
        return stdin_fail(cmd);
    char *in = *input;
    in[len] = '\0';
    const char *nul = memchr(in, '\0', len); // would end the ids early, silently
    if (nul) {
        cli_error(cmd, "standard input: a NUL byte at offset %zu is not part of a token id", (size_t)(nul - in));
        return EXIT_USAGE;
    }
    size_t n = 0;
    for (char *p = in; *p;) { /* count, then split in place */
        while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
            p++;
        if (*p)
            n++;
        while (*p && *p != ' ' && *p != '\n' && *p != '\t' && *p != '\r')
            p++;
    }
    if (!(*words = malloc((n ? n : 1) * sizeof **words))) {
        cli_error(cmd, "out of memory");
        return EXIT_RUNTIME;
    }
    size_t k = 0;
    for (char *p = in; *p;) {
        while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
            *p++ = '\0';
        if (*p)
            (*words)[k++] = p;
        while (*p && *p != ' ' && *p != '\n' && *p != '\t' && *p != '\r')
            p++;
    }
    *nwords = n;
    return 0;
}

/* words[0..n) as token ids (malloc'd), or the exit code after naming the first that is
 * not one. */
static int parse_token_ids(const char *cmd, char **words, size_t n, int64_t **ids)
{
    if (!(*ids = malloc((n ? n : 1) * sizeof **ids))) {
        cli_error(cmd, "out of memory");
        return EXIT_RUNTIME;
    }
    for (size_t i = 0; i < n; i++) {
        char *end;
        errno = 0;
        long long v = strtoll(words[i], &end, 10);
        const char *w = words[i] + (words[i][0] == '-'); // strtoll would skip spaces and take a +
        if (!(*w >= '0' && *w <= '9') || *end != '\0' || errno == ERANGE) {
            cli_error(cmd, "'%.64s%s' is not a token id", words[i], strlen(words[i]) > 64 ? "..." : ""); // one line, not the whole word
            free(*ids);
            *ids = NULL;
            return EXIT_USAGE;
        }
        (*ids)[i] = v;
    }
    return 0;
}

/* `mygpt decode [ID...]`: the text of GPT-2 token ids, byte for byte; returns the exit
 * status. */
int cmd_decode(int argc, char **argv)
{
    const char *cmd = "decode";
    static const arg_spec ARGS[] = {{"vocab-dir", ARG_PATH, 0}, {"tokenizer", ARG_PATH, 0}, {NULL, 0, 0}};
    parsed_args a;
    int rc = cli_parse_or_help(cmd, argc, argv, ARGS, 1, DECODE_USAGE, &a);
    if (rc)
        return rc < 0 ? 0 : rc;
    if ((rc = one_vocabulary(cmd, &a)))
        return rc;
    /* the ids: the arguments, or else every whitespace-separated word of standard input
     * (so `mygpt encode FILE | mygpt decode` gives FILE back, byte for byte) */
    char *input = NULL;
    char **words = a.positional;
    size_t nwords = (size_t)a.npositional;
    int64_t *ids = NULL;
    if (nwords == 0)
        rc = read_words(cmd, &input, &words, &nwords);
    if (!rc)
        rc = parse_token_ids(cmd, words, nwords, &ids);
    if (words != a.positional)
        free(words);
    free(input);
    if (rc)
        return rc;
    if (args_get(&a, "tokenizer")) {
        rc = decode_llama2c(cmd, args_get(&a, "tokenizer"), ids, nwords);
        free(ids);
        return rc;
    }
    mygpt_tokenizer *tok = NULL;
    if ((rc = load(cmd, &a, &tok))) {
        free(ids);
        return rc;
    }
    char *text;
    size_t len;
    mygpt_error err = {0};
    const mygpt_status st = mygpt_decode(tok, ids, nwords, &text, &len, &err);
    if (st != MYGPT_OK) {
        rc = cli_fail(cmd, st, &err);
    } else {
        fwrite(text, 1, len, stdout);
        free(text);
    }
    free(ids);
    mygpt_tokenizer_free(tok);
    return rc;
}
