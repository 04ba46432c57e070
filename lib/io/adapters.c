/*
 * adapters.c - a file of LoRA adapters read back onto the model they were trained on
 * (mygpt_checkpoint_load_adapters; mygpt_checkpoint_save_adapters writes it, checkpoint.c),
 * and the checksums that tie adapters to their base.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mygpt/checkpoint.h"
#include "mygpt/lora.h"
#include "mygpt/tensor.h"
#include "base/base.h"
#include "io/adapters.h"
#include "io/layout.h"
#include "io/safetensors.h"
#include "model/lora.h"
#include "model/params.h"

#define FNV_START 14695981039346656037ull

/* FNV-1a 64 of n bytes, going on from h (FNV_START to begin) */
static uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

uint64_t mygpt_base_checksum(const mygpt_gpt *g)
{
    uint64_t h = FNV_START;
    for (int i = 0; i < MYGPT_NUM_PARAM_TENSORS; i++) {
        mygpt_param_info info;
        mygpt_param_info_get(&g->config, i, &info);
        const float *t = mygpt_param_tensor(&g->params, i);
        const size_t n = g->param_sizes[i];
        if (n == 0 || info.role == MYGPT_ROLE_LORA_A || info.role == MYGPT_ROLE_LORA_B ||
            (i == MYGPT_PARAM_lmw && n == g->param_sizes[MYGPT_PARAM_wte] && memcmp(t, g->params.wte, n * sizeof *t) == 0))
            continue;
        h = fnv1a(h, t, n * sizeof *t);
    }
    return h ? h : 1;
}

/* A file's adapters, read: its n tensors ts and their values */
typedef struct file_adapters {
    const file_tensor *ts;
    float **data;
    int n;
} file_adapters;

/* Puts the adapters' values into m, a model with adapters of their configuration */
static void put_adapters(void *ctx, mygpt_gpt *m)
{
    const file_adapters *v = ctx;
    const tensor_bytes floats = mygpt_float_bytes(&m->params);
    for (int i = 0; i < v->n; i++)
        mygpt_move_tensor(&m->config, &floats, &v->ts[i], v->data[i], FROM_FILE);
}

/* The model a file of adapters (header h) adapts, checked against base, the model they
 * are to be added to: *cfg the model with the file's adapters, *untie whether base's
 * head is to be untied first (a GPT-2 made the book's GPTModel, for adapters that wrap
 * the head) */
static mygpt_status adapted_model(const char *path, const st_header *h, const mygpt_config *base, mygpt_config *cfg,
                                  int *untie, mygpt_error *err)
{
    *cfg = *base;
    cfg->lora_rank = h->cfg.lora_rank;
    cfg->lora_alpha = h->cfg.lora_alpha;
    if (h->cfg.lora_rank <= 0 || !(h->cfg.lora_alpha > 0))
        return mygpt_fail(err, MYGPT_EFORMAT, "%s: not a file of LoRA adapters (its __metadata__ has no lora_rank and "
                          "lora_alpha)", path);
    if (base->lora_rank > 0)
        return mygpt_fail(err, MYGPT_EINVAL, "%s: the model has LoRA adapters already", path);
    // the model they were trained on: the sizes and the architecture __metadata__ names
    *untie = h->cfg.arch == MYGPT_ARCH_LLMS_FROM_SCRATCH && mygpt_lora_untied_config(base, cfg);
    cfg->lora_rank = h->cfg.lora_rank;
    cfg->lora_alpha = h->cfg.lora_alpha;
    if (!mygpt_st_all_sizes(&h->found) || h->cfg.arch != cfg->arch || h->cfg.vocab_size != base->vocab_size ||
        h->cfg.embed_dim != base->embed_dim || h->cfg.num_heads != base->num_heads ||
        h->cfg.num_layers != base->num_layers || h->cfg.max_seq_len != base->max_seq_len)
        return mygpt_fail(err, MYGPT_EINVAL, "%s: the adapters are for another model (%s, V=%d C=%d heads=%d layers=%d "
                          "context=%d), not this one (%s, V=%d C=%d heads=%d layers=%d context=%d)", path,
                          mygpt_arch_name(h->cfg.arch), h->cfg.vocab_size, h->cfg.embed_dim, h->cfg.num_heads,
                          h->cfg.num_layers, h->cfg.max_seq_len, mygpt_arch_name(base->arch), base->vocab_size,
                          base->embed_dim, base->num_heads, base->num_layers, base->max_seq_len);
    mygpt_error bad = {0};
    const mygpt_status st = mygpt_config_validate(cfg, &bad);
    return st == MYGPT_OK ? MYGPT_OK : mygpt_fail(err, st, "%s: %s", path, bad.message);
}

/* The values of the file's adapters v->ts into v->data (allocated here, freed by the
 * caller), each finite; *id the adapters' own checksum, over their values in the
 * file's order */
