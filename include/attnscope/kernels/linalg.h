/*
 * linalg.h: the matrix products of the attention pipeline.
 *
 * All matrices are row-major float32 with an explicit leading dimension (the
 * distance in elements between two rows), so that one head's columns of Q, K
 * or V can be used in place without copying; the right-hand matrix may also
 * be bfloat16 (the _bf16 functions), widened exactly as it is read.  Each
 * element of c is the sum of its products taken in order of k with fused
 * multiply-adds, on every CPU.
 */
#ifndef ATTNSCOPE_LINALG_H
#define ATTNSCOPE_LINALG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * c (m, n) = a (m, k) . b^T, where b is (n, k).
 * Used for x W^T (nn.Linear) and for Q K^T.
 */
void linalg_gemm_nt(int m, int n, int k,
                    const float *a, int lda,
                    const float *b, int ldb,
                    float *c, int ldc);

/*
 * c (m, n) = a (m, k) . b, where b is (k, n).
 * Used for x W (SelfAttention_v1) and for weights V.
 */
void linalg_gemm_nn(int m, int n, int k,
                    const float *a, int lda,
                    const float *b, int ldb,
                    float *c, int ldc);

/*
 * One row of each, in place, for a single query against a cache of keys
 * and values (a written token's attention): nothing packed, every row of b
 * read once.  The same bits as linalg_gemm_nt and linalg_gemm_nn with
 * m = 1: each c[j] the products in order of k with fused multiply-adds.
 *   linalg_row_nt: c (n) = a (k) . b^T, b (n, k) rows ldb apart;
 *   linalg_row_nn: c (n) = a (k) . b, b (k, n) rows ldb apart.
 */
void linalg_row_nt(int n, int k, const float *a, const float *b, int ldb, float *c);
void linalg_row_nn(int n, int k, const float *a, const float *b, int ldb, float *c);

/*
 * c (n) = a (k) . b^T for a half-precision b (n, k), rows ldb apart, read
 * in place (a GGUF's F16 matrix, a written token's product): each element
 * the chain of FMAs in order of k on b's exact floats, the bits of
 * widening b first and calling linalg_gemm_nt with m = 1.
 */
void linalg_row_f16(int n, int k, const float *a, const uint16_t *b, size_t ldb, float *c);

/*
 * The same for one query row in heads h0 .. h1 at once (a written token's
 * attention in every head), head h reading b's columns of its group, (h /
 * group) k onwards for the keys, (h / group) n onwards for the values:
 *   linalg_row_nt_heads: c[h ldc + j] = a[h lda ..] . b[j ldb + (h / group) k ..], j < n;
 *   linalg_row_nn_heads: c[h ldc + j] = sum over p < k of a[h lda + p] b[p ldb + (h / group) n + j].
 * b is read once, in the order it lies; each element the chain of
 * linalg_row_nt and linalg_row_nn, so the same bits.
 */
void linalg_row_nt_heads(int n, int k, int h0, int h1, int group, const float *a, size_t lda,
                         const float *b, int ldb, float *c, size_t ldc);
void linalg_row_nn_heads(int n, int k, int h0, int h1, int group, const float *a, size_t lda,
                         const float *b, int ldb, float *c, size_t ldc);

/*
 * c (m, n) = a (m, k) . B for a bfloat16 B, (n, k) when trans (b[j * ldb +
 * p]), else (k, n): the bits of converting B to float32 and then calling
 * linalg_gemm_nt or linalg_gemm_nn.
 */
void linalg_gemm_bf16(int trans, int m, int n, int k, const float *a, int lda, const uint16_t *b,
                      int ldb, float *c, int ldc);

/*
 * Weights kept in ggml's block formats (a GGUF file's) or in half
 * precision, packed for the products: LINALG_QROWS rows of W (columns of
 * the product) at a time, their blocks interleaved so that a vector of
 * lanes walks that many rows at once in order of k (what llama.cpp's
 * repack does for its own kernels).  Every weight is widened in registers
 * to exactly the float32 its format's dequantization gives (files/quants:
 * scale x level, plus or minus a minimum, one rounding each as the
 * reference has them), then multiplied in the same chain of FMAs as every
 * product here: the bits of widening the matrix first.
 */
