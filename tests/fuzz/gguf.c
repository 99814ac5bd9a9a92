/*
 * gguf.c: fuzzes the GGUF reader: the input is a whole file (header,
 * metadata, tensor infos, data), written to a temporary file and opened as
 * a model's would be.  Whatever it holds, the reader either refuses it with
 * a message naming the file, or lists tensors that lie inside the data,
 * found by their names, each readable (or refused by its type's name) and
 * its metadata's lookups answer; a tensor read in place from the file
 * (tensors_map) holds the bytes a read gives; its tokenizer, when it has
 * one, is read or refused naming the file, and encodes a text.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attnscope/files/filemap.h"
#include "attnscope/files/gguf.h"
#include "attnscope/files/tensors.h"
#include "attnscope/text/bpe.h"
#include "fuzz.h"

/* Every tensor tensors_map gives in place holds what tensors_read copies. */
static void
check_mapped(const char *path)
{
    struct tensor_source src;
    struct attn_error err;

    if (tensors_open(&src, path, &err) != ATTN_OK)
        return;
    for (int i = 0; i < tensors_count(&src); i++) {
        const struct tensor_info *t = tensors_at(&src, i);
        const unsigned char *at = tensors_map(&src, t, t->dtype);
        const size_t bytes = t->end - t->begin;
        unsigned char *copy;
        if (at == NULL || bytes > ((size_t)1 << 26))
            continue;
        copy = malloc(bytes > 0 ? bytes : 1);
        if (copy != NULL && tensors_read(&src, t, t->dtype, copy, &err) == ATTN_OK &&
            memcmp(copy, at, bytes) != 0)
            abort(); /* the mapping is the file's bytes, where the reader reads them */
        free(copy);
    }
    tensors_close(&src);
}

/* Its tokenizer read (or refused naming the file) and, read, a text encoded. */
static void
check_tokenizer(const struct gguf *g, const char *path)
{
    static const char text[] = "Hello, world! 12 cats\n\tsat.";
    struct bpe b;
    struct attn_error err;
    int *ids = NULL, count = 0;

    if (gguf_string(g, "tokenizer.ggml.model") == NULL)
        return;
    if (bpe_load_gguf(&b, g, &err) != ATTN_OK) {
        if (err.msg[0] == '\0' || strstr(err.msg, path) == NULL)
            abort(); /* a refusal names the file */
        return;
    }
    if (bpe_encode(&b, text, sizeof text - 1, 0, &ids, &count, &err) == ATTN_OK)
        for (int i = 0; i < count; i++)
            if (ids[i] < 0 || ids[i] >= b.vocab_size)
                abort();
    free(ids);
    bpe_destroy(&b);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[128];
    struct gguf g;
    struct attn_error err;

    if (fuzz_write_file(path, sizeof path, "gguf", "gguf", data, size) == NULL)
        return 0;
    if (gguf_open(&g, path, &err) == ATTN_OK) {
        char mix[512];
        int64_t n;
        double x;
        for (size_t k = 0; k < g.kv_count; k++)
            if (gguf_find(&g, g.kv[k].key) != &g.kv[k] || (gguf_int(&g, g.kv[k].key, &n) &&
                                                          gguf_float(&g, g.kv[k].key, &x) &&
                                                          g.kv[k].type == GGUF_BOOL))
                abort(); /* keys are unique; a bool is an integer, not a float */
        gguf_type_mix(&g, mix, sizeof mix);
        check_tokenizer(&g, path);
        for (int i = 0; i < g.cat.count; i++) {
            const struct tensor_info *t = &g.cat.tensors[i];
            float *v;
            if (t->end > g.file_size - g.data_start || t->begin % g.alignment != 0)
                abort(); /* what the infos promise is inside the data */
            if (tensor_catalogue_find(&g.cat, t->name) != t)
                abort();
            if (t->numel > ((size_t)1 << 24))
                continue;
            v = malloc((t->numel > 0 ? t->numel : 1) * sizeof *v);
            if (v == NULL)
                continue;
            if (gguf_read(&g, t, TENSOR_F32, v, &err) != ATTN_OK && t->refused == NULL)
                abort(); /* the file did not change: every tensor of a type read is readable */
            free(v);
        }
        gguf_close(&g);
        check_mapped(path);
    } else if (err.msg[0] == '\0' || strstr(err.msg, path) == NULL) {
        abort(); /* a refusal always says why, and names the file */
    }
    unlink(path);
    return 0;
}
