/*
 * walkthrough_step.c: what one step of a lesson needs: its options parsed
 * and its inputs loaded, and the cell its cursor goes to (see walkthrough.h).
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attnscope/families/model/family_model.h"
#include "attnscope/files/fileio.h"
#include "attnscope/models/model.h"
#include "attnscope/text/tokenizer.h"
#include "attnscope/base/utf8.h"
#include "render/view.h"
#include "front/cli/write.h"
#include "front/lessons/walkthrough.h"

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

/* The line that configures step k: its own options:, the file's, or its step: line. */
static int
options_line(const struct walkthrough *w, int k)
{
    const struct walk_step *s = &w->steps[k];

    return s->options ? s->options_line : w->options_line ? w->options_line : s->line;
}

/* ---------------------------------------------------------------- models */

/* The models a lesson opened, by what its options called them: a lesson uses one or two. */
#define WALK_MODELS_MAX 4

struct walk_models {
    int count;
    char *what[WALK_MODELS_MAX];
    bool int8[WALK_MODELS_MAX]; /* opened in the int8 arithmetic (--arith int8) */
    struct model *model[WALK_MODELS_MAX];
};

struct walk_models *
walk_models_new(void)
{
    return calloc(1, sizeof(struct walk_models));
}

void
walk_models_close(struct walk_models *models)
{
    if (models == NULL)
        return;
    for (int i = 0; i < models->count; i++) {
        model_close(models->model[i]);
        free(models->model[i]);
        free(models->what[i]);
    }
    free(models);
}

/* Whether path is there as a folder or a file (a lesson's model may be a model.pth). */
static bool
is_model_path(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0 && (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode));
}

/*
 * What to open for a lesson's model: a folder relative to the lesson, else
 * the name itself when --model finds it (a shipped model, a Hugging Face
 * name: opening the name keeps its short name), else (for the first model,
 * first true; never for --compare's) the folder $ATTNSCOPE_MODEL names.  0
 * with target set, or -1 (model_locate's reason in why) when none has it.
 */
static int
find_lesson_model(const struct walkthrough *w, const char *what, bool first, char *target,
                  size_t size, struct attn_error *why)
{
    char *beside = resolve_path(w, what);
    struct model_place place;
    const char *env = getenv("ATTNSCOPE_MODEL");
    int found = 0;

    if (beside != NULL && what[0] != '/' && is_model_path(beside))
        snprintf(target, size, "%s", beside);
    else if (model_locate(what, &place, why) == ATTN_OK)
        snprintf(target, size, "%s", what);
    else if (first && env != NULL && env[0] != '\0' && strcmp(env, "none") != 0)
        snprintf(target, size, "%s", env);
    else
        found = -1;
    free(beside);
    return found;
}

/*
 * The model a lesson's --model (option) or --compare names, opened once
 * per lesson: a folder relative to the lesson, a shipped model or a Hugging
 * Face name, else (--model's) the folder $ATTNSCOPE_MODEL names.
 * ATTN_EABSENT when none of them has it.
 */
static enum attn_status
lesson_model(const struct walkthrough *w, const char *option, const char *what,
             const struct model_options *mo, const struct model **out, struct attn_error *err)
{
    const bool first = strcmp(option, "--model") == 0;

    struct walk_models *ms = w->models;
    char where[MODEL_PATH_MAX];
    struct model *m;
    struct attn_error sub;
    enum attn_status st;

    for (int i = 0; ms != NULL && i < ms->count; i++)
        if (strcmp(ms->what[i], what) == 0 && ms->int8[i] == (mo->int8 != NULL)) {
            *out = ms->model[i];
            return ATTN_OK;
        }
    if (ms == NULL || ms->count == WALK_MODELS_MAX)
        return attn_fail(err, ATTN_ELIMIT, "a lesson uses at most %d models", WALK_MODELS_MAX);
    attn_error_clear(&sub);
    if (find_lesson_model(w, what, first, where, sizeof where, &sub) != 0) {
        /* (model_locate speaks of --model: its reason without the option) */
        const char *why = strncmp(sub.msg, "--model ", 8) == 0 ? sub.msg + 8 : sub.msg;
        if (!first)
            return attn_fail(err, ATTN_EABSENT,
                             "%s %s: the model to compare with is not on this machine (%s); "
                             "give its folder in the lesson", option, what, why);
        return attn_fail(err, ATTN_EABSENT,
                         "model %s is not on this machine (%s); set ATTNSCOPE_MODEL to its folder",
                         what, sub.msg);
    }
    m = calloc(1, sizeof *m);
    if (m == NULL)
        return attn_fail(err, ATTN_ENOMEM, "out of memory");
    st = model_open(m, where, mo, err);
    if (st != ATTN_OK) {
        free(m);
        return st;
    }
    ms->what[ms->count] = strdup(what);
    if (ms->what[ms->count] == NULL) {
        model_close(m);
        free(m);
        return attn_fail(err, ATTN_ENOMEM, "out of memory");
    }
    ms->int8[ms->count] = mo->int8 != NULL;
    ms->model[ms->count++] = m;
    *out = m;
    return ATTN_OK;
}

