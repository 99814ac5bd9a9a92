/* parts.c: the parts of a decoder block (see parts.h). */
#include "config.h"

#include <math.h>
#include <string.h>

#include "attnscope/decoder/parts.h"
#include "attnscope/kernels/linalg.h"
#include "attnscope/kernels/parallel.h"
#include "attnscope/kernels/rowops.h"

void
part_positions(const struct decoder_model *m, const int *ids, int n, float *tok, float *pos,
               float *embed, int first)
{
    const int C = m->cfg.n_embd;

    for (int i = 0; i < n; i++) {
        decoder_token_row(m, ids[i], tok + (size_t)i * C);
        memcpy(pos + (size_t)i * C, m->wpe + (size_t)(first + i) * C, (size_t)C * sizeof(float));
    }
    part_residual(tok, pos, (size_t)n * (size_t)C, embed);
}

/* ------------------------------------------------------------------ norms */

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

/* The norm of rows begin..end. */
struct norm_job {
    const struct decoder_config *c;
    const struct decoder_norm_weights *w;
    const float *x;
    float *y;
};

static void
norm_rows(void *ctx, int begin, int end)
{
    const struct norm_job *j = ctx;
    const int C = j->c->n_embd;

    switch (j->c->norm) {
    case DECODER_NORM_LAYER:
        layer_norm(j->x + (size_t)begin * C, end - begin, C, j->w->scale, j->w->shift, j->c->eps,
                   j->y + (size_t)begin * C);
        break;
    }
}

void
part_norm(const struct decoder_config *c, const struct decoder_norm_weights *w, const float *x,
          int n, float *y, int threads)
{
    struct norm_job job = { c, w, x, y };

    parallel_for(n, 8L * c->n_embd, threads, norm_rows, &job);
}

/* ---------------------------------------------------------------- linears */

void
part_linear(const struct decoder_linear *l, const float *x, int n, float *y, int threads)
{
    if (parallel_gemm_packed(n, x, l->in, &l->packed, 0, l->out, y, l->out, threads) != 0) {
        if (l->w != NULL)
            parallel_gemm(l->out_in, n, l->out, l->in, x, l->in, l->w, l->ld, y, l->out, threads);
        else /* only the pack left, and it cannot serve (another kernel's, no memory) */
            linalg_gemm_packed_plain(n, x, l->in, &l->packed, 0, l->out, y, l->out);
    }
    if (l->b == NULL) /* (the book's qkv_bias=False) */
        return;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < l->out; j++)
            y[(size_t)i * (size_t)l->out + (size_t)j] += l->b[j];
}

/* -------------------------------------------------------------- attention */

size_t
part_attention_scratch(int cap)
{
    /* A block's scores and weights, and the softmax's masked and scaled row. */
    return (2 * (size_t)PART_ATTENTION_ROWS + 2) * (size_t)cap;
}

struct heads_job {
    const struct part_attention_args *a;
    struct decoder_layer_stages *s;
};

/*
 * Heads h0..h1: each head's context, a block of queries at a time.  The
 * blocks are aligned to multiples of PART_ATTENTION_ROWS whatever the
 * first row, so a query's scores and context are the same sums whether a
 * whole forward or an edit makes them; under the mask a block reads the
 * keys up to its last query (the weights past a query's own are 0).
 */
static void
attend_heads(void *ctx, int h0, int h1)
{
    const struct heads_job *j = ctx;
    const struct part_attention_args *a = j->a;
    struct decoder_layer_stages *s = j->s;
    const int n = a->n;
    const int C = a->c->n_embd;
    const int hd = C / a->c->n_head;
    const int B = PART_ATTENTION_ROWS;

    for (int h = h0; h < h1; h++) {
        float *sc = a->scratch + (size_t)h * a->scratch_stride;
        float *w = sc + (size_t)B * (size_t)n;
        float *rows = w + (size_t)B * (size_t)n;
        for (int i0 = a->from; i0 < n;) {
            const int i1 = (i0 / B + 1) * B < n ? (i0 / B + 1) * B : n;
            const int keys = a->causal ? i1 : n;
            linalg_gemm_nt(i1 - i0, keys, hd, s->q + (size_t)i0 * C + h * hd, C, s->k + h * hd, C,
                           sc, keys);
            for (int i = i0; i < i1; i++)
                rowops_softmax(sc + (size_t)(i - i0) * keys, rows, rows + n,
                               w + (size_t)(i - i0) * keys, keys, 0, a->causal ? i + 1 : n,
                               a->divisor);
            linalg_gemm_nn(i1 - i0, hd, keys, w, keys, s->v + h * hd, C,
                           s->context + (size_t)i0 * C + h * hd, C);
            i0 = i1;
        }
        if (a->ablated != NULL && a->ablated[h])
            for (int i = a->from; i < n; i++)
                memset(s->context + (size_t)i * C + (size_t)h * hd, 0, (size_t)hd * sizeof(float));
    }
}

void
part_attention(const struct part_attention_args *a, struct decoder_layer_stages *s, int threads)
{
    const int n = a->n;
    const int hd = a->c->n_embd / a->c->n_head;
    const size_t at = (size_t)a->from * (size_t)a->c->n_embd;
    const int rows = n - a->from;
    struct heads_job job = { a, s };

    part_linear(&a->b->q, a->x + at, rows, s->q + at, threads);
    part_linear(&a->b->k, a->x + at, rows, s->k + at, threads);
    part_linear(&a->b->v, a->x + at, rows, s->v + at, threads);
    parallel_for(a->c->n_head, 2L * (a->causal ? n : 2 * n) * rows * hd, threads, attend_heads, &job);
    part_linear(&a->b->o, s->context + at, rows, s->attn + at, threads);
}

/* -------------------------------------------------------------------- MLP */

/* GELU (rowops_gelu: the tanh approximation, Hugging Face's gelu_new) of rows begin..end. */
struct act_job {
    const float *x;
    float *y;
    int F;
};

static void
gelu_rows(void *ctx, int begin, int end)
{
    const struct act_job *j = ctx;

    rowops_gelu(j->x + (size_t)begin * j->F, j->y + (size_t)begin * j->F,
                (size_t)(end - begin) * (size_t)j->F);
}

void
part_mlp(const struct decoder_config *c, const struct decoder_block *b, const float *x, int n,
         float *up, float *act, float *out, int threads)
{
    struct act_job job = { up, act, c->n_inner };

    part_linear(&b->up, x, n, up, threads);
    switch (c->mlp) {
    case DECODER_MLP_GELU:
        parallel_for(n, 16L * c->n_inner, threads, gelu_rows, &job);
        break;
    }
    part_linear(&b->down, act, n, out, threads);
}

void
part_residual(const float *a, const float *b, size_t count, float *y)
{
    for (size_t e = 0; e < count; e++)
        y[e] = a[e] + b[e];
}
