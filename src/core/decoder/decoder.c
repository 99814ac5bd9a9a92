/*
 * decoder.c: a decoder's forward pass from its parts, every stage kept
 * (see decoder.h).
 *
 * In the book's chapter-4 terms: token and position embeddings; per block
 * a norm, attention (the projections, scaled masked attention per head,
 * the output projection) and a residual add, a norm, the MLP and a second
 * residual add; a final norm, and the logits through the (tied) embedding,
 * of which the top few of every position are kept.  Each part is a call to
 * parts.c; the products are linalg's, the softmax rowops', so every CPU
 * computes the same bits.
 */
#include "config.h"

#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "attnscope/base/progress.h"
#include "attnscope/decoder/decoder.h"
#include "attnscope/decoder/parts.h"
#include "attnscope/kernels/linalg.h"
#include "attnscope/kernels/parallel.h"
#include "attnscope/kernels/rowops.h"

/* The vocabulary is scored in slices of this many tokens: the products pack each slice once. */
#define LOGIT_SLICE 2048

/* The floats every buffer of a run with room for cap rows takes, in the order they are carved. */
static size_t
run_floats(const struct decoder_config *c, int cap, int top)
{
    const size_t nn = (size_t)cap;
    const size_t C = (size_t)c->n_embd;
    const size_t F = (size_t)c->n_inner;
    const size_t H = (size_t)c->n_head;
    /* norm1 q k v context attn resid1 norm2 mlp resid2; up act */
    size_t per_layer = 10 * nn * C + 2 * nn * F;

    return 3 * nn * C /* tok pos embed */ + (size_t)c->n_layer * per_layer + nn * C /* final */ +
           nn * (size_t)top /* probabilities */ + nn * LOGIT_SLICE /* a slice of logits */ +
           H * part_attention_scratch(cap) /* each head's block of scores and weights */;
}

/* The floats of one layer's scores and weights (decoder_layer_attention). */
static size_t
shown_floats(const struct decoder_config *c, int n)
{
    return 2 * (size_t)c->n_head * (size_t)n * (size_t)n;
}

size_t
decoder_run_bytes(const struct decoder_config *c, int n, int top)
{
    return (run_floats(c, n, top) + shown_floats(c, n) + (size_t)c->n_layer) * sizeof(float) +
           ((size_t)n * (size_t)top + 1) * sizeof(int) +
           (size_t)c->n_layer * sizeof(struct decoder_layer_stages);
}

/* A row's running softmax and top k, over the slices of the vocabulary seen so far. */
struct next_tokens {
    float max;  /* the largest logit so far */
    double sum; /* sum of exp(logit - max) so far */
};

/* Folds logits of tokens first .. first + count - 1 into one row's running state and top k. */
static void
fold_logits(const float *logits, int first, int count, int k, struct next_tokens *nt, int *ids,
            float *best)
{
    float max = nt->max;

    /* The slice's largest logit, then its exponentials in one vector pass (rowops). */
    for (int j = 0; j < count; j++)
        max = logits[j] > max ? logits[j] : max;
    if (max > nt->max) {
        nt->sum = nt->sum == 0.0 ? 0.0 : nt->sum * (double)rowops_exp(nt->max - max);
        nt->max = max;
    }
    nt->sum += (double)rowops_sum_exp(logits, count, nt->max);
    for (int j = 0; j < count; j++) {
        float x = logits[j];
        int at;
        if (k == 0 || (ids[k - 1] >= 0 && x <= best[k - 1]))
            continue;
        /* Into the top k, which stays sorted, likeliest first (ties: the lower id first). */
        at = k - 1;
        while (at > 0 && (ids[at - 1] < 0 || x > best[at - 1])) {
            ids[at] = ids[at - 1];
            best[at] = best[at - 1];
            at--;
        }
        ids[at] = first + j;
        best[at] = x;
    }
}

int
decoder_outputs(const struct decoder_config *c)
{
    return c->n_classes > 0 ? c->n_classes : c->vocab_size;
}

