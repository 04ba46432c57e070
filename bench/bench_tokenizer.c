/*
 * bench_tokenizer.c - how fast GPT-2 encoding of a text is (document 003's
 * the-verdict by default): loads the vocabulary once, then times REPS encodings
 * and prints the median, minimum and tokens per second. Not part of the tests.
 *
 *   build/bench/mygpt-bench-tokenizer [--text PATH] [--vocab-dir DIR] [--reps R] [--help]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "args.h"
#include "mygpt.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    cli_check_output_at_exit("mygpt-bench-tokenizer");
    static const arg_spec SPECS[] = {{"text", ARG_PATH, 0}, {"vocab-dir", ARG_PATH, 0}, {"reps", 1, 0}, {NULL, 0, 0}};
    args_set_prefix("");
    parsed_args pa;
    const int prc = args_parse("mygpt-bench-tokenizer", argc - 1, argv + 1, SPECS, 0, &pa);
    if (prc < 0) {
        printf("usage: mygpt-bench-tokenizer [--text PATH] [--vocab-dir DIR] [--reps R]\n"
               "\n"
               "Times GPT-2 encoding of a text (default: the-verdict.txt of the data folder:\n"
               "$MYGPT_DATA, else build/data beside the program, else PREFIX/share/mygpt):\n"
               "median and minimum of R encodings (default 50), and tokens per second.\n");
        return 0;
    }
    if (prc)
        return EXIT_USAGE;
    int64_t reps64 = 50;
    if (args_has(&pa, "reps") &&
        parse_i64("mygpt-bench-tokenizer", "reps", args_get(&pa, "reps"), 1, 100000, &reps64))
        return EXIT_USAGE;
    const int reps = (int)reps64;
    const char *text_path = args_get(&pa, "text");
    char data[4096];
    mygpt_error derr = {0};
    const char *dir = args_get(&pa, "vocab-dir");
    if (!dir && mygpt_data_dir(data, sizeof data, &derr) == MYGPT_OK)
        dir = data;
    if (!dir) {
        cli_error("mygpt-bench-tokenizer", "%s (run scripts/fetch-data.sh)", derr.message);
        return EXIT_USAGE;
    }
    char path[4200];
    snprintf(path, sizeof path, "%s/the-verdict.txt", dir);
    if (!text_path)
        text_path = path;
    char *text;
    size_t n;
    mygpt_tokenizer *tok;
    mygpt_error err = {0};
    mygpt_status st = mygpt_read_file(text_path, &text, &n, &err);
    if (st != MYGPT_OK) { // the data's text may be absent; a file given with --text is the user's
        cli_error("mygpt-bench-tokenizer", "%s%s%s", args_has(&pa, "text") ? "--text: " : "", err.message,
                  args_has(&pa, "text") ? "" : " (run scripts/fetch-data.sh)");
        return cli_exit_code(st);
    }
    double t0 = now_ms();
    if ((st = mygpt_tokenizer_load_dir(&tok, dir, &err)) != MYGPT_OK) {
        cli_error("mygpt-bench-tokenizer", "%s", err.message);
        free(text);
        return cli_exit_code(st);
    }
    double load_ms = now_ms() - t0;
    double *times = malloc((size_t)reps * sizeof *times);
    size_t nids = 0;
    if (!times) {
        cli_error("mygpt-bench-tokenizer", "out of memory");
        st = MYGPT_ENOMEM;
    }
    for (int r = 0; r < reps && st == MYGPT_OK; r++) {
        int64_t *ids;
        double a = now_ms();
        if ((st = mygpt_encode(tok, text, n, &ids, &nids, &err)) != MYGPT_OK) {
            cli_error("mygpt-bench-tokenizer", "%s: %s", text_path, err.message);
            break;
        }
        times[r] = now_ms() - a;
        free(ids);
    }
    if (st != MYGPT_OK) {
        free(times);
        free(text);
        mygpt_tokenizer_free(tok);
        return cli_exit_code(st);
    }
    qsort(times, (size_t)reps, sizeof *times, cmp);
    double median = times[reps / 2];
    printf("text: %s (%zu bytes, %zu tokens)\n", text_path, n, nids);
    printf("vocabulary load: %.1f ms\n", load_ms);
    printf("encode: median %.3f ms, min %.3f ms over %d runs, %.2f M tokens/s\n", median, times[0],
           reps, nids / median / 1e3);
    printf("tokenizer=encode bytes=%zu tokens=%zu median_ms=%.3f\n", n, nids, median);
    free(times);
    free(text);
    mygpt_tokenizer_free(tok);
    return 0;
}
