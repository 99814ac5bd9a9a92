/* app.c: keys, knobs and the sentence editor (see app.h). */
#include "config.h"

#include <dirent.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/families/gpt2/gpt2_export.h"
#include "attnscope/pipeline/export.h"
#include "attnscope/families/gpt2/family_gpt2.h"
#include "attnscope/families/gpt2/headmap.h"
#include "attnscope/pipeline/knob.h"
#include "render/text.h"
#include "front/app_internal.h"

/* The help screen: these lines, with the knobs' (from the knob table) after the editor's. */
static const struct view_help_line help_before[] = {
    { "Space n", "next stage" },
    { "Backspace p", "previous stage" },
    { "1-9 0", "jump to a stage (Space and p also reach the positional encoding)" },
    { "arrows", "move the cursor; the panel below explains the cell" },
    { "Home End", "first / last column" },
    { "PgUp PgDn", "a page of rows up / down" },
    { "mouse click", "put the cursor on a cell; on the stage bar, go to that stage" },
    { "Tab Shift-Tab", "next / previous head" },
    { ", .", "with --model: previous / next layer" },
    { "a", "with --model: ablate the head shown (its context zeroed), a again brings it back" },
    { "N", "with --model: the next tokens after each position, and the logit lens after the "
           "last" },
    { "T", "the sentence view: the text shaded by the weights of the query token (Left, Right), "
           "in the head shown" },
    { "L", "with --model: the model map, one number per layer and head (Tab: the measure, then "
           "every head's heatmap; Enter: open the head)" },
    { "g", "all heads side by side, the same cursor on each" },
    { "M", "show the causal mask as a matrix of its own" },
    { "W", "show the parameters: W_query, W_key, W_value (on Q K V) or out_proj (on output); "
           "W again goes back" },
    { "i", "hide / show the panel that explains the cell (more room for the matrix)" },
    { "e", "edit the sentence (Enter applies, Esc cancels)" },
    { "E", "edit the source sentence (cross-attention, --source)" },
};

static const struct view_help_line help_after[] = {
    { "x X", "export this stage / every stage to CSV" },
    { "w", "choose a walkthrough (a scripted lesson)" },
    { "Space Backspace", "in a walkthrough: next / previous step" },
    { "Enter", "in a walkthrough: back to the step after exploring" },
    { "l", "in a walkthrough: the list of its steps (Enter or 1-9 goes to one)" },
    { "] [", "in a walkthrough: the next / previous page of a narration longer than the screen" },
    { "PgDn PgUp", "in a walkthrough in presentation mode: next / previous step (a clicker's keys; "
                   "Right and Left too)" },
    { "z", "presentation mode: scaled to the screen and centred, high contrast, no bars" },
    { "?", "this help" },
    { "Esc", "close the help, cancel an edit, clear the message" },
    { "q", "quit" },
};

#define HELP_BEFORE (sizeof help_before / sizeof help_before[0])
#define HELP_AFTER (sizeof help_after / sizeof help_after[0])

const struct view_help_line *
app_help(int *count)
{
    static struct view_help_line lines[HELP_BEFORE + KNOB_COUNT + HELP_AFTER];
    static int n;

    if (n == 0) {
        for (size_t i = 0; i < HELP_BEFORE; i++)
            lines[n++] = help_before[i];
        for (int k = 0; k < KNOB_COUNT; k++)
            if (knob_table[k].keys != NULL)
                lines[n++] = (struct view_help_line){ knob_table[k].keys, knob_table[k].key_help };
        for (size_t i = 0; i < HELP_AFTER; i++)
            lines[n++] = help_after[i];
    }
    *count = n;
    return lines;
}

void
app_say(struct app *a, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    attn_vformat_text(a->message, sizeof a->message, fmt, ap);
    va_end(ap);
    a->view.message = a->message;
    a->view.message_is_error = false;
}

void
app_complain(struct app *a, const char *msg)
{
    app_say(a, "%s", msg);
    a->view.message_is_error = true;
}

/*
 * Builds a pipeline for cfg and sentence and swaps it in.  Returns 0, or -1
 * (with the reason in the footer) leaving the old pipeline in place.
 */
int
app_rebuild(struct app *a, const struct attention_config *cfg, const char *sentence)
{
    return app_rebuild_with(a, cfg, sentence, a->source);
}

/* Keeps a copy of text in *held when it is new (the old one freed); on no memory, the old. */
static void
hold_text(char **held, const char *text)
{
    if (text != *held && text != NULL) {
        char *copy = strdup(text);
        if (copy != NULL) {
            free(*held);
            *held = copy;
        }
    }
}

