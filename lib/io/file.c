/*
 * file.c - reading a whole file or its first bytes, and writing one whole (io/whole.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mygpt/data.h"
#include "base/base.h"
#include "io/whole.h"

mygpt_status mygpt_read_file(const char *path, char **data, size_t *len, mygpt_error *err)
{
    return mygpt_read_file_max(path, SIZE_MAX - 1, data, len, err);
}

mygpt_status mygpt_read_file_max(const char *path, size_t max, char **data, size_t *len, mygpt_error *err)
{
    *data = NULL;
    *len = 0;
    // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused just below
    const int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return mygpt_fail_open(err, path, errno);
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        const int dir = S_ISDIR(st.st_mode);
        close(fd);
        return mygpt_fail(err, MYGPT_EIO, "cannot read %s: %s", path,
                          dir ? "it is a directory" : "not a regular file (a device, FIFO or socket)");
    }
    if ((uint64_t)st.st_size > (uint64_t)max) {
        close(fd);
        return mygpt_fail(err, MYGPT_EINVAL, "%s is %lld bytes, more than the %zu bytes such a file can need", path,
                          (long long)st.st_size, max);
    }
    // read by the size it has: a file that grows while it is read stops at that size
    const size_t size = (size_t)st.st_size;
    char *buf = (uint64_t)st.st_size >= SIZE_MAX ? NULL : malloc(size + 1);
    if (!buf) {
        close(fd);
        return mygpt_fail(err, MYGPT_ENOMEM, "out of memory reading %s (%lld bytes)", path, (long long)st.st_size);
    }
    size_t n = 0;
    while (n < size) {
        const ssize_t got = read(fd, buf + n, size - n);
        if (got < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (got <= 0) {
            const int why = got < 0 ? errno : 0;
            close(fd);
            free(buf);
            return mygpt_fail(err, MYGPT_EIO, "error reading %s: %s", path,
                              why ? strerror(why) : "it became shorter while it was read");
        }
        n += (size_t)got;
    }
    close(fd);
    buf[n] = '\0';
    *data = buf;
    *len = n;
    return MYGPT_OK;
}

mygpt_status mygpt_write_file(const char *path, const char *data, size_t len, mygpt_error *err)
{
    return mygpt_write_whole(path, data, len, err);
}

mygpt_status mygpt_write_file_new(const char *path, const char *data, size_t len, mygpt_error *err)
{
    return mygpt_write_whole_new(path, data, len, err);
}

long mygpt_file_head(const char *path, char *head, size_t cap)
{
    struct stat sb; // lstat: a link, a FIFO (which would block an open), a folder are never opened
    if (lstat(path, &sb) != 0)
        return errno == ENOENT ? MYGPT_HEAD_ABSENT : MYGPT_HEAD_OTHER;
    // O_NONBLOCK and O_NOFOLLOW: what replaced the file since lstat is not waited on or followed
    const int fd = S_ISREG(sb.st_mode) && cap > 0 ? open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC) : -1;
    if (fd < 0)
        return MYGPT_HEAD_OTHER;
    size_t have = 0;
    ssize_t r = 0;
    while (have < cap - 1 && ((r = read(fd, head + have, cap - 1 - have)) > 0 || (r < 0 && errno == EINTR)))
        have += r > 0 ? (size_t)r : 0;
    close(fd);
    head[have] = '\0';
    return r < 0 ? MYGPT_HEAD_OTHER : (long)have; // a read that failed: not known to be anything
}
