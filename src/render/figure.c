/*
 * figure.c: the view as a figure (figure.h).
 *
 * Everything is drawn in points, twice: onto a cairo recording surface,
 * whose extent sizes the page, then onto an SVG, PDF or PNG surface of that
 * size (vectors stay vectors).  Text goes through Pango at 72
 * points per inch, so a token in any script finds a font that has it.
 * Two drawings: a heatmap cell by cell (the stage screen), and a screen's
 * character cells as they are on the screen (the legend, the map, the
 * sentence view, the predictions), each run of one style set in a
 * monospaced font at its column.
 */
#include "config.h"

#include <cairo-pdf.h>
#include <cairo-svg.h>
#include <cairo.h>
#include <errno.h>
#include <math.h>
#include <pango/pangocairo.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attnscope/base/utf8.h"
#include "attnscope/decoder/mixer.h"
#include "attnscope/families/model/headmap.h"
#include "attnscope/families/model/family_model.h"
#include "render/explain.h"
#include "render/figure.h"
#include "render/figure_internal.h"
#include "render/screens/screen.h"
#include "render/view_parts.h"

#define FIG_SANS "DejaVu Sans, sans-serif"
#define FIG_MONO "DejaVu Sans Mono, monospace"
#define FIG_GAP 14.0          /* between a heatmap and what follows it */
#define FIG_SCREEN_COLS 110   /* a screen drawn for a figure: this wide */
#define FIG_SCREEN_ROWS 160   /* and at most this tall */
#define FIG_BITMAP_CELLS 4096 /* more cells than this, colour only: drawn as one image */

static const struct rgb INK = { 0, 0, 0 };
static const struct rgb PAPER = { 255, 255, 255 };
static const struct rgb GREY = PALETTE_GREY_ON_ANY;
static const struct rgb TEAL = { 0, 102, 102 }; /* a formula, as the screen's cyan on paper */
static const struct rgb RED = { 170, 0, 0 };

struct fig {
    cairo_t *cr;
    PangoContext *ctx;
    PangoFontDescription *sans, *bold, *small, *mono, *mono_bold;
    double mono_w, mono_h; /* one character cell of a screen */
};

static void
set_rgb(cairo_t *cr, struct rgb c)
{
    cairo_set_source_rgb(cr, c.r / 255.0, c.g / 255.0, c.b / 255.0);
}

static bool
same_rgb(struct rgb a, struct rgb b)
{
    return a.r == b.r && a.g == b.g && a.b == b.b;
}

static PangoLayout *
layout_of(struct fig *f, const PangoFontDescription *font, const char *text)
{
    PangoLayout *l = pango_layout_new(f->ctx);

    pango_layout_set_font_description(l, font);
    pango_layout_set_text(l, text, -1);
    return l;
}

static void
text_size(struct fig *f, const PangoFontDescription *font, const char *text, double *w, double *h)
{
    PangoLayout *l = layout_of(f, font, text);
    PangoRectangle logical;

    pango_layout_get_extents(l, NULL, &logical);
    *w = logical.width / (double)PANGO_SCALE;
    *h = logical.height / (double)PANGO_SCALE;
    g_object_unref(l);
}

/* Text with its top left (align 0), top right (1) or top centre (2) at (x, y); its width. */
static double
text_at(struct fig *f, double x, double y, const PangoFontDescription *font, struct rgb c,
        int align, const char *text)
{
    PangoLayout *l = layout_of(f, font, text);
    PangoRectangle logical;
    double w;

    pango_layout_get_extents(l, NULL, &logical);
    w = logical.width / (double)PANGO_SCALE;
    x -= align == 1 ? w : align == 2 ? w / 2 : 0;
    set_rgb(f->cr, c);
    cairo_move_to(f->cr, x, y);
    pango_cairo_update_layout(f->cr, l);
    pango_cairo_show_layout(f->cr, l);
    g_object_unref(l);
    return w;
}