int
app_rebuild_with(struct app *a, const struct attention_config *cfg, const char *sentence,
                 const char *source)
{
    struct pipeline next;
    struct pipeline_source src = { sentence,  a->vocab, a->weights, a->qkv,
                                   a->family, a->model, a->top,     a->bos,
                                   a->ablated, source, a->source_vocab };
    const int layer = a->pipe.layer;
    struct attn_error err;

    if (a->weights != NULL) {
        struct attention_params layout;
        if (params_create(&layout, cfg, a->vocab->dim, &err) == ATTN_OK) {
            if (!params_same_layout(&layout, a->weights))
                src.weights = NULL;
            params_destroy(&layout);
        }
    }
    attn_error_clear(&err);
    if (sentence == a->sentence && source == a->source && src.weights == a->weights &&
        pipeline_attend_only(&a->pipe, cfg)) {
        /* Only the stages after the projections change: recompute those in place. */
        if (pipeline_reattend(&a->pipe, cfg, &err) != ATTN_OK) {
            app_complain(a, err.msg);
            return -1;
        }
        a->cfg = *cfg;
        view_clamp(&a->view, &a->pipe);
        return 0;
    }
    if (pipeline_rebuild(&next, &a->pipe, cfg, &src, &err) != ATTN_OK) {
        if (err.status == ATTN_ESTOPPED)
            app_say(a, "%s: what was shown stays", err.msg);
        else
            app_complain(a, err.msg);
        a->view.message_is_error = true;
        return -1;
    }
    pipeline_destroy(&a->pipe);
    a->pipe = next;
    a->cfg = *cfg;
    /* A model's new pipeline shows the layer the old one did. */
    if (layer > 0 && layer < a->pipe.layers)
        (void)pipeline_select_layer(&a->pipe, layer, NULL);
    hold_text(&a->sentence, sentence);
    hold_text(&a->source, source);
    view_clamp(&a->view, &a->pipe);
    if (a->weights != NULL && src.weights == NULL)
        app_say(a, "the weights from %s do not fit this configuration: drawn from seed %llu",
            a->weights_dir ? a->weights_dir : "--weights", (unsigned long long)cfg->seed);
    return 0;
}

enum attn_status
app_init(struct app *a, const struct attention_config *cfg, const struct pipeline_source *src,
         const char *weights_dir, struct attn_error *err)
{
    enum attn_status st;

    memset(a, 0, sizeof *a);
#ifdef M_MMAP_THRESHOLD
    /*
     * Every knob builds new buffers and frees the old ones.  Keep freed
     * memory in the heap for the next ones: handing it back to the kernel
     * and faulting it in again costs more than the computation.
     */
    mallopt(M_MMAP_THRESHOLD, 256 << 20);
    mallopt(M_TRIM_THRESHOLD, 512 << 20);
#endif
    view_init(&a->view);
    a->view.help_lines = app_help(&a->view.help_count);
    a->cfg = *cfg;
    a->vocab = src->vocab;
    a->weights = src->weights;
    a->qkv = src->qkv;
    a->family = src->family;
    a->model = src->model;
    a->top = src->top;
    a->bos = src->bos;
    a->weights_dir = weights_dir;
    a->export_dir = APP_DEFAULT_EXPORT_DIR;
    a->sentence = strdup(src->sentence != NULL ? src->sentence : "");
    a->source = src->source != NULL ? strdup(src->source) : NULL;
    a->source_vocab = src->source_vocab;
    if (a->sentence == NULL || (src->source != NULL && a->source == NULL)) {
        free(a->sentence);
        free(a->source);
        return attn_fail(err, ATTN_ENOMEM, "out of memory");
    }
    st = pipeline_create(&a->pipe, cfg, src, err);
    if (st != ATTN_OK) {
        free(a->sentence);
        a->sentence = NULL;
        free(a->source);
        a->source = NULL;
        view_destroy(&a->view);
        return st;
    }
    /* --ablate's heads, the app's own from here: a toggles them. */
    app_take_ablated(a, src->ablated);
    /* Start at the beginning of the pipeline (Q, K and V when they are given): Space goes on. */
    a->view.stage = VIEW_EMBEDDINGS;
    view_clamp(&a->view, &a->pipe);
    /* Say once, plainly, what the toy's numbers are (item 9 of issue 13). */
    if (a->pipe.params.count > 0 && !a->pipe.params_given)
        app_say(a, "untrained weights drawn from seed %llu: the patterns show how attention "
                   "computes, not what words mean. Space: next stage, ?: help",
                (unsigned long long)cfg->seed);
    else if (src->model != NULL && src->model->note[0] != '\0')
        app_say(a, "%s", src->model->note);
    else
        app_say(a, "Space: next stage, ?: help");
    return ATTN_OK;
}

