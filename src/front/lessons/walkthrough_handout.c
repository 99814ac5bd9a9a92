/* walkthrough_handout.c: a lesson written out for paper (see walkthrough.h). */
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
#include "attnscope/text/tokenizer.h"
#include "attnscope/base/utf8.h"
#include "attnscope/families/model/family_model.h"
#include "render/view.h"
#include "front/cli/print.h"
#include "front/cli/write.h"
#include "front/lessons/walkthrough.h"

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

/* The most rows and columns a handout's table takes: a page's width, around the step's cell. */
#define HANDOUT_ROWS 24
#define HANDOUT_COLS 10

/* The first of count places around at, a window of n of them. */
static int
window_start(int at, int n, int count)
{
    int first = at - n / 2;

    if (first > count - n)
        first = count - n;
    return first < 0 ? 0 : first;
}

/*
 * A sentence view step on paper: what its screen shades, the weights the
 * query gives each key it sees (every head's mean with view: grid), the
 * largest marked.
 */
static void
print_sentence_step(FILE *out, const struct pipeline *p, const struct walk_step *s, int q)
{
    const int heads = p->st.shape.heads;
    const bool mean = s->grid && heads > 1;
    struct pipeline_view w;
    int first;
    int end;
    int best = -1;
    float *averaged = NULL;
    const float *row;

    pipeline_stage_view(p, STAGE_WEIGHTS, s->head, &w);
    row = matrix_row(&w.m, q);
    if (mean) {
        /* The heads' mean as the screen makes it (attention_heads_mean), its query's row. */
        averaged = malloc((size_t)w.m.rows * (size_t)w.m.cols * sizeof *averaged);
        if (averaged == NULL)
            return;
        pipeline_stage_heads_mean(p, STAGE_WEIGHTS, averaged);
        row = averaged + (size_t)q * (size_t)w.m.cols;
    }
    attention_mask_range(&p->cfg, q, w.m.cols, &first, &end);
    for (int j = first; j < end; j++)
        best = best < 0 || row[j] > row[best] ? j : best;
    if (mean)
        fprintf(out, "What '%s' attends to: the mean of the %d heads%s\n", p->query_labels[q], heads,
                pipeline_decoder(p) != NULL ? " of the layer" : "");
    else
        fprintf(out, "What '%s' attends to: head %d of %d\n", p->query_labels[q], s->head, heads);
    for (int j = first; j < end; j++) {
        const int pad = 14 - utf8_width(p->key_labels[j]);
        fprintf(out, "  %s%*s %.4f%s\n", p->key_labels[j], pad > 0 ? pad : 0, "", (double)row[j],
                j == best ? "  <" : "");
    }
    fputc('\n', out);
    free(averaged);
}

/*
 * A step that compares two models and shows the second's numbers or the
 * difference: its stage that way (Q, K and V one after another), or its
 * screen's selection (the map: how much each head changed; the
 * predictions: both, with their divergence).
 */
static void
print_compared_step(FILE *out, struct compare *c, const struct walk_step *s,
                    enum pipeline_stage ps, const struct print_options *po)
{
    const enum compare_side side = (enum compare_side)s->side;

    if (s->screen == WALK_SCREEN_MAP || s->screen == WALK_SCREEN_NEXT) {
        const struct pipeline_selection sel = {
            s->screen == WALK_SCREEN_MAP ? PIPELINE_SELECT_HEADS : PIPELINE_SELECT_NEXT, -1, NULL
        };
        if (side == COMPARE_SECOND)
            print_model_selection(out, c->b, &sel, po);
        else
            print_compared_selection(out, c, &sel, po);
    } else if (s->stage == VIEW_QKV) {
        print_stage_of(out, c->a, c, side, STAGE_QUERIES, s->head, po);
        print_stage_of(out, c->a, c, side, STAGE_KEYS, s->head, po);
        print_stage_of(out, c->a, c, side, STAGE_VALUES, s->head, po);
    } else {
        print_stage_of(out, c->a, c, side, ps, s->head, po);
    }
}

