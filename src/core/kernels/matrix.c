/* matrix.c: creation and views of struct matrix (see matrix.h). */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "attnscope/kernels/matrix.h"
#include "attnscope/kernels/rowops.h"

enum attn_status
matrix_create(struct matrix *m, int rows, int cols, struct attn_error *err)
{
    m->rows = 0;
    m->cols = 0;
    m->stride = 0;
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
    m->stride = cols;
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
    m->stride = 0;
}

struct matrix
matrix_view(float *data, int rows, int cols)
{
    return matrix_view_strided(data, rows, cols, cols);
}

struct matrix
matrix_view_strided(float *data, int rows, int cols, int stride)
{
    struct matrix m = { rows, cols, data, stride };
    return m;
}

struct matrix
matrix_top(const struct matrix *m, int rows)
{
    return matrix_view_strided(m->data, rows, m->cols, m->stride);
}

void
matrix_range(const struct matrix *m, float *lo, float *hi)
{
    *lo = INFINITY;
    *hi = -INFINITY;
    if (matrix_contiguous(m)) {
        rowops_range(m->data, matrix_size(m), lo, hi);
        return;
    }
    for (int i = 0; i < m->rows; i++) {
        float a, b;
        rowops_range(matrix_row(m, i), (size_t)m->cols, &a, &b);
        *lo = a < *lo ? a : *lo;
        *hi = b > *hi ? b : *hi;
    }
}

int
matrix_nonfinite(const struct matrix *m)
{
    int odd = 0;

    if (matrix_contiguous(m))
        return rowops_nonfinite(m->data, matrix_size(m));
    for (int i = 0; i < m->rows; i++)
        odd |= rowops_nonfinite(matrix_row(m, i), (size_t)m->cols);
    return odd;
}
