/*
 * view.c: composing a frame (see view.h): the view's state and scratch,
 * the stage shown and its matrix, and view_render(), which draws the
 * screen shown from the table of screens (screen.h).  The pieces every
 * screen shares are view_bars.c's and view_panels.c's (view_parts.h).
 */
#include "config.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/pipeline/knob.h"
#include "render/inspect.h"
#include "render/screens/screen.h"
#include "render/stagemap.h"
#include "attnscope/decoder/mixer.h"
#include "attnscope/families/model/family_model.h"
#include "render/text.h"
#include "attnscope/kernels/rowops.h"
#include "render/view.h"
#include "render/view_parts.h"

void
view_init(struct view *v)
{
    memset(v, 0, sizeof *v);
    v->stage = VIEW_OUTPUT;
    v->colour = true;
    v->utf8 = true;
    v->next_first = -1; /* the predictions start at the text's end */
}

void
view_destroy(struct view *v)
{
    free(v->work.scratch);
    free(v->work.labels);
    free(v->work.label_text);
    free(v->work.row_label);
    free(v->work.row_label_text);
    for (int k = 0; k < 3; k++)
        free(v->work.side[k]);
    memset(v, 0, sizeof *v);
}

int
view_reserve_scratch(struct view *v, size_t floats)
{
    if (floats <= v->work.scratch_cap)
        return 0;
    float *bigger = realloc(v->work.scratch, floats * sizeof(float));
    if (bigger == NULL)
        return -1;
    v->work.scratch = bigger;
    v->work.scratch_cap = floats;
    return 0;
}

/* Column labels "q0".."v<hd-1>" for the Q|K|V view. */
int
view_qkv_labels(struct view *v, int hd)
{
    return view_group_labels(v, hd, "qkv");
}

int
view_group_labels(struct view *v, int hd, const char *letters)
{
    size_t need = strlen(letters) * (size_t)hd;
    char *text;
    char **labels;

    if (need > v->work.labels_cap) {
        labels = realloc(v->work.labels, need * sizeof *labels);
        if (labels == NULL)
            return -1;
        v->work.labels = labels;
        text = realloc(v->work.label_text, need * 16);
        if (text == NULL)
            return -1;
        v->work.label_text = text;
        v->work.labels_cap = need;
    }
    for (size_t c = 0; c < need; c++) {
        v->work.labels[c] = v->work.label_text + c * 16;
        snprintf(v->work.labels[c], 16, "%c%d", letters[c / (size_t)hd], (int)(c % (size_t)hd));
    }
    return 0;
}

/* Room for rows row labels of up to 39 bytes in v->work.row_label. */
int
view_reserve_row_labels(struct view *v, int rows)
{
    if ((size_t)rows > v->work.row_label_cap) {
        char **labels = realloc(v->work.row_label, (size_t)rows * sizeof *labels);
        char *text;
        if (labels == NULL)
            return -1;
        v->work.row_label = labels;
        text = realloc(v->work.row_label_text, (size_t)rows * 40);
        if (text == NULL)
            return -1;
        v->work.row_label_text = text;
        v->work.row_label_cap = (size_t)rows;
    }
    for (int i = 0; i < rows; i++)
        v->work.row_label[i] = v->work.row_label_text + (size_t)i * 40;
    return 0;
}

/* "q1/k1" row labels for Q, K and V given with their own labels. */
static int
row_labels(struct view *v, const struct pipeline *p, int rows)
{
    if (view_reserve_row_labels(v, rows) != 0)
        return -1;
    for (int i = 0; i < rows; i++) {
        snprintf(v->work.row_label[i], 40, "%.18s/%.18s", i < p->st.nq ? p->query_labels[i] : "-",
                 i < p->st.nk ? p->key_labels[i] : "-");
    }
    return 0;
}

