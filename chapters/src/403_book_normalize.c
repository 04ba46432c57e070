/*
 * 403_book_normalize - the book's chapter 4 (4.2): chapter 402's layer outputs
 * normalized by hand, (out - mean) / torch.sqrt(var), their means (about 0) and
 * variances (1), then the same printed with torch.set_printoptions(sci_mode=False).
 */
#include <math.h>
#include <stdio.h>

#include "book_gpt.h"

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "403_book_normalize",
                 "The book's chapter 4, section 4.2: the layer outputs of chapter 402 normalized to\n"
                 "mean 0 and variance 1, their means and variances, then printed without\n"
                 "scientific notation.",
                 123, CH_SEED);
    float out[BOOK_ROWS * BOOK_OUT], out_norm[BOOK_ROWS * BOOK_OUT], mean[BOOK_ROWS], var[BOOK_ROWS];
    book_layer_outputs(&ch, ch.seed, out);
    book_row_stats(out, mean, var, 1);
    // lesson: normalize
    for (int r = 0; r < BOOK_ROWS; r++) // out_norm = (out - mean) / torch.sqrt(var)
        for (int i = 0; i < BOOK_OUT; i++)
            out_norm[r * BOOK_OUT + i] = (out[r * BOOK_OUT + i] - mean[r]) / sqrtf(var[r]);
    // end lesson: normalize
    book_print_t("Normalized layer outputs:\n", out_norm, 2, (int64_t[]){BOOK_ROWS, BOOK_OUT}, "DivBackward0", 0);
    book_row_stats(out_norm, mean, var, 1);
    const int64_t col[2] = {BOOK_ROWS, 1};
    for (int sci_off = 0; sci_off <= 1; sci_off++) { // then torch.set_printoptions(sci_mode=False)
        book_print_t("Mean:\n", mean, 2, col, "MeanBackward1", sci_off);
        book_print_t("Variance:\n", var, 2, col, "VarBackward0", sci_off);
    }
    return 0;
}
