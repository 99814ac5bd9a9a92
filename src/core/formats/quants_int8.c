/*
 * quants_int8.c: the opt-in int8 arithmetic (--arith int8) on ggml's K-quant
 * blocks where they lie, a row at a time, as llama.cpp multiplies them:
 * a weight row's blocks read once, in order, against a row of activations
 * rounded to Q8_K (linalg_q8_quantize).  Its results are the bits of the
 * panels' int8 kernels (linalg_q_int8_rows) for the same rows: each
 * super-block's integer sums are exact whichever way they are added, and
 * the float steps after them are the same ones in the same order:
 *
 *     Q4_K: acc = fma(d8 d, sum_g sc_g dot_g, acc);
 *           acc = fma(-(d8 dmin), sum_g m_g (the group's 32 activations' sum), acc)
 *     Q6_K: acc = fma(d8 d, sum_g sc_g (dot_g - 32 (the group's 16 activations' sum)), acc)
 *
 * dot_g the group's levels (as stored: unsigned) times its activations.
 * Only Q4_K and Q6_K (Q4_K_M's two) are read here; Q4_0 and Q8_0 go through
 * their panels.  The portable code defines the arithmetic; the AVX2 kernel
 * gives its bits (check_isa compares them on every path the CPU has).
 */
#include "config.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define INT8_X86 1
#endif

#include "attnscope/formats/quants.h"
#include "attnscope/formats/tensor.h"
#include "attnscope/kernels/cpu.h"
#include "attnscope/kernels/linalg.h"
#include "attnscope/kernels/parallel.h"
#include "attnscope/kernels/workspace.h"

#define QK_K 256

bool
quant_int8_by_rows(enum quant_type q)
{
    return q == QUANT_Q4_K || q == QUANT_Q6_K;
}

/* Super-block b of row x's integer terms: *sumi and (Q4_K's minimum's) *summ, from its parts. */
static void
block_sums_portable(enum quant_type q, const struct linalg_qparts *p, const struct linalg_q8 *x,
                    int b, int32_t *sumi, int32_t *summ)
{
    const int g = q == QUANT_Q4_K ? 32 : 16;

    *sumi = *summ = 0;
    for (int j = 0; j < QK_K / g; j++) {
        const int v0 = b * QK_K + j * g;
        int32_t dot = 0;
        for (int w = 0; w < g; w++)
            dot += (int32_t)p->level[j * g + w] * x->q[v0 + w];
        if (q == QUANT_Q4_K) {
            *sumi += p->sc[j] * dot;
            *summ += p->m[j] * (x->sums[v0 / 16] + x->sums[v0 / 16 + 1]);
        } else {
            *sumi += p->sc[j] * (dot - 32 * x->sums[v0 / 16]);
        }
    }
}

/* The float steps after a super-block's integer sums (the header's). */
static inline float
block_step(enum quant_type q, float acc, float d8, float d, float dmin, int32_t sumi, int32_t summ)
{
    acc = fmaf(d8 * d, (float)sumi, acc);
    if (q == QUANT_Q4_K)
        acc = fmaf(-(d8 * dmin), (float)summ, acc);
    return acc;
}

static float
row_portable(enum quant_type q, const unsigned char *row, int k, const struct linalg_q8 *x)
{
    const size_t bytes = quant_block_bytes(q);
    float acc = 0.0f;

    for (int b = 0; b < k / QK_K; b++) {
        struct linalg_qparts p;
        int32_t sumi, summ;
        quant_parts(q, row + (size_t)b * bytes, &p);
        block_sums_portable(q, &p, x, b, &sumi, &summ);
        acc = block_step(q, acc, x->d[b], tensor_f16_to_f32(p.d), tensor_f16_to_f32(p.dmin), sumi,
                         summ);
    }
    return acc;
}

#ifdef INT8_X86
/*
 * The x86 kernels read a row's blocks in order: each super-block gives its
 * integer sums in a vector (the AVX2 and AVX-512 bodies below), eight
 * blocks' vectors are reduced together and their float factors made in
 * eight lanes, each lane the portable code's operations on the same
 * numbers; then the portable chain of fma, block by block: the same bits.
 */

/* ------------------------------------------------------------------- AVX2 */

