/*
 * 204_book_vocabulary - the book's chapter 2 (2.3 Converting tokens into token IDs): the
 * vocabulary of the-verdict's distinct words, sorted, its size and its first 51 entries.
 */
#include <stdio.h>
#include <stdlib.h>

#include "book_text.h"

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "204_book_vocabulary",
                 "The book's chapter 2, section 2.3: the vocabulary (sorted distinct words of\n"
                 "the-verdict), its size and its first 51 (token, id) pairs.",
                 0, 0);
    size_t len;
    char *raw_text = book_verdict(&ch, &len);
    mygpt_simple_tokenizer tok;
    mygpt_error err = {0};
    // all_words = sorted(set(preprocessed)); vocab = {token: integer ...}
    chapter_check(&ch, mygpt_simple_tokenizer_init(&tok, raw_text, len, 0, &err), &err);
    printf("%zu\n", tok.vocab.n);
    for (size_t i = 0; i < tok.vocab.n && i <= 50; i++) { // for i, item in enumerate(vocab.items())
        printf("(");
        py_str(tok.vocab.items[i]);
        printf(", %zu)\n", i);
    }
    mygpt_simple_tokenizer_free(&tok);
    free(raw_text);
    return 0;
}
