/* golden.c - reading the committed golden files (see golden.h). */
#include "golden.h"

#include "model/params.h" /* the parameter table's rows */
#include "mygpt/gpt.h"

#include <stdlib.h>
#include <string.h>

const char *golden_dir(void)
{
    const char *other = getenv("MYGPT_GOLDEN_DIR"); // a cross-check's goldens (tools/crosscheck_finetune.py)
    return other && *other ? other : GOLDEN_DIR;
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
