/*
 * test_cli_llama_generate.c - `mygpt generate --sampler llama2c` on llama2.c's stories260K
 * prints what llama2.c's run.c prints (tests/golden/llama2c/run.txt, from
 * tools/reference_llama2c.py: the three published outputs first, then other temperatures,
 * top-p, seeds, steps and prompts), and its refusals.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
        {"--max-new 5", "--max-new cannot be used with --sampler llama2c"},
        {"--top-k 5", "--top-k cannot be used with --sampler llama2c"},
        {"--temperature -1", "--temperature must be at least 0"},
        {"--temperature 1e39", "--temperature 1e39 is more than a float32 holds (at most 3.40282e+38)"},
        {"--top-p 1.5", "--top-p must be at most 1"},
        {"--steps -3", "--steps: -3 is out of range [0, 2147483647]"},
        {"--steps 99999999999", "--steps: 99999999999 is out of range [0, 2147483647]"},
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

/* Writes the 7 ints of a llama2.c header, then n bytes of body (or zeros when body is NULL) */
static void write_model(const char *path, const int32_t h[7], const char *body, size_t n)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    fwrite(h, 4, 7, f);
    for (size_t i = 0; i < n; i++)
        fputc(body ? body[i] : 0, f);
    fclose(f);
}

/* Model files no model can come from - a header of no model, one of a model far larger
 * than its file, a weight that is not a number - and a temperature whose quotients
 * overflow: one line each naming the file (or the temperature), status 2, nothing on
 * stdout */
Test(cli_llama_generate, hostile_models_and_temperatures_are_one_line_errors)
{
    char model[4200], tok[4200], bad[64], words[9000];
    snprintf(model, sizeof model, "%s", llama_file_or_skip("stories260K.bin"));
    snprintf(tok, sizeof tok, "%s", llama_file_or_skip("tok512.bin"));
    snprintf(bad, sizeof bad, "/tmp/mygpt-cli-llama-model-%d.bin", (int)getpid());
    size_t n;
    char *bytes = file_bytes(model, &n);
    cr_assert_not_null(bytes);
    const float nan = NAN;
    memcpy(bytes + 28 + 4 * 100, &nan, 4);
    static const struct {
        int32_t h[7];
        const char *says;
    } CASES[] = {
        {{64, 172, 5, 8, 3, 512, 512}, "num_kv_heads=3 must divide num_heads=8"},
        {{64, 172, 5, 8, 4, 512, 0}, "max_seq_len must be at least 1"},
        {{65536, 262144, 1000, 64, 8, -1000000, 100000}, "1028 bytes, not the 245338358022172"},
        {{0}, "token_embedding_table holds a non-finite value (nan at 100)"},
    };
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        if (CASES[i].h[0])
            write_model(bad, CASES[i].h, NULL, 1000);
        else // stories260K with a NaN
            write_model(bad, (const int32_t *)bytes, bytes + 28, n - 28);
        snprintf(words, sizeof words, "generate --checkpoint %s --tokenizer %s --temperature 0", bad, tok);
        proc_result r;
        cr_assert_eq(run_words(MYGPT_EXE, words, &r), 0);
        expect_one_line_refusal(&r, 2, CASES[i].says, words);
        cr_expect(strstr(r.err, bad), "%s", r.err);
        proc_result_free(&r);
    }
    free(bytes);
    unlink(bad);
    snprintf(words, sizeof words, "generate --checkpoint %s --tokenizer %s --temperature 1e-45 --sample-seed 3", model,
             tok);
    proc_result r;
    cr_assert_eq(run_words(MYGPT_EXE, words, &r), 0);
    expect_one_line_refusal(&r, 2, "the logits divided by temperature 1.4013e-45 overflow float32", words);
    proc_result_free(&r);
}

/* A model whose finite weights compute logits that are not numbers (its attention's RMS
 * weights at 3e38) is refused by mygpt-bench's decoding as generate refuses it: one line,
 * status 2, with the KV cache and without; it is not timed and reported as fine */
