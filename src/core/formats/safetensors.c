/* safetensors.c: reading and checking a .safetensors file (see safetensors.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attnscope/files/fileio.h"
#include "attnscope/formats/safetensors.h"

/* The dtypes a safetensors header may name that attnscope reads. */
static const struct {
    const char *name;
    enum tensor_dtype dtype;
} dtypes[] = { { "F32", TENSOR_F32 }, { "F16", TENSOR_F16 }, { "BF16", TENSOR_BF16 },
               { "U8", TENSOR_U8 } };

/* By where they start, then where they end: an empty tensor comes before one that starts there. */
static int
by_range(const void *a, const void *b)
{
    const struct tensor_info *x = a;
    const struct tensor_info *y = b;

    if (x->begin != y->begin)
        return x->begin < y->begin ? -1 : 1;
    return x->end < y->end ? -1 : x->end > y->end;
}

/* One tensor's entry of the header: its dtype, shape and offsets, checked. */
static enum attn_status
parse_tensor(struct safetensors *st, const char *name, json_t *entry, struct tensor_info *t,
             struct attn_error *err)
{
    json_t *dtype = json_object_get(entry, "dtype");
    json_t *shape = json_object_get(entry, "shape");
    json_t *offsets = json_object_get(entry, "data_offsets");
    size_t numel = 1;
    bool empty = false;
    json_int_t begin;
    json_int_t end;
    size_t k;

    if (!json_is_object(entry) || !json_is_string(dtype) || !json_is_array(shape) ||
        !json_is_array(offsets) || json_array_size(offsets) != 2)
        return attn_fail(err, ATTN_EPARSE,
                         "%s: tensor '%s' needs \"dtype\", \"shape\" and \"data_offsets\" "
                         "[begin, end]",
                         st->path, name);
    for (k = 0; k < sizeof dtypes / sizeof dtypes[0]; k++)
        if (strcmp(json_string_value(dtype), dtypes[k].name) == 0)
            break;
    if (k == sizeof dtypes / sizeof dtypes[0])
        return attn_fail(err, ATTN_EPARSE,
                         "%s: tensor '%s' is %s, which attnscope does not read (F32, F16, BF16)",
                         st->path, name, json_string_value(dtype));
    t->dtype = dtypes[k].dtype;
    if (json_array_size(shape) > SAFETENSORS_NDIM_MAX)
        return attn_fail(err, ATTN_ELIMIT, "%s: tensor '%s' has %zu dimensions (at most %d)",
                         st->path, name, json_array_size(shape), SAFETENSORS_NDIM_MAX);
    t->ndim = (int)json_array_size(shape);
    for (int d = 0; d < t->ndim; d++) {
        json_t *n = json_array_get(shape, (size_t)d);
        json_int_t v = json_is_integer(n) ? json_integer_value(n) : -1;
        if (v < 0)
            return attn_fail(err, ATTN_EPARSE,
                             "%s: tensor '%s': dimension %d of its shape is not a count", st->path,
                             name, d);
        t->shape[d] = (int64_t)v;
        if (v == 0)
            empty = true;
    }
    for (int d = 0; d < t->ndim && !empty; d++) {
        /* No product that wraps: a tensor larger than the file is refused below anyway. */
        if (numel > st->data_size / (size_t)t->shape[d])
            return attn_fail(err, ATTN_EPARSE,
                             "%s: tensor '%s' has more elements than the file has bytes", st->path,
                             name);
        numel *= (size_t)t->shape[d];
    }
    if (empty)
        numel = 0;
    t->numel = numel;
    begin = json_is_integer(json_array_get(offsets, 0)) ? json_integer_value(json_array_get(offsets, 0))
                                                        : -1;
    end = json_is_integer(json_array_get(offsets, 1)) ? json_integer_value(json_array_get(offsets, 1))
                                                      : -1;
    if (begin < 0 || end < begin)
        return attn_fail(err, ATTN_EPARSE, "%s: tensor '%s': data_offsets [%lld, %lld] is not a range",
                         st->path, name, (long long)begin, (long long)end);
    if ((unsigned long long)end > st->data_size)
        return attn_fail(err, ATTN_EPARSE,
                         "%s: tensor '%s' ends at byte %lld of the data, past its end (%zu bytes): "
                         "the file is truncated or its header wrong",
                         st->path, name, (long long)end, st->data_size);
    t->begin = (size_t)begin;
    t->end = (size_t)end;
    if (t->end - t->begin != numel * tensor_dtype_size(dtypes[k].dtype))
        return attn_fail(err, ATTN_EPARSE,
                         "%s: tensor '%s' holds %zu bytes, but %zu %s values take %zu", st->path,
                         name, t->end - t->begin, numel, dtypes[k].name, numel * tensor_dtype_size(dtypes[k].dtype));
    t->name = strdup(name);
    if (t->name == NULL)
        return attn_fail(err, ATTN_ENOMEM, "%s: out of memory", st->path);
    return ATTN_OK;
}

