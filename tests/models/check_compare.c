/*
 * check_compare.c: two models side by side (compare.h), each number checked
 * against a computation of its own: the difference of every stage against
 * the two views subtracted, each head's change against the Jensen-Shannon
 * divergence of the weights the shown layer keeps (another path than the
 * one compare.c takes: decoder_head_weights), the next tokens' divergence
 * and the second's probability against the logits the forward writes for
 * the last position, the lens's parting against its definition, and the
 * refusals naming what differs.  minillama and minillama-q4 ship with
 * attnscope: the same model, its weights in float32 and in Q4_0.
 */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/families/model/compare.h"
#include "attnscope/families/model/family_model.h"
#include "attnscope/models/model.h"
#include "attnscope/pipeline/pipeline.h"
#include "testutil.h"

#define TEXT "cat map sun red fox ink owl jam cat map sun red fox ink owl jam"

static struct model first, second;

static void
open_shipped(struct model *m, const char *name)
{
    struct attn_error err;

    setenv("ATTNSCOPE_MODELS", test_path("samples/models"), 1);
    ck_assert_msg(model_open(m, name, NULL, &err) == ATTN_OK, "%s", err.msg);
    unsetenv("ATTNSCOPE_MODELS");
}

static void
setup(void)
{
    open_shipped(&first, "minillama");
    open_shipped(&second, "minillama-q4");
}

static void
teardown(void)
{
    model_close(&first);
    model_close(&second);
}

/* m's pipeline over text, its last position's logits into last (when not NULL). */
static void
run(const struct model *m, const char *text, float *last, struct pipeline *p)
{
    struct attention_config cfg;
    struct pipeline_source src;
    struct attn_error err;

    attention_config_init(&cfg);
    memset(&src, 0, sizeof src);
    src.sentence = text;
    src.family = &family_model;
    src.model = m;
    src.top = 3;
    src.bos = true;
    src.last_logits = last;
    ck_assert_msg(pipeline_create(p, &cfg, &src, &err) == ATTN_OK, "%s", err.msg);
}

/* Every stage of both layers: the difference is the second's view minus the first's. */
START_TEST(the_difference_is_the_two_views_subtracted)
{
    struct pipeline a, b;
    struct compare c;
    struct attn_error err;
    int stages = 0, masked = 0;

    run(&first, TEXT, NULL, &a);
    run(&second, TEXT, NULL, &b);
    compare_init(&c, &a, &b);
    ck_assert_msg(compare_check(&a, &b, &err) == ATTN_OK, "%s", err.msg);
    for (int l = 0; l < a.layers; l++) {
        ck_assert(pipeline_select_layer(&a, l, &err) == ATTN_OK);
        for (int s = 0; s < STAGE_COUNT; s++) {
            const int heads = pipeline_stage_per_head((enum pipeline_stage)s) ? a.st.shape.heads : 1;
            if (!pipeline_stage_present(&a, (enum pipeline_stage)s))
                continue;
            for (int h = 0; h < heads; h++) {
                struct pipeline_view x, y, d;
                ck_assert_msg(compare_stage_view(&c, COMPARE_DIFFERENCE, (enum pipeline_stage)s, h,
                                                 &d, &err) == ATTN_OK,
                              "%s", err.msg);
                /* (the second follows the first's layer) */
                ck_assert_int_eq(b.layer, l);
                pipeline_stage_view(&a, (enum pipeline_stage)s, h, &x);
                pipeline_stage_view(&b, (enum pipeline_stage)s, h, &y);
                ck_assert_int_eq(d.m.rows, x.m.rows);
                ck_assert_int_eq(d.m.cols, x.m.cols);
                ck_assert_ptr_eq(d.row_labels, x.row_labels);
                for (int i = 0; i < x.m.rows; i++)
                    for (int j = 0; j < x.m.cols; j++) {
                        const float u = MAT_AT(&x.m, i, j), v = MAT_AT(&y.m, i, j);
                        const float got = MAT_AT(&d.m, i, j);
                        if (isinf(u) && u < 0 && isinf(v) && v < 0) {
                            ck_assert(isinf(got) && got < 0);
                            masked++;
                        } else {
                            ck_assert_msg(got == v - u, "%s.h%d[%d][%d]: %g, not %g - %g",
                                          pipeline_stage_name((enum pipeline_stage)s), h, i, j,
                                          (double)got, (double)v, (double)u);
                        }
                    }
            }
            stages++;
        }
    }
    ck_assert_int_ge(stages, 2 * 20);
    ck_assert_int_gt(masked, 0); /* (the masked scores: -inf in both) */
    compare_destroy(&c);
    pipeline_destroy(&a);
    pipeline_destroy(&b);
}
END_TEST

