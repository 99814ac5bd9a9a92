/* tensors.c: a model's weights by name, whatever file holds them (see tensors.h). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attnscope/files/filemap.h"
#include "attnscope/files/fileio.h"
#include "attnscope/formats/gguf.h"
#include "attnscope/files/jsonfile.h"
#include "attnscope/formats/safetensors.h"
#include "attnscope/formats/tensors.h"
#include "attnscope/formats/tf_checkpoint.h"
#include "attnscope/formats/torch_zip.h"

/* ------------------------------------------------------------ the readers */

/* What the seam asks of a format's reader, for one open file. */
struct tensor_reader {
    const char *format;
    size_t self_size; /* the reader's own struct */
    enum attn_status (*open)(void *self, const char *path, struct attn_error *err);
    const struct tensor_catalogue *(*catalogue)(const void *self);
    /* as float32, or as stored (tensor_read) */
    enum attn_status (*read)(const void *self, const struct tensor_info *t, enum tensor_dtype as,
                             void *out, struct attn_error *err);
    const char *(*file_of)(const void *self, const struct tensor_info *t);
    void (*close)(void *self);
    /* where t's bytes lie in which open file of size *size (tensors_map); NULL: not plainly */
    bool (*locate)(const void *self, const struct tensor_info *t, int *fd, uint64_t *offset,
                   uint64_t *size);
};

static enum attn_status
st_open(void *self, const char *path, struct attn_error *err)
{
    return safetensors_open(self, path, err);
}

static const struct tensor_catalogue *
st_catalogue(const void *self)
{
    return &((const struct safetensors *)self)->cat;
}

static enum attn_status
st_read(const void *self, const struct tensor_info *t, enum tensor_dtype as, void *out,
        struct attn_error *err)
{
    return safetensors_read(self, t, as, out, err);
}

static const char *
st_file_of(const void *self, const struct tensor_info *t)
{
    (void)t;
    return ((const struct safetensors *)self)->path;
}

static void
st_close(void *self)
{
    safetensors_close(self);
}

static bool
st_locate(const void *self, const struct tensor_info *t, int *fd, uint64_t *offset,
          uint64_t *size)
{
    const struct safetensors *st = self;

    *fd = st->fd;
    *offset = st->data_start + t->begin;
    *size = st->data_start + st->data_size;
    return true;
}

static const struct tensor_reader safetensors_reader = {
    "safetensors", sizeof(struct safetensors), st_open, st_catalogue, st_read, st_file_of, st_close,
    st_locate
};

static enum attn_status
tf_open(void *self, const char *prefix, struct attn_error *err)
{
    return tf_checkpoint_open(self, prefix, err);
}

static const struct tensor_catalogue *
tf_catalogue(const void *self)
{
    return &((const struct tf_checkpoint *)self)->cat;
}

static enum attn_status
tf_read(const void *self, const struct tensor_info *t, enum tensor_dtype as, void *out,
        struct attn_error *err)
{
    return tf_checkpoint_read(self, t, as, out, err);
}

static const char *
tf_file_of(const void *self, const struct tensor_info *t)
{
    return tf_checkpoint_file_of(self, t);
}

static void
tf_close(void *self)
{
    tf_checkpoint_close(self);
}

static const struct tensor_reader tf_reader = { "TensorFlow checkpoint",
                                                sizeof(struct tf_checkpoint),
                                                tf_open,
                                                tf_catalogue,
                                                tf_read,
                                                tf_file_of,
                                                tf_close,
                                                NULL };

static enum attn_status
pt_open(void *self, const char *path, struct attn_error *err)
{
    return torch_zip_open(self, path, err);
}

static const struct tensor_catalogue *
pt_catalogue(const void *self)
{
    return &((const struct torch_zip *)self)->cat;
}

static enum attn_status
pt_read(const void *self, const struct tensor_info *t, enum tensor_dtype as, void *out,
        struct attn_error *err)
{
    return torch_zip_read(self, t, as, out, err);
}

static const char *
pt_file_of(const void *self, const struct tensor_info *t)
{
    (void)t;
    return ((const struct torch_zip *)self)->path;
}

static void
pt_close(void *self)
{
    torch_zip_close(self);
}

static const struct tensor_reader torch_reader = { "PyTorch state dict",
                                                   sizeof(struct torch_zip),
                                                   pt_open,
                                                   pt_catalogue,
                                                   pt_read,
                                                   pt_file_of,
                                                   pt_close,
                                                   NULL };