/* Adds the head's bias (a classifier's) to rows of count logits from output first. */
static void
add_head_bias(const struct decoder_model *m, float *logits, int rows, int first, int count)
{
    if (m->head_bias == NULL)
        return;
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < count; j++)
            logits[(size_t)i * (size_t)count + (size_t)j] += m->head_bias[first + j];
}

float
decoder_divisor(const struct decoder_model *m, const struct decoder_knobs *k, int layer)
{
    const double root = m->cfg.scale_attn_weights ? sqrt((double)(m->cfg.n_embd / m->cfg.n_head))
                                                  : 1.0;
    const double own = m->cfg.scale_by_layer ? root * (double)(layer + 1) : root;

    if (k == NULL)
        return (float)own;
    /* As the book's family divides: sqrt(d_k) * T worked out in double, used in float. */
    return (float)((k->scaled ? own : 1.0) * k->temperature);
}

/* fold_logits for the positions begin..end of a slice. */
struct fold_job {
    const float *logits;
    int first, count, top;
    struct next_tokens *nt;
    int *ids;
    float *best;
};

static void
fold_rows(void *ctx, int begin, int end)
{
    const struct fold_job *j = ctx;

    for (int i = begin; i < end; i++)
        fold_logits(j->logits + (size_t)i * j->count, j->first, j->count, j->top, &j->nt[i],
                    j->ids + (size_t)i * j->top, j->best + (size_t)i * j->top);
}

/* Transparent huge pages come in this size (x86-64, arm64 with 4 KiB pages). */
#define HUGE_PAGE ((size_t)2 << 20)

/*
 * The run's buffers, a mapping of anonymous memory aligned to huge pages
 * and marked for them: every stage of every layer is written once, and a
 * 512-token forward touches 640 MB; faulting it in 4 KiB at a time took a
 * third of the forward (the kernel zeroing page after page).
 *
 * A destroyed run's mapping is kept as the spare (one, under a lock) and
 * the next run that fits takes it: already faulted in, it costs nothing
 * to reuse, where a fresh one is zeroed by the kernel page by page (a
 * fifth of a 512-token forward even with huge pages).  Every stage is
 * written in full before it is read, so what the spare held changes no
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

/* The (n, C) and (n, F) buffers of r (layer by layer), for moving and copying rows. */
struct run_rows {
    float **p;
    size_t width;
};

static size_t
run_rows(const struct decoder_config *c, struct decoder_run *r, struct run_rows *out)
{
    const size_t C = (size_t)c->n_embd, F = (size_t)c->n_inner;
    size_t k = 0;

    out[k++] = (struct run_rows){ &r->tok, C };
    out[k++] = (struct run_rows){ &r->pos, C };
    out[k++] = (struct run_rows){ &r->embed, C };
    for (int l = 0; l < c->n_layer; l++) {
        struct decoder_layer_stages *s = &r->layers[l];
        float **const wide[] = { &s->norm1, &s->q,   &s->k,      &s->v,   &s->context, &s->attn,
                                 &s->resid1, &s->norm2 };
        for (size_t e = 0; e < sizeof wide / sizeof wide[0]; e++)
            out[k++] = (struct run_rows){ wide[e], C };
        out[k++] = (struct run_rows){ &s->up, F };
        out[k++] = (struct run_rows){ &s->act, F };
        out[k++] = (struct run_rows){ &s->mlp, C };
        out[k++] = (struct run_rows){ &s->resid2, C };
    }
    out[k++] = (struct run_rows){ &r->final, C };
    out[k++] = (struct run_rows){ &r->top_probs, (size_t)r->top };
    return k;
}

/* How many buffers run_rows lists. */
static size_t
run_row_buffers(const struct decoder_config *c)
{
    return 5 + 12 * (size_t)c->n_layer;
}

/*
 * The run's buffers for room for cap rows, n of them used, carved from one
 * arena in the order run_floats counts them, and the layer whose scores
 * and weights are shown given its memory (not touched until it is made);
 * -1 when out of memory (r destroyed).
 */
