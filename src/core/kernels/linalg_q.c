/*
 * linalg_q.c: weights in ggml's block formats and in half precision,
 * packed in panels of LINALG_QROWS rows and multiplied from them (see
 * linalg.h).
 *
 * A panel holds, for its 64 rows, the matrix's super-groups in order of k
 * (32 values, or 256 for the K-quants).  A super-group is a header (each
 * row's half-precision d, and dmin where the format has one: 64 halves
 * each), then its groups (the values one integer scale covers: 16 or 32),
 * each its rows' scales (and minimums) and then its levels:
 *
 *   8-bit levels (Q8_0)   for each k, 64 bytes: row r's level at r
 *   16-bit (F16)          for each k, 64 halves
 *   4-bit                 for each pair of k, 64 bytes: row r's first
 *                         level in the low nibble of byte r, its second in
 *                         the high one
 *   2-bit                 for each four k, 64 bytes: row r's levels in
 *                         bits 0-1, 2-3, 4-5, 6-7 of byte r
 *   high bits             after the low ones: for each eight k, 64 bytes,
 *                         row r's bits 0-7 of byte r (Q5: a fifth bit,
 *                         Q3_K: a third); Q6_K: for each four k, two bits
 *                         each, as the 2-bit levels
 *
 * so that 16 consecutive bytes are 16 rows' levels of the same k: one
 * vector of lanes.  A level becomes its float by table (the 16 entries
 * an AVX-512 permute indexes with a lane's low four bits: a nibble, or a
 * 2-bit field whatever lies above it) or by conversion (Q8_0's bytes); a
 * value's float is its low part's plus its high part's (small integers:
 * exact); the weight is then scale x level (+ minimum), each rounded as
 * files/quants rounds it, and the products' chain is fma(x[k], w, acc) in
 * order of k, as linalg.c's: the same bits as widening the matrix first.
 *
 * The layout is the same for every instruction set (only its kernels
 * differ): AVX-512 walks 64 rows as four vectors; the portable code (and
 * AVX2's, which has no 16-entry permute) widens a row at a time in C.
 */
#include "config.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/kernels/cpu.h"
#include "attnscope/kernels/linalg.h"

#include "linalg_internal.h"

#define R LINALG_QROWS

/* A format's shape: its super-group, its groups, and the bytes of each part for 64 rows. */
struct qshape {
    int sg;        /* values in a super-group */
    int g;         /* values in a group (one integer scale's) */
    int halves;    /* half-precision numbers per row in the header: 0, 1 (d) or 2 (d, dmin) */
    int gscale;    /* bytes of a group's scales for 64 rows: 0, 64 (one byte each) or 128 (two) */
    int bits;      /* the low part's bits: 2, 4, 8 or 16 */
    int high;      /* the high part's bits: 0, 1 or 2 */
    bool has_min;  /* weight = scale x level + minimum */
};

static const struct qshape shapes[LINALG_QFORMATS] = {
    [LINALG_Q4_0] = { 32, 32, 1, 0, 4, 0, false },
    [LINALG_Q4_1] = { 32, 32, 2, 0, 4, 0, true },
    [LINALG_Q5_0] = { 32, 32, 1, 0, 4, 1, false },
    [LINALG_Q5_1] = { 32, 32, 2, 0, 4, 1, true },
    [LINALG_Q8_0] = { 32, 32, 1, 0, 8, 0, false },
    [LINALG_Q2_K] = { 256, 16, 2, 64, 2, 0, true },
    [LINALG_Q3_K] = { 256, 16, 1, 64, 2, 1, false },
    [LINALG_Q4_K] = { 256, 32, 2, 128, 4, 0, true },
    [LINALG_Q5_K] = { 256, 32, 2, 128, 4, 1, true },
    [LINALG_Q6_K] = { 256, 16, 1, 64, 4, 2, false },
    [LINALG_F16] = { 32, 32, 0, 0, 16, 0, false },
    [LINALG_MXFP4] = { 32, 32, 1, 0, 4, 0, false },
};

/* MXFP4's codes as ggml's kvalues (e2m1, doubled): the level's float, its d halved to match. */
static const float mxfp4_levels[16] = { 0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12 };

