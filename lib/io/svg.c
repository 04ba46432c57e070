/* svg.c - line plots and heatmaps as SVG (see mygpt/svg.h). */
#include "mygpt/svg.h"
#include "mygpt/data.h"
#include "base/base.h"
#include "base/text.h"
#include "io/whole.h"

#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ColorBrewer's 11-class RdBu, the anchors of matplotlib's "RdBu". */
static const int RDBU[11][3] = {{103, 0, 31},    {178, 24, 43},   {214, 96, 77},  {244, 165, 130},
                                {253, 219, 199}, {247, 247, 247}, {209, 229, 240}, {146, 197, 222},
                                {67, 147, 195},  {33, 102, 172},  {5, 48, 97}};

/* matplotlib's default colour cycle ("tab10") */
static const char *const CYCLE[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

/* The RdBu colour of t in [0, 1] (0 = dark red, 0.5 = white, 1 = dark blue). */
static void rdbu(double t, int rgb[3])
{
    if (!(t >= 0.0))
        t = 0.0;
    if (t > 1.0)
        t = 1.0;
    double pos = t * 10.0;
    int i = (int)pos;
    if (i >= 10)
        i = 9;
    double f = pos - i;
    for (int c = 0; c < 3; c++)
        rgb[c] = (int)lround(RDBU[i][c] + f * (RDBU[i + 1][c] - RDBU[i][c]));
}

/* How every figure starts: mygpt_svg_replaceable knows the library's own by it */
#define SVG_HEAD "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
#define SVG_FONT "font-family=\"DejaVu Sans, Arial, sans-serif\""

void mygpt_svg_begin(mygpt_svg *fig, double width, double height)
{
    memset(fig, 0, sizeof *fig);
    fig->width = width;
    fig->height = height;
    mygpt_sb_printf(&fig->sb,
                    SVG_HEAD "width=\"%g\" height=\"%g\" "
                    "viewBox=\"0 0 %g %g\" " SVG_FONT ">\n"
                    "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
                    width, height, width, height);
}

int mygpt_svg_replaceable(const char *path)
{
    char head[512];
    const long n = mygpt_file_head(path, head, sizeof head);
    if (n < 0)
        return n == MYGPT_HEAD_ABSENT; // a link, a FIFO, a folder, an unreadable file: not ours
    const char *tag_end = strchr(head, '>'), *svg_end = tag_end ? strchr(tag_end + 1, '>') : NULL;
    return strncmp(head, SVG_HEAD, strlen(SVG_HEAD)) == 0 && svg_end &&
           strstr(head, SVG_FONT ">\n") == svg_end - strlen(SVG_FONT);
}

static void text(mygpt_svg *fig, double x, double y, double size, const char *anchor,
                 double rotate, const char *s)
{
    mygpt_sb_printf(&fig->sb, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%g\" text-anchor=\"%s\"",
                    x, y, size, anchor);
    if (rotate != 0.0)
        mygpt_sb_printf(&fig->sb, " transform=\"rotate(%g %.1f %.1f)\"", rotate, x, y);
    mygpt_sb_append(&fig->sb, ">");
    if (s) // valid XML text, whatever s holds (NULL: none)
        mygpt_sb_append_shown(&fig->sb, s, strlen(s), 1);
    mygpt_sb_append(&fig->sb, "</text>\n");
}

/* The panel's title and axis titles; xpad / ypad: how far the tick labels reach past the
 * bottom / left edge when that is further than numbered ticks do (0: the usual place). */
static void labels(mygpt_svg *fig, const mygpt_svg_panel *p, double xpad, double ypad)
{
    if (p->title)
        text(fig, p->x + p->w / 2, p->y - 12, 15, "middle", 0, p->title);
    if (p->xlabel)
        text(fig, p->x + p->w / 2, p->y + p->h + (xpad > 26 ? xpad + 14 : 40), 13, "middle", 0, p->xlabel);
    if (p->ylabel)
        text(fig, p->x - (ypad > 35 ? ypad + 13 : 48), p->y + p->h / 2, 13, "middle", -90, p->ylabel);
}

/* How far (pixels) the longest of n labels reaches at font size fs: its characters (not
 * bytes: a UTF-8 character counts once) times an average glyph's width. */
static double label_reach(const char *const *labels, int n, double fs)
{
    size_t most = 0;
    for (int i = 0; labels && i < n; i++) {
        size_t chars = 0;
        for (const unsigned char *c = (const unsigned char *)labels[i]; c && *c; c++)
            chars += (*c & 0xC0) != 0x80;
        if (chars > most)
            most = chars;
    }
    return (double)most * 0.58 * fs;
}

/* A "nice" tick step for a range: 1, 2 or 5 times a power of ten, about 5 ticks. */
static double tick_step(double range)
{
    double raw = range / 5.0, mag = pow(10.0, floor(log10(raw)));
    double r = raw / mag;
    return (r < 1.5 ? 1 : r < 3.5 ? 2 : r < 7.5 ? 5 : 10) * mag;
}

/* x of point i of series s */
static double series_x(const mygpt_svg_series *s, int i)
{
    return s->x ? (double)s->x[i] : (double)i;
}

/* y of point i of series s */
static double series_y(const mygpt_svg_series *s, int i)
{
    return (double)s->y[(size_t)i * (s->stride > 1 ? (size_t)s->stride : 1)];
}

/* Whether point i of series s can be drawn: a NaN or an infinity is a gap in its line */
static int drawn(const mygpt_svg_series *s, int i)
{
    return isfinite(series_x(s, i)) && isfinite(series_y(s, i));
}

void mygpt_svg_line_plot(mygpt_svg *fig, const mygpt_svg_panel *p, const mygpt_svg_series *s,
                         int nseries, double ymin, double ymax)
{
    double xmin = INFINITY, xmax = -INFINITY;
    int integers = 1;
    for (int k = 0; k < nseries; k++)
        for (int i = 0; i < s[k].n; i++) {
            const double x = series_x(&s[k], i);
            if (!isfinite(x))
                continue;
            xmin = fmin(xmin, x);
            xmax = fmax(xmax, x);
            integers &= x == floor(x);
        }
    if (!(xmin <= xmax))
        xmin = 0, xmax = 1;
    if (xmax - xmin < 1) /* one point: give it room on both sides */
        xmin -= 0.5, xmax += 0.5;
    const double pad = 0.05 * (xmax - xmin), x0 = xmin - pad, x1 = xmax + pad;
    const double ypad = 0.05 * (ymax - ymin), y0 = ymin - ypad, y1 = ymax + ypad;
#define PX(v) (p->x + ((v) - x0) / (x1 - x0) * p->w)
#define PY(v) (p->y + p->h - ((v) - y0) / (y1 - y0) * p->h)
    mygpt_strbuf *sb = &fig->sb;
    fig->axes++;
    double xs = tick_step(xmax - xmin), ys = tick_step(ymax - ymin);
    if (integers && xs < 1) /* thread counts, positions: no tick at 0.5 */
        xs = 1;
    for (double t = ceil(xmin / xs - 1e-9) * xs; t <= xmax + 1e-9; t += xs) { // grid + x ticks
        mygpt_sb_printf(sb, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#b0b0b0\" stroke-opacity=\"0.3\"/>\n",
                        PX(t), p->y, PX(t), p->y + p->h);
        char lab[32];
        snprintf(lab, sizeof lab, "%g", fabs(t) < 1e-12 ? 0.0 : t);
        text(fig, PX(t), p->y + p->h + 18, 12, "middle", 0, lab);
    }
    for (double t = ceil(ymin / ys) * ys; t <= ymax + 1e-9; t += ys) {
        mygpt_sb_printf(sb, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#b0b0b0\" stroke-opacity=\"0.3\"/>\n",
                        p->x, PY(t), p->x + p->w, PY(t));
        char lab[32];
        snprintf(lab, sizeof lab, "%.2f", fabs(t) < 1e-12 ? 0.0 : t);
        text(fig, p->x - 6, PY(t) + 4, 12, "end", 0, lab);
    }
    mygpt_sb_printf(sb, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"black\"/>\n",
                    p->x, p->y, p->w, p->h);
    int colour = 0;
    char colours[64][8];
    for (int k = 0; k < nseries && k < 64; k++) {
        snprintf(colours[k], sizeof colours[k], "%s", s[k].dashed ? "#555555" : CYCLE[colour++ % 10]);
        // one polyline per run of points that can be drawn: a NaN or an infinity (a
        // diverged loss) ends the line and the next finite point starts another, never a
        // non-finite coordinate (a renderer takes it for an error and drops the line)
        int lines = 0;
        for (int i = 0; i < s[k].n || lines == 0; i++) { // an empty line when none can be drawn
            if (i < s[k].n && !drawn(&s[k], i))
                continue;
            mygpt_sb_printf(sb, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\"%s points=\"",
                            colours[k], s[k].dashed ? " stroke-dasharray=\"6 4\"" : "");
            for (; i < s[k].n && drawn(&s[k], i); i++)
                mygpt_sb_printf(sb, "%.1f,%.1f ", PX(series_x(&s[k], i)), PY(series_y(&s[k], i)));
            mygpt_sb_append(sb, "\"/>\n");
            lines++;
        }
        if (s[k].markers)
            for (int i = 0; i < s[k].n; i++)
                if (drawn(&s[k], i))
                    mygpt_sb_printf(sb, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"/>\n",
                                    PX(series_x(&s[k], i)), PY(series_y(&s[k], i)), colours[k]);
    }
    // legend: right of the area when asked (clear of the data), else top right inside
    const double lx = p->legend_outside ? p->x + p->w + 12 : p->x + p->w - 120, ly = p->y + 10;
    mygpt_sb_printf(sb, "<rect x=\"%.1f\" y=\"%.1f\" width=\"110\" height=\"%d\" fill=\"white\" fill-opacity=\"0.8\" stroke=\"#cccccc\"/>\n",
                    lx, ly, 20 * nseries + 6);
    for (int k = 0; k < nseries && k < 64; k++) {
        double yy = ly + 16 + 20 * k;
        mygpt_sb_printf(sb, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"%s/>\n",
                        lx + 8, yy - 4, lx + 30, yy - 4, colours[k],
                        s[k].dashed ? " stroke-dasharray=\"6 4\"" : "");
        text(fig, lx + 36, yy, 12, "start", 0, s[k].label ? s[k].label : "");
    }
    labels(fig, p, 0, 0);
#undef PX
#undef PY
}

/* ---- a PNG without a compression library: "stored" deflate blocks ---------------- */

/* CRC-32 as PNG defines it, bit by bit (a few MB of figure: no table needed). */
static uint32_t crc32_update(uint32_t crc, const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        crc ^= p[i];
        for (int k = 0; k < 8; k++)
            crc = crc & 1 ? 0xedb88320u ^ (crc >> 1) : crc >> 1;
    }
    return crc;
}

