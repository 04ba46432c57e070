/*
 * packed.c - a model's matmul weights packed once (mygpt_gpt_pack).
 *
 * The fast matmul multiplies packed panels of its B operand: NR columns, k-major. A
 * weight multiplied by many activation rows is packed at every call otherwise (a GPT-2
 * forward at B*T = 1024 packs W_q, W_k, W_v, W_o and fc2 of every layer, 226 MB, each
 * time); packed once and kept, every later call reads the panels as they are. The
 * packing is a snapshot: the caller promises the weights do not change while it is
 * kept (mygpt_gpt_unpack drops it; the training functions do so themselves).
 */
#include <stdlib.h>

#include "mygpt/gpt.h"
#include "internal.h"

void mygpt_packed_model_free(mygpt_packed_model *p)
{
    if (!p)
        return;
    mygpt_matmul_packed_free(&p->head);
    for (int i = 0; i < p->layers * MYGPT_P_PER_LAYER; i++)
        mygpt_matmul_packed_free(&p->per_layer[i]);
    free(p);
}

mygpt_status mygpt_packed_model_make(mygpt_packed_model **out, const mygpt_gpt *g, mygpt_error *err)
{
    const int L = g->config.num_layers, C = g->config.embed_dim, V = g->config.vocab_size;
    mygpt_packed_model *p = calloc(1, sizeof *p + (size_t)L * MYGPT_P_PER_LAYER * sizeof p->per_layer[0]);
    if (!p)
        return mygpt_fail(err, MYGPT_ENOMEM, "%s", "out of memory for the packed weights");
    p->layers = L;
    const mygpt_params *w = &g->params;
    mygpt_status st = mygpt_matmul_pack(&p->head, w->wte, C, V, err);
    for (int l = 0; l < L && st == MYGPT_OK; l++) {
        const size_t lcc = (size_t)l * C * C;
        mygpt_packed_weight *pl = mygpt_packed_layer(p, l);
        if ((st = mygpt_matmul_pack(pl + MYGPT_P_WQ, w->wq + lcc, C, C, err)) != MYGPT_OK ||
            (st = mygpt_matmul_pack(pl + MYGPT_P_WK, w->wk + lcc, C, C, err)) != MYGPT_OK ||
            (st = mygpt_matmul_pack(pl + MYGPT_P_WV, w->wv + lcc, C, C, err)) != MYGPT_OK ||
            (st = mygpt_matmul_pack(pl + MYGPT_P_WO, w->wo + lcc, C, C, err)) != MYGPT_OK ||
            (st = mygpt_matmul_pack(pl + MYGPT_P_FC1, w->fc1w + 4 * lcc, C, 4 * C, err)) != MYGPT_OK)
            break;
        st = mygpt_matmul_pack(pl + MYGPT_P_FC2, w->fc2w + 4 * lcc, 4 * C, C, err);
    }
    if (st != MYGPT_OK) {
        mygpt_packed_model_free(p);
        return st;
    }
    *out = p;
    return MYGPT_OK;
}

mygpt_status mygpt_gpt_pack(mygpt_gpt *gpt, mygpt_error *err)
{
    mygpt_packed_model *p = NULL;
    mygpt_status st = mygpt_packed_model_make(&p, gpt, err);
    if (st != MYGPT_OK)
        return st; /* an earlier packing is kept as it was */
    mygpt_packed_model_free(gpt->packed);
    gpt->packed = p;
    return MYGPT_OK;
}

void mygpt_gpt_unpack(mygpt_gpt *gpt)
{
    mygpt_packed_model_free(gpt->packed);
    gpt->packed = NULL;
}
