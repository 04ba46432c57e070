/*
 * train_state_read.c - a training run's state read back (see mygpt/train_state.h; written
 * by train_state.c) with the library's JSON reader, every size checked against the run
 * that resumes before anything of it is changed.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mygpt/train_state.h"
#include "mygpt/tensor.h"
#include "base/base.h"
#include "io/json.h"
#include "io/safetensors.h"
#include "io/train_state_file.h"
#include "model/params.h"

#define MAX_HEADER (64u << 20) /* the JSON header                            */

/* One field of a generator's state as rng_string writes it, ended by ':': lowercase hex
 * of at most 16 digits into *u, or a decimal int (an optional '-') into *v. The text after
 * the ':', or NULL for anything else (a value past its type is refused, not wrapped). */
static const char *hex_field(const char *s, uint64_t *u)
{
    const size_t n = strspn(s, "0123456789abcdef");
    if (n == 0 || n > 16 || s[n] != ':')
        return NULL;
    uint64_t x = 0;
    for (size_t k = 0; k < n; k++)
        x = x << 4 | (uint64_t)(s[k] <= '9' ? s[k] - '0' : s[k] - 'a' + 10);
    *u = x;
    return s + n + 1;
}
static const char *int_field(const char *s, int *v)
{
    const char *digits = s + (*s == '-');
    const size_t n = strspn(digits, "0123456789");
    if (n == 0 || n > 10 || digits[n] != ':')
        return NULL;
    const long long x = strtoll(s, NULL, 10);
    if (x < INT_MIN || x > INT_MAX)
        return NULL;
    *v = (int)x;
    return digits + n + 1;
}

/* The reverse of train_state.c's rng_string: 1, or 0 when s is not written as a
 * generator's state (whether its fields agree is mygpt_rng_check's) */
static int rng_parse(const char *s, mygpt_rng *r)
{
    uint64_t seed, bits;
    int left, next, cached, cpu;
    const char *p = hex_field(s, &seed);
    p = p ? int_field(p, &left) : NULL;
    p = p ? int_field(p, &next) : NULL;
    p = p ? int_field(p, &cached) : NULL;
    p = p ? hex_field(p, &bits) : NULL;
    p = p ? int_field(p, &cpu) : NULL;
    if (!p || strlen(p) != 8 * MYGPT_MT_N)
        return 0;
    const size_t used = (size_t)(p - s);
    mygpt_rng out = {0};
    for (int i = 0; i < MYGPT_MT_N; i++) {
        char word[9];
        memcpy(word, s + used + 8 * i, 8);
        word[8] = '\0';
        char *end;
        out.mt[i] = (uint32_t)strtoul(word, &end, 16);
        if (*end != '\0' || strspn(word, "0123456789abcdef") != 8)
            return 0;
    }
    out.seed = seed;
    out.left = left;
    out.next = next;
    out.has_cached_normal = cached;
    memcpy(&out.cached_normal, &bits, sizeof bits);
    out.torch_cpu = (mygpt_torch_cpu)cpu;
    *r = out;
    return 1;
}

typedef struct meta {
    char key[STATE_KEY_MAX];
    char *value;
} meta;

typedef struct state_file {
    meta m[STATE_META_MAX];
    int nm;
    struct {
        char name[64], dtype[8];
        unsigned long long numel, from, to;
    } t[8];
    int nt;
} state_file;

static const char *meta_get(const state_file *s, const char *key)
{
    for (int i = 0; i < s->nm; i++)
        if (strcmp(s->m[i].key, key) == 0)
            return s->m[i].value;
    return NULL;
}

/* A metadata integer, or 0 with *ok cleared */
static long long meta_ll(const state_file *s, const char *key, int *ok)
{
    const char *v = meta_get(s, key);
    char *end;
    errno = 0;
    const long long x = v ? strtoll(v, &end, 10) : 0;
    if (!v || !*v || *end || errno)
        *ok = 0;
    return x;
}

static void state_file_free(state_file *s)
{
    for (int i = 0; i < s->nm; i++)
        free(s->m[i].value);
    s->nm = 0;
}