void
app_take_ablated(struct app *a, const unsigned char *ablated)
{
    free(a->ablated);
    a->ablated = NULL;
    if (ablated != NULL && pipeline_gpt2(&a->pipe) != NULL) {
        const size_t n = (size_t)a->pipe.layers * (size_t)a->pipe.st.shape.heads;
        a->ablated = malloc(n);
        if (a->ablated != NULL)
            memcpy(a->ablated, ablated, n);
    }
}

void
app_free_picks(struct app *a)
{
    for (int i = 0; i < a->pick_count; i++) {
        free(a->picks[i]);
        free(a->pick_titles[i]);
    }
    free(a->picks);
    free(a->pick_titles);
    a->picks = NULL;
    a->pick_titles = NULL;
    a->pick_count = 0;
}

void
app_destroy(struct app *a)
{
    if (a->walking)
        walkthrough_destroy(&a->walk);
    if (a->have_res)
        walk_resources_destroy(&a->res);
    app_free_picks(a);
    pipeline_destroy(&a->pipe);
    view_destroy(&a->view);
    free(a->sentence);
    free(a->source);
    free(a->narration);
    free(a->edit);
    free(a->ablated);
    free((void *)a->step_titles);
    memset(a, 0, sizeof *a);
}

void
app_render(struct app *a, struct grid *g)
{
    a->view.edit_text = a->edit;
    a->view.edit_cursor = a->edit_cursor;
    view_render(&a->view, &a->pipe, g);
}

/* ------------------------------------------------------------------ knobs */

/*
 * Turns knob k one step (dir 1 or -1) and says what changed.  A knob that
 * does not apply says why; one at the end of its range says so.
 */
static void
turn(struct app *a, const struct knob *k, int dir)
{
    struct attention_config c = a->cfg;
    char msg[sizeof a->message];
    int r;

    msg[0] = '\0';
    if (!knob_applies(k, &a->pipe)) {
        app_say(a, "--%s does not apply to a trained model: its weights fix the attention "
                   "(m, / and < > do apply)",
                k->options[0].name);
        a->view.message_is_error = true;
        return;
    }
    r = knob_step(k, &c, dir, &a->pipe, msg, sizeof msg);
    if (r < 0) {
        app_complain(a, msg);
        return;
    }
    if (r == 0)
        return;
    if (app_rebuild(a, &c, a->sentence) == 0 && a->view.message == NULL) {
        knob_said(k, &a->pipe, msg, sizeof msg);
        app_say(a, "%s", msg);
    }
}

/* , and .: a model's previous or next layer (the book's classes have one). */
static void
step_layer(struct app *a, int dir)
{
    const int to = a->pipe.layer + dir;
    struct attn_error err;

    if (a->pipe.layers <= 1) {
        app_say(a, "one layer here: , and . step through a trained model's layers (--model)");
        return;
    }
    if (to < 0 || to >= a->pipe.layers) {
        app_say(a, "layer %d is the %s (layers 0 to %d)", a->pipe.layer, dir < 0 ? "first" : "last",
                a->pipe.layers - 1);
        return;
    }
    if (pipeline_select_layer(&a->pipe, to, &err) != ATTN_OK) {
        app_complain(a, err.msg);
        return;
    }
    view_clamp(&a->view, &a->pipe);
    app_say(a, "layer %d of 0-%d", to, a->pipe.layers - 1);
}

static void export_current(struct app *a, int all);

/* The sentence view's keys: the query token, the head, the layer. */
static void
text_view_key(struct app *a, int key)
{
    struct view *v = &a->view;
    const int heads = a->pipe.st.shape.heads;

    v->message = NULL;
    switch (key) {
    case APP_KEY_LEFT:
        v->cursor_row -= v->cursor_row > 0;
        break;
    case APP_KEY_RIGHT:
        v->cursor_row += v->cursor_row + 1 < a->pipe.st.nq;
        break;
    case APP_KEY_TAB:
    case APP_KEY_BACKTAB:
        v->head = (v->head + (key == APP_KEY_TAB ? 1 : heads - 1)) % heads;
        break;
    case ',':
    case '.':
        step_layer(a, key == '.' ? 1 : -1);
        break;
    case 'g':
        v->grid_heads = !v->grid_heads;
        break;
    case 'x':
    case 'X':
        export_current(a, key == 'X');
        break;
    case 'T':
    case APP_KEY_ESCAPE:
        v->screen = SCREEN_STAGE;
        view_clamp(v, &a->pipe);
        break;
    case 'q':
        a->quit = true;
        break;
    case '?':
        v->screen = SCREEN_STAGE;
        v->help = true;
        break;
    default:
        app_say(a, "in the sentence view: Left and Right pick the query, Tab the head, g their "
                   "mean, T or Esc goes back");
        break;
    }
}