static enum attn_status
gg_open(void *self, const char *path, struct attn_error *err)
{
    return gguf_open(self, path, err);
}

static const struct tensor_catalogue *
gg_catalogue(const void *self)
{
    return &((const struct gguf *)self)->cat;
}

static enum attn_status
gg_read(const void *self, const struct tensor_info *t, enum tensor_dtype as, void *out,
        struct attn_error *err)
{
    return gguf_read(self, t, as, out, err);
}

static const char *
gg_file_of(const void *self, const struct tensor_info *t)
{
    (void)t;
    return ((const struct gguf *)self)->path;
}

static void
gg_close(void *self)
{
    gguf_close(self);
}

static bool
gg_locate(const void *self, const struct tensor_info *t, int *fd, uint64_t *offset,
          uint64_t *size)
{
    const struct gguf *g = self;

    *fd = g->fd;
    *offset = g->data_start + t->begin;
    *size = g->file_size;
    return true;
}

static const struct tensor_reader gguf_reader = {
    "GGUF", sizeof(struct gguf), gg_open, gg_catalogue, gg_read, gg_file_of, gg_close, gg_locate
};

const struct gguf *
tensors_gguf(const struct tensor_source *s)
{
    return s->file_count == 1 && s->files[0].reader == &gguf_reader ? s->files[0].self : NULL;
}

/* Room for n files of the source, each read by reader. */
static enum attn_status
files_reserve(struct tensor_source *s, size_t n, const struct tensor_reader *reader,
              struct attn_error *err)
{
    s->files = calloc(n, sizeof *s->files);
    if (s->files == NULL)
        return attn_fail(err, ATTN_ENOMEM, "%s: out of memory", s->path);
    s->file_capacity = (int)n;
    s->format = reader->format;
    for (size_t i = 0; i < n; i++) {
        s->files[i].reader = reader;
        if ((s->files[i].self = calloc(1, reader->self_size)) == NULL)
            return attn_fail(err, ATTN_ENOMEM, "%s: out of memory", s->path);
    }
    return ATTN_OK;
}

/* Opens path as the next of the source's reserved files. */
static enum attn_status
add_file(struct tensor_source *s, const char *path, struct attn_error *err)
{
    struct tensor_file *f = &s->files[s->file_count];
    enum attn_status rc = f->reader->open(f->self, path, err);

    if (rc == ATTN_OK)
        s->file_count++;
    return rc;
}

/*
 * The shards a model.safetensors.index.json names in its weight_map (plain
 * file names beside it), each opened once, and every tensor of the map
 * checked to be in the shard it names; s->shard_of keeps the map (a name
 * -> the shard's index, jansson's hash table).
 */
static enum attn_status
open_shards(struct tensor_source *s, const char *dir, struct attn_error *err)
{
    const char *index = s->path;
    json_t *root = jsonfile_load(index, JSONFILE_INDEX_MAX, err);
    json_t *map;
    json_t *files = NULL;
    json_t *shard_of;
    const char *name;
    json_t *file;
    enum attn_status rc = ATTN_EPARSE;

    if (root == NULL)
        return err != NULL ? err->status : ATTN_EPARSE;
    map = json_object_get(root, "weight_map");
    if (!json_is_object(map) || json_object_size(map) == 0 || json_object_size(map) > 1000000) {
        attn_fail(err, ATTN_EPARSE, "%s: no \"weight_map\" of tensor names and their files",
                  index);
        goto done;
    }
    s->shard_of = shard_of = json_object();
    files = json_object();
    if (files_reserve(s, json_object_size(map), &safetensors_reader, err) != ATTN_OK)
        goto done;
    if (shard_of == NULL || files == NULL) {
        rc = attn_fail(err, ATTN_ENOMEM, "%s: out of memory", index);
        goto done;
    }
    json_object_foreach(map, name, file)
    {
        const char *f = json_is_string(file) ? json_string_value(file) : NULL;
        char path[4096];
        json_t *known;
        int shard;
        if (f == NULL || f[0] == '\0' || f[0] == '.' || strchr(f, '/') != NULL) {
            attn_fail(err, ATTN_EPARSE, "%s: tensor '%s' is mapped to %s, not a file beside it",
                      index, name, f != NULL ? f : "something that is not a file name");
            goto done;
        }
        known = json_object_get(files, f);
        if (known != NULL) {
            shard = (int)json_integer_value(known);
        } else {
            snprintf(path, sizeof path, "%s/%s", dir, f);
            if ((rc = add_file(s, path, err)) != ATTN_OK)
                goto done;
            rc = ATTN_EPARSE;
            shard = s->file_count - 1;
            if (json_object_set_new(files, f, json_integer(shard)) != 0) {
                rc = attn_fail(err, ATTN_ENOMEM, "%s: out of memory", index);
                goto done;
            }
        }
        if (safetensors_find(s->files[shard].self, name) == NULL) {
            attn_fail(err, ATTN_EPARSE, "%s: tensor '%s' is mapped to %s, which lacks it", index,
                      name, f);
            goto done;
        }
        if (json_object_set_new(shard_of, name, json_integer(shard)) != 0) {
            rc = attn_fail(err, ATTN_ENOMEM, "%s: out of memory", index);
            goto done;
        }
    }
    rc = ATTN_OK;
done:
    json_decref(files);
    json_decref(root);
    return rc;
}

