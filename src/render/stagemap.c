/* stagemap.c: pipeline stages as heatmap specs (see stagemap.h). */
#include "config.h"

#include <math.h>
#include <string.h>

#include "attnscope/kernels/rowops.h"
#include "render/stagemap.h"

void
stagemap_range(const float *x, size_t n, float *lo, float *hi)
{
    float a, b;

    rowops_range(x, n, &a, &b);
    if (a > b)
        a = b = 0.0f;
    *lo = a;
    *hi = b;
}

void
stagemap_matrix_range(const struct matrix *m, float *lo, float *hi)
{
    float a, b;

    matrix_range(m, &a, &b);
    if (a > b)
        a = b = 0.0f;
    *lo = a;
    *hi = b;
}

void
stagemap_widen(const float *x, size_t n, float *lo, float *hi)
{
    float a, b;

    rowops_range(x, n, &a, &b);
    *lo = a < *lo ? a : *lo;
    *hi = b > *hi ? b : *hi;
}

enum heat_kind
stagemap_kind(const void *ctx, int i, int j)
{
    const struct stagemap *sm = ctx;
    const struct pipeline *p = sm->p;
    const struct attention_stages *st = &p->st;

    if (sm->mask_matrix)
        return pipeline_masked(p, i, j) ? HEAT_FORBID : HEAT_ALLOW;
    switch (pipeline_stage_cells(sm->stage)) {
    case CELLS_VALUES:
        /* A router's cell: marked where the token was sent to that expert. */
        if (sm->stage == STAGE_ROUTER && p->block.routed.data != NULL &&
            i < p->block.routed.rows && j < p->block.routed.cols &&
            MAT_AT(&p->block.routed, i, j) > 0.0f)
            return HEAT_CHOSEN;
        return HEAT_VALUE;
    case CELLS_WEIGHTS:
    case CELLS_SIGNED:
        return pipeline_masked(p, i, j) ? HEAT_MASKED : HEAT_VALUE;
    case CELLS_DROPPED:
        if (pipeline_masked(p, i, j))
            return HEAT_MASKED;
        if (st->dropout_on && !st->keep[(size_t)sm->head * (size_t)st->nq * (size_t)st->nk +
                                        (size_t)i * (size_t)st->nk + (size_t)j])
            return HEAT_DROPPED;
        return HEAT_VALUE;
    case CELLS_DROPPED_VALUES:
        /* keep is shaped as the output here: (nq, d_output). */
        if (st->dropout_on && !st->keep[(size_t)i * (size_t)st->shape.d_output + (size_t)j])
            return HEAT_DROPPED;
        return HEAT_VALUE;
    }
    return HEAT_VALUE;
}

/* Whether some cell of the matrix has kind k (stagemap_kind), looking until one is found. */
static bool
some_cell(const struct stagemap *sm, enum heat_kind k)
{
    for (int i = 0; i < sm->m.rows; i++)
        for (int j = 0; j < sm->m.cols; j++)
            if (stagemap_kind(sm, i, j) == k)
                return true;
    return false;
}

void
stagemap_kinds(const void *ctx, int seen[HEAT_ABSENT + 1])
{
    const struct stagemap *sm = ctx;
    const int odd = matrix_nonfinite(&sm->m);
    const enum stage_cells cells = pipeline_stage_cells(sm->stage);

    if (sm->mask_matrix || (odd != 0 && cells != CELLS_VALUES)) {
        /* Each cell asked (a NaN may sit under a masked or dropped cell, which hides it). */
        for (int i = 0; i < sm->m.rows; i++)
            for (int j = 0; j < sm->m.cols; j++) {
                enum heat_kind k = stagemap_kind(sm, i, j);
                const float v = MAT_AT(&sm->m, i, j);
                if (k == HEAT_VALUE)
                    k = isnan(v) ? HEAT_NAN : isinf(v) && v < 0 ? HEAT_NEG_INF : HEAT_VALUE;
                seen[k] = 1;
            }
        return;
    }
    /* Values alone (every cell's kind is its value's), or masked and dropped cells looked for. */
    seen[HEAT_NAN] |= (odd & ROWOPS_NAN) != 0;
    seen[HEAT_NEG_INF] |= (odd & ROWOPS_NEG_INF) != 0;
    if (cells == CELLS_WEIGHTS || cells == CELLS_DROPPED || cells == CELLS_SIGNED)
        seen[HEAT_MASKED] |= some_cell(sm, HEAT_MASKED);
    if ((cells == CELLS_DROPPED || cells == CELLS_DROPPED_VALUES) && sm->p->st.dropout_on)
        seen[HEAT_DROPPED] |= some_cell(sm, HEAT_DROPPED);
    seen[HEAT_VALUE] = 1;
    seen[HEAT_CHOSEN] |= sm->stage == STAGE_ROUTER;
}

