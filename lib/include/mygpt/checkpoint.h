/*
 * mygpt/checkpoint.h - saving and loading a GPT in the safetensors format, so a model
 * trained in C loads into PyTorch and back, and a Hugging Face GPT-2 loads into mygpt.
 *
 * The file: an 8-byte little-endian header length, a JSON header (padded with spaces
 * to a multiple of 8 bytes), then the raw little-endian float32 data. Each tensor has
 * "dtype": "F32", its "shape" and its "data_offsets" into the data, and a name by its
 * architecture's layout:
 *   course             the reference model's state_dict ("token_embedding.embedding.weight",
 *                      "blocks.0.attn.W_q.weight", ...; the causal masks, buffers, not saved)
 *   llms-from-scratch  the book's GPTModel's ("tok_emb.weight", "trf_blocks.0.att.W_query.weight",
 *                      ..., "out_head.weight")
 *   gpt2               Hugging Face's ("wte.weight", "h.0.attn.c_attn.weight", ...): Conv1D
 *                      weights stored (in, out), c_attn = W_q | W_k | W_v along out; the
 *                      head is wte; a config.json as Hugging Face writes one beside the file
 * "__metadata__" holds the architecture and the configuration (arch, vocab_size,
 * embed_dim, num_heads, num_layers, max_seq_len, as strings), and a model with adapters
 * merged into it their checksum (lora_merged).
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

/* Whether path can take a checkpoint: a new name or a regular file (never a symbolic
 * link, a directory or a device: those are not replaced), in a directory that can be
 * written, where the save's temporary can be made (it is created and removed: a name of
 * 249 to 255 bytes leaves no room for its ".XXXXXX") and renamed over path (not another
 * user's file in a sticky folder such as /tmp). MYGPT_EINVAL or MYGPT_EIO with the reason. A training run asks before it
 * starts, so a bad path does not throw the trained model away. */
mygpt_status mygpt_checkpoint_check_path(const char *path, mygpt_error *err);

/* mygpt_checkpoint_check_path, and for a gpt2 the config.json beside path as
 * mygpt_checkpoint_save will find it: none (one is written), or a JSON object whose
 * vocab_size, n_positions, n_embd, n_layer and n_head are gpt's (any formatting, any
 * other keys: kept as it is). Anything else - another model, a link, a directory, over
 * 1 MB, unreadable, not JSON - is MYGPT_EINVAL (MYGPT_EIO) with the reason: a training
 * run asks before its first step. */
mygpt_status mygpt_checkpoint_check_save(const mygpt_gpt *gpt, const char *path, mygpt_error *err);

/* Writes gpt's parameters to path in its architecture's layout, whole or not at all: into
 * a unique temporary file beside it (path.XXXXXX, removed on failure), synced, renamed over
 * path, the directory synced; a reader never sees half a checkpoint and two runs saving to
 * one path never mix. SIGINT, SIGTERM and SIGHUP are held while it writes and act once
 * it is done, whichever thread the kernel hands them to (an OpenMP worker's too: for the
 * save's duration their handlers only note them; ignored ones stay ignored); a kill -9
 * leaves path.XXXXXX, named for what it is. A gpt2 also gets config.json beside it when
 * there is none; one there that describes the same model is kept, anything else refused
 * before the model is written (see mygpt_checkpoint_check_save). The path as mygpt_checkpoint_check_path
 * requires; MYGPT_EIO when it cannot write, with the reason; MYGPT_ERANGE, nothing written,
 * for a float32 weight that is a NaN or an infinity (naming its tensor). */
mygpt_status mygpt_checkpoint_save(const mygpt_gpt *gpt, const char *path, mygpt_error *err);

/* Builds a model from a checkpoint of any of the three layouts, the file read (not
 * mapped: a file cut or rewritten by another program while it is read is MYGPT_EIO,
 * "changed while being read", never a SIGBUS). The architecture comes from the
 * names (Hugging Face's with or without "transformer."; the mask buffers ignored; an
 * lm_head.weight equal to wte accepted), the sizes from __metadata__ or the shapes, the
 * heads from __metadata__, else a gpt2's config.json beside the file (its top-level
 * "n_head", read as JSON; a config.json that is there but unusable - not a file, over
 * 1 MB, not JSON, no or a repeated top-level n_head, not a whole number >= 1 - is an
 * error saying why), else, when there is no config.json, heads of 64. Every problem is an error with the reason, never a read out of bounds: unreadable
 * or truncated files, a header length larger than the file, malformed JSON, a
 * configuration missing or invalid, a tensor missing, named twice, of another dtype than
 * F32 or another shape than the configuration's, offsets outside the data or not
 * matching the shape, a tensor the model does not have (MYGPT_EIO, MYGPT_EFORMAT,
 * MYGPT_EINVAL, MYGPT_ENOMEM). */
mygpt_status mygpt_checkpoint_load(mygpt_gpt **out, const char *path, mygpt_error *err);

/* The model in path, whichever file holds it: a checkpoint (mygpt_checkpoint_load), a
 * training state (mygpt_train_state_model: the weights of the step it was saved at) or
 * llama2.c's model file (mygpt_llama2c_load, told by its header: one of a valid model, or
 * any other no format's first bytes claim, so a header of no model is said to be that).
 * Their errors; a file that is neither is said as mygpt_checkpoint_load says it. */
mygpt_status mygpt_model_load(mygpt_gpt **out, const char *path, mygpt_error *err);

/* Saves gpt where mygpt_model_load reads it back: a llama model to a path ending in .bin
 * as llama2.c's model file (mygpt_llama2c_save: run.c reads it), anything else as a
 * checkpoint (mygpt_checkpoint_save). Their errors. */
