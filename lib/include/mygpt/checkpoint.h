/*
 * mygpt/checkpoint.h - saving and loading a GPT in the safetensors format, so a model
 * trained in C loads into the PyTorch reference model and back.
 *
 * The file: an 8-byte little-endian header length, a JSON header (padded with spaces
 * to a multiple of 8 bytes), then the raw little-endian float32 data. The header names
 * each tensor as the reference model's state_dict does
 * ("token_embedding.embedding.weight", "blocks.0.attn.W_q.weight", ...; the causal
 * masks are buffers, not saved), with "dtype": "F32", its "shape" and its
 * "data_offsets" into the data; "__metadata__" holds the configuration (vocab_size,
 * embed_dim, num_heads, num_layers, max_seq_len, as strings).
 */
#ifndef MYGPT_CHECKPOINT_H
#define MYGPT_CHECKPOINT_H

#include "mygpt/error.h"
#include "mygpt/gpt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* everything declared here is exported by libmygpt.so (lib/exports.txt) */
#pragma GCC visibility push(default)

/* Writes gpt's parameters to path (through a temporary file renamed at the end, so a
 * reader never sees half a checkpoint). MYGPT_EIO when it cannot write. */
mygpt_status mygpt_checkpoint_save(const mygpt_gpt *gpt, const char *path, mygpt_error *err);

/* Builds a model from a checkpoint. Every problem is an error with the reason, never a
 * read out of bounds: unreadable or truncated files, a header length larger than the
 * file, malformed JSON, a configuration missing or invalid, a tensor missing, of another
 * dtype than F32 or another shape than the configuration's, offsets outside the data or
 * not matching the shape (MYGPT_EIO, MYGPT_EFORMAT, MYGPT_EINVAL, MYGPT_ENOMEM). */
mygpt_status mygpt_checkpoint_load(mygpt_gpt **out, const char *path, mygpt_error *err);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