static int
run_carve(const struct decoder_config *c, int n, int cap, int top, struct decoder_run *r)
{
    const int C = c->n_embd;
    const int F = c->n_inner;
    float *at;

    r->n = n;
    r->cap = cap;
    r->top = top;
    r->shown = -1;
    r->arena = arena_alloc(r, run_floats(c, cap, top) * sizeof(float));
    r->layers = calloc((size_t)c->n_layer, sizeof *r->layers);
    r->top_ids = malloc(((size_t)cap * (size_t)top + 1) * sizeof *r->top_ids);
    r->divisors = malloc((size_t)c->n_layer * sizeof *r->divisors);
    r->shown_floats = shown_floats(c, n);
    r->shown_data = malloc(r->shown_floats * sizeof *r->shown_data);
    if (r->arena == NULL || r->layers == NULL || r->top_ids == NULL || r->divisors == NULL ||
        r->shown_data == NULL) {
        decoder_run_destroy(r);
        return -1;
    }
    at = r->arena;
#define CARVE(p, count) ((p) = at, at += (size_t)(count))
    CARVE(r->tok, (size_t)cap * C);
    CARVE(r->pos, (size_t)cap * C);
    CARVE(r->embed, (size_t)cap * C);
    for (int l = 0; l < c->n_layer; l++) {
        struct decoder_layer_stages *s = &r->layers[l];
        CARVE(s->norm1, (size_t)cap * C);
        CARVE(s->q, (size_t)cap * C);
        CARVE(s->k, (size_t)cap * C);
        CARVE(s->v, (size_t)cap * C);
        CARVE(s->context, (size_t)cap * C);
        CARVE(s->attn, (size_t)cap * C);
        CARVE(s->resid1, (size_t)cap * C);
        CARVE(s->norm2, (size_t)cap * C);
        CARVE(s->up, (size_t)cap * F);
        CARVE(s->act, (size_t)cap * F);
        CARVE(s->mlp, (size_t)cap * C);
        CARVE(s->resid2, (size_t)cap * C);
    }
    CARVE(r->final, (size_t)cap * C);
    CARVE(r->top_probs, (size_t)cap * top);
    /* Then the logits' slice and the heads' scratch (run_scratch). */
#undef CARVE
    return 0;
}

/* Where r's scratch sits in its arena: after its buffers (run_floats' order). */
static void
run_scratch(const struct decoder_run *r, float **logits, float **scratch)
{
    *logits = r->top_probs + (size_t)r->cap * (size_t)r->top;
    *scratch = *logits + (size_t)r->cap * LOGIT_SLICE;
}

/*
 * The top next tokens of every position: the logits through lm_head, a
 * slice of the vocabulary at a time, folded into each row's running
 * softmax and top k.  ATTN_ESTOPPED when a stop is asked for.
 */
static enum attn_status
run_logits(const struct decoder_model *m, struct decoder_run *r, int row0, float *logits,
           int threads, struct attn_error *err)
{
    const struct decoder_config *c = &m->cfg;
    const int n = r->n - row0;
    const int top = r->top;
    const int C = c->n_embd;
    const int outputs = decoder_outputs(c);
    const float *final = r->final + (size_t)row0 * C;
    int *top_ids = r->top_ids + (size_t)row0 * top;
    float *top_probs = r->top_probs + (size_t)row0 * top;
    struct next_tokens *nt = malloc(((size_t)n + 1) * sizeof *nt);

    if (nt == NULL)
        return attn_fail(err, ATTN_ENOMEM, "out of memory for the next tokens");
    for (int i = 0; i < n; i++) {
        nt[i].max = -INFINITY;
        nt[i].sum = 0.0;
        for (int t = 0; t < top; t++)
            top_ids[(size_t)i * top + t] = -1;
    }
    for (int v0 = 0; n > 0 && v0 < outputs; v0 += LOGIT_SLICE) {
        const int vb = outputs - v0 < LOGIT_SLICE ? outputs - v0 : LOGIT_SLICE;
        struct fold_job job = { logits, v0, vb, top, nt, top_ids, top_probs };
        if (progress_stopped()) {
            free(nt);
            return attn_fail(err, ATTN_ESTOPPED, "stopped while reading the next tokens");
        }
        if (parallel_gemm_packed(n, final, C, &m->head_packed, v0, vb, logits, vb, threads) != 0)
            parallel_gemm(true, n, vb, C, final, C, m->lm_head + (size_t)v0 * C, C, logits, vb,
                          threads);
        add_head_bias(m, logits, n, v0, vb);
        parallel_for(n, 4L * vb, threads, fold_rows, &job);
    }
    for (int i = 0; i < n; i++)
        for (int t = 0; t < top; t++) {
            float *pr = &top_probs[(size_t)i * top + t];
            *pr = (float)((double)rowops_exp(*pr - nt[i].max) / nt[i].sum);
        }
    free(nt);
    return ATTN_OK;
}

