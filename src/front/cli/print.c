/* print.c: aligned text tables for --print (see print.h). */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/decoder/mixer.h"
#include "attnscope/files/csvio.h"
#include "attnscope/families/model/family_model.h"
#include "attnscope/families/model/generate.h"
#include "attnscope/families/model/headmap.h"

#include "attnscope/base/utf8.h"
#include "front/cli/print.h"
#include "render/parts/parts.h"
#include "render/grid.h"
#include "render/heatmap.h"
#include "render/stagemap.h"


/* A matrix as a heatmap, through the same renderer as the interactive view. */
static void
print_heatmap(FILE *out, const char *title, const struct heatmap_spec *spec,
              const struct print_options *po)
{
    struct grid g;
    struct heatmap_geometry geo;
    struct rect r;
    int scroll_row = 0;
    int scroll_col = 0;
    int height = spec->m->rows + 2;
    /* No wider than the table can use: its labels, every column at the widest cell, the legend. */
    long need = 16 + 14L * spec->m->cols;
    int width = po->width < need ? po->width : need < 80 ? 80 : (int)need;

    fprintf(out, "%s\n", title);
    if (grid_create(&g, width, height) != 0) {
        fprintf(out, "(no memory for a %d x %d heatmap)\n\n", width, height);
        if (po->failed != NULL)
            *po->failed = true;
        return;
    }
    r.x = 0;
    r.y = 0;
    r.w = width;
    r.h = height - 1;
    heatmap_render(&g, r, spec, &scroll_row, &scroll_col, &geo);
    heatmap_legend(&g, 0, height - 1, width, spec);
    grid_write_ansi(&g, out, po->depth);
    if (geo.vis_cols < spec->m->cols)
        fprintf(out, "(columns 1-%d of %d shown: a wider terminal shows more)\n", geo.vis_cols,
                spec->m->cols);
    fputc('\n', out);
    grid_destroy(&g);
}

/* "tokens (6): Your journey ..." with made-up ones starred; returns how many are. */
static int
print_tokens(FILE *out, const char *what, const struct token_list *tl, const unsigned char *made_up)
{
    int count = 0;

    fprintf(out, "%s (%d):", what, tl->count);
    for (int t = 0; t < tl->count; t++) {
        fprintf(out, " %s%s", tl->text[t], made_up[t] ? "*" : "");
        count += made_up[t];
    }
    fputc('\n', out);
    return count;
}

