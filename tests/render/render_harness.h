/*
 * render_harness.h: what the renderer's test programs share
 * (check_render.c, check_render_explain.c): the book's vocabulary, a
 * pipeline run on a sentence, a frame rendered as text.
 */
#ifndef ATTNSCOPE_RENDER_HARNESS_H
#define ATTNSCOPE_RENDER_HARNESS_H

#include <limits.h>
#include <stdlib.h>

#include "attnscope/pipeline/knob.h"
#include "attnscope/pipeline/pipeline.h"
#include "attnscope/attention/qkv.h"
#include "golden.h"
#include "render/explain.h"
#include "render/grid.h"
#include "render/stagemap.h"
#include "render/heatmap.h"
#include "render/inspect.h"
#include "render/palette.h"
#include "render/text.h"
#include "render/view.h"
#include "front/app/app.h"
#include "testutil.h"
#include "gpt2_random.h"
#include "attnscope/families/model/family_model.h"
#include "attnscope/models/model.h"
#include "attnscope/families/model/headmap.h"

static struct vocab book;

static inline void
setup(void)
{
    ck_assert_int_eq(vocab_builtin(&book, NULL), ATTN_OK);
}

static inline void
teardown(void)
{
    vocab_destroy(&book);
}

/* view_render with the footer the interactive view gives it (the front end's key table). */
static inline void
render_frame(struct view *v, const struct pipeline *p, struct grid *g)
{
    v->footer_items = app_footer(v->screen, &v->footer_count);
    view_render(v, p, g);
}

/* The pipeline of cfg on sentence, the book's vocabulary. */
static inline void
run(struct pipeline *p, struct attention_config *cfg, const char *sentence)
{
    struct pipeline_source src = { .sentence = sentence, .vocab = &book };
    struct attn_error err;

    ck_assert_msg(pipeline_create(p, cfg, &src, &err) == ATTN_OK, "%s", err.msg);
}

/* A w x h frame of v on p as text: the characters, then (styles) the styles. */
/* (Not inlined: gcc 12 then sees open_memstream's pointer as dangling.) */
__attribute__((noinline, unused)) static char *
rendered(const struct pipeline *p, struct view *v, int w, int h, bool styles)
{
    struct grid g;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    ck_assert_int_eq(grid_create(&g, w, h), 0);
    render_frame(v, p, &g);
    grid_dump_text(&g, f);
    if (styles) {
        fputs("--- styles\n", f);
        grid_dump_styles(&g, f);
    }
    fclose(f);
    grid_destroy(&g);
    return buf;
}

/* A view of stage in colour and UTF-8, in presentation mode or not. */
static inline void
view_at(struct view *v, enum view_stage stage, bool present)
{
    view_init(v);
    v->stage = stage;
    v->colour = true;
    v->utf8 = true;
    v->present = present;
}

#endif
