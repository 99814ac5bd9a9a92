/* tensor.c: a tensor's dtype and its values as float32 (see tensor.h). */
#include "config.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif
#if defined(__aarch64__) && defined(__GNUC__)
#include <arm_neon.h>
#endif

#include "attnscope/files/crc32c.h"
#include "attnscope/formats/quants.h"
#include "attnscope/formats/tensor.h"
#include "attnscope/kernels/cpu.h"

static const struct {
    const char *name;
    enum tensor_dtype dtype;
    size_t size;
} dtypes[] = { { "F32", TENSOR_F32, 4 }, { "F16", TENSOR_F16, 2 }, { "BF16", TENSOR_BF16, 2 },
               { "U8", TENSOR_U8, 1 } };

_Static_assert(TENSOR_Q6_K - TENSOR_Q4_0 == QUANT_Q6_K - QUANT_Q4_0 && TENSOR_DTYPES - TENSOR_Q4_0 == QUANT_TYPES,
               "the quantized dtypes are quants.h's, in its order");

/* The quantized type of dtype (TENSOR_Q4_0 or after). */
static enum quant_type
quant_of(enum tensor_dtype dtype)
{
    return (enum quant_type)(dtype - TENSOR_Q4_0);
}

size_t
tensor_dtype_size(enum tensor_dtype dtype)
{
    return dtype < TENSOR_Q4_0 ? dtypes[dtype].size : 0;
}

size_t
tensor_dtype_block(enum tensor_dtype dtype, size_t *values)
{
    if (dtype < TENSOR_Q4_0) {
        *values = 1;
        return dtypes[dtype].size;
    }
    *values = (size_t)quant_block_values(quant_of(dtype));
    return quant_block_bytes(quant_of(dtype));
}

bool
tensor_dtype_kept_as_blocks(enum tensor_dtype dtype)
{
    return dtype >= TENSOR_Q4_0 || dtype == TENSOR_F16;
}

const char *
tensor_dtype_name(enum tensor_dtype dtype)
{
    return dtype < TENSOR_Q4_0 ? dtypes[dtype].name : quant_name(quant_of(dtype));
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
        /* inf, NaN (its payload kept, quieted: what F16C's conversion gives, so the vector
           code below and this one agree bit for bit) */
        bits = sign | 0x7f800000u | (man << 13) | (man != 0 ? 0x400000u : 0);
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

#if defined(__x86_64__) && defined(__GNUC__)
/* Half precision sixteen at a time (F16C's exact conversion; little-endian hosts only). */
__attribute__((target("avx512f"))) static size_t
f16_avx512(const unsigned char *src, size_t n, float *out)
{
    size_t i = 0;

    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(out + i, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(src + 2 * i))));
    return i;
}

/* Eight at a time (AVX2 machines have F16C: the same conversion). */
__attribute__((target("avx2,f16c"))) static size_t
f16_avx2(const unsigned char *src, size_t n, float *out)
{
    size_t i = 0;

    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(src + 2 * i))));
    return i;
}
#endif
#if defined(__aarch64__) && defined(__GNUC__) && defined(__ARM_FP16_FORMAT_IEEE)
/* Four at a time (NEON's FCVTL: exact, subnormals too). */
static size_t
f16_neon(const unsigned char *src, size_t n, float *out)
{
    size_t i = 0;

    for (; i + 4 <= n; i += 4) {
        uint16_t h[4];
        memcpy(h, src + 2 * i, sizeof h);
        vst1q_f32(out + i, vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(h))));
    }
    return i;
}
#endif

void
tensor_to_f32(enum tensor_dtype dtype, const unsigned char *src, size_t n, float *out)
{
    size_t i = 0;

    if (dtype >= TENSOR_Q4_0) {
        quant_dequantize(quant_of(dtype), src, n / (size_t)quant_block_values(quant_of(dtype)), out);
        return;
    }
#if defined(__x86_64__) && defined(__GNUC__)
    if (dtype == TENSOR_F16 && cpu_isa() == CPU_AVX512)
        i = f16_avx512(src, n, out);
    else if (dtype == TENSOR_F16 && cpu_isa() == CPU_AVX2)
        i = f16_avx2(src, n, out);
#endif
#if defined(__aarch64__) && defined(__GNUC__) && defined(__ARM_FP16_FORMAT_IEEE)
    if (dtype == TENSOR_F16 && cpu_isa() == CPU_NEON)
        i = f16_neon(src, n, out);
#endif
    for (; i < n; i++) {
        if (dtype == TENSOR_F32) {
            /* Byte by byte: never an unaligned dereference, and little-endian on any host. */
            const unsigned char *b = src + 4 * i;
            uint32_t bits = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
                            (uint32_t)b[3] << 24;
            memcpy(&out[i], &bits, sizeof out[i]);
        } else if (dtype == TENSOR_U8) {
            out[i] = (float)src[i];
        } else {
            uint16_t bits = (uint16_t)(src[2 * i] | (src[2 * i + 1] << 8));
            out[i] = dtype == TENSOR_F16 ? tensor_f16_to_f32(bits) : tensor_bf16_to_f32(bits);
        }
    }
}

/* ------------------------------------------------------------ the catalogue */

/* The tensors array the name index sorts, for qsort's comparison. */
static const struct tensor_info *sorting;

static int
by_name(const void *a, const void *b)
{
    return strcmp(sorting[*(const int *)a].name, sorting[*(const int *)b].name);
}

