/*
 * app_map.c: the model map's keys (see app_keys.h): a head with the
 * arrows, a measure with Tab, Enter opens the head on its weights.  The
 * stage screen's L row documents them.
 */
#include "config.h"

#include "attnscope/families/model/family_model.h"
#include "attnscope/families/model/headmap.h"
#include "front/app/app_keys.h"

static void
pick_head(struct app *a, int key)
{
    struct view *v = &a->view;
    const int heads = head_map_heads(&a->pipe);

    if (key == APP_KEY_PAGE_UP || key == APP_KEY_PAGE_DOWN) {
        /* A page of the layers the heatmaps show (one on the measures' table). */
        const int page = v->frame.map_layers > 1 ? v->frame.map_layers : 1;
        v->map_row += key == APP_KEY_PAGE_DOWN ? page : -page;
        v->map_row = v->map_row < 0 ? 0 : v->map_row >= a->pipe.layers ? a->pipe.layers - 1 : v->map_row;
        v->map_first += key == APP_KEY_PAGE_DOWN ? page : -page;
        v->map_first = v->map_first < 0 ? 0 : v->map_first;
    } else if (key == APP_KEY_UP)
        v->map_row -= v->map_row > 0;
    else if (key == APP_KEY_DOWN)
        v->map_row += v->map_row + 1 < a->pipe.layers;
    else if (key == APP_KEY_LEFT)
        v->map_col -= v->map_col > 0;
    else
        v->map_col += v->map_col + 1 < heads;
}

static void
next_measure(struct app *a, int key)
{
    struct view *v = &a->view;

    do { /* (a measure the model lacks, the sink's, is passed over) */
        if (key == APP_KEY_TAB)
            v->map_measure = (v->map_measure + 1) % (VIEW_MAP_HEATMAPS + 1);
        else
            v->map_measure = (v->map_measure + VIEW_MAP_HEATMAPS) % (VIEW_MAP_HEATMAPS + 1);
    } while (v->map_measure < VIEW_MAP_HEATMAPS &&
             !head_measure_present(&a->pipe, (enum head_measure)v->map_measure));
}

/* h: every head's heatmap, whichever measure was shown (L remembers the last). */
static void
heatmaps(struct app *a, int key)
{
    (void)key;
    a->view.map_measure = VIEW_MAP_HEATMAPS;
}

/* Enter: the head at the cursor, on its layer's attention weights. */
static void
open_head(struct app *a, int key)
{
    struct view *v = &a->view;
    struct attn_error err;

    (void)key;
    if (pipeline_select_layer(&a->pipe, v->map_row, &err) != ATTN_OK) {
        app_complain(a, err.msg);
        return;
    }
    v->head = v->map_col;
    /* (a DeltaNet layer's head: its effective attention) */
    v->stage = explain_stage_present(&a->pipe, VIEW_EFFECTIVE) ? VIEW_EFFECTIVE : VIEW_WEIGHTS;
    v->grid_heads = false;
    v->screen = SCREEN_STAGE;
    view_clamp(v, &a->pipe);
    app_say(a, "layer %d, head %d", v->map_row, v->map_col);
}

static void
map_other(struct app *a, int key)
{
    (void)key;
    app_say(a, "in the map: arrows pick a head, Tab a measure, Enter opens it, L or Esc goes back");
}

static bool
has_model(const struct app *a)
{
    return pipeline_decoder(&a->pipe) != NULL;
}

static const struct app_binding map[] = {
    { { APP_KEY_UP, APP_KEY_DOWN, APP_KEY_LEFT, APP_KEY_RIGHT }, NULL, "a head", NULL, 0,
      pick_head },
    { { APP_KEY_PAGE_UP, APP_KEY_PAGE_DOWN }, NULL, "a page of layers", NULL, 0,
      pick_head },
    { { APP_KEY_TAB, APP_KEY_BACKTAB }, NULL, "the next / previous measure", NULL, 0,
      next_measure },
    { { 'h' }, NULL, "every head's heatmap (from any measure)", NULL, 0, heatmaps },
    { { 'C' }, NULL, "with a second model: its measures, or how much each head changed", NULL, 0,
      app_compare_key },
    { { APP_KEY_ENTER }, NULL, "open the head", NULL, 0, open_head },
    { { 'L', APP_KEY_ESCAPE }, NULL, "back", NULL, 0, app_close_screen },
    { { 'N', 'T' }, NULL, "the next tokens / the sentence view", NULL, 0, app_screen_key },
    { { 'x', 'X' }, NULL, "export the map (heads.csv) / every stage", NULL, 0, app_export_key },
    { { 'e' }, NULL, "edit the sentence", NULL, 0, app_edit_sentence },
    { { 'f' }, NULL, "every head's heatmap without the first key in its colour scale", NULL, 0,
      app_skip_first_key },
    { { 'z' }, NULL, "presentation mode", NULL, 0, app_toggle_present },
    { { 'w' }, NULL, "choose a walkthrough (a scripted lesson)", NULL, 0, app_lessons_key },
    { { 'F' }, NULL, "a figure of the screen (SVG, PNG, PDF)", NULL, 0, app_figure_key },
    { { 'q' }, NULL, "quit", NULL, 0, app_quit },
    { { '?' }, NULL, "the help", NULL, 0, app_show_help },
};

const struct app_screen_keys app_map_keys = {
    SCREEN_MAP, map, sizeof map / sizeof map[0], map_other, has_model,
};
