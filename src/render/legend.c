/*
 * legend.c: a heatmap's legend, its colour scale and what the cells'
 * numbers span, in the colours the cells are drawn in (see heatmap.h).
 */
#include "config.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "render/heatmap.h"
#include "render/text.h"

/* Writes text at x unless g is NULL (measuring); its width either way. */
static int
legend_piece(struct grid *g, int x, int y, enum palette_role role, const char *text)
{
    return g != NULL ? grid_put(g, x, y, INT_MAX / 2, style_role(role), text) : utf8_width(text);
}

/* heatmap_scale over the ramp's levels from0 .. to (0 .. 255). */
static int
scale_levels(struct grid *g, int x, int y, int w, enum palette_ramp ramp, bool colour, bool utf8,
             int from, int to, const char *before, const char *lo, const char *after,
             const char *hi)
{
    char piece[64];
    int used = 0;

    snprintf(piece, sizeof piece, "%s%s ", before, lo);
    if (utf8_width(piece) + 16 + utf8_width(after) + utf8_width(hi) > w)
        return 0;
    used += legend_piece(g, x + used, y, ROLE_DIM, piece);
    for (int k = 0; k < 16; k++, used++) {
        struct style st = style_role(ROLE_HEAT);
        st.ramp = ramp;
        st.level = from + k * (to - from) / 15;
        if (g != NULL)
            grid_set(g, x + used, y, colour ? ' ' : palette_ramp_glyph(st.level, utf8), st);
    }
    snprintf(piece, sizeof piece, "%s%s", after, hi);
    return used + legend_piece(g, x + used, y, ROLE_DIM, piece);
}

int
heatmap_scale(struct grid *g, int x, int y, int w, enum palette_ramp ramp, bool colour, bool utf8,
              const char *before, const char *lo, const char *after, const char *hi)
{
    return scale_levels(g, x, y, w, ramp, colour, utf8, 0, 255, before, lo, after, hi);
}

/*
 * The values the legend's swatches span, and their levels: a diverging
 * ramp's colours are centred on zero (heatmap_level), so its scale runs
 * -m .. m with white in the middle, or, when every number is one sign, only
 * the half they use: 0 (white) .. m, or -m .. 0.  The swatches are then the
 * very colours the cells take.
 */
static void
scale_span(const struct heatmap_spec *spec, float *lo, float *hi, int *from, int *to)
{
    *lo = spec->lo;
    *hi = spec->hi;
    *from = 0;
    *to = 255;
    if (spec->ramp == RAMP_DIVERGING || spec->ramp == RAMP_DIVERGING_HC) {
        const float m = fmaxf(fabsf(spec->lo), fabsf(spec->hi));
        const float dlo = spec->data_known ? spec->data_lo : spec->lo;
        const float dhi = spec->data_known ? spec->data_hi : spec->hi;
        *lo = -m;
        *hi = m;
        if (dlo >= 0.0f && spec->lo >= 0.0f) {
            *lo = 0.0f;
            *from = heatmap_level(spec, 0.0f);
        } else if (dhi <= 0.0f && spec->hi <= 0.0f) {
            *hi = 0.0f;
            *to = heatmap_level(spec, 0.0f);
        }
    }
}

/* The spec's scale (heatmap_scale), over the levels scale_span gives. */
static int
legend_scale(struct grid *g, int x, int y, int w, const struct heatmap_spec *spec,
             const char *before, const char *lo, const char *after, const char *hi)
{
    float slo, shi;
    int from, to;

    scale_span(spec, &slo, &shi, &from, &to);
    return scale_levels(g, x, y, w, spec->ramp, spec->colour, spec->utf8, from, to, before, lo,
                        after, hi);
}

