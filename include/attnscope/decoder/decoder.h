/*
 * decoder.h: a decoder-only transformer, described by the parts its blocks
 * are built from (TransformerLens' config, llama.cpp's per-architecture
 * builders from shared blocks), and its forward pass.
 *
 * A description (struct decoder_config) names each part's kind and the
 * sizes: the positions (learned absolute embeddings added to the tokens'),
 * the norms (LayerNorm: mean, variance, scale, shift), the attention
 * (multi-head, a key and value head per query head, scaled by sqrt(head
 * size)), the MLP (up, GELU in its tanh approximation, down), the residual
 * adds around attention and MLP, a final norm and the logits (through the
 * token embedding when tied).  GPT-2 is such a description
 * (architectures/gpt2.h describes it: an architecture); one with other
 * parts (RMSNorm, rotary positions, grouped keys and values, a gated MLP)
 * adds their kinds to the enums and their code to parts.c, not a forward
 * of its own.  The weights are the model's, in its own memory.
 *
 * A run keeps what an edit and the next layer need (each layer's keys,
 * values and output) and one layer's every stage, the shown one; another
 * layer's are made again when it is shown (decoder_show_layer), the same
 * bits.  The run's memory lives in run.c.
 */
#ifndef ATTNSCOPE_DECODER_H
#define ATTNSCOPE_DECODER_H

/*
 * Three headers, one for each thing a decoder is: its description
 * (decoder_config.h), its weights (decoder_weights.h) and a run of it
 * (decoder_run.h).  This one includes the three.
 */
#include "attnscope/decoder/decoder_config.h"
#include "attnscope/decoder/decoder_run.h"
#include "attnscope/decoder/decoder_weights.h"

#endif
