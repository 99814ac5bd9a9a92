/*
 * linalg_q_x86.c: the quantized panels' kernels on x86-64 (see
 * linalg_q.c for the layout): AVX-512's sixteen lanes, AVX2's eight, each
 * weight widened in registers as the portable code widens it.
 */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "attnscope/kernels/linalg.h"

#include "linalg_internal.h"
#include "linalg_q_internal.h"

#ifdef LINALG_X86
/* ---------------------------------------------------------------- AVX-512 */

#define T16(e) _mm512_setr_ps(e(0), e(1), e(2), e(3), e(4), e(5), e(6), e(7), e(8), e(9), e(10), \
                              e(11), e(12), e(13), e(14), e(15))
#define E_I(i) (float)(i)
#define E_I8(i) (float)((i) - 8)
#define E_MX(i) linalg_mxfp4_levels[i]
#define E_I16(i) (float)((i) - 16)
#define E_2(i) (float)((i) & 3)
#define E_H1(i) (float)(16 * ((i) & 1))
#define E_H2(i) (float)(16 * ((i) & 3) - 32)
#define E_H3(i) (float)(((i) & 1) ? 0 : -4)

/* The 16 bytes of lanes c (rows 16c .. 16c + 15) at p, as 32-bit lanes. */
__attribute__((target("avx512f"), always_inline)) static inline __m512i
lanes(const unsigned char *p, int c)
{
    return _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(p + 16 * c)));
}

/* The 16 halves of lanes c at p, widened (exact). */
__attribute__((target("avx512f"), always_inline)) static inline __m512
halves(const unsigned char *p, int c)
{
    return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(p + 32 * c)));
}

/* Table t at each lane's low four bits of v shifted right by s. */
__attribute__((target("avx512f"), always_inline)) static inline __m512
look(__m512i v, int s, __m512 t)
{
    return _mm512_permutexvar_ps(_mm512_srli_epi32(v, (unsigned)s), t);
}

/*
 * The scale and minimum of group g's 64 rows (four vectors each), from the
 * super-group's d (dmin) and the group's scale bytes at gr, as widen_row
 * makes them.
 */
__attribute__((target("avx512f"), always_inline)) static inline void
group_scales(enum linalg_qformat f, const __m512 d[4], const __m512 dm[4], const unsigned char *gr,
             __m512 sc[4], __m512 mn[4])
{
    const __m512 zero = _mm512_setzero_ps();

#pragma GCC unroll 4
    for (int c = 0; c < 4; c++) {
        switch (f) {
        case LINALG_Q4_1:
        case LINALG_Q5_1:
            sc[c] = d[c], mn[c] = dm[c];
            break;
        case LINALG_Q2_K: {
            const __m512i b = lanes(gr, c);
            sc[c] = _mm512_mul_ps(d[c], _mm512_cvtepi32_ps(_mm512_and_si512(b, _mm512_set1_epi32(15))));
            mn[c] = _mm512_sub_ps(zero, _mm512_mul_ps(dm[c], _mm512_cvtepi32_ps(_mm512_srli_epi32(b, 4))));
            break;
        }
        case LINALG_Q3_K:
        case LINALG_Q6_K:
            sc[c] = _mm512_mul_ps(d[c], _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(
                                            _mm_loadu_si128((const __m128i *)(gr + 16 * c)))));
            break;
        case LINALG_Q4_K:
        case LINALG_Q5_K:
            sc[c] = _mm512_mul_ps(d[c], _mm512_cvtepi32_ps(lanes(gr, c)));
            mn[c] = _mm512_sub_ps(zero, _mm512_mul_ps(dm[c], _mm512_cvtepi32_ps(lanes(gr + R, c))));
            break;
        default:
            sc[c] = d[c];
            break;
        }
    }
}

