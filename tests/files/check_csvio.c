/* check_csvio.c: CSV tables in and out (src/core/files/csvio.c, src/core/files/fileio.c). */
#include "config.h"

#include <sys/stat.h>

#include "attnscope/files/csvio.h"
#include "testutil.h"

START_TEST(reads_a_plain_table)
{
    const char *path = test_write_text(dir, "a.csv", "token,d0,d1\nYour,0.43,0.15\njourney,0.55,0.87\n");
    struct csvio_table t;
    struct matrix m;

    ck_assert_int_eq(csvio_read_table(path, &t, NULL), ATTN_OK);
    ck_assert_int_eq(t.rows, 3);
    ck_assert_int_eq(t.cols, 3);
    ck_assert_str_eq(csvio_cell(&t, 2, 0), "journey");
    ck_assert_int_eq(csvio_table_matrix(&t, 1, 1, &m, NULL), ATTN_OK);
    ck_assert_int_eq(m.rows, 2);
    ck_assert_float_eq(MAT_AT(&m, 1, 1), 0.87f);
    matrix_destroy(&m);
    csvio_table_destroy(&t);
}
END_TEST

START_TEST(bom_crlf_quotes_and_blank_lines)
{
    const char text[] = "\xEF\xBB\xBF" "a,\"b, with comma\"\r\n\r\n\"multi\nline\",\"say \"\"hi\"\"\"\r\n";
    const char *path = test_write_text(dir, "b.csv", text);
    struct csvio_table t;

    ck_assert_int_eq(csvio_read_table(path, &t, NULL), ATTN_OK);
    ck_assert_int_eq(t.rows, 2);
    ck_assert_str_eq(csvio_cell(&t, 0, 0), "a");
    ck_assert_str_eq(csvio_cell(&t, 0, 1), "b, with comma");
    ck_assert_str_eq(csvio_cell(&t, 1, 0), "multi\nline");
    ck_assert_str_eq(csvio_cell(&t, 1, 1), "say \"hi\"");
    /* Rows are numbered by the line they start on, as an editor shows them. */
    ck_assert_int_eq(t.line[1], 3);
    csvio_table_destroy(&t);
}
END_TEST

/* len is the byte count of text, or 0 for strlen(text). */
static void
expect_table_error(const char *name, const char *text, size_t len, enum attn_status status,
                   const char *needle)
{
    const char *path = test_write_file(dir, name, text, len ? len : strlen(text));
    struct csvio_table t;
    struct attn_error err;

    attn_error_clear(&err);
    ck_assert_int_eq(csvio_read_table(path, &t, &err), status);
    ck_assert_msg(strstr(err.msg, needle) != NULL, "'%s' not in: %s", needle, err.msg);
    ck_assert_msg(strstr(err.msg, name) != NULL, "the message should name the file: %s", err.msg);
}

START_TEST(broken_files_are_refused_with_their_place)
{
    expect_table_error("ragged.csv", "a,1,2\nb,3,4\n\nc,5\n", 0, ATTN_EPARSE,
                       "row 4 has 2 columns, but row 1 has 3");
    expect_table_error("long.csv", "a,1\nb,2,3\n", 0, ATTN_EPARSE, "row 2 has 3 columns");
    expect_table_error("quote.csv", "a,1\nb\"x,2\n", 0, ATTN_EPARSE, "row 2: malformed quoting");
    expect_table_error("open.csv", "a,1\n\"b,2\n", 0, ATTN_EPARSE,
                       "row 2: a quoted field is never closed");
    expect_table_error("open2.csv", "a,1\n\"b\n\nc,2\n", 0, ATTN_EPARSE,
                       "row 2: a quoted field is never closed");
    expect_table_error("empty.csv", "", 0, ATTN_EPARSE, "empty");
    expect_table_error("blank.csv", "\n\n\r\n", 0, ATTN_EPARSE, "empty");
    expect_table_error("binary.csv", "a,1\nb,\0\x01\n", 9, ATTN_EPARSE, "row 2: binary data");
}
END_TEST

START_TEST(missing_and_folder_paths_are_refused)
{
    struct csvio_table t;
    struct attn_error err;
    char path[512];

    snprintf(path, sizeof path, "%s/nope.csv", dir);
    ck_assert_int_eq(csvio_read_table(path, &t, &err), ATTN_EIO);
    ck_assert_msg(strstr(err.msg, "nope.csv: cannot open: No such file") != NULL, "%s", err.msg);
    ck_assert_int_eq(csvio_read_table(dir, &t, &err), ATTN_EIO);
    ck_assert_msg(strstr(err.msg, "is a folder") != NULL, "%s", err.msg);
}
END_TEST

static void
expect_value_error(const char *cell, const char *needle)
{
    float v;
    struct attn_error err;

    attn_error_clear(&err);
    ck_assert_int_ne(csvio_parse_value("f.csv", 7, 3, cell, &v, &err), ATTN_OK);
    ck_assert_msg(strstr(err.msg, "f.csv: row 7, column 3") != NULL, "%s", err.msg);
    ck_assert_msg(strstr(err.msg, needle) != NULL, "'%s' not in: %s", needle, err.msg);
}

