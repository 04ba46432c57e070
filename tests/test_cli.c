/*
 * test_cli.c - the `mygpt` tool end to end: the invocations of tests/golden/cli.txt
 * print exactly what the same Python prints, and every bad argument gets one
 * line on stderr, nothing on stdout and exit status 2.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "data.h"
#include "golden.h"
#include "mygpt/checkpoint.h"
#include "mygpt/print.h"
#include "mygpt/quantize.h"
#include "mygpt/svg.h"
#include "mygpt/tokenizer.h"
#include "mygpt/data.h"
#include "mygpt/lora.h"
#include "runproc.h"

Test(cli, invocations_print_what_pytorch_prints)
{
    FILE *f = golden_open("cli.txt");
    cr_assert_not_null(f);
    char *line = NULL;
    size_t cap = 0;
    long lineno = 0;
    int cases = 0;
    while (golden_next_line(f, &line, &cap, &lineno) >= 0) {
        char *w[2];
        cr_assert_eq(golden_split(line, '\t', w, 2), 2);
        golden_unescape(w[1]);
        proc_result r;
        cr_assert_eq(run_words(MYGPT_EXE, w[0], &r), 0);
        cr_expect_eq(r.status, 0, "mygpt %s: exit %d, stderr: %s", w[0], r.status, r.err);
        cr_expect_str_eq(r.out, w[1], "mygpt %s", w[0]);
        cr_expect_str_empty(r.err, "mygpt %s", w[0]);
        proc_result_free(&r);
        cases++;
    }
    cr_expect_gt(cases, 25);
    free(line);
    fclose(f);
}

/* Each: the arguments, and a piece of the expected error message. */
static const char *const BAD[][2] = {
    {"", "usage"},
    {"frobnicate", "unknown command 'frobnicate' (see 'mygpt --help')"},
    {"genrate --seed 0", "unknown command 'genrate' (did you mean 'generate'?"},
    {"rnadn", "did you mean 'randn'?"},
    {"randn --shape 2", "--seed is required"},
    {"randn --seed 0", "--shape is required"},
    {"randn --seed 0 --shape", "'--shape' needs a value"},
    {"randn --seed abc --shape 2", "--seed: 'abc' is not an integer"},
    {"randn --seed 18446744073709551616 --shape 2", "--seed"},
    {"randn --seed -9223372036854775809 --shape 2", "--seed"},
    {"randn --seed 0 --shape 2,,3", "--shape"},
    {"randn --seed 0 --shape -2", "--shape"},
    {"randn --seed 0 --shape 2x3", "--shape"},
    {"randn --seed 0 --shape 100000,100000,100000", "more than"},
    {"randn --seed 0 --shape 1,1,1,1,1,1,1,1,1", "at most 8 dimensions"},
    {"randn --seed 0 --shape 2 --std -1", "--std must be >= 0"},
    {"randn --seed 0 --shape 2 --mean nan", "--mean"},
    {"randn --seed 0 --shape 2 --bogus 1", "unknown option '--bogus'"},
    {"randn --seed 0 --seed 1 --shape 2", "more than once"},
    {"randn --seed 0 --shape 2 --format yaml", "--format"},
    {"randn --seed 0 --shape 2 --round 3", "--round only applies to --format numpy"},
    {"randn --seed 0 --shape 2 --format numpy --round -1", "--round"},
    {"randn --seed 0 --shape 2 --kernel sse", "--kernel"},
    {"randn --seed 0 --shape 2 extra", "unexpected argument 'extra'"},
    {"rand --seed 0 --shape 2 --low 3 --high 1", "--low must not exceed --high"},
    {"rand --seed 0 --shape 2 --high inf", "--high"},
    {"randint --seed 0 --low 5 --high 5 --shape 3", "--low must be less than --high"},
    {"randint --seed 0 --shape 3", "--high is required"},
    {"randint --seed 0 --high 9223372036854775808 --shape 3", "out of range"},
    {"randperm --seed 0 --n -1", "--n"},
    {"randperm --seed 0", "--n is required"},
    {"randperm --seed 0 --n 1000000000000", "out of range"},
    {"init", "expected 'linear', 'embedding' or 'gpt'"},
    {"init conv --seed 0", "unknown layer 'conv'"},
    {"init linear --seed 0 --in 3", "--out is required"},
    {"init linear --seed 0 --in -3 --out 2", "--in"},
    {"init linear --seed 0 --in 0 --out 2", "--in: 0 is out of range [1,"},
    {"init embedding --seed 0 --num 0 --dim 2", "--num: 0 is out of range [1,"},
    {"init linear --seed 0 --in 100000 --out 100000", "more than"},
    {"init embedding --seed 0 --num 3 --dim 4 --no-bias", "--no-bias does not apply"},
    {"init linear --seed 0 --no-bias=1 --in 2 --out 2", "takes no value"},
    {"forward --seed 0 --vocab 4 --embed 4 --heads 2 --layers 2 --ids 0,1,4", "token id 4 at (0, 2) is outside [0, 4)"},
    {"forward --seed 0 --vocab 4 --embed 4 --heads 2 --layers 2 --ids 0,-1", "token id -1 at (0, 1)"},
    {"forward --seed 0 --vocab 4 --embed 4 --heads 2 --layers 2 --max-seq 3 --ids 0,1,2,3", "input length T=4 exceeds max_seq_len=3"},
    {"forward --seed 0 --vocab 4 --embed 6 --heads 4 --layers 2 --ids 0", "embed_dim=6 is not divisible by num_heads=4"},
    {"forward --seed 0 --vocab 0 --embed 4 --heads 2 --layers 2 --ids 0", "vocab_size must be at least 1"},
    {"forward --seed 0 --vocab 4 --embed 4 --heads 2 --layers -2 --ids 0", "num_layers must be at least 1"},
    {"forward --seed 0 --vocab 4 --embed 4 --heads 2 --layers 2 --max-seq 0 --ids 0", "max_seq_len must be at least 1"},
    {"forward --seed 0 --vocab 4 --embed 4 --heads 2 --layers 2 --ids 0,1;2", "row 1 has 1 ids but row 0 has 2"},
    {"forward --seed 0 --vocab 4 --embed 4 --heads 2 --layers 2 --ids 0,,1", "--ids"},
    {"forward --seed 0 --vocab 4 --embed 4 --heads 2 --layers 2 --ids a,b", "--ids"},
    {"forward --seed 0 --vocab 4 --embed 4 --heads 2 --layers 2 --ids 0;", "--ids"},
    {"forward --seed 0 --vocab 4 --embed 4 --heads 2 --layers 2 --ids=", "--ids"},
    {"forward --seed 0 --vocab 4 --embed 4 --heads 2 --layers 2", "--ids is required"},
    {"forward --seed 0 --vocab 4 --embed 4 --heads 2 --ids 0", "--layers is required"},
    {"forward --seed 0 --vocab 99999999999 --embed 4 --heads 2 --layers 2 --ids 0", "out of range"},
    {"forward --seed 0 --vocab 16000000 --embed 16000000 --heads 1 --layers 16000000 --ids 0", "overflow"},
    {"forward --seed 0 --vocab 4 --embed 100000000 --heads 2 --layers 2 --ids 0", "larger than the supported"},
    {"params --vocab 4 --embed 6 --heads 4 --layers 2", "embed_dim=6 is not divisible by num_heads=4"},
    {"params --vocab 4 --embed 4 --heads 2", "--layers is required"},
    {"init gpt --seed 0 --vocab 4 --embed 4 --heads 3 --layers 1", "not divisible"},
};

Test(cli, bad_arguments_give_one_line_and_status_2)
{
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        proc_result r;
        cr_assert_eq(run_words(MYGPT_EXE, BAD[i][0], &r), 0);
        cr_expect_eq(r.status, 2, "mygpt %s: exit %d (stderr: %s)", BAD[i][0], r.status, r.err);
        cr_expect_str_empty(r.out, "mygpt %s printed on stdout: %s", BAD[i][0], r.out);
        if (BAD[i][0][0] != '\0') /* bare `mygpt` prints its usage, several lines */
            cr_expect_eq(count_lines(r.err), 1, "mygpt %s: stderr has %d lines: %s", BAD[i][0],
                         count_lines(r.err), r.err);
        cr_expect(strstr(r.err, BAD[i][1]) != NULL, "mygpt %s: stderr '%s' lacks '%s'", BAD[i][0],
                  r.err, BAD[i][1]);
        proc_result_free(&r);
    }
}

Test(cli, every_subcommand_has_help)
{
    static const char *const cmds[] = {"--help", "randn --help", "rand --help", "randint --help",
                                       "randperm --help", "init --help", "init linear --help",
                                       "init gpt --help", "forward --help", "params --help",
                                       "encode --help", "decode --help", "quantize --help"};
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        proc_result r;
        cr_assert_eq(run_words(MYGPT_EXE, cmds[i], &r), 0);
        cr_expect_eq(r.status, 0, "mygpt %s", cmds[i]);
        cr_expect(strstr(r.out, "usage: mygpt") != NULL, "mygpt %s: %s", cmds[i], r.out);
        proc_result_free(&r);
    }
}

/* Issue 38: one rule for an input longer than the model's context, in generate and in
 * attention: the last max_seq_len tokens are read (the tutorial's idx[:, -block_size:]),
 * and one line on stderr says so; the output is that of the last tokens alone. */
Test(cli, a_too_long_input_is_cropped_with_a_note_in_generate_and_attention)
{
    const char *model = "--seed 0 --vocab 10 --embed 4 --heads 2 --layers 1 --max-seq 4";
    const char *note = "more than the model's context: it reads the last 4\n";
    char words[512];
    proc_result r, last;
    snprintf(words, sizeof words, "generate %s --ids 1,2,3,4,5,6 --max-new 2", model);
    cr_assert_eq(run_words(MYGPT_EXE, words, &r), 0);
    cr_expect_eq(r.status, 0, "%s: %s", words, r.err);
    cr_expect(strstr(r.err, "mygpt generate: the prompt has 6 tokens, ") != NULL && strstr(r.err, note) != NULL,
              "no note: %s", r.err);
    cr_expect(strncmp(r.out, "1 2 3 4 5 6 ", 12) == 0, "the ids line lost the prompt: %s", r.out);
    proc_result_free(&r);
    snprintf(words, sizeof words, "attention %s --ids 1,2,3,4,5,6", model);
    cr_assert_eq(run_words(MYGPT_EXE, words, &r), 0);
    cr_expect_eq(r.status, 0, "%s: %s", words, r.err);
    cr_expect(strstr(r.err, "mygpt attention: the input has 6 tokens, ") != NULL && strstr(r.err, note) != NULL,
              "no note: %s", r.err);
    cr_expect_eq(count_lines(r.err), 1, "%s", r.err);
    snprintf(words, sizeof words, "attention %s --ids 3,4,5,6", model);
    cr_assert_eq(run_words(MYGPT_EXE, words, &last), 0);
    cr_expect_str_eq(r.out, last.out, "attention of 1..6 is not that of its last 4 tokens");
    cr_expect_str_empty(last.err, "an input that fits got a note: %s", last.err);
    proc_result_free(&r);
    proc_result_free(&last);
}

/* ---- encode / decode (need the vocabulary from scripts/fetch-data.sh) ---------- */

/* the vocabulary's folder: skipped when its files are absent, failed under CI=true */
static const char *vocab_or_skip(void)
{
    data_file_or_skip("vocab.bpe");
    data_file_or_skip("encoder.json");
    return data_dir_or_skip();
}

Test(cli_tokens, encode_and_decode_match_tiktoken)
{
    const char *dir = vocab_or_skip();
    FILE *f = golden_open("tokenizer.txt");
    cr_assert_not_null(f);
    char *line = NULL, tmp[64], args[8192];
    size_t cap = 0;
    long lineno = 0;
    int cases = 0;
    snprintf(tmp, sizeof tmp, "/tmp/mygpt-cli-%d.txt", (int)getpid());
    while (golden_next_line(f, &line, &cap, &lineno) >= 0 && cases < 40) {
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
        cr_expect_str_eq(r.out, want, "tokenizer.txt:%ld", lineno);
        proc_result_free(&r);
        /* and back: decode prints the original bytes */
        snprintf(args, sizeof args, "decode --vocab-dir %s %s", dir, ids);
        cr_assert_eq(run_words(MYGPT_EXE, args, &r), 0);
        FILE *t2 = fopen(tmp, "rb");
        char orig[4096] = {0};
        size_t on = fread(orig, 1, sizeof orig - 1, t2);
        fclose(t2);
        cr_expect(strlen(r.out) == on && memcmp(r.out, orig, on) == 0, "decode of line %ld", lineno);
        proc_result_free(&r);
        cases++;
    }
    unlink(tmp);
    cr_expect_gt(cases, 30);
    free(line);
    fclose(f);
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
        {"decode --vocab-dir %s -1", "unexpected argument"},
        {"decode --vocab-dir %s 12abc", "'12abc' is not a token id"},
        {"decode --vocab-dir", "needs a value"},
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

/* ---- the chapter programs get bad input too ------------------------------------ */

Test(cli_chapters, bad_chapter_arguments)
{
    char tmp[64];
    snprintf(tmp, sizeof tmp, "/tmp/mygpt-latin1-%d.txt", (int)getpid());
    FILE *t = fopen(tmp, "wb");
    fputs("caf\xe9\n", t);
    fclose(t);
    char text_arg[128];
    snprintf(text_arg, sizeof text_arg, "--text %s", tmp);
    const struct { const char *program, *args, *msg; int status; } cases[] = {
        {"25_position_breaks_invariance", "--seed abc", "--seed: 'abc' is not an integer", 2},
        {"25_position_breaks_invariance", "--seed", "option '--seed' needs a value", 2},
        {"55_rope_figure", "--figures", "option '--figures' needs a value", 2},
        {"55_rope_figure", "--figures --seed 3", "option '--figures' needs a value", 2},
        {"26_gpt_main", "--bogus", "unknown option '--bogus'", 2},
        {"53_alibi", "--seed 3", "unknown option '--seed'", 2},
        {"55_rope_figure", "--figures /nonexistent/dir", "cannot write in /nonexistent/dir (for /nonexistent/dir/rope_figure.svg)", 2},
        {"61_verdict_dataloader", "--text /nonexistent.txt", "cannot open /nonexistent.txt", 2},
        {"61_verdict_dataloader", text_arg, "not valid UTF-8 (byte offset 3)", 2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char exe[4096];
        snprintf(exe, sizeof exe, "%s/%s", CHAPTER_DIR, cases[i].program);
        proc_result r;
        cr_assert_eq(run_words(exe, cases[i].args, &r), 0);
        if (strcmp(cases[i].program, "61_verdict_dataloader") == 0 && r.status == 77) {
            proc_result_free(&r);
            cr_assert(!running_in_ci(), "chapter 61 found no data under CI=true: %s", r.err);
            cr_skip_test("GPT-2 vocabulary not available for chapter 61");
        }
        cr_expect_eq(r.status, cases[i].status, "%s %s: exit %d (%s)", cases[i].program, cases[i].args,
                     r.status, r.err);
        cr_expect_str_empty(r.out, "%s %s", cases[i].program, cases[i].args);
        cr_expect_eq(count_lines(r.err), 1, "%s %s: %s", cases[i].program, cases[i].args, r.err);
        cr_expect(strstr(r.err, cases[i].msg) != NULL, "%s %s: '%s' lacks '%s'", cases[i].program,
                  cases[i].args, r.err, cases[i].msg);
        proc_result_free(&r);
    }
    unlink(tmp);
}

/* Issue 38: a chapter whose output no seed changes says so in its --help (and the map
 * suggests no --seed 7 for it): those of UNSEEN print the same with two other seeds,
 * and every other chapter with a --seed does not claim it. */
Test(cli_chapters, a_seed_that_changes_nothing_says_so_in_help, .timeout = 120)
{
    static const char *const UNSEEN[] = {
        "26_gpt_main",        "27_wider_model",        "28_deeper_model",  "29_short_context",
        "41_embedding_table", "42_embedding_lookup",   "43_onehot_equivalence", "45_gpt_embedding",
        "57_transformer_embedding", "61_verdict_dataloader", "72_smoke_test"};
    const char *note = "every seed prints the same here";
    size_t noted = 0;
    FILE *f = fopen(CHAPTER_INDEX, "r");
    cr_assert_not_null(f);
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        char number[16], program[256], exe[4096];
        if (sscanf(line, "%15s %255s", number, program) != 2 || strcmp(number, "number") == 0)
            continue;
        snprintf(exe, sizeof exe, "%s/%s", CHAPTER_DIR, program);
        proc_result help, a, b;
        cr_assert_eq(run_words(exe, "--help", &help), 0);
        int listed = 0;
        for (size_t i = 0; i < sizeof UNSEEN / sizeof UNSEEN[0]; i++)
            listed |= strcmp(program, UNSEEN[i]) == 0;
        const int says = strstr(help.out, note) != NULL;
        cr_expect_eq(says, listed, "%s --help %s '%s': %s", program, listed ? "lacks" : "claims", note,
                     help.out);
        proc_result_free(&help);
        if (!listed)
            continue;
        noted++;
        cr_assert_eq(run_words(exe, "--seed 7", &a), 0);
        cr_assert_eq(run_words(exe, "--seed 12345", &b), 0);
        if (a.status == 77) { // 61 without the data folder: the rule of the data
            cr_assert(!running_in_ci(), "%s found no data under CI=true: %s", program, a.err);
        } else {
            cr_expect_eq(a.status, 0, "%s --seed 7: %s", program, a.err);
            cr_expect_str_eq(a.out, b.out, "%s prints other text for seeds 7 and 12345", program);
        }
        proc_result_free(&a);
        proc_result_free(&b);
    }
    fclose(f);
    cr_expect_eq(noted, sizeof UNSEEN / sizeof UNSEEN[0], "a chapter of UNSEEN is not in index.tsv");
}

/* ---- the data rule: absent skips (fails under CI=true), broken fails ------------- */

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

Test(cli_data, a_truncated_vocabulary_fails_the_tokenizer_tests_never_skips_them)
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

/* ---- every program parses its command line the same way (issue 11 item 10) ----- */

/* Runs exe with words; --help must exit 0 with the usage on stdout and nothing on
 * stderr; an unknown flag must exit 2 with one stderr line naming it. */
static void check_program(const char *exe, const char *prefix_words, const char *who)
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

Test(cli_args, every_program_helps_with_exit_0_and_names_an_unknown_flag_with_exit_2)
{
    const char *subcommands[] = {"randn ", "rand ", "randint ", "randperm ", "init linear ",
                                 "init embedding ", "init gpt ", "forward ", "params ",
                                 "encode ", "decode ", "loss ", "grad ", "train ", "generate ",
                                 "attention ", "chat "};
    for (size_t i = 0; i < sizeof subcommands / sizeof subcommands[0]; i++)
        check_program(MYGPT_EXE, subcommands[i], subcommands[i]);
    check_program(BENCH_EXE, "", "mygpt-bench");
    check_program(BENCH_TOKENIZER_EXE, "", "mygpt-bench-tokenizer");
    FILE *f = fopen(CHAPTER_INDEX, "r");
    cr_assert_not_null(f);
    char line[1024];
    int chapters = 0;
    while (fgets(line, sizeof line, f)) {
        char number[16], program[256];
        if (sscanf(line, "%15s %255s", number, program) != 2 || strcmp(number, "number") == 0)
            continue;
        char exe[4096];
        snprintf(exe, sizeof exe, "%s/%s", CHAPTER_DIR, program);
        check_program(exe, "", program);
        chapters++;
    }
    fclose(f);
    cr_expect_geq(chapters, 26);
}

/* Issue 38: a flag a typo away from one the program knows is named ("did you mean"),
 * by the same parser in the tool, the chapters and the benchmark; a flag far from all
 * is not guessed at. */
Test(cli_args, a_misspelt_flag_says_which_was_meant)
{
    const struct { const char *exe, *words, *msg; } cases[] = {
        {MYGPT_EXE, "generate --seed 0 --temprature 1",
         "mygpt generate: unknown option '--temprature' (did you mean '--temperature'? see 'mygpt generate --help')"},
        {MYGPT_EXE, "randn --sede 0 --shape 2", "unknown option '--sede' (did you mean '--seed'?"},
        {CHAPTER_DIR "/26_gpt_main", "--sed 3", "26_gpt_main: unknown option '--sed' (did you mean '--seed'?"},
        {BENCH_EXE, "--thread 2", "mygpt-bench: unknown option '--thread' (did you mean '--threads'?"},
        {MYGPT_EXE, "generate --seed 0 --frobnicate 1",
         "unknown option '--frobnicate' (see 'mygpt generate --help')"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        proc_result r;
        cr_assert_eq(run_words(cases[i].exe, cases[i].words, &r), 0);
        cr_expect_eq(r.status, 2, "%s: exit %d", cases[i].words, r.status);
        cr_expect_str_empty(r.out, "%s", cases[i].words);
        cr_expect_eq(count_lines(r.err), 1, "%s: %s", cases[i].words, r.err);
        cr_expect(strstr(r.err, cases[i].msg) != NULL, "%s: '%s' lacks '%s'", cases[i].words, r.err,
                  cases[i].msg);
        proc_result_free(&r);
    }
}

Test(cli_args, seed_as_one_word_and_as_two_give_the_same_output)
{
    proc_result a, b;
    cr_assert_eq(run_words(CHAPTER_DIR "/30_tied_head", "--seed=7", &a), 0);
    cr_assert_eq(run_words(CHAPTER_DIR "/30_tied_head", "--seed 7", &b), 0);
    cr_expect_eq(a.status, 0, "%s", a.err);
    cr_expect_str_eq(a.out, b.out);
    proc_result_free(&a);
    proc_result_free(&b);
    cr_assert_eq(run_words(MYGPT_EXE, "randn --seed --shape 2,3", &a), 0);
    cr_expect_eq(a.status, 2);
    cr_expect(strstr(a.err, "option '--seed' needs a value") != NULL, "%s", a.err);
    proc_result_free(&a);
    cr_assert_eq(run_words(BENCH_EXE, "--threads 0", &a), 0);
    cr_expect_eq(a.status, 2);
    cr_expect(strstr(a.err, "--threads") != NULL, "%s", a.err);
    proc_result_free(&a);
}

/* Issue 11 item 8: decode takes any number of ids, and reads them from standard input
 * when none are given; encode | decode gives the file back byte for byte. */
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

/* Issue 11 item 13: a chapter says where it wrote its figure, and the sinusoid map is a
 * small SVG (one embedded PNG), not 7.8 MB of rectangles. */
Test(cli_chapters, figures_are_small_and_their_path_is_printed)
{
    char dir[] = "/tmp/mygpt-fig-XXXXXX", words[128], path[128];
    cr_assert(mkdtemp(dir) != NULL);
    snprintf(words, sizeof words, "--figures %s", dir);
    proc_result r;
    cr_assert_eq(run_words(CHAPTER_DIR "/47_sinusoidal_encoding", words, &r), 0);
    cr_expect_eq(r.status, 0, "%s", r.err);
    snprintf(path, sizeof path, "%s/sinusoidal_encoding.svg", dir);
    cr_expect(strstr(r.err, path) != NULL, "stderr does not name %s: %s", path, r.err);
    proc_result_free(&r);
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f);
    fseek(f, 0, SEEK_END);
    const long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *svg = calloc((size_t)size + 1, 1);
    cr_assert_eq(fread(svg, 1, (size_t)size, f), (size_t)size);
    fclose(f);
    cr_expect_lt(size, 1 << 20, "sinusoidal_encoding.svg is %ld bytes", size);
    /* base64 of the PNG signature 89 50 4E 47 0D 0A 1A 0A */
    cr_expect(strstr(svg, "data:image/png;base64,iVBORw0KGgo") != NULL, "no embedded PNG");
    free(svg);
    unlink(path);
    rmdir(dir);
}

/* Issue 46, item 6: a chapter's figure under a file-size limit (SIGXFSZ as a shell leaves
 * it): status 1 and one line naming the file and the limit, the old figure kept, no
 * temporary left */
Test(cli_chapters, a_figure_past_the_file_size_limit_is_one_line_and_status_1)
{
    char dir[] = "/tmp/mygpt-fig-XXXXXX", words[128], path[128];
    cr_assert(mkdtemp(dir) != NULL);
    snprintf(words, sizeof words, "--figures %s", dir);
    snprintf(path, sizeof path, "%s/sinusoidal_encoding.svg", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("old", f);
    cr_assert_eq(fclose(f), 0);
    signal(SIGXFSZ, SIG_DFL);
    const struct rlimit limit = {16 << 10, 16 << 10};
    struct rlimit was;
    cr_assert_eq(getrlimit(RLIMIT_FSIZE, &was), 0);
    cr_assert_eq(setrlimit(RLIMIT_FSIZE, &limit), 0); // inherited by the chapter
    proc_result r;
    cr_assert_eq(run_words(CHAPTER_DIR "/47_sinusoidal_encoding", words, &r), 0);
    setrlimit(RLIMIT_FSIZE, &was);
    cr_expect_eq(r.status, 1, "exit %d: %s", r.status, r.err);
    cr_expect(count_lines(r.err) == 1 && strstr(r.err, path) && strstr(r.err, "(the file-size limit)"), "%s", r.err);
    proc_result_free(&r);
    char old[8] = {0};
    f = fopen(path, "rb");
    cr_assert_not_null(f);
    cr_expect(fread(old, 1, sizeof old, f) == 3 && strcmp(old, "old") == 0, "the old figure was replaced");
    fclose(f);
    unlink(path);
    cr_expect_eq(rmdir(dir), 0, "a temporary was left");
}

/* Issue 11 item 11: without a 1-thread time the table has no speedup to show ("-", not
 * 0.00) and --svg refuses; with a sweep the plot has the ideal line. */
Test(cli_args, bench_reports_no_invented_speedups)
{
    proc_result r;
    cr_assert_eq(run_words(BENCH_EXE, "--config tiny --threads 2 --reps 3", &r), 0);
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "       -      -\n") != NULL, "speedup and efficiency are not '-': %s", r.out);
    proc_result_free(&r);
    cr_assert_eq(run_words(BENCH_EXE, "--config tiny --threads 2 --reps 3 --svg /tmp/mygpt-no.svg", &r), 0);
    cr_expect_eq(r.status, 1);
    cr_expect(strstr(r.err, "no 1-thread time") != NULL, "%s", r.err);
    proc_result_free(&r);
    char words[128], path[64];
    snprintf(path, sizeof path, "/tmp/mygpt-scaling-%d.svg", (int)getpid());
    snprintf(words, sizeof words, "--config tiny --threads 1 --reps 3 --svg %s", path);
    cr_assert_eq(run_words(BENCH_EXE, words, &r), 0);
    cr_expect_eq(r.status, 0, "%s", r.err);
    proc_result_free(&r);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    char buf[65536];
    const size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    unlink(path);
    cr_expect(strstr(buf, ">ideal<") != NULL, "no ideal line in the plot");
    cr_expect(strstr(buf, ">0.5<") == NULL && strstr(buf, ">1.5<") == NULL, "half-thread ticks");
}