/* The tables a format's levels are looked up in. */
__attribute__((target("avx512f"), always_inline)) static inline void
tables(enum linalg_qformat f, __m512 *tl, __m512 *th)
{
    *th = _mm512_setzero_ps();
    switch (f) {
    case LINALG_Q4_0:
        *tl = T16(E_I8);
        break;
    case LINALG_MXFP4:
        *tl = T16(E_MX);
        break;
    case LINALG_Q5_0:
        *tl = T16(E_I16), *th = T16(E_H1);
        break;
    case LINALG_Q5_1:
    case LINALG_Q5_K:
        *tl = T16(E_I), *th = T16(E_H1);
        break;
    case LINALG_Q2_K:
        *tl = T16(E_2);
        break;
    case LINALG_Q3_K:
        *tl = T16(E_2), *th = T16(E_H3);
        break;
    case LINALG_Q6_K:
        *tl = T16(E_I), *th = T16(E_H2);
        break;
    default:
        *tl = T16(E_I);
        break;
    }
}

/*
 * Walks the panel at pn over values [v0, v0 + count) (whole groups), and
 * for each value's weights (four vectors of 16 rows, out[]) does BODY,
 * with p the value's index in the walk: k in order.  Each vector of level
 * bytes is loaded once for the values it holds (two for 4-bit levels,
 * four for 2-bit ones), each vector of high bits once for its eight (or
 * four).  A weight with a minimum is one fma, scale x level + minimum,
 * where the portable code rounds a product and then a sum: the product is
 * exact (a half's 11 bits times a scale's 6 or fewer times a level's 5 or
 * fewer fit a float's 24), so the one rounding is the sum's, the same
 * bits.  (Where a super-group's d and dmin are both not finite, a NaN
 * either way, its payload perhaps another.)  One template for the
 * one-row product and the panels' widening: the same weights.
 */
#define WALK(F, pn, v0, count, BODY)                                                              \
    do {                                                                                          \
        const struct qshape *q_ = &linalg_qshapes[F];                                                     \
        const int per_ = q_->bits == 4 ? 2 : q_->bits == 2 ? 4 : 1;                               \
        __m512 tl, th, d[4], dm[4], sc[4], mn[4];                                                 \
        __m512i lo_[4], hi_[4];                                                                   \
        _Pragma("GCC unroll 4") for (int c = 0; c < 4; c++) {                                     \
            lo_[c] = hi_[c] = _mm512_setzero_si512();                                             \
            sc[c] = mn[c] = _mm512_setzero_ps();                                                  \
        }                                                                                         \
        tables(F, &tl, &th);                                                                      \
        for (int v_ = (v0); v_ < (v0) + (count); v_ += q_->g) {                                   \
            const unsigned char *sgp = (pn) + (size_t)(v_ / q_->sg) * sg_bytes(q_);               \
            const unsigned char *gr = sgp + (size_t)q_->halves * R * 2 +                          \
                                      (size_t)((v_ % q_->sg) / q_->g) * group_bytes(q_);          \
            const unsigned char *lv = gr + q_->gscale;                                            \
            const unsigned char *hb = lv + (size_t)q_->g * R * (size_t)q_->bits / 8;              \
            (void)hb;                                                                             \
            _Pragma("GCC unroll 4") for (int c = 0; c < 4; c++) {                                                         \
                d[c] = q_->halves >= 1 ? halves(sgp, c) : _mm512_setzero_ps();                    \
                dm[c] = q_->halves >= 2 ? halves(sgp + R * 2, c) : _mm512_setzero_ps();           \
            }                                                                                     \
            group_scales(F, d, dm, gr, sc, mn);                                                   \
            for (int u_ = 0; u_ < q_->g; u_ += per_) {                                            \
                if (per_ > 1)                                                                     \
                    _Pragma("GCC unroll 4") for (int c = 0; c < 4; c++)                                                   \
                        lo_[c] = lanes(lv + (size_t)(u_ / per_) * R, c);                          \
                if (q_->high == 1 && u_ % 8 == 0)                                                 \
                    _Pragma("GCC unroll 4") for (int c = 0; c < 4; c++)                                                   \
                        hi_[c] = lanes(hb + (size_t)(u_ / 8) * R, c);                             \
                if (q_->high == 2 && u_ % 4 == 0)                                                 \
                    _Pragma("GCC unroll 4") for (int c = 0; c < 4; c++)                                                   \
                        hi_[c] = lanes(hb + (size_t)(u_ / 4) * R, c);                             \
                _Pragma("GCC unroll 4") for (int i_ = 0; i_ < per_; i_++) {                                               \
                    const int w = u_ + i_;                                                        \
                    const int p = v_ - (v0) + w;                                                  \
                    __m512 out[4];                                                                \
                    _Pragma("GCC unroll 4") for (int c = 0; c < 4; c++) {                                                 \
                        __m512 l;                                                                 \
                        if (F == LINALG_F16) {                                                    \
                            out[c] = halves(lv + (size_t)w * R * 2, c);                           \
                            continue;                                                             \
                        }                                                                         \
                        if (F == LINALG_Q8_0)                                                     \
                            l = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(                          \
                                _mm_loadu_si128((const __m128i *)(lv + (size_t)w * R + 16 * c)))); \
                        else                                                                      \
                            l = look(lo_[c], q_->bits * i_, tl);                                  \
                        if (q_->high == 1)                                                        \
                            l = _mm512_add_ps(l, look(hi_[c], w % 8, th));                        \
                        else if (q_->high == 2)                                                   \
                            l = _mm512_add_ps(l, look(hi_[c], 2 * (w % 4), th));                 \
                        out[c] = q_->has_min ? _mm512_fmadd_ps(l, sc[c], mn[c])                  \
                                             : _mm512_mul_ps(l, sc[c]);                           \
                    }                                                                             \
                    BODY                                                                          \
                }                                                                                 \
            }                                                                                     \
        }                                                                                         \
    } while (0)