/* The smallest and largest finite numbers of sm's matrix, the cells the mask hides left out. */
static bool
data_range(const struct stagemap *sm, float *lo, float *hi)
{
    const enum stage_cells cells = pipeline_stage_cells(sm->stage);
    const struct matrix *m = &sm->m;

    *lo = INFINITY;
    *hi = -INFINITY;
    if (sm->mask_matrix || m->rows == 0 || m->cols == 0)
        return false;
    if (cells == CELLS_WEIGHTS || cells == CELLS_DROPPED || cells == CELLS_SIGNED) {
        for (int i = 0; i < m->rows; i++) {
            int first, end;
            attention_mask_range(&sm->p->cfg, i, m->cols, &first, &end);
            if (end > first)
                stagemap_widen(matrix_row(m, i) + first, (size_t)(end - first), lo, hi);
        }
    } else {
        matrix_range(m, lo, hi);
    }
    return *lo <= *hi;
}

/*
 * Stage s of head in what sm draws: p's own, or a side of its comparison
 * (an empty view when the comparison cannot give it: out of memory).
 */
static void
side_view(const struct stagemap *sm, const struct pipeline *p, enum pipeline_stage s, int head,
          struct pipeline_view *v)
{
    if (sm->compare == NULL) {
        pipeline_stage_view(p, s, head, v);
        return;
    }
    if (compare_stage_view(sm->compare, sm->side, s, head, v, NULL) != ATTN_OK) {
        pipeline_stage_view(p, s, head, v);
        v->m.rows = 0;
        v->m.cols = 0;
    }
}

/* The difference's colours: every head's largest change either way, zero in the middle. */
static void
difference_range(const struct stagemap *sm, const struct pipeline *p, enum pipeline_stage s,
                 float *lo, float *hi)
{
    const int heads = pipeline_stage_heads(p, s);
    float a = INFINITY, b = -INFINITY, most;

    for (int h = 0; h < heads; h++) {
        struct pipeline_view hv;
        side_view(sm, p, s, h, &hv);
        for (int r = 0; r < hv.m.rows; r++)
            stagemap_widen(matrix_row(&hv.m, r), (size_t)hv.m.cols, &a, &b);
    }
    most = a <= b ? fmaxf(fabsf(a), fabsf(b)) : 0.0f;
    *lo = -most;
    *hi = most;
}

