/* doc001_session.c - replays document 001's notebook session (see doc001_session.h). */
#include "doc001_session.h"

#include <stdlib.h>

void doc001_run(const chapter *ch, doc001 *s, int upto)
{
    mygpt_error err = {0};
    s->gpt_tok = s->gpt_pos = NULL;
    mygpt_rng_seed(&s->rng, ch->seed);
    if (upto >= 1)
        chapter_check(ch, mygpt_init_embedding(&s->rng, s->tok_emb, D1_VOCAB, D1_EMBD, &err), &err);
    if (upto >= 2) {
        chapter_check(ch, mygpt_normal_(&s->rng, s->x, D1_T * D1_EMBD, 0.0, 1.0, &err), &err);
        mygpt_randperm(&s->rng, s->perm, D1_T);
    }
    if (upto >= 3) {
        s->gpt_tok = chapter_alloc(ch, (size_t)D1_V2 * D1_C2, sizeof(float));
        s->gpt_pos = chapter_alloc(ch, (size_t)D1_BLOCK * D1_C2, sizeof(float));
        chapter_check(ch, mygpt_init_embedding(&s->rng, s->gpt_tok, D1_V2, D1_C2, &err), &err);
        chapter_check(ch, mygpt_init_embedding(&s->rng, s->gpt_pos, D1_BLOCK, D1_C2, &err), &err);
        chapter_check(ch, mygpt_randint(&s->rng, s->idx, 4 * 256, 0, D1_V2, &err), &err);
    }
    if (upto >= 4) {
        chapter_check(ch, mygpt_randint(&s->rng, s->ids, D1_T, 0, D1_V2, &err), &err);
        mygpt_randperm(&s->rng, s->perm2, D1_T);
    }
}

void doc001_free(doc001 *s)
{
    free(s->gpt_tok);
    free(s->gpt_pos);
}