const char *
walkthrough_absent_model(const struct walkthrough *w, char *buf, size_t size)
{
    char text[1024];
    char *words[WALK_MAX_ARGS];
    char where[MODEL_PATH_MAX];
    int n;

    if (w->options == NULL || strlen(w->options) >= sizeof text)
        return NULL;
    n = split_words(w->options, text, words, WALK_MAX_ARGS);
    for (int i = 0; i + 1 < n; i++)
        if ((strcmp(words[i], "--model") == 0 || strcmp(words[i], "--compare") == 0) &&
            strcmp(words[i + 1], "none") != 0 &&
            find_lesson_model(w, words[i + 1], strcmp(words[i], "--model") == 0, where,
                              sizeof where, NULL) != 0) {
            snprintf(buf, size, "%s", words[i + 1]);
            return buf;
        }
    return NULL;
}

/* The folder (and weights file) a model name or path opens, made absolute, into buf. */
static int
model_identity(const char *what, char *buf, size_t size, struct attn_error *err)
{
    struct model_place *place = malloc(sizeof *place);
    char dir[PATH_MAX];
    int rc = -1;

    if (place == NULL)
        return attn_fail(err, ATTN_ENOMEM, "out of memory"), -1;
    if (model_locate(what, place, err) == ATTN_OK && realpath(place->dir, dir) != NULL) {
        snprintf(buf, size, "%s|%s", dir, strrchr(place->weights, '/') != NULL
                                              ? strrchr(place->weights, '/') + 1
                                              : place->weights);
        rc = 0;
    }
    free(place);
    return rc;
}

int
walkthrough_same_model(const struct walkthrough *w, const char *what, char *lesson, size_t size,
                       struct attn_error *err)
{
    char text[1024];
    char *words[WALK_MAX_ARGS];
    char where[MODEL_PATH_MAX];
    char mine[PATH_MAX + MODEL_PATH_MAX + 2], theirs[PATH_MAX + MODEL_PATH_MAX + 2];
    int n = 0;

    lesson[0] = '\0';
    if (w->options != NULL && strlen(w->options) < sizeof text)
        n = split_words(w->options, text, words, WALK_MAX_ARGS);
    for (int i = 0; i + 1 < n; i++)
        if (strcmp(words[i], "--model") == 0 && strcmp(words[i + 1], "none") != 0) {
            snprintf(lesson, size, "%s", words[i + 1]);
            if (model_identity(what, mine, sizeof mine, err) != 0)
                return -1;
            if (find_lesson_model(w, words[i + 1], false, where, sizeof where, NULL) != 0)
                return 0;
            return model_identity(where, theirs, sizeof theirs, NULL) == 0 &&
                   strcmp(mine, theirs) == 0;
        }
    return 0;
}

/* A model step's switches (--ablate ...) and layer, checked against the model. */
static enum attn_status
model_step(const struct walkthrough *w, int k, struct walk_resources *res, int line,
           struct attn_error *err)
{
    const struct decoder_config *c = &res->model->dec.cfg;
    const struct walk_step *s = &w->steps[k];
    struct attn_error sub;
    struct pipeline_source unused; /* (the step's source is made later: walk_resources_source) */

