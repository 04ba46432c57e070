/*
 * test_book.c - the library pieces of the book's chapters 2-4: re.split as Python splits,
 * the simple tokenizers V1 and V2 (vocabulary, encode, decode, their errors); attention
 * step by step (PyTorch's order of a row's sum, exp and softmax, the causal mask, one head
 * as its steps one by one, two heads as two halves of the channels, dropout, bad sizes);
 * the GPT's parts (a row's mean and variance, the book's LayerNorm, the shortcut network's
 * gradients against finite differences, FeedForward, the TransformerBlock's shortcuts).
 */
#include <criterion/criterion.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "golden.h"
#include "mygpt.h"

/* w holds exactly the n strings of want */
static void expect_words(const mygpt_words *w, const char *const *want, size_t n)
{
    cr_assert_eq(w->n, n, "%zu pieces, not %zu", w->n, n);
    for (size_t i = 0; i < n; i++)
        cr_expect_str_eq(w->items[i], want[i], "piece %zu", i);
}

Test(book, regex_split_keeps_separators_and_empty_pieces)
{
    // Python: re.split(r'([,.]|\s)', "Hi, yo.")
    const char *text = "Hi, yo.";
    const char *want[] = {"Hi", ",", "", " ", "yo", ".", ""};
    mygpt_words w;
    cr_assert_eq(mygpt_regex_split("([,.]|\\s)", text, strlen(text), 0, &w, NULL), MYGPT_OK);
    expect_words(&w, want, 7);
    mygpt_words_free(&w);
    // [item.strip() for item in result if item.strip()]
    const char *stripped[] = {"Hi", ",", "yo", "."};
    cr_assert_eq(mygpt_regex_split("([,.]|\\s)", text, strlen(text), 1, &w, NULL), MYGPT_OK);
    expect_words(&w, stripped, 4);
    mygpt_words_free(&w);
}

Test(book, regex_split_refuses_bad_patterns)
{
    mygpt_words w;
    mygpt_error err = {0};
    cr_expect_eq(mygpt_regex_split("(", "a", 1, 0, &w, &err), MYGPT_EINVAL);
    cr_expect(strstr(err.message, "does not compile") != NULL, "%s", err.message);
    cr_expect_eq(mygpt_regex_split("(x*)", "ab", 2, 0, &w, &err), MYGPT_EINVAL);
    cr_expect(strstr(err.message, "empty string") != NULL, "%s", err.message);
    cr_expect_eq(w.n, 0);
}

Test(book, simple_tokenizer_v1)
{
    const char *text = "the cat, the dog--a cat!";
    mygpt_simple_tokenizer tok;
    cr_assert_eq(mygpt_simple_tokenizer_init(&tok, text, strlen(text), 0, NULL), MYGPT_OK);
    // sorted(set(...)): punctuation sorts before letters
    const char *vocab[] = {"!", ",", "--", "a", "cat", "dog", "the"};
    expect_words(&tok.vocab, vocab, 7);
    cr_expect_eq(tok.unk, -1);
    int64_t *ids;
    size_t n;
    const char *line = "the dog, a cat!";
    cr_assert_eq(mygpt_simple_encode(&tok, line, strlen(line), &ids, &n, NULL), MYGPT_OK);
    const int64_t want[] = {6, 5, 1, 3, 4, 0};
    cr_assert_eq(n, 6);
    cr_expect_arr_eq(ids, want, sizeof want);
    char *back;
    cr_assert_eq(mygpt_simple_decode(&tok, ids, n, &back, NULL), MYGPT_OK);
    cr_expect_str_eq(back, "the dog, a cat!"); // no space before , and !
    free(back);
    free(ids);
    mygpt_error err = {0};
    cr_expect_eq(mygpt_simple_encode(&tok, "a bird", 6, &ids, &n, &err), MYGPT_ERANGE);
    cr_expect_str_eq(err.message, "KeyError: 'bird'");
    cr_expect_null(ids);
    const int64_t bad[1] = {7};
    cr_expect_eq(mygpt_simple_decode(&tok, bad, 1, &back, &err), MYGPT_ERANGE);
    mygpt_simple_tokenizer_free(&tok);
}

