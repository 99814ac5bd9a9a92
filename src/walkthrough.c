/*
 * walkthrough.c: scripted lessons (see walkthrough.h and doc/walkthroughs.md).
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

#include "attnscope/fileio.h"
#include "attnscope/tokenizer.h"
#include "attnscope/utf8.h"
#include "render/view.h"
#include "walkthrough.h"

#ifndef PKGDATADIR
#define PKGDATADIR "/usr/local/share/attnscope"
#endif

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
    } else if (strcmp(name, "head") == 0) {
        char *end;
        long h = strtol(value, &end, 10);
        if (end == value || *end != '\0' || h < 0 || h > 255)
            return fail_at(ps, ps->line, "head '%s' is not a head number (0, 1, ...)", value);
        s->head = (int)h;
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
        else
            return fail_at(ps, ps->line, "view '%s' is not grid or mask", value);
    } else {
        return fail_at(ps, ps->line,
                       "'%s:' is not a step directive (options:, stage:, head:, cell:, view:); "
                       "a blank line starts the narration",
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
    if (w->path == NULL || w->dir == NULL || copy == NULL) {
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
    free(w->path);
    free(w->dir);
    free(w->title);
    free(w->options);
    memset(w, 0, sizeof *w);
}

/* -------------------------------------------------------------- options */

/*
 * Splits options as a shell would for plain words and "..." or '...'
 * quotes, into NUL-separated words in out; returns the word count or -1
 * for an unterminated quote.
 */
static int
split_words(const char *s, char *out, char **words, int max)
{
    int n = 0;

    while (*s) {
        char quote = 0;
        while (*s == ' ' || *s == '\t')
            s++;
        if (*s == '\0')
            break;
        if (n == max)
            return -2;
        words[n++] = out;
        while (*s && (quote || (*s != ' ' && *s != '\t'))) {
            if (quote && *s == quote) {
                quote = 0;
            } else if (!quote && (*s == '"' || *s == '\'')) {
                quote = *s;
            } else if (*s == '\\' && quote != '\'' && s[1] != '\0') {
                *out++ = *++s;
            } else {
                *out++ = *s;
            }
            s++;
        }
        if (quote)
            return -1;
        *out++ = '\0';
    }
    return n;
}

/* A path from the walkthrough, relative to its folder unless absolute. */
static char *
resolve_path(const struct walkthrough *w, const char *p)
{
    size_t len;
    char *out;

    if (p[0] == '/')
        return strdup(p);
    len = strlen(w->dir) + strlen(p) + 2;
    out = malloc(len);
    if (out != NULL)
        snprintf(out, len, "%s/%s", w->dir, p);
    return out;
}

enum attn_status
walkthrough_resources(const struct walkthrough *w, int k, struct walk_resources *res,
                      struct attn_error *err)
{
    const struct walk_step *s = &w->steps[k];
    const char *base = w->options ? w->options : "";
    const char *own = s->options ? s->options : "";
    const int line = s->options ? s->options_line : w->options_line ? w->options_line : s->line;
    char *argv[WALK_MAX_ARGS + 2];
    char msg[512];
    int argc = 1;
    int n;
    enum attn_status st;
    struct attn_error sub;

