/*
 * linalg_q_int8.c: llama.cpp's arithmetic over the quantized panels, the
 * opt-in mode (--arith int8, see linalg.h): each row of activations
 * rounded to 8-bit blocks as ggml rounds them (Q8_K's 256 values a block
 * for the K-quants, Q8_0's 32 for Q4_0 and Q8_0), the products of levels
 * taken in integers a group at a time, then scaled in float.  Not the
 * exact arithmetic (a weight widened and multiplied in a chain of FMAs):
 * its results differ from it by the activations' rounding, which
 * `--compare` with `--compare-arith` shows.
 *
 * The arithmetic is defined by the portable code below (int8_block_*);
 * the AVX2 kernel gives its bits (check_isa compares them): its integer
 * sums are exact, its float operations the same in the same order.
 */
#include "config.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/kernels/cpu.h"
#include "attnscope/kernels/linalg.h"
#include "attnscope/kernels/workspace.h"

#include "linalg_internal.h"
#include "linalg_q_internal.h"

bool
linalg_q_int8_reads(enum linalg_qformat f)
{
    return f == LINALG_Q4_0 || f == LINALG_Q8_0 || f == LINALG_Q4_K || f == LINALG_Q6_K;
}

/* ggml's nearest_int: round to nearest by the float-magic trick (ties to even). */
static int
nearest_int(float f)
{
    float val = f + 12582912.0f;
    int i;

    memcpy(&i, &val, sizeof i);
    return (i & 0x007fffff) - 0x00400000;
}


/*
 * x (k) into blocks of 256 as ggml's quantize_row_q8_K_ref: the value of
 * largest magnitude gives iscale = -127 / max, each q the nearest integer
 * of iscale x (at most 127), d = 1 / iscale; a block of zeros all zeros.
 */
static void
quantize_q8_k(const float *x, int k, struct linalg_q8 *r)
{
    for (int b = 0; b < k / 256; b++) {
        const float *xb = x + 256 * b;
        float max = 0.0f, amax = 0.0f;
        for (int j = 0; j < 256; j++) {
            const float ax = fabsf(xb[j]);
            if (ax > amax) {
                amax = ax;
                max = xb[j];
            }
        }
        if (amax == 0.0f) {
            r->d[b] = 0.0f;
            memset(r->q + 256 * b, 0, 256);
        } else {
            const float iscale = -127.0f / max;
            for (int j = 0; j < 256; j++) {
                const int v = nearest_int(iscale * xb[j]);
                r->q[256 * b + j] = (int8_t)(v < 127 ? v : 127);
            }
            r->d[b] = 1.0f / iscale;
        }
    }
    for (int g = 0; g < k / 16; g++) {
        int32_t s = 0;
        for (int j = 0; j < 16; j++)
            s += r->q[16 * g + j];
        r->sums[g] = s;
    }
}

/*
 * f rounded to the nearest half-precision number, ties to even (what F16C's
 * vcvtps2ph and ggml's GGML_FP32_TO_FP16 give), as its bits.
 */
static uint16_t
half_of(float f)
{
    uint32_t u, sign, mag;

    memcpy(&u, &f, sizeof u);
    sign = (u >> 16) & 0x8000u;
    mag = u & 0x7fffffffu;
    if (mag > 0x7f800000u) /* NaN: quieted */
        return (uint16_t)(sign | 0x7e00u);
    if (mag >= 0x477ff000u) /* past the largest half (65504 and what rounds above it) */
        return (uint16_t)(sign | 0x7c00u);
    if (mag < 0x38800000u) { /* a subnormal half (or zero): units of 2^-24, rounded to even */
        float m;
        uint32_t units;
        memcpy(&m, &mag, sizeof m);
        units = (uint32_t)nearbyintf(m * 16777216.0f);
        return (uint16_t)(sign | units);
    }
    {
        /* normal: rebias the exponent, round the 13 bits dropped to even */
        const uint32_t rest = mag & 0x1fffu;
        uint32_t h = ((mag >> 13) - (112u << 10));
        if (rest > 0x1000u || (rest == 0x1000u && (h & 1u)))
            h++;
        return (uint16_t)(sign | h);
    }
}