Test(book, simple_tokenizer_v2_maps_unknown_words)
{
    const char *text = "a b c";
    mygpt_simple_tokenizer tok;
    cr_assert_eq(mygpt_simple_tokenizer_init(&tok, text, strlen(text), 1, NULL), MYGPT_OK);
    cr_assert_eq(tok.vocab.n, 5);
    cr_expect_str_eq(tok.vocab.items[3], "<|endoftext|>");
    cr_expect_eq(tok.unk, 4);
    cr_expect_eq(mygpt_simple_id(&tok, "<|endoftext|>"), 3);
    const char *line = "a x <|endoftext|> c.";
    int64_t *ids;
    size_t n;
    cr_assert_eq(mygpt_simple_encode(&tok, line, strlen(line), &ids, &n, NULL), MYGPT_OK);
    const int64_t want[] = {0, 4, 3, 2, 4};
    cr_assert_eq(n, 5);
    cr_expect_arr_eq(ids, want, sizeof want);
    char *back;
    cr_assert_eq(mygpt_simple_decode(&tok, ids, n, &back, NULL), MYGPT_OK);
    cr_expect_str_eq(back, "a <|unk|> <|endoftext|> c <|unk|>");
    free(back);
    free(ids);
    mygpt_simple_tokenizer_free(&tok);
}

Test(book, sum_torch_adds_in_four_running_sums)
{
    // element 4 joins sum 0 (1e8 + 1 rounds to 1e8): ((1e8 - 1e8) + 1) + 1 = 2, where adding
    // in order gives 3
    const float x[5] = {1e8f, -1e8f, 1.0f, 1.0f, 1.0f};
    cr_expect_eq(mygpt_sum_torch(x, 5), 2.0f);
    // elements 4 and 5 both join sum 0: (1e8 + 0 - 1e8) + 1 = 1, where element 5 joining
    // sum 1 (1 - 1e8 rounds to -1e8) gives 0, and so does adding in order
    const float y[6] = {1e8f, 1.0f, 0.0f, 0.0f, 0.0f, -1e8f};
    cr_expect_eq(mygpt_sum_torch(y, 6), 1.0f);
    cr_expect_eq(mygpt_sum_torch(x, 0), 0.0f);
}

Test(book, exp_and_softmax_rows)
{
    float x[10], e[10], p[10];
    for (int i = 0; i < 10; i++)
        x[i] = -2.0f + 0.45f * (float)i;
    mygpt_exp_torch(e, x, 10);
    for (int i = 0; i < 10; i++)
        cr_expect_float_eq(e[i], expf(x[i]), 2e-7f * expf(x[i]), "exp(%g)", x[i]);
    mygpt_softmax_lastdim(p, x, 2, 5); // two rows of 5
    for (int r = 0; r < 2; r++) {
        float sum = 0.0f;
        for (int i = 0; i < 5; i++) {
            cr_expect(p[r * 5 + i] > 0.0f);
            sum += p[r * 5 + i];
        }
        cr_expect_float_eq(sum, 1.0f, 1e-6f, "row %d", r);
        for (int i = 1; i < 5; i++) // x grows along the row: so do its weights
            cr_expect(p[r * 5 + i] > p[r * 5 + i - 1]);
    }
    const float before = p[0];
    mygpt_softmax_lastdim(p, x, 2, -3); // rows of no value: nothing (it read out of bounds)
    mygpt_softmax_lastdim(p, x, 2, 0);
    cr_expect_eq(p[0], before);
}

