/*
 * check_export.c: --export's files, --weights round trips, and exports that
 * fail without leaving anything behind (src/core/pipeline/export.c, params.c, fileio.c).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attnscope/files/csvio.h"
#include "attnscope/pipeline/export.h"
#include "attnscope/files/fileio.h"
#include "attnscope/files/fileio_batch.h"
#include "testutil.h"

static struct vocab book;

/*
 * check_export is linked with -Wl,--wrap=rename, so every rename() in it and
 * in the core comes here first: a test sets rename_fails_at to make the Nth
 * call fail, as a full or read-only file system could part-way through a batch.
 */
int __real_rename(const char *from, const char *to);
int __wrap_rename(const char *from, const char *to);
static int rename_fails_at; /* 0: none fails */
static int rename_calls;

int
__wrap_rename(const char *from, const char *to)
{
    if (rename_fails_at > 0 && ++rename_calls == rename_fails_at) {
        errno = EROFS;
        return -1;
    }
    return __real_rename(from, to);
}

/* And -Wl,--wrap=renameat2: exchange_fails makes the next exchange fail as an old kernel would. */
int __real_renameat2(int olddirfd, const char *from, int newdirfd, const char *to, unsigned flags);
int __wrap_renameat2(int olddirfd, const char *from, int newdirfd, const char *to, unsigned flags);
static int exchange_fails;

int
__wrap_renameat2(int olddirfd, const char *from, int newdirfd, const char *to, unsigned flags)
{
    if (exchange_fails) {
        exchange_fails = 0;
        errno = EINVAL;
        return -1;
    }
    return __real_renameat2(olddirfd, from, newdirfd, to, flags);
}

static void
setup(void)
{
    test_tmpdir_setup();
    ck_assert_int_eq(vocab_builtin(&book, NULL), ATTN_OK);
}

static void
teardown(void)
{
    vocab_destroy(&book);
    test_tmpdir_teardown();
}

static void
run(struct pipeline *p, const struct attention_config *cfg, const struct attention_params *w)
{
    struct pipeline_source src = {
        .sentence = "Your journey starts with one step",
        .vocab = &book,
        .weights = w,
    };
    struct attn_error err;

    ck_assert_msg(pipeline_create(p, cfg, &src, &err) == ATTN_OK, "%s", err.msg);
}

/* The entries of a folder that must exist. */
static int
count_entries(const char *path, int *hidden)
{
    int n = test_count_entries(path, hidden);

    ck_assert_msg(n >= 0, "%s cannot be opened", path);
    return n;
}

static int
exists(const char *folder, const char *name)
{
    char path[1024];
    struct stat sb;

    snprintf(path, sizeof path, "%s/%s", folder, name);
    return stat(path, &sb) == 0;
}

START_TEST(export_writes_every_stage_and_parameter)
{
    static const char *const names[] = {
        "tokens.csv", "vocabulary.csv", "inputs.csv", "queries.csv", "keys.csv", "values.csv",
        "scores.h0.csv", "scores.h1.csv", "masked.h0.csv", "masked.h1.csv", "scaled.h0.csv",
        "scaled.h1.csv", "weights.h0.csv", "weights.h1.csv", "dropped.h0.csv", "dropped.h1.csv",
        "context.csv", "output.csv", "model.csv", "W_query.weight.csv", "W_key.weight.csv",
        "W_value.weight.csv", "out_proj.weight.csv", "out_proj.bias.csv",
    };
    const int count = (int)(sizeof names / sizeof names[0]);
    struct attention_config cfg;
    struct pipeline p;
    int written = 0;
    int hidden;
    char out[512];

    attention_config_init(&cfg);
    run(&p, &cfg, NULL);
    snprintf(out, sizeof out, "%s/run", dir);
    ck_assert_int_eq(export_all(&p, out, &written, NULL), ATTN_OK);
    ck_assert_int_eq(written, count);
    for (int i = 0; i < count; i++)
        ck_assert_msg(exists(out, names[i]), "%s was not written", names[i]);
    ck_assert_int_eq(count_entries(out, &hidden), count);
    ck_assert_int_eq(hidden, 0);
    ck_assert(!exists(out, "keep.h0.csv"));
    ck_assert(!exists(out, "positional.csv"));
    pipeline_destroy(&p);
}
END_TEST

