/*
 * check_rowops.c: mask, scale and softmax of one row (src/core/kernels/rowops.c):
 * against a double-precision softmax, and bit for bit between the scalar
 * and vector kernels.
 */
#include "config.h"

#include <float.h>
#include <stdint.h>

#include "attnscope/kernels/cpu.h"
#include "attnscope/kernels/rowops.h"
#include "testutil.h"

START_TEST(exp_is_within_two_ulp)
{
    for (float x = -87.0f; x <= 0.0f; x += 0.0137f) {
        double want = exp((double)x);
        float got = rowops_exp(x);
        double ulp = (double)nextafterf((float)want, INFINITY) - (double)(float)want;
        ck_assert_msg(fabs((double)got - want) <= 2.0 * ulp, "exp(%.9g) = %.9g, want %.9g", (double)x,
                      (double)got, want);
    }
    ck_assert(rowops_exp(0.0f) == 1.0f);
    ck_assert(rowops_exp(-90.0f) == 0.0f);
    ck_assert(rowops_exp(-INFINITY) == 0.0f);
    ck_assert(isnan(rowops_exp(NAN)));
}
END_TEST

/* One row through rowops_softmax with separate buffers for every stage. */
static void
row(const float *s, int n, int visible, float divisor, float *m, float *c, float *w)
{
    rowops_softmax(s, m, c, w, n, 0, visible, divisor);
}

START_TEST(softmax_matches_double_precision)
{
    float s[70];
    float m[70];
    float c[70];
    float w[70];

    for (int n = 1; n <= 70; n += 3) {
        for (int j = 0; j < n; j++)
            s[j] = (float)((j * 37) % 23 - 11) / 3.0f;
        for (int visible = 1; visible <= n; visible += 5) {
            double max = -INFINITY;
            double sum = 0.0;
            row(s, n, visible, 2.0f, m, c, w);
            for (int j = 0; j < visible; j++)
                max = fmax(max, (double)(s[j] / 2.0f));
            for (int j = 0; j < visible; j++)
                sum += exp((double)(s[j] / 2.0f) - max);
            for (int j = 0; j < n; j++) {
                if (j < visible) {
                    ck_assert(m[j] == s[j]);
                    ck_assert(c[j] == s[j] / 2.0f);
                    ck_assert_msg(fabs((double)w[j] - exp((double)c[j] - max) / sum) < 1e-6,
                                  "n %d visible %d j %d", n, visible, j);
                } else {
                    ck_assert(isinf(m[j]) && m[j] < 0);
                    ck_assert(isinf(c[j]) && c[j] < 0);
                    ck_assert(w[j] == 0.0f);
                }
            }
        }
    }
}
END_TEST

START_TEST(nothing_visible_is_nan_like_pytorch)
{
    float s[3] = { 1, 2, 3 };
    float m[3];
    float c[3];
    float w[3];

    row(s, 3, 0, 1.0f, m, c, w);
    for (int j = 0; j < 3; j++)
        ck_assert(isnan(w[j]) && isinf(m[j]));
}
END_TEST

START_TEST(shared_buffers_are_not_written)
{
    float s[5] = { 0.5f, -1, 2, 0.25f, 3 };
    float keep[5];
    float w[5];

    memcpy(keep, s, sizeof s);
    /* No mask and divisor 1: masked and scaled are the scores themselves. */
    rowops_softmax(s, s, s, w, 5, 0, 5, 1.0f);
    ck_assert(memcmp(keep, s, sizeof s) == 0);
    ck_assert_float_eq_tol(w[0] + w[1] + w[2] + w[3] + w[4], 1.0f, 1e-6f);
}
END_TEST

START_TEST(every_isa_gives_the_same_bits)
{
    const enum cpu_isa best = cpu_isa();
    float s[131];
    float want[3][131];

    for (int j = 0; j < 131; j++)
        s[j] = (float)((j * 53) % 97 - 48) / 7.0f;
    for (int n = 1; n <= 131; n += 10) {
        for (int isa = CPU_PORTABLE; isa < CPU_ISAS; isa++) {
            if (!cpu_isa_has((enum cpu_isa)isa))
                continue;
            float m[131];
            float c[131];
            float w[131];
            cpu_isa_limit((enum cpu_isa)isa);
            row(s, n, n - n / 3, 1.7f, m, c, w);
            if (isa == CPU_PORTABLE) {
                memcpy(want[0], m, sizeof m);
                memcpy(want[1], c, sizeof c);
                memcpy(want[2], w, sizeof w);
                continue;
            }
            ck_assert_msg(memcmp(want[0], m, (size_t)n * sizeof(float)) == 0 &&
                              memcmp(want[1], c, (size_t)n * sizeof(float)) == 0 &&
                              memcmp(want[2], w, (size_t)n * sizeof(float)) == 0,
                          "%s differs from portable at n = %d", cpu_isa_name(), n);
        }
    }
    cpu_isa_limit(best);
}
END_TEST

