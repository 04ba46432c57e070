/*
 * io/llama2c.h - private to the library: telling llama2.c's model file by its content
 * (io/llama2c.c), for mygpt_model_load.
 */
#ifndef MYGPT_IO_LLAMA2C_H
#define MYGPT_IO_LLAMA2C_H

/* 1 when path is a regular file whose first 28 bytes are a llama2.c header of a valid
 * model (its length is mygpt_llama2c_load's to check, and say), or whose first bytes no
 * other format claims (a header of no model: mygpt_llama2c_load says what is wrong with
 * it); else 0. A safetensors file never is: its JSON header starts at byte 8; nor
 * torch.save's zip or pickle, nor a text (no 0 byte in its first 8). */
int mygpt_llama2c_file(const char *path);

#endif
