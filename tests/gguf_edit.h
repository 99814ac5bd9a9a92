/*
 * gguf_edit.h: a valid GGUF file (one of llama.cpp's writer's fixtures)
 * copied with one metadata key given another value, or removed: what a
 * hostile or damaged file would say about a real model.  The tensors'
 * infos and data are copied as they are, the data moved to the next
 * multiple of the file's alignment after the new metadata.
 */
#ifndef ATTNSCOPE_TESTS_GGUF_EDIT_H
#define ATTNSCOPE_TESTS_GGUF_EDIT_H

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gguf_writer.h"

/* GGUF's value types (gguf.h's numbering): the ones an edit writes. */
enum { GE_U32 = 4, GE_I32 = 5, GE_F32 = 6, GE_BOOL = 7, GE_STRING = 8, GE_F64 = 12 };

/* One value to write: its type and its bytes (a string's without its length). */
struct ge_value {
    int type; /* -1: remove the key */
    unsigned char bytes[256];
    size_t len;
};

static inline struct ge_value
ge_f32(float v)
{
    struct ge_value x = { GE_F32, { 0 }, 4 };
    memcpy(x.bytes, &v, 4);
    return x;
}

static inline struct ge_value
ge_i32(int32_t v)
{
    struct ge_value x = { GE_I32, { 0 }, 4 };
    memcpy(x.bytes, &v, 4);
    return x;
}

static inline struct ge_value
ge_u32(uint32_t v)
{
    struct ge_value x = { GE_U32, { 0 }, 4 };
    memcpy(x.bytes, &v, 4);
    return x;
}

static inline struct ge_value
ge_string(const char *s)
{
    struct ge_value x = { GE_STRING, { 0 }, strlen(s) };
    ck_assert_uint_lt(x.len, sizeof x.bytes);
    memcpy(x.bytes, s, x.len);
    return x;
}

/* An array of n 32-bit unsigned counts (GGUF's array type 9). */
static inline struct ge_value
ge_u32s(const uint32_t *v, size_t n)
{
    struct ge_value x = { 9, { 0 }, 4 + 8 + 4 * n };
    const uint32_t item = GE_U32;
    const uint64_t count = n;

    ck_assert_uint_le(x.len, sizeof x.bytes);
    memcpy(x.bytes, &item, 4);
    memcpy(x.bytes + 4, &count, 8);
    memcpy(x.bytes + 12, v, 4 * n);
    return x;
}

static inline struct ge_value
ge_removed(void)
{
    struct ge_value x = { -1, { 0 }, 0 };
    return x;
}