/* The bytes of one group's levels (low and high) for 64 rows. */
static size_t
group_level_bytes(const struct qshape *q)
{
    return (size_t)q->g * R * (size_t)(q->bits + q->high) / 8;
}

static size_t
group_bytes(const struct qshape *q)
{
    return (size_t)q->gscale + group_level_bytes(q);
}

static size_t
sg_bytes(const struct qshape *q)
{
    return (size_t)q->halves * R * 2 + (size_t)(q->sg / q->g) * group_bytes(q);
}

int
linalg_qformat_values(enum linalg_qformat f)
{
    return f > LINALG_QNONE && f < LINALG_QFORMATS ? shapes[f].sg : 0;
}

size_t
linalg_qpanel_bytes(enum linalg_qformat f, int k)
{
    if (f <= LINALG_QNONE || f >= LINALG_QFORMATS || k <= 0)
        return 0;
    return (size_t)(k / shapes[f].sg) * sg_bytes(&shapes[f]);
}

static size_t
panels_of(int n)
{
    return (size_t)((n + R - 1) / R);
}

int
linalg_pack_q(struct linalg_packed *pk, enum linalg_qformat f, int n, int k)
{
    memset(pk, 0, sizeof *pk);
    if (f <= LINALG_QNONE || f >= LINALG_QFORMATS || n <= 0 || k <= 0 || k % shapes[f].sg != 0)
        return -1;
    pk->data = linalg_pack_alloc(panels_of(n) * linalg_qpanel_bytes(f, k));
    if (pk->data == NULL)
        return -1;
    /* (only the last panel cleared: its rows past n are never put; the rest is written whole
       by the puts, and clearing it first cost a second pass over fresh pages) */
    if (n % R != 0)
        memset((unsigned char *)pk->data + (panels_of(n) - 1) * linalg_qpanel_bytes(f, k), 0,
               linalg_qpanel_bytes(f, k));
    pk->n = n;
    pk->k = k;
    pk->nr = R;
    pk->q = f;
    return 0;
}

size_t
linalg_q_bytes(const struct linalg_packed *pk)
{
    return panels_of(pk->n) * linalg_qpanel_bytes(pk->q, pk->k);
}

/* The first byte of super-group s of the panel holding row j. */
static unsigned char *
sg_at(const struct linalg_packed *pk, int j, int s)
{
    const struct qshape *q = &shapes[pk->q];

    return (unsigned char *)pk->data + (size_t)(j / R) * linalg_qpanel_bytes(pk->q, pk->k) +
           (size_t)s * sg_bytes(q);
}

void
linalg_pack_q_put_panel(struct linalg_packed *pk, int j0, int s, const struct linalg_qparts *parts,
                        int rows)
{
    const struct qshape *q = &shapes[pk->q];
    unsigned char *at = sg_at(pk, j0, s);
    const int low_mask = (1 << q->bits) - 1;

    for (int r = 0; r < rows; r++) {
        if (q->halves >= 1)
            memcpy(at + (size_t)r * 2, &parts[r].d, 2);
        if (q->halves >= 2)
            memcpy(at + R * 2 + (size_t)r * 2, &parts[r].dmin, 2);
    }
    at += (size_t)q->halves * R * 2;
    for (int g = 0; g < q->sg / q->g; g++, at += group_bytes(q)) {
        unsigned char *lv = at + q->gscale;
        unsigned char *hb = lv + (size_t)q->g * R * (size_t)q->bits / 8;
        const int base = g * q->g;
        for (int r = 0; r < rows; r++) {
            if (q->gscale == 128) {
                at[r] = (unsigned char)parts[r].sc[g];
                at[R + r] = (unsigned char)parts[r].m[g];
            } else if (q->gscale == 64) {
                at[r] = pk->q == LINALG_Q2_K ? (unsigned char)(parts[r].sc[g] | parts[r].m[g] << 4)
                                             : (unsigned char)(int8_t)parts[r].sc[g];
            }
        }
        /* each byte of levels composed once, 64 rows' bytes one after another */
        for (int v = 0; v < q->g; v += 8 / q->bits > 0 ? 8 / q->bits : 1)
            for (int r = 0; r < rows; r++) {
                const uint8_t *l = parts[r].level + base + v;
                switch (q->bits) {
                case 8:
                    lv[(size_t)v * R + (size_t)r] = l[0];
                    break;
                case 4:
                    lv[(size_t)(v / 2) * R + (size_t)r] =
                        (unsigned char)((l[0] & low_mask) | (l[1] & low_mask) << 4);
                    break;
                default:
                    lv[(size_t)(v / 4) * R + (size_t)r] =
                        (unsigned char)((l[0] & 3) | (l[1] & 3) << 2 | (l[2] & 3) << 4 | (l[3] & 3) << 6);
                    break;
                }
            }
        if (q->high == 1)
            for (int v = 0; v < q->g; v += 8)
                for (int r = 0; r < rows; r++) {
                    const uint8_t *l = parts[r].level + base + v;
                    unsigned char b = 0;
                    for (int i = 0; i < 8; i++)
                        b = (unsigned char)(b | ((l[i] >> q->bits) & 1) << i);
                    hb[(size_t)(v / 8) * R + (size_t)r] = b;
                }
        else if (q->high == 2)
            for (int v = 0; v < q->g; v += 4)
                for (int r = 0; r < rows; r++) {
                    const uint8_t *l = parts[r].level + base + v;
                    hb[(size_t)(v / 4) * R + (size_t)r] =
                        (unsigned char)((l[0] >> q->bits & 3) | (l[1] >> q->bits & 3) << 2 |
                                        (l[2] >> q->bits & 3) << 4 | (l[3] >> q->bits & 3) << 6);
                }
    }
}

