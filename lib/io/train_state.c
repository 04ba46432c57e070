/*
 * train_state.c - a training run's state in one safetensors file (see
 * mygpt/train_state.h), written whole (io/whole.c) as a checkpoint is; read back in
 * train_state_read.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mygpt/train_state.h"
#include "mygpt/checkpoint.h"
#include "mygpt/print.h"
#include "mygpt/tensor.h"
#include "base/base.h"
#include "base/text.h"
#include "io/train_state_file.h"
#include "io/whole.h"

int mygpt_state_buffers(const mygpt_optimizer *opt, const char *names[2])
{
    if (opt->kind == MYGPT_ADAMW) {
        names[0] = "optimizer.exp_avg";
        names[1] = "optimizer.exp_avg_sq";
        return 2;
    }
    names[0] = "optimizer.momentum_buffer";
    return opt->momentum != 0.0 ? 1 : 0;
}

int mygpt_state_tensors(const mygpt_gpt *g, const mygpt_optimizer *opt, const mygpt_dataloader *train, long long batch,
                        state_tensor out[4])
{
    int n = 0;
    out[n++] = (state_tensor){"model.params", "F32", g->params_memory, g->num_parameters, 4};
    const char *names[2];
    const int nb = mygpt_state_buffers(opt, names);
    for (int i = 0; i < nb; i++)
        out[n++] = (state_tensor){names[i], "F32", i ? opt->buf2 : opt->buf, g->num_parameters, 4};
    if (batch > 0)
        out[n++] = (state_tensor){"loader.order", "I64", train->order, train->num_windows, 8};
    return n;
}

/* A generator as one string: seed, left, next, has_cached_normal, the cached normal's
 * bits, torch_cpu, then the 624 words of its state, in hex */
static void rng_string(mygpt_strbuf *sb, const mygpt_rng *r)
{
    uint64_t bits;
    memcpy(&bits, &r->cached_normal, sizeof bits);
    mygpt_sb_printf(sb, "%" PRIx64 ":%d:%d:%d:%" PRIx64 ":%d:", r->seed, r->left, r->next,
                    r->has_cached_normal, bits, (int)r->torch_cpu);
    for (int i = 0; i < MYGPT_MT_N; i++)
        mygpt_sb_printf(sb, "%08" PRIx32, r->mt[i]);
}

/* "key":"value" into the header (both plain text: the keys are ours, the settings'
 * values are escaped) */
static void meta_put(mygpt_strbuf *h, const char *key, const char *value)
{
    mygpt_sb_append(h, ",\"");
    for (const char *k = key; *k; k++)
        mygpt_sb_printf(h,
                        *k == '"' || *k == '\\'    ? "\\%c"
                        : (unsigned char)*k < 0x20 ? "\\u%04x"
                                                   : "%c",
                        *k);
    mygpt_sb_append(h, "\":\"");
    for (const char *v = value; *v; v++)
        mygpt_sb_printf(h,
                        *v == '"' || *v == '\\'    ? "\\%c"
                        : (unsigned char)*v < 0x20 ? "\\u%04x"
                                                   : "%c",
                        *v);
    mygpt_sb_append(h, "\"");
}

static void meta_int(mygpt_strbuf *h, const char *key, long long v)
{
    char s[32];
    snprintf(s, sizeof s, "%lld", v);
    meta_put(h, key, s);
}

/* The metadata a state's configuration is checked by */
static void meta_config(mygpt_strbuf *h, const mygpt_gpt *g)
{
    const mygpt_config *c = &g->config;
    meta_put(h, "arch", mygpt_arch_name(c->arch));
    meta_int(h, "vocab_size", c->vocab_size);
    meta_int(h, "embed_dim", c->embed_dim);
    meta_int(h, "num_heads", c->num_heads);
    meta_int(h, "num_layers", c->num_layers);
    meta_int(h, "max_seq_len", c->max_seq_len);
    meta_int(h, "qkv_bias", c->qkv_bias);
    meta_int(h, "num_parameters", (long long)g->num_parameters);
}

/* The header of the state of g and run: its metadata, then its nt tensors ts (the
 * optimizer's buffers only when started), padded for the data to start 8-byte aligned */
static void state_header(mygpt_strbuf *h, const mygpt_gpt *g, const mygpt_train_run *run, const state_tensor *ts,
                         int nt, int started)
{
    const mygpt_optimizer *opt = run->opt;
    const mygpt_train_position *pos = run->pos;
    mygpt_sb_append(h, "{\"__metadata__\":{\"format\":\"" TRAIN_STATE_FORMAT "\"");
    meta_put(h, "version", "1");
    meta_config(h, g);
    meta_put(h, "optimizer", opt->kind == MYGPT_ADAMW ? "adamw" : "sgd");
    meta_int(h, "optimizer.step", opt->step);
    meta_int(h, "optimizer.buffers", started);
    meta_int(h, "step", pos->step);
    meta_int(h, "epoch", pos->epoch);
    meta_int(h, "batch", pos->batch);
    meta_int(h, "loader.windows", (long long)run->train->num_windows);
    meta_int(h, "generators", run->n_rng);
    for (int i = 0; i < run->n_rng; i++) {
        char key[32];
        mygpt_strbuf v = {0};
        rng_string(&v, run->rngs[i]);
        snprintf(key, sizeof key, "generator.%d", i);
        meta_put(h, key, v.failed ? "" : mygpt_sb_str(&v));
        h->failed |= v.failed;
        mygpt_sb_free(&v);
    }
    for (int i = 0; i < run->n_settings; i++) {
        char key[STATE_KEY_MAX];
        snprintf(key, sizeof key, "run:%s", run->settings[i].key);
        meta_put(h, key, run->settings[i].value);
    }
    mygpt_sb_append(h, "}");
    size_t offset = 0;
    for (int i = 0; i < nt; i++) {
        if (!started && i > 0 && ts[i].es == 4)
            continue; // no buffers yet
        mygpt_sb_printf(h, ",\"%s\":{\"dtype\":\"%s\",\"shape\":[%zu],\"data_offsets\":[%zu,%zu]}",
                        ts[i].name, ts[i].dtype, ts[i].numel, offset, offset + ts[i].numel * ts[i].es);
        offset += ts[i].numel * ts[i].es;
    }
    mygpt_sb_append(h, "}");
    while (h->len % 8) // the data starts 8-byte aligned
        mygpt_sb_append(h, " ");
}