/*
 * x (k) into blocks of 32 as ggml's quantize_row_q8_0_ref: d = amax / 127
 * rounded to half precision (the block keeps it so), q = roundf(x / d).
 */
static void
quantize_q8_0(const float *x, int k, struct linalg_q8 *r)
{
    for (int b = 0; b < k / 32; b++) {
        const float *xb = x + 32 * b;
        float amax = 0.0f, d, id;
        for (int j = 0; j < 32; j++)
            amax = fabsf(xb[j]) > amax ? fabsf(xb[j]) : amax;
        d = amax / 127.0f;
        id = d != 0.0f ? 1.0f / d : 0.0f;
        for (int j = 0; j < 32; j++)
            r->q[32 * b + j] = (int8_t)roundf(xb[j] * id);
        r->d[b] = linalg_half_float(half_of(d));
    }
    for (int g = 0; g < k / 16; g++) {
        int32_t s = 0;
        for (int j = 0; j < 16; j++)
            s += r->q[16 * g + j];
        r->sums[g] = s;
    }
}

/* ----------------------------------------------------------- the portable */

static uint16_t
half_bits(const unsigned char *p)
{
    uint16_t h;

    memcpy(&h, p, 2);
    return h;
}

/* Row r's level of value w of a group (its low bits at lv, its high at hb), as stored. */
static int
stored_level(const struct qshape *q, const unsigned char *lv, const unsigned char *hb, int r, int w)
{
    int l = q->bits == 8 ? (int)(int8_t)lv[(size_t)w * R + (size_t)r]
                         : (lv[(size_t)(w / 2) * R + (size_t)r] >> (4 * (w % 2))) & 15;

    if (q->high == 2)
        l |= ((hb[(size_t)(w / 4) * R + (size_t)r] >> (2 * (w % 4))) & 3) << 4;
    return l;
}

/*
 * Row r of the panel at pn against the quantized row x: the mode's
 * arithmetic, the reference every kernel of it equals.
 */
static float
row_portable(enum linalg_qformat f, const unsigned char *pn, int r, int k, const struct linalg_q8 *x)
{
    const struct qshape *q = &linalg_qshapes[f];
    float acc = 0.0f;

    for (int s = 0; s < k / q->sg; s++) {
        const unsigned char *sgp = pn + (size_t)s * sg_bytes(q);
        const float d = linalg_half_float(half_bits(sgp + (size_t)r * 2));
        const float dmin = q->halves >= 2 ? linalg_half_float(half_bits(sgp + R * 2 + (size_t)r * 2)) : 0.0f;
        int32_t sumi = 0, summ = 0;
        for (int g = 0; g < q->sg / q->g; g++) {
            const unsigned char *gr = sgp + (size_t)q->halves * R * 2 + (size_t)g * group_bytes(q);
            const unsigned char *lv = gr + q->gscale;
            const unsigned char *hb = lv + (size_t)q->g * R * (size_t)q->bits / 8;
            const int v0 = s * q->sg + g * q->g;
            int32_t dot = 0;
            for (int w = 0; w < q->g; w++)
                dot += stored_level(q, lv, hb, r, w) * x->q[v0 + w];
            switch (f) {
            case LINALG_Q4_K:
                /* (the minimum's share: the group's m times the sum of its 32 activations) */
                sumi += (int32_t)gr[r] * dot;
                summ += (int32_t)gr[R + r] * (x->sums[v0 / 16] + x->sums[v0 / 16 + 1]);
                break;
            case LINALG_Q6_K:
                sumi += (int32_t)(int8_t)gr[r] * (dot - 32 * x->sums[v0 / 16]);
                break;
            case LINALG_Q4_0:
                acc = fmaf(d * x->d[v0 / 32], (float)(dot - 8 * (x->sums[v0 / 16] + x->sums[v0 / 16 + 1])), acc);
                break;
            default: /* Q8_0 */
                acc = fmaf(d * x->d[v0 / 32], (float)dot, acc);
                break;
            }
        }
        if (f == LINALG_Q4_K || f == LINALG_Q6_K) {
            const float d8 = x->d[s];
            acc = fmaf(d8 * d, (float)sumi, acc);
            if (f == LINALG_Q4_K)
                acc = fmaf(-(d8 * dmin), (float)summ, acc);
        }
    }
    return acc;
}

