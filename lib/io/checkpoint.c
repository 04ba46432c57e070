/*
 * checkpoint.c - a model's safetensors file (see mygpt/checkpoint.h): the writer (whole
 * or not at all, the signals held: io/whole.c) and the reader, which takes the
 * configuration from the header (io/safetensors.h), the tensors' names and layout from
 * the model's table (io/layout.h), and checks every size and offset before it allocates
 * the model or touches the data. A gpt2 model has Hugging Face's config.json beside it
 * (io/hf_config.h); LoRA adapters are read back in adapters.c.
 */
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mygpt/checkpoint.h"
#include "mygpt/data.h"
#include "mygpt/quantize.h"
#include "mygpt/tensor.h"
#include "mygpt/train_state.h"
#include "base/base.h"
#include "base/text.h"
#include "io/adapters.h"
#include "io/hf_config.h"
#include "io/layout.h"
#include "io/safetensors.h"
#include "io/whole.h"
#include "model/params.h"
#include "model/quantized.h"

/* ---- writing ------------------------------------------------------------------------ */

mygpt_status mygpt_checkpoint_check_save(const mygpt_gpt *g, const char *path, mygpt_error *err)
{
    MYGPT_TRY(mygpt_checkpoint_check_path(path, err));
    if (g->config.arch != MYGPT_ARCH_GPT2 || g->config.lora_rank > 0) // adapters: no config.json
        return MYGPT_OK;
    char conf[4096];
    bool present;
    if (!mygpt_path_beside(conf, sizeof conf, path, "config.json"))
        return mygpt_fail(err, MYGPT_EINVAL, "%s", "checkpoint path too long");
    return mygpt_hf_config_check(conf, &g->config, &present, err);
}

/* How g's weights are stored: fp32, or the format it is quantized to */
static mygpt_weights stored_format(const mygpt_gpt *g)
{
    return g->quantized ? g->weights : MYGPT_WEIGHTS_FP32;
}

/* The file's dtype of tensor t of a model stored as wf */
static const char *file_dtype(const mygpt_config *c, const file_tensor *t, mygpt_weights wf)
{
    return !mygpt_is_quantized(c, t, wf) ? "F32" : wf == MYGPT_WEIGHTS_BF16 ? "BF16" : "I8";
}

/* The values of file tensor t */
static size_t numel_of(const file_tensor *t)
{
    return (size_t)t->shape[0] * (size_t)(t->ndim == 2 ? t->shape[1] : 1);
}

/* The header's __metadata__: the configuration, how the weights are stored, and the
 * checksum that ties adapters to their model or says which are merged into it */
static void save_metadata(mygpt_strbuf *h, const mygpt_gpt *g, file_kind kind)
{
    const mygpt_config *c = &g->config;
    const mygpt_weights wf = stored_format(g);
    mygpt_sb_printf(h, "{\"__metadata__\":{\"format\":\"pt\",\"arch\":\"%s\",\"vocab_size\":\"%d\","
                       "\"embed_dim\":\"%d\",\"num_heads\":\"%d\",\"num_layers\":\"%d\",\"max_seq_len\":\"%d\"",
                    mygpt_arch_name(c->arch), c->vocab_size, c->embed_dim, c->num_heads, c->num_layers, c->max_seq_len);
    if (c->arch == MYGPT_ARCH_LLAMA) // (the other architectures have them all 0)
        mygpt_sb_printf(h, ",\"num_kv_heads\":\"%d\",\"ffn_hidden\":\"%d\",\"untied_head\":\"%d\",\"rope\":\"%d\"",
                        mygpt_kv_heads(c), mygpt_ffn_hidden(c), c->untied_head, c->rope);
    if (wf == MYGPT_WEIGHTS_INT8)
        mygpt_sb_printf(h, ",\"weights\":\"int8\",\"group_size\":\"%d\"", MYGPT_INT8_GROUP);
    else if (wf == MYGPT_WEIGHTS_BF16)
        mygpt_sb_append(h, ",\"weights\":\"bf16\"");
    // adapters: and the model they adapt, in the sizes above (num_classes: lmB's shape) and its weights
    if (kind == FILE_ADAPTERS)
        mygpt_sb_printf(h, ",\"lora_rank\":\"%d\",\"lora_alpha\":\"%.17g\",\"lora_base\":\"%016llx\"", c->lora_rank,
                        c->lora_alpha, (unsigned long long)mygpt_base_checksum(g));
    else if (g->lora_merged) // adapters merged into it: not to be added again
        mygpt_sb_printf(h, ",\"lora_merged\":\"%016llx\"", (unsigned long long)g->lora_merged);
    mygpt_sb_append(h, "}");
}

