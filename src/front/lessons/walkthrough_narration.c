/*
 * walkthrough_narration.c: a step's narration with its {references}
 * rendered from the core, and the check that every quoted number is the
 * number the core computes (see walkthrough.h and doc/walkthroughs.md).
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

#include "attnscope/families/model/family_model.h"
#include "attnscope/files/fileio.h"
#include "attnscope/families/model/generate.h"
#include "attnscope/families/model/headmap.h"
#include "attnscope/text/tokenizer.h"
#include "attnscope/base/utf8.h"
#include "render/view.h"
#include "front/lessons/walkthrough.h"

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
    /* A time measured as the lesson plays is shown to a hundredth of a millisecond. */
    if (!r->has_expected && strcmp(r->col, "ms") == 0)
        r->decimals = 2;
    return 0;
}

/* {map.previous[L][H]}: the model map's measure of head H of layer L (headmap.h). */
static int
map_value(const struct pipeline *p, const struct reference *r, float *value, char *why, size_t size)
{
    const int heads = head_map_heads(p);
    enum head_measure m;
    const bool known = head_measure_parse(r->name + 4, &m) == 0;
    float *all;
    int l;
    int h;

    if (!known || pipeline_decoder(p) == NULL) {
        snprintf(why, size, "%s", !known ? "the map's measures are entropy, previous, first, self, "
                                           "induction, sink, reach and memory"
                                         : "the model map needs a trained model (--model)");
        return -1;
    }
    l = walkthrough_find_label(r->row, NULL, NULL, p->layers);
    h = walkthrough_find_label(r->col, NULL, "h", heads);
    if (l < 0 || h < 0) {
        snprintf(why, size, "the map has layers 0 to %d and heads 0 to %d", p->layers - 1,
                 heads - 1);
        return -1;
    }
    all = malloc((size_t)p->layers * (size_t)heads * sizeof *all);
    if (all == NULL || head_measures(p, m, all) != 0) {
        free(all);
        snprintf(why, size, "out of memory");
        return -1;
    }
    *value = all[l * heads + h];
    free(all);
    return 0;
}

/* {next[token][k]}: the probability of the k-th likeliest token (from 0) after a position. */
static int
next_value(const struct pipeline *p, const struct reference *r, float *value, char *why,
           size_t size)
{
    const struct family_model_state *m = pipeline_decoder(p);
    const int top = m->run.top;
    int i = walkthrough_find_label(r->row, (const char *const *)p->query_labels, NULL, m->run.n);
    int k = walkthrough_find_label(r->col, NULL, NULL, top);

    if (i < 0 || k < 0) {
        snprintf(why, size, "next has a row per token and %d likeliest tokens (0 to %d; --top)",
                 top, top - 1);
        return -1;
    }
    if (family_model_next_tokens(p) != 0) {
        snprintf(why, size, "the next tokens could not be made (out of memory)");
        return -1;
    }
    *value = m->run.top_probs[(size_t)i * (size_t)top + (size_t)k];
    return 0;
}

/*
 * {written[K][what]}: the K-th token the step's model wrote (from 1; last:
 * the last), what being id, p (its probability at temperature 1), drawn
 * (after the cuts and the temperature), rank, kept (the tokens the cuts
 * kept), q and ratio (its Exp(1) draw and p / q), position, rows (the rows
 * its forward computed: 1 from the cache, the window when it slid), or ms (the
 * forward that took it in, measured: quote it without a value).
 */
