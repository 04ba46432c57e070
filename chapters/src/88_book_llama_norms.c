/*
 * 88_book_llama_norms - Raschka's LLMs-from-scratch, ch05/07_gpt_to_llama,
 * converting-gpt-to-llama2.ipynb, sections 1.1-1.3: LayerNorm becomes RMSNorm, GELU
 * becomes SiLU, and the feed-forward becomes SwiGLU's gated product. On the notebook's
 * example_batch (torch.randn(2, 3, 4) after torch.manual_seed(123)): RMSNorm (weight ones,
 * eps 1e-5) beside the LayerNorm of the same rows, SiLU, and the gate silu(a) * b with the
 * batch's two rows as a and b. The notebook prints nothing here: it asserts that its RMSNorm
 * equals torch.nn.RMSNorm (PyTorch 2.4; chapters/ERRATA.md) and its SiLU F.silu. What this
 * prints is what tools/reference_book_llama.py --norms prints from the notebook's cells.
 */
#include <math.h>
#include <stdio.h>

#include "chapter.h"

enum { B = 2, T = 3, C = 4 };

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "88_book_llama_norms",
                 "GPT to Llama 2, sections 1.1-1.3: RMSNorm against LayerNorm, SiLU, and SwiGLU's\n"
                 "gate silu(a) * b on torch.randn(2, 3, 4) after torch.manual_seed(123).",
                 123, CH_SEED);
    mygpt_error err = {0};
    mygpt_rng rng = {0};
    mygpt_rng_seed(&rng, ch.seed);
    float x[B * T * C], out[B * T * C], ones[C], zeros[C] = {0}, silu[B * T * C];
    const int64_t shape[3] = {B, T, C};
    chapter_check(&ch, mygpt_normal_(&rng, x, B * T * C, 0.0, 1.0, &err), &err);
    printf("example_batch:\n ");
    ch_torch(x, 3, shape, NULL);
    printf("\n");

    // lesson: rmsnorm
    for (int i = 0; i < C; i++) // the weight: torch.ones(C), as the notebook's RMSNorm starts
        ones[i] = 1.0f;
    // RMSNorm: no mean taken away, no shift; each row divided by its root mean square
    mygpt_rmsnorm_forward(out, x, ones, B * T, C, MYGPT_RMSNORM_EPS); // (B, T, C)
    printf("RMSNorm:\n ");
    ch_torch(out, 3, shape, "MulBackward0");
    // LayerNorm: each row centred, then divided by its standard deviation; nn.LayerNorm's
    // own kernel (weight ones, bias zeros), which rounds otherwise than lesson 37's formula
    mygpt_layernorm_torch(out, x, ones, zeros, B * T, C, 1e-5f); // (B, T, C)
    // end lesson: rmsnorm
    printf("\nLayerNorm:\n ");
    ch_torch(out, 3, shape, "NativeLayerNormBackward0");

    // lesson: silu
    // SiLU(x) = x * sigmoid(x): SwiGLU's product with b = 1
    float all_ones[B * T * C];
    for (int i = 0; i < B * T * C; i++)
        all_ones[i] = 1.0f;
    mygpt_swiglu_forward(silu, x, all_ones, B * T * C); // (B, T, C)
    // end lesson: silu
    printf("\nSiLU:\n ");
    ch_torch(silu, 3, shape, NULL);
    // F.silu's own formula, x / (1 + exp(-x)), as torch.allclose compares them
    int close = 1;
    for (int i = 0; i < B * T * C; i++) {
        float ref = x[i] / (1.0f + expf(-x[i]));
        close &= fabsf(silu[i] - ref) <= 1e-8f + 1e-5f * fabsf(ref);
    }
    printf("\nallclose(SiLU, F.silu): %s\n", ch_bool(close));

    // lesson: swiglu
    // FeedForward: fc3(silu(fc1(x)) * fc2(x)); here the batch's rows stand in for fc1(x), fc2(x)
    const float *a = x, *b = x + T * C; // (T, C) each
    mygpt_swiglu_forward(out, a, b, T * C); // (T, C)
    // end lesson: swiglu
    const int64_t gshape[2] = {T, C};
    printf("SwiGLU gate silu(a) * b:\n ");
    ch_torch(out, 2, gshape, NULL);
    printf("\n");
    return 0;
}
