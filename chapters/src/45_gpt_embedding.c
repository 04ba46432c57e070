/*
 * 45_gpt_embedding - document 001, "Fix #1 - learned positional embeddings":
 * GPTEmbedding(65, 256, 384) on a fake get_batch() output of shape (4, 256).
 */
#include <stdio.h>
#include <stdlib.h>

#include "doc001_session.h"

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "45_gpt_embedding",
                 "Document 001: emb = GPTEmbedding(65, 256, 384); x = emb(torch.randint(0, 65,\n"
                 "(4, 256))); prints x.shape and the parameter count.", 42, CH_SEED);
    doc001 s = {0};
    doc001_run(&ch, &s, 3);
    float *x = chapter_alloc(&ch, (size_t)4 * 256 * D1_C2, sizeof(float));
    mygpt_error err = {0};
    chapter_check(&ch, mygpt_embedding_forward(x, s.idx, s.gpt_tok, s.gpt_pos, 4, 256, D1_C2, D1_V2,
                                               D1_BLOCK, &err), &err); // (B, T, C)
    const int64_t shape[3] = {4, 256, D1_C2};
    ch_size(3, shape);
    // sum(p.numel() for p in emb.parameters()): the two tables
    const long long n_tok = (long long)D1_V2 * D1_C2, n_pos = (long long)D1_BLOCK * D1_C2;
    printf("\n");
    ch_commas(n_tok + n_pos);
    printf(" parameters (tok: ");
    ch_commas((long long)D1_V2 * D1_C2);
    printf(", pos: ");
    ch_commas((long long)D1_BLOCK * D1_C2);
    printf(")\n");
    free(x);
    doc001_free(&s);
    return 0;
}