/* Issue 46, item 6: the benchmark's --csv past a file-size limit (SIGXFSZ as a shell
 * leaves it): status 1, one line naming the file and the limit, the old CSV kept (the
 * table is written whole, at the end), no temporary left */
Test(cli_args, a_bench_csv_past_the_file_size_limit_keeps_the_old_file)
{
    char dir[] = "/tmp/mygpt-bench-XXXXXX", path[128], words[192];
    cr_assert(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/scaling.csv", dir);
    snprintf(words, sizeof words, "--config tiny --threads 1 --reps 3 --csv %s", path);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("old", f);
    cr_assert_eq(fclose(f), 0);
    signal(SIGXFSZ, SIG_DFL);
    const struct rlimit limit = {16, 16}; // less than the table's header
    struct rlimit was;
    cr_assert_eq(getrlimit(RLIMIT_FSIZE, &was), 0);
    cr_assert_eq(setrlimit(RLIMIT_FSIZE, &limit), 0); // inherited by the benchmark
    proc_result r;
    cr_assert_eq(run_words(BENCH_EXE, words, &r), 0);
    setrlimit(RLIMIT_FSIZE, &was);
    cr_expect_eq(r.status, 1, "exit %d: %s", r.status, r.err);
    cr_expect(count_lines(r.err) == 1 && strstr(r.err, path) && strstr(r.err, "(the file-size limit)"), "%s", r.err);
    proc_result_free(&r);
    char old[8] = {0};
    f = fopen(path, "rb");
    cr_assert_not_null(f);
    cr_expect(fread(old, 1, sizeof old, f) == 3 && strcmp(old, "old") == 0, "the old table was replaced");
    fclose(f);
    unlink(path);
    cr_expect_eq(rmdir(dir), 0, "a temporary was left");
}

/* The benchmark's --csv and --svg are never one file, however spelt: one line naming both,
 * status 2, before any timing, the file as it was */
Test(cli_args, bench_csv_and_svg_are_never_one_file)
{
    char dir[] = "/tmp/mygpt-bench-XXXXXX", path[128], words[320];
    cr_assert(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/scaling.csv", dir);
    snprintf(words, sizeof words, "--config tiny --threads 1 --reps 3 --csv %s --svg %s/./scaling.csv", path, dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("old", f);
    cr_assert_eq(fclose(f), 0);
    proc_result r;
    cr_assert_eq(run_words(BENCH_EXE, words, &r), 0);
    cr_expect_eq(r.status, 2, "exit %d: %s", r.status, r.err);
    cr_expect(count_lines(r.err) == 1 && strstr(r.err, "--csv") && strstr(r.err, "--svg") &&
                  strstr(r.err, "are one file"), "%s", r.err);
    cr_expect_str_empty(r.out, "%s", r.out);
    proc_result_free(&r);
    char old[8] = {0};
    f = fopen(path, "rb");
    cr_assert_not_null(f);
    cr_expect(fread(old, 1, sizeof old, f) == 3 && strcmp(old, "old") == 0, "the table was replaced");
    fclose(f);
    unlink(path);
    cr_expect_eq(rmdir(dir), 0, "a temporary was left");
}

/* ---- train and generate against tools/reference_train.py ---------------------------- */

/* Runs `mygpt WORDS` (DATA = the data folder; in --prompt's value _ is a space). */
static int run_tool_words(const char *words, const char *data, proc_result *r)
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

/* Compares one line mygpt printed (got) with the reference's (want), line lineno of the
 * golden file. */
typedef void (*line_check)(const char *got, const char *want, long lineno);

/* Runs the cases of a golden file of the tools' commands (tests/golden/NAME):
 *   case WORDS   (mygpt's arguments, DATA for the data folder, _ for a space in a prompt)
 *   out LINE     (each line it must print, in order, compared by check)
 *   end          (nothing more may follow when strict)
 * Runs only case number `only` (from 1) when it is not 0. Returns the number of cases run. */
static int run_cli_cases(const char *name, line_check check, int strict, int only)
{
    const char *data = data_dir_or_skip();
    data_file_or_skip("the-verdict.txt");
    data_file_or_skip("encoder.json");
    FILE *f = golden_open(name);
    cr_assert_not_null(f, "tests/golden/%s is missing", name);
    char *line = NULL, *next = NULL;
    size_t cap = 0;
    long lineno = 0;
    proc_result r = {0};
    int cases = 0, seen = 0, have = 0;
    while (golden_next_line(f, &line, &cap, &lineno) >= 0) {
        if (strncmp(line, "case ", 5) == 0 && only && ++seen != only) {
            while (golden_next_line(f, &line, &cap, &lineno) >= 0 && strcmp(line, "end") != 0) {
            }
        } else if (strncmp(line, "case ", 5) == 0) {
            cr_assert_eq(run_tool_words(line + 5, data, &r), 0);
            cr_expect_eq(r.status, 0, "mygpt %s: exit %d: %s", line + 5, r.status, r.err);
            next = r.out;
            have = 1;
        } else if (strncmp(line, "out ", 4) == 0) {
            cr_assert(have);
            char *nl = strchr(next, '\n');
            cr_assert_not_null(nl, "mygpt printed fewer lines than PyTorch: missing '%s'", line + 4);
            *nl = '\0';
            check(next, line + 4, lineno);
            next = nl + 1;
        } else if (strcmp(line, "end") == 0) {
            if (strict)
                cr_expect_str_empty(next, "mygpt printed more lines than PyTorch: '%s'", next);
            proc_result_free(&r);
            have = 0;
            cases++;
        }
    }
    free(line);
    fclose(f);
    return cases;
}

/* losses within float32 noise, other lines (generated ids) exactly */
static void losses_close(const char *got, const char *want, long lineno)
{
    long s1, s2;
    double t1, v1, t2, v2;
    if (sscanf(want, "step %ld train_loss %lf val_loss %lf", &s1, &t1, &v1) == 3) {
        cr_assert_eq(sscanf(got, "step %ld train_loss %lf val_loss %lf", &s2, &t2, &v2), 3, "%s", got);
        cr_expect_eq(s1, s2);
        cr_expect_leq(fabs(t1 - t2), 2e-5, "step %ld train loss %.6f vs PyTorch %.6f", s1, t2, t1);
        cr_expect_leq(fabs(v1 - v2), 2e-5, "step %ld val loss %.6f vs PyTorch %.6f", s1, v2, v1);
    } else {
        cr_expect_str_eq(got, want, "line %ld: generated ids differ from PyTorch's", lineno);
    }
}

static void lines_equal(const char *got, const char *want, long lineno)
{
    cr_expect_str_eq(got, want, "line %ld differs from PyTorch's", lineno);
}

/* Issue 12: `mygpt train` prints the losses of the same training in PyTorch (within
 * float32 noise: 2e-5 absolute here, where the loss is ~10), `mygpt generate` the same
 * tokens. tests/golden/train_cli.txt comes from tools/gen_train_goldens.py. */
Test(cli_train, train_and_generate_follow_the_pytorch_reference, .timeout = 600)
{
    cr_expect_eq(run_cli_cases("train_cli.txt", losses_close, 0, 0), 5);
}

/* Issue 24: `mygpt train --epochs` prints the book's chapter-5 log as
 * tools/reference_book_ch5.py does for the same small runs, line for line (losses to
 * three decimals, greedy samples); issue 39: with --warmup, --cosine and --clip-grad,
 * appendix D's train_model as tools/reference_book_appD.py runs it (its last case, every
 * step after the warmup clipped). tests/golden/book_cli.txt: tools/gen_book_goldens.py. */
Test(cli_train, the_books_training_loop_prints_pytorchs_log, .timeout = 600)
{
    // under the sanitizers (minutes a case there) the cheapest case, one epoch of one layer
    if (TEST_SANITIZED)
        cr_expect_eq(run_cli_cases("book_cli.txt", lines_equal, 1, 2), 1);
    else
        cr_expect_eq(run_cli_cases("book_cli.txt", lines_equal, 1, 0), 4);
}

/* Issue 25, item 7: a NUL on decode's standard input is refused, naming its offset,
 * instead of ending the ids there with exit 0. */
Test(cli_train, decode_refuses_a_nul_byte_on_standard_input)
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

/* Issue 25, item 9: a training whose loss becomes NaN stops at that step with an error
 * naming it, and saves nothing (issue 46, item 3: status 1, a runtime failure; an lr of
 * 1e20 keeps the weights finite, so the validation loss after step 0 is what stops it,
 * and it prints as Python prints it, nan, item 19). */
Test(cli_train, a_nan_loss_stops_training_and_saves_nothing, .timeout = 120)
{
    const char *data = data_dir_or_skip();
    data_file_or_skip("the-verdict.txt");
    data_file_or_skip("encoder.json");
    char dir[] = "/tmp/mygpt_nan_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char words[1024], saved[300];
    snprintf(saved, sizeof saved, "%s/m.safetensors", dir);
    snprintf(words, sizeof words,
             "train --seed 0 --vocab 50257 --embed 8 --heads 2 --layers 1 --text DATA/the-verdict.txt --context 8 "
             "--batch 2 --steps 5 --optimizer sgd --lr 1e20 --save %s", saved);
    proc_result r = {0};
    cr_assert_eq(run_tool_words(words, data, &r), 0);
    cr_expect_eq(r.status, 1, "exit %d: %s", r.status, r.err);
    cr_expect(strstr(r.err, "step 0: the training diverged (the validation loss holds nan after the step's update)") &&
                  strstr(r.err, "nothing more is saved") != NULL, "%s", r.err);
    cr_expect_str_eq(r.out, "step 0 train_loss 14.750289 val_loss nan\n");
    cr_expect(access(saved, F_OK) != 0, "a checkpoint was saved");
    proc_result_free(&r);
    rmdir(dir);
}

/* Issue 25, item 12: OMP_NUM_THREADS=100000 overflowed libgomp's stack creating the team
 * (a segfault); the programs cap the team at 4 threads per online CPU. */
Test(cli_train, a_huge_omp_num_threads_is_capped)
{
    setenv("OMP_NUM_THREADS", "100000", 1); // this test's own process: the child inherits it
    proc_result r = {0};
    cr_assert_eq(run_words(MYGPT_EXE,
                           "forward --seed 0 --vocab 50 --embed 64 --heads 4 --layers 2 --max-seq 64 --ids "
                           "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32",
                           &r),
                 0);
    cr_expect_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cr_expect(strncmp(r.out, "tensor(", 7) == 0, "%s", r.out);
    proc_result_free(&r);
}

/* Issue 25, item 6: a FIFO where a file is required is refused, not waited on (the
 * test's timeout guards the hang), and so is a device as a checkpoint. */
Test(cli_train, fifos_and_devices_are_refused_not_read, .timeout = 20)
{
    char dir[] = "/tmp/mygpt_fifo_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char fifo[300], words[700];
    snprintf(fifo, sizeof fifo, "%s/pipe", dir);
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    const char *cases[][2] = {{"encode %s", "not a regular file"},
                              {"generate --checkpoint %s --ids 1 --max-new 1", "not a regular file"},
                              {"generate --checkpoint /dev/zero --ids 1 --max-new 1%.0s", "not a regular file"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(words, sizeof words, cases[i][0], fifo);
        proc_result r = {0};
        cr_assert_eq(run_words(MYGPT_EXE, words, &r), 0);
        cr_expect_eq(r.status, 2, "mygpt %s: exit %d: %s", words, r.status, r.err);
        cr_expect(strstr(r.err, cases[i][1]) != NULL, "mygpt %s: %s", words, r.err);
        proc_result_free(&r);
    }
    unlink(fifo);
    rmdir(dir);
}

/* Issue 25, item 5: an attention figure of a prompt with an emoji, CJK (tokens that split
 * a character), control bytes and markup is text an XML parser accepts: valid UTF-8, no
 * control character but the newlines, no raw & (what xml.dom.minidom refused before). */
Test(cli_train, attention_figures_of_any_prompt_are_valid_xml_text, .timeout = 60)
{
    (void)data_dir_or_skip(); // the program finds the data folder itself
    data_file_or_skip("encoder.json");
    char dir[] = "/tmp/mygpt_svg_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char svg[300];
    snprintf(svg, sizeof svg, "%s/att.svg", dir);
    char *argv[] = {(char *)MYGPT_EXE, "attention", "--seed", "1", "--vocab", "50257", "--embed", "16", "--heads", "2",
                    "--layers", "1", "--max-seq", "32", "--prompt",
                    "Hi \xf0\x9f\x98\x80 \xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e \x01\x1b & <b>", "--svg", svg, NULL};
    proc_result r = {0};
    cr_assert_eq(run_process(argv, &r), 0);
    cr_expect_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    for (const char *c = r.out; *c; c++)
        cr_expect((unsigned char)*c >= 0x20 || *c == '\n', "a control byte 0x%02x reached the terminal", *c);
    proc_result_free(&r);
    char *text;
    size_t len;
    cr_assert_eq(mygpt_read_file(svg, &text, &len, NULL), MYGPT_OK);
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        const int l = mygpt_utf8_decode(text + i, len - i, &cp);
        cr_assert_gt(l, 0, "invalid UTF-8 at byte %zu of the figure", i);
        cr_assert(cp >= 0x20 || cp == '\n', "control U+%04X at byte %zu of the figure", cp, i);
        if (cp == '&')
            cr_assert(strncmp(text + i, "&lt;", 4) == 0 || strncmp(text + i, "&gt;", 4) == 0 ||
                          strncmp(text + i, "&amp;", 5) == 0,
                      "a raw & at byte %zu", i);
        i += (size_t)l;
    }
    free(text);
    unlink(svg);
    rmdir(dir);
}

/* Issue 38: every head's map says which axis is which: the rows are the queries (the
 * token attending, its title written upwards beside them), the columns the keys (the
 * token attended to, under them). */
Test(cli, attention_maps_title_the_query_and_the_key_axes)
{
    char dir[] = "/tmp/mygpt_axes_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char svg[300], words[600];
    snprintf(svg, sizeof svg, "%s/att.svg", dir);
    snprintf(words, sizeof words,
             "attention --seed 0 --vocab 10 --embed 4 --heads 2 --layers 3 --ids 1,2,3 --svg %s", svg);
    proc_result r;
    cr_assert_eq(run_words(MYGPT_EXE, words, &r), 0);
    cr_expect_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    proc_result_free(&r);
    char *text;
    size_t len;
    cr_assert_eq(mygpt_read_file(svg, &text, &len, NULL), MYGPT_OK);
    int queries = 0, keys = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (strstr(line, ">query: the token attending</text>")) {
            queries++;
            cr_expect(strstr(line, "rotate(-90") != NULL, "the query title is not upright beside the rows: %s", line);
        }
        if (strstr(line, ">key: the token attended to</text>")) {
            keys++;
            cr_expect(strstr(line, "rotate(") == NULL, "the key title is not under the columns: %s", line);
        }
    }
    cr_expect_eq(queries, 6, "%d query titles for 3 layers x 2 heads", queries);
    cr_expect_eq(keys, 6, "%d key titles for 3 layers x 2 heads", keys);
    free(text);
    unlink(svg);
    rmdir(dir);
}

/* A model of finite but huge weights (1e30: scores that overflow) has NaN attention rows:
 * mygpt attention prints them as Python prints them, "nan", never printf's "-nan"; its
 * logits are no distribution, and generate says so instead of printing token 0 */
Test(cli, a_model_of_huge_weights_prints_nan_attention_and_generates_nothing)
{
    char dir[] = "/tmp/mygpt_attnan_XXXXXX", path[300], words[600];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/huge.safetensors", dir);
    const mygpt_config cfg = {.vocab_size = 10, .embed_dim = 4, .num_heads = 2, .num_layers = 1, .max_seq_len = 8};
    mygpt_gpt *g = NULL;
    cr_assert_eq(mygpt_gpt_create(&g, &cfg, 3, NULL), MYGPT_OK);
    for (size_t i = 0; i < g->num_parameters; i++)
        g->params_memory[i] = i % 2 ? 1e30f : -1e30f;
    cr_assert_eq(mygpt_checkpoint_save(g, path, NULL), MYGPT_OK);
    mygpt_gpt_free(g);
    snprintf(words, sizeof words, "attention --checkpoint %s --ids 1,2,3", path);
    proc_result r;
    cr_assert_eq(run_words(MYGPT_EXE, words, &r), 0);
    cr_expect_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cr_expect(strstr(r.out, " nan") != NULL && strstr(r.out, "-nan") == NULL, "%s", r.out);
    proc_result_free(&r);
    // and generate samples from no such logits, greedy or not: one line, nothing printed
    for (int greedy = 0; greedy < 2; greedy++) {
        snprintf(words, sizeof words, "generate --checkpoint %s --ids 1,2,3 --max-new 2%s", path,
                 greedy ? " --temperature 0" : "");
        cr_assert_eq(run_words(MYGPT_EXE, words, &r), 0);
        cr_expect_eq(r.status, 2, "exit %d: %s", r.status, r.err);
        cr_expect(count_lines(r.err) == 1 && strstr(r.err, "weights compute no distribution to sample from"), "%s",
                  r.err);
        cr_expect_str_empty(r.out, "%s", r.out);
        proc_result_free(&r);
    }
    unlink(path);
    rmdir(dir);
}

/* Issue 25, item 6: a vocabulary file larger than a vocabulary can need is refused
 * before it is read, naming the file and the limit (a sparse 70 MB encoder.json). */
Test(cli_train, an_oversized_vocabulary_is_refused_unread, .timeout = 20)
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

/* Issue 25, item 13: chapter 34 with a truncated cached checkpoint trains the model again
 * and writes the cache again, so the next run finds it whole. */
Test(cli_train, chapter_34_rewrites_a_truncated_cache, .timeout = 300)
{
    (void)data_dir_or_skip(); // the chapter finds the data folder itself
    data_file_or_skip("the-verdict.txt");
    data_file_or_skip("encoder.json");
    char dir[] = "/tmp/mygpt_cache_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char cache[300];
    snprintf(cache, sizeof cache, "%s/verdict_gpt_smoke.safetensors", dir);
    FILE *f = fopen(cache, "wb");
    cr_assert_not_null(f);
    fputs("\x10\x00\x00\x00\x00\x00\x00\x00{\"__metadata", f); // cut short
    fclose(f);
    setenv("MYGPT_FIGURES", dir, 1);
    proc_result r = {0};
    cr_assert_eq(run_words(CHAPTER_DIR "/34_generation", "--smoke", &r), 0);
    cr_expect_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cr_expect(strstr(r.err, "training it again") != NULL, "%s", r.err);
    proc_result_free(&r);
    mygpt_gpt *g = NULL;
    mygpt_error err = {0};
    cr_expect_eq(mygpt_checkpoint_load(&g, cache, &err), MYGPT_OK, "the cache was not written again: %s", err.message);
    mygpt_gpt_free(g);
    cr_assert_eq(run_words(CHAPTER_DIR "/34_generation", "--smoke", &r), 0);
    cr_expect(strstr(r.err, "the model of") != NULL, "the second run did not use the cache: %s", r.err);
    proc_result_free(&r);
    unlink(cache);
    rmdir(dir);
}

/* Streaming shows the same tokens as the ids line: the text streamed is the decoded
 * ids, and --print-ids gives the line --no-stream prints first. */
Test(cli_train, streamed_text_is_the_generated_ids, .timeout = 120)
{
    const char *data = data_dir_or_skip();
    data_file_or_skip("encoder.json");
    const char *model = "generate --seed 3 --vocab 50257 --embed 16 --heads 2 --layers 2 --max-seq 32 "
                        "--prompt Every_effort_moves_you --max-new 12 --temperature 0.8 --sample-seed 5";
    char words[512];
    proc_result plain = {0}, streamed = {0}, dec = {0};
    snprintf(words, sizeof words, "%s --no-stream", model);
    cr_assert_eq(run_tool_words(words, data, &plain), 0);
    snprintf(words, sizeof words, "%s --stream --print-ids", model);
    cr_assert_eq(run_tool_words(words, data, &streamed), 0);
    cr_assert_eq(plain.status, 0, "%s", plain.err);
    cr_assert_eq(streamed.status, 0, "%s", streamed.err);
    // plain: ids, then the text; streamed: the text, then the ids
    char *ids_end = strchr(plain.out, '\n');
    cr_assert_not_null(ids_end);
    const size_t ids_len = (size_t)(ids_end - plain.out) + 1;
    const size_t text_len = strlen(plain.out) - ids_len;
    cr_assert_eq(strlen(streamed.out), text_len + ids_len, "streamed: '%s'", streamed.out);
    cr_expect(memcmp(streamed.out, plain.out + ids_len, text_len) == 0, "the streamed text differs: '%s' vs '%s'",
              streamed.out, plain.out + ids_len);
    cr_expect(memcmp(streamed.out + text_len, plain.out, ids_len) == 0, "the ids line differs");
    // and the ids decode to that text
    char ids[8192];
    snprintf(ids, sizeof ids, "decode --vocab-dir %.4000s %.*s", data, (int)(ids_len - 1), plain.out);
    cr_assert_eq(run_words(MYGPT_EXE, ids, &dec), 0);
    cr_expect_eq(strncmp(dec.out, streamed.out, strlen(dec.out)), 0, "decoded '%s' vs streamed '%s'", dec.out,
                 streamed.out);
    proc_result_free(&plain);
    proc_result_free(&streamed);
    proc_result_free(&dec);
}

/* Issue 46, item 17: a streamed generation onto a standard output that takes nothing
 * (/dev/full) stops at its first token: one line and status 1, no count of the tokens
 * of a whole generation after it. */
Test(cli_train, a_stream_onto_a_failing_output_stops_at_the_first_token, .timeout = 120)
{
    data_file_or_skip("encoder.json");
    char script[1200];
    snprintf(script, sizeof script, "exec '%s' generate --seed 3 --vocab 50257 --embed 16 --heads 2 --layers 2 "
             "--max-seq 32 --prompt 'Every effort moves you' --max-new 40 --eos -1 --stream > /dev/full", MYGPT_EXE);
    char *argv[] = {"/bin/sh", "-c", script, NULL};
    proc_result r = {0};
    cr_assert_eq(run_process(argv, &r), 0);
    cr_expect_eq(r.status, 1, "exit %d: %s", r.status, r.err);
    cr_expect_str_eq(r.err, "mygpt generate: error writing output\n");
    proc_result_free(&r);
}

Test(cli_train, bad_training_and_generation_arguments)
{
    const char *model = "--seed 0 --vocab 4 --embed 4 --heads 2 --layers 1";
    const struct { const char *fmt, *msg; } cases[] = {
        {"loss %s --ids 0,1,2 --targets 1,2", "same shape"},
        {"loss %s --ids 0,1,2 --targets 1,2,4", "target 4"},
        {"grad %s --ids 0,1 --targets 1,9", "target 9"},
        {"loss %s --ids 0,1,2", "--targets are required"},
        {"train %s --text /nonexistent --context 2 --batch 1 --steps 1 --optimizer sgd --lr -1", "--lr must be at least 0"},
        {"train %s --text /nonexistent --context 2 --batch 1 --steps 1 --optimizer rmsprop --lr 1", "not sgd or adamw"},
        {"train %s --text /nonexistent --context 2 --batch 1 --steps 1 --optimizer sgd --lr 1", "cannot open /nonexistent"},
        {"train %s --text /nonexistent --context 99 --batch 1 --steps 1 --optimizer sgd --lr 1", "--context"},
        {"generate %s --ids 1,2 --max-new 3 --top-k 0", "--top-k"},
        {"generate %s --ids 1,2 --max-new 3 --temperature -1", "--temperature must be at least 0"},
        {"generate %s --ids 1,2 --max-new 3 --top-p 1.5", "--top-p must be in (0, 1]"},
        {"generate %s --ids 1,7 --max-new 3", "token id 7"},
        {"generate --checkpoint /nonexistent.safetensors --ids 1 --max-new 3%.0s", "cannot open"},
        {"generate %s --max-new 3", "exactly one of --prompt"},
        {"generate %s --ids 1,2 --max-new 3 --stream", "--stream: no text to show"},
        {"train %s --text /nonexistent --context 2 --batch 1 --steps 1 --optimizer sgd --lr 1 --save /nonexistent/d/m.st",
         "--save: cannot write in /nonexistent/d"},
        {"train %s --text /nonexistent --context 2 --batch 1 --steps 1 --optimizer sgd --lr 1 --save /dev/null",
         "--save: /dev/null is a device, FIFO or socket, not a regular file: not replaced"},
        {"train %s --text /nonexistent --context 2 --batch 1 --steps 1 --optimizer sgd --lr 1 --save /tmp",
         "--save: /tmp is a directory, not a regular file: not replaced"},
        {"generate %s --ids 1,2 --max-new 3 --sample-seed abc", "--sample-seed: 'abc' is not an integer"},
        {"generate %s --ids 1,2 --max-new 3 --stream --no-stream", "contradict"},
        {"forward %s --ids 1,2 --arch gpt3", "unknown architecture 'gpt3'"},
        {"forward %s --ids 1,2 --weights int4", "--weights: unknown weight format 'int4'"},
        {"quantize%.0s", "give the checkpoint to read and the file to write"},
        {"quantize /nonexistent.st /tmp/q.st%.0s", "--weights bf16|int8 is required"},
        {"quantize /nonexistent.st /tmp/q.st --weights int8%.0s", "cannot open /nonexistent.st"},
        {"quantize /nonexistent.st /dev/null --weights int8%.0s", "/dev/null is a device"},
        {"loss %s --ids 0,1 --targets 1,2 --dropout 0.1", "the course's model has no dropout"},
        {"loss %s --ids 0,1 --targets 1,2 --arch gpt2 --dropout 1", "dropout must be in [0, 1)"},
        {"train %s --text /nonexistent --context 2 --batch 1 --steps 1 --epochs 1 --optimizer sgd --lr 1",
         "--epochs (the book's loop) goes without --steps"},
        {"train %s --text /nonexistent --context 2 --batch 1 --steps 1 --eval-batches 2 --optimizer sgd --lr 1",
         "go with --epochs"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char args[512];
        snprintf(args, sizeof args, cases[i].fmt, model);
        proc_result r;
        cr_assert_eq(run_words(MYGPT_EXE, args, &r), 0);
        cr_expect_eq(r.status, 2, "mygpt %s: exit %d (%s)", args, r.status, r.err);
        cr_expect_str_empty(r.out, "mygpt %s: %s", args, r.out);
        cr_expect_eq(count_lines(r.err), 1, "mygpt %s: %s", args, r.err);
        cr_expect(strstr(r.err, cases[i].msg) != NULL, "mygpt %s: '%s' lacks '%s'", args, r.err, cases[i].msg);
        proc_result_free(&r);
    }
}

/* mygpt quantize writes a file that generates the tokens of --weights on the float32
 * one (the quantized model is the float32 model of its dequantized weights), and never
 * writes over the file it reads */
Test(cli_train, quantize_writes_a_checkpoint_that_generates_as_weights_does, .timeout = 120)
{
    char dir[] = "/tmp/mygpt_cliq_XXXXXX", path[128], words[2400], src[1024];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(src, sizeof src, "%s/gpt2_hf.safetensors", golden_dir());
    for (int k = 0; k < 2; k++) {
        const char *w = k ? "int8" : "bf16";
        snprintf(path, sizeof path, "%s/%s.safetensors", dir, w);
        proc_result q, a, b;
        snprintf(words, sizeof words, "quantize %s %s --weights %s", src, path, w);
        cr_assert_eq(run_words(MYGPT_EXE, words, &q), 0);
        cr_expect_eq(q.status, 0, "%s: %s", words, q.err);
        cr_expect(strstr(q.out, "MB of weights read per token") != NULL, "%s", q.out);
        snprintf(words, sizeof words, "generate --checkpoint %s --ids 1,2,3 --max-new 6 --no-stream", path);
        cr_assert_eq(run_words(MYGPT_EXE, words, &a), 0);
        snprintf(words, sizeof words, "generate --checkpoint %s --ids 1,2,3 --max-new 6 --no-stream --weights %s", src, w);
        cr_assert_eq(run_words(MYGPT_EXE, words, &b), 0);
        cr_expect_eq(a.status, 0, "%s", a.err);
        cr_expect_eq(b.status, 0, "%s", b.err);
        cr_expect(strncmp(a.out, "1 2 3 ", 6) == 0, "the ids line, prompt first: %s", a.out);
        cr_expect_str_eq(a.out, b.out);
        snprintf(words, sizeof words, "generate --checkpoint %s --ids 1,2,3 --max-new 6 --no-stream --weights fp32", path);
        proc_result c;
        cr_assert_eq(run_words(MYGPT_EXE, words, &c), 0);
        cr_expect_str_eq(c.out, a.out, "the dequantized weights in float32 give the same tokens");
        proc_result_free(&q), proc_result_free(&a), proc_result_free(&b), proc_result_free(&c);
        snprintf(words, sizeof words, "quantize %s %s --weights int8", path, path);
        cr_assert_eq(run_words(MYGPT_EXE, words, &q), 0);
        cr_expect_eq(q.status, 2);
        cr_expect(strstr(q.err, "is the file IN reads") != NULL, "%s", q.err);
        proc_result_free(&q);
        unlink(path);
    }
    char conf[160];
    snprintf(conf, sizeof conf, "%s/config.json", dir);
    unlink(conf);
    cr_expect_eq(rmdir(dir), 0, "only the files written were left");
}

/* Issue 37, item 12: a MYGPT_DATA too long for DIR/encoder.json is one clear error, not
 * a shortened path opened */
Test(cli_data, a_long_mygpt_data_is_refused_not_cut)
{
    static char dir[4096];
    memset(dir, 'd', sizeof dir);
    memcpy(dir, "/nonexistent-", 13);
    for (size_t k = 100; k < 4085; k += 100)
        dir[k] = '/';
    dir[4085] = '\0';
    setenv("MYGPT_DATA", dir, 1);
    proc_result r;
    cr_assert_eq(run_words(MYGPT_EXE, "decode 1 2", &r), 0);
    cr_expect_eq(r.status, 2, "exit %d: %s", r.status, r.err);
    cr_expect(strstr(r.err, "too long") != NULL && strstr(r.err, "cannot open") == NULL, "%s", r.err);
    cr_expect_eq(count_lines(r.err), 1, "%s", r.err);
    cr_expect_str_empty(r.out);
    proc_result_free(&r);
}

/* Issue 37, item 11: a figure is written as checkpoints are: a full disk (here a file-size
 * limit) keeps the old figure and leaves no temporary; a symbolic link is refused, its
 * target untouched */
Test(cli_data, figures_are_written_whole_or_not_at_all_and_never_through_a_link)
{
    char dir[] = "/tmp/mygpt_fig_XXXXXX", path[128], link[128], target[128];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/fig.svg", dir);
    snprintf(link, sizeof link, "%s/link.svg", dir);
    snprintf(target, sizeof target, "%s/target.svg", dir);
    mygpt_svg fig;
    mygpt_error err = {0};
    mygpt_svg_begin(&fig, 100, 100);
    cr_assert_eq(mygpt_svg_save(&fig, path, &err), MYGPT_OK, "%s", err.message);
    char *old, *now;
    size_t old_len, now_len;
    cr_assert_eq(mygpt_read_file(path, &old, &old_len, NULL), MYGPT_OK);
    static float cells[200 * 200];
    for (int k = 0; k < 200 * 200; k++)
        cells[k] = (float)(k % 97) / 97.0f;
    mygpt_svg_begin(&fig, 900, 900);
    mygpt_svg_heatmap(&fig, &(mygpt_svg_panel){.x = 50, .y = 50, .w = 800, .h = 800, .title = "big"}, cells, 200, 200,
                      0.0, 1.0, 1);
    signal(SIGXFSZ, SIG_IGN); // the write then fails with EFBIG instead of a signal
    const struct rlimit limit = {64 << 10, 64 << 10};
    struct rlimit was;
    cr_assert_eq(getrlimit(RLIMIT_FSIZE, &was), 0);
    cr_assert_eq(setrlimit(RLIMIT_FSIZE, &limit), 0); // this test's own process
    const mygpt_status st = mygpt_svg_save(&fig, path, &err);
    setrlimit(RLIMIT_FSIZE, &was);
    cr_expect_eq(st, MYGPT_EIO, "%s", err.message);
    cr_expect(strstr(err.message, path) != NULL && strstr(err.message, "File too large") != NULL, "%s", err.message);
    cr_assert_eq(mygpt_read_file(path, &now, &now_len, NULL), MYGPT_OK);
    cr_expect(now_len == old_len && memcmp(now, old, old_len) == 0, "the old figure was replaced (%zu bytes)", now_len);
    free(now);
    DIR *d = opendir(dir);
    int files = 0;
    for (struct dirent *e; (e = readdir(d));)
        files += e->d_name[0] != '.';
    closedir(d);
    cr_expect_eq(files, 1, "a temporary file was left");
    // through a symbolic link: refused, the target kept
    FILE *f = fopen(target, "w");
    fputs("keep", f);
    fclose(f);
    cr_assert_eq(symlink(target, link), 0);
    mygpt_svg_begin(&fig, 100, 100);
    cr_expect_eq(mygpt_svg_save(&fig, link, &err), MYGPT_EINVAL);
    cr_expect(strstr(err.message, "symbolic link") != NULL, "%s", err.message);
    cr_assert_eq(mygpt_read_file(target, &now, &now_len, NULL), MYGPT_OK);
    cr_expect(now_len == 4 && memcmp(now, "keep", 4) == 0, "written through the link");
    free(now);
    free(old);
    unlink(link);
    unlink(target);
    unlink(path);
    rmdir(dir);
}

/* Issue 46, item 19: a NaN or an infinity in a line plot's series is a gap: the line ends
 * before it and starts again after it, one polyline a finite run (a series all finite is
 * one polyline, as before), no marker there, never a non-finite coordinate */
Test(cli_data, a_line_plot_leaves_a_gap_at_a_point_that_is_not_finite)
{
    char dir[] = "/tmp/mygpt_gap_XXXXXX", path[128];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/gap.svg", dir);
    const float x[7] = {0, 1, 2, 3, 4, 5, 6}, y[7] = {1, NAN, 2, 3, INFINITY, -INFINITY, 4}, z[3] = {1, 2, 3};
    const mygpt_svg_series s[2] = {{.x = x, .y = y, .n = 7, .label = "gaps", .markers = 1},
                                   {.y = z, .n = 3, .label = "whole"}};
    mygpt_svg fig;
    mygpt_error err = {0};
    mygpt_svg_begin(&fig, 400, 300);
    mygpt_svg_line_plot(&fig, &(mygpt_svg_panel){.x = 50, .y = 30, .w = 300, .h = 200, .title = "t"}, s, 2, 0, 5);
    cr_assert_eq(mygpt_svg_save(&fig, path, &err), MYGPT_OK, "%s", err.message);
    char *text;
    size_t n;
    cr_assert_eq(mygpt_read_file(path, &text, &n, NULL), MYGPT_OK);
    cr_expect(strstr(text, "nan") == NULL && strstr(text, "inf") == NULL, "a non-finite coordinate: %s", text);
    int lines = 0, dots = 0;
    for (const char *p = text; (p = strstr(p, "<polyline")); p++)
        lines++;
    for (const char *p = text; (p = strstr(p, "<circle")); p++)
        dots++;
    cr_expect_eq(lines, 3 + 1, "runs [1], [2, 3], [4] and the whole series: %s", text);
    cr_expect_eq(dots, 4, "a marker on each finite point: %s", text);
    free(text);
    unlink(path);
    rmdir(dir);
}

/* Issue 37, item 5: `train --arch gpt2 --save DIR/m.safetensors` beside a Hugging Face
 * config.json: one of the same model (other formatting, extra keys) is kept and the run
 * saves; one of another model is refused before the first step, nothing saved */
Test(cli_train, a_gpt2_save_beside_a_hugging_face_config_json, .timeout = 120)
{
    const char *data = data_dir_or_skip();
    data_file_or_skip("the-verdict.txt");
    data_file_or_skip("encoder.json");
    char dir[] = "/tmp/mygpt_hfcli_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char words[1024], saved[300], conf[300];
    snprintf(saved, sizeof saved, "%s/m.safetensors", dir);
    snprintf(conf, sizeof conf, "%s/config.json", dir);
    snprintf(words, sizeof words,
             "train --seed 0 --arch gpt2 --vocab 50257 --embed 8 --heads 2 --layers 1 --max-seq 16 "
             "--text DATA/the-verdict.txt --context 8 --batch 2 --steps 2 --optimizer sgd --lr 0.1 --save %s", saved);
    for (int same = 1; same >= 0; same--) {
        char hf[600];
        snprintf(hf, sizeof hf,
                 "{\n  \"architectures\": [\"GPT2LMHeadModel\"],\n  \"task_specific_params\": {\"text-generation\": "
                 "{\"n_head\": 4}},\n  \"n_ctx\": 16,\n  \"n_embd\": %d,\n  \"n_head\": 2,\n  \"n_layer\": 1,\n"
                 "  \"n_positions\": 16,\n  \"transformers_version\": \"4.26.0\",\n  \"vocab_size\": 50257\n}\n",
                 same ? 8 : 16);
        FILE *f = fopen(conf, "w");
        fputs(hf, f);
        fclose(f);
        proc_result r = {0};
        cr_assert_eq(run_tool_words(words, data, &r), 0);
        if (same) {
            cr_expect_eq(r.status, 0, "exit %d: %s", r.status, r.err);
            cr_expect_eq(access(saved, F_OK), 0, "not saved");
            char *text;
            size_t len;
            cr_assert_eq(mygpt_read_file(conf, &text, &len, NULL), MYGPT_OK);
            cr_expect(len == strlen(hf) && memcmp(text, hf, len) == 0, "the config.json was replaced");
            free(text);
            unlink(saved);
        } else {
            cr_expect_eq(r.status, 2, "exit %d: %s", r.status, r.err);
            cr_expect(strstr(r.err, "--save") && strstr(r.err, "n_embd 16") && strstr(r.err, "config.json"), "%s",
                      r.err);
            cr_expect(strstr(r.out, "step") == NULL, "trained first: %s", r.out);
            cr_expect(access(saved, F_OK) != 0, "saved");
        }
        proc_result_free(&r);
    }
    unlink(conf);
    cr_expect_eq(rmdir(dir), 0, "only the files written were left");
}

/* Issue 37, item 13: messages and flags. A path's newline or terminal escape is shown
 * escaped on one line; "--" ends the options; --init-from refuses contradicting model
 * flags (and accepts agreeing ones) and says how to train a quantized file with the
 * tool; a full disk is a runtime failure (exit 1); a vocabulary file that is a directory
 * says so. */
Test(cli_train, messages_and_flags_of_issue_37, .timeout = 240)
{
    const char *data = data_dir_or_skip();
    data_file_or_skip("the-verdict.txt");
    const char *vocab = vocab_or_skip();
    char dir[] = "/tmp/mygpt_flags_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    proc_result r;
    // a control byte in a path: escaped, one line, no raw ESC reaching the terminal
    char weird[300];
    snprintf(weird, sizeof weird, "%s/a\nb\x1b[31mc.txt", dir);
    char *enc[] = {(char *)MYGPT_EXE, "encode", "--vocab-dir", (char *)vocab, weird, NULL};
    cr_assert_eq(run_process(enc, &r), 0);
    cr_expect_eq(r.status, 2, "exit %d", r.status);
    cr_expect_eq(count_lines(r.err), 1, "%s", r.err);
    cr_expect(strchr(r.err, 0x1b) == NULL && strstr(r.err, "a\\nb\\x1b[31mc.txt") != NULL, "%s", r.err);
    proc_result_free(&r);
    // "--": a file named -x.txt
    cr_assert_eq(chdir(dir), 0);
    FILE *f = fopen("-x.txt", "w");
    fputs("Hello", f);
    fclose(f);
    char *dash[] = {(char *)MYGPT_EXE, "encode", "--vocab-dir", (char *)vocab, "--", "-x.txt", NULL};
    cr_assert_eq(run_process(dash, &r), 0);
    cr_expect_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cr_expect_str_eq(r.out, "15496\n");
    proc_result_free(&r);
    unlink("-x.txt");
    // --init-from and the model flags
    char ckpt[300], q8[300], out[300], words[2048];
    snprintf(ckpt, sizeof ckpt, "%s/m.safetensors", dir);
    snprintf(q8, sizeof q8, "%s/q8.safetensors", dir);
    snprintf(out, sizeof out, "%s/out.safetensors", dir);
    const mygpt_config cfg = {50257, 8, 2, 1, 16};
    mygpt_gpt *g;
    cr_assert_eq(mygpt_gpt_create(&g, &cfg, 1, NULL), MYGPT_OK);
    cr_assert_eq(mygpt_checkpoint_save(g, ckpt, NULL), MYGPT_OK);
    cr_assert_eq(mygpt_gpt_quantize(g, MYGPT_WEIGHTS_INT8, NULL), MYGPT_OK);
    cr_assert_eq(mygpt_checkpoint_save(g, q8, NULL), MYGPT_OK);
    mygpt_gpt_free(g);
    const char *train = "train --seed 0 --text DATA/the-verdict.txt --context 8 --batch 2 --steps 1 --optimizer sgd "
                        "--lr 0.1 --init-from";
    const struct {
        const char *from, *flags;
        int status;
        const char *msg;
    } runs[] = {
        {ckpt, "--embed 16", 2, "--embed 16 contradicts --init-from's checkpoint (embed_dim 8)"},
        {ckpt, "--vocab 50257 --heads 4", 2, "--heads 4 contradicts"},
        {ckpt, "--arch gpt2", 2, "--arch gpt2 contradicts"},
        {ckpt, "--vocab 50257 --embed 8 --heads 2 --layers 1 --max-seq 16 --arch course", 0, NULL},
        {q8, "", 2, "--weights fp32"},
    };
    for (size_t k = 0; k < sizeof runs / sizeof runs[0]; k++) {
        snprintf(words, sizeof words, "%s %s %s", train, runs[k].from, runs[k].flags);
        cr_assert_eq(run_tool_words(words, data, &r), 0);
        cr_expect_eq(r.status, runs[k].status, "%s: exit %d: %s", runs[k].flags, r.status, r.err);
        if (runs[k].msg)
            cr_expect(strstr(r.err, runs[k].msg) != NULL && strstr(r.err, "mygpt_gpt") == NULL, "%s: %s", runs[k].flags,
                      r.err);
        proc_result_free(&r);
    }
    // a full disk (a file-size limit the tool inherits): exit 1, the reason
    signal(SIGXFSZ, SIG_IGN);
    const struct rlimit limit = {64 << 10, 64 << 10};
    cr_assert_eq(setrlimit(RLIMIT_FSIZE, &limit), 0);
    snprintf(words, sizeof words, "quantize %s %s --weights bf16", ckpt, out);
    cr_assert_eq(run_words(MYGPT_EXE, words, &r), 0);
    cr_expect_eq(r.status, 1, "a full disk: exit %d: %s", r.status, r.err);
    cr_expect(strstr(r.err, "File too large") != NULL, "%s", r.err);
    cr_expect(access(out, F_OK) != 0);
    proc_result_free(&r);
    // a vocabulary file that is a directory
    char vdir[300], sub[330];
    snprintf(vdir, sizeof vdir, "%s/vocab", dir);
    snprintf(sub, sizeof sub, "%s/encoder.json", vdir);
    cr_assert_eq(mkdir(vdir, 0700), 0);
    cr_assert_eq(mkdir(sub, 0700), 0);
    char *dec[] = {(char *)MYGPT_EXE, "decode", "--vocab-dir", vdir, "1", NULL};
    cr_assert_eq(run_process(dec, &r), 0);
    cr_expect_eq(r.status, 2);
    cr_expect(strstr(r.err, "it is a directory") != NULL, "%s", r.err);
    proc_result_free(&r);
    rmdir(sub);
    rmdir(vdir);
    unlink(ckpt);
    unlink(q8);
    cr_expect_eq(rmdir(dir), 0, "only the files written were left");
}

/* ---- issue 38: training a learner can drive --------------------------------------- */

/* The whole file at path (malloc'd, *n bytes), or NULL */
static char *file_bytes(const char *path, size_t *n)
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

static int same_files(const char *a, const char *b)
{
    size_t na = 0, nb = 0;
    char *x = file_bytes(a, &na), *y = file_bytes(b, &nb);
    const int same = x && y && na == nb && memcmp(x, y, na) == 0;
    free(x);
    free(y);
    return same;
}

/* mygpt train WORDS (DATA the data folder, DIR the test's folder), Ctrl-C once `after`
 * steps are taken (0: never; MYGPT_TRAIN_SIGINT_AFTER, the tool's hook for this test) */
static void train_run(const char *words, const char *dir, const char *data, const char *after, proc_result *r)
{
    char expanded[2048], *o = expanded;
    for (const char *w = words; *w && o < expanded + sizeof expanded - 300; )
        if (strncmp(w, "DIR", 3) == 0) {
            o += sprintf(o, "%s", dir);
            w += 3;
        } else {
            *o++ = *w++;
        }
    *o = '\0';
    if (after)
        setenv("MYGPT_TRAIN_SIGINT_AFTER", after, 1);
    else
        unsetenv("MYGPT_TRAIN_SIGINT_AFTER");
    cr_assert_eq(run_tool_words(expanded, data, r), 0);
    unsetenv("MYGPT_TRAIN_SIGINT_AFTER");
}

/* A run interrupted (Ctrl-C after `at` steps: the step finishes, the state is saved)
 * then resumed prints, with what it printed before, what the straight run prints, and
 * saves the same weights, bit for bit. */
static void interrupted_and_resumed(const char *flags, const int *at, int n_at, const char *dir, const char *data)
{
    char words[1024], straight_out[100000], path_a[300], path_b[300], after[16];
    proc_result r;
    snprintf(words, sizeof words, "train %s --save DIR/straight.safetensors", flags);
    train_run(words, dir, data, NULL, &r);
    cr_assert_eq(r.status, 0, "the straight run: exit %d: %s", r.status, r.err);
    snprintf(straight_out, sizeof straight_out, "%s", r.out);
    proc_result_free(&r);
    snprintf(path_a, sizeof path_a, "%s/straight.safetensors", dir);
    snprintf(path_b, sizeof path_b, "%s/resumed.safetensors", dir);
    for (int i = 0; i < n_at; i++) {
        char both[100000];
        snprintf(after, sizeof after, "%d", at[i]);
        snprintf(words, sizeof words, "train %s --save DIR/resumed.safetensors", flags);
        train_run(words, dir, data, after, &r);
        cr_expect_eq(r.status, 128 + SIGINT, "Ctrl-C after step %d: exit %d: %s", at[i], r.status, r.err);
        char said[120];
        snprintf(said, sizeof said, "interrupted after step %d: the training state is in", at[i]);
        cr_expect(strstr(r.err, said) != NULL, "%s", r.err);
        cr_expect(access(path_b, F_OK) != 0, "the weights were saved by an interrupted run");
        snprintf(both, sizeof both, "%s", r.out);
        proc_result_free(&r);
        snprintf(words, sizeof words, "train %s --save DIR/resumed.safetensors --resume DIR/resumed.state.safetensors",
                 flags);
        train_run(words, dir, data, NULL, &r);
        cr_expect_eq(r.status, 0, "resumed after step %d: exit %d: %s", at[i], r.status, r.err);
        snprintf(both + strlen(both), sizeof both - strlen(both), "%s", r.out);
        proc_result_free(&r);
        cr_expect_str_eq(both, straight_out, "interrupted after step %d, then resumed: what it printed differs", at[i]);
        cr_expect(same_files(path_a, path_b), "interrupted after step %d, then resumed: other weights", at[i]);
        unlink(path_b);
    }
}

/* The-verdict's first lines (its first `bytes` bytes, cut after the last newline there)
 * written to dir/verdict_part.txt */
static void write_verdict_part(const char *verdict, const char *dir, size_t bytes)
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

Test(cli_train, a_run_interrupted_and_resumed_prints_and_saves_what_the_straight_run_does, .timeout = 1200)
{
    const char *data = data_dir_or_skip();
    data_file_or_skip("encoder.json");
    const char *verdict = data_file_or_skip("the-verdict.txt"); // last: its buffer is reused
    char dir[] = "/tmp/mygpt_resume_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    // under the sanitizers (a step of 64 windows takes seconds there) the runs below that
    // run there take the-verdict's first 2706 bytes in batches of 8: the same 9 batches
    // an epoch, an eighth of the work
    const char *text = TEST_SANITIZED ? "DIR/verdict_part.txt" : "DATA/the-verdict.txt";
    const int batch = TEST_SANITIZED ? 8 : 64;
    if (TEST_SANITIZED)
        write_verdict_part(verdict, dir, 2800);
    // the course's loop, AdamW, dropout drawing from the generator: 8 batches an epoch, so
    // after step 1, in the middle, at the epoch's end, just after it and before the last
    const char *adamw = "--arch llms-from-scratch --dropout 0.1 --seed 3 --vocab 50257 --embed 8 --heads 2 "
                        "--layers 1 --max-seq 8 --context 8 --batch 64 --steps 12 --optimizer adamw --lr 0.01 "
                        "--eval-every 3 --text DATA/the-verdict.txt";
    const int at_adamw[] = {1, 5, 8, 9, 11};
    // under the sanitizers only the SGD run and the book's loop, which between them save
    // and restore every kind of state, at one point each
    if (!TEST_SANITIZED)
        interrupted_and_resumed(adamw, at_adamw, 5, dir, data);
    // SGD with momentum (its buffer in the state), the course's model
    char sgd[400];
    snprintf(sgd, sizeof sgd, "--seed 4 --vocab 50257 --embed 8 --heads 2 --layers 1 --max-seq 8 --context 8 "
             "--batch %d --steps 6 --optimizer sgd --lr 0.5 --momentum 0.9 --eval-every 4 --text %s", batch, text);
    const int at_sgd[] = {3};
    interrupted_and_resumed(sgd, at_sgd, 1, dir, data);
    // appendix D's schedule and clipping (issue 39) in the course's loop: in the warmup,
    // at its end, in the decay
    const char *sched = "--seed 6 --vocab 50257 --embed 8 --heads 2 --layers 1 --max-seq 8 --context 8 --batch 4 "
                        "--steps 8 --optimizer adamw --lr 0.01 --eval-every 3 --warmup 3 --lr-initial 1e-4 --cosine "
                        "--lr-min 1e-4 --clip-grad 0.05 --text DATA/the-verdict.txt";
    const int at_sched[] = {2, 3, 6};
    if (!TEST_SANITIZED)
        interrupted_and_resumed(sched, at_sched, 3, dir, data);
    // the book's loop: its evaluations, its samples after each epoch, across the epochs;
    // with appendix D's schedule and clipping, whose steps go on across the epochs
    char book[600];
    snprintf(book, sizeof book, "--arch llms-from-scratch --dropout 0.1 --seed 5 --vocab 50257 --embed 8 --heads 2 "
             "--layers 1 --max-seq 8 --context 8 --batch %d --epochs 2 --optimizer adamw --lr 0.001 "
             "--weight-decay 0.1 --eval-every 3 --eval-batches 2 --sample-prompt Every_effort "
             "--sample-tokens 4 --warmup 4 --cosine --clip-grad 0.05 --text %s", batch, text);
    const int at_book[] = {2, 8, 13};
    interrupted_and_resumed(book, TEST_SANITIZED ? at_book + 1 : at_book, TEST_SANITIZED ? 1 : 3, dir, data);
    char path[300];
    snprintf(path, sizeof path, "%s/straight.safetensors", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/resumed.state.safetensors", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/verdict_part.txt", dir);
    unlink(path);
    cr_expect_eq(rmdir(dir), 0, "only the files written were left");
}

/* --resume refuses a state of another model or of another run, and a file that is no
 * training state, with one line naming the difference; a second Ctrl-C ends the run at
 * once, saving nothing */
Test(cli_train, a_resume_of_another_run_is_refused_and_a_second_ctrl_c_saves_nothing, .timeout = 600)
{
    const char *data = data_dir_or_skip();
    data_file_or_skip("the-verdict.txt");
    data_file_or_skip("encoder.json");
    char dir[] = "/tmp/mygpt_refuse_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    const char *run = "train --seed 3 --vocab 50257 --embed 8 --heads 2 --layers 1 --max-seq 8 --context 8 --batch 4 "
                      "--steps 6 --lr 0.01 --text DATA/the-verdict.txt --state DIR/s.safetensors";
    proc_result r;
    train_run(run, dir, data, "2", &r);
    cr_assert_eq(r.status, 128 + SIGINT, "exit %d: %s", r.status, r.err);
    proc_result_free(&r);
    train_run("train --seed 3 --vocab 50257 --embed 8 --heads 2 --layers 1 --max-seq 8 --context 8 --batch 4 --steps 6 "
              "--lr 0.01 --warmup 2 --cosine --clip-grad 0.5 --text DATA/the-verdict.txt --state DIR/d.safetensors",
              dir, data, "1", &r);
    cr_assert_eq(r.status, 128 + SIGINT, "exit %d: %s", r.status, r.err);
    proc_result_free(&r);
    const struct {
        const char *words, *msg;
    } refused[] = {
        {"train --seed 3 --vocab 50257 --embed 16 --heads 2 --layers 1 --max-seq 8 --context 8 --batch 4 --steps 6 "
         "--lr 0.01 --text DATA/the-verdict.txt --resume DIR/s.safetensors",
         "holds the training of another model (embed_dim 8; this run's is 16)"},
        {"train --seed 3 --vocab 50257 --embed 8 --heads 2 --layers 1 --max-seq 8 --context 8 --batch 4 --steps 6 "
         "--lr 0.02 --text DATA/the-verdict.txt --resume DIR/s.safetensors",
         "was saved by a run with --lr 0.01, not 0.02"},
        {"train --seed 3 --vocab 50257 --embed 8 --heads 2 --layers 1 --max-seq 8 --context 8 --batch 4 --steps 6 "
         "--lr 0.01 --optimizer sgd --text DATA/the-verdict.txt --resume DIR/s.safetensors",
         "with the optimizer adamw, not sgd"},
        {"train --seed 3 --vocab 50257 --embed 8 --heads 2 --layers 1 --max-seq 8 --context 8 --batch 4 --steps 6 "
         "--lr 0.01 --text DATA/encoder.json --resume DIR/s.safetensors",
         "was saved by a run with --text 4612 + 534 tokens, FNV-1a "},
        // issue 46: the flag that differs and both values, not the loader's window count
        {"train --seed 3 --vocab 50257 --embed 8 --heads 2 --layers 1 --max-seq 8 --context 4 --batch 4 --steps 6 "
         "--lr 0.01 --text DATA/the-verdict.txt --resume DIR/s.safetensors",
         "was saved by a run with --context 8, not 4"},
        {"train --seed 3 --vocab 50257 --embed 8 --heads 2 --layers 1 --max-seq 8 --context 8 --batch 2 --steps 6 "
         "--lr 0.01 --text DATA/the-verdict.txt --resume DIR/s.safetensors",
         "was saved by a run with --batch 4, not 2"},
        {"train --seed 4 --vocab 50257 --embed 8 --heads 2 --layers 1 --max-seq 8 --context 8 --batch 4 --steps 6 "
         "--lr 0.01 --text DATA/the-verdict.txt --resume DIR/s.safetensors",
         "was saved by a run with --seed 3, not 4"},
        {"train --seed 3 --vocab 50257 --embed 8 --heads 2 --layers 1 --max-seq 8 --context 8 --batch 4 --steps 6 "
         "--lr 0.01 --eval-every 2 --text DATA/the-verdict.txt --resume DIR/s.safetensors",
         "was saved by a run with --eval-every 20, not 2"},
        {"train --seed 3 --vocab 50257 --embed 8 --heads 2 --layers 1 --max-seq 8 --context 8 --batch 4 --steps 1 "
         "--lr 0.01 --text DATA/the-verdict.txt --resume DIR/s.safetensors",
         "is at step 2, past the run's end (--steps 1)"},
        {"train --seed 3 --vocab 50257 --embed 8 --heads 2 --layers 1 --max-seq 8 --context 8 --batch 4 --steps 6 "
         "--lr 0.01 --text DATA/the-verdict.txt --resume DIR/m.safetensors",
         "m.safetensors is not a training state"},
        // issue 46: a state where a model is expected was refused by its tensor count
        {"generate --checkpoint DIR/s.safetensors --ids 1,2 --max-new 1",
         "s.safetensors is a training state (for mygpt train --resume), not a model: give the model train saves with "
         "--save (the run's train command with --resume STATE --save MODEL writes it)"},
        {"train --steps 1 --text DATA/the-verdict.txt --context 8 --init-from DIR/s.safetensors",
         "s.safetensors is a training state (for mygpt train --resume), not a model"},
        {"finetune --task instruct --checkpoint DIR/s.safetensors", "s.safetensors is a training state"},
        {"chat --checkpoint DIR/s.safetensors", "s.safetensors is a training state"},
        // appendix D's settings (issue 39): a schedule the saving run did not have, or
        // another one, or another clipping, or none of either
        {"train --seed 3 --vocab 50257 --embed 8 --heads 2 --layers 1 --max-seq 8 --context 8 --batch 4 --steps 6 "
         "--lr 0.01 --warmup 2 --text DATA/the-verdict.txt --resume DIR/s.safetensors",
         "was saved by a run with --warmup (not given), not 2"},
        {"train --seed 3 --vocab 50257 --embed 8 --heads 2 --layers 1 --max-seq 8 --context 8 --batch 4 --steps 6 "
         "--lr 0.01 --warmup 3 --cosine --clip-grad 0.5 --text DATA/the-verdict.txt --resume DIR/d.safetensors",
         "was saved by a run with --warmup 2, not 3"},
        {"train --seed 3 --vocab 50257 --embed 8 --heads 2 --layers 1 --max-seq 8 --context 8 --batch 4 --steps 6 "
         "--lr 0.01 --warmup 2 --lr-initial 0.001 --cosine --clip-grad 0.5 --text DATA/the-verdict.txt "
         "--resume DIR/d.safetensors",
         "was saved by a run with --lr-initial 1e-05, not 0.001"},
        {"train --seed 3 --vocab 50257 --embed 8 --heads 2 --layers 1 --max-seq 8 --context 8 --batch 4 --steps 7 "
         "--lr 0.01 --warmup 2 --cosine --clip-grad 0.5 --text DATA/the-verdict.txt --resume DIR/d.safetensors",
         "was saved by a run with --cosine over 6 steps, not over 7 steps"},
        {"train --seed 3 --vocab 50257 --embed 8 --heads 2 --layers 1 --max-seq 8 --context 8 --batch 4 --steps 6 "
         "--lr 0.01 --warmup 2 --cosine --lr-min 0 --clip-grad 0.5 --text DATA/the-verdict.txt "
         "--resume DIR/d.safetensors",
         "was saved by a run with --lr-min 1e-05, not 0"},
        {"train --seed 3 --vocab 50257 --embed 8 --heads 2 --layers 1 --max-seq 8 --context 8 --batch 4 --steps 6 "
         "--lr 0.01 --warmup 2 --cosine --clip-grad 0.25 --text DATA/the-verdict.txt --resume DIR/d.safetensors",
         "was saved by a run with --clip-grad 0.5, not 0.25"},
        {"train --seed 3 --vocab 50257 --embed 8 --heads 2 --layers 1 --max-seq 8 --context 8 --batch 4 --steps 6 "
         "--lr 0.01 --warmup 2 --cosine --text DATA/the-verdict.txt --resume DIR/d.safetensors",
         "was saved by a run with --clip-grad 0.5, not without it"},
        {"train --seed 3 --vocab 50257 --embed 8 --heads 2 --layers 1 --max-seq 8 --context 8 --batch 4 --steps 6 "
         "--lr 0.01 --text DATA/the-verdict.txt --resume DIR/d.safetensors",
         "was saved by a run with --warmup 2, not without it"},
    };
    const mygpt_config cfg = {50257, 8, 2, 1, 8};
    mygpt_gpt *g;
    char path[300];
    // the state cut short (a disk that filled before mygpt wrote it whole, a copy cut)
    snprintf(path, sizeof path, "%s/s.safetensors", dir);
    size_t whole = 0;
    char *bytes = file_bytes(path, &whole);
    cr_assert(bytes && whole > 100);
    snprintf(path, sizeof path, "%s/cut.safetensors", dir);
    for (size_t keep = 6; keep < whole; keep = keep * 4 + 3) {
        FILE *cut = fopen(path, "wb");
        fwrite(bytes, 1, keep, cut);
        fclose(cut);
        train_run("train --seed 3 --vocab 50257 --embed 8 --heads 2 --layers 1 --max-seq 8 --context 8 --batch 4 "
                  "--steps 6 --lr 0.01 --text DATA/the-verdict.txt --resume DIR/cut.safetensors", dir, data, NULL, &r);
        cr_expect_eq(r.status, 2, "cut at %zu of %zu bytes: exit %d: %s", keep, whole, r.status, r.err);
        cr_expect(count_lines(r.err) == 1 && strstr(r.err, "--resume: ") != NULL, "%s", r.err);
        proc_result_free(&r);
    }
    free(bytes);
    unlink(path);
    snprintf(path, sizeof path, "%s/m.safetensors", dir);
    cr_assert_eq(mygpt_gpt_create(&g, &cfg, 3, NULL), MYGPT_OK);
    cr_assert_eq(mygpt_checkpoint_save(g, path, NULL), MYGPT_OK);
    mygpt_gpt_free(g);
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        train_run(refused[i].words, dir, data, NULL, &r);
        cr_expect_eq(r.status, 2, "%s: exit %d: %s", refused[i].msg, r.status, r.err);
        cr_expect_str_empty(r.out, "%s", r.out);
        cr_expect_eq(count_lines(r.err), 1, "%s", r.err);
        cr_expect(strstr(r.err, refused[i].msg) != NULL, "'%s' lacks '%s'", r.err, refused[i].msg);
        proc_result_free(&r);
    }
    unlink(path);
    snprintf(path, sizeof path, "%s/d.safetensors", dir);
    unlink(path);
    // an unnamed state's file that is there and is no training state is not replaced
    snprintf(path, sizeof path, "%s/w.state.safetensors", dir);
    FILE *f = fopen(path, "w");
    fputs("mine", f);
    fclose(f);
    train_run("train --preset tiny --steps 3 --text DATA/the-verdict.txt --save DIR/w.safetensors "
              "--checkpoint-every 1", dir, data, NULL, &r);
    cr_expect_eq(r.status, 2, "exit %d: %s", r.status, r.err);
    cr_expect(strstr(r.err, "is not a training state: not replaced") != NULL, "%s", r.err);
    proc_result_free(&r);
    train_run("train --preset tiny --steps 3 --text DATA/the-verdict.txt --save DIR/w.safetensors", dir, data, "1", &r);
    cr_expect_eq(r.status, 128 + SIGINT, "exit %d: %s", r.status, r.err);
    cr_expect(strstr(r.err, "no training state saved") != NULL, "%s", r.err);
    proc_result_free(&r);
    size_t n = 0;
    char *mine = file_bytes(path, &n);
    cr_expect(mine && n == 4 && memcmp(mine, "mine", 4) == 0, "the file was replaced");
    free(mine);
    unlink(path);
    // Ctrl-C after the last step: the run is done, its model saved, no state
    train_run("train --preset tiny --steps 3 --text DATA/the-verdict.txt --save DIR/done.safetensors", dir, data, "3",
              &r);
    cr_expect_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    snprintf(path, sizeof path, "%s/done.safetensors", dir);
    cr_expect_eq(unlink(path), 0, "Ctrl-C after the last step: the model was not saved");
    snprintf(path, sizeof path, "%s/done.state.safetensors", dir);
    cr_expect(access(path, F_OK) != 0, "Ctrl-C after the last step saved a state");
    proc_result_free(&r);
    // a second Ctrl-C: at once, nothing saved
    snprintf(path, sizeof path, "%s/s.safetensors", dir);
    unlink(path);
    train_run(run, dir, data, "2,2", &r);
    cr_expect_eq(r.status, 128 + SIGINT, "exit %d: %s", r.status, r.err);
    cr_expect(strstr(r.err, "interrupted") == NULL, "%s", r.err);
    cr_expect(access(path, F_OK) != 0, "a second Ctrl-C saved the state");
    proc_result_free(&r);
    cr_expect_eq(rmdir(dir), 0, "only the files written were left");
}

/* Issue 46, item 3: a step that makes the weights non-finite stops the run there, with
 * one line naming the step and status 1, before anything saves: as the last step, the
 * --save over the --init-from model keeps it byte for byte; under --checkpoint-every,
 * the state of the step before stays (not replaced by a NaN one) and still resumes */
Test(cli_train, a_step_that_diverges_saves_nothing_and_keeps_what_was_saved, .timeout = 300)
{
    const char *data = data_dir_or_skip();
    data_file_or_skip("the-verdict.txt");
    data_file_or_skip("encoder.json");
    char dir[] = "/tmp/mygpt_diverge_XXXXXX", base[300], init[300], state[300], copy[300];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(base, sizeof base, "%s/base.safetensors", dir);
    snprintf(init, sizeof init, "%s/init.safetensors", dir);
    snprintf(state, sizeof state, "%s/s.safetensors", dir);
    snprintf(copy, sizeof copy, "%s/copy.safetensors", dir);
    const mygpt_config cfg = {.vocab_size = 50257, .embed_dim = 8, .num_heads = 2, .num_layers = 1, .max_seq_len = 16};
    mygpt_gpt *g;
    cr_assert_eq(mygpt_gpt_create(&g, &cfg, 5, NULL), MYGPT_OK);
    cr_assert_eq(mygpt_checkpoint_save(g, base, NULL), MYGPT_OK);
    cr_assert_eq(mygpt_checkpoint_save(g, init, NULL), MYGPT_OK);
    mygpt_gpt_free(g);
    proc_result r;
    // the last step blows up: the model it started from is kept
    train_run("train --preset tiny --init-from DIR/init.safetensors --steps 1 --lr 1e300 --text DATA/the-verdict.txt "
              "--save DIR/init.safetensors", dir, data, NULL, &r);
    cr_expect_eq(r.status, 1, "exit %d: %s", r.status, r.err);
    cr_expect_eq(count_lines(r.err), 1, "%s", r.err);
    cr_expect(strstr(r.err, "mygpt train: step 0: the training diverged (") && strstr(r.err, " holds -inf after "),
              "%s", r.err);
    cr_expect_str_empty(r.out, "a diverged step evaluated: %s", r.out);
    cr_expect(same_files(base, init), "the --init-from model was replaced");
    proc_result_free(&r);
    // the warmup's second step blows up: the state of step 1 stays, and resumes (to the same end)
    const char *run = "train --preset tiny --steps 3 --warmup 2 --lr 1e300 --checkpoint-every 1 "
                      "--text DATA/the-verdict.txt --state DIR/s.safetensors";
    train_run(run, dir, data, NULL, &r);
    cr_expect_eq(r.status, 1, "exit %d: %s", r.status, r.err);
    cr_expect(strstr(r.err, "mygpt train: step 1: the training diverged (") && strstr(r.err, "saved before stays"),
              "%s", r.err);
    proc_result_free(&r);
    size_t n = 0;
    char *bytes = file_bytes(state, &n);
    cr_assert_not_null(bytes);
    static char header[1 << 16];
    size_t hlen = 0;
    for (int b = 7; n > 8 && b >= 0; b--) // the header's length: 8 bytes, little-endian
        hlen = hlen << 8 | (unsigned char)bytes[b];
    cr_assert(hlen < sizeof header && hlen + 8 <= n, "a state of %zu bytes, its header %zu", n, hlen);
    memcpy(header, bytes + 8, hlen);
    header[hlen] = '\0';
    cr_expect(strstr(header, "\"step\":\"1\"") != NULL, "the state is not step 1's: %s", header);
    FILE *f = fopen(copy, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(bytes, 1, n, f), n);
    cr_assert_eq(fclose(f), 0);
    free(bytes);
    char resumed[512];
    snprintf(resumed, sizeof resumed, "%s --resume DIR/s.safetensors", run);
    train_run(resumed, dir, data, NULL, &r);
    cr_expect_eq(r.status, 1, "exit %d: %s", r.status, r.err);
    cr_expect(strstr(r.err, "mygpt train: step 1: the training diverged ("), "not resumed at step 1: %s", r.err);
    cr_expect(same_files(state, copy), "the last good state was replaced");
    proc_result_free(&r);
    unlink(base);
    unlink(init);
    unlink(state);
    unlink(copy);
    cr_expect_eq(rmdir(dir), 0, "only the files written were left");
}

/* --log: a row per step, the validation loss where the step evaluated, and its plot;
 * an SVG there that is not such a plot is refused before the first step; presets and
 * defaults: --help lists them, explicit flags win, an unknown one is refused */
Test(cli_train, the_log_the_plot_and_the_presets, .timeout = 600)
{
    const char *data = data_dir_or_skip();
    data_file_or_skip("the-verdict.txt");
    data_file_or_skip("encoder.json");
    char dir[] = "/tmp/mygpt_log_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    proc_result r;
    train_run("train --preset tiny --steps 5 --eval-every 2 --text DATA/the-verdict.txt --log DIR/run.csv", dir, data,
              NULL, &r);
    cr_expect_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cr_expect(strstr(r.err, "mygpt train: step 5/5, loss ") != NULL, "no progress line: %s", r.err);
    // a preset is its flags, typed
    proc_result typed;
    train_run("train --seed 123 --vocab 50257 --embed 16 --heads 2 --layers 1 --max-seq 16 --context 16 --batch 4 "
              "--steps 5 --optimizer adamw --lr 1e-2 --eval-every 2 --text DATA/the-verdict.txt", dir, data, NULL,
              &typed);
    cr_expect_eq(typed.status, 0, "exit %d: %s", typed.status, typed.err);
    cr_expect_str_eq(r.out, typed.out);
    cr_expect_eq(count_lines(r.out), 3, "%s", r.out);
    proc_result_free(&r);
    char csv[300], svg[300];
    snprintf(csv, sizeof csv, "%s/run.csv", dir);
    snprintf(svg, sizeof svg, "%s/run.svg", dir);
    size_t n = 0;
    char *text = file_bytes(csv, &n);
    cr_assert_not_null(text);
    text = realloc(text, n + 1);
    text[n] = '\0';
    cr_expect_eq(count_lines(text), 6, "%s", text);
    for (int step = 0; step < 5; step++) { // the losses stdout shows, where it shows them
        char row[64], line[128];
        double tl, vl;
        snprintf(row, sizeof row, "\n%d,", step);
        const char *at = strstr(text, row);
        cr_assert_not_null(at, "no row for step %d: %s", step, text);
        const int evaluated = step % 2 == 0;
        if (evaluated) {
            cr_assert_eq(sscanf(at + strlen(row), "%lf,%lf,0.01,", &tl, &vl), 2, "%s", at);
            snprintf(line, sizeof line, "step %d train_loss %.6f val_loss %.6f\n", step, tl, vl);
            cr_expect(strstr(typed.out, line) != NULL, "the log's row %d is not what stdout shows: %s", step, at);
        } else {
            cr_assert_eq(sscanf(at + strlen(row), "%lf", &tl), 1);
            cr_expect(strstr(at + strlen(row), ",,0.01,") != NULL, "step %d: %s", step, at);
        }
    }
    proc_result_free(&typed);
    free(text);
    text = file_bytes(svg, &n);
    cr_assert_not_null(text, "no plot");
    text = realloc(text, n + 1);
    text[n] = '\0';
    cr_expect(strstr(text, "the loss of the run") != NULL && strstr(text, ">validation<") != NULL, "%s", text);
    free(text);
    // someone's drawing where the plot would go: refused, kept
    unlink(svg);
    FILE *f = fopen(svg, "w");
    fputs("<svg>mine</svg>", f);
    fclose(f);
    train_run("train --preset tiny --steps 2 --text DATA/the-verdict.txt --log DIR/run.csv", dir, data, NULL, &r);
    cr_expect_eq(r.status, 2, "exit %d: %s", r.status, r.err);
    cr_expect(strstr(r.err, "is not a loss plot of mygpt train: not replaced") != NULL, "%s", r.err);
    proc_result_free(&r);
    text = file_bytes(svg, &n);
    cr_expect(text && n == 15, "the drawing was replaced");
    free(text);
    unlink(svg);
    unlink(csv);
    // presets: listed, refused when unknown, the text the only flag without a default
    cr_assert_eq(run_words(MYGPT_EXE, "train --help", &r), 0);
    cr_expect(strstr(r.out, "book-ch5") && strstr(r.out, "verdict") && strstr(r.out, "--epochs 10"), "%s", r.out);
    proc_result_free(&r);
    const char *bad[][2] = {{"train --preset nosuch --text x", "--preset: unknown preset 'nosuch'"},
                            {"train --preset tiny", "--text FILE is required"},
                            {"train --text x --state /tmp --preset tiny", "--state: /tmp is a directory"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_assert_eq(run_words(MYGPT_EXE, bad[i][0], &r), 0);
        cr_expect_eq(r.status, 2, "%s: exit %d", bad[i][0], r.status);
        cr_expect(strstr(r.err, bad[i][1]) != NULL, "'%s' lacks '%s'", r.err, bad[i][1]);
        proc_result_free(&r);
    }
    // an explicit flag wins over the preset's: --eval-every 3 of tiny's 10
    train_run("train --preset tiny --steps 4 --eval-every 3 --text DATA/the-verdict.txt", dir, data, NULL, &r);
    cr_expect_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cr_expect(strncmp(r.out, "step 0 train_loss", 17) == 0 && strstr(r.out, "\nstep 3 train_loss") != NULL &&
              count_lines(r.out) == 2, "%s", r.out);
    proc_result_free(&r);
    cr_expect_eq(rmdir(dir), 0, "only the files written were left");
}

/* Files in dir, '.' and '..' aside */
static int entries_in(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    if (d)
        closedir(d);
    return n;
}

/* A run that must be refused before any work: its words (train_run's), and the two
 * flags the one line names */
typedef struct refused_run {
    const char *words, *flag, *other;
} refused_run;

/* Each run refused: status 2, one line naming both flags, nothing on stdout, no file made
 * in dir, the files `keep` (names in dir) byte for byte as they were */
static void expect_refused_untouched(const refused_run *runs, size_t n, const char *dir, const char *data,
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

/* Issue 46, items 1 and 2: train writes no file over one it reads (--text, --init-from,
 * --resume, the tokenizer's) nor two of its files over each other (--save and a GPT-2's
 * config.json beside it, --state or the state beside --save, --log and its plot), however
 * the paths are spelt (DIR/./m, DIR/sub/../m, a link to m) and whether the file is there
 * yet or not: refused before the first step. A state resumed and saved again, or the
 * model a run starts from saved again, is the run going on: those are allowed. */
Test(cli_train, no_file_written_replaces_one_read_or_another_written, .timeout = 300)
{
    const char *data = data_dir_or_skip();
    data_file_or_skip("encoder.json");
    const char *verdict = data_file_or_skip("the-verdict.txt"); // its static buffer: the last call
    char dir[] = "/tmp/mygpt_outputs_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    write_verdict_part(verdict, dir, 3000);
    char path[300], link[300];
    snprintf(path, sizeof path, "%s/m.safetensors", dir);
    const mygpt_config cfg = {50257, 8, 2, 1, 16};
    mygpt_gpt *g;
    cr_assert_eq(mygpt_gpt_create(&g, &cfg, 1, NULL), MYGPT_OK);
    cr_assert_eq(mygpt_checkpoint_save(g, path, NULL), MYGPT_OK);
    mygpt_gpt_free(g);
    snprintf(path, sizeof path, "%s/sub", dir);
    cr_assert_eq(mkdir(path, 0700), 0);
    snprintf(path, sizeof path, "%s/verdict_part.txt", dir);
    snprintf(link, sizeof link, "%s/link.txt", dir);
    cr_assert_eq(symlink(path, link), 0);
#define TRAIN_SMALL "train --seed 0 --vocab 50257 --embed 8 --heads 2 --layers 1 --max-seq 16 --context 8 --batch 2 " \
                    "--optimizer sgd --lr 0.1 --text DIR/verdict_part.txt "
    static const refused_run runs[] = {
        {TRAIN_SMALL "--steps 2 --log DIR/verdict_part.txt", "--log", "--text"},
        {TRAIN_SMALL "--steps 2 --state DIR/./verdict_part.txt", "--state", "--text"},
        {"train --seed 0 --vocab 50257 --embed 8 --heads 2 --layers 1 --max-seq 16 --context 8 --batch 2 --steps 2 "
         "--optimizer sgd --lr 0.1 --text DIR/link.txt --save DIR/sub/../verdict_part.txt", "--save", "--text"},
        {TRAIN_SMALL "--steps 2 --save DIR/new --state DIR/./new --log DIR/new", "--save", "--state"},
        {TRAIN_SMALL "--steps 2 --save DIR/new --log DIR/sub/../new", "--save", "--log"},
        {TRAIN_SMALL "--steps 2 --save DIR/new.svg --log DIR/new.csv", "--save", "--log's plot"},
        {TRAIN_SMALL "--steps 2 --save DIR/new.safetensors --log DIR/sub/../new.state.safetensors",
         "the training state", "--log"},
        {TRAIN_SMALL "--steps 2 --resume DIR/m.safetensors --log DIR/m.safetensors", "--log", "--resume"},
        {TRAIN_SMALL "--steps 2 --log DIR/sub/../vocab/vocab.bpe", "--log", "the tokenizer"},
        {TRAIN_SMALL "--steps 2 --arch gpt2 --save DIR/g.safetensors --log DIR/./config.json", "--log",
         "a GPT-2 save's config.json"},
    };
    // the tokenizer's files: a copy of the data folder's, which the tool reads from DIR/vocab
    static const char *const keep[] = {"verdict_part.txt", "m.safetensors", "vocab/encoder.json", "vocab/vocab.bpe"};
    snprintf(path, sizeof path, "%s/vocab", dir);
    cr_assert_eq(mkdir(path, 0700), 0);
    for (int k = 2; k < 4; k++) {
        char from[4300], to[300];
        size_t n = 0;
        snprintf(from, sizeof from, "%s/%s", data, keep[k] + 6);
        snprintf(to, sizeof to, "%s/%s", dir, keep[k]);
        char *bytes = file_bytes(from, &n);
        FILE *f = fopen(to, "wb");
        cr_assert(bytes && f && fwrite(bytes, 1, n, f) == n && fclose(f) == 0, "%s", to);
        free(bytes);
    }
    setenv("MYGPT_DATA", path, 1);
    expect_refused_untouched(runs, sizeof runs / sizeof runs[0], dir, data, keep, 4);
    // the state resumed is saved again, however spelt
    proc_result r;
    train_run(TRAIN_SMALL "--steps 2 --state DIR/s.safetensors --checkpoint-every 1", dir, data, NULL, &r);
    cr_expect_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    proc_result_free(&r);
    train_run(TRAIN_SMALL "--steps 3 --checkpoint-every 1 --resume DIR/s.safetensors --state DIR/sub/../s.safetensors",
              dir, data, NULL, &r);
    cr_expect_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cr_expect(strstr(r.err, "(resumed at step 2)") != NULL, "%s", r.err);
    proc_result_free(&r);
    // and so is the model a run starts from: trained further in place
    train_run("train --seed 0 --context 8 --batch 2 --steps 1 --optimizer sgd --lr 0.1 --text DIR/verdict_part.txt "
              "--init-from DIR/m.safetensors --save DIR/./m.safetensors", dir, data, NULL, &r);
    cr_expect_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    proc_result_free(&r);
    static const char *const made[] = {"s.safetensors", "m.safetensors", "verdict_part.txt", "link.txt",
                                       "vocab/encoder.json", "vocab/vocab.bpe", "vocab", "sub"};
    for (size_t k = 0; k < sizeof made / sizeof made[0]; k++) {
        snprintf(path, sizeof path, "%s/%s", dir, made[k]);
        remove(path);
    }
    cr_expect_eq(rmdir(dir), 0, "only the files written were left");
}

/* Issue 46, item 6: under a file-size limit (ulimit -f, SIGXFSZ left as a shell leaves
 * it) a model's save, a training state's and a figure each fail with status 1 and one
 * line naming the file and the limit; no temporary is left, the old file stays */
Test(cli_train, a_file_size_limit_fails_a_save_with_one_line_and_keeps_the_old_file, .timeout = 300)
{
    const char *data = data_dir_or_skip();
    data_file_or_skip("encoder.json");
    const char *verdict = data_file_or_skip("the-verdict.txt"); // its static buffer: the last call
    char dir[] = "/tmp/mygpt_fsize_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    write_verdict_part(verdict, dir, 3000);
    static const struct {
        const char *words, *file;
    } runs[] = {
        {TRAIN_SMALL "--steps 2 --save DIR/m.safetensors", "m.safetensors"},
        {TRAIN_SMALL "--steps 2 --state DIR/s.safetensors --checkpoint-every 1", "s.safetensors"},
        {"attention --seed 0 --vocab 50257 --embed 8 --heads 2 --layers 1 --max-seq 16 "
         "--ids 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16 --svg DIR/a.svg", "a.svg"},
    };
    signal(SIGXFSZ, SIG_DFL); // as a shell starts the tool: the signal's default ends a program
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        char path[300], *now;
        size_t len = 0;
        snprintf(path, sizeof path, "%s/%s", dir, runs[i].file);
        FILE *f = fopen(path, "w");
        cr_assert_not_null(f);
        fputs("old", f);
        cr_assert_eq(fclose(f), 0);
        const int files = entries_in(dir);
        const struct rlimit limit = {16 << 10, 16 << 10};
        struct rlimit was;
        cr_assert_eq(getrlimit(RLIMIT_FSIZE, &was), 0);
        cr_assert_eq(setrlimit(RLIMIT_FSIZE, &limit), 0); // inherited by the tool
        proc_result r;
        train_run(runs[i].words, dir, data, NULL, &r);
        setrlimit(RLIMIT_FSIZE, &was);
        cr_expect_eq(r.status, 1, "%s: exit %d: %s", runs[i].file, r.status, r.err);
        int said = 0; // the lines that say it (a training's progress lines aside)
        for (const char *at = r.err; (at = strstr(at, "cannot write")); at++)
            said++;
        cr_expect(said == 1 && strstr(r.err, path) && strstr(r.err, "File too large (the file-size limit)"), "%s: %s",
                  runs[i].file, r.err);
        cr_expect_eq(entries_in(dir), files, "%s: a temporary was left", runs[i].file);
        now = file_bytes(path, &len);
        cr_expect(now && len == 3 && memcmp(now, "old", 3) == 0, "%s: replaced", runs[i].file);
        proc_result_free(&r);
        free(now);
        unlink(path);
    }
    char part[300];
    snprintf(part, sizeof part, "%s/verdict_part.txt", dir);
    unlink(part);
    cr_expect_eq(rmdir(dir), 0, "only the files written were left");
}

/* Issue 46, item 19: a NaN validation loss is Python's nan on stdout and in the log, and
 * the plot leaves a gap there, never a non-finite coordinate (SGD at lr 1e20: finite
 * weights whose logits overflow). Such a model is not saved: the run stops there with
 * status 1, and the model it started from stays as it was. */
Test(cli_train, a_nan_validation_loss_is_nan_in_the_log_and_a_gap_in_the_plot, .timeout = 120)
{
    const char *data = data_dir_or_skip();
    data_file_or_skip("the-verdict.txt");
    data_file_or_skip("encoder.json");
    char dir[] = "/tmp/mygpt_nanlog_XXXXXX", csv[300], svg[300];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(csv, sizeof csv, "%s/run.csv", dir);
    snprintf(svg, sizeof svg, "%s/run.svg", dir);
    proc_result r;
    train_run("train --seed 0 --vocab 50257 --embed 8 --heads 2 --layers 1 --text DATA/the-verdict.txt --context 8 "
              "--batch 2 --steps 1 --optimizer sgd --lr 1e-3 --save DIR/m.safetensors", dir, data, NULL, &r);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    proc_result_free(&r);
    char model[300];
    snprintf(model, sizeof model, "%s/m.safetensors", dir);
    size_t before_len = 0, after_len = 0;
    char *before = file_bytes(model, &before_len);
    cr_assert_not_null(before);
    train_run("train --seed 0 --text DATA/the-verdict.txt --context 8 --batch 2 --steps 1 --optimizer sgd --lr 1e20 "
              "--log DIR/run.csv --init-from DIR/m.safetensors --save DIR/m.safetensors", dir, data, NULL, &r);
    cr_expect_eq(r.status, 1, "exit %d: %s", r.status, r.err);
    // the progress line of the step, then the stop's one line
    const char *stop = strstr(r.err, "mygpt train: step 0: the training diverged (the validation loss holds nan after "
                                     "the step's update)");
    cr_expect(stop && count_lines(stop) == 1, "%s", r.err);
    cr_expect_str_eq(r.out, "step 0 train_loss 14.736188 val_loss nan\n");
    proc_result_free(&r);
    char *after = file_bytes(model, &after_len);
    cr_expect(after && after_len == before_len && memcmp(after, before, before_len) == 0, "the model was replaced");
    free(before);
    free(after);
    unlink(model);
    size_t n = 0;
    char *text = file_bytes(csv, &n);
    cr_assert_not_null(text);
    cr_expect(n > 40 && strncmp(text, "step,train_loss,val_loss,lr,ms\n0,14.736188,nan,1e+20,", 53) == 0, "%.*s",
              (int)n, text);
    free(text);
    text = file_bytes(svg, &n);
    cr_assert_not_null(text);
    text = realloc(text, n + 1);
    text[n] = '\0';
    cr_expect(strstr(text, "nan") == NULL && strstr(text, "inf") == NULL, "a non-finite coordinate: %s", text);
    cr_expect(strstr(text, "points=\"\"") != NULL, "the validation curve is not an empty line: %s", text);
    free(text);
    unlink(csv);
    unlink(svg);
    cr_expect_eq(rmdir(dir), 0, "only the files written were left");
}

/* ---- issue 39: mygpt chat ------------------------------------------------------------ */

/* The book's chapter-7 example: the template with its instruction, then the response */
static char *instruct_example(const char *instruction, const char *response)
{
    char *prompt = NULL;
    cr_assert_eq(mygpt_instruct_prompt(&prompt, instruction, NULL, NULL), MYGPT_OK);
    char *ex = malloc(strlen(prompt) + strlen(MYGPT_INSTRUCT_RESPONSE) + strlen(response) + 1);
    cr_assert_not_null(ex);
    strcat(strcat(strcpy(ex, prompt), MYGPT_INSTRUCT_RESPONSE), response);
    free(prompt);
    return ex;
}

/* A model that has seen the template a little (30 steps of `mygpt train --preset tiny`
 * on 120 of its examples, one after another; 15 under the sanitizers, where a step
 * takes a second): greedy, it soon writes a new "###", which the chat's stop rule must
 * catch. Written to DIR/chat.safetensors (path), with a context of CHAT_CONTEXT tokens,
 * room for a few turns. */
#define CHAT_CONTEXT 160
static void train_chat_model(const char *dir, const char *data, char *path, size_t cap)
{
    static const char *const pairs[][2] = {{"Name a color.", "Blue."},
                                           {"Say hello.", "Hello!"},
                                           {"Count to three.", "One, two, three."},
                                           {"Name a fruit.", "An apple."}};
    char text[300], words[1024];
    snprintf(text, sizeof text, "%s/examples.txt", dir);
    FILE *f = fopen(text, "wb");
    cr_assert_not_null(f);
    for (int k = 0; k < 30; k++)
        for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
            char *ex = instruct_example(pairs[i][0], pairs[i][1]);
            fprintf(f, "%s\n\n", ex);
            free(ex);
        }
    fclose(f);
    snprintf(path, cap, "%s/chat.safetensors", dir);
    snprintf(words, sizeof words, "train --preset tiny --text %s --max-seq %d --steps %d --lr %s --eval-every 30 "
             "--save %s", text, CHAT_CONTEXT, TEST_SANITIZED ? 15 : 30, TEST_SANITIZED ? "3e-2" : "2e-2", path);
    proc_result r;
    cr_assert_eq(run_tool_words(words, data, &r), 0);
    cr_assert_eq(r.status, 0, "mygpt %s: %s", words, r.err);
    proc_result_free(&r);
}

static int blank(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* The stop rule, written here from the command's help: the new tokens' text before its
 * first "###" (*stopped), without the white space around it. Returns how many tokens
 * the chat reads: all, or up to the one that completes that "###". */
static int cut_response(const mygpt_tokenizer *tok, const int64_t *ids, int n, char **kept, int *stopped)
{
    char *text = NULL;
    size_t len = 0;
    int k = 0;
    *stopped = 0;
    while (k < n && !*stopped) {
        free(text);
        k++;
        cr_assert_eq(mygpt_decode(tok, ids, (size_t)k, &text, &len, NULL), MYGPT_OK);
        for (size_t i = 0; i + 3 <= len && !*stopped; i++)
            if (strncmp(text + i, "###", 3) == 0)
                *stopped = 1, len = i;
    }
    size_t a = 0;
    while (a < len && blank(text[a]))
        a++;
    while (len > a && blank(text[len - 1]))
        len--;
    *kept = strndup(text ? text + a : "", len - a);
    free(text);
    return k;
}

/* mygpt generate on text: the new tokens' ids (after n_prompt), as a pipe prints them */
static int generate_new_ids(const char *ckpt, const char *text, const char *sampling, int max_new, int n_prompt,
                            int64_t *ids)
{
    char max[16], *argv[16] = {MYGPT_EXE, "generate", "--checkpoint", (char *)ckpt, "--prompt", (char *)text,
                               "--max-new", max, "--no-stream"};
    int argc = 9;
    char copy[256];
    snprintf(copy, sizeof copy, "%s", sampling);
    for (char *w = strtok(copy, " "); w && argc < 15; w = strtok(NULL, " "))
        argv[argc++] = w;
    argv[argc] = NULL;
    snprintf(max, sizeof max, "%d", max_new);
    proc_result r;
    cr_assert_eq(run_process(argv, &r), 0);
    cr_assert_eq(r.status, 0, "generate: %s", r.err);
    int n = 0;
    for (char *p = r.out; *p && *p != '\n'; n++) {
        long long v = strtoll(p, &p, 10);
        if (n >= n_prompt)
            ids[n - n_prompt] = v;
        while (*p == ' ')
            p++;
    }
    proc_result_free(&r);
    return n - n_prompt;
}

/* What mygpt chat prints for lines, found from mygpt generate on the conversation as
 * the chat's help describes it: each turn the template with the instruction, the
 * response cut at the stop rule, then <|endoftext|>; the oldest turns dropped while the
 * conversation and max_new tokens do not fit in max_seq. What the lines exercised goes
 * to *f. */
typedef struct chat_facts {
    char dropped[300];    /* the note on stderr when turns are first dropped, "" if none are */
    int kept_turns;       /* prompts with an earlier turn before them */
    int for_the_response; /* turns dropped that the prompt alone would not have dropped */
    int stops;            /* responses cut at "###" */
} chat_facts;

static char *expected_chat(const mygpt_tokenizer *tok, const char *ckpt, const char *const *lines, int n_lines,
                           const char *sampling, int max_new, int max_seq, chat_facts *f)
{
    char *turns[16] = {0}, *expected = calloc(1, 1);
    int first = 0, n_turns = 0;
    memset(f, 0, sizeof *f);
    for (int l = 0; l < n_lines; l++) {
        char *prompt = instruct_example(lines[l], ""), *conv = NULL;
        int64_t *ids = NULL;
        size_t n = 0;
        for (;;) {
            size_t len = strlen(prompt) + 1;
            for (int t = first; t < n_turns; t++)
                len += strlen(turns[t]) + strlen("<|endoftext|>");
            conv = realloc(conv, len);
            conv[0] = '\0';
            for (int t = first; t < n_turns; t++)
                strcat(strcat(conv, turns[t]), "<|endoftext|>");
            strcat(conv, prompt);
            free(ids);
            cr_assert_eq(mygpt_encode(tok, conv, strlen(conv), &ids, &n, NULL), MYGPT_OK);
            if ((int)n + max_new <= max_seq || first == n_turns)
                break;
            first++;
            f->for_the_response += (int)n <= max_seq;
        }
        if (first > 0 && !f->dropped[0]) {
            char what[64] = "the oldest turn was dropped";
            if (first > 1)
                snprintf(what, sizeof what, "the %d oldest turns were dropped", first);
            sprintf(f->dropped,
                    "turn %d: the conversation and a response of %d tokens outgrew the model's context of %d: %s",
                    n_turns + 1, max_new, max_seq, what);
        }
        f->kept_turns += first < n_turns;
        int64_t new_ids[1024];
        const int n_new = generate_new_ids(ckpt, conv, l == 0 ? sampling : "", max_new, (int)n, new_ids);
        char *kept;
        int stopped;
        const int k = cut_response(tok, new_ids, n_new, &kept, &stopped);
        f->stops += stopped;
        size_t el = strlen(expected);
        expected = realloc(expected, el + strlen(kept) + 16 * (size_t)(k + 2));
        el += (size_t)sprintf(expected + el, "%s\n", kept);
        for (int i = 0; i < k; i++)
            el += (size_t)sprintf(expected + el, i ? " %lld" : "%lld", (long long)new_ids[i]);
        sprintf(expected + el, "\n");
        turns[n_turns] = malloc(strlen(prompt) + strlen(kept) + 1);
        strcat(strcpy(turns[n_turns++], prompt), kept);
        free(kept);
        free(prompt);
        free(conv);
        free(ids);
    }
    for (int t = 0; t < n_turns; t++)
        free(turns[t]);
    return expected;
}

/* A model of the course's architecture drawn from seed 3, saved at path */
static void random_model(const char *path, int vocab, int max_seq)
{
    const mygpt_config cfg = {.vocab_size = vocab, .embed_dim = 16, .num_heads = 2, .num_layers = 1,
                              .max_seq_len = max_seq};
    mygpt_gpt *g = NULL;
    cr_assert_eq(mygpt_gpt_create(&g, &cfg, 3, NULL), MYGPT_OK);
    cr_assert_eq(mygpt_checkpoint_save(g, path, NULL), MYGPT_OK);
    mygpt_gpt_free(g);
}

/* In a pipe: each line's response is what mygpt generate continues the conversation
 * with (the same token ids, greedy or sampled), cut at the stop rule; blank lines are
 * skipped; the oldest turns go when the context is full, said once on stderr; end of
 * file ends it with status 0. */
Test(cli_chat, responses_are_generate_cut_at_the_stop_rule, .timeout = 300)
{
    const char *data = data_dir_or_skip();
    data_file_or_skip("encoder.json");
    char dir[] = "/tmp/mygpt-chat-XXXXXX", ckpt[300], text[300];
    cr_assert_not_null(mkdtemp(dir));
    train_chat_model(dir, data, ckpt, sizeof ckpt);
    mygpt_tokenizer *tok = NULL;
    cr_assert_eq(mygpt_tokenizer_load_dir(&tok, data, NULL), MYGPT_OK);
    static const char *const lines[] = {"Name a color.", "Say hello.", "Count to three.", "Name a fruit.",
                                        "What is 2 + 2?"};
    const int n_lines = TEST_SANITIZED ? 3 : 5;
    // a blank line between, no newline after the last
    const char *input = TEST_SANITIZED
                            ? "Name a color.\nSay hello.\n\n  \nCount to three."
                            : "Name a color.\nSay hello.\n\n  \nCount to three.\nName a fruit.\nWhat is 2 + 2?";
    chat_facts f;
    char *want = expected_chat(tok, ckpt, lines, n_lines, "", 24, CHAT_CONTEXT, &f);
    char *argv[] = {MYGPT_EXE, "chat", "--checkpoint", ckpt, "--max-new", "24", "--print-ids", NULL};
    proc_result r;
    cr_assert_eq(run_process_input(argv, input, &r), 0);
    cr_expect_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cr_expect_str_eq(r.out, want, "the chat's responses and ids differ from generate's");
    // what the run exercised: an earlier turn before a prompt, a response cut at "###",
    // and (not under the sanitizers' three lines) a turn dropped to leave room for a response
    cr_expect_gt(f.kept_turns, 0, "no prompt had an earlier turn before it");
    cr_expect_gt(f.stops, 0, "no response met a new \"###\"");
    if (!TEST_SANITIZED) {
        cr_expect_gt(f.for_the_response, 0, "no turn was dropped for the response's room");
        cr_expect(count_lines(r.err) == 1 && strstr(r.err, f.dropped) != NULL, "'%s' lacks '%s'", r.err, f.dropped);
    }
    proc_result_free(&r);
    free(want);
    // sampled: the first response is generate's with --sample-seed S
    want = expected_chat(tok, ckpt, lines, 1, "--temperature 1.5 --top-k 40 --sample-seed 7", 12, CHAT_CONTEXT, &f);
    char *sampled[] = {MYGPT_EXE, "chat", "--checkpoint", ckpt, "--max-new", "12", "--print-ids", "--seed", "7",
                       "--temperature", "1.5", "--top-k", "40", NULL};
    cr_assert_eq(run_process_input(sampled, "Name a color.\n", &r), 0);
    cr_expect_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cr_expect_str_eq(r.out, want, "the sampled response differs from generate's");
    proc_result_free(&r);
    free(want);
    // end of file at once: nothing said, status 0
    cr_assert_eq(run_process_input(argv, "", &r), 0);
    cr_expect(r.status == 0 && !r.out[0] && !r.err[0], "exit %d: '%s' '%s'", r.status, r.out, r.err);
    proc_result_free(&r);
    mygpt_tokenizer_free(tok);
    unlink(ckpt);
    snprintf(text, sizeof text, "%s/examples.txt", dir);
    unlink(text);
    cr_expect_eq(rmdir(dir), 0, "only the files written were left");
}

/* A conversation far longer than a small context goes on: the oldest turns dropped, a
 * prompt longer than the context read from its end, each said once. */
Test(cli_chat, a_long_conversation_stays_within_a_small_context, .timeout = 300)
{
    data_file_or_skip("encoder.json");
    char dir[] = "/tmp/mygpt-chat-XXXXXX", ckpt[300];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(ckpt, sizeof ckpt, "%s/small.safetensors", dir);
    random_model(ckpt, 50257, 32); // the template alone is 38 tokens
    const int turns = TEST_SANITIZED ? 4 : 12;
    char input[4096] = "";
    for (int i = 0; i < turns; i++)
        strcat(input, i % 2 ? "Tell me more.\n" : "Write a haiku about the sea and the long road home.\n");
    char *argv[] = {MYGPT_EXE, "chat", "--checkpoint", ckpt, "--max-new", "6", "--print-ids", NULL};
    proc_result r;
    cr_assert_eq(run_process_input(argv, input, &r), 0);
    cr_expect_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cr_expect_geq(count_lines(r.out), 2 * turns, "%s", r.out); // a response and its ids each turn
    cr_expect_eq(count_lines(r.err), 2, "%s", r.err);
    cr_expect(strstr(r.err, "mygpt chat: the prompt has ") && strstr(r.err, "it reads the last 32\n"), "%s", r.err);
    cr_expect(strstr(r.err, "turn 2: the conversation and a response of 6 tokens outgrew the model's context of 32: "
                         "the oldest turn was dropped, and more will be as it goes on\n"), "%s", r.err);
    proc_result_free(&r);
    unlink(ckpt);
    rmdir(dir);
}

/* Bad flags and files: one line on stderr, nothing on stdout, status 2 */
Test(cli_chat, bad_flags_and_files_are_one_line_and_status_2)
{
    char dir[] = "/tmp/mygpt-chat-XXXXXX", gpt2[300], small[300], classifier[300];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(gpt2, sizeof gpt2, "%s/gpt2.safetensors", dir);
    snprintf(small, sizeof small, "%s/small.safetensors", dir);
    snprintf(classifier, sizeof classifier, "%s/classifier.safetensors", dir);
    random_model(gpt2, 50257, 64);
    random_model(small, 4, 8);
    const mygpt_config two = {.vocab_size = 50257, .embed_dim = 8, .num_heads = 2, .num_layers = 1, .max_seq_len = 8,
                              .arch = MYGPT_ARCH_LLMS_FROM_SCRATCH, .num_classes = 2}; // the book's chapter 6
    mygpt_gpt *g = NULL;
    cr_assert_eq(mygpt_gpt_create(&g, &two, 3, NULL), MYGPT_OK);
    cr_assert_eq(mygpt_checkpoint_save(g, classifier, NULL), MYGPT_OK);
    mygpt_gpt_free(g);
    const struct { const char *fmt, *msg; } cases[] = {
        {"chat%.0s", "mygpt chat: --checkpoint FILE is required"},
        {"chat --checkpoint /nonexistent.safetensors%.0s", "cannot open /nonexistent.safetensors"},
        {"chat --checkpoint %s --max-new 0", "--max-new"},
        {"chat --checkpoint %s --temperature -1", "--temperature must be at least 0"},
        {"chat --checkpoint %s --top-p 1.5", "--top-p must be in (0, 1]"},
        {"chat --checkpoint %s --top-k 0", "--top-k"},
        {"chat --checkpoint %s --seed abc", "--seed: 'abc' is not an integer"},
        {"chat --checkpoint %s --temprature 1", "did you mean '--temperature'?"},
        {"chat --checkpoint %s --system", "needs a value"},
        {"chat --checkpoint %s --weights int4", "--weights: unknown weight format 'int4'"},
        {"chat --checkpoint %s", "a classifier (a head of 2 classes)"},
        {"chat --checkpoint %s", "a vocabulary of 4 tokens, not GPT-2's 50257"},
        {"chat --checkpoint %s", "encoder.json"}, // the data folder without the vocabulary
    };
    char words[600];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const int last = i + 1 == sizeof cases / sizeof cases[0];
        const size_t n = sizeof cases / sizeof cases[0];
        snprintf(words, sizeof words, cases[i].fmt, i + 3 == n ? classifier : i + 2 == n ? small : gpt2);
        if (last)
            setenv("MYGPT_DATA", dir, 1);
        proc_result r;
        cr_assert_eq(run_words(MYGPT_EXE, words, &r), 0);
        cr_expect_eq(r.status, 2, "mygpt %s: exit %d (%s)", words, r.status, r.err);
        cr_expect_str_empty(r.out, "mygpt %s: %s", words, r.out);
        cr_expect_eq(count_lines(r.err), 1, "mygpt %s: %s", words, r.err);
        cr_expect(strstr(r.err, cases[i].msg) != NULL, "mygpt %s: '%s' lacks '%s'", words, r.err, cases[i].msg);
        proc_result_free(&r);
    }
    unsetenv("MYGPT_DATA");
    unlink(gpt2);
    unlink(small);
    unlink(classifier);
    rmdir(dir);
}

/* Runs `/bin/sh -c script` (a redirection the test needs: /dev/full, bytes with a NUL) */
static void run_shell(const char *script, proc_result *r)
{
    char *argv[] = {"/bin/sh", "-c", (char *)script, NULL};
    cr_assert_eq(run_process(argv, r), 0);
}

/* Issue 46, item 17: a standard output that takes nothing (/dev/full) stops the chat at
 * its first response, with one line and status 1: the second line's turn, which would
 * say on stderr that the oldest turn was dropped, never comes. */
Test(cli_chat, a_failing_output_stops_the_chat_at_the_first_response, .timeout = 120)
{
    data_file_or_skip("encoder.json");
    char dir[] = "/tmp/mygpt-chat-XXXXXX", ckpt[300], in[300], script[1200];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(ckpt, sizeof ckpt, "%s/m.safetensors", dir);
    snprintf(in, sizeof in, "%s/lines.txt", dir);
    random_model(ckpt, 50257, 64); // one turn and a response fit; two do not
    FILE *f = fopen(in, "wb");
    cr_assert_not_null(f);
    fputs("Name a color.\nSay hello.\nCount to three.\n", f);
    cr_assert_eq(fclose(f), 0);
    proc_result r;
    // into a pipe, the second turn drops the first, saying so
    snprintf(script, sizeof script, "exec '%s' chat --checkpoint '%s' --max-new 6 < '%s'", MYGPT_EXE, ckpt, in);
    run_shell(script, &r);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_eq(count_lines(r.out), 3, "%s", r.out);
    cr_assert(strstr(r.err, "turn 2: ") != NULL, "%s", r.err);
    proc_result_free(&r);
    // onto /dev/full, it stops at the first response
    snprintf(script, sizeof script, "exec '%s' chat --checkpoint '%s' --max-new 6 < '%s' > /dev/full", MYGPT_EXE,
             ckpt, in);
    run_shell(script, &r);
    cr_expect_eq(r.status, 1, "exit %d: %s", r.status, r.err);
    cr_expect_str_eq(r.err, "mygpt chat: error writing output\n");
    proc_result_free(&r);
    unlink(ckpt);
    unlink(in);
    cr_expect_eq(rmdir(dir), 0, "only the files written were left");
}

/* Issue 46, item 18: a NUL byte inside a line is text, as tiktoken encodes it (byte 0 is
 * GPT-2's token 188): the prompt the chat reads is the template around the whole line,
 * encoded with its length; its count is in the crop note (a context of 32 tokens) and the
 * response is generate's on those ids. */
Test(cli_chat, a_nul_byte_in_a_line_is_tokenized_with_the_rest_of_it, .timeout = 120)
{
    const char *data = data_dir_or_skip();
    data_file_or_skip("encoder.json");
    char dir[] = "/tmp/mygpt-chat-XXXXXX", ckpt[300], script[1200];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(ckpt, sizeof ckpt, "%s/m.safetensors", dir);
    random_model(ckpt, 50257, 32);
    static const char line[] = "Say\0 hello to the sea and the long road home.";
    // format_input's template around the line's bytes, then the response's header
    char *head = NULL, prompt[512];
    cr_assert_eq(mygpt_instruct_prompt(&head, "", NULL, NULL), MYGPT_OK);
    size_t len = strlen(head);
    memcpy(prompt, head, len);
    memcpy(prompt + len, line, sizeof line - 1);
    len += sizeof line - 1;
    memcpy(prompt + len, MYGPT_INSTRUCT_RESPONSE, strlen(MYGPT_INSTRUCT_RESPONSE));
    len += strlen(MYGPT_INSTRUCT_RESPONSE);
    free(head);
    mygpt_tokenizer *tok = NULL;
    cr_assert_eq(mygpt_tokenizer_load_dir(&tok, data, NULL), MYGPT_OK);
    int64_t *ids = NULL, *cut = NULL;
    size_t n = 0, n_cut = 0;
    cr_assert_eq(mygpt_encode(tok, prompt, len, &ids, &n, NULL), MYGPT_OK);
    cr_assert_eq(mygpt_encode(tok, prompt, strlen(prompt), &cut, &n_cut, NULL), MYGPT_OK);
    cr_assert_neq(n, n_cut, "the test's line tells nothing");
    mygpt_tokenizer_free(tok);
    char want_note[128], words[8192];
    snprintf(want_note, sizeof want_note, "mygpt chat: the prompt has %zu tokens, more than the model's context: it "
             "reads the last 32\n", n);
    int at = snprintf(words, sizeof words, "generate --checkpoint %s --max-new 6 --no-stream --ids ", ckpt);
    for (size_t i = 0; i < n; i++)
        at += snprintf(words + at, sizeof words - (size_t)at, i ? ",%lld" : "%lld", (long long)ids[i]);
    free(ids);
    free(cut);
    proc_result r, gen;
    cr_assert_eq(run_words(MYGPT_EXE, words, &gen), 0);
    cr_assert_eq(gen.status, 0, "%s", gen.err);
    snprintf(script, sizeof script, "printf 'Say\\0 hello to the sea and the long road home.\\n' | exec '%s' chat "
             "--checkpoint '%s' --max-new 6 --print-ids", MYGPT_EXE, ckpt);
    run_shell(script, &r);
    cr_expect_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cr_expect_str_eq(r.err, want_note);
    // the response's ids (the chat's last line) begin generate's new ones (its first line, after n)
    const char *want = gen.out;
    for (size_t i = 0; i < n && want; i++)
        want = strchr(want, ' ') ? strchr(want, ' ') + 1 : NULL;
    cr_assert_not_null(want, "%s", gen.out);
    const size_t lo = strlen(r.out);
    cr_assert(lo > 1 && r.out[lo - 1] == '\n', "%s", r.out);
    r.out[lo - 1] = '\0';
    const char *got = strrchr(r.out, '\n') ? strrchr(r.out, '\n') + 1 : r.out;
    cr_expect(got[0] && strncmp(want, got, strlen(got)) == 0 && strchr(" \n", want[strlen(got)]),
              "chat's ids '%s', generate's '%s'", got, want);
    proc_result_free(&r);
    proc_result_free(&gen);
    unlink(ckpt);
    cr_expect_eq(rmdir(dir), 0, "only the files written were left");
}

/* The whole path of a program on PATH, or NULL */
static const char *on_path(const char *name)
{
    static char path[4096];
    const char *p = getenv("PATH");
    while (p && *p) {
        const char *colon = strchr(p, ':');
        const int n = colon ? (int)(colon - p) : (int)strlen(p);
        snprintf(path, sizeof path, "%.*s/%s", n, p, name);
        if (access(path, X_OK) == 0)
            return path;
        p = colon ? colon + 1 : NULL;
    }
    return NULL;
}

/* In a terminal (a pty that util-linux's `script` makes), as a person uses it: a "> "
 * prompt, the line typed, the response the pipe gives for it, the prompt again, then
 * Ctrl-D ends it with status 0. */
Test(cli_chat, in_a_terminal_it_prompts_answers_and_ends_at_ctrl_d, .timeout = 120)
{
    data_file_or_skip("encoder.json");
    const char *script = on_path("script");
    if (!script)
        skip_or_fail_missing("util-linux's script is not installed: no terminal to test in");
    char dir[] = "/tmp/mygpt-chat-XXXXXX", ckpt[300], command[600];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(ckpt, sizeof ckpt, "%s/m.safetensors", dir);
    random_model(ckpt, 50257, 96);
    // the response in a pipe, for the same line
    char *pipe_argv[] = {MYGPT_EXE, "chat", "--checkpoint", ckpt, "--max-new", "8", NULL};
    proc_result r;
    cr_assert_eq(run_process_input(pipe_argv, "Name a color.\n", &r), 0);
    cr_assert_eq(r.status, 0, "%s", r.err);
    char want[4096] = "> Name a color.\r\n", *w = want + strlen(want);
    for (const char *c = r.out; *c && w < want + sizeof want - 8; c++) // the terminal's \n is \r\n
        w += *c == '\n' ? sprintf(w, "\r\n") : sprintf(w, "%c", *c);
    strcpy(w, "> ");
    proc_result_free(&r);
    snprintf(command, sizeof command, "%s chat --checkpoint %s --max-new 8", MYGPT_EXE, ckpt);
    char *argv[] = {(char *)script, "-qefc", command, "/dev/null", NULL};
    proc_session s;
    cr_assert_eq(session_start(argv, &s), 0);
    cr_expect(session_wait_for(&s, "> ", 1, 30), "no prompt: '%s'", s.text);
    cr_expect(strstr(s.text, "Ctrl-D ends") != NULL, "no word on how to end: '%s'", s.text);
    session_send(&s, "Name a color.\n");
    cr_expect(session_wait_for(&s, "> ", 2, 30), "no second prompt: '%s'", s.text);
    cr_expect(strstr(s.text, want) != NULL, "'%s' lacks '%s'", s.text, want);
    session_send(&s, "\004"); // Ctrl-D
    const int status = session_end(&s, 30);
    cr_expect_eq(status, 0, "exit %d: '%s'", status, s.text);
    const size_t len = strlen(s.text);
    cr_expect(len >= 4 && strcmp(s.text + len - 4, "> \r\n") == 0, "Ctrl-D did not end the line: '%s'", s.text);
    session_free(&s);
    unlink(ckpt);
    rmdir(dir);
}

/* ---- issue 39: appendix D's schedule and clipping as flags ------------------------- */

/* The learning rates of tests/golden/learn.txt's line that starts with `head` (Python's
 * doubles, from tools/gen_learn_goldens.py): their count, at most max */
static int golden_rates(const char *head, double *rates, int max)
{
    FILE *f = golden_open("learn.txt");
    cr_assert_not_null(f, "tests/golden/learn.txt is missing");
    char *line = NULL;
    size_t cap = 0;
    long lineno = 0;
    int n = -1;
    while (n < 0 && golden_next_line(f, &line, &cap, &lineno) >= 0) {
        if (strncmp(line, head, strlen(head)) != 0)
            continue;
        const char *p = line + strlen(head);
        char *end;
        for (n = 0; n < max; n++, p = end) {
            rates[n] = strtod(p, &end);
            if (end == p)
                break;
        }
    }
    free(line);
    fclose(f);
    cr_assert_geq(n, 1, "learn.txt has no line '%s'", head);
    return n;
}

/* The lr column of a --log CSV (steps 0, 1, ... in order): the count, at most max */
static int log_rates(const char *csv, double *rates, int max)
{
    size_t len = 0;
    char *text = file_bytes(csv, &len);
    cr_assert_not_null(text, "no log %s", csv);
    text = realloc(text, len + 1);
    text[len] = '\0';
    int n = 0;
    for (char *line = strchr(text, '\n'); line && line[1] && n < max; line = strchr(line + 1, '\n')) {
        long step = -1;
        cr_assert_eq(sscanf(line + 1, "%ld,", &step), 1, "%s", line + 1);
        cr_assert_eq(step, n, "the log's rows are not steps 0, 1, ...: %s", text);
        const char *lr = line + 1;
        for (int comma = 0; comma < 3; comma++) // step,train_loss,val_loss,lr,ms
            lr = strchr(lr, ',') + 1;
        rates[n++] = strtod(lr, NULL);
    }
    free(text);
    return n;
}

static void expect_same_rates(const double *got, int n_got, const double *want, int n_want, const char *what)
{
    cr_assert_eq(n_got, n_want, "%s: %d rows for %d steps", what, n_got, n_want);
    for (int i = 0; i < n_want; i++)
        cr_expect(memcmp(&got[i], &want[i], sizeof got[i]) == 0, "%s, step %d: lr %.17g, Python's %.17g", what, i,
                  got[i], want[i]);
}

/* --warmup and --cosine: each step's learning rate in the log's lr column is the one the
 * appendix's train_model computes (tools/gen_learn_goldens.py, in Python), bit for bit,
 * in both loops, with the book's --lr-initial and --lr-min as defaults; the progress line
 * shows it, the plot draws its curve. (The losses of such a run, clipped too, against
 * PyTorch: the_books_training_loop_prints_pytorchs_log.) */
Test(cli_train, the_log_shows_each_steps_learning_rate_as_the_appendix_computes_it, .timeout = 600)
{
    const char *data = data_dir_or_skip();
    data_file_or_skip("the-verdict.txt");
    data_file_or_skip("encoder.json");
    char dir[] = "/tmp/mygpt_sched_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char csv[300], svg[300];
    snprintf(csv, sizeof csv, "%s/s.csv", dir);
    snprintf(svg, sizeof svg, "%s/s.svg", dir);
    double want[64], got[64];
    const int n = golden_rates("lr 0.001 1e-05 1e-05 3 18 1 : ", want, 64);
    cr_assert_eq(n, 18);
    proc_result r;
    const char *model = "--seed 3 --vocab 50257 --embed 8 --heads 2 --layers 1 --max-seq 8 --context 8 ";
    char words[600];
    snprintf(words, sizeof words, "train %s --batch 4 --steps 18 --eval-every 6 --lr 0.001 --warmup 3 --cosine "
             "--text DATA/the-verdict.txt --log DIR/s.csv", model);
    train_run(words, dir, data, NULL, &r);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cr_expect(strstr(r.err, "mygpt train: step 18/18, loss ") && strstr(r.err, ", lr 2.08e-05, "), "%s", r.err);
    proc_result_free(&r);
    expect_same_rates(got, log_rates(csv, got, 64), want, n, "--steps");
    size_t len = 0;
    char *text = file_bytes(svg, &len);
    cr_assert_not_null(text, "no plot");
    text = realloc(text, len + 1);
    text[len] = '\0';
    cr_expect(strstr(text, "the learning rate of each step") && strstr(text, "lr (units of 1e-3)"), "no lr curve");
    free(text);
    if (!TEST_SANITIZED) { // the book's loop: 18 batches of 32 windows in an epoch
        snprintf(words, sizeof words, "train %s --batch 32 --epochs 1 --eval-every 100 --eval-batches 1 --lr 0.001 "
                 "--warmup 3 --cosine --text DATA/the-verdict.txt --log DIR/s.csv", model);
        train_run(words, dir, data, NULL, &r);
        cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
        proc_result_free(&r);
        expect_same_rates(got, log_rates(csv, got, 64), want, n, "--epochs");
    }
    // the book's loop knows its steps once the text is read: a cosine with none left is refused then
    snprintf(words, sizeof words, "train %s --batch 32 --epochs 1 --eval-batches 1 --lr 0.001 --warmup 18 --cosine "
             "--text DATA/the-verdict.txt", model);
    train_run(words, dir, data, NULL, &r);
    cr_expect_eq(r.status, 2, "exit %d: %s", r.status, r.err);
    cr_expect_eq(count_lines(r.err), 1, "%s", r.err);
    cr_expect(strstr(r.err, "--cosine: the cosine decay needs steps after the warmup: 18 steps in all, 18 of warmup "
                            "(give fewer --warmup steps, or more --epochs)") != NULL, "%s", r.err);
    proc_result_free(&r);
    // without a schedule the column is --lr on every row, and the plot has no lr curve
    snprintf(words, sizeof words, "train %s --batch 4 --steps 3 --lr 0.001 --text DATA/the-verdict.txt "
             "--log DIR/s.csv", model);
    train_run(words, dir, data, NULL, &r);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cr_expect(strstr(r.err, ", lr ") == NULL, "%s", r.err);
    proc_result_free(&r);
    const double constant[3] = {0.001, 0.001, 0.001};
    expect_same_rates(got, log_rates(csv, got, 64), constant, 3, "a constant --lr");
    text = file_bytes(svg, &len);
    cr_assert_not_null(text, "no plot");
    text = realloc(text, len + 1);
    text[len] = '\0';
    cr_expect(strstr(text, "the learning rate of each step") == NULL, "an lr curve without a schedule");
    free(text);
    unlink(csv);
    unlink(svg);
    cr_expect_eq(rmdir(dir), 0, "only the files written were left");
}

/* --clip-grad NORM: a norm below the gradient's changes the weights; one far above it
 * changes no bit (clip_grad_norm_ then scales by 1) */
Test(cli_train, clipping_changes_the_weights_only_when_the_gradient_is_longer, .timeout = 600)
{
    const char *data = data_dir_or_skip();
    data_file_or_skip("the-verdict.txt");
    data_file_or_skip("encoder.json");
    char dir[] = "/tmp/mygpt_clip_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    const char *run = "train --seed 3 --vocab 50257 --embed 8 --heads 2 --layers 1 --max-seq 8 --context 8 --batch 4 "
                      "--steps 3 --lr 0.01 --text DATA/the-verdict.txt";
    const char *names[3] = {"plain", "clipped", "huge"}, *flags[3] = {"", "--clip-grad 0.05", "--clip-grad 1e30"};
    char out[3][4096], path[3][300];
    for (int i = 0; i < 3; i++) {
        char words[600];
        proc_result r;
        snprintf(words, sizeof words, "%s %s --save DIR/%s.safetensors", run, flags[i], names[i]);
        train_run(words, dir, data, NULL, &r);
        cr_assert_eq(r.status, 0, "%s: exit %d: %s", names[i], r.status, r.err);
        snprintf(out[i], sizeof out[i], "%s", r.out);
        proc_result_free(&r);
        snprintf(path[i], sizeof path[i], "%s/%s.safetensors", dir, names[i]);
    }
    cr_expect(!same_files(path[0], path[1]), "--clip-grad 0.05 left the weights as they were");
    cr_expect_str_neq(out[0], out[1], "--clip-grad 0.05 left the losses as they were");
    cr_expect(same_files(path[0], path[2]), "--clip-grad 1e30 changed the weights");
    cr_expect_str_eq(out[0], out[2]);
    for (int i = 0; i < 3; i++)
        unlink(path[i]);
    cr_expect_eq(rmdir(dir), 0, "only the files written were left");
}

/* Appendix D's flags refused with one line naming the flag, before anything is read */
Test(cli_train, bad_schedule_and_clipping_flags)
{
    const char *run = "train --preset tiny --text /nonexistent --steps 6";
    const char *bad[][2] = {
        {"--lr-min 1e-4", "--lr-min goes with --cosine"},
        {"--cosine --lr-initial 1e-4", "--lr-initial goes with --warmup"},
        {"--clip-grad 0", "--clip-grad must be more than 0"},
        {"--clip-grad -1", "--clip-grad must be at least 0"},
        {"--clip-grad inf", "--clip-grad: 'inf' is not a finite number"},
        {"--warmup -1", "--warmup"},
        {"--warmup 2 --lr-initial nan", "--lr-initial: 'nan' is not a finite number"},
        {"--cosine --lr-min -1e-5", "--lr-min must be at least 0"},
        {"--warmup 6 --cosine", "--cosine: the cosine decay needs steps after the warmup: 6 steps in all, 6 of warmup "
                                "(give fewer --warmup steps, or more --steps)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char words[300];
        proc_result r;
        snprintf(words, sizeof words, "%s %s", run, bad[i][0]);
        cr_assert_eq(run_words(MYGPT_EXE, words, &r), 0);
        cr_expect_eq(r.status, 2, "%s: exit %d: %s", words, r.status, r.err);
        cr_expect_eq(count_lines(r.err), 1, "%s", r.err);
        cr_expect(strstr(r.err, bad[i][1]) != NULL, "'%s' lacks '%s'", r.err, bad[i][1]);
        proc_result_free(&r);
    }
}

/* ---- issue 39: mygpt finetune -------------------------------------------------------- */

/* DIR/name holding the header and the first `rows` texts of the data folder's file */
static void head_of(const char *dir, const char *name, int rows)
{
    char from[4300], to[4300];
    snprintf(from, sizeof from, "%s/%s", data_dir_or_skip(), name);
    snprintf(to, sizeof to, "%s/%s", dir, name);
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    cr_assert(in && out, "%s or %s", from, to);
    char *line = NULL;
    size_t cap = 0;
    for (int i = 0; i <= rows && getline(&line, &cap, in) > 0; i++)
        fputs(line, out);
    free(line);
    fclose(in);
    cr_assert_eq(fclose(out), 0);
}

/* Runs `mygpt WORDS` (DIR for the test's folder) */
static void finetune_run(const char *words, const char *dir, proc_result *r)
{
    char buf[2048], *at;
    snprintf(buf, sizeof buf, "%s", words);
    while ((at = strstr(buf, "DIR")) != NULL) {
        char rest[2048];
        snprintf(rest, sizeof rest, "%s", at + 3);
        snprintf(at, sizeof buf - (size_t)(at - buf), "%s%s", dir, rest);
    }
    cr_assert_eq(run_words(MYGPT_EXE, buf, r), 0);
}

/* --task classify on 24 training texts: the book's log (an evaluation every 2 steps of 6),
 * the three accuracies and classify_review's two answers; the same bytes on 1 and 2 threads;
 * the saved classifier loads with its head of 2 and, tuned for 0 epochs, gives the same
 * accuracies (the training batches are all of the texts: none dropped) */
Test(cli_finetune, classify_prints_the_books_log_and_saves_the_classifier, .timeout = 600)
{
    data_file_or_skip("sms_spam_train.csv");
    data_file_or_skip("encoder.json");
    char dir[] = "/tmp/mygpt-finetune-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    head_of(dir, "sms_spam_train.csv", 24);
    head_of(dir, "sms_spam_validation.csv", 6);
    head_of(dir, "sms_spam_test.csv", 5);
    const char *run = "finetune --task classify --data DIR --epochs 1 --batch 4 --eval-freq 2 --eval-iter 2";
    char words[600], out[2][8192];
    proc_result r;
    for (int t = 0; t < (TEST_SANITIZED ? 1 : 2); t++) {
        snprintf(words, sizeof words, "%s --threads %d --save DIR/c%d.safetensors", run, t + 1, t);
        finetune_run(words, dir, &r);
        cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
        snprintf(out[t], sizeof out[t], "%s", r.out);
        proc_result_free(&r);
        char *saved = strstr(out[t], "Model saved as ");
        cr_assert(saved != NULL && strchr(saved, '\n') == saved + strlen(saved) - 1, "%s", out[t]);
        *saved = '\0'; // the last line, naming the file
    }
    const char *o = out[0];
    cr_expect(strncmp(o, "Ep 1 (Step 000000): Train loss ", 31) == 0, "%s", o);
    cr_expect(strstr(o, "\nEp 1 (Step 000002): ") && strstr(o, "\nEp 1 (Step 000004): ") &&
                  !strstr(o, "(Step 000006)"), "%s", o);
    cr_expect(strstr(o, "\nTraining accuracy: ") && strstr(o, "% | Validation accuracy: "), "%s", o);
    const char *tail = strstr(o, "\nTraining accuracy: ");
    tail = tail ? strstr(tail + 1, "\nTraining accuracy: ") : NULL;
    cr_assert_not_null(tail, "no final accuracies: %s", o);
    const char *review = strstr(o, "You are a winner you have been specially selected to receive $1000 cash or a $2000 "
                                   "award.\n");
    const char *dinner = strstr(o, "Hey, just wanted to check if we're still on for dinner tonight? Let me know!\n");
    cr_assert(review && dinner, "%s", o);
    for (const char *p = review; p; p = p == review ? dinner : NULL) {
        const char *answer = strchr(p, '\n') + 1;
        cr_expect(strncmp(answer, "spam\n", 5) == 0 || strncmp(answer, "not spam\n", 9) == 0, "%s", answer);
    }
    if (!TEST_SANITIZED)
        cr_expect_str_eq(out[0], out[1], "1 and 2 threads print different numbers");
    char c0[300], c1[300];
    snprintf(c0, sizeof c0, "%s/c0.safetensors", dir);
    snprintf(c1, sizeof c1, "%s/c1.safetensors", dir);
    if (!TEST_SANITIZED)
        cr_expect(same_files(c0, c1), "1 and 2 threads saved different weights");
    mygpt_gpt *g = NULL;
    cr_assert_eq(mygpt_checkpoint_load(&g, c0, NULL), MYGPT_OK);
    cr_expect_eq(g->config.num_classes, 2);
    cr_expect_eq(g->config.embed_dim, 12);
    mygpt_gpt_free(g);
    // the saved classifier, not trained further: the accuracies it ended with
    finetune_run("finetune --task classify --data DIR --epochs 0 --batch 4 --checkpoint DIR/c0.safetensors", dir, &r);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cr_expect_str_eq(r.out, tail + 1, "the saved classifier's accuracies differ from the run's");
    proc_result_free(&r);
    // --save over a file there: refused unless --force
    snprintf(words, sizeof words, "%s --save DIR/c0.safetensors", run);
    finetune_run(words, dir, &r);
    cr_expect_eq(r.status, 2, "exit %d", r.status);
    cr_expect(count_lines(r.err) == 1 && strstr(r.err, "--save:") && strstr(r.err, "--force"), "%s", r.err);
    cr_expect_str_empty(r.out);
    proc_result_free(&r);
    static const char *const names[] = {"c0.safetensors", "c1.safetensors", "sms_spam_train.csv",
                                        "sms_spam_validation.csv", "sms_spam_test.csv"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char p[300];
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        unlink(p);
    }
    cr_expect_eq(rmdir(dir), 0, "only the files written were left");
}

/* --task instruct on the first 4 entries of each part: the book's lines, the responses
 * written as instruction-data-with-response.json (the test entries with model_response),
 * and a saved model that `mygpt chat` talks to */
Test(cli_finetune, instruct_writes_the_responses_and_a_model_chat_reads, .timeout = 600)
{
    char json_path[4200];
    snprintf(json_path, sizeof json_path, "%s", data_file_or_skip("instruction-data.json"));
    data_file_or_skip("encoder.json");
    char dir[] = "/tmp/mygpt-finetune-XXXXXX", model[300], responses[300];
    cr_assert_not_null(mkdtemp(dir));
    proc_result r;
    finetune_run("finetune --task instruct --entries 4 --batch 2 --epochs 1 --eval-freq 1 --eval-iter 1 --max-new 6 "
                 "--save DIR/i.safetensors --responses DIR/r.json",
                 dir, &r);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    const char *o = r.out;
    cr_expect(strncmp(o, "Training set length: 4\nValidation set length: 4\nTest set length: 4\n", 66) == 0, "%s", o);
    cr_expect(strstr(o, "\nInitial losses\n   Training loss: ") && strstr(o, "\nEp 1 (Step 000000): Train loss ") &&
                  strstr(o, "\nEp 1 (Step 000001): ") && !strstr(o, "(Step 000002)") &&
                  strstr(o, "\nGenerating responses\n"), "%s", o);
    proc_result_free(&r);
    // the responses file: the four test entries, each with its model_response
    snprintf(responses, sizeof responses, "%s/r.json", dir);
    snprintf(model, sizeof model, "%s/i.safetensors", dir);
    char *text;
    size_t len;
    cr_assert_eq(mygpt_read_file(responses, &text, &len, NULL), MYGPT_OK);
    mygpt_instruct_data got, all;
    cr_assert_eq(mygpt_instruct_data_parse(&got, responses, text, len, NULL), MYGPT_OK);
    cr_assert_eq(mygpt_instruct_data_read(&all, json_path, NULL), MYGPT_OK);
    size_t n_train, n_test, n_val;
    mygpt_instruct_split(all.n, &n_train, &n_test, &n_val);
    cr_assert_eq(got.n, 4);
    for (size_t i = 0; i < got.n; i++)
        cr_expect_str_eq(got.entry[i].instruction, all.entry[n_train + i].instruction);
    int responses_seen = 0;
    for (const char *p = text; (p = strstr(p, "\"model_response\": \"")) != NULL; p++)
        responses_seen++;
    cr_expect_eq(responses_seen, 4, "%s", text);
    free(text);
    mygpt_instruct_data_free(&got);
    mygpt_instruct_data_free(&all);
    // the saved model talks
    char *argv[] = {MYGPT_EXE, "chat", "--checkpoint", model, "--max-new", "6", NULL};
    cr_assert_eq(run_process_input(argv, "Name a color.\n", &r), 0);
    cr_expect_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cr_expect_eq(count_lines(r.out), 1, "'%s'", r.out);
    proc_result_free(&r);
    // a responses file there is kept
    finetune_run("finetune --task instruct --entries 4 --batch 2 --epochs 1 --responses DIR/r.json", dir, &r);
    cr_expect_eq(r.status, 2);
    cr_expect(count_lines(r.err) == 1 && strstr(r.err, "--responses:") && strstr(r.err, "--force"), "%s", r.err);
    proc_result_free(&r);
    unlink(model);
    unlink(responses);
    cr_expect_eq(rmdir(dir), 0, "only the files written were left");
}

/* Bad flags and files: one line naming them, status 2, nothing on stdout; --help and an
 * unknown flag as every program has them */
Test(cli_finetune, bad_flags_and_files_are_one_line)
{
    check_program(MYGPT_EXE, "finetune ", "finetune");
    data_file_or_skip("encoder.json");
    data_file_or_skip("instruction-data.json");
    const char *bad[][2] = {
        {"finetune", "--task classify|instruct is required"},
        {"finetune --task chat", "--task: 'chat' is not classify or instruct"},
        {"finetune --task classify --mask-instructions", "go with --task instruct"},
        {"finetune --task classify --responses x.json", "go with --task instruct"},
        {"finetune --task instruct --checkpoint x --seed 1", "--preset and --seed draw a fresh model"},
        {"finetune --task instruct --preset big", "--preset: 'big' is not a preset"},
        {"finetune --task instruct --checkpoint /nonexistent/m.safetensors", "--checkpoint: "},
        {"finetune --task classify --data /nonexistent", "/nonexistent/sms_spam_train.csv"},
        {"finetune --task instruct --data /nonexistent.json", "/nonexistent.json"},
        {"finetune --task instruct --entries 4 --batch 2 --max-length 121", "--max-length 121: more than the model's "
                                                                              "context of 120"},
        {"finetune --task instruct --entries 1", "too few for a batch of 8"},
        {"finetune --task classify --lr -1", "--lr"},
        {"finetune --task instruct --epochs x", "--epochs"},
        {"finetune --task instruct --save /nonexistent/dir/m.safetensors", "--save: "},
        // issue 46: a subnormal alpha was taken and written, and the file then refused
        {"finetune --task instruct --lora 4 --lora-alpha 1e-310", "--lora-alpha must be from 1e-30 to 1e+30, got 1e-310"},
        {"finetune --task instruct --lora 4 --lora-alpha 1e300", "--lora-alpha must be from 1e-30 to 1e+30, got 1e300"},
        {"finetune --task instruct --lora 4 --lora-alpha 0", "--lora-alpha must be from 1e-30 to 1e+30, got 0"},
        {"finetune --task instruct --lora 4 --lora-alpha 9.9e-31", "--lora-alpha must be from 1e-30 to 1e+30"},
        {"finetune --task instruct --lora 4 --lora-alpha -2", "--lora-alpha must be from 1e-30 to 1e+30, got -2"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        proc_result r;
        cr_assert_eq(run_words(MYGPT_EXE, bad[i][0], &r), 0);
        cr_expect_eq(r.status, 2, "%s: exit %d: %s", bad[i][0], r.status, r.err);
        cr_expect_eq(count_lines(r.err), 1, "%s: %s", bad[i][0], r.err);
        cr_expect(strstr(r.err, bad[i][1]) != NULL, "%s: '%s' lacks '%s'", bad[i][0], r.err, bad[i][1]);
        cr_expect_str_empty(r.out, "%s", bad[i][0]);
        proc_result_free(&r);
    }
}

/* Issue 46, items 4 and 5: a label the 2-class head cannot take (2, in a record of
 * two lines after one of one) or a file with a header and no text, in any of the three
 * files, is refused before the first step: one line naming the file and the record's
 * line, status 2, nothing printed, no --save written. */
Test(cli_finetune, classify_refuses_a_bad_label_or_an_empty_split_of_any_file_before_training, .timeout = 300)
{
    data_file_or_skip("sms_spam_train.csv");
    data_file_or_skip("encoder.json");
    char dir[] = "/tmp/mygpt-finetune-XXXXXX", path[300], save[300];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(save, sizeof save, "%s/c.safetensors", dir);
    static const char *const files[3] = {"sms_spam_train.csv", "sms_spam_validation.csv", "sms_spam_test.csv"};
    static const int rows[3] = {24, 6, 5};
    static const struct { const char *file, *line, *why; } faults[] = {
        {"Label,Text\n0,fine\n1,\"two\nlines\"\n2,three\n", "line 5", "label 2 is outside the classifier's 2 "
                                                                    "classes [0, 2)"},
        {"Label,Text\n", "line 1", "a header and no text after it"},
    };
    for (int split = 0; split < 3; split++)
        for (size_t k = 0; k < sizeof faults / sizeof faults[0]; k++) {
            for (int s = 0; s < 3; s++)
                head_of(dir, files[s], rows[s]);
            snprintf(path, sizeof path, "%s/%s", dir, files[split]);
            FILE *f = fopen(path, "wb");
            cr_assert_not_null(f);
            fputs(faults[k].file, f);
            cr_assert_eq(fclose(f), 0);
            proc_result r;
            finetune_run("finetune --task classify --data DIR --epochs 1 --batch 4 --eval-freq 2 --eval-iter 2 "
                         "--save DIR/c.safetensors", dir, &r);
            char want[600];
            snprintf(want, sizeof want, "mygpt finetune: %s %s: %s", path, faults[k].line, faults[k].why);
            cr_expect_eq(r.status, 2, "%s: exit %d: %s", path, r.status, r.err);
            cr_expect(count_lines(r.err) == 1 && strncmp(r.err, want, strlen(want)) == 0, "'%s' is not '%s...'",
                      r.err, want);
            cr_expect_str_empty(r.out, "%s", r.out);
            cr_expect_neq(access(save, F_OK), 0, "%s: the classifier was saved", path);
            unlink(save);
            proc_result_free(&r);
        }
    for (int s = 0; s < 3; s++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[s]);
        unlink(path);
    }
    cr_expect_eq(rmdir(dir), 0, "only the files written were left");
}

/* Issue 46, item 15: an entry holding <|endoftext|> (tokenizer.encode refuses it) in the
 * validation or the test part is refused before training, naming the file and the entry's
 * index in it (0-based, as the reader's other errors), not its index in its part. */
Test(cli_finetune, instruct_names_the_file_and_the_entry_that_holds_endoftext, .timeout = 300)
{
    data_file_or_skip("encoder.json");
    char dir[] = "/tmp/mygpt-finetune-XXXXXX", path[300];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/data.json", dir);
    // 20 entries: training 0-16, test 17-18, validation 19
    static const size_t bad[] = {19, 18};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        FILE *f = fopen(path, "wb");
        cr_assert_not_null(f);
        fputs("[", f);
        for (size_t e = 0; e < 20; e++)
            fprintf(f, "%s{\"instruction\": \"Say %zu.\", \"input\": \"\", \"output\": \"%zu%s\"}", e ? ", " : "",
                    e, e, e == bad[k] ? " <|endoftext|>" : "");
        fputs("]", f);
        cr_assert_eq(fclose(f), 0);
        proc_result r;
        finetune_run("finetune --task instruct --data DIR/data.json --batch 2 --epochs 1 --max-new 2", dir, &r);
        char want[600];
        snprintf(want, sizeof want, "mygpt finetune: %s: entry %zu holds <|endoftext|>, which tokenizer.encode "
                 "refuses\n", path, bad[k]);
        cr_expect_eq(r.status, 2, "exit %d: %s", r.status, r.err);
        cr_expect_str_eq(r.err, want);
        cr_expect_str_empty(r.out, "%s", r.out);
        proc_result_free(&r);
    }
    unlink(path);
    cr_expect_eq(rmdir(dir), 0, "only the files written were left");
}

/* Issue 46, items 1 and 2: finetune's --save and --responses are never one file, nor a
 * file --checkpoint (a folder's model.safetensors, its config.json) or --data reads,
 * however spelt (same.bin and ./same.bin), --force or not: refused before the model is
 * read, one line naming both flags, status 2, every file as it was */
Test(cli_finetune, no_file_written_replaces_one_read_or_another_written, .timeout = 120)
{
    const char *data = data_dir_or_skip();
    data_file_or_skip("encoder.json");
    data_file_or_skip("instruction-data.json");
    char dir[] = "/tmp/mygpt-finetune-XXXXXX", path[300];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/hf", dir);
    cr_assert_eq(mkdir(path, 0700), 0);
    snprintf(path, sizeof path, "%s/sub", dir);
    cr_assert_eq(mkdir(path, 0700), 0);
    snprintf(path, sizeof path, "%s/hf/model.safetensors", dir);
    const mygpt_config cfg = {50257, 12, 2, 1, 120};
    mygpt_gpt *g;
    cr_assert_eq(mygpt_gpt_create(&g, &cfg, 1, NULL), MYGPT_OK);
    cr_assert_eq(mygpt_checkpoint_save(g, path, NULL), MYGPT_OK);
    mygpt_gpt_free(g);
    static const char *const keep[] = {"hf/model.safetensors", "data.json", "sms_spam_test.csv", "hf/config.json"};
    static const char *const text[] = {NULL, "[]\n", "Label,Text\nham,Hello\n", "{}\n"};
    for (size_t k = 1; k < 4; k++) {
        snprintf(path, sizeof path, "%s/%s", dir, keep[k]);
        FILE *f = fopen(path, "w");
        cr_assert_not_null(f);
        fputs(text[k], f);
        cr_assert_eq(fclose(f), 0);
    }
    cr_assert_eq(chdir(dir), 0);
#define TUNE_SHORT "finetune --task instruct --entries 10 --epochs 0 --max-new 1 "
    static const refused_run runs[] = {
        {TUNE_SHORT "--save same.bin --responses ./same.bin", "--save", "--responses"},
        {TUNE_SHORT "--checkpoint hf --save hf/model.safetensors --force", "--save", "--checkpoint"},
        {TUNE_SHORT "--checkpoint hf/model.safetensors --responses ./hf/model.safetensors --force", "--responses",
         "--checkpoint"},
        {TUNE_SHORT "--data data.json --responses sub/../data.json --force", "--responses", "--data"},
        {"finetune --task classify --epochs 0 --data . --save ./sms_spam_test.csv --force", "--save", "--data"},
        {TUNE_SHORT "--checkpoint hf --responses sub/../hf/config.json --force", "--responses", "--checkpoint"},
    };
    expect_refused_untouched(runs, sizeof runs / sizeof runs[0], dir, data, keep, 4);
    for (size_t k = 0; k < 4; k++)
        unlink(keep[k]);
    rmdir("hf");
    rmdir("sub");
    cr_expect_eq(rmdir(dir), 0, "only the files written were left");
}

/* Issue 46, item 3: a fine-tuning whose first step makes a weight non-finite (lr 1e300)
 * stops there with one line naming the step, status 1, and --save is not written; the
 * classifier's loop checked no loss and saved a NaN classifier with status 0 */
Test(cli_finetune, a_step_that_diverges_stops_both_tasks_and_saves_nothing, .timeout = 300)
{
    data_file_or_skip("sms_spam_train.csv");
    data_file_or_skip("instruction-data.json");
    data_file_or_skip("encoder.json");
    char dir[] = "/tmp/mygpt-diverge-XXXXXX", saved[300];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(saved, sizeof saved, "%s/m.safetensors", dir);
    static const char *const runs[] = {
        "finetune --task classify --epochs 1 --lr 1e300 --save DIR/m.safetensors",
        "finetune --task instruct --entries 10 --epochs 1 --max-new 1 --lr 1e300 --save DIR/m.safetensors",
    };
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        proc_result r;
        finetune_run(runs[i], dir, &r);
        cr_expect_eq(r.status, 1, "%s: exit %d: %s", runs[i], r.status, r.err);
        cr_expect_eq(count_lines(r.err), 1, "%s: %s", runs[i], r.err);
        cr_expect(strstr(r.err, "mygpt finetune: step 0: the training diverged (") != NULL, "%s: %s", runs[i], r.err);
        cr_expect(strstr(r.out, "Ep 1") == NULL, "%s: a diverged step evaluated: %s", runs[i], r.out);
        cr_expect(access(saved, F_OK) != 0, "%s: the model was saved", runs[i]);
        proc_result_free(&r);
    }
    cr_expect_eq(rmdir(dir), 0, "only the files written were left");
}

/* A classifier step that leaves its weights finite but huge (lr 1e35) computes NaN losses:
 * the evaluation after it stops the run (status 1, its line printed, then one line naming
 * the step), and --save is not written */
Test(cli_finetune, a_classifier_whose_evaluation_is_nan_is_not_saved, .timeout = 300)
{
    data_file_or_skip("sms_spam_train.csv");
    data_file_or_skip("encoder.json");
    char dir[] = "/tmp/mygpt-diverge-XXXXXX", path[300];
    cr_assert_not_null(mkdtemp(dir));
    static const char *const files[3] = {"sms_spam_train.csv", "sms_spam_validation.csv", "sms_spam_test.csv"};
    for (int s = 0; s < 3; s++)
        head_of(dir, files[s], 4);
    proc_result r;
    finetune_run("finetune --task classify --data DIR --epochs 1 --batch 4 --eval-freq 1 --eval-iter 1 --lr 1e35 "
                 "--save DIR/c.safetensors", dir, &r);
    cr_expect_eq(r.status, 1, "exit %d: %s", r.status, r.err);
    cr_expect(count_lines(r.err) == 1 && strstr(r.err, "mygpt finetune: step 0: the training diverged (the training "
                                                       "loss holds nan after the step's update)"), "%s", r.err);
    cr_expect(strstr(r.out, "Ep 1 (Step 000000): Train loss nan, Val loss nan") != NULL, "%s", r.out);
    snprintf(path, sizeof path, "%s/c.safetensors", dir);
    cr_expect(access(path, F_OK) != 0, "the classifier was saved");
    proc_result_free(&r);
    for (int s = 0; s < 3; s++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[s]);
        unlink(path);
    }
    cr_expect_eq(rmdir(dir), 0, "only the files written were left");
}

