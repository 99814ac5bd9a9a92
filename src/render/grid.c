/* grid.c: off-screen frames (see grid.h). */
#include "config.h"

#include <stdarg.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>

#include "render/grid.h"
#include "render/text.h"

int
grid_create(struct grid *g, int width, int height)
{
    g->width = width > 0 ? width : 0;
    g->height = height > 0 ? height : 0;
    g->cells = NULL;
    g->high_contrast = false;
    if (g->width > 0 && g->height > 0) {
        /* Sizes in size_t, no product that wraps around, and no frame past GRID_MAX_CELLS. */
        if ((size_t)g->width > GRID_MAX_CELLS / (size_t)g->height) {
            g->width = g->height = 0;
            return -1;
        }
        g->cells = malloc((size_t)g->width * (size_t)g->height * sizeof *g->cells);
        if (g->cells == NULL) {
            g->width = g->height = 0;
            return -1;
        }
    }
    grid_clear(g);
    return 0;
}

void
grid_destroy(struct grid *g)
{
    free(g->cells);
    g->cells = NULL;
    g->width = g->height = 0;
}

void
grid_clear(struct grid *g)
{
    const struct cell blank = { ' ', ROLE_TEXT, 0, 0, 0 };
    const size_t n = (size_t)g->width * (size_t)g->height;
    size_t done = 1;

    if (n == 0)
        return;
    /* One cell, then copies of what is done, doubling: a few memcpy calls per frame. */
    g->cells[0] = blank;
    while (done < n) {
        size_t more = done < n - done ? done : n - done;
        memcpy(g->cells + done, g->cells, more * sizeof *g->cells);
        done += more;
    }
}

static void
set_cell(struct grid *g, int x, int y, uint32_t ch, struct style st)
{
    struct cell *c = grid_at(g, x, y);

    c->ch = ch;
    c->role = (uint8_t)st.role;
    c->attr = (uint8_t)st.attr;
    c->ramp = (uint8_t)st.ramp;
    c->level = (uint8_t)st.level;
}

void
grid_set(struct grid *g, int x, int y, uint32_t ch, struct style st)
{
    if (x < 0 || y < 0 || x >= g->width || y >= g->height)
        return;
    set_cell(g, x, y, ch, st);
}

int
grid_put(struct grid *g, int x, int y, int max_w, struct style st, const char *text)
{
    int col = 0;

    if (y < 0 || y >= g->height)
        return 0;
    while (*text) {
        uint32_t cp;
        int w;
        text += utf8_decode(text, &cp);
        w = utf8_char_width(cp);
        if (w == 0)
            continue;
        if (col + w > max_w || x + col + w > g->width)
            break;
        if (x + col >= 0) {
            set_cell(g, x + col, y, cp, st);
            if (w == 2)
                set_cell(g, x + col + 1, y, GRID_CONTINUATION, st);
        }
        col += w;
    }
    return col;
}

int
grid_put_cut(struct grid *g, int x, int y, int max_w, struct style st, const char *text)
{
    int room = max_w < g->width - x ? max_w : g->width - x;
    int cols;
    size_t keep;
    char buf[1024];

    if (utf8_width(text) <= room)
        return grid_put(g, x, y, room, st, text);
    if (room < 1)
        return 0;
    keep = utf8_prefix(text, room - 1, &cols);
    if (keep > sizeof buf - 4)
        keep = utf8_prefix(text, (int)(sizeof buf - 4) / 4, &cols);
    memcpy(buf, text, keep);
    memcpy(buf + keep, "\xe2\x80\xa6", 4); /* (and its NUL) */
    return grid_put(g, x, y, room, st, buf);
}

int
grid_printf_cut(struct grid *g, int x, int y, int max_w, struct style st, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return grid_put_cut(g, x, y, max_w, st, buf);
}

int
grid_printf(struct grid *g, int x, int y, int max_w, struct style st, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return grid_put(g, x, y, max_w, st, buf);
}

void
grid_fill(struct grid *g, struct rect r, uint32_t ch, struct style st)
{
    for (int y = r.y; y < r.y + r.h; y++)
        for (int x = r.x; x < r.x + r.w; x++)
            grid_set(g, x, y, ch, st);
}

void
grid_add_attr(struct grid *g, struct rect r, int attr)
{
    for (int y = r.y; y < r.y + r.h; y++)
        for (int x = r.x; x < r.x + r.w; x++)
            if (x >= 0 && y >= 0 && x < g->width && y < g->height)
                grid_at(g, x, y)->attr |= (uint8_t)attr;
}

void
grid_dump_text(const struct grid *g, FILE *out)
{
    char buf[8];

    for (int y = 0; y < g->height; y++) {
        int end = g->width;
        while (end > 0 && grid_at(g, end - 1, y)->ch == ' ')
            end--;
        for (int x = 0; x < end; x++) {
            uint32_t ch = grid_at(g, x, y)->ch;
            if (ch == GRID_CONTINUATION)
                continue;
            fwrite(buf, 1, (size_t)utf8_encode(ch, buf), out);
        }
        fputc('\n', out);
    }
}

