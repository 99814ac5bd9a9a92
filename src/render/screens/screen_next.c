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

#include "attnscope/families/model/family_model.h"
#include "attnscope/families/model/generate.h"
#include "render/parts/parts.h"
#include "render/screens/screen.h"
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

/* The probability p gives token id among the top ones of a position, or -1 when not among them. */
static float
prob_among(const int *ids, const float *probs, int top, int id)
{
    for (int t = 0; t < top; t++)
        if (ids[t] == id)
            return probs[t];
    return -1.0f;
}

/*
 * With heads ablated, one line: the cursor's position's likeliest tokens
 * of the intact model, each with what it has with the heads ablated
 * ("·Tor 0.689\u21920.619"; when it is no longer among the ablated
 * model's top ones, below the last of them: "\u2192<0.012").
 */
static void
draw_before_after(struct grid *g, struct view *v, const struct family_model_state *m, int pos, int y)
{
    const int top = m->run.top;
    const int *id = m->run.top_ids + (size_t)pos * (size_t)top;
    const float *pr = m->run.top_probs + (size_t)pos * (size_t)top;
    const int *bid = v->base_ids + (size_t)pos * (size_t)v->base_top;
    const float *bpr = v->base_probs + (size_t)pos * (size_t)v->base_top;
    char line[1024] = "";
    char shown[128];
    size_t used = 0;
    int x;

    for (int t = 0; t < v->base_top && used < sizeof line - 200; t++) {
        const float after = prob_among(id, pr, top, bid[t]);
        model_output_display(m->model, bid[t], shown, sizeof shown);
        if (after >= 0.0f)
            used += (size_t)snprintf(line + used, sizeof line - used, " %s %.3f\u2192%.3f", shown,
                                     (double)bpr[t], (double)after);
        else
            used += (size_t)snprintf(line + used, sizeof line - used, " %s %.3f\u2192<%.3f",
                                     shown, (double)bpr[t], (double)pr[top - 1]);
    }
    x = grid_put(g, 0, y, g->width, style_role(ROLE_TITLE), "intact \u2192 heads ablated:");
    grid_put_cut(g, x, y, g->width - x, style_role(ROLE_TEXT), line);
}

/* Whether c was drawn at random (a temperature above 0 that did not overflow). */
static bool
draws(const struct generation *w, const struct sample_choice *c)
{
    return w->o.sample.temperature > 0.0 && !c->at_limit;
}

/* The cuts o makes, with their values (" after top-k 25 and top-p 0.9"), into buf. */
static const char *
cuts_text(const struct sample_options *o, char *buf, size_t size)
{
    char p[32];

    attn_shortest(p, sizeof p, o->top_p);
    if (o->top_k > 0 && o->top_p < 1.0)
        snprintf(buf, size, " after top-k %d and top-p %s", o->top_k, p);
    else if (o->top_k > 0)
        snprintf(buf, size, " after top-k %d", o->top_k);
    else if (o->top_p < 1.0)
        snprintf(buf, size, " after top-p %s", p);
    else
        buf[0] = '\0';
    return buf;
}

/* The rows draw_choice takes for m's writing: none without a draw to show. */
static int
choice_rows(const struct family_model_state *m)
{
    const struct generation *w = m->writing;
    const struct sample_choice *c;

    if (w == NULL || (w->written == 0 && !w->ended))
        return 0;
    c = w->ended ? &w->end : &w->steps[w->written - 1].choice;
    /* a drawn token's caption takes two lines: the cuts, then how torch.multinomial draws;
       and one for a second model's probability of it */
    return 2 + (draws(w, c) ? 1 : 0) + (c->shown < 5 ? c->shown : 5) +
           (!w->ended && !isnan(w->steps[w->written - 1].compared_prob) ? 1 : 0);
}

/*
 * The writing's last draw, as the book's figures show one: the likeliest
 * tokens before the cuts, their probability at temperature 1, after the
 * cuts and the temperature, their Exp(1) draw q and p / q, the chosen one
 * marked.
 */
