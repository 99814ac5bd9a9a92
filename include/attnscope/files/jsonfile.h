/*
 * jsonfile.h: a model's JSON files (config.json, the shard index,
 * vocab.json, tokenizer.json) read through jansson with a size cap.
 *
 * The file must be a regular file (a FIFO is refused without blocking, see
 * fileio_open_regular()) no larger than its cap, which is checked before a
 * byte is read: a 200 MB config.json would otherwise take gigabytes of
 * jansson's memory.  Errors name the file, and the line and column of bad
 * JSON; running out of memory says so.
 */
#ifndef ATTNSCOPE_JSONFILE_H
#define ATTNSCOPE_JSONFILE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "attnscope/base/status.h"

/* config.json, hparams.json: a few kilobytes in every real model. */
#define JSONFILE_CONFIG_MAX ((size_t)4 << 20)
/* model.safetensors.index.json: a line per tensor. */
#define JSONFILE_INDEX_MAX ((size_t)16 << 20)
/* vocab.json, encoder.json, tokenizer.json: Gemma 3's tokenizer.json is 33 MB. */
#define JSONFILE_VOCAB_MAX ((size_t)64 << 20)

/*
 * The JSON of path (at most max_bytes), duplicate keys refused; NULL with
 * err set.  An integer too big for 64 bits is a real (JSON has no limit:
 * Hugging Face writes model_max_length as 10^30 in Llama 3's tokenizer).
 */
json_t *jsonfile_load(const char *path, size_t max_bytes, struct attn_error *err);
/* The same for text already read (path names it in messages). */
json_t *jsonfile_parse(const char *path, const char *text, size_t len, struct attn_error *err);

/*
 * A config file's fields (path names the file in messages): the integer
 * name (or alias), from min to 2^24; -1 with err set when missing or not
 * such a number.
 */
int jsonfile_int(json_t *root, const char *path, const char *name, const char *alias, int min,
                 struct attn_error *err);
/* The boolean name (def when absent or null); -1 with err set when not true or false. */
int jsonfile_bool(json_t *root, const char *path, const char *name, bool def,
                  struct attn_error *err);

#endif
