/*
 * matrix.h: the float32 matrix every stage of attnscope is kept in.
 *
 * A struct matrix is a row-major view: rows x cols floats at data.  It owns
 * its data only when it came from matrix_create(); views into a stage arena
 * (see attention.h) are never destroyed on their own.
 */
#ifndef ATTNSCOPE_MATRIX_H
#define ATTNSCOPE_MATRIX_H

#include <stddef.h>

#include "attnscope/base/status.h"

struct matrix {
    int rows;
    int cols;
    float *data; /* (rows, cols), row-major */
};

/* The element at row i, column j. */
#define MAT_AT(m, i, j) ((m)->data[(size_t)(i) * (size_t)(m)->cols + (size_t)(j)])

/* A zero-filled rows x cols matrix that the caller owns (matrix_destroy). */
enum attn_status matrix_create(struct matrix *m, int rows, int cols,
                               struct attn_error *err);
void matrix_destroy(struct matrix *m);

/* A non-owning view of data as rows x cols. */
struct matrix matrix_view(float *data, int rows, int cols);

static inline size_t
matrix_size(const struct matrix *m)
{
    return (size_t)m->rows * (size_t)m->cols;
}

static inline float *
matrix_row(const struct matrix *m, int i)
{
    return m->data + (size_t)i * (size_t)m->cols;
}

#endif