START_TEST(exported_values_are_the_stage_values)
{
    struct attention_config cfg;
    struct pipeline p;
    struct csvio_table t;
    struct matrix m;
    struct pipeline_view v;
    char path[512];

    attention_config_init(&cfg);
    run(&p, &cfg, NULL);
    ck_assert_int_eq(export_all(&p, dir, NULL, NULL), ATTN_OK);

    snprintf(path, sizeof path, "%s/masked.h1.csv", dir);
    ck_assert_int_eq(csvio_read_table(path, &t, NULL), ATTN_OK);
    ck_assert_str_eq(csvio_cell(&t, 0, 1), "Your");
    ck_assert_str_eq(csvio_cell(&t, 2, 0), "journey");
    ck_assert_str_eq(csvio_cell(&t, 1, 6), "-inf");
    csvio_table_destroy(&t);

    snprintf(path, sizeof path, "%s/weights.h1.csv", dir);
    ck_assert_int_eq(csvio_read_table(path, &t, NULL), ATTN_OK);
    ck_assert_int_eq(csvio_table_matrix(&t, 1, 1, &m, NULL), ATTN_OK);
    pipeline_stage_view(&p, STAGE_WEIGHTS, 1, &v);
    /* Nine significant digits bring every float32 back exactly. */
    ck_assert_mem_eq(m.data, v.m.data, matrix_size(&m) * sizeof(float));
    matrix_destroy(&m);
    csvio_table_destroy(&t);

    snprintf(path, sizeof path, "%s/context.csv", dir);
    ck_assert_int_eq(csvio_read_table(path, &t, NULL), ATTN_OK);
    ck_assert_str_eq(csvio_cell(&t, 0, 2), "d1");
    csvio_table_destroy(&t);
    pipeline_destroy(&p);
}
END_TEST

static void
round_trip(struct attention_config *cfg)
{
    struct pipeline drawn;
    struct pipeline loaded;
    struct attention_params w;
    struct attn_error err;

    run(&drawn, cfg, NULL);
    ck_assert_int_eq(export_all(&drawn, dir, NULL, NULL), ATTN_OK);
    ck_assert_int_eq(params_create(&w, cfg, 3, NULL), ATTN_OK);
    ck_assert_msg(params_load(&w, dir, &err) == ATTN_OK, "%s", err.msg);
    run(&loaded, cfg, &w);
    ck_assert(loaded.params_given);
    ck_assert_mem_eq(loaded.st.output.data, drawn.st.output.data,
                     matrix_size(&drawn.st.output) * sizeof(float));
    ck_assert_mem_eq(loaded.st.weights, drawn.st.weights,
                     (size_t)drawn.st.shape.heads * 36 * sizeof(float));
    params_destroy(&w);
    pipeline_destroy(&drawn);
    pipeline_destroy(&loaded);
}

START_TEST(weights_load_back_and_reproduce_the_outputs)
{
    struct attention_config cfg;

    for (int v = ATTN_V1; v < ATTN_VARIANT_COUNT; v++) {
        attention_config_init(&cfg);
        attention_config_set_variant(&cfg, (enum attn_variant)v);
        cfg.qkv_bias = v % 2 == 0;
        cfg.d_out = 4;
        if (attention_variant_splits_d_in(cfg.variant))
            cfg.heads = 3; /* notes' and nn-mha's heads split d_in (3) */
        round_trip(&cfg);
    }
}
END_TEST

