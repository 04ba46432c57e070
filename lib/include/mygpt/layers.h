/*
 * mygpt/layers.h - each layer of the GPT, one function per direction (attention has
 * its own header, mygpt/attention.h, included here).
 *
 * Plain float32 arrays, row-major, shapes in the comments: B batch, T time
 * (sequence), C channels, OC output channels, NH heads, V vocabulary. Weights use
 * PyTorch's layout: an nn.Linear(in, out) weight is (out, in). C cannot check the
 * length of a buffer: each must hold the floats its comment says. What can be checked
 * is: the embedding checks ids against V and T against the position table; the arithmetic
 * kernels (LayerNorm, GELU, softmax) take sizes the caller validated (mygpt_gpt_forward
 * does) and never fail; the fast matmul can (MYGPT_ENOMEM, MYGPT_EINVAL: below).
 *
 * Determinism: every output element is computed by exactly one thread, always in
 * the same order, so results are bit-identical for any OMP_NUM_THREADS.
 */
#ifndef MYGPT_LAYERS_H
#define MYGPT_LAYERS_H

#include <stddef.h>
#include <stdint.h>

#include "mygpt/attention.h"
#include "mygpt/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* everything declared here is exported by libmygpt.so (lib/exports.txt) */
#pragma GCC visibility push(default)

/* The embedding's tables and their lengths: token rows wte (V, C), and position rows
 * wpe (max_pos, C) or NULL (no positions; then max_pos is unused). */
typedef struct mygpt_embedding_tables {
    const float *wte;
    int V;
    const float *wpe;
    int max_pos;
} mygpt_embedding_tables;

/* out[b,t,:] = wte[ids[b,t], :] + (wpe ? wpe[t, :] : 0), out (B, T, C), ids (B, T).
 * Checks what a wrong call would read out of bounds: an id outside [0, V) or T > max_pos
 * is MYGPT_ERANGE, a size below 1 MYGPT_EINVAL; then out is left untouched. */
mygpt_status mygpt_embedding_forward(float *out, const int64_t *ids, mygpt_embedding_tables tables, int B, int T,
                                     int C, mygpt_error *err);

/* The gradient of the embedding: dwte[ids[b,t]] += dout[b,t], dwpe[t] += sum over b of
 * dout[b,t] (dwpe may be NULL). dout (B, T, C), dwte (V, C), dwpe (maxT, C). The ids must
 * be the forward's (checked there). Accumulates, as autograd does. */
void mygpt_embedding_backward(float *dwte, float *dwpe, const float *dout, const int64_t *ids,
                              int B, int T, int C);

/* out = inp @ weight^T + bias, i.e. nn.Linear.
 * out (N, OC), inp (N, C), weight (OC, C), bias (OC) or NULL; N = B*T rows.
 * mygpt_matmul_naive is the textbook triple loop (lib/kernels/reference.c); it needs no
 * memory and cannot fail. mygpt_matmul is the fast kernel of lib/kernels/matmul.c (panels,
 * register tiles, fused multiply-adds): the same sums within float rounding, and the
 * same bits for any number of threads and on any x86-64 (with or without AVX2). It
 * packs one operand into a buffer of at most 8 MiB (plus, per thread, up to a unit of
 * 16 x 16 tiles, A's copied strips and rows): when
 * that allocation fails it returns MYGPT_ENOMEM (out untouched) rather than fall back
 * to another summation order. Negative sizes are MYGPT_EINVAL, and so are sizes whose
 * arithmetic would overflow (K or OC within 2^21 of INT_MAX, N x max(C, OC) floats past
 * SIZE_MAX bytes). */
void mygpt_matmul_naive(float *out, const float *inp, const float *weight, const float *bias,
                        size_t N, int C, int OC);
mygpt_status mygpt_matmul(float *out, const float *inp, const float *weight, const float *bias,
                          size_t N, int C, int OC, mygpt_error *err);

/* out = GELU(inp W^T + bias): mygpt_matmul with the exact GELU applied to each output
 * as it is stored (fc1 and its GELU in one pass; the same bits as GELU after mygpt_matmul). */
mygpt_status mygpt_matmul_gelu(float *out, const float *inp, const float *weight, const float *bias,
                               size_t N, int C, int OC, mygpt_error *err);

/* Where nn.Linear's gradients go: each may be NULL to skip it. */
typedef struct mygpt_linear_grads {
    float *dinp;    /* (N, C)  */
    float *dweight; /* (OC, C) */
    float *dbias;   /* (OC)    */
} mygpt_linear_grads;

