/*
 * pth_writer.h: writes a state dict as torch.save does (a zip archive
 * holding archive/data.pkl and a storage per tensor, archive/data/N), so
 * that tests can make the book's files in any shape, damaged or hostile,
 * without Python.  The pickle is protocol 2: OrderedDict() filled by one
 * SETITEMS, each tensor _rebuild_tensor_v2 of a FloatStorage's persistent
 * id, as torch.save writes them (pickletools' reading of a real file).
 *
 * pth_write_pickle() wraps bytes of the caller's as data.pkl (compressed
 * or stored), for pickles no state dict would be.
 */
#ifndef ATTNSCOPE_PTH_WRITER_H
#define ATTNSCOPE_PTH_WRITER_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zip.h>

/* One float32 tensor: its name and shape; its values are made from seed. */
struct pth_tensor {
    const char *name;
    int ndim;
    int64_t shape[4];
};

struct pth_buffer {
    unsigned char *p;
    size_t len, cap;
};

static inline void
pth_put(struct pth_buffer *b, const void *bytes, size_t n)
{
    if (b->len + n > b->cap) {
        size_t cap = b->cap > 0 ? b->cap : 256;
        while (cap < b->len + n)
            cap *= 2;
        b->p = realloc(b->p, cap);
        if (b->p == NULL)
            abort();
        b->cap = cap;
    }
    memcpy(b->p + b->len, bytes, n);
    b->len += n;
}

static inline void
pth_text(struct pth_buffer *b, const char *s)
{
    pth_put(b, s, strlen(s));
}

/* BINUNICODE: 'X', a 4-byte little-endian length, the bytes. */
static inline void
pth_string(struct pth_buffer *b, const char *s)
{
    const uint32_t n = (uint32_t)strlen(s);
    const unsigned char len[4] = { (unsigned char)n, (unsigned char)(n >> 8),
                                   (unsigned char)(n >> 16), (unsigned char)(n >> 24) };

    pth_text(b, "X");
    pth_put(b, len, 4);
    pth_put(b, s, n);
}

/* LONG1 with 8 bytes: any int64. */
static inline void
pth_int(struct pth_buffer *b, int64_t v)
{
    unsigned char bytes[10] = { 0x8a, 8 };

    for (int k = 0; k < 8; k++)
        bytes[2 + k] = (unsigned char)((uint64_t)v >> (8 * k));
    pth_put(b, bytes, sizeof bytes);
}

static inline int64_t
pth_numel(const struct pth_tensor *t)
{
    int64_t n = 1;

    for (int d = 0; d < t->ndim; d++)
        n *= t->shape[d];
    return n;
}

/* The pickle of a state dict of the n tensors, each its own storage named by its index. */
static inline void
pth_state_dict_pickle(struct pth_buffer *b, const struct pth_tensor *t, int n)
{
    pth_text(b, "\x80\x02" "ccollections\nOrderedDict\n)R(");
    for (int i = 0; i < n; i++) {
        char key[16];
        int64_t stride = 1;
        snprintf(key, sizeof key, "%d", i);
        pth_string(b, t[i].name);
        pth_text(b, "ctorch._utils\n_rebuild_tensor_v2\n((");
        pth_string(b, "storage");
        pth_text(b, "ctorch\nFloatStorage\n");
        pth_string(b, key);
        pth_string(b, "cpu");
        pth_int(b, pth_numel(&t[i]));
        pth_text(b, "tQ");
        pth_int(b, 0);
        pth_text(b, "(");
        for (int d = 0; d < t[i].ndim; d++)
            pth_int(b, t[i].shape[d]);
        pth_text(b, "t(");
        {
            int64_t strides[4];
            for (int d = t[i].ndim - 1; d >= 0; d--) {
                strides[d] = stride;
                stride *= t[i].shape[d];
            }
            for (int d = 0; d < t[i].ndim; d++)
                pth_int(b, strides[d]);
        }
        pth_text(b, "t\x89" "ccollections\nOrderedDict\n)RtR");
    }
    pth_text(b, "u.");
}

/* Adds bytes (copied; libzip frees its copy) as name; compress or store them. */
static inline int
pth_add(zip_t *z, const char *name, const void *bytes, size_t n, int compress)
{
    void *copy = n > 0 ? malloc(n) : NULL;
    zip_source_t *src;
    zip_int64_t at;

    /* (An empty entry has no buffer: libzip would not free one of no length.) */
    if (n > 0 && copy == NULL)
        return -1;
    if (n > 0)
        memcpy(copy, bytes, n);
    src = zip_source_buffer(z, copy, n, n > 0);
    if (src == NULL) {
        free(copy);
        return -1;
    }
    if ((at = zip_file_add(z, name, src, ZIP_FL_OVERWRITE)) < 0) {
        zip_source_free(src);
        return -1;
    }
    return zip_set_file_compression(z, (zip_uint64_t)at, compress ? ZIP_CM_DEFLATE : ZIP_CM_STORE,
                                    0);
}

/*
 * An archive at path of the pickle's bytes as archive/data.pkl (deflated
 * when compress) and the n tensors' storages; 0, or -1 when it cannot.
 * Tensor i's values are sin(seed + i + k), small and all different.
 */
static inline int
pth_write_archive(const char *path, const void *pickle, size_t len, int compress,
                  const struct pth_tensor *t, int n, int seed)
{
    int code;
    zip_t *z = zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, &code);

    if (z == NULL)
        return -1;
    if (pth_add(z, "archive/data.pkl", pickle, len, compress) != 0 ||
        pth_add(z, "archive/byteorder", "little", 6, 0) != 0) {
        zip_discard(z);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        const int64_t numel = pth_numel(&t[i]);
        float *v = malloc((size_t)(numel > 0 ? numel : 1) * sizeof *v);
        char name[32];
        int rc;
        if (v == NULL) {
            zip_discard(z);
            return -1;
        }
        for (int64_t k = 0; k < numel; k++)
            v[k] = 0.1f * (float)__builtin_sin((double)(seed + i * 7 + k));
        snprintf(name, sizeof name, "archive/data/%d", i);
        rc = pth_add(z, name, v, (size_t)numel * sizeof *v, 0);
        free(v);
        if (rc != 0) {
            zip_discard(z);
            return -1;
        }
    }
    return zip_close(z) == 0 ? 0 : -1;
}

/* A state dict of the n tensors at path, as torch.save writes one; 0 or -1. */
static inline int
pth_write(const char *path, const struct pth_tensor *t, int n, int seed)
{
    struct pth_buffer b = { NULL, 0, 0 };
    int rc;

    pth_state_dict_pickle(&b, t, n);
    rc = pth_write_archive(path, b.p, b.len, 0, t, n, seed);
    free(b.p);
    return rc;
}

/* The pickle's bytes as data.pkl with no storages (deflated when compress); 0 or -1. */
static inline int
pth_write_pickle(const char *path, const void *pickle, size_t len, int compress)
{
    return pth_write_archive(path, pickle, len, compress, NULL, 0, 0);
}

#endif
