/* quants.c: ggml's quantized blocks as float32 (see quants.h). */
#include "config.h"

#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define QUANTS_X86 1
#endif

#include "attnscope/formats/quants.h"
#include "attnscope/kernels/cpu.h"
#include "attnscope/kernels/linalg.h"
#include "attnscope/kernels/parallel.h"
#include "attnscope/formats/tensor.h"

#define QK 32   /* the values of a Q4_0 .. Q8_0 block */
#define QK_K 256 /* of a K-quant's */

static const struct {
    const char *name;
    int values;
    size_t bytes;
} types[QUANT_TYPES] = {
    [QUANT_Q4_0] = { "Q4_0", QK, 2 + QK / 2 },
    [QUANT_Q4_1] = { "Q4_1", QK, 4 + QK / 2 },
    [QUANT_Q5_0] = { "Q5_0", QK, 2 + 4 + QK / 2 },
    [QUANT_Q5_1] = { "Q5_1", QK, 4 + 4 + QK / 2 },
    [QUANT_Q8_0] = { "Q8_0", QK, 2 + QK },
    [QUANT_Q2_K] = { "Q2_K", QK_K, QK_K / 16 + QK_K / 4 + 4 },
    [QUANT_Q3_K] = { "Q3_K", QK_K, QK_K / 8 + QK_K / 4 + 12 + 2 },
    [QUANT_Q4_K] = { "Q4_K", QK_K, 4 + 12 + QK_K / 2 },
    [QUANT_Q5_K] = { "Q5_K", QK_K, 4 + 12 + QK_K / 8 + QK_K / 2 },
    [QUANT_Q6_K] = { "Q6_K", QK_K, QK_K / 2 + QK_K / 4 + QK_K / 16 + 2 },
    [QUANT_MXFP4] = { "MXFP4", QK, 1 + QK / 2 },
};

/* MXFP4's codes (e2m1) as ggml's kvalues: each value doubled, the scale then halved. */
static const int8_t mxfp4_values[16] = { 0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12 };

/* 2^(e - 128): an E8M0 scale halved (ggml's e8m0_to_fp32_half), exact in float32. */
float
quant_e8m0_half(uint8_t e)
{
    const uint32_t bits = e < 2 ? 0x00200000u << e : (uint32_t)(e - 1) << 23;
    float f;

    memcpy(&f, &bits, sizeof f);
    return f;
}

static void
mxfp4(const unsigned char *b, float *y)
{
    const float d = quant_e8m0_half(b[0]);

    for (int j = 0; j < QK / 2; j++) {
        y[j] = (float)mxfp4_values[b[1 + j] & 0x0f] * d;
        y[j + QK / 2] = (float)mxfp4_values[b[1 + j] >> 4] * d;
    }
}

int
quant_block_values(enum quant_type q)
{
    return types[q].values;
}

size_t
quant_block_bytes(enum quant_type q)
{
    return types[q].bytes;
}

const char *
quant_name(enum quant_type q)
{
    return types[q].name;
}

/* The half-precision number at b (little-endian), widened. */
static float
half_at(const unsigned char *b)
{
    return tensor_f16_to_f32((uint16_t)(b[0] | b[1] << 8));
}

/* Q4_0, Q4_1: low nibbles are values 0-15, high nibbles 16-31. */
static void
q4(const unsigned char *b, bool with_min, float *y)
{
    const float d = half_at(b);
    const float m = with_min ? half_at(b + 2) : 0.0f;
    const unsigned char *qs = b + (with_min ? 4 : 2);

    for (int j = 0; j < QK / 2; j++) {
        if (with_min) {
            y[j] = (float)(qs[j] & 0x0f) * d + m;
            y[j + QK / 2] = (float)(qs[j] >> 4) * d + m;
        } else {
            y[j] = (float)((qs[j] & 0x0f) - 8) * d;
            y[j + QK / 2] = (float)((qs[j] >> 4) - 8) * d;
        }
    }
}

