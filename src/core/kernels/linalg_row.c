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
#endif

void
linalg_row_nt(int n, int k, const float *a, const float *b, int ldb, float *c)
{
    int j = 0;

#ifdef LINALG_X86
    if (cpu_isa() == CPU_AVX512)
        j = row_nt_avx512(n, k, a, b, ldb, c);
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
#endif
    for (int j = j0; j < n; j++) {
        float acc = 0.0f;
        for (int p = 0; p < k; p++)
            acc = fmaf(a[p], linalg_half_float(b[(size_t)j * ldb + (size_t)p]), acc);
        c[j] = acc;
    }
}
