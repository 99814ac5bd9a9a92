/*
 * linalg_internal.h: what the matrix products' files share (linalg.c, the
 * blocked products and the panels' layout; linalg_pack.c, packs made once;
 * linalg_row.c, one row against a matrix in place).  Not for use outside src/core/kernels.
 */
#ifndef ATTNSCOPE_LINALG_INTERNAL_H
#define ATTNSCOPE_LINALG_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "attnscope/kernels/cpu.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define LINALG_X86 1
#endif
#if defined(__aarch64__) && defined(__GNUC__)
#include <arm_neon.h>
#define LINALG_NEON 1
#endif

#ifdef LINALG_X86
/*
 * out[q * ldo + i] = in[i * ldi + q] for a 16 x 16 block: pairs of rows
 * interleaved, then pairs of pairs, then the 128-bit lanes exchanged twice.
 * Only moves numbers, so packing this way gives the products the same bits.
 */
__attribute__((target("avx512f"), always_inline)) static inline void
transpose16_regs(__m512 r[16])
{
    __m512 t[16];

#pragma GCC unroll 16
    for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    }
#pragma GCC unroll 16
    for (int i = 0; i < 16; i += 4) {
        r[i] = _mm512_shuffle_ps(t[i], t[i + 2], 0x44);
        r[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], 0xEE);
        r[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0x44);
        r[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
    }
#pragma GCC unroll 16
    for (int i = 0; i < 4; i++) {
        t[i] = _mm512_shuffle_f32x4(r[i], r[i + 4], 0x88);
        t[i + 4] = _mm512_shuffle_f32x4(r[i], r[i + 4], 0xDD);
        t[i + 8] = _mm512_shuffle_f32x4(r[i + 8], r[i + 12], 0x88);
        t[i + 12] = _mm512_shuffle_f32x4(r[i + 8], r[i + 12], 0xDD);
    }
#pragma GCC unroll 16
    for (int i = 0; i < 8; i++) {
        r[i] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0x88);
        r[i + 8] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0xDD);
    }
}

/*
 * The same for an 8 x 8 block of AVX2 lanes: pairs interleaved, pairs of
 * pairs, then the 128-bit halves exchanged.  Only moves numbers.
 */
__attribute__((target("avx2,fma"), always_inline)) static inline void
transpose8_regs(__m256 r[8])
{
    __m256 t[8];

#pragma GCC unroll 8
    for (int i = 0; i < 8; i += 2) {
        t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
    }
#pragma GCC unroll 8
    for (int i = 0; i < 8; i += 4) {
        r[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
        r[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xEE);
        r[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
        r[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
    }
#pragma GCC unroll 4
    for (int i = 0; i < 4; i++) {
        t[i] = _mm256_permute2f128_ps(r[i], r[i + 4], 0x20);
        t[i + 4] = _mm256_permute2f128_ps(r[i], r[i + 4], 0x31);
    }
#pragma GCC unroll 8
    for (int i = 0; i < 8; i++)
        r[i] = t[i];
}

#endif

/* The float of IEEE half bits h, exactly as F16C's conversion gives it (a NaN quieted). */
static inline float
linalg_half_float(uint16_t h)
{
    const uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
    float f;

    if (exp == 0x1f)
        bits = sign | 0x7f800000u | man << 13 | (man != 0 ? 0x400000u : 0);
    else if (exp != 0)
        bits = sign | (exp + 112) << 23 | man << 13;
    else if (man == 0)
        bits = sign;
    else {
        exp = 113; /* (a subnormal: normalised, a power of two down each shift) */
        while (!(man & 0x400)) {
            man <<= 1;
            exp--;
        }
        bits = sign | exp << 23 | (man & 0x3ff) << 13;
    }
    memcpy(&f, &bits, sizeof f);
    return f;
}

struct linalg_packed;

/*
 * The products' micro-kernels (linalg_tiles.c: portable, AVX2, AVX-512,
 * NEON), each a tile of C kept in registers over k, and the drivers
 * (linalg.c) that pack and walk the blocks for them.
 */
/* c (mr, nr, row stride ldc) = c (when accumulate) + pa (kc, mr) . pb (kc, nr, floats or bf16) */
typedef void (*tile_fn)(int kc, const float *pa, const void *pb, float *c, int ldc, int accumulate);

/* c (panels * nr) = c (when accumulate) + a (kc) . panels of pb: one row of A, unpacked. */
typedef void (*row_fn)(int kc, const float *a, const void *pb, int panels, float *c,
                       int accumulate);

/* A kernel's tiles for one type of B. */
struct tiles {
    tile_fn tile;
    /* The same for the first 4 and the first 8 rows of a panel (NULL: tile, every row). */
    tile_fn tile4, tile8;
    /* One row of A against whole panels of nr columns (NULL: the tiles). */
    row_fn row;
};

struct kernel {
    int mr;
    int nr;
    struct tiles f32, bf16;
};

/* The float32 whose upper half is h (exact): a bfloat16 widened. */
static inline float
linalg_bf16_float(uint16_t h)
{
    const uint32_t bits = (uint32_t)h << 16;
    float f;

    memcpy(&f, &bits, sizeof f);
    return f;
}
/* Where column j of a bfloat16 panel row of nr values is stored (the interleaving, linalg.c). */
static inline int
slot16(int j, int nr)
{
    return j < nr / 2 ? 2 * j : 2 * (j - nr / 2) + 1;
}

/* Each instruction set's micro-kernels (linalg_tiles.c), indexed by enum cpu_isa. */
extern const struct kernel linalg_kernels[CPU_ISAS];

/* Memory for a pack (huge pages for a large one); freed with free(). */
void *linalg_pack_alloc(size_t bytes);

/*
 * linalg_q.c: a pack of a quantized or half-precision format (pk->q).
 * linalg_q_rows: y (count) = x (k) . rows [j0, j0 + count) of W, j0 a
 * multiple of LINALG_QROWS; linalg_q_panel: rows [j0, j0 + nr) of W
 * (zeros past its n), values [p0, p0 + kc) (whole super-groups), widened
 * into a float panel of linalg.c's layout (kc x nr); linalg_q_at: one
 * weight; linalg_q_bytes: the pack's bytes.
 */
void linalg_q_rows(const struct linalg_packed *pk, int j0, int count, const float *x, float *y);
void linalg_q_panel(const struct linalg_packed *pk, int j0, int nr, int p0, int kc, float *out);
float linalg_q_at(const struct linalg_packed *pk, int j, int p);
size_t linalg_q_bytes(const struct linalg_packed *pk);


/* A right-hand matrix as it is stored: floats or bfloat16, (n, k) when trans, else (k, n). */
struct bmat {
    const void *data;
    bool bf16;
    int ld;
    int trans;
};

/* The elements of B's pack (its padded columns times k). */
static inline size_t
linalg_packed_elems(int n, int k, int nr)
{
    return (size_t)k * (size_t)((n + nr - 1) / nr * nr);
}

/* The panel width (NR) of the kernel this machine runs. */
int linalg_nr(void);
/* B into its panels at out, every block of k and every panel of nr columns in it (linalg.c). */
void linalg_pack_any(int k, int n, int nr, const struct bmat *b, void *out);

#endif
