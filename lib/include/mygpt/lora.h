/*
 * mygpt/lora.h - LoRA, the book's appendix E: every nn.Linear of the model (the four of
 * the attention, the two of the feed-forward in each block, and a head of its own)
 * becomes LinearWithLoRA, W x + b + (alpha / r) (x A) B, with A (in, r) drawn as
 * kaiming_uniform_(a=sqrt(5)) and B (r, out) zeros, so the model starts out computing
 * what it did. Only A and B train (mygpt_trainer_freeze_for_lora in mygpt/train.h); the
 * adapters are rows of the parameter table (qA, qB, ... in mygpt/config.h), saved alone by
 * mygpt_checkpoint_save_adapters (mygpt/checkpoint.h), and merged into the weights for
 * inference by mygpt_lora_merge. A tied head (GPT-2's, the course's) is the token
 * embedding, not a Linear of its own: it gets no adapter, unless GPT-2 is first made the
 * book's GPTModel (mygpt_lora_untie_head), whose out_head is a Linear holding a copy.
 */
#ifndef MYGPT_LORA_H
#define MYGPT_LORA_H

#include "mygpt/error.h"
#include "mygpt/gpt.h"
#include "mygpt/rng.h"

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/* replace_linear_with_lora(model, rank, alpha): gives g adapters of rank r (1 to
 * MYGPT_LORA_MAX_RANK) and alpha (> 0), keeping every weight it has. Each A is drawn from
 * rng in the module order the book's recursion visits them (per block W_query, W_key,
 * W_value, out_proj, ff.layers.0, ff.layers.2; then out_head), each B is zeros; rng NULL
 * leaves the A's zero for a caller that fills them (a file of adapters). MYGPT_EINVAL
 * when g has adapters already, is quantized, or a trainer holds it (its gradients are
 * sized for the old model), or for a rank or alpha out of range; MYGPT_ENOMEM. On failure
 * g is unchanged (rng may have moved on). */
mygpt_status mygpt_lora_add(mygpt_gpt *g, int rank, double alpha, mygpt_rng *rng, mygpt_error *err);

/* GPT-2 as the book's GPTModel holds it (load_weights_into_gpt: out_head.weight = wte,
 * qkv_bias True): g's architecture becomes llms-from-scratch with qkv_bias, its head a
 * Linear of its own that starts as a copy of the token embedding. The model computes
 * the same logits, bit for bit; replace_linear_with_lora then wraps the head too, as the
 * book's exercise 7.4 does. MYGPT_EINVAL unless g is a GPT-2 language model (arch gpt2,
 * no classification head) without adapters, unquantized, and no trainer holds it;
 * MYGPT_ENOMEM. On failure g is unchanged. */
mygpt_status mygpt_lora_untie_head(mygpt_gpt *g, mygpt_error *err);

/* Folds the adapters into the weights, W += (alpha / r) (A B)^T in float32 (the product
 * rounded, scaled, then added), and drops them: g is then a plain model that computes
 * what it did, within float32 rounding, and saves as one. Adapters a file gave it
 * (g->lora_from) are recorded in g->lora_merged, which its checkpoint keeps, so they are
 * not added again. MYGPT_EINVAL when g has no adapters or a trainer holds it; MYGPT_ERANGE,
 * naming the weight, when a merged weight would be a NaN or an infinity (finite adapters
 * whose product overflows); MYGPT_ENOMEM. On failure g is unchanged. */
mygpt_status mygpt_lora_merge(mygpt_gpt *g, mygpt_error *err);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
