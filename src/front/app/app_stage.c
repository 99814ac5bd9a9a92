/*
 * app_stage.c: the stage screen's keys (see app_keys.h): the stages, the
 * cursor, the heads, the screens it opens, the editor, and what the help
 * lists in its order.  Keys no row answers go to the stage table's digits
 * (explain.h) and the knob table (knob.h), in that order.
 */
#include "config.h"

#include <stdio.h>

#include "attnscope/families/model/family_model.h"
#include "attnscope/pipeline/knob.h"
#include "front/app/app_keys.h"
#include "render/explain.h"

static void
next_stage(struct app *a, int key)
{
    char title[160];

    (void)key;
    if (!view_step_stage(&a->view, &a->pipe, 1))
        app_say(a, "%s is the last stage: p or Backspace goes back, 1 to the start",
                explain_title(&a->pipe, a->view.stage, title, sizeof title));
}

static void
previous_stage(struct app *a, int key)
{
    char title[160];

    if (key == APP_KEY_BACKSPACE && app_can_unwrite(a)) {
        app_unwrite(a);
        return;
    }
    if (!view_step_stage(&a->view, &a->pipe, -1))
        app_say(a, "%s is the first stage: Space or n goes on",
                explain_title(&a->pipe, a->view.stage, title, sizeof title));
}

static void
move_cursor(struct app *a, int key)
{
    struct view *v = &a->view;

    v->cursor_row += key == APP_KEY_DOWN ? 1 : key == APP_KEY_UP ? -1 : 0;
    v->cursor_col += key == APP_KEY_RIGHT ? 1 : key == APP_KEY_LEFT ? -1 : 0;
}

static void
row_ends(struct app *a, int key)
{
    a->view.cursor_col = key == APP_KEY_HOME ? 0 : a->view.frame.cols - 1;
}

/* PgUp and PgDn: a page of the heatmap's rows, one kept in sight. */
static void
page(struct app *a, int key)
{
    const int rows = a->view.frame.geo[0].vis_rows;
    const int step = rows > 1 ? rows - 1 : 1;

    a->view.cursor_row += key == APP_KEY_PAGE_DOWN ? step : -step;
}

static void
next_head(struct app *a, int key)
{
    struct view *v = &a->view;
    /* (a stage's own heads: a DeltaNet layer's value heads may outnumber attention's) */
    const int heads = explain_stage_per_head(v->stage) ? explain_stage_heads(&a->pipe, v->stage)
                                                        : a->pipe.st.shape.heads;
    char title[160];

    v->head = (v->head + (key == APP_KEY_TAB ? 1 : heads - 1)) % heads;
    if (heads == 1)
        app_say(a, "%s has one head", attention_variant_name(a->cfg.variant));
    else if (!explain_stage_per_head(v->stage))
        app_say(a, "head %d of %d: %s is not split by head; Tab shows on stages 2 to 8", v->head,
                heads, explain_title(&a->pipe, v->stage, title, sizeof title));
}

static void
open_next(struct app *a, int key)
{
    (void)key;
    app_open_screen(a, SCREEN_NEXT);
}

static void
open_sentence(struct app *a, int key)
{
    (void)key;
    app_open_screen(a, SCREEN_SENTENCE);
}

static void
open_map(struct app *a, int key)
{
    (void)key;
    app_open_screen(a, SCREEN_MAP);
}

static void
toggle_grid(struct app *a, int key)
{
    struct view *v = &a->view;

    (void)key;
    v->grid_heads = !v->grid_heads;
    if (v->grid_heads && explain_stage_heads(&a->pipe, v->stage) == 1 &&
        explain_stage_per_head(v->stage))
        app_say(a, "one head: the grid shows it alone");
    else if (v->grid_heads && !explain_stage_per_head(v->stage))
        app_say(a, "grid on: it shows on the per-head stages (2-8)");
}

static void
mask_matrix(struct app *a, int key)
{
    struct view *v = &a->view;

    (void)key;
    v->mask_matrix = v->stage != VIEW_MASK || !v->mask_matrix;
    v->stage = VIEW_MASK;
}

/*
 * W: the parameters the stage uses, as a matrix of their own: on the output
 * stage out_proj, elsewhere W_query, W_key and W_value (on the Q K V stage);
 * W again goes back to the stage's own numbers.
 */
