/*
 * quants_pack.c: ggml's quantized blocks taken apart into their scales and
 * levels (quant_parts) and packed into the kernels' panels (see quants.h).
 */
#include "config.h"

#include <stdbool.h>
#include <string.h>

#include "attnscope/formats/quants.h"
#include "attnscope/kernels/linalg.h"
#include "attnscope/kernels/parallel.h"

#define QK 32   /* the values of a Q4_0 .. Q8_0 block */
#define QK_K 256 /* of a K-quant's */

bool
quant_packable(enum quant_type q, const unsigned char *blocks, size_t count)
{
    if (q != QUANT_MXFP4)
        return true;
    /* A half holds 2^-24 .. 2^15 exactly: e from 104 to 143. */
    for (size_t i = 0; i < count; i++)
        if (blocks[i * quant_block_bytes(q)] < 104 || blocks[i * quant_block_bytes(q)] > 143)
            return false;
    return true;
}

enum linalg_qformat
quant_panel_format(enum quant_type q)
{
    static const enum linalg_qformat formats[QUANT_TYPES] = {
        [QUANT_Q4_0] = LINALG_Q4_0, [QUANT_Q4_1] = LINALG_Q4_1, [QUANT_Q5_0] = LINALG_Q5_0,
        [QUANT_Q5_1] = LINALG_Q5_1, [QUANT_Q8_0] = LINALG_Q8_0, [QUANT_Q2_K] = LINALG_Q2_K,
        [QUANT_Q3_K] = LINALG_Q3_K, [QUANT_Q4_K] = LINALG_Q4_K, [QUANT_Q5_K] = LINALG_Q5_K,
        [QUANT_Q6_K] = LINALG_Q6_K, [QUANT_MXFP4] = LINALG_MXFP4,
    };

    return (unsigned)q < QUANT_TYPES ? formats[q] : LINALG_QNONE;
}

static uint16_t
bits_at(const unsigned char *b)
{
    return (uint16_t)(b[0] | b[1] << 8);
}

/* A K-quant super-block's parts (quant_parts for Q2_K to Q6_K): its scales, minimums and levels. */
static void
k_quant_parts(enum quant_type q, const unsigned char *b, struct linalg_qparts *p)
{
    switch (q) {
    case QUANT_Q2_K: {
        const unsigned char *qs = b + QK_K / 16;
        int sub = 0, v = 0;
        p->d = bits_at(b + QK_K / 16 + QK_K / 4);
        p->dmin = bits_at(b + QK_K / 16 + QK_K / 4 + 2);
        for (int half = 0; half < 2; half++, qs += 32)
            for (int shift = 0; shift < 8; shift += 2)
                for (int part = 0; part < 2; part++, sub++) {
                    p->sc[sub] = b[sub] & 0x0f;
                    p->m[sub] = b[sub] >> 4;
                    for (int l = 0; l < 16; l++)
                        p->level[v++] = (qs[part * 16 + l] >> shift) & 3;
                }
        break;
    }
    case QUANT_Q3_K: {
        const unsigned char *hmask = b;
        const unsigned char *qs = b + QK_K / 8;
        const unsigned char *packed = qs + QK_K / 4;
        unsigned char bit = 1;
        int sub = 0, v = 0;
        p->d = bits_at(packed + 12);
        for (int k = 0; k < 16; k++) {
            const int low = k < 8 ? packed[k] & 0x0f : packed[k - 8] >> 4;
            const int top = (packed[8 + k % 4] >> (2 * (k / 4))) & 3;
            p->sc[k] = (int16_t)((low | top << 4) - 32);
        }
        for (int half = 0; half < 2; half++, qs += 32)
            for (int shift = 0; shift < 8; shift += 2, bit <<= 1)
                for (int part = 0; part < 2; part++, sub++)
                    for (int l = 0; l < 16; l++) {
                        const int i = part * 16 + l;
                        p->level[v++] = (uint8_t)(((qs[i] >> shift) & 3) | ((hmask[i] & bit) ? 4 : 0));
                    }
        break;
    }
    case QUANT_Q4_K:
    case QUANT_Q5_K: {
        const bool five = q == QUANT_Q5_K;
        const unsigned char *qh = b + 16;
        const unsigned char *qs = b + 16 + (five ? QK_K / 8 : 0);
        int v = 0;
        p->d = bits_at(b);
        p->dmin = bits_at(b + 2);
        for (int j = 0; j < 8; j++) {
            int sc, m;
            quant_scale_min(j, b + 4, &sc, &m);
            p->sc[j] = (int16_t)sc;
            p->m[j] = (int16_t)m;
        }
        for (int pair = 0; pair < 4; pair++, qs += 32) {
            for (int l = 0; l < 32; l++)
                p->level[v++] = (uint8_t)((qs[l] & 0x0f) | (five && (qh[l] >> (2 * pair)) & 1 ? 16 : 0));
            for (int l = 0; l < 32; l++)
                p->level[v++] =
                    (uint8_t)((qs[l] >> 4) | (five && (qh[l] >> (2 * pair + 1)) & 1 ? 16 : 0));
        }
        break;
    }
    case QUANT_Q6_K: {
        const unsigned char *ql = b;
        const unsigned char *qh = b + QK_K / 2;
        const int8_t *sc = (const int8_t *)(b + QK_K / 2 + QK_K / 4);
        p->d = bits_at(b + QK_K / 2 + QK_K / 4 + QK_K / 16);
        for (int k = 0; k < 16; k++)
            p->sc[k] = sc[k];
        for (int half = 0; half < 2; half++, ql += 64, qh += 32)
            for (int l = 0; l < 32; l++) {
                uint8_t *y = p->level + 128 * half;
                y[l] = (uint8_t)((ql[l] & 0x0f) | ((qh[l] >> 0) & 3) << 4);
                y[l + 32] = (uint8_t)((ql[l + 32] & 0x0f) | ((qh[l] >> 2) & 3) << 4);
                y[l + 64] = (uint8_t)((ql[l] >> 4) | ((qh[l] >> 4) & 3) << 4);
                y[l + 96] = (uint8_t)((ql[l + 32] >> 4) | ((qh[l] >> 6) & 3) << 4);
            }
        break;
    }
    case QUANT_Q4_0:
    case QUANT_Q4_1:
    case QUANT_Q5_0:
    case QUANT_Q5_1:
    case QUANT_Q8_0:
    case QUANT_MXFP4:
    case QUANT_TYPES:
        break;
    }
}

