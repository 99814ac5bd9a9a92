/* parts.c: the parts of a decoder block (see parts.h). */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/decoder/parts.h"
#include "attnscope/formats/tensor.h"
#include "attnscope/kernels/linalg.h"
#include "attnscope/kernels/parallel.h"
#include "attnscope/kernels/rowops.h"
#include "attnscope/kernels/topk.h"

void
part_positions(const struct decoder_model *m, const int *ids, int n, float *tok, float *pos,
               float *embed, int first)
{
    const int C = m->cfg.d_model;

    for (int i = 0; i < n; i++)
        decoder_token_row(m, ids[i], tok + (size_t)i * C);
    if (m->cfg.positions == DECODER_POSITIONS_ROPE) { /* (positions turn q and k instead) */
        const size_t count = (size_t)n * (size_t)C;
        if (m->cfg.embed_scale == 0.0f) {
            memcpy(embed, tok, count * sizeof *embed);
            return;
        }
        /* Gemma: the embeddings times sqrt(width), a float32 product as Hugging Face's. */
        for (size_t e = 0; e < count; e++)
            embed[e] = tok[e] * m->cfg.embed_scale;
        return;
    }
    for (int i = 0; i < n; i++)
        memcpy(pos + (size_t)i * C, m->pos_embed + (size_t)(first + i) * C, (size_t)C * sizeof(float));
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

/*
 * RMSNorm of each row, as Hugging Face's LlamaRMSNorm in float32: the mean
 * square (summed in double here, rounded to float as torch's mean is),
 * rsqrt(mean + eps), the row times it, then times the scale (Gemma's:
 * 1 + the scale, the sum in float32 as Gemma3RMSNorm makes it).
 */
static void
rms_norm(const float *x, int n, int c, const float *g, float eps, bool plus_one, float *y)
{
    for (int i = 0; i < n; i++) {
        const float *row = x + (size_t)i * (size_t)c;
        float *out = y + (size_t)i * (size_t)c;
        double sq = 0.0;
        float inv;
        for (int j = 0; j < c; j++)
            sq += (double)row[j] * (double)row[j];
        inv = 1.0f / sqrtf((float)(sq / c) + eps);
        if (g == NULL) /* (Gemma 4's v_norm: no scale) */
            for (int j = 0; j < c; j++)
                out[j] = row[j] * inv;
        else if (plus_one)
            for (int j = 0; j < c; j++)
                out[j] = (1.0f + g[j]) * (row[j] * inv);
        else
            for (int j = 0; j < c; j++)
                out[j] = g[j] * (row[j] * inv);
    }
}

/* The norm (c->norm) of rows begin..end of `width` floats. */
struct norm_job {
    const struct decoder_config *c;
    const struct decoder_norm_weights *w;
    const float *x;
    float *y;
    int width;
};

static void
norm_rows(void *ctx, int begin, int end)
{
    const struct norm_job *j = ctx;
    const int C = j->width;

    switch (j->c->norm) {
    case DECODER_NORM_LAYER:
        layer_norm(j->x + (size_t)begin * C, end - begin, C, j->w->scale, j->w->shift, j->c->eps,
                   j->y + (size_t)begin * C);
        break;
    case DECODER_NORM_RMS:
        rms_norm(j->x + (size_t)begin * C, end - begin, C, j->w->scale, j->c->eps,
                 j->c->norm_plus_one, j->y + (size_t)begin * C);
        break;
    }
}

void
part_norm(const struct decoder_config *c, const struct decoder_norm_weights *w, const float *x,
          int n, float *y, int threads)
{
    struct norm_job job = { c, w, x, y, c->d_model };

    parallel_for(n, 8L * c->d_model, threads, norm_rows, &job);
}

/*
 * QK-norm: an RMSNorm over each head's d columns of n rows of `heads`
 * heads, or (Olmo) over each row's heads together.
 */
static void
part_head_norm(const struct decoder_config *c, const struct decoder_norm_weights *w,
               const float *x, int n, int heads, int d, float *y, int threads)
{
    const struct decoder_config rms = { .norm = DECODER_NORM_RMS,
                                        .eps = c->eps,
                                        .norm_plus_one = c->norm_plus_one };
    const int width = c->qk_norm_full ? heads * d : d;
    const int rows = c->qk_norm_full ? n : n * heads;
    struct norm_job job = { &rms, w, x, y, width };

    parallel_for(rows, 8L * width, threads, norm_rows, &job);
}

/* ------------------------------------------------------------------- RoPE */

struct rope_job {
    const float *freq;
    float factor; /* YaRN's scale of cos and sin (1: none) */
    const float *x;
    float *y;
    int heads, d, first;
    int rot; /* the first columns turned (decoder_rope_dim); the others copied */
};

static void
rope_rows(void *ctx, int begin, int end)
{
    const struct rope_job *j = ctx;
    const int half = j->rot / 2;
    const size_t width = (size_t)j->heads * (size_t)j->d;
    float cs[DECODER_HEAD_DIM_MAX / 2], sn[DECODER_HEAD_DIM_MAX / 2];

    for (int i = begin; i < end; i++) {
        /* The angles of this position, in float32 as Hugging Face's rotary embedding makes them. */
        const float pos = (float)(j->first + i);
        for (int t = 0; t < half; t++) {
            const float angle = pos * j->freq[t];
            cs[t] = (float)cos((double)angle);
            sn[t] = (float)sin((double)angle);
            if (j->factor != 1.0f) {
                cs[t] *= j->factor;
                sn[t] *= j->factor;
            }
        }
        for (int h = 0; h < j->heads; h++) {
            const float *x = j->x + (size_t)i * width + (size_t)h * j->d;
            float *y = j->y + (size_t)i * width + (size_t)h * j->d;
            for (int t = 0; t < half; t++) {
                const float a = x[t], b = x[t + half];
                /* q cos + rotate_half(q) sin, rotate_half(q) = (-q2, q1). */
                const float lo = a * cs[t];
                const float lo_s = -b * sn[t];
                const float hi = b * cs[t];
                const float hi_s = a * sn[t];
                y[t] = lo + lo_s;
                y[t + half] = hi + hi_s;
            }
            if (j->rot < j->d && y != x)
                memcpy(y + j->rot, x + j->rot, (size_t)(j->d - j->rot) * sizeof *y);
        }
    }
}

void
part_rope(const struct decoder_model *m, int layer, const float *x, int n, int heads, int first,
          float *y, int threads)
{
    const struct decoder_config *c = &m->cfg;
    const int d = decoder_layer_head_dim(c, layer);
    const bool local = decoder_rope_local(c, layer);
    const float factor =
        !local && c->rope_scaling.yarn ? (float)c->rope_scaling.attention_factor : 1.0f;
    struct rope_job job = { local ? m->rope_freq_local : m->rope_freq, factor, x, y, heads, d,
                            first, c->rope_dim > 0 ? c->rope_dim : d };

    parallel_for(n, 6L * heads * d, threads, rope_rows, &job);
}

void
part_turn(const struct decoder_model *m, int layer, const struct decoder_norm_weights *norm,
          const float *proj, int n, int heads, int first, float *normed, float *out, int threads)
{
    const struct decoder_config *c = &m->cfg;
    const int d = decoder_layer_head_dim(c, layer);
    const size_t count = (size_t)n * (size_t)heads * (size_t)d;
    const float *in = proj;

    if (c->qk_norm) {
        part_head_norm(c, norm, proj, n, heads, d, normed, threads);
        in = normed;
    }
    if (c->positions == DECODER_POSITIONS_ROPE)
        part_rope(m, layer, in, n, heads, first, out, threads);
    else if (in != out)
        memcpy(out, in, count * sizeof *out);
}

/* ---------------------------------------------------------------- softmax */

/*
 * The weights of a row beside a sink: its logit joins the visible scaled
 * scores in the softmax and is dropped after it (Hugging Face's gpt-oss
 * eager attention: the row's max taken over both, each exponential over
 * their one sum).
 */
static void
sink_weights(const float *scaled, float *weights, int n, int first, int end, float sink)
{
    float max = sink, sum = 0.0f, inv;

    for (int j = first; j < end; j++)
        max = scaled[j] > max ? scaled[j] : max;
    for (int j = 0; j < n; j++) {
        weights[j] = j >= first && j < end ? expf(scaled[j] - max) : 0.0f;
        sum += weights[j];
    }
    sum += expf(sink - max);
    inv = 1.0f / sum;
    for (int j = first; j < end; j++)
        weights[j] *= inv;
}

float
part_sink_share(const float *scaled, int n, float sink)
{
    float max = sink, sum = 0.0f;

    /* (sink_weights' sums: a hidden key's -inf adds exp(-inf) = 0, as its 0 weight does) */
    for (int j = 0; j < n; j++)
        max = scaled[j] > max ? scaled[j] : max;
    for (int j = 0; j < n; j++)
        sum += expf(scaled[j] - max);
    sum += expf(sink - max);
    return expf(sink - max) * (1.0f / sum);
}

void
part_softmax(const struct decoder_config *c, const float *scores, float *masked, float *scaled,
             float *weights, int n, int first, int end, float divisor, const float *sink)
{
    const float cap = (float)c->attn_softcap;

    if (c->attn_softcap <= 0.0)
        rowops_softmax(scores, masked, scaled, weights, n, first, end, divisor);
    else {
        first = first > 0 ? first : 0;
        end = end < n ? end : n;
        for (int j = 0; j < n; j++) {
            const bool seen = j >= first && j < end;
            masked[j] = seen ? scores[j] : -INFINITY;
            scaled[j] = seen ? tanhf(scores[j] / divisor / cap) * cap : -INFINITY;
        }
        /* (the capped row is its own scores, unmasked and undivided: the same softmax) */
        rowops_softmax(scaled, scaled, scaled, weights, n, first, end, 1.0f);
    }
    if (sink != NULL)
        sink_weights(scaled, weights, n, first > 0 ? first : 0, end < n ? end : n, *sink);
}

/* ---------------------------------------------------------------- linears */


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
/* Rows of a block few enough to be attended one at a time, in place (linalg_row_nt). */
#define PART_ROW_AT_A_TIME 2

/*
 * The first key a block of queries from row i0 reads: 0, or under a
 * sliding window the first its block's first query sees (the block's start
 * aligned as the blocks are, so that a row attended alone and in its block
 * sums the same keys).
 */
static int
block_first_key(const struct part_attention_args *a, int i0)
{
    const int start = (i0 / PART_ATTENTION_ROWS) * PART_ATTENTION_ROWS;

    return a->causal ? decoder_first_key(a->window, start) : 0;
}

/* The first key query i sees: i - window + 1 under a sliding window, else 0. */
static int
row_first_key(const struct part_attention_args *a, int i)
{
    return a->causal ? decoder_first_key(a->window, i) : 0;
}

/*
 * A few query rows (a written token's, an appended word's) in heads h0 ..
 * h1: each row against the keys and values in place, every head over a
 * block of keys before the next block, so the cache is read once in the
 * order it lies; the same sums as the blocks' products below.
 */
static void
attend_rows(const struct part_attention_args *a, struct decoder_layer_stages *s, int h0, int h1)
{
    const int n = a->n;
    const int Q = decoder_layer_q_width(a->c, a->layer);
    const int K = decoder_layer_kv_width(a->c, a->layer);
    const int hd = decoder_layer_head_dim(a->c, a->layer);
    const int group = a->c->n_head / decoder_layer_kv_heads(a->c, a->layer);
    const size_t B = PART_ATTENTION_ROWS;
    const size_t stride = a->scratch_stride;

    for (int i = a->from; i < n; i++) {
        const int k0 = block_first_key(a, i);
        const int seen = (a->causal ? i + 1 : n) - k0;
        float *context = s->context + (size_t)i * Q;
        linalg_row_nt_heads(seen, hd, h0, h1, group, s->q + (size_t)i * Q, (size_t)hd,
                            s->k + (size_t)k0 * K, K, a->scratch, stride);
        for (int h = h0; h < h1; h++) {
            float *sc = a->scratch + (size_t)h * stride;
            float *w = sc + B * (size_t)n;
            float *rows = w + B * (size_t)n;
            part_softmax(a->c, sc, rows, rows + n, w, seen, row_first_key(a, i) - k0, seen,
                         a->divisor, a->sinks != NULL ? &a->sinks[h] : NULL);
        }
        linalg_row_nn_heads(hd, seen, h0, h1, group, a->scratch + B * (size_t)n, stride,
                            s->v + (size_t)k0 * K, K, context, (size_t)hd);
        for (int h = h0; h < h1; h++)
            if (a->ablated != NULL && a->ablated[h])
                memset(context + (size_t)h * hd, 0, (size_t)hd * sizeof(float));
    }
}

/* A few rows i0 .. i1 - 1 of head h, each against its keys in place, nothing packed. */
static void
attend_few(const struct part_attention_args *a, struct decoder_layer_stages *s, int h, int i0,
           int i1)
{
    const int n = a->n;
    const int Q = decoder_layer_q_width(a->c, a->layer);
    const int K = decoder_layer_kv_width(a->c, a->layer);
    const int hd = decoder_layer_head_dim(a->c, a->layer);
    const int kv = decoder_layer_kv_head_of(a->c, a->layer, h);
    const int k0 = block_first_key(a, i0);
    float *sc = a->scratch + (size_t)h * a->scratch_stride;
    float *w = sc + (size_t)PART_ATTENTION_ROWS * (size_t)n;
    float *rows = w + (size_t)PART_ATTENTION_ROWS * (size_t)n;

    for (int i = i0; i < i1; i++) {
        const int seen = (a->causal ? i + 1 : n) - k0;
        linalg_row_nt(seen, hd, s->q + (size_t)i * Q + h * hd, s->k + (size_t)k0 * K + kv * hd,
                      K, sc);
        part_softmax(a->c, sc, rows, rows + n, w, seen, row_first_key(a, i) - k0, seen,
                     a->divisor, a->sinks != NULL ? &a->sinks[h] : NULL);
        linalg_row_nn(hd, seen, w, s->v + (size_t)k0 * K + kv * hd, K,
                      s->context + (size_t)i * Q + h * hd);
    }
}

static void
attend_heads(void *ctx, int h0, int h1)
{
    const struct heads_job *j = ctx;
    const struct part_attention_args *a = j->a;
    struct decoder_layer_stages *s = j->s;
    const int n = a->n;
    const int Q = decoder_layer_q_width(a->c, a->layer);
    const int K = decoder_layer_kv_width(a->c, a->layer);
    const int hd = decoder_layer_head_dim(a->c, a->layer);
    const int B = PART_ATTENTION_ROWS;

    if (n - a->from <= PART_ROW_AT_A_TIME) {
        attend_rows(a, s, h0, h1);
        return;
    }
    for (int h = h0; h < h1; h++) {
        const int kv = decoder_layer_kv_head_of(a->c, a->layer, h);
        float *sc = a->scratch + (size_t)h * a->scratch_stride;
        float *w = sc + (size_t)B * (size_t)n;
        float *rows = w + (size_t)B * (size_t)n;
        for (int i0 = a->from; i0 < n;) {
            const int i1 = (i0 / B + 1) * B < n ? (i0 / B + 1) * B : n;
            /* Under a sliding window only the block's band of keys: k0 .. its last query. */
            const int k0 = block_first_key(a, i0);
            const int keys = (a->causal ? i1 : n) - k0;
            if (i1 - i0 <= PART_ROW_AT_A_TIME) {
                /*
                 * A few rows (a written token's, an appended word's): each
                 * against the keys and values in place, nothing packed: the
                 * same sums as the block's products.
                 */
                attend_few(a, s, h, i0, i1);
                i0 = i1;
                continue;
            }
            linalg_gemm_nt(i1 - i0, keys, hd, s->q + (size_t)i0 * Q + h * hd, Q,
                           s->k + (size_t)k0 * K + kv * hd, K, sc, keys);
            for (int i = i0; i < i1; i++)
                part_softmax(a->c, sc + (size_t)(i - i0) * keys, rows, rows + n,
                             w + (size_t)(i - i0) * keys, keys, row_first_key(a, i) - k0,
                             (a->causal ? i + 1 : n) - k0, a->divisor,
                             a->sinks != NULL ? &a->sinks[h] : NULL);
            linalg_gemm_nn(i1 - i0, hd, keys, w, keys, s->v + (size_t)k0 * K + kv * hd, K,
                           s->context + (size_t)i0 * Q + h * hd, Q);
            i0 = i1;
        }
        if (a->ablated != NULL && a->ablated[h])
            for (int i = a->from; i < n; i++)
                memset(s->context + (size_t)i * Q + (size_t)h * hd, 0, (size_t)hd * sizeof(float));
    }
}

/*
 * A gated query projection (attn_gate): 2 d columns a head, its query then
 * its gate (Qwen3.5's q_proj viewed (heads, 2 d) and chunked), into q_proj
 * and q_gate, rows from .. n - 1.
 */
static void
attention_gate_split(const struct part_attention_args *a, struct decoder_layer_stages *s,
                     int rows, int threads)
{
    const struct decoder_config *c = a->c;
    const int hd = decoder_layer_head_dim(c, a->layer), Q = decoder_layer_q_width(c, a->layer);
    const size_t at_q = (size_t)a->from * (size_t)Q;
    float *both = s->q_full + 2 * at_q;

    decoder_linear_apply(&a->b->q, a->x + (size_t)a->from * c->d_model, rows, both, threads);
    for (int i = 0; i < rows; i++)
        for (int h = 0; h < c->n_head; h++) {
            const float *head = both + ((size_t)i * 2 * Q + (size_t)h * 2 * hd);
            memcpy(s->q_proj + at_q + (size_t)i * Q + (size_t)h * hd, head, (size_t)hd * sizeof *head);
            memcpy(s->q_gate + at_q + (size_t)i * Q + (size_t)h * hd, head + hd,
                   (size_t)hd * sizeof *head);
        }
}

/*
 * Gemma 4's v_norm: each value head's rows RMS-normed, no scale, in place
 * (Gemma4RMSNorm with_scale=False).
 */
static void
values_normed(const struct part_attention_args *a, float *v, int rows, int threads)
{
    const int d = decoder_layer_head_dim(a->c, a->layer);
    const struct decoder_norm_weights none = { NULL, NULL };

    part_head_norm(a->c, &none, v, rows, decoder_layer_kv_heads(a->c, a->layer), d, v, threads);
}

void
part_attention(const struct part_attention_args *a, struct decoder_layer_stages *s, int threads)
{
    const struct decoder_config *c = a->c;
    const int n = a->n;
    const int hd = decoder_layer_head_dim(c, a->layer);
    const int Q = decoder_layer_q_width(c, a->layer);
    const size_t at = (size_t)a->from * (size_t)c->d_model;
    const size_t at_q = (size_t)a->from * (size_t)Q;
    const size_t at_k = (size_t)a->from * (size_t)decoder_layer_kv_width(c, a->layer);
    const int rows = n - a->from;
    /* (a layer that shares reads an earlier layer's keys and values, made by then: s->k, s->v) */
    const bool own_kv = decoder_kv_source(c, a->layer) == a->layer;
    struct heads_job job = { a, s };

    if (c->attn_gate)
        attention_gate_split(a, s, rows, threads);
    else
        decoder_linear_apply(&a->b->q, a->x + at, rows, s->q_proj + at_q, threads);
    if (own_kv) {
        decoder_linear_apply(&a->b->k, a->x + at, rows, s->k_proj + at_k, threads);
        decoder_linear_apply(&a->b->v, a->x + at, rows, s->v + at_k, threads);
        if (c->lw.v_norm)
            values_normed(a, s->v + at_k, rows, threads);
    }
    if (s->q_proj != s->q) { /* QK-norm and RoPE: the queries and keys the scores read */
        part_turn(a->m, a->layer, &a->b->q_norm, s->q_proj + at_q, rows, c->n_head, a->from,
                  s->q_normed != NULL ? s->q_normed + at_q : NULL, s->q + at_q, threads);
        if (own_kv)
            part_turn(a->m, a->layer, &a->b->k_norm, s->k_proj + at_k, rows,
                      decoder_layer_kv_heads(c, a->layer), a->from,
                      s->k_normed != NULL ? s->k_normed + at_k : NULL, s->k + at_k, threads);
    }
    parallel_for(c->n_head,
                 2L * (a->window > 0 && a->window < n ? 2 * a->window : a->causal ? n : 2 * n) *
                     rows * hd,
                 threads, attend_heads, &job);
    if (c->attn_gate) /* (Qwen3.5: the context times sigmoid(gate), as torch.sigmoid) */
        for (size_t e = at_q; e < (size_t)n * (size_t)Q; e++)
            s->gated[e] = s->context[e] * (1.0f / (1.0f + expf(-s->q_gate[e])));
    decoder_linear_apply(&a->b->o, (c->attn_gate ? s->gated : s->context) + at_q, rows,
                         s->attn + at, threads);
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

/* SiLU(gate) * up (rowops_swiglu) of rows begin..end. */
struct swiglu_job {
    const float *gate, *up;
    float *y;
    int F;
};

static void
swiglu_rows(void *ctx, int begin, int end)
{
    const struct swiglu_job *j = ctx;
    const size_t at = (size_t)begin * (size_t)j->F;

    rowops_swiglu(j->gate + at, j->up + at, j->y + at, (size_t)(end - begin) * (size_t)j->F);
}

/* GELU(gate) * up (Gemma's GeGLU, GELU's tanh approximation) of rows begin..end. */
static void
geglu_rows(void *ctx, int begin, int end)
{
    const struct swiglu_job *j = ctx;
    const size_t at = (size_t)begin * (size_t)j->F;
    const size_t count = (size_t)(end - begin) * (size_t)j->F;

    rowops_gelu(j->gate + at, j->y + at, count);
    for (size_t e = 0; e < count; e++)
        j->y[at + e] *= j->up[at + e];
}

void
part_mlp(const struct decoder_config *c, const struct decoder_block *b, int layer, const float *x,
         int n, float *gate, float *up, float *act, float *out, int threads)
{
    const int F = decoder_layer_mlp(c, layer);
    struct act_job job = { up, act, F };
    struct swiglu_job glu = { gate, up, act, F };

    switch (c->mlp) {
    case DECODER_MLP_GELU:
        decoder_linear_apply(&b->up, x, n, up, threads);
        parallel_for(n, 16L * F, threads, gelu_rows, &job);
        break;
    case DECODER_MLP_SWIGLU:
        decoder_linear_apply(&b->gate, x, n, gate, threads);
        decoder_linear_apply(&b->up, x, n, up, threads);
        parallel_for(n, 16L * F, threads, swiglu_rows, &glu);
        break;
    case DECODER_MLP_GEGLU:
        decoder_linear_apply(&b->gate, x, n, gate, threads);
        decoder_linear_apply(&b->up, x, n, up, threads);
        parallel_for(n, 16L * F, threads, geglu_rows, &glu);
        break;
    }
    decoder_linear_apply(&b->down, act, n, out, threads);
}

/*
 * gpt-oss's clamped SwiGLU of one gate and up pair (GptOssExperts, in float32):
 * (clamp(up) + 1) * min(gate, limit) * sigmoid(alpha min(gate, limit)).
 */
static float
clamped_swiglu(float gate, float up, float limit, float alpha)
{
    const float g = gate < limit ? gate : limit;
    const float u = up < -limit ? -limit : up > limit ? limit : up;
    const float glu = g * (1.0f / (1.0f + expf(-(g * alpha))));

    return (u + 1.0f) * glu;
}

/*
 * An expert's hidden act (m, FE) from its rows x: gate and up (a fused
 * expert's one product into gate, 2 FE wide, the pairs interleaved), then
 * SiLU(gate) up, or gpt-oss's clamped SwiGLU when the model has a limit.
 */
static void
expert_hidden(const struct decoder_config *c, const struct decoder_expert *ex, const float *x,
              int m, float *gate, float *up, float *act, int threads)
{
    const size_t FE = (size_t)c->moe.d_expert;
    const float limit = (float)c->moe.swiglu_limit, alpha = (float)c->moe.swiglu_alpha;

    decoder_linear_apply(&ex->gate, x, m, gate, threads);
    if (ex->fused) {
        for (size_t i = 0; i < (size_t)m; i++)
            for (size_t f = 0; f < FE; f++) {
                const float g = gate[i * 2 * FE + 2 * f], u = gate[i * 2 * FE + 2 * f + 1];
                act[i * FE + f] = limit > 0.0f ? clamped_swiglu(g, u, limit, alpha)
                                               : g / (1.0f + expf(-g)) * u;
            }
        return;
    }
    decoder_linear_apply(&ex->up, x, m, up, threads);
    if (limit <= 0.0f) {
        rowops_swiglu(gate, up, act, (size_t)m * FE);
        return;
    }
    for (size_t e = 0; e < (size_t)m * FE; e++)
        act[e] = clamped_swiglu(gate[e], up[e], limit, alpha);
}

void
part_moe(const struct decoder_config *c, const struct decoder_block *b, const float *x, int n,
         const unsigned char *off, float *logits, float *probs, float *routed, float *out,
         int threads)
{
    const int C = c->d_model, E = c->moe.n_experts, K = c->moe.n_experts_used, FE = c->moe.d_expert;
    const size_t nc = (size_t)n * (size_t)C, nf = (size_t)n * (size_t)FE;
    float *xs = malloc((2 * nc + 4 * nf) * sizeof *xs); /* (gate 2 FE wide when fused) */
    int *chosen = malloc((size_t)n * (size_t)K * sizeof *chosen);
    int *rows = malloc((size_t)n * sizeof *rows);
    double *pairs = malloc(2 * (size_t)E * sizeof *pairs);

    if (xs == NULL || chosen == NULL || rows == NULL || pairs == NULL) {
        /* (no memory for the experts' rows: NaN, seen, rather than other numbers) */
        for (size_t i = 0; i < nc; i++)
            out[i] = NAN;
        goto done;
    }
    decoder_linear_apply(&b->router, x, n, logits, threads);
    memset(routed, 0, (size_t)n * (size_t)E * sizeof *routed);
    for (int r = 0; r < n; r++) {
        /* softmax(router_logits, dim=1, dtype=float32), its top k, renormalised or not */
        float *l = logits + (size_t)r * E;
        float *pr = probs + (size_t)r * E;
        int *ch = chosen + (size_t)r * K;
        float sum = 0.0f;
        for (int e = 0; off != NULL && e < E; e++)
            if (off[e])
                l[e] = -INFINITY; /* (the expert knob: never chosen) */
        rowops_softmax(l, l, l, pr, E, 0, E, 1.0f);
        if (c->moe.router_topk_softmax) {
            /* gpt-oss: the top k of the logits, then a softmax over those k alone */
            float top[DECODER_EXPERTS_USED_MAX], w[DECODER_EXPERTS_USED_MAX];
            topk_largest(l, E, K, ch, pairs);
            for (int t = 0; t < K; t++)
                top[t] = l[ch[t]];
            rowops_softmax(top, top, top, w, K, 0, K, 1.0f);
            for (int t = 0; t < K; t++)
                routed[(size_t)r * E + ch[t]] = w[t];
            continue;
        }
        topk_largest(pr, E, K, ch, pairs); /* (torch.topk's choice, ties included) */
        for (int t = 0; t < K; t++)
            sum += pr[ch[t]];
        for (int t = 0; t < K; t++)
            routed[(size_t)r * E + ch[t]] =
                c->moe.norm_topk && sum > 0.0f ? pr[ch[t]] / sum : pr[ch[t]];
    }
    memset(out, 0, nc * sizeof *out);
    /* Each expert on the rows that chose it, in increasing expert order (index_add_'s). */
    for (int e = 0; e < E; e++) {
        const struct decoder_expert *ex = &b->experts[e];
        float *gx = xs, *gy = xs + nc, *gate = xs + 2 * nc, *up = gate + 2 * nf, *act = up + nf;
        int m = 0;
        for (int r = 0; r < n; r++)
            for (int t = 0; t < K; t++)
                if (chosen[(size_t)r * K + t] == e) {
                    rows[m] = r;
                    memcpy(gx + (size_t)m * C, x + (size_t)r * C, (size_t)C * sizeof *gx);
                    m++;
                }
        if (m == 0)
            continue;
        expert_hidden(c, ex, gx, m, gate, up, act, threads);
        decoder_linear_apply(&ex->down, act, m, gy, threads);
        for (int i = 0; i < m; i++) {
            const float w = routed[(size_t)rows[i] * E + e];
            float *o = out + (size_t)rows[i] * C;
            const float *y = gy + (size_t)i * C;
            for (int j = 0; j < C; j++)
                o[j] += y[j] * w;
        }
    }
done:
    free(xs);
    free(chosen);
    free(rows);
    free(pairs);
}

void
part_shared_expert(const struct decoder_config *c, const struct decoder_block *b, const float *x,
                   int n, float *gate, float *shared, float *out, int threads)
{
    const size_t C = (size_t)c->d_model, FS = (size_t)c->moe.d_shared, nf = (size_t)n * FS;
    float *hidden = malloc(3 * nf * sizeof *hidden);

    if (hidden == NULL) {
        /* (no memory for its rows: NaN, seen, rather than other numbers) */
        for (size_t e = 0; e < (size_t)n * C; e++)
            shared[e] = out[e] = NAN;
        return;
    }
    decoder_linear_apply(&b->shared.gate, x, n, hidden, threads);
    decoder_linear_apply(&b->shared.up, x, n, hidden + nf, threads);
    rowops_swiglu(hidden, hidden + nf, hidden + 2 * nf, nf);
    decoder_linear_apply(&b->shared.down, hidden + 2 * nf, n, shared, threads);
    decoder_linear_apply(&b->shared_gate, x, n, gate, threads);
    for (size_t r = 0; r < (size_t)n; r++) {
        /* sigmoid(shared_expert_gate(x)) * shared_expert(x), added to the routed experts' sum */
        gate[r] = 1.0f / (1.0f + expf(-gate[r]));
        for (size_t j = 0; j < C; j++) {
            shared[r * C + j] *= gate[r];
            out[r * C + j] += shared[r * C + j];
        }
    }
    free(hidden);
}

void
part_residual(const float *a, const float *b, size_t count, float *y)
{
    for (size_t e = 0; e < count; e++)
        y[e] = a[e] + b[e];
}
