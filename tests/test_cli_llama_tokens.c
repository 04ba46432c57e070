/*
 * test_cli_llama_tokens.c - `mygpt encode --tokenizer` and `mygpt decode --tokenizer`
 * (llama2.c's corpus/llama/tok512.bin) against llama2.c's run.c
 * (tests/golden/llama2c/encode.txt, from tools/reference_llama2c.py), and their refusals.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_common.h"
#include "data.h"
#include "golden.h"

Test(cli_llama_tokens, encode_and_decode_print_run_cs)
{
    const char *tok = llama_file_or_skip("tok512.bin");
    golden_reader g = golden_reader_must_open("llama2c/encode.txt");
    char tmp[64];
    static char words[1 << 16], want[1 << 16], text[1 << 15], printed[1 << 15];
    snprintf(tmp, sizeof tmp, "/tmp/mygpt-cli-llama-%d.txt", (int)getpid());
    int cases = 0;
    for (char *line; (line = golden_read(&g));) {
        char *f[4];
        cr_assert_eq(golden_split(line, '\t', f, 4), 4, "encode.txt:%ld", g.lineno);
        const size_t n = golden_unhex_bytes(f[0], text, sizeof text);
        golden_unhex_bytes(f[3], printed, sizeof printed);
        FILE *t = fopen(tmp, "wb");
        cr_assert_not_null(t);
        cr_assert_eq(fwrite(text, 1, n, t), n);
        fclose(t);
        proc_result r;
        snprintf(words, sizeof words, "encode --tokenizer %s %s", tok, tmp);
        cr_assert_eq(run_words(MYGPT_EXE, words, &r), 0);
        snprintf(want, sizeof want, "%s\n", f[1]);
        cr_expect_eq(r.status, 0, "mygpt %s: %s", words, r.err);
        cr_expect_str_eq(r.out, want, "encode.txt:%ld", g.lineno);
        proc_result_free(&r);
        // and the ids, on standard input, back to what run.c prints for them
        char *argv[] = {MYGPT_EXE, "decode", "--tokenizer", (char *)tok, NULL};
        cr_assert_eq(run_process_input(argv, f[1], &r), 0);
        cr_expect_eq(r.status, 0, "mygpt decode: %s", r.err);
        cr_expect_str_eq(r.out, printed, "encode.txt:%ld: decode", g.lineno);
        proc_result_free(&r);
        cases++;
    }
    unlink(tmp);
    cr_expect_geq(cases, 50);
    golden_reader_close(&g);
}

/* Standard input both ways: encode | decode gives a story back (no leading space, every
 * byte printable: what run.c's decode keeps). */
Test(cli_llama_tokens, encode_then_decode_on_standard_input_round_trips_a_story)
{
    const char *tok = llama_file_or_skip("tok512.bin");
    static const char story[] = "Once upon a time, there was a little girl named Lily.\n"
                                "She said, \"I want to play with your ball, but I can't find it.\"\n";
    char tmp[64], script[10000];
    snprintf(tmp, sizeof tmp, "/tmp/mygpt-cli-llama-story-%d.txt", (int)getpid());
    write_file(tmp, story);
    snprintf(script, sizeof script, "'%s' encode --tokenizer '%s' < '%s' | '%s' decode --tokenizer '%s'", MYGPT_EXE,
             tok, tmp, MYGPT_EXE, tok);
    proc_result r;
    run_shell(script, &r);
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect_str_eq(r.out, story);
    proc_result_free(&r);
    unlink(tmp);
}

Test(cli_llama_tokens, bad_input_and_bad_tokenizers_are_one_line_errors)
{
    const char *tok = llama_file_or_skip("tok512.bin");
    char broken[64], args[8192];
    snprintf(broken, sizeof broken, "/tmp/mygpt-cli-llama-bad-%d.bin", (int)getpid());
    size_t n;
    char *bytes = file_bytes(tok, &n);
    cr_assert_not_null(bytes);
    FILE *f = fopen(broken, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(bytes, 1, n - 3, f), n - 3); // cut inside the last token
    fclose(f);
    free(bytes);
    const struct {
        const char *fmt, *msg;
    } cases[] = {
        {"decode --tokenizer %s 1 512", "token id 512 is outside [0, 512)"},
        {"decode --tokenizer %s -- -1", "token id -1 is outside [0, 512)"},
        {"decode --tokenizer %s 12abc", "'12abc' is not a token id"},
        {"encode --tokenizer %s --vocab-dir data", "--vocab-dir and --tokenizer name two vocabularies"},
        {"encode --tokenizer /nonexistent/tok512.bin%.0s", "cannot open /nonexistent/tok512.bin"},
        {"decode --tokenizer /nonexistent/tok512.bin%.0s 1", "cannot open /nonexistent/tok512.bin"},
        {"decode --tokenizer", "needs a value"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(args, sizeof args, cases[i].fmt, tok);
        proc_result r;
        cr_assert_eq(run_words(MYGPT_EXE, args, &r), 0);
        expect_one_line_refusal(&r, 2, cases[i].msg, args);
        proc_result_free(&r);
    }
    snprintf(args, sizeof args, "decode --tokenizer %s 1 2", broken);
    proc_result r;
    cr_assert_eq(run_words(MYGPT_EXE, args, &r), 0);
    expect_one_line_refusal(&r, 2, "token 511", args);
    cr_expect(strstr(r.err, broken) && strstr(r.err, "the file ends inside"), "%s", r.err);
    proc_result_free(&r);
    unlink(broken);
    // a NUL byte would end run.c's text early: refused, naming where the text came from
    char script[4400];
    snprintf(script, sizeof script, "printf 'a\\0b' | '%s' encode --tokenizer '%s'", MYGPT_EXE, tok);
    run_shell(script, &r);
    expect_one_line_refusal(&r, 2, "standard input: the text holds a NUL byte at offset 1", "encode");
    proc_result_free(&r);
}

/* Writes n bytes to path */
static void spill(const char *path, const char *bytes, size_t n)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(bytes, 1, n, f), n);
    fclose(f);
}

