/*
 * gguf_writer.h: GGUF files written from C by the tests, to any shape
 * (a damaged one included): a growing buffer of little-endian fields in
 * the order the format has them.  The valid fixtures come from llama.cpp's
 * own writer (tests/oracle/gguf_fixtures.py); these make what it would
 * never write.
 */
#ifndef ATTNSCOPE_TESTS_GGUF_WRITER_H
#define ATTNSCOPE_TESTS_GGUF_WRITER_H

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct gw {
    unsigned char *b;
    size_t len, cap;
};

static inline void
gw_bytes(struct gw *w, const void *p, size_t n)
{
    if (w->len + n > w->cap) {
        w->cap = (w->len + n) * 2 + 64;
        w->b = realloc(w->b, w->cap);
        ck_assert_ptr_nonnull(w->b);
    }
    memcpy(w->b + w->len, p, n);
    w->len += n;
}

static inline void
gw_u32(struct gw *w, uint32_t v)
{
    unsigned char b[4] = { (unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                           (unsigned char)(v >> 24) };
    gw_bytes(w, b, 4);
}

static inline void
gw_u64(struct gw *w, uint64_t v)
{
    gw_u32(w, (uint32_t)v);
    gw_u32(w, (uint32_t)(v >> 32));
}

static inline void
gw_str(struct gw *w, const char *s)
{
    gw_u64(w, strlen(s));
    gw_bytes(w, s, strlen(s));
}

/* The header: magic, version 3, the counts. */
static inline void
gw_header(struct gw *w, uint64_t tensors, uint64_t kvs)
{
    gw_bytes(w, "GGUF", 4);
    gw_u32(w, 3);
    gw_u64(w, tensors);
    gw_u64(w, kvs);
}

/* A key with a uint32 value (type 4) and a string value (type 8). */
static inline void
gw_kv_u32(struct gw *w, const char *key, uint32_t v)
{
    gw_str(w, key);
    gw_u32(w, 4);
    gw_u32(w, v);
}

static inline void
gw_kv_str(struct gw *w, const char *key, const char *v)
{
    gw_str(w, key);
    gw_u32(w, 8);
    gw_str(w, v);
}

/* A tensor's info: ggml's dimensions (the row first), its ggml type and offset in the data. */
static inline void
gw_tensor(struct gw *w, const char *name, uint64_t ne0, uint64_t ne1, uint32_t type, uint64_t offset)
{
    gw_str(w, name);
    gw_u32(w, 2);
    gw_u64(w, ne0);
    gw_u64(w, ne1);
    gw_u32(w, type);
    gw_u64(w, offset);
}

/* Zeros up to the next multiple of 32 (the default alignment), then n bytes of data. */
static inline void
gw_data(struct gw *w, size_t n)
{
    static const unsigned char zero[64];
    while (w->len % 32 != 0)
        gw_bytes(w, zero, 1);
    for (size_t k = 0; k < n; k++)
        gw_bytes(w, (unsigned char[]){ (unsigned char)(k * 7) }, 1);
}

static inline void
gw_save(struct gw *w, const char *path)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(w->b, 1, w->len, f), w->len);
    fclose(f);
    free(w->b);
    memset(w, 0, sizeof *w);
}

#endif