/* JS(p, q) in bits by its definition: (KL(p || m) + KL(q || m)) / 2, m the mean, natural logs. */
static double
js_bits(const float *p, const float *q, int n)
{
    double kl_p = 0.0, kl_q = 0.0;

    for (int j = 0; j < n; j++) {
        const double m = ((double)p[j] + (double)q[j]) / 2.0;
        if (p[j] > 0.0f)
            kl_p += p[j] * log(p[j] / m);
        if (q[j] > 0.0f)
            kl_q += q[j] * log(q[j] / m);
    }
    return (kl_p + kl_q) / 2.0 / log(2.0);
}

START_TEST(heads_changed_is_the_mean_divergence_of_the_weights_shown)
{
    struct pipeline a, b;
    struct compare c;
    struct attn_error err;
    float changed[8];
    int most = 0;

    run(&first, TEXT, NULL, &a);
    run(&second, TEXT, NULL, &b);
    compare_init(&c, &a, &b);
    ck_assert_int_eq(compare_heads_changed(&c, changed), 0);
    for (int l = 0; l < a.layers; l++) {
        ck_assert(pipeline_select_layer(&a, l, &err) == ATTN_OK);
        ck_assert(pipeline_select_layer(&b, l, &err) == ATTN_OK);
        for (int h = 0; h < a.st.shape.heads; h++) {
            struct pipeline_view x, y;
            double sum = 0.0;
            pipeline_stage_view(&a, STAGE_WEIGHTS, h, &x);
            pipeline_stage_view(&b, STAGE_WEIGHTS, h, &y);
            for (int i = 0; i < x.m.rows; i++)
                sum += js_bits(matrix_row(&x.m, i), matrix_row(&y.m, i), x.m.cols);
            sum /= x.m.rows;
            ck_assert_msg(fabs(changed[l * 4 + h] - sum) <= 1e-6 * sum + 1e-9,
                          "head %d.%d: %g, by definition %g", l, h, (double)changed[l * 4 + h], sum);
            ck_assert_float_gt(changed[l * 4 + h], 0.0f);
            most = changed[l * 4 + h] > changed[most] ? l * 4 + h : most;
        }
    }
    /* Quantization moved layer 1's heads most: their scores are made of layer 0's changes too. */
    ck_assert_int_ge(most, 4);
    /* A model beside itself changed nothing. */
    compare_destroy(&c);
    compare_init(&c, &a, &a);
    ck_assert_int_eq(compare_heads_changed(&c, changed), 0);
    for (int e = 0; e < 8; e++)
        ck_assert_float_eq(changed[e], 0.0f);
    compare_destroy(&c);
    pipeline_destroy(&a);
    pipeline_destroy(&b);
}
END_TEST

/* The last position's divergence and the second's probabilities, from the forward's own logits. */
START_TEST(next_tokens_divergence_is_kl_of_the_logits)
{
    const int v = decoder_outputs(&first.dec.cfg);
    float *la = malloc((size_t)v * sizeof *la), *lb = malloc((size_t)v * sizeof *lb);
    struct pipeline a, b;
    struct compare c;
    struct attn_error err;
    double za = 0.0, zb = 0.0, ma = -INFINITY, mb = -INFINITY, kl = 0.0;
    float got[17];

    run(&first, TEXT, la, &a);
    run(&second, TEXT, lb, &b);
    compare_init(&c, &a, &b);
    ck_assert_int_eq(a.st.nq, 17);
    ck_assert_msg(compare_next_kl(&c, got, &err) == ATTN_OK, "%s", err.msg);
    for (int j = 0; j < v; j++) {
        ma = la[j] > ma ? la[j] : ma;
        mb = lb[j] > mb ? lb[j] : mb;
    }
    for (int j = 0; j < v; j++) {
        za += exp(la[j] - ma);
        zb += exp(lb[j] - mb);
    }
    for (int j = 0; j < v; j++) {
        const double pa = exp(la[j] - ma) / za, pb = exp(lb[j] - mb) / zb;
        kl += pa * log(pa / pb);
    }
    ck_assert_msg(fabs(got[16] - kl) <= 1e-5 * kl, "KL at the last position: %g, by the logits %g",
                  (double)got[16], kl);
    for (int i = 0; i < 17; i++)
        ck_assert_float_gt(got[i], 0.0f);
    for (int id = 0; id < v; id += 37) {
        const double want = exp(lb[id] - mb) / zb;
        const float p = compare_second_prob(&c, 16, id);
        ck_assert_msg(fabs(p - want) <= 1e-5 * want, "id %d: %g, by the logits %g", id, (double)p,
                      want);
    }
    ck_assert(isnan(compare_second_prob(&c, 17, 0)));
    ck_assert(isnan(compare_second_prob(&c, 0, v)));
    compare_destroy(&c);
    pipeline_destroy(&a);
    pipeline_destroy(&b);
    free(la);
    free(lb);
}
END_TEST

