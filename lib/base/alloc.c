/*
 * alloc.c - the library's memory: size products checked before they are formed, and
 * the aligned float blocks the kernels read and write (parameters, gradients, AdamW's
 * moments, activations, scratch).
 */
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "base/base.h"

/* a * b into *out, or 1 (out untouched) if the product would overflow size_t */
int mygpt_mul_overflows(size_t a, size_t b, size_t *out)
{
    if (a != 0 && b > SIZE_MAX / a)
        return 1;
    *out = a * b;
    return 0;
}

/* n floats from 64 bytes on, so the kernels' 64-byte vectors never straddle two cache
 * lines (malloc gives 16); a big block (a GPT-2's parameters, gradients or AdamW's moments
 * are 0.5 to 6 GB) aligned to 2 MB and asked for in huge pages: filling it then takes a
 * fault every 2 MB instead of every 4 kB (a 1.5B model's load went from 1.5 M faults to a
 * few thousand). NULL when out of memory (or n is 0); free() frees it. */
float *mygpt_float_block(size_t n)
{
    const size_t huge = (size_t)2 << 20;
    if (n == 0 || n > SIZE_MAX / sizeof(float) - huge)
        return NULL;
    const size_t bytes = n * sizeof(float), big = bytes >= 32 * huge;
    const size_t align = big ? huge : 64, len = (bytes + align - 1) / align * align;
    void *p = NULL;
    if (posix_memalign(&p, align, len) != 0)
        return NULL;
#ifdef MADV_HUGEPAGE
    if (big)
        madvise(p, len, MADV_HUGEPAGE); // a hint: without it, 4 kB pages
#endif
    return p;
}
