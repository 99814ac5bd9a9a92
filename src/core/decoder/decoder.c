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
#include "attnscope/files/tensor.h"
#include "attnscope/kernels/linalg.h"
#include "attnscope/kernels/parallel.h"
#include "attnscope/kernels/rowops.h"

/* The vocabulary is scored in slices of run.h's size. */
#define LOGIT_SLICE RUN_LOGIT_SLICE

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

enum attn_status
decoder_config_check(const struct decoder_config *c, const char *source, const char *from,
                     struct attn_error *err)
{
    const struct {
        int value;
        const char *what;
    } counts[] = {
        { c->n_layer, "layers" },        { c->n_head, "query heads" },
        { c->n_embd, "columns of width" }, { c->vocab_size, "tokens in the vocabulary" },
        { c->n_positions, "positions" }, { c->n_inner, "columns in the MLP" },
    };
    const int kv = decoder_kv_heads(c);
    int hd;

    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
        if (counts[i].value < 1)
            return attn_fail(err, ATTN_EPARSE, "%s: %d %s (from %s): a model has at least one",
                             source, counts[i].value, counts[i].what, from);
    if (c->n_kv_head < 0 || kv < 1)
        return attn_fail(err, ATTN_EPARSE, "%s: %d key heads (from %s): a model has at least one",
                         source, c->n_kv_head, from);
    if (c->n_head % kv != 0)
        return attn_fail(err, ATTN_EPARSE,
                         "%s: %d query heads do not share %d key heads evenly (from %s)", source,
                         c->n_head, kv, from);
    if (c->head_dim < 0 || (c->head_dim == 0 && c->n_embd % c->n_head != 0))
        return attn_fail(err, ATTN_EPARSE,
                         "%s: the width %d is not a multiple of the %d heads, and no head size "
                         "is given (from %s)",
                         source, c->n_embd, c->n_head, from);
    hd = decoder_head_dim(c);
    if (hd < 1)
        return attn_fail(err, ATTN_EPARSE, "%s: head size %d (from %s): a head has a column",
                         source, hd, from);
    /* RoPE's frequencies are kept in the model, one per pair of a head's columns. */
    if (c->positions == DECODER_POSITIONS_ROPE && (hd % 2 != 0 || hd > DECODER_HEAD_DIM_MAX))
        return attn_fail(err, ATTN_EPARSE,
                         "%s: head size %d (from %s): RoPE turns pairs of columns, of a head of "
                         "at most %d",
                         source, hd, from, DECODER_HEAD_DIM_MAX);
    if ((int64_t)c->n_head * hd > INT32_MAX / 4)
        return attn_fail(err, ATTN_EPARSE, "%s: %d heads of %d columns (from %s) is too wide",
                         source, c->n_head, hd, from);
    return ATTN_OK;
}

int
decoder_head_dim(const struct decoder_config *c)
{
    return c->head_dim > 0 ? c->head_dim : c->n_embd / c->n_head;
}

int
decoder_kv_heads(const struct decoder_config *c)
{
    return c->n_kv_head > 0 ? c->n_kv_head : c->n_head;
}

int
decoder_kv_head_of(const struct decoder_config *c, int h)
{
    /* Hugging Face's repeat_kv: key head j is repeated for query heads j g .. j g + g - 1. */
    return h / (c->n_head / decoder_kv_heads(c));
}

int
decoder_q_width(const struct decoder_config *c)
{
    return c->n_head * decoder_head_dim(c);
}

int
decoder_kv_width(const struct decoder_config *c)
{
    return decoder_kv_heads(c) * decoder_head_dim(c);
}