/* Q | K | V side by side: a cell past the last row of its matrix holds nothing. */
static enum heat_kind
qkv_kind(const void *ctx, int i, int j)
{
    const struct view_work *w = ctx;

    return i >= w->qkv_rows[j / w->qkv_width] ? HEAT_ABSENT : HEAT_VALUE;
}

/* The matrices the Q | K | V and context views copy a head's columns from (by slot). */
static const struct matrix *
qkv_of(const struct pipeline *p, int slot, bool context)
{
    return context ? &p->st.context : slot == 0 ? &p->st.queries : slot == 1 ? &p->st.keys
                                                                             : &p->st.values;
}

/*
 * Slot's matrix (queries, keys or values; context) of the side of v's
 * comparison shown into *m: p's own, the second model's (at p's layer), or
 * their difference kept in the view's slot, cell by cell as
 * compare_stage_view makes it; -1 when it cannot be made.
 */
static int
side_matrix(struct view *v, const struct pipeline *p, int slot, bool context, struct matrix *m)
{
    const struct matrix *x = qkv_of(p, slot, context), *y;
    size_t need;

    if (v->compare == NULL || v->side == COMPARE_FIRST) {
        *m = *x;
        return 0;
    }
    if (compare_follow(v->compare, NULL) != ATTN_OK)
        return -1;
    y = qkv_of(v->compare->b, slot, context);
    if (v->side == COMPARE_SECOND) {
        *m = *y;
        return 0;
    }
    if (x->rows != y->rows || x->cols != y->cols)
        return -1;
    need = (size_t)x->rows * (size_t)x->cols;
    if (need > v->work.side_cap[slot]) {
        float *bigger = realloc(v->work.side[slot], need * sizeof *bigger);
        if (bigger == NULL)
            return -1;
        v->work.side[slot] = bigger;
        v->work.side_cap[slot] = need;
    }
    for (int i = 0; i < x->rows; i++)
        for (int j = 0; j < x->cols; j++)
            v->work.side[slot][(size_t)i * (size_t)x->cols + (size_t)j] =
                MAT_AT(y, i, j) - MAT_AT(x, i, j);
    *m = matrix_view(v->work.side[slot], x->rows, x->cols);
    return 0;
}

int
view_stage_spec(struct view *v, const struct pipeline *p, enum view_stage s, int head,
                struct heatmap_spec *spec)
{
    const struct attention_stages *st = &p->st;
    const int hd = st->shape.head_dim;
    const int n = st->nq;
    struct matrix qkv[3];

