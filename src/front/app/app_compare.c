/*
 * app_compare.c: a second model beside the first in the view (--compare,
 * :compare PATH): opened, built from the same source as the first's
 * pipeline and kept in step with it (every edit and knob: built again from
 * the same source when the first's generation changes, an edit's unchanged
 * rows taken over as the first's are), and C to show the first's numbers,
 * the second's or their difference.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/families/model/family_model.h"
#include "front/app/app_internal.h"

struct app_compare {
    struct model own;       /* the second model's files, when the app opened them */
    const struct model *model; /* the second model: own, or a lesson's (borrowed) */
    bool owned;
    struct pipeline pipe;   /* its pipeline, of the first's source */
    struct compare cmp;     /* a->pipe beside pipe */
    unsigned long synced;   /* the first's generation pipe was built for */
    bool aligned;           /* compare_check passed for that generation */
    char why[1100];         /* why not, when not */
};

/* The second's source: the first's (its text, ids, knobs), with its own model. */
static void
second_source(const struct app *a, struct pipeline_source *src)
{
    app_source(a, a->sentence, a->source, a->switches.mask[SWITCH_ABLATE], src);
    src->model = a->compare->model;
    src->last_logits = NULL; /* (the writing's logits are the first's) */
}

/* Builds the second's pipeline for the first's generation; false (and why) when not aligned. */
static bool
build_second(struct app *a, struct attn_error *err)
{
    struct app_compare *c = a->compare;
    struct pipeline_source src;
    struct pipeline next;
    enum attn_status st;

    second_source(a, &src);
    st = c->synced != 0 ? pipeline_rebuild(&next, &c->pipe, &a->cfg, &src, err)
                        : pipeline_create(&next, &a->cfg, &src, err);
    c->synced = a->pipe.generation;
    if (st != ATTN_OK) {
        c->aligned = false;
        snprintf(c->why, sizeof c->why, "%s", err->msg);
        return false;
    }
    if (c->pipe.family != NULL)
        pipeline_destroy(&c->pipe);
    c->pipe = next;
    c->aligned = compare_check(&a->pipe, &c->pipe, err) == ATTN_OK &&
                 compare_follow(&c->cmp, err) == ATTN_OK;
    if (!c->aligned)
        snprintf(c->why, sizeof c->why, "%s", err->msg);
    return c->aligned;
}

/* The view's comparison: the pointers into a->compare, or none while not aligned. */
static void
show(struct app *a)
{
    struct app_compare *c = a->compare;

    a->view.compare = c != NULL && c->aligned ? &c->cmp : NULL;
    if (a->view.compare == NULL)
        a->view.side = COMPARE_FIRST;
}

static enum attn_status take(struct app *a, struct app_compare *c, struct attn_error *err);

void
app_compare_close(struct app *a)
{
    struct app_compare *c = a->compare;

    if (c == NULL)
        return;
    compare_destroy(&c->cmp);
    if (c->pipe.family != NULL)
        pipeline_destroy(&c->pipe);
    if (c->owned)
        model_close(&c->own);
    free(c);
    a->compare = NULL;
    show(a);
}

enum attn_status
app_compare_open(struct app *a, const char *path, const struct model_options *mo,
                 struct attn_error *err)
{
    struct app_compare *c;

    if (a->src.model == NULL || pipeline_decoder(&a->pipe) == NULL)
        return attn_fail(err, ATTN_EVALUE, "compare: a trained model beside another (--model "
                                           "first): the book's classes have no second");
    c = calloc(1, sizeof *c);
    if (c == NULL)
        return attn_fail(err, ATTN_ENOMEM, "out of memory");
    if (model_open(&c->own, path, mo, err) != ATTN_OK) {
        free(c);
        return err->status;
    }
    c->model = &c->own;
    c->owned = true;
    if (compare_check_models(a->src.model, c->model, err) != ATTN_OK) {
        model_close(&c->own);
        free(c);
        return ATTN_EVALUE;
    }
    if (take(a, c, err) != ATTN_OK)
        return err->status != ATTN_OK ? err->status : ATTN_EVALUE;
    a->view.side = COMPARE_DIFFERENCE;
    app_say(a, "%s beside %s: their difference shown (second minus first); C: first, second, "
               "difference", c->model->name, a->src.model->name);
    return ATTN_OK;
}

