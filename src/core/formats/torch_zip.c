/* torch_zip.c: a torch.save archive's state dict (see torch_zip.h). */
#include "config.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zip.h>

#include "attnscope/files/fileio.h"
#include "attnscope/formats/pickle.h"
#include "attnscope/formats/torch_zip.h"

/* libzip's message for an error code. */
static const char *
zip_message(int code, char *buf, size_t size)
{
    zip_error_t e;

    zip_error_init_with_code(&e, code);
    snprintf(buf, size, "%s", zip_error_strerror(&e));
    zip_error_fini(&e);
    return buf;
}

/* The whole entry index (at most max bytes) into a buffer the caller frees. */
static enum attn_status
read_entry(struct torch_zip *tz, zip_uint64_t index, size_t max, unsigned char **out, size_t *len,
           struct attn_error *err)
{
    zip_stat_t st;
    zip_file_t *f;
    zip_int64_t got;

    *out = NULL;
    if (zip_stat_index(tz->zip, index, 0, &st) != 0 || !(st.valid & ZIP_STAT_SIZE))
        return attn_fail(err, ATTN_EPARSE, "%s: %s", tz->path, zip_strerror(tz->zip));
    if (st.size > max)
        return attn_fail(err, ATTN_ELIMIT, "%s: %s is %llu bytes (attnscope reads at most %zu MiB)",
                         tz->path, st.name, (unsigned long long)st.size, max >> 20);
    *len = (size_t)st.size;
    *out = malloc(*len + 1);
    if (*out == NULL)
        return attn_fail(err, ATTN_ENOMEM, "%s: out of memory", tz->path);
    f = zip_fopen_index(tz->zip, index, 0);
    if (f == NULL)
        return attn_fail(err, ATTN_EPARSE, "%s: %s: %s", tz->path, st.name,
                         zip_strerror(tz->zip));
    got = zip_fread(f, *out, *len);
    if (got < 0 || (size_t)got != *len) {
        char msg[128];
        snprintf(msg, sizeof msg, "%s", zip_file_strerror(f));
        zip_fclose(f);
        return attn_fail(err, ATTN_EPARSE, "%s: %s does not read whole: %s", tz->path, st.name,
                         got < 0 ? msg : "it is shorter than its directory says");
    }
    zip_fclose(f);
    (*out)[*len] = '\0';
    return ATTN_OK;
}

/*
 * The archive's folder: the prefix of its one FOLDER/data.pkl, into
 * folder; the entry's index into *pkl.
 */
static enum attn_status
find_pickle(struct torch_zip *tz, char *folder, size_t size, zip_uint64_t *pkl,
            struct attn_error *err)
{
    const zip_int64_t n = zip_get_num_entries(tz->zip, 0);
    int found = 0;

    for (zip_int64_t i = 0; i < n; i++) {
        const char *name = zip_get_name(tz->zip, (zip_uint64_t)i, ZIP_FL_ENC_RAW);
        const char *slash = name != NULL ? strchr(name, '/') : NULL;
        if (slash == NULL || strcmp(slash, "/data.pkl") != 0)
            continue;
        if (found++ == 0) {
            snprintf(folder, size, "%.*s", (int)(slash - name), name);
            *pkl = (zip_uint64_t)i;
        }
    }
    if (found == 0)
        return attn_fail(err, ATTN_EPARSE,
                         "%s: a zip archive without a FOLDER/data.pkl: not a file torch.save wrote",
                         tz->path);
    if (found > 1)
        return attn_fail(err, ATTN_EPARSE, "%s: holds %d data.pkl files; torch.save writes one",
                         tz->path, found);
    if (strlen(folder) + 64 > size)
        return attn_fail(err, ATTN_EPARSE, "%s: the archive's folder name is too long", tz->path);
    return ATTN_OK;
}

/* A byteorder file, when there is one, says little. */
static enum attn_status
check_byteorder(struct torch_zip *tz, const char *folder, struct attn_error *err)
{
    char name[400];
    zip_int64_t i;
    unsigned char *text;
    size_t len;
    enum attn_status rc;

    snprintf(name, sizeof name, "%s/byteorder", folder);
    i = zip_name_locate(tz->zip, name, ZIP_FL_ENC_RAW);
    if (i < 0)
        return ATTN_OK;
    rc = read_entry(tz, (zip_uint64_t)i, 64, &text, &len, err);
    if (rc == ATTN_OK && strcmp((const char *)text, "little") != 0)
        rc = attn_fail(err, ATTN_EPARSE,
                       "%s: saved on a big-endian machine (byteorder says so); attnscope reads "
                       "little-endian archives",
                       tz->path);
    free(text);
    return rc;
}

