/*
 * app_keys.c: a key to the row of the table that answers it (see
 * app_keys.h), and the help, the footer and the key list made from the
 * same rows.
 */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "attnscope/families/model/family_model.h"
#include "attnscope/pipeline/knob.h"
#include "front/app/app_keys.h"

/* The screens' tables, by enum view_screen. */
static const struct app_screen_keys *const tables[SCREEN_COUNT] = {
    [SCREEN_STAGE] = &app_stage_keys,
    [SCREEN_MAP] = &app_map_keys,
    [SCREEN_SENTENCE] = &app_sentence_keys,
    [SCREEN_NEXT] = &app_next_keys,
};

/* The label after which the help lists the knobs' keys (app_stage.c). */
extern const char app_knobs_here[];

const struct app_binding *
app_binding_for(const struct app_screen_keys *t, int key)
{
    for (size_t i = 0; i < t->count; i++)
        for (int k = 0; k < APP_BINDING_KEYS && t->bindings[i].keys[k] != 0; k++)
            if (t->bindings[i].keys[k] == key && t->bindings[i].run != NULL)
                return &t->bindings[i];
    return NULL;
}

void
app_open_screen(struct app *a, enum view_screen s)
{
    struct view *v = &a->view;

    if (s == SCREEN_NEXT && !tables[s]->available(a)) {
        app_say(a, "N shows a trained model's next-token predictions (--model)");
        return;
    }
    if (s == SCREEN_SENTENCE && !tables[s]->available(a)) {
        app_say(a, "T shows the sentence; Q, K and V are given directly here");
        return;
    }
    if (s == SCREEN_MAP && !tables[s]->available(a)) {
        app_say(a, "L shows a trained model's map of layers and heads (--model)");
        return;
    }
    if (s == SCREEN_MAP) {
        v->map_row = a->pipe.layer;
        v->map_col = v->head;
    }
    if (s == SCREEN_NEXT)
        v->next_first = -1; /* the end of the text in sight, as far as the cursor allows */
    v->screen = s;
}

void
app_screen_key(struct app *a, int key)
{
    app_open_screen(a, key == 'N' ? SCREEN_NEXT : key == 'T' ? SCREEN_SENTENCE : SCREEN_MAP);
}

void
app_close_screen(struct app *a, int key)
{
    (void)key;
    a->view.screen = SCREEN_STAGE;
    view_clamp(&a->view, &a->pipe);
}

void
app_quit(struct app *a, int key)
{
    (void)key;
    a->quit = true;
}

void
app_toggle_present(struct app *a, int key)
{
    (void)key;
    a->view.present = !a->view.present;
}

void
app_show_help(struct app *a, int key)
{
    (void)key;
    a->view.screen = SCREEN_STAGE;
    a->view.help = true;
}

void
app_export_key(struct app *a, int key)
{
    app_export(a, key == 'X');
}

/* ------------------------------------------------------------- lessons */

/* Keys that take what the step shows away (a figure, an export) and leave the step as it is. */
static bool
keeps_the_step(int key)
{
    return key == 'q' || key == '?' || key == 'x' || key == 'X' || key == 'F';
}

/* Keys that look around without changing what a walkthrough step shows. */
static bool
is_view_only(int key)
{
    static const int keys[] = { APP_KEY_UP,  APP_KEY_DOWN, APP_KEY_LEFT,     APP_KEY_RIGHT,
                                APP_KEY_HOME, APP_KEY_END, APP_KEY_PAGE_UP,  APP_KEY_PAGE_DOWN,
                                APP_KEY_TAB, APP_KEY_BACKTAB, APP_KEY_ESCAPE, 'g',
                                'i',         '[',          ']',              '?',
                                'q',         'w',          'z',              'x',
                                'X',         'F' };

    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (keys[i] == key)
            return true;
    return false;
}

/* A presentation clicker's step for key: +1 (PgDn, Right), -1 (PgUp, Left), else 0. */
static int
clicker(int key)
{
    if (key == APP_KEY_PAGE_DOWN || key == APP_KEY_RIGHT)
        return 1;
    if (key == APP_KEY_PAGE_UP || key == APP_KEY_LEFT)
        return -1;
    return 0;
}