void
linalg_pack_q_put_f16(struct linalg_packed *pk, int j0, int rows, const uint16_t *halves,
                      size_t ld)
{
    /* (a 64 x 32 block at a time: the source's rows read across, the panel written in order) */
    for (int s = 0; s < pk->k / 32; s++) {
        uint16_t *at = (uint16_t *)(void *)sg_at(pk, j0, s);
        for (int v = 0; v < 32; v++)
            for (int r = 0; r < rows; r++)
                at[(size_t)v * R + (size_t)r] = halves[(size_t)r * ld + (size_t)(s * 32 + v)];
    }
}

/* ---------------------------------------------------------------- widening */

static uint16_t
half_at(const unsigned char *p)
{
    uint16_t h;

    memcpy(&h, p, 2);
    return h;
}

/* A level's float as the format's dequantization has it (its offset applied: exact). */
static float
level_float(enum linalg_qformat f, unsigned level)
{
    switch (f) {
    case LINALG_Q4_0:
        return (float)((int)level - 8);
    case LINALG_Q5_0:
        return (float)((int)level - 16);
    case LINALG_Q8_0:
        return (float)(int8_t)level;
    case LINALG_Q3_K:
        return (float)((int)level - 4);
    case LINALG_Q6_K:
        return (float)((int)level - 32);
    case LINALG_MXFP4:
        return mxfp4_levels[level & 15];
    default:
        return (float)level;
    }
}

/* Row r's level bits of value w of a group whose levels are at lv (high bits at hb). */
static unsigned
level_bits(const struct qshape *q, const unsigned char *lv, const unsigned char *hb, int r, int w)
{
    unsigned l;

    switch (q->bits) {
    case 8:
        l = lv[(size_t)w * R + (size_t)r];
        break;
    case 4:
        l = (lv[(size_t)(w / 2) * R + (size_t)r] >> (4 * (w % 2))) & 15;
        break;
    case 2:
        l = (lv[(size_t)(w / 4) * R + (size_t)r] >> (2 * (w % 4))) & 3;
        break;
    default:
        return 0;
    }
    if (q->high == 1)
        l |= ((hb[(size_t)(w / 8) * R + (size_t)r] >> (w % 8)) & 1u) << q->bits;
    else if (q->high == 2)
        l |= ((hb[(size_t)(w / 4) * R + (size_t)r] >> (2 * (w % 4))) & 3u) << q->bits;
    return l;
}

/*
 * Row r of the panel at p, values [v0, v0 + count) (whole groups apart
 * from where they start and end), widened into out: the scalar reference
 * every vector kernel must equal.
 */
