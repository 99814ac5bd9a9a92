/*
 * heads.c: the heatmaps of the stage screen, one head's or every head's
 * side by side (g), each head's cells and decimals chosen to fit, and the
 * room they leave the panel that explains the cell (beside them or below).
 */
#include "config.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/base/utf8.h"
#include "render/stagemap.h"
#include "render/parts/parts.h"
#include "render/view_parts.h"

/* How the all-heads grid tiles width w: heads per row and rows of tiles. */
void
view_tile_layout(int w, int heads, int *tiles, int *per_row, int *tile_rows)
{
    *tiles = heads < VIEW_MAX_TILES ? heads : VIEW_MAX_TILES;
    *per_row = *tiles;
    while (*per_row > 1 && w / *per_row < 16)
        (*per_row)--;
    *tile_rows = (*tiles + *per_row - 1) / *per_row;
}

bool
view_showing_grid(const struct view *v, const struct pipeline *p)
{
    return v->grid_heads && explain_stage_per_head(v->stage) && explain_stage_heads(p, v->stage) > 1;
}


#define TILE_MAX_CELL_W 8

/* From this width the panel may go beside the matrix. */
#define WIDE_SCREEN 110


/* The decimals_cap that gives the first tiles heads, w x h each, the decimals of the tightest. */
static int
tile_decimals_cap(struct view *v, const struct pipeline *p, int tiles, int w, int h)
{
    int fewest = 4;

    for (int t = 0; t < tiles; t++) {
        struct heatmap_spec spec;
        struct heatmap_geometry geo;
        struct rect r = { 0, 0, w, h };
        if (view_stage_spec(v, p, v->stage, t, &spec) != 0)
            continue;
        spec.max_cell_w = TILE_MAX_CELL_W;
        if (heatmap_measure(&spec, r, &geo) == 0 && geo.decimals < fewest)
            fewest = geo.decimals;
    }
    return fewest == 4 ? 0 : fewest;
}

/*
 * The compact grid, for heads whose matrices do not fit side by side with
 * numbers (a real model's 12 heads): the rows' labels once for each row of
 * heads, each head's cells one column wide in colour (a glyph without),
 * every head with the same rows and columns in sight and the same cursor;
 * heads that do not fit the height are paged (Tab moves the page with the
 * head).  As many heads side by side as show all their columns, and at
 * least as many as tiles of 16 columns when they must scroll.
 */
#define COMPACT_MIN_ROWS 8

/*
 * per_row heads side by side, fewer when the model groups its keys and
 * per_row holds at least one group: a whole number of groups (the query
 * heads that read one key and value head), so that each row of the grid
 * starts a group.
 */
static int
whole_groups(const struct pipeline *p, int per_row)
{
    int group;

    if (p->decoder == NULL || decoder_kv_heads(p->decoder) >= p->decoder->n_head)
        return per_row;
    group = p->decoder->n_head / decoder_kv_heads(p->decoder);
    return per_row >= group ? per_row / group * group : per_row;
}

struct compact {
    int lw;        /* the labels' columns */
    int per_row;   /* heads side by side */
    int tile_w;    /* columns per head, its gap included */
    int vis_rows;  /* matrix rows in sight */
    int per_page;  /* heads on one page */
    int first;     /* the page's first head */
};

