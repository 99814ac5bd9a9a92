/*
 * app_player.c: playing a walkthrough in the view, and the lesson picker
 * (see app.h).
 */
#include "config.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "attnscope/families/model/family_model.h"
#include "attnscope/base/utf8.h"
#include "front/app/app_internal.h"
#include "front/cli/write.h"

/* ----------------------------------------------------------- walkthroughs */

/* The view as step k (s) shows it: its stage, head, cell, screen and words. */
static void
step_view(struct app *a, const struct walk_step *s, int k, int row, int col)
{
    a->view.stage = s->stage;
    a->view.head = s->head;
    a->view.cursor_row = row;
    a->view.cursor_col = col;
    a->view.grid_heads = s->grid;
    a->view.mask_matrix = s->mask_matrix;
    a->view.param_matrix = s->param_matrix;
    a->view.param_stage = s->stage;
    a->view.screen = s->screen == WALK_SCREEN_SENTENCE ? SCREEN_SENTENCE
                     : s->screen == WALK_SCREEN_MAP    ? SCREEN_MAP
                     : s->screen == WALK_SCREEN_NEXT   ? SCREEN_NEXT
                                                       : SCREEN_STAGE;
    a->view.map_measure = s->measure;
    a->view.map_row = a->pipe.layer;
    a->view.map_col = s->head;
    a->view.narration = a->narration;
    a->view.narration_bare = a->narration_bare;
    a->view.walk_title = a->walk.title;
    a->view.step_title = s->title;
    a->view.step = k;
    a->view.steps = a->walk.count;
    a->view.following = true;
    a->view.narration_scroll = 0;
}

/*
 * Builds step k: its own inputs, its configuration, its stage, head and
 * cell, and its narration.  On failure the screen stays as it was.
 */
static int
play_step(struct app *a, int k, struct attn_error *err)
{
    const struct walk_step *s = &a->walk.steps[k];
    struct walk_resources res;
    struct pipeline next;
    int row;
    int col;
    char *sentence;
    char *source;
    char *narration = NULL;
    char *bare = NULL;
    struct generate_end end;

    if (walkthrough_step_pipeline(&a->walk, k, &res, &next, err) != ATTN_OK)
        return -1;
    /* Checked as it is played: a lesson of hundreds of long steps starts at once. */
    if (walkthrough_check_step(&a->walk, k, &next, err) < 0 ||
        walkthrough_cell(&a->walk, k, &next, &row, &col, err) != 0 ||
        (narration = walkthrough_narrate(&a->walk, k, &next, WALK_VIEW, err)) == NULL ||
        (bare = walkthrough_narrate(&a->walk, k, &next, WALK_VIEW_BARE, err)) == NULL) {
        free(narration);
        pipeline_destroy(&next);
        walk_resources_destroy(&res);
        return -1;
    }
    sentence = strdup(res.opts.sentence);
    source = res.opts.source != NULL ? strdup(res.opts.source) : NULL;
    if (sentence == NULL || (res.opts.source != NULL && source == NULL)) {
        free(sentence);
        free(source);
        free(narration);
        free(bare);
        pipeline_destroy(&next);
        walk_resources_destroy(&res);
        attn_fail(err, ATTN_ENOMEM, "out of memory");
        return -1;
    }
    /* The tokens that end its writing: the lesson's --eos, else its model's own. */
    generate_end_one(&end, -1, "");
    if (res.model != NULL && write_end_of(&res.opts.eos, res.model, &end, err) != ATTN_OK) {
        free(sentence);
        free(source);
        free(narration);
        free(bare);
        pipeline_destroy(&next);
        walk_resources_destroy(&res);
        return -1;
    }
    app_end_writing(a); /* (the writing shown was the step before's) */
    pipeline_destroy(&a->pipe);
    a->pipe = next;
    a->step_generation = a->pipe.generation;
    if (a->have_res)
        walk_resources_destroy(&a->res);
    a->res = res;
    a->have_res = true;
    if (a->res.cmp != NULL)
        a->res.cmp->a = &a->pipe; /* (the step's pipeline moved into the app) */
    /* A step that wrote (--generate): the view goes on from its text (G, Backspace). */
    a->writing = a->res.writing;
    a->res.writing = NULL;
    a->eos = end;
    a->cfg = res.opts.cfg;
    a->src.vocab = &a->res.in.vocab;
    a->src.source_vocab = a->res.in.have_source_vocab ? &a->res.in.source_vocab : NULL;
    a->src.weights = a->res.in.have_weights ? &a->res.in.weights : NULL;
    a->src.qkv = a->res.in.have_qkv ? &a->res.in.qkv : NULL;
    a->weights_dir = a->res.opts.weights_dir;
    /* A lesson's step may be on the book's classes or on a trained model: the app follows it. */
    a->src.model = a->res.model;
    a->src.family = a->res.model != NULL ? &family_model : NULL;
    a->src.top = a->res.opts.top;
    a->src.bos = a->res.opts.bos;
    {
        /* (the step's switches, --ablate, --expert-off and --no-sinks, the app's from here) */
        const struct pipeline_source step = walk_resources_source(&a->res);
        app_take_ablated(a, step.ablated);
        app_take_experts_off(a, step.experts_off);
        a->src.sinks_off = step.sinks_off;
    }
    free(a->sentence);
    a->sentence = sentence;
    free(a->source);
    a->source = source;
    free(a->narration);
    a->narration = narration;
    free(a->narration_bare);
    a->narration_bare = bare;

    step_view(a, s, k, row, col);
    /* A step that compares (--compare) shows the side it names; one that does not, one model. */
    if (a->res.second != NULL) {
        struct attn_error cerr;
        if (app_compare_borrow(a, a->res.second, &cerr) == ATTN_OK)
            a->view.side = (enum compare_side)s->side;
    } else {
        app_compare_close(a);
    }
    view_clamp(&a->view, &a->pipe);
    a->view.cursor_row = row;
    a->view.cursor_col = col;
    return 0;
}