static mygpt_status read_adapters(const char *path, const st_header *h, file_adapters *v, uint64_t *id,
                                  mygpt_error *err)
{
    const file_tensor *ts = v->ts;
    *id = FNV_START;
    for (int i = 0; i < v->n; i++) {
        const st_entry *e = mygpt_st_find(h->entries, h->n, ts[i].name);
        const size_t numel = (size_t)ts[i].shape[0] * (size_t)ts[i].shape[1];
        if (!e)
            return mygpt_fail(err, MYGPT_EFORMAT, "%s: tensor %s is missing", path, ts[i].name);
        if (strstr(e->name, "out_head.") && e->ndim == 2 && e->shape[0] == (unsigned long long)ts[i].shape[0] &&
            e->shape[1] != (unsigned long long)ts[i].shape[1]) // the head's B: (rank, outputs)
            return mygpt_fail(err, MYGPT_EINVAL, "%s: the adapters are for a head of %llu outputs, this model's has "
                              "%lld (adapters go on the model they were trained on: a classifier's on that "
                              "classifier)", path, e->shape[1], (long long)ts[i].shape[1]);
        if (strcmp(e->dtype, "F32") != 0 || e->ndim != 2 || e->shape[0] != (unsigned long long)ts[i].shape[0] ||
            e->shape[1] != (unsigned long long)ts[i].shape[1] || e->noff != 2 || e->offsets[0] > e->offsets[1] ||
            e->offsets[1] > h->data_len || e->offsets[1] - e->offsets[0] != numel * sizeof(float))
            return mygpt_fail(err, MYGPT_EFORMAT, "%s: %s is not F32 of shape [%lld, %lld] within the data", path,
                              e->name, (long long)ts[i].shape[0], (long long)ts[i].shape[1]);
        float *data = v->data[i] = malloc(numel * sizeof(float));
        if (!data)
            return mygpt_fail(err, MYGPT_ENOMEM, "%s", "out of memory reading adapters");
        if (mygpt_st_read_at(h->fd, data, numel * sizeof(float), h->data_at + e->offsets[0]) != 0)
            return mygpt_st_read_failed(path, err);
        for (size_t k = 0; k < numel; k++)
            if (!isfinite(data[k]))
                return mygpt_fail(err, MYGPT_EFORMAT, "%s: %s holds a non-finite value (%g)", path, e->name,
                                  (double)data[k]);
        *id = fnv1a(*id, data, numel * sizeof(float));
    }
    *id = *id ? *id : 1;
    return MYGPT_OK;
}

/* Whether adapters of checksum id may be added to g: not merged into it already, and
 * trained on it when the file says on which base (files written before mygpt recorded
 * lora_base are taken on the sizes alone) */
static mygpt_status adapters_fit(const char *path, const st_header *h, const mygpt_gpt *g, uint64_t id,
                                 mygpt_error *err)
{
    if (g->lora_merged == id)
        return mygpt_fail(err, MYGPT_EINVAL, "%s: the adapters are already merged into this model (its lora_merged): "
                          "use it as it is, or apply them to the model they were trained on", path);
    const uint64_t have = h->marks.lora_base && g->weights == MYGPT_WEIGHTS_FP32 ? mygpt_base_checksum(g) : 0;
    if (have && have != h->marks.lora_base)
        return mygpt_fail(err, MYGPT_EINVAL, "%s: the adapters were trained on another base model (checksum %016llx; "
                          "this model's is %016llx)", path, (unsigned long long)h->marks.lora_base,
                          (unsigned long long)have);
    return MYGPT_OK;
}

mygpt_status mygpt_checkpoint_load_adapters(mygpt_gpt *g, const char *path, mygpt_error *err)
{
    mygpt_status st = MYGPT_OK;
    file_adapters values = {0};
    file_tensor *ts = NULL;
    float **data = NULL;
    int nt = 0, untie = 0;
    uint64_t id = 0;
    mygpt_config cfg;
    st_header h;
    MYGPT_TRY(mygpt_st_read_header(path, &h, err));
    MYGPT_TRY_CLEANUP(st, adapted_model(path, &h, &g->config, &cfg, &untie, err));
    if (!(ts = malloc((size_t)mygpt_state_dict_len(&cfg) * sizeof *ts)))
        MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_ENOMEM, "%s", "out of memory reading adapters"));
    nt = mygpt_file_tensors(&cfg, ts, FILE_ADAPTERS);
    if ((size_t)nt != h.n)
        MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_EFORMAT, "%s: holds %zu tensors, where the adapters of this model "
                                         "are %d (a head of another size, or tensors that are not adapters)", path,
                                         h.n, nt));
    const char *why = NULL;
    const int tiled = mygpt_st_offsets_tile(h.entries, h.n, h.data_len, &why);
    if (tiled <= 0)
        MYGPT_TRY_CLEANUP(st, tiled < 0 ? mygpt_fail(err, MYGPT_ENOMEM, "%s", "out of memory reading adapters")
                                        : mygpt_fail(err, MYGPT_EFORMAT, "%s: %s", path, why));
    if (!(data = calloc((size_t)nt, sizeof *data)))
        MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_ENOMEM, "%s", "out of memory reading adapters"));
    // every value read and checked before the model changes
    values = (file_adapters){ts, data, nt};
    MYGPT_TRY_CLEANUP(st, read_adapters(path, &h, &values, &id, err));
    MYGPT_TRY_CLEANUP(st, mygpt_st_unchanged(&h, path, err));
    MYGPT_TRY_CLEANUP(st, adapters_fit(path, &h, g, id, err));
    if ((st = mygpt_lora_add_values(g, cfg.lora_rank, cfg.lora_alpha, untie, put_adapters, (void *)&values, err)) ==
        MYGPT_ERANGE) { // finite adapters whose merge is not
        const mygpt_error inner = err ? *err : (mygpt_error){0};
        mygpt_fail(err, st, "%s: %s", path, inner.message);
    }
    if (st == MYGPT_OK)
        g->lora_from = id;
cleanup:
    for (int i = 0; data && i < nt; i++)
        free(data[i]);
    free(data);
    free(ts);
    mygpt_st_header_free(&h);
    return st;
}
