/* heatmap.c: matrices as heatmaps (see heatmap.h). */
#include "config.h"

#include <ctype.h>

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/kernels/rowops.h"
#include "render/heatmap.h"
#include "render/text.h"

#define LABEL_MAX 12

void
heatmap_format(char *buf, size_t size, float v, int width, int decimals)
{
    if (isnan(v)) {
        snprintf(buf, size, "nan");
        return;
    }
    if (isinf(v)) {
        snprintf(buf, size, v < 0 ? "-inf" : "inf");
        return;
    }
    for (int d = decimals; d >= 0; d--) {
        snprintf(buf, size, "%.*f", d, (double)v);
        if ((int)strlen(buf) <= width)
            return;
    }
    /* Too large for fixed notation in this width. */
    for (int p = 3; p >= 1; p--) {
        snprintf(buf, size, "%.*g", p, (double)v);
        if ((int)strlen(buf) <= width)
            return;
    }
}

int
heatmap_level(const struct heatmap_spec *spec, float v)
{
    double t;

    if (!isfinite(v))
        return 0;
    if (spec->ramp == RAMP_DIVERGING || spec->ramp == RAMP_DIVERGING_HC) {
        double m = fmax(fabs((double)spec->lo), fabs((double)spec->hi));
        t = m > 0 ? 0.5 + (double)v / (2.0 * m) : 0.5;
    } else if (spec->log_scale) {
        /* Each factor of ten the same step of the ramp: 0.001 and 0.01 look apart. */
        const double span = log((double)spec->hi) - log((double)spec->lo);
        t = v <= 0.0f ? 0.0 : span > 0 ? (log((double)v) - log((double)spec->lo)) / span : 1.0;
    } else {
        double span = (double)spec->hi - (double)spec->lo;
        t = span > 0 ? ((double)v - spec->lo) / span : 1.0;
    }
    if (t < 0)
        t = 0;
    if (t > 1)
        t = 1;
    return (int)lround(t * 255.0);
}

enum heat_kind
heatmap_kind(const struct heatmap_spec *spec, int i, int j)
{
    float v = MAT_AT(spec->m, i, j);

    if (spec->kind != NULL) {
        enum heat_kind k = spec->kind(spec->kind_ctx, i, j);
        if (k != HEAT_VALUE)
            return k;
    }
    if (isnan(v))
        return HEAT_NAN;
    if (isinf(v) && v < 0)
        return HEAT_NEG_INF;
    return HEAT_VALUE;
}

static void col_label(const struct heatmap_spec *spec, int j, char *buf, size_t size);

/* The length of label's number at its end ("#10" of "·fox#10", "10" of "d10"); 0 for none. */
static size_t
number_suffix(const char *label, bool *hash)
{
    const size_t len = strlen(label);
    size_t k = len;

    while (k > 0 && label[k - 1] >= '0' && label[k - 1] <= '9')
        k--;
    *hash = k > 0 && k < len && label[k - 1] == '#';
    if (k == len || (k == 0 && !*hash))
        return 0; /* no number, or nothing but one */
    return len - k + (*hash ? 1 : 0);
}

void
heatmap_fit_label(const char *label, int width, char *buf, size_t size)
{
    bool hash;
    const size_t suffix = number_suffix(label, &hash);
    const int sw = (int)suffix; /* (ASCII: one column a byte) */
    int cols;
    size_t keep;

    if (size == 0)
        return;
    if (width < 1) {
        buf[0] = '\0';
        return;
    }
    if (utf8_width(label) <= width) {
        snprintf(buf, size, "%s", label);
        return;
    }
    if (suffix > 0 && width >= sw + 2) {
        /* The word cut, an ellipsis, the number: "·f…#10". */
        keep = utf8_prefix(label, width - sw - 1, &cols);
        snprintf(buf, size, "%.*s\xe2\x80\xa6%s", (int)keep, label, label + strlen(label) - suffix);
        return;
    }
    if (suffix > 0 && width >= sw - (hash ? 1 : 0)) {
        /* Only the number fits: it, with its '#' when that fits too. */
        const char *num = label + strlen(label) - suffix;
        snprintf(buf, size, "%s", width >= sw ? num : num + 1);
        return;
    }
    if (width >= 4) {
        keep = utf8_prefix(label, width - 1, &cols);
        snprintf(buf, size, "%.*s\xe2\x80\xa6", (int)keep, label);
        return;
    }
    keep = utf8_prefix(label, width, &cols);
    snprintf(buf, size, "%.*s", (int)keep, label);
}