/* NULL when s's tensors lie end to end over the data's data_len bytes, as a save lays them
 * (a tensor read elsewhere than it was written would be another's values: the format's
 * rule, mygpt_st_offsets_tile); else what is wrong */
static const char *tiling(const state_file *s, size_t data_len)
{
    st_entry e[sizeof s->t / sizeof s->t[0]];
    memset(e, 0, sizeof e);
    for (int i = 0; i < s->nt; i++) {
        e[i].offsets[0] = s->t[i].from;
        e[i].offsets[1] = s->t[i].to;
        e[i].noff = 2;
    }
    const char *why = NULL;
    const int tiles = mygpt_st_offsets_tile(e, (size_t)s->nt, data_len, &why);
    return tiles > 0 ? NULL : tiles < 0 ? "out of memory" : why;
}

/* The header's metadata (tensors 0) or its tensors (1) into *s; NULL, or what is wrong */
static const char *parse_header(const mygpt_json *j, state_file *s, size_t data_len, int tensors)
{
    if (j->v[0].type != MYGPT_JSON_OBJECT)
        return "the JSON header is not an object";
    for (size_t k = 1, c = 0; c < j->v[0].count; c++, k = j->v[k + 1].next) {
        const size_t v = k + 1;
        if (mygpt_json_equals(j, k, "__metadata__") != !tensors)
            continue;
        if (!tensors) {
            if (j->v[v].type != MYGPT_JSON_OBJECT)
                return "__metadata__ is not an object";
            for (size_t mk = v + 1, mc = 0; mc < j->v[v].count; mc++, mk = j->v[mk + 1].next) {
                if (s->nm == STATE_META_MAX)
                    return "too many metadata entries for a training state";
                meta *m = &s->m[s->nm];
                if (j->v[mk + 1].type != MYGPT_JSON_STRING)
                    return "a metadata value is not a string";
                const size_t kl = mygpt_json_string(j, mk, m->key, sizeof m->key);
                if (kl == (size_t)-1 || kl != strlen(m->key))
                    return "a metadata key is too long for a training state";
                if (!(m->value = malloc(STATE_VALUE_MAX)))
                    return "out of memory";
                s->nm++;
                const size_t vl = mygpt_json_string(j, mk + 1, m->value, STATE_VALUE_MAX);
                if (vl == (size_t)-1 || vl != strlen(m->value))
                    return "a metadata value is too long for a training state";
                const char *before = meta_get(s, m->key); // (the first of the key: maybe this one)
                if (before != m->value && strcmp(before, m->value) != 0) // which would count?
                    return "a metadata key is given two values";
            }
            continue;
        }
        if (s->nt == (int)(sizeof s->t / sizeof s->t[0]))
            return "more tensors than a training state holds";
        const size_t l = mygpt_json_string(j, k, s->t[s->nt].name, sizeof s->t[s->nt].name);
        if (l == (size_t)-1 || l != strlen(s->t[s->nt].name) || j->v[v].type != MYGPT_JSON_OBJECT)
            return "a tensor entry is not one of a training state";
        size_t n;
        const size_t dt = mygpt_json_get(j, v, "dtype", &n);
        if (n != 1 || mygpt_json_string(j, dt, s->t[s->nt].dtype, sizeof s->t[s->nt].dtype) == (size_t)-1)
            return "a tensor's dtype is not one of a training state";
        const size_t sh = mygpt_json_get(j, v, "shape", &n);
        long long numel, from, to;
        if (n != 1 || j->v[sh].type != MYGPT_JSON_ARRAY || j->v[sh].count != 1 ||
            !mygpt_json_integer(j, sh + 1, 0, (long long)1 << 50, &numel))
            return "a tensor's shape is not one dimension";
        const size_t off = mygpt_json_get(j, v, "data_offsets", &n);
        if (n != 1 || j->v[off].type != MYGPT_JSON_ARRAY || j->v[off].count != 2 ||
            !mygpt_json_integer(j, off + 1, 0, (long long)data_len, &from) ||
            !mygpt_json_integer(j, j->v[off + 1].next, from, (long long)data_len, &to))
            return "a tensor's data offsets are outside the data";
        for (int i = 0; i < s->nt; i++) // which would count?
            if (strcmp(s->t[i].name, s->t[s->nt].name) == 0)
                return "a tensor is named twice in the header";
        s->t[s->nt].numel = (unsigned long long)numel;
        s->t[s->nt].from = (unsigned long long)from;
        s->t[s->nt].to = (unsigned long long)to;
        s->nt++;
    }
    return tensors ? tiling(s, data_len) : NULL;
}

