/*
 * linalg_row.c: one row of A against a matrix read in place, for a written
 * token's attention (see linalg.h: linalg_row_nt, linalg_row_nn and their
 * every-head forms).  Nothing is packed; each element is the chain of FMAs
 * in order of k, as in linalg.c's products, so the bits are theirs.
 */
#include "config.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "attnscope/kernels/cpu.h"
#include "attnscope/kernels/linalg.h"
#include "linalg_internal.h"

#ifdef LINALG_X86
/*
 * Rows j0 .. j0 + 16 of b against a: 16 x 16 blocks transposed in
 * registers, so that lane j of the accumulator walks row j's k in order
 * (its own FMA chain); the tail of k past the last 16 in order after them.
 */
__attribute__((target("avx512f"), always_inline)) static inline __m512
row_nt_block(int p0, const float *a, const float *b, int ldb, __m512 acc)
{
    __m512 r[16];

    for (int i = 0; i < 16; i++)
        r[i] = _mm512_loadu_ps(b + (size_t)i * (size_t)ldb + (size_t)p0);
    transpose16_regs(r);
    for (int q = 0; q < 16; q++)
        acc = _mm512_fmadd_ps(_mm512_set1_ps(a[p0 + q]), r[q], acc);
    return acc;
}

__attribute__((target("avx512f"))) static __m512
row_nt_tail(int p0, int k, const float *a, const float *b, int ldb, __m512 acc)
{
    float lanes[16];

    if (p0 >= k)
        return acc;
    _mm512_storeu_ps(lanes, acc);
    for (int i = 0; i < 16; i++)
        for (int p = p0; p < k; p++)
            lanes[i] = fmaf(a[p], b[(size_t)i * (size_t)ldb + (size_t)p], lanes[i]);
    return _mm512_loadu_ps(lanes);
}

/* 16 rows of b at a time, each lane its row's chain. */
__attribute__((target("avx512f"))) static int
row_nt_avx512(int n, int k, const float *a, const float *b, int ldb, float *c)
{
    int j0 = 0;

    for (; j0 + 16 <= n; j0 += 16) {
        const float *b0 = b + (size_t)j0 * (size_t)ldb;
        __m512 acc = _mm512_setzero_ps();
        int p0;
        for (p0 = 0; p0 + 16 <= k; p0 += 16)
            acc = row_nt_block(p0, a, b0, ldb, acc);
        _mm512_storeu_ps(c + j0, row_nt_tail(p0, k, a, b0, ldb, acc));
    }
    return j0;
}

/*
 * The same for a half-precision b read in place (a GGUF's F16 matrix, a
 * written token's product): each 16 x 16 block widened (F16C, exact) and
 * transposed in registers.  Reading b is what limits it.
 */
__attribute__((target("avx512f"))) static int
row_f16_avx512(int n, int k, const float *a, const uint16_t *b, size_t ldb, float *c)
{
    int j0 = 0;

    for (; j0 + 16 <= n; j0 += 16) {
        const uint16_t *b0 = b + (size_t)j0 * ldb;
        __m512 acc = _mm512_setzero_ps();
        int p0;
        for (p0 = 0; p0 + 16 <= k; p0 += 16) {
            __m512 r[16];
#pragma GCC unroll 16
            for (int i = 0; i < 16; i++)
                r[i] = _mm512_cvtph_ps(
                    _mm256_loadu_si256((const __m256i *)(b0 + (size_t)i * ldb + (size_t)p0)));
            transpose16_regs(r);
#pragma GCC unroll 16
            for (int q = 0; q < 16; q++)
                acc = _mm512_fmadd_ps(_mm512_set1_ps(a[p0 + q]), r[q], acc);
        }
        if (p0 < k) {
            float lanes[16];
            _mm512_storeu_ps(lanes, acc);
            for (int i = 0; i < 16; i++)
                for (int p = p0; p < k; p++)
                    lanes[i] = fmaf(a[p], linalg_half_float(b0[(size_t)i * ldb + (size_t)p]), lanes[i]);
            acc = _mm512_loadu_ps(lanes);
        }
        _mm512_storeu_ps(c + j0, acc);
    }
    return j0;
}

