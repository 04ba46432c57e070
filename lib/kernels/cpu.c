/*
 * cpu.c - the instruction set each family of kernels runs (see cpu.h).
 */
#include "kernels/cpu.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/simd.h"
#include "mygpt/kernels.h"

/* per family: 0 while undecided, else 1 + the set (a race decides the same twice) */
static _Atomic int decided[MYGPT_FAMILY_COUNT];

static mygpt_isa widest(void)
{
#ifdef MYGPT_X86_KERNELS
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq"))
        return MYGPT_ISA_AVX512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return MYGPT_ISA_AVX2;
#elif defined(MYGPT_NEON_KERNELS)
    return MYGPT_ISA_NEON;
#endif
    return MYGPT_ISA_GENERIC;
}

/* Whether this build has a set's kernels (an x86 name on ARM is not a narrower set) */
static int built(mygpt_isa isa)
{
#ifdef MYGPT_X86_KERNELS
    return isa != MYGPT_ISA_NEON;
#elif defined(MYGPT_NEON_KERNELS)
    return isa == MYGPT_ISA_GENERIC || isa == MYGPT_ISA_NEON;
#else
    return isa == MYGPT_ISA_GENERIC;
#endif
}

/* the variable that narrows each family (the loss follows PyTorch's choice: none) */
static const char *const VARIABLE[MYGPT_FAMILY_COUNT] = {"MYGPT_MATMUL_KERNEL", "MYGPT_ATTENTION_KERNEL", NULL};

static mygpt_isa decide(mygpt_isa_family family)
{
    mygpt_isa isa = widest();
    const char *want = VARIABLE[family] ? getenv(VARIABLE[family]) : NULL;
    for (int i = 0; want && i < (int)isa; i++)
        if (built((mygpt_isa)i) && strcmp(want, mygpt_isa_name((mygpt_isa)i)) == 0)
            isa = (mygpt_isa)i;
    return isa;
}

mygpt_isa mygpt_cpu_isa(mygpt_isa_family family)
{
    int d = atomic_load_explicit(&decided[family], memory_order_relaxed);
    if (!d) {
        d = 1 + (int)decide(family);
        atomic_store_explicit(&decided[family], d, memory_order_relaxed);
    }
    return (mygpt_isa)(d - 1);
}

const char *mygpt_isa_name(mygpt_isa isa)
{
    static const char *const NAME[MYGPT_ISA_COUNT] = {"generic", "avx2", "avx512", "neon"};
    return isa >= 0 && isa < MYGPT_ISA_COUNT ? NAME[isa] : "?";
}

void mygpt_cpu_reset(void)
{
    for (int f = 0; f < MYGPT_FAMILY_COUNT; f++)
        atomic_store(&decided[f], 0);
}

mygpt_status mygpt_kernel_env_check(mygpt_error *err)
{
    for (int f = 0; f < MYGPT_FAMILY_COUNT; f++) {
        const char *want = VARIABLE[f] ? getenv(VARIABLE[f]) : NULL;
        if (!want || !*want)
            continue;
        int known = 0;
        char names[64] = ""; // the sets, from the one table of their names
        for (int i = 0; i < MYGPT_ISA_COUNT; i++) {
            known |= strcmp(want, mygpt_isa_name((mygpt_isa)i)) == 0;
            const size_t at = strlen(names);
            snprintf(names + at, sizeof names - at, "%s%s", i == 0 ? "" : i + 1 < MYGPT_ISA_COUNT ? ", " : " or ",
                     mygpt_isa_name((mygpt_isa)i));
        }
        if (!known)
            return mygpt_fail(err, MYGPT_EINVAL, "%s=%.64s%s is not a kernel set (%s)", VARIABLE[f], want,
                              strlen(want) > 64 ? "..." : "", names);
    }
    return MYGPT_OK;
}