/* Where the lenses part: from that layer on they differ, at the layer before they agree. */
START_TEST(the_lenses_part_where_they_stop_agreeing)
{
    struct pipeline a, b;
    struct compare c;
    struct attn_error err;
    int ids[4], layer;
    float probs[4];
    struct compare_lens lens = { { ids, ids + 2 }, { probs, probs + 2 }, -1 };

    run(&first, TEXT, NULL, &a);
    run(&second, TEXT, NULL, &b);
    compare_init(&c, &a, &b);
    for (int pos = 0; pos < a.st.nq; pos++) {
        const struct family_model_state *ga = pipeline_decoder(&a), *gb = pipeline_decoder(&b);
        ck_assert_msg(compare_lens_parting(&c, pos, &lens, &err) == ATTN_OK, "%s", err.msg);
        layer = lens.parted;
        /* each layer's probability is its likeliest token's, the last the model's own */
        ck_assert_float_eq_tol(probs[1], ga->run.top_probs[(size_t)pos * 3], 1e-6f);
        /* the last layer's lens is the model's own prediction */
        ck_assert_int_eq(ids[1], ga->run.top_ids[(size_t)pos * 3]);
        ck_assert_int_eq(ids[3], gb->run.top_ids[(size_t)pos * 3]);
        if (ids[1] == ids[3]) {
            ck_assert_int_eq(layer, -1);
        } else {
            ck_assert_int_ge(layer, 0);
            for (int l = layer; l < 2; l++)
                ck_assert_int_ne(ids[l], ids[2 + l]);
            if (layer > 0)
                ck_assert_int_eq(ids[layer - 1], ids[2 + layer - 1]);
        }
    }
    compare_destroy(&c);
    pipeline_destroy(&a);
    pipeline_destroy(&b);
}
END_TEST

/* The heads that changed most: largest first, an earlier one first on a tie, at most count. */
START_TEST(the_most_changed_heads_are_ranked)
{
    const float changed[6] = { 0.1f, 0.4f, 0.2f, 0.4f, 0.0f, 0.3f };
    int top[5];

    ck_assert_int_eq(compare_most_changed(changed, 6, 4, top), 4);
    ck_assert_int_eq(top[0], 1);
    ck_assert_int_eq(top[1], 3);
    ck_assert_int_eq(top[2], 5);
    ck_assert_int_eq(top[3], 2);
    ck_assert_int_eq(compare_most_changed(changed, 2, 5, top), 2);
    ck_assert_int_eq(top[0], 1);
    ck_assert_int_eq(top[1], 0);
}
END_TEST

/* What cannot be compared is refused, naming what differs. */
START_TEST(refusals_name_what_differs)
{
    struct model other;
    struct pipeline a, b;
    struct attn_error err;

    open_shipped(&other, "minigpt");
    ck_assert(compare_check_models(&first, &other, &err) == ATTN_EVALUE);
    ck_assert_str_eq(err.msg, "key and value heads: 2 in minillama, 4 in minigpt: not the same shapes");
    model_close(&other);
    open_shipped(&other, "minigemma");
    ck_assert(compare_check_models(&first, &other, &err) == ATTN_OK);
    run(&first, TEXT, NULL, &a);
    run(&other, TEXT, NULL, &b);
    ck_assert(compare_check(&a, &b, &err) == ATTN_EVALUE);
    ck_assert_str_eq(err.msg, "stage queries_normed: minigemma has it, minillama has not");
    pipeline_destroy(&b);
    model_close(&other);
    /* Another text's ids (a token more) */
    run(&second, TEXT " cat", NULL, &b);
    ck_assert(compare_check(&a, &b, &err) == ATTN_EVALUE);
    ck_assert_str_eq(err.msg, "the text is 17 tokens to minillama and 18 to minillama-q4: their "
                              "tokenizers differ");
    pipeline_destroy(&b);
    run(&second, "cat map sun red fox ink owl jam cat map sun red fox ink owl owl", NULL, &b);
    ck_assert(compare_check(&a, &b, &err) == ATTN_EVALUE);
    ck_assert_str_eq(err.msg, "token 16 is id 348 '\xc2\xb7jam' to minillama and id 389 "
                              "'\xc2\xb7owl' to minillama-q4: their tokenizers differ");
    pipeline_destroy(&b);
    pipeline_destroy(&a);
}
END_TEST

static Suite *
compare_suite(void)
{
    Suite *s = suite_create("compare");
    TCase *tc = tcase_create("core");
    /* (a hang guard, not a timing: CK_TIMEOUT_MULTIPLIER scales it under the sanitizers) */
    tcase_set_timeout(tc, 60);

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, the_difference_is_the_two_views_subtracted);
    tcase_add_test(tc, heads_changed_is_the_mean_divergence_of_the_weights_shown);
    tcase_add_test(tc, next_tokens_divergence_is_kl_of_the_logits);
    tcase_add_test(tc, the_lenses_part_where_they_stop_agreeing);
    tcase_add_test(tc, refusals_name_what_differs);
    tcase_add_test(tc, the_most_changed_heads_are_ranked);
    suite_add_tcase(s, tc);
    return s;
}

TEST_MAIN(compare_suite)
