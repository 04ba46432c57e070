/*
 * base/msort.h - private to the library: a stable merge sort shaped as glibc's qsort
 * sorts (its msort: halves of n / 2 and n - n / 2, the left element first unless the
 * comparison says it is greater), so code that reproduces a C program calling qsort gets
 * the same order, equal elements and all, whatever this machine's qsort does.
 */
#ifndef MYGPT_BASE_MSORT_H
#define MYGPT_BASE_MSORT_H

#include <stddef.h>

/* Sorts n elements of size bytes at base by cmp(a, b, arg) (< 0, 0, > 0 as for qsort),
 * using scratch of n * size bytes. */
void mygpt_msort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *, void *), void *arg,
                 void *scratch);

#endif
