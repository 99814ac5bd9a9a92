/*
 * linear.h: a linear map as a file keeps it, and the one seam over its
 * storage (storage/linear.c): float32, bfloat16 patterns, ggml's quantized
 * blocks or the pack made of them, multiplied, read a weight at a time and
 * searched for what is not a number, the same bits whichever serves.  The
 * decoder's matrices (decoder_weights.h) are these; nothing above this
 * folder branches on w, w16 or wq.
 */
#ifndef ATTNSCOPE_STORAGE_LINEAR_H
#define ATTNSCOPE_STORAGE_LINEAR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attnscope/kernels/linalg.h"

/*
 * y = x W + b with W as the file stores it: (in, out) rows of ld floats, or
 * (out, in) when out_in; b NULL: no bias (the book's qkv_bias=False).
 */
struct decoder_linear {
    const float *w;
    /*
     * Or the weights as bfloat16 patterns (a bfloat16 model's, kept as they
     * ship: half the memory), in w's layout, w then NULL; the products widen
     * them exactly, the same bits as converting them first.
     */
    const uint16_t *w16;
    /*
     * Or ggml's quantized blocks (a GGUF file's, kept as they ship: about
     * its file's size), stored (out, in) with ld = in, wq_type their dtype
     * (tensor.h); the products widen a slice of rows at a time, the same
     * bits as widening them all first.  w and w16 then NULL.
     */
    const unsigned char *wq;
    int wq_type;
    const float *b;
    int in, out;
    int ld;
    bool out_in;
    /*
     * w packed once in the products' own layout (decoder_pack), or empty:
     * the products then pack w on every call.  The same bits either way.
     */
    struct linalg_packed packed;
    /*
     * Its products in the opt-in int8 arithmetic (--arith int8,
     * decoder_use_int8): llama.cpp's, not the exact one; from its pack or
     * its blocks alike (the same bits).
     */
    bool int8;
};

/*
 * A linear (linear.c, the one seam over its storage): y (n, out) = x (n,
 * in) W + b, W as the file stores it (its pack, float32, bfloat16 or
 * quantized blocks: the same bits whichever serves).
 */
void decoder_linear_apply(const struct decoder_linear *l, const float *x, int n, float *y,
                          int threads);
/* Whether the int8 arithmetic reads blocks of dtype type (tensor.h's Q4_0, Q8_0, Q4_K, Q6_K). */
bool decoder_linear_int8_reads(int type);

/* A weight's (or else a bias's, *row -1) first value that is not finite; whether there is one. */
bool decoder_linear_nonfinite(const struct decoder_linear *l, int *row, int *col);
/* The dtype's name of l's quantized blocks ("Q4_K"), or NULL when l is not kept quantized. */
const char *decoder_linear_blocks(const struct decoder_linear *l);
/*
 * The bytes of l's rows (stored out by in) as it keeps them, and one row's
 * size: for putting rows back in another order where they lie.
 */
unsigned char *decoder_linear_rows(const struct decoder_linear *l, size_t *row_bytes);
/*
 * Weight (in, out) of l, whatever its storage (float32, bfloat16, quantized
 * blocks, or its pack once the copy is released): the seam callers read a
 * weight through, never l->w, w16 or wq themselves.
 */
float decoder_linear_at(const struct decoder_linear *l, int in, int out);
/*
 * Whether l's weights are quantized blocks (in the file's layout or packed);
 * then *type is their dtype (tensor.h) and the block that holds weight (0,
 * out) says how it is made: *scale times *level, then minus (or plus, for
 * the _1 types) *min when *has_min.  The same numbers either way.
 */
bool decoder_linear_block(const struct decoder_linear *l, int out, int *type, float *scale,
                          float *min, int *level, bool *has_min);

/* Rows r0 .. r0 + count - 1 of quantized (., in) blocks q of dtype type, widened into out. */
void decoder_quant_rows(const unsigned char *q, int type, int in, int r0, int count, float *out);
/* The bytes of one row of in values of quantized dtype type. */
size_t decoder_quant_row_bytes(int type, int in);

/*
 * y (n, out) = x (n, in) . W^T for W (out, in) quantized blocks: a slice of
 * W's rows widened at a time (on the threads) and multiplied as float32;
 * y's leading dimension ldy.  The same bits as widening W first.  -1 when
 * memory runs out.
 */
int decoder_gemm_quant(const unsigned char *q, int type, int n, int out, int in, const float *x,
                       float *y, int ldy, int threads);
/*
 * The same product in the int8 arithmetic (decoder_use_int8) for a type it
 * reads: a slice of W's rows put into panels at a time, the same bits as
 * from W's pack.  -1 for another type or when memory runs out.
 */
int decoder_gemm_quant_int8(const unsigned char *q, int type, int n, int out, int in,
                            const float *x, float *y, int ldy, int threads);

#endif