int
walkthrough_print(FILE *out, const struct walkthrough *w, const struct print_options *po,
                  int width, struct attn_error *err)
{
    const bool markdown = po->format == PRINT_MARKDOWN;

    /* In Markdown, "1. Title" over a rule would be a numbered list: headings say what they are. */
    if (markdown) {
        fprintf(out, "# %s\n\n", w->title);
    } else {
        fprintf(out, "%s\n", w->title);
        for (size_t i = 0; i < strlen(w->title); i++)
            fputc('=', out);
        fputs("\n\n", out);
    }
    for (int k = 0; k < w->count; k++) {
        const struct walk_step *s = &w->steps[k];
        struct walk_resources res;
        struct pipeline p;
        char *narration;
        int row;
        int col;
        enum pipeline_stage ps = explain_pipeline_stage(NULL, s->stage, s->mask_matrix);

        if (walkthrough_step_pipeline(w, k, &res, &p, err) != ATTN_OK)
            return -1;
        narration = walkthrough_narrate(w, k, &p, WALK_PAPER, err);
        if (narration == NULL) {
            pipeline_destroy(&p);
            walk_resources_destroy(&res);
            return -1;
        }
        fprintf(out, "%sStep %d of %d: %s\n\n", markdown ? "## " : "", k + 1, w->count, s->title);
        print_wrapped(out, narration, width);
        free(narration);
        if (walkthrough_cell(w, k, &p, &row, &col, err) != 0) {
            pipeline_destroy(&p);
            walk_resources_destroy(&res);
            return -1;
        }
        if (res.cmp != NULL && s->side != COMPARE_FIRST) {
            print_compared_step(out, res.cmp, s, ps, po);
        } else if (s->screen == WALK_SCREEN_SENTENCE) {
            print_sentence_step(out, &p, s, row < p.st.nq ? row : p.st.nq - 1);
        } else if (s->screen == WALK_SCREEN_NEXT && res.writing != NULL && res.writing->written > 0) {
            /* What the model wrote, as --generate --print shows it. */
            write_print_steps(out, res.writing, po);
        } else if (s->screen == WALK_SCREEN_MAP || s->screen == WALK_SCREEN_NEXT) {
            const struct pipeline_selection sel = {
                s->screen == WALK_SCREEN_MAP ? PIPELINE_SELECT_HEADS : PIPELINE_SELECT_NEXT, -1, NULL
            };
            print_model_selection(out, &p, &sel, po);
        } else if (s->param_matrix) {
            print_stage_params(out, &p, s->stage == VIEW_OUTPUT, s->head, po);
        } else if (s->stage == VIEW_CACHE) {
            /* The cache: the keys as the scores read them, and the values, around the cell. */
            const enum pipeline_stage kept[2] = {
                pipeline_stage_present(&p, STAGE_KEYS_ROTATED) ? STAGE_KEYS_ROTATED : STAGE_KEYS,
                STAGE_VALUES
            };
            for (int i = 0; i < 2; i++) {
                struct pipeline_view v;
                pipeline_stage_view(&p, kept[i], 0, &v);
                print_stage_window(out, &p, kept[i], 0, window_start(row, HANDOUT_ROWS, v.m.rows),
                                   HANDOUT_ROWS, 0, HANDOUT_COLS, po);
            }
        } else if (s->stage == VIEW_QKV) {
            print_stage(out, &p, STAGE_QUERIES, 0, po);
            print_stage(out, &p, STAGE_KEYS, 0, po);
            print_stage(out, &p, STAGE_VALUES, 0, po);
        } else if (s->grid && pipeline_stage_per_head(ps)) {
            /* On screen a grid step shows every head; so does paper. */
            for (int h = 0; h < p.st.shape.heads; h++)
                print_stage(out, &p, ps, h, po);
        } else {
            /* What the screen shows around the step's cell, not a real model's 768 columns. */
            struct pipeline_view v;
            pipeline_stage_view(&p, ps, s->head, &v);
            print_stage_window(out, &p, ps, s->head,
                               window_start(row, HANDOUT_ROWS, v.m.rows), HANDOUT_ROWS,
                               window_start(col, HANDOUT_COLS, v.m.cols), HANDOUT_COLS, po);
        }
        pipeline_destroy(&p);
        walk_resources_destroy(&res);
    }
    return 0;
}
