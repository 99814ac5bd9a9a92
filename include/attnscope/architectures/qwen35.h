/*
 * qwen35.h: Qwen3.5 and Qwen3.6 (see qwen35.c): Gated DeltaNet layers
 * beside gated full attention, from a Hugging Face folder.
 */
#ifndef ATTNSCOPE_QWEN35_H
#define ATTNSCOPE_QWEN35_H

#include "attnscope/architectures/architecture.h"

extern const struct architecture arch_qwen35;
extern const struct architecture arch_qwen35_moe;
extern const struct architecture arch_qwen3_next;

/*
 * A Gated DeltaNet layer's tensors (decoder_gdn_weights, and its output
 * projection into b->o), checked against the config's sizes; 0, or -1
 * with err set.
 */
int arch_read_gdn(struct arch_loader *ld, struct decoder_block *b, int i, struct attn_error *err);

#endif