/* The model map's keys: a head with the arrows, a measure with Tab, Enter opens the head. */
static void
map_key(struct app *a, int key)
{
    struct view *v = &a->view;
    const int heads = a->pipe.st.shape.heads;
    struct attn_error err;

    v->message = NULL;
    switch (key) {
    case APP_KEY_UP:
        v->map_row -= v->map_row > 0;
        break;
    case APP_KEY_DOWN:
        v->map_row += v->map_row + 1 < a->pipe.layers;
        break;
    case APP_KEY_LEFT:
        v->map_col -= v->map_col > 0;
        break;
    case APP_KEY_RIGHT:
        v->map_col += v->map_col + 1 < heads;
        break;
    case APP_KEY_TAB:
        v->map_measure = (v->map_measure + 1) % (VIEW_MAP_HEATMAPS + 1);
        break;
    case APP_KEY_BACKTAB:
        v->map_measure = (v->map_measure + VIEW_MAP_HEATMAPS) % (VIEW_MAP_HEATMAPS + 1);
        break;
    case APP_KEY_ENTER:
        if (pipeline_select_layer(&a->pipe, v->map_row, &err) != ATTN_OK) {
            app_complain(a, err.msg);
            break;
        }
        v->head = v->map_col;
        v->stage = VIEW_WEIGHTS;
        v->grid_heads = false;
        v->screen = SCREEN_STAGE;
        view_clamp(v, &a->pipe);
        app_say(a, "layer %d, head %d", v->map_row, v->map_col);
        break;
    case 'L':
    case APP_KEY_ESCAPE:
        v->screen = SCREEN_STAGE;
        break;
    case 'x':
    case 'X':
        export_current(a, key == 'X');
        break;
    case 'q':
        a->quit = true;
        break;
    case '?':
        v->screen = SCREEN_STAGE;
        v->help = true;
        break;
    default:
        app_say(a, "in the map: arrows pick a head, Tab a measure, Enter opens it, L or Esc goes back");
        break;
    }
}

/* a: zero the context of the head shown (a model's), or bring it back, and recompute. */
static void
ablate_head(struct app *a)
{
    const struct gpt2_state *g = pipeline_gpt2(&a->pipe);
    const int heads = a->pipe.st.shape.heads;
    size_t at;
    char next[64];

    if (g == NULL) {
        app_say(a, "a ablates a trained model's head (--model): the book's classes have none to "
                   "learn from");
        return;
    }
    if (a->ablated == NULL) {
        a->ablated = calloc((size_t)a->pipe.layers * (size_t)heads, 1);
        if (a->ablated == NULL) {
            app_complain(a, "out of memory");
            return;
        }
    }
    at = (size_t)a->pipe.layer * (size_t)heads + (size_t)a->view.head;
    a->ablated[at] ^= 1;
    if (app_rebuild(a, &a->cfg, a->sentence) != 0) {
        a->ablated[at] ^= 1;
        return;
    }
    g = pipeline_gpt2(&a->pipe);
    model_token_display(g->model, g->run.top_ids[(size_t)(g->run.n - 1) * (size_t)g->run.top],
                        next, sizeof next);
    app_say(a, "head %d of layer %d %s: the next token is now %s (%.0f%%)", a->view.head,
            a->pipe.layer, a->ablated[at] ? "ablated (its context zeroed)" : "back",
            g->run.top > 0 ? next : "(none asked for)",
            g->run.top > 0 ? 100.0 * (double)g->run.top_probs[(size_t)(g->run.n - 1) * (size_t)g->run.top]
                           : 0.0);
}

/* ---------------------------------------------------------------- export */

/* x on the parameters: the ones shown (every head's, as --export writes them). */
static void
export_shown_parameters(struct app *a)
{
    struct pipeline_selection sel[8];
    struct attn_error err;
    int n = 0;
    int written = 0;
    const bool out = a->view.stage == VIEW_OUTPUT;

    for (int i = 0; i < a->pipe.params.count && n < 8; i++) {
        const struct param *pa = &a->pipe.params.p[i];
        /* The wrapper's heads have their own (set = head); the others one set, 0. */
        bool heads_own = params_find(&a->pipe.params, pa->role, a->view.head, false) != NULL;
        if ((pa->role == PARAM_OUT) == out && pa->set == (heads_own ? a->view.head : 0)) {
            sel[n].stage = STAGE_OUTPUT;
            sel[n].head = -1;
            sel[n].param = pa;
            n++;
        }
    }
    if (export_selection(&a->pipe, sel, n, a->export_dir, &written, &err) != ATTN_OK) {
        app_complain(a, err.msg);
        return;
    }
    app_say(a, "wrote %d parameter file%s (%s.csv ...) into %s/", written, written == 1 ? "" : "s",
            sel[0].param->name, a->export_dir);
}

