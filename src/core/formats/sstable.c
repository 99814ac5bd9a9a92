/* sstable.c: a LevelDB-format table's entries (see sstable.h). */
#include "config.h"

#include <snappy-c.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/base/progress.h"
#include "attnscope/files/crc32c.h"
#include "attnscope/formats/sstable.h"

#define FOOTER_LEN 48
#define TABLE_MAGIC 0xdb4775248b80fb57ull
#define BLOCK_TRAILER 5

struct handle {
    uint64_t offset, size;
};

static uint32_t
le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* A varint of at most 64 bits from *p (not past end); -1 when it runs out or is too long. */
static int
varint(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
    uint64_t x = 0;

    for (int shift = 0; shift <= 63; shift += 7) {
        if (*p >= end)
            return -1;
        x |= (uint64_t)(**p & 0x7f) << shift;
        if (!(*(*p)++ & 0x80)) {
            *v = x;
            return 0;
        }
    }
    return -1;
}

/* A block handle (offset, size) from p..end. */
static int
read_handle(const unsigned char **p, const unsigned char *end, struct handle *h)
{
    return varint(p, end, &h->offset) != 0 || varint(p, end, &h->size) != 0 ? -1 : 0;
}

/*
 * The contents of the block at h: checked against its trailer's CRC, and
 * uncompressed when Snappy compressed it (into *owned, the caller's to free).
 */
static enum attn_status
read_block(const unsigned char *data, size_t len, const char *path, const char *what,
           struct handle h, const unsigned char **block, size_t *block_len, unsigned char **owned,
           struct attn_error *err)
{
    const unsigned char *b;
    unsigned char type;
    uint32_t stored;
    uint32_t crc;

    *owned = NULL;
    if (h.offset > len || h.size > len - h.offset || BLOCK_TRAILER > len - h.offset - h.size)
        return attn_fail(err, ATTN_EPARSE,
                         "%s: the %s block (bytes %llu to %llu and its trailer) is past the end of "
                         "the file (%zu bytes)",
                         path, what, (unsigned long long)h.offset,
                         (unsigned long long)(h.offset + h.size), len);
    b = data + h.offset;
    type = b[h.size];
    stored = crc32c_unmask(le32(b + h.size + 1));
    crc = crc32c_extend(crc32c_extend(0, b, (size_t)h.size), &type, 1);
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
    /* (A fuzzer cannot forge checksums: its build reads past them, to reach the entries.) */
    crc = stored;
#endif
    if (crc != stored)
        return attn_fail(err, ATTN_EPARSE,
                         "%s: the %s block at byte %llu fails its checksum (CRC-32C %08x, the file "
                         "says %08x): the file is damaged",
                         path, what, (unsigned long long)h.offset, crc, stored);
    if (type == 0) {
        *block = b;
        *block_len = (size_t)h.size;
        return ATTN_OK;
    }
    if (type == 1) {
        size_t out_len;
        if (snappy_uncompressed_length((const char *)b, (size_t)h.size, &out_len) != SNAPPY_OK ||
            out_len > SSTABLE_BLOCK_MAX)
            return attn_fail(err, ATTN_EPARSE,
                             "%s: the %s block at byte %llu is not Snappy's, or would take more "
                             "than %zu MiB",
                             path, what, (unsigned long long)h.offset, SSTABLE_BLOCK_MAX >> 20);
        *owned = malloc(out_len > 0 ? out_len : 1);
        if (*owned == NULL)
            return attn_fail(err, ATTN_ENOMEM, "%s: out of memory", path);
        if (snappy_uncompress((const char *)b, (size_t)h.size, (char *)*owned, &out_len) !=
            SNAPPY_OK) {
            free(*owned);
            *owned = NULL;
            return attn_fail(err, ATTN_EPARSE, "%s: the %s block at byte %llu does not uncompress",
                             path, what, (unsigned long long)h.offset);
        }
        *block = *owned;
        *block_len = out_len;
        return ATTN_OK;
    }
    return attn_fail(err, ATTN_EPARSE,
                     "%s: the %s block at byte %llu is compressed with method %d, which attnscope "
                     "does not read (none or Snappy)",
                     path, what, (unsigned long long)h.offset, type);
}

