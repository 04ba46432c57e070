/* strbuf.c - a growable string for the printers (see mygpt/print.h). */
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mygpt/print.h"
#include "base/text.h"

static mygpt_status sb_reserve(mygpt_strbuf *sb, size_t extra)
{
    if (sb->failed)
        return MYGPT_ENOMEM;
    if (extra > SIZE_MAX - sb->len - 1) {
        sb->failed = 1;
        return MYGPT_ENOMEM;
    }
    size_t need = sb->len + extra + 1;
    if (need <= sb->cap)
        return MYGPT_OK;
    size_t cap = sb->cap ? sb->cap : 64;
    while (cap < need)
        cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    char *p = realloc(sb->data, cap);
    if (!p) {
        sb->failed = 1;
        return MYGPT_ENOMEM;
    }
    sb->data = p;
    sb->cap = cap;
    return MYGPT_OK;
}

mygpt_status mygpt_sb_appendn(mygpt_strbuf *sb, const char *s, size_t n)
{
    if (sb_reserve(sb, n) != MYGPT_OK)
        return MYGPT_ENOMEM;
    memcpy(sb->data + sb->len, s, n);
    sb->len += n;
    sb->data[sb->len] = '\0';
    return MYGPT_OK;
}

mygpt_status mygpt_sb_append(mygpt_strbuf *sb, const char *s)
{
    return mygpt_sb_appendn(sb, s, strlen(s));
}

mygpt_status mygpt_sb_repeat(mygpt_strbuf *sb, char c, size_t count)
{
    if (sb_reserve(sb, count) != MYGPT_OK)
        return MYGPT_ENOMEM;
    memset(sb->data + sb->len, c, count);
    sb->len += count;
    sb->data[sb->len] = '\0';
    return MYGPT_OK;
}

mygpt_status mygpt_sb_printf(mygpt_strbuf *sb, const char *fmt, ...)
{
    char small[128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return MYGPT_EINVAL;
    if ((size_t)n < sizeof small)
        return mygpt_sb_appendn(sb, small, (size_t)n);
    if (sb_reserve(sb, (size_t)n) != MYGPT_OK)
        return MYGPT_ENOMEM;
    va_start(ap, fmt);
    vsnprintf(sb->data + sb->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    sb->len += (size_t)n;
    return MYGPT_OK;
}

const char *mygpt_sb_str(const mygpt_strbuf *sb)
{
    return sb->data ? sb->data : "";
}

void mygpt_sb_free(mygpt_strbuf *sb)
{
    if (!sb)
        return;
    free(sb->data);
    sb->data = NULL;
    sb->len = sb->cap = 0;
    sb->failed = 0;
}

int mygpt_utf8_decode(const char *text, size_t n, uint32_t *cp)
{
    const unsigned char *s = (const unsigned char *)text;
    if (n == 0)
        return 0;
    unsigned c = s[0];
    int len;
    uint32_t v, min;
    if (c < 0x80) {
        *cp = c;
        return 1;
    } else if ((c & 0xE0) == 0xC0) {
        len = 2, v = c & 0x1F, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
        len = 3, v = c & 0x0F, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
        len = 4, v = c & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    if (n < (size_t)len)
        return 0;
    for (int i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        v = (v << 6) | (s[i] & 0x3F);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
        return 0;
    *cp = v;
    return len;
}

size_t mygpt_utf8_valid_prefix(const char *text, size_t n)
{
    size_t i = 0;
    uint32_t cp;
    for (int len; i < n && (len = mygpt_utf8_decode(text + i, n - i, &cp)) > 0;)
        i += (size_t)len;
    return i;
}

mygpt_status mygpt_sb_append_shown(mygpt_strbuf *sb, const char *s, size_t n, int xml)
{
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        const int len = mygpt_utf8_decode(s + i, n - i, &cp);
        // a control character or a byte of no whole character: \xNN, as Python shows bytes
        if (len == 0 || cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp < 0xA0) || cp == 0xFFFE || cp == 0xFFFF) {
            const int whole = len ? len : 1;
            for (int k = 0; k < whole; k++)
                mygpt_sb_printf(sb, "\\x%02x", (unsigned char)s[i + k]);
            i += (size_t)whole;
            continue;
        }
        if (xml && (cp == '<' || cp == '>' || cp == '&'))
            mygpt_sb_append(sb, cp == '<' ? "&lt;" : cp == '>' ? "&gt;" : "&amp;");
        else
            mygpt_sb_appendn(sb, s + i, (size_t)len);
        i += (size_t)len;
    }
    return sb->failed ? MYGPT_ENOMEM : MYGPT_OK;
}

/* Bytes at s that Python's UTF-8 decoder replaces by one U+FFFD: the maximal subpart of
 * a valid sequence that starts there (a cut character), else the one byte. */
static size_t invalid_run(const unsigned char *s, size_t n)
{
    const unsigned c = s[0];
    size_t need;
    unsigned lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF)
        need = 1;
    else if (c >= 0xE0 && c <= 0xEF)
        need = 2, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    else if (c >= 0xF0 && c <= 0xF4)
        need = 3, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    else
        return 1;
    size_t k = 1;
    if (k < n && s[k] >= lo && s[k] <= hi)
        for (k++; k <= need && k < n && (s[k] & 0xC0) == 0x80; k++)
            ;
    return k;
}

mygpt_status mygpt_sb_append_replaced(mygpt_strbuf *sb, const char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        const int len = mygpt_utf8_decode(s + i, n - i, &cp);
        if (len > 0) {
            mygpt_sb_appendn(sb, s + i, (size_t)len);
            i += (size_t)len;
        } else {
            mygpt_sb_append(sb, "\xef\xbf\xbd"); // U+FFFD
            i += invalid_run((const unsigned char *)s + i, n - i);
        }
    }
    return sb->failed ? MYGPT_ENOMEM : MYGPT_OK;
}
