/*
 * linalg_tiles.c: the products' micro-kernels (see linalg.c for the
 * blocking and packing that feed them): an MR x NR tile of C in registers
 * over a block of k, and one row of A against whole panels, for each
 * instruction set: portable C, AVX2 (6 x 16), AVX-512 (12 x 32, with 8- and
 * 4-row tiles), NEON (6 x 16).  Every element of C the same chain of FMAs
 * in order of k whatever the kernel, so the same bits.
 */
#include "config.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "attnscope/kernels/cpu.h"

#include "linalg_internal.h"

/* --------------------------------------------------------------- portable */


#define TILE_PORTABLE(NAME, TYPE, LOAD)                                                            \
    static void NAME(int kc, const float *pa, const void *pbv, float *c, int ldc, int accumulate)  \
    {                                                                                              \
        const TYPE *pb = pbv;                                                                      \
        float acc[4][4];                                                                           \
                                                                                                   \
        for (int i = 0; i < 4; i++)                                                                \
            for (int j = 0; j < 4; j++)                                                            \
                acc[i][j] = accumulate ? c[i * ldc + j] : 0.0f;                                    \
        for (int p = 0; p < kc; p++)                                                               \
            for (int i = 0; i < 4; i++)                                                            \
                for (int j = 0; j < 4; j++)                                                        \
                    acc[i][j] = fmaf(pa[p * 4 + i], LOAD(pb, p * 4, j), acc[i][j]);                \
        for (int i = 0; i < 4; i++)                                                                \
            for (int j = 0; j < 4; j++)                                                            \
                c[i * ldc + j] = acc[i][j];                                                        \
    }
#define AT_F32(pb, row, j) pb[(row) + (j)]
#define AT_BF16(pb, row, j) linalg_bf16_float(pb[(row) + slot16(j, 4)])
TILE_PORTABLE(tile_portable, float, AT_F32)
TILE_PORTABLE(tile16_portable, uint16_t, AT_BF16)
#undef AT_F32
#undef AT_BF16

#ifdef LINALG_X86
/* ------------------------------------------------------------------ AVX2 */

/* B's row at pb + at as b0 (columns 0-7) and b1 (8-15): floats, or 16 interleaved bfloat16. */
#define ROW16_F32(pb, at, b0, b1)                                                                  \
    const __m256 b0 = _mm256_loadu_ps((const float *)(pb) + (at));                                 \
    const __m256 b1 = _mm256_loadu_ps((const float *)(pb) + (at) + 8);
