/*
 * alloc.c - the library's memory: size products checked before they are formed, and
 * the aligned blocks the kernels read and write (parameters, gradients, AdamW's moments,
 * activations, scratch, weights packed once).
 */
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/base.h"

/* a * b into *out, or 1 (out untouched) if the product would overflow size_t */
int mygpt_mul_overflows(size_t a, size_t b, size_t *out)
{
    if (a != 0 && b > SIZE_MAX / a)
        return 1;
    *out = a * b;
    return 0;
}

/* A block of `bytes` from a 64-byte boundary, so the kernels' 64-byte vectors never
 * straddle two cache lines (malloc gives 16). A block of huge_from bytes or more (and
 * of 2 MB or more) starts on a 2 MB boundary, and its whole 2 MB pages are asked for in
 * huge pages (MADV_HUGEPAGE, a hint, given before anything touches them, so they are
 * huge from their first fault); a last part shorter than 2 MB is not hinted, so where
 * huge pages come only when asked for (Linux's usual "madvise" setting) the block holds
 * no more memory than it asks for. With `fault_in`, its pages are faulted in now by one call
 * (Linux's MADV_POPULATE_WRITE, a hint; elsewhere and on older kernels skipped), not one
 * fault for each page as it is first written. NULL when out of memory (or bytes is 0);
 * free() frees it. Why each caller asks what it asks: bench/results/design-notes.md. */
void *mygpt_aligned_block(size_t bytes, size_t huge_from, int fault_in)
{
    const size_t huge = (size_t)2 << 20, align = bytes >= huge_from && bytes >= huge ? huge : 64;
    void *mem = NULL;
    if (bytes == 0 || posix_memalign(&mem, align, bytes) != 0)
        return NULL;
#ifdef MADV_HUGEPAGE
    if (align == huge)
        (void)madvise(mem, bytes / huge * huge, MADV_HUGEPAGE); // (where huge pages are off: ignored)
#endif
#ifdef MADV_POPULATE_WRITE
    const long page = sysconf(_SC_PAGESIZE);
    if (fault_in && page > 0) {
        const uintptr_t first = ((uintptr_t)mem + (uintptr_t)page - 1) / (uintptr_t)page * (uintptr_t)page;
        const uintptr_t end = ((uintptr_t)mem + bytes) / (uintptr_t)page * (uintptr_t)page;
        if (end > first)
            (void)madvise((void *)first, end - first, MADV_POPULATE_WRITE); // (older kernels: EINVAL, ignored)
    }
#else
    (void)fault_in;
#endif
    return mem;
}

/* n floats as mygpt_aligned_block gives them, in huge pages from 64 MB on: a GPT-2's
 * parameters, gradients or AdamW's moments are 0.5 to 6 GB, and filling one then takes a
 * fault every 2 MB instead of every 4 kB (a 1.5B model's load went from 1.5 M faults to a
 * few thousand). NULL when out of memory (or n is 0); free() frees it. */
float *mygpt_float_block(size_t n)
{
    if (n > SIZE_MAX / sizeof(float))
        return NULL;
    return mygpt_aligned_block(n * sizeof(float), (size_t)64 << 20, 0);
}