void
stagemap_spec(struct stagemap *sm, const struct pipeline *p, enum pipeline_stage s, int head,
              bool mask_matrix, bool colour, bool utf8, struct heatmap_spec *spec)
{
    const struct attention_stages *st = &p->st;
    const bool difference = sm->compare != NULL && sm->side == COMPARE_DIFFERENCE;
    const unsigned long other = sm->compare != NULL ? sm->compare->b->generation : 0;
    struct pipeline_view pv;
    bool skip;
    bool cached;
    struct stagemap_range *kept;

    if (sm->compare != NULL)
        p = compare_side_pipeline(sm->compare, sm->side);
    kept = &sm->range[sm->compare != NULL ? sm->side : COMPARE_FIRST];
    cached = kept->generation == p->generation && kept->other == other &&
             kept->layer == p->layer && kept->stage == s;
    if (difference && !cached)
        difference_range(sm, p, s, &kept->lo, &kept->hi);
    side_view(sm, p, s, head, &pv); /* (after the range: the difference's memory is one head's) */
    sm->p = p;
    sm->stage = s;
    sm->head = head;
    sm->mask_matrix = mask_matrix;
    sm->m = pv.m;

    memset(spec, 0, sizeof *spec);
    spec->m = &sm->m;
    spec->row_labels = pv.row_labels;
    spec->col_labels = pv.col_labels;
    spec->col_prefix = "d";
    spec->col_group = pv.col_group;
    /* A made-up token keeps its mark on every stage whose rows are its sentence's. */
    spec->row_marked = pv.row_marked;
    spec->ramp = RAMP_DIVERGING;
    spec->kind = stagemap_kind;
    spec->kinds = stagemap_kinds;
    spec->kind_ctx = sm;
    spec->cursor_row = -1;
    spec->cursor_col = -1;
    spec->colour = colour;
    spec->utf8 = utf8;
    skip = sm->skip_first && pipeline_stage_per_head(s) && !mask_matrix && pv.m.cols > 1 &&
           !difference;
    /* (a layer stepped to keeps the generation: its stages are another layer's numbers) */
    if (difference) {
        spec->lo = kept->lo;
        spec->hi = kept->hi;
    } else if (cached && kept->skip_first == skip) {
        spec->lo = kept->lo;
        spec->hi = kept->hi;
    } else if (pipeline_stage_per_head(s)) {
        /* Every head's rows (skip: from their second key on). */
        const int first = skip ? 1 : 0;
        spec->lo = INFINITY;
        spec->hi = -INFINITY;
        for (int h = 0; h < pipeline_stage_heads(p, s); h++) {
            struct pipeline_view hv;
            side_view(sm, p, s, h, &hv);
            for (int r = 0; r < hv.m.rows; r++)
                stagemap_widen(matrix_row(&hv.m, r) + first, (size_t)(hv.m.cols - first),
                               &spec->lo, &spec->hi);
        }
        if (spec->lo > spec->hi)
            spec->lo = spec->hi = 0.0f;
        if (pipeline_stage_cells(s) == CELLS_SIGNED) {
            /* Signed mixing: 0 in the middle of the colours, the largest either way at the ends. */
            const float most = fmaxf(fabsf(spec->lo), fabsf(spec->hi));
            spec->lo = -most;
            spec->hi = most;
        }
    } else {
        stagemap_matrix_range(&pv.m, &spec->lo, &spec->hi);
    }
    /* One head's matrix drawn on the scale of all of them: the legend says so. */
    if (pipeline_stage_per_head(s))
        spec->range_heads = pipeline_stage_heads(p, s);
    spec->range_skips_first = skip;
    if (!cached || kept->skip_first != skip)
        kept->positive = 0.0f; /* (made again, when a log scale asks for it) */
    kept->generation = p->generation;
    kept->other = other;
    kept->layer = p->layer;
    kept->stage = s;
    kept->skip_first = skip;
    kept->lo = spec->lo;
    kept->hi = spec->hi;
    if (!difference &&
        (pipeline_stage_cells(s) == CELLS_WEIGHTS || pipeline_stage_cells(s) == CELLS_DROPPED)) {
        /* Proportions: a ramp from 0, not one around it. */
        spec->ramp = RAMP_SEQUENTIAL;
        spec->lo = 0.0f;
        if (sm->log_scale) {
            /* From the smallest weight above 0 the scale spans (every head's) to its largest. */
            if (kept->positive <= 0.0f) {
                float least = INFINITY;
                for (int h = 0; h < st->shape.heads; h++) {
                    struct pipeline_view hv;
                    side_view(sm, p, s, h, &hv);
                    for (int r = 0; r < hv.m.rows; r++) {
                        const float *x = matrix_row(&hv.m, r);
                        for (int c = skip ? 1 : 0; c < hv.m.cols; c++)
                            if (x[c] > 0.0f && x[c] < least)
                                least = x[c];
                    }
                }
                kept->positive = isfinite(least) ? least : 0.0f;
            }
            if (kept->positive > 0.0f && kept->positive < spec->hi) {
                /* Four factors of ten at most: below them the darkest colour (1e-20 says nothing). */
                spec->lo = kept->positive > spec->hi * 1e-4f ? kept->positive
                                                                 : spec->hi * 1e-4f;
                spec->log_scale = true;
            }
        }
    }
    spec->data_known = data_range(sm, &spec->data_lo, &spec->data_hi);
}