/* 16 columns of b at a time: each lane its column's chain over k, row by row. */
__attribute__((target("avx512f"))) static int
row_nn_avx512(int n, int k, const float *a, const float *b, int ldb, float *c)
{
    int j0 = 0;

    for (; j0 + 64 <= n; j0 += 64) {
        __m512 c0 = _mm512_setzero_ps(), c1 = c0, c2 = c0, c3 = c0;
        for (int p = 0; p < k; p++) {
            const float *row = b + (size_t)p * (size_t)ldb + (size_t)j0;
            const __m512 ap = _mm512_set1_ps(a[p]);
            c0 = _mm512_fmadd_ps(ap, _mm512_loadu_ps(row), c0);
            c1 = _mm512_fmadd_ps(ap, _mm512_loadu_ps(row + 16), c1);
            c2 = _mm512_fmadd_ps(ap, _mm512_loadu_ps(row + 32), c2);
            c3 = _mm512_fmadd_ps(ap, _mm512_loadu_ps(row + 48), c3);
        }
        _mm512_storeu_ps(c + j0, c0);
        _mm512_storeu_ps(c + j0 + 16, c1);
        _mm512_storeu_ps(c + j0 + 32, c2);
        _mm512_storeu_ps(c + j0 + 48, c3);
    }
    for (; j0 + 16 <= n; j0 += 16) {
        __m512 c0 = _mm512_setzero_ps();
        for (int p = 0; p < k; p++)
            c0 = _mm512_fmadd_ps(_mm512_set1_ps(a[p]),
                                 _mm512_loadu_ps(b + (size_t)p * (size_t)ldb + (size_t)j0), c0);
        _mm512_storeu_ps(c + j0, c0);
    }
    return j0;
}

/*
 * linalg_row_nt_heads for keys 0 .. (n rounded down to 16): a block of 16
 * keys at a time, every head against it before the next block, so the keys
 * are read once, in the order they lie in memory (a head at a time walks
 * them a column slice apart, which no prefetcher follows).
 */
__attribute__((target("avx512f"))) static int
row_nt_heads_avx512(int n, int k, int h0, int h1, int group, const float *a, size_t lda,
                    const float *b, int ldb, float *c, size_t ldc)
{
    const size_t ld = (size_t)ldb;
    int j0 = 0;

    for (; j0 + 16 <= n; j0 += 16) {
        for (int h = h0; h < h1; h++) {
            const float *ah = a + (size_t)h * lda;
            const float *b0 = b + (size_t)j0 * ld + (size_t)(h / group) * (size_t)k;
            __m512 acc = _mm512_setzero_ps();
            int p0;
            for (p0 = 0; p0 + 16 <= k; p0 += 16)
                acc = row_nt_block(p0, ah, b0, ldb, acc);
            _mm512_storeu_ps(c + (size_t)h * ldc + (size_t)j0, row_nt_tail(p0, k, ah, b0, ldb, acc));
        }
    }
    return j0;
}

/*
 * linalg_row_nn_heads for columns 0 .. (n rounded down to 16) of every head:
 * 16 rows of b at a time, every head's columns over them before the next 16
 * rows (b read once, in order); each column's chain carried from block to
 * block in c, so it stays the chain in order of k.
 */
__attribute__((target("avx512f"))) static int
row_nn_heads_avx512(int n, int k, int h0, int h1, int group, const float *a, size_t lda,
                    const float *b, int ldb, float *c, size_t ldc)
{
    const int n16 = n / 16 * 16;

    for (int h = h0; h < h1; h++)
        memset(c + (size_t)h * ldc, 0, (size_t)n16 * sizeof *c);
    for (int p0 = 0; p0 < k; p0 += 16) {
        const int p1 = p0 + 16 < k ? p0 + 16 : k;
        for (int h = h0; h < h1; h++) {
            const float *ah = a + (size_t)h * lda;
            const float *bh = b + (size_t)(h / group) * (size_t)n;
            float *ch = c + (size_t)h * ldc;
            for (int j0 = 0; j0 < n16; j0 += 16) {
                __m512 acc = _mm512_loadu_ps(ch + j0);
                for (int p = p0; p < p1; p++)
                    acc = _mm512_fmadd_ps(_mm512_set1_ps(ah[p]),
                                          _mm512_loadu_ps(bh + (size_t)p * (size_t)ldb + (size_t)j0),
                                          acc);
                _mm512_storeu_ps(ch + j0, acc);
            }
        }
    }
    return n16;
}

/* -------------------------------------------------------------- AVX2 */

/*
 * The same kernels eight lanes wide: 8 x 8 blocks transposed in
 * registers, lane j row j's chain; the tail of k in order after them.
 */