static void
compact_layout(struct view *v, const struct pipeline *p, int w, int h, struct compact *c)
{
    struct heatmap_spec spec;
    const int heads = explain_stage_heads(p, v->stage);
    int rows = p->st.nq;
    int cols = p->st.nk;
    int avail;
    int least;
    int tile_rows;
    int page_rows;

    memset(c, 0, sizeof *c);
    c->lw = 3;
    if (view_stage_spec(v, p, v->stage, v->head, &spec) == 0) {
        c->lw = heatmap_label_width(&spec);
        rows = spec.m->rows;
        cols = spec.m->cols;
    }
    avail = w - c->lw - 1;
    c->per_row = avail / (cols + 1);
    least = avail / 16 < heads ? avail / 16 : heads;
    if (c->per_row < least)
        c->per_row = least;
    if (c->per_row > heads)
        c->per_row = heads;
    if (c->per_row > VIEW_MAX_TILES)
        c->per_row = VIEW_MAX_TILES;
    if (c->per_row < 1)
        c->per_row = 1;
    c->per_row = whole_groups(p, c->per_row);
    c->tile_w = avail / c->per_row;
    tile_rows = (heads + c->per_row - 1) / c->per_row;
    {
        const int want = rows < COMPACT_MIN_ROWS ? rows : COMPACT_MIN_ROWS;
        page_rows = tile_rows * (1 + want) <= h ? tile_rows : h / (1 + want);
    }
    if (page_rows < 1)
        page_rows = 1;
    c->vis_rows = h / page_rows - 1 < rows ? h / page_rows - 1 : rows;
    c->per_page = page_rows * c->per_row;
    if (c->per_page > VIEW_MAX_TILES)
        c->per_page = VIEW_MAX_TILES / c->per_row * c->per_row;
    if (c->per_page < 1)
        c->per_page = 1;
    c->first = v->head / c->per_page * c->per_page;
}

/*
 * Whether the grid of heads in w x h is the compact one: the usual tiles
 * (per_row side by side) would hide columns, or show no numbers anyway and
 * hide rows the compact grid's missing header would show.
 */
static bool
grid_is_compact(struct view *v, const struct pipeline *p, int w, int h, int per_row)
{
    struct heatmap_spec spec;
    struct heatmap_geometry geo;
    const int heads = explain_stage_heads(p, v->stage) < VIEW_MAX_TILES ? explain_stage_heads(p, v->stage) : VIEW_MAX_TILES;
    const int tile_rows = (heads + per_row - 1) / per_row;
    const struct rect r = { 0, 0, w / per_row - 1, h / tile_rows - 1 };

    if (view_stage_spec(v, p, v->stage, 0, &spec) != 0)
        return false;
    spec.max_cell_w = TILE_MAX_CELL_W;
    return heatmap_measure(&spec, r, &geo) != 0 || geo.vis_cols < spec.m->cols ||
           (geo.decimals < 0 && geo.vis_rows < spec.m->rows);
}

/*
 * Heads side by side in the all-heads grid of a w x h area: as many as show
 * the most decimals, among the layouts whose rows of tiles fit h (the most
 * side by side always may).  Two heads of 13 tokens in 120 columns show
 * numbers one above the other where side by side they are colour only.
 */
static int choose_per_row(struct view *v, const struct pipeline *p, int w, int h);

int
view_choose_per_row(struct view *v, const struct pipeline *p, int w, int h)
{
    const int per_row = choose_per_row(v, p, w, h);

    if (grid_is_compact(v, p, w, h, per_row)) {
        struct compact c;
        compact_layout(v, p, w, h, &c);
        return c.per_row;
    }
    return per_row;
}

static int
choose_per_row(struct view *v, const struct pipeline *p, int w, int h)
{
    int tiles;
    int most;
    int tile_rows;
    int best = 0;
    int best_decimals = -2;
    const int rows = p->st.nq;

    view_tile_layout(w, explain_stage_heads(p, v->stage), &tiles, &most, &tile_rows);
    for (int per_row = most; per_row >= 1; per_row--) {
        int cap;
        int decimals;
        tile_rows = (tiles + per_row - 1) / per_row;
        if (per_row < most && tile_rows * (rows + 2) > h)
            break;
        cap = tile_decimals_cap(v, p, tiles, w / per_row - 1, rows + 1);
        decimals = cap == 0 ? 4 : cap;
        if (decimals > best_decimals) {
            best_decimals = decimals;
            best = per_row;
        }
    }
    return whole_groups(p, best > 0 ? best : most);
}


