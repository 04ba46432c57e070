/*
 * ch_tensor.h - tensors that know their shape, for the chapters that print shapes and
 * parameter counts. A module's weight gets its shape where it is built (as
 * nn.Embedding(num, dim) gives its weight (num, dim)); an operation gives its output
 * the shape the computation produced from its inputs' shapes. So a chapter prints a
 * shape or a count read off a tensor, never one written by hand.
 */
#ifndef MYGPT_CH_TENSOR_H
#define MYGPT_CH_TENSOR_H

#include "chapter.h"

#define CH_MAX_DIMS 4

typedef struct ch_tensor {
    int ndim;
    int64_t shape[CH_MAX_DIMS];
    float *data;  /* float32 tensors */
    int64_t *ids; /* int64 tensors (token ids) */
    int owned;    /* 1: ch_tensor_free frees the data */
} ch_tensor;

/* A new zero-filled float32 (or int64) tensor; exits with a message on failure. */
ch_tensor ch_tensor_f32(const chapter *ch, int ndim, const int64_t *shape);
ch_tensor ch_tensor_i64(const chapter *ch, int ndim, const int64_t *shape);

/* A tensor over memory that exists already (not freed by ch_tensor_free). */
ch_tensor ch_view_f32(float *data, int ndim, const int64_t *shape);
ch_tensor ch_view_i64(int64_t *ids, int ndim, const int64_t *shape);

size_t ch_numel(const ch_tensor *t);
void ch_tensor_free(ch_tensor *t);

/* print(t.shape) / print(tuple(t.shape)), no newline */
void ch_print_size(const ch_tensor *t);
void ch_print_tuple(const ch_tensor *t);

/* nn.Embedding(num, dim).weight: (num, dim), drawn from rng as PyTorch draws it. */
ch_tensor ch_embedding_new(const chapter *ch, mygpt_rng *rng, int num, int dim);

/* weight[ids] (+ pos[arange(T)] when pos is not NULL): ids (..., T), weight (V, C),
 * pos (maxT, C); the result is (..., T, C). */
ch_tensor ch_embedding_apply(const chapter *ch, const ch_tensor *weight, const ch_tensor *pos,
                             const ch_tensor *ids);

/* x + pos[arange(T)], broadcast over the batch: x (B, T, C), pos (maxT, C) -> (B, T, C). */
ch_tensor ch_add_positions(const chapter *ch, const ch_tensor *x, const ch_tensor *pos);

/* nn.Linear without bias: x (..., in) @ w^T, w (out, in) -> (..., out). */
ch_tensor ch_linear_apply(const chapter *ch, const ch_tensor *x, const ch_tensor *w);

#endif
