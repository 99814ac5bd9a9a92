/*
 * rng.c: PyTorch-compatible random numbers (see rng.h).
 *
 * Sources of the algorithms: the MT19937 reference (Matsumoto and
 * Nishimura, 1998) and PyTorch's CPU generator and distribution
 * transformations, described in doc/random-numbers.md.  Every
 * transformation below was checked against PyTorch bit for bit by
 * tests/kernels/check_rng.c.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "attnscope/kernels/cpu.h"
#include "attnscope/kernels/rng.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define RNG_X86 1
#endif

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
    r->have_normal = false;
    r->next_normal = 0.0;
}

static inline void
twist_one(uint32_t *s, int i)
{
    uint32_t y = (s[i] & MT_UPPER) | (s[(i + 1) % RNG_MT_N] & MT_LOWER);
    uint32_t next = s[(i + MT_M) % RNG_MT_N] ^ (y >> 1);
    if (y & 1u)
        next ^= MT_MATRIX_A;
    s[i] = next;
}

/*
 * A chunk of `width` words starting at i can be twisted at once when its
 * s[i + 1 ...] are all still old (i + width <= N - 1) and its s[i + M ...]
 * do not straddle the end of the state (all old, or all already new).
 */
static int
chunk_ok(int i, int width)
{
    int lo = i + MT_M;
    int hi = i + MT_M + width - 1;
    return i + width <= RNG_MT_N - 1 && (hi < RNG_MT_N || lo >= RNG_MT_N);
}

#ifdef RNG_X86
__attribute__((target("avx512f"))) static void
twist_avx512(uint32_t *s)
{
    const __m512i upper = _mm512_set1_epi32((int)MT_UPPER);
    const __m512i lower = _mm512_set1_epi32((int)MT_LOWER);
    const __m512i one = _mm512_set1_epi32(1);
    const __m512i matrix = _mm512_set1_epi32((int)MT_MATRIX_A);

    for (int i = 0; i < RNG_MT_N;) {
        if (!chunk_ok(i, 16)) {
            twist_one(s, i++);
            continue;
        }
        {
            __m512i cur = _mm512_loadu_si512(s + i);
            __m512i nxt = _mm512_loadu_si512(s + i + 1);
            __m512i mid = _mm512_loadu_si512(s + (i + MT_M) % RNG_MT_N);
            __m512i y = _mm512_or_si512(_mm512_and_si512(cur, upper), _mm512_and_si512(nxt, lower));
            __m512i mag = _mm512_and_si512(_mm512_sub_epi32(_mm512_setzero_si512(),
                                                            _mm512_and_si512(y, one)),
                                           matrix);
            _mm512_storeu_si512(s + i, _mm512_xor_si512(_mm512_xor_si512(mid, _mm512_srli_epi32(y, 1)), mag));
        }
        i += 16;
    }
}

__attribute__((target("avx2"))) static void
twist_avx2(uint32_t *s)
{
    const __m256i upper = _mm256_set1_epi32((int)MT_UPPER);
    const __m256i lower = _mm256_set1_epi32((int)MT_LOWER);
    const __m256i one = _mm256_set1_epi32(1);
    const __m256i matrix = _mm256_set1_epi32((int)MT_MATRIX_A);

    for (int i = 0; i < RNG_MT_N;) {
        if (!chunk_ok(i, 8)) {
            twist_one(s, i++);
            continue;
        }
        {
            __m256i cur = _mm256_loadu_si256((const __m256i *)(s + i));
            __m256i nxt = _mm256_loadu_si256((const __m256i *)(s + i + 1));
            __m256i mid = _mm256_loadu_si256((const __m256i *)(s + (i + MT_M) % RNG_MT_N));
            __m256i y = _mm256_or_si256(_mm256_and_si256(cur, upper), _mm256_and_si256(nxt, lower));
            __m256i mag = _mm256_and_si256(_mm256_sub_epi32(_mm256_setzero_si256(),
                                                            _mm256_and_si256(y, one)),
                                           matrix);
            _mm256_storeu_si256((__m256i *)(s + i),
                                _mm256_xor_si256(_mm256_xor_si256(mid, _mm256_srli_epi32(y, 1)), mag));
        }
        i += 8;
    }
}
#endif

