/* golden.c - reading the committed golden files (see golden.h). */
#include "golden.h"

#include <criterion/criterion.h>
#include <ctype.h>

#include "model/params.h" /* the parameter table's rows */
#include "mygpt/gpt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *golden_dir(void)
{
    const char *other = getenv("MYGPT_GOLDEN_DIR"); // a cross-check's goldens (tools/crosscheck_finetune.py)
    return other && *other ? other : GOLDEN_DIR;
}

int golden_is_committed(void)
{
    const char *other = getenv("MYGPT_GOLDEN_DIR");
    return !(other && *other);
}

FILE *golden_open(const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", golden_dir(), name);
    return fopen(path, "r");
}

long golden_next_line(FILE *f, char **line, size_t *cap, long *lineno)
{
    for (;;) {
        ssize_t n = getline(line, cap, f);
        if (n < 0)
            return -1;
        (*lineno)++;
        if (n > 0 && (*line)[n - 1] == '\n')
            (*line)[--n] = '\0';
        if (n == 0 || (*line)[0] == '#')
            continue;
        return (long)n;
    }
}

float golden_unhex32(const char *h)
{
    float f;
    cr_assert_eq(golden_parse_f32(h, &f, 1), 1, "bad hex '%s'", h);
    return f;
}

int golden_reader_open(golden_reader *r, const char *name)
{
    *r = (golden_reader){.f = golden_open(name)};
    return r->f ? 0 : -1;
}

golden_reader golden_reader_must_open(const char *name)
{
    golden_reader r;
    cr_assert_eq(golden_reader_open(&r, name), 0, "%s/%s is missing", golden_dir(), name);
    return r;
}

char *golden_read(golden_reader *r)
{
    return golden_next_line(r->f, &r->line, &r->cap, &r->lineno) >= 0 ? r->line : NULL;
}

void golden_reader_close(golden_reader *r)
{
    if (r->f)
        fclose(r->f);
    free(r->line);
    *r = (golden_reader){0};
}

int golden_split(char *s, char sep, char **fields, int max)
{
    int n = 0;
    fields[n++] = s;
    for (char *p = s; *p && n < max; p++)
        if (*p == sep) {
            *p = '\0';
            fields[n++] = p + 1;
        }
    return n;
}

size_t golden_unhex_bytes(const char *h, char *out, size_t cap)
{
    size_t n = 0;
    for (; strcmp(h, "-") != 0 && h[0] && h[1]; h += 2) {
        unsigned b;
        cr_assert_lt(n + 1, cap, "%zu bytes of hex do not fit in %zu", strlen(h) / 2 + n, cap);
        cr_assert(isxdigit((unsigned char)h[0]) && isxdigit((unsigned char)h[1]), "bad hex %.8s", h);
        sscanf(h, "%2x", &b);
        out[n++] = (char)b;
    }
    out[n] = '\0';
    return n;
}

void golden_unescape(char *s)
{
    char *w = s;
    for (char *r = s; *r; r++) {
        if (*r == '\\' && r[1]) {
            r++;
            *w++ = *r == 'n' ? '\n' : *r == 't' ? '\t' : *r;
        } else {
            *w++ = *r;
        }
    }
    *w = '\0';
}

size_t golden_parse_f32(const char *s, float *out, size_t max)
{
    size_t n = 0;
    char *end;
    while (n < max) {
        while (*s == ' ')
            s++;
        if (*s == '\0' || *s == '-')
            break;
        uint32_t bits = (uint32_t)strtoul(s, &end, 16);
        if (end == s)
            break;
        memcpy(&out[n++], &bits, sizeof bits);
        s = end;
    }
    return n;
}

size_t golden_parse_i64(const char *s, int64_t *out, size_t max)
{
    size_t n = 0;
    char *end;
    while (n < max) {
        while (*s == ' ')
            s++;
        if (*s == '\0' || (*s == '-' && (s[1] == '\0' || s[1] == ' ')))
            break;
        long long v = strtoll(s, &end, 10);
        if (end == s)
            break;
        out[n++] = (int64_t)v;
        s = end;
    }
    return n;
}

uint64_t golden_checksum(const float *v, size_t n)
{
    uint64_t h = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t b;
        memcpy(&b, &v[i], sizeof b);
        h += (uint64_t)b * (uint64_t)(i + 1);
    }
    return h;
}

