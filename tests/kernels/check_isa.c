/*
 * check_isa.c: every numeric kernel on every instruction set this CPU has
 * gives the portable C's bits: the float32 and bfloat16 products (tiles,
 * one row, packed or not), every quantized format's packs (a written row
 * and a prompt's panels), a row against a cache (one head, every head, half
 * precision), the dequantization and the half-precision conversion, the
 * rows' softmax and activations.
 *
 * Plain C with its own checks, no Check: it is also built for AArch64 by
 * `make check-neon` (Debian's gcc-aarch64-linux-gnu, linked statically)
 * and run under qemu-user, where it is the test of the NEON kernels.  On
 * this machine it is one of make check's tests, beside check_linalg.
 */
#include "config.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/formats/quants.h"
#include "attnscope/formats/tensor.h"
#include "attnscope/kernels/cpu.h"
#include "attnscope/kernels/deltarule.h"
#include "attnscope/kernels/linalg.h"
#include "attnscope/kernels/rowops.h"

static int failures;
static int checks;

#define CHECK(cond, ...)                                                                            \
    do {                                                                                           \
        checks++;                                                                                  \
        if (!(cond)) {                                                                             \
            failures++;                                                                            \
            fprintf(stderr, "FAIL %s (%s): ", __func__, cpu_isa_name());                           \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

static uint32_t seed = 1;

static float
uniform(void)
{
    seed = seed * 1103515245u + 12345u;
    return (float)((int)(seed >> 8) % 20001 - 10000) / 4096.0f;
}

static void
fill(float *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        x[i] = uniform();
}

/* The index of the first of n floats whose bits differ, or -1. */
static long
first_difference(const float *a, const float *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (memcmp(&a[i], &b[i], sizeof *a) != 0)
            return (long)i;
    return -1;
}

/* c (m, n) = a (m, k) . b (n, k)^T, one chain of fmaf in order of k per element: the reference. */
static void
reference_nt(int m, int n, int k, const float *a, const float *b, float *c)
{
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            float acc = 0.0f;
            for (int p = 0; p < k; p++)
                acc = fmaf(a[(size_t)i * k + p], b[(size_t)j * k + p], acc);
            c[(size_t)i * n + j] = acc;
        }
}

static uint16_t
to_bf16(float f)
{
    uint32_t u;

    memcpy(&u, &f, sizeof u);
    return (uint16_t)(u >> 16);
}

/* Float32 and bfloat16 products, packed and not, one row and several. */
static void
products(void)
{
    static const int shapes[][3] = { { 1, 70, 300 }, { 1, 64, 1030 }, { 7, 33, 257 },
                                     { 13, 96, 520 }, { 200, 17, 40 } };

    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        const int m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
        float *a = malloc((size_t)m * k * sizeof *a), *b = malloc((size_t)n * k * sizeof *b);
        float *want = malloc((size_t)m * n * sizeof *want), *got = malloc((size_t)m * n * sizeof *got);
        uint16_t *b16 = malloc((size_t)n * k * sizeof *b16);
        float *bw = malloc((size_t)n * k * sizeof *bw);
        struct linalg_packed pk;
        fill(a, (size_t)m * k);
        fill(b, (size_t)n * k);
        for (size_t i = 0; i < (size_t)n * k; i++) {
            const uint32_t u = (uint32_t)(b16[i] = to_bf16(b[i])) << 16;
            memcpy(&bw[i], &u, sizeof u);
        }
        reference_nt(m, n, k, a, b, want);
        linalg_gemm_nt(m, n, k, a, k, b, k, got, n);
        CHECK(first_difference(want, got, (size_t)m * n) < 0, "gemm_nt %d x %d x %d", m, n, k);
        CHECK(linalg_pack(&pk, n, k, b, k, 1) == 0, "pack");
        CHECK(linalg_gemm_packed(m, a, k, &pk, got, n) == 0, "packed");
        CHECK(first_difference(want, got, (size_t)m * n) < 0, "packed %d x %d x %d", m, n, k);
        linalg_packed_destroy(&pk);
        reference_nt(m, n, k, a, bw, want);
        linalg_gemm_bf16(1, m, n, k, a, k, b16, k, got, n);
        CHECK(first_difference(want, got, (size_t)m * n) < 0, "gemm_bf16 %d x %d x %d", m, n, k);
        CHECK(linalg_pack_bf16(&pk, n, k, b16, k, 1) == 0, "pack bf16");
        CHECK(linalg_gemm_packed(m, a, k, &pk, got, n) == 0, "packed bf16");
        CHECK(first_difference(want, got, (size_t)m * n) < 0, "packed bf16 %d x %d x %d", m, n, k);
        linalg_packed_destroy(&pk);
        free(a), free(b), free(want), free(got), free(b16), free(bw);
    }
}

