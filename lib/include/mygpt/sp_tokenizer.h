/*
 * mygpt/sp_tokenizer.h - llama2.c's sentencepiece-style tokenizer (its tokenizer.bin
 * format, its run.c's encode and decode), exact: the ids and the printed text are run.c's.
 *
 *   mygpt_sp_tokenizer *tok;
 *   if (mygpt_sp_load(&tok, "tok512.bin", 0, &err)) ...         // every token in the file
 *   int *ids; size_t n;
 *   mygpt_sp_encode(tok, text, strlen(text), 1, 0, &ids, &n, &err); // BOS, no EOS
 *   const char *piece;
 *   mygpt_sp_piece(tok, prev, next, &piece, &err);             // run.c's decode(prev, next)
 *   if (mygpt_sp_piece_printable(piece)) fputs(piece, stdout); // run.c's safe_printf
 *
 * The file: int32 max_token_length, then per token a float32 score, an int32 length and
 * that many bytes (no count: the model's vocab_size says how many). Ids 0, 1 and 2 are
 * <unk>, BOS and EOS; ids 3 .. 258 the bytes 0x00 .. 0xFF ("<0x41>").
 *
 * Encoding: BOS (1) if asked; the piece " " when the text is not empty (sentencepiece's
 * dummy prefix); each UTF-8 code point's piece, or its bytes as ids 3 + byte when the
 * vocabulary has no such piece; then, while some adjacent pair's concatenation is a
 * piece, the pair whose piece scores highest is merged (the leftmost among equal scores);
 * EOS (2) if asked.
 *
 * Thread safety: a loaded tokenizer is read-only; any number of threads may use it.
 */
#ifndef MYGPT_SP_TOKENIZER_H
#define MYGPT_SP_TOKENIZER_H

#include <stddef.h>

#include "mygpt/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* everything declared here is exported by libmygpt.so (lib/exports.txt) */
#pragma GCC visibility push(default)

#define MYGPT_SP_BOS 1
#define MYGPT_SP_EOS 2

typedef struct mygpt_sp_tokenizer mygpt_sp_tokenizer;

/* Reads a tokenizer.bin of vocab_size tokens (0: as many as the file holds). Every length
 * is checked: MYGPT_EFORMAT (with the token and the byte offset) for a file that ends
 * inside a token, a negative length, a piece longer than the header's max_token_length,
 * bytes after the last token, no token at all, or fewer tokens than vocab_size;
 * MYGPT_EIO when it cannot be read; MYGPT_EINVAL for a file over 64 MiB (Llama 2's is
 * 434 kB); MYGPT_ENOMEM. */
mygpt_status mygpt_sp_load(mygpt_sp_tokenizer **out, const char *path, int vocab_size, mygpt_error *err);

/* Writes the tokenizer to path in the same format, whole or not at all (a loaded file
 * comes back byte for byte). MYGPT_EIO with the reason. */
mygpt_status mygpt_sp_save(const mygpt_sp_tokenizer *tok, const char *path, mygpt_error *err);

/* The number of tokens. */
int mygpt_sp_vocab_size(const mygpt_sp_tokenizer *tok);

/* Token id's piece as the file holds it (up to its first NUL byte), its score in *score
 * (may be NULL); NULL for an id outside the vocabulary. */
const char *mygpt_sp_token(const mygpt_sp_tokenizer *tok, int id, float *score);

/* Encodes len bytes of text as run.c's encode(text, bos, eos): *ids is malloc'd (free
 * it), *n its length (at most len + 3). MYGPT_EINVAL for a NUL byte in the text (run.c
 * would stop there), MYGPT_EFORMAT when the vocabulary lacks the piece " ", a fallen-back
 * byte's id, or BOS or EOS when asked, MYGPT_EOVERFLOW for a text over 512 MiB,
 * MYGPT_ENOMEM. */
mygpt_status mygpt_sp_encode(const mygpt_sp_tokenizer *tok, const char *text, size_t len, int bos, int eos,
                             int **ids, size_t *n, mygpt_error *err);

/* run.c's decode(prev, id): id's piece, without its leading space after BOS (prev == 1),
 * and a piece "<0xXX>" as that one raw byte (a 1-byte string, "" for 0x00). The piece
 * lives as long as tok. MYGPT_ERANGE for an id outside the vocabulary (prev may be any
 * value: only 1 matters). */
mygpt_status mygpt_sp_piece(const mygpt_sp_tokenizer *tok, int prev, int id, const char **piece,
                            mygpt_error *err);

/* 1 when run.c's safe_printf prints piece: not empty, and a piece of one byte only if that
 * byte is printable ASCII or whitespace (the C locale's isprint or isspace); 0 otherwise. */
int mygpt_sp_piece_printable(const char *piece);

/* The text run.c prints for ids, each piece after the id before it (the first after none),
 * unprintable one-byte pieces left out as safe_printf leaves them; BOS prints nothing.
 * *text is malloc'd and NUL-terminated, *len its bytes. MYGPT_ERANGE names the first id
 * outside the vocabulary; MYGPT_ENOMEM. */
mygpt_status mygpt_sp_decode(const mygpt_sp_tokenizer *tok, const int *ids, size_t n, char **text,
                             size_t *len, mygpt_error *err);

void mygpt_sp_free(mygpt_sp_tokenizer *tok);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