/*
 * The rows before from of every kept stage of r, from prev (a run of the
 * same model and knobs over ids that agree with r's up to from): for a
 * causal model they are what a forward would compute again.
 */
static int
take_rows(const struct decoder_config *c, struct decoder_run *prev, int from, struct decoder_run *r)
{
    const size_t count = run_row_buffers(c);
    struct run_rows *src = malloc(2 * count * sizeof *src);

    if (src == NULL)
        return -1;
    run_rows(c, prev, src);
    run_rows(c, r, src + count);
    for (size_t e = 0; e < count; e++)
        memcpy(*src[count + e].p, *src[e].p, (size_t)from * src[e].width * sizeof(float));
    memcpy(r->top_ids, prev->top_ids, (size_t)from * (size_t)r->top * sizeof *r->top_ids);
    free(src);
    return 0;
}

/*
 * The rows from .. prev->n - 1 of prev's buffers, put aside while a run
 * computes over them in prev's memory (decoder_forward_from), so that a
 * stop or a failure can give prev back as it was.  An append puts nothing
 * aside: its rows were past prev's.
 */
struct aside {
    struct run_rows *list; /* prev's buffers */
    float *rows;
    int *ids;
};

static void
aside_free(struct aside *a)
{
    free(a->list);
    free(a->rows);
    free(a->ids);
    memset(a, 0, sizeof *a);
}

static int
aside_save(const struct decoder_config *c, struct decoder_run *prev, int from, struct aside *a)
{
    const size_t count = run_row_buffers(c);
    const size_t rows = (size_t)(prev->n > from ? prev->n - from : 0);
    size_t floats = 0;
    float *at;

    memset(a, 0, sizeof *a);
    a->list = malloc(count * sizeof *a->list);
    if (a->list == NULL)
        return -1;
    run_rows(c, prev, a->list);
    for (size_t e = 0; e < count; e++)
        floats += rows * a->list[e].width;
    a->rows = malloc((floats + 1) * sizeof *a->rows);
    a->ids = malloc((rows * (size_t)prev->top + 1) * sizeof *a->ids);
    if (a->rows == NULL || a->ids == NULL) {
        aside_free(a);
        return -1;
    }
    at = a->rows;
    for (size_t e = 0; e < count; e++) {
        const size_t w = a->list[e].width;
        memcpy(at, *a->list[e].p + (size_t)from * w, rows * w * sizeof(float));
        at += rows * w;
    }
    memcpy(a->ids, prev->top_ids + (size_t)from * (size_t)prev->top,
           rows * (size_t)prev->top * sizeof *a->ids);
    return 0;
}

/* Puts the rows aside_save kept back into prev's buffers, and frees them. */
static void
aside_restore(const struct decoder_config *c, struct decoder_run *prev, int from, struct aside *a)
{
    const size_t count = run_row_buffers(c);
    const size_t rows = (size_t)(prev->n > from ? prev->n - from : 0);
    const float *at = a->rows;

    for (size_t e = 0; e < count; e++) {
        const size_t w = a->list[e].width;
        memcpy(*a->list[e].p + (size_t)from * w, at, rows * w * sizeof(float));
        at += rows * w;
    }
    memcpy(prev->top_ids + (size_t)from * (size_t)prev->top, a->ids,
           rows * (size_t)prev->top * sizeof *a->ids);
    aside_free(a);
}

