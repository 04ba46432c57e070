/*
 * test_sample.c - softmax, torch.multinomial (both modes), the top-k / temperature /
 * top-p sampler and DataLoader(shuffle=True) orders against PyTorch 1.13
 * (tests/golden/sampling.txt from tools/gen_train_goldens.py).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "golden.h"
#include "mygpt/sample.h"
#include "mygpt/data.h"
#include "mygpt/tokenizer.h"

static size_t count_words(const char *s)
{
    size_t n = 0;
    for (const char *p = s; *p; p++)
        n += *p != ' ' && (p == s || p[-1] == ' ');
    return n;
}

Test(sample, softmax_multinomial_sampler_and_loader_orders_are_pytorchs)
{
    FILE *f = golden_open("sampling.txt");
    cr_assert_not_null(f);
    char *line = NULL;
    size_t cap = 0;
    long lineno = 0;
    char kind[16] = "";
    unsigned long long seed = 0;
    int repl = 0, top_k = 0, draws = 0, batch = 0, epochs = 0, vals = 0, epoch = 0;
    double temp = 0, top_p = 0;
    size_t V = 0, nwin = 0;
    float *x = NULL;
    int counts[4] = {0};
    mygpt_rng rng = {0};
    mygpt_dataloader dl = {0};
    int64_t *stream = NULL;
    while (golden_next_line(f, &line, &cap, &lineno) >= 0) {
        if (sscanf(line, "softmax %zu", &V) == 1) {
            strcpy(kind, "softmax");
        } else if (sscanf(line, "multinomial %llu %d %zu %d", &seed, &repl, &V, &draws) == 4) {
            strcpy(kind, "multinomial");
        } else if (sscanf(line, "sampler %llu %lf %d %lf %zu %d", &seed, &temp, &top_k, &top_p, &V,
                          &draws) == 6) {
            strcpy(kind, "sampler");
        } else if (sscanf(line, "loader %llu %zu %d %d %d", &seed, &nwin, &batch, &epochs, &vals) == 5) {
            strcpy(kind, "loader");
            mygpt_rng_seed(&rng, seed);
            free(stream);
            stream = calloc(nwin + 1, sizeof *stream); // windows of 1 token, stride 1
            cr_assert_eq(mygpt_dataloader_init(&dl, stream, nwin + 1, (size_t)batch, 1, 1, NULL), MYGPT_OK);
            cr_assert_eq(dl.num_windows, nwin);
            epoch = 0;
        } else if (strncmp(line, "logits ", 7) == 0 || (strncmp(line, "probs ", 6) == 0 && !x)) {
            const char *p = strchr(line, ' ') + 1;
            x = malloc(V * sizeof *x);
            cr_assert_eq(golden_parse_f32(p, x, V), V);
        } else if (strncmp(line, "probs ", 6) == 0) { // softmax's expected output
            float *want = malloc(V * sizeof *want), *got = malloc(V * sizeof *got);
            cr_assert_eq(golden_parse_f32(line + 6, want, V), V);
            mygpt_softmax_torch(got, x, V);
            size_t diff = 0;
            for (size_t i = 0; i < V; i++)
                diff += memcmp(&got[i], &want[i], 4) != 0;
            cr_expect_eq(diff, 0, "softmax V=%zu: %zu values differ from PyTorch's bits", V, diff);
            counts[0]++;
            free(want); free(got); free(x);
            x = NULL;
        } else if (strncmp(line, "tokens ", 7) == 0) {
            cr_assert_eq(count_words(line + 7), (size_t)draws);
            int64_t *want = malloc((size_t)draws * sizeof *want);
            cr_assert_eq(golden_parse_i64(line + 7, want, (size_t)draws), (size_t)draws);
            mygpt_rng_seed(&rng, seed);
            float *logits = malloc(V * sizeof *logits), *scratch = malloc(V * sizeof *scratch);
            int first_diff = -1;
            for (int d = 0; d < draws; d++) {
                int64_t tok;
                mygpt_error err = {0};
                if (strcmp(kind, "multinomial") == 0) {
                    cr_assert_eq(mygpt_multinomial(&rng, x, V, repl, &tok, &err), MYGPT_OK, "%s", err.message);
                } else {
                    memcpy(logits, x, V * sizeof *x);
                    const mygpt_sampling s = {.temperature = temp, .top_k = top_k, .top_p = top_p};
                    cr_assert_eq(mygpt_sample_next(&rng, logits, V, &s, scratch, &tok, &err), MYGPT_OK,
                                 "%s", err.message);
                }
                if (tok != want[d] && first_diff < 0)
                    first_diff = d;
            }
            cr_expect_eq(first_diff, -1, "%s seed %llu V=%zu: token %d differs from PyTorch's", kind,
                         seed, V, first_diff);
            counts[strcmp(kind, "multinomial") == 0 ? 1 : 2]++;
            free(want); free(logits); free(scratch); free(x);
            x = NULL;
        } else if (strncmp(line, "order ", 6) == 0) {
            mygpt_error err = {0};
            cr_assert_eq(mygpt_dataloader_epoch(&dl, &rng, 1, &err), MYGPT_OK);
            const size_t n = dl.num_batches * (size_t)batch;
            int64_t *want = malloc(n * sizeof *want);
            cr_assert_eq(golden_parse_i64(line + 6, want, n), n);
            for (size_t i = 0; i < n; i++)
                cr_expect_eq(dl.order[i], want[i], "loader seed %llu epoch %d: window %zu", seed, epoch, i);
            free(want);
            for (int v = 0; v < vals; v++) { // iter(val_loader): draws its base seed only
                mygpt_dataloader val;
                cr_assert_eq(mygpt_dataloader_init(&val, stream, 6, 2, 1, 1, NULL), MYGPT_OK);
                cr_assert_eq(mygpt_dataloader_epoch(&val, &rng, 0, &err), MYGPT_OK);
            }
            epoch++;
            if (epoch == epochs) {
                mygpt_dataloader_free(&dl);
                counts[3]++;
            }
        }
    }
    free(line);
    free(stream);
    fclose(f);
    cr_expect_geq(counts[0], 8);
    cr_expect_geq(counts[1], 8);
    cr_expect_geq(counts[2], 12);
    cr_expect_eq(counts[3], 3);
}

Test(sample, bad_inputs_are_refused)
{
    float p[3] = {0.5f, -0.1f, 0.6f};
    int64_t tok;
    mygpt_rng r = {0};
    mygpt_error err = {0};
    cr_expect_eq(mygpt_multinomial(&r, p, 3, 0, &tok, &err), MYGPT_EINVAL);
    cr_expect(strstr(err.message, "element < 0") != NULL, "%s", err.message);
    float z[2] = {0, 0};
    cr_expect_eq(mygpt_multinomial(&r, z, 2, 1, &tok, &err), MYGPT_EINVAL);
    cr_expect_eq(mygpt_top_k_mask(p, 3, 0, &err), MYGPT_EINVAL);
    cr_expect_eq(mygpt_top_k_mask(p, 3, 4, &err), MYGPT_EINVAL);
    cr_expect_eq(mygpt_top_p_filter(p, 3, 1.5, &err), MYGPT_EINVAL);
    const mygpt_sampling s = {.temperature = -1};
    float l[3] = {1, 2, 3}, sc[3];
    cr_expect_eq(mygpt_sample_next(&r, l, 3, &s, sc, &tok, &err), MYGPT_EINVAL);
    // a draw without a generator (it crashed), a top_p below 0 or NaN (taken as off)
    const mygpt_sampling warm = {.temperature = 1}, below = {.temperature = 1, .top_p = -0.5},
                         nan_p = {.temperature = 1, .top_p = NAN};
    cr_expect_eq(mygpt_sample_next(NULL, l, 3, &warm, sc, &tok, &err), MYGPT_EINVAL);
    cr_expect(strstr(err.message, "none was given") != NULL, "%s", err.message);
    cr_expect_eq(mygpt_sample_next(&r, l, 3, &below, sc, &tok, &err), MYGPT_EINVAL);
    cr_expect_eq(mygpt_sample_next(&r, l, 3, &nan_p, sc, &tok, &err), MYGPT_EINVAL);
    cr_expect_eq(mygpt_argmax((const float[]){1, 3, 3, 2}, 4), 1, "first index on ties");
}

/* ---- generation ---------------------------------------------------------------------- */

