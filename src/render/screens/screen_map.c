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

#include "attnscope/families/model/family_model.h"
#include "attnscope/families/model/headmap.h"
#include "render/stagemap.h"
#include "render/screens/screen.h"
#include "render/view_parts.h"


/*
 * The map's last choice of Tab: every head's weights as a small heatmap, one
 * character per cell, layers down and heads across, bertviz's model view in
 * a terminal.  Heads too narrow for their tokens show them pooled: each
 * cell the largest weight of a block of queries and keys (a weight that
 * stands out stays visible; the caption says how many tokens a cell holds).
 * As many layers as fit are shown; the cursor's layer stays in sight.
 */
_Static_assert(VIEW_MAP_HEATMAPS == MEASURE_COUNT, "the heatmaps come after the measures");

#define MAP_LABEL_W 9 /* "▸layer 11 " */

/*
 * The largest weight of each f x f block of w (n x n) the mask shows; -1 for
 * none.  With skip_first the first key is left out (a block of it alone is
 * -2: the sink's column, drawn at the top colour) and the weights are
 * scaled by the largest of the rest, so that a head that pours its weight
 * on token 0 shows what it does with the remainder.
 */
static void
pool_max(const struct pipeline *p, int window, const float *w, int n, int f, bool skip_first,
         float *out)
{
    const int cells = (n + f - 1) / f;
    float top = 0.0f;

    for (int bi = 0; bi < cells; bi++)
        for (int bj = 0; bj < cells; bj++) {
            float best = -1.0f;
            bool any = false;
            for (int i = bi * f; i < n && i < (bi + 1) * f; i++)
                for (int j = bj * f; j < n && j < (bj + 1) * f; j++) {
                    /* (the causal mask, and a sliding layer's window: the keys window back) */
                    if (attention_masked(&p->cfg, i, j) || pipeline_window_hides(p, window, i, j))
                        continue;
                    any = true;
                    if (!(skip_first && j == 0) && w[(size_t)i * (size_t)n + (size_t)j] > best)
                        best = w[(size_t)i * (size_t)n + (size_t)j];
                }
            out[bi * cells + bj] = any && best < 0.0f ? -2.0f : best;
            top = best > top ? best : top;
        }
    if (!skip_first || !(top > 0.0f))
        return;
    for (int e = 0; e < cells * cells; e++)
        if (out[e] >= 0.0f)
            out[e] /= top;
}