/* Q5_0, Q5_1: as Q4, with each value's fifth bit from a 32-bit mask. */
static void
q5(const unsigned char *b, bool with_min, float *y)
{
    const float d = half_at(b);
    const float m = with_min ? half_at(b + 2) : 0.0f;
    const unsigned char *hb = b + (with_min ? 4 : 2);
    const unsigned char *qs = hb + 4;
    const uint32_t high = (uint32_t)hb[0] | (uint32_t)hb[1] << 8 | (uint32_t)hb[2] << 16 |
                          (uint32_t)hb[3] << 24;

    for (int j = 0; j < QK / 2; j++) {
        const int lo = (qs[j] & 0x0f) | (int)((high >> j) & 1) << 4;
        const int hi = (qs[j] >> 4) | (int)((high >> (j + QK / 2)) & 1) << 4;
        if (with_min) {
            y[j] = (float)lo * d + m;
            y[j + QK / 2] = (float)hi * d + m;
        } else {
            y[j] = (float)(lo - 16) * d;
            y[j + QK / 2] = (float)(hi - 16) * d;
        }
    }
}

static void
q8_0(const unsigned char *b, float *y)
{
    const float d = half_at(b);

    for (int j = 0; j < QK; j++)
        y[j] = (float)(int8_t)b[2 + j] * d;
}

/* Q2_K: 16 sub-blocks of 16, each a 4-bit scale and a 4-bit minimum; 2-bit values. */
static void
q2_k(const unsigned char *b, float *y)
{
    const unsigned char *scales = b;
    const unsigned char *qs = b + QK_K / 16;
    const float d = half_at(b + QK_K / 16 + QK_K / 4);
    const float dmin = half_at(b + QK_K / 16 + QK_K / 4 + 2);
    int sub = 0;

    for (int half = 0; half < 2; half++, qs += 32)
        for (int shift = 0; shift < 8; shift += 2)
            for (int part = 0; part < 2; part++, sub++) {
                const float dl = d * (float)(scales[sub] & 0x0f);
                const float ml = dmin * (float)(scales[sub] >> 4);
                for (int l = 0; l < 16; l++)
                    *y++ = dl * (float)((qs[part * 16 + l] >> shift) & 3) - ml;
            }
}

/* Q3_K: 16 sub-blocks of 16, 6-bit signed scales packed in 12 bytes; 2 low bits and a high bit. */
static void
q3_k(const unsigned char *b, float *y)
{
    const unsigned char *hmask = b;
    const unsigned char *qs = b + QK_K / 8;
    const unsigned char *packed = qs + QK_K / 4;
    const float d = half_at(packed + 12);
    int scales[16];
    unsigned char bit = 1;
    int sub = 0;

    /* Scale k: its low 4 bits from byte k (k < 8, low nibble) or k - 8 (high nibble), its top 2 from bytes 8-11. */
    for (int k = 0; k < 16; k++) {
        const int low = k < 8 ? packed[k] & 0x0f : packed[k - 8] >> 4;
        const int top = (packed[8 + k % 4] >> (2 * (k / 4))) & 3;
        scales[k] = (low | top << 4) - 32;
    }
    for (int half = 0; half < 2; half++, qs += 32)
        for (int shift = 0; shift < 8; shift += 2, bit <<= 1)
            for (int part = 0; part < 2; part++, sub++) {
                const float dl = d * (float)scales[sub];
                for (int l = 0; l < 16; l++) {
                    const int i = part * 16 + l;
                    const int q = ((qs[i] >> shift) & 3) - ((hmask[i] & bit) ? 0 : 4);
                    *y++ = dl * (float)q;
                }
            }
}

/* A K-quant's 6-bit scale and minimum of sub-block j from its 12 packed bytes (Q4_K, Q5_K). */
void
quant_scale_min(int j, const unsigned char *q, int *scale, int *min)
{
    if (j < 4) {
        *scale = q[j] & 63;
        *min = q[j + 4] & 63;
    } else {
        *scale = (q[j + 4] & 0x0f) | (q[j - 4] >> 6) << 4;
        *min = (q[j + 4] >> 4) | (q[j] >> 6) << 4;
    }
}