static int
written_value(const struct pipeline *p, const struct reference *r, float *value, char *why,
              size_t size)
{
    const struct family_model_state *m = pipeline_decoder(p);
    const struct generation *g = m != NULL ? m->writing : NULL;
    const struct generate_step *s;
    char *end;
    long k;

    if (g == NULL || g->written == 0) {
        snprintf(why, size, "nothing was written here (--generate N in the step's options)");
        return -1;
    }
    k = strcmp(r->row, "last") == 0 ? g->written : strtol(r->row, &end, 10);
    if ((strcmp(r->row, "last") != 0 && *end != '\0') || k < 1 || k > g->written) {
        snprintf(why, size, "the model wrote tokens 1 to %d here", g->written);
        return -1;
    }
    s = &g->steps[k - 1];
    if (strcmp(r->col, "ms") == 0 && r->has_expected) {
        snprintf(why, size, "a time is measured as the lesson plays: quote it without a value");
        return -1;
    }
    if (strcmp(r->col, "id") == 0)
        *value = (float)s->choice.id;
    else if (strcmp(r->col, "p") == 0)
        *value = s->choice.prob_plain;
    else if (strcmp(r->col, "drawn") == 0)
        *value = s->choice.prob;
    else if (strcmp(r->col, "rank") == 0)
        *value = (float)s->choice.rank;
    else if (strcmp(r->col, "kept") == 0)
        *value = (float)s->choice.kept;
    else if (strcmp(r->col, "q") == 0)
        *value = s->choice.q;
    else if (strcmp(r->col, "ratio") == 0)
        *value = s->choice.ratio;
    else if (strcmp(r->col, "position") == 0)
        *value = (float)s->position;
    else if (strcmp(r->col, "rows") == 0)
        *value = (float)s->computed;
    else if (strcmp(r->col, "ms") == 0)
        *value = (float)(s->seconds * 1e3);
    else {
        snprintf(why, size, "a written token has id, p, drawn, rank, kept, q, ratio, position, "
                            "rows and ms");
        return -1;
    }
    return 0;
}

/*
 * {cache[layer|all][kib]}: the KV cache of the text shown, a layer's or
 * every layer's, in KiB; {cache[token][ms]} and {cache[uncached][ms]}: the
 * last written token's forward and the whole window's without the cache,
 * measured (quote them without a value).
 */
static int
cache_value(const struct pipeline *p, const struct reference *r, float *value, char *why,
            size_t size)
{
    const struct family_model_state *m = pipeline_decoder(p);
    const struct generation *g = m != NULL ? m->writing : NULL;

    if (m == NULL) {
        snprintf(why, size, "the KV cache is a trained model's (--model)");
        return -1;
    }
    if ((strcmp(r->row, "layer") == 0 || strcmp(r->row, "all") == 0) &&
        strcmp(r->col, "kib") == 0) {
        const size_t all = generation_cache_bytes(&m->model->dec.cfg, m->run.n);
        *value = (float)((double)(r->row[0] == 'a' ? all : all / (size_t)p->layers) / 1024.0);
        return 0;
    }
    if (strcmp(r->col, "ms") == 0 && r->has_expected) {
        snprintf(why, size, "a time is measured as the lesson plays: quote it without a value");
        return -1;
    }
    if (g != NULL && g->written > 0 && strcmp(r->col, "ms") == 0 &&
        (strcmp(r->row, "token") == 0 || strcmp(r->row, "uncached") == 0)) {
        *value = (float)((r->row[0] == 't' ? g->steps[g->written - 1].seconds : g->uncached_seconds) *
                         1e3);
        return 0;
    }
    snprintf(why, size, "the cache has [layer][kib] and [all][kib], and after --generate "
                        "[token][ms] and [uncached][ms]");
    return -1;
}

static int reference_value(const struct pipeline *p, const struct reference *r, float *value,
                           char *why, size_t size);

/*
 * What a comparison's references name (a step with --compare): second:REF
 * (any reference, of the second model), difference:STAGE[ROW][COLUMN] (the
 * second's minus the first's), changed[LAYER][HEAD] (how much a head's
 * weights changed: compare_heads_changed) and kl[TOKEN][nats] (the next
 * tokens' divergence after a position).  1 when r is none of them.
 */
