/*
 * view.c: composing a frame (see view.h).
 *
 * Layout, top to bottom: the knob bar, the sentence, the stage bar, the
 * stage's title and formula, its explanation, the heatmap (or the grid of
 * heads) with its legend, the inspector (to the right on wide screens,
 * below otherwise), and the footer with the keys or a message.
 */
#include "config.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/families/gpt2/family_gpt2.h"
#include "attnscope/families/gpt2/headmap.h"
#include "attnscope/pipeline/knob.h"
#include "render/inspect.h"
#include "render/stagemap.h"
#include "render/text.h"
#include "attnscope/families/gpt2/family_gpt2.h"
#include "render/view.h"
#include "render/view_parts.h"

#define WIDE_SCREEN 110

void
view_init(struct view *v)
{
    memset(v, 0, sizeof *v);
    v->stage = VIEW_OUTPUT;
    v->colour = true;
    v->utf8 = true;
}

void
view_destroy(struct view *v)
{
    free(v->work.scratch);
    free(v->work.labels);
    free(v->work.label_text);
    free(v->work.row_label);
    free(v->work.row_label_text);
    memset(v, 0, sizeof *v);
}

int
view_reserve_scratch(struct view *v, size_t floats)
{
    if (floats <= v->work.scratch_cap)
        return 0;
    float *bigger = realloc(v->work.scratch, floats * sizeof(float));
    if (bigger == NULL)
        return -1;
    v->work.scratch = bigger;
    v->work.scratch_cap = floats;
    return 0;
}

/* Column labels "q0".."v<hd-1>" for the Q|K|V view. */
int
view_qkv_labels(struct view *v, int hd)
{
    size_t need = (size_t)3 * (size_t)hd;
    char *text;
    char **labels;

    if (need > v->work.labels_cap) {
        labels = realloc(v->work.labels, need * sizeof *labels);
        if (labels == NULL)
            return -1;
        v->work.labels = labels;
        text = realloc(v->work.label_text, need * 16);
        if (text == NULL)
            return -1;
        v->work.label_text = text;
        v->work.labels_cap = need;
    }
    for (size_t c = 0; c < need; c++) {
        v->work.labels[c] = v->work.label_text + c * 16;
        snprintf(v->work.labels[c], 16, "%c%d", "qkv"[c / (size_t)hd], (int)(c % (size_t)hd));
    }
    return 0;
}

/* Room for rows row labels of up to 39 bytes in v->work.row_label. */
int
view_reserve_row_labels(struct view *v, int rows)
{
    if ((size_t)rows > v->work.row_label_cap) {
        char **labels = realloc(v->work.row_label, (size_t)rows * sizeof *labels);
        char *text;
        if (labels == NULL)
            return -1;
        v->work.row_label = labels;
        text = realloc(v->work.row_label_text, (size_t)rows * 40);
        if (text == NULL)
            return -1;
        v->work.row_label_text = text;
        v->work.row_label_cap = (size_t)rows;
    }
    for (int i = 0; i < rows; i++)
        v->work.row_label[i] = v->work.row_label_text + (size_t)i * 40;
    return 0;
}

/* "q1/k1" row labels for Q, K and V given with their own labels. */
static int
row_labels(struct view *v, const struct pipeline *p, int rows)
{
    if (view_reserve_row_labels(v, rows) != 0)
        return -1;
    for (int i = 0; i < rows; i++) {
        snprintf(v->work.row_label[i], 40, "%.18s/%.18s", i < p->st.nq ? p->query_labels[i] : "-",
                 i < p->st.nk ? p->key_labels[i] : "-");
    }
    return 0;
}

/* Q | K | V side by side: a cell past the last row of its matrix holds nothing. */
static enum heat_kind
qkv_kind(const void *ctx, int i, int j)
{
    const struct view_work *w = ctx;

    return i >= w->qkv_rows[j / w->qkv_width] ? HEAT_ABSENT : HEAT_VALUE;
}

int
view_stage_spec(struct view *v, const struct pipeline *p, enum view_stage s, int head,
                struct heatmap_spec *spec)
{
    const struct attention_stages *st = &p->st;
    const int hd = st->shape.head_dim;
    const int n = st->nq;

    if (view_params_shown(v, p, s))
        return view_params_spec(v, p, s, head, spec);
    if (s != VIEW_QKV && s != VIEW_CONTEXT) {
        enum pipeline_stage ps = explain_pipeline_stage(p, s, v->mask_matrix);
        stagemap_spec(&v->work.map, p, ps, head, s == VIEW_MASK && v->mask_matrix, v->colour, v->utf8,
                      spec);
        if (s != VIEW_CONCAT)
            spec->col_group = 0;
        if (v->present)
            spec->ramp = palette_high_contrast(spec->ramp);
        return 0;
    }
    /* Q | K | V side by side, or one head's context: copied into scratch. */
    stagemap_spec(&v->work.map, p, s == VIEW_QKV ? STAGE_QUERIES : STAGE_CONTEXT, head, false,
                  v->colour, v->utf8, spec);
    spec->col_group = 0;
    if (v->present)
        spec->ramp = palette_high_contrast(spec->ramp);
    /* Both show one head on the scale of the whole matrix (every head). */
    spec->range_heads = st->shape.heads;
    if (s == VIEW_QKV) {
        const struct matrix *src[3] = { &st->queries, &st->keys, &st->values };
        int rows = st->nk > n ? st->nk : n;
        if (view_reserve_scratch(v, (size_t)rows * 3 * (size_t)hd) != 0 || view_qkv_labels(v, hd) != 0)
            return -1;
        /* With more keys than queries the query columns run out first: those cells are blank. */
        for (int i = 0; i < rows; i++)
            for (int w = 0; w < 3; w++)
                for (int c = 0; c < hd; c++)
                    v->work.scratch[((size_t)i * 3 + (size_t)w) * (size_t)hd + (size_t)c] =
                        i < src[w]->rows ? MAT_AT(src[w], i, head * hd + c) : 0.0f;
        for (int w = 0; w < 3; w++)
            v->work.qkv_rows[w] = src[w]->rows;
        v->work.qkv_width = hd;
        spec->kind = qkv_kind;
        spec->kind_ctx = &v->work;
        v->work.map.m = matrix_view(v->work.scratch, rows, 3 * hd);
        spec->row_labels = p->query_labels;
        if (p->qkv_given || p->cfg.cross) {
            /* Rows pair the i-th query with the i-th key (the target's, the source's): label both. */
            if (row_labels(v, p, rows) != 0)
                return -1;
            spec->row_labels = (const char *const *)v->work.row_label;
            spec->row_marked = NULL;
        }
        spec->col_labels = (const char *const *)v->work.labels;
        spec->lo = INFINITY;
        spec->hi = -INFINITY;
        for (int w = 0; w < 3; w++) {
            float lo;
            float hi;
            stagemap_range(src[w]->data, matrix_size(src[w]), &lo, &hi);
            spec->lo = fminf(spec->lo, lo);
            spec->hi = fmaxf(spec->hi, hi);
        }
        return 0;
    }
    if (view_reserve_scratch(v, (size_t)n * (size_t)hd) != 0)
        return -1;
    for (int i = 0; i < n; i++)
        memcpy(v->work.scratch + (size_t)i * (size_t)hd,
               matrix_row(&st->context, i) + (size_t)head * (size_t)hd, (size_t)hd * sizeof(float));
    v->work.map.m = matrix_view(v->work.scratch, n, hd);
    return 0;
}

