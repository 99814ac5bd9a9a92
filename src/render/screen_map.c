/*
 * screen_map.c: the model map (L, a trained model): every layer and head
 * as one number, the measure chosen with Tab (headmap.h), the cursor on a
 * head that Enter opens; Tab's last choice draws every head's weights
 * small when they fit.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/families/gpt2/family_gpt2.h"
#include "attnscope/families/gpt2/headmap.h"
#include "render/stagemap.h"
#include "render/screen.h"
#include "render/view_parts.h"


/*
 * The map's last choice of Tab: every head's weights as a small heatmap, one
 * character per cell, layers down and heads across, when they fit.
 */
_Static_assert(VIEW_MAP_HEATMAPS == MEASURE_COUNT, "the heatmaps come after the measures");
static void
draw_head_heatmaps(struct grid *g, struct view *v, const struct pipeline *p, int top)
{
    const struct gpt2_state *m = pipeline_gpt2(p);
    const int heads = p->st.shape.heads;
    const int n = p->st.nq;
    const int label_w = 9; /* "layer 11 " */
    const int need_w = label_w + heads * (n + 1) - 1;
    const int need_h = 1 + p->layers * (n + 1);
    const int room_h = g->height - 3 - top;

    if (need_w > g->width || need_h > room_h) {
        char text[320];
        struct rect r = { 0, top, g->width, 4 };
        snprintf(text, sizeof text,
                 "The heatmaps of %d layers x %d heads of %d tokens need %d x %d characters; this "
                 "screen has room for %d x %d. A shorter text or a larger terminal shows them; Tab "
                 "shows the measures.",
                 p->layers, heads, n, need_w, need_h, g->width, room_h > 0 ? room_h : 0);
        view_draw_wrapped(g, r, style_role(ROLE_TEXT), text);
        return;
    }
    /* A head's weights at a time, made again from the queries and kept keys (decoder.h). */
    const size_t nc = (size_t)n * (size_t)m->model->dec.cfg.n_embd;
    if (view_reserve_scratch(v, 2 * (size_t)n * (size_t)n + 2 * (size_t)n + 2 * nc) != 0)
        return;
    for (int h = 0; h < heads; h++)
        grid_printf(g, label_w + h * (n + 1), top, n,
                    style_role(h == v->map_col ? ROLE_TITLE : ROLE_DIM), "h%d", h);
    for (int l = 0; l < p->layers; l++) {
        const int y0 = top + 1 + l * (n + 1);
        float *q = v->work.scratch + 2 * (size_t)n * (size_t)n + 2 * (size_t)n;
        decoder_layer_queries(&m->model->dec, &m->run, l, q, q + nc);
        grid_printf(g, 0, y0, label_w, style_role(l == v->map_row ? ROLE_TITLE : ROLE_TEXT),
                    "%slayer %d", l == v->map_row ? "\u25b8" : "", l);
        for (int h = 0; h < heads; h++) {
            const float *w = v->work.scratch;
            const int x0 = label_w + h * (n + 1);
            decoder_head_weights(&m->model->dec, &m->run, l, h, q, v->work.scratch,
                                 v->work.scratch + (size_t)n * (size_t)n);
            for (int i = 0; i < n; i++)
                for (int j = 0; j < n; j++) {
                    struct style st = style_role(ROLE_HEAT);
                    if (attention_masked(&p->cfg, i, j))
                        continue;
                    st.ramp = RAMP_SEQUENTIAL;
                    st.level = (int)(w[(size_t)i * (size_t)n + (size_t)j] * 255.0f + 0.5f);
                    grid_set(g, x0 + j, y0 + i,
                             v->colour ? ' ' : palette_ramp_glyph(st.level, v->utf8), st);
                }
        }
    }
    grid_printf(g, 0, top + need_h, g->width, style_role(ROLE_TEXT),
                "layer %d, head %d: a row per query, a column per key; brighter is more weight",
                v->map_row, v->map_col);
}

/*
 * The model map: every layer (rows) and head (columns) of a trained model as
 * one number, the measure chosen with Tab (headmap.h), the cursor on one
 * head; Enter opens it.
 */