/* y (the panel's 64 rows) = x . W^T over the whole of k: four chains of 16 rows. */
#define ROWS_FN(NAME, F)                                                                          \
    __attribute__((target("avx512f"))) static void NAME(const unsigned char *pn, int k,           \
                                                        const float *x, float *y)                 \
    {                                                                                             \
        __m512 acc0 = _mm512_setzero_ps(), acc1 = acc0, acc2 = acc0, acc3 = acc0;                 \
        WALK(F, pn, 0, k, {                                                                       \
            const __m512 xp = _mm512_set1_ps(x[p]);                                               \
            acc0 = _mm512_fmadd_ps(xp, out[0], acc0);                                             \
            acc1 = _mm512_fmadd_ps(xp, out[1], acc1);                                             \
            acc2 = _mm512_fmadd_ps(xp, out[2], acc2);                                             \
            acc3 = _mm512_fmadd_ps(xp, out[3], acc3);                                             \
        });                                                                                       \
        _mm512_storeu_ps(y, acc0), _mm512_storeu_ps(y + 16, acc1);                                \
        _mm512_storeu_ps(y + 32, acc2), _mm512_storeu_ps(y + 48, acc3);                           \
    }

/* A float panel (kc x nr, nr 16 or 32) of the panel's rows from r0 (a multiple of nr). */
#define PANEL_FN(NAME, F)                                                                         \
    __attribute__((target("avx512f"))) static void NAME(const unsigned char *pn, int r0, int nr,  \
                                                        int p0, int kc, float *o)                 \
    {                                                                                             \
        const int c0 = r0 / 16;                                                                   \
        WALK(F, pn, p0, kc, {                                                                     \
            _mm512_storeu_ps(o + (size_t)p * (size_t)nr, out[c0]);                                \
            if (nr == 32)                                                                         \
                _mm512_storeu_ps(o + (size_t)p * (size_t)nr + 16, out[c0 + 1]);                   \
        });                                                                                       \
    }

#define FORMATS(X) LINALG_QFORMAT_LIST(X)
#define DEFINE(F) ROWS_FN(rows_##F, LINALG_##F) PANEL_FN(panel_##F, LINALG_##F)
FORMATS(DEFINE)
#undef DEFINE

#define ROW_ENTRY(F) [LINALG_##F] = rows_##F,
#define PANEL_ENTRY(F) [LINALG_##F] = panel_##F,
const linalg_qrows_fn linalg_qrows_avx512[LINALG_QFORMATS] = { FORMATS(ROW_ENTRY) };
const linalg_qpanel_fn linalg_qpanels_avx512[LINALG_QFORMATS] = { FORMATS(PANEL_ENTRY) };

/* ------------------------------------------------------------------- AVX2 */

/*
 * The same walk on eight lanes, over NV of the panel's eight vectors of
 * rows from vector c0 (the one-row product: 32 rows a pass; a panel of the
 * tiles: nr / 8).  AVX2 has no 16-entry permute: a level's float is made
 * by integer arithmetic and a conversion instead (a small integer: exact,
 * the float the tables hold), MXFP4's by two 8-entry permutes and a blend.
 */

