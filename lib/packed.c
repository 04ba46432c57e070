/*
 * packed.c - a model's matmul weights packed once (mygpt_gpt_pack).
 *
 * The fast matmul multiplies packed panels of its B operand: NR columns, k-major. A
 * weight multiplied by many activation rows is packed at every call otherwise (a GPT-2
 * forward at B*T = 1024 packs W_q, W_k, W_v, W_o and fc2 of every layer, 226 MB, each
 * time); packed once and kept, every later call reads the panels as they are. The
 * packing is a snapshot: the caller promises the weights do not change while it is
 * kept (mygpt_gpt_unpack drops it; a model being trained is never packed).
 */
#include <stdlib.h>

#include "mygpt/gpt.h"
#include "internal.h"

void mygpt_packed_model_free(mygpt_packed_model *p)
{
    if (!p)
        return;
    mygpt_matmul_packed_free(&p->head);
    for (int i = 0; i < MYGPT_NUM_PARAM_TENSORS; i++) {
        const int n = p->linear[i] ? p->layers : 0;
        for (int l = 0; l < n; l++)
            mygpt_matmul_packed_free(&p->linear[i][l]);
        free(p->linear[i]);
    }
    free(p);
}

mygpt_status mygpt_packed_model_make(mygpt_packed_model **out, const mygpt_gpt *g, mygpt_error *err)
{
    const mygpt_config *cfg = &g->config;
    mygpt_packed_model *p = calloc(1, sizeof *p);
    if (!p)
        return mygpt_fail(err, MYGPT_ENOMEM, "%s", "out of memory for the packed weights");
    p->layers = cfg->num_layers;
    mygpt_status st = mygpt_matmul_pack(&p->head, g->params.wte, cfg->embed_dim, cfg->vocab_size, err);
    for (int i = 0; i < MYGPT_NUM_PARAM_TENSORS && st == MYGPT_OK; i++) {
        mygpt_param_info info;
        mygpt_param_info_get(cfg, i, &info);
        if (info.role != MYGPT_ROLE_LINEAR)
            continue;
        const int n = info.per_layer ? cfg->num_layers : 1;
        if (!(p->linear[i] = calloc((size_t)p->layers, sizeof *p->linear[i]))) {
            st = mygpt_fail(err, MYGPT_ENOMEM, "%s", "out of memory for the packed weights");
            break;
        }
        const size_t layer_numel = (size_t)info.shape[0] * (size_t)info.shape[1];
        for (int l = 0; l < n && st == MYGPT_OK; l++) // a weight (out, in): K = in, N = out
            st = mygpt_matmul_pack(&p->linear[i][l], mygpt_param_tensor(&g->params, i) + (size_t)l * layer_numel,
                                   (int)info.shape[1], (int)info.shape[0], err);
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
    if (gpt->trainers)
        return mygpt_fail(err, MYGPT_EINVAL, "%s", "a model being trained is not packed: its weights change every step");
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
