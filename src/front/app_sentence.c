/*
 * app_sentence.c: the sentence view's keys (see app_keys.h): the query
 * token, the head, the layer, the mean of the heads.  The stage screen's T
 * row documents them.
 */
#include "config.h"

#include "front/app_keys.h"

/* Tokens PgUp and PgDn move the query by: a few lines of a long text. */
#define SENTENCE_PAGE 20

static void
pick_query(struct app *a, int key)
{
    struct view *v = &a->view;
    const int last = a->pipe.st.nq - 1;
    int to = v->cursor_row;

    switch (key) {
    case APP_KEY_LEFT:
        to--;
        break;
    case APP_KEY_RIGHT:
        to++;
        break;
    case APP_KEY_HOME:
        to = 0;
        break;
    case APP_KEY_END:
        to = last;
        break;
    case APP_KEY_PAGE_UP:
        to -= SENTENCE_PAGE;
        break;
    default: /* APP_KEY_PAGE_DOWN */
        to += SENTENCE_PAGE;
        break;
    }
    v->cursor_row = to < 0 ? 0 : to > last ? last : to;
}

static void
next_head(struct app *a, int key)
{
    struct view *v = &a->view;
    const int heads = a->pipe.st.shape.heads;

    v->head = (v->head + (key == APP_KEY_TAB ? 1 : heads - 1)) % heads;
}

static void
mean_of_heads(struct app *a, int key)
{
    (void)key;
    a->view.grid_heads = !a->view.grid_heads;
}

static void
sentence_other(struct app *a, int key)
{
    (void)key;
    app_say(a, "in the sentence view: Left and Right pick the query (Home End PgUp PgDn jump), Tab "
               "the head, g their mean, T or Esc goes back");
}

static bool
has_sentence(const struct app *a)
{
    return !a->pipe.qkv_given;
}

static const struct app_binding sentence[] = {
    { { APP_KEY_LEFT, APP_KEY_RIGHT }, NULL, "the query token", NULL, 0, pick_query },
    { { APP_KEY_HOME, APP_KEY_END, APP_KEY_PAGE_UP, APP_KEY_PAGE_DOWN },
      NULL,
      "the first / last query token, 20 tokens back / on",
      NULL,
      0,
      pick_query },
    { { APP_KEY_TAB, APP_KEY_BACKTAB }, NULL, "the next / previous head", NULL, 0, next_head },
    { { ',', '.' }, NULL, "the previous / next layer", NULL, 0, app_step_layer },
    { { 'g' }, NULL, "the mean of the layer's heads", NULL, 0, mean_of_heads },
    { { 'e' }, NULL, "edit the sentence", NULL, 0, app_edit_sentence },
    { { 'x', 'X' }, NULL, "export the head shown / every stage", NULL, 0, app_export_key },
    { { 'T', APP_KEY_ESCAPE }, NULL, "back", NULL, 0, app_close_screen },
    { { 'z' }, NULL, "presentation mode", NULL, 0, app_toggle_present },
    { { 'F' }, NULL, "a figure of the screen (SVG, PNG, PDF)", NULL, 0, app_figure_key },
    { { 'q' }, NULL, "quit", NULL, 0, app_quit },
    { { '?' }, NULL, "the help", NULL, 0, app_show_help },
};

const struct app_screen_keys app_sentence_keys = {
    SCREEN_SENTENCE, sentence, sizeof sentence / sizeof sentence[0], sentence_other, has_sentence,
};