enum attn_status
app_play(struct app *a, struct walkthrough *w, struct attn_error *err)
{
    struct walkthrough old = a->walk;
    bool was_walking = a->walking;

    a->walk = *w;
    a->walking = true;
    if (play_step(a, 0, err) != 0) {
        a->walk = old;
        a->walking = was_walking;
        return err != NULL ? err->status : ATTN_EPARSE;
    }
    if (was_walking)
        walkthrough_destroy(&old);
    memset(w, 0, sizeof *w);
    a->view.message = NULL; /* the lesson speaks now, not the start-up hint */
    return ATTN_OK;
}

void
app_step_to(struct app *a, int k)
{
    struct attn_error err;

    if (k < 0) {
        app_say(a, "this is the first step");
        return;
    }
    if (k >= a->walk.count) {
        app_say(a, "the end of \"%s\": w picks another walkthrough, q quits", a->walk.title);
        return;
    }
    if (play_step(a, k, &err) != 0)
        app_complain(a, err.msg);
}

void
app_lessons_key(struct app *a, int key)
{
    (void)key;
    app_open_picker(a);
}

/* Lists the *.walk files of the walkthrough folders for the picker. */
void
app_open_picker(struct app *a)
{
    const char *dirs[4];
    int n = walkthrough_dirs(dirs, 4);

    app_free_picks(a);
    for (int d = 0; d < n; d++) {
        DIR *dir = opendir(dirs[d]);
        struct dirent *e;
        if (dir == NULL)
            continue;
        while ((e = readdir(dir)) != NULL) {
            size_t len = strlen(e->d_name);
            char path[4096];
            struct stat st;
            struct walkthrough w;
            char **picks;
            char **titles;
            bool seen = false;
            if (len < 6 || strcmp(e->d_name + len - 5, ".walk") != 0)
                continue;
            for (int i = 0; i < a->pick_count && !seen; i++) {
                const char *base = strrchr(a->picks[i], '/');
                seen = base != NULL && strcmp(base + 1, e->d_name) == 0;
            }
            snprintf(path, sizeof path, "%s/%s", dirs[d], e->d_name);
            /* Only regular files: opening a FIFO named x.walk would wait for a writer forever. */
            if (seen || stat(path, &st) != 0 || !S_ISREG(st.st_mode) ||
                walkthrough_load(&w, path, NULL) != ATTN_OK)
                continue;
            picks = realloc(a->picks, (size_t)(a->pick_count + 1) * sizeof *picks);
            titles = picks ? realloc(a->pick_titles, (size_t)(a->pick_count + 1) * sizeof *titles)
                           : NULL;
            if (picks != NULL)
                a->picks = picks;
            if (titles != NULL) {
                a->pick_titles = titles;
                a->picks[a->pick_count] = strdup(path);
                char absent[128];
                char title[512];
                /* A lesson for a model users download says so before it is chosen. */
                if (walkthrough_absent_model(&w, absent, sizeof absent) != NULL)
                    snprintf(title, sizeof title, "%.300s (needs %.100s: not on this machine)",
                             w.title, absent);
                else
                    snprintf(title, sizeof title, "%s", w.title);
                a->pick_titles[a->pick_count] = strdup(title);
                a->pick_count++;
            }
            walkthrough_destroy(&w);
        }
        closedir(dir);
    }
    /* By file name: the shipped ones are numbered in teaching order. */
    for (int i = 1; i < a->pick_count; i++) {
        for (int j = i; j > 0 && strcmp(a->picks[j - 1], a->picks[j]) > 0; j--) {
            char *t = a->picks[j];
            a->picks[j] = a->picks[j - 1];
            a->picks[j - 1] = t;
            t = a->pick_titles[j];
            a->pick_titles[j] = a->pick_titles[j - 1];
            a->pick_titles[j - 1] = t;
        }
    }
    a->view.picker = true;
    a->view.picker_title = NULL;
    a->picking_step = false;
    a->view.picker_items = (const char *const *)a->pick_titles;
    a->view.picker_count = a->pick_count;
    a->view.picker_sel = 0;
}

