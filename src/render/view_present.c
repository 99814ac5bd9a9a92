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

#include <stdlib.h>
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

int
view_present_text_width(int width)
{
    return width - 2 < PRESENT_TEXT_MAX ? width - 2 : PRESENT_TEXT_MAX;
}

int
view_present_text_x(int width)
{
    return (width - view_present_text_width(width)) / 2;
}

/* The rows of the matrix with gap blank lines between each two, and its header. */
static int
matrix_rows(int n, int gap)
{
    return 1 + n + gap * (n - 1);
}

/* Presentation mode's layout of a frame: where the words, the title, the matrix and the panel go. */
struct present_layout {
    char title[512];
    char formula[256];
    char explanation[1024];
    struct heatmap_spec spec;
    int text_w;     /* the words' width */
    int msg_rows;
    int title_rows;
    int text_rows;
    int gap;        /* blank rows between the matrix's rows */
    int per_row;    /* heads side by side */
    int heat_w, heat_h;
    int panel_rows; /* below the matrix */
    int panel_w;    /* beside it */
    int block_w;    /* what is centred */
    int x0, y;      /* where it starts */
};

/* The room each part gets (see the file's comment); -1 when the matrix cannot be measured. */
static int
plan(struct view *v, const struct pipeline *p, const struct grid *g, struct present_layout *L)
{
    const int W = g->width;
    const int H = g->height;
    struct heatmap_geometry geo;
    int n;
    int heat_avail;
    int total;

    memset(L, 0, sizeof *L);
    L->per_row = 1;
    L->text_w = view_present_text_width(W);
    if (view_stage_spec(v, p, v->stage, v->head, &L->spec) != 0)
        return -1;
    n = L->spec.m->rows;
    view_stage_title(v, p, L->title, sizeof L->title, L->formula, sizeof L->formula);
    L->title_rows = utf8_width(L->title) + 3 + utf8_width(L->formula) <= L->text_w ? 1 : 2;
    L->msg_rows = v->message != NULL ? 1 : 0;

    /* The words, as many as leave the matrix its header and a few rows. */
    if (v->narration != NULL) {
        L->text_rows = view_narration_rows(v, L->text_w);
    } else {
        view_explain_text(v, p, L->explanation, sizeof L->explanation);
        L->text_rows = view_count_wrapped(L->explanation, L->text_w);
    }
    {
        int cap = H - L->msg_rows - L->title_rows - 1 /* blank */ - 1 /* legend */ -
                  matrix_rows(n < PRESENT_MATRIX_ROWS ? n : PRESENT_MATRIX_ROWS, 0);
        if (L->text_rows > cap)
            L->text_rows = cap > 2 ? cap : 2;
    }
    heat_avail = H - L->msg_rows - L->text_rows - 1 - L->title_rows - 1;

    /* The matrix: cells as wide as the screen allows, rows spaced out as its height does. */
    if (view_showing_grid(v, p)) {
        L->per_row = view_choose_per_row(v, p, W - 2, heat_avail);
        L->heat_w = W - 2;
        L->heat_h = heat_avail;
    } else {
        struct rect whole = { 0, 0, W - 2, heat_avail };
        L->spec.max_cell_w = PRESENT_CELL_MAX;
        if (heatmap_measure(&L->spec, whole, &geo) != 0)
            return -1;
        L->heat_w = geo.width;
        for (L->gap = 2; L->gap > 0; L->gap--)
            if (matrix_rows(n, L->gap) + 1 + PRESENT_PANEL_ROWS <= heat_avail)
                break;
        L->heat_h = matrix_rows(n, L->gap);
        if (L->heat_h > heat_avail)
            L->heat_h = heat_avail;
    }

    /* The panel: below if rows are left, else beside if columns are, else none. */
    if (!v->hide_panel) {
        int below = heat_avail - L->heat_h - 1;
        if (below >= PRESENT_PANEL_MIN_ROWS)
            L->panel_rows = below < PRESENT_PANEL_ROWS ? below : PRESENT_PANEL_ROWS;
        else if (W - 2 - L->heat_w - 3 >= PRESENT_PANEL_MIN_COLS)
            L->panel_w = W - 2 - L->heat_w - 3 < PRESENT_TEXT_MAX / 2 ? W - 2 - L->heat_w - 3
                                                                       : PRESENT_TEXT_MAX / 2;
    }

    /* Centred: the block is as wide as the text or the matrix and panel, whichever is wider. */
    L->block_w = L->heat_w + (L->panel_w > 0 ? L->panel_w + 3 : 0);
    if (L->block_w < L->text_w)
        L->block_w = L->text_w;
    L->x0 = (W - L->block_w) / 2;
    total = L->text_rows + 1 + L->title_rows + L->heat_h + 1 +
            (L->panel_rows > 0 ? 1 + L->panel_rows : 0);
    L->y = (H - L->msg_rows - total) / 2 > 0 ? (H - L->msg_rows - total) / 2 : 0;
    return 0;
}

/* The frame as plan laid it out. */
static void
draw_present(struct view *v, const struct pipeline *p, struct grid *g,
             const struct present_layout *lp);

