/*
 * check_linalg.c: the matrix products (src/core/kernels/linalg.c), the
 * workspace they pack into (src/core/kernels/workspace.c) and the threads
 * they are spread over (src/core/kernels/parallel.c).
 *
 * Every element of a product must be the chain of fused multiply-adds in
 * order of k, whatever the instruction set, the tile edges or the blocks of
 * k: each result is compared bit for bit with that chain written out.
 */
#include "config.h"

#include <pthread.h>
#include <stdint.h>

#include "attnscope/formats/quants.h"
#include "attnscope/formats/tensor.h"
#include "attnscope/kernels/cpu.h"
#include "attnscope/kernels/linalg.h"
#include "attnscope/kernels/parallel.h"
#include "attnscope/kernels/workspace.h"
#include "testutil.h"

/*
 * Shapes that hit full tiles, edge tiles, several row blocks and k blocks;
 * one row and a few against whole panels over several k blocks (a prompt's
 * product, each panel packed as it is used).
 */
static const int shapes[][3] = {
    { 1, 1, 1 },   { 5, 7, 3 },    { 6, 16, 1 },    { 12, 32, 256 }, { 13, 33, 17 },
    { 25, 49, 257 }, { 97, 50, 300 }, { 100, 65, 513 }, { 200, 3, 2 }, { 1, 70, 300 },
    { 8, 96, 520 },
};

static void
fill(float *x, size_t n, uint32_t seed)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        x[i] = (float)((int32_t)(seed >> 8) % 2001 - 1000) / 997.0f;
    }
}

/* x's bfloat16 pattern (its upper half: x truncated) into h, and that value back into x. */
static void
to_bf16(float *x, uint16_t *h, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t bits;
        memcpy(&bits, &x[i], sizeof bits);
        h[i] = (uint16_t)(bits >> 16);
        bits &= 0xffff0000u;
        memcpy(&x[i], &bits, sizeof bits);
    }
}

/* c = a . B, b stored (n, k) when trans, else (k, n): the chain of FMAs in order of k. */
static void
reference(int m, int n, int k, const float *a, int lda, const float *b, int ldb, int trans,
          float *c, int ldc)
{
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            float acc = 0.0f;
            for (int p = 0; p < k; p++)
                acc = fmaf(a[(size_t)i * (size_t)lda + (size_t)p],
                           trans ? b[(size_t)j * (size_t)ldb + (size_t)p]
                                 : b[(size_t)p * (size_t)ldb + (size_t)j],
                           acc);
            c[(size_t)i * (size_t)ldc + (size_t)j] = acc;
        }
}