/* parts[i] (sizes[i] floats each) drawn from U(-1, 1) in turn after seed */
static void fill_uniform(uint64_t seed, float *const *parts, const size_t *sizes, int n)
{
    mygpt_rng rng = {0};
    mygpt_rng_seed(&rng, seed);
    for (int i = 0; i < n; i++)
        cr_assert_eq(mygpt_uniform_(&rng, parts[i], sizes[i], -1.0, 1.0, NULL), MYGPT_OK);
}

/* a module of d_out = 4 over d_in = 3, weights from a seeded generator */
typedef struct test_module {
    float wq[12], wk[12], wv[12], wo[16], bo[4];
    mygpt_mha m;
} test_module;

static void test_module_init(test_module *t, int heads, int proj)
{
    float *parts[5] = {t->wq, t->wk, t->wv, t->wo, t->bo};
    const size_t sizes[5] = {12, 12, 12, 16, 4};
    fill_uniform(123, parts, sizes, 5);
    t->m = (mygpt_mha){.d_in = 3, .d_out = 4, .num_heads = heads, .causal = 1, .W_query = t->wq, .W_key = t->wk,
                       .W_value = t->wv, .out_proj_w = proj ? t->wo : NULL, .out_proj_b = proj ? t->bo : NULL};
}

static const float X[2 * 5 * 3] = {0.1f, 0.2f, 0.3f, -0.4f, 0.5f, 0.6f, 0.7f, -0.8f, 0.9f, 1.0f, 0.1f, -0.2f,
                                   0.3f, 0.3f, 0.3f, 0.5f, -0.1f, 0.2f, 0.0f, 0.4f, -0.6f, 0.2f, 0.2f, 0.9f,
                                   -0.3f, 0.8f, 0.1f, 0.6f, 0.6f, -0.5f};

/* out (M, N) = a (M, K) @ b (K, N), each product rounded, then added in order: torch.bmm's
 * own loop for matrices under 400 multiply-adds */
static void rounded_mm(float *out, const float *a, const float *b, int M, int K, int N)
{
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float sum = 0.0f;
            for (int k = 0; k < K; k++)
                sum += a[i * K + k] * b[k * N + j];
            out[i * N + j] = sum;
        }
}

/* One head over a batch of two, step by step as PyTorch takes them: the projections are
 * nn.Linear's (addmm: fused multiply-adds, mygpt_matmul's), the scores and the context
 * torch.bmm's of small matrices (rounded products); the same module over one matrix
 * (SelfAttention_v2's, unbatched) takes torch.mm's fused ones for both */
Test(book, one_head_is_the_steps_one_by_one)
{
    test_module t;
    test_module_init(&t, 1, 0);
    for (int unbatched = 0; unbatched < 2; unbatched++) {
        t.m.unbatched = unbatched;
        const int B = unbatched ? 1 : 2;
        mygpt_mha_steps s;
        cr_assert_eq(mygpt_mha_steps_init(&s, &t.m, B, 5, NULL), MYGPT_OK);
        cr_assert_eq(mygpt_mha_forward(&s, &t.m, X, NULL, NULL), MYGPT_OK);
        for (int b = 0; b < B; b++) {
            float q[20], k[20], v[20], vt[20], scores[25], w[25], ctx[20];
            cr_assert_eq(mygpt_matmul(q, X + b * 15, t.wq, NULL, 5, 3, 4, NULL), MYGPT_OK);
            cr_assert_eq(mygpt_matmul(k, X + b * 15, t.wk, NULL, 5, 3, 4, NULL), MYGPT_OK);
            cr_assert_eq(mygpt_matmul(v, X + b * 15, t.wv, NULL, 5, 3, 4, NULL), MYGPT_OK);
            if (unbatched)
                cr_assert_eq(mygpt_matmul(scores, q, k, NULL, 5, 4, 5, NULL), MYGPT_OK);
            else
                mygpt_matmul_naive(scores, q, k, NULL, 5, 4, 5);
            mygpt_causal_mask(scores, 1, 5);
            mygpt_attention_weights(w, scores, 5, 5, 4);
            for (int j = 0; j < 5; j++)
                for (int c = 0; c < 4; c++)
                    vt[c * 5 + j] = v[j * 4 + c];
            if (unbatched)
                cr_assert_eq(mygpt_matmul(ctx, w, vt, NULL, 5, 5, 4, NULL), MYGPT_OK);
            else
                rounded_mm(ctx, w, v, 5, 5, 4);
            cr_expect_arr_eq(s.scores + b * 25, scores, sizeof scores, "scores of sequence %d (%d)", b, unbatched);
            cr_expect_arr_eq(s.weights + b * 25, w, sizeof w, "weights of sequence %d (%d)", b, unbatched);
            cr_expect_arr_eq(s.out + b * 20, ctx, sizeof ctx, "context of sequence %d (%d)", b, unbatched);
            for (int i = 0; i < 5; i++) // the causal mask: nothing from a later position
                for (int j = i + 1; j < 5; j++)
                    cr_expect_eq(w[i * 5 + j], 0.0f);
        }
        mygpt_mha_steps_free(&s);
    }
}