static void
mt_twist(struct rng *r)
{
    switch (cpu_isa()) {
    case CPU_AVX512:
#ifdef RNG_X86
        twist_avx512(r->state);
        break;
#else
        /* fall through: no vector code for this processor family */
#endif
    case CPU_AVX2:
#ifdef RNG_X86
        twist_avx2(r->state);
        break;
#else
        /* fall through */
#endif
    case CPU_NEON: /* (the portable loop: the same numbers) */
    case CPU_PORTABLE:
        for (int i = 0; i < RNG_MT_N; i++)
            twist_one(r->state, i);
        break;
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

/*
 * Tempered state words into floats: x = (word & 0xFFFFFF) / 2^24, then
 * fma(x, width, from), rounded once as PyTorch's x86-64 builds compute it.
 */
static void
uniform_portable(const uint32_t *state, float *out, size_t n, float width, float from)
{
    for (size_t i = 0; i < n; i++)
        out[i] = fmaf((float)(temper(state[i]) & 0xFFFFFFu) * (1.0f / 16777216.0f), width, from);
}

#ifdef RNG_X86
__attribute__((target("avx512f"))) static void
uniform_avx512(const uint32_t *state, float *out, size_t n, float width, float from)
{
    const __m512i m1 = _mm512_set1_epi32((int)0x9D2C5680u);
    const __m512i m2 = _mm512_set1_epi32((int)0xEFC60000u);
    const __m512i low24 = _mm512_set1_epi32(0xFFFFFF);
    const __m512 scale = _mm512_set1_ps(1.0f / 16777216.0f);
    const __m512 w = _mm512_set1_ps(width);
    const __m512 f = _mm512_set1_ps(from);
    size_t i = 0;

    for (; i + 16 <= n; i += 16) {
        __m512i y = _mm512_loadu_si512(state + i);
        y = _mm512_xor_si512(y, _mm512_srli_epi32(y, 11));
        y = _mm512_xor_si512(y, _mm512_and_si512(_mm512_slli_epi32(y, 7), m1));
        y = _mm512_xor_si512(y, _mm512_and_si512(_mm512_slli_epi32(y, 15), m2));
        y = _mm512_xor_si512(y, _mm512_srli_epi32(y, 18));
        __m512 x = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_and_si512(y, low24)), scale);
        _mm512_storeu_ps(out + i, _mm512_fmadd_ps(x, w, f));
    }
    uniform_portable(state + i, out + i, n - i, width, from);
}

__attribute__((target("avx2,fma"))) static void
uniform_avx2(const uint32_t *state, float *out, size_t n, float width, float from)
{
    const __m256i m1 = _mm256_set1_epi32((int)0x9D2C5680u);
    const __m256i m2 = _mm256_set1_epi32((int)0xEFC60000u);
    const __m256i low24 = _mm256_set1_epi32(0xFFFFFF);
    const __m256 scale = _mm256_set1_ps(1.0f / 16777216.0f);
    const __m256 w = _mm256_set1_ps(width);
    const __m256 f = _mm256_set1_ps(from);
    size_t i = 0;

    for (; i + 8 <= n; i += 8) {
        __m256i y = _mm256_loadu_si256((const __m256i *)(state + i));
        y = _mm256_xor_si256(y, _mm256_srli_epi32(y, 11));
        y = _mm256_xor_si256(y, _mm256_and_si256(_mm256_slli_epi32(y, 7), m1));
        y = _mm256_xor_si256(y, _mm256_and_si256(_mm256_slli_epi32(y, 15), m2));
        y = _mm256_xor_si256(y, _mm256_srli_epi32(y, 18));
        __m256 x = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_and_si256(y, low24)), scale);
        _mm256_storeu_ps(out + i, _mm256_fmadd_ps(x, w, f));
    }
    uniform_portable(state + i, out + i, n - i, width, from);
}
#endif

static void
uniform_from_state(const uint32_t *state, float *out, size_t n, float width, float from)
{
    switch (cpu_isa()) {
    case CPU_AVX512:
#ifdef RNG_X86
        uniform_avx512(state, out, n, width, from);
        break;
#else
        /* fall through: no vector code for this processor family */
#endif
    case CPU_AVX2:
#ifdef RNG_X86
        uniform_avx2(state, out, n, width, from);
        break;
#else
        /* fall through */
#endif
    case CPU_NEON: /* (the portable loop: the same numbers) */
    case CPU_PORTABLE:
        uniform_portable(state, out, n, width, from);
        break;
    }
}

static void
temper_portable(const uint32_t *state, uint32_t *out, size_t n)
{
    for (size_t i = 0; i < n; i++)
        out[i] = temper(state[i]);
}

