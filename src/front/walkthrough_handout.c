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
#include "render/view.h"
#include "front/walkthrough.h"

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
        if (s->screen == WALK_SCREEN_MAP || s->screen == WALK_SCREEN_NEXT) {
            const struct pipeline_selection sel = {
                s->screen == WALK_SCREEN_MAP ? PIPELINE_SELECT_HEADS : PIPELINE_SELECT_NEXT, -1, NULL
            };
            print_model_selection(out, &p, &sel, po);
        } else if (s->param_matrix) {
            print_stage_params(out, &p, s->stage == VIEW_OUTPUT, s->head, po);
        } else if (s->stage == VIEW_QKV) {
            print_stage(out, &p, STAGE_QUERIES, 0, po);
            print_stage(out, &p, STAGE_KEYS, 0, po);
            print_stage(out, &p, STAGE_VALUES, 0, po);
        } else if (s->grid && pipeline_stage_per_head(ps)) {
            /* On screen a grid step shows every head; so does paper. */
            for (int h = 0; h < p.st.shape.heads; h++)
                print_stage(out, &p, ps, h, po);
        } else {
            print_stage(out, &p, ps, s->head, po);
        }
        pipeline_destroy(&p);
        walk_resources_destroy(&res);
    }
    return 0;
}