/* Eight vectors' sums, lane r the sum of v[r]'s lanes. */
__attribute__((target("avx2"), always_inline)) static inline __m256i
hsum8_epi32(const __m256i v[8])
{
    const __m256i a = _mm256_hadd_epi32(_mm256_hadd_epi32(v[0], v[1]), _mm256_hadd_epi32(v[2], v[3]));
    const __m256i b = _mm256_hadd_epi32(_mm256_hadd_epi32(v[4], v[5]), _mm256_hadd_epi32(v[6], v[7]));
    /* (a: rows 0-3's sums of lanes 0-3, then of lanes 4-7; b: rows 4-7's) */
    return _mm256_add_epi32(_mm256_permute2x128_si256(a, b, 0x20), _mm256_permute2x128_si256(a, b, 0x31));
}

static uint16_t
bits_at(const unsigned char *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

/* A super-block's 12 bytes of 6-bit scales and minimums at s: bytes 0-7 the
   eight scales, 8-15 the eight minimums (ggml's packing, taken apart in
   32-bit words). */
__attribute__((target("avx2"), always_inline)) static inline __m128i
q4_k_scales(const unsigned char *s)
{
    uint32_t u[3];
    memcpy(u, s, sizeof u);
    return _mm_setr_epi32((int)(u[0] & 0x3f3f3f3fu),
                          (int)((u[2] & 0x0f0f0f0fu) | (u[0] >> 6 & 0x03030303u) << 4),
                          (int)(u[1] & 0x3f3f3f3fu),
                          (int)((u[2] >> 4 & 0x0f0f0f0fu) | (u[1] >> 6 & 0x03030303u) << 4));
}

/* The minimums' eight products with their groups' activation sums (xs: 16 sums of 16). */
__attribute__((target("avx2"), always_inline)) static inline __m256i
q4_k_mins(__m128i scm, const int32_t *xs)
{
    /* (hadd's pairs come out as groups 0 1 4 5 | 2 3 6 7: put back in order) */
    const __m256i pairs = _mm256_permute4x64_epi64(
        _mm256_hadd_epi32(_mm256_loadu_si256((const __m256i *)(const void *)xs),
                          _mm256_loadu_si256((const __m256i *)(const void *)(xs + 8))),
        0xd8);
    return _mm256_mullo_epi32(_mm256_cvtepu8_epi32(_mm_srli_si128(scm, 8)), pairs);
}

/* The vpshufb control that spreads 16-bit lane g of each 128 bits over its eight. */
__attribute__((target("avx2"), always_inline)) static inline __m256i
spread16(int g)
{
    return _mm256_set1_epi16((short)(0x0100 + 0x0202 * g));
}

/* Q6_K's -32 offset: 32 sc_g times group g's 16 activations' sum, in eight lanes. */
__attribute__((target("avx2"), always_inline)) static inline __m256i
q6_k_offset(__m128i scb, const int32_t *xs)
{
    const __m256i lo = _mm256_mullo_epi32(_mm256_cvtepi8_epi32(scb),
                                          _mm256_loadu_si256((const __m256i *)(const void *)xs));
    const __m256i hi = _mm256_mullo_epi32(_mm256_cvtepi8_epi32(_mm_srli_si128(scb, 8)),
                                          _mm256_loadu_si256((const __m256i *)(const void *)(xs + 8)));
    return _mm256_slli_epi32(_mm256_add_epi32(lo, hi), 5);
}

/*
 * A Q4_K super-block's sums: each group's 6-bit scale (widened to 16-bit
 * lanes) spread over a vector by vpshufb; 64 levels a 32-byte load (the
 * low nibbles one group's, the high the next's), each nibble times its
 * activation and pairs added by vpmaddubsw (at most 2 x 15 x 127), the
 * group's scale by vpmaddwd.  *mins: the minimums' share.
 */
__attribute__((target("avx2"), always_inline)) static inline __m256i
q4_k_sums_avx2(const unsigned char *blk, const int8_t *xq, const int32_t *xs, __m256i *mins)
{
    const __m256i m15 = _mm256_set1_epi8(15);
    const unsigned char *qs = blk + 16;
    const __m128i scm = q4_k_scales(blk + 4);
    const __m256i sc = _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(scm));
    __m256i sum = _mm256_setzero_si256();

#pragma GCC unroll 4
    for (int it = 0; it < 4; it++) {
        const __m256i q4 = _mm256_loadu_si256((const __m256i *)(const void *)(qs + 32 * it));
        const __m256i lo = _mm256_and_si256(q4, m15);
        const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(q4, 4), m15);
        const __m256i a_lo = _mm256_loadu_si256((const __m256i *)(const void *)(xq + 64 * it));
        const __m256i a_hi = _mm256_loadu_si256((const __m256i *)(const void *)(xq + 64 * it + 32));
        sum = _mm256_add_epi32(sum, _mm256_madd_epi16(_mm256_maddubs_epi16(lo, a_lo),
                                                      _mm256_shuffle_epi8(sc, spread16(2 * it))));
        sum = _mm256_add_epi32(sum, _mm256_madd_epi16(_mm256_maddubs_epi16(hi, a_hi),
                                                      _mm256_shuffle_epi8(sc, spread16(2 * it + 1))));
    }
    *mins = q4_k_mins(scm, xs);
    return sum;
}