#ifdef LINALG_X86
/* ------------------------------------------------------------------- AVX2 */

/*
 * Eight rows a vector, two values of k a step: a row's two levels side by
 * side as 16-bit lanes, multiplied by the two activations and added
 * (vpmaddwd: exact, 32-bit), summed over the group; then the group's scale
 * in integers and the super-group's in float, as row_portable.
 */

/* Rows 8c .. 8c + 7's levels of values w and w + 1 (w even) of a group, as pairs of 16-bit lanes. */
__attribute__((target("avx2,fma,f16c"), always_inline)) static inline __m256i
pairs8(enum linalg_qformat f, const unsigned char *lv, const unsigned char *hb, int c, int w)
{
    __m128i a, b;

    if (f == LINALG_Q8_0) {
        a = _mm_loadl_epi64((const __m128i *)(lv + (size_t)w * R + 8 * c));
        b = _mm_loadl_epi64((const __m128i *)(lv + (size_t)(w + 1) * R + 8 * c));
        return _mm256_cvtepi8_epi16(_mm_unpacklo_epi8(a, b));
    }
    /* 4-bit: one byte holds both (the low nibble w's, the high w + 1's) */
    a = _mm_loadl_epi64((const __m128i *)(lv + (size_t)(w / 2) * R + 8 * c));
    b = _mm_and_si128(_mm_srli_epi16(a, 4), _mm_set1_epi8(15));
    a = _mm_and_si128(a, _mm_set1_epi8(15));
    if (f == LINALG_Q6_K) {
        /* the two high bits of w and w + 1: bits 2 (w % 4) and 2 (w % 4) + 2 of their byte */
        const __m128i h = _mm_loadl_epi64((const __m128i *)(hb + (size_t)(w / 4) * R + 8 * c));
        const int at = 2 * (w % 4);
        const __m128i h0 = _mm_and_si128(_mm_srli_epi16(h, at), _mm_set1_epi8(3));
        const __m128i h1 = _mm_and_si128(_mm_srli_epi16(h, at + 2), _mm_set1_epi8(3));
        a = _mm_or_si128(a, _mm_slli_epi16(h0, 4));
        b = _mm_or_si128(b, _mm_slli_epi16(h1, 4));
    }
    return _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(a, b));
}

/*
 * The next panel's bytes [p, p + n) asked into the cache while this one is
 * worked: read once from memory, a panel's lines are otherwise found at
 * the speed of the prefetcher's guesses (half the memory's bandwidth).
 */
__attribute__((always_inline)) static inline void
prefetch_group(const unsigned char *p, size_t n)
{
    for (size_t at = 0; at < n; at += 64)
        __builtin_prefetch(p + at, 0, 3);
}

