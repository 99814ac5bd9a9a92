/*
 * parallel.h: matrix products spread over threads, with the same bits.
 *
 * Each element of a product is one chain of fused multiply-adds in order of
 * k (linalg.h), whichever thread computes it, so splitting the columns of C
 * among threads changes nothing but the time: a forward pass gives the same
 * bits with 1 thread or 64.  Each thread packs only its own columns of B,
 * in its own workspace.
 */
#ifndef ATTNSCOPE_PARALLEL_H
#define ATTNSCOPE_PARALLEL_H

#include <stdbool.h>

#include "attnscope/kernels/linalg.h"

#define PARALLEL_MAX_THREADS 64

/*
 * The threads to use: parallel_set_threads's, else $ATTNSCOPE_THREADS when it
 * is 1 to 64, else the online cores.
 */
int parallel_threads(void);

/* Uses n threads from now on whatever $ATTNSCOPE_THREADS says (--threads); 0: back to it. */
void parallel_set_threads(int n);

/*
 * c (m, n) = a (m, k) . b^T (b stored (n, k)) when nt, else a . b (b stored
 * (k, n)), on up to threads threads (fewer for small products).
 */
void parallel_gemm(bool nt, int m, int n, int k, const float *a, int lda, const float *b, int ldb,
                   float *c, int ldc, int threads);

/* The same for a bfloat16 b (linalg_gemm_bf16). */
void parallel_gemm_bf16(bool nt, int m, int n, int k, const float *a, int lda, const uint16_t *b,
                        int ldb, float *c, int ldc, int threads);

/*
 * Columns [j0, j0 + cols) of c (m, .) = a . B for a B packed once
 * (linalg_gemm_packed_cols), split among up to threads threads in whole
 * panels; c is where column j0 goes.
 * Returns 0, or -1 when pk cannot serve (empty, another kernel's panels,
 * a range outside it) or memory ran out: the caller uses parallel_gemm.
 */
int parallel_gemm_packed(int m, const float *a, int lda, const struct linalg_packed *pk, int j0,
                         int cols, float *c, int ldc, int threads);

/*
 * Calls fn(ctx, begin, end) on contiguous ranges covering [0, count), on up
 * to threads threads (fewer when count * work_per_item, in multiply-adds,
 * is small).  Each item must be computed the same way whichever range it
 * is in, as the heads of a layer or the rows of a layer norm are: then any
 * thread count gives the same bits.
 */
void parallel_for(int count, long work_per_item, int threads,
                  void (*fn)(void *ctx, int begin, int end), void *ctx);

#endif
