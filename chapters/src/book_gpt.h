/*
 * book_gpt.h - what the book's chapter-4 programs (4xx) share: the layer outputs of
 * section 4.2 that the LayerNorm cells go on with, and printing as
 * print("Mean:\n", t) does under torch.set_printoptions(sci_mode=...).
 */
#ifndef MYGPT_BOOK_GPT_H
#define MYGPT_BOOK_GPT_H

#include "chapter.h"

/* torch.manual_seed(seed); batch_example = torch.randn(2, 5);
 * out = nn.Sequential(nn.Linear(5, 6), nn.ReLU())(batch_example): out (2, 6). */
enum { BOOK_ROWS = 2, BOOK_IN = 5, BOOK_OUT = 6 };
void book_layer_outputs(const chapter *ch, uint64_t seed, float out[BOOK_ROWS * BOOK_OUT]);

/* Each row's mean and variance (unbiased as asked), (2, 1) each. */
void book_row_stats(const float *x, float *mean, float *var, int unbiased);

/* print(title, t) with grad_fn, in fixed notation when sci_off
 * (torch.set_printoptions(sci_mode=False)); title NULL prints the tensor alone. */
void book_print_t(const char *title, const float *data, int ndim, const int64_t *shape, const char *grad_fn,
                  int sci_off);

#endif
