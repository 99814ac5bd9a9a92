/*
 * gpt2_forward.c: GPT-2's forward pass, every stage kept (see gpt2.h).
 *
 * In the book's chapter-4 terms: token and position embeddings; per block
 * layer norm, the three projections, causal scaled attention per head, the
 * output projection and a residual add, layer norm, the feed-forward
 * network with GELU (the tanh approximation) and a second residual add; a
 * final layer norm, and the logits through the tied embedding, of which
 * the top few of every position are kept.  The products are linalg's, the
 * softmax rowops', so every CPU computes the same bits.
 */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <sys/mman.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/families/gpt2/gpt2.h"
#include "attnscope/kernels/linalg.h"
#include "attnscope/kernels/parallel.h"
#include "attnscope/base/progress.h"
#include "attnscope/kernels/rowops.h"

/* y (n, out) = x (n, in) W + b, W as the file stores it, on threads threads. */
static void
apply_linear(const struct gpt2_linear *l, const float *x, int n, float *y, int threads)
{
    parallel_gemm(l->out_in, n, l->out, l->in, x, l->in, l->w, l->ld, y, l->out, threads);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < l->out; j++)
            y[(size_t)i * (size_t)l->out + (size_t)j] += l->b[j];
}

/* Layer norm of each row (biased variance, eps inside the root), as torch's layer_norm. */
static void
layer_norm(const float *x, int n, int c, const float *g, const float *b, float eps, float *y)
{
    for (int i = 0; i < n; i++) {
        const float *row = x + (size_t)i * (size_t)c;
        float *out = y + (size_t)i * (size_t)c;
        double mean = 0.0;
        double var = 0.0;
        float inv;
        for (int j = 0; j < c; j++)
            mean += row[j];
        mean /= c;
        for (int j = 0; j < c; j++)
            var += (row[j] - mean) * (row[j] - mean);
        var /= c;
        inv = (float)(1.0 / sqrt(var + (double)eps));
        for (int j = 0; j < c; j++)
            out[j] = ((float)(row[j] - mean)) * inv * g[j] + b[j];
    }
}

/* One layer's attention, head by head: each head's scores, weights and context. */
struct heads_job {
    struct gpt2_layer_stages *s;
    int n, C, hd;
    bool causal;
    float divisor;
    float *scratch; /* (H, 2 n) a masked and a scaled row per head */
    const unsigned char *ablated; /* (H) 1: the head's context is zeroed, or NULL */
};

static void
attend_heads(void *ctx, int h0, int h1)
{
    const struct heads_job *j = ctx;
    const int n = j->n;

    for (int h = h0; h < h1; h++) {
        float *sc = j->s->scores + (size_t)h * n * n;
        float *w = j->s->weights + (size_t)h * n * n;
        float *rows = j->scratch + (size_t)h * 2 * n;
        linalg_gemm_nt(n, n, j->hd, j->s->q + h * j->hd, j->C, j->s->k + h * j->hd, j->C, sc, n);
        for (int i = 0; i < n; i++)
            rowops_softmax(sc + (size_t)i * n, rows, rows + n, w + (size_t)i * n, n, 0,
                           j->causal ? i + 1 : n, j->divisor);
        linalg_gemm_nn(n, j->hd, n, w, n, j->s->v + h * j->hd, j->C, j->s->context + h * j->hd,
                       j->C);
        if (j->ablated != NULL && j->ablated[h])
            for (int i = 0; i < n; i++)
                memset(j->s->context + (size_t)i * j->C + (size_t)h * j->hd, 0,
                       (size_t)j->hd * sizeof(float));
    }
}

/* GELU (rowops_gelu: the tanh approximation, Hugging Face's gelu_new) of rows begin..end. */
struct gelu_job {
    const float *x;
    float *y;
    int F;
};

static void
gelu_rows(void *ctx, int begin, int end)
{
    const struct gelu_job *j = ctx;

    rowops_gelu(j->x + (size_t)begin * j->F, j->y + (size_t)begin * j->F,
                (size_t)(end - begin) * (size_t)j->F);
}

