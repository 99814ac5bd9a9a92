/*
 * check_app_write.c: a model writing in the view, driven without a
 * terminal: G writes the token --generate would, A keeps writing until a
 * key, Backspace takes tokens back (the generator with them), the writing's
 * knobs change the next draw and no stage, the N screen shows the draw,
 * the kv stage the cache, a knob or an ablation keeps the written ids, an
 * edit ends the writing, and the toy refuses it by name.
 */
#include "config.h"

#include "app_harness.h"
#include "attnscope/families/model/generate.h"

/* The view on the shipped chapter-5 model and the book's prompt. */
static struct model ch5;

static void
setup_ch5(void)
{
    const struct model_options mo = { 2, NULL, false, NULL };

    test_tmpdir_setup();
    app_on_model(&a, &ch5, test_path("samples/models/chapter5/model.pth"), &mo,
                 "Every effort moves you");
    a.export_dir = dir;
}

static void
teardown_ch5(void)
{
    app_destroy(&a);
    model_close(&ch5);
    test_tmpdir_teardown();
}

/* The last token of the text shown. */
static int
last_id(void)
{
    const struct family_model_state *g = pipeline_decoder(&a.pipe);
    return g->ids[g->run.n - 1];
}

/* G writes what the book's generate writes (PyTorch: 4268 45 13 1495 13 at T 1.4, top-k 25). */
START_TEST(g_writes_pytorchs_tokens)
{
    static const int want[5] = { 4268, 45, 13, 1495, 13 };
    char *text;

    ck_assert(!app_can_unwrite(&a));
    ck_assert_int_eq(app_set_knob(&a, "sample-temperature 1.4"), 0);
    ck_assert_int_eq(app_set_knob(&a, "top-k 25"), 0);
    for (int i = 0; i < 5; i++) {
        keys("G");
        ck_assert_msg(a.writing != NULL && a.writing->written == i + 1, "%s", a.message);
        ck_assert_int_eq(last_id(), want[i]);
        ck_assert_int_eq(a.view.cursor_row, a.pipe.st.nq - 1); /* the new row in sight */
    }
    ck_assert_int_eq(a.pipe.st.nq, 9);
    ck_assert_str_eq(a.sentence, "Every effort moves you dropN.25.");
    ck_assert_msg(strstr(a.message, "drew .") != NULL, "%s", a.message);
    text = frame_text(100, 30);
    ck_assert_msg(strstr(text, "j:sample T 1.4 y:top-k 25") != NULL, "%s", text);
    free(text);
    /* The N screen: the draw of step 5, the chosen token marked; k's value said and nothing
       of the caption cut at 80 columns (issue 50, item 10: "after top-k, then torch.mul…"). */
    keys("N");
    text = frame_text(80, 40);
    ck_assert_msg(strstr(text, "The draw of step 5: softmax(logits / 1.4) after top-k 25\n") !=
                      NULL, "%s", text);
    ck_assert_msg(strstr(text, "then torch.multinomial: argmax p / q, q ~ Exp(1) per token\n") != NULL, "%s", text);
    ck_assert_msg(strstr(text, "chosen") != NULL, "%s", text);
    free(text);
    /* G and Backspace work there too. */
    keys("G");
    ck_assert_int_eq(a.writing->written, 6);
    app_key(&a, APP_KEY_BACKSPACE);
    ck_assert_int_eq(a.writing->written, 5);
}
END_TEST

/* Backspace takes tokens back, the generator with them: G then writes the same again. */
START_TEST(backspace_takes_back_and_g_draws_the_same)
{
    int first[8];

    ck_assert_int_eq(app_set_knob(&a, "sample-temperature 1"), 0);
    for (int i = 0; i < 8; i++) {
        keys("G");
        first[i] = last_id();
    }
    for (int i = 0; i < 5; i++)
        app_key(&a, APP_KEY_BACKSPACE);
    ck_assert_int_eq(a.writing->written, 3);
    ck_assert_int_eq(a.pipe.st.nq, 7);
    ck_assert_msg(strstr(a.message, "taken back: 3 written") != NULL, "%s", a.message);
    for (int i = 3; i < 8; i++) {
        keys("G");
        ck_assert_int_eq(last_id(), first[i]);
    }
    /* Back to the prompt; then Backspace is the previous stage again. */
    for (int i = 0; i < 8; i++)
        app_key(&a, APP_KEY_BACKSPACE);
    ck_assert_int_eq(a.writing->written, 0);
    ck_assert(!app_can_unwrite(&a));
    keys("3");
    app_key(&a, APP_KEY_BACKSPACE);
    ck_assert_int_ne(a.view.stage, VIEW_SCORES);
}
END_TEST

