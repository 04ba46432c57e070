/*
 * cmd_tokens.c - `mygpt encode` and `mygpt decode`: GPT-2 token ids from text and
 * back, with the vocabulary of the data folder (mygpt_data_dir) or --vocab-dir DIR.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "model_args.h"
#include "commands.h"
#include "mygpt/data.h"
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
    if ((st = mygpt_tokenizer_load_dir(tok, d ? d : dir, &err)) != MYGPT_OK)
        return cli_fail(cmd, st, &err);
    return 0;
}

/* All of standard input (a pipe has no size to ask for). */
static char *read_all(FILE *f, size_t *n)
{
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

static const char ENCODE_USAGE[] =
    "usage: mygpt encode [--vocab-dir DIR] [FILE]\n"
    "\n"
    "GPT-2 token ids of FILE (or standard input), on one line separated by spaces:\n"
    "tiktoken.get_encoding(\"gpt2\").encode(text, allowed_special={\"<|endoftext|>\"}).\n"
    "The text must be UTF-8. DIR holds encoder.json and vocab.bpe (default: the data\n"
    "folder, $MYGPT_DATA, else build/data beside the program, else PREFIX/share/mygpt;\n"
    "bash scripts/fetch-data.sh fetches them).\n";

int cmd_encode(int argc, char **argv)
{
    const char *cmd = "encode";
    static const arg_spec ARGS[] = {{"vocab-dir", 1, 0}, {NULL, 0, 0}};
    parsed_args a;
    int rc = cli_parse_or_help(cmd, argc, argv, ARGS, 1, ENCODE_USAGE, &a);
    if (rc)
        return rc < 0 ? 0 : rc;
    if (a.npositional > 1) {
        cli_error(cmd, "expected at most one FILE, got %d", a.npositional);
        return EXIT_USAGE;
    }
    size_t n;
    char *text;
    if (a.npositional == 1 && strcmp(a.positional[0], "-") != 0) {
        mygpt_error ferr = {0};
        const mygpt_status fst = mygpt_read_file(a.positional[0], &text, &n, &ferr);
        if (fst != MYGPT_OK)
            return cli_fail(cmd, fst, &ferr);
    } else if (!(text = read_all(stdin, &n))) {
        cli_error(cmd, "cannot read standard input");
        return EXIT_RUNTIME;
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
        rc = cli_fail(cmd, est, &err);
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
    "usage: mygpt decode [--vocab-dir DIR] [ID...]\n"
    "\n"
    "The text of GPT-2 token ids (tokenizer.decode(ids)), written as raw bytes with\n"
    "nothing added. Without IDs, reads them from standard input (separated by spaces\n"
    "or newlines), so `mygpt encode FILE | mygpt decode` prints FILE back exactly.\n"
    "DIR holds encoder.json and vocab.bpe (default: the data folder, $MYGPT_DATA,\n"
    "else build/data beside the program, else PREFIX/share/mygpt).\n";

int cmd_decode(int argc, char **argv)
{
    const char *cmd = "decode";
    static const arg_spec ARGS[] = {{"vocab-dir", 1, 0}, {NULL, 0, 0}};
    parsed_args a;
    int rc = cli_parse_or_help(cmd, argc, argv, ARGS, 1, DECODE_USAGE, &a);
    if (rc)
        return rc < 0 ? 0 : rc;
    /* the ids: the arguments, or else every whitespace-separated word of standard input
     * (so `mygpt encode FILE | mygpt decode` gives FILE back, byte for byte) */
    char *input = NULL;
    char **words = a.positional;
    size_t nwords = (size_t)a.npositional;
    if (nwords == 0) {
        size_t len;
        if (!(input = read_all(stdin, &len))) {
            cli_error(cmd, "cannot read standard input");
            return EXIT_RUNTIME;
        }
        input[len] = '\0';
        const char *nul = memchr(input, '\0', len); // would end the ids early, silently
        if (nul) {
            cli_error(cmd, "standard input: a NUL byte at offset %zu is not part of a token id", (size_t)(nul - input));
            free(input);
            return EXIT_USAGE;
        }
        nwords = 0;
        for (char *p = input; *p;) { /* count, then split in place */
            while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
                p++;
            if (*p)
                nwords++;
            while (*p && *p != ' ' && *p != '\n' && *p != '\t' && *p != '\r')
                p++;
        }
        words = malloc((nwords ? nwords : 1) * sizeof *words);
        if (!words) {
            free(input);
            cli_error(cmd, "out of memory");
            return EXIT_RUNTIME;
        }
        size_t k = 0;
        for (char *p = input; *p;) {
            while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
                *p++ = '\0';
            if (*p)
                words[k++] = p;
            while (*p && *p != ' ' && *p != '\n' && *p != '\t' && *p != '\r')
                p++;
        }
    }
    int64_t *ids = malloc((nwords ? nwords : 1) * sizeof *ids);
    if (!ids) {
        cli_error(cmd, "out of memory");
        rc = EXIT_RUNTIME;
    }
    for (size_t i = 0; ids && i < nwords; i++) {
        char *end;
        errno = 0;
        long long v = strtoll(words[i], &end, 10);
        if (*words[i] == '\0' || *end != '\0' || errno == ERANGE) {
            cli_error(cmd, "'%s' is not a token id", words[i]);
            free(ids);
            ids = NULL;
            rc = EXIT_USAGE;
            break;
        }
        ids[i] = v;
    }
    if (words != a.positional)
        free(words);
    free(input);
    if (!ids)
        return rc;
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
