/*
 * app_export.c: x and X in the view: what the screen shows, or every stage
 * and parameter, as CSV files under --export's names (export.h).
 */
#include "config.h"

#include <stdio.h>

#include "attnscope/families/model/compare.h"
#include "attnscope/families/model/generate.h"
#include "attnscope/families/model/model_export.h"
#include "attnscope/pipeline/export.h"
#include "front/app/app_keys.h"
#include "render/explain.h"

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
 * x with a second model beside the first: what the screen shows of all
 * three, as --export --compare --stage writes it (the map: heads.csv and
 * heads-changed.csv; the predictions: next.csv and next-kl.csv; a stage:
 * every layer's, the first's, under compare/ the second's, under
 * difference/ the difference).
 */
static void
export_compared_shown(struct app *a)
{
    const struct view *v = &a->view;
    struct pipeline_selection sel = { STAGE_WEIGHTS, -1, NULL };
    struct attn_error err;
    int written = 0;

    if (v->screen == SCREEN_MAP)
        sel.stage = PIPELINE_SELECT_HEADS;
    else if (v->screen == SCREEN_NEXT)
        sel.stage = PIPELINE_SELECT_NEXT;
    else if (v->stage == VIEW_CACHE)
        sel.stage = PIPELINE_SELECT_CACHE;
    else if (v->screen != SCREEN_SENTENCE)
        sel.stage = explain_pipeline_stage(&a->pipe, v->stage, false);
    else
        sel.head = v->head;
    if (export_model_compared(v->compare, &sel, 1, NULL, a->export_dir, &written, &err) !=
        ATTN_OK) {
        app_complain(a, err.msg);
        return;
    }
    app_say(a, "wrote %d files into %s/, %s/compare/ and %s/difference/: the two models' and "
               "their difference", written, a->export_dir, a->export_dir, a->export_dir);
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

    if (v->compare != NULL) {
        export_compared_shown(a);
        return;
    }
    if ((v->screen == SCREEN_MAP)) {
        st = export_model_view(&a->pipe, EXPORT_MODEL_MAP, ps, -1, -1, a->export_dir, &written, &err);
        snprintf(first, sizeof first, "heads.csv (the map)");
    } else if ((v->screen == SCREEN_NEXT)) {
        st = export_model_view(&a->pipe, EXPORT_MODEL_NEXT, ps, -1, -1, a->export_dir, &written,
                               &err);
        snprintf(first, sizeof first, "next.csv and lens.csv");
    } else if (v->stage == VIEW_CACHE && !(v->screen == SCREEN_SENTENCE)) {
        const bool rope = pipeline_stage_present(&a->pipe, STAGE_KEYS_ROTATED);
        st = export_model_view(&a->pipe, EXPORT_MODEL_CACHE, ps, -1, -1, a->export_dir, &written,
                               &err);
        snprintf(first, sizeof first, "layer%d/%s.csv and values.csv (the cache)", a->pipe.layer,
                 rope ? "keys_rotated" : "keys");
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

void
app_export(struct app *a, bool all)
{
    struct attn_error err;
    int written = 0;
    enum attn_status st;

    if (!all && a->src.model != NULL) {
        export_model_shown(a);
        return;
    }
    if (all) {
        /* A text the model wrote: generated.csv beside the stages, as --generate --export. */
        const struct generation *gen =
            a->writing != NULL && a->writing->written > 0 ? a->writing : NULL;
        st = a->src.model != NULL
                 ? export_model_written(&a->pipe, NULL, 0, gen, a->export_dir, &written, &err)
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
