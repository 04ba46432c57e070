/*
 * 405_book_feedforward - the book's chapter 4 (4.3 Implementing a feed forward network
 * with GELU activations): the figure of GELU and ReLU on torch.linspace(-3, 3, 100)
 * (FIGURES/gelu_relu.svg; the notebook shows it and prints nothing), GPT_CONFIG_124M's
 * embedding size, and the shape of
 * FeedForward(GPT_CONFIG_124M) on torch.rand(2, 3, 768): the input's (the network widens
 * each token to 3072 and narrows it back). The generator goes on from chapter 402's
 * draws, as the notebook runs on; no drawn value is printed.
 */
#include <stdio.h>
#include <stdlib.h>

#include "book_gpt.h"

/* plt.plot of GELU()(x) and nn.ReLU()(x) for x = torch.linspace(-3, 3, 100), side by side */
static void gelu_figure(const chapter *ch)
{
    enum { N = 100 };
    float x[N], y[2][N];
    const float step = (3.0f - -3.0f) / (N - 1); // linspace: from each end towards the middle
    for (int i = 0; i < N; i++)
        x[i] = i < N / 2 ? -3.0f + step * (float)i : 3.0f - step * (float)(N - 1 - i);
    mygpt_gelu_tanh_forward(y[0], x, N);
    for (int i = 0; i < N; i++)
        y[1][i] = x[i] > 0.0f ? x[i] : 0.0f;
    mygpt_svg fig;
    mygpt_svg_begin(&fig, 800, 300);
    const char *titles[2] = {"GELU activation function", "ReLU activation function"};
    const char *ylabels[2] = {"GELU(x)", "ReLU(x)"};
    for (int k = 0; k < 2; k++) {
        const mygpt_svg_series series = {.y = y[k], .x = x, .n = N, .label = k ? "ReLU" : "GELU"};
        const mygpt_svg_panel panel = {60 + 400 * k, 40, 300, 200, titles[k], "x", ylabels[k]};
        mygpt_svg_line_plot(&fig, &panel, &series, 1, -0.5, 3.0);
    }
    chapter_save_figure(ch, &fig, "gelu_relu.svg");
}

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "405_book_feedforward",
                 "The book's chapter 4, section 4.3: emb_dim, and the output shape of\n"
                 "FeedForward(GPT_CONFIG_124M) on torch.rand(2, 3, 768); writes the GELU and ReLU\n"
                 "figure to FIGURES/gelu_relu.svg (800 x 300, figsize=(8, 3) at 100 dpi).",
                 0, CH_FIGURES);
    gelu_figure(&ch);
    enum { EMB_DIM = 768, B = 2, T = 3 };
    printf("%d\n", EMB_DIM); // print(GPT_CONFIG_124M["emb_dim"])
    mygpt_rng rng = {0};
    mygpt_rng_seed(&rng, 123); // torch.manual_seed(123) of 4.2: randn(2, 5), nn.Linear(5, 6)
    mygpt_error err = {0};
    float example[BOOK_ROWS * BOOK_IN], w[BOOK_OUT * BOOK_IN], bias[BOOK_OUT];
    chapter_check(&ch, mygpt_normal_(&rng, example, BOOK_ROWS * BOOK_IN, 0.0, 1.0, &err), &err);
    chapter_check(&ch, mygpt_init_linear(&rng, w, bias, BOOK_IN, BOOK_OUT, &err), &err);
    float *w1, *b1, *w2, *b2; // ffn = FeedForward(GPT_CONFIG_124M)
    book_linear_new(&ch, &rng, EMB_DIM, 4 * EMB_DIM, &w1, &b1);
    book_linear_new(&ch, &rng, 4 * EMB_DIM, EMB_DIM, &w2, &b2);
    const mygpt_book_ff ff = {EMB_DIM, w1, b1, w2, b2};
    float *x = chapter_alloc(&ch, B * T * EMB_DIM, sizeof(float));
    float *out = chapter_alloc(&ch, B * T * EMB_DIM, sizeof(float));
    chapter_check(&ch, mygpt_uniform_(&rng, x, B * T * EMB_DIM, 0.0, 1.0, &err), &err); // torch.rand(2, 3, 768)
    chapter_check(&ch, mygpt_book_feedforward(out, x, &ff, B * T, &err), &err);
    ch_size(3, (int64_t[]){B, T, ff.C}); // out.shape: (B, T) rows of C
    printf("\n");
    float *owned[] = {w1, b1, w2, b2, x, out};
    for (size_t i = 0; i < sizeof owned / sizeof owned[0]; i++)
        free(owned[i]);
    return 0;
}