/*
 * r over prev's memory for n rows (prev->cap >= n): prev's buffers, a
 * layer list and shown-layer memory of r's own.  prev is not changed.
 */
static int
adopt(const struct decoder_config *c, const struct decoder_run *prev, int n, struct decoder_run *r)
{
    *r = *prev;
    r->n = n;
    r->shown = -1;
    r->layers = malloc((size_t)c->n_layer * sizeof *r->layers);
    r->divisors = malloc((size_t)c->n_layer * sizeof *r->divisors);
    r->shown_floats = shown_floats(c, n);
    r->shown_data = malloc(r->shown_floats * sizeof *r->shown_data);
    if (r->layers == NULL || r->divisors == NULL || r->shown_data == NULL) {
        free(r->layers);
        free(r->divisors);
        free(r->shown_data);
        memset(r, 0, sizeof *r);
        return -1;
    }
    memcpy(r->layers, prev->layers, (size_t)c->n_layer * sizeof *r->layers);
    for (int l = 0; l < c->n_layer; l++)
        r->layers[l].scores = r->layers[l].weights = NULL;
    return 0;
}

/* Frees what r has of its own beside prev's memory it was computed in (adopt). */
static void
unadopt(struct decoder_run *r)
{
    free(r->layers);
    free(r->divisors);
    free(r->shown_data);
    memset(r, 0, sizeof *r);
}

/*
 * The forward over rows from .. n - 1 of r, the rows before already there;
 * ATTN_ESTOPPED when a stop is asked for.
 */
static enum attn_status
run_layers(const struct decoder_model *m, const int *ids, int from, const struct decoder_knobs *k,
           struct decoder_run *r, struct attn_error *err)
{
    const struct decoder_config *c = &m->cfg;
    const int C = c->n_embd;
    const int n = r->n;
    const int threads = parallel_threads();
    const size_t at = (size_t)from * (size_t)C;
    const size_t rows = (size_t)(n - from);
    float *logits;
    float *scratch;
    const float *x;
    enum attn_status st = ATTN_OK;

    run_scratch(r, &logits, &scratch);
    r->causal = k == NULL || k->causal;
    for (int l = 0; l < c->n_layer; l++)
        r->divisors[l] = decoder_divisor(m, k, l);
    part_positions(m, ids + from, n - from, r->tok + at, r->pos + at, r->embed + at, from);
    x = r->embed;
    /* A step per layer and one for the logits: a front end shows it, and may stop it between. */
    progress_begin("running the model", c->n_layer + 1);
    for (int l = 0; l < c->n_layer && st == ATTN_OK; l++) {
        const struct decoder_block *b = &m->blocks[l];
        struct decoder_layer_stages *s = &r->layers[l];
        const struct part_attention_args attention = {
            c, b, s->norm1, n, r->causal, r->divisors[l],
            k != NULL && k->ablated != NULL ? k->ablated + (size_t)l * (size_t)c->n_head : NULL,
            scratch, part_attention_scratch(r->cap),
            from,
        };

        if (progress_stopped()) {
            st = attn_fail(err, ATTN_ESTOPPED, "stopped at layer %d of %d", l, c->n_layer);
            break;
        }
        progress_step(l);
        part_norm(c, &b->norm1, x + at, (int)rows, s->norm1 + at, threads);
        part_attention(&attention, s, threads);
        part_residual(x + at, s->attn + at, rows * C, s->resid1 + at);
        part_norm(c, &b->norm2, s->resid1 + at, (int)rows, s->norm2 + at, threads);
        part_mlp(c, b, s->norm2 + at, (int)rows, s->up + (size_t)from * c->n_inner,
                 s->act + (size_t)from * c->n_inner, s->mlp + at, threads);
        part_residual(s->resid1 + at, s->mlp + at, rows * C, s->resid2 + at);
        x = s->resid2;
    }
    if (st == ATTN_OK) {
        progress_step(c->n_layer);
        part_norm(c, &m->final_norm, x + at, (int)rows, r->final + at, threads);
        if (r->top > 0)
            st = run_logits(m, r, from, logits, threads, err);
    }
    progress_end();
    return st;
}

