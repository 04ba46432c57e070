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
                 "(4, 256))); prints x.shape and the parameter count.", 42, CH_SEED | CH_SEED_UNSEEN);
    doc001 s = {0};
    doc001_run(&ch, &s, 3);
    // x = emb(idx): tok_emb(idx) + pos_emb(arange(T))                    (B, T, C)
    ch_tensor x = ch_embedding_apply(&ch, &s.gpt_tok_w, &s.gpt_pos_w, &s.idx_t);
    ch_print_size(&x);
    // sum(p.numel() for p in emb.parameters()): the two tables
    const long long n_tok = (long long)ch_numel(&s.gpt_tok_w), n_pos = (long long)ch_numel(&s.gpt_pos_w);
    printf("\n");
    ch_commas(n_tok + n_pos);
    printf(" parameters (tok: ");
    ch_commas(n_tok);
    printf(", pos: ");
    ch_commas(n_pos);
    printf(")\n");
    ch_tensor_free(&x);
    doc001_free(&s);
    return 0;
}
