/* doc004_embed.c - document 004's Embed module (see doc004_embed.h). */
#include "doc004_embed.h"

#include <stdio.h>
#include <stdlib.h>

void embed_create(const chapter *ch, embed *e, mygpt_rng *rng, int vocab_size, int d_model,
                  int max_seq_len)
{
    mygpt_error err = {0};
    e->vocab_size = vocab_size;
    e->d_model = d_model;
    e->max_seq_len = max_seq_len;
    e->tok = chapter_alloc(ch, (size_t)vocab_size * d_model, sizeof(float));
    e->pos = chapter_alloc(ch, (size_t)max_seq_len * d_model, sizeof(float));
    const size_t nt = (size_t)vocab_size * d_model, np = (size_t)max_seq_len * d_model;
    chapter_check(ch, mygpt_init_embedding(rng, e->tok, (size_t)vocab_size, (size_t)d_model, &err), &err);
    chapter_check(ch, mygpt_normal_(rng, e->tok, nt, 0.0, 0.02, &err), &err);
    chapter_check(ch, mygpt_init_embedding(rng, e->pos, (size_t)max_seq_len, (size_t)d_model, &err), &err);
    chapter_check(ch, mygpt_normal_(rng, e->pos, np, 0.0, 0.02, &err), &err);
}

void embed_forward(const chapter *ch, const embed *e, float *out, const int64_t *ids, int B, int T)
{
    if (T > e->max_seq_len) {
        fprintf(stderr, "%s: Sequence length %d exceeds max_seq_len %d\n", ch->name, T,
                e->max_seq_len);
        exit(1);
    }
    mygpt_error err = {0};
    const mygpt_embedding_tables tables = {e->tok, e->vocab_size, e->pos, e->max_seq_len};
    chapter_check(ch, mygpt_embedding_forward(out, ids, tables, B, T, e->d_model, &err), &err);
}

ch_tensor embed_apply(const chapter *ch, const embed *e, const ch_tensor *ids)
{
    const int B = (int)ids->shape[0], T = (int)ids->shape[1];
    ch_tensor out = ch_tensor_f32(ch, 3, (int64_t[]){B, T, e->d_model});
    embed_forward(ch, e, out.data, ids->ids, B, T);
    return out;
}

void embed_free(embed *e)
{
    free(e->tok);
    free(e->pos);
}
