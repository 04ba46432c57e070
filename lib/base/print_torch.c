/*
 * print_torch.c - what print(tensor) shows in PyTorch 1.13 (torch/_tensor_str.py),
 * specified in pytorch-parity.md section 7.
 *
 * Two passes, as PyTorch does: a formatter looks at every element (or, above
 * 1000 elements, only the "summarised" ones: 3 from each end of every axis) to
 * choose fixed, integer or scientific notation and one common width; then the
 * layout pass prints rows of at most 80 columns, nesting brackets by dimension.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mygpt/print.h"
#include "base/base.h"
#include "base/text.h"

#define LINEWIDTH 80
#define THRESHOLD 1000
#define EDGEITEMS 3

mygpt_status mygpt_tview_make(mygpt_tview *v, mygpt_dtype dtype, const void *data, int ndim,
                              const int64_t *shape, mygpt_error *err)
{
    if (ndim < 0 || ndim > MYGPT_MAX_DIMS)
        return mygpt_fail(err, MYGPT_EINVAL, "tensors have 0 to %d dimensions, got %d",
                          MYGPT_MAX_DIMS, ndim);
    v->dtype = dtype;
    v->ndim = ndim;
    v->data = data;
    int empty = 0; /* a zero size anywhere: no elements, whatever the other sizes */
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0)
            return mygpt_fail(err, MYGPT_EINVAL, "dimension %d has negative size %lld", i,
                              (long long)shape[i]);
        empty |= shape[i] == 0;
    }
    int64_t numel = 1;
    for (int i = 0; i < ndim; i++) {
        if (!empty && numel > INT64_MAX / 8 / shape[i])
            return mygpt_fail(err, MYGPT_EOVERFLOW, "%s", "the shape's element count overflows");
        numel = empty ? 0 : numel * shape[i];
        v->shape[i] = shape[i];
    }
    return MYGPT_OK;
}

int64_t mygpt_tview_numel(const mygpt_tview *v)
{
    int64_t n = 1;
    for (int i = 0; i < v->ndim; i++)
        if (v->shape[i] == 0)
            return 0; /* before the other sizes' product can overflow */
    for (int i = 0; i < v->ndim; i++)
        n *= v->shape[i];
    return n;
}

mygpt_status mygpt_row_major_strides(const mygpt_tview *t, int64_t *strides, int64_t *numel)
{
    int empty = 0;
    for (int d = 0; d < t->ndim; d++)
        empty |= t->shape[d] == 0;
    int64_t n = 1;
    for (int d = t->ndim - 1; d >= 0 && !empty; d--) {
        strides[d] = n;
        if (__builtin_mul_overflow(n, t->shape[d], &n))
            return MYGPT_EOVERFLOW;
    }
    *numel = empty ? 0 : n;
    return MYGPT_OK;
}

/* ---- element access --------------------------------------------------------- */

static double elem_f64(const mygpt_tview *t, int64_t i)
{
    switch (t->dtype) {
    case MYGPT_F32: return (double)((const float *)t->data)[i];
    case MYGPT_I64: return (double)((const int64_t *)t->data)[i];
    case MYGPT_BOOL: return ((const unsigned char *)t->data)[i] ? 1.0 : 0.0;
    }
    return 0.0;
}

/* Calls fn on every element PyTorch's formatter sees (all, or the summarised
 * ones), walking dimension `dim` from flat offset `base`. */
typedef void (*visit_fn)(void *ctx, int64_t flat_index);

static void visit(const mygpt_tview *t, const int64_t *strides, int dim, int64_t base,
                  int summarize, visit_fn fn, void *ctx)
{
    if (dim == t->ndim) {
        fn(ctx, base);
        return;
    }
    int64_t n = t->shape[dim];
    for (int64_t i = 0; i < n; i++) {
        if (summarize && n > 2 * EDGEITEMS && i == EDGEITEMS)
            i = n - EDGEITEMS;
        visit(t, strides, dim + 1, base + i * strides[dim], summarize, fn, ctx);
    }
}

/* ---- the formatter (torch._tensor_str._Formatter) -------------------------- */

typedef struct formatter {
    const mygpt_tview *t;
    int int_mode, sci_mode, width;
    /* statistics pass */
    int have_values;
    double min_abs, max_abs;
} formatter;

static void stats_visit(void *ctx, int64_t i)
{
    formatter *f = ctx;
    double v = elem_f64(f->t, i);
    if (!isfinite(v) || v == 0.0)
        return;
    double a = fabs(v);
    if (!f->have_values || a < f->min_abs)
        f->min_abs = a;
    if (!f->have_values || a > f->max_abs)
        f->max_abs = a;
    f->have_values = 1;
    if (v != ceil(v))
        f->int_mode = 0;
}