/* The products of one shape under the instruction set in force, against the reference. */
static void
check_shape(int m, int n, int k)
{
    const int lda = k + 3;
    const int ldb_t = k + 1;
    const int ldb_n = n + 2;
    const int ldc = n + 5;
    float *a = malloc((size_t)m * (size_t)lda * sizeof(float));
    float *bt = malloc((size_t)n * (size_t)ldb_t * sizeof(float));
    float *bn = malloc((size_t)k * (size_t)ldb_n * sizeof(float));
    float *want = calloc((size_t)m * (size_t)ldc, sizeof(float));
    float *got = malloc((size_t)m * (size_t)ldc * sizeof(float));
    uint16_t *bt16 = malloc((size_t)n * (size_t)ldb_t * sizeof *bt16);
    uint16_t *bn16 = malloc((size_t)k * (size_t)ldb_n * sizeof *bn16);
    struct linalg_packed pk;

    ck_assert(a && bt && bn && want && got && bt16 && bn16);
    fill(a, (size_t)m * (size_t)lda, 1u + (uint32_t)m);
    fill(bt, (size_t)n * (size_t)ldb_t, 2u + (uint32_t)n);
    fill(bn, (size_t)k * (size_t)ldb_n, 3u + (uint32_t)k);

    /*
     * Passes 0-3 with float B; 4-7 the same with B in bfloat16, against the
     * chain over B's values widened to float32 first.  Columns past n (the
     * leading dimension's padding) must be left alone: 7.0.
     */
    for (int pass = 0; pass < 8; pass++) {
        if (pass == 4) {
            to_bf16(bt, bt16, (size_t)n * (size_t)ldb_t);
            to_bf16(bn, bn16, (size_t)k * (size_t)ldb_n);
        }
        for (size_t e = 0; e < (size_t)m * (size_t)ldc; e++)
            got[e] = want[e] = 7.0f;
        if (pass % 2 == 0)
            reference(m, n, k, a, lda, bt, ldb_t, 1, want, ldc);
        else
            reference(m, n, k, a, lda, bn, ldb_n, 0, want, ldc);
        switch (pass) {
        case 0:
            linalg_gemm_nt(m, n, k, a, lda, bt, ldb_t, got, ldc);
            break;
        case 1:
            linalg_gemm_nn(m, n, k, a, lda, bn, ldb_n, got, ldc);
            break;
        case 2:
            ck_assert_int_eq(linalg_pack(&pk, n, k, bt, ldb_t, 1), 0);
            ck_assert_int_eq(linalg_gemm_packed(m, a, lda, &pk, got, ldc), 0);
            linalg_packed_destroy(&pk);
            break;
        case 3:
            ck_assert_int_eq(linalg_pack(&pk, n, k, bn, ldb_n, 0), 0);
            ck_assert_int_eq(linalg_gemm_packed(m, a, lda, &pk, got, ldc), 0);
            linalg_packed_destroy(&pk);
            break;
        case 4:
        case 5:
            linalg_gemm_bf16(pass == 4, m, n, k, a, lda, pass == 4 ? bt16 : bn16,
                             pass == 4 ? ldb_t : ldb_n, got, ldc);
            break;
        case 6:
        case 7:
            ck_assert_int_eq(linalg_pack_bf16(&pk, n, k, pass == 6 ? bt16 : bn16,
                                              pass == 6 ? ldb_t : ldb_n, pass == 6),
                             0);
            ck_assert(pk.bf16);
            ck_assert_uint_eq(linalg_packed_bytes(&pk), linalg_pack_floats(n, k) * 2);
            ck_assert_int_eq(linalg_gemm_packed(m, a, lda, &pk, got, ldc), 0);
            linalg_packed_destroy(&pk);
            break;
        }
        ck_assert_msg(memcmp(want, got, (size_t)m * (size_t)ldc * sizeof(float)) == 0,
                      "%s: pass %d, %d x %d x %d differs from the FMA chain", cpu_isa_name(), pass,
                      m, n, k);
    }
    free(a);
    free(bt);
    free(bn);
    free(want);
    free(got);
    free(bt16);
    free(bn16);
}

/* Every element of a pack read back where pack_b put it: both layouts, edges, several k blocks. */
/* A random finite half between 2^-12 and 2^-4, either sign (a block's scale). */
static uint16_t
random_scale(unsigned *seed)
{
    *seed = *seed * 1103515245u + 12345u;
    return (uint16_t)(((*seed >> 16) & 0x8000) | (3 + (*seed >> 8) % 9) << 10 | ((*seed >> 4) & 0x3ff));
}

/*
 * rows x k weights of quant type qt as random blocks (every byte random,
 * the half-precision scales finite), into blocks; their float32 as the
 * reference dequantizer gives them, into w.
 */
static void
random_quant(enum quant_type qt, int rows, int k, unsigned seed, unsigned char *blocks, float *w)
{
    const size_t per = (size_t)quant_block_values(qt), bytes = quant_block_bytes(qt);
    const size_t count = (size_t)rows * (size_t)k / per;
    /* where each type keeps its halves (the blocks' d, and dmin where there is one) */
    static const struct {
        int at[2];
    } halves[QUANT_TYPES] = {
        [QUANT_Q4_0] = { { 0, -1 } }, [QUANT_Q4_1] = { { 0, 2 } },  [QUANT_Q5_0] = { { 0, -1 } },
        [QUANT_Q5_1] = { { 0, 2 } },  [QUANT_Q8_0] = { { 0, -1 } }, [QUANT_Q2_K] = { { 80, 82 } },
        [QUANT_Q3_K] = { { 108, -1 } }, [QUANT_Q4_K] = { { 0, 2 } }, [QUANT_Q5_K] = { { 0, 2 } },
        [QUANT_Q6_K] = { { 208, -1 } },
    };

    for (size_t i = 0; i < count * bytes; i++) {
        seed = seed * 1103515245u + 12345u;
        blocks[i] = (unsigned char)(seed >> 16);
    }
    for (size_t b = 0; qt == QUANT_MXFP4 && b < count; b++) {
        /* (each block's power of two, 2^(e - 128), over the range a panel's half holds) */
        seed = seed * 1103515245u + 12345u;
        blocks[b * bytes] = (unsigned char)(104 + (seed >> 16) % 40);
    }
    for (size_t b = 0; qt != QUANT_MXFP4 && b < count; b++)
        for (int h = 0; h < 2; h++)
            if (halves[qt].at[h] >= 0) {
                const uint16_t v = random_scale(&seed);
                blocks[b * bytes + (size_t)halves[qt].at[h]] = (unsigned char)v;
                blocks[b * bytes + (size_t)halves[qt].at[h] + 1] = (unsigned char)(v >> 8);
            }
    quant_dequantize(qt, blocks, count, w);
}