void
decoder_rope_frequencies(const struct decoder_config *c, float *freq)
{
    const int d = decoder_head_dim(c);
    const struct decoder_rope_scaling *sc = &c->rope_scaling;

    for (int t = 0; t < d / 2; t++) {
        /* 1 / theta^(2t / d), each step in float32 as Hugging Face's Llama computes it. */
        const float inv = 1.0f / powf((float)c->rope_theta, (float)(2 * t) / (float)d);
        freq[t] = inv;
        if (sc->llama3) {
            /* Llama 3's stretch: long wavelengths' frequencies divided by factor, short ones
               kept, the ones between blended (Hugging Face's _compute_llama3_parameters). */
            const float factor = (float)sc->factor;
            const float wavelen = (float)(2.0 * M_PI) / inv;
            const double low_wavelen = sc->original_max / sc->low_freq_factor;
            const double high_wavelen = sc->original_max / sc->high_freq_factor;
            const float low = (wavelen > (float)low_wavelen) ? inv / factor : inv;
            if (!(wavelen < (float)high_wavelen) && !(wavelen > (float)low_wavelen)) {
                const float smooth =
                    ((float)sc->original_max / wavelen - (float)sc->low_freq_factor) /
                    (float)(sc->high_freq_factor - sc->low_freq_factor);
                freq[t] = (1.0f - smooth) * low / factor + smooth * low;
            } else
                freq[t] = low;
        }
    }
}