/* The logits' sum of exponentials: the same bits on every instruction set, and right. */
START_TEST(sum_exp_is_the_same_everywhere)
{
    const enum cpu_isa best = cpu_isa();
    static float x[2100];
    const int sizes[] = { 1, 7, 15, 16, 17, 31, 33, 100, 2048, 2100 };

    for (int j = 0; j < 2100; j++)
        x[j] = (float)((j * 7919) % 2003 - 1500) / 97.0f;
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        const int n = sizes[s];
        float max = -INFINITY;
        float want = 0.0f;
        double exact = 0.0;
        for (int j = 0; j < n; j++)
            max = x[j] > max ? x[j] : max;
        for (int j = 0; j < n; j++)
            exact += exp((double)x[j] - max);
        for (int isa = CPU_PORTABLE; isa < CPU_ISAS; isa++) {
            if (!cpu_isa_has((enum cpu_isa)isa))
                continue;
            float got;
            ck_assert_int_eq(cpu_isa_limit((enum cpu_isa)isa), isa);
            got = rowops_sum_exp(x, n, max);
            if (isa == CPU_PORTABLE)
                want = got;
            ck_assert_msg(memcmp(&got, &want, sizeof got) == 0, "%s differs at n = %d",
                          cpu_isa_name(), n);
            ck_assert_msg(fabs(got - exact) <= 1e-5 * exact, "n = %d: %g, exactly %g", n,
                          (double)got, exact);
        }
    }
    cpu_isa_limit(best);
}
END_TEST

/*
 * The finite range a legend reads: on every instruction set, every length
 * (whole vectors and tails), the extremes anywhere (first, last, in a
 * tail), with infinities and NaNs beside them left out, and none finite.
 */
START_TEST(the_finite_range_leaves_out_inf_and_nan)
{
    const enum cpu_isa best = cpu_isa();
    static float x[1000];
    const int sizes[] = { 0, 1, 5, 8, 15, 16, 17, 33, 999, 1000 };

    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        const int n = sizes[s];
        for (int where = 0; where < 3; where++) {
            float want_lo = INFINITY, want_hi = -INFINITY;
            for (int j = 0; j < n; j++) {
                x[j] = (float)((j * 7919) % 2003 - 1000) / 97.0f;
                if (j % 5 == 3)
                    x[j] = (j % 3 == 0) ? INFINITY : (j % 3 == 1) ? -INFINITY : NAN;
            }
            if (n > 0) { /* the extremes at the start, the end, or the middle */
                const int at = where == 0 ? 0 : where == 1 ? n - 1 : n / 2;
                x[at] = where == 1 ? -500.5f : 400.25f;
                if (n > 1)
                    x[n - 1 - at] = where == 1 ? 300.0f : -600.75f;
            }
            for (int j = 0; j < n; j++)
                if (isfinite(x[j])) {
                    want_lo = x[j] < want_lo ? x[j] : want_lo;
                    want_hi = x[j] > want_hi ? x[j] : want_hi;
                }
            for (int isa = CPU_PORTABLE; isa < CPU_ISAS; isa++) {
                if (!cpu_isa_has((enum cpu_isa)isa))
                    continue;
                float lo, hi;
                ck_assert_int_eq(cpu_isa_limit((enum cpu_isa)isa), isa);
                rowops_range(x, (size_t)n, &lo, &hi);
                ck_assert_msg(lo == want_lo && hi == want_hi, "%s, n = %d, case %d: %g %g, want %g %g",
                              cpu_isa_name(), n, where, (double)lo, (double)hi, (double)want_lo,
                              (double)want_hi);
            }
        }
    }
    for (int j = 0; j < 40; j++) /* zeros of both signs: +0 whichever is met first */
        x[j] = j % 3 ? 0.0f : -0.0f;
    for (int isa = CPU_PORTABLE; isa < CPU_ISAS; isa++) {
        if (!cpu_isa_has((enum cpu_isa)isa))
            continue;
        float lo, hi;
        cpu_isa_limit((enum cpu_isa)isa);
        rowops_range(x, 40, &lo, &hi);
        ck_assert(lo == 0.0f && !signbit(lo) && hi == 0.0f && !signbit(hi));
    }
    for (int j = 0; j < 40; j++)
        x[j] = j % 2 ? NAN : -INFINITY;
    for (int isa = CPU_PORTABLE; isa < CPU_ISAS; isa++) {
        if (!cpu_isa_has((enum cpu_isa)isa))
            continue;
        float lo, hi;
        cpu_isa_limit((enum cpu_isa)isa);
        rowops_range(x, 40, &lo, &hi);
        ck_assert(lo == INFINITY && hi == -INFINITY); /* nothing finite */
    }
    cpu_isa_limit(best);
}
END_TEST

