/*
 * decoder_pack.c: a model's linears and head packed once in the products'
 * layout, and the copies the packs replace given back (see decoder.h).
 */
#include "config.h"

#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "attnscope/base/progress.h"
#include "attnscope/decoder/decoder.h"
#include "attnscope/decoder/parts.h"
#include "attnscope/decoder/run.h"
#include "attnscope/files/filemap.h"
#include "attnscope/formats/quants.h"
#include "attnscope/formats/tensor.h"
#include "attnscope/kernels/linalg.h"
#include "attnscope/kernels/parallel.h"
#include "attnscope/kernels/rowops.h"
#include "decoder_internal.h"

/* Whether block linear i is one the model uses (SwiGLU's gate only with SwiGLU). */
static bool
linear_used(const struct decoder_config *c, int i)
{
    return i != 4 || decoder_gated(c);
}

/* Block l's linear i (decoder_block_linear), or NULL when the layer lacks it. */
static struct decoder_linear *
block_linear(const struct decoder_model *m, int l, int i)
{
    return decoder_block_linear((struct decoder_block *)(uintptr_t)&m->blocks[l], i);
}

void
decoder_unpack(struct decoder_model *m)
{
    for (int l = 0; m->blocks != NULL && l < m->cfg.n_layer; l++)
        for (int i = 0; i < decoder_block_linears(&m->cfg); i++)
            if (block_linear(m, l, i) != NULL)
                linalg_packed_destroy(&block_linear(m, l, i)->packed);
    linalg_packed_destroy(&m->head_packed);
}

/* The pages of the weights' mapping or mapped files inside [w, w + bytes) given back (below). */
static size_t release_bytes(const struct decoder_model *m, const void *w, size_t bytes);

struct halves_job {
    struct linalg_packed *pk;
    const unsigned char *q;
    size_t row_bytes;
    int panel0;
};

/* Panels panel0 + [begin, end) of a half-precision matrix put into its pack. */
static void
put_halves(void *ctx, int begin, int end)
{
    const struct halves_job *h = ctx;

    for (int panel = h->panel0 + begin; panel < h->panel0 + end; panel++) {
        const int j = panel * LINALG_QROWS;
        const int rows = h->pk->n - j < LINALG_QROWS ? h->pk->n - j : LINALG_QROWS;
        linalg_pack_q_put_f16(h->pk, j, rows,
                              (const uint16_t *)(const void *)(h->q + (size_t)j * h->row_bytes),
                              (size_t)h->pk->k);
    }
}

/*
 * A GGUF's quantized or half-precision matrix (out, in), rows of blocks
 * at q, into panels of its own format (linalg_pack_q), on up to threads
 * threads, a slice of about 32 MiB of blocks at a time; with m, each
 * slice's blocks are given back as soon as it is packed (the pack
 * replaces them: a matrix is never held twice, the tied head's 280 MB
 * included).  0 or -1.
 */
static int
pack_blocks(struct decoder_model *m, struct linalg_packed *pk, const unsigned char *q, int type,
            int out, int in, int threads)
{
    const bool f16 = type == TENSOR_F16;
    const enum quant_type qt = (enum quant_type)(type - TENSOR_Q4_0);
    const size_t row_bytes = decoder_quant_row_bytes(type, in);
    const int panels = (out + LINALG_QROWS - 1) / LINALG_QROWS;
    const size_t most = (size_t)32 << 20;
    const int slice = most / (LINALG_QROWS * row_bytes) > 0 ? (int)(most / (LINALG_QROWS * row_bytes)) : 1;

    if (linalg_pack_q(pk, f16 ? LINALG_F16 : quant_panel_format(qt), out, in) != 0)
        return -1;
    for (int p0 = 0; p0 < panels; p0 += slice) {
        const int count = panels - p0 < slice ? panels - p0 : slice;
        const int j0 = p0 * LINALG_QROWS;
        const int rows = out - j0 < count * LINALG_QROWS ? out - j0 : count * LINALG_QROWS;
        if (f16) {
            struct halves_job job = { pk, q, row_bytes, p0 };
            parallel_for(count, (long)LINALG_QROWS * in, threads, put_halves, &job);
        } else {
            quant_pack_panels(pk, qt, q, p0, count, threads);
        }
        if (m != NULL)
            m->weights_released += release_bytes(m, q + (size_t)j0 * row_bytes, (size_t)rows * row_bytes);
    }
    return 0;
}

