/*
 * linalg.c: straightforward float32 matrix products (see linalg.h).
 *
 * Sums are accumulated in float, as PyTorch does on a CPU; the order of the
 * additions differs from PyTorch's BLAS, which moves results by a few units
 * in the last place, far below the 1e-5 attnscope promises.
 */
#include "config.h"

#include <stddef.h>

#include "attnscope/linalg.h"

void
linalg_gemm_nt(int m, int n, int k, const float *a, int lda,
               const float *b, int ldb, float *c, int ldc)
{
    for (int i = 0; i < m; i++) {
        const float *ai = a + (size_t)i * (size_t)lda;
        for (int j = 0; j < n; j++) {
            const float *bj = b + (size_t)j * (size_t)ldb;
            float sum = 0.0f;
            for (int p = 0; p < k; p++)
                sum += ai[p] * bj[p];
            c[(size_t)i * (size_t)ldc + (size_t)j] = sum;
        }
    }
}

void
linalg_gemm_nn(int m, int n, int k, const float *a, int lda,
               const float *b, int ldb, float *c, int ldc)
{
    for (int i = 0; i < m; i++) {
        float *ci = c + (size_t)i * (size_t)ldc;
        const float *ai = a + (size_t)i * (size_t)lda;
        for (int j = 0; j < n; j++)
            ci[j] = 0.0f;
        for (int p = 0; p < k; p++) {
            const float aip = ai[p];
            const float *bp = b + (size_t)p * (size_t)ldb;
            for (int j = 0; j < n; j++)
                ci[j] += aip * bp[j];
        }
    }
}
