/*
 * char_vocab.c - nanoGPT's character-level tokenizer: the sorted set of a text's
 * characters (see char_vocab.h).
 */
#include "char_vocab.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mygpt/data.h"

mygpt_status trainer_fail(mygpt_error *err, mygpt_status code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (err) // (the library's mygpt_fail is not exported)
        err->code = code, vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return code;
}

/* The code point at text[*i] (moving *i past it), as Python reads UTF-8 text: "\r\n"
 * and "\r" are "\n". -1 for bytes that are not UTF-8. */
static int32_t next_char(const char *text, size_t len, size_t *i)
{
    const unsigned char *s = (const unsigned char *)text;
    const unsigned char b = s[*i];
    if (b == '\r') {
        *i += *i + 1 < len && s[*i + 1] == '\n' ? 2 : 1;
        return '\n';
    }
    const int more = b < 0x80 ? 0 : (b & 0xE0) == 0xC0 ? 1 : (b & 0xF0) == 0xE0 ? 2 : (b & 0xF8) == 0xF0 ? 3 : -1;
    if (more < 0 || (size_t)more >= len - *i) // cut short at the end
        return -1;
    int32_t c = more == 0 ? b : b & (0x3F >> more);
    for (int k = 1; k <= more; k++) {
        if ((s[*i + k] & 0xC0) != 0x80)
            return -1;
        c = (c << 6) | (s[*i + k] & 0x3F);
    }
    static const int32_t least[4] = {0, 0x80, 0x800, 0x10000}; // an overlong form is not UTF-8
    if (c < least[more] || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
        return -1;
    *i += (size_t)more + 1;
    return c;
}

static int cmp_u32(const void *a, const void *b)
{
    const uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

mygpt_status char_vocab_build(char_vocab *v, const char *text, size_t len, mygpt_error *err)
{
    *v = (char_vocab){0};
    uint8_t *seen = calloc(0x110000 / 8, 1);
    if (!seen)
        return trainer_fail(err, MYGPT_ENOMEM, "%s", "out of memory for the characters of the text");
    int n = 0;
    for (size_t i = 0; i < len;) {
        const size_t at = i;
        const int32_t c = next_char(text, len, &i);
        if (c < 0) {
            free(seen);
            return trainer_fail(err, MYGPT_EFORMAT, "the text is not UTF-8 (byte %zu)", at);
        }
        n += !(seen[c >> 3] & (1u << (c & 7)));
        seen[c >> 3] |= (uint8_t)(1u << (c & 7));
    }
    if (n > CHAR_VOCAB_MAX) {
        free(seen);
        return trainer_fail(err, MYGPT_EFORMAT, "the text has %d distinct characters, more than %d", n, CHAR_VOCAB_MAX);
    }
    v->chars = malloc((size_t)(n ? n : 1) * sizeof *v->chars);
    if (!v->chars) {
        free(seen);
        return trainer_fail(err, MYGPT_ENOMEM, "%s", "out of memory for the vocabulary");
    }
    for (uint32_t c = 0; c < 0x110000; c++) // in order: sorted(set(text))
        if (seen[c >> 3] & (1u << (c & 7)))
            v->chars[v->n++] = c;
    free(seen);
    return MYGPT_OK;
}

mygpt_status char_vocab_encode(const char_vocab *v, const char *text, size_t len, int64_t **ids, size_t *n,
                               mygpt_error *err)
{
    *ids = malloc((len ? len : 1) * sizeof **ids);
    *n = 0;
    if (!*ids)
        return trainer_fail(err, MYGPT_ENOMEM, "out of memory for %zu ids", len);
    for (size_t i = 0; i < len;) {
        const size_t at = i;
        const int32_t c = next_char(text, len, &i);
        const uint32_t key = (uint32_t)c;
        const uint32_t *hit = c < 0 ? NULL : bsearch(&key, v->chars, (size_t)v->n, sizeof key, cmp_u32);
        if (!hit) {
            free(*ids);
            *ids = NULL;
            return c < 0 ? trainer_fail(err, MYGPT_EFORMAT, "the text is not UTF-8 (byte %zu)", at)
                         : trainer_fail(err, MYGPT_EFORMAT, "character U+%04X (byte %zu) is not in the vocabulary",
                                      (unsigned)c, at);
        }
        (*ids)[(*n)++] = hit - v->chars;
    }
    return MYGPT_OK;
}

mygpt_status char_vocab_decode(const char_vocab *v, const int64_t *ids, size_t n, char **text, size_t *len,
                               mygpt_error *err)
{
    unsigned char *out = malloc(4 * n + 1), *o = out;
    if (!out)
        return trainer_fail(err, MYGPT_ENOMEM, "out of memory for %zu characters", n);
    for (size_t i = 0; i < n; i++) {
        if (ids[i] < 0 || ids[i] >= v->n) {
            free(out);
            return trainer_fail(err, MYGPT_ERANGE, "id %lld is outside the vocabulary of %d characters",
                              (long long)ids[i], v->n);
        }
        const uint32_t c = v->chars[ids[i]];
        if (c < 0x80) {
            *o++ = (unsigned char)c;
        } else if (c < 0x800) {
            *o++ = (unsigned char)(0xC0 | c >> 6);
            *o++ = (unsigned char)(0x80 | (c & 0x3F));
        } else if (c < 0x10000) {
            *o++ = (unsigned char)(0xE0 | c >> 12);
            *o++ = (unsigned char)(0x80 | (c >> 6 & 0x3F));
            *o++ = (unsigned char)(0x80 | (c & 0x3F));
        } else {
            *o++ = (unsigned char)(0xF0 | c >> 18);
            *o++ = (unsigned char)(0x80 | (c >> 12 & 0x3F));
            *o++ = (unsigned char)(0x80 | (c >> 6 & 0x3F));
            *o++ = (unsigned char)(0x80 | (c & 0x3F));
        }
    }
    *o = 0;
    *text = (char *)out;
    *len = (size_t)(o - out);
    return MYGPT_OK;
}

mygpt_status char_vocab_from_file(char_vocab *v, const char *path, mygpt_error *err)
{
    char *text = NULL;
    size_t len = 0;
    mygpt_status st = mygpt_read_file(path, &text, &len, err);
    if (st == MYGPT_OK && (st = char_vocab_build(v, text, len, err)) != MYGPT_OK) {
        const mygpt_error inner = *err;
        trainer_fail(err, st, "%s: %s", path, inner.message);
    }
    free(text);
    return st;
}

void char_vocab_free(char_vocab *v)
{
    free(v->chars);
    *v = (char_vocab){0};
}