    res->layer = s->layer >= 0 ? s->layer : res->opts.layer >= 0 ? res->opts.layer : 0;
    if (res->layer >= c->n_layer)
        return attn_fail(err, ATTN_EVALUE, "%s:%d: layer %d: %s has layers 0 to %d", w->path,
                         s->layer >= 0 ? s->layer_line : line, res->layer, res->model->name,
                         c->n_layer - 1);
    if (s->head >= c->n_head)
        return attn_fail(err, ATTN_EVALUE, "%s:%d: head %d: %s has heads 0 to %d", w->path,
                         s->line, s->head, res->model->name, c->n_head - 1);
    if (model_switches_apply(res->model, &res->opts.switches, &res->switches, &unused, &sub) !=
        ATTN_OK)
        return attn_fail(err, sub.status, "%s:%d: %s", w->path, line, sub.msg);
    return ATTN_OK;
}

enum attn_status
walkthrough_resources(const struct walkthrough *w, int k, struct walk_resources *res,
                      struct attn_error *err)
{
    const struct walk_step *s = &w->steps[k];
    const char *base = w->options ? w->options : "";
    const char *own = s->options ? s->options : "";
    const int line = options_line(w, k);
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
    /* The lesson says which model it needs: $ATTNSCOPE_MODEL does not turn its toy steps into one. */
    if (cli_parse_lesson(argc, argv, &res->opts, msg, sizeof msg) != 0) {
        walk_resources_destroy(res);
        return attn_fail(err, ATTN_EPARSE, "%s:%d: %s", w->path, line, msg);
    }
    if (res->opts.mode != CLI_TUI || res->opts.stage_count > 0 || res->opts.mono ||
        res->opts.walkthrough != NULL || res->opts.present) {
        walk_resources_destroy(res);
        return attn_fail(err, ATTN_EPARSE,
                         "%s:%d: only options that configure attention belong in a walkthrough "
                         "(not --print, --export, --stage, --format, --heatmap, --mono, --present "
                         "or --walkthrough)",
                         w->path, line);
    }
    if (res->opts.source_file != NULL || res->opts.sentence_file != NULL) {
        walk_resources_destroy(res);
        return attn_fail(err, ATTN_EPARSE,
                         "%s:%d: a lesson gives its sentences in its text: use %s instead of %s",
                         w->path, line, res->opts.source_file != NULL ? "--source" : "-s",
                         res->opts.source_file != NULL ? "--source-file" : "--sentence-file");
    }
    {
        const char **paths[4] = { &res->opts.embeddings, &res->opts.qkv_dir, &res->opts.weights_dir,
                                  &res->opts.source_embeddings };
        for (int i = 0; i < 4; i++) {
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
    if (res->opts.model != NULL) {
        const int second_arith = res->opts.compare_arith >= 0 ? res->opts.compare_arith
                                                              : res->opts.arith;
        const struct model_options mo = {
            res->opts.model_heads, res->opts.classes, res->opts.verify,
            res->opts.arith == CLI_ARITH_INT8 ? "--arith int8" : NULL
        };
        const struct model_options mo2 = {
            res->opts.model_heads, res->opts.classes, res->opts.verify,
            second_arith == CLI_ARITH_INT8 ? "--compare-arith int8" : NULL
        };
        st = lesson_model(w, "--model", res->opts.model, &mo, &res->model, &sub);
        /* --compare: the second model, opened once per lesson as the first is */
        if (st == ATTN_OK && res->opts.compare != NULL)
            st = lesson_model(w, "--compare", res->opts.compare, &mo2, &res->second, &sub);
        if (st == ATTN_OK && res->second != NULL && res->opts.generate > 0)
            st = attn_fail(&sub, ATTN_EVALUE, "--compare: a lesson's step compares a text, it "
                                              "does not write (drop --generate)");
        if (st == ATTN_OK && res->second != NULL)
            st = compare_check_models(res->model, res->second, &sub);
        if (st == ATTN_OK)
            st = model_step(w, k, res, line, err);
        else
            attn_fail(err, st, "%s:%d: %s", w->path, line, sub.msg);
        if (st != ATTN_OK)
            walk_resources_destroy(res);
        return st;
    }
    {
        const struct inputs_paths where = { res->opts.embeddings, res->opts.qkv_dir,
                                            res->opts.weights_dir, res->opts.source_embeddings };
        st = inputs_load(&res->in, &res->opts.cfg, &where, res->opts.knobs_given, NULL, &sub);
    }
    if (st != ATTN_OK) {
        walk_resources_destroy(res);
        return attn_fail(err, st, "%s:%d: %s", w->path, line, sub.msg);
    }
    return ATTN_OK;
}

/*
 * --generate N in a step: the model writes N tokens after the step's text
 * (p rebuilt on it), then the forward without the cache is measured once,
 * for what the narration says of the cache.
 */
static enum attn_status
write_step(struct walk_resources *res, struct pipeline *p, const struct pipeline_source *src,
           struct attn_error *err)
{
    struct generate_options o;
    struct generate_end end;
    enum attn_status st;
    bool ended = false;

    if (write_end_of(&res->opts.eos, res->model, &end, err) != ATTN_OK)
        return err->status;
    write_options_of(&res->opts.cfg, &end, &o);
    res->writing = calloc(1, sizeof *res->writing);
    if (res->writing == NULL)
        return attn_fail(err, ATTN_ENOMEM, "out of memory");
    st = generation_init(res->writing, res->model, &o, err);
    if (st == ATTN_OK)
        st = generation_begin(res->writing, p, &p->cfg, src, res->opts.generate, err);
    for (int i = 0; st == ATTN_OK && !ended && i < res->opts.generate; i++)
        st = generation_write(res->writing, p, &p->cfg, src, &ended, err);
    if (st == ATTN_OK)
        st = generation_measure_uncached(res->writing, err);
    return st;
}

/*
 * --compare in a step: the second model's pipeline of the same source, at
 * the step's layer, checked against p's; p's state points at the
 * comparison (family_model_state.compared), which res owns.
 */
static enum attn_status
compare_step(struct walk_resources *res, struct pipeline *p, const struct pipeline_source *src,
             struct attn_error *err)
{
    struct pipeline_source second = *src;
    enum attn_status st;

    res->second_pipe = calloc(1, sizeof *res->second_pipe);
    res->cmp = calloc(1, sizeof *res->cmp);
    if (res->second_pipe == NULL || res->cmp == NULL)
        return attn_fail(err, ATTN_ENOMEM, "out of memory");
    second.model = res->second;
    st = pipeline_create(res->second_pipe, &res->opts.cfg, &second, err);
    if (st != ATTN_OK) {
        free(res->second_pipe);
        res->second_pipe = NULL;
        return st;
    }
    compare_init(res->cmp, p, res->second_pipe);
    st = compare_check(p, res->second_pipe, err);
    if (st == ATTN_OK)
        st = compare_follow(res->cmp, err);
    if (st == ATTN_OK)
        ((struct family_model_state *)p->family_state)->compared = res->cmp;
    return st;
}

enum attn_status
walkthrough_step_pipeline(const struct walkthrough *w, int k, struct walk_resources *res,
                          struct pipeline *p, struct attn_error *err)
{
    struct pipeline_source src;
    struct attn_error sub;
    enum attn_status st = walkthrough_resources(w, k, res, err);

    if (st != ATTN_OK)
        return st;
    src = walk_resources_source(res);
    src.layer = res->layer;
    st = pipeline_create(p, &res->opts.cfg, &src, &sub);
    if (st == ATTN_OK && res->layer > 0) {
        st = pipeline_select_layer(p, res->layer, &sub);
        if (st != ATTN_OK)
            pipeline_destroy(p);
    }
    if (st == ATTN_OK && res->opts.generate > 0) {
        st = write_step(res, p, &src, &sub);
        if (st != ATTN_OK)
            pipeline_destroy(p);
    }
    if (st == ATTN_OK && res->second != NULL) {
        st = compare_step(res, p, &src, &sub);
        if (st != ATTN_OK)
            pipeline_destroy(p);
    }
    if (st != ATTN_OK) {
        /* What the core refuses (an empty sentence, a mismatch) came from the options. */
        attn_fail(err, st, "%s:%d: %s", w->path, options_line(w, k), sub.msg);
        walk_resources_destroy(res);
    }
    return st;
}

void
walk_resources_destroy(struct walk_resources *res)
{
    if (res->cmp != NULL)
        compare_destroy(res->cmp);
    free(res->cmp);
    if (res->second_pipe != NULL)
        pipeline_destroy(res->second_pipe);
    free(res->second_pipe);
    res->cmp = NULL;
    res->second_pipe = NULL;
    inputs_destroy(&res->in);
    model_switch_masks_free(&res->switches);
    if (res->writing != NULL) {
        generation_destroy(res->writing);
        free(res->writing);
    }
    for (int i = 0; i < 4; i++)
        free(res->paths[i]);
    free(res->argv_text);
    memset(res, 0, sizeof *res);
}

struct pipeline_source
walk_resources_source(const struct walk_resources *res)
{
    struct pipeline_source src;

    if (res->model == NULL)
        return inputs_source(&res->in, res->opts.sentence, res->opts.source);
    memset(&src, 0, sizeof src);
    src.sentence = res->opts.sentence;
    src.family = &family_model;
    src.model = res->model;
    src.top = res->opts.top;
    src.bos = res->opts.bos;
    model_switches_source(&res->opts.switches, &res->switches, &src);
    return src;
}

/* ---------------------------------------------------------------- cells */

int
walkthrough_find_label(const char *name, const char *const *labels, const char *prefix, int n)
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
    /* A repeated token's label is "the#6": plain "the" still names its first place. */
    if (labels != NULL) {
        size_t len = strlen(name);
        for (int i = 0; i < n; i++)
            if (strncmp(labels[i], name, len) == 0 && labels[i][len] == '#')
                return i;
        /* A model's word carries its space, shown as '·' ("·it"): "it" names it too. */
        for (int i = 0; i < n; i++) {
            const char *l = labels[i];
            if (strncmp(l, "\xc2\xb7", 2) != 0 || strncmp(l + 2, name, len) != 0)
                continue;
            if (l[2 + len] == '\0')
                return i;
        }
        for (int i = 0; i < n; i++) {
            const char *l = labels[i];
            if (strncmp(l, "\xc2\xb7", 2) == 0 && strncmp(l + 2, name, len) == 0 &&
                l[2 + len] == '#')
                return i;
        }
    }
    idx = strtol(name, &end, 10);
    if (end != name && *end == '\0' && idx >= 0 && idx < n)
        return (int)idx;
    /* "map#2" for a first occurrence, labelled plain "·map": the word at that position. */
    if (labels != NULL) {
        const char *hash = strrchr(name, '#');
        if (hash != NULL && hash > name) {
            idx = strtol(hash + 1, &end, 10);
            if (end != hash + 1 && *end == '\0' && idx >= 0 && idx < n) {
                const char *l = labels[idx];
                const size_t len = (size_t)(hash - name);
                if (strncmp(l, "\xc2\xb7", 2) == 0 && strncmp(name, "\xc2\xb7", 2) != 0)
                    l += 2;
                if (strncmp(l, name, len) == 0 && (l[len] == '\0' || l[len] == '#'))
                    return (int)idx;
            }
        }
    }
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
    if (!explain_stage_present(p, s->stage)) {
        /* A stage this configuration lacks (outdrop without notes, say) has no cells. */
        attn_fail(err, ATTN_EPARSE, "%s:%d: this configuration has no %s stage", w->path,
                  s->stage_line, explain_stage_name(s->stage));
        return -1;
    }
    view_init(&v);
    v.mask_matrix = s->mask_matrix;
    v.param_matrix = s->param_matrix;
    v.param_stage = s->stage;
    if (view_stage_spec(&v, p, s->stage, s->head, &spec) != 0) {
        view_destroy(&v);
        attn_fail(err, ATTN_ENOMEM, "out of memory");
        return -1;
    }
    *row = walkthrough_find_label(s->cell_row, spec.row_labels, NULL, spec.m->rows);
    *col = walkthrough_find_label(s->cell_col, spec.col_labels, spec.col_labels ? NULL : spec.col_prefix,
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