/* nn.Linear's gradient, accumulated into d (each output may be NULL to skip it):
 *   dinp (N, C) += dout (N, OC) @ weight (OC, C)
 *   dweight (OC, C) += dout^T @ inp (N, C)      (the sum over the N rows)
 *   dbias (OC) += the column sums of dout
 * mygpt_matmul_backward runs both products through the fast kernel, reading dout
 * transposed and weight and inp k-major in place (no transposed copies; dinp's partial
 * sums need N x C floats when OC > 256, dweight's OC x C when N > 256: MYGPT_ENOMEM if
 * they cannot be had); the naive
 * version is the textbook loops. Both are the same bits for any number of threads. */
mygpt_status mygpt_matmul_backward(mygpt_linear_grads d, const float *dout, const float *inp,
                                   const float *weight, size_t N, int C, int OC, mygpt_error *err);
void mygpt_matmul_backward_naive(mygpt_linear_grads d, const float *dout, const float *inp,
                                 const float *weight, size_t N, int C, int OC);

/* LayerNorm over the last axis with biased variance and eps = 1e-5:
 * out = (x - mean) / sqrt(var + eps) * gamma + beta.  out, inp (N, C); gamma, beta (C);
 * beta NULL: a LayerNorm without a bias (nanoGPT's bias=False), nothing added */
void mygpt_layernorm_forward(float *out, const float *inp, const float *gamma, const float *beta,
                             size_t N, int C);

/* The same, keeping each row's mean and sqrt(var + eps) (N floats each) for the
 * backward pass; the outputs are the same bits as mygpt_layernorm_forward's. */
void mygpt_layernorm_forward_train(float *out, float *mean, float *denom, const float *inp,
                                   const float *gamma, const float *beta, size_t N, int C);

/* torch.nn.LayerNorm's (F.layer_norm's) forward as PyTorch 1.13 computes it on an x86 CPU
 * with AVX2, which is not the formula above in float: each row's mean and biased variance
 * by Welford's method in float over 8 lanes, chunks of 16 vectors merged pairwise, the rest
 * one by one; then rstd = 1 / sqrt(var + eps) and out = (x * rstd - rstd * mean) * gamma +
 * beta, each multiply-add fused. The same bits as PyTorch's (tests/golden/layernorm.txt).
 * out, inp (N, C); gamma, beta (C), NULL for none (ones, zeros). */
void mygpt_layernorm_torch(float *out, const float *inp, const float *gamma, const float *beta, size_t N,
                           int C, float eps);

/* What LayerNorm's backward reads of its forward (the tensors PyTorch saves; llm.c's
 * layernorm.py calls them the cache): the input, the weight, and each row's mean and
 * sqrt(var + eps) from mygpt_layernorm_forward_train. */
typedef struct mygpt_layernorm_saved {
    const float *inp;          // (N, C)
    const float *gamma;        // (C)
    const float *mean, *denom; // (N) each
} mygpt_layernorm_saved;

/* LayerNorm's gradient: dinp += d/dinp, dgamma += d/dgamma, dbeta += d/dbeta.
 * dinp, dout (N, C); dgamma, dbeta (C); dbeta NULL for a LayerNorm without a bias. */
void mygpt_layernorm_backward(float *dinp, float *dgamma, float *dbeta, const float *dout,
                              mygpt_layernorm_saved saved, size_t N, int C);

/* RMSNorm over the last axis (llama2.c's run.c and model.py): each row scaled by
 * r = 1 / sqrt(mean(x^2) + eps), out = (x * r) * weight, in float32; the mean of the
 * squares as x.pow(2).mean(-1) computes it (each square rounded to float, summed in
 * PyTorch's order: mygpt_mean_sq_torch). out, inp (N, C), weight (C); out may be inp. */
void mygpt_rmsnorm_forward(float *out, const float *inp, const float *weight, size_t N, int C, float eps);

/* RMSNorm's gradient (mygpt_rmsnorm_forward's of the same eps) from the input it
 * normalized: dinp += d/dinp, dweight += d/dweight (NULL: not computed). With
 * r = 1 / sqrt(mean(x^2) + eps): dx = r (dy w) - r^3 x sum(dy w x) / C, dw = sum over
 * rows of dy (x r); the sum over a row in double, dw's over the rows in float, row by
 * row. dinp, dout, inp (N, C). */
