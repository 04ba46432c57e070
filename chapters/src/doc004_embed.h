/*
 * doc004_embed.h - document 004's Embed module: token and position tables, each
 * created as nn.Embedding (N(0, 1) draws) and then re-drawn by
 * nn.init.normal_(std=0.02), in that order.
 */
#ifndef MYGPT_DOC004_EMBED_H
#define MYGPT_DOC004_EMBED_H

#include "ch_tensor.h"

typedef struct embed {
    int vocab_size, d_model, max_seq_len;
    float *tok;  /* (vocab_size, d_model)  */
    float *pos;  /* (max_seq_len, d_model) */
} embed;

void embed_create(const chapter *ch, embed *e, mygpt_rng *rng, int vocab_size, int d_model,
                  int max_seq_len);

/* out (B, T, d_model) = tok[ids] + pos[0..T-1]; exits with the document's message
 * if T > max_seq_len. */
void embed_forward(const chapter *ch, const embed *e, float *out, const int64_t *ids, int B, int T);

/* The same for ids (B, T): the result is (B, T, d_model), shaped from ids and the
 * module's width. */
ch_tensor embed_apply(const chapter *ch, const embed *e, const ch_tensor *ids);

void embed_free(embed *e);

#endif
