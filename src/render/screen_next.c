/*
 * screen_next.c: the predictions (N, a trained model): after each position
 * its likeliest next tokens with their probabilities, and the logit lens
 * after the last token.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/families/gpt2/family_gpt2.h"
#include "render/screen.h"
#include "render/view_parts.h"

/* A bar of width columns for a probability (eighths of a block in UTF-8, '#' otherwise). */
static int
put_bar(struct grid *g, int x, int y, int width, float prob, bool utf8)
{
    static const char *const eighths[] = { "", "\xe2\x96\x8f", "\xe2\x96\x8e", "\xe2\x96\x8d",
                                           "\xe2\x96\x8c", "\xe2\x96\x8b", "\xe2\x96\x8a",
                                           "\xe2\x96\x89" };
    const int units = (int)(prob * (float)width * 8.0f + 0.5f);
    int used = 0;

    for (int k = 0; k < units / 8; k++)
        used += grid_put(g, x + used, y, width - used, style_role(ROLE_TITLE),
                         utf8 ? "\xe2\x96\x88" : "#");
    if (utf8 && units % 8 > 0)
        used += grid_put(g, x + used, y, width - used, style_role(ROLE_TITLE), eighths[units % 8]);
    return width;
}

/*
 * The predictions: after each position its likeliest next tokens with
 * probabilities and a bar for the first; below, the logit lens after the
 * last token (each layer's stream read as if it were the last layer's).
 */
static void
draw_next_view(struct grid *g, struct view *v, const struct pipeline *p)
{
    const struct gpt2_state *m = pipeline_gpt2(p);
    const int outputs = decoder_outputs(&m->model->dec.cfg);
    const int LENS_K = outputs < 3 ? outputs : 3;
    const int top = m->run.top;
    const int n = m->run.n;
    const int bar_w = 12;
    int lens_rows = p->layers + 2 < g->height / 2 ? p->layers + 2 : g->height / 2;
    int room = g->height - 7 - lens_rows;
    int first;
    int y = 5;
    char shown[128];

    if (!v->present)
        view_draw_knob_bar(g, p);
    view_draw_sentence(g, v, p, 1);
    grid_put(g, 0, 3, g->width, style_role(ROLE_TITLE),
             top == 0                        ? "Next tokens: --top 0 asked for none"
             : model_is_classifier(m->model) ? "Classes: the classifier head at each position (the "
                                               "last one's is its answer)"
                                             : "Next tokens: the likeliest after each position");
    view_draw_keys_hint(g, v, 4, "N or Esc: back");
    y = view_overlay_narration(g, v, y);
    room -= y - 5;
    if (room < 1)
        room = 1;
    first = n > room ? n - room : 0; /* the end of the text: what comes next */
    /* A lesson's step points at a position (its cell's row): that one stays in sight. */
    if (v->narration != NULL && v->cursor_row >= 0 && v->cursor_row < first)
        first = v->cursor_row;
    for (int i = first; i < n && top > 0; i++, y++) {
        const float *pr = m->run.top_probs + (size_t)i * (size_t)top;
        const int *id = m->run.top_ids + (size_t)i * (size_t)top;
        const bool pointed = v->narration != NULL && i == v->cursor_row;
        const struct style st = style_role(i == n - 1 || pointed ? ROLE_TITLE : ROLE_TEXT);
        int x = grid_printf(g, 0, y, g->width, st, pointed ? "%3d\u25b8 " : "%4d ", i);
        grid_put(g, x, y, 12, st, p->tokens.text[i]); /* (cut at 12 columns) */
        x += 13;
        x += put_bar(g, x, y, bar_w, pr[0], v->utf8);
        for (int t = 0; t < top && x < g->width; t++) {
            model_output_display(m->model, id[t], shown, sizeof shown);
            x += grid_printf(g, x, y, g->width - x, style_role(t == 0 ? ROLE_TITLE : ROLE_TEXT),
                             " %s %.3f", shown, (double)pr[t]);
        }
    }
    y++;
    {
        int *ids = malloc((size_t)p->layers * (size_t)LENS_K * sizeof *ids);
        float *probs = malloc((size_t)p->layers * (size_t)LENS_K * sizeof *probs);
        if (ids != NULL && probs != NULL &&
            decoder_logit_lens(&m->model->dec, &m->run, n - 1, LENS_K, ids, probs, NULL) == ATTN_OK) {
            grid_printf(g, 0, y++, g->width, style_role(ROLE_TITLE),
                        "Logit lens after '%s': each layer read through ln_f as if it were the last",
                        p->query_labels[n - 1]);
            for (int l = p->layers > lens_rows - 2 ? p->layers - (lens_rows - 2) : 0;
                 l < p->layers && y < g->height - 1; l++, y++) {
                int x = grid_printf(g, 0, y, g->width, style_role(ROLE_TEXT), "layer %3d ", l);
                x += put_bar(g, x, y, bar_w, probs[l * LENS_K], v->utf8);
                for (int t = 0; t < LENS_K && x < g->width; t++) {
                    model_output_display(m->model, ids[l * LENS_K + t], shown, sizeof shown);
                    x += grid_printf(g, x, y, g->width - x, style_role(ROLE_TEXT), " %s %.3f", shown,
                                     (double)probs[l * LENS_K + t]);
                }
            }
        }
        free(ids);
        free(probs);
    }
    view_draw_footer(g, v, g->height - 1);
}

static bool
has_model(const struct pipeline *p)
{
    return pipeline_gpt2(p) != NULL;
}

const struct screen screen_next = { "next", has_model, draw_next_view, NULL };