    /* (the parameters and the cache are each model's own: the first's shown) */
    v->work.map.compare = NULL;
    if (view_params_shown(v, p, s))
        return view_params_spec(v, p, s, head, spec);
    if (s == VIEW_CACHE)
        return view_cache_spec(v, p, head, spec);
    v->work.map.skip_first = v->skip_first_key;
    v->work.map.log_scale = v->log_scale;
    v->work.map.compare = v->compare;
    v->work.map.side = v->side;
    if (s != VIEW_QKV && s != VIEW_CONTEXT) {
        enum pipeline_stage ps = explain_pipeline_stage(p, s, v->mask_matrix);
        stagemap_spec(&v->work.map, p, ps, head, s == VIEW_MASK && v->mask_matrix, v->colour, v->utf8,
                      spec);
        if (s != VIEW_CONCAT)
            spec->col_group = 0;
        if (v->present && !v->paper) /* (a projector's grey; a figure keeps the colours) */
            spec->ramp = palette_high_contrast(spec->ramp);
        return 0;
    }
    /* Q | K | V side by side, or one head's context: copied into scratch. */
    stagemap_spec(&v->work.map, p, s == VIEW_QKV ? STAGE_QUERIES : STAGE_CONTEXT, head, false,
                  v->colour, v->utf8, spec);
    spec->col_group = 0;
    if (v->present && !v->paper)
        spec->ramp = palette_high_contrast(spec->ramp);
    /* Both show one head on the scale of the whole matrix (every head). */
    spec->range_heads = st->shape.heads;
    if (s == VIEW_QKV) {
        const struct matrix *src[3] = { &qkv[0], &qkv[1], &qkv[2] };
        int rows = st->nk > n ? st->nk : n;
        if (side_matrix(v, p, 0, false, &qkv[0]) != 0 || side_matrix(v, p, 1, false, &qkv[1]) != 0 ||
            side_matrix(v, p, 2, false, &qkv[2]) != 0)
            return -1;
        if (view_reserve_scratch(v, (size_t)rows * 3 * (size_t)hd) != 0 || view_qkv_labels(v, hd) != 0)
            return -1;
        /*
         * With more keys than queries the query columns run out first: those
         * cells are blank.  K and V are the key head's this head reads
         * (grouped-query attention: fewer of them), as the cell panel says.
         */
        for (int i = 0; i < rows; i++)
            for (int w = 0; w < 3; w++)
                for (int c = 0; c < hd; c++)
                    v->work.scratch[((size_t)i * 3 + (size_t)w) * (size_t)hd + (size_t)c] =
                        i < src[w]->rows
                            ? MAT_AT(src[w], i, (w > 0 ? pipeline_kv_head(p, head) : head) * hd + c)
                            : 0.0f;
        for (int w = 0; w < 3; w++)
            v->work.qkv_rows[w] = src[w]->rows;
        v->work.qkv_width = hd;
        spec->kind = qkv_kind;
        spec->kinds = NULL; /* (the legend asks qkv_kind of each cell: Q, K and V's rows) */
        spec->kind_ctx = &v->work;
        v->work.map.m = matrix_view(v->work.scratch, rows, 3 * hd);
        spec->row_labels = p->query_labels;
        if (p->qkv_given || p->cfg.cross) {
            /* Rows pair the i-th query with the i-th key (the target's, the source's): label both. */
            if (row_labels(v, p, rows) != 0)
                return -1;
            spec->row_labels = (const char *const *)v->work.row_label;
            spec->row_marked = NULL;
        }
        spec->col_labels = (const char *const *)v->work.labels;
        spec->lo = INFINITY;
        spec->hi = -INFINITY;
        for (int w = 0; w < 3; w++) {
            float lo;
            float hi;
            stagemap_matrix_range(src[w], &lo, &hi);
            spec->lo = fminf(spec->lo, lo);
            spec->hi = fmaxf(spec->hi, hi);
        }
        /* The numbers shown: this head's columns of Q, K and V, the rows each has. */
        spec->data_lo = INFINITY;
        spec->data_hi = -INFINITY;
        for (int i = 0; i < rows; i++)
            for (int w = 0; w < 3; w++)
                if (i < src[w]->rows)
                    stagemap_widen(v->work.scratch + ((size_t)i * 3 + (size_t)w) * (size_t)hd,
                                   (size_t)hd, &spec->data_lo, &spec->data_hi);
        spec->data_known = spec->data_lo <= spec->data_hi;
        if (v->compare != NULL && v->side == COMPARE_DIFFERENCE) {
            /* (a difference's colours centred on zero) */
            const float most = fmaxf(fabsf(spec->lo), fabsf(spec->hi));
            spec->lo = -most;
            spec->hi = most;
        }
        return 0;
    }
    if (view_reserve_scratch(v, (size_t)n * (size_t)hd) != 0 ||
        side_matrix(v, p, 0, true, &qkv[0]) != 0)
        return -1;
    for (int i = 0; i < n; i++)
        memcpy(v->work.scratch + (size_t)i * (size_t)hd,
               matrix_row(&qkv[0], i) + (size_t)head * (size_t)hd, (size_t)hd * sizeof(float));
    v->work.map.m = matrix_view(v->work.scratch, n, hd);
    rowops_range(v->work.scratch, (size_t)n * (size_t)hd, &spec->data_lo, &spec->data_hi);
    spec->data_known = spec->data_lo <= spec->data_hi;
    return 0;
}