static enum attn_status
forward(const struct decoder_model *m, const int *ids, int n, int top, const struct decoder_knobs *k,
        struct decoder_run *prev, int from, int room, struct decoder_run *r, struct attn_error *err)
{
    const struct decoder_config *c = &m->cfg;
    const bool in_place = prev != NULL && from > 0 && prev->arena != NULL && prev->cap >= n;
    struct aside aside;
    enum attn_status st;

    memset(r, 0, sizeof *r);
    if (n < 1 || n > c->n_positions)
        return attn_fail(err, ATTN_ELIMIT, "%d tokens: the model reads 1 to %d (n_positions)", n,
                         c->n_positions);
    if (top < 0 || top > decoder_outputs(c))
        top = top < 0 ? 0 : decoder_outputs(c);
    for (int i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= c->vocab_size)
            return attn_fail(err, ATTN_EVALUE, "token %d has id %d; the vocabulary has %d", i,
                             ids[i], c->vocab_size);
    if (in_place) {
        /* The new rows are computed where prev's were: its rows from `from` on put aside. */
        if (aside_save(c, prev, from, &aside) != 0)
            return attn_fail(err, ATTN_ENOMEM, "out of memory for an edit of %d tokens", n);
        if (adopt(c, prev, n, r) != 0) {
            aside_free(&aside);
            return attn_fail(err, ATTN_ENOMEM, "out of memory for an edit of %d tokens", n);
        }
    } else {
        const int cap = n + room < c->n_positions ? n + room : c->n_positions;
        if (run_carve(c, n, cap, top, r) != 0)
            return attn_fail(err, ATTN_ENOMEM, "out of memory for the stages of %d tokens", n);
        if (prev != NULL && from > 0 && take_rows(c, prev, from, r) != 0) {
            decoder_run_destroy(r);
            return attn_fail(err, ATTN_ENOMEM, "out of memory for the stages of %d tokens", n);
        }
    }
    st = run_layers(m, ids, from, k, r, err);
    if (in_place) {
        if (st != ATTN_OK) {
            unadopt(r);
            aside_restore(c, prev, from, &aside);
            return st;
        }
        aside_free(&aside);
        /* prev's memory is r's now: what prev had of its own is freed, the rest forgotten. */
        free(prev->layers);
        free(prev->divisors);
        free(prev->shown_data);
        memset(prev, 0, sizeof *prev);
        return ATTN_OK;
    }
    if (st != ATTN_OK)
        decoder_run_destroy(r);
    return st;
}

enum attn_status
decoder_forward(const struct decoder_model *m, const int *ids, int n, int top,
                const struct decoder_knobs *k, struct decoder_run *r, struct attn_error *err)
{
    return forward(m, ids, n, top, k, NULL, 0, 0, r, err);
}

int
decoder_common_rows(const struct decoder_run *prev, const int *prev_ids, const int *ids, int n)
{
    int from = 0;

    while (from < n && from < prev->n && prev_ids[from] == ids[from])
        from++;
    return from;
}

enum attn_status
decoder_forward_from(const struct decoder_model *m, const int *ids, int n, int top,
                     const struct decoder_knobs *k, struct decoder_run *prev, int from,
                     struct decoder_run *r, struct attn_error *err)
{
    const bool causal = k == NULL || k->causal;

    /* Without the mask every row reads every key; a different top changes every row's list. */
    if (prev == NULL || !causal || prev->top != top || from > prev->n || from > n || from < 0)
        from = 0;
    /* At least the last row is computed (a run of no new rows is a copy: the same thing). */
    if (from >= n)
        from = n - 1;
    return forward(m, ids, n, top, k, from > 0 ? prev : NULL, from > 0 ? from : 0, DECODER_ROOM,
                   r, err);
}

