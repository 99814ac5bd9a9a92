/*
 * gguf_config.h: a model's description from a GGUF file's metadata, for
 * every architecture that reads the GGUF layout (llama, qwen2, qwen3,
 * gpt2): the sizes under ARCH.* (block_count, embedding_length,
 * feed_forward_length, attention.head_count and head_count_kv,
 * attention.key_length, context_length, rope.freq_base, the norms'
 * epsilon), the parts the architecture has, a head tied when the file has
 * no output.weight.  Every key that would change the computation is
 * honoured or refused by name (rope.scaling.type other than none, a
 * partial rotation, a sliding window, experts, attention that is not
 * causal, a value width unlike the key's).
 */
#ifndef ATTNSCOPE_GGUF_CONFIG_H
#define ATTNSCOPE_GGUF_CONFIG_H

#include "attnscope/architectures/architecture.h"

enum attn_status gguf_describe(struct arch_loader *ld, struct attn_error *err);

/*
 * After the weights are read: Llama 3's stretched frequencies, which
 * llama.cpp keeps as a tensor of factors (rope_freqs.weight: each
 * frequency divided by its factor) instead of rope_scaling's numbers.
 */
enum attn_status gguf_rope_factors(struct arch_loader *ld, struct attn_error *err);

#endif
