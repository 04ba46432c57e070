/*
 * 311_book_multihead_wrapper - the book's chapter 3 (3.6.1 Stacking multiple
 * single-head attention layers): MultiHeadAttentionWrapper, two CausalAttention heads
 * (d_out 2 each, drawn in turn after torch.manual_seed(123)), their context vectors side
 * by side (torch.cat on the last axis).
 */
#include <stdio.h>
#include <string.h>

#include "book_attention.h"

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "311_book_multihead_wrapper",
                 "The book's chapter 3, section 3.6.1: MultiHeadAttentionWrapper(3, 2, 6, 0.0,\n"
                 "num_heads=2) after torch.manual_seed(123) on the batch of the six words twice.",
                 123, CH_SEED);
    enum { B = BOOK_BATCH, T = BOOK_TOKENS, HEADS = 2, D_OUT = BOOK_D_OUT };
    float batch[B * T * BOOK_D_IN];
    book_batch(batch);
    mygpt_rng rng = {0};
    mygpt_rng_seed(&rng, ch.seed);
    book_module heads[HEADS]; // nn.ModuleList([CausalAttention(...) for _ in range(num_heads)])
    for (int h = 0; h < HEADS; h++)
        book_module_init(&ch, &rng, &heads[h], D_OUT, 1, 0);
    // lesson: concat_heads
    float context_vecs[B * T * HEADS * D_OUT]; // torch.cat([head(x) for head in self.heads], dim=-1)
    for (int h = 0; h < HEADS; h++) {
        mygpt_mha_steps s;
        book_module_run(&ch, &heads[h], batch, B, T, &rng, &s);
        for (int r = 0; r < B * T; r++)
            memcpy(context_vecs + (r * HEADS + h) * D_OUT, s.out + r * D_OUT, D_OUT * sizeof(float));
        mygpt_mha_steps_free(&s);
    }
    // end lesson: concat_heads
    book_print_context(context_vecs, B, T, HEADS * D_OUT, "CatBackward0");
    return 0;
}