/* The one file (or checkpoint prefix) path, read by reader; s->path names it. */
static enum attn_status
open_one(struct tensor_source *s, const char *path, const struct tensor_reader *reader,
         struct attn_error *err)
{
    enum attn_status rc;

    if (snprintf(s->path, sizeof s->path, "%s%s", path, reader == &tf_reader ? ".index" : "") >=
        (int)sizeof s->path)
        return attn_fail(err, ATTN_EIO, "%s: the name is too long", path);
    if ((rc = files_reserve(s, 1, reader, err)) != ATTN_OK)
        return rc;
    return add_file(s, path, err);
}

/* The kinds of file a weights file can be, told by its first and last bytes. */
enum file_kind { KIND_SAFETENSORS, KIND_ZIP, KIND_TF_INDEX, KIND_OLD_TORCH, KIND_HDF5, KIND_GGUF };

static enum attn_status
sniff(const char *path, enum file_kind *kind, struct attn_error *err)
{
    static const unsigned char table_magic[8] = { 0x57, 0xfb, 0x80, 0x8b, 0x24, 0x75, 0x47, 0xdb };
    unsigned char head[8] = { 0 };
    unsigned char tail[8] = { 0 };
    struct stat sb;
    int fd;
    enum attn_status rc = fileio_open_regular(path, &fd, err);

    if (rc != ATTN_OK)
        return rc;
    if (fstat(fd, &sb) != 0) {
        rc = attn_fail(err, ATTN_EIO, "%s: %s", path, strerror(errno));
    } else if (sb.st_size < 8) {
        rc = attn_fail(err, ATTN_EPARSE, "%s: %lld bytes: not a weights file", path,
                       (long long)sb.st_size);
    } else if ((rc = fileio_pread(fd, path, head, 8, 0, err)) == ATTN_OK) {
        rc = fileio_pread(fd, path, tail, 8, (uint64_t)sb.st_size - 8, err);
    }
    close(fd);
    if (rc != ATTN_OK)
        return rc;
    if (memcmp(head, "PK\003\004", 4) == 0)
        *kind = KIND_ZIP;
    else if (gguf_magic(head))
        *kind = KIND_GGUF;
    else if (memcmp(tail, table_magic, 8) == 0)
        *kind = KIND_TF_INDEX;
    else if (head[0] == 0x80 && head[1] >= 2 && head[1] <= 5)
        *kind = KIND_OLD_TORCH;
    else if (memcmp(head, "\211HDF\r\n\032\n", 8) == 0)
        *kind = KIND_HDF5;
    else
        *kind = KIND_SAFETENSORS;
    return ATTN_OK;
}

/* Whether name ends with suffix; its length without it into *stem. */
static int
ends_with(const char *name, const char *suffix, size_t *stem)
{
    size_t n = strlen(name);
    size_t k = strlen(suffix);

    if (n <= k || strcmp(name + n - k, suffix) != 0)
        return 0;
    *stem = n - k;
    return 1;
}

