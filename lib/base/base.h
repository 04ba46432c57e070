/*
 * base/base.h - private to the library: what every file of it uses. Errors are
 * returned, never exits: mygpt_fail fills the caller's mygpt_error; sizes are checked
 * before they are multiplied; big float buffers come from one aligned allocator.
 */
#ifndef MYGPT_BASE_BASE_H
#define MYGPT_BASE_BASE_H

#include <stddef.h>

#include "mygpt/error.h"

/* Records `code` and a printf-style message in *err (if err is not NULL) and
 * returns `code`, so library code can write `return mygpt_fail(err, ...)`. */
mygpt_status mygpt_fail(mygpt_error *err, mygpt_status code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* mygpt_fail's MYGPT_EIO for a file that open() refused with errnum: "cannot open PATH:
 * REASON", or, for the empty path (which names no file), "cannot open '': the path is
 * empty" */
mygpt_status mygpt_fail_open(mygpt_error *err, const char *path, int errnum);

/* Multiplies a * b into *out; returns 0 if the product fits in size_t,
 * 1 (and leaves *out untouched) if it would overflow. */
int mygpt_mul_overflows(size_t a, size_t b, size_t *out);

/* Returns call's status from the enclosing function unless it is MYGPT_OK: the library's
 * one way to pass an error up where nothing needs freeing first (a function that owns
 * memory uses MYGPT_TRY_CLEANUP instead). */
#define MYGPT_TRY(call)                                                                            \
    do {                                                                                           \
        const mygpt_status mygpt_try_st_ = (call);                                                 \
        if (mygpt_try_st_ != MYGPT_OK)                                                             \
            return mygpt_try_st_;                                                                  \
    } while (0)

/* MYGPT_TRY for a function that owns memory: st takes call's status and, unless it is
 * MYGPT_OK, control goes to the function's `cleanup:` label, which frees what it owns and
 * returns st. A failure found in place is `MYGPT_TRY_CLEANUP(st, mygpt_fail(err, ...))`. */
#define MYGPT_TRY_CLEANUP(st, call)                                                                \
    do {                                                                                           \
        if (((st) = (call)) != MYGPT_OK)                                                           \
            goto cleanup;                                                                          \
    } while (0)

/* bytes from a 64-byte boundary; from huge_from bytes (and 2 MB) on, from a 2 MB
 * boundary in huge pages; with fault_in, its pages faulted in at once. NULL when out of memory or bytes is
 * 0; free() frees it (base/alloc.c). */
void *mygpt_aligned_block(size_t bytes, size_t huge_from, int fault_in);

/* n floats from a 64-byte boundary (huge pages for a big block), or NULL when out of
 * memory or n is 0; free() frees it (base/alloc.c). */
float *mygpt_float_block(size_t n);

#endif