enum attn_status
app_compare_borrow(struct app *a, const struct model *m, struct attn_error *err)
{
    struct app_compare *c = calloc(1, sizeof *c);

    if (c == NULL)
        return attn_fail(err, ATTN_ENOMEM, "out of memory");
    c->model = m;
    return take(a, c, err);
}

/* c, its model open, the app's comparison (the one before closed), its pipeline built. */
static enum attn_status
take(struct app *a, struct app_compare *c, struct attn_error *err)
{
    app_compare_close(a);
    a->compare = c;
    compare_init(&c->cmp, &a->pipe, &c->pipe); /* (both stay where they are: rebuilt in place) */
    if (!build_second(a, err)) {
        enum attn_status st = err->status != ATTN_OK ? err->status : ATTN_EVALUE;
        app_compare_close(a);
        return st;
    }
    show(a);
    return ATTN_OK;
}

/*
 * The token the first model wrote last, as the second saw it: its
 * probability after the text before it (the second's row before the last;
 * a step that slid the window read another text: left unsaid).
 */
static void
second_saw_written(struct app *a)
{
    struct generation *w = a->writing;
    struct generate_step *s;
    const struct family_model_state *g = pipeline_decoder(&a->compare->pipe);

    if (w == NULL || w->written == 0 || g == NULL || g->run.n < 2)
        return;
    s = &w->steps[w->written - 1];
    if (isnan(s->compared_prob) && !s->slid && g->ids[g->run.n - 1] == s->choice.id)
        s->compared_prob = compare_second_prob(&a->compare->cmp, g->run.n - 2, s->choice.id);
}

void
app_compare_sync(struct app *a)
{
    struct attn_error err;

    if (a->compare == NULL || a->compare->synced == a->pipe.generation)
        return;
    attn_error_clear(&err);
    if (!build_second(a, &err))
        app_say(a, "compare: %s beside %s: %s; C shows the first until they agree again",
                a->compare->model->name, a->src.model->name, a->compare->why);
    else
        second_saw_written(a);
    show(a);
}

void
app_compare_key(struct app *a, int key)
{
    (void)key;
    app_compare_sync(a);
    if (a->compare == NULL) {
        app_say(a, "C shows a second model beside the first: open one with :compare PATH "
                   "(or --compare PATH)");
        return;
    }
    if (!a->compare->aligned) {
        app_say(a, "compare: %s", a->compare->why);
        a->view.message_is_error = true;
        return;
    }
    a->view.side = (enum compare_side)((a->view.side + 1) % COMPARE_SIDES);
    if (a->view.side == COMPARE_DIFFERENCE)
        app_say(a, "the difference: %s minus %s, cell by cell (red: the second's larger, blue: "
                   "smaller)", a->compare->model->name, a->src.model->name);
    else
        app_say(a, "the %s model: %s", compare_side_name(a->view.side),
                pipeline_decoder(compare_side_pipeline(&a->compare->cmp, a->view.side))
                    ->model->name);
}

int
app_compare_command(struct app *a, const char *path)
{
    struct attn_error err;

    attn_error_clear(&err);
    if (path[0] == '\0') {
        if (a->compare == NULL) {
            app_say(a, "compare PATH opens a second model beside the first; none is open");
            return 0;
        }
        app_say(a, "%s closed: %s alone again", a->compare->model->name, a->src.model->name);
        app_compare_close(a);
        return 0;
    }
    if (app_compare_open(a, path, NULL, &err) != ATTN_OK) {
        app_say(a, "compare %s: %s", path, err.msg);
        a->view.message_is_error = true;
        return -1;
    }
    return 0;
}