Test(book, two_heads_are_two_halves)
{
    // MultiHeadAttention's heads are the channels of one projection split in two: head h
    // sees channels 2h, 2h + 1 of the queries, keys and values
    test_module t;
    test_module_init(&t, 2, 1);
    mygpt_mha_steps s;
    cr_assert_eq(mygpt_mha_steps_init(&s, &t.m, 2, 5, NULL), MYGPT_OK);
    cr_assert_eq(mygpt_mha_forward(&s, &t.m, X, NULL, NULL), MYGPT_OK);
    for (int b = 0; b < 2; b++)
        for (int h = 0; h < 2; h++) {
            float q[10], k[10], scores[25];
            for (int i = 0; i < 5; i++)
                for (int c = 0; c < 2; c++) {
                    q[i * 2 + c] = s.queries[(b * 5 + i) * 4 + h * 2 + c];
                    k[i * 2 + c] = s.keys[(b * 5 + i) * 4 + h * 2 + c];
                }
            mygpt_matmul_naive(scores, q, k, NULL, 5, 2, 5);
            mygpt_causal_mask(scores, 1, 5);
            cr_expect_arr_eq(s.scores + (b * 2 + h) * 25, scores, sizeof scores, "head %d of %d", h, b);
        }
    float out[40];
    cr_assert_eq(mygpt_matmul(out, s.context, t.wo, t.bo, 10, 4, 4, NULL), MYGPT_OK); // out_proj: nn.Linear
    cr_expect_arr_eq(s.out, out, sizeof out);
    mygpt_mha_steps_free(&s);
}

Test(book, attention_dropout_and_bad_sizes)
{
    test_module t;
    test_module_init(&t, 1, 0);
    t.m.dropout = 0.5;
    mygpt_mha_steps s, eval;
    cr_assert_eq(mygpt_mha_steps_init(&s, &t.m, 2, 5, NULL), MYGPT_OK);
    cr_assert_eq(mygpt_mha_steps_init(&eval, &t.m, 2, 5, NULL), MYGPT_OK);
    mygpt_rng rng = {0};
    mygpt_rng_seed(&rng, 123);
    cr_assert_eq(mygpt_mha_forward(&s, &t.m, X, &rng, NULL), MYGPT_OK);
    cr_assert_eq(mygpt_mha_forward(&eval, &t.m, X, NULL, NULL), MYGPT_OK);
    int dropped = 0;
    for (int i = 0; i < 50; i++) { // each weight dropped, or kept and doubled
        cr_expect(s.weights[i] == 0.0f || s.weights[i] == eval.weights[i] * 2.0f, "weight %d", i);
        dropped += s.weights[i] == 0.0f && eval.weights[i] != 0.0f;
    }
    cr_expect(dropped > 0);
    mygpt_mha_steps_free(&s);
    mygpt_mha_steps_free(&eval);
    mygpt_error err = {0};
    t.m.num_heads = 3;
    cr_expect_eq(mygpt_mha_steps_init(&s, &t.m, 2, 5, &err), MYGPT_EINVAL);
    cr_expect(strstr(err.message, "divisible") != NULL, "%s", err.message);
    cr_expect_null(s.out);
    t.m.num_heads = 2;
    t.m.dropout = NAN; // (taken as none)
    cr_expect_eq(mygpt_mha_steps_init(&s, &t.m, 2, 5, &err), MYGPT_EINVAL);
}

