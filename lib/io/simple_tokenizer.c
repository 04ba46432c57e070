/*
 * simple_tokenizer.c - the book's chapter-2 tokenizers (see mygpt/tokenizer.h): Python's
 * re.split with PCRE2, a vocabulary of the sorted distinct words, and
 * SimpleTokenizerV1/V2's encode and decode.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "mygpt/tokenizer.h"
#include "base/base.h"

#include <pcre2.h>
#include <stdlib.h>
#include <string.h>

void mygpt_words_free(mygpt_words *w)
{
    if (!w)
        return;
    for (size_t i = 0; w->items && i < w->n; i++)
        free(w->items[i]);
    free(w->items);
    w->items = NULL;
    w->n = 0;
}

/* Appends a copy of s[0..n) to w; with strip, without the ASCII whitespace around it, and
 * not at all when nothing is left. *cap is w->items' room. */
static mygpt_status words_push(mygpt_words *w, size_t *cap, const char *s, size_t n, int strip,
                               mygpt_error *err)
{
    static const char *const space = " \t\n\r\v\f";
    // lesson: strip
    if (strip) {
        while (n > 0 && strchr(space, s[0]) && s[0] != '\0') {
            s++;
            n--;
        }
        while (n > 0 && strchr(space, s[n - 1]) && s[n - 1] != '\0')
            n--;
        if (n == 0)
            return MYGPT_OK;
    }
    // end lesson: strip
    if (w->n == *cap) {
        const size_t grown = *cap ? 2 * *cap : 64;
        char **items = realloc(w->items, grown * sizeof *items);
        if (!items)
            return mygpt_fail(err, MYGPT_ENOMEM, "out of memory splitting a text");
        w->items = items;
        *cap = grown;
    }
    char *copy = malloc(n + 1);
    if (!copy)
        return mygpt_fail(err, MYGPT_ENOMEM, "out of memory splitting a text");
    memcpy(copy, s, n);
    copy[n] = '\0';
    w->items[w->n++] = copy;
    return MYGPT_OK;
}

/* Appends the pieces of text[0..len) at and after the first match at or after `at`:
 * the text before each match, then each of its groups (an unset group is left out). */
static mygpt_status split_all(pcre2_code *re, pcre2_match_data *md, const char *text, size_t len, int strip,
                              mygpt_words *out, mygpt_error *err)
{
    size_t cap = 0, at = 0, piece = 0;
    const uint32_t groups = pcre2_get_ovector_count(md);
    for (;;) {
        const int rc = pcre2_match(re, (PCRE2_SPTR)text, len, at, 0, md, NULL);
        if (rc == PCRE2_ERROR_NOMATCH)
            break;
        if (rc < 0)
            return mygpt_fail(err, MYGPT_EFORMAT, "the text cannot be matched (PCRE2 error %d)", rc);
        // lesson: split_pieces
        const PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
        if (ov[1] == ov[0])
            return mygpt_fail(err, MYGPT_EINVAL, "the split pattern matches the empty string");
        MYGPT_TRY(words_push(out, &cap, text + piece, ov[0] - piece, strip, err));
        for (uint32_t g = 1; g < groups && g < (uint32_t)rc; g++)
            if (ov[2 * g] != PCRE2_UNSET)
                MYGPT_TRY(words_push(out, &cap, text + ov[2 * g], ov[2 * g + 1] - ov[2 * g], strip, err));
        at = piece = ov[1];
        // end lesson: split_pieces
    }
    return words_push(out, &cap, text + piece, len - piece, strip, err);
}

mygpt_status mygpt_regex_split(const char *pattern, const char *text, size_t len, int strip, mygpt_words *out,
                               mygpt_error *err)
{
    out->items = NULL;
    out->n = 0;
    int code;
    PCRE2_SIZE where;
    // PCRE2_UCP: \s is Unicode's white space, as in Python's str patterns but for U+001C to
    // U+001F (Python's too) and U+180E (PCRE2's too): the chapters' texts hold neither
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED, PCRE2_UTF | PCRE2_UCP, &code,
                                   &where, NULL);
    if (!re)
        return mygpt_fail(err, MYGPT_EINVAL, "the split pattern does not compile at offset %zu (PCRE2 error %d)",
                          (size_t)where, code);
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
    mygpt_status st = md ? split_all(re, md, text, len, strip, out, err)
                         : mygpt_fail(err, MYGPT_ENOMEM, "out of memory splitting a text");
    pcre2_match_data_free(md);
    pcre2_code_free(re);
    if (st == MYGPT_OK && !out->items && !(out->items = malloc(sizeof *out->items))) // no word: an empty array
        st = mygpt_fail(err, MYGPT_ENOMEM, "out of memory splitting a text");
    if (st != MYGPT_OK)
        mygpt_words_free(out);
    return st;
}

