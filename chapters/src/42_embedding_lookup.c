/*
 * 42_embedding_lookup - document 001: a (B=2, T=4) batch of ids becomes a
 * (2, 4, 8) tensor; the same id gives the same row wherever it appears.
 */
#include <stdio.h>

#include "doc001_session.h"

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "42_embedding_lookup",
                 "Document 001: x = tok_emb(ids) for ids of shape (2, 4); token 7 gets the same\n"
                 "vector at every position and in every sequence.", 42, CH_SEED | CH_SEED_UNSEEN);
    doc001 s = {0};
    doc001_run(&ch, &s, 1);
    const int64_t ids[2 * 4] = {3, 7, 7, 1, 12, 0, 49, 7};
    float x[2 * 4 * D1_EMBD];
    mygpt_error err = {0};
    chapter_check(&ch, mygpt_embedding_forward(x, ids, (mygpt_embedding_tables){s.tok_emb, D1_VOCAB}, 2, 4, D1_EMBD,
                                               &err), &err); // (B, T, n_embd)
    const int64_t shape[3] = {2, 4, D1_EMBD};
    ch_size(3, shape);
    const float *x01 = x + (0 * 4 + 1) * D1_EMBD, *x02 = x + (0 * 4 + 2) * D1_EMBD;
    const float *x13 = x + (1 * 4 + 3) * D1_EMBD;
    printf("\n%s\n", ch_bool(mygpt_allclose(x01, x02, D1_EMBD, 1e-5, 1e-8)));
    printf("%s\n", ch_bool(mygpt_allclose(x01, x13, D1_EMBD, 1e-5, 1e-8)));
    doc001_free(&s);
    return 0;
}