/* The unit (storage) of key: found in the archive once, then by the map. */
static int
unit_of(struct torch_zip *tz, json_t *units, const char *folder, const struct pickle_tensor *p,
        struct attn_error *err)
{
    json_t *known = json_object_get(units, p->storage);
    char name[400];
    zip_int64_t i;
    zip_stat_t st;
    const int u = tz->unit_count;
    const uint64_t want = (uint64_t)p->storage_numel * tensor_dtype_size(p->dtype);

    if (known != NULL)
        return (int)json_integer_value(known);
    snprintf(name, sizeof name, "%s/data/%s", folder, p->storage);
    i = zip_name_locate(tz->zip, name, ZIP_FL_ENC_RAW);
    if (i < 0 || zip_stat_index(tz->zip, (zip_uint64_t)i, 0, &st) != 0) {
        attn_fail(err, ATTN_EPARSE, "%s: tensor '%s' is stored in %s, which the archive lacks",
                  tz->path, p->name, name);
        return -1;
    }
    if ((uint64_t)p->storage_numel > UINT64_MAX / 8 || st.size < want) {
        attn_fail(err, ATTN_EPARSE,
                  "%s: %s holds %llu bytes, but its tensors' storage is said to have %lld values "
                  "of %s",
                  tz->path, name, (unsigned long long)st.size, (long long)p->storage_numel,
                  tensor_dtype_name(p->dtype));
        return -1;
    }
    tz->unit_entry[u] = (uint64_t)i;
    tz->unit_size[u] = st.size;
    tz->unit_stored[u] = (st.valid & ZIP_STAT_COMP_METHOD) && st.comp_method == ZIP_CM_STORE;
    if (json_object_set_new(units, p->storage, json_integer(u)) != 0) {
        attn_fail(err, ATTN_ENOMEM, "%s: out of memory", tz->path);
        return -1;
    }
    tz->unit_count++;
    return u;
}

/*
 * t from the pickle's p: its elements inside its storage (offset + the
 * farthest element the shape and strides reach), and readable as one run
 * of bytes when its strides are row-major (refused by name otherwise).
 */
static int
describe(struct torch_zip *tz, const struct pickle_tensor *p, int unit, struct tensor_info *t,
         struct attn_error *err)
{
    const size_t esize = tensor_dtype_size(p->dtype);
    uint64_t last = (uint64_t)p->offset;
    uint64_t expect = 1;
    bool contiguous = true;

    t->dtype = p->dtype;
    t->ndim = p->ndim;
    t->unit = unit;
    t->numel = 1;
    for (int d = 0; d < p->ndim; d++) {
        t->shape[d] = p->shape[d];
        if (p->shape[d] > 0 && t->numel > SIZE_MAX / 8 / (uint64_t)p->shape[d]) {
            attn_fail(err, ATTN_EPARSE, "%s: tensor '%s' has too many elements", tz->path,
                      p->name);
            return -1;
        }
        t->numel *= (size_t)p->shape[d];
    }
    for (int d = p->ndim - 1; d >= 0; d--) {
        if (p->shape[d] > 1) {
            if ((uint64_t)p->stride[d] > UINT64_MAX / 2 / (uint64_t)p->shape[d]) {
                attn_fail(err, ATTN_EPARSE, "%s: tensor '%s' has strides past any storage",
                          tz->path, p->name);
                return -1;
            }
            last += (uint64_t)(p->shape[d] - 1) * (uint64_t)p->stride[d];
            contiguous = contiguous && (uint64_t)p->stride[d] == expect;
        }
        expect *= (uint64_t)p->shape[d];
    }
    if (t->numel > 0 && (last >= (uint64_t)p->storage_numel || last < (uint64_t)p->offset)) {
        attn_fail(err, ATTN_EPARSE,
                  "%s: tensor '%s' reaches element %llu of its storage, which has %lld", tz->path,
                  p->name, (unsigned long long)last, (long long)p->storage_numel);
        return -1;
    }
    t->begin = (size_t)p->offset * esize;
    t->end = t->begin + t->numel * esize;
    if (!contiguous && t->numel > 0 &&
        (t->refused = strdup("is a view that is not contiguous (a transposed or sliced tensor); "
                             "save a state dict of .contiguous() copies")) == NULL) {
        attn_fail(err, ATTN_ENOMEM, "%s: out of memory", tz->path);
        return -1;
    }
    return 0;
}

