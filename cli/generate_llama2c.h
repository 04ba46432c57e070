/*
 * generate_llama2c.h - `mygpt generate --sampler llama2c` (llama2.c's run.c, flag for flag).
 */
#ifndef MYGPT_CLI_GENERATE_LLAMA2C_H
#define MYGPT_CLI_GENERATE_LLAMA2C_H

#include "args.h"

/* Generates as run.c does from --checkpoint, --tokenizer, --temperature, --top-p,
 * --sample-seed, --steps and --prompt, printing what run.c prints; returns the exit
 * status. */
int generate_llama2c(const char *cmd, const parsed_args *a);

#endif
