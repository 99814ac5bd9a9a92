/*
 * app_start.c: where the view opens (--stage, --head, --view, --query), and
 * figures of what it shows (--figure, F): one drawing (render/figure.h) for
 * the command line and the key.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "attnscope/families/model/family_model.h"
#include "front/app/app_internal.h"
#include "front/cli/cli.h"
#include "front/app/app_keys.h"
#include "render/explain.h"
#include "render/figure.h"

/* --view's names, by screen. */
static const struct {
    const char *name;
    enum view_screen screen;
    bool grid;   /* stage: every head side by side; map: every head's weights */
} screens[] = {
    { "stage", SCREEN_STAGE, false },  { "grid", SCREEN_STAGE, true },
    { "map", SCREEN_MAP, false },      { "overview", SCREEN_MAP, true },
    { "sentence", SCREEN_SENTENCE, false }, { "next", SCREEN_NEXT, false },
};

static enum attn_status
open_screen(struct app *a, const char *name, struct attn_error *err)
{
    for (size_t i = 0; i < sizeof screens / sizeof screens[0]; i++) {
        if (strcmp(screens[i].name, name) != 0)
            continue;
        if (screens[i].screen != SCREEN_STAGE) {
            app_open_screen(a, screens[i].screen);
            if (a->view.screen != screens[i].screen)
                return attn_fail(err, ATTN_EVALUE, "--view %s: %s", name, a->message);
        }
        if (screens[i].screen == SCREEN_MAP)
            a->view.map_measure = screens[i].grid ? VIEW_MAP_HEATMAPS : 0;
        else
            a->view.grid_heads = screens[i].grid;
        return ATTN_OK;
    }
    return attn_fail(err, ATTN_EVALUE,
                     "--view %s: no such screen; choose stage, grid, map, overview, sentence or next", name);
}

/* A whole number from 0 that text is all of (decimal digits only), or -1. */
static long
count_of(const char *text, const char *end)
{
    long v = 0;

    if (text == end)
        return -1;
    for (const char *c = text; c < end; c++) {
        if (*c < '0' || *c > '9' || v > (LONG_MAX - 9) / 10)
            return -1;
        v = v * 10 + (*c - '0');
    }
    return v;
}

/*
 * --head H, or L.H (a layer of a trained model, then its head).  Messages
 * quote what was given whole ("1.9" is said as "1.9", never "--head 9"; a
 * number past a long as it was typed).
 */
static enum attn_status
open_head(struct app *a, const char *text, struct attn_error *err)
{
    const int heads = a->pipe.st.shape.heads;
    const char *dot = strchr(text, '.');
    const long layer = dot != NULL ? count_of(text, dot) : -1;
    const long head = count_of(dot != NULL ? dot + 1 : text, text + strlen(text));

    if ((dot != NULL && layer < 0) || head < 0)
        return attn_fail(err, ATTN_EVALUE,
                         "--head %s: give a head (1) or a layer and a head (5.1), each a whole "
                         "number from 0",
                         text);
    if (layer >= 0 && pipeline_decoder(&a->pipe) == NULL)
        return attn_fail(err, ATTN_EVALUE,
                         "--head %s: layers are a trained model's (--model); give the head alone",
                         text);
    if (layer >= a->pipe.layers)
        return attn_fail(err, ATTN_EVALUE, "--head %s: layer out of range; the layers are 0-%d",
                         text, a->pipe.layers - 1);
    if (head >= heads)
        return attn_fail(err, ATTN_EVALUE, "--head %s: head out of range; the heads are 0-%d",
                         text, heads - 1);
    if (layer >= 0 && layer != a->pipe.layer &&
        pipeline_select_layer(&a->pipe, (int)layer, err) != ATTN_OK)
        return err->status;
    a->view.head = (int)head;
    a->view.map_row = a->pipe.layer;
    a->view.map_col = (int)head;
    return ATTN_OK;
}