__attribute__((target("avx2,fma"), always_inline)) static inline __m256
row_nt_block8(int p0, const float *a, const float *b, int ldb, __m256 acc)
{
    __m256 r[8];

#pragma GCC unroll 8
    for (int i = 0; i < 8; i++)
        r[i] = _mm256_loadu_ps(b + (size_t)i * (size_t)ldb + (size_t)p0);
    transpose8_regs(r);
#pragma GCC unroll 8
    for (int q = 0; q < 8; q++)
        acc = _mm256_fmadd_ps(_mm256_broadcast_ss(a + p0 + q), r[q], acc);
    return acc;
}

__attribute__((target("avx2,fma"))) static __m256
row_nt_tail8(int p0, int k, const float *a, const float *b, int ldb, __m256 acc)
{
    float lanes[8];

    if (p0 >= k)
        return acc;
    _mm256_storeu_ps(lanes, acc);
    for (int i = 0; i < 8; i++)
        for (int p = p0; p < k; p++)
            lanes[i] = fmaf(a[p], b[(size_t)i * (size_t)ldb + (size_t)p], lanes[i]);
    return _mm256_loadu_ps(lanes);
}

/* 16 rows of b at a time as two chains of eight (two in flight), each lane its row's chain. */
__attribute__((target("avx2,fma"))) static int
row_nt_avx2(int n, int k, const float *a, const float *b, int ldb, float *c)
{
    int j0 = 0;

    for (; j0 + 16 <= n; j0 += 16) {
        const float *b0 = b + (size_t)j0 * (size_t)ldb, *b1 = b0 + (size_t)8 * (size_t)ldb;
        __m256 acc0 = _mm256_setzero_ps(), acc1 = acc0;
        int p0;
        for (p0 = 0; p0 + 8 <= k; p0 += 8) {
            acc0 = row_nt_block8(p0, a, b0, ldb, acc0);
            acc1 = row_nt_block8(p0, a, b1, ldb, acc1);
        }
        _mm256_storeu_ps(c + j0, row_nt_tail8(p0, k, a, b0, ldb, acc0));
        _mm256_storeu_ps(c + j0 + 8, row_nt_tail8(p0, k, a, b1, ldb, acc1));
    }
    for (; j0 + 8 <= n; j0 += 8) {
        const float *b0 = b + (size_t)j0 * (size_t)ldb;
        __m256 acc = _mm256_setzero_ps();
        int p0;
        for (p0 = 0; p0 + 8 <= k; p0 += 8)
            acc = row_nt_block8(p0, a, b0, ldb, acc);
        _mm256_storeu_ps(c + j0, row_nt_tail8(p0, k, a, b0, ldb, acc));
    }
    return j0;
}

/* A half-precision b read in place, eight rows at a time (F16C's exact widening). */
__attribute__((target("avx2,fma,f16c"))) static int
row_f16_avx2(int n, int k, const float *a, const uint16_t *b, size_t ldb, float *c)
{
    int j0 = 0;

    for (; j0 + 8 <= n; j0 += 8) {
        const uint16_t *b0 = b + (size_t)j0 * ldb;
        __m256 acc = _mm256_setzero_ps();
        int p0;
        for (p0 = 0; p0 + 8 <= k; p0 += 8) {
            __m256 r[8];
#pragma GCC unroll 8
            for (int i = 0; i < 8; i++)
                r[i] = _mm256_cvtph_ps(
                    _mm_loadu_si128((const __m128i *)(b0 + (size_t)i * ldb + (size_t)p0)));
            transpose8_regs(r);
#pragma GCC unroll 8
            for (int q = 0; q < 8; q++)
                acc = _mm256_fmadd_ps(_mm256_broadcast_ss(a + p0 + q), r[q], acc);
        }
        if (p0 < k) {
            float lanes[8];
            _mm256_storeu_ps(lanes, acc);
            for (int i = 0; i < 8; i++)
                for (int p = p0; p < k; p++)
                    lanes[i] = fmaf(a[p], linalg_half_float(b0[(size_t)i * ldb + (size_t)p]), lanes[i]);
            acc = _mm256_loadu_ps(lanes);
        }
        _mm256_storeu_ps(c + j0, acc);
    }
    return j0;
}