/*
 * Packs l into pk (from its f32 or its bfloat16 copy, into a pack of the
 * same type; from its blocks into their panels) unless it is packed
 * already or has no copy; 0 or -1.  With m (the model l is m's, not read
 * by anyone meanwhile), blocks are given back as they are packed and l
 * then holds only its pack.
 */
static int
pack_into(struct decoder_model *m, struct decoder_linear *l, struct linalg_packed *pk, int threads)
{
    if (l->packed.data != NULL || (l->w == NULL && l->w16 == NULL && l->wq == NULL))
        return 0;
    /* (the int8 arithmetic reads Q4_K and Q6_K where they lie: no pack) */
    if (l->int8 && l->wq != NULL && quant_int8_by_rows((enum quant_type)(l->wq_type - TENSOR_Q4_0)))
        return 0;
    if (l->wq != NULL) {
        /* (blocks their panels would not hold exactly stay blocks: widened a slice at a time) */
        if (l->wq_type != TENSOR_F16 &&
            !quant_packable((enum quant_type)(l->wq_type - TENSOR_Q4_0), l->wq,
                            (size_t)l->out * decoder_quant_row_bytes(l->wq_type, l->in) /
                                quant_block_bytes((enum quant_type)(l->wq_type - TENSOR_Q4_0))))
            return 0;
        if (pack_blocks(m, pk, l->wq, l->wq_type, l->out, l->in, threads) != 0)
            return -1;
        if (m != NULL)
            l->wq = NULL; /* (its type stays: what the cell panel names its blocks by) */
        return 0;
    }
    return l->w != NULL ? linalg_pack(pk, l->out, l->in, l->w, l->ld, l->out_in)
                        : linalg_pack_bf16(pk, l->out, l->in, l->w16, l->ld, l->out_in);
}

/* Packs l once, into its own pack (on the products' threads); with m, as pack_into says. */
static int
pack_linear(struct decoder_model *m, struct decoder_linear *l)
{
    return pack_into(m, l, &l->packed, parallel_threads());
}

/*
 * The output head packed into pk, likewise (unless packed already or
 * absent); with give (m's own, packed as it is replaced), its blocks given
 * back as they are packed, the embedding's too when tied (its rows are
 * then read from the pack).
 */
static int
pack_head_into(struct decoder_model *m, struct linalg_packed *pk, int threads, bool give)
{
    const int C = m->cfg.d_model;

    if (m->head_packed.data != NULL ||
        (m->lm_head == NULL && m->lm_head16 == NULL && m->lm_headq == NULL))
        return 0;
    if (m->lm_headq != NULL && m->head_int8 &&
        quant_int8_by_rows((enum quant_type)(m->lm_headq_type - TENSOR_Q4_0)))
        return 0;
    if (m->lm_headq != NULL) {
        if (pack_blocks(give ? m : NULL, pk, m->lm_headq, m->lm_headq_type,
                        decoder_outputs(&m->cfg), C, threads) != 0)
            return -1;
        if (give) {
            if (m->tok_embedq == m->lm_headq)
                m->tok_embedq = NULL;
            m->lm_headq = NULL;
        }
        return 0;
    }
    return m->lm_head != NULL
               ? linalg_pack(pk, decoder_outputs(&m->cfg), C, m->lm_head, C, 1)
               : linalg_pack_bf16(pk, decoder_outputs(&m->cfg), C, m->lm_head16, C, 1);
}

/* Packs the output head once, into the model's head pack. */
static int
pack_head(struct decoder_model *m, bool give)
{
    return pack_head_into(m, &m->head_packed, parallel_threads(), give);
}

/* A pack's bytes beside the weights (none for one made over them). */
static size_t
own_bytes(const struct linalg_packed *pk)
{
    return pk->in_place ? 0 : linalg_packed_bytes(pk);
}

size_t
decoder_packed_bytes(const struct decoder_model *m)
{
    size_t bytes = own_bytes(&m->head_packed);

    for (int l = 0; m->blocks != NULL && l < m->cfg.n_layer; l++)
        for (int i = 0; i < decoder_block_linears(&m->cfg); i++)
            if (block_linear(m, l, i) != NULL)
                bytes += own_bytes(&block_linear(m, l, i)->packed);
    return bytes;
}

/* The bytes of l's weights as the model holds them (0 once given back). */
static size_t
linear_bytes(const struct decoder_linear *l)
{
    const size_t values = (size_t)l->out * (size_t)l->in;

    if (l->wq != NULL)
        return (size_t)l->out * decoder_quant_row_bytes(l->wq_type, l->in);
    return l->w != NULL ? values * sizeof(float) : l->w16 != NULL ? values * sizeof(uint16_t) : 0;
}

