/*
 * linalg_q_neon.c: the quantized panels' kernels on AArch64 (see
 * linalg_q.c for the layout): NEON's four lanes, each weight widened in
 * registers as the portable code widens it.  Tested under qemu-user by
 * make check-neon.
 */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "attnscope/kernels/linalg.h"

#include "linalg_internal.h"
#include "linalg_q_internal.h"

#ifdef LINALG_NEON
/* ------------------------------------------------------------------- NEON */

/*
 * The walk on four lanes, 16 of the panel's rows at once (from row 16 g):
 * the 16 bytes of a k widened to four vectors of 32-bit lanes, each level
 * made by integer arithmetic and an exact conversion as AVX2 makes it
 * (MXFP4's by a byte table lookup first), scale x level (+ minimum) and the
 * chains' FMAs (vfmaq: fused, fmaf's rounding) in order of k.
 */

/* The 16 bytes at p + 16 g as four vectors of 32-bit lanes, zero- or sign-extended. */
static inline void
bytes16(const unsigned char *p, int g, bool is_signed, uint32x4_t out[4])
{
    const uint8x16_t b = vld1q_u8(p + 16 * g);

    if (is_signed) {
        const int16x8_t lo = vmovl_s8(vget_low_s8(vreinterpretq_s8_u8(b)));
        const int16x8_t hi = vmovl_high_s8(vreinterpretq_s8_u8(b));
        out[0] = vreinterpretq_u32_s32(vmovl_s16(vget_low_s16(lo)));
        out[1] = vreinterpretq_u32_s32(vmovl_high_s16(lo));
        out[2] = vreinterpretq_u32_s32(vmovl_s16(vget_low_s16(hi)));
        out[3] = vreinterpretq_u32_s32(vmovl_high_s16(hi));
    } else {
        const uint16x8_t lo = vmovl_u8(vget_low_u8(b)), hi = vmovl_high_u8(b);
        out[0] = vmovl_u16(vget_low_u16(lo));
        out[1] = vmovl_high_u16(lo);
        out[2] = vmovl_u16(vget_low_u16(hi));
        out[3] = vmovl_high_u16(hi);
    }
}

/* The 4 halves of lanes c (rows 4c .. 4c + 3) at p, widened (exact). */
static inline float32x4_t
halves4(const unsigned char *p, int c)
{
    uint16_t h[4];

    memcpy(h, p + 8 * c, sizeof h);
    return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(h)));
}

/* MXFP4's levels (ggml's kvalues, doubled: small integers) of the 16 bytes' nibbles (high: 4-7). */
static inline void
mxfp4_16(const unsigned char *p, int g, int high, float32x4_t out[4])
{
    static const int8_t levels[16] = { 0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12 };
    const uint8x16_t b = vld1q_u8(p + 16 * g);
    const uint8x16_t idx = high ? vshrq_n_u8(b, 4) : vandq_u8(b, vdupq_n_u8(15));
    const int8x16_t l = vqtbl1q_s8(vld1q_s8(levels), idx);
    const int16x8_t lo = vmovl_s8(vget_low_s8(l)), hi = vmovl_high_s8(l);

    out[0] = vcvtq_f32_s32(vmovl_s16(vget_low_s16(lo)));
    out[1] = vcvtq_f32_s32(vmovl_high_s16(lo));
    out[2] = vcvtq_f32_s32(vmovl_s16(vget_low_s16(hi)));
    out[3] = vcvtq_f32_s32(vmovl_high_s16(hi));
}

/* Group scales of lanes c (four rows): widen_row's, lane for lane. */
static inline void
group_scales4(enum linalg_qformat f, float32x4_t d, float32x4_t dm, const uint32x4_t gs[4],
              const uint32x4_t gm[4], int c, float32x4_t *sc, float32x4_t *mn)
{
    switch (f) {
    case LINALG_Q4_1:
    case LINALG_Q5_1:
        *sc = d, *mn = dm;
        break;
    case LINALG_Q2_K:
        *sc = vmulq_f32(d, vcvtq_f32_u32(vandq_u32(gs[c], vdupq_n_u32(15))));
        *mn = vnegq_f32(vmulq_f32(dm, vcvtq_f32_u32(vshrq_n_u32(gs[c], 4))));
        break;
    case LINALG_Q3_K:
    case LINALG_Q6_K:
        *sc = vmulq_f32(d, vcvtq_f32_s32(vreinterpretq_s32_u32(gs[c])));
        break;
    case LINALG_Q4_K:
    case LINALG_Q5_K:
        *sc = vmulq_f32(d, vcvtq_f32_u32(gs[c]));
        *mn = vnegq_f32(vmulq_f32(dm, vcvtq_f32_u32(gm[c])));
        break;
    default:
        *sc = d;
        break;
    }
}