/*
 * The parts of a block: the same fields the dequantizers above read, the
 * same positions (value v of the block is level[v]).
 */
void
quant_parts(enum quant_type q, const unsigned char *b, struct linalg_qparts *p)
{
    memset(p, 0, sizeof *p);
    switch (q) {
    case QUANT_Q4_0:
    case QUANT_Q4_1: {
        const unsigned char *qs = b + (q == QUANT_Q4_1 ? 4 : 2);
        p->d = bits_at(b);
        if (q == QUANT_Q4_1)
            p->dmin = bits_at(b + 2);
        for (int j = 0; j < QK / 2; j++) {
            p->level[j] = qs[j] & 0x0f;
            p->level[j + QK / 2] = qs[j] >> 4;
        }
        break;
    }
    case QUANT_Q5_0:
    case QUANT_Q5_1: {
        const unsigned char *hb = b + (q == QUANT_Q5_1 ? 4 : 2);
        const unsigned char *qs = hb + 4;
        const uint32_t high = (uint32_t)hb[0] | (uint32_t)hb[1] << 8 | (uint32_t)hb[2] << 16 |
                              (uint32_t)hb[3] << 24;
        p->d = bits_at(b);
        if (q == QUANT_Q5_1)
            p->dmin = bits_at(b + 2);
        for (int j = 0; j < QK / 2; j++) {
            p->level[j] = (uint8_t)((qs[j] & 0x0f) | ((high >> j) & 1) << 4);
            p->level[j + QK / 2] = (uint8_t)((qs[j] >> 4) | ((high >> (j + QK / 2)) & 1) << 4);
        }
        break;
    }
    case QUANT_Q8_0:
        p->d = bits_at(b);
        memcpy(p->level, b + 2, QK);
        break;
    case QUANT_Q2_K:
    case QUANT_Q3_K:
    case QUANT_Q4_K:
    case QUANT_Q5_K:
    case QUANT_Q6_K:
        k_quant_parts(q, b, p);
        break;
    case QUANT_MXFP4: {
        /* d as a half's bits (2^(e - 128): quant_packable checked it is one), the codes */
        const int x = (int)b[0] - 128;
        p->d = (uint16_t)(x >= -14 ? (x + 15) << 10 : 1 << (x + 24));
        for (int j = 0; j < QK / 2; j++) {
            p->level[j] = b[1 + j] & 0x0f;
            p->level[j + QK / 2] = b[1 + j] >> 4;
        }
        break;
    }
    case QUANT_TYPES:
        break;
    }
}

struct pack_job {
    struct linalg_packed *pk;
    enum quant_type q;
    const unsigned char *blocks; /* row 0's */
    int panel0;
};

/* Panels panel0 + [begin, end) of a pack_job: each super-group's 64 rows decoded, then put at once. */
static void
pack_panels(void *ctx, int begin, int end)
{
    const struct pack_job *j = ctx;
    const size_t per = (size_t)quant_block_values(j->q), bytes = quant_block_bytes(j->q);
    const size_t row_bytes = (size_t)j->pk->k / per * bytes;
    struct linalg_qparts parts[LINALG_QROWS];

    for (int panel = j->panel0 + begin; panel < j->panel0 + end; panel++) {
        const int j0 = panel * LINALG_QROWS;
        const int rows = j->pk->n - j0 < LINALG_QROWS ? j->pk->n - j0 : LINALG_QROWS;
        for (int s = 0; s < j->pk->k / (int)per; s++) {
            for (int r = 0; r < rows; r++)
                quant_parts(j->q, j->blocks + (size_t)(j0 + r) * row_bytes + (size_t)s * bytes,
                            &parts[r]);
            linalg_pack_q_put_panel(j->pk, j0, s, parts, rows);
        }
    }
}

void
quant_pack_panels(struct linalg_packed *pk, enum quant_type q, const unsigned char *blocks,
                  int panel0, int panels, int threads)
{
    struct pack_job job = { pk, q, blocks, panel0 };

    parallel_for(panels, (long)LINALG_QROWS * pk->k * 4, threads, pack_panels, &job);
}

int
quant_pack(struct linalg_packed *pk, enum quant_type q, const unsigned char *blocks, int rows,
           int cols, int threads)
{
    if (linalg_pack_q(pk, quant_panel_format(q), rows, cols) != 0)
        return -1;
    quant_pack_panels(pk, q, blocks, 0, (rows + LINALG_QROWS - 1) / LINALG_QROWS, threads);
    return 0;
}