/*
 * Whether visible column c's label, cut to the cell, reads the same as
 * another visible label (cut too where it does not fit): "the#0" and
 * "the#6" both read "the", tok1 and tok29 both "to".
 */
static bool
cut_label_collides(const struct heatmap_spec *spec, const struct heatmap_geometry *geo, int c)
{
    const int room = geo->cell_w - (geo->cell_w > 1);
    char a[64];
    char b[64];
    size_t na;

    col_label(spec, geo->col0 + c, a, sizeof a);
    if (utf8_width(a) <= room)
        return false;
    na = utf8_prefix(a, room, NULL);
    for (int d = 0; d < geo->vis_cols; d++) {
        size_t nb;
        if (d == c)
            continue;
        col_label(spec, geo->col0 + d, b, sizeof b);
        nb = utf8_prefix(b, room, NULL);
        if (na == nb && memcmp(a, b, na) == 0)
            return true;
    }
    return false;
}

/*
 * A cut label's abbreviation that stands apart: the first room - 1 columns
 * and one later letter, the last letters first ("starts" -> "ss", "step" ->
 * "sp" where both cut read "st"), one that no other visible label reads as
 * cut or as its own such abbreviation.  0 when none does (the caller shows
 * the position).
 */
static int
abbreviate_apart(const struct heatmap_spec *spec, const struct heatmap_geometry *geo, int c,
                 int room, char *out, size_t size)
{
    char a[64];
    size_t keep;
    int len;

    col_label(spec, geo->col0 + c, a, sizeof a);
    keep = utf8_prefix(a, room - 1, NULL);
    len = (int)strlen(a);
    if (room < 2 || keep + 2 > size)
        return 0;
    for (int k = len - 1; k >= (int)keep; k--) {
        bool apart = true;
        if (!isalpha((unsigned char)a[k]))
            continue;
        memcpy(out, a, keep);
        out[keep] = a[k];
        out[keep + 1] = '\0';
        for (int d = 0; d < geo->vis_cols && apart; d++) {
            char b[64], theirs[64];
            size_t nb;
            if (d == c)
                continue;
            col_label(spec, geo->col0 + d, b, sizeof b);
            nb = utf8_prefix(b, room, NULL);
            apart = !(nb == keep + 1 && memcmp(b, out, nb) == 0);
            /* (and not what that label would abbreviate to: its first columns and last letter) */
            if (apart && strlen(b) > keep && utf8_prefix(b, room - 1, NULL) == keep) {
                int e = (int)strlen(b) - 1;
                while (e > (int)keep && !isalpha((unsigned char)b[e]))
                    e--;
                memcpy(theirs, b, keep);
                theirs[keep] = b[e];
                theirs[keep + 1] = '\0';
                apart = strcmp(theirs, out) != 0;
            }
        }
        if (apart)
            return 1;
    }
    return 0;
}

/*
 * Whether the visible columns are all named letters then a number (q0, k12)
 * and those names do not fit their cells.
 */
static bool
lettered_too_narrow(const struct heatmap_spec *spec, const struct heatmap_geometry *geo)
{
    const int room = geo->cell_w - (geo->cell_w > 1);
    bool wider = false;

    if (spec->col_labels == NULL)
        return false;
    for (int c = 0; c < geo->vis_cols; c++) {
        const char *name = spec->col_labels[geo->col0 + c];
        const size_t letters = strspn(name, "abcdefghijklmnopqrstuvwxyz");
        if (letters == 0 || name[letters] == '\0' ||
            strspn(name + letters, "0123456789") != strlen(name + letters))
            return false;
        wider = wider || (int)strlen(name) > room;
    }
    return wider;
}

static void
col_label(const struct heatmap_spec *spec, int j, char *buf, size_t size)
{
    if (spec->col_labels != NULL)
        snprintf(buf, size, "%s", spec->col_labels[j]);
    else if (spec->col_group > 0)
        snprintf(buf, size, "h%d.%d", j / spec->col_group, j % spec->col_group);
    else
        snprintf(buf, size, "%s%d", spec->col_prefix ? spec->col_prefix : "d", j);
}

/*
 * The widest formatted value at d decimals.  Fixed notation is widest for
 * the largest magnitude of each sign, so formatting the matrix's finite
 * minimum and maximum is enough.
 */
