/*
 * char_vocab.h - nanoGPT's character-level tokenizer (data/shakespeare_char/prepare.py):
 * the vocabulary is the sorted set of a text's characters, a character's id its place in
 * it. What `mygpt train --arch nanogpt` trains on and `mygpt generate --chars` writes with.
 */
#ifndef MYGPT_CHAR_VOCAB_H
#define MYGPT_CHAR_VOCAB_H

#include <stddef.h>
#include <stdint.h>

#include "mygpt/error.h"

/* The most characters a vocabulary holds (nanoGPT's ids are numpy uint16) */
#define CHAR_VOCAB_MAX 65536

typedef struct char_vocab {
    uint32_t *chars; /* the code points, ascending: chars[id]   */
    int n;           /* len(chars), the model's vocab_size       */
} char_vocab;

/* The vocabulary of a text: sorted(set(text)) over its characters, the text read as
 * Python's open(path, 'r') reads it (UTF-8, "\r\n" and "\r" as "\n"). MYGPT_EFORMAT for
 * text that is not UTF-8 or has more than CHAR_VOCAB_MAX characters; MYGPT_ENOMEM. */
mygpt_status char_vocab_build(char_vocab *v, const char *text, size_t len, mygpt_error *err);

/* The ids of text (len bytes) into *ids (malloc'd, *n of them): [stoi[c] for c in text].
 * MYGPT_EFORMAT naming the first character that is not in the vocabulary; MYGPT_ENOMEM. */
mygpt_status char_vocab_encode(const char_vocab *v, const char *text, size_t len, int64_t **ids, size_t *n,
                               mygpt_error *err);

/* ''.join([itos[i] for i in ids]) as UTF-8 into *text (malloc'd, NUL-terminated, *len bytes).
 * MYGPT_ERANGE for an id outside the vocabulary; MYGPT_ENOMEM. */
mygpt_status char_vocab_decode(const char_vocab *v, const int64_t *ids, size_t n, char **text, size_t *len,
                               mygpt_error *err);

/* The vocabulary of the text in the file at path (mygpt_read_file's errors too). */
mygpt_status char_vocab_from_file(char_vocab *v, const char *path, mygpt_error *err);

void char_vocab_free(char_vocab *v);

/* err's code and message from fmt (the library's mygpt_fail is its own): returns code */
mygpt_status trainer_fail(mygpt_error *err, mygpt_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