START_TEST(loading_weights_names_the_file_and_shape)
{
    struct attention_config cfg;
    struct pipeline p;
    struct attention_params w;
    struct attn_error err;
    char path[512];

    attention_config_init(&cfg);
    run(&p, &cfg, NULL);
    ck_assert_int_eq(export_all(&p, dir, NULL, NULL), ATTN_OK);
    pipeline_destroy(&p);

    cfg.d_out = 4;
    ck_assert_int_eq(params_create(&w, &cfg, 3, NULL), ATTN_OK);
    ck_assert_int_eq(params_load(&w, dir, &err), ATTN_ESHAPE);
    ck_assert_msg(strstr(err.msg, "W_query.weight.csv: 2 x 3 values, but W_query.weight here is 4 x 3") != NULL,
                  "%s", err.msg);
    params_destroy(&w);

    cfg.d_out = 2;
    cfg.qkv_bias = true;
    ck_assert_int_eq(params_create(&w, &cfg, 3, NULL), ATTN_OK);
    ck_assert_int_eq(params_load(&w, dir, &err), ATTN_EIO);
    ck_assert_msg(strstr(err.msg, "W_query.bias.csv: cannot open") != NULL, "%s", err.msg);
    params_destroy(&w);

    snprintf(path, sizeof path, "%s/W_key.weight.csv", dir);
    test_write_text(dir, "W_key.weight.csv", ",c0,c1,c2\nr0,1,2,3\nr1,4,five,6\n");
    cfg.qkv_bias = false;
    ck_assert_int_eq(params_create(&w, &cfg, 3, NULL), ATTN_OK);
    ck_assert_int_eq(params_load(&w, dir, &err), ATTN_EPARSE);
    ck_assert_msg(strstr(err.msg, "W_key.weight.csv: row 3, column 3: 'five' is not a number") != NULL,
                  "%s", err.msg);
    params_destroy(&w);
}
END_TEST

START_TEST(dropout_exports_its_keep_mask)
{
    struct attention_config cfg;
    struct pipeline p;
    int hidden;

    attention_config_init(&cfg);
    cfg.dropout = 0.5;
    run(&p, &cfg, NULL);
    ck_assert_int_eq(export_all(&p, dir, NULL, NULL), ATTN_OK);
    ck_assert(exists(dir, "keep.h0.csv"));
    ck_assert(exists(dir, "keep.h1.csv"));
    ck_assert_int_eq(count_entries(dir, &hidden), 26);
    pipeline_destroy(&p);
}
END_TEST

START_TEST(a_failed_export_leaves_nothing)
{
    struct attention_config cfg;
    struct pipeline p;
    struct attn_error err;
    char sub[512];
    int hidden;

    attention_config_init(&cfg);
    run(&p, &cfg, NULL);

    /* A file where the folder should be. */
    test_write_text(dir, "file", "x");
    snprintf(sub, sizeof sub, "%s/file", dir);
    ck_assert_int_eq(export_all(&p, sub, NULL, &err), ATTN_EIO);
    ck_assert_msg(strstr(err.msg, "exists and is not a folder") != NULL, "%s", err.msg);
    snprintf(sub, sizeof sub, "%s/file/below", dir);
    ck_assert_int_eq(export_all(&p, sub, NULL, &err), ATTN_EIO);

    /* A folder taking the name of the last file: nothing may be moved into place. */
    snprintf(sub, sizeof sub, "%s/out", dir);
    ck_assert_int_eq(mkdir(sub, 0777), 0);
    snprintf(sub, sizeof sub, "%s/out/out_proj.bias.csv", dir);
    ck_assert_int_eq(mkdir(sub, 0777), 0);
    snprintf(sub, sizeof sub, "%s/out", dir);
    ck_assert_int_eq(export_all(&p, sub, NULL, &err), ATTN_EIO);
    ck_assert_msg(strstr(err.msg, "out_proj.bias.csv: is a folder; nothing was written") != NULL,
                  "%s", err.msg);
    ck_assert_int_eq(count_entries(sub, &hidden), 1);
    ck_assert_int_eq(hidden, 0);
    pipeline_destroy(&p);
}
END_TEST

START_TEST(export_replaces_old_files_whole)
{
    struct attention_config cfg;
    struct pipeline p;
    struct csvio_table t;
    char path[512];
    float v;

    test_write_text(dir, "output.csv", "stale\n");
    attention_config_init(&cfg);
    run(&p, &cfg, NULL);
    ck_assert_int_eq(export_stage(&p, STAGE_OUTPUT, dir, NULL, NULL), ATTN_OK);
    snprintf(path, sizeof path, "%s/output.csv", dir);
    ck_assert_int_eq(csvio_read_table(path, &t, NULL), ATTN_OK);
    ck_assert_int_eq(t.rows, 7);
    ck_assert_int_eq(csvio_parse_value(path, 2, 2, csvio_cell(&t, 1, 1), &v, NULL), ATTN_OK);
    ck_assert_float_eq_tol(v, 0.319018f, 1e-6f); /* the book's first output, as PyTorch has it */
    csvio_table_destroy(&t);
    pipeline_destroy(&p);
}
END_TEST

