/*
 * sstable.h: reading a LevelDB-format table, as TensorFlow's checkpoints
 * keep their index (model.ckpt.index).
 *
 * The table is in memory (an index is small).  Its footer (the last 48
 * bytes) gives the metaindex and index blocks' handles (varint offsets
 * and sizes) and the magic number 0xdb4775248b80fb57; the index block
 * maps each data block's last key to its handle; a block is a run of
 * prefix-compressed entries (shared, unshared and value lengths as
 * varints, the key's new bytes, the value) and an array of restart points,
 * followed by a trailer of a compression byte (none, or Snappy through
 * libsnappy) and the masked CRC-32C of the block and that byte.  Every
 * handle, length, restart and checksum is checked before it is used;
 * errors name the file and the block.
 */
#ifndef ATTNSCOPE_SSTABLE_H
#define ATTNSCOPE_SSTABLE_H

#include <stddef.h>

#include "attnscope/base/status.h"

/* A whole decompressed block may take at most this much memory. */
#define SSTABLE_BLOCK_MAX ((size_t)64 << 20)

/* Called for each entry, in the table's order; non-zero stops (err says why). */
typedef int (*sstable_entry_fn)(void *ctx, const unsigned char *key, size_t key_len,
                                const unsigned char *value, size_t value_len,
                                struct attn_error *err);

/* Every entry of the table of len bytes at data (path for messages). */
enum attn_status sstable_foreach(const unsigned char *data, size_t len, const char *path,
                                 sstable_entry_fn entry, void *ctx, struct attn_error *err);

#endif
