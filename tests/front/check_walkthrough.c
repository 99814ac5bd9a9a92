/*
 * check_walkthrough.c: the walkthrough format and every shipped walkthrough
 * (src/walkthrough.c, samples/walkthroughs/).  Each shipped lesson is built
 * step by step and every number its narration quotes is checked against
 * the core.
 */
#include "config.h"

#include <dirent.h>
#include <unistd.h>

#include "testutil.h"
#include "attnscope/families/model/family_model.h"
#include "attnscope/families/model/headmap.h"
#include "front/lessons/walkthrough.h"
#include "render/view.h"

START_TEST(every_shipped_walkthrough_verifies)
{
    DIR *d = opendir(test_path("samples/walkthroughs"));
    struct dirent *e;
    int files = 0;
    int skipped = 0;
    int refs = 0;

    ck_assert_msg(d != NULL, "samples/walkthroughs is missing");
    while ((e = readdir(d)) != NULL) {
        char path[4200];
        struct walkthrough w;
        struct attn_error err;
        int n;
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".walk") != 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", test_path("samples/walkthroughs"), e->d_name);
        ck_assert_msg(walkthrough_load(&w, path, &err) == ATTN_OK, "%s", err.msg);
        ck_assert_msg(w.count >= 4, "%s: only %d steps", e->d_name, w.count);
        n = walkthrough_verify(&w, &err);
        if (n < 0 && err.status == ATTN_EABSENT) {
            /* A lesson for a model users download (GPT-2 small): checked where it is. */
            printf("SKIPPED %s: %s\n", e->d_name, err.msg);
            skipped++;
        } else {
            ck_assert_msg(n >= 0, "%s", err.msg);
            refs += n;
            files++;
        }
        walkthrough_destroy(&w);
    }
    closedir(d);
    ck_assert_int_eq(files + skipped, 22);
    ck_assert_msg(files >= 18, "only %d lessons could be checked", files);
    ck_assert_msg(refs >= 100, "only %d numbers are checked", refs);
    printf("walkthroughs: %d files checked, %d quoted numbers checked against the core; %d skipped "
           "(their model is not on this machine)\n",
           files, refs, skipped);
}
END_TEST

static void
expect_load_error(const char *text, const char *needle)
{
    const char *path = test_write_text(dir, "bad.walk", text);
    struct walkthrough w;
    struct attn_error err;

    attn_error_clear(&err);
    ck_assert_int_ne(walkthrough_load(&w, path, &err), ATTN_OK);
    ck_assert_msg(strstr(err.msg, needle) != NULL, "'%s' not in: %s", needle, err.msg);
}

