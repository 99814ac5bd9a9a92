/*
 * gpt2.h: a GPT-2 model from the files users have.
 *
 * A model is a folder or a weights file in any format files/tensors.h
 * reads.  Three layouts of tensor names are read, decided by the names
 * alone: Hugging Face's (`wte.weight`, `h.N.attn.c_attn.weight` stored
 * (in, out) as GPT-2's Conv1D computes x W + b; with or without a
 * `transformer.` prefix), OpenAI's own (`model/wte`,
 * `model/hN/attn/c_attn/w` stored (1, in, out)) and the book's GPTModel
 * (`tok_emb.weight`, `trf_blocks.N.att.W_query.weight` stored (out, in) as
 * nn.Linear computes x W^T + b; the queries' bias optional, the causal
 * mask buffers skipped; an `out_head` of fewer rows than the vocabulary,
 * with a bias, is chapter 6's classifier).  Every tensor's shape is
 * checked against the sizes before the model is used.  The weights are
 * read into the model's own memory (converted exactly from F16 and BF16)
 * and the files closed: a file changed on disk afterwards changes nothing.
 */
#ifndef ATTNSCOPE_GPT2_H
#define ATTNSCOPE_GPT2_H

#include <stdbool.h>
#include <stddef.h>

#include "attnscope/base/status.h"
#include "attnscope/architectures/architecture.h"
#include "attnscope/decoder/decoder.h"

/*
 * GPT-2 as an architecture: its sizes from, first found, the folder's
 * config.json (Hugging Face's keys, or the book's GPT_CONFIG saved as
 * JSON: emb_dim, n_heads, n_layers, context_length, vocab_size), its
 * hparams.json (OpenAI's: n_vocab, n_ctx, n_embd, n_head, n_layer), else
 * the tensors' shapes (n_layer, n_embd, the vocabulary, the context, the
 * MLP's width, whether the queries have a bias), the head count then from
 * --heads or GPT-2's own sizes (768 -> 12, 1024 -> 16, 1280 -> 20, 1600 ->
 * 25).
 */
extern const struct architecture arch_gpt2;

/* GPT-2's defaults for what a config may leave out (LayerNorm 1e-5, GELU, scaled, tied). */
void gpt2_config_defaults(struct decoder_config *c);

/* Reads and checks config.json; errors name the file and the field. */
enum attn_status gpt2_config_load(struct decoder_config *c, const char *path,
                                  struct attn_error *err);

/* Reads and checks OpenAI's hparams.json. */
enum attn_status gpt2_hparams_load(struct decoder_config *c, const char *path,
                                   struct attn_error *err);

/*
 * The head count: file_heads when a file (named file) gives it (a --heads
 * of another count, wanted, is refused), else wanted, else GPT-2's for
 * n_embd (note says which, for the screen); -1 with err set (naming
 * source) when nothing gives it.
 */
int gpt2_heads(int file_heads, const char *file, int wanted, int n_embd, const char *source,
               char *note, size_t note_size, struct attn_error *err);

#endif