/* The catalogue from the pickle's state dict. */
static enum attn_status
catalogue(struct torch_zip *tz, const char *folder, const struct pickle_state_dict *sd,
          struct attn_error *err)
{
    json_t *units = json_object();
    enum attn_status rc = ATTN_EPARSE;

    tz->cat.tensors = calloc((size_t)sd->count + 1, sizeof *tz->cat.tensors);
    tz->unit_entry = calloc((size_t)sd->count + 1, sizeof *tz->unit_entry);
    tz->unit_size = calloc((size_t)sd->count + 1, sizeof *tz->unit_size);
    tz->unit_stored = calloc((size_t)sd->count + 1, sizeof *tz->unit_stored);
    if (units == NULL || tz->cat.tensors == NULL || tz->unit_entry == NULL ||
        tz->unit_size == NULL || tz->unit_stored == NULL) {
        json_decref(units);
        return attn_fail(err, ATTN_ENOMEM, "%s: out of memory", tz->path);
    }
    for (int i = 0; i < sd->count; i++) {
        struct tensor_info *t = &tz->cat.tensors[i];
        int unit = unit_of(tz, units, folder, &sd->tensors[i], err);
        if (unit < 0)
            goto done;
        t->name = strdup(sd->tensors[i].name);
        if (t->name == NULL) {
            rc = attn_fail(err, ATTN_ENOMEM, "%s: out of memory", tz->path);
            goto done;
        }
        tz->cat.count++;
        if (describe(tz, &sd->tensors[i], unit, t, err) != 0)
            goto done;
    }
    rc = tensor_catalogue_index(&tz->cat, tz->path, err);
done:
    json_decref(units);
    return rc;
}

enum attn_status
torch_zip_open(struct torch_zip *tz, const char *path, struct attn_error *err)
{
    char folder[300];
    char msg[160];
    struct pickle_state_dict sd;
    zip_uint64_t pkl = 0;
    unsigned char *pickle = NULL;
    size_t len = 0;
    int fd;
    int code = 0;
    enum attn_status rc;

    memset(tz, 0, sizeof *tz);
    memset(&sd, 0, sizeof sd);
    tz->path = strdup(path);
    if (tz->path == NULL)
        return attn_fail(err, ATTN_ENOMEM, "%s: out of memory", path);
    /* Through the regular-file check: a FIFO must not hold the program up. */
    if ((rc = fileio_open_regular(path, &fd, err)) != ATTN_OK)
        goto fail;
    tz->zip = zip_fdopen(fd, ZIP_RDONLY | ZIP_CHECKCONS, &code);
    if (tz->zip == NULL) {
        close(fd);
        rc = attn_fail(err, ATTN_EPARSE, "%s: not a readable zip archive: %s", path,
                       zip_message(code, msg, sizeof msg));
        goto fail;
    }
    if ((rc = find_pickle(tz, folder, sizeof folder, &pkl, err)) != ATTN_OK ||
        (rc = check_byteorder(tz, folder, err)) != ATTN_OK ||
        (rc = read_entry(tz, pkl, TORCH_PICKLE_MAX, &pickle, &len, err)) != ATTN_OK ||
        (rc = pickle_state_dict(pickle, len, path, &sd, err)) != ATTN_OK ||
        (rc = catalogue(tz, folder, &sd, err)) != ATTN_OK)
        goto fail;
    tz->under = sd.under;
    free(pickle);
    pickle_state_dict_free(&sd);
    return ATTN_OK;
fail:
    free(pickle);
    pickle_state_dict_free(&sd);
    torch_zip_close(tz);
    return rc;
}

void
torch_zip_close(struct torch_zip *tz)
{
    tensor_catalogue_free(&tz->cat);
    if (tz->zip != NULL)
        zip_discard(tz->zip);
    free(tz->unit_entry);
    free(tz->unit_size);
    free(tz->unit_stored);
    free(tz->path);
    memset(tz, 0, sizeof *tz);
}