/* The control spreading 16-bit lane 4 hi + c of each 128 bits over 128-bit lane c's eight. */
__attribute__((target("avx2"), always_inline)) static inline __m256i
spread16_lanes(int g0)
{
    return _mm256_setr_epi64x(0x0100010001000100 + 0x0202020202020202 * g0,
                              0x0100010001000100 + 0x0202020202020202 * g0,
                              0x0100010001000100 + 0x0202020202020202 * (g0 + 1),
                              0x0100010001000100 + 0x0202020202020202 * (g0 + 1));
}

/*
 * A Q6_K super-block's sums, 128 values a half: four 32-value runs of a
 * 6-bit level (its low four bits in ql, its high two in qh), each run two
 * groups of 16 whose scales (the half's eight, widened to 16-bit lanes in
 * both 128 bits) vpshufb spreads; the offset's share taken off.
 */
__attribute__((target("avx2"), always_inline)) static inline __m256i
q6_k_sums_avx2(const unsigned char *blk, const int8_t *xq, const int32_t *xs, __m256i *mins)
{
    const __m256i m15 = _mm256_set1_epi8(15), m3 = _mm256_set1_epi8(3);
    const __m128i scb = _mm_loadu_si128((const __m128i *)(const void *)(blk + 192));
    const __m256i scales[2] = { _mm256_broadcastsi128_si256(_mm_cvtepi8_epi16(scb)),
                                _mm256_broadcastsi128_si256(_mm_cvtepi8_epi16(_mm_srli_si128(scb, 8))) };
    __m256i sum = _mm256_setzero_si256();

#pragma GCC unroll 2
    for (int half = 0; half < 2; half++) {
        const unsigned char *ql = blk + 64 * half, *qh = blk + 128 + 32 * half;
        const __m256i l0 = _mm256_loadu_si256((const __m256i *)(const void *)ql);
        const __m256i l1 = _mm256_loadu_si256((const __m256i *)(const void *)(ql + 32));
        const __m256i h = _mm256_loadu_si256((const __m256i *)(const void *)qh);
        const __m256i q[4] = {
            _mm256_or_si256(_mm256_and_si256(l0, m15), _mm256_slli_epi16(_mm256_and_si256(h, m3), 4)),
            _mm256_or_si256(_mm256_and_si256(l1, m15),
                            _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(h, 2), m3), 4)),
            _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), m15),
                            _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(h, 4), m3), 4)),
            _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), m15),
                            _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(h, 6), m3), 4)),
        };
#pragma GCC unroll 4
        for (int r = 0; r < 4; r++) {
            /* (groups 2r and 2r + 1 of the half: their scales in the low 128 bits and the high) */
            const __m256i a = _mm256_loadu_si256((const __m256i *)(const void *)(xq + 128 * half + 32 * r));
            sum = _mm256_add_epi32(sum, _mm256_madd_epi16(_mm256_maddubs_epi16(q[r], a),
                                                          _mm256_shuffle_epi8(scales[half], spread16_lanes(2 * r))));
        }
    }
    *mins = _mm256_setzero_si256();
    return _mm256_sub_epi32(sum, q6_k_offset(scb, xs));
}

/* ---------------------------------------------------------------- AVX-512 */

/* The vpshufb control that spreads 16-bit lane ga over the low 256 bits, gb over the high. */
__attribute__((target("avx512f,avx512bw"), always_inline)) static inline __m512i
spread16x2(int ga, int gb)
{
    return _mm512_inserti64x4(_mm512_castsi256_si512(spread16(ga)), spread16(gb), 1);
}

