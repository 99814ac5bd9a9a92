/*
 * csvio.c: CSV tables through libcsv (see csvio.h).
 *
 * The file is read whole (it is bounded by CSVIO_MAX_FILE_BYTES) and fed to
 * libcsv one line at a time, so that the callbacks always know which line
 * they are on and every message can name it.
 */
#include "config.h"

#include <csv.h>
#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/files/csvio.h"
#include "attnscope/files/fileio.h"

struct reader {
    struct csvio_table *t;
    struct attn_error *err;
    int failed;
    int line;       /* the line being fed, from 1 */
    int rec_line;   /* the line the current record started on */
    int in_record;  /* a record has begun and not yet ended */
    int fields;     /* fields seen in the current record */
    size_t text_len;
    size_t text_cap;
    size_t cells;   /* cell offsets stored */
    size_t cell_cap;
    int line_cap;
};

static int
reserve(void **p, size_t *cap, size_t need, size_t elem)
{
    size_t n = *cap ? *cap : 64;
    void *bigger;

    if (need <= *cap)
        return 0;
    while (n < need)
        n *= 2;
    bigger = realloc(*p, n * elem);
    if (bigger == NULL)
        return -1;
    *p = bigger;
    *cap = n;
    return 0;
}

static void
reader_fail_nomem(struct reader *rd)
{
    rd->failed = 1;
    attn_fail(rd->err, ATTN_ENOMEM, "%s: out of memory", rd->t->path);
}

/* libcsv calls this at the end of every field; data is the parser's buffer. */
static void
on_field(void *data, size_t len, void *user)
{
    struct reader *rd = user;
    struct csvio_table *t = rd->t;

    if (rd->failed)
        return;
    if (!rd->in_record) {
        rd->rec_line = rd->line;
        rd->in_record = 1;
    }
    rd->fields++;
    if (rd->fields > CSVIO_MAX_COLS) {
        rd->failed = 1;
        attn_fail(rd->err, ATTN_ELIMIT, "%s: row %d: more than %d columns, attnscope's limit",
                  t->path, rd->rec_line, CSVIO_MAX_COLS);
        return;
    }
    /* Cells past the first row's width are counted, not kept: the row is ragged. */
    if (t->rows > 0 && rd->fields > t->cols)
        return;
    if (rd->cells + 1 > CSVIO_MAX_CELLS) {
        rd->failed = 1;
        attn_fail(rd->err, ATTN_ELIMIT, "%s: row %d: more than %d cells, attnscope's limit",
                  t->path, rd->rec_line, CSVIO_MAX_CELLS);
        return;
    }
    if (reserve((void **)&t->text, &rd->text_cap, rd->text_len + len + 1, 1) != 0 ||
        reserve((void **)&t->cell, &rd->cell_cap, rd->cells + 1, sizeof *t->cell) != 0) {
        reader_fail_nomem(rd);
        return;
    }
    memcpy(t->text + rd->text_len, data, len);
    t->text[rd->text_len + len] = '\0';
    t->cell[rd->cells++] = rd->text_len;
    rd->text_len += len + 1;
}

/* libcsv calls this at the end of every record. */
static void
on_record(int c, void *user)
{
    struct reader *rd = user;
    struct csvio_table *t = rd->t;
    size_t lines;

    (void)c;
    if (rd->failed)
        return;
    if (t->rows == 0) {
        t->cols = rd->fields;
    } else if (rd->fields != t->cols) {
        rd->failed = 1;
        attn_fail(rd->err, ATTN_EPARSE,
                  "%s: row %d has %d column%s, but row %d has %d: every row needs the same number",
                  t->path, rd->rec_line, rd->fields, rd->fields == 1 ? "" : "s",
                  t->line[0], t->cols);
        return;
    }
    if (t->rows >= CSVIO_MAX_ROWS) {
        rd->failed = 1;
        attn_fail(rd->err, ATTN_ELIMIT, "%s: more than %d rows, attnscope's limit",
                  t->path, CSVIO_MAX_ROWS);
        return;
    }
    lines = (size_t)rd->line_cap;
    if (reserve((void **)&t->line, &lines, (size_t)t->rows + 1, sizeof *t->line) != 0) {
        reader_fail_nomem(rd);
        return;
    }
    rd->line_cap = (int)lines;
    t->line[t->rows++] = rd->rec_line;
    rd->fields = 0;
    rd->in_record = 0;
}

