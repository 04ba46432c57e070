/*
 * mygpt/tokenizer.h - GPT-2's byte-level BPE tokenizer and the sliding-window data
 * loader of document 003.
 *
 *   mygpt_tokenizer *tok;
 *   if (mygpt_tokenizer_load_dir(&tok, "data", &err)) ...   // encoder.json + vocab.bpe
 *   int64_t *ids; size_t n;
 *   if (mygpt_encode(tok, text, len, &ids, &n, &err)) ...   // tiktoken's gpt2, with
 *                                                           // <|endoftext|> allowed
 *   mygpt_decode(tok, ids, n, &back, &back_len, &err);      // the bytes again
 *
 * Encoding: text is split on "<|endoftext|>" (id 50256), each part is cut into
 * pieces by GPT-2's pattern (contractions, letters, numbers, other, whitespace),
 * each piece's UTF-8 bytes start as one token each and are merged by BPE rank,
 * lowest first. Input must be valid UTF-8 (else MYGPT_EFORMAT).
 *
 * Thread safety: a loaded tokenizer is read-only; any number of threads may
 * encode and decode with it at once.
 */
#ifndef MYGPT_TOKENIZER_H
#define MYGPT_TOKENIZER_H

#include <stddef.h>
#include <stdint.h>

#include "mygpt/error.h"
#include "mygpt/rng.h"

#ifdef __cplusplus
extern "C" {
#endif

/* everything declared here is exported by libmygpt.so (lib/exports.txt) */
#pragma GCC visibility push(default)

#define MYGPT_ENDOFTEXT_ID 50256
#define MYGPT_ENDOFTEXT "<|endoftext|>"

typedef struct mygpt_tokenizer mygpt_tokenizer;

/* Loads encoder.json (token -> id) and vocab.bpe (merges by rank). Errors:
 * MYGPT_EIO (a file cannot be read), MYGPT_EFORMAT (malformed content, with the
 * line or offset), MYGPT_ENOMEM. */
mygpt_status mygpt_tokenizer_load(mygpt_tokenizer **out, const char *encoder_json,
                                  const char *vocab_bpe, mygpt_error *err);

/* The same from DIR/encoder.json and DIR/vocab.bpe. */
mygpt_status mygpt_tokenizer_load_dir(mygpt_tokenizer **out, const char *dir, mygpt_error *err);

/* Reads a whole file into *data (malloc'd, NUL-terminated; *len bytes without the
 * NUL). Errors: MYGPT_EIO (cannot open or read, message names the file),
 * MYGPT_ENOMEM. */
mygpt_status mygpt_read_file(const char *path, char **data, size_t *len, mygpt_error *err);

/* The data folder (GPT-2's encoder.json and vocab.bpe, the-verdict.txt), the same
 * rule for every program: $MYGPT_DATA when set; else, beside the running program,
 * ../data (a build tree: meson links build/data to the folder configured with
 * -Ddata_dir, by default the source tree's data/) or ../share/mygpt (an installed
 * tree: PREFIX/bin/../share/mygpt). No path is compiled into the binaries. Writes the
 * folder into out (n bytes); MYGPT_EIO when none exists (out = ""). */
mygpt_status mygpt_data_dir(char *out, size_t n, mygpt_error *err);

/* Number of ids (50257 for GPT-2). */
size_t mygpt_tokenizer_vocab_size(const mygpt_tokenizer *tok);

/* Encodes len bytes of UTF-8 text; *ids is malloc'd (free it), *n its length. */
mygpt_status mygpt_encode(const mygpt_tokenizer *tok, const char *text, size_t len, int64_t **ids,
                          size_t *n, mygpt_error *err);

/* Decodes ids into *text (malloc'd, NUL-terminated, *len bytes without the NUL).
 * An id outside the vocabulary is MYGPT_ERANGE. */
mygpt_status mygpt_decode(const mygpt_tokenizer *tok, const int64_t *ids, size_t n, char **text,
                          size_t *len, mygpt_error *err);

void mygpt_tokenizer_free(mygpt_tokenizer *tok);

/* ---- data loader: LLMs-from-scratch's create_dataloader_v1 ----------------------- */

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
