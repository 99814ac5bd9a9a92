/* qkv.c: Q, K and V read from CSV files (see qkv.h). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/attention/attention_config.h"
#include "attnscope/attention/qkv.h"
#include "attnscope/base/utf8.h"

static const char *const file_names[3] = { "queries.csv", "keys.csv", "values.csv" };

static enum attn_status
load_one(struct qkv_given *g, const char *dir, int which, struct matrix *m, struct attn_error *err)
{
    char path[4096];
    struct csvio_table *t = &g->table[which];
    enum attn_status st;

    snprintf(path, sizeof path, "%s/%s", dir, file_names[which]);
    st = csvio_read_table(path, t, err);
    if (st != ATTN_OK)
        return st;
    if (t->cols < 2 || t->rows - csvio_header_rows(t, 1) < 1)
        return attn_fail(err, ATTN_EPARSE,
                         "%s: at least one row of a label and values is needed (after an optional "
                         "header row)",
                         path);
    if (t->cols - 1 > ATTN_MAX_DIM)
        return attn_fail(err, ATTN_ELIMIT, "%s: %d value columns; attnscope's limit is %d", path,
                         t->cols - 1, ATTN_MAX_DIM);
    /* Labels are shown on screen and in tables: one line of UTF-8 text each. */
    for (int i = 0; i < t->rows; i++) {
        const char *label = csvio_cell(t, i, 0);
        size_t len = strlen(label);
        if (utf8_text_span((const unsigned char *)label, len, "") < len)
            return attn_fail(err, ATTN_EPARSE,
                             "%s: row %d, column 1: a label must be one line of UTF-8 text "
                             "without control characters",
                             path, t->line[i]);
    }
    return csvio_table_matrix(t, csvio_header_rows(t, 1), 1, m, err);
}

static const char **
labels_of(const struct csvio_table *t)
{
    const int header = csvio_header_rows(t, 1);
    const char **labels = calloc((size_t)t->rows, sizeof *labels);

    if (labels == NULL)
        return NULL;

    for (int i = header; i < t->rows; i++)
        labels[i - header] = csvio_cell(t, i, 0);
    return labels;
}

enum attn_status
qkv_load(struct qkv_given *g, const char *dir, struct attn_error *err)
{
    struct matrix *m[3] = { &g->q, &g->k, &g->v };
    enum attn_status st = ATTN_OK;

    memset(g, 0, sizeof *g);
    for (int w = 0; w < 3 && st == ATTN_OK; w++)
        st = load_one(g, dir, w, m[w], err);
    if (st == ATTN_OK && g->q.cols != g->k.cols)
        st = attn_fail(err, ATTN_ESHAPE,
                       "%s/queries.csv has %d value columns but keys.csv has %d: a query and a key "
                       "need the same length to be multiplied",
                       dir, g->q.cols, g->k.cols);
    if (st == ATTN_OK && g->k.rows != g->v.rows)
        st = attn_fail(err, ATTN_ESHAPE,
                       "%s/keys.csv has %d rows but values.csv has %d: every key needs its value",
                       dir, g->k.rows, g->v.rows);
    if (st == ATTN_OK && g->v.cols != g->k.cols)
        st = attn_fail(err, ATTN_ESHAPE,
                       "%s/values.csv has %d value columns but keys.csv has %d: attnscope needs one "
                       "width for Q, K and V",
                       dir, g->v.cols, g->k.cols);
    if (st == ATTN_OK) {
        g->q_labels = labels_of(&g->table[0]);
        g->k_labels = labels_of(&g->table[1]);
        if (g->q_labels == NULL || g->k_labels == NULL)
            st = attn_fail(err, ATTN_ENOMEM, "out of memory");
    }
    if (st != ATTN_OK)
        qkv_destroy(g);
    return st;
}

void
qkv_destroy(struct qkv_given *g)
{
    matrix_destroy(&g->q);
    matrix_destroy(&g->k);
    matrix_destroy(&g->v);
    free(g->q_labels);
    free(g->k_labels);
    for (int w = 0; w < 3; w++)
        csvio_table_destroy(&g->table[w]);
    memset(g, 0, sizeof *g);
}