size_t
decoder_pack_transient_bytes(const struct decoder_model *m)
{
    const size_t outputs = (size_t)decoder_outputs(&m->cfg);
    const size_t head =
        m->lm_headq != NULL
            ? outputs * decoder_quant_row_bytes(m->lm_headq_type, m->cfg.d_model)
            : outputs * (size_t)m->cfg.d_model * (m->lm_head != NULL ? sizeof(float) : sizeof(uint16_t));
    size_t most = m->lm_head != NULL || m->lm_head16 != NULL || m->lm_headq != NULL ? head : 0;

    for (int l = 0; m->blocks != NULL && l < m->cfg.n_layer; l++) {
        size_t layer = 0;
        for (int i = 0; i < decoder_block_linears(&m->cfg); i++)
            if (block_linear(m, l, i) != NULL)
                layer += linear_bytes(block_linear(m, l, i));
        most = layer > most ? layer : most;
    }
    return most;
}

size_t
decoder_weights_bytes(const struct decoder_model *m)
{
    const size_t held = m->weights_used + m->weights_mapped;
    const size_t read = held > m->weights_released ? held - m->weights_released : 0;

    return read + decoder_packed_bytes(m);
}

bool
decoder_pack(struct decoder_model *m)
{
    progress_begin("packing the weights", m->cfg.n_layer + 1);
    for (int l = 0; l < m->cfg.n_layer; l++) {
        for (int i = 0; i < decoder_block_linears(&m->cfg); i++) {
            if (block_linear(m, l, i) != NULL && linear_used(&m->cfg, i) &&
                pack_into(NULL, block_linear(m, l, i), &block_linear(m, l, i)->packed,
                          parallel_threads()) != 0) {
                decoder_unpack(m);
                progress_end();
                return false;
            }
        }
        progress_step(l + 1);
    }
    if (pack_head(m, false) != 0) {
        decoder_unpack(m);
        progress_end();
        return false;
    }
    progress_end();
    return true;
}

/* Whether the bytes at p are in the weights' mapping (the model's own memory to overwrite). */
static bool
in_mapping(const struct decoder_model *m, const void *p, size_t bytes)
{
    const uintptr_t map = (uintptr_t)m->weights_map, at = (uintptr_t)p;

    return m->weights_map != NULL && at >= map && at + bytes <= map + m->weights_map_bytes;
}

/* Whether the bytes at p are in one of the files the model maps (the page cache's pages). */
static bool
in_files(const struct decoder_model *m, const void *p, size_t bytes)
{
    for (int i = 0; i < m->map_count; i++)
        if (filemap_holds(m->maps[i], p, bytes))
            return true;
    return false;
}

/*
 * Gives back the whole pages of the bytes at w inside the weights' mapping
 * or a mapped file's (the edges may share a page with a tensor still
 * read); returns the bytes given back.  A file's pages stay in the page
 * cache: the process only stops holding them.
 */
static size_t
release_bytes(const struct decoder_model *m, const void *w, size_t bytes)
{
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    uintptr_t begin = (uintptr_t)w, end = begin + bytes;

    if (!in_mapping(m, w, bytes) && !in_files(m, w, bytes))
        return 0; /* in neither (a test's own arrays): left alone */
    begin = (begin + page - 1) / page * page;
    end = end / page * page;
    if (end <= begin || madvise((void *)begin, end - begin, MADV_DONTNEED) != 0)
        return 0;
    return end - begin;
}

/*
 * The bytes of l's weights as it holds them, or 0: up to its last row's
 * last value (q, k and v share GPT-2's c_attn rows, so a row of ld values
 * would reach past k's and v's).
 */
static size_t
linear_extent(const struct decoder_linear *l)
{
    const size_t rows = (size_t)(l->out_in ? l->out : l->in);
    const size_t cols = (size_t)(l->out_in ? l->in : l->out);
    const size_t values = rows > 0 ? (rows - 1) * (size_t)l->ld + cols : 0;

    if (l->wq != NULL)
        return (size_t)l->out * decoder_quant_row_bytes(l->wq_type, l->in);
    return l->w != NULL ? values * sizeof(float) : l->w16 != NULL ? values * sizeof(uint16_t) : 0;
}

/* Gives back the f32 or bfloat16 copies of layer l's packed linears (a layer's share of
   decoder_release_unpacked). */
