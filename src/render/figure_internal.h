/*
 * figure_internal.h: what figure.c (the drawing) and figure_file.c (the
 * file) share.  Not for use outside src/render.
 */
#ifndef ATTNSCOPE_FIGURE_INTERNAL_H
#define ATTNSCOPE_FIGURE_INTERNAL_H

#include <cairo.h>

#include "render/figure.h"

#define FIG_MARGIN 16.0       /* around what is drawn */
#define FIG_PNG_SCALE 2       /* pixels per point in a PNG */
#define FIG_PNG_MAX_PX 16000  /* a side longer than this: one pixel per point */

/* What v shows, drawn on cr from (0, 0) on (figure.c); 0, or -1 out of memory. */
int figure_draw(cairo_t *cr, struct view *v, const struct pipeline *p, struct figure_result *res);

#endif