/* A random finite half-precision scale, either sign. */
static uint16_t
random_half(void)
{
    seed = seed * 1103515245u + 12345u;
    return (uint16_t)(((seed >> 16) & 0x8000) | (3 + (seed >> 8) % 9) << 10 | ((seed >> 4) & 0x3ff));
}

/* Where each type keeps its halves (a block's d, and dmin where it has one), or -1. */
static const int half_at[QUANT_TYPES][2] = {
    [QUANT_Q4_0] = { 0, -1 }, [QUANT_Q4_1] = { 0, 2 },    [QUANT_Q5_0] = { 0, -1 },
    [QUANT_Q5_1] = { 0, 2 },  [QUANT_Q8_0] = { 0, -1 },   [QUANT_Q2_K] = { 80, 82 },
    [QUANT_Q3_K] = { 108, -1 }, [QUANT_Q4_K] = { 0, 2 },  [QUANT_Q5_K] = { 0, 2 },
    [QUANT_Q6_K] = { 208, -1 }, [QUANT_MXFP4] = { -1, -1 },
};

/* rows x k random blocks of t (scales finite; MXFP4's powers of two a panel's half holds). */
static unsigned char *
random_blocks(enum quant_type t, int rows, int k)
{
    const size_t bytes = quant_block_bytes(t), count = (size_t)rows * k / (size_t)quant_block_values(t);
    unsigned char *blocks = malloc(count * bytes);

    for (size_t i = 0; i < count * bytes; i++) {
        seed = seed * 1103515245u + 12345u;
        blocks[i] = (unsigned char)(seed >> 16);
    }
    for (size_t b = 0; b < count; b++) {
        if (t == QUANT_MXFP4) {
            seed = seed * 1103515245u + 12345u;
            blocks[b * bytes] = (unsigned char)(104 + (seed >> 16) % 40);
        }
        for (int h = 0; h < 2; h++)
            if (half_at[t][h] >= 0) {
                const uint16_t v = random_half();
                memcpy(blocks + b * bytes + half_at[t][h], &v, 2);
            }
    }
    return blocks;
}

/* Every quantized format (and F16) packed: one row, a few, many; from the first column and the 64th. */
static void
quantized_packs(void)
{
    enum { N = 2 * 64 + 13, K = 512, M = 20 };
    float *a = malloc((size_t)M * K * sizeof *a), *w = malloc((size_t)N * K * sizeof *w);
    float *want = malloc((size_t)M * N * sizeof *want), *got = malloc((size_t)M * N * sizeof *got);

    fill(a, (size_t)M * K);
    for (int t = 0; t <= QUANT_TYPES; t++) {
        const bool f16 = t == QUANT_TYPES;
        const enum linalg_qformat f = f16 ? LINALG_F16 : quant_panel_format((enum quant_type)t);
        struct linalg_packed pk;
        unsigned char *blocks;
        if (f16) {
            uint16_t *h = malloc((size_t)N * K * sizeof *h);
            for (size_t i = 0; i < (size_t)N * K; i++)
                w[i] = tensor_f16_to_f32(h[i] = random_half());
            blocks = (unsigned char *)h;
        } else {
            blocks = random_blocks((enum quant_type)t, N, K);
            quant_dequantize((enum quant_type)t, blocks,
                             (size_t)N * K / (size_t)quant_block_values((enum quant_type)t), w);
        }
        CHECK(linalg_pack_q(&pk, f, N, K) == 0, "pack format %d", (int)f);
        if (f16) {
            for (int j0 = 0; j0 < N; j0 += 64)
                linalg_pack_q_put_f16(&pk, j0, N - j0 < 64 ? N - j0 : 64,
                                      (const uint16_t *)(void *)blocks + (size_t)j0 * K, K);
        } else {
            const enum quant_type qt = (enum quant_type)t;
            const size_t per = (size_t)quant_block_values(qt);
            struct linalg_qparts *parts = malloc(64 * sizeof *parts);
            for (int j0 = 0; j0 < N; j0 += 64)
                for (int s = 0; s < K / (int)per; s++) {
                    const int rows = N - j0 < 64 ? N - j0 : 64;
                    for (int r = 0; r < rows; r++)
                        quant_parts(qt, blocks + ((size_t)(j0 + r) * K / per + (size_t)s) * quant_block_bytes(qt),
                                    &parts[r]);
                    linalg_pack_q_put_panel(&pk, j0, s, parts, rows);
                }
            free(parts);
        }
        for (int mi = 0; mi < 3; mi++) {
            const int m = mi == 0 ? 1 : mi == 1 ? 5 : M;
            reference_nt(m, N, K, a, w, want);
            CHECK(linalg_gemm_packed_cols(m, a, K, &pk, 0, N, got, N) == 0, "packed cols");
            CHECK(first_difference(want, got, (size_t)m * N) < 0, "format %d, %d rows", (int)f, m);
            CHECK(linalg_gemm_packed_cols(m, a, K, &pk, 64, N - 64, got, N) == 0, "packed cols");
            for (int i = 0; i < m; i++)
                CHECK(first_difference(want + (size_t)i * N + 64, got + (size_t)i * N, N - 64) < 0,
                      "format %d, %d rows from column 64: row %d", (int)f, m, i);
        }
        linalg_packed_destroy(&pk);
        free(blocks);
    }
    free(a), free(w), free(want), free(got);
}