/* --checkpoint: a Hugging Face GPT-2 folder (model.safetensors and config.json, a small
 * gpt2 drawn here with GPT-2's vocabulary) tuned on both tasks. The classifier keeps the
 * folder's frozen embeddings bit for bit, its head of 2 new; a context shorter than the
 * padded texts is refused, naming --max-length; the golden's GPT-2 of 60 tokens is
 * refused, naming the file. */
Test(cli_finetune, both_tasks_start_from_a_hugging_face_folder, .timeout = 600)
{
    data_file_or_skip("sms_spam_train.csv");
    data_file_or_skip("instruction-data.json");
    data_file_or_skip("encoder.json");
    char dir[] = "/tmp/mygpt-finetune-XXXXXX", path[300];
    cr_assert_not_null(mkdtemp(dir));
    static const char *const subdirs[] = {"hf", "c", "i", "small"};
    for (size_t i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, subdirs[i]);
        cr_assert_eq(mkdir(path, 0700), 0);
    }
    head_of(dir, "sms_spam_train.csv", 24);
    head_of(dir, "sms_spam_validation.csv", 6);
    head_of(dir, "sms_spam_test.csv", 5);
    const mygpt_config cfg = {.vocab_size = 50257, .embed_dim = 16, .num_heads = 2, .num_layers = 1,
                              .max_seq_len = 32, .arch = MYGPT_ARCH_GPT2};
    mygpt_gpt *lm = NULL, *c = NULL;
    cr_assert_eq(mygpt_gpt_create(&lm, &cfg, 5, NULL), MYGPT_OK);
    snprintf(path, sizeof path, "%s/hf/model.safetensors", dir);
    cr_assert_eq(mygpt_checkpoint_save(lm, path, NULL), MYGPT_OK);
    proc_result r;
    finetune_run("finetune --task classify --data DIR --checkpoint DIR/hf --epochs 1 --batch 4", dir, &r);
    cr_expect_eq(r.status, 2);
    cr_expect(count_lines(r.err) == 1 && strstr(r.err, "context of 32: give --max-length 32 or less"), "%s", r.err);
    proc_result_free(&r);
    finetune_run("finetune --task classify --data DIR --checkpoint DIR/hf --epochs 1 --batch 4 --max-length 24 "
                 "--save DIR/c/model.safetensors", dir, &r);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cr_expect(strstr(r.out, "\nTest accuracy: ") != NULL, "%s", r.out);
    proc_result_free(&r);
    snprintf(path, sizeof path, "%s/c/model.safetensors", dir);
    cr_assert_eq(mygpt_checkpoint_load(&c, path, NULL), MYGPT_OK);
    cr_expect_eq(c->config.num_classes, 2);
    cr_expect_eq(c->config.arch, MYGPT_ARCH_GPT2);
    cr_expect(memcmp(c->params.wte, lm->params.wte, lm->param_sizes[MYGPT_PARAM_wte] * sizeof(float)) == 0 &&
                  memcmp(c->params.wpe, lm->params.wpe, lm->param_sizes[MYGPT_PARAM_wpe] * sizeof(float)) == 0,
              "the frozen embeddings changed");
    cr_expect(memcmp(c->params.fc2w, lm->params.fc2w, lm->param_sizes[MYGPT_PARAM_fc2w] * sizeof(float)) != 0,
              "the last block did not train");
    mygpt_gpt_free(c);
    mygpt_gpt_free(lm);
    // instruct: the folder's language model, its context (32) the batches' limit
    finetune_run("finetune --task instruct --checkpoint DIR/hf --entries 4 --batch 2 --epochs 1 --max-new 4 "
                 "--save DIR/i/model.safetensors", dir, &r);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cr_expect(strstr(r.out, "\nLoaded model: ") && strstr(r.out, "\nGenerating responses\n"), "%s", r.out);
    proc_result_free(&r);
    // the instruct task refuses the classifier; the golden's GPT-2 of 60 tokens is refused
    finetune_run("finetune --task instruct --checkpoint DIR/c --entries 4 --batch 2", dir, &r);
    cr_expect_eq(r.status, 2);
    cr_expect(count_lines(r.err) == 1 && strstr(r.err, "a classifier"), "%s", r.err);
    proc_result_free(&r);
    char golden[4300], link[300];
    snprintf(golden, sizeof golden, "%s/gpt2_hf.safetensors", golden_dir());
    snprintf(link, sizeof link, "%s/small/model.safetensors", dir);
    cr_assert_eq(symlink(golden, link), 0);
    snprintf(golden, sizeof golden, "%s/config.json", golden_dir());
    snprintf(path, sizeof path, "%s/small/config.json", dir);
    cr_assert_eq(symlink(golden, path), 0);
    finetune_run("finetune --task classify --data DIR --checkpoint DIR/small", dir, &r);
    cr_expect_eq(r.status, 2);
    cr_expect(count_lines(r.err) == 1 && strstr(r.err, "small/model.safetensors has a vocabulary of 60 tokens, not GPT-2's 50257"),
              "%s", r.err);
    proc_result_free(&r);
    static const char *const files[] = {"hf/model.safetensors", "hf/config.json", "c/model.safetensors",
                                        "c/config.json", "i/model.safetensors", "i/config.json",
                                        "small/model.safetensors", "small/config.json", "sms_spam_train.csv",
                                        "sms_spam_validation.csv", "sms_spam_test.csv"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        unlink(path);
    }
    for (size_t i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, subdirs[i]);
        cr_expect_eq(rmdir(path), 0, "%s: only the files written were left", path);
    }
    cr_expect_eq(rmdir(dir), 0, "only the files written were left");
}

