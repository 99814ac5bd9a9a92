/* run.c: the memory of a decoder's run (see run.h). */
#include "config.h"

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "attnscope/decoder/decoder.h"
#include "attnscope/decoder/mixer.h"
#include "attnscope/decoder/parts.h"
#include "attnscope/decoder/run.h"

/* Transparent huge pages come in this size (x86-64, arm64 with 4 KiB pages). */
#define HUGE_PAGE ((size_t)2 << 20)

/*
 * The run's buffers, a mapping of anonymous memory aligned to huge pages
 * and marked for them: a 512-token forward of GPT-2 small writes 80 MB of
 * them (it wrote 640 MB when every stage of every layer was kept), and
 * faulting them in 4 KiB at a time took a third of the forward (the kernel
 * zeroing page after page).
 *
 * A destroyed run's mapping is kept as the spare (one, under a lock) and
 * the next run that fits takes it: already faulted in, it costs nothing
 * to reuse, where a fresh one is zeroed by the kernel page by page (a
 * fifth of a 512-token forward even with huge pages).  Every row is
 * written before it is read, so what the spare held changes no
 * bit (check_gpt2's a_reused_arena_changes_no_bit).  A spare too small, or
 * more than twice the size needed (plus 64 MiB), is given back when a run
 * asks, so the memory held stays near what the runs need.
 */
static struct {
    pthread_mutex_t lock;
    void *map;
    size_t bytes;
} spare = { .lock = PTHREAD_MUTEX_INITIALIZER };

static bool
spare_take(struct decoder_run *r, size_t len)
{
    void *map = NULL;
    size_t bytes = 0;

    bool fits;

    pthread_mutex_lock(&spare.lock);
    map = spare.map;
    bytes = spare.bytes;
    fits = map != NULL && bytes >= len && bytes <= 2 * len + ((size_t)64 << 20);
    spare.map = NULL;
    spare.bytes = 0;
    pthread_mutex_unlock(&spare.lock);
    if (map != NULL && !fits) { /* given back: the memory held stays near what runs need */
        munmap(map, bytes);
        map = NULL;
    }
    r->arena_map = map;
    r->arena_map_bytes = map != NULL ? bytes : 0;
    return map != NULL;
}

/* Keeps map as the spare when it is larger than the one kept; gives back the other. */
static void
spare_give(void *map, size_t bytes)
{
    void *drop = map;
    size_t drop_bytes = bytes;

    pthread_mutex_lock(&spare.lock);
    if (spare.map == NULL || spare.bytes < bytes) {
        drop = spare.map;
        drop_bytes = spare.bytes;
        spare.map = map;
        spare.bytes = bytes;
    }
    pthread_mutex_unlock(&spare.lock);
    if (drop != NULL)
        munmap(drop, drop_bytes);
}

void
decoder_release_spare(void)
{
    pthread_mutex_lock(&spare.lock);
    if (spare.map != NULL)
        munmap(spare.map, spare.bytes);
    spare.map = NULL;
    spare.bytes = 0;
    pthread_mutex_unlock(&spare.lock);
}

static float *
arena_alloc(struct decoder_run *r, size_t bytes)
{
    const size_t len = bytes + HUGE_PAGE;
    unsigned char *map;
    unsigned char *start;

    if (spare_take(r, len))
        map = r->arena_map;
    else {
        map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (map == MAP_FAILED)
            return NULL;
        r->arena_map = map;
        r->arena_map_bytes = len;
    }
    start = map + (HUGE_PAGE - (uintptr_t)map % HUGE_PAGE) % HUGE_PAGE;
#ifdef MADV_HUGEPAGE
    (void)madvise(start, bytes, MADV_HUGEPAGE);
#endif
    return (float *)(void *)start;
}

/*
 * The buffers of a slot, each with its width: C = d_model, Q and K the
 * queries' and keys' widths, F = d_mlp.  The projections' outputs,
 * QK-norm's and SwiGLU's gate only where the model has them (without
 * QK-norm and RoPE, q_proj and k_proj are q and k themselves).
 */
struct slot_field {
    size_t at;    /* offsetof(struct decoder_layer_stages, the buffer) */
    size_t width; /* floats a row */
};
#define SLOT_FIELDS_MAX 40
#define FIELD(name, w) (struct slot_field){ offsetof(struct decoder_layer_stages, name), (w) }