Test(cli_llama_generate, the_benchmark_times_no_model_whose_logits_are_not_numbers)
{
    char model[4200], bad[64], words[300];
    snprintf(model, sizeof model, "%s", llama_file_or_skip("stories260K.bin"));
    snprintf(bad, sizeof bad, "/tmp/mygpt-bench-llama-nan-%d.bin", (int)getpid());
    size_t n;
    char *bytes = file_bytes(model, &n);
    cr_assert_not_null(bytes);
    int32_t h[7];
    memcpy(h, bytes, sizeof h);
    const float huge = 3e38f;
    const size_t rms_att = 28 + 4 * (size_t)abs(h[5]) * (size_t)h[0]; // after the token embeddings
    for (size_t i = 0; i < (size_t)h[2] * (size_t)h[0]; i++)
        memcpy(bytes + rms_att + 4 * i, &huge, 4);
    write_model(bad, h, bytes + 28, n - 28);
    free(bytes);
    const char *modes[] = {"", " --no-kv-cache"};
    for (size_t i = 0; i < 2; i++) {
        snprintf(words, sizeof words, "--generate --checkpoint %s --prompt 2 --new 2 --reps 1 --threads 1%s", bad,
                 modes[i]);
        proc_result r;
        cr_assert_eq(run_words(BENCH_EXE, words, &r), 0);
        cr_expect_eq(r.status, 2, "%s: exit %d: %s", words, r.status, r.err);
        cr_expect(count_lines(r.err) == 1 && strstr(r.err, "mygpt-bench: --generate: the model's logit"), "%s: %s",
                  words, r.err);
        proc_result_free(&r);
    }
    unlink(bad); // and a checkpoint that is not there is --checkpoint's, not a --config never given
    snprintf(words, sizeof words, "--generate --checkpoint %s --prompt 2 --new 2 --reps 1 --threads 1", bad);
    proc_result r;
    cr_assert_eq(run_words(BENCH_EXE, words, &r), 0);
    expect_one_line_refusal(&r, 2, "mygpt-bench: --generate --checkpoint: cannot open", words);
    cr_expect(!strstr(r.err, "--config"), "%s", r.err);
    proc_result_free(&r);
}

/* quantize writes a llama model to an OUT ending in .bin as llama2.c's file (run.c reads
 * it), as train --save does: --weights fp32 gives the model's own file back (byte for
 * byte but for the RoPE tables); int8 and bf16 cannot go there and are refused before
 * anything is written */
Test(cli_llama_generate, quantize_to_a_bin_writes_llama2cs_file_or_refuses)
{
    char model[4200], out[64], words[9000];
    snprintf(model, sizeof model, "%s", llama_file_or_skip("stories260K.bin"));
    snprintf(out, sizeof out, "/tmp/mygpt-llama-quantize-%d.bin", (int)getpid());
    snprintf(words, sizeof words, "quantize %s %s --weights fp32", model, out);
    proc_result r;
    cr_assert_eq(run_words(MYGPT_EXE, words, &r), 0);
    cr_expect_eq(r.status, 0, "%s: %s", words, r.err);
    proc_result_free(&r);
    size_t na, nb;
    char *a = file_bytes(model, &na), *b = file_bytes(out, &nb);
    cr_assert(a && b && na == nb, "%s: not stories260K.bin's length", out);
    int32_t h[7];
    memcpy(h, a, sizeof h);
    cr_assert_gt(h[5], 0, "stories260K's head is tied");
    const size_t tables = (size_t)h[6] * (size_t)(h[0] / h[3]) * 4; // RoPE's, which model.py computes its own way
    cr_expect_eq(memcmp(a, b, na - tables), 0, "%s: not stories260K.bin's bytes before the RoPE tables", out);
    free(a), free(b);
    unlink(out);
    for (int i = 0; i < 2; i++) {
        const char *w = i ? "bf16" : "int8";
        snprintf(words, sizeof words, "quantize %s %s --weights %s", model, out, w);
        cr_assert_eq(run_words(MYGPT_EXE, words, &r), 0);
        char says[128];
        snprintf(says, sizeof says, "llama2.c's file holds float32 weights, not %s (a name not ending in .bin", w);
        expect_one_line_refusal(&r, 2, says, words);
        proc_result_free(&r);
        cr_expect_neq(access(out, F_OK), 0, "%s written", out);
    }
}
