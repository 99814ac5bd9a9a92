/* attention.c: the stage buffers and the forward pass (see attention.h). */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/attention.h"
#include "attnscope/linalg.h"
#include "attnscope/rowops.h"
#include "attnscope/workspace.h"

/* Every buffer starts on a 64-byte boundary, for the vector units. */
#define ARENA_ALIGN_FLOATS 16

/* Rows of the causal context product done at once (the same on every CPU). */
#define CAUSAL_BLOCK 64

static size_t
pad(size_t floats)
{
    return (floats + ARENA_ALIGN_FLOATS - 1) / ARENA_ALIGN_FLOATS * ARENA_ALIGN_FLOATS;
}

/*
 * A stage equal to the one before it shares its buffer instead of keeping a
 * copy: masked is scores without a mask, scaled is masked when the divisor
 * is 1, dropped is weights without dropout.
 */
struct arena_plan {
    size_t q, k, v;    /* floats, padded */
    size_t hh;         /* one (H, nq, nk) buffer, padded */
    size_t ctx, out;
    bool own_masked, own_scaled, own_dropped;
    int hh_buffers;    /* the (H, nq, nk) buffers allocated */
    size_t keep_bytes;
    size_t total_bytes;
};

static void
plan_arena(struct arena_plan *pl, const struct attention_config *cfg,
           const struct attention_shape *s, int nq, int nk)
{
    size_t hh = (size_t)s->heads * (size_t)nq * (size_t)nk;
    size_t floats;

    pl->q = pad((size_t)nq * (size_t)s->d_qkv);
    pl->k = pad((size_t)nk * (size_t)s->d_qkv);
    pl->v = pl->k;
    pl->hh = pad(hh);
    pl->ctx = pad((size_t)nq * (size_t)s->d_qkv);
    pl->out = pad((size_t)nq * (size_t)s->d_output);
    pl->own_masked = cfg->mask != ATTN_MASK_NONE;
    pl->own_scaled = (float)s->divisor != 1.0f;
    pl->own_dropped = s->dropout_on;
    pl->hh_buffers = 2 + pl->own_masked + pl->own_scaled + pl->own_dropped + s->dropout_on;
    pl->keep_bytes = s->dropout_on ? hh : 0;
    floats = pl->q + pl->k + pl->v + (size_t)pl->hh_buffers * pl->hh + pl->ctx + pl->out;
    pl->total_bytes = floats * sizeof(float) + pl->keep_bytes;
}

size_t
attention_stages_bytes(const struct attention_config *cfg, int d_in, int nq, int nk)
{
    struct attention_shape s;
    struct arena_plan pl;

    attention_shape_of(cfg, d_in, &s);
    plan_arena(&pl, cfg, &s, nq, nk);
    return pl.total_bytes;
}

enum attn_status
attention_stages_create(struct attention_stages *st, const struct attention_config *cfg,
                        int d_in, int nq, int nk, struct attn_error *err)
{
    struct arena_plan pl;
    float *f;
    void *arena = NULL;

    memset(st, 0, sizeof *st);
    attention_shape_of(cfg, d_in, &st->shape);
    if (nq < 1 || nk < 1)
        return attn_fail(err, ATTN_EVALUE, "no tokens to attend over");
    plan_arena(&pl, cfg, &st->shape, nq, nk);
    if (pl.total_bytes > ATTN_MAX_STAGE_BYTES)
        return attn_fail(err, ATTN_ELIMIT,
                         "%d tokens with %d heads need %zu MiB of stage buffers; attnscope's "
                         "limit is %zu MiB: use fewer tokens or heads",
                         nq, st->shape.heads, pl.total_bytes >> 20, ATTN_MAX_STAGE_BYTES >> 20);
    /* A destroyed pipeline's arena is reused: fresh memory costs a fault per page. */
    arena = workspace_arena_get(workspace_thread(), pl.total_bytes, &st->arena_bytes);
    if (arena == NULL)
        return attn_fail(err, ATTN_ENOMEM, "out of memory for %zu MiB of stage buffers",
                         pl.total_bytes >> 20);
    st->arena = arena;
    st->nq = nq;
    st->nk = nk;
    st->divisor = (float)st->shape.divisor;
    st->dropout_on = st->shape.dropout_on;
    st->dropout_scale = st->dropout_on ? rng_dropout_scale(cfg->dropout) : 1.0f;

    f = arena;
    st->queries = matrix_view(f, nq, st->shape.d_qkv);
    f += pl.q;
    st->keys = matrix_view(f, nk, st->shape.d_qkv);
    f += pl.k;
    st->values = matrix_view(f, nk, st->shape.d_qkv);
    f += pl.v;
    st->scores = f;
    f += pl.hh;
    st->masked = st->scores;
    if (pl.own_masked) {
        st->masked = f;
        f += pl.hh;
    }
    st->scaled = st->masked;
    if (pl.own_scaled) {
        st->scaled = f;
        f += pl.hh;
    }
    st->weights = f;
    f += pl.hh;
    st->dropped = st->weights;
    if (pl.own_dropped) {
        st->dropped = f;
        f += pl.hh;
    }
    if (st->dropout_on) {
        st->draw = f;
        f += pl.hh;
    }
    st->context = matrix_view(f, nq, st->shape.d_qkv);
    f += pl.ctx;
    st->output = matrix_view(f, nq, st->shape.d_output);
    f += pl.out;
    if (st->dropout_on)
        st->keep = (unsigned char *)f;
    return ATTN_OK;
}

