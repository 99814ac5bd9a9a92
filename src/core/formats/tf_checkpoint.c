/* tf_checkpoint.c: a TensorFlow V2 checkpoint's index and data files (see tf_checkpoint.h). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attnscope/files/fileio.h"
#include "attnscope/formats/sstable.h"
#include "attnscope/formats/tf_checkpoint.h"
#include "core/formats/tf_bundle.pb-c.h"

typedef Attnscope__Tfbundle__BundleHeaderProto header_proto;
typedef Attnscope__Tfbundle__BundleEntryProto entry_proto;

/* The `checkpoint` file is small text; anything larger is not one. */
#define CHECKPOINT_FILE_MAX ((size_t)1 << 20)

/* TensorFlow's DataType numbers attnscope reads, and the names of some it does not. */
static const struct {
    int number;
    const char *name;
    int readable;
    enum tensor_dtype dtype;
} tf_dtypes[] = {
    { 1, "DT_FLOAT", 1, TENSOR_F32 },     { 19, "DT_HALF", 1, TENSOR_F16 },
    { 14, "DT_BFLOAT16", 1, TENSOR_BF16 }, { 2, "DT_DOUBLE", 0, TENSOR_F32 },
    { 3, "DT_INT32", 0, TENSOR_F32 },     { 4, "DT_UINT8", 0, TENSOR_F32 },
    { 5, "DT_INT16", 0, TENSOR_F32 },     { 6, "DT_INT8", 0, TENSOR_F32 },
    { 7, "DT_STRING", 0, TENSOR_F32 },    { 9, "DT_INT64", 0, TENSOR_F32 },
    { 10, "DT_BOOL", 0, TENSOR_F32 },     { 20, "DT_RESOURCE", 0, TENSOR_F32 },
    { 21, "DT_VARIANT", 0, TENSOR_F32 },
};

/* What the index and the data files are while they are read. */
struct reading {
    struct tf_checkpoint *ck;
    int have_header;
    int capacity;
};

static enum attn_status
fail_entry(struct tf_checkpoint *ck, const char *name, const char *what, struct attn_error *err)
{
    return attn_fail(err, ATTN_EPARSE, "%s: tensor '%s': %s", ck->index, name, what);
}

/* The empty key's BundleHeaderProto: how many data files, and little-endian. */
static int
read_header(struct reading *r, const unsigned char *value, size_t len, struct attn_error *err)
{
    struct tf_checkpoint *ck = r->ck;
    header_proto *h = attnscope__tfbundle__bundle_header_proto__unpack(NULL, len, value);
    int shards;
    int big;

    if (h == NULL) {
        attn_fail(err, ATTN_EPARSE, "%s: the header entry is not a BundleHeaderProto", ck->index);
        return -1;
    }
    shards = h->num_shards;
    big = h->endianness != ATTNSCOPE__TFBUNDLE__BUNDLE_HEADER_PROTO__ENDIANNESS__LITTLE;
    attnscope__tfbundle__bundle_header_proto__free_unpacked(h, NULL);
    if (big) {
        attn_fail(err, ATTN_EPARSE,
                  "%s: the checkpoint was written big-endian; attnscope reads little-endian ones",
                  ck->index);
        return -1;
    }
    if (shards < 1 || shards > TF_SHARDS_MAX) {
        attn_fail(err, ATTN_EPARSE, "%s: the header says %d data files (1 to %d)", ck->index,
                  shards, TF_SHARDS_MAX);
        return -1;
    }
    ck->shard_count = shards;
    r->have_header = 1;
    return 0;
}

/* t's shape, dtype and place from its entry; a tensor attnscope cannot read gets a reason. */
static int
describe(struct tf_checkpoint *ck, const entry_proto *e, struct tensor_info *t,
         struct attn_error *err)
{
    char why[160] = "";
    size_t k;
    size_t esize;