static void width_visit(void *ctx, int64_t i)
{
    formatter *f = ctx;
    char buf[64];
    int n;
    if (f->t->dtype == MYGPT_I64) {
        n = snprintf(buf, sizeof buf, "%lld", (long long)((const int64_t *)f->t->data)[i]);
    } else if (f->t->dtype == MYGPT_BOOL) {
        n = ((const unsigned char *)f->t->data)[i] ? 4 : 5;
    } else {
        double v = elem_f64(f->t, i);
        if (!isfinite(v) || v == 0.0)
            return;
        if (f->sci_mode)
            n = snprintf(buf, sizeof buf, "%.4e", v);
        else if (f->int_mode)
            n = snprintf(buf, sizeof buf, "%.0f", v) + 1;
        else
            n = snprintf(buf, sizeof buf, "%.4f", v);
    }
    if (n > f->width)
        f->width = n;
}

static void formatter_init(formatter *f, const mygpt_tview *t, const int64_t *strides,
                           int summarize)
{
    memset(f, 0, sizeof *f);
    f->t = t;
    f->int_mode = 1;
    f->width = 1;
    if (t->dtype == MYGPT_F32) {
        visit(t, strides, 0, 0, summarize, stats_visit, f);
        if (!f->have_values)
            return; /* only zeros / non-finite: int_mode, width 1 */
        double ratio = f->max_abs / f->min_abs;
        if (f->int_mode)
            f->sci_mode = ratio > 1000.0 || f->max_abs > 1.0e8;
        else
            f->sci_mode = ratio > 1000.0 || f->max_abs > 1.0e8 || f->min_abs < 1.0e-4;
    }
    visit(t, strides, 0, 0, summarize, width_visit, f);
}

/* One element, left-padded to the formatter's width. */
static void format_elem(mygpt_strbuf *sb, const formatter *f, int64_t i)
{
    char buf[64];
    const mygpt_tview *t = f->t;
    if (t->dtype == MYGPT_I64) {
        snprintf(buf, sizeof buf, "%lld", (long long)((const int64_t *)t->data)[i]);
    } else if (t->dtype == MYGPT_BOOL) {
        strcpy(buf, ((const unsigned char *)t->data)[i] ? "True" : "False");
    } else {
        double v = elem_f64(t, i);
        if (isnan(v))
            strcpy(buf, "nan");
        else if (isinf(v))
            strcpy(buf, v < 0 ? "-inf" : "inf");
        else if (f->sci_mode)
            snprintf(buf, sizeof buf, "%.4e", v);
        else if (f->int_mode)
            snprintf(buf, sizeof buf, "%.0f.", v);
        else
            snprintf(buf, sizeof buf, "%.4f", v);
    }
    int len = (int)strlen(buf);
    if (len < f->width)
        mygpt_sb_repeat(sb, ' ', (size_t)(f->width - len));
    mygpt_sb_append(sb, buf);
}

/* ---- layout (torch._tensor_str._tensor_str_with_formatter) ----------------- */

static void layout(mygpt_strbuf *sb, const formatter *f, const int64_t *strides, int dim,
                   int64_t base, int indent, int summarize)
{
    const mygpt_tview *t = f->t;
    if (t->ndim == 0) {
        format_elem(sb, f, 0);
        return;
    }
    const int64_t n = t->shape[dim];
    const int skip = summarize && n > 2 * EDGEITEMS;
    mygpt_sb_append(sb, "[");
    if (dim == t->ndim - 1) {
        int per_line = (LINEWIDTH - indent) / (f->width + 2);
        if ((LINEWIDTH - indent) < 0 || per_line < 1)
            per_line = 1;
        int on_line = 0;
        for (int64_t i = 0; i < n; i++) {
            if (on_line == per_line) {
                mygpt_sb_append(sb, ",\n");
                mygpt_sb_repeat(sb, ' ', (size_t)indent + 1);
                on_line = 0;
            } else if (i > 0) {
                mygpt_sb_append(sb, ", ");
            }
            if (skip && i == EDGEITEMS) {
                mygpt_sb_append(sb, " ...");
                i = n - EDGEITEMS - 1;
            } else {
                format_elem(sb, f, base + i * strides[dim]);
            }
            on_line++;
        }
    } else {
        const int remaining = t->ndim - dim;
        for (int64_t i = 0; i < n; i++) {
            if (i > 0) {
                mygpt_sb_append(sb, ",");
                mygpt_sb_repeat(sb, '\n', (size_t)(remaining - 1));
                mygpt_sb_repeat(sb, ' ', (size_t)indent + 1);
            }
            if (skip && i == EDGEITEMS) {
                mygpt_sb_append(sb, "...");
                i = n - EDGEITEMS - 1;
            } else {
                layout(sb, f, strides, dim + 1, base + i * strides[dim], indent + 1, summarize);
            }
        }
    }
    mygpt_sb_append(sb, "]");
}