static int
compared_value(const struct pipeline *p, const struct reference *r, float *value, char *why,
               size_t size)
{
    const struct family_model_state *g = pipeline_decoder(p);
    struct compare *c = g != NULL ? g->compared : NULL;
    const bool second = strncmp(r->name, "second:", 7) == 0;
    const bool difference = strncmp(r->name, "difference:", 11) == 0;
    const bool changed = strcmp(r->name, "changed") == 0, kl = strcmp(r->name, "kl") == 0;
    struct reference sub = *r;
    float *all;
    int i, j, n;

    if (!second && !difference && !changed && !kl)
        return 1;
    if (c == NULL) {
        snprintf(why, size, "'%s' quotes a second model: give the step --compare MODEL", r->name);
        return -1;
    }
    if (second) {
        memmove(sub.name, sub.name + 7, strlen(sub.name + 7) + 1);
        if (compare_follow(c, NULL) != ATTN_OK) {
            snprintf(why, size, "out of memory");
            return -1;
        }
        return reference_value(c->b, &sub, value, why, size);
    }
    if (difference) {
        struct pipeline_selection sel;
        struct pipeline_view v;
        struct attn_error err;
        const char *name = r->name + 11;
        if (pipeline_select(p, name, &sel) != 0 || sel.param != NULL ||
            (unsigned)sel.stage >= STAGE_COUNT) {
            snprintf(why, size, "difference:%s: the difference is a stage's (weights.h1, scores ...)",
                     name);
            return -1;
        }
        if (compare_stage_view(c, COMPARE_DIFFERENCE, sel.stage, sel.head < 0 ? 0 : sel.head, &v,
                               &err) != ATTN_OK) {
            snprintf(why, size, "%.200s", err.msg);
            return -1;
        }
        i = walkthrough_find_label(r->row, v.row_labels, NULL, v.m.rows);
        j = walkthrough_find_label(r->col, v.col_labels, v.col_labels ? NULL : "d", v.m.cols);
        if (i < 0 || j < 0) {
            snprintf(why, size, "%s has no %s '%s'", name, i < 0 ? "row" : "column",
                     i < 0 ? r->row : r->col);
            return -1;
        }
        *value = MAT_AT(&v.m, i, j);
        return 0;
    }
    n = changed ? p->layers * head_map_heads(p) : g->run.n;
    all = malloc(((size_t)n + 1) * sizeof *all);
    if (all == NULL || (changed ? compare_heads_changed(c, all) != 0
                                : compare_next_kl(c, all, NULL) != ATTN_OK)) {
        free(all);
        snprintf(why, size, "out of memory");
        return -1;
    }
    if (changed) {
        i = walkthrough_find_label(r->row, NULL, NULL, p->layers);
        j = walkthrough_find_label(r->col, NULL, "h", head_map_heads(p));
    } else {
        i = walkthrough_find_label(r->row, (const char *const *)p->query_labels, NULL, g->run.n);
        j = strcmp(r->col, "nats") == 0 ? 0 : -1;
    }
    if (i < 0 || j < 0) {
        free(all);
        if (changed)
            snprintf(why, size, "changed has layers 0 to %d and heads 0 to %d", p->layers - 1,
                     head_map_heads(p) - 1);
        else
            snprintf(why, size, "kl[TOKEN][nats]: no token '%s', or not [nats]", r->row);
        return -1;
    }
    *value = all[changed ? i * head_map_heads(p) + j : i];
    free(all);
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
    const int compared = compared_value(p, r, value, why, size);

    if (compared <= 0)
        return compared;
    if (strncmp(r->name, "map.", 4) == 0)
        return map_value(p, r, value, why, size);
    if (strcmp(r->name, "written") == 0)
        return written_value(p, r, value, why, size);
    if (strcmp(r->name, "cache") == 0)
        return cache_value(p, r, value, why, size);
    if (pipeline_select(p, r->name, &sel) != 0) {
        snprintf(why, size, "'%s' is not a stage or parameter here", r->name);
        return -1;
    }
    if (sel.stage == PIPELINE_SELECT_NEXT)
        return next_value(p, r, value, why, size);
    if (sel.param == NULL && (int)sel.stage >= STAGE_COUNT) {
        snprintf(why, size, "'%s' has no numbers to quote (a model's are map.MEASURE and next)",
                 r->name);
        return -1;
    }
    if (sel.param != NULL) {
        m = &sel.param->m;
        i = walkthrough_find_label(r->row, NULL, "r", m->rows);
        j = walkthrough_find_label(r->col, NULL, "c", m->cols);
    } else {
        pipeline_stage_view(p, sel.stage, sel.head < 0 ? 0 : sel.head, &v);
        m = &v.m;
        i = walkthrough_find_label(r->row, v.row_labels, NULL, m->rows);
        j = walkthrough_find_label(r->col, v.col_labels, v.col_labels ? NULL : "d", m->cols);
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
 * Walks a narration: copies it into buf (when buf is not NULL, up to size
 * bytes with the terminating NUL) with references replaced and paragraphs
 * reflowed, and checks it when check is set.  *length gets the whole
 * rendered length, however much of it fitted.  Returns the references
 * seen, or -1 with err set.
 */
/*
 * The audience marks: {view: ...} is said on screen only, {paper: ...} in
 * handouts only, {panel: ...} on screen only when the cell panel is there
 * to look at (not in presentation mode's layout that leaves it out, nor
 * with i).  Each mark's audiences, as bits of enum walk_audience.
 */
static const struct {
    const char *mark;
    unsigned audiences;
} audience_marks[] = {
    { "{view:", 1u << WALK_VIEW | 1u << WALK_VIEW_BARE },
    { "{paper:", 1u << WALK_PAPER },
    { "{panel:", 1u << WALK_VIEW },
};

/* The audiences of the span c starts, and its mark's length in *skip; 0 when c starts none. */
static unsigned
audience_span(const char *c, size_t *skip)
{
    for (size_t i = 0; i < sizeof audience_marks / sizeof audience_marks[0]; i++) {
        size_t n = strlen(audience_marks[i].mark);
        if (strncmp(c, audience_marks[i].mark, n) == 0) {
            *skip = n;
            while (c[*skip] == ' ')
                (*skip)++;
            return audience_marks[i].audiences;
        }
    }
    return 0;
}

/*
 * The narration being written: into buf (NULL: only measured), with what
 * was put last.  Text another audience's span drops leaves no doubled
 * spaces and no empty paragraphs: a space or paragraph break is put only
 * after text, and a space is taken back before a break.
 */
struct narration_out {
    char *buf;
    size_t size;
    size_t out;  /* bytes put (counted past size when buf is too small) */
    char last;   /* the last character put ('\n' at the start) */
    bool shown;  /* whether the text being read is for this audience */
};

static void
put(struct narration_out *n, char ch)
{
    if (n->buf != NULL && n->out + 1 < n->size)
        n->buf[n->out] = ch;
    n->out++;
    n->last = ch;
}

static void
take_back_space(struct narration_out *n)
{
    if (n->last == ' ' && n->out > 0) {
        n->out--;
        n->last = n->out > 0 && n->buf != NULL && n->out - 1 < n->size ? n->buf[n->out - 1] : 'x';
    }
}

static void
put_shown(struct narration_out *n, char ch)
{
    if (!n->shown || ((ch == ' ' || ch == '\n') && (n->last == ' ' || n->last == '\n')))
        return;
    put(n, ch);
}

/*
 * The reference at c ("{weights[it][animal]=0.1234}", its '{'), resolved
 * on p, checked against the number it quotes when check, and put.  The
 * character after its '}', or NULL with err set.
 */
static const char *
put_reference(const struct walkthrough *w, const struct walk_step *s, const struct pipeline *p,
              const char *c, bool check, struct narration_out *n, struct attn_error *err)
{
    const char *end = strchr(c, '}');
    struct reference r;
    float v;
    char why[256];
    char num[64];

    if (end == NULL || parse_reference(c + 1, (size_t)(end - c - 1), &r) != 0) {
        attn_fail(err, ATTN_EPARSE,
                  "%s:%d: '%.40s' is not a reference like {weights[journey][starts]=0.2333}",
                  w->path, line_of(s, c), c);
        return NULL;
    }
    if (reference_value(p, &r, &v, why, sizeof why) != 0) {
        attn_fail(err, ATTN_EPARSE, "%s:%d: {%.*s}: %s", w->path, line_of(s, c),
                  (int)(end - c - 1), c + 1, why);
        return NULL;
    }
    if (check && r.has_expected) {
        double tol = 0.5 * pow(10.0, -r.decimals) * (1.0 + 1e-6) + 1e-7;
        bool ok = isinf(r.expected) ? (double)v == r.expected : fabs((double)v - r.expected) <= tol;
        if (!ok) {
            attn_fail(err, ATTN_EVALUE, "%s:%d: {%.*s}: attnscope computes %.*f", w->path,
                      line_of(s, c), (int)(end - c - 1), c + 1, r.decimals + 2, (double)v);
            return NULL;
        }
    }
    if (isinf(v))
        snprintf(num, sizeof num, "%s", v < 0 ? "-inf" : "inf");
    else
        snprintf(num, sizeof num, "%.*f", r.decimals, (double)v);
    for (const char *d = num; *d; d++)
        put_shown(n, *d);
    return end + 1;
}

/*
 * A number written with three or more decimals at c must come from the
 * core (a reference) or be quoted: -1 with err set when it is neither.
 */
static int
check_bare_number(const struct walkthrough *w, const struct walk_step *s, const char *c,
                  struct attn_error *err)
{
    const char *d = c;
    const char *e;

    if (c != s->narration && isalnum((unsigned char)c[-1]))
        return 0;
    while (isdigit((unsigned char)*d))
        d++;
    if (!(*d == '.' && isdigit((unsigned char)d[1]) && isdigit((unsigned char)d[2]) &&
          isdigit((unsigned char)d[3])))
        return 0;
    e = d + 1;
    while (isdigit((unsigned char)*e))
        e++;
    attn_fail(err, ATTN_EVALUE,
              "%s:%d: the number %.*s is not checked: write it as a reference "
              "({stage[row][col]=%.*s}) or, for a number from elsewhere, in `quotes`",
              w->path, line_of(s, c), (int)(e - c), c, (int)(e - c), c);
    return -1;
}

static int
walk_narration(const struct walkthrough *w, int k, const struct pipeline *p,
               enum walk_audience audience, char *buf, size_t size, size_t *length, bool check,
               struct attn_error *err)
{
    const struct walk_step *s = &w->steps[k];
    const char *c = s->narration;
    const char *span = NULL; /* where the open audience span starts */
    struct narration_out n = { buf, size, 0, '\n', true };
    int refs = 0;
    bool quoted = false;
    size_t skip;

    while (*c) {
        if (*c == '`') {
            quoted = !quoted;
            c++;
        } else if (*c == '\n' && c[1] == '\n') {
            /* A blank line separates paragraphs; single line breaks are spaces. */
            if (span != NULL) {
                attn_fail(err, ATTN_EPARSE,
                          "%s:%d: '%.20s' is not closed with } before the paragraph ends", w->path,
                          line_of(s, span), span);
                return -1;
            }
            if (n.shown)
                take_back_space(&n);
            put_shown(&n, '\n');
            while (*c == '\n')
                c++;
        } else if (*c == '\n') {
            put_shown(&n, ' ');
            c++;
        } else if (*c == '{' && !quoted && span == NULL && audience_span(c, &skip) != 0) {
            n.shown = (audience_span(c, &skip) >> audience) & 1u;
            span = c;
            c += skip;
        } else if (*c == '}' && !quoted && span != NULL) {
            /* "words {view:shown}." on paper is "words.", not "words .". */
            if (!n.shown && c[1] != '\0' && strchr(".,;:!?)", c[1]) != NULL)
                take_back_space(&n);
            span = NULL;
            n.shown = true;
            c++;
        } else if (*c == '{' && !quoted) {
            if ((c = put_reference(w, s, p, c, check, &n, err)) == NULL)
                return -1;
            refs++;
        } else {
            if (check && !quoted && isdigit((unsigned char)*c) &&
                check_bare_number(w, s, c, err) != 0)
                return -1;
            put_shown(&n, *c);
            c++;
        }
    }
    take_back_space(&n);
    if (n.last == '\n' && n.out > 0)
        n.out--;
    if (span != NULL) {
        attn_fail(err, ATTN_EPARSE, "%s:%d: '%.20s' is not closed with }", w->path,
                  line_of(s, span), span);
        return -1;
    }
    if (buf != NULL && size > 0)
        buf[n.out < size ? n.out : size - 1] = '\0';
    *length = n.out;
    return refs;
}

char *
walkthrough_narrate(const struct walkthrough *w, int k, const struct pipeline *p,
                    enum walk_audience audience, struct attn_error *err)
{
    size_t length;
    char *text;

    /* Measured first, then written whole: a narration has no length limit. */
    if (walk_narration(w, k, p, audience, NULL, 0, &length, false, err) < 0)
        return NULL;
    text = malloc(length + 1);
    if (text == NULL) {
        attn_fail(err, ATTN_ENOMEM, "%s: out of memory for step %d's narration", w->path, k + 1);
        return NULL;
    }
    if (walk_narration(w, k, p, audience, text, length + 1, &length, false, err) < 0) {
        free(text);
        return NULL;
    }
    return text;
}

int
walkthrough_verify_step(const struct walkthrough *w, int k, const struct pipeline *p,
                        struct attn_error *err)
{
    size_t length;

    /* Both audiences' text is checked: every span is read either way. */
    return walk_narration(w, k, p, WALK_VIEW, NULL, 0, &length, true, err);
}

int
walkthrough_check_step(const struct walkthrough *w, int k, const struct pipeline *p,
                       struct attn_error *err)
{
    const struct walk_step *s = &w->steps[k];
    int row;
    int col;

    if (s->side != COMPARE_FIRST &&
        (pipeline_decoder(p) == NULL || pipeline_decoder(p)->compared == NULL)) {
        attn_fail(err, ATTN_EPARSE, "%s:%d: side: %s shows a second model: give the step "
                                    "--compare MODEL",
                  w->path, s->side_line, compare_side_name((enum compare_side)s->side));
        return -1;
    }
    if (!explain_stage_present(p, s->stage)) {
        attn_fail(err, ATTN_EPARSE, "%s:%d: this configuration has no %s stage", w->path,
                  s->stage_line, explain_stage_name(s->stage));
        return -1;
    }
    if (s->head >= p->st.shape.heads) {
        attn_fail(err, ATTN_EPARSE, "%s:%d: head %d does not exist (%d head%s)", w->path, s->line,
                  s->head, p->st.shape.heads, p->st.shape.heads == 1 ? "" : "s");
        return -1;
    }
    if (s->param_matrix) {
        struct view v;
        bool shown;
        view_init(&v);
        v.param_matrix = true;
        v.param_stage = s->stage;
        shown = view_params_shown(&v, p, s->stage);
        view_destroy(&v);
        if (!shown) {
            attn_fail(err, ATTN_EPARSE,
                      "%s:%d: view: params shows the parameters of stage qkv or output, and this "
                      "configuration has none there",
                      w->path, s->stage_line);
            return -1;
        }
    }
    if ((s->screen == WALK_SCREEN_MAP || s->screen == WALK_SCREEN_NEXT) &&
        pipeline_decoder(p) == NULL) {
        attn_fail(err, ATTN_EPARSE, "%s:%d: view: %s needs a trained model (--model)", w->path,
                  s->line, s->screen == WALK_SCREEN_MAP ? "map" : "next");
        return -1;
    }
    if (s->screen == WALK_SCREEN_SENTENCE && p->qkv_given) {
        attn_fail(err, ATTN_EPARSE, "%s:%d: view: sentence needs a sentence (Q, K and V are given)",
                  w->path, s->line);
        return -1;
    }
    if (walkthrough_cell(w, k, p, &row, &col, err) != 0)
        return -1;
    return walkthrough_verify_step(w, k, p, err);
}

int
walkthrough_verify(const struct walkthrough *w, struct attn_error *err)
{
    int total = 0;

    for (int k = 0; k < w->count; k++) {
        struct walk_resources res;
        struct pipeline p;
        int refs;

        if (walkthrough_step_pipeline(w, k, &res, &p, err) != ATTN_OK)
            return -1;
        refs = walkthrough_check_step(w, k, &p, err);
        pipeline_destroy(&p);
        walk_resources_destroy(&res);
        if (refs < 0)
            return -1;
        total += refs;
    }
    return total;
}