void
decoder_run_destroy(struct decoder_run *r)
{
    if (r->arena_map != NULL)
        spare_give(r->arena_map, r->arena_map_bytes);
    free(r->layers);
    free(r->top_ids);
    free(r->divisors);
    free(r->shown_data);
    memset(r, 0, sizeof *r);
}

/* ------------------------------------------- the scores and weights, when asked for */

/*
 * One head's (n, n) scores into sc and weights into w; the masked and
 * scaled scores into masked and scaled, or (NULL) into scratch's 2n floats.
 */
static void
head_attention(const struct decoder_model *m, const struct decoder_run *r, int layer, int head,
               float *sc, float *w, float *masked, float *scaled, float *scratch)
{
    const int n = r->n;
    const int C = m->cfg.n_embd;
    const int hd = C / m->cfg.n_head;
    const struct decoder_layer_stages *s = &r->layers[layer];

    linalg_gemm_nt(n, n, hd, s->q + (size_t)head * hd, C, s->k + (size_t)head * hd, C, sc, n);
    for (int i = 0; i < n; i++) {
        const size_t row = (size_t)i * (size_t)n;
        rowops_softmax(sc + row, masked != NULL ? masked + row : scratch,
                       scaled != NULL ? scaled + row : scratch + n, w + row, n, 0,
                       r->causal ? i + 1 : n, r->divisors[layer]);
    }
}

void
decoder_head_weights(const struct decoder_model *m, const struct decoder_run *r, int layer,
                     int head, float *w, float *scratch)
{
    head_attention(m, r, layer, head, scratch + 2 * (size_t)r->n, w, NULL, NULL, scratch);
}

struct layer_job {
    const struct decoder_model *m;
    const struct decoder_run *r;
    int layer;
    float *masked, *scaled, *scratch;
};

static void
layer_heads(void *ctx, int h0, int h1)
{
    const struct layer_job *j = ctx;
    const size_t hnn = (size_t)j->r->n * (size_t)j->r->n;

    for (int h = h0; h < h1; h++)
        head_attention(j->m, j->r, j->layer, h, j->r->shown_data + (size_t)h * hnn,
                       j->r->shown_data + (size_t)(j->m->cfg.n_head + h) * hnn,
                       j->masked != NULL ? j->masked + (size_t)h * hnn : NULL,
                       j->scaled != NULL ? j->scaled + (size_t)h * hnn : NULL,
                       j->scratch + (size_t)h * 2 * (size_t)j->r->n);
}

enum attn_status
decoder_layer_attention(const struct decoder_model *m, struct decoder_run *r, int layer,
                        float *masked, float *scaled, struct attn_error *err)
{
    const struct decoder_config *c = &m->cfg;
    const size_t need = shown_floats(c, r->n);
    const size_t hnn = (size_t)r->n * (size_t)r->n;
    struct layer_job job = { m, r, layer, masked, scaled, NULL };

    if (layer < 0 || layer >= c->n_layer || r->layers == NULL)
        return attn_fail(err, ATTN_EVALUE, "layer %d: the model has %d", layer, c->n_layer);
    if (r->shown >= 0)
        r->layers[r->shown].scores = r->layers[r->shown].weights = NULL;
    r->shown = -1;
    if (r->shown_floats < need) {
        float *more = realloc(r->shown_data, need * sizeof *more);
        if (more == NULL)
            return attn_fail(err, ATTN_ENOMEM, "out of memory for the weights of layer %d", layer);
        r->shown_data = more;
        r->shown_floats = need;
    }
    if (masked == NULL || scaled == NULL) {
        job.scratch = malloc((2 * (size_t)c->n_head * (size_t)r->n + 1) * sizeof *job.scratch);
        if (job.scratch == NULL)
            return attn_fail(err, ATTN_ENOMEM, "out of memory for the weights of layer %d", layer);
    }
    parallel_for(c->n_head, 2L * r->n * r->n * (c->n_embd / c->n_head), parallel_threads(),
                 layer_heads, &job);
    free(job.scratch);
    r->shown = layer;
    r->layers[layer].scores = r->shown_data;
    r->layers[layer].weights = r->shown_data + (size_t)c->n_head * hnn;
    return ATTN_OK;
}

