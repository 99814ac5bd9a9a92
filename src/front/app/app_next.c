/*
 * app_next.c: the predictions' keys (see app_keys.h).  The stage screen's
 * N row documents the screen.
 */
#include "config.h"

#include "attnscope/families/model/family_model.h"
#include "front/app/app_keys.h"

/* The position whose predictions, before and after and logit lens are shown: the cursor's row. */
static void
pick_position(struct app *a, int key)
{
    struct view *v = &a->view;
    const int n = a->pipe.st.nq;
    const int page = v->frame.next_rows > 1 ? v->frame.next_rows : 1;
    int pos = v->cursor_row >= 0 && v->cursor_row < n ? v->cursor_row : n - 1;

    switch (key) {
    case APP_KEY_UP:
        pos--;
        break;
    case APP_KEY_DOWN:
        pos++;
        break;
    case APP_KEY_PAGE_UP:
        pos -= page;
        break;
    case APP_KEY_PAGE_DOWN:
        pos += page;
        break;
    case APP_KEY_HOME:
        pos = 0;
        break;
    default:
        pos = n - 1;
        break;
    }
    v->cursor_row = pos < 0 ? 0 : pos >= n ? n - 1 : pos;
}

static void
unwrite(struct app *a, int key)
{
    (void)key;
    if (app_can_unwrite(a))
        app_unwrite(a);
    else
        app_say(a, "nothing written to take back: G writes the next token");
}

static void
next_other(struct app *a, int key)
{
    (void)key;
    app_say(a, "the predictions: Up and Down pick the position, G writes the next token, N or "
               "Esc goes back, x exports them");
}

static bool
has_model(const struct app *a)
{
    return pipeline_decoder(&a->pipe) != NULL;
}

static const struct app_binding next[] = {
    { { APP_KEY_UP, APP_KEY_DOWN, APP_KEY_PAGE_UP, APP_KEY_PAGE_DOWN }, NULL,
      "the position: its predictions, and the logit lens after it", NULL, 0, pick_position },
    { { APP_KEY_HOME, APP_KEY_END }, NULL, "the first / last position", NULL, 0, pick_position },
    { { 'N', APP_KEY_ESCAPE }, NULL, "back", NULL, 0, app_close_screen },
    { { 'L', 'T' }, NULL, "the model map / the sentence view", NULL, 0, app_screen_key },
    { { ',', '.' }, NULL, "the previous / next layer (the logit lens keeps it in sight)", NULL, 0,
      app_step_layer },
    { { 'G' }, NULL, "write the next token: the draw shows below", NULL, 0, app_write_key },
    { { 'A' }, NULL, "keep writing until a key", NULL, 0, app_keep_writing },
    { { APP_KEY_BACKSPACE }, NULL, "take the last written token back", NULL, 0, unwrite },
    { { 'C' }, NULL, "with a second model: its predictions, or both beside their divergence",
      NULL, 0, app_compare_key },
    { { 'e' }, NULL, "edit the sentence", NULL, 0, app_edit_sentence },
    { { 'a' }, NULL, "ablate the head shown, or bring it back (the line below compares)", NULL, 0,
      app_ablate },
    { { 'x', 'X' }, NULL, "export the predictions (next.csv, lens.csv) / every stage", NULL, 0,
      app_export_key },
    { { 'z' }, NULL, "presentation mode", NULL, 0, app_toggle_present },
    { { 'w' }, NULL, "choose a walkthrough (a scripted lesson)", NULL, 0, app_lessons_key },
    { { 'F' }, NULL, "a figure of the screen (SVG, PNG, PDF)", NULL, 0, app_figure_key },
    { { 'q' }, NULL, "quit", NULL, 0, app_quit },
};

const struct app_screen_keys app_next_keys = {
    SCREEN_NEXT, next, sizeof next / sizeof next[0], next_other, has_model,
};