static void
fill_rect(cairo_t *cr, double x, double y, double w, double h, struct rgb c)
{
    set_rgb(cr, c);
    cairo_rectangle(cr, x, y, w, h);
    cairo_fill(cr);
}

/* ------------------------------------------------------- a screen's cells */

/* A cell's colours on paper: the screen's own where it has them, ink on paper where not. */
static void
cell_colours(const struct cell *c, struct rgb *fg, struct rgb *bg, bool *bold)
{
    struct rgb rfg;
    struct rgb rbg;
    bool own_bg;

    *fg = INK;
    *bg = PAPER;
    *bold = (c->attr & ATTR_BOLD) != 0 || c->role == ROLE_TITLE || c->role == ROLE_INSPECT_TITLE;
    if (c->role == ROLE_HEAT) {
        *bg = palette_ramp_rgb((enum palette_ramp)c->ramp, c->level);
        *fg = palette_text_on(*bg);
    } else if (palette_role_rgb((enum palette_role)c->role, &rfg, &rbg, &own_bg)) {
        *fg = rfg;
        if (!own_bg)
            *bg = rbg;
    } else if (c->role == ROLE_DIM) {
        *fg = GREY;
    } else if (c->role == ROLE_FORMULA) {
        *fg = TEAL;
    } else if (c->role == ROLE_ERROR) {
        *fg = RED;
    }
    if (c->attr & ATTR_REVERSE) {
        struct rgb t = *fg;
        *fg = same_rgb(*bg, PAPER) ? PAPER : *bg;
        *bg = same_rgb(t, PAPER) ? INK : t;
    }
}

static bool
same_style(const struct cell *a, const struct cell *b)
{
    return a->role == b->role && a->attr == b->attr &&
           (a->role != ROLE_HEAT || (a->ramp == b->ramp && a->level == b->level));
}

/*
 * Rows [y0, y1) and columns [x0, x1) of g at (x, y): each run of cells of one
 * style a background where it has one, its text in the monospaced font from
 * its first column.  Returns the height drawn.
 */
static double
draw_cells(struct fig *f, double x, double y, const struct grid *g, int x0, int x1, int y0, int y1)
{
    char *run = malloc((size_t)(x1 - x0) * 4 + 1);

    if (run == NULL)
        return 0;
    for (int r = y0; r < y1; r++) {
        const double ry = y + (r - y0) * f->mono_h;
        for (int c = x0; c < x1;) {
            const struct cell *first = grid_at(g, c, r);
            struct rgb fg;
            struct rgb bg;
            bool bold;
            bool ink = false;
            size_t len = 0;
            int end = c;
            while (end < x1 && (grid_at(g, end, r)->ch == GRID_CONTINUATION ||
                                same_style(grid_at(g, end, r), first))) {
                uint32_t ch = grid_at(g, end, r)->ch;
                if (ch != GRID_CONTINUATION) {
                    char buf[4];
                    int n = utf8_encode(ch, buf);
                    memcpy(run + len, buf, (size_t)n);
                    len += (size_t)n;
                    ink |= ch != ' ';
                }
                end++;
            }
            run[len] = '\0';
            cell_colours(first, &fg, &bg, &bold);
            if (!same_rgb(bg, PAPER))
                fill_rect(f->cr, x + (c - x0) * f->mono_w, ry, (end - c) * f->mono_w, f->mono_h,
                          bg);
            if (ink)
                text_at(f, x + (c - x0) * f->mono_w, ry, bold ? f->mono_bold : f->mono, fg, 0, run);
            c = end;
        }
    }
    free(run);
    return (y1 - y0) * f->mono_h;
}

/* ------------------------------------------------------------- heatmaps */

struct heat_style {
    double cw, ch;  /* a cell */
    int decimals;   /* in each cell; -1: colour only */
    bool labels;    /* the rows' and columns' labels */
};