static void
expect_verify_error(const char *text, const char *needle)
{
    const char *path = test_write_text(dir, "bad.walk", text);
    struct walkthrough w;
    struct attn_error err;

    attn_error_clear(&err);
    ck_assert_msg(walkthrough_load(&w, path, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_int_lt(walkthrough_verify(&w, &err), 0);
    ck_assert_msg(strstr(err.msg, needle) != NULL, "'%s' not in: %s", needle, err.msg);
    walkthrough_destroy(&w);
}

START_TEST(format_errors_name_file_and_line)
{
    {
        /* A byte order mark before the first line is skipped, not read as text. */
        const char *path = test_write_text(dir, "bom.walk", "\xEF\xBB\xBFtitle: T\nstep: one\nstage: weights\n\ntext\n");
        struct walkthrough w;
        struct attn_error err;
        ck_assert_msg(walkthrough_load(&w, path, &err) == ATTN_OK, "%s", err.msg);
        ck_assert_str_eq(w.title, "T");
        walkthrough_destroy(&w);
    }
    expect_load_error("title: t\nsteps: x\n", "bad.walk:2: 'steps:' is not a header directive");
    expect_load_error("title: t\n", "no steps");
    expect_load_error("step: one\nstage: weights\nnote: hi\n\ntext\n",
                      "bad.walk:3: 'note:' is not a step directive");
    expect_load_error("step: one\nstage: attention\n\ntext\n",
                      "bad.walk:2: stage 'attention' does not exist");
    expect_load_error("step: one\n\ntext\n", "bad.walk:1: step 'one' has no stage");
    expect_load_error("step: one\nstage: weights\n", "bad.walk:1: step 'one' has no narration");
    expect_load_error("step: one\nstage: weights\ncell: journey\n\ntext\n",
                      "bad.walk:3: cell 'journey' needs a row and a column");
    expect_load_error("step: one\nstage: weights\nhead: first\n\ntext\n",
                      "bad.walk:3: head 'first' is not a head number");
    expect_load_error("step: one\nstage: weights\nview: zoom\n\ntext\n",
                      "bad.walk:3: view 'zoom' is not grid, mask, params, sentence, map [MEASURE] or next");
    expect_load_error("step: \nstage: weights\n\ntext\n", "bad.walk:1: a step needs a title");
    expect_load_error("step: one\nstage: weights\n\ntext \xff\n", "bad.walk:4: not UTF-8");
    expect_load_error("step: one\nstage: weights\ncell: 0 0\ncell: 1 1\n\ntext\n",
                      "bad.walk:4: a second 'cell:' in this step (the first is on line 3)");
    expect_load_error("step: one\nstage: weights\nstage: scores\n\ntext\n",
                      "bad.walk:3: a second 'stage:'");
    expect_load_error("step: one\nstage: weights\n\nclear \x1b[2J\n", "bad.walk:4: a control character (byte 0x1B)");
}
END_TEST

START_TEST(steps_that_cannot_be_built_name_their_line)
{
    expect_verify_error("options: --heads 3\nstep: one\nstage: weights\n\ntext\n",
                        "bad.walk:1: --heads 3 does not divide --d-out 2");
    /* What the core refuses cites the options line that asked for it, not the step's. */
    expect_verify_error("step: one\noptions: -s \"\"\nstage: weights\n\ntext\n",
                        "bad.walk:2: the sentence is empty");
    expect_verify_error("step: one\noptions: --sentence \"unclosed\nstage: weights\n\ntext\n",
                        "bad.walk:2: a quote is not closed");
    expect_verify_error("step: one\noptions: --print\nstage: weights\n\ntext\n",
                        "bad.walk:2: only options that configure attention");
    expect_verify_error("step: one\noptions: --walkthrough other\nstage: weights\n\ntext\n",
                        "bad.walk:2: only options that configure attention");
    expect_verify_error("step: one\noptions: -e nowhere.csv\nstage: weights\n\ntext\n",
                        "bad.walk:2: ");
    expect_verify_error("step: one\nstage: weights\ncell: journey moon\n\ntext\n",
                        "bad.walk:3: the weights stage has no column 'moon'");
    expect_verify_error("step: one\nstage: weights\nhead: 4\n\ntext\n",
                        "bad.walk:1: head 4 does not exist (2 heads)");
    expect_verify_error("step: one\nstage: positional\n\ntext\n",
                        "bad.walk:2: this configuration has no positional stage");
    /* view: params shows the parameters of Q K V or the output: a stage or variant without any. */
    expect_verify_error("step: one\nstage: weights\nview: params\n\ntext\n",
                        "bad.walk:2: view: params shows the parameters of stage qkv or output");
    expect_verify_error("options: --variant simple\nstep: one\nstage: qkv\nview: params\n\ntext\n",
                        "bad.walk:3: view: params shows the parameters of stage qkv or output");
    expect_verify_error("step: one\nstage: qkv\nview: params\ncell: d0 x9\n\ntext\n",
                        "bad.walk:4: the qkv stage has no column 'x9'");
}
END_TEST

START_TEST(quoted_numbers_are_checked)
{
    /* A right number passes; a wrong one, a bad reference and a bare number do not. */
    const char *path = test_write_text(dir, "ok.walk",
                                       "step: one\nstage: output\n\n"
                                       "The book's {output[Your][d0]=0.3190}, quoted `0.1234`,\n"
                                       "and {masked.h0[Your][step]=-inf}.\n");
    struct walkthrough w;
    struct attn_error err;

    ck_assert_msg(walkthrough_load(&w, path, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_int_eq(walkthrough_verify(&w, &err), 2);
    walkthrough_destroy(&w);

    expect_verify_error("step: one\nstage: output\n\nline one\nthe {output[Your][d0]=0.3191}\n",
                        "bad.walk:5: {output[Your][d0]=0.3191}: attnscope computes 0.319018");
    expect_verify_error("step: one\nstage: output\n\nthe {output[Your][d9]}\n",
                        "bad.walk:4: {output[Your][d9]}: output has no column 'd9'");
    expect_verify_error("step: one\nstage: output\n\nthe {weights[Your]}\n",
                        "bad.walk:4: '{weights[Your]}' is not a reference");
    expect_verify_error("step: one\nstage: output\n\nabout 0.3190 here\n",
                        "bad.walk:4: the number 0.3190 is not checked");
}
END_TEST

START_TEST(long_narration_is_whole)
{
    /* 3,000 words (15 KB) and a reference at the very end: nothing cut (was 8 KiB). */
    static char text[16384];
    const char *path;
    struct walkthrough w;
    struct walk_resources res;
    struct pipeline p;
    struct pipeline_source src;
    struct attn_error err;
    size_t used = 0;
    char *got;

    used += (size_t)snprintf(text, sizeof text,
                             "options: --variant simple\nstep: one\nstage: weights\n\n");
    for (int i = 0; i < 3000; i++)
        used += (size_t)snprintf(text + used, sizeof text - used, "word ");
    snprintf(text + used, sizeof text - used, "{weights[journey][journey]=0.24} end\n");
    path = test_write_text(dir, "long.walk", text);
    ck_assert_msg(walkthrough_load(&w, path, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_int_eq(walkthrough_resources(&w, 0, &res, &err), ATTN_OK);
    src = walk_resources_source(&res);
    ck_assert_int_eq(pipeline_create(&p, &res.opts.cfg, &src, &err), ATTN_OK);
    got = walkthrough_narrate(&w, 0, &p, WALK_VIEW, &err);
    ck_assert_ptr_nonnull(got);
    ck_assert_uint_eq(strlen(got), 3000 * 5 + strlen("0.24 end"));
    ck_assert_str_eq(got + 3000 * 5, "0.24 end");
    free(got);
    pipeline_destroy(&p);
    walk_resources_destroy(&res);
    walkthrough_destroy(&w);
}
END_TEST

/* A lesson names a repeated token by its label ("the#3"), or plainly for its first place. */
START_TEST(cells_name_repeated_tokens)
{
    const char *path = test_write_text(dir, "rep.walk",
                                       "options: --variant simple -s \"the cat saw the dog\"\n"
                                       "step: one\nstage: weights\ncell: the#3 the\n\n"
                                       "{weights[the#3][the#0]=0.2766}\n");
    struct walkthrough w;
    struct walk_resources res;
    struct pipeline p;
    struct attn_error err;
    int row;
    int col;

    ck_assert_msg(walkthrough_load(&w, path, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_msg(walkthrough_step_pipeline(&w, 0, &res, &p, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_int_eq(walkthrough_cell(&w, 0, &p, &row, &col, &err), 0);
    ck_assert_int_eq(row, 3);
    ck_assert_int_eq(col, 0);
    ck_assert_msg(walkthrough_check_step(&w, 0, &p, &err) == 1, "%s", err.msg);
    pipeline_destroy(&p);
    walk_resources_destroy(&res);
    walkthrough_destroy(&w);
}
END_TEST

/* What the view says and what paper says: {view: ...} and {paper: ...} spans, references inside. */
START_TEST(narration_spans_pick_the_audience)
{
    const char *path = test_write_text(
        dir, "spans.walk",
        "options: --variant simple\nstep: one\nstage: weights\n\n"
        "Softmax makes rows sum to 1. {view: Move the cursor: the panel below\nexplains "
        "{weights[journey][journey]=0.24}.}{paper: The table below lists them.}\n\n"
        "{view: Press / to compare.}\n\n"
        "Last {paper:printed} words {view:shown}.\n");
    struct walkthrough w;
    struct walk_resources res;
    struct pipeline p;
    struct attn_error err;
    char *text;

    ck_assert_msg(walkthrough_load(&w, path, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_msg(walkthrough_step_pipeline(&w, 0, &res, &p, &err) == ATTN_OK, "%s", err.msg);
    text = walkthrough_narrate(&w, 0, &p, WALK_VIEW, &err);
    ck_assert_ptr_nonnull(text);
    ck_assert_str_eq(text, "Softmax makes rows sum to 1. Move the cursor: the panel below explains "
                           "0.24.\nPress / to compare.\nLast words shown.");
    free(text);
    text = walkthrough_narrate(&w, 0, &p, WALK_PAPER, &err);
    ck_assert_ptr_nonnull(text);
    ck_assert_str_eq(text, "Softmax makes rows sum to 1. The table below lists them.\n"
                           "Last printed words.");
    free(text);
    /* The view's reference is checked even though paper never shows it. */
    ck_assert_int_eq(walkthrough_check_step(&w, 0, &p, &err), 1);
    pipeline_destroy(&p);
    walk_resources_destroy(&res);
    walkthrough_destroy(&w);

    /* (test_write_text's path is its own buffer: each file is written when it is read.) */
    path = test_write_text(dir, "open.walk",
                           "options: --variant simple\nstep: one\nstage: weights\n\n"
                           "ends {view: never\n\nclosed}\n");
    ck_assert_msg(walkthrough_load(&w, path, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_msg(walkthrough_step_pipeline(&w, 0, &res, &p, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_ptr_null(walkthrough_narrate(&w, 0, &p, WALK_PAPER, &err));
    ck_assert_msg(strstr(err.msg, "open.walk:5: '{view: never") != NULL &&
                      strstr(err.msg, "not closed") != NULL, "%s", err.msg);
    pipeline_destroy(&p);
    walk_resources_destroy(&res);
    walkthrough_destroy(&w);

    path = test_write_text(dir, "badref.walk",
                           "options: --variant simple\nstep: one\nstage: weights\n\n"
                           "ok {view: {weights[journey][journey]=0.99}}\n");
    ck_assert_msg(walkthrough_load(&w, path, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_msg(walkthrough_step_pipeline(&w, 0, &res, &p, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_int_eq(walkthrough_check_step(&w, 0, &p, &err), -1);
    ck_assert_msg(strstr(err.msg, "attnscope computes") != NULL, "%s", err.msg);
    pipeline_destroy(&p);
    walk_resources_destroy(&res);
    walkthrough_destroy(&w);
}
END_TEST

START_TEST(narration_renders_values_and_paragraphs)
{
    const char *path = test_write_text(dir, "ok.walk",
                                       "title: T\noptions: --variant simple\n"
                                       "step: one\nstage: weights\ncell: journey starts\n\n"
                                       "first {weights[journey][journey]=0.24} line\ncontinues `x`\n\n"
                                       "second paragraph\n");
    struct walkthrough w;
    struct walk_resources res;
    struct pipeline p;
    struct pipeline_source src;
    struct attn_error err;
    char *text;
    int row;
    int col;

    ck_assert_msg(walkthrough_load(&w, path, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_str_eq(w.title, "T");
    ck_assert_int_eq(walkthrough_resources(&w, 0, &res, &err), ATTN_OK);
    src = walk_resources_source(&res);
    ck_assert_int_eq(pipeline_create(&p, &res.opts.cfg, &src, &err), ATTN_OK);
    text = walkthrough_narrate(&w, 0, &p, WALK_VIEW, &err);
    ck_assert_ptr_nonnull(text);
    ck_assert_str_eq(text, "first 0.24 line continues x\nsecond paragraph");
    free(text);
    ck_assert_int_eq(walkthrough_cell(&w, 0, &p, &row, &col, &err), 0);
    ck_assert_int_eq(row, 1);
    ck_assert_int_eq(col, 2);
    pipeline_destroy(&p);
    walk_resources_destroy(&res);
    walkthrough_destroy(&w);
}
END_TEST


/* Lessons on a trained model: a layer, the map's and the predictions' numbers, a model folder
 * relative to the lesson, and a model that is not here (tests/fixtures/gpt2/tiny). */
START_TEST(lessons_on_a_model)
{
    char link[512];
    char text[4400];
    char want[64];
    const char *path;
    struct walkthrough w;
    struct walk_resources res;
    struct pipeline p;
    struct attn_error err;
    float measures[4];
    char *got;

    snprintf(link, sizeof link, "%s/tinymodel", dir);
    {
        char *target = realpath(test_path("tests/fixtures/gpt2/tiny"), NULL);
        ck_assert_ptr_nonnull(target);
        ck_assert_int_eq(symlink(target, link), 0);
        free(target);
    }
    path = test_write_text(dir, "model.walk",
                           "options: --model tinymodel -s \"The cat sat on the mat, and the cat sat\"\n"
                           "step: one\nlayer: 1\nstage: weights\nhead: 1\ncell: 3 1\n\n"
                           "{weights.h1[3][1]} {map.previous[1][0]} {next[3][0]}\n"
                           "step: two\nstage: ln2\nview: map induction\n\nmap\n");
    ck_assert_msg(walkthrough_load(&w, path, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_int_eq(w.steps[0].layer, 1);
    ck_assert_int_eq(w.steps[1].screen, WALK_SCREEN_MAP);
    ck_assert_int_eq(w.steps[1].measure, MEASURE_INDUCTION);
    {
        char absent[64];
        ck_assert_ptr_null(walkthrough_absent_model(&w, absent, sizeof absent)); /* beside it */
    }
    ck_assert_msg(walkthrough_step_pipeline(&w, 0, &res, &p, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_ptr_nonnull(pipeline_decoder(&p));
    ck_assert_int_eq(p.layer, 1);
    got = walkthrough_narrate(&w, 0, &p, WALK_VIEW, &err);
    ck_assert_ptr_nonnull(got);
    {
        /* Each number is the core's: the layer's weight, the map's (layer 1, head 0), the next token's. */
        struct pipeline_view v;
        const struct family_model_state *g = pipeline_decoder(&p);
        pipeline_stage_view(&p, STAGE_WEIGHTS, 1, &v);
        ck_assert_int_eq(head_measures(&p, MEASURE_PREVIOUS, measures), 0);
        ck_assert_float_ne(measures[2], measures[1]); /* layer 1 head 0 is not layer 0 head 1 */
        snprintf(want, sizeof want, "%.4f %.4f %.4f", (double)MAT_AT(&v.m, 3, 1),
                 (double)measures[2], (double)g->run.top_probs[3 * g->run.top]);
        ck_assert_str_eq(got, want);
    }
    free(got);
    ck_assert_int_eq(walkthrough_check_step(&w, 0, &p, &err), 3);
    /* A model's words carry their space ('·on'); a lesson may name them without it. */
    ck_assert_int_eq(walkthrough_find_label("on", (const char *const *)p.query_labels, NULL, p.st.nq), 3);
    ck_assert_int_eq(walkthrough_find_label("cat", (const char *const *)p.query_labels, NULL, p.st.nq), 1);
    ck_assert_int_eq(walkthrough_find_label("cat#11", (const char *const *)p.query_labels, NULL, p.st.nq), 11);
    ck_assert_int_eq(walkthrough_find_label("The", (const char *const *)p.query_labels, NULL, p.st.nq), 0);
    pipeline_destroy(&p);
    walk_resources_destroy(&res);
    ck_assert_int_eq(walkthrough_verify(&w, &err), 3);
    walkthrough_destroy(&w);

    /* A wrong number, a layer or head the model lacks, a map on the book's classes. */
    snprintf(text, sizeof text,
             "options: --model %s -s \"The cat sat\"\nstep: one\nstage: weights\n\n{map.previous[1][0]=0.9}\n",
             test_path("tests/fixtures/gpt2/tiny"));
    expect_verify_error(text, "bad.walk:5: {map.previous[1][0]=0.9}: attnscope computes");
    snprintf(text, sizeof text, "options: --model %s -s \"The cat sat\"\nstep: one\nlayer: 2\nstage: weights\n\nx\n",
             test_path("tests/fixtures/gpt2/tiny"));
    expect_verify_error(text, "bad.walk:3: layer 2: tiny has layers 0 to 1");
    snprintf(text, sizeof text, "options: --model %s -s \"The cat sat\"\nstep: one\nhead: 2\nstage: weights\n\nx\n",
             test_path("tests/fixtures/gpt2/tiny"));
    expect_verify_error(text, "bad.walk:2: head 2: tiny has heads 0 to 1");
    expect_verify_error("step: one\nstage: weights\nview: map\n\nx\n",
                        "bad.walk:1: view: map needs a trained model (--model)");
    expect_verify_error("step: one\nstage: weights\n\n{map.previous[0][0]}\n",
                        "the model map needs a trained model");
    expect_load_error("step: one\nstage: weights\nview: map heads\n\nx\n",
                      "bad.walk:3: view: map 'heads': the measures are");
    {
        /* "view: map" alone is the first measure; "heatmaps" the choice after the measures. */
        const char *hm = test_write_text(dir, "hm.walk",
                                         "step: a\nstage: weights\nview: map\n\nx\n"
                                         "step: b\nstage: weights\nview: map heatmaps\n\nx\n");
        ck_assert_msg(walkthrough_load(&w, hm, &err) == ATTN_OK, "%s", err.msg);
        ck_assert_int_eq(w.steps[0].measure, MEASURE_ENTROPY);
        ck_assert_int_eq(w.steps[1].measure, VIEW_MAP_HEATMAPS);
        ck_assert_int_eq(w.steps[1].screen, WALK_SCREEN_MAP);
        walkthrough_destroy(&w);
    }

}
END_TEST

/* A lesson's model that is not on this machine: ATTN_EABSENT, which the checks report as skipped. */
START_TEST(a_lessons_model_not_here_is_absent)
{
    const char *path;
    struct walkthrough w;
    struct attn_error err;

    unsetenv("ATTNSCOPE_MODEL");
    path = test_write_text(dir, "absent.walk",
                           "options: --model no-such-model-here -s cat\nstep: one\nstage: weights\n\nx\n");
    ck_assert_msg(walkthrough_load(&w, path, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_int_lt(walkthrough_verify(&w, &err), 0);
    ck_assert_int_eq(err.status, ATTN_EABSENT);
    ck_assert_msg(strstr(err.msg, "absent.walk:1: model no-such-model-here is not on this machine") != NULL,
                  "%s", err.msg);
    {
        /* The picker's question, asked without opening anything. */
        char absent[64];
        ck_assert_ptr_nonnull(walkthrough_absent_model(&w, absent, sizeof absent));
        ck_assert_str_eq(absent, "no-such-model-here");
    }
    walkthrough_destroy(&w);
    /* ... found through $ATTNSCOPE_MODEL, which does not touch the book's lessons. */
    setenv("ATTNSCOPE_MODEL", test_path("tests/fixtures/gpt2/tiny"), 1);
    ck_assert_msg(walkthrough_load(&w, path, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_msg(walkthrough_verify(&w, &err) == 0, "%s", err.msg);
    {
        char absent[64];
        ck_assert_ptr_null(walkthrough_absent_model(&w, absent, sizeof absent));
    }
    walkthrough_destroy(&w);
    path = test_write_text(dir, "toy.walk", "step: one\nstage: output\n\n{output[Your][d0]=0.3190}\n");
    ck_assert_msg(walkthrough_load(&w, path, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_msg(walkthrough_verify(&w, &err) == 1, "%s", err.msg);
    walkthrough_destroy(&w);
    unsetenv("ATTNSCOPE_MODEL");
}
END_TEST

static Suite *
walkthrough_suite(void)
{
    Suite *s = suite_create("walkthrough");
    TCase *tc = tcase_create("walkthrough");

    tcase_add_checked_fixture(tc, test_tmpdir_setup, test_tmpdir_teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, every_shipped_walkthrough_verifies);
    tcase_add_test(tc, format_errors_name_file_and_line);
    tcase_add_test(tc, steps_that_cannot_be_built_name_their_line);
    tcase_add_test(tc, quoted_numbers_are_checked);
    tcase_add_test(tc, narration_renders_values_and_paragraphs);
    tcase_add_test(tc, narration_spans_pick_the_audience);
    tcase_add_test(tc, long_narration_is_whole);
    tcase_add_test(tc, cells_name_repeated_tokens);
    tcase_add_test(tc, lessons_on_a_model);
    tcase_add_test(tc, a_lessons_model_not_here_is_absent);
    suite_add_tcase(s, tc);
    return s;
}

TEST_MAIN(walkthrough_suite)
