/*
 * io/whole.h - private to the library: writing a file whole or not at all (checkpoint.c),
 * for the other files the library writes (figures).
 */
#ifndef MYGPT_IO_WHOLE_H
#define MYGPT_IO_WHOLE_H

#include <stddef.h>

#include "mygpt/error.h"

/* Writes len bytes of data to path through a temporary beside it (flushed, synced,
 * renamed over path, the directory synced), SIGINT/SIGTERM/SIGHUP held meanwhile: path
 * holds its old contents or all the new ones. path as mygpt_checkpoint_check_path
 * requires (not a symbolic link, a directory or a device; a writable folder); MYGPT_EIO
 * (a full disk, a size limit: the temporary removed) with the reason. */
mygpt_status mygpt_write_whole(const char *path, const char *data, size_t len, mygpt_error *err);

#endif
