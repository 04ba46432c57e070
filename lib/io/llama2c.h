/*
 * io/llama2c.h - private to the library: telling llama2.c's model file by its content
 * (io/llama2c.c), for mygpt_model_load.
 */
#ifndef MYGPT_IO_LLAMA2C_H
#define MYGPT_IO_LLAMA2C_H

/* 1 when path is a regular file whose first 28 bytes are a llama2.c header of a valid
 * model and whose length is exactly that model's file; else 0 (a safetensors file never
 * is: its header's second int32 is 0). */
int mygpt_llama2c_file(const char *path);

#endif
