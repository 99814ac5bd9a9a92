/*
 * rowops.h: one row of attention after the scores, in one pass.
 *
 * For a row of scores this writes the masked row (-inf from column `visible`
 * on), the scaled row (masked / divisor) and the softmax weights, the stages
 * attnscope keeps, touching each element as few times as it can.  The
 * exponential is computed the same way by every kernel (Cody-Waite range
 * reduction and the degree-5 polynomial of the Cephes library's expf, by
 * S. L. Moshier), and the row's sum is taken in a fixed order (16 running
 * partial sums, then a fixed tree), so every CPU gets the same bits.
 */
#ifndef ATTNSCOPE_ROWOPS_H
#define ATTNSCOPE_ROWOPS_H

#include <stddef.h>

/*
 * The exponential every kernel computes, for x <= 0 (softmax's shifted
 * scores): within 2 units in the last place of exp(x); 0 below -87.33
 * (where exp(x) is below the smallest normal float); NaN stays NaN.
 */
float rowops_exp(float x);

/*
 * scores, masked, scaled and weights are rows of n floats.  The mask lets
 * the row see columns first to end - 1; the others are hidden (-inf, then
 * weight 0).  masked may equal scores (no mask: it is not written) and
 * scaled may equal masked (divisor 1: likewise).  A row with nothing
 * visible becomes NaN, as PyTorch's softmax makes it.
 */
void rowops_softmax(const float *scores, float *masked, float *scaled, float *weights, int n,
                    int first, int end, float divisor);

/*
 * The sum of exp(x[j] - max) over n values (max at least every x[j]), with
 * rowops_exp, in the softmax's fixed order (16 running partial sums, then
 * the fixed tree): the same bits on every instruction set.  The next-token
 * probabilities fold each slice of the vocabulary's logits with it.
 */
float rowops_sum_exp(const float *x, int n, float max);

/*
 * y[j] = GELU(x[j]) for n values, the tanh approximation GPT-2 uses
 * (0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), PyTorch's
 * gelu(approximate="tanh")), the same bits on every instruction set.
 * y may equal x.
 */
void rowops_gelu(const float *x, float *y, size_t n);

/*
 * y[j] = SiLU(gate[j]) * up[j] for n values (SiLU(x) = x sigmoid(x), the
 * exponential rowops_exp of -|x|): SwiGLU's product, as Llama's MLP makes
 * it before its down projection.  y may equal gate or up.
 */
void rowops_swiglu(const float *gate, const float *up, float *y, size_t n);

/*
 * The smallest and largest finite values of x's n (+inf and -inf when none
 * is finite; a zero is +0): what a legend and a colour scale read, at the
 * memory's speed on a layer's every head.
 */
void rowops_range(const float *x, size_t n, float *lo, float *hi);

/* Whether x's n values hold a NaN (ROWOPS_NAN) or a -inf (ROWOPS_NEG_INF), or'd together. */
#define ROWOPS_NAN 1
#define ROWOPS_NEG_INF 2
int rowops_nonfinite(const float *x, size_t n);

#endif
