/*
 * tf_checkpoint.h: reading a TensorFlow checkpoint (the V2 "tensor
 * bundle" format), as OpenAI published GPT-2 and as the book's chapter 5
 * downloads it into gpt2/124M/.
 *
 * A checkpoint is a prefix ("gpt2/124M/model.ckpt") and files named from
 * it: PREFIX.index, a LevelDB-format table (sstable.h) whose empty key holds
 * a BundleHeaderProto (how many data files, their byte order) and every
 * other key a tensor's name with its BundleEntryProto (dtype, shape, which
 * data file, offset, size, masked CRC-32C of the bytes); and the data files
 * PREFIX.data-00000-of-0000N holding the tensors' bytes.  The messages are
 * decoded by protobuf-c from tf_bundle.proto.  The folder's `checkpoint`
 * file names the prefix to read (model_checkpoint_path).
 *
 * Everything is checked before a tensor is read: every offset and size
 * against its data file's size (64-bit: the 1558M model's data file is
 * over 4 GB), every size against the shape and dtype; each tensor's bytes
 * against its CRC-32C as they are read.  Tensors attnscope cannot read (a
 * step counter in int64, a variable saved in slices) are listed, refused
 * by name when asked for.  The data is read (pread), never mapped.
 */
#ifndef ATTNSCOPE_TF_CHECKPOINT_H
#define ATTNSCOPE_TF_CHECKPOINT_H

#include <stddef.h>
#include <stdint.h>

#include "attnscope/base/status.h"
#include "attnscope/formats/tensor.h"

/* The largest index read (GPT-2 1558M's is a few tens of kilobytes). */
#define TF_INDEX_MAX ((size_t)64 << 20)
/* The most data files a checkpoint may name. */
#define TF_SHARDS_MAX 100000

struct tf_checkpoint {
    char *index;                 /* PREFIX.index, the file named in messages */
    int shard_count;
    int *fds;                    /* the data files, open */
    char **shard_paths;
    uint64_t *shard_sizes;
    struct tensor_catalogue cat; /* the index's tensors, in its (sorted) order */
};

/*
 * The prefix the folder dir's `checkpoint` file names (a plain
 * "model_checkpoint_path" line; a relative path is dir's, an absolute one
 * that is not there is looked for in dir by its last name), else
 * dir/model.ckpt when dir/model.ckpt.index is there.  ATTN_EABSENT when the
 * folder has no checkpoint.
 */
enum attn_status tf_checkpoint_prefix(const char *dir, char *prefix, size_t size,
                                      struct attn_error *err);

/* Opens the checkpoint PREFIX; on failure nothing is left open and err names the file. */
enum attn_status tf_checkpoint_open(struct tf_checkpoint *ck, const char *prefix,
                                    struct attn_error *err);
void tf_checkpoint_close(struct tf_checkpoint *ck);

const struct tensor_info *tf_checkpoint_find(const struct tf_checkpoint *ck, const char *name);

/* t's values as float32 (t->numel), checked against its CRC-32C. */
enum attn_status tf_checkpoint_read_f32(const struct tf_checkpoint *ck,
                                        const struct tensor_info *t, float *out,
                                        struct attn_error *err);
/* The same as float32 or as stored (tensor_read's as). */
enum attn_status tf_checkpoint_read(const struct tf_checkpoint *ck, const struct tensor_info *t,
                                    enum tensor_dtype as, void *out, struct attn_error *err);

/* The data file holding t (for messages). */
const char *tf_checkpoint_file_of(const struct tf_checkpoint *ck, const struct tensor_info *t);

#endif