/* Q4_K and Q5_K: 8 sub-blocks of 32, each a 6-bit scale and minimum; 4 bits (and a fifth). */
static void
q45_k(const unsigned char *b, bool five, float *y)
{
    const float d = half_at(b);
    const float dmin = half_at(b + 2);
    const unsigned char *packed = b + 4;
    const unsigned char *qh = b + 16;
    const unsigned char *qs = b + 16 + (five ? QK_K / 8 : 0);

    for (int pair = 0; pair < 4; pair++, qs += 32) {
        int sc, m;
        float d1, m1, d2, m2;
        quant_scale_min(2 * pair, packed, &sc, &m);
        d1 = d * (float)sc;
        m1 = dmin * (float)m;
        quant_scale_min(2 * pair + 1, packed, &sc, &m);
        d2 = d * (float)sc;
        m2 = dmin * (float)m;
        for (int l = 0; l < 32; l++) {
            const int high = five && (qh[l] >> (2 * pair)) & 1 ? 16 : 0;
            *y++ = d1 * (float)((qs[l] & 0x0f) + high) - m1;
        }
        for (int l = 0; l < 32; l++) {
            const int high = five && (qh[l] >> (2 * pair + 1)) & 1 ? 16 : 0;
            *y++ = d2 * (float)((qs[l] >> 4) + high) - m2;
        }
    }
}

/* Q6_K: 16 sub-blocks of 16, each an 8-bit signed scale; 4 low bits and 2 high bits. */
static void
q6_k(const unsigned char *b, float *y)
{
    const unsigned char *ql = b;
    const unsigned char *qh = b + QK_K / 2;
    const int8_t *sc = (const int8_t *)(b + QK_K / 2 + QK_K / 4);
    const float d = half_at(b + QK_K / 2 + QK_K / 4 + QK_K / 16);

    for (int half = 0; half < 2; half++, y += 128, ql += 64, qh += 32, sc += 8)
        for (int l = 0; l < 32; l++) {
            const int s = l / 16;
            const int q1 = ((ql[l] & 0x0f) | ((qh[l] >> 0) & 3) << 4) - 32;
            const int q2 = ((ql[l + 32] & 0x0f) | ((qh[l] >> 2) & 3) << 4) - 32;
            const int q3 = ((ql[l] >> 4) | ((qh[l] >> 4) & 3) << 4) - 32;
            const int q4 = ((ql[l + 32] >> 4) | ((qh[l] >> 6) & 3) << 4) - 32;
            y[l] = d * (float)sc[s] * (float)q1;
            y[l + 32] = d * (float)sc[s + 2] * (float)q2;
            y[l + 64] = d * (float)sc[s + 4] * (float)q3;
            y[l + 96] = d * (float)sc[s + 6] * (float)q4;
        }
}

#ifdef QUANTS_X86
/*
 * The types of the files people keep (Q4_0, Q8_0, Q4_K, Q6_K) sixteen
 * values at a time: the scalar code's operations lane for lane (the same
 * integers, converted exactly, then the same products and difference), so
 * the same bits; a prompt's forward widens every matrix once.
 */

/* Sixteen bytes at p as 32-bit lanes (zero- or sign-extended). */
#define U16X(p) _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(p)))
#define S16X(p) _mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(p)))

__attribute__((target("avx512f"))) static void
q4_0_avx512(const unsigned char *b, float *y)
{
    const __m512 d = _mm512_set1_ps(half_at(b));
    const __m512i v = U16X(b + 2), eight = _mm512_set1_epi32(8);

    _mm512_storeu_ps(y, _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(
                                          _mm512_and_si512(v, _mm512_set1_epi32(15)), eight)), d));
    _mm512_storeu_ps(y + 16, _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(
                                               _mm512_srli_epi32(v, 4), eight)), d));
}

__attribute__((target("avx512f"))) static void
q8_0_avx512(const unsigned char *b, float *y)
{
    const __m512 d = _mm512_set1_ps(half_at(b));

    _mm512_storeu_ps(y, _mm512_mul_ps(_mm512_cvtepi32_ps(S16X(b + 2)), d));
    _mm512_storeu_ps(y + 16, _mm512_mul_ps(_mm512_cvtepi32_ps(S16X(b + 18)), d));
}

