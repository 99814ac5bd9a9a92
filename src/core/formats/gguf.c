/* gguf.c: reading and checking a GGUF file (see gguf.h). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attnscope/files/fileio.h"
#include "attnscope/formats/gguf.h"

/* ------------------------------------------------------- the ggml types */

/*
 * ggml's types by number (ggml.h's enum ggml_type): the name, and for the
 * ones attnscope reads their dtype; the rest are named when refused.
 */
static const struct {
    const char *name;
    int dtype; /* enum tensor_dtype, or -1: not read */
} ggml_types[] = {
    [0] = { "F32", TENSOR_F32 },      [1] = { "F16", TENSOR_F16 },
    [2] = { "Q4_0", TENSOR_Q4_0 },    [3] = { "Q4_1", TENSOR_Q4_1 },
    [6] = { "Q5_0", TENSOR_Q5_0 },    [7] = { "Q5_1", TENSOR_Q5_1 },
    [8] = { "Q8_0", TENSOR_Q8_0 },    [9] = { "Q8_1", -1 },
    [10] = { "Q2_K", TENSOR_Q2_K },   [11] = { "Q3_K", TENSOR_Q3_K },
    [12] = { "Q4_K", TENSOR_Q4_K },   [13] = { "Q5_K", TENSOR_Q5_K },
    [14] = { "Q6_K", TENSOR_Q6_K },   [15] = { "Q8_K", -1 },
    [16] = { "IQ2_XXS", -1 },         [17] = { "IQ2_XS", -1 },
    [18] = { "IQ3_XXS", -1 },         [19] = { "IQ1_S", -1 },
    [20] = { "IQ4_NL", -1 },          [21] = { "IQ3_S", -1 },
    [22] = { "IQ2_S", -1 },           [23] = { "IQ4_XS", -1 },
    [24] = { "I8", -1 },              [25] = { "I16", -1 },
    [26] = { "I32", -1 },             [27] = { "I64", -1 },
    [28] = { "F64", -1 },             [29] = { "IQ1_M", -1 },
    [30] = { "BF16", TENSOR_BF16 },   [34] = { "TQ1_0", -1 },
    [35] = { "TQ2_0", -1 },           [39] = { "MXFP4", TENSOR_MXFP4 },
};
#define GGML_TYPES (int)(sizeof ggml_types / sizeof ggml_types[0])

const char *
gguf_ggml_type_name(uint32_t type, char *buf, size_t size)
{
    if (type < (uint32_t)GGML_TYPES && ggml_types[type].name != NULL)
        return ggml_types[type].name;
    snprintf(buf, size, "type %u", type);
    return buf;
}

/* ------------------------------------------------------------ the cursor */

/* Reading the header and metadata front to back through a buffer, never past the file. */
struct cursor {
    const struct gguf *g;
    uint64_t pos;
    unsigned char buf[1 << 16];
    uint64_t buf_at;
    size_t buf_len;
    size_t budget; /* the memory the metadata may still take */
};

static enum attn_status
take(struct cursor *c, void *out, size_t n, const char *what, struct attn_error *err)
{
    unsigned char *to = out;

    if (n > c->g->file_size - c->pos)
        return attn_fail(err, ATTN_EPARSE, "%s: %s (%zu bytes at byte %llu) runs past the end of "
                                           "the file (%llu bytes)",
                         c->g->path, what, n, (unsigned long long)c->pos,
                         (unsigned long long)c->g->file_size);
    while (n > 0) {
        size_t have;
        if (c->pos < c->buf_at || c->pos >= c->buf_at + c->buf_len) {
            const uint64_t left = c->g->file_size - c->pos;
            const size_t want = left < sizeof c->buf ? (size_t)left : sizeof c->buf;
            enum attn_status rc = fileio_pread(c->g->fd, c->g->path, c->buf, want, c->pos, err);
            if (rc != ATTN_OK)
                return rc;
            c->buf_at = c->pos;
            c->buf_len = want;
        }
        have = (size_t)(c->buf_at + c->buf_len - c->pos);
        if (have > n)
            have = n;
        memcpy(to, c->buf + (c->pos - c->buf_at), have);
        to += have;
        c->pos += have;
        n -= have;
    }
    return ATTN_OK;
}

