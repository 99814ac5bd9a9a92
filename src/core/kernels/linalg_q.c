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
#include "linalg_q_internal.h"




int
linalg_qformat_values(enum linalg_qformat f)
{
    return f > LINALG_QNONE && f < LINALG_QFORMATS ? linalg_qshapes[f].sg : 0;
}

size_t
linalg_qpanel_bytes(enum linalg_qformat f, int k)
{
    if (f <= LINALG_QNONE || f >= LINALG_QFORMATS || k <= 0)
        return 0;
    return (size_t)(k / linalg_qshapes[f].sg) * sg_bytes(&linalg_qshapes[f]);
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
    if (f <= LINALG_QNONE || f >= LINALG_QFORMATS || n <= 0 || k <= 0 || k % linalg_qshapes[f].sg != 0)
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
    const struct qshape *q = &linalg_qshapes[pk->q];

    return (unsigned char *)pk->data + (size_t)(j / R) * linalg_qpanel_bytes(pk->q, pk->k) +
           (size_t)s * sg_bytes(q);
}

void
linalg_pack_q_put_panel(struct linalg_packed *pk, int j0, int s, const struct linalg_qparts *parts,
                        int rows)
{
    const struct qshape *q = &linalg_qshapes[pk->q];
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
        return linalg_mxfp4_levels[level & 15];
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
    const struct qshape *q = &linalg_qshapes[f];

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
    const struct qshape *q = &linalg_qshapes[pk->q];
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

/* The kernels of the instruction set in force (NULL: the portable code). */
static const linalg_qrows_fn *
rows_kernels(void)
{
    switch (cpu_isa()) {
    case CPU_AVX512:
#ifdef LINALG_X86
        return linalg_qrows_avx512;
#endif
    case CPU_AVX2:
#ifdef LINALG_X86
        return linalg_qrows_avx2;
#endif
    case CPU_NEON:
#ifdef LINALG_NEON
        return linalg_qrows_neon;
#endif
    case CPU_PORTABLE:
        break;
    }
    return NULL;
}

void
linalg_q_rows(const struct linalg_packed *pk, int j0, int count, const float *x, float *y)
{
    const linalg_qrows_fn *kernels = rows_kernels();

    if (kernels == NULL) {
        rows_portable(pk, j0, count, x, y);
        return;
    }
    for (int j = j0; j < j0 + count; j += R) {
        const int rows = j0 + count - j < R ? j0 + count - j : R;
        float last[R];
        kernels[pk->q](panel_of(pk, j), pk->k, x, rows == R ? y + (j - j0) : last);
        if (rows < R)
            memcpy(y + (j - j0), last, (size_t)rows * sizeof *last);
    }
}

void
linalg_q_panel(const struct linalg_packed *pk, int j0, int nr, int p0, int kc, float *out)
{
    /* (each kernel widens panels of its tiles' width: AVX-512's 16 or 32, the others' 16) */
    switch (cpu_isa()) {
    case CPU_AVX512:
#ifdef LINALG_X86
        if (nr == 16 || nr == 32) {
            linalg_qpanels_avx512[pk->q](panel_of(pk, j0), j0 % R, nr, p0, kc, out);
            return;
        }
#endif
        break;
    case CPU_AVX2:
#ifdef LINALG_X86
        if (nr == 16) {
            linalg_qpanels_avx2[pk->q](panel_of(pk, j0), j0 % R, nr, p0, kc, out);
            return;
        }
#endif
        break;
    case CPU_NEON:
#ifdef LINALG_NEON
        if (nr == 16) {
            linalg_qpanels_neon[pk->q](panel_of(pk, j0), j0 % R, nr, p0, kc, out);
            return;
        }
#endif
        break;
    case CPU_PORTABLE:
        break;
    }
    panel_portable(pk, j0, nr, p0, kc, out);
}
