/*
 * safetensors.c: fuzzes the safetensors reader: the input is a whole file
 * (header length, JSON header, data), written to a temporary file and
 * opened as a model's would be.  Whatever it holds, the reader either
 * refuses it with a message or returns tensors whose every value can be
 * read from the file.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attnscope/formats/safetensors.h"
#include "fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[64];
    struct safetensors st;
    struct attn_error err;
    FILE *f;

    if (path[0] == '\0')
        snprintf(path, sizeof path, "/tmp/attnscope-fuzz-st-%ld", (long)getpid());
    f = fopen(path, "wb");
    if (f == NULL)
        return 0;
    if (size > 0 && fwrite(data, 1, size, f) != size) {
        fclose(f);
        return 0;
    }
    fclose(f);
    if (safetensors_open(&st, path, &err) == ATTN_OK) {
        for (int i = 0; i < st.cat.count; i++) {
            const struct tensor_info *t = &st.cat.tensors[i];
            float *v;
            volatile float sum = 0.0f;
            /* What the header promises is inside the file. */
            if (t->end > st.data_size || t->end - t->begin != t->numel * tensor_dtype_size(t->dtype))
                abort();
            if (safetensors_find(&st, t->name) == NULL)
                abort();
            if (safetensors_find(&st, t->name) != t)
                abort(); /* names are unique: the one found is this one */
            v = malloc((t->numel > 0 ? t->numel : 1) * sizeof *v);
            if (v == NULL)
                continue;
            if (safetensors_read_f32(&st, t, v, &err) != ATTN_OK)
                abort(); /* the file did not change: every tensor the header names is readable */
            for (size_t k = 0; k < t->numel; k++)
                sum += v[k];
            /* As stored too (a bfloat16 model's kept matrices): readable the same, and a BF16
               tensor's patterns are its float32 values' upper halves. */
            if (safetensors_read(&st, t, t->dtype, v, &err) != ATTN_OK)
                abort();
            if (t->dtype == TENSOR_BF16) {
                float *w = malloc((t->numel > 0 ? t->numel : 1) * sizeof *w);
                if (w != NULL && safetensors_read_f32(&st, t, w, &err) == ATTN_OK)
                    for (size_t k = 0; k < t->numel; k++)
                        if (memcmp(&w[k], &(float){ tensor_bf16_to_f32(((uint16_t *)v)[k]) },
                                   sizeof w[k]) != 0)
                            abort();
                free(w);
            }
            free(v);
        }
        safetensors_close(&st);
    } else if (err.msg[0] == '\0' || strstr(err.msg, path) == NULL) {
        abort(); /* a refusal always says why, and names the file */
    }
    unlink(path);
    return 0;
}
