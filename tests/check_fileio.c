/*
 * check_fileio.c: bounded whole-file reads and all-or-nothing batches of
 * files (src/core/fileio.c).  Exports through the whole program are in
 * check_export.c; this is the module on its own.
 */
#include "config.h"

#include <sys/stat.h>

#include "attnscope/fileio.h"
#include "testutil.h"

START_TEST(reads_whole_files_within_the_limit)
{
    struct attn_error err;
    char *buf;
    size_t len;
    const char *path = test_write_text(dir, "a.txt", "hello\n");
    char missing[600];

    ck_assert_int_eq(fileio_read_all(path, 6, &buf, &len, &err), ATTN_OK);
    ck_assert_uint_eq(len, 6);
    ck_assert_str_eq(buf, "hello\n");
    free(buf);
    ck_assert_int_eq(fileio_read_all(path, 5, &buf, &len, &err), ATTN_ELIMIT);
    ck_assert_msg(strstr(err.msg, "a.txt: 6 bytes is more than attnscope reads (5 bytes)") != NULL,
                  "%s", err.msg);
    snprintf(missing, sizeof missing, "%s/none.txt", dir);
    ck_assert_int_eq(fileio_read_all(missing, 100, &buf, &len, &err), ATTN_EIO);
    ck_assert_msg(strstr(err.msg, "none.txt: cannot open") != NULL, "%s", err.msg);
    ck_assert_int_eq(fileio_read_all(dir, 100, &buf, &len, &err), ATTN_EIO);
    ck_assert_msg(strstr(err.msg, "is a folder, not a file") != NULL, "%s", err.msg);
}
END_TEST

START_TEST(a_batch_appears_whole_or_not_at_all)
{
    struct fileio_batch b;
    struct attn_error err;
    FILE *f;
    char out[600];
    char *buf;
    size_t len;

    snprintf(out, sizeof out, "%s/out", dir);
    /* Aborted after one file: the folder it made is gone, nothing is left. */
    ck_assert_int_eq(fileio_batch_begin(&b, out, &err), ATTN_OK);
    ck_assert_int_eq(fileio_batch_open(&b, "one.csv", &f, &err), ATTN_OK);
    fputs("1\n", f);
    ck_assert_int_eq(fileio_batch_close(&b, &err), ATTN_OK);
    {
        /* Written into a hidden staging folder beside it: out does not exist yet. */
        int hidden;
        ck_assert_int_eq(test_count_entries(out, NULL), -1);
        ck_assert_int_eq(test_count_entries(dir, &hidden), 1);
        ck_assert_int_eq(hidden, 1);
    }
    fileio_batch_abort(&b);
    ck_assert_int_eq(test_count_entries(out, NULL), -1);
    ck_assert_int_eq(test_count_entries(dir, NULL), 0);

    /* Committed: both files under their names, no temporaries. */
    ck_assert_int_eq(fileio_batch_begin(&b, out, &err), ATTN_OK);
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(fileio_batch_open(&b, i ? "two.csv" : "one.csv", &f, &err), ATTN_OK);
        fprintf(f, "%d\n", i + 1);
        ck_assert_int_eq(fileio_batch_close(&b, &err), ATTN_OK);
    }
    ck_assert_int_eq(fileio_batch_commit(&b, &err), ATTN_OK);
    fileio_batch_abort(&b); /* after a commit: frees, removes nothing */
    ck_assert_int_eq(test_count_entries(out, NULL), 2);
    snprintf(out, sizeof out, "%s/out/two.csv", dir);
    ck_assert_int_eq(fileio_read_all(out, 100, &buf, &len, &err), ATTN_OK);
    ck_assert_str_eq(buf, "2\n");
    free(buf);
}
END_TEST

START_TEST(names_and_folders_are_checked)
{
    struct fileio_batch b;
    struct attn_error err;
    FILE *f;
    const char *file = test_write_text(dir, "plain", "x");

    ck_assert_int_eq(fileio_batch_begin(&b, "", &err), ATTN_EVALUE);
    ck_assert_int_eq(fileio_batch_begin(&b, file, &err), ATTN_EIO);
    ck_assert_msg(strstr(err.msg, "exists and is not a folder") != NULL, "%s", err.msg);
    ck_assert_int_eq(fileio_batch_begin(&b, dir, &err), ATTN_OK);
    ck_assert_int_eq(fileio_batch_open(&b, "../escape.csv", &f, &err), ATTN_EVALUE);
    ck_assert_msg(strstr(err.msg, "is not a plain file name") != NULL, "%s", err.msg);
    fileio_batch_abort(&b);
    ck_assert_int_eq(test_count_entries(dir, NULL), 1); /* the folder existed: kept, with its file */
}
END_TEST

static Suite *
fileio_suite(void)
{
    Suite *s = suite_create("fileio");
    TCase *tc = tcase_create("fileio");

    tcase_add_checked_fixture(tc, test_tmpdir_setup, test_tmpdir_teardown);
    tcase_add_test(tc, reads_whole_files_within_the_limit);
    tcase_add_test(tc, a_batch_appears_whole_or_not_at_all);
    tcase_add_test(tc, names_and_folders_are_checked);
    suite_add_tcase(s, tc);
    return s;
}

TEST_MAIN(fileio_suite)
