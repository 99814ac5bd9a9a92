/*
 * torchzip.c: fuzzes the reader of torch.save's archives (libzip's view of
 * the zip, the pickle machine of pickle.c, torch_zip.c's checks of the
 * storages).  An input that starts as a zip does ("PK\3\4") is a whole
 * archive; any other input is a data.pkl, which the harness puts in an
 * archive beside ten storages (archive/data/0 ... 9, 4 KiB each) so that
 * the pickle's tensors have something to view.  Whatever the input, the
 * reader refuses it with a message naming the file, or lists tensors that
 * stay inside their storages, found by their names and read (or refused by
 * name: a view that is not contiguous).
 */
#include "config.h"

#include <stdlib.h>
#include <unistd.h>
#include <zip.h>

#include "attnscope/formats/torch_zip.h"
#include "fuzz.h"

#define STORAGE_BYTES 4096

/* An archive at path holding the pickle and the storages; -1 when libzip cannot write one. */
static int
wrap_pickle(const char *path, const uint8_t *data, size_t size)
{
    static unsigned char storage[STORAGE_BYTES];
    int code;
    zip_t *z = zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, &code);
    zip_source_t *src;

    if (z == NULL)
        return -1;
    for (size_t i = 0; i < sizeof storage; i++)
        storage[i] = (unsigned char)(i * 2654435761u >> 11);
    src = zip_source_buffer(z, data, size, 0);
    if (src == NULL || zip_file_add(z, "archive/data.pkl", src, 0) < 0) {
        zip_source_free(src);
        zip_discard(z);
        return -1;
    }
    for (int k = 0; k < 10; k++) {
        char name[32];
        snprintf(name, sizeof name, "archive/data/%d", k);
        src = zip_source_buffer(z, storage, sizeof storage, 0);
        if (src == NULL || zip_file_add(z, name, src, 0) < 0) {
            zip_source_free(src);
            zip_discard(z);
            return -1;
        }
    }
    return zip_close(z) == 0 ? 0 : -1;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[64];
    struct torch_zip tz;
    struct attn_error err;

    if (path[0] == '\0')
        snprintf(path, sizeof path, "/tmp/attnscope-fuzz-pt-%ld.pth", (long)getpid());
    if (size >= 4 && memcmp(data, "PK\003\004", 4) == 0) {
        FILE *f = fopen(path, "wb");
        if (f == NULL)
            return 0;
        if (fwrite(data, 1, size, f) != size) {
            fclose(f);
            return 0;
        }
        fclose(f);
    } else if (wrap_pickle(path, data, size) != 0) {
        return 0;
    }
    if (torch_zip_open(&tz, path, &err) == ATTN_OK) {
        for (int i = 0; i < tz.cat.count; i++) {
            const struct tensor_info *t = &tz.cat.tensors[i];
            float *v;
            if (t->unit < 0 || t->unit >= tz.unit_count || t->end < t->begin ||
                (uint64_t)t->end > tz.unit_size[t->unit] ||
                t->end - t->begin != t->numel * tensor_dtype_size(t->dtype))
                abort(); /* every tensor is inside its storage */
            if (torch_zip_find(&tz, t->name) != t)
                abort(); /* names are unique: the one found is this one */
            v = malloc((t->numel > 0 ? t->numel : 1) * sizeof *v);
            if (v == NULL)
                continue;
            if (torch_zip_read_f32(&tz, t, v, &err) != ATTN_OK &&
                (t->refused == NULL || (fuzz_plain_name(t->name) && strstr(err.msg, t->name) == NULL)))
                abort(); /* only a view that is not contiguous stops a read, by name */
            free(v);
        }
        torch_zip_close(&tz);
    } else if (err.msg[0] == '\0' || strstr(err.msg, path) == NULL) {
        abort(); /* a refusal always says why, and names the file */
    }
    unlink(path);
    return 0;
}
