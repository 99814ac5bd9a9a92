/*
 * safetensors.h: reading a .safetensors file (Hugging Face's format).
 *
 * The file is an 8-byte little-endian header length N, N bytes of JSON
 * (a tensor name -> {"dtype", "shape", "data_offsets": [begin, end]} per
 * tensor, and an optional "__metadata__" of strings), then the data.  The
 * header is read and parsed with jansson and everything in it is checked
 * before any tensor is touched: the header fits the file, every dtype is
 * one attnscope reads (F32, F16, BF16), every shape's size is its byte
 * range, and the ranges tile the data exactly (no overlap, no hole,
 * nothing past the end; an empty tensor may start where another does), as
 * the format's specification asks.  Messages name the file and the tensor.
 *
 * The tensors' bytes are read (pread), never mapped: a mapped file that is
 * truncated or rewritten while it is open (a checkpoint saved over it from
 * a training run in another window) kills the reader with SIGBUS at its
 * next touch, and the terminal with it.  A copy read once cannot change.
 * Names are found by binary search, so loading is linear in the header
 * (a model of 16,000 layers has 200,000 tensors).
 */
#ifndef ATTNSCOPE_SAFETENSORS_H
#define ATTNSCOPE_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#include "attnscope/base/status.h"
#include "attnscope/formats/tensor.h"

/* The largest header attnscope reads (the format's own readers stop at 100 MB). */
#define SAFETENSORS_HEADER_MAX ((uint64_t)100 * 1000 * 1000)
#define SAFETENSORS_NDIM_MAX TENSOR_NDIM_MAX

struct safetensors {
    char *path;
    int fd;                /* open for the tensors' bytes, or -1 */
    uint64_t data_start;   /* where the data starts in the file: 8 + N */
    size_t data_size;
    struct tensor_catalogue cat; /* the tensors, in the header's order */
};

/* Opens and checks path; on failure nothing is left open and err names the file. */
enum attn_status safetensors_open(struct safetensors *st, const char *path,
                                  struct attn_error *err);
void safetensors_close(struct safetensors *st);

/* The tensor of that name, or NULL (a binary search). */
const struct tensor_info *safetensors_find(const struct safetensors *st, const char *name);

/*
 * Reads the tensor's values into out (t->numel floats), converted exactly
 * to float32 (F16 and BF16 have float32 values).  A file that has become
 * shorter than its header says since it was opened is reported, never
 * read past.
 */
enum attn_status safetensors_read_f32(const struct safetensors *st, const struct tensor_info *t,
                                      float *out, struct attn_error *err);
/* The same as float32 or as stored (tensor_read's as). */
enum attn_status safetensors_read(const struct safetensors *st, const struct tensor_info *t,
                                  enum tensor_dtype as, void *out, struct attn_error *err);

#endif
