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

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attnscope/base/status.h"

#define TENSOR_NDIM_MAX 8

/*
 * The plain types, then ggml's quantized blocks (a GGUF file's; quants.h),
 * in the order of enum quant_type.
 */
enum tensor_dtype {
    TENSOR_F32,
    TENSOR_F16,
    TENSOR_BF16,
    TENSOR_U8,      /* raw bytes (gpt-oss's MXFP4 blocks and scales in a safetensors file) */
    TENSOR_Q4_0,
    TENSOR_Q4_1,
    TENSOR_Q5_0,
    TENSOR_Q5_1,
    TENSOR_Q8_0,
    TENSOR_Q2_K,
    TENSOR_Q3_K,
    TENSOR_Q4_K,
    TENSOR_Q5_K,
    TENSOR_Q6_K,
    TENSOR_MXFP4,
    TENSOR_DTYPES
};

struct tensor_info {
    char *name;
    /*
     * Why the tensor cannot be read, or NULL: a reader lists a file's
     * tensors of other dtypes or layouts (a step counter, a sliced
     * variable) without refusing the file; reading one is refused with this.
     */
    char *refused;
    enum tensor_dtype dtype;
    int ndim;
    int64_t shape[TENSOR_NDIM_MAX];
    size_t numel;
    size_t begin, end; /* its bytes, within its unit */
    int unit;          /* which of the reader's files or entries holds them */
    uint32_t crc32c;   /* the masked CRC32C of its bytes, when has_crc (TensorFlow's) */
    int has_crc;
};

/* The bytes of one element of a plain dtype (F32, F16, BF16), and any dtype's name ("F32"). */
size_t tensor_dtype_size(enum tensor_dtype dtype);
/*
 * The bytes of one block of dtype and, into *values, the values it holds
 * (1 and its size for a plain dtype; 32 or 256 for a quantized one).
 */
size_t tensor_dtype_block(enum tensor_dtype dtype, size_t *values);
const char *tensor_dtype_name(enum tensor_dtype dtype);
/*
 * Whether a matrix of dtype is kept as the file's own blocks where a
 * loader keeps quantized matrices (a GGUF's: ggml's block types, and half
 * precision, multiplied from its 16-bit patterns as bfloat16 is).
 */
bool tensor_dtype_kept_as_blocks(enum tensor_dtype dtype);

/* IEEE half and bfloat16 bit patterns to float32 (exact). */
float tensor_f16_to_f32(uint16_t h);
float tensor_bf16_to_f32(uint16_t b);

/* n little-endian values of dtype at src into out, as float32 (exact; whole blocks of a
   quantized dtype, dequantized as ggml does). */
void tensor_to_f32(enum tensor_dtype dtype, const unsigned char *src, size_t n, float *out);

/*
 * A reader's tensors, found by name: the array in the file's order and an
 * index sorted by name (a binary search; 200,000 tensors cost nothing).
 */
struct tensor_catalogue {
    struct tensor_info *tensors;
    int count;
    int *by_name;
};

/*
 * Sorts the names once the tensors are in; a name given twice is refused
 * (path for the message).
 */
enum attn_status tensor_catalogue_index(struct tensor_catalogue *c, const char *path,
                                        struct attn_error *err);
const struct tensor_info *tensor_catalogue_find(const struct tensor_catalogue *c,
                                                const char *name);
/* Frees the names, the reasons and the arrays. */
void tensor_catalogue_free(struct tensor_catalogue *c);

/* Reads len bytes at offset of a reader's unit (a shard, a zip entry) into buf. */
typedef enum attn_status (*tensor_bytes_fn)(void *reader, int unit, uint64_t offset, void *buf,
                                            size_t len, struct attn_error *err);

/*
 * t's values as float32 into out (t->numel of them), its bytes read through
 * bytes and converted exactly; a tensor with a checksum (has_crc) is
 * checked against it, and one the reader refused is refused (path names
 * the file in messages).
 */
enum attn_status tensor_read_f32(const struct tensor_info *t, tensor_bytes_fn bytes, void *reader,
                                 const char *path, float *out, struct attn_error *err);

/*
 * The same as float32 (as TENSOR_F32) or as stored (as t->dtype: t->numel
 * values of its size in the host's byte order, a bfloat16 model's weights
 * kept as they ship; a quantized tensor's blocks as the file has them, on a
 * little-endian machine); another as is refused by name.
 */
enum attn_status tensor_read(const struct tensor_info *t, tensor_bytes_fn bytes, void *reader,
                             const char *path, enum tensor_dtype as, void *out,
                             struct attn_error *err);

#endif
