/*
 * print_numpy.c - what print(arr) shows in numpy 1.24 (numpy/core/arrayprint.py),
 * specified in pytorch-parity.md section 8.
 *
 * Floats: one pass over the (summarised) values decides positional or scientific
 * notation and the pads; each value is then printed with its shortest round-trip
 * digits. Layout: nested brackets, rows wrapped before column 75.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mygpt/print.h"
#include "base/text.h"

#define NP_LINEWIDTH 75
#define NP_THRESHOLD 1000
#define NP_EDGEITEMS 3
#define NP_PRECISION 8

typedef struct np_format {
    const mygpt_tview *t;
    int exp_format;  /* scientific notation */
    int pad_left;    /* characters before the "." (positional / scientific mantissa) */
    int pad_right;   /* characters after the "." (positional) */
    int precision;   /* fraction digits (scientific) */
    int exp_size;    /* exponent digits (scientific) */
    int int_width;   /* integer / bool arrays */
} np_format;

/* Positional text of a finite float32: shortest digits, at most 8 fraction
 * digits (beyond that the exact value is rounded at 1e-8), trailing zeros
 * trimmed but the "." kept. */
static void positional_text(float x, char *out, size_t cap)
{
    if (x == 0.0f) {
        snprintf(out, cap, "%s", signbit(x) ? "-0." : "0.");
        return;
    }
    char dg[16];
    int e;
    int n = mygpt_shortest_f32(x, dg, &e);
    int frac_digits = n - 1 - e;
    if (frac_digits > NP_PRECISION) {
        snprintf(out, cap, "%.*f", NP_PRECISION, (double)x);
        size_t len = strlen(out);
        while (len > 0 && out[len - 1] == '0')
            out[--len] = '\0';
        return;
    }
    mygpt_strbuf sb = {0};
    if (x < 0)
        mygpt_sb_append(&sb, "-");
    if (e >= 0) {
        for (int i = 0; i <= e; i++)
            mygpt_sb_appendn(&sb, i < n ? dg + i : "0", 1);
        mygpt_sb_append(&sb, ".");
        if (n > e + 1)
            mygpt_sb_appendn(&sb, dg + e + 1, (size_t)(n - e - 1));
    } else {
        mygpt_sb_append(&sb, "0.");
        mygpt_sb_repeat(&sb, '0', (size_t)(-e - 1));
        mygpt_sb_appendn(&sb, dg, (size_t)n);
    }
    snprintf(out, cap, "%s", mygpt_sb_str(&sb));
    mygpt_sb_free(&sb);
}

static void visit_np(const mygpt_tview *t, const int64_t *strides, int dim, int64_t base,
                     int summarize, void (*fn)(void *, int64_t), void *ctx)
{
    if (dim == t->ndim) {
        fn(ctx, base);
        return;
    }
    int64_t n = t->shape[dim];
    for (int64_t i = 0; i < n; i++) {
        if (summarize && n > 2 * NP_EDGEITEMS && i == NP_EDGEITEMS)
            i = n - NP_EDGEITEMS;
        visit_np(t, strides, dim + 1, base + i * strides[dim], summarize, fn, ctx);
    }
}

typedef struct np_stats {
    const mygpt_tview *t;
    np_format *f;
    int have_nonzero, have_finite, have_nonfinite, have_neginf;
    float min_abs, max_abs;
    int pass; /* 0: ranges, 1: pads */
    long long int_max, int_min;
    int have_int;
} np_stats;

static void np_stats_visit(void *ctx, int64_t i)
{
    np_stats *s = ctx;
    if (s->t->dtype == MYGPT_I64) {
        long long v = (long long)((const int64_t *)s->t->data)[i];
        if (!s->have_int || v > s->int_max)
            s->int_max = v;
        if (!s->have_int || v < s->int_min)
            s->int_min = v;
        s->have_int = 1;
        return;
    }
    if (s->t->dtype != MYGPT_F32)
        return;
    float v = ((const float *)s->t->data)[i];
    if (!isfinite(v)) {
        s->have_nonfinite = 1;
        if (isinf(v) && v < 0)
            s->have_neginf = 1;
        return;
    }
    s->have_finite = 1;
    if (s->pass == 0) {
        if (v == 0.0f)
            return;
        float a = fabsf(v);
        if (!s->have_nonzero || a < s->min_abs)
            s->min_abs = a;
        if (!s->have_nonzero || a > s->max_abs)
            s->max_abs = a;
        s->have_nonzero = 1;
        return;
    }
    np_format *f = s->f;
    if (f->exp_format) {
        if (v == 0.0f) {
            if (f->pad_left < (signbit(v) ? 2 : 1))
                f->pad_left = signbit(v) ? 2 : 1;
            return;
        }
        char dg[16];
        int e;
        int n = mygpt_shortest_f32(v, dg, &e);
        int il = v < 0 ? 2 : 1;
        if (il > f->pad_left)
            f->pad_left = il;
        if (n - 1 > f->precision)
            f->precision = n - 1;
        int ed = abs(e) >= 100 ? 3 : 2;
        if (ed > f->exp_size)
            f->exp_size = ed;
    } else {
        char buf[64];
        positional_text(v, buf, sizeof buf);
        const char *dot = strchr(buf, '.');
        int il = (int)(dot - buf), fl = (int)strlen(dot + 1);
        if (il > f->pad_left)
            f->pad_left = il;
        if (fl > f->pad_right)
            f->pad_right = fl;
    }
}

