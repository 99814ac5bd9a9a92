/*
 * check_topk.c: the k largest of a row as torch.topk picks them
 * (src/core/kernels/topk.c): rows full of ties and NaNs against what
 * PyTorch returned for them (tests/fixtures/topk/cases.txt, written by
 * tests/oracle/topk_cases.py with Debian's python3-torch), on both of its
 * paths (nth_element then sort; partial_sort).
 */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/kernels/topk.h"
#include "testutil.h"

START_TEST(ties_land_where_torch_puts_them)
{
    FILE *f = fopen(test_path("tests/fixtures/topk/cases.txt"), "r");
    char line[8192];
    int cases = 0, ties = 0;

    ck_assert_ptr_nonnull(f);
    while (fgets(line, sizeof line, f) != NULL) {
        float row[512];
        int want[512], got[512];
        double scratch[1024];
        char *at = line, *end;
        const int n = (int)strtol(at, &end, 10);
        const int k = (int)strtol(end, &end, 10);
        bool tied = false;

        ck_assert(n >= 1 && n <= 512 && k >= 1 && k <= n);
        for (int j = 0; j < n; j++)
            row[j] = strtof(end, &end);
        for (int j = 0; j < k; j++)
            want[j] = (int)strtol(end, &end, 10);
        topk_largest(row, n, k, got, scratch);
        for (int j = 0; j < k; j++) {
            ck_assert_msg(got[j] == want[j], "case %d (n %d, k %d): place %d is %d, torch's %d",
                          cases + 1, n, k, j, got[j], want[j]);
            /* (a tie the answer had to settle: an equal value not chosen, or chosen later) */
            for (int i = 0; i < n; i++)
                tied = tied || (i != want[j] && row[i] == row[want[j]]);
        }
        ties += tied;
        cases++;
    }
    fclose(f);
    ck_assert_int_eq(cases, 120);
    /* The cases are about ties: most rows hold some. */
    ck_assert_int_ge(ties, 100);
}
END_TEST

/* Values in any order: the largest first, whatever the path. */
START_TEST(distinct_values_come_largest_first)
{
    for (int n = 1; n <= 300; n += 7) {
        float row[300];
        int top[300];
        double scratch[600];
        const int k = n < 5 ? n : 5;
        float largest = -1.0f;
        for (int j = 0; j < n; j++) {
            row[j] = (float)((j * 37) % 101);
            largest = row[j] > largest ? row[j] : largest;
        }
        topk_largest(row, n, k, top, scratch);
        for (int t = 1; t < k; t++)
            ck_assert_msg(row[top[t - 1]] >= row[top[t]], "n %d: place %d", n, t);
        ck_assert_float_eq(row[top[0]], largest);
    }
}
END_TEST

static Suite *
topk_suite(void)
{
    Suite *s = suite_create("topk");
    TCase *tc = tcase_create("topk");
    /* (a hang guard, not a timing: CK_TIMEOUT_MULTIPLIER scales it under the sanitizers) */
    tcase_set_timeout(tc, 30);

    tcase_add_test(tc, ties_land_where_torch_puts_them);
    tcase_add_test(tc, distinct_values_come_largest_first);
    suite_add_tcase(s, tc);
    return s;
}

TEST_MAIN(topk_suite)