static void
show_parameters(struct app *a, int key)
{
    struct view *v = &a->view;
    const enum view_stage at = v->stage == VIEW_OUTPUT ? VIEW_OUTPUT : VIEW_QKV;
    char why[160];

    (void)key;
    if (a->src.model != NULL) {
        app_complain(a, "W shows the book's classes' parameters; a trained model's stay in its "
                        "file: the panel below shows each cell's products with them");
        return;
    }
    if (a->pipe.params.count == 0) {
        snprintf(why, sizeof why, "%s has no trainable parameters: v picks a variant that has",
                 attention_variant_name(a->cfg.variant));
        app_complain(a, why);
        return;
    }
    if (at == VIEW_OUTPUT && !attention_variant_has_out_proj(a->cfg.variant)) {
        snprintf(why, sizeof why,
                 "%s has no output projection: W on any other stage shows W_query, W_key and "
                 "W_value",
                 attention_variant_name(a->cfg.variant));
        app_complain(a, why);
        return;
    }
    v->param_matrix = !(v->param_matrix && v->param_stage == at && v->stage == at);
    v->param_stage = at;
    v->stage = at;
}

static void
toggle_panel(struct app *a, int key)
{
    (void)key;
    a->view.hide_panel = !a->view.hide_panel;
    if (a->view.hide_panel)
        app_say(a, "the panel that explains the cell is hidden: i shows it again");
}

void
app_edit_sentence(struct app *a, int key)
{
    (void)key;
    if (a->src.qkv != NULL) {
        app_complain(a, "Q, K and V are given directly: there is no sentence to edit");
        return;
    }
    if (app_edit_start(a, a->sentence) == 0) {
        a->view.editing = true;
        a->view.editing_source = false;
        a->view.editing_knob = false;
    }
}

static void
edit_source(struct app *a, int key)
{
    (void)key;
    if (a->source == NULL) {
        app_complain(a, "E edits the source sentence of cross-attention (start with --source "
                        "TEXT); e edits the sentence");
        return;
    }
    if (app_edit_start(a, a->source) == 0) {
        a->view.editing = true;
        a->view.editing_source = true;
        a->view.editing_knob = false;
    }
}

/* A switch of the view turned, and what it now does said. */
static void
flip(struct app *a, bool *on, const char *said_on, const char *said_off)
{
    *on = !*on;
    app_say(a, "%s", *on ? said_on : said_off);
}

/* f: the first key's column out of the colour scale, or back in (the stage screen and the map). */
void
app_skip_first_key(struct app *a, int key)
{
    (void)key;
    flip(a, &a->view.skip_first_key,
         "the first key left out of the colour scale: a sink's weight no longer flattens the rest "
         "(its own cells show the top colour); f brings it back",
         "the first key back in the colour scale");
}

/* c: the weights' colour scale logarithmic, or back to linear. */
static void
log_scale(struct app *a, int key)
{
    (void)key;
    flip(a, &a->view.log_scale,
         "weights on a log scale: each factor of ten one step of the colours, from the smallest "
         "weight to the largest (the legend says log); c: linear again",
         "weights on a linear scale again");
}

/* ':' a knob typed with its value ("seed 789"), Enter sets it: for values far from the keys' steps. */
static void
edit_knob(struct app *a, int key)
{
    (void)key;
    if (app_edit_start(a, "") == 0) {
        a->view.editing = true;
        a->view.editing_source = false;
        a->view.editing_knob = true;
    }
}

/* ] and [: the next or previous page of a narration longer than its room. */
static void
narration_page(struct app *a, int key)
{
    struct view *v = &a->view;
    const int page_rows = v->frame.narration_page > 0 ? v->frame.narration_page : 1;
    const int dir = key == ']' ? 1 : -1;

    if (v->narration == NULL) {
        app_say(a, "] and [ page a lesson's narration: w chooses a lesson");
        return;
    }
    if (v->frame.narration_rows <= page_rows) {
        app_say(a, "the whole narration is on the screen");
        return;
    }
    if (dir > 0 && v->narration_scroll + page_rows >= v->frame.narration_rows) {
        app_say(a, "that is the narration's end: [ goes back");
        return;
    }
    if (dir < 0 && v->narration_scroll == 0) {
        app_say(a, "that is the narration's start: ] goes on");
        return;
    }
    v->narration_scroll += dir * page_rows;
    if (v->narration_scroll < 0)
        v->narration_scroll = 0;
}