/* A keeps writing, a token each time the terminal asks, until a key; Esc only stops. */
START_TEST(a_keeps_writing_until_a_key)
{
    keys("A");
    ck_assert(a.writing_on);
    ck_assert_int_eq(a.writing->written, 1);
    for (int i = 0; i < 10; i++)
        app_key(&a, APP_KEY_WRITE_MORE);
    ck_assert_int_eq(a.writing->written, 11);
    ck_assert_msg(strstr(a.message, "writing: 11 tokens written") != NULL, "%s", a.message);
    app_key(&a, APP_KEY_ESCAPE);
    ck_assert(!a.writing_on);
    ck_assert_msg(strstr(a.message, "writing stopped: 11 tokens written") != NULL, "%s", a.message);
    app_key(&a, APP_KEY_WRITE_MORE); /* (a late request from the terminal writes nothing) */
    ck_assert_int_eq(a.writing->written, 11);
    /* Any other key stops it and does its own work. */
    keys("A");
    ck_assert_int_eq(a.writing->written, 12);
    keys("3");
    ck_assert(!a.writing_on);
    ck_assert_int_eq(a.view.stage, VIEW_SCORES);
    /* The terminal stopped a job (Esc during a forward): the writing stops, the text stays. */
    keys("A");
    app_stopped(&a);
    ck_assert(!a.writing_on);
    ck_assert_int_eq(a.writing->written, 13);
}
END_TEST

/*
 * --generate in the terminal (issue 48: 100,000 tokens were written before
 * the first frame, and Ctrl-C lost them): begun at once, a token each time
 * the terminal asks, stopping at the count or at any key, what was written
 * kept; the same tokens as writing them all first.
 */
START_TEST(generate_in_the_terminal_writes_a_token_a_frame)
{
    struct attn_error err;
    int first[5];

    app_write_meanwhile(&a, 5);
    ck_assert(a.writing_on);
    ck_assert_int_eq(a.writing->written, 0);
    ck_assert_msg(strstr(a.message, "writing (--generate): 5 to go") != NULL, "%s", a.message);
    for (int i = 0; i < 5; i++) {
        app_key(&a, APP_KEY_WRITE_MORE);
        first[i] = last_id();
    }
    ck_assert_int_eq(a.writing->written, 5);
    ck_assert(!a.writing_on);
    ck_assert_msg(strstr(a.message, "wrote 5 tokens (--generate)") != NULL, "%s", a.message);
    app_key(&a, APP_KEY_WRITE_MORE); /* (past the count: nothing) */
    ck_assert_int_eq(a.writing->written, 5);
    /* The same tokens as --generate writing them all at once (a figure's way). */
    for (int i = 0; i < 5; i++)
        app_key(&a, APP_KEY_BACKSPACE);
    ck_assert_int_eq(app_write_tokens(&a, 5, &err), ATTN_OK);
    ck_assert_int_eq(last_id(), first[4]);
    /* Stopped by the terminal (Ctrl-C, Esc) after two: two kept, no more written. */
    for (int i = 0; i < 5; i++)
        app_key(&a, APP_KEY_BACKSPACE);
    app_write_meanwhile(&a, 100000);
    app_key(&a, APP_KEY_WRITE_MORE);
    app_key(&a, APP_KEY_WRITE_MORE);
    app_stopped(&a);
    ck_assert(!a.writing_on);
    ck_assert_int_eq(a.writing->written, 2);
    ck_assert_msg(strstr(a.message, "writing stopped: 2 tokens written") != NULL, "%s", a.message);
    app_key(&a, APP_KEY_WRITE_MORE);
    ck_assert_int_eq(a.writing->written, 2);
}
END_TEST

