/*
 * safetensors.h: reading a .safetensors file (Hugging Face's format).
 *
 * The file is an 8-byte little-endian header length N, N bytes of JSON
 * (a tensor name -> {"dtype", "shape", "data_offsets": [begin, end]} per
 * tensor, and an optional "__metadata__" of strings), then the data.  The
 * file is mapped, never read whole; the header is parsed with jansson and
 * everything in it is checked before any tensor is touched: the header
 * fits the file, every dtype is one attnscope reads (F32, F16, BF16), every
 * shape's size is its byte range, and the ranges tile the data exactly (no
 * overlap, no hole, nothing past the end), as the format's specification
 * asks.  Messages name the file and the tensor.
 */
#ifndef ATTNSCOPE_SAFETENSORS_H
#define ATTNSCOPE_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#include "attnscope/status.h"

/* The largest header attnscope reads (the format's own readers stop at 100 MB). */
#define SAFETENSORS_HEADER_MAX ((uint64_t)100 * 1000 * 1000)
#define SAFETENSORS_NDIM_MAX 8

enum st_dtype { ST_F32, ST_F16, ST_BF16 };

struct st_tensor {
    char *name;
    enum st_dtype dtype;
    int ndim;
    int64_t shape[SAFETENSORS_NDIM_MAX];
    size_t numel;
    size_t begin, end; /* bytes, from the start of the data */
};

struct safetensors {
    char *path;
    const unsigned char *map; /* the whole file, mapped read-only */
    size_t map_size;
    const unsigned char *data; /* where the tensors' bytes start */
    size_t data_size;
    int count;
    struct st_tensor *tensors; /* in the header's order */
};

/* Maps and checks path; on failure nothing is left open and err names the file. */
enum attn_status safetensors_open(struct safetensors *st, const char *path,
                                  struct attn_error *err);
void safetensors_close(struct safetensors *st);

/* The tensor of that name, or NULL. */
const struct st_tensor *safetensors_find(const struct safetensors *st, const char *name);

/* The bytes of one element of dtype. */
size_t safetensors_dtype_size(enum st_dtype dtype);
const char *safetensors_dtype_name(enum st_dtype dtype);

/*
 * The tensor's values as float32: the mapped bytes themselves when the
 * tensor is F32 and 4-byte aligned (*copy NULL), otherwise converted
 * exactly (F16 and BF16 have float32 values) into a buffer returned in
 * *copy for the caller to free.  NULL, with err set, when out of memory.
 */
const float *safetensors_f32(const struct safetensors *st, const struct st_tensor *t, float **copy,
                             struct attn_error *err);

/* IEEE half and bfloat16 bit patterns to float32 (exact). */
float safetensors_f16_to_f32(uint16_t h);
float safetensors_bf16_to_f32(uint16_t b);

#endif