/* Esc on the stage screen: the message goes (the dispatcher has already cleared it). */
static void
nothing(struct app *a, int key)
{
    (void)a;
    (void)key;
}

/* The label of the row after which the knob table's keys are listed in the help. */
const char app_knobs_here[] = "(the knobs)";

/*
 * In the help's order.  Rows without keys are documented here and handled
 * elsewhere: the digits by the stage table (explain.h), a click by
 * app_click, a lesson's keys by the lesson's own table (app_keys.c).
 */
static const struct app_binding stage[] = {
    { { ' ', 'n' }, "Space n", "next stage", "Space/p stage", 3, next_stage },
    { { APP_KEY_BACKSPACE, 'p' }, "Backspace p",
      "previous stage; with --model, while written tokens are shown, Backspace takes the last "
      "back", NULL, 0, previous_stage },
    { { 0 }, "1-9 0", "jump to a stage (Space and p also reach the positional encoding)", NULL, 0,
      NULL },
    { { APP_KEY_UP, APP_KEY_DOWN, APP_KEY_LEFT, APP_KEY_RIGHT },
      "arrows",
      "move the cursor; the panel below explains the cell",
      "arrows cell",
      4,
      move_cursor },
    { { APP_KEY_HOME, APP_KEY_END }, "Home End", "first / last column", NULL, 0, row_ends },
    { { APP_KEY_PAGE_UP, APP_KEY_PAGE_DOWN }, "PgUp PgDn", "a page of rows up / down", NULL, 0,
      page },
    { { 0 }, "mouse click", "put the cursor on a cell; on the stage bar, go to that stage", NULL,
      0, NULL },
    { { APP_KEY_TAB, APP_KEY_BACKTAB }, "Tab Shift-Tab", "next / previous head", "Tab head", 6,
      next_head },
    { { ',', '.' }, ", .", "with --model: previous / next layer", NULL, 0, app_step_layer },
    { { 'a' },
      "a",
      "with --model: ablate the head shown (its context zeroed; on the router, switch its expert off), a again brings it back",
      NULL,
      0,
      app_ablate },
    { { 'C' }, "C",
      "with --compare (or :compare PATH): show the first model's numbers, the second's, or "
      "their difference (second minus first, on colours centred on zero)",
      NULL, 0, app_compare_key },
    { { 'B' }, "B",
      "with --model and learned attention sinks (gpt-oss): switch the sinks off (their logits "
      "-inf), B again brings them back",
      NULL, 0, app_sinks },
    { { 'N' },
      "N",
      "with --model: the next tokens after each position, and the logit lens after the last",
      NULL,
      0,
      open_next },
    { { 'G' }, "G",
      "with --model: write the next token, as the book's generate (greedy; j J sample at a "
      "temperature, y Y top-k, :top-p)",
      NULL, 0, app_write_key },
    { { 'A' }, "A", "with --model: keep writing, a token a frame, until a key (Esc)", NULL, 0,
      app_keep_writing },
    { { 'T' },
      "T",
      "the sentence view: the text shaded by the weights of the query token (Left, Right; Home, "
      "End, PgUp, PgDn jump), in the head shown",
      NULL,
      0,
      open_sentence },
    { { 'L' },
      "L",
      "with --model: the model map, one number per layer and head (Tab: the measure, then every "
      "head's heatmap; Enter: open the head)",
      NULL,
      0,
      open_map },
    { { 'g' }, "g", "all heads side by side, the same cursor on each", "g grid", 7, toggle_grid },
    { { 'M' }, "M", "show the causal mask as a matrix of its own", NULL, 0, mask_matrix },
    { { 'W' },
      "W",
      "show the parameters: W_query, W_key, W_value (on Q K V) or out_proj (on output); W again "
      "goes back",
      NULL,
      0,
      show_parameters },
    { { 'i' }, "i", "hide / show the panel that explains the cell (more room for the matrix)",
      NULL, 0, toggle_panel },
    { { 'e' }, "e", "edit the sentence (Enter applies, Esc cancels; on every screen)", "e edit", 5,
      app_edit_sentence },
    { { 'E' }, "E", "edit the source sentence (cross-attention, --source)", NULL, 0, edit_source },
    { { 'f' }, "f",
      "leave the first key out of the colour scale (an attention sink: most weight on token 0)",
      NULL, 0, app_skip_first_key },
    { { 'c' }, "c",
      "weights (softmax, dropout) on a logarithmic colour scale, or linear again: small weights "
      "told apart",
      NULL, 0, log_scale },
    { { ':' }, ":", "set a knob to a value typed as its option takes it (seed 789, temperature 0.5), "
                    "or go to a head (5.1), a stage (stage weights.h2), a screen (view map) or a "
                    "query (query it); with --model, chat TEXT puts a message in its chat "
                    "template",
      NULL, 0, edit_knob },
    { { 0 }, app_knobs_here, NULL, NULL, 0, NULL },
    { { 'x', 'X' }, "x X", "export this stage / every stage to CSV", "x export", 8,
      app_export_key },
    { { 'w' }, "w", "choose a walkthrough (a scripted lesson)", "w lessons", 9, app_lessons_key },
    { { 0 }, "Space Backspace", "in a walkthrough: next / previous step", NULL, 0, NULL },
    { { 0 }, "Enter", "in a walkthrough: back to the step after exploring", NULL, 0, NULL },
    { { 0 }, "l", "in a walkthrough: the list of its steps (Enter or 1-9 goes to one)", NULL, 0,
      NULL },
    { { ']', '[' },
      "] [",
      "in a walkthrough: the next / previous page of a narration longer than the screen",
      NULL,
      0,
      narration_page },
    { { 0 },
      "PgDn PgUp",
      "in a walkthrough in presentation mode: next / previous step, even off the script (a "
      "clicker's keys; Right and Left too, on the script)",
      NULL,
      0,
      NULL },
    { { 0 },
      "b .",
      "in a walkthrough in presentation mode: blank the screen (a clicker's blank button); any "
      "key brings it back",
      NULL,
      0,
      NULL },
    { { 'F' }, "F", "a figure of what the screen shows, as SVG, PNG and PDF, into the export folder",
      NULL, 0, app_figure_key },
    { { 'z' }, "z", "presentation mode: scaled to the screen and centred, high contrast, no bars",
      "z present", 10, app_toggle_present },
    { { '?' }, "?", "this help", "? help", 2, app_show_help },
    { { APP_KEY_ESCAPE }, "Esc", "close the help, cancel an edit, clear the message", NULL, 0,
      nothing },
    { { 'q' }, "q", "quit", "q quit", 1, app_quit },
};