/* Q8_0's 64 rows against x, into y: 32 rows a pass, 16-bit pairs by vpmaddwd. */
__attribute__((target("avx2,fma,f16c"))) static void
rows_avx2_madd(enum linalg_qformat f, const unsigned char *pn, const unsigned char *next, int k,
               const struct linalg_q8 *x, float *y)
{
    const struct qshape *q = &linalg_qshapes[f];

    for (int half = 0; half < 2; half++) {
        __m256 acc[4];
        for (int c = 0; c < 4; c++)
            acc[c] = _mm256_setzero_ps();
        for (int s = 0; s < k / q->sg; s++) {
            const unsigned char *sgp = pn + (size_t)s * sg_bytes(q);
            __m256i sumi[4], summ[4];
            for (int c = 0; c < 4; c++)
                sumi[c] = summ[c] = _mm256_setzero_si256();
            for (int g = 0; g < q->sg / q->g; g++) {
                const unsigned char *gr = sgp + (size_t)q->halves * R * 2 + (size_t)g * group_bytes(q);
                const unsigned char *lv = gr + q->gscale;
                const unsigned char *hb = lv + (size_t)q->g * R * (size_t)q->bits / 8;
                const int v0 = s * q->sg + g * q->g;
                __m256i dot[4];
                for (int c = 0; c < 4; c++)
                    dot[c] = _mm256_setzero_si256();
                if (half == 0 && next != NULL)
                    prefetch_group(next + ((g == 0 ? sgp : gr) - pn),
                                   group_bytes(q) + (g == 0 ? (size_t)q->halves * R * 2 : 0));
                for (int w = 0; w < q->g; w += 2) {
                    const __m256i xp = _mm256_set1_epi32(x->pairs[(v0 + w) / 2]);
                    for (int c = 0; c < 4; c++)
                        dot[c] = _mm256_add_epi32(dot[c], _mm256_madd_epi16(pairs8(f, lv, hb, 4 * half + c, w), xp));
                }
                for (int c = 0; c < 4; c++) {
                    const int cc = 4 * half + c;
                    switch (f) {
                    case LINALG_Q4_K:
                        sumi[c] = _mm256_add_epi32(sumi[c], _mm256_mullo_epi32(
                                                                _mm256_cvtepu8_epi32(_mm_loadl_epi64(
                                                                    (const __m128i *)(gr + 8 * cc))),
                                                                dot[c]));
                        summ[c] = _mm256_add_epi32(summ[c], _mm256_mullo_epi32(
                                                                _mm256_cvtepu8_epi32(_mm_loadl_epi64(
                                                                    (const __m128i *)(gr + R + 8 * cc))),
                                                                _mm256_set1_epi32(x->sums[v0 / 16] +
                                                                                  x->sums[v0 / 16 + 1])));
                        break;
                    case LINALG_Q6_K:
                        sumi[c] = _mm256_add_epi32(
                            sumi[c], _mm256_mullo_epi32(
                                         _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(gr + 8 * cc))),
                                         _mm256_sub_epi32(dot[c], _mm256_set1_epi32(32 * x->sums[v0 / 16]))));
                        break;
                    case LINALG_Q4_0: {
                        const __m256 d = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(sgp + 16 * cc)));
                        acc[c] = _mm256_fmadd_ps(
                            _mm256_mul_ps(d, _mm256_set1_ps(x->d[v0 / 32])),
                            _mm256_cvtepi32_ps(_mm256_sub_epi32(
                                dot[c], _mm256_set1_epi32(8 * (x->sums[v0 / 16] + x->sums[v0 / 16 + 1])))),
                            acc[c]);
                        break;
                    }
                    default: {
                        const __m256 d = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(sgp + 16 * cc)));
                        acc[c] = _mm256_fmadd_ps(_mm256_mul_ps(d, _mm256_set1_ps(x->d[v0 / 32])),
                                                 _mm256_cvtepi32_ps(dot[c]), acc[c]);
                        break;
                    }
                    }
                }
            }
            if (f == LINALG_Q4_K || f == LINALG_Q6_K)
                for (int c = 0; c < 4; c++) {
                    const int cc = 4 * half + c;
                    const __m256 d8 = _mm256_set1_ps(x->d[s]);
                    const __m256 d = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(sgp + 16 * cc)));
                    acc[c] = _mm256_fmadd_ps(_mm256_mul_ps(d8, d), _mm256_cvtepi32_ps(sumi[c]), acc[c]);
                    if (f == LINALG_Q4_K) {
                        const __m256 dm = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(sgp + R * 2 + 16 * cc)));
                        acc[c] = _mm256_fmadd_ps(_mm256_xor_ps(_mm256_mul_ps(d8, dm), _mm256_set1_ps(-0.0f)),
                                                 _mm256_cvtepi32_ps(summ[c]), acc[c]);
                    }
                }
        }
        for (int c = 0; c < 4; c++)
            _mm256_storeu_ps(y + 8 * (4 * half + c), acc[c]);
    }
}

