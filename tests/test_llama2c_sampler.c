/*
 * test_llama2c_sampler.c - llama2.c's sampler against run.c's own draws
 * (tests/golden/llama2c/rng.txt and sample.txt, made by tools/reference_llama2c.py):
 * the xorshift generator, argmax, softmax with temperature, the multinomial draw and
 * top-p with its cut-off and its order of equal probabilities.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "golden.h"
#include "mygpt/llama2c_sample.h"

Test(llama2c_sampler, xorshift_draws_are_run_cs)
{
    golden_reader g = golden_reader_must_open("llama2c/rng.txt");
    int cases = 0;
    for (char *line; (line = golden_read(&g));) {
        unsigned long long seed;
        int count, used;
        cr_assert_eq(sscanf(line, "rng %llu %d : %n", &seed, &count, &used), 2, "rng.txt:%ld", g.lineno);
        uint64_t state = seed;
        const char *p = line + used;
        for (int i = 0; i < count; i++) {
            unsigned u, bits;
            int k;
            cr_assert_eq(sscanf(p, "%u:%x%n", &u, &bits, &k), 2, "rng.txt:%ld draw %d", g.lineno, i);
            p += k;
            uint64_t copy = state;
            const float f = mygpt_llama2c_random_f32(&copy);
            cr_expect_eq(mygpt_llama2c_random_u32(&state), u, "rng.txt:%ld draw %d", g.lineno, i);
            cr_expect_eq(copy, state);
            uint32_t fb;
            memcpy(&fb, &f, 4);
            cr_expect_eq(fb, bits, "rng.txt:%ld draw %d", g.lineno, i);
        }
        cases++;
    }
    cr_expect_eq(cases, 5);
    golden_reader_close(&g);
}

/* One case of sample.txt: DRAWS calls on fresh copies of logits (n) give the tokens of
 * want, and the generator ends at state. */
static void expect_case(int n, float temperature, float topp, uint64_t seed, int draws, const float *logits,
                        const char *want, uint64_t state, long lineno)
{
    mygpt_llama2c_sampler s;
    mygpt_error err = {0};
    cr_assert_eq(mygpt_llama2c_sampler_init(&s, n, temperature, topp, seed, &err), MYGPT_OK, "%s", err.message);
    float *work = malloc((size_t)n * sizeof *work);
    int64_t tokens[64];
    cr_assert_eq(golden_parse_i64(want, tokens, 64), (size_t)draws, "sample.txt:%ld", lineno);
    for (int d = 0; d < draws; d++) {
        memcpy(work, logits, (size_t)n * sizeof *work);
        int next = -1;
        cr_assert_eq(mygpt_llama2c_sample(&s, work, &next, &err), MYGPT_OK, "%s", err.message);
        cr_expect_eq(next, tokens[d], "sample.txt:%ld draw %d", lineno, d);
    }
    cr_expect_eq(s.rng_state, state, "sample.txt:%ld", lineno);
    free(work);
    mygpt_llama2c_sampler_free(&s);
}

Test(llama2c_sampler, samples_are_run_cs)
{
    golden_reader g = golden_reader_must_open("llama2c/sample.txt");
    int cases = 0, n = 0, draws = 0;
    unsigned long long seed = 0, state;
    char t[32], p[32], *want = NULL;
    float *logits = NULL;
    for (char *line; (line = golden_read(&g));) {
        if (sscanf(line, "case %d %31s %31s %llu %d", &n, t, p, &seed, &draws) == 5) {
            free(logits);
            logits = malloc((size_t)n * sizeof *logits);
        } else if (strncmp(line, "logits ", 7) == 0) {
            cr_assert_eq(golden_parse_f32(line + 7, logits, (size_t)n), (size_t)n, "sample.txt:%ld", g.lineno);
        } else if (strncmp(line, "tokens ", 7) == 0) {
            free(want);
            want = strdup(line + 7);
        } else if (sscanf(line, "state %llu", &state) == 1) {
            // strtof: as the harness's scanf read the temperature and top-p
            expect_case(n, strtof(t, NULL), strtof(p, NULL), seed, draws, logits, want, state, g.lineno);
            cases++;
        }
    }
    cr_expect_eq(cases, 14);
    free(logits);
    free(want);
    golden_reader_close(&g);
}

