/*
 * 209_book_next_word - the book's chapter 2 (2.6 Data sampling with a sliding window):
 * the-verdict's GPT-2 ids, and from the 50th on, context windows of 1 to 4 ids and the
 * id each should predict, as ids and as text.
 */
#include <stdio.h>
#include <stdlib.h>

#include "book_text.h"

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "209_book_next_word",
                 "The book's chapter 2, section 2.6: the-verdict's token count, then input-target\n"
                 "pairs of a context of 4 tokens (enc_text[50:]), as ids and as text.",
                 0, 0);
    size_t n;
    mygpt_tokenizer *tok;
    int64_t *enc_text = book_verdict_ids(&ch, &tok, &n);
    printf("%zu\n", n);
    enum { CONTEXT_SIZE = 4, SAMPLE_START = 50 };
    if (n < SAMPLE_START + CONTEXT_SIZE + 1) {
        fprintf(stderr, "%s: the text has %zu tokens, fewer than the %d the chapter reads\n", ch.name, n,
                SAMPLE_START + CONTEXT_SIZE + 1);
        return 1;
    }
    const int64_t *enc_sample = enc_text + SAMPLE_START;
    printf("x: ");
    py_ints(enc_sample, CONTEXT_SIZE); // x = enc_sample[:context_size]
    printf("\ny:      ");
    py_ints(enc_sample + 1, CONTEXT_SIZE); // y = enc_sample[1:context_size+1]
    printf("\n");
    // lesson: context_pairs
    for (int i = 1; i <= CONTEXT_SIZE; i++) { // context ----> desired, as ids
        py_ints(enc_sample, (size_t)i);
        printf(" ----> %lld\n", (long long)enc_sample[i]);
    // end lesson: context_pairs
    }
    for (int i = 1; i <= CONTEXT_SIZE; i++) { // and as text
        book_print_decoded(&ch, tok, enc_sample, (size_t)i);
        printf(" ----> ");
        book_print_decoded(&ch, tok, enc_sample + i, 1);
        printf("\n");
    }
    free(enc_text);
    mygpt_tokenizer_free(tok);
    return 0;
}