/* Chapters 81 and 86 --gpt2 DIR: the book's own run on a Hugging Face GPT-2 folder. There
 * are no GPT-2 weights here: what is held is that the folder is read and a model that is
 * not GPT-2's vocabulary (the golden's small GPT-2) or no folder is one line, status 2,
 * before anything is printed. */
Test(cli_finetune, chapters_81_and_86_read_a_gpt2_folder_or_say_why_not)
{
    data_file_or_skip("sms_spam_train.csv");
    data_file_or_skip("instruction-data.json");
    data_file_or_skip("encoder.json");
    char dir[] = "/tmp/mygpt-finetune-XXXXXX", golden[4300], link[300], words[600];
    cr_assert_not_null(mkdtemp(dir));
    static const char *const names[2][2] = {{"gpt2_hf.safetensors", "model.safetensors"},
                                            {"config.json", "config.json"}};
    for (int i = 0; i < 2; i++) {
        snprintf(golden, sizeof golden, "%s/%s", golden_dir(), names[i][0]);
        snprintf(link, sizeof link, "%s/%s", dir, names[i][1]);
        cr_assert_eq(symlink(golden, link), 0);
    }
    static const char *const programs[2] = {"81_book_classifier", "86_book_instruction_finetune"};
    for (int p = 0; p < 2; p++) {
        char exe[4300];
        proc_result r;
        snprintf(exe, sizeof exe, "%s/%s", CHAPTER_DIR, programs[p]);
        snprintf(words, sizeof words, "--gpt2 %s --smoke", dir);
        cr_assert_eq(run_words(exe, words, &r), 0);
        cr_expect_eq(r.status, 2, "%s: exit %d: %s", programs[p], r.status, r.err);
        cr_expect(count_lines(r.err) == 1 && strstr(r.err, "model.safetensors has a vocabulary of 60 tokens, not "
                                                           "GPT-2's 50257"), "%s: %s", programs[p], r.err);
        cr_expect_str_empty(r.out, "%s", programs[p]);
        proc_result_free(&r);
        cr_assert_eq(run_words(exe, "--gpt2 /nonexistent-gpt2 --smoke", &r), 0);
        cr_expect_eq(r.status, 2, "%s: exit %d: %s", programs[p], r.status, r.err);
        cr_expect(count_lines(r.err) == 1 && strstr(r.err, "/nonexistent-gpt2"), "%s: %s", programs[p], r.err);
        cr_expect_str_empty(r.out, "%s", programs[p]);
        proc_result_free(&r);
        cr_assert_eq(run_words(exe, "--help", &r), 0);
        cr_expect(r.status == 0 && strstr(r.out, "[--gpt2 DIR]") && strstr(r.out, "a Hugging Face GPT-2 folder"),
                  "%s: %s", programs[p], r.out);
        proc_result_free(&r);
    }
    for (int i = 0; i < 2; i++) {
        snprintf(link, sizeof link, "%s/%s", dir, names[i][1]);
        unlink(link);
    }
    cr_expect_eq(rmdir(dir), 0, "only the files written were left");
}

