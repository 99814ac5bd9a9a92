/*
 * heatmap.h: a matrix drawn as a heatmap into a rectangle of a grid.
 *
 * Token labels run down the left and across the top; each cell is coloured
 * by its value along a ramp (or, without colour, carries a glyph of a ramp)
 * and shows the value when it fits.  Cells that are -inf, hidden by the
 * mask, dropped by dropout or NaN each look different from any value.  A
 * matrix larger than the rectangle scrolls so that the cursor stays visible.
 */
#ifndef ATTNSCOPE_RENDER_HEATMAP_H
#define ATTNSCOPE_RENDER_HEATMAP_H

#include <stdbool.h>

#include "attnscope/kernels/matrix.h"
#include "render/grid.h"

/* A masked cell's hatching and the cursor's pointer, in UTF-8 ('/' and '>' in ASCII). */
#define HEAT_HATCH 0x2571u   /* BOX DRAWINGS LIGHT DIAGONAL UPPER RIGHT TO LOWER LEFT */
#define HEAT_POINTER 0x25B8u /* BLACK RIGHT-POINTING SMALL TRIANGLE */

enum heat_kind {
    HEAT_VALUE,
    HEAT_NEG_INF,  /* -inf: a masked score */
    HEAT_MASKED,   /* a weight that is 0 because the mask hides the key */
    HEAT_DROPPED,  /* a weight dropout set to 0 */
    HEAT_NAN,
    HEAT_ALLOW,    /* the mask itself: this key is visible */
    HEAT_FORBID,   /* the mask itself: this key is hidden */
    HEAT_CHOSEN,   /* a router's cell whose expert the token was sent to: its value, marked */
    HEAT_ABSENT    /* no number here (a query row past the last query): left blank */
};

struct heatmap_spec {
    const struct matrix *m;          /* (rows, cols) */
    const char *const *row_labels;   /* (rows) */
    const unsigned char *row_marked; /* (rows) 1: a made-up token (underlined, '*'), or NULL */
    const char *const *col_labels;   /* (cols), or NULL for col_prefix + index */
    const char *col_prefix;
    int col_group;                   /* columns per head, to label "h1.0"; 0: none */
    enum palette_ramp ramp;
    float lo, hi;                    /* the range the ramp spans */
    int range_heads;                 /* >1: lo..hi spans that many heads, not just m (legend says so) */
    bool range_skips_first;          /* lo..hi leaves column 0 out (legend says so) */
    bool log_scale;                  /* the ramp spans log(lo)..log(hi), lo > 0 (legend says so) */
    /*
     * The numbers' own smallest and largest (the cells the mask hides left
     * out), when data_known: the legend gives them, and the scale beside
     * them where it differs (weights start at 0; heads share one scale).
     */
    bool data_known;
    float data_lo, data_hi;
    /* The kind of cell (i, j); NULL: from the value alone (-inf, NaN). */
    enum heat_kind (*kind)(const void *ctx, int i, int j);
    const void *kind_ctx;
    /*
     * Marks seen[k] for each kind some cell has, as kind would say cell by
     * cell, for the legend; NULL: the legend asks kind of every cell (a
     * million calls on a real model's weights).
     */
    void (*kinds)(const void *ctx, int seen[HEAT_ABSENT + 1]);
    int cursor_row, cursor_col;      /* -1: no cursor */
    /* paired: the cursor's partner (RoPE's other half of the pair), column pair_col of its row. */
    bool paired;
    int pair_col;
    int max_cell_w;                  /* widest cell (larger in presentation mode) */
    int row_gap;                     /* blank lines between rows (presentation mode) */
    int decimals_cap;                /* 0: as many as fit; 2: at most 2; -1: no numbers */
    /*
     * Bare: no labels and no header row, the cells from the rectangle's top
     * left (heads side by side, whose labels are drawn once for a row of
     * them); cell_w > 0: cells this wide, colour only.
     */
    bool bare;
    int cell_w;
    bool colour;
    bool utf8;
};

struct heatmap_geometry {
    int x0, y0;        /* the top-left visible data cell on screen */
    int row_h;         /* screen rows per matrix row */
    int cell_w;        /* columns per cell */
    int row0, col0;    /* the first visible row and column */
    int vis_rows, vis_cols;
    int decimals;      /* decimals shown in cells; -1: no numbers (too narrow) */
    int width;         /* columns used: the labels and the visible cells */
};

/*
 * The geometry spec would have in r, without drawing (scrolled to the top
 * left); -1 when r is too small for any cell.
 */
int heatmap_measure(const struct heatmap_spec *spec, struct rect r, struct heatmap_geometry *geo);

/*
 * Draws spec into r of g; scroll (in and out) is the first visible row and
 * column, adjusted to keep the cursor in view.  Fills geo for hit-testing.
 */
void heatmap_render(struct grid *g, struct rect r, const struct heatmap_spec *spec,
                    int *scroll_row, int *scroll_col, struct heatmap_geometry *geo);

/*
 * label in at most width columns: whole when it fits; else cut with an
 * ellipsis, keeping the number at its end ("·fox#10" in 6 columns is
 * "·f…#10", "d10" in 2 is "10"), so that a cut label never reads as another.
 */
void heatmap_fit_label(const char *label, int width, char *buf, size_t size);

/*
 * Row i's label at (x, y) in w columns, as the heatmap draws it (fitted,
 * bold on the cursor's row, a made-up token marked): for labels drawn once
 * beside several bare heatmaps.
 */
void heatmap_row_label(struct grid *g, int x, int y, int w, const struct heatmap_spec *spec, int i);

/* The columns spec's row labels take (at most the renderer's cap). */
int heatmap_label_width(const struct heatmap_spec *spec);

/*
 * Scrolls *first (the first of visible places of total shown) as little as
 * keeps cursor (or nothing, when -1) in sight, within 0 .. total - visible.
 */
void heatmap_keep_in_sight(int *first, int visible, int total, int cursor);

/* The ramp level (0..255) of value v under spec's range. */
int heatmap_level(const struct heatmap_spec *spec, float v);

/* The cell kind of (i, j), asking spec->kind when there is one. */
enum heat_kind heatmap_kind(const struct heatmap_spec *spec, int i, int j);

/*
 * Draws the legend on row y from x, at most w columns: the range with the
 * ramp between, then the special cells this matrix has, each item whole or
 * not at all.  Returns the columns used; with g NULL only measures.
 */
int heatmap_legend(struct grid *g, int x, int y, int w, const struct heatmap_spec *spec);
/*
 * "before lo", the ramp's 16 steps (colours, or glyphs without colour),
 * "after hi" at (x, y) when all of it fits in w; its width, or 0 (nothing
 * drawn).  g NULL: the width alone.
 */
int heatmap_scale(struct grid *g, int x, int y, int w, enum palette_ramp ramp, bool colour, bool utf8,
                  const char *before, const char *lo, const char *after, const char *hi);

/*
 * Maps screen (sx, sy) to a cell; returns 0 and sets *row, *col, or -1 when
 * the point is not on a data cell.
 */
int heatmap_hit(const struct heatmap_geometry *geo, int sx, int sy, int *row, int *col);

/* Formats v in at most width columns with up to decimals decimals. */
void heatmap_format(char *buf, size_t size, float v, int width, int decimals);

#endif
