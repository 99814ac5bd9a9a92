/*
 * gguf.c: fuzzes the GGUF reader: the input is a whole file (header,
 * metadata, tensor infos, data), written to a temporary file and opened as
 * a model's would be.  Whatever it holds, the reader either refuses it with
 * a message naming the file, or lists tensors that lie inside the data,
 * found by their names, each readable (or refused by its type's name) and
 * its metadata's lookups answer; a tensor read in place from the file
 * (tensors_map) holds the bytes a read gives; its tokenizer, when it has
 * one, is read or refused naming the file, and encodes a text.
 *
 * A file that names its architecture is opened as a model, as it is and
 * then with each of its ARCH.* numbers (up to 24 of them) given each of a
 * few hostile values in place (0, -1, a huge count, NaN, infinity, a
 * float where a count belongs: issue 48's head count of 0 divided before
 * any check): refused naming the file, or a model whose numbers the
 * arithmetic can use (positive counts that divide, finite positive
 * bases, epsilons and stretches, finite caps and windows).
 */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attnscope/architectures/architecture.h"
#include "attnscope/decoder/decoder.h"
#include "attnscope/files/filemap.h"
#include "attnscope/formats/gguf.h"
#include "attnscope/formats/tensors.h"
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

/* A loaded model's numbers are ones the forward can use. */
static void
check_model(const struct decoder_model *m)
{
    const struct decoder_config *c = &m->cfg;
    const int kv = decoder_kv_heads(c);

    if (c->n_layer < 1 || c->n_head < 1 || c->d_model < 1 || c->d_mlp < 1 ||
        c->vocab_size < 1 || c->n_ctx < 1 || kv < 1 || c->n_head % kv != 0 ||
        decoder_head_dim(c) < 1 || !(c->eps > 0.0f) || !isfinite(c->eps) ||
        c->sliding_window < 0 || !isfinite(c->final_softcap) || c->final_softcap < 0.0 ||
        !isfinite(c->attn_scalar) || c->attn_scalar < 0.0)
        abort();
    if (c->positions == DECODER_POSITIONS_ROPE) {
        if (!(c->rope_theta > 0.0) || !isfinite(c->rope_theta))
            abort();
        for (int i = 0; i < decoder_head_dim(c) / 2; i++)
            if (!isfinite(m->rope_freq[i]) || !isfinite(m->rope_freq_local[i]))
                abort();
    }
}

/* path opened as a model: refused naming it, or a model check_model passes. */
static void
load_model(const char *path)
{
    struct decoder_model m;
    struct attn_error err = { 0 };

    if (architecture_load(&m, "/nonexistent", &(struct arch_options){ path, 0, false }, &err) ==
        ATTN_OK) {
        check_model(&m);
        decoder_destroy(&m);
    } else if (err.msg[0] == '\0' || strstr(err.msg, path) == NULL) {
        abort();
    }
}

static uint64_t
le(const uint8_t *p, int bytes)
{
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* The bytes a value of type takes at p (at most end - p), or 0 when it does not fit. */
static size_t
value_size(const uint8_t *p, const uint8_t *end, uint32_t type, int depth)
{
    static const size_t fixed[] = { 1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8 };
    const size_t room = (size_t)(end - p);

    if (type > 12)
        return 0;
    if (type == 8) {
        if (room < 8 || le(p, 8) > room - 8)
            return 0;
        return 8 + (size_t)le(p, 8);
    }
    if (type == 9) {
        size_t at = 12;
        uint64_t count;
        if (room < 12 || depth > 2)
            return 0;
        count = le(p + 4, 8);
        for (uint64_t k = 0; k < count; k++) {
            const size_t one = value_size(p + at, end, (uint32_t)le(p, 4), depth + 1);
            if (one == 0)
                return 0;
            at += one;
        }
        return at;
    }
    return fixed[type] <= room ? fixed[type] : 0;
}

/*
 * Each scalar number among the first 64 keys whose name begins with
 * "ARCH." (up to 24 of them) set in place to each hostile value of its
 * width, then of the other kind (a float's bits read as a count, a
 * count's as a float), the file written and opened as a model.
 */
static void
mutate_numbers(const uint8_t *data, size_t size, const char *arch, const char *path)
{
    static const uint32_t four[] = { 0, 0xffffffffu, 0x40000001u, 3, 0x7fc00000u, 0x7f800000u,
                                     0xff800000u, 0x00000001u };
    static const uint64_t eight[] = { 0, ~(uint64_t)0, (uint64_t)1 << 40, 0x7ff8000000000000u,
                                      0x7ff0000000000000u };
    uint8_t *copy = malloc(size);
    const uint8_t *end = data + size;
    size_t at = 24, done = 0;
    uint64_t kvs;

    if (copy == NULL || size < 24)
        goto out;
    kvs = le(data + 16, 8);
    for (uint64_t k = 0; k < kvs && k < 64 && done < 24; k++) {
        size_t key_len, vsize;
        uint32_t type;
        if ((size_t)(end - (data + at)) < 12 || le(data + at, 8) > (uint64_t)(end - data) - at - 12)
            break;
        key_len = (size_t)le(data + at, 8);
        type = (uint32_t)le(data + at + 8 + key_len, 4);
        vsize = value_size(data + at + 12 + key_len, end, type, 0);
        if (vsize == 0)
            break;
        if ((type == 4 || type == 5 || type == 6 || type >= 10) && key_len > strlen(arch) &&
            memcmp(data + at + 8, arch, strlen(arch)) == 0 && data[at + 8 + strlen(arch)] == '.') {
            const size_t type_at = at + 8 + key_len, value_at = type_at + 4;
            const int wide = type >= 10;
            const size_t n = wide ? sizeof eight / sizeof eight[0] : sizeof four / sizeof four[0];
            for (size_t v = 0; v < n; v++)
                for (int swap = 0; swap < 2; swap++) {
                    const uint64_t bits = wide ? eight[v] : four[v];
                    memcpy(copy, data, size);
                    for (int b = 0; b < (wide ? 8 : 4); b++)
                        copy[value_at + (size_t)b] = (uint8_t)(bits >> (8 * b));
                    if (swap) /* the same bits as the other kind: u32 <-> f32, u64 <-> f64 */
                        copy[type_at] = (uint8_t)(wide ? (type == 12 ? 10 : 12)
                                                       : (type == 6 ? 4 : 6));
                    if (fuzz_write_file((char *)path, 128, "gguf", "gguf", copy, size) != NULL)
                        load_model(path);
                }
            done++;
        }
        at += 12 + key_len + vsize;
    }
out:
    free(copy);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[128], arch_name[64];
    const char *arch;
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
        arch = gguf_string(&g, "general.architecture");
        if (arch != NULL && strlen(arch) < sizeof arch_name) {
            snprintf(arch_name, sizeof arch_name, "%s", arch);
            arch = arch_name;
        } else {
            arch = NULL;
        }
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
        if (arch != NULL) {
            load_model(path);
            mutate_numbers(data, size, arch, path);
        }
    } else if (err.msg[0] == '\0' || strstr(err.msg, path) == NULL) {
        abort(); /* a refusal always says why, and names the file */
    }
    unlink(path);
    return 0;
}