/* The level of value w, the i-th of its low bits' byte lo and of high bits' hi, as level8's. */
static inline float32x4_t
level4(enum linalg_qformat f, const struct qshape *q, uint32x4_t lo, uint32x4_t hi, int i, int w)
{
    int32x4_t l;

    if (q->bits == 4)
        l = vreinterpretq_s32_u32(vandq_u32(i == 0 ? lo : vshrq_n_u32(lo, 4), vdupq_n_u32(15)));
    else
        l = vreinterpretq_s32_u32(vandq_u32(vshlq_u32(lo, vdupq_n_s32(-2 * i)), vdupq_n_u32(3)));
    if (q->high == 1)
        l = vorrq_s32(l, vreinterpretq_s32_u32(vshlq_u32(
                             vandq_u32(vshlq_u32(hi, vdupq_n_s32(-(w % 8))), vdupq_n_u32(1)),
                             vdupq_n_s32(q->bits))));
    else if (q->high == 2)
        l = vorrq_s32(l, vreinterpretq_s32_u32(vshlq_u32(
                             vandq_u32(vshlq_u32(hi, vdupq_n_s32(-2 * (w % 4))), vdupq_n_u32(3)),
                             vdupq_n_s32(q->bits))));
    switch (f) {
    case LINALG_Q4_0:
        l = vsubq_s32(l, vdupq_n_s32(8));
        break;
    case LINALG_Q5_0:
        l = vsubq_s32(l, vdupq_n_s32(16));
        break;
    case LINALG_Q3_K:
        l = vsubq_s32(l, vdupq_n_s32(4));
        break;
    case LINALG_Q6_K:
        l = vsubq_s32(l, vdupq_n_s32(32));
        break;
    default:
        break;
    }
    return vcvtq_f32_s32(l);
}

/* WALK's four-lane form over 16 rows from 16 g: out[4] their weights of value p. */
#define WALK4(F, pn, v0, count, grp, BODY)                                                          \
    do {                                                                                          \
        const struct qshape *q_ = &linalg_qshapes[F];                                                     \
        const int per_ = q_->bits == 4 ? 2 : q_->bits == 2 ? 4 : 1;                               \
        float32x4_t sc[4], mn[4], mx_[2][4];                                                      \
        uint32x4_t lo_[4], hi_[4], gs_[4], gm_[4];                                                \
        for (int c = 0; c < 4; c++) {                                                             \
            lo_[c] = hi_[c] = gs_[c] = gm_[c] = vdupq_n_u32(0);                                   \
            sc[c] = mn[c] = mx_[0][c] = mx_[1][c] = vdupq_n_f32(0.0f);                            \
        }                                                                                         \
        for (int v_ = (v0); v_ < (v0) + (count); v_ += q_->g) {                                   \
            const unsigned char *sgp = (pn) + (size_t)(v_ / q_->sg) * sg_bytes(q_);               \
            const unsigned char *gr = sgp + (size_t)q_->halves * R * 2 +                          \
                                      (size_t)((v_ % q_->sg) / q_->g) * group_bytes(q_);          \
            const unsigned char *lv = gr + q_->gscale;                                            \
            const unsigned char *hb = lv + (size_t)q_->g * R * (size_t)q_->bits / 8;              \
            (void)hb;                                                                             \
            if (q_->gscale > 0)                                                                   \
                bytes16(gr, (grp), F == LINALG_Q3_K || F == LINALG_Q6_K, gs_);                      \
            if (q_->gscale == 128)                                                                \
                bytes16(gr + R, (grp), false, gm_);                                                 \
            if (F != LINALG_F16)                                                                  \
                for (int c = 0; c < 4; c++) {                                                     \
                    const float32x4_t d = q_->halves >= 1 ? halves4(sgp, 4 * (grp) + c)             \
                                                          : vdupq_n_f32(0.0f);                    \
                    const float32x4_t dm = q_->halves >= 2 ? halves4(sgp + R * 2, 4 * (grp) + c)    \
                                                           : vdupq_n_f32(0.0f);                   \
                    group_scales4(F, d, dm, gs_, gm_, c, &sc[c], &mn[c]);                         \
                }                                                                                 \
            for (int u_ = 0; u_ < q_->g; u_ += per_) {                                            \
                if (F == LINALG_MXFP4) {                                                          \
                    mxfp4_16(lv + (size_t)(u_ / 2) * R, (grp), 0, mx_[0]);                          \
                    mxfp4_16(lv + (size_t)(u_ / 2) * R, (grp), 1, mx_[1]);                          \
                } else if (per_ > 1) {                                                            \
                    bytes16(lv + (size_t)(u_ / per_) * R, (grp), false, lo_);                       \
                }                                                                                 \
                if (q_->high == 1 && u_ % 8 == 0)                                                 \
                    bytes16(hb + (size_t)(u_ / 8) * R, (grp), false, hi_);                          \
                if (q_->high == 2 && u_ % 4 == 0)                                                 \
                    bytes16(hb + (size_t)(u_ / 4) * R, (grp), false, hi_);                          \
                for (int i_ = 0; i_ < per_; i_++) {                                               \
                    const int w = u_ + i_;                                                        \
                    const int p = v_ - (v0) + w;                                                  \
                    float32x4_t out[4];                                                           \
                    if (F == LINALG_Q8_0)                                                         \
                        bytes16(lv + (size_t)w * R, (grp), true, lo_);                              \
                    for (int c = 0; c < 4; c++) {                                                 \
                        float32x4_t l;                                                            \
                        if (F == LINALG_F16) {                                                    \
                            out[c] = halves4(lv + (size_t)w * R * 2, 4 * (grp) + c);                \
                            continue;                                                             \
                        }                                                                         \
                        if (F == LINALG_Q8_0)                                                     \
                            l = vcvtq_f32_s32(vreinterpretq_s32_u32(lo_[c]));                     \
                        else if (F == LINALG_MXFP4)                                               \
                            l = mx_[i_][c];                                                       \
                        else                                                                      \
                            l = level4(F, q_, lo_[c], hi_[c], i_, w);                             \
                        out[c] = q_->has_min ? vaddq_f32(vmulq_f32(l, sc[c]), mn[c])              \
                                             : vmulq_f32(l, sc[c]);                               \
                    }                                                                             \
                    BODY                                                                          \
                }                                                                                 \
            }                                                                                     \
        }                                                                                         \
    } while (0)

