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
 * The formats and their recipes (bf16 rounding, int8 groups) are mygpt/weights.h's.
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
#include "mygpt/weights.h" /* the formats and their recipes */

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/* Whether table row i (mygpt/gpt.h) is stored quantized in a quantized model of cfg (0 for
 * an i outside the table). */
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
 * float32 model; so is a model held by a trainer (training stays float32), or one with
 * LoRA adapters (mygpt/lora.h: merge them first). */
mygpt_status mygpt_gpt_quantize(mygpt_gpt *g, mygpt_weights w, mygpt_error *err);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
