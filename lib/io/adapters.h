/*
 * io/adapters.h - private to the library: what ties a file of LoRA adapters to the model
 * they were trained on (adapters.c), which the checkpoint writer records.
 */
#ifndef MYGPT_IO_ADAPTERS_H
#define MYGPT_IO_ADAPTERS_H

#include <stdint.h>

#include "mygpt/gpt.h"

/* The base checksum adapters record ("lora_base") and are checked against: FNV-1a 64 over
 * the float32 bytes of every tensor of g's parameter table, in the table's order, but the
 * adapters and a head that is a copy of the token embedding (a GPT-2's head untied,
 * mygpt_lora_untie_head: hashed as the tied head, which is no tensor of its own), so the
 * GPT-2 file and the book's GPTModel made of it have one checksum. Never 0. */
uint64_t mygpt_base_checksum(const mygpt_gpt *g);
#endif