const struct tensor_info *
torch_zip_find(const struct torch_zip *tz, const char *name)
{
    return tensor_catalogue_find(&tz->cat, name);
}

/*
 * A stored entry's bytes [offset, offset + len) into p, through windows of
 * libzip's (zip_source_zip with a start and a length).  A window that is
 * not the whole entry is read straight from the archive, without the
 * CRC-32 of the whole entry that zip_fread computes as it goes (which
 * cost as much as reading the bytes: GPT-2 small's 500 MB took 2.6 times
 * safetensors' time); so every window is kept shorter than the entry.
 * The bytes are checked as safetensors' are: each tensor's range lies
 * inside its storage, and a short read is an error.
 */
static enum attn_status
stored_bytes(const struct torch_zip *tz, int unit, uint64_t offset, unsigned char *p, size_t len,
             struct attn_error *err)
{
    const uint64_t size = tz->unit_size[unit];
    const uint64_t most = size > 1 ? (size - 1 < (64u << 20) ? size - 1 : (64u << 20)) : 1;

    while (len > 0) {
        const size_t n = len < most ? len : (size_t)most;
        zip_source_t *src = zip_source_zip(tz->zip, tz->zip, tz->unit_entry[unit], 0, offset,
                                           (zip_int64_t)n);
        zip_int64_t got = -1;

        if (src != NULL && zip_source_open(src) == 0) {
            got = 0;
            while (got >= 0 && (size_t)got < n) {
                zip_int64_t r = zip_source_read(src, p + got, n - (size_t)got);
                if (r <= 0)
                    break;
                got += r;
            }
            zip_source_close(src);
        }
        if (src != NULL)
            zip_source_free(src);
        if (got != (zip_int64_t)n)
            return attn_fail(err, ATTN_EIO,
                             "%s: a storage ends before its tensors do: the file was truncated "
                             "or replaced while attnscope read it (%s)",
                             tz->path, zip_strerror(tz->zip));
        p += n;
        len -= n;
        offset += n;
    }
    return ATTN_OK;
}

/* The bytes of storage unit at offset, for tensor_read_f32 (a compressed entry: read up to it). */
static enum attn_status
storage_bytes(void *reader, int unit, uint64_t offset, void *buf, size_t len,
              struct attn_error *err)
{
    const struct torch_zip *tz = reader;
    zip_file_t *f;
    unsigned char *p = buf;
    enum attn_status rc = ATTN_OK;

    if (offset > tz->unit_size[unit] || len > tz->unit_size[unit] - offset)
        return attn_fail(err, ATTN_EPARSE, "%s: a read past the end of a storage", tz->path);
    if (tz->unit_stored[unit])
        return stored_bytes(tz, unit, offset, p, len, err);
    f = zip_fopen_index(tz->zip, tz->unit_entry[unit], 0);
    if (f == NULL)
        return attn_fail(err, ATTN_EIO, "%s: %s", tz->path, zip_strerror(tz->zip));
    /* A compressed entry (an archive zipped again): read from its start, up to offset. */
    while (rc == ATTN_OK && offset > 0) {
        unsigned char skip[1 << 14];
        zip_int64_t got = zip_fread(f, skip, offset < sizeof skip ? (size_t)offset : sizeof skip);
        if (got <= 0)
            rc = attn_fail(err, ATTN_EIO, "%s: a storage ends early: %s", tz->path,
                           zip_file_strerror(f));
        else
            offset -= (uint64_t)got;
    }
    while (rc == ATTN_OK && len > 0) {
        zip_int64_t got = zip_fread(f, p, len);
        if (got <= 0)
            rc = attn_fail(err, ATTN_EIO,
                           "%s: a storage ends before its tensors do: the file was truncated or "
                           "replaced while attnscope read it (%s)",
                           tz->path, zip_file_strerror(f));
        else {
            p += got;
            len -= (size_t)got;
        }
    }
    zip_fclose(f);
    return rc;
}

enum attn_status
torch_zip_read_f32(const struct torch_zip *tz, const struct tensor_info *t, float *out,
                   struct attn_error *err)
{
    return torch_zip_read(tz, t, TENSOR_F32, out, err);
}

enum attn_status
torch_zip_read(const struct torch_zip *tz, const struct tensor_info *t, enum tensor_dtype as,
               void *out, struct attn_error *err)
{
    return tensor_read(t, storage_bytes, (void *)tz, tz->path, as, out, err);
}