static void put32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

/* Appends one chunk (length, type, data, CRC of type + data) to buf. */
static void png_chunk(mygpt_strbuf *buf, const char *type, const unsigned char *data, size_t n)
{
    unsigned char head[8];
    put32(head, (uint32_t)n);
    memcpy(head + 4, type, 4);
    uint32_t crc = crc32_update(0xffffffffu, head + 4, 4);
    if (n)
        crc = crc32_update(crc, data, n);
    crc ^= 0xffffffffu;
    unsigned char tail[4];
    put32(tail, crc);
    mygpt_sb_appendn(buf, (const char *)head, 8);
    if (n) /* IEND has no data */
        mygpt_sb_appendn(buf, (const char *)data, n);
    mygpt_sb_appendn(buf, (const char *)tail, 4);
}

/* Appends a base64 PNG (8-bit RGB, no filtering, zlib with stored blocks) of
 * width x height pixels rgb to sb. */
static void png_base64(mygpt_strbuf *sb, const unsigned char *rgb, int width, int height)
{
    const size_t row = (size_t)width * 3 + 1, raw_len = row * height;
    mygpt_strbuf raw = {0}, z = {0}, png = {0};
    for (int y = 0; y < height; y++) { /* each row: filter type 0, then its pixels */
        mygpt_sb_appendn(&raw, "\0", 1);
        mygpt_sb_appendn(&raw, (const char *)rgb + (size_t)y * width * 3, (size_t)width * 3);
    }
    mygpt_sb_appendn(&z, "\x78\x01", 2); /* zlib header: deflate, 32 KiB window */
    uint32_t a = 1, b = 0;                 /* Adler-32 of the raw bytes */
    for (size_t off = 0; off < raw_len || off == 0; off += 65535) {
        const size_t n = raw_len - off < 65535 ? raw_len - off : 65535;
        const unsigned char hdr[5] = {off + n == raw_len, (unsigned char)n, (unsigned char)(n >> 8),
                                      (unsigned char)~n, (unsigned char)(~n >> 8)};
        mygpt_sb_appendn(&z, (const char *)hdr, 5);
        mygpt_sb_appendn(&z, raw.data + off, n);
        for (size_t i = 0; i < n; i++) {
            a = (a + (unsigned char)raw.data[off + i]) % 65521;
            b = (b + a) % 65521;
        }
        if (n == 0)
            break;
    }
    unsigned char adler[4];
    put32(adler, (b << 16) | a);
    mygpt_sb_appendn(&z, (const char *)adler, 4);
    unsigned char ihdr[13] = {0};
    put32(ihdr, (uint32_t)width);
    put32(ihdr + 4, (uint32_t)height);
    ihdr[8] = 8; /* bit depth */
    ihdr[9] = 2; /* colour type: RGB */
    mygpt_sb_appendn(&png, "\x89PNG\r\n\x1a\n", 8);
    png_chunk(&png, "IHDR", ihdr, sizeof ihdr);
    png_chunk(&png, "IDAT", (const unsigned char *)z.data, z.len);
    png_chunk(&png, "IEND", NULL, 0);
    static const char B64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const unsigned char *d = (const unsigned char *)png.data;
    for (size_t i = 0; i < png.len; i += 3) {
        const uint32_t v = (uint32_t)d[i] << 16 | (i + 1 < png.len ? (uint32_t)d[i + 1] << 8 : 0) |
                           (i + 2 < png.len ? d[i + 2] : 0);
        const char out[4] = {B64[v >> 18], B64[(v >> 12) & 63], i + 1 < png.len ? B64[(v >> 6) & 63] : '=',
                             i + 2 < png.len ? B64[v & 63] : '='};
        mygpt_sb_appendn(sb, out, 4);
    }
    if (raw.failed || z.failed || png.failed)
        sb->failed = 1;
    mygpt_sb_free(&raw);
    mygpt_sb_free(&z);
    mygpt_sb_free(&png);
}

