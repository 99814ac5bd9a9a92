/*
 * check_app.c: the interactive view's keys and knobs, driven without a
 * terminal (src/tui/app.c).  Each test presses keys and checks what the
 * user would see change: the stage, the cursor, the pipeline's numbers, the
 * message in the footer.
 */
#include "config.h"

#include <dirent.h>
#include <unistd.h>

#include "app_harness.h"

static float
weight(int head, int i, int j)
{
    struct pipeline_view v;

    pipeline_stage_view(&a.pipe, STAGE_WEIGHTS, head, &v);
    return MAT_AT(&v.m, i, j);
}

/*
 * The key tables (app_keys.h): within a screen no key is answered twice
 * (by two rows, or by a row and a stage's digit or a knob on the stage
 * screen), and every stage-screen row that does something is in the help.
 */
START_TEST(the_key_tables_are_consistent)
{
    const struct app_screen_keys *const tables[] = { &app_stage_keys, &app_map_keys,
                                                     &app_sentence_keys, &app_next_keys };
    int count;
    const struct view_help_line *help = app_help(&count);

    for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++) {
        const struct app_screen_keys *s = tables[t];
        ck_assert_int_eq(s->screen, (int)t);
        for (size_t i = 0; i < s->count; i++)
            for (int k = 0; k < APP_BINDING_KEYS && s->bindings[i].keys[k] != 0; k++) {
                const int key = s->bindings[i].keys[k];
                enum view_stage stage;
                int step;
                ck_assert_msg(app_binding_for(s, key) == &s->bindings[i],
                              "screen %zu: key %d answered by two rows", t, key);
                if (t == 0) {
                    ck_assert_msg(explain_stage_for_key(key, &stage) != 0,
                                  "key %c is a row and a stage's digit", key);
                    ck_assert_msg(knob_for_key(key, &step) == NULL, "key %c is a row and a knob",
                                  key);
                }
            }
    }
    for (size_t i = 0; i < app_stage_keys.count; i++) {
        const struct app_binding *b = &app_stage_keys.bindings[i];
        bool listed = false;
        if (b->run == NULL)
            continue;
        ck_assert_ptr_nonnull(b->label);
        for (int h = 0; h < count && !listed; h++)
            listed = strcmp(help[h].keys, b->label) == 0;
        ck_assert_msg(listed, "%s is bound but not in the help", b->label);
    }
}
END_TEST

/* The model's keys say what they are for on the book's classes, and change nothing. */
/*
 * ':' sets a knob to a typed value as its option takes it: the book's seed
 * 789 in one line, not 666 presses of s, and the weights it draws are a
 * fresh pipeline's with --seed 789; a name or value it refuses keeps the
 * line open with what was typed and says why; v2 says the book's seed.
 */
START_TEST(a_knob_is_set_by_typing_its_value)
{
    struct attention_config cfg;
    struct pipeline fresh;
    struct attn_error err;
    struct pipeline_source src = {
        .sentence = "Your journey starts with one step",
        .vocab = &book,
    };

    keys(":seed 789");
    ck_assert(a.view.editing && a.view.editing_knob);
    app_key(&a, APP_KEY_ENTER);
    ck_assert(!a.view.editing);
    ck_assert_int_eq((int)a.cfg.seed, 789);
    attention_config_init(&cfg);
    cfg.seed = 789;
    ck_assert(pipeline_create(&fresh, &cfg, &src, &err) == ATTN_OK);
    ck_assert(memcmp(a.pipe.st.weights, fresh.st.weights,
                     (size_t)fresh.st.shape.heads * (size_t)fresh.st.nq * (size_t)fresh.st.nk *
                         sizeof(float)) == 0);
    pipeline_destroy(&fresh);
    /* A name no knob has: the line stays, with the reason. */
    keys(":temprature 2");
    app_key(&a, APP_KEY_ENTER);
    ck_assert(a.view.editing && strcmp(a.edit, "temprature 2") == 0);
    ck_assert_ptr_nonnull(strstr(a.message, "no knob 'temprature'"));
    app_key(&a, APP_KEY_ESCAPE);
    /* A value the option refuses: its own message. */
    keys(":--temperature 0");
    app_key(&a, APP_KEY_ENTER);
    ck_assert(a.view.editing);
    ck_assert_ptr_nonnull(strstr(a.message, "temperature"));
    app_key(&a, APP_KEY_ESCAPE);
    keys(":temperature 0.5");
    app_key(&a, APP_KEY_ENTER);
    ck_assert(!a.view.editing && a.cfg.temperature == 0.5);
    /* v2 with another seed than the book's: said. */
    keys(":seed 123");
    app_key(&a, APP_KEY_ENTER);
    keys(":variant v2");
    app_key(&a, APP_KEY_ENTER);
    ck_assert_ptr_nonnull(strstr(a.message, "the book's v2 uses seed 789"));
}
END_TEST

