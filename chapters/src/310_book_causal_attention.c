/*
 * 310_book_causal_attention - the book's chapter 3 (3.5.3 Implementing a compact causal
 * self-attention class): a batch of the six words twice, and CausalAttention(3, 2, 6,
 * dropout 0.0) after torch.manual_seed(123), its context vectors and their shape.
 */
#include <stdio.h>
#include <string.h>

#include "book_attention.h"

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "310_book_causal_attention",
                 "The book's chapter 3, section 3.5.3: CausalAttention(d_in=3, d_out=2,\n"
                 "context_length=6, dropout=0.0) after torch.manual_seed(123) on a batch of the six\n"
                 "words twice.",
                 123, CH_SEED);
    enum { B = 2, T = BOOK_TOKENS };
    float batch[B * T * BOOK_D_IN]; // torch.stack((inputs, inputs), dim=0): (2, 6, 3)
    for (int b = 0; b < B; b++)
        memcpy(batch + b * T * BOOK_D_IN, BOOK_INPUTS, sizeof BOOK_INPUTS);
    ch_size(3, (int64_t[]){B, T, BOOK_D_IN});
    printf("\n");
    mygpt_rng rng = {0};
    mygpt_rng_seed(&rng, ch.seed);
    book_module ca;
    book_module_init(&ch, &rng, &ca, BOOK_D_OUT, 1, 0); // causal, no out_proj
    mygpt_mha_steps s;
    mygpt_error err = {0};
    chapter_check(&ch, mygpt_mha_steps_init(&s, &ca.m, B, T, &err), &err);
    chapter_check(&ch, mygpt_mha_forward(&s, &ca.m, batch, &rng, &err), &err); // Dropout(0.0)
    const int64_t shape[3] = {s.B, s.T, s.d_out};
    book_print(NULL, s.out, 3, shape, "UnsafeViewBackward0");
    printf("context_vecs.shape: ");
    ch_size(3, shape);
    printf("\n");
    mygpt_mha_steps_free(&s);
    return 0;
}
