/*
 * 407_book_transformer_block - the book's chapter 4 (4.5 Connecting attention and linear
 * layers in a transformer block): TransformerBlock(GPT_CONFIG_124M) after
 * torch.manual_seed(123) on torch.rand(2, 4, 768), in training mode (its dropouts draw);
 * the input's and the output's shapes, the same: a block keeps the shape it is given.
 */
#include <stdio.h>
#include <stdlib.h>

#include "book_gpt.h"

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "407_book_transformer_block",
                 "The book's chapter 4, section 4.5: TransformerBlock(GPT_CONFIG_124M) after\n"
                 "torch.manual_seed(123) on torch.rand(2, 4, 768): the input and output shapes.",
                 0, 0);
    enum { B = 2, T = 4, EMB = 768, HEADS = 12 };
    const double drop_rate = 0.1;
    mygpt_rng rng = {0};
    mygpt_rng_seed(&rng, 123);
    mygpt_error err = {0};
    float *x = chapter_alloc(&ch, B * T * EMB, sizeof(float));
    float *output = chapter_alloc(&ch, B * T * EMB, sizeof(float));
    chapter_check(&ch, mygpt_uniform_(&rng, x, B * T * EMB, 0.0, 1.0, &err), &err); // torch.rand(2, 4, 768)
    book_block block;
    book_block_init(&ch, &rng, &block, EMB, HEADS, drop_rate);
    chapter_check(&ch, mygpt_book_block_forward(output, x, &block.blk, B, T, &rng, &err), &err);
    printf("Input shape: ");
    ch_size(3, (int64_t[]){B, T, EMB});
    printf("\nOutput shape: ");
    ch_size(3, (int64_t[]){B, T, block.blk.ff.C});
    printf("\n");
    book_block_free(&block);
    free(x);
    free(output);
    return 0;
}
