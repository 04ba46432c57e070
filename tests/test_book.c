/*
 * test_book.c - the library pieces of the book's chapters 2-4: re.split as Python splits,
 * the simple tokenizers V1 and V2 (vocabulary, encode, decode, their errors).
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "mygpt.h"

/* w holds exactly the n strings of want */
static void expect_words(const mygpt_words *w, const char *const *want, size_t n)
{
    cr_assert_eq(w->n, n, "%zu pieces, not %zu", w->n, n);
    for (size_t i = 0; i < n; i++)
        cr_expect_str_eq(w->items[i], want[i], "piece %zu", i);
}

Test(book, regex_split_keeps_separators_and_empty_pieces)
{
    // Python: re.split(r'([,.]|\s)', "Hi, yo.")
    const char *text = "Hi, yo.";
    const char *want[] = {"Hi", ",", "", " ", "yo", ".", ""};
    mygpt_words w;
    cr_assert_eq(mygpt_regex_split("([,.]|\\s)", text, strlen(text), 0, &w, NULL), MYGPT_OK);
    expect_words(&w, want, 7);
    mygpt_words_free(&w);
    // [item.strip() for item in result if item.strip()]
    const char *stripped[] = {"Hi", ",", "yo", "."};
    cr_assert_eq(mygpt_regex_split("([,.]|\\s)", text, strlen(text), 1, &w, NULL), MYGPT_OK);
    expect_words(&w, stripped, 4);
    mygpt_words_free(&w);
}

Test(book, regex_split_refuses_bad_patterns)
{
    mygpt_words w;
    mygpt_error err = {0};
    cr_expect_eq(mygpt_regex_split("(", "a", 1, 0, &w, &err), MYGPT_EINVAL);
    cr_expect(strstr(err.message, "does not compile") != NULL, "%s", err.message);
    cr_expect_eq(mygpt_regex_split("(x*)", "ab", 2, 0, &w, &err), MYGPT_EINVAL);
    cr_expect(strstr(err.message, "empty string") != NULL, "%s", err.message);
    cr_expect_eq(w.n, 0);
}

Test(book, simple_tokenizer_v1)
{
    const char *text = "the cat, the dog--a cat!";
    mygpt_simple_tokenizer tok;
    cr_assert_eq(mygpt_simple_tokenizer_init(&tok, text, strlen(text), 0, NULL), MYGPT_OK);
    // sorted(set(...)): punctuation sorts before letters
    const char *vocab[] = {"!", ",", "--", "a", "cat", "dog", "the"};
    expect_words(&tok.vocab, vocab, 7);
    cr_expect_eq(tok.unk, -1);
    int64_t *ids;
    size_t n;
    const char *line = "the dog, a cat!";
    cr_assert_eq(mygpt_simple_encode(&tok, line, strlen(line), &ids, &n, NULL), MYGPT_OK);
    const int64_t want[] = {6, 5, 1, 3, 4, 0};
    cr_assert_eq(n, 6);
    cr_expect_arr_eq(ids, want, sizeof want);
    char *back;
    cr_assert_eq(mygpt_simple_decode(&tok, ids, n, &back, NULL), MYGPT_OK);
    cr_expect_str_eq(back, "the dog, a cat!"); // no space before , and !
    free(back);
    free(ids);
    mygpt_error err = {0};
    cr_expect_eq(mygpt_simple_encode(&tok, "a bird", 6, &ids, &n, &err), MYGPT_ERANGE);
    cr_expect_str_eq(err.message, "KeyError: 'bird'");
    cr_expect_null(ids);
    const int64_t bad[1] = {7};
    cr_expect_eq(mygpt_simple_decode(&tok, bad, 1, &back, &err), MYGPT_ERANGE);
    mygpt_simple_tokenizer_free(&tok);
}

Test(book, simple_tokenizer_v2_maps_unknown_words)
{
    const char *text = "a b c";
    mygpt_simple_tokenizer tok;
    cr_assert_eq(mygpt_simple_tokenizer_init(&tok, text, strlen(text), 1, NULL), MYGPT_OK);
    cr_assert_eq(tok.vocab.n, 5);
    cr_expect_str_eq(tok.vocab.items[3], "<|endoftext|>");
    cr_expect_eq(tok.unk, 4);
    cr_expect_eq(mygpt_simple_id(&tok, "<|endoftext|>"), 3);
    const char *line = "a x <|endoftext|> c.";
    int64_t *ids;
    size_t n;
    cr_assert_eq(mygpt_simple_encode(&tok, line, strlen(line), &ids, &n, NULL), MYGPT_OK);
    const int64_t want[] = {0, 4, 3, 2, 4};
    cr_assert_eq(n, 5);
    cr_expect_arr_eq(ids, want, sizeof want);
    char *back;
    cr_assert_eq(mygpt_simple_decode(&tok, ids, n, &back, NULL), MYGPT_OK);
    cr_expect_str_eq(back, "a <|unk|> <|endoftext|> c <|unk|>");
    free(back);
    free(ids);
    mygpt_simple_tokenizer_free(&tok);
}