/* NaN and -inf found wherever they are (a vector's lane, a tail), on every instruction set. */
START_TEST(nonfinite_values_are_found)
{
    const enum cpu_isa best = cpu_isa();
    static float x[100];
    const int sizes[] = { 0, 1, 7, 16, 17, 100 };

    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        const int n = sizes[s];
        for (int at = -1; at < n; at++) {
            for (int what = 0; what < 3; what++) {
                const float odd[] = { NAN, -INFINITY, INFINITY };
                const int want = at < 0 || what == 2 ? 0 : what == 0 ? ROWOPS_NAN : ROWOPS_NEG_INF;
                for (int j = 0; j < n; j++)
                    x[j] = (float)(j % 9) - 4.0f;
                if (at >= 0)
                    x[at] = odd[what];
                for (int isa = CPU_PORTABLE; isa < CPU_ISAS; isa++) {
                    if (!cpu_isa_has((enum cpu_isa)isa))
                        continue;
                    cpu_isa_limit((enum cpu_isa)isa);
                    ck_assert_msg(rowops_nonfinite(x, (size_t)n) == want, "%s, n %d, at %d, %d",
                                  cpu_isa_name(), n, at, what);
                }
            }
        }
    }
    cpu_isa_limit(best);
}
END_TEST

/* A range that starts past column 0: the columns before it are hidden too. */
START_TEST(a_range_hides_both_sides)
{
    const enum cpu_isa best = cpu_isa();
    float s[40];
    float want[40];

    for (int j = 0; j < 40; j++)
        s[j] = (float)(j % 7) - 2.5f;
    for (int isa = CPU_PORTABLE; isa < CPU_ISAS; isa++) {
        if (!cpu_isa_has((enum cpu_isa)isa))
            continue;
        float m[40];
        float c[40];
        float w[40];
        float m0[40];
        float c0[40];
        float w0[40];
        cpu_isa_limit((enum cpu_isa)isa);
        rowops_softmax(s, m, c, w, 40, 5, 29, 2.0f);
        /* The same numbers as the range moved to the start of a row of its own. */
        rowops_softmax(s + 5, m0, c0, w0, 24, 0, 24, 2.0f);
        for (int j = 0; j < 40; j++) {
            if (j < 5 || j >= 29) {
                ck_assert(isinf(m[j]) && isinf(c[j]) && w[j] == 0.0f);
            } else {
                ck_assert(m[j] == m0[j - 5] && c[j] == c0[j - 5] && w[j] == w0[j - 5]);
            }
        }
        if (isa == CPU_PORTABLE)
            memcpy(want, w, sizeof w);
        ck_assert_msg(memcmp(want, w, sizeof w) == 0, "%s differs", cpu_isa_name());
    }
    cpu_isa_limit(best);
}
END_TEST

/*
 * GELU against its definition in double precision (0.5 x (1 + tanh(u))),
 * within a few units in the last place (times the exponential's condition
 * number for negative x), and the same bits
 * on every instruction set, at every offset of the vector loops' tails.
 */