__attribute__((target("avx512f"))) static void
q4_k_avx512(const unsigned char *b, float *y)
{
    const float d = half_at(b), dmin = half_at(b + 2);
    const unsigned char *qs = b + 16;
    const __m512i low = _mm512_set1_epi32(15);

    for (int pair = 0; pair < 4; pair++, qs += 32) {
        int sc, m;
        __m512 d1, m1, d2, m2;
        quant_scale_min(2 * pair, b + 4, &sc, &m);
        d1 = _mm512_set1_ps(d * (float)sc), m1 = _mm512_set1_ps(dmin * (float)m);
        quant_scale_min(2 * pair + 1, b + 4, &sc, &m);
        d2 = _mm512_set1_ps(d * (float)sc), m2 = _mm512_set1_ps(dmin * (float)m);
        for (int h = 0; h < 2; h++) {
            const __m512i v = U16X(qs + 16 * h);
            _mm512_storeu_ps(y + 16 * h, _mm512_sub_ps(_mm512_mul_ps(d1, _mm512_cvtepi32_ps(
                                                                             _mm512_and_si512(v, low))),
                                                       m1));
            _mm512_storeu_ps(y + 32 + 16 * h,
                             _mm512_sub_ps(_mm512_mul_ps(d2, _mm512_cvtepi32_ps(_mm512_srli_epi32(v, 4))),
                                           m2));
        }
        y += 64;
    }
}

__attribute__((target("avx512f"))) static void
q6_k_avx512(const unsigned char *b, float *y)
{
    const unsigned char *ql = b, *qh = b + QK_K / 2;
    const int8_t *sc = (const int8_t *)(b + QK_K / 2 + QK_K / 4);
    const float d = half_at(b + QK_K / 2 + QK_K / 4 + QK_K / 16);
    const __m512i low = _mm512_set1_epi32(15), two = _mm512_set1_epi32(3),
                  off = _mm512_set1_epi32(32);

    for (int half = 0; half < 2; half++, y += 128, ql += 64, qh += 32, sc += 8)
        for (int l = 0; l < 32; l += 16) {
            const int s = l / 16;
            const __m512i a = U16X(ql + l), c = U16X(ql + l + 32), h = U16X(qh + l);
            const __m512i q1 = _mm512_sub_epi32(
                _mm512_or_si512(_mm512_and_si512(a, low), _mm512_slli_epi32(_mm512_and_si512(h, two), 4)), off);
            const __m512i q2 = _mm512_sub_epi32(
                _mm512_or_si512(_mm512_and_si512(c, low),
                                _mm512_slli_epi32(_mm512_and_si512(_mm512_srli_epi32(h, 2), two), 4)),
                off);
            const __m512i q3 = _mm512_sub_epi32(
                _mm512_or_si512(_mm512_srli_epi32(a, 4),
                                _mm512_slli_epi32(_mm512_and_si512(_mm512_srli_epi32(h, 4), two), 4)),
                off);
            const __m512i q4 = _mm512_sub_epi32(
                _mm512_or_si512(_mm512_srli_epi32(c, 4),
                                _mm512_slli_epi32(_mm512_and_si512(_mm512_srli_epi32(h, 6), two), 4)),
                off);
            /* (d * sc first, as the scalar code's left-to-right product has it) */
            _mm512_storeu_ps(y + l, _mm512_mul_ps(_mm512_set1_ps(d * (float)sc[s]), _mm512_cvtepi32_ps(q1)));
            _mm512_storeu_ps(y + l + 32,
                             _mm512_mul_ps(_mm512_set1_ps(d * (float)sc[s + 2]), _mm512_cvtepi32_ps(q2)));
            _mm512_storeu_ps(y + l + 64,
                             _mm512_mul_ps(_mm512_set1_ps(d * (float)sc[s + 4]), _mm512_cvtepi32_ps(q3)));
            _mm512_storeu_ps(y + l + 96,
                             _mm512_mul_ps(_mm512_set1_ps(d * (float)sc[s + 6]), _mm512_cvtepi32_ps(q4)));
        }
}
#undef U16X
#undef S16X

/* The same eight values at a time (AVX2): the same integers, conversions and products. */
#define U8X(p) _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(p)))
#define S8X(p) _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(p)))

