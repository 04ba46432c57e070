/*
 * test_tokenizer.c - GPT-2 BPE against tiktoken (tests/golden/tokenizer.txt and
 * verdict_ids.txt, made by tools/gen_tokenizer_goldens.mjs), round trips, the
 * document-003 data loader, and clean errors for bad text and bad vocabularies.
 * Needs the vocabulary fetched by scripts/fetch-data.sh: when its files are absent
 * the tests that need it report themselves as skipped (failed under CI=true); files
 * that are there but broken fail (tests/data.h).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "data.h"
#include "golden.h"
#include "mygpt/data.h"
#include "mygpt/tokenizer.h"

/* the-verdict's bytes (skipped when absent, a failure under CI=true) */
static char *read_text_or_skip(const char *name, size_t *n)
{
    char *buf = NULL;
    mygpt_error err = {0};
    cr_assert_eq(mygpt_read_file(data_file_or_skip(name), &buf, n, &err), MYGPT_OK, "%s",
                 err.message);
    return buf;
}

/* the-verdict, its ids from mygpt_encode and the tokenizer that made them */
typedef struct encoded_verdict {
    mygpt_tokenizer *tok;
    char *text;
    size_t tn;
    int64_t *ids;
    size_t n;
} encoded_verdict;

/* Reads and encodes the-verdict (skipped when the vocabulary or the text is absent, a
 * failure under CI=true); encoded_verdict_free frees it. */
static encoded_verdict encode_verdict_or_skip(void)
{
    encoded_verdict v = {.tok = tokenizer_or_skip()};
    v.text = read_text_or_skip("the-verdict.txt", &v.tn);
    mygpt_error err = {0};
    cr_assert_eq(mygpt_encode(v.tok, v.text, v.tn, &v.ids, &v.n, &err), MYGPT_OK, "%s", err.message);
    return v;
}

static void encoded_verdict_free(encoded_verdict *v)
{
    free(v->ids);
    free(v->text);
    mygpt_tokenizer_free(v->tok);
}

static unsigned char *unhex(const char *h, size_t *n)
{
    size_t len = strlen(h) / 2;
    unsigned char *out = malloc(len + 1);
    for (size_t i = 0; i < len; i++)
        sscanf(h + 2 * i, "%2hhx", &out[i]);
    out[len] = 0;
    *n = len;
    return out;
}

Test(tokenizer, tricky_strings_match_tiktoken_and_round_trip)
{
    mygpt_tokenizer *tok = tokenizer_or_skip();
    golden_reader gold = golden_reader_must_open("tokenizer.txt");
    char *line;
    int cases = 0;
    static int64_t want[8192]; // (the longest case: 6,000 ids)
    while ((line = golden_read(&gold))) {
        char *w[2];
        if (line[0] == '\t') { /* the empty string */
            w[0] = (char *)"";
            w[1] = line + 1;
        } else {
            cr_assert_eq(golden_split(line, '\t', w, 2), 2, "tokenizer.txt:%ld", gold.lineno);
        }
        size_t tn, nwant = golden_parse_i64(w[1], want, sizeof want / sizeof want[0]), n;
        unsigned char *text = unhex(w[0], &tn);
        int64_t *ids;
        mygpt_error err = {0};
        cr_assert_eq(mygpt_encode(tok, (const char *)text, tn, &ids, &n, &err), MYGPT_OK,
                     "line %ld: %s", gold.lineno, err.message);
        cr_expect_eq(n, nwant, "line %ld (%s): %zu ids, tiktoken has %zu", gold.lineno, text, n, nwant);
        for (size_t i = 0; i < n && i < nwant; i++)
            cr_expect_eq(ids[i], want[i], "line %ld (%s): id %zu is %lld, tiktoken %lld", gold.lineno,
                         text, i, (long long)ids[i], (long long)want[i]);
        char *back;
        size_t bn;
        cr_assert_eq(mygpt_decode(tok, ids, n, &back, &bn, &err), MYGPT_OK);
        cr_expect(bn == tn && memcmp(back, text, tn) == 0, "line %ld: decode(encode(x)) != x", gold.lineno);
        free(back);
        free(ids);
        free(text);
        cases++;
    }
    cr_expect_gt(cases, 80);
    golden_reader_close(&gold);
    mygpt_tokenizer_free(tok);
}