/* The 8 bytes of lanes c (rows 8c .. 8c + 7) at p, as 32-bit lanes. */
__attribute__((target("avx2,fma,f16c"), always_inline)) static inline __m256i
lanes8(const unsigned char *p, int c)
{
    return _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(p + 8 * c)));
}

/* The same, the bytes signed. */
__attribute__((target("avx2,fma,f16c"), always_inline)) static inline __m256i
slanes8(const unsigned char *p, int c)
{
    return _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(p + 8 * c)));
}

/* The 8 halves of lanes c at p, widened (exact). */
__attribute__((target("avx2,fma,f16c"), always_inline)) static inline __m256
halves8(const unsigned char *p, int c)
{
    return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(p + 16 * c)));
}

/* -v, as widen_row negates a minimum (the sign bit flipped: -0 for 0, as C's negation). */
__attribute__((target("avx2,fma,f16c"), always_inline)) static inline __m256
negated8(__m256 v)
{
    return _mm256_xor_ps(v, _mm256_set1_ps(-0.0f));
}

/* Group g's scale and minimum for vector c, from d (dmin) and the scale bytes at gr. */
__attribute__((target("avx2,fma,f16c"), always_inline)) static inline void
group_scales8(enum linalg_qformat f, __m256 d, __m256 dm, const unsigned char *gr, int c,
              __m256 *sc, __m256 *mn)
{
    switch (f) {
    case LINALG_Q4_1:
    case LINALG_Q5_1:
        *sc = d, *mn = dm;
        break;
    case LINALG_Q2_K: {
        const __m256i b = lanes8(gr, c);
        *sc = _mm256_mul_ps(d, _mm256_cvtepi32_ps(_mm256_and_si256(b, _mm256_set1_epi32(15))));
        *mn = negated8(_mm256_mul_ps(dm, _mm256_cvtepi32_ps(_mm256_srli_epi32(b, 4))));
        break;
    }
    case LINALG_Q3_K:
    case LINALG_Q6_K:
        *sc = _mm256_mul_ps(d, _mm256_cvtepi32_ps(slanes8(gr, c)));
        break;
    case LINALG_Q4_K:
    case LINALG_Q5_K:
        *sc = _mm256_mul_ps(d, _mm256_cvtepi32_ps(lanes8(gr, c)));
        *mn = negated8(_mm256_mul_ps(dm, _mm256_cvtepi32_ps(lanes8(gr + R, c))));
        break;
    default:
        *sc = d;
        break;
    }
}

/*
 * The level (as an integer, its offset applied) of value w of a group, the
 * i-th of its byte of low bits lo and of high bits hi; MXFP4's is looked up.
 */
__attribute__((target("avx2,fma,f16c"), always_inline)) static inline __m256
level8(enum linalg_qformat f, const struct qshape *q, __m256i lo, __m256i hi, int i, int w)
{
    const __m256i m15 = _mm256_set1_epi32(15), m3 = _mm256_set1_epi32(3);
    __m256i l;

    if (f == LINALG_MXFP4) {
        const __m256i idx = _mm256_srli_epi32(lo, 4 * i);
        const __m256 t0 = _mm256_setr_ps(0, 1, 2, 3, 4, 6, 8, 12);
        const __m256 t1 = _mm256_setr_ps(0, -1, -2, -3, -4, -6, -8, -12);
        return _mm256_blendv_ps(_mm256_permutevar8x32_ps(t0, idx), _mm256_permutevar8x32_ps(t1, idx),
                                _mm256_castsi256_ps(_mm256_slli_epi32(idx, 28)));
    }
    if (q->bits == 4)
        l = i == 0 ? _mm256_and_si256(lo, m15) : _mm256_and_si256(_mm256_srli_epi32(lo, 4), m15);
    else
        l = _mm256_and_si256(_mm256_srli_epi32(lo, 2 * i), m3);
    /* (the high bits moved straight to their place above the low ones: a shift and a mask) */
    if (q->high == 1) {
        const int from = w % 8, to = q->bits;
        const __m256i at = from <= to ? _mm256_slli_epi32(hi, to - from) : _mm256_srli_epi32(hi, from - to);
        l = _mm256_or_si256(l, _mm256_and_si256(at, _mm256_set1_epi32(1 << to)));
    } else if (q->high == 2) {
        const int from = 2 * (w % 4), to = q->bits;
        const __m256i at = from <= to ? _mm256_slli_epi32(hi, to - from) : _mm256_srli_epi32(hi, from - to);
        l = _mm256_or_si256(l, _mm256_and_si256(at, _mm256_set1_epi32(3 << to)));
    }
    switch (f) {
    case LINALG_Q4_0:
        l = _mm256_sub_epi32(l, _mm256_set1_epi32(8));
        break;
    case LINALG_Q5_0:
        l = _mm256_sub_epi32(l, _mm256_set1_epi32(16));
        break;
    case LINALG_Q3_K:
        l = _mm256_sub_epi32(l, _mm256_set1_epi32(4));
        break;
    case LINALG_Q6_K:
        l = _mm256_sub_epi32(l, _mm256_set1_epi32(32));
        break;
    default:
        break;
    }
    return _mm256_cvtepi32_ps(l);
}