/* Every entry of one block, keys rebuilt from their shared prefixes. */
static enum attn_status
block_entries(const unsigned char *b, size_t n, const char *path, const char *what,
              sstable_entry_fn entry, void *ctx, struct attn_error *err)
{
    const unsigned char *p = b;
    const unsigned char *end;
    unsigned char *key = NULL;
    size_t key_len = 0;
    size_t key_cap = 0;
    uint32_t restarts;
    enum attn_status rc = ATTN_OK;

    if (n < 4)
        return attn_fail(err, ATTN_EPARSE, "%s: a %s block of %zu bytes has no restart count",
                         path, what, n);
    restarts = le32(b + n - 4);
    if (restarts == 0 || restarts > (n - 4) / 4)
        return attn_fail(err, ATTN_EPARSE,
                         "%s: a %s block says it has %u restart points, which its %zu bytes cannot "
                         "hold",
                         path, what, restarts, n);
    end = b + n - 4 - 4 * (size_t)restarts;
    for (uint32_t r = 0; r < restarts; r++)
        if (le32(end + 4 * (size_t)r) > (size_t)(end - b))
            return attn_fail(err, ATTN_EPARSE, "%s: a %s block's restart point %u is past its "
                                               "entries",
                             path, what, r);
    while (p < end && rc == ATTN_OK) {
        uint64_t shared;
        uint64_t unshared;
        uint64_t value_len;
        if (varint(&p, end, &shared) != 0 || varint(&p, end, &unshared) != 0 ||
            varint(&p, end, &value_len) != 0 || shared > key_len ||
            unshared > (uint64_t)(end - p) || value_len > (uint64_t)(end - p) - unshared) {
            rc = attn_fail(err, ATTN_EPARSE,
                           "%s: a %s block's entry at byte %zu is broken (its lengths run past "
                           "the block, or it shares more of a key than there is)",
                           path, what, (size_t)(p - b));
            break;
        }
        if (key == NULL || shared + unshared > key_cap) {
            size_t cap = (size_t)(shared + unshared) * 2 + 16;
            unsigned char *bigger = realloc(key, cap);
            if (bigger == NULL) {
                rc = attn_fail(err, ATTN_ENOMEM, "%s: out of memory", path);
                break;
            }
            key = bigger;
            key_cap = cap;
        }
        memcpy(key + shared, p, (size_t)unshared);
        key_len = (size_t)(shared + unshared);
        p += unshared;
        if (entry(ctx, key, key_len, p, (size_t)value_len, err) != 0)
            rc = err != NULL && err->status != ATTN_OK ? err->status : ATTN_EPARSE;
        p += value_len;
    }
    free(key);
    return rc;
}

/*
 * For each entry of the index block: the data block its value names, entry
 * by entry.  A table's writer appends its data blocks one after another
 * and names each in the index as it is finished, so the blocks an index
 * names follow each other in the file and none twice: a block must start
 * at or after the end of the one before (next).  So reading every block
 * costs at most the file's bytes, however many entries name one block.
 */
struct walk {
    const unsigned char *data;
    size_t len;
    const char *path;
    sstable_entry_fn entry;
    void *ctx;
    uint64_t next; /* where the next data block may start */
};

static int
data_block(void *ctx, const unsigned char *key, size_t key_len, const unsigned char *value,
           size_t value_len, struct attn_error *err)
{
    struct walk *w = ctx;
    const unsigned char *p = value;
    struct handle h;
    const unsigned char *block;
    size_t block_len;
    unsigned char *owned;
    enum attn_status rc;

    (void)key;
    (void)key_len;
    if (read_handle(&p, value + value_len, &h) != 0) {
        attn_fail(err, ATTN_EPARSE, "%s: an index entry is not a block handle", w->path);
        return -1;
    }
    if (h.offset < w->next) {
        attn_fail(err, ATTN_EPARSE,
                  "%s: the index names the data block at byte %llu after the one that ends at "
                  "byte %llu: a table's blocks follow each other, each named once (the file is "
                  "damaged or was not written as a table)",
                  w->path, (unsigned long long)h.offset, (unsigned long long)w->next);
        return -1;
    }
    if (progress_stopped()) {
        attn_fail(err, ATTN_ESTOPPED, "%s: stopped", w->path);
        return -1;
    }
    rc = read_block(w->data, w->len, w->path, "data", h, &block, &block_len, &owned, err);
    if (rc == ATTN_OK) {
        /* (read_block checked that the block and its trailer lie inside the file.) */
        w->next = h.offset + h.size + BLOCK_TRAILER;
        progress_step((long)(w->next >> 10));
    }
    if (rc == ATTN_OK)
        rc = block_entries(block, block_len, w->path, "data", w->entry, w->ctx, err);
    free(owned);
    return rc == ATTN_OK ? 0 : -1;
}

enum attn_status
sstable_foreach(const unsigned char *data, size_t len, const char *path, sstable_entry_fn entry,
                void *ctx, struct attn_error *err)
{
    const unsigned char *footer;
    const unsigned char *p;
    struct handle meta;
    struct handle index;
    uint64_t magic = 0;
    const unsigned char *block;
    size_t block_len;
    unsigned char *owned;
    struct walk w = { data, len, path, entry, ctx, 0 };
    enum attn_status rc;

    if (len < FOOTER_LEN)
        return attn_fail(err, ATTN_EPARSE, "%s: %zu bytes, too short for a table's footer", path,
                         len);
    footer = data + len - FOOTER_LEN;
    for (int k = 7; k >= 0; k--)
        magic = magic << 8 | footer[40 + k];
    if (magic != TABLE_MAGIC)
        return attn_fail(err, ATTN_EPARSE,
                         "%s: not a TensorFlow checkpoint index (a LevelDB table ends with the "
                         "magic number db4775248b80fb57)",
                         path);
    p = footer;
    if (read_handle(&p, footer + 40, &meta) != 0 || read_handle(&p, footer + 40, &index) != 0)
        return attn_fail(err, ATTN_EPARSE, "%s: the footer's block handles are broken", path);
    rc = read_block(data, len, path, "index", index, &block, &block_len, &owned, err);
    if (rc != ATTN_OK)
        return rc;
    progress_begin("reading the checkpoint's index (KiB)", (long)(len >> 10));
    rc = block_entries(block, block_len, path, "index", data_block, &w, err);
    progress_end();
    free(owned);
    return rc;
}