/* The whole header: the metadata, then each of the n tensors ts with its byte range
 * (int8's scales right after their values), padded for the data to start 8-byte
 * aligned; *biggest the most values a tensor has */
static void save_header(mygpt_strbuf *h, const mygpt_gpt *g, const file_tensor *ts, int n, file_kind kind,
                        size_t *biggest)
{
    const mygpt_config *c = &g->config;
    const mygpt_weights wf = stored_format(g);
    save_metadata(h, g, kind);
    size_t offset = 0;
    *biggest = 0;
    for (int i = 0; i < n; i++) {
        const size_t numel = numel_of(&ts[i]);
        const int quant = mygpt_is_quantized(c, &ts[i], wf);
        const size_t bytes = numel * mygpt_weights_value_bytes(quant ? wf : MYGPT_WEIGHTS_FP32);
        *biggest = numel > *biggest ? numel : *biggest;
        if (ts[i].ndim == 2)
            mygpt_sb_printf(h, ",\"%s\":{\"dtype\":\"%s\",\"shape\":[%lld,%lld],\"data_offsets\":[%zu,%zu]}",
                            ts[i].name, file_dtype(c, &ts[i], wf), (long long)ts[i].shape[0],
                            (long long)ts[i].shape[1], offset, offset + bytes);
        else
            mygpt_sb_printf(h, ",\"%s\":{\"dtype\":\"%s\",\"shape\":[%lld],\"data_offsets\":[%zu,%zu]}",
                            ts[i].name, file_dtype(c, &ts[i], wf), (long long)ts[i].shape[0], offset, offset + bytes);
        offset += bytes;
        if (quant && wf == MYGPT_WEIGHTS_INT8) { // its scales, right after it
            const size_t ns = mygpt_scales_len(c, &ts[i]);
            const size_t groups = ns / ((size_t)ts[i].shape[ts[i].transposed ? 1 : 0]);
            mygpt_sb_printf(h, ",\"%s.scales\":{\"dtype\":\"F32\",\"shape\":[%zu,%zu],\"data_offsets\":[%zu,%zu]}",
                            ts[i].name, ns / groups, groups, offset, offset + ns * sizeof(float));
            offset += ns * sizeof(float);
        }
    }
    mygpt_sb_append(h, "}");
    while (h->len % 8) // the data starts 8-byte aligned
        mygpt_sb_append(h, " ");
}

/* The file to f: the header's length and h, then the data of the n tensors ts, each
 * through buf (room for the biggest). 1, or 0 when a write failed (errno says why) */
static int write_file(FILE *f, const mygpt_strbuf *h, const mygpt_gpt *g, const file_tensor *ts, int n, float *buf)
{
    const mygpt_config *c = &g->config;
    const mygpt_weights wf = stored_format(g);
    const tensor_bytes floats = mygpt_float_bytes(&g->params);
    const tensor_bytes stored = wf != MYGPT_WEIGHTS_FP32 ? mygpt_quantized_bytes(g->quantized) : floats;
    unsigned char len8[8];
    for (int b = 0; b < 8; b++)
        len8[b] = (unsigned char)((uint64_t)h->len >> (8 * b));
    int ok = fwrite(len8, 1, 8, f) == 8 && fwrite(h->data, 1, h->len, f) == h->len;
    for (int i = 0; ok && i < n; i++) {
        const size_t numel = numel_of(&ts[i]);
        const tensor_bytes *tb = mygpt_is_quantized(c, &ts[i], wf) ? &stored : &floats;
        mygpt_move_tensor(c, tb, &ts[i], buf, TO_FILE);
        ok = fwrite(buf, tb->es, numel, f) == numel;
        if (ok && tb == &stored && wf == MYGPT_WEIGHTS_INT8) {
            const size_t ns = mygpt_scales_len(c, &ts[i]);
            mygpt_move_scales(c, g->quantized, &ts[i], buf, TO_FILE);
            ok = fwrite(buf, sizeof(float), ns, f) == ns;
        }
    }
    return ok;
}