static void
release_layer(struct decoder_model *m, int l)
{
    for (int i = 0; i < decoder_block_linears(&m->cfg); i++) {
        struct decoder_linear *d = block_linear(m, l, i);
        if (d == NULL || d->packed.data == NULL || (d->w == NULL && d->w16 == NULL && d->wq == NULL))
            continue;
        m->weights_released += release_bytes(m,
                                             d->w != NULL     ? (const void *)d->w
                                             : d->w16 != NULL ? (const void *)d->w16
                                                              : (const void *)d->wq,
                                             linear_extent(d));
        d->w = NULL;
        d->w16 = NULL;
        d->wq = NULL; /* (its type stays: what the cell panel names its blocks by) */
    }
}

/*
 * The output head's own copy once it is packed: the embedding's too when
 * they are one (a tied tok_embed; the token rows are then read from the pack).
 */
static void
release_head(struct decoder_model *m)
{
    const size_t values = (size_t)decoder_outputs(&m->cfg) * (size_t)m->cfg.d_model;
    const bool tied = (m->tok_embed != NULL && m->tok_embed == m->lm_head) ||
                      (m->tok_embed16 != NULL && m->tok_embed16 == m->lm_head16) ||
                      (m->tok_embedq != NULL && m->tok_embedq == m->lm_headq);

    if (m->head_packed.data == NULL)
        return;
    if (m->lm_head != NULL)
        m->weights_released += release_bytes(m, m->lm_head, values * sizeof *m->lm_head);
    if (m->lm_head16 != NULL)
        m->weights_released += release_bytes(m, m->lm_head16, values * sizeof *m->lm_head16);
    if (m->lm_headq != NULL)
        m->weights_released += release_bytes(
            m, m->lm_headq,
            (size_t)decoder_outputs(&m->cfg) * decoder_quant_row_bytes(m->lm_headq_type, m->cfg.d_model));
    if (tied)
        m->tok_embed = NULL, m->tok_embed16 = NULL, m->tok_embedq = NULL;
    m->lm_head = NULL;
    m->lm_head16 = NULL;
    m->lm_headq = NULL;
}

size_t
decoder_release_unpacked(struct decoder_model *m)
{
    for (int l = 0; m->blocks != NULL && l < m->cfg.n_layer; l++)
        release_layer(m, l);
    release_head(m);
    return m->weights_released;
}

/*
 * A bfloat16 (rows, cols) matrix of the model's own memory packed over
 * itself (linalg_pack_bf16_in_place); false when it cannot be (then it is
 * untouched).
 */
static bool
pack_over(const struct decoder_model *m, struct linalg_packed *pk, const uint16_t *w, int rows,
          int cols, uint16_t *scratch)
{
    return scratch != NULL && w != NULL && in_mapping(m, w, (size_t)rows * (size_t)cols * 2) &&
           linalg_pack_bf16_in_place(pk, rows, cols, (uint16_t *)(uintptr_t)w, scratch) == 0;
}

/*
 * Scratch for packing bfloat16 matrices over themselves: as large as the
 * largest of them (NULL when there are none or no memory: they are then
 * packed beside their copies and the copies given back).
 */
static uint16_t *
pack_scratch(const struct decoder_model *m)
{
    size_t most = 0;

    for (int l = 0; m->blocks != NULL && l < m->cfg.n_layer; l++)
        for (int i = 0; i < decoder_block_linears(&m->cfg); i++) {
            const struct decoder_linear *d = block_linear(m, l, i);
            if (d != NULL && d->w16 != NULL && (size_t)d->out * (size_t)d->in > most)
                most = (size_t)d->out * (size_t)d->in;
        }
    if (m->lm_head16 != NULL && (size_t)decoder_outputs(&m->cfg) * (size_t)m->cfg.d_model > most)
        most = (size_t)decoder_outputs(&m->cfg) * (size_t)m->cfg.d_model;
    return most > 0 ? malloc(most * sizeof(uint16_t)) : NULL;
}

/* Linear l packed over its bfloat16 copy when it can be (a Linear's (out, in), contiguous). */
static void
pack_linear_over(struct decoder_model *m, struct decoder_linear *l, uint16_t *scratch)
{
    if (l->packed.data == NULL && l->w16 != NULL && l->out_in && l->ld == l->in &&
        pack_over(m, &l->packed, l->w16, l->out, l->in, scratch))
        l->w16 = NULL;
}

