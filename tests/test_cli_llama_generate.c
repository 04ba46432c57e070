/*
 * test_cli_llama_generate.c - `mygpt generate --sampler llama2c` on llama2.c's stories260K
 * prints what llama2.c's run.c prints (tests/golden/llama2c/run.txt, from
 * tools/reference_llama2c.py: the two published outputs first, then other temperatures,
 * top-p, seeds, steps and prompts), and its refusals.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_common.h"
#include "data.h"
#include "golden.h"

/* run.txt's escapes (\n, \t, \\) undone in place */
static void unescape(char *s)
{
    char *w = s;
    for (const char *r = s; *r; r++) {
        if (*r == '\\' && r[1]) {
            r++;
            *w++ = *r == 'n' ? '\n' : *r == 't' ? '\t' : *r;
        } else {
            *w++ = *r;
        }
    }
    *w = '\0';
}

Test(cli_llama_generate, every_run_prints_run_cs_stdout, .timeout = 300)
{
    char model[4200], tok[4200];
    snprintf(model, sizeof model, "%s", llama_file_or_skip("stories260K.bin"));
    snprintf(tok, sizeof tok, "%s", llama_file_or_skip("tok512.bin"));
    golden_reader g = golden_reader_must_open("llama2c/run.txt");
    static const char *const FLAGS[] = {"--temperature", "--top-p", "--sample-seed", "--steps", "--prompt"};
    int cases = 0;
    for (char *line; (line = golden_read(&g));) {
        char *f[6];
        cr_assert_eq(golden_split(line, '\t', f, 6), 6, "run.txt:%ld", g.lineno);
        char *argv[20] = {MYGPT_EXE, "generate", "--checkpoint", model, "--tokenizer", tok, "--sampler", "llama2c"};
        int argc = 8;
        for (int k = 0; k < 5; k++)
            if (f[k][0]) { // an empty field: the flag is not given (run.c's default)
                argv[argc++] = (char *)FLAGS[k];
                argv[argc++] = f[k];
            }
        argv[argc] = NULL;
        unescape(f[5]);
        proc_result r;
        cr_assert_eq(run_process_input(argv, "", &r), 0);
        cr_expect_eq(r.status, 0, "run.txt:%ld: %s", g.lineno, r.err);
        cr_expect_str_eq(r.out, f[5], "run.txt:%ld (-t %s -p %s -s %s -n %s -i '%s')", g.lineno, f[0], f[1], f[2],
                         f[3], f[4]);
        proc_result_free(&r);
        cases++;
    }
    golden_reader_close(&g);
    cr_expect_geq(cases, 17);
}

/* Flags that are not run.c's, a missing model or tokenizer, and values run.c would
 * silently change: one line each, status 2 */
Test(cli_llama_generate, flags_it_has_no_place_for_are_refused)
{
    char model[4200], tok[4200], words[9000];
    snprintf(model, sizeof model, "%s", llama_file_or_skip("stories260K.bin"));
    snprintf(tok, sizeof tok, "%s", llama_file_or_skip("tok512.bin"));
    static const struct {
        const char *flags, *says;
    } CASES[] = {
        {"--max-new 5", "--max-new goes without --sampler llama2c"},
        {"--top-k 5", "--top-k goes without --sampler llama2c"},
        {"--temperature -1", "--temperature must be at least 0"},
        {"--top-p 1.5", "--top-p must be at most 1"},
        {"--steps -3", "--steps must be at least 0"},
        {"--sample-seed x", "--sample-seed"},
        {"--sampler nucleus", "is not torch"},
    };
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        snprintf(words, sizeof words, "generate --checkpoint %s --tokenizer %s %s", model, tok, CASES[i].flags);
        proc_result r;
        cr_assert_eq(run_words(MYGPT_EXE, words, &r), 0);
        expect_one_line_refusal(&r, 2, CASES[i].says, words);
        proc_result_free(&r);
    }
    proc_result r;
    snprintf(words, sizeof words, "generate --sampler llama2c --checkpoint %s", model);
    cr_assert_eq(run_words(MYGPT_EXE, words, &r), 0);
    expect_one_line_refusal(&r, 2, "needs --checkpoint MODEL and --tokenizer FILE", words);
    proc_result_free(&r);
    snprintf(words, sizeof words, "generate --checkpoint %s --steps 5 --ids 1", model);
    cr_assert_eq(run_words(MYGPT_EXE, words, &r), 0);
    expect_one_line_refusal(&r, 2, "--steps goes with --sampler llama2c", words);
    proc_result_free(&r);
}