/* The checkpoint prefix of one of its files' names (.index, .meta, .data-NNNNN-of-NNNNN). */
static int
checkpoint_stem(const char *path, char *prefix, size_t size)
{
    const char *dot = strrchr(path, '.');
    size_t stem = 0;
    unsigned a;
    unsigned b;
    char extra;

    if (ends_with(path, ".index", &stem) || ends_with(path, ".meta", &stem))
        ;
    else if (dot != NULL && sscanf(dot, ".data-%5u-of-%5u%c", &a, &b, &extra) == 2)
        stem = (size_t)(dot - path);
    else
        return -1;
    if (stem >= size)
        return -1;
    memcpy(prefix, path, stem);
    prefix[stem] = '\0';
    return 0;
}

/* A weights file, read by what it holds. */
static enum attn_status
open_weights_file(struct tensor_source *s, const char *path, struct attn_error *err)
{
    char prefix[sizeof s->path];
    enum file_kind kind;
    enum attn_status rc;

    if (checkpoint_stem(path, prefix, sizeof prefix) == 0 &&
        (!ends_with(path, ".index", &(size_t){ 0 }) || sniff(path, &kind, err) != ATTN_OK ||
         kind == KIND_TF_INDEX))
        return open_one(s, prefix, &tf_reader, err);
    if ((rc = sniff(path, &kind, err)) != ATTN_OK)
        return rc;
    switch (kind) {
    case KIND_TF_INDEX:
        return attn_fail(err, ATTN_EPARSE,
                         "%s: a TensorFlow checkpoint's index, but not named PREFIX.index: its "
                         "data files are found by that name",
                         path);
    case KIND_ZIP:
        if ((rc = open_one(s, path, &torch_reader, err)) == ATTN_OK)
            s->within = ((const struct torch_zip *)s->files[0].self)->under;
        return rc;
    case KIND_OLD_TORCH:
        return attn_fail(err, ATTN_EPARSE,
                         "%s: PyTorch's format from before version 1.6 (a bare pickle), which "
                         "attnscope does not read: load and save it again with a recent PyTorch "
                         "(torch.save(torch.load(f), f))",
                         path);
    case KIND_HDF5:
        return attn_fail(err, ATTN_EPARSE,
                         "%s: a Keras HDF5 file, which attnscope does not read: use the model's "
                         "model.safetensors, its PyTorch state dict or its TensorFlow checkpoint",
                         path);
    case KIND_GGUF:
        return open_one(s, path, &gguf_reader, err);
    case KIND_SAFETENSORS:
        break;
    }
    return open_one(s, path, &safetensors_reader, err);
}

/* The one file of dir ending in one of the suffixes, into path; ATTN_EABSENT when none. */
static enum attn_status
only_file(const char *dir, const char *const *suffixes, char *path, size_t size,
          struct attn_error *err)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char found[2][256];
    int count = 0;

    if (d == NULL)
        return attn_fail(err, ATTN_EIO, "%s: %s", dir, strerror(errno));
    while ((e = readdir(d)) != NULL) {
        size_t stem;
        if (e->d_name[0] == '.')
            continue;
        for (const char *const *sfx = suffixes; *sfx != NULL; sfx++)
            if (ends_with(e->d_name, *sfx, &stem)) {
                if (count < 2)
                    snprintf(found[count], sizeof found[count], "%s", e->d_name);
                count++;
                break;
            }
    }
    closedir(d);
    if (count == 0)
        return ATTN_EABSENT;
    if (count > 1)
        return attn_fail(err, ATTN_EVALUE,
                         "%s: holds %d weights files (%s, %s%s): say which, for example "
                         "--model %s/%s",
                         dir, count, found[0], found[1], count > 2 ? ", ..." : "", dir, found[0]);
    if (snprintf(path, size, "%s/%s", dir, found[0]) >= (int)size)
        return attn_fail(err, ATTN_EIO, "%s: the folder's name is too long", dir);
    return ATTN_OK;
}

