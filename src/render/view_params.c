/*
 * view_params.c: the parameters a stage uses, as a matrix of their own (W).
 *
 * On the Q K V stage: one head's W_query, W_key and W_value side by side; on
 * the output stage: out_proj.  Each is shown the way the stage uses it, as
 * "x times this matrix": rows are the input features, columns the outputs
 * (q0.. k0.. v0.. or d0..), whatever way the weight is stored (nn.Linear
 * keeps (out, in) and computes x W^T; SelfAttention_v1 keeps (in, out) and
 * computes x W).  A bias is the last row: x W^T + b is [x, 1] times this.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "render/stagemap.h"
#include "render/view_parts.h"

/* The roles a stage's parameters have (Q, K, V or out_proj) and how many. */
static int
stage_roles(enum view_stage s, enum param_role roles[3])
{
    if (s == VIEW_QKV) {
        roles[0] = PARAM_QUERY;
        roles[1] = PARAM_KEY;
        roles[2] = PARAM_VALUE;
        return 3;
    }
    if (s == VIEW_OUTPUT) {
        roles[0] = PARAM_OUT;
        return 1;
    }
    return 0;
}

bool
view_params_shown(const struct view *v, const struct pipeline *p, enum view_stage s)
{
    enum param_role roles[3];
    struct param_column pc;

    return v->param_matrix && v->param_stage == s && stage_roles(s, roles) > 0 &&
           params_column(&p->params, roles[0], 0, p->st.shape.head_dim, 0, &pc) == 0;
}

int
view_params_spec(struct view *v, const struct pipeline *p, enum view_stage s, int head,
                 struct heatmap_spec *spec)
{
    enum param_role roles[3];
    const int n_roles = stage_roles(s, roles);
    const int width = s == VIEW_OUTPUT ? p->st.shape.d_output : p->st.shape.head_dim;
    struct param_column first;
    int in;
    bool bias;
    int rows;
    int cols = n_roles * width;

    if (n_roles == 0 ||
        params_column(&p->params, roles[0], head, p->st.shape.head_dim, 0, &first) != 0)
        return -1;
    in = param_in_features(first.weight);
    bias = first.bias != NULL;
    rows = in + bias;
    if (view_reserve_scratch(v, (size_t)rows * (size_t)cols) != 0 ||
        view_reserve_row_labels(v, rows) != 0 || (s == VIEW_QKV && view_qkv_labels(v, width) != 0))
        return -1;
    for (int r = 0; r < n_roles; r++)
        for (int c = 0; c < width; c++) {
            struct param_column pc;
            if (params_column(&p->params, roles[r], head, p->st.shape.head_dim, c, &pc) != 0)
                return -1;
            for (int i = 0; i < in; i++)
                v->work.scratch[(size_t)i * (size_t)cols + (size_t)(r * width + c)] =
                    param_weight_at(pc.weight, i, pc.out);
            if (bias)
                v->work.scratch[(size_t)in * (size_t)cols + (size_t)(r * width + c)] =
                    pc.bias != NULL ? pc.bias->m.data[pc.out] : 0.0f;
        }
    for (int i = 0; i < in; i++)
        snprintf(v->work.row_label[i], 40, "d%d", i);
    if (bias)
        snprintf(v->work.row_label[in], 40, "bias");

    memset(spec, 0, sizeof *spec);
    v->work.map.m = matrix_view(v->work.scratch, rows, cols);
    spec->m = &v->work.map.m;
    spec->row_labels = (const char *const *)v->work.row_label;
    spec->col_labels = s == VIEW_QKV ? (const char *const *)v->work.labels : NULL;
    spec->col_prefix = "d";
    spec->ramp = v->present ? RAMP_DIVERGING_HC : RAMP_DIVERGING;
    stagemap_range(v->work.scratch, (size_t)rows * (size_t)cols, &spec->lo, &spec->hi);
    /* The weights' own range for the legend; the scale is symmetric, so that white is 0. */
    spec->data_known = true;
    spec->data_lo = spec->lo;
    spec->data_hi = spec->hi;
    {
        float m = fmaxf(fabsf(spec->lo), fabsf(spec->hi));
        spec->lo = -m;
        spec->hi = m;
    }
    spec->cursor_row = spec->cursor_col = -1;
    spec->colour = v->colour;
    spec->utf8 = v->utf8;
    return 0;
}

void
view_params_title(const struct view *v, const struct pipeline *p, char *title, size_t title_size,
                  char *formula, size_t formula_size)
{
    struct param_column pc;
    const bool heads = p->st.shape.heads > 1;
    const int hd = p->st.shape.head_dim;
    bool transposed = false;
    bool bias = false;
    int rows = 0;

    if (params_column(&p->params, v->stage == VIEW_OUTPUT ? PARAM_OUT : PARAM_QUERY, v->head, hd, 0,
                      &pc) == 0) {
        transposed = pc.weight->transposed;
        bias = pc.bias != NULL;
        rows = param_in_features(pc.weight) + bias;
    }
    if (v->stage == VIEW_OUTPUT) {
        snprintf(title, title_size, "Parameters of the output projection (%d x %d)", rows,
                 p->st.shape.d_output);
        snprintf(formula, formula_size, "out = z W_o^T + b_o: rows are z's columns, then the bias");
        return;
    }
    if (heads)
        snprintf(title, title_size, "Parameters of Q, K and V, head %d of %d (%d x %d)", v->head,
                 p->st.shape.heads, rows, 3 * hd);
    else
        snprintf(title, title_size, "Parameters of Q, K and V (%d x %d)", rows, 3 * hd);
    snprintf(formula, formula_size, "Q = x %s%s: rows are x's columns%s", transposed ? "W_q" : "W_q^T",
             bias ? " + b_q" : "", bias ? ", then the bias" : "");
}

void
view_params_text(const struct view *v, const struct pipeline *p, char *buf, size_t size)
{
    const char *origin = p->params_given ? "loaded with --weights"
                                         : "drawn from the seed: untrained, as the book's are";

    if (v->stage == VIEW_OUTPUT)
        snprintf(buf, size,
                 "out_proj, the output projection's weights (%s). Each column makes one column "
                 "of the output from the concatenated context z. W goes back to the output.",
                 origin);
    else
        snprintf(buf, size,
                 "The weights that make queries, keys and values (%s). Each column makes one "
                 "column of Q, K or V: a token's row x times the column.%s W goes back to Q, K "
                 "and V.",
                 origin, p->st.shape.heads > 1 ? " Tab: the next head's." : "");
}