bool
view_step_stage(struct view *v, const struct pipeline *p, int dir)
{
    int s = (int)v->stage;

    do {
        s += dir;
    } while (s >= 0 && s < VIEW_STAGE_COUNT && !explain_stage_present(p, (enum view_stage)s));
    if (s < 0 || s >= VIEW_STAGE_COUNT)
        return false;
    v->stage = (enum view_stage)s;
    return true;
}

int
view_stage_at(const struct view *v, int x, int y)
{
    if (y != v->frame.stage_bar_y || y < 0)
        return -1;
    for (int s = 0; s < VIEW_STAGE_COUNT; s++)
        if (x >= v->frame.stage_x[s][0] && x < v->frame.stage_x[s][1])
            return s;
    return -1;
}

static void
shape_of(struct view *v, const struct pipeline *p, int *rows, int *cols)
{
    struct heatmap_spec spec;

    if (view_stage_spec(v, p, v->stage, v->head, &spec) != 0) {
        *rows = *cols = 0;
        return;
    }
    *rows = spec.m->rows;
    *cols = spec.m->cols;
}

void
view_clamp(struct view *v, const struct pipeline *p)
{
    int rows;
    int cols;

    if (!explain_stage_present(p, v->stage))
        view_step_stage(v, p, 1);
    /* The parameters (W) belong to the stage they were asked on: another stage leaves them. */
    if (v->param_matrix && v->stage != v->param_stage)
        v->param_matrix = false;
    if (v->head >= explain_stage_heads(p, v->stage))
        v->head = explain_stage_heads(p, v->stage) - 1;
    if (v->head < 0)
        v->head = 0;
    shape_of(v, p, &rows, &cols);
    if (v->cursor_row >= rows)
        v->cursor_row = rows - 1;
    if (v->cursor_col >= cols)
        v->cursor_col = cols - 1;
    if (v->cursor_row < 0)
        v->cursor_row = 0;
    if (v->cursor_col < 0)
        v->cursor_col = 0;
    v->frame.rows = rows;
    v->frame.cols = cols;
}

void
view_explain_text(const struct view *v, const struct pipeline *p, char *buf, size_t size)
{
    if (view_params_shown(v, p, v->stage))
        view_params_text(v, p, buf, size);
    else
        explain_text(p, v->stage, buf, size);
}

const char *
view_key_head(const struct pipeline *p, int head, char *buf, size_t size)
{
    buf[0] = '\0';
    if (p->decoder != NULL && decoder_mixer_of(p->decoder, p->layer) == &decoder_mixer_gdn) {
        /* (a DeltaNet layer's heads are its value heads, each reading a key head) */
        if (p->decoder->gdn.k_heads < p->decoder->gdn.v_heads)
            snprintf(buf, size, " k%d", decoder_gdn_key_head(p->decoder, head));
    } else if (p->decoder != NULL && decoder_kv_heads(p->decoder) < p->decoder->n_head)
        snprintf(buf, size, " k%d", pipeline_kv_head(p, head));
    return buf;
}

void
view_compared(const struct view *v, char *buf, size_t size)
{
    buf[0] = '\0';
    if (v->compare == NULL)
        return;
    if (v->side == COMPARE_DIFFERENCE)
        snprintf(buf, size, "[%.48s - %.48s] ", pipeline_decoder(v->compare->b)->model->name,
                 pipeline_decoder(v->compare->a)->model->name);
    else
        snprintf(buf, size, "[%s: %.60s] ", compare_side_name(v->side),
                 pipeline_decoder(compare_side_pipeline(v->compare, v->side))->model->name);
}

