/*
 * 302_book_attention_weights - the book's chapter 3 (3.3.1): the second word's scores
 * made weights three ways: divided by their sum, by a naive softmax (exp over the sum
 * of exps) and by torch.softmax; each with its sum.
 */
#include <stdio.h>

#include "book_attention.h"

static void print_weights(const float *w)
{
    const int64_t shape[1] = {BOOK_TOKENS};
    book_print("Attention weights:", w, 1, shape, NULL);
    const float sum = mygpt_sum_torch(w, BOOK_TOKENS);
    book_print("Sum:", &sum, 0, NULL, NULL);
}

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "302_book_attention_weights",
                 "The book's chapter 3, section 3.3.1: attention weights of the query inputs[1] by\n"
                 "normalizing, by a naive softmax and by torch.softmax, with their sums.",
                 0, 0);
    const float *query = BOOK_INPUTS + BOOK_D_IN;
    float scores[BOOK_TOKENS], w[BOOK_TOKENS], e[BOOK_TOKENS];
    for (int i = 0; i < BOOK_TOKENS; i++) { // attn_scores_2[i] = torch.dot(x_i, query)
        float s = 0.0f;
        for (int k = 0; k < BOOK_D_IN; k++)
            s += BOOK_INPUTS[i * BOOK_D_IN + k] * query[k];
        scores[i] = s;
    }
    const float total = mygpt_sum_torch(scores, BOOK_TOKENS); // attn_scores_2 / attn_scores_2.sum()
    for (int i = 0; i < BOOK_TOKENS; i++)
        w[i] = scores[i] / total;
    print_weights(w);
    mygpt_exp_torch(e, scores, BOOK_TOKENS); // torch.exp(x) / torch.exp(x).sum(dim=0)
    const float esum = mygpt_sum_torch(e, BOOK_TOKENS);
    for (int i = 0; i < BOOK_TOKENS; i++)
        w[i] = e[i] / esum;
    print_weights(w);
    mygpt_softmax_lastdim(w, scores, 1, BOOK_TOKENS); // torch.softmax(attn_scores_2, dim=0)
    print_weights(w);
    return 0;
}
