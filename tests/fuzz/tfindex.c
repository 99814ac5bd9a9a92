/*
 * tfindex.c: fuzzes the TensorFlow checkpoint reader (the LevelDB-format
 * table of sstable.c, the BundleHeaderProto and BundleEntryProto messages
 * protobuf-c decodes, and tf_checkpoint.c's checks of them): the input is a
 * whole PREFIX.index, beside a fixed data file of 64 KiB.  Whatever it
 * holds, the reader refuses it with a message naming a file, or lists
 * tensors that are inside their data file, found by their names, and read
 * (or refused by name: a dtype it does not read, a checksum that fails).
 */
#include "config.h"

#include <stdlib.h>
#include <unistd.h>

#include "attnscope/formats/tf_checkpoint.h"
#include "fuzz.h"

#define DATA_BYTES 65536

static int
write_file(const char *path, const void *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    int ok;

    if (f == NULL)
        return -1;
    ok = size == 0 || fwrite(data, 1, size, f) == size;
    return fclose(f) == 0 && ok ? 0 : -1;
}

static char prefix[4096];
static char index_path[4200];
static char shard_path[4200];

/* The checkpoint's two files, removed when the fuzzer ends (it runs in $TMPDIR, else /tmp). */
static void
remove_files(void)
{
    unlink(index_path);
    unlink(shard_path);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static unsigned char bytes[DATA_BYTES];
    struct tf_checkpoint ck;
    struct attn_error err;

    if (prefix[0] == '\0') {
        const char *tmp = getenv("TMPDIR");
        snprintf(prefix, sizeof prefix, "%s/attnscope-fuzz-tf-%ld",
                 tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp", (long)getpid());
        snprintf(index_path, sizeof index_path, "%s.index", prefix);
        snprintf(shard_path, sizeof shard_path, "%s.data-00000-of-00001", prefix);
        for (size_t i = 0; i < DATA_BYTES; i++)
            bytes[i] = (unsigned char)(i * 2654435761u >> 13);
        if (write_file(shard_path, bytes, sizeof bytes) != 0)
            return 0;
        atexit(remove_files);
    }
    if (write_file(index_path, data, size) != 0)
        return 0;
    if (tf_checkpoint_open(&ck, prefix, &err) == ATTN_OK) {
        for (int i = 0; i < ck.cat.count; i++) {
            const struct tensor_info *t = &ck.cat.tensors[i];
            float *v;
            if (t->unit < 0 || t->unit >= ck.shard_count || t->end < t->begin ||
                (uint64_t)t->end > ck.shard_sizes[t->unit])
                abort(); /* every tensor is inside its data file */
            if (tf_checkpoint_find(&ck, t->name) != t)
                abort(); /* names are unique: the one found is this one */
            if (t->refused == NULL && t->end - t->begin != t->numel * tensor_dtype_size(t->dtype))
                abort();
            v = malloc((t->numel > 0 ? t->numel : 1) * sizeof *v);
            if (v == NULL)
                continue;
            if (tf_checkpoint_read_f32(&ck, t, v, &err) != ATTN_OK &&
                ((fuzz_plain_name(t->name) && strstr(err.msg, t->name) == NULL) ||
                 (t->refused == NULL && strstr(err.msg, "checksum") == NULL)))
                abort(); /* only a refused dtype or a failed checksum stops a read, by name */
            free(v);
        }
        tf_checkpoint_close(&ck);
    } else if (err.msg[0] == '\0' || strstr(err.msg, prefix) == NULL) {
        abort(); /* a refusal always says why, and names the file */
    }
    unlink(index_path);
    return 0;
}
