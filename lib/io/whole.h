/*
 * io/whole.h - private to the library: writing a file whole or not at all (whole.c), for
 * every file the library writes (checkpoints, config.json, figures).
 */
#ifndef MYGPT_IO_WHOLE_H
#define MYGPT_IO_WHOLE_H

#include <signal.h>
#include <stddef.h>
#include <stdio.h>

#include "mygpt/error.h"

/* Writes len bytes of data to path through a temporary beside it (flushed, synced,
 * renamed over path, the directory synced), SIGINT/SIGTERM/SIGHUP held meanwhile: path
 * holds its old contents or all the new ones. path as mygpt_checkpoint_check_path
 * requires (not a symbolic link, a directory or a device; a writable folder); MYGPT_EIO
 * (a full disk, a size limit: the temporary removed) with the reason. */
mygpt_status mygpt_write_whole(const char *path, const char *data, size_t len, mygpt_error *err);

/* The same, for a caller that holds the signals already (mygpt_hold_signals). */
mygpt_status mygpt_write_whole_unheld(const char *path, const char *data, size_t len, mygpt_error *err);

/* A temporary file beside path, unique ("<path>.XXXXXX", mkstemp), with the mode a new
 * file would get, its name in tmp (n bytes); NULL with *st and err set. */
FILE *mygpt_temp_beside(const char *path, char *tmp, size_t n, mygpt_status *st, mygpt_error *err);

/* Finishes the file f written at tmp: flushed and synced, renamed over path, the folder
 * synced. ok 0 (a write failed, errno saying why) or a failure here: tmp removed, path as
 * it was, MYGPT_EIO. */
mygpt_status mygpt_commit_temp(FILE *f, const char *tmp, const char *path, int ok, mygpt_error *err);

/* The same, but never over a file at path, even one that appeared after the caller looked:
 * tmp is linked there. A file in the way, or a file system without links, is MYGPT_EIO,
 * and tmp stays, whole, named in err. */
mygpt_status mygpt_commit_temp_new(FILE *f, const char *tmp, const char *path, int ok, mygpt_error *err);

/* mygpt_write_whole, never over a file at path (mygpt_commit_temp_new). */
mygpt_status mygpt_write_whole_new(const char *path, const char *data, size_t len, mygpt_error *err);

/* SIGINT, SIGTERM and SIGHUP wait while a file is written: blocked in the calling thread,
 * and noted by a handler in the others (an idle OpenMP worker may get them); released
 * and raised again, with the program's handlers, by mygpt_release_signals(held, &was). */
int mygpt_hold_signals(sigset_t *was);
void mygpt_release_signals(int held, const sigset_t *was);

#endif
