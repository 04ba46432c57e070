/*
 * json.c - the library's one JSON reader (io/json.h): RFC 8259 and nothing more (no
 * comments, no trailing commas, no NaN, no leading zeros, no raw control characters,
 * no invalid UTF-8 or lone surrogates), iterative with its own bounded stack, one pass.
 */
#include <stdlib.h>
#include <string.h>

#include "io/json.h"
#include "base/base.h"

typedef struct parser {
    const unsigned char *s;
    size_t len, at;
    mygpt_json_value *v;
    size_t n, cap, max;
    const char *why; /* first problem */
    int nomem;
} parser;

static void ws(parser *p)
{
    while (p->at < p->len && (p->s[p->at] == ' ' || p->s[p->at] == '\t' || p->s[p->at] == '\n' ||
                              p->s[p->at] == '\r'))
        p->at++;
}

/* A new value of type t starting at p->at: its index, or (size_t)-1 */
static size_t add(parser *p, mygpt_json_type t)
{
    if (p->n == p->max) {
        p->why = "more values than this file may hold";
        return (size_t)-1;
    }
    if (p->n == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 64;
        cap = cap > p->max ? p->max : cap;
        mygpt_json_value *more = realloc(p->v, cap * sizeof *more);
        if (!more) {
            p->nomem = 1;
            p->why = "out of memory";
            return (size_t)-1;
        }
        p->v = more;
        p->cap = cap;
    }
    p->v[p->n] = (mygpt_json_value){(uint32_t)t, (uint32_t)p->at, (uint32_t)p->at, 0, (uint32_t)(p->n + 1)};
    return p->n++;
}

static int hex4(const unsigned char *s, unsigned *out)
{
    unsigned v = 0;
    for (int k = 0; k < 4; k++) {
        const unsigned c = s[k];
        const unsigned d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                         : c >= 'A' && c <= 'F' ? c - 'A' + 10 : 16;
        if (d == 16)
            return 0;
        v = v * 16 + d;
    }
    *out = v;
    return 1;
}

/* Length of the UTF-8 character at s (n bytes left), 0 if invalid (overlong, a
 * surrogate, above U+10FFFF, cut short) */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    const unsigned c = s[0];
    size_t len;
    unsigned cp;
    if (c < 0x80)
        return 1;
    else if (c >= 0xC2 && c <= 0xDF)
        len = 2, cp = c & 0x1F;
    else if (c >= 0xE0 && c <= 0xEF)
        len = 3, cp = c & 0x0F;
    else if (c >= 0xF0 && c <= 0xF4)
        len = 4, cp = c & 0x07;
    else
        return 0;
    if (len > n)
        return 0;
    for (size_t k = 1; k < len; k++) {
        if ((s[k] & 0xC0) != 0x80)
            return 0;
        cp = cp << 6 | (s[k] & 0x3Fu);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return len;
}

/* A string at p->at (its opening quote): checked, recorded undecoded */
static int string(parser *p)
{
    const size_t i = add(p, MYGPT_JSON_STRING);
    if (i == (size_t)-1)
        return 0;
    p->at++;
    p->v[i].start = (uint32_t)p->at;
    for (;;) {
        if (p->at >= p->len) {
            p->why = "an unterminated string";
            return 0;
        }
        const unsigned c = p->s[p->at];
        if (c == '"')
            break;
        if (c < 0x20) {
            p->why = "a control character (or NUL) inside a string";
            return 0;
        }
        if (c != '\\') {
            const size_t l = utf8_len(p->s + p->at, p->len - p->at);
            if (!l) {
                p->why = "invalid UTF-8 inside a string";
                return 0;
            }
            p->at += l;
            continue;
        }
        if (p->at + 1 >= p->len) {
            p->why = "an unterminated string";
            return 0;
        }
        const unsigned e = p->s[p->at + 1];
        if (e != 'u') {
            if (!strchr("\"\\/bfnrt", (int)e) || e == 0) {
                p->why = "an escape JSON does not have (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)";
                return 0;
            }
            p->at += 2;
            continue;
        }
        unsigned u, lo;
        if (p->at + 6 > p->len || !hex4(p->s + p->at + 2, &u)) {
            p->why = "\\u without four hex digits";
            return 0;
        }
        p->at += 6;
        if (u >= 0xDC00 && u <= 0xDFFF) {
            p->why = "a low surrogate \\uDC00-\\uDFFF without a high one before it";
            return 0;
        }
        if (u >= 0xD800 && u <= 0xDBFF) {
            if (p->at + 6 > p->len || p->s[p->at] != '\\' || p->s[p->at + 1] != 'u' ||
                !hex4(p->s + p->at + 2, &lo) || lo < 0xDC00 || lo > 0xDFFF) {
                p->why = "a high surrogate \\uD800-\\uDBFF without a low one after it";
                return 0;
            }
            p->at += 6;
        }
    }
    p->v[i].end = (uint32_t)p->at;
    p->at++;
    return 1;
}

