/*
 * screen_stage.c: the stage screen, where every view opens.  Top to
 * bottom: the knob bar, the sentence, the stage bar, the stage's title and
 * formula, its explanation (or a lesson's words), the heatmap (or every
 * head's side by side) with its legend, the panel that explains the cell
 * (to the right on wide screens, below otherwise), and the footer.
 * Presentation mode has a layout of its own (view_present.c).
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/base/utf8.h"
#include "render/screens/screen.h"
#include "render/stagemap.h"
#include "render/view_parts.h"

/*
 * From row y down: the heatmaps' rectangle (one head's, or the grid of
 * heads, per_row of them side by side), the row of their legend, and the
 * panel's rectangle, beside them on a screen wide enough to keep every
 * column (then true) and below them otherwise.
 */
static bool
split_room(const struct grid *g, struct view *v, const struct pipeline *p, int y, int rows,
           struct rect *heat, struct rect *insp, int *per_row, int *legend_y)
{
    const int bottom = g->height - 1; /* the footer */
    const int avail = bottom - y - 1; /* one row for the legend */
    int heat_w = g->width;
    const bool wide = !v->hide_panel &&
                      view_panel_beside(v, p, g->width, g->height - y - 2 /* legend, footer */,
                                        &heat_w);
    const int insp_min = wide || v->hide_panel ? 0 : PANEL_BELOW;
    int want = rows + 1;

    *per_row = 1;
    if (view_showing_grid(v, p)) {
        int tiles;
        int tile_rows;
        view_tile_layout(heat_w, p->st.shape.heads, &tiles, per_row, &tile_rows);
        *per_row = view_choose_per_row(v, p, heat_w, avail - insp_min);
        tile_rows = (tiles + *per_row - 1) / *per_row;
        want = tile_rows * (rows + 2);
    }
    if (want > avail - insp_min)
        want = avail - insp_min;
    if (want < 3)
        want = avail < 3 ? avail : 3;
    if (wide) {
        *heat = (struct rect){ 0, y, heat_w, want };
        /* a blank column, the separator, a blank column */
        *insp = (struct rect){ heat_w + 3, y, g->width - (heat_w + 3), bottom - y };
    } else {
        *heat = (struct rect){ 0, y, g->width, want };
        *insp = (struct rect){ 0, y + want + 2, g->width, bottom - (y + want + 2) };
    }
    *legend_y = y + want;
    return wide;
}

static void
stage_draw(struct grid *g, struct view *v, const struct pipeline *p)
{
    char formula[256];
    char text[1024];
    char title[512];
    int y;
    int explain_rows;
    bool wide;
    int per_row = 1; /* heads side by side in the grid */
    struct rect heat;
    struct rect insp;
    int legend_y;
    struct heatmap_spec spec;

    view_clamp(v, p);
    view_draw_knob_bar(g, v, p);
    view_draw_sentence(g, v, p, 1);
    view_draw_stage_bar(g, v, p, 2);
    y = 3;
    view_stage_title(v, p, title, sizeof title, formula, sizeof formula);
    if (view_stage_spec(v, p, v->stage, v->head, &spec) != 0)
        return;
    {
        int x = grid_put(g, 0, y, g->width, style_role(ROLE_TITLE), title);
        x += grid_put(g, x, y, g->width - x, style_role(ROLE_TEXT), "   ");
        if (x + utf8_width(formula) <= g->width)
            grid_put(g, x, y, g->width - x, style_role(ROLE_FORMULA), formula);
        else
            grid_put(g, 2, ++y, g->width - 2, style_role(ROLE_FORMULA), formula);
    }
    y++;
    if (v->narration != NULL) {
        /*
         * The lesson's words replace the stage's own explanation; with the
         * cell panel hidden (i), without what speaks of it.
         */
        const char *full = v->narration;
        int cap = g->height / 3;
        struct rect nr = { 0, y, g->width, 0 };
        if (v->hide_panel && v->narration_bare != NULL)
            v->narration = v->narration_bare;
        nr.h = view_narration_rows(v, g->width);
        if (nr.h > cap)
            nr.h = cap;
        explain_rows = view_draw_narration(g, v, nr);
        v->narration = full;
    } else {
        view_explain_text(v, p, text, sizeof text);
        explain_rows = view_count_wrapped(text, g->width);
        if (explain_rows > 3)
            explain_rows = 3;
        if (g->height < 22 && explain_rows > 2)
            explain_rows = 2;
        {
            struct rect er = { 0, y, g->width, explain_rows };
            view_draw_wrapped(g, er, style_role(ROLE_DIM), text);
        }
    }
    y += explain_rows + 1;

    /* The heatmap gets the room it needs; the inspector the rest. */
    wide = split_room(g, v, p, y, spec.m->rows, &heat, &insp, &per_row, &legend_y);
    view_draw_heatmaps(g, heat, v, p, per_row, HEAT_MAX_CELL_W, 0);
    view_draw_legend(g, 0, legend_y, heat.w, v, p);
    if (wide) {
        struct rect sep = { insp.x - 2, insp.y, 1, insp.h };
        grid_fill(g, sep, v->utf8 ? 0x2502 : '|', style_role(ROLE_BORDER));
    }
    if (!v->hide_panel)
        view_draw_inspector(g, insp, v, p);
    view_draw_footer(g, v, g->height - 1);
}

static void
stage_present(struct grid *g, struct view *v, const struct pipeline *p)
{
    view_clamp(v, p);
    view_render_present(v, p, g);
}

const struct screen screen_stage = { "stage", NULL, stage_draw, stage_present };
