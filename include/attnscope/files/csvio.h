/*
 * csvio.h: reading and writing attnscope's CSV files through libcsv.
 *
 * Reading is two steps: csvio_read_table() parses a whole file into a
 * rectangular table of text cells (refusing ragged rows, malformed quoting,
 * binary data and files past the limits below), then csvio_table_matrix()
 * turns a block of it into floats, refusing anything that is not a finite
 * number.  Every message names the file, the row (the line the record starts
 * on, as an editor or spreadsheet numbers it) and the column (from 1).
 */
#ifndef ATTNSCOPE_CSVIO_H
#define ATTNSCOPE_CSVIO_H

#include <stddef.h>
#include <stdio.h>

#include "attnscope/kernels/matrix.h"
#include "attnscope/base/status.h"

/* Documented limits, enforced while reading, before anything grows past them. */
#define CSVIO_MAX_FILE_BYTES (256u << 20)
#define CSVIO_MAX_ROWS 1000000
#define CSVIO_MAX_COLS 65536
#define CSVIO_MAX_CELLS 50000000

struct csvio_table {
    char *path;    /* the file, for messages */
    int rows;
    int cols;
    char *text;    /* every cell's bytes, each NUL-terminated */
    size_t *cell;  /* (rows, cols) offsets into text */
    int *line;     /* (rows) the line each row starts on, from 1 */
};

/* Parses the CSV file at path.  A UTF-8 byte order mark is skipped. */
enum attn_status csvio_read_table(const char *path, struct csvio_table *t,
                                  struct attn_error *err);
/*
 * The same for a file attnscope found in a folder rather than one the user
 * named (--weights DIR's files): it must be a regular file, so a FIFO there
 * is named, never waited on (a named one, `-e <(...)`, is read as a pipe).
 */
enum attn_status csvio_read_found(const char *path, struct csvio_table *t,
                                  struct attn_error *err);

/* Parses len bytes of CSV text at buf; name stands for the file in messages. */
enum attn_status csvio_parse_table(const char *name, const char *buf, size_t len,
                                   struct csvio_table *t, struct attn_error *err);
void csvio_table_destroy(struct csvio_table *t);

static inline const char *
csvio_cell(const struct csvio_table *t, int row, int col)
{
    return t->text + t->cell[(size_t)row * (size_t)t->cols + (size_t)col];
}

/*
 * Parses text as a finite float32 (surrounding spaces allowed).  On failure
 * the message names path, the row (line) and the column (from 1).
 */
enum attn_status csvio_parse_value(const char *path, int line, int col,
                                   const char *text, float *out,
                                   struct attn_error *err);

/*
 * 1 when t's first row is a header, 0 when it is data: only the first row
 * can be one, and only when none of its cells from col0 on is a number (so
 * a token called "token" or a label row of numbers is never lost).
 */
int csvio_header_rows(const struct csvio_table *t, int col0);

/*
 * The block of t from (row0, col0) to its end as a new matrix the caller
 * owns.
 */
enum attn_status csvio_table_matrix(const struct csvio_table *t, int row0, int col0,
                                    struct matrix *m, struct attn_error *err);

/*
 * Labels of a written table: names[i] when names is not NULL, otherwise
 * prefix followed by the index ("d0", "d1", ...).
 */
struct csvio_labels {
    const char *const *names;
    const char *prefix;
};

/*
 * Writes m in attnscope's layout: a header row (an empty cell, then the column
 * labels), then one row per matrix row (its label, then the values printed
 * with 9 significant digits; -inf is written -inf).  Returns ATTN_EIO if the
 * stream fails; the caller names the file.
 */
enum attn_status csvio_write_matrix(FILE *f, const struct matrix *m,
                                    struct csvio_labels rows, struct csvio_labels cols);

/* Writes one field, quoting it only when CSV needs it. */
void csvio_write_field(FILE *f, const char *text);

/* Formats a value as the CSV writer does (%.9g; -inf, inf, nan). */
void csvio_format_value(char *buf, size_t size, float v);

#endif
