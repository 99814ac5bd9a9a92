/*
 * app_harness.h: what the interactive view's test programs share
 * (check_app.c, check_app_screens.c, check_app_model.c): the view on the
 * book's sentence or on the tiny GPT-2, keys pressed and typed, the frame
 * as text.
 */
#ifndef ATTNSCOPE_APP_HARNESS_H
#define ATTNSCOPE_APP_HARNESS_H

#include <dirent.h>
#include <unistd.h>

#include "testutil.h"
#include "app_model.h"
#include "gpt2_random.h"
#include "attnscope/families/model/family_model.h"
#include "attnscope/base/progress.h"
#include "attnscope/families/model/headmap.h"
#include "attnscope/models/model.h"
#include "attnscope/text/tokenizer.h"
#include "front/app/app.h"
#include "front/app/app_internal.h"
#include "front/app/app_keys.h"
#include "render/explain.h"
#include "front/lessons/walkthrough.h"

static struct vocab book;
static struct app a;
static struct model tiny;

/* The view on the book's sentence, exporting into the test's folder. */
static inline void
setup(void)
{
    struct attention_config cfg;
    struct attn_error err;
    struct pipeline_source src = {
        .sentence = "Your journey starts with one step",
        .vocab = &book,
    };

    test_tmpdir_setup();
    ck_assert_int_eq(vocab_builtin(&book, NULL), ATTN_OK);
    attention_config_init(&cfg);
    ck_assert_msg(app_init(&a, &cfg, &src, NULL, &err) == ATTN_OK, "%s", err.msg);
    a.export_dir = dir;
}

static inline void
teardown(void)
{
    app_destroy(&a);
    vocab_destroy(&book);
    test_tmpdir_teardown();
}

/* The view on the tiny GPT-2 (tests/fixtures/gpt2/tiny), three next tokens a position. */
static inline void
setup_model(void)
{
    test_tmpdir_setup();
    app_on_model(&a, &tiny, test_path("tests/fixtures/gpt2/tiny"), NULL, "The cat sat on the mat.");
    a.export_dir = dir;
}

static inline void
teardown_model(void)
{
    app_destroy(&a);
    model_close(&tiny);
    test_tmpdir_teardown();
}

/* Keys pressed, one a character. */
static inline void
keys(const char *s)
{
    for (; *s; s++)
        app_key(&a, (unsigned char)*s);
}

static inline void
type(const char *s)
{
    for (; *s; s++)
        app_key(&a, (unsigned char)*s);
}

/* The frame as text, a row per line. */
/* (Not inlined: gcc 12 then sees open_memstream's pointer as dangling.) */
__attribute__((noinline, unused)) static char *
frame_text(int w, int h)
{
    struct grid g;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);

    ck_assert_int_eq(grid_create(&g, w, h), 0);
    app_render(&a, &g);
    grid_dump_text(&g, f);
    fclose(f);
    grid_destroy(&g);
    return text;
}

/*
 * The map's heatmaps of every head on a GPT-2 small shape (12 x 12): at
 * 100x30 each head's 15 tokens pooled 3 x 3 into 5 x 5 cells, each the
 * largest weight of its block; three layers at a time, PgDn the next three;
 * at 200x50 pooled 2 x 2, four layers (issue 27, item 1: they never
 * appeared).
 */
/* A random model of GPT-2 small's 12 layers of 12 heads (narrow), on 15 tokens. */
static inline void
open_twelve_by_twelve(struct app *b, struct model *m)
{
    const struct decoder_config shape = {
        .n_layer = 12, .n_head = 12, .d_model = 24, .n_ctx = 32, .vocab_size = 317,
        .d_mlp = 96, .eps = 1e-5f, .scale_attn_weights = true, .scale_by_layer = false,
        .tied = true,
    };
    char folder[600];

    snprintf(folder, sizeof folder, "%s/small", dir);
    ck_assert_int_eq(
        gpt2_random_folder_with(folder, &shape, 1.0f, 7, test_path("tests/fixtures/gpt2/tiny")), 0);
    app_on_model(b, m, folder, NULL, "the cat sat on the mat and the dog sat on a");
    ck_assert_int_eq(b->pipe.st.nq, 15); /* (the tiny tokenizer's pieces) */
    b->view.colour = true;
}

/* b's frame at w x h as text (free it). */
/* (Not inlined: gcc 12 then sees open_memstream's pointer as dangling.) */
__attribute__((noinline, unused)) static char *
frame_of(struct app *b, int w, int h)
{
    struct grid g;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);

    ck_assert_int_eq(grid_create(&g, w, h), 0);
    app_render(b, &g);
    grid_dump_text(&g, f);
    fclose(f);
    grid_destroy(&g);
    return text;
}

#endif
