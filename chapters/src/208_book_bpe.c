/*
 * 208_book_bpe - the book's chapter 2 (2.5 Byte pair encoding): GPT-2's tokenizer on a
 * text with <|endoftext|> and a made-up word, its ids and the ids decoded.
 */
#include <stdio.h>
#include <stdlib.h>

#include "book_text.h"

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "208_book_bpe",
                 "The book's chapter 2, section 2.5: GPT-2's byte pair encoding of a text with\n"
                 "<|endoftext|> and an unknown word, and its decoding.",
                 0, 0);
    mygpt_tokenizer *tok = book_gpt2(&ch);
    // the notebook's two string literals join without a space: "terraces" "of"
    const char *text = "Hello, do you like tea? <|endoftext|> In the sunlit terraces"
                       "of someunknownPlace.";
    size_t n;
    int64_t *integers = book_encode(&ch, tok, text, &n);
    py_ints(integers, n);
    printf("\n");
    book_print_decoded(&ch, tok, integers, n);
    printf("\n");
    free(integers);
    mygpt_tokenizer_free(tok);
    return 0;
}