static enum attn_status
take_u32(struct cursor *c, uint32_t *v, const char *what, struct attn_error *err)
{
    unsigned char b[4];
    enum attn_status rc = take(c, b, 4, what, err);

    *v = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
    return rc;
}

static enum attn_status
take_u64(struct cursor *c, uint64_t *v, const char *what, struct attn_error *err)
{
    unsigned char b[8];
    enum attn_status rc = take(c, b, 8, what, err);

    *v = 0;
    for (int k = 7; k >= 0; k--)
        *v = *v << 8 | b[k];
    return rc;
}

/* Memory for the metadata, within the budget. */
static void *
budget_alloc(struct cursor *c, size_t n, struct attn_error *err)
{
    void *p;

    if (n > c->budget) {
        attn_fail(err, ATTN_ELIMIT, "%s: the metadata would take more than %zu MiB", c->g->path,
                  (size_t)(GGUF_META_SLACK + 4 * (size_t)c->g->file_size) >> 20);
        return NULL;
    }
    p = malloc(n > 0 ? n : 1);
    if (p == NULL)
        attn_fail(err, ATTN_ENOMEM, "%s: out of memory for the metadata", c->g->path);
    else
        c->budget -= n;
    return p;
}

/* A GGUF string (a u64 length, then its bytes) into a fresh NUL-ended copy, at most max bytes. */
static enum attn_status
take_string(struct cursor *c, char **s, size_t *len, uint64_t max, const char *what,
            struct attn_error *err)
{
    uint64_t n;
    enum attn_status rc;

    *s = NULL;
    if ((rc = take_u64(c, &n, what, err)) != ATTN_OK)
        return rc;
    if (n > max)
        return attn_fail(err, ATTN_EPARSE, "%s: %s of %llu bytes at byte %llu (at most %llu)",
                         c->g->path, what, (unsigned long long)n, (unsigned long long)c->pos - 8,
                         (unsigned long long)max);
    if (n > c->g->file_size - c->pos)
        return attn_fail(err, ATTN_EPARSE,
                         "%s: %s of %llu bytes at byte %llu runs past the end of the file (%llu "
                         "bytes)",
                         c->g->path, what, (unsigned long long)n, (unsigned long long)c->pos - 8,
                         (unsigned long long)c->g->file_size);
    if ((*s = budget_alloc(c, (size_t)n + 1, err)) == NULL)
        return err->status;
    if ((rc = take(c, *s, (size_t)n, what, err)) != ATTN_OK) {
        free(*s);
        *s = NULL;
        return rc;
    }
    (*s)[n] = '\0';
    if (len != NULL)
        *len = (size_t)n;
    return ATTN_OK;
}

/* ------------------------------------------------------------- metadata */

static const size_t type_sizes[GGUF_TYPES] = { 1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8 };

const char *
gguf_type_name(enum gguf_type type)
{
    static const char *const names[GGUF_TYPES] = { "UINT8",  "INT8",   "UINT16", "INT16",
                                                   "UINT32", "INT32",  "FLOAT32", "BOOL",
                                                   "STRING", "ARRAY",  "UINT64", "INT64",
                                                   "FLOAT64" };
    return (unsigned)type < GGUF_TYPES ? names[type] : "of an unknown type";
}