static bool
stage_visible(const struct pipeline *p, enum view_stage s)
{
    return explain_stage_present(p, s);
}

bool
view_step_stage(struct view *v, const struct pipeline *p, int dir)
{
    int s = (int)v->stage;

    do {
        s += dir;
    } while (s >= 0 && s < VIEW_STAGE_COUNT && !stage_visible(p, (enum view_stage)s));
    if (s < 0 || s >= VIEW_STAGE_COUNT)
        return false;
    v->stage = (enum view_stage)s;
    return true;
}

int
view_stage_at(const struct view *v, int x, int y)
{
    if (y != v->frame.stage_bar_y || y < 0)
        return -1;
    for (int s = 0; s < VIEW_STAGE_COUNT; s++)
        if (x >= v->frame.stage_x[s][0] && x < v->frame.stage_x[s][1])
            return s;
    return -1;
}

static void
shape_of(struct view *v, const struct pipeline *p, int *rows, int *cols)
{
    struct heatmap_spec spec;

    if (view_stage_spec(v, p, v->stage, v->head, &spec) != 0) {
        *rows = *cols = 0;
        return;
    }
    *rows = spec.m->rows;
    *cols = spec.m->cols;
}

void
view_clamp(struct view *v, const struct pipeline *p)
{
    int rows;
    int cols;

    if (!stage_visible(p, v->stage))
        view_step_stage(v, p, 1);
    /* The parameters (W) belong to the stage they were asked on: another stage leaves them. */
    if (v->param_matrix && v->stage != v->param_stage)
        v->param_matrix = false;
    if (v->head >= p->st.shape.heads)
        v->head = p->st.shape.heads - 1;
    if (v->head < 0)
        v->head = 0;
    shape_of(v, p, &rows, &cols);
    if (v->cursor_row >= rows)
        v->cursor_row = rows - 1;
    if (v->cursor_col >= cols)
        v->cursor_col = cols - 1;
    if (v->cursor_row < 0)
        v->cursor_row = 0;
    if (v->cursor_col < 0)
        v->cursor_col = 0;
    v->frame.rows = rows;
    v->frame.cols = cols;
}

/* ------------------------------------------------------------------ bars */

/*
 * The knobs and their keys, from the knob table: "v:mha d:d_out 2 ...", or,
 * when that does not fit, the same values without their names.
 */
static void
draw_knob_bar(struct grid *g, const struct pipeline *p)
{
    char full[KNOB_COUNT][KNOB_TEXT_MAX];
    char terse[KNOB_COUNT][KNOB_TEXT_MAX];
    bool shown[KNOB_COUNT];
    int full_len = 0;
    int x = 0;
    struct rect bar = { 0, 0, g->width, 1 };
    char (*use)[KNOB_TEXT_MAX];

    for (int i = 0; i < KNOB_COUNT; i++) {
        const struct knob *k = &knob_table[i];
        shown[i] = knob_bar(k, p, full[i], terse[i]);
        if (shown[i])
            full_len += (int)strlen(k->bar_key) + 2 + (int)strlen(full[i]);
    }
    use = full_len <= g->width ? full : terse;
    grid_fill(g, bar, ' ', style_role(ROLE_BAR));
    if (pipeline_gpt2(p) != NULL) {
        /* A trained model: its name and the layer shown come first. */
        const struct gpt2_state *m = pipeline_gpt2(p);
        x += grid_printf(g, x, 0, g->width - x, style_role(ROLE_BAR), "%s ", m->model->name);
        x += grid_put(g, x, 0, g->width - x, style_role(ROLE_BAR_KEY), ",.");
        x += grid_printf(g, x, 0, g->width - x, style_role(ROLE_BAR), ":layer %d of 0-%d ",
                         p->layer, p->layers - 1);
        if (m->ablated_heads > 0) {
            x += grid_put(g, x, 0, g->width - x, style_role(ROLE_BAR_KEY), "a");
            x += grid_printf(g, x, 0, g->width - x, style_role(ROLE_BAR), ":%d head%s off ",
                             m->ablated_heads, m->ablated_heads == 1 ? "" : "s");
        }
    }
    for (int i = 0; i < KNOB_COUNT; i++) {
        const char *key = knob_table[i].bar_key;
        int need;
        if (!shown[i])
            continue;
        need = (int)strlen(key) + 2 + (int)strlen(use[i]);
        if (x + need > g->width + 1)
            break;
        x += grid_put(g, x, 0, g->width - x, style_role(ROLE_BAR_KEY), key);
        x += grid_printf(g, x, 0, g->width - x, style_role(ROLE_BAR), ":%s ", use[i]);
    }
}

/*
 * tl's tokens from x on row y, made-up ones marked '*', while they fit
 * before room (the last one may run on to last_room); an ellipsis for the
 * rest.  Returns the column after them.
 */
