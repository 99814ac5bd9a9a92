/*
 * rng.c: PyTorch-compatible random numbers (see rng.h).
 *
 * Sources of the algorithms: the MT19937 reference (Matsumoto and
 * Nishimura, 1998) and PyTorch's CPU generator and distribution
 * transformations as described in the team's notes on PyTorch's random
 * numbers.  Every transformation below was checked against PyTorch bit for
 * bit by tests/check_rng.c.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "attnscope/rng.h"

#define MT_M 397
#define MT_MATRIX_A 0x9908B0DFu
#define MT_UPPER 0x80000000u
#define MT_LOWER 0x7FFFFFFFu

/* Intel's MCG31m1: x' = a x mod (2^31 - 1). */
#define MCG31_MODULUS 2147483647u
#define MCG31_MULTIPLIER 1132489760u

void
rng_seed(struct rng *r, uint64_t seed)
{
    r->state[0] = (uint32_t)(seed & 0xFFFFFFFFu);
    for (int i = 1; i < RNG_MT_N; i++) {
        uint32_t prev = r->state[i - 1];
        r->state[i] = 1812433253u * (prev ^ (prev >> 30)) + (uint32_t)i;
    }
    r->index = RNG_MT_N;
}

static void
mt_twist(struct rng *r)
{
    uint32_t *s = r->state;
    for (int i = 0; i < RNG_MT_N; i++) {
        uint32_t y = (s[i] & MT_UPPER) | (s[(i + 1) % RNG_MT_N] & MT_LOWER);
        uint32_t next = s[(i + MT_M) % RNG_MT_N] ^ (y >> 1);
        if (y & 1u)
            next ^= MT_MATRIX_A;
        s[i] = next;
    }
    r->index = 0;
}

static inline uint32_t temper(uint32_t y);

uint32_t
rng_next32(struct rng *r)
{
    if (r->index >= RNG_MT_N)
        mt_twist(r);
    return temper(r->state[r->index++]);
}

uint64_t
rng_next64(struct rng *r)
{
    uint64_t hi = rng_next32(r);
    uint64_t lo = rng_next32(r);
    return (hi << 32) | lo;
}

double
rng_uniform_f64(struct rng *r)
{
    const uint64_t mask = (UINT64_C(1) << 53) - 1;
    return (double)(rng_next64(r) & mask) * (1.0 / 9007199254740992.0);
}

static inline uint32_t
temper(uint32_t y)
{
    y ^= y >> 11;
    y ^= (y << 7) & 0x9D2C5680u;
    y ^= (y << 15) & 0xEFC60000u;
    y ^= y >> 18;
    return y;
}

/* n outputs of the generator into words, a twisted block at a time. */
static void
fill32(struct rng *r, uint32_t *words, size_t n)
{
    while (n > 0) {
        size_t run;
        if (r->index >= RNG_MT_N)
            mt_twist(r);
        run = (size_t)(RNG_MT_N - r->index);
        if (run > n)
            run = n;
        for (size_t i = 0; i < run; i++)
            words[i] = temper(r->state[r->index + (int)i]);
        r->index += (int)run;
        words += run;
        n -= run;
    }
}

/*
 * x * width + from, rounded once: PyTorch's x86-64 builds fuse this
 * multiply-add, so we must.  fmaf is exact whatever computes it; where the
 * CPU has an FMA unit it is used inline rather than through libm.
 */
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("fma"))) static void
scale_fma_hw(const uint32_t *words, float *out, size_t n, float width, float from)
{
    for (size_t i = 0; i < n; i++)
        out[i] = __builtin_fmaf((float)(words[i] & 0xFFFFFFu) * (1.0f / 16777216.0f), width, from);
}
#endif

static void
scale_fma(const uint32_t *words, float *out, size_t n, float width, float from)
{
#if defined(__x86_64__) && defined(__GNUC__)
    if (__builtin_cpu_supports("fma")) {
        scale_fma_hw(words, out, n, width, from);
        return;
    }
#endif
    for (size_t i = 0; i < n; i++)
        out[i] = fmaf((float)(words[i] & 0xFFFFFFu) * (1.0f / 16777216.0f), width, from);
}

