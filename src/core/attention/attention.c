/* attention.c: the stage buffers and the forward pass (see attention.h). */
#include "config.h"

#include <math.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/attention/attention.h"
#include "attnscope/kernels/linalg.h"
#include "attnscope/kernels/rowops.h"
#include "attnscope/kernels/workspace.h"

/* Every buffer starts on a 64-byte boundary, for the vector units. */
#define ARENA_ALIGN 64

/* Rows of the context product done at once, each block over the keys its rows see. */
#define CONTEXT_BLOCK 64

/*
 * The arena's plan, one slot per buffer of struct attention_stages (as
 * llm.c's fill_in_activation_sizes): its size, and whether it has memory of
 * its own, shares the buffer of the stage before it, or is absent.  A stage
 * equal to the one before it shares: masked is scores without a mask, scaled
 * is masked when the divisor is 1, dropped is weights without dropout (or
 * with the notes' dropout, which acts on the output), output_dropped is
 * output unless that dropout is on.  draw and keep are shaped like what
 * dropout acts on.
 */
enum slot {
    SLOT_QUERIES, SLOT_KEYS, SLOT_VALUES, SLOT_SCORES, SLOT_MASKED, SLOT_SCALED, SLOT_WEIGHTS,
    SLOT_DROPPED, SLOT_DRAW, SLOT_AVERAGED, SLOT_CONTEXT, SLOT_OUTPUT, SLOT_OUTPUT_DROPPED,
    SLOT_KEEP, SLOT_COUNT
};

enum slot_use { SLOT_OWN, SLOT_SHARES_PREVIOUS, SLOT_ABSENT };

/* Where each slot's buffer goes: a struct matrix, or a bare pointer. */
static const struct {
    size_t field;
    bool matrix;
    size_t elem;
} slot_info[SLOT_COUNT] = {
    [SLOT_QUERIES] = { offsetof(struct attention_stages, queries), true, sizeof(float) },
    [SLOT_KEYS] = { offsetof(struct attention_stages, keys), true, sizeof(float) },
    [SLOT_VALUES] = { offsetof(struct attention_stages, values), true, sizeof(float) },
    [SLOT_SCORES] = { offsetof(struct attention_stages, scores), false, sizeof(float) },
    [SLOT_MASKED] = { offsetof(struct attention_stages, masked), false, sizeof(float) },
    [SLOT_SCALED] = { offsetof(struct attention_stages, scaled), false, sizeof(float) },
    [SLOT_WEIGHTS] = { offsetof(struct attention_stages, weights), false, sizeof(float) },
    [SLOT_DROPPED] = { offsetof(struct attention_stages, dropped), false, sizeof(float) },
    [SLOT_DRAW] = { offsetof(struct attention_stages, draw), false, sizeof(float) },
    [SLOT_AVERAGED] = { offsetof(struct attention_stages, averaged), true, sizeof(float) },
    [SLOT_CONTEXT] = { offsetof(struct attention_stages, context), true, sizeof(float) },
    [SLOT_OUTPUT] = { offsetof(struct attention_stages, output), true, sizeof(float) },
    [SLOT_OUTPUT_DROPPED] = { offsetof(struct attention_stages, output_dropped), true, sizeof(float) },
    /* Last: bytes, so every float buffer before it stays aligned. */
    [SLOT_KEEP] = { offsetof(struct attention_stages, keep), false, 1 },
};

struct slot_plan {
    int rows;
    int cols;
    enum slot_use use;
};

struct arena_plan {
    struct slot_plan slot[SLOT_COUNT];
    size_t total_bytes;
};

/* The bytes a slot takes in the arena, padded so the next one stays aligned. */
static size_t
slot_bytes(const struct arena_plan *pl, int i)
{
    size_t n = (size_t)pl->slot[i].rows * (size_t)pl->slot[i].cols * slot_info[i].elem;

    return pl->slot[i].use == SLOT_OWN ? (n + ARENA_ALIGN - 1) / ARENA_ALIGN * ARENA_ALIGN : 0;
}