/* n bytes at offset off of f into buf: 1, or 0 */
static int read_at(FILE *f, void *buf, size_t n, unsigned long long off)
{
    return fseeko(f, (off_t)off, SEEK_SET) == 0 && fread(buf, 1, n, f) == n;
}

/* Whether the file was saved with run's settings, no more and no fewer: MYGPT_OK, or
 * the first difference */
static mygpt_status check_settings(const char *path, const state_file *s, const mygpt_train_run *run,
                                   mygpt_error *err)
{
    const mygpt_train_setting *settings = run->settings;
    const int n = run->n_settings;
    for (int i = 0; i < n; i++) {
        char key[STATE_KEY_MAX];
        snprintf(key, sizeof key, "run:%s", settings[i].key);
        const char *v = meta_get(s, key);
        if (!v || strcmp(v, settings[i].value) != 0)
            return mygpt_fail(err, MYGPT_EINVAL,
                              "%s was saved by a run with %s %s, not %s: resume with the flags it "
                              "was saved with",
                              path, settings[i].key, v ? v : "(not given)", settings[i].value);
    }
    for (int m = 0; m < s->nm; m++) { // and no setting of that run is missing from this one
        if (strncmp(s->m[m].key, "run:", 4) != 0)
            continue;
        int given = 0;
        for (int i = 0; i < n && !given; i++)
            given = strcmp(s->m[m].key + 4, settings[i].key) == 0;
        if (!given)
            return mygpt_fail(err, MYGPT_EINVAL,
                              "%s was saved by a run with %s %s, not without it: resume with the flags it "
                              "was saved with",
                              path, s->m[m].key + 4, s->m[m].value);
    }
    return MYGPT_OK;
}

/* Whether the file's metadata describe g and run (its optimizer's kind, its generators'
 * count, its loader's windows and its settings): MYGPT_OK, or the first difference */
