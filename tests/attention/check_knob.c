/*
 * check_knob.c: the knob table (src/core/pipeline/knob.c) and what is made from it:
 * the command line's options, the view's keys and help, the knob bar and
 * the decision to recompute only the attention.
 */
#include "config.h"

#include <stddef.h>

#include "attnscope/pipeline/knob.h"
#include "attnscope/pipeline/pipeline.h"
#include "attnscope/attention/qkv.h"
#include "attnscope/base/utf8.h"
#include "front/cli/cli.h"
#include "testutil.h"
#include "render/grid.h"
#include "front/app/app.h"

/* Keys the view uses for other things than knobs. */
static const char view_keys[] = " npqgMewzxX?0123456789";

START_TEST(every_row_is_complete)
{
    for (int i = 0; i < KNOB_COUNT; i++) {
        const struct knob *k = &knob_table[i];
        ck_assert_ptr_nonnull(k->name);
        ck_assert(k->parse != NULL || k->flag_text[0] != NULL);
        ck_assert_ptr_nonnull(k->options[0].name);
        ck_assert_msg(k->options[0].help != NULL, "%s: the first option needs help", k->name);
        for (int j = 0; j < 2; j++)
            if (k->options[j].name != NULL && k->options[j].metavar == NULL)
                ck_assert_msg(k->options[j].value != NULL, "--%s stands for no value",
                              k->options[j].name);
        ck_assert_uint_gt(k->field_size, 0);
        ck_assert_uint_le(k->field + k->field_size, sizeof(struct attention_config));
        ck_assert_uint_le(k->field2 + k->field2_size, sizeof(struct attention_config));
        if (k->key != 0) {
            int way = 0;
            ck_assert_msg((k->step != NULL || k->flag_text[0] != NULL) &&
                              (k->said != NULL || k->flag_text[2] != NULL) && k->keys != NULL &&
                              k->key_help != NULL,
                          "%s has a key but no step, message or help", k->name);
            ck_assert_ptr_eq(knob_for_key(k->key, &way), k);
            ck_assert_int_eq(way, 1);
            ck_assert_msg(strchr(view_keys, k->key) == NULL, "%s's key %c is the view's", k->name,
                          k->key);
            if (k->key_back != 0) {
                ck_assert_ptr_eq(knob_for_key(k->key_back, &way), k);
                ck_assert_int_eq(way, -1);
                ck_assert(strchr(view_keys, k->key_back) == NULL);
            }
        }
        if (k->bar_key != NULL)
            ck_assert_msg(k->bar != NULL || (k->flag_text[0] != NULL && k->flag_text[1] != NULL),
                          "%s is on the bar without a text", k->name);
    }
    ck_assert_ptr_null(knob_for_key(0, &(int){ 0 }));
    ck_assert_ptr_null(knob_for_key('q', &(int){ 0 }));
}
END_TEST

/* Every option of every knob is accepted by the command line and listed by --help. */
START_TEST(options_come_from_the_table)
{
    for (int i = 0; i < KNOB_COUNT; i++) {
        for (int j = 0; j < 2; j++) {
            const struct knob_option *ko = &knob_table[i].options[j];
            char opt[64];
            char *argv[8];
            int argc;
            struct cli_options o;
            char err[512];
            if (ko->name == NULL)
                continue;
            snprintf(opt, sizeof opt, "--%s", ko->name);
            argv[0] = (char *)"attnscope";
            argv[1] = opt;
            /* A value each knob accepts. */
            argv[2] = (char *)(i == KNOB_VARIANT ? "wrapper" : i == KNOB_MASK ? "none"
                               : i == KNOB_RNG   ? "mkl"
                               : i == KNOB_DROPOUT || i == KNOB_TOP_P ? "0.5"
                                                   : "3");
            argc = ko->metavar ? 3 : 2;
            /* The writing's knobs are a model's, beside --generate. */
            if (KNOB_WRITING_SET & ((uint64_t)1 << i)) {
                argv[argc++] = (char *)"--model";
                argv[argc++] = (char *)"some-model";
                argv[argc++] = (char *)"--generate";
                argv[argc++] = (char *)"1";
            }
            argv[argc] = NULL;
            ck_assert_msg(cli_parse(argc, argv, &o, err, sizeof err) == 0, "%s: %s", opt, err);
            ck_assert_msg(strstr(cli_usage(), opt) != NULL, "--help lacks %s", opt);
        }
    }
}
END_TEST