static bool
separate_projections(const struct decoder_config *c)
{
    return c->qk_norm || c->positions == DECODER_POSITIONS_ROPE;
}

static size_t
slot_fields(const struct decoder_config *c, struct slot_field *f)
{
    /* (the widest layer's: Gemma 4's full and shared layers are wider than the others) */
    const size_t C = (size_t)c->d_model, F = (size_t)decoder_mlp_max(c);
    const size_t Q = (size_t)decoder_q_width_max(c), K = (size_t)decoder_kv_width_max(c);
    size_t k = 0;

    if (decoder_pre_norms(c))
        f[k++] = FIELD(norm1, C);
    if (separate_projections(c)) {
        f[k++] = FIELD(q_proj, Q);
        f[k++] = FIELD(k_proj, K);
    }
    if (c->qk_norm) {
        f[k++] = FIELD(q_normed, Q);
        f[k++] = FIELD(k_normed, K);
    }
    f[k++] = FIELD(q, Q);
    f[k++] = FIELD(context, Q);
    if (c->attn_gate) {
        f[k++] = FIELD(q_full, 2 * Q);
        f[k++] = FIELD(q_gate, Q);
        f[k++] = FIELD(gated, Q);
    }
    if (c->gdn.v_heads > 0) {
        const size_t Kq = (size_t)decoder_gdn_key_width(c), Vw = (size_t)decoder_gdn_value_width(c);
        f[k++] = FIELD(gdn.mixed, 2 * Kq + Vw);
        f[k++] = FIELD(gdn.conv, 2 * Kq + Vw);
        f[k++] = FIELD(gdn.q, Kq);
        f[k++] = FIELD(gdn.k, Kq);
        f[k++] = FIELD(gdn.z, Vw);
        f[k++] = FIELD(gdn.beta, (size_t)c->gdn.v_heads);
        f[k++] = FIELD(gdn.decay, (size_t)c->gdn.v_heads);
        f[k++] = FIELD(gdn.out, Vw);
        f[k++] = FIELD(gdn.normed, Vw);
    }
    f[k++] = FIELD(attn, C);
    if (decoder_post_norms(c))
        f[k++] = FIELD(attn_normed, C);
    f[k++] = FIELD(resid1, C);
    if (decoder_pre_norms(c))
        f[k++] = FIELD(norm2, C);
    if (decoder_gated(c))
        f[k++] = FIELD(gate, F);
    f[k++] = FIELD(up, F);
    f[k++] = FIELD(act, F);
    if (c->moe.n_experts > 0) {
        f[k++] = FIELD(router_logits, (size_t)c->moe.n_experts);
        f[k++] = FIELD(router, (size_t)c->moe.n_experts);
        f[k++] = FIELD(routed, (size_t)c->moe.n_experts);
        if (c->moe.d_shared > 0) {
            f[k++] = FIELD(shared_gate, 1);
            f[k++] = FIELD(shared, C);
        }
    }
    f[k++] = FIELD(mlp, C);
    if (decoder_post_norms(c))
        f[k++] = FIELD(mlp_normed, C);
    if (c->lw.ple_dim > 0) {
        f[k++] = FIELD(ple_act, (size_t)c->lw.ple_dim);
        f[k++] = FIELD(ple_out, C);
        f[k++] = FIELD(ple_normed, C);
    }
    return k;
}

/* The buffer of s a field names. */
static float **
field_of(struct decoder_layer_stages *s, const struct slot_field *f)
{
    return (float **)(void *)((unsigned char *)s + f->at);
}

/* The floats a row of one slot takes. */
static size_t
slot_row_floats(const struct decoder_config *c)
{
    struct slot_field f[SLOT_FIELDS_MAX];
    const size_t count = slot_fields(c, f);
    size_t floats = 0;

    for (size_t e = 0; e < count; e++)
        floats += f[e].width;
    return floats;
}

/* The floats of one slot of cap rows. */
static size_t
slot_floats(const struct decoder_config *c, int cap)
{
    return (size_t)cap * slot_row_floats(c);
}