START_TEST(batch_abort_removes_temporaries)
{
    struct fileio_batch b;
    FILE *f;
    int hidden;
    char out[512];

    snprintf(out, sizeof out, "%s/out", dir);
    ck_assert_int_eq(mkdir(out, 0777), 0);
    ck_assert_int_eq(fileio_batch_begin(&b, out, NULL), ATTN_OK);
    ck_assert_int_eq(fileio_batch_open(&b, "a.csv", &f, NULL), ATTN_OK);
    fputs("half a file", f);
    ck_assert_int_eq(count_entries(dir, &hidden), 2); /* out and its staging folder */
    ck_assert_int_eq(hidden, 1);
    fileio_batch_abort(&b);
    ck_assert_int_eq(count_entries(dir, &hidden), 1);
    ck_assert_int_eq(hidden, 0);
    ck_assert_int_eq(count_entries(out, &hidden), 0);
    ck_assert_int_eq(fileio_batch_begin(&b, dir, NULL), ATTN_OK);
    ck_assert_int_ne(fileio_batch_open(&b, "../escape.csv", &f, NULL), ATTN_OK);
    ck_assert_int_ne(fileio_batch_open(&b, ".hidden", &f, NULL), ATTN_OK);
    fileio_batch_abort(&b);
}
END_TEST

/* Reads a small file of the folder whole, for comparing. */
static void
read_back(const char *name, char *buf, size_t size)
{
    char path[512];
    FILE *f;
    size_t n;

    snprintf(path, sizeof path, "%s/%s", dir, name);
    f = fopen(path, "r");
    ck_assert_msg(f != NULL, "%s is missing", name);
    n = fread(buf, 1, size - 1, f);
    buf[n] = '\0';
    fclose(f);
}

/*
 * Commits b with its nth rename failing; the message must hold want, and the
 * folder must hold its `files` files and no temporary.
 */
static void
commit_failing_rename(struct fileio_batch *b, int nth, const char *want, int files)
{
    struct attn_error err;
    int hidden;

    rename_calls = 0;
    rename_fails_at = nth;
    ck_assert_int_eq(fileio_batch_commit(b, &err), ATTN_EIO);
    rename_fails_at = 0;
    ck_assert_msg(strstr(err.msg, want) != NULL, "%s", err.msg);
    ck_assert_int_eq(count_entries(dir, &hidden), files);
    ck_assert_int_eq(hidden, 0);
}

START_TEST(a_rename_failing_part_way_says_what_was_written)
{
    static const char *const names[] = { "a.csv", "b.csv", "c.csv", "d.csv" };
    struct fileio_batch b;
    char buf[64];
    FILE *f;

    char keep[512];

    /* A subfolder: the folder cannot be exchanged whole, so the files move one by one. */
    snprintf(keep, sizeof keep, "%s/keep", dir);
    ck_assert_int_eq(mkdir(keep, 0777), 0);
    for (int i = 0; i < 4; i++)
        test_write_text(dir, names[i], "old\n");
    ck_assert_int_eq(fileio_batch_begin(&b, dir, NULL), ATTN_OK);
    for (int i = 0; i < 4; i++) {
        ck_assert_int_eq(fileio_batch_open(&b, names[i], &f, NULL), ATTN_OK);
        fputs("new\n", f);
        ck_assert_int_eq(fileio_batch_close(&b, NULL), ATTN_OK);
    }
    commit_failing_rename(&b, 3, "c.csv: cannot move into place: Read-only file system; "
                                 "2 of 4 files were written (a.csv to b.csv)", 5);
    /* The first two are new, the rest old, every one whole. */
    for (int i = 0; i < 4; i++) {
        read_back(names[i], buf, sizeof buf);
        ck_assert_str_eq(buf, i < 2 ? "new\n" : "old\n");
    }

    /* The first rename failing: nothing was written. */
    ck_assert_int_eq(fileio_batch_begin(&b, dir, NULL), ATTN_OK);
    ck_assert_int_eq(fileio_batch_open(&b, "a.csv", &f, NULL), ATTN_OK);
    fputs("newer\n", f);
    commit_failing_rename(&b, 1, "a.csv: cannot move into place: Read-only file system; "
                                 "nothing was written", 5);
    read_back("a.csv", buf, sizeof buf);
    ck_assert_str_eq(buf, "new\n");
}
END_TEST

