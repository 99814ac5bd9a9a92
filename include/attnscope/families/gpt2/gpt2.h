/*
 * gpt2.h: a GPT-2 model from the files users have (issue 11).
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
#include "attnscope/decoder/decoder.h"

/*
 * What the sizes come from, first found: the folder's config.json
 * (Hugging Face's keys, or the book's GPT_CONFIG saved as JSON: emb_dim,
 * n_heads, n_layers, context_length, vocab_size), its hparams.json
 * (OpenAI's: n_vocab, n_ctx, n_embd, n_head, n_layer), else the tensors'
 * shapes (n_layer, n_embd, the vocabulary, the context, the MLP's width,
 * whether the queries have a bias), the head count then from --heads or
 * GPT-2's own sizes (768 -> 12, 1024 -> 16, 1280 -> 20, 1600 -> 25).
 */
struct gpt2_options {
    const char *weights; /* a weights file to read; NULL: the folder's (tensors.h) */
    int heads;           /* --heads: the head count where no file gives it (0: none) */
};

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

/*
 * Loads the model in the folder dir (or the weights file o->weights, its
 * config looked for in dir): the tensors' names say the layout (Hugging
 * Face's, with or without `transformer.`; the book's GPTModel; OpenAI's
 * TensorFlow names), every shape is checked against the sizes, and the
 * weights are read into the model's own memory; nothing is left
 * half-loaded on failure.  o may be NULL.
 */
enum attn_status gpt2_load(struct decoder_model *m, const char *dir, const struct gpt2_options *o,
                           struct attn_error *err);

/*
 * The weights packed once for the products, when they and what packing
 * holds beside them (decoder_pack_transient_bytes) take at most four fifths
 * of this machine's memory: for a front end that runs many forwards (the
 * view: every edit and knob).  Packing GPT-2 small takes about 0.3 s, which
 * one forward (--print) does not win back, so --print and --export do not
 * pack; the products then pack as they go, with the same bits.  Packed a
 * layer at a time (decoder_pack_replacing), each layer's copies given back
 * as its packs are made (a bfloat16 matrix packed over itself): the packs
 * take the weights' place rather than adding a second copy, even while
 * they are made.  true when everything was packed.
 */
bool gpt2_pack_if_room(struct decoder_model *m);

#endif