static int
value_width(float lo, float hi, int d)
{
    char buf[64];
    int w = 1;

    if (lo > hi)
        return w;
    snprintf(buf, sizeof buf, "%.*f", d, (double)lo);
    w = (int)strlen(buf);
    snprintf(buf, sizeof buf, "%.*f", d, (double)hi);
    return (int)strlen(buf) > w ? (int)strlen(buf) : w;
}

int
heatmap_label_width(const struct heatmap_spec *spec)
{
    int w = 3;

    for (int i = 0; i < spec->m->rows; i++) {
        int lw = utf8_width(spec->row_labels[i]) + (spec->row_marked && spec->row_marked[i]);
        if (lw > w)
            w = lw;
    }
    return w > LABEL_MAX ? LABEL_MAX : w;
}

/* Chooses the cell width and decimals: all columns with numbers if possible. */
static void
choose_cells(const struct heatmap_spec *spec, int avail, struct heatmap_geometry *geo)
{
    const int cols = spec->m->cols;
    const int max_w = spec->max_cell_w > 0 ? spec->max_cell_w : 10;
    /* Without colour each number carries a glyph and a space before it. */
    const int extra = spec->colour ? 1 : 3;
    float lo, hi;
    int w4, w2;

    matrix_range(spec->m, &lo, &hi);
    w4 = value_width(lo, hi, 4) + extra;
    w2 = value_width(lo, hi, 2) + extra;

    if (spec->decimals_cap == 0 && w4 <= max_w && cols * w4 <= avail) {
        geo->cell_w = avail / cols < max_w ? avail / cols : max_w;
        geo->decimals = 4;
    } else if (spec->decimals_cap >= 0 && w2 <= max_w && cols * w2 <= avail) {
        geo->cell_w = w2;
        geo->decimals = 2;
    } else if (cols * 2 <= avail) {
        /* No numbers: three columns a cell, or as many as the keys' labels want (up to 8) where
           the room allows, so that a wide screen does not cut "·map" to "·a". */
        int want = 3;
        for (int j = 0; spec->col_labels != NULL && j < cols; j++) {
            const int lw = utf8_width(spec->col_labels[j]) + 1;
            want = lw > want ? lw : want;
        }
        want = want < 8 ? want : 8;
        want = want < max_w ? want : max_w;
        geo->cell_w = avail / cols > want ? want : avail / cols;
        geo->decimals = -1;
    } else {
        geo->cell_w = 2;
        geo->decimals = -1;
    }
    if (geo->cell_w < 1)
        geo->cell_w = 1;
}

void
heatmap_keep_in_sight(int *first, int visible, int total, int cursor)
{
    if (cursor >= 0) {
        if (cursor < *first)
            *first = cursor;
        if (cursor >= *first + visible)
            *first = cursor - visible + 1;
    }
    if (*first > total - visible)
        *first = total - visible;
    if (*first < 0)
        *first = 0;
}