static void
widen_row(enum linalg_qformat f, const unsigned char *panel, int r, int v0, int count, float *out)
{
    const struct qshape *q = &shapes[f];

    for (int v = v0; v < v0 + count;) {
        const int s = v / q->sg, g = (v % q->sg) / q->g;
        const unsigned char *sg = panel + (size_t)s * sg_bytes(q);
        const unsigned char *gr = sg + (size_t)q->halves * R * 2 + (size_t)g * group_bytes(q);
        const unsigned char *lv = gr + q->gscale;
        const unsigned char *hb = lv + (size_t)q->g * R * (size_t)q->bits / 8;
        float scale = 1.0f, min = 0.0f;
        const int end = (v / q->g + 1) * q->g < v0 + count ? (v / q->g + 1) * q->g : v0 + count;

        if (f != LINALG_F16) {
            const float d = linalg_half_float(half_at(sg + (size_t)r * 2));
            const float dmin = q->halves >= 2 ? linalg_half_float(half_at(sg + R * 2 + (size_t)r * 2))
                                              : 0.0f;
            switch (f) {
            case LINALG_Q4_1:
            case LINALG_Q5_1:
                scale = d, min = dmin;
                break;
            case LINALG_Q2_K:
                scale = d * (float)(gr[r] & 15);
                min = -(dmin * (float)(gr[r] >> 4));
                break;
            case LINALG_Q3_K:
            case LINALG_Q6_K:
                scale = d * (float)(int8_t)gr[r];
                break;
            case LINALG_Q4_K:
            case LINALG_Q5_K:
                scale = d * (float)gr[r];
                min = -(dmin * (float)gr[R + r]);
                break;
            default:
                scale = d;
                break;
            }
        }
        for (; v < end; v++) {
            const int w = v % q->g;
            unsigned level;
            if (f == LINALG_F16) {
                *out++ = linalg_half_float(half_at(lv + ((size_t)w * R + (size_t)r) * 2));
                continue;
            }
            level = level_bits(q, lv, hb, r, w);
            *out++ = q->has_min ? scale * level_float(f, level) + min
                                : scale * level_float(f, level);
        }
    }
}

static const unsigned char *
panel_of(const struct linalg_packed *pk, int j)
{
    return (const unsigned char *)pk->data + (size_t)(j / R) * linalg_qpanel_bytes(pk->q, pk->k);
}

float
linalg_q_at(const struct linalg_packed *pk, int j, int p)
{
    float w;

    widen_row(pk->q, panel_of(pk, j), j % R, p, 1, &w);
    return w;
}

bool
linalg_q_explain(const struct linalg_packed *pk, int j, int p, float *scale, float *min, int *level)
{
    const struct qshape *q = &shapes[pk->q];
    const int r = j % R, s = p / q->sg, g = (p % q->sg) / q->g;
    const unsigned char *sg = panel_of(pk, j) + (size_t)s * sg_bytes(q);
    const unsigned char *gr = sg + (size_t)q->halves * R * 2 + (size_t)g * group_bytes(q);
    const unsigned char *lv = gr + q->gscale;
    const unsigned char *hb = lv + (size_t)q->g * R * (size_t)q->bits / 8;
    const float d = q->halves >= 1 ? linalg_half_float(half_at(sg + (size_t)r * 2)) : 0.0f;
    const float dmin = q->halves >= 2 ? linalg_half_float(half_at(sg + R * 2 + (size_t)r * 2)) : 0.0f;

    *min = 0.0f;
    *level = (int)level_float(pk->q, level_bits(q, lv, hb, r, p % q->g));
    switch (pk->q) {
    case LINALG_Q4_1:
    case LINALG_Q5_1:
        *scale = d, *min = dmin;
        break;
    case LINALG_Q2_K:
        *scale = d * (float)(gr[r] & 15), *min = dmin * (float)(gr[r] >> 4);
        break;
    case LINALG_Q3_K:
    case LINALG_Q6_K:
        *scale = d * (float)(int8_t)gr[r];
        break;
    case LINALG_Q4_K:
    case LINALG_Q5_K:
        *scale = d * (float)gr[r], *min = dmin * (float)gr[R + r];
        break;
    case LINALG_F16:
        *scale = linalg_q_at(pk, j, p), *level = 1;
        break;
    default:
        *scale = d;
        break;
    }
    return q->has_min;
}

/* ------------------------------------------------------------ the kernels */

