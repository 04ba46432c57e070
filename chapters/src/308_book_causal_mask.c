/*
 * 308_book_causal_mask - the book's chapter 3 (3.5.1 Applying a causal attention mask):
 * SelfAttention_v2's weights (torch.manual_seed(789)), the lower-triangular mask, the
 * weights masked and renormalized by their row sums, then the efficient way: the scores
 * above the diagonal set to -inf before the softmax, which gives the same weights.
 */
#include <stdio.h>

#include "book_attention.h"

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "308_book_causal_mask",
                 "The book's chapter 3, section 3.5.1: SelfAttention_v2's weights (seed 789), masked\n"
                 "by torch.tril and renormalized, then by -inf scores before the softmax.",
                 789, CH_SEED);
    enum { T = BOOK_TOKENS };
    const int64_t tt[2] = {T, T};
    mygpt_rng rng = {0};
    mygpt_rng_seed(&rng, ch.seed);
    book_module sa_v2;
    book_module_init(&ch, &rng, &sa_v2, BOOK_D_OUT, 1, 0);
    sa_v2.m.causal = 0;
    sa_v2.m.unbatched = 1; // SelfAttention_v2 takes one (T, d_in) matrix: its products are torch.mm's
    mygpt_mha_steps s; // queries = sa_v2.W_query(inputs), keys, values, weights
    book_module_run(&ch, &sa_v2, BOOK_INPUTS, 1, T, NULL, &s);
    book_print(NULL, s.weights, 2, tt, "SoftmaxBackward0");
    float mask_simple[T * T], masked_simple[T * T], masked[T * T], weights[T * T];
    for (int i = 0; i < T; i++) // torch.tril(torch.ones(context_length, context_length))
        for (int j = 0; j < T; j++)
            mask_simple[i * T + j] = j <= i ? 1.0f : 0.0f;
    book_print(NULL, mask_simple, 2, tt, NULL);
    for (int i = 0; i < T * T; i++) // attn_weights * mask_simple
        masked_simple[i] = s.weights[i] * mask_simple[i];
    book_print(NULL, masked_simple, 2, tt, "MulBackward0");
    for (int i = 0; i < T; i++) { // masked_simple / masked_simple.sum(dim=-1, keepdim=True)
        const float row_sum = mygpt_sum_torch(masked_simple + i * T, T);
        for (int j = 0; j < T; j++)
            masked_simple[i * T + j] /= row_sum;
    }
    book_print(NULL, masked_simple, 2, tt, "DivBackward0");
    for (int i = 0; i < T * T; i++) // attn_scores.masked_fill(mask.bool(), -torch.inf)
        masked[i] = s.scores[i];
    mygpt_causal_mask(masked, 1, T);
    book_print(NULL, masked, 2, tt, "MaskedFillBackward0");
    mygpt_attention_weights(weights, masked, T, T, BOOK_D_OUT); // softmax(masked / sqrt(d_k))
    book_print(NULL, weights, 2, tt, "SoftmaxBackward0");
    mygpt_mha_steps_free(&s);
    return 0;
}