static void
print_header(FILE *out, const struct pipeline *p, const struct print_options *po)
{
    const struct attention_config *c = &p->cfg;
    const struct attention_shape *s = &p->st.shape;
    struct pipeline_scaling sc;
    char num[32];
    int made_up = 0;

    fprintf(out, "attnscope: %s (%s), seed %llu\n", attention_variant_name(c->variant),
            attention_variant_class(c->variant), (unsigned long long)c->seed);
    fprintf(out, "  %s %d, ", p->qkv_given ? "d" : "d_in", p->d_in);
    if (p->qkv_given)
        fprintf(out, "Q, K and V given (%d queries, %d keys)", p->st.nq, p->st.nk);
    else
        switch (attention_variant_info(c->variant)->proj) {
        case PROJ_NONE:
            fprintf(out, "no weights (Q = K = V = x)");
            break;
        case PROJ_LINEAR_PER_HEAD:
            fprintf(out, "%d heads of d_out %d, concatenated to %d", s->heads, s->head_dim, s->d_qkv);
            break;
        case PROJ_LINEAR_SPLIT:
            fprintf(out, "d_out %d in %d head%s of d_k %d", c->d_out, s->heads,
                    s->heads == 1 ? "" : "s", s->head_dim);
            break;
        case PROJ_LINEAR_LISTS:
            fprintf(out, "d_model %d in %d head%s of d %d, with biases", s->d_qkv, s->heads,
                    s->heads == 1 ? "" : "s", s->head_dim);
            break;
        case PROJ_IN_PROJ:
            fprintf(out, "embed_dim %d in %d head%s of %d, in_proj and out_proj", s->d_qkv,
                    s->heads, s->heads == 1 ? "" : "s", s->head_dim);
            break;
        case PROJ_RAND:
        case PROJ_LINEAR:
            fprintf(out, "d_out %d", c->d_out);
            break;
        }
    fprintf(out, "%s\n", c->qkv_bias && attention_variant_has_weights(c->variant) &&
                              !attention_variant_splits_d_in(c->variant)
                              ? ", qkv bias" : "");
    pipeline_scaling_of(p, &sc);
    fprintf(out, "  mask %s, scores / %g", c->mask == ATTN_MASK_CAUSAL ? "causal" : "none",
            (double)sc.divisor);
    if (sc.symbol != NULL)
        fprintf(out, " (%s = %s%s)", sc.symbol, sc.spelled, sc.temperature ? " * T" : "");
    if (c->temperature != 1.0) {
        attn_shortest(num, sizeof num, c->temperature);
        fprintf(out, ", temperature %s", num);
    }
    attn_shortest(num, sizeof num, c->dropout);
    fprintf(out, "\n  dropout %s%s, %s mode", num,
            p->st.shape.dropout_output ? " on the output" : "", c->train ? "training" : "evaluation");
    if (p->st.dropout_on)
        fprintf(out, ", %s generator path%s", c->rng_path == RNG_PATH_MKL ? "MKL" : "default",
                c->dropout_reseed ? " (reseeded)" : "");
    if (p->qkv_given)
        fprintf(out, "\n  queries, keys and values given directly (%s)\n", po->vocab_source);
    else
        fprintf(out, "\n  embeddings: %s%s; parameters: %s\n", po->vocab_source,
                !c->positional ? "" : c->positional_learned ? " + learned positional embedding" : " + positional encoding",
                p->params.count == 0 ? "none" : p->params_given ? "loaded" : "drawn from the seed");
    if (!p->qkv_given && !p->params_given)
        fprintf(out, "  untrained: the patterns show how attention computes, not what words mean\n");
    if (p->qkv_given) {
        fprintf(out, "queries (%d):", p->st.nq);
        for (int i = 0; i < p->st.nq; i++)
            fprintf(out, " %s", p->query_labels[i]);
        fprintf(out, "\nkeys (%d):", p->st.nk);
        for (int j = 0; j < p->st.nk; j++)
            fprintf(out, " %s", p->key_labels[j]);
        fputc('\n', out);
        fputc('\n', out);
        return;
    }
    if (p->cfg.cross)
        fprintf(out, "cross-attention: Q from the target, K and V from the source\n");
    made_up += print_tokens(out, p->cfg.cross ? "target" : "tokens", &p->tokens, p->made_up);
    if (p->cfg.cross)
        made_up += print_tokens(out, "source", &p->source_tokens, p->source_made_up);
    if (made_up > 0)
        fprintf(out, "  * not in the vocabulary: its vector is made up from the word itself, "
                     "so it carries no meaning\n");
    fputc('\n', out);
}

void
print_stage(FILE *out, const struct pipeline *p, enum pipeline_stage s, int head,
            const struct print_options *po)
{
    print_stage_of(out, p, NULL, COMPARE_FIRST, s, head, po);
}

void
print_stage_of(FILE *out, const struct pipeline *p, struct compare *c, enum compare_side side,
               enum pipeline_stage s, int head, const struct print_options *po)
{
    struct pipeline_view v;
    struct table t;
    char title[320];
    char who[300] = "";
    const int heads = pipeline_stage_heads(p, s);

    char layer[32] = "";

    if (c != NULL) {
        struct attn_error err;
        const struct family_model_state *g = pipeline_decoder(compare_side_pipeline(c, side));
        if (compare_stage_view(c, side, s, head, &v, &err) != ATTN_OK) {
            fprintf(out, "%s: %s\n\n", compare_side_name(side), err.msg);
            return;
        }
        if (side == COMPARE_DIFFERENCE)
            snprintf(who, sizeof who, "difference (second - first), ");
        else
        {
            char name[4 * sizeof g->model->name];
            attn_escape_text(name, sizeof name, g->model->name);
            snprintf(who, sizeof who, "%s (%.200s), ", compare_side_name(side), name);
        }
    } else {
        pipeline_stage_view(p, s, head, &v);
    }
    if (pipeline_stage_per_layer(p, s))
        snprintf(layer, sizeof layer, "layer %d, ", p->layer);
    if (pipeline_stage_per_head(s) && heads > 1)
        snprintf(title, sizeof title, "%s%s%s, head %d of %d (%d x %d): %s", who, layer,
                 pipeline_stage_name(s), head, heads, v.m.rows, v.m.cols,
                 pipeline_stage_formula(p, s));
    else
        snprintf(title, sizeof title, "%s%s%s (%d x %d): %s", who, layer, pipeline_stage_name(s),
                 v.m.rows, v.m.cols, pipeline_stage_formula(p, s));
    if (po->heatmap) {
        struct stagemap sm;
        struct heatmap_spec spec;
        memset(&sm, 0, sizeof sm);
        sm.compare = c;
        sm.side = side;
        stagemap_spec(&sm, p, s, head, false, po->depth != DEPTH_MONO, po->utf8, &spec);
        spec.max_cell_w = 10;
        print_heatmap(out, title, &spec, po);
        return;
    }
    memset(&t, 0, sizeof t);
    t.title = title;
    t.m = &v.m;
    t.rows = v.row_labels;
    t.cols = v.col_labels;
    t.col_prefix = "d";
    t.mark = v.row_marked; /* the rows' own sentence's made-up tokens (the source's for keys) */
    print_table(out, &t, po);
}

