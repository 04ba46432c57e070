/*
 * cpu.h - private: which instruction set the kernels use, decided in one place and
 * once per process. Every family of kernels (the matmul, the attention, the loss)
 * asks here and indexes its own const table of kernels with the answer, so no kernel
 * call reads the environment or the CPU's feature bits.
 *
 * MYGPT_MATMUL_KERNEL and MYGPT_ATTENTION_KERNEL = generic | avx2 | avx512 | neon ask
 * for a narrower set than the CPU has (for tests and benchmarks; every set gives the
 * same bits); a set the CPU lacks falls back to the widest it has, and a name that is
 * none of these is refused by mygpt_kernel_env_check (mygpt/kernels.h), which every
 * program runs first. x86-64 decides at run
 * time (AVX2 and AVX-512 are extensions); aarch64 at build time: NEON is its baseline,
 * so every aarch64 CPU runs the NEON set unless told "generic".
 */
#ifndef MYGPT_CPU_H
#define MYGPT_CPU_H

typedef enum mygpt_isa {
    MYGPT_ISA_GENERIC, MYGPT_ISA_AVX2, MYGPT_ISA_AVX512, MYGPT_ISA_NEON, MYGPT_ISA_COUNT
} mygpt_isa;

/* The families of kernels that ask which set to run (each may be narrowed from the
 * environment but the loss's, which follows PyTorch's own choice). */
typedef enum mygpt_isa_family {
    MYGPT_FAMILY_MATMUL, MYGPT_FAMILY_ATTENTION, MYGPT_FAMILY_LOSS, MYGPT_FAMILY_COUNT
} mygpt_isa_family;

/* The instruction set a family runs: the widest this CPU has, narrowed by the family's
 * variable (MYGPT_FAMILY_LOSS has none); read once, then remembered. */
mygpt_isa mygpt_cpu_isa(mygpt_isa_family family);

/* The name of a set: "generic", "avx2", "avx512", "neon". */
const char *mygpt_isa_name(mygpt_isa isa);

/* Forgets the decisions, so the next call reads the environment again: for tests that
 * set MYGPT_MATMUL_KERNEL or MYGPT_ATTENTION_KERNEL while the process runs. */
void mygpt_cpu_reset(void);

#endif
