/*
 * decoder_forward.c: a decoder's forward pass from its parts, every stage
 * an edit and the next layer read kept (see decoder.h).
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
#include "attnscope/decoder/mixer.h"
#include "attnscope/decoder/parts.h"
#include "attnscope/decoder/run.h"
#include "attnscope/formats/tensor.h"
#include "attnscope/kernels/linalg.h"
#include "attnscope/kernels/parallel.h"
#include "attnscope/kernels/rowops.h"
#include "decoder_internal.h"

/* The vocabulary is scored in slices of run.h's size. */
#define LOGIT_SLICE RUN_LOGIT_SLICE

/* A row's running softmax and top k, over the slices of the vocabulary seen so far. */
struct next_tokens {
    float max;  /* the largest logit so far */
    double sum; /* sum of exp(logit - max) so far */
};

/* fold_logits for the positions begin..end of a slice. */
struct fold_job {
    const float *logits;
    int first, count, top;
    struct next_tokens *nt;
    int *ids;
    float *best;
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

/*
 * Adds the head's bias (a classifier's) to rows of count logits from output
 * first; or caps them (final_logit_softcapping: cap tanh(logit / cap), each
 * step in float32 as Hugging Face's Gemma takes them).
 */
static void
finish_logits(const struct decoder_model *m, float *logits, int rows, int first, int count)
{
    if (m->cfg.final_softcap > 0.0) {
        const float cap = (float)m->cfg.final_softcap;
        for (size_t e = 0; e < (size_t)rows * (size_t)count; e++)
            logits[e] = tanhf(logits[e] / cap) * cap;
    }
    if (m->head_bias == NULL)
        return;
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < count; j++)
            logits[(size_t)i * (size_t)count + (size_t)j] += m->head_bias[first + j];
}

void
decoder_run_logits(const struct decoder_model *m, const struct decoder_run *r, int row0, int rows,
                   int v0, int vb, float *logits, int threads)
{
    decoder_head_logits(m, r->final + (size_t)row0 * (size_t)m->cfg.d_model, rows, v0, vb, logits,
                        threads);
    finish_logits(m, logits, rows, v0, vb);
}

float
decoder_divisor(const struct decoder_model *m, const struct decoder_knobs *k, int layer)
{
    /* sqrt(head size), or Gemma's sqrt(query_pre_attn_scalar). */
    const double by = m->cfg.attn_scalar > 0.0 ? m->cfg.attn_scalar
                                               : (double)decoder_layer_head_dim(&m->cfg, layer);
    const double root = m->cfg.scale_attn_weights ? sqrt(by) : 1.0;
    const double own = m->cfg.scale_by_layer ? root * (double)(layer + 1) : root;

    if (k == NULL)
        return (float)own;
    /* As the book's family divides: sqrt(d_k) * T worked out in double, used in float. */
    return (float)((k->scaled ? own : 1.0) * k->temperature);
}

static void
fold_rows(void *ctx, int begin, int end)
{
    const struct fold_job *j = ctx;

    for (int i = begin; i < end; i++)
        fold_logits(j->logits + (size_t)i * j->count, j->first, j->count, j->top, &j->nt[i],
                    j->ids + (size_t)i * j->top, j->best + (size_t)i * j->top);
}


/*
 * The top next tokens of positions row0 .. row0 + n - 1: the logits
 * through lm_head, a slice of the vocabulary at a time, folded into each
 * row's running softmax and top k.  ATTN_ESTOPPED when a stop is asked
 * for (the rows' ids then those of no token, -1).
 */
