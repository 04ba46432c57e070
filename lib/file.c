/*
 * file.c - reading a whole file.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mygpt/data.h"
#include "internal.h"

mygpt_status mygpt_read_file(const char *path, char **data, size_t *len, mygpt_error *err)
{
    *data = NULL;
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return mygpt_fail(err, MYGPT_EIO, "cannot open %s: %s", path, strerror(errno));
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    for (;;) {
        if (!buf) {
            fclose(f);
            return mygpt_fail(err, MYGPT_ENOMEM, "out of memory reading %s", path);
        }
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap)
            break;
        char *nb = cap > SIZE_MAX / 2 - 1 ? NULL : realloc(buf, 2 * cap + 1);
        if (!nb)
            free(buf);
        buf = nb;
        cap *= 2;
    }
    const int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        return mygpt_fail(err, MYGPT_EIO, "error reading %s", path);
    }
    buf[n] = '\0';
    *data = buf;
    *len = n;
    return MYGPT_OK;
}
