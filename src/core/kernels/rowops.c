/* rowops.c: mask, scale and softmax of one row (see rowops.h). */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "attnscope/kernels/cpu.h"
#include "attnscope/kernels/rowops.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define ROWOPS_X86 1
#endif

/* Cephes expf: exp(x) = 2^n exp(r), r = x - n ln 2 in two parts. */
#define EXP_LOWEST (-87.33654f)
#define LOG2E 1.44269504088896341f
#define LN2_HI 0.693359375f
#define LN2_LO (-2.12194440e-4f)
#define P0 1.9875691500e-4f
#define P1 1.3981999507e-3f
#define P2 8.3334519073e-3f
#define P3 4.1665795894e-2f
#define P4 1.6666665459e-1f
#define P5 5.0000001201e-1f

#define LANES 16

float
rowops_exp(float x)
{
    float n;
    float r;
    float z;
    float y;
    union {
        uint32_t u;
        float f;
    } pow2;

    if (x != x)
        return x;
    if (x < EXP_LOWEST)
        return 0.0f;
    n = nearbyintf(x * LOG2E);
    r = fmaf(n, -LN2_HI, x);
    r = fmaf(n, -LN2_LO, r);
    z = r * r;
    y = P0;
    y = fmaf(y, r, P1);
    y = fmaf(y, r, P2);
    y = fmaf(y, r, P3);
    y = fmaf(y, r, P4);
    y = fmaf(y, r, P5);
    y = fmaf(y, z, r);
    y = y + 1.0f;
    pow2.u = (uint32_t)((int32_t)n + 127) << 23;
    return y * pow2.f;
}

/* The fixed order of the final sum: lane l with l + 8, then + 4, + 2, + 1. */
static float
sum_lanes(float lane[LANES])
{
    for (int width = LANES / 2; width >= 1; width /= 2)
        for (int l = 0; l < width; l++)
            lane[l] = lane[l] + lane[l + width];
    return lane[0];
}

/* Columns from `visible` on: hidden. */
static void
hide_tail(float *masked, float *scaled, float *weights, const float *scores, int n, int visible)
{
    for (int j = visible; j < n; j++) {
        if (masked != scores)
            masked[j] = -INFINITY;
        if (scaled != masked)
            scaled[j] = -INFINITY;
        weights[j] = 0.0f;
    }
}

static void
softmax_portable(const float *s, float *m, float *c, float *w, int visible, float div)
{
    float lane[LANES] = { 0 };
    float max = -INFINITY;
    float inv;

    for (int j = 0; j < visible; j++) {
        float v = s[j] / div;
        if (m != s)
            m[j] = s[j];
        if (c != m)
            c[j] = v;
        else
            v = s[j];
        if (v > max)
            max = v;
    }
    for (int j = 0; j < visible; j++) {
        float e = rowops_exp((c != m ? c[j] : m[j]) - max);
        w[j] = e;
        lane[j % LANES] += e;
    }
    inv = 1.0f / sum_lanes(lane);
    for (int j = 0; j < visible; j++)
        w[j] *= inv;
}

#ifdef ROWOPS_X86
__attribute__((target("avx2,fma"))) static inline __m256
exp8(__m256 x)
{
    const __m256 lowest = _mm256_set1_ps(EXP_LOWEST);
    __m256 nan = _mm256_cmp_ps(x, x, _CMP_UNORD_Q);
    __m256 under = _mm256_cmp_ps(x, lowest, _CMP_LT_OQ);
    __m256 xc = _mm256_max_ps(x, lowest);
    __m256 n = _mm256_round_ps(_mm256_mul_ps(xc, _mm256_set1_ps(LOG2E)),
                               _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fmadd_ps(n, _mm256_set1_ps(-LN2_HI), xc);
    __m256 z;
    __m256 y;
    __m256i e;

    r = _mm256_fmadd_ps(n, _mm256_set1_ps(-LN2_LO), r);
    z = _mm256_mul_ps(r, r);
    y = _mm256_set1_ps(P0);
    y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(P1));
    y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(P2));
    y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(P3));
    y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(P4));
    y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(P5));
    y = _mm256_fmadd_ps(y, z, r);
    y = _mm256_add_ps(y, _mm256_set1_ps(1.0f));
    e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    y = _mm256_mul_ps(y, _mm256_castsi256_ps(e));
    y = _mm256_andnot_ps(under, y);
    return _mm256_blendv_ps(y, x, nan);
}