Test(book, mean_var_and_layernorm)
{
    const float x[6] = {1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 9.0f};
    cr_expect_eq(mygpt_mean_torch(x, 6), 4.0f);
    // squared deviations 9 + 4 + 1 + 0 + 1 + 25 = 40: 40 / 5 unbiased, 40 / 6 biased
    cr_expect_eq(mygpt_var_torch(x, 6, 1), 8.0f);
    cr_expect_eq(mygpt_var_torch(x, 6, 0), (float)(40.0 / 6.0));
    const float scale[6] = {1, 1, 1, 1, 1, 1}, shift[6] = {0};
    float y[12];
    mygpt_book_layernorm(y, x, scale, shift, 1, 6);
    cr_expect_float_eq(mygpt_mean_torch(y, 6), 0.0f, 1e-6f);
    cr_expect_float_eq(mygpt_var_torch(y, 6, 0), 1.0f, 1e-5f); // eps 1e-5 takes a little off
    const float shifted[6] = {1, 1, 1, 1, 1, 1};
    mygpt_book_layernorm(y + 6, x, scale, shifted, 1, 6);
    for (int i = 0; i < 6; i++)
        cr_expect_eq(y[6 + i], y[i] + 1.0f);
}

/* x = torch.randn(n) * scale + shift in float32 after torch.manual_seed(seed), into x;
 * the generator is left in rng for later draws */
static void draw_scaled(mygpt_rng *rng, unsigned long long seed, float *x, size_t n, double scale, double shift)
{
    mygpt_error err = {0};
    mygpt_rng_seed(rng, seed);
    cr_assert_eq(mygpt_normal_(rng, x, n, 0.0, 1.0, &err), MYGPT_OK, "%s", err.message);
    for (size_t i = 0; i < n; i++)
        x[i] = x[i] * (float)scale + (float)shift;
}

/* torch.nn.LayerNorm's kernel, bit for bit against F.layer_norm on rows of 1 to 4100
 * values, small and large, offset or not, with and without a weight and bias */
Test(book, torch_layernorm_is_pytorchs_bits)
{
    golden_reader g = golden_reader_must_open("layernorm.txt");
    char *line;
    int cases = 0;
    while ((line = golden_read(&g))) {
        unsigned long long seed;
        int M, C, affine, used = 0;
        double scale, shift;
        cr_assert_eq(sscanf(line, "layernorm %llu %d %d %lf %lf %d : %n", &seed, &M, &C, &scale, &shift, &affine, &used),
                     6, "line %ld", g.lineno);
        const size_t n = (size_t)M * C;
        float *x = malloc((n + 2 * (size_t)C) * sizeof *x), *y = malloc(n * sizeof *y);
        cr_assert(x && y);
        float *w = x + n, *b = w + C;
        mygpt_rng rng = {0};
        mygpt_error err = {0};
        draw_scaled(&rng, seed, x, n, scale, shift); // torch.randn(M, C) * SCALE + SHIFT
        if (affine) {
            cr_assert_eq(mygpt_normal_(&rng, w, C, 0.0, 1.0, &err), MYGPT_OK);
            cr_assert_eq(mygpt_normal_(&rng, b, C, 0.0, 1.0, &err), MYGPT_OK);
        }
        mygpt_layernorm_torch(y, x, affine ? w : NULL, affine ? b : NULL, M, C, 1e-5f);
        const char *p = line + used;
        for (size_t i = 0; i < n; i++) {
            char hex[9];
            int len = 0;
            cr_assert_eq(sscanf(p, "%8s%n", hex, &len), 1, "line %ld: value %zu missing", g.lineno, i);
            p += len;
            const float want = golden_unhex32(hex);
            if (!golden_same_bits(y[i], want))
                cr_assert_fail("line %ld (C = %d): out[%zu] = %a, PyTorch %a", g.lineno, C, i, (double)y[i],
                               (double)want);
        }
        free(x);
        free(y);
        cases++;
    }
    cr_assert_geq(cases, 60);
}