static mygpt_status check_state(const char *path, const state_file *s, const mygpt_gpt *g,
                                const mygpt_train_run *run, mygpt_error *err)
{
    const mygpt_optimizer *opt = run->opt;
    const mygpt_dataloader *train = run->train;
    const int n_rng = run->n_rng;
    const char *format = meta_get(s, "format");
    if (!format || strcmp(format, TRAIN_STATE_FORMAT) != 0)
        return mygpt_fail(err, MYGPT_EFORMAT,
                          "%s is not a training state (mygpt train writes one with "
                          "--checkpoint-every, --state or at Ctrl-C)",
                          path);
    const char *version = meta_get(s, "version");
    if (!version || strcmp(version, "1") != 0)
        return mygpt_fail(err, MYGPT_EFORMAT, "%s: a training state of version %s, not 1", path,
                          version ? version : "(none)");
    const mygpt_config *c = &g->config;
    const char *arch = meta_get(s, "arch");
    if (!arch || strcmp(arch, mygpt_arch_name(c->arch)) != 0)
        return mygpt_fail(err, MYGPT_EINVAL,
                          "%s holds the training of another model (arch %s; this run's is %s)", path,
                          arch ? arch : "(none)", mygpt_arch_name(c->arch));
    const struct {
        const char *key;
        long long have;
    } sizes[] = {{"vocab_size", c->vocab_size},
                 {"embed_dim", c->embed_dim},
                 {"num_heads", c->num_heads},
                 {"num_layers", c->num_layers},
                 {"max_seq_len", c->max_seq_len},
                 {"qkv_bias", c->qkv_bias},
                 {"num_parameters", (long long)g->num_parameters}};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        int ok = 1;
        const long long v = meta_ll(s, sizes[i].key, &ok);
        if (!ok || v != sizes[i].have)
            return mygpt_fail(err, MYGPT_EINVAL,
                              "%s holds the training of another model (%s %s; this run's is %lld)", path,
                              sizes[i].key, meta_get(s, sizes[i].key) ? meta_get(s, sizes[i].key) : "(none)",
                              sizes[i].have);
    }
    const char *kind = meta_get(s, "optimizer"), *want = opt->kind == MYGPT_ADAMW ? "adamw" : "sgd";
    if (!kind || strcmp(kind, want) != 0)
        return mygpt_fail(err, MYGPT_EINVAL, "%s was saved by a run with the optimizer %s, not %s", path,
                          kind ? kind : "(none)", want);
    int ok = 1;
    if (meta_ll(s, "generators", &ok) != n_rng || !ok)
        return mygpt_fail(err, MYGPT_EFORMAT, "%s: the state holds %s generators, not %d", path,
                          meta_get(s, "generators") ? meta_get(s, "generators") : "no", n_rng);
    MYGPT_TRY(check_settings(path, s, run, err));
    // after the settings, which name the flag that changes the windows (--context, --batch, --text)
    if (meta_ll(s, "loader.windows", &ok) != (long long)train->num_windows || !ok)
        return mygpt_fail(
            err, MYGPT_EINVAL, "%s was saved by a run whose training loader has %s windows, not %zu", path,
            meta_get(s, "loader.windows") ? meta_get(s, "loader.windows") : "no", train->num_windows);
    return MYGPT_OK;
}

/* The file's tensor name (of dtype and numel), or NULL when it is absent or other */
static int find_tensor(const state_file *s, const char *name, const char *dtype, size_t numel, size_t es)
{
    for (int i = 0; i < s->nt; i++)
        if (strcmp(s->t[i].name, name) == 0)
            return strcmp(s->t[i].dtype, dtype) == 0 && s->t[i].numel == numel &&
                           s->t[i].to - s->t[i].from == numel * es
                       ? i
                       : -2;
    return -1;
}

/* A state file being read: open, its header parsed into s (its metadata, then its
 * tensors once the metadata are the run's) */
typedef struct state_read {
    FILE *f;
    char *header;
    state_file *s;
    mygpt_json j;
    unsigned long long data_at, data_len;
} state_read;

static void state_read_free(state_read *r)
{
    mygpt_json_free(&r->j);
    if (r->s)
        state_file_free(r->s);
    free(r->s);
    free(r->header);
    if (r->f)
        fclose(r->f);
}

/* Opens path, reads its header and parses its metadata into r (freed by the caller) */
static mygpt_status open_state(const char *path, state_read *r, mygpt_error *err)
{
    // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused just below
    const int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0 || !(r->f = fdopen(fd, "rb"))) {
        const int why = errno;
        if (fd >= 0)
            close(fd);
        return mygpt_fail_open(err, path, why);
    }
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode))
        return mygpt_fail(err, MYGPT_EIO, "cannot read %s: %s", path,
                          S_ISDIR(sb.st_mode) ? "it is a directory" : "not a regular file (a device, FIFO or socket)");
    const unsigned long long len = (unsigned long long)sb.st_size;
    unsigned char len8[8];
    unsigned long long hlen = 0;
    if (len < 8 || !read_at(r->f, len8, 8, 0))
        return mygpt_fail(err, MYGPT_EFORMAT, "%s is not a training state (too short for a safetensors file)",
                          path);
    for (int b = 0; b < 8; b++)
        hlen |= (unsigned long long)len8[b] << (8 * b);
    if (hlen > MAX_HEADER || hlen > len - 8)
        return mygpt_fail(err, MYGPT_EFORMAT,
                          "%s is not a training state (not a safetensors file, or one cut short)", path);
    r->header = malloc(hlen ? hlen : 1);
    r->s = calloc(1, sizeof *r->s);
    if (!r->header || !r->s)
        return mygpt_fail(err, MYGPT_ENOMEM, "%s", "out of memory reading a training state");
    if (!read_at(r->f, r->header, hlen, 8))
        return mygpt_fail(err, MYGPT_EIO, "cannot read %s: %s", path, errno ? strerror(errno) : "it ended early");
    r->data_at = 8 + hlen;
    r->data_len = len - r->data_at;
    char what[300];
    snprintf(what, sizeof what, "%s (its header)", path);
    MYGPT_TRY(mygpt_json_parse(&r->j, r->header, hlen, 8, 1u << 16, what, err));
    // the metadata first: a file that is not a training state is said to be so
    const char *why = parse_header(&r->j, r->s, r->data_len, 0);
    return why ? mygpt_fail(err, MYGPT_EFORMAT, "%s: %s", path, why) : MYGPT_OK;
}