void
attention_stages_destroy(struct attention_stages *st)
{
    if (st == NULL)
        return;
    workspace_arena_put(workspace_thread(), st->arena, st->arena_bytes);
    memset(st, 0, sizeof *st);
}

struct matrix
attention_head(const struct attention_stages *st, const float *stage, int head)
{
    size_t per_head = (size_t)st->nq * (size_t)st->nk;

    return matrix_view((float *)stage + (size_t)head * per_head, st->nq, st->nk);
}

bool
attention_masked(const struct attention_config *cfg, int i, int j)
{
    return cfg->mask == ATTN_MASK_CAUSAL && j > i;
}

static void
add_bias(struct matrix *out, int col0, int width, const struct param *bias)
{
    if (bias == NULL)
        return;
    for (int i = 0; i < out->rows; i++) {
        float *row = matrix_row(out, i) + col0;
        for (int j = 0; j < width; j++)
            row[j] += bias->m.data[j];
    }
}

void
attention_project(struct attention_stages *st, const struct attention_config *cfg,
                  const struct matrix *inputs, const struct attention_params *ps)
{
    struct matrix *dest[3] = { &st->queries, &st->keys, &st->values };
    const struct attention_shape *s = &st->shape;
    const int n = inputs->rows;

    if (!attention_variant_has_weights(cfg->variant)) {
        for (int r = 0; r < 3; r++)
            memcpy(dest[r]->data, inputs->data, matrix_size(inputs) * sizeof(float));
        return;
    }
    for (int set = 0; set < s->sets; set++) {
        for (int r = PARAM_QUERY; r <= PARAM_VALUE; r++) {
            const struct param *w = params_find(ps, (enum param_role)r, set, false);
            float *out = dest[r]->data + (size_t)set * (size_t)s->d_set;
            if (linalg_gemm_packed(n, inputs->data, s->d_in, &w->packed, out, s->d_qkv) == 0)
                ; /* packed once when the weights were made */
            else if (w->transposed)
                linalg_gemm_nn(n, s->d_set, s->d_in, inputs->data, s->d_in, w->m.data,
                               s->d_set, out, s->d_qkv);
            else
                linalg_gemm_nt(n, s->d_set, s->d_in, inputs->data, s->d_in, w->m.data,
                               s->d_in, out, s->d_qkv);
            add_bias(dest[r], set * s->d_set, s->d_set,
                     params_find(ps, (enum param_role)r, set, true));
        }
    }
}

void
attention_softmax_rows(const float *x, float *y, int rows, int cols)
{
    /* A row that is -inf everywhere becomes NaN, as in PyTorch. */
    for (int i = 0; i < rows; i++) {
        float *xi = (float *)x + (size_t)i * (size_t)cols;
        rowops_softmax(xi, xi, xi, y + (size_t)i * (size_t)cols, cols, cols, 1.0f);
    }
}