void
app_picker_key(struct app *a, int key)
{
    struct view *v = &a->view;

    switch (key) {
    case APP_KEY_UP:
        if (v->picker_sel > 0)
            v->picker_sel--;
        break;
    case APP_KEY_DOWN:
        if (v->picker_sel < v->picker_count - 1)
            v->picker_sel++;
        break;
    case APP_KEY_ENTER: {
        struct walkthrough w;
        struct attn_error err;
        v->picker = false;
        if (v->picker_count == 0)
            break;
        if (a->picking_step) {
            a->picking_step = false;
            app_step_to(a, v->picker_sel);
            break;
        }
        if (walkthrough_load(&w, a->picks[v->picker_sel], &err) != ATTN_OK) {
            app_complain(a, err.msg);
            break;
        }
        if (app_play(a, &w, &err) != ATTN_OK) {
            walkthrough_destroy(&w);
            app_complain(a, err.msg);
        }
        break;
    }
    case 'q':
        a->quit = true;
        break;
    default:
        /* In the step list a digit goes straight to that step (1 to 9). */
        if (a->picking_step && key >= '1' && key <= '9' && key - '1' < v->picker_count) {
            v->picker = false;
            a->picking_step = false;
            app_step_to(a, key - '1');
            break;
        }
        v->picker = false;
        a->picking_step = false;
        break;
    }
}

void
app_open_step_list(struct app *a)
{
    struct view *v = &a->view;
    const char **titles;

    if (!a->walking) {
        app_say(a, "no lesson is playing: w picks one");
        return;
    }
    titles = realloc((void *)a->step_titles, (size_t)a->walk.count * sizeof *titles);
    if (titles == NULL) {
        app_complain(a, "out of memory");
        return;
    }
    for (int k = 0; k < a->walk.count; k++)
        titles[k] = a->walk.steps[k].title;
    a->step_titles = titles;
    a->picking_step = true;
    v->picker = true;
    v->picker_title = "Steps  (arrows choose, Enter or 1-9 goes there, Esc closes)";
    v->picker_items = titles;
    v->picker_count = a->walk.count;
    v->picker_sel = v->step;
}
