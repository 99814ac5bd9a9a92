/* weights.c: a decoder's weights read into its own memory (see weights.h). */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "attnscope/base/sysmem.h"
#include "attnscope/decoder/weights.h"
#include "attnscope/files/filemap.h"
#include "attnscope/formats/gguf.h"

/* Transparent huge pages come in this size (x86-64, arm64 with 4 KiB pages). */
#define HUGE_PAGE ((size_t)2 << 20)

enum attn_status
weights_open(struct weights_loader *ld, struct decoder_model *m, const char *path,
             struct attn_error *err)
{
    enum attn_status st;

    memset(ld, 0, sizeof *ld);
    ld->m = m;
    ld->sizes_from = "config.json";
    {
        /* ATTNSCOPE_MMAP=0 copies every tensor into the model's memory (to compare) */
        const char *e = getenv("ATTNSCOPE_MMAP");
        ld->map = e == NULL || strcmp(e, "0") != 0;
    }
    if ((st = tensors_open(&ld->src, path, err)) != ATTN_OK)
        return st;
    snprintf(m->source, sizeof m->source, "%s", ld->src.path);
    if (ld->src.within != NULL)
        snprintf(m->format, sizeof m->format, "%s (its %s)", ld->src.format, ld->src.within);
    else if (tensors_gguf(&ld->src) != NULL) {
        /* What a GGUF file's tensors are: its quantization mix. */
        char mix[160];
        snprintf(m->format, sizeof m->format, "GGUF: %s",
                 gguf_type_mix(tensors_gguf(&ld->src), mix, sizeof mix));
    } else
        snprintf(m->format, sizeof m->format, "%s", ld->src.format);
    ld->read = json_object();
    if (ld->read == NULL) {
        tensors_close(&ld->src);
        return attn_fail(err, ATTN_ENOMEM, "%s: out of memory", m->source);
    }
    return ATTN_OK;
}

void
weights_close(struct weights_loader *ld)
{
    struct decoder_model *m = ld->m;

    if (m != NULL && ld->src.file_count > 0) {
        const size_t most = (size_t)m->map_count + (size_t)ld->src.file_count;
        struct filemap **maps = realloc(m->maps, most * sizeof *maps);
        m->files_read = ld->src.file_count;
        /* the mappings the weights point into live as long as the model */
        if (maps != NULL) {
            m->maps = maps;
            m->map_count += tensors_take_maps(&ld->src, maps + m->map_count, ld->src.file_count);
        }
    }
    tensors_close(&ld->src);
    json_decref(ld->read);
    ld->read = NULL;
}

/*
 * One mapping as large as every tensor of the files as they will be held
 * (float32, or a kept bfloat16 matrix's 16-bit patterns), aligned to huge
 * pages and marked for them (a 500 MB model is faulted in as 250 pages
 * instead of 125,000).  A model whose weights would not fit in the memory
 * the machine has available is refused here, before a byte is read: read
 * on, it would be ended by the kernel's out-of-memory killer.
 */
enum attn_status
weights_reserve(struct weights_loader *ld, struct attn_error *err)
{
    struct decoder_model *m = ld->m;
    const size_t bytes = tensors_held_bytes(&ld->src, ld->keep_bf16, ld->keep_quant);
    const size_t avail = sysmem_available();
    size_t len;
    unsigned char *map;

    if (bytes > SIZE_MAX - 2 * HUGE_PAGE)
        return attn_fail(err, ATTN_ENOMEM, "%s: too large for this machine", m->source);
    if (avail > 0 && bytes > avail)
        return attn_fail(err, ATTN_ENOMEM,
                         "%s: its weights take %zu MiB in memory, and this machine has %zu MiB "
                         "available (of %zu MiB): attnscope holds a model's weights in memory; "
                         "use a smaller model or free memory",
                         m->source, bytes >> 20, avail >> 20, sysmem_total() >> 20);
    /*
     * Address space for every tensor widened (never touched unless used: a
     * quantized matrix some reader widens still fits), the memory checked
     * above for what is kept.
     */
    len = tensors_held_bytes(&ld->src, ld->keep_bf16, false);
    len = (len > bytes ? len : bytes) + HUGE_PAGE;
    map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
               -1, 0);
    if (map == MAP_FAILED)
        return attn_fail(err, ATTN_ENOMEM,
                         "%s: out of memory for %zu MiB of weights (a limit on this process's "
                         "memory, ulimit -v?)",
                         m->source, bytes >> 20);
    m->weights_map = map;
    m->weights_map_bytes = len;
    m->weights_next = map + (HUGE_PAGE - (uintptr_t)map % HUGE_PAGE) % HUGE_PAGE;
#ifdef MADV_HUGEPAGE
    (void)madvise(m->weights_next, len - (size_t)(m->weights_next - map), MADV_HUGEPAGE);