/* The weights of the model folder dir (see tensors_open). */
static enum attn_status
open_folder(struct tensor_source *s, const char *dir, struct attn_error *err)
{
    static const char *const torch_files[] = { ".pth", ".pt", NULL };
    char path[sizeof s->path];
    char prefix[sizeof s->path];
    enum attn_status rc;

    if (snprintf(path, sizeof path, "%s/model.safetensors.index.json", dir) >= (int)sizeof path)
        return attn_fail(err, ATTN_EIO, "%s: the folder's name is too long", dir);
    snprintf(prefix, sizeof prefix, "%s/model.safetensors", dir);
    if (!fileio_absent(prefix))
        return open_one(s, prefix, &safetensors_reader, err);
    if (!fileio_absent(path)) {
        memcpy(s->path, path, sizeof s->path);
        return open_shards(s, dir, err);
    }
    rc = tf_checkpoint_prefix(dir, prefix, sizeof prefix, err);
    if (rc != ATTN_EABSENT)
        return rc == ATTN_OK ? open_one(s, prefix, &tf_reader, err) : rc;
    snprintf(path, sizeof path, "%s/pytorch_model.bin", dir);
    if (!fileio_absent(path))
        return open_weights_file(s, path, err);
    rc = only_file(dir, torch_files, path, sizeof path, err);
    if (rc != ATTN_EABSENT)
        return rc == ATTN_OK ? open_weights_file(s, path, err) : rc;
    snprintf(path, sizeof path, "%s/tf_model.h5", dir);
    if (!fileio_absent(path))
        return open_weights_file(s, path, err);
    {
        /* LM Studio's folders: one .gguf file. */
        static const char *const gguf_files[] = { ".gguf", NULL };
        rc = only_file(dir, gguf_files, path, sizeof path, err);
        if (rc != ATTN_EABSENT)
            return rc == ATTN_OK ? open_weights_file(s, path, err) : rc;
    }
    snprintf(path, sizeof path, "%s/model.ckpt", dir);
    if (!fileio_absent(path))
        return attn_fail(err, ATTN_EPARSE,
                         "%s: a TensorFlow checkpoint of the first format (V1), which attnscope "
                         "does not read: save it again with TensorFlow (a V2 checkpoint has "
                         "model.ckpt.index and model.ckpt.data-* files)",
                         path);
    return attn_fail(err, ATTN_EABSENT,
                     "%s: no weights (looked for model.safetensors, model.safetensors.index.json, "
                     "a TensorFlow checkpoint, pytorch_model.bin, a .pth file and a .gguf file)",
                     dir);
}

enum attn_status
tensors_open(struct tensor_source *s, const char *path, struct attn_error *err)
{
    struct stat sb;
    char index[sizeof s->path];
    enum attn_status rc;

    memset(s, 0, sizeof *s);
    if (strlen(path) >= sizeof s->path - 64)
        return attn_fail(err, ATTN_EIO, "%s: the name is too long", path);
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        rc = open_folder(s, path, err);
    } else if (fileio_absent(path) &&
               (snprintf(index, sizeof index, "%s.index", path), !fileio_absent(index))) {
        rc = open_one(s, path, &tf_reader, err); /* a checkpoint's prefix, as TensorFlow names one */
    } else {
        rc = open_weights_file(s, path, err);
    }
    if (rc != ATTN_OK)
        tensors_close(s);
    return rc;
}

void
tensors_close(struct tensor_source *s)
{
    for (int i = 0; i < s->file_count; i++) {
        filemap_close(s->files[i].map);
        s->files[i].reader->close(s->files[i].self);
    }
    for (int i = 0; i < s->file_capacity; i++)
        free(s->files[i].self);
    free(s->files);
    json_decref(s->shard_of);
    memset(s, 0, sizeof *s);
}

/* The file holding name (the map's, else the first that has it), or -1. */
static int
file_of_name(const struct tensor_source *s, const char *name)
{
    json_t *where = s->shard_of != NULL ? json_object_get(s->shard_of, name) : NULL;

    if (where != NULL)
        return (int)json_integer_value(where);
    for (int i = 0; i < s->file_count; i++)
        if (tensor_catalogue_find(s->files[i].reader->catalogue(s->files[i].self), name) != NULL)
            return i;
    return -1;
}

const struct tensor_info *
tensors_find(const struct tensor_source *s, const char *name)
{
    const int k = file_of_name(s, name);

    return k >= 0 ? tensor_catalogue_find(s->files[k].reader->catalogue(s->files[k].self), name)
                  : NULL;
}

enum attn_status
tensors_read(const struct tensor_source *s, const struct tensor_info *t, enum tensor_dtype as,
             void *out, struct attn_error *err)
{
    const int k = file_of_name(s, t->name);

    if (k < 0)
        return attn_fail(err, ATTN_EPARSE, "%s: no tensor '%s'", s->path, t->name);
    return s->files[k].reader->read(s->files[k].self, t, as, out, err);
}