    memset(res, 0, sizeof *res);
    res->argv_text = malloc(strlen(base) + strlen(own) + 4);
    if (res->argv_text == NULL)
        return attn_fail(err, ATTN_ENOMEM, "out of memory");
    argv[0] = (char *)"attnscope";
    n = split_words(base, res->argv_text, argv + argc, WALK_MAX_ARGS);
    if (n >= 0) {
        char *after = n > 0 ? argv[argc + n - 1] + strlen(argv[argc + n - 1]) + 1 : res->argv_text;
        argc += n;
        n = split_words(own, after, argv + argc, WALK_MAX_ARGS - (argc - 1));
        if (n >= 0)
            argc += n;
    }
    if (n < 0) {
        walk_resources_destroy(res);
        return attn_fail(err, ATTN_EPARSE, "%s:%d: %s", w->path, line,
                         n == -1 ? "a quote is not closed" : "too many options");
    }
    argv[argc] = NULL;
    if (cli_parse(argc, argv, &res->opts, msg, sizeof msg) != 0) {
        walk_resources_destroy(res);
        return attn_fail(err, ATTN_EPARSE, "%s:%d: %s", w->path, line, msg);
    }
    if (res->opts.mode != CLI_TUI || res->opts.stage_count > 0 || res->opts.mono) {
        walk_resources_destroy(res);
        return attn_fail(err, ATTN_EPARSE,
                         "%s:%d: only options that configure attention belong in a walkthrough "
                         "(not --print, --export, --stage, --format, --heatmap or --mono)",
                         w->path, line);
    }
    {
        const char **paths[3] = { &res->opts.embeddings, &res->opts.qkv_dir, &res->opts.weights_dir };
        for (int i = 0; i < 3; i++) {
            if (*paths[i] == NULL)
                continue;
            res->paths[i] = resolve_path(w, *paths[i]);
            if (res->paths[i] == NULL) {
                walk_resources_destroy(res);
                return attn_fail(err, ATTN_ENOMEM, "out of memory");
            }
            *paths[i] = res->paths[i];
        }
    }
    attn_error_clear(&sub);
    {
        const struct inputs_paths where = { res->opts.embeddings, res->opts.qkv_dir,
                                            res->opts.weights_dir };
        st = inputs_load(&res->in, &res->opts.cfg, &where, NULL, &sub);
    }
    if (st != ATTN_OK) {
        walk_resources_destroy(res);
        return attn_fail(err, st, "%s:%d: %s", w->path, line, sub.msg);
    }
    return ATTN_OK;
}

void
walk_resources_destroy(struct walk_resources *res)
{
    inputs_destroy(&res->in);
    for (int i = 0; i < 3; i++)
        free(res->paths[i]);
    free(res->argv_text);
    memset(res, 0, sizeof *res);
}

struct pipeline_source
walk_resources_source(const struct walk_resources *res)
{
    return inputs_source(&res->in, res->opts.sentence);
}

/* ---------------------------------------------------------------- cells */

/* A row or column named by its label, or by a number from 0. */
static int
find_label(const char *name, const char *const *labels, const char *prefix, int n)
{
    char buf[32];
    char *end;
    long idx;

    for (int i = 0; i < n; i++) {
        if (labels != NULL) {
            if (strcmp(labels[i], name) == 0)
                return i;
        } else if (prefix != NULL) {
            snprintf(buf, sizeof buf, "%s%d", prefix, i);
            if (strcmp(buf, name) == 0)
                return i;
        }
    }
    idx = strtol(name, &end, 10);
    if (end != name && *end == '\0' && idx >= 0 && idx < n)
        return (int)idx;
    return -1;
}

int
walkthrough_cell(const struct walkthrough *w, int k, const struct pipeline *p, int *row, int *col,
                 struct attn_error *err)
{
    const struct walk_step *s = &w->steps[k];
    struct view v;
    struct heatmap_spec spec;
    int rc = 0;

    *row = 0;
    *col = 0;
    if (s->cell_row == NULL)
        return 0;
    view_init(&v);
    v.mask_matrix = s->mask_matrix;
    if (view_stage_spec(&v, p, s->stage, s->head, &spec) != 0) {
        view_destroy(&v);
        attn_fail(err, ATTN_ENOMEM, "out of memory");
        return -1;
    }
    *row = find_label(s->cell_row, spec.row_labels, NULL, spec.m->rows);
    *col = find_label(s->cell_col, spec.col_labels, spec.col_labels ? NULL : spec.col_prefix,
                      spec.m->cols);
    if (*row < 0 || *col < 0) {
        attn_fail(err, ATTN_EPARSE,
                  "%s:%d: the %s stage has no %s '%s' (it is %d x %d; name a token, or a number "
                  "from 0)",
                  w->path, s->cell_line, explain_stage_name(s->stage), *row < 0 ? "row" : "column",
                  *row < 0 ? s->cell_row : s->cell_col, spec.m->rows, spec.m->cols);
        rc = -1;
    }
    view_destroy(&v);
    return rc;
}

/* ---------------------------------------------------------- references */

struct reference {
    char name[64];
    char row[64];
    char col[64];
    bool has_expected;
    double expected;
    int decimals;
};

