/*
 * linalg.h: the matrix products of the attention pipeline.
 *
 * All matrices are row-major float32 with an explicit leading dimension (the
 * distance in floats between two rows), so that one head's columns of Q, K or
 * V can be used in place without copying.
 */
#ifndef ATTNSCOPE_LINALG_H
#define ATTNSCOPE_LINALG_H

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

#endif
