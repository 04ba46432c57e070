/*
 * simd.h - private: how a function is compiled for a wider instruction set than the
 * build's baseline, the same way under gcc and clang, so both compilers build the
 * AVX2 and AVX-512 kernels (and clang's fuzzing builds exercise them).
 *
 * The kernels are plain C with explicit fmaf(); a target attribute only lets the
 * compiler use vfmadd and wider registers for them. MYGPT_AVX2 is x86-64-v3's set
 * (AVX2, FMA, BMI1/2, F16C, LZCNT, MOVBE), MYGPT_AVX512 x86-64-v4's (plus AVX-512
 * F/BW/CD/DQ/VL), spelled as feature lists because clang 14 does not know the level
 * names. Which one runs is decided at run time (__builtin_cpu_supports).
 *
 * Two ways, one rule (every path gives the same bits). Kernels whose tiles differ by
 * instruction set (the matmul, the attention, the loss's SLEEF rows) keep a table per set
 * and ask kernels/cpu.h which entry to run: one decision per process, which
 * MYGPT_MATMUL_KERNEL / MYGPT_ATTENTION_KERNEL may narrow for tests. Plain loops that
 * only need wider vectors (AdamW, the generator's draws, GELU, LayerNorm's backward) are
 * MYGPT_CLONES: the loader picks the clone, there is nothing to narrow, and the tests
 * compare them with scalar references instead.
 */
#ifndef MYGPT_SIMD_H
#define MYGPT_SIMD_H

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define MYGPT_X86_KERNELS 1
#define MYGPT_AVX2_FEATURES "avx2,fma,bmi,bmi2,f16c,lzcnt,movbe,popcnt"
#define MYGPT_AVX2 __attribute__((target(MYGPT_AVX2_FEATURES)))
#define MYGPT_AVX512                                                                               \
    __attribute__((target(MYGPT_AVX2_FEATURES ",avx512f,avx512bw,avx512cd,avx512dq,avx512vl")))
/* A whole function compiled three times (x86-64-v4, v3 and the baseline), the loader
 * picking one: for loops of plain fmaf()/mygpt_expf that should become vector
 * instructions instead of libm calls. Same bits on every clone. It holds no OpenMP
 * region: clang compiles a region's body as a function of its own, without the clone's
 * instruction set (each fmaf a libm call, no vectors: a training step took twice as
 * long); the region is outside and calls the clone on each thread's run
 * (mygpt_thread_run). */
#if !defined(__ELF__)
/* target_clones needs the ELF loader's ifunc (macOS's Mach-O and Windows' PE have none):
 * there each such function is the baseline's alone, the same bits */
#define MYGPT_CLONES
#elif defined(__clang__)
/* clang 14 reads arch= in target_clones as a CPU model, never true for a level name (the
 * default clone always ran), and drops the v3 clone: it is given features instead,
 * avx512f (with AVX2, FMA and F16C) and fma (with AVX) */
#define MYGPT_CLONES __attribute__((target_clones("avx512f", "fma", "default")))
#else
#define MYGPT_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#endif
#else
#define MYGPT_CLONES
#endif
/* aarch64: NEON (AdvSIMD) is part of the base architecture, so its kernels are compiled
 * without attributes and chosen at build time; there is nothing to pick at run time. */
#if defined(__aarch64__) && defined(__ARM_NEON)
#define MYGPT_NEON_KERNELS 1
/* For the kernels' macros written in the x86 intrinsics' terms (<arm_neon.h> included by
 * the file using them): a fused multiply-add acc + a b in _mm256_fmadd_ps's operand order
 * (vfmaq_f32 is fmaf lane by lane), and a zero vector as _mm256_setzero_ps() */
#define MYGPT_NEON_FMA(a, b, acc) vfmaq_f32(acc, a, b)
#define MYGPT_NEON_ZERO() vdupq_n_f32(0.0f)
#endif
/* A helper that a MYGPT_CLONES function calls: inlined into every clone, so it is compiled
 * for that clone's instruction set. Called out of line it would run the baseline code
 * whichever clone called it (fmaf a libm call, no vectors). */
#define MYGPT_IN_CLONES inline __attribute__((always_inline))

#endif