/*
 * A lesson's own keys, before the screen's (the stage screen's help rows
 * document them): on the script Space and n go on, Backspace and p back;
 * Enter comes back to the step; in presentation mode a clicker's PgDn and
 * PgUp always step (Right and Left while on the script), and b or . blank
 * the screen until the next key; l lists the steps.  Any other key that
 * changes what is shown leaves the script.  True when the key was the
 * lesson's.
 */
static bool
lesson_key(struct app *a, int key, bool had_message)
{
    struct view *v = &a->view;
    const bool forward = key == ' ' || key == 'n';
    const bool back = key == APP_KEY_BACKSPACE || key == 'p';

    if (v->present && (key == 'b' || key == '.')) {
        /* A clicker's blank-screen button, as presentation programs take it. */
        v->blank = true;
        return true;
    }
    if (v->present && (key == APP_KEY_PAGE_DOWN || key == APP_KEY_PAGE_UP ||
                       (v->following && clicker(key) != 0))) {
        /* A clicker's keys move through the steps on every screen, from the step last played
           even after a stray key left the script: PgDn and PgUp are never the view's here. */
        app_step_to(a, v->step + clicker(key));
        return true;
    }
    if (v->screen != SCREEN_STAGE) {
        /* On the map, the sentence or the predictions, its keys still walk it. */
        if (v->following && (forward || back)) {
            app_step_to(a, v->step + (forward ? 1 : -1));
            return true;
        }
        if (key == APP_KEY_ENTER && v->screen != SCREEN_MAP) {
            app_step_to(a, v->step);
            return true;
        }
        if (!keeps_the_step(key))
            v->following = false;
        return false;
    }
    if (v->following && (forward || back)) {
        app_step_to(a, v->step + (forward ? 1 : -1));
        return true;
    }
    if (key == APP_KEY_ENTER) {
        app_step_to(a, v->step);
        return true;
    }
    if (key == 'l') {
        app_open_step_list(a);
        return true;
    }
    if (key == APP_KEY_ESCAPE && v->narration != NULL && !had_message) {
        /* The narration closed; the lesson stays: Enter (or l) brings its step back. */
        v->narration = NULL;
        v->narration_bare = NULL;
        v->following = false;
        app_say(a, "narration closed: Enter brings step %d back, w another lesson", v->step + 1);
        return true;
    }
    if (!is_view_only(key))
        v->following = false;
    return false;
}

/* ------------------------------------------------------------ the help */

static void
help_key(struct app *a, int key)
{
    struct view *v = &a->view;
    const int page = v->frame.help_page > 1 ? v->frame.help_page - 1 : 1;

    switch (key) {
    case APP_KEY_UP:
        if (v->help_scroll > 0)
            v->help_scroll--;
        break;
    case APP_KEY_DOWN:
        if (v->help_scroll < v->frame.help_rows - v->frame.help_page)
            v->help_scroll++;
        break;
    case APP_KEY_PAGE_UP:
        v->help_scroll -= page;
        if (v->help_scroll < 0)
            v->help_scroll = 0;
        break;
    case APP_KEY_PAGE_DOWN:
    case ' ':
        /* The view clamps it to the last page when it draws. */
        v->help_scroll += page;
        break;
    case APP_KEY_HOME:
        v->help_scroll = 0;
        break;
    case APP_KEY_END:
        v->help_scroll = v->frame.help_rows;
        break;
    case 'q':
        a->quit = true;
        break;
    default:
        v->help = false;
        v->help_scroll = 0;
        break;
    }
}

/* ------------------------------------------------------------- dispatch */

void
app_key(struct app *a, int key)
{
    struct view *v = &a->view;
    const struct app_screen_keys *t;
    const struct app_binding *b;

    /* Nothing can be seen on a screen too small to draw on: only q works, as it says. */
    if (v->frame.too_small) {
        if (key == 'q')
            a->quit = true;
        return;
    }
    if (v->blank) {
        v->blank = false; /* any key brings the screen back, and only that */
        return;
    }
    if (app_writing_key(a, key))
        return;
    if (v->editing) {
        v->message = NULL;
        app_edit_key(a, key);
        return;
    }
    if (v->help) {
        help_key(a, key);
        return;
    }
    if (v->picker) {
        app_picker_key(a, key);
        return;
    }
    /* A screen the pipeline lacks (the model changed) is the stage screen. */
    t = tables[v->screen];
    if (t->available != NULL && !t->available(a)) {
        v->screen = SCREEN_STAGE;
        t = tables[SCREEN_STAGE];
    }
    if (v->screen != SCREEN_STAGE && a->walking && lesson_key(a, key, v->message != NULL))
        return;
    {
        const bool had_message = v->message != NULL;
        v->message = NULL;
        if (v->screen == SCREEN_STAGE && a->walking && lesson_key(a, key, had_message))
            return;
    }
    b = app_binding_for(t, key);
    if (b != NULL)
        b->run(a, key);
    else if (t->other != NULL)
        t->other(a, key);
    if (v->screen == SCREEN_STAGE && !v->editing && !v->help && !v->picker)
        view_clamp(v, &a->pipe);
}

