/* doc002_session.c - replays document 002's notebook (see doc002_session.h). */
#include "doc002_session.h"

#include <stdlib.h>

void doc002_run(const chapter *ch, doc002 *s, int upto)
{
    mygpt_error err = {0};
    s->tok = s->pos = s->x = NULL;
    mygpt_rng_seed(&s->rng, ch->seed);
    if (upto >= 1) {
        s->tok = chapter_alloc(ch, (size_t)D2_VOCAB * D2_MODEL, sizeof(float));
        chapter_check(ch, mygpt_init_embedding(&s->rng, s->tok, D2_VOCAB, D2_MODEL, &err), &err);
    }
    if (upto >= 2) {
        // pos_embed = LearnedPositionalEmbedding(256, 512); x = torch.randn(2, 10, 256)
        s->pos_w = ch_embedding_new(ch, &s->rng, D2_MAXSEQ, D2_MODEL);
        s->x_t = ch_tensor_f32(ch, 3, (int64_t[]){2, 10, D2_MODEL});
        s->pos = s->pos_w.data;
        s->x = s->x_t.data;
        chapter_check(ch, mygpt_normal_(&s->rng, s->x, ch_numel(&s->x_t), 0.0, 1.0, &err), &err);
    }
}

void doc002_free(doc002 *s)
{
    free(s->tok);
    ch_tensor_free(&s->pos_w);
    ch_tensor_free(&s->x_t);
    s->pos = s->x = NULL;
}

void doc002_rope(const chapter *ch, int d, int max_seq, float *inv_freq, float **cos_c, float **sin_c)
{
    const int half = d / 2;
    mygpt_error err = {0};
    *cos_c = chapter_alloc(ch, (size_t)max_seq * half, sizeof(float));
    *sin_c = chapter_alloc(ch, (size_t)max_seq * half, sizeof(float));
    chapter_check(ch, mygpt_rope_inv_freq(inv_freq, d, 10000.0, &err), &err);
    chapter_check(ch, mygpt_rope_cache(*cos_c, *sin_c, inv_freq, max_seq, half, &err), &err);
}