/* The floats a row of every layer's kept keys, values and output takes. */
static size_t
kept_row_floats(const struct decoder_config *c)
{
    size_t floats = (size_t)c->n_layer * (size_t)c->d_model;

    for (int l = 0; l < c->n_layer; l++) /* (a layer that shares keeps none of its own) */
        if (decoder_kv_source(c, l) == l)
            floats += 2 * (size_t)decoder_layer_kv_width(c, l);
    return floats;
}

/* The floats a lean run's row of keys, values and outputs takes: one layer's, an output more. */
static size_t
lean_row_floats(const struct decoder_config *c)
{
    return 2 * (size_t)decoder_kv_width_max(c) + 2 * (size_t)c->d_model;
}

/* The floats layer's mixer keeps of its own (a state the same at any length), or 0. */
static size_t
state_floats(const struct decoder_config *c, int layer)
{
    const struct decoder_mixer *mx = decoder_mixer_of(c, layer);

    return mx->keeps_state ? mx->kept_floats(c, layer, 0) : 0;
}

/* Every layer's own kept state. */
static size_t
states_floats(const struct decoder_config *c)
{
    size_t floats = 0;

    for (int l = 0; l < c->n_layer; l++)
        floats += state_floats(c, l);
    return floats;
}

/* The slots a run has: the shown layer's and the working one, or a lean run's working one. */
static size_t
slot_count(bool lean)
{
    return lean ? 1 : 2;
}

/* The floats a run with room for cap rows takes, in the order run_carve carves them. */
static size_t
run_floats(const struct decoder_config *c, int cap, int top, bool lean)
{
    const size_t nn = (size_t)cap;
    const size_t C = (size_t)c->d_model;

    return 3 * nn * C /* tok pos embed */ +
           nn * (lean ? lean_row_floats(c) : kept_row_floats(c)) /* k v resid2 */ +
           nn * (size_t)c->n_layer * (size_t)c->lw.ple_dim /* the per-layer inputs */ +
           nn * C /* final */ + nn * (size_t)top /* probabilities */ +
           slot_count(lean) * slot_floats(c, cap) /* shown, work */ +
           states_floats(c) /* the mixers' own states */ + nn * RUN_LOGIT_SLICE /* logits */ +
           (size_t)c->n_head * part_attention_scratch(cap) /* each head's block of queries */;
}

size_t
run_attention_floats(const struct decoder_config *c, int n)
{
    /* (or a mixer's own per-head stage in the same room: Gated DeltaNet's v_heads) */
    size_t heads = RUN_ATTENTION_STAGES * (size_t)c->n_head;

    for (int l = 0; l < c->n_layer; l++) {
        const struct decoder_mixer *m = decoder_mixer_of(c, l);
        if (m->heads != NULL && (size_t)m->heads(c) > heads)
            heads = (size_t)m->heads(c);
    }
    return heads * (size_t)n * (size_t)n;
}

size_t
decoder_run_bytes(const struct decoder_config *c, int n, int top)
{
    return (run_floats(c, n, top, false) + run_attention_floats(c, n) + (size_t)c->n_layer) *
               sizeof(float) +
           ((size_t)n * (size_t)top + 1) * sizeof(int) +
           (size_t)c->n_layer * (sizeof(struct decoder_layer_stages) + (size_t)c->n_head);
}

/*
 * A run's own small allocations (also an adopting run's): layers, knobs;
 * the shown layer's (H, n, n) stages come when it is shown.
 */
static int
run_own(const struct decoder_config *c, struct decoder_run *r)
{
    r->layers = calloc((size_t)c->n_layer, sizeof *r->layers);
    r->divisors = malloc((size_t)c->n_layer * sizeof *r->divisors);
    /* (the knobs' copies are the forward's, made by run_knobs; an adopting run's are not prev's) */
    r->ablated = NULL;
    r->experts_off = NULL;
    r->attention = NULL;
    r->attention_floats = 0;
    r->attention_ld = r->attention_rows = 0;
    r->attention_layer = -1;
    return r->layers != NULL && r->divisors != NULL ? 0 : -1;
}

int
run_carve(const struct decoder_config *c, int n, int cap, int top, bool lean,
          struct decoder_run *r)
{
    const int C = c->d_model;
    float *at;