/* 32 activations at p and 32 at p + gap, one vector. */
__attribute__((target("avx512f,avx512bw"), always_inline)) static inline __m512i
two_runs(const int8_t *p, int gap)
{
    return _mm512_inserti64x4(
        _mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)(const void *)p)),
        _mm256_loadu_si256((const __m256i *)(const void *)(p + gap)), 1);
}

/* v's sixteen lanes added into eight. */
__attribute__((target("avx512f"), always_inline)) static inline __m256i
fold512(__m512i v)
{
    return _mm256_add_epi32(_mm512_castsi512_si256(v), _mm512_extracti64x4_epi64(v, 1));
}

/*
 * A Q4_K super-block's sums, 128 levels a 64-byte load: its low nibbles
 * groups 4h and 4h + 2, its high ones 4h + 1 and 4h + 3, the activations
 * of each pair put side by side to match.
 */
__attribute__((target("avx512f,avx512bw,avx2"), always_inline)) static inline __m256i
q4_k_sums_avx512(const unsigned char *blk, const int8_t *xq, const int32_t *xs, __m256i *mins)
{
    const __m512i m15 = _mm512_set1_epi8(15);
    const unsigned char *qs = blk + 16;
    const __m128i scm = q4_k_scales(blk + 4);
    const __m512i sc = _mm512_broadcast_i32x4(_mm_cvtepu8_epi16(scm));
    __m512i sum = _mm512_setzero_si512();

#pragma GCC unroll 2
    for (int h = 0; h < 2; h++) {
        const __m512i q4 = _mm512_loadu_si512((const void *)(qs + 64 * h));
        const __m512i lo = _mm512_and_si512(q4, m15);
        const __m512i hi = _mm512_and_si512(_mm512_srli_epi16(q4, 4), m15);
        sum = _mm512_add_epi32(sum, _mm512_madd_epi16(_mm512_maddubs_epi16(lo, two_runs(xq + 128 * h, 64)),
                                                      _mm512_shuffle_epi8(sc, spread16x2(4 * h, 4 * h + 2))));
        sum = _mm512_add_epi32(
            sum, _mm512_madd_epi16(_mm512_maddubs_epi16(hi, two_runs(xq + 128 * h + 32, 64)),
                                   _mm512_shuffle_epi8(sc, spread16x2(4 * h + 1, 4 * h + 3))));
    }
    *mins = q4_k_mins(scm, xs);
    return fold512(sum);
}

/*
 * A Q6_K super-block's sums, 64 levels a vector: a half's first 64 levels
 * are ql's low nibbles with qh's bits 0-1 (its first 32) and 2-3 (the
 * next), its last 64 ql's high nibbles with bits 4-5 and 6-7; each 128
 * bits one group of 16, its scale spread by vpshufb.
 */
__attribute__((target("avx512f,avx512bw,avx2"), always_inline)) static inline __m256i
q6_k_sums_avx512(const unsigned char *blk, const int8_t *xq, const int32_t *xs, __m256i *mins)
{
    const __m512i m15 = _mm512_set1_epi8(15), m3 = _mm512_set1_epi8(3);
    const __m512i lanes4 = _mm512_inserti64x4(_mm512_castsi256_si512(spread16_lanes(0)), spread16_lanes(2), 1);
    const __m512i lanes4_hi = _mm512_add_epi8(lanes4, _mm512_set1_epi8(8));
    const __m128i scb = _mm_loadu_si128((const __m128i *)(const void *)(blk + 192));
    /* (each half's eight scales as 16-bit lanes in every 128 bits) */
    const __m512i scales[2] = { _mm512_broadcast_i32x4(_mm_cvtepi8_epi16(scb)),
                                _mm512_broadcast_i32x4(_mm_cvtepi8_epi16(_mm_srli_si128(scb, 8))) };
    __m512i sum = _mm512_setzero_si512();

#pragma GCC unroll 2
    for (int half = 0; half < 2; half++) {
        const __m512i l = _mm512_loadu_si512((const void *)(blk + 64 * half));
        const __m256i h = _mm256_loadu_si256((const __m256i *)(const void *)(blk + 128 + 32 * half));
        const __m512i hz = _mm512_inserti64x4(_mm512_castsi256_si512(h), _mm256_srli_epi16(h, 2), 1);
        const __m512i q01 = _mm512_or_si512(_mm512_and_si512(l, m15),
                                            _mm512_slli_epi16(_mm512_and_si512(hz, m3), 4));
        const __m512i q23 = _mm512_or_si512(
            _mm512_and_si512(_mm512_srli_epi16(l, 4), m15),
            _mm512_slli_epi16(_mm512_and_si512(_mm512_srli_epi16(hz, 4), m3), 4));
        sum = _mm512_add_epi32(
            sum, _mm512_madd_epi16(_mm512_maddubs_epi16(q01, _mm512_loadu_si512((const void *)(xq + 128 * half))),
                                   _mm512_shuffle_epi8(scales[half], lanes4)));
        sum = _mm512_add_epi32(
            sum, _mm512_madd_epi16(
                     _mm512_maddubs_epi16(q23, _mm512_loadu_si512((const void *)(xq + 128 * half + 64))),
                     _mm512_shuffle_epi8(scales[half], lanes4_hi)));
    }
    *mins = _mm256_setzero_si256();
    return _mm256_sub_epi32(fold512(sum), q6_k_offset(scb, xs));
}