/* Whether the n floats at a and b are the same bits. */
static bool
same_bits(const float *a, const float *b, size_t n, size_t *at)
{
    for (size_t i = 0; i < n; i++)
        if (memcmp(&a[i], &b[i], sizeof *a) != 0) {
            *at = i;
            return false;
        }
    return true;
}

/*
 * Every ggml block format and half precision, packed in panels of 64 rows
 * (linalg_pack_q from quant_parts): each weight read back is the
 * dequantizer's float, and one row, a few rows and more than a block of
 * rows (MC) multiplied by it are the bits of multiplying the dequantized
 * matrix, on every instruction set, a last panel only partly filled.
 */
/*
 * MXFP4 goes into panels only when every block's power of two, 2^(e - 128),
 * is a half's (e from 104 to 143); a matrix with another stays as blocks.
 */
START_TEST(mxfp4_packs_only_what_a_half_holds)
{
    unsigned char blocks[3 * 17] = { 0 };

    blocks[0] = 104, blocks[17] = 143, blocks[34] = 120;
    ck_assert(quant_packable(QUANT_MXFP4, blocks, 3));
    blocks[17] = 144;
    ck_assert(!quant_packable(QUANT_MXFP4, blocks, 3));
    blocks[17] = 103;
    ck_assert(!quant_packable(QUANT_MXFP4, blocks, 3));
    ck_assert(quant_packable(QUANT_Q4_0, blocks, 2)); /* (the other types: always) */
}
END_TEST

