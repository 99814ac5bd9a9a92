/*
 * linalg_q_internal.h: what the quantized panels' files share: linalg_q.c
 * (the layout, packing, the portable widening and the dispatch) and the
 * kernels of each instruction set (linalg_q_x86.c: AVX-512 and AVX2;
 * linalg_q_neon.c).  Not for use outside src/core/kernels.
 */
#ifndef ATTNSCOPE_LINALG_Q_INTERNAL_H
#define ATTNSCOPE_LINALG_Q_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "attnscope/kernels/linalg.h"

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

/*
 * Every format's shape: a table each file keeps a copy of, so that a
 * kernel made for one format is compiled with its shape's numbers known.
 */
static const struct qshape linalg_qshapes[LINALG_QFORMATS] = {
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
static const float linalg_mxfp4_levels[16] = { 0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12 };

/* The bytes of one group's levels (low and high) for 64 rows. */
static inline size_t
group_level_bytes(const struct qshape *q)
{
    return (size_t)q->g * R * (size_t)(q->bits + q->high) / 8;
}

static inline size_t
group_bytes(const struct qshape *q)
{
    return (size_t)q->gscale + group_level_bytes(q);
}

static inline size_t
sg_bytes(const struct qshape *q)
{
    return (size_t)q->halves * R * 2 + (size_t)(q->sg / q->g) * group_bytes(q);
}


/*
 * One instruction set's kernels for each format: y (the panel's 64 rows) =
 * x . W^T over all k of the panel at pn, and rows [r0, r0 + nr) of it,
 * values [p0, p0 + kc), widened into a float panel (kc x nr) for the tiles
 * (nr the kernel's width: 16, or 32 on AVX-512).
 */
typedef void (*linalg_qrows_fn)(const unsigned char *pn, int k, const float *x, float *y);
typedef void (*linalg_qpanel_fn)(const unsigned char *pn, int r0, int nr, int p0, int kc, float *o);
extern const linalg_qrows_fn linalg_qrows_avx512[LINALG_QFORMATS], linalg_qrows_avx2[LINALG_QFORMATS],
    linalg_qrows_neon[LINALG_QFORMATS];
extern const linalg_qpanel_fn linalg_qpanels_avx512[LINALG_QFORMATS],
    linalg_qpanels_avx2[LINALG_QFORMATS], linalg_qpanels_neon[LINALG_QFORMATS];

/* The formats every kernel file defines its kernels for, as an X-macro. */
#define LINALG_QFORMAT_LIST(X)                                                                    \
    X(Q4_0) X(Q4_1) X(Q5_0) X(Q5_1) X(Q8_0) X(Q2_K) X(Q3_K) X(Q4_K) X(Q5_K) X(Q6_K) X(F16) X(MXFP4)

#endif
