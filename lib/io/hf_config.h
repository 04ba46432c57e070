/*
 * io/hf_config.h - private to the library: the config.json Hugging Face keeps beside a
 * GPT-2 checkpoint (hf_config.c). mygpt writes one beside every gpt2 model it saves,
 * never replaces one that describes another model, and reads the heads from it when the
 * checkpoint's __metadata__ does not give them.
 */
#ifndef MYGPT_IO_HF_CONFIG_H
#define MYGPT_IO_HF_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "mygpt/error.h"
#include "mygpt/gpt.h"
#include "base/text.h"

/* Hugging Face's config.json for a gpt2 model of configuration c, into sb */
mygpt_status mygpt_hf_config_json(mygpt_strbuf *sb, const mygpt_config *c);

/* path's folder + "/" + file into out (n bytes): 1, or 0 when it does not fit */
int mygpt_path_beside(char *out, size_t n, const char *path, const char *file);

/* The config.json beside a gpt2 checkpoint (conf), before anything is written: MYGPT_OK
 * with *present false (there is none: mygpt writes its own) or true (it is there, a JSON
 * object whose vocab_size, n_positions, n_embd, n_layer and n_head are c's, with whatever
 * formatting and other keys: kept as it is); else an error saying why it is not replaced
 * (a link, not a regular file, unreadable, over 1 MB, not JSON, another model). */
mygpt_status mygpt_hf_config_check(const char *conf, const mygpt_config *c, bool *present, mygpt_error *err);

/* The top-level "n_head" of the (Hugging Face) config.json beside path, read with the
 * library's JSON reader: *heads 0 when there is no config.json (then heads of 64, as
 * documented); one that is there but unusable, or whose vocab_size, n_positions, n_embd
 * or n_layer (each where given) is not the checkpoint's (`sizes`, from its tensors), or
 * whose n_head does not divide its width, is an error that says why: its heads would be
 * another model's. */
mygpt_status mygpt_hf_config_heads(const char *path, const mygpt_config *sizes, int *heads, mygpt_error *err);
#endif