START_TEST(quantized_packs_give_the_bits_of_widening_first)
{
    enum { N = 2 * 64 + 13, K = 512, M = 200 };
    const enum cpu_isa best = cpu_isa();
    unsigned char *blocks = malloc((size_t)N * K * 2);
    float *w = malloc((size_t)N * K * sizeof *w);
    float *a = malloc((size_t)M * K * sizeof *a);
    float *want = malloc((size_t)M * N * sizeof *want);
    float *got = malloc((size_t)M * N * sizeof *got);
    unsigned seed = 7;

    ck_assert(blocks != NULL && w != NULL && a != NULL && want != NULL && got != NULL);
    for (int i = 0; i < M * K; i++) {
        seed = seed * 1103515245u + 12345u;
        a[i] = (float)((int)(seed >> 8) % 20001 - 10000) / 4096.0f;
    }
    for (int t = 0; t <= QUANT_TYPES; t++) {
        const bool f16 = t == QUANT_TYPES; /* (the last round: half precision) */
        const enum linalg_qformat f = f16 ? LINALG_F16 : quant_panel_format((enum quant_type)t);
        struct linalg_packed pk;
        if (f16) {
            uint16_t *h = (uint16_t *)(void *)blocks;
            for (int i = 0; i < N * K; i++) {
                h[i] = random_scale(&seed);
                w[i] = tensor_f16_to_f32(h[i]);
            }
        } else {
            random_quant((enum quant_type)t, N, K, (unsigned)t + 1, blocks, w);
        }
        ck_assert_int_eq(linalg_pack_q(&pk, f, N, K), 0);
        if (f16) {
            for (int j0 = 0; j0 < N; j0 += 64)
                linalg_pack_q_put_f16(&pk, j0, N - j0 < 64 ? N - j0 : 64,
                                      (const uint16_t *)(void *)blocks + (size_t)j0 * K, K);
        } else {
            const size_t per = (size_t)quant_block_values((enum quant_type)t);
            struct linalg_qparts *parts = malloc(64 * sizeof *parts);
            ck_assert_ptr_nonnull(parts);
            for (int j0 = 0; j0 < N; j0 += 64)
                for (int s = 0; s < K / (int)per; s++) {
                    const int rows = N - j0 < 64 ? N - j0 : 64;
                    for (int r = 0; r < rows; r++)
                        quant_parts((enum quant_type)t,
                                    blocks + ((size_t)(j0 + r) * K / per + (size_t)s) *
                                                 quant_block_bytes((enum quant_type)t),
                                    &parts[r]);
                    linalg_pack_q_put_panel(&pk, j0, s, parts, rows);
                }
            free(parts);
        }
        for (int isa = CPU_PORTABLE; isa < CPU_ISAS; isa++) {
            if (!cpu_isa_has((enum cpu_isa)isa))
                continue;
            const int ms[3] = { 1, 5, M };
            ck_assert_int_eq(cpu_isa_limit((enum cpu_isa)isa), isa);
            for (int j = 0; j < N; j += 7)
                for (int p = 0; p < K; p += 3) {
                    const float v = linalg_packed_at(&pk, j, p);
                    ck_assert_msg(memcmp(&v, &w[(size_t)j * K + (size_t)p], sizeof v) == 0,
                                  "format %d, weight (%d, %d): %a, not %a", (int)f, j, p,
                                  (double)v, (double)w[(size_t)j * K + (size_t)p]);
                }
            for (int r = 0; r < 3; r++) {
                size_t at = 0;
                linalg_gemm_nt(ms[r], N, K, a, K, w, K, want, N);
                ck_assert_int_eq(linalg_gemm_packed_cols(ms[r], a, K, &pk, 0, N, got, N), 0);
                ck_assert_msg(same_bits(want, got, (size_t)ms[r] * N, &at),
                              "format %d, isa %d, %d rows: element %zu %a, not %a", (int)f, isa,
                              ms[r], at, (double)got[at], (double)want[at]);
                /* columns from the second panel on, as a thread's share is */
                ck_assert_int_eq(linalg_gemm_packed_cols(ms[r], a, K, &pk, 64, N - 64, got, N), 0);
                for (int i = 0; i < ms[r]; i++)
                    ck_assert_msg(same_bits(want + (size_t)i * N + 64, got + (size_t)i * N,
                                            (size_t)(N - 64), &at),
                                  "format %d, isa %d, %d rows from column 64: row %d", (int)f, isa,
                                  ms[r], i);
            }
        }
        cpu_isa_limit(best);
        linalg_packed_destroy(&pk);
    }
    free(blocks);
    free(w);
    free(a);
    free(want);
    free(got);
}
END_TEST

/*
 * One row against a half-precision matrix read in place (a GGUF's F16,
 * a written token): the bits of widening it and multiplying, on every
 * instruction set, rows and k that are not multiples of 16, subnormal
 * halves among them.
 */
START_TEST(a_row_against_half_precision_is_the_chain)
{
    enum { N = 37, K = 83 };
    const enum cpu_isa best = cpu_isa();
    uint16_t h[N * K];
    float w[N * K], x[K], want[N], got[N];
    unsigned seed = 11;
    size_t at = 0;

    for (int i = 0; i < N * K; i++) {
        h[i] = i % 29 == 0 ? (uint16_t)(i & 0x3ff) : random_scale(&seed); /* (some subnormal) */
        w[i] = tensor_f16_to_f32(h[i]);
    }
    for (int p = 0; p < K; p++)
        x[p] = (float)(p % 13) / 7.0f - 0.9f;
    linalg_gemm_nt(1, N, K, x, K, w, K, want, N);
    for (int isa = CPU_PORTABLE; isa < CPU_ISAS; isa++) {
        if (!cpu_isa_has((enum cpu_isa)isa))
            continue;
        ck_assert_int_eq(cpu_isa_limit((enum cpu_isa)isa), isa);
        linalg_row_f16(N, K, x, h, K, got);
        ck_assert_msg(same_bits(want, got, N, &at), "isa %d: row %zu %a, not %a", isa, at,
                      (double)got[at], (double)want[at]);
    }
    cpu_isa_limit(best);
}
END_TEST

