/* strbuf.c - a growable string for the printers (see mygpt/print.h). */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "mygpt/print.h"
#include "internal.h"

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
    free(sb->data);
    sb->data = NULL;
    sb->len = sb->cap = 0;
    sb->failed = 0;
}