enum attn_status
tensor_catalogue_index(struct tensor_catalogue *c, const char *path, struct attn_error *err)
{
    free(c->by_name);
    c->by_name = malloc(((size_t)c->count + 1) * sizeof *c->by_name);
    if (c->by_name == NULL)
        return attn_fail(err, ATTN_ENOMEM, "%s: out of memory", path);
    for (int i = 0; i < c->count; i++)
        c->by_name[i] = i;
    /* (qsort's comparison takes no context: the array is a static for the sort's length.) */
    sorting = c->tensors;
    qsort(c->by_name, (size_t)c->count, sizeof *c->by_name, by_name);
    sorting = NULL;
    for (int i = 1; i < c->count; i++)
        if (strcmp(c->tensors[c->by_name[i - 1]].name, c->tensors[c->by_name[i]].name) == 0)
            return attn_fail(err, ATTN_EPARSE, "%s: names tensor '%s' twice", path,
                             c->tensors[c->by_name[i]].name);
    return ATTN_OK;
}

const struct tensor_info *
tensor_catalogue_find(const struct tensor_catalogue *c, const char *name)
{
    int lo = 0;
    int hi = c->count;

    if (c->by_name == NULL)
        return NULL;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        int k = strcmp(c->tensors[c->by_name[mid]].name, name);
        if (k == 0)
            return &c->tensors[c->by_name[mid]];
        if (k < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

void
tensor_catalogue_free(struct tensor_catalogue *c)
{
    if (c->tensors != NULL)
        for (int i = 0; i < c->count; i++) {
            free(c->tensors[i].name);
            free(c->tensors[i].refused);
        }
    free(c->tensors);
    free(c->by_name);
    memset(c, 0, sizeof *c);
}

/* ------------------------------------------------------------ reading values */

/* n values of esize bytes, little-endian at src, into out in the host's order. */
static void
to_host(const unsigned char *src, size_t n, size_t esize, unsigned char *out, bool little)
{
    if (little) {
        memcpy(out, src, n * esize);
        return;
    }
    for (size_t i = 0; i < n; i++)
        for (size_t b = 0; b < esize; b++)
            out[i * esize + b] = src[i * esize + esize - 1 - b];
}

enum attn_status
tensor_read(const struct tensor_info *t, tensor_bytes_fn bytes, void *reader, const char *path,
            enum tensor_dtype as, void *out, struct attn_error *err)
{
    size_t per_block;
    const size_t bsize = tensor_dtype_block(t->dtype, &per_block);
    const uint16_t one = 1;
    unsigned char little;
    uint32_t crc = 0;
    /* A piece at a time through a small buffer: little-endian bytes to values on any host. */
    unsigned char chunk[1 << 16];
    const size_t per = sizeof chunk / bsize; /* blocks (values, for a plain dtype) a piece */
    const size_t blocks = t->numel / per_block;
    enum attn_status rc;

    if (t->refused != NULL)
        return attn_fail(err, ATTN_EPARSE, "%s: tensor '%s' %s", path, t->name, t->refused);
    if (as != TENSOR_F32 && as != t->dtype)
        return attn_fail(err, ATTN_EPARSE, "%s: tensor '%s' is %s, not %s", path, t->name,
                         tensor_dtype_name(t->dtype), tensor_dtype_name(as));
    if (t->numel % per_block != 0 || t->end - t->begin != blocks * bsize)
        return attn_fail(err, ATTN_EPARSE, "%s: tensor '%s' has %zu bytes for %zu values of %s",
                         path, t->name, t->end - t->begin, t->numel, tensor_dtype_name(t->dtype));
    memcpy(&little, &one, 1);
    if (as == t->dtype && as >= TENSOR_Q4_0 && little != 1)
        return attn_fail(err, ATTN_EPARSE, "%s: tensor '%s': %s blocks are kept on little-endian "
                                           "machines only",
                         path, t->name, tensor_dtype_name(as));
    if (as == t->dtype && little == 1 && !t->has_crc) {
        /* Its own type on a little-endian host: the file's bytes are the values (or blocks). */
        rc = bytes(reader, t->unit, t->begin, out, blocks * bsize, err);
        if (rc != ATTN_OK)
            return rc;
    } else if (as == t->dtype && little == 1) {
        /*
         * The same, a megabyte at a time, each checked while it is still in
         * the cache (checking 500 MB after reading it read it all again
         * from memory).
         */
        const size_t total = blocks * bsize;
        unsigned char *to = out;
        for (size_t done = 0; done < total;) {
            const size_t n = total - done < ((size_t)1 << 20) ? total - done : (size_t)1 << 20;
            rc = bytes(reader, t->unit, t->begin + done, to + done, n, err);
            if (rc != ATTN_OK)
                return rc;
            crc = crc32c_extend(crc, to + done, n);
            done += n;
        }
    } else {
        for (size_t done = 0; done < blocks;) {
            const size_t n = blocks - done < per ? blocks - done : per;
            rc = bytes(reader, t->unit, t->begin + done * bsize, chunk, n * bsize, err);
            if (rc != ATTN_OK)
                return rc;
            if (t->has_crc)
                crc = crc32c_extend(crc, chunk, n * bsize);
            if (as == TENSOR_F32)
                tensor_to_f32(t->dtype, chunk, n * per_block, (float *)out + done * per_block);
            else
                to_host(chunk, n, bsize, (unsigned char *)out + done * bsize, little == 1);
            done += n;
        }
    }
    if (t->has_crc && crc32c_mask(crc) != t->crc32c)
        return attn_fail(err, ATTN_EPARSE,
                         "%s: tensor '%s' fails its checksum (CRC-32C %08x, the index says %08x): "
                         "the file is damaged, or not the one its index was written with",
                         path, t->name, crc32c_mask(crc), t->crc32c);
    return ATTN_OK;
}

enum attn_status
tensor_read_f32(const struct tensor_info *t, tensor_bytes_fn bytes, void *reader, const char *path,
                float *out, struct attn_error *err)
{
    return tensor_read(t, bytes, reader, path, TENSOR_F32, out, err);
}