/* 32 columns of b at a time (four chains of eight), then eight. */
__attribute__((target("avx2,fma"))) static int
row_nn_avx2(int n, int k, const float *a, const float *b, int ldb, float *c)
{
    int j0 = 0;

    for (; j0 + 32 <= n; j0 += 32) {
        __m256 c0 = _mm256_setzero_ps(), c1 = c0, c2 = c0, c3 = c0;
        for (int p = 0; p < k; p++) {
            const float *row = b + (size_t)p * (size_t)ldb + (size_t)j0;
            const __m256 ap = _mm256_broadcast_ss(a + p);
            c0 = _mm256_fmadd_ps(ap, _mm256_loadu_ps(row), c0);
            c1 = _mm256_fmadd_ps(ap, _mm256_loadu_ps(row + 8), c1);
            c2 = _mm256_fmadd_ps(ap, _mm256_loadu_ps(row + 16), c2);
            c3 = _mm256_fmadd_ps(ap, _mm256_loadu_ps(row + 24), c3);
        }
        _mm256_storeu_ps(c + j0, c0);
        _mm256_storeu_ps(c + j0 + 8, c1);
        _mm256_storeu_ps(c + j0 + 16, c2);
        _mm256_storeu_ps(c + j0 + 24, c3);
    }
    for (; j0 + 8 <= n; j0 += 8) {
        __m256 c0 = _mm256_setzero_ps();
        for (int p = 0; p < k; p++)
            c0 = _mm256_fmadd_ps(_mm256_broadcast_ss(a + p),
                                 _mm256_loadu_ps(b + (size_t)p * (size_t)ldb + (size_t)j0), c0);
        _mm256_storeu_ps(c + j0, c0);
    }
    return j0;
}

/* linalg_row_nt_heads for keys 0 .. (n rounded down to 8): a block of 8 keys, every head. */
__attribute__((target("avx2,fma"))) static int
row_nt_heads_avx2(int n, int k, int h0, int h1, int group, const float *a, size_t lda,
                  const float *b, int ldb, float *c, size_t ldc)
{
    const size_t ld = (size_t)ldb;
    int j0 = 0;

    for (; j0 + 8 <= n; j0 += 8) {
        for (int h = h0; h < h1; h++) {
            const float *ah = a + (size_t)h * lda;
            const float *b0 = b + (size_t)j0 * ld + (size_t)(h / group) * (size_t)k;
            __m256 acc = _mm256_setzero_ps();
            int p0;
            for (p0 = 0; p0 + 8 <= k; p0 += 8)
                acc = row_nt_block8(p0, ah, b0, ldb, acc);
            _mm256_storeu_ps(c + (size_t)h * ldc + (size_t)j0, row_nt_tail8(p0, k, ah, b0, ldb, acc));
        }
    }
    return j0;
}

/* linalg_row_nn_heads for columns 0 .. (n rounded down to 8): 16 rows of b at a time. */
__attribute__((target("avx2,fma"))) static int
row_nn_heads_avx2(int n, int k, int h0, int h1, int group, const float *a, size_t lda,
                  const float *b, int ldb, float *c, size_t ldc)
{
    const int n8 = n / 8 * 8;

    for (int h = h0; h < h1; h++)
        memset(c + (size_t)h * ldc, 0, (size_t)n8 * sizeof *c);
    for (int p0 = 0; p0 < k; p0 += 16) {
        const int p1 = p0 + 16 < k ? p0 + 16 : k;
        for (int h = h0; h < h1; h++) {
            const float *ah = a + (size_t)h * lda;
            const float *bh = b + (size_t)(h / group) * (size_t)n;
            float *ch = c + (size_t)h * ldc;
            for (int j0 = 0; j0 < n8; j0 += 8) {
                __m256 acc = _mm256_loadu_ps(ch + j0);
                for (int p = p0; p < p1; p++)
                    acc = _mm256_fmadd_ps(_mm256_broadcast_ss(ah + p),
                                          _mm256_loadu_ps(bh + (size_t)p * (size_t)ldb + (size_t)j0),
                                          acc);
                _mm256_storeu_ps(ch + j0, acc);
            }
        }
    }
    return n8;
}
#endif

#ifdef LINALG_NEON
/* ------------------------------------------------------------------- NEON */