/*
 * x on a trained model: what the screen shows, named as --export names it
 * (the stage shown in its layer's folder, the map as heads.csv, the
 * predictions as next.csv and lens.csv), beside the files already there.
 */
static void
export_model_shown(struct app *a)
{
    const struct view *v = &a->view;
    struct attn_error err;
    int written = 0;
    enum attn_status st;
    enum pipeline_stage ps = (v->screen == SCREEN_SENTENCE) ? STAGE_WEIGHTS
                                          : explain_pipeline_stage(&a->pipe, v->stage, false);
    char first[64];

    if ((v->screen == SCREEN_MAP)) {
        st = export_model_view(&a->pipe, EXPORT_MODEL_MAP, ps, -1, -1, a->export_dir, &written, &err);
        snprintf(first, sizeof first, "heads.csv (the map)");
    } else if ((v->screen == SCREEN_NEXT)) {
        st = export_model_view(&a->pipe, EXPORT_MODEL_NEXT, ps, -1, -1, a->export_dir, &written,
                               &err);
        snprintf(first, sizeof first, "next.csv and lens.csv");
    } else if (v->stage == VIEW_QKV && !(v->screen == SCREEN_SENTENCE)) {
        st = export_model_view(&a->pipe, EXPORT_MODEL_QKV, ps, -1, -1, a->export_dir, &written,
                               &err);
        snprintf(first, sizeof first, "layer%d/queries.csv, keys.csv, values.csv", a->pipe.layer);
    } else {
        /* The sentence view shows one head's weights; a stage, every head (as x does on the toy). */
        const int head = (v->screen == SCREEN_SENTENCE) ? v->head : -1;
        char name[48];
        st = export_model_view(&a->pipe, EXPORT_MODEL_STAGE, ps, head, -1, a->export_dir,
                               &written, &err);
        export_file_name(ps, head < 0 ? 0 : head, name, sizeof name);
        if (pipeline_stage_per_layer(&a->pipe, ps))
            snprintf(first, sizeof first, "layer%d/%.40s%s", a->pipe.layer, name,
                     head < 0 && pipeline_stage_per_head(ps) ? " ..." : "");
        else
            snprintf(first, sizeof first, "%.40s", name);
    }
    if (st != ATTN_OK) {
        app_complain(a, err.msg);
        return;
    }
    app_say(a, "wrote %s into %s/", first, a->export_dir);
}

static void
export_current(struct app *a, int all)
{
    struct attn_error err;
    int written = 0;
    enum attn_status st;

    if (!all && a->model != NULL) {
        export_model_shown(a);
        return;
    }
    if (all) {
        st = a->model != NULL ? export_model(&a->pipe, NULL, 0, a->export_dir, &written, &err)
                              : export_all(&a->pipe, a->export_dir, &written, &err);
    } else {
        enum pipeline_stage ps = explain_pipeline_stage(&a->pipe, a->view.stage, false);
        if (view_params_shown(&a->view, &a->pipe, a->view.stage)) {
            export_shown_parameters(a);
            return;
        }
        if (a->view.stage == VIEW_QKV) {
            struct pipeline_selection sel[3] = { { STAGE_QUERIES, -1, NULL },
                                                 { STAGE_KEYS, -1, NULL },
                                                 { STAGE_VALUES, -1, NULL } };
            st = export_selection(&a->pipe, sel, 3, a->export_dir, &written, &err);
        } else {
            st = export_stage(&a->pipe, ps, a->export_dir, &written, &err);
        }
    }
    if (st != ATTN_OK) {
        app_complain(a, err.msg);
        return;
    }
    if (all) {
        app_say(a, "wrote %d file%s into %s/", written, written == 1 ? "" : "s", a->export_dir);
    } else {
        char name[64];
        enum pipeline_stage ps = explain_pipeline_stage(&a->pipe, a->view.stage, false);
        export_file_name(ps, 0, name, sizeof name);
        if (a->view.stage == VIEW_QKV)
            app_say(a, "wrote queries.csv, keys.csv, values.csv into %s/", a->export_dir);
        else if (written > 1)
            app_say(a, "wrote %d files (%s.h0.csv ...) into %s/", written, pipeline_stage_name(ps),
                a->export_dir);
        else
            app_say(a, "wrote %s into %s/", name, a->export_dir);
    }
}