__attribute__((target("avx2,fma"))) static void
softmax_avx2(const float *s, float *m, float *c, float *w, int visible, float div)
{
    const __m256 vdiv = _mm256_set1_ps(div);
    const int full = visible / 8 * 8;
    __m256 vmax = _mm256_set1_ps(-INFINITY);
    __m256 acc0 = _mm256_setzero_ps();
    __m256 acc1 = _mm256_setzero_ps();
    float lane[LANES];
    float max;
    float tmp[8];
    __m256 vinv;
    int j;

    for (j = 0; j < full; j += 8) {
        __m256 v = _mm256_loadu_ps(s + j);
        if (m != s)
            _mm256_storeu_ps(m + j, v);
        if (c != m) {
            v = _mm256_div_ps(v, vdiv);
            _mm256_storeu_ps(c + j, v);
        }
        vmax = _mm256_max_ps(vmax, v);
    }
    _mm256_storeu_ps(tmp, vmax);
    max = -INFINITY;
    for (int l = 0; l < 8; l++)
        max = tmp[l] > max ? tmp[l] : max;
    for (; j < visible; j++) {
        float v = s[j];
        if (m != s)
            m[j] = v;
        if (c != m) {
            v = v / div;
            c[j] = v;
        }
        max = v > max ? v : max;
    }
    {
        const float *src = c != m ? c : m;
        const __m256 vm = _mm256_set1_ps(max);
        for (j = 0; j + 16 <= visible; j += 16) {
            __m256 e0 = exp8(_mm256_sub_ps(_mm256_loadu_ps(src + j), vm));
            __m256 e1 = exp8(_mm256_sub_ps(_mm256_loadu_ps(src + j + 8), vm));
            _mm256_storeu_ps(w + j, e0);
            _mm256_storeu_ps(w + j + 8, e1);
            acc0 = _mm256_add_ps(acc0, e0);
            acc1 = _mm256_add_ps(acc1, e1);
        }
        _mm256_storeu_ps(lane, acc0);
        _mm256_storeu_ps(lane + 8, acc1);
        for (; j < visible; j++) {
            float e = rowops_exp(src[j] - max);
            w[j] = e;
            lane[j % LANES] += e;
        }
    }
    vinv = _mm256_set1_ps(1.0f / sum_lanes(lane));
    for (j = 0; j + 8 <= visible; j += 8)
        _mm256_storeu_ps(w + j, _mm256_mul_ps(_mm256_loadu_ps(w + j), vinv));
    for (; j < visible; j++)
        w[j] *= _mm256_cvtss_f32(vinv);
}

__attribute__((target("avx512f"))) static inline __m512
exp16(__m512 x)
{
    const __m512 lowest = _mm512_set1_ps(EXP_LOWEST);
    __mmask16 nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
    __mmask16 under = _mm512_cmp_ps_mask(x, lowest, _CMP_LT_OQ);
    __m512 xc = _mm512_max_ps(x, lowest);
    __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(xc, _mm512_set1_ps(LOG2E)),
                                    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fmadd_ps(n, _mm512_set1_ps(-LN2_HI), xc);
    __m512 z;
    __m512 y;
    __m512i e;

    r = _mm512_fmadd_ps(n, _mm512_set1_ps(-LN2_LO), r);
    z = _mm512_mul_ps(r, r);
    y = _mm512_set1_ps(P0);
    y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(P1));
    y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(P2));
    y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(P3));
    y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(P4));
    y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(P5));
    y = _mm512_fmadd_ps(y, z, r);
    y = _mm512_add_ps(y, _mm512_set1_ps(1.0f));
    e = _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23);
    y = _mm512_mul_ps(y, _mm512_castsi512_ps(e));
    y = _mm512_maskz_mov_ps((__mmask16)~under, y);
    return _mm512_mask_mov_ps(y, nan, x);
}

