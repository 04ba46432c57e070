/*
 * cli_common.h - what the tests of the `mygpt` tool (tests/test_cli_*.c) share: running
 * the tool on a line of words with the test's folder and the data folder filled in,
 * Ctrl-C at a chosen step, reading files back whole, and the checks of a refusal.
 * MYGPT_EXE is set by meson.
 */
#ifndef MYGPT_TESTS_CLI_COMMON_H
#define MYGPT_TESTS_CLI_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "mygpt/gpt.h"
#include "runproc.h"

/* The vocabulary's folder: skipped when its files are absent, failed under CI=true */
const char *vocab_or_skip(void);

/* Runs exe with words; --help must exit 0 with the usage on stdout and nothing on
 * stderr; an unknown flag must exit 2 with one stderr line naming it. */
void check_program(const char *exe, const char *prefix_words, const char *who);

/* Runs `mygpt WORDS` (DATA = the data folder; in --prompt's value _ is a space). */
int run_tool_words(const char *words, const char *data, proc_result *r);

/* Runs `mygpt WORDS` with DIR the test's folder (and DATA the data folder, as
 * run_tool_words; data may be NULL when no word names it) */
void run_in_dir(const char *words, const char *dir, const char *data, proc_result *r);

/* mygpt train WORDS (DATA the data folder, DIR the test's folder), Ctrl-C once `after`
 * steps are taken (NULL: never; MYGPT_TRAIN_SIGINT_AFTER, the tool's hook for the tests) */
void train_run(const char *words, const char *dir, const char *data, const char *after, proc_result *r);

/* Runs `/bin/sh -c script` (a redirection the test needs: /dev/full, bytes with a NUL) */
void run_shell(const char *script, proc_result *r);

/* The whole file at path (malloc'd, *n bytes), or NULL */
char *file_bytes(const char *path, size_t *n);

/* The whole file at path as a string (malloc'd, *n bytes before its '\0'), or NULL */
char *file_text(const char *path, size_t *n);

/* 1 when both files can be read and hold the same bytes */
int same_files(const char *a, const char *b);

/* Files in dir, '.' and '..' aside */
int entries_in(const char *dir);

/* Writes text to path (the test fails when it cannot) */
void write_file(const char *path, const char *text);

/* Removes dir/NAME for each of names, in order (files, or folders emptied before), then
 * dir: a test's clean-up, which fails when anything else was left in dir */
void remove_test_dir(const char *dir, const char *const *names, size_t n);

/* A model of cfg drawn from seed, saved at path */
void save_new_model(const char *path, const mygpt_config *cfg, uint64_t seed);

/* The-verdict's first lines (its first `bytes` bytes, cut after the last newline there)
 * written to dir/verdict_part.txt */
void write_verdict_part(const char *verdict, const char *dir, size_t bytes);

/* A run that must be refused before any work: its words (train_run's), and the two
 * flags the one line names */
typedef struct refused_run {
    const char *words, *flag, *other;
} refused_run;

/* Each run refused: status 2, one line naming both flags, nothing on stdout, no file made
 * in dir, the files `keep` (names in dir) byte for byte as they were */
void expect_refused_untouched(const refused_run *runs, size_t n, const char *dir, const char *data,
                              const char *const *keep, size_t n_keep);

/* What a refusal of bad input looks like: exit `status`, nothing on stdout, one line on
 * stderr holding msg (what: the command, for the failure's message) */
void expect_one_line_refusal(const proc_result *r, int status, const char *msg, const char *what);

/* The file at path holds exactly text (what: the command, for the failure's message) */
void expect_file_holds(const char *path, const char *text, const char *what);

/* Writes old to path, runs exe with words under a file-size limit of `bytes` (SIGXFSZ at
 * its default, as a shell leaves it), then expects status 1, one line naming path and the
 * limit, and the file at path still old */
void expect_file_size_limit_keeps_old(const char *exe, const char *words, long bytes, const char *path,
                                      const char *old);

#endif