/* ------------------------------------------------------ the rows' drivers */

/*
 * Eight blocks' float factors from their integer sums, lane i block i's:
 * f[0] d8 d, f[1] its sum, and with a minimum f[2] -(d8 dmin), f[3] its sum.
 */
__attribute__((target("avx2,fma,f16c"), always_inline)) static inline void
int8_factors(float f[4][8], const float d8[8], const uint16_t d[8], const uint16_t dmin[8],
             const __m256i sums[8], const __m256i mins[8], bool with_min)
{
    const __m256 dv = _mm256_loadu_ps(d8);

    _mm256_storeu_ps(f[0], _mm256_mul_ps(dv, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)d))));
    _mm256_storeu_ps(f[1], _mm256_cvtepi32_ps(hsum8_epi32(sums)));
    if (with_min) {
        _mm256_storeu_ps(f[2], _mm256_xor_ps(_mm256_set1_ps(-0.0f),
                                             _mm256_mul_ps(dv, _mm256_cvtph_ps(_mm_loadu_si128(
                                                                   (const __m128i *)(const void *)dmin)))));
        _mm256_storeu_ps(f[3], _mm256_cvtepi32_ps(hsum8_epi32(mins)));
    }
}

/* block_step's two fma, in order, over a run's factors f (d8 d, sumi, -(d8 dmin), summ). */
__attribute__((target("fma"), always_inline)) static inline float
int8_chain(float acc, float f[4][8], int run, bool dmin)
{
    for (int i = 0; i < run; i++) {
        acc = fmaf(f[0][i], f[1][i], acc);
        if (dmin)
            acc = fmaf(f[2][i], f[3][i], acc);
    }
    return acc;
}

/*
 * INT8_ROW(NAME): a row of a format against x, its blocks read in order (one
 * stream: the hardware's prefetch keeps up; eight rows read side by side
 * a block at a time ran at half the bandwidth).  Eight blocks' integer
 * sums are reduced together and their float factors made in eight lanes;
 * then the portable code's chain of fma, block by block, run behind the
 * next eight blocks' sums so that the two overlap.  BODY is the
 * format's super-block sums on an instruction set, BYTES its block, D_AT
 * the offset of its d, DMIN whether a dmin follows it.
 */
#define INT8_ROW(NAME, TARGET, BODY, BYTES, D_AT, DMIN)                                           \
    __attribute__((target(TARGET))) static float NAME(const unsigned char *row, int k,           \
                                                      const struct linalg_q8 *x)                 \
    {                                                                                             \
        const int nb = k / QK_K;                                                                  \
        float acc = 0.0f, f[2][4][8];                                                             \
        for (int b0 = 0; b0 < nb; b0 += 8) {                                                      \
            const int run = nb - b0 < 8 ? nb - b0 : 8, cur = (b0 / 8) & 1;                        \
            __m256i sums[8], mins[8];                                                             \
            uint16_t d[8] = { 0 }, dmin[8] = { 0 };                                               \
            float d8[8] = { 0 };                                                                  \
            for (int i = 0; i < 8; i++) {                                                         \
                sums[i] = mins[i] = _mm256_setzero_si256();                                       \
                if (i < run) {                                                                    \
                    const unsigned char *blk = row + (size_t)(b0 + i) * BYTES;                    \
                    sums[i] = BODY(blk, x->q + (b0 + i) * QK_K, x->sums + (b0 + i) * (QK_K / 16), \
                                   &mins[i]);                                                     \
                    d[i] = bits_at(blk + D_AT);                                                   \
                    dmin[i] = DMIN ? bits_at(blk + D_AT + 2) : 0;                                 \
                    d8[i] = x->d[b0 + i];                                                         \
                }                                                                                 \
            }                                                                                     \
            int8_factors(f[cur], d8, d, dmin, sums, mins, DMIN);                                  \
            /* (the run before's chain, behind this run's sums: the two overlap) */               \
            if (b0 > 0)                                                                           \
                acc = int8_chain(acc, f[cur ^ 1], 8, DMIN);                                       \
            if (b0 + 8 >= nb)                                                                     \
                acc = int8_chain(acc, f[cur], run, DMIN);                                         \
        }                                                                                         \
        return acc;                                                                               \
    }