/* Portable: rows [j0, j0 + count) against x, a row widened at a time. */
static void
rows_portable(const struct linalg_packed *pk, int j0, int count, const float *x, float *y)
{
    float *w = malloc((size_t)pk->k * sizeof *w);

    for (int j = j0; j < j0 + count; j++) {
        float acc = 0.0f;
        if (w == NULL) { /* (no memory: a value at a time) */
            for (int p = 0; p < pk->k; p++)
                acc = fmaf(x[p], linalg_q_at(pk, j, p), acc);
        } else {
            widen_row(pk->q, panel_of(pk, j), j % R, 0, pk->k, w);
            for (int p = 0; p < pk->k; p++)
                acc = fmaf(x[p], w[p], acc);
        }
        y[j - j0] = acc;
    }
    free(w);
}

/* Portable: a float panel (kc x nr) of rows [j0, j0 + nr), values [p0, p0 + kc). */
static void
panel_portable(const struct linalg_packed *pk, int j0, int nr, int p0, int kc, float *out)
{
    float row[1024];

    for (int j = 0; j < nr; j++) {
        for (int at = 0; at < kc; at += 1024) {
            const int len = kc - at < 1024 ? kc - at : 1024;
            if (j0 + j >= pk->n)
                memset(row, 0, (size_t)len * sizeof *row);
            else
                widen_row(pk->q, panel_of(pk, j0 + j), (j0 + j) % R, p0 + at, len, row);
            for (int p = 0; p < len; p++)
                out[(size_t)(at + p) * (size_t)nr + (size_t)j] = row[p];
        }
    }
}

#ifdef LINALG_X86
/* ---------------------------------------------------------------- AVX-512 */

#define T16(e) _mm512_setr_ps(e(0), e(1), e(2), e(3), e(4), e(5), e(6), e(7), e(8), e(9), e(10), \
                              e(11), e(12), e(13), e(14), e(15))
#define E_I(i) (float)(i)
#define E_I8(i) (float)((i) - 8)
#define E_MX(i) mxfp4_levels[i]
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
 * four).  One template for the one-row product and the panels' widening:
 * the same weights.
 */
