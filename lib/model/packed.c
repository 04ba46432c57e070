/*
 * packed.c - a model's matmul weights packed once (mygpt_gpt_pack), as the model stores
 * them (float32, or the quantized bytes: mygpt/quantize.h).
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
#include "mygpt/quantize.h"
#include "model/block.h"
#include "base/base.h"
#include "model/params.h"
#include "kernels/matmul.h"
#include "model/packed.h"
#include "model/quantized.h"

void mygpt_packed_model_free(mygpt_packed_model *p)
{
    if (!p)
        return;
    mygpt_matmul_packed_free(&p->head);
    for (int i = 0; i < MYGPT_NUM_PARAM_TENSORS; i++)
        for (int l = 0; p->linear[i] && l < p->layers; l++)
            mygpt_matmul_packed_free(&p->linear[i][l]);
    free(p);
}

/* Layer l's slice (N, K) of table row i, packed as the model stores it: its float32
 * values, or its quantized ones (the floats then being their dequantized copy). */
static mygpt_status pack(mygpt_packed_weight *pw, const mygpt_gpt *g, int i, int l, int K, int N, mygpt_error *err)
{
    const size_t off = (size_t)l * (size_t)N * (size_t)K;
    const float *weight = mygpt_param_tensor(&g->params, i) + off;
    const mygpt_quantized *qz = g->quantized;
    if (!qz || !qz->q[i])
        return mygpt_matmul_pack(pw, weight, K, N, err);
    const size_t es = mygpt_weights_value_bytes(qz->format);
    const float *scales = qz->scales[i] ? qz->scales[i] + (size_t)l * N * mygpt_int8_groups(K) : NULL;
    return mygpt_matmul_pack_quantized(pw, qz->format, (const char *)qz->q[i] + off * es, scales, weight, K, N, err);
}

mygpt_status mygpt_packed_model_make(mygpt_packed_model **out, const mygpt_gpt *g, mygpt_error *err)
{
    const mygpt_config *cfg = &g->config;
    const int L = cfg->num_layers;
    mygpt_param_info info[MYGPT_NUM_PARAM_TENSORS];
    int linear[MYGPT_NUM_PARAM_TENSORS]; // the block's products (an untied head is packed as the head)
    size_t slots = 0; // a LINEAR tensor takes L slots (one per layer, or the first of them)
    for (int i = 0; i < MYGPT_NUM_PARAM_TENSORS; i++) {
        mygpt_param_info_get(cfg, i, &info[i]);
        linear[i] = info[i].role == MYGPT_ROLE_LINEAR && info[i].present && i != MYGPT_PARAM_lmw;
        slots += linear[i] ? (size_t)L : 0;
    }
    mygpt_packed_model *p = calloc(1, sizeof *p + slots * sizeof p->weights[0]);
    if (!p)
        return mygpt_fail(err, MYGPT_ENOMEM, "%s", "out of memory for the packed weights");
    p->layers = L;
    for (int i = 0, at = 0; i < MYGPT_NUM_PARAM_TENSORS; i++)
        if (linear[i]) {
            p->linear[i] = p->weights + at;
            at += L;
        }
    mygpt_status st = pack(&p->head, g, mygpt_head_weight(cfg, &g->params) == g->params.lmw ? MYGPT_PARAM_lmw
                                                                                            : MYGPT_PARAM_wte,
                           0, cfg->embed_dim, mygpt_head_size(cfg), err);
    // layer by layer, in the order the forward reads them
    for (int l = 0; l < L && st == MYGPT_OK; l++)
        for (int i = 0; i < MYGPT_NUM_PARAM_TENSORS && st == MYGPT_OK; i++) {
            if (!linear[i] || (!info[i].per_layer && l > 0))
                continue;
            const int at = info[i].per_layer ? l : 0; // a weight (out, in): K = in, N = out
            st = pack(&p->linear[i][at], g, i, at, (int)info[i].shape[1], (int)info[i].shape[0], err);
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