/* A number of type t (size type_sizes[t]) at b as the entry's i, u and f. */
static void
number_of(enum gguf_type t, const unsigned char *b, int64_t *i, uint64_t *u, double *f)
{
    uint64_t raw = 0;
    const size_t n = type_sizes[t];

    for (size_t k = n; k-- > 0;)
        raw = raw << 8 | b[k];
    *i = 0, *u = 0, *f = 0.0;
    switch (t) {
    case GGUF_U8: case GGUF_U16: case GGUF_U32: case GGUF_U64: case GGUF_BOOL:
        *u = raw;
        *i = raw > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)raw;
        *f = (double)raw;
        break;
    case GGUF_I8:
        *i = (int8_t)raw;
        break;
    case GGUF_I16:
        *i = (int16_t)raw;
        break;
    case GGUF_I32:
        *i = (int32_t)raw;
        break;
    case GGUF_I64:
        memcpy(i, &raw, sizeof *i);
        break;
    case GGUF_F32: {
        uint32_t bits = (uint32_t)raw;
        float v;
        memcpy(&v, &bits, sizeof v);
        *f = v;
        return;
    }
    case GGUF_F64:
        memcpy(f, &raw, sizeof *f);
        return;
    default:
        return;
    }
    if (t == GGUF_I8 || t == GGUF_I16 || t == GGUF_I32 || t == GGUF_I64) {
        *u = *i < 0 ? 0 : (uint64_t)*i;
        *f = (double)*i;
    }
}

/* An array's items into kv (its item type and count read first). */
static enum attn_status
take_array(struct cursor *c, struct gguf_kv *kv, struct attn_error *err)
{
    uint32_t item;
    uint64_t count;
    enum attn_status rc;

    if ((rc = take_u32(c, &item, "an array's type", err)) != ATTN_OK ||
        (rc = take_u64(c, &count, "an array's length", err)) != ATTN_OK)
        return rc;
    if (item == GGUF_ARRAY)
        return attn_fail(err, ATTN_EPARSE, "%s: key '%s' is an array of arrays, which no model's "
                                           "metadata has",
                         c->g->path, kv->key);
    if (item >= GGUF_TYPES)
        return attn_fail(err, ATTN_EPARSE, "%s: key '%s' is an array of type %u (the types are 0-%d)",
                         c->g->path, kv->key, item, GGUF_TYPES - 1);
    kv->item = (enum gguf_type)item;
    /* Each item takes a byte of the file at least (a string 8): the count is bounded by what is left. */
    if (count > (c->g->file_size - c->pos) / (item == GGUF_STRING ? 8 : type_sizes[item]))
        return attn_fail(err, ATTN_EPARSE,
                         "%s: key '%s' says %llu items, more than the rest of the file holds",
                         c->g->path, kv->key, (unsigned long long)count);
    kv->count = (size_t)count;
    if (item == GGUF_STRING) {
        /* (each string NULL until read: a failure part way frees what was read, no more) */
        if ((kv->strs = budget_alloc(c, kv->count * sizeof *kv->strs, err)) == NULL)
            return err->status;
        memset(kv->strs, 0, kv->count * sizeof *kv->strs);
        if ((kv->lens = budget_alloc(c, kv->count * sizeof *kv->lens, err)) == NULL)
            return err->status;
        for (size_t k = 0; k < kv->count; k++)
            if ((rc = take_string(c, &kv->strs[k], &kv->lens[k], c->g->file_size,
                                  "an array's string", err)) != ATTN_OK)
                return rc;
        return ATTN_OK;
    }
    if (item == GGUF_F32 || item == GGUF_F64)
        kv->floats = budget_alloc(c, kv->count * sizeof *kv->floats, err);
    else
        kv->ints = budget_alloc(c, kv->count * sizeof *kv->ints, err);
    if (kv->floats == NULL && kv->ints == NULL)
        return err->status;
    for (size_t k = 0; k < kv->count; k++) {
        unsigned char b[8];
        int64_t i;
        uint64_t u;
        double f;
        if ((rc = take(c, b, type_sizes[item], "an array's item", err)) != ATTN_OK)
            return rc;
        number_of(kv->item, b, &i, &u, &f);
        if (kv->floats != NULL)
            kv->floats[k] = f;
        else
            kv->ints[k] = i;
    }
    return ATTN_OK;
}

