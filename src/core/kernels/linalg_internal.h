/*
 * linalg_internal.h: what the matrix products' files share (linalg.c, the
 * blocked products and packing; linalg_row.c, one row against a matrix in
 * place).  Not for use outside src/core/kernels.
 */
#ifndef ATTNSCOPE_LINALG_INTERNAL_H
#define ATTNSCOPE_LINALG_INTERNAL_H

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define LINALG_X86 1
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

    for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int i = 0; i < 16; i += 4) {
        r[i] = _mm512_shuffle_ps(t[i], t[i + 2], 0x44);
        r[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], 0xEE);
        r[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0x44);
        r[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
    }
    for (int i = 0; i < 4; i++) {
        t[i] = _mm512_shuffle_f32x4(r[i], r[i + 4], 0x88);
        t[i + 4] = _mm512_shuffle_f32x4(r[i], r[i + 4], 0xDD);
        t[i + 8] = _mm512_shuffle_f32x4(r[i + 8], r[i + 12], 0x88);
        t[i + 12] = _mm512_shuffle_f32x4(r[i + 8], r[i + 12], 0xDD);
    }
    for (int i = 0; i < 8; i++) {
        r[i] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0x88);
        r[i + 8] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0xDD);
    }
}

#endif

#endif
