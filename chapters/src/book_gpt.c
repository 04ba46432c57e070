/*
 * book_gpt.c - the book's chapter-4 helpers (book_gpt.h).
 */
#include "book_gpt.h"

#include <stdio.h>
#include <stdlib.h>

void book_layer_outputs(const chapter *ch, uint64_t seed, float out[BOOK_ROWS * BOOK_OUT])
{
    mygpt_rng rng = {0};
    mygpt_rng_seed(&rng, seed);
    mygpt_error err = {0};
    float batch_example[BOOK_ROWS * BOOK_IN], weight[BOOK_OUT * BOOK_IN], bias[BOOK_OUT];
    chapter_check(ch, mygpt_normal_(&rng, batch_example, BOOK_ROWS * BOOK_IN, 0.0, 1.0, &err), &err);
    chapter_check(ch, mygpt_init_linear(&rng, weight, bias, BOOK_IN, BOOK_OUT, &err), &err);
    // nn.Linear(5, 6): the library's product, a fused multiply-add a step as PyTorch's BLAS
    chapter_check(ch, mygpt_matmul(out, batch_example, weight, bias, BOOK_ROWS, BOOK_IN, BOOK_OUT, &err), &err);
    for (int i = 0; i < BOOK_ROWS * BOOK_OUT; i++) // nn.ReLU()
        out[i] = out[i] > 0.0f ? out[i] : 0.0f;
}

void book_row_stats(const float *x, float *mean, float *var, int unbiased)
{
    for (int r = 0; r < BOOK_ROWS; r++) { // x.mean(dim=-1, keepdim=True), x.var(dim=-1, ...)
        mean[r] = mygpt_mean_torch(x + r * BOOK_OUT, BOOK_OUT);
        var[r] = mygpt_var_torch(x + r * BOOK_OUT, BOOK_OUT, unbiased);
    }
}

void book_print_t(const char *title, const float *data, int ndim, const int64_t *shape, const char *grad_fn,
                  int sci_off)
{
    mygpt_tview v;
    mygpt_strbuf sb = {0};
    const mygpt_torch_opts opts = {.grad_fn = grad_fn, .sci_off = sci_off};
    if (mygpt_tview_make(&v, MYGPT_F32, data, ndim, shape, NULL) == MYGPT_OK)
        mygpt_torch_repr(&sb, &v, &opts);
    if (title)
        printf("%s ", title);
    printf("%s\n", mygpt_sb_str(&sb));
    mygpt_sb_free(&sb);
}

void book_linear_new(const chapter *ch, mygpt_rng *rng, int in, int out, float **weight, float **bias)
{
    *weight = chapter_alloc(ch, (size_t)in * out, sizeof(float));
    if (bias)
        *bias = chapter_alloc(ch, (size_t)out, sizeof(float));
    mygpt_error err = {0};
    chapter_check(ch, mygpt_init_linear(rng, *weight, bias ? *bias : NULL, (size_t)in, (size_t)out, &err), &err);
}

void book_block_init(const chapter *ch, mygpt_rng *rng, book_block *b, int C, int heads, double drop_rate)
{
    // MultiHeadAttention: W_query, W_key, W_value (qkv_bias=False), out_proj with its bias
    for (int i = 0; i < 3; i++)
        book_linear_new(ch, rng, C, C, &b->att_w[i], NULL);
    book_linear_new(ch, rng, C, C, &b->att_w[3], &b->att_out_b);
    book_linear_new(ch, rng, C, 4 * C, &b->ff_w1, &b->ff_b1); // FeedForward
    book_linear_new(ch, rng, 4 * C, C, &b->ff_w2, &b->ff_b2);
    b->scale = chapter_alloc(ch, (size_t)C, sizeof(float));
    b->shift = chapter_alloc(ch, (size_t)C, sizeof(float)); // torch.zeros
    for (int i = 0; i < C; i++)
        b->scale[i] = 1.0f; // torch.ones
    b->blk = (mygpt_book_block){
        .norm1_scale = b->scale, .norm1_shift = b->shift, .norm2_scale = b->scale, .norm2_shift = b->shift,
        .att = {.d_in = C, .d_out = C, .num_heads = heads, .causal = 1, .dropout = drop_rate,
                .W_query = b->att_w[0], .W_key = b->att_w[1], .W_value = b->att_w[2],
                .out_proj_w = b->att_w[3], .out_proj_b = b->att_out_b},
        .ff = {C, b->ff_w1, b->ff_b1, b->ff_w2, b->ff_b2},
        .drop_shortcut = drop_rate};
}

void book_block_free(book_block *b)
{
    float *owned[] = {b->att_w[0], b->att_w[1], b->att_w[2], b->att_w[3], b->att_out_b, b->ff_w1,
                      b->ff_b1, b->ff_w2, b->ff_b2, b->scale, b->shift};
    for (size_t i = 0; i < sizeof owned / sizeof owned[0]; i++)
        free(owned[i]);
}