/* A number, true, false or null at p->at */
static int scalar(parser *p)
{
    const unsigned char *s = p->s;
    const size_t n = p->len, from = p->at;
    static const char *const words[3] = {"null", "false", "true"};
    for (int w = 0; w < 3; w++) {
        const size_t l = strlen(words[w]);
        if (n - from >= l && memcmp(s + from, words[w], l) == 0) {
            const size_t i = add(p, (mygpt_json_type)w);
            if (i == (size_t)-1)
                return 0;
            p->at += l;
            p->v[i].end = (uint32_t)p->at;
            return 1;
        }
    }
    size_t k = from;
#define DIGIT(k) ((k) < n && s[k] >= '0' && s[k] <= '9')
    if (k < n && s[k] == '-')
        k++;
    if (!DIGIT(k)) {
        p->why = "expected a value (an object, array, string, number, true, false or null)";
        return 0;
    }
    if (s[k] == '0' && DIGIT(k + 1)) {
        p->why = "a number with a leading zero";
        return 0;
    }
    while (DIGIT(k))
        k++;
    if (k < n && s[k] == '.') {
        if (!DIGIT(k + 1)) {
            p->why = "a number without digits after its '.'";
            return 0;
        }
        for (k++; DIGIT(k);)
            k++;
    }
    if (k < n && (s[k] == 'e' || s[k] == 'E')) {
        k++;
        if (k < n && (s[k] == '+' || s[k] == '-'))
            k++;
        if (!DIGIT(k)) {
            p->why = "a number without digits in its exponent";
            return 0;
        }
        while (DIGIT(k))
            k++;
    }
#undef DIGIT
    const size_t i = add(p, MYGPT_JSON_NUMBER);
    if (i == (size_t)-1)
        return 0;
    p->at = k;
    p->v[i].end = (uint32_t)k;
    return 1;
}

/* A key and its ':' */
static int key(parser *p)
{
    ws(p);
    if (p->at >= p->len || p->s[p->at] != '"') {
        p->why = "expected a string (a key)";
        return 0;
    }
    if (!string(p))
        return 0;
    ws(p);
    if (p->at >= p->len || p->s[p->at] != ':') {
        p->why = "expected ':' after a key";
        return 0;
    }
    p->at++;
    return 1;
}

static int parse(parser *p, int max_depth)
{
    size_t *stack = malloc((size_t)(max_depth > 0 ? max_depth : 1) * sizeof *stack);
    int depth = 0, ok = 0;
    if (!stack) {
        p->nomem = 1;
        p->why = "out of memory";
        return 0;
    }
    for (;;) {
        // a value
        ws(p);
        if (p->at >= p->len) {
            p->why = "the text ends where a value should be";
            goto out;
        }
        const unsigned c = p->s[p->at];
        if (c == '{' || c == '[') {
            if (depth == max_depth) {
                p->why = "arrays or objects nested too deep";
                goto out;
            }
            const size_t i = add(p, c == '{' ? MYGPT_JSON_OBJECT : MYGPT_JSON_ARRAY);
            if (i == (size_t)-1)
                goto out;
            stack[depth++] = i;
            p->at++;
            ws(p);
            if (p->at < p->len && p->s[p->at] == (c == '{' ? '}' : ']')) {
                p->at++;
                p->v[i].end = (uint32_t)p->at;
                p->v[i].next = (uint32_t)p->n;
                depth--;
            } else {
                if (c == '{' && !key(p))
                    goto out;
                continue;
            }
        } else if (c == '"') {
            if (!string(p))
                goto out;
        } else if (!scalar(p)) {
            goto out;
        }
        // after a value: the next one of its container, or the container's end
        for (;;) {
            if (depth == 0) {
                ws(p);
                if (p->at != p->len) {
                    p->why = "bytes after the JSON value";
                    goto out;
                }
                ok = 1;
                goto out;
            }
            mygpt_json_value *top = &p->v[stack[depth - 1]];
            const int object = top->type == MYGPT_JSON_OBJECT;
            top->count++;
            ws(p);
            if (p->at < p->len && p->s[p->at] == ',') {
                p->at++;
                if (object && !key(p))
                    goto out;
                break;
            }
            if (p->at < p->len && p->s[p->at] == (object ? '}' : ']')) {
                p->at++;
                top->end = (uint32_t)p->at;
                top->next = (uint32_t)p->n;
                depth--;
                continue;
            }
            p->why = object ? "expected ',' or '}' in an object" : "expected ',' or ']' in an array";
            goto out;
        }
    }
out:
    free(stack);
    return ok;
}

mygpt_status mygpt_json_parse(mygpt_json *j, const char *text, size_t len, int max_depth, size_t max_values,
                              const char *what, mygpt_error *err)
{
    *j = (mygpt_json){text, NULL, 0};
    if (len >= UINT32_MAX)
        return mygpt_fail(err, MYGPT_EFORMAT, "%s: malformed JSON: larger than 4 GB", what);
    parser p = {(const unsigned char *)text, len, 0, NULL, 0, 0, max_values < UINT32_MAX ? max_values : UINT32_MAX - 1,
                NULL, 0};
    if (!parse(&p, max_depth)) {
        free(p.v);
        if (p.nomem)
            return mygpt_fail(err, MYGPT_ENOMEM, "%s: out of memory reading its JSON", what);
        return mygpt_fail(err, MYGPT_EFORMAT, "%s: malformed JSON: %s at byte %zu%s", what, p.why, p.at,
                          p.at >= len ? " (where the text ends: a truncated file?)" : "");
    }
    j->v = p.v;
    j->n = p.n;
    return MYGPT_OK;
}