START_TEST(model_keys_on_the_book_say_so)
{
    const unsigned long before = a.pipe.generation;

    keys("L");
    ck_assert(a.view.screen != SCREEN_MAP);
    ck_assert_ptr_nonnull(strstr(a.message, "L shows a trained model's map"));
    keys("a");
    ck_assert_ptr_nonnull(strstr(a.message, "a ablates a trained model's head"));
    keys(".");
    ck_assert_ptr_nonnull(strstr(a.message, "one layer here"));
    keys("N");
    ck_assert(a.view.screen != SCREEN_NEXT);
    ck_assert_ptr_nonnull(strstr(a.message, "N shows a trained model's next-token predictions"));
    ck_assert_int_eq(a.pipe.generation, before);
}
END_TEST

START_TEST(starts_at_the_beginning_of_the_pipeline)
{
    /* Space goes on from the first stage (issue 13, item 8); the book's output is there. */
    ck_assert_int_eq(a.view.stage, VIEW_EMBEDDINGS);
    ck_assert_float_eq_tol(MAT_AT(&a.pipe.st.output, 0, 0), 0.3190f, 1e-4f);
    /* And it says plainly that the weights are untrained (item 9). */
    ck_assert_ptr_nonnull(a.view.message);
    ck_assert_ptr_nonnull(strstr(a.message, "untrained weights drawn from seed 123"));
}
END_TEST

/* On the simple variant the mask's digit says why there is none and what puts one on. */
START_TEST(an_absent_stage_says_why)
{
    for (int i = 0; i < 20 && a.pipe.cfg.variant != ATTN_SIMPLE; i++)
        keys("v"); /* round to simple */
    ck_assert_int_eq(a.pipe.cfg.variant, ATTN_SIMPLE);
    keys("1");
    keys("4");
    ck_assert_int_eq(a.view.stage, VIEW_EMBEDDINGS);
    ck_assert_msg(strstr(a.message, "no mask stage here") && strstr(a.message, "m puts"), "%s",
                  a.message);
    keys("m4");
    ck_assert_int_eq(a.view.stage, VIEW_MASK);
}
END_TEST

/* f and c say on the top line that they are on, and nothing once off (issue 38, item 14). */
START_TEST(colour_switches_are_on_the_knob_bar)
{
    char *text;

    keys("6fc");
    ck_assert(a.view.skip_first_key && a.view.log_scale);
    text = frame_text(100, 30);
    ck_assert_msg(strstr(text, "f:first key out of the colours c:log colours"), "%s", text);
    free(text);
    keys("fc");
    text = frame_text(100, 30);
    ck_assert_msg(strstr(text, "f:first key") == NULL && strstr(text, "c:log") == NULL, "%s", text);
    free(text);
}
END_TEST