/* Cells big enough for numbers when the matrix is small; else as small as the matrix needs. */
static void
heat_style_for(int rows, int cols, double room_w, struct heat_style *hs, bool grid)
{
    hs->labels = true;
    if (cols <= (grid ? 8 : 16) && rows <= 40) {
        hs->decimals = grid ? 2 : 4;
        hs->cw = grid ? 28 : 44;
        hs->ch = grid ? 14 : 20;
        return;
    }
    hs->decimals = -1;
    hs->cw = room_w / cols;
    if (hs->cw > 16)
        hs->cw = 16;
    if (hs->cw < 3)
        hs->cw = 3;
    hs->ch = hs->cw;
    hs->labels = hs->ch >= 7;
}

static const char *
col_label(const struct heatmap_spec *s, int j, char *buf, size_t size)
{
    if (s->col_labels != NULL)
        return s->col_labels[j];
    snprintf(buf, size, "%s%d", s->col_prefix != NULL ? s->col_prefix : "", j);
    return buf;
}

static const char *
row_label(const struct heatmap_spec *s, int i, char *buf, size_t size)
{
    if (s->row_labels == NULL) {
        snprintf(buf, size, "%d", i);
        return buf;
    }
    if (s->row_marked != NULL && s->row_marked[i]) {
        snprintf(buf, size, "%s*", s->row_labels[i]); /* made up, as the screen's ASCII says */
        return buf;
    }
    return s->row_labels[i];
}

/* A cell's look: its background, its text's colour and its text ("" for none). */
static void
heat_cell(const struct heatmap_spec *s, int i, int j, int decimals, struct rgb *bg, struct rgb *fg,
          char *text, size_t size, bool *hatch)
{
    static const enum palette_role roles[] = {
        [HEAT_NEG_INF] = ROLE_NEG_INF, [HEAT_MASKED] = ROLE_MASKED, [HEAT_DROPPED] = ROLE_DROPPED,
        [HEAT_NAN] = ROLE_NAN,         [HEAT_ALLOW] = ROLE_MASK_ALLOW,
        [HEAT_FORBID] = ROLE_MASK_FORBID,
    };
    static const char *const glyphs[] = {
        [HEAT_NEG_INF] = "-\xe2\x88\x9e", [HEAT_DROPPED] = "\xe2\x9c\x95", [HEAT_NAN] = "nan",
        [HEAT_ALLOW] = "see",             [HEAT_FORBID] = "hide",
    };
    const enum heat_kind k = heatmap_kind(s, i, j);
    bool own_bg;

    text[0] = '\0';
    *hatch = false;
    *bg = PAPER;
    *fg = INK;
    if (k == HEAT_VALUE || k == HEAT_CHOSEN) {
        const float v = MAT_AT(s->m, i, j);
        *bg = palette_ramp_rgb(s->ramp, heatmap_level(s, v));
        *fg = palette_text_on(*bg);
        if (decimals >= 0)
            heatmap_format(text, size, v, decimals + 4, decimals);
        return;
    }
    if (k == HEAT_ABSENT)
        return;
    if (palette_role_rgb(roles[k], fg, bg, &own_bg) && own_bg)
        *bg = PAPER;
    if (k == HEAT_MASKED)
        *hatch = true;
    else if (decimals >= 0 || k == HEAT_DROPPED)
        snprintf(text, size, "%s", glyphs[k]);
}

/*
 * A large matrix's cells as one image, a pixel a cell, scaled up without
 * smoothing: an SVG or PDF of a real model's 1,000 x 1,000 weights stays a
 * few megabytes instead of a million rectangles.  Masked cells are paper.
 */