/* What a state gives a run besides its weights, read and checked before anything of the
 * run is changed */
typedef struct state_values {
    mygpt_train_position at;
    long long opt_step, started; /* the optimizer's step; whether it has its buffers */
    mygpt_rng *rs;               /* (n_rng)                                          */
    float *bufs[2];              /* the optimizer's buffers, or NULL                 */
    int64_t *order;              /* the loader's order, or NULL                      */
} state_values;

/* The state's position and optimizer step into v, checked against run's loader and
 * optimizer */
static mygpt_status read_position(const char *path, const state_file *s, const mygpt_train_run *run,
                                  state_values *v, mygpt_error *err)
{
    const mygpt_dataloader *train = run->train;
    mygpt_train_position *at = &v->at;
    int ok = 1;
    at->step = meta_ll(s, "step", &ok);
    at->epoch = meta_ll(s, "epoch", &ok);
    at->batch = meta_ll(s, "batch", &ok);
    v->opt_step = meta_ll(s, "optimizer.step", &ok);
    v->started = meta_ll(s, "optimizer.buffers", &ok);
    const char *buffer_names[2];
    if (!ok || at->step < 0 || at->epoch < 0 || at->batch < 0 || v->opt_step < 0 ||
        (v->started != 0 && v->started != 1) ||
        (size_t)at->batch >= (train->num_batches ? train->num_batches : 1))
        return mygpt_fail(err, MYGPT_EFORMAT,
                          "%s: the state's step, epoch, batch or optimizer step is missing or "
                          "out of range",
                          path);
    if (at->step > MYGPT_TRAIN_MAX_STEP)
        return mygpt_fail(err, MYGPT_EFORMAT, "%s: the state's step %lld is past the last a run takes (%lld)", path,
                          at->step, (long long)MYGPT_TRAIN_MAX_STEP);
    if (v->opt_step != at->step) // one opt.step() a step
        return mygpt_fail(err, MYGPT_EFORMAT, "%s: the state's optimizer step %lld is not its step %lld", path,
                          v->opt_step, at->step);
    if ((size_t)at->epoch > (size_t)at->step / (train->num_batches ? train->num_batches : 1) ||
        (size_t)at->epoch * train->num_batches + (size_t)at->batch != (size_t)at->step)
        return mygpt_fail(err, MYGPT_EFORMAT,
                          "%s: the state's step %lld is not epoch %lld of %zu batches and batch %lld", path,
                          at->step, at->epoch, train->num_batches, at->batch);
    if (v->started != (v->opt_step > 0 && mygpt_state_buffers(run->opt, buffer_names) > 0)) // made at the first step
        return mygpt_fail(err, MYGPT_EFORMAT, "%s: the state's optimizer %s buffers at step %lld", path,
                          v->started ? "holds" : "lacks", v->opt_step);
    return MYGPT_OK;
}