static void np_format_init(np_format *f, const mygpt_tview *t, const int64_t *strides,
                           int summarize)
{
    memset(f, 0, sizeof *f);
    f->t = t;
    np_stats s = {0};
    s.t = t;
    s.f = f;
    visit_np(t, strides, 0, 0, summarize, np_stats_visit, &s);
    if (t->dtype == MYGPT_I64) {
        char a[32], b[32];
        snprintf(a, sizeof a, "%lld", s.int_max);
        snprintf(b, sizeof b, "%lld", s.int_min);
        f->int_width = (int)(strlen(a) > strlen(b) ? strlen(a) : strlen(b));
        return;
    }
    if (t->dtype == MYGPT_BOOL) {
        f->int_width = 5;
        return;
    }
    if (s.have_nonzero) {
        float ratio = s.max_abs / s.min_abs; /* numpy divides in the array's dtype */
        if ((double)s.max_abs >= 1.e8 || (double)s.min_abs < 0.0001 || ratio > 1000.0f)
            f->exp_format = 1;
    }
    if (s.have_finite) {
        s.pass = 1;
        visit_np(t, strides, 0, 0, summarize, np_stats_visit, &s);
        if (f->exp_format)
            f->pad_right = f->exp_size + 2 + f->precision;
    }
    if (s.have_nonfinite) {
        int offset = f->pad_right + 1;
        int nanlen = 3, inflen = 3 + (s.have_neginf ? 1 : 0);
        if (nanlen - offset > f->pad_left)
            f->pad_left = nanlen - offset;
        if (inflen - offset > f->pad_left)
            f->pad_left = inflen - offset;
    }
}

static void np_format_elem(mygpt_strbuf *sb, const np_format *f, int64_t i)
{
    const mygpt_tview *t = f->t;
    char buf[96];
    if (t->dtype == MYGPT_I64) {
        mygpt_sb_printf(sb, "%*lld", f->int_width, (long long)((const int64_t *)t->data)[i]);
        return;
    }
    if (t->dtype == MYGPT_BOOL) {
        mygpt_sb_append(sb, ((const unsigned char *)t->data)[i] ? " True" : "False");
        return;
    }
    float v = ((const float *)t->data)[i];
    if (!isfinite(v)) {
        const char *s = isnan(v) ? "nan" : (v < 0 ? "-inf" : "inf");
        mygpt_sb_printf(sb, "%*s", f->pad_left + f->pad_right + 1, s);
        return;
    }
    if (f->exp_format) {
        /* exactly `precision` fraction digits of the exact value, rounded */
        snprintf(buf, sizeof buf, "%.*e", f->precision, (double)v);
        char *e = strchr(buf, 'e');
        *e = '\0';
        int exp10 = atoi(e + 1);
        char *dot = strchr(buf, '.');
        int il = dot ? (int)(dot - buf) : (int)strlen(buf);
        mygpt_sb_repeat(sb, ' ', (size_t)(f->pad_left > il ? f->pad_left - il : 0));
        mygpt_sb_append(sb, buf);
        if (!dot)
            mygpt_sb_append(sb, ".");
        mygpt_sb_printf(sb, "e%c%0*d", exp10 < 0 ? '-' : '+', f->exp_size, abs(exp10));
        return;
    }
    positional_text(v, buf, sizeof buf);
    const char *dot = strchr(buf, '.');
    int il = (int)(dot - buf), fl = (int)strlen(dot + 1);
    mygpt_sb_repeat(sb, ' ', (size_t)(f->pad_left > il ? f->pad_left - il : 0));
    mygpt_sb_append(sb, buf);
    mygpt_sb_repeat(sb, ' ', (size_t)(f->pad_right > fl ? f->pad_right - fl : 0));
}

/* numpy's _formatArray recursion for str(): separator " ", hanging indent of
 * depth+1 spaces, usable width 75 - depth. Appends the text of the sub-array at
 * `dim`/`base` to sb. */
