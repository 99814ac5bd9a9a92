/*
 * screen.h: the screens of the interactive view, as a table.
 *
 * A screen is a file and a row: its drawing (and, optionally, a layout for
 * presentation mode) here, its keys, clicks and export in the front end's
 * key table (front/app/app_keys.c), its id in enum view_screen (view.h).  The
 * help and the lessons' picker are drawn over whatever screen is shown.
 */
#ifndef ATTNSCOPE_RENDER_SCREEN_H
#define ATTNSCOPE_RENDER_SCREEN_H

#include <stdbool.h>

#include "render/view.h"

struct screen {
    const char *name; /* "stage", "map", "sentence", "next" */
    /* Whether p has this screen (NULL: always); the stage screen shows where it does not. */
    bool (*available)(const struct pipeline *p);
    void (*draw)(struct grid *g, struct view *v, const struct pipeline *p);
    /* Presentation mode's layout, or NULL: draw. */
    void (*present)(struct grid *g, struct view *v, const struct pipeline *p);
};

extern const struct screen screen_stage;    /* screen_stage.c */
extern const struct screen screen_map;      /* screen_map.c */
extern const struct screen screen_sentence; /* screen_sentence.c */
extern const struct screen screen_next;     /* screen_next.c */

/* The screen v shows on p: v->screen's, or the stage screen where p lacks it. */
const struct screen *view_screen_shown(const struct view *v, const struct pipeline *p);

#endif