/* The save itself (the model, or its adapters only), the interrupting signals held by
 * the caller; keep: never over a file at path (mygpt_commit_temp_new) */
static mygpt_status save(const mygpt_gpt *g, const char *path, file_kind kind, int keep, mygpt_error *err)
{
    const mygpt_config *c = &g->config;
    const bool hf = c->arch == MYGPT_ARCH_GPT2 && kind == FILE_MODEL; // Hugging Face's config.json beside it
    mygpt_strbuf h = {0}, conf = {0};
    float *buf = NULL;
    mygpt_status st = MYGPT_OK;
    file_tensor *ts = malloc((size_t)mygpt_state_dict_len(c) * sizeof *ts);
    if (!ts)
        return mygpt_fail(err, MYGPT_ENOMEM, "%s", "out of memory for the checkpoint header");
    const int n = mygpt_file_tensors(c, ts, kind);
    size_t biggest;
    save_header(&h, g, ts, n, kind, &biggest);
    // a NaN or an infinity is never written (the reader refuses it): a diverged model
    // never replaces a good file
    const tensor_bytes floats = mygpt_float_bytes(&g->params);
    double bad;
    const int nonfinite = mygpt_nonfinite_tensor(c, &floats, ts, n, stored_format(g), &bad);
    if (nonfinite >= 0)
        MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_ERANGE, "%s: %s holds a non-finite value (%g): not saved", path,
                                         ts[nonfinite].name, bad));
    buf = malloc((biggest ? biggest : 1) * sizeof *buf);
    if (h.failed || !buf)
        MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_ENOMEM, "%s", "out of memory for the checkpoint"));
    MYGPT_TRY_CLEANUP(st, mygpt_checkpoint_check_path(path, err));
    // gpt2: Hugging Face's config.json beside the file, unless one there says otherwise
    char conf_path[4096];
    bool conf_present = false;
    if (hf) {
        mygpt_hf_config_json(&conf, c);
        if (conf.failed || !mygpt_path_beside(conf_path, sizeof conf_path, path, "config.json"))
            MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_EINVAL, "%s", "checkpoint path too long"));
        MYGPT_TRY_CLEANUP(st, mygpt_hf_config_check(conf_path, c, &conf_present, err));
    }
    char tmp[4200];
    FILE *f = mygpt_temp_beside(path, tmp, sizeof tmp, &st, err);
    if (!f)
        goto cleanup; // st says why
    MYGPT_TRY_CLEANUP(st, (keep ? mygpt_commit_temp_new : mygpt_commit_temp)(f, tmp, path,
                                                                           write_file(f, &h, g, ts, n, buf), err));
    if (hf && !conf_present) // one that agrees is kept as it is
        st = mygpt_write_whole_unheld(conf_path, conf.data, conf.len, err);
cleanup:
    mygpt_sb_free(&conf);
    mygpt_sb_free(&h);
    free(buf);
    free(ts);
    return st;
}

/* save, with the interrupting signals held */
static mygpt_status save_held(const mygpt_gpt *g, const char *path, file_kind kind, int keep, mygpt_error *err)
{
    sigset_t was;
    const int held = mygpt_hold_signals(&was);
    const mygpt_status st = save(g, path, kind, keep, err);
    mygpt_release_signals(held, &was);
    return st;
}

/* mygpt_checkpoint_save, or (keep) never over a file at path */
static mygpt_status save_model(const mygpt_gpt *g, const char *path, int keep, mygpt_error *err)
{
    if (g->config.lora_rank > 0)
        return mygpt_fail(err, MYGPT_EINVAL, "%s: the model has LoRA adapters: save them alone "
                          "(mygpt_checkpoint_save_adapters), or merge them into the weights first (mygpt_lora_merge)",
                          path);
    return save_held(g, path, FILE_MODEL, keep, err);
}

/* mygpt_checkpoint_save_adapters, or (keep) never over a file at path */
static mygpt_status save_adapters(const mygpt_gpt *g, const char *path, int keep, mygpt_error *err)
{
    if (g->config.lora_rank <= 0)
        return mygpt_fail(err, MYGPT_EINVAL, "%s: the model has no LoRA adapters to save", path);
    return save_held(g, path, FILE_ADAPTERS, keep, err);
}