/* The header's JSON: every tensor parsed, then their ranges checked to tile the data. */
static enum attn_status
parse_header(struct safetensors *st, const char *text, size_t len, struct attn_error *err)
{
    json_error_t jerr;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    const char *key;
    json_t *value;
    struct tensor_info *sorted;
    size_t at = 0;
    enum attn_status rc = ATTN_OK;

    if (root == NULL)
        return attn_fail(err, ATTN_EPARSE, "%s: the header is not JSON: line %d, column %d: %s",
                         st->path, jerr.line, jerr.column, jerr.text);
    if (!json_is_object(root)) {
        json_decref(root);
        return attn_fail(err, ATTN_EPARSE, "%s: the header is not a JSON object of tensors",
                         st->path);
    }
    st->cat.tensors = calloc(json_object_size(root) + 1, sizeof *st->cat.tensors);
    if (st->cat.tensors == NULL) {
        json_decref(root);
        return attn_fail(err, ATTN_ENOMEM, "%s: out of memory", st->path);
    }
    json_object_foreach(root, key, value)
    {
        if (strcmp(key, "__metadata__") == 0) {
            if (!json_is_object(value)) {
                rc = attn_fail(err, ATTN_EPARSE, "%s: __metadata__ is not an object", st->path);
                break;
            }
            continue;
        }
        rc = parse_tensor(st, key, value, &st->cat.tensors[st->cat.count], err);
        if (rc != ATTN_OK)
            break;
        st->cat.count++;
    }
    json_decref(root);
    if (rc != ATTN_OK)
        return rc;

    /*
     * Sorted by where they start and end, the ranges must follow one another from 0 to the
     * end (an empty tensor where another starts comes first and takes nothing).
     */
    sorted = malloc(((size_t)st->cat.count + 1) * sizeof *sorted);
    if (sorted == NULL)
        return attn_fail(err, ATTN_ENOMEM, "%s: out of memory", st->path);
    memcpy(sorted, st->cat.tensors, (size_t)st->cat.count * sizeof *sorted);
    qsort(sorted, (size_t)st->cat.count, sizeof *sorted, by_range);
    for (int i = 0; i < st->cat.count && rc == ATTN_OK; i++) {
        if (sorted[i].begin < at)
            rc = attn_fail(err, ATTN_EPARSE, "%s: tensors '%s' and '%s' overlap", st->path,
                           sorted[i - 1].name, sorted[i].name);
        else if (sorted[i].begin > at)
            rc = attn_fail(err, ATTN_EPARSE,
                           "%s: bytes %zu to %zu of the data belong to no tensor (before '%s')",
                           st->path, at, sorted[i].begin, sorted[i].name);
        at = sorted[i].end;
    }
    if (rc == ATTN_OK && at != st->data_size)
        rc = attn_fail(err, ATTN_EPARSE,
                       "%s: the tensors end at byte %zu of the data, but it has %zu: the header "
                       "does not describe the whole file",
                       st->path, at, st->data_size);
    free(sorted);
    if (rc != ATTN_OK)
        return rc;
    return tensor_catalogue_index(&st->cat, st->path, err);
}