/* The n_rng generators of the state into v->rs, each one mygpt_rng_check accepts */
static mygpt_status read_generators(const char *path, const state_file *s, int n_rng, state_values *v,
                                    mygpt_error *err)
{
    if (!(v->rs = malloc((size_t)(n_rng ? n_rng : 1) * sizeof *v->rs)))
        return mygpt_fail(err, MYGPT_ENOMEM, "%s", "out of memory reading a training state");
    for (int i = 0; i < n_rng; i++) {
        char key[32];
        snprintf(key, sizeof key, "generator.%d", i);
        const char *value = meta_get(s, key);
        mygpt_error why = {0};
        if (!value || !rng_parse(value, &v->rs[i]))
            return mygpt_fail(err, MYGPT_EFORMAT, "%s: %s is missing or not a generator's state", path, key);
        if (mygpt_rng_check(&v->rs[i], &why) != MYGPT_OK) // a draw would read past its words
            return mygpt_fail(err, MYGPT_EFORMAT, "%s: %s: %s", path, key, why.message);
    }
    return MYGPT_OK;
}

/* Every tensor the run needs found in the file; the optimizer's buffers and the
 * loader's order read into v (the weights are read last, into the model, once
 * everything else is) */
static mygpt_status read_tensors(const char *path, const state_read *r, const mygpt_gpt *g,
                                 const mygpt_train_run *run, state_values *v, mygpt_error *err)
{
    state_tensor ts[4];
    const int nt = mygpt_state_tensors(g, run->opt, run->train, v->at.batch, ts); // their names and sizes
    for (int i = 0; i < nt; i++) {
        if (i > 0 && ts[i].es == 4 && !v->started)
            continue; // no buffers yet
        const int k = find_tensor(r->s, ts[i].name, ts[i].dtype, ts[i].numel, ts[i].es);
        if (k < 0)
            return mygpt_fail(err, MYGPT_EFORMAT, "%s: tensor %s is %s", path, ts[i].name,
                              k == -1 ? "missing" : "not of the dtype or size this run needs");
        if (i == 0)
            continue;
        const size_t n = ts[i].numel ? ts[i].numel : 1;
        void *into = ts[i].es == 8 ? (void *)(v->order = malloc(n * sizeof *v->order))
                                   : (void *)(v->bufs[i - 1] = mygpt_float_block(n));
        if (!into)
            return mygpt_fail(err, MYGPT_ENOMEM, "%s", "out of memory reading a training state");
        if (!read_at(r->f, into, ts[i].numel * ts[i].es, r->data_at + r->s->t[k].from))
            return mygpt_fail(err, MYGPT_EIO, "cannot read %s: %s", path, errno ? strerror(errno) : "it ended early");
    }
    return MYGPT_OK;
}

/* What v holds, as a run leaves it: the loader's order a permutation of its windows, the
 * optimizer's buffers finite and AdamW's exp_avg_sq >= 0 */
static mygpt_status check_values(const char *path, const mygpt_gpt *g, const mygpt_train_run *run,
                                 const state_values *v, mygpt_error *err)
{
    const size_t windows = run->train->num_windows;
    mygpt_status st = MYGPT_OK;
    if (v->order) { // randperm's: every window once
        unsigned char *seen = calloc(windows ? windows : 1, 1);
        if (!seen)
            st = mygpt_fail(err, MYGPT_ENOMEM, "%s", "out of memory reading a training state");
        for (size_t w = 0; w < windows && st == MYGPT_OK; w++)
            if (v->order[w] < 0 || (size_t)v->order[w] >= windows || seen[v->order[w]]++)
                st = mygpt_fail(err, MYGPT_EFORMAT, "%s: the loader's order is not a permutation of its %zu windows "
                                "(window %lld at %zu)", path, windows, (long long)v->order[w], w);
        free(seen);
    }
    const char *names[2] = {NULL, NULL};
    mygpt_state_buffers(run->opt, names);
    for (int b = 0; b < 2 && st == MYGPT_OK; b++) {
        const int squares = b == 1 && run->opt->kind == MYGPT_ADAMW;
        for (size_t i = 0; v->bufs[b] && i < g->num_parameters && st == MYGPT_OK; i++)
            if (!isfinite(v->bufs[b][i]) || (squares && v->bufs[b][i] < 0.0f))
                st = mygpt_fail(err, MYGPT_EFORMAT, "%s: %s holds %g at %zu, which no optimizer step leaves", path,
                                names[b], (double)v->bufs[b][i], i);
    }
    return st;
}