/* Parses the inside of {...}; returns 0 or -1. */
static int
parse_reference(const char *s, size_t len, struct reference *r)
{
    char buf[256];
    char *open1;
    char *close1;
    char *open2;
    char *close2;
    char *eq;

    if (len >= sizeof buf)
        return -1;
    memcpy(buf, s, len);
    buf[len] = '\0';
    memset(r, 0, sizeof *r);
    eq = strchr(buf, '=');
    if (eq != NULL) {
        char *end;
        char *dot = strchr(eq + 1, '.');
        *eq = '\0';
        errno = 0;
        r->expected = strtod(eq + 1, &end);
        if (end == eq + 1 || *end != '\0')
            return -1;
        r->has_expected = true;
        r->decimals = dot ? (int)strlen(dot + 1) : 0;
    } else {
        r->decimals = 4;
    }
    open1 = strchr(buf, '[');
    close1 = open1 ? strchr(open1, ']') : NULL;
    open2 = close1 ? close1 + 1 : NULL;
    close2 = open2 && *open2 == '[' ? strchr(open2, ']') : NULL;
    if (open1 == NULL || close1 == NULL || close2 == NULL || close2[1] != '\0')
        return -1;
    *open1 = *close1 = *close2 = '\0';
    if (strlen(buf) >= sizeof r->name || strlen(open1 + 1) >= sizeof r->row ||
        strlen(open2 + 1) >= sizeof r->col)
        return -1;
    strcpy(r->name, buf);
    strcpy(r->row, open1 + 1);
    strcpy(r->col, open2 + 1);
    return 0;
}

/* The value a reference names in p; returns 0, or -1 with a reason in why. */
static int
reference_value(const struct pipeline *p, const struct reference *r, float *value, char *why,
                size_t size)
{
    struct pipeline_selection sel;
    const struct matrix *m;
    struct pipeline_view v;
    int i;
    int j;

    if (pipeline_select(p, r->name, &sel) != 0) {
        snprintf(why, size, "'%s' is not a stage or parameter here", r->name);
        return -1;
    }
    if (sel.param != NULL) {
        m = &sel.param->m;
        i = find_label(r->row, NULL, "r", m->rows);
        j = find_label(r->col, NULL, "c", m->cols);
    } else {
        pipeline_stage_view(p, sel.stage, sel.head < 0 ? 0 : sel.head, &v);
        m = &v.m;
        i = find_label(r->row, v.row_labels, NULL, m->rows);
        j = find_label(r->col, v.col_labels, v.col_labels ? NULL : "d", m->cols);
    }
    if (i < 0 || j < 0) {
        snprintf(why, size, "%s has no %s '%s'", r->name, i < 0 ? "row" : "column",
                 i < 0 ? r->row : r->col);
        return -1;
    }
    *value = MAT_AT(m, i, j);
    return 0;
}

static int
line_of(const struct walk_step *s, const char *at)
{
    int line = s->narration_line;

    for (const char *c = s->narration; c < at; c++)
        line += *c == '\n';
    return line;
}

/*
 * Walks a narration: copies it into buf (when buf is not NULL) with
 * references replaced and paragraphs reflowed, and checks it when check is
 * set.  Returns the references seen, or -1 with err set.
 */