static int
draw_tokens(struct grid *g, const struct view *v, int x, int y, int room, int last_room,
            const struct token_list *tl, const unsigned char *made_up)
{
    const char *more = v->utf8 ? "\xe2\x80\xa6" : "...";
    int t;

    for (t = 0; t < tl->count; t++) {
        struct style st = style_role(made_up[t] ? ROLE_LABEL_MADE_UP : ROLE_TEXT);
        int need = (t > 0) + utf8_width(tl->text[t]) + made_up[t];
        if (x + need > room && !(t == tl->count - 1 && x + need <= last_room))
            break;
        if (t > 0)
            x += grid_put(g, x, y, g->width - x, style_role(ROLE_TEXT), " ");
        x += grid_put(g, x, y, g->width - x, st, tl->text[t]);
        if (made_up[t])
            x += grid_put(g, x, y, g->width - x, st, "*");
    }
    if (t < tl->count)
        x += grid_put(g, x, y, g->width - x, style_role(ROLE_DIM), more);
    return x;
}

/* Across sentences: "target: ...  source: ...  (T 3, S 5, d_in 4)", each given half the room. */
static void
draw_two_sentences(struct grid *g, const struct view *v, const struct pipeline *p, int y)
{
    char count[96];
    const int ellipsis = v->utf8 ? 1 : 3;
    int x;
    int end;

    snprintf(count, sizeof count, "   (T %d, S %d, d_in %d)", p->tokens.count,
             p->source_tokens.count, p->d_in);
    end = g->width - (int)strlen(count);
    x = grid_put(g, 0, y, g->width, style_role(ROLE_DIM), "target: ");
    x = draw_tokens(g, v, x, y, (end - 10) / 2 - ellipsis, (end - 10) / 2, &p->tokens, p->made_up);
    x += grid_put(g, x, y, g->width - x, style_role(ROLE_DIM), "  source: ");
    x = draw_tokens(g, v, x, y, end - ellipsis, end, &p->source_tokens, p->source_made_up);
    grid_put(g, x, y, g->width - x, style_role(ROLE_DIM), count);
}

/*
 * What the editor shows for code point cp: a control character (a newline
 * or a tab that a sentence file held) as a visible mark of one column
 * instead of nothing; everything else as itself.
 */
static uint32_t
edit_glyph(const struct view *v, uint32_t cp, int *width)
{
    if (cp < 0x20 || cp == 0x7f) {
        *width = 1;
        if (!v->utf8)
            return '~';
        return cp == '\n' ? 0x21B5 /* ↵ */ : cp == '\t' ? 0x21E5 /* ⇥ */ : 0x2423 /* ␣ */;
    }
    *width = utf8_char_width(cp) > 0 ? utf8_char_width(cp) : 0;
    return cp;
}

static void
draw_sentence(struct grid *g, const struct view *v, const struct pipeline *p, int y)
{
    const char *prefix = !v->editing || !p->cfg.cross ? "sentence: "
                         : v->editing_source         ? "source: "
                                                     : "target: ";
    int x = grid_put(g, 0, y, g->width, style_role(ROLE_DIM), prefix);

    if (p->qkv_given && !v->editing) {
        grid_printf(g, x, y, g->width - x, style_role(ROLE_TEXT),
                    "no sentence: %d queries and %d keys given directly", p->st.nq, p->st.nk);
        return;
    }
    if (v->editing) {
        const char *t = v->edit_text;
        size_t pos = 0;
        struct rect field = { x, y, g->width - x, 1 };
        grid_fill(g, field, ' ', style_role(ROLE_EDIT));
        /* Scroll the field so that the cursor is visible. */
        {
            int before = 0;
            for (size_t b = 0; b < v->edit_cursor && t[b];) {
                uint32_t cp;
                int w;
                int len = utf8_decode(t + b, &cp);
                edit_glyph(v, cp, &w);
                before += w;
                b += (size_t)len;
            }
            while (before > field.w - 2 && t[pos]) {
                uint32_t cp;
                int w;
                int len = utf8_decode(t + pos, &cp);
                edit_glyph(v, cp, &w);
                before -= w;
                pos += (size_t)len;
            }
        }
        {
            int col = x;
            size_t b = pos;
            while (t[b] && col < g->width) {
                uint32_t cp;
                int w;
                int len = utf8_decode(t + b, &cp);
                uint32_t shown = edit_glyph(v, cp, &w);
                struct style st = style_role(ROLE_EDIT);
                if (shown != cp)
                    st.attr |= ATTR_DIM;
                if (b == v->edit_cursor)
                    st.attr |= ATTR_REVERSE;
                grid_set(g, col, y, shown, st);
                col += w;
                b += (size_t)len;
            }
            if (v->edit_cursor >= strlen(t) && col < g->width) {
                struct style st = style_role(ROLE_EDIT);
                st.attr |= ATTR_REVERSE;
                grid_set(g, col, y, ' ', st);
            }
        }
        return;
    }
    if (p->cfg.cross) {
        draw_two_sentences(g, v, p, y);
        return;
    }
    {
        /* The tokens, with made-up ones marked '*'; an ellipsis when they do not fit. */
        char count[160];
        int room;
        const struct gpt2_state *m = pipeline_gpt2(p);
        if (m != NULL && m->run.top > 0) {
            /* What a language model is asked first: its next token, from every stage. */
            const size_t last = (size_t)(m->run.n - 1) * (size_t)m->run.top;
            char next[64];
            model_token_display(m->model, m->run.top_ids[last], next, sizeof next);
            snprintf(count, sizeof count, "   (%d of %d tokens)  next: %.40s %.0f%%",
                     p->tokens.count, m->model->gpt2.cfg.n_positions, next,
                     100.0 * (double)m->run.top_probs[last]);
        } else if (m != NULL) {
            snprintf(count, sizeof count, "   (%d of %d tokens)", p->tokens.count,
                     m->model->gpt2.cfg.n_positions);
        } else {
            snprintf(count, sizeof count, "   (%d tokens, d_in %d)", p->tokens.count, p->d_in);
        }
        room = g->width - x - (v->utf8 ? 1 : 3) - (int)strlen(count);
        x = draw_tokens(g, v, x, y, room, g->width - (int)strlen(count), &p->tokens, p->made_up);
        grid_put(g, x, y, g->width - x, style_role(ROLE_DIM), count);
    }
}