#include "mygpt/generate.h"

/* The cached forward's logits are the full forward's bits, position after position. */
Test(generate, kv_cache_logits_are_the_full_forwards_bits)
{
    const mygpt_config cfg = {.vocab_size = 97, .embed_dim = 48, .num_heads = 3, .num_layers = 2,
                              .max_seq_len = 40};
    mygpt_gpt *g;
    mygpt_error err = {0};
    cr_assert_eq(mygpt_gpt_create(&g, &cfg, 4, &err), MYGPT_OK);
    int64_t ids[40];
    for (int i = 0; i < 40; i++)
        ids[i] = (i * 31 + 7) % 97;
    mygpt_kv_cache cache;
    cr_assert_eq(mygpt_kv_cache_init(&cache, g, &err), MYGPT_OK);
    cr_assert_eq(mygpt_gpt_forward_cached(g, &cache, ids, 13, &err), MYGPT_OK); // a prompt of 13
    for (int t = 13; t <= 40; t++) {
        cr_assert_eq(mygpt_gpt_forward(g, ids, 1, t, &err), MYGPT_OK);
        cr_expect(memcmp(cache.logits, g->acts.logits + (size_t)(t - 1) * 97, 97 * sizeof(float)) == 0,
                  "position %d: cached logits differ from the full forward's", t - 1);
        if (t < 40)
            cr_assert_eq(mygpt_gpt_forward_cached(g, &cache, ids + t, 1, &err), MYGPT_OK);
    }
    cr_expect_eq(mygpt_gpt_forward_cached(g, &cache, ids, 1, &err), MYGPT_ERANGE, "a full cache");
    mygpt_kv_cache_free(&cache);
    mygpt_kv_cache_free(&cache); // freed twice, or NULL: nothing
    mygpt_kv_cache_free(NULL);
    mygpt_kv_cache_reset(NULL);
    mygpt_gpt_free(g);
}

