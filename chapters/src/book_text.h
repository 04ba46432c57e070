/*
 * book_text.h - what the book's chapter-2 programs (2xx) share: the-verdict and GPT-2's
 * tokenizer from the data folder, parameters printed as PyTorch prints them, and Python's repr of the str, list and tuple values
 * the notebook prints.
 */
#ifndef MYGPT_BOOK_TEXT_H
#define MYGPT_BOOK_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "chapter.h"

/* open("the-verdict.txt").read(): the data folder's text, *len bytes (free it); absent
 * data exits 77 (skipped; 1 under CI=true). */
char *book_verdict(const chapter *ch, size_t *len);

/* tiktoken.get_encoding("gpt2"): the data folder's GPT-2 vocabulary (absent: exit 77). */
mygpt_tokenizer *book_gpt2(const chapter *ch);

/* tokenizer.encode(text, allowed_special={"<|endoftext|>"}); *n ids (free them). */
int64_t *book_encode(const chapter *ch, const mygpt_tokenizer *tok, const char *text, size_t *n);

/* print(tokenizer.decode(ids)) without the newline (an undecodable byte as U+FFFD). */
void book_print_decoded(const chapter *ch, const mygpt_tokenizer *tok, const int64_t *ids, size_t n);

/* print(module.weight) of a parameter (requires_grad), no newline:
 * "Parameter containing:\ntensor([...], requires_grad=True)". */
void book_print_param(const float *data, int ndim, const int64_t *shape);

/* repr(s): 'text', or "text" when s has a ' and no ", with Python's escapes. */
void py_str(const char *s);

/* repr(list of str) of the first n words: ['Hello', ',', ...]. */
void py_words(const char *const *words, size_t n);

/* repr(list of int): [1, 56, 2]. */
void py_ints(const int64_t *v, size_t n);

#endif
