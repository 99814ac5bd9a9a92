/* export.c: stages and parameters as CSV files (see export.h). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/files/csvio.h"
#include "attnscope/pipeline/export.h"
#include "attnscope/files/fileio.h"
#include "attnscope/files/fileio_batch.h"

void
export_file_name(enum pipeline_stage s, int head, char *buf, size_t size)
{
    if (pipeline_stage_per_head(s))
        snprintf(buf, size, "%s.h%d.csv", pipeline_stage_name(s), head);
    else
        snprintf(buf, size, "%s.csv", pipeline_stage_name(s));
}

static enum attn_status
write_matrix(struct fileio_batch *b, const char *name, const struct matrix *m,
             struct csvio_labels rows, struct csvio_labels cols, struct attn_error *err)
{
    FILE *f;
    enum attn_status st = fileio_batch_open(b, name, &f, err);

    if (st != ATTN_OK)
        return st;
    csvio_write_matrix(f, m, rows, cols);
    return fileio_batch_close(b, err);
}

enum attn_status
export_write_view(struct fileio_batch *b, const struct pipeline_view *v, enum pipeline_stage s,
                  int head, const char *folder, struct attn_error *err)
{
    struct csvio_labels rows;
    struct csvio_labels cols;
    char name[64];
    char path[96];

    rows.names = v->row_labels;
    rows.prefix = NULL;
    cols.names = v->col_labels;
    cols.prefix = "d";
    export_file_name(s, head, name, sizeof name);
    snprintf(path, sizeof path, "%s%s%s", folder != NULL ? folder : "", folder != NULL ? "/" : "",
             name);
    return write_matrix(b, path, &v->m, rows, cols, err);
}

void
export_heads_of(const struct pipeline *p, enum pipeline_stage s, int head, int *first, int *last)
{
    *first = head < 0 ? 0 : head;
    *last = head >= 0 ? head : pipeline_stage_heads(p, s) - 1;
}

enum attn_status
export_write_stage(struct fileio_batch *b, const struct pipeline *p, enum pipeline_stage s, int head,
               const char *folder, struct attn_error *err)
{
    int first, last;

    export_heads_of(p, s, head, &first, &last);
    for (int h = first; h <= last; h++) {
        struct pipeline_view v;
        enum attn_status st;

        pipeline_stage_view(p, s, h, &v);
        st = export_write_view(b, &v, s, h, folder, err);
        if (st != ATTN_OK)
            return st;
    }
    return ATTN_OK;
}

static enum attn_status
write_stage(struct fileio_batch *b, const struct pipeline *p, enum pipeline_stage s, int head,
            struct attn_error *err)
{
    return export_write_stage(b, p, s, head, NULL, err);
}

/* name: a sentence's tokens, their positions and whether their vectors were made up. */
static enum attn_status
write_tokens(struct fileio_batch *b, const char *name, const struct token_list *tl,
             const unsigned char *made_up, struct attn_error *err)
{
    FILE *f;
    enum attn_status st = fileio_batch_open(b, name, &f, err);

    if (st != ATTN_OK)
        return st;
    fputs("token,position,source\n", f);
    for (int t = 0; t < tl->count; t++) {
        csvio_write_field(f, tl->text[t]);
        fprintf(f, ",%d,%s\n", t, made_up[t] ? "made-up" : "vocabulary");
    }
    return fileio_batch_close(b, err);
}

/* The sentence's own vocabulary: each distinct token once, made-up ones too. */
static enum attn_status
write_vocabulary(struct fileio_batch *b, const struct pipeline *p, struct attn_error *err)
{
    FILE *f;
    char value[32];
    enum attn_status st = fileio_batch_open(b, "vocabulary.csv", &f, err);

    if (st != ATTN_OK)
        return st;
    fputs("token", f);
    for (int j = 0; j < p->d_in; j++)
        fprintf(f, ",d%d", j);
    fputc('\n', f);
    for (int t = 0; t < p->tokens.count; t++) {
        int seen = 0;
        for (int u = 0; u < t && !seen; u++)
            seen = strcmp(p->tokens.text[u], p->tokens.text[t]) == 0;
        if (seen)
            continue;
        csvio_write_field(f, p->tokens.text[t]);
        for (int j = 0; j < p->d_in; j++) {
            csvio_format_value(value, sizeof value, MAT_AT(&p->embeddings, t, j));
            fprintf(f, ",%s", value);
        }
        fputc('\n', f);
    }
    return fileio_batch_close(b, err);
}