/*
 * The 4-bit formats (Q4_0, Q4_K) and Q6_K: 32 rows' levels of two values
 * of k from one 32-byte load, the two nibbles put side by side as byte
 * pairs (unpacking interleaves rows 0-7 with 16-23 and 8-15 with 24-31),
 * multiplied by the two activations and added by vpmaddubsw into 16-bit
 * lanes (unsigned levels, signed activations), summed in 16 bits while no
 * sum can pass 32767 (eight pairs of 4-bit levels, two of 6-bit ones), then
 * widened to 32 bits in the rows' order.  The sums are exact: the bits of
 * row_portable.
 */
__attribute__((target("avx2,fma,f16c"), always_inline)) static inline void
widen_add(__m256i acc16_a, __m256i acc16_b, __m256i dot[4])
{
    /* acc16_a: rows 0-7 | 16-23; acc16_b: rows 8-15 | 24-31 */
    dot[0] = _mm256_add_epi32(dot[0], _mm256_cvtepi16_epi32(_mm256_castsi256_si128(acc16_a)));
    dot[1] = _mm256_add_epi32(dot[1], _mm256_cvtepi16_epi32(_mm256_castsi256_si128(acc16_b)));
    dot[2] = _mm256_add_epi32(dot[2], _mm256_cvtepi16_epi32(_mm256_extracti128_si256(acc16_a, 1)));
    dot[3] = _mm256_add_epi32(dot[3], _mm256_cvtepi16_epi32(_mm256_extracti128_si256(acc16_b, 1)));
}

