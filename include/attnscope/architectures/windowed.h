/*
 * windowed.h: the decoders with sliding windows: Gemma 3's text
 * model (gemma3_text: google/gemma-3-270m, -1b), Gemma 2 (gemma2) and Olmo 3
 * (olmo3), from a
 * Hugging Face folder or the book's notebooks' files (ch05/12, ch05/13)
 * with the model's config.json beside them.  The same decoder (decoder.h)
 * with their parts: per-layer sliding windows and RoPE bases, Gemma's
 * four norms a block by 1 + w, scaled embeddings, GeGLU and capped logits,
 * Olmo's post-norm blocks, width-wide QK-norm and YaRN.
 *
 * Every config.json key that changes the computation is honoured or
 * refused by name (windowed_config.c lists them).
 */
#ifndef ATTNSCOPE_WINDOWED_H
#define ATTNSCOPE_WINDOWED_H

#include "attnscope/architectures/architecture.h"
#include "attnscope/base/status.h"
#include "attnscope/decoder/decoder.h"

/* What a Gemma 3 or Olmo 3 config says. */
struct windowed_config {
    struct decoder_config dec;
    char model_type[16]; /* "gemma3_text", "gemma2" or "olmo3" */
    int bos_token;       /* bos_token_id, or -1 */
};

/* Gemma 3's text model, Gemma 2 (no QK-norm, capped scores), Olmo 3. */
extern const struct architecture arch_gemma3, arch_gemma2, arch_olmo3, arch_gpt_oss;

/* Reads and audits config.json; errors name the file and the key. */
enum attn_status windowed_config_load(struct windowed_config *c, const char *path,
                                   struct attn_error *err);

#endif