static void
plan_arena(struct arena_plan *pl, const struct attention_config *cfg,
           const struct attention_shape *s, int nq, int nk)
{
    const int hh_rows = s->heads * nq; /* (H, nq, nk) as (H nq, nk) */
    const bool on_weights = s->dropout_on && !s->dropout_output;
    const bool on_output = s->dropout_on && s->dropout_output;
    const int drop_rows = on_output ? nq : hh_rows;
    const int drop_cols = on_output ? s->d_output : nk;
    struct slot_plan *p = pl->slot;

    p[SLOT_QUERIES] = (struct slot_plan){ nq, s->d_qkv, SLOT_OWN };
    p[SLOT_KEYS] = (struct slot_plan){ nk, s->d_qkv, SLOT_OWN };
    p[SLOT_VALUES] = (struct slot_plan){ nk, s->d_qkv, SLOT_OWN };
    p[SLOT_SCORES] = (struct slot_plan){ hh_rows, nk, SLOT_OWN };
    p[SLOT_MASKED] = (struct slot_plan){ hh_rows, nk,
                                         cfg->mask != ATTN_MASK_NONE ? SLOT_OWN : SLOT_SHARES_PREVIOUS };
    p[SLOT_SCALED] = (struct slot_plan){ hh_rows, nk,
                                         (float)s->divisor != 1.0f ? SLOT_OWN : SLOT_SHARES_PREVIOUS };
    p[SLOT_WEIGHTS] = (struct slot_plan){ hh_rows, nk, SLOT_OWN };
    p[SLOT_DROPPED] = (struct slot_plan){ hh_rows, nk, on_weights ? SLOT_OWN : SLOT_SHARES_PREVIOUS };
    p[SLOT_DRAW] = (struct slot_plan){ drop_rows, drop_cols, s->dropout_on ? SLOT_OWN : SLOT_ABSENT };
    p[SLOT_AVERAGED] = (struct slot_plan){ nq, nk, attention_variant_averages(cfg->variant) ? SLOT_OWN
                                                                                        : SLOT_ABSENT };
    p[SLOT_CONTEXT] = (struct slot_plan){ nq, s->d_qkv, SLOT_OWN };
    p[SLOT_OUTPUT] = (struct slot_plan){ nq, s->d_output, SLOT_OWN };
    p[SLOT_OUTPUT_DROPPED] = (struct slot_plan){ nq, s->d_output,
                                                 on_output ? SLOT_OWN : SLOT_SHARES_PREVIOUS };
    p[SLOT_KEEP] = (struct slot_plan){ drop_rows, drop_cols, s->dropout_on ? SLOT_OWN : SLOT_ABSENT };
    pl->total_bytes = 0;
    for (int i = 0; i < SLOT_COUNT; i++)
        pl->total_bytes += slot_bytes(pl, i);
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

/* Points every slot's field of st into the arena, following the plan. */
static void
point_slots(struct attention_stages *st, const struct arena_plan *pl, char *arena)
{
    void *previous = NULL;

    for (int i = 0; i < SLOT_COUNT; i++) {
        void *at = NULL;
        switch (pl->slot[i].use) {
        case SLOT_OWN:
            at = arena;
            arena += slot_bytes(pl, i);
            break;
        case SLOT_SHARES_PREVIOUS:
            at = previous;
            break;
        case SLOT_ABSENT:
            break;
        }
        if (slot_info[i].matrix) {
            struct matrix m = matrix_view(at, pl->slot[i].rows, pl->slot[i].cols);
            memcpy((char *)st + slot_info[i].field, &m, sizeof m);
        } else {
            memcpy((char *)st + slot_info[i].field, &at, sizeof at);
        }
        previous = at;
    }
}

/* The numbers one forward call's dropout draws: a weight each, or an output value each. */
static size_t
dropout_draws(const struct attention_shape *s, int nq, int nk)
{
    if (s->dropout_output)
        return (size_t)nq * (size_t)s->d_output;
    return (size_t)s->heads * (size_t)nq * (size_t)nk;
}

enum attn_status
attention_dropout_check(const struct attention_config *cfg, const struct attention_shape *s,
                        int nq, int nk, struct attn_error *err)
{
    const uint64_t per_pass = dropout_draws(s, nq, nk);
    uint64_t most;

    /* Without dropout nothing is drawn; the MKL path skips a call with one draw. */
    if (!s->dropout_on || cfg->rng_path == RNG_PATH_MKL || cfg->dropout_pass == 0)
        return ATTN_OK;
    if ((uint64_t)cfg->dropout_pass * per_pass <= ATTN_MAX_DROPOUT_SKIP)
        return ATTN_OK;
    most = ATTN_MAX_DROPOUT_SKIP / per_pass;
    return attn_fail(err, ATTN_ELIMIT,
                     "--dropout-pass %d with %" PRIu64 " numbers to drop per pass first draws %.3g "
                     "numbers; attnscope draws at most 2^32 before a mask: pass %" PRIu64
                     " at most here",
                     cfg->dropout_pass, per_pass, (double)cfg->dropout_pass * (double)per_pass, most);
}

enum attn_status
attention_stages_create(struct attention_stages *st, const struct attention_config *cfg,
                        int d_in, int nq, int nk, struct attn_error *err)
{
    struct arena_plan pl;
    void *arena = NULL;

    memset(st, 0, sizeof *st);
    attention_shape_of(cfg, d_in, &st->shape);
    if (nq < 1 || nk < 1)
        return attn_fail(err, ATTN_EVALUE, "no tokens to attend over");
    if (attention_dropout_check(cfg, &st->shape, nq, nk, err) != ATTN_OK)
        return ATTN_ELIMIT;
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
    st->ld = nk;
    st->head_floats = (size_t)nq * (size_t)nk;
    st->divisor = (float)st->shape.divisor;
    st->dropout_on = st->shape.dropout_on;
    st->dropout_scale = st->dropout_on ? rng_dropout_scale(cfg->dropout) : 1.0f;
    point_slots(st, &pl, arena);
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
    return matrix_view_strided((float *)stage + (size_t)head * st->head_floats, st->nq, st->nk,
                               st->ld);
}

void
attention_mask_range(const struct attention_config *cfg, int i, int nk, int *first, int *end)
{
    *first = 0;
    *end = nk;
    switch (cfg->mask) {
    case ATTN_MASK_NONE:
        break;
    case ATTN_MASK_CAUSAL:
        *end = i + 1 < nk ? i + 1 : nk;
        break;
    }
}

bool
attention_masked(const struct attention_config *cfg, int i, int j)
{
    int first;
    int end;

    attention_mask_range(cfg, i, j + 1, &first, &end);
    return j < first || j >= end;
}

/* Adds bias (width values, or none when NULL) to columns col0... of every row of out. */
static void
add_bias(struct matrix *out, int col0, int width, const float *bias)
{
    if (bias == NULL)
        return;
    for (int i = 0; i < out->rows; i++) {
        float *row = matrix_row(out, i) + col0;
        for (int j = 0; j < width; j++)
            row[j] += bias[j];
    }
}

/* The values of a bias parameter, or NULL when there is none. */
static const float *
bias_of(const struct param *bias)
{
    return bias != NULL ? bias->m.data : NULL;
}

void
attention_project(struct attention_stages *st, const struct attention_config *cfg,
                  const struct matrix *q_in, const struct matrix *kv_in,
                  const struct attention_params *ps)
{
    struct matrix *dest[3] = { &st->queries, &st->keys, &st->values };
    const struct matrix *from[3] = { q_in, kv_in, kv_in };
    const struct attention_shape *s = &st->shape;

    if (!attention_variant_has_weights(cfg->variant)) {
        for (int r = 0; r < 3; r++)
            memcpy(dest[r]->data, from[r]->data, matrix_size(from[r]) * sizeof(float));
        return;
    }
    if (attention_variant_info(cfg->variant)->proj == PROJ_IN_PROJ) {
        /* in_proj_weight's rows: the queries' d_qkv, then the keys', then the values'. */
        const struct param *w = params_find(ps, PARAM_QKV, 0, false);
        const struct param *b = params_find(ps, PARAM_QKV, 0, true);
        for (int r = 0; r < 3; r++) {
            const size_t rows = (size_t)r * (size_t)s->d_qkv;
            linalg_gemm_nt(from[r]->rows, s->d_qkv, s->d_in, from[r]->data, s->d_in,
                           w->m.data + rows * (size_t)s->d_in, s->d_in, dest[r]->data, s->d_qkv);
            add_bias(dest[r], 0, s->d_qkv, b->m.data + rows);
        }
        return;
    }
    for (int set = 0; set < s->sets; set++) {
        for (int r = PARAM_QUERY; r <= PARAM_VALUE; r++) {
            const struct param *w = params_find(ps, (enum param_role)r, set, false);
            const int n = from[r]->rows;
            const float *x = from[r]->data;
            float *out = dest[r]->data + (size_t)set * (size_t)s->d_set;
            if (linalg_gemm_packed(n, x, s->d_in, &w->packed, out, s->d_qkv) == 0)
                ; /* packed once when the weights were made */
            else if (w->transposed)
                linalg_gemm_nn(n, s->d_set, s->d_in, x, s->d_in, w->m.data, s->d_set, out, s->d_qkv);
            else
                linalg_gemm_nt(n, s->d_set, s->d_in, x, s->d_in, w->m.data, s->d_in, out, s->d_qkv);
            add_bias(dest[r], set * s->d_set, s->d_set,
                     bias_of(params_find(ps, (enum param_role)r, set, true)));
        }
    }
}

void
attention_softmax_rows(const float *x, float *y, int rows, int cols)
{
    /* A row that is -inf everywhere becomes NaN, as in PyTorch. */
    for (int i = 0; i < rows; i++) {
        float *xi = (float *)x + (size_t)i * (size_t)cols;
        rowops_softmax(xi, xi, xi, y + (size_t)i * (size_t)cols, cols, 0, cols, 1.0f);
    }
}

/*
 * The passes after the projections, one function each over named buffers,
 * in the style of llm.c: shapes in the comments, outputs first.
 */

/* 1. scores (H, nq, nk) = Q_h K_h^T, for Q (nq, H hd) and K (nk, H hd) with row stride ld. */
static void
scores_forward(float *scores, const float *q, const float *k, int nq, int nk, int heads, int hd,
               int ld)
{
    const size_t per_head = (size_t)nq * (size_t)nk;

    for (int h = 0; h < heads; h++)
        linalg_gemm_nt(nq, nk, hd, q + (size_t)h * (size_t)hd, ld, k + (size_t)h * (size_t)hd, ld,
                       scores + (size_t)h * per_head, nk);
}

/*
 * 2-4. masked (-inf outside each row's range), scaled (masked / divisor)
 * and weights (softmax of each row), all (H, nq, nk), row by row in one pass.
 */
static void
softmax_forward(float *weights, float *scaled, float *masked, const float *scores,
                const struct attention_config *cfg, int nq, int nk, int heads, float divisor)
{
    const size_t per_head = (size_t)nq * (size_t)nk;

    for (int h = 0; h < heads; h++) {
        for (int i = 0; i < nq; i++) {
            size_t row = (size_t)h * per_head + (size_t)i * (size_t)nk;
            int first;
            int end;
            attention_mask_range(cfg, i, nk, &first, &end);
            rowops_softmax(scores + row, masked + row, scaled + row, weights + row, nk, first, end,
                           divisor);
        }
    }
}

/*
 * 5. dropped (H, nq, nk) = dropout(weights) in training mode, as cfg's
 * module draws it; or, for the notes' class, output_dropped (nq, d_output)
 * = dropout(output), after the output projection.
 */
static void
dropout_forward(struct attention_stages *st, const struct attention_config *cfg, struct rng *r)
{
    const size_t total = dropout_draws(&st->shape, st->nq, st->nk);
    const int calls = st->shape.dropout_calls;
    const size_t per_call = total / (size_t)calls;
    const float *in = st->shape.dropout_output ? st->output.data : st->weights;
    float *out = st->shape.dropout_output ? st->output_dropped.data : st->dropped;

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
        rng_dropout(r, cfg->rng_path, cfg->dropout, in + off, out + off, st->keep + off,
                    st->draw + off, per_call);
    }
}