/* What the heatmaps show in a w-column area: the fewest columns and decimals of any tile. */
struct heat_fit {
    int cols;
    int rows;
    int decimals;
    int per_row; /* tiles side by side (1 without the grid) */
    int width;   /* the columns they use */
};

static void
heat_fit(struct view *v, const struct pipeline *p, int w, int h, struct heat_fit *f)
{
    struct heatmap_spec spec;
    struct heatmap_geometry geo;
    const bool grid = view_showing_grid(v, p);
    int tiles = 1;
    int tile_rows = 1;
    int tw = w;

    f->cols = INT_MAX;
    f->rows = INT_MAX;
    f->decimals = 4;
    f->per_row = 1;
    f->width = 0;
    if (grid) {
        view_tile_layout(w, explain_stage_heads(p, v->stage), &tiles, &f->per_row, &tile_rows);
        f->per_row = view_choose_per_row(v, p, w, h);
        tw = w / f->per_row;
        tile_rows = (tiles + f->per_row - 1) / f->per_row;
    }
    for (int t = 0; t < tiles; t++) {
        /* A tile has a title row above it and a blank column after it. */
        struct rect r = { 0, 0, grid ? tw - 1 : tw, grid ? h / tile_rows - 1 : h };
        int used;
        bool measured = view_stage_spec(v, p, v->stage, grid ? t : v->head, &spec) == 0;
        if (measured) {
            spec.max_cell_w = grid ? TILE_MAX_CELL_W : HEAT_MAX_CELL_W;
            measured = heatmap_measure(&spec, r, &geo) == 0;
        }
        if (!measured) {
            f->cols = f->rows = 0;
            f->decimals = -1;
            continue;
        }
        f->cols = geo.vis_cols < f->cols ? geo.vis_cols : f->cols;
        f->rows = geo.vis_rows < f->rows ? geo.vis_rows : f->rows;
        f->decimals = geo.decimals < f->decimals ? geo.decimals : f->decimals;
        used = geo.width + (grid ? 1 : 0);
        f->width = used > f->width ? used : f->width;
    }
    f->width *= f->per_row;
}


/*
 * Whether the explanation panel goes beside the heatmaps, and how wide the
 * heatmaps are then, with height rows for the heatmaps and the panel.  The
 * matrix gets the room first.  Below the matrix the panel takes
 * PANEL_BELOW rows; beside it, PANEL_MIN columns.  The panel moves beside
 * the matrix when the matrix there still shows all it shows across the
 * whole screen (every column, as many decimals, as many tiles in a row).
 * Then the matrix (and its legend) take what they use and the panel the
 * rest.  So a wider or taller screen never shows fewer columns or decimals;
 * the one trade is rows: where widening brings the panel back below the
 * matrix, numbers appear and rows may scroll (check_render holds it to that).
 */
#define PANEL_MIN 44

bool
view_panel_beside(struct view *v, const struct pipeline *p, int width, int height, int *heat_w)
{
    struct heat_fit whole;
    struct heat_fit beside;
    struct heatmap_spec spec;
    int legend;

    *heat_w = width;
    if (width < WIDE_SCREEN)
        return false;
    heat_fit(v, p, width, height - PANEL_BELOW, &whole);
    heat_fit(v, p, width - PANEL_MIN - 2, height, &beside);
    if (beside.cols < whole.cols || beside.decimals < whole.decimals ||
        beside.per_row < whole.per_row)
        return false;
    *heat_w = beside.width;
    if (view_stage_spec(v, p, v->stage, v->head, &spec) == 0) {
        legend = heatmap_legend(NULL, 0, 0, width - PANEL_MIN - 2, &spec);
        if (legend > *heat_w)
            *heat_w = legend;
    }
    if (*heat_w > width - PANEL_MIN - 2)
        *heat_w = width - PANEL_MIN - 2;
    return true;
}