__attribute__((target("avx2,fma"))) static void
q4_0_avx2(const unsigned char *b, float *y)
{
    const __m256 d = _mm256_set1_ps(half_at(b));
    const __m256i eight = _mm256_set1_epi32(8), low = _mm256_set1_epi32(15);

    for (int h = 0; h < 2; h++) {
        const __m256i v = U8X(b + 2 + 8 * h);
        _mm256_storeu_ps(y + 8 * h, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(
                                                      _mm256_and_si256(v, low), eight)), d));
        _mm256_storeu_ps(y + 16 + 8 * h, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(
                                                           _mm256_srli_epi32(v, 4), eight)), d));
    }
}

__attribute__((target("avx2,fma"))) static void
q8_0_avx2(const unsigned char *b, float *y)
{
    const __m256 d = _mm256_set1_ps(half_at(b));

    for (int i = 0; i < 4; i++)
        _mm256_storeu_ps(y + 8 * i, _mm256_mul_ps(_mm256_cvtepi32_ps(S8X(b + 2 + 8 * i)), d));
}

__attribute__((target("avx2,fma"))) static void
q4_k_avx2(const unsigned char *b, float *y)
{
    const float d = half_at(b), dmin = half_at(b + 2);
    const unsigned char *qs = b + 16;
    const __m256i low = _mm256_set1_epi32(15);

    for (int pair = 0; pair < 4; pair++, qs += 32) {
        int sc, m;
        __m256 d1, m1, d2, m2;
        quant_scale_min(2 * pair, b + 4, &sc, &m);
        d1 = _mm256_set1_ps(d * (float)sc), m1 = _mm256_set1_ps(dmin * (float)m);
        quant_scale_min(2 * pair + 1, b + 4, &sc, &m);
        d2 = _mm256_set1_ps(d * (float)sc), m2 = _mm256_set1_ps(dmin * (float)m);
        for (int h = 0; h < 4; h++) {
            const __m256i v = U8X(qs + 8 * h);
            _mm256_storeu_ps(y + 8 * h, _mm256_sub_ps(_mm256_mul_ps(d1, _mm256_cvtepi32_ps(
                                                                            _mm256_and_si256(v, low))),
                                                      m1));
            _mm256_storeu_ps(y + 32 + 8 * h,
                             _mm256_sub_ps(_mm256_mul_ps(d2, _mm256_cvtepi32_ps(_mm256_srli_epi32(v, 4))),
                                           m2));
        }
        y += 64;
    }
}

__attribute__((target("avx2,fma"))) static void
q6_k_avx2(const unsigned char *b, float *y)
{
    const unsigned char *ql = b, *qh = b + QK_K / 2;
    const int8_t *sc = (const int8_t *)(b + QK_K / 2 + QK_K / 4);
    const float d = half_at(b + QK_K / 2 + QK_K / 4 + QK_K / 16);
    const __m256i low = _mm256_set1_epi32(15), two = _mm256_set1_epi32(3),
                  off = _mm256_set1_epi32(32);

    for (int half = 0; half < 2; half++, y += 128, ql += 64, qh += 32, sc += 8)
        for (int l = 0; l < 32; l += 8) {
            const int s = l / 16;
            const __m256i a = U8X(ql + l), c = U8X(ql + l + 32), h = U8X(qh + l);
            const __m256i q1 = _mm256_sub_epi32(
                _mm256_or_si256(_mm256_and_si256(a, low), _mm256_slli_epi32(_mm256_and_si256(h, two), 4)), off);
            const __m256i q2 = _mm256_sub_epi32(
                _mm256_or_si256(_mm256_and_si256(c, low),
                                _mm256_slli_epi32(_mm256_and_si256(_mm256_srli_epi32(h, 2), two), 4)),
                off);
            const __m256i q3 = _mm256_sub_epi32(
                _mm256_or_si256(_mm256_srli_epi32(a, 4),
                                _mm256_slli_epi32(_mm256_and_si256(_mm256_srli_epi32(h, 4), two), 4)),
                off);
            const __m256i q4 = _mm256_sub_epi32(
                _mm256_or_si256(_mm256_srli_epi32(c, 4),
                                _mm256_slli_epi32(_mm256_and_si256(_mm256_srli_epi32(h, 6), two), 4)),
                off);
            _mm256_storeu_ps(y + l, _mm256_mul_ps(_mm256_set1_ps(d * (float)sc[s]), _mm256_cvtepi32_ps(q1)));
            _mm256_storeu_ps(y + l + 32,
                             _mm256_mul_ps(_mm256_set1_ps(d * (float)sc[s + 2]), _mm256_cvtepi32_ps(q2)));
            _mm256_storeu_ps(y + l + 64,
                             _mm256_mul_ps(_mm256_set1_ps(d * (float)sc[s + 4]), _mm256_cvtepi32_ps(q3)));
            _mm256_storeu_ps(y + l + 96,
                             _mm256_mul_ps(_mm256_set1_ps(d * (float)sc[s + 6]), _mm256_cvtepi32_ps(q4)));
        }
}
#undef U8X
#undef S8X
#endif