enum attn_status
decoder_logit_lens(const struct decoder_model *m, const struct decoder_run *r, int position, int k,
                   int *ids, float *probs, struct attn_error *err)
{
    const struct decoder_config *c = &m->cfg;
    const int C = c->n_embd;
    const int outputs = decoder_outputs(c);
    float *x = malloc(((size_t)C + LOGIT_SLICE) * sizeof *x);
    float *logits = x + C;

    if (position < 0 || position >= r->n || k < 1 || k > outputs) {
        free(x);
        return attn_fail(err, ATTN_EVALUE, "position %d, %d tokens: out of range", position, k);
    }
    if (x == NULL)
        return attn_fail(err, ATTN_ENOMEM, "out of memory for the logit lens");
    for (int l = 0; l < c->n_layer; l++) {
        struct next_tokens nt = { -INFINITY, 0.0 };
        int *lid = ids + (size_t)l * k;
        float *lp = probs + (size_t)l * k;
        /* This layer's stream at the position, read as if it were the last: ln_f, then wte. */
        part_norm(c, &m->final_norm, r->layers[l].resid2 + (size_t)position * C, 1, x, 1);
        for (int t = 0; t < k; t++)
            lid[t] = -1;
        for (int v0 = 0; v0 < outputs; v0 += LOGIT_SLICE) {
            const int vb = outputs - v0 < LOGIT_SLICE ? outputs - v0 : LOGIT_SLICE;
            linalg_gemm_nt(1, vb, C, x, C, m->lm_head + (size_t)v0 * C, C, logits, vb);
            add_head_bias(m, logits, 1, v0, vb);
            fold_logits(logits, v0, vb, k, &nt, lid, lp);
        }
        for (int t = 0; t < k; t++)
            lp[t] = (float)((double)rowops_exp(lp[t] - nt.max) / nt.sum);
    }
    free(x);
    return ATTN_OK;
}

/* The linears of block b, for packing. */
static struct decoder_linear *
block_linear(struct decoder_block *b, int i)
{
    struct decoder_linear *all[] = { &b->q, &b->k, &b->v, &b->o, &b->up, &b->down };
    return i < 6 ? all[i] : NULL;
}

static void
unpack(struct decoder_model *m)
{
    for (int l = 0; m->blocks != NULL && l < m->cfg.n_layer; l++)
        for (int i = 0; i < 6; i++)
            linalg_packed_destroy(&block_linear(&m->blocks[l], i)->packed);
    linalg_packed_destroy(&m->head_packed);
}

size_t
decoder_pack_bytes(const struct decoder_config *c)
{
    const size_t C = (size_t)c->n_embd, F = (size_t)c->n_inner;
    const size_t per_layer = 4 * linalg_pack_floats((int)C, (int)C) +
                             linalg_pack_floats((int)F, (int)C) + linalg_pack_floats((int)C, (int)F);

    return ((size_t)c->n_layer * per_layer + linalg_pack_floats(decoder_outputs(c), (int)C)) *
           sizeof(float);
}

bool
decoder_pack(struct decoder_model *m)
{
    const int C = m->cfg.n_embd;

    for (int l = 0; l < m->cfg.n_layer; l++)
        for (int i = 0; i < 6; i++) {
            struct decoder_linear *d = block_linear(&m->blocks[l], i);
            if (d->packed.data == NULL &&
                linalg_pack(&d->packed, d->out, d->in, d->w, d->ld, d->out_in) != 0) {
                unpack(m);
                return false;
            }
        }
    if (m->head_packed.data == NULL &&
        linalg_pack(&m->head_packed, decoder_outputs(&m->cfg), C, m->lm_head, C, 1) != 0) {
        unpack(m);
        return false;
    }
    return true;
}

void
decoder_destroy(struct decoder_model *m)
{
    unpack(m);
    if (m->weights_map != NULL)
        munmap(m->weights_map, m->weights_map_bytes);
    free(m->blocks);
    memset(m, 0, sizeof *m);
}