/* Reads len bytes at offset of the file (see fileio_pread). */
static enum attn_status
read_at(const struct safetensors *st, void *buf, size_t len, uint64_t offset,
        struct attn_error *err)
{
    return fileio_pread(st->fd, st->path, buf, len, offset, err);
}

enum attn_status
safetensors_open(struct safetensors *st, const char *path, struct attn_error *err)
{
    struct stat sb;
    unsigned char len8[8];
    uint64_t n = 0;
    uint64_t file_size;
    char *header;
    enum attn_status rc;

    memset(st, 0, sizeof *st);
    st->fd = -1;
    st->path = strdup(path);
    if (st->path == NULL)
        return attn_fail(err, ATTN_ENOMEM, "%s: out of memory", path);
    if ((rc = fileio_open_regular(path, &st->fd, err)) != ATTN_OK)
        goto fail;
    if (fstat(st->fd, &sb) != 0) {
        rc = attn_fail(err, ATTN_EIO, "%s: %s", path, strerror(errno));
        goto fail;
    }
    file_size = (uint64_t)sb.st_size;
    if (file_size < 8) {
        rc = attn_fail(err, ATTN_EPARSE, "%s: %llu bytes, too short for a safetensors file", path,
                       (unsigned long long)file_size);
        goto fail;
    }
    if ((rc = read_at(st, len8, 8, 0, err)) != ATTN_OK)
        goto fail;
    for (int k = 7; k >= 0; k--)
        n = (n << 8) | len8[k];
    if (n > SAFETENSORS_HEADER_MAX || n > file_size - 8) {
        rc = attn_fail(err, ATTN_EPARSE,
                       "%s: the header is said to be %llu bytes, but the file has %llu after its "
                       "length%s: not a safetensors file, or a truncated one",
                       path, (unsigned long long)n, (unsigned long long)(file_size - 8),
                       n > SAFETENSORS_HEADER_MAX ? " (and attnscope reads at most 100 MB)" : "");
        goto fail;
    }
    if (file_size - 8 - n > SIZE_MAX) {
        rc = attn_fail(err, ATTN_ELIMIT, "%s: too large for this machine's address space", path);
        goto fail;
    }
    st->data_start = 8 + n;
    st->data_size = (size_t)(file_size - 8 - n);
    header = malloc((size_t)n + 1);
    if (header == NULL) {
        rc = attn_fail(err, ATTN_ENOMEM, "%s: out of memory for its %llu-byte header", path,
                       (unsigned long long)n);
        goto fail;
    }
    rc = read_at(st, header, (size_t)n, 8, err);
    if (rc == ATTN_OK)
        rc = parse_header(st, header, (size_t)n, err);
    free(header);
    if (rc != ATTN_OK)
        goto fail;
    return ATTN_OK;
fail:
    safetensors_close(st);
    return rc;
}

void
safetensors_close(struct safetensors *st)
{
    tensor_catalogue_free(&st->cat);
    if (st->fd >= 0)
        close(st->fd);
    free(st->path);
    memset(st, 0, sizeof *st);
    st->fd = -1;
}

const struct tensor_info *
safetensors_find(const struct safetensors *st, const char *name)
{
    return tensor_catalogue_find(&st->cat, name);
}

/* The bytes of the data (the one unit) at offset, for tensor_read_f32. */
static enum attn_status
data_bytes(void *reader, int unit, uint64_t offset, void *buf, size_t len, struct attn_error *err)
{
    const struct safetensors *st = reader;

    (void)unit;
    return read_at(st, buf, len, st->data_start + offset, err);
}

enum attn_status
safetensors_read(const struct safetensors *st, const struct tensor_info *t, enum tensor_dtype as,
                 void *out, struct attn_error *err)
{
    return tensor_read(t, data_bytes, (void *)st, st->path, as, out, err);
}

enum attn_status
safetensors_read_f32(const struct safetensors *st, const struct tensor_info *t, float *out,
                     struct attn_error *err)
{
    return safetensors_read(st, t, TENSOR_F32, out, err);
}
