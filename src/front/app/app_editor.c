/* app_editor.c: the sentence editor of the view (see app.h). */
#include "config.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/text/tokenizer.h"
#include "attnscope/base/utf8.h"
#include "front/app/app_internal.h"

/* ---------------------------------------------------------------- editor */

static size_t
next_char(const char *s, size_t pos)
{
    uint32_t cp;

    if (s[pos] == '\0')
        return pos;
    return pos + (size_t)utf8_decode(s + pos, &cp);
}

/* Room in the editor for need bytes and the NUL; -1 (with a message) past the tokenizer's limit. */
static int
edit_reserve(struct app *a, size_t need)
{
    size_t cap = a->edit_cap ? a->edit_cap : 256;
    char *bigger;

    if (need > TOKENIZER_MAX_BYTES) {
        app_say(a, "the sentence is as long as attnscope takes (%u bytes)", TOKENIZER_MAX_BYTES);
        a->view.message_is_error = true;
        return -1;
    }
    if (need < a->edit_cap)
        return 0;
    while (cap <= need)
        cap *= 2;
    bigger = realloc(a->edit, cap);
    if (bigger == NULL) {
        app_say(a, "out of memory for a sentence of %zu bytes", need);
        a->view.message_is_error = true;
        return -1;
    }
    a->edit = bigger;
    a->edit_cap = cap;
    return 0;
}

int
app_edit_start(struct app *a, const char *text)
{
    size_t len = strlen(text);

    if (edit_reserve(a, len) != 0)
        return -1;
    memcpy(a->edit, text, len + 1);
    a->edit_cursor = len;
    return 0;
}

static void
edit_delete(struct app *a, size_t from, size_t to)
{
    size_t len = strlen(a->edit);

    memmove(a->edit + from, a->edit + to, len - to + 1);
    a->edit_cursor = from;
}

void
app_edit_key(struct app *a, int key)
{
    struct view *v = &a->view;
    size_t len = strlen(a->edit);

    switch (key) {
    case APP_KEY_ENTER:
        /*
         * A text that cannot be used (too long, a word the vocabulary
         * lacks) keeps the editor open with what was typed, and the
         * message says why: nothing typed is lost.
         */
        v->editing = false;
        if (v->editing_knob) {
            if (app_set_knob(a, a->edit) != 0)
                v->editing = true;
            return;
        }
        if (v->editing_source) {
            if (app_rebuild_with(a, &a->cfg, a->sentence, a->edit) != 0)
                v->editing = true;
            else if (v->message == NULL)
                app_say(a, "the source has %d tokens", a->pipe.source_tokens.count);
            return;
        }
        if (app_rebuild(a, &a->cfg, a->edit) != 0)
            v->editing = true;
        else if (v->message == NULL)
            app_say(a, "%d tokens", a->pipe.tokens.count);
        return;
    case APP_KEY_ESCAPE:
        v->editing = false;
        app_say(a, "edit cancelled");
        return;
    case APP_KEY_LEFT:
        a->edit_cursor = utf8_prev(a->edit, a->edit_cursor);
        return;
    case APP_KEY_RIGHT:
        a->edit_cursor = next_char(a->edit, a->edit_cursor);
        return;
    case APP_KEY_UP:
    case APP_KEY_DOWN:
        /* A long text's rows (the field shows several). */
        a->edit_cursor = view_edit_move_row(v, a->edit, a->edit_cursor, key == APP_KEY_UP ? -1 : 1);
        return;
    case APP_KEY_HOME:
    case APP_KEY_CTRL('a'):
        a->edit_cursor = 0;
        return;
    case APP_KEY_END:
    case APP_KEY_CTRL('e'):
        a->edit_cursor = len;
        return;
    case APP_KEY_BACKSPACE:
        if (a->edit_cursor > 0)
            edit_delete(a, utf8_prev(a->edit, a->edit_cursor), a->edit_cursor);
        return;
    case APP_KEY_DELETE:
        if (a->edit_cursor < len)
            edit_delete(a, a->edit_cursor, next_char(a->edit, a->edit_cursor));
        return;
    case APP_KEY_CTRL('u'):
        edit_delete(a, 0, a->edit_cursor);
        return;
    case APP_KEY_CTRL('w'): {
        size_t from = a->edit_cursor;
        while (from > 0 && a->edit[from - 1] == ' ')
            from--;
        while (from > 0 && a->edit[from - 1] != ' ')
            from--;
        edit_delete(a, from, a->edit_cursor);
        return;
    }
    default:
        break;
    }
    /* Printable characters only: no controls (C0, DEL, C1, bidi) and no UTF-16 surrogates. */
    if (key >= 0x20 && key < 0x110000 && !(key >= 0xD800 && key <= 0xDFFF)) {
        char buf[8];
        int n = utf8_encode((uint32_t)key, buf);
        if (utf8_control_length((const unsigned char *)buf, (size_t)n) > 0)
            return;
        if (edit_reserve(a, len + (size_t)n) != 0)
            return;
        memmove(a->edit + a->edit_cursor + n, a->edit + a->edit_cursor, len - a->edit_cursor + 1);
        memcpy(a->edit + a->edit_cursor, buf, (size_t)n);
        a->edit_cursor += (size_t)n;
    }
}

/* ----------------------------------------------------------------- pastes */

/*
 * Pasted bytes as sentence text: line ends and tabs become one space, and
 * control characters and bytes that are not UTF-8 are dropped.  Returns
 * a new string (NULL: out of memory).
 */
static char *
paste_text(const char *text, size_t len)
{
    const unsigned char *s = (const unsigned char *)text;
    char *out = malloc(len + 1);
    size_t used = 0;

    if (out == NULL)
        return NULL;
    for (size_t i = 0; i < len;) {
        int n = utf8_length(s + i, len - i);
        if (s[i] == '\n' || s[i] == '\r' || s[i] == '\t') {
            if (used > 0 && out[used - 1] != ' ')
                out[used++] = ' ';
            i++;
        } else if (n == 0) {
            i++;
        } else if (utf8_control_length(s + i, len - i) > 0) {
            i += (size_t)utf8_control_length(s + i, len - i);
        } else {
            memcpy(out + used, s + i, (size_t)n);
            used += (size_t)n;
            i += (size_t)n;
        }
    }
    out[used] = '\0';
    return out;
}

void
app_paste(struct app *a, const char *text, size_t len)
{
    struct view *v = &a->view;
    char *clean;
    size_t add;
    size_t have;

    if (v->frame.too_small)
        return;
    if (a->src.qkv != NULL) {
        app_complain(a, "Q, K and V are given directly: there is no sentence to paste into");
        return;
    }
    clean = paste_text(text, len);
    if (clean == NULL) {
        app_complain(a, "out of memory for the paste");
        return;
    }
    /* Outside the editor a paste is a new sentence to look at before Enter applies it. */
    if (!v->editing) {
        v->help = false;
        v->picker = false;
        if (app_edit_start(a, "") != 0) {
            free(clean);
            return;
        }
        v->editing = true;
        v->editing_source = false;
        v->editing_knob = false;
    }
    add = strlen(clean);
    have = strlen(a->edit);
    if (edit_reserve(a, have + add) != 0) {
        free(clean);
        return;
    }
    memmove(a->edit + a->edit_cursor + add, a->edit + a->edit_cursor, have - a->edit_cursor + 1);
    memcpy(a->edit + a->edit_cursor, clean, add);
    a->edit_cursor += add;
    free(clean);
    app_say(a, "pasted %zu bytes: Enter applies the sentence, Esc cancels", add);
}