static void
draw_head_heatmaps(struct grid *g, struct view *v, const struct pipeline *p, int top)
{
    const int heads = head_map_heads(p);
    const int layers = p->layers;
    const int n = p->st.nq;
    const int room_h = g->height - 3 - top; /* under them: the caption and the cursor's line */
    const int tw = (g->width - MAP_LABEL_W) / heads - 1;
    int f;
    int cells;
    int shown;
    int first;
    int pitch;

    if (tw < 1 || room_h < 3) {
        char text[320];
        snprintf(text, sizeof text,
                 "The heatmaps of %d heads need at least %d x %d characters; this screen has %d x "
                 "%d. A larger terminal shows them; Tab shows the measures.",
                 heads, MAP_LABEL_W + 2 * heads, top + 6, g->width, g->height);
        view_draw_wrapped(g, (struct rect){ 0, top, g->width, 4 }, style_role(ROLE_TEXT), text);
        return;
    }
    /* Pooled as little as fits a head's width and one layer's height. */
    f = (n + tw - 1) / tw;
    cells = (n + f - 1) / f;
    while (cells + 2 > room_h && cells > 1) {
        f++;
        cells = (n + f - 1) / f;
    }
    shown = (room_h - 1) / (cells + 1);
    shown = shown < 1 ? 1 : shown > layers ? layers : shown;
    first = v->map_first;
    heatmap_keep_in_sight(&first, shown, layers, v->map_row);
    v->map_first = first;
    v->frame.map_layers = shown;
    pitch = cells + 1; /* tiles side by side, a blank column between */

    /* A head's weights at a time, made again (headmap.h: a DeltaNet head's shares of M). */
    const size_t nn = (size_t)n * (size_t)n;
    for (int h = 0; h < heads; h++)
        grid_printf(g, MAP_LABEL_W + h * pitch, top, pitch - 1 > 2 ? pitch - 1 : 3,
                    style_role(h == v->map_col ? ROLE_TITLE : ROLE_DIM), "h%d", h);
    for (int l = first; l < first + shown; l++) {
        const int y0 = top + 1 + (l - first) * (cells + 1);
        struct head_map_layer hl;
        float *pooled;
        if (head_map_layer_open(&hl, p, l) != 0 ||
            view_reserve_scratch(v, nn + head_map_layer_scratch(&hl) + (size_t)cells * (size_t)cells) !=
                0) {
            head_map_layer_close(&hl);
            return;
        }
        pooled = v->work.scratch + nn + head_map_layer_scratch(&hl);
        grid_printf(g, 0, y0, MAP_LABEL_W, style_role(l == v->map_row ? ROLE_TITLE : ROLE_TEXT),
                    "%slayer %d", l == v->map_row ? "\u25b8" : "", l);
        if (p->decoder->sliding_window > 0 && cells > 1) /* (its kind under its name) */
            grid_printf(g, 1, y0 + 1, MAP_LABEL_W - 1, style_role(ROLE_DIM), "%s",
                        decoder_window(p->decoder, l) > 0 ? "sliding" : "full");
        for (int h = 0; h < hl.heads; h++) {
            const int x0 = MAP_LABEL_W + h * pitch;
            (void)head_map_layer_head(&hl, h, v->work.scratch, v->work.scratch + nn);
            pool_max(p, hl.g->run.causal ? decoder_window(p->decoder, l) : 0, v->work.scratch, n, f,
                     v->skip_first_key, pooled);
            for (int i = 0; i < cells; i++)
                for (int j = 0; j < cells; j++) {
                    struct style st = style_role(ROLE_HEAT);
                    const float w = pooled[i * cells + j] == -2.0f ? 1.0f : pooled[i * cells + j];
                    if (w < 0.0f)
                        continue; /* hidden by the mask */
                    st.ramp = RAMP_SEQUENTIAL;
                    st.level = (int)(w * 255.0f + 0.5f);
                    if (l == v->map_row && h == v->map_col && i == cells - 1 && j == 0)
                        st.attr |= ATTR_UNDERLINE;
                    grid_set(g, x0 + j, y0 + i,
                             v->colour ? ' ' : palette_ramp_glyph(st.level, v->utf8), st);
                }
        }
        head_map_layer_close(&hl);
    }
    {
        const int y = top + 1 + shown * (cells + 1);
        char what[128];
        char where[96] = "";
        if (f > 1)
            snprintf(what, sizeof what, "%d x %d tokens a cell (max-pooled)%s", f, f,
                     v->skip_first_key ? ", without the first key (f)" : "");
        else
            snprintf(what, sizeof what, "a row per query, a column per key, brighter is more "
                                        "weight%s",
                     v->skip_first_key ? "; each head scaled without the first key (f)" : "");
        if (shown < layers && shown == 1)
            snprintf(where, sizeof where, "; layer %d of %d, PgUp PgDn", first, layers);
        else if (shown < layers)
            snprintf(where, sizeof where, "; layers %d-%d of %d, PgUp PgDn", first,
                     first + shown - 1, layers);
        grid_printf(g, 0, y, g->width, style_role(ROLE_DIM), "%s%s", what, where);
        grid_printf(g, 0, y + 1, g->width, style_role(ROLE_TEXT),
                    "layer %d, head %d: Enter opens its full heatmap", v->map_row, v->map_col);
    }
}

/*
 * Below the model map's legend at row y: the head at the cursor, what its
 * measure's value means (or, two models compared, the heads that changed
 * most), then the footer.
 */
