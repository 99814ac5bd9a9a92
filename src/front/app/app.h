/*
 * app.h: the interactive view's state and what every key does to it.
 *
 * No curses here: keys arrive as code points or APP_KEY_* values, so the
 * tests can drive the whole application without a terminal.  Every knob
 * change builds a new pipeline and swaps it in only if it succeeds; a bad
 * value leaves the last good state on screen and says why in the footer.
 */
#ifndef ATTNSCOPE_TUI_APP_H
#define ATTNSCOPE_TUI_APP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "attnscope/families/model/generate.h"
#include "attnscope/pipeline/pipeline.h"
#include "render/figure.h"
#include "render/view.h"
#include "front/lessons/walkthrough.h"

/* Keys beyond Unicode. */
enum {
    APP_KEY_UP = 0x110000,
    APP_KEY_DOWN,
    APP_KEY_LEFT,
    APP_KEY_RIGHT,
    APP_KEY_HOME,
    APP_KEY_END,
    APP_KEY_PAGE_UP,
    APP_KEY_PAGE_DOWN,
    APP_KEY_BACKSPACE,
    APP_KEY_DELETE,
    APP_KEY_ENTER,
    APP_KEY_ESCAPE,
    APP_KEY_TAB,
    APP_KEY_BACKTAB,
    /*
     * Not a key: the terminal's loop sends it while the app keeps writing
     * (A), between frames, when no key waits.
     */
    APP_KEY_WRITE_MORE
};

#define APP_KEY_CTRL(c) ((c) & 0x1F)

#define APP_DEFAULT_EXPORT_DIR "attnscope-export"

struct app {
    struct attention_config cfg;
    char *sentence;
    char *source;                            /* cross-attention's source sentence, or NULL */
    /*
     * What the pipeline is made of (pipeline.h; its vocabularies, weights,
     * Q/K/V, family and model borrowed): app_source makes a pipeline's from
     * it with the text, the switches' masks below and the layer shown.  B
     * sets its sinks_off.
     */
    struct pipeline_source src;
    /*
     * The app's own switches' masks (switches.h): a on a head zeroes it
     * (SWITCH_ABLATE, layers * heads), a on the router switches an expert
     * off (SWITCH_EXPERT_OFF, layers * experts); NULL: none.
     */
    struct model_switch_masks switches;
    const char *weights_dir;                 /* for messages */
    const char *export_dir;
    struct pipeline pipe;
    struct view view;
    char *edit;         /* the sentence being edited: as long as the tokenizer takes */
    size_t edit_cap;    /* bytes allocated for edit */
    size_t edit_cursor;
    char message[512];
    bool quit;

    /* A walkthrough being played: the app owns it and its step's inputs. */
    struct walkthrough walk;
    bool walking;
    unsigned long step_generation; /* the pipeline's generation the step shown was made with */
    struct walk_resources res;
    bool have_res;
    char *narration; /* the step's, rendered (walkthrough_narrate) */
    char *narration_bare; /* the same for a screen with no cell panel (WALK_VIEW_BARE) */

    /*
     * The predictions without the ablated heads (the N screen compares):
     * made by app_settle for the pipeline of generation base_generation.
     */
    int *base_ids;
    float *base_probs;
    int base_n, base_top;
    unsigned long base_generation;

    /* The picker's choices. */
    char **picks;          /* paths */
    char **pick_titles;
    int pick_count;
    const char **step_titles; /* the step list (l): the lesson's step titles, borrowed */
    bool picking_step;        /* the picker lists the lesson's steps, not lessons */
    /* A trained model writing (G, A; app_write.c): NULL until the first token. */
    struct generation *writing;
    bool writing_on;          /* A: keep writing, a token a frame, until a key */
    int write_left;           /* --generate's tokens still to write that way (0: no end) */
    struct generate_end eos;  /* the tokens that stop the writing (write_end_of) */
    /*
     * The front end's work between keys, when nothing runs: when no key
     * waits, and before each key is handled (the view's main: packing the
     * model's weights meanwhile, and taking the packs over once made, which
     * a steady stream of keys must not put off); cheap when there is
     * nothing to do.  True once all of that work is done.  NULL: none.
     */
    bool (*idle)(void *ctx);
    void *idle_ctx;
    /* A second model beside the first (--compare, :compare PATH; app_compare.c), or NULL. */
    struct app_compare *compare;
};