void mygpt_rmsnorm_backward(float *dinp, float *dweight, const float *dout, const float *inp, const float *weight,
                            size_t N, int C, float eps);

/* SwiGLU's product, model.py's F.silu(w1(x)) * w3(x): out = a * sigmoid(a) * b, elementwise
 * over n values, SiLU as run.c computes it (a * (1 / (1 + exp(-a)))). out may be a. */
void mygpt_swiglu_forward(float *out, const float *a, const float *b, size_t n);

/* SwiGLU's gradient from d out over n values: da = dout b silu'(a), db = dout silu(a)
 * (written, not added), silu'(a) = s (1 + a (1 - s)), s = sigmoid(a). da may be a, db dout. */
void mygpt_swiglu_backward(float *da, float *db, const float *dout, const float *a, const float *b, size_t n);

/* Exact GELU, 0.5 * x * (1 + erf(x / sqrt(2))), elementwise over n values (in place
 * allowed). erf is the library's own (lib/kernels/vecmath.h, within 1.2 ulp of libm's), so
 * fc1's fused GELU in the fast matmul gives the same bits. */
void mygpt_gelu_forward(float *out, const float *inp, size_t n);

/* GELU's gradient: dinp += gelu'(inp) * dout, elementwise, in float32 as PyTorch computes
 * it, with lib/kernels/vecmath.h's erf and exp: gelu'(x) within 2e-7 of float64 on [-12, 12]
 * (tests/test_vecmath.c; PyTorch's own float32 kernel is less accurate). */
void mygpt_gelu_backward(float *dinp, const float *inp, const float *dout, size_t n);

/* The tanh GELU as Raschka's book (and GPT-2's "gelu_new") writes it,
 * 0.5 * x * (1 + tanh(sqrt(tensor(2/pi)) * (x + 0.044715 * pow(x, 3)))), op by op in
 * float32 as PyTorch evaluates it, tanh being SLEEF's (PyTorch's on an AVX2 CPU): the
 * same bits. out may be inp. */
void mygpt_gelu_tanh_forward(float *out, const float *inp, size_t n);

/* Its gradient as autograd takes it through those ops: dinp += d/dx, each op's
 * backward in float32, the three paths to x added in autograd's order. */
void mygpt_gelu_tanh_backward(float *dinp, const float *inp, const float *dout, size_t n);

/* Dropout in train mode, F.dropout(x, p) on PyTorch's CPU without MKL:
 * noise = empty_like(x).bernoulli_(1 - p) (one 64-bit draw per element, in order, from
 * rng: keep = (draw & (2^53 - 1)) * 2^-53 < 1 - p), noise.div_(1 - p), x * noise.
 * mygpt_dropout_mask draws the n keeps (1 or 0) of one call; 0 <= p < 1
 * (MYGPT_EINVAL otherwise). Builds with MKL on an Intel CPU draw other masks. */
struct mygpt_rng;
mygpt_status mygpt_dropout_mask(struct mygpt_rng *rng, uint8_t *keep, size_t n, double p, mygpt_error *err);

/* out = x * noise for the keeps of mygpt_dropout_mask (out may be x); the backward is
 * the same product with dout. */
void mygpt_dropout_apply(float *out, const float *x, const uint8_t *keep, size_t n, double p);

/* The residual connection: out = x + dropout(y), n values, the dropout's keeps as in
 * mygpt_dropout_apply (keep NULL: out = x + y); out may be x. The same bits as the
 * dropout, then the sum. */
void mygpt_residual_forward(float *out, const float *x, const float *y, const uint8_t *keep, double p, size_t n);

/* Softmax of each row of length n, in place, over rows [0, rows), with libm's expf
 * (the chapters' small demonstrations). Rows of all -inf are left as they are (the
 * caller's masks never produce them). */
void mygpt_softmax_rows(float *x, size_t rows, int n);

/* Causal self-attention, forward and backward: mygpt/attention.h. */

/* ---- the GPT's parts step by step (gpt_steps.c): the book's chapter 4 ------------------ */
/* Op by op as the book's modules run them in PyTorch 1.13, for the small tensors its
 * chapter prints (rows of a few values). */

/* x.mean(dim=-1) of a row of n: mygpt_sum_torch (mygpt/tensor.h), then divided by n. */
float mygpt_mean_torch(const float *x, size_t n);

/* x.var(dim=-1, unbiased=correction) of a row of n: Welford's running mean and squared
 * deviations in double, as PyTorch's CPU kernel, divided by n - correction. */
