/*
 * tensors.h: a model's weights by name, whatever file holds them.
 *
 * The seam between the families and the file formats: a family asks for a
 * tensor by name (its dtype, shape and values as float32) and never knows
 * which format it reads.  A source is opened on a model folder: today a
 * model.safetensors, or the shards a model.safetensors.index.json names
 * (every tensor of the map checked to be in its shard, the map kept in a
 * hash table so a lookup costs the same with one shard or a thousand).
 * The files stay open until tensors_close(); a reader reads, never maps.
 */
#ifndef ATTNSCOPE_TENSORS_H
#define ATTNSCOPE_TENSORS_H

#include <stddef.h>

#include "attnscope/base/status.h"
#include "attnscope/files/safetensors.h"

struct tensor_source {
    char path[4096];            /* the file the tensors come from (or the shard index) */
    struct safetensors *shards; /* the files */
    int shard_count;
    void *shard_of;             /* (json_t *) tensor name -> shard index, from an index */
};

/*
 * Opens the weights of the model folder dir: dir/model.safetensors, else
 * the shards dir/model.safetensors.index.json names (plain file names
 * beside it).  ATTN_EABSENT (and err naming what was looked for) when the
 * folder has neither; on any failure nothing is left open.
 */
enum attn_status tensors_open(struct tensor_source *s, const char *dir, struct attn_error *err);
void tensors_close(struct tensor_source *s);

/* The tensor called name, or NULL. */
const struct tensor_info *tensors_find(const struct tensor_source *s, const char *name);

/* Its values as float32 into out (t->numel of them), converted exactly. */
enum attn_status tensors_read_f32(const struct tensor_source *s, const struct tensor_info *t,
                                  float *out, struct attn_error *err);

/* How many floats every tensor of the source takes as float32 (an upper bound for a model). */
size_t tensors_total_floats(const struct tensor_source *s);

/* The file that holds t (for messages). */
const char *tensors_file_of(const struct tensor_source *s, const struct tensor_info *t);

#endif