void
quant_dequantize(enum quant_type q, const unsigned char *src, size_t blocks, float *out)
{
#ifdef QUANTS_X86
    if ((cpu_isa() == CPU_AVX512 || cpu_isa() == CPU_AVX2) &&
        (q == QUANT_Q4_0 || q == QUANT_Q8_0 || q == QUANT_Q4_K || q == QUANT_Q6_K)) {
        const bool wide = cpu_isa() == CPU_AVX512;
        void (*one)(const unsigned char *, float *) = q == QUANT_Q4_0 ? (wide ? q4_0_avx512 : q4_0_avx2)
                                                      : q == QUANT_Q8_0 ? (wide ? q8_0_avx512 : q8_0_avx2)
                                                      : q == QUANT_Q4_K ? (wide ? q4_k_avx512 : q4_k_avx2)
                                                                        : (wide ? q6_k_avx512 : q6_k_avx2);
        for (size_t i = 0; i < blocks; i++)
            one(src + i * types[q].bytes, out + i * (size_t)types[q].values);
        return;
    }
#endif
    for (size_t i = 0; i < blocks; i++) {
        const unsigned char *b = src + i * types[q].bytes;
        float *y = out + i * (size_t)types[q].values;
        switch (q) {
        case QUANT_Q4_0:
        case QUANT_Q4_1:
            q4(b, q == QUANT_Q4_1, y);
            break;
        case QUANT_Q5_0:
        case QUANT_Q5_1:
            q5(b, q == QUANT_Q5_1, y);
            break;
        case QUANT_Q8_0:
            q8_0(b, y);
            break;
        case QUANT_Q2_K:
            q2_k(b, y);
            break;
        case QUANT_Q3_K:
            q3_k(b, y);
            break;
        case QUANT_Q4_K:
        case QUANT_Q5_K:
            q45_k(b, q == QUANT_Q5_K, y);
            break;
        case QUANT_Q6_K:
            q6_k(b, y);
            break;
        case QUANT_MXFP4:
            mxfp4(b, y);
            break;
        case QUANT_TYPES:
            break;
        }
    }
}

/*
 * What made value k of the block at b: the scale it multiplies, the
 * minimum (or offset) and the integer, as the dequantizers above use them.
 */
