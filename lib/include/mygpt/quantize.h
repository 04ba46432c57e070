/*
 * mygpt/quantize.h - weights stored in fewer bytes for inference: bfloat16, or int8 in
 * groups with a float32 scale. Decoding a token reads every weight once, so the bytes
 * per weight decide the speed; and a quantized model is, bit for bit, the float32 model
 * whose weights are the dequantized values: the kernels widen each stored weight to that
 * float32 in a register and run the same fused multiply-adds in the same order. So
 * every promise of the float32 model (the same bits for any thread count and any kernel
 * path, PyTorch's numbers on the same weights) holds for the quantized one.
 *
 * What is quantized: every matmul weight (W_q, W_k, W_v, W_o, fc1, fc2 of each layer,
 * an untied head) and the token embedding (the lookup reads its dequantized rows, the
 * tied head its stored bytes). LayerNorm parameters, biases and the position
 * embedding stay float32. Training stays float32.
 *
 *   bf16: w rounded to bfloat16 as tensor.to(torch.bfloat16) rounds (to nearest, ties
 *         to even); dequantized: the 16 bits widened, exactly.
 *   int8: per output row, groups of MYGPT_INT8_GROUP consecutive input weights (the
 *         last group of a row may be shorter) share s = max|w| / 127 (float32);
 *         q = clamp(round_half_even(w / s), -127, 127), 0 where s is 0; dequantized:
 *         (float)q * s. The recipe in torch is tools/quantize_reference.py's.
 *
 *   mygpt_gpt_quantize(g, MYGPT_WEIGHTS_INT8, &err);   // g->params now the dequantized values
 *   mygpt_generate(g, ...);                            // reads 1.06 bytes a weight, not 4
 */
#ifndef MYGPT_QUANTIZE_H
#define MYGPT_QUANTIZE_H

#include <stddef.h>
#include <stdint.h>

#include "mygpt/error.h"
#include "mygpt/gpt.h"

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/* Weights per int8 group. 64: llama2.c's Q8_0 choice; a scale costs 4 bytes a group, so
 * 1.0625 bytes a weight (32 would cost 1.125), and 64 divides both the matmul's k-block
 * (256) and every GPT-2 width, so a group never straddles a block. */
#define MYGPT_INT8_GROUP 64

/* "fp32", "bf16", "int8"; and back (MYGPT_EINVAL for another name). */
const char *mygpt_weights_name(mygpt_weights w);
mygpt_status mygpt_weights_parse(const char *name, mygpt_weights *out, mygpt_error *err);

/* x rounded to bfloat16's 16 bits (to nearest, ties to even) and back, exactly. x must be
 * finite (NaN has no rounding to agree on). */
uint16_t mygpt_bf16_round(float x);
float mygpt_bf16_widen(uint16_t b);

/* n weights to bfloat16. MYGPT_ERANGE (out partly written) for a NaN, an infinity, or a
 * finite value beyond bfloat16's range. */
mygpt_status mygpt_bf16_quantize(const float *w, size_t n, uint16_t *out, mygpt_error *err);

/* Bytes of one stored weight value in format w: 4, 2 or 1 (int8's scales aside). */
size_t mygpt_weights_value_bytes(mygpt_weights w);

/* Groups in a row of cols weights: ceil(cols / MYGPT_INT8_GROUP). */
size_t mygpt_int8_groups(int cols);

/* A (rows, cols) weight to int8: q (rows, cols) and scales (rows, mygpt_int8_groups(cols)).
 * MYGPT_ERANGE (q, scales partly written) for a NaN or an infinity. */
mygpt_status mygpt_int8_quantize(const float *w, size_t rows, int cols, int8_t *q, float *scales,
                                 mygpt_error *err);
/* The dequantized weights: out[r][k] = (float)q[r][k] * scales[r][k / MYGPT_INT8_GROUP]. */
void mygpt_int8_dequantize(const int8_t *q, const float *scales, size_t rows, int cols, float *out);

/* Whether table row i (mygpt/gpt.h) is stored quantized in a quantized model of cfg. */
int mygpt_weights_quantizes(const mygpt_config *cfg, int i);

/* Bytes of weights a decoding step reads for one token in format w: every matmul weight
 * (the head included) as stored, scales included, plus the float32 vectors (LayerNorm,
 * biases) and one row each of the token and position embeddings. */
double mygpt_weights_bytes_per_token(const mygpt_config *cfg, mygpt_weights w);

/* Stores g's weights in format w. From float32 to bf16 or int8: the quantized bytes are
 * kept and packed for the kernels, and g->params become the dequantized values (the
 * model the quantized one is); MYGPT_ERANGE for a weight that cannot be quantized (a
 * non-finite value), g unchanged. To FP32: the quantized bytes are dropped and g goes on
 * as the float32 model of the dequantized weights (the same logits, bit for bit).
 * Quantizing a quantized model again (bf16 to int8, say) is MYGPT_EINVAL: quantize the
 * float32 model; so is a model held by a trainer (training stays float32). */
mygpt_status mygpt_gpt_quantize(mygpt_gpt *g, mygpt_weights w, mygpt_error *err);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