static int
walk_narration(const struct walkthrough *w, int k, const struct pipeline *p, char *buf,
               size_t size, bool check, struct attn_error *err)
{
    const struct walk_step *s = &w->steps[k];
    const char *c = s->narration;
    size_t out = 0;
    int refs = 0;
    bool quoted = false;

#define PUT(ch)                          \
    do {                                 \
        if (buf != NULL && out + 1 < size) \
            buf[out++] = (ch);           \
    } while (0)

    while (*c) {
        if (*c == '`') {
            quoted = !quoted;
            c++;
            continue;
        }
        if (*c == '\n') {
            /* A blank line separates paragraphs; single line breaks are spaces. */
            if (c[1] == '\n') {
                PUT('\n');
                while (*c == '\n')
                    c++;
            } else {
                PUT(' ');
                c++;
            }
            continue;
        }
        if (*c == '{' && !quoted) {
            const char *end = strchr(c, '}');
            struct reference r;
            float v;
            char why[256];
            char num[64];
            if (end == NULL || parse_reference(c + 1, (size_t)(end - c - 1), &r) != 0) {
                attn_fail(err, ATTN_EPARSE,
                          "%s:%d: '%.40s' is not a reference like {weights[journey][starts]=0.2333}",
                          w->path, line_of(s, c), c);
                return -1;
            }
            if (reference_value(p, &r, &v, why, sizeof why) != 0) {
                attn_fail(err, ATTN_EPARSE, "%s:%d: {%.*s}: %s", w->path, line_of(s, c),
                          (int)(end - c - 1), c + 1, why);
                return -1;
            }
            if (check && r.has_expected) {
                double tol = 0.5 * pow(10.0, -r.decimals) * (1.0 + 1e-6) + 1e-7;
                bool ok = isinf(r.expected) ? (double)v == r.expected
                                            : fabs((double)v - r.expected) <= tol;
                if (!ok) {
                    attn_fail(err, ATTN_EVALUE, "%s:%d: {%.*s}: attnscope computes %.*f", w->path,
                              line_of(s, c), (int)(end - c - 1), c + 1, r.decimals + 2, (double)v);
                    return -1;
                }
            }
            if (isinf(v))
                snprintf(num, sizeof num, "%s", v < 0 ? "-inf" : "inf");
            else
                snprintf(num, sizeof num, "%.*f", r.decimals, (double)v);
            for (const char *n = num; *n; n++)
                PUT(*n);
            refs++;
            c = end + 1;
            continue;
        }
        if (check && !quoted && isdigit((unsigned char)*c) &&
            (c == s->narration || !isalnum((unsigned char)c[-1]))) {
            /* A number with three or more decimals must come from the core or be quoted. */
            const char *d = c;
            while (isdigit((unsigned char)*d))
                d++;
            if (*d == '.' && isdigit((unsigned char)d[1]) && isdigit((unsigned char)d[2]) &&
                isdigit((unsigned char)d[3])) {
                const char *e = d + 1;
                while (isdigit((unsigned char)*e))
                    e++;
                attn_fail(err, ATTN_EVALUE,
                          "%s:%d: the number %.*s is not checked: write it as a reference "
                          "({stage[row][col]=%.*s}) or, for a number from elsewhere, in `quotes`",
                          w->path, line_of(s, c), (int)(e - c), c, (int)(e - c), c);
                return -1;
            }
        }
        PUT(*c);
        c++;
    }
#undef PUT
    if (buf != NULL && size > 0)
        buf[out < size ? out : size - 1] = '\0';
    return refs;
}

int
walkthrough_narrate(const struct walkthrough *w, int k, const struct pipeline *p, char *buf,
                    size_t size, struct attn_error *err)
{
    return walk_narration(w, k, p, buf, size, false, err) < 0 ? -1 : 0;
}

int
walkthrough_verify_step(const struct walkthrough *w, int k, const struct pipeline *p,
                        struct attn_error *err)
{
    return walk_narration(w, k, p, NULL, 0, true, err);
}

int
walkthrough_verify(const struct walkthrough *w, struct attn_error *err)
{
    int total = 0;

    for (int k = 0; k < w->count; k++) {
        const struct walk_step *s = &w->steps[k];
        struct walk_resources res;
        struct pipeline p;
        struct pipeline_source src;
        struct attn_error sub;
        int row;
        int col;
        int refs;

        if (walkthrough_resources(w, k, &res, err) != ATTN_OK)
            return -1;
        src = walk_resources_source(&res);
        if (pipeline_create(&p, &res.opts.cfg, &src, &sub) != ATTN_OK) {
            attn_fail(err, sub.status, "%s:%d: %s", w->path, s->line, sub.msg);
            walk_resources_destroy(&res);
            return -1;
        }
        refs = -1;
        if (!explain_stage_present(&p, s->stage))
            attn_fail(err, ATTN_EPARSE, "%s:%d: this configuration has no %s stage", w->path,
                      s->stage_line, explain_stage_name(s->stage));
        else if (s->head >= p.st.shape.heads)
            attn_fail(err, ATTN_EPARSE, "%s:%d: head %d does not exist (%d head%s)", w->path,
                      s->line, s->head, p.st.shape.heads, p.st.shape.heads == 1 ? "" : "s");
        else if (walkthrough_cell(w, k, &p, &row, &col, err) == 0)
            refs = walkthrough_verify_step(w, k, &p, err);
        pipeline_destroy(&p);
        walk_resources_destroy(&res);
        if (refs < 0)
            return -1;
        total += refs;
    }
    return total;
}

/* --------------------------------------------------------------- handout */