/* --mask-instructions (the book's exercise 7.2) reaches the loaders: the prompt's tokens
 * leave the targets, so the initial losses change; --epochs 0 trains nothing */
Test(cli_finetune, masking_the_instructions_changes_the_losses)
{
    data_file_or_skip("instruction-data.json");
    data_file_or_skip("encoder.json");
    const char *run = "finetune --task instruct --entries 4 --batch 2 --epochs 0 --max-new 1";
    char words[300], losses[2][512];
    for (int m = 0; m < 2; m++) {
        proc_result r;
        snprintf(words, sizeof words, "%s%s", run, m ? " --mask-instructions" : "");
        cr_assert_eq(run_words(MYGPT_EXE, words, &r), 0);
        cr_assert_eq(r.status, 0, "%s: exit %d: %s", words, r.status, r.err);
        const char *from = strstr(r.out, "Initial losses\n"), *to = from ? strstr(from, "\nGenerating") : NULL;
        cr_assert(from && to && !strstr(r.out, "Ep 1"), "%s", r.out);
        snprintf(losses[m], sizeof losses[m], "%.*s", (int)(to - from), from);
        proc_result_free(&r);
    }
    cr_expect_str_neq(losses[0], losses[1], "--mask-instructions left the losses as they were");
}

/* ---- issue 39: LoRA (the book's appendix E) ------------------------------------------ */