static int
stage_bar_width(const struct pipeline *p, bool brief)
{
    int w = 0;

    for (int s = 0; s < VIEW_STAGE_COUNT; s++)
        if (stage_visible(p, (enum view_stage)s))
            w += 3 + (int)strlen(explain_stage_short((enum view_stage)s, brief)) + !brief;
    return w;
}

static void
draw_stage_bar(struct grid *g, struct view *v, const struct pipeline *p, int y)
{
    int x = 0;
    struct rect bar = { 0, y, g->width, 1 };
    bool brief = stage_bar_width(p, false) > g->width;

    int first = 0;

    grid_fill(g, bar, ' ', style_role(ROLE_STAGE));
    v->frame.stage_bar_y = y;
    /*
     * When the bar is wider than the screen and the stage shown would fall
     * off its end (a model's block has many), the bar starts later, "<"
     * saying that stages come before.
     */
    for (;;) {
        int end = first > 0 ? 2 : 0;
        for (int s = first; s < VIEW_STAGE_COUNT && s <= (int)v->stage; s++)
            if (stage_visible(p, (enum view_stage)s))
                end += (int)strlen(explain_stage_short((enum view_stage)s, brief)) + 3 + !brief;
        if (end <= g->width || first >= (int)v->stage)
            break;
        first++;
    }
    if (first > 0)
        x += grid_put(g, x, y, g->width - x, style_role(ROLE_STAGE), " <");
    for (int s = 0; s < VIEW_STAGE_COUNT; s++) {
        char label[32];
        char key = explain_stage_key((enum view_stage)s);
        enum palette_role role = s == (int)v->stage ? ROLE_STAGE_ACTIVE : ROLE_STAGE;
        if (!stage_visible(p, (enum view_stage)s) || s < first)
            continue;
        snprintf(label, sizeof label, brief ? " %c %s" : " %c %s ", key ? key : '+',
                 explain_stage_short((enum view_stage)s, brief));
        if (x + (int)strlen(label) > g->width)
            break;
        v->frame.stage_x[s][0] = x;
        x += grid_put(g, x, y, g->width - x, style_role(role), label);
        v->frame.stage_x[s][1] = x;
    }
}

/* Writes wrapped text into r; returns the rows used. */
int
view_draw_wrapped(struct grid *g, struct rect r, struct style st, const char *text)
{
    int rows = 0;
    const char *line = text;

    while (*line && rows < r.h) {
        size_t next;
        size_t len = text_wrap(line, r.w, &next);
        char buf[1024];
        if (len >= sizeof buf)
            len = sizeof buf - 1;
        memcpy(buf, line, len);
        buf[len] = '\0';
        grid_put(g, r.x, r.y + rows, r.w, st, buf);
        rows++;
        line += next;
    }
    return rows;
}

int
view_count_wrapped(const char *text, int width)
{
    int rows = 0;

    while (*text) {
        size_t next;
        text_wrap(text, width, &next);
        rows++;
        text += next;
        if (next == 0)
            break;
    }
    return rows;
}

/*
 * A message ending on row y, wrapped over as many rows above it as it needs
 * (a quarter of the screen at most): an error's reason comes last and must
 * not be cut off at the screen's edge.  When even that is too few rows, the
 * last one shows the message's end after "... ".
 */
static void
draw_message(struct grid *g, const struct view *v, int y)
{
    const struct style st = style_role(v->message_is_error ? ROLE_ERROR : ROLE_MESSAGE);
    const int most = g->height / 4 > 1 ? g->height / 4 : 1;
    int rows = view_count_wrapped(v->message, g->width);
    const char *t = v->message;

    if (rows > most)
        rows = most;
    if (rows > y + 1)
        rows = y + 1;
    for (int r = 0; r < rows; r++) {
        const int row_y = y - (rows - 1) + r;
        struct rect bar = { 0, row_y, g->width, 1 };
        char line[1024];
        size_t next;
        size_t n = text_wrap(t, g->width, &next);

        grid_fill(g, bar, ' ', style_role(ROLE_TEXT));
        if (r == rows - 1 && t[next] != '\0' && g->width > 8) {
            /* The end: from the last character back, as much as fits after "... ". */
            size_t from = strlen(t);
            while (from > 0 && utf8_width(t + utf8_prev(t, from)) <= g->width - 4)
                from = utf8_prev(t, from);
            grid_printf(g, 0, row_y, g->width, st, "... %s", t + from);
            return;
        }
        if (n >= sizeof line)
            n = sizeof line - 1;
        memcpy(line, t, n);
        line[n] = '\0';
        grid_put(g, 0, row_y, g->width, st, line);
        t += next;
        if (next == 0)
            break;
    }
}

/* Key hints on row y, two spaces apart, as many as fit whole, in order. */
static void
draw_key_items(struct grid *g, int y, const char *const *items, size_t n)
{
    int x = 0;

    for (size_t i = 0; i < n; i++) {
        int w = utf8_width(items[i]);
        if (x + (x > 0 ? 2 : 0) + w > g->width)
            break;
        if (x > 0)
            x += 2;
        x += grid_put(g, x, y, g->width - x, style_role(ROLE_DIM), items[i]);
    }
}

void
view_draw_footer(struct grid *g, const struct view *v, int y)
{
    struct rect bar = { 0, y, g->width, 1 };

    grid_fill(g, bar, ' ', style_role(ROLE_TEXT));
    if (v->message != NULL) {
        draw_message(g, v, y);
        return;
    }
    if (v->editing) {
        static const char *const items[] = { "Enter apply", "Esc cancel", "arrows Home End",
                                             "Backspace Delete", "Ctrl-U Ctrl-W" };
        draw_key_items(g, y, items, sizeof items / sizeof items[0]);
        return;
    }
    if (v->narration != NULL && v->following) {
        static const char *const items[] = { "q quit", "? help", "Space next step",
                                             "Backspace previous", "arrows cell", "w lessons",
                                             "z present" };
        draw_key_items(g, y, items, sizeof items / sizeof items[0]);
        return;
    }
    if (v->narration != NULL) {
        static const char *const items[] = { "q quit", "Enter back to the step", "Space/p stage",
                                             "any knob explores", "w lessons" };
        draw_key_items(g, y, items, sizeof items / sizeof items[0]);
        return;
    }
    {
        /* Most used first: what does not fit a narrow screen is what the help lists anyway. */
        const char *arrows = v->utf8 ? "\xe2\x86\x90\xe2\x86\x91\xe2\x86\x93\xe2\x86\x92 cell"
                                     : "arrows cell";
        const char *const items[] = { "q quit", "? help",   "Space/p stage", arrows,    "e edit",
                                      "Tab head", "g grid", "x export",      "w lessons", "z present" };
        draw_key_items(g, y, items, sizeof items / sizeof items[0]);
    }
}

