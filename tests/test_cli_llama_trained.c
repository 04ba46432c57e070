/*
 * test_cli_llama_trained.c - a Llama trained by `mygpt train --arch llama --tokenizer
 * tok512.bin --save F.bin` is llama2.c's file: the training writes the same bytes as when
 * tools/reference_llama2c_train.py ran it (their sha256; the script checks 1 and 2
 * threads and the generic kernels agree), and `mygpt generate --sampler llama2c` on F.bin prints what llama2.c's
 * run.c printed on it (tests/golden/llama2c/trained.txt), tied and untied, grouped heads.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_common.h"
#include "data.h"
#include "golden.h"

/* The sha256 of path's bytes, as 64 hex digits, into hex */
static void sha256_file(const char *path, char hex[65])
{
    size_t n = 0;
    char *bytes = file_bytes(path, &n);
    cr_assert_not_null(bytes, "cannot read %s", path);
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    cr_assert_eq(EVP_Digest(bytes, n, md, &len, EVP_sha256(), NULL), 1);
    cr_assert_eq(len, 32u);
    for (unsigned int i = 0; i < len; i++)
        snprintf(hex + 2 * i, 3, "%02x", md[i]);
    free(bytes);
}

/* `mygpt train --arch llama --vocab 512 --tokenizer tok --text text FLAGS --save model`:
 * FLAGS split at spaces (the golden's have no quoted words) */
static void train(const char *flags, const char *tok, const char *text, const char *model, long lineno)
{
    char words[1024];
    cr_assert_lt(strlen(flags), sizeof words, "trained.txt:%ld: flags too long", lineno);
    snprintf(words, sizeof words, "%s", flags);
    char *argv[64] = {MYGPT_EXE, "train", "--arch", "llama", "--vocab", "512", "--tokenizer", (char *)tok,
                      "--text", (char *)text};
    int argc = 10;
    for (char *w = strtok(words, " "); w; w = strtok(NULL, " ")) {
        cr_assert_lt(argc, 60, "trained.txt:%ld: too many flags", lineno);
        argv[argc++] = w;
    }
    argv[argc++] = "--save";
    argv[argc++] = (char *)model;
    argv[argc] = NULL;
    proc_result r;
    cr_assert_eq(run_process_input(argv, "", &r), 0);
    cr_assert_eq(r.status, 0, "trained.txt:%ld: mygpt train exited %d: %s", lineno, r.status, r.err);
    proc_result_free(&r);
}

/* run.c's `-t T -p P -s S -n N [-i PROMPT]` on model as mygpt generate's flags: its stdout is
 * want (escaped as in the golden) */
static void expect_run(char *const f[5], char *want, const char *model, const char *tok, long lineno)
{
    static const char *const FLAGS[] = {"--temperature", "--top-p", "--sample-seed", "--steps", "--prompt"};
    char *argv[20] = {MYGPT_EXE, "generate", "--checkpoint", (char *)model, "--tokenizer", (char *)tok, "--sampler",
                      "llama2c"};
    int argc = 8;
    for (int k = 0; k < 5; k++)
        if (f[k][0]) {
            argv[argc++] = (char *)FLAGS[k];
            argv[argc++] = f[k];
        }
    argv[argc] = NULL;
    golden_unescape(want);
    proc_result r;
    cr_assert_eq(run_process_input(argv, "", &r), 0);
    cr_expect_eq(r.status, 0, "trained.txt:%ld: %s", lineno, r.err);
    cr_expect_str_eq(r.out, want, "trained.txt:%ld (-t %s -p %s -s %s -n %s -i '%s')", lineno, f[0], f[1], f[2], f[3],
                     f[4]);
    proc_result_free(&r);
}