static enum attn_status
write_keep(struct fileio_batch *b, const struct pipeline *p, struct attn_error *err)
{
    const struct attention_stages *st = &p->st;
    /* The notes' dropout keeps output values (one file), the others' weights (one per head). */
    const bool output = st->shape.dropout_output;
    const int files = output ? 1 : st->shape.heads;
    struct matrix m;
    enum attn_status status =
        matrix_create(&m, st->nq, output ? st->shape.d_output : st->nk, err);

    if (status != ATTN_OK)
        return status;
    for (int h = 0; h < files && status == ATTN_OK; h++) {
        const unsigned char *keep = st->keep + (size_t)h * matrix_size(&m);
        struct csvio_labels rows = { p->query_labels, NULL };
        struct csvio_labels cols = { output ? NULL : p->key_labels, "d" };
        char name[32];
        for (size_t e = 0; e < matrix_size(&m); e++)
            m.data[e] = keep[e] ? 1.0f : 0.0f;
        if (output)
            snprintf(name, sizeof name, "keep.output.csv");
        else
            snprintf(name, sizeof name, "keep.h%d.csv", h);
        status = write_matrix(b, name, &m, rows, cols, err);
    }
    matrix_destroy(&m);
    return status;
}

static enum attn_status
write_param(struct fileio_batch *b, const struct param *pa, struct attn_error *err)
{
    struct csvio_labels rows = { NULL, "r" };
    struct csvio_labels cols = { NULL, "c" };
    char name[PARAM_NAME_MAX + 8];

    snprintf(name, sizeof name, "%s.csv", pa->name);
    return write_matrix(b, name, &pa->m, rows, cols, err);
}

static enum attn_status
write_params(struct fileio_batch *b, const struct pipeline *p, struct attn_error *err)
{
    if (p->params.count > 0) {
        /* The folder describes its weights, so --weights needs no options to read them. */
        struct params_model m;
        FILE *f;
        enum attn_status st = fileio_batch_open(b, "model.csv", &f, err);
        if (st != ATTN_OK)
            return st;
        params_model_of(&p->cfg, p->d_in, &m);
        params_model_write(f, &m);
        st = fileio_batch_close(b, err);
        if (st != ATTN_OK)
            return st;
    }
    for (int i = 0; i < p->params.count; i++) {
        enum attn_status st = write_param(b, &p->params.p[i], err);
        if (st != ATTN_OK)
            return st;
    }
    return ATTN_OK;
}

enum attn_status
export_finish(struct fileio_batch *b, enum attn_status st, int *written, struct attn_error *err)
{
    int count = b->count;

    if (st != ATTN_OK) {
        fileio_batch_abort(b);
        return st;
    }
    st = fileio_batch_commit(b, err);
    if (st == ATTN_OK && written != NULL)
        *written = count;
    return st;
}

enum attn_status
export_all(const struct pipeline *p, const char *dir, int *written, struct attn_error *err)
{
    struct fileio_batch b;
    enum attn_status st = fileio_batch_begin(&b, dir, err);

    if (written != NULL)
        *written = 0;
    if (st != ATTN_OK)
        return st;
    if (!p->qkv_given) {
        st = write_tokens(&b, "tokens.csv", &p->tokens, p->made_up, err);
        if (st == ATTN_OK && p->cfg.cross)
            st = write_tokens(&b, "source-tokens.csv", &p->source_tokens, p->source_made_up, err);
        if (st == ATTN_OK)
            st = write_vocabulary(&b, p, err);
    }
    for (int s = 0; s < STAGE_COUNT && st == ATTN_OK; s++)
        if (pipeline_stage_present(p, (enum pipeline_stage)s))
            st = write_stage(&b, p, (enum pipeline_stage)s, -1, err);
    if (st == ATTN_OK && p->st.dropout_on)
        st = write_keep(&b, p, err);
    if (st == ATTN_OK)
        st = write_params(&b, p, err);
    return export_finish(&b, st, written, err);
}

enum attn_status
export_stage(const struct pipeline *p, enum pipeline_stage s, const char *dir, int *written,
             struct attn_error *err)
{
    struct fileio_batch b;
    enum attn_status st = fileio_batch_begin(&b, dir, err);

    if (written != NULL)
        *written = 0;
    if (st != ATTN_OK)
        return st;
    st = write_stage(&b, p, s, -1, err);
    return export_finish(&b, st, written, err);
}

enum attn_status
export_selection(const struct pipeline *p, const struct pipeline_selection *sel, int count,
                 const char *dir, int *written, struct attn_error *err)
{
    struct fileio_batch b;
    enum attn_status st = fileio_batch_begin(&b, dir, err);

    if (written != NULL)
        *written = 0;
    if (st != ATTN_OK)
        return st;
    for (int i = 0; i < count && st == ATTN_OK; i++)
        st = sel[i].param != NULL ? write_param(&b, sel[i].param, err)
                                  : write_stage(&b, p, sel[i].stage, sel[i].head, err);
    return export_finish(&b, st, written, err);
}