/* The compact grid (compact_layout) into r. */
static void
draw_compact(struct grid *g, struct rect r, struct view *v, const struct pipeline *p)
{
    const int heads = explain_stage_heads(p, v->stage);
    struct compact c;
    struct heatmap_spec spec;
    char buf[16];

    compact_layout(v, p, r.w, r.h, &c);
    v->frame.heads_first = c.first;
    v->frame.heads_shown = heads - c.first < c.per_page ? heads - c.first : c.per_page;
    for (int k = 0; k < c.per_page && c.first + k < heads; k++) {
        const int t = c.first + k;
        const int tx = r.x + c.lw + 1 + (k % c.per_row) * c.tile_w;
        const int ty = r.y + (k / c.per_row) * (c.vis_rows + 1);
        struct rect tr = { tx, ty + 1, c.tile_w - 1, c.vis_rows };
        struct heatmap_geometry *geo = &v->frame.geo[v->frame.tiles];
        int sr = v->scroll_row;
        int sc = v->scroll_col;
        if (ty + 2 > r.y + r.h || view_stage_spec(v, p, v->stage, t, &spec) != 0)
            break;
        spec.cursor_row = v->cursor_row;
        spec.cursor_col = v->cursor_col;
        spec.bare = true;
        spec.cell_w = 1;
        grid_printf(g, tx, ty, c.tile_w - 1,
                    style_role(t == v->head ? ROLE_INSPECT_TITLE : ROLE_DIM), "h%d%s%s", t,
                    view_key_head(p, t, buf, sizeof buf), t == v->head ? "*" : "");
        heatmap_render(g, tr, &spec, &sr, &sc, geo);
        if (k % c.per_row == 0) /* the rows' labels, once for the heads of this row */
            for (int i = 0; i < geo->vis_rows; i++)
                heatmap_row_label(g, r.x, geo->y0 + i, c.lw, &spec, geo->row0 + i);
        v->frame.tile_head[v->frame.tiles++] = t;
    }
}

void
view_draw_heatmaps(struct grid *g, struct rect r, struct view *v, const struct pipeline *p,
                   int per_row, int max_cell_w, int row_gap)
{
    struct heatmap_spec spec;
    const int heads = explain_stage_heads(p, v->stage);
    char buf[16];

    v->frame.tiles = 0;
    v->frame.heads_first = 0;
    v->frame.heads_shown = heads;
    /* (per_row is view_choose_per_row's: the compact grid's own when it chose that one) */
    if (view_showing_grid(v, p) && grid_is_compact(v, p, r.w, r.h, per_row)) {
        draw_compact(g, r, v, p);
        return;
    }
    if (view_showing_grid(v, p)) {
        /* Small multiples: one tile per head, the same cursor on each. */
        int tiles;
        int most;
        int tile_rows;
        int tw;
        int th;
        int cap;
        view_tile_layout(r.w, heads, &tiles, &most, &tile_rows);
        tile_rows = (tiles + per_row - 1) / per_row;
        tw = r.w / per_row;
        th = r.h / tile_rows;
        if (th < 3)
            tiles = per_row * (r.h / 3 > 0 ? r.h / 3 : 1), th = 3;
        /* Every tile shows as many decimals as the one with least room: heads side by side compare. */
        cap = tile_decimals_cap(v, p, tiles < heads ? tiles : heads, tw - 1, th - 1);
        for (int t = 0; t < tiles && t < heads; t++) {
            struct rect tr = { r.x + (t % per_row) * tw, r.y + (t / per_row) * th, tw - 1, th };
            int sr = v->scroll_row;
            int sc = v->scroll_col;
            if (tr.y + 2 > r.y + r.h)
                break;
            if (view_stage_spec(v, p, v->stage, t, &spec) != 0)
                return;
            spec.cursor_row = v->cursor_row;
            spec.cursor_col = v->cursor_col;
            spec.max_cell_w = TILE_MAX_CELL_W;
            spec.decimals_cap = cap;
            grid_printf(g, tr.x, tr.y, tr.w, style_role(t == v->head ? ROLE_INSPECT_TITLE : ROLE_DIM),
                        "head %d%s%s", t, view_key_head(p, t, buf, sizeof buf), t == v->head ? " *" : "");
            tr.y++;
            tr.h--;
            heatmap_render(g, tr, &spec, &sr, &sc, &v->frame.geo[v->frame.tiles]);
            v->frame.tile_head[v->frame.tiles++] = t;
        }
        return;
    }
    if (view_stage_spec(v, p, v->stage, v->head, &spec) != 0)
        return;
    spec.cursor_row = v->cursor_row;
    spec.cursor_col = v->cursor_col;
    if ((v->stage == VIEW_QROPE || v->stage == VIEW_KROPE) && p->decoder != NULL) {
        /* RoPE turns column t and column t + d/2 of a head together: the cursor's partner. */
        const int hd = decoder_head_dim(p->decoder);
        const int t = v->cursor_col % hd;
        spec.paired = true;
        spec.pair_col = v->cursor_col - t + (t < hd / 2 ? t + hd / 2 : t - hd / 2);
    }
    spec.max_cell_w = max_cell_w;
    spec.row_gap = row_gap;
    if (v->stage == VIEW_WEIGHTS && r.w > 3 * sinks_margin_width(p)) {
        /* (a model's learned sinks: each row's share in a column of its own, at the right) */
        const int margin = sinks_margin_width(p);
        r.w -= margin;
        heatmap_render(g, r, &spec, &v->scroll_row, &v->scroll_col, &v->frame.geo[0]);
        if (margin > 0) {
            const struct heatmap_geometry *geo = &v->frame.geo[0];
            const int x = geo->x0 + geo->vis_cols * geo->cell_w + 1;
            sinks_draw_margin(g, p, v->head, geo, x, r.x + r.w + margin - x);
        }
    } else
        heatmap_render(g, r, &spec, &v->scroll_row, &v->scroll_col, &v->frame.geo[0]);
    v->frame.tile_head[0] = v->head;
    v->frame.tiles = 1;
}