/* The weights, straight into the model: nothing can fail after this read */
static mygpt_status read_weights(const char *path, const state_read *r, mygpt_gpt *g, mygpt_error *err)
{
    const int w = find_tensor(r->s, "model.params", "F32", g->num_parameters, 4);
    if (!read_at(r->f, g->params_memory, g->num_parameters * 4, r->data_at + r->s->t[w].from))
        return mygpt_fail(err, MYGPT_EIO, "cannot read %s: %s (the model's weights are now partly the file's)", path,
                          errno ? strerror(errno) : "it ended early");
    const size_t bad = mygpt_first_nonfinite(g->params_memory, g->num_parameters);
    if (bad < g->num_parameters)
        return mygpt_fail(err, MYGPT_EFORMAT, "%s: model.params holds %g at %zu, which no saved run holds (the "
                          "model's weights are now the file's)", path, (double)g->params_memory[bad], bad);
    return MYGPT_OK;
}

/* The run takes v's buffers, generators, order and position */
static void take_values(const mygpt_gpt *g, const mygpt_train_run *run, state_values *v)
{
    mygpt_optimizer *opt = run->opt;
    mygpt_optimizer_free(opt);
    opt->buf = v->bufs[0];
    opt->buf2 = v->bufs[1];
    v->bufs[0] = v->bufs[1] = NULL;
    opt->step = (long)v->opt_step;
    opt->n = g->num_parameters;
    for (int i = 0; i < run->n_rng; i++)
        *run->rngs[i] = v->rs[i];
    free(run->train->order);
    run->train->order = v->order;
    v->order = NULL;
    *run->pos = v->at;
}

mygpt_status mygpt_train_state_load(const char *path, mygpt_gpt *g, const mygpt_train_run *run, mygpt_error *err)
{
    if (g->quantized)
        return mygpt_fail(err, MYGPT_EINVAL, "%s",
                          "a training state continues a float32 model, not a quantized one");
    const char *invalid = mygpt_state_run_invalid(run);
    if (invalid)
        return mygpt_fail(err, MYGPT_EINVAL, "%s", invalid);
    state_read r = {0};
    state_values v = {0};
    const char *why;
    mygpt_status st = open_state(path, &r, err);
    if (st == MYGPT_OK)
        st = check_state(path, r.s, g, run, err);
    if (st == MYGPT_OK && (why = parse_header(&r.j, r.s, r.data_len, 1)))
        st = mygpt_fail(err, MYGPT_EFORMAT, "%s: %s", path, why);
    // everything the run needs, read and checked before anything of the run is changed
    if (st == MYGPT_OK)
        st = read_position(path, r.s, run, &v, err);
    if (st == MYGPT_OK)
        st = read_generators(path, r.s, run->n_rng, &v, err);
    if (st == MYGPT_OK)
        st = read_tensors(path, &r, g, run, &v, err);
    if (st == MYGPT_OK)
        st = check_values(path, g, run, &v, err);
    if (st == MYGPT_OK)
        st = read_weights(path, &r, g, err);
    if (st == MYGPT_OK)
        take_values(g, run, &v);
    free(v.bufs[0]);
    free(v.bufs[1]);
    free(v.order);
    free(v.rs);
    state_read_free(&r);
    return st;
}

/* The configuration a state's metadata give (its format and version checked first),
 * dropout off: the model of a state is for inference */