    memset(r, 0, sizeof *r);
    r->n = n;
    r->cap = cap;
    r->top = top;
    r->shown = -1;
    r->lean = lean;
    r->arena = arena_alloc(r, run_floats(c, cap, top, lean) * sizeof(float));
    r->top_ids = malloc(((size_t)cap * (size_t)top + 1) * sizeof *r->top_ids);
    if (run_own(c, r) != 0 || r->arena == NULL || r->top_ids == NULL) {
        decoder_run_destroy(r);
        return -1;
    }
    at = r->arena;
#define CARVE(p, count) ((p) = at, at += (size_t)(count))
    CARVE(r->tok, (size_t)cap * C);
    CARVE(r->pos, (size_t)cap * C);
    CARVE(r->embed, (size_t)cap * C);
    for (int l = 0; l < (lean ? 1 : c->n_layer); l++) {
        struct decoder_layer_stages *s = &r->layers[l];
        const int from = decoder_kv_source(c, l);
        if (from == l || lean) {
            const size_t K = lean ? (size_t)decoder_kv_width_max(c)
                                  : (size_t)decoder_layer_kv_width(c, l);
            CARVE(s->k, (size_t)cap * K);
            CARVE(s->v, (size_t)cap * K);
        } else { /* (a layer that shares: its source's, the cache not made twice) */
            s->k = r->layers[from].k;
            s->v = r->layers[from].v;
        }
        CARVE(s->resid2, (size_t)cap * C);
    }
    if (c->lw.ple_dim > 0)
        CARVE(r->ple, (size_t)cap * (size_t)c->n_layer * (size_t)c->lw.ple_dim);
    if (lean) {
        /* Each layer reads the one before's output: two, in turn; the keys and values one. */
        float *other;
        CARVE(other, (size_t)cap * C);
        for (int l = 1; l < c->n_layer; l++) {
            r->layers[l].k = r->layers[0].k;
            r->layers[l].v = r->layers[0].v;
            r->layers[l].resid2 = l % 2 == 0 ? r->layers[0].resid2 : other;
        }
    }
    CARVE(r->final, (size_t)cap * C);
    CARVE(r->top_probs, (size_t)cap * top);
    CARVE(r->slots, slot_count(lean) * slot_floats(c, cap));
    for (int l = 0; l < c->n_layer; l++) {
        /* (a lean run's too: a state is the same size at any length) */
        const size_t floats = state_floats(c, l);
        r->layers[l].kept_rows = floats > 0 ? -1 : 0;
        if (floats > 0)
            CARVE(r->layers[l].kept, floats);
    }
    /* Then the logits' slice and the heads' scratch (run_scratch). */
#undef CARVE
    return 0;
}

void
run_scratch(const struct decoder_config *c, const struct decoder_run *r, float **logits,
            float **attention)
{
    /* After the slots and the states, in run_floats' order. */
    *logits = r->slots + slot_count(r->lean) * slot_floats(c, r->cap) + states_floats(c);
    *attention = *logits + (size_t)r->cap * RUN_LOGIT_SLICE;
}

void
run_slot(const struct decoder_config *c, const struct decoder_run *r, enum run_slot slot,
         int layer, struct decoder_layer_stages *s)
{
    struct slot_field f[SLOT_FIELDS_MAX];
    const size_t count = slot_fields(c, f);
    /* (a lean run has the working slot only) */
    float *at = r->slots + (r->lean ? 0 : (size_t)slot) * slot_floats(c, r->cap);

    memset(s, 0, sizeof *s);
    for (size_t e = 0; e < count; e++) {
        *field_of(s, &f[e]) = at;
        at += (size_t)r->cap * f[e].width;
    }
    s->k = r->layers[layer].k;
    s->v = r->layers[layer].v;
    s->resid2 = r->layers[layer].resid2;
    s->kept = r->layers[layer].kept;
    s->kept_rows = r->layers[layer].kept_rows;
    if (!separate_projections(c)) {
        s->q_proj = s->q;
        s->k_proj = s->k;
    }
}

void
run_expose(const struct decoder_config *c, struct decoder_run *r)
{
    if (r->lean) {
        /* (what the layers' buffers hold now is the last layers': nothing is any layer's) */
        memset(r->layers, 0, (size_t)c->n_layer * sizeof *r->layers);
        return;
    }
    for (int l = 0; l < c->n_layer; l++) {
        struct decoder_layer_stages *s = &r->layers[l];
        struct decoder_layer_stages kept = { 0 };
        if (l == r->shown)
            run_slot(c, r, RUN_SLOT_SHOWN, l, &kept);
        kept.k = s->k;
        kept.v = s->v;
        kept.resid2 = s->resid2;
        kept.kept = s->kept;
        kept.kept_rows = s->kept_rows;
        *s = kept; /* (the scores and weights: NULL until made) */
    }
}