Test(tokenizer, the_verdict_is_5145_tokens_as_tiktoken_gives_them)
{
    encoded_verdict v = encode_verdict_or_skip();
    const int64_t *ids = v.ids;
    const size_t n = v.n;
    cr_expect_eq(n, 5145);
    static const int64_t first20[20] = {40,  367, 2885, 1464, 1807,  3619, 402,  271,  10899, 2138,
                                        257, 7026, 15632, 438, 2016, 257,  922,  5891, 1576, 438};
    for (int i = 0; i < 20; i++)
        cr_expect_eq(ids[i], first20[i], "id %d", i);
    golden_reader gold = golden_reader_must_open("verdict_ids.txt");
    char *line;
    cr_assert((line = golden_read(&gold)));
    int64_t *want = malloc(8192 * sizeof *want);
    size_t nwant = golden_parse_i64(line, want, 8192);
    cr_expect_eq(nwant, n);
    cr_expect(n == nwant && memcmp(ids, want, n * sizeof *ids) == 0, "ids differ from tiktoken's");
    char *back;
    size_t bn;
    mygpt_error err = {0};
    cr_assert_eq(mygpt_decode(v.tok, ids, n, &back, &bn, &err), MYGPT_OK, "%s", err.message);
    cr_expect(bn == v.tn && memcmp(back, v.text, v.tn) == 0, "the-verdict does not round-trip");
    free(back);
    free(want);
    golden_reader_close(&gold);
    encoded_verdict_free(&v);
}

Test(dataloader, document_003_windows_and_first_batch)
{
    encoded_verdict v = encode_verdict_or_skip();
    const int64_t *ids = v.ids;
    const size_t n = v.n;
    mygpt_dataloader dl;
    cr_assert_eq(mygpt_dataloader_init(&dl, ids, n, 8, 4, 4, NULL), MYGPT_OK);
    cr_expect_eq(dl.num_windows, 1286);
    cr_expect_eq(dl.num_batches, 160);
    int64_t in[32], tg[32];
    cr_assert_eq(mygpt_dataloader_batch(&dl, 0, in, tg, NULL), MYGPT_OK);
    static const int64_t want_in[32] = {40,   367,  2885, 1464, 1807, 3619,  402,  271,
                                        10899, 2138, 257,  7026, 15632, 438, 2016, 257,
                                        922,  5891, 1576, 438,  568,  340,   373,  645,
                                        1049, 5975, 284,  502,  284,  3285,  326,  11};
    for (int i = 0; i < 32; i++) {
        cr_expect_eq(in[i], want_in[i], "inputs[%d][%d]", i / 4, i % 4);
        cr_expect_eq(tg[i], ids[(i / 4) * 4 + i % 4 + 1], "targets[%d][%d] is shifted by one", i / 4, i % 4);
    }
    mygpt_error err = {0};
    cr_expect_eq(mygpt_dataloader_batch(&dl, 160, in, tg, &err), MYGPT_ERANGE);
    cr_expect_eq(mygpt_dataloader_init(&dl, ids, n, 0, 4, 4, &err), MYGPT_EINVAL);
    encoded_verdict_free(&v);
}

