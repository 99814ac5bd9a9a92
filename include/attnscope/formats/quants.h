/*
 * quants.h: ggml's quantized block formats (the GGUF files of llama.cpp,
 * Ollama and LM Studio) turned into float32, exactly as ggml's reference
 * dequantization (ggml-quants.c's dequantize_row_*) and gguf-py's make
 * them: each block's half-precision scale (and minimum) widened, then the
 * same products and differences in the same order, one float32 rounding
 * each (the build contracts nothing into fused multiply-adds).
 *
 * A block holds QUANT_BLOCK values (32, or 256 for the K-quants) in a fixed
 * number of bytes (the layouts of ggml-common.h):
 *   Q4_0  d, 16 bytes of 4-bit q        x = (q - 8) d
 *   Q4_1  d, m, 16 bytes of 4-bit q     x = q d + m
 *   Q5_0  d, 4 bytes of 5th bits, q     x = (q - 16) d
 *   Q5_1  d, m, 5th bits, q             x = q d + m
 *   Q8_0  d, 32 signed bytes            x = q d
 *   Q2_K .. Q6_K: 256 values in sub-blocks of 16 or 32, each with its own
 *   6- or 4-bit (or 8-bit, Q6_K) scale (and minimum) of the block's d (and
 *   dmin).
 *   MXFP4 e (a power of two: 2^(e - 128)), 16 bytes of 4-bit e2m1 codes
 *         x = kvalue[q] 2^(e - 128), kvalue the codes' values doubled
 *         (0 1 2 3 4 6 8 12 and their negatives); value j in byte j's low
 *         nibble, value j + 16 in its high one.  Packed as Q4_0's layout
 *         with its own table when every power of two is a half's
 *         (quant_packable), else widened a slice at a time.
 */
#ifndef ATTNSCOPE_QUANTS_H
#define ATTNSCOPE_QUANTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attnscope/kernels/linalg.h"

enum quant_type {
    QUANT_Q4_0,
    QUANT_Q4_1,
    QUANT_Q5_0,
    QUANT_Q5_1,
    QUANT_Q8_0,
    QUANT_Q2_K,
    QUANT_Q3_K,
    QUANT_Q4_K,
    QUANT_Q5_K,
    QUANT_Q6_K,
    QUANT_MXFP4,
    QUANT_TYPES
};

/* The values a block holds, its bytes, and the type's name ("Q4_K"). */
int quant_block_values(enum quant_type q);
size_t quant_block_bytes(enum quant_type q);
const char *quant_name(enum quant_type q);

/* 2^(e - 128): MXFP4's E8M0 scale e halved, as ggml widens it. */
float quant_e8m0_half(uint8_t e);

/* blocks blocks of type q at src into out (blocks x quant_block_values floats). */
void quant_dequantize(enum quant_type q, const unsigned char *src, size_t blocks, float *out);

/*
 * What made value k (0 <= k < quant_block_values) of the block at src, as
 * the cell panel says it: the scale it multiplies (its sub-block's, for a
 * K-quant: the block's d times the sub-block's own), the integer, and the
 * minimum, returning whether the type has one.  value = scale x level -
 * min (Q2_K, Q4_K, Q5_K), scale x level + min (Q4_1, Q5_1), scale x level
 * (the rest), each as the dequantizer rounds it.
 */
bool quant_explain(enum quant_type q, const unsigned char *src, int k, float *scale, float *min,
                   int *level);

/*
 * The panel format (kernels/linalg.h) a block type is multiplied in, and
 * one block's parts as that format takes them (linalg_pack_q_put): the
 * fields the dequantizer reads, each value's level in the block's order.
 * The scales the formats make from them are quant_dequantize's.
 */
struct linalg_qparts;
enum linalg_qformat quant_panel_format(enum quant_type q);
/*
 * Whether count blocks of q at blocks go into q's panels exactly: always,
 * but MXFP4's, whose panels keep each block's power of two as a half
 * (2^-24 .. 2^15); a matrix with another stays as blocks, widened as the
 * products read it.
 */
bool quant_packable(enum quant_type q, const unsigned char *blocks, size_t count);
/* A K-quant's 6-bit scale and minimum of sub-block j from its 12 packed bytes (Q4_K, Q5_K). */
void quant_scale_min(int j, const unsigned char *q, int *scale, int *min);
void quant_parts(enum quant_type q, const unsigned char *src, struct linalg_qparts *parts);
/*
 * rows x cols values of type q, stored as rows of blocks at blocks, packed
 * into pk (linalg_pack_q's panels, on up to threads threads); 0, or -1
 * when out of memory (pk then empty).
 */
int quant_pack(struct linalg_packed *pk, enum quant_type q, const unsigned char *blocks, int rows,
               int cols, int threads);
/* The same into an empty pack of q's format (linalg_pack_q), its panels [panel0, panel0 + panels)
   only (blocks: row 0's): a matrix packed a slice at a time, each slice's blocks given back. */
void quant_pack_panels(struct linalg_packed *pk, enum quant_type q, const unsigned char *blocks,
                       int panel0, int panels, int threads);

/*
 * The opt-in int8 arithmetic (kernels/linalg.h's linalg_q8) on blocks as
 * they lie (quants_int8.c): whether type q is read so (Q4_K, Q6_K; the
 * others through their panels); y[r] = row r of rows x k values at blocks
 * (row_bytes apart) times the rounded row x; and y (n, out) = x (n, in,
 * rows ldx apart) times W^T for W (out, in) of q's blocks, on up to
 * threads threads (0, or -1 for another type or no memory).  The bits of
 * the panels' int8 kernels for the same rows.
 */
struct linalg_q8;
bool quant_int8_by_rows(enum quant_type q);
void quant_int8_rows(enum quant_type q, const unsigned char *blocks, size_t row_bytes, int rows, int k,
                     const struct linalg_q8 *x, float *y);
int quant_int8_product(enum quant_type q, const unsigned char *w, int out, int in, int n,
                       const float *x, int ldx, float *y, int ldy, int threads);

#endif