START_TEST(a_pack_gives_every_element_back)
{
    const enum cpu_isa best = cpu_isa();
    static const int dims[][2] = { { 1, 1 }, { 70, 300 }, { 33, 513 }, { 5, 7 } };

    for (int isa = CPU_PORTABLE; isa < CPU_ISAS; isa++) { /* (each kernel's panel width) */
        if (!cpu_isa_has((enum cpu_isa)isa))
            continue;
        cpu_isa_limit((enum cpu_isa)isa);
        for (size_t d = 0; d < sizeof dims / sizeof dims[0]; d++) {
            const int n = dims[d][0], k = dims[d][1];
            float *b = malloc((size_t)n * (size_t)k * sizeof *b);
            uint16_t *b16 = malloc((size_t)n * (size_t)k * sizeof *b16);
            struct linalg_packed pk;
            ck_assert(b != NULL && b16 != NULL);
            fill(b, (size_t)n * (size_t)k, 9u + (uint32_t)d);
            /* (trans 2 and 3: the same in bfloat16, b then holding the values it stands for) */
            for (int trans = 0; trans < 4; trans++) {
                if (trans == 2)
                    to_bf16(b, b16, (size_t)n * (size_t)k);
                if (trans < 2)
                    ck_assert_int_eq(linalg_pack(&pk, n, k, b, trans ? k : n, trans), 0);
                else
                    ck_assert_int_eq(linalg_pack_bf16(&pk, n, k, b16, trans == 3 ? k : n, trans == 3), 0);
                for (int j = 0; j < n; j++)
                    for (int p = 0; p < k; p++) {
                        const float want = trans % 2 ? b[(size_t)j * k + p] : b[(size_t)p * n + j];
                        ck_assert_msg(linalg_packed_at(&pk, j, p) == want,
                                      "%s: %d x %d, trans %d, (%d, %d)", cpu_isa_name(), n, k,
                                      trans, j, p);
                    }
                linalg_packed_destroy(&pk);
            }
            free(b);
            free(b16);
        }
    }
    cpu_isa_limit(best);
}
END_TEST

START_TEST(products_are_the_fma_chain_on_every_isa)
{
    const enum cpu_isa best = cpu_isa();
    int isas = 0;

    for (int isa = CPU_PORTABLE; isa < CPU_ISAS; isa++) {
        if (!cpu_isa_has((enum cpu_isa)isa))
            continue;
        ck_assert_int_eq(cpu_isa_limit((enum cpu_isa)isa), isa);
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            check_shape(shapes[s][0], shapes[s][1], shapes[s][2]);
        isas++;
    }
    cpu_isa_limit(best);
    ck_assert_int_ge(isas, 1);
}
END_TEST

/*
 * One query row against a cache in place (a written token's attention):
 * linalg_row_nt / _nn and the every-head forms, heads sharing a key head
 * (group 2) or not, keys and head sizes off the 16s, on every instruction
 * set: each element the FMA chain in order of k.
 */
