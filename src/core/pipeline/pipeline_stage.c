/*
 * pipeline_stage.c: the stage table (see PIPELINE_STAGE_LIST in pipeline.h).
 *
 * Each row of the list becomes one descriptor here: its name, whether it has
 * a matrix per head, what its cells are, when a pipeline has it, where its
 * numbers are (stage_view_ID); its formula (formula_ID) is
 * pipeline_formula.c's.  The functions are named after the row, so a new row
 * without its functions is a compile error, not a stage that silently shows
 * another one's numbers.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "attnscope/decoder/mixer.h"
#include "attnscope/pipeline/pipeline.h"

struct stage_desc {
    const char *name;
    bool per_head;
    enum stage_cells cells;
    enum stage_needs needs;
    void (*view)(const struct pipeline *p, int head, struct pipeline_view *v);
};

/* ------------------------------------------------------------ scaling */

void
pipeline_scaling_of(const struct pipeline *p, struct pipeline_scaling *sc)
{
    const struct attention_config *c = &p->cfg;

    sc->symbol = NULL;
    sc->dim = 0;
    sc->spelled[0] = '\0';
    sc->root_of = c->scale_dim > 0 ? c->scale_dim : p->st.shape.head_dim;
    if (c->scale && !p->scale_without_root && c->scale_dim == 0 && p->scale_scalar > 0.0) {
        /* (Gemma: its query_pre_attn_scalar in place of the head size) */
        sc->symbol = "sqrt(query_pre_attn_scalar)";
        sc->dim = (int)p->scale_scalar;
        sc->root_of = sc->dim;
        snprintf(sc->spelled, sizeof sc->spelled, "sqrt(%g)", p->scale_scalar);
    } else if (c->scale && !p->scale_without_root) {
        sc->symbol = c->scale_dim > 0 ? "sqrt(--scale-dim)" : "sqrt(d_k)";
        sc->dim = c->scale_dim > 0 ? c->scale_dim : p->st.shape.head_dim;
        snprintf(sc->spelled, sizeof sc->spelled, "sqrt(%d)", sc->dim);
    }
    if (c->scale && p->scale_by_layer) {
        size_t len = strlen(sc->spelled);
        sc->symbol = sc->symbol != NULL ? "sqrt(d_k) (l+1)" : "(l+1)";
        snprintf(sc->spelled + len, sizeof sc->spelled - len, "%s%d", len > 0 ? " x " : "",
                 p->layer + 1);
        sc->root_of = 0; /* never "changes nothing": the layer's factor divides */
    }
    sc->temperature = c->temperature != 1.0;
    sc->divisor = p->st.divisor;
}

bool
pipeline_window_hides(const struct pipeline *p, int window, int i, int j)
{
    return window > 0 && p->cfg.mask == ATTN_MASK_CAUSAL && !p->cfg.cross &&
           j < decoder_first_key(window, i);
}

bool
pipeline_out_of_window(const struct pipeline *p, int i, int j)
{
    return pipeline_window_hides(p, p->window, i, j);
}

bool
pipeline_masked(const struct pipeline *p, int i, int j)
{
    return attention_masked(&p->cfg, i, j) || pipeline_out_of_window(p, i, j);
}

/* ------------------------------------------------------ where numbers are */

/* Columns per head of a (n, H d_k) stage, or 0 with one head. */
static int
head_columns(const struct pipeline *p)
{
    return p->st.shape.heads > 1 ? p->st.shape.head_dim : 0;
}

static void
stage_view_embeddings(const struct pipeline *p, int head, struct pipeline_view *v)
{
    (void)head;
    v->m = p->embeddings;
}

static void
stage_view_positional(const struct pipeline *p, int head, struct pipeline_view *v)
{
    (void)head;
    v->m = p->positional;
}

static void
stage_view_inputs(const struct pipeline *p, int head, struct pipeline_view *v)
{
    (void)head;
    v->m = p->inputs;
}

/* The rows of the keys' side: the source's tokens across sentences, else the sentence's. */
static void
key_rows(const struct pipeline *p, struct pipeline_view *v)
{
    v->row_labels = p->key_labels;
    v->row_marked = p->qkv_given ? NULL : p->cfg.cross ? p->source_made_up : p->made_up;
}

static void
stage_view_source(const struct pipeline *p, int head, struct pipeline_view *v)
{
    (void)head;
    v->m = p->source;
    key_rows(p, v);
}

