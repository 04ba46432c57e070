/*
 * 47_sinusoidal_encoding - document 001, "Fix #2 - sinusoidal encodings from
 * scratch": the (256, 384) table, row 0 alternating 0, 1 and everything within
 * [-1, 1]. Also draws the table as a heatmap: sinusoidal_encoding.svg.
 */
#include <stdio.h>
#include <stdlib.h>

#include "chapter.h"

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "47_sinusoidal_encoding",
                 "Document 001: pe = sinusoidal_encoding(256, 384); prints pe.shape, pe[0, :6]\n"
                 "and pe.min(), pe.max(); writes the table as a heatmap to\n"
                 "FIGURES/sinusoidal_encoding.svg.", 0, CH_FIGURES);
    enum { BLOCK = 256, EMBD = 384 };
    mygpt_error err = {0};
    float *pe = chapter_alloc(&ch, (size_t)BLOCK * EMBD, sizeof(float));
    chapter_check(&ch, mygpt_sinusoidal_encoding(pe, BLOCK, EMBD, &err), &err);
    float lo = pe[0], hi = pe[0];
    for (size_t i = 0; i < (size_t)BLOCK * EMBD; i++) {
        lo = pe[i] < lo ? pe[i] : lo;
        hi = pe[i] > hi ? pe[i] : hi;
    }
    const int64_t shape[2] = {BLOCK, EMBD}, six[1] = {6};
    ch_size(2, shape);
    printf("\n");
    ch_torch(pe, 1, six, NULL);
    printf("\n");
    ch_pyfloat(lo); // pe.min().item(), pe.max().item()
    printf(" ");
    ch_pyfloat(hi);
    printf("\n");

    // the figure: dimensions down, positions across, as a multi-hand clock
    float *t = chapter_alloc(&ch, (size_t)BLOCK * EMBD, sizeof(float));
    for (int p = 0; p < BLOCK; p++)
        for (int d = 0; d < EMBD; d++)
            t[(size_t)d * BLOCK + p] = pe[(size_t)p * EMBD + d];
    mygpt_svg fig;
    mygpt_svg_begin(&fig, 900, 560);
    const mygpt_svg_panel panel = {80, 50, 700, 450, "Sinusoidal positional encoding (256 x 384)",
                                   "Position", "Embedding dimension", .legend_outside = 0};
    mygpt_svg_heatmap(&fig, &panel, t, EMBD, BLOCK, -1.0, 1.0, 1);
    chapter_save_figure(&ch, &fig, "sinusoidal_encoding.svg");
    free(t);
    free(pe);
    return 0;
}
