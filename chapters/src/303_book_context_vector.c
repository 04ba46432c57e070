/*
 * 303_book_context_vector - the book's chapter 3 (3.3.1): the second word's context
 * vector, the inputs weighted by its attention weights and summed.
 */
#include <stdio.h>

#include "book_attention.h"

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "303_book_context_vector",
                 "The book's chapter 3, section 3.3.1: context_vec_2, the sum of the inputs weighted\n"
                 "by torch.softmax of the query inputs[1]'s scores.",
                 0, 0);
    float scores[BOOK_TOKENS], attn_weights_2[BOOK_TOKENS];
    book_query_scores(scores); // (6,): x_i . query
    mygpt_softmax_lastdim(attn_weights_2, scores, 1, BOOK_TOKENS);
    // lesson: context_vec
    float context_vec_2[BOOK_D_IN] = {0}; // torch.zeros(query.shape)
    for (int i = 0; i < BOOK_TOKENS; i++)
        for (int k = 0; k < BOOK_D_IN; k++) // context_vec_2 += attn_weights_2[i] * x_i
            context_vec_2[k] += attn_weights_2[i] * BOOK_INPUTS[i * BOOK_D_IN + k];
    // end lesson: context_vec
    book_print(NULL, context_vec_2, 1, (int64_t[]){BOOK_D_IN}, NULL);
    return 0;
}