/* x.sum(-1) and x.pow(2).mean(-1) bit for bit against PyTorch on rows of 1 to 300,000
 * values: its cascade of running sums, whatever the length */
Test(book, torch_sums_are_pytorchs_bits)
{
    golden_reader g = golden_reader_must_open("sums.txt");
    char *line;
    int cases = 0;
    while ((line = golden_read(&g))) {
        unsigned long long seed;
        size_t n;
        double scale, shift;
        char hex[4][9];
        cr_assert_eq(sscanf(line, "sum %llu %zu %lf %lf : %8s %8s %8s %8s", &seed, &n, &scale, &shift, hex[0], hex[1],
                            hex[2], hex[3]),
                     8, "line %ld", g.lineno);
        float *x = malloc(2 * n * sizeof *x);
        cr_assert(x);
        mygpt_rng rng = {0};
        draw_scaled(&rng, seed, x, 2 * n, scale, shift); // torch.randn(2, N) * SCALE + SHIFT
        for (int r = 0; r < 2; r++) {
            const float sum = mygpt_sum_torch(x + r * n, n), msq = mygpt_mean_sq_torch(x + r * n, n);
            cr_expect(golden_same_bits(sum, golden_unhex32(hex[r])), "line %ld (n = %zu): sum %a, PyTorch %a",
                      g.lineno, n, (double)sum, (double)golden_unhex32(hex[r]));
            cr_expect(golden_same_bits(msq, golden_unhex32(hex[2 + r])),
                      "line %ld (n = %zu): mean of squares %a, PyTorch %a", g.lineno, n, (double)msq,
                      (double)golden_unhex32(hex[2 + r]));
        }
        free(x);
        cases++;
    }
    cr_assert_geq(cases, 100);
}

/* the loss of net at x, for finite differences */
static double net_loss(mygpt_shortcut_net *net, const float *x)
{
    float loss;
    cr_assert_eq(mygpt_shortcut_net_grads(net, x, &loss, NULL), MYGPT_OK);
    return loss;
}

Test(book, shortcut_gradients_match_finite_differences)
{
    const int sizes[4] = {3, 3, 3, 1};
    const float x[3] = {1.0f, 0.0f, -1.0f};
    for (int use_shortcut = 0; use_shortcut <= 1; use_shortcut++) {
        mygpt_rng rng = {0};
        mygpt_rng_seed(&rng, 123);
        mygpt_shortcut_net net, probe;
        cr_assert_eq(mygpt_shortcut_net_init(&net, sizes, 3, use_shortcut, &rng, NULL), MYGPT_OK);
        float loss;
        cr_assert_eq(mygpt_shortcut_net_grads(&net, x, &loss, NULL), MYGPT_OK);
        for (int l = 0; l < 3; l++)
            for (int i = 0; i < sizes[l] * sizes[l + 1]; i++) {
                const float h = 1e-2f;
                probe = net;
                probe.weight[l][i] += h;
                const double up = net_loss(&probe, x);
                probe.weight[l][i] -= 2 * h;
                const double down = net_loss(&probe, x);
                const double fd = (up - down) / (2 * h);
                cr_expect(fabs(fd - net.dweight[l][i]) < 1e-3 + 1e-2 * fabs(fd), "layer %d weight %d: %g vs %g (%s)",
                          l, i, fd, net.dweight[l][i], use_shortcut ? "shortcuts" : "no shortcuts");
            }
    }
    mygpt_shortcut_net net;
    mygpt_rng rng = {0};
    mygpt_error err = {0};
    const int wide[2] = {3, 99};
    cr_expect_eq(mygpt_shortcut_net_init(&net, wide, 1, 0, &rng, &err), MYGPT_EINVAL);
}