__attribute__((target("avx512f"))) static void
softmax_avx512(const float *s, float *m, float *c, float *w, int visible, float div)
{
    const __m512 vdiv = _mm512_set1_ps(div);
    __m512 vmax = _mm512_set1_ps(-INFINITY);
    __m512 acc = _mm512_setzero_ps();
    float lane[LANES];
    float max;
    __m512 vinv;
    int j;

    for (j = 0; j < visible; j += 16) {
        __mmask16 k = visible - j >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (visible - j)) - 1);
        __m512 v = _mm512_maskz_loadu_ps(k, s + j);
        if (m != s)
            _mm512_mask_storeu_ps(m + j, k, v);
        if (c != m) {
            v = _mm512_div_ps(v, vdiv);
            _mm512_mask_storeu_ps(c + j, k, v);
        }
        vmax = _mm512_mask_max_ps(vmax, k, vmax, v);
    }
    max = _mm512_reduce_max_ps(vmax);
    {
        const float *src = c != m ? c : m;
        const __m512 vm = _mm512_set1_ps(max);
        for (j = 0; j < visible; j += 16) {
            __mmask16 k =
                visible - j >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (visible - j)) - 1);
            __m512 e = exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, src + j), vm));
            e = _mm512_maskz_mov_ps(k, e);
            _mm512_mask_storeu_ps(w + j, k, e);
            acc = _mm512_add_ps(acc, e);
        }
    }
    _mm512_storeu_ps(lane, acc);
    vinv = _mm512_set1_ps(1.0f / sum_lanes(lane));
    for (j = 0; j < visible; j += 16) {
        __mmask16 k = visible - j >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (visible - j)) - 1);
        _mm512_mask_storeu_ps(w + j, k, _mm512_mul_ps(_mm512_maskz_loadu_ps(k, w + j), vinv));
    }
}
#endif

void
rowops_softmax(const float *scores, float *masked, float *scaled, float *weights, int n, int first,
               int end, float divisor)
{
    const int visible = (end > n ? n : end) - (first > 0 ? first : 0);

    first = first > 0 ? first : 0;
    if (visible <= 0) {
        /* Everything hidden: max is -inf and -inf - -inf is NaN, as in PyTorch. */
        hide_tail(masked, scaled, weights, scores, n, 0);
        for (int j = 0; j < n; j++)
            weights[j] = NAN;
        return;
    }
    /* Columns before first are hidden like those after the range. */
    hide_tail(masked, scaled, weights, scores, first, 0);
    scores += first;
    masked += first;
    scaled += first;
    weights += first;
    n -= first;
    switch (cpu_isa()) {
    case CPU_AVX512:
#ifdef ROWOPS_X86
        softmax_avx512(scores, masked, scaled, weights, visible, divisor);
        break;
#else
        /* fall through: no vector code for this processor family */
#endif
    case CPU_AVX2:
#ifdef ROWOPS_X86
        softmax_avx2(scores, masked, scaled, weights, visible, divisor);
        break;
#else
        /* fall through */
#endif
    case CPU_NEON: /* (no NEON code here yet: the portable loops, the same bits) */
    case CPU_PORTABLE:
        softmax_portable(scores, masked, scaled, weights, visible, divisor);
        break;
    }
    hide_tail(masked, scaled, weights, scores, n, visible);
}

/* ------------------------------------------------------- sum of exponentials */

static float
sum_exp_portable(const float *x, int n, float max)
{
    float lane[LANES] = { 0 };

    for (int j = 0; j < n; j++)
        lane[j % LANES] += rowops_exp(x[j] - max);
    return sum_lanes(lane);
}