#define ROW16_BF16(pb, at, b0, b1)                                                                 \
    const __m256i b0##b1 = _mm256_loadu_si256((const __m256i *)((const uint16_t *)(pb) + (at)));   \
    const __m256 b0 = _mm256_castsi256_ps(_mm256_slli_epi32(b0##b1, 16));                           \
    const __m256 b1 = _mm256_castsi256_ps(_mm256_and_si256(b0##b1, _mm256_set1_epi32(-65536)));

#define TILE_AVX2(NAME, ROW16)                                                                        \
    __attribute__((target("avx2,fma"))) static void NAME(int kc, const float *pa, const void *pb,  \
                                                         float *c, int ldc, int accumulate)        \
    {                                                                                              \
        __m256 c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51;                         \
                                                                                                   \
        if (accumulate) {                                                                          \
            c00 = _mm256_loadu_ps(c + 0 * ldc), c01 = _mm256_loadu_ps(c + 0 * ldc + 8);            \
            c10 = _mm256_loadu_ps(c + 1 * ldc), c11 = _mm256_loadu_ps(c + 1 * ldc + 8);            \
            c20 = _mm256_loadu_ps(c + 2 * ldc), c21 = _mm256_loadu_ps(c + 2 * ldc + 8);            \
            c30 = _mm256_loadu_ps(c + 3 * ldc), c31 = _mm256_loadu_ps(c + 3 * ldc + 8);            \
            c40 = _mm256_loadu_ps(c + 4 * ldc), c41 = _mm256_loadu_ps(c + 4 * ldc + 8);            \
            c50 = _mm256_loadu_ps(c + 5 * ldc), c51 = _mm256_loadu_ps(c + 5 * ldc + 8);            \
        } else {                                                                                   \
            c00 = c01 = c10 = c11 = c20 = c21 = c30 = c31 = c40 = c41 = c50 = c51 =                \
                _mm256_setzero_ps();                                                               \
        }                                                                                          \
        for (int p = 0; p < kc; p++) {                                                             \
            ROW16(pb, p * 16, b0, b1)                                                              \
            const float *a = pa + p * 6;                                                           \
            __m256 ai;                                                                             \
            ai = _mm256_broadcast_ss(a + 0), c00 = _mm256_fmadd_ps(ai, b0, c00),                   \
            c01 = _mm256_fmadd_ps(ai, b1, c01);                                                    \
            ai = _mm256_broadcast_ss(a + 1), c10 = _mm256_fmadd_ps(ai, b0, c10),                   \
            c11 = _mm256_fmadd_ps(ai, b1, c11);                                                    \
            ai = _mm256_broadcast_ss(a + 2), c20 = _mm256_fmadd_ps(ai, b0, c20),                   \
            c21 = _mm256_fmadd_ps(ai, b1, c21);                                                    \
            ai = _mm256_broadcast_ss(a + 3), c30 = _mm256_fmadd_ps(ai, b0, c30),                   \
            c31 = _mm256_fmadd_ps(ai, b1, c31);                                                    \
            ai = _mm256_broadcast_ss(a + 4), c40 = _mm256_fmadd_ps(ai, b0, c40),                   \
            c41 = _mm256_fmadd_ps(ai, b1, c41);                                                    \
            ai = _mm256_broadcast_ss(a + 5), c50 = _mm256_fmadd_ps(ai, b0, c50),                   \
            c51 = _mm256_fmadd_ps(ai, b1, c51);                                                    \
        }                                                                                          \
        _mm256_storeu_ps(c + 0 * ldc, c00), _mm256_storeu_ps(c + 0 * ldc + 8, c01);                \
        _mm256_storeu_ps(c + 1 * ldc, c10), _mm256_storeu_ps(c + 1 * ldc + 8, c11);                \
        _mm256_storeu_ps(c + 2 * ldc, c20), _mm256_storeu_ps(c + 2 * ldc + 8, c21);                \
        _mm256_storeu_ps(c + 3 * ldc, c30), _mm256_storeu_ps(c + 3 * ldc + 8, c31);                \
        _mm256_storeu_ps(c + 4 * ldc, c40), _mm256_storeu_ps(c + 4 * ldc + 8, c41);                \
        _mm256_storeu_ps(c + 5 * ldc, c50), _mm256_storeu_ps(c + 5 * ldc + 8, c51);                \
    }
TILE_AVX2(tile_avx2, ROW16_F32)
TILE_AVX2(tile16_avx2, ROW16_BF16)

/*
 * One row of A against whole panels of 16 columns (AVX2's), four panels at
 * once: eight chains in flight, each column its own chain of FMAs in order
 * of k (the tiles' bits); panels kc * 16 apart.
 */
#define ROW_AVX2(NAME, ROW16, TYPE)                                                                \
    __attribute__((target("avx2,fma"))) static void NAME(int kc, const float *a, const void *pbv,  \
                                                         int panels, float *c, int accumulate)     \
    {                                                                                              \
        const TYPE *pb = pbv;                                                                      \
        const size_t step = (size_t)kc * 16;                                                       \
        for (int q = 0; q + 4 <= panels; q += 4) {                                                 \
            const TYPE *b = pb + (size_t)q * step;                                                 \
            float *cq = c + q * 16;                                                                \
            __m256 c0, c1, c2, c3, c4, c5, c6, c7;                                                 \
            if (accumulate) {                                                                      \
                c0 = _mm256_loadu_ps(cq), c1 = _mm256_loadu_ps(cq + 8);                            \
                c2 = _mm256_loadu_ps(cq + 16), c3 = _mm256_loadu_ps(cq + 24);                      \
                c4 = _mm256_loadu_ps(cq + 32), c5 = _mm256_loadu_ps(cq + 40);                      \
                c6 = _mm256_loadu_ps(cq + 48), c7 = _mm256_loadu_ps(cq + 56);                      \
            } else {                                                                               \
                c0 = c1 = c2 = c3 = c4 = c5 = c6 = c7 = _mm256_setzero_ps();                       \
            }                                                                                      \
            for (int p = 0; p < kc; p++) {                                                         \
                const __m256 ap = _mm256_broadcast_ss(a + p);                                      \
                ROW16(b, (size_t)p * 16, b0, b1)                                                   \
                ROW16(b + step, (size_t)p * 16, b2, b3)                                            \
                ROW16(b + 2 * step, (size_t)p * 16, b4, b5)                                        \
                ROW16(b + 3 * step, (size_t)p * 16, b6, b7)                                        \
                c0 = _mm256_fmadd_ps(ap, b0, c0), c1 = _mm256_fmadd_ps(ap, b1, c1);                \
                c2 = _mm256_fmadd_ps(ap, b2, c2), c3 = _mm256_fmadd_ps(ap, b3, c3);                \
                c4 = _mm256_fmadd_ps(ap, b4, c4), c5 = _mm256_fmadd_ps(ap, b5, c5);                \
                c6 = _mm256_fmadd_ps(ap, b6, c6), c7 = _mm256_fmadd_ps(ap, b7, c7);                \
            }                                                                                      \
            _mm256_storeu_ps(cq, c0), _mm256_storeu_ps(cq + 8, c1);                                \
            _mm256_storeu_ps(cq + 16, c2), _mm256_storeu_ps(cq + 24, c3);                          \
            _mm256_storeu_ps(cq + 32, c4), _mm256_storeu_ps(cq + 40, c5);                          \
            _mm256_storeu_ps(cq + 48, c6), _mm256_storeu_ps(cq + 56, c7);                          \
        }                                                                                          \
        for (int q = panels / 4 * 4; q < panels; q++) {                                            \
            const TYPE *b = pb + (size_t)q * step;                                                 \
            float *cq = c + q * 16;                                                                \
            __m256 c0 = accumulate ? _mm256_loadu_ps(cq) : _mm256_setzero_ps();                    \
            __m256 c1 = accumulate ? _mm256_loadu_ps(cq + 8) : _mm256_setzero_ps();                \
            for (int p = 0; p < kc; p++) {                                                         \
                const __m256 ap = _mm256_broadcast_ss(a + p);                                      \
                ROW16(b, (size_t)p * 16, b0, b1)                                                   \
                c0 = _mm256_fmadd_ps(ap, b0, c0), c1 = _mm256_fmadd_ps(ap, b1, c1);                \
            }                                                                                      \
            _mm256_storeu_ps(cq, c0), _mm256_storeu_ps(cq + 8, c1);                                \
        }                                                                                          \
    }
ROW_AVX2(row_avx2, ROW16_F32, float)
ROW_AVX2(row16_avx2, ROW16_BF16, uint16_t)

/* ---------------------------------------------------------------- AVX-512 */

#define ROWS12(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
#define ROWS8(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
#define ROWS4(X) X(0) X(1) X(2) X(3)

/*
 * c (R, 32) = c (when accumulate) + pa (kc, R of a 12-row panel) . pb (kc,
 * 32): the 12-row tile, and the 8- and 4-row tiles that finish a product
 * whose rows are not a multiple of 12 (16 rows: 12 + 4 computed, not 12 +
 * 12).  They read the same packed panels (12 wide, zero past the rows);
 * each element is the same chain of FMAs in order of k.
 */
#define TILE_AVX512(NAME, ROWS, ROW32)                                                              \
    __attribute__((target("avx512f"))) static void NAME(int kc, const float *pa, const void *pb,  \
                                                        float *c, int ldc, int accumulate)         \
    {                                                                                             \
        ROWS(DECLARE)                                                                             \
        if (accumulate) {                                                                         \
            ROWS(LOAD)                                                                            \
        } else {                                                                                  \
            ROWS(ZERO)                                                                            \
        }                                                                                         \
        for (int p = 0; p < kc; p++) {                                                            \
            ROW32(pb, p * 32, b0, b1)                                                             \
            const float *a = pa + p * 12;                                                         \
            __m512 ai;                                                                            \
            ROWS(STEP)                                                                            \
        }                                                                                         \
        ROWS(STORE)                                                                               \
    }
#define DECLARE(i) __m512 c##i##0, c##i##1;
#define LOAD(i) c##i##0 = _mm512_loadu_ps(c + i * ldc), c##i##1 = _mm512_loadu_ps(c + i * ldc + 16);
#define ZERO(i) c##i##0 = c##i##1 = _mm512_setzero_ps();
#define STEP(i)                                                                                   \
    ai = _mm512_set1_ps(a[i]), c##i##0 = _mm512_fmadd_ps(ai, b0, c##i##0),                        \
    c##i##1 = _mm512_fmadd_ps(ai, b1, c##i##1);
#define STORE(i) _mm512_storeu_ps(c + i * ldc, c##i##0), _mm512_storeu_ps(c + i * ldc + 16, c##i##1);
/* B's row at pb + at as b0 (columns 0-15) and b1 (16-31): floats, or 32 interleaved bfloat16. */
#define ROW32_F32(pb, at, b0, b1)                                                                 \
    const __m512 b0 = _mm512_loadu_ps((const float *)(pb) + (at));                                \
    const __m512 b1 = _mm512_loadu_ps((const float *)(pb) + (at) + 16);
#define ROW32_BF16(pb, at, b0, b1)                                                                \
    const __m512i b0##b1 = _mm512_loadu_si512((const uint16_t *)(pb) + (at));                     \
    const __m512 b0 = _mm512_castsi512_ps(_mm512_slli_epi32(b0##b1, 16));                          \
    const __m512 b1 = _mm512_castsi512_ps(_mm512_and_si512(b0##b1, _mm512_set1_epi32(-65536)));
TILE_AVX512(tile_avx512, ROWS12, ROW32_F32)
TILE_AVX512(tile8_avx512, ROWS8, ROW32_F32)
TILE_AVX512(tile4_avx512, ROWS4, ROW32_F32)
TILE_AVX512(tile16_avx512, ROWS12, ROW32_BF16)
TILE_AVX512(tile16_8_avx512, ROWS8, ROW32_BF16)
TILE_AVX512(tile16_4_avx512, ROWS4, ROW32_BF16)

/*
 * One row of A (a written token's: a matrix-vector product), four panels of
 * B at once: eight independent chains in flight where a tile of one row
 * would have two, so that reading B is what limits it.  Each column is
 * still its own chain of FMAs in order of k: the same bits as the tiles.
 * a is the row itself (not packed), panels kc * 32 apart.
 */
#define ROW_AVX512(NAME, ROW32, TYPE)                                                              \
    __attribute__((target("avx512f"))) static void NAME(int kc, const float *a, const void *pbv,  \
                                                        int panels, float *c, int accumulate)     \
    {                                                                                             \
        const TYPE *pb = pbv;                                                                     \
        const size_t step = (size_t)kc * 32;                                                      \
        for (int q = 0; q + 4 <= panels; q += 4) {                                                \
            const TYPE *b = pb + (size_t)q * step;                                                \
            float *cq = c + q * 32;                                                               \
            __m512 c0, c1, c2, c3, c4, c5, c6, c7;                                                \
            if (accumulate) {                                                                     \
                c0 = _mm512_loadu_ps(cq), c1 = _mm512_loadu_ps(cq + 16);                          \
                c2 = _mm512_loadu_ps(cq + 32), c3 = _mm512_loadu_ps(cq + 48);                     \
                c4 = _mm512_loadu_ps(cq + 64), c5 = _mm512_loadu_ps(cq + 80);                     \
                c6 = _mm512_loadu_ps(cq + 96), c7 = _mm512_loadu_ps(cq + 112);                    \
            } else {                                                                              \
                c0 = c1 = c2 = c3 = c4 = c5 = c6 = c7 = _mm512_setzero_ps();                      \
            }                                                                                     \
            for (int p = 0; p < kc; p++) {                                                        \
                const __m512 ap = _mm512_set1_ps(a[p]);                                           \
                ROW32(b, (size_t)p * 32, b0, b1)                                                  \
                ROW32(b + step, (size_t)p * 32, b2, b3)                                           \
                ROW32(b + 2 * step, (size_t)p * 32, b4, b5)                                       \
                ROW32(b + 3 * step, (size_t)p * 32, b6, b7)                                       \
                c0 = _mm512_fmadd_ps(ap, b0, c0), c1 = _mm512_fmadd_ps(ap, b1, c1);               \
                c2 = _mm512_fmadd_ps(ap, b2, c2), c3 = _mm512_fmadd_ps(ap, b3, c3);               \
                c4 = _mm512_fmadd_ps(ap, b4, c4), c5 = _mm512_fmadd_ps(ap, b5, c5);               \
                c6 = _mm512_fmadd_ps(ap, b6, c6), c7 = _mm512_fmadd_ps(ap, b7, c7);               \
            }                                                                                     \
            _mm512_storeu_ps(cq, c0), _mm512_storeu_ps(cq + 16, c1);                              \
            _mm512_storeu_ps(cq + 32, c2), _mm512_storeu_ps(cq + 48, c3);                         \
            _mm512_storeu_ps(cq + 64, c4), _mm512_storeu_ps(cq + 80, c5);                         \
            _mm512_storeu_ps(cq + 96, c6), _mm512_storeu_ps(cq + 112, c7);                        \
        }                                                                                         \
        for (int q = panels / 4 * 4; q < panels; q++) {                                           \
            const TYPE *b = pb + (size_t)q * step;                                                \
            float *cq = c + q * 32;                                                               \
            __m512 c0 = accumulate ? _mm512_loadu_ps(cq) : _mm512_setzero_ps();                   \
            __m512 c1 = accumulate ? _mm512_loadu_ps(cq + 16) : _mm512_setzero_ps();              \
            for (int p = 0; p < kc; p++) {                                                        \
                const __m512 ap = _mm512_set1_ps(a[p]);                                           \
                ROW32(b, (size_t)p * 32, b0, b1)                                                  \
                c0 = _mm512_fmadd_ps(ap, b0, c0), c1 = _mm512_fmadd_ps(ap, b1, c1);               \
            }                                                                                     \
            _mm512_storeu_ps(cq, c0), _mm512_storeu_ps(cq + 16, c1);                              \
        }                                                                                         \
    }
ROW_AVX512(row_avx512, ROW32_F32, float)
ROW_AVX512(row16_avx512, ROW32_BF16, uint16_t)
#undef DECLARE
#undef LOAD
#undef ZERO
#undef STEP
#undef STORE
#endif

#ifdef LINALG_NEON
/* ------------------------------------------------------------------ NEON */

/*
 * A row of a panel of 16 columns at pb + at as four vectors of four:
 * floats, or 16 interleaved bfloat16 (slot16: the first load's even halves
 * are columns 0-3, its odd ones 8-11; the second's 4-7 and 12-15), each
 * widened by a shift or a mask: the exact conversion.
 */
#define ROW16N_F32(pb, at, b)                                                                      \
    const float *r_##b = (const float *)(pb) + (at);                                               \
    const float32x4_t b##0 = vld1q_f32(r_##b), b##1 = vld1q_f32(r_##b + 4),                        \
                      b##2 = vld1q_f32(r_##b + 8), b##3 = vld1q_f32(r_##b + 12);
#define ROW16N_BF16(pb, at, b)                                                                     \
    const uint32x4_t l_##b = vld1q_u32((const uint32_t *)(const void *)((const uint16_t *)(pb) + (at))); \
    const uint32x4_t h_##b = vld1q_u32((const uint32_t *)(const void *)((const uint16_t *)(pb) + (at) + 8)); \
    const float32x4_t b##0 = vreinterpretq_f32_u32(vshlq_n_u32(l_##b, 16)),                       \
                      b##1 = vreinterpretq_f32_u32(vshlq_n_u32(h_##b, 16)),                       \
                      b##2 = vreinterpretq_f32_u32(vandq_u32(l_##b, vdupq_n_u32(0xffff0000u))),   \
                      b##3 = vreinterpretq_f32_u32(vandq_u32(h_##b, vdupq_n_u32(0xffff0000u)));

/* c (6, 16) = c (when accumulate) + pa (kc, 6) . pb (kc, 16): 24 chains, each its own. */
#define TILE_NEON(NAME, ROW16)                                                                     \
    static void NAME(int kc, const float *pa, const void *pb, float *c, int ldc, int accumulate)   \
    {                                                                                              \
        float32x4_t acc[6][4];                                                                     \
        for (int i = 0; i < 6; i++)                                                                \
            for (int v = 0; v < 4; v++)                                                            \
                acc[i][v] = accumulate ? vld1q_f32(c + i * ldc + 4 * v) : vdupq_n_f32(0.0f);       \
        for (int p = 0; p < kc; p++) {                                                             \
            ROW16(pb, p * 16, b)                                                                   \
            const float32x4_t a03 = vld1q_f32(pa + p * 6);                                         \
            const float32x2_t a45 = vld1_f32(pa + p * 6 + 4);                                      \
            _Pragma("GCC unroll 4") for (int i = 0; i < 4; i++) {                                  \
                acc[i][0] = vfmaq_laneq_f32(acc[i][0], b0, a03, i);                                \
                acc[i][1] = vfmaq_laneq_f32(acc[i][1], b1, a03, i);                                \
                acc[i][2] = vfmaq_laneq_f32(acc[i][2], b2, a03, i);                                \
                acc[i][3] = vfmaq_laneq_f32(acc[i][3], b3, a03, i);                                \
            }                                                                                      \
            _Pragma("GCC unroll 2") for (int i = 0; i < 2; i++) {                                  \
                acc[4 + i][0] = vfmaq_lane_f32(acc[4 + i][0], b0, a45, i);                         \
                acc[4 + i][1] = vfmaq_lane_f32(acc[4 + i][1], b1, a45, i);                         \
                acc[4 + i][2] = vfmaq_lane_f32(acc[4 + i][2], b2, a45, i);                         \
                acc[4 + i][3] = vfmaq_lane_f32(acc[4 + i][3], b3, a45, i);                         \
            }                                                                                      \
        }                                                                                          \
        for (int i = 0; i < 6; i++)                                                                \
            for (int v = 0; v < 4; v++)                                                            \
                vst1q_f32(c + i * ldc + 4 * v, acc[i][v]);                                         \
    }
TILE_NEON(tile_neon, ROW16N_F32)
TILE_NEON(tile16_neon, ROW16N_BF16)

/* One row of A against whole panels of 16, two panels at once: eight chains in flight. */
#define ROW_NEON(NAME, ROW16, TYPE)                                                                \
    static void NAME(int kc, const float *a, const void *pbv, int panels, float *c, int accumulate) \
    {                                                                                              \
        const TYPE *pb = pbv;                                                                      \
        const size_t step = (size_t)kc * 16;                                                       \
        for (int q = 0; q < panels; q += 2) {                                                      \
            const int two = q + 1 < panels;                                                        \
            const TYPE *bq = pb + (size_t)q * step, *br = two ? bq + step : bq;                    \
            float *cq = c + q * 16;                                                                \
            float32x4_t acc[8];                                                                    \
            for (int v = 0; v < 8; v++)                                                            \
                acc[v] = accumulate && (v < 4 || two) ? vld1q_f32(cq + 4 * v) : vdupq_n_f32(0.0f); \
            for (int p = 0; p < kc; p++) {                                                         \
                const float32x4_t ap = vdupq_n_f32(a[p]);                                          \
                ROW16(bq, (size_t)p * 16, x)                                                       \
                ROW16(br, (size_t)p * 16, y)                                                       \
                acc[0] = vfmaq_f32(acc[0], ap, x0), acc[1] = vfmaq_f32(acc[1], ap, x1);            \
                acc[2] = vfmaq_f32(acc[2], ap, x2), acc[3] = vfmaq_f32(acc[3], ap, x3);            \
                acc[4] = vfmaq_f32(acc[4], ap, y0), acc[5] = vfmaq_f32(acc[5], ap, y1);            \
                acc[6] = vfmaq_f32(acc[6], ap, y2), acc[7] = vfmaq_f32(acc[7], ap, y3);            \
            }                                                                                      \
            for (int v = 0; v < (two ? 8 : 4); v++)                                                \
                vst1q_f32(cq + 4 * v, acc[v]);                                                     \
        }                                                                                          \
    }
ROW_NEON(row_neon, ROW16N_F32, float)
ROW_NEON(row16_neon, ROW16N_BF16, uint16_t)
#endif

const struct kernel linalg_kernels[CPU_ISAS] = {
    [CPU_PORTABLE] = { 4, 4, { tile_portable, NULL, NULL, NULL },
                       { tile16_portable, NULL, NULL, NULL } },
#ifdef LINALG_X86
    [CPU_AVX2] = { 6, 16, { tile_avx2, NULL, NULL, row_avx2 }, { tile16_avx2, NULL, NULL, row16_avx2 } },
    [CPU_AVX512] = { 12, 32,
                     { tile_avx512, tile4_avx512, tile8_avx512, row_avx512 },
                     { tile16_avx512, tile16_4_avx512, tile16_8_avx512, row16_avx512 } },
#endif
#ifdef LINALG_NEON
    [CPU_NEON] = { 6, 16, { tile_neon, NULL, NULL, row_neon }, { tile16_neon, NULL, NULL, row16_neon } },
#endif
};