static inline uint64_t
ge_u64_at(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static inline uint32_t
ge_u32_at(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The bytes of one value of type at p (arrays whole); fixtures are trusted, so unchecked. */
static inline size_t
ge_value_size(const unsigned char *p, uint32_t type)
{
    static const size_t fixed[] = { 1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8 };
    size_t at = 0;

    ck_assert_uint_le(type, 12);
    if (type == GE_STRING)
        return 8 + ge_u64_at(p);
    if (type == 9) {
        const uint32_t of = ge_u32_at(p);
        const uint64_t count = ge_u64_at(p + 4);
        at = 12;
        for (uint64_t k = 0; k < count; k++)
            at += ge_value_size(p + at, of);
        return at;
    }
    return fixed[type];
}

/*
 * src copied to dst with key set to v (added after the others, or in
 * place of the key src has) or, v.type -1, left out.
 */
static inline void
gguf_edit(const char *src, const char *dst, const char *key, struct ge_value v)
{
    FILE *f = fopen(src, "rb");
    unsigned char *b;
    long size;
    size_t at = 24, tensors_at, data_at, alignment = 32;
    uint64_t tensors, kvs, kept = 0;
    struct gw out = { 0 }, kv = { 0 };

    ck_assert_msg(f != NULL, "cannot open %s", src);
    ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
    size = ftell(f);
    rewind(f);
    b = malloc((size_t)size);
    ck_assert_ptr_nonnull(b);
    ck_assert_uint_eq(fread(b, 1, (size_t)size, f), (size_t)size);
    fclose(f);
    ck_assert(memcmp(b, "GGUF", 4) == 0 && ge_u32_at(b + 4) == 3);
    tensors = ge_u64_at(b + 8);
    kvs = ge_u64_at(b + 16);
    for (uint64_t k = 0; k < kvs; k++) {
        const size_t start = at, key_len = (size_t)ge_u64_at(b + at);
        const int match = key_len == strlen(key) && memcmp(b + at + 8, key, key_len) == 0;
        const uint32_t type = ge_u32_at(b + at + 8 + key_len);
        at += 8 + key_len + 4;
        if (key_len == strlen("general.alignment") &&
            memcmp(b + start + 8, "general.alignment", key_len) == 0)
            alignment = ge_u32_at(b + at);
        at += ge_value_size(b + at, type);
        if (match)
            continue;
        gw_bytes(&kv, b + start, at - start);
        kept++;
    }
    tensors_at = at;
    for (uint64_t t = 0; t < tensors; t++) {
        const uint32_t dims = ge_u32_at(b + at + 8 + ge_u64_at(b + at));
        at += 8 + ge_u64_at(b + at) + 4 + 8 * (size_t)dims + 4 + 8;
    }
    data_at = (at + alignment - 1) / alignment * alignment;
    if (v.type >= 0) {
        gw_str(&kv, key);
        gw_u32(&kv, (uint32_t)v.type);
        if (v.type == GE_STRING)
            gw_u64(&kv, v.len);
        gw_bytes(&kv, v.bytes, v.len);
        kept++;
    }
    gw_bytes(&out, "GGUF", 4);
    gw_u32(&out, 3);
    gw_u64(&out, tensors);
    gw_u64(&out, kept);
    gw_bytes(&out, kv.b, kv.len);
    gw_bytes(&out, b + tensors_at, at - tensors_at);
    while (out.len % alignment != 0)
        gw_bytes(&out, "", 1);
    gw_bytes(&out, b + data_at, (size_t)size - data_at);
    free(kv.b);
    free(b);
    gw_save(&out, dst);
}

/*
 * In the file at path (a copy), n bytes at byte offset of tensor name's
 * data overwritten with bytes; returns the tensor's ggml type number.
 */
static inline uint32_t
gguf_edit_tensor(const char *path, const char *name, size_t offset, const void *bytes, size_t n)
{
    FILE *f = fopen(path, "r+b");
    unsigned char head[24], *b;
    long size;
    size_t at = 24, alignment = 32, data_at, where = SIZE_MAX;
    uint32_t type = 0;

    ck_assert_msg(f != NULL, "cannot open %s", path);
    ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
    size = ftell(f);
    rewind(f);
    b = malloc((size_t)size);
    ck_assert_ptr_nonnull(b);
    ck_assert_uint_eq(fread(b, 1, (size_t)size, f), (size_t)size);
    memcpy(head, b, sizeof head);
    for (uint64_t k = 0; k < ge_u64_at(head + 16); k++) {
        const size_t key_len = (size_t)ge_u64_at(b + at);
        const uint32_t kind = ge_u32_at(b + at + 8 + key_len);
        if (key_len == strlen("general.alignment") &&
            memcmp(b + at + 8, "general.alignment", key_len) == 0)
            alignment = ge_u32_at(b + at + 8 + key_len + 4);
        at += 8 + key_len + 4;
        at += ge_value_size(b + at, kind);
    }
    for (uint64_t t = 0; t < ge_u64_at(head + 8); t++) {
        const size_t name_len = (size_t)ge_u64_at(b + at);
        const uint32_t dims = ge_u32_at(b + at + 8 + name_len);
        const size_t type_at = at + 8 + name_len + 4 + 8 * (size_t)dims;
        if (name_len == strlen(name) && memcmp(b + at + 8, name, name_len) == 0) {
            type = ge_u32_at(b + type_at);
            where = (size_t)ge_u64_at(b + type_at + 4);
        }
        at = type_at + 4 + 8;
    }
    ck_assert_msg(where != SIZE_MAX, "%s has no tensor %s", path, name);
    data_at = (at + alignment - 1) / alignment * alignment;
    ck_assert_int_eq(fseek(f, (long)(data_at + where + offset), SEEK_SET), 0);
    ck_assert_uint_eq(fwrite(bytes, 1, n, f), n);
    ck_assert_int_eq(fclose(f), 0);
    free(b);
    return type;
}

/* In the file at path (a copy), float32 tensor name's element index set to value. */
static inline void
gguf_edit_f32(const char *path, const char *name, size_t index, float value)
{
    ck_assert_uint_eq(gguf_edit_tensor(path, name, 4 * index, &value, 4), 0); /* (F32) */
}

#endif
