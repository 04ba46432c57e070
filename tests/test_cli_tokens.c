/*
 * test_cli_tokens.c - encode and decode (GPT-2's vocabulary, from scripts/fetch-data.sh)
 * against tiktoken, and the data folder's rule: an absent vocabulary skips (fails under
 * CI=true), a broken one fails, an oversized one or a path too long is refused.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_common.h"
#include "data.h"
#include "golden.h"

Test(cli_tokens, encode_and_decode_match_tiktoken)
{
    const char *dir = vocab_or_skip();
    golden_reader g = golden_reader_must_open("tokenizer.txt");
    char tmp[64], args[8192];
    int cases = 0;
    snprintf(tmp, sizeof tmp, "/tmp/mygpt-cli-%d.txt", (int)getpid());
    for (char *line; cases < 40 && (line = golden_read(&g));) {
        char *tab = strchr(line, '\t');
        if (!tab || tab == line || strcmp(tab + 1, "-") == 0)
            continue;
        *tab = '\0';
        const char *ids = tab + 1;
        size_t n = strlen(line) / 2;
        FILE *t = fopen(tmp, "wb");
        for (size_t i = 0; i < n; i++) {
            unsigned b;
            sscanf(line + 2 * i, "%2x", &b);
            fputc((int)b, t);
        }
        fclose(t);
        proc_result r;
        snprintf(args, sizeof args, "encode --vocab-dir %s %s", dir, tmp);
        cr_assert_eq(run_words(MYGPT_EXE, args, &r), 0);
        char want[4096];
        snprintf(want, sizeof want, "%s\n", ids);
        cr_expect_eq(r.status, 0, "mygpt %s: %s", args, r.err);
        cr_expect_str_eq(r.out, want, "tokenizer.txt:%ld", g.lineno);
        proc_result_free(&r);
        /* and back: decode prints the original bytes */
        snprintf(args, sizeof args, "decode --vocab-dir %s %s", dir, ids);
        cr_assert_eq(run_words(MYGPT_EXE, args, &r), 0);
        FILE *t2 = fopen(tmp, "rb");
        char orig[4096] = {0};
        size_t on = fread(orig, 1, sizeof orig - 1, t2);
        fclose(t2);
        cr_expect(strlen(r.out) == on && memcmp(r.out, orig, on) == 0, "decode of line %ld", g.lineno);
        proc_result_free(&r);
        cases++;
    }
    unlink(tmp);
    cr_expect_gt(cases, 30);
    golden_reader_close(&g);
}

Test(cli_tokens, bad_token_input_is_an_error)
{
    const char *dir = vocab_or_skip();
    char tmp[64], args[8192];
    snprintf(tmp, sizeof tmp, "/tmp/mygpt-cli-bad-%d.txt", (int)getpid());
    FILE *t = fopen(tmp, "wb");
    fputs("caf\xe9 (Latin-1, not UTF-8)\n", t);
    fclose(t);
    const struct { const char *fmt; const char *msg; } cases[] = {
        {"encode --vocab-dir %s /nonexistent/file.txt", "cannot open /nonexistent/file.txt"},
        {"encode --vocab-dir /nonexistent-vocab %.0s", "scripts/fetch-data.sh"},
        {"encode --vocab-dir %s a.txt b.txt", "at most one FILE"},
        {"decode --vocab-dir %s 50257", "token id 50257 is outside [0, 50257)"},
        {"decode --vocab-dir %s -- -1", "token id -1 is outside"}, /* "--" ends the options */
        {"decode --vocab-dir %s -1", "unexpected argument '-1' (see 'mygpt decode --help'; an argument that begins "
                                     "with '-' goes after --: mygpt decode -- -1)"}, /* an id, not a file */
        {"decode --vocab-dir %s 12abc", "'12abc' is not a token id"},
        {"decode --vocab-dir %s +5", "'+5' is not a token id"}, /* strtoll's +, as its spaces: not an id */
        {"decode --vocab-dir", "needs a value"},
        {"decode --vocab-dir %s 1234567890123456789012345678901234567890123456789012345678901234567890x",
         "'1234567890123456789012345678901234567890123456789012345678901234...' is not a token id"}, // its start
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(args, sizeof args, cases[i].fmt, dir);
        proc_result r;
        cr_assert_eq(run_words(MYGPT_EXE, args, &r), 0);
        cr_expect(r.status >= 1 && r.status <= 125, "mygpt %s: exit %d", args, r.status);
        cr_expect_str_empty(r.out, "mygpt %s", args);
        cr_expect_eq(count_lines(r.err), 1, "mygpt %s: %s", args, r.err);
        cr_expect(strstr(r.err, cases[i].msg) != NULL, "mygpt %s: '%s' lacks '%s'", args, r.err, cases[i].msg);
        proc_result_free(&r);
    }
    snprintf(args, sizeof args, "encode --vocab-dir %s %s", dir, tmp);
    proc_result r;
    cr_assert_eq(run_words(MYGPT_EXE, args, &r), 0);
    cr_expect_eq(r.status, 2, "bad input is exit status 2 in every command (generate's too)");
    cr_expect(strstr(r.err, "not valid UTF-8 (byte offset 3)") != NULL, "%s", r.err);
    proc_result_free(&r);
    unlink(tmp);
}

