/*
 * check_fileio.c: bounded whole-file reads and all-or-nothing batches of
 * files (src/core/files/fileio.c), and a model's JSON files read through
 * them (jsonfile.c).  Exports through the whole program are in
 * check_export.c; this is the module on its own.
 */
#include "config.h"

#include <stdbool.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attnscope/files/fileio.h"
#include "attnscope/files/fileio_batch.h"
#include "attnscope/files/jsonfile.h"
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

/*
 * A model's export: one file in each of layers layer folders and one at
 * the top, written into out as a batch.  Its status.
 */
static enum attn_status
export_layers(const char *out, int layers, struct attn_error *err)
{
    struct fileio_batch b;
    enum attn_status st = fileio_batch_begin(&b, out, err);
    FILE *f;

    if (st != ATTN_OK)
        return st;
    fileio_batch_replaces(&b); /* (every layer of a model, as export_model writes them) */
    for (int l = 0; l < layers && st == ATTN_OK; l++) {
        char name[64];
        snprintf(name, sizeof name, "layer%d/weights.h0.csv", l);
        st = fileio_batch_open(&b, name, &f, err);
        if (st == ATTN_OK) {
            fprintf(f, "%d\n", l);
            st = fileio_batch_close(&b, err);
        }
    }
    if (st == ATTN_OK && (st = fileio_batch_open(&b, "tokens.csv", &f, err)) == ATTN_OK) {
        fputs("t\n", f);
        st = fileio_batch_close(&b, err);
    }
    if (st != ATTN_OK) {
        fileio_batch_abort(&b);
        return st;
    }
    return fileio_batch_commit(&b, err);
}

/* Whether dir/rel exists (as anything, a dangling link too). */
static bool
exists(const char *dir_path, const char *rel)
{
    char path[1200];
    struct stat st;

    snprintf(path, sizeof path, "%s/%s", dir_path, rel);
    return lstat(path, &st) == 0;
}

/* A hidden staging folder left in dir (a batch's leftover). */
static bool
leftover(const char *dir_path)
{
    int hidden = 0;

    test_count_entries(dir_path, &hidden);
    return hidden > (exists(dir_path, ".attnscope-manifest") ? 1 : 0);
}

/*
 * The user's files in and around layer folders (issue 23, item 2): a note
 * in layer0/ stays; a subfolder in layer1/ stays (the files then move one
 * by one) and nothing hidden is left; a file where a layer folder goes, or
 * a symbolic link to a folder elsewhere, is refused before anything moves,
 * on either path, and the folder elsewhere is not written.
 */
START_TEST(the_users_files_in_layer_folders_stay)
{
    char out[300];
    char elsewhere[300];
    char path[1200];
    struct attn_error err;

    snprintf(out, sizeof out, "%s/export", dir);
    ck_assert_int_eq(export_layers(out, 2, &err), ATTN_OK);
    test_write_text(out, "layer0/notes.txt", "mine");
    ck_assert_int_eq(export_layers(out, 2, &err), ATTN_OK);
    ck_assert(exists(out, "layer0/notes.txt"));
    ck_assert(exists(out, "layer0/weights.h0.csv") && exists(out, "layer1/weights.h0.csv"));
    ck_assert(!leftover(dir));
    /* A folder of the user's inside a layer folder: kept whole, no hidden leftover anywhere. */
    snprintf(path, sizeof path, "%s/layer1/mine", out);
    ck_assert_int_eq(mkdir(path, 0755), 0);
    test_write_text(out, "layer1/mine/deep.txt", "deep");
    ck_assert_msg(export_layers(out, 2, &err) == ATTN_OK, "%s", err.msg);
    ck_assert(exists(out, "layer1/mine/deep.txt") && exists(out, "layer0/notes.txt"));
    ck_assert(!leftover(dir) && !leftover(out));
    /* A file named layer1: refused, and nothing else changed (it is the file-by-file path now). */
    test_remove_dir(out);
    ck_assert_int_eq(export_layers(out, 1, &err), ATTN_OK);
    test_write_text(out, "layer1", "a file of mine");
    ck_assert_int_eq(export_layers(out, 3, &err), ATTN_EIO);
    ck_assert_msg(strstr(err.msg, "layer1: is a file where the export puts a folder; nothing was "
                                  "written") != NULL,
                  "%s", err.msg);
    ck_assert(exists(out, "layer1") && !exists(out, "layer2"));
    ck_assert(!leftover(dir) && !leftover(out));
    /* The same with a folder of the user's beside it (the files would move one by one). */
    snprintf(path, sizeof path, "%s/own", out);
    ck_assert_int_eq(mkdir(path, 0755), 0);
    ck_assert_int_eq(export_layers(out, 3, &err), ATTN_EIO);
    ck_assert(!exists(out, "layer2") && !leftover(out));
    /* A symbolic link where layer0 goes: refused; the folder it names is not written. */
    test_remove_dir(out);
    snprintf(elsewhere, sizeof elsewhere, "%s/elsewhere", dir);
    ck_assert_int_eq(mkdir(elsewhere, 0755), 0);
    ck_assert_int_eq(mkdir(out, 0755), 0);
    snprintf(path, sizeof path, "%s/layer0", out);
    ck_assert_int_eq(symlink(elsewhere, path), 0);
    ck_assert_int_eq(export_layers(out, 1, &err), ATTN_EIO);
    ck_assert_msg(strstr(err.msg, "layer0: is a symbolic link") != NULL, "%s", err.msg);
    ck_assert_int_eq(test_count_entries(elsewhere, NULL), 0);
    /* And with a folder of the user's beside it (file by file, where the link was followed). */
    snprintf(path, sizeof path, "%s/own", out);
    ck_assert_int_eq(mkdir(path, 0755), 0);
    ck_assert_int_eq(export_layers(out, 1, &err), ATTN_EIO);
    ck_assert_int_eq(test_count_entries(elsewhere, NULL), 0);
    ck_assert(!leftover(out));
}
END_TEST

