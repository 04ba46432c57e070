/*
 * 301_book_attention_scores - the book's chapter 3 (3.3.1 A simple self-attention
 * mechanism without trainable weights): the attention scores of the second word,
 * "journey", against all six, each a dot product; the first of them as a loop and as
 * torch.dot.
 */
#include <stdio.h>

#include "book_attention.h"

/* torch.dot(a, b) of two 3-d rows: the products summed in order in float32 (a (1, 3)
 * times b (1, 3) transposed) */
static float dot3(const float *a, const float *b)
{
    float sum;
    mygpt_matmul_naive(&sum, a, b, NULL, 1, BOOK_D_IN, 1);
    return sum;
}

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "301_book_attention_scores",
                 "The book's chapter 3, section 3.3.1: attn_scores_2, the dot products of the query\n"
                 "inputs[1] with every input, and the first one computed by a loop.",
                 0, 0);
    const float *query = BOOK_INPUTS + BOOK_D_IN; // inputs[1]
    // lesson: dot_scores
    float attn_scores_2[BOOK_TOKENS];             // (6,)
    for (int i = 0; i < BOOK_TOKENS; i++)
        attn_scores_2[i] = dot3(BOOK_INPUTS + i * BOOK_D_IN, query);
    book_print(NULL, attn_scores_2, 1, (int64_t[]){BOOK_TOKENS}, NULL);
    float res = 0.0f; // res += inputs[0][idx] * query[idx]
    for (int idx = 0; idx < BOOK_D_IN; idx++)
        res += BOOK_INPUTS[idx] * query[idx];
    // end lesson: dot_scores
    book_print(NULL, &res, 0, NULL, NULL);
    const float dot = dot3(BOOK_INPUTS, query);
    book_print(NULL, &dot, 0, NULL, NULL);
    return 0;
}
