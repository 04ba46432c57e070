/*
 * kernels/attention.h - private to the library: the attention's entry points beyond the
 * public mygpt/attention.h.
 */
#ifndef MYGPT_KERNELS_ATTENTION_H
#define MYGPT_KERNELS_ATTENTION_H

#include "mygpt/attention.h"

/* The KV-cache step's attention: n new query rows (n, C) at positions t0 .. t0 + n - 1
 * against one layer's cached keys and values kc, vc (M, C), rows 0 to
 * each query's position, into out (n, C). The new keys (kc's rows t0 ..) are first
 * copied into kt, the layer's keys transposed block by block (MYGPT_KT_BLOCK), which
 * the scores read. rows holds nrows rows of M scores, one per thread that may run. The same
 * sums as the forward's attention_row: the same bits. */
void mygpt_attention_cached(float *out, const float *q, const float *kc, float *kt, const float *vc, int n, int t0,
                            int M, int C, int NH, float *rows, int nrows);

/* The attention kernel this CPU gets ("avx512", "avx2" or "generic"), after
 * MYGPT_ATTENTION_KERNEL: for tests and the benchmark. */
const char *mygpt_attention_kernel_name(void);

#endif