static enum attn_status
take_kv(struct cursor *c, struct gguf_kv *kv, struct attn_error *err)
{
    uint32_t type;
    enum attn_status rc;

    if ((rc = take_string(c, &kv->key, NULL, GGUF_KEY_MAX, "a key", err)) != ATTN_OK ||
        (rc = take_u32(c, &type, "a value's type", err)) != ATTN_OK)
        return rc;
    if (type >= GGUF_TYPES)
        return attn_fail(err, ATTN_EPARSE, "%s: key '%s' has value type %u (the types are 0-%d)",
                         c->g->path, kv->key, type, GGUF_TYPES - 1);
    kv->type = (enum gguf_type)type;
    if (kv->type == GGUF_STRING)
        return take_string(c, &kv->str, &kv->len, c->g->file_size, "a string", err);
    if (kv->type == GGUF_ARRAY)
        return take_array(c, kv, err);
    {
        unsigned char b[8];
        if ((rc = take(c, b, type_sizes[kv->type], "a value", err)) != ATTN_OK)
            return rc;
        number_of(kv->type, b, &kv->i, &kv->u, &kv->f);
    }
    return ATTN_OK;
}

static int
by_key(const void *a, const void *b)
{
    return strcmp(((const struct gguf_kv *)a)->key, ((const struct gguf_kv *)b)->key);
}

/* -------------------------------------------------------------- tensors */

/* One tensor's info: its name, dimensions (ggml's order: the row first), type and offset. */
static enum attn_status
take_tensor(struct cursor *c, struct tensor_info *t, uint32_t *type, struct attn_error *err)
{
    uint32_t ndim;
    uint64_t ne[TENSOR_NDIM_MAX];
    uint64_t offset;
    char tname[32];
    enum attn_status rc;

    if ((rc = take_string(c, &t->name, NULL, 4096, "a tensor's name", err)) != ATTN_OK ||
        (rc = take_u32(c, &ndim, "a tensor's dimensions", err)) != ATTN_OK)
        return rc;
    if (ndim < 1 || ndim > 4)
        return attn_fail(err, ATTN_EPARSE, "%s: tensor '%s' has %u dimensions (ggml's are 1-4)",
                         c->g->path, t->name, ndim);
    t->ndim = (int)ndim;
    for (uint32_t d = 0; d < ndim; d++)
        if ((rc = take_u64(c, &ne[d], "a tensor's dimension", err)) != ATTN_OK)
            return rc;
    if ((rc = take_u32(c, type, "a tensor's type", err)) != ATTN_OK ||
        (rc = take_u64(c, &offset, "a tensor's offset", err)) != ATTN_OK)
        return rc;
    t->numel = 1;
    for (uint32_t d = 0; d < ndim; d++) {
        /* Shapes as PyTorch writes them: the outermost first. */
        /* (No type packs more than 8 values in a byte: more than that many cannot be in the file.) */
        if (ne[d] > (uint64_t)INT64_MAX ||
            (ne[d] > 0 && t->numel > (c->g->file_size + 1) * 8 / ne[d]))
            return attn_fail(err, ATTN_EPARSE,
                             "%s: tensor '%s' has more values than the file could hold",
                             c->g->path, t->name);
        t->shape[ndim - 1 - d] = (int64_t)ne[d];
        t->numel *= (size_t)ne[d];
    }
    t->begin = (size_t)(offset > c->g->file_size ? c->g->file_size : offset);
    t->end = t->begin;
    if (offset > c->g->file_size)
        return attn_fail(err, ATTN_EPARSE, "%s: tensor '%s' starts at byte %llu of the data, past "
                                           "the end of the file",
                         c->g->path, t->name, (unsigned long long)offset);
    if (*type >= (uint32_t)GGML_TYPES || ggml_types[*type].name == NULL ||
        ggml_types[*type].dtype < 0) {
        char msg[160];
        snprintf(msg, sizeof msg,
                 "is %s, which attnscope does not dequantize (F32, F16, BF16, Q4_0, Q4_1, Q5_0, "
                 "Q5_1, Q8_0, Q2_K ... Q6_K)",
                 gguf_ggml_type_name(*type, tname, sizeof tname));
        t->refused = strdup(msg);
        t->dtype = TENSOR_F32;
        return t->refused != NULL ? ATTN_OK
                                  : attn_fail(err, ATTN_ENOMEM, "%s: out of memory", c->g->path);
    }
    t->dtype = (enum tensor_dtype)ggml_types[*type].dtype;
    {
        size_t per;
        const size_t bytes = tensor_dtype_block(t->dtype, &per);
        if (ne[0] % per != 0)
            return attn_fail(err, ATTN_EPARSE,
                             "%s: tensor '%s' is %s with rows of %llu values: not whole blocks "
                             "of %zu",
                             c->g->path, t->name, ggml_types[*type].name,
                             (unsigned long long)ne[0], per);
        if (t->numel / per > c->g->file_size / bytes)
            return attn_fail(err, ATTN_EPARSE, "%s: tensor '%s' takes more bytes than the file has",
                             c->g->path, t->name);
        t->end = t->begin + t->numel / per * bytes;
    }
    return ATTN_OK;
}

