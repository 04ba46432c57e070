/*
 * generate.c - the tutorial's generation loop (mygpt/generate.h): the model's KV cache
 * (model/kv_cache.c) while the context fits, the whole window again after it; and
 * llama2.c's run.c loop, one position at a time.
 */
#include <stdlib.h>
#include <string.h>

#include "mygpt/generate.h"
#include "mygpt/tensor.h"
#include "base/base.h"
#include "model/packed.h" /* the model packed for a call */

mygpt_status mygpt_generate(mygpt_gpt *g, mygpt_rng *rng, const int64_t *prompt, int n_prompt,
                            const mygpt_generation *gen, int64_t *out, int *n_out, mygpt_error *err)
{
    const int M = g->config.max_seq_len, V = g->config.vocab_size;
    const int max_new = gen->max_new, use_cache = gen->use_cache;
    mygpt_status st = MYGPT_OK;
    if (g->config.num_classes > 0)
        return mygpt_fail(err, MYGPT_EINVAL, "a classifier (num_classes %d) picks a class, it does not generate text",
                          g->config.num_classes);
    if (n_prompt < 1 || max_new < 0)
        return mygpt_fail(err, MYGPT_EINVAL, "need a prompt of at least one token and max_new >= 0 (got %d, %d)",
                          n_prompt, max_new);
    memcpy(out, prompt, (size_t)n_prompt * sizeof *out);
    int n = n_prompt;
    *n_out = n;
    float *logits = malloc((size_t)V * sizeof *logits), *scratch = malloc((size_t)V * sizeof *scratch);
    mygpt_kv_cache cache = {0};
    mygpt_packed_model *packed_here = NULL;
    if (!logits || !scratch)
        MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_ENOMEM, "%s", "out of memory for sampling"));
    if (use_cache)
        MYGPT_TRY_CLEANUP(st, mygpt_kv_cache_init(&cache, g, err));
    // the weights stay as they are until we return: packed once, each token reads them once
    if (use_cache && max_new > 1 && !g->packed) {
        MYGPT_TRY_CLEANUP(st, mygpt_packed_model_make(&packed_here, g, err));
        g->packed = packed_here;
    }
    for (int step = 0; step < max_new; step++) {
        const int start = n > M ? n - M : 0, len = n - start; // idx[:, -M:]
        if (use_cache && start == 0) {
            // positions 0 .. n-1: only those not yet cached run (the prompt, then one)
            MYGPT_TRY_CLEANUP(st, mygpt_gpt_forward_cached(g, &cache, out + cache.len, n - cache.len, err));
            memcpy(logits, cache.logits, (size_t)V * sizeof *logits);
        } else { // the whole window, as the tutorial (and a full cache) must
            MYGPT_TRY_CLEANUP(st, mygpt_gpt_forward(g, out + start, 1, len, err));
            memcpy(logits, g->acts.logits + (size_t)(len - 1) * V, (size_t)V * sizeof *logits);
        }
        const size_t bad = mygpt_first_nonfinite(logits, (size_t)V);
        if (bad < (size_t)V) // weights finite but huge (an update of 1e35, adapters of 1e10): no distribution
            MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_ERANGE, "the model's logit %zu at position %d is %g: its "
                                             "weights compute no distribution to sample from", bad, n - 1,
                                             (double)logits[bad]));
        int64_t next = 0;
        MYGPT_TRY_CLEANUP(st, mygpt_sample_next(rng, logits, (size_t)V, &gen->sampling, scratch, &next, err));
        if (next == gen->eos)
            break;
        out[n++] = next;
        *n_out = n;
        if (gen->on_token && gen->on_token(next, gen->user))
            break;
    }
cleanup:
    if (packed_here) { // the model as it came
        g->packed = NULL;
        mygpt_packed_model_free(packed_here);
    }
    mygpt_kv_cache_free(&cache);
    free(logits);
    free(scratch);
    return st;
}

mygpt_status mygpt_generate_llama2c(mygpt_gpt *g, mygpt_llama2c_sampler *sampler, const int64_t *prompt,
                                    int n_prompt, int steps, mygpt_pair_fn on_token, void *user, int *n_pos,
                                    mygpt_error *err)
{
    const int M = g->config.max_seq_len, V = g->config.vocab_size;
    if (g->config.num_classes > 0)
        return mygpt_fail(err, MYGPT_EINVAL, "a classifier (num_classes %d) picks a class, it does not generate text",
                          g->config.num_classes);
    if (n_prompt < 1 || steps < 0)
        return mygpt_fail(err, MYGPT_EINVAL, "need a prompt of at least one token and steps >= 0 (got %d, %d)",
                          n_prompt, steps);
    if (!sampler)
        return mygpt_fail(err, MYGPT_EINVAL, "%s", "run.c's loop draws with a sampler, and none was given");
    if (sampler->vocab_size != V)
        return mygpt_fail(err, MYGPT_EINVAL, "the sampler draws from %d tokens, the model has %d",
                          sampler->vocab_size, V);
    for (int i = 0; i < n_prompt; i++)
        if (prompt[i] < 0 || prompt[i] >= V)
            return mygpt_fail(err, MYGPT_EINVAL, "prompt id %lld (at %d) is outside the vocabulary of %d",
                              (long long)prompt[i], i, V);
    if (steps == 0 || steps > M) // run.c's -n 0: as far as the context goes
        steps = M;
    mygpt_kv_cache cache = {0};
    float *logits = malloc((size_t)V * sizeof *logits);
    mygpt_packed_model *packed_here = NULL;
    mygpt_status st = MYGPT_OK;
    int pos = 0;
    if (!logits)
        MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_ENOMEM, "%s", "out of memory for the logits"));
    MYGPT_TRY_CLEANUP(st, mygpt_kv_cache_init(&cache, g, err));
    if (steps > 1 && !g->packed) { // packed once for the call, as mygpt_generate does
        MYGPT_TRY_CLEANUP(st, mygpt_packed_model_make(&packed_here, g, err));
        g->packed = packed_here;
    }
    int64_t token = prompt[0];
    while (pos < steps) {
        MYGPT_TRY_CLEANUP(st, mygpt_gpt_forward_cached(g, &cache, &token, 1, err)); // (V) at pos
        int64_t next;
        if (pos < n_prompt - 1) { // still reading the prompt: its next token is forced
            next = prompt[pos + 1];
        } else {
            memcpy(logits, cache.logits, (size_t)V * sizeof *logits); // the sampler divides them in place
            const size_t bad = mygpt_first_nonfinite(logits, (size_t)V);
            if (bad < (size_t)V) // finite weights can still overflow: no distribution, as mygpt_generate says
                MYGPT_TRY_CLEANUP(st, mygpt_fail(err, MYGPT_ERANGE, "the model's logit %zu at position %d is %g: its "
                                                 "weights compute no distribution to sample from", bad, pos,
                                                 (double)logits[bad]));
            int picked = 0;
            MYGPT_TRY_CLEANUP(st, mygpt_llama2c_sample(sampler, logits, &picked, err));
            next = picked;
        }
        pos++;
        if (next == 1) // BOS delimits stories
            break;
        if (on_token && on_token(token, next, user))
            break;
        token = next;
    }
cleanup:
    if (n_pos)
        *n_pos = pos;
    if (packed_here) { // the model as it came
        g->packed = NULL;
        mygpt_packed_model_free(packed_here);
    }
    mygpt_kv_cache_free(&cache);
    free(logits);
    return st;
}