static enum attn_status
run_logits(const struct decoder_model *m, struct decoder_run *r, int row0, int n, float *logits,
           int threads, struct attn_error *err)
{
    const struct decoder_config *c = &m->cfg;
    const int top = r->top;
    const int C = c->d_model;
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
        decoder_head_logits(m, final, n, v0, vb, logits, threads);
        finish_logits(m, logits, n, v0, vb);
        if (r->last_logits != NULL && row0 + n == r->n)
            memcpy(r->last_logits + v0, logits + (size_t)(n - 1) * (size_t)vb,
                   (size_t)vb * sizeof *logits);
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

enum attn_status
decoder_run_next_tokens(const struct decoder_model *m, struct decoder_run *r, struct attn_error *err)
{
    enum attn_status st = ATTN_OK;
    float *logits, *scratch;

    if (r->top <= 0)
        return ATTN_OK;
    run_scratch(&m->cfg, r, &logits, &scratch);
    (void)scratch;
    for (int i = 0; i < r->n && st == ATTN_OK;) {
        int end = i;
        while (end < r->n && r->top_ids[(size_t)end * (size_t)r->top] == DECODER_NEXT_LATER)
            end++;
        if (end == i) {
            i++;
            continue;
        }
        progress_begin("reading the next tokens", 1);
        st = run_logits(m, r, i, end - i, logits, parallel_threads(), err);
        progress_end();
        if (st != ATTN_OK)
            for (int row = i; row < end; row++)
                r->top_ids[(size_t)row * (size_t)r->top] = DECODER_NEXT_LATER;
        i = end;
    }
    return st == ATTN_OK ? decoder_check_files(m, err) : st;
}

/* The knobs the forward runs with, kept in r for the layers made again later; -1: no memory. */
static int
run_knobs(const struct decoder_model *m, const struct decoder_knobs *k, struct decoder_run *r)
{
    const struct decoder_config *c = &m->cfg;
    const size_t heads = (size_t)c->n_layer * (size_t)decoder_head_slots(c);

    r->next_later = k != NULL && k->next_later;
    r->causal = k == NULL || k->causal;
    r->sinks_off = k != NULL && k->sinks_off;
    r->last_logits = k != NULL ? k->last_logits : NULL;
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
    free(r->experts_off);
    r->experts_off = NULL;
    if (k != NULL && k->experts_off != NULL && c->moe.n_experts > 0) {
        const size_t all = (size_t)c->n_layer * (size_t)c->moe.n_experts;
        r->experts_off = malloc(all);
        if (r->experts_off == NULL)
            return -1;
        memcpy(r->experts_off, k->experts_off, all);
    }
    return 0;
}

/*
 * Block layer over rows from .. n - 1 of s, its input x (n, C); the rows
 * before are in s.  Pre-norm (GPT-2, Llama): a norm before attention and
 * before the MLP; sandwich (Gemma 3): those and a norm of each one's output
 * before its residual add; post-norm (Olmo 3): only the latter.
 */
void
decoder_run_block(const struct decoder_model *m, const struct decoder_run *r, int layer, const float *x,
          int from, struct decoder_layer_stages *s, float *scratch, int threads)
{
    const struct decoder_config *c = &m->cfg;
    const struct decoder_block *b = &m->blocks[layer];
    const bool pre = decoder_pre_norms(c), post = decoder_post_norms(c);
    const int C = c->d_model;
    const int n = r->n;
    const size_t at = (size_t)from * (size_t)C;
    const size_t rows = (size_t)(n - from);
    const struct decoder_mixer *mixer = decoder_mixer_of(c, layer);
    /*
     * (a mixer that keeps no rows reads them all: every row normed for it;
     * one with a state of its own goes on from it when it has read the rows
     * before from, else makes it again from row 0)
     */
    const int mix_from =
        mixer->whole || (mixer->keeps_state && r->layers[layer].kept_rows != from) ? 0 : from;
    const size_t mix_at = (size_t)mix_from * (size_t)C;
    const struct part_attention_args attention = {
        m, c, b, pre ? s->norm1 : x, n, r->causal, r->divisors[layer],
        r->ablated != NULL ? r->ablated + (size_t)layer * (size_t)decoder_head_slots(c) : NULL,
        scratch, part_attention_scratch(r->cap),
        mix_from, layer, r->causal ? decoder_window(c, layer) : 0,
        r->sinks_off ? NULL : b->sinks,
        r->layers[layer].kept, &r->layers[layer].kept_rows,
    };
    const float *mlp_in;

    if (pre)
        part_norm(c, &b->norm1, x + mix_at, n - mix_from, s->norm1 + mix_at, threads);
    mixer->forward(&attention, s, threads);
    if (post)
        part_norm(c, &b->attn_post, s->attn + at, (int)rows, s->attn_normed + at, threads);
    part_residual(x + at, (post ? s->attn_normed : s->attn) + at, rows * C, s->resid1 + at);
    if (pre)
        part_norm(c, &b->norm2, s->resid1 + at, (int)rows, s->norm2 + at, threads);
    mlp_in = pre ? s->norm2 : s->resid1;
    if (decoder_sparse(c, layer)) {
        const size_t ae = (size_t)from * (size_t)c->moe.n_experts;
        part_moe(c, b, mlp_in + at, (int)rows,
                 r->experts_off != NULL ? r->experts_off + (size_t)layer * c->moe.n_experts : NULL,
                 s->router_logits + ae, s->router + ae, s->routed + ae, s->mlp + at, threads);
        if (c->moe.d_shared > 0)
            part_shared_expert(c, b, mlp_in + at, (int)rows, s->shared_gate + from,
                               s->shared + at, s->mlp + at, threads);
    } else
    {
        const size_t F = (size_t)decoder_layer_mlp(c, layer);
        part_mlp(c, b, layer, mlp_in + at, (int)rows,
                 s->gate != NULL ? s->gate + (size_t)from * F : NULL, s->up + (size_t)from * F,
                 s->act + (size_t)from * F, s->mlp + at, threads);
    }
    if (post)
        part_norm(c, &b->mlp_post, s->mlp + at, (int)rows, s->mlp_normed + at, threads);
    part_residual(s->resid1 + at, (post ? s->mlp_normed : s->mlp) + at, rows * C,
                  s->resid2 + at);
    if (c->lw.ple_dim > 0 || c->lw.layer_scalar) /* (Gemma 4's per-layer embedding and scalar) */
        part_layer_out(m, layer, r->ple, n, s, from, threads);
}

/* The input of layer: the embeddings, or the layer before's output. */
const float *
decoder_layer_input(const struct decoder_run *r, int layer)
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
    const int C = c->d_model;
    const int n = r->n;
    const int threads = parallel_threads();
    const size_t at = (size_t)from * (size_t)C;
    float *logits;
    float *scratch;
    enum attn_status st = ATTN_OK;

    run_scratch(c, r, &logits, &scratch);
    if (layer0 == 0) {
        part_positions(m, ids + from, n - from, r->tok + at, r->pos + at, r->embed + at, from);
        if (c->lw.ple_dim > 0 &&
            part_ple_inputs(m, ids + from, n - from, r->embed + at,
                            r->ple + (size_t)from * (size_t)c->n_layer * (size_t)c->lw.ple_dim,
                            threads) != 0)
            return attn_fail(err, ATTN_ENOMEM, "out of memory for the per-layer embeddings");
    }
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
        decoder_run_block(m, r, l, decoder_layer_input(r, l), from, &s, scratch, threads);
    }
    if (st == ATTN_OK) {
        progress_step(c->n_layer);
        part_norm(c, &m->final_norm, r->layers[c->n_layer - 1].resid2 + at, n - from,
                  r->final + at, threads);
        if (r->top > 0) {
            /* (with next_later, the rows before the last left for decoder_run_next_tokens) */
            const int later = r->next_later && n - 1 > from ? n - 1 - from : 0;
            for (int i = from; i < from + later; i++)
                r->top_ids[(size_t)i * (size_t)r->top] = DECODER_NEXT_LATER;
            st = run_logits(m, r, from + later, n - from - later, logits, threads, err);
        }
    }
    progress_end();
    run_expose(c, r);
    /* (weights read from a file that shrank meanwhile were zeros: the run is refused) */
    return st == ATTN_OK ? decoder_check_files(m, err) : st;
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
    /* (layer0 == n_layer: no layer made, only the final norm and the head from `from` on) */
    const bool none_new = layer0 == c->n_layer;
    const bool in_place = prev != NULL && from > 0 && (layer0 == 0 || none_new) &&
                          prev->arena != NULL && prev->cap >= n;
    struct run_aside aside;
    enum attn_status st;

    memset(r, 0, sizeof *r);
    if (n < 1 || n > c->n_ctx)
        return attn_fail(err, ATTN_ELIMIT, "%d tokens: the model reads 1 to %d (n_positions)", n,
                         c->n_ctx);
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
        /*
         * An append past prev's room copies every row it keeps: the room then
         * grows with the text (half of it more), so that a text written token
         * by token is copied a logarithmic number of times, not every 64.
         */
        if (prev != NULL && from > 0 && (layer0 == 0 || none_new) && room < n / 2)
            room = n / 2;
        const int cap = n + room < c->n_ctx ? n + room : c->n_ctx;
        /* (a lean run only when no row is taken from prev) */
        /* (and not with keys and values shared: a layer reads an earlier one's, kept) */
        const bool lean = k != NULL && k->lean && prev == NULL && c->lw.kv_shared == 0;
        if (run_carve(c, n, cap, top, lean, r) != 0)
            return attn_fail(err, ATTN_ENOMEM, "out of memory for the stages of %d tokens", n);
        r->shown = lean ? -1 : 0; /* the first layer, where the view and --print open */
        /* With layer0, every row of prev (the layers from layer0 on are made again over it). */
        if (run_knobs(m, k, r) != 0 ||
            (prev != NULL && (from > 0 || layer0 > 0) &&
             run_take_rows(c, prev, layer0 > 0 ? n : from, r) != 0)) {
            decoder_run_destroy(r);
            return attn_fail(err, ATTN_ENOMEM, "out of memory for the stages of %d tokens", n);
        }
    }
    st = run_layers(m, ids, layer0 > 0 && !none_new ? 0 : from, layer0, r, err);
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

    /*
     * Without the mask every row reads every key; a different top changes every row's list;
     * the sinks switched on or off change every row.
     */
    if (prev == NULL || prev->lean || !causal || prev->top != top || from > prev->n || from > n ||
        from < 0 || prev->sinks_off != (k != NULL && k->sinks_off))
        from = 0;
    /*
     * No new rows: every layer's rows are prev's, a mixer's state has read
     * them all, and only the last row's final norm and head are made again
     * (its logits for a writing: the bits prev made).  Remaking the last row
     * through the layers would send a mixer whose state has read it back to
     * row 0.
     */
    const int layer0 = from >= n && n > 1 && prev != NULL && prev->n == n ? m->cfg.n_layer : 0;
    if (from >= n)
        from = n - 1;
    return forward(m, ids, n, top, k, from > 0 ? prev : NULL, from > 0 ? from : 0,
                   from > 0 ? layer0 : 0,
                   k == NULL || k->room == 0 ? DECODER_ROOM : k->room > 0 ? k->room : 0, r, err);
}

