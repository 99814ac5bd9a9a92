/*
 * model_harness.h: what the trained-model test programs share
 * (check_model.c, check_model_files.c): the tiny GPT-2 of
 * tests/fixtures/gpt2/tiny and what PyTorch computes of it, paths made
 * absolute, small files read whole.
 */
#ifndef ATTNSCOPE_MODEL_HARNESS_H
#define ATTNSCOPE_MODEL_HARNESS_H

#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attnscope/families/model/model_export.h"
#include "attnscope/pipeline/export.h"
#include "attnscope/families/model/family_model.h"
#include "attnscope/families/model/headmap.h"
#include "attnscope/models/model.h"
#include "attnscope/files/fileio.h"
#include "attnscope/files/jsonfile.h"
#include "attnscope/pipeline/pipeline.h"
#include "attnscope/base/utf8.h"
#include "expected.h"
#include "testutil.h"

#define TINY "tests/fixtures/gpt2/tiny"

/* Whether every head of per-head stage s holds the same bits in a and b (its rows, whatever their stride). */
static inline bool
same_heads(const struct pipeline *a, const struct pipeline *b, enum pipeline_stage s)
{
    for (int h = 0; h < a->st.shape.heads; h++) {
        struct pipeline_view x, y;
        pipeline_stage_view(a, s, h, &x);
        pipeline_stage_view(b, s, h, &y);
        if (x.m.rows != y.m.rows || x.m.cols != y.m.cols)
            return false;
        for (int i = 0; i < x.m.rows; i++)
            if (memcmp(matrix_row(&x.m, i), matrix_row(&y.m, i), (size_t)x.m.cols * sizeof(float)))
                return false;
    }
    return true;
}


static struct model tiny;
static struct expected want;

/* The tiny model opened, and its expected.txt read. */
static inline void
setup(void)
{
    struct attn_error err;
    char path[4096];

    ck_assert_msg(model_open(&tiny, test_path(TINY), NULL, &err) == ATTN_OK, "%s", err.msg);
    snprintf(path, sizeof path, "%s", test_path(TINY "/expected.txt"));
    expected_load(&want, path);
}


static inline void
teardown(void)
{
    model_close(&tiny);
    free(want.text);
}


/* test_path(rel) made absolute, for symbolic links made elsewhere. */
static inline const char *
absolute(const char *rel)
{
    static char buf[PATH_MAX];

    ck_assert_msg(realpath(test_path(rel), buf) != NULL, "%s is missing", rel);
    return buf;
}


/* Reads a whole small file into buf. */
static inline void
slurp(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "r");
    size_t n;

    ck_assert_msg(f != NULL, "%s is missing", path);
    n = fread(buf, 1, size - 1, f);
    buf[n] = '\0';
    fclose(f);
}


#endif