static void
draw_model_map(struct grid *g, struct view *v, const struct pipeline *p)
{
    const int heads = p->st.shape.heads;
    const int layers = p->layers;
    const enum head_measure m = (enum head_measure)v->map_measure;
    struct heatmap_spec spec;
    struct heatmap_geometry geo;
    struct matrix mat;
    struct rect r;
    int scroll_row = 0;
    int scroll_col = 0;
    int y;
    float value;
    char num[32];

    if (v->map_measure == VIEW_MAP_HEATMAPS) {
        int top;
        if (!v->present)
        if (!v->present)
            view_draw_knob_bar(g, p);
        view_draw_sentence(g, v, p, 1);
        grid_printf(g, 0, 3, g->width, style_role(ROLE_TITLE),
                    "Model map: the weights of every head (%d layers x %d heads)", p->layers, heads);
        view_draw_keys_hint(g, v, 4,
                            "Tab: the measures   arrows: a head   Enter: open it   L or Esc: back");
        top = view_overlay_narration(g, v, 6);
        draw_head_heatmaps(g, v, p, top);
        view_draw_footer(g, v, g->height - 1);
        return;
    }
    /* Every layer, however many: the labels in the view's own memory. */
    if (view_reserve_scratch(v, (size_t)p->layers * (size_t)heads) != 0 ||
        view_reserve_row_labels(v, layers) != 0)
        return;
    mat = matrix_view(v->work.scratch, layers, heads);
    if (head_measures(p, m, v->work.scratch) != 0) {
        view_draw_wrapped(g, (struct rect){ 0, 3, g->width, 2 }, style_role(ROLE_TEXT),
                          "The model map needs memory to make every head's weights again, and "
                          "there is not enough: L or Esc goes back.");
        view_draw_footer(g, v, g->height - 1);
        return;
    }
    for (int l = 0; l < layers; l++)
        snprintf(v->work.row_label[l], 40, "layer %d", l);
    if (v->map_row >= layers)
        v->map_row = layers - 1;
    if (v->map_col >= heads)
        v->map_col = heads - 1;
    if (!v->present)
        view_draw_knob_bar(g, p);
    view_draw_sentence(g, v, p, 1);
    grid_printf(g, 0, 3, g->width, style_role(ROLE_TITLE), "Model map: %s, %s (%d layers x %d heads)",
                head_measure_name(m), head_measure_description(m), layers, heads);
    view_draw_keys_hint(g, v, 4,
                        "Tab: the next measure   arrows: a head   Enter: open it   L or Esc: back");
    memset(&spec, 0, sizeof spec);
    spec.m = &mat;
    spec.row_labels = (const char *const *)v->work.row_label;
    spec.col_prefix = "h";
    spec.ramp = RAMP_SEQUENTIAL;
    stagemap_range(mat.data, matrix_size(&mat), &spec.lo, &spec.hi);
    if (m != MEASURE_ENTROPY)
        spec.lo = 0.0f; /* proportions: 0 is none */
    spec.cursor_row = v->map_row;
    spec.cursor_col = v->map_col;
    spec.max_cell_w = 10;
    /* On a projector, a blank line between layers when the screen has room. */
    if (v->present && 2 * layers + 12 <= g->height)
        spec.row_gap = 1;
    spec.colour = v->colour;
    spec.utf8 = v->utf8;
    y = view_overlay_narration(g, v, 6);
    r = (struct rect){ 0, y, g->width, g->height - 5 - y };
    heatmap_render(g, r, &spec, &scroll_row, &scroll_col, &geo);
    y += geo.vis_rows * geo.row_h + 1;
    heatmap_legend(g, 0, y, g->width, &spec);
    value = MAT_AT(&mat, v->map_row, v->map_col);
    heatmap_format(num, sizeof num, value, 12, 4);
    grid_printf(g, 0, y + 2, g->width, style_role(ROLE_TEXT), "layer %d, head %d: %s %s",
                v->map_row, v->map_col, head_measure_name(m), num);
    grid_put(g, 0, y + 3, g->width, style_role(ROLE_DIM),
             m == MEASURE_PREVIOUS    ? "near 1: a previous-token head (each token looks at the one before)"
             : m == MEASURE_INDUCTION ? "high: an induction head (A B ... A looks at B); nan: no token repeats"
             : m == MEASURE_FIRST     ? "high: attention resting on the first token (try --bos)"
             : m == MEASURE_SELF      ? "high: each token looks at itself"
                                      : "low: focused on few keys; high: spread over many");
    view_draw_footer(g, v, g->height - 1);
}

static bool
has_model(const struct pipeline *p)
{
    return pipeline_gpt2(p) != NULL;
}

const struct screen screen_map = { "map", has_model, draw_model_map, NULL };