mygpt_status mygpt_checkpoint_save(const mygpt_gpt *g, const char *path, mygpt_error *err)
{
    return save_model(g, path, 0, err);
}

mygpt_status mygpt_checkpoint_save_new(const mygpt_gpt *g, const char *path, mygpt_error *err)
{
    return save_model(g, path, 1, err);
}

mygpt_status mygpt_checkpoint_save_adapters(const mygpt_gpt *g, const char *path, mygpt_error *err)
{
    return save_adapters(g, path, 0, err);
}

mygpt_status mygpt_checkpoint_save_adapters_new(const mygpt_gpt *g, const char *path, mygpt_error *err)
{
    return save_adapters(g, path, 1, err);
}

/* ---- reading ------------------------------------------------------------------------ */

/* A model's checkpoint being read: its header, the configuration it gives, the file
 * tensors that configuration needs and, for each, the entry that holds it (and its
 * int8 scales' entry, or NULL) */
typedef struct model_read {
    st_header h;
    mygpt_config cfg;
    const st_entry *wte; /* the token embedding's entry, or NULL (the course's layout) */
    file_tensor *ts;
    int nt;
    const st_entry **found_at, **scales_at; /* (nt) each */
} model_read;

/* A file of adapters or a training state is not a model: said so */
static mygpt_status refuse_other_files(const char *path, const model_read *r, mygpt_error *err)
{
    if (r->cfg.lora_rank > 0)
        return mygpt_fail(err, MYGPT_EINVAL, "%s holds LoRA adapters only, not a model (adapters: use --adapters "
                          "with their base model)", path);
    if (r->h.marks.train_state) // its tensors are a run's, not a model's: said so, not counted
        return mygpt_fail(err, MYGPT_EINVAL, "%s is a training state (for mygpt train --resume), not a model: give "
                          "the model train saves with --save (the run's train command with --resume STATE --save "
                          "MODEL writes it)", path);
    return MYGPT_OK;
}

/* The heads of a model whose embeddings give its other sizes: __metadata__'s, Hugging
 * Face's config.json beside a gpt2, or heads of 64 */
static mygpt_status heads_of(const char *path, model_read *r, mygpt_error *err)
{
    mygpt_config *cfg = &r->cfg;
    if (!r->h.found.num_heads && cfg->arch == MYGPT_ARCH_GPT2)
        MYGPT_TRY(mygpt_hf_config_heads(path, cfg, &cfg->num_heads, err));
    if (cfg->num_heads == 0 && cfg->embed_dim % 64 == 0)
        cfg->num_heads = cfg->embed_dim / 64;
    if (cfg->num_heads == 0)
        return mygpt_fail(err, MYGPT_EFORMAT, "%s: the number of heads is not in the file (__metadata__'s num_heads, "
                          "or a gpt2's config.json beside it) and C=%d is not a multiple of 64", path, cfg->embed_dim);
    return MYGPT_OK;
}

/* The architecture from the tensors' names; the sizes from __metadata__, or from the
 * shapes of the embeddings and the layers' names */