START_TEST(values_must_be_finite_float32)
{
    float v;

    expect_value_error("abc", "'abc' is not a number");
    expect_value_error("1.5x", "is not a number");
    expect_value_error("", "empty");
    expect_value_error("  ", "empty");
    expect_value_error("nan", "not a finite number");
    expect_value_error("-inf", "not a finite number");
    expect_value_error("1e999", "not a finite number");
    expect_value_error("1e39", "beyond the float32 range");
    ck_assert_int_eq(csvio_parse_value("f", 1, 1, " -2.5e-3 ", &v, NULL), ATTN_OK);
    ck_assert_float_eq(v, -2.5e-3f);
    /* Through double, as torch.tensor() converts a Python float. */
    ck_assert_int_eq(csvio_parse_value("f", 1, 1, "0.43", &v, NULL), ATTN_OK);
    ck_assert_float_eq(v, (float)0.43);
    {
        /* Long but valid numbers are numbers (before: "not a number" past 127 bytes). */
        char longnum[300];
        memset(longnum, '0', sizeof longnum);
        memcpy(longnum, "0.", 2);
        memcpy(longnum + 250, "25", 3);
        ck_assert_int_eq(csvio_parse_value("f", 1, 1, longnum, &v, NULL), ATTN_OK);
        ck_assert_float_eq(v, 0.0f);
        memcpy(longnum, "1.", 2);
        ck_assert_int_eq(csvio_parse_value("f", 1, 1, longnum, &v, NULL), ATTN_OK);
        ck_assert_float_eq(v, 1.0f);
        memcpy(longnum + 250, "2x", 3);
        expect_value_error(longnum, "'1.00000000000000000000000000000000000000...' is not a number");
    }
    expect_value_error(" \n5", "is not a number");
}
END_TEST

START_TEST(matrix_errors_name_row_and_column)
{
    const char *path = test_write_text(dir, "m.csv", ",d0,d1\nx,1,2\n\ny,3,oops\n");
    struct csvio_table t;
    struct matrix m;
    struct attn_error err;

    ck_assert_int_eq(csvio_read_table(path, &t, NULL), ATTN_OK);
    ck_assert_int_eq(csvio_table_matrix(&t, 1, 1, &m, &err), ATTN_EPARSE);
    ck_assert_msg(strstr(err.msg, "m.csv: row 4, column 3: 'oops' is not a number") != NULL,
                  "%s", err.msg);
    csvio_table_destroy(&t);
}
END_TEST

START_TEST(written_matrices_read_back_exactly)
{
    float data[] = { 0.1f, -INFINITY, 1.0f / 3.0f, 123456.789f, -0.0f, 1e-30f };
    struct matrix m = matrix_view(data, 2, 3);
    const char *const rows[] = { "plain", "with, comma" };
    struct csvio_labels rl = { rows, NULL };
    struct csvio_labels cl = { NULL, "d" };
    char path[512];
    FILE *f;
    struct csvio_table t;
    char buf[64];

    snprintf(path, sizeof path, "%s/out.csv", dir);
    f = fopen(path, "w");
    ck_assert_int_eq(csvio_write_matrix(f, &m, rl, cl), ATTN_OK);
    fclose(f);
    ck_assert_int_eq(csvio_read_table(path, &t, NULL), ATTN_OK);
    ck_assert_str_eq(csvio_cell(&t, 0, 0), "");
    ck_assert_str_eq(csvio_cell(&t, 0, 2), "d1");
    ck_assert_str_eq(csvio_cell(&t, 2, 0), "with, comma");
    ck_assert_str_eq(csvio_cell(&t, 1, 2), "-inf");
    for (int i = 0; i < 2; i++) {
        for (int j = 0; j < 3; j++) {
            float v;
            if (i == 0 && j == 1)
                continue;
            ck_assert_int_eq(csvio_parse_value(path, 1, 1, csvio_cell(&t, i + 1, j + 1), &v, NULL),
                             ATTN_OK);
            ck_assert_msg(memcmp(&v, &MAT_AT(&m, i, j), sizeof v) == 0, "[%d][%d] %.9g != %.9g",
                          i, j, (double)v, (double)MAT_AT(&m, i, j));
        }
    }
    csvio_format_value(buf, sizeof buf, 0.1f);
    ck_assert_str_eq(buf, "0.100000001");
    csvio_table_destroy(&t);
}
END_TEST

static Suite *
csvio_suite(void)
{
    Suite *s = suite_create("csvio");
    TCase *tc = tcase_create("tables");
    /* (a hang guard, not a timing: CK_TIMEOUT_MULTIPLIER scales it under the sanitizers) */
    tcase_set_timeout(tc, 30);

    tcase_add_checked_fixture(tc, test_tmpdir_setup, test_tmpdir_teardown);
    tcase_add_test(tc, reads_a_plain_table);
    tcase_add_test(tc, bom_crlf_quotes_and_blank_lines);
    tcase_add_test(tc, broken_files_are_refused_with_their_place);
    tcase_add_test(tc, missing_and_folder_paths_are_refused);
    tcase_add_test(tc, values_must_be_finite_float32);
    tcase_add_test(tc, matrix_errors_name_row_and_column);
    tcase_add_test(tc, written_matrices_read_back_exactly);
    suite_add_tcase(s, tc);
    return s;
}

TEST_MAIN(csvio_suite)