void
print_stage_list(FILE *out)
{
    for (int s = 0; s < STAGE_COUNT; s++) {
        const bool block = (PIPELINE_BLOCK_STAGES & FAMILY_STAGE(s)) != 0;
        fprintf(out, "%s\t%s\t%s\n", pipeline_stage_name((enum pipeline_stage)s),
                pipeline_stage_per_head((enum pipeline_stage)s) ? "per head" : "whole",
                block ? "models" : "book and models");
    }
    fputs("tokens\tselection\tmodels\nnext\tselection\tmodels\nheads\tselection\tmodels\n"
          "lens\tselection\tmodels\nkv\tselection\tmodels\n",
          out);
}

void
print_stage_window(FILE *out, const struct pipeline *p, enum pipeline_stage s, int head, int row0,
                   int rows, int col0, int cols, const struct print_options *po)
{
    struct pipeline_view v;
    struct table t;
    struct matrix part;
    char title[200];
    char (*names)[16] = NULL;
    const char **col_names = NULL;
    float *data;

    pipeline_stage_view(p, s, head, &v);
    row0 = row0 < 0 ? 0 : row0;
    col0 = col0 < 0 ? 0 : col0;
    rows = row0 + rows > v.m.rows ? v.m.rows - row0 : rows;
    cols = col0 + cols > v.m.cols ? v.m.cols - col0 : cols;
    if (rows == v.m.rows && cols == v.m.cols) {
        print_stage(out, p, s, head, po);
        return;
    }
    data = malloc((size_t)rows * (size_t)cols * sizeof *data);
    if (v.col_labels == NULL) {
        names = malloc((size_t)cols * sizeof *names);
        col_names = malloc((size_t)cols * sizeof *col_names);
    }
    if (data == NULL || (v.col_labels == NULL && (names == NULL || col_names == NULL))) {
        free(data);
        free(names);
        free(col_names);
        fprintf(out, "(out of memory: %s not printed)\n\n", pipeline_stage_name(s));
        return;
    }
    for (int i = 0; i < rows; i++)
        memcpy(data + (size_t)i * (size_t)cols, &MAT_AT(&v.m, row0 + i, col0),
               (size_t)cols * sizeof *data);
    for (int j = 0; col_names != NULL && j < cols; j++) {
        snprintf(names[j], sizeof names[j], "d%d", col0 + j);
        col_names[j] = names[j];
    }
    part = matrix_view(data, rows, cols);
    if (pipeline_stage_per_head(s) && pipeline_stage_heads(p, s) > 1)
        snprintf(title, sizeof title, "%s, head %d of %d: rows %d-%d and columns %d-%d of %d x %d",
                 pipeline_stage_name(s), head, pipeline_stage_heads(p, s), row0, row0 + rows - 1, col0,
                 col0 + cols - 1, v.m.rows, v.m.cols);
    else
        snprintf(title, sizeof title, "%s: rows %d-%d and columns %d-%d of %d x %d",
                 pipeline_stage_name(s), row0, row0 + rows - 1, col0, col0 + cols - 1, v.m.rows,
                 v.m.cols);
    memset(&t, 0, sizeof t);
    t.title = title;
    t.m = &part;
    t.rows = v.row_labels != NULL ? v.row_labels + row0 : NULL;
    t.cols = v.col_labels != NULL ? v.col_labels + col0 : col_names;
    t.col_prefix = "d";
    t.mark = v.row_marked != NULL ? v.row_marked + row0 : NULL;
    print_table(out, &t, po);
    free(data);
    free(names);
    free(col_names);
}