/*
 * An export of fewer layers replaces the layer folders an earlier export
 * made (issue 23, item 3): no layer2/ after a 3-layer then a 2-layer
 * export, on the exchange path and on the file-by-file path; a layer
 * folder holding a file of the user's keeps that file only.
 */
START_TEST(a_smaller_export_leaves_no_stale_layers)
{
    char out[300];
    char path[1200];
    struct attn_error err;

    snprintf(out, sizeof out, "%s/export", dir);
    ck_assert_int_eq(export_layers(out, 3, &err), ATTN_OK);
    ck_assert(exists(out, "layer2/weights.h0.csv"));
    ck_assert_int_eq(export_layers(out, 2, &err), ATTN_OK);
    ck_assert(!exists(out, "layer2"));
    ck_assert(exists(out, "layer1/weights.h0.csv") && exists(out, "tokens.csv"));
    ck_assert(!leftover(dir));
    /* The user's file in a stale layer folder: that folder stays, with that file only. */
    ck_assert_int_eq(export_layers(out, 4, &err), ATTN_OK);
    test_write_text(out, "layer3/notes.txt", "mine");
    ck_assert_int_eq(export_layers(out, 2, &err), ATTN_OK);
    ck_assert(!exists(out, "layer2") && exists(out, "layer3/notes.txt"));
    ck_assert(!exists(out, "layer3/weights.h0.csv"));
    /* File by file (a folder of the user's at the top): the same. */
    snprintf(path, sizeof path, "%s/own", out);
    ck_assert_int_eq(mkdir(path, 0755), 0);
    ck_assert_int_eq(export_layers(out, 5, &err), ATTN_OK);
    ck_assert(exists(out, "layer4/weights.h0.csv"));
    ck_assert_int_eq(export_layers(out, 1, &err), ATTN_OK);
    ck_assert(!exists(out, "layer1") && !exists(out, "layer2") && !exists(out, "layer4"));
    ck_assert(exists(out, "layer3/notes.txt") && !exists(out, "layer3/weights.h0.csv"));
    ck_assert(exists(out, "own") && exists(out, "layer0/weights.h0.csv"));
    ck_assert(!leftover(out));
}
END_TEST

/* A new export folder gets the mode mkdir gives under the umask (issue 23, item 15). */
START_TEST(a_new_folder_follows_the_umask)
{
    const mode_t masks[] = { 022, 002, 077 };
    struct attn_error err;

    for (size_t i = 0; i < sizeof masks / sizeof masks[0]; i++) {
        char out[300];
        struct stat st;
        mode_t old = umask(masks[i]);
        snprintf(out, sizeof out, "%s/new%zu", dir, i);
        ck_assert_int_eq(export_layers(out, 1, &err), ATTN_OK);
        umask(old);
        ck_assert_int_eq(stat(out, &st), 0);
        ck_assert_msg((st.st_mode & 0777) == (0777 & ~masks[i]), "umask %03o: mode %03o",
                      (unsigned)masks[i], (unsigned)(st.st_mode & 0777));
    }
}
END_TEST