static void
draw_cell(struct grid *g, int x, int y, const struct heatmap_spec *spec,
          const struct heatmap_geometry *geo, int i, int j)
{
    const int w = geo->cell_w;
    const float v = MAT_AT(spec->m, i, j);
    const enum heat_kind kind = heatmap_kind(spec, i, j);
    struct style st = style_role(ROLE_HEAT);
    char text[64] = "";
    struct rect r = { x, y, w, 1 };

    switch (kind) {
    case HEAT_NEG_INF:
        st = style_role(ROLE_NEG_INF);
        snprintf(text, sizeof text, "%s", w >= 5 ? "-inf" : spec->utf8 ? "-\xe2\x88\x9e" : "-i");
        break;
    case HEAT_MASKED:
        /* Hatched, on the terminal's own background: like no weight, in colour or on paper. */
        grid_fill(g, r, ' ', style_role(ROLE_MASKED));
        if (w > 1) /* the gap before it, as before a number */
            r.x++, r.w--;
        grid_fill(g, r, spec->utf8 ? HEAT_HATCH : '/', style_role(ROLE_MASKED));
        return;
    case HEAT_DROPPED:
        st = style_role(ROLE_DROPPED);
        snprintf(text, sizeof text, "%s", spec->utf8 ? "\xe2\x9c\x95" : "x");
        break;
    case HEAT_NAN:
        st = style_role(ROLE_NAN);
        snprintf(text, sizeof text, "%s", w >= 4 ? "nan" : "?");
        break;
    case HEAT_ALLOW:
        st = style_role(ROLE_MASK_ALLOW);
        snprintf(text, sizeof text, "%s", w >= 5 ? "see" : spec->utf8 ? "\xe2\x9c\x93" : "+");
        break;
    case HEAT_FORBID:
        st = style_role(ROLE_MASK_FORBID);
        snprintf(text, sizeof text, "%s", w >= 5 ? "hide" : "-");
        break;
    case HEAT_ABSENT:
        st = style_role(ROLE_TEXT);
        break;
    case HEAT_VALUE:
    case HEAT_CHOSEN:
        st.ramp = spec->ramp;
        st.level = heatmap_level(spec, v);
        if (geo->decimals >= 0)
            heatmap_format(text, sizeof text, v, w - (spec->colour ? 1 : 3), geo->decimals);
        break;
    }
    grid_fill(g, r, ' ', st);
    {
        const bool valued = kind == HEAT_VALUE || kind == HEAT_CHOSEN;
        if (text[0] != '\0') {
            int tw = utf8_width(text);
            int tx = valued ? x + w - tw : x + (w - tw) / 2;
            if (valued && tx < x)
                tx = x;
            grid_put(g, tx, y, w, st, text);
            /* Without colour a glyph of the ramp, before the number, carries the value. */
            if (valued && !spec->colour && tx - 2 >= x)
                grid_set(g, tx - 2, y, palette_ramp_glyph(st.level, spec->utf8), st);
            /* A chosen expert's cell: a mark just before its number. */
            if (kind == HEAT_CHOSEN && tx - 1 >= x)
                grid_set(g, tx - 1, y, spec->utf8 ? 0x2022 /* bullet */ : '*', st);
        } else if (valued && !spec->colour) {
            uint32_t glyph = palette_ramp_glyph(st.level, spec->utf8);
            for (int k = 0; k < w - (w > 1); k++)
                grid_set(g, x + k, y, glyph, st);
        }
    }
    /* (a chosen cell too narrow for its number: the mark alone) */
    if (kind == HEAT_CHOSEN && text[0] == '\0')
        grid_set(g, x + w / 2, y, spec->utf8 ? 0x2022 /* bullet */ : '*', st);
}

/*
 * The cursor.  Without colour it is reverse video.  In colour, reversing
 * would turn the darkest cell into the lightest, a different weight (on a
 * projector's white-to-black ramp, 1.0 would read as 0.0): the cell keeps its
 * colours, its text is bold and underlined, and a pointer sits just before
 * the text (in a cell with no text, in its middle).
 */
static void
draw_cursor(struct grid *g, const struct heatmap_spec *spec, const struct heatmap_geometry *geo)
{
    const int x = geo->x0 + (spec->cursor_col - geo->col0) * geo->cell_w;
    const int y = geo->y0 + (spec->cursor_row - geo->row0) * geo->row_h;
    struct rect cur = { x, y, geo->cell_w, 1 };
    const struct cell *left = grid_at(g, x, y);
    int mx = x;
    struct style st;

    if (!spec->colour) {
        grid_add_attr(g, cur, ATTR_REVERSE);
        return;
    }
    grid_add_attr(g, cur, ATTR_BOLD | ATTR_UNDERLINE);
    if (left->ch != ' ')
        return; /* text fills the cell: bold and underline say it */
    for (int k = 1; k < geo->cell_w && grid_at(g, x + k, y)->ch == ' '; k++)
        mx = x + k;
    if (mx == x + geo->cell_w - 1) /* no text at all: the middle */
        mx = x + (geo->cell_w - 1) / 2;
    /* else mx is the blank just before the text or the hatching */
    st.role = (enum palette_role)left->role;
    st.attr = left->attr;
    st.ramp = (enum palette_ramp)left->ramp;
    st.level = left->level;
    grid_set(g, mx, y, spec->utf8 ? HEAT_POINTER : '>', st);
}