/*
 * 5b. averaged (nq, nk) = sum_h dropped_h / H: what nn.MultiheadAttention
 * returns as its weights by default (the sum over the heads, then / H).
 */
void
attention_heads_mean(float *averaged, const struct attention_stages *st, const float *stage)
{
    const int heads = st->shape.heads;
    const size_t nk = (size_t)st->nk;

    /* Each cell's heads in order from 0, a row at a time (each head's rows as it lays them). */
    for (int i = 0; i < st->nq; i++) {
        float *out = averaged + (size_t)i * nk;
        for (size_t j = 0; j < nk; j++)
            out[j] = 0.0f;
        for (int h = 0; h < heads; h++) {
            const struct matrix m = attention_head(st, stage, h);
            const float *x = matrix_row(&m, i);
            for (size_t j = 0; j < nk; j++)
                out[j] += x[j];
        }
        for (size_t j = 0; j < nk; j++)
            out[j] /= (float)heads;
    }
}

/*
 * 6. context (nq, H hd) = dropped_h V_h, heads side by side, for V (nk, H hd)
 * with row stride ld.  A block of rows multiplies only the keys its rows'
 * ranges reach: the weights outside are 0, and skipping a 0 * v term leaves
 * every FMA chain as it is.
 */
static void
context_forward(float *context, const float *dropped, const float *v,
                const struct attention_config *cfg, int nq, int nk, int heads, int hd, int ld)
{
    const size_t per_head = (size_t)nq * (size_t)nk;

    for (int i0 = 0; i0 < nq; i0 += CONTEXT_BLOCK) {
        const int rows = nq - i0 < CONTEXT_BLOCK ? nq - i0 : CONTEXT_BLOCK;
        int lo = nk;
        int hi = 0;
        for (int i = i0; i < i0 + rows; i++) {
            int first;
            int end;
            attention_mask_range(cfg, i, nk, &first, &end);
            lo = first < lo ? first : lo;
            hi = end > hi ? end : hi;
        }
        if (hi <= lo) {
            /* Nothing visible (such rows are NaN, as PyTorch's): multiply them all. */
            lo = 0;
            hi = nk;
        }
        for (int h = 0; h < heads; h++)
            linalg_gemm_nn(rows, hd, hi - lo,
                           dropped + (size_t)h * per_head + (size_t)i0 * (size_t)nk + (size_t)lo, nk,
                           v + (size_t)lo * (size_t)ld + (size_t)h * (size_t)hd, ld,
                           context + (size_t)i0 * (size_t)ld + (size_t)h * (size_t)hd, ld);
    }
}