/* By where they start, then where they end. */
static int
by_range(const void *a, const void *b)
{
    const struct tensor_info *x = *(const struct tensor_info *const *)a;
    const struct tensor_info *y = *(const struct tensor_info *const *)b;

    if (x->begin != y->begin)
        return x->begin < y->begin ? -1 : 1;
    return x->end < y->end ? -1 : x->end > y->end;
}

/* The tensors inside the data, aligned, apart from each other. */
static enum attn_status
check_ranges(struct gguf *g, struct attn_error *err)
{
    const uint64_t data = g->file_size - g->data_start;
    const struct tensor_info **order = malloc((size_t)(g->cat.count ? g->cat.count : 1) * sizeof *order);

    if (order == NULL)
        return attn_fail(err, ATTN_ENOMEM, "%s: out of memory", g->path);
    for (int i = 0; i < g->cat.count; i++) {
        const struct tensor_info *t = &g->cat.tensors[i];
        order[i] = t;
        if (t->begin % g->alignment != 0 || t->end > data) {
            free(order);
            if (t->begin % g->alignment != 0)
                return attn_fail(err, ATTN_EPARSE,
                                 "%s: tensor '%s' starts at byte %zu of the data, not a multiple "
                                 "of the alignment %llu",
                                 g->path, t->name, t->begin, (unsigned long long)g->alignment);
            return attn_fail(err, ATTN_EPARSE,
                             "%s: tensor '%s' (bytes %zu-%zu of the data) runs past the end of "
                             "the file (its data is %llu bytes)",
                             g->path, t->name, t->begin, t->end, (unsigned long long)data);
        }
    }
    qsort(order, (size_t)g->cat.count, sizeof *order, by_range);
    for (int i = 1; i < g->cat.count; i++)
        if (order[i]->begin < order[i - 1]->end) {
            enum attn_status rc = attn_fail(err, ATTN_EPARSE,
                                            "%s: tensors '%s' and '%s' overlap (bytes %zu-%zu and "
                                            "%zu-%zu of the data)",
                                            g->path, order[i - 1]->name, order[i]->name,
                                            order[i - 1]->begin, order[i - 1]->end,
                                            order[i]->begin, order[i]->end);
            free(order);
            return rc;
        }
    free(order);
    return ATTN_OK;
}

/* ----------------------------------------------------------------- open */

bool
gguf_magic(const unsigned char head[4])
{
    return memcmp(head, "GGUF", 4) == 0;
}

bool
gguf_file_is(const char *path)
{
    unsigned char head[4];
    struct attn_error ignored;
    int fd;
    bool is;

    if (fileio_open_regular(path, &fd, &ignored) != ATTN_OK)
        return false;
    is = fileio_pread(fd, path, head, sizeof head, 0, &ignored) == ATTN_OK && gguf_magic(head);
    close(fd);
    return is;
}