/* The writing's knobs change no stage; a model knob or an ablation keeps the written ids. */
START_TEST(knobs_and_ablations_keep_the_written_text)
{
    unsigned long shown;
    int ids[12];
    const struct family_model_state *g;

    for (int i = 0; i < 6; i++)
        keys("G");
    g = pipeline_decoder(&a.pipe);
    memcpy(ids, g->ids, 10 * sizeof *ids);
    shown = a.pipe.generation;
    keys("j");
    ck_assert_double_eq(a.cfg.sample_temperature, 0.1);
    keys("yy");
    ck_assert_int_eq(a.cfg.top_k, 3);
    ck_assert_int_eq(app_set_knob(&a, "top-p 0.9"), 0);
    keys(":");
    type("seed 7");
    app_key(&a, APP_KEY_ENTER);
    ck_assert_msg(strstr(a.message, "torch.manual_seed(7) before the next token") != NULL, "%s",
                  a.message);
    ck_assert(a.pipe.generation == shown); /* nothing recomputed */
    ck_assert_double_eq(a.writing->o.sample.top_p, 0.9);
    ck_assert_int_ne(app_set_knob(&a, "top-k 60000"), 0);
    ck_assert_msg(strstr(a.message, "--top-k 60000: give 1 to the vocabulary's 50257") != NULL,
                  "%s", a.message);
    /* The mask off and on, a head ablated: the text stays the written ids. */
    keys("m");
    g = pipeline_decoder(&a.pipe);
    ck_assert_int_eq(g->run.n, 10);
    ck_assert_mem_eq(g->ids, ids, 10 * sizeof *ids);
    keys("m");
    keys("a");
    g = pipeline_decoder(&a.pipe);
    ck_assert_int_eq(g->ablated_heads, 1);
    ck_assert_mem_eq(g->ids, ids, 10 * sizeof *ids);
    keys("G");
    ck_assert_int_eq(a.writing->written, 7);
    /* An edit ends the writing: the text is read again as typed. */
    keys("e");
    type(" again");
    app_key(&a, APP_KEY_ENTER);
    ck_assert_ptr_null(a.writing);
    ck_assert(!app_can_unwrite(&a));
}
END_TEST

/* The kv stage: the layer's keys and values, the last forward's row marked, what it saved. */
START_TEST(the_kv_stage_shows_the_cache)
{
    char *text;

    ck_assert_int_eq(app_set_knob(&a, "stage cache"), 0);
    ck_assert_int_eq(a.view.stage, VIEW_CACHE);
    text = frame_text(100, 40);
    ck_assert_msg(strstr(text, "KV cache: the keys and values kept for the next token, head 0 of "
                               "2 (4 x 16)") != NULL,
                  "%s", text);
    ck_assert_msg(strstr(text, "4 tokens: 512 B this layer (2 x tokens x 16 x 4 bytes). All 2 "
                               "layers: 1.0 KiB.") != NULL, "%s",
                  text);
    free(text);
    keys("G");
    app_settle(&a); /* (the terminal's worker: the forward without the cache, measured) */
    ck_assert_int_eq(a.writing->uncached_n, 5);
    ck_assert(a.writing->uncached_seconds > 0.0);
    a.view.cursor_row = 4;
    text = frame_text(100, 40);
    ck_assert_msg(strstr(text, "\n+\\n ") != NULL, "the new row unmarked: %s", text);
    ck_assert_msg(strstr(text, "computed by the last forward (its rows 4 to 4 of 5)") != NULL,
                  "%s", text);
    ck_assert_msg(strstr(text, "the last token: 1 row a layer") != NULL &&
                      strstr(text, "without the cache, all 5 rows again") != NULL,
                  "%s", text);
    free(text);
    a.view.cursor_row = 1;
    text = frame_text(100, 40);
    ck_assert_msg(strstr(text, "reused: computed when '\xc2\xb7" "effort' was read") != NULL, "%s",
                  text);
    free(text);
    keys("x");
    ck_assert_msg(strstr(a.message, "layer0/keys.csv and values.csv (the cache)") != NULL, "%s",
                  a.message);
}
END_TEST

/* --generate in the view (app_write_tokens), the end token, and the toy's refusal. */
START_TEST(generate_option_and_the_end_token)
{
    struct attn_error err;

    generate_end_one(&a.eos, 198, "--eos"); /* greedy writes "\n" first */
    ck_assert_int_eq(app_write_tokens(&a, 3, &err), ATTN_OK);
    ck_assert(a.writing->ended);
    ck_assert_int_eq(a.writing->written, 0);
    ck_assert_msg(strstr(a.message, "the end token (--eos)") != NULL, "%s", a.message);
    keys("G");
    ck_assert_msg(strstr(a.message, "take it back to write on") != NULL, "%s", a.message);
    app_key(&a, APP_KEY_BACKSPACE);
    ck_assert(!a.writing->ended);
    generate_end_one(&a.writing->o.end, -1, "");
    ck_assert_int_eq(app_write_tokens(&a, 3, &err), ATTN_OK);
    ck_assert_int_eq(a.writing->written, 3);
}
END_TEST