static void
print_wrapped(FILE *out, const char *text, int width)
{
    const char *para = text;

    while (*para) {
        const char *end = strchr(para, '\n');
        size_t len = end ? (size_t)(end - para) : strlen(para);
        size_t col = 0;
        const char *word = para;
        while (word < para + len) {
            const char *stop = word;
            size_t wl;
            while (stop < para + len && *stop != ' ')
                stop++;
            wl = (size_t)(stop - word);
            if (col > 0 && col + 1 + wl > (size_t)width) {
                fputc('\n', out);
                col = 0;
            } else if (col > 0) {
                fputc(' ', out);
                col++;
            }
            fwrite(word, 1, wl, out);
            col += wl;
            word = stop;
            while (word < para + len && *word == ' ')
                word++;
        }
        fputs("\n\n", out);
        para += len + (end != NULL);
    }
}

int
walkthrough_print(FILE *out, const struct walkthrough *w, const struct print_options *po,
                  int width, struct attn_error *err)
{
    static char narration[8192];

    fprintf(out, "%s\n", w->title);
    for (size_t i = 0; i < strlen(w->title); i++)
        fputc('=', out);
    fputs("\n\n", out);
    for (int k = 0; k < w->count; k++) {
        const struct walk_step *s = &w->steps[k];
        struct walk_resources res;
        struct pipeline p;
        struct pipeline_source src;
        struct attn_error sub;
        enum pipeline_stage ps = explain_pipeline_stage(s->stage, s->mask_matrix);

        if (walkthrough_resources(w, k, &res, err) != ATTN_OK)
            return -1;
        src = walk_resources_source(&res);
        if (pipeline_create(&p, &res.opts.cfg, &src, &sub) != ATTN_OK) {
            attn_fail(err, sub.status, "%s:%d: %s", w->path, s->line, sub.msg);
            walk_resources_destroy(&res);
            return -1;
        }
        if (walkthrough_narrate(w, k, &p, narration, sizeof narration, err) != 0) {
            pipeline_destroy(&p);
            walk_resources_destroy(&res);
            return -1;
        }
        fprintf(out, "Step %d of %d: %s\n\n", k + 1, w->count, s->title);
        print_wrapped(out, narration, width);
        if (s->stage == VIEW_QKV) {
            print_stage(out, &p, STAGE_QUERIES, 0, po);
            print_stage(out, &p, STAGE_KEYS, 0, po);
            print_stage(out, &p, STAGE_VALUES, 0, po);
        } else {
            print_stage(out, &p, ps, s->head, po);
        }
        pipeline_destroy(&p);
        walk_resources_destroy(&res);
    }
    return 0;
}

/* ---------------------------------------------------------------- finding */

static bool
is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int
walkthrough_dirs(const char **dirs, int max)
{
    static char beside_exe[4096];
    const char *candidates[4];
    int n = 0;
    ssize_t len;

    /* Beside the program: a build in a clone finds its samples without installing. */
    len = readlink("/proc/self/exe", beside_exe, sizeof beside_exe - 32);
    if (len > 0) {
        char *slash;
        beside_exe[len] = '\0';
        slash = strrchr(beside_exe, '/');
        if (slash != NULL)
            strcpy(slash, "/samples/walkthroughs");
    } else {
        beside_exe[0] = '\0';
    }
    candidates[0] = getenv("ATTNSCOPE_WALKTHROUGHS");
    candidates[1] = PKGDATADIR "/samples/walkthroughs";
    candidates[2] = beside_exe;
    candidates[3] = "samples/walkthroughs";
    for (int i = 0; i < 4 && n < max; i++)
        if (candidates[i] != NULL && candidates[i][0] != '\0' && is_dir(candidates[i]))
            dirs[n++] = candidates[i];
    return n;
}

int
walkthrough_find(const char *name, char *buf, size_t size)
{
    const char *dirs[4];
    int n;

    if (access(name, R_OK) == 0 || strchr(name, '/') != NULL) {
        snprintf(buf, size, "%s", name);
        return 0;
    }
    n = walkthrough_dirs(dirs, 4);
    for (int i = 0; i < n; i++) {
        snprintf(buf, size, "%s/%s", dirs[i], name);
        if (access(buf, R_OK) == 0)
            return 0;
        snprintf(buf, size, "%s/%s.walk", dirs[i], name);
        if (access(buf, R_OK) == 0)
            return 0;
    }
    snprintf(buf, size, "%s", name);
    return -1;
}
