/*
 * kernel_sets.h - a test that holds every instruction set to the same bits runs its cases
 * once under each set this build and CPU have (generic, avx2, avx512, neon), never twice
 * under one: a set the CPU lacks falls back to the widest it has, which the loop runs under
 * its own name (on aarch64, avx2 and avx512 would be NEON again; under qemu a third of the
 * run). MYGPT_MATMUL_KERNEL or MYGPT_ATTENTION_KERNEL names the set (kernels/cpu.h).
 */
#ifndef MYGPT_TEST_KERNEL_SETS_H
#define MYGPT_TEST_KERNEL_SETS_H

#include <assert.h>
#include <stdlib.h>

#include "kernels/cpu.h"

/* The variable that narrows family (the loss has none: it follows PyTorch's choice) */
static inline const char *kernel_variable(mygpt_isa_family family)
{
    assert(family == MYGPT_FAMILY_MATMUL || family == MYGPT_FAMILY_ATTENTION);
    return family == MYGPT_FAMILY_MATMUL ? "MYGPT_MATMUL_KERNEL" : "MYGPT_ATTENTION_KERNEL";
}

/* Asks family's kernels for set isa and chooses again: 1 when that set now runs, 0 when
 * this CPU or build lacks it (the test skips it: another pass of the loop runs the set it
 * would fall back to). */
static inline int use_kernel_set(mygpt_isa_family family, mygpt_isa isa)
{
    setenv(kernel_variable(family), mygpt_isa_name(isa), 1);
    mygpt_cpu_reset(); /* the kernels are chosen once: choose again */
    return mygpt_cpu_isa(family) == isa;
}

/* The widest set again, as a program without the variable runs */
static inline void use_widest_kernel_set(mygpt_isa_family family)
{
    unsetenv(kernel_variable(family));
    mygpt_cpu_reset();
}

/* for (mygpt_isa isa ...) over the sets family runs here, each once, the variable set;
 * generic, which every build has, first (an else after the body is not the macro's) */
#define EACH_KERNEL_SET(isa, family)                                                                         \
    for (mygpt_isa isa = MYGPT_ISA_GENERIC; isa < MYGPT_ISA_COUNT; isa = (mygpt_isa)(isa + 1))              \
        if (!use_kernel_set(family, isa)) {                                                                  \
        } else

#endif
