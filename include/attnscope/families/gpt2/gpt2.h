/*
 * gpt2.h: a GPT-2 model from the files users have (issue 11).
 *
 * A model folder holds config.json and model.safetensors.  Two layouts of
 * tensor names are read, decided by the names alone: Hugging Face's
 * (`wte.weight`, `h.N.attn.c_attn.weight` stored (in, out) as GPT-2's Conv1D
 * computes x W + b; with or without a `transformer.` prefix) and the book's
 * GPTModel (`tok_emb.weight`, `trf_blocks.N.att.W_query.weight` stored
 * (out, in) as nn.Linear computes x W^T + b).  Every tensor's shape is
 * checked against config.json before the model is used.  The weights are
 * read into the model's own memory (converted exactly from F16 and BF16)
 * and the files closed: a file changed on disk afterwards changes nothing.
 */
#ifndef ATTNSCOPE_GPT2_H
#define ATTNSCOPE_GPT2_H

#include <stdbool.h>
#include <stddef.h>

#include "attnscope/base/status.h"
#include "attnscope/decoder/decoder.h"

/* Reads and checks config.json; errors name the file and the field. */
enum attn_status gpt2_config_load(struct decoder_config *c, const char *path,
                                  struct attn_error *err);

/*
 * Loads dir/config.json and dir/model.safetensors (or, for a checkpoint in
 * shards, the files dir/model.safetensors.index.json's weight_map names,
 * each tensor checked to be in its shard); nothing is left half-loaded on
 * failure.
 */
enum attn_status gpt2_load(struct decoder_model *m, const char *dir, struct attn_error *err);

#endif
