/*
 * deltarule.c: the gated delta rule's step on one head's state (see
 * deltarule.h).  Two passes over S, a row's v_dim columns side by side:
 * the first decays each weight (not stored) and adds it times k to mem;
 * the second decays it again (the same product, the same bits), adds k
 * times delta, stores it and adds it times q to o.  S is read twice and
 * written once, the least a step can do: it streams from memory on a
 * written token (a model's states are megabytes).
 */
#include "config.h"

#include <stddef.h>

#include "attnscope/kernels/cpu.h"
#include "attnscope/kernels/deltarule.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define DELTARULE_X86 1
#endif
#if defined(__aarch64__) && defined(__GNUC__)
#include <arm_neon.h>
#define DELTARULE_NEON 1
#endif

/* Columns from j on of row (of S), each one's arithmetic as the vectors do it. */
static inline void
read_tail(const float *row, float *acc, float decay, float ki, int j, int dv)
{
    for (; j < dv; j++)
        acc[j] += (row[j] * decay) * ki;
}

static inline void
write_tail(float *row, float *o, const float *delta, float decay, float ki, float qi, int j,
           int dv)
{
    for (; j < dv; j++) {
        row[j] = row[j] * decay + ki * delta[j];
        o[j] += row[j] * qi;
    }
}

/*
 * The passes for one instruction set: READ(row, j) adds columns j .. j +
 * LANES - 1 of the decayed row times k[i] to mem, WRITE(row, j) makes them
 * the new row and adds it times q[i] to o; the tails in plain C.
 */
#define DELTARULE_BODY(LANES, READ, WRITE)                                                   \
    for (int j = 0; j < dv; j++)                                                             \
        o[j] = 0.0f;                                                                         \
    for (int i = 0; i < dk; i++) {                                                           \
        const float *row = S + (size_t)i * (size_t)dv;                                       \
        const float ki = k[i];                                                               \
        int j = 0;                                                                           \
        for (; j + (LANES) <= dv; j += (LANES))                                              \
            READ;                                                                            \
        read_tail(row, o, decay, ki, j, dv);                                                 \
    }                                                                                        \
    for (int j = 0; j < dv; j++) {                                                           \
        delta[j] = (v[j] - o[j]) * beta;                                                     \
        o[j] = 0.0f;                                                                         \
    }                                                                                        \
    for (int i = 0; i < dk; i++) {                                                           \
        float *row = S + (size_t)i * (size_t)dv;                                             \
        const float ki = k[i], qi = q[i];                                                    \
        int j = 0;                                                                           \
        for (; j + (LANES) <= dv; j += (LANES))                                              \
            WRITE;                                                                           \
        write_tail(row, o, delta, decay, ki, qi, j, dv);                                     \
    }

static void
step_portable(float *restrict S, float *restrict o, float *restrict delta,
              const float *restrict q, const float *restrict k, const float *restrict v,
              float decay, float beta, int dk, int dv)
{
    DELTARULE_BODY(1, read_tail(row, o, decay, ki, j, j + 1),
                   write_tail(row, o, delta, decay, ki, qi, j, j + 1))
}

#ifdef DELTARULE_X86
/* An x86 step: P the intrinsics' prefix (_mm256, _mm512), VT its vector, LANES its floats. */
#define DELTARULE_X86_STEP(NAME, TARGET, LANES, VT, P)                                            \
    __attribute__((target(TARGET))) static void NAME(                                             \
        float *restrict S, float *restrict o, float *restrict delta, const float *restrict q,     \
        const float *restrict k, const float *restrict v, float decay, float beta, int dk, int dv) \
    {                                                                                             \
        const VT dc = P##_set1_ps(decay);                                                         \
        DELTARULE_BODY(                                                                           \
            LANES,                                                                                \
            P##_storeu_ps(o + j, P##_add_ps(P##_loadu_ps(o + j),                                   \
                                            P##_mul_ps(P##_mul_ps(P##_loadu_ps(row + j), dc),      \
                                                       P##_set1_ps(ki)))),                         \
            {                                                                                     \
                const VT s = P##_add_ps(P##_mul_ps(P##_loadu_ps(row + j), dc),                    \
                                        P##_mul_ps(P##_set1_ps(ki), P##_loadu_ps(delta + j)));    \
                P##_storeu_ps(row + j, s);                                                        \
                P##_storeu_ps(o + j, P##_add_ps(P##_loadu_ps(o + j), P##_mul_ps(s, P##_set1_ps(qi)))); \
            })                                                                                    \
    }

DELTARULE_X86_STEP(step_avx2, "avx2", 8, __m256, _mm256)
DELTARULE_X86_STEP(step_avx512, "avx512f", 16, __m512, _mm512)
#endif

#ifdef DELTARULE_NEON
/* (vmulq and vaddq apart, never vfmaq: each product rounded as the portable code rounds it) */
static void
step_neon(float *restrict S, float *restrict o, float *restrict delta, const float *restrict q,
          const float *restrict k, const float *restrict v, float decay, float beta, int dk,
          int dv)
{
    const float32x4_t dc = vdupq_n_f32(decay);

    DELTARULE_BODY(
        4,
        vst1q_f32(o + j, vaddq_f32(vld1q_f32(o + j),
                                   vmulq_f32(vmulq_f32(vld1q_f32(row + j), dc), vdupq_n_f32(ki)))),
        {
            const float32x4_t s = vaddq_f32(vmulq_f32(vld1q_f32(row + j), dc),
                                            vmulq_f32(vdupq_n_f32(ki), vld1q_f32(delta + j)));
            vst1q_f32(row + j, s);
            vst1q_f32(o + j, vaddq_f32(vld1q_f32(o + j), vmulq_f32(s, vdupq_n_f32(qi))));
        })
}
#endif

void
deltarule_step(float *S, float *o, float *delta, const float *q, const float *k, const float *v,
               float decay, float beta, int dk, int dv)
{
    const enum cpu_isa isa = cpu_isa();

#ifdef DELTARULE_X86
    if (isa == CPU_AVX512 || isa == CPU_AVX2) {
        (isa == CPU_AVX512 ? step_avx512 : step_avx2)(S, o, delta, q, k, v, decay, beta, dk, dv);
        return;
    }
#endif
#ifdef DELTARULE_NEON
    if (isa == CPU_NEON) {
        step_neon(S, o, delta, q, k, v, decay, beta, dk, dv);
        return;
    }
#endif
    step_portable(S, o, delta, q, k, v, decay, beta, dk, dv);
}
