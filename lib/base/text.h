/*
 * base/text.h - private to the library: building text. The string buffer's appends,
 * the shortest round-trip digits of a float32 (numpy's and torch's printers), and a
 * printed view's strides.
 */
#ifndef MYGPT_BASE_TEXT_H
#define MYGPT_BASE_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "mygpt/print.h"

/* A view's row-major strides (strides[d], in elements) and element count. A zero size
 * anywhere makes the count 0 (strides unset) before any product is formed, so the other
 * sizes may be as large as they like; MYGPT_EOVERFLOW if the count overflows int64. */
mygpt_status mygpt_row_major_strides(const mygpt_tview *t, int64_t *strides, int64_t *numel);

/* Appends text; on allocation failure sets sb->failed and returns MYGPT_ENOMEM. */
mygpt_status mygpt_sb_append(mygpt_strbuf *sb, const char *s);
mygpt_status mygpt_sb_appendn(mygpt_strbuf *sb, const char *s, size_t n);
mygpt_status mygpt_sb_printf(mygpt_strbuf *sb, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
mygpt_status mygpt_sb_repeat(mygpt_strbuf *sb, char c, size_t count);

/* The shortest decimal digits that round-trip to float32 x, as numpy's Dragon4
 * finds them: writes the significant digits (no sign, no dot) to digits, the
 * exponent to *exp10 (|x| = d1.d2d3... * 10^(*exp10)), and returns how many digits
 * it wrote. x must be finite and non-zero. */
int mygpt_shortest_f32(float x, char digits[16], int *exp10);

#endif