int
heatmap_legend(struct grid *g, int x, int y, int w, const struct heatmap_spec *spec)
{
    char lo[32];
    char hi[32];
    char dlo[32] = "", dhi[32] = "";
    char piece[96];
    int used = 0;
    int scale; /* the scale's width: 0 when it did not fit */
    int seen[HEAT_ABSENT + 1] = { 0 };
    static const char *const names[] = { "", "-inf", "masked", "dropped", "NaN" };
    static const enum palette_role roles[] = { ROLE_TEXT, ROLE_NEG_INF, ROLE_MASKED, ROLE_DROPPED,
                                               ROLE_NAN };

    float slo, shi;
    int from, to;
    bool data_known = spec->data_known;

    scale_span(spec, &slo, &shi, &from, &to);
    heatmap_format(lo, sizeof lo, slo, 10, 4);
    heatmap_format(hi, sizeof hi, shi, 10, 4);
    if (spec->log_scale)
        snprintf(lo, sizeof lo, "%.1e", (double)spec->lo); /* (a small weight: 0.0000 in 4 places) */
    /* The numbers' range: the data's when known, else the range the colours were fitted to. */
    heatmap_format(dlo, sizeof dlo, data_known ? spec->data_lo : spec->lo, 10, 4);
    heatmap_format(dhi, sizeof dhi, data_known ? spec->data_hi : spec->hi, 10, 4);
    if (!data_known && (slo != spec->lo || shi != spec->hi))
        data_known = true; /* (the scale widened to be centred on zero) */
    /* The scale's range said apart only where it reads differently from the numbers'. */
    if (data_known && (strcmp(dlo, lo) != 0 || strcmp(dhi, hi) != 0 ||
                       spec->range_skips_first)) {
        /* The numbers' own range, then the scale's: "min a max b   scale lo ▒ hi". */
        snprintf(piece, sizeof piece, "min %s max %s", dlo, dhi);
        if (utf8_width(piece) > w)
            return 0;
        used += legend_piece(g, x + used, y, ROLE_DIM, piece);
        scale = legend_scale(g, x + used, y, w - used, spec, "   scale ", lo, " ", hi);
        used += scale;
    } else {
        /* The scale is the numbers' range: "min lo ▒ max hi", whole or not at all. */
        used = scale = legend_scale(g, x, y, w, spec, "min ", lo, " max ", hi);
        if (used == 0)
            return 0;
    }
    /*
     * Heads share one scale so that they can be compared: say so (when it
     * fits whole), or a min that no cell shows puzzles.
     */
    if (spec->log_scale && scale > 0 && used + 6 <= w)
        used += legend_piece(g, x + used, y, ROLE_DIM, " (log)");
    if (spec->range_skips_first && scale > 0) {
        snprintf(piece, sizeof piece, " without the first key");
        if (used + utf8_width(piece) <= w)
            used += legend_piece(g, x + used, y, ROLE_DIM, piece);
    }
    if (spec->range_heads > 1 && scale > 0) {
        if (spec->range_heads == 2)
            snprintf(piece, sizeof piece, " (both heads)");
        else
            snprintf(piece, sizeof piece, " (all %d heads)", spec->range_heads);
        if (used + utf8_width(piece) <= w)
            used += legend_piece(g, x + used, y, ROLE_DIM, piece);
    }

    if (spec->kinds != NULL)
        spec->kinds(spec->kind_ctx, seen);
    else
        for (int i = 0; i < spec->m->rows; i++)
            for (int j = 0; j < spec->m->cols; j++)
                seen[heatmap_kind(spec, i, j)] = 1;
    if (seen[HEAT_CHOSEN] && used + 3 + 1 + 7 <= w) {
        used += legend_piece(g, x + used, y, ROLE_DIM, "   ");
        used += legend_piece(g, x + used, y, ROLE_TEXT, spec->utf8 ? "\xe2\x80\xa2" : "*");
        used += legend_piece(g, x + used, y, ROLE_DIM, " chosen");
    }
    for (int k = 1; k < 5; k++) {
        const char *glyph = k == HEAT_NEG_INF ? (spec->utf8 ? "-\xe2\x88\x9e" : "-i")
                            : k == HEAT_MASKED ? (spec->utf8 ? "\xe2\x95\xb1" : "/")
                            : k == HEAT_DROPPED ? (spec->utf8 ? "\xe2\x9c\x95" : "x")
                                                : "?";
        snprintf(piece, sizeof piece, " %s", names[k]);
        if (!seen[k] || used + 3 + utf8_width(glyph) + utf8_width(piece) > w)
            continue;
        used += legend_piece(g, x + used, y, ROLE_DIM, "   ");
        used += legend_piece(g, x + used, y, roles[k], glyph);
        used += legend_piece(g, x + used, y, ROLE_DIM, piece);
    }
    return used;
}
