/*
 * book_attention.h - what the book's chapter-3 programs (3xx) share: the six-word input
 * "Your journey starts with one step" as 3-d embeddings, the modules' weights drawn as
 * PyTorch draws them, and printing a tensor with a prefix as print("...", t) does.
 */
#ifndef MYGPT_BOOK_ATTENTION_H
#define MYGPT_BOOK_ATTENTION_H

#include "chapter.h"

/* inputs = torch.tensor([[0.43, 0.15, 0.89], ...]): one row per word, (6, 3) */
enum { BOOK_TOKENS = 6, BOOK_D_IN = 3, BOOK_D_OUT = 2 };
extern const float BOOK_INPUTS[BOOK_TOKENS * BOOK_D_IN];

/* nn.Parameter(torch.rand(rows, cols)): rows x cols uniform draws from rng. */
void book_rand(const chapter *ch, mygpt_rng *rng, float *w, int rows, int cols);

/* nn.Linear(in, out, bias): weight (out, in), then bias (out) when bias is not NULL. */
void book_linear(const chapter *ch, mygpt_rng *rng, float *weight, float *bias, int in, int out);

/* The weights of one attention module as the book builds them: W_query, W_key, W_value
 * (nn.Linear(d_in, d_out, bias=False) each, drawn in that order), then out_proj
 * (nn.Linear(d_out, d_out)) for MultiHeadAttention. */
typedef struct book_module {
    float W_query[BOOK_D_IN * 4], W_key[BOOK_D_IN * 4], W_value[BOOK_D_IN * 4]; /* d_out <= 4 */
    float out_w[4 * 4], out_b[4];
    mygpt_mha m;
} book_module;

/* Draws the weights of a module with d_out outputs and num_heads heads (out_proj when
 * with_proj), causal or not, and its dropout rate. */
void book_module_init(const chapter *ch, mygpt_rng *rng, book_module *bm, int d_out, int num_heads,
                      int with_proj);

/* print(prefix, t) for a float tensor; prefix NULL prints the tensor alone. */
void book_print(const char *prefix, const float *data, int ndim, const int64_t *shape, const char *grad_fn);

#endif