static mygpt_status config_from_names(const char *path, model_read *r, mygpt_error *err)
{
    const st_entry *entries = r->h.entries, *wpe = NULL;
    const size_t n = r->h.n;
    mygpt_config *cfg = &r->cfg;
    if ((r->wte = mygpt_st_find(entries, n, "wte.weight"))) {
        cfg->arch = MYGPT_ARCH_GPT2;
        wpe = mygpt_st_find(entries, n, "wpe.weight");
        if (!r->h.found.num_layers)
            cfg->num_layers = mygpt_st_count_layers(entries, n, "h");
    } else if ((r->wte = mygpt_st_find(entries, n, "tok_emb.weight"))) {
        cfg->arch = MYGPT_ARCH_LLMS_FROM_SCRATCH;
        wpe = mygpt_st_find(entries, n, "pos_emb.weight");
        cfg->qkv_bias = mygpt_st_find(entries, n, "trf_blocks.0.att.W_query.bias") != NULL;
        if (!r->h.found.num_layers)
            cfg->num_layers = mygpt_st_count_layers(entries, n, "trf_blocks");
    } else if (!mygpt_st_all_sizes(&r->h.found)) {
        return mygpt_fail(err, MYGPT_EFORMAT, "%s: __metadata__ lacks the configuration (vocab_size, embed_dim, "
                          "num_heads, num_layers, max_seq_len) and no token embedding names another layout (GPT-2's "
                          "wte.weight, the book's tok_emb.weight)", path);
    }
    if (cfg->arch == MYGPT_ARCH_COURSE || cfg->arch == MYGPT_ARCH_NANOGPT || cfg->arch == MYGPT_ARCH_LLAMA)
        return MYGPT_OK; // the course's or model.py's names: the sizes in __metadata__
    const st_entry *wte = r->wte;
    if (!wpe || wte->ndim != 2 || wpe->ndim != 2 || wte->shape[1] != wpe->shape[1] || wte->shape[0] > (1u << 24) ||
        wte->shape[1] > (1u << 24) || wpe->shape[0] > (1u << 24))
        return mygpt_fail(err, MYGPT_EFORMAT, "%s: the token and position embeddings are missing or misshapen", path);
    cfg->vocab_size = (int)wte->shape[0];
    cfg->embed_dim = (int)wte->shape[1];
    cfg->max_seq_len = (int)wpe->shape[0];
    return heads_of(path, r, err);
}

/* The data's layout, then the classes: a classification head (the book's chapter 6:
 * nn.Linear(C, num_classes)) is the one head with a bias, of num_classes values */
static mygpt_status classes_of(const char *path, model_read *r, mygpt_error *err)
{
    const char *why = NULL;
    const int tiled = mygpt_st_offsets_tile(r->h.entries, r->h.n, r->h.data_len, &why);
    if (tiled < 0)
        return mygpt_fail(err, MYGPT_ENOMEM, "%s", "out of memory reading a checkpoint header");
    if (!tiled)
        return mygpt_fail(err, MYGPT_EFORMAT, "%s: %s", path, why);
    const st_entry *head_bias = mygpt_st_find(r->h.entries, r->h.n,
                                              r->cfg.arch == MYGPT_ARCH_LLMS_FROM_SCRATCH ? "out_head.bias"
                                                                                          : "lm_head.bias");
    if (head_bias && (head_bias->ndim != 1 || head_bias->shape[0] < 1 || head_bias->shape[0] > (1u << 24)))
        return mygpt_fail(err, MYGPT_EFORMAT, "%s: %s is not a vector of the classes", path, head_bias->name);
    r->cfg.num_classes = head_bias ? (int)head_bias->shape[0] : 0;
    return MYGPT_OK;
}

/* The file tensors the configuration needs, and room to find them. Everything is
 * checked against the header before anything is allocated for the model: a small file
 * whose __metadata__ claims a huge model costs nothing. */
static mygpt_status plan_tensors(const char *path, model_read *r, mygpt_error *err)
{
    mygpt_error bad = {0};
    const mygpt_status st = mygpt_config_validate(&r->cfg, &bad);
    if (st != MYGPT_OK) // the file's sizes, named as the file's
        return mygpt_fail(err, st, "%s: %s", path, bad.message);
    const int need = mygpt_state_dict_len(&r->cfg);
    // a file tensor holds at most 3 of the table's (c_attn): no more can be needed than 3n
    if ((size_t)need > 3 * r->h.n + 3)
        return mygpt_fail(err, MYGPT_EFORMAT, "%s: the configuration needs %d tensors; the file holds %zu", path, need,
                          r->h.n);
    if (!(r->ts = malloc((size_t)need * sizeof *r->ts)))
        return mygpt_fail(err, MYGPT_ENOMEM, "%s", "out of memory reading a checkpoint");
    r->nt = mygpt_file_tensors(&r->cfg, r->ts, FILE_MODEL);
    if (!(r->found_at = malloc((size_t)r->nt * sizeof *r->found_at)) ||
        !(r->scales_at = calloc((size_t)r->nt, sizeof *r->scales_at)))
        return mygpt_fail(err, MYGPT_ENOMEM, "%s", "out of memory reading a checkpoint");
    return MYGPT_OK;
}