START_TEST(the_toy_does_not_write)
{
    keys("G");
    ck_assert_ptr_null(a.writing);
    ck_assert_msg(strstr(a.message, "G writes with a trained model (--model)") != NULL, "%s",
                  a.message);
    keys("j");
    ck_assert_msg(strstr(a.message, "--sample-temperature is a trained model's (--model)") != NULL,
                  "%s", a.message);
    ck_assert_int_ne(app_set_knob(&a, "top-p 0.5"), 0);
    ck_assert(!explain_stage_present(&a.pipe, VIEW_CACHE));
}
END_TEST

/*
 * X after G writes generated.csv beside every stage, as --generate --export
 * does (issue 50, item 6: it wrote tokens.csv and 46 more files, no
 * generated.csv); before any G there is none.
 */
START_TEST(x_after_g_exports_what_was_written)
{
    char path[512], line[256];
    FILE *f;
    int rows = 0;

    keys("X");
    snprintf(path, sizeof path, "%s/generated.csv", a.export_dir);
    ck_assert_msg(access(path, F_OK) != 0, "%s before any token was written", path);
    keys("GGG");
    ck_assert_int_eq(a.writing->written, 3);
    keys("X");
    ck_assert_msg(strstr(a.message, "wrote") != NULL, "%s", a.message);
    f = fopen(path, "r");
    ck_assert_msg(f != NULL, "no %s after G G G X: %s", path, a.message);
    ck_assert(fgets(line, sizeof line, f) != NULL);
    ck_assert_str_eq(line, "step,position,id,token,probability\n");
    while (fgets(line, sizeof line, f) != NULL) {
        char want[32];
        snprintf(want, sizeof want, "%d,%d,%d,", rows + 1, 4 + rows,
                 pipeline_decoder(&a.pipe)->ids[4 + rows]);
        ck_assert_msg(strncmp(line, want, strlen(want)) == 0, "%s (want %s...)", line, want);
        rows++;
    }
    fclose(f);
    ck_assert_int_eq(rows, 3);
    snprintf(path, sizeof path, "%s/tokens.csv", a.export_dir);
    ck_assert(access(path, F_OK) == 0);
}
END_TEST

/*
 * An expert switched off, then writing twice (issue 60: the second G freed
 * the knobs' copy of the experts switched off a second time: a release
 * build aborted, ASan named run_unadopt).  Each written token's forward
 * keeps the expert off, and the text grows a token a key.
 */
START_TEST(writing_with_an_expert_off)
{
    struct model moe;
    const struct family_model_state *g;

    app_on_model(&a, &moe, test_path("samples/models/minimoe"), NULL, "cat map sun");
    ck_assert_int_eq(app_set_knob(&a, "stage router"), 0);
    keys("a");
    g = pipeline_decoder(&a.pipe);
    ck_assert_int_eq(g->experts_off_count, 1);
    keys("G");
    keys("G");
    ck_assert_ptr_nonnull(a.writing);
    ck_assert_int_eq(a.writing->written, 2);
    g = pipeline_decoder(&a.pipe);
    ck_assert_int_eq(g->run.n, 5);
    ck_assert_int_eq(g->experts_off_count, 1);
    ck_assert_ptr_nonnull(g->run.experts_off);
    app_destroy(&a);
    model_close(&moe);
}
END_TEST

static Suite *
app_write_suite(void)
{
    Suite *s = suite_create("app_write");
    TCase *tc = tcase_create("write");
    TCase *toy = tcase_create("toy");
    TCase *moe = tcase_create("experts");
    /* (a hang guard, not a timing: CK_TIMEOUT_MULTIPLIER scales it under the sanitizers) */
    tcase_set_timeout(toy, 30);

    tcase_set_timeout(tc, 60);
    tcase_add_checked_fixture(tc, setup_ch5, teardown_ch5);
    tcase_add_test(tc, g_writes_pytorchs_tokens);
    tcase_add_test(tc, backspace_takes_back_and_g_draws_the_same);
    tcase_add_test(tc, a_keeps_writing_until_a_key);
    tcase_add_test(tc, generate_in_the_terminal_writes_a_token_a_frame);
    tcase_add_test(tc, knobs_and_ablations_keep_the_written_text);
    tcase_add_test(tc, the_kv_stage_shows_the_cache);
    tcase_add_test(tc, x_after_g_exports_what_was_written);
    tcase_add_test(tc, generate_option_and_the_end_token);
    suite_add_tcase(s, tc);
    tcase_add_checked_fixture(toy, setup, teardown);
    tcase_add_test(toy, the_toy_does_not_write);
    suite_add_tcase(s, toy);
    tcase_set_timeout(moe, 60);
    tcase_add_test(moe, writing_with_an_expert_off);
    suite_add_tcase(s, moe);
    return s;
}

TEST_MAIN(app_write_suite)