/* In dir: BASE with --adapters ad.safetensors, and `mygpt merge BASE ad.safetensors
 * merged.safetensors` (rank 4, alpha 8), generate the same greedy tokens, other than
 * BASE's own */
static void adapters_and_their_merge_generate_alike(const char *dir, const char *base)
{
    char with[2][4096], words[1200];
    proc_result r;
    for (int k = 0; k < 2; k++) { // the adapters on their model, then merged into it
        if (k) {
            snprintf(words, sizeof words, "merge DIR/%s DIR/ad.safetensors DIR/merged.safetensors", base);
            finetune_run(words, dir, &r);
            cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
            cr_expect(strstr(r.out, "(rank 4, alpha 8) merged into its weights") != NULL, "%s", r.out);
            proc_result_free(&r);
        }
        snprintf(words, sizeof words, "generate --checkpoint DIR/%s%s --ids 1,2,3 --max-new 8 --no-stream",
                 k ? "merged.safetensors" : base, k ? "" : " --adapters DIR/ad.safetensors");
        finetune_run(words, dir, &r);
        cr_assert_eq(r.status, 0, "%s: exit %d: %s", words, r.status, r.err);
        snprintf(with[k], sizeof with[k], "%s", r.out);
        proc_result_free(&r);
    }
    cr_expect_str_eq(with[1], with[0], "the merged model generates other tokens than its adapters");
    snprintf(words, sizeof words, "generate --checkpoint DIR/%s --ids 1,2,3 --max-new 8 --no-stream", base);
    finetune_run(words, dir, &r);
    cr_expect(strcmp(r.out, with[0]) != 0, "the trained adapters change no token: the test proves nothing");
    proc_result_free(&r);
}

