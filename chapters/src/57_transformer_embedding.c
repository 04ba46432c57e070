/*
 * 57_transformer_embedding - document 002, "Putting It Together": the complete
 * TransformerEmbedding(10000, 256, 512, dropout=0.1) on a random (4, 32) batch.
 * Only shapes and parameter counts are printed, so no stand-in seed shows.
 */
#include <stdio.h>
#include <stdlib.h>

#include "ch_tensor.h"

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "57_transformer_embedding",
                 "Document 002: embedding = TransformerEmbedding(10000, 256, 512, 0.1);\n"
                 "embeddings = embedding(torch.randint(0, 10000, (4, 32))); prints shapes and\n"
                 "parameter counts.", 0, CH_SEED | CH_SEED_UNSEEN);
    enum { V = 10000, C = 256, MAXSEQ = 512, B = 4, T = 32 };
    mygpt_error err = {0};
    mygpt_rng rng = {0};
    mygpt_rng_seed(&rng, ch.seed);
    ch_tensor tok = ch_embedding_new(&ch, &rng, V, C);      // TokenEmbedding(10000, 256)
    ch_tensor pos = ch_embedding_new(&ch, &rng, MAXSEQ, C); // LearnedPositionalEmbedding(256, 512)
    ch_tensor ids = ch_tensor_i64(&ch, 2, (int64_t[]){B, T});
    chapter_check(&ch, mygpt_randint(&rng, ids.ids, ch_numel(&ids), 0, V, &err), &err);
    // tok_emb + pos_emb; dropout(0.1) in training mode would scale the survivors,
    // but only shapes are printed
    ch_tensor x = ch_embedding_apply(&ch, &tok, &pos, &ids);
    printf("Input tokens: ");
    ch_print_size(&ids);
    printf("\nOutput embeddings: ");
    ch_print_size(&x);
    printf("\n\nEmbedding parameters: ");
    ch_commas((long long)(ch_numel(&tok) + ch_numel(&pos)));
    printf("\n  Token embeddings: ");
    ch_commas((long long)ch_numel(&tok));
    printf("\n  Position embeddings: ");
    ch_commas((long long)ch_numel(&pos));
    printf("\n");
    ch_tensor_free(&tok);
    ch_tensor_free(&pos);
    ch_tensor_free(&ids);
    ch_tensor_free(&x);
    return 0;
}