/* Layer norm of rows begin..end. */
struct norm_job {
    const float *x;
    int c;
    const float *g, *b;
    float eps;
    float *y;
};

static void
norm_rows(void *ctx, int begin, int end)
{
    const struct norm_job *j = ctx;

    layer_norm(j->x + (size_t)begin * j->c, end - begin, j->c, j->g, j->b, j->eps,
               j->y + (size_t)begin * j->c);
}

/* Layer norm of n rows on threads threads. */
static void
layer_norm_rows(const float *x, int n, int c, const float *g, const float *b, float eps, float *y,
                int threads)
{
    struct norm_job job = { x, c, g, b, eps, y };

    parallel_for(n, 8L * c, threads, norm_rows, &job);
}

/* The vocabulary is scored in slices of this many tokens: the products pack each slice once. */
#define LOGIT_SLICE 2048

/* The floats every buffer of a run takes, in the order they are carved. */
static size_t
run_floats(const struct gpt2_config *c, int n, int top)
{
    const size_t nn = (size_t)n;
    const size_t C = (size_t)c->n_embd;
    const size_t F = (size_t)c->n_inner;
    const size_t H = (size_t)c->n_head;
    /* ln1 q k v context attn resid1 ln2 mlp resid2; scores weights; fc gelu */
    size_t per_layer = 10 * nn * C + 2 * H * nn * nn + 2 * nn * F;

    return 3 * nn * C /* tok pos embed */ + (size_t)c->n_layer * per_layer + nn * C /* final */ +
           nn * (size_t)top /* probabilities */ + nn * LOGIT_SLICE /* a slice of logits */ +
           2 * H * nn /* a masked and a scaled scratch row per head */;
}