/* Rows 0-3 of b from p0 against a: 4 x 4 blocks transposed, lane j row j's chain; the tail after. */
static float32x4_t
row_nt_rows4(int k, const float *a, const float *b, int ldb, float32x4_t acc)
{
    int p0;

    for (p0 = 0; p0 + 4 <= k; p0 += 4) {
        const float32x4_t r0 = vld1q_f32(b + (size_t)p0), r1 = vld1q_f32(b + (size_t)ldb + (size_t)p0);
        const float32x4_t r2 = vld1q_f32(b + 2 * (size_t)ldb + (size_t)p0);
        const float32x4_t r3 = vld1q_f32(b + 3 * (size_t)ldb + (size_t)p0);
        /* (transposed: t0 holds each row's value p0, t1 p0 + 1 ...) */
        const float32x4_t u0 = vtrn1q_f32(r0, r1), u1 = vtrn2q_f32(r0, r1);
        const float32x4_t u2 = vtrn1q_f32(r2, r3), u3 = vtrn2q_f32(r2, r3);
        const float32x4_t t0 = vreinterpretq_f32_f64(vtrn1q_f64(vreinterpretq_f64_f32(u0), vreinterpretq_f64_f32(u2)));
        const float32x4_t t1 = vreinterpretq_f32_f64(vtrn1q_f64(vreinterpretq_f64_f32(u1), vreinterpretq_f64_f32(u3)));
        const float32x4_t t2 = vreinterpretq_f32_f64(vtrn2q_f64(vreinterpretq_f64_f32(u0), vreinterpretq_f64_f32(u2)));
        const float32x4_t t3 = vreinterpretq_f32_f64(vtrn2q_f64(vreinterpretq_f64_f32(u1), vreinterpretq_f64_f32(u3)));
        acc = vfmaq_f32(acc, vdupq_n_f32(a[p0]), t0);
        acc = vfmaq_f32(acc, vdupq_n_f32(a[p0 + 1]), t1);
        acc = vfmaq_f32(acc, vdupq_n_f32(a[p0 + 2]), t2);
        acc = vfmaq_f32(acc, vdupq_n_f32(a[p0 + 3]), t3);
    }
    if (p0 < k) {
        float lanes[4];
        vst1q_f32(lanes, acc);
        for (int i = 0; i < 4; i++)
            for (int p = p0; p < k; p++)
                lanes[i] = fmaf(a[p], b[(size_t)i * (size_t)ldb + (size_t)p], lanes[i]);
        acc = vld1q_f32(lanes);
    }
    return acc;
}

static int
row_nt_neon(int n, int k, const float *a, const float *b, int ldb, float *c)
{
    int j0 = 0;

    for (; j0 + 4 <= n; j0 += 4)
        vst1q_f32(c + j0, row_nt_rows4(k, a, b + (size_t)j0 * (size_t)ldb, ldb, vdupq_n_f32(0.0f)));
    return j0;
}

/* A half-precision b in place, four rows at a time, each 4 x 4 block widened (exact) and transposed. */
static int
row_f16_neon(int n, int k, const float *a, const uint16_t *b, size_t ldb, float *c)
{
    int j0 = 0;

    for (; j0 + 4 <= n; j0 += 4) {
        const uint16_t *b0 = b + (size_t)j0 * ldb;
        float32x4_t acc = vdupq_n_f32(0.0f);
        int p0;
        for (p0 = 0; p0 + 4 <= k; p0 += 4) {
            float32x4_t r[4], u[4], t[4];
            for (int i = 0; i < 4; i++)
                r[i] = vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(b0 + (size_t)i * ldb + (size_t)p0)));
            u[0] = vtrn1q_f32(r[0], r[1]), u[1] = vtrn2q_f32(r[0], r[1]);
            u[2] = vtrn1q_f32(r[2], r[3]), u[3] = vtrn2q_f32(r[2], r[3]);
            t[0] = vreinterpretq_f32_f64(vtrn1q_f64(vreinterpretq_f64_f32(u[0]), vreinterpretq_f64_f32(u[2])));
            t[1] = vreinterpretq_f32_f64(vtrn1q_f64(vreinterpretq_f64_f32(u[1]), vreinterpretq_f64_f32(u[3])));
            t[2] = vreinterpretq_f32_f64(vtrn2q_f64(vreinterpretq_f64_f32(u[0]), vreinterpretq_f64_f32(u[2])));
            t[3] = vreinterpretq_f32_f64(vtrn2q_f64(vreinterpretq_f64_f32(u[1]), vreinterpretq_f64_f32(u[3])));
            for (int q = 0; q < 4; q++)
                acc = vfmaq_f32(acc, vdupq_n_f32(a[p0 + q]), t[q]);
        }
        if (p0 < k) {
            float lanes[4];
            vst1q_f32(lanes, acc);
            for (int i = 0; i < 4; i++)
                for (int p = p0; p < k; p++)
                    lanes[i] = fmaf(a[p], linalg_half_float(b0[(size_t)i * ldb + (size_t)p]), lanes[i]);
            acc = vld1q_f32(lanes);
        }
        vst1q_f32(c + j0, acc);
    }
    return j0;
}

