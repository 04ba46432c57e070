/*
 * data.h - the tests' rule for data files (GPT-2's vocabulary, the-verdict): a test
 * skips only when a file is absent, and under CI=true an absent file is a failure. A
 * file that is there but broken is never skipped: loading it must work.
 */
#ifndef MYGPT_TESTS_DATA_H
#define MYGPT_TESTS_DATA_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mygpt/data.h"
#include "mygpt/tokenizer.h"

static inline int running_in_ci(void)
{
    const char *ci = getenv("CI");
    return ci && strcmp(ci, "true") == 0;
}

/* Skips the test (fails it under CI=true) with why. */
#define skip_or_fail_missing(...)                                                                  \
    do {                                                                                       \
        if (running_in_ci())                                                                   \
            cr_assert_fail(__VA_ARGS__);                                                            \
        else                                                                                   \
            cr_skip_test(__VA_ARGS__);                                                         \
    } while (0)

/* The data folder's path (mygpt_data_dir), or skip / fail when there is none. */
static inline const char *data_dir_or_skip(void)
{
    static char dir[4096];
    mygpt_error err = {0};
    if (mygpt_data_dir(dir, sizeof dir, &err) != MYGPT_OK)
    {
        skip_or_fail_missing("data not available: %s", err.message);
        return NULL;
    }
    return dir;
}

/* DIR/name when the file exists, else skip / fail (the file is absent). */
static inline const char *data_file_or_skip(const char *name)
{
    static char path[4200];
    const char *dir = data_dir_or_skip();
    if (!dir)
        return NULL;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (access(path, F_OK) != 0) {
        skip_or_fail_missing("%s is absent (run scripts/fetch-data.sh)", path);
        return NULL;
    }
    return path;
}

#ifdef TESTS_SOURCE_DIR
/* corpus/llama/NAME (llama2.c's stories260K files, in the repository) when it is there,
 * else skip / fail. */
static inline const char *llama_file_or_skip(const char *name)
{
    static char path[4200];
    snprintf(path, sizeof path, "%s/../corpus/llama/%s", TESTS_SOURCE_DIR, name);
    if (access(path, F_OK) != 0)
        skip_or_fail_missing("%s is absent", path);
    return path;
}
#endif

/* A folder's path of 4085 bytes (folders of 100 bytes under /nonexistent-...): DIR/vocab.bpe
 * fits in 4095 bytes, DIR/encoder.json does not. */
static inline const char *too_long_data_dir(void)
{
    static char dir[4096];
    memset(dir, 'd', sizeof dir);
    memcpy(dir, "/nonexistent-", 13);
    for (size_t k = 100; k < 4085; k += 100)
        dir[k] = '/';
    dir[4085] = '\0';
    return dir;
}

/* GPT-2's tokenizer: skipped when encoder.json or vocab.bpe is absent, a failure when
 * they are there and do not load. */
static inline mygpt_tokenizer *tokenizer_or_skip(void)
{
    if (!data_file_or_skip("encoder.json") || !data_file_or_skip("vocab.bpe"))
        return NULL;
    mygpt_tokenizer *tok = NULL;
    mygpt_error err = {0};
    cr_assert_eq(mygpt_tokenizer_load_dir(&tok, data_dir_or_skip(), &err), MYGPT_OK,
                 "the GPT-2 vocabulary is there but does not load: %s", err.message);
    return tok;
}

/* The whole instruction-data.json read into d, and GPT-2's tokenizer: NULL (the test
 * skipped, or failed under CI=true) when either is absent. */
static inline mygpt_tokenizer *instruction_data_or_skip(mygpt_instruct_data *d)
{
    const char *path = data_file_or_skip("instruction-data.json");
    if (!path)
        return NULL;
    char p[4200];
    snprintf(p, sizeof p, "%s", path);
    mygpt_tokenizer *tok = tokenizer_or_skip();
    if (!tok)
        return NULL;
    mygpt_error err = {0};
    cr_assert_eq(mygpt_instruct_data_read(d, p, &err), MYGPT_OK, "%s", err.message);
    return tok;
}

#endif
