/*
 * app_next.c: the predictions' keys (see app_keys.h).  The stage screen's
 * N row documents the screen.
 */
#include "config.h"

#include "attnscope/families/gpt2/family_gpt2.h"
#include "front/app_keys.h"

static void
next_other(struct app *a, int key)
{
    (void)key;
    app_say(a, "the predictions: N or Esc goes back, x exports them");
}

static bool
has_model(const struct app *a)
{
    return pipeline_gpt2(&a->pipe) != NULL;
}

static const struct app_binding next[] = {
    { { 'N', APP_KEY_ESCAPE }, NULL, "back", NULL, 0, app_close_screen },
    { { 'e' }, NULL, "edit the sentence", NULL, 0, app_edit_sentence },
    { { 'x', 'X' }, NULL, "export the predictions (next.csv, lens.csv) / every stage", NULL, 0,
      app_export_key },
    { { 'z' }, NULL, "presentation mode", NULL, 0, app_toggle_present },
    { { 'F' }, NULL, "a figure of the screen (SVG, PNG, PDF)", NULL, 0, app_figure_key },
    { { 'q' }, NULL, "quit", NULL, 0, app_quit },
};

const struct app_screen_keys app_next_keys = {
    SCREEN_NEXT, next, sizeof next / sizeof next[0], next_other, has_model,
};
