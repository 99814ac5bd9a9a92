/*
 * view_present.c: presentation mode's layout (z, --present).
 *
 * For a projector: no bars; the lesson's step and its words first, then the
 * matrix with its cells and row spacing scaled to the screen, the whole
 * centred; the cell's explanation where room is left (below, else beside,
 * else not at all; i hides it).  At the small sizes a zoomed projector font
 * gives (about 64x20) the step's title, the matrix rows around the cursor
 * and the narration stay whole: what does not fit of the narration is paged
 * with ] and [ and the page says so.
 */
#include "config.h"

#include <string.h>

#include "attnscope/base/utf8.h"
#include "render/explain.h"
#include "render/view_parts.h"

#define PRESENT_TEXT_MAX 100    /* the longest line of text: longer is hard to follow from afar */
#define PRESENT_CELL_MAX 16     /* the widest cell */
#define PRESENT_MATRIX_ROWS 4   /* matrix rows the narration always leaves room for */
#define PRESENT_PANEL_ROWS 6    /* the panel below the matrix: this many rows, or fewer if no more */
#define PRESENT_PANEL_MIN_ROWS 3
#define PRESENT_PANEL_MIN_COLS 36

/* The rows of the matrix with gap blank lines between each two, and its header. */
static int
matrix_rows(int n, int gap)
{
    return 1 + n + gap * (n - 1);
}

void
view_render_present(struct view *v, const struct pipeline *p, struct grid *g)
{
    const int W = g->width;
    const int H = g->height;
    const int text_w = W - 2 < PRESENT_TEXT_MAX ? W - 2 : PRESENT_TEXT_MAX;
    const bool grid_heads = view_showing_grid(v, p);
    char title[512];
    char formula[256];
    char explanation[1024] = "";
    struct heatmap_spec spec;
    struct heatmap_geometry geo;
    int n;
    int msg_rows;
    int title_rows;
    int text_rows;
    int heat_avail;
    int gap = 0;
    int per_row = 1;
    int heat_w;
    int heat_h;
    int panel_rows = 0; /* below the matrix */
    int panel_w = 0;    /* beside it */
    int block_w;
    int total;
    int x0;
    int y;

    if (view_stage_spec(v, p, v->stage, v->head, &spec) != 0)
        return;
    n = spec.m->rows;
    view_stage_title(v, p, title, sizeof title, formula, sizeof formula);
    title_rows = utf8_width(title) + 3 + utf8_width(formula) <= text_w ? 1 : 2;
    msg_rows = v->message != NULL ? 1 : 0;

    /* The words, as many as leave the matrix its header and a few rows. */
    if (v->narration != NULL) {
        text_rows = view_narration_rows(v, text_w);
    } else {
        view_explain_text(v, p, explanation, sizeof explanation);
        text_rows = view_count_wrapped(explanation, text_w);
    }
    {
        int cap = H - msg_rows - title_rows - 1 /* blank */ - 1 /* legend */ -
                  matrix_rows(n < PRESENT_MATRIX_ROWS ? n : PRESENT_MATRIX_ROWS, 0);
        if (text_rows > cap)
            text_rows = cap > 2 ? cap : 2;
    }
    heat_avail = H - msg_rows - text_rows - 1 - title_rows - 1;

    /* The matrix: cells as wide as the screen allows, rows spaced out as its height does. */
    if (grid_heads) {
        per_row = view_choose_per_row(v, p, W - 2, heat_avail);
        heat_w = W - 2;
        heat_h = heat_avail;
    } else {
        struct rect whole = { 0, 0, W - 2, heat_avail };
        spec.max_cell_w = PRESENT_CELL_MAX;
        if (heatmap_measure(&spec, whole, &geo) != 0)
            return;
        heat_w = geo.width;
        for (gap = 2; gap > 0; gap--)
            if (matrix_rows(n, gap) + 1 + PRESENT_PANEL_ROWS <= heat_avail)
                break;
        heat_h = matrix_rows(n, gap);
        if (heat_h > heat_avail)
            heat_h = heat_avail;
    }

    /* The panel: below if rows are left, else beside if columns are, else none. */
    if (!v->hide_panel) {
        int below = heat_avail - heat_h - 1;
        if (below >= PRESENT_PANEL_MIN_ROWS)
            panel_rows = below < PRESENT_PANEL_ROWS ? below : PRESENT_PANEL_ROWS;
        else if (W - 2 - heat_w - 3 >= PRESENT_PANEL_MIN_COLS)
            panel_w = W - 2 - heat_w - 3 < PRESENT_TEXT_MAX / 2 ? W - 2 - heat_w - 3
                                                                 : PRESENT_TEXT_MAX / 2;
    }

    /* Centred: the block is as wide as the text or the matrix and panel, whichever is wider. */
    block_w = heat_w + (panel_w > 0 ? panel_w + 3 : 0);
    if (block_w < text_w)
        block_w = text_w;
    x0 = (W - block_w) / 2;
    total = text_rows + 1 + title_rows + heat_h + 1 + (panel_rows > 0 ? 1 + panel_rows : 0);
    y = (H - msg_rows - total) / 2 > 0 ? (H - msg_rows - total) / 2 : 0;

    if (v->narration != NULL) {
        struct rect nr = { x0, y, block_w < W - x0 ? block_w : W - x0, text_rows };
        nr.w = nr.w < text_w ? nr.w : text_w;
        view_draw_narration(g, v, nr);
    } else {
        struct rect er = { x0, y, text_w, text_rows };
        view_draw_wrapped(g, er, style_role(ROLE_TEXT), explanation);
    }
    y += text_rows + 1;
    {
        int x = grid_put(g, x0, y, W - x0, style_role(ROLE_TITLE), title);
        if (title_rows == 1)
            grid_put(g, x0 + x + 3, y, W - x0 - x - 3, style_role(ROLE_FORMULA), formula);
        else
            grid_put(g, x0 + 2, y + 1, W - x0 - 2, style_role(ROLE_FORMULA), formula);
        y += title_rows;
    }
    {
        int hx = x0 + (block_w - heat_w - (panel_w > 0 ? panel_w + 3 : 0)) / 2;
        struct rect heat = { hx, y, heat_w, heat_h };
        view_draw_heatmaps(g, heat, v, p, per_row, PRESENT_CELL_MAX, gap);
        view_draw_legend(g, hx, y + heat_h, W - hx, v, p);
        if (panel_w > 0) {
            struct rect sep = { hx + heat_w + 1, y, 1, heat_h + 1 };
            struct rect insp = { hx + heat_w + 3, y, panel_w, heat_h + 1 };
            grid_fill(g, sep, v->utf8 ? 0x2502 : '|', style_role(ROLE_BORDER));
            view_draw_inspector(g, insp, v, p);
        } else if (panel_rows > 0) {
            struct rect insp = { hx, y + heat_h + 2, block_w - (hx - x0), panel_rows };
            view_draw_inspector(g, insp, v, p);
        }
    }
    if (v->message != NULL)
        view_draw_footer(g, v, H - 1);
}
