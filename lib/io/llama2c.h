/*
 * io/llama2c.h - private to the library: what the other readers ask of llama2.c's model
 * file (llama2c.c), to say what a file given to them is.
 */
#ifndef MYGPT_IO_LLAMA2C_H
#define MYGPT_IO_LLAMA2C_H

#include <stdint.h>

/* 1 when the open file fd of `bytes` bytes is a whole llama2.c model: its first 28 bytes
 * a header of a valid model, and its length the one that model's file has; else 0. */
int mygpt_llama2c_whole_model(int fd, uint64_t bytes);

#endif
