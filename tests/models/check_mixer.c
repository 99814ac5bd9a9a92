/*
 * check_mixer.c: the mixer is a slot (mixer.h).  A mixer that is not
 * attention, a causal running mean defined here and nowhere in the tree,
 * is added through the table and named by one layer of a shipped model:
 * that layer's output is the mean of its input rows so far, every other
 * layer keeps attention's bits, the cache counts what the mixer says it
 * keeps, and a layer naming a mixer no table has is refused by the
 * config's check.
 */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/decoder/decoder.h"
#include "attnscope/decoder/mixer.h"
#include "attnscope/families/model/generate.h"
#include "attnscope/families/model/headmap.h"
#include "attnscope/models/model.h"
#include "attnscope/pipeline/export.h"
#include "front/app/app.h"
#include "front/cli/print.h"
#include "model_harness.h"
#include "render/grid.h"

/* Output row i: the mean of input rows 0 .. i (each row's own sum, in order). */
static void
running_mean(const struct part_attention_args *a, struct decoder_layer_stages *s, int threads)
{
    const int C = a->c->d_model;

    (void)threads;
    for (int i = a->from; i < a->n; i++)
        for (int j = 0; j < C; j++) {
            float sum = 0.0f;
            for (int t = 0; t <= i; t++)
                sum += a->x[(size_t)t * (size_t)C + (size_t)j];
            s->attn[(size_t)i * (size_t)C + (size_t)j] = sum / (float)(i + 1);
        }
}

/* It keeps the running sum, one row, however many tokens. */
static size_t
running_kept(const struct decoder_config *c, int layer, int n)
{
    (void)layer;
    (void)n;
    return (size_t)c->d_model;
}

static const struct decoder_mixer mean_mixer = { "running mean", "the sum so far", running_mean,
                                                 running_kept, false, true, false, NULL, NULL };

enum { N = 9 };

static void
open_minillama(struct model *m)
{
    struct attn_error err;

    setenv("ATTNSCOPE_MODELS", absolute("samples/models"), 1);
    ck_assert_msg(model_open(m, "minillama", NULL, &err) == ATTN_OK, "%s", err.msg);
    unsetenv("ATTNSCOPE_MODELS");
}

