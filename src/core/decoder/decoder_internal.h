/*
 * decoder_internal.h: what the decoder's files share (decoder.c,
 * decoder_forward.c, decoder_layer.c, decoder_pack.c): not part of the
 * core's interface.
 */
#ifndef ATTNSCOPE_DECODER_INTERNAL_H
#define ATTNSCOPE_DECODER_INTERNAL_H

#include "attnscope/decoder/decoder.h"
#include "attnscope/decoder/run.h"

/* Gives back every pack the model holds (the weights they were made from stay). */
void decoder_unpack(struct decoder_model *m);

/* The input of layer: the embeddings, or the layer before's output. */
const float *decoder_layer_input(const struct decoder_run *r, int layer);
/* Block layer over rows from .. n - 1 of s, its input x (n, C); the rows before are in s. */
void decoder_run_block(const struct decoder_model *m, const struct decoder_run *r, int layer,
                       const float *x, int from, struct decoder_layer_stages *s, float *scratch,
                       int threads);

#endif
