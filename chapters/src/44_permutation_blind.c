/*
 * 44_permutation_blind - document 001, "Attention is permutation-blind": shuffle
 * the tokens, run toy attention, and the output is the same vectors shuffled the
 * same way: toy_attention(x)[:, perm] == toy_attention(x[:, perm]).
 */
#include <stdio.h>

#include "doc001_session.h"

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "44_permutation_blind",
                 "Document 001: x = torch.randn(1, 6, 8); perm = torch.randperm(6); is\n"
                 "toy_attention(x)[:, perm] allclose to toy_attention(x[:, perm]) (atol=1e-6)?",
                 42, CH_SEED);
    doc001 s = {0};
    doc001_run(&ch, &s, 2);
    float shuffled[D1_T * D1_EMBD], out_original[D1_T * D1_EMBD], out_shuffled[D1_T * D1_EMBD];
    float original_permuted[D1_T * D1_EMBD], scratch[D1_T];
    for (int t = 0; t < D1_T; t++)
        for (int c = 0; c < D1_EMBD; c++)
            shuffled[t * D1_EMBD + c] = s.x[s.perm[t] * D1_EMBD + c]; // x[:, perm]
    mygpt_toy_attention(out_original, s.x, scratch, 1, D1_T, D1_EMBD);
    mygpt_toy_attention(out_shuffled, shuffled, scratch, 1, D1_T, D1_EMBD);
    for (int t = 0; t < D1_T; t++)
        for (int c = 0; c < D1_EMBD; c++)
            original_permuted[t * D1_EMBD + c] = out_original[s.perm[t] * D1_EMBD + c];
    printf("%s\n", ch_bool(mygpt_allclose(original_permuted, out_shuffled, D1_T * D1_EMBD, 1e-5, 1e-6)));
    doc001_free(&s);
    return 0;
}