/* WALK's eight-lane form: NV vectors from c0, out[] their weights of value p. */
#define WALK8(F, pn, v0, count, c0, NV, BODY)                                                    \
    do {                                                                                          \
        const struct qshape *q_ = &linalg_qshapes[F];                                                     \
        const int per_ = q_->bits == 4 ? 2 : q_->bits == 2 ? 4 : 1;                               \
        __m256 sc[NV], mn[NV];                                                                    \
        __m256i lo_[NV], hi_[NV];                                                                 \
        _Pragma("GCC unroll 8") for (int c = 0; c < NV; c++) {                                    \
            lo_[c] = hi_[c] = _mm256_setzero_si256();                                             \
            sc[c] = mn[c] = _mm256_setzero_ps();                                                  \
        }                                                                                         \
        for (int v_ = (v0); v_ < (v0) + (count); v_ += q_->g) {                                   \
            const unsigned char *sgp = (pn) + (size_t)(v_ / q_->sg) * sg_bytes(q_);               \
            const unsigned char *gr = sgp + (size_t)q_->halves * R * 2 +                          \
                                      (size_t)((v_ % q_->sg) / q_->g) * group_bytes(q_);          \
            const unsigned char *lv = gr + q_->gscale;                                            \
            const unsigned char *hb = lv + (size_t)q_->g * R * (size_t)q_->bits / 8;              \
            (void)hb;                                                                             \
            if (F != LINALG_F16)                                                                  \
                _Pragma("GCC unroll 8") for (int c = 0; c < NV; c++) {                            \
                    const __m256 d = q_->halves >= 1 ? halves8(sgp, (c0) + c) : _mm256_setzero_ps(); \
                    const __m256 dm = q_->halves >= 2 ? halves8(sgp + R * 2, (c0) + c)            \
                                                      : _mm256_setzero_ps();                      \
                    group_scales8(F, d, dm, gr, (c0) + c, &sc[c], &mn[c]);                        \
                }                                                                                 \
            for (int u_ = 0; u_ < q_->g; u_ += per_) {                                            \
                if (per_ > 1)                                                                     \
                    _Pragma("GCC unroll 8") for (int c = 0; c < NV; c++)                          \
                        lo_[c] = lanes8(lv + (size_t)(u_ / per_) * R, (c0) + c);                  \
                if (q_->high == 1 && u_ % 8 == 0)                                                 \
                    _Pragma("GCC unroll 8") for (int c = 0; c < NV; c++)                          \
                        hi_[c] = lanes8(hb + (size_t)(u_ / 8) * R, (c0) + c);                     \
                if (q_->high == 2 && u_ % 4 == 0)                                                 \
                    _Pragma("GCC unroll 8") for (int c = 0; c < NV; c++)                          \
                        hi_[c] = lanes8(hb + (size_t)(u_ / 4) * R, (c0) + c);                     \
                _Pragma("GCC unroll 4") for (int i_ = 0; i_ < per_; i_++) {                       \
                    const int w = u_ + i_;                                                        \
                    const int p = v_ - (v0) + w;                                                  \
                    __m256 out[NV];                                                               \
                    _Pragma("GCC unroll 8") for (int c = 0; c < NV; c++) {                        \
                        __m256 l;                                                                 \
                        if (F == LINALG_F16) {                                                    \
                            out[c] = halves8(lv + (size_t)w * R * 2, (c0) + c);                   \
                            continue;                                                             \
                        }                                                                         \
                        if (F == LINALG_Q8_0)                                                     \
                            l = _mm256_cvtepi32_ps(slanes8(lv + (size_t)w * R, (c0) + c));        \
                        else                                                                      \
                            l = level8(F, q_, lo_[c], hi_[c], i_, w);                             \
                        out[c] = q_->has_min ? _mm256_add_ps(_mm256_mul_ps(l, sc[c]), mn[c])     \
                                             : _mm256_mul_ps(l, sc[c]);                           \
                    }                                                                             \
                    BODY                                                                          \
                }                                                                                 \
            }                                                                                     \
        }                                                                                         \
    } while (0)

