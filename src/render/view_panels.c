/*
 * view_panels.c: the panels drawn over or beside a screen (see
 * view_parts.h): the cell's panel, the help, the lessons' picker and a
 * lesson's narration.
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

struct narration_page {
    struct grid *g;
    struct rect r;
    struct style st;
    int row;   /* the body row being drawn */
    int first; /* the first one shown */
    int shown; /* how many fit */
};

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
    if (v->compare != NULL && !view_params_shown(v, p, v->stage) && v->stage != VIEW_CACHE) {
        /* Both models' numbers for the cell, and their difference; then how the side's is made. */
        float at[COMPARE_SIDES];
        const enum compare_side shown = v->side;
        for (int k = 0; k < COMPARE_SIDES; k++) {
            struct heatmap_spec spec;
            v->side = (enum compare_side)k;
            at[k] = view_stage_spec(v, p, v->stage, v->head, &spec) == 0 &&
                            v->cursor_row < spec.m->rows && v->cursor_col < spec.m->cols
                        ? MAT_AT(spec.m, v->cursor_row, v->cursor_col)
                        : NAN;
        }
        v->side = shown;
        {
            struct heatmap_spec spec;
            (void)view_stage_spec(v, p, v->stage, v->head, &spec); /* (the side shown, again) */
        }
        for (int k = 0; k < COMPARE_SIDES && y < r.y + r.h; k++) {
            const struct pipeline *q = compare_side_pipeline(v->compare, (enum compare_side)k);
            char buf[160];
            if (k == COMPARE_DIFFERENCE)
                snprintf(buf, sizeof buf, "second - first  %+.4f", (double)at[k]);
            else
                snprintf(buf, sizeof buf, "%-6s %.40s  %.4f", compare_side_name((enum compare_side)k),
                         pipeline_decoder(q)->model->name, (double)at[k]);
            grid_put(g, r.x, y++, r.w, style_role(k == (int)shown ? ROLE_TITLE : ROLE_TEXT), buf);
        }
        p = compare_side_pipeline(v->compare, shown);
    }
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
void
view_draw_help(struct grid *g, struct view *v)
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

void
view_draw_picker(struct grid *g, const struct view *v)
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
    v->frame.narration_x = r.x;
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

/*
 * A lesson's words on the model's own screens, from row 5 (under the
 * screen's title and keys): the row the screen's own content starts on,
 * content_y without a lesson, else the row after the words and a blank one.
 */
int
view_overlay_narration(struct grid *g, struct view *v, int content_y)
{
    /* On a projector, lines as long as presentation mode's stage screen gives. */
    struct rect nr = { 0, 5, v->present ? view_present_text_width(g->width) : g->width, 0 };

    if (v->narration == NULL)
        return content_y;
    nr.h = view_narration_rows(v, nr.w);
    if (nr.h > g->height / 3)
        nr.h = g->height / 3;
    return nr.y + view_draw_narration(g, v, nr) + 1;
}
