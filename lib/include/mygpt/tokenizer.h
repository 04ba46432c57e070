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

/* ---- the book's chapter-2 simple tokenizers (simple_tokenizer.c) -------------------- */

/* A list of strings (each malloc'd, NUL-terminated), as Python's list of str. */
typedef struct mygpt_words {
    char **items;
    size_t n;
} mygpt_words;

void mygpt_words_free(mygpt_words *w);

/* The chapter's split: re.split(r'([,.:;?_!"()\']|--|\s)', text), the kept separators
 * included; with strip, then [item.strip() for item in result if item.strip()]. */
#define MYGPT_SIMPLE_PATTERN "([,.:;?_!\"()\']|--|\\s)"

/* Python's re.split(pattern, text) for a pattern of capturing groups: the pieces between
 * the matches with each match's groups between them, empty pieces kept. With strip,
 * every piece is stripped of ASCII whitespace and the empty ones dropped. Errors:
 * MYGPT_EINVAL (the pattern does not compile, or matches the empty string), MYGPT_ENOMEM. */
mygpt_status mygpt_regex_split(const char *pattern, const char *text, size_t len, int strip, mygpt_words *out,
                               mygpt_error *err);

/* SimpleTokenizerV1 (specials 0) or V2 (specials 1): a vocabulary of the sorted distinct
 * words of a text, V2 with "<|endoftext|>" and "<|unk|>" after them. */
typedef struct mygpt_simple_tokenizer {
    mygpt_words vocab; /* id -> word, sorted as Python sorts str (byte order of UTF-8) */
    int64_t unk;       /* the id of "<|unk|>", or -1 (V1: an unknown word is an error) */
} mygpt_simple_tokenizer;

/* Builds the vocabulary from len bytes of text split by MYGPT_SIMPLE_PATTERN (stripped):
 * all_words = sorted(set(preprocessed)) [+ ["<|endoftext|>", "<|unk|>"]]. */
mygpt_status mygpt_simple_tokenizer_init(mygpt_simple_tokenizer *tok, const char *text, size_t len,
                                         int specials, mygpt_error *err);
void mygpt_simple_tokenizer_free(mygpt_simple_tokenizer *tok);

/* The id of a word, or -1. */
int64_t mygpt_simple_id(const mygpt_simple_tokenizer *tok, const char *word);

/* encode(text): the text split as the vocabulary was, each word's id (V2: "<|unk|>"'s for
 * a word not in it); *ids malloc'd. V1 on an unknown word: MYGPT_ERANGE, and the message
 * is Python's "KeyError: 'word'". */
mygpt_status mygpt_simple_encode(const mygpt_simple_tokenizer *tok, const char *text, size_t len, int64_t **ids,
                                 size_t *n, mygpt_error *err);

/* decode(ids): the words joined by spaces, then re.sub(r'\s+([,.?!"()\'])', r'\1', text)
 * (no space before punctuation); *text malloc'd and NUL-terminated. An id outside the
 * vocabulary is MYGPT_ERANGE. */
mygpt_status mygpt_simple_decode(const mygpt_simple_tokenizer *tok, const int64_t *ids, size_t n, char **text,
                                 mygpt_error *err);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
