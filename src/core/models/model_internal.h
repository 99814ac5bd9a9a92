/*
 * model_internal.h: what model.c asks of model_writing.c while it opens a
 * model, in this order, once the tokenizer and the weights are read.
 */
#ifndef ATTNSCOPE_MODEL_INTERNAL_H
#define ATTNSCOPE_MODEL_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "attnscope/models/model.h"

/* The path helpers model_locate.c and model.c share. */
/* a and b (and c) into out, or false when they do not fit. */
bool model_path_join(char *out, size_t size, const char *a, const char *b, const char *c);
/* Whether path is a folder. */
bool model_is_dir(const char *path);
/* Whether dir holds a file of that name. */
bool model_has_file(const char *dir, const char *name);
/* Whether dir/name is not there at all (not even a link to nothing). */
bool model_absent_in(const char *dir, const char *name);

/*
 * The end tokens a Hugging Face folder names (generation_config.json's
 * eos_token_id, else config.json's) into m->dec, unless a GGUF named them
 * or the weights are the book's .pth.  0, or -1 with err naming the file.
 */
int model_read_end_tokens(struct model *m, struct attn_error *err);
/* An Ollama model's params (m->params): its stop tokens, num_ctx, and m->note saying them. */
void model_take_params(struct model *m);
/*
 * m's chat template and the bos_token text it puts first: Ollama's
 * template layer (ollama: the blob's path, or ""), a GGUF's, the folder's
 * chat_template.jinja or tokenizer_config.json's.  0 (none is no error),
 * or -1 with err set when a file is damaged.
 */
int model_read_chat_template(struct model *m, const char *ollama, struct attn_error *err);

#endif
