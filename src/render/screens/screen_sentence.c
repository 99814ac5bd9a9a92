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
#include "attnscope/families/model/family_model.h"
#include "render/screens/screen.h"
#include "render/view_parts.h"

/* The weight between the focus and token j: the query's on key j; with K, query j's on the key. */
static float
weight_of(const struct matrix *w, bool key_side, int focus, int j)
{
    return key_side ? MAT_AT(w, j, focus) : MAT_AT(w, focus, j);
}

/*
 * The line under the text: the five heaviest weights, largest first, among
 * those the mask lets the focus see (or, key side, be seen by).
 */
static void
draw_heaviest(struct grid *g, const struct pipeline *p, const struct matrix *w, bool ks,
              int focus, int q, const char *const *labels, int y)
{
    int order[5];
    int shown = 0;
    int first = 0, end = w->rows;
    int x;

    if (!ks)
        attention_mask_range(&p->cfg, q, w->cols, &first, &end);
    for (int r = 0; r < 5; r++) {
        int best = -1;
        for (int j = first; j < end; j++) {
            bool taken = false;
            const float wj = weight_of(w, ks, focus, j);
            if (ks ? pipeline_masked(p, j, focus) : pipeline_masked(p, q, j))
                continue;
            for (int u = 0; u < shown; u++)
                taken |= order[u] == j;
            if (!taken && (best < 0 || wj > weight_of(w, ks, focus, best)))
                best = j;
        }
        if (best >= 0)
            order[shown++] = best;
    }
    x = grid_put(g, 0, y, g->width, style_role(ROLE_TEXT),
                 ks ? "most attention from: " : "most weight: ");
    for (int u = 0; u < shown; u++) {
        char item[96];
        snprintf(item, sizeof item, "%s%s %.2f", u ? ", " : "", labels[order[u]],
                 (double)weight_of(w, ks, focus, order[u]));
        x += grid_put(g, x, y, g->width - x, style_role(ROLE_TEXT), item);
    }
}

/*
 * The sentence view: the text itself, each token shaded by the weight the
 * query token (the cursor's row) gives it in the head shown; the tokens
 * after the query, which a causal mask hides from it, dimmed.  With K the
 * roles swap (bertviz's hover on a key): the key is the cursor's column and
 * each query is shaded by the weight it gives that key.
 */
static void
draw_text_view(struct grid *g, struct view *v, const struct pipeline *p)
{
    const struct family_model_state *m = pipeline_decoder(p);
    const bool ks = v->key_side;
    struct pipeline_view w;
    const int q = v->cursor_row < p->st.nq ? v->cursor_row : p->st.nq - 1;
    const int k = v->cursor_col < p->st.nk ? v->cursor_col : p->st.nk - 1;
    const int focus = ks ? k : q;
    /* The text shaded: the keys' (the source's, across sentences), or with K the queries'. */
    const struct token_list *toks = !ks && p->cfg.cross ? &p->source_tokens : &p->tokens;
    const char *in = p->cfg.cross ? (ks ? " from the target" : " in the source") : "";
    const char *const *labels = ks ? p->query_labels : p->key_labels;
    int x = 0;
    int y = 6;
    char layer[32] = "";
    char heads[48];

    pipeline_stage_view(p, STAGE_WEIGHTS, v->head, &w);
    if (v->grid_heads && p->st.shape.heads > 1 &&
        view_reserve_scratch(v, (size_t)w.m.rows * (size_t)w.m.cols) == 0) {
        /* g: the mean of the layer's heads, each key's weight averaged over them. */
        pipeline_stage_heads_mean(p, STAGE_WEIGHTS, v->work.scratch);
        w.m = matrix_view(v->work.scratch, w.m.rows, w.m.cols);
    }
    if (!v->present)
        view_draw_knob_bar(g, v, p);
    view_draw_sentence(g, v, p, 1);
    if (m != NULL)
        snprintf(layer, sizeof layer, "layer %d, ", p->layer);
    if (v->grid_heads && p->st.shape.heads > 1)
        snprintf(heads, sizeof heads, "the mean of the %d heads", p->st.shape.heads);
    else
        snprintf(heads, sizeof heads, "head %d of %d", v->head, p->st.shape.heads);
    grid_printf_cut(g, 0, 3, g->width, style_role(ROLE_TITLE),
                ks ? "Who attends to '%s'%s: %s%s" : "What '%s' attends to%s: %s%s",
                ks ? p->key_labels[focus] : p->query_labels[focus], in, layer, heads);
    view_draw_keys_hint(g, v, 4,
                        ks ? "Left Right or a letter: key   K: what it attends to   Tab: head   "
                             "g: mean   T: back"
                        : m != NULL ? "Left Right or a letter: query   K: who attends to it   "
                                      "Tab: head   g: mean   , .: layer   T: back"
                                    : "Left Right or a letter: query   K: who attends to it   "
                                      "Tab: head   g: mean   T: back");
    y = view_overlay_narration(g, v, y);
    for (int j = 0; j < toks->count && y < g->height - 6; j++) {
        const char *t = toks->text[j];
        /* (query, key) of the weight that shades token j */
        const int qi = ks ? j : focus;
        const int kj = ks ? focus : j;
        const float wt = qi < w.m.rows && kj < w.m.cols ? MAT_AT(&w.m, qi, kj) : 0.0f;
        const bool hidden = pipeline_masked(p, qi, kj);
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
        if (j == focus && !p->cfg.cross)
            st.attr |= ATTR_BOLD | ATTR_UNDERLINE;
        need = (space ? 1 : 0) + utf8_width(t) + (int)strlen(mark);
        /* A model's tokens without a space (",", "'s") go with the word before them to a new line. */
        for (int a = j + 1; m != NULL && a < toks->count && x + need <= g->width; a++) {
            if (strncmp(toks->text[a], "\xc2\xb7", 2) == 0 || utf8_width(toks->text[a]) == 0)
                break;
            need += utf8_width(toks->text[a]) + (v->colour ? 0 : 6);
        }
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
    draw_heaviest(g, p, &w.m, ks, focus, q, labels, y + 2);
    if (v->colour) {
        /* What the shades mean: weight 0 to 1 on the ramp, and the dimmed tokens. */
        int x0 = heatmap_scale(g, 0, y + 3, g->width, RAMP_SEQUENTIAL, true, v->utf8, "weight ",
                               "0", " ", "1");
        const bool some_dimmed = ks ? focus > 0 : focus < toks->count - 1;
        const bool windowed = p->window > 0 && (ks ? toks->count - 1 - focus >= p->window
                                                    : focus >= p->window);
        if (x0 > 0 && windowed)
            grid_printf(g, x0, y + 3, g->width - x0, style_role(ROLE_DIM),
                        ks ? "   dimmed: queries before it or over %d after it (their window)"
                           : "   dimmed: out of this sliding layer's window (the last %d)",
                        ks ? p->window - 1 : p->window);
        else if (x0 > 0 && p->cfg.mask == ATTN_MASK_CAUSAL && !p->cfg.cross && some_dimmed)
            grid_put(g, x0, y + 3, g->width - x0, style_role(ROLE_DIM),
                     ks ? "   dimmed: the queries before it, which the causal mask keeps from seeing it"
                        : "   dimmed: the tokens after it, hidden by the causal mask");
    }
    view_draw_footer(g, v, g->height - 1);
}

static bool
has_sentence(const struct pipeline *p)
{
    return !p->qkv_given;
}

const struct screen screen_sentence = { "sentence", has_sentence, draw_text_view, NULL };