/* Which changes recompute what: the knob's own class, nothing more. */
START_TEST(recompute_follows_the_rows)
{
    struct attention_config a;
    struct attention_config b;

    attention_config_init(&a);
    b = a;
    ck_assert(knob_differ_at_most(&a, &b, RECOMPUTE_ATTENTION));
    for (int i = 0; i < KNOB_COUNT; i++) {
        const struct knob *k = &knob_table[i];
        b = a;
        /* Any change of the field's bytes will do. */
        ((unsigned char *)&b)[k->field] ^= 1;
        ck_assert_msg(knob_differ_at_most(&a, &b, RECOMPUTE_NOTHING) ==
                          (k->recompute == RECOMPUTE_NOTHING),
                      "%s", k->name);
        ck_assert_msg(knob_differ_at_most(&a, &b, RECOMPUTE_ATTENTION) ==
                          (k->recompute <= RECOMPUTE_ATTENTION),
                      "%s", k->name);
        ck_assert_msg(knob_differ_at_most(&a, &b, RECOMPUTE_INPUTS) ==
                          (k->recompute <= RECOMPUTE_INPUTS),
                      "%s", k->name);
        ck_assert(knob_differ_at_most(&a, &b, RECOMPUTE_ALL));
    }
    b = a;
    b.dropout = 0.5;
    b.temperature = 2.0;
    b.mask = ATTN_MASK_NONE;
    ck_assert(knob_differ_at_most(&a, &b, RECOMPUTE_ATTENTION));
    b.seed = 7;
    ck_assert(!knob_differ_at_most(&a, &b, RECOMPUTE_ATTENTION));
    /* The writing's knobs change no stage. */
    b = a;
    b.sample_temperature = 0.7;
    b.top_k = 40;
    b.top_p = 0.9;
    ck_assert(knob_differ_at_most(&a, &b, RECOMPUTE_NOTHING));
}
END_TEST

/* The view's keys, help and bar are the table's, and the scale-dim knob has them all. */
START_TEST(view_keys_help_and_bar)
{
    struct vocab book;
    struct attention_config cfg;
    struct pipeline_source src = { .sentence = "Your journey starts with one step" };
    struct attn_error err;
    struct app a;
    int count;
    const struct view_help_line *help = app_help(&count);
    int knob_lines = 0;
    struct grid g;

    for (int i = 0; i < count; i++)
        for (int k = 0; k < KNOB_COUNT; k++)
            if (knob_table[k].keys != NULL && strcmp(help[i].keys, knob_table[k].keys) == 0)
                knob_lines++;
    for (int k = 0; k < KNOB_COUNT; k++)
        knob_lines -= knob_table[k].keys != NULL;
    ck_assert_int_eq(knob_lines, 0);

    ck_assert_int_eq(vocab_builtin(&book, NULL), ATTN_OK);
    src.vocab = &book;
    attention_config_init(&cfg);
    ck_assert_int_eq(app_init(&a, &cfg, &src, NULL, &err), ATTN_OK);
    ck_assert_int_eq(grid_create(&g, 200, 40), 0);
    app_key(&a, 'u');
    ck_assert_int_eq(a.cfg.scale_dim, 2);
    ck_assert_float_eq(a.pipe.st.divisor, sqrtf(2.0f));
    ck_assert_msg(strstr(a.message, "sqrt(2) instead of sqrt(d_k) = sqrt(1)") != NULL, "%s",
                  a.message);
    app_render(&a, &g);
    {
        char line[256];
        int n = 0;
        for (int x = 0; x < g.width && n < 250; x++)
            n += utf8_encode(g.cells[x].ch, line + n);
        line[n] = '\0';
        ck_assert_msg(strstr(line, "/:scaled u:sqrt(2) <>:T 1") != NULL, "%s", line);
    }
    app_key(&a, 'U');
    ck_assert_int_eq(a.cfg.scale_dim, 0);
    app_key(&a, 'U'); /* already d_k: nothing to halve */
    ck_assert_int_eq(a.cfg.scale_dim, 0);
    app_key(&a, '/');
    app_key(&a, 'u');
    ck_assert(a.view.message_is_error);
    ck_assert_ptr_nonnull(strstr(a.message, "press / to divide"));
    grid_destroy(&g);
    app_destroy(&a);
    vocab_destroy(&book);
}
END_TEST

/* A knob that does not apply says so: no positional encoding without embeddings. */
START_TEST(positional_says_why_under_qkv)
{
    struct qkv_given g;
    struct vocab book;
    struct attention_config cfg;
    struct pipeline_source src = { .sentence = NULL };
    struct attn_error err;
    struct app a;

    ck_assert_msg(qkv_load(&g, test_path("samples/soft-dictionary"), &err) == ATTN_OK, "%s", err.msg);
    ck_assert_int_eq(vocab_builtin(&book, NULL), ATTN_OK);
    src.vocab = &book;
    src.qkv = &g;
    attention_config_init(&cfg);
    attention_config_set_variant(&cfg, ATTN_SIMPLE);
    ck_assert_int_eq(app_init(&a, &cfg, &src, NULL, &err), ATTN_OK);
    app_key(&a, 'P');
    ck_assert(!a.cfg.positional);
    ck_assert(a.view.message_is_error);
    ck_assert_msg(strstr(a.message, "no embeddings to add positions to") != NULL, "%s", a.message);
    app_destroy(&a);
    vocab_destroy(&book);
    qkv_destroy(&g);
}
END_TEST

static Suite *
knob_suite(void)
{
    Suite *s = suite_create("knob");
    TCase *tc = tcase_create("knob");
    /* (a hang guard, not a timing: CK_TIMEOUT_MULTIPLIER scales it under the sanitizers) */
    tcase_set_timeout(tc, 30);

    tcase_add_test(tc, every_row_is_complete);
    tcase_add_test(tc, options_come_from_the_table);
    tcase_add_test(tc, recompute_follows_the_rows);
    tcase_add_test(tc, view_keys_help_and_bar);
    tcase_add_test(tc, positional_says_why_under_qkv);
    suite_add_tcase(s, tc);
    return s;
}

TEST_MAIN(knob_suite)