/* A cache not made, or made for a model of other sizes, is refused (they wrote past the
 * cache's memory) */
Test(generate, kv_cache_of_another_model_or_none_is_refused)
{
    const mygpt_config small = {.vocab_size = 16, .embed_dim = 8, .num_heads = 2, .num_layers = 1, .max_seq_len = 8},
                       big = {.vocab_size = 16, .embed_dim = 16, .num_heads = 2, .num_layers = 2, .max_seq_len = 32};
    mygpt_gpt *a, *b;
    mygpt_error err = {0};
    cr_assert_eq(mygpt_gpt_create(&a, &small, 1, &err), MYGPT_OK);
    cr_assert_eq(mygpt_gpt_create(&b, &big, 1, &err), MYGPT_OK);
    const int64_t ids[4] = {1, 2, 3, 4};
    mygpt_kv_cache cache, none = {0};
    cr_assert_eq(mygpt_kv_cache_init(&cache, a, &err), MYGPT_OK);
    cr_expect_eq(mygpt_gpt_forward_cached(b, &cache, ids, 4, &err), MYGPT_EINVAL);
    cr_expect_str_eq(err.message, "the KV cache was made for a model of other sizes");
    cr_expect_eq(mygpt_gpt_forward_cached(a, &none, ids, 1, &err), MYGPT_EINVAL);
    cr_expect_str_eq(err.message, "the KV cache was not made (mygpt_kv_cache_init)");
    cr_expect_eq(mygpt_gpt_forward_cached(a, &cache, ids, 4, &err), MYGPT_OK);
    mygpt_kv_cache_free(&cache);
    mygpt_gpt_free(a);
    mygpt_gpt_free(b);
}

/* The same with a model big enough for every parallel path (the matmul's team and
 * slabs, attention's (row, head) pairs), with the weights packed once, as
 * mygpt_generate packs them, and with the reference kernels, which every pass honours. */