/*
 * INT8_PAIR(NAME): two rows of at most four blocks each (a hidden size of
 * up to 1024, Qwen3.5-0.8B's) at once: the first row's sums in lanes 0-3,
 * the second's in 4-7, one reduction and one set of factors for both, and
 * the two rows' chains side by side, neither waiting on the other.  Each
 * chain is INT8_ROW's for its row, the same steps in the same order.
 */
#define INT8_PAIR(NAME, TARGET, BODY, BYTES, D_AT, DMIN)                                          \
    __attribute__((target(TARGET))) static void NAME(const unsigned char *row, size_t row_bytes, \
                                                     int k, const struct linalg_q8 *x, float *y)  \
    {                                                                                             \
        const int nb = k / QK_K;                                                                  \
        float f[4][8], a0 = 0.0f, a1 = 0.0f;                                                      \
        __m256i sums[8], mins[8];                                                                 \
        uint16_t d[8] = { 0 }, dmin[8] = { 0 };                                                   \
        float d8[8] = { 0 };                                                                      \
        for (int i = 0; i < 8; i++) {                                                             \
            const int b = i & 3;                                                                  \
            sums[i] = mins[i] = _mm256_setzero_si256();                                           \
            if (b < nb) {                                                                         \
                const unsigned char *blk = row + (i >> 2) * row_bytes + (size_t)b * BYTES;        \
                sums[i] = BODY(blk, x->q + b * QK_K, x->sums + b * (QK_K / 16), &mins[i]);        \
                d[i] = bits_at(blk + D_AT);                                                       \
                dmin[i] = DMIN ? bits_at(blk + D_AT + 2) : 0;                                     \
                d8[i] = x->d[b];                                                                  \
            }                                                                                     \
        }                                                                                         \
        int8_factors(f, d8, d, dmin, sums, mins, DMIN);                                           \
        for (int i = 0; i < nb; i++) {                                                            \
            a0 = fmaf(f[0][i], f[1][i], a0);                                                      \
            a1 = fmaf(f[0][4 + i], f[1][4 + i], a1);                                              \
            if (DMIN) {                                                                           \
                a0 = fmaf(f[2][i], f[3][i], a0);                                                  \
                a1 = fmaf(f[2][4 + i], f[3][4 + i], a1);                                          \
            }                                                                                     \
        }                                                                                         \
        y[0] = a0;                                                                                \
        y[1] = a1;                                                                                \
    }

INT8_ROW(q4_k_avx2, "avx2,fma,f16c", q4_k_sums_avx2, 144, 0, 1)
INT8_ROW(q6_k_avx2, "avx2,fma,f16c", q6_k_sums_avx2, 210, 208, 0)
INT8_ROW(q4_k_avx512, "avx512f,avx512bw,avx2,fma,f16c", q4_k_sums_avx512, 144, 0, 1)
INT8_ROW(q6_k_avx512, "avx512f,avx512bw,avx2,fma,f16c", q6_k_sums_avx512, 210, 208, 0)
INT8_PAIR(q4_k_pair_avx2, "avx2,fma,f16c", q4_k_sums_avx2, 144, 0, 1)
INT8_PAIR(q6_k_pair_avx2, "avx2,fma,f16c", q6_k_sums_avx2, 210, 208, 0)
INT8_PAIR(q4_k_pair_avx512, "avx512f,avx512bw,avx2,fma,f16c", q4_k_sums_avx512, 144, 0, 1)
INT8_PAIR(q6_k_pair_avx512, "avx512f,avx512bw,avx2,fma,f16c", q6_k_sums_avx512, 210, 208, 0)

