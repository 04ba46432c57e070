/* cli_common.c - what the tests of the `mygpt` tool share (see cli_common.h). */
#define _XOPEN_SOURCE 700 /* nftw */
#include "cli_common.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "data.h"
#include "mygpt/checkpoint.h"

/* The tool writes into the folder it runs in (a run of `mygpt train` without --save makes
 * runs/NAME/ there): the tests of the tool start in a fresh temporary folder, removed with
 * what is left in it when they end. */
static char work_dir[] = "/tmp/mygpt-cli-XXXXXX";

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

ReportHook(PRE_ALL)(struct criterion_test_set *tests)
{
    (void)tests;
    if (!mkdtemp(work_dir) || chdir(work_dir) != 0)
        work_dir[0] = '\0';
}

ReportHook(POST_ALL)(struct criterion_global_stats *stats)
{
    (void)stats;
    if (work_dir[0] && chdir("/") == 0)
        nftw(work_dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

const char *vocab_or_skip(void)
{
    data_file_or_skip("vocab.bpe");
    data_file_or_skip("encoder.json");
    return data_dir_or_skip();
}

void check_program(const char *exe, const char *prefix_words, const char *who)
{
    char words[512];
    proc_result r;
    snprintf(words, sizeof words, "%s--help", prefix_words);
    cr_assert_eq(run_words(exe, words, &r), 0);
    cr_expect_eq(r.status, 0, "%s --help: exit %d", who, r.status);
    cr_expect(strstr(r.out, "usage:") != NULL, "%s --help printed no usage: %s", who, r.out);
    cr_expect_str_empty(r.err, "%s --help: stderr %s", who, r.err);
    proc_result_free(&r);
    snprintf(words, sizeof words, "%s--no-such-flag 1", prefix_words);
    cr_assert_eq(run_words(exe, words, &r), 0);
    cr_expect_eq(r.status, 2, "%s --no-such-flag: exit %d", who, r.status);
    cr_expect_str_empty(r.out, "%s --no-such-flag: stdout %s", who, r.out);
    cr_expect_eq(count_lines(r.err), 1, "%s: %s", who, r.err);
    cr_expect(strstr(r.err, "'--no-such-flag'") != NULL, "%s does not name the flag: %s", who, r.err);
    proc_result_free(&r);
}

int run_tool_words(const char *words, const char *data, proc_result *r)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", words);
    char *argv[64], expanded[64][1024];
    int n = 0;
    argv[n++] = (char *)MYGPT_EXE;
    for (char *w = strtok(buf, " "); w && n < 63; w = strtok(NULL, " ")) {
        char *d = strstr(w, "DATA");
        if (d)
            snprintf(expanded[n], sizeof expanded[n], "%.*s%s%s", (int)(d - w), w, data, d + 4);
        else
            snprintf(expanded[n], sizeof expanded[n], "%s", w);
        if (n > 1 && (strcmp(argv[n - 1], "--prompt") == 0 || strcmp(argv[n - 1], "--sample-prompt") == 0))
            for (char *c = expanded[n]; *c; c++)
                *c = *c == '_' ? ' ' : *c;
        argv[n] = expanded[n];
        n++;
    }
    argv[n] = NULL;
    return run_process(argv, r);
}

void run_in_dir(const char *words, const char *dir, const char *data, proc_result *r)
{
    char expanded[2048], *o = expanded;
    for (const char *w = words; *w && o < expanded + sizeof expanded - 300;)
        if (strncmp(w, "DIR", 3) == 0) {
            o += sprintf(o, "%s", dir);
            w += 3;
        } else {
            *o++ = *w++;
        }
    *o = '\0';
    cr_assert_eq(run_tool_words(expanded, data, r), 0);
}

void train_run(const char *words, const char *dir, const char *data, const char *after, proc_result *r)
{
    if (after)
        setenv("MYGPT_TRAIN_SIGINT_AFTER", after, 1);
    else
        unsetenv("MYGPT_TRAIN_SIGINT_AFTER");
    run_in_dir(words, dir, data, r);
    unsetenv("MYGPT_TRAIN_SIGINT_AFTER");
}

void run_shell(const char *script, proc_result *r)
{
    char *argv[] = {"/bin/sh", "-c", (char *)script, NULL};
    cr_assert_eq(run_process(argv, r), 0);
}

char *file_bytes(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t cap = 0, len = 0, got;
    do {
        if (len + 65536 > cap && !(buf = realloc(buf, cap = 2 * cap + 65536)))
            break;
        got = fread(buf + len, 1, cap - len, f);
        len += got;
    } while (got > 0);
    fclose(f);
    *n = len;
    return buf;
}

char *file_text(const char *path, size_t *n)
{
    char *text = file_bytes(path, n);
    if (text) {
        text = realloc(text, *n + 1);
        text[*n] = '\0';
    }
    return text;
}

int same_files(const char *a, const char *b)
{
    size_t na = 0, nb = 0;
    char *x = file_bytes(a, &na), *y = file_bytes(b, &nb);
    const int same = x && y && na == nb && memcmp(x, y, na) == 0;
    free(x);
    free(y);
    return same;
}

int entries_in(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    if (d)
        closedir(d);
    return n;
}

void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    fputs(text, f);
    cr_assert_eq(fclose(f), 0, "%s", path);
}

void remove_test_dir(const char *dir, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char path[4400];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        remove(path);
    }
    cr_expect_eq(rmdir(dir), 0, "only the files written were left");
}

