/*
 * 309_book_dropout - the book's chapter 3 (3.5.2 Masking additional attention weights
 * with dropout): nn.Dropout(0.5) after torch.manual_seed(123) on a 6 x 6 matrix of ones
 * (the kept ones scaled to 2), then on the causal weights of chapter 308.
 */
#include <stdio.h>

#include "book_attention.h"

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "309_book_dropout",
                 "The book's chapter 3, section 3.5.2: torch.nn.Dropout(0.5) after\n"
                 "torch.manual_seed(123) on torch.ones(6, 6), then on the causal attention weights\n"
                 "of SelfAttention_v2 (seed 789).",
                 123, CH_SEED);
    enum { T = BOOK_TOKENS };
    const int64_t tt[2] = {T, T};
    const double p = 0.5; // dropout rate of 50%
    mygpt_error err = {0};
    // the causal weights of 3.5.1: SelfAttention_v2 from torch.manual_seed(789), masked
    mygpt_rng rng = {0};
    mygpt_rng_seed(&rng, 789);
    book_module sa_v2;
    book_module_init(&ch, &rng, &sa_v2, BOOK_D_OUT, 1, 0);
    sa_v2.m.unbatched = 1; // SelfAttention_v2 takes one (T, d_in) matrix: its products are torch.mm's
    mygpt_mha_steps s; // queries = sa_v2.W_query(inputs), keys, values, weights
    book_module_run(&ch, &sa_v2, BOOK_INPUTS, 1, T, NULL, &s);

    float example[T * T];
    uint8_t keep[T * T];
    for (int i = 0; i < T * T; i++)
        example[i] = 1.0f; // torch.ones(6, 6)
    mygpt_rng_seed(&rng, ch.seed);
    chapter_check(&ch, mygpt_dropout_mask(&rng, keep, T * T, p, &err), &err);
    mygpt_dropout_apply(example, example, keep, T * T, p);
    book_print(NULL, example, 2, tt, NULL);
    mygpt_rng_seed(&rng, ch.seed); // torch.manual_seed(123); dropout(attn_weights)
    chapter_check(&ch, mygpt_dropout_mask(&rng, keep, T * T, p, &err), &err);
    mygpt_dropout_apply(s.weights, s.weights, keep, T * T, p);
    book_print(NULL, s.weights, 2, tt, "MulBackward0");
    mygpt_mha_steps_free(&s);
    return 0;
}