#endif
    m->blocks = calloc((size_t)m->cfg.n_layer, sizeof *m->blocks);
    if (m->blocks == NULL)
        return attn_fail(err, ATTN_ENOMEM, "%s: out of memory", m->source);
    return ATTN_OK;
}

/* bytes of the reserved memory, 64-byte aligned. */
static void *
weights_alloc(struct decoder_model *m, size_t bytes)
{
    unsigned char *at = m->weights_next;
    unsigned char *end = (unsigned char *)m->weights_map + m->weights_map_bytes;
    const size_t taken = (bytes + 63) / 64 * 64;

    if (at == NULL || (size_t)(end - at) < bytes)
        return NULL;
    m->weights_next = at + taken;
    m->weights_used += taken;
    return at;
}

const struct tensor_info *
weights_find(const struct weights_loader *ld, const char *name)
{
    char full[224];

    snprintf(full, sizeof full, "%s%s", ld->prefix, name);
    return tensors_find(&ld->src, full);
}

int64_t
weights_dim(const struct weights_loader *ld, const char *name, int d)
{
    const struct tensor_info *t = weights_find(ld, name);

    return t != NULL && d < t->ndim && t->shape[d] <= INT32_MAX ? t->shape[d] : -1;
}

int
weights_count_blocks(const struct weights_loader *ld, const char *format, int hi)
{
    char name[192];
    int lo = 0;

    while (lo < hi) {
        const int mid = lo + (hi - lo) / 2;
        snprintf(name, sizeof name, format, mid);
        if (weights_find(ld, name) != NULL)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* A shape as "(2, 3)" into buf. */
static const char *
shape_text(char *buf, size_t size, const int64_t *shape, int ndim)
{
    int at = snprintf(buf, size, "(");

    for (int d = 0; d < ndim && at < (int)size - 24; d++)
        at += snprintf(buf + at, size - (size_t)at, "%s%lld", d ? ", " : "", (long long)shape[d]);
    snprintf(buf + at, size - (size_t)at, ")");
    return buf;
}

/*
 * The tensor name (after the prefix) of the given shape, as float32, or,
 * when kept is set, as the file keeps it where the loader keeps that dtype
 * (bfloat16 patterns, quantized blocks): *kept says which (TENSOR_F32:
 * widened).
 */
static const void *
read_tensor(struct weights_loader *ld, const char *name, int ndim, const int64_t *shape,
            enum tensor_dtype *kept, bool raw, struct attn_error *err)
{
    struct decoder_model *m = ld->m;
    char full[160];
    char key[168];
    const struct tensor_info *t;
    const char *file;
    enum tensor_dtype as;
    void *v;
    bool same = true, in_file;

    snprintf(full, sizeof full, "%s%s", ld->prefix, name);
    t = tensors_find(&ld->src, full);
    if (t == NULL) {
        attn_fail(err, ATTN_EPARSE, "%s: no tensor '%s'", m->source, full);
        return NULL;
    }
    file = tensors_file_of(&ld->src, t);
    for (int d = 0; d < ndim && same; d++)
        same = t->shape[d] == shape[d];
    if (t->ndim != ndim || !same) {
        char is[96];
        char want[96];
        attn_fail(err, ATTN_ESHAPE, "%s: tensor '%s' is %s; %s makes it %s", file, full,
                  shape_text(is, sizeof is, t->shape, t->ndim), ld->sizes_from,
                  shape_text(want, sizeof want, shape, ndim));
        return NULL;
    }
    if (raw && t->dtype != TENSOR_U8) {
        attn_fail(err, ATTN_EPARSE, "%s: tensor '%s' is %s; its bytes were expected (U8)", file,
                  full, tensor_dtype_name(t->dtype));
        return NULL;
    }
    as = raw ? TENSOR_U8 : TENSOR_F32;
    if (kept != NULL && ld->keep_bf16 && t->dtype == TENSOR_BF16)
        as = TENSOR_BF16;
    if (kept != NULL && ld->keep_quant && tensor_dtype_kept_as_blocks(t->dtype) && t->refused == NULL)
        as = t->dtype;
    if (kept != NULL)
        *kept = as;
    /* A tensor read for several views (GPT-2's c_attn holds Q, K and V) is read once. */
    snprintf(key, sizeof key, "%s (%s)", full, tensor_dtype_name(as));
    {
        json_t *known = json_object_get(ld->read, key);
        if (known != NULL)
            return (void *)(uintptr_t)json_integer_value(known);
    }
    /* a matrix the file holds as kept: its own bytes; else (and vectors) a copy of ours */
    v = ld->map && ndim >= 2 ? (void *)(uintptr_t)tensors_map(&ld->src, t, as) : NULL;
    in_file = v != NULL;
    if (in_file)
        m->weights_mapped += t->end - t->begin;
    else
        v = weights_alloc(m, as >= TENSOR_Q4_0 || as == TENSOR_F16
                                 ? t->end - t->begin
                                 : t->numel * tensor_dtype_size(as));
    if (v == NULL) {
        attn_fail(err, ATTN_ENOMEM, "%s: out of memory for tensor '%s' (%zu values)", file, full,
                  t->numel);
        return NULL;
    }
    if (!in_file && tensors_read(&ld->src, t, as, v, err) != ATTN_OK)
        return NULL;
    if (json_object_set_new(ld->read, key, json_integer((json_int_t)(uintptr_t)v)) != 0) {
        attn_fail(err, ATTN_ENOMEM, "%s: out of memory", file);
        return NULL;
    }
    return v;
}

const float *
weights_tensor(struct weights_loader *ld, const char *name, int ndim, const int64_t *shape,
               struct attn_error *err)
{
    return read_tensor(ld, name, ndim, shape, NULL, false, err);
}

int
weights_matrix_kept(struct weights_loader *ld, const char *name, int rows, int cols,
                    const float **f, const uint16_t **h, struct attn_error *err)
{
    /* (its callers read float32 and bfloat16: quantized blocks are widened for them) */
    const bool keep = ld->keep_quant;
    struct weights_matrix wm;
    int rc;

    ld->keep_quant = false;
    rc = weights_matrix_any(ld, name, rows, cols, &wm, err);
    ld->keep_quant = keep;
    *f = wm.f;
    *h = wm.h;
    return rc;
}

int
weights_matrix_any(struct weights_loader *ld, const char *name, int rows, int cols,
                   struct weights_matrix *wm, struct attn_error *err)
{
    const int64_t shape[2] = { rows, cols };
    enum tensor_dtype kept = TENSOR_F32;
    const void *v = read_tensor(ld, name, 2, shape, &kept, false, err);

    memset(wm, 0, sizeof *wm);
    if (v == NULL)
        return -1;
    if (kept == TENSOR_BF16)
        wm->h = v;
    else if (kept != TENSOR_F32) /* (blocks: a quantized type's, or half precision's patterns) */
        wm->q = v, wm->qtype = (int)kept;
    else
        wm->f = v;
    return 0;
}

int
weights_experts_any(struct weights_loader *ld, const char *name, int experts, int rows, int cols,
                    struct weights_matrix *wm, struct attn_error *err)
{
    const int64_t shape[3] = { experts, rows, cols };
    enum tensor_dtype kept = TENSOR_F32;
    const void *v = read_tensor(ld, name, 3, shape, &kept, false, err);

    memset(wm, 0, sizeof *wm);
    if (v == NULL)
        return -1;
    if (kept == TENSOR_BF16)
        wm->h = v;
    else if (kept != TENSOR_F32)
        wm->q = v, wm->qtype = (int)kept;
    else
        wm->f = v;
    return 0;
}

const unsigned char *
weights_bytes(struct weights_loader *ld, const char *name, int ndim, const int64_t *shape,
              struct attn_error *err)
{
    return read_tensor(ld, name, ndim, shape, NULL, true, err);
}

void *
weights_room(struct weights_loader *ld, size_t bytes, struct attn_error *err)
{
    void *v = weights_alloc(ld->m, bytes);

    if (v == NULL)
        attn_fail(err, ATTN_ENOMEM, "%s: out of memory for %zu bytes of weights", ld->m->source,
                  bytes);
    return v;
}

const float *
weights_vector(struct weights_loader *ld, const char *name, int n, struct attn_error *err)
{
    const int64_t shape[1] = { n };

    return weights_tensor(ld, name, 1, shape, err);
}

const float *
weights_matrix(struct weights_loader *ld, const char *name, bool one_first, int rows, int cols,
               struct attn_error *err)
{
    const int64_t shape[3] = { 1, rows, cols };

    return one_first ? weights_tensor(ld, name, 3, shape, err)
                     : weights_tensor(ld, name, 2, shape + 1, err);
}

int
weights_linear(struct weights_loader *ld, struct decoder_linear *l, const char *name, int in,
               int out, bool has_bias, struct attn_error *err)
{
    char w[192], b[192];
    const float *wv, *bv = NULL;
    const uint16_t *hv;

    snprintf(w, sizeof w, "%s.weight", name);
    snprintf(b, sizeof b, "%s.bias", name);
    if (weights_matrix_kept(ld, w, out, in, &wv, &hv, err) != 0 ||
        (has_bias && (bv = weights_vector(ld, b, out, err)) == NULL))
        return -1;
    *l = (struct decoder_linear){
        .w = wv, .w16 = hv, .b = bv, .in = in, .out = out, .ld = in, .out_in = true
    };
    return 0;
}