enum linalg_qformat {
    LINALG_QNONE,
    LINALG_Q4_0, LINALG_Q4_1, LINALG_Q5_0, LINALG_Q5_1, LINALG_Q8_0,
    LINALG_Q2_K, LINALG_Q3_K, LINALG_Q4_K, LINALG_Q5_K, LINALG_Q6_K,
    LINALG_F16,
    LINALG_MXFP4, /* Q4_0's layout, its 4-bit codes e2m1 values (doubled) by table, d a power of two */
    LINALG_QFORMATS
};
#define LINALG_QROWS 64

/*
 * One row's super-group of a quantized format (32 values, 256 for the
 * K-quants), as files/quants decodes a block: the half-precision scale
 * and minimum (d, dmin: IEEE half bits; a _1 format's minimum is dmin),
 * each group's integer scale and minimum (the K-quants'), and every
 * value's level as the block stores it, before any offset: Q8_0's signed
 * byte as its bits; 0-15 (Q4), 0-31 (Q5), 0-63 (Q6_K), 0-3 (Q2_K), 0-7
 * (Q3_K: the two low bits and 4 times the high one).
 */
struct linalg_qparts {
    uint16_t d, dmin;
    int16_t sc[16], m[16];
    uint8_t level[256];
};

/*
 * A right-hand matrix packed once for many products (the weights of a
 * projection): the same products, without repacking B on every call.
 */
struct linalg_packed {
    int n;       /* columns of the product */
    int k;       /* the shared dimension */
    int nr;      /* the kernel's panel width it was packed for (LINALG_QROWS for q) */
    bool bf16;   /* data holds bfloat16 patterns (widened as the kernels load them), else floats */
    bool in_place; /* data is the memory B was in (linalg_pack_bf16_in_place): not freed */
    enum linalg_qformat q; /* or data holds panels of that format (linalg_pack_q) */
    /*
     * Its products in llama.cpp's arithmetic (the opt-in --arith int8):
     * each row of activations rounded to 8-bit blocks, levels multiplied in
     * integers (linalg_q_int8_rows).  Only for a format linalg_q_int8_reads;
     * otherwise, and by default, the exact arithmetic.
     */
    bool int8;
    void *data;
};

/*
 * A row of k activations rounded to 8-bit blocks as ggml rounds them (the
 * int8 arithmetic's): Q8_K's blocks of 256 for the K-quants, Q8_0's of 32
 * for Q4_0 and Q8_0.  The values, each block's float scale, the sum of
 * each 16 values, and the values in pairs: values 2i and 2i + 1 as two
 * 16-bit halves for Q8_0 (vpmaddwd's), as two bytes side by side, twice,
 * for the others (vpmaddubsw's).
 */
struct linalg_q8 {
    int8_t *q;      /* (k) */
    float *d;       /* (k / block) */
    int32_t *sums;  /* (k / 16) */
    int32_t *pairs; /* (k / 2) */
};
/* The bytes linalg_q8_quantize needs for a row of k (64-byte aligned when mem is). */
size_t linalg_q8_bytes(int k);
/* x (k, a multiple of f's block) rounded for format f's weights, into mem (linalg_q8_bytes). */
void linalg_q8_quantize(enum linalg_qformat f, const float *x, int k, void *mem, struct linalg_q8 *r);

/* Whether the opt-in int8 arithmetic reads format f (Q4_0, Q8_0, Q4_K, Q6_K). */
bool linalg_q_int8_reads(enum linalg_qformat f);
/*
 * c (m, cols) = a . columns [j0, j0 + cols) of the pack in the int8
 * arithmetic; each row's outputs a function of that row alone.  0, or -1
 * (c untouched) for a format it does not read or no memory.
 */
int linalg_q_int8_rows(int m, const float *a, int lda, const struct linalg_packed *pk, int j0,
                       int cols, float *c, int ldc);

/* The values a super-group of format f holds along k (32, 256 for the K-quants). */
int linalg_qformat_values(enum linalg_qformat f);
/* The bytes one panel of LINALG_QROWS rows of k values of f takes (k a multiple of the above). */
size_t linalg_qpanel_bytes(enum linalg_qformat f, int k);