START_TEST(a_symlink_in_the_folder_is_replaced_not_followed)
{
    struct attention_config cfg;
    struct pipeline p;
    char outside[512];
    char link[512];
    char buf[64] = { 0 };
    struct stat st;
    FILE *f;

    /* output.csv links to a file outside the folder: the export must not write there. */
    test_write_text(dir, "outside.txt", "keep me\n");
    snprintf(outside, sizeof outside, "%s/outside.txt", dir);
    snprintf(link, sizeof link, "%s/out", dir);
    ck_assert_int_eq(mkdir(link, 0777), 0);
    snprintf(link, sizeof link, "%s/out/output.csv", dir);
    ck_assert_int_eq(symlink(outside, link), 0);
    attention_config_init(&cfg);
    run(&p, &cfg, NULL);
    snprintf(link, sizeof link, "%s/out", dir);
    ck_assert_int_eq(export_stage(&p, STAGE_OUTPUT, link, NULL, NULL), ATTN_OK);
    f = fopen(outside, "r");
    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_nonnull(fgets(buf, sizeof buf, f));
    fclose(f);
    ck_assert_str_eq(buf, "keep me\n");
    snprintf(link, sizeof link, "%s/out/output.csv", dir);
    ck_assert_int_eq(lstat(link, &st), 0);
    ck_assert(S_ISREG(st.st_mode));
    pipeline_destroy(&p);
}
END_TEST

/*
 * An export replaces the folder whole (W10): the other files it held stay
 * (the same files), what killed exports left is removed, the folder keeps
 * its permissions, and nothing hidden is left beside or inside it.
 */
static void
export_over_a_lived_in_folder(bool exchange_works)
{
    struct attention_config cfg;
    struct pipeline p;
    struct stat before;
    struct stat after;
    char out[256];
    char path[300];
    int hidden;
    int written = 0;

    snprintf(out, sizeof out, "%s/out", dir);
    ck_assert_int_eq(mkdir(out, 0750), 0);
    ck_assert_int_eq(chmod(out, 0750), 0);
    test_write_text(out, "notes.txt", "mine\n");
    test_write_text(out, "output.csv", "stale\n");
    test_write_text(out, ".output.csv.AbC123", "a killed run's temporary\n");
    /* A killed run's staging folder: process 999999999 cannot exist (pid_max is far lower). */
    snprintf(path, sizeof path, "%s/.out.attnscope-999999999-AbC123", dir);
    ck_assert_int_eq(mkdir(path, 0777), 0);
    test_write_text(path, "output.csv", "half\n");
    snprintf(path, sizeof path, "%s/notes.txt", out);
    ck_assert_int_eq(stat(path, &before), 0);

    attention_config_init(&cfg);
    run(&p, &cfg, NULL);
    exchange_fails = !exchange_works;
    ck_assert_int_eq(export_all(&p, out, &written, NULL), ATTN_OK);
    ck_assert_int_eq(exchange_fails, 0); /* the exchange was tried */
    ck_assert_int_eq(written, 24);
    ck_assert_int_eq(count_entries(out, &hidden), 25);
    ck_assert_int_eq(hidden, 0);
    ck_assert_int_eq(count_entries(dir, &hidden), 1);
    ck_assert_int_eq(hidden, 0);
    ck_assert_int_eq(stat(path, &after), 0);
    ck_assert_uint_eq(after.st_ino, before.st_ino); /* the same file, not a copy */
    ck_assert_int_eq(stat(out, &after), 0);
    ck_assert_int_eq(after.st_mode & 07777, 0750);
    pipeline_destroy(&p);
}

