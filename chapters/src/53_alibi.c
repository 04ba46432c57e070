/*
 * 53_alibi - document 002, "Approach 2: ALiBi": the per-head slopes and the bias
 * matrices -m |i - j| of heads 0 and 3 for 4 heads and 6 positions.
 */
#include <stdio.h>

#include "chapter.h"

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "53_alibi",
                 "Document 002: alibi = ALiBiPositionalBias(num_heads=4); biases = alibi(6);\n"
                 "prints the shape, the slopes and the bias matrices of heads 0 and 3.", 0, 0);
    enum { H = 4, T = 6 };
    float slopes[H], biases[H * T * T];
    mygpt_error err = {0};
    chapter_check(&ch, mygpt_alibi_slopes(slopes, H, &err), &err);
    chapter_check(&ch, mygpt_alibi_bias(biases, slopes, H, T, &err), &err);
    const int64_t shape[3] = {H, T, T}, h[1] = {H}, tt[2] = {T, T};
    printf("ALiBi bias shape: ");
    ch_size(3, shape);
    printf("\nSlopes per head: ");
    ch_numpy(slopes, 1, h, 4);
    printf("\n\nHead 0 biases (steep slope - prefers nearby tokens):\n");
    ch_numpy(biases, 2, tt, 3);
    printf("\n\nHead 3 biases (gentle slope - more global attention):\n");
    ch_numpy(biases + 3 * T * T, 2, tt, 3);
    printf("\n");
    return 0;
}