Test(book, feedforward_and_block)
{
    enum { C = 4, H = 16, N = 3 };
    float w1[H * C], b1[H], w2[C * H], b2[C], x[N * C], out[N * C], hidden[N * H], want[N * C];
    float *parts[5] = {w1, b1, w2, b2, x};
    const size_t sizes[5] = {H * C, H, C * H, C, N * C};
    fill_uniform(7, parts, sizes, 5);
    const mygpt_book_ff ff = {C, w1, b1, w2, b2};
    cr_assert_eq(mygpt_book_feedforward(out, x, &ff, N, NULL), MYGPT_OK);
    mygpt_matmul_naive(hidden, x, w1, b1, N, C, H);
    mygpt_gelu_tanh_forward(hidden, hidden, N * H);
    mygpt_matmul_naive(want, hidden, w2, b2, N, H, C);
    for (int i = 0; i < N * C; i++)
        cr_expect_float_eq(out[i], want[i], 1e-5f, "output %d", i);
    // a block whose two branches end in zero weights is its input, shortcut by shortcut
    const float zeros[C * H] = {0}, ones[C] = {1, 1, 1, 1};
    const mygpt_book_block blk = {
        .norm1_scale = ones, .norm1_shift = zeros, .norm2_scale = ones, .norm2_shift = zeros,
        .att = {.d_in = C, .d_out = C, .num_heads = 2, .causal = 1, .W_query = w1, .W_key = w1 + C * C,
                .W_value = w1 + 2 * C * C, .out_proj_w = zeros, .out_proj_b = zeros},
        .ff = {C, w1, b1, zeros, zeros}};
    cr_assert_eq(mygpt_book_block_forward(out, x, &blk, 1, N, NULL, NULL), MYGPT_OK);
    cr_expect_arr_eq(out, x, sizeof x);
    // sizes that do not fit each other, or none: refused before anything is read
    mygpt_error err = {0};
    mygpt_book_block wide = blk;
    wide.ff.C = 2 * C; // (it read past the attention's rows)
    cr_expect_eq(mygpt_book_block_forward(out, x, &wide, 1, N, NULL, &err), MYGPT_EINVAL);
    cr_expect_eq(mygpt_book_block_forward(out, x, &blk, 0, N, NULL, &err), MYGPT_EINVAL);
    cr_expect_eq(mygpt_book_block_forward(out, x, &blk, 1, -1, NULL, &err), MYGPT_EINVAL);
    const mygpt_book_ff none = {0, w1, b1, w2, b2}, huge = {INT_MAX, w1, b1, w2, b2};
    cr_expect_eq(mygpt_book_feedforward(out, x, &none, N, &err), MYGPT_EINVAL);
    cr_expect_eq(mygpt_book_feedforward(out, x, &huge, N, &err), MYGPT_EINVAL);
    // attention tensors made for other sizes (it wrote past them)
    mygpt_mha_steps st;
    cr_assert_eq(mygpt_mha_steps_init(&st, &blk.att, 1, 2, &err), MYGPT_OK);
    mygpt_mha other = blk.att;
    other.d_out = 2 * C;
    cr_expect_eq(mygpt_mha_forward(&st, &other, x, NULL, &err), MYGPT_EINVAL);
    mygpt_mha_steps_free(&st);
    mygpt_mha_steps never = {0};
    cr_expect_eq(mygpt_mha_forward(&never, &blk.att, x, NULL, &err), MYGPT_EINVAL);
}