/* A vocabulary that cannot encode a text (no piece " ": every text starts with it) is
 * named, by encode, generate and train alike, as the file at fault, and a text that
 * cannot be encoded (a NUL byte) as the text; a tokenizer of no tokens, only its header,
 * is refused as such, not as a vocabulary of 0 to encode with */
Test(cli_llama_tokens, a_vocabulary_that_cannot_encode_is_named, .timeout = 60)
{
    char tok[4200], model[4200], nospace[64], empty[64], text[64], nul[64], args[16384];
    snprintf(tok, sizeof tok, "%s", llama_file_or_skip("tok512.bin"));
    snprintf(model, sizeof model, "%s", llama_file_or_skip("stories260K.bin"));
    snprintf(nospace, sizeof nospace, "/tmp/mygpt-cli-llama-nospace-%d.bin", (int)getpid());
    snprintf(empty, sizeof empty, "/tmp/mygpt-cli-llama-empty-%d.bin", (int)getpid());
    snprintf(text, sizeof text, "/tmp/mygpt-cli-llama-text-%d.txt", (int)getpid());
    snprintf(nul, sizeof nul, "/tmp/mygpt-cli-llama-nul-%d.txt", (int)getpid());
    size_t n;
    char *bytes = file_bytes(tok, &n);
    cr_assert_not_null(bytes);
    int found = 0;
    for (size_t at = 4; at + 8 <= n;) { // tok512.bin's piece " " becomes "~": its 512 pieces, no " "
        int32_t len;
        memcpy(&len, bytes + at + 4, 4);
        if (len == 1 && bytes[at + 8] == ' ')
            bytes[at + 8] = '~', found++;
        at += 8 + (size_t)len;
    }
    cr_assert_eq(found, 1);
    spill(nospace, bytes, n);
    spill(empty, bytes, 4); // max_token_length alone
    free(bytes);
    spill(text, "Once upon a time", 16);
    spill(nul, "ab\0cd", 5);
    const char *verdict = TESTS_SOURCE_DIR "/../corpus/the-verdict.txt";
    const struct {
        const char *fmt, *msg;
    } cases[] = {
        {"encode --tokenizer %1$s %3$s", "--tokenizer %1$s cannot encode %3$s: the vocabulary has no piece \" \""},
        {"generate --checkpoint %4$s --tokenizer %1$s --prompt Once --temperature 0",
         "--tokenizer %1$s cannot encode the prompt: the vocabulary has no piece \" \""},
        {"train --arch llama --tokenizer %1$s --text %5$s --embed 8 --heads 2 --layers 1 --steps 1",
         "--tokenizer %1$s: the vocabulary has no piece \" \""},
        {"encode --tokenizer %2$s %3$s", "%2$s holds no tokens, only its header"},
        {"decode --tokenizer %2$s 1", "%2$s holds no tokens, only its header"},
        {"train --arch llama --tokenizer %2$s --text %5$s --embed 8 --heads 2 --layers 1 --steps 1",
         "%2$s holds no tokens, only its header"},
        // the text's own fault is the text's
        {"train --arch llama --tokenizer %6$s --text %7$s --embed 8 --heads 2 --layers 1 --steps 1",
         "--text %7$s: the text holds a NUL byte at offset 2"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char msg[8192];
        snprintf(args, sizeof args, cases[i].fmt, nospace, empty, text, model, verdict, tok, nul);
        snprintf(msg, sizeof msg, cases[i].msg, nospace, empty, text, model, verdict, tok, nul);
        proc_result r;
        cr_assert_eq(run_words(MYGPT_EXE, args, &r), 0);
        expect_one_line_refusal(&r, 2, msg, args);
        proc_result_free(&r);
    }
    unlink(nospace);
    unlink(empty);
    unlink(text);
    unlink(nul);
}