#ifdef ROWOPS_X86
__attribute__((target("avx2,fma"))) static float
sum_exp_avx2(const float *x, int n, float max)
{
    const __m256 vm = _mm256_set1_ps(max);
    __m256 acc0 = _mm256_setzero_ps();
    __m256 acc1 = _mm256_setzero_ps();
    float lane[LANES];
    int j;

    for (j = 0; j + 16 <= n; j += 16) {
        acc0 = _mm256_add_ps(acc0, exp8(_mm256_sub_ps(_mm256_loadu_ps(x + j), vm)));
        acc1 = _mm256_add_ps(acc1, exp8(_mm256_sub_ps(_mm256_loadu_ps(x + j + 8), vm)));
    }
    _mm256_storeu_ps(lane, acc0);
    _mm256_storeu_ps(lane + 8, acc1);
    for (; j < n; j++)
        lane[j % LANES] += rowops_exp(x[j] - max);
    return sum_lanes(lane);
}

__attribute__((target("avx512f"))) static float
sum_exp_avx512(const float *x, int n, float max)
{
    const __m512 vm = _mm512_set1_ps(max);
    __m512 acc = _mm512_setzero_ps();
    float lane[LANES];

    for (int j = 0; j < n; j += 16) {
        __mmask16 k = n - j >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (n - j)) - 1);
        __m512 e = exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, x + j), vm));
        acc = _mm512_add_ps(acc, _mm512_maskz_mov_ps(k, e));
    }
    _mm512_storeu_ps(lane, acc);
    return sum_lanes(lane);
}
#endif

float
rowops_sum_exp(const float *x, int n, float max)
{
    switch (cpu_isa()) {
    case CPU_AVX512:
#ifdef ROWOPS_X86
        return sum_exp_avx512(x, n, max);
#else
        /* fall through: no vector code for this processor family */
#endif
    case CPU_AVX2:
#ifdef ROWOPS_X86
        return sum_exp_avx2(x, n, max);
#else
        /* fall through */
#endif
    case CPU_NEON: /* (no NEON code here yet: the portable loops, the same bits) */
    case CPU_PORTABLE:
        break;
    }
    return sum_exp_portable(x, n, max);
}

/* ------------------------------------------------------------------ GELU */

/*
 * GELU's tanh approximation, 0.5 x (1 + tanh(u)) with u = sqrt(2/pi) (x +
 * 0.044715 x^3), computed as x / (1 + exp(-2u)) (the same function: 1 +
 * tanh(u) = 2 / (1 + exp(-2u))), without the cancellation of 1 + tanh(u)
 * when x is negative, and with the exponential every kernel shares: the
 * exponent is made non-positive (exp(-|z|); x exp(-z) / (1 + exp(-z)) when
 * z > 0), so every instruction set rounds the same operations the same way.
 */
#define GELU_C 0.044715f
#define GELU_K (-1.59576912160573071f) /* -2 sqrt(2 / pi) */

static float
gelu_one(float x)
{
    const float x3 = x * x * x;
    const float z = fmaf(GELU_C, x3, x) * GELU_K;
    const float e = rowops_exp(-fabsf(z));
    const float num = z > 0.0f ? x * e : x;

    return num / (1.0f + e);
}

#ifdef ROWOPS_X86
__attribute__((target("avx512f"))) static void
gelu_avx512(const float *x, float *y, size_t n)
{
    size_t j = 0;

    for (; j + 16 <= n; j += 16) {
        const __m512 v = _mm512_loadu_ps(x + j);
        const __m512 x3 = _mm512_mul_ps(_mm512_mul_ps(v, v), v);
        const __m512 z = _mm512_mul_ps(_mm512_fmadd_ps(_mm512_set1_ps(GELU_C), x3, v),
                                       _mm512_set1_ps(GELU_K));
        const __m512 neg = _mm512_castsi512_ps(
            _mm512_or_si512(_mm512_castps_si512(z), _mm512_set1_epi32((int)0x80000000u)));
        const __m512 e = exp16(neg);
        const __mmask16 pos = _mm512_cmp_ps_mask(z, _mm512_setzero_ps(), _CMP_GT_OQ);
        const __m512 num = _mm512_mask_mul_ps(v, pos, v, e);
        _mm512_storeu_ps(y + j, _mm512_div_ps(num, _mm512_add_ps(_mm512_set1_ps(1.0f), e)));
    }
    for (; j < n; j++)
        y[j] = gelu_one(x[j]);
}