/* The view's stage showing pipeline stage ps, or -1. */
static int
view_stage_of(const struct pipeline *p, enum pipeline_stage ps)
{
    if (ps == STAGE_QUERIES || ps == STAGE_KEYS || ps == STAGE_VALUES)
        return VIEW_QKV;
    for (int s = 0; s < VIEW_STAGE_COUNT; s++)
        if (explain_pipeline_stage(p, (enum view_stage)s, false) == ps &&
            explain_stage_present(p, (enum view_stage)s))
            return s;
    return -1;
}

/* --stage NAME: the stage's (or the walkthroughs' name for it), a head of it, or a screen. */
static enum attn_status
open_stage(struct app *a, const char *name, struct attn_error *err)
{
    struct pipeline_selection sel;
    enum view_stage vs;
    int got = pipeline_select(&a->pipe, name, &sel);
    int s = -1;

    if (got == PIPELINE_SELECT_NO_HEAD) {
        cli_stage_refused(&a->pipe, name, got, true, err->msg, sizeof err->msg);
        return err->status = ATTN_EVALUE;
    }
    if (got == 0 && sel.param != NULL)
        return attn_fail(err, ATTN_EVALUE,
                         "--stage %s: the view shows a parameter on its stage (2 or 0, then W); "
                         "--print and --export take it by name", name);
    if (got == 0 && sel.stage == PIPELINE_SELECT_HEADS)
        return open_screen(a, "map", err);
    if (got == 0 && (sel.stage == PIPELINE_SELECT_NEXT || sel.stage == PIPELINE_SELECT_LENS))
        return open_screen(a, "next", err);
    if (got == 0 && sel.stage == PIPELINE_SELECT_CACHE)
        s = VIEW_CACHE;
    else if (got == 0)
        s = sel.stage == PIPELINE_SELECT_TOKENS ? VIEW_EMBEDDINGS : view_stage_of(&a->pipe, sel.stage);
    else if (explain_stage_parse(name, &vs) == 0 && explain_stage_present(&a->pipe, vs))
        s = vs;
    if (s < 0 && got == 0 && pipeline_decoder(&a->pipe) == NULL)
        for (int t = 0; t < VIEW_STAGE_COUNT; t++)
            if (explain_pipeline_stage(&a->pipe, (enum view_stage)t, false) == sel.stage)
                /* computed, but not a step of this class on screen */
                return attn_fail(err, ATTN_EVALUE,
                                 "--stage %s: the %s variant's class has no %s step, so the "
                                 "view does not show one (its knob adds it: --mask causal, "
                                 "--scale, --dropout P; --print --stage %s prints it as computed)",
                                 name, attention_variant_name(a->pipe.cfg.variant),
                                 explain_stage_name((enum view_stage)t), name);
    if (s < 0) {
        cli_stage_refused(&a->pipe, name, -1, true, err->msg, sizeof err->msg);
        return err->status = ATTN_EVALUE;
    }
    a->view.stage = (enum view_stage)s;
    a->view.screen = SCREEN_STAGE;
    if (got == 0 && sel.head >= 0)
        a->view.head = sel.head;
    return ATTN_OK;
}

/* --query: a token's label (it, it#6, or without the model's space mark) or a position. */
static enum attn_status
open_query(struct app *a, const char *name, struct attn_error *err)
{
    const struct pipeline *p = &a->pipe;
    int row = walkthrough_find_label(name, (const char *const *)p->query_labels, NULL, p->st.nq);

    if (row < 0)
        return attn_fail(err, ATTN_EVALUE,
                         "--query %s: no such token; give one of the sentence's (as the rows are "
                         "labelled) or a position 0-%d", name, p->st.nq - 1);
    a->view.cursor_row = row;
    a->view.cursor_col = row < p->st.nk ? row : 0;
    return ATTN_OK;
}