Test(llama2c_sampler, bad_settings_and_an_empty_nucleus_are_errors)
{
    mygpt_llama2c_sampler s;
    mygpt_error err = {0};
    cr_expect_eq(mygpt_llama2c_sampler_init(&s, 1, 1.0f, 0.9f, 1, &err), MYGPT_EINVAL);
    cr_expect_eq(mygpt_llama2c_sampler_init(&s, 512, -0.5f, 0.9f, 1, &err), MYGPT_EINVAL);
    cr_expect_str_eq(err.message, "temperature -0.5 is not a finite number >= 0");
    cr_expect_eq(mygpt_llama2c_sampler_init(&s, 512, NAN, 0.9f, 1, &err), MYGPT_EINVAL);
    cr_expect_eq(mygpt_llama2c_sampler_init(&s, 512, INFINITY, 0.9f, 1, &err), MYGPT_EINVAL);
    cr_expect_eq(mygpt_llama2c_sampler_init(&s, 512, 1.0f, 1.5f, 1, &err), MYGPT_EINVAL);
    cr_expect_str_eq(err.message, "top-p 1.5 is outside [0, 1]");
    cr_expect_eq(mygpt_llama2c_sampler_init(&s, 512, 1.0f, NAN, 1, &err), MYGPT_EINVAL);
    cr_expect_eq(mygpt_llama2c_sampler_init(&s, 512, 1.0f, 0.9f, 0, &err), MYGPT_EINVAL);
    cr_expect_null(s.candidates);
    // uniform over 512 with top-p 0.001: the cut-off 0.999 / 511 is above every 1 / 512
    cr_assert_eq(mygpt_llama2c_sampler_init(&s, 512, 1.0f, 0.001f, 42, &err), MYGPT_OK, "%s", err.message);
    float logits[512] = {0};
    int next = 7;
    cr_expect_eq(mygpt_llama2c_sample(&s, logits, &next, &err), MYGPT_ERANGE);
    cr_expect(strstr(err.message, "cut-off"), "%s", err.message);
    mygpt_llama2c_sampler_free(&s);
}

/* Logits whose largest quotient by the temperature overflows float32 leave NaN
 * probabilities, from every token or from the nucleus: an error naming the temperature,
 * never a token drawn from them (run.c's multinomial would give the last id). A quotient
 * of -inf alone is a probability of 0, as in run.c. */
Test(llama2c_sampler, logits_the_temperature_overflows_are_an_error)
{
    mygpt_llama2c_sampler s;
    mygpt_error err = {0};
    const float topps[] = {1.0f, 0.9f};
    for (int k = 0; k < 2; k++) {
        cr_assert_eq(mygpt_llama2c_sampler_init(&s, 4, 1e-30f, topps[k], 42, &err), MYGPT_OK, "%s", err.message);
        float logits[4] = {1e10f, 2.0f, 3e9f, -1.0f};
        int next = -1;
        cr_expect_eq(mygpt_llama2c_sample(&s, logits, &next, &err), MYGPT_ERANGE, "top-p %g: token %d", topps[k],
                     next);
        cr_expect(strstr(err.message, "divided by temperature 1e-30 overflow float32"), "%s", err.message);
        float low[4] = {-1e10f, 2.0f, 1.0f, 1.5f}; // -inf, then finite quotients
        cr_expect_eq(mygpt_llama2c_sample(&s, low, &next, &err), MYGPT_OK, "%s", err.message);
        cr_expect_eq(next, 1);
        mygpt_llama2c_sampler_free(&s);
    }
}
