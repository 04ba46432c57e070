/*
 * parallel.h - private: the sizes below which a loop stays on one thread (entering an
 * OpenMP region costs about a microsecond, more than the work of the chapters' tiny
 * GPT). Shared with the tests, which check their thread-count configurations clear
 * every one of them, so every parallel loop really runs with 2, 3 and 8 threads.
 */
#ifndef MYGPT_PARALLEL_H
#define MYGPT_PARALLEL_H

/* embedding (B T C), LayerNorm (N C), residual and GELU (n), plain attention (B T T C) */
#define MYGPT_PARALLEL_MIN 32768
/* fast matmul (M K N) and fast attention (B T T C; also needs B * NH > 1) */
#define MYGPT_KERNEL_SMALL 65536

#endif
