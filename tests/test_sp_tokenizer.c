/*
 * test_sp_tokenizer.c - llama2.c's tokenizer (corpus/llama/tok512.bin) against the ids,
 * pieces and printed text of llama2.c's own run.c (tests/golden/llama2c/, made by
 * tools/reference_llama2c.py); the file written back byte for byte; broken and hostile
 * files refused with the reason.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "data.h"
#include "golden.h"
#include "mygpt/sp_tokenizer.h"

static mygpt_sp_tokenizer *load_tok512(void)
{
    const char *path = llama_file_or_skip("tok512.bin");
    mygpt_sp_tokenizer *tok = NULL;
    mygpt_error err = {0};
    cr_assert_eq(mygpt_sp_load(&tok, path, 512, &err), MYGPT_OK, "%s", err.message);
    return tok;
}

/* ids as the golden writes them: space-separated, "-" for none. */
static void ids_text(const int *ids, size_t n, char *out, size_t cap)
{
    size_t at = 0;
    out[0] = '\0';
    for (size_t i = 0; i < n && at < cap; i++)
        at += (size_t)snprintf(out + at, cap - at, i ? " %d" : "%d", ids[i]);
    if (n == 0)
        snprintf(out, cap, "-");
}

/* Encodes text (len bytes) with bos and eos and checks the ids against want. */
static void expect_encoding(const mygpt_sp_tokenizer *tok, const char *text, size_t len, int bos, int eos,
                            const char *want, long lineno)
{
    int *ids;
    size_t n;
    mygpt_error err = {0};
    cr_assert_eq(mygpt_sp_encode(tok, text, len, bos, eos, &ids, &n, &err), MYGPT_OK, "line %ld: %s", lineno,
                 err.message);
    static char got[1 << 16];
    ids_text(ids, n, got, sizeof got);
    cr_expect_str_eq(got, want, "encode.txt:%ld (bos %d, eos %d)", lineno, bos, eos);
    free(ids);
}

/* Every line of the golden `name` (encode.txt's columns) against tok; the lines checked. */
static int expect_goldens(const mygpt_sp_tokenizer *tok, const char *name)
{
    golden_reader g = golden_reader_must_open(name);
    int cases = 0;
    static char text[1 << 15], printed[1 << 15];
    for (char *line; (line = golden_read(&g));) {
        char *f[4];
        cr_assert_eq(golden_split(line, '\t', f, 4), 4, "%s:%ld", name, g.lineno);
        const size_t len = golden_unhex_bytes(f[0], text, sizeof text), plen = golden_unhex_bytes(f[3], printed, sizeof printed);
        expect_encoding(tok, text, len, 1, 0, f[1], g.lineno);
        expect_encoding(tok, text, len, 0, 1, f[2], g.lineno);
        // what run.c prints for the ids after BOS
        int64_t ids64[4096];
        int ids[4096];
        const size_t n = strcmp(f[1], "-") ? golden_parse_i64(f[1], ids64, 4096) : 0;
        for (size_t i = 0; i < n; i++)
            ids[i] = (int)ids64[i];
        char *out;
        size_t out_len;
        mygpt_error err = {0};
        cr_assert_eq(mygpt_sp_decode(tok, ids, n, &out, &out_len, &err), MYGPT_OK, "%s", err.message);
        cr_expect(out_len == plen && memcmp(out, printed, plen) == 0, "%s:%ld: decode printed %s", name, g.lineno,
                  out);
        free(out);
        cases++;
    }
    golden_reader_close(&g);
    return cases;
}

Test(sp_tokenizer, encode_and_decode_are_run_cs)
{
    mygpt_sp_tokenizer *tok = load_tok512();
    cr_expect_geq(expect_goldens(tok, "llama2c/encode.txt"), 50);
    mygpt_sp_free(tok);
}

/* The whole file at path (malloc'd, *n bytes). */
static char *slurp(const char *path, size_t *n)
{
    char *data;
    mygpt_error err = {0};
    cr_assert_eq(mygpt_read_file(path, &data, n, &err), MYGPT_OK, "%s", err.message);
    return data;
}

/* tok written to a temporary file holds the bytes of the file at path. */
static void expect_saved_as(const mygpt_sp_tokenizer *tok, const char *path)
{
    char out[64];
    snprintf(out, sizeof out, "/tmp/mygpt-sp-%d.bin", (int)getpid());
    mygpt_error err = {0};
    cr_assert_eq(mygpt_sp_save(tok, out, &err), MYGPT_OK, "%s", err.message);
    size_t a, b;
    char *orig = slurp(path, &a), *back = slurp(out, &b);
    cr_expect(a == b && memcmp(orig, back, a) == 0, "the saved file differs from %s", path);
    unlink(out);
    free(orig);
    free(back);
}