static int
draw_choice(struct grid *g, struct view *v, const struct family_model_state *m, int y)
{
    const struct generation *w = m->writing;
    const bool end = w->ended;
    const struct sample_choice *c = end ? &w->end : &w->steps[w->written - 1].choice;
    const struct sample_options *o = &w->o.sample;
    const bool sampling = o->temperature > 0.0;
    const bool drawn = draws(w, c);
    const int rows = c->shown < 5 ? c->shown : 5; /* (the tokens' rows of choice_rows) */
    char how[160], t[32], cuts[96], shown[128];
    int x;

    attn_shortest(t, sizeof t, o->temperature);
    cuts_text(o, cuts, sizeof cuts);
    if (!sampling)
        snprintf(how, sizeof how, "greedy: argmax of the logits%s", cuts);
    else if (c->at_limit)
        snprintf(how, sizeof how, "logits / %s overflow float: the limit as T goes to 0, every "
                                  "p on the largest logit%s",
                 t, cuts);
    else
        snprintf(how, sizeof how, "softmax(logits / %s)%s", t, cuts);
    x = grid_printf(g, 0, y, g->width, style_role(ROLE_TITLE), "%s %d: ",
                    end ? "The end token's draw, step" : "The draw of step",
                    w->written + (end ? 1 : 0));
    grid_put_cut(g, x, y++, g->width - x, style_role(ROLE_DIM), how);
    if (drawn)
        grid_put_cut(g, x, y++, g->width - x, style_role(ROLE_DIM),
                     "then torch.multinomial: argmax p / q, q ~ Exp(1) per token");
    grid_printf(g, 0, y++, g->width, style_role(ROLE_DIM), "      %-14s %8s %8s %8s %8s", "token",
                "p (T 1)", "p drawn", "q", "p / q");
    for (int s = 0; s < rows; s++, y++) {
        const bool chosen = c->top_ids[s] == c->id;
        const bool cut = c->top_prob[s] == 0.0f;
        const struct style st = style_role(chosen ? ROLE_TITLE : cut ? ROLE_DIM : ROLE_TEXT);
        char q[16] = "", ratio[16] = "";
        model_output_display(m->model, c->top_ids[s], shown, sizeof shown);
        if (sampling && !cut) {
            snprintf(q, sizeof q, "%.3f", (double)c->top_q[s]);
            snprintf(ratio, sizeof ratio, "%.3f", (double)(c->top_prob[s] / c->top_q[s]));
        }
        x = grid_printf(g, 0, y, g->width, st, "%s ", chosen ? (v->utf8 ? "  \u25b8 " : "  > ")
                                                             : "    ");
        grid_put(g, x, y, 14, st, shown);
        grid_printf(g, x + 14, y, g->width - x - 14, st, " %8.4f %8.4f %8s %8s%s",
                    (double)c->top_plain[s], (double)c->top_prob[s], q, ratio,
                    chosen ? "  chosen" : cut ? "  cut" : "");
    }
    if (c->rank >= rows)
        grid_printf(g, 0, y - 1, g->width, style_role(ROLE_TITLE),
                    "  (chosen: %s, rank %d, p %.4f -> %.4f, q %.3f, p / q %.3f)",
                    model_output_display(m->model, c->id, shown, sizeof shown), c->rank,
                    (double)c->prob_plain, (double)c->prob, (double)c->q, (double)c->ratio);
    if (!end && v->compare != NULL && !isnan(w->steps[w->written - 1].compared_prob))
        grid_printf_cut(g, 0, y++, g->width, style_role(ROLE_TITLE),
                        "  %s gave %s %.4f, reading the same text (%s: %.4f)",
                        pipeline_decoder(v->compare->b)->model->name,
                        model_output_display(m->model, c->id, shown, sizeof shown),
                        (double)w->steps[w->written - 1].compared_prob, m->model->name,
                        (double)c->prob_plain);
    return y;
}

static void draw_next_of(struct grid *g, struct view *v, const struct pipeline *p,
                         const struct family_model_state *m);

/*
 * Two models compared, their difference shown: after each position the
 * KL divergence of the second's next-token distribution from the first's
 * (a bar on the text's largest) and each one's likeliest token; below, both
 * logit lenses after the cursor's position and the layer where they part.
 */
