/*
 * check_params.c: the parameters of each variant (src/core/attention/params.c): names
 * and shapes in PyTorch's construction order, how many random numbers they
 * draw, copies, and loading from CSV files.
 */
#include "config.h"

#include "attnscope/attention/params.h"
#include "testutil.h"

/* Lays out variant's parameters for d_in 3, d_out 2, heads 2 and bias. */
static void
layout(struct attention_params *ps, enum attn_variant variant, bool bias)
{
    struct attention_config cfg;
    struct attn_error err;

    attention_config_init(&cfg);
    attention_config_set_variant(&cfg, variant);
    cfg.qkv_bias = bias;
    ck_assert_msg(params_create(ps, &cfg, 3, &err) == ATTN_OK, "%s", err.msg);
}

/* The names and shapes of ps as "name rows x cols, ..." */
static void
describe(const struct attention_params *ps, char *buf, size_t size)
{
    size_t len = 0;

    buf[0] = '\0';
    for (int i = 0; i < ps->count && len < size; i++)
        len += (size_t)snprintf(buf + len, size - len, "%s%s %dx%d", i ? ", " : "", ps->p[i].name,
                                ps->p[i].m.rows, ps->p[i].m.cols);
}

START_TEST(layouts_follow_the_classes)
{
    static const struct {
        enum attn_variant v;
        bool bias;
        const char *want;
    } cases[] = {
        { ATTN_SIMPLE, false, "" },
        { ATTN_V1, false, "W_query 3x2, W_key 3x2, W_value 3x2" },
        { ATTN_V2, true,
          "W_query.weight 2x3, W_query.bias 1x2, W_key.weight 2x3, W_key.bias 1x2, "
          "W_value.weight 2x3, W_value.bias 1x2" },
        { ATTN_WRAPPER, false,
          "heads.0.W_query.weight 2x3, heads.0.W_key.weight 2x3, heads.0.W_value.weight 2x3, "
          "heads.1.W_query.weight 2x3, heads.1.W_key.weight 2x3, heads.1.W_value.weight 2x3" },
        { ATTN_MHA, false,
          "W_query.weight 2x3, W_key.weight 2x3, W_value.weight 2x3, out_proj.weight 2x2, "
          "out_proj.bias 1x2" },
    };

    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        struct attention_params ps;
        char got[512];
        layout(&ps, cases[k].v, cases[k].bias);
        describe(&ps, got, sizeof got);
        ck_assert_str_eq(got, cases[k].want);
        params_destroy(&ps);
    }
}
END_TEST

/* The number of 32-bit draws from seed 123 that leave r where it is. */
static int
draws_used(const struct rng *r)
{
    struct rng fresh;
    struct rng probe = *r;
    uint32_t next = rng_next32(&probe);

    rng_seed(&fresh, 123);
    for (int n = 0; n < 1000; n++)
        if (rng_next32(&fresh) == next)
            return n;
    return -1;
}

START_TEST(draws_count_as_pytorch)
{
    /* doc/random-numbers.md: each float uniform is one 32-bit draw; MHA(3, 2, heads 2) draws 24. */
    static const struct {
        enum attn_variant v;
        int draws;
    } cases[] = { { ATTN_SIMPLE, 0 }, { ATTN_V1, 18 }, { ATTN_V2, 18 }, { ATTN_WRAPPER, 36 },
                  { ATTN_MHA, 24 } };

    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        struct attention_params ps;
        struct rng r;
        layout(&ps, cases[k].v, false);
        rng_seed(&r, 123);
        params_draw(&ps, &r);
        ck_assert_int_eq(draws_used(&r), cases[k].draws);
        params_destroy(&ps);
    }
}
END_TEST

START_TEST(copies_are_deep_and_layouts_compare)
{
    struct attention_params a;
    struct attention_params b;
    struct attention_params c;
    struct rng r;
    struct attn_error err;

    layout(&a, ATTN_MHA, true);
    rng_seed(&r, 7);
    params_draw(&a, &r);
    ck_assert_int_eq(params_copy(&b, &a, &err), ATTN_OK);
    ck_assert(params_same_layout(&a, &b));
    ck_assert_ptr_ne(b.storage, a.storage);
    for (int i = 0; i < a.count; i++)
        ck_assert(memcmp(a.p[i].m.data, b.p[i].m.data, matrix_size(&a.p[i].m) * sizeof(float)) == 0);
    b.p[0].m.data[0] += 1.0f;
    ck_assert(a.p[0].m.data[0] != b.p[0].m.data[0]);
    layout(&c, ATTN_MHA, false);
    ck_assert(!params_same_layout(&a, &c));
    ck_assert_ptr_nonnull(params_find(&a, PARAM_KEY, 0, true));
    ck_assert_ptr_null(params_find(&c, PARAM_KEY, 0, true));
    ck_assert_str_eq(params_find(&a, PARAM_OUT, 0, false)->name, "out_proj.weight");
    params_destroy(&a);
    params_destroy(&b);
    params_destroy(&c);
}
END_TEST

