/*
 * 46_position_breaks_blindness - document 001: the shuffle experiment again, but
 * through GPTEmbedding first. Now the same token at a different position is a
 * different vector, and shuffling no longer just shuffles the output: False.
 */
#include <stdio.h>
#include <stdlib.h>

#include "doc001_session.h"

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "46_position_breaks_blindness",
                 "Document 001: ids = torch.randint(0, 65, (1, 6)); perm = torch.randperm(6); is\n"
                 "toy_attention(emb(ids))[:, perm] allclose to toy_attention(emb(ids[:, perm]))?",
                 42, CH_SEED);
    doc001 s = {0};
    doc001_run(&ch, &s, 4);
    int64_t shuffled_ids[D1_T];
    for (int t = 0; t < D1_T; t++)
        shuffled_ids[t] = s.ids[s.perm2[t]]; // ids[:, perm]
    float ea[D1_T * D1_C2], eb[D1_T * D1_C2], out_a[D1_T * D1_C2], out_b[D1_T * D1_C2];
    float a_permuted[D1_T * D1_C2], scratch[D1_T];
    mygpt_error err = {0};
    const mygpt_embedding_tables tables = {s.gpt_tok, D1_V2, s.gpt_pos, D1_BLOCK};
    chapter_check(&ch, mygpt_embedding_forward(ea, s.ids, tables, 1, D1_T, D1_C2, &err), &err);
    chapter_check(&ch, mygpt_embedding_forward(eb, shuffled_ids, tables, 1, D1_T, D1_C2, &err), &err);
    mygpt_toy_attention(out_a, ea, scratch, 1, D1_T, D1_C2);
    mygpt_toy_attention(out_b, eb, scratch, 1, D1_T, D1_C2);
    for (int t = 0; t < D1_T; t++)
        for (int c = 0; c < D1_C2; c++)
            a_permuted[t * D1_C2 + c] = out_a[s.perm2[t] * D1_C2 + c];
    printf("%s\n", ch_bool(mygpt_allclose(a_permuted, out_b, D1_T * D1_C2, 1e-5, 1e-6)));
    doc001_free(&s);
    return 0;
}