static void
draw_cell_bitmap(struct fig *f, const struct figure_cells *cells, const struct heatmap_spec *s)
{
    cairo_surface_t *img = cairo_image_surface_create(CAIRO_FORMAT_RGB24, cells->cols, cells->rows);
    unsigned char *data;
    int stride;
    char text[8];

    if (cairo_surface_status(img) != CAIRO_STATUS_SUCCESS) {
        cairo_surface_destroy(img);
        return;
    }
    cairo_surface_flush(img);
    data = cairo_image_surface_get_data(img);
    stride = cairo_image_surface_get_stride(img);
    for (int i = 0; i < cells->rows; i++)
        for (int j = 0; j < cells->cols; j++) {
            struct rgb bg;
            struct rgb fg;
            bool hatch;
            uint32_t px;
            heat_cell(s, i, j, -1, &bg, &fg, text, sizeof text, &hatch);
            px = (uint32_t)bg.r << 16 | (uint32_t)bg.g << 8 | bg.b;
            memcpy(data + (size_t)i * (size_t)stride + (size_t)j * 4, &px, 4);
        }
    cairo_surface_mark_dirty(img);
    cairo_save(f->cr);
    cairo_translate(f->cr, cells->x, cells->y);
    cairo_scale(f->cr, cells->cell_w, cells->cell_h);
    cairo_set_source_surface(f->cr, img, 0, 0);
    cairo_pattern_set_filter(cairo_get_source(f->cr), CAIRO_FILTER_NEAREST);
    cairo_rectangle(f->cr, 0, 0, cells->cols, cells->rows);
    cairo_fill(f->cr);
    cairo_restore(f->cr);
    cairo_surface_destroy(img);
}

/*
 * The heatmap of s with its top left at (x, y): the rows' labels on the
 * left, the columns' above (upright when they are wider than a cell); every
 * cell, however many.  Sets *w and *h to its size, cells to where they are.
 */
static void
draw_heatmap(struct fig *f, double x, double y, const struct heatmap_spec *s,
             const struct heat_style *hs, struct figure_cells *cells, double *w, double *h)
{
    const int rows = s->m->rows;
    const int cols = s->m->cols;
    const PangoFontDescription *font = hs->ch >= 14 ? f->sans : f->small;
    double label_w = 0;
    double col_h = 0;
    double text_h = 0;
    bool upright = false;
    char buf[96];
    char text[32];

    if (hs->labels) {
        for (int i = 0; i < rows; i++) {
            double tw;
            text_size(f, font, row_label(s, i, buf, sizeof buf), &tw, &text_h);
            label_w = tw > label_w ? tw : label_w;
        }
        for (int j = 0; j < cols; j++) {
            double tw;
            text_size(f, font, col_label(s, j, buf, sizeof buf), &tw, &text_h);
            col_h = tw > col_h ? tw : col_h;
        }
        upright = col_h > hs->cw - 2;
        if (!upright)
            col_h = text_h;
        label_w += 6;
        col_h += 4;
    }
    cells->x = x + label_w;
    cells->y = y + col_h;
    cells->cell_w = hs->cw;
    cells->cell_h = hs->ch;
    cells->rows = rows;
    cells->cols = cols;
    for (int i = 0; hs->labels && i < rows; i++)
        text_at(f, cells->x - 6, cells->y + i * hs->ch + (hs->ch - text_h) / 2, font, INK, 1,
                row_label(s, i, buf, sizeof buf));
    for (int j = 0; hs->labels && j < cols; j++) {
        const char *l = col_label(s, j, buf, sizeof buf);
        if (upright) {
            cairo_save(f->cr);
            cairo_translate(f->cr, cells->x + j * hs->cw + (hs->cw - text_h) / 2, cells->y - 4);
            cairo_rotate(f->cr, -M_PI / 2);
            text_at(f, 0, 0, font, INK, 0, l);
            cairo_restore(f->cr);
        } else {
            text_at(f, cells->x + (j + 0.5) * hs->cw, y, font, INK, 2, l);
        }
    }
    if (hs->decimals < 0 && (long)rows * cols > FIG_BITMAP_CELLS) {
        draw_cell_bitmap(f, cells, s);
        goto frame;
    }
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++) {
            const double cx = cells->x + j * hs->cw;
            const double cy = cells->y + i * hs->ch;
            struct rgb bg;
            struct rgb fg;
            bool hatch;
            heat_cell(s, i, j, hs->decimals, &bg, &fg, text, sizeof text, &hatch);
            fill_rect(f->cr, cx, cy, hs->cw, hs->ch, bg);
            if (hatch) {
                /* The screen's ╱, in a square at the cell's centre. */
                const double side = 0.6 * (hs->cw < hs->ch ? hs->cw : hs->ch);
                set_rgb(f->cr, fg);
                cairo_set_line_width(f->cr, side > 6 ? 0.8 : 0.4);
                cairo_move_to(f->cr, cx + (hs->cw - side) / 2, cy + (hs->ch + side) / 2);
                cairo_line_to(f->cr, cx + (hs->cw + side) / 2, cy + (hs->ch - side) / 2);
                cairo_stroke(f->cr);
            }
            if (text[0] != '\0') {
                double tw;
                double th;
                text_size(f, f->mono, text, &tw, &th);
                text_at(f, cx + hs->cw / 2, cy + (hs->ch - th) / 2, f->mono, fg, 2, text);
            }
        }