float mygpt_var_torch(const float *x, size_t n, int correction);

/* The book's LayerNorm(emb_dim) on rows of n: mean, var(unbiased=False),
 * norm_x = (x - mean) / torch.sqrt(var + 1e-5), then scale * norm_x + shift, each op in
 * float32 (out may be x). */
void mygpt_book_layernorm(float *out, const float *x, const float *scale, const float *shift, size_t rows, int n);

/* The book's ExampleDeepNeuralNetwork (section 4.4): layers of nn.Linear(sizes[i],
 * sizes[i + 1]) and the tanh GELU, x = x + layer(x) where use_shortcut and the shapes
 * agree; one input row, nn.MSELoss against 0, and loss.backward(). */
enum { MYGPT_SHORTCUT_MAX_LAYERS = 8, MYGPT_SHORTCUT_MAX_WIDTH = 16 };
typedef struct mygpt_shortcut_net {
    int n_layers;
    int sizes[MYGPT_SHORTCUT_MAX_LAYERS + 1];
    int use_shortcut;
    float weight[MYGPT_SHORTCUT_MAX_LAYERS][MYGPT_SHORTCUT_MAX_WIDTH * MYGPT_SHORTCUT_MAX_WIDTH]; /* (out, in) */
    float bias[MYGPT_SHORTCUT_MAX_LAYERS][MYGPT_SHORTCUT_MAX_WIDTH];
    float dweight[MYGPT_SHORTCUT_MAX_LAYERS][MYGPT_SHORTCUT_MAX_WIDTH * MYGPT_SHORTCUT_MAX_WIDTH];
    float dbias[MYGPT_SHORTCUT_MAX_LAYERS][MYGPT_SHORTCUT_MAX_WIDTH];
} mygpt_shortcut_net;

/* Draws the layers' weights and biases as nn.Linear does, layer by layer (MYGPT_EINVAL
 * for more layers or wider ones than the struct holds). */
mygpt_status mygpt_shortcut_net_init(mygpt_shortcut_net *net, const int *sizes, int n_layers, int use_shortcut,
                                     struct mygpt_rng *rng, mygpt_error *err);

/* One forward and backward pass of x (sizes[0] values): the loss
 * mean((output - 0)^2) into *loss, every weight's and bias's gradient into dweight and
 * dbias. Its products are mygpt_matmul's (and its backward's): a fused multiply-add a
 * step, as PyTorch's BLAS computes nn.Linear on a CPU with FMA. MYGPT_ENOMEM if the
 * products find no memory for their workspace. */
mygpt_status mygpt_shortcut_net_grads(mygpt_shortcut_net *net, const float *x, float *loss, mygpt_error *err);

/* The book's FeedForward(cfg) on N rows of C: nn.Linear(C, 4C), the tanh GELU,
 * nn.Linear(4C, C). Weights (out, in) row-major. */
typedef struct mygpt_book_ff {
    int C;
    const float *w1, *b1; /* (4C, C), (4C) */
    const float *w2, *b2; /* (C, 4C), (C) */
} mygpt_book_ff;

/* out (N, C) = FeedForward(x (N, C)); MYGPT_EINVAL for C < 1 or 4C past INT_MAX,
 * MYGPT_ENOMEM when its hidden (N, 4C) cannot be had. */
mygpt_status mygpt_book_feedforward(float *out, const float *x, const mygpt_book_ff *ff, size_t N, mygpt_error *err);

/* The book's TransformerBlock(cfg): x + drop(att(norm1(x))), then x + drop(ff(norm2(x))),
 * the attention mygpt_mha's MultiHeadAttention (C to C, causal, out_proj). */
typedef struct mygpt_book_block {
    const float *norm1_scale, *norm1_shift, *norm2_scale, *norm2_shift; /* (C) each */
    mygpt_mha att;
    mygpt_book_ff ff;
    double drop_shortcut; /* nn.Dropout(drop_rate) on each branch's output */
} mygpt_book_block;

/* out (B, T, C) = the block on x (B, T, C) (out may not be x); rng not NULL is training
 * mode: the attention's dropout, then each shortcut's, draw from it in the order the
 * forward meets them. MYGPT_EINVAL for B or T below 1, or an attention whose d_in or d_out
 * is not the feed-forward's C. */
mygpt_status mygpt_book_block_forward(float *out, const float *x, const mygpt_book_block *blk, int B, int T,
                                      struct mygpt_rng *rng, mygpt_error *err);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