__attribute__((target("avx2,fma,f16c"))) static void
rows_avx2_ubs(enum linalg_qformat f, const unsigned char *pn, const unsigned char *next, int k,
              const struct linalg_q8 *x, float *y)
{
    const struct qshape *q = &linalg_qshapes[f];
    const __m256i m15 = _mm256_set1_epi8(15), m3 = _mm256_set1_epi8(3);
    /* (pairs of 4-bit levels: 8 before a 16-bit sum could overflow; of 6-bit ones, 2) */
    const int run = f == LINALG_Q6_K ? 2 : 8;

    for (int half = 0; half < 2; half++) {
        __m256 acc[4];
        for (int c = 0; c < 4; c++)
            acc[c] = _mm256_setzero_ps();
        for (int s = 0; s < k / q->sg; s++) {
            const unsigned char *sgp = pn + (size_t)s * sg_bytes(q);
            __m256i sumi[4], summ[4];
            for (int c = 0; c < 4; c++)
                sumi[c] = summ[c] = _mm256_setzero_si256();
            for (int g = 0; g < q->sg / q->g; g++) {
                const unsigned char *gr = sgp + (size_t)q->halves * R * 2 + (size_t)g * group_bytes(q);
                const unsigned char *lv = gr + q->gscale;
                const unsigned char *hb = lv + (size_t)q->g * R * (size_t)q->bits / 8;
                const int v0 = s * q->sg + g * q->g;
                __m256i dot[4];
                for (int c = 0; c < 4; c++)
                    dot[c] = _mm256_setzero_si256();
                if (half == 0 && next != NULL)
                    prefetch_group(next + ((g == 0 ? sgp : gr) - pn),
                                   group_bytes(q) + (g == 0 ? (size_t)q->halves * R * 2 : 0));
                for (int w0 = 0; w0 < q->g; w0 += 2 * run) {
                    __m256i a16 = _mm256_setzero_si256(), b16 = _mm256_setzero_si256();
                    for (int w = w0; w < w0 + 2 * run; w += 2) {
                        const __m256i bytes = _mm256_loadu_si256((const __m256i *)(lv + (size_t)(w / 2) * R + 32 * half));
                        __m256i lo = _mm256_and_si256(bytes, m15);
                        __m256i hi = _mm256_and_si256(_mm256_srli_epi16(bytes, 4), m15);
                        const __m256i xp = _mm256_set1_epi32(x->pairs[(v0 + w) / 2]);
                        if (f == LINALG_Q6_K) {
                            const __m256i h = _mm256_loadu_si256((const __m256i *)(hb + (size_t)(w / 4) * R + 32 * half));
                            const int at = 2 * (w % 4);
                            lo = _mm256_or_si256(lo, _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(h, at), m3), 4));
                            hi = _mm256_or_si256(hi, _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(h, at + 2), m3), 4));
                        }
                        a16 = _mm256_add_epi16(a16, _mm256_maddubs_epi16(_mm256_unpacklo_epi8(lo, hi), xp));
                        b16 = _mm256_add_epi16(b16, _mm256_maddubs_epi16(_mm256_unpackhi_epi8(lo, hi), xp));
                    }
                    widen_add(a16, b16, dot);
                }
                for (int c = 0; c < 4; c++) {
                    const int cc = 4 * half + c;
                    switch (f) {
                    case LINALG_Q4_K:
                        sumi[c] = _mm256_add_epi32(sumi[c], _mm256_mullo_epi32(
                                                                _mm256_cvtepu8_epi32(_mm_loadl_epi64(
                                                                    (const __m128i *)(gr + 8 * cc))),
                                                                dot[c]));
                        summ[c] = _mm256_add_epi32(summ[c], _mm256_mullo_epi32(
                                                                _mm256_cvtepu8_epi32(_mm_loadl_epi64(
                                                                    (const __m128i *)(gr + R + 8 * cc))),
                                                                _mm256_set1_epi32(x->sums[v0 / 16] +
                                                                                  x->sums[v0 / 16 + 1])));
                        break;
                    case LINALG_Q6_K:
                        sumi[c] = _mm256_add_epi32(
                            sumi[c], _mm256_mullo_epi32(
                                         _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(gr + 8 * cc))),
                                         _mm256_sub_epi32(dot[c], _mm256_set1_epi32(32 * x->sums[v0 / 16]))));
                        break;
                    default: { /* Q4_0 */
                        const __m256 d = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(sgp + 16 * cc)));
                        acc[c] = _mm256_fmadd_ps(
                            _mm256_mul_ps(d, _mm256_set1_ps(x->d[v0 / 32])),
                            _mm256_cvtepi32_ps(_mm256_sub_epi32(
                                dot[c], _mm256_set1_epi32(8 * (x->sums[v0 / 16] + x->sums[v0 / 16 + 1])))),
                            acc[c]);
                        break;
                    }
                    }
                }
            }
            if (f == LINALG_Q4_K || f == LINALG_Q6_K)
                for (int c = 0; c < 4; c++) {
                    const int cc = 4 * half + c;
                    const __m256 d8 = _mm256_set1_ps(x->d[s]);
                    const __m256 d = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(sgp + 16 * cc)));
                    acc[c] = _mm256_fmadd_ps(_mm256_mul_ps(d8, d), _mm256_cvtepi32_ps(sumi[c]), acc[c]);
                    if (f == LINALG_Q4_K) {
                        const __m256 dm = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(sgp + R * 2 + 16 * cc)));
                        acc[c] = _mm256_fmadd_ps(_mm256_xor_ps(_mm256_mul_ps(d8, dm), _mm256_set1_ps(-0.0f)),
                                                 _mm256_cvtepi32_ps(summ[c]), acc[c]);
                    }
                }
        }
        for (int c = 0; c < 4; c++)
            _mm256_storeu_ps(y + 8 * (4 * half + c), acc[c]);
    }
}