struct decoder_linear *
decoder_block_linear(struct decoder_block *b, int i)
{
    struct decoder_linear *all[DECODER_BLOCK_LINEARS] = { &b->q,    &b->k,  &b->v,   &b->o,
                                                          &b->gate, &b->up, &b->down };
    return i >= 0 && i < DECODER_BLOCK_LINEARS ? all[i] : NULL;
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
    const double root = m->cfg.scale_attn_weights ? sqrt((double)decoder_head_dim(&m->cfg)) : 1.0;
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
        if (parallel_gemm_packed(n, final, C, &m->head_packed, v0, vb, logits, vb, threads) != 0) {
            if (m->lm_head != NULL)
                parallel_gemm(true, n, vb, C, final, C, m->lm_head + (size_t)v0 * C, C, logits,
                              vb, threads);
            else if (m->lm_head16 != NULL)
                parallel_gemm_bf16(true, n, vb, C, final, C, m->lm_head16 + (size_t)v0 * C, C,
                                   logits, vb, threads);
            else /* only the pack left (decoder_release_unpacked), and it cannot serve */
                linalg_gemm_packed_plain(n, final, C, &m->head_packed, v0, vb, logits, vb);
        }
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

/* The knobs the forward runs with, kept in r for the layers made again later; -1: no memory. */
static int
run_knobs(const struct decoder_model *m, const struct decoder_knobs *k, struct decoder_run *r)
{
    const struct decoder_config *c = &m->cfg;
    const size_t heads = (size_t)c->n_layer * (size_t)c->n_head;

    r->causal = k == NULL || k->causal;
    for (int l = 0; l < c->n_layer; l++)
        r->divisors[l] = decoder_divisor(m, k, l);
    free(r->ablated);
    r->ablated = NULL;
    if (k != NULL && k->ablated != NULL) {
        r->ablated = malloc(heads);
        if (r->ablated == NULL)
            return -1;
        memcpy(r->ablated, k->ablated, heads);
    }
    return 0;
}

/* Block layer over rows from .. n - 1 of s, its input x (n, C); the rows before are in s. */
static void
run_block(const struct decoder_model *m, const struct decoder_run *r, int layer, const float *x,
          int from, struct decoder_layer_stages *s, float *scratch, int threads)
{
    const struct decoder_config *c = &m->cfg;
    const struct decoder_block *b = &m->blocks[layer];
    const int C = c->n_embd;
    const int n = r->n;
    const size_t at = (size_t)from * (size_t)C;
    const size_t rows = (size_t)(n - from);
    const struct part_attention_args attention = {
        m, c, b, s->norm1, n, r->causal, r->divisors[layer],
        r->ablated != NULL ? r->ablated + (size_t)layer * (size_t)c->n_head : NULL,
        scratch, part_attention_scratch(r->cap),
        from,
    };

    part_norm(c, &b->norm1, x + at, (int)rows, s->norm1 + at, threads);
    part_attention(&attention, s, threads);
    part_residual(x + at, s->attn + at, rows * C, s->resid1 + at);
    part_norm(c, &b->norm2, s->resid1 + at, (int)rows, s->norm2 + at, threads);
    part_mlp(c, b, s->norm2 + at, (int)rows,
             s->gate != NULL ? s->gate + (size_t)from * c->n_inner : NULL,
             s->up + (size_t)from * c->n_inner, s->act + (size_t)from * c->n_inner, s->mlp + at,
             threads);
    part_residual(s->resid1 + at, s->mlp + at, rows * C, s->resid2 + at);
}

/* The input of layer: the embeddings, or the layer before's output. */
static const float *
layer_input(const struct decoder_run *r, int layer)
{
    return layer == 0 ? r->embed : r->layers[layer - 1].resid2;
}

/*
 * The forward over rows from .. n - 1 of r, the rows before already there,
 * in the layers from layer0 on (the layers before, and the embeddings,
 * already there when layer0 > 0); the shown layer's stages in its slot,
 * the others' in the working one.  ATTN_ESTOPPED when a stop is asked for.
 */
static enum attn_status
run_layers(const struct decoder_model *m, const int *ids, int from, int layer0,
           struct decoder_run *r, struct attn_error *err)
{
    const struct decoder_config *c = &m->cfg;
    const int C = c->n_embd;
    const int n = r->n;
    const int threads = parallel_threads();
    const size_t at = (size_t)from * (size_t)C;
    float *logits;
    float *scratch;
    enum attn_status st = ATTN_OK;

    run_scratch(c, r, &logits, &scratch);
    if (layer0 == 0)
        part_positions(m, ids + from, n - from, r->tok + at, r->pos + at, r->embed + at, from);
    /* A step per layer and one for the logits: a front end shows it, and may stop it between. */
    progress_begin("running the model", c->n_layer + 1);
    for (int l = layer0; l < c->n_layer; l++) {
        struct decoder_layer_stages s;
        if (progress_stopped()) {
            st = attn_fail(err, ATTN_ESTOPPED, "stopped at layer %d of %d", l, c->n_layer);
            break;
        }
        progress_step(l);
        run_slot(c, r, l == r->shown ? RUN_SLOT_SHOWN : RUN_SLOT_WORK, l, &s);
        run_block(m, r, l, layer_input(r, l), from, &s, scratch, threads);
    }
    if (st == ATTN_OK) {
        progress_step(c->n_layer);
        part_norm(c, &m->final_norm, r->layers[c->n_layer - 1].resid2 + at, n - from,
                  r->final + at, threads);
        if (r->top > 0)
            st = run_logits(m, r, from, logits, threads, err);
    }
    progress_end();
    run_expose(c, r);
    return st;
}

/*
 * The forward, the rows before from taken from prev (in its memory when it
 * has room), or with layer0 > 0 every row of the layers before layer0 and
 * of the embeddings taken from prev (copied: prev is left as it was).
 */
static enum attn_status
forward(const struct decoder_model *m, const int *ids, int n, int top, const struct decoder_knobs *k,
        struct decoder_run *prev, int from, int layer0, int room, struct decoder_run *r,
        struct attn_error *err)
{
    const struct decoder_config *c = &m->cfg;
    const bool in_place =
        prev != NULL && from > 0 && layer0 == 0 && prev->arena != NULL && prev->cap >= n;
    struct run_aside aside;
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
        if (run_aside_save(c, prev, from, &aside) != 0)
            return attn_fail(err, ATTN_ENOMEM, "out of memory for an edit of %d tokens", n);
        if (run_adopt(c, prev, n, r) != 0 || run_knobs(m, k, r) != 0) {
            run_unadopt(r);
            run_aside_free(&aside);
            return attn_fail(err, ATTN_ENOMEM, "out of memory for an edit of %d tokens", n);
        }
    } else {
        const int cap = n + room < c->n_positions ? n + room : c->n_positions;
        if (run_carve(c, n, cap, top, r) != 0)
            return attn_fail(err, ATTN_ENOMEM, "out of memory for the stages of %d tokens", n);
        r->shown = 0; /* the first layer, where the view and --print open */
        /* With layer0, every row of prev (the layers from layer0 on are made again over it). */
        if (run_knobs(m, k, r) != 0 ||
            (prev != NULL && (from > 0 || layer0 > 0) &&
             run_take_rows(c, prev, layer0 > 0 ? n : from, r) != 0)) {
            decoder_run_destroy(r);
            return attn_fail(err, ATTN_ENOMEM, "out of memory for the stages of %d tokens", n);
        }
    }
    st = run_layers(m, ids, layer0 > 0 ? 0 : from, layer0, r, err);
    if (in_place) {
        if (st != ATTN_OK) {
            run_unadopt(r);
            run_aside_restore(c, prev, from, &aside);
            return st;
        }
        run_aside_free(&aside);
        run_carry_attention(prev, from, r); /* the shown layer's rows before from */
        run_unadopt(prev); /* its memory is r's now: only its own is freed */
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
    return forward(m, ids, n, top, k, NULL, 0, 0, 0, r, err);
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
    return forward(m, ids, n, top, k, from > 0 ? prev : NULL, from > 0 ? from : 0, 0, DECODER_ROOM,
                   r, err);
}

int
decoder_first_ablated_change(const struct decoder_config *c, const unsigned char *a,
                             const unsigned char *b)
{
    for (int l = 0; l < c->n_layer; l++)
        for (int h = 0; h < c->n_head; h++) {
            const size_t e = (size_t)l * (size_t)c->n_head + (size_t)h;
            if ((a != NULL && a[e]) != (b != NULL && b[e]))
                return l;
        }
    return c->n_layer;
}

enum attn_status
decoder_forward_layers(const struct decoder_model *m, const int *ids, int n, int top,
                       const struct decoder_knobs *k, const struct decoder_run *prev, int layer,
                       struct decoder_run *r, struct attn_error *err)
{
    /* Another length or top: nothing of prev's is this run's. */
    if (prev == NULL || prev->n != n || prev->top != top || layer < 0)
        layer = 0;
    if (layer >= m->cfg.n_layer) /* (no layer changed: the last made again, the same bits) */
        layer = m->cfg.n_layer - 1;
    return forward(m, ids, n, top, k, layer > 0 ? (struct decoder_run *)prev : NULL, 0, layer,
                   DECODER_ROOM, r, err);
}

/* ------------------------------------------- the shown layer, made when asked for */

/* Where one head's (n, n) stages go; masked and scaled NULL: into scratch's 2n floats. */
struct head_out {
    float *scores, *masked, *scaled, *weights;
};

/*
 * One head's (n, n) stages from the queries q, the first keep rows and
 * columns already there (an edit's, made in place): the columns from keep
 * on of those rows (scores; under the causal mask every one of them hidden),
 * then the rows from keep on, whole.
 */
static void
head_attention(const struct decoder_model *m, const struct decoder_run *r, int layer, int head,
               const float *q, int keep, const struct head_out *o, float *scratch)
{
    const int n = r->n;
    const int Q = decoder_q_width(&m->cfg);
    const int K = decoder_kv_width(&m->cfg);
    const int hd = decoder_head_dim(&m->cfg);
    const float *k = r->layers[layer].k + (size_t)decoder_kv_head_of(&m->cfg, head) * hd;

    q += (size_t)head * hd;
    if (keep > 0) {
        linalg_gemm_nt(keep, n - keep, hd, q, Q, k + (size_t)keep * K, K, o->scores + keep, n);
        for (int i = 0; i < keep; i++) {
            const size_t row = (size_t)i * (size_t)n;
            for (int j = keep; j < n; j++) {
                o->masked[row + j] = -INFINITY;
                o->scaled[row + j] = -INFINITY;
                o->weights[row + j] = 0.0f;
            }
        }
    }
    linalg_gemm_nt(n - keep, n, hd, q + (size_t)keep * Q, Q, k, K,
                   o->scores + (size_t)keep * (size_t)n, n);
    for (int i = keep; i < n; i++) {
        const size_t row = (size_t)i * (size_t)n;
        rowops_softmax(o->scores + row, o->masked != NULL ? o->masked + row : scratch,
                       o->scaled != NULL ? o->scaled + row : scratch + n, o->weights + row, n, 0,
                       r->causal ? i + 1 : n, r->divisors[layer]);
    }
}

void
decoder_head_weights(const struct decoder_model *m, const struct decoder_run *r, int layer,
                     int head, const float *q, float *w, float *scratch)
{
    const struct head_out o = { scratch + 2 * (size_t)r->n, NULL, NULL, w };

    head_attention(m, r, layer, head, q, 0, &o, scratch);
}

size_t
decoder_queries_floats(const struct decoder_config *c, int n)
{
    const int Q = decoder_q_width(c);

    return (size_t)n * (size_t)(Q > c->n_embd ? Q : c->n_embd);
}

void
decoder_layer_queries(const struct decoder_model *m, const struct decoder_run *r, int layer,
                      float *q, float *scratch)
{
    const struct decoder_config *c = &m->cfg;
    const struct decoder_block *b = &m->blocks[layer];
    const int threads = parallel_threads();
    const size_t count = (size_t)r->n * (size_t)decoder_q_width(c);

    if (layer == r->shown) {
        memcpy(q, r->layers[layer].q, count * sizeof *q);
        return;
    }
    part_norm(c, &b->norm1, layer_input(r, layer), r->n, scratch, threads);
    part_linear(&b->q, scratch, r->n, q, threads);
    /* QK-norm into scratch (the norm's output is read by then), RoPE back into q. */
    if (c->qk_norm || c->positions == DECODER_POSITIONS_ROPE)
        part_turn(m, &b->q_norm, q, r->n, c->n_head, 0, scratch, q, threads);
}

struct layer_job {
    const struct decoder_model *m;
    const struct decoder_run *r;
    int layer, keep;
    float *stages[RUN_ATTENTION_STAGES]; /* scores, masked, scaled, weights */
};

static void
layer_heads(void *ctx, int h0, int h1)
{
    const struct layer_job *j = ctx;
    const size_t hnn = (size_t)j->r->n * (size_t)j->r->n;

    for (int h = h0; h < h1; h++) {
        const size_t at = (size_t)h * hnn;
        const struct head_out o = { j->stages[0] + at, j->stages[1] + at, j->stages[2] + at,
                                    j->stages[3] + at };
        head_attention(j->m, j->r, j->layer, h, j->r->layers[j->layer].q, j->keep, &o, NULL);
    }
}

enum attn_status
decoder_show_layer(const struct decoder_model *m, struct decoder_run *r, int layer,
                   struct attn_error *err)
{
    const struct decoder_config *c = &m->cfg;
    const int n = r->n;
    struct decoder_layer_stages *l;
    struct layer_job job = { m, r, layer, 0, { NULL } };

    if (layer < 0 || layer >= c->n_layer || r->layers == NULL)
        return attn_fail(err, ATTN_EVALUE, "layer %d: the model has %d", layer, c->n_layer);
    if (layer != r->shown) {
        /* Not kept: the layer again from its input, every row, into the shown slot. */
        struct decoder_layer_stages s;
        float *logits, *scratch;
        run_scratch(c, r, &logits, &scratch);
        r->shown = layer;
        run_slot(c, r, RUN_SLOT_SHOWN, layer, &s);
        run_block(m, r, layer, layer_input(r, layer), 0, &s, scratch, parallel_threads());
        run_expose(c, r);
    }
    if (run_attention(c, r, layer) != 0)
        return attn_fail(err, ATTN_ENOMEM, "out of memory for the attention of layer %d", layer);
    /* Only a causal run's rows are kept by an edit (decoder_forward_from). */
    job.keep = r->causal ? r->attention_rows : 0;
    for (int a = 0; a < RUN_ATTENTION_STAGES; a++)
        job.stages[a] = r->attention + (size_t)a * (r->attention_floats / RUN_ATTENTION_STAGES);
    if (job.keep < n)
        parallel_for(c->n_head, 2L * (n - job.keep) * n * decoder_head_dim(c),
                     parallel_threads(), layer_heads, &job);
    r->attention_rows = n;
    l = &r->layers[layer];
    l->scores = job.stages[0];
    l->masked = job.stages[1];
    l->scaled = job.stages[2];
    l->weights = job.stages[3];
    return ATTN_OK;
}

enum attn_status
decoder_logit_lens(const struct decoder_model *m, const struct decoder_run *r, int position, int k,
                   int *ids, float *probs, struct attn_error *err)
{
    const struct decoder_config *c = &m->cfg;
    const int C = c->n_embd;
    const int L = c->n_layer;
    const int outputs = decoder_outputs(c);
    const int threads = parallel_threads();
    float *x;
    float *logits;
    struct next_tokens *nt;

    if (position < 0 || position >= r->n || k < 1 || k > outputs)
        return attn_fail(err, ATTN_EVALUE, "position %d, %d tokens: out of range", position, k);
    /*
     * Every layer's stream at the position, read as if it were the last
     * (ln_f, then the head), as the rows of one product: each slice of the
     * head is read (and packed, when it is not) once for all the layers.
     * Each logit is the same chain of FMAs as a layer's product alone.
     */
    x = malloc((size_t)L * ((size_t)C + LOGIT_SLICE) * sizeof *x);
    nt = malloc((size_t)L * sizeof *nt);
    if (x == NULL || nt == NULL) {
        free(x);
        free(nt);
        return attn_fail(err, ATTN_ENOMEM, "out of memory for the logit lens");
    }
    logits = x + (size_t)L * C;
    for (int l = 0; l < L; l++) {
        part_norm(c, &m->final_norm, r->layers[l].resid2 + (size_t)position * C, 1,
                  x + (size_t)l * C, 1);
        nt[l] = (struct next_tokens){ -INFINITY, 0.0 };
        for (int t = 0; t < k; t++)
            ids[(size_t)l * k + t] = -1;
    }
    for (int v0 = 0; v0 < outputs; v0 += LOGIT_SLICE) {
        const int vb = outputs - v0 < LOGIT_SLICE ? outputs - v0 : LOGIT_SLICE;
        if (parallel_gemm_packed(L, x, C, &m->head_packed, v0, vb, logits, vb, threads) != 0) {
            if (m->lm_head != NULL)
                parallel_gemm(true, L, vb, C, x, C, m->lm_head + (size_t)v0 * C, C, logits, vb,
                              threads);
            else if (m->lm_head16 != NULL)
                parallel_gemm_bf16(true, L, vb, C, x, C, m->lm_head16 + (size_t)v0 * C, C, logits,
                                   vb, threads);
            else
                linalg_gemm_packed_plain(L, x, C, &m->head_packed, v0, vb, logits, vb);
        }
        add_head_bias(m, logits, L, v0, vb);
        for (int l = 0; l < L; l++)
            fold_logits(logits + (size_t)l * vb, v0, vb, k, &nt[l], ids + (size_t)l * k,
                        probs + (size_t)l * k);
    }
    for (int l = 0; l < L; l++)
        for (int t = 0; t < k; t++)
            probs[(size_t)l * k + t] =
                (float)((double)rowops_exp(probs[(size_t)l * k + t] - nt[l].max) / nt[l].sum);
    free(x);
    free(nt);
    return ATTN_OK;
}

/* Whether block linear i is one the model uses (SwiGLU's gate only with SwiGLU). */
static bool
linear_used(const struct decoder_config *c, int i)
{
    return i != 4 || c->mlp == DECODER_MLP_SWIGLU;
}

static void
unpack(struct decoder_model *m)
{
    for (int l = 0; m->blocks != NULL && l < m->cfg.n_layer; l++)
        for (int i = 0; i < DECODER_BLOCK_LINEARS; i++)
            linalg_packed_destroy(&decoder_block_linear(&m->blocks[l], i)->packed);
    linalg_packed_destroy(&m->head_packed);
}

/* Packs l once (from its f32 or its bfloat16 copy, into a pack of the same type); 0 or -1. */
static int
pack_linear(struct decoder_linear *l)
{
    if (l->packed.data != NULL || (l->w == NULL && l->w16 == NULL))
        return 0;
    return l->w != NULL ? linalg_pack(&l->packed, l->out, l->in, l->w, l->ld, l->out_in)
                        : linalg_pack_bf16(&l->packed, l->out, l->in, l->w16, l->ld, l->out_in);
}

/* Packs the output head once, likewise. */
static int
pack_head(struct decoder_model *m)
{
    const int C = m->cfg.n_embd;

    if (m->head_packed.data != NULL || (m->lm_head == NULL && m->lm_head16 == NULL))
        return 0;
    return m->lm_head != NULL
               ? linalg_pack(&m->head_packed, decoder_outputs(&m->cfg), C, m->lm_head, C, 1)
               : linalg_pack_bf16(&m->head_packed, decoder_outputs(&m->cfg), C, m->lm_head16, C, 1);
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
        for (int i = 0; i < DECODER_BLOCK_LINEARS; i++)
            bytes += own_bytes(&decoder_block_linear(&m->blocks[l], i)->packed);
    return bytes;
}

/* The bytes of l's weights as the model holds them (0 once given back). */
static size_t
linear_bytes(const struct decoder_linear *l)
{
    const size_t values = (size_t)l->out * (size_t)l->in;

    return l->w != NULL ? values * sizeof(float) : l->w16 != NULL ? values * sizeof(uint16_t) : 0;
}

size_t
decoder_pack_transient_bytes(const struct decoder_model *m)
{
    const size_t head = (size_t)decoder_outputs(&m->cfg) * (size_t)m->cfg.n_embd *
                        (m->lm_head != NULL ? sizeof(float) : sizeof(uint16_t));
    size_t most = m->lm_head != NULL || m->lm_head16 != NULL ? head : 0;

    for (int l = 0; m->blocks != NULL && l < m->cfg.n_layer; l++) {
        size_t layer = 0;
        for (int i = 0; i < DECODER_BLOCK_LINEARS; i++)
            layer += linear_bytes(decoder_block_linear(&m->blocks[l], i));
        most = layer > most ? layer : most;
    }
    return most;
}

size_t
decoder_weights_bytes(const struct decoder_model *m)
{
    const size_t read = m->weights_used > m->weights_released ? m->weights_used - m->weights_released
                                                              : 0;

    return read + decoder_packed_bytes(m);
}

bool
decoder_pack(struct decoder_model *m)
{
    progress_begin("packing the weights", m->cfg.n_layer + 1);
    for (int l = 0; l < m->cfg.n_layer; l++) {
        for (int i = 0; i < DECODER_BLOCK_LINEARS; i++) {
            if (linear_used(&m->cfg, i) && pack_linear(decoder_block_linear(&m->blocks[l], i)) != 0) {
                unpack(m);
                progress_end();
                return false;
            }
        }
        progress_step(l + 1);
    }
    if (pack_head(m) != 0) {
        unpack(m);
        progress_end();
        return false;
    }
    progress_end();
    return true;
}

float
decoder_linear_at(const struct decoder_linear *l, int in, int out)
{
    const size_t at = l->out_in ? (size_t)out * (size_t)l->ld + (size_t)in
                                : (size_t)in * (size_t)l->ld + (size_t)out;

    if (l->w != NULL)
        return l->w[at];
    if (l->w16 != NULL)
        return tensor_bf16_to_f32(l->w16[at]);
    return linalg_packed_at(&l->packed, out, in);
}

void
decoder_token_row(const struct decoder_model *m, int id, float *row)
{
    const int C = m->cfg.n_embd;

    if (m->wte != NULL) {
        memcpy(row, m->wte + (size_t)id * (size_t)C, (size_t)C * sizeof *row);
        return;
    }
    if (m->wte16 != NULL) {
        for (int p = 0; p < C; p++)
            row[p] = tensor_bf16_to_f32(m->wte16[(size_t)id * (size_t)C + (size_t)p]);
        return;
    }
    for (int p = 0; p < C; p++) /* (the output head's pack: token id is its column id) */
        row[p] = linalg_packed_at(&m->head_packed, id, p);
}

/* Whether the bytes at p are in the weights' mapping (the model's own memory to overwrite). */
static bool
in_mapping(const struct decoder_model *m, const void *p, size_t bytes)
{
    const uintptr_t map = (uintptr_t)m->weights_map, at = (uintptr_t)p;

    return m->weights_map != NULL && at >= map && at + bytes <= map + m->weights_map_bytes;
}

/*
 * Gives back the whole pages of the bytes at w inside the weights' mapping
 * (the edges may share a page with a tensor still read); returns the bytes
 * given back.
 */
static size_t
release_bytes(const struct decoder_model *m, const void *w, size_t bytes)
{
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    uintptr_t begin = (uintptr_t)w, end = begin + bytes;

    if (!in_mapping(m, w, bytes))
        return 0; /* not in the mapping (a test's own arrays): left alone */
    begin = (begin + page - 1) / page * page;
    end = end / page * page;
    if (end <= begin || madvise((void *)begin, end - begin, MADV_DONTNEED) != 0)
        return 0;
    return end - begin;
}

/* Gives back the f32 or bfloat16 copies of layer l's packed linears (a layer's share of
   decoder_release_unpacked). */
static void
release_layer(struct decoder_model *m, int l)
{
    for (int i = 0; i < DECODER_BLOCK_LINEARS; i++) {
        struct decoder_linear *d = decoder_block_linear(&m->blocks[l], i);
        /* Its values end at its last row's last one (q, k and v share GPT-2's c_attn rows, so
           a row of ld values would reach past k's and v's). */
        const size_t values = d->out_in ? (size_t)(d->out - 1) * (size_t)d->ld + (size_t)d->in
                                        : (size_t)(d->in - 1) * (size_t)d->ld + (size_t)d->out;
        if (d->packed.data == NULL || (d->w == NULL && d->w16 == NULL))
            continue;
        if (d->w != NULL)
            m->weights_released += release_bytes(m, d->w, values * sizeof *d->w);
        else
            m->weights_released += release_bytes(m, d->w16, values * sizeof *d->w16);
        d->w = NULL;
        d->w16 = NULL;
    }
}

/*
 * The output head's own copy once it is packed: the embedding's too when
 * they are one (a tied wte; the token rows are then read from the pack).
 */
static void
release_head(struct decoder_model *m)
{
    const size_t values = (size_t)decoder_outputs(&m->cfg) * (size_t)m->cfg.n_embd;
    const bool tied = (m->wte != NULL && m->wte == m->lm_head) ||
                      (m->wte16 != NULL && m->wte16 == m->lm_head16);

    if (m->head_packed.data == NULL)
        return;
    if (m->lm_head != NULL)
        m->weights_released += release_bytes(m, m->lm_head, values * sizeof *m->lm_head);
    if (m->lm_head16 != NULL)
        m->weights_released += release_bytes(m, m->lm_head16, values * sizeof *m->lm_head16);
    if (tied)
        m->wte = NULL, m->wte16 = NULL;
    m->lm_head = NULL;
    m->lm_head16 = NULL;
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
        for (int i = 0; i < DECODER_BLOCK_LINEARS; i++) {
            const struct decoder_linear *d = decoder_block_linear(&m->blocks[l], i);
            if (d->w16 != NULL && (size_t)d->out * (size_t)d->in > most)
                most = (size_t)d->out * (size_t)d->in;
        }
    if (m->lm_head16 != NULL && (size_t)decoder_outputs(&m->cfg) * (size_t)m->cfg.n_embd > most)
        most = (size_t)decoder_outputs(&m->cfg) * (size_t)m->cfg.n_embd;
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
        for (int i = 0; all && i < DECODER_BLOCK_LINEARS; i++) {
            struct decoder_linear *d = decoder_block_linear(&m->blocks[l], i);
            if (!linear_used(c, i))
                continue;
            pack_linear_over(m, d, scratch);
            if (pack_linear(d) != 0)
                all = false;
        }
        /* (a layer at a time: GPT-2's q, k and v share one tensor's pages) */
        if (all)
            release_layer(m, l);
        progress_step(l + 1);
    }
    if (all && m->head_packed.data == NULL &&
        pack_over(m, &m->head_packed, m->lm_head16, decoder_outputs(c), c->n_embd, scratch)) {
        if (m->wte16 == m->lm_head16) /* (tied: the token rows are read from the pack) */
            m->wte16 = NULL;
        m->lm_head16 = NULL;
    }
    if (all && pack_head(m) != 0)
        all = false;
    if (all)
        release_head(m);
    free(scratch);
    progress_end();
    return all;
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