/* ---------------------------------------------------------------- cursor */

static int
page_rows(const struct app *a)
{
    int rows = a->view.frame.geo[0].vis_rows;
    return rows > 1 ? rows - 1 : 1;
}

static void
help_key(struct app *a, int key)
{
    struct view *v = &a->view;

    switch (key) {
    case APP_KEY_UP:
        if (v->help_scroll > 0)
            v->help_scroll--;
        break;
    case APP_KEY_DOWN:
        if (v->help_scroll < v->frame.help_rows - v->frame.help_page)
            v->help_scroll++;
        break;
    case APP_KEY_PAGE_UP:
        v->help_scroll -= v->frame.help_page > 1 ? v->frame.help_page - 1 : 1;
        if (v->help_scroll < 0)
            v->help_scroll = 0;
        break;
    case APP_KEY_PAGE_DOWN:
    case ' ':
        /* The view clamps it to the last page when it draws. */
        v->help_scroll += v->frame.help_page > 1 ? v->frame.help_page - 1 : 1;
        break;
    case APP_KEY_HOME:
        v->help_scroll = 0;
        break;
    case APP_KEY_END:
        v->help_scroll = v->frame.help_rows;
        break;
    case 'q':
        a->quit = true;
        break;
    default:
        v->help = false;
        v->help_scroll = 0;
        break;
    }
}

/* Keys outside the editor and the help screen that only touch the view. */
/*
 * W: the parameters the stage uses, as a matrix of their own: on the output
 * stage out_proj, elsewhere W_query, W_key and W_value (on the Q K V stage);
 * W again goes back to the stage's own numbers.
 */
static void
show_parameters(struct app *a)
{
    struct view *v = &a->view;
    const enum view_stage at = v->stage == VIEW_OUTPUT ? VIEW_OUTPUT : VIEW_QKV;

    char why[160];

    if (a->model != NULL) {
        app_complain(a, "W shows the book's classes' parameters; a trained model's stay in its "
                        "file: the panel below shows each cell's products with them");
        return;
    }
    if (a->pipe.params.count == 0) {
        snprintf(why, sizeof why, "%s has no trainable parameters: v picks a variant that has",
                 attention_variant_name(a->cfg.variant));
        app_complain(a, why);
        return;
    }
    if (at == VIEW_OUTPUT && !attention_variant_has_out_proj(a->cfg.variant)) {
        snprintf(why, sizeof why,
                 "%s has no output projection: W on any other stage shows W_query, W_key and "
                 "W_value",
                 attention_variant_name(a->cfg.variant));
        app_complain(a, why);
        return;
    }
    v->param_matrix = !(v->param_matrix && v->param_stage == at && v->stage == at);
    v->param_stage = at;
    v->stage = at;
}

/* ] and [: the next or previous page of a narration longer than its room. */
static void
narration_page(struct app *a, int dir)
{
    struct view *v = &a->view;
    const int page = v->frame.narration_page > 0 ? v->frame.narration_page : 1;

    if (v->narration == NULL) {
        app_say(a, "] and [ page a lesson's narration: w chooses a lesson");
        return;
    }
    if (v->frame.narration_rows <= page) {
        app_say(a, "the whole narration is on the screen");
        return;
    }
    if (dir > 0 && v->narration_scroll + page >= v->frame.narration_rows) {
        app_say(a, "that is the narration's end: [ goes back");
        return;
    }
    if (dir < 0 && v->narration_scroll == 0) {
        app_say(a, "that is the narration's start: ] goes on");
        return;
    }
    v->narration_scroll += dir * page;
    if (v->narration_scroll < 0)
        v->narration_scroll = 0;
}