static void
run_dropout(struct attention_stages *st, const struct attention_config *cfg, struct rng *r)
{
    const size_t total = (size_t)st->shape.heads * (size_t)st->nq * (size_t)st->nk;
    const int calls = st->shape.dropout_calls;
    const size_t per_call = total / (size_t)calls;

    if (!st->dropout_on)
        return; /* dropped is weights */
    if (cfg->dropout_reseed)
        rng_seed(r, cfg->dropout_seed);
    /* Earlier forward calls of the same module drew their masks first. */
    for (int pass = 0; pass < cfg->dropout_pass; pass++)
        for (int c = 0; c < calls; c++)
            rng_dropout_skip(r, cfg->rng_path, per_call);
    for (int c = 0; c < calls; c++) {
        size_t off = (size_t)c * per_call;
        rng_dropout(r, cfg->rng_path, cfg->dropout, st->weights + off, st->dropped + off,
                    st->keep + off, st->draw + off, per_call);
    }
}

void
attention_attend(struct attention_stages *st, const struct attention_config *cfg,
                 const struct attention_params *ps, struct rng *r)
{
    const struct attention_shape *s = &st->shape;
    const int nq = st->nq;
    const int nk = st->nk;
    const size_t per_head = (size_t)nq * (size_t)nk;

    /* 1. scores = Q_h K_h^T */
    for (int h = 0; h < s->heads; h++)
        linalg_gemm_nt(nq, nk, s->head_dim, st->queries.data + (size_t)h * s->head_dim,
                       s->d_qkv, st->keys.data + (size_t)h * s->head_dim, s->d_qkv,
                       st->scores + (size_t)h * per_head, nk);

    /* 2-4. masked (-inf where the mask forbids), scaled (masked / divisor) and
     * weights (softmax of each row), row by row in one pass */
    for (int h = 0; h < s->heads; h++) {
        for (int i = 0; i < nq; i++) {
            size_t row = (size_t)h * per_head + (size_t)i * (size_t)nk;
            int visible = cfg->mask == ATTN_MASK_CAUSAL ? (i + 1 < nk ? i + 1 : nk) : nk;
            rowops_softmax(st->scores + row, st->masked + row, st->scaled + row, st->weights + row,
                           nk, visible, st->divisor);
        }
    }

    /* 5. dropped = dropout(weights) in training mode */
    run_dropout(st, cfg, r);

    /* 6. context_h = dropped_h V_h, heads side by side.  Under the causal
     * mask row i has nothing past key i, so blocks of rows stop there. */
    for (int h = 0; h < s->heads; h++) {
        const int block = cfg->mask == ATTN_MASK_CAUSAL ? CAUSAL_BLOCK : nq;
        for (int i0 = 0; i0 < nq; i0 += block) {
            int rows = nq - i0 < block ? nq - i0 : block;
            int keys = cfg->mask == ATTN_MASK_CAUSAL && i0 + rows < nk ? i0 + rows : nk;
            linalg_gemm_nn(rows, s->head_dim, keys,
                           st->dropped + (size_t)h * per_head + (size_t)i0 * (size_t)nk, nk,
                           st->values.data + (size_t)h * s->head_dim, s->d_qkv,
                           st->context.data + (size_t)i0 * (size_t)s->d_qkv + (size_t)h * s->head_dim,
                           s->d_qkv);
        }
    }

    /* 7. output = out_proj(context) for mha */
    if (attention_variant_has_out_proj(cfg->variant)) {
        const struct param *w = params_find(ps, PARAM_OUT, 0, false);
        if (linalg_gemm_packed(nq, st->context.data, s->d_qkv, &w->packed, st->output.data,
                               s->d_output) != 0)
            linalg_gemm_nt(nq, s->d_output, s->d_qkv, st->context.data, s->d_qkv, w->m.data,
                           s->d_qkv, st->output.data, s->d_output);
        add_bias(&st->output, 0, s->d_output, params_find(ps, PARAM_OUT, 0, true));
    } else {
        memcpy(st->output.data, st->context.data, matrix_size(&st->context) * sizeof(float));
    }
}
