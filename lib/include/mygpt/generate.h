/*
 * mygpt/generate.h - speaking: the tutorial's generation loop (document 000's chapter
 * 15), over the model's KV cache (mygpt/kv_cache.h) while the context fits.
 */
#ifndef MYGPT_GENERATE_H
#define MYGPT_GENERATE_H

#include <stddef.h>
#include <stdint.h>

#include "mygpt/error.h"
#include "mygpt/gpt.h"
#include "mygpt/kv_cache.h"
#include "mygpt/rng.h"
#include "mygpt/sample.h"

#ifdef __cplusplus
extern "C" {
#endif

/* everything declared here is exported by libmygpt.so (lib/exports.txt) */
#pragma GCC visibility push(default)

/* The tutorial's loop for one prompt:
 *   for _ in range(max_new):
 *       logits = model(idx[:, -M:])[:, -1, :];  next = sample(logits)  (mygpt_sample_next)
 *       if next == eos: break
 *       idx = cat([idx, next])
 * out receives the prompt and the new tokens (n_prompt + max_new ids at most), *n_out
 * their count. eos < 0: no end token. use_cache 0 recomputes the whole window every
 * step, as the tutorial writes it; 1 uses a KV cache while the context fits (the same
 * tokens either way). Draws come from rng. An unpacked model is packed for the call
 * (and unpacked before it returns) when more than one token is asked for. */
mygpt_status mygpt_generate(mygpt_gpt *gpt, mygpt_rng *rng, const int64_t *prompt, int n_prompt,
                            int max_new, const mygpt_sampling *sampling, int64_t eos,
                            int use_cache, int64_t *out, int *n_out, mygpt_error *err);

/* mygpt_generate, calling on_token(id, user) with each new token as soon as it is
 * chosen (to show text as it comes); on_token NULL is mygpt_generate. on_token returns
 * 0 to go on, anything else to stop after that token (a chat's own stop rule: the token
 * is in out, as every token before it). */
typedef int (*mygpt_token_fn)(int64_t id, void *user);
mygpt_status mygpt_generate_stream(mygpt_gpt *gpt, mygpt_rng *rng, const int64_t *prompt, int n_prompt,
                                   int max_new, const mygpt_sampling *sampling, int64_t eos, int use_cache,
                                   int64_t *out, int *n_out, mygpt_token_fn on_token, void *user,
                                   mygpt_error *err);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