static void
draw_next_compared(struct grid *g, struct view *v, const struct pipeline *p)
{
    struct compare *c = v->compare;
    const struct family_model_state *ma = pipeline_decoder(c->a), *mb = pipeline_decoder(c->b);
    const int n = ma->run.n, layers = p->layers;
    const int pos = v->cursor_row >= 0 && v->cursor_row < n ? v->cursor_row : n - 1;
    const int lens_rows = layers + 2 < g->height / 2 ? layers + 2 : g->height / 2;
    float *kl = malloc(((size_t)n + 1) * sizeof *kl);
    int *ids = malloc(2 * ((size_t)layers + 1) * sizeof *ids);
    float *probs = malloc(2 * ((size_t)layers + 1) * sizeof *probs);
    struct compare_lens lens = { { ids, ids + layers }, { probs, probs + layers }, -1 };
    float most = 0.0f;
    int room, shown_rows, first, y = 5;
    char x1[128], x2[128];

    if (!v->present)
        view_draw_knob_bar(g, v, p);
    view_draw_sentence(g, v, p, 1);
    view_draw_keys_hint(g, v, 4, "Up Down PgUp PgDn Home End: the position   C: each model's own   "
                                 "N or Esc: back");
    if (kl == NULL || ids == NULL || probs == NULL || compare_next_kl(c, kl, NULL) != ATTN_OK) {
        grid_put(g, 0, 3, g->width, style_role(ROLE_ERROR),
                 "The two models' next tokens need memory to compare, and there is not enough");
        goto done;
    }
    for (int i = 0; i < n; i++)
        most = kl[i] > most ? kl[i] : most;
    y = view_overlay_narration(g, v, y);
    room = g->height - 2 - lens_rows - y;
    shown_rows = room < 1 ? 1 : n < room ? n : room;
    first = v->next_first >= 0 ? v->next_first : n - shown_rows;
    heatmap_keep_in_sight(&first, shown_rows, n, pos);
    v->next_first = first;
    v->frame.next_rows = shown_rows;
    grid_printf_cut(g, 0, 3, g->width, style_role(ROLE_TITLE),
                    "Next tokens: KL(first || second) in nats; the likeliest of %s | of %s",
                    ma->model->name, mb->model->name);
    for (int i = first; i < first + shown_rows; i++, y++) {
        const struct style st = style_role(i == pos ? ROLE_TITLE : ROLE_TEXT);
        const int ta = ma->run.top, tb = mb->run.top;
        int x = grid_printf(g, 0, y, g->width, st, i == pos ? "%3d\u25b8 " : "%4d ", i);
        grid_put(g, x, y, 12, st, p->tokens.text[i]);
        x += 13;
        x += grid_printf(g, x, y, g->width - x, st, "KL %.4f ", (double)kl[i]);
        x += put_bar(g, x, y, 10, most > 0.0f ? kl[i] / most : 0.0f, v->utf8);
        if (ta > 0 && tb > 0)
            grid_printf(g, x, y, g->width - x, st, " %s %.3f | %s %.3f",
                        model_output_display(ma->model, ma->run.top_ids[(size_t)i * ta], x1,
                                             sizeof x1),
                        (double)ma->run.top_probs[(size_t)i * ta],
                        model_output_display(mb->model, mb->run.top_ids[(size_t)i * tb], x2,
                                             sizeof x2),
                        (double)mb->run.top_probs[(size_t)i * tb]);
    }
    y++;
    if (compare_lens_parting(c, pos, &lens, NULL) != ATTN_OK)
        goto done;
    if (lens.parted < 0)
        grid_printf_cut(g, 0, y++, g->width, style_role(ROLE_TITLE),
                        "Logit lens after '%s' (position %d), both: they agree at the last layer",
                        p->query_labels[pos], pos);
    else
        grid_printf_cut(g, 0, y++, g->width, style_role(ROLE_TITLE),
                        "Logit lens after '%s' (position %d), both: the predictions part at "
                        "layer %d",
                        p->query_labels[pos], pos, lens.parted);
    {
        /* The last layers, or from the layer shown (, .) when it is above them. */
        const int fit = g->height - 1 - y;
        const int shown_layers = fit < 1 ? 1 : fit < layers ? fit : layers;
        int lens_first = layers - shown_layers;
        if (p->layer < lens_first)
            lens_first = p->layer;
        for (int l = lens_first; l < lens_first + shown_layers && y < g->height - 1; l++, y++) {
            const bool apart = lens.parted >= 0 && l >= lens.parted;
            grid_printf_cut(g, 0, y, g->width, style_role(apart ? ROLE_TITLE : ROLE_TEXT),
                            "layer %3d  %s %.3f | %s %.3f%s", l,
                            model_output_display(ma->model, ids[l], x1, sizeof x1),
                            (double)probs[l],
                            model_output_display(mb->model, ids[layers + l], x2, sizeof x2),
                            (double)probs[layers + l], apart ? "  apart" : "");
        }
    }
done:
    free(kl);
    free(ids);
    free(probs);
    view_draw_footer(g, v, g->height - 1);
}

/*
 * The predictions: after each position its likeliest next tokens with
 * probabilities and a bar for the first, scrolled to keep the cursor's
 * position in sight; below, with heads ablated, what they were without
 * them, and the logit lens after the cursor's position (each layer's
 * stream read as if it were the last layer's).
 */
static void
draw_next_view(struct grid *g, struct view *v, const struct pipeline *p)
{
    const struct family_model_state *m;

    /* (every position's next tokens, those the forward left for later made now) */
    (void)family_model_next_tokens(p);
    if (v->compare != NULL) {
        (void)family_model_next_tokens(v->compare->a);
        (void)family_model_next_tokens(v->compare->b);
    }
    if (v->compare != NULL && v->side == COMPARE_DIFFERENCE) {
        draw_next_compared(g, v, p);
        return;
    }
    /* (one model of two: its own predictions and lens) */
    if (v->compare != NULL)
        p = compare_side_pipeline(v->compare, v->side);
    m = pipeline_decoder(p);
    draw_next_of(g, v, p, m);
}

