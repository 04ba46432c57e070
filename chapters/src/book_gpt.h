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

/* The weights of the book's TransformerBlock(cfg) of width C (owned). */
typedef struct book_block {
    float *att_w[4], *att_out_b; /* W_query, W_key, W_value, out_proj (C, C); out_proj's bias */
    float *ff_w1, *ff_b1, *ff_w2, *ff_b2;
    float *scale, *shift;        /* LayerNorm's ones and zeros, shared by norm1 and norm2 */
    mygpt_book_block blk;
} book_block;

/* Draws a block as TransformerBlock.__init__ does (att, then ff; the norms draw nothing). */
void book_block_init(const chapter *ch, mygpt_rng *rng, book_block *b, int C, int heads, double drop_rate);

/* nn.Linear(in, out)'s weight and bias drawn into new arrays. */
void book_linear_new(const chapter *ch, mygpt_rng *rng, int in, int out, float **weight, float **bias);

void book_block_free(book_block *b);

/* print(title, t) with grad_fn, in fixed notation when sci_off
 * (torch.set_printoptions(sci_mode=False)); title NULL prints the tensor alone. */
void book_print_t(const char *title, const float *data, int ndim, const int64_t *shape, const char *grad_fn,
                  int sci_off);

#endif
