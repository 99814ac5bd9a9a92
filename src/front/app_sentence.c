/*
 * app_sentence.c: the sentence view's keys (see app_keys.h): the query
 * token, the head, the layer, the mean of the heads.  The stage screen's T
 * row documents them.
 */
#include "config.h"

#include "front/app_keys.h"

static void
pick_query(struct app *a, int key)
{
    struct view *v = &a->view;

    if (key == APP_KEY_LEFT)
        v->cursor_row -= v->cursor_row > 0;
    else
        v->cursor_row += v->cursor_row + 1 < a->pipe.st.nq;
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
    app_say(a, "in the sentence view: Left and Right pick the query, Tab the head, g their mean, "
               "T or Esc goes back");
}

static bool
has_sentence(const struct app *a)
{
    return !a->pipe.qkv_given;
}

static const struct app_binding sentence[] = {
    { { APP_KEY_LEFT, APP_KEY_RIGHT }, NULL, "the query token", NULL, 0, pick_query },
    { { APP_KEY_TAB, APP_KEY_BACKTAB }, NULL, "the next / previous head", NULL, 0, next_head },
    { { ',', '.' }, NULL, "the previous / next layer", NULL, 0, app_step_layer },
    { { 'g' }, NULL, "the mean of the layer's heads", NULL, 0, mean_of_heads },
    { { 'x', 'X' }, NULL, "export the head shown / every stage", NULL, 0, app_export_key },
    { { 'T', APP_KEY_ESCAPE }, NULL, "back", NULL, 0, app_close_screen },
    { { 'q' }, NULL, "quit", NULL, 0, app_quit },
    { { '?' }, NULL, "the help", NULL, 0, app_show_help },
};

const struct app_screen_keys app_sentence_keys = {
    SCREEN_SENTENCE, sentence, sizeof sentence / sizeof sentence[0], sentence_other, has_sentence,
};