frame:
    /* A hairline around the matrix: pale cells still have an edge on paper. */
    cairo_set_source_rgb(f->cr, 0.6, 0.6, 0.6);
    cairo_set_line_width(f->cr, 0.5);
    cairo_rectangle(f->cr, cells->x, cells->y, cols * hs->cw, rows * hs->ch);
    cairo_stroke(f->cr);
    *w = label_w + cols * hs->cw;
    *h = col_h + rows * hs->ch;
}

/* The screen's legend for what v shows, drawn from its cells, at (x, y); returns its height. */
static double
draw_legend(struct fig *f, double x, double y, struct view *v, const struct pipeline *p,
            struct figure_result *res)
{
    struct grid g;
    struct heatmap_spec spec;
    const struct heatmap_geometry saved = v->frame.geo[0];
    const int heads_first = v->frame.heads_first, heads_shown = v->frame.heads_shown;
    struct rect ink;
    double h = 0;

    if (view_stage_spec(v, p, v->stage, v->head, &spec) != 0 || grid_create(&g, 200, 1) != 0)
        return 0;
    /* The whole matrix is drawn, and every head: no "rows a-b of n", no "heads a-b of n". */
    v->frame.geo[0].row0 = v->frame.geo[0].col0 = 0;
    v->frame.geo[0].vis_rows = spec.m->rows;
    v->frame.geo[0].vis_cols = spec.m->cols;
    v->frame.heads_first = 0;
    v->frame.heads_shown = explain_stage_heads(p, v->stage);
    view_draw_legend(&g, 0, 0, g.width, v, p);
    v->frame.geo[0] = saved;
    v->frame.heads_first = heads_first;
    v->frame.heads_shown = heads_shown;
    {
        /* its words, for the tests and the message */
        FILE *words = fmemopen(res->legend, sizeof res->legend - 1, "w");
        if (words != NULL) {
            grid_dump_text(&g, words);
            fclose(words);
            res->legend[strcspn(res->legend, "\n")] = '\0';
        }
    }
    ink = view_inked(&g, 1);
    if (ink.w > 0)
        h = draw_cells(f, x, y, &g, 0, ink.x + ink.w, 0, 1);
    grid_destroy(&g);
    return h;
}

/* Heads side by side: as many to a row as keeps the figure near a page's shape. */
static int
heads_per_row(int heads)
{
    return heads <= 4 ? heads : heads <= 9 ? 3 : heads <= 16 ? 4 : 6;
}

