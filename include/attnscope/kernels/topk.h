/*
 * topk.h: the k largest of a row, chosen as torch.topk chooses them on the
 * CPU, ties included.
 *
 * PyTorch's CPU kernel (ATen's topk_impl_loop, with GCC's standard library)
 * puts (value, index) pairs in a vector and, when k * 64 <= n, takes
 * std::partial_sort of its first k; otherwise std::nth_element at k - 1,
 * then std::sort of the first k - 1.  Neither is stable: which of two equal
 * values comes first, and which of them is kept at the boundary, is what
 * those algorithms leave (not always the lower index).  This module makes
 * the same moves: introselect with the median of three, insertion sort
 * below four elements, a heap select when its depth runs out, and
 * libstdc++'s heap and insertion sort, comparing as ATen does (a NaN
 * counts as the largest).  A router's choice of experts is exactly PyTorch's,
 * so a tie between two experts resolves the same way.
 */
#ifndef ATTNSCOPE_KERNELS_TOPK_H
#define ATTNSCOPE_KERNELS_TOPK_H

/*
 * The indices of the k largest of row (n floats, 1 <= k <= n) into top,
 * largest first, as torch.topk(row, k) gives them.  scratch holds n
 * (value, index) pairs: 2 n doubles.
 */
void topk_largest(const float *row, int n, int k, int *top, double *scratch);

#endif