/*
 * The opt-in int8 arithmetic (llama.cpp's): on every path the portable
 * code's bits, and within the activations' rounding of the exact products.
 */
static void
int8_packs(void)
{
    enum { N = 64 + 20, K = 512, M = 3 };
    static const enum quant_type types[] = { QUANT_Q4_0, QUANT_Q8_0, QUANT_Q4_K, QUANT_Q6_K };
    const enum cpu_isa isa = cpu_isa();
    float *a = malloc((size_t)M * K * sizeof *a), *w = malloc((size_t)N * K * sizeof *w);
    float *exact = malloc((size_t)M * N * sizeof *exact), *want = malloc((size_t)M * N * sizeof *want);
    float *got = malloc((size_t)M * N * sizeof *got);

    fill(a, (size_t)M * K);
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        const enum quant_type qt = types[t];
        const size_t per = (size_t)quant_block_values(qt);
        unsigned char *blocks = random_blocks(qt, N, K);
        struct linalg_qparts *parts = malloc(64 * sizeof *parts);
        struct linalg_packed pk;
        float worst = 0.0f, largest = 0.0f;
        quant_dequantize(qt, blocks, (size_t)N * K / per, w);
        CHECK(linalg_pack_q(&pk, quant_panel_format(qt), N, K) == 0, "pack");
        for (int j0 = 0; j0 < N; j0 += 64)
            for (int sgi = 0; sgi < K / (int)per; sgi++) {
                const int rows = N - j0 < 64 ? N - j0 : 64;
                for (int r = 0; r < rows; r++)
                    quant_parts(qt, blocks + ((size_t)(j0 + r) * K / per + (size_t)sgi) * quant_block_bytes(qt),
                                &parts[r]);
                linalg_pack_q_put_panel(&pk, j0, sgi, parts, rows);
            }
        reference_nt(M, N, K, a, w, exact);
        pk.int8 = true;
        cpu_isa_limit(CPU_PORTABLE);
        CHECK(linalg_gemm_packed_cols(M, a, K, &pk, 0, N, want, N) == 0, "int8 portable");
        cpu_isa_limit(isa);
        CHECK(linalg_gemm_packed_cols(M, a, K, &pk, 0, N, got, N) == 0, "int8");
        CHECK(first_difference(want, got, (size_t)M * N) < 0, "int8 type %d: not the portable bits", (int)qt);
        /* (one row alone: its outputs a function of that row) */
        CHECK(linalg_gemm_packed_cols(1, a + K, K, &pk, 0, N, got, N) == 0, "int8 one row");
        CHECK(first_difference(want + N, got, (size_t)N) < 0, "int8 type %d: a row alone differs", (int)qt);
        if (quant_int8_by_rows(qt)) {
            /* (the blocks where they lie, a row at a time: the panels' bits) */
            unsigned char *mem = aligned_alloc(64, linalg_q8_bytes(K));
            struct linalg_q8 x;
            for (int i = 0; i < M; i++) {
                linalg_q8_quantize(quant_panel_format(qt), a + (size_t)i * K, K, mem, &x);
                quant_int8_rows(qt, blocks, (size_t)K / per * quant_block_bytes(qt), N, K, &x, got);
                CHECK(first_difference(want + (size_t)i * N, got, (size_t)N) < 0,
                      "int8 type %d: row %d from the blocks differs", (int)qt, i);
            }
            CHECK(quant_int8_product(qt, blocks, N, K, M, a, K, got, N, 2) == 0, "int8 product");
            CHECK(first_difference(want, got, (size_t)M * N) < 0, "int8 type %d: the product differs",
                  (int)qt);
            free(mem);
        }
        for (size_t i = 0; i < (size_t)M * N; i++) {
            worst = fabsf(want[i] - exact[i]) > worst ? fabsf(want[i] - exact[i]) : worst;
            largest = fabsf(exact[i]) > largest ? fabsf(exact[i]) : largest;
        }
        CHECK(worst <= 0.02f * largest && worst > 0.0f, "int8 type %d: %g from the exact (largest %g)",
              (int)qt, (double)worst, (double)largest);
        linalg_packed_destroy(&pk);
        free(blocks);
        free(parts);
    }
    free(a), free(w), free(exact), free(want), free(got);
}