START_TEST(a_row_against_the_cache_is_the_chain)
{
    static const int cases[][3] = { /* keys, head size, group */
        { 1, 16, 1 }, { 15, 8, 2 }, { 16, 64, 1 }, { 33, 20, 2 }, { 100, 64, 3 }, { 129, 128, 1 },
        { 24, 24, 1 }, { 45, 40, 3 },
    };
    const enum cpu_isa best = cpu_isa();

    for (int isa = CPU_PORTABLE; isa < CPU_ISAS; isa++) {
        if (!cpu_isa_has((enum cpu_isa)isa))
            continue;
        ck_assert_int_eq(cpu_isa_limit((enum cpu_isa)isa), isa);
        for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
            const int n = cases[t][0], hd = cases[t][1], group = cases[t][2];
            const int heads = 6, kv = heads / group, ld = kv * hd + 3;
            const size_t ldc = (size_t)n + 5;
            const size_t room = (size_t)heads * (ldc + (size_t)hd); /* either output's */
            float *q = malloc((size_t)heads * hd * sizeof *q);
            float *keys = malloc((size_t)n * ld * sizeof *keys);
            float *w = malloc((size_t)heads * ldc * sizeof *w);
            float *got = malloc(room * sizeof *got);
            float *want = malloc(room * sizeof *want);
            ck_assert(q && keys && w && got && want);
            fill(q, (size_t)heads * hd, 11u + (uint32_t)n);
            fill(keys, (size_t)n * ld, 12u + (uint32_t)hd);
            fill(w, (size_t)heads * ldc, 13u);
            /* scores: heads 1 .. 5 at once, head h against key head h / group */
            for (size_t e = 0; e < room; e++)
                got[e] = want[e] = 7.0f;
            for (int h = 1; h < heads; h++)
                reference(1, n, hd, q + h * hd, hd, keys + (h / group) * hd, ld, 1,
                          want + h * ldc, (int)ldc);
            linalg_row_nt_heads(n, hd, 1, heads, group, q, (size_t)hd, keys, ld, got, ldc);
            ck_assert_msg(memcmp(want, got, room * sizeof *got) == 0,
                          "%s: row_nt_heads %d keys x %d, group %d", cpu_isa_name(), n, hd, group);
            linalg_row_nt(n, hd, q + 2 * hd, keys + (2 / group) * hd, ld, got + 2 * ldc);
            ck_assert(memcmp(want + 2 * ldc, got + 2 * ldc, (size_t)n * sizeof *got) == 0);
            /* contexts: the weights (heads x n) times the values (n x kv head size) */
            for (size_t e = 0; e < room; e++)
                got[e] = want[e] = 7.0f;
            for (int h = 0; h < heads - 1; h++)
                reference(1, hd, n, w + h * ldc, (int)ldc, keys + (h / group) * hd, ld, 0,
                          want + h * hd, hd);
            linalg_row_nn_heads(hd, n, 0, heads - 1, group, w, ldc, keys, ld, got, (size_t)hd);
            ck_assert_msg(memcmp(want, got, room * sizeof *got) == 0,
                          "%s: row_nn_heads %d keys x %d, group %d", cpu_isa_name(), n, hd, group);
            linalg_row_nn(hd, n, w + ldc, keys + (1 / group) * hd, ld, got + hd);
            ck_assert(memcmp(want + hd, got + hd, (size_t)hd * sizeof *got) == 0);
            free(q);
            free(keys);
            free(w);
            free(got);
            free(want);
        }
    }
    cpu_isa_limit(best);
}
END_TEST

/*
 * The thread pool (kernels/parallel.c): a product on 1 to 8 threads, from
 * the pool, from inside a pool's task (which starts threads of its own),
 * and from two threads at once (one of which finds the pool busy), is the
 * FMA chain every time.
 */
enum { PM = 40, PN = 300, PK = 200 };

struct pool_case {
    const float *a, *b;
    const float *want;
    int threads;
    int bad; /* elements that differ from want */
};

static void
pool_product(struct pool_case *pc)
{
    float *c = malloc((size_t)PM * PN * sizeof *c);

    ck_assert_ptr_nonnull(c);
    parallel_gemm(true, PM, PN, PK, pc->a, PK, pc->b, PK, c, PN, pc->threads);
    for (int i = 0; i < PM * PN; i++)
        pc->bad += memcmp(&c[i], &pc->want[i], sizeof c[i]) != 0;
    free(c);
}

static void
nested(void *ctx, int begin, int end)
{
    struct pool_case *cases = ctx;

    for (int i = begin; i < end; i++)
        pool_product(&cases[i]);
}

static void *
concurrent(void *arg)
{
    for (int r = 0; r < 20; r++)
        pool_product(arg);
    return NULL;
}

START_TEST(the_pool_gives_the_chain_from_any_caller)
{
    float *a = malloc((size_t)PM * PK * sizeof *a);
    float *b = malloc((size_t)PN * PK * sizeof *b);
    float *want = malloc((size_t)PM * PN * sizeof *want);
    struct pool_case cases[4];
    pthread_t tid;

    ck_assert(a != NULL && b != NULL && want != NULL);
    fill(a, (size_t)PM * PK, 11);
    fill(b, (size_t)PN * PK, 12);
    reference(PM, PN, PK, a, PK, b, PK, 1, want, PN);
    for (int t = 1; t <= 8; t++) {
        struct pool_case pc = { a, b, want, t, 0 };
        for (int r = 0; r < 3; r++) /* the pool's workers reused */
            pool_product(&pc);
        ck_assert_int_eq(pc.bad, 0);
    }
    /* Products inside a parallel_for's ranges: the pool is in use, so they start threads. */
    for (int i = 0; i < 4; i++)
        cases[i] = (struct pool_case){ a, b, want, 2 + i, 0 };
    parallel_for(4, 1L << 30, 4, nested, cases);
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(cases[i].bad, 0);
    /* Two callers at once. */
    cases[0] = (struct pool_case){ a, b, want, 3, 0 };
    cases[1] = (struct pool_case){ a, b, want, 4, 0 };
    ck_assert_int_eq(pthread_create(&tid, NULL, concurrent, &cases[0]), 0);
    concurrent(&cases[1]);
    ck_assert_int_eq(pthread_join(tid, NULL), 0);
    ck_assert_int_eq(cases[0].bad + cases[1].bad, 0);
    free(a);
    free(b);
    free(want);
}
END_TEST