/* Why a stage's digit finds nothing, and the knob that would bring the stage. */
static const char *
stage_absent_hint(enum view_stage s)
{
    switch (s) {
    case VIEW_MASK:
        return ": this class masks nothing (m puts the causal mask on)";
    case VIEW_SCALED:
        return ": this class does not scale the scores (/ scales them)";
    case VIEW_DROPOUT:
        return ": this class has no dropout (o sets a p)";
    case VIEW_CONCAT:
        return ": one head, nothing to concatenate (v: wrapper or mha)";
    case VIEW_OUTPUT:
        return ": this class has no output projection (v: mha)";
    default:
        return "";
    }
}

/* A digit goes to its stage (the stage table's keys); a knob's key turns it. */
static void
stage_other(struct app *a, int key)
{
    struct view *v = &a->view;
    enum view_stage jump;
    const struct knob *knob;
    int dir;

    if (explain_stage_for_key(key, &jump) == 0) {
        /* Dropout's key finds it where the variant has it: the notes' acts on the output. */
        if (jump == VIEW_DROPOUT && !explain_stage_present(&a->pipe, jump) &&
            explain_stage_present(&a->pipe, VIEW_OUTDROP))
            jump = VIEW_OUTDROP;
        if (!explain_stage_present(&a->pipe, jump)) {
            app_say(a, "no %s stage here%s", explain_stage_name(jump), stage_absent_hint(jump));
            return;
        }
        v->stage = jump;
        return;
    }
    knob = knob_for_key(key, &dir);
    if (knob != NULL)
        app_turn(a, knob, dir);
}

const struct app_screen_keys app_stage_keys = {
    SCREEN_STAGE, stage, sizeof stage / sizeof stage[0], stage_other, NULL,
};