/* The int8 scales of file tensor i, found (scales_at) and checked */
static mygpt_status match_scales(const char *path, model_read *r, int i, mygpt_error *err)
{
    const file_tensor *want = &r->ts[i];
    char sname[128];
    snprintf(sname, sizeof sname, "%s.scales", want->name);
    const st_entry *se = r->scales_at[i] = mygpt_st_find(r->h.entries, r->h.n, sname);
    const size_t ns = mygpt_scales_len(&r->cfg, want), groups = ns / (size_t)want->shape[want->transposed ? 1 : 0];
    if (!se)
        return mygpt_fail(err, MYGPT_EFORMAT, "%s: tensor %s (the int8 scales of %s) is missing", path, sname,
                          want->name);
    if (strcmp(se->dtype, "F32") != 0 || se->ndim != 2 || se->shape[0] != ns / groups || se->shape[1] != groups ||
        se->noff != 2 || se->offsets[1] - se->offsets[0] != ns * sizeof(float))
        return mygpt_fail(err, MYGPT_EFORMAT, "%s: %s is not F32 of shape [%zu, %zu]", path, sname, ns / groups,
                          groups);
    return MYGPT_OK;
}

/* Every tensor the model needs, as it needs it: found (found_at), of its dtype, shape
 * and size within the data */
static mygpt_status match_tensors(const char *path, model_read *r, mygpt_error *err)
{
    const mygpt_weights wf = r->h.wf;
    for (int i = 0; i < r->nt; i++) {
        const file_tensor *want = &r->ts[i];
        const st_entry *e = r->found_at[i] = mygpt_st_find(r->h.entries, r->h.n, want->name);
        const int quant = mygpt_is_quantized(&r->cfg, want, wf);
        const char *dtype = file_dtype(&r->cfg, want, wf);
        const size_t es = mygpt_weights_value_bytes(quant ? wf : MYGPT_WEIGHTS_FP32);
        if (!e)
            return mygpt_fail(err, MYGPT_EFORMAT, "%s: tensor %s is missing", path, want->name);
        if (!e->dtype[0])
            return mygpt_fail(err, MYGPT_EFORMAT, "%s: %s has no dtype (%s here)", path, e->name, dtype);
        if (strcmp(e->dtype, dtype) != 0)
            return mygpt_fail(err, MYGPT_EFORMAT, "%s: %s has dtype %s, not %s%s", path, e->name, e->dtype, dtype,
                              wf != MYGPT_WEIGHTS_FP32 ? " (the file's __metadata__ says its weights are quantized)"
                                                       : "");
        if (e->ndim != want->ndim || e->shape[0] != (unsigned long long)want->shape[0] ||
            (e->ndim == 2 && e->shape[1] != (unsigned long long)want->shape[1]))
            return mygpt_fail(err, MYGPT_EFORMAT, "%s: %s does not have the shape the configuration gives", path,
                              e->name);
        if (e->noff != 2 || e->offsets[0] > e->offsets[1] || e->offsets[1] > r->h.data_len ||
            e->offsets[1] - e->offsets[0] != numel_of(want) * es)
            return mygpt_fail(err, MYGPT_EFORMAT, "%s: the data offsets of %s do not fit the data (%zu bytes)", path,
                              e->name, r->h.data_len);
        if (quant && wf == MYGPT_WEIGHTS_INT8)
            MYGPT_TRY(match_scales(path, r, i, err));
    }
    return MYGPT_OK;
}

/* Whether entry e is a gpt2's lm_head written out that is the token embedding (its
 * shape and its bytes): 1, 0, or -1 when the file cannot be read */
static int tied_head(const model_read *r, const st_entry *e)
{
    const st_entry *wte = r->wte;
    if (r->cfg.arch != MYGPT_ARCH_GPT2 || strcmp(e->name, "lm_head.weight") != 0 || strcmp(e->dtype, "F32") != 0 ||
        e->offsets[1] - e->offsets[0] != wte->offsets[1] - wte->offsets[0] || e->ndim != wte->ndim ||
        memcmp(e->shape, wte->shape, (size_t)e->ndim * sizeof *e->shape) != 0)
        return 0;
    return mygpt_st_same_bytes(r->h.fd, r->h.data_at + e->offsets[0], r->h.data_at + wte->offsets[0],
                               e->offsets[1] - e->offsets[0]);
}

