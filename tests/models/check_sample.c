/*
 * check_sample.c: the next token chosen as the book's generate chooses it,
 * against the choices PyTorch made (tests/golden/sample-draws.txt, written
 * by tests/oracle/sample_fixtures.py): the same token, drawn with the same
 * probability to the bit, and the generator left where PyTorch's was.
 */
#include "config.h"

#include <math.h>
#include <stdint.h>

#include "attnscope/decoder/sample.h"
#include "attnscope/kernels/cpu.h"
#include "testutil.h"

static uint32_t
bits_of(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* One case's row of logits, as the oracle draws it: torch.randn(n) * scale, maybe rounded. */
static float *
case_logits(int n, unsigned long long seed, double scale, int rounded)
{
    float *x = malloc((size_t)n * sizeof *x);
    struct rng r;

    ck_assert_ptr_nonnull(x);
    rng_seed(&r, seed);
    rng_normal_f32(&r, x, (size_t)n, 0.0, 1.0);
    for (int i = 0; i < n; i++) {
        x[i] = x[i] * (float)scale;
        if (rounded)
            x[i] = nearbyintf(x[i]); /* torch.round: halves to even */
    }
    return x;
}

/* The next "id:bits" of cursor, checked against c. */
static void
expect_choice(char **cursor, const struct sample_choice *c, int lineno, int draw)
{
    int id, used = 0;
    unsigned int bits;

    ck_assert_msg(sscanf(*cursor, " %d:%x%n", &id, &bits, &used) == 2, "line %d draw %d", lineno,
                  draw);
    *cursor += used;
    ck_assert_msg(c->id == id, "line %d draw %d: chose %d, PyTorch %d", lineno, draw, c->id, id);
    ck_assert_msg(bits_of(c->prob) == bits, "line %d draw %d: probability %08x, PyTorch %08x",
                  lineno, draw, bits_of(c->prob), bits);
}

/*
 * A "softmax N LSEED SCALE CUT -- bits..." line: the probabilities a draw
 * at temperature 1 without cuts is made from (work[n .. 2n) after the
 * call), each PyTorch's to the bit.
 */
static void
check_softmax_row(const char *line, int lineno)
{
    const struct sample_options plain = { 1.0, 0, 1.0 };
    unsigned long long lseed;
    double scale;
    int n, cut, used = 0;
    struct sample_choice c;
    struct attn_error err;
    struct rng gen;
    const char *cursor;
    float *logits, *work;

    ck_assert_msg(sscanf(line, "softmax %d %llu %lf %d --%n", &n, &lseed, &scale, &cut, &used) == 4,
                  "line %d", lineno);
    logits = case_logits(n, lseed, scale, 0);
    work = malloc(3 * (size_t)n * sizeof *work);
    ck_assert_ptr_nonnull(work);
    for (int i = 0; cut && i < n; i += 3)
        logits[i] = -INFINITY;
    rng_seed(&gen, 1);
    ck_assert_int_eq(sample_choose(&plain, &gen, logits, n, work, &c, &err), ATTN_OK);
    cursor = line + used;
    for (int i = 0; i < n; i++) {
        unsigned int bits;
        int step = 0;
        ck_assert_msg(sscanf(cursor, " %x%n", &bits, &step) == 1, "line %d: %d of %d", lineno, i,
                      n);
        cursor += step;
        ck_assert_msg(bits_of(work[n + i]) == bits,
                      "%s: line %d: probability %d is %08x, PyTorch's %08x", cpu_isa_name(), lineno,
                      i, bits_of(work[n + i]), bits);
    }
    free(logits);
    free(work);
}

/* Every case of the golden file under the instruction set in force. */
static void
check_golden_draws(void)
{
    FILE *f = fopen(test_path("tests/golden/sample-draws.txt"), "r");
    static char line[1 << 16];
    int lineno = 0, cases = 0, draws_checked = 0, softmax_rows = 0;
    float *logits = NULL, *work = NULL;
    struct rng gen;
    int n = 0;

    ck_assert_msg(f != NULL, "cannot open tests/golden/sample-draws.txt");
    while (fgets(line, sizeof line, f) != NULL) {
        struct sample_options o;
        struct sample_choice c;
        struct attn_error err;
        unsigned long long lseed, dseed;
        double scale;
        int rounded, draws, used = 0;
        char *cursor;

        lineno++;
        if (line[0] == '#')
            continue;
        if (strncmp(line, "softmax ", 8) == 0) {
            check_softmax_row(line, lineno);
            softmax_rows++;
            continue;
        }
        if (strncmp(line, "after ", 6) == 0) {
            const struct sample_options plain = { 1.0, 0, 1.0 };
            cursor = line + 5;
            ck_assert_int_eq(sample_choose(&plain, &gen, logits, n, work, &c, &err), ATTN_OK);
            expect_choice(&cursor, &c, lineno, 0);
            continue;
        }
        ck_assert_msg(sscanf(line, "case %d %llu %lf %d %lf %d %lf %llu %d --%n", &n, &lseed,
                             &scale, &rounded, &o.temperature, &o.top_k, &o.top_p, &dseed,
                             &draws, &used) == 9,
                      "line %d", lineno);
        cursor = line + used;
        free(logits);
        free(work);
        logits = case_logits(n, lseed, scale, rounded);
        work = malloc(3 * (size_t)n * sizeof *work);
        ck_assert_ptr_nonnull(work);
        ck_assert_int_eq(sample_check(&o, n, &err), ATTN_OK);
        rng_seed(&gen, dseed);
        for (int d = 0; d < draws; d++) {
            ck_assert_int_eq(sample_choose(&o, &gen, logits, n, work, &c, &err), ATTN_OK);
            expect_choice(&cursor, &c, lineno, d);
            draws_checked++;
        }
        cases++;
    }
    fclose(f);
    free(logits);
    free(work);
    ck_assert_int_ge(cases, 20);
    ck_assert_int_ge(draws_checked, 300);
    ck_assert_int_ge(softmax_rows, 4);
}

/* PyTorch's draws to the bit, with the softmax's vector code and without it. */
START_TEST(choices_match_pytorch)
{
    const enum cpu_isa best = cpu_isa();

    for (int isa = CPU_PORTABLE; isa < CPU_ISAS; isa++) {
        if (!cpu_isa_has((enum cpu_isa)isa))
            continue;
        ck_assert_int_eq(cpu_isa_limit((enum cpu_isa)isa), isa);
        check_golden_draws();
    }
    cpu_isa_limit(best);
}
END_TEST

/* A small row worked by hand: what the choice says about itself. */
START_TEST(choice_explains_itself)
{
    const float logits[6] = { 1.0f, 3.0f, 2.0f, 3.0f, -1.0f, 0.5f };
    float work[18];
    struct sample_options greedy = { 0.0, 0, 1.0 };
    struct sample_choice c;
    struct attn_error err;
    struct rng gen;
    double z = 0.0;

    rng_seed(&gen, 123);
    ck_assert_int_eq(sample_choose(&greedy, &gen, logits, 6, work, &c, &err), ATTN_OK);
    ck_assert_int_eq(c.id, 1); /* the first of the two largest */
    ck_assert_int_eq(c.rank, 0);
    ck_assert_int_eq(c.kept, 6);
    ck_assert(c.q == 0.0f && c.ratio == 0.0f);
    for (int i = 0; i < 6; i++)
        z += exp(logits[i] - 3.0);
    ck_assert_double_eq_tol(c.prob_plain, 1.0 / z, 1e-7);
    ck_assert_int_eq(c.shown, 6);
    /* Likeliest first, the lower id first on a tie. */
    const int order[6] = { 1, 3, 2, 0, 5, 4 };
    for (int s = 0; s < 6; s++)
        ck_assert_int_eq(c.top_ids[s], order[s]);
    struct rng fresh;
    rng_seed(&fresh, 123);
    ck_assert_uint_eq(rng_next32(&gen), rng_next32(&fresh)); /* greedy drew nothing */

    /* top-k 2 keeps both 3s; top-k 3 keeps the 2 too, and the cut is the k-th logit. */
    struct sample_options k2 = { 1.0, 2, 1.0 };
    ck_assert_int_eq(sample_choose(&k2, &gen, logits, 6, work, &c, &err), ATTN_OK);
    ck_assert_int_eq(c.kept, 2);
    ck_assert(c.id == 1 || c.id == 3);
    ck_assert_float_eq(c.cut_logit, 3.0f);
    ck_assert_float_eq_tol(c.prob, 0.5f, 1e-6f);
    ck_assert(c.q > 0.0f && c.ratio == c.prob / c.q);
    ck_assert_float_eq(c.top_prob[2], 0.0f); /* the 2 was cut */
    struct sample_options k3 = { 1.0, 3, 1.0 };
    ck_assert_int_eq(sample_choose(&k3, &gen, logits, 6, work, &c, &err), ATTN_OK);
    ck_assert_int_eq(c.kept, 3);
    ck_assert_float_eq(c.cut_logit, 2.0f);
    ck_assert_int_le(c.rank_kept, 2);

    /*
     * top-p 0.5 on [3, 3, 2, ...]: the four smallest hold 0.23 together, at
     * most 1 - 0.5, so they are cut; the two 3s stay.
     */
    struct sample_options p5 = { 1.0, 0, 0.5 };
    ck_assert_int_eq(sample_choose(&p5, &gen, logits, 6, work, &c, &err), ATTN_OK);
    ck_assert_int_eq(c.kept, 2);
    ck_assert(c.id == 1 || c.id == 3);
    ck_assert_double_eq_tol(c.cut_prob, (exp(-4.0) + exp(-2.5) + exp(-2.0) + exp(-1.0)) / z, 1e-6);
}
END_TEST

START_TEST(bad_rows_and_options_are_refused)
{
    float logits[4] = { 0.0f, 1.0f, NAN, 2.0f };
    float work[12];
    struct sample_options o = { 1.0, 0, 1.0 };
    struct sample_choice c;
    struct attn_error err;
    struct rng gen;

    rng_seed(&gen, 1);
    ck_assert_int_eq(sample_choose(&o, &gen, logits, 4, work, &c, &err), ATTN_EVALUE);
    ck_assert_msg(strstr(err.msg, "logit 2 of 4 is nan") != NULL, "%s", err.msg);
    logits[2] = INFINITY;
    ck_assert_int_eq(sample_choose(&o, &gen, logits, 4, work, &c, &err), ATTN_EVALUE);
    logits[2] = -INFINITY; /* a masked logit is fine */
    ck_assert_int_eq(sample_choose(&o, &gen, logits, 4, work, &c, &err), ATTN_OK);
    ck_assert_int_ne(c.id, 2);

    o.temperature = -1.0;
    ck_assert_int_eq(sample_check(&o, 4, &err), ATTN_EVALUE);
    ck_assert_msg(strstr(err.msg, "--sample-temperature -1") != NULL, "%s", err.msg);
    o.temperature = NAN;
    ck_assert_int_eq(sample_check(&o, 4, &err), ATTN_EVALUE);
    o.temperature = 0.0;
    o.top_k = 5;
    ck_assert_int_eq(sample_check(&o, 4, &err), ATTN_EVALUE);
    ck_assert_msg(strstr(err.msg, "--top-k 5") != NULL, "%s", err.msg);
    o.top_k = -1;
    ck_assert_int_eq(sample_check(&o, 4, &err), ATTN_EVALUE);
    o.top_k = 4;
    ck_assert_int_eq(sample_check(&o, 4, &err), ATTN_OK);
    o.top_p = 0.0;
    ck_assert_int_eq(sample_check(&o, 4, &err), ATTN_EVALUE);
    ck_assert_msg(strstr(err.msg, "--top-p 0") != NULL, "%s", err.msg);
    o.top_p = 1.5;
    ck_assert_int_eq(sample_check(&o, 4, &err), ATTN_EVALUE);
    o.top_p = NAN;
    ck_assert_int_eq(sample_check(&o, 4, &err), ATTN_EVALUE);
}
END_TEST

/*
 * A temperature so small that logits / T leave float (issue 48: 1e-38
 * drew token 0, a NaN row's first): the formula's limit, the largest
 * kept logit, with every probability; a tie shares it; and a temperature
 * that stays finite still draws as PyTorch does.
 */
START_TEST(a_tiny_temperature_draws_the_limit)
{
    const float logits[5] = { -2.0f, 4.0f, 6.5f, 1.0f, 6.0f };
    const float tied[4] = { 3.0f, 7.0f, -1.0f, 7.0f };
    const double tiny[] = { 1e-38, 1e-300, 5e-324 };
    float work[15];
    struct sample_choice c;
    struct attn_error err;
    struct rng gen;

    rng_seed(&gen, 7);
    for (size_t k = 0; k < sizeof tiny / sizeof tiny[0]; k++) {
        const struct sample_options o = { tiny[k], 0, 1.0 };
        ck_assert_int_eq(sample_check(&o, 5, &err), ATTN_OK);
        ck_assert_int_eq(sample_choose(&o, &gen, logits, 5, work, &c, &err), ATTN_OK);
        ck_assert_msg(c.id == 2, "T %g drew %d", tiny[k], c.id);
        ck_assert(c.at_limit);
        ck_assert_float_eq(c.prob, 1.0f);
        ck_assert_int_eq(c.kept, 1);
        for (int i = 0; i < 5; i++)
            ck_assert(isfinite(work[5 + i]));
    }
    {
        /* top-k 2 then the limit: still the largest */
        const struct sample_options o = { 1e-38, 2, 1.0 };
        ck_assert_int_eq(sample_choose(&o, &gen, logits, 5, work, &c, &err), ATTN_OK);
        ck_assert_int_eq(c.id, 2);
    }
    for (int draw = 0; draw < 8; draw++) {
        const struct sample_options o = { 1e-38, 0, 1.0 };
        ck_assert_int_eq(sample_choose(&o, &gen, tied, 4, work, &c, &err), ATTN_OK);
        ck_assert(c.id == 1 || c.id == 3);
        ck_assert_float_eq(c.prob, 0.5f);
    }
    {
        /* 0.01 stays finite: an ordinary draw, sharp enough to be the largest */
        const struct sample_options o = { 0.01, 0, 1.0 };
        ck_assert_int_eq(sample_choose(&o, &gen, logits, 5, work, &c, &err), ATTN_OK);
        ck_assert(!c.at_limit);
        ck_assert_int_eq(c.id, 2);
    }
}
END_TEST

static Suite *
sample_suite(void)
{
    Suite *s = suite_create("sample");
    TCase *tc = tcase_create("pytorch");

    /* (a hang guard, not a timing: every instruction set's pass over 400 draws of up to
       151,936 entries, under a loaded CI or sanitizers) */
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, choices_match_pytorch);
    tcase_add_test(tc, choice_explains_itself);
    tcase_add_test(tc, bad_rows_and_options_are_refused);
    tcase_add_test(tc, a_tiny_temperature_draws_the_limit);
    suite_add_tcase(s, tc);
    return s;
}

TEST_MAIN(sample_suite)
