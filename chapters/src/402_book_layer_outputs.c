/*
 * 402_book_layer_outputs - the book's chapter 4 (4.2 Normalizing activations with layer
 * normalization): two examples of five features from torch.randn after
 * torch.manual_seed(123) through nn.Linear(5, 6) and nn.ReLU(), then each row's mean
 * and variance.
 */
#include <stdio.h>

#include "book_gpt.h"

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "402_book_layer_outputs",
                 "The book's chapter 4, section 4.2: nn.Sequential(nn.Linear(5, 6), nn.ReLU()) on\n"
                 "torch.randn(2, 5) after torch.manual_seed(123), and its outputs' means and\n"
                 "variances.",
                 123, CH_SEED);
    float out[BOOK_ROWS * BOOK_OUT], mean[BOOK_ROWS], var[BOOK_ROWS];
    book_layer_outputs(&ch, ch.seed, out);
    book_print_t(NULL, out, 2, (int64_t[]){BOOK_ROWS, BOOK_OUT}, "ReluBackward0", 0);
    book_row_stats(out, mean, var, 1);
    const int64_t col[2] = {BOOK_ROWS, 1};
    book_print_t("Mean:\n", mean, 2, col, "MeanBackward1", 0);
    book_print_t("Variance:\n", var, 2, col, "VarBackward0", 0);
    return 0;
}