void
view_stage_title(struct view *v, const struct pipeline *p, char *title, size_t title_size,
                 char *formula, size_t formula_size)
{
    struct heatmap_spec spec;
    int rows = 0;
    int cols = 0;
    char layer[24] = "";
    char compared[128] = "";
    char name[160];

    if (view_params_shown(v, p, v->stage)) {
        view_params_title(v, p, title, title_size, formula, formula_size);
        return;
    }

    explain_formula(p, v->stage, formula, formula_size);
    if (view_stage_spec(v, p, v->stage, v->head, &spec) == 0)
        rows = spec.m->rows, cols = spec.m->cols;
    view_compared(v, compared, sizeof compared);
    if (pipeline_stage_per_layer(p, explain_pipeline_stage(p, v->stage, false)))
        snprintf(layer, sizeof layer, "Layer %d: ", p->layer);
    if (explain_stage_per_head(v->stage) && explain_stage_heads(p, v->stage) > 1)
        snprintf(title, title_size, "%s%s%s, head %d of %d (%d x %d)", compared, layer,
                 explain_title(p, v->stage, name, sizeof name), v->head,
                 explain_stage_heads(p, v->stage), rows,
                 cols);
    else if (v->stage == VIEW_POSITIONAL && pipeline_decoder(p) != NULL)
        snprintf(title, title_size, "%s%s%s (%d x %d)", compared, layer,
                 p->layer == 0 ? "Position embeddings added: the block's input" : "The block's input",
                 rows, cols);
    else
        snprintf(title, title_size, "%s%s%s (%d x %d)", compared, layer,
                 explain_title(p, v->stage, name, sizeof name), rows, cols);
    if (v->stage == VIEW_MASK && v->mask_matrix)
        strncat(title, ": the mask itself", title_size - strlen(title) - 1);
}

/*
 * The screens, by enum view_screen: one file and one row each.  A screen
 * the pipeline lacks (the map without a trained model) shows the stage.
 */
static const struct screen *const screens[SCREEN_COUNT] = {
    [SCREEN_STAGE] = &screen_stage,
    [SCREEN_MAP] = &screen_map,
    [SCREEN_SENTENCE] = &screen_sentence,
    [SCREEN_NEXT] = &screen_next,
};

const struct screen *
view_screen_shown(const struct view *v, const struct pipeline *p)
{
    const struct screen *s = screens[v->screen];

    return s->available == NULL || s->available(p) ? s : &screen_stage;
}

void
view_render(struct view *v, const struct pipeline *p, struct grid *g)
{
    const struct screen *s;

    grid_clear(g);
    g->high_contrast = v->present;
    v->frame.tiles = 0;
    v->frame.stage_bar_y = -1;
    v->frame.narration_x = -1;
    for (int k = 0; k < VIEW_STAGE_COUNT; k++)
        v->frame.stage_x[k][0] = v->frame.stage_x[k][1] = -1;
    v->frame.too_small = g->width < VIEW_MIN_WIDTH || g->height < VIEW_MIN_HEIGHT;
    if (v->frame.too_small) {
        grid_printf(g, 0, 0, g->width, style_role(ROLE_ERROR), "attnscope needs %dx%d",
                    VIEW_MIN_WIDTH, VIEW_MIN_HEIGHT);
        grid_printf(g, 0, 1, g->width, style_role(ROLE_TEXT), "this is %dx%d", g->width, g->height);
        grid_put(g, 0, 2, g->width, style_role(ROLE_DIM), "q quits");
        return;
    }
    if (v->blank)
        return; /* (nothing at all: the audience looks at the speaker; any key brings it back) */
    if (v->help) {
        view_draw_help(g, v);
        return;
    }
    if (v->picker) {
        view_draw_picker(g, v);
        return;
    }
    s = view_screen_shown(v, p);
    if (v->present && s->present != NULL)
        s->present(g, v, p);
    else if (v->present)
        view_present_screen(v, p, g, s->draw);
    else
        s->draw(g, v, p);
    if (v->editing)
        view_draw_editor(g, v, p);
}