START_TEST(an_export_replaces_the_folder_whole)
{
    export_over_a_lived_in_folder(true);
}
END_TEST

START_TEST(without_an_exchange_files_move_one_by_one)
{
    export_over_a_lived_in_folder(false);
}
END_TEST

/* The working folder is written in place, never exchanged (a shell in it would be stranded). */
START_TEST(the_working_folder_is_written_in_place)
{
    struct attention_config cfg;
    struct pipeline p;
    struct stat before;
    struct stat after;
    char here[4096];
    int hidden;

    ck_assert_ptr_nonnull(getcwd(here, sizeof here));
    ck_assert_int_eq(chdir(dir), 0);
    ck_assert_int_eq(stat(".", &before), 0);
    attention_config_init(&cfg);
    run(&p, &cfg, NULL);
    ck_assert_int_eq(export_stage(&p, STAGE_OUTPUT, ".", NULL, NULL), ATTN_OK);
    ck_assert_int_eq(stat(".", &after), 0);
    ck_assert_uint_eq(after.st_ino, before.st_ino);
    ck_assert_int_eq(count_entries(".", &hidden), 1);
    ck_assert_int_eq(hidden, 0);
    ck_assert_int_eq(chdir(here), 0);
    pipeline_destroy(&p);
}
END_TEST

START_TEST(temporaries_go_when_a_signal_ends_the_batch)
{
    struct fileio_batch b;
    FILE *f;
    int hidden;
    char sub[512];

    /* What main.c's handler does: the files being written go, and so does a folder made for them. */
    snprintf(sub, sizeof sub, "%s/new", dir);
    ck_assert_int_eq(fileio_batch_begin(&b, sub, NULL), ATTN_OK);
    for (int i = 0; i < 40; i++) { /* past the first growth of the entry table */
        char name[32];
        snprintf(name, sizeof name, "f%d.csv", i);
        ck_assert_int_eq(fileio_batch_open(&b, name, &f, NULL), ATTN_OK);
        fputs("1,2\n", f);
        ck_assert_int_eq(fileio_batch_close(&b, NULL), ATTN_OK);
    }
    ck_assert_int_eq(access(sub, F_OK), -1); /* written beside it, in a hidden staging folder */
    ck_assert_int_eq(count_entries(dir, &hidden), 1);
    ck_assert_int_eq(hidden, 1);
    fileio_batch_remove_temporaries();
    ck_assert_int_eq(count_entries(dir, &hidden), 0); /* the staging folder is gone */
    fileio_batch_abort(&b);
    /* With no batch being written it does nothing. */
    fileio_batch_remove_temporaries();
    ck_assert_int_eq(count_entries(dir, &hidden), 0);
}
END_TEST

static Suite *
export_suite(void)
{
    Suite *s = suite_create("export");
    TCase *tc = tcase_create("export");
    /* (a hang guard, not a timing: CK_TIMEOUT_MULTIPLIER scales it under the sanitizers) */
    tcase_set_timeout(tc, 30);

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, export_writes_every_stage_and_parameter);
    tcase_add_test(tc, exported_values_are_the_stage_values);
    tcase_add_test(tc, weights_load_back_and_reproduce_the_outputs);
    tcase_add_test(tc, loading_weights_names_the_file_and_shape);
    tcase_add_test(tc, dropout_exports_its_keep_mask);
    tcase_add_test(tc, a_failed_export_leaves_nothing);
    tcase_add_test(tc, export_replaces_old_files_whole);
    tcase_add_test(tc, batch_abort_removes_temporaries);
    tcase_add_test(tc, a_rename_failing_part_way_says_what_was_written);
    tcase_add_test(tc, a_symlink_in_the_folder_is_replaced_not_followed);
    tcase_add_test(tc, temporaries_go_when_a_signal_ends_the_batch);
    tcase_add_test(tc, an_export_replaces_the_folder_whole);
    tcase_add_test(tc, without_an_exchange_files_move_one_by_one);
    tcase_add_test(tc, the_working_folder_is_written_in_place);
    suite_add_tcase(s, tc);
    return s;
}

TEST_MAIN(export_suite)
