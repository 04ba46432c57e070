/*
 * llama2c_sample.c - llama2.c's sampler (see mygpt/llama2c_sample.h). Every float step
 * is run.c's, in its order: the sums are float32 and sequential, exp is the C library's
 * expf, so the same logits and seed give the same token.
 */
#include <math.h>
#include <stdlib.h>

#include "mygpt/llama2c_sample.h"
#include "mygpt/tensor.h"
#include "base/base.h"
#include "base/msort.h"

uint32_t mygpt_llama2c_random_u32(uint64_t *state)
{
    // xorshift* (Marsaglia's shifts 12, 25, 27, then Vigna's multiplier)
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    return (uint32_t)((*state * 0x2545F4914F6CDD1Dull) >> 32);
}

float mygpt_llama2c_random_f32(uint64_t *state)
{
    return (float)(mygpt_llama2c_random_u32(state) >> 8) / 16777216.0f;
}

mygpt_status mygpt_llama2c_sampler_init(mygpt_llama2c_sampler *s, int vocab_size, float temperature, float topp,
                                        uint64_t seed, mygpt_error *err)
{
    s->candidates = NULL;
    if (vocab_size < 2)
        return mygpt_fail(err, MYGPT_EINVAL, "a vocabulary of %d tokens is too small to sample from", vocab_size);
    if (!(temperature >= 0.0f) || isinf(temperature))
        return mygpt_fail(err, MYGPT_EINVAL, "temperature %g is not a finite number >= 0", (double)temperature);
    if (!(topp >= 0.0f && topp <= 1.0f))
        return mygpt_fail(err, MYGPT_EINVAL, "top-p %g is outside [0, 1]", (double)topp);
    if (seed == 0)
        return mygpt_fail(err, MYGPT_EINVAL, "seed 0 would keep xorshift at 0");
    s->vocab_size = vocab_size;
    s->temperature = temperature;
    s->topp = topp;
    s->rng_state = seed;
    if (!(s->candidates = malloc(2 * (size_t)vocab_size * sizeof *s->candidates)))
        return mygpt_fail(err, MYGPT_ENOMEM, "out of memory for %d top-p candidates", vocab_size);
    return MYGPT_OK;
}

void mygpt_llama2c_sampler_free(mygpt_llama2c_sampler *s)
{
    if (!s)
        return;
    free(s->candidates);
    s->candidates = NULL;
}

/* The first index of the largest of x (n). */
static int argmax(const float *x, int n)
{
    int best = 0;
    for (int i = 1; i < n; i++)
        if (x[i] > x[best])
            best = i;
    return best;
}

/* x (n) becomes softmax(x): exp(x - max) summed in order, then each divided by the sum. */
static void softmax(float *x, int n)
{
    float max = x[0];
    for (int i = 1; i < n; i++)
        if (x[i] > max)
            max = x[i];
    float sum = 0.0f;
    for (int i = 0; i < n; i++) {
        x[i] = expf(x[i] - max);
        sum += x[i];
    }
    for (int i = 0; i < n; i++)
        x[i] /= sum;
}

/* The first index where the running sum of probs (n) passes coin; the last if none does. */
static int sample_mult(const float *probs, int n, float coin)
{
    float cdf = 0.0f;
    for (int i = 0; i < n; i++) {
        cdf += probs[i];
        if (coin < cdf)
            return i;
    }
    return n - 1;
}

/* run.c's compare: the higher probability first, 0 otherwise (NaN included). */
static int by_prob(const void *a, const void *b, void *arg)
{
    (void)arg;
    const float pa = ((const mygpt_llama2c_candidate *)a)->prob, pb = ((const mygpt_llama2c_candidate *)b)->prob;
    return pa > pb ? -1 : pa < pb ? 1 : 0;
}

/* Nucleus sampling of probs (n) with coin, in the candidates' scratch (2n entries: the
 * second half is the sort's); -1 when no probability reaches the cut-off. */
static int sample_topp(const float *probs, int n, float topp, mygpt_llama2c_candidate *cand, float coin)
{
    // a token below the cut-off cannot be in the nucleus: run.c leaves it out of the sort
    const float cutoff = (1.0f - topp) / (float)(n - 1);
    int n0 = 0;
    for (int i = 0; i < n; i++)
        if (probs[i] >= cutoff)
            cand[n0++] = (mygpt_llama2c_candidate){probs[i], i};
    if (n0 == 0)
        return -1;
    mygpt_msort(cand, (size_t)n0, sizeof *cand, by_prob, NULL, cand + n);
    float cumulative = 0.0f;
    int last = n0 - 1;
    for (int i = 0; i < n0; i++) {
        cumulative += cand[i].prob;
        if (cumulative > topp) {
            last = i;
            break;
        }
    }
    const float r = coin * cumulative;
    float cdf = 0.0f;
    for (int i = 0; i <= last; i++) {
        cdf += cand[i].prob;
        if (r < cdf)
            return cand[i].index;
    }
    return cand[last].index;
}

mygpt_status mygpt_llama2c_sample(mygpt_llama2c_sampler *s, float *logits, int *next, mygpt_error *err)
{
    const int n = s->vocab_size;
    if (s->temperature == 0.0f) {
        *next = argmax(logits, n);
        return MYGPT_OK;
    }
    for (int i = 0; i < n; i++)
        logits[i] /= s->temperature;
    softmax(logits, n);
    // a largest quotient that overflowed float32 (or a NaN) leaves NaN probabilities
    if (mygpt_first_nonfinite(logits, (size_t)n) < (size_t)n)
        return mygpt_fail(err, MYGPT_ERANGE, "the logits divided by temperature %g overflow float32: no distribution "
                          "to sample from (a temperature too small for these logits? 0 is argmax)",
                          (double)s->temperature);
    const float coin = mygpt_llama2c_random_f32(&s->rng_state);
    if (s->topp <= 0.0f || s->topp >= 1.0f) {
        *next = sample_mult(logits, n, coin);
        return MYGPT_OK;
    }
    *next = sample_topp(logits, n, s->topp, s->candidates, coin);
    if (*next < 0)
        return mygpt_fail(err, MYGPT_ERANGE, "no token's probability reaches top-p %g's cut-off", (double)s->topp);
    return MYGPT_OK;
}