/* The heatmap as one rectangle per cell. */
/* The colour of v in [vmin, vmax]: RdBu across, or its blue half (white to dark blue)
 * for a sequential map */
static void colour(const mygpt_svg_panel *p, double v, double vmin, double vmax, int rgb[3])
{
    const double t = (v - vmin) / (vmax - vmin);
    rdbu(p->sequential ? 0.5 + 0.5 * t : t, rgb);
}

static void heatmap_cells(mygpt_svg *fig, const mygpt_svg_panel *p, const float *data, int rows,
                          int cols, double vmin, double vmax)
{
    const double cw = p->w / cols, ch = p->h / rows;
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++) {
            int rgb[3];
            colour(p, data[(size_t)r * cols + c], vmin, vmax, rgb);
            // cells overlap by a hair so no seams show between them
            mygpt_sb_printf(&fig->sb, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"rgb(%d,%d,%d)\"/>\n",
                            p->x + c * cw, p->y + r * ch, cw + 0.3, ch + 0.3, rgb[0], rgb[1], rgb[2]);
        }
}

/* The heatmap as an embedded PNG, one pixel per cell, stretched over the panel. */
static void heatmap_image(mygpt_svg *fig, const mygpt_svg_panel *p, const float *data, int rows,
                          int cols, double vmin, double vmax)
{
    const size_t npix = (size_t)rows * cols;
    unsigned char *rgb = malloc(npix * 3 + 1);
    if (!rgb) {
        fig->sb.failed = 1;
        return;
    }
    for (size_t i = 0; i < npix; i++) {
        int c[3];
        colour(p, data[i], vmin, vmax, c);
        for (int k = 0; k < 3; k++)
            rgb[3 * i + k] = (unsigned char)c[k];
    }
    mygpt_sb_printf(&fig->sb, "<image x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                              "preserveAspectRatio=\"none\" image-rendering=\"optimizeSpeed\" "
                              "style=\"image-rendering:pixelated\" href=\"data:image/png;base64,",
                    p->x, p->y, p->w, p->h);
    png_base64(&fig->sb, rgb, cols, rows);
    mygpt_sb_append(&fig->sb, "\"/>\n");
    free(rgb);
}