/* 16 columns of b at a time (four chains of four), then four. */
static int
row_nn_neon(int n, int k, const float *a, const float *b, int ldb, float *c)
{
    int j0 = 0;

    for (; j0 + 16 <= n; j0 += 16) {
        float32x4_t c0 = vdupq_n_f32(0.0f), c1 = c0, c2 = c0, c3 = c0;
        for (int p = 0; p < k; p++) {
            const float *row = b + (size_t)p * (size_t)ldb + (size_t)j0;
            const float32x4_t ap = vdupq_n_f32(a[p]);
            c0 = vfmaq_f32(c0, ap, vld1q_f32(row));
            c1 = vfmaq_f32(c1, ap, vld1q_f32(row + 4));
            c2 = vfmaq_f32(c2, ap, vld1q_f32(row + 8));
            c3 = vfmaq_f32(c3, ap, vld1q_f32(row + 12));
        }
        vst1q_f32(c + j0, c0), vst1q_f32(c + j0 + 4, c1);
        vst1q_f32(c + j0 + 8, c2), vst1q_f32(c + j0 + 12, c3);
    }
    for (; j0 + 4 <= n; j0 += 4) {
        float32x4_t c0 = vdupq_n_f32(0.0f);
        for (int p = 0; p < k; p++)
            c0 = vfmaq_f32(c0, vdupq_n_f32(a[p]), vld1q_f32(b + (size_t)p * (size_t)ldb + (size_t)j0));
        vst1q_f32(c + j0, c0);
    }
    return j0;
}

/* linalg_row_nt_heads for keys 0 .. (n rounded down to 4): a block of 4 keys, every head. */
static int
row_nt_heads_neon(int n, int k, int h0, int h1, int group, const float *a, size_t lda,
                  const float *b, int ldb, float *c, size_t ldc)
{
    int j0 = 0;

    for (; j0 + 4 <= n; j0 += 4)
        for (int h = h0; h < h1; h++)
            vst1q_f32(c + (size_t)h * ldc + (size_t)j0,
                      row_nt_rows4(k, a + (size_t)h * lda,
                                   b + (size_t)j0 * (size_t)ldb + (size_t)(h / group) * (size_t)k,
                                   ldb, vdupq_n_f32(0.0f)));
    return j0;
}

/* linalg_row_nn_heads for columns 0 .. (n rounded down to 4): 16 rows of b at a time. */
static int
row_nn_heads_neon(int n, int k, int h0, int h1, int group, const float *a, size_t lda,
                  const float *b, int ldb, float *c, size_t ldc)
{
    const int n4 = n / 4 * 4;

    for (int h = h0; h < h1; h++)
        memset(c + (size_t)h * ldc, 0, (size_t)n4 * sizeof *c);
    for (int p0 = 0; p0 < k; p0 += 16) {
        const int p1 = p0 + 16 < k ? p0 + 16 : k;
        for (int h = h0; h < h1; h++) {
            const float *ah = a + (size_t)h * lda;
            const float *bh = b + (size_t)(h / group) * (size_t)n;
            float *ch = c + (size_t)h * ldc;
            for (int j0 = 0; j0 < n4; j0 += 4) {
                float32x4_t acc = vld1q_f32(ch + j0);
                for (int p = p0; p < p1; p++)
                    acc = vfmaq_f32(acc, vdupq_n_f32(ah[p]),
                                    vld1q_f32(bh + (size_t)p * (size_t)ldb + (size_t)j0));
                vst1q_f32(ch + j0, acc);
            }
        }
    }
    return n4;
}
#endif

void
linalg_row_nt(int n, int k, const float *a, const float *b, int ldb, float *c)
{
    int j = 0;

#ifdef LINALG_X86
    if (cpu_isa() == CPU_AVX512)
        j = row_nt_avx512(n, k, a, b, ldb, c);
    else if (cpu_isa() == CPU_AVX2)
        j = row_nt_avx2(n, k, a, b, ldb, c);
#endif
#ifdef LINALG_NEON
    if (cpu_isa() == CPU_NEON)
        j = row_nt_neon(n, k, a, b, ldb, c);
#endif
    for (; j < n; j++) {
        float acc = 0.0f;
        for (int p = 0; p < k; p++)
            acc = fmaf(a[p], b[(size_t)j * (size_t)ldb + (size_t)p], acc);
        c[j] = acc;
    }
}

