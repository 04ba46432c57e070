/* doc001_session.c - replays document 001's notebook session (see doc001_session.h). */
#include "doc001_session.h"

#include <stdlib.h>

void doc001_run(const chapter *ch, doc001 *s, int upto)
{
    mygpt_error err = {0};
    s->gpt_tok = s->gpt_pos = NULL;
    mygpt_rng_seed(&s->rng, ch->seed);
    if (upto >= 1) { // tok_emb = nn.Embedding(50, 8)
        s->tok_emb_w = ch_view_f32(s->tok_emb, 2, (int64_t[]){D1_VOCAB, D1_EMBD});
        chapter_check(ch, mygpt_init_embedding(&s->rng, s->tok_emb, D1_VOCAB, D1_EMBD, &err), &err);
    }
    if (upto >= 2) {
        chapter_check(ch, mygpt_normal_(&s->rng, s->x, D1_T * D1_EMBD, 0.0, 1.0, &err), &err);
        mygpt_randperm(&s->rng, s->perm, D1_T);
    }
    if (upto >= 3) {
        // emb = GPTEmbedding(65, 256, 384); idx = torch.randint(0, 65, (4, 256))
        s->gpt_tok_w = ch_embedding_new(ch, &s->rng, D1_V2, D1_C2);
        s->gpt_pos_w = ch_embedding_new(ch, &s->rng, D1_BLOCK, D1_C2);
        s->gpt_tok = s->gpt_tok_w.data;
        s->gpt_pos = s->gpt_pos_w.data;
        s->idx_t = ch_view_i64(s->idx, 2, (int64_t[]){4, 256});
        chapter_check(ch, mygpt_randint(&s->rng, s->idx, ch_numel(&s->idx_t), 0, D1_V2, &err), &err);
    }
    if (upto >= 4) {
        chapter_check(ch, mygpt_randint(&s->rng, s->ids, D1_T, 0, D1_V2, &err), &err);
        mygpt_randperm(&s->rng, s->perm2, D1_T);
    }
}

void doc001_free(doc001 *s)
{
    ch_tensor_free(&s->gpt_tok_w);
    ch_tensor_free(&s->gpt_pos_w);
    s->gpt_tok = s->gpt_pos = NULL;
}
