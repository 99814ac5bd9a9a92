/*
 * posenc.h: the sinusoidal positional encoding of "Attention Is All You
 * Need" (Vaswani et al., 2017), as Anton Zhitomirsky's lecture notes
 * "Transformers" (section 2.5) present it:
 *
 *   PE(pos, 2i)   = sin(pos / 10000^(2i / d))
 *   PE(pos, 2i+1) = cos(pos / 10000^(2i / d))
 *
 * with positions counted from 0.  attnscope adds it to the embeddings when
 * the positional knob is on (off by default, as in the book's chapter 3).
 */
#ifndef ATTNSCOPE_POSENC_H
#define ATTNSCOPE_POSENC_H

#include "attnscope/kernels/matrix.h"

/* Fills out (n, d) with the encoding of positions 0..n-1. */
void posenc_sinusoidal(struct matrix *out);

#endif