/*
 * Builds the first pipeline from src (everything in it is borrowed for the
 * app's life); fails (with err) when cfg or the sentence is bad, as the
 * command line would.  weights_dir names src->weights in messages.
 */
enum attn_status app_init(struct app *a, const struct attention_config *cfg,
                          const struct pipeline_source *src, const char *weights_dir,
                          struct attn_error *err);
void app_destroy(struct app *a);

/*
 * Starts playing w (the app takes it over) at its first step.  Fails, with
 * err naming the file and line, when the step cannot be built.
 */
enum attn_status app_play(struct app *a, struct walkthrough *w, struct attn_error *err);

/* Where the view opens: what --stage, --head, --view and --query name (NULL: not given). */
struct app_start {
    const char *stage;
    const char *head;
    const char *view;
    const char *query;
};

/*
 * Opens the view there; fails (with err naming the option) on a name the
 * pipeline does not have, leaving the view as it was up to that option.
 */
enum attn_status app_open_at(struct app *a, const struct app_start *s, struct attn_error *err);

/* What the view shows, as a figure in path (.svg, .png, .pdf: figure.h); res may be NULL. */
enum attn_status app_write_figure(struct app *a, const char *path, struct figure_result *res,
                                  struct attn_error *err);

/* Handles one key. */
/*
 * Opens the model at path (any form --model takes) beside a's as the
 * second of a comparison (compare.h), the difference shown: refused,
 * nothing changed, when its sizes, stages or the text's ids differ.
 */
struct model_options;
enum attn_status app_compare_open(struct app *a, const char *path, const struct model_options *mo,
                                  struct attn_error *err);

void app_key(struct app *a, int key);
/*
 * Writes count tokens after the text (--generate in the view), as G would
 * one by one; fails (with err) as the first that cannot be written.  A
 * model's only.
 */
enum attn_status app_write_tokens(struct app *a, int count, struct attn_error *err);
/*
 * --generate in the terminal: count tokens written as A writes them, a
 * token a frame from the first frame on, so the view shows the writing as
 * it goes; any key, Esc or Ctrl-C stops it and keeps what was written.
 */
void app_write_meanwhile(struct app *a, int count);
/* The terminal stopped a job (Esc, q, a signal): the writing stops too. */
void app_stopped(struct app *a);
/* Whether the app writes a token a frame (A, or --generate in the terminal). */
bool app_writing(const struct app *a);

/*
 * Handles pasted text (a terminal's bracketed paste): always sentence text,
 * never keys.  In the editor it goes in at the cursor; elsewhere it opens
 * the editor holding it, for Enter to apply or Esc to cancel.  Line ends
 * become spaces; control characters are dropped.
 */
void app_paste(struct app *a, const char *text, size_t len);

/* Handles a click at screen column x, row y (as drawn by the last frame). */
void app_click(struct app *a, int x, int y);

/*
 * Does the work the next frame needs that is too slow for drawing: the
 * model map's measures of every head (headmap.h), which make every layer's
 * weights again.  The terminal's worker calls it after each key, click and
 * paste, so the drawing thread never waits on it; without it the first
 * drawing of the map makes them.
 */
void app_settle(struct app *a);

/* Draws the current frame into g. */
void app_render(struct app *a, struct grid *g);

/* Every key of the view, for the help screen; *count gets how many. */
const struct view_help_line *app_help(int *count);

/* The footer's key items on screen s, most used first, from the key tables. */
const char *const *app_footer(enum view_screen s, int *count);

/* The same, a line each ("KEYS<tab>WHAT"): attnscope --help-keys, the manual's KEYS summary. */
void app_print_keys(FILE *out);

#endif