/* Nothing in the file but what the model takes, buffers and a tied head */
static mygpt_status check_unused(const char *path, const model_read *r, mygpt_error *err)
{
    unsigned char *used = calloc(r->h.n ? r->h.n : 1, 1); // the entries the model takes
    if (!used)
        return mygpt_fail(err, MYGPT_ENOMEM, "%s", "out of memory reading a checkpoint");
    for (int i = 0; i < r->nt; i++) {
        used[r->found_at[i] - r->h.entries] = 1;
        if (r->scales_at[i])
            used[r->scales_at[i] - r->h.entries] = 1;
    }
    mygpt_status st = MYGPT_OK;
    for (size_t k = 0; k < r->h.n && st == MYGPT_OK; k++) {
        const st_entry *e = &r->h.entries[k];
        if (used[k] || mygpt_is_buffer(e->name))
            continue;
        const int same = tied_head(r, e);
        if (same < 0)
            st = mygpt_st_read_failed(path, err);
        else if (!same)
            st = mygpt_fail(err, MYGPT_EFORMAT, "%s: unexpected tensor %s%s", path, e->name,
                            strcmp(e->name, "lm_head.weight") == 0 ? " (an lm_head that is not the token embedding)"
                                                                   : "");
    }
    free(used);
    return st;
}

/* The values of every file tensor into g (float32) and qz (a quantized model's stored
 * values and int8's scales; NULL for fp32) */
static mygpt_status read_values(const char *path, const model_read *r, mygpt_gpt *g, mygpt_quantized *qz,
                                mygpt_error *err)
{
    const mygpt_weights wf = r->h.wf;
    const tensor_bytes floats = mygpt_float_bytes(&g->params);
    const tensor_bytes stored = qz ? mygpt_quantized_bytes(qz) : floats;
    for (int i = 0; i < r->nt; i++) {
        const int quant = mygpt_is_quantized(&r->cfg, &r->ts[i], wf);
        for (int part = 0; part < 1 + (quant && wf == MYGPT_WEIGHTS_INT8); part++) {
            const st_entry *e = part ? r->scales_at[i] : r->found_at[i]; // the values, then int8's scales
            const size_t bytes = e->offsets[1] - e->offsets[0];
            void *tmp = malloc(bytes ? bytes : 1); // aligned for any element
            if (!tmp)
                return mygpt_fail(err, MYGPT_ENOMEM, "%s", "out of memory reading a checkpoint");
            if (mygpt_st_read_at(r->h.fd, tmp, bytes, r->h.data_at + e->offsets[0]) != 0) {
                free(tmp);
                return mygpt_st_read_failed(path, err);
            }
            if (part)
                mygpt_move_scales(&r->cfg, qz, &r->ts[i], tmp, FROM_FILE);
            else
                mygpt_move_tensor(&r->cfg, quant ? &stored : &floats, &r->ts[i], tmp, FROM_FILE);
            free(tmp);
        }
    }
    return MYGPT_OK;
}

/* The model g of the file read, its values checked: a NaN or an infinity would only
 * show as token 0 forever, refused and named (quantized values are checked as qz is
 * attached, which takes qz: freed on failure too) */
static mygpt_status finish_model(const char *path, const model_read *r, mygpt_gpt *g, mygpt_quantized *qz,
                                 mygpt_error *err)
{
    const tensor_bytes floats = mygpt_float_bytes(&g->params);
    double bad;
    const int nonfinite = mygpt_nonfinite_tensor(&r->cfg, &floats, r->ts, r->nt, r->h.wf, &bad);
    if (nonfinite >= 0) {
        mygpt_quantized_free(qz);
        return mygpt_fail(err, MYGPT_EFORMAT, "%s: %s holds a non-finite value (%g)", path, r->ts[nonfinite].name, bad);
    }
    mygpt_error why = {0};
    int part = 0;
    const int unquantized = qz ? mygpt_unquantized_tensor(&r->cfg, qz, r->ts, r->nt, r->h.wf, &part, &why) : -1;
    if (unquantized >= 0) { // said by the file's name (attaching checks again, by the model's table)
        const file_tensor *t = &r->ts[unquantized];
        char where[96] = ""; // a fused or transposed tensor: the index is not the file's
        if (t->parts > 1)
            snprintf(where, sizeof where, " (its part %d of %d, as the model holds it: (out, in))", part + 1, t->parts);
        else if (t->transposed)
            snprintf(where, sizeof where, " (as the model holds it: (out, in))");
        mygpt_quantized_free(qz);
        return mygpt_fail(err, MYGPT_EFORMAT, "%s: %s%s: %s", path, t->name, where, why.message);
    }
    if (qz) {
        const mygpt_status st = mygpt_gpt_attach_quantized(g, qz, err); // checks the stored values
        if (st != MYGPT_OK) {
            mygpt_error inner = err ? *err : (mygpt_error){0};
            return mygpt_fail(err, st, "%s: %s", path, inner.message);
        }
    }
    MYGPT_TRY(mygpt_st_unchanged(&r->h, path, err));
    g->lora_merged = r->h.marks.lora_merged;
    return MYGPT_OK;
}