static enum attn_status
parse_error(struct reader *rd, struct csv_parser *p)
{
    int code = csv_error(p);

    if (code == CSV_EPARSE)
        return attn_fail(rd->err, ATTN_EPARSE,
                         "%s: row %d: malformed quoting (a quote inside an unquoted field, "
                         "text after a closing quote, or a quote never closed)",
                         rd->t->path, rd->line);
    if (code == CSV_ENOMEM || code == CSV_ETOOBIG)
        return attn_fail(rd->err, ATTN_ENOMEM, "%s: row %d: a field too large to read",
                         rd->t->path, rd->line);
    return attn_fail(rd->err, ATTN_EPARSE, "%s: row %d: %s", rd->t->path, rd->line,
                     csv_strerror(code));
}

/* Whether the len bytes at s are only spaces, tabs and line ends (s need not end in NUL). */
static int
all_blank(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\n')
            return 0;
    return 1;
}

static enum attn_status
parse_buffer(struct reader *rd, const char *buf, size_t len)
{
    struct csv_parser p;
    size_t pos = 0;
    enum attn_status st = ATTN_OK;

    if (csv_init(&p, CSV_STRICT | CSV_STRICT_FINI | CSV_APPEND_NULL) != 0)
        return attn_fail(rd->err, ATTN_ENOMEM, "%s: out of memory", rd->t->path);
    rd->line = 1;
    while (pos < len && !rd->failed) {
        const char *nl = memchr(buf + pos, '\n', len - pos);
        size_t chunk = nl ? (size_t)(nl - (buf + pos)) + 1 : len - pos;
        /* A record starts on the first line with something on it. */
        if (!rd->in_record && !all_blank(buf + pos, chunk)) {
            rd->rec_line = rd->line;
            rd->in_record = 1;
        }
        if (csv_parse(&p, buf + pos, chunk, on_field, on_record, rd) != chunk) {
            st = parse_error(rd, &p);
            break;
        }
        pos += chunk;
        if (nl != NULL)
            rd->line++;
    }
    if (st == ATTN_OK && !rd->failed && csv_fini(&p, on_field, on_record, rd) != 0) {
        if (csv_error(&p) == CSV_EPARSE)
            st = attn_fail(rd->err, ATTN_EPARSE,
                           "%s: row %d: a quoted field is never closed (the file ends inside it)",
                           rd->t->path, rd->rec_line);
        else
            st = parse_error(rd, &p);
    }
    csv_free(&p);
    if (st == ATTN_OK && rd->failed)
        st = rd->err != NULL ? rd->err->status : ATTN_EPARSE;
    return st;
}

enum attn_status
csvio_parse_table(const char *name, const char *buf, size_t len, struct csvio_table *t,
                  struct attn_error *err)
{
    struct reader rd;
    const char *nul;
    enum attn_status st;

    memset(t, 0, sizeof *t);
    if (len > CSVIO_MAX_FILE_BYTES)
        return attn_fail(err, ATTN_ELIMIT, "%s: larger than %u MiB; attnscope reads CSV files "
                         "up to that size", name, CSVIO_MAX_FILE_BYTES >> 20);
    t->path = strdup(name);
    if (t->path == NULL)
        return attn_fail(err, ATTN_ENOMEM, "out of memory");
    if (len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0) {
        buf += 3;
        len -= 3;
    }
    nul = memchr(buf, '\0', len);
    if (nul != NULL) {
        int line = 1;
        for (const char *c = buf; c < nul; c++)
            line += *c == '\n';
        st = attn_fail(err, ATTN_EPARSE, "%s: row %d: binary data (a NUL byte); expected CSV text",
                       name, line);
        csvio_table_destroy(t);
        return st;
    }
    memset(&rd, 0, sizeof rd);
    rd.t = t;
    rd.err = err;
    st = parse_buffer(&rd, buf, len);
    if (st == ATTN_OK && t->rows == 0)
        st = attn_fail(err, ATTN_EPARSE, "%s: the file is empty", name);
    if (st != ATTN_OK)
        csvio_table_destroy(t);
    return st;
}

static enum attn_status
read_table(const char *path, bool found, struct csvio_table *t, struct attn_error *err)
{
    char *buf;
    size_t len;
    enum attn_status st;

    memset(t, 0, sizeof *t);
    st = found ? fileio_read_regular(path, CSVIO_MAX_FILE_BYTES, &buf, &len, err)
               : fileio_read_all(path, CSVIO_MAX_FILE_BYTES, &buf, &len, err);
    if (st != ATTN_OK)
        return st;
    st = csvio_parse_table(path, buf, len, t, err);
    free(buf);
    return st;
}

enum attn_status
csvio_read_table(const char *path, struct csvio_table *t, struct attn_error *err)
{
    return read_table(path, false, t, err);
}

enum attn_status
csvio_read_found(const char *path, struct csvio_table *t, struct attn_error *err)
{
    return read_table(path, true, t, err);
}

