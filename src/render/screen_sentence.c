/*
 * screen_sentence.c: the sentence view (T): the text itself, each token
 * shaded by the weight the query token gives it in the head shown, and the
 * heaviest keys listed.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/base/utf8.h"
#include "attnscope/families/gpt2/family_gpt2.h"
#include "render/screen.h"
#include "render/view_parts.h"

/*
 * The sentence view: the text itself, each token shaded by the weight the
 * query token (the cursor's row) gives it in the head shown; the tokens
 * after the query, which a causal mask hides from it, dimmed.
 */
static void
draw_text_view(struct grid *g, struct view *v, const struct pipeline *p)
{
    const struct gpt2_state *m = pipeline_gpt2(p);
    struct pipeline_view w;
    const int q = v->cursor_row < p->st.nq ? v->cursor_row : p->st.nq - 1;
    /* The text shaded is the keys' side: the source's, across sentences. */
    const struct token_list *keys = p->cfg.cross ? &p->source_tokens : &p->tokens;
    const char *in = p->cfg.cross ? " in the source" : "";
    int x = 0;
    int y = 6;
    int order[5];
    int shown = 0;
    int first;
    int end;
    char layer[32] = "";

    pipeline_stage_view(p, STAGE_WEIGHTS, v->head, &w);
    if (v->grid_heads && p->st.shape.heads > 1 &&
        view_reserve_scratch(v, (size_t)w.m.rows * (size_t)w.m.cols) == 0) {
        /* g: the mean of the layer's heads, each key's weight averaged over them. */
        const int heads = p->st.shape.heads;
        struct matrix mean = matrix_view(v->work.scratch, w.m.rows, w.m.cols);
        memset(mean.data, 0, matrix_size(&mean) * sizeof(float));
        for (int h = 0; h < heads; h++) {
            struct pipeline_view hv;
            pipeline_stage_view(p, STAGE_WEIGHTS, h, &hv);
            for (size_t e = 0; e < matrix_size(&mean); e++)
                mean.data[e] += hv.m.data[e];
        }
        for (size_t e = 0; e < matrix_size(&mean); e++)
            mean.data[e] /= (float)heads;
        w.m = mean;
    }
    if (!v->present)
        view_draw_knob_bar(g, p);
    view_draw_sentence(g, v, p, 1);
    if (m != NULL)
        snprintf(layer, sizeof layer, "layer %d, ", p->layer);
    if (v->grid_heads && p->st.shape.heads > 1)
        grid_printf(g, 0, 3, g->width, style_role(ROLE_TITLE),
                    "What '%s' attends to%s: %sthe mean of the %d heads", p->query_labels[q], in,
                    layer, p->st.shape.heads);
    else
        grid_printf(g, 0, 3, g->width, style_role(ROLE_TITLE),
                    "What '%s' attends to%s: %shead %d of %d", p->query_labels[q], in, layer,
                    v->head, p->st.shape.heads);
    view_draw_keys_hint(g, v, 4,
                        m != NULL ? "Left Right: the query   Tab: the head   g: their mean   "
                                    ", .: the layer   T or Esc: back"
                                  : "Left Right: the query   Tab: the head   g: their mean   "
                                    "T or Esc: back");
    y = view_overlay_narration(g, v, y);
    for (int j = 0; j < keys->count && y < g->height - 6; j++) {
        const char *t = keys->text[j];
        const float wt = j < w.m.cols ? MAT_AT(&w.m, q, j) : 0.0f;
        const bool hidden = attention_masked(&p->cfg, q, j);
        struct style st = style_role(hidden ? ROLE_DIM : ROLE_HEAT);
        char mark[16] = "";
        int need;
        /* A model's token carries its own space (shown as a dot elsewhere); the book's get one. */
        bool space = m != NULL ? strncmp(t, "\xc2\xb7", 2) == 0 : j > 0;
        if (m != NULL && space)
            t += 2;
        if (!hidden) {
            st.ramp = RAMP_SEQUENTIAL;
            st.level = (int)(wt * 255.0f + 0.5f);
            if (!v->colour && wt >= 0.095f)
                snprintf(mark, sizeof mark, "(%.2f)", (double)wt);
        }
        if (j == q && !p->cfg.cross)
            st.attr |= ATTR_BOLD | ATTR_UNDERLINE;
        need = (space ? 1 : 0) + utf8_width(t) + (int)strlen(mark);
        if (x > 0 && x + need > g->width) {
            x = 0;
            y += 2;
            space = false;
        }
        if (space)
            x += grid_put(g, x, y, g->width - x, style_role(ROLE_TEXT), " ");
        x += grid_put(g, x, y, g->width - x, st, t);
        if (mark[0] != '\0')
            x += grid_put(g, x, y, g->width - x, style_role(ROLE_DIM), mark);
    }
    y += 2;
    /* The keys it weighs most, largest first, among those its mask lets it see. */
    attention_mask_range(&p->cfg, q, w.m.cols, &first, &end);
    for (int k = 0; k < 5; k++) {
        int best = -1;
        for (int j = first; j < end; j++) {
            bool taken = false;
            for (int u = 0; u < shown; u++)
                taken |= order[u] == j;
            if (!taken && (best < 0 || MAT_AT(&w.m, q, j) > MAT_AT(&w.m, q, best)))
                best = j;
        }
        if (best >= 0)
            order[shown++] = best;
    }
    x = grid_put(g, 0, y, g->width, style_role(ROLE_TEXT), "most weight: ");
    for (int u = 0; u < shown; u++) {
        char item[96];
        snprintf(item, sizeof item, "%s%s %.2f", u ? ", " : "", p->key_labels[order[u]],
                 (double)MAT_AT(&w.m, q, order[u]));
        x += grid_put(g, x, y, g->width - x, style_role(ROLE_TEXT), item);
    }
    view_draw_footer(g, v, g->height - 1);
}

static bool
has_sentence(const struct pipeline *p)
{
    return !p->qkv_given;
}

const struct screen screen_sentence = { "sentence", has_sentence, draw_text_view, NULL };