static void
run(const struct model *m, struct decoder_run *r)
{
    static const int ids[N] = { 3, 17, 5, 40, 17, 5, 2, 9, 11 };
    struct attn_error err;

    ck_assert_msg(decoder_forward(&m->dec, ids, N, 5, NULL, r, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_msg(decoder_show_layer(&m->dec, r, 1, &err) == ATTN_OK, "%s", err.msg);
}

START_TEST(a_mixer_added_mixes_its_layer_only)
{
    static struct model m;
    struct decoder_run base, mixed;
    const struct decoder_config *c;
    const int id = decoder_mixer_add(&mean_mixer);
    size_t C;
    size_t attention_bytes;
    double worst = 0.0;

    ck_assert_int_ge(id, 1);
    ck_assert_ptr_eq(decoder_mixer(id), &mean_mixer);
    ck_assert_str_eq(decoder_mixer(DECODER_MIXER_ATTENTION)->name, "attention");
    open_minillama(&m);
    c = &m.dec.cfg;
    C = (size_t)c->d_model;
    ck_assert_int_ge(c->n_layer, 2);
    ck_assert_ptr_eq(decoder_mixer_of(c, 1), decoder_mixer(DECODER_MIXER_ATTENTION));
    run(&m, &base);
    attention_bytes = generation_cache_bytes(c, N);
    ck_assert_uint_eq(attention_bytes, 2u * (size_t)c->n_layer * N * (size_t)decoder_kv_width(c) * 4u);

    m.dec.cfg.mixer[1] = (unsigned char)id;
    ck_assert_ptr_eq(decoder_mixer_of(c, 1), &mean_mixer);
    run(&m, &mixed);
    /* Layer 0 is attention's to the bit; layer 1's mixer output is the running mean of its input. */
    ck_assert_int_eq(memcmp(base.layers[0].resid2, mixed.layers[0].resid2, N * C * sizeof(float)), 0);
    for (int i = 0; i < N; i++)
        for (size_t j = 0; j < C; j++) {
            double sum = 0.0;
            for (int t = 0; t <= i; t++)
                sum += mixed.layers[1].norm1[(size_t)t * C + j];
            const double mean = sum / (i + 1), got = mixed.layers[1].attn[(size_t)i * C + j];
            worst = fabs(got - mean) > worst ? fabs(got - mean) : worst;
        }
    ck_assert_msg(worst < 1e-5, "the running mean is off by %g", worst);
    ck_assert_int_ne(memcmp(base.layers[1].resid2, mixed.layers[1].resid2, N * C * sizeof(float)), 0);
    /* Shown, the mixed layer has no softmax weights to make; attention's layer has them. */
    ck_assert_ptr_nonnull(base.layers[1].weights);
    ck_assert_ptr_null(mixed.layers[1].scores);
    ck_assert_ptr_null(mixed.layers[1].weights);
    /* The cache holds what each layer's mixer keeps: one row for the mean, not layer 1's keys and values. */
    ck_assert_uint_eq(generation_cache_bytes(c, N),
                      attention_bytes - 2u * N * (size_t)decoder_kv_width(c) * 4u + C * 4u);
    decoder_run_destroy(&base);
    decoder_run_destroy(&mixed);
    model_close(&m);
}
END_TEST

START_TEST(a_mixer_no_table_has_is_refused)
{
    static struct model m;
    struct decoder_config c;
    struct attn_error err;

    open_minillama(&m);
    c = m.dec.cfg;
    ck_assert_int_eq(decoder_config_check(&c, "minillama", "a test", &err), ATTN_OK);
    c.mixer[1] = DECODER_MIXERS_MAX - 1;
    ck_assert_int_eq(decoder_config_check(&c, "minillama", "a test", &err), ATTN_EPARSE);
    ck_assert_str_eq(err.msg, "minillama: layer 1's mixer is number 7 (from a test): attnscope "
                              "has no such mixer");
    model_close(&m);
}
END_TEST

/* minillama with the running mean in layer 1: its pipeline at layer 1. */
static void
mixed_pipeline(struct model *m, struct pipeline *p)
{
    struct pipeline_source src;
    struct attention_config cfg;
    struct attn_error err;
    const int id = decoder_mixer_add(&mean_mixer);

    ck_assert_int_ge(id, 1);
    open_minillama(m);
    m->dec.cfg.mixer[1] = (unsigned char)id;
    memset(&src, 0, sizeof src);
    src.sentence = "cat map sun red fox";
    src.family = &family_model;
    src.model = m;
    src.top = 5;
    src.layer = 1;
    attention_config_init(&cfg);
    ck_assert_msg(pipeline_create(p, &cfg, &src, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_int_eq(p->layer, 1);
}

/*
 * The mixed layer through the screens: none of attention's stages there
 * (layer 0 keeps them); --print shows its output, --export writes its
 * stages and no queries or weights, and the view draws every stage it
 * steps to.
 */
START_TEST(a_mixed_layer_prints_exports_and_draws)
{
    static struct model m;
    struct pipeline p;
    struct attn_error err;
    struct print_options po;
    char *text = NULL;
    size_t len = 0;
    FILE *f;
    char path[600];
    int written = 0;

    mixed_pipeline(&m, &p);
    ck_assert(!pipeline_stage_present(&p, STAGE_WEIGHTS));
    ck_assert(!pipeline_stage_present(&p, STAGE_QUERIES));
    ck_assert(pipeline_stage_present(&p, STAGE_OUTPUT));
    ck_assert(pipeline_stage_present(&p, STAGE_RESIDUAL1));
    memset(&po, 0, sizeof po);
    po.digits = 3;
    f = open_memstream(&text, &len);
    print_model(f, &p, &po);
    fclose(f);
    ck_assert_msg(strstr(text, "layer 1, output (5 x 64)") != NULL, "%.1500s", text);
    ck_assert_msg(strstr(text, "layer 1, weights") == NULL, "%.1500s", text);
    free(text);
    ck_assert_msg(export_all(&p, dir, &written, &err) == ATTN_OK, "%s", err.msg);
    snprintf(path, sizeof path, "%s/output.csv", dir);
    ck_assert_int_eq(access(path, R_OK), 0);
    snprintf(path, sizeof path, "%s/queries.csv", dir);
    ck_assert_int_ne(access(path, F_OK), 0);
    {
        /* The map: the mixed layer's heads have no weights to measure, layer 0's have. */
        float prev[8];
        ck_assert_int_eq(m.dec.cfg.n_head, 4);
        ck_assert_int_eq(head_measures(&p, MEASURE_PREVIOUS, prev), 0);
        ck_assert(!isnan(prev[0]) && isnan(prev[4]) && isnan(prev[7]));
    }
    /* Layer 0 is attention's: its stages are there. */
    ck_assert_int_eq(pipeline_select_layer(&p, 0, &err), ATTN_OK);
    ck_assert(pipeline_stage_present(&p, STAGE_WEIGHTS));
    pipeline_destroy(&p);
    model_close(&m);
}
END_TEST

START_TEST(the_view_steps_through_a_mixed_layer)
{
    static struct model m;
    static struct app a;
    struct pipeline p;
    struct attn_error err;
    struct pipeline_source src;
    struct attention_config cfg;
    struct grid g;

    mixed_pipeline(&m, &p);
    pipeline_destroy(&p);
    memset(&src, 0, sizeof src);
    src.sentence = "cat map sun red fox";
    src.family = &family_model;
    src.model = &m;
    src.top = 5;
    attention_config_init(&cfg);
    ck_assert_msg(app_init(&a, &cfg, &src, NULL, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_int_eq(grid_create(&g, 100, 30), 0);
    app_key(&a, '.'); /* layer 1, the mixed one */
    ck_assert_int_eq(a.pipe.layer, 1);
    for (int k = 0; k < 40; k++) {
        app_render(&a, &g);
        app_key(&a, ' ');
    }
    for (int k = 0; k < 40; k++) {
        app_key(&a, 'p');
        app_render(&a, &g);
    }
    app_key(&a, 'L'); /* the model map: layer 1's heads have no weights to measure */
    app_render(&a, &g);
    grid_destroy(&g);
    app_destroy(&a);
    model_close(&m);
}
END_TEST

static Suite *
mixer_suite(void)
{
    Suite *s = suite_create("mixer");
    TCase *tc = tcase_create("slot");

    /* (a hang guard, not a timing: CK_TIMEOUT_MULTIPLIER scales it under the sanitizers) */
    tcase_set_timeout(tc, 30);
    /* (each test in a folder of its own, `dir`, removed after it) */
    tcase_add_checked_fixture(tc, test_tmpdir_setup, test_tmpdir_teardown);
    tcase_add_test(tc, a_mixer_added_mixes_its_layer_only);
    tcase_add_test(tc, a_mixer_no_table_has_is_refused);
    tcase_add_test(tc, a_mixed_layer_prints_exports_and_draws);
    tcase_add_test(tc, the_view_steps_through_a_mixed_layer);
    suite_add_tcase(s, tc);
    return s;
}

TEST_MAIN(mixer_suite)