static mygpt_status state_config(const char *path, const state_file *s, mygpt_config *cfg, mygpt_error *err)
{
    const char *format = meta_get(s, "format"), *version = meta_get(s, "version"), *arch = meta_get(s, "arch");
    if (!format || strcmp(format, TRAIN_STATE_FORMAT) != 0)
        return mygpt_fail(err, MYGPT_EFORMAT, "%s is not a training state", path);
    if (!version || strcmp(version, "1") != 0)
        return mygpt_fail(err, MYGPT_EFORMAT, "%s: a training state of version %s, not 1", path,
                          version ? version : "(none)");
    mygpt_error why = {0};
    if (!arch || mygpt_arch_parse(arch, &cfg->arch, &why) != MYGPT_OK)
        return mygpt_fail(err, MYGPT_EFORMAT, "%s: the training state's arch %s is not one mygpt builds", path,
                          arch ? arch : "(none)");
    int ok = 1;
    static const char *const NAMES[] = {"vocab_size", "embed_dim", "num_heads", "num_layers", "max_seq_len",
                                        "qkv_bias"};
    int *const fields[] = {&cfg->vocab_size, &cfg->embed_dim, &cfg->num_heads, &cfg->num_layers, &cfg->max_seq_len,
                           &cfg->qkv_bias};
    for (int i = 0; i < 6 && ok; i++) {
        const long long v = meta_ll(s, NAMES[i], &ok);
        if (ok && (v < INT_MIN || v > INT_MAX)) // (cut to an int, it could pass as another value)
            return mygpt_fail(err, MYGPT_EFORMAT, "%s: the training state's %s is %lld, out of range", path, NAMES[i],
                              v);
        *fields[i] = (int)v;
    }
    if (!ok)
        return mygpt_fail(err, MYGPT_EFORMAT, "%s: the training state's configuration (vocab_size, embed_dim, "
                          "num_heads, num_layers, max_seq_len, qkv_bias) is missing or not whole numbers", path);
    mygpt_error bad = {0};
    if (mygpt_config_validate(cfg, &bad) != MYGPT_OK)
        return mygpt_fail(err, MYGPT_EFORMAT, "%s: the training state's configuration: %s", path, bad.message);
    return MYGPT_OK;
}

mygpt_status mygpt_train_state_model(mygpt_gpt **out, const char *path, mygpt_error *err)
{
    *out = NULL;
    state_read r = {0};
    mygpt_config cfg = {0};
    mygpt_gpt *g = NULL;
    const char *why;
    mygpt_status st = open_state(path, &r, err);
    if (st == MYGPT_OK)
        st = state_config(path, r.s, &cfg, err);
    if (st == MYGPT_OK && (why = parse_header(&r.j, r.s, r.data_len, 1)))
        st = mygpt_fail(err, MYGPT_EFORMAT, "%s: %s", path, why);
    size_t sizes[MYGPT_NUM_PARAM_TENSORS], count = 0; // the model's parameters, as mygpt_gpt_alloc counts them
    if (st == MYGPT_OK)
        mygpt_param_sizes(&cfg, sizes);
    for (int i = 0; i < MYGPT_NUM_PARAM_TENSORS && st == MYGPT_OK; i++)
        count += sizes[i];
    int w = -1; // found before the model is made: a small file's claim of a huge one costs nothing
    if (st == MYGPT_OK && (w = find_tensor(r.s, "model.params", "F32", count, 4)) < 0)
        st = mygpt_fail(err, MYGPT_EFORMAT, "%s: model.params is %s", path,
                        w == -1 ? "missing" : "not of the size the state's configuration gives");
    if (st == MYGPT_OK)
        st = mygpt_gpt_alloc(&g, &cfg, err); // draws nothing: every weight comes from the file
    if (st == MYGPT_OK && !read_at(r.f, g->params_memory, g->num_parameters * 4, r.data_at + r.s->t[w].from))
        st = mygpt_fail(err, MYGPT_EIO, "cannot read %s: %s", path, errno ? strerror(errno) : "it ended early");
    const size_t bad = st == MYGPT_OK ? mygpt_first_nonfinite(g->params_memory, g->num_parameters) : 0;
    if (st == MYGPT_OK && bad < g->num_parameters)
        st = mygpt_fail(err, MYGPT_EFORMAT, "%s: model.params holds %g at %zu, which no saved run holds", path,
                        (double)g->params_memory[bad], bad);
    if (st == MYGPT_OK) {
        *out = g;
        g = NULL;
    }
    mygpt_gpt_free(g);
    state_read_free(&r);
    return st;
}