static void
draw_next_of(struct grid *g, struct view *v, const struct pipeline *p,
             const struct family_model_state *m)
{
    const int outputs = decoder_outputs(&m->model->dec.cfg);
    const int LENS_K = outputs < 3 ? outputs : 3;
    const int top = m->run.top;
    const int n = m->run.n;
    const int bar_w = 12;
    const int pos = v->cursor_row >= 0 && v->cursor_row < n ? v->cursor_row : n - 1;
    const bool compare = v->base_n == n && top > 0 && v->base_top > 0;
    const int draw_rows = choice_rows(m);
    const int lens_most = draw_rows > 0 ? g->height / 3 : g->height / 2;
    int lens_rows = p->layers + 2 < lens_most ? p->layers + 2 : lens_most;
    int room = g->height - 6 - lens_rows - draw_rows - (compare ? 1 : 0);
    int first;
    int shown_rows;
    int y = 5;
    char shown[128];

    if (!v->present)
        view_draw_knob_bar(g, v, p);
    view_draw_sentence(g, v, p, 1);
    view_draw_keys_hint(g, v, 4, "Up Down PgUp PgDn Home End: the position   N or Esc: back");
    y = view_overlay_narration(g, v, y);
    room -= y - 5;
    if (room < 1)
        room = 1;
    shown_rows = n < room ? n : room;
    /* Scrolled as little as keeps the cursor's position in sight; the text's end first. */
    first = v->next_first >= 0 ? v->next_first : n - shown_rows;
    heatmap_keep_in_sight(&first, shown_rows, n, pos);
    v->next_first = first;
    v->frame.next_rows = shown_rows;
    {
        const int x = grid_put(g, 0, 3, g->width, style_role(ROLE_TITLE),
                               top == 0 ? "Next tokens: --top 0 asked for none"
                               : model_is_classifier(m->model)
                                   ? "Classes: the classifier head at each position (the last "
                                     "one's is its answer)"
                                   : "Next tokens: the likeliest after each position");
        if (shown_rows < n && top > 0)
            grid_printf(g, x, 3, g->width - x, style_role(ROLE_DIM), " (positions %d-%d of %d)",
                        first, first + shown_rows - 1, n);
    }
    for (int i = first; i < first + shown_rows && top > 0; i++, y++) {
        const float *pr = m->run.top_probs + (size_t)i * (size_t)top;
        const int *id = m->run.top_ids + (size_t)i * (size_t)top;
        const struct style st = style_role(i == pos ? ROLE_TITLE : ROLE_TEXT);
        int x = grid_printf(g, 0, y, g->width, st, i == pos ? "%3d\u25b8 " : "%4d ", i);
        grid_put(g, x, y, 12, st, p->tokens.text[i]); /* (cut at 12 columns) */
        x += 13;
        x += put_bar(g, x, y, bar_w, pr[0], v->utf8);
        for (int t = 0; t < top && x < g->width; t++) {
            model_output_display(m->model, id[t], shown, sizeof shown);
            x += grid_printf(g, x, y, g->width - x, style_role(t == 0 ? ROLE_TITLE : ROLE_TEXT),
                             " %s %.3f", shown, (double)pr[t]);
        }
    }
    if (compare)
        draw_before_after(g, v, m, pos, y++);
    if (draw_rows > 0)
        y = draw_choice(g, v, m, y);
    y++;
    {
        int *ids = malloc((size_t)p->layers * (size_t)LENS_K * sizeof *ids);
        float *probs = malloc((size_t)p->layers * (size_t)LENS_K * sizeof *probs);
        if (ids != NULL && probs != NULL &&
            decoder_logit_lens(&m->model->dec, &m->run, pos, LENS_K, ids, probs, NULL) == ATTN_OK) {
            /* The last layers, or from the layer shown (, .) when it is above them. */
            const int fit = lens_rows - 2 < g->height - 1 - (y + 1) ? lens_rows - 2
                                                                   : g->height - 1 - (y + 1);
            const int shown_layers = fit < 1 ? 1 : fit < p->layers ? fit : p->layers;
            int lens_first = p->layers - shown_layers;
            char cut[64] = "";
            if (p->layer < lens_first)
                lens_first = p->layer;
            if (shown_layers < p->layers)
                snprintf(cut, sizeof cut, ", layers %d-%d of 0-%d (, .)", lens_first,
                         lens_first + shown_layers - 1, p->layers - 1);
            grid_printf(g, 0, y, g->width, style_role(ROLE_TITLE),
                        "Logit lens after '%s' (position %d)%s: each layer read through %s as "
                        "if it were the last",
                        p->query_labels[pos], pos, cut,
                        norm_final_said(p));
            y++;
            for (int l = lens_first; l < lens_first + shown_layers && y < g->height - 1;
                 l++, y++) {
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
    return pipeline_decoder(p) != NULL;
}

const struct screen screen_next = { "next", has_model, draw_next_view, NULL };