static void np_layout(mygpt_strbuf *sb, const np_format *f, const int64_t *strides, int dim,
                      int64_t base, int summarize)
{
    const mygpt_tview *t = f->t;
    const int hang = dim + 1;               /* len(hanging_indent) */
    const int width = NP_LINEWIDTH - dim;   /* curr_width */
    const int64_t n = t->shape[dim];
    const int skip = summarize && n > 2 * NP_EDGEITEMS;
    const int axes_left = t->ndim - dim;

    mygpt_sb_append(sb, "[");
    if (axes_left == 1) {
        const int elem_width = width - 1;
        mygpt_strbuf line = {0};
        /* `line` starts as the hanging indent; the first one is replaced by "[" */
        mygpt_sb_repeat(&line, ' ', (size_t)hang);
        int first_line = 1;
        for (int64_t i = 0; i < n; i++) {
            mygpt_strbuf word = {0};
            if (skip && i == NP_EDGEITEMS) {
                mygpt_sb_append(&word, "...");
                i = n - NP_EDGEITEMS - 1;
            } else {
                np_format_elem(&word, f, base + i * strides[dim]);
            }
            if (line.len + word.len > (size_t)elem_width && line.len > (size_t)hang) {
                /* flush line.rstrip() + "\n" */
                size_t l = line.len;
                while (l > 0 && line.data[l - 1] == ' ')
                    l--;
                mygpt_sb_appendn(sb, line.data + (first_line ? hang : 0),
                                 l - (first_line ? (size_t)hang : 0));
                mygpt_sb_append(sb, "\n");
                first_line = 0;
                line.len = 0;
                mygpt_sb_repeat(&line, ' ', (size_t)hang);
            }
            mygpt_sb_append(&line, mygpt_sb_str(&word));
            if (i + 1 < n)
                mygpt_sb_append(&line, " ");
            mygpt_sb_free(&word);
        }
        mygpt_sb_appendn(sb, line.data + (first_line ? hang : 0),
                         line.len - (first_line ? (size_t)hang : 0));
        mygpt_sb_free(&line);
    } else {
        for (int64_t i = 0; i < n; i++) {
            if (i > 0) {
                mygpt_sb_repeat(sb, '\n', (size_t)(axes_left - 1));
                mygpt_sb_repeat(sb, ' ', (size_t)hang);
            }
            if (skip && i == NP_EDGEITEMS) {
                mygpt_sb_append(sb, "...");
                i = n - NP_EDGEITEMS - 1;
            } else {
                np_layout(sb, f, strides, dim + 1, base + i * strides[dim], summarize);
            }
        }
    }
    mygpt_sb_append(sb, "]");
}

mygpt_status mygpt_numpy_str(mygpt_strbuf *sb, const mygpt_tview *t)
{
    if (t->ndim < 0 || t->ndim > MYGPT_MAX_DIMS)
        return MYGPT_EINVAL;
    int64_t strides[MYGPT_MAX_DIMS], numel;
    if (mygpt_row_major_strides(t, strides, &numel) != MYGPT_OK)
        return MYGPT_EINVAL; /* more elements than any memory holds */
    if (t->ndim == 0) { /* str(0-d array) is str of the scalar */
        if (t->dtype == MYGPT_F32)
            return mygpt_np_float32_str(sb, ((const float *)t->data)[0]);
        if (t->dtype == MYGPT_I64)
            return mygpt_sb_printf(sb, "%lld", (long long)((const int64_t *)t->data)[0]);
        return mygpt_sb_append(sb, ((const unsigned char *)t->data)[0] ? "True" : "False");
    }
    if (numel == 0) { /* numpy: an empty array prints as [] whatever its shape */
        mygpt_sb_append(sb, "[]");
        return sb->failed ? MYGPT_ENOMEM : MYGPT_OK;
    }
    const int summarize = numel > NP_THRESHOLD;
    np_format f;
    np_format_init(&f, t, strides, summarize);
    np_layout(sb, &f, strides, 0, 0, summarize);
    return sb->failed ? MYGPT_ENOMEM : MYGPT_OK;
}

float mygpt_numpy_round_f32(float x, int decimals)
{
    /* numpy: multiply by the float32 scalar 10^d, rint (half to even), divide */
    const int d = decimals < 0 ? -decimals : decimals;
    double p10 = 1.0;
    for (int i = 0; i < d; i++)
        p10 *= 10.0;
    const float scale = (float)p10;
    if (decimals >= 0) {
        float y = x * scale;
        return rintf(y) / scale;
    }
    float y = x / scale;
    return rintf(y) * scale;
}