START_TEST(gelu_is_exact_and_the_same_everywhere)
{
    enum { N = 4099 };
    static float x[N], first[N], got[N];
    const enum cpu_isa best = cpu_isa();

    for (int i = 0; i < N; i++)
        x[i] = (float)(i - N / 2) / 200.0f; /* -10.2 .. 10.2 */
    x[7] = 0.0f;
    x[8] = -0.0f;
    x[9] = 1e-20f;
    x[10] = -30.0f;
    x[11] = 30.0f;
    for (int isa = CPU_PORTABLE; isa < CPU_ISAS; isa++) {
        if (!cpu_isa_has((enum cpu_isa)isa))
            continue;
        ck_assert_int_eq(cpu_isa_limit((enum cpu_isa)isa), isa);
        rowops_gelu(x, isa == CPU_PORTABLE ? first : got, N);
        if (isa != CPU_PORTABLE)
            ck_assert_msg(memcmp(first, got, sizeof got) == 0, "%s differs from portable",
                          cpu_isa_name());
    }
    cpu_isa_limit(best);
    for (int i = 0; i < N; i++) {
        const double v = x[i];
        /* 0.5 v (1 + tanh(u)) written as v / (1 + exp(-2u)): double's 1 + tanh(u) cancels too. */
        const double z = -2.0 * 0.7978845608028654 * (v + 0.044715 * v * v * v);
        const double want = v / (1.0 + exp(z));
        const double err = fabs((double)first[i] - want);
        /*
         * A few ulp, times exp's condition number |z| where x < 0 (z is itself rounded in
         * float); PyTorch's float 1 + tanh(u) loses far more there (it cancels).
         */
        ck_assert_msg(err <= 4e-7 * fabs(want) * (1.0 + (z > 0 ? z : 0)) + 1e-30,
                      "gelu(%.9g) = %.9g, want %.9g",
                      v, (double)first[i], want);
    }
}
END_TEST

/*
 * SwiGLU's SiLU(gate) * up against its definition in double precision, and
 * the same bits on every instruction set at every tail offset.
 */
START_TEST(swiglu_is_exact_and_the_same_everywhere)
{
    enum { N = 4099 };
    static float g[N], u[N], first[N], got[N];
    const enum cpu_isa best = cpu_isa();

    for (int i = 0; i < N; i++) {
        g[i] = (float)(i - N / 2) / 150.0f; /* -13.7 .. 13.7 */
        u[i] = (float)((i * 37) % 101 - 50) / 25.0f;
    }
    g[7] = 0.0f;
    g[8] = -0.0f;
    g[10] = -100.0f;
    g[11] = 100.0f;
    for (int isa = CPU_PORTABLE; isa < CPU_ISAS; isa++) {
        if (!cpu_isa_has((enum cpu_isa)isa))
            continue;
        ck_assert_int_eq(cpu_isa_limit((enum cpu_isa)isa), isa);
        for (int off = 0; off < 17; off++) /* (each tail of the vector loops) */
            rowops_swiglu(g + off, u + off, (isa == CPU_PORTABLE ? first : got) + off,
                          (size_t)(N - off));
        if (isa != CPU_PORTABLE)
            ck_assert_msg(memcmp(first, got, sizeof got) == 0, "%s differs from portable",
                          cpu_isa_name());
    }
    cpu_isa_limit(best);
    for (int i = 0; i < N; i++) {
        const double x = g[i];
        const double want = x / (1.0 + exp(-x)) * (double)u[i];
        ck_assert_msg(fabs((double)first[i] - want) <= 4e-7 * fabs(want) * (1.0 + fabs(x)) + 1e-30,
                      "swiglu(%.9g, %.9g) = %.9g, want %.9g", x, (double)u[i],
                      (double)first[i], want);
    }
}
END_TEST

static Suite *
rowops_suite(void)
{
    Suite *s = suite_create("rowops");
    TCase *tc = tcase_create("rowops");
    /* (a hang guard, not a timing: CK_TIMEOUT_MULTIPLIER scales it under the sanitizers) */
    tcase_set_timeout(tc, 30);

    tcase_add_test(tc, exp_is_within_two_ulp);
    tcase_add_test(tc, softmax_matches_double_precision);
    tcase_add_test(tc, nothing_visible_is_nan_like_pytorch);
    tcase_add_test(tc, shared_buffers_are_not_written);
    tcase_add_test(tc, every_isa_gives_the_same_bits);
    tcase_add_test(tc, gelu_is_exact_and_the_same_everywhere);
    tcase_add_test(tc, swiglu_is_exact_and_the_same_everywhere);
    tcase_add_test(tc, a_range_hides_both_sides);
    tcase_add_test(tc, sum_exp_is_the_same_everywhere);
    tcase_add_test(tc, the_finite_range_leaves_out_inf_and_nan);
    tcase_add_test(tc, nonfinite_values_are_found);
    suite_add_tcase(s, tc);
    return s;
}

TEST_MAIN(rowops_suite)
