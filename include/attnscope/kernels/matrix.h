/*
 * matrix.h: the float32 matrix every stage of attnscope is kept in.
 *
 * A struct matrix is a row-major view: rows x cols floats at data, row i
 * starting stride floats after row i - 1 (stride == cols but in views with
 * room between rows: a decoder's (n, n) stages keep rows of the run's
 * capacity, so that an appended token writes only its row and column).  It
 * owns its data only when it came from matrix_create(); views into a stage
 * arena (see attention.h) are never destroyed on their own.
 */
#ifndef ATTNSCOPE_MATRIX_H
#define ATTNSCOPE_MATRIX_H

#include <stddef.h>

#include "attnscope/base/status.h"

struct matrix {
    int rows;
    int cols;
    float *data; /* (rows, cols), row-major */
    int stride;  /* floats from one row's start to the next's, >= cols */
};

/* The element at row i, column j. */
#define MAT_AT(m, i, j) ((m)->data[(size_t)(i) * (size_t)(m)->stride + (size_t)(j)])

/* A zero-filled rows x cols matrix that the caller owns (matrix_destroy). */
enum attn_status matrix_create(struct matrix *m, int rows, int cols,
                               struct attn_error *err);
void matrix_destroy(struct matrix *m);

/* A non-owning view of data as rows x cols. */
struct matrix matrix_view(float *data, int rows, int cols);

/* A non-owning view of rows x cols floats whose rows start stride floats apart. */
struct matrix matrix_view_strided(float *data, int rows, int cols, int stride);

/* The first rows rows of m, a view (the same stride). */
struct matrix matrix_top(const struct matrix *m, int rows);

/* The smallest and largest finite elements (lo > hi when there are none). */
void matrix_range(const struct matrix *m, float *lo, float *hi);

/* ROWOPS_NAN and ROWOPS_NEG_INF (rowops.h) for what m holds. */
int matrix_nonfinite(const struct matrix *m);

/* The number of elements, rows x cols (not the floats a strided view spans). */
static inline size_t
matrix_size(const struct matrix *m)
{
    return (size_t)m->rows * (size_t)m->cols;
}

/* Whether the rows follow one another with no room between them. */
static inline int
matrix_contiguous(const struct matrix *m)
{
    return m->stride == m->cols || m->rows <= 1;
}

static inline float *
matrix_row(const struct matrix *m, int i)
{
    return m->data + (size_t)i * (size_t)m->stride;
}

#endif