static void
print_param(FILE *out, const struct param *pa, const struct print_options *po)
{
    struct table t;
    char title[128];

    snprintf(title, sizeof title, "%s (%d x %d)%s", pa->name, pa->m.rows, pa->m.cols,
             pa->transposed ? ", used as x @ W" : pa->is_bias ? "" : ", used as x @ W^T");
    if (po->heatmap) {
        char labels[64][8];
        const char *row_labels[64];
        struct heatmap_spec spec;
        int rows = pa->m.rows < 64 ? pa->m.rows : 64;
        struct matrix shown = matrix_top(&pa->m, rows);
        for (int i = 0; i < rows; i++) {
            snprintf(labels[i], sizeof labels[i], "r%d", i);
            row_labels[i] = labels[i];
        }
        memset(&spec, 0, sizeof spec);
        spec.m = &shown;
        spec.row_labels = row_labels;
        spec.col_prefix = "c";
        spec.ramp = RAMP_DIVERGING;
        stagemap_matrix_range(&pa->m, &spec.lo, &spec.hi);
        spec.cursor_row = -1;
        spec.cursor_col = -1;
        spec.max_cell_w = 10;
        spec.colour = po->depth != DEPTH_MONO;
        spec.utf8 = po->utf8;
        print_heatmap(out, title, &spec, po);
        return;
    }
    memset(&t, 0, sizeof t);
    t.title = title;
    t.m = &pa->m;
    t.row_prefix = "r";
    t.col_prefix = "c";
    print_table(out, &t, po);
}

void
print_stage_params(FILE *out, const struct pipeline *p, bool out_proj, int head,
                   const struct print_options *po)
{
    for (int i = 0; i < p->params.count; i++) {
        const struct param *pa = &p->params.p[i];
        /* The wrapper's heads have their own (set = head); the others one set, 0. */
        bool heads_own = params_find(&p->params, pa->role, head, false) != NULL;
        if ((pa->role == PARAM_OUT) == out_proj && pa->set == (heads_own ? head : 0))
            print_param(out, pa, po);
    }
}



static void
print_selection(FILE *out, const struct pipeline *p, const struct pipeline_selection *sel,
                const struct print_options *po)
{
    if (sel->param != NULL) {
        print_param(out, sel->param, po);
    } else if (pipeline_stage_per_head(sel->stage) && sel->head < 0) {
        for (int h = 0; h < pipeline_stage_heads(p, sel->stage); h++)
            print_stage(out, p, sel->stage, h, po);
    } else {
        print_stage(out, p, sel->stage, sel->head < 0 ? 0 : sel->head, po);
    }
}

void
print_pipeline(FILE *out, const struct pipeline *p, const struct print_options *po)
{
    if (po->format == PRINT_TEXT || po->heatmap)
        print_header(out, p, po);
    if (po->count > 0) {
        for (int i = 0; i < po->count; i++)
            print_selection(out, p, &po->chosen[i], po);
        return;
    }
    for (int s = 0; s < STAGE_COUNT; s++) {
        struct pipeline_selection sel = { (enum pipeline_stage)s, -1, NULL };
        if (!pipeline_stage_present(p, sel.stage))
            continue;
        print_selection(out, p, &sel, po);
        /* The parameters come where they are used: after the inputs. */
        if (s == STAGE_INPUTS)
            for (int i = 0; i < p->params.count; i++)
                print_param(out, &p->params.p[i], po);
    }
}


/* The tokens, with their ids (CSV with --format csv). */
static void
print_model_tokens(FILE *out, const struct pipeline *p, const struct family_model_state *g,
                   const struct print_options *po)
{
    if (po->format == PRINT_CSV) {
        fputs("# tokens\nposition,id,token\n", out);
        for (int i = 0; i < p->tokens.count; i++) {
            fprintf(out, "%d,%d,", i, g->ids[i]);
            csvio_write_field(out, p->tokens.text[i]);
            fputc('\n', out);
        }
        fputc('\n', out);
        return;
    }
    fprintf(out, "tokens (%d; a space shows as \xc2\xb7)\n", p->tokens.count);
    fprintf(out, "  %8s  %6s  %s\n", "position", "id", "token");
    for (int i = 0; i < p->tokens.count; i++)
        fprintf(out, "  %8d  %6d  %s\n", i, g->ids[i], p->tokens.text[i]);
    fputc('\n', out);
}

