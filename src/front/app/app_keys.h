/*
 * app_keys.h: the view's keys as tables (tmux's key-binding table, tig's
 * requests): a row per action, with the keys that call it, how the help
 * names it, its footer item, and the function that does it.
 *
 * Each screen (render/screen.h) has its table in a file of its own
 * (app_stage.c, app_map.c, app_sentence.c, app_next.c); a lesson being
 * played has one more, tried first.  app_key() finds the row of a key in
 * the table of the screen shown; the help screen (?), the footer and
 * `attnscope --help-keys` (which the manual's KEYS summary is made from)
 * are made from the same rows, so a key cannot be bound and not listed.
 */
#ifndef ATTNSCOPE_FRONT_APP_KEYS_H
#define ATTNSCOPE_FRONT_APP_KEYS_H

#include <stdbool.h>
#include <stddef.h>

#include "attnscope/pipeline/knob.h"
#include "front/app/app_internal.h"

#define APP_BINDING_KEYS 4

struct app_binding {
    int keys[APP_BINDING_KEYS]; /* code points or APP_KEY_*, 0 ends; none: documented only */
    const char *label;          /* how the help names the keys ("Space n"); NULL: not listed */
    const char *help;           /* what they do */
    const char *footer;         /* the footer's item ("Space/p stage"), or NULL */
    int footer_rank;            /* its place in the footer, from 1 (most used first) */
    void (*run)(struct app *a, int key); /* NULL: another table's (documented here) */
};

struct app_screen_keys {
    enum view_screen screen;
    const struct app_binding *bindings;
    size_t count;
    /* A key none of the rows answers, or NULL (the stage screen's: knobs, stage keys). */
    void (*other)(struct app *a, int key);
    /* Whether the screen can be shown now (a trained model's map), or NULL: always. */
    bool (*available)(const struct app *a);
};

/* The screens' tables, in enum view_screen's order. */
extern const struct app_screen_keys app_stage_keys;    /* app_stage.c */
extern const struct app_screen_keys app_map_keys;      /* app_map.c */
extern const struct app_screen_keys app_sentence_keys; /* app_sentence.c */
extern const struct app_screen_keys app_next_keys;     /* app_next.c */

/* The row of t that answers key, or NULL. */
const struct app_binding *app_binding_for(const struct app_screen_keys *t, int key);

/* Opens screen s (or says why it cannot be shown here); from the stage screen's keys. */
void app_open_screen(struct app *a, enum view_screen s);

/* Back to the stage screen (Esc on the others). */
void app_close_screen(struct app *a, int key);
/* N, T, L from any screen: the predictions, the sentence view, the model map. */
void app_screen_key(struct app *a, int key);
/* e: the sentence into the editor, from any screen (the view keeps its screen). */
void app_edit_sentence(struct app *a, int key);

/* Keys every screen shares: q quits, ? the help, x and X export what is shown. */
void app_quit(struct app *a, int key);
void app_show_help(struct app *a, int key);
/*
 * Whether key does something on the screen a shows (a row of its table, a
 * lesson's key, a stage's digit or a knob's key, a letter in the sentence
 * view): what a lesson's words may tell the user to press there.
 */
bool app_key_answered(const struct app *a, int key);

void app_toggle_present(struct app *a, int key);
void app_figure_key(struct app *a, int key); /* F: a figure of the screen (app_start.c) */
void app_skip_first_key(struct app *a, int key); /* f: the first key out of the colour scale */ /* z: presentation mode on every screen */
void app_export_key(struct app *a, int key);

/* x and X (app_export.c): what the screen shows, or every stage (X). */
void app_export(struct app *a, bool all);

/* , and .: a trained model's previous or next layer (app.c). */
void app_step_layer(struct app *a, int key);

/* Knob k one step (dir 1 or -1), said (app.c). */
void app_turn(struct app *a, const struct knob *k, int dir);

/* a: the head shown ablated, or back (app.c). */
void app_ablate(struct app *a, int key);
/* B: a model's attention sinks off (their logits -inf), or back on. */
void app_sinks(struct app *a, int key);

#endif