/* The first layer whose flags (per of them a layer, NULL: all 0) differ between a and b. */
static int
first_change(const unsigned char *a, const unsigned char *b, int layers, int per)
{
    for (int l = 0; l < layers; l++)
        for (int k = 0; k < per; k++) {
            const size_t at = (size_t)l * (size_t)per + (size_t)k;
            if ((a != NULL && a[at]) != (b != NULL && b[at]))
                return l;
        }
    return layers;
}

int
decoder_first_ablated_change(const struct decoder_config *c, const unsigned char *a,
                             const unsigned char *b)
{
    return first_change(a, b, c->n_layer, decoder_head_slots(c));
}

int
decoder_first_expert_change(const struct decoder_config *c, const unsigned char *a,
                            const unsigned char *b)
{
    return first_change(a, b, c->n_layer, c->moe.n_experts);
}

enum attn_status
decoder_forward_layers(const struct decoder_model *m, const int *ids, int n, int top,
                       const struct decoder_knobs *k, const struct decoder_run *prev, int layer,
                       struct decoder_run *r, struct attn_error *err)
{
    /* Another length or top: nothing of prev's is this run's. */
    if (prev == NULL || prev->lean || prev->n != n || prev->top != top || layer < 0)
        layer = 0;
    if (layer >= m->cfg.n_layer) /* (no layer changed: the last made again, the same bits) */
        layer = m->cfg.n_layer - 1;
    return forward(m, ids, n, top, k, layer > 0 ? (struct decoder_run *)prev : NULL, 0, layer,
                   DECODER_ROOM, r, err);
}

enum attn_status
decoder_logit_lens(const struct decoder_model *m, const struct decoder_run *r, int position, int k,
                   int *ids, float *probs, struct attn_error *err)
{
    const struct decoder_config *c = &m->cfg;
    const int C = c->d_model;
    const int L = c->n_layer;
    const int outputs = decoder_outputs(c);
    const int threads = parallel_threads();
    float *x;
    float *logits;
    struct next_tokens *nt;

    if (position < 0 || position >= r->n || k < 1 || k > outputs)
        return attn_fail(err, ATTN_EVALUE, "position %d, %d tokens: out of range", position, k);
    if (r->lean)
        return attn_fail(err, ATTN_EVALUE, "the logit lens reads every layer's output; this run "
                                           "kept none (made for the next tokens only)");
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
        decoder_head_logits(m, x, L, v0, vb, logits, threads);
        finish_logits(m, logits, L, v0, vb);
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
    return decoder_check_files(m, err);
}
