/*
 * 51_token_embedding - document 002, "Token Embeddings: A Learned Lookup Table":
 * TokenEmbedding(10000, 256) on a (2, 5) batch of ids. The notebook is unseeded;
 * torch.manual_seed(SEED) stands in (default 0), so the printed row differs from
 * the document's.
 */
#include <stdio.h>

#include "doc002_session.h"

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "51_token_embedding",
                 "Document 002: embed = TokenEmbedding(10000, 256); embeddings = embed(token_ids)\n"
                 "for a (2, 5) batch; prints the shapes and 8 dims of the first token's vector.",
                 0, CH_SEED);
    doc002 s = {0};
    doc002_run(&ch, &s, 1);
    enum { B = 2, T = 5 };
    const int64_t ids[B * T] = {101, 2054, 2003, 2115, 2171, 101, 1045, 2066, 2653, 102};
    float emb[B * T * D2_MODEL];
    mygpt_error err = {0};
    chapter_check(&ch, mygpt_embedding_forward(emb, ids, (mygpt_embedding_tables){s.tok, D2_VOCAB}, B, T, D2_MODEL,
                                               &err), &err); // (B, T, d_model)
    const int64_t in_shape[2] = {B, T}, out_shape[3] = {B, T, D2_MODEL}, eight[1] = {8};
    printf("Input token IDs shape: ");
    ch_size(2, in_shape);
    printf("\nOutput embeddings shape: ");
    ch_size(3, out_shape);
    printf("\n\nEach token is now a %d-dimensional vector.\n", D2_MODEL);
    printf("\nFirst token (ID %lld) embedding (first 8 dims):\n  ", (long long)ids[0]);
    ch_numpy(emb, 1, eight, 4); // embeddings[0, 0, :8].detach().numpy().round(4)
    printf("\n");
    doc002_free(&s);
    return 0;
}