/*
 * An integer too big for 64 bits is a number (issue 60: Llama 3's
 * tokenizer_config.json holds model_max_length 10^30, and the whole file
 * was refused as "too big integer"): read as the nearest double, the
 * integers that fit kept integers, strings that look like numbers kept as
 * they are, and an error after one still placed at its line and column.
 */
START_TEST(json_integers_past_64_bits_are_numbers)
{
    const char *text = "{\"model_max_length\": 1000000000000000019884624838656,\n"
                       " \"fits\": 9223372036854775807, \"past\": 9223372036854775808,\n"
                       " \"low\": -9223372036854775809, \"s\": \"123456789012345678901234\",\n"
                       " \"e\": \"\\\"99999999999999999999\", \"real\": 1.5e3, \"list\": [1, "
                       "123456789012345678901234567890]}";
    struct attn_error err;
    json_t *root = jsonfile_parse("t.json", text, strlen(text), &err);
    json_t *v;

    ck_assert_msg(root != NULL, "%s", err.msg);
    v = json_object_get(root, "model_max_length");
    ck_assert(json_is_real(v));
    ck_assert_double_eq(json_real_value(v), 1e30);
    ck_assert(json_is_integer(json_object_get(root, "fits")));
    ck_assert(json_integer_value(json_object_get(root, "fits")) == INT64_MAX);
    ck_assert(json_is_real(json_object_get(root, "past")));
    ck_assert_double_eq(json_real_value(json_object_get(root, "past")), 9223372036854775808.0);
    ck_assert_double_eq(json_real_value(json_object_get(root, "low")), -9223372036854775809.0);
    ck_assert_str_eq(json_string_value(json_object_get(root, "s")), "123456789012345678901234");
    ck_assert_str_eq(json_string_value(json_object_get(root, "e")), "\"99999999999999999999");
    ck_assert_double_eq(json_real_value(json_object_get(root, "real")), 1500.0);
    ck_assert_double_eq(json_real_value(json_array_get(json_object_get(root, "list"), 1)),
                        123456789012345678901234567890.0);
    json_decref(root);
    /* Errors keep their places in the file, before and after the integers made reals. */
    {
        const char *bad = "{\"a\": 100000000000000000000000, \"b\": tru}";
        const char *later = "{\"a\": 100000000000000000000000,\n \"b\": 1, \"b\": 2}";
        json_error_t je;
        char expected[64];
        ck_assert_ptr_null(jsonfile_parse("bad.json", bad, strlen(bad), &err));
        /* (a real of the same length in its place: where jansson places the error itself) */
        ck_assert_ptr_null(json_loads("{\"a\": 1.0000000000000000000000, \"b\": tru}", 0, &je));
        snprintf(expected, sizeof expected, "bad.json:1:%d: not JSON: ", je.column);
        ck_assert_msg(strncmp(err.msg, expected, strlen(expected)) == 0, "%s (want %s)", err.msg,
                      expected);
        ck_assert_ptr_null(jsonfile_parse("later.json", later, strlen(later), &err));
        ck_assert_msg(strstr(err.msg, "later.json:2:") == err.msg, "%s", err.msg);
    }
}
END_TEST

static Suite *
fileio_suite(void)
{
    Suite *s = suite_create("fileio");
    TCase *tc = tcase_create("fileio");
    /* (a hang guard, not a timing: CK_TIMEOUT_MULTIPLIER scales it under the sanitizers) */
    tcase_set_timeout(tc, 30);

    tcase_add_checked_fixture(tc, test_tmpdir_setup, test_tmpdir_teardown);
    tcase_add_test(tc, reads_whole_files_within_the_limit);
    tcase_add_test(tc, a_batch_appears_whole_or_not_at_all);
    tcase_add_test(tc, names_and_folders_are_checked);
    tcase_add_test(tc, the_users_files_in_layer_folders_stay);
    tcase_add_test(tc, a_smaller_export_leaves_no_stale_layers);
    tcase_add_test(tc, a_new_folder_follows_the_umask);
    tcase_add_test(tc, json_integers_past_64_bits_are_numbers);
    suite_add_tcase(s, tc);
    return s;
}

TEST_MAIN(fileio_suite)