void save_new_model(const char *path, const mygpt_config *cfg, uint64_t seed)
{
    mygpt_gpt *g = NULL;
    cr_assert_eq(mygpt_gpt_create(&g, cfg, seed, NULL), MYGPT_OK);
    cr_assert_eq(mygpt_checkpoint_save(g, path, NULL), MYGPT_OK);
    mygpt_gpt_free(g);
}

void write_verdict_part(const char *verdict, const char *dir, size_t bytes)
{
    size_t n = 0;
    char *text = file_bytes(verdict, &n), path[300];
    cr_assert(text != NULL && n > bytes, "%s: unreadable or shorter than %zu bytes", verdict, bytes);
    while (bytes > 0 && text[bytes - 1] != '\n')
        bytes--;
    snprintf(path, sizeof path, "%s/verdict_part.txt", dir);
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f, "%s", path);
    cr_assert_eq(fwrite(text, 1, bytes, f), bytes);
    cr_assert_eq(fclose(f), 0);
    free(text);
}

void expect_refused_untouched(const refused_run *runs, size_t n, const char *dir, const char *data,
                              const char *const *keep, size_t n_keep)
{
    char *before[8];
    size_t len[8];
    cr_assert(n_keep <= 8);
    for (size_t k = 0; k < n_keep; k++) {
        char path[300];
        snprintf(path, sizeof path, "%s/%s", dir, keep[k]);
        cr_assert_not_null(before[k] = file_bytes(path, &len[k]), "%s", path);
    }
    const int files = entries_in(dir);
    for (size_t i = 0; i < n; i++) {
        proc_result r;
        train_run(runs[i].words, dir, data, NULL, &r);
        cr_expect_eq(r.status, 2, "%s: exit %d: %s", runs[i].words, r.status, r.err);
        cr_expect_eq(count_lines(r.err), 1, "%s: %s", runs[i].words, r.err);
        cr_expect(strstr(r.err, runs[i].flag) && strstr(r.err, runs[i].other), "%s: '%s' lacks %s or %s",
                  runs[i].words, r.err, runs[i].flag, runs[i].other);
        cr_expect_str_empty(r.out, "%s: worked first", runs[i].words);
        proc_result_free(&r);
        for (size_t k = 0; k < n_keep; k++) {
            char path[300];
            size_t now_len = 0;
            snprintf(path, sizeof path, "%s/%s", dir, keep[k]);
            char *now = file_bytes(path, &now_len);
            cr_expect(now && now_len == len[k] && memcmp(now, before[k], len[k]) == 0, "%s: %s was replaced",
                      runs[i].words, keep[k]);
            free(now);
        }
        cr_expect_eq(entries_in(dir), files, "%s: a file was made", runs[i].words);
    }
    for (size_t k = 0; k < n_keep; k++)
        free(before[k]);
}

void expect_one_line_refusal(const proc_result *r, int status, const char *msg, const char *what)
{
    cr_expect_eq(r->status, status, "%s: exit %d (%s)", what, r->status, r->err);
    cr_expect_str_empty(r->out, "%s: %s", what, r->out);
    cr_expect_eq(count_lines(r->err), 1, "%s: %s", what, r->err);
    cr_expect(strstr(r->err, msg) != NULL, "%s: '%s' lacks '%s'", what, r->err, msg);
}

void expect_file_holds(const char *path, const char *text, const char *what)
{
    size_t n = 0;
    char *now = file_bytes(path, &n);
    cr_expect(now && n == strlen(text) && memcmp(now, text, n) == 0, "%s: %s was replaced", what, path);
    free(now);
}

void expect_file_size_limit_keeps_old(const char *exe, const char *words, long bytes, const char *path,
                                      const char *old)
{
    write_file(path, old);
    signal(SIGXFSZ, SIG_DFL);
#ifdef FSIZE_TOOL
    // LLVM's OpenMP runtime sizes a 1 KiB file as it starts: the program starts under at
    // least that, and an OpenMP tool (tests/fsize_tool.c) sets the limit asked for once
    // the runtime has started, before the program writes anything
    const long start = bytes > 1024 ? bytes : 1024;
    char asked[32];
    snprintf(asked, sizeof asked, "%ld", bytes);
    cr_assert_eq(setenv("OMP_TOOL_LIBRARIES", FSIZE_TOOL, 1), 0);
    cr_assert_eq(setenv("MYGPT_TEST_FSIZE", asked, 1), 0);
#else
    const long start = bytes;
#endif
    const struct rlimit limit = {(rlim_t)start, (rlim_t)start};
    struct rlimit was;
    cr_assert_eq(getrlimit(RLIMIT_FSIZE, &was), 0);
    cr_assert_eq(setrlimit(RLIMIT_FSIZE, &limit), 0); // inherited by the program
    proc_result r;
    cr_assert_eq(run_words(exe, words, &r), 0);
    setrlimit(RLIMIT_FSIZE, &was);
#ifdef FSIZE_TOOL
    unsetenv("OMP_TOOL_LIBRARIES");
    unsetenv("MYGPT_TEST_FSIZE");
#endif
    cr_expect_eq(r.status, 1, "exit %d: %s", r.status, r.err);
    cr_expect(count_lines(r.err) == 1 && strstr(r.err, path) && strstr(r.err, "(the file-size limit)"), "%s", r.err);
    proc_result_free(&r);
    expect_file_holds(path, old, words);
}
