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
/* ------------------------------------------------------------------- AVX2 */

__attribute__((target("avx2"), always_inline)) static inline int32_t
hsum_epi32(__m256i v)
{
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
    return _mm_cvtsi128_si32(s);
}

static uint16_t
bits_at(const unsigned char *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

/*
 * A Q4_K row: each super-block's 8 scales and minimums (6 bits, packed in
 * 12 bytes) taken apart, the minimums' share summed in scalars; 64 levels
 * a 32-byte load (the low nibbles one group's, the high the next's), each
 * nibble times its activation and pairs added by vpmaddubsw (at most
 * 2 x 15 x 127), the group's scale by vpmaddwd.
 */
__attribute__((target("avx2,fma"))) static float
row_q4_k_avx2(const unsigned char *row, int k, const struct linalg_q8 *x)
{
    const __m256i m15 = _mm256_set1_epi8(15);
    float acc = 0.0f;

    for (int b = 0; b < k / QK_K; b++) {
        const unsigned char *blk = row + (size_t)b * 144;
        const unsigned char *s = blk + 4, *qs = blk + 16;
        const int8_t *xq = x->q + b * QK_K;
        const int32_t *xs = x->sums + b * (QK_K / 16);
        int sc[8], m[8];
        int32_t summ = 0;
        __m256i sum = _mm256_setzero_si256();
        for (int j = 0; j < 4; j++) {
            sc[j] = s[j] & 63;
            m[j] = s[j + 4] & 63;
            sc[j + 4] = (s[j + 8] & 15) | (s[j] >> 6) << 4;
            m[j + 4] = (s[j + 8] >> 4) | (s[j + 4] >> 6) << 4;
        }
        for (int j = 0; j < 8; j++)
            summ += m[j] * (xs[2 * j] + xs[2 * j + 1]);
        for (int it = 0; it < 4; it++) {
            const __m256i q4 = _mm256_loadu_si256((const __m256i *)(const void *)(qs + 32 * it));
            const __m256i lo = _mm256_and_si256(q4, m15);
            const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(q4, 4), m15);
            const __m256i a_lo = _mm256_loadu_si256((const __m256i *)(const void *)(xq + 64 * it));
            const __m256i a_hi = _mm256_loadu_si256((const __m256i *)(const void *)(xq + 64 * it + 32));
            const __m256i p_lo = _mm256_madd_epi16(_mm256_maddubs_epi16(lo, a_lo),
                                                   _mm256_set1_epi16((short)sc[2 * it]));
            const __m256i p_hi = _mm256_madd_epi16(_mm256_maddubs_epi16(hi, a_hi),
                                                   _mm256_set1_epi16((short)sc[2 * it + 1]));
            sum = _mm256_add_epi32(sum, _mm256_add_epi32(p_lo, p_hi));
        }
        acc = block_step(QUANT_Q4_K, acc, x->d[b], tensor_f16_to_f32(bits_at(blk)),
                         tensor_f16_to_f32(bits_at(blk + 2)), hsum_epi32(sum), summ);
    }
    return acc;
}

/*
 * A Q6_K row: 128 values a half, four 32-value runs of a 6-bit level (its
 * low four bits in ql, its high two in qh), each run two groups of 16
 * whose scales vpshufb spreads over the run's lanes; the -32 offset's
 * share (32 sc_g times the group's activation sum) taken once a block.
 */
__attribute__((target("avx2,fma"))) static float
row_q6_k_avx2(const unsigned char *row, int k, const struct linalg_q8 *x)
{
    const __m256i m15 = _mm256_set1_epi8(15), m3 = _mm256_set1_epi8(3);
    float acc = 0.0f;

    for (int b = 0; b < k / QK_K; b++) {
        const unsigned char *blk = row + (size_t)b * 210;
        const __m128i scb = _mm_loadu_si128((const __m128i *)(const void *)(blk + 192));
        const int8_t *xq = x->q + b * QK_K;
        const __m256i sums_lo = _mm256_loadu_si256((const __m256i *)(const void *)(x->sums + b * 16));
        const __m256i sums_hi = _mm256_loadu_si256((const __m256i *)(const void *)(x->sums + b * 16 + 8));
        const __m256i offset = _mm256_add_epi32(
            _mm256_mullo_epi32(_mm256_cvtepi8_epi32(scb), sums_lo),
            _mm256_mullo_epi32(_mm256_cvtepi8_epi32(_mm_srli_si128(scb, 8)), sums_hi));
        __m256i sum = _mm256_setzero_si256();
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
            for (int r = 0; r < 4; r++) {
                /* (groups g and g + 1: their scales in the low eight lanes and the high eight) */
                const int g = 8 * half + 2 * r;
                const __m128i spread = _mm_shuffle_epi8(
                    scb, _mm_set_epi8((char)(g + 1), (char)(g + 1), (char)(g + 1), (char)(g + 1),
                                      (char)(g + 1), (char)(g + 1), (char)(g + 1), (char)(g + 1),
                                      (char)g, (char)g, (char)g, (char)g, (char)g, (char)g,
                                      (char)g, (char)g));
                const __m256i a = _mm256_loadu_si256(
                    (const __m256i *)(const void *)(xq + 128 * half + 32 * r));
                sum = _mm256_add_epi32(sum, _mm256_madd_epi16(_mm256_maddubs_epi16(q[r], a),
                                                              _mm256_cvtepi8_epi16(spread)));
            }
        }
        sum = _mm256_sub_epi32(sum, _mm256_slli_epi32(offset, 5));
        acc = block_step(QUANT_Q6_K, acc, x->d[b], tensor_f16_to_f32(bits_at(blk + 208)), 0.0f,
                         hsum_epi32(sum), 0);
    }
    return acc;
}
#endif

void
quant_int8_rows(enum quant_type q, const unsigned char *blocks, size_t row_bytes, int rows, int k,
                const struct linalg_q8 *x, float *y)
{
    for (int r = 0; r < rows; r++) {
        const unsigned char *row = blocks + (size_t)r * row_bytes;
#ifdef INT8_X86
        if (cpu_isa() == CPU_AVX2 || cpu_isa() == CPU_AVX512) {
            y[r] = q == QUANT_Q4_K ? row_q4_k_avx2(row, k, x) : row_q6_k_avx2(row, k, x);
            continue;
        }
#endif
        y[r] = row_portable(q, row, k, x);
    }
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