static void
view_key(struct app *a, int key)
{
    struct view *v = &a->view;

    switch (key) {
    case ' ':
    case 'n':
        if (!view_step_stage(v, &a->pipe, 1))
            app_say(a, "%s is the last stage: p or Backspace goes back, 1 to the start",
                    explain_title(v->stage));
        break;
    case APP_KEY_BACKSPACE:
    case 'p':
        if (!view_step_stage(v, &a->pipe, -1))
            app_say(a, "%s is the first stage: Space or n goes on", explain_title(v->stage));
        break;
    case APP_KEY_UP:
        v->cursor_row--;
        break;
    case APP_KEY_DOWN:
        v->cursor_row++;
        break;
    case APP_KEY_LEFT:
        v->cursor_col--;
        break;
    case APP_KEY_RIGHT:
        v->cursor_col++;
        break;
    case APP_KEY_HOME:
        v->cursor_col = 0;
        break;
    case APP_KEY_END:
        v->cursor_col = v->frame.cols - 1;
        break;
    case APP_KEY_PAGE_UP:
        v->cursor_row -= page_rows(a);
        break;
    case APP_KEY_PAGE_DOWN:
        v->cursor_row += page_rows(a);
        break;
    case APP_KEY_TAB:
    case APP_KEY_BACKTAB: {
        int heads = a->pipe.st.shape.heads;
        v->head = (v->head + (key == APP_KEY_TAB ? 1 : heads - 1)) % heads;
        if (heads == 1)
            app_say(a, "%s has one head", attention_variant_name(a->cfg.variant));
        else if (!explain_stage_per_head(v->stage))
            app_say(a, "head %d of %d: %s is not split by head; Tab shows on stages 2 to 8",
                    v->head, heads, explain_title(v->stage));
        break;
    }
    case 'g':
        v->grid_heads = !v->grid_heads;
        if (v->grid_heads && a->pipe.st.shape.heads == 1)
            app_say(a, "one head: the grid shows it alone");
        else if (v->grid_heads && !explain_stage_per_head(v->stage))
            app_say(a, "grid on: it shows on the per-head stages (2-8)");
        break;
    case 'M':
        v->mask_matrix = v->stage != VIEW_MASK || !v->mask_matrix;
        v->stage = VIEW_MASK;
        break;
    case 'W':
        show_parameters(a);
        break;
    case 'i':
        v->hide_panel = !v->hide_panel;
        if (v->hide_panel)
            app_say(a, "the panel that explains the cell is hidden: i shows it again");
        break;
    case ']':
    case '[':
        narration_page(a, key == ']' ? 1 : -1);
        break;
    default:
        break;
    }
    view_clamp(v, &a->pipe);
}

/* Keys that look around without changing what a walkthrough step shows. */
static bool
is_view_only(int key)
{
    switch (key) {
    case APP_KEY_UP:
    case APP_KEY_DOWN:
    case APP_KEY_LEFT:
    case APP_KEY_RIGHT:
    case APP_KEY_HOME:
    case APP_KEY_END:
    case APP_KEY_PAGE_UP:
    case APP_KEY_PAGE_DOWN:
    case APP_KEY_TAB:
    case APP_KEY_BACKTAB:
    case APP_KEY_ESCAPE:
    case 'g':
    case 'i':
    case '[':
    case ']':
    case '?':
    case 'q':
    case 'w':
    case 'z':
    case 'x':
    case 'X':
        return true;
    default:
        return false;
    }
}