/* A buffer of rows of width floats (row i at p + i * width). */
struct rows {
    float *p;
    size_t width;
};

/*
 * Every buffer of r whose rows an edit keeps or overwrites: the kept ones,
 * and the shown layer's slot when a layer is shown.  Returns how many.
 */
static size_t
run_rows(const struct decoder_config *c, const struct decoder_run *r, struct rows *out)
{
    const size_t C = (size_t)c->d_model;
    size_t k = 0;

    out[k++] = (struct rows){ r->tok, C };
    out[k++] = (struct rows){ r->pos, C };
    out[k++] = (struct rows){ r->embed, C };
    if (r->ple != NULL)
        out[k++] = (struct rows){ r->ple, (size_t)c->n_layer * (size_t)c->lw.ple_dim };
    for (int l = 0; l < c->n_layer; l++) {
        const size_t K = (size_t)decoder_layer_kv_width(c, l);
        if (decoder_kv_source(c, l) == l) { /* (a shared layer's are its source's rows) */
            out[k++] = (struct rows){ r->layers[l].k, K };
            out[k++] = (struct rows){ r->layers[l].v, K };
        }
        out[k++] = (struct rows){ r->layers[l].resid2, C };
    }
    out[k++] = (struct rows){ r->final, C };
    out[k++] = (struct rows){ r->top_probs, (size_t)r->top };
    if (r->shown >= 0) {
        struct decoder_layer_stages s;
        struct slot_field f[SLOT_FIELDS_MAX];
        const size_t count = slot_fields(c, f);
        run_slot(c, r, RUN_SLOT_SHOWN, r->shown, &s);
        for (size_t e = 0; e < count; e++)
            out[k++] = (struct rows){ *field_of(&s, &f[e]), f[e].width };
    }
    return k;
}

/* The most buffers run_rows lists. */
static size_t
run_rows_max(const struct decoder_config *c)
{
    return 6 + 3 * (size_t)c->n_layer + SLOT_FIELDS_MAX;
}

int
run_take_rows(const struct decoder_config *c, const struct decoder_run *prev, int from,
              struct decoder_run *r)
{
    const size_t most = run_rows_max(c);
    struct rows *list = malloc(2 * most * sizeof *list);
    size_t count;

    if (list == NULL)
        return -1;
    r->shown = prev->shown; /* the edit's run keeps the layer shown */
    count = run_rows(c, prev, list);
    (void)run_rows(c, r, list + most);
    for (size_t e = 0; e < count; e++)
        memcpy(list[most + e].p, list[e].p, (size_t)from * list[e].width * sizeof(float));
    memcpy(r->top_ids, prev->top_ids, (size_t)from * (size_t)r->top * sizeof *r->top_ids);
    free(list);
    /* A mixer's state goes on from prev's when it has read exactly the rows kept. */
    for (int l = 0; l < c->n_layer; l++) {
        const size_t floats = state_floats(c, l);
        if (floats == 0 || prev->layers[l].kept == NULL)
            continue;
        r->layers[l].kept_rows = prev->layers[l].kept_rows == from ? from : -1;
        if (r->layers[l].kept_rows == from)
            memcpy(r->layers[l].kept, prev->layers[l].kept, floats * sizeof(float));
    }
    return 0;
}

void
run_aside_free(struct run_aside *a)
{
    free(a->rows);
    free(a->ids);
    free(a->list);
    memset(a, 0, sizeof *a);
}

/* Copies rows from .. from + rows - 1 of prev's buffers into (save) or out of at. */
static void
aside_copy(const struct decoder_config *c, const struct decoder_run *prev, int from, size_t rows,
           float *at, bool save, struct rows *list)
{
    const size_t count = run_rows(c, prev, list);

    for (size_t e = 0; e < count; e++) {
        float *in_run = list[e].p + (size_t)from * list[e].width;
        const size_t bytes = rows * list[e].width * sizeof(float);
        memcpy(save ? at : in_run, save ? in_run : at, bytes);
        at += rows * list[e].width;
    }
}