/*
 * The int8 rows from the blocks over other lengths: 11 super-blocks (a run
 * of eight and a short one, the row kernel's two cases) and 1, 3 and 4 (the
 * short rows taken two at a time, an odd count's last row alone): the
 * portable bits.
 */
static void
int8_long_rows(void)
{
    enum { N = 9, MOST = 256 * 11 };
    static const enum quant_type types[] = { QUANT_Q4_K, QUANT_Q6_K };
    static const int lengths[] = { 256 * 11, 256, 256 * 3, 256 * 4 };
    const enum cpu_isa isa = cpu_isa();
    float *a = malloc(MOST * sizeof *a), want[N], got[N];
    unsigned char *mem = aligned_alloc(64, linalg_q8_bytes(MOST));
    struct linalg_q8 x;

    fill(a, MOST);
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
        for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; l++) {
            const enum quant_type qt = types[t];
            const int K = lengths[l];
            const size_t row_bytes = (size_t)K / 256 * quant_block_bytes(qt);
            unsigned char *blocks = random_blocks(qt, N, K);
            linalg_q8_quantize(quant_panel_format(qt), a, K, mem, &x);
            cpu_isa_limit(CPU_PORTABLE);
            quant_int8_rows(qt, blocks, row_bytes, N, K, &x, want);
            cpu_isa_limit(isa);
            quant_int8_rows(qt, blocks, row_bytes, N, K, &x, got);
            CHECK(first_difference(want, got, N) < 0, "int8 type %d: a row of %d differs", (int)qt, K);
            free(blocks);
        }
    free(a);
    free(mem);
}

/* One query against a cache in place: a head, every head (keys shared in groups), half precision. */
static void
rows_against_a_cache(void)
{
    static const int cases[][3] = { { 1, 16, 1 }, { 15, 8, 2 }, { 24, 24, 1 }, { 45, 40, 3 },
                                    { 100, 64, 3 }, { 129, 128, 1 } };

    for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
        const int n = cases[t][0], hd = cases[t][1], group = cases[t][2];
        const int heads = 6, kv = heads / group, ld = kv * hd + 3;
        float *q = malloc((size_t)heads * hd * sizeof *q), *keys = malloc((size_t)n * ld * sizeof *keys);
        float *w = malloc((size_t)heads * n * sizeof *w);
        float *want = malloc((size_t)heads * (n + hd) * sizeof *want);
        float *got = malloc((size_t)heads * (n + hd) * sizeof *got);
        uint16_t *h16 = malloc((size_t)n * ld * sizeof *h16);
        float *hw = malloc((size_t)n * ld * sizeof *hw);
        fill(q, (size_t)heads * hd);
        fill(keys, (size_t)n * ld);
        fill(w, (size_t)heads * n);
        for (int h = 0; h < heads; h++)
            for (int j = 0; j < n; j++) {
                float acc = 0.0f;
                for (int p = 0; p < hd; p++)
                    acc = fmaf(q[h * hd + p], keys[(size_t)j * ld + (size_t)(h / group) * hd + p], acc);
                want[(size_t)h * n + j] = acc;
            }
        linalg_row_nt_heads(n, hd, 0, heads, group, q, (size_t)hd, keys, ld, got, (size_t)n);
        CHECK(first_difference(want, got, (size_t)heads * n) < 0, "row_nt_heads %d x %d", n, hd);
        linalg_row_nt(n, hd, q, keys, ld, got);
        CHECK(first_difference(want, got, (size_t)n) < 0, "row_nt %d x %d", n, hd);
        for (int h = 0; h < heads; h++)
            for (int col = 0; col < hd; col++) {
                float acc = 0.0f;
                for (int p = 0; p < n; p++)
                    acc = fmaf(w[(size_t)h * n + p], keys[(size_t)p * ld + (size_t)(h / group) * hd + col], acc);
                want[(size_t)h * hd + col] = acc;
            }
        linalg_row_nn_heads(hd, n, 0, heads, group, w, (size_t)n, keys, ld, got, (size_t)hd);
        CHECK(first_difference(want, got, (size_t)heads * hd) < 0, "row_nn_heads %d x %d", n, hd);
        linalg_row_nn(hd, n, w, keys, ld, got);
        CHECK(first_difference(want, got, (size_t)hd) < 0, "row_nn %d x %d", n, hd);
        for (size_t i = 0; i < (size_t)n * ld; i++)
            hw[i] = tensor_f16_to_f32(h16[i] = (uint16_t)(i % 7 == 0 ? 0x0005 + i % 300 : random_half()));
        for (int j = 0; j < n; j++) {
            float acc = 0.0f;
            for (int p = 0; p < ld; p++)
                acc = fmaf(keys[p % (n * ld)], hw[(size_t)j * ld + p], acc);
            want[j] = acc;
        }
        linalg_row_f16(n, ld, keys, h16, (size_t)ld, got);
        CHECK(first_difference(want, got, (size_t)n) < 0, "row_f16 %d x %d", n, ld);
        free(q), free(keys), free(w), free(want), free(got), free(h16), free(hw);
    }
}