int
heatmap_measure(const struct heatmap_spec *spec, struct rect r, struct heatmap_geometry *geo)
{
    const int rows = spec->m->rows;
    const int cols = spec->m->cols;
    /* The labels' columns and the gap after them, the header's row; none when bare. */
    const int lw = spec->bare ? 0 : heatmap_label_width(spec) + 1;
    const int header = spec->bare ? 0 : 1;

    memset(geo, 0, sizeof *geo);
    if (r.w < lw + (spec->bare ? 1 : 2) || r.h < header + 1 || rows == 0 || cols == 0)
        return -1;
    if (spec->cell_w > 0) {
        geo->cell_w = spec->cell_w;
        geo->decimals = -1;
    } else {
        choose_cells(spec, r.w - lw, geo);
    }
    geo->row_h = 1 + (spec->row_gap > 0 ? spec->row_gap : 0);
    geo->vis_cols = (r.w - lw) / geo->cell_w;
    geo->vis_rows = (r.h - header + spec->row_gap) / geo->row_h;
    if (geo->vis_cols > cols)
        geo->vis_cols = cols;
    if (geo->vis_rows > rows)
        geo->vis_rows = rows;
    if (geo->vis_cols < 1)
        return -1;
    geo->x0 = r.x + lw;
    geo->y0 = r.y + header;
    geo->width = lw + geo->vis_cols * geo->cell_w;
    return 0;
}

void
heatmap_row_label(struct grid *g, int x, int y, int w, const struct heatmap_spec *spec, int i)
{
    const bool marked = spec->row_marked != NULL && spec->row_marked[i];
    struct style st = style_role(marked ? ROLE_LABEL_MADE_UP : ROLE_LABEL);
    char fit[128];
    int used;

    if (i == spec->cursor_row)
        st.attr |= ATTR_BOLD;
    heatmap_fit_label(spec->row_labels[i], w - marked, fit, sizeof fit);
    used = grid_put(g, x, y, w, st, fit);
    if (marked)
        grid_put(g, x + used, y, 1, st, "*");
}

/*
 * Lettered columns too narrow for their names, on row y: each group's letter
 * at its first column, then its numbers every step, as numbered columns
 * show theirs ("q   4   8   12  k   4 ..."), where the cut names would read
 * "0 1 ... 9 q q q".
 */
static void
draw_lettered_labels(struct grid *g, const struct heatmap_spec *spec,
                     const struct heatmap_geometry *geo, int y, struct style label)
{
    const int cols = spec->m->cols;
    int step = 16;
    char buf[64];

    for (int k = 1; k <= 16; k *= 2)
        if (k * geo->cell_w >= (cols >= 100 ? 4 : 3)) {
            step = k;
            break;
        }
    for (int c = 0; c < geo->vis_cols; c++) {
        const int j = geo->col0 + c;
        const int x = geo->x0 + c * geo->cell_w;
        struct style st = label;
        const char *name = spec->col_labels[j];
        const char *digits = name + strcspn(name, "0123456789");
        const int k = atoi(digits);
        if (j == spec->cursor_col)
            st.attr |= ATTR_BOLD | ATTR_UNDERLINE;
        if (k == 0)
            snprintf(buf, sizeof buf, "%.*s", (int)(digits - name), name);
        else if (k % step == 0)
            snprintf(buf, sizeof buf, "%d", k);
        else
            continue;
        grid_put(g, x, y, geo->x0 + geo->vis_cols * geo->cell_w - x, st, buf);
    }
}

