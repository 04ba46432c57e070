/*
 * 306_book_self_attention_v1 - the book's chapter 3 (3.4.2 Implementing a compact
 * SelfAttention Python class): SelfAttention_v1(3, 2) after torch.manual_seed(123), its
 * weights nn.Parameter(torch.rand(3, 2)), and its context vectors for the six words.
 */
#include <stdio.h>

#include "book_attention.h"

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "306_book_self_attention_v1",
                 "The book's chapter 3, section 3.4.2: SelfAttention_v1(d_in=3, d_out=2) after\n"
                 "torch.manual_seed(123) on the six words.",
                 123, CH_SEED);
    enum { T = BOOK_TOKENS, D_IN = BOOK_D_IN, D_OUT = BOOK_D_OUT };
    mygpt_rng rng = {0};
    mygpt_rng_seed(&rng, ch.seed);
    float W_query[D_IN * D_OUT], W_key[D_IN * D_OUT], W_value[D_IN * D_OUT]; // (d_in, d_out)
    book_rand_qkv(&ch, &rng, W_query, W_key, W_value);
    // lesson: self_attention_v1
    // forward: keys = x @ W_key; queries = x @ W_query; values = x @ W_value
    float keys[T * D_OUT], queries[T * D_OUT], values[T * D_OUT];
    mygpt_mm(keys, BOOK_INPUTS, W_key, T, D_IN, D_OUT);
    mygpt_mm(queries, BOOK_INPUTS, W_query, T, D_IN, D_OUT);
    mygpt_mm(values, BOOK_INPUTS, W_value, T, D_IN, D_OUT);
    float attn_scores[T * T], attn_weights[T * T], context_vec[T * D_OUT];
    mygpt_error err = {0}; // queries @ keys.T (omega), torch.mm's fused multiply-adds:
    chapter_check(&ch, mygpt_matmul(attn_scores, queries, keys, NULL, T, D_OUT, T, &err), &err);
    mygpt_attention_weights(attn_weights, attn_scores, T, T, D_OUT);   // softmax(omega / sqrt(d_k))
    mygpt_mm(context_vec, attn_weights, values, T, T, D_OUT);
    // end lesson: self_attention_v1
    book_print(NULL, context_vec, 2, (int64_t[]){T, D_OUT}, "MmBackward0");
    return 0;
}
