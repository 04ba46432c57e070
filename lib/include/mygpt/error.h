/*
 * mygpt/error.h - how library functions report caller mistakes.
 *
 * Library functions never exit() or abort() on bad input. A function that can
 * fail returns a mygpt_status (MYGPT_OK == 0 on success) and, when the caller
 * passes a non-NULL mygpt_error, writes a one-line human-readable message into
 * it, e.g. "token id 7 is outside [0, 4)". The struct lives in the caller's
 * memory, so error reporting needs no global state and is thread-safe.
 */
#ifndef MYGPT_ERROR_H
#define MYGPT_ERROR_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* everything declared here is exported by libmygpt.so (lib/exports.txt) */
#pragma GCC visibility push(default)

typedef enum mygpt_status {
    MYGPT_OK = 0,
    MYGPT_EINVAL = 1,    /* an argument is invalid (bad shape, size, option)  */
    MYGPT_ERANGE = 2,    /* a value is out of its allowed range (token id...) */
    MYGPT_EOVERFLOW = 3, /* a size computation would overflow                 */
    MYGPT_ENOMEM = 4,    /* an allocation failed                              */
    MYGPT_EIO = 5,       /* a file could not be opened or read                */
    MYGPT_EFORMAT = 6    /* a file or string is malformed                     */
} mygpt_status;

/* Room for a reason that names two files of PATH_MAX's length; longer is cut, ending "..." */
#define MYGPT_ERROR_MESSAGE_MAX 8448

typedef struct mygpt_error {
    mygpt_status code;
    char message[MYGPT_ERROR_MESSAGE_MAX];
} mygpt_error;

/* A short generic description of a status code ("invalid argument", ...).
 * Never returns NULL. */
const char *mygpt_strerror(mygpt_status code);


/* Resets *err to MYGPT_OK with an empty message (err may be NULL). */
void mygpt_error_clear(mygpt_error *err);


#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