static void
draw_map_cursor(struct grid *g, struct view *v, const struct pipeline *p, const struct matrix *mat,
                bool changed, int y)
{
    const int heads = head_map_heads(p);
    const int layers = p->layers;
    const enum head_measure m = (enum head_measure)v->map_measure;
    char num[32];
    const float value = MAT_AT(mat, v->map_row, v->map_col);
    heatmap_format(num, sizeof num, value, 12, 4);
    if (changed) {
        /* The head at the cursor, and the three that changed most (a head earlier on a tie). */
        int x = grid_printf(g, 0, y + 2, g->width, style_role(ROLE_TEXT),
                            "layer %d, head %d changed %s; most: ", v->map_row, v->map_col, num);
        int most[3];
        const int ranked = compare_most_changed(v->work.scratch, layers * heads, 3, most);
        for (int k = 0; k < ranked; k++) {
            heatmap_format(num, sizeof num, v->work.scratch[most[k]], 12, 4);
            x += grid_printf(g, x, y + 2, g->width - x, style_role(ROLE_TEXT), "%s%d.%d %s",
                             k > 0 ? ", " : "", most[k] / heads, most[k] % heads, num);
        }
        grid_put(g, 0, y + 3, g->width, style_role(ROLE_DIM),
                 "0: the two models' weights agree; 1 bit: they share no key (C: each model's "
                 "own measures)");
        view_draw_footer(g, v, g->height - 1);
        return;
    }
    if (p->decoder->sliding_window > 0) /* (what the rows' s and F stand for) */
        grid_printf(g, 0, y + 2, g->width, style_role(ROLE_TEXT), "layer %d (%s), head %d: %s %s",
                    v->map_row,
                    decoder_window(p->decoder, v->map_row) > 0 ? "s: sliding, the last keys only"
                                                                : "F: full, every key",
                    v->map_col, head_measure_name(m), num);
    else
        grid_printf(g, 0, y + 2, g->width, style_role(ROLE_TEXT), "layer %d, head %d: %s %s",
                    v->map_row, v->map_col, head_measure_name(m), num);
    grid_put(g, 0, y + 3, g->width, style_role(ROLE_DIM),
             m == MEASURE_PREVIOUS    ? "near 1: a previous-token head (each token looks at the one before)"
             : m == MEASURE_INDUCTION ? "high: an induction head (A B ... A looks at B); nan: no token repeats"
             : m == MEASURE_FIRST     ? "high: attention resting on the first token (try --bos)"
             : m == MEASURE_SELF      ? "high: each token looks at itself"
             : m == MEASURE_SINK      ? "high: the head gives much of its weight to its sink, "
                                        "to nothing (B on a stage switches the sinks off)"
             : m == MEASURE_REACH     ? "tokens back, weighted: low reads the last few, high reaches "
                                        "far (a DeltaNet head: its shares of M)"
             : m == MEASURE_MEMORY    ? "tokens until half of a write has decayed: low forgets "
                                        "fast; nan: a softmax head, which keeps every key"
                                      : "low: focused on few keys; high: spread over many");
    view_draw_footer(g, v, g->height - 1);
}

/*
 * The model map: every layer (rows) and head (columns) of a trained model as
 * one number, the measure chosen with Tab (headmap.h), the cursor on one
 * head; Enter opens it.
 */