__attribute__((target("avx2,fma"))) static void
gelu_avx2(const float *x, float *y, size_t n)
{
    size_t j = 0;

    for (; j + 8 <= n; j += 8) {
        const __m256 v = _mm256_loadu_ps(x + j);
        const __m256 x3 = _mm256_mul_ps(_mm256_mul_ps(v, v), v);
        const __m256 z = _mm256_mul_ps(_mm256_fmadd_ps(_mm256_set1_ps(GELU_C), x3, v),
                                       _mm256_set1_ps(GELU_K));
        const __m256 neg = _mm256_or_ps(z, _mm256_set1_ps(-0.0f));
        const __m256 e = exp8(neg);
        const __m256 pos = _mm256_cmp_ps(z, _mm256_setzero_ps(), _CMP_GT_OQ);
        const __m256 num = _mm256_blendv_ps(v, _mm256_mul_ps(v, e), pos);
        _mm256_storeu_ps(y + j, _mm256_div_ps(num, _mm256_add_ps(_mm256_set1_ps(1.0f), e)));
    }
    for (; j < n; j++)
        y[j] = gelu_one(x[j]);
}
#endif

void
rowops_gelu(const float *x, float *y, size_t n)
{
    switch (cpu_isa()) {
    case CPU_AVX512:
#ifdef ROWOPS_X86
        gelu_avx512(x, y, n);
        return;
#else
        /* fall through: no vector code for this processor family */
#endif
    case CPU_AVX2:
#ifdef ROWOPS_X86
        gelu_avx2(x, y, n);
        return;
#else
        /* fall through */
#endif
    case CPU_NEON: /* (no NEON code here yet: the portable loops, the same bits) */
    case CPU_PORTABLE:
        for (size_t j = 0; j < n; j++)
            y[j] = gelu_one(x[j]);
        return;
    }
}

/* ----------------------------------------------------------------- SwiGLU */

/*
 * SiLU(x) = x / (1 + exp(-x)), with the shared exponential of -|x| (x exp(x)
 * / (1 + exp(x)) when x < 0), then times up: the same operations on every
 * instruction set, as GELU's.
 */
static float
swiglu_one(float x, float up)
{
    const float e = rowops_exp(-fabsf(x));
    const float num = x < 0.0f ? x * e : x;

    return num / (1.0f + e) * up;
}

#ifdef ROWOPS_X86
__attribute__((target("avx512f"))) static void
swiglu_avx512(const float *gate, const float *up, float *y, size_t n)
{
    size_t j = 0;

    for (; j + 16 <= n; j += 16) {
        const __m512 v = _mm512_loadu_ps(gate + j);
        const __m512 neg = _mm512_castsi512_ps(
            _mm512_or_si512(_mm512_castps_si512(v), _mm512_set1_epi32((int)0x80000000u)));
        const __m512 e = exp16(neg);
        const __mmask16 below = _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_LT_OQ);
        const __m512 num = _mm512_mask_mul_ps(v, below, v, e);
        const __m512 silu = _mm512_div_ps(num, _mm512_add_ps(_mm512_set1_ps(1.0f), e));
        _mm512_storeu_ps(y + j, _mm512_mul_ps(silu, _mm512_loadu_ps(up + j)));
    }
    for (; j < n; j++)
        y[j] = swiglu_one(gate[j], up[j]);
}

__attribute__((target("avx2,fma"))) static void
swiglu_avx2(const float *gate, const float *up, float *y, size_t n)
{
    size_t j = 0;

    for (; j + 8 <= n; j += 8) {
        const __m256 v = _mm256_loadu_ps(gate + j);
        const __m256 neg = _mm256_or_ps(v, _mm256_set1_ps(-0.0f));
        const __m256 e = exp8(neg);
        const __m256 below = _mm256_cmp_ps(v, _mm256_setzero_ps(), _CMP_LT_OQ);
        const __m256 num = _mm256_blendv_ps(v, _mm256_mul_ps(v, e), below);
        const __m256 silu = _mm256_div_ps(num, _mm256_add_ps(_mm256_set1_ps(1.0f), e));
        _mm256_storeu_ps(y + j, _mm256_mul_ps(silu, _mm256_loadu_ps(up + j)));
    }
    for (; j < n; j++)
        y[j] = swiglu_one(gate[j], up[j]);
}
#endif