/* The stage screen: its title and formula, the heatmap (or every head's), the legend. */
static int
draw_stage(struct fig *f, struct view *v, const struct pipeline *p, struct figure_result *res)
{
    char title[512];
    char formula[256];
    struct heatmap_spec spec;
    struct heat_style hs;
    double y = 0;
    double tw;
    double th;
    double hw;
    double hh;

    view_stage_title(v, p, title, sizeof title, formula, sizeof formula);
    if (view_showing_grid(v, p) && view_stage_spec(v, p, v->stage, 0, &spec) == 0) {
        char layer[24] = "";
        char name[160];
        char compared[128];
        view_compared(v, compared, sizeof compared);
        if (pipeline_decoder(p) != NULL)
            snprintf(layer, sizeof layer, "Layer %d: ", p->layer);
        snprintf(title, sizeof title, "%s%s%s, all %d heads (%d x %d each)", compared, layer,
                 explain_title(p, v->stage, name, sizeof name), explain_stage_heads(p, v->stage),
                 spec.m->rows, spec.m->cols);
        if (p->decoder != NULL && decoder_mixer_of(p->decoder, p->layer) == &decoder_mixer_gdn) {
            if (p->decoder->gdn.k_heads < p->decoder->gdn.v_heads)
                attn_appendf(title, sizeof title, &(size_t){ strlen(title) },
                             "; k0-k%d: the %d key heads they read", p->decoder->gdn.k_heads - 1,
                             p->decoder->gdn.k_heads);
        } else if (p->decoder != NULL && decoder_kv_heads(p->decoder) < p->decoder->n_head)
            attn_appendf(title, sizeof title, &(size_t){ strlen(title) },
                         "; k0-k%d: the %d key and value heads they share",
                         decoder_kv_heads(p->decoder) - 1, decoder_kv_heads(p->decoder));
    }
    snprintf(res->title, sizeof res->title, "%s", title);
    text_size(f, f->bold, title, &tw, &th);
    text_at(f, 0, y, f->bold, INK, 0, title);
    y += th + 2;
    text_at(f, 0, y, f->sans, TEAL, 0, formula);
    y += th + 10;
    if (view_showing_grid(v, p)) {
        const int heads = explain_stage_heads(p, v->stage);
        const int per_row = heads_per_row(heads);
        double pw = 0;
        double ph = 0;
        for (int h = 0; h < heads; h++) {
            const double px = (h % per_row) * (pw + FIG_GAP);
            const double py = y + (h / per_row) * (ph + FIG_GAP);
            struct figure_cells cells;
            char head[48];
            char kv[16];
            if (view_stage_spec(v, p, v->stage, h, &spec) != 0)
                return -1;
            if (h == 0)
                heat_style_for(spec.m->rows, spec.m->cols, 900.0 / per_row, &hs, true);
            snprintf(head, sizeof head, "head %d%s", h, view_key_head(p, h, kv, sizeof kv));
            attn_appendf(res->names, sizeof res->names, &(size_t){ strlen(res->names) }, "%s%s",
                         h > 0 ? ", " : "", head);
            text_size(f, f->bold, head, &tw, &th);
            text_at(f, px, py, f->bold, INK, 0, head);
            draw_heatmap(f, px, py + th + 2, &spec, &hs, &cells, &hw, &hh);
            if (h == 0) {
                pw = hw;
                ph = hh + th + 2;
                res->first = cells;
            }
        }
        res->heatmaps = heads;
        y += ((heads + per_row - 1) / per_row) * (ph + FIG_GAP);
        snprintf(res->what, sizeof res->what, "%s, every head", explain_stage_name(v->stage));
    } else {
        if (view_stage_spec(v, p, v->stage, v->head, &spec) != 0)
            return -1;
        heat_style_for(spec.m->rows, spec.m->cols, 900.0, &hs, false);
        draw_heatmap(f, 0, y, &spec, &hs, &res->first, &hw, &hh);
        res->heatmaps = 1;
        y += hh + FIG_GAP;
        if (explain_stage_per_head(v->stage) && explain_stage_heads(p, v->stage) > 1)
            snprintf(res->what, sizeof res->what, "%s, head %d", explain_stage_name(v->stage),
                     v->head);
        else
            snprintf(res->what, sizeof res->what, "%s", explain_stage_name(v->stage));
    }
    if (v->compare != NULL) {
        /* which of two models' numbers: the difference, the first's or the second's */
        char said[sizeof res->what];
        snprintf(said, sizeof said, "%s", res->what);
        if (v->side == COMPARE_DIFFERENCE)
            snprintf(res->what, sizeof res->what, "%.100s, %.48s minus %.48s", said,
                     pipeline_decoder(v->compare->b)->model->name,
                     pipeline_decoder(v->compare->a)->model->name);
        else
            snprintf(res->what, sizeof res->what, "%.100s, %.40s: %.48s", said,
                     compare_side_name(v->side),
                     pipeline_decoder(compare_side_pipeline(v->compare, v->side))->model->name);
    }
    draw_legend(f, 0, y, v, p, res);
    return 0;
}