Test(sp_tokenizer, equal_scores_twice_pieces_and_nan_scores_are_run_cs)
{
    // ties.bin: a vocabulary made by the reference script to meet what tok512.bin never does
    char path[4200];
    snprintf(path, sizeof path, "%s/llama2c/ties.bin", golden_dir());
    mygpt_sp_tokenizer *tok = NULL;
    mygpt_error err = {0};
    cr_assert_eq(mygpt_sp_load(&tok, path, 0, &err), MYGPT_OK, "%s", err.message);
    cr_expect_geq(expect_goldens(tok, "llama2c/ties.txt"), 15);
    expect_saved_as(tok, path);
    mygpt_sp_free(tok);
}

Test(sp_tokenizer, pieces_and_safe_printf_are_run_cs)
{
    mygpt_sp_tokenizer *tok = load_tok512();
    golden_reader g = golden_reader_must_open("llama2c/pieces.txt");
    int cases = 0;
    for (char *line; (line = golden_read(&g));) {
        int id, prev, prints;
        char hex[256], want[128];
        cr_assert_eq(sscanf(line, "%d %d %255s %d", &id, &prev, hex, &prints), 4, "pieces.txt:%ld", g.lineno);
        const size_t n = golden_unhex_bytes(hex, want, sizeof want);
        want[n] = '\0';
        const char *piece;
        mygpt_error err = {0};
        cr_assert_eq(mygpt_sp_piece(tok, prev, id, &piece, &err), MYGPT_OK, "%s", err.message);
        cr_expect_str_eq(piece, want, "pieces.txt:%ld", g.lineno);
        cr_expect_eq(mygpt_sp_piece_printable(piece), prints, "pieces.txt:%ld", g.lineno);
        cases++;
    }
    cr_expect_eq(cases, 2 * 512);
    golden_reader_close(&g);
    const char *piece;
    mygpt_error err = {0};
    cr_expect_eq(mygpt_sp_piece(tok, 1, 512, &piece, &err), MYGPT_ERANGE);
    cr_expect_str_eq(err.message, "token id 512 is outside [0, 512)");
    cr_expect_eq(mygpt_sp_piece(tok, 1, -1, &piece, &err), MYGPT_ERANGE);
    cr_expect_null(mygpt_sp_token(tok, 512, NULL));
    float score = 0;
    cr_expect_str_eq(mygpt_sp_token(tok, 1, &score), "\n<s>\n");
    cr_expect_eq(mygpt_sp_vocab_size(tok), 512);
    mygpt_sp_free(tok);
}

/* Writes n bytes of data to path. */
static void spill(const char *path, const char *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f, "cannot write %s", path);
    cr_assert_eq(fwrite(data, 1, n, f), n);
    cr_assert_eq(fclose(f), 0);
}

Test(sp_tokenizer, saves_the_file_back_byte_for_byte)
{
    mygpt_sp_tokenizer *tok = load_tok512();
    const char *path = llama_file_or_skip("tok512.bin");
    expect_saved_as(tok, path);
    // and read with no count given: the same 512 tokens
    mygpt_sp_tokenizer *again = NULL;
    mygpt_error err = {0};
    cr_assert_eq(mygpt_sp_load(&again, path, 0, &err), MYGPT_OK, "%s", err.message);
    cr_expect_eq(mygpt_sp_vocab_size(again), 512);
    mygpt_sp_free(again);
    mygpt_sp_free(tok);
}

/* Loads n bytes of data as a tokenizer file of vocab tokens: the status, the message in
 * why. */
static mygpt_status load_bytes(const char *data, size_t n, int vocab, char *why, size_t cap)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/mygpt-sp-bad-%d.bin", (int)getpid());
    spill(path, data, n);
    mygpt_sp_tokenizer *tok = NULL;
    mygpt_error err = {0};
    const mygpt_status st = mygpt_sp_load(&tok, path, vocab, &err);
    snprintf(why, cap, "%s", err.message);
    cr_expect_eq(st == MYGPT_OK, tok != NULL);
    mygpt_sp_free(tok);
    unlink(path);
    return st;
}

/* The little-endian int32 at data + at */
static int32_t read_i32_at(const char *data, size_t at)
{
    int32_t v;
    memcpy(&v, data + at, 4);
    return v;
}