int golden_param_span(const mygpt_config *cfg, const char *name, size_t *offset, size_t *numel)
{
    const int lnf = strcmp(name, "lnf") == 0;
    for (int i = 0; i < MYGPT_NUM_PARAM_TENSORS; i++) {
        mygpt_param_info info;
        mygpt_param_info_get(cfg, i, &info);
        if (strcmp(info.field, lnf ? "lnfw" : name) == 0) {
            *offset = info.offset;
            *numel = info.numel * (lnf ? 2 : 1); // ln_f's beta follows its gamma
            return 1;
        }
    }
    return 0;
}

double golden_span_worst(const mygpt_config *cfg, const float *grads, const char *line, char name[16],
                         size_t *numel)
{
    char maxhex[16];
    size_t n, off;
    int used;
    cr_assert_eq(sscanf(line, "%15s %zu %15s %n", name, &n, maxhex, &used), 3, "not NAME NUMEL MAXABS: %.60s", line);
    cr_assert(golden_param_span(cfg, name, &off, numel), "unknown tensor %s", name);
    cr_assert_eq(n, *numel, "%s: %zu values, the golden %zu", name, *numel, n);
    const double scale = fmax(1.0, fabs(golden_unhex32(maxhex)));
    double worst = 0;
    int entries = 0;
    for (const char *p = line + used;;) {
        size_t idx;
        char hex[16];
        int k;
        if (sscanf(p, "%zu:%8s%n", &idx, hex, &k) != 2)
            break;
        p += k;
        cr_assert_lt(idx, n, "%s: index %zu of %zu", name, idx, n);
        worst = fmax(worst, fabs((double)grads[off + idx] - golden_unhex32(hex)) / scale);
        entries++;
    }
    cr_assert_gt(entries, 0, "%s: no INDEX:BITS entries", name);
    return worst;
}

void golden_write_safetensors_header(FILE *f, const char *header, size_t len)
{
    unsigned char len8[8];
    for (int b = 0; b < 8; b++)
        len8[b] = (unsigned char)((uint64_t)len >> (8 * b));
    cr_assert_eq(fwrite(len8, 1, 8, f), 8);
    cr_assert_eq(fwrite(header, 1, len, f), len);
}

int golden_entry_named(const mygpt_gpt *g, const char *name)
{
    for (int j = 0; j < mygpt_state_dict_len(&g->config); j++) {
        mygpt_state_entry e;
        mygpt_state_dict_entry(&g->config, &g->params, j, &e);
        if (strcmp(e.name, name) == 0)
            return j;
    }
    return -1;
}

double golden_sampled_worst(const mygpt_gpt *g, const float *block, const char *line, char *why, size_t why_len)
{
    char name[96], maxhex[16];
    size_t numel;
    int used;
    float maxabs;
    if (sscanf(line, "%95s %zu %15s %n", name, &numel, maxhex, &used) != 3 || golden_parse_f32(maxhex, &maxabs, 1) != 1)
        return snprintf(why, why_len, "not NAME NUMEL MAXABS: %.60s", line), -1;
    const int j = golden_entry_named(g, name);
    if (j < 0)
        return snprintf(why, why_len, "no tensor %s", name), -1;
    mygpt_state_entry e;
    mygpt_state_dict_entry(&g->config, &g->params, j, &e);
    if (e.numel != numel)
        return snprintf(why, why_len, "%s has %zu values, the golden %zu", name, e.numel, numel), -1;
    const float *v = block + (e.data - g->params_memory);
    const double scale = fabs(maxabs) > 1 ? fabs(maxabs) : 1;
    double worst = 0;
    int entries = 0;
    for (const char *p = line + used; *p;) {
        size_t idx;
        char hex[16];
        float want;
        int k;
        if (sscanf(p, "%zu:%15s%n", &idx, hex, &k) != 2 || idx >= numel || golden_parse_f32(hex, &want, 1) != 1)
            break;
        p += k;
        const double d = fabs((double)v[idx] - want) / scale;
        worst = d > worst ? d : worst;
        entries++;
    }
    if (entries == 0)
        return snprintf(why, why_len, "%s: no INDEX:BITS entries", name), -1;
    snprintf(why, why_len, "%s", name);
    return worst;
}
