/*
 * kernels/reference.h - private: the plain loops of kernels/reference.c that the
 * attention's dispatchers call (the matmul's are public: mygpt/layers.h).
 */
#ifndef MYGPT_KERNELS_REFERENCE_H
#define MYGPT_KERNELS_REFERENCE_H

#include <stddef.h>

#include "mygpt/attention.h"
#include "kernels/attention_rows.h"

/* out (B, T, C) from in's q, k, v, every head's rows by attention_row, over team
 * threads. With probs (B, NH, T, T) each head's probabilities are kept there, as the
 * scores' rows; else thread i keeps its row of T scores at scratch + i * per_thread. */
void mygpt_attention_reference(float *out, float *probs, mygpt_qkv in, float *scratch, size_t per_thread, int team,
                               mygpt_attention_shape shape);

/* One head's backward with no scratch (mygpt_attention_backward's plain loops). */
void mygpt_attention_head_backward_reference(const head_grads *h);

#endif
