/*
 * 57_transformer_embedding - document 002, "Putting It Together": the complete
 * TransformerEmbedding(10000, 256, 512, dropout=0.1) on a random (4, 32) batch.
 * Only shapes and parameter counts are printed, so no stand-in seed shows.
 */
#include <stdio.h>
#include <stdlib.h>

#include "chapter.h"

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "57_transformer_embedding",
                 "Document 002: embedding = TransformerEmbedding(10000, 256, 512, 0.1);\n"
                 "embeddings = embedding(torch.randint(0, 10000, (4, 32))); prints shapes and\n"
                 "parameter counts.", 0, CH_SEED);
    enum { V = 10000, C = 256, MAXSEQ = 512, B = 4, T = 32 };
    mygpt_error err = {0};
    mygpt_rng rng = {0};
    float *tok = chapter_alloc(&ch, (size_t)V * C, sizeof(float));
    float *pos = chapter_alloc(&ch, (size_t)MAXSEQ * C, sizeof(float));
    float *x = chapter_alloc(&ch, (size_t)B * T * C, sizeof(float));
    int64_t ids[B * T];
    mygpt_rng_seed(&rng, ch.seed);
    chapter_check(&ch, mygpt_init_embedding(&rng, tok, V, C, &err), &err);
    chapter_check(&ch, mygpt_init_embedding(&rng, pos, MAXSEQ, C, &err), &err);
    chapter_check(&ch, mygpt_randint(&rng, ids, B * T, 0, V, &err), &err);
    // tok_emb + pos_emb; dropout(0.1) in training mode would scale the survivors,
    // but only shapes are printed
    chapter_check(&ch, mygpt_embedding_forward(x, ids, tok, pos, B, T, C, V, MAXSEQ, &err), &err);
    const int64_t in_shape[2] = {B, T}, out_shape[3] = {B, T, C};
    printf("Input tokens: ");
    ch_size(2, in_shape);
    printf("\nOutput embeddings: ");
    ch_size(3, out_shape);
    printf("\n\nEmbedding parameters: ");
    ch_commas((long long)V * C + (long long)MAXSEQ * C);
    printf("\n  Token embeddings: ");
    ch_commas((long long)V * C);
    printf("\n  Position embeddings: ");
    ch_commas((long long)MAXSEQ * C);
    printf("\n");
    free(tok);
    free(pos);
    free(x);
    return 0;
}