static const char *dtype_name(mygpt_dtype d)
{
    switch (d) {
    case MYGPT_F32: return "torch.float32";
    case MYGPT_I64: return "torch.int64";
    case MYGPT_BOOL: return "torch.bool";
    }
    return "?";
}

mygpt_status mygpt_torch_repr(mygpt_strbuf *sb, const mygpt_tview *t, const mygpt_torch_opts *opts)
{
    static const mygpt_torch_opts none = {0};
    if (!opts)
        opts = &none;
    if (t->ndim < 0 || t->ndim > MYGPT_MAX_DIMS)
        return MYGPT_EINVAL;
    int64_t strides[MYGPT_MAX_DIMS], numel;
    if (mygpt_row_major_strides(t, strides, &numel) != MYGPT_OK)
        return MYGPT_EINVAL; /* more elements than any memory holds */
    if (opts->parameter)
        mygpt_sb_append(sb, "Parameter containing:\n");
    const size_t start = sb->len;
    mygpt_sb_append(sb, "tensor(");
    const int indent = 7;

    /* suffixes, in PyTorch's order */
    char suffixes[3][96];
    int nsuf = 0;
    if (numel == 0) {
        mygpt_sb_append(sb, "[]");
        if (t->ndim != 1) {
            mygpt_strbuf tup = {0};
            mygpt_py_tuple(&tup, t->ndim, t->shape);
            snprintf(suffixes[nsuf++], sizeof suffixes[0], "size=%s", mygpt_sb_str(&tup));
            mygpt_sb_free(&tup);
        }
        if (t->dtype != MYGPT_F32)
            snprintf(suffixes[nsuf++], sizeof suffixes[0], "dtype=%s", dtype_name(t->dtype));
    } else {
        const int summarize = numel > THRESHOLD;
        formatter f;
        formatter_init(&f, t, strides, summarize);
        if (opts->sci_off) // set_printoptions(sci_mode=False): the width stays the one chosen
            f.sci_mode = 0;
        layout(sb, &f, strides, 0, 0, indent, summarize);
    }
    if (opts->grad_fn)
        snprintf(suffixes[nsuf++], sizeof suffixes[0], "grad_fn=<%s>", opts->grad_fn);
    else if (opts->requires_grad || opts->parameter)
        snprintf(suffixes[nsuf++], sizeof suffixes[0], "requires_grad=True");

    /* torch._tensor_str._add_suffixes: wrap a suffix if it would pass column 80 */
    if (sb->failed)
        return MYGPT_ENOMEM;
    const char *body = sb->data + start;
    const char *nl = strrchr(body, '\n');
    size_t last_line = nl ? (size_t)(sb->data + sb->len - nl) + 1 : (size_t)(sb->len - start) + 2;
    for (int s = 0; s < nsuf; s++) {
        size_t len = strlen(suffixes[s]);
        if (last_line + len + 2 > LINEWIDTH) {
            mygpt_sb_append(sb, ",\n");
            mygpt_sb_repeat(sb, ' ', (size_t)indent);
            last_line = (size_t)indent + len;
        } else {
            mygpt_sb_append(sb, ", ");
            last_line += len + 2;
        }
        mygpt_sb_append(sb, suffixes[s]);
    }
    mygpt_sb_append(sb, ")");
    return sb->failed ? MYGPT_ENOMEM : MYGPT_OK;
}

mygpt_status mygpt_py_tuple(mygpt_strbuf *sb, int ndim, const int64_t *shape)
{
    mygpt_sb_append(sb, "(");
    for (int i = 0; i < ndim; i++)
        mygpt_sb_printf(sb, i ? ", %lld" : "%lld", (long long)shape[i]);
    mygpt_sb_append(sb, ndim == 1 ? ",)" : ")");
    return sb->failed ? MYGPT_ENOMEM : MYGPT_OK;
}

mygpt_status mygpt_torch_size(mygpt_strbuf *sb, int ndim, const int64_t *shape)
{
    mygpt_sb_append(sb, "torch.Size([");
    for (int i = 0; i < ndim; i++)
        mygpt_sb_printf(sb, i ? ", %lld" : "%lld", (long long)shape[i]);
    mygpt_sb_append(sb, "])");
    return sb->failed ? MYGPT_ENOMEM : MYGPT_OK;
}