void
linalg_row_nn(int n, int k, const float *a, const float *b, int ldb, float *c)
{
    int j = 0;

#ifdef LINALG_X86
    if (cpu_isa() == CPU_AVX512)
        j = row_nn_avx512(n, k, a, b, ldb, c);
    else if (cpu_isa() == CPU_AVX2)
        j = row_nn_avx2(n, k, a, b, ldb, c);
#endif
#ifdef LINALG_NEON
    if (cpu_isa() == CPU_NEON)
        j = row_nn_neon(n, k, a, b, ldb, c);
#endif
    for (; j < n; j++) {
        float acc = 0.0f;
        for (int p = 0; p < k; p++)
            acc = fmaf(a[p], b[(size_t)p * (size_t)ldb + (size_t)j], acc);
        c[j] = acc;
    }
}

void
linalg_row_nt_heads(int n, int k, int h0, int h1, int group, const float *a, size_t lda,
                    const float *b, int ldb, float *c, size_t ldc)
{
    int j = 0;

#ifdef LINALG_X86
    if (cpu_isa() == CPU_AVX512)
        j = row_nt_heads_avx512(n, k, h0, h1, group, a, lda, b, ldb, c, ldc);
    else if (cpu_isa() == CPU_AVX2)
        j = row_nt_heads_avx2(n, k, h0, h1, group, a, lda, b, ldb, c, ldc);
#endif
#ifdef LINALG_NEON
    if (cpu_isa() == CPU_NEON)
        j = row_nt_heads_neon(n, k, h0, h1, group, a, lda, b, ldb, c, ldc);
#endif
    for (int h = h0; h < h1; h++)
        linalg_row_nt(n - j, k, a + (size_t)h * lda,
                      b + (size_t)j * (size_t)ldb + (size_t)(h / group) * (size_t)k, ldb,
                      c + (size_t)h * ldc + (size_t)j);
}

void
linalg_row_nn_heads(int n, int k, int h0, int h1, int group, const float *a, size_t lda,
                    const float *b, int ldb, float *c, size_t ldc)
{
    int j = 0;

#ifdef LINALG_X86
    if (cpu_isa() == CPU_AVX512)
        j = row_nn_heads_avx512(n, k, h0, h1, group, a, lda, b, ldb, c, ldc);
    else if (cpu_isa() == CPU_AVX2)
        j = row_nn_heads_avx2(n, k, h0, h1, group, a, lda, b, ldb, c, ldc);
#endif
#ifdef LINALG_NEON
    if (cpu_isa() == CPU_NEON)
        j = row_nn_heads_neon(n, k, h0, h1, group, a, lda, b, ldb, c, ldc);
#endif
    for (int h = h0; h < h1; h++) {
        const float *ah = a + (size_t)h * lda;
        const float *bh = b + (size_t)(h / group) * (size_t)n;
        for (int col = j; col < n; col++) {
            float acc = 0.0f;
            for (int p = 0; p < k; p++)
                acc = fmaf(ah[p], bh[(size_t)p * (size_t)ldb + (size_t)col], acc);
            c[(size_t)h * ldc + (size_t)col] = acc;
        }
    }
}

void
linalg_row_f16(int n, int k, const float *a, const uint16_t *b, size_t ldb, float *c)
{
    int j0 = 0;

#ifdef LINALG_X86
    if (cpu_isa() == CPU_AVX512)
        j0 = row_f16_avx512(n, k, a, b, ldb, c);
    else if (cpu_isa() == CPU_AVX2)
        j0 = row_f16_avx2(n, k, a, b, ldb, c);
#endif
#ifdef LINALG_NEON
    if (cpu_isa() == CPU_NEON)
        j0 = row_f16_neon(n, k, a, b, ldb, c);
#endif
    for (int j = j0; j < n; j++) {
        float acc = 0.0f;
        for (int p = 0; p < k; p++)
            acc = fmaf(a[p], linalg_half_float(b[(size_t)j * ldb + (size_t)p]), acc);
        c[j] = acc;
    }
}