void mygpt_svg_heatmap(mygpt_svg *fig, const mygpt_svg_panel *p, const float *data, int rows,
                       int cols, double vmin, double vmax, int colorbar)
{
    mygpt_strbuf *sb = &fig->sb;
    fig->axes += colorbar ? 2 : 1;
    if (rows < 1 || cols < 1)
        return; // no cell (the header says so)
    const double cw = p->w / cols, ch = p->h / rows;
    /* Small maps (the RoPE cache's 50 x 32): one rectangle per cell, crisp in every
     * renderer. Large ones (the 256 x 384 sinusoid map): one embedded PNG of rows x cols
     * pixels stretched over the panel, ~0.4 MB of SVG instead of 7.8 MB of rectangles. */
    if ((size_t)rows * cols <= 20000)
        heatmap_cells(fig, p, data, rows, cols, vmin, vmax);
    else
        heatmap_image(fig, p, data, rows, cols, vmin, vmax);
    mygpt_sb_printf(sb, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"black\"/>\n",
                    p->x, p->y, p->w, p->h);
    const double xs = p->xticks ? 1 : tick_step(cols), ys = p->yticks ? 1 : tick_step(rows);
    const double fs = p->xticks || p->yticks ? (ch < 12 ? ch : 12) : 12; // labels fit their cells
    for (double t = 0; t < cols; t += xs) { // imshow puts tick t at the centre of cell t
        char lab[32];
        snprintf(lab, sizeof lab, "%g", t);
        if (p->xticks) // upwards, ending under the column
            text(fig, p->x + (t + 0.5) * cw + fs / 3, p->y + p->h + 6, fs, "end", -90, p->xticks[(int)t]);
        else
            text(fig, p->x + (t + 0.5) * cw, p->y + p->h + 18, 12, "middle", 0, lab);
    }
    for (double t = 0; t < rows; t += ys) {
        char lab[32];
        snprintf(lab, sizeof lab, "%g", t);
        text(fig, p->x - 6, p->y + (t + 0.5) * ch + fs / 3, p->yticks ? fs : 12, "end", 0,
             p->yticks ? p->yticks[(int)t] : lab);
    }
    // the axis titles clear of the tick labels (tokens can be long)
    labels(fig, p, p->xticks ? 6 + label_reach(p->xticks, cols, fs) : 0,
           p->yticks ? 6 + label_reach(p->yticks, rows, fs) : 0);
    if (!colorbar)
        return;
    const double bx = p->x + p->w + 20, bw = 16, steps = 100;
    for (int i = 0; i < steps; i++) {
        int rgb[3];
        colour(p, vmax - (i + 0.5) / steps * (vmax - vmin), vmin, vmax, rgb);
        mygpt_sb_printf(sb, "<rect x=\"%.1f\" y=\"%.2f\" width=\"%.1f\" height=\"%.2f\" fill=\"rgb(%d,%d,%d)\"/>\n",
                        bx, p->y + i * p->h / steps, bw, p->h / steps + 0.3, rgb[0], rgb[1], rgb[2]);
    }
    mygpt_sb_printf(sb, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"black\"/>\n",
                    bx, p->y, bw, p->h);
    const double vs = tick_step(vmax - vmin);
    for (double t = ceil(vmin / vs) * vs; t <= vmax + 1e-9; t += vs) {
        char lab[32];
        snprintf(lab, sizeof lab, "%.2f", fabs(t) < 1e-12 ? 0.0 : t);
        double yy = p->y + (vmax - t) / (vmax - vmin) * p->h;
        text(fig, bx + bw + 6, yy + 4, 12, "start", 0, lab);
    }
}

