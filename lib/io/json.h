/*
 * io/json.h - private to the library: its one JSON reader (RFC 8259, strict), which the
 * safetensors header and a gpt2's config.json go through. One pass over the text into a
 * flat array of values in document order, each knowing where its subtree ends (so a
 * value is skipped in O(1)); bounded in nesting depth and in the number of values, and
 * linear in the text's length. Strings are checked (UTF-8, escapes, surrogate pairs)
 * when parsed and decoded on demand.
 *
 *   mygpt_json j;
 *   if (mygpt_json_parse(&j, text, len, 8, 1000, "config.json", err)) ...
 *   size_t v = mygpt_json_get(&j, 0, "n_head");  // 0: none
 *   mygpt_json_free(&j);
 */
#ifndef MYGPT_IO_JSON_H
#define MYGPT_IO_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "mygpt/error.h"

typedef enum mygpt_json_type {
    MYGPT_JSON_NULL,
    MYGPT_JSON_FALSE,
    MYGPT_JSON_TRUE,
    MYGPT_JSON_NUMBER,
    MYGPT_JSON_STRING,
    MYGPT_JSON_ARRAY,
    MYGPT_JSON_OBJECT
} mygpt_json_type;

typedef struct mygpt_json_value {
    uint32_t type;       /* mygpt_json_type */
    uint32_t start, end; /* its bytes in the text (a string's between its quotes, undecoded) */
    uint32_t count;      /* an array's elements, an object's members */
    uint32_t next;       /* the index after its subtree: its next sibling's */
} mygpt_json_value;

typedef struct mygpt_json {
    const char *text;
    mygpt_json_value *v; /* v[0] is the document; an object's member is a key (a string) at
                          * index k and its value at k + 1; the next member at v[k + 1].next */
    size_t n;
} mygpt_json;

/* Parses text[0, len): one value, whitespace around it, at most max_depth arrays and
 * objects inside each other and max_values values (keys count). MYGPT_EFORMAT with
 * "<what>: malformed JSON: <reason> at byte N" (MYGPT_ENOMEM); *j is then empty. */
mygpt_status mygpt_json_parse(mygpt_json *j, const char *text, size_t len, int max_depth, size_t max_values,
                              const char *what, mygpt_error *err);

void mygpt_json_free(mygpt_json *j);

/* The value of the first member named key of object obj, or 0 when there is none (or
 * obj is not an object); *count (if not NULL) how many members are named key. */
size_t mygpt_json_get(const mygpt_json *j, size_t obj, const char *key, size_t *count);

/* String value i decoded (UTF-8) into out (n bytes, NUL-terminated): its length, or
 * (size_t)-1 when it needs more than n - 1 bytes. A decoded "\u0000" is a NUL byte in
 * it: a caller that wants a C string compares the length with strlen. */
size_t mygpt_json_string(const mygpt_json *j, size_t i, char *out, size_t n);

/* 1 if value i is a string whose decoded bytes are s's */
int mygpt_json_equals(const mygpt_json *j, size_t i, const char *s);

/* Number i as an integer (no fraction, no exponent) in [lo, hi] into *out: 1, else 0 */
int mygpt_json_integer(const mygpt_json *j, size_t i, long long lo, long long hi, long long *out);

#endif