static int compare_words(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

mygpt_status mygpt_simple_tokenizer_init(mygpt_simple_tokenizer *tok, const char *text, size_t len,
                                         int specials, mygpt_error *err)
{
    tok->unk = -1;
    mygpt_words *w = &tok->vocab;
    MYGPT_TRY(mygpt_regex_split(MYGPT_SIMPLE_PATTERN, text, len, 1, w, err));
    // lesson: vocabulary
    // sorted(set(preprocessed)): strcmp orders UTF-8 as Python orders code points
    qsort(w->items, w->n, sizeof *w->items, compare_words);
    size_t kept = 0;
    for (size_t i = 0; i < w->n; i++) {
        if (kept > 0 && strcmp(w->items[kept - 1], w->items[i]) == 0)
            free(w->items[i]);
        else
            w->items[kept++] = w->items[i];
    }
    w->n = kept;
    // end lesson: vocabulary
    if (specials) {
        // lesson: specials
        size_t cap = w->n;
        mygpt_status st = words_push(w, &cap, MYGPT_ENDOFTEXT, strlen(MYGPT_ENDOFTEXT), 0, err);
        if (st == MYGPT_OK)
            st = words_push(w, &cap, "<|unk|>", 7, 0, err);
        if (st != MYGPT_OK) {
            mygpt_words_free(w);
            return st;
        }
        tok->unk = (int64_t)w->n - 1;
        // end lesson: specials
    }
    return MYGPT_OK;
}

void mygpt_simple_tokenizer_free(mygpt_simple_tokenizer *tok)
{
    if (!tok)
        return;
    mygpt_words_free(&tok->vocab);
    tok->unk = -1;
}

int64_t mygpt_simple_id(const mygpt_simple_tokenizer *tok, const char *word)
{
    // the sorted words first (binary search), then the specials after them
    const size_t sorted = tok->vocab.n - (tok->unk >= 0 ? 2 : 0);
    const char *const *hit =
        sorted ? bsearch(&word, tok->vocab.items, sorted, sizeof *tok->vocab.items, compare_words) : NULL;
    if (hit)
        return (int64_t)(hit - (const char *const *)tok->vocab.items);
    for (size_t i = sorted; i < tok->vocab.n; i++)
        if (strcmp(tok->vocab.items[i], word) == 0)
            return (int64_t)i;
    return -1;
}

mygpt_status mygpt_simple_encode(const mygpt_simple_tokenizer *tok, const char *text, size_t len, int64_t **ids,
                                 size_t *n, mygpt_error *err)
{
    *ids = NULL;
    *n = 0;
    mygpt_words w;
    MYGPT_TRY(mygpt_regex_split(MYGPT_SIMPLE_PATTERN, text, len, 1, &w, err));
    mygpt_status st = MYGPT_OK;
    int64_t *out = malloc((w.n ? w.n : 1) * sizeof *out);
    if (!out)
        st = mygpt_fail(err, MYGPT_ENOMEM, "out of memory encoding %zu words", w.n);
    // lesson: simple_encode
    for (size_t i = 0; st == MYGPT_OK && i < w.n; i++) {
        out[i] = mygpt_simple_id(tok, w.items[i]);
        if (out[i] < 0 && tok->unk >= 0)
            out[i] = tok->unk; // V2: item if item in self.str_to_int else "<|unk|>"
        else if (out[i] < 0)
            st = mygpt_fail(err, MYGPT_ERANGE, "KeyError: '%.200s'", w.items[i]);
    }
    // end lesson: simple_encode
    if (st == MYGPT_OK) {
        *ids = out;
        *n = w.n;
    } else {
        free(out);
    }
    mygpt_words_free(&w);
    return st;
}

/* True for the characters decode puts back against the word before them. */
static int is_closing(char c)
{
    return c != '\0' && strchr(",.?!\"()'", c) != NULL;
}

mygpt_status mygpt_simple_decode(const mygpt_simple_tokenizer *tok, const int64_t *ids, size_t n, char **text,
                                 mygpt_error *err)
{
    *text = NULL;
    size_t total = 1;
    for (size_t i = 0; i < n; i++) {
        if (ids[i] < 0 || (size_t)ids[i] >= tok->vocab.n)
            return mygpt_fail(err, MYGPT_ERANGE, "token id %lld is outside [0, %zu)", (long long)ids[i],
                              tok->vocab.n);
        total += strlen(tok->vocab.items[ids[i]]) + 1;
    }
    char *joined = malloc(total), *out = malloc(total);
    if (!joined || !out) {
        free(joined);
        free(out);
        return mygpt_fail(err, MYGPT_ENOMEM, "out of memory decoding %zu ids", n);
    }
    // " ".join([self.int_to_str[i] for i in ids])
    size_t len = 0;
    for (size_t i = 0; i < n; i++) {
        const size_t k = strlen(tok->vocab.items[ids[i]]);
        if (i > 0)
            joined[len++] = ' ';
        memcpy(joined + len, tok->vocab.items[ids[i]], k);
        len += k;
    }
    joined[len] = '\0';
    // lesson: simple_decode
    // re.sub(r'\s+([,.?!"()\'])', r'\1', text): a run of whitespace before one of these goes
    size_t m = 0;
    for (size_t i = 0; i < len;) {
        size_t j = i;
        while (j < len && strchr(" \t\n\r\v\f", joined[j]))
            j++;
        if (j > i && j < len && is_closing(joined[j])) {
            out[m++] = joined[j];
            i = j + 1;
        } else if (j > i) {
            memcpy(out + m, joined + i, j - i);
            m += j - i;
            i = j;
        } else {
            out[m++] = joined[i++];
        }
    }
    out[m] = '\0';
    // end lesson: simple_decode
    free(joined);
    *text = out;
    return MYGPT_OK;
}