/* The likeliest next tokens after every position. */
static void
print_model_next(FILE *out, const struct pipeline *p, const struct family_model_state *g,
                 const struct print_options *po)
{
    const int top = g->run.top;
    const bool classes = model_is_classifier(g->model);
    char shown[256];

    if (top == 0)
        return;
    if (family_model_next_tokens(p) != 0) {
        fputs("next tokens: they could not be made (out of memory)\n\n", out);
        return;
    }
    if (po->format == PRINT_CSV) {
        fputs(classes ? "# classes\nposition,rank,id,class,probability\n"
                      : "# next tokens\nposition,rank,id,token,probability\n",
              out);
        for (int i = 0; i < p->tokens.count; i++)
            for (int t = 0; t < top; t++) {
                const int id = g->run.top_ids[(size_t)i * top + t];
                fprintf(out, "%d,%d,%d,", i, t + 1, id);
                csvio_write_field(out, model_output_display(g->model, id, shown, sizeof shown));
                fprintf(out, ",%.*f\n", po->digits, (double)g->run.top_probs[(size_t)i * top + t]);
            }
        return;
    }
    if (classes)
        fprintf(out, "classes (the classifier head's %d classes at each position, likeliest first; "
                     "the last position's is its answer, as chapter 6 reads it)\n",
                top);
    else
        fprintf(out, "next tokens (the %d likeliest after each position, with probabilities)\n",
                top);
    for (int i = 0; i < p->tokens.count; i++) {
        fprintf(out, "  %4d  ", i);
        print_label(out, p->tokens.text[i], LABEL_MAX_WIDTH, 0);
        for (int t = 0; t < top; t++) {
            const int id = g->run.top_ids[(size_t)i * top + t];
            fprintf(out, "  %s %.*f", model_output_display(g->model, id, shown, sizeof shown),
                    po->digits, (double)g->run.top_probs[(size_t)i * top + t]);
        }
        fputc('\n', out);
    }
    fputc('\n', out); /* a blank line ends it, as every table */
}

void
print_layers_table(FILE *out, const char *title, const struct matrix *m,
                   const struct print_options *po)
{
    char **labels = calloc((size_t)m->rows, sizeof *labels);
    struct table t;
    bool ok = labels != NULL;

    for (int l = 0; ok && l < m->rows; l++) {
        labels[l] = malloc(24);
        ok = labels[l] != NULL;
        if (ok)
            snprintf(labels[l], 24, "layer %d", l);
    }
    if (ok) {
        memset(&t, 0, sizeof t);
        t.title = title;
        t.m = m;
        t.rows = (const char *const *)labels;
        t.col_prefix = "h";
        print_table(out, &t, po);
    } else {
        fprintf(out, "%s: out of memory\n\n", title);
    }
    for (int l = 0; labels != NULL && l < m->rows; l++)
        free(labels[l]);
    free(labels);
}

/* The model map: every measure of every head, a table of layers x heads each. */
static void
print_model_heads(FILE *out, const struct pipeline *p, const struct print_options *po)
{
    const int heads = head_map_heads(p);
    struct matrix m;
    char title[160];

    if (matrix_create(&m, p->layers, heads, NULL) != ATTN_OK)
        return;
    for (int k = 0; k < MEASURE_COUNT; k++) {
        bool undefined = false;
        if (!head_measure_present(p, (enum head_measure)k))
            continue;
        head_measures(p, (enum head_measure)k, m.data);
        for (size_t i = 0; i < (size_t)p->layers * (size_t)heads; i++)
            undefined = undefined || isnan(m.data[i]);
        snprintf(title, sizeof title, "heads: %s, %s (layers x heads)%s",
                 head_measure_name((enum head_measure)k),
                 head_measure_description((enum head_measure)k),
                 !undefined                        ? ""
                 : k == (int)MEASURE_INDUCTION ? "; nan: no token of the text repeats"
                                                   : "; nan: not defined for this text");
        print_layers_table(out, title, &m, po);
    }
    matrix_destroy(&m);
}

