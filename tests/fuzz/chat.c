/*
 * chat.c: fuzzes the chat templates a model's files carry: the input is a
 * template's text, a NUL byte and the user's message.  Whatever the text,
 * chat_detect either names a family or refuses naming where the template
 * came from; a family's turn holds the message (trimmed when the template
 * trims it) and nothing of the template's own text is run.
 */
#include "config.h"

#include <stdlib.h>

#include "attnscope/text/chat.h"
#include "fuzz.h"

/*
 * What Python's str.strip() strips (Jinja's trim), written out here apart
 * from chat.c's: the bytes of the white-space character at s (n bytes), or 0.
 */
static const char *const python_spaces[] = {
    " ", "\t", "\n", "\v", "\f", "\r", "\x1c", "\x1d", "\x1e", "\x1f", "\xc2\x85", "\xc2\xa0",
    "\xe1\x9a\x80", "\xe2\x80\x80", "\xe2\x80\x81", "\xe2\x80\x82", "\xe2\x80\x83",
    "\xe2\x80\x84", "\xe2\x80\x85", "\xe2\x80\x86", "\xe2\x80\x87", "\xe2\x80\x88",
    "\xe2\x80\x89", "\xe2\x80\x8a", "\xe2\x80\xa8", "\xe2\x80\xa9", "\xe2\x80\xaf",
    "\xe2\x81\x9f", "\xe3\x80\x80",
};

static int
python_space(const char *s, size_t n)
{
    for (size_t i = 0; i < sizeof python_spaces / sizeof python_spaces[0]; i++)
        if (strlen(python_spaces[i]) <= n && memcmp(s, python_spaces[i], strlen(python_spaces[i])) == 0)
            return (int)strlen(python_spaces[i]);
    return 0;
}

/* The same for the character ending s + n. */
static int
python_space_before(const char *s, size_t n)
{
    for (size_t i = 0; i < sizeof python_spaces / sizeof python_spaces[0]; i++) {
        const size_t l = strlen(python_spaces[i]);
        if (l <= n && memcmp(s + n - l, python_spaces[i], l) == 0 &&
            (l > 1 || ((unsigned char)s[n - 1] & 0x80) == 0))
            return (int)l;
    }
    return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nul = memchr(data, 0, size);
    const size_t tlen = nul != NULL ? (size_t)(nul - data) : size;
    char *tmpl = malloc(tlen + 1);
    char *user = malloc(size - tlen + 1);
    struct chat_template t;
    struct attn_error err;

    if (tmpl == NULL || user == NULL) {
        free(tmpl);
        free(user);
        return 0;
    }
    memcpy(tmpl, data, tlen);
    tmpl[tlen] = '\0';
    if (nul != NULL)
        memcpy(user, nul + 1, size - tlen - 1);
    user[nul != NULL ? size - tlen - 1 : 0] = '\0';
    memset(&err, 0, sizeof err);
    if (chat_detect(tmpl, "fuzz.jinja", &t, &err) == 0) {
        char *turn = chat_render(&t, "<s>", "2 Dec 2026", user);
        size_t from = 0, to = strlen(user);
        int k;
        if (turn == NULL)
            abort();
        while (t.trim && from < to && (k = python_space(user + from, to - from)) > 0)
            from += (size_t)k;
        while (t.trim && to > from && (k = python_space_before(user + from, to - from)) > 0)
            to -= (size_t)k;
        /* (the message is in the turn as given: a search of its bytes, NUL-free by construction) */
        if (to > from) {
            char *want = strndup(user + from, to - from);
            if (want == NULL || (strlen(want) == to - from && strstr(turn, want) == NULL))
                abort();
            free(want);
        }
        free(turn);
    } else if (err.msg[0] == '\0' || strstr(err.msg, "fuzz.jinja") == NULL) {
        abort();
    }
    free(tmpl);
    free(user);
    return 0;
}
