/* ch_tensor.c - tensors that know their shape (see ch_tensor.h). */
#include "ch_tensor.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A wrong shape is a bug in the chapter: one line on stderr, exit 1. */
static void refuse(const chapter *ch, const char *what)
{
    fprintf(stderr, "%s: %s\n", ch->name, what);
    exit(1);
}

static ch_tensor make(int ndim, const int64_t *shape)
{
    ch_tensor t = {0};
    t.ndim = ndim;
    memcpy(t.shape, shape, (size_t)ndim * sizeof *shape);
    return t;
}

size_t ch_numel(const ch_tensor *t)
{
    size_t n = 1;
    for (int i = 0; i < t->ndim; i++)
        n *= (size_t)t->shape[i];
    return n;
}

ch_tensor ch_tensor_f32(const chapter *ch, int ndim, const int64_t *shape)
{
    ch_tensor t = make(ndim, shape);
    t.data = chapter_alloc(ch, ch_numel(&t), sizeof(float));
    t.owned = 1;
    return t;
}

ch_tensor ch_tensor_i64(const chapter *ch, int ndim, const int64_t *shape)
{
    ch_tensor t = make(ndim, shape);
    t.ids = chapter_alloc(ch, ch_numel(&t), sizeof(int64_t));
    t.owned = 1;
    return t;
}

ch_tensor ch_view_f32(float *data, int ndim, const int64_t *shape)
{
    ch_tensor t = make(ndim, shape);
    t.data = data;
    return t;
}

ch_tensor ch_view_i64(int64_t *ids, int ndim, const int64_t *shape)
{
    ch_tensor t = make(ndim, shape);
    t.ids = ids;
    return t;
}

void ch_tensor_free(ch_tensor *t)
{
    if (t->owned) {
        free(t->data);
        free(t->ids);
    }
    memset(t, 0, sizeof *t);
}

void ch_print_size(const ch_tensor *t)
{
    ch_size(t->ndim, t->shape);
}

void ch_print_tuple(const ch_tensor *t)
{
    ch_tuple(t->ndim, t->shape);
}

ch_tensor ch_embedding_new(const chapter *ch, mygpt_rng *rng, int num, int dim)
{
    ch_tensor w = ch_tensor_f32(ch, 2, (int64_t[]){num, dim});
    mygpt_error err = {0};
    chapter_check(ch, mygpt_init_embedding(rng, w.data, (size_t)num, (size_t)dim, &err), &err);
    return w;
}

ch_tensor ch_embedding_apply(const chapter *ch, const ch_tensor *weight, const ch_tensor *pos,
                             const ch_tensor *ids)
{
    mygpt_error err = {0};
    if (ids->ndim < 1 || ids->ndim >= CH_MAX_DIMS || weight->ndim != 2 ||
        (pos && (pos->ndim != 2 || pos->shape[1] != weight->shape[1])))
        refuse(ch, "embedding: bad shapes");
    int64_t shape[CH_MAX_DIMS];
    memcpy(shape, ids->shape, (size_t)ids->ndim * sizeof *shape);
    shape[ids->ndim] = weight->shape[1];
    ch_tensor out = ch_tensor_f32(ch, ids->ndim + 1, shape);
    const int T = (int)ids->shape[ids->ndim - 1], B = (int)(ch_numel(ids) / (size_t)T);
    const mygpt_embedding_tables tables = {weight->data, (int)weight->shape[0], pos ? pos->data : NULL,
                                           pos ? (int)pos->shape[0] : 0};
    chapter_check(ch, mygpt_embedding_forward(out.data, ids->ids, tables, B, T, (int)weight->shape[1], &err), &err);
    return out;
}

ch_tensor ch_add_positions(const chapter *ch, const ch_tensor *x, const ch_tensor *pos)
{
    if (x->ndim != 3 || pos->ndim != 2 || pos->shape[1] != x->shape[2] || x->shape[1] > pos->shape[0])
        refuse(ch, "x + pos: shapes do not broadcast");
    ch_tensor out = ch_tensor_f32(ch, 3, x->shape);
    // lesson: add_positions
    const size_t B = (size_t)x->shape[0], T = (size_t)x->shape[1], C = (size_t)x->shape[2];
    for (size_t b = 0; b < B; b++)
        for (size_t t = 0; t < T; t++)
            for (size_t c = 0; c < C; c++)
                out.data[(b * T + t) * C + c] = x->data[(b * T + t) * C + c] + pos->data[t * C + c];
    // end lesson: add_positions
    return out;
}

ch_tensor ch_linear_apply(const chapter *ch, const ch_tensor *x, const ch_tensor *w)
{
    mygpt_error err = {0};
    if (x->ndim < 1 || w->ndim != 2 || x->shape[x->ndim - 1] != w->shape[1])
        refuse(ch, "linear: shapes do not match");
    int64_t shape[CH_MAX_DIMS];
    memcpy(shape, x->shape, (size_t)x->ndim * sizeof *shape);
    shape[x->ndim - 1] = w->shape[0];
    ch_tensor out = ch_tensor_f32(ch, x->ndim, shape);
    const int in = (int)w->shape[1], outc = (int)w->shape[0];
    chapter_check(ch, mygpt_matmul(out.data, x->data, w->data, NULL, ch_numel(x) / (size_t)in, in,
                                   outc, &err), &err);
    return out;
}