/* The logit lens after the last token: what each layer would predict if it were the last. */
static void
print_model_lens(FILE *out, const struct pipeline *p, const struct family_model_state *g,
                 const struct print_options *po)
{
    const int outputs = decoder_outputs(&g->model->dec.cfg);
    const int K = outputs < 3 ? outputs : 3;
    int *ids = malloc((size_t)p->layers * (size_t)K * sizeof *ids);
    float *probs = malloc((size_t)p->layers * (size_t)K * sizeof *probs);
    char shown[256];

    if (ids != NULL && probs != NULL &&
        decoder_logit_lens(&g->model->dec, &g->run, g->run.n - 1, K, ids, probs, NULL) == ATTN_OK) {
        if (model_is_classifier(g->model))
            fprintf(out, "logit lens after '%s': each layer's stream through ln_f and the "
                         "classifier head, the classes' probabilities\n",
                    p->query_labels[g->run.n - 1]);
        else if (norm_is_rms(p))
            fprintf(out, "logit lens after '%s': each layer's stream through the final norm and "
                         "the output matrix, the %d likeliest next tokens\n",
                    p->query_labels[g->run.n - 1], K);
        else
            fprintf(out, "logit lens after '%s': each layer's stream through ln_f and wte, the %d "
                         "likeliest next tokens\n",
                    p->query_labels[g->run.n - 1], K);
        for (int l = 0; l < p->layers; l++) {
            fprintf(out, "  layer %3d ", l);
            for (int t = 0; t < K; t++)
                fprintf(out, "  %s %.*f",
                        model_output_display(g->model, ids[l * K + t], shown, sizeof shown),
                        po->digits, (double)probs[l * K + t]);
            fputc('\n', out);
        }
        fputc('\n', out);
    }
    free(ids);
    free(probs);
}

void
print_model(FILE *out, const struct pipeline *p, const struct print_options *po)
{
    const struct family_model_state *g = pipeline_decoder(p);

    if (g == NULL)
        return;
    if (po->format == PRINT_TEXT || po->heatmap)
        print_model_header(out, p, g);
    if (po->count == 0) {
        /* Every head's weights; a layer whose mixer has none (mixer.h), its output. */
        const struct pipeline_selection sel = {
            pipeline_stage_present(p, STAGE_WEIGHTS) ? STAGE_WEIGHTS : STAGE_OUTPUT, -1, NULL };
        print_model_tokens(out, p, g, po);
        print_selection(out, p, &sel, po);
        print_model_next(out, p, g, po);
        return;
    }
    for (int i = 0; i < po->count; i++)
        print_model_selection(out, p, &po->chosen[i], po);
}

/*
 * --stage kv: the shown layer's KV cache, a table per key head, a row per
 * row kept (a sliding layer's ring slot by slot, "[slot]token"), the keys
 * as the scores read them then the values; the size said first.
 */