/* Whether s is valid UTF-8 (the header's JSON is read back as such) */
static int utf8_whole(const char *s)
{
    const size_t n = strlen(s);
    return mygpt_utf8_valid_prefix(s, n) == n;
}

const char *mygpt_state_run_invalid(const mygpt_train_run *run)
{
    static const char *const why_setting =
        "a setting of the run is not a key of 1 to " STATE_WORDS(STATE_SETTING_KEY_MAX) " bytes and a value of at most "
        STATE_WORDS(STATE_SETTING_VALUE_MAX) ", both UTF-8";
    if (!run->opt || !run->pos || !run->train)
        return "a training state needs the run's optimizer, position and training loader";
    if (run->n_rng < 0 || (run->n_rng > 0 && !run->rngs) || run->n_settings < 0 ||
        (run->n_settings > 0 && !run->settings) || run->n_rng > STATE_RUN_ENTRIES_MAX - run->n_settings)
        return "the run's generators and settings are not n_rng and n_settings of them ("
               STATE_WORDS(STATE_RUN_ENTRIES_MAX) " at most together)";
    for (int i = 0; i < run->n_rng; i++)
        if (!run->rngs[i])
            return "one of the run's generators is NULL";
    for (int i = 0; i < run->n_settings; i++) {
        const mygpt_train_setting *st = &run->settings[i];
        if (!st->key || !st->value || !*st->key || strlen(st->key) > STATE_SETTING_KEY_MAX ||
            strlen(st->value) > STATE_SETTING_VALUE_MAX || !utf8_whole(st->key) || !utf8_whole(st->value))
            return why_setting;
    }
    return NULL;
}

mygpt_status mygpt_train_state_save(const char *path, const mygpt_gpt *g, const mygpt_train_run *run,
                                    mygpt_error *err)
{
    const char *why = mygpt_state_run_invalid(run);
    if (why)
        return mygpt_fail(err, MYGPT_EINVAL, "%s", why);
    const mygpt_optimizer *opt = run->opt;
    const mygpt_dataloader *train = run->train;
    const mygpt_train_position *pos = run->pos;
    if (g->quantized)
        return mygpt_fail(err, MYGPT_EINVAL, "%s",
                          "a training state holds a float32 model, not a quantized one");
    if (pos->batch > 0 && !train->order)
        return mygpt_fail(err, MYGPT_EINVAL, "%s",
                          "the loader's order is not drawn, yet the position is in an epoch");
    if (opt->step != pos->step || pos->step < 0 || pos->step > MYGPT_TRAIN_MAX_STEP) // what the loader checks
        return mygpt_fail(err, MYGPT_EINVAL, "the optimizer's step %ld is not the run's step %lld (at most %lld)",
                          opt->step, pos->step, (long long)MYGPT_TRAIN_MAX_STEP);
    // the buffers exist once the optimizer has stepped (when it has any)
    const int started = opt->buf != NULL;
    state_tensor ts[4];
    const int nt = mygpt_state_tensors(g, opt, train, pos->batch, ts);
    for (int i = 0; i < nt; i++) { // a diverged run's NaN never replaces the last good state
        const size_t at = ts[i].es == 4 && (started || i == 0) ? mygpt_first_nonfinite(ts[i].data, ts[i].numel)
                                                                : ts[i].numel;
        if (at < ts[i].numel)
            return mygpt_fail(err, MYGPT_ERANGE, "%s: %s holds a non-finite value (%g at %zu): not saved", path,
                              ts[i].name, (double)((const float *)ts[i].data)[at], at);
    }
    mygpt_strbuf h = {0};
    state_header(&h, g, run, ts, nt, started);
    if (h.failed) {
        mygpt_sb_free(&h);
        return mygpt_fail(err, MYGPT_ENOMEM, "%s", "out of memory for the training state's header");
    }
    sigset_t was;
    const int held = mygpt_hold_signals(&was);
    char tmp[4200];
    mygpt_status st = mygpt_checkpoint_check_path(path, err);
    FILE *f = st == MYGPT_OK ? mygpt_temp_beside(path, tmp, sizeof tmp, &st, err) : NULL;
    if (f) {
        unsigned char len8[8];
        for (int b = 0; b < 8; b++)
            len8[b] = (unsigned char)((uint64_t)h.len >> (8 * b));
        int ok = fwrite(len8, 1, 8, f) == 8 && fwrite(h.data, 1, h.len, f) == h.len;
        for (int i = 0; ok && i < nt; i++)
            if (started || i == 0 || ts[i].es != 4)
                ok = fwrite(ts[i].data, ts[i].es, ts[i].numel, f) == ts[i].numel;
        st = mygpt_commit_temp(f, tmp, path, ok, err);
    }
    mygpt_release_signals(held, &was);
    mygpt_sb_free(&h);
    return st;
}