/*
 * An empty pack of format f for an (n, k) matrix stored (n, k), to be
 * filled: every super-group s of each panel's rows [j0, j0 + rows) (j0 a
 * multiple of LINALG_QROWS; rows all of the panel's that are in the
 * matrix) by linalg_pack_q_put_panel, parts[r] row j0 + r's (each byte
 * written once); a half-precision pack's by linalg_pack_q_put_f16, those
 * rows' whole bits (row r at halves + r ld).  Rows past n hold zeros, which widen to 0.
 * Returns 0, or -1 when out of memory or k is not whole super-groups (pk
 * then empty).
 */
int linalg_pack_q(struct linalg_packed *pk, enum linalg_qformat f, int n, int k);
void linalg_pack_q_put_panel(struct linalg_packed *pk, int j0, int s,
                             const struct linalg_qparts *parts, int rows);
void linalg_pack_q_put_f16(struct linalg_packed *pk, int j0, int rows, const uint16_t *halves,
                           size_t ld);

/*
 * What made weight (j, p) of a quantized pack, as files/quants'
 * quant_explain says it from a block: the scale it multiplies, the
 * minimum (returning whether the format has one: weight = scale x level -
 * min for the K-quants, + min for Q4_1 and Q5_1) and the integer level
 * (its offset applied).  Half precision: the weight itself as the scale,
 * level 1.
 */
bool linalg_q_explain(const struct linalg_packed *pk, int j, int p, float *scale, float *min,
                      int *level);

/*
 * Packs B for c = a . B: trans means B is stored (n, k), b[j * ldb + p], as
 * nn.Linear's weight is used in x W^T; otherwise (k, n).  Returns 0, or -1
 * when out of memory (pk is then empty).
 */
int linalg_pack(struct linalg_packed *pk, int n, int k, const float *b, int ldb, int trans);

/*
 * The same for a bfloat16 B, kept bfloat16 in the pack (half the memory):
 * the kernels widen each element exactly (a shift by 16), so its products
 * have the bits of the products of B converted to float32 first.
 */
int linalg_pack_bf16(struct linalg_packed *pk, int n, int k, const uint16_t *b, int ldb, int trans);

/*
 * The same pack made in the memory of B itself, a bfloat16 (n, k) matrix
 * stored contiguously (trans, ldb = k), when the pack is no larger (n a
 * multiple of the kernel's panel width: every real model's sizes): B is
 * copied to scratch (n * k patterns) and packed back over itself, so the
 * pack costs no memory of its own.  B is then gone (read it through
 * linalg_packed_at).  Returns 0, or -1 (B untouched) when it does not fit.
 */
int linalg_pack_bf16_in_place(struct linalg_packed *pk, int n, int k, uint16_t *b,
                              uint16_t *scratch);

/* The elements linalg_pack and linalg_pack_bf16 allocate for n and k with this processor's kernel. */
size_t linalg_pack_floats(int n, int k);
/* The bytes pk holds (0 when empty). */
size_t linalg_packed_bytes(const struct linalg_packed *pk);
void linalg_packed_destroy(struct linalg_packed *pk);

/* B's element (j, p) (column j of the product, p of the shared dimension), read from its pack. */
float linalg_packed_at(const struct linalg_packed *pk, int j, int p);

/*
 * c (m, pk->n) = a (m, pk->k) . B, the same bits as the unpacked products.
 * Returns 0, or -1 (c untouched) when pk is empty or memory runs out: the
 * caller then uses linalg_gemm_nt or linalg_gemm_nn.
 */
int linalg_gemm_packed(int m, const float *a, int lda, const struct linalg_packed *pk, float *c,
                       int ldc);

/*
 * Columns [j0, j0 + cols) of that product into c (c's column 0 is the
 * product's j0), the same bits; j0 a multiple of pk->nr (a thread's share,
 * a block of the vocabulary).  Returns 0, or -1 when pk is empty, j0 or
 * cols do not fit it, or memory runs out (c untouched).
 */
int linalg_gemm_packed_cols(int m, const float *a, int lda, const struct linalg_packed *pk, int j0,
                            int cols, float *c, int ldc);

/*
 * The same columns one element at a time from the pack (any kernel's, no
 * memory needed), the same bits: for a B whose unpacked copy was given
 * back, when linalg_gemm_packed_cols cannot serve.
 */
void linalg_gemm_packed_plain(int m, const float *a, int lda, const struct linalg_packed *pk, int j0,
                              int cols, float *c, int ldc);

#endif