Test(cli_llama_trained, run_c_tells_what_mygpt_tells_of_a_model_it_trained, .timeout = 600)
{
    char tok[4200], text[4200], dir[] = "/tmp/mygpt_llama_trained_XXXXXX", model[300], hex[65];
    snprintf(tok, sizeof tok, "%s", llama_file_or_skip("tok512.bin"));
    snprintf(text, sizeof text, "%s/../corpus/the-verdict.txt", TESTS_SOURCE_DIR);
    cr_assert_not_null(mkdtemp(dir));
    snprintf(model, sizeof model, "%s/m.bin", dir);
    golden_reader g = golden_reader_must_open("llama2c/trained.txt");
    int models = 0, runs = 0;
    for (char *line; (line = golden_read(&g));) {
        char *f[7];
        const int n = golden_split(line, '\t', f, 7);
        if (n == 3 && strcmp(f[0], "model") == 0) {
            train(f[1], tok, text, model, g.lineno);
            sha256_file(model, hex);
            cr_expect_str_eq(hex, f[2], "trained.txt:%ld: mygpt train %s wrote other bytes", g.lineno, f[1]);
            models++;
        } else {
            cr_assert(n == 7 && strcmp(f[0], "run") == 0 && models > 0, "trained.txt:%ld: not a model or run line",
                      g.lineno);
            expect_run(f + 1, f[6], model, tok, g.lineno);
            runs++;
        }
    }
    golden_reader_close(&g);
    unlink(model);
    rmdir(dir);
    cr_expect_eq(models, 2);
    cr_expect_eq(runs, 6);
}

/* --tokenizer without --vocab: the model's vocabulary is the tokenizer's 512 (the saved
 * .bin's header, llama2.c's Config: dim, hidden_dim, n_layers, n_heads, n_kv_heads,
 * vocab_size, seq_len; negative vocab_size for an untied classifier) */
Test(cli_llama_trained, the_vocabulary_is_the_tokenizers_when_not_given)
{
    char text[4200], words[13400], model[64], dir[] = "/tmp/mygpt_llama_vocab_XXXXXX";
    const char *tok = llama_file_or_skip("tok512.bin");
    snprintf(text, sizeof text, "%s/../corpus/the-verdict.txt", TESTS_SOURCE_DIR);
    cr_assert_not_null(mkdtemp(dir));
    snprintf(model, sizeof model, "%s/m.bin", dir);
    snprintf(words, sizeof words,
             "train --arch llama --embed 8 --heads 2 --layers 1 --context 8 --batch 2 --steps 1 --text %s "
             "--tokenizer %s --save %s", text, tok, model);
    proc_result r;
    cr_assert_eq(run_words(MYGPT_EXE, words, &r), 0);
    cr_expect_eq(r.status, 0, "%s: exited %d: %s", words, r.status, r.err);
    proc_result_free(&r);
    size_t n = 0;
    char *bytes = file_bytes(model, &n);
    cr_assert_not_null(bytes, "%s was not saved", model);
    cr_assert_geq(n, 7 * sizeof(int32_t));
    int32_t header[7];
    memcpy(header, bytes, sizeof header);
    cr_expect_eq(abs(header[5]), 512, "vocab_size %d in the saved header", header[5]);
    free(bytes);
    unlink(model);
    rmdir(dir);
}

/* --tokenizer of another size than --vocab, one that is not there or not a tokenizer, and
 * with the book's loop; --decay-groups with sgd: one line each, status 2, nothing saved */
