/*
 * app_sentence.c: the sentence view's keys (see app_keys.h): the query
 * token, the head, the layer, the mean of the heads.  The stage screen's T
 * row documents them.
 */
#include "config.h"

#include <ctype.h>
#include <string.h>

#include "front/app/app_keys.h"

/* Tokens PgUp and PgDn move the query by: a few lines of a long text. */
#define SENTENCE_PAGE 20

/* The token the sentence view is about: the query (cursor_row), or with K the key (cursor_col). */
static int *
focus(struct app *a, int *last)
{
    struct view *v = &a->view;

    *last = (v->key_side ? a->pipe.st.nk : a->pipe.st.nq) - 1;
    return v->key_side ? &v->cursor_col : &v->cursor_row;
}

static void
pick_query(struct app *a, int key)
{
    int last;
    int *at = focus(a, &last);
    int to = *at;

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
    *at = to < 0 ? 0 : to > last ? last : to;
}

/* K: the key side (who attends to this token) and back, on the same token. */
static void
key_side(struct app *a, int key)
{
    struct view *v = &a->view;

    (void)key;
    if (!v->key_side)
        v->cursor_col = v->cursor_row < a->pipe.st.nk ? v->cursor_row : a->pipe.st.nk - 1;
    else
        v->cursor_row = v->cursor_col < a->pipe.st.nq ? v->cursor_col : a->pipe.st.nq - 1;
    v->key_side = !v->key_side;
}

/* Whether token t (a model's leading space mark left out) starts with the letter c, any case. */
static bool
starts_with_letter(const char *t, int c)
{
    if (strncmp(t, "\xc2\xb7", 2) == 0)
        t += 2;
    return tolower((unsigned char)t[0]) == c;
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

/*
 * A letter no row takes goes to the next token that starts with it (after
 * the one shown, round to the start); anything else says what the keys are.
 */
static void
sentence_other(struct app *a, int key)
{
    const struct token_list *toks = a->view.key_side && a->pipe.cfg.cross ? &a->pipe.source_tokens
                                                                           : &a->pipe.tokens;
    int last;
    int *at = focus(a, &last);

    if (key < 128 && isalpha(key)) {
        for (int k = 1; k <= last + 1; k++) {
            const int t = (*at + k) % (last + 1);
            if (t < toks->count && starts_with_letter(toks->text[t], tolower(key))) {
                *at = t;
                return;
            }
        }
        app_say(a, "no token starts with '%c'", key);
        return;
    }
    app_say(a, "in the sentence view: Left and Right pick the token (Home End PgUp PgDn jump, a "
               "letter its next word), K who attends to it, Tab the head, g their mean, T or Esc "
               "goes back");
}

static bool
has_sentence(const struct app *a)
{
    return !a->pipe.qkv_given;
}

static const struct app_binding sentence[] = {
    { { APP_KEY_LEFT, APP_KEY_RIGHT }, NULL, "the token (a letter: the next word it starts)", NULL,
      0, pick_query },
    { { APP_KEY_HOME, APP_KEY_END, APP_KEY_PAGE_UP, APP_KEY_PAGE_DOWN },
      NULL,
      "the first / last query token, 20 tokens back / on",
      NULL,
      0,
      pick_query },
    { { 'K' }, NULL, "who attends to the token (the key side) / what it attends to", NULL, 0,
      key_side },
    { { APP_KEY_TAB, APP_KEY_BACKTAB }, NULL, "the next / previous head", NULL, 0, next_head },
    { { ',', '.' }, NULL, "the previous / next layer", NULL, 0, app_step_layer },
    { { 'g' }, NULL, "the mean of the layer's heads", NULL, 0, mean_of_heads },
    { { 'e' }, NULL, "edit the sentence", NULL, 0, app_edit_sentence },
    { { 'x', 'X' }, NULL, "export the head shown / every stage", NULL, 0, app_export_key },
    { { 'T', APP_KEY_ESCAPE }, NULL, "back", NULL, 0, app_close_screen },
    { { 'N', 'L' }, NULL, "the next tokens / the model map (with --model)", NULL, 0,
      app_screen_key },
    { { 'z' }, NULL, "presentation mode", NULL, 0, app_toggle_present },
    { { 'F' }, NULL, "a figure of the screen (SVG, PNG, PDF)", NULL, 0, app_figure_key },
    { { 'q' }, NULL, "quit", NULL, 0, app_quit },
    { { '?' }, NULL, "the help", NULL, 0, app_show_help },
};

const struct app_screen_keys app_sentence_keys = {
    SCREEN_SENTENCE, sentence, sizeof sentence / sizeof sentence[0], sentence_other, has_sentence,
};
