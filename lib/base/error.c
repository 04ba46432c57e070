/* error.c - error codes and messages (see mygpt/error.h). */
#include "mygpt/error.h"
#include "base/base.h"

#include <stdarg.h>
#include <string.h>
#include <stdint.h>
#include <stdio.h>

const char *mygpt_strerror(mygpt_status code)
{
    switch (code) {
    case MYGPT_OK: return "success";
    case MYGPT_EINVAL: return "invalid argument";
    case MYGPT_ERANGE: return "value out of range";
    case MYGPT_EOVERFLOW: return "size overflow";
    case MYGPT_ENOMEM: return "out of memory";
    case MYGPT_EIO: return "input/output error";
    case MYGPT_EFORMAT: return "malformed input";
    }
    return "unknown error";
}

mygpt_status mygpt_fail(mygpt_error *err, mygpt_status code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        err->code = code;
        const int n = vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
        if (n >= (int)sizeof err->message) // cut: say so
            memcpy(err->message + sizeof err->message - 4, "...", 4);
    }
    return code;
}

void mygpt_error_clear(mygpt_error *err)
{
    if (err) {
        err->code = MYGPT_OK;
        err->message[0] = '\0';
    }
}

mygpt_status mygpt_fail_open(mygpt_error *err, const char *path, int errnum)
{
    if (!*path)
        return mygpt_fail(err, MYGPT_EIO, "%s", "cannot open '': the path is empty");
    return mygpt_fail(err, MYGPT_EIO, "cannot open %s: %s", path, strerror(errnum));
}