void mygpt_svg_attention_grid(mygpt_svg *fig, const float *att, int L, int NH, int T,
                              const char *const *labels)
{
    // a panel 208 to 520 pixels wide: cells of 13 pixels, fewer larger ones, more smaller
    const double cell = T > 40 ? 520.0 / T : T < 16 ? 208.0 / T : 13, side = cell * T, top = 60;
    // room for the token labels (as long as the longest), the axis titles past them, and
    // the colour bar's ticks between one head and the next
    const double reach = 6 + label_reach(labels, T, cell < 12 ? cell : 12);
    const double left = reach + 40 > 120 ? reach + 40 : 120, gap_x = left + 80;
    const double gap_y = reach + 62 > 150 ? reach + 62 : 150;
    if (L < 1 || NH < 1 || T < 1) {
        mygpt_svg_begin(fig, left, top); // no head: an empty figure
        return;
    }
    mygpt_svg_begin(fig, left + NH * (side + gap_x), top + L * (side + gap_y));
    for (int l = 0; l < L; l++)
        for (int h = 0; h < NH; h++) {
            char title[64];
            snprintf(title, sizeof title, "layer %d, head %d", l, h);
            const mygpt_svg_panel p = {.x = left + h * (side + gap_x), .y = top + l * (side + gap_y),
                                       .w = side, .h = side, .title = title, .xticks = labels,
                                       .yticks = labels, .sequential = 1,
                                       .xlabel = "key: the token attended to",
                                       .ylabel = "query: the token attending"};
            mygpt_svg_heatmap(fig, &p, att + ((size_t)l * NH + h) * T * T, T, T, 0.0, 1.0, 1);
        }
}

mygpt_status mygpt_svg_save(mygpt_svg *fig, const char *path, mygpt_error *err)
{
    mygpt_sb_append(&fig->sb, "</svg>\n");
    mygpt_status st = MYGPT_OK;
    if (fig->sb.failed) {
        st = mygpt_fail(err, MYGPT_ENOMEM, "%s", "out of memory while drawing the figure");
    } else { // whole or not at all, as checkpoints: never a cut figure, never through a link
        st = mygpt_write_whole(path, fig->sb.data, fig->sb.len, err);
    }
    mygpt_sb_free(&fig->sb);
    return st;
}
