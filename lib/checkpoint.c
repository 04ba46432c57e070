/*
 * checkpoint.c - safetensors files for the GPT (see mygpt/checkpoint.h): a writer, and a
 * reader with a small JSON parser for the header that checks every size and offset
 * before it touches the data.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mygpt/checkpoint.h"
#include "mygpt/data.h"
#include "internal.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "safetensors data is little-endian: this reader and writer assume a little-endian host"
#endif

#define MAX_HEADER (100u << 20) /* safetensors' own limit on the JSON header: 100 MB */

mygpt_status mygpt_checkpoint_save(const mygpt_gpt *g, const char *path, mygpt_error *err)
{
    mygpt_strbuf h = {0};
    const mygpt_config *c = &g->config;
    const int n = mygpt_state_dict_len(c);
    mygpt_sb_printf(&h, "{\"__metadata__\":{\"format\":\"pt\",\"vocab_size\":\"%d\",\"embed_dim\":\"%d\","
                        "\"num_heads\":\"%d\",\"num_layers\":\"%d\",\"max_seq_len\":\"%d\"}",
                    c->vocab_size, c->embed_dim, c->num_heads, c->num_layers, c->max_seq_len);
    size_t offset = 0;
    for (int i = 0; i < n; i++) {
        mygpt_state_entry e;
        mygpt_state_dict_entry(c, &g->params, i, &e);
        const size_t bytes = e.numel * sizeof(float);
        if (e.ndim == 2)
            mygpt_sb_printf(&h, ",\"%s\":{\"dtype\":\"F32\",\"shape\":[%lld,%lld],\"data_offsets\":[%zu,%zu]}",
                            e.name, (long long)e.shape[0], (long long)e.shape[1], offset, offset + bytes);
        else
            mygpt_sb_printf(&h, ",\"%s\":{\"dtype\":\"F32\",\"shape\":[%lld],\"data_offsets\":[%zu,%zu]}",
                            e.name, (long long)e.shape[0], offset, offset + bytes);
        offset += bytes;
    }
    mygpt_sb_append(&h, "}");
    while (h.len % 8) // the data starts 8-byte aligned
        mygpt_sb_append(&h, " ");
    mygpt_status st = MYGPT_OK;
    if (h.failed)
        st = mygpt_fail(err, MYGPT_ENOMEM, "%s", "out of memory for the checkpoint header");
    char tmp[4096];
    if (st == MYGPT_OK && (size_t)snprintf(tmp, sizeof tmp, "%s.tmp", path) >= sizeof tmp)
        st = mygpt_fail(err, MYGPT_EINVAL, "%s", "checkpoint path too long");
    FILE *f = st == MYGPT_OK ? fopen(tmp, "wb") : NULL;
    if (st == MYGPT_OK && !f)
        st = mygpt_fail(err, MYGPT_EIO, "cannot write %s: %s", tmp, strerror(errno));
    if (f) {
        unsigned char len8[8];
        for (int b = 0; b < 8; b++)
            len8[b] = (unsigned char)((uint64_t)h.len >> (8 * b));
        int ok = fwrite(len8, 1, 8, f) == 8 && fwrite(h.data, 1, h.len, f) == h.len;
        for (int i = 0; ok && i < n; i++) {
            mygpt_state_entry e;
            mygpt_state_dict_entry(c, &g->params, i, &e);
            ok = fwrite(e.data, sizeof(float), e.numel, f) == e.numel;
        }
        if (fclose(f) != 0 || !ok)
            st = mygpt_fail(err, MYGPT_EIO, "error writing %s", tmp);
        else if (rename(tmp, path) != 0)
            st = mygpt_fail(err, MYGPT_EIO, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
        if (st != MYGPT_OK)
            remove(tmp);
    }
    mygpt_sb_free(&h);
    return st;
}

/* ---- reading: a JSON parser for the header -------------------------------------- */

typedef struct json {
    const char *p, *end;
    const char *error; /* first problem found */
} json;

static void ws(json *j)
{
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
        j->p++;
}

static int expect(json *j, char c)
{
    ws(j);
    if (j->p < j->end && *j->p == c) {
        j->p++;
        return 1;
    }
    if (!j->error)
        j->error = "malformed JSON header";
    return 0;
}

/* A string into out (at most n - 1 bytes; escapes other than \" \\ \/ refused). */
static int jstring(json *j, char *out, size_t n)
{
    if (!expect(j, '"'))
        return 0;
    size_t k = 0;
    while (j->p < j->end && *j->p != '"') {
        char c = *j->p++;
        if (c == '\\') {
            if (j->p >= j->end || (*j->p != '"' && *j->p != '\\' && *j->p != '/')) {
                j->error = "unsupported escape in a JSON string of the header";
                return 0;
            }
            c = *j->p++;
        }
        if (k + 1 >= n) {
            j->error = "a name in the header is too long";
            return 0;
        }
        out[k++] = c;
    }
    out[k] = '\0';
    return expect(j, '"');
}

static int jint(json *j, unsigned long long *out)
{
    ws(j);
    if (j->p >= j->end || *j->p < '0' || *j->p > '9') {
        j->error = "expected a non-negative integer in the header";
        return 0;
    }
    unsigned long long v = 0;
    while (j->p < j->end && *j->p >= '0' && *j->p <= '9') {
        const unsigned d = (unsigned)(*j->p++ - '0');
        if (v > (~0ULL - d) / 10) {
            j->error = "an integer in the header overflows";
            return 0;
        }
        v = v * 10 + d;
    }
    *out = v;
    return 1;
}

/* [int, int, ...] into v (at most max); *n the count */
static int jints(json *j, unsigned long long *v, int max, int *n)
{
    *n = 0;
    if (!expect(j, '['))
        return 0;
    ws(j);
    if (j->p < j->end && *j->p == ']') {
        j->p++;
        return 1;
    }
    do {
        if (*n == max) {
            j->error = "too many dimensions or offsets in the header";
            return 0;
        }
        if (!jint(j, &v[(*n)++]))
            return 0;
        ws(j);
    } while (j->p < j->end && *j->p == ',' && j->p++);
    return expect(j, ']');
}

typedef struct entry {
    char name[128];
    char dtype[16];
    unsigned long long shape[4], offsets[2];
    int ndim, noff;
} entry;

/* {"dtype": "...", "shape": [...], "data_offsets": [b, e]} */
static int jentry(json *j, entry *e)
{
    char key[32];
    e->dtype[0] = '\0';
    e->ndim = -1;
    e->noff = 0;
    if (!expect(j, '{'))
        return 0;
    do {
        if (!jstring(j, key, sizeof key) || !expect(j, ':'))
            return 0;
        if (strcmp(key, "dtype") == 0) {
            if (!jstring(j, e->dtype, sizeof e->dtype))
                return 0;
        } else if (strcmp(key, "shape") == 0) {
            if (!jints(j, e->shape, 4, &e->ndim))
                return 0;
        } else if (strcmp(key, "data_offsets") == 0) {
            if (!jints(j, e->offsets, 2, &e->noff))
                return 0;
        } else {
            j->error = "unknown field in a tensor entry of the header";
            return 0;
        }
        ws(j);
    } while (j->p < j->end && *j->p == ',' && j->p++);
    return expect(j, '}');
}

/* "__metadata__": {"key": "value", ...}: the five sizes of the configuration */
static int jmetadata(json *j, mygpt_config *cfg, int *found)
{
    char key[64], val[64];
    if (!expect(j, '{'))
        return 0;
    ws(j);
    if (j->p < j->end && *j->p == '}') {
        j->p++;
        return 1;
    }
    do {
        if (!jstring(j, key, sizeof key) || !expect(j, ':') || !jstring(j, val, sizeof val))
            return 0;
        const char *names[5] = {"vocab_size", "embed_dim", "num_heads", "num_layers", "max_seq_len"};
        int *fields[5] = {&cfg->vocab_size, &cfg->embed_dim, &cfg->num_heads, &cfg->num_layers,
                          &cfg->max_seq_len};
        for (int i = 0; i < 5; i++)
            if (strcmp(key, names[i]) == 0) {
                char *endp;
                errno = 0;
                const long v = strtol(val, &endp, 10);
                if (*val == '\0' || *endp != '\0' || errno || v < 1 || v > (1 << 24)) {
                    j->error = "a configuration value in __metadata__ is not a size";
                    return 0;
                }
                *fields[i] = (int)v;
                *found |= 1 << i;
            }
        ws(j);
    } while (j->p < j->end && *j->p == ',' && j->p++);
    return expect(j, '}');
}

static int by_offset(const void *a, const void *b)
{
    const entry *x = a, *y = b;
    return (x->offsets[0] > y->offsets[0]) - (x->offsets[0] < y->offsets[0]);
}

/* As the safetensors format requires: the tensors' byte ranges tile the data exactly,
 * from 0 to its end, without holes or overlaps. Sorts entries by offset. */
static int offsets_tile(entry *entries, size_t n, size_t data_len)
{
    qsort(entries, n, sizeof *entries, by_offset);
    unsigned long long at = 0;
    for (size_t k = 0; k < n; k++) {
        if (entries[k].noff != 2 || entries[k].offsets[0] != at || entries[k].offsets[1] < at)
            return 0;
        at = entries[k].offsets[1];
    }
    return at == data_len;
}

mygpt_status mygpt_checkpoint_load(mygpt_gpt **out, const char *path, mygpt_error *err)
{
    *out = NULL;
    char *file;
    size_t len;
    mygpt_status st = mygpt_read_file(path, &file, &len, err);
    if (st != MYGPT_OK)
        return st;
    uint64_t hlen = 0;
    if (len < 8) {
        free(file);
        return mygpt_fail(err, MYGPT_EFORMAT, "%s: too short for a safetensors file (%zu bytes)", path, len);
    }
    for (int b = 0; b < 8; b++)
        hlen |= (uint64_t)(unsigned char)file[b] << (8 * b);
    if (hlen > MAX_HEADER || hlen > len - 8) {
        free(file);
        return mygpt_fail(err, MYGPT_EFORMAT, "%s: header length %llu is larger than the file allows",
                          path, (unsigned long long)hlen);
    }
    const char *data = file + 8 + hlen;
    const size_t data_len = len - 8 - (size_t)hlen;
    json j = {file + 8, file + 8 + hlen, NULL};
    // first pass: the configuration, and the entries in order
    size_t cap = 64, n = 0;
    entry *entries = malloc(cap * sizeof *entries);
    mygpt_config cfg = {0};
    int found = 0;
    if (!entries) {
        free(file);
        return mygpt_fail(err, MYGPT_ENOMEM, "%s", "out of memory reading a checkpoint header");
    }
    if (expect(&j, '{')) {
        do {
            char name[128];
            if (!jstring(&j, name, sizeof name) || !expect(&j, ':'))
                break;
            if (strcmp(name, "__metadata__") == 0) {
                if (!jmetadata(&j, &cfg, &found))
                    break;
            } else {
                if (n == cap) {
                    entry *more = realloc(entries, 2 * cap * sizeof *entries);
                    if (!more) {
                        j.error = "out of memory reading a checkpoint header";
                        break;
                    }
                    entries = more;
                    cap *= 2;
                }
                if (!jentry(&j, &entries[n]))
                    break;
                snprintf(entries[n].name, sizeof entries[n].name, "%s", name);
                n++;
            }
            ws(&j);
        } while (j.p < j.end && *j.p == ',' && j.p++);
        if (!j.error)
            expect(&j, '}');
        ws(&j);
        if (!j.error && j.p != j.end)
            j.error = "trailing bytes after the JSON header";
    }
    if (j.error)
        st = mygpt_fail(err, MYGPT_EFORMAT, "%s: %s", path, j.error);
    else if (found != 31)
        st = mygpt_fail(err, MYGPT_EFORMAT, "%s: __metadata__ lacks the configuration "
                        "(vocab_size, embed_dim, num_heads, num_layers, max_seq_len)", path);
    if (st == MYGPT_OK && !offsets_tile(entries, n, data_len))
        st = mygpt_fail(err, MYGPT_EFORMAT, "%s: the tensors' data offsets do not tile the %zu bytes of data",
                        path, data_len);
    mygpt_gpt *g = NULL;
    if (st == MYGPT_OK)
        st = mygpt_gpt_alloc(&g, &cfg, err); // validates the configuration; draws nothing
    if (st == MYGPT_OK) {
        const int nt = mygpt_state_dict_len(&cfg);
        for (int i = 0; i < nt && st == MYGPT_OK; i++) {
            mygpt_state_entry want;
            mygpt_state_dict_entry(&cfg, &g->params, i, &want);
            const entry *e = NULL;
            for (size_t k = 0; k < n && !e; k++)
                if (strcmp(entries[k].name, want.name) == 0)
                    e = &entries[k];
            const size_t bytes = want.numel * sizeof(float);
            if (!e)
                st = mygpt_fail(err, MYGPT_EFORMAT, "%s: tensor %s is missing", path, want.name);
            else if (strcmp(e->dtype, "F32") != 0)
                st = mygpt_fail(err, MYGPT_EFORMAT, "%s: %s has dtype %s, not F32", path, e->name, e->dtype);
            else if (e->ndim != want.ndim || e->shape[0] != (unsigned long long)want.shape[0] ||
                     (e->ndim == 2 && e->shape[1] != (unsigned long long)want.shape[1]))
                st = mygpt_fail(err, MYGPT_EFORMAT, "%s: %s does not have the shape the configuration gives",
                                path, e->name);
            else if (e->noff != 2 || e->offsets[0] > e->offsets[1] || e->offsets[1] > data_len ||
                     e->offsets[1] - e->offsets[0] != bytes)
                st = mygpt_fail(err, MYGPT_EFORMAT, "%s: the data offsets of %s do not fit the data (%zu bytes)",
                                path, e->name, data_len);
            else
                memcpy(want.data, data + e->offsets[0], bytes);
        }
        for (size_t k = 0; k < n && st == MYGPT_OK; k++) { // nothing else but the masks
            int known = 0;
            for (int i = 0; i < nt && !known; i++) {
                mygpt_state_entry e;
                mygpt_state_dict_entry(&cfg, NULL, i, &e);
                known = strcmp(entries[k].name, e.name) == 0;
            }
            const size_t nl = strlen(entries[k].name);
            if (!known && !(nl > 10 && strcmp(entries[k].name + nl - 10, ".attn.mask") == 0))
                st = mygpt_fail(err, MYGPT_EFORMAT, "%s: unexpected tensor %s", path, entries[k].name);
        }
    }
    free(entries);
    free(file);
    if (st != MYGPT_OK) {
        mygpt_gpt_free(g);
        return st;
    }
    *out = g;
    return MYGPT_OK;
}