/* The bytes a plain or quantized tensor of dtype takes, and the alignment its readers need. */
static size_t
stored_bytes(const struct tensor_info *t, size_t *align)
{
    size_t per = 1;
    const size_t block = tensor_dtype_block(t->dtype, &per);

    *align = t->dtype == TENSOR_U8 ? 1 : t->dtype == TENSOR_BF16 || t->dtype == TENSOR_F16 ? 2 : 4;
    return per > 0 && t->numel % per == 0 && t->numel / per <= SIZE_MAX / block
               ? t->numel / per * block
               : 0;
}

const void *
tensors_map(struct tensor_source *s, const struct tensor_info *t, enum tensor_dtype as)
{
    const int k = file_of_name(s, t->name);
    struct tensor_file *f = k >= 0 ? &s->files[k] : NULL;
    size_t align = 4;
    const size_t bytes = stored_bytes(t, &align);
    uint64_t offset = 0, size = 0;
    int fd = -1;
    const uint16_t one = 1;
    const unsigned char *at;

    /* (the files are little-endian: a big-endian host reads them, converting) */
    if (*(const unsigned char *)&one != 1 || f == NULL || f->reader->locate == NULL ||
        t->refused != NULL || as != t->dtype || bytes == 0 || bytes != t->end - t->begin ||
        f->map_refused ||
        !f->reader->locate(f->self, t, &fd, &offset, &size) || size > SIZE_MAX)
        return NULL;
    if (f->map == NULL) {
        struct attn_error ignored;
        /* (a file that cannot be mapped is read, as before) */
        f->map = filemap_open(fd, f->reader->file_of(f->self, t), (size_t)size, &ignored);
        f->map_refused = f->map == NULL;
        if (f->map == NULL)
            return NULL;
    }
    if (offset > filemap_len(f->map))
        return NULL;
    at = filemap_data(f->map) + offset;
    return (uintptr_t)at % align == 0 && filemap_holds(f->map, at, bytes) ? at : NULL;
}

int
tensors_take_maps(struct tensor_source *s, struct filemap **maps, int max)
{
    int n = 0;

    for (int i = 0; i < s->file_count && n < max; i++)
        if (s->files[i].map != NULL) {
            maps[n++] = s->files[i].map;
            s->files[i].map = NULL;
        }
    return n;
}

enum attn_status
tensors_read_f32(const struct tensor_source *s, const struct tensor_info *t, float *out,
                 struct attn_error *err)
{
    return tensors_read(s, t, TENSOR_F32, out, err);
}

int
tensors_count(const struct tensor_source *s)
{
    int n = 0;

    for (int i = 0; i < s->file_count; i++)
        n += s->files[i].reader->catalogue(s->files[i].self)->count;
    return n;
}

const struct tensor_info *
tensors_at(const struct tensor_source *s, int i)
{
    for (int k = 0; k < s->file_count; k++) {
        const struct tensor_catalogue *c = s->files[k].reader->catalogue(s->files[k].self);
        if (i < c->count)
            return &c->tensors[i];
        i -= c->count;
    }
    return NULL;
}

size_t
tensors_held_bytes(const struct tensor_source *s, bool keep_bf16, bool keep_quant)
{
    size_t bytes = 0;

    for (int k = 0; k < s->file_count; k++) {
        const struct tensor_catalogue *c = s->files[k].reader->catalogue(s->files[k].self);
        for (int t = 0; t < c->count; t++) {
            const struct tensor_info *ti = &c->tensors[t];
            const size_t each = keep_bf16 && ti->dtype == TENSOR_BF16 && ti->ndim >= 2 ? 2 : 4;
            if (((keep_quant && tensor_dtype_kept_as_blocks(ti->dtype)) ||
                 ti->dtype == TENSOR_U8) &&
                ti->ndim >= 2 && ti->refused == NULL) {
                /* (kept as the file's blocks; raw bytes (MXFP4's in a safetensors file) as they are) */
                if (ti->end - ti->begin > SIZE_MAX - bytes - 64)
                    return SIZE_MAX;
                bytes += (ti->end - ti->begin + 63) / 64 * 64;
                continue;
            }
            if (ti->numel > (SIZE_MAX - bytes - 64) / each)
                return SIZE_MAX;
            bytes += (ti->numel * each + 63) / 64 * 64;
        }
    }
    return bytes;
}

const char *
tensors_file_of(const struct tensor_source *s, const struct tensor_info *t)
{
    const int k = file_of_name(s, t->name);

    return k >= 0 ? s->files[k].reader->file_of(s->files[k].self, t) : s->path;
}
