/*
 * view_bars.c: the lines every screen shares (see view_parts.h): the knob
 * bar, the sentence (and the editor on it), the stage bar, wrapped text,
 * the message and the footer of keys.
 */
#include "config.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/families/model/family_model.h"
#include "attnscope/kernels/rowops.h"
#include "attnscope/pipeline/knob.h"
#include "render/inspect.h"
#include "render/screens/screen.h"
#include "render/stagemap.h"
#include "render/text.h"
#include "render/view.h"
#include "render/view_parts.h"

/*
 * The knobs and their keys, from the knob table: "v:mha d:d_out 2 ...", or,
 * when that does not fit, the same values without their names.
 */
void
view_draw_knob_bar(struct grid *g, const struct view *v, const struct pipeline *p)
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
        const struct family_model_state *m = pipeline_decoder(p);
        x += grid_printf(g, x, 0, g->width - x, style_role(ROLE_BAR), "%s ", m->model->name);
        if (v->compare != NULL) {
            /* Which model is which, and which of the three is shown. */
            x += grid_printf(g, x, 0, g->width - x, style_role(ROLE_BAR), "vs %s ",
                             pipeline_decoder(v->compare->b)->model->name);
            x += grid_put(g, x, 0, g->width - x, style_role(ROLE_BAR_KEY), "C");
            x += grid_printf(g, x, 0, g->width - x, style_role(ROLE_BAR), ":%s ",
                             compare_side_name(v->side));
        }
        x += grid_put(g, x, 0, g->width - x, style_role(ROLE_BAR_KEY), ",.");
        x += grid_printf(g, x, 0, g->width - x, style_role(ROLE_BAR), ":layer %d of 0-%d ",
                         p->layer, p->layers - 1);
        if (m->ablated_heads > 0) {
            x += grid_put(g, x, 0, g->width - x, style_role(ROLE_BAR_KEY), "a");
            x += grid_printf(g, x, 0, g->width - x, style_role(ROLE_BAR), ":%d head%s off ",
                             m->ablated_heads, m->ablated_heads == 1 ? "" : "s");
        }
        /* What else is switched off says so too: experts, the sinks. */
        if (m->experts_off_count > 0) {
            x += grid_put(g, x, 0, g->width - x, style_role(ROLE_BAR_KEY), "a");
            x += grid_printf(g, x, 0, g->width - x, style_role(ROLE_BAR), ":%d expert%s off ",
                             m->experts_off_count, m->experts_off_count == 1 ? "" : "s");
        }
        if (m->model->dec.cfg.sinks && m->run.sinks_off) {
            x += grid_put(g, x, 0, g->width - x, style_role(ROLE_BAR_KEY), "B");
            x += grid_printf(g, x, 0, g->width - x, style_role(ROLE_BAR), ":sinks off ");
        }
    }
    {
        /* The colour switches that are on: first, so they are never cut off. */
        static const struct { char key[2]; const char *text; } on[] = {
            { "f", "first key out of the colours " }, { "c", "log colours " },
        };
        const bool set[] = { v->skip_first_key, v->log_scale };
        for (size_t i = 0; i < sizeof on / sizeof on[0]; i++) {
            if (!set[i])
                continue;
            x += grid_put(g, x, 0, g->width - x, style_role(ROLE_BAR_KEY), on[i].key);
            x += grid_printf(g, x, 0, g->width - x, style_role(ROLE_BAR), ":%s", on[i].text);
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

/*
 * A walk over the editor's text laid out in rows of w columns: a word that
 * does not fit the rest of a row starts the next, a word wider than a row
 * is cut where the row ends.  Every character, spaces included, shows where
 * it is: the cursor's place is plain.
 */
struct edit_walk {
    const char *t;
    size_t b;        /* the character's byte */
    int len;         /* its bytes */
    int w;           /* the rows' width */
    int row, col;    /* where it is */
    int cw;          /* its columns */
    uint32_t cp;     /* the character */
    uint32_t glyph;  /* what shows (edit_glyph) */
};

/*
 * Places the character at it->b; false at the end of the text, row and col
 * then the cell after it (where the cursor goes).
 */
static bool
edit_place(const struct view *v, struct edit_walk *it)
{
    if (it->t[it->b] == '\0') {
        if (it->col + 1 > it->w && it->col > 0)
            it->row++, it->col = 0;
        return false;
    }
    it->len = utf8_decode(it->t + it->b, &it->cp);
    it->glyph = edit_glyph(v, it->cp, &it->cw);
    if (it->col > 0 && it->cp != ' ' && it->b > 0 && it->t[it->b - 1] == ' ') {
        /* A word's first character: the word to the next row when it fits there but not here. */
        int word = 0;
        for (size_t k = it->b; it->t[k] != '\0' && it->t[k] != ' ' && word <= it->w;) {
            uint32_t cp;
            int cw;
            const int len = utf8_decode(it->t + k, &cp);
            edit_glyph(v, cp, &cw);
            word += cw;
            k += (size_t)len;
        }
        if (it->col + word > it->w && word <= it->w)
            it->row++, it->col = 0;
    }
    if (it->col + it->cw > it->w && it->col > 0)
        it->row++, it->col = 0;
    return true;
}

static void
edit_advance(struct edit_walk *it)
{
    it->col += it->cw;
    it->b += (size_t)it->len;
}

/* Where byte pos of t is at width w (the end: the cell after the text). */
static struct edit_walk
edit_locate(const struct view *v, const char *t, size_t pos, int w)
{
    struct edit_walk it = { .t = t, .w = w };

    while (edit_place(v, &it) && it.b < pos)
        edit_advance(&it);
    return it;
}

size_t
view_edit_move_row(const struct view *v, const char *t, size_t pos, int dir)
{
    const int w = v->frame.edit_w > 0 ? v->frame.edit_w : 1;
    const struct edit_walk at = edit_locate(v, t, pos, w);
    const int want = at.row + dir;
    struct edit_walk it = { .t = t, .w = w };
    size_t best = strlen(t);

    if (want < 0)
        return 0;
    /* The last character of that row that starts at or before the cursor's column. */
    while (edit_place(v, &it) && it.row <= want) {
        if (it.row == want && (it.col <= at.col || best == strlen(t)))
            best = it.b;
        edit_advance(&it);
    }
    if (it.row == want && it.t[it.b] == '\0' && it.col <= at.col)
        best = it.b; /* the cell after the text */
    return best;
}

/*
 * The sentence editor at (x, y): one row for a text that fits it, else up
 * to max_rows, over what is below, scrolled so that the cursor's row is in
 * sight, with "a-b/n" (the rows shown, of n) under the prefix when some
 * are not.
 */
static void
draw_editor(struct grid *g, struct view *v, int x, int y, int max_rows)
{
    const int fw = g->width - x - 1;
    struct edit_walk it = { .t = v->edit_text, .w = fw };
    struct edit_walk end, cur;
    int shown, first;

    if (fw < 2)
        return;
    v->frame.edit_w = fw;
    end = edit_locate(v, v->edit_text, strlen(v->edit_text), fw);
    cur = edit_locate(v, v->edit_text, v->edit_cursor, fw);
    shown = end.row + 1 < max_rows ? end.row + 1 : max_rows;
    first = cur.row - shown + 1 > 0 ? cur.row - shown + 1 : 0;
    grid_fill(g, (struct rect){ x, y, g->width - x, shown }, ' ', style_role(ROLE_EDIT));
    if (shown > 1)
        grid_fill(g, (struct rect){ 0, y + 1, x, shown - 1 }, ' ', style_role(ROLE_TEXT));
    if (end.row + 1 > shown)
        grid_printf(g, 0, y + shown - 1, x, style_role(ROLE_DIM), "%d-%d/%d", first + 1,
                    first + shown, end.row + 1);
    while (edit_place(v, &it) && it.row < first + shown) {
        struct style st = style_role(ROLE_EDIT);
        if (it.glyph != it.cp)
            st.attr |= ATTR_DIM; /* a control character's mark */
        if (it.b == v->edit_cursor)
            st.attr |= ATTR_REVERSE;
        if (it.row >= first)
            grid_set(g, x + it.col, y + it.row - first, it.glyph, st);
        edit_advance(&it);
    }
    if (v->edit_cursor >= strlen(v->edit_text)) {
        struct style st = style_role(ROLE_EDIT);
        st.attr |= ATTR_REVERSE;
        grid_set(g, x + cur.col, y + cur.row - first, ' ', st);
    }
}

void
view_draw_editor(struct grid *g, struct view *v, const struct pipeline *p)
{
    const char *prefix = v->editing_knob      ? "set: "
                         : !p->cfg.cross      ? "sentence: "
                         : v->editing_source  ? "source: "
                                              : "target: ";
    const int x = grid_put(g, 0, 1, g->width, style_role(ROLE_DIM), prefix);
    int max_rows = g->height / 3;

    draw_editor(g, v, x, 1, max_rows > 1 ? max_rows : 1);
}

/* A model's most likely next token after the text, and its probability: "·map 99.89%". */
static void
top_next(const struct family_model_state *m, char *buf, size_t size)
{
    const size_t last = (size_t)(m->run.n - 1) * (size_t)m->run.top;
    char next[64], percent[24];

    model_output_display(m->model, m->run.top_ids[last], next, sizeof next);
    text_percent(percent, sizeof percent, (double)m->run.top_probs[last]);
    snprintf(buf, size, "%.40s %s", next, percent);
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
    if (v->editing)
        return; /* view_draw_editor draws the field over the screen */
    if (p->cfg.cross) {
        draw_two_sentences(g, v, p, y);
        return;
    }
    {
        /* The tokens, with made-up ones marked '*'; an ellipsis when they do not fit. */
        char count[240];
        int room;
        const struct family_model_state *m = pipeline_decoder(p);
        const struct family_model_state *m2 =
            v->compare != NULL && v->compare->b != NULL ? pipeline_decoder(v->compare->b) : NULL;
        if (m != NULL && m->run.top > 0) {
            /*
             * What a language model is asked first: its next token, from every
             * stage; compared, the side shown's, or both beside the difference.
             */
            char next[170], next2[80];
            top_next(m, next, sizeof next);
            if (m2 != NULL && m2->run.top > 0 && v->side != COMPARE_FIRST) {
                top_next(m2, next2, sizeof next2);
                if (v->side == COMPARE_SECOND)
                    snprintf(next, sizeof next, "%s", next2);
                else
                    snprintf(next + strlen(next), sizeof next - strlen(next), " | %s", next2);
            }
            snprintf(count, sizeof count, "   (%d of %d tokens)  %s: %s", p->tokens.count,
                     m->model->dec.cfg.n_ctx, model_is_classifier(m->model) ? "class" : "next",
                     next);
        } else if (m != NULL) {
            snprintf(count, sizeof count, "   (%d of %d tokens)", p->tokens.count,
                     m->model->dec.cfg.n_ctx);
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
        if (explain_stage_present(p, (enum view_stage)s))
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
            if (explain_stage_present(p, (enum view_stage)s))
                end += (int)strlen(explain_stage_short((enum view_stage)s, brief)) + 3 + !brief;
        for (int s = (int)v->stage + 1; s < VIEW_STAGE_COUNT; s++)
            if (explain_stage_present(p, (enum view_stage)s)) {
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
        if (!explain_stage_present(p, (enum view_stage)s) || s < first)
            continue;
        snprintf(label, sizeof label, brief ? " %c %s" : " %c %s ", key ? key : '+',
                 explain_stage_short((enum view_stage)s, brief));
        {
            /* Stages after this one that do not fit: " >" says so, as " <" does before. */
            bool more = false;
            for (int t = s + 1; t < VIEW_STAGE_COUNT && !more; t++)
                more = explain_stage_present(p, (enum view_stage)t);
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
        if (rows == r.h - 1 && line[next] != '\0') {
            /* The last row of more: what fits, and '…' to say the text goes on. */
            snprintf(buf, sizeof buf, "%s", line);
            grid_put_cut(g, r.x, r.y + rows, r.w, st, buf);
            return rows + 1;
        }
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