static void
print_model_cache(FILE *out, const struct pipeline *p, const struct family_model_state *g,
                  const struct print_options *po)
{
    const struct decoder_config *c = &g->model->dec.cfg;
    const struct matrix *keys = p->block.k_rotated.data != NULL ? &p->block.k_rotated : &p->st.keys;
    const struct matrix *values = &p->st.values;
    const int n = keys->rows, hd = p->st.shape.head_dim;
    const int rows = generation_cache_rows(c, p->layer, n);
    const int kv_heads = decoder_kv_heads(c);
    float *data = malloc((size_t)rows * 2 * (size_t)hd * sizeof *data);
    char **row_names = calloc((size_t)rows, sizeof *row_names);
    char **col_names = calloc((size_t)hd * 2, sizeof *col_names);
    char shown[32], full[32], title[256];
    bool ok = data != NULL && row_names != NULL && col_names != NULL;
    const struct decoder_mixer *mx = decoder_mixer_of(c, p->layer);

    if (mx->keeps_state) {
        /* (a layer that keeps a state of its own has no keys and values to show: its size) */
        char at32k[32], full32k[32];
        if (po->format == PRINT_TEXT)
            fprintf(out,
                    "kept by layer %d (%s): %s, %s at any length; all %d layers: %s (at 32768 "
                    "tokens: %s; every layer keeping keys and values: %s, at 32768: %s)\n\n",
                    p->layer, mx->name, mx->keeps,
                    attn_size_text(title, sizeof title,
                                   mx->kept_floats(c, p->layer, n) * sizeof(float)),
                    c->n_layer, attn_size_text(shown, sizeof shown, generation_cache_bytes(c, n)),
                    attn_size_text(at32k, sizeof at32k, generation_cache_bytes(c, 32768)),
                    attn_size_text(full, sizeof full, generation_cache_bytes_full(c, n)),
                    attn_size_text(full32k, sizeof full32k, generation_cache_bytes_full(c, 32768)));
        goto done;
    }

    for (int r = 0; ok && r < rows; r++) {
        const int i = generation_cache_position(c, p->layer, n, r);
        row_names[r] = malloc(48);
        ok = row_names[r] != NULL;
        if (ok && rows < n)
            snprintf(row_names[r], 48, "[%d]%.32s", r, p->query_labels[i]);
        else if (ok)
            snprintf(row_names[r], 48, "%.40s", p->query_labels[i]);
    }
    for (int j = 0; ok && j < 2 * hd; j++) {
        col_names[j] = malloc(16);
        ok = col_names[j] != NULL;
        if (ok)
            snprintf(col_names[j], 16, "%c%d", j < hd ? 'k' : 'v', j % hd);
    }
    if (!ok) {
        fprintf(out, "kv cache: out of memory\n\n");
        goto done;
    }
    if (po->format == PRINT_TEXT)
        fprintf(out,
                "kv cache of layer %d: %d of %d rows%s, %s (all %d layers: %s; every row of "
                "every layer: %s)\n\n",
                p->layer, rows, n,
                rows < n ? " (it slides: a ring of its window, position i in slot i mod window)"
                         : "",
                attn_size_text(title, sizeof title, 2 * (size_t)rows *
                                                        (size_t)decoder_kv_width(c) * sizeof(float)),
                c->n_layer, attn_size_text(shown, sizeof shown, generation_cache_bytes(c, n)),
                attn_size_text(full, sizeof full, generation_cache_bytes_full(c, n)));
    for (int h = 0; h < kv_heads; h++) {
        struct matrix m = matrix_view(data, rows, 2 * hd);
        struct table t = { title, &m, (const char *const *)row_names, NULL,
                           (const char *const *)col_names, NULL, NULL };
        for (int r = 0; r < rows; r++) {
            const int i = generation_cache_position(c, p->layer, n, r);
            memcpy(data + (size_t)r * 2 * (size_t)hd, matrix_row(keys, i) + (size_t)h * (size_t)hd,
                   (size_t)hd * sizeof *data);
            memcpy(data + ((size_t)r * 2 + 1) * (size_t)hd,
                   matrix_row(values, i) + (size_t)h * (size_t)hd, (size_t)hd * sizeof *data);
        }
        snprintf(title, sizeof title, "kv cache, layer %d, key head %d of %d (%d x %d): k then v",
                 p->layer, h, kv_heads, rows, 2 * hd);
        print_table(out, &t, po);
    }
done:
    for (int r = 0; row_names != NULL && r < rows; r++)
        free(row_names[r]);
    for (int j = 0; col_names != NULL && j < 2 * hd; j++)
        free(col_names[j]);
    free(row_names);
    free(col_names);
    free(data);
}

void
print_model_selection(FILE *out, const struct pipeline *p, const struct pipeline_selection *sel,
                      const struct print_options *po)
{
    const struct family_model_state *g = pipeline_decoder(p);

    if (g == NULL)
        return;
    if (sel->stage == PIPELINE_SELECT_TOKENS)
        print_model_tokens(out, p, g, po);
    else if (sel->stage == PIPELINE_SELECT_NEXT)
        print_model_next(out, p, g, po);
    else if (sel->stage == PIPELINE_SELECT_HEADS)
        print_model_heads(out, p, po);
    else if (sel->stage == PIPELINE_SELECT_LENS)
        print_model_lens(out, p, g, po);
    else if (sel->stage == PIPELINE_SELECT_CACHE)
        print_model_cache(out, p, g, po);
    else {
        print_selection(out, p, sel, po);
        if (sel->param == NULL && sel->stage == STAGE_ROUTER)
            print_model_experts(out, p, g);
        if (sel->param == NULL && sel->stage == STAGE_WEIGHTS)
            print_model_sinks(out, p, po);
    }
}

int
print_width(int terminal_cols, const char *columns_env)
{
    char *end;
    long w;

    if (terminal_cols > 0)
        return terminal_cols;
    if (columns_env == NULL)
        return 100;
    errno = 0;
    w = strtol(columns_env, &end, 10);
    return errno == 0 && end != columns_env && *end == '\0' && w > 20 && w <= 1000000 ? (int)w : 100;
}