static void
stage_view_queries(const struct pipeline *p, int head, struct pipeline_view *v)
{
    (void)head;
    v->m = p->st.queries;
    v->col_group = head_columns(p);
}

static void
stage_view_keys(const struct pipeline *p, int head, struct pipeline_view *v)
{
    (void)head;
    v->m = p->st.keys;
    key_rows(p, v);
    v->col_group = head_columns(p);
}

static void
stage_view_values(const struct pipeline *p, int head, struct pipeline_view *v)
{
    (void)head;
    v->m = p->st.values;
    key_rows(p, v);
    v->col_group = head_columns(p);
}

static void
stage_view_queries_normed(const struct pipeline *p, int head, struct pipeline_view *v)
{
    (void)head;
    v->m = p->block.q_normed;
    v->col_group = head_columns(p);
}

static void
stage_view_keys_normed(const struct pipeline *p, int head, struct pipeline_view *v)
{
    (void)head;
    v->m = p->block.k_normed;
    key_rows(p, v);
    v->col_group = head_columns(p);
}

static void
stage_view_queries_rotated(const struct pipeline *p, int head, struct pipeline_view *v)
{
    (void)head;
    v->m = p->block.q_rotated;
    v->col_group = head_columns(p);
}

static void
stage_view_keys_rotated(const struct pipeline *p, int head, struct pipeline_view *v)
{
    (void)head;
    v->m = p->block.k_rotated;
    key_rows(p, v);
    v->col_group = head_columns(p);
}

/* One head of a (H, nq, nk) stage, rows the queries and columns the keys. */
static void
one_head(const struct pipeline *p, const float *all, int head, struct pipeline_view *v)
{
    if (all == NULL)
        return;
    if (head < 0 || head >= p->st.shape.heads)
        head = 0;
    v->m = attention_head(&p->st, all, head);
    v->col_labels = p->key_labels;
}

static void
stage_view_scores(const struct pipeline *p, int head, struct pipeline_view *v)
{
    one_head(p, p->st.scores, head, v);
}

static void
stage_view_masked(const struct pipeline *p, int head, struct pipeline_view *v)
{
    one_head(p, p->st.masked, head, v);
}

static void
stage_view_scaled(const struct pipeline *p, int head, struct pipeline_view *v)
{
    one_head(p, p->st.scaled, head, v);
}

static void
stage_view_weights(const struct pipeline *p, int head, struct pipeline_view *v)
{
    one_head(p, p->st.weights, head, v);
}

static void
stage_view_dropped(const struct pipeline *p, int head, struct pipeline_view *v)
{
    one_head(p, p->st.dropped, head, v);
}

static void
stage_view_averaged(const struct pipeline *p, int head, struct pipeline_view *v)
{
    (void)head;
    v->m = p->st.averaged;
    v->col_labels = p->key_labels;
}

static void
stage_view_context(const struct pipeline *p, int head, struct pipeline_view *v)
{
    (void)head;
    v->m = p->st.context;
    v->col_group = head_columns(p);
}

static void
stage_view_attn_gate(const struct pipeline *p, int head, struct pipeline_view *v)
{
    (void)head;
    v->m = p->block.attn_gate;
    v->col_group = head_columns(p);
}

static void
stage_view_gated(const struct pipeline *p, int head, struct pipeline_view *v)
{
    (void)head;
    v->m = p->block.gated;
    v->col_group = head_columns(p);
}

static void
stage_view_delta_qkv(const struct pipeline *p, int head, struct pipeline_view *v)
{
    (void)head;
    v->m = p->block.delta_qkv;
}

static void
stage_view_delta_conv(const struct pipeline *p, int head, struct pipeline_view *v)
{
    (void)head;
    v->m = p->block.delta_conv;
}

static void
stage_view_delta_q(const struct pipeline *p, int head, struct pipeline_view *v)
{
    (void)head;
    v->m = p->block.delta_q;
    v->col_group = p->decoder != NULL ? p->decoder->gdn.k_dim : 0;
}

static void
stage_view_delta_k(const struct pipeline *p, int head, struct pipeline_view *v)
{
    (void)head;
    v->m = p->block.delta_k;
    v->col_group = p->decoder != NULL ? p->decoder->gdn.k_dim : 0;
}