mygpt_status mygpt_model_save(const mygpt_gpt *gpt, const char *path, mygpt_error *err);

/* What mygpt_model_save would refuse before writing, asked before the work that makes
 * the model: mygpt_llama2c_check_save for llama2.c's file (with the way out: another
 * name), else mygpt_checkpoint_check_save. */
mygpt_status mygpt_model_check_save(const mygpt_gpt *gpt, const char *path, mygpt_error *err);

/* llama2.c's legacy model file (its run.c's checkpoint; export.py's legacy_export): a
 * header of seven int32 (dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, negative
 * for a classifier of its own, seq_len), then the float32 weights in run.c's order, with
 * the two RoPE tables of the export (skipped when read, written as model.py computes them)
 * before an untied classifier. Read into a model of arch llama: the header's sizes checked
 * as a configuration, and the file's length exactly theirs before the model is allocated
 * (a cut or longer file, MYGPT_EFORMAT with both lengths); a weight that is not finite,
 * MYGPT_EFORMAT naming its tensor as run.c does; unreadable, MYGPT_EIO. Written (a llama
 * model of interleaved rotary pairs, float32 weights, all finite: else MYGPT_EINVAL, or
 * MYGPT_ERANGE for a value, and nothing written) whole or not at all, as
 * mygpt_checkpoint_save writes. */
mygpt_status mygpt_llama2c_load(mygpt_gpt **out, const char *path, mygpt_error *err);
mygpt_status mygpt_llama2c_save(const mygpt_gpt *gpt, const char *path, mygpt_error *err);
/* What mygpt_llama2c_save refuses before it writes: a model that is no llama, weights
 * that are not float32, rotary pairs in halves (MYGPT_EINVAL), a path it may not write
 * (mygpt_checkpoint_check_path). Its non-finite weights are checked when it saves. */
mygpt_status mygpt_llama2c_check_save(const mygpt_gpt *gpt, const char *path, mygpt_error *err);

/* 1 when path is a file mygpt_model_load reads as llama2.c's: a regular file whose first
 * 28 bytes are a llama2.c header of a valid model (its length is mygpt_llama2c_load's to
 * check, and say), or whose first bytes no other format claims (a header of no model:
 * mygpt_llama2c_load says what is wrong with it); else 0. A safetensors file never is:
 * its header's length (below 4 GiB: bytes 4 to 7 zero, a llama2.c header's hidden_dim)
 * and its JSON at byte 8 (an object's '{' or an array's '['); nor torch.save's zip or
 * pickle, nor a text (no 0 byte in its first 8). */
int mygpt_llama2c_file(const char *path);
/* 1 when path is a regular file (not a link) holding a whole llama2.c model: a valid
 * header and the length it asks for (what a save of llama2.c's file may replace); else 0. */
int mygpt_llama2c_model_file(const char *path);

/* Appendix E's saving: only the LoRA adapters of gpt (mygpt/lora.h), named as PyTorch's
 * state_dict names them ("trf_blocks.0.att.W_query.lora.A", ..., "out_head.lora.B"),
 * with the model's configuration, lora_rank, lora_alpha and lora_base in __metadata__
 * (lora_base: FNV-1a 64 in 16 hex digits over the float32 bytes of every base tensor of
 * the parameter table in its order, the adapters left out, and a head that is a copy of
 * the token embedding left out as a tied head is); written as
 * mygpt_checkpoint_save writes (whole or not at all). mygpt_checkpoint_save refuses a
 * model with adapters: save them with this, or merge them first (mygpt_lora_merge).
 * MYGPT_EINVAL for a model without adapters; the errors of mygpt_checkpoint_save. */
mygpt_status mygpt_checkpoint_save_adapters(const mygpt_gpt *gpt, const char *path, mygpt_error *err);

/* mygpt_checkpoint_save and mygpt_checkpoint_save_adapters that never replace a file at
 * path, even one that appears while they write (another run's save, a file the user
 * wrote there): what they wrote is linked to path, never renamed over it; a file in the
 * way is MYGPT_EIO, and what they wrote stays whole beside it (PATH.XXXXXX), named in err.
 * Ctrl-C is held until it is in place, as for the others. */
mygpt_status mygpt_checkpoint_save_new(const mygpt_gpt *gpt, const char *path, mygpt_error *err);
mygpt_status mygpt_checkpoint_save_adapters_new(const mygpt_gpt *gpt, const char *path, mygpt_error *err);

/* Gives gpt (a model without adapters) the adapters of a file that
 * mygpt_checkpoint_save_adapters wrote for a model of its configuration (adapters of
 * the book's GPTModel on a GPT-2: gpt is made that model first, mygpt_lora_untie_head).
 * Everything is read and checked first (the metadata's model against gpt's, its
 * lora_base against gpt's weights when the file has one, every adapter there once, F32
 * of its shape, finite, nothing else; merged into the weights, every weight finite:
 * MYGPT_ERANGE otherwise, as mygpt_lora_merge; adapters that gpt's checkpoint says are
 * merged into it, lora_merged, refused): on any error, with the reason, gpt is unchanged
 * (MYGPT_EIO, MYGPT_EFORMAT, MYGPT_EINVAL, MYGPT_ENOMEM). mygpt_lora_merge then records
 * them in gpt->lora_merged, which mygpt_checkpoint_save writes as lora_merged (FNV-1a 64
 * of the adapters' values in the file's order). */
mygpt_status mygpt_checkpoint_load_adapters(mygpt_gpt *gpt, const char *path, mygpt_error *err);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