/* Whether the AVX-512 bodies can run: AVX-512BW's byte and word products. */
static bool
int8_avx512(void)
{
    static int has = -1;
    if (has < 0)
        has = __builtin_cpu_supports("avx512bw") ? 1 : 0;
    return has == 1;
}

/* Rows of q against x by the widest x86 kernels the chosen path allows; false on the portable. */
static bool
rows_x86(enum quant_type q, const unsigned char *blocks, size_t row_bytes, int rows, int k,
         const struct linalg_q8 *x, float *y)
{
    const bool wide = cpu_isa() == CPU_AVX512 && int8_avx512(), q4 = q == QUANT_Q4_K;

    if (cpu_isa() != CPU_AVX2 && cpu_isa() != CPU_AVX512)
        return false;
    if (k / QK_K <= 4) {
        /* (short rows two at a time: a row's own reduction and chain were most of its time) */
        int r = 0;
        for (; r + 2 <= rows; r += 2) {
            const unsigned char *row = blocks + (size_t)r * row_bytes;
            (wide ? (q4 ? q4_k_pair_avx512 : q6_k_pair_avx512) : (q4 ? q4_k_pair_avx2 : q6_k_pair_avx2))(
                row, row_bytes, k, x, y + r);
        }
        if (r < rows)
            y[r] = wide ? (q4 ? q4_k_avx512 : q6_k_avx512)(blocks + (size_t)r * row_bytes, k, x)
                        : (q4 ? q4_k_avx2 : q6_k_avx2)(blocks + (size_t)r * row_bytes, k, x);
        return true;
    }
    for (int r = 0; r < rows; r++) {
        const unsigned char *row = blocks + (size_t)r * row_bytes;
        y[r] = wide ? (q4 ? q4_k_avx512 : q6_k_avx512)(row, k, x) : (q4 ? q4_k_avx2 : q6_k_avx2)(row, k, x);
    }
    return true;
}
#endif

void
quant_int8_rows(enum quant_type q, const unsigned char *blocks, size_t row_bytes, int rows, int k,
                const struct linalg_q8 *x, float *y)
{
#ifdef INT8_X86
    if (rows_x86(q, blocks, row_bytes, rows, k, x, y))
        return;
#endif
    for (int r = 0; r < rows; r++)
        y[r] = row_portable(q, blocks + (size_t)r * row_bytes, k, x);
}

struct int8_job {
    enum quant_type q;
    const unsigned char *w;
    size_t row_bytes;
    int k, n;
    const struct linalg_q8 *x;
    float *y;
    int ldy;
};

/* Weight rows [begin, end) against every row of activations, 16 weight rows at a time. */
static void
int8_rows_job(void *ctx, int begin, int end)
{
    const struct int8_job *j = ctx;

    for (int r0 = begin; r0 < end; r0 += 16) {
        const int rows = end - r0 < 16 ? end - r0 : 16;
        for (int i = 0; i < j->n; i++)
            quant_int8_rows(j->q, j->w + (size_t)r0 * j->row_bytes, j->row_bytes, rows, j->k, &j->x[i],
                            j->y + (size_t)i * (size_t)j->ldy + (size_t)r0);
    }
}

int
quant_int8_product(enum quant_type q, const unsigned char *w, int out, int in, int n,
                   const float *x, int ldx, float *y, int ldy, int threads)
{
    const size_t per = linalg_q8_bytes(in);
    unsigned char *mem;
    struct linalg_q8 *rows;

    if (!quant_int8_by_rows(q) || in % QK_K != 0 || n <= 0)
        return -1;
    mem = (unsigned char *)workspace_scratch(workspace_thread(),
                                             ((size_t)n * (per + sizeof *rows) + 64 + 3) / 4);
    if (mem == NULL)
        return -1;
    rows = (struct linalg_q8 *)(void *)(mem + (size_t)n * per);
    for (int i = 0; i < n; i++)
        linalg_q8_quantize(quant_panel_format(q), x + (size_t)i * (size_t)ldx, in, mem + (size_t)i * per,
                           &rows[i]);
    {
        struct int8_job job = { q, w, (size_t)in / QK_K * quant_block_bytes(q), in, n, rows, y, ldy };
        parallel_for(out, (long)in * n, threads, int8_rows_job, &job);
    }
    return 0;
}