static enum attn_status
read_header(struct gguf *g, struct cursor *c, struct attn_error *err)
{
    unsigned char magic[4];
    uint64_t n_tensors, n_kv;
    enum attn_status rc;

    if ((rc = take(c, magic, 4, "the magic", err)) != ATTN_OK)
        return rc;
    if (!gguf_magic(magic))
        return attn_fail(err, ATTN_EPARSE, "%s: not a GGUF file (it does not start with 'GGUF')",
                         g->path);
    if ((rc = take_u32(c, &g->version, "the version", err)) != ATTN_OK)
        return rc;
    if (g->version != 2 && g->version != 3)
        return attn_fail(err, ATTN_EPARSE, "%s: GGUF version %u (attnscope reads 2 and 3)", g->path,
                         g->version);
    if ((rc = take_u64(c, &n_tensors, "the tensor count", err)) != ATTN_OK ||
        (rc = take_u64(c, &n_kv, "the key count", err)) != ATTN_OK)
        return rc;
    /* A tensor's info takes 32 bytes at least, a key's 13. */
    if (n_tensors > (g->file_size - c->pos) / 32 || n_tensors > INT32_MAX)
        return attn_fail(err, ATTN_EPARSE, "%s: says %llu tensors, more than the file holds",
                         g->path, (unsigned long long)n_tensors);
    if (n_kv > (g->file_size - c->pos) / 13)
        return attn_fail(err, ATTN_EPARSE, "%s: says %llu keys, more than the file holds", g->path,
                         (unsigned long long)n_kv);
    g->kv = calloc((size_t)(n_kv ? n_kv : 1), sizeof *g->kv);
    g->cat.tensors = calloc((size_t)(n_tensors ? n_tensors : 1), sizeof *g->cat.tensors);
    g->ggml_types = calloc((size_t)(n_tensors ? n_tensors : 1), sizeof *g->ggml_types);
    if (g->kv == NULL || g->cat.tensors == NULL || g->ggml_types == NULL)
        return attn_fail(err, ATTN_ENOMEM, "%s: out of memory", g->path);
    for (uint64_t k = 0; k < n_kv; k++, g->kv_count++)
        if ((rc = take_kv(c, &g->kv[k], err)) != ATTN_OK) {
            g->kv_count++; /* (what it holds is freed) */
            return rc;
        }
    qsort(g->kv, g->kv_count, sizeof *g->kv, by_key);
    for (size_t k = 1; k < g->kv_count; k++)
        if (strcmp(g->kv[k - 1].key, g->kv[k].key) == 0)
            return attn_fail(err, ATTN_EPARSE, "%s: key '%s' is given twice", g->path, g->kv[k].key);
    for (uint64_t k = 0; k < n_tensors; k++, g->cat.count++)
        if ((rc = take_tensor(c, &g->cat.tensors[k], &g->ggml_types[k], err)) != ATTN_OK) {
            g->cat.count++;
            return rc;
        }
    return ATTN_OK;
}

enum attn_status
gguf_open(struct gguf *g, const char *path, struct attn_error *err)
{
    struct stat sb;
    struct cursor *c = NULL;
    int64_t align = 32;
    enum attn_status rc;

    memset(g, 0, sizeof *g);
    g->fd = -1;
    g->alignment = 32;
    if ((g->path = strdup(path)) == NULL)
        return attn_fail(err, ATTN_ENOMEM, "%s: out of memory", path);
    if ((rc = fileio_open_regular(path, &g->fd, err)) != ATTN_OK)
        goto fail;
    if (fstat(g->fd, &sb) != 0) {
        rc = attn_fail(err, ATTN_EIO, "%s: %s", path, strerror(errno));
        goto fail;
    }
    g->file_size = (uint64_t)sb.st_size;
    if ((c = calloc(1, sizeof *c)) == NULL) {
        rc = attn_fail(err, ATTN_ENOMEM, "%s: out of memory", path);
        goto fail;
    }
    c->g = g;
    c->budget = GGUF_META_SLACK + (g->file_size < SIZE_MAX / 8 ? 4 * (size_t)g->file_size : SIZE_MAX / 2);
    if ((rc = read_header(g, c, err)) != ATTN_OK)
        goto fail;
    if (gguf_find(g, "general.alignment") != NULL &&
        (!gguf_int(g, "general.alignment", &align) || align < 1 || align > 1 << 20 ||
         (align & (align - 1)) != 0)) {
        rc = attn_fail(err, ATTN_EPARSE, "%s: general.alignment is not a power of two up to 2^20",
                       path);
        goto fail;
    }
    g->alignment = (uint64_t)align;
    g->data_start = (c->pos + g->alignment - 1) / g->alignment * g->alignment;
    if (g->data_start > g->file_size) {
        rc = attn_fail(err, ATTN_EPARSE, "%s: the data would start past the end of the file", path);
        goto fail;
    }
    if ((rc = check_ranges(g, err)) != ATTN_OK ||
        (rc = tensor_catalogue_index(&g->cat, path, err)) != ATTN_OK)
        goto fail;
    free(c);
    return ATTN_OK;
fail:
    free(c);
    gguf_close(g);
    return rc;
}

