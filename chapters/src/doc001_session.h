/*
 * doc001_session.h - document 001 is one notebook session: torch.manual_seed(42)
 * once at the top, then cells that each draw from the same generator. A chapter
 * for a later cell replays the earlier cells first, so its numbers are the ones
 * the notebook shows. Steps, in the document's order:
 *   1. tok_emb = nn.Embedding(50, 8)
 *   2. x = torch.randn(1, 6, 8); perm = torch.randperm(6)         (toy attention)
 *   3. emb = GPTEmbedding(65, 256, 384); idx = torch.randint(0, 65, (4, 256))
 *   4. ids = torch.randint(0, 65, (1, 6)); perm = torch.randperm(6)
 */
#ifndef MYGPT_DOC001_SESSION_H
#define MYGPT_DOC001_SESSION_H

#include "ch_tensor.h"

enum { D1_VOCAB = 50, D1_EMBD = 8, D1_T = 6, D1_V2 = 65, D1_BLOCK = 256, D1_C2 = 384 };

typedef struct doc001 {
    mygpt_rng rng;
    float tok_emb[D1_VOCAB * D1_EMBD];     /* step 1: (50, 8)          */
    float x[D1_T * D1_EMBD];               /* step 2: (1, 6, 8)        */
    int64_t perm[D1_T];                    /* step 2                   */
    float *gpt_tok, *gpt_pos;              /* step 3: (65, 384), (256, 384) */
    int64_t idx[4 * 256];                  /* step 3: (4, 256)         */
    int64_t ids[D1_T];                     /* step 4: (1, 6)           */
    int64_t perm2[D1_T];                   /* step 4                   */
    /* the same data with the shapes they were made with */
    ch_tensor tok_emb_w;                   /* step 1: tok_emb.weight   */
    ch_tensor gpt_tok_w, gpt_pos_w;        /* step 3: emb's two tables */
    ch_tensor idx_t;                       /* step 3: idx              */
} doc001;

/* Runs steps 1..upto of the session on a generator seeded with ch->seed. */
void doc001_run(const chapter *ch, doc001 *s, int upto);
void doc001_free(doc001 *s);

#endif
