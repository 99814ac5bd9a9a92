/*
 * view.c: composing a frame (see view.h): the view's state and scratch,
 * the pieces every screen shares (the knob bar, the sentence, the stage
 * bar, the footer, a lesson's narration, the panel that explains a cell),
 * the help and the lessons' picker, and view_render(), which draws the
 * screen shown from the table of screens (screen.h).
 */
#include "config.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/pipeline/knob.h"
#include "render/inspect.h"
#include "render/screen.h"
#include "render/stagemap.h"
#include "attnscope/families/decoder/family_decoder.h"
#include "render/text.h"
#include "attnscope/kernels/rowops.h"
#include "render/view.h"
#include "render/view_parts.h"

void
view_init(struct view *v)
{
    memset(v, 0, sizeof *v);
    v->stage = VIEW_OUTPUT;
    v->colour = true;
    v->utf8 = true;
    v->next_first = -1; /* the predictions start at the text's end */
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
    v->work.map.skip_first = v->skip_first_key;
    v->work.map.log_scale = v->log_scale;
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
        spec->kinds = NULL; /* (the legend asks qkv_kind of each cell: Q, K and V's rows) */
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
        /* The numbers shown: this head's columns of Q, K and V, the rows each has. */
        spec->data_lo = INFINITY;
        spec->data_hi = -INFINITY;
        for (int i = 0; i < rows; i++)
            for (int w = 0; w < 3; w++)
                if (i < src[w]->rows)
                    stagemap_widen(v->work.scratch + ((size_t)i * 3 + (size_t)w) * (size_t)hd,
                                   (size_t)hd, &spec->data_lo, &spec->data_hi);
        spec->data_known = spec->data_lo <= spec->data_hi;
        return 0;
    }
    if (view_reserve_scratch(v, (size_t)n * (size_t)hd) != 0)
        return -1;
    for (int i = 0; i < n; i++)
        memcpy(v->work.scratch + (size_t)i * (size_t)hd,
               matrix_row(&st->context, i) + (size_t)head * (size_t)hd, (size_t)hd * sizeof(float));
    v->work.map.m = matrix_view(v->work.scratch, n, hd);
    rowops_range(v->work.scratch, (size_t)n * (size_t)hd, &spec->data_lo, &spec->data_hi);
    spec->data_known = spec->data_lo <= spec->data_hi;
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
void
view_draw_knob_bar(struct grid *g, const struct pipeline *p)
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
    if (pipeline_decoder(p) != NULL) {
        /* A trained model: its name and the layer shown come first. */
        const struct family_decoder_state *m = pipeline_decoder(p);
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

void
view_draw_sentence(struct grid *g, const struct view *v, const struct pipeline *p, int y)
{
    const char *prefix = v->editing && v->editing_knob ? "set: "
                         : !v->editing || !p->cfg.cross ? "sentence: "
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
        const struct family_decoder_state *m = pipeline_decoder(p);
        if (m != NULL && m->run.top > 0) {
            /* What a language model is asked first: its next token, from every stage. */
            const size_t last = (size_t)(m->run.n - 1) * (size_t)m->run.top;
            char next[64];
            model_output_display(m->model, m->run.top_ids[last], next, sizeof next);
            snprintf(count, sizeof count, "   (%d of %d tokens)  %s: %.40s %.0f%%",
                     p->tokens.count, m->model->dec.cfg.n_positions,
                     model_is_classifier(m->model) ? "class" : "next", next,
                     100.0 * (double)m->run.top_probs[last]);
        } else if (m != NULL) {
            snprintf(count, sizeof count, "   (%d of %d tokens)", p->tokens.count,
                     m->model->dec.cfg.n_positions);
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

void
view_draw_stage_bar(struct grid *g, struct view *v, const struct pipeline *p, int y)
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
     * saying that stages come before; ">" at its end says that more follow.
     */
    for (;;) {
        int end = first > 0 ? 2 : 0;
        for (int s = first; s < VIEW_STAGE_COUNT && s <= (int)v->stage; s++)
            if (stage_visible(p, (enum view_stage)s))
                end += (int)strlen(explain_stage_short((enum view_stage)s, brief)) + 3 + !brief;
        for (int s = (int)v->stage + 1; s < VIEW_STAGE_COUNT; s++)
            if (stage_visible(p, (enum view_stage)s)) {
                end += 2; /* the " >" after it */
                break;
            }
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
        {
            /* Stages after this one that do not fit: " >" says so, as " <" does before. */
            bool more = false;
            for (int t = s + 1; t < VIEW_STAGE_COUNT && !more; t++)
                more = stage_visible(p, (enum view_stage)t);
            if (x + (int)strlen(label) + (more ? 2 : 0) > g->width &&
                !(!more && x + (int)strlen(label) <= g->width)) {
                grid_put(g, x, y, g->width - x, style_role(ROLE_STAGE), " >");
                break;
            }
        }
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
view_draw_keys_hint(struct grid *g, const struct view *v, int y, const char *text)
{
    if (!v->present)
        grid_put_cut(g, 0, y, g->width, style_role(ROLE_DIM), text);
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
    if (v->present)
        return; /* no bars on a projector */
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
        /*
         * The front end's items, most used first: what does not fit a narrow
         * screen is what the help lists anyway.  "arrows" is drawn as arrows.
         */
        const char *items[32];
        int n = v->footer_count < 32 ? v->footer_count : 32;
        for (int i = 0; i < n; i++)
            items[i] = v->utf8 && strncmp(v->footer_items[i], "arrows ", 7) == 0
                           ? (strcmp(v->footer_items[i], "arrows cell") == 0
                                  ? "\xe2\x86\x90\xe2\x86\x91\xe2\x86\x93\xe2\x86\x92 cell"
                                  : v->footer_items[i])
                           : v->footer_items[i];
        draw_key_items(g, y, items, (size_t)n);
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

    /* Keys wider than their column ("Space Backspace") take a row of their own above the words. */
    for (int i = 0; i < v->help_count; i++) {
        int rows = view_count_wrapped(v->help_lines[i].what, tw);
        total += (rows > 0 ? rows : 1) + (utf8_width(v->help_lines[i].keys) > 14);
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
        if (utf8_width(v->help_lines[i].keys) > 14) {
            const int k = row - v->help_scroll;
            if (k >= 0 && k < page)
                grid_put_cut(g, (k / per_col) * col_w + 1, 2 + k % per_col, col_w - 2,
                             style_role(ROLE_BAR_KEY), v->help_lines[i].keys);
            row++;
            first_line = false;
        }
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

/* The line under the narration's head off the script: why, and the way back. */
static void
off_script_line(const struct view *v, char *buf, size_t size)
{
    snprintf(buf, size, "%s: %sEnter goes back to step %d%s",
             v->narration_stale ? "changed since this step, its numbers may not hold"
                                : "exploring on your own",
             v->screen == SCREEN_MAP ? "Esc, then " : "", v->step + 1,
             v->screen == SCREEN_STAGE ? ", Esc closes this" : "");
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
        /* Wrapped, not cut: the way back is the line's end. */
        char line[256];
        struct rect lr = { r.x, r.y + used, r.w, r.h - used };
        off_script_line(v, line, sizeof line);
        used += view_draw_wrapped(g, lr, style_role(ROLE_MESSAGE), line);
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
    if (!v->following) {
        char line[256];
        off_script_line(v, line, sizeof line);
        return view_count_wrapped(head, width) + view_count_wrapped(line, width) +
               narration_lines(v->narration, width, NULL, NULL);
    }
    return view_count_wrapped(head, width) + narration_lines(v->narration, width, NULL, NULL);
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
    else if (v->stage == VIEW_POSITIONAL && pipeline_decoder(p) != NULL)
        snprintf(title, title_size, "%s%s (%d x %d)", layer,
                 p->layer == 0 ? "Position embeddings added: the block's input" : "The block's input",
                 rows, cols);
    else
        snprintf(title, title_size, "%s%s (%d x %d)", layer, explain_title(v->stage), rows, cols);
    if (v->stage == VIEW_MASK && v->mask_matrix)
        strncat(title, ": the mask itself", title_size - strlen(title) - 1);
}

/*
 * A lesson's words on the model's own screens, from row 5 (under the
 * screen's title and keys): the row the screen's own content starts on,
 * content_y without a lesson, else the row after the words and a blank one.
 */
int
view_overlay_narration(struct grid *g, struct view *v, int content_y)
{
    /* On a projector, lines no longer than presentation mode's stage screen gives. */
    struct rect nr = { 0, 5, v->present && g->width > 100 ? 100 : g->width, 0 };

    if (v->narration == NULL)
        return content_y;
    nr.h = view_narration_rows(v, nr.w);
    if (nr.h > g->height / 3)
        nr.h = g->height / 3;
    return nr.y + view_draw_narration(g, v, nr) + 1;
}

/*
 * The screens, by enum view_screen: one file and one row each.  A screen
 * the pipeline lacks (the map without a trained model) shows the stage.
 */
static const struct screen *const screens[SCREEN_COUNT] = {
    [SCREEN_STAGE] = &screen_stage,
    [SCREEN_MAP] = &screen_map,
    [SCREEN_SENTENCE] = &screen_sentence,
    [SCREEN_NEXT] = &screen_next,
};

const struct screen *
view_screen_shown(const struct view *v, const struct pipeline *p)
{
    const struct screen *s = screens[v->screen];

    return s->available == NULL || s->available(p) ? s : &screen_stage;
}

void
view_render(struct view *v, const struct pipeline *p, struct grid *g)
{
    const struct screen *s;

    grid_clear(g);
    g->high_contrast = v->present;
    v->frame.tiles = 0;
    v->frame.stage_bar_y = -1;
    for (int k = 0; k < VIEW_STAGE_COUNT; k++)
        v->frame.stage_x[k][0] = v->frame.stage_x[k][1] = -1;
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
    s = view_screen_shown(v, p);
    if (v->present && s->present != NULL)
        s->present(g, v, p);
    else if (v->present)
        view_present_screen(v, p, g, s->draw);
    else
        s->draw(g, v, p);
}
