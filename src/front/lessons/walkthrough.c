/*
 * walkthrough.c: the walkthrough format: parsing and loading lessons (see
 * walkthrough.h and doc/walkthroughs.md).
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attnscope/files/fileio.h"
#include "attnscope/families/model/headmap.h"
#include "attnscope/text/tokenizer.h"
#include "attnscope/base/utf8.h"
#include "render/view.h"
#include "front/lessons/walkthrough.h"

/* ------------------------------------------------------------------ parse */

struct parser {
    struct walkthrough *w;
    struct attn_error *err;
    int line;
};

static enum attn_status
fail_at(struct parser *ps, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static enum attn_status
fail_at(struct parser *ps, int line, const char *fmt, ...)
{
    char msg[ATTN_ERROR_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return attn_fail(ps->err, ATTN_EPARSE, "%s:%d: %s", ps->w->path, line, msg);
}

static char *
trim(char *s)
{
    size_t len;

    while (*s == ' ' || *s == '\t')
        s++;
    len = strlen(s);
    while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\t' || s[len - 1] == '\r'))
        s[--len] = '\0';
    return s;
}

/* "name: value" -> name (lower-case letters) and value; returns 0, or -1 if not of that form. */
static int
directive(char *line, char **name, char **value)
{
    char *colon = strchr(line, ':');

    if (colon == NULL || colon == line)
        return -1;
    for (char *c = line; c < colon; c++)
        if (!(*c >= 'a' && *c <= 'z'))
            return -1;
    *colon = '\0';
    *name = line;
    *value = trim(colon + 1);
    return 0;
}

static char *
dup_or_fail(struct parser *ps, const char *s, int *failed)
{
    char *d = strdup(s);

    if (d == NULL) {
        attn_fail(ps->err, ATTN_ENOMEM, "out of memory");
        *failed = 1;
    }
    return d;
}

static struct walk_step *
new_step(struct parser *ps, const char *title)
{
    struct walkthrough *w = ps->w;
    struct walk_step *steps = realloc(w->steps, (size_t)(w->count + 1) * sizeof *steps);
    struct walk_step *s;

    if (steps == NULL)
        return NULL;
    w->steps = steps;
    s = &w->steps[w->count++];
    memset(s, 0, sizeof *s);
    s->title = strdup(title);
    s->line = ps->line;
    s->stage = VIEW_STAGE_COUNT;
    s->layer = -1;
    return s->title != NULL ? s : NULL;
}

static enum attn_status
append_narration(struct walk_step *s, const char *text)
{
    size_t old = s->narration ? strlen(s->narration) : 0;
    size_t add = strlen(text);
    char *bigger = realloc(s->narration, old + add + 2);

    if (bigger == NULL)
        return ATTN_ENOMEM;
    s->narration = bigger;
    memcpy(s->narration + old, text, add);
    s->narration[old + add] = '\n';
    s->narration[old + add + 1] = '\0';
    return ATTN_OK;
}

static enum attn_status
step_directive(struct parser *ps, struct walk_step *s, const char *name, char *value)
{
    int failed = 0;
    int first = strcmp(name, "options") == 0 ? s->options_line
                : strcmp(name, "stage") == 0 ? s->stage_line
                : strcmp(name, "cell") == 0  ? s->cell_line
                : strcmp(name, "layer") == 0 ? s->layer_line
                : strcmp(name, "side") == 0  ? s->side_line
                                             : 0;

    if (first != 0)
        return fail_at(ps, ps->line, "a second '%s:' in this step (the first is on line %d)", name,
                       first);
    if (strcmp(name, "options") == 0) {
        s->options = dup_or_fail(ps, value, &failed);
        s->options_line = ps->line;
    } else if (strcmp(name, "stage") == 0) {
        if (explain_stage_parse(value, &s->stage) != 0) {
            char names[256];
            return fail_at(ps, ps->line, "stage '%s' does not exist; stages are %s", value,
                           explain_stage_names(", ", names, sizeof names));
        }
        s->stage_line = ps->line;
    } else if (strcmp(name, "head") == 0 || strcmp(name, "layer") == 0) {
        const bool head = name[0] == 'h';
        char *end;
        long n = strtol(value, &end, 10);
        if (end == value || *end != '\0' || n < 0 || n > (head ? 255 : 100000))
            return fail_at(ps, ps->line, "%s '%s' is not a %s number (0, 1, ...)", name, value, name);
        if (head) {
            s->head = (int)n;
        } else {
            s->layer = (int)n;
            s->layer_line = ps->line;
        }
    } else if (strcmp(name, "side") == 0) {
        int k = 0;
        while (k < COMPARE_SIDES && strcmp(value, compare_side_name((enum compare_side)k)) != 0)
            k++;
        if (k == COMPARE_SIDES)
            return fail_at(ps, ps->line, "side '%s' is not first, second or difference", value);
        s->side = k;
        s->side_line = ps->line;
    } else if (strcmp(name, "cell") == 0) {
        char *col = value + strcspn(value, " \t");
        if (*col == '\0')
            return fail_at(ps, ps->line, "cell '%s' needs a row and a column: cell: journey starts",
                           value);
        *col++ = '\0';
        col = trim(col);
        if (*col == '\0' || strpbrk(col, " \t") != NULL)
            return fail_at(ps, ps->line, "cell needs exactly a row and a column");
        s->cell_row = dup_or_fail(ps, value, &failed);
        s->cell_col = dup_or_fail(ps, col, &failed);
        s->cell_line = ps->line;
    } else if (strcmp(name, "view") == 0) {
        if (strcmp(value, "grid") == 0)
            s->grid = true;
        else if (strcmp(value, "mask") == 0)
            s->mask_matrix = true;
        else if (strcmp(value, "params") == 0)
            s->param_matrix = true;
        else if (strcmp(value, "sentence") == 0)
            s->screen = WALK_SCREEN_SENTENCE;
        else if (strcmp(value, "next") == 0)
            s->screen = WALK_SCREEN_NEXT;
        else if (strncmp(value, "map", 3) == 0 && (value[3] == '\0' || value[3] == ' ')) {
            const char *m = trim(value + 3);
            const bool heatmaps = strcmp(m, "heatmaps") == 0; /* every head's weights */
            enum head_measure measure = MEASURE_ENTROPY;
            if (!heatmaps && m[0] != '\0' && head_measure_parse(m, &measure) != 0)
                return fail_at(ps, ps->line,
                               "view: map '%s': the measures are entropy, previous, first, self, "
                               "induction and sink, or heatmaps",
                               m);
            s->screen = WALK_SCREEN_MAP;
            s->measure = heatmaps ? VIEW_MAP_HEATMAPS : (int)measure;
        } else
            return fail_at(ps, ps->line,
                           "view '%s' is not grid, mask, params, sentence, map [MEASURE] or next",
                           value);
    } else {
        return fail_at(ps, ps->line,
                       "'%s:' is not a step directive (options:, stage:, layer:, head:, cell:, view:, "
                       "side:); a blank line starts the narration",
                       name);
    }
    return failed ? ATTN_ENOMEM : ATTN_OK;
}

/* Drops trailing blank lines of a narration. */
static void
trim_narration(struct walk_step *s)
{
    size_t len;

    if (s->narration == NULL)
        return;
    len = strlen(s->narration);
    while (len > 0 && (s->narration[len - 1] == '\n' || s->narration[len - 1] == ' '))
        s->narration[--len] = '\0';
}

static enum attn_status
parse(struct parser *ps, char *text)
{
    enum { HEADER, DIRECTIVES, NARRATION } state = HEADER;
    struct walkthrough *w = ps->w;
    struct walk_step *step = NULL;
    char *next = text;
    enum attn_status st;
    int failed = 0;

    for (ps->line = 1; next != NULL; ps->line++) {
        char *line = next;
        char *nl = strchr(line, '\n');
        char *name;
        char *value;
        char *t;
        next = nl ? nl + 1 : NULL;
        if (nl != NULL)
            *nl = '\0';
        if (nl == NULL && *line == '\0')
            break;
        if (line[0] != '\0' && line[strlen(line) - 1] == '\r')
            line[strlen(line) - 1] = '\0';
        t = trim(line);
        if (t[0] == '#')
            continue;
        if (strncmp(t, "step:", 5) == 0) {
            if (step != NULL)
                trim_narration(step);
            step = new_step(ps, trim(t + 5));
            if (step == NULL)
                return attn_fail(ps->err, ATTN_ENOMEM, "out of memory");
            if (step->title[0] == '\0')
                return fail_at(ps, ps->line, "a step needs a title: step: The query journey");
            state = DIRECTIVES;
            continue;
        }
        if (state == NARRATION) {
            if (append_narration(step, line) != ATTN_OK)
                return attn_fail(ps->err, ATTN_ENOMEM, "out of memory");
            continue;
        }
        if (t[0] == '\0') {
            if (state == DIRECTIVES) {
                state = NARRATION;
                step->narration_line = ps->line + 1;
            }
            continue;
        }
        if (directive(t, &name, &value) != 0) {
            if (state == HEADER)
                return fail_at(ps, ps->line,
                               "'%.40s' is not a directive: the file starts with title:, options: "
                               "and then step: lines",
                               t);
            return fail_at(ps, ps->line,
                           "'%.40s' is not a directive: leave a blank line before the narration", t);
        }
        if (state == HEADER) {
            if (strcmp(name, "title") == 0) {
                free(w->title);
                w->title = dup_or_fail(ps, value, &failed);
            } else if (strcmp(name, "options") == 0) {
                free(w->options);
                w->options = dup_or_fail(ps, value, &failed);
                w->options_line = ps->line;
            } else {
                return fail_at(ps, ps->line,
                               "'%s:' is not a header directive (title:, options:, step:)", name);
            }
            if (failed)
                return ATTN_ENOMEM;
            continue;
        }
        st = step_directive(ps, step, name, value);
        if (st != ATTN_OK)
            return st;
    }
    if (step != NULL)
        trim_narration(step);
    if (w->count == 0)
        return attn_fail(ps->err, ATTN_EPARSE, "%s: no steps (a step starts with 'step: TITLE')",
                         w->path);
    for (int k = 0; k < w->count; k++) {
        struct walk_step *s = &w->steps[k];
        if (s->stage == VIEW_STAGE_COUNT)
            return fail_at(ps, s->line, "step '%s' has no stage: line", s->title);
        if (s->narration == NULL || s->narration[0] == '\0')
            return fail_at(ps, s->line, "step '%s' has no narration (after a blank line)", s->title);
    }
    if (w->title == NULL) {
        w->title = strdup(w->steps[0].title);
        if (w->title == NULL)
            return attn_fail(ps->err, ATTN_ENOMEM, "out of memory");
    }
    return ATTN_OK;
}

enum attn_status
walkthrough_parse(struct walkthrough *w, const char *path, const char *text, size_t len,
                  struct attn_error *err)
{
    struct parser ps;
    char *copy;
    enum attn_status st;
    const char *slash;
    const unsigned char *bytes = (const unsigned char *)text;
    size_t shown;

    memset(w, 0, sizeof *w);
    if (len > WALK_MAX_BYTES)
        return attn_fail(err, ATTN_ELIMIT, "%s: longer than attnscope reads (%u bytes)", path,
                         WALK_MAX_BYTES);
    /* A byte order mark, as some Windows editors write, is not part of the first line. */
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) {
        text += 3;
        len -= 3;
        bytes += 3;
    }
    /* The narration is shown as text: UTF-8, with no control characters but line ends and tabs. */
    shown = utf8_text_span(bytes, len, "\n\r\t");
    if (shown < len) {
        unsigned char c = bytes[shown];
        int line = 1;
        for (size_t i = 0; i < shown; i++)
            line += bytes[i] == '\n';
        if (c == '\0' || utf8_length(bytes + shown, len - shown) == 0)
            return attn_fail(err, ATTN_EPARSE, "%s:%d: not UTF-8 text (byte 0x%02X)", path, line, c);
        return attn_fail(err, ATTN_EPARSE, "%s:%d: a control character (byte 0x%02X)", path, line,
                         c);
    }
    w->path = strdup(path);
    slash = strrchr(path, '/');
    w->dir = slash ? strndup(path, (size_t)(slash - path)) : strdup(".");
    copy = strndup(text, len);
    w->models = walk_models_new();
    if (w->path == NULL || w->dir == NULL || copy == NULL || w->models == NULL) {
        free(copy);
        walkthrough_destroy(w);
        return attn_fail(err, ATTN_ENOMEM, "out of memory");
    }
    ps.w = w;
    ps.err = err;
    ps.line = 0;
    st = parse(&ps, copy);
    free(copy);
    if (st != ATTN_OK)
        walkthrough_destroy(w);
    return st;
}

enum attn_status
walkthrough_load(struct walkthrough *w, const char *path, struct attn_error *err)
{
    char *text;
    size_t len;
    enum attn_status st;

    memset(w, 0, sizeof *w);
    st = fileio_read_all(path, WALK_MAX_BYTES, &text, &len, err);
    if (st != ATTN_OK)
        return st;
    st = walkthrough_parse(w, path, text, len, err);
    free(text);
    return st;
}

void
walkthrough_destroy(struct walkthrough *w)
{
    for (int k = 0; k < w->count; k++) {
        struct walk_step *s = &w->steps[k];
        free(s->title);
        free(s->options);
        free(s->cell_row);
        free(s->cell_col);
        free(s->narration);
    }
    free(w->steps);
    walk_models_close(w->models);
    free(w->path);
    free(w->dir);
    free(w->title);
    free(w->options);
    memset(w, 0, sizeof *w);
}
