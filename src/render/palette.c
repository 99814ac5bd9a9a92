/*
 * palette.c: ramps, quantisation and role tables (see palette.h).
 *
 * The sequential ramp follows viridis's control points (dark purple to
 * yellow: readable for colour-blind viewers and in greyscale print); the
 * diverging ramp runs blue - light grey - red.  The 256-colour quantiser
 * picks the nearer of the 6x6x6 cube and the grey ramp, as terminals lay
 * them out.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>

#include "render/palette.h"

static const char role_letters[] = {
#define PALETTE_ROLE_LETTER(r, c) c,
    PALETTE_ROLE_LIST(PALETTE_ROLE_LETTER)
#undef PALETTE_ROLE_LETTER
};

char
palette_role_letter(enum palette_role role)
{
    return (unsigned)role < ROLE_COUNT ? role_letters[role] : '?';
}

static const struct rgb sequential[] = {
    { 68, 1, 84 }, { 59, 82, 139 }, { 33, 145, 140 }, { 94, 201, 98 }, { 253, 231, 37 },
};

static const struct rgb diverging[] = {
    { 33, 102, 172 }, { 146, 197, 222 }, { 235, 235, 235 }, { 244, 165, 130 }, { 178, 24, 43 },
};

/* Presentation: luminance alone carries the value, so a washed-out projector
 * or a black-and-white printout keeps it. */
static const struct rgb sequential_hc[] = {
    { 255, 255, 255 }, { 191, 191, 191 }, { 128, 128, 128 }, { 64, 64, 64 }, { 0, 0, 0 },
};

static const struct rgb diverging_hc[] = {
    { 0, 0, 128 }, { 128, 128, 200 }, { 255, 255, 255 }, { 200, 128, 128 }, { 128, 0, 0 },
};

enum palette_ramp
palette_high_contrast(enum palette_ramp ramp)
{
    return ramp == RAMP_SEQUENTIAL || ramp == RAMP_SEQUENTIAL_HC ? RAMP_SEQUENTIAL_HC
                                                                 : RAMP_DIVERGING_HC;
}

struct rgb
palette_ramp_rgb(enum palette_ramp ramp, int level)
{
    const struct rgb *stops = ramp == RAMP_SEQUENTIAL      ? sequential
                              : ramp == RAMP_DIVERGING    ? diverging
                              : ramp == RAMP_SEQUENTIAL_HC ? sequential_hc
                                                          : diverging_hc;
    int segment;
    int frac;
    struct rgb a;
    struct rgb b;
    struct rgb out;

    if (level < 0)
        level = 0;
    if (level > 255)
        level = 255;
    /* Four segments between five stops, interpolated in integers. */
    segment = level * 4 / 255;
    if (segment > 3)
        segment = 3;
    frac = level * 4 - segment * 255;
    a = stops[segment];
    b = stops[segment + 1];
    out.r = (uint8_t)(a.r + (b.r - a.r) * frac / 255);
    out.g = (uint8_t)(a.g + (b.g - a.g) * frac / 255);
    out.b = (uint8_t)(a.b + (b.b - a.b) * frac / 255);
    return out;
}

/* WCAG 2's relative luminance: sRGB channels made linear, weighted. */
static double
luminance(struct rgb c)
{
    const double v[3] = { c.r / 255.0, c.g / 255.0, c.b / 255.0 };
    double lin[3];

    for (int k = 0; k < 3; k++)
        lin[k] = v[k] <= 0.04045 ? v[k] / 12.92 : pow((v[k] + 0.055) / 1.055, 2.4);
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2];
}

double
palette_contrast(struct rgb a, struct rgb b)
{
    double la = luminance(a);
    double lb = luminance(b);

    return la > lb ? (la + 0.05) / (lb + 0.05) : (lb + 0.05) / (la + 0.05);
}

struct rgb
palette_text_on(struct rgb bg)
{
    struct rgb black = { 0, 0, 0 };
    struct rgb white = { 255, 255, 255 };

    /* The better of the two has at least sqrt(21) = 4.58:1, above WCAG AA's 4.5:1. */
    return palette_contrast(black, bg) >= palette_contrast(white, bg) ? black : white;
}

static int
sq(int x)
{
    return x * x;
}

static int
cube_level(int v)
{
    /* The cube's levels are 0, 95, 135, 175, 215, 255. */
    if (v < 48)
        return 0;
    if (v < 115)
        return 1;
    return (v - 35) / 40;
}

int
palette_rgb_to_256(struct rgb c)
{
    static const int levels[] = { 0, 95, 135, 175, 215, 255 };
    int r = cube_level(c.r);
    int g = cube_level(c.g);
    int b = cube_level(c.b);
    int cube = 16 + 36 * r + 6 * g + b;
    int cube_d = sq(levels[r] - c.r) + sq(levels[g] - c.g) + sq(levels[b] - c.b);
    int avg = (c.r + c.g + c.b) / 3;
    int grey = avg > 238 ? 23 : avg < 3 ? 0 : (avg - 3) / 10;
    int gv = 8 + 10 * grey;
    int grey_d = sq(gv - c.r) + sq(gv - c.g) + sq(gv - c.b);

    return grey_d < cube_d ? 232 + grey : cube;
}

int
palette_ramp_to_8(enum palette_ramp ramp, int level)
{
    /* 0 black 1 red 2 green 3 yellow 4 blue 5 magenta 6 cyan 7 white */
    static const int seq[] = { 0, 4, 6, 2, 3 };
    static const int div[] = { 4, 6, 7, 3, 1 };
    static const int seq_hc[] = { 7, 7, 3, 4, 0 };
    int bucket = level * 5 / 256;

    if (ramp == RAMP_SEQUENTIAL)
        return seq[bucket];
    if (ramp == RAMP_SEQUENTIAL_HC)
        return seq_hc[bucket];
    return div[bucket];
}

