/*
 * mygpt/kernels.h - the instruction set the fast kernels run, as a program may ask.
 *
 * The matrix products and the attention run the widest set the CPU has (x86-64:
 * AVX-512, else AVX2 with FMA, else plain loops; aarch64: NEON). MYGPT_MATMUL_KERNEL
 * and MYGPT_ATTENTION_KERNEL = generic | avx2 | avx512 | neon ask for a narrower one,
 * for tests and benchmarks: every set gives the same bits. A set the CPU or the build
 * lacks falls back to the widest it has.
 */
#ifndef MYGPT_KERNELS_H
#define MYGPT_KERNELS_H

#include "mygpt/error.h"

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/* Checks MYGPT_MATMUL_KERNEL and MYGPT_ATTENTION_KERNEL: each may be unset, empty (as
 * unset) or one of the names above. Returns MYGPT_OK, or MYGPT_EINVAL with a message
 * naming the variable, its value and the names it takes: a misspelt name would
 * otherwise run the widest set without a word. */
mygpt_status mygpt_kernel_env_check(mygpt_error *err);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