void
app_key(struct app *a, int key)
{
    struct view *v = &a->view;
    enum view_stage jump;
    const struct knob *knob;
    int dir;

    /* Nothing can be seen on a screen too small to draw on: only q works, as it says. */
    if (v->frame.too_small) {
        if (key == 'q')
            a->quit = true;
        return;
    }
    if (v->editing) {
        v->message = NULL;
        app_edit_key(a, key);
        return;
    }
    if (v->help) {
        help_key(a, key);
        return;
    }
    if (v->picker) {
        app_picker_key(a, key);
        return;
    }
    if (a->walking && ((v->screen == SCREEN_MAP) || (v->screen == SCREEN_SENTENCE) || (v->screen == SCREEN_NEXT))) {
        /* A lesson's step on the map, the sentence or the predictions: its keys still walk it. */
        if (v->following && (key == ' ' || key == 'n' || key == APP_KEY_BACKSPACE || key == 'p')) {
            app_step_to(a, v->step + (key == ' ' || key == 'n' ? 1 : -1));
            return;
        }
        if (key == APP_KEY_ENTER && !(v->screen == SCREEN_MAP)) {
            app_step_to(a, v->step);
            return;
        }
        if (key != 'q' && key != '?')
            v->following = false;
    }
    if ((v->screen == SCREEN_MAP)) {
        map_key(a, key);
        return;
    }
    if ((v->screen == SCREEN_SENTENCE)) {
        text_view_key(a, key);
        return;
    }
    if ((v->screen == SCREEN_NEXT)) {
        v->message = NULL;
        if (key == 'N' || key == APP_KEY_ESCAPE)
            v->screen = SCREEN_STAGE;
        else if (key == 'q')
            a->quit = true;
        else if (key == 'x' || key == 'X')
            export_current(a, key == 'X');
        else
            app_say(a, "the predictions: N or Esc goes back, x exports them");
        return;
    }
    v->message = NULL;
    if (a->walking) {
        /* On the script, Space and Backspace walk the steps; Enter comes back to it. */
        if (v->following && (key == ' ' || key == 'n')) {
            app_step_to(a, v->step + 1);
            return;
        }
        if (v->following && (key == APP_KEY_BACKSPACE || key == 'p')) {
            app_step_to(a, v->step - 1);
            return;
        }
        if (key == APP_KEY_ENTER) {
            app_step_to(a, v->step);
            return;
        }
        /* A presenter's clicker sends PgDn/PgUp (some Right/Left): steps, in presentation mode. */
        if (v->following && v->present &&
            (key == APP_KEY_PAGE_DOWN || key == APP_KEY_RIGHT || key == APP_KEY_PAGE_UP ||
             key == APP_KEY_LEFT)) {
            app_step_to(a, v->step + (key == APP_KEY_PAGE_DOWN || key == APP_KEY_RIGHT ? 1 : -1));
            return;
        }
        if (key == 'l') {
            app_open_step_list(a);
            return;
        }
        if (!is_view_only(key))
            v->following = false;
    }
    if (explain_stage_for_key(key, &jump) == 0) {
        /* Dropout's key finds it where the variant has it: the notes' acts on the output. */
        if (jump == VIEW_DROPOUT && !explain_stage_present(&a->pipe, jump) &&
            explain_stage_present(&a->pipe, VIEW_OUTDROP))
            jump = VIEW_OUTDROP;
        v->stage = jump;
        view_clamp(v, &a->pipe);
        return;
    }
    if (key == ',' || key == '.') {
        step_layer(a, key == '.' ? 1 : -1);
        return;
    }
    if (key == 'a') {
        ablate_head(a);
        return;
    }
    if (key == 'N') {
        if (pipeline_gpt2(&a->pipe) == NULL) {
            app_say(a, "N shows a trained model's next-token predictions (--model)");
            return;
        }
        v->screen = SCREEN_NEXT;
        return;
    }
    if (key == 'T') {
        if (a->pipe.qkv_given) {
            app_say(a, "T shows the sentence; Q, K and V are given directly here");
            return;
        }
        v->screen = SCREEN_SENTENCE;
        return;
    }
    if (key == 'L') {
        if (pipeline_gpt2(&a->pipe) == NULL) {
            app_say(a, "L shows a trained model's map of layers and heads (--model)");
            return;
        }
        v->screen = SCREEN_MAP;
        v->map_row = a->pipe.layer;
        v->map_col = v->head;
        return;
    }
    knob = knob_for_key(key, &dir);
    if (knob != NULL) {
        turn(a, knob, dir);
        return;
    }
    switch (key) {
    case 'x':
    case 'X':
        export_current(a, key == 'X');
        break;
    case 'q':
        a->quit = true;
        break;
    case '?':
        v->help = true;
        break;
    case 'w':
        app_open_picker(a);
        break;
    case 'z':
        v->present = !v->present;
        break;
    case 'e':
        if (a->qkv != NULL) {
            app_complain(a, "Q, K and V are given directly: there is no sentence to edit");
            break;
        }
        if (app_edit_start(a, a->sentence) == 0) {
            v->editing = true;
            v->editing_source = false;
        }
        break;
    case 'E':
        if (a->source == NULL) {
            app_complain(a, "E edits the source sentence of cross-attention (start with --source "
                            "TEXT); e edits the sentence");
            break;
        }
        if (app_edit_start(a, a->source) == 0) {
            v->editing = true;
            v->editing_source = true;
        }
        break;
    default:
        view_key(a, key);
        break;
    }
}

void
app_click(struct app *a, int x, int y)
{
    struct view *v = &a->view;

    if (v->help || v->editing)
        return;
    for (int t = 0; t < v->frame.tiles; t++) {
        int row;
        int col;
        if (heatmap_hit(&v->frame.geo[t], x, y, &row, &col) == 0) {
            v->cursor_row = row;
            v->cursor_col = col;
            v->head = v->frame.tile_head[t];
            view_clamp(v, &a->pipe);
            return;
        }
    }
    {
        int s = view_stage_at(v, x, y);
        if (s >= 0) {
            if (a->walking && s != (int)v->stage)
                v->following = false; /* off the script, as a stage key leaves it */
            v->stage = (enum view_stage)s;
            v->message = NULL;
            view_clamp(v, &a->pipe);
            return;
        }
    }
    app_say(a, "a click on a cell explains it; one on the stage bar goes to that stage");
}