void
heatmap_render(struct grid *g, struct rect r, const struct heatmap_spec *spec, int *scroll_row,
               int *scroll_col, struct heatmap_geometry *geo)
{
    const int rows = spec->m->rows;
    const int cols = spec->m->cols;
    const int lw = heatmap_label_width(spec);
    struct style label = style_role(ROLE_LABEL);
    char buf[64];

    if (heatmap_measure(spec, r, geo) != 0)
        return;
    heatmap_keep_in_sight(scroll_row, geo->vis_rows, rows, spec->cursor_row);
    heatmap_keep_in_sight(scroll_col, geo->vis_cols, cols, spec->cursor_col);
    geo->row0 = *scroll_row;
    geo->col0 = *scroll_col;

    /*
     * Numbered columns (d0 d1 ...) too narrow for their numbers: the number
     * every step columns, written from its cell on, so that no column reads
     * as a bare "d".
     */
    const bool ticks = !spec->bare && spec->col_labels == NULL && spec->col_group == 0 &&
                       snprintf(NULL, 0, "%d", cols - 1) > geo->cell_w - (geo->cell_w > 1);
    if (ticks) {
        static const int steps[] = { 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000 };
        const int digits = snprintf(NULL, 0, "%d", cols - 1);
        int step = steps[sizeof steps / sizeof steps[0] - 1];
        for (size_t k = 0; k < sizeof steps / sizeof steps[0]; k++)
            if (steps[k] * geo->cell_w >= digits + 1) {
                step = steps[k];
                break;
            }
        for (int c = 0; c < geo->vis_cols; c++) {
            const int j = geo->col0 + c;
            const int x = geo->x0 + c * geo->cell_w;
            struct style st = label;
            if (j % step != 0)
                continue;
            if (j == spec->cursor_col)
                st.attr |= ATTR_BOLD | ATTR_UNDERLINE;
            snprintf(buf, sizeof buf, "%d", j);
            grid_put(g, x, r.y, geo->x0 + geo->vis_cols * geo->cell_w - x, st, buf);
        }
    }
    /* Lettered columns (q0 ... q15, k0 ...) too narrow for their names: by group. */
    const bool lettered = !spec->bare && !ticks && lettered_too_narrow(spec, geo);
    if (lettered)
        draw_lettered_labels(g, spec, geo, r.y, label);
    /* Column labels, cut to the cell and right-aligned like the numbers. */
    for (int c = 0; c < geo->vis_cols && !spec->bare && !ticks && !lettered; c++) {
        int j = geo->col0 + c;
        int x = geo->x0 + c * geo->cell_w;
        struct style st = label;
        int tw;
        int room = geo->cell_w - (geo->cell_w > 1);
        col_label(spec, j, buf, sizeof buf);
        /*
         * A cut label that would read like another ("st" for starts and step) is abbreviated
         * apart ("ss", "sp"), or, when no letter does it (tok1 ... tok29), shows its position.
         */
        if (cut_label_collides(spec, geo, c)) {
            char apart[64];
            if (abbreviate_apart(spec, geo, c, room, apart, sizeof apart))
                snprintf(buf, sizeof buf, "%s", apart);
            else if (snprintf(NULL, 0, "%d", j) <= room)
                snprintf(buf, sizeof buf, "%d", j);
            else {
                char whole[64];
                snprintf(whole, sizeof whole, "%s", buf);
                heatmap_fit_label(whole, room, buf, sizeof buf);
            }
        } else {
            char whole[64];
            snprintf(whole, sizeof whole, "%s", buf);
            heatmap_fit_label(whole, room, buf, sizeof buf);
        }
        if (j == spec->cursor_col)
            st.attr |= ATTR_BOLD | ATTR_UNDERLINE;
        tw = utf8_width(buf);
        if (tw > room)
            tw = room;
        grid_put(g, x + geo->cell_w - tw, r.y, room, st, buf);
    }
    for (int k = 0; k < geo->vis_rows; k++) {
        int i = geo->row0 + k;
        int y = geo->y0 + k * geo->row_h;
        if (!spec->bare)
            heatmap_row_label(g, r.x, y, lw, spec, i);
        for (int c = 0; c < geo->vis_cols; c++)
            draw_cell(g, geo->x0 + c * geo->cell_w, y, spec, geo, i, geo->col0 + c);
    }
    if (spec->cursor_row >= geo->row0 && spec->cursor_row < geo->row0 + geo->vis_rows &&
        spec->cursor_col >= geo->col0 && spec->cursor_col < geo->col0 + geo->vis_cols)
        draw_cursor(g, spec, geo);
    if (spec->paired && spec->cursor_row >= geo->row0 &&
        spec->cursor_row < geo->row0 + geo->vis_rows && spec->pair_col >= geo->col0 &&
        spec->pair_col < geo->col0 + geo->vis_cols) {
        /* The partner: underlined, its label too (the cursor's is bold and underlined). */
        const struct rect pr = { geo->x0 + (spec->pair_col - geo->col0) * geo->cell_w,
                                 geo->y0 + (spec->cursor_row - geo->row0) * geo->row_h, geo->cell_w,
                                 1 };
        grid_add_attr(g, pr, ATTR_UNDERLINE);
        if (!spec->bare)
            grid_add_attr(g, (struct rect){ pr.x, geo->y0 - 1, pr.w, 1 }, ATTR_UNDERLINE);
    }
}

int
heatmap_hit(const struct heatmap_geometry *geo, int sx, int sy, int *row, int *col)
{
    int c;
    int k;

    if (geo->cell_w <= 0 || sx < geo->x0 || sy < geo->y0)
        return -1;
    c = (sx - geo->x0) / geo->cell_w;
    if ((sy - geo->y0) % (geo->row_h > 0 ? geo->row_h : 1) != 0)
        return -1;
    k = (sy - geo->y0) / (geo->row_h > 0 ? geo->row_h : 1);
    if (c >= geo->vis_cols || k >= geo->vis_rows)
        return -1;
    *row = geo->row0 + k;
    *col = geo->col0 + c;
    return 0;
}