START_TEST(loading_names_the_file_and_the_shape)
{
    struct attention_params ps;
    struct attn_error err;

    layout(&ps, ATTN_V1, false);
    test_write_text(dir, "W_query.csv", ",d0,d1\nx0,1,2\nx1,3,4\nx2,5,6\n");
    test_write_text(dir, "W_key.csv", ",d0,d1\nx0,1,2\nx1,3,4\nx2,5,6\n");
    ck_assert_int_eq(params_load(&ps, dir, &err), ATTN_EIO);
    ck_assert_msg(strstr(err.msg, "W_value.csv") != NULL, "%s", err.msg);
    test_write_text(dir, "W_value.csv", ",d0,d1\nx0,1,2\nx1,3,4\n");
    ck_assert_int_eq(params_load(&ps, dir, &err), ATTN_ESHAPE);
    ck_assert_msg(strstr(err.msg, "W_value.csv: 2 x 2 values, but W_value here is 3 x 2") != NULL,
                  "%s", err.msg);
    test_write_text(dir, "W_value.csv", ",d0,d1\nx0,1,2\nx1,3,4\nx2,5,-6.5\n");
    ck_assert_msg(params_load(&ps, dir, &err) == ATTN_OK, "%s", err.msg);
    ck_assert(MAT_AT(&ps.p[2].m, 2, 1) == -6.5f);
    ck_assert(MAT_AT(&ps.p[0].m, 1, 0) == 3.0f);
    params_destroy(&ps);
}
END_TEST

START_TEST(a_model_description_round_trips)
{
    struct attention_config cfg;
    struct params_model m;
    struct params_model back;
    struct attn_error err;
    bool found;
    char path[600];
    FILE *f;

    ck_assert_int_eq(params_model_read(dir, &back, &found, &err), ATTN_OK);
    ck_assert(!found); /* no model.csv: not an error */
    attention_config_init(&cfg);
    attention_config_set_variant(&cfg, ATTN_WRAPPER);
    cfg.heads = 3;
    cfg.qkv_bias = true;
    params_model_of(&cfg, 5, &m);
    snprintf(path, sizeof path, "%s/model.csv", dir);
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    params_model_write(f, &m);
    fclose(f);
    ck_assert_msg(params_model_read(dir, &back, &found, &err) == ATTN_OK, "%s", err.msg);
    ck_assert(found);
    ck_assert_int_eq(back.variant, ATTN_WRAPPER);
    ck_assert_int_eq(back.d_in, 5);
    ck_assert_int_eq(back.d_out, 2);
    ck_assert_int_eq(back.heads, 3);
    ck_assert(back.qkv_bias);
    test_write_text(dir, "model.csv", "key,value\nfamily,gpt\n");
    ck_assert_int_eq(params_model_read(dir, &back, &found, &err), ATTN_EPARSE);
    ck_assert_msg(strstr(err.msg, "row 2, column 2: family 'gpt' is not one attnscope has") != NULL, "%s",
                  err.msg);
    ck_assert(!found);
    test_write_text(dir, "model.csv", "key,value\nfamily,book\nvariant,mha\nd_in,3\nd_out,0\n");
    ck_assert_int_eq(params_model_read(dir, &back, &found, &err), ATTN_EPARSE);
    ck_assert_msg(strstr(err.msg, "row 5, column 2: '0' is not a whole number from 1 to") != NULL, "%s",
                  err.msg);
    test_write_text(dir, "model.csv", "key,value\ncolour,blue\n");
    ck_assert_int_eq(params_model_read(dir, &back, &found, &err), ATTN_EPARSE);
    ck_assert_msg(strstr(err.msg, "row 2, column 1: 'colour' is not a key of model.csv") != NULL, "%s",
                  err.msg);
}
END_TEST

static Suite *
params_suite(void)
{
    Suite *s = suite_create("params");
    TCase *tc = tcase_create("params");
    /* (a hang guard, not a timing: CK_TIMEOUT_MULTIPLIER scales it under the sanitizers) */
    tcase_set_timeout(tc, 30);
    TCase *files = tcase_create("files");
    /* (a hang guard, not a timing: CK_TIMEOUT_MULTIPLIER scales it under the sanitizers) */
    tcase_set_timeout(files, 30);

    tcase_add_test(tc, layouts_follow_the_classes);
    tcase_add_test(tc, draws_count_as_pytorch);
    tcase_add_test(tc, copies_are_deep_and_layouts_compare);
    suite_add_tcase(s, tc);
    tcase_add_checked_fixture(files, test_tmpdir_setup, test_tmpdir_teardown);
    tcase_add_test(files, loading_names_the_file_and_the_shape);
    tcase_add_test(files, a_model_description_round_trips);
    suite_add_tcase(s, files);
    return s;
}

TEST_MAIN(params_suite)