Test(dataloader, window_arithmetic_without_a_vocabulary)
{
    int64_t ids[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    mygpt_dataloader dl;
    cr_assert_eq(mygpt_dataloader_init(&dl, ids, 10, 2, 4, 2, NULL), MYGPT_OK);
    cr_expect_eq(dl.num_windows, 3); /* range(0, 6, 2) */
    cr_expect_eq(dl.num_batches, 1);
    int64_t in[8], tg[8];
    cr_assert_eq(mygpt_dataloader_batch(&dl, 0, in, tg, NULL), MYGPT_OK);
    cr_expect_eq(in[4], 2);
    cr_expect_eq(tg[7], 6);
    cr_assert_eq(mygpt_dataloader_init(&dl, ids, 4, 1, 4, 1, NULL), MYGPT_OK);
    cr_expect_eq(dl.num_windows, 0, "a text no longer than max_length has no window");
}

Test(tokenizer_errors, bad_text_and_bad_ids)
{
    mygpt_tokenizer *tok = tokenizer_or_skip();
    int64_t *ids;
    size_t n;
    mygpt_error err = {0};
    cr_expect_eq(mygpt_encode(tok, "ok \xff\xfe", 5, &ids, &n, &err), MYGPT_EFORMAT);
    cr_expect_str_eq(err.message, "the text is not valid UTF-8 (byte offset 3)");
    cr_expect_eq(mygpt_encode(tok, "\xed\xa0\x80", 3, &ids, &n, &err), MYGPT_EFORMAT, "a surrogate");
    cr_expect_eq(mygpt_encode(tok, "\xc0\xaf", 2, &ids, &n, &err), MYGPT_EFORMAT, "overlong");
    const int64_t bad[2] = {15496, 50257};
    char *text;
    size_t len;
    cr_expect_eq(mygpt_decode(tok, bad, 2, &text, &len, &err), MYGPT_ERANGE);
    cr_expect_str_eq(err.message, "token id 50257 is outside [0, 50257)");
    const int64_t neg[1] = {-1};
    cr_expect_eq(mygpt_decode(tok, neg, 1, &text, &len, &err), MYGPT_ERANGE);
    mygpt_tokenizer_free(tok);
}

/* Writes `content` to a temporary file; returns its path (static buffer k). */
static const char *temp_file(int k, const char *content, size_t n)
{
    static char paths[4][64];
    snprintf(paths[k], sizeof paths[k], "/tmp/mygpt-test-%d-%d", (int)getpid(), k);
    FILE *f = fopen(paths[k], "wb");
    fwrite(content, 1, n, f);
    fclose(f);
    return paths[k];
}

Test(tokenizer_errors, missing_and_corrupt_vocabularies)
{
    mygpt_tokenizer *tok = (mygpt_tokenizer *)1;
    mygpt_error err = {0};
    cr_expect_eq(mygpt_tokenizer_load_dir(&tok, "/nonexistent-dir", &err), MYGPT_EIO);
    cr_expect_null(tok);
    cr_expect(strstr(err.message, "scripts/fetch-data.sh") != NULL, "%s", err.message);

    const char *bpe_ok = temp_file(1, "#version: 0.2\n", 14);
    const char *cases[][2] = {
        {"{\"a\": 0, \"b\": 1", "truncated file"},  /* truncated */
        {"{\"a\": 0, \"b", "unterminated string"},
        {"[1, 2]", "not a JSON object"},
        {"{\"a\": 0, \"a\": 1}", "duplicates"},
        {"{\"a\": 0, \"b\": 5}", "outside [0, 2)"},
        {"{\"a\" 0}", "expected ':'"},
        {"{\"\\u4e16\": 0}", "not in GPT-2's byte alphabet"},
        {"{\"a\": x}", "malformed JSON: expected a value"},
        {"{\"a\": \"0\"}", "expected a token id"},
        /* the one strict JSON reader refuses these too */
        {"{\"a\": 0, \"b\": 1} trailing", "bytes after the JSON value"},
        {"{\"a\": +0, \"b\": 1}", "malformed JSON"},
        {"{\"a\": 00, \"b\": 1}", "leading zero"},
        {"{\"a\": 0.5}", "expected a token id"},
        {"{\"a\": 0}", "no token for byte"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *js = temp_file(0, cases[i][0], strlen(cases[i][0]));
        cr_expect_neq(mygpt_tokenizer_load(&tok, js, bpe_ok, &err), MYGPT_OK, "case %zu", i);
        cr_expect(strstr(err.message, cases[i][1]) != NULL, "case %zu: '%s' lacks '%s'", i,
                  err.message, cases[i][1]);
    }
    for (int k = 0; k < 2; k++) {
        char p[64];
        snprintf(p, sizeof p, "/tmp/mygpt-test-%d-%d", (int)getpid(), k);
        unlink(p);
    }
}

/* An encoder.json that parses but is no byte-level vocabulary (a byte without its token,
 * one token spelt twice) is refused naming the file, as every other fault of it is */
Test(tokenizer_errors, a_vocabulary_without_every_byte_or_with_a_token_twice_names_its_file)
{
    mygpt_tokenizer *tok = (mygpt_tokenizer *)1;
    mygpt_error err = {0};
    const char *bpe_ok = temp_file(1, "#version: 0.2\n", 14);
    const char *cases[][2] = {
        {"{\"a\": 0}", ": no token for byte 0x00"},
        {"{\"a\": 0, \"\\u0061\": 1}", ": token id 1 duplicates another token"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *js = temp_file(0, cases[i][0], strlen(cases[i][0]));
        char want[200];
        snprintf(want, sizeof want, "%s%s", js, cases[i][1]);
        cr_expect_eq(mygpt_tokenizer_load(&tok, js, bpe_ok, &err), MYGPT_EFORMAT, "case %zu", i);
        cr_expect_str_eq(err.message, want, "case %zu", i);
    }
    for (int k = 0; k < 2; k++) {
        char p[64];
        snprintf(p, sizeof p, "/tmp/mygpt-test-%d-%d", (int)getpid(), k);
        unlink(p);
    }
}

Test(tokenizer_errors, corrupt_merges_are_refused)
{
    mygpt_tokenizer *tok = (mygpt_tokenizer *)1;
    mygpt_error err = {0};
    /* the real encoder.json with broken merges */
    const char *enc = data_file_or_skip("encoder.json");
    const char *merges[][2] = {
        {"#version: 0.2\n\xc4\xa0\n", "two tokens separated by one space"}, /* one token */
        {"#version: 0.2\n\xc4\xa0 a\n", "expected 256"},                    /* merge 1 first */
        {"#version: 0.2\nzz qq\n", "not in encoder.json"},
        {"#version: 0.2\n", "no merges"},
    };
    for (size_t i = 0; i < sizeof merges / sizeof merges[0]; i++) {
        const char *bpe = temp_file(2, merges[i][0], strlen(merges[i][0]));
        cr_expect_eq(mygpt_tokenizer_load(&tok, enc, bpe, &err), MYGPT_EFORMAT, "merges %zu", i);
        cr_expect(strstr(err.message, merges[i][1]) != NULL, "merges %zu: '%s' lacks '%s'", i,
                  err.message, merges[i][1]);
    }
    char p[64];
    snprintf(p, sizeof p, "/tmp/mygpt-test-%d-%d", (int)getpid(), 2);
    unlink(p);
    cr_expect_null(tok);
}

/* A folder whose "DIR/encoder.json" does not fit is refused, never cut to "DIR/encoder.j"
 * (which another file could be) */
Test(tokenizer_errors, a_vocabulary_folder_too_long_for_its_paths_is_refused)
{
    const char *dir = too_long_data_dir(); // DIR/vocab.bpe fits, DIR/encoder.json does not
    mygpt_tokenizer *tok = (mygpt_tokenizer *)1;
    mygpt_error err = {0};
    cr_expect_eq(mygpt_tokenizer_load_dir(&tok, dir, &err), MYGPT_EINVAL, "%s", err.message);
    cr_expect_null(tok);
    cr_expect(strstr(err.message, "too long") != NULL && strstr(err.message, "cannot open") == NULL, "%s",
              err.message);
}
