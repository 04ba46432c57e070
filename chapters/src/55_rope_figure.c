/*
 * 55_rope_figure - document 002, the RoPE figure: left, cos of dimension pairs
 * 0, 4, 8 and 12 over 50 positions; right, the 50 x 32 cos cache as a heatmap with
 * a colour bar. Written to FIGURES/rope_figure.svg; prints what the notebook cell
 * prints (the figure's repr, then two lines).
 */
#include <stdio.h>
#include <stdlib.h>

#include "doc002_session.h"

int main(int argc, char **argv)
{
    chapter ch;
    chapter_init(&ch, argc, argv, "55_rope_figure",
                 "Document 002: the RoPE rotation patterns and cos-cache heatmap, drawn to\n"
                 "FIGURES/rope_figure.svg (1400 x 500, like figsize=(14, 5) at 100 dpi).",
                 0, CH_FIGURES);
    enum { D = 64, MAXSEQ = 512, HALF = D / 2, NPOS = 50 };
    float inv_freq[HALF];
    float *cos_c, *sin_c;
    doc002_rope(&ch, D, MAXSEQ, inv_freq, &cos_c, &sin_c);

    mygpt_svg fig;
    mygpt_svg_begin(&fig, 1400, 500);
    // left: cos_np[:, i] for i in 0, 4, 8, 12 (a column of the (50, 32) cache)
    static const char *const labels[4] = {"Dim pair 0", "Dim pair 4", "Dim pair 8", "Dim pair 12"};
    mygpt_svg_series series[4];
    for (int k = 0; k < 4; k++)
        series[k] = (mygpt_svg_series){.y = cos_c + 4 * k, .n = NPOS, .stride = HALF, .label = labels[k]};
    const mygpt_svg_panel left = {90, 50, 520, 380, "RoPE: Rotation patterns by dimension pair",
                                  "Position", "Cos value", .legend_outside = 0};
    mygpt_svg_line_plot(&fig, &left, series, 4, -1.0, 1.0);
    // right: imshow(cos_np.T): dimension pairs down, positions across
    float *t = chapter_alloc(&ch, (size_t)HALF * NPOS, sizeof(float));
    for (int p = 0; p < NPOS; p++)
        for (int i = 0; i < HALF; i++)
            t[(size_t)i * NPOS + p] = cos_c[(size_t)p * HALF + i];
    const mygpt_svg_panel right = {760, 50, 520, 380, "RoPE: Cos values (heatmap)", "Position",
                                   "Dimension pair", .legend_outside = 0};
    mygpt_svg_heatmap(&fig, &right, t, HALF, NPOS, -1.0, 1.0, 1);
    // what the notebook shows for the figure object: its size and its axes (the two
    // panels and the colour bar), read off the figure just drawn
    const double fig_w = fig.width, fig_h = fig.height;
    const int fig_axes = fig.axes;
    chapter_save_figure(&ch, &fig, "rope_figure.svg");

    printf("<Figure size %gx%g with %d Axes>\n", fig_w, fig_h, fig_axes);
    printf("Low dimension pairs (top of heatmap) oscillate rapidly.\n");
    printf("High dimension pairs (bottom) change slowly across positions.\n");
    free(t);
    free(cos_c);
    free(sin_c);
    return 0;
}
