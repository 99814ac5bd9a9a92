/* matrix.c: creation and views of struct matrix (see matrix.h). */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>

#include "attnscope/kernels/matrix.h"

enum attn_status
matrix_create(struct matrix *m, int rows, int cols, struct attn_error *err)
{
    m->rows = 0;
    m->cols = 0;
    m->data = NULL;
    if (rows < 0 || cols < 0)
        return attn_fail(err, ATTN_EVALUE, "matrix of negative size %d x %d", rows, cols);
    if (rows > 0 && (size_t)cols > SIZE_MAX / sizeof(float) / (size_t)rows)
        return attn_fail(err, ATTN_ELIMIT, "a %d x %d matrix does not fit in memory", rows, cols);
    if (rows > 0 && cols > 0) {
        m->data = calloc((size_t)rows * (size_t)cols, sizeof(float));
        if (m->data == NULL)
            return attn_fail(err, ATTN_ENOMEM, "out of memory for a %d x %d matrix", rows, cols);
    }
    m->rows = rows;
    m->cols = cols;
    return ATTN_OK;
}

void
matrix_destroy(struct matrix *m)
{
    if (m == NULL)
        return;
    free(m->data);
    m->data = NULL;
    m->rows = 0;
    m->cols = 0;
}

struct matrix
matrix_view(float *data, int rows, int cols)
{
    struct matrix m = { rows, cols, data };
    return m;
}
