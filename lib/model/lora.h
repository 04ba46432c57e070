/*
 * model/lora.h - private to the library: adding adapters to GPT-2 as the book's GPTModel
 * in one step, for a file of adapters read onto a GPT-2 (io/adapters.c). The public
 * operations are mygpt/lora.h's (model/lora.c).
 */
#ifndef MYGPT_MODEL_LORA_H
#define MYGPT_MODEL_LORA_H

#include "mygpt/gpt.h"

/* The book's GPTModel that mygpt_lora_untie_head makes of a model of configuration cfg
 * (arch llms-from-scratch, qkv_bias, an out_head of its own) in *out: 1, or 0 when cfg is
 * no GPT-2 language model without adapters (nothing to untie). */
int mygpt_lora_untied_config(const mygpt_config *cfg, mygpt_config *out);

/* mygpt_lora_add, with untie: on the model mygpt_lora_untie_head makes of g, in one step
 * (g unchanged on any error). */
mygpt_status mygpt_lora_add_to(mygpt_gpt *g, int rank, double alpha, int untie, mygpt_rng *rng, mygpt_error *err);

/* mygpt_lora_add_to with the adapters' values of a file: fill(ctx, m) puts them into m, the
 * new model, before g takes it; MYGPT_ERANGE (g unchanged) when the model would compute
 * with a weight that is not finite: merged (mygpt_lora_merge), finite adapters may
 * overflow float32, and the forward with them computes what the merge does. */
mygpt_status mygpt_lora_add_values(mygpt_gpt *g, int rank, double alpha, int untie,
                                   void (*fill)(void *ctx, mygpt_gpt *m), void *ctx, mygpt_error *err);

#endif
