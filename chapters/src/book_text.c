/*
 * book_text.c - the book's chapter-2 helpers (book_text.h).
 */
#include "book_text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *book_verdict(const chapter *ch, size_t *len)
{
    static const char *const files[1] = {"the-verdict.txt"};
    char dir[4096], path[4200];
    chapter_data_dir(ch, dir, sizeof dir, files, 1);
    snprintf(path, sizeof path, "%s/the-verdict.txt", dir);
    char *text;
    mygpt_error err = {0};
    chapter_check(ch, mygpt_read_file(path, &text, len, &err), &err);
    return text;
}

mygpt_tokenizer *book_gpt2(const chapter *ch)
{
    static const char *const files[2] = {"encoder.json", "vocab.bpe"};
    char dir[4096];
    chapter_data_dir(ch, dir, sizeof dir, files, 2);
    mygpt_tokenizer *tok;
    mygpt_error err = {0};
    chapter_check(ch, mygpt_tokenizer_load_dir(&tok, dir, &err), &err);
    return tok;
}

int64_t *book_encode(const chapter *ch, const mygpt_tokenizer *tok, const char *text, size_t *n)
{
    int64_t *ids;
    mygpt_error err = {0};
    chapter_check(ch, mygpt_encode(tok, text, strlen(text), &ids, n, &err), &err);
    return ids;
}

void book_print_decoded(const chapter *ch, const mygpt_tokenizer *tok, const int64_t *ids, size_t n)
{
    char *text;
    size_t len;
    mygpt_error err = {0};
    chapter_check(ch, mygpt_decode(tok, ids, n, &text, &len, &err), &err);
    mygpt_strbuf sb = {0};
    mygpt_sb_append_replaced(&sb, text, len);
    fputs(mygpt_sb_str(&sb), stdout);
    mygpt_sb_free(&sb);
    free(text);
}

void book_print_param(const float *data, int ndim, const int64_t *shape)
{
    mygpt_tview v;
    mygpt_strbuf sb = {0};
    const mygpt_torch_opts opts = {.requires_grad = 1, .parameter = 1};
    if (mygpt_tview_make(&v, MYGPT_F32, data, ndim, shape, NULL) == MYGPT_OK)
        mygpt_torch_repr(&sb, &v, &opts);
    fputs(mygpt_sb_str(&sb), stdout);
    mygpt_sb_free(&sb);
}

void py_str(const char *s)
{
    const char quote = strchr(s, '\'') && !strchr(s, '"') ? '"' : '\'';
    putchar(quote);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '\\' || *p == (unsigned char)quote)
            printf("\\%c", *p);
        else if (*p == '\n')
            fputs("\\n", stdout);
        else if (*p == '\t')
            fputs("\\t", stdout);
        else if (*p == '\r')
            fputs("\\r", stdout);
        else if (*p < 0x20 || *p == 0x7f)
            printf("\\x%02x", *p);
        else
            putchar(*p); // printable ASCII and UTF-8 (Python shows printable characters as they are)
    }
    putchar(quote);
}

void py_words(const char *const *words, size_t n)
{
    putchar('[');
    for (size_t i = 0; i < n; i++) {
        if (i)
            fputs(", ", stdout);
        py_str(words[i]);
    }
    putchar(']');
}

void py_ints(const int64_t *v, size_t n)
{
    putchar('[');
    for (size_t i = 0; i < n; i++)
        printf(i ? ", %lld" : "%lld", (long long)v[i]);
    putchar(']');
}