void
csvio_table_destroy(struct csvio_table *t)
{
    if (t == NULL)
        return;
    free(t->path);
    free(t->text);
    free(t->cell);
    free(t->line);
    memset(t, 0, sizeof *t);
}

int
csvio_header_rows(const struct csvio_table *t, int col0)
{
    float v;

    if (t->rows < 1 || t->cols <= col0)
        return 0;
    for (int j = col0; j < t->cols; j++)
        if (csvio_parse_value(t->path, t->line[0], j + 1, csvio_cell(t, 0, j), &v, NULL) == ATTN_OK)
            return 0;
    return 1;
}

enum attn_status
csvio_parse_value(const char *path, int line, int col, const char *text, float *out,
                  struct attn_error *err)
{
    size_t len;
    char *end;
    double d;
    /* Quoted in messages whole when short, else its first 40 bytes and "...". */
#define CELL_QUOTE(len) (len) > 60 ? 40 : (int)(len), text, (len) > 60 ? "..." : ""

    while (*text == ' ' || *text == '\t')
        text++;
    len = strlen(text);
    while (len > 0 && (text[len - 1] == ' ' || text[len - 1] == '\t' || text[len - 1] == '\r'))
        len--;
    if (len == 0)
        return attn_fail(err, ATTN_EPARSE, "%s: row %d, column %d: empty; expected a number",
                         path, line, col);
    /* In place, however long: 1e0 written with 200 zeros is still a number. */
    errno = 0;
    d = isspace((unsigned char)text[0]) ? 0.0 : strtod(text, &end);
    if (isspace((unsigned char)text[0]) || end != text + len)
        return attn_fail(err, ATTN_EPARSE, "%s: row %d, column %d: '%.*s%s' is not a number", path,
                         line, col, CELL_QUOTE(len));
    if (!isfinite(d))
        return attn_fail(err, ATTN_EVALUE, "%s: row %d, column %d: '%.*s%s' is not a finite number",
                         path, line, col, CELL_QUOTE(len));
    if (fabs(d) > FLT_MAX)
        return attn_fail(err, ATTN_EVALUE,
                         "%s: row %d, column %d: '%.*s%s' is beyond the float32 range (|x| <= %g)",
                         path, line, col, CELL_QUOTE(len), (double)FLT_MAX);
#undef CELL_QUOTE
    /* Through double, as torch.tensor() converts a Python float. */
    *out = (float)d;
    return ATTN_OK;
}

enum attn_status
csvio_table_matrix(const struct csvio_table *t, int row0, int col0, struct matrix *m,
                   struct attn_error *err)
{
    enum attn_status st;

    st = matrix_create(m, t->rows - row0, t->cols - col0, err);
    if (st != ATTN_OK)
        return st;
    for (int i = row0; i < t->rows; i++) {
        for (int j = col0; j < t->cols; j++) {
            st = csvio_parse_value(t->path, t->line[i], j + 1, csvio_cell(t, i, j),
                                   &MAT_AT(m, i - row0, j - col0), err);
            if (st != ATTN_OK) {
                matrix_destroy(m);
                return st;
            }
        }
    }
    return ATTN_OK;
}

void
csvio_format_value(char *buf, size_t size, float v)
{
    if (isnan(v))
        snprintf(buf, size, "nan");
    else if (isinf(v))
        snprintf(buf, size, v < 0 ? "-inf" : "inf");
    else
        snprintf(buf, size, "%.9g", (double)v);
}

void
csvio_write_field(FILE *f, const char *text)
{
    size_t len = strlen(text);

    if (len > 0 && strpbrk(text, ",\"\r\n") == NULL && text[0] != ' ' && text[len - 1] != ' ') {
        fputs(text, f);
        return;
    }
    csv_fwrite(f, text, len);
}

static void
write_label(FILE *f, struct csvio_labels labels, int i)
{
    if (labels.names != NULL)
        csvio_write_field(f, labels.names[i]);
    else
        fprintf(f, "%s%d", labels.prefix, i);
}

enum attn_status
csvio_write_matrix(FILE *f, const struct matrix *m, struct csvio_labels rows,
                   struct csvio_labels cols)
{
    char value[32];

    for (int j = 0; j < m->cols; j++) {
        fputc(',', f);
        write_label(f, cols, j);
    }
    fputc('\n', f);
    for (int i = 0; i < m->rows; i++) {
        write_label(f, rows, i);
        for (int j = 0; j < m->cols; j++) {
            csvio_format_value(value, sizeof value, MAT_AT(m, i, j));
            fputc(',', f);
            fputs(value, f);
        }
        fputc('\n', f);
    }
    return ferror(f) ? ATTN_EIO : ATTN_OK;
}