#define WALK(F, pn, v0, count, BODY)                                                              \
    do {                                                                                          \
        const struct qshape *q_ = &shapes[F];                                                     \
        const int per_ = q_->bits == 4 ? 2 : q_->bits == 2 ? 4 : 1;                               \
        __m512 tl, th, d[4], dm[4], sc[4], mn[4];                                                 \
        __m512i lo_[4], hi_[4];                                                                   \
        _Pragma("GCC unroll 4") for (int c = 0; c < 4; c++) lo_[c] = hi_[c] = _mm512_setzero_si512(); \
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
                        out[c] = q_->has_min ? _mm512_add_ps(_mm512_mul_ps(l, sc[c]), mn[c])     \
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

#define FORMATS(X)                                                                                \
    X(Q4_0) X(Q4_1) X(Q5_0) X(Q5_1) X(Q8_0) X(Q2_K) X(Q3_K) X(Q4_K) X(Q5_K) X(Q6_K) X(F16) X(MXFP4)
#define DEFINE(F) ROWS_FN(rows_##F, LINALG_##F) PANEL_FN(panel_##F, LINALG_##F)
FORMATS(DEFINE)
#undef DEFINE

typedef void (*rows_fn)(const unsigned char *pn, int k, const float *x, float *y);
typedef void (*panel_fn)(const unsigned char *pn, int r0, int nr, int p0, int kc, float *o);
#define ROW_ENTRY(F) [LINALG_##F] = rows_##F,
#define PANEL_ENTRY(F) [LINALG_##F] = panel_##F,
static const rows_fn rows_avx512[LINALG_QFORMATS] = { FORMATS(ROW_ENTRY) };
static const panel_fn panels_avx512[LINALG_QFORMATS] = { FORMATS(PANEL_ENTRY) };
#endif

#ifdef LINALG_X86
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
    if (q->high == 1)
        l = _mm256_or_si256(l, _mm256_slli_epi32(_mm256_and_si256(_mm256_srli_epi32(hi, w % 8),
                                                                  _mm256_set1_epi32(1)),
                                                 q->bits));
    else if (q->high == 2)
        l = _mm256_or_si256(l, _mm256_slli_epi32(_mm256_and_si256(_mm256_srli_epi32(hi, 2 * (w % 4)), m3),
                                                 q->bits));
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
        const struct qshape *q_ = &shapes[F];                                                     \
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
#define ROWS8_FN(NAME, F)                                                                         \
    __attribute__((target("avx2,fma,f16c"))) static void NAME(const unsigned char *pn, int k,     \
                                                              const float *x, float *y)           \
    {                                                                                             \
        for (int half = 0; half < 2; half++) {                                                    \
            __m256 acc0 = _mm256_setzero_ps(), acc1 = acc0, acc2 = acc0, acc3 = acc0;             \
            WALK8(F, pn, 0, k, 4 * half, 4, {                                                     \
                const __m256 xp = _mm256_set1_ps(x[p]);                                           \
                acc0 = _mm256_fmadd_ps(xp, out[0], acc0);                                         \
                acc1 = _mm256_fmadd_ps(xp, out[1], acc1);                                         \
                acc2 = _mm256_fmadd_ps(xp, out[2], acc2);                                         \
                acc3 = _mm256_fmadd_ps(xp, out[3], acc3);                                         \
            });                                                                                   \
            _mm256_storeu_ps(y + 32 * half, acc0), _mm256_storeu_ps(y + 32 * half + 8, acc1);     \
            _mm256_storeu_ps(y + 32 * half + 16, acc2), _mm256_storeu_ps(y + 32 * half + 24, acc3); \
        }                                                                                         \
    }

/* A float panel (kc x 16) of the panel's rows from r0 (a multiple of 16), for the AVX2 tiles. */
#define PANEL8_FN(NAME, F)                                                                        \
    __attribute__((target("avx2,fma,f16c"))) static void NAME(const unsigned char *pn, int r0,    \
                                                              int p0, int kc, float *o)           \
    {                                                                                             \
        WALK8(F, pn, p0, kc, r0 / 8, 2, {                                                         \
            _mm256_storeu_ps(o + (size_t)p * 16, out[0]);                                         \
            _mm256_storeu_ps(o + (size_t)p * 16 + 8, out[1]);                                     \
        });                                                                                       \
    }

#define DEFINE8(F) ROWS8_FN(rows8_##F, LINALG_##F) PANEL8_FN(panel8_##F, LINALG_##F)
FORMATS(DEFINE8)
#undef DEFINE8

typedef void (*panel8_fn)(const unsigned char *pn, int r0, int p0, int kc, float *o);
#define ROW8_ENTRY(F) [LINALG_##F] = rows8_##F,
#define PANEL8_ENTRY(F) [LINALG_##F] = panel8_##F,
static const rows_fn rows_avx2[LINALG_QFORMATS] = { FORMATS(ROW8_ENTRY) };
static const panel8_fn panels_avx2[LINALG_QFORMATS] = { FORMATS(PANEL8_ENTRY) };
#endif

void
linalg_q_rows(const struct linalg_packed *pk, int j0, int count, const float *x, float *y)
{
#ifdef LINALG_X86
    if (cpu_isa() == CPU_AVX512 || cpu_isa() == CPU_AVX2) {
        const rows_fn fn = cpu_isa() == CPU_AVX512 ? rows_avx512[pk->q] : rows_avx2[pk->q];
        for (int j = j0; j < j0 + count; j += R) {
            const int rows = j0 + count - j < R ? j0 + count - j : R;
            if (rows == R) {
                fn(panel_of(pk, j), pk->k, x, y + (j - j0));
            } else {
                float last[R];
                fn(panel_of(pk, j), pk->k, x, last);
                memcpy(y + (j - j0), last, (size_t)rows * sizeof *last);
            }
        }
        return;
    }
#endif
    rows_portable(pk, j0, count, x, y);
}

void
linalg_q_panel(const struct linalg_packed *pk, int j0, int nr, int p0, int kc, float *out)
{
#ifdef LINALG_X86
    if (cpu_isa() == CPU_AVX512 && (nr == 16 || nr == 32)) {
        panels_avx512[pk->q](panel_of(pk, j0), j0 % R, nr, p0, kc, out);
        return;
    }
    if (cpu_isa() == CPU_AVX2 && nr == 16) {
        panels_avx2[pk->q](panel_of(pk, j0), j0 % R, p0, kc, out);
        return;
    }
#endif
    panel_portable(pk, j0, nr, p0, kc, out);
}