/* --------------------------------------------------------------- panels */

void
view_draw_inspector(struct grid *g, struct rect r, struct view *v, const struct pipeline *p)
{
    char text[4096];
    const char *line;
    int y = r.y;
    /* Sums and softmax rows list as many terms as about three lines of the panel hold. */
    const int lines = r.h >= 16 ? 3 : r.h >= 10 ? 2 : 1;
    int max_terms = r.w >= 60 ? 6 : r.w >= 40 ? 4 : 3;

    if (r.w * lines / 16 > max_terms)
        max_terms = r.w * lines / 16 < 64 ? r.w * lines / 16 : 64;

    if (r.h < 1 || r.w < 10 || v->frame.rows == 0)
        return;
    grid_put(g, r.x, y++, r.w, style_role(ROLE_INSPECT_TITLE), "How this cell is made");
    if (view_params_shown(v, p, v->stage))
        inspect_param_cell(p, v->stage, v->head, v->cursor_row, v->cursor_col, text, sizeof text);
    else
        inspect_cell(p, v->stage, v->head, v->cursor_row, v->cursor_col, v->mask_matrix, max_terms,
                     v->utf8, text, sizeof text);
    line = text;
    while (*line && y < r.y + r.h) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        char buf[1024];
        struct rect rr = { r.x, y, r.w, r.y + r.h - y };
        if (len >= sizeof buf)
            len = sizeof buf - 1;
        memcpy(buf, line, len);
        buf[len] = '\0';
        y += view_draw_wrapped(g, rr, style_role(ROLE_TEXT), buf);
        line += len + (end != NULL);
    }
}

/* How the all-heads grid tiles width w: heads per row and rows of tiles. */
static void
tile_layout(int w, int heads, int *tiles, int *per_row, int *tile_rows)
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
    return v->grid_heads && explain_stage_per_head(v->stage) && p->st.shape.heads > 1;
}

#define TILE_MAX_CELL_W 8

/* The widest cell of one heatmap (presentation mode scales its own). */
#define HEAT_MAX_CELL_W 10

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
 * Heads side by side in the all-heads grid of a w x h area: as many as show
 * the most decimals, among the layouts whose rows of tiles fit h (the most
 * side by side always may).  Two heads of 13 tokens in 120 columns show
 * numbers one above the other where side by side they are colour only.
 */
