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
#include "mygpt/llama2c_sample.h"
#include "mygpt/rng.h"
#include "mygpt/sample.h"

#ifdef __cplusplus
extern "C" {
#endif

/* everything declared here is exported by libmygpt.so (lib/exports.txt) */
#pragma GCC visibility push(default)

/* Called with each new token as soon as it is chosen (to show text as it comes):
 * returns 0 to go on, anything else to stop after that token (a chat's own stop rule:
 * the token is in out, as every token before it). */
typedef int (*mygpt_token_fn)(int64_t id, void *user);

/* How mygpt_generate continues a prompt, in one struct as llama2.c's Sampler. Set
 * max_new, sampling, eos and use_cache (a zeroed eos is token 0, a zeroed use_cache the
 * tutorial's slow loop); on_token and user may stay zero. */
typedef struct mygpt_generation {
    int max_new;             /* new tokens at most                                    */
    mygpt_sampling sampling; /* how each is picked (mygpt/sample.h)                   */
    int64_t eos;             /* the end token (not kept), or < 0: none                */
    int use_cache;           /* 1: the KV cache while the context fits; 0: the whole
                                window every step, as the tutorial writes it (the
                                same tokens either way)                               */
    mygpt_token_fn on_token; /* called with each new token, or NULL                   */
    void *user;              /* on_token's second argument                            */
} mygpt_generation;

/* The tutorial's loop for one prompt:
 *   for _ in range(max_new):
 *       logits = model(idx[:, -M:])[:, -1, :];  next = sample(logits)  (mygpt_sample_next)
 *       if next == eos: break
 *       idx = cat([idx, next])
 * out receives the prompt and the new tokens (n_prompt + gen->max_new ids at most),
 * *n_out their count. Draws come from rng (NULL is fine when sampling is greedy). An
 * unpacked model is packed for the call (and unpacked before it returns) when more than
 * one token is asked for. */
mygpt_status mygpt_generate(mygpt_gpt *gpt, mygpt_rng *rng, const int64_t *prompt, int n_prompt,
                            const mygpt_generation *gen, int64_t *out, int *n_out, mygpt_error *err);

/* Called by mygpt_generate_llama2c with each token it prints: next, after prev (run.c
 * decodes a piece from the pair); returns 0 to go on, anything else to stop there. */
typedef int (*mygpt_pair_fn)(int64_t prev, int64_t next, void *user);

/* llama2.c's run.c generate(), position by position:
 *   token = prompt[0]; pos = 0
 *   while pos < steps:
 *       logits = forward(token, pos)
 *       next = prompt[pos + 1] if pos < n_prompt - 1 else sample(sampler, logits)
 *       pos += 1
 *       if next == 1: break                       (BOS: the story ended)
 *       on_token(token, next);  token = next
 * steps counts positions, the prompt's included; 0 (or more than the model's max_seq_len)
 * is max_seq_len, as run.c's -n 0. The prompt is run.c's encode(text, bos=1, eos=0): at
 * least one id. *n_pos receives the positions run (may be NULL). MYGPT_EINVAL for a
 * classifier (num_classes > 0), an empty prompt, negative steps, an id outside the
 * vocabulary, no sampler (NULL) or a sampler of another
 * vocabulary size; MYGPT_ERANGE for a logit that is not finite where a token is drawn;
 * the forward's and the sampler's errors. */
mygpt_status mygpt_generate_llama2c(mygpt_gpt *gpt, mygpt_llama2c_sampler *sampler, const int64_t *prompt,
                                    int n_prompt, int steps, mygpt_pair_fn on_token, void *user, int *n_pos,
                                    mygpt_error *err);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