/* The dequantization and the half-precision conversion: the portable path's bits. */
static void
conversions(const float *portable_dequant, const float *portable_f16, const unsigned char *const *blocks,
            const uint16_t *halves, int n)
{
    float *got = malloc((size_t)n * sizeof *got);

    for (int t = 0; t < QUANT_TYPES; t++) {
        quant_dequantize((enum quant_type)t, blocks[t], (size_t)n / (size_t)quant_block_values((enum quant_type)t),
                         got);
        CHECK(first_difference(portable_dequant + (size_t)t * n, got, (size_t)n) < 0, "dequantize type %d", t);
    }
    tensor_to_f32(TENSOR_F16, (const unsigned char *)halves, (size_t)n, got);
    CHECK(first_difference(portable_f16, got, (size_t)n) < 0, "f16 to f32");
    free(got);
}

/* The rows' operations against the portable path's outputs. */
static void
row_operations(const float *x, const float *want, int n)
{
    float *s = malloc((size_t)n * sizeof *s), *m = malloc((size_t)n * sizeof *m);
    float *d = malloc((size_t)n * sizeof *d), *wt = malloc((size_t)n * sizeof *wt);
    float lo, hi;

    rowops_softmax(x, m, d, wt, n, 0, n - 3, 1.7f);
    CHECK(first_difference(want, wt, (size_t)n) < 0, "softmax");
    rowops_gelu(x, s, (size_t)n);
    CHECK(first_difference(want + n, s, (size_t)n) < 0, "gelu");
    rowops_swiglu(x, x + 1, s, (size_t)n - 1);
    CHECK(first_difference(want + 2 * n, s, (size_t)n - 1) < 0, "swiglu");
    s[0] = rowops_sum_exp(x, n, 10.0f);
    CHECK(memcmp(&s[0], &want[3 * n], sizeof *s) == 0, "sum_exp");
    rowops_range(x, (size_t)n, &lo, &hi);
    CHECK(lo == want[3 * n + 1] && hi == want[3 * n + 2], "range");
    free(s), free(m), free(d), free(wt);
}

/*
 * The delta rule's step on a state of 7 rows of dv columns (a full run of
 * every path's lanes and a tail, or a tail alone), three tokens on, against
 * the portable path's bits; then against the rule written column by column
 * as the recurrence is (the bits the kernel promises).
 */