Test(generate, kv_cache_with_packed_weights_gives_the_full_forwards_bits)
{
    const mygpt_config cfg = {.vocab_size = 3001, .embed_dim = 256, .num_heads = 4, .num_layers = 2,
                              .max_seq_len = 300};
    mygpt_gpt *g;
    mygpt_error err = {0};
    cr_assert_eq(mygpt_gpt_create(&g, &cfg, 5, &err), MYGPT_OK);
    const int T = 280;
    int64_t ids[280];
    for (int i = 0; i < T; i++)
        ids[i] = (i * 131 + 7) % 3001;
    for (int mode = 0; mode < 3; mode++) { // unpacked, packed, the reference kernels
        g->impl = mode == 2 ? MYGPT_IMPL_REFERENCE : MYGPT_IMPL_FAST;
        if (mode == 1)
            cr_assert_eq(mygpt_gpt_pack(g, &err), MYGPT_OK);
        cr_assert_eq(mygpt_gpt_forward(g, ids, 1, T, &err), MYGPT_OK);
        mygpt_kv_cache cache;
        cr_assert_eq(mygpt_kv_cache_init(&cache, g, &err), MYGPT_OK);
        cr_assert_eq(mygpt_gpt_forward_cached(g, &cache, ids, 200, &err), MYGPT_OK); // a long prompt
        for (int t = 200; t <= T; t++) {
            cr_expect(memcmp(cache.logits, g->acts.logits + (size_t)(t - 1) * 3001, 3001 * sizeof(float)) == 0,
                      "mode %d, position %d: cached logits differ from the full forward's", mode, t - 1);
            if (t < T)
                cr_assert_eq(mygpt_gpt_forward_cached(g, &cache, ids + t, 1, &err), MYGPT_OK);
        }
        mygpt_kv_cache_free(&cache);
        mygpt_gpt_unpack(g);
    }
    mygpt_gpt_free(g);
}

/* Generation with and without the cache gives the same tokens, also past max_seq_len
 * (where the window is recomputed), greedy and sampled. */
Test(generate, with_and_without_cache_the_same_tokens)
{
    const mygpt_config cfg = {.vocab_size = 50, .embed_dim = 32, .num_heads = 4, .num_layers = 2,
                              .max_seq_len = 16};
    mygpt_gpt *g;
    mygpt_error err = {0};
    cr_assert_eq(mygpt_gpt_create(&g, &cfg, 8, &err), MYGPT_OK);
    const int64_t prompt[5] = {1, 2, 3, 4, 5};
    const mygpt_sampling modes[3] = {{.temperature = 0}, {.temperature = 1.3, .top_k = 10},
                                     {.temperature = 0.9, .top_p = 0.8, .replacement = 1}};
    for (int m = 0; m < 3; m++) {
        int64_t a[40], b[40];
        int na, nb;
        mygpt_rng r1 = {0}, r2 = {0};
        mygpt_rng_seed(&r1, 123);
        mygpt_rng_seed(&r2, 123);
        const mygpt_generation cached = {.max_new = 30, .sampling = modes[m], .eos = -1, .use_cache = 1};
        const mygpt_generation whole = {.max_new = 30, .sampling = modes[m], .eos = -1, .use_cache = 0};
        cr_assert_eq(mygpt_generate(g, &r1, prompt, 5, &cached, a, &na, &err), MYGPT_OK, "%s", err.message);
        cr_assert_eq(mygpt_generate(g, &r2, prompt, 5, &whole, b, &nb, &err), MYGPT_OK, "%s", err.message);
        cr_expect_eq(na, 35);
        cr_expect_eq(nb, na);
        cr_expect(memcmp(a, b, (size_t)na * sizeof *a) == 0, "mode %d: tokens differ", m);
    }
    // an end token stops the loop before it is appended
    int64_t out[40];
    int n;
    mygpt_rng r = {0};
    mygpt_rng_seed(&r, 1);
    mygpt_generation gen = {.max_new = 30, .sampling = modes[0], .eos = -1, .use_cache = 1};
    cr_assert_eq(mygpt_generate(g, &r, prompt, 5, &gen, out, &n, &err), MYGPT_OK);
    const int64_t eos = out[7];
    int first = 5;
    while (out[first] != eos)
        first++;
    gen.eos = eos;
    cr_assert_eq(mygpt_generate(g, &r, prompt, 5, &gen, out, &n, &err), MYGPT_OK);
    cr_expect_eq(n, first, "stopped at %d, the end token first came at %d", n, first);
    mygpt_gpt_free(g);
}