Test(sp_tokenizer, truncated_and_hostile_files_are_errors)
{
    size_t n;
    char *data = slurp(llama_file_or_skip("tok512.bin"), &n);
    char why[MYGPT_ERROR_MESSAGE_MAX];
    // every proper prefix is refused with 512 tokens expected
    for (size_t cut = 0; cut < n; cut += cut < 64 ? 1 : 37)
        cr_expect_eq(load_bytes(data, cut, 512, why, sizeof why), MYGPT_EFORMAT, "cut at %zu", cut);
    cr_expect_eq(load_bytes(data, n - 1, 0, why, sizeof why), MYGPT_EFORMAT);
    cr_expect(strstr(why, "token 511") && strstr(why, "the file ends inside"), "%s", why);
    cr_expect_eq(load_bytes(data, n, 513, why, sizeof why), MYGPT_EFORMAT);
    cr_expect(strstr(why, "holds 512 tokens, fewer than the 513 expected"), "%s", why);
    cr_expect_eq(load_bytes(data, n, 511, why, sizeof why), MYGPT_EFORMAT);
    cr_expect(strstr(why, "bytes after the last of its 511 tokens"), "%s", why);
    char *bad = malloc(n + 1);
    // token 0's length: negative, then beyond max_token_length (7)
    const int32_t lengths[] = {-1, 8, INT32_MAX};
    for (size_t i = 0; i < 3; i++) {
        memcpy(bad, data, n);
        memcpy(bad + 8, &lengths[i], 4);
        cr_expect_eq(load_bytes(bad, n, 512, why, sizeof why), MYGPT_EFORMAT);
        cr_expect(strstr(why, "is not a llama2.c tokenizer.bin: its first token's length") &&
                      strstr(why, "max_token_length"),
                  "%s", why);
    }
    // a later token's length beyond it names the token
    memcpy(bad, data, n);
    const int32_t eight = 8, second = 12 + read_i32_at(data, 8); // token 1: its score, then its length
    memcpy(bad + second + 4, &eight, 4);
    cr_expect_eq(load_bytes(bad, n, 512, why, sizeof why), MYGPT_EFORMAT);
    cr_expect(strstr(why, "token 1 at byte") && strstr(why, "length 8 is outside [0, 7]"), "%s", why);
    const int32_t negative = -3;
    memcpy(bad, data, n);
    memcpy(bad, &negative, 4);
    cr_expect_eq(load_bytes(bad, n, 512, why, sizeof why), MYGPT_EFORMAT);
    cr_expect(strstr(why, "max_token_length -3 is negative"), "%s", why);
    cr_expect_eq(load_bytes(data, 3, 0, why, sizeof why), MYGPT_EFORMAT);
    cr_expect_eq(load_bytes(data, 4, 0, why, sizeof why), MYGPT_EFORMAT); // the header alone: no vocabulary
    cr_expect(strstr(why, "holds no tokens, only its header"), "%s", why);
    cr_expect_eq(load_bytes(data, n, -1, why, sizeof why), MYGPT_EINVAL);
    mygpt_sp_tokenizer *tok = NULL;
    mygpt_error err = {0};
    cr_expect_eq(mygpt_sp_load(&tok, "/nonexistent/tok512.bin", 512, &err), MYGPT_EIO);
    cr_expect_null(tok);
    free(bad);
    free(data);
}

/* A tokenizer from n bytes of data (the test fails if they do not load). */
static mygpt_sp_tokenizer *load_small(const char *data, size_t n)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/mygpt-sp-small-%d.bin", (int)getpid());
    spill(path, data, n);
    mygpt_sp_tokenizer *tok = NULL;
    mygpt_error err = {0};
    cr_assert_eq(mygpt_sp_load(&tok, path, 0, &err), MYGPT_OK, "%s", err.message);
    unlink(path);
    return tok;
}

Test(sp_tokenizer, text_the_vocabulary_cannot_encode_is_an_error)
{
    int *ids = NULL;
    size_t n;
    mygpt_error err = {0};
    // three pieces: no " " (the dummy prefix), then " " but no bytes to fall back to
    static const char no_space[] = "\1\0\0\0" "\0\0\0\0\1\0\0\0a" "\0\0\0\0\1\0\0\0b" "\0\0\0\0\1\0\0\0c";
    static const char no_bytes[] = "\1\0\0\0" "\0\0\0\0\1\0\0\0a" "\0\0\0\0\1\0\0\0b" "\0\0\0\0\1\0\0\0 ";
    mygpt_sp_tokenizer *tok = load_small(no_space, sizeof no_space - 1);
    cr_expect_eq(mygpt_sp_encode(tok, "ab", 2, 1, 0, &ids, &n, &err), MYGPT_EFORMAT);
    cr_expect(strstr(err.message, "no piece \" \""), "%s", err.message);
    // the empty text needs no prefix: BOS and EOS alone
    cr_assert_eq(mygpt_sp_encode(tok, "", 0, 1, 1, &ids, &n, &err), MYGPT_OK, "%s", err.message);
    cr_expect(n == 2 && ids[0] == 1 && ids[1] == 2);
    free(ids);
    mygpt_sp_free(tok);
    tok = load_small(no_bytes, sizeof no_bytes - 1);
    cr_assert_eq(mygpt_sp_encode(tok, "ab", 2, 0, 0, &ids, &n, &err), MYGPT_OK, "%s", err.message);
    cr_expect(n == 3 && ids[0] == 2 && ids[1] == 0 && ids[2] == 1);
    free(ids);
    cr_expect_eq(mygpt_sp_encode(tok, "az", 2, 0, 0, &ids, &n, &err), MYGPT_EFORMAT);
    cr_expect_str_eq(err.message, "byte 0x7A falls back to id 125, outside the vocabulary of 3");
    // a NUL byte would end run.c's text there
    cr_expect_eq(mygpt_sp_encode(tok, "a\0b", 3, 1, 0, &ids, &n, &err), MYGPT_EINVAL);
    cr_expect_str_eq(err.message, "the text holds a NUL byte at offset 1");
    cr_expect_null(ids);
    mygpt_sp_free(tok);
}