/*
 * A bfloat16 pack made over B's own memory holds what linalg_pack_bf16
 * makes, on every kernel, and one that would not fit is refused with B
 * untouched.
 */
START_TEST(a_bf16_pack_in_place_is_the_same_pack)
{
    const enum cpu_isa best = cpu_isa();
    static const int dims[][2] = { { 32, 16 }, { 64, 300 }, { 96, 513 }, { 33, 20 } };

    for (int isa = CPU_PORTABLE; isa < CPU_ISAS; isa++) {
        if (!cpu_isa_has((enum cpu_isa)isa))
            continue;
        cpu_isa_limit((enum cpu_isa)isa);
        for (size_t d = 0; d < sizeof dims / sizeof dims[0]; d++) {
            const int n = dims[d][0], k = dims[d][1];
            const size_t count = (size_t)n * (size_t)k;
            float *b = malloc(count * sizeof *b);
            uint16_t *b16 = malloc(count * sizeof *b16);
            uint16_t *mine = malloc(count * sizeof *mine);
            uint16_t *scratch = malloc(count * sizeof *scratch);
            struct linalg_packed want, got;
            ck_assert(b != NULL && b16 != NULL && mine != NULL && scratch != NULL);
            fill(b, count, 30u + (uint32_t)d);
            to_bf16(b, b16, count);
            memcpy(mine, b16, count * sizeof *mine);
            ck_assert_int_eq(linalg_pack_bf16(&want, n, k, b16, k, 1), 0);
            if (linalg_pack_floats(n, k) != count) { /* (33 rows: padded, so no room) */
                ck_assert_int_eq(linalg_pack_bf16_in_place(&got, n, k, mine, scratch), -1);
                ck_assert(memcmp(mine, b16, count * sizeof *mine) == 0);
            } else {
                ck_assert_int_eq(linalg_pack_bf16_in_place(&got, n, k, mine, scratch), 0);
                ck_assert(got.in_place && got.data == mine);
                ck_assert_msg(memcmp(got.data, want.data, linalg_packed_bytes(&want)) == 0,
                              "%s: %d x %d", cpu_isa_name(), n, k);
                linalg_packed_destroy(&got); /* (frees nothing: mine is still ours) */
            }
            linalg_packed_destroy(&want);
            free(b);
            free(b16);
            free(mine);
            free(scratch);
        }
    }
    cpu_isa_limit(best);
}
END_TEST

/* A bfloat16 product split among threads, both layouts: the chain over the widened values. */
START_TEST(a_bf16_product_splits_among_threads)
{
    float *a = malloc((size_t)PM * PK * sizeof *a);
    float *b = malloc((size_t)PN * PK * sizeof *b);
    uint16_t *b16 = malloc((size_t)PN * PK * sizeof *b16);
    float *want = malloc((size_t)PM * PN * sizeof *want);
    float *got = malloc((size_t)PM * PN * sizeof *got);

    ck_assert(a != NULL && b != NULL && b16 != NULL && want != NULL && got != NULL);
    fill(a, (size_t)PM * PK, 21);
    fill(b, (size_t)PN * PK, 22);
    to_bf16(b, b16, (size_t)PN * PK);
    for (int nt = 0; nt < 2; nt++) {
        reference(PM, PN, PK, a, PK, b, nt ? PK : PN, nt, want, PN);
        for (int t = 1; t <= 4; t++) {
            memset(got, 0, (size_t)PM * PN * sizeof *got);
            parallel_gemm_bf16(nt, PM, PN, PK, a, PK, b16, nt ? PK : PN, got, PN, t);
            ck_assert_msg(memcmp(got, want, (size_t)PM * PN * sizeof *got) == 0,
                          "nt %d, %d threads", nt, t);
        }
    }
    free(a);
    free(b);
    free(b16);
    free(want);
    free(got);
}
END_TEST