/* y (the panel's 64 rows) = x . W^T: 32 rows a pass, four chains of eight. */
/*
 * y (the panel's 64 rows) = x . W^T: NV8(F) vectors of eight rows a pass,
 * each its own chain (the formats without a minimum keep all 64 rows in
 * registers, one pass over the panel; the others 32, two passes).
 */
#define ROWS8_FN(NAME, F, NVF)                                                                    \
    __attribute__((target("avx2,fma,f16c"))) static void NAME(const unsigned char *pn, int k,     \
                                                              const float *x, float *y)           \
    {                                                                                             \
        enum { NV = NVF };                                                                        \
        for (int pass = 0; pass < 8 / NV; pass++) {                                               \
            __m256 acc[NV];                                                                       \
            _Pragma("GCC unroll 8") for (int c = 0; c < NV; c++) acc[c] = _mm256_setzero_ps();    \
            WALK8(F, pn, 0, k, NV * pass, NV, {                                                   \
                const __m256 xp = _mm256_set1_ps(x[p]);                                           \
                _Pragma("GCC unroll 8") for (int c = 0; c < NV; c++)                              \
                    acc[c] = _mm256_fmadd_ps(xp, out[c], acc[c]);                                 \
            });                                                                                   \
            _Pragma("GCC unroll 8") for (int c = 0; c < NV; c++)                                  \
                _mm256_storeu_ps(y + 8 * (NV * pass + c), acc[c]);                                \
        }                                                                                         \
    }

/* A float panel (kc x 16) of the panel's rows from r0 (a multiple of 16), for the AVX2 tiles. */
#define PANEL8_FN(NAME, F)                                                                        \
    __attribute__((target("avx2,fma,f16c"))) static void NAME(const unsigned char *pn, int r0,    \
                                                              int nr, int p0, int kc, float *o)   \
    {                                                                                             \
        (void)nr;                                                                                 \
        WALK8(F, pn, p0, kc, r0 / 8, 2, {                                                         \
            _mm256_storeu_ps(o + (size_t)p * 16, out[0]);                                         \
            _mm256_storeu_ps(o + (size_t)p * 16 + 8, out[1]);                                     \
        });                                                                                       \
    }

/* (the rows a pass keeps in registers, by format: see ROWS8_FN) */
#define NV8_Q4_0 8
#define NV8_Q4_1 4
#define NV8_Q5_0 8
#define NV8_Q5_1 4
#define NV8_Q8_0 8
#define NV8_Q2_K 4
#define NV8_Q3_K 4
#define NV8_Q4_K 8
#define NV8_Q5_K 4
#define NV8_Q6_K 8
#define NV8_F16 8
#define NV8_MXFP4 8
#define DEFINE8(F) ROWS8_FN(rows8_##F, LINALG_##F, NV8_##F) PANEL8_FN(panel8_##F, LINALG_##F)
FORMATS(DEFINE8)
#undef DEFINE8

#define ROW8_ENTRY(F) [LINALG_##F] = rows8_##F,
#define PANEL8_ENTRY(F) [LINALG_##F] = panel8_##F,
const linalg_qrows_fn linalg_qrows_avx2[LINALG_QFORMATS] = { FORMATS(ROW8_ENTRY) };
const linalg_qpanel_fn linalg_qpanels_avx2[LINALG_QFORMATS] = { FORMATS(PANEL8_ENTRY) };
#endif