Test(cli_llama_trained, a_tokenizer_that_does_not_fit_is_refused)
{
    char files[3][4300], text[4200], words[13400], dir[] = "/tmp/mygpt_llama_refused_XXXXXX";
    const char *tok = llama_file_or_skip("tok512.bin");
    snprintf(files[0], sizeof files[0], "%s", tok);
    snprintf(files[1], sizeof files[1], "%.4200s.absent", tok);
    snprintf(text, sizeof text, "%s/../corpus/the-verdict.txt", TESTS_SOURCE_DIR);
    snprintf(files[2], sizeof files[2], "%s", text);
    cr_assert_not_null(mkdtemp(dir));
    static const struct {
        int file; /* --tokenizer files[file], or -1: none */
        const char *flags, *says;
    } CASES[] = {
        {0, "--vocab 600 --steps 1", "holds 512 tokens: the model's vocabulary must be the same (--vocab 512, not 600)"},
        {1, "--vocab 512 --steps 1", "--tokenizer: cannot open"},
        {2, "--vocab 512 --steps 1", "--tokenizer: "},
        {0, "--vocab 512 --epochs 1", "--tokenizer goes with the course's loop (--steps)"},
        {-1, "--vocab 512 --steps 1 --optimizer sgd --decay-groups", "--decay-groups goes with --optimizer adamw"},
    };
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        const int k = CASES[i].file;
        snprintf(words, sizeof words,
                 "train --arch llama --embed 8 --heads 2 --layers 1 --context 8 --batch 2 --text %s --save %s/m.bin "
                 "%s%s %s", text, dir, k >= 0 ? "--tokenizer " : "", k >= 0 ? files[k] : "", CASES[i].flags);
        proc_result r;
        cr_assert_eq(run_words(MYGPT_EXE, words, &r), 0);
        expect_one_line_refusal(&r, 2, CASES[i].says, words);
        proc_result_free(&r);
    }
    cr_expect_eq(entries_in(dir), 0, "a refused run left a file");
    rmdir(dir);
}

/* --init-from reads llama2.c's .bin as --checkpoint does: stories260K trained a step at
 * lr 0 is saved back with its weights as they were (the RoPE tables after them are
 * recomputed), and a .bin no model comes from is refused saying why, nothing saved */
Test(cli_llama_trained, init_from_reads_llama2cs_bin, .timeout = 120)
{
    char model[4200], tok[4200], text[4200], words[13400], dir[] = "/tmp/mygpt_llama_init_XXXXXX", out[64], bad[64];
    snprintf(model, sizeof model, "%s", llama_file_or_skip("stories260K.bin"));
    snprintf(tok, sizeof tok, "%s", llama_file_or_skip("tok512.bin"));
    snprintf(text, sizeof text, "%s/../corpus/the-verdict.txt", TESTS_SOURCE_DIR);
    cr_assert_not_null(mkdtemp(dir));
    snprintf(out, sizeof out, "%s/m.bin", dir);
    snprintf(bad, sizeof bad, "%s/nan.bin", dir);
    const char *base = "train --arch llama --context 8 --batch 2 --steps 1 --optimizer sgd --lr 0 --text";
    snprintf(words, sizeof words, "%s %s --tokenizer %s --init-from %s --save %s", base, text, tok, model, out);
    proc_result r;
    cr_assert_eq(run_words(MYGPT_EXE, words, &r), 0);
    cr_expect_eq(r.status, 0, "%s: exited %d: %s", words, r.status, r.err);
    proc_result_free(&r);
    size_t n = 0, m = 0;
    char *want = file_bytes(model, &n), *got = file_bytes(out, &m);
    cr_assert(want && got, "%s was not saved", out);
    const size_t rope = 512 * (64 / 8) * 4; // seq_len * head_size floats, the last of a tied model
    cr_expect(n == m && memcmp(want, got, n - rope) == 0, "the weights saved differ from %s's", model);
    const float nan = NAN;
    memcpy(want + 28, &nan, 4);
    FILE *f = fopen(bad, "wb");
    cr_assert_not_null(f);
    fwrite(want, 1, n, f);
    fclose(f);
    free(want);
    free(got);
    unlink(out);
    snprintf(words, sizeof words, "%s %s --tokenizer %s --init-from %s --save %s", base, text, tok, bad, out);
    cr_assert_eq(run_words(MYGPT_EXE, words, &r), 0);
    expect_one_line_refusal(&r, 2, "nan.bin: token_embedding_table holds a non-finite value (nan at 0)", words);
    proc_result_free(&r);
    unlink(bad);
    cr_expect_eq(entries_in(dir), 0, "a refused run left a file");
    rmdir(dir);
}