bool
decoder_pack_replacing(struct decoder_model *m)
{
    const struct decoder_config *c = &m->cfg;
    uint16_t *scratch = pack_scratch(m);
    bool all = true;

    progress_begin("packing the weights", c->n_layer + 1);
    for (int l = 0; all && l < c->n_layer; l++) {
        for (int i = 0; all && i < decoder_block_linears(c); i++) {
            struct decoder_linear *d = block_linear(m, l, i);
            if (d == NULL || !linear_used(c, i))
                continue;
            pack_linear_over(m, d, scratch);
            if (pack_linear(m, d) != 0)
                all = false;
        }
        /* (a layer at a time: GPT-2's q, k and v share one tensor's pages) */
        if (all)
            release_layer(m, l);
        progress_step(l + 1);
    }
    if (all && m->head_packed.data == NULL &&
        pack_over(m, &m->head_packed, m->lm_head16, decoder_outputs(c), c->d_model, scratch)) {
        if (m->tok_embed16 == m->lm_head16) /* (tied: the token rows are read from the pack) */
            m->tok_embed16 = NULL;
        m->lm_head16 = NULL;
    }
    if (all && pack_head(m, true) != 0)
        all = false;
    if (all)
        release_head(m);
    free(scratch);
    progress_end();
    return all;
}

/*
 * The pages of [p, p + bytes) in a mapped file made the process's own, at
 * the same addresses: copied aside, anonymous memory put over them, copied
 * back, 16 MiB at a time.  (A private mapping's written pages would not do:
 * truncating a file takes even those away.)
 */
static void
pin(const struct decoder_model *m, const void *p, size_t bytes)
{
    const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    const size_t chunk = (size_t)16 << 20;
    uintptr_t at, end;
    unsigned char *aside;

    if (p == NULL || bytes == 0 || !in_files(m, p, bytes))
        return;
    at = (uintptr_t)p / page * page;
    end = ((uintptr_t)p + bytes + page - 1) / page * page;
    if ((aside = malloc(chunk)) == NULL)
        return; /* (left in the file: a forward then refuses if the file shrinks) */
    for (; at < end; at += chunk) {
        const size_t len = end - at < chunk ? end - at : chunk;
        memcpy(aside, (const void *)at, len);
        if (mmap((void *)at, len, PROT_READ | PROT_WRITE, MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS,
                 -1, 0) == MAP_FAILED)
            break;
        memcpy((void *)at, aside, len);
    }
    free(aside);
}

void
decoder_pin_mapped(struct decoder_model *m)
{
    const struct decoder_config *c = &m->cfg;
    const size_t C = (size_t)c->d_model, V = (size_t)c->vocab_size;
    const size_t outputs = (size_t)decoder_outputs(c);

    if (m->map_count == 0)
        return;
    pin(m, m->tok_embed, V * C * sizeof(float));
    pin(m, m->tok_embed16, V * C * sizeof(uint16_t));
    pin(m, m->tok_embedq, m->tok_embedq != NULL ? V * decoder_quant_row_bytes(m->tok_embedq_type, c->d_model) : 0);
    pin(m, m->pos_embed, (size_t)c->n_ctx * C * sizeof(float));
    pin(m, m->lm_head, outputs * C * sizeof(float));
    pin(m, m->lm_head16, outputs * C * sizeof(uint16_t));
    pin(m, m->lm_headq,
        m->lm_headq != NULL ? outputs * decoder_quant_row_bytes(m->lm_headq_type, c->d_model) : 0);
    for (int l = 0; m->blocks != NULL && l < c->n_layer; l++)
        for (int i = 0; i < decoder_block_linears(c); i++) {
            const struct decoder_linear *d = block_linear(m, l, i);
            if (d == NULL)
                continue;
            pin(m, d->w != NULL ? (const void *)d->w : d->w16 != NULL ? (const void *)d->w16
                                                                      : (const void *)d->wq,
                linear_extent(d));
        }
}

/* ----------------------------------------------------- packing meanwhile */

struct decoder_packer {
    pthread_t thread;
    const struct decoder_model *m; /* read only, by the thread: its weights as they are */
    struct linalg_packed *lin;     /* (n_layer x decoder_block_linears) what the thread packs */
    struct linalg_packed head;
    bool ok;                       /* every pack made (the thread's, read once it is joined) */
    int done;                      /* set by the thread when it ends (atomically) */
    int stop;                      /* set to make the thread end early (atomically) */
    int layers_done;               /* the layers whose packs are all made (atomically) */
    int adopted;                   /* the layers already put in (the caller's) */
};