mygpt_status mygpt_checkpoint_load(mygpt_gpt **out, const char *path, mygpt_error *err)
{
    *out = NULL;
    mygpt_status st = MYGPT_OK;
    mygpt_gpt *g = NULL;
    mygpt_quantized *qz = NULL;
    model_read r = {0};
    MYGPT_TRY(mygpt_st_read_header(path, &r.h, err));
    r.cfg = r.h.cfg;
    MYGPT_TRY_CLEANUP(st, refuse_other_files(path, &r, err));
    MYGPT_TRY_CLEANUP(st, config_from_names(path, &r, err));
    MYGPT_TRY_CLEANUP(st, classes_of(path, &r, err));
    MYGPT_TRY_CLEANUP(st, plan_tensors(path, &r, err));
    MYGPT_TRY_CLEANUP(st, match_tensors(path, &r, err));
    MYGPT_TRY_CLEANUP(st, check_unused(path, &r, err));
    MYGPT_TRY_CLEANUP(st, mygpt_gpt_alloc(&g, &r.cfg, err)); // draws nothing: every value comes from the file
    if (r.h.wf != MYGPT_WEIGHTS_FP32)
        MYGPT_TRY_CLEANUP(st, mygpt_quantized_alloc(&qz, &r.cfg, r.h.wf, err));
    MYGPT_TRY_CLEANUP(st, read_values(path, &r, g, qz, err));
    st = finish_model(path, &r, g, qz, err);
    qz = NULL; // g's now, or freed
    if (st == MYGPT_OK) {
        *out = g;
        g = NULL;
    }
cleanup:
    mygpt_gpt_free(g);
    mygpt_quantized_free(qz);
    free(r.scales_at);
    free(r.found_at);
    free(r.ts);
    mygpt_st_header_free(&r.h);
    return st;
}

mygpt_status mygpt_model_load(mygpt_gpt **out, const char *path, mygpt_error *err)
{
    *out = NULL;
    if (mygpt_llama2c_file(path))
        return mygpt_llama2c_load(out, path, err);
    st_header h;
    MYGPT_TRY(mygpt_st_read_header(path, &h, err));
    const bool state = h.marks.train_state;
    mygpt_st_header_free(&h);
    return state ? mygpt_train_state_model(out, path, err) : mygpt_checkpoint_load(out, path, err);
}

/* Whether mygpt_model_save writes gpt to path as llama2.c's file */
static int saves_llama2c(const mygpt_gpt *gpt, const char *path)
{
    const size_t n = strlen(path);
    return gpt->config.arch == MYGPT_ARCH_LLAMA && n > 4 && strcmp(path + n - 4, ".bin") == 0;
}

mygpt_status mygpt_model_save(const mygpt_gpt *gpt, const char *path, mygpt_error *err)
{
    return saves_llama2c(gpt, path) ? mygpt_llama2c_save(gpt, path, err) : mygpt_checkpoint_save(gpt, path, err);
}

mygpt_status mygpt_model_check_save(const mygpt_gpt *gpt, const char *path, mygpt_error *err)
{
    if (!saves_llama2c(gpt, path))
        return mygpt_checkpoint_check_save(gpt, path, err);
    const mygpt_status st = mygpt_llama2c_check_save(gpt, path, err);
    if (st == MYGPT_EINVAL && err) { // the format's limits, not the path's: another name takes the model
        const mygpt_error inner = *err;
        mygpt_fail(err, st, "%s (a name not ending in .bin saves a safetensors checkpoint)", inner.message);
    }
    return st;
}
