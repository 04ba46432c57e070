/*
 * mygpt/svg.h - figures without a plotting library: panels of line plots and
 * heatmaps (with a colour bar) written as a standalone SVG file that any browser
 * opens. Enough to redraw the documents' matplotlib figures.
 *
 *   mygpt_svg fig;
 *   mygpt_svg_begin(&fig, 1400, 500);
 *   mygpt_svg_line_plot(&fig, &(mygpt_svg_panel){...}, series, 4);
 *   mygpt_svg_heatmap(&fig, &(mygpt_svg_panel){...}, data, rows, cols, -1, 1, 1);
 *   if (mygpt_svg_save(&fig, "figure.svg", &err)) ...
 */
#ifndef MYGPT_SVG_H
#define MYGPT_SVG_H

#include "mygpt/error.h"
#include "mygpt/print.h"

#ifdef __cplusplus
extern "C" {
#endif

/* everything declared here is exported by libmygpt.so (lib/exports.txt) */
#pragma GCC visibility push(default)

typedef struct mygpt_svg {
    mygpt_strbuf sb;
    double width, height;
    int axes;  /* axes drawn so far: one per panel, one more per colour bar (as matplotlib counts) */
} mygpt_svg;

/* Where a panel goes on the figure and what its axes say. */
typedef struct mygpt_svg_panel {
    double x, y, w, h;      /* the plotting area, in pixels from the top left */
    const char *title, *xlabel, *ylabel;
    int legend_outside;     /* 1: the legend goes right of the plotting area, clear of the data */
    /* heatmaps: a label for every column / row instead of numbered ticks (tokens, say;
     * the column labels are written upwards), and a sequential colour map (white at
     * vmin to dark blue at vmax: probabilities) instead of the diverging RdBu */
    const char *const *xticks, *const *yticks;
    int sequential;
} mygpt_svg_panel;

/* Initialise with designated initialisers: fields left out are 0 / NULL. */
typedef struct mygpt_svg_series {
    const float *y;         /* n values */
    const float *x;         /* their x (contiguous), or NULL for x = 0, 1, ..., n - 1 */
    int n;
    int stride;             /* distance between consecutive y values (1 or less = contiguous) */
    const char *label;      /* legend text */
    int markers;            /* 1: a dot on every point (measured values) */
    int dashed;             /* 1: a dashed grey line (a reference, such as "ideal") */
} mygpt_svg_series;

void mygpt_svg_begin(mygpt_svg *fig, double width, double height);

/* Line plot of the series (colours of matplotlib's default cycle), with axes,
 * ticks, a light grid and a legend. y range [ymin, ymax]; the x range spans every
 * series' x values, with integer ticks when those are all integers. A point whose x or
 * y is a NaN or an infinity is a gap: the line ends before it and starts again after
 * it (no coordinate written is ever non-finite). */
void mygpt_svg_line_plot(mygpt_svg *fig, const mygpt_svg_panel *p, const mygpt_svg_series *s,
                         int nseries, double ymin, double ymax);

/* Heatmap of data (rows, cols), row 0 at the top, coloured with the RdBu map
 * from vmin (red) to vmax (blue) (or white to blue: p->sequential), and a colour bar
 * at the right if colorbar. rows or cols below 1: no cell is drawn. A NULL label of
 * p->xticks or p->yticks (or of any title) is an empty one. */
void mygpt_svg_heatmap(mygpt_svg *fig, const mygpt_svg_panel *p, const float *data, int rows,
                       int cols, double vmin, double vmax, int colorbar);

/* A figure of every head's attention: att (L, NH, T, T) as mygpt_gpt_forward_attention
 * gives it for one sequence, one heatmap per head (white 0 to dark blue 1, a colour
 * bar each), layers down and heads across, labels[t] (the tokens) on both axes: row t
 * is query t (the token attending, titled "query"), column s key s (the token attended
 * to, titled "key"); labels NULL: numbered ticks. Starts fig (mygpt_svg_begin; an empty
 * figure when L, NH or T is below 1); save it with mygpt_svg_save. */
void mygpt_svg_attention_grid(mygpt_svg *fig, const float *att, int L, int NH, int T,
                              const char *const *labels);

/* Finishes the document, writes it to path and frees it (also on failure). Written as
 * checkpoints are (mygpt_checkpoint_save): through a temporary renamed over path, so a
 * full disk keeps the old figure; a path that is a symbolic link, a directory or a
 * device is refused (MYGPT_EINVAL), a failed write is MYGPT_EIO with the reason. */
mygpt_status mygpt_svg_save(mygpt_svg *fig, const char *path, mygpt_error *err);

/* 1 when path holds nothing (no file there) or a figure this library wrote (its first
 * line and <svg> tag as mygpt_svg_begin writes them); 0 for anything else: a program that
 * makes up a figure's name replaces only its own kind there, never a user's file. */
int mygpt_svg_replaceable(const char *path);


#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