/* Exercise 7.4 on a GPT-2 checkpoint: its tied head is untied as the book's GPTModel holds
 * it (out_head, a copy of wte), so the head is wrapped and counted as the exercise counts
 * it; the adapters load onto the GPT-2 file (untying it again) and merge into it */
Test(cli_lora, a_gpt2_checkpoint_is_untied_as_the_books_gptmodel, .timeout = 600)
{
    data_file_or_skip("instruction-data.json");
    data_file_or_skip("encoder.json");
    char dir[] = "/tmp/mygpt-untie-XXXXXX", base[300];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(base, sizeof base, "%s/gpt2.safetensors", dir);
    const mygpt_config cfg = {.vocab_size = 50257, .embed_dim = 12, .num_heads = 2, .num_layers = 1,
                              .max_seq_len = 120, .arch = MYGPT_ARCH_GPT2, .qkv_bias = 1};
    mygpt_gpt *g;
    cr_assert_eq(mygpt_gpt_create(&g, &cfg, 123, NULL), MYGPT_OK);
    cr_assert_eq(mygpt_checkpoint_save(g, base, NULL), MYGPT_OK);
    const size_t tied = g->num_parameters;
    mygpt_gpt_free(g);
    proc_result r;
    finetune_run("finetune --task instruct --checkpoint DIR/gpt2.safetensors --lora 4 --lora-alpha 8 --entries 4 "
                 "--batch 2 --epochs 1 --eval-freq 1 --eval-iter 1 --max-new 6 --lr 1e-1 --save DIR/ad.safetensors",
                 dir, &r);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    char want[160]; // out_head's 50257 x 12 counted beside the tied model's; its adapter 12 x 4 + 4 x 50257
    snprintf(want, sizeof want, "\nTotal trainable parameters before: %zu,%03zu,%03zu\n", (tied + 50257 * 12) / 1000000,
             (tied + 50257 * 12) / 1000 % 1000, (tied + 50257 * 12) % 1000);
    cr_expect(strstr(r.out, want) && strstr(r.out, "\nTotal trainable LoRA parameters: 201,940\n"), "%s\nwanted %s",
              r.out, want);
    proc_result_free(&r);
    adapters_and_their_merge_generate_alike(dir, "gpt2.safetensors");
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
}