void
view_render_present(struct view *v, const struct pipeline *p, struct grid *g)
{
    struct present_layout *L = malloc(sizeof *L);
    const char *full = v->narration;

    if (L == NULL)
        return;
    if (plan(v, p, g, L) != 0) {
        free(L);
        return;
    }
    /*
     * Words never point at what the layout left out: with no room for the
     * cell panel, the step's narration without what speaks of it, and the
     * layout made again for it (which the shorter words may give the panel
     * room in: it is shown then, unspoken of).
     */
    if (full != NULL && v->narration_bare != NULL && L->panel_rows == 0 && L->panel_w == 0 &&
        strcmp(full, v->narration_bare) != 0) {
        v->narration = v->narration_bare;
        if (plan(v, p, g, L) != 0) {
            v->narration = full;
            free(L);
            return;
        }
    }
    draw_present(v, p, g, L);
    v->narration = full;
    free(L);
}

static void
draw_present(struct view *v, const struct pipeline *p, struct grid *g,
             const struct present_layout *lp)
{
    const struct present_layout L = *lp;
    const int W = g->width;
    int y;

    y = L.y;
    if (v->narration != NULL) {
        /* (at the same column on every step and screen, whatever the matrix's width) */
        struct rect nr = { view_present_text_x(W), y, L.text_w, L.text_rows };
        view_draw_narration(g, v, nr);
    } else {
        struct rect er = { L.x0, y, L.text_w, L.text_rows };
        view_draw_wrapped(g, er, style_role(ROLE_TEXT), L.explanation);
    }
    y += L.text_rows + 1;
    {
        int x = grid_put(g, L.x0, y, W - L.x0, style_role(ROLE_TITLE), L.title);
        if (L.title_rows == 1)
            grid_put(g, L.x0 + x + 3, y, W - L.x0 - x - 3, style_role(ROLE_FORMULA), L.formula);
        else
            grid_put(g, L.x0 + 2, y + 1, W - L.x0 - 2, style_role(ROLE_FORMULA), L.formula);
        y += L.title_rows;
    }
    {
        int hx = L.x0 + (L.block_w - L.heat_w - (L.panel_w > 0 ? L.panel_w + 3 : 0)) / 2;
        struct rect heat = { hx, y, L.heat_w, L.heat_h };
        view_draw_heatmaps(g, heat, v, p, L.per_row, PRESENT_CELL_MAX, L.gap);
        view_draw_legend(g, hx, y + L.heat_h, W - hx, v, p);
        if (L.panel_w > 0) {
            struct rect sep = { hx + L.heat_w + 1, y, 1, L.heat_h + 1 };
            struct rect insp = { hx + L.heat_w + 3, y, L.panel_w, L.heat_h + 1 };
            grid_fill(g, sep, v->utf8 ? 0x2502 : '|', style_role(ROLE_BORDER));
            view_draw_inspector(g, insp, v, p);
        } else if (L.panel_rows > 0) {
            struct rect insp = { hx, y + L.heat_h + 2, L.block_w - (hx - L.x0), L.panel_rows };
            view_draw_inspector(g, insp, v, p);
        }
    }
    if (v->message != NULL)
        view_draw_footer(g, v, g->height - 1);
}

struct rect
view_inked(const struct grid *g, int rows)
{
    struct rect r = { g->width, rows, 0, 0 };
    int x1 = -1;
    int y1 = -1;

    for (int y = 0; y < rows; y++)
        for (int x = 0; x < g->width; x++) {
            const struct cell *c = grid_at(g, x, y);
            if (c->ch == ' ' && c->role != ROLE_HEAT)
                continue;
            r.x = x < r.x ? x : r.x;
            r.y = y < r.y ? y : r.y;
            x1 = x > x1 ? x : x1;
            y1 = y > y1 ? y : y1;
        }
    if (x1 < 0)
        return (struct rect){ 0, 0, 0, 0 };
    r.w = x1 - r.x + 1;
    r.h = y1 - r.y + 1;
    return r;
}

void
view_present_screen(struct view *v, const struct pipeline *p, struct grid *g,
                    void (*draw)(struct grid *g, struct view *v, const struct pipeline *p))
{
    struct grid sub;
    struct rect ink;
    const int body = g->height - 1; /* the last row: a message */
    int dx;
    int dy;

    if (grid_create(&sub, g->width, g->height) != 0) {
        draw(g, v, p);
        return;
    }
    sub.high_contrast = g->high_contrast;
    v->frame.narration_x = -1;
    draw(&sub, v, p);
    ink = view_inked(&sub, body);
    dx = (g->width - ink.w) / 2 - ink.x;
    if (v->frame.narration_x >= 0) {
        /* A lesson's words where the stage screen puts them, the rest moved with them (kept on
           the screen): they stay in place from step to step. */
        dx = view_present_text_x(g->width) - v->frame.narration_x;
        if (ink.x + ink.w + dx > g->width)
            dx = g->width - ink.x - ink.w;
        if (ink.x + dx < 0)
            dx = -ink.x;
        v->frame.narration_x += dx;
    }
    dy = (body - ink.h) / 2 - ink.y;
    for (int y = ink.y; y < ink.y + ink.h; y++)
        for (int x = ink.x; x < ink.x + ink.w; x++)
            *grid_at(g, x + dx, y + dy) = *grid_at(&sub, x, y);
    for (int x = 0; x < g->width; x++)
        *grid_at(g, x, body) = *grid_at(&sub, x, body);
    grid_destroy(&sub);
}
