/*
 * mygpt/weights.h - the formats a weight can be stored in, and their recipes: float32,
 * bfloat16 (rounded as tensor.to(torch.bfloat16)), or int8 in groups with a float32
 * scale. What a format is (its name, its bytes, its recipe, how its rows are read) is
 * said once, in one table (mygpt_weights_traits_of, as ggml's type_traits), which the
 * model's quantized storage and the tests read; a new format is a row there, its
 * recipe beside the others in kernels/quantize.c, and its widening in the matmul's
 * panels (docs/quantized-formats.md). These are plain functions over arrays; a model
 * stored this way is mygpt/quantize.h's.
 *
 *   bf16: w rounded to bfloat16 as tensor.to(torch.bfloat16) rounds (to nearest, ties
 *         to even); dequantized: the 16 bits widened, exactly.
 *   int8: per output row, groups of MYGPT_INT8_GROUP consecutive input weights (the
 *         last group of a row may be shorter) share s = max|w| / 127 (float32);
 *         q = clamp(round_half_even(w / s), -127, 127), 0 where s is 0; dequantized:
 *         (float)q * s. The recipe in torch is tools/quantize_reference.py's.
 */
#ifndef MYGPT_WEIGHTS_H
#define MYGPT_WEIGHTS_H

#include <stddef.h>
#include <stdint.h>

#include "mygpt/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* everything declared here is exported by libmygpt.so (lib/exports.txt) */
#pragma GCC visibility push(default)

/* How a model stores its matmul weights and its token embedding (mygpt/quantize.h):
 * float32, or quantized for inference, where the model is, bit for bit, the float32
 * model whose weights are the dequantized values. */
typedef enum mygpt_weights {
    MYGPT_WEIGHTS_FP32 = 0,
    MYGPT_WEIGHTS_BF16 = 1, /* bfloat16, rounded as tensor.to(torch.bfloat16)       */
    MYGPT_WEIGHTS_INT8 = 2  /* int8 in groups of MYGPT_INT8_GROUP with a float scale */
} mygpt_weights;

/* The number of formats: the table's rows, float32 first and the quantized ones after. */
#define MYGPT_WEIGHTS_COUNT 3

/* Weights per int8 group. 64: llama2.c's Q8_0 choice; a scale costs 4 bytes a group, so
 * 1.0625 bytes a weight (32 would cost 1.125), and 64 divides both the matmul's k-block
 * (256) and every GPT-2 width, so a group never straddles a block. */
#define MYGPT_INT8_GROUP 64

/* A format's facts. The recipe and the reading work on a (rows, cols) weight stored row
 * by row: q holds rows * cols values of value_bytes each, and, for a format with groups,
 * scales holds each row's mygpt_weights_scales(w, cols) float32 scales (NULL otherwise).
 * cols < 1 is rows of no value: each function then does nothing (and succeeds). */
typedef struct mygpt_weights_traits {
    const char *name;   /* "fp32", "bf16", "int8": --weights, and a file's __metadata__ */
    const char *dtype;  /* the safetensors dtype of the stored values: "F32", "BF16", "I8" */
    size_t value_bytes; /* bytes of one stored value: 4, 2, 1 */
    int group;          /* weights of a row sharing one float32 scale; 0: no scales */
    /* The reference recipe (tools/quantize_reference.py's in torch): w to q and scales.
     * MYGPT_ERANGE (q, scales partly written) for a weight the format cannot hold. */
    mygpt_status (*quantize)(const float *w, size_t rows, int cols, void *q, float *scales, mygpt_error *err);
    /* How the rows are read: out = the float32 values q and scales stand for, exactly. */
    void (*dequantize)(const void *q, const float *scales, size_t rows, int cols, float *out);
    /* Whether q and scales hold only values the recipe gives (what a file is checked
     * for): MYGPT_EFORMAT naming the first that does not. NULL for float32, whose values
     * are the model's own. */
    mygpt_status (*check)(const void *q, const float *scales, size_t rows, int cols, mygpt_error *err);
} mygpt_weights_traits;

/* Format w's row of the table; NULL for a value that is not a format. */
const mygpt_weights_traits *mygpt_weights_traits_of(mygpt_weights w);

/* Float32 scales in a row of cols weights stored in format w: one per group (the last
 * may be shorter), 0 for a format without scales. */
size_t mygpt_weights_scales(mygpt_weights w, int cols);

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
 * MYGPT_ERANGE (q, scales partly written) for a NaN or an infinity, or for a group whose
 * scale s would dequantize to infinity (127 * s not finite: weights next to FLT_MAX). */
mygpt_status mygpt_int8_quantize(const float *w, size_t rows, int cols, int8_t *q, float *scales,
                                 mygpt_error *err);
/* The dequantized weights: out[r][k] = (float)q[r][k] * scales[r][k / MYGPT_INT8_GROUP]. */
void mygpt_int8_dequantize(const int8_t *q, const float *scales, size_t rows, int cols, float *out);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