int
run_aside_save(const struct decoder_config *c, const struct decoder_run *prev, int from,
               struct run_aside *a)
{
    const size_t rows = (size_t)(prev->n > from ? prev->n - from : 0);
    const size_t per_row = slot_row_floats(c) + 4 * (size_t)c->d_model + kept_row_floats(c) +
                           (size_t)c->n_layer * (size_t)c->lw.ple_dim + (size_t)prev->top;

    a->rows = malloc((rows * per_row + 1) * sizeof *a->rows);
    a->ids = malloc((rows * (size_t)prev->top + 1) * sizeof *a->ids);
    /* The list restoring walks, had now: putting the rows back cannot fail. */
    a->list = malloc(run_rows_max(c) * sizeof(struct rows));
    if (a->rows == NULL || a->ids == NULL || a->list == NULL) {
        run_aside_free(a);
        return -1;
    }
    aside_copy(c, prev, from, rows, a->rows, true, a->list);
    memcpy(a->ids, prev->top_ids + (size_t)from * (size_t)prev->top,
           rows * (size_t)prev->top * sizeof *a->ids);
    return 0;
}

void
run_aside_restore(const struct decoder_config *c, struct decoder_run *prev, int from,
                  struct run_aside *a)
{
    const size_t rows = (size_t)(prev->n > from ? prev->n - from : 0);

    aside_copy(c, prev, from, rows, a->rows, false, a->list);
    memcpy(prev->top_ids + (size_t)from * (size_t)prev->top, a->ids,
           rows * (size_t)prev->top * sizeof *a->ids);
    run_aside_free(a);
    /* (a mixer's state in the same memory may hold the stopped edit's rows: made again next) */
    for (int l = 0; l < c->n_layer; l++)
        if (prev->layers[l].kept != NULL)
            prev->layers[l].kept_rows = -1;
}

int
run_adopt(const struct decoder_config *c, const struct decoder_run *prev, int n,
          struct decoder_run *r)
{
    *r = *prev;
    r->n = n;
    if (run_own(c, r) != 0) {
        run_unadopt(r);
        return -1;
    }
    for (int l = 0; l < c->n_layer; l++) {
        r->layers[l].k = prev->layers[l].k;
        r->layers[l].v = prev->layers[l].v;
        r->layers[l].resid2 = prev->layers[l].resid2;
        r->layers[l].kept = prev->layers[l].kept;
        r->layers[l].kept_rows = prev->layers[l].kept_rows;
    }
    return 0;
}

void
run_carry_attention(struct decoder_run *prev, int from, struct decoder_run *r)
{
    free(r->attention);
    r->attention = prev->attention;
    r->attention_floats = prev->attention_floats;
    r->attention_ld = prev->attention_ld;
    r->attention_layer = prev->attention_layer;
    r->attention_rows = prev->attention_layer != r->shown ? 0
                        : prev->attention_rows < from ? prev->attention_rows
                                                      : from;
    prev->attention = NULL;
    prev->attention_floats = 0;
    prev->attention_rows = 0;
}

int
run_attention(const struct decoder_config *c, struct decoder_run *r, int layer)
{
    const int n = r->n;

    if (layer != r->attention_layer || r->attention == NULL)
        r->attention_rows = 0;
    if (r->attention == NULL || n > r->attention_ld) {
        /* Room for the rows the run has room for, so that the edits after it fit. */
        const int ld = r->cap > n ? r->cap : n;
        const size_t room = run_attention_floats(c, ld);
        free(r->attention);
        r->attention_rows = 0;
        r->attention_floats = 0;
        r->attention_ld = 0;
        r->attention = malloc(room * sizeof *r->attention);
        if (r->attention == NULL)
            return -1;
        r->attention_floats = room;
        r->attention_ld = ld;
    }
    r->attention_layer = layer;
    return 0;
}

void
run_unadopt(struct decoder_run *r)
{
    free(r->layers);
    free(r->divisors);
    free(r->ablated);
    free(r->experts_off);
    free(r->attention);
    memset(r, 0, sizeof *r);
}

void
decoder_run_destroy(struct decoder_run *r)
{
    if (r->arena_map != NULL)
        spare_give(r->arena_map, r->arena_map_bytes);
    free(r->top_ids);
    run_unadopt(r);
}