    for (k = 0; k < sizeof tf_dtypes / sizeof tf_dtypes[0]; k++)
        if (tf_dtypes[k].number == e->dtype)
            break;
    if (k == sizeof tf_dtypes / sizeof tf_dtypes[0])
        snprintf(why, sizeof why,
                 "is of TensorFlow dtype %d; attnscope reads DT_FLOAT, DT_HALF and DT_BFLOAT16",
                 (int)e->dtype);
    else if (!tf_dtypes[k].readable)
        snprintf(why, sizeof why,
                 "is %s; attnscope reads DT_FLOAT, DT_HALF and DT_BFLOAT16", tf_dtypes[k].name);
    else
        t->dtype = tf_dtypes[k].dtype;
    if (e->n_slices > 0 && why[0] == '\0')
        snprintf(why, sizeof why,
                 "is saved in %zu slices (a partitioned variable); attnscope reads whole tensors",
                 e->n_slices);
    if (e->shape == NULL) {
        t->ndim = 0;
    } else if (e->shape->unknown_rank) {
        fail_entry(ck, t->name, "its shape has an unknown rank", err);
        return -1;
    } else if (e->shape->n_dim > TENSOR_NDIM_MAX) {
        attn_fail(err, ATTN_ELIMIT, "%s: tensor '%s' has %zu dimensions (at most %d)", ck->index,
                  t->name, e->shape->n_dim, TENSOR_NDIM_MAX);
        return -1;
    } else {
        t->ndim = (int)e->shape->n_dim;
    }
    t->numel = 1;
    for (int d = 0; d < t->ndim; d++) {
        int64_t n = e->shape->dim[d]->size;
        if (n < 0 || (n > 0 && t->numel > SIZE_MAX / 8 / (uint64_t)n)) {
            attn_fail(err, ATTN_EPARSE, "%s: tensor '%s': dimension %d of its shape is %lld",
                      ck->index, t->name, d, (long long)n);
            return -1;
        }
        t->shape[d] = n;
        t->numel *= (size_t)n;
    }
    if (e->shard_id < 0 || e->shard_id >= ck->shard_count || e->offset < 0 || e->size < 0 ||
        (uint64_t)e->size > SIZE_MAX || (uint64_t)e->offset > SIZE_MAX - (uint64_t)e->size) {
        attn_fail(err, ATTN_EPARSE,
                  "%s: tensor '%s' is said to be in data file %d at byte %lld, %lld bytes (the "
                  "checkpoint has %d data files)",
                  ck->index, t->name, (int)e->shard_id, (long long)e->offset, (long long)e->size,
                  ck->shard_count);
        return -1;
    }
    t->unit = (int)e->shard_id;
    t->begin = (size_t)e->offset;
    t->end = (size_t)(e->offset + e->size);
    t->crc32c = e->crc32c;
    t->has_crc = 1;
    esize = tensor_dtype_size(t->dtype);
    if (why[0] == '\0' && (size_t)e->size != t->numel * esize) {
        attn_fail(err, ATTN_EPARSE, "%s: tensor '%s' has %lld bytes for %zu values of %s",
                  ck->index, t->name, (long long)e->size, t->numel, tensor_dtype_name(t->dtype));
        return -1;
    }
    if (why[0] != '\0' && (t->refused = strdup(why)) == NULL) {
        attn_fail(err, ATTN_ENOMEM, "%s: out of memory", ck->index);
        return -1;
    }
    return 0;
}

/* One entry of the index: the header, or a tensor. */
static int
index_entry(void *ctx, const unsigned char *key, size_t key_len, const unsigned char *value,
            size_t value_len, struct attn_error *err)
{
    struct reading *r = ctx;
    struct tf_checkpoint *ck = r->ck;
    struct tensor_info *t;
    entry_proto *e;
    int rc;

    if (key_len == 0)
        return read_header(r, value, value_len, err);
    if (!r->have_header) {
        attn_fail(err, ATTN_EPARSE, "%s: no header entry before the tensors: not a checkpoint's "
                                    "index",
                  ck->index);
        return -1;
    }
    if (memchr(key, '\0', key_len) != NULL) {
        attn_fail(err, ATTN_EPARSE, "%s: a tensor's name holds a NUL byte", ck->index);
        return -1;
    }
    if (ck->cat.count == r->capacity) {
        /* (An index of at most 64 MiB holds fewer than 2^25 entries: no overflow.) */
        int cap = r->capacity > 0 ? 2 * r->capacity : 64;
        struct tensor_info *bigger = realloc(ck->cat.tensors, (size_t)cap * sizeof *bigger);
        if (bigger == NULL) {
            attn_fail(err, ATTN_ENOMEM, "%s: out of memory", ck->index);
            return -1;
        }
        ck->cat.tensors = bigger;
        r->capacity = cap;
    }
    t = &ck->cat.tensors[ck->cat.count];
    memset(t, 0, sizeof *t);
    t->name = malloc(key_len + 1);
    if (t->name == NULL) {
        attn_fail(err, ATTN_ENOMEM, "%s: out of memory", ck->index);
        return -1;
    }
    memcpy(t->name, key, key_len);
    t->name[key_len] = '\0';
    ck->cat.count++;
    e = attnscope__tfbundle__bundle_entry_proto__unpack(NULL, value_len, value);
    if (e == NULL) {
        fail_entry(ck, t->name, "its entry is not a BundleEntryProto", err);
        return -1;
    }
    rc = describe(ck, e, t, err);
    attnscope__tfbundle__bundle_entry_proto__free_unpacked(e, NULL);
    return rc;
}