/* The 64 rows of the panel at pn against x, into y (next: the panel to fetch meanwhile, or NULL). */
__attribute__((target("avx2,fma,f16c"))) static void
rows_avx2(enum linalg_qformat f, const unsigned char *pn, const unsigned char *next, int k,
          const struct linalg_q8 *x, float *y)
{
    if (f == LINALG_Q8_0)
        rows_avx2_madd(f, pn, next, k, x, y);
    else
        rows_avx2_ubs(f, pn, next, k, x, y);
}
#endif

size_t
linalg_q8_bytes(int k)
{
    return (((size_t)k + 63) / 64 * 64 + ((size_t)k / 32 + 16) * sizeof(float) +
            ((size_t)k / 16 + 16 + (size_t)k / 2) * sizeof(int32_t) + 63) /
           64 * 64;
}

void
linalg_q8_quantize(enum linalg_qformat f, const float *x, int k, void *mem, struct linalg_q8 *r)
{
    unsigned char *at = mem;

    r->q = (int8_t *)at;
    r->d = (float *)(void *)(at + ((size_t)k + 63) / 64 * 64);
    r->sums = (int32_t *)(void *)((unsigned char *)r->d + ((size_t)k / 32 + 16) * sizeof(float));
    r->pairs = r->sums + (size_t)k / 16 + 16;
    if (f == LINALG_Q4_K || f == LINALG_Q6_K)
        quantize_q8_k(x, k, r);
    else
        quantize_q8_0(x, k, r);
    for (int i = 0; i < k / 2; i++) {
        if (f == LINALG_Q8_0) {
            const int16_t two[2] = { r->q[2 * i], r->q[2 * i + 1] };
            memcpy(&r->pairs[i], two, sizeof two);
        } else { /* (vpmaddubsw's: the two as bytes side by side, twice) */
            const uint32_t two = (uint32_t)(uint8_t)r->q[2 * i] | (uint32_t)(uint8_t)r->q[2 * i + 1] << 8;
            r->pairs[i] = (int32_t)(two | two << 16);
        }
    }
}

int
linalg_q_int8_rows(int m, const float *a, int lda, const struct linalg_packed *pk, int j0, int cols,
                   float *c, int ldc)
{
    const size_t per_row = linalg_q8_bytes(pk->k);
    unsigned char *mem;
    struct linalg_q8 *rows;

    if (!linalg_q_int8_reads(pk->q) || m <= 0)
        return -1;
    mem = (unsigned char *)workspace_scratch(workspace_thread(),
                                             ((size_t)m * per_row + (size_t)m * sizeof *rows + 3) / 4);
    if (mem == NULL)
        return -1;
    rows = (struct linalg_q8 *)(void *)(mem + (size_t)m * per_row);
    for (int i = 0; i < m; i++)
        linalg_q8_quantize(pk->q, a + (size_t)i * (size_t)lda, pk->k, mem + (size_t)i * per_row, &rows[i]);
    /* (each panel against every row while it is in the cache) */
    for (int j = j0; j < j0 + cols; j += R) {
        const unsigned char *pn = (const unsigned char *)pk->data +
                                  (size_t)(j / R) * linalg_qpanel_bytes(pk->q, pk->k);
        const int n = j0 + cols - j < R ? j0 + cols - j : R;
        for (int i = 0; i < m; i++) {
            float y[R];
#ifdef LINALG_X86
            /* (the next panel fetched while the first row works this one) */
            const unsigned char *next = i == 0 && j + R < j0 + cols ? pn + linalg_qpanel_bytes(pk->q, pk->k) : NULL;
            if (cpu_isa() == CPU_AVX2 || cpu_isa() == CPU_AVX512)
                rows_avx2(pk->q, pn, next, pk->k, &rows[i], y);
            else
#endif
                for (int r = 0; r < n; r++)
                    y[r] = row_portable(pk->q, pn, r, pk->k, &rows[i]);
            memcpy(c + (size_t)i * (size_t)ldc + (size_t)(j - j0), y, (size_t)n * sizeof *y);
        }
    }
    return 0;
}
