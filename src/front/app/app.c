/* app.c: the view's state, its pipelines, the knobs and a model's layers (see app.h). */
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
#include <time.h>

#include "attnscope/families/model/model_export.h"
#include "attnscope/pipeline/export.h"
#include "attnscope/families/model/family_model.h"
#include "attnscope/families/model/generate.h"
#include "attnscope/families/model/headmap.h"
#include "attnscope/pipeline/knob.h"
#include "render/text.h"
#include "front/app/app_keys.h"

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

void
app_source(const struct app *a, const char *sentence, const char *source,
            const unsigned char *ablated, struct pipeline_source *src)
{
    struct pipeline_source base = a->src;

    base.sentence = sentence;
    base.source = source;
    base.ablated = ablated;
    base.experts_off = a->switches.mask[SWITCH_EXPERT_OFF];
    base.layer = a->pipe.layer; /* a model's new pipeline shows the layer the old one did */
    *src = base;
    /* While the model has written, its text is its ids (not always what the text encodes to). */
    if (a->writing != NULL && a->writing->n > 0 && sentence == a->sentence && source == a->source)
        generation_source(a->writing, &base, &a->pipe, src);
}

int
app_rebuild_with(struct app *a, const struct attention_config *cfg, const char *sentence,
                 const char *source)
{
    struct pipeline next;
    struct pipeline_source src;
    const bool new_text = sentence != a->sentence || source != a->source;
    int result;
    struct attn_error err;

    /* The writing's knobs change no stage: the next draw only. */
    if (!new_text && app_writing_knobs(a, cfg, &result))
        return result;
    app_source(a, sentence, source, a->switches.mask[SWITCH_ABLATE], &src);
    if (a->src.weights != NULL) {
        struct attention_params layout;
        if (params_create(&layout, cfg, a->src.vocab->dim, &err) == ATTN_OK) {
            if (!params_same_layout(&layout, a->src.weights))
                src.weights = NULL;
            params_destroy(&layout);
        }
    }
    attn_error_clear(&err);
    if (sentence == a->sentence && source == a->source && src.weights == a->src.weights &&
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
    if (new_text && a->writing != NULL)
        app_end_writing(a); /* the text was edited: read again as typed */
    else if (src.last_logits != NULL && a->writing != NULL)
        generation_rebuilt(a->writing, &a->pipe); /* the next token's logits under the new knobs */
    hold_text(&a->sentence, sentence);
    hold_text(&a->source, source);
    view_clamp(&a->view, &a->pipe);
    if (a->src.weights != NULL && src.weights == NULL)
        app_say(a, "the weights from %s do not fit this configuration: drawn from seed %llu",
            a->weights_dir ? a->weights_dir : "--weights", (unsigned long long)cfg->seed);
    return 0;
}

/* Whether the layer shown is a mixture of experts (its router on screen). */
static bool
moe_layer_shown(const struct app *a)
{
    return a->pipe.decoder != NULL && decoder_sparse(a->pipe.decoder, a->pipe.layer);
}

/* Whether a head of the trained model is ablated. */
static bool
any_ablated(const struct app *a)
{
    const size_t n = a->pipe.decoder != NULL
                         ? (size_t)a->pipe.layers * (size_t)decoder_head_slots(a->pipe.decoder)
                         : 0;

    for (size_t i = 0; a->switches.mask[SWITCH_ABLATE] != NULL && i < n; i++)
        if (a->switches.mask[SWITCH_ABLATE][i])
            return true;
    return false;
}

/*
 * The predictions of the same text without the ablated heads, kept for the
 * N screen's before and after: one more forward, made once per pipeline.
 */
static void
make_baseline(struct app *a)
{
    struct pipeline plain;
    struct pipeline_source src;
    const struct family_model_state *g;
    struct attn_error err;
    size_t count;

    free(a->base_ids);
    free(a->base_probs);
    a->base_ids = NULL;
    a->base_probs = NULL;
    a->base_n = 0;
    a->base_generation = a->pipe.generation;
    app_source(a, a->sentence, a->source, NULL, &src);
    src.last_logits = NULL; /* (the writing's logits are the shown pipeline's) */
    if (pipeline_create(&plain, &a->cfg, &src, &err) != ATTN_OK)
        return; /* (the N screen then shows no comparison) */
    g = pipeline_decoder(&plain);
    (void)family_model_next_tokens(&plain); /* (every row's, compared on the N screen) */
    count = (size_t)g->run.n * (size_t)g->run.top;
    a->base_ids = malloc(count * sizeof *a->base_ids + 1);
    a->base_probs = malloc(count * sizeof *a->base_probs + 1);
    if (a->base_ids != NULL && a->base_probs != NULL) {
        memcpy(a->base_ids, g->run.top_ids, count * sizeof *a->base_ids);
        memcpy(a->base_probs, g->run.top_probs, count * sizeof *a->base_probs);
        a->base_n = g->run.n;
        a->base_top = g->run.top;
    }
    pipeline_destroy(&plain);
}

void
app_settle(struct app *a)
{
    app_compare_sync(a);
    /* The KV cache shown beside what it saves: the window's forward without it, measured once. */
    if (a->view.screen == SCREEN_STAGE && a->view.stage == VIEW_CACHE && a->writing != NULL &&
        a->writing->written > 0 && !a->writing_on &&
        a->writing->uncached_n != a->writing->n - a->writing->first)
        (void)generation_measure_uncached(a->writing, NULL);
    if (a->view.screen == SCREEN_NEXT && pipeline_decoder(&a->pipe) != NULL && any_ablated(a) &&
        (a->base_generation != a->pipe.generation || a->base_ids == NULL))
        make_baseline(a);
    /* Two models' divergences, made once per pair here (the worker's), not in the drawing. */
    if (a->view.compare != NULL && a->view.side == COMPARE_DIFFERENCE &&
        (a->view.screen == SCREEN_MAP || a->view.screen == SCREEN_NEXT)) {
        const size_t n = a->view.screen == SCREEN_MAP
                             ? (size_t)a->pipe.layers * (size_t)head_map_heads(&a->pipe)
                             : (size_t)pipeline_decoder(&a->pipe)->run.n;
        float *out = malloc((n + 1) * sizeof *out);
        /* (kept with the comparison; on no memory the drawing tries again and says so) */
        if (out != NULL && a->view.screen == SCREEN_MAP)
            (void)compare_heads_changed(a->view.compare, out);
        else if (out != NULL)
            (void)compare_next_kl(a->view.compare, out, NULL);
        free(out);
    }
    if (a->view.screen == SCREEN_MAP && pipeline_decoder(&a->pipe) != NULL) {
        float *measures = malloc(((size_t)a->pipe.layers * (size_t)head_map_heads(&a->pipe) + 1) *
                                 sizeof *measures);
        /* (kept with the pipeline; on no memory the drawing tries again and says so) */
        if (measures != NULL)
            (void)head_measures(&a->pipe, MEASURE_ENTROPY, measures);
        free(measures);
    }
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
    a->src = *src;
    /*
     * What one pipeline alone is made with is not kept: the text (the app's
     * own copies below), the switches' masks (the app's, once the pipeline
     * is made), the ids written, where the last logits go, the room, the
     * layer shown and --print's leaner runs.
     */
    a->src.sentence = NULL;
    a->src.source = NULL;
    a->src.ablated = NULL;
    a->src.experts_off = NULL;
    a->src.ids = NULL;
    a->src.n_ids = 0;
    a->src.last_logits = NULL;
    a->src.layer = 0;
    a->src.room = 0;
    a->src.no_attention = false;
    a->src.lean = false;
    a->weights_dir = weights_dir;
    a->export_dir = APP_DEFAULT_EXPORT_DIR;
    generate_end_one(&a->eos, -1, "");
    a->sentence = strdup(src->sentence != NULL ? src->sentence : "");
    a->source = src->source != NULL ? strdup(src->source) : NULL;
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
    app_take_experts_off(a, src->experts_off);
    /* Start at the beginning of the pipeline (Q, K and V when they are given): Space goes on. */
    a->view.stage = VIEW_EMBEDDINGS;
    view_clamp(&a->view, &a->pipe);
    /* Say once, plainly, what the toy's numbers are. */
    if (a->pipe.params.count > 0 && !a->pipe.params_given)
        app_say(a, "untrained weights drawn from seed %llu: the patterns show how attention "
                   "computes, not what words mean. Space: next stage, ?: help",
                (unsigned long long)cfg->seed);
    else if (src->model != NULL && src->model->note[0] != '\0')
        app_say(a, "%s", src->model->note);
    else if (src->model != NULL && strncmp(src->model->dec.format, "GGUF", 4) == 0) {
        /* What a local model's file holds: its quantization mix (the header line of --print). */
        const char *tok = strrchr(src->model->tokenizer, '/');
        const bool inside = model_tokenizer_inside(src->model);
        app_say(a, "%s, %s; its tokenizer %s%s. Space: next stage, ?: help", src->model->name,
                src->model->dec.format, inside ? "inside" : "from ",
                inside ? "" : tok != NULL ? tok + 1 : src->model->tokenizer);
    }
    else if (src->model != NULL && src->model->borrowed[0] != '\0')
        app_say(a, "%s. Space: next stage, ?: help", src->model->borrowed);
    else
        app_say(a, "Space: next stage, ?: help");
    return ATTN_OK;
}

void
app_take_ablated(struct app *a, const unsigned char *ablated)
{
    free(a->switches.mask[SWITCH_ABLATE]);
    a->switches.mask[SWITCH_ABLATE] = NULL;
    if (ablated != NULL && a->pipe.decoder != NULL) {
        const size_t n = (size_t)a->pipe.layers * (size_t)decoder_head_slots(a->pipe.decoder);
        a->switches.mask[SWITCH_ABLATE] = malloc(n);
        if (a->switches.mask[SWITCH_ABLATE] != NULL)
            memcpy(a->switches.mask[SWITCH_ABLATE], ablated, n);
    }
}

void
app_take_experts_off(struct app *a, const unsigned char *off)
{
    free(a->switches.mask[SWITCH_EXPERT_OFF]);
    a->switches.mask[SWITCH_EXPERT_OFF] = NULL;
    if (off != NULL && a->src.model != NULL) {
        const size_t n = (size_t)a->src.model->dec.cfg.n_layer * (size_t)a->src.model->dec.cfg.moe.n_experts;
        if ((a->switches.mask[SWITCH_EXPERT_OFF] = malloc(n)) != NULL)
            memcpy(a->switches.mask[SWITCH_EXPERT_OFF], off, n);
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
    app_end_writing(a);
    app_compare_close(a);
    pipeline_destroy(&a->pipe);
    view_destroy(&a->view);
    free(a->sentence);
    free(a->source);
    free(a->narration);
    free(a->narration_bare);
    free(a->edit);
    model_switch_masks_free(&a->switches);
    free(a->base_ids);
    free(a->base_probs);
    free((void *)a->step_titles);
    memset(a, 0, sizeof *a);
}

void
app_render(struct app *a, struct grid *g)
{
    app_compare_sync(a); /* (the second model follows every edit and knob) */
    a->view.edit_text = a->edit;
    a->view.edit_cursor = a->edit_cursor;
    /* A knob or an edit since the step was played: what its narration says may no longer hold. */
    a->view.narration_stale = a->view.narration != NULL && a->pipe.generation != a->step_generation;
    a->view.footer_items = app_footer(a->view.screen, &a->view.footer_count);
    /* The comparison only for the pipeline it was made for, with heads ablated. */
    a->view.base_n = 0;
    if (a->base_ids != NULL && a->base_generation == a->pipe.generation && any_ablated(a)) {
        a->view.base_ids = a->base_ids;
        a->view.base_probs = a->base_probs;
        a->view.base_n = a->base_n;
        a->view.base_top = a->base_top;
    }
    view_render(&a->view, &a->pipe, g);
}

/* ------------------------------------------------------------------ knobs */

/*
 * Turns knob k one step (dir 1 or -1) and says what changed.  A knob that
 * does not apply says why; one at the end of its range says so.
 */
void
app_turn(struct app *a, const struct knob *k, int dir)
{
    struct attention_config c = a->cfg;
    char msg[sizeof a->message];
    int r;

    msg[0] = '\0';
    if (!knob_applies(k, &a->pipe)) {
        knob_refusal(k, &a->pipe, msg, sizeof msg);
        app_complain(a, msg);
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

/*
 * :chat TEXT: the text as one user message in the model's chat template
 * (model_chat), with the assistant's turn begun, shown in place of the
 * text.  -1 (said why) without a model, a template, or a known one.
 */
static int
app_chat(struct app *a, const char *text)
{
    struct attn_error err;
    const char *kind = NULL;
    const bool bos = a->src.bos;
    char date[32];
    time_t now = time(NULL);
    struct tm tm;
    char *turn;

    if (a->src.model == NULL) {
        app_complain(a, "chat is a trained model's (--model): the book's classes have no chat "
                        "template");
        return -1;
    }
    if (text[0] == '\0') {
        app_complain(a, "chat takes the message: chat What is attention?");
        return -1;
    }
    strftime(date, sizeof date, "%d %b %Y", localtime_r(&now, &tm));
    turn = model_chat(a->src.model, text, date, &kind, &err);
    if (turn == NULL) {
        app_complain(a, strncmp(err.msg, "--", 2) == 0 ? err.msg + 2 : err.msg);
        return -1;
    }
    a->src.bos = false; /* (the template says what comes first) */
    if (app_rebuild(a, &a->cfg, turn) != 0) {
        a->src.bos = bos;
        free(turn);
        return -1;
    }
    free(turn);
    app_say(a, "chat: the message in the %s chat template (%s), the assistant's turn begun: G "
               "writes the answer", kind, a->src.model->chat_from);
    return 0;
}

/*
 * A knob set to a typed value, as its command-line option takes it
 * ("seed 789", "temperature 0.5", "--dropout 0.1", "mask off"): the
 * knob's own parser, then the same rebuild as its keys.  Returns -1 (said
 * why) when the text names no knob or a value it refuses.
 */
int
app_set_knob(struct app *a, const char *line)
{
    /* (a value as long as a path or a chat message: :compare PATH, :chat TEXT) */
    char name[64], value[4096], msg[sizeof a->message];
    struct attention_config c = a->cfg;
    const char *at = line;
    size_t len;

    while (*at == ' ')
        at++;
    /* An option's dashes ("--seed 3"), not a number's sign ("-1.0" is no head). */
    while (*at == '-' && !(at[1] >= '0' && at[1] <= '9'))
        at++;
    len = strcspn(at, " =");
    if (len == 0 || len >= sizeof name) {
        app_complain(a, "type a knob and its value (seed 789, temperature 0.5, mask off), where "
                        "to go (5.1, stage weights, query it) or a chat message (chat Hi); Esc "
                        "cancels");
        return -1;
    }
    memcpy(name, at, len);
    name[len] = '\0';
    at += len;
    at += strspn(at, " =");
    if (strlen(at) >= sizeof value) {
        app_say(a, "%s: the value is longer than %zu bytes", name, sizeof value - 1);
        a->view.message_is_error = true;
        return -1;
    }
    snprintf(value, sizeof value, "%s", at);
    for (size_t e = strlen(value); e > 0 && value[e - 1] == ' '; e--)
        value[e - 1] = '\0';
    /* Or a message in the model's chat template, as --chat: the text becomes the turn. */
    if (strcmp(name, "chat") == 0)
        return app_chat(a, value);
    /* Or a second model beside the first (compare PATH), or none (compare). */
    if (strcmp(name, "compare") == 0)
        return app_compare_command(a, value);
    /* Or where to look, as the command line says it: head 5.1 (or 5.1 alone), stage, view, query. */
    {
        struct app_start to = { NULL, NULL, NULL, NULL };
        struct attn_error err;
        const bool bare_head =
            ((name[0] >= '0' && name[0] <= '9') || (name[0] == '-' && name[1] >= '0' &&
                                                     name[1] <= '9')) &&
            value[0] == '\0';
        if (bare_head)
            to.head = name;
        else if (strcmp(name, "head") == 0)
            to.head = value;
        else if (strcmp(name, "stage") == 0)
            to.stage = value;
        else if (strcmp(name, "view") == 0)
            to.view = value;
        else if (strcmp(name, "query") == 0)
            to.query = value;
        if (to.head != NULL || to.stage != NULL || to.view != NULL || to.query != NULL) {
            if (!bare_head && value[0] == '\0') {
                app_say(a, "%s takes a value: head 5.1, stage weights, view map, query it", name);
                a->view.message_is_error = true;
                return -1;
            }
            if (app_open_at(a, &to, &err) != ATTN_OK) {
                /* (said as typed here: "head 1.9: ...", not the option "--head 1.9") */
                app_complain(a, strncmp(err.msg, "--", 2) == 0 ? err.msg + 2 : err.msg);
                return -1;
            }
            if (to.head != NULL)
                app_say(a, "layer %d, head %d", a->pipe.layer, a->view.head);
            return 0;
        }
    }
    for (int k = 0; k < KNOB_COUNT; k++)
        for (size_t o = 0; o < sizeof knob_table[k].options / sizeof knob_table[k].options[0]; o++) {
            const struct knob_option *opt = &knob_table[k].options[o];
            const struct knob *kn = &knob_table[k];
            if (opt->name == NULL || strcmp(opt->name, name) != 0)
                continue;
            if (!knob_applies(kn, &a->pipe)) {
                knob_refusal(kn, &a->pipe, msg, sizeof msg);
                app_complain(a, msg);
                return -1;
            }
            if (opt->metavar != NULL && value[0] == '\0') {
                app_say(a, "%s takes a value: %s %s", opt->name, opt->name, opt->metavar);
                a->view.message_is_error = true;
                return -1;
            }
            msg[0] = '\0';
            if (knob_parse(kn, &c, opt->name, opt->metavar != NULL ? value : opt->value, msg,
                           sizeof msg) != 0) {
                app_complain(a, msg);
                return -1;
            }
            if (app_rebuild(a, &c, a->sentence) != 0)
                return -1;
            if (a->view.message == NULL) {
                knob_said(kn, &a->pipe, msg, sizeof msg);
                app_say(a, "%s", msg);
            }
            return 0;
        }
    app_say(a, "no knob '%s': the names are the command line's options (seed, temperature, "
               "dropout, mask, heads, d-out, variant ...; attnscope --help lists them)", name);
    a->view.message_is_error = true;
    return -1;
}

/* , and .: a model's previous or next layer (the book's classes have one). */
void
app_step_layer(struct app *a, int key)
{
    const int dir = key == '.' ? 1 : -1;
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

/* a: zero the context of the head shown (a model's), or bring it back, and recompute. */
/*
 * What the model now predicts after the last token, for a knob's message:
 * the likeliest output's display in buf and its probability in percent, or
 * "(none asked for)" and 0 when the run keeps no next tokens.
 */
static const char *
last_prediction(const struct family_model_state *g, char *buf, size_t size, double *percent)
{
    const size_t last = (size_t)(g->run.n - 1) * (size_t)g->run.top;

    *percent = 0.0;
    if (g->run.top <= 0)
        return "(none asked for)";
    model_output_display(g->model, g->run.top_ids[last], buf, size);
    *percent = 100.0 * (double)g->run.top_probs[last];
    return buf;
}

/*
 * Flips switch id (switches.h) at (layer, index) and remakes the pipeline;
 * the flip undone when that fails.  True when it took: g is then the new
 * pipeline's and *next / *percent what the model now predicts.
 */
static bool
flip_switch(struct app *a, enum model_switch_id id, int layer, int index,
            const struct family_model_state **g, char *next, size_t size, double *percent,
            const char **said)
{
    char why[160];
    const int r = model_switch_flip((*g)->model, &a->switches, &a->src.sinks_off, id, layer,
                                    index, why, sizeof why);

    if (r < 0)
        app_complain(a, "out of memory");
    else if (r == 0 && why[0] != '\0')
        app_say(a, "%s", why);
    if (r <= 0)
        return false;
    if (app_rebuild(a, &a->cfg, a->sentence) != 0) {
        (void)model_switch_flip((*g)->model, &a->switches, &a->src.sinks_off, id, layer, index,
                                why, sizeof why);
        return false;
    }
    *g = pipeline_decoder(&a->pipe);
    *said = last_prediction(*g, next, size, percent);
    return true;
}

/* What the model now predicts is a class or a next token. */
static const char *
predicted(const struct family_model_state *g)
{
    return model_is_classifier(g->model) ? "class" : "next token";
}

void
app_ablate(struct app *a, int key)
{
    const struct family_model_state *g = pipeline_decoder(&a->pipe);
    const int layer = a->pipe.layer;
    char next[64];
    double percent;
    const char *said;
    bool on;

    (void)key;
    if (g == NULL) {
        app_say(a, "a ablates a trained model's head (--model): the book's classes have none to "
                   "learn from");
        return;
    }
    if (a->view.stage == VIEW_ROUTER && moe_layer_shown(a)) {
        /* a on the router: the expert of the cell's column switched off in the layer shown. */
        const int e = a->view.cursor_col;
        if (!flip_switch(a, SWITCH_EXPERT_OFF, layer, e, &g, next, sizeof next, &percent, &said))
            return;
        on = model_switch_on(g->model, &a->switches, false, SWITCH_EXPERT_OFF, layer, e);
        app_say(a, "expert %d of layer %d %s: the %s is now %s (%.0f%%)", e, layer,
                on ? "switched off (its router logit -inf)" : "back on", predicted(g), said,
                percent);
        return;
    }
    if (!flip_switch(a, SWITCH_ABLATE, layer, a->view.head, &g, next, sizeof next, &percent, &said))
        return;
    on = model_switch_on(g->model, &a->switches, false, SWITCH_ABLATE, layer, a->view.head);
    {
        /* With grouped keys, the key head stays: the heads that share it still read it. */
        const struct decoder_config *c = &g->model->dec.cfg;
        const bool attends = decoder_attends(c, layer);
        /* (the rest of its group: a DeltaNet layer's value heads share a key head too) */
        const int others = attends ? c->n_head / decoder_kv_heads(c) - 1
                                   : c->gdn.v_heads / c->gdn.k_heads - 1;
        char shared[96] = "";
        if (others > 0 && on)
            snprintf(shared, sizeof shared, "; key head %d stays, %d other head%s %s it",
                     attends ? decoder_kv_head_of(c, a->view.head)
                             : decoder_gdn_key_head(c, a->view.head),
                     others, others == 1 ? "" : "s", others == 1 ? "reads" : "read");
        app_say(a, "head %d of layer %d %s%s: the %s is now %s (%.0f%%)", a->view.head, layer,
                !on       ? "back"
                : attends ? "ablated (its context zeroed)"
                          : "ablated (its read of the state zeroed)",
                shared, predicted(g), said, percent);
    }
}

void
app_sinks(struct app *a, int key)
{
    const struct family_model_state *g = pipeline_decoder(&a->pipe);
    char next[64];
    double percent;
    const char *said;

    (void)key;
    if (g == NULL) {
        app_say(a, "B switches attention sinks off: a model with learned sinks has them "
                   "(gpt-oss), and this one has none");
        return;
    }
    if (!flip_switch(a, SWITCH_NO_SINKS, 0, 0, &g, next, sizeof next, &percent, &said))
        return;
    app_say(a, "attention sinks %s: the %s is now %s (%.0f%%)",
            a->src.sinks_off ? "off (their logits -inf: every row's weights sum to 1)" : "back on",
            predicted(g), said, percent);
}

/* ---------------------------------------------------------------- export */

/* ---------------------------------------------------------------- cursor */

/* Keys outside the editor and the help screen that only touch the view. */

