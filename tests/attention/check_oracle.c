/*
 * check_oracle.c: attnscope against PyTorch on many configurations.
 *
 * tests/golden/oracle/ holds cases made by tests/oracle/make_fixtures.py:
 * random variants, sizes, seeds, dropout, biases, masks, scaling,
 * temperatures and positional encodings, each with every stage and parameter
 * PyTorch computed.  Each case's command line goes through the same parser
 * and core as attnscope itself, and every value must agree to within
 * 1e-5 * max(1, |PyTorch's value|).
 */
#include "config.h"

#include <dirent.h>

#include "attnscope/files/csvio.h"
#include "attnscope/pipeline/pipeline.h"
#include "front/cli/cli.h"
#include "front/cli/inputs.h"
#include "testutil.h"

#define TOL 1e-5

struct case_run {
    char dir[4400];
    struct cli_options o;
    struct inputs in;
    struct pipeline p;
    char *argv_storage[64];
};

static void
load_case(struct case_run *c, const char *name)
{
    char path[4700];
    char source_path[4700];
    char line[8192];
    char err[512];
    char *argv[64];
    int argc = 0;
    FILE *f;
    struct pipeline_source src;
    struct attn_error aerr;

    snprintf(c->dir, sizeof c->dir, "%s/%s", test_path("tests/golden/oracle"), name);
    snprintf(path, sizeof path, "%s/args", c->dir);
    f = fopen(path, "r");
    ck_assert_msg(f != NULL, "%s: missing", path);
    argv[argc++] = (char *)"attnscope";
    while (fgets(line, sizeof line, f) != NULL && argc < 63) {
        line[strcspn(line, "\n")] = '\0';
        c->argv_storage[argc] = strdup(line);
        argv[argc] = c->argv_storage[argc];
        argc++;
    }
    fclose(f);
    argv[argc] = NULL;
    ck_assert_msg(cli_parse(argc, argv, &c->o, err, sizeof err) == 0, "%s: %s", name, err);
    snprintf(path, sizeof path, "%s/%s", c->dir, c->o.embeddings);
    if (c->o.source_embeddings != NULL)
        snprintf(source_path, sizeof source_path, "%s/%s", c->dir, c->o.source_embeddings);
    {
        /* A cross-attention case may give the source its own vocabulary. */
        const struct inputs_paths where = { path, NULL, NULL,
                                            c->o.source_embeddings != NULL ? source_path : NULL };
        ck_assert_msg(inputs_load(&c->in, &c->o.cfg, &where, c->o.knobs_given, NULL, &aerr) == ATTN_OK, "%s", aerr.msg);
    }
    src = inputs_source(&c->in, c->o.sentence, c->o.source);
    ck_assert_msg(pipeline_create(&c->p, &c->o.cfg, &src, &aerr) == ATTN_OK, "%s: %s", name,
                  aerr.msg);
}

/* The matrix attnscope has under an export name, or NULL. */
static const struct matrix *
find_matrix(const struct pipeline *p, const char *file, struct matrix *view)
{
    char base[128];
    char *dot;
    enum pipeline_stage s;
    struct pipeline_view v;
    int head = 0;

    snprintf(base, sizeof base, "%s", file);
    base[strlen(base) - 4] = '\0'; /* ".csv" */
    for (int i = 0; i < p->params.count; i++)
        if (strcmp(p->params.p[i].name, base) == 0)
            return &p->params.p[i].m;
    dot = strrchr(base, '.');
    if (dot != NULL && dot[1] == 'h') {
        head = atoi(dot + 2);
        *dot = '\0';
    }
    if (pipeline_stage_parse(base, &s) != 0 || !pipeline_stage_present(p, s))
        return NULL;
    pipeline_stage_view(p, s, head, &v);
    *view = v.m;
    return view;
}

static int
compare_file(const struct case_run *c, const char *name, const char *file, double *worst)
{
    char path[4700];
    struct csvio_table t;
    struct matrix want;
    struct matrix view;
    const struct matrix *got;
    struct attn_error err;

    got = find_matrix(&c->p, file, &view);
    ck_assert_msg(got != NULL, "%s/%s: attnscope has no such stage or parameter", name, file);
    snprintf(path, sizeof path, "%s/%s", c->dir, file);
    ck_assert_int_eq(csvio_read_table(path, &t, NULL), ATTN_OK);
    ck_assert_msg(t.rows - 1 == got->rows && t.cols - 1 == got->cols,
                  "%s/%s: PyTorch %d x %d, attnscope %d x %d", name, file, t.rows - 1, t.cols - 1,
                  got->rows, got->cols);
    ck_assert_int_eq(matrix_create(&want, t.rows - 1, t.cols - 1, NULL), ATTN_OK);
    for (int i = 1; i < t.rows; i++) {
        for (int j = 1; j < t.cols; j++) {
            const char *cell = csvio_cell(&t, i, j);
            float w;
            float g = MAT_AT(got, i - 1, j - 1);
            if (strcmp(cell, "-inf") == 0) {
                ck_assert_msg(isinf(g) && g < 0, "%s/%s[%d][%d]: %.9g, PyTorch -inf", name, file,
                              i - 1, j - 1, (double)g);
                continue;
            }
            ck_assert_msg(csvio_parse_value(path, i, j, cell, &w, &err) == ATTN_OK, "%s", err.msg);
            double diff = fabs((double)g - (double)w) / fmax(1.0, fabs((double)w));
            ck_assert_msg(diff <= TOL, "%s/%s[%d][%d]: attnscope %.9g, PyTorch %.9g", name, file,
                          i - 1, j - 1, (double)g, (double)w);
            if (diff > *worst)
                *worst = diff;
        }
    }
    matrix_destroy(&want);
    csvio_table_destroy(&t);
    return 1;
}

START_TEST(every_case_agrees_with_pytorch)
{
    DIR *cases = opendir(test_path("tests/golden/oracle"));
    struct dirent *e;
    int case_count = 0;
    int file_count = 0;
    double worst = 0.0;

    ck_assert_msg(cases != NULL, "tests/golden/oracle is missing");
    while ((e = readdir(cases)) != NULL) {
        struct case_run c;
        DIR *files;
        struct dirent *fe;

        if (e->d_name[0] == '.' || strcmp(e->d_name, "README") == 0)
            continue;
        memset(&c, 0, sizeof c);
        load_case(&c, e->d_name);
        files = opendir(c.dir);
        while ((fe = readdir(files)) != NULL) {
            size_t len = strlen(fe->d_name);
            if (len < 5 || strcmp(fe->d_name + len - 4, ".csv") != 0 ||
                strcmp(fe->d_name, "vocabulary.csv") == 0 ||
                strcmp(fe->d_name, "source-vocabulary.csv") == 0)
                continue;
            file_count += compare_file(&c, e->d_name, fe->d_name, &worst);
        }
        closedir(files);
        pipeline_destroy(&c.p);
        inputs_destroy(&c.in);
        for (int i = 0; i < 64; i++)
            free(c.argv_storage[i]);
        case_count++;
    }
    closedir(cases);
    ck_assert_msg(case_count >= 40 && file_count >= 500, "only %d cases, %d files", case_count,
                  file_count);
    printf("oracle: %d cases, %d stage files, worst scaled difference %.3g\n", case_count,
           file_count, worst);
}
END_TEST

static Suite *
oracle_suite(void)
{
    Suite *s = suite_create("oracle");
    TCase *tc = tcase_create("pytorch");

    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, every_case_agrees_with_pytorch);
    suite_add_tcase(s, tc);
    return s;
}

TEST_MAIN(oracle_suite)
