/*
 * figure.h: what the view shows, as a figure for slides and papers (SVG,
 * PNG or PDF, drawn with cairo; text set with Pango, which finds a font for
 * any script).
 *
 * The stage screen's heatmap (or every head side by side with g) is drawn
 * whole, cell by cell, with the screen's colour scale, its kinds of cell and
 * its legend; the model map, the sentence view and the predictions are drawn
 * from the screen itself, each character cell where the screen puts it.
 * A lesson's words are left out, and the heatmaps' cursor: a figure shows
 * the numbers (the screens drawn from their cells keep their own marks).
 */
#ifndef ATTNSCOPE_RENDER_FIGURE_H
#define ATTNSCOPE_RENDER_FIGURE_H

#include "attnscope/base/status.h"
#include "render/view.h"

enum figure_format { FIGURE_SVG, FIGURE_PNG, FIGURE_PDF };

/* The format a file's name asks for (.svg, .png, .pdf, any case); -1 for none of them. */
int figure_format_of(const char *path, enum figure_format *format);

/* Where a heatmap's cells are in a figure, in points from its top left corner. */
struct figure_cells {
    double x, y;           /* the first cell's top left corner */
    double cell_w, cell_h; /* each cell */
    int rows, cols;
};

/* What a figure holds (for the message and the tests). */
struct figure_result {
    double width, height; /* points (1/72 inch); a PNG has png_scale pixels per point */
    int png_scale;
    int heatmaps;                /* heatmaps drawn cell by cell (0: drawn from the screen) */
    struct figure_cells first;   /* the first one's cells */
    char what[256];              /* "layer 0 weights, head 1" */
    char legend[256];            /* the legend's words under the heatmap ("" when none) */
    char title[320];             /* the title's words */
    char names[512];             /* the heatmaps' names, ", " between ("head 0 k0, head 1 k0") */
};

/*
 * Writes what v shows of p to path, in the format its name asks for;
 * res may be NULL.  Errors name the file.
 */
enum attn_status figure_write(struct view *v, const struct pipeline *p, const char *path,
                              struct figure_result *res, struct attn_error *err);

/*
 * Gives back Pango's font map (and the fonts it holds) as the process ends,
 * so that a leak checker sees only what the libraries keep for good
 * (tests/valgrind.supp says what).  No figure may be drawn after.
 */
void figure_release(void);

#endif