/* finetune --lora trains adapters alone and saves them; chat and generate read them with
 * --adapters, and mygpt merge folds them into a checkpoint that generates the same tokens;
 * the misuses are one line and status 2 */
Test(cli_lora, finetune_saves_adapters_that_chat_generate_and_merge_read, .timeout = 600)
{
    data_file_or_skip("instruction-data.json");
    data_file_or_skip("encoder.json");
    char dir[] = "/tmp/mygpt-lora-XXXXXX", base[300], other[300], same[300];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(base, sizeof base, "%s/base.safetensors", dir);
    snprintf(other, sizeof other, "%s/other.safetensors", dir);
    snprintf(same, sizeof same, "%s/same.safetensors", dir);
    // the book's --test_mode GPTModel as a file, and one of another width
    mygpt_config cfg = {.vocab_size = 50257, .embed_dim = 12, .num_heads = 2, .num_layers = 1,
                        .max_seq_len = 120, .arch = MYGPT_ARCH_LLMS_FROM_SCRATCH};
    mygpt_gpt *g;
    cr_assert_eq(mygpt_gpt_create(&g, &cfg, 123, NULL), MYGPT_OK);
    cr_assert_eq(mygpt_checkpoint_save(g, base, NULL), MYGPT_OK);
    mygpt_gpt_free(g);
    cr_assert_eq(mygpt_gpt_create(&g, &cfg, 7, NULL), MYGPT_OK); // the same shape, other weights
    cr_assert_eq(mygpt_checkpoint_save(g, same, NULL), MYGPT_OK);
    mygpt_gpt_free(g);
    cfg.embed_dim = 16;
    cr_assert_eq(mygpt_gpt_create(&g, &cfg, 1, NULL), MYGPT_OK);
    cr_assert_eq(mygpt_checkpoint_save(g, other, NULL), MYGPT_OK);
    mygpt_gpt_free(g);
    proc_result r;
    finetune_run("finetune --task instruct --checkpoint DIR/base.safetensors --lora 4 --lora-alpha 8 --entries 4 "
                 "--batch 2 --epochs 1 --eval-freq 1 --eval-iter 1 --max-new 6 --lr 1e-2 --save DIR/ad.safetensors",
                 dir, &r);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    // 12 x 4 + 4 x 12 for each of W_query, W_key, W_value, out_proj; 12 x 4 + 4 x 48 and 48 x 4 + 4 x 12
    // for the feed-forward; 12 x 4 + 4 x 50257 for out_head
    cr_expect(strstr(r.out, "\nTotal trainable parameters after: 0\nTotal trainable LoRA parameters: 201,940\n") &&
                  strstr(r.out, "\nLoRA adapters saved as "), "%s", r.out);
    proc_result_free(&r);
    adapters_and_their_merge_generate_alike(dir, "base.safetensors");
    char model[300], adapters[300];
    snprintf(model, sizeof model, "%s/base.safetensors", dir);
    snprintf(adapters, sizeof adapters, "%s/ad.safetensors", dir);
    char *argv[] = {MYGPT_EXE, "chat", "--checkpoint", model, "--adapters", adapters, "--max-new", "6", NULL};
    cr_assert_eq(run_process_input(argv, "Name a color.\n", &r), 0);
    cr_expect_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cr_expect_eq(count_lines(r.out), 1, "'%s'", r.out);
    proc_result_free(&r);
    static const char *const bad[][2] = {
        {"finetune --task classify --lora-alpha 8", "--lora-alpha goes with --lora"},
        {"finetune --task classify --lora 0", "--lora"},
        {"finetune --task instruct --lora 4 --save DIR/x.safetensors", "need their model as a file"},
        {"merge DIR/base.safetensors DIR/ad.safetensors DIR/merged.safetensors", "is there already"},
        {"merge DIR/base.safetensors DIR/ad.safetensors DIR/base.safetensors --force", "is the file BASE reads"},
        {"merge DIR/base.safetensors DIR/base.safetensors DIR/y.safetensors", "not a file of LoRA adapters"},
        {"merge DIR/other.safetensors DIR/ad.safetensors DIR/y.safetensors", "adapters are for another model"},
        {"generate --adapters DIR/ad.safetensors --ids 1,2 --max-new 1 --seed 1 --vocab 300 --embed 8 --heads 2 "
         "--layers 1", "needs --checkpoint"},
        {"generate --checkpoint DIR/base.safetensors --adapters DIR/ad.safetensors --ids 1,2 --max-new 1 "
         "--weights int8", "merge them"},
        {"generate --checkpoint DIR/ad.safetensors --ids 1,2 --max-new 1", "LoRA adapters only"},
        // issue 46: onto a model of the same shape, or the model they are merged into
        {"merge DIR/same.safetensors DIR/ad.safetensors DIR/y.safetensors",
         "ad.safetensors: the adapters were trained on another base model (checksum "},
        {"generate --checkpoint DIR/same.safetensors --adapters DIR/ad.safetensors --ids 1,2 --max-new 1",
         "the adapters were trained on another base model"},
        {"chat --checkpoint DIR/same.safetensors --adapters DIR/ad.safetensors", "trained on another base model"},
        {"merge DIR/merged.safetensors DIR/ad.safetensors DIR/y.safetensors",
         "ad.safetensors: the adapters are already merged into this model"},
        {"generate --checkpoint DIR/merged.safetensors --adapters DIR/ad.safetensors --ids 1,2 --max-new 1",
         "already merged"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        finetune_run(bad[i][0], dir, &r);
        cr_expect_eq(r.status, 2, "%s: exit %d: %s", bad[i][0], r.status, r.err);
        cr_expect_eq(count_lines(r.err), 1, "%s: %s", bad[i][0], r.err);
        cr_expect(strstr(r.err, bad[i][1]) != NULL, "%s: '%s' lacks '%s'", bad[i][0], r.err, bad[i][1]);
        cr_expect_str_empty(r.out, "%s", bad[i][0]);
        proc_result_free(&r);
    }
    // the counts the book's appendix E prints for GPT-2 small with its 2-class head, without building it
    finetune_run("params --vocab 50257 --embed 768 --heads 12 --layers 12 --max-seq 1024 --arch llms-from-scratch "
                 "--qkv-bias --classes 2 --lora 16", dir, &r);
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "\nLoRA adapters       (rank 16):     2666528\nTotal parameters:                  127107874\n"),
              "124,441,346 + 2,666,528: %s", r.out);
    proc_result_free(&r);
    static const char *const names[] = {"base.safetensors", "other.safetensors", "same.safetensors", "ad.safetensors",
                                        "merged.safetensors"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char p[300];
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        unlink(p);
    }
    cr_expect_eq(rmdir(dir), 0, "only the files written were left");
}

/* Issue 46, item 7: adapters of finite values (3e38) whose merge overflows float32: merge
 * and --adapters refuse them with one line, and merge writes nothing */
Test(cli_lora, adapters_whose_merge_is_not_finite_are_refused, .timeout = 60)
{
    char dir[] = "/tmp/mygpt-lora-huge-XXXXXX", base[300], ad[300], out[300];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(base, sizeof base, "%s/base.safetensors", dir);
    snprintf(ad, sizeof ad, "%s/ad.safetensors", dir);
    snprintf(out, sizeof out, "%s/out.safetensors", dir);
    const mygpt_config cfg = {.vocab_size = 50, .embed_dim = 8, .num_heads = 2, .num_layers = 1, .max_seq_len = 16,
                              .arch = MYGPT_ARCH_LLMS_FROM_SCRATCH};
    mygpt_gpt *g;
    mygpt_rng rng = {0};
    mygpt_rng_seed(&rng, 1);
    cr_assert_eq(mygpt_gpt_create(&g, &cfg, 3, NULL), MYGPT_OK);
    cr_assert_eq(mygpt_checkpoint_save(g, base, NULL), MYGPT_OK);
    cr_assert_eq(mygpt_lora_add(g, 2, 2.0, &rng, NULL), MYGPT_OK);
    for (int j = 0; j < mygpt_state_dict_len(&g->config); j++) {
        mygpt_state_entry e;
        mygpt_state_dict_entry(&g->config, &g->params, j, &e);
        for (size_t k = 0; strstr(e.name, ".lora.") && k < e.numel; k++)
            e.data[k] = 3e38f;
    }
    cr_assert_eq(mygpt_checkpoint_save_adapters(g, ad, NULL), MYGPT_OK, "finite adapters are saved");
    mygpt_gpt_free(g);
    static const char *const runs[] = {"merge DIR/base.safetensors DIR/ad.safetensors DIR/out.safetensors",
                                       "generate --checkpoint DIR/base.safetensors --adapters DIR/ad.safetensors "
                                       "--ids 1,2 --max-new 1"};
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        proc_result r;
        finetune_run(runs[i], dir, &r);
        cr_expect_eq(r.status, 2, "%s: exit %d: %s", runs[i], r.status, r.err);
        cr_expect_eq(count_lines(r.err), 1, "%s: %s", runs[i], r.err);
        cr_expect(strstr(r.err, "ad.safetensors: merged, the adapters make ") && strstr(r.err, "overflows float32"),
                  "%s: %s", runs[i], r.err);
        cr_expect_str_empty(r.out, "%s: %s", runs[i], r.out);
        proc_result_free(&r);
    }
    cr_expect(access(out, F_OK) != 0, "merge wrote the overflowed model");
    unlink(base);
    unlink(ad);
    cr_expect_eq(rmdir(dir), 0, "only the files written were left");
}
