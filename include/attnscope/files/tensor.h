/*
 * tensor.h: what every reader of weights files says of a tensor, and the
 * exact conversions of its values to float32.
 *
 * A reader (safetensors.h, tf_checkpoint.h, torch_zip.h) describes each
 * tensor it holds by a struct tensor_info: its name, dtype, shape and
 * where its bytes are (begin and end in one of the reader's units: a
 * shard, a data file, a zip entry).  The values are stored little-endian
 * in every format attnscope reads; F16 and BF16 convert exactly to float32.
 */
#ifndef ATTNSCOPE_TENSOR_H
#define ATTNSCOPE_TENSOR_H

#include <stddef.h>
#include <stdint.h>

#define TENSOR_NDIM_MAX 8

enum tensor_dtype { TENSOR_F32, TENSOR_F16, TENSOR_BF16 };

struct tensor_info {
    char *name;
    enum tensor_dtype dtype;
    int ndim;
    int64_t shape[TENSOR_NDIM_MAX];
    size_t numel;
    size_t begin, end; /* its bytes, within its unit */
    int unit;          /* which of the reader's files or entries holds them */
    uint32_t crc32c;   /* the masked CRC32C of its bytes, when has_crc (TensorFlow's) */
    int has_crc;
};

/* The bytes of one element of dtype, and its name ("F32"). */
size_t tensor_dtype_size(enum tensor_dtype dtype);
const char *tensor_dtype_name(enum tensor_dtype dtype);

/* IEEE half and bfloat16 bit patterns to float32 (exact). */
float tensor_f16_to_f32(uint16_t h);
float tensor_bf16_to_f32(uint16_t b);

/* n little-endian values of dtype at src into out, as float32 (exact). */
void tensor_to_f32(enum tensor_dtype dtype, const unsigned char *src, size_t n, float *out);

#endif
