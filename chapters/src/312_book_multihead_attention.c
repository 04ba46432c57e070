/*
 * 312_book_multihead_attention - the book's chapter 3 (3.6.2 Implementing multi-head
 * attention with weight splits): MultiHeadAttention(3, 2, 6, 0.0, num_heads=2) after
 * torch.manual_seed(123), one projection per query, key and value split into two heads
 * of one channel, and out_proj; its context vectors and their shape.
 */
#include <stdio.h>
#include <string.h>

#include "book_attention.h"

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "312_book_multihead_attention",
                 "The book's chapter 3, section 3.6.2: MultiHeadAttention(d_in=3, d_out=2,\n"
                 "context_length=6, dropout=0.0, num_heads=2) after torch.manual_seed(123) on the\n"
                 "batch of the six words twice.",
                 123, CH_SEED);
    enum { B = 2, T = BOOK_TOKENS };
    float batch[B * T * BOOK_D_IN];
    for (int b = 0; b < B; b++)
        memcpy(batch + b * T * BOOK_D_IN, BOOK_INPUTS, sizeof BOOK_INPUTS);
    mygpt_rng rng = {0};
    mygpt_rng_seed(&rng, ch.seed);
    book_module mha;
    book_module_init(&ch, &rng, &mha, BOOK_D_OUT, 2, 1); // two heads, out_proj
    mygpt_mha_steps s;
    mygpt_error err = {0};
    chapter_check(&ch, mygpt_mha_steps_init(&s, &mha.m, B, T, &err), &err);
    chapter_check(&ch, mygpt_mha_forward(&s, &mha.m, batch, &rng, &err), &err);
    const int64_t shape[3] = {s.B, s.T, s.d_out};
    book_print(NULL, s.out, 3, shape, "ViewBackward0");
    printf("context_vecs.shape: ");
    ch_size(3, shape);
    printf("\n");
    mygpt_mha_steps_free(&s);
    return 0;
}