/*
 * A per-head column's label ("h0" ...): beta's and the decay's columns are a
 * DeltaNet layer's value heads.
 */
#define HEAD_LABEL(n) "h" #n
#define HEAD_LABELS_TEN(t)                                                                  \
    HEAD_LABEL(t##0), HEAD_LABEL(t##1), HEAD_LABEL(t##2), HEAD_LABEL(t##3), HEAD_LABEL(t##4), \
        HEAD_LABEL(t##5), HEAD_LABEL(t##6), HEAD_LABEL(t##7), HEAD_LABEL(t##8), HEAD_LABEL(t##9)
static const char *const head_labels[] = {
    "h0", "h1", "h2", "h3", "h4", "h5", "h6", "h7", "h8", "h9", HEAD_LABELS_TEN(1),
    HEAD_LABELS_TEN(2), HEAD_LABELS_TEN(3), HEAD_LABELS_TEN(4), HEAD_LABELS_TEN(5),
    HEAD_LABELS_TEN(6), HEAD_LABELS_TEN(7), HEAD_LABELS_TEN(8), HEAD_LABELS_TEN(9),
    HEAD_LABELS_TEN(10), HEAD_LABELS_TEN(11), HEAD_LABELS_TEN(12),
};

static const char *const *
head_label_columns(int cols)
{
    return cols <= (int)(sizeof head_labels / sizeof head_labels[0]) ? head_labels : NULL;
}

static void
stage_view_beta(const struct pipeline *p, int head, struct pipeline_view *v)
{
    (void)head;
    v->m = p->block.beta;
    v->col_labels = head_label_columns(v->m.cols);
}

static void
stage_view_decay(const struct pipeline *p, int head, struct pipeline_view *v)
{
    (void)head;
    v->m = p->block.decay;
    v->col_labels = head_label_columns(v->m.cols);
}

static void
stage_view_effective(const struct pipeline *p, int head, struct pipeline_view *v)
{
    if (p->block.effective == NULL)
        return;
    if (head < 0 || head >= pipeline_stage_heads(p, STAGE_EFFECTIVE))
        head = 0;
    v->m = attention_head(&p->st, p->block.effective, head);
    v->col_labels = p->key_labels;
}

static void
stage_view_delta_read(const struct pipeline *p, int head, struct pipeline_view *v)
{
    (void)head;
    v->m = p->block.delta_read;
    v->col_group = p->decoder != NULL ? p->decoder->gdn.v_dim : 0;
}

static void
stage_view_delta_normed(const struct pipeline *p, int head, struct pipeline_view *v)
{
    (void)head;
    v->m = p->block.delta_normed;
    v->col_group = p->decoder != NULL ? p->decoder->gdn.v_dim : 0;
}

static void
stage_view_output(const struct pipeline *p, int head, struct pipeline_view *v)
{
    (void)head;
    v->m = p->st.output;
}

static void
stage_view_output_dropped(const struct pipeline *p, int head, struct pipeline_view *v)
{
    (void)head;
    v->m = p->st.output_dropped;
}

static void
stage_view_ln1(const struct pipeline *p, int head, struct pipeline_view *v)
{
    (void)head;
    v->m = p->block.ln1;
}

static void
stage_view_residual1(const struct pipeline *p, int head, struct pipeline_view *v)
{
    (void)head;
    v->m = p->block.residual1;
}

static void
stage_view_ln2(const struct pipeline *p, int head, struct pipeline_view *v)
{
    (void)head;
    v->m = p->block.ln2;
}

static void
stage_view_gate(const struct pipeline *p, int head, struct pipeline_view *v)
{
    (void)head;
    v->m = p->block.gate;
}

static void
stage_view_swiglu(const struct pipeline *p, int head, struct pipeline_view *v)
{
    (void)head;
    v->m = p->block.swiglu;
}

static void
stage_view_geglu(const struct pipeline *p, int head, struct pipeline_view *v)
{
    (void)head;
    v->m = p->block.swiglu;
}

static void
stage_view_output_normed(const struct pipeline *p, int head, struct pipeline_view *v)
{
    (void)head;
    v->m = p->block.output_normed;
}

static void
stage_view_mlp_normed(const struct pipeline *p, int head, struct pipeline_view *v)
{
    (void)head;
    v->m = p->block.mlp_normed;
}

static void
stage_view_router(const struct pipeline *p, int head, struct pipeline_view *v)
{
    (void)head;
    v->m = p->block.router;
    v->col_labels = p->block.expert_labels;
}

static void
stage_view_shared(const struct pipeline *p, int head, struct pipeline_view *v)
{
    (void)head;
    v->m = p->block.shared;
}

static void
stage_view_fc(const struct pipeline *p, int head, struct pipeline_view *v)
{
    (void)head;
    v->m = p->block.fc;
}

static void
stage_view_gelu(const struct pipeline *p, int head, struct pipeline_view *v)
{
    (void)head;
    v->m = p->block.gelu;
}

static void
stage_view_mlp(const struct pipeline *p, int head, struct pipeline_view *v)
{
    (void)head;
    v->m = p->block.mlp;
}

static void
stage_view_residual2(const struct pipeline *p, int head, struct pipeline_view *v)
{
    (void)head;
    v->m = p->block.residual2;
}

static void
stage_view_final(const struct pipeline *p, int head, struct pipeline_view *v)
{
    (void)head;
    v->m = p->block.final;
}

/* ------------------------------------------------------------------ table */

static const struct stage_desc stages[] = {
#define PIPELINE_STAGE_DESC(e, id, per_head, cells, needs) \
    [e] = { #id, per_head, cells, needs, stage_view_##id },
    PIPELINE_STAGE_LIST(PIPELINE_STAGE_DESC)
#undef PIPELINE_STAGE_DESC
};
_Static_assert(sizeof stages / sizeof stages[0] == STAGE_COUNT, "one descriptor per stage");

const char *
pipeline_stage_name(enum pipeline_stage s)
{
    return (unsigned)s < STAGE_COUNT ? stages[s].name : "?";
}

bool
pipeline_stage_per_head(enum pipeline_stage s)
{
    return (unsigned)s < STAGE_COUNT && stages[s].per_head;
}

enum stage_cells
pipeline_stage_cells(enum pipeline_stage s)
{
    return (unsigned)s < STAGE_COUNT ? stages[s].cells : CELLS_VALUES;
}

int
pipeline_stage_parse(const char *name, enum pipeline_stage *s)
{
    for (int i = 0; i < STAGE_COUNT; i++) {
        if (strcmp(name, stages[i].name) == 0) {
            *s = (enum pipeline_stage)i;
            return 0;
        }
    }
    return -1;
}

bool
pipeline_stage_present(const struct pipeline *p, enum pipeline_stage s)
{
    if ((unsigned)s >= STAGE_COUNT || p->family == NULL || !(p->family->stages & FAMILY_STAGE(s)))
        return false;
    /* A layer of a mixer that is not attention has none of attention's stages, only its output. */
    if (p->decoder != NULL && !decoder_mixer_of(p->decoder, p->layer)->attention_stages &&
        s >= STAGE_QUERIES && s <= STAGE_CONTEXT)
        return false;
    /* A sparse layer's MLP is its experts: no one gate, up or activation of its own. */
    if (p->decoder != NULL && decoder_sparse(p->decoder, p->layer) &&
        (s == STAGE_GATE || s == STAGE_UP || s == STAGE_GELU || s == STAGE_SWIGLU ||
         s == STAGE_GEGLU))
        return false;
    switch (stages[s].needs) {
    case NEEDS_NOTHING:
        return true;
    case NEEDS_SENTENCE:
        return !p->qkv_given;
    case NEEDS_POSITIONAL:
        return !p->qkv_given && p->cfg.positional;
    case NEEDS_WEIGHT_DROPOUT:
        return !p->st.shape.dropout_output;
    case NEEDS_OUTPUT_DROPOUT:
        return p->st.shape.dropout_output;
    case NEEDS_AVERAGE:
        return !p->qkv_given && attention_variant_averages(p->cfg.variant);
    case NEEDS_SOURCE:
        return !p->qkv_given && p->cfg.cross;
    case NEEDS_QK_NORM:
        return p->decoder != NULL && p->decoder->qk_norm;
    case NEEDS_ROPE:
        return p->decoder != NULL && p->decoder->positions == DECODER_POSITIONS_ROPE;
    case NEEDS_GATED:
        return p->decoder != NULL && decoder_gated(p->decoder);
    case NEEDS_UNGATED:
        return p->decoder == NULL || !decoder_gated(p->decoder);
    case NEEDS_SWIGLU:
        return p->decoder != NULL && p->decoder->mlp == DECODER_MLP_SWIGLU;
    case NEEDS_GEGLU:
        return p->decoder != NULL && p->decoder->mlp == DECODER_MLP_GEGLU;
    case NEEDS_PRE_NORM:
        return p->decoder == NULL || decoder_pre_norms(p->decoder);
    case NEEDS_POST_NORM:
        return p->decoder != NULL && decoder_post_norms(p->decoder);
    case NEEDS_EXPERTS:
        return p->decoder != NULL && decoder_sparse(p->decoder, p->layer);
    case NEEDS_SHARED_EXPERT:
        return p->decoder != NULL && decoder_sparse(p->decoder, p->layer) &&
               p->decoder->moe.d_shared > 0;
    case NEEDS_ATTN_GATE:
        return p->decoder != NULL && p->decoder->attn_gate && decoder_attends(p->decoder, p->layer);
    case NEEDS_DELTANET:
        return p->decoder != NULL && decoder_mixer_of(p->decoder, p->layer) == &decoder_mixer_gdn;
    }
    return false;
}

char *
pipeline_stage_names(const struct pipeline *p, const char *sep, char *buf, size_t size)
{
    size_t len = 0;

    if (size == 0)
        return buf;
    buf[0] = '\0';
    for (int i = 0; i < STAGE_COUNT; i++) {
        int n;
        if (p != NULL && !pipeline_stage_present(p, (enum pipeline_stage)i))
            continue;
        n = snprintf(buf + len, size - len, "%s%s", len ? sep : "", stages[i].name);
        if (n < 0 || (size_t)n >= size - len) {
            buf[len] = '\0'; /* whole names only */
            break;
        }
        len += (size_t)n;
    }
    return buf;
}

void
pipeline_stage_view(const struct pipeline *p, enum pipeline_stage s, int head,
                    struct pipeline_view *v)
{
    memset(v, 0, sizeof *v);
    v->row_labels = p->query_labels;
    v->row_marked = p->qkv_given ? NULL : p->made_up;
    if ((unsigned)s < STAGE_COUNT)
        stages[s].view(p, head, v);
}

int
pipeline_stage_heads(const struct pipeline *p, enum pipeline_stage s)
{
    const struct decoder_mixer *m;

    if (!pipeline_stage_per_head(s))
        return 1;
    if (s != STAGE_EFFECTIVE || p->decoder == NULL)
        return p->st.shape.heads;
    m = decoder_mixer_of(p->decoder, p->layer);
    return m->heads != NULL ? m->heads(p->decoder) : 1;
}

int
pipeline_stage_heads_mean(const struct pipeline *p, enum pipeline_stage s, float *mean)
{
    struct pipeline_view v;
    const int heads = pipeline_stage_heads(p, s);

    if (!pipeline_stage_per_head(s))
        return -1;
    if (heads == p->st.shape.heads) {
        /* (head 0's view starts the stage: each head's is attention_head's of it) */
        pipeline_stage_view(p, s, 0, &v);
        attention_heads_mean(mean, &p->st, v.m.data);
        return 0;
    }
    /* A mixer's own heads: each cell's summed in order in float, then divided, as above. */
    pipeline_stage_view(p, s, 0, &v);
    memset(mean, 0, (size_t)v.m.rows * (size_t)v.m.cols * sizeof *mean);
    for (int h = 0; h < heads; h++) {
        struct pipeline_view hv;
        pipeline_stage_view(p, s, h, &hv);
        for (int i = 0; i < v.m.rows; i++)
            for (int j = 0; j < v.m.cols; j++)
                mean[(size_t)i * (size_t)v.m.cols + (size_t)j] += MAT_AT(&hv.m, i, j);
    }
    for (size_t e = 0; e < (size_t)v.m.rows * (size_t)v.m.cols; e++)
        mean[e] /= (float)heads;
    return 0;
}

int
pipeline_kv_head(const struct pipeline *p, int h)
{
    return p->decoder != NULL ? decoder_kv_head_of(p->decoder, h) : h;
}

const struct matrix *
pipeline_scored_queries(const struct pipeline *p)
{
    return p->block.q_rotated.data != NULL ? &p->block.q_rotated : &p->st.queries;
}

const struct matrix *
pipeline_scored_keys(const struct pipeline *p)
{
    return p->block.k_rotated.data != NULL ? &p->block.k_rotated : &p->st.keys;
}
