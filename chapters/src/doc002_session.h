/*
 * doc002_session.h - document 002 is one notebook that never seeds the generator,
 * so its random values differ on every run. mygpt stands a torch.manual_seed(SEED)
 * at the top of the notebook in for the unseeded process (default 0) and replays
 * the cells in order:
 *   1. embed = TokenEmbedding(10000, 256)
 *   2. pos_embed = LearnedPositionalEmbedding(d_model=256, max_seq_len=512);
 *      x = torch.randn(2, 10, 256)
 */
#ifndef MYGPT_DOC002_SESSION_H
#define MYGPT_DOC002_SESSION_H

#include "ch_tensor.h"

enum { D2_VOCAB = 10000, D2_MODEL = 256, D2_MAXSEQ = 512 };

typedef struct doc002 {
    mygpt_rng rng;
    float *tok;   /* (10000, 256) */
    float *pos;   /* (512, 256)   */
    float *x;     /* (2, 10, 256) */
    ch_tensor pos_w, x_t; /* pos and x with the shapes they were made with */
} doc002;

void doc002_run(const chapter *ch, doc002 *s, int upto);
void doc002_free(doc002 *s);

/* RotaryPositionalEmbedding(d, max_seq)'s buffers as the document builds them (base
 * 10000): inv_freq (d / 2) and the cos and sin caches (max_seq, d / 2), the caches
 * allocated by chapter_alloc (the caller frees them). */
void doc002_rope(const chapter *ch, int d, int max_seq, float *inv_freq, float **cos_c, float **sin_c);

#endif
