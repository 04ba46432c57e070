/*
 * 43_onehot_equivalence - document 001: an embedding lookup equals one-hot
 * encoding followed by a matrix multiply, onehot (B, T, V) @ weight (V, C).
 */
#include <stdio.h>

#include "doc001_session.h"

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "43_onehot_equivalence",
                 "Document 001: torch.allclose(F.one_hot(ids, 50).float() @ tok_emb.weight,\n"
                 "tok_emb(ids)).", 42, CH_SEED | CH_SEED_UNSEEN);
    doc001 s = {0};
    doc001_run(&ch, &s, 1);
    enum { N = 2 * 4 };
    const int64_t ids[N] = {3, 7, 7, 1, 12, 0, 49, 7};
    float onehot[N * D1_VOCAB] = {0};  // (B*T, vocab_size)
    float weight_t[D1_EMBD * D1_VOCAB]; // weight^T (n_embd, vocab_size): mygpt_matmul wants (out, in)
    float via_matmul[N * D1_EMBD], lookup[N * D1_EMBD];
    // lesson: onehot
    for (int n = 0; n < N; n++)
        onehot[n * D1_VOCAB + ids[n]] = 1.0f;
    for (int v = 0; v < D1_VOCAB; v++)
        for (int c = 0; c < D1_EMBD; c++)
            weight_t[c * D1_VOCAB + v] = s.tok_emb[v * D1_EMBD + c];
    mygpt_matmul_naive(via_matmul, onehot, weight_t, NULL, N, D1_VOCAB, D1_EMBD);
    // end lesson: onehot
    mygpt_error err = {0};
    chapter_check(&ch, mygpt_embedding_forward(lookup, ids, (mygpt_embedding_tables){s.tok_emb, D1_VOCAB}, 2, 4,
                                               D1_EMBD, &err), &err);
    printf("%s\n", ch_bool(mygpt_allclose(via_matmul, lookup, N * D1_EMBD, 1e-5, 1e-8)));
    doc001_free(&s);
    return 0;
}