void
view_draw_legend(struct grid *g, int x0, int y, int w, struct view *v, const struct pipeline *p)
{
    struct heatmap_spec spec;
    const struct heatmap_geometry *geo = &v->frame.geo[0];
    char where[128] = "";

    if (view_stage_spec(v, p, v->stage, v->head, &spec) != 0)
        return;
    if (v->stage == VIEW_MASK && v->mask_matrix) {
        int x = grid_put(g, x0, y, w, style_role(ROLE_MASK_ALLOW), "see");
        x += grid_put(g, x0 + x, y, w - x, style_role(ROLE_DIM), " the query sees this key   ");
        x += grid_put(g, x0 + x, y, w - x, style_role(ROLE_MASK_FORBID), "hide");
        grid_put(g, x0 + x, y, w - x, style_role(ROLE_DIM),
                 v->paper ? " its score becomes -inf" : " its score becomes -inf (M: the scores)");
        return;
    }
    if (geo->vis_rows < spec.m->rows || geo->vis_cols < spec.m->cols)
        snprintf(where, sizeof where, "rows %d-%d of %d, cols %d-%d of %d", geo->row0 + 1,
                 geo->row0 + geo->vis_rows, spec.m->rows, geo->col0 + 1, geo->col0 + geo->vis_cols,
                 spec.m->cols);
    if (view_showing_grid(v, p) && v->frame.heads_shown < explain_stage_heads(p, v->stage)) {
        const size_t used = strlen(where);
        snprintf(where + used, sizeof where - used, "%sheads %d-%d of %d%s", used ? ", " : "",
                 v->frame.heads_first, v->frame.heads_first + v->frame.heads_shown - 1,
                 explain_stage_heads(p, v->stage), v->paper ? "" : " (Tab)");
    }
    heatmap_legend(g, x0, y, where[0] ? w - (int)strlen(where) - 1 : w, &spec);
    if (where[0])
        grid_put(g, x0 + w - (int)strlen(where), y, (int)strlen(where), style_role(ROLE_DIM), where);
}
