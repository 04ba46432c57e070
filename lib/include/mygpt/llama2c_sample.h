/*
 * mygpt/llama2c_sample.h - choosing the next token as llama2.c's run.c does, draw for
 * draw: its xorshift generator, argmax at temperature 0, else softmax(logits / T) and
 * one coin, sampled from all tokens or, when 0 < top-p < 1, from the nucleus.
 *
 *   mygpt_llama2c_sampler s;
 *   if (mygpt_llama2c_sampler_init(&s, vocab_size, 1.0f, 0.9f, 133742, &err)) ...
 *   int next;
 *   mygpt_llama2c_sample(&s, logits, &next, &err);   // logits are overwritten
 *   mygpt_llama2c_sampler_free(&s);
 *
 * Top-p as run.c: the tokens whose probability reaches (1 - top_p) / (n - 1), sorted by
 * probability (highest first, equal ones by id, as glibc's merge-sorting qsort leaves
 * them), cut after the first whose float32 running sum exceeds top_p; the coin times that
 * sum picks in them.
 */
#ifndef MYGPT_LLAMA2C_SAMPLE_H
#define MYGPT_LLAMA2C_SAMPLE_H

#include <stdint.h>

#include "mygpt/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* everything declared here is exported by libmygpt.so (lib/exports.txt) */
#pragma GCC visibility push(default)

/* a candidate of top-p: its probability and token id */
typedef struct mygpt_llama2c_candidate {
    float prob;
    int index;
} mygpt_llama2c_candidate;

typedef struct mygpt_llama2c_sampler {
    int vocab_size;
    float temperature;                   /* 0: argmax */
    float topp;                          /* 0 or 1: sample from every token */
    uint64_t rng_state;                  /* xorshift's state, advanced one step a draw */
    mygpt_llama2c_candidate *candidates; /* (2 vocab_size) top-p's list and its sort's */
} mygpt_llama2c_sampler;

/* run.c's random_u32: one xorshift* step of *state, the high 32 bits of the product. */
uint32_t mygpt_llama2c_random_u32(uint64_t *state);

/* run.c's random_f32: a float32 in [0, 1) from the top 24 bits of random_u32. */
float mygpt_llama2c_random_f32(uint64_t *state);

/* A sampler for vocab_size >= 2 tokens, temperature >= 0, 0 <= topp <= 1 and seed != 0
 * (xorshift stays at 0; run.c takes the time instead of 0); MYGPT_EINVAL naming the
 * value otherwise, MYGPT_ENOMEM. */
mygpt_status mygpt_llama2c_sampler_init(mygpt_llama2c_sampler *s, int vocab_size, float temperature, float topp,
                                        uint64_t seed, mygpt_error *err);

/* run.c's sample(): the next token of logits (vocab_size; divided by the temperature
 * and turned into probabilities in place) in *next, one draw taken from s unless the
 * temperature is 0. MYGPT_ERANGE when no token reaches top-p's cut-off (run.c would read
 * outside its array; only near-uniform probabilities do it), or when the logits divided
 * by the temperature make NaN probabilities (a quotient overflowed, or a logit is NaN:
 * run.c would draw from them). */
mygpt_status mygpt_llama2c_sample(mygpt_llama2c_sampler *s, float *logits, int *next, mygpt_error *err);

void mygpt_llama2c_sampler_free(mygpt_llama2c_sampler *s);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
