/* vocab.c: vocabularies and made-up vectors (see vocab.h). */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/files/csvio.h"
#include "attnscope/kernels/rng.h"
#include "attnscope/text/vocab.h"

/* "Your journey starts with one step": the book's 3-dimensional embeddings. */
static const char *const builtin_tokens[] = {
    "Your", "journey", "starts", "with", "one", "step",
};
static const float builtin_vectors[][3] = {
    { 0.43f, 0.15f, 0.89f },
    { 0.55f, 0.87f, 0.66f },
    { 0.57f, 0.85f, 0.64f },
    { 0.22f, 0.58f, 0.33f },
    { 0.77f, 0.25f, 0.10f },
    { 0.05f, 0.80f, 0.55f },
};

static unsigned char
fold(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') ? (unsigned char)(c - 'A' + 'a') : c;
}

/* 64-bit FNV-1a over the ASCII-lower-cased bytes. */
static uint64_t
fold_hash(const char *s)
{
    uint64_t h = UINT64_C(14695981039346656037);

    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        h ^= fold(*p);
        h *= UINT64_C(1099511628211);
    }
    return h;
}

static int
fold_equal(const char *a, const char *b)
{
    const unsigned char *p = (const unsigned char *)a;
    const unsigned char *q = (const unsigned char *)b;

    while (*p && fold(*p) == fold(*q)) {
        p++;
        q++;
    }
    return *p == '\0' && *q == '\0';
}

void
vocab_made_up_vector(const char *token, int dim, float *out)
{
    struct rng r;
    uint64_t h = fold_hash(token);

    /* Fold the high half in: the generator keeps only 32 bits of its seed. */
    rng_seed(&r, h ^ (h >> 32));
    rng_uniform_f32(&r, out, (size_t)dim, 0.0, 1.0);
    for (int i = 0; i < dim; i++)
        out[i] = roundf(out[i] * 100.0f) / 100.0f;
}

int
vocab_find(const struct vocab *v, const char *token)
{
    int caseless = -1;
    size_t mask;
    size_t i;

    if (v->slots == 0)
        return -1;
    mask = (size_t)v->slots - 1;
    for (i = (size_t)fold_hash(token) & mask; v->slot[i] != 0; i = (i + 1) & mask) {
        int idx = v->slot[i] - 1;
        if (strcmp(v->token[idx], token) == 0)
            return idx;
        if (caseless < 0 && fold_equal(v->token[idx], token))
            caseless = idx;
    }
    return caseless;
}

/* Builds the hash index; exact duplicates are reported through dup. */
static enum attn_status
build_index(struct vocab *v, int *dup_first, int *dup_second, struct attn_error *err)
{
    int slots = 16;

    while (slots < 2 * v->count)
        slots *= 2;
    v->slot = calloc((size_t)slots, sizeof *v->slot);
    if (v->slot == NULL)
        return attn_fail(err, ATTN_ENOMEM, "out of memory for a vocabulary of %d tokens", v->count);
    v->slots = slots;
    for (int t = 0; t < v->count; t++) {
        size_t mask = (size_t)slots - 1;
        size_t i = (size_t)fold_hash(v->token[t]) & mask;
        for (; v->slot[i] != 0; i = (i + 1) & mask) {
            if (strcmp(v->token[v->slot[i] - 1], v->token[t]) == 0) {
                *dup_first = v->slot[i] - 1;
                *dup_second = t;
                return ATTN_EPARSE;
            }
        }
        v->slot[i] = t + 1;
    }
    return ATTN_OK;
}

static enum attn_status
vocab_alloc(struct vocab *v, const char *source, int count, int dim, struct attn_error *err)
{
    memset(v, 0, sizeof *v);
    v->source = strdup(source);
    v->token = calloc((size_t)count, sizeof *v->token);
    v->vector = calloc((size_t)count * (size_t)dim, sizeof *v->vector);
    if (v->source == NULL || v->token == NULL || v->vector == NULL) {
        vocab_destroy(v);
        return attn_fail(err, ATTN_ENOMEM, "out of memory for a vocabulary of %d tokens", count);
    }
    v->count = count;
    v->dim = dim;
    return ATTN_OK;
}

enum attn_status
vocab_builtin(struct vocab *v, struct attn_error *err)
{
    const int count = (int)(sizeof builtin_tokens / sizeof builtin_tokens[0]);
    enum attn_status st = vocab_alloc(v, "built-in", count, 3, err);
    int d1;
    int d2;

    if (st != ATTN_OK)
        return st;
    for (int t = 0; t < count; t++) {
        v->token[t] = strdup(builtin_tokens[t]);
        if (v->token[t] == NULL) {
            vocab_destroy(v);
            return attn_fail(err, ATTN_ENOMEM, "out of memory");
        }
        memcpy(v->vector + (size_t)t * 3, builtin_vectors[t], sizeof builtin_vectors[t]);
    }
    st = build_index(v, &d1, &d2, err);
    if (st != ATTN_OK)
        vocab_destroy(v);
    return st;
}

