/*
 * 206_book_unknown_word - the book's chapter 2 (2.4 Adding special context tokens):
 * SimpleTokenizerV1 fails on "Hello", a word the-verdict does not have. The notebook shows
 * Python's KeyError; this program prints its last line, as the error it is, and exits 0
 * (the failure is the chapter's point).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "book_text.h"

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "206_book_unknown_word",
                 "The book's chapter 2, section 2.4: SimpleTokenizerV1 meets a word that is not in\n"
                 "its vocabulary (Python's KeyError).",
                 0, 0);
    size_t len;
    char *raw_text = book_verdict(&ch, &len);
    mygpt_simple_tokenizer tok;
    mygpt_error err = {0};
    chapter_check(&ch, mygpt_simple_tokenizer_init(&tok, raw_text, len, 0, &err), &err);
    const char *text = "Hello, do you like tea. Is this-- a test?";
    int64_t *ids;
    size_t n;
    const mygpt_status st = mygpt_simple_encode(&tok, text, strlen(text), &ids, &n, &err);
    if (st == MYGPT_ERANGE) {
        printf("%s\n", err.message); // KeyError: 'Hello'
    } else {
        chapter_check(&ch, st, &err);
        fprintf(stderr, "%s: every word of \"%s\" is in the vocabulary\n", ch.name, text);
        free(ids);
        return 1;
    }
    mygpt_simple_tokenizer_free(&tok);
    free(raw_text);
    return 0;
}
