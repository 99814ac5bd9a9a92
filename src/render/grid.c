/* grid.c: off-screen frames (see grid.h). */
#include "config.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "render/grid.h"
#include "render/text.h"

int
grid_create(struct grid *g, int width, int height)
{
    g->width = width > 0 ? width : 0;
    g->height = height > 0 ? height : 0;
    g->cells = NULL;
    if (g->width * g->height > 0) {
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
    struct cell blank = { ' ', ROLE_TEXT, 0, 0, 0 };

    for (int i = 0; i < g->width * g->height; i++)
        g->cells[i] = blank;
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
        text += text_decode(text, &cp);
        w = text_char_width(cp);
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
            fwrite(buf, 1, (size_t)text_encode(ch, buf), out);
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