START_TEST(an_empty_pack_falls_back)
{
    struct linalg_packed pk = { 0 };
    float a[4] = { 1, 2, 3, 4 };
    float c[4] = { 9, 9, 9, 9 };

    ck_assert_int_eq(linalg_gemm_packed(2, a, 2, &pk, c, 2), -1);
    ck_assert(c[0] == 9.0f && c[3] == 9.0f);
    linalg_packed_destroy(&pk);
}
END_TEST

/* Two threads multiplying at once each pack into their own workspace. */
static void *
multiply_many(void *arg)
{
    const int m = 150, n = 70, k = 300;
    float *a = malloc((size_t)m * k * sizeof(float));
    float *b = malloc((size_t)n * k * sizeof(float));
    float *want = malloc((size_t)m * n * sizeof(float));
    float *got = malloc((size_t)m * n * sizeof(float));
    intptr_t bad = 0;

    (void)arg;
    fill(a, (size_t)m * k, 11);
    fill(b, (size_t)n * k, 12);
    reference(m, n, k, a, k, b, k, 1, want, n);
    for (int r = 0; r < 30; r++) {
        linalg_gemm_nt(m, n, k, a, k, b, k, got, n);
        bad += memcmp(want, got, (size_t)m * n * sizeof(float)) != 0;
    }
    free(a);
    free(b);
    free(want);
    free(got);
    return (void *)bad;
}

START_TEST(threads_have_their_own_workspace)
{
    pthread_t t[2];
    void *bad[2];
    struct attn_workspace *mine = workspace_thread();

    ck_assert_ptr_nonnull(mine);
    ck_assert_ptr_eq(workspace_thread(), mine);
    for (int i = 0; i < 2; i++)
        ck_assert_int_eq(pthread_create(&t[i], NULL, multiply_many, NULL), 0);
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(pthread_join(t[i], &bad[i]), 0);
        ck_assert_ptr_null(bad[i]);
    }
}
END_TEST

START_TEST(the_spare_arena_is_reused_when_it_fits)
{
    struct attn_workspace ws = { 0 };
    size_t got;
    void *x = workspace_arena_get(&ws, 1000, &got);
    void *y;

    ck_assert_ptr_nonnull(x);
    ck_assert_uint_eq(got, 1000);
    ck_assert_uint_eq((uintptr_t)x % 64, 0);
    workspace_arena_put(&ws, x, got);
    ck_assert_ptr_eq(ws.spare, x);
    y = workspace_arena_get(&ws, 800, &got); /* fits: the same memory, its full size */
    ck_assert_ptr_eq(y, x);
    ck_assert_uint_eq(got, 1000);
    ck_assert_ptr_null(ws.spare);
    workspace_arena_put(&ws, y, got);
    y = workspace_arena_get(&ws, 4000, &got); /* too small: a new one */
    ck_assert_ptr_ne(y, x);
    workspace_arena_put(&ws, y, got); /* the larger one is kept */
    ck_assert_ptr_eq(ws.spare, y);
    ck_assert_ptr_nonnull(workspace_scratch(&ws, 100));
    ck_assert_uint_ge(ws.scratch_floats, 100);
    workspace_release(&ws);
    ck_assert_ptr_null(ws.spare);
    ck_assert_ptr_null(ws.scratch);
}
END_TEST

static Suite *
linalg_suite(void)
{
    Suite *s = suite_create("linalg");
    TCase *tc = tcase_create("linalg");

    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, products_are_the_fma_chain_on_every_isa);
    tcase_add_test(tc, a_row_against_the_cache_is_the_chain);
    tcase_add_test(tc, a_pack_gives_every_element_back);
    tcase_add_test(tc, quantized_packs_give_the_bits_of_widening_first);
    tcase_add_test(tc, mxfp4_packs_only_what_a_half_holds);
    tcase_add_test(tc, a_row_against_half_precision_is_the_chain);
    tcase_add_test(tc, an_empty_pack_falls_back);
    tcase_add_test(tc, the_pool_gives_the_chain_from_any_caller);
    tcase_add_test(tc, a_bf16_product_splits_among_threads);
    tcase_add_test(tc, a_bf16_pack_in_place_is_the_same_pack);
    tcase_add_test(tc, threads_have_their_own_workspace);
    tcase_add_test(tc, the_spare_arena_is_reused_when_it_fits);
    suite_add_tcase(s, tc);
    return s;
}

TEST_MAIN(linalg_suite)