void
rowops_swiglu(const float *gate, const float *up, float *y, size_t n)
{
    switch (cpu_isa()) {
    case CPU_AVX512:
#ifdef ROWOPS_X86
        swiglu_avx512(gate, up, y, n);
        return;
#else
        /* fall through: no vector code for this processor family */
#endif
    case CPU_AVX2:
#ifdef ROWOPS_X86
        swiglu_avx2(gate, up, y, n);
        return;
#else
        /* fall through */
#endif
    case CPU_NEON: /* (no NEON code here yet: the portable loops, the same bits) */
    case CPU_PORTABLE:
        for (size_t j = 0; j < n; j++)
            y[j] = swiglu_one(gate[j], up[j]);
        return;
    }
}

/* ------------------------------------------------------------------ range */

/* min and max are exact: every order of comparing gives the same two values. */
static void
range_portable(const float *x, size_t n, float *lo, float *hi)
{
    float a = INFINITY, b = -INFINITY;

    for (size_t e = 0; e < n; e++) {
        if (!isfinite(x[e]))
            continue;
        a = x[e] < a ? x[e] : a;
        b = x[e] > b ? x[e] : b;
    }
    *lo = a;
    *hi = b;
}

#ifdef ROWOPS_X86
/* Horizontal min and max of eight lanes, then the tail one by one. */
__attribute__((target("avx2,fma"))) static void
range_avx2(const float *x, size_t n, float *lo, float *hi)
{
    const __m256 zero = _mm256_setzero_ps();
    const __m256 pinf = _mm256_set1_ps(INFINITY), ninf = _mm256_set1_ps(-INFINITY);
    __m256 mn = pinf, mx = ninf;
    float lane_lo[8], lane_hi[8], tail_lo, tail_hi;
    size_t e;

    for (e = 0; e + 8 <= n; e += 8) {
        const __m256 v = _mm256_loadu_ps(x + e);
        /* Finite: v - v is 0 (inf - inf and NaN are NaN). */
        const __m256 finite = _mm256_cmp_ps(_mm256_sub_ps(v, v), zero, _CMP_EQ_OQ);
        mn = _mm256_min_ps(mn, _mm256_blendv_ps(pinf, v, finite));
        mx = _mm256_max_ps(mx, _mm256_blendv_ps(ninf, v, finite));
    }
    _mm256_storeu_ps(lane_lo, mn);
    _mm256_storeu_ps(lane_hi, mx);
    range_portable(x + e, n - e, &tail_lo, &tail_hi);
    for (int l = 0; l < 8; l++) {
        tail_lo = lane_lo[l] < tail_lo ? lane_lo[l] : tail_lo;
        tail_hi = lane_hi[l] > tail_hi ? lane_hi[l] : tail_hi;
    }
    *lo = tail_lo;
    *hi = tail_hi;
}

__attribute__((target("avx512f"))) static void
range_avx512(const float *x, size_t n, float *lo, float *hi)
{
    const __m512 zero = _mm512_setzero_ps();
    __m512 mn = _mm512_set1_ps(INFINITY), mx = _mm512_set1_ps(-INFINITY);
    float lane_lo[16], lane_hi[16], a = INFINITY, b = -INFINITY;

    for (size_t e = 0; e < n; e += 16) {
        const __mmask16 in = n - e >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (n - e)) - 1);
        const __m512 v = _mm512_maskz_loadu_ps(in, x + e);
        const __mmask16 finite =
            _mm512_mask_cmp_ps_mask(in, _mm512_sub_ps(v, v), zero, _CMP_EQ_OQ);
        mn = _mm512_mask_min_ps(mn, finite, mn, v);
        mx = _mm512_mask_max_ps(mx, finite, mx, v);
    }
    _mm512_storeu_ps(lane_lo, mn);
    _mm512_storeu_ps(lane_hi, mx);
    for (int l = 0; l < 16; l++) {
        a = lane_lo[l] < a ? lane_lo[l] : a;
        b = lane_hi[l] > b ? lane_hi[l] : b;
    }
    *lo = a;
    *hi = b;
}
#endif

