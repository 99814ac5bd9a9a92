/* tensor.c: a tensor's dtype and its values as float32 (see tensor.h). */
#include "config.h"

#include <string.h>

#include "attnscope/files/tensor.h"

static const struct {
    const char *name;
    enum tensor_dtype dtype;
    size_t size;
} dtypes[] = { { "F32", TENSOR_F32, 4 }, { "F16", TENSOR_F16, 2 }, { "BF16", TENSOR_BF16, 2 } };

size_t
tensor_dtype_size(enum tensor_dtype dtype)
{
    return dtypes[dtype].size;
}

const char *
tensor_dtype_name(enum tensor_dtype dtype)
{
    return dtypes[dtype].name;
}

float
tensor_bf16_to_f32(uint16_t b)
{
    uint32_t bits = (uint32_t)b << 16;
    float f;

    memcpy(&f, &bits, sizeof f);
    return f;
}

float
tensor_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t man = h & 0x3ffu;
    uint32_t bits;
    float f;

    if (exp == 0x1f) {
        bits = sign | 0x7f800000u | (man << 13); /* inf, NaN (payload kept) */
    } else if (exp != 0) {
        bits = sign | ((exp + 112u) << 23) | (man << 13); /* 127 - 15 = 112 */
    } else if (man == 0) {
        bits = sign; /* +-0 */
    } else {
        /* A subnormal half: normalise it, each shift one power of two down. */
        exp = 113;
        while (!(man & 0x400u)) {
            man <<= 1;
            exp--;
        }
        bits = sign | (exp << 23) | ((man & 0x3ffu) << 13);
    }
    memcpy(&f, &bits, sizeof f);
    return f;
}

void
tensor_to_f32(enum tensor_dtype dtype, const unsigned char *src, size_t n, float *out)
{
    for (size_t i = 0; i < n; i++) {
        if (dtype == TENSOR_F32) {
            /* Byte by byte: never an unaligned dereference, and little-endian on any host. */
            const unsigned char *b = src + 4 * i;
            uint32_t bits = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
                            (uint32_t)b[3] << 24;
            memcpy(&out[i], &bits, sizeof out[i]);
        } else {
            uint16_t bits = (uint16_t)(src[2 * i] | (src[2 * i + 1] << 8));
            out[i] = dtype == TENSOR_F16 ? tensor_f16_to_f32(bits) : tensor_bf16_to_f32(bits);
        }
    }
}
