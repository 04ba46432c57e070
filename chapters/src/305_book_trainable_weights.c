/*
 * 305_book_trainable_weights - the book's chapter 3 (3.4.1 Computing the attention
 * weights step by step): W_query, W_key and W_value from torch.rand after
 * torch.manual_seed(123); the second word's query, all keys and values, its score with
 * its own key, all its scores, its weights (scaled by sqrt(d_k)) and its context vector.
 */
#include <stdio.h>

#include "book_attention.h"

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "305_book_trainable_weights",
                 "The book's chapter 3, section 3.4.1: the query, keys and values of\n"
                 "torch.rand(3, 2) weights after torch.manual_seed(123), then the second word's\n"
                 "scores, weights and context vector.",
                 123, CH_SEED);
    enum { T = BOOK_TOKENS, D_IN = BOOK_D_IN, D_OUT = BOOK_D_OUT };
    mygpt_rng rng = {0};
    mygpt_rng_seed(&rng, ch.seed);
    float W_query[D_IN * D_OUT], W_key[D_IN * D_OUT], W_value[D_IN * D_OUT]; // (3, 2) each
    book_rand_qkv(&ch, &rng, W_query, W_key, W_value);
    const float *x_2 = BOOK_INPUTS + D_IN; // inputs[1]
    float query_2[D_OUT], keys[T * D_OUT], values[T * D_OUT];
    mygpt_mm(query_2, x_2, W_query, 1, D_IN, D_OUT); // x_2 @ W_query
    book_print(NULL, query_2, 1, (int64_t[]){D_OUT}, NULL);
    mygpt_mm(keys, BOOK_INPUTS, W_key, T, D_IN, D_OUT); // inputs @ W_key: (6, 2)
    mygpt_mm(values, BOOK_INPUTS, W_value, T, D_IN, D_OUT);
    printf("keys.shape: ");
    ch_size(2, (int64_t[]){T, D_OUT});
    printf("\nvalues.shape: ");
    ch_size(2, (int64_t[]){T, D_OUT});
    printf("\n");
    float attn_scores_2[T], attn_weights_2[T], context_vec_2[D_OUT];
    mygpt_error err = {0}; // query_2 @ keys.T: torch.mm, fused multiply-adds (mygpt_matmul's, K < 256)
    chapter_check(&ch, mygpt_matmul(attn_scores_2, query_2, keys, NULL, 1, D_OUT, T, &err), &err);
    book_print(NULL, &attn_scores_2[1], 0, NULL, NULL);                 // query_2.dot(keys[1])
    book_print(NULL, attn_scores_2, 1, (int64_t[]){T}, NULL);
    mygpt_attention_weights(attn_weights_2, attn_scores_2, 1, T, D_OUT); // d_k = keys.shape[1]
    book_print(NULL, attn_weights_2, 1, (int64_t[]){T}, NULL);
    mygpt_mm(context_vec_2, attn_weights_2, values, 1, T, D_OUT); // attn_weights_2 @ values
    book_print(NULL, context_vec_2, 1, (int64_t[]){D_OUT}, NULL);
    return 0;
}