bool
quant_explain(enum quant_type q, const unsigned char *b, int k, float *scale, float *min,
              int *level)
{
    *min = 0.0f;
    switch (q) {
    case QUANT_Q4_0:
    case QUANT_Q4_1: {
        const unsigned char *qs = b + (q == QUANT_Q4_1 ? 4 : 2);
        const int raw = k < QK / 2 ? qs[k] & 0x0f : qs[k - QK / 2] >> 4;
        *scale = half_at(b);
        *level = q == QUANT_Q4_1 ? raw : raw - 8;
        if (q == QUANT_Q4_1)
            *min = half_at(b + 2);
        return q == QUANT_Q4_1;
    }
    case QUANT_Q5_0:
    case QUANT_Q5_1: {
        const unsigned char *hb = b + (q == QUANT_Q5_1 ? 4 : 2);
        const uint32_t high = (uint32_t)hb[0] | (uint32_t)hb[1] << 8 | (uint32_t)hb[2] << 16 |
                              (uint32_t)hb[3] << 24;
        const int j = k % (QK / 2);
        const int raw = (k < QK / 2 ? hb[4 + j] & 0x0f : hb[4 + j] >> 4) | (int)((high >> k) & 1) << 4;
        *scale = half_at(b);
        *level = q == QUANT_Q5_1 ? raw : raw - 16;
        if (q == QUANT_Q5_1)
            *min = half_at(b + 2);
        return q == QUANT_Q5_1;
    }
    case QUANT_Q8_0:
        *scale = half_at(b);
        *level = (int8_t)b[2 + k];
        return false;
    case QUANT_Q2_K: {
        /* Values 128h + 32p' ... : half h, shift s (2 bits apart), part p, position l. */
        const int h = k / 128, s = (k % 128) / 32, p = (k % 32) / 16, l = k % 16;
        const unsigned char sc = b[h * 8 + s * 2 + p];
        const unsigned char *qs = b + QK_K / 16 + 32 * h;
        *scale = half_at(b + QK_K / 16 + QK_K / 4) * (float)(sc & 0x0f);
        *min = half_at(b + QK_K / 16 + QK_K / 4 + 2) * (float)(sc >> 4);
        *level = (qs[p * 16 + l] >> (2 * s)) & 3;
        return true;
    }
    case QUANT_Q3_K: {
        const int h = k / 128, s = (k % 128) / 32, p = (k % 32) / 16, l = k % 16;
        const int sub = h * 8 + s * 2 + p;
        const unsigned char *packed = b + QK_K / 8 + QK_K / 4;
        const int low = sub < 8 ? packed[sub] & 0x0f : packed[sub - 8] >> 4;
        const int top = (packed[8 + sub % 4] >> (2 * (sub / 4))) & 3;
        const int i = p * 16 + l;
        *scale = half_at(packed + 12) * (float)((low | top << 4) - 32);
        *level = ((b[QK_K / 8 + 32 * h + i] >> (2 * s)) & 3) - ((b[i] & (1 << (h * 4 + s))) ? 0 : 4);
        return false;
    }
    case QUANT_Q4_K:
    case QUANT_Q5_K: {
        const bool five = q == QUANT_Q5_K;
        const int pair = k / 64, hi = (k % 64) / 32, l = k % 32;
        const unsigned char *qs = b + 16 + (five ? QK_K / 8 : 0) + 32 * pair;
        int sc, m;
        quant_scale_min(2 * pair + hi, b + 4, &sc, &m);
        *scale = half_at(b) * (float)sc;
        *min = half_at(b + 2) * (float)m;
        *level = (hi ? qs[l] >> 4 : qs[l] & 0x0f) +
                 (five && (b[16 + l] >> (2 * pair + hi)) & 1 ? 16 : 0);
        return true;
    }
    case QUANT_Q6_K: {
        const int h = k / 128, r = k % 128, quarter = r / 32, l = r % 32;
        const unsigned char *ql = b + 64 * h, *qh = b + QK_K / 2 + 32 * h;
        const int8_t *sc = (const int8_t *)(b + QK_K / 2 + QK_K / 4) + 8 * h;
        int v;
        switch (quarter) {
        case 0: v = (ql[l] & 0x0f) | ((qh[l] >> 0) & 3) << 4; break;
        case 1: v = (ql[l + 32] & 0x0f) | ((qh[l] >> 2) & 3) << 4; break;
        case 2: v = (ql[l] >> 4) | ((qh[l] >> 4) & 3) << 4; break;
        default: v = (ql[l + 32] >> 4) | ((qh[l] >> 6) & 3) << 4; break;
        }
        *scale = half_at(b + QK_K / 2 + QK_K / 4 + QK_K / 16) * (float)sc[l / 16 + 2 * quarter];
        *level = v - 32;
        return false;
    }
    case QUANT_MXFP4:
        *scale = quant_e8m0_half(b[0]);
        *level = mxfp4_values[k < QK / 2 ? b[1 + k] & 0x0f : b[1 + k - QK / 2] >> 4];
        return false;
    case QUANT_TYPES:
        break;
    }
    *scale = 0.0f;
    *level = 0;
    return false;
}
