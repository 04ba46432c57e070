/*
 * 404_book_layernorm - the book's chapter 4 (4.2): the book's LayerNorm(emb_dim=6)
 * (scale 1, shift 0, eps 1e-5) on chapter 402's layer outputs, and the means and biased
 * variances of its output rows, printed without scientific notation as the notebook is
 * still set to.
 */
#include <stdio.h>

#include "book_gpt.h"

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "404_book_layernorm",
                 "The book's chapter 4, section 4.2: LayerNorm(emb_dim=6) on the layer outputs of\n"
                 "chapter 402, and its rows' means and variances (unbiased=False).",
                 123, CH_SEED);
    float out[BOOK_ROWS * BOOK_OUT], out_ln[BOOK_ROWS * BOOK_OUT], mean[BOOK_ROWS], var[BOOK_ROWS];
    float scale[BOOK_OUT], shift[BOOK_OUT];
    for (int i = 0; i < BOOK_OUT; i++) { // nn.Parameter(torch.ones(emb_dim)), torch.zeros(emb_dim)
        scale[i] = 1.0f;
        shift[i] = 0.0f;
    }
    book_layer_outputs(&ch, ch.seed, out);
    mygpt_book_layernorm(out_ln, out, scale, shift, BOOK_ROWS, BOOK_OUT); // out_ln = ln(out)
    book_row_stats(out_ln, mean, var, 0);
    const int64_t col[2] = {BOOK_ROWS, 1};
    book_print_t("Mean:\n", mean, 2, col, "MeanBackward1", 1);
    book_print_t("Variance:\n", var, 2, col, "VarBackward0", 1);
    return 0;
}