/* A presenter's clicker steps a lesson; l lists its steps, a digit goes to one (issue 13, item 17). */
START_TEST(clicker_keys_and_the_step_list)
{
    struct walkthrough w;
    struct attn_error err;

    ck_assert_msg(walkthrough_load(&w, test_path("samples/walkthroughs/04-multi-head.walk"), &err) ==
                      ATTN_OK,
                  "%s", err.msg);
    ck_assert_msg(app_play(&a, &w, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_int_eq(a.view.step, 0);
    app_key(&a, APP_KEY_PAGE_DOWN); /* not in presentation mode: a page of rows, no step */
    ck_assert_int_eq(a.view.step, 0);
    keys("z");
    ck_assert(a.view.present);
    app_key(&a, APP_KEY_PAGE_DOWN);
    ck_assert_int_eq(a.view.step, 1);
    keys("F"); /* a figure of the step, then an export: the clicker still steps */
    ck_assert_msg(strstr(a.message, "wrote figure-"), "%s", a.message);
    keys("x");
    ck_assert(a.view.following);
    app_key(&a, APP_KEY_RIGHT);
    ck_assert_int_eq(a.view.step, 2);
    app_key(&a, APP_KEY_PAGE_UP);
    ck_assert_int_eq(a.view.step, 1);
    keys("l");
    ck_assert(a.view.picker);
    ck_assert_int_eq(a.view.picker_count, a.walk.count);
    ck_assert_int_eq(a.view.picker_sel, 1);
    ck_assert_str_eq(a.view.picker_items[0], a.walk.steps[0].title);
    keys("4");
    ck_assert(!a.view.picker);
    ck_assert_int_eq(a.view.step, 3);
    keys("l");
    app_key(&a, APP_KEY_UP);
    app_key(&a, APP_KEY_ENTER);
    ck_assert_int_eq(a.view.step, 2);
}
END_TEST

/*
 * Issue 50, item 3: one stray key never kills the clicker.  In a lesson in
 * presentation mode PgDn and PgUp step from the step last played even off
 * the script (after Esc, a stage key, a knob); b and . blank the screen
 * until the next key, which only brings it back.
 */
START_TEST(a_stray_key_never_strands_the_clicker)
{
    struct walkthrough w;
    struct attn_error err;
    char *text;

    ck_assert_msg(walkthrough_load(&w, test_path("samples/walkthroughs/04-multi-head.walk"), &err) ==
                      ATTN_OK,
                  "%s", err.msg);
    ck_assert_msg(app_play(&a, &w, &err) == ATTN_OK, "%s", err.msg);
    keys("z");
    app_key(&a, APP_KEY_PAGE_DOWN);
    ck_assert_int_eq(a.view.step, 1);
    /* Esc closes the narration and leaves the script: the clicker still steps from step 2 */
    app_key(&a, APP_KEY_ESCAPE);
    ck_assert(!a.view.following);
    app_key(&a, APP_KEY_PAGE_DOWN);
    ck_assert_int_eq(a.view.step, 2);
    ck_assert(a.view.following);
    /* a stage key off the script, then back */
    keys("3");
    ck_assert(!a.view.following);
    app_key(&a, APP_KEY_PAGE_UP);
    ck_assert_int_eq(a.view.step, 1);
    ck_assert(a.view.following);
    /* b blanks: nothing drawn; the next key only brings the screen back */
    keys("b");
    ck_assert(a.view.blank);
    text = frame_text(100, 30);
    for (const char *c = text; *c; c++)
        ck_assert_msg(*c == ' ' || *c == '\n', "a blank screen shows: %s", text);
    free(text);
    app_key(&a, APP_KEY_PAGE_DOWN);
    ck_assert(!a.view.blank);
    ck_assert_int_eq(a.view.step, 1);
    keys(".");
    ck_assert(a.view.blank);
    keys(".");
    ck_assert(!a.view.blank);
    ck_assert(a.view.following);
    text = frame_text(100, 30);
    ck_assert_msg(strstr(text, "step 2") != NULL || strstr(text, "2/") != NULL, "%s", text);
    free(text);
    app_key(&a, APP_KEY_PAGE_DOWN);
    ck_assert_int_eq(a.view.step, 2);
}
END_TEST

/*
 * Issue 50, item 4: on a projector (120 x 40) a lesson's words stay at one
 * column from step to step, whatever each screen shows (they moved 2-10
 * columns), and a mask with room to spare labels its keys with more than
 * two characters ("<| ca ·a ·u").
 */
START_TEST(a_lessons_words_stay_in_place)
{
    struct walkthrough w;
    struct attn_error err;
    struct grid g;
    int x = -1;

    ck_assert_msg(walkthrough_load(&w, test_path("samples/walkthroughs/19-sliding-windows.walk"),
                                   &err) == ATTN_OK,
                  "%s", err.msg);
    ck_assert_msg(app_play(&a, &w, &err) == ATTN_OK, "%s", err.msg);
    keys("z");
    ck_assert_int_eq(grid_create(&g, 120, 40), 0);
    for (int step = 0; step < a.walk.count; step++) {
        app_render(&a, &g);
        ck_assert_int_ge(a.view.frame.narration_x, 0);
        if (x < 0)
            x = a.view.frame.narration_x;
        ck_assert_msg(a.view.frame.narration_x == x, "step %d: the words at column %d, not %d",
                      step + 1, a.view.frame.narration_x, x);
        if (a.view.screen == SCREEN_STAGE && a.view.stage == VIEW_MASK && a.view.frame.tiles == 1)
            ck_assert_msg(a.view.frame.geo[0].cell_w >= 5, "step %d: cells %d wide", step + 1,
                          a.view.frame.geo[0].cell_w);
        app_key(&a, APP_KEY_PAGE_DOWN);
    }
    grid_destroy(&g);
}
END_TEST

/*
 * On a projector's small screen ] and [ page a long narration and i hides the
 * panel, all without leaving the script; a new step starts at the top of its
 * narration (issue 13, item 16).
 */
START_TEST(narration_pages_and_the_panel_hides)
{
    struct walkthrough w;
    struct attn_error err;
    struct grid g;

    ck_assert_msg(walkthrough_load(&w, test_path("samples/walkthroughs/03-causal-and-dropout.walk"),
                                   &err) == ATTN_OK,
                  "%s", err.msg);
    ck_assert_msg(app_play(&a, &w, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_int_eq(grid_create(&g, 60, 17), 0);
    keys("z   "); /* presentation mode, step 4: dropout, a long narration */
    ck_assert_int_eq(a.view.step, 3);
    app_render(&a, &g);
    ck_assert_int_gt(a.view.frame.narration_rows, a.view.frame.narration_page);
    keys("]");
    ck_assert_int_gt(a.view.narration_scroll, 0);
    ck_assert(a.view.following);
    app_render(&a, &g);
    keys("]"); /* at the end: said, not moved */
    ck_assert_ptr_nonnull(strstr(a.message, "the narration's end"));
    keys("[");
    ck_assert_int_eq(a.view.narration_scroll, 0);
    keys("]");
    keys("i");
    ck_assert(a.view.hide_panel);
    ck_assert(a.view.following);
    keys(" ");
    ck_assert_int_eq(a.view.step, 4);
    ck_assert_int_eq(a.view.narration_scroll, 0);
    grid_destroy(&g);
}
END_TEST

/* The help at 80x24: nothing cut, a "more" line, PgDn scrolls, q quits (issue 13, item 12). */
START_TEST(help_scrolls_and_says_there_is_more)
{
    struct grid g;
    char *text;
    size_t len;
    FILE *f;

    ck_assert_int_eq(grid_create(&g, 80, 24), 0);
    keys("?");
    app_render(&a, &g);
    ck_assert(a.view.help);
    ck_assert_int_gt(a.view.frame.help_rows, a.view.frame.help_page);
    f = open_memstream(&text, &len);
    grid_dump_text(&g, f);
    fclose(f);
    ck_assert_msg(strstr(text, "q quits") != NULL && strstr(text, "more below: Down or PgDn") != NULL,
                  "%s", text);
    /* A long description wraps onto a second row instead of being cut. */
    ck_assert_msg(strstr(text, "(Space and p also reach the positional\n") != NULL, "%s", text);
    free(text);
    app_key(&a, APP_KEY_PAGE_DOWN);
    app_render(&a, &g);
    ck_assert(a.view.help);
    ck_assert_int_gt(a.view.help_scroll, 0);
    ck_assert_int_le(a.view.help_scroll, a.view.frame.help_rows - a.view.frame.help_page);
    keys("q");
    ck_assert(a.quit);
    grid_destroy(&g);
}
END_TEST

/* A key that cannot act where it is pressed says so: never silence (item 8). */
START_TEST(keys_that_cannot_act_say_why)
{
    keys("p");
    ck_assert_int_eq(a.view.stage, VIEW_EMBEDDINGS);
    ck_assert_ptr_nonnull(strstr(a.message, "is the first stage: Space or n goes on"));
    keys("0 ");
    ck_assert_int_eq(a.view.stage, VIEW_OUTPUT);
    ck_assert_ptr_nonnull(strstr(a.message, "Output projection is the last stage"));
    app_key(&a, APP_KEY_TAB);
    ck_assert_ptr_nonnull(strstr(a.message, "is not split by head"));
    keys("g");
    ck_assert_ptr_nonnull(strstr(a.message, "per-head stages"));
    app_click(&a, 0, 0); /* the knob bar */
    ck_assert_ptr_nonnull(strstr(a.message, "a click on a cell explains it"));
    {
        /* A click on a stage in the stage bar goes there. */
        struct grid g;
        ck_assert_int_eq(grid_create(&g, 100, 30), 0);
        app_render(&a, &g);
        ck_assert_int_ge(a.view.frame.stage_x[VIEW_WEIGHTS][0], 0);
        app_click(&a, a.view.frame.stage_x[VIEW_WEIGHTS][0] + 1, a.view.frame.stage_bar_y);
        ck_assert_int_eq(a.view.stage, VIEW_WEIGHTS);
        grid_destroy(&g);
    }
}
END_TEST

START_TEST(stages_step_and_jump)
{
    keys("1");
    ck_assert_int_eq(a.view.stage, VIEW_EMBEDDINGS);
    keys(" ");
    ck_assert_int_eq(a.view.stage, VIEW_QKV); /* the positional encoding is off */
    keys("n");
    ck_assert_int_eq(a.view.stage, VIEW_SCORES);
    app_key(&a, APP_KEY_BACKSPACE);
    keys("p");
    ck_assert_int_eq(a.view.stage, VIEW_EMBEDDINGS);
    keys("p");
    ck_assert_int_eq(a.view.stage, VIEW_EMBEDDINGS); /* stays at the first */
    keys("P");                                         /* positional encoding on */
    ck_assert(a.pipe.cfg.positional && !a.pipe.cfg.positional_learned);
    keys(" ");
    ck_assert_int_eq(a.view.stage, VIEW_POSITIONAL);
    /* P again: the learned embedding (the weights stay); again: none; again: sinusoidal. */
    {
        float w0 = a.pipe.params.p[0].m.data[0];
        keys("P");
        ck_assert(a.pipe.cfg.positional && a.pipe.cfg.positional_learned);
        ck_assert_float_eq(a.pipe.params.p[0].m.data[0], w0);
        ck_assert_ptr_nonnull(strstr(a.message, "learned positional embedding added"));
        keys("P");
        ck_assert(!a.pipe.cfg.positional);
        keys("P");
        ck_assert(a.pipe.cfg.positional && !a.pipe.cfg.positional_learned);
    }
    keys("0");
    ck_assert_int_eq(a.view.stage, VIEW_OUTPUT);
    keys(" ");
    ck_assert_int_eq(a.view.stage, VIEW_OUTPUT); /* stays at the last */
}
END_TEST

START_TEST(cursor_moves_and_stays_inside)
{
    keys("6");
    app_key(&a, APP_KEY_DOWN);
    app_key(&a, APP_KEY_DOWN);
    app_key(&a, APP_KEY_RIGHT);
    ck_assert_int_eq(a.view.cursor_row, 2);
    ck_assert_int_eq(a.view.cursor_col, 1);
    app_key(&a, APP_KEY_END);
    ck_assert_int_eq(a.view.cursor_col, 5);
    app_key(&a, APP_KEY_RIGHT);
    ck_assert_int_eq(a.view.cursor_col, 5);
    app_key(&a, APP_KEY_HOME);
    ck_assert_int_eq(a.view.cursor_col, 0);
    for (int i = 0; i < 10; i++)
        app_key(&a, APP_KEY_DOWN);
    ck_assert_int_eq(a.view.cursor_row, 5);
    keys("0"); /* the output has 2 columns: the cursor follows */
    app_key(&a, APP_KEY_END);
    ck_assert_int_eq(a.view.cursor_col, 1);
}
END_TEST

START_TEST(heads_cycle_and_grid)
{
    keys("6");
    app_key(&a, APP_KEY_TAB);
    ck_assert_int_eq(a.view.head, 1);
    app_key(&a, APP_KEY_TAB);
    ck_assert_int_eq(a.view.head, 0);
    app_key(&a, APP_KEY_BACKTAB);
    ck_assert_int_eq(a.view.head, 1);
    keys("g");
    ck_assert(a.view.grid_heads);
    keys("h"); /* a third head: d_out grows with it */
    ck_assert_int_eq(a.pipe.st.shape.heads, 3);
    ck_assert_int_eq(a.cfg.d_out, 3);
    keys("HH");
    ck_assert_int_eq(a.pipe.st.shape.heads, 1);
    ck_assert_int_eq(a.view.head, 0);
}
END_TEST

START_TEST(breaking_the_mask_lets_tokens_see_the_future)
{
    ck_assert_float_eq(weight(0, 0, 5), 0.0f);
    keys("m");
    ck_assert_int_eq(a.cfg.mask, ATTN_MASK_NONE);
    ck_assert(weight(0, 0, 5) > 0.0f);
    ck_assert_ptr_nonnull(strstr(a.message, "tokens see the future"));
    keys("m");
    ck_assert_float_eq(weight(0, 0, 5), 0.0f);
}
END_TEST

START_TEST(scaling_off_makes_rows_peakier)
{
    float before;
    float after;

    keys("dd"); /* d_k = 3: sqrt(3) matters */
    before = weight(0, 5, 0);
    keys("/");
    ck_assert(!a.cfg.scale);
    after = weight(0, 5, 0);
    ck_assert_msg(before != after, "scaling off should change the weights");
    ck_assert_float_eq(a.pipe.st.divisor, 1.0f);
    keys(">");
    ck_assert_double_eq(a.cfg.temperature, 1.5);
    keys("<<");
    ck_assert_double_eq(a.cfg.temperature, 0.75);
}
END_TEST

START_TEST(dropout_knobs)
{
    unsigned char first[72];

    keys("ooooo");
    ck_assert_double_eq(a.cfg.dropout, 0.5);
    ck_assert(a.pipe.st.dropout_on);
    memcpy(first, a.pipe.st.keep, sizeof first);
    keys("r");
    ck_assert_int_eq(a.cfg.dropout_pass, 1);
    ck_assert_msg(memcmp(first, a.pipe.st.keep, sizeof first) != 0, "r draws a new mask");
    keys("R");
    ck_assert_mem_eq(first, a.pipe.st.keep, sizeof first);
    keys("k");
    ck_assert_int_eq(a.cfg.rng_path, RNG_PATH_MKL);
    keys("t");
    ck_assert(!a.pipe.st.dropout_on);
    keys("OOOOOOOOOO");
    ck_assert_double_eq(a.cfg.dropout, 0.0);
}
END_TEST

START_TEST(variants_cycle_through_the_book)
{
    static const enum attn_variant order[] = { ATTN_NOTES, ATTN_NN_MHA, ATTN_SIMPLE, ATTN_V1,
                                               ATTN_V2, ATTN_CAUSAL, ATTN_WRAPPER, ATTN_MHA };

    for (int i = 0; i < 8; i++) {
        keys("v");
        ck_assert_int_eq(a.cfg.variant, order[i]);
        ck_assert_ptr_nonnull(strstr(a.message, attention_variant_class(order[i])));
        if (order[i] == ATTN_NOTES) {
            /* Its heads split d_in = 3: 2 heads become 1, and h steps to 3, then no further. */
            ck_assert_int_eq(a.cfg.heads, 1);
            keys("h");
            ck_assert_int_eq(a.cfg.heads, 3);
            ck_assert_int_eq(a.pipe.st.shape.head_dim, 1);
            keys("h");
            ck_assert_int_eq(a.cfg.heads, 3);
            keys("H");
            ck_assert_int_eq(a.cfg.heads, 1);
            keys("b");
            ck_assert_ptr_nonnull(strstr(a.message, "always has its biases"));
        }
    }
    /* The variant brings the book's mask and scaling with it. */
    keys("V");
    ck_assert_int_eq(a.cfg.variant, ATTN_WRAPPER);
    ck_assert_int_eq(a.cfg.mask, ATTN_MASK_CAUSAL);
    keys("VVVV");
    ck_assert_int_eq(a.cfg.variant, ATTN_SIMPLE);
    ck_assert(!a.cfg.scale);
    ck_assert_int_eq(a.cfg.mask, ATTN_MASK_NONE);
    keys("d");
    ck_assert(a.view.message_is_error);
    ck_assert_ptr_nonnull(strstr(a.message, "simple has no weights"));
    keys("h");
    ck_assert_ptr_nonnull(strstr(a.message, "only wrapper, mha, notes and nn-mha"));
}
END_TEST

START_TEST(seed_and_bias_redraw_the_parameters)
{
    float w0 = a.pipe.params.p[0].m.data[0];

    keys("s");
    ck_assert_uint_eq(a.cfg.seed, 124);
    ck_assert(a.pipe.params.p[0].m.data[0] != w0);
    keys("S");
    ck_assert_float_eq(a.pipe.params.p[0].m.data[0], w0);
    keys("b");
    ck_assert(a.cfg.qkv_bias);
    ck_assert_int_eq(a.pipe.params.count, 8);
}
END_TEST

START_TEST(help_quit_and_clicks)
{
    struct grid g;

    keys("?");
    ck_assert(a.view.help);
    ck_assert_int_eq(grid_create(&g, 80, 24), 0);
    app_render(&a, &g); /* the help scrolls by the rows it drew */
    grid_destroy(&g);
    app_key(&a, APP_KEY_DOWN);
    ck_assert_int_eq(a.view.help_scroll, 1);
    app_key(&a, APP_KEY_ESCAPE);
    ck_assert(!a.view.help);

    /* A click lands on the cell drawn there. */
    keys("6");
    ck_assert_int_eq(grid_create(&g, 100, 30), 0);
    app_render(&a, &g);
    app_click(&a, a.view.frame.geo[0].x0 + 3 * a.view.frame.geo[0].cell_w + 1, a.view.frame.geo[0].y0 + 4);
    ck_assert_int_eq(a.view.cursor_row, 4);
    ck_assert_int_eq(a.view.cursor_col, 3);
    app_click(&a, 0, 0); /* not a cell: nothing moves */
    ck_assert_int_eq(a.view.cursor_row, 4);
    grid_destroy(&g);

    keys("q");
    ck_assert(a.quit);
}
END_TEST

/*
 * W shows the parameters a stage uses (issue 13, item 13): from any stage it
 * goes to Q K V's weights, on the output stage out_proj's; the panel names
 * the parameter and its origin; x writes them; W goes back; a variant with
 * none says so.
 */
START_TEST(parameters_key)
{
    struct grid g;
    char panel[1024];

    ck_assert_int_eq(grid_create(&g, 100, 30), 0);
    keys("6W");
    ck_assert_int_eq(a.view.stage, VIEW_QKV);
    ck_assert(view_params_shown(&a.view, &a.pipe, VIEW_QKV));
    ck_assert_int_eq(a.view.frame.rows, 3);     /* d_in 3, no bias */
    ck_assert_int_eq(a.view.frame.cols, 3);     /* q0 k0 v0 of head 0 (d_k 1) */
    app_render(&a, &g);
    snprintf(panel, sizeof panel, "%s", "");
    for (int y = 0; y < g.height; y++)
        for (int x = 0; x < g.width; x++)
            if (grid_at(&g, x, y)->ch == 'W' && x + 14 < g.width) {
                char word[16];
                for (int k = 0; k < 14; k++)
                    word[k] = (char)grid_at(&g, x + k, y)->ch;
                word[14] = '\0';
                if (strncmp(word, "W_query.weight", 14) == 0)
                    snprintf(panel, sizeof panel, "%s", word);
            }
    ck_assert_str_eq(panel, "W_query.weight");
    keys("x");
    ck_assert_msg(strstr(a.message, "wrote 3 parameter files (W_query.weight.csv ...)") != NULL, "%s",
                  a.message);
    keys("W");
    ck_assert(!view_params_shown(&a.view, &a.pipe, VIEW_QKV));
    keys("0W");
    ck_assert_int_eq(a.view.stage, VIEW_OUTPUT);
    ck_assert(view_params_shown(&a.view, &a.pipe, VIEW_OUTPUT));
    ck_assert_int_eq(a.view.frame.rows, 3);     /* z's 2 columns and the bias */
    keys("8");
    ck_assert(!view_params_shown(&a.view, &a.pipe, VIEW_CONTEXT));
    keys("0");
    ck_assert(!view_params_shown(&a.view, &a.pipe, VIEW_OUTPUT)); /* a stage key leaves them */
    while (a.cfg.variant != ATTN_SIMPLE)
        keys("v");
    keys("W");
    ck_assert(a.view.message_is_error);
    ck_assert_ptr_nonnull(strstr(a.message, "no trainable parameters"));
    grid_destroy(&g);
}
END_TEST

START_TEST(mask_matrix_key)
{
    keys("M");
    ck_assert_int_eq(a.view.stage, VIEW_MASK);
    ck_assert(a.view.mask_matrix);
    keys("M");
    ck_assert(!a.view.mask_matrix);
}
END_TEST

/*
 * A long text is edited in several rows (issue 38, item 15: a 900-token
 * text was a one-line field): words kept whole, up to a third of the
 * screen, "a-b/n" when rows are out of sight; Up and Down move by a row.
 */
START_TEST(a_long_text_is_edited_in_rows)
{
    char text[2048] = "";
    char *frame;
    size_t at;

    for (int k = 0; k < 30; k++)
        strcat(text, k ? " Your journey starts with one step" : "Your journey starts with one step");
    keys("e");
    app_key(&a, APP_KEY_CTRL('u'));
    type(text);
    frame = frame_text(100, 30);
    /* 1,019 characters in rows of 89: 12 rows, the last 10 shown (a third of 30). */
    ck_assert_msg(strstr(frame, "\n3-12/12 ") != NULL, "%s", frame);
    ck_assert_msg(strstr(frame, "sentence: Your journey starts with one step Your journey starts with "
                                "one step Your journey starts\n") == NULL,
                  "%s", frame); /* (the first row is out of sight) */
    free(frame);
    at = a.edit_cursor;
    app_key(&a, APP_KEY_UP);
    ck_assert_msg(at - a.edit_cursor > 70 && at - a.edit_cursor <= 89, "%zu -> %zu", at, a.edit_cursor);
    app_key(&a, APP_KEY_DOWN);
    ck_assert_uint_eq(a.edit_cursor, at);
    app_key(&a, APP_KEY_HOME);
    frame = frame_text(100, 30);
    ck_assert_msg(strstr(frame, "\n1-10/12 ") != NULL, "%s", frame);
    /* Words whole: every row but the last ends at a word's end. */
    ck_assert_msg(strstr(frame, "sentence: Your journey starts with one step Your journey starts with "
                                "one step Your journey starts\n") != NULL,
                  "%s", frame);
    free(frame);
    app_key(&a, APP_KEY_UP);
    ck_assert_uint_eq(a.edit_cursor, 0);
    app_key(&a, APP_KEY_ENTER);
    ck_assert(!a.view.editing);
    ck_assert_int_eq(a.pipe.tokens.count, 180);
}
END_TEST

static Suite *
app_suite(void)
{
    Suite *s = suite_create("app");
    TCase *tc;

    tc = tcase_create("book");
    tcase_set_timeout(tc, 60);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, starts_at_the_beginning_of_the_pipeline);
    tcase_add_test(tc, the_key_tables_are_consistent);
    tcase_add_test(tc, model_keys_on_the_book_say_so);
    tcase_add_test(tc, a_knob_is_set_by_typing_its_value);
    tcase_add_test(tc, a_long_text_is_edited_in_rows);
    tcase_add_test(tc, keys_that_cannot_act_say_why);
    tcase_add_test(tc, help_scrolls_and_says_there_is_more);
    tcase_add_test(tc, clicker_keys_and_the_step_list);
    tcase_add_test(tc, a_stray_key_never_strands_the_clicker);
    tcase_add_test(tc, a_lessons_words_stay_in_place);
    tcase_add_test(tc, colour_switches_are_on_the_knob_bar);
    tcase_add_test(tc, an_absent_stage_says_why);
    tcase_add_test(tc, narration_pages_and_the_panel_hides);
    tcase_add_test(tc, stages_step_and_jump);
    tcase_add_test(tc, cursor_moves_and_stays_inside);
    tcase_add_test(tc, heads_cycle_and_grid);
    tcase_add_test(tc, breaking_the_mask_lets_tokens_see_the_future);
    tcase_add_test(tc, scaling_off_makes_rows_peakier);
    tcase_add_test(tc, dropout_knobs);
    tcase_add_test(tc, variants_cycle_through_the_book);
    tcase_add_test(tc, seed_and_bias_redraw_the_parameters);
    tcase_add_test(tc, help_quit_and_clicks);
    tcase_add_test(tc, mask_matrix_key);
    tcase_add_test(tc, parameters_key);
    suite_add_tcase(s, tc);
    return s;
}

TEST_MAIN(app_suite)