/* y (the panel's 64 rows) = x . W^T: 16 rows a pass, four chains of four. */
#define ROWS4_FN(NAME, F)                                                                         \
    static void NAME(const unsigned char *pn, int k, const float *x, float *y)                    \
    {                                                                                             \
        for (int g = 0; g < 4; g++) {                                                             \
            float32x4_t acc[4];                                                                   \
            for (int c = 0; c < 4; c++)                                                           \
                acc[c] = vdupq_n_f32(0.0f);                                                       \
            WALK4(F, pn, 0, k, g, {                                                               \
                const float32x4_t xp = vdupq_n_f32(x[p]);                                         \
                for (int c = 0; c < 4; c++)                                                       \
                    acc[c] = vfmaq_f32(acc[c], xp, out[c]);                                       \
            });                                                                                   \
            for (int c = 0; c < 4; c++)                                                           \
                vst1q_f32(y + 16 * g + 4 * c, acc[c]);                                            \
        }                                                                                         \
    }

/* A float panel (kc x 16) of the panel's rows from r0 (a multiple of 16), for the NEON tiles. */
#define PANEL4_FN(NAME, F)                                                                        \
    static void NAME(const unsigned char *pn, int r0, int nr, int p0, int kc, float *o)           \
    {                                                                                             \
        (void)nr;                                                                                 \
        WALK4(F, pn, p0, kc, r0 / 16, {                                                           \
            for (int c = 0; c < 4; c++)                                                           \
                vst1q_f32(o + (size_t)p * 16 + 4 * c, out[c]);                                    \
        });                                                                                       \
    }

#define FORMATS4(X) LINALG_QFORMAT_LIST(X)
#define DEFINE4(F) ROWS4_FN(rows4_##F, LINALG_##F) PANEL4_FN(panel4_##F, LINALG_##F)
FORMATS4(DEFINE4)
#undef DEFINE4

#define ROW4_ENTRY(F) [LINALG_##F] = rows4_##F,
#define PANEL4_ENTRY(F) [LINALG_##F] = panel4_##F,
const linalg_qrows_fn linalg_qrows_neon[LINALG_QFORMATS] = { FORMATS4(ROW4_ENTRY) };
const linalg_qpanel_fn linalg_qpanels_neon[LINALG_QFORMATS] = { FORMATS4(PANEL4_ENTRY) };
#endif
