/*
 * 405_book_feedforward - the book's chapter 4 (4.3 Implementing a feed forward network
 * with GELU activations): GPT_CONFIG_124M's embedding size, and the shape of
 * FeedForward(GPT_CONFIG_124M) on torch.rand(2, 3, 768): the input's (the network widens
 * each token to 3072 and narrows it back). The generator goes on from chapter 402's
 * draws, as the notebook runs on; no drawn value is printed.
 */
#include <stdio.h>
#include <stdlib.h>

#include "book_gpt.h"

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "405_book_feedforward",
                 "The book's chapter 4, section 4.3: emb_dim, and the output shape of\n"
                 "FeedForward(GPT_CONFIG_124M) on torch.rand(2, 3, 768).",
                 0, 0);
    enum { EMB_DIM = 768, B = 2, T = 3 };
    printf("%d\n", EMB_DIM); // print(GPT_CONFIG_124M["emb_dim"])
    mygpt_rng rng = {0};
    mygpt_rng_seed(&rng, 123); // torch.manual_seed(123) of 4.2: randn(2, 5), nn.Linear(5, 6)
    mygpt_error err = {0};
    float example[BOOK_ROWS * BOOK_IN], w[BOOK_OUT * BOOK_IN], bias[BOOK_OUT];
    chapter_check(&ch, mygpt_normal_(&rng, example, BOOK_ROWS * BOOK_IN, 0.0, 1.0, &err), &err);
    chapter_check(&ch, mygpt_init_linear(&rng, w, bias, BOOK_IN, BOOK_OUT, &err), &err);
    float *w1, *b1, *w2, *b2; // ffn = FeedForward(GPT_CONFIG_124M)
    book_linear_new(&ch, &rng, EMB_DIM, 4 * EMB_DIM, &w1, &b1);
    book_linear_new(&ch, &rng, 4 * EMB_DIM, EMB_DIM, &w2, &b2);
    const mygpt_book_ff ff = {EMB_DIM, w1, b1, w2, b2};
    float *x = chapter_alloc(&ch, B * T * EMB_DIM, sizeof(float));
    float *out = chapter_alloc(&ch, B * T * EMB_DIM, sizeof(float));
    chapter_check(&ch, mygpt_uniform_(&rng, x, B * T * EMB_DIM, 0.0, 1.0, &err), &err); // torch.rand(2, 3, 768)
    chapter_check(&ch, mygpt_book_feedforward(out, x, &ff, B * T, &err), &err);
    ch_size(3, (int64_t[]){B, T, ff.C}); // out.shape: (B, T) rows of C
    printf("\n");
    float *owned[] = {w1, b1, w2, b2, x, out};
    for (size_t i = 0; i < sizeof owned / sizeof owned[0]; i++)
        free(owned[i]);
    return 0;
}