/*
 * The colour scheme, one row per role (as htop's CRT.c): its colours as RGB
 * (for direct colour and the 256-colour cube; none: the terminal's own), among
 * the 8 basic colours (-1: the terminal's own) and its attributes with and
 * without colour.  Every role has a row: a new role without one fails the
 * assertion below.
 */
struct role_scheme {
    bool has_rgb;
    struct rgb fg, bg;
    bool own_bg; /* with has_rgb: fg on the terminal's own background */
    int fg8, bg8;
    int attrs_colour, attrs_mono;
    bool listed;
};

#define GREY_DARK { 58, 58, 58 }
#define GREY_MID PALETTE_GREY_ON_ANY
#define GREY_LIGHT { 178, 178, 178 }
#define WHITE { 255, 255, 255 }
#define BLACK { 0, 0, 0 }
#define RED { 215, 0, 0 }
#define MAGENTA { 175, 0, 175 }
#define BLUE_BAR { 0, 55, 110 }
#define YELLOW { 255, 215, 0 }
#define GREEN { 0, 135, 95 }
#define NO_RGB false, BLACK, BLACK, false

static const struct role_scheme schemes[ROLE_COUNT] = {
    [ROLE_TEXT] = { NO_RGB, -1, -1, 0, 0, true },
    [ROLE_DIM] = { NO_RGB, -1, -1, ATTR_DIM, ATTR_DIM, true },
    [ROLE_TITLE] = { NO_RGB, -1, -1, ATTR_BOLD, ATTR_BOLD, true },
    [ROLE_BAR] = { true, WHITE, BLUE_BAR, false, 7, 4, 0, ATTR_REVERSE, true },
    [ROLE_BAR_KEY] = { true, BLACK, YELLOW, false, 0, 3, ATTR_BOLD, ATTR_BOLD | ATTR_UNDERLINE, true },
    [ROLE_STAGE] = { true, WHITE, BLUE_BAR, false, 7, 4, 0, ATTR_REVERSE, true },
    [ROLE_STAGE_ACTIVE] = { true, BLACK, YELLOW, false, 0, 3, ATTR_BOLD, ATTR_BOLD | ATTR_UNDERLINE, true },
    [ROLE_FORMULA] = { NO_RGB, 6, -1, 0, 0, true },
    [ROLE_LABEL] = { NO_RGB, -1, -1, 0, 0, true },
    [ROLE_LABEL_MADE_UP] = { NO_RGB, 3, -1, ATTR_UNDERLINE, ATTR_UNDERLINE, true },
    [ROLE_HEAT] = { NO_RGB, -1, -1, 0, 0, true },
    [ROLE_NEG_INF] = { true, GREY_LIGHT, GREY_DARK, false, 7, 0, 0, ATTR_DIM, true },
    [ROLE_MASKED] = { true, GREY_MID, BLACK, true, -1, -1, 0, 0, true },
    [ROLE_DROPPED] = { true, WHITE, RED, false, 7, 1, ATTR_BOLD, ATTR_BOLD, true },
    [ROLE_NAN] = { true, WHITE, MAGENTA, false, 7, 5, ATTR_BOLD, ATTR_BOLD, true },
    [ROLE_MASK_ALLOW] = { true, BLACK, GREEN, false, 0, 2, 0, 0, true },
    [ROLE_MASK_FORBID] = { true, GREY_LIGHT, GREY_DARK, false, 7, 0, 0, ATTR_DIM, true },
    [ROLE_INSPECT_TITLE] = { NO_RGB, -1, -1, ATTR_BOLD, ATTR_BOLD, true },
    [ROLE_ERROR] = { true, WHITE, RED, false, 7, 1, ATTR_BOLD, ATTR_BOLD, true },
    [ROLE_MESSAGE] = { NO_RGB, 2, -1, 0, 0, true },
    [ROLE_EDIT] = { true, BLACK, WHITE, false, 0, 7, 0, ATTR_UNDERLINE, true },
    [ROLE_BORDER] = { NO_RGB, -1, -1, ATTR_DIM, ATTR_DIM, true },
};

/* The row of role, or the text's for an unknown one. */
static const struct role_scheme *
scheme(enum palette_role role)
{
    return &schemes[(unsigned)role < ROLE_COUNT ? role : ROLE_TEXT];
}

bool
palette_scheme_complete(void)
{
    for (int r = 0; r < ROLE_COUNT; r++)
        if (!schemes[r].listed)
            return false;
    return true;
}

bool
palette_role_rgb(enum palette_role role, struct rgb *fg, struct rgb *bg, bool *own_bg)
{
    const struct role_scheme *s = scheme(role);

    if (!s->has_rgb)
        return false;
    *fg = s->fg;
    *bg = s->bg;
    *own_bg = s->own_bg;
    return true;
}

void
palette_role_8(enum palette_role role, int *fg, int *bg)
{
    *fg = scheme(role)->fg8;
    *bg = scheme(role)->bg8;
}

int
palette_role_attrs(enum palette_role role, bool colour)
{
    return colour ? scheme(role)->attrs_colour : scheme(role)->attrs_mono;
}

uint32_t
palette_ramp_glyph(int level, bool utf8)
{
    static const uint32_t shades[] = { ' ', 0x2591, 0x2592, 0x2593, 0x2588 };
    /* No '-' or '+': next to a number they would read as its sign. */
    static const char ascii[] = " .:;=o*#%@";

    if (level < 0)
        level = 0;
    if (level > 255)
        level = 255;
    if (utf8)
        return shades[level * 5 / 256];
    return (uint32_t)(unsigned char)ascii[level * 10 / 256];
}