static void
draw_model_map(struct grid *g, struct view *v, const struct pipeline *p)
{
    const int heads = head_map_heads(p);
    const int layers = p->layers;
    const enum head_measure m = (enum head_measure)v->map_measure;
    const bool changed = v->compare != NULL && v->side == COMPARE_DIFFERENCE;
    const struct pipeline *shown = v->compare != NULL ? compare_side_pipeline(v->compare, v->side) : p;
    struct heatmap_spec spec;
    struct heatmap_geometry geo;
    struct matrix mat;
    struct rect r;
    int scroll_row = 0;
    int scroll_col = 0;
    int y;

    if (v->map_measure == VIEW_MAP_HEATMAPS) {
        int top;
        if (!v->present)
            view_draw_knob_bar(g, v, p);
        view_draw_sentence(g, v, p, 1);
        grid_printf_cut(g, 0, 3, g->width, style_role(ROLE_TITLE),
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
    /* Two models compared: the side's measure, or (the difference) how much each head changed. */
    if (changed ? compare_heads_changed(v->compare, v->work.scratch) != 0
                : head_measures(shown, m, v->work.scratch) != 0) {
        view_draw_wrapped(g, (struct rect){ 0, 3, g->width, 2 }, style_role(ROLE_TEXT),
                          "The model map needs memory to make every head's weights again, and "
                          "there is not enough: L or Esc goes back.");
        view_draw_footer(g, v, g->height - 1);
        return;
    }
    /* A model with sliding windows says each layer's kind: s slides, F sees everything. */
    for (int l = 0; l < layers; l++)
        snprintf(v->work.row_label[l], 40, "layer %d%s", l,
                 p->decoder->sliding_window == 0        ? ""
                 : decoder_window(p->decoder, l) > 0 ? " s"
                                                     : " F");
    if (v->map_row >= layers)
        v->map_row = layers - 1;
    if (v->map_col >= heads)
        v->map_col = heads - 1;
    if (!v->present)
        view_draw_knob_bar(g, v, p);
    view_draw_sentence(g, v, p, 1);
    if (changed)
        grid_printf_cut(g, 0, 3, g->width, style_role(ROLE_TITLE),
                        "Model map: how much each head changed, %s (%d layers x %d heads)",
                        COMPARE_HEADS_MEASURE, layers, heads);
    else if (v->compare != NULL)
        grid_printf_cut(g, 0, 3, g->width, style_role(ROLE_TITLE),
                        "Model map of the %s, %s: %s, %s (%d layers x %d heads)",
                        compare_side_name(v->side), pipeline_decoder(shown)->model->name,
                        head_measure_name(m), head_measure_description(m), layers, heads);
    else
        grid_printf_cut(g, 0, 3, g->width, style_role(ROLE_TITLE),
                        "Model map: %s, %s (%d layers x %d heads)",
                        head_measure_name(m), head_measure_description(m), layers, heads);
    view_draw_keys_hint(g, v, 4,
                        "Tab: the next measure   h: every head   arrows: a head   Enter: open it   L or Esc: back");
    memset(&spec, 0, sizeof spec);
    spec.m = &mat;
    spec.row_labels = (const char *const *)v->work.row_label;
    spec.col_prefix = "h";
    spec.ramp = RAMP_SEQUENTIAL;
    stagemap_matrix_range(&mat, &spec.lo, &spec.hi);
    if (m != MEASURE_ENTROPY || changed)
        spec.lo = 0.0f; /* proportions (and divergences): 0 is none */
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
    v->frame.map_layers = geo.vis_rows;
    y += geo.vis_rows * geo.row_h + 1;
    if (geo.vis_rows < layers) {
        /* Layers left out are said, and how to reach them. */
        char where[64];
        const int w = snprintf(where, sizeof where, "layers %d-%d of 0-%d (Up Down PgUp PgDn)",
                               geo.row0, geo.row0 + geo.vis_rows - 1, layers - 1);
        heatmap_legend(g, 0, y, g->width - w - 1, &spec);
        grid_put(g, g->width - w, y, w, style_role(ROLE_DIM), where);
    } else {
        heatmap_legend(g, 0, y, g->width, &spec);
    }
    draw_map_cursor(g, v, p, &mat, changed, y);

}

static bool
has_model(const struct pipeline *p)
{
    return pipeline_decoder(p) != NULL;
}

const struct screen screen_map = { "map", has_model, draw_model_map, NULL };
