/*
 * rng_normal.c: PyTorch's normal draws (Tensor.normal_, torch.randn) on
 * float32 tensors, bit for bit (see rng.h).
 *
 * Tensors of 16 elements or more: PyTorch fills the tensor with uniform
 * floats, then turns each block of 16 into normals by Box-Muller, u1 = 1 -
 * d[j] and u2 = d[j + 8] for j < 8:
 *
 *   r = sqrt(-2 ln u1),  d[j] = r cos(2 pi u2) std + mean,
 *                        d[j + 8] = r sin(2 pi u2) std + mean.
 *
 * At the AVX2 capability its logarithm, sine and cosine are the vectorised
 * Cephes approximations (the polynomials of Cephes' logf, sinf and cosf, as
 * rewritten for SSE and AVX registers), compiled with their multiply-adds
 * fused; the last step is a fused multiply-add.  This file computes the
 * same operations one element at a time, in the same order, with fmaf where
 * the compiled kernel fuses, so that every bit agrees
 * (tests/golden/rng-vectors.txt holds PyTorch's draws).  When n is not a
 * multiple of 16, the last 16 elements are drawn again and transformed
 * again, as PyTorch does.
 *
 * Smaller tensors: one element at a time from a double Box-Muller pair (two
 * 53-bit uniforms; u1 gives the angle, u2 the radius through ln(1 - u2)),
 * r cos(theta) now and r sin(theta) kept for the next element.
 *
 * The polynomial coefficients are Cephes' (S. L. Moshier), published with
 * its single-precision library.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "attnscope/kernels/rng.h"

static inline uint32_t
bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline float
from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* ln(x) for x in (0, 1]: exponent and mantissa in [sqrt(1/2), sqrt(2)), then a polynomial. */
static float
cephes_logf(float x)
{
    const uint32_t u = bits(x);
    float e = (float)((int)(u >> 23) - 0x7f) + 1.0f;
    float m = from_bits((u & 0x807fffffu) | 0x3f000000u); /* in [0.5, 1) */
    float z;
    float p;

    if (m < 0.707106781186547524f) {
        e -= 1.0f;
        m = (m - 1.0f) + m; /* 2m - 1, as m - 1 + m */
    } else {
        m = m - 1.0f;
    }
    z = m * m;
    p = 7.0376836292e-2f;
    p = fmaf(p, m, -1.1514610310e-1f);
    p = fmaf(p, m, 1.1676998740e-1f);
    p = fmaf(p, m, -1.2420140846e-1f);
    p = fmaf(p, m, 1.4249322787e-1f);
    p = fmaf(p, m, -1.6668057665e-1f);
    p = fmaf(p, m, 2.0000714765e-1f);
    p = fmaf(p, m, -2.4999993993e-1f);
    p = fmaf(p, m, 3.3333331174e-1f);
    /* y x z + e q1, the compiled kernel's way: (y x) z fused with the rounded e q1 */
    p = fmaf(p * m, z, e * -2.12194440e-4f);
    p = fmaf(z, -0.5f, p);
    return fmaf(e, 0.693359375f, m + p);
}

/* sin and cos of x >= 0: reduced by multiples of pi/4 (in three parts), then two polynomials. */
static void
cephes_sincosf(float x, float *s, float *c)
{
    const float octant = x * 1.27323954473516f; /* 4 / pi */
    int j = ((int)octant + 1) & ~1;
    const float y = (float)j;
    const uint32_t sin_sign = (uint32_t)(j & 4) << 29;
    const uint32_t cos_sign = (uint32_t)(~(j - 2) & 4) << 29;
    float z;
    float pc;
    float ps;

    x = fmaf(y, -0.78515625f, x);
    x = fmaf(y, -2.4187564849853515625e-4f, x);
    x = fmaf(y, -3.77489497744594108e-8f, x);
    z = x * x;
    pc = 2.443315711809948e-5f;
    pc = fmaf(pc, z, -1.388731625493765e-3f);
    pc = fmaf(pc, z, 4.166664568298827e-2f);
    /* y z z - z / 2, the compiled kernel's way: (y z) z fused with the rounded z / 2 */
    pc = pc * z;
    pc = fmaf(pc, z, -(z * 0.5f)) + 1.0f;
    ps = -1.9515295891e-4f;
    ps = fmaf(ps, z, 8.3321608736e-3f);
    ps = fmaf(ps, z, -1.6666654611e-1f);
    ps = fmaf(ps * z, x, x);
    /* In octants 2 and 6 (mod 8) the two polynomials trade places. */
    if (j & 2) {
        const float t = ps;
        ps = pc;
        pc = t;
    }
    *s = from_bits(bits(ps) ^ sin_sign);
    *c = from_bits(bits(pc) ^ cos_sign);
}

static void
box_muller_16(float *d, float mean, float std)
{
    const float two_pi = (float)(2.0f * 3.14159265358979323846);

    for (int j = 0; j < 8; j++) {
        const float radius = sqrtf(-2.0f * cephes_logf(1.0f - d[j]));
        float s;
        float c;
        cephes_sincosf(two_pi * d[j + 8], &s, &c);
        d[j] = fmaf(radius * c, std, mean);
        d[j + 8] = fmaf(radius * s, std, mean);
    }
}

void
rng_normal_f32(struct rng *r, float *out, size_t n, double mean, double std)
{
    if (n >= 16) {
        const float m = (float)mean;
        const float sd = (float)std;
        rng_uniform_f32(r, out, n, 0.0, 1.0);
        for (size_t i = 0; i + 16 <= n; i += 16)
            box_muller_16(out + i, m, sd);
        if (n % 16 != 0) {
            rng_uniform_f32(r, out + n - 16, 16, 0.0, 1.0);
            box_muller_16(out + n - 16, m, sd);
        }
        return;
    }
    for (size_t i = 0; i < n; i++) {
        double v;
        if (r->have_normal) {
            v = r->next_normal;
            r->have_normal = false;
        } else {
            const double u1 = rng_uniform_f64(r);
            const double u2 = rng_uniform_f64(r);
            const double radius = sqrt(-2.0 * log(1.0 - u2));
            const double theta = 2.0 * 3.14159265358979323846 * u1;
            r->next_normal = radius * sin(theta);
            r->have_normal = true;
            v = radius * cos(theta);
        }
        out[i] = (float)(v * std + mean);
    }
}