#ifdef RNG_X86
__attribute__((target("avx512f"))) static void
temper_avx512(const uint32_t *state, uint32_t *out, size_t n)
{
    const __m512i m1 = _mm512_set1_epi32((int)0x9D2C5680u);
    const __m512i m2 = _mm512_set1_epi32((int)0xEFC60000u);
    size_t i = 0;

    for (; i + 16 <= n; i += 16) {
        __m512i y = _mm512_loadu_si512(state + i);
        y = _mm512_xor_si512(y, _mm512_srli_epi32(y, 11));
        y = _mm512_xor_si512(y, _mm512_and_si512(_mm512_slli_epi32(y, 7), m1));
        y = _mm512_xor_si512(y, _mm512_and_si512(_mm512_slli_epi32(y, 15), m2));
        y = _mm512_xor_si512(y, _mm512_srli_epi32(y, 18));
        _mm512_storeu_si512(out + i, y);
    }
    temper_portable(state + i, out + i, n - i);
}
#endif

/* How many of the next want words the state holds untempered now (twisting when it has none). */
static size_t
words_ready(struct rng *r, uint64_t want)
{
    size_t run;

    if (r->index >= RNG_MT_N)
        mt_twist(r);
    run = (size_t)(RNG_MT_N - r->index);
    return want < run ? (size_t)want : run;
}

/* n outputs of the generator, in order, into words. */
static void
fill32(struct rng *r, uint32_t *words, size_t n)
{
    while (n > 0) {
        size_t run = words_ready(r, n);
#ifdef RNG_X86
        if (cpu_isa() == CPU_AVX512)
            temper_avx512(r->state + r->index, words, run);
        else
#endif
            temper_portable(r->state + r->index, words, run);
        r->index += (int)run;
        words += run;
        n -= run;
    }
}

void
rng_uniform_f32(struct rng *r, float *out, size_t n, double from, double to)
{
    const float f = (float)from;
    const float width = (float)to - f;

    while (n > 0) {
        size_t run;
        if (r->index >= RNG_MT_N)
            mt_twist(r);
        run = (size_t)(RNG_MT_N - r->index);
        if (run > n)
            run = n;
        uniform_from_state(r->state + r->index, out, run, width, f);
        r->index += (int)run;
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
rng_xavier_uniform(struct rng *r, float *weight, size_t n, int fan_in, int fan_out)
{
    /* Evaluated in double in the order PyTorch's Python code uses (gain 1.0). */
    const double stdev = 1.0 * sqrt(2.0 / (double)(fan_in + fan_out));
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
#define BERNOULLI_BLOCK 256

struct bernoulli_stream {
    enum rng_path path;
    uint64_t mcg;
    /* The default path's words, two per element, drawn a block at a time. */
    uint32_t words[2 * BERNOULLI_BLOCK];
    size_t used;
    size_t have;
    size_t left;   /* elements still to draw for */
};

static void
bernoulli_start(struct bernoulli_stream *bs, struct rng *r, enum rng_path path, size_t n)
{
    bs->path = path;
    bs->mcg = 0;
    bs->used = bs->have = 0;
    bs->left = n;
    if (path == RNG_PATH_MKL) {
        bs->mcg = rng_next32(r) % MCG31_MODULUS;
        if (bs->mcg == 0)
            bs->mcg = 1;
    }
}

static double
bernoulli_next(struct bernoulli_stream *bs, struct rng *r)
{
    uint64_t x;

    if (bs->path == RNG_PATH_MKL) {
        double u = (double)bs->mcg / (double)MCG31_MODULUS;
        bs->mcg = (bs->mcg * MCG31_MULTIPLIER) % MCG31_MODULUS;
        return u;
    }
    if (bs->used == bs->have) {
        /* Never draw past the last element: the generator must end where PyTorch's does. */
        size_t elements = bs->left < BERNOULLI_BLOCK ? bs->left : BERNOULLI_BLOCK;
        fill32(r, bs->words, 2 * elements);
        bs->have = 2 * elements;
        bs->used = 0;
    }
    /* random64(): the first word is the high half. */
    x = ((uint64_t)bs->words[bs->used] << 32) | bs->words[bs->used + 1];
    bs->used += 2;
    bs->left--;
    return (double)(x & ((UINT64_C(1) << 53) - 1)) * (1.0 / 9007199254740992.0);
}

void
rng_bernoulli(struct rng *r, enum rng_path path, double keep_p,
              unsigned char *keep, float *draw, size_t n)
{
    struct bernoulli_stream bs;

    bernoulli_start(&bs, r, path, n);
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

    bernoulli_start(&bs, r, path, n);
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
    /* Two words per element, consumed untempered: only the state's position matters. */
    uint64_t words = 2 * (uint64_t)n;

    if (path == RNG_PATH_MKL) {
        (void)rng_next32(r);
        return;
    }
    while (words > 0) {
        size_t run = words_ready(r, words);
        r->index += (int)run;
        words -= run;
    }
}