/* Decode takes any number of ids, and reads them from standard input when none are given;
 * encode | decode gives the file back byte for byte. */
Test(cli_tokens, encode_then_decode_round_trips_the_verdict_exactly)
{
    const char *dir = vocab_or_skip();
    const char *text = data_file_or_skip("the-verdict.txt");
    char cmd[40000];
    snprintf(cmd, sizeof cmd, "'%s' encode --vocab-dir '%s' '%s' | '%s' decode --vocab-dir '%s' | cmp -s - '%s'",
             MYGPT_EXE, dir, text, MYGPT_EXE, dir, text);
    cr_expect_eq(system(cmd), 0, "encode | decode (standard input) changed the text");
    snprintf(cmd, sizeof cmd, "'%s' decode --vocab-dir '%s' $('%s' encode --vocab-dir '%s' '%s') | cmp -s - '%s'",
             MYGPT_EXE, dir, MYGPT_EXE, dir, text, text);
    cr_expect_eq(system(cmd), 0, "decode of 5,145 ids as arguments changed the text");
}

/* A NUL on decode's standard input is refused, naming its offset, instead of ending the
 * ids there with exit 0. */
Test(cli_tokens, decode_refuses_a_nul_byte_on_standard_input)
{
    const char *data = data_dir_or_skip();
    data_file_or_skip("encoder.json");
    char script[4200];
    snprintf(script, sizeof script, "printf '40 367\\0 2885' | '%s' decode --vocab-dir '%s'", MYGPT_EXE, data);
    char *argv[] = {"/bin/sh", "-c", script, NULL};
    proc_result r = {0};
    cr_assert_eq(run_process(argv, &r), 0);
    cr_expect_eq(r.status, 2, "exit %d: %s", r.status, r.err);
    cr_expect_str_empty(r.out, "%s", r.out);
    cr_expect(strstr(r.err, "NUL byte at offset 6") != NULL, "%s", r.err);
    proc_result_free(&r);
}

/* A vocabulary file larger than a vocabulary can need is refused before it is read,
 * naming the file and the limit (a sparse 70 MB encoder.json). */
Test(cli_tokens, an_oversized_vocabulary_is_refused_unread, .timeout = 20)
{
    char dir[] = "/tmp/mygpt_vocab_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char enc[300], bpe[300], words[700];
    snprintf(enc, sizeof enc, "%s/encoder.json", dir);
    snprintf(bpe, sizeof bpe, "%s/vocab.bpe", dir);
    FILE *f = fopen(enc, "w");
    cr_assert_not_null(f);
    cr_assert_eq(ftruncate(fileno(f), 70 << 20), 0);
    fclose(f);
    f = fopen(bpe, "w");
    fclose(f);
    snprintf(words, sizeof words, "decode --vocab-dir %s 1 2", dir);
    proc_result r = {0};
    cr_assert_eq(run_words(MYGPT_EXE, words, &r), 0);
    cr_expect_eq(r.status, 2, "exit %d: %s", r.status, r.err);
    cr_expect(strstr(r.err, "encoder.json is 73400320 bytes, more than the 67108864") != NULL, "%s", r.err);
    proc_result_free(&r);
    unlink(enc);
    unlink(bpe);
    rmdir(dir);
}

/* A MYGPT_DATA too long for DIR/encoder.json is one clear error, not a shortened path
 * opened */
Test(cli_tokens, a_long_mygpt_data_is_refused_not_cut)
{
    setenv("MYGPT_DATA", too_long_data_dir(), 1);
    proc_result r;
    cr_assert_eq(run_words(MYGPT_EXE, "decode 1 2", &r), 0);
    cr_expect_eq(r.status, 2, "exit %d: %s", r.status, r.err);
    cr_expect(strstr(r.err, "too long") != NULL && strstr(r.err, "cannot open") == NULL, "%s", r.err);
    cr_expect_eq(count_lines(r.err), 1, "%s", r.err);
    cr_expect_str_empty(r.out);
    proc_result_free(&r);
}

/* Runs the tokenizer suite with MYGPT_DATA = dir (and CI as given); returns its status
 * and whether it reported a skip. */