/* A head's weights in the overview: the cells the mask hides are masked. */
static enum heat_kind
causal_kind(const void *ctx, int i, int j)
{
    return pipeline_masked((const struct pipeline *)ctx, i, j) ? HEAT_MASKED : HEAT_VALUE;
}

/*
 * The map's heatmaps (its last Tab): every layer's every head, whole, no
 * pooling; layers down, heads across, on the weights' own scale 0 to 1.
 */
static int
draw_overview(struct fig *f, struct view *v, const struct pipeline *p, struct figure_result *res)
{
    const struct family_model_state *m = pipeline_decoder(p);
    const int heads = head_map_heads(p);
    const int n = p->st.nq;
    const size_t nn = (size_t)n * (size_t)n;
    struct heat_style hs = { 0, 0, -1, false };
    struct heatmap_spec spec;
    struct matrix w;
    char title[160];
    double tw;
    double th;
    double label_w = 0;
    double y;

    (void)m;
    w = matrix_view(v->work.scratch, n, n);
    memset(&spec, 0, sizeof spec);
    spec.m = &w;
    spec.ramp = RAMP_SEQUENTIAL;
    spec.lo = 0.0f;
    spec.hi = 1.0f;
    spec.kind = causal_kind;
    spec.kind_ctx = p;
    spec.colour = spec.utf8 = true;
    hs.cw = hs.ch = 72.0 / n < 1.5 ? 1.5 : 72.0 / n > 6 ? 6 : 72.0 / n;
    snprintf(title, sizeof title,
             "Attention weights of every head (%d layers x %d heads, %d tokens)", p->layers, heads,
             n);
    text_size(f, f->bold, title, &tw, &th);
    text_at(f, 0, 0, f->bold, INK, 0, title);
    y = th + 10;
    for (int l = 0; l < p->layers; l++) {
        double lw;
        char label[24];
        snprintf(label, sizeof label, "layer %d", l);
        text_size(f, f->sans, label, &lw, &th);
        label_w = lw > label_w ? lw : label_w;
    }
    label_w += 8;
    for (int h = 0; h < heads; h++) {
        char label[16];
        snprintf(label, sizeof label, "h%d", h);
        text_at(f, label_w + h * (n * hs.cw + 6) + n * hs.cw / 2, y, f->sans, INK, 2, label);
    }
    y += th + 2;
    for (int l = 0; l < p->layers; l++) {
        const double ly = y + l * (n * hs.ch + 6);
        char label[24];
        snprintf(label, sizeof label, "layer %d", l);
        text_at(f, 0, ly + (n * hs.ch - th) / 2, f->sans, INK, 0, label);
        /* (a DeltaNet layer's heads: the shares of their effective attention) */
        struct head_map_layer hl;
        if (head_map_layer_open(&hl, p, l) != 0 ||
            view_reserve_scratch(v, nn + head_map_layer_scratch(&hl)) != 0) {
            head_map_layer_close(&hl);
            return -1;
        }
        w.data = v->work.scratch;
        for (int h = 0; h < hl.heads; h++) {
            struct figure_cells cells;
            double hw;
            double hh;
            (void)head_map_layer_head(&hl, h, v->work.scratch, v->work.scratch + nn);
            draw_heatmap(f, label_w + h * (n * hs.cw + 6), ly, &spec, &hs, &cells, &hw, &hh);
            if (l == 0 && h == 0)
                res->first = cells;
        }
        head_map_layer_close(&hl);
    }
    res->heatmaps = p->layers * heads;
    snprintf(res->what, sizeof res->what, "every head's weights, %d layers x %d heads", p->layers,
             heads);
    y += p->layers * (n * hs.ch + 6) + 6;
    {
        struct grid g;
        if (grid_create(&g, 120, 1) == 0) {
            struct rect ink;
            heatmap_legend(&g, 0, 0, g.width, &spec);
            ink = view_inked(&g, 1);
            if (ink.w > 0)
                draw_cells(f, 0, y, &g, 0, ink.x + ink.w, 0, 1);
            grid_destroy(&g);
        }
    }
    return 0;
}

