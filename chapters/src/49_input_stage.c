/*
 * 49_input_stage - document 001, "Assembling the input stage": x = emb(xb), the
 * (B, T, C) tensor the rest of the course transforms.
 *
 * Stand-in: the document feeds Day 2's get_batch("train") (char-level Shakespeare,
 * batch 64) which does not exist here. A batch of the same shape,
 * xb = torch.randint(0, 65, (64, 256)) drawn after torch.manual_seed(42) and
 * GPTEmbedding(65, 256, 384), stands in for it.
 */
#include <stdio.h>
#include <stdlib.h>

#include "chapter.h"

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "49_input_stage",
                 "Document 001: emb = GPTEmbedding(65, 256, 384); x = emb(xb) for a (64, 256)\n"
                 "batch of ids (random ids stand in for the Shakespeare batch).", 42, CH_SEED);
    enum { V = 65, BLOCK = 256, C = 384, B = 64, T = 256 };
    mygpt_error err = {0};
    mygpt_rng rng = {0};
    float *tok = chapter_alloc(&ch, (size_t)V * C, sizeof(float));
    float *pos = chapter_alloc(&ch, (size_t)BLOCK * C, sizeof(float));
    int64_t *xb = chapter_alloc(&ch, (size_t)B * T, sizeof(int64_t));
    float *x = chapter_alloc(&ch, (size_t)B * T * C, sizeof(float));
    mygpt_rng_seed(&rng, ch.seed);
    chapter_check(&ch, mygpt_init_embedding(&rng, tok, V, C, &err), &err);
    chapter_check(&ch, mygpt_init_embedding(&rng, pos, BLOCK, C, &err), &err);
    chapter_check(&ch, mygpt_randint(&rng, xb, (size_t)B * T, 0, V, &err), &err);
    chapter_check(&ch, mygpt_embedding_forward(x, xb, (mygpt_embedding_tables){tok, V, pos, BLOCK}, B, T, C, &err), &err);

    const int64_t in_shape[2] = {B, T}, out_shape[3] = {B, T, C}, four[1] = {4};
    printf("in : ");
    ch_size(2, in_shape);
    printf(" torch.int64\nout: ");
    ch_size(3, out_shape);
    printf(" torch.float32\nx[0, 0, :4] = ");
    ch_torch(x, 1, four, NULL);
    printf("\n");
    free(tok);
    free(pos);
    free(xb);
    free(x);
    return 0;
}