void
grid_dump_styles(const struct grid *g, FILE *out)
{
    for (int y = 0; y < g->height; y++) {
        for (int x = 0; x < g->width; x++) {
            const struct cell *c = grid_at(g, x, y);
            char ch;
            if (c->attr & ATTR_REVERSE)
                ch = '#';
            else if (c->role == ROLE_HEAT)
                ch = (char)('0' + c->level * 10 / 256);
            else
                ch = palette_role_letter((enum palette_role)c->role);
            fputc(ch, out);
        }
        fputc('\n', out);
    }
}

static int
depth_colour(struct rgb c, enum palette_depth depth)
{
    if (depth == DEPTH_DIRECT)
        return (c.r << 16) | (c.g << 8) | c.b;
    return palette_rgb_to_256(c);
}

void
grid_cell_colours(const struct cell *c, enum palette_depth depth, int *fg, int *bg)
{
    struct rgb f;
    struct rgb b;
    bool own_bg;

    *fg = -1;
    *bg = -1;
    if (depth == DEPTH_MONO)
        return;
    if (c->role == ROLE_HEAT) {
        b = palette_ramp_rgb((enum palette_ramp)c->ramp, c->level);
        if (depth == DEPTH_8) {
            *bg = palette_ramp_to_8((enum palette_ramp)c->ramp, c->level);
            *fg = (*bg == 0 || *bg == 1 || *bg == 4 || *bg == 5) ? 7 : 0;
        } else {
            *bg = depth_colour(b, depth);
            *fg = depth_colour(palette_text_on(b), depth);
        }
    } else if (depth != DEPTH_8 && palette_role_rgb((enum palette_role)c->role, &f, &b, &own_bg)) {
        *fg = depth_colour(f, depth);
        *bg = own_bg ? -1 : depth_colour(b, depth);
    } else {
        palette_role_8((enum palette_role)c->role, fg, bg);
    }
}

int
grid_cell_attrs(const struct grid *g, const struct cell *c, enum palette_depth depth)
{
    int attrs = palette_role_attrs((enum palette_role)c->role, depth != DEPTH_MONO) | c->attr;

    /* Dim text is faint on a projector: a high-contrast grid has none. */
    return g->high_contrast ? attrs & ~ATTR_DIM : attrs;
}

/* Appends the SGR parameters of one colour (fg or bg) to buf. */
static int
sgr_colour(char *buf, size_t size, int colour, bool background, enum palette_depth depth)
{
    if (colour < 0)
        return snprintf(buf, size, ";%d", background ? 49 : 39);
    if (depth == DEPTH_DIRECT)
        return snprintf(buf, size, ";%d;2;%d;%d;%d", background ? 48 : 38, (colour >> 16) & 255,
                        (colour >> 8) & 255, colour & 255);
    if (depth == DEPTH_256)
        return snprintf(buf, size, ";%d;5;%d", background ? 48 : 38, colour);
    return snprintf(buf, size, ";%d", (background ? 40 : 30) + colour);
}

void
grid_write_ansi(const struct grid *g, FILE *out, enum palette_depth depth)
{
    char enc[8];

    for (int y = 0; y < g->height; y++) {
        int end = g->width;
        char current[96] = "";
        while (end > 0) {
            const struct cell *c = grid_at(g, end - 1, y);
            int fg;
            int bg;
            grid_cell_colours(c, depth, &fg, &bg);
            if (c->ch != ' ' || bg >= 0 || (grid_cell_attrs(g, c, depth) & ATTR_REVERSE))
                break;
            end--;
        }
        for (int x = 0; x < end; x++) {
            const struct cell *c = grid_at(g, x, y);
            char sgr[96];
            int fg;
            int bg;
            int attrs = grid_cell_attrs(g, c, depth);
            int n;
            if (c->ch == GRID_CONTINUATION)
                continue;
            /* Without colour the text is plain: glyphs carry the values. */
            if (depth != DEPTH_MONO) {
                grid_cell_colours(c, depth, &fg, &bg);
                n = snprintf(sgr, sizeof sgr, "\033[0");
                if (attrs & ATTR_BOLD)
                    n += snprintf(sgr + n, sizeof sgr - (size_t)n, ";1");
                if (attrs & ATTR_DIM)
                    n += snprintf(sgr + n, sizeof sgr - (size_t)n, ";2");
                if (attrs & ATTR_UNDERLINE)
                    n += snprintf(sgr + n, sizeof sgr - (size_t)n, ";4");
                if (attrs & ATTR_REVERSE)
                    n += snprintf(sgr + n, sizeof sgr - (size_t)n, ";7");
                if (depth != DEPTH_MONO) {
                    n += sgr_colour(sgr + n, sizeof sgr - (size_t)n, fg, false, depth);
                    n += sgr_colour(sgr + n, sizeof sgr - (size_t)n, bg, true, depth);
                }
                snprintf(sgr + n, sizeof sgr - (size_t)n, "m");
                if (strcmp(sgr, current) != 0) {
                    fputs(sgr, out);
                    snprintf(current, sizeof current, "%s", sgr);
                }
            }
            fwrite(enc, 1, (size_t)utf8_encode(c->ch, enc), out);
        }
        if (current[0] != '\0')
            fputs("\033[0m", out);
        fputc('\n', out);
    }
}
