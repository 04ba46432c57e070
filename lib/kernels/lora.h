/*
 * kernels/lora.h - private: the products of a LoRA adapter (the book's appendix E),
 * y += (alpha / r) (x A) B beside an nn.Linear, and their backward. Plain loops: a row
 * costs r (in + out) multiply-adds against the Linear's in x out (4 % at GPT-2 small's
 * width and the book's rank 16). Every
 * output is summed in one fixed order by one thread: the same bits for any team.
 */
#ifndef MYGPT_KERNELS_LORA_H
#define MYGPT_KERNELS_LORA_H

#include <stddef.h>

#include "mygpt/error.h"

/* The largest r the kernels take (a row's stack arrays hold r values): at least
 * mygpt/config.h's MYGPT_LORA_MAX_RANK, which model/params.c checks. */
#define MYGPT_LORA_KERNEL_MAX_RANK 1024

/* An adapter beside an nn.Linear(C, OC), as the kernels read it: its two factors, the
 * sizes, and scale = alpha / r. */
typedef struct mygpt_lora_weights {
    const float *A; // (C, r)
    const float *B; // (r, OC)
    int C, r, OC;
    float scale;
} mygpt_lora_weights;

/* out (N, OC) += scale * ((inp (N, C) @ A (C, r)) @ B (r, OC)), the product rounded to
 * float32 before it is scaled and added, as LoRALayer's forward and LinearWithLoRA's sum do. */
void mygpt_lora_forward(float *out, const float *inp, mygpt_lora_weights w, size_t N);

/* The backward of mygpt_lora_forward for dout (N, OC): dinp (N, C) += the adapter's
 * share, dA (C, r) and dB (r, OC) written (either may be NULL: not computed). MYGPT_ENOMEM
 * when its scratch (N * r * 2 + OC * r floats) cannot be had. */
mygpt_status mygpt_lora_backward(float *dinp, float *dA, float *dB, const float *dout, const float *inp,
                                 mygpt_lora_weights w, size_t N, mygpt_error *err);

#endif
