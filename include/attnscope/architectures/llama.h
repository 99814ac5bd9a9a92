/*
 * llama.h: Llama-style decoders: Llama (SmolLM2, TinyLlama,
 * Llama 3.2), Qwen2 (Qwen2.5) and Qwen3, from a Hugging Face folder
 * (config.json and safetensors) or the book's own files (the bonus
 * chapters' model.pth, ch05/07 and ch05/11: tok_emb, trf_blocks.N.att.
 * W_query, ff.fc1 ...).  They are the same decoder (decoder.h) with other
 * parts: RMSNorm, rotary positions, grouped keys and values, SwiGLU, and
 * for Qwen3 QK-norm and a head size of its own.
 *
 * Every config.json key that changes the computation is honoured or
 * refused by name, never ignored: rope_scaling (none, "default",
 * "llama3", "linear", "yarn"; others refused), sliding windows (refused
 * when used: windowed.h's architectures have them),
 * attention_bias, mlp_bias, tie_word_embeddings, hidden_act ("silu"
 * only), head_dim, partial_rotary_factor (1 only), layer_types (full
 * attention only).
 */
#ifndef ATTNSCOPE_LLAMA_H
#define ATTNSCOPE_LLAMA_H

#include <stdbool.h>

#include "attnscope/base/status.h"
#include "attnscope/architectures/architecture.h"
#include "attnscope/decoder/decoder.h"

/* What a Llama-style config says beside the decoder's description (its biases included). */
struct llama_config {
    struct decoder_config dec;
    char model_type[16]; /* "llama", "qwen2", "qwen3" */
    int bos_token;       /* bos_token_id, or -1 */
};

/* The architectures: Llama (SmolLM2, Llama 3.x), Qwen2 (Qwen2.5), Qwen3. */
extern const struct architecture arch_llama, arch_qwen2, arch_qwen3;
/* Qwen3-MoE (Qwen3-30B-A3B, Qwen3-Coder): Qwen3 with a mixture of experts for its MLPs. */
extern const struct architecture arch_qwen3_moe;
/* OLMoE (allenai/OLMoE-1B-7B) and Mixtral (8x7B): mixtures of experts of Llama's kind. */
extern const struct architecture arch_olmoe, arch_mixtral;

/* Whether model_type is one of this family's ("llama", "qwen2", "qwen3"). */
bool llama_knows(const char *model_type);

/* Reads and audits config.json; errors name the file and the key. */
enum attn_status llama_config_load(struct llama_config *c, const char *path,
                                   struct attn_error *err);

#endif