int
view_choose_per_row(struct view *v, const struct pipeline *p, int w, int h)
{
    int tiles;
    int most;
    int tile_rows;
    int best = 0;
    int best_decimals = -2;
    const int rows = p->st.nq;

    tile_layout(w, p->st.shape.heads, &tiles, &most, &tile_rows);
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
    return best > 0 ? best : most;
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
        tile_layout(w, p->st.shape.heads, &tiles, &f->per_row, &tile_rows);
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
#define PANEL_BELOW 5

static bool
panel_beside(struct view *v, const struct pipeline *p, int width, int height, int *heat_w)
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

void
view_draw_heatmaps(struct grid *g, struct rect r, struct view *v, const struct pipeline *p,
                   int per_row, int max_cell_w, int row_gap)
{
    struct heatmap_spec spec;
    const int heads = p->st.shape.heads;

    v->frame.tiles = 0;
    if (view_showing_grid(v, p)) {
        /* Small multiples: one tile per head, the same cursor on each. */
        int tiles;
        int most;
        int tile_rows;
        int tw;
        int th;
        int cap;
        tile_layout(r.w, heads, &tiles, &most, &tile_rows);
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
                        "head %d%s", t, t == v->head ? " *" : "");
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
    spec.max_cell_w = max_cell_w;
    spec.row_gap = row_gap;
    heatmap_render(g, r, &spec, &v->scroll_row, &v->scroll_col, &v->frame.geo[0]);
    v->frame.tile_head[0] = v->head;
    v->frame.tiles = 1;
}

void
view_draw_legend(struct grid *g, int x0, int y, int w, struct view *v, const struct pipeline *p)
{
    struct heatmap_spec spec;
    const struct heatmap_geometry *geo = &v->frame.geo[0];
    char where[96] = "";

    if (view_stage_spec(v, p, v->stage, v->head, &spec) != 0)
        return;
    if (v->stage == VIEW_MASK && v->mask_matrix) {
        int x = grid_put(g, x0, y, w, style_role(ROLE_MASK_ALLOW), "see");
        x += grid_put(g, x0 + x, y, w - x, style_role(ROLE_DIM), " the query sees this key   ");
        x += grid_put(g, x0 + x, y, w - x, style_role(ROLE_MASK_FORBID), "hide");
        grid_put(g, x0 + x, y, w - x, style_role(ROLE_DIM), " its score becomes -inf (M: the scores)");
        return;
    }
    if (geo->vis_rows < spec.m->rows || geo->vis_cols < spec.m->cols)
        snprintf(where, sizeof where, "rows %d-%d of %d, cols %d-%d of %d", geo->row0 + 1,
                 geo->row0 + geo->vis_rows, spec.m->rows, geo->col0 + 1, geo->col0 + geo->vis_cols,
                 spec.m->cols);
    heatmap_legend(g, x0, y, where[0] ? w - (int)strlen(where) - 1 : w, &spec);
    if (where[0])
        grid_put(g, x0 + w - (int)strlen(where), y, (int)strlen(where), style_role(ROLE_DIM), where);
}

/*
 * The help: every key with what it does, descriptions wrapped (never cut),
 * in two columns on wide screens, scrolled by rows; the last row says when
 * more follows.  frame.help_rows and help_page let the keys scroll it.
 */
static void
draw_help(struct grid *g, struct view *v)
{
    const int cols = g->width >= 150 ? 2 : 1;
    const int col_w = g->width / cols;
    const int tw = col_w - 17 > 10 ? col_w - 17 : 10;
    const int per_col = g->height - 4 > 1 ? g->height - 4 : 1;
    const int page = per_col * cols;
    int total = 0;
    int row = 0;

    for (int i = 0; i < v->help_count; i++) {
        int rows = view_count_wrapped(v->help_lines[i].what, tw);
        total += rows > 0 ? rows : 1;
    }
    v->frame.help_rows = total;
    v->frame.help_page = page;
    if (v->help_scroll > total - page)
        v->help_scroll = total - page > 0 ? total - page : 0;
    grid_clear(g);
    grid_put(g, 0, 0, g->width, style_role(ROLE_TITLE),
             "attnscope keys  (q quits; Esc or ? closes; arrows, PgUp and PgDn scroll)");
    for (int i = 0; i < v->help_count; i++) {
        const char *t = v->help_lines[i].what;
        bool first_line = true;
        do {
            size_t next;
            size_t n = text_wrap(t, tw, &next);
            int k = row - v->help_scroll;
            if (k >= 0 && k < page) {
                char piece[256];
                int x = (k / per_col) * col_w;
                int y = 2 + k % per_col;
                if (first_line)
                    grid_put(g, x + 1, y, 14, style_role(ROLE_BAR_KEY), v->help_lines[i].keys);
                if (n >= sizeof piece)
                    n = sizeof piece - 1;
                memcpy(piece, t, n);
                piece[n] = '\0';
                grid_put(g, x + 16, y, col_w - 17, style_role(ROLE_TEXT), piece);
            }
            row++;
            first_line = false;
            t += next;
            if (next == 0)
                break;
        } while (*t);
    }
    if (v->help_scroll + page < total)
        grid_printf(g, 0, g->height - 1, g->width, style_role(ROLE_MESSAGE),
                    "-- %d more below: Down or PgDn --", total - v->help_scroll - page);
    else
        grid_put(g, 0, g->height - 1, g->width, style_role(ROLE_DIM),
                 "Every knob recomputes all stages at once; see the manual for the options.");
}

static void
draw_picker(struct grid *g, const struct view *v)
{
    int first = v->picker_sel - (g->height - 5) + 1;

    if (first < 0)
        first = 0;
    grid_clear(g);
    grid_put(g, 0, 0, g->width, style_role(ROLE_TITLE),
             v->picker_title != NULL ? v->picker_title
                                     : "Walkthroughs  (arrows choose, Enter plays, Esc closes)");
    if (v->picker_count == 0)
        grid_put(g, 2, 2, g->width - 2, style_role(ROLE_TEXT),
                 "none found: install attnscope, or run it from its source folder");
    for (int i = first; i < v->picker_count && 2 + i - first < g->height - 2; i++) {
        struct style st = style_role(i == v->picker_sel ? ROLE_STAGE_ACTIVE : ROLE_TEXT);
        grid_printf(g, 2, 2 + i - first, g->width - 2, st, " %s ", v->picker_items[i]);
    }
}

/* Calls line(ctx, text, n) for each row of the narration's body wrapped at width; returns the rows. */
static int
narration_lines(const char *narration, int width, void (*line)(void *, const char *, size_t),
                void *ctx)
{
    const char *t = narration;
    int rows = 0;

    /* Paragraphs are separated by '\n', where text_wrap ends a line too. */
    while (*t) {
        size_t next;
        size_t n = text_wrap(t, width, &next);
        if (line != NULL)
            line(ctx, t, n);
        rows++;
        t += next > 0 ? next : 1;
    }
    return rows;
}

struct narration_page {
    struct grid *g;
    struct rect r;
    struct style st;
    int row;   /* the body row being drawn */
    int first; /* the first one shown */
    int shown; /* how many fit */
};

static void
put_narration_line(void *ctx, const char *text, size_t n)
{
    struct narration_page *pg = ctx;
    int k = pg->row++ - pg->first;
    char *buf;

    if (k < 0 || k >= pg->shown || (buf = strndup(text, n)) == NULL)
        return;
    grid_put(pg->g, pg->r.x, pg->r.y + k, pg->r.w, pg->st, buf);
    free(buf);
}

/* The line over a narration: the lesson, the step and its title. */
static void
narration_head(const struct view *v, char *buf, size_t size)
{
    snprintf(buf, size, "%s %s - step %d of %d: %s", v->utf8 ? "\xe2\x96\xb6" : ">",
             v->walk_title, v->step + 1, v->steps, v->step_title);
}

int
view_draw_narration(struct grid *g, struct view *v, struct rect r)
{
    char head[512];
    int used = 0;
    int body;
    int room;
    struct narration_page pg;

    narration_head(v, head, sizeof head);
    {
        struct rect hr = { r.x, r.y, r.w, r.h };
        used += view_draw_wrapped(g, hr, style_role(ROLE_INSPECT_TITLE), head);
    }
    if (!v->following && used < r.h) {
        grid_printf(g, r.x, r.y + used, r.w, style_role(ROLE_MESSAGE),
                    "exploring on your own: %sEnter goes back to step %d",
                    v->map ? "Esc, then " : "", v->step + 1);
        used++;
    }
    body = narration_lines(v->narration, r.w, NULL, NULL);
    room = r.h - used;
    v->frame.narration_rows = body;
    if (room <= 0) {
        v->frame.narration_page = 0;
        return used;
    }
    /* What does not fit is paged: the last row says where the rest is. */
    pg.shown = body <= room ? body : room - 1;
    if (pg.shown < 1)
        pg.shown = 1;
    if (v->narration_scroll > body - pg.shown)
        v->narration_scroll = body - pg.shown > 0 ? body - pg.shown : 0;
    pg.g = g;
    pg.r = (struct rect){ r.x, r.y + used, r.w, pg.shown };
    /* Off the script the screen no longer shows what the narration says: dimmed. */
    pg.st = style_role(v->following ? ROLE_TEXT : ROLE_DIM);
    pg.row = 0;
    pg.first = v->narration_scroll;
    narration_lines(v->narration, r.w, put_narration_line, &pg);
    used += pg.shown;
    v->frame.narration_page = pg.shown;
    if (body > pg.shown && used < r.h) {
        char more[128];
        snprintf(more, sizeof more, "lines %d-%d of %d:%s%s", pg.first + 1, pg.first + pg.shown,
                 body, pg.first + pg.shown < body ? " ] more" : "", pg.first > 0 ? " [ back" : "");
        grid_put(g, r.x, r.y + used, r.w, style_role(ROLE_MESSAGE), more);
        used++;
    }
    return used;
}

int
view_narration_rows(const struct view *v, int width)
{
    char head[512];

    narration_head(v, head, sizeof head);
    return view_count_wrapped(head, width) + !v->following +
           narration_lines(v->narration, width, NULL, NULL);
}

void
view_explain_text(const struct view *v, const struct pipeline *p, char *buf, size_t size)
{
    if (view_params_shown(v, p, v->stage))
        view_params_text(v, p, buf, size);
    else
        explain_text(p, v->stage, buf, size);
}

void
view_stage_title(struct view *v, const struct pipeline *p, char *title, size_t title_size,
                 char *formula, size_t formula_size)
{
    struct heatmap_spec spec;
    int rows = 0;
    int cols = 0;
    char layer[24] = "";

    if (view_params_shown(v, p, v->stage)) {
        view_params_title(v, p, title, title_size, formula, formula_size);
        return;
    }

    explain_formula(p, v->stage, formula, formula_size);
    if (view_stage_spec(v, p, v->stage, v->head, &spec) == 0)
        rows = spec.m->rows, cols = spec.m->cols;
    if (pipeline_stage_per_layer(p, explain_pipeline_stage(p, v->stage, false)))
        snprintf(layer, sizeof layer, "Layer %d: ", p->layer);
    if (explain_stage_per_head(v->stage) && p->st.shape.heads > 1)
        snprintf(title, title_size, "%s%s, head %d of %d (%d x %d)", layer, explain_title(v->stage),
                 v->head, p->st.shape.heads, rows, cols);
    else if (v->stage == VIEW_POSITIONAL && pipeline_gpt2(p) != NULL)
        snprintf(title, title_size, "%s%s (%d x %d)", layer,
                 p->layer == 0 ? "Position embeddings added: the block's input" : "The block's input",
                 rows, cols);
    else
        snprintf(title, title_size, "%s%s (%d x %d)", layer, explain_title(v->stage), rows, cols);
    if (v->stage == VIEW_MASK && v->mask_matrix)
        strncat(title, ": the mask itself", title_size - strlen(title) - 1);
}

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
 * A lesson's words on the model's own screens, from row 5 (under the
 * screen's title and keys): the row the screen's own content starts on,
 * content_y without a lesson, else the row after the words and a blank one.
 */
static int
overlay_narration(struct grid *g, struct view *v, int content_y)
{
    struct rect nr = { 0, 5, g->width, 0 };

    if (v->narration == NULL)
        return content_y;
    nr.h = view_narration_rows(v, g->width);
    if (nr.h > g->height / 3)
        nr.h = g->height / 3;
    return nr.y + view_draw_narration(g, v, nr) + 1;
}

/*
 * The predictions: after each position its likeliest next tokens with
 * probabilities and a bar for the first; below, the logit lens after the
 * last token (each layer's stream read as if it were the last layer's).
 */
static void
draw_next_view(struct grid *g, struct view *v, const struct pipeline *p)
{
    enum { LENS_K = 3 };
    const struct gpt2_state *m = pipeline_gpt2(p);
    const int top = m->run.top;
    const int n = m->run.n;
    const int bar_w = 12;
    int lens_rows = p->layers + 2 < g->height / 2 ? p->layers + 2 : g->height / 2;
    int room = g->height - 7 - lens_rows;
    int first;
    int y = 5;
    char shown[128];

    draw_knob_bar(g, p);
    draw_sentence(g, v, p, 1);
    grid_put(g, 0, 3, g->width, style_role(ROLE_TITLE),
             top > 0 ? "Next tokens: the likeliest after each position" : "Next tokens: --top 0 asked for none");
    grid_put(g, 0, 4, g->width, style_role(ROLE_DIM), "N or Esc: back");
    y = overlay_narration(g, v, y);
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
            model_token_display(m->model, id[t], shown, sizeof shown);
            x += grid_printf(g, x, y, g->width - x, style_role(t == 0 ? ROLE_TITLE : ROLE_TEXT),
                             " %s %.3f", shown, (double)pr[t]);
        }
    }
    y++;
    {
        int *ids = malloc((size_t)p->layers * LENS_K * sizeof *ids);
        float *probs = malloc((size_t)p->layers * LENS_K * sizeof *probs);
        if (ids != NULL && probs != NULL &&
            gpt2_logit_lens(&m->model->gpt2, &m->run, n - 1, LENS_K, ids, probs, NULL) == ATTN_OK) {
            grid_printf(g, 0, y++, g->width, style_role(ROLE_TITLE),
                        "Logit lens after '%s': each layer read through ln_f as if it were the last",
                        p->query_labels[n - 1]);
            for (int l = p->layers > lens_rows - 2 ? p->layers - (lens_rows - 2) : 0;
                 l < p->layers && y < g->height - 1; l++, y++) {
                int x = grid_printf(g, 0, y, g->width, style_role(ROLE_TEXT), "layer %3d ", l);
                x += put_bar(g, x, y, bar_w, probs[l * LENS_K], v->utf8);
                for (int t = 0; t < LENS_K && x < g->width; t++) {
                    model_token_display(m->model, ids[l * LENS_K + t], shown, sizeof shown);
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
    draw_knob_bar(g, p);
    draw_sentence(g, v, p, 1);
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
    grid_put(g, 0, 4, g->width, style_role(ROLE_DIM),
             m != NULL ? "Left Right: the query   Tab: the head   g: their mean   , .: the layer   "
                         "T or Esc: back"
                       : "Left Right: the query   Tab: the head   g: their mean   T or Esc: back");
    y = overlay_narration(g, v, y);
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
    for (int h = 0; h < heads; h++)
        grid_printf(g, label_w + h * (n + 1), top, n,
                    style_role(h == v->map_col ? ROLE_TITLE : ROLE_DIM), "h%d", h);
    for (int l = 0; l < p->layers; l++) {
        const int y0 = top + 1 + l * (n + 1);
        grid_printf(g, 0, y0, label_w, style_role(l == v->map_row ? ROLE_TITLE : ROLE_TEXT),
                    "%slayer %d", l == v->map_row ? "\u25b8" : "", l);
        for (int h = 0; h < heads; h++) {
            const float *w = m->run.layers[l].weights + (size_t)h * (size_t)n * (size_t)n;
            const int x0 = label_w + h * (n + 1);
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
        draw_knob_bar(g, p);
        draw_sentence(g, v, p, 1);
        grid_printf(g, 0, 3, g->width, style_role(ROLE_TITLE),
                    "Model map: the weights of every head (%d layers x %d heads)", p->layers, heads);
        grid_put(g, 0, 4, g->width, style_role(ROLE_DIM),
                 "Tab: the measures   arrows: a head   Enter: open it   L or Esc: back");
        top = overlay_narration(g, v, 6);
        draw_head_heatmaps(g, v, p, top);
        view_draw_footer(g, v, g->height - 1);
        return;
    }
    /* Every layer, however many: the labels in the view's own memory. */
    if (view_reserve_scratch(v, (size_t)p->layers * (size_t)heads) != 0 ||
        view_reserve_row_labels(v, layers) != 0)
        return;
    mat = matrix_view(v->work.scratch, layers, heads);
    head_measures(p, m, v->work.scratch);
    for (int l = 0; l < layers; l++)
        snprintf(v->work.row_label[l], 40, "layer %d", l);
    if (v->map_row >= layers)
        v->map_row = layers - 1;
    if (v->map_col >= heads)
        v->map_col = heads - 1;
    draw_knob_bar(g, p);
    draw_sentence(g, v, p, 1);
    grid_printf(g, 0, 3, g->width, style_role(ROLE_TITLE), "Model map: %s, %s (%d layers x %d heads)",
                head_measure_name(m), head_measure_description(m), layers, heads);
    grid_put(g, 0, 4, g->width, style_role(ROLE_DIM),
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
    spec.colour = v->colour;
    spec.utf8 = v->utf8;
    y = overlay_narration(g, v, 6);
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

void
view_render(struct view *v, const struct pipeline *p, struct grid *g)
{
    char formula[256];
    char text[1024];
    char title[512];
    int y;
    int explain_rows;
    bool wide;
    int heat_w = 0;
    int per_row = 1; /* heads side by side in the grid */
    struct rect heat;
    struct rect insp;
    int legend_y;
    struct heatmap_spec spec;

    grid_clear(g);
    g->high_contrast = v->present;
    v->frame.tiles = 0;
    v->frame.stage_bar_y = -1;
    for (int s = 0; s < VIEW_STAGE_COUNT; s++)
        v->frame.stage_x[s][0] = v->frame.stage_x[s][1] = -1;
    v->frame.too_small = g->width < VIEW_MIN_WIDTH || g->height < VIEW_MIN_HEIGHT;
    if (v->frame.too_small) {
        grid_printf(g, 0, 0, g->width, style_role(ROLE_ERROR), "attnscope needs %dx%d",
                    VIEW_MIN_WIDTH, VIEW_MIN_HEIGHT);
        grid_printf(g, 0, 1, g->width, style_role(ROLE_TEXT), "this is %dx%d", g->width, g->height);
        grid_put(g, 0, 2, g->width, style_role(ROLE_DIM), "q quits");
        return;
    }
    if (v->help) {
        draw_help(g, v);
        return;
    }
    if (v->picker) {
        draw_picker(g, v);
        return;
    }
    if (v->map && pipeline_gpt2(p) != NULL) {
        draw_model_map(g, v, p);
        return;
    }
    if (v->next_view && pipeline_gpt2(p) != NULL) {
        draw_next_view(g, v, p);
        return;
    }
    if (v->text_view && !p->qkv_given) {
        draw_text_view(g, v, p);
        return;
    }
    view_clamp(v, p);
    if (v->present) {
        view_render_present(v, p, g);
        return;
    }

    draw_knob_bar(g, p);
    draw_sentence(g, v, p, 1);
    draw_stage_bar(g, v, p, 2);
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
        /* The lesson's words replace the stage's own explanation. */
        int cap = g->height / 3;
        struct rect nr = { 0, y, g->width, 0 };
        nr.h = view_narration_rows(v, g->width);
        if (nr.h > cap)
            nr.h = cap;
        explain_rows = view_draw_narration(g, v, nr);
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
    heat_w = g->width;
    wide = !v->hide_panel &&
           panel_beside(v, p, g->width, g->height - y - 2 /* the legend, the footer */, &heat_w);
    {
        int bottom = g->height - 1; /* the footer */
        int avail = bottom - y - 1; /* one row for the legend */
        int want = spec.m->rows + 1;
        int insp_min = wide || v->hide_panel ? 0 : PANEL_BELOW;
        if (view_showing_grid(v, p)) {
            int tiles;
            int tile_rows;
            tile_layout(heat_w, p->st.shape.heads, &tiles, &per_row, &tile_rows);
            per_row = view_choose_per_row(v, p, heat_w, avail - insp_min);
            tile_rows = (tiles + per_row - 1) / per_row;
            want = tile_rows * (spec.m->rows + 2);
        }
        if (want > avail - insp_min)
            want = avail - insp_min;
        if (want < 3)
            want = avail < 3 ? avail : 3;
        if (wide) {
            heat.x = 0;
            heat.y = y;
            heat.w = heat_w;
            heat.h = want;
            insp.x = heat_w + 3; /* a blank column, the separator, a blank column */
            insp.y = y;
            insp.w = g->width - insp.x;
            insp.h = bottom - y;
        } else {
            heat.x = 0;
            heat.y = y;
            heat.w = g->width;
            heat.h = want;
            insp.x = 0;
            insp.y = y + want + 2;
            insp.w = g->width;
            insp.h = bottom - insp.y;
        }
        legend_y = y + want;
    }
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
