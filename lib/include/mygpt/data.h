/*
 * mygpt/data.h - the data a program reads: a whole file, the data folder every program
 * shares, and LLMs-from-scratch's DataLoader over a token stream (with the UTF-8
 * lengths that split a text as Python does).
 */
#ifndef MYGPT_DATA_H
#define MYGPT_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "mygpt/error.h"
#include "mygpt/rng.h"

#ifdef __cplusplus
extern "C" {
#endif

/* everything declared here is exported by libmygpt.so (lib/exports.txt) */
#pragma GCC visibility push(default)

/* ---- files (file.c, datadir.c) ---------------------------------------------------- */

/* Reads a whole regular file into *data (malloc'd, NUL-terminated; *len bytes without
 * the NUL), by the size it has when opened. A directory, device, FIFO or socket is
 * refused, never waited on. Errors: MYGPT_EIO (cannot open or read, the message names
 * the file and why), MYGPT_ENOMEM. */
mygpt_status mygpt_read_file(const char *path, char **data, size_t *len, mygpt_error *err);

/* mygpt_read_file for a file whose format bounds it (a vocabulary, a config.json): one
 * larger than max bytes is refused before it is read (MYGPT_EINVAL, naming the file
 * and the limit). */
mygpt_status mygpt_read_file_max(const char *path, size_t max, char **data, size_t *len, mygpt_error *err);

/* Writes len bytes of data to path whole or not at all, as checkpoints are written (a
 * temporary beside path, synced and renamed over it, Ctrl-C held meanwhile): a failed
 * write leaves the old file as it was. A symbolic link, a directory or a device is
 * refused (MYGPT_EINVAL); a failed write is MYGPT_EIO with the reason. */
mygpt_status mygpt_write_file(const char *path, const char *data, size_t len, mygpt_error *err);

/* The data folder (GPT-2's encoder.json and vocab.bpe, the-verdict.txt), the same
 * rule for every program: $MYGPT_DATA when set; else, beside the running program,
 * ../data (a build tree: meson links build/data to the folder configured with
 * -Ddata_dir, by default the source tree's data/) or ../share/mygpt (an installed
 * tree: PREFIX/bin/../share/mygpt). No path is compiled into the binaries. Writes the
 * folder into out (n bytes); MYGPT_EIO when none exists (out = ""). */
mygpt_status mygpt_data_dir(char *out, size_t n, mygpt_error *err);

/* ---- the data loader (dataloader.c): LLMs-from-scratch's create_dataloader_v1 ---- */

/* Windows of max_length tokens every stride tokens (targets shifted by one), grouped
 * into batches as torch's DataLoader groups them: in order, or in the order a
 * RandomSampler draws (shuffle=True), with or without the last short batch. */
typedef struct mygpt_dataloader {
    const int64_t *ids;   /* the token stream (not owned) */
    size_t n;
    size_t max_length, stride, batch_size;
    size_t num_windows;   /* len(range(0, n - max_length, stride)) */
    size_t num_batches;   /* num_windows / batch_size, rounded up unless drop_last */
    int drop_last;        /* 1 (the default of mygpt_dataloader_init): drop a short batch */
    int64_t *order;       /* the epoch's window order (malloc'd), or NULL: 0, 1, 2, ... */
} mygpt_dataloader;

/* Sets up the windows; drop_last = 1, in order. Fails if a size is zero. */
mygpt_status mygpt_dataloader_init(mygpt_dataloader *dl, const int64_t *ids, size_t n,
                                   size_t batch_size, size_t max_length, size_t stride,
                                   mygpt_error *err);

/* drop_last=False keeps the last short batch (num_batches rounds up). */
void mygpt_dataloader_set_drop_last(mygpt_dataloader *dl, int drop_last);

/* What `for x, y in loader:` draws from the global generator when it starts an epoch
 * (iter(loader) in torch 1.13): one int64 for the iterator's base seed, always; then,
 * when shuffle, RandomSampler's seed (random64() mod 2^63) for a fresh generator whose
 * randperm(num_windows) is the epoch's order. Without shuffle the order is 0, 1, 2, ...
 * MYGPT_ENOMEM if the order cannot be stored. */
mygpt_status mygpt_dataloader_epoch(mygpt_dataloader *dl, mygpt_rng *global, int shuffle,
                                    mygpt_error *err);

/* Rows of batch b: batch_size, or fewer for the last batch without drop_last. */
size_t mygpt_dataloader_batch_rows(const mygpt_dataloader *dl, size_t b);

/* Batch b (0 <= b < num_batches) of the current epoch: inputs and targets, each
 * (rows, max_length) with rows = mygpt_dataloader_batch_rows(dl, b). */
mygpt_status mygpt_dataloader_batch(const mygpt_dataloader *dl, size_t b, int64_t *inputs,
                                    int64_t *targets, mygpt_error *err);

void mygpt_dataloader_free(mygpt_dataloader *dl);

/* Python's len(text) for UTF-8 text (code points), and the byte offset of code point
 * `chars` (text[:chars] is the first offset bytes): for splits like int(0.9 * len(text)). */
size_t mygpt_utf8_length(const char *text, size_t len);
size_t mygpt_utf8_offset(const char *text, size_t len, size_t chars);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
