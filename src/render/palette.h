/*
 * palette.h: colour roles and heatmap ramps, free of any terminal.
 *
 * Renderer code names a role (a label, a masked cell, the cursor) or, for a
 * heatmap cell, a ramp and a level from 0 to 255.  The tables here turn those
 * into what a terminal of a given depth can show: 24-bit RGB, an xterm
 * 256-colour index, one of the 8 basic colours, or, without colour, a glyph
 * of a ramp and text attributes.
 */
#ifndef ATTNSCOPE_RENDER_PALETTE_H
#define ATTNSCOPE_RENDER_PALETTE_H

#include <stdbool.h>
#include <stdint.h>

/* X(role, mnemonic letter for golden dumps) */
#define PALETTE_ROLE_LIST(X)     \
    X(ROLE_TEXT, '.')            \
    X(ROLE_DIM, 'd')             \
    X(ROLE_TITLE, 'T')           \
    X(ROLE_BAR, 'B')             \
    X(ROLE_BAR_KEY, 'K')         \
    X(ROLE_STAGE, 's')           \
    X(ROLE_STAGE_ACTIVE, 'S')    \
    X(ROLE_FORMULA, 'F')         \
    X(ROLE_LABEL, 'L')           \
    X(ROLE_LABEL_MADE_UP, 'U')   \
    X(ROLE_HEAT, 'H')            \
    X(ROLE_NEG_INF, 'I')         \
    X(ROLE_MASKED, 'M')          \
    X(ROLE_DROPPED, 'D')         \
    X(ROLE_NAN, 'N')             \
    X(ROLE_MASK_ALLOW, 'A')      \
    X(ROLE_MASK_FORBID, 'X')     \
    X(ROLE_INSPECT_TITLE, 'i')   \
    X(ROLE_ERROR, 'E')           \
    X(ROLE_MESSAGE, 'm')         \
    X(ROLE_EDIT, 'e')            \
    X(ROLE_BORDER, '|')

enum palette_role {
#define PALETTE_ROLE_ENUM(r, c) r,
    PALETTE_ROLE_LIST(PALETTE_ROLE_ENUM)
#undef PALETTE_ROLE_ENUM
    ROLE_COUNT
};

enum palette_ramp {
    RAMP_SEQUENTIAL,    /* 0 .. max: attention weights */
    RAMP_DIVERGING,     /* -m .. 0 .. +m: scores, projections, embeddings */
    RAMP_SEQUENTIAL_HC, /* the same for projectors and print: white to black */
    RAMP_DIVERGING_HC   /* dark blue - white - dark red: the magnitude is the darkness */
};

/* The high-contrast twin of a ramp (presentation mode). */
enum palette_ramp palette_high_contrast(enum palette_ramp ramp);

/* Text attributes; the cursor is ATTR_REVERSE on top of a cell's own style. */
enum {
    ATTR_BOLD = 1,
    ATTR_REVERSE = 2,
    ATTR_UNDERLINE = 4,
    ATTR_DIM = 8
};

struct rgb {
    uint8_t r, g, b;
};

enum palette_depth { DEPTH_MONO, DEPTH_8, DEPTH_256, DEPTH_DIRECT };

/* The letter golden dumps use for a role. */
char palette_role_letter(enum palette_role role);

/* A ramp's colour at level (0..255). */
struct rgb palette_ramp_rgb(enum palette_ramp ramp, int level);

/* WCAG 2's contrast ratio of two colours, from 1 (the same) to 21 (black on white). */
double palette_contrast(struct rgb a, struct rgb b);

/* Black or white, whichever has the higher contrast on bg (at least 4.58:1). */
struct rgb palette_text_on(struct rgb bg);

/* The nearest xterm 256-colour index (the 6x6x6 cube or the grey ramp). */
int palette_rgb_to_256(struct rgb c);

/* One of the 8 basic colours (0 black .. 7 white) for a ramp level. */
int palette_ramp_to_8(enum palette_ramp ramp, int level);

/*
 * Fixed colours of the roles that have one (foreground, background) as RGB;
 * returns false for roles drawn in the terminal's own colours.  *own_bg
 * says the role draws fg on the terminal's own background (bg unused).
 */
bool palette_role_rgb(enum palette_role role, struct rgb *fg, struct rgb *bg, bool *own_bg);

/* The fixed grey of roles on the terminal's own background: 4.5:1 on black and on white. */
#define PALETTE_GREY_ON_ANY { 118, 118, 118 }

/* The role's colours among the 8 basic ones (-1: the terminal's default). */
void palette_role_8(enum palette_role role, int *fg, int *bg);

/* Attributes a role gets with colour, or without. */
int palette_role_attrs(enum palette_role role, bool colour);

/* Whether every role has its row in the colour scheme (a unit test asks). */
bool palette_scheme_complete(void);

/*
 * The glyph for a level without colour: the shades " ░▒▓█" in UTF-8, or the
 * ASCII ramp " .:;=o*#%@" (no '-' or '+', which would read as signs).
 */
uint32_t palette_ramp_glyph(int level, bool utf8);

#endif