static int run_tokenizer_suite(const char *dir, const char *ci, int *skipped)
{
    char *const argv[] = {TOKENIZER_TEST_EXE, "--jobs", "1", "--verbose", NULL};
    const char *old_data = getenv("MYGPT_DATA"), *old_ci = getenv("CI");
    char *saved_data = old_data ? strdup(old_data) : NULL, *saved_ci = old_ci ? strdup(old_ci) : NULL;
    setenv("MYGPT_DATA", dir, 1);
    /* BoxFort marks this process as a Criterion worker; the child must be a runner */
    char *bxfi = getenv("BXFI_MAP") ? strdup(getenv("BXFI_MAP")) : NULL;
    unsetenv("BXFI_MAP");
    if (ci)
        setenv("CI", ci, 1);
    else
        unsetenv("CI");
    proc_result r;
    cr_assert_eq(run_process(argv, &r), 0);
    saved_data ? setenv("MYGPT_DATA", saved_data, 1) : unsetenv("MYGPT_DATA");
    saved_ci ? setenv("CI", saved_ci, 1) : unsetenv("CI");
    if (bxfi)
        setenv("BXFI_MAP", bxfi, 1);
    free(bxfi);
    free(saved_data);
    free(saved_ci);
    *skipped = strstr(r.out, "[SKIP]") != NULL || strstr(r.err, "[SKIP]") != NULL;
    const int status = r.status;
    proc_result_free(&r);
    return status;
}

Test(cli_tokens, a_truncated_vocabulary_fails_the_tokenizer_tests_never_skips_them)
{
    const char *src = vocab_or_skip();
    char dir[] = "/tmp/mygpt-data-XXXXXX", cmd[16384];
    cr_assert(mkdtemp(dir) != NULL);
    /* the real vocab.bpe and the-verdict, and the first 100 kB of encoder.json */
    snprintf(cmd, sizeof cmd,
             "cp '%s/vocab.bpe' '%s/the-verdict.txt' '%s/' 2>/dev/null; head -c 100000 '%s/encoder.json' > '%s/encoder.json'",
             src, src, dir, src, dir);
    cr_assert_eq(system(cmd), 0);
    int skipped;
    cr_expect_eq(run_tokenizer_suite(dir, NULL, &skipped), 1, "a broken encoder.json did not fail the suite");
    cr_expect(!skipped, "a broken encoder.json was reported as skipped");
    /* absent: skipped and green, except under CI=true */
    snprintf(cmd, sizeof cmd, "rm -f '%s/encoder.json' '%s/vocab.bpe' '%s/the-verdict.txt'", dir, dir, dir);
    cr_assert_eq(system(cmd), 0);
    const int absent = run_tokenizer_suite(dir, NULL, &skipped);
    cr_expect_eq(absent, 0, "absent data failed outside CI (exit %d)", absent);
    cr_expect(skipped, "absent data was not reported as skipped");
    cr_expect_eq(run_tokenizer_suite(dir, "true", &skipped), 1, "absent data did not fail under CI=true");
    rmdir(dir);
}

/* A text that cannot be read as the model's tokens is refused naming where it came from:
 * encode's FILE, --prompt (not UTF-8, or GPT-2 tokens that a smaller vocabulary lacks) */
Test(cli_tokens, a_text_that_cannot_be_tokens_names_its_file_or_flag)
{
    const char *dir = vocab_or_skip();
    char tmp[64], words[5][300], msgs[5][200];
    snprintf(tmp, sizeof tmp, "/tmp/mygpt-cli-name-%d.txt", (int)getpid());
    FILE *t = fopen(tmp, "wb");
    cr_assert_not_null(t);
    fputs("ok \xff", t);
    cr_assert_eq(fclose(t), 0);
    const char *model = "--seed 0 --vocab 300 --embed 4 --heads 2 --layers 1"; // GPT-2's " dog" is 3290
    snprintf(words[0], sizeof words[0], "encode %s", tmp);
    snprintf(msgs[0], sizeof msgs[0], "%s: the text is not valid UTF-8 (byte offset 3)", tmp);
    for (int k = 0; k < 2; k++) {
        const char *c = k ? "attention" : "generate", *more = k ? "" : " --max-new 1";
        snprintf(words[1 + k], sizeof words[1 + k], "%s %s --prompt ab\xff%s", c, model, more);
        snprintf(msgs[1 + k], sizeof msgs[1 + k], "--prompt: the text is not valid UTF-8 (byte offset 2)");
        snprintf(words[3 + k], sizeof words[3 + k], "%s %s --prompt a_b_c_dog%s", c, model, more);
        snprintf(msgs[3 + k], sizeof msgs[3 + k], "--prompt: its GPT-2 token 3290 is outside the model's vocabulary "
                 "of 300");
    }
    for (int i = 0; i < 5; i++) {
        proc_result r;
        cr_assert_eq(run_tool_words(words[i], dir, &r), 0);
        expect_one_line_refusal(&r, 2, msgs[i], words[i]);
        proc_result_free(&r);
    }
    unlink(tmp);
}