/* 7. output (nq, d_output) = context W_o^T + b_o, or the context itself without out_proj. */
static void
output_forward(struct matrix *output, const struct matrix *context, const struct attention_params *ps,
               bool out_proj)
{
    const struct param *w = out_proj ? params_find(ps, PARAM_OUT, 0, false) : NULL;

    if (w == NULL) {
        memcpy(output->data, context->data, matrix_size(context) * sizeof(float));
        return;
    }
    if (linalg_gemm_packed(context->rows, context->data, context->cols, &w->packed, output->data,
                           output->cols) != 0)
        linalg_gemm_nt(context->rows, output->cols, context->cols, context->data, context->cols,
                       w->m.data, context->cols, output->data, output->cols);
    add_bias(output, 0, output->cols, bias_of(params_find(ps, PARAM_OUT, 0, true)));
}

void
attention_attend(struct attention_stages *st, const struct attention_config *cfg,
                 const struct attention_params *ps, struct rng *r)
{
    const struct attention_shape *s = &st->shape;

    scores_forward(st->scores, st->queries.data, st->keys.data, st->nq, st->nk, s->heads,
                   s->head_dim, s->d_qkv);
    softmax_forward(st->weights, st->scaled, st->masked, st->scores, cfg, st->nq, st->nk, s->heads,
                    st->divisor);
    if (!s->dropout_output)
        dropout_forward(st, cfg, r);
    if (st->averaged.data != NULL)
        attention_heads_mean(st->averaged.data, st, st->dropped);
    context_forward(st->context.data, st->dropped, st->values.data, cfg, st->nq, st->nk, s->heads,
                    s->head_dim, s->d_qkv);
    output_forward(&st->output, &st->context, ps, attention_variant_has_out_proj(cfg->variant));
    if (s->dropout_output)
        dropout_forward(st, cfg, r);
}