size_t
gpt2_run_bytes(const struct gpt2_config *c, int n, int top)
{
    return run_floats(c, n, top) * sizeof(float) + ((size_t)n * (size_t)top + 1) * sizeof(int) +
           (size_t)c->n_layer * sizeof(struct gpt2_layer_stages);
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
    for (int j = 0; j < count; j++) {
        float x = logits[j];
        int at;
        if (x > nt->max) {
            nt->sum = nt->sum * (double)expf(nt->max - x) + 1.0;
            nt->max = x;
        } else {
            nt->sum += (double)expf(x - nt->max);
        }
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

float
gpt2_divisor(const struct gpt2_model *m, const struct gpt2_knobs *k, int layer)
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
 * The run's buffers, a fresh mapping of anonymous memory aligned to huge
 * pages and marked for them: every stage of every layer is written once,
 * and a 512-token forward touches 640 MB; faulting it in 4 KiB at a time
 * took a third of the forward (the kernel zeroing page after page).  The
 * numbers are the same either way.  NULL when out of memory.
 */
static float *
arena_alloc(struct gpt2_run *r, size_t bytes)
{
    const size_t len = bytes + HUGE_PAGE;
    unsigned char *map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    unsigned char *start;

    if (map == MAP_FAILED)
        return NULL;
    start = map + (HUGE_PAGE - (uintptr_t)map % HUGE_PAGE) % HUGE_PAGE;
#ifdef MADV_HUGEPAGE
    (void)madvise(start, bytes, MADV_HUGEPAGE);
#endif
    r->arena_map = map;
    r->arena_map_bytes = len;
    return (float *)(void *)start;
}

enum attn_status
gpt2_forward(const struct gpt2_model *m, const int *ids, int n, int top,
             const struct gpt2_knobs *k, struct gpt2_run *r, struct attn_error *err)
{
    const struct gpt2_config *c = &m->cfg;
    const int C = c->n_embd;
    const int F = c->n_inner;
    const int H = c->n_head;
    const int hd = C / H;
    const bool causal = k == NULL || k->causal;
    const int threads = parallel_threads();
    float *at;
    float *logits;
    float *scratch;
    const float *x;

    memset(r, 0, sizeof *r);
    if (n < 1 || n > c->n_positions)
        return attn_fail(err, ATTN_ELIMIT, "%d tokens: the model reads 1 to %d (n_positions)", n,
                         c->n_positions);
    if (top < 0 || top > c->vocab_size)
        top = top < 0 ? 0 : c->vocab_size;
    for (int i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= c->vocab_size)
            return attn_fail(err, ATTN_EVALUE, "token %d has id %d; the vocabulary has %d", i,
                             ids[i], c->vocab_size);
    r->n = n;
    r->top = top;
    r->arena = arena_alloc(r, run_floats(c, n, top) * sizeof(float));
    r->layers = calloc((size_t)c->n_layer, sizeof *r->layers);
    r->top_ids = malloc(((size_t)n * (size_t)top + 1) * sizeof *r->top_ids);
    if (r->arena == NULL || r->layers == NULL || r->top_ids == NULL) {
        gpt2_run_destroy(r);
        return attn_fail(err, ATTN_ENOMEM, "out of memory for the stages of %d tokens", n);
    }
    at = r->arena;
#define CARVE(p, count) ((p) = at, at += (size_t)(count))
    CARVE(r->tok, (size_t)n * C);
    CARVE(r->pos, (size_t)n * C);
    CARVE(r->embed, (size_t)n * C);
    for (int l = 0; l < c->n_layer; l++) {
        struct gpt2_layer_stages *s = &r->layers[l];
        CARVE(s->ln1, (size_t)n * C);
        CARVE(s->q, (size_t)n * C);
        CARVE(s->k, (size_t)n * C);
        CARVE(s->v, (size_t)n * C);
        CARVE(s->scores, (size_t)H * n * n);
        CARVE(s->weights, (size_t)H * n * n);
        CARVE(s->context, (size_t)n * C);
        CARVE(s->attn, (size_t)n * C);
        CARVE(s->resid1, (size_t)n * C);
        CARVE(s->ln2, (size_t)n * C);
        CARVE(s->fc, (size_t)n * F);
        CARVE(s->gelu, (size_t)n * F);
        CARVE(s->mlp, (size_t)n * C);
        CARVE(s->resid2, (size_t)n * C);
    }
    CARVE(r->final, (size_t)n * C);
    CARVE(r->top_probs, (size_t)n * top);
    CARVE(logits, (size_t)n * LOGIT_SLICE);
    CARVE(scratch, 2 * (size_t)H * n);
#undef CARVE

    for (int i = 0; i < n; i++) {
        memcpy(r->tok + (size_t)i * C, m->wte + (size_t)ids[i] * C, (size_t)C * sizeof(float));
        memcpy(r->pos + (size_t)i * C, m->wpe + (size_t)i * C, (size_t)C * sizeof(float));
    }
    for (size_t e = 0; e < (size_t)n * C; e++)
        r->embed[e] = r->tok[e] + r->pos[e];
    x = r->embed;
    /* A step per layer and one for the logits: a front end shows it, and may stop it between. */
    progress_begin("running the model", c->n_layer + 1);
    for (int l = 0; l < c->n_layer; l++) {
        const struct gpt2_block *b = &m->blocks[l];
        struct gpt2_layer_stages *s = &r->layers[l];

        if (progress_stopped()) {
            progress_end();
            gpt2_run_destroy(r);
            return attn_fail(err, ATTN_ESTOPPED, "stopped at layer %d of %d", l, c->n_layer);
        }
        progress_step(l);

        layer_norm_rows(x, n, C, b->ln1_g, b->ln1_b, c->eps, s->ln1, threads);
        apply_linear(&b->q, s->ln1, n, s->q, threads);
        apply_linear(&b->k, s->ln1, n, s->k, threads);
        apply_linear(&b->v, s->ln1, n, s->v, threads);
        {
            struct heads_job job = { s,       n,       C,
                                     hd,      causal,  gpt2_divisor(m, k, l),
                                     scratch, k != NULL && k->ablated != NULL
                                                  ? k->ablated + (size_t)l * (size_t)H
                                                  : NULL };
            parallel_for(H, 2L * n * n * hd, threads, attend_heads, &job);
        }
        apply_linear(&b->attn_out, s->context, n, s->attn, threads);
        for (size_t e = 0; e < (size_t)n * C; e++)
            s->resid1[e] = x[e] + s->attn[e];
        layer_norm_rows(s->resid1, n, C, b->ln2_g, b->ln2_b, c->eps, s->ln2, threads);
        apply_linear(&b->fc, s->ln2, n, s->fc, threads);
        {
            struct gelu_job job = { s->fc, s->gelu, F };
            parallel_for(n, 16L * F, threads, gelu_rows, &job);
        }
        apply_linear(&b->fc_out, s->gelu, n, s->mlp, threads);
        for (size_t e = 0; e < (size_t)n * C; e++)
            s->resid2[e] = s->resid1[e] + s->mlp[e];
        x = s->resid2;
    }
    progress_step(c->n_layer);
    layer_norm_rows(x, n, C, m->lnf_g, m->lnf_b, c->eps, r->final, threads);
    if (top > 0) {
        struct next_tokens *nt = malloc((size_t)n * sizeof *nt);
        if (nt == NULL) {
            gpt2_run_destroy(r);
            return attn_fail(err, ATTN_ENOMEM, "out of memory for the next tokens");
        }
        for (int i = 0; i < n; i++) {
            nt[i].max = -INFINITY;
            nt[i].sum = 0.0;
            for (int t = 0; t < top; t++)
                r->top_ids[(size_t)i * top + t] = -1;
        }
        /* Logits through the tied embedding, a slice of the vocabulary at a time. */
        for (int v0 = 0; v0 < c->vocab_size; v0 += LOGIT_SLICE) {
            if (progress_stopped()) {
                free(nt);
                progress_end();
                gpt2_run_destroy(r);
                return attn_fail(err, ATTN_ESTOPPED, "stopped while reading the next tokens");
            }
            const int vb = c->vocab_size - v0 < LOGIT_SLICE ? c->vocab_size - v0 : LOGIT_SLICE;
            parallel_gemm(true, n, vb, C, r->final, C, m->lm_head + (size_t)v0 * C, C, logits, vb,
                          threads);
            {
                struct fold_job job = { logits, v0, vb, top, nt, r->top_ids, r->top_probs };
                parallel_for(n, 4L * vb, threads, fold_rows, &job);
            }
        }
        for (int i = 0; i < n; i++)
            for (int t = 0; t < top; t++) {
                float *pr = &r->top_probs[(size_t)i * top + t];
                *pr = (float)((double)expf(*pr - nt[i].max) / nt[i].sum);
            }
        free(nt);
    }
    progress_end();
    return ATTN_OK;
}

void
gpt2_run_destroy(struct gpt2_run *r)
{
    if (r->arena_map != NULL)
        munmap(r->arena_map, r->arena_map_bytes);
    free(r->layers);
    free(r->top_ids);
    memset(r, 0, sizeof *r);
}

enum attn_status
gpt2_logit_lens(const struct gpt2_model *m, const struct gpt2_run *r, int position, int k,
                int *ids, float *probs, struct attn_error *err)
{
    const struct gpt2_config *c = &m->cfg;
    const int C = c->n_embd;
    float *x = malloc(((size_t)C + LOGIT_SLICE) * sizeof *x);
    float *logits = x + C;

    if (position < 0 || position >= r->n || k < 1 || k > c->vocab_size) {
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
        layer_norm(r->layers[l].resid2 + (size_t)position * C, 1, C, m->lnf_g, m->lnf_b, c->eps, x);
        for (int t = 0; t < k; t++)
            lid[t] = -1;
        for (int v0 = 0; v0 < c->vocab_size; v0 += LOGIT_SLICE) {
            const int vb = c->vocab_size - v0 < LOGIT_SLICE ? c->vocab_size - v0 : LOGIT_SLICE;
            linalg_gemm_nt(1, vb, C, x, C, m->lm_head + (size_t)v0 * C, C, logits, vb);
            fold_logits(logits, v0, vb, k, &nt, lid, lp);
        }
        for (int t = 0; t < k; t++)
            lp[t] = (float)((double)expf(lp[t] - nt.max) / nt.sum);
    }
    free(x);
    return ATTN_OK;
}
