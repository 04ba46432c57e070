/*
 * book_attention.c - the book's chapter-3 helpers (book_attention.h).
 */
#include "book_attention.h"

#include <stdio.h>
#include <string.h>

const float BOOK_INPUTS[BOOK_TOKENS * BOOK_D_IN] = {
    0.43f, 0.15f, 0.89f, // Your     (x^1)
    0.55f, 0.87f, 0.66f, // journey  (x^2)
    0.57f, 0.85f, 0.64f, // starts   (x^3)
    0.22f, 0.58f, 0.33f, // with     (x^4)
    0.77f, 0.25f, 0.10f, // one      (x^5)
    0.05f, 0.80f, 0.55f, // step     (x^6)
};

void book_rand(const chapter *ch, mygpt_rng *rng, float *w, int rows, int cols)
{
    mygpt_error err = {0};
    chapter_check(ch, mygpt_uniform_(rng, w, (size_t)rows * cols, 0.0, 1.0, &err), &err);
}

void book_linear(const chapter *ch, mygpt_rng *rng, float *weight, float *bias, int in, int out)
{
    mygpt_error err = {0};
    chapter_check(ch, mygpt_init_linear(rng, weight, bias, (size_t)in, (size_t)out, &err), &err);
}

void book_module_init(const chapter *ch, mygpt_rng *rng, book_module *bm, int d_out, int num_heads,
                      int with_proj)
{
    book_linear(ch, rng, bm->W_query, NULL, BOOK_D_IN, d_out);
    book_linear(ch, rng, bm->W_key, NULL, BOOK_D_IN, d_out);
    book_linear(ch, rng, bm->W_value, NULL, BOOK_D_IN, d_out);
    if (with_proj)
        book_linear(ch, rng, bm->out_w, bm->out_b, d_out, d_out);
    bm->m = (mygpt_mha){.d_in = BOOK_D_IN, .d_out = d_out, .num_heads = num_heads, .causal = 1,
                        .W_query = bm->W_query, .W_key = bm->W_key, .W_value = bm->W_value,
                        .out_proj_w = with_proj ? bm->out_w : NULL, .out_proj_b = with_proj ? bm->out_b : NULL};
}

void book_query_scores(float scores[BOOK_TOKENS])
{
    mygpt_matmul_naive(scores, BOOK_INPUTS + BOOK_D_IN, BOOK_INPUTS, NULL, 1, BOOK_D_IN, BOOK_TOKENS);
}

void book_rand_qkv(const chapter *ch, mygpt_rng *rng, float *W_query, float *W_key, float *W_value)
{
    book_rand(ch, rng, W_query, BOOK_D_IN, BOOK_D_OUT);
    book_rand(ch, rng, W_key, BOOK_D_IN, BOOK_D_OUT);
    book_rand(ch, rng, W_value, BOOK_D_IN, BOOK_D_OUT);
}

void book_batch(float batch[BOOK_BATCH * BOOK_TOKENS * BOOK_D_IN])
{
    for (int b = 0; b < BOOK_BATCH; b++)
        memcpy(batch + b * BOOK_TOKENS * BOOK_D_IN, BOOK_INPUTS, sizeof BOOK_INPUTS);
}

void book_module_run(const chapter *ch, const book_module *bm, const float *x, int B, int T, mygpt_rng *rng,
                     mygpt_mha_steps *s)
{
    mygpt_error err = {0};
    chapter_check(ch, mygpt_mha_steps_init(s, &bm->m, B, T, &err), &err);
    chapter_check(ch, mygpt_mha_forward(s, &bm->m, x, rng, &err), &err);
}

void book_print_context(const float *context_vecs, int B, int T, int d, const char *grad_fn)
{
    const int64_t shape[3] = {B, T, d};
    book_print(NULL, context_vecs, 3, shape, grad_fn);
    printf("context_vecs.shape: ");
    ch_size(3, shape);
    printf("\n");
}

void book_print(const char *prefix, const float *data, int ndim, const int64_t *shape, const char *grad_fn)
{
    if (prefix)
        printf("%s ", prefix);
    ch_torch(data, ndim, shape, grad_fn);
    printf("\n");
}