/* Opens every data file and checks each tensor's bytes are inside its own. */
static enum attn_status
open_shards(struct tf_checkpoint *ck, const char *prefix, struct attn_error *err)
{
    const int n = ck->shard_count;

    ck->fds = malloc((size_t)n * sizeof *ck->fds);
    ck->shard_paths = calloc((size_t)n, sizeof *ck->shard_paths);
    ck->shard_sizes = calloc((size_t)n, sizeof *ck->shard_sizes);
    if (ck->fds == NULL || ck->shard_paths == NULL || ck->shard_sizes == NULL)
        return attn_fail(err, ATTN_ENOMEM, "%s: out of memory", ck->index);
    for (int i = 0; i < n; i++)
        ck->fds[i] = -1;
    for (int i = 0; i < n; i++) {
        size_t len = strlen(prefix) + 40;
        struct stat sb;
        enum attn_status rc;
        ck->shard_paths[i] = malloc(len);
        if (ck->shard_paths[i] == NULL)
            return attn_fail(err, ATTN_ENOMEM, "%s: out of memory", ck->index);
        snprintf(ck->shard_paths[i], len, "%s.data-%05d-of-%05d", prefix, i, n);
        if ((rc = fileio_open_regular(ck->shard_paths[i], &ck->fds[i], err)) != ATTN_OK)
            return rc;
        if (fstat(ck->fds[i], &sb) != 0)
            return attn_fail(err, ATTN_EIO, "%s: %s", ck->shard_paths[i], strerror(errno));
        ck->shard_sizes[i] = (uint64_t)sb.st_size;
    }
    for (int i = 0; i < ck->cat.count; i++) {
        const struct tensor_info *t = &ck->cat.tensors[i];
        if ((uint64_t)t->end > ck->shard_sizes[t->unit])
            return attn_fail(err, ATTN_EPARSE,
                             "%s: tensor '%s' is said to end at byte %llu, but the file has %llu: "
                             "a truncated download, or a data file of another checkpoint",
                             ck->shard_paths[t->unit], t->name, (unsigned long long)t->end,
                             (unsigned long long)ck->shard_sizes[t->unit]);
    }
    return ATTN_OK;
}

enum attn_status
tf_checkpoint_open(struct tf_checkpoint *ck, const char *prefix, struct attn_error *err)
{
    struct reading r = { ck, 0, 0 };
    char *table = NULL;
    size_t len = 0;
    enum attn_status rc;

    memset(ck, 0, sizeof *ck);
    ck->index = malloc(strlen(prefix) + sizeof ".index");
    if (ck->index == NULL)
        return attn_fail(err, ATTN_ENOMEM, "%s: out of memory", prefix);
    sprintf(ck->index, "%s.index", prefix);
    rc = fileio_read_regular(ck->index, TF_INDEX_MAX, &table, &len, err);
    if (rc == ATTN_OK)
        rc = sstable_foreach((const unsigned char *)table, len, ck->index, index_entry, &r, err);
    free(table);
    if (rc == ATTN_OK && !r.have_header)
        rc = attn_fail(err, ATTN_EPARSE, "%s: the table has no header entry: not a checkpoint's "
                                         "index",
                       ck->index);
    if (rc == ATTN_OK)
        rc = open_shards(ck, prefix, err);
    if (rc == ATTN_OK)
        rc = tensor_catalogue_index(&ck->cat, ck->index, err);
    if (rc != ATTN_OK)
        tf_checkpoint_close(ck);
    return rc;
}

void
tf_checkpoint_close(struct tf_checkpoint *ck)
{
    tensor_catalogue_free(&ck->cat);
    for (int i = 0; ck->fds != NULL && i < ck->shard_count; i++)
        if (ck->fds[i] >= 0)
            close(ck->fds[i]);
    for (int i = 0; ck->shard_paths != NULL && i < ck->shard_count; i++)
        free(ck->shard_paths[i]);
    free(ck->fds);
    free(ck->shard_paths);
    free(ck->shard_sizes);
    free(ck->index);
    memset(ck, 0, sizeof *ck);
}

const struct tensor_info *
tf_checkpoint_find(const struct tf_checkpoint *ck, const char *name)
{
    return tensor_catalogue_find(&ck->cat, name);
}

