/*
 * attention_scratch.h - private: how attention's per-thread scratch is carved, shared
 * by the plain loops (layers.c) and the fast kernel (attention.c).
 */
#ifndef MYGPT_ATTENTION_SCRATCH_H
#define MYGPT_ATTENTION_SCRATCH_H

#include <stddef.h>

#include "mygpt/error.h"

/* Floats one thread's slice of scratch takes for length T and head size d. */
size_t mygpt_attention_scratch_per_thread(int T, int head_dim);

/* Threads attention may run: OpenMP's count clamped to the slices scratch_len holds;
 * 0 when the sizes are bad or scratch holds no slice at all. */
int mygpt_attention_team(size_t scratch_len, int B, int T, int C, int NH);

/* The error for a call mygpt_attention_team gave 0: bad sizes or too little scratch. */
mygpt_status mygpt_attention_refuse(size_t scratch_len, int B, int T, int C, int NH,
                                    mygpt_error *err);

#endif