void
rng_uniform_f32(struct rng *r, float *out, size_t n, double from, double to)
{
    const float f = (float)from;
    const float width = (float)to - f;
    uint32_t words[RNG_MT_N];

    while (n > 0) {
        size_t run = n < RNG_MT_N ? n : RNG_MT_N;
        fill32(r, words, run);
        scale_fma(words, out, run, width, f);
        out += run;
        n -= run;
    }
}

void
rng_kaiming_uniform(struct rng *r, float *weight, size_t n, int fan_in)
{
    /* Evaluated in double in the order PyTorch's Python code uses. */
    const double a = sqrt(5.0);
    const double gain = sqrt(2.0 / (1.0 + a * a));
    const double stdev = gain / sqrt((double)fan_in);
    const double bound = sqrt(3.0) * stdev;

    rng_uniform_f32(r, weight, n, -bound, bound);
}

void
rng_bias_uniform(struct rng *r, float *bias, size_t n, int fan_in)
{
    const double bound = 1.0 / sqrt((double)fan_in);

    rng_uniform_f32(r, bias, n, -bound, bound);
}

void
rng_linear_init(struct rng *r, float *weight, float *bias, int in, int out)
{
    rng_kaiming_uniform(r, weight, (size_t)in * (size_t)out, in);
    if (bias != NULL)
        rng_bias_uniform(r, bias, (size_t)out, in);
}

/*
 * The uniform numbers a Bernoulli mask is decided from.  The default path
 * takes one 53-bit double per element from the Mersenne Twister; the MKL
 * path takes ONE 32-bit draw for the whole tensor, seeds Intel's MCG31m1
 * with it (0 becomes 1) and walks that sequence, the first element using
 * the seed itself.
 */
struct bernoulli_stream {
    enum rng_path path;
    uint64_t mcg;
};

static void
bernoulli_start(struct bernoulli_stream *bs, struct rng *r, enum rng_path path)
{
    bs->path = path;
    bs->mcg = 0;
    if (path == RNG_PATH_MKL) {
        bs->mcg = rng_next32(r) % MCG31_MODULUS;
        if (bs->mcg == 0)
            bs->mcg = 1;
    }
}

static double
bernoulli_next(struct bernoulli_stream *bs, struct rng *r)
{
    if (bs->path == RNG_PATH_MKL) {
        double u = (double)bs->mcg / (double)MCG31_MODULUS;
        bs->mcg = (bs->mcg * MCG31_MULTIPLIER) % MCG31_MODULUS;
        return u;
    }
    return rng_uniform_f64(r);
}

void
rng_bernoulli(struct rng *r, enum rng_path path, double keep_p,
              unsigned char *keep, float *draw, size_t n)
{
    struct bernoulli_stream bs;

    bernoulli_start(&bs, r, path);
    for (size_t i = 0; i < n; i++) {
        double u = bernoulli_next(&bs, r);
        keep[i] = u < keep_p;
        if (draw != NULL)
            draw[i] = (float)u;
    }
}

float
rng_dropout_scale(double p)
{
    return 1.0f / (float)(1.0 - p);
}

void
rng_dropout(struct rng *r, enum rng_path path, double p, const float *x,
            float *out, unsigned char *keep, float *draw, size_t n)
{
    /* PyTorch multiplies by the mask scaled by k; it never divides by 1 - p. */
    const float k = rng_dropout_scale(p);
    const double keep_p = 1.0 - p;
    struct bernoulli_stream bs;

    bernoulli_start(&bs, r, path);
    for (size_t i = 0; i < n; i++) {
        double u = bernoulli_next(&bs, r);
        int kept = u < keep_p;
        out[i] = x[i] * (kept ? k : 0.0f);
        if (keep != NULL)
            keep[i] = (unsigned char)kept;
        if (draw != NULL)
            draw[i] = (float)u;
    }
}

void
rng_dropout_skip(struct rng *r, enum rng_path path, size_t n)
{
    if (path == RNG_PATH_MKL) {
        (void)rng_next32(r);
        return;
    }
    for (size_t i = 0; i < n; i++)
        (void)rng_next64(r);
}
