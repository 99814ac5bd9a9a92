/* tensors.c: a model's weights by name, whatever file holds them (see tensors.h). */
#include "config.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/files/fileio.h"
#include "attnscope/files/jsonfile.h"
#include "attnscope/files/tensors.h"

/*
 * The shards a model.safetensors.index.json names in its weight_map (plain
 * file names beside it), each opened once, and every tensor of the map
 * checked to be in the shard it names; s->shard_of keeps the map (a name
 * -> the shard's index, jansson's hash table).
 */
static enum attn_status
open_shards(struct tensor_source *s, const char *dir, struct attn_error *err)
{
    const char *index = s->path;
    json_t *root = jsonfile_load(index, JSONFILE_INDEX_MAX, err);
    json_t *map;
    json_t *files = NULL;
    json_t *shard_of;
    const char *name;
    json_t *file;
    enum attn_status rc = ATTN_EPARSE;

    if (root == NULL)
        return err != NULL ? err->status : ATTN_EPARSE;
    map = json_object_get(root, "weight_map");
    if (!json_is_object(map) || json_object_size(map) == 0 || json_object_size(map) > 1000000) {
        attn_fail(err, ATTN_EPARSE, "%s: no \"weight_map\" of tensor names and their files",
                  index);
        goto done;
    }
    s->shards = calloc(json_object_size(map), sizeof *s->shards);
    s->shard_of = shard_of = json_object();
    files = json_object();
    if (s->shards == NULL || shard_of == NULL || files == NULL) {
        rc = attn_fail(err, ATTN_ENOMEM, "%s: out of memory", index);
        goto done;
    }
    json_object_foreach(map, name, file)
    {
        const char *f = json_is_string(file) ? json_string_value(file) : NULL;
        char path[4096];
        json_t *known;
        int shard;
        if (f == NULL || f[0] == '\0' || f[0] == '.' || strchr(f, '/') != NULL) {
            attn_fail(err, ATTN_EPARSE, "%s: tensor '%s' is mapped to %s, not a file beside it",
                      index, name, f != NULL ? f : "something that is not a file name");
            goto done;
        }
        known = json_object_get(files, f);
        if (known != NULL) {
            shard = (int)json_integer_value(known);
        } else {
            snprintf(path, sizeof path, "%s/%s", dir, f);
            if ((rc = safetensors_open(&s->shards[s->shard_count], path, err)) != ATTN_OK)
                goto done;
            rc = ATTN_EPARSE;
            shard = s->shard_count++;
            if (json_object_set_new(files, f, json_integer(shard)) != 0) {
                rc = attn_fail(err, ATTN_ENOMEM, "%s: out of memory", index);
                goto done;
            }
        }
        if (safetensors_find(&s->shards[shard], name) == NULL) {
            attn_fail(err, ATTN_EPARSE, "%s: tensor '%s' is mapped to %s, which lacks it", index,
                      name, f);
            goto done;
        }
        if (json_object_set_new(shard_of, name, json_integer(shard)) != 0) {
            rc = attn_fail(err, ATTN_ENOMEM, "%s: out of memory", index);
            goto done;
        }
    }
    rc = ATTN_OK;
done:
    json_decref(files);
    json_decref(root);
    return rc;
}

enum attn_status
tensors_open(struct tensor_source *s, const char *dir, struct attn_error *err)
{
    char index[sizeof s->path];
    enum attn_status rc;

    memset(s, 0, sizeof *s);
    snprintf(s->path, sizeof s->path, "%s/model.safetensors", dir);
    if (fileio_absent(s->path)) {
        if (snprintf(index, sizeof index, "%s/model.safetensors.index.json", dir) >= (int)sizeof index)
            return attn_fail(err, ATTN_EIO, "%s: the folder's name is too long", dir);
        if (fileio_absent(index))
            return attn_fail(err, ATTN_EABSENT, "%s: no model.safetensors (nor an index of shards)",
                             dir);
        memcpy(s->path, index, sizeof s->path);
        rc = open_shards(s, dir, err);
    } else {
        s->shards = calloc(1, sizeof *s->shards);
        if (s->shards == NULL)
            return attn_fail(err, ATTN_ENOMEM, "out of memory");
        rc = safetensors_open(&s->shards[0], s->path, err);
        if (rc == ATTN_OK)
            s->shard_count = 1;
    }
    if (rc != ATTN_OK)
        tensors_close(s);
    return rc;
}

void
tensors_close(struct tensor_source *s)
{
    for (int i = 0; i < s->shard_count; i++)
        safetensors_close(&s->shards[i]);
    free(s->shards);
    json_decref(s->shard_of);
    s->shards = NULL;
    s->shard_count = 0;
    s->shard_of = NULL;
}

/* The shard holding name (the map's, else the first that has it), or -1. */
static int
shard_of(const struct tensor_source *s, const char *name)
{
    json_t *where = s->shard_of != NULL ? json_object_get(s->shard_of, name) : NULL;

    if (where != NULL)
        return (int)json_integer_value(where);
    for (int i = 0; i < s->shard_count; i++)
        if (safetensors_find(&s->shards[i], name) != NULL)
            return i;
    return -1;
}

const struct tensor_info *
tensors_find(const struct tensor_source *s, const char *name)
{
    const int k = shard_of(s, name);

    return k >= 0 ? safetensors_find(&s->shards[k], name) : NULL;
}

enum attn_status
tensors_read_f32(const struct tensor_source *s, const struct tensor_info *t, float *out,
                 struct attn_error *err)
{
    const int k = shard_of(s, t->name);

    if (k < 0)
        return attn_fail(err, ATTN_EPARSE, "%s: no tensor '%s'", s->path, t->name);
    return safetensors_read_f32(&s->shards[k], t, out, err);
}

size_t
tensors_total_floats(const struct tensor_source *s)
{
    size_t floats = 0;

    for (int i = 0; i < s->shard_count; i++)
        for (int t = 0; t < s->shards[i].count; t++)
            floats += s->shards[i].tensors[t].numel;
    return floats;
}

const char *
tensors_file_of(const struct tensor_source *s, const struct tensor_info *t)
{
    const int k = shard_of(s, t->name);

    return k >= 0 ? s->shards[k].path : s->path;
}