bool
app_key_answered(const struct app *a, int key)
{
    const struct view *v = &a->view;
    const struct app_screen_keys *t = tables[v->screen];
    enum view_stage s;
    int dir;

    if (app_binding_for(t, key) != NULL)
        return true;
    if (a->walking && (key == ' ' || key == 'n' || key == 'p' || key == APP_KEY_BACKSPACE ||
                       (key == APP_KEY_ENTER && v->screen != SCREEN_MAP)))
        return true; /* the lesson's own (lesson_key) */
    /* The stage screen's digits and knobs; the sentence view's letters go to words. */
    if (v->screen == SCREEN_STAGE)
        return explain_stage_for_key(key, &s) == 0 || knob_for_key(key, &dir) != NULL;
    return v->screen == SCREEN_SENTENCE && key < 128 && isalpha(key);
}

void
app_click(struct app *a, int x, int y)
{
    struct view *v = &a->view;

    if (v->help || v->editing)
        return;
    for (int t = 0; t < v->frame.tiles; t++) {
        int row;
        int col;
        if (heatmap_hit(&v->frame.geo[t], x, y, &row, &col) == 0) {
            v->cursor_row = row;
            v->cursor_col = col;
            v->head = v->frame.tile_head[t];
            view_clamp(v, &a->pipe);
            return;
        }
    }
    {
        int s = view_stage_at(v, x, y);
        if (s >= 0) {
            if (a->walking && s != (int)v->stage)
                v->following = false; /* off the script, as a stage key leaves it */
            v->stage = (enum view_stage)s;
            v->message = NULL;
            view_clamp(v, &a->pipe);
            return;
        }
    }
    app_say(a, "a click on a cell explains it; one on the stage bar goes to that stage");
}

/* ------------------------------------------- help, footer and key list */

/* Rows of the stage table with a label, the knobs' keys where app_knobs_here is. */
#define HELP_MAX 64

const struct view_help_line *
app_help(int *count)
{
    static struct view_help_line lines[HELP_MAX + KNOB_COUNT];
    static int n;

    if (n == 0) {
        const struct app_screen_keys *t = &app_stage_keys;
        for (size_t i = 0; i < t->count && n < HELP_MAX; i++) {
            const struct app_binding *b = &t->bindings[i];
            if (b->label == app_knobs_here) {
                for (int k = 0; k < KNOB_COUNT; k++)
                    if (knob_table[k].keys != NULL)
                        lines[n++] = (struct view_help_line){ knob_table[k].keys,
                                                              knob_table[k].key_help };
            } else if (b->label != NULL) {
                lines[n++] = (struct view_help_line){ b->label, b->help };
            }
        }
    }
    *count = n;
    return lines;
}

const char *const *
app_footer(enum view_screen s, int *count)
{
    static const char *items[16];
    /* (Every screen shows the stage screen's keys for now: its rows are the ones to learn.) */
    const struct app_screen_keys *t = tables[SCREEN_STAGE];
    int n = 0;

    (void)s;

    /* The rows with a footer item, by their rank: most used first. */
    for (int rank = 1; rank <= 16; rank++)
        for (size_t i = 0; i < t->count && n < 16; i++)
            if (t->bindings[i].footer != NULL && t->bindings[i].footer_rank == rank)
                items[n++] = t->bindings[i].footer;
    *count = n;
    return items;
}

void
app_print_keys(FILE *out)
{
    int count;
    const struct view_help_line *lines = app_help(&count);

    for (int i = 0; i < count; i++)
        fprintf(out, "%s\t%s\n", lines[i].keys, lines[i].what);
}