static void
kv_free(struct gguf_kv *kv)
{
    free(kv->key);
    free(kv->str);
    free(kv->ints);
    free(kv->floats);
    for (size_t k = 0; kv->strs != NULL && k < kv->count; k++)
        free(kv->strs[k]);
    free(kv->strs);
    free(kv->lens);
}

void
gguf_close(struct gguf *g)
{
    for (size_t k = 0; g->kv != NULL && k < g->kv_count; k++)
        kv_free(&g->kv[k]);
    free(g->kv);
    tensor_catalogue_free(&g->cat);
    free(g->ggml_types);
    if (g->fd >= 0)
        close(g->fd);
    free(g->path);
    memset(g, 0, sizeof *g);
    g->fd = -1;
}

/* ------------------------------------------------------------- lookups */

const struct gguf_kv *
gguf_find(const struct gguf *g, const char *key)
{
    struct gguf_kv probe = { .key = (char *)key };

    return g->kv_count > 0 ? bsearch(&probe, g->kv, g->kv_count, sizeof *g->kv, by_key) : NULL;
}

bool
gguf_int(const struct gguf *g, const char *key, int64_t *v)
{
    const struct gguf_kv *kv = gguf_find(g, key);

    if (kv == NULL || kv->type == GGUF_STRING || kv->type == GGUF_ARRAY || kv->type == GGUF_F32 ||
        kv->type == GGUF_F64 || (kv->type == GGUF_U64 && kv->u > (uint64_t)INT64_MAX))
        return false;
    *v = kv->i;
    return true;
}

bool
gguf_float(const struct gguf *g, const char *key, double *v)
{
    const struct gguf_kv *kv = gguf_find(g, key);

    if (kv == NULL || kv->type == GGUF_STRING || kv->type == GGUF_ARRAY || kv->type == GGUF_BOOL)
        return false;
    *v = kv->f;
    return true;
}

const char *
gguf_string(const struct gguf *g, const char *key)
{
    const struct gguf_kv *kv = gguf_find(g, key);

    return kv != NULL && kv->type == GGUF_STRING ? kv->str : NULL;
}

/* ---------------------------------------------------------------- reads */

static enum attn_status
data_bytes(void *reader, int unit, uint64_t offset, void *buf, size_t len, struct attn_error *err)
{
    const struct gguf *g = reader;

    (void)unit;
    return fileio_pread(g->fd, g->path, buf, len, g->data_start + offset, err);
}

enum attn_status
gguf_read(const struct gguf *g, const struct tensor_info *t, enum tensor_dtype as, void *out,
          struct attn_error *err)
{
    return tensor_read(t, data_bytes, (void *)g, g->path, as, out, err);
}

const char *
gguf_type_mix(const struct gguf *g, char *buf, size_t size)
{
    int count[GGML_TYPES + 1] = { 0 };
    size_t at = 0;

    buf[0] = '\0';
    for (int i = 0; i < g->cat.count; i++)
        count[g->ggml_types[i] < (uint32_t)GGML_TYPES ? g->ggml_types[i] : GGML_TYPES]++;
    for (bool first = true;; first = false) {
        int best = -1;
        char tname[32];
        for (int k = 0; k <= GGML_TYPES; k++)
            if (count[k] > 0 && (best < 0 || count[k] > count[best]))
                best = k;
        if (best < 0)
            break;
        attn_appendf(buf, size, &at, "%s%s %d%s", first ? "" : ", ",
                     best < GGML_TYPES ? gguf_ggml_type_name((uint32_t)best, tname, sizeof tname)
                                       : "other types",
                     count[best], first ? (count[best] == 1 ? " tensor" : " tensors") : "");
        count[best] = 0;
    }
    return buf;
}
