/*
 * book_gpt.c - the book's chapter-4 helpers (book_gpt.h).
 */
#include "book_gpt.h"

#include <stdio.h>

void book_layer_outputs(const chapter *ch, uint64_t seed, float out[BOOK_ROWS * BOOK_OUT])
{
    mygpt_rng rng = {0};
    mygpt_rng_seed(&rng, seed);
    mygpt_error err = {0};
    float batch_example[BOOK_ROWS * BOOK_IN], weight[BOOK_OUT * BOOK_IN], bias[BOOK_OUT];
    chapter_check(ch, mygpt_normal_(&rng, batch_example, BOOK_ROWS * BOOK_IN, 0.0, 1.0, &err), &err);
    chapter_check(ch, mygpt_init_linear(&rng, weight, bias, BOOK_IN, BOOK_OUT, &err), &err);
    mygpt_matmul_naive(out, batch_example, weight, bias, BOOK_ROWS, BOOK_IN, BOOK_OUT);
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