/* The bytes of data file unit at offset, for tensor_read_f32. */
static enum attn_status
shard_bytes(void *reader, int unit, uint64_t offset, void *buf, size_t len, struct attn_error *err)
{
    const struct tf_checkpoint *ck = reader;

    return fileio_pread(ck->fds[unit], ck->shard_paths[unit], buf, len, offset, err);
}

enum attn_status
tf_checkpoint_read_f32(const struct tf_checkpoint *ck, const struct tensor_info *t, float *out,
                       struct attn_error *err)
{
    return tf_checkpoint_read(ck, t, TENSOR_F32, out, err);
}

enum attn_status
tf_checkpoint_read(const struct tf_checkpoint *ck, const struct tensor_info *t,
                   enum tensor_dtype as, void *out, struct attn_error *err)
{
    return tensor_read(t, shard_bytes, (void *)ck, tf_checkpoint_file_of(ck, t), as, out, err);
}

const char *
tf_checkpoint_file_of(const struct tf_checkpoint *ck, const struct tensor_info *t)
{
    return t->unit >= 0 && t->unit < ck->shard_count ? ck->shard_paths[t->unit] : ck->index;
}

/* ------------------------------------------------------------ the `checkpoint` file */

/* The value of the first `model_checkpoint_path: "..."` line of text, into out. */
static int
checkpoint_path_line(const char *text, char *out, size_t size)
{
    static const char key[] = "model_checkpoint_path:";
    const char *at = text;

    while (at != NULL && *at != '\0') {
        const char *line = at + strspn(at, " \t");
        const char *eol = strchr(line, '\n');
        size_t n;
        if (strncmp(line, key, sizeof key - 1) == 0) {
            const char *q = line + sizeof key - 1;
            const char *end;
            q += strspn(q, " \t");
            if (*q == '"' && (end = strchr(q + 1, '"')) != NULL && (eol == NULL || end < eol) &&
                (n = (size_t)(end - q - 1)) > 0 && n < size && memchr(q + 1, '\\', n) == NULL) {
                memcpy(out, q + 1, n);
                out[n] = '\0';
                return 0;
            }
            return -1;
        }
        at = eol != NULL ? eol + 1 : NULL;
    }
    return -1;
}

enum attn_status
tf_checkpoint_prefix(const char *dir, char *prefix, size_t size, struct attn_error *err)
{
    char path[4096];
    char named[4096];
    char *text = NULL;
    size_t len;

    if (snprintf(path, sizeof path, "%s/checkpoint", dir) >= (int)sizeof path)
        return attn_fail(err, ATTN_EIO, "%s: the folder's name is too long", dir);
    if (!fileio_absent(path)) {
        enum attn_status rc = fileio_read_regular(path, CHECKPOINT_FILE_MAX, &text, &len, err);
        if (rc != ATTN_OK)
            return rc;
        if (checkpoint_path_line(text, named, sizeof named) != 0) {
            free(text);
            return attn_fail(err, ATTN_EPARSE,
                             "%s: no model_checkpoint_path: \"...\" line naming the checkpoint",
                             path);
        }
        free(text);
        if (named[0] == '/')
            snprintf(prefix, size, "%s", named);
        else if (snprintf(prefix, size, "%s/%s", dir, named) >= (int)size)
            return attn_fail(err, ATTN_EIO, "%s: the folder's name is too long", dir);
        if (snprintf(path, sizeof path, "%s.index", prefix) < (int)sizeof path &&
            fileio_absent(path) && named[0] == '/') {
            /* A folder moved since TensorFlow wrote an absolute path: the same name here. */
            const char *base = strrchr(named, '/') + 1;
            if (snprintf(prefix, size, "%s/%s", dir, base) >= (int)size)
                return attn_fail(err, ATTN_EIO, "%s: the folder's name is too long", dir);
        }
        snprintf(path, sizeof path, "%s.index", prefix);
        if (fileio_absent(path))
            return attn_fail(err, ATTN_EIO,
                             "%s/checkpoint names the checkpoint %s, but %s is not there", dir,
                             named, path);
        return ATTN_OK;
    }
    if (snprintf(prefix, size, "%s/model.ckpt", dir) >= (int)size)
        return attn_fail(err, ATTN_EIO, "%s: the folder's name is too long", dir);
    snprintf(path, sizeof path, "%s.index", prefix);
    if (fileio_absent(path))
        return attn_fail(err, ATTN_EABSENT, "%s: no TensorFlow checkpoint", dir);
    return ATTN_OK;
}