void mygpt_json_free(mygpt_json *j)
{
    free(j->v);
    j->v = NULL;
    j->n = 0;
}

/* Decodes string i into out (room for n bytes, or counts only when out is NULL): the
 * decoded length, or (size_t)-1 past n - 1 bytes (the string was checked when parsed) */
static size_t decode(const mygpt_json *j, size_t i, char *out, size_t n)
{
    const unsigned char *s = (const unsigned char *)j->text;
    size_t k = j->v[i].start, o = 0;
    const size_t end = j->v[i].end;
    while (k < end) {
        unsigned char buf[4];
        size_t bl = 1;
        if (s[k] != '\\') {
            buf[0] = s[k++];
        } else if (s[k + 1] != 'u') {
            const char *from = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t";
            buf[0] = (unsigned char)to[strchr(from, s[k + 1]) - from];
            k += 2;
        } else {
            unsigned u = 0, lo = 0xDC00;
            hex4(s + k + 2, &u);
            k += 6;
            if (u >= 0xD800 && u <= 0xDBFF) {
                hex4(s + k + 2, &lo);
                k += 6;
                u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
            }
            if (u < 0x80)
                buf[0] = (unsigned char)u;
            else if (u < 0x800)
                bl = 2, buf[0] = (unsigned char)(0xC0 | u >> 6), buf[1] = (unsigned char)(0x80 | (u & 0x3F));
            else if (u < 0x10000)
                bl = 3, buf[0] = (unsigned char)(0xE0 | u >> 12), buf[1] = (unsigned char)(0x80 | (u >> 6 & 0x3F)),
                buf[2] = (unsigned char)(0x80 | (u & 0x3F));
            else
                bl = 4, buf[0] = (unsigned char)(0xF0 | u >> 18), buf[1] = (unsigned char)(0x80 | (u >> 12 & 0x3F)),
                buf[2] = (unsigned char)(0x80 | (u >> 6 & 0x3F)), buf[3] = (unsigned char)(0x80 | (u & 0x3F));
        }
        if (out) {
            if (o + bl >= n)
                return (size_t)-1;
            memcpy(out + o, buf, bl);
        }
        o += bl;
    }
    if (out)
        out[o] = '\0';
    return o;
}

size_t mygpt_json_string(const mygpt_json *j, size_t i, char *out, size_t n)
{
    if (i >= j->n || j->v[i].type != MYGPT_JSON_STRING || n == 0)
        return (size_t)-1;
    return decode(j, i, out, n);
}

int mygpt_json_equals(const mygpt_json *j, size_t i, const char *s)
{
    if (i >= j->n || j->v[i].type != MYGPT_JSON_STRING)
        return 0;
    const size_t sl = strlen(s), raw = j->v[i].end - j->v[i].start;
    if (!memchr(j->text + j->v[i].start, '\\', raw)) // no escapes: the bytes themselves
        return raw == sl && memcmp(j->text + j->v[i].start, s, sl) == 0;
    if (raw < sl) // an escape never decodes to more bytes than it takes
        return 0;
    char small[256], *buf = sl < sizeof small ? small : malloc(sl + 2);
    if (!buf)
        return 0;
    const size_t got = decode(j, i, buf, sl + 2);
    const int same = got == sl && memcmp(buf, s, sl) == 0;
    if (buf != small)
        free(buf);
    return same;
}

size_t mygpt_json_get(const mygpt_json *j, size_t obj, const char *key, size_t *count)
{
    size_t found = 0, times = 0;
    if (obj < j->n && j->v[obj].type == MYGPT_JSON_OBJECT)
        for (size_t k = obj + 1, m = 0; m < j->v[obj].count; m++, k = j->v[k + 1].next)
            if (mygpt_json_equals(j, k, key)) {
                found = times++ ? found : k + 1;
            }
    if (count)
        *count = times;
    return found;
}

int mygpt_json_integer(const mygpt_json *j, size_t i, long long lo, long long hi, long long *out)
{
    if (i >= j->n || j->v[i].type != MYGPT_JSON_NUMBER)
        return 0;
    const char *s = j->text + j->v[i].start, *end = j->text + j->v[i].end;
    const int neg = *s == '-';
    s += neg;
    unsigned long long v = 0;
    for (; s < end; s++) {
        if (*s < '0' || *s > '9') // a fraction or an exponent
            return 0;
        if (v > (~0ULL - 9) / 10)
            return 0;
        v = v * 10 + (unsigned)(*s - '0');
    }
    if (v > (unsigned long long)1 << 62)
        return 0;
    const long long x = neg ? -(long long)v : (long long)v;
    if (x < lo || x > hi)
        return 0;
    *out = x;
    return 1;
}