static void *
packer_thread(void *arg)
{
    struct decoder_packer *p = arg;
    const struct decoder_model *m = p->m;
    bool ok = true;

    for (int l = 0; ok && l < m->cfg.n_layer; l++) {
        for (int i = 0; ok && i < decoder_block_linears(&m->cfg); i++)
            if (__atomic_load_n(&p->stop, __ATOMIC_ACQUIRE))
                ok = false;
            else if (block_linear(m, l, i) != NULL && linear_used(&m->cfg, i))
                ok = pack_into(NULL, block_linear(m, l, i),
                               &p->lin[(size_t)l * (size_t)decoder_block_linears(&m->cfg) +
                                       (size_t)i],
                               1) == 0;
        if (ok)
            __atomic_store_n(&p->layers_done, l + 1, __ATOMIC_RELEASE);
    }
    if (ok && !__atomic_load_n(&p->stop, __ATOMIC_ACQUIRE))
        ok = pack_head_into((struct decoder_model *)(uintptr_t)m, &p->head, 1, false) == 0;
    p->ok = ok;
    __atomic_store_n(&p->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

/* Frees what p made and p. */
static void
packer_free(struct decoder_packer *p, size_t count)
{
    for (size_t k = 0; k < count; k++)
        linalg_packed_destroy(&p->lin[k]);
    linalg_packed_destroy(&p->head);
    free(p->lin);
    free(p);
}

struct decoder_packer *
decoder_packer_start(const struct decoder_model *m)
{
    struct decoder_packer *p = calloc(1, sizeof *p);

    if (p == NULL || m->blocks == NULL) {
        free(p);
        return NULL;
    }
    p->m = m;
    p->lin = calloc((size_t)m->cfg.n_layer * (size_t)decoder_block_linears(&m->cfg), sizeof *p->lin);
    if (p->lin == NULL || pthread_create(&p->thread, NULL, packer_thread, p) != 0) {
        free(p->lin);
        free(p);
        return NULL;
    }
    return p;
}

bool
decoder_packer_done(const struct decoder_packer *p)
{
    return p != NULL && __atomic_load_n(&p->done, __ATOMIC_ACQUIRE) != 0;
}

/* Layers [p->adopted, upto) put into m, the weights their packs replace given back. */
static void
adopt_layers(struct decoder_packer *p, struct decoder_model *m, int upto)
{
    for (int l = p->adopted; l < upto; l++) {
        for (int i = 0; i < decoder_block_linears(&m->cfg); i++) {
            struct linalg_packed *pk =
                &p->lin[(size_t)l * (size_t)decoder_block_linears(&m->cfg) + (size_t)i];
            if (pk->data != NULL && block_linear(m, l, i) != NULL) {
                block_linear(m, l, i)->packed = *pk;
                memset(pk, 0, sizeof *pk);
            }
        }
        release_layer(m, l);
    }
    p->adopted = upto > p->adopted ? upto : p->adopted;
}

int
decoder_packer_adopt_ready(struct decoder_packer *p, struct decoder_model *m)
{
    if (p == NULL)
        return 0;
    /* (the thread never reads a layer again once it has packed it: these are the caller's) */
    adopt_layers(p, m, __atomic_load_n(&p->layers_done, __ATOMIC_ACQUIRE));
    return p->adopted;
}

bool
decoder_packer_adopt(struct decoder_packer *p, struct decoder_model *m)
{
    const size_t count = (size_t)m->cfg.n_layer * (size_t)decoder_block_linears(&m->cfg);
    bool ok;

    if (p == NULL)
        return false;
    pthread_join(p->thread, NULL);
    ok = p->ok;
    if (ok) {
        /* (the packs are m's now, the weights they replace given back: decoder_pack_replacing's) */
        adopt_layers(p, m, m->cfg.n_layer);
        if (p->head.data != NULL) {
            m->head_packed = p->head;
            memset(&p->head, 0, sizeof p->head);
            release_head(m);
        }
    }
    packer_free(p, count);
    return ok;
}

void
decoder_packer_cancel(struct decoder_packer *p)
{
    if (p == NULL)
        return;
    __atomic_store_n(&p->stop, 1, __ATOMIC_RELEASE);
    pthread_join(p->thread, NULL);
    packer_free(p, (size_t)p->m->cfg.n_layer * (size_t)decoder_block_linears(&p->m->cfg));
}
