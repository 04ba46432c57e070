/*
 * mygpt.h - the whole public API of libmygpt in one include.
 *
 *   mygpt/error.h   status codes and the caller-owned error struct
 *   mygpt/rng.h     PyTorch's CPU generator: manual_seed, randn, rand, randint,
 *                   randperm, nn.Embedding / nn.Linear initialisers
 *   mygpt/print.h   print(tensor) as PyTorch and numpy show it, Python number formats
 *   mygpt/layers.h  one function per layer and direction: embedding, linear,
 *                   LayerNorm, GELU, softmax
 *   mygpt/attention.h  causal multi-head attention, forward and backward
 *   mygpt/config.h  the model's configuration and parameter table, parameter counts
 *   mygpt/gpt.h     the chapter-12 GPT: create, forward
 *   mygpt/posenc.h  sinusoidal encodings, ALiBi biases, RoPE caches and rotation
 *   mygpt/kernels.h the instruction set the fast kernels run, and its check
 *   mygpt/tensor.h  equal / allclose, dot, mean / std, toy attention
 *   mygpt/svg.h     dependency-free SVG figures (line plots, heatmaps)
 *   mygpt/tokenizer.h  GPT-2 byte-level BPE
 *   mygpt/data.h    reading files, the data folder, the sliding-window data loader
 *   mygpt/weights.h the weight formats (fp32, bf16, int8) and their recipes
 *   mygpt/quantize.h  a model stored in bf16 or int8 for inference
 *   mygpt/kv_cache.h  the model's keys and values while it decodes, and the cached forward
 *   mygpt/sample.h  temperature, top-k, top-p and the multinomial draw
 *   mygpt/generate.h  the generation loop
 *   mygpt/train.h   the loss, the backward pass, SGD and AdamW, the trainer
 *   mygpt/checkpoint.h  safetensors checkpoints, Hugging Face GPT-2 files
 *   mygpt/sp_tokenizer.h  llama2.c's tokenizer (sentencepiece pieces, run.c's encode)
 *   mygpt/llama2c_sample.h  llama2.c's sampler (xorshift, temperature, top-p)
 *
 * Errors: functions that can fail return a mygpt_status and fill a caller-owned
 * mygpt_error; nothing in the library exits, aborts or prints. Every *_free takes NULL,
 * and a struct zeroed, freed already or whose making failed, and then does nothing.
 *
 * Threads: the library keeps no global state but the instruction set it picks once
 * per process (kernels/cpu.c). Every function is thread-safe on
 * distinct objects; one object must not be used by two threads at once, except a
 * loaded mygpt_tokenizer, which is read-only (encode/decode from any threads).
 * In detail: a mygpt_rng, a mygpt_gpt (its forward pass reuses its activations), a
 * mygpt_strbuf and a mygpt_svg belong to one thread at a time; the layer functions,
 * printers, counts and encodings touch only what they are given. Calling the library
 * from several threads of your own while it runs its own OpenMP loops is fine.
 */
#ifndef MYGPT_H
#define MYGPT_H

#include "mygpt/attention.h"
#include "mygpt/error.h"
#include "mygpt/config.h"
#include "mygpt/gpt.h"
#include "mygpt/layers.h"
#include "mygpt/posenc.h"
#include "mygpt/print.h"
#include "mygpt/rng.h"
#include "mygpt/svg.h"
#include "mygpt/kernels.h"
#include "mygpt/tensor.h"
#include "mygpt/tokenizer.h"
#include "mygpt/data.h"
#include "mygpt/checkpoint.h"
#include "mygpt/train_state.h"
#include "mygpt/generate.h"
#include "mygpt/sample.h"
#include "mygpt/train.h"
#include "mygpt/quantize.h"
#include "mygpt/weights.h"
#include "mygpt/kv_cache.h"
#include "mygpt/sp_tokenizer.h"
#include "mygpt/llama2c_sample.h"
#include "mygpt/lora.h"

#endif
