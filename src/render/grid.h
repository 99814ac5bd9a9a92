/*
 * grid.h: an off-screen frame of character cells.
 *
 * The renderer draws every frame into a struct grid; the TUI copies it to the
 * terminal, --heatmap turns it into text with escapes, and the tests turn it
 * into golden text.  Nothing here knows of curses.
 */
#ifndef ATTNSCOPE_RENDER_GRID_H
#define ATTNSCOPE_RENDER_GRID_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "render/palette.h"

/* The second column of a double-width character. */
#define GRID_CONTINUATION 0xFFFFFFFFu

/* The most cells a grid may have (2 GiB of cells): larger ones are refused. */
#define GRID_MAX_CELLS ((size_t)1 << 28)

struct cell {
    uint32_t ch;      /* a code point, or GRID_CONTINUATION */
    uint8_t role;     /* enum palette_role */
    uint8_t attr;     /* ATTR_* on top of the role's own */
    uint8_t ramp;     /* enum palette_ramp, for ROLE_HEAT */
    uint8_t level;    /* 0..255 along the ramp, for ROLE_HEAT */
};

struct grid {
    int width;
    int height;
    struct cell *cells; /* (height, width) */
    bool high_contrast; /* for a projector: no dim text (presentation mode) */
};

struct rect {
    int x, y, w, h;
};

struct style {
    enum palette_role role;
    int attr;
    enum palette_ramp ramp;
    int level;
};

/* A grid of blanks; returns -1 when out of memory. */
int grid_create(struct grid *g, int width, int height);
void grid_destroy(struct grid *g);
void grid_clear(struct grid *g);

static inline struct cell *
grid_at(const struct grid *g, int x, int y)
{
    return &g->cells[(size_t)y * (size_t)g->width + (size_t)x];
}

static inline struct style
style_role(enum palette_role role)
{
    struct style s = { role, 0, RAMP_SEQUENTIAL, 0 };
    return s;
}

/*
 * Writes UTF-8 text at (x, y), clipped to max_w columns and to the grid;
 * returns the columns written.
 */
int grid_put(struct grid *g, int x, int y, int max_w, struct style st, const char *text);

/*
 * Like grid_put, but text longer than max_w columns ends in an ellipsis
 * (U+2026) at the last column, so that a cut line reads as cut.
 */
int grid_put_cut(struct grid *g, int x, int y, int max_w, struct style st, const char *text);

/* Like grid_put_cut, with printf formatting. */
int grid_printf_cut(struct grid *g, int x, int y, int max_w, struct style st, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

/* Like grid_put, with printf formatting. */
int grid_printf(struct grid *g, int x, int y, int max_w, struct style st, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

/* Sets one cell. */
void grid_set(struct grid *g, int x, int y, uint32_t ch, struct style st);

/* Fills a rectangle with ch in a style. */
void grid_fill(struct grid *g, struct rect r, uint32_t ch, struct style st);

/* Adds attributes to every cell of a rectangle (the cursor's reverse video). */
void grid_add_attr(struct grid *g, struct rect r, int attr);

/*
 * The colours a cell is drawn in on a terminal of the given depth: colour
 * numbers in that depth's numbering (0xRRGGBB for DEPTH_DIRECT, 0-255, or
 * 0-7), -1 for the terminal's default.  Without colour both are -1.
 */
void grid_cell_colours(const struct cell *c, enum palette_depth depth, int *fg, int *bg);

/* The attributes (ATTR_*) a cell of g is drawn with: its role's and its own (no dim if g is high_contrast). */
int grid_cell_attrs(const struct grid *g, const struct cell *c, enum palette_depth depth);

/*
 * Writes the grid as text with ANSI escape sequences for its colours and
 * attributes, one line per row, trailing blanks cut.  At DEPTH_MONO the text
 * is plain, without any escape sequence.
 */
void grid_write_ansi(const struct grid *g, FILE *out, enum palette_depth depth);

/* Writes the characters of the grid, one line per row, trailing blanks cut. */
void grid_dump_text(const struct grid *g, FILE *out);

/*
 * Writes the styles of the grid, one line per row: each cell as its role's
 * letter (see palette.h), heatmap cells as a digit 0-9 for their level, and
 * the cursor (reverse video) as '#'.
 */
void grid_dump_styles(const struct grid *g, FILE *out);

#endif
