/*
 * book_attention.c - the book's chapter-3 helpers (book_attention.h).
 */
#include "book_attention.h"

#include <stdio.h>

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

void book_print(const char *prefix, const float *data, int ndim, const int64_t *shape, const char *grad_fn)
{
    if (prefix)
        printf("%s ", prefix);
    ch_torch(data, ndim, shape, grad_fn);
    printf("\n");
}