/*
 * A screen without a heatmap of its own (the map, the sentence view, the
 * predictions): drawn as presentation mode draws it (no bars, no keys), from
 * its title down, every character cell where the screen puts it.
 */
static int
draw_screen(struct fig *f, struct view *v, const struct pipeline *p, const struct screen *s,
            struct figure_result *res)
{
    struct grid g;
    const char *narration = v->narration;
    const char *message = v->message;
    const bool present = v->present;
    struct rect ink;

    if (grid_create(&g, FIG_SCREEN_COLS, FIG_SCREEN_ROWS) != 0)
        return -1;
    /* What the screen shows, not what the view says to its user (its message, a lesson's words). */
    v->narration = NULL;
    v->message = NULL;
    v->present = true;
    s->draw(&g, v, p);
    v->narration = narration;
    v->message = message;
    v->present = present;
    /* From the title (row 3) down, without the message row. */
    for (int y = 0; y < 3; y++)
        for (int x = 0; x < g.width; x++)
            *grid_at(&g, x, y) = (struct cell){ ' ', ROLE_TEXT, 0, 0, 0 };
    ink = view_inked(&g, g.height - 1);
    if (ink.w > 0)
        draw_cells(f, 0, 0, &g, ink.x, ink.x + ink.w, ink.y, ink.y + ink.h);
    grid_destroy(&g);
    snprintf(res->what, sizeof res->what, "the %s screen", s->name);
    return 0;
}

/* ------------------------------------------------------------ the file */

/* Whether a figure has used the fonts since figure_release. */
static bool fonts_used;

static void
fig_open(struct fig *f, cairo_t *cr)
{
    double h;

    fonts_used = true;
    f->cr = cr;
    f->ctx = pango_cairo_create_context(cr);
    pango_cairo_context_set_resolution(f->ctx, 72.0); /* font sizes in points, as the page */
    f->sans = pango_font_description_from_string(FIG_SANS " 9");
    f->bold = pango_font_description_from_string(FIG_SANS " Bold 10");
    f->small = pango_font_description_from_string(FIG_SANS " 7");
    f->mono = pango_font_description_from_string(FIG_MONO " 8");
    f->mono_bold = pango_font_description_from_string(FIG_MONO " Bold 8");
    text_size(f, f->mono, "MMMMMMMMMM", &f->mono_w, &h);
    f->mono_w /= 10;
    f->mono_h = h;
}

static void
fig_close(struct fig *f)
{
    pango_font_description_free(f->sans);
    pango_font_description_free(f->bold);
    pango_font_description_free(f->small);
    pango_font_description_free(f->mono);
    pango_font_description_free(f->mono_bold);
    g_object_unref(f->ctx);
}

/* What v shows, drawn on cr from (0, 0) on; 0, or -1 out of memory. */
int
figure_draw(cairo_t *cr, struct view *v, const struct pipeline *p, struct figure_result *res)
{
    const struct screen *s = view_screen_shown(v, p);
    struct fig f;
    int drawn;

    fig_open(&f, cr);
    if (s == &screen_stage)
        drawn = draw_stage(&f, v, p, res);
    else if (s == &screen_map && v->map_measure == VIEW_MAP_HEATMAPS)
        drawn = draw_overview(&f, v, p, res);
    else
        drawn = draw_screen(&f, v, p, s, res);
    fig_close(&f);
    return drawn == 0 && cairo_status(cr) == CAIRO_STATUS_SUCCESS ? 0 : -1;
}

void
figure_release(void)
{
    if (!fonts_used)
        return; /* (nothing to give back, and no font map made just to be freed) */
    fonts_used = false;
    pango_cairo_font_map_set_default(NULL);
}
