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

/* The same from DIR/encoder.json and DIR/vocab.bpe; MYGPT_EINVAL when those paths
 * would not fit in 4095 bytes (never a shortened path). */
mygpt_status mygpt_tokenizer_load_dir(mygpt_tokenizer **out, const char *dir, mygpt_error *err);

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

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