enum attn_status
app_open_at(struct app *a, const struct app_start *s, struct attn_error *err)
{
    /* The stage first (it may choose a screen and a head), then what names them outright. */
    if ((s->stage != NULL && open_stage(a, s->stage, err) != ATTN_OK) ||
        (s->view != NULL && open_screen(a, s->view, err) != ATTN_OK) ||
        (s->head != NULL && open_head(a, s->head, err) != ATTN_OK) ||
        (s->query != NULL && open_query(a, s->query, err) != ATTN_OK))
        return err->status;
    if (s->query == NULL && (a->view.screen == SCREEN_NEXT || a->view.screen == SCREEN_SENTENCE))
        a->view.cursor_row = a->pipe.st.nq - 1; /* the predictions after (what) the last token (sees) */
    view_clamp(&a->view, &a->pipe);
    return ATTN_OK;
}

enum attn_status
app_write_figure(struct app *a, const char *path, struct figure_result *res,
                 struct attn_error *err)
{
    app_settle(a); /* the map's measures, as the terminal's worker makes them */
    return figure_write(&a->view, &a->pipe, path, res, err);
}

/* The name F gives what the screen shows: figure-layer2-weights-h1 (without an extension). */
static void
figure_name(const struct app *a, char *buf, size_t size)
{
    const struct view *v = &a->view;
    const struct pipeline *p = &a->pipe;
    char layer[24] = "";

    if (pipeline_decoder(p) != NULL)
        snprintf(layer, sizeof layer, "layer%d-", p->layer);
    if (v->screen == SCREEN_MAP)
        snprintf(buf, size, "figure-map");
    else if (v->screen == SCREEN_NEXT)
        snprintf(buf, size, "figure-next");
    else if (v->screen == SCREEN_SENTENCE)
        snprintf(buf, size, "figure-%ssentence-h%d", layer, v->head);
    else if (v->grid_heads && explain_stage_per_head(v->stage) && explain_stage_heads(p, v->stage) > 1)
        snprintf(buf, size, "figure-%s%s-heads", layer, explain_stage_name(v->stage));
    else if (explain_stage_per_head(v->stage) && explain_stage_heads(p, v->stage) > 1)
        snprintf(buf, size, "figure-%s%s-h%d", layer, explain_stage_name(v->stage), v->head);
    else
        snprintf(buf, size, "figure-%s%s", layer, explain_stage_name(v->stage));
}

/* Whether dir holds name with any of the count extensions. */
static bool
figure_taken(const char *dir, const char *name, const char *const *ext, size_t count)
{
    char path[4096];

    for (size_t i = 0; i < count; i++) {
        snprintf(path, sizeof path, "%s/%s.%s", dir, name, ext[i]);
        if (access(path, F_OK) == 0)
            return true;
    }
    return false;
}

/* F: what the screen shows as SVG, PNG and PDF in the export folder. */
void
app_figure_key(struct app *a, int key)
{
    static const char *const ext[] = { "svg", "png", "pdf" };
    struct attn_error err;
    char name[112];
    char path[4096];

    (void)key;
    figure_name(a, name, sizeof name);
    if (mkdir(a->export_dir, 0777) != 0 && errno != EEXIST) {
        char msg[600];
        snprintf(msg, sizeof msg, "cannot make %s/: %s", a->export_dir, strerror(errno));
        app_complain(a, msg);
        return;
    }
    {
        /* An earlier F of the same screen stays: the next takes the next number (-2, -3 ...). */
        const size_t base = strlen(name);
        for (int n = 2; n < 10000 && figure_taken(a->export_dir, name, ext, 3); n++)
            snprintf(name + base, sizeof name - base, "-%d", n);
    }
    for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++) {
        snprintf(path, sizeof path, "%s/%s.%s", a->export_dir, name, ext[i]);
        if (app_write_figure(a, path, NULL, &err) != ATTN_OK) {
            app_complain(a, err.msg);
            return;
        }
    }
    app_say(a, "wrote %s.svg, .png and .pdf into %s/", name, a->export_dir);
}