static void
range_any(const float *x, size_t n, float *lo, float *hi)
{
    switch (cpu_isa()) {
    case CPU_AVX512:
#ifdef ROWOPS_X86
        range_avx512(x, n, lo, hi);
        return;
#else
        /* fall through: no vector code for this processor family */
#endif
    case CPU_AVX2:
#ifdef ROWOPS_X86
        range_avx2(x, n, lo, hi);
        return;
#else
        /* fall through */
#endif
    case CPU_NEON: /* (no NEON code here yet: the portable loops, the same bits) */
    case CPU_PORTABLE:
        break;
    }
    range_portable(x, n, lo, hi);
}

void
rowops_range(const float *x, size_t n, float *lo, float *hi)
{
    range_any(x, n, lo, hi);
    /* -0 and +0 compare equal, so which one an order of comparing keeps varies: +0, always. */
    *lo += 0.0f;
    *hi += 0.0f;
}

/* ------------------------------------------------------------- non-finite */

static int
nonfinite_portable(const float *x, size_t n)
{
    int got = 0;

    for (size_t e = 0; e < n; e++) {
        if (isnan(x[e]))
            got |= ROWOPS_NAN;
        else if (isinf(x[e]) && x[e] < 0)
            got |= ROWOPS_NEG_INF;
    }
    return got;
}

#ifdef ROWOPS_X86
__attribute__((target("avx2,fma"))) static int
nonfinite_avx2(const float *x, size_t n)
{
    const __m256 ninf = _mm256_set1_ps(-INFINITY);
    __m256 nan = _mm256_setzero_ps(), neg = _mm256_setzero_ps();
    size_t e;
    int got;

    for (e = 0; e + 8 <= n; e += 8) {
        const __m256 v = _mm256_loadu_ps(x + e);
        nan = _mm256_or_ps(nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
        neg = _mm256_or_ps(neg, _mm256_cmp_ps(v, ninf, _CMP_EQ_OQ));
    }
    got = nonfinite_portable(x + e, n - e);
    if (_mm256_movemask_ps(nan) != 0)
        got |= ROWOPS_NAN;
    if (_mm256_movemask_ps(neg) != 0)
        got |= ROWOPS_NEG_INF;
    return got;
}

__attribute__((target("avx512f"))) static int
nonfinite_avx512(const float *x, size_t n)
{
    const __m512 ninf = _mm512_set1_ps(-INFINITY);
    __mmask16 nan = 0, neg = 0;
    int got = 0;

    for (size_t e = 0; e < n; e += 16) {
        const __mmask16 in = n - e >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (n - e)) - 1);
        const __m512 v = _mm512_maskz_loadu_ps(in, x + e);
        nan |= _mm512_mask_cmp_ps_mask(in, v, v, _CMP_UNORD_Q);
        neg |= _mm512_mask_cmp_ps_mask(in, v, ninf, _CMP_EQ_OQ);
    }
    if (nan != 0)
        got |= ROWOPS_NAN;
    if (neg != 0)
        got |= ROWOPS_NEG_INF;
    return got;
}
#endif

int
rowops_nonfinite(const float *x, size_t n)
{
    switch (cpu_isa()) {
    case CPU_AVX512:
#ifdef ROWOPS_X86
        return nonfinite_avx512(x, n);
#else
        /* fall through: no vector code for this processor family */
#endif
    case CPU_AVX2:
#ifdef ROWOPS_X86
        return nonfinite_avx2(x, n);
#else
        /* fall through */
#endif
    case CPU_NEON: /* (no NEON code here yet: the portable loops, the same bits) */
    case CPU_PORTABLE:
        break;
    }
    return nonfinite_portable(x, n);
}