static void
delta_rule_steps(enum cpu_isa isa)
{
    static const int widths[] = { 128, 37, 3 };
    enum { DK = 7, DV = 128 };
    float S[DK * DV], P[DK * DV], C[DK * DV], q[DK], k[DK], v[DV];
    float o[DV], d[DV], po[DV], pd[DV];

    for (int w = 0; w < 3; w++) {
        const int dv = widths[w];
        fill(S, DK * dv);
        memcpy(P, S, sizeof S);
        memcpy(C, S, sizeof S);
        for (int t = 0; t < 3; t++) {
            const float decay = 0.9f - 0.1f * (float)t, beta = 0.3f + 0.2f * (float)t;
            fill(q, DK), fill(k, DK), fill(v, dv);
            deltarule_step(S, o, d, q, k, v, decay, beta, DK, dv);
            cpu_isa_limit(CPU_PORTABLE);
            deltarule_step(P, po, pd, q, k, v, decay, beta, DK, dv);
            cpu_isa_limit(isa);
            CHECK(first_difference(P, S, (size_t)DK * dv) < 0, "delta rule state, width %d", dv);
            CHECK(first_difference(po, o, (size_t)dv) < 0, "delta rule read, width %d", dv);
            /* (the recurrence one column at a time: decay all, then each column's mem and update) */
            for (int e = 0; e < DK * dv; e++)
                C[e] *= decay;
            for (int j = 0; j < dv; j++) {
                float mem = 0.0f, delta, sum = 0.0f;
                for (int i = 0; i < DK; i++)
                    mem += C[i * dv + j] * k[i];
                delta = (v[j] - mem) * beta;
                for (int i = 0; i < DK; i++)
                    C[i * dv + j] += k[i] * delta;
                for (int i = 0; i < DK; i++)
                    sum += C[i * dv + j] * q[i];
                CHECK(memcmp(&sum, &o[j], sizeof sum) == 0, "delta rule column %d, width %d", j, dv);
            }
            CHECK(first_difference(C, S, (size_t)DK * dv) < 0, "delta rule columns, width %d", dv);
        }
    }
}

int
main(void)
{
    enum { NQ = 2048, NR = 333 };
    const enum cpu_isa best = cpu_isa();
    unsigned char *blocks[QUANT_TYPES];
    uint16_t *halves = malloc(NQ * sizeof *halves);
    float *dequant = malloc((size_t)QUANT_TYPES * NQ * sizeof *dequant);
    float *f16 = malloc(NQ * sizeof *f16);
    float *x = malloc(NR * sizeof *x), *rows = malloc(4 * NR * sizeof *rows);
    float masked[NR], scaled[NR];
    int isas = 0;

    /* The portable path's outputs first, every other path against them. */
    cpu_isa_limit(CPU_PORTABLE);
    for (int t = 0; t < QUANT_TYPES; t++) {
        blocks[t] = random_blocks((enum quant_type)t, 1, NQ);
        quant_dequantize((enum quant_type)t, blocks[t], NQ / (size_t)quant_block_values((enum quant_type)t),
                         dequant + (size_t)t * NQ);
    }
    for (int i = 0; i < NQ; i++)
        halves[i] = i % 11 == 0 ? (uint16_t)(0x0001 + i) : random_half();
    tensor_to_f32(TENSOR_F16, (const unsigned char *)halves, NQ, f16);
    fill(x, NR);
    rowops_softmax(x, masked, scaled, rows, NR, 0, NR - 3, 1.7f);
    rowops_gelu(x, rows + NR, NR);
    rowops_swiglu(x, x + 1, rows + 2 * NR, NR - 1);
    rows[3 * NR] = rowops_sum_exp(x, NR, 10.0f);
    rowops_range(x, NR, &rows[3 * NR + 1], &rows[3 * NR + 2]);
    for (int isa = CPU_PORTABLE; isa < CPU_ISAS; isa++) {
        if (!cpu_isa_has((enum cpu_isa)isa))
            continue;
        CHECK(cpu_isa_limit((enum cpu_isa)isa) == (enum cpu_isa)isa, "limit to %s",
              cpu_isa_label((enum cpu_isa)isa));
        products();
        quantized_packs();
        int8_packs();
        int8_long_rows();
        rows_against_a_cache();
        conversions(dequant, f16, (const unsigned char *const *)blocks, halves, NQ);
        row_operations(x, rows, NR);
        delta_rule_steps((enum cpu_isa)isa);
        printf("check_isa: %s: the portable bits\n", cpu_isa_name());
        isas++;
    }
    cpu_isa_limit(best);
    for (int t = 0; t < QUANT_TYPES; t++)
        free(blocks[t]);
    free(halves), free(dequant), free(f16), free(x), free(rows);
    printf("check_isa: %d instruction sets, %d checks, %d failed\n", isas, checks, failures);
    return failures == 0 && isas >= 1 ? 0 : 1;
}