/* A vocabulary token must be what the tokenizer would make of it. */
static enum attn_status
check_token(const struct csvio_table *t, int row, const char *text, struct attn_error *err)
{
    struct token_list tl;
    struct attn_error terr;
    int ok;

    if (text[0] == '\0')
        return attn_fail(err, ATTN_EPARSE, "%s: row %d, column 1: the token is empty",
                         t->path, t->line[row]);
    switch (tokenizer_split(text, &tl, &terr)) {
    case ATTN_OK:
        break;
    case ATTN_EVALUE: /* no token at all: only spaces */
        return attn_fail(err, ATTN_EPARSE,
                         "%s: row %d, column 1: the token is only spaces; sentences are split at "
                         "spaces, so no sentence can use it",
                         t->path, t->line[row]);
    default:
        return attn_fail(err, ATTN_EPARSE, "%s: row %d, column 1: %s", t->path, t->line[row],
                         terr.msg);
    }
    ok = tl.count == 1 && strcmp(tl.text[0], text) == 0;
    token_list_destroy(&tl);
    if (!ok)
        return attn_fail(err, ATTN_EPARSE,
                         "%s: row %d, column 1: '%s' is not one token (a word, or one punctuation mark)",
                         t->path, t->line[row], text);
    return ATTN_OK;
}

enum attn_status
vocab_load_csv(struct vocab *v, const char *path, struct attn_error *err)
{
    struct csvio_table t;
    enum attn_status st;

    memset(v, 0, sizeof *v);
    st = csvio_read_table(path, &t, err);
    if (st != ATTN_OK)
        return st;
    st = vocab_from_table(v, &t, err);
    csvio_table_destroy(&t);
    return st;
}

enum attn_status
vocab_from_table(struct vocab *v, const struct csvio_table *tp, struct attn_error *err)
{
    const struct csvio_table t = *tp;
    const char *path = t.path;
    struct matrix m;
    enum attn_status st;
    int header;
    int d1 = 0;
    int d2 = 0;

    memset(v, 0, sizeof *v);
    header = csvio_header_rows(&t, 1);
    if (t.cols < 2) {
        st = attn_fail(err, ATTN_EPARSE,
                       "%s: row %d has 1 column; a vocabulary row is token,v1,...,vd", path,
                       t.line[0]);
        goto out;
    }
    if (t.cols - 1 > VOCAB_MAX_DIM) {
        st = attn_fail(err, ATTN_ELIMIT, "%s: %d dimensions; attnscope's limit is %d", path,
                       t.cols - 1, VOCAB_MAX_DIM);
        goto out;
    }
    if (t.rows - header == 0) {
        st = attn_fail(err, ATTN_EPARSE, "%s: a header row and no tokens", path);
        goto out;
    }
    st = csvio_table_matrix(&t, header, 1, &m, err);
    if (st != ATTN_OK)
        goto out;
    st = vocab_alloc(v, path, t.rows - header, t.cols - 1, err);
    if (st != ATTN_OK) {
        matrix_destroy(&m);
        goto out;
    }
    memcpy(v->vector, m.data, matrix_size(&m) * sizeof(float));
    matrix_destroy(&m);
    for (int i = header; i < t.rows; i++) {
        const char *text = csvio_cell(&t, i, 0);
        st = check_token(&t, i, text, err);
        if (st != ATTN_OK)
            goto fail;
        v->token[i - header] = strdup(text);
        if (v->token[i - header] == NULL) {
            st = attn_fail(err, ATTN_ENOMEM, "out of memory");
            goto fail;
        }
    }
    st = build_index(v, &d1, &d2, err);
    if (st == ATTN_EPARSE)
        st = attn_fail(err, ATTN_EPARSE, "%s: row %d, column 1: '%s' is already on row %d",
                       path, t.line[d2 + header], v->token[d2], t.line[d1 + header]);
    if (st == ATTN_OK)
        goto out;
fail:
    vocab_destroy(v);
out:
    return st;
}

void
vocab_destroy(struct vocab *v)
{
    if (v == NULL)
        return;
    if (v->token != NULL)
        for (int t = 0; t < v->count; t++)
            free(v->token[t]);
    free(v->token);
    free(v->vector);
    free(v->slot);
    free(v->source);
    memset(v, 0, sizeof *v);
}

void
vocab_embed(const struct vocab *v, const struct token_list *tokens, struct matrix *out,
            unsigned char *made_up)
{
    for (int t = 0; t < tokens->count; t++) {
        int idx = vocab_find(v, tokens->text[t]);
        float *row = matrix_row(out, t);
        if (idx >= 0) {
            memcpy(row, v->vector + (size_t)idx * (size_t)v->dim, (size_t)v->dim * sizeof(float));
            made_up[t] = 0;
        } else {
            vocab_made_up_vector(tokens->text[t], v->dim, row);
            made_up[t] = 1;
        }
    }
}

enum attn_status
vocab_write_csv(FILE *f, const struct vocab *v)
{
    struct matrix m = matrix_view(v->vector, v->count, v->dim);
    struct csvio_labels rows = { (const char *const *)v->token, NULL };
    struct csvio_labels cols = { NULL, "d" };

    /* csvio_write_matrix leaves the first header cell empty; ours says "token". */
    fputs("token", f);
    return csvio_write_matrix(f, &m, rows, cols);
}
