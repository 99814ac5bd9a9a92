/* inspect.c: the arithmetic behind a cell (see inspect.h). */
#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "attnscope/families/model/family_model.h"
#include "render/heatmap.h"
#include "attnscope/formats/quants.h"
#include "attnscope/formats/tensor.h"
#include "render/inspect.h"
#include "render/parts/parts.h"

/* A number as the inspector shows it: 4 decimals, or 4 significant digits when large. */
const char *
inspect_num(char *buf, float v)
{
    if (isfinite(v) && fabsf(v) >= 10000.0f)
        snprintf(buf, 24, "%.4g", (double)v);
    else
        heatmap_format(buf, 24, v, 23, 4);
    return buf;
}

/* Spells out sum_k a[k] * b[k] (strided), eliding past max_terms. */
void
inspect_products(struct out *o, const float *a, int sa, const float *b, int sb, int n, int max_terms)
{
    char x[24];
    char y[24];

    for (int k = 0; k < n; k++) {
        if (k == max_terms && n > max_terms + 1) {
            emit(o, " + ... (%d terms in all)", n);
            return;
        }
        emit(o, "%s%s%s%s", k ? " + " : "", inspect_num(x, a[(size_t)k * (size_t)sa]), o->times,
             inspect_num(y, b[(size_t)k * (size_t)sb]));
    }
}

/*
 * A quantized matrix's first weight of column col made from its block
 * (what the file keeps: a scale, an integer, a minimum), a line of its own.
 */
static void
inspect_quant(struct out *o, const struct decoder_linear *l, int col)
{
    float scale, min;
    int level, type;
    bool has_min;
    char s[24], m[24], w[24];

    if (!decoder_linear_block(l, col, &type, &scale, &min, &level, &has_min))
        return;
    const enum quant_type q = (enum quant_type)(type - TENSOR_Q4_0);
    const size_t per = (size_t)quant_block_values(q);

    emit(o, "(weights as the file keeps them: %s blocks of %zu; the first, %s = %s%s%d%s%s)\n",
         quant_name(q), per, inspect_num(w, decoder_linear_at(l, 0, col)), inspect_num(s, scale),
         o->times, level, has_min ? (q == QUANT_Q4_1 || q == QUANT_Q5_1 ? " + " : " - ") : "",
         has_min ? inspect_num(m, min) : "");
}

void
inspect_linear(struct out *o, const float *a, const struct decoder_linear *l, int col,
               int max_terms)
{
    char x[24];
    char y[24];

    inspect_quant(o, l, col); /* (quantized weights: first, the products may run past the panel) */
    for (int k = 0; k < l->in; k++) {
        if (k == max_terms && l->in > max_terms + 1) {
            emit(o, " + ... (%d terms in all)", l->in);
            break;
        }
        emit(o, "%s%s%s%s", k ? " + " : "", inspect_num(x, a[k]), o->times,
             inspect_num(y, decoder_linear_at(l, k, col)));
    }
}

void
inspect_bias(struct out *o, const struct decoder_linear *l, int col)
{
    char b[24];

    if (l->b != NULL)
        emit(o, " + bias %s", inspect_num(b, l->b[col]));
    emit(o, "\n");
}

/* The label of query (row) i. */
const char *
inspect_token(const struct pipeline *p, int i)
{
    return p->query_labels[i];
}

/* The label of key (column) j. */
const char *
inspect_key(const struct pipeline *p, int j)
{
    return p->key_labels[j];
}

static void
inspect_embeddings(struct out *o, const struct cell_at *at)
{
    const struct pipeline *p = at->p;
    const int i = at->row;
    const int j = at->col;
    char v[24];
    char e[24];
    char pe[24];
    const struct family_model_state *g = pipeline_decoder(p);

    if (g != NULL) {
        emit(o, "%s[%d][%d] = %s\n", decoder_part_name(&g->model->dec, ROLE_TOKEN_EMBD), g->ids[i],
             j, inspect_num(e, MAT_AT(&p->embeddings, i, j)));
        emit(o, "the row of token id %d ('%s') in the token embedding.\n", g->ids[i], inspect_token(p, i));
        if (g->model->dec.cfg.embed_scale != 0.0f)
            emit(o, "times sqrt(%d) = %s (Gemma scales its embeddings): x = %s\n", p->d_in,
                 inspect_num(pe, g->model->dec.cfg.embed_scale),
                 inspect_num(v, MAT_AT(&p->inputs, i, j)));
        if (p->positional.data == NULL)
            emit(o, "No position is added: RoPE turns each layer's queries and keys by the "
                    "token's position %d instead.\n", i);
        else
            emit(o, "The next stage adds %s[%d][%d] = %s: x = %s.\n",
                 decoder_part_name(&g->model->dec, ROLE_POS_EMBD), i, j,
                 inspect_num(pe, MAT_AT(&p->positional, i, j)),
                 inspect_num(v, MAT_AT(&p->embeddings, i, j) + MAT_AT(&p->positional, i, j)));
        {
            /* How the tokenizer made this token (the book's chapter 2). */
            char story[512];
            if (g->model->bpe.byte_level &&
                bpe_token_story(&g->model->bpe, g->ids[i], story, sizeof story) > 0)
                emit(o, "the token: %s\n", story);
        }
        return;
    }
    if (p->cfg.positional)
        emit(o, "embedding E[%s][%d] = %s\n", inspect_token(p, i), j, inspect_num(e, MAT_AT(&p->embeddings, i, j)));
    else
        emit(o, "input x[%s][%d] = %s\n", inspect_token(p, i), j, inspect_num(v, MAT_AT(&p->inputs, i, j)));
    if (p->made_up[i])
        emit(o, "'%s' is not in the vocabulary: its vector is made up from a hash of the word.\n",
             inspect_token(p, i));
    else
        emit(o, "from the vocabulary's row for '%s'.\n", inspect_token(p, i));
    if (p->cfg.positional)
        emit(o, "The next stage adds %s(%d, %d) = %s: x = %s.\n",
             p->cfg.positional_learned ? "P" : "PE", i, j,
             inspect_num(pe, MAT_AT(&p->positional, i, j)), inspect_num(v, MAT_AT(&p->inputs, i, j)));
}

/* A source token's input: its vocabulary's vector (and its position's encoding). */
static void
inspect_source(struct out *o, const struct cell_at *at)
{
    const struct pipeline *p = at->p;
    const int i = at->row;
    const int j = at->col;
    char v[24];

    emit(o, "x_src[%s][%d] = %s\n", inspect_key(p, i), j, inspect_num(v, MAT_AT(&p->source, i, j)));
    if (p->source_made_up[i])
        emit(o, "'%s' is not in the source's vocabulary: its vector is made up from a hash of "
                "the word.\n", inspect_key(p, i));
    else
        emit(o, "from the source vocabulary's row for '%s'%s.\n", inspect_key(p, i),
             p->cfg.positional ? ", plus PE of its position in the source" : "");
    emit(o, "Its key and value are made from this row; the target's queries are compared with "
            "its key.\n");
}

static void
inspect_positional(struct out *o, const struct cell_at *at)
{
    const struct pipeline *p = at->p;
    const int i = at->row;
    const int j = at->col;
    char v[24];
    int two_k = j - j % 2;

    char e[24];
    char x[24];

    if (pipeline_decoder(p) != NULL) {
        if (p->layer > 0) {
            emit(o, "x[%s][%d] = %s\n", inspect_token(p, i), j, inspect_num(x, MAT_AT(&p->inputs, i, j)));
            emit(o, "the output (residual2) of layer %d for this token.\n", p->layer - 1);
            return;
        }
        const struct decoder_model *m = &pipeline_decoder(p)->model->dec;
        emit(o, "x[%s][%d] = %s %s + %s[%d][%d] %s = %s\n", inspect_token(p, i), j,
             decoder_part_name(m, ROLE_TOKEN_EMBD), inspect_num(e, MAT_AT(&p->embeddings, i, j)),
             decoder_part_name(m, ROLE_POS_EMBD), i, j,
             inspect_num(v, MAT_AT(&p->positional, i, j)), inspect_num(x, MAT_AT(&p->inputs, i, j)));
        emit(o, "%s was learned in training: row %d is what position %d adds.\n",
             decoder_part_name(m, ROLE_POS_EMBD), i, i);
        return;
    }
    if (p->cfg.positional_learned) {
        emit(o, "x[%s][%d] = E %s + P[%d][%d] %s = %s\n", inspect_token(p, i), j,
             inspect_num(e, MAT_AT(&p->embeddings, i, j)), i, j, inspect_num(v, MAT_AT(&p->positional, i, j)),
             inspect_num(x, MAT_AT(&p->inputs, i, j)));
        emit(o, "P = nn.Embedding(%d, %d).weight, drawn from seed %llu after the weights, as "
                "torch.randn draws: row %d is what position %d adds.\n",
             p->positional.rows, p->d_in, (unsigned long long)p->cfg.seed, i, i);
        return;
    }
    emit(o, "x[%s][%d] = E %s + PE(%d, %d) %s = %s\n", inspect_token(p, i), j,
         inspect_num(e, MAT_AT(&p->embeddings, i, j)), i, j, inspect_num(v, MAT_AT(&p->positional, i, j)),
         inspect_num(x, MAT_AT(&p->inputs, i, j)));
    emit(o, "PE(%d, %d) = %s(%d / 10000^(%d/%d))\n", i, j, j % 2 ? "cos" : "sin", i, two_k,
         p->d_in);
    emit(o, "column %d is a %s wave; its wavelength grows with the column.\n", j,
         j % 2 ? "cosine" : "sine");
}

static void
inspect_qkv(struct out *o, const struct cell_at *at)
{
    const struct pipeline *p = at->p;
    const int head = at->head;
    const int i = at->row;
    const int col = at->col;
    const int max_terms = at->max_terms;
    static const char *const names[] = { "q", "k", "v" };
    static const char *const params[] = { "W_q", "W_k", "W_v" };
    const struct attention_shape *s = &p->st.shape;
    const int hd = s->head_dim;
    const int which = col / hd;
    const int c = col % hd;
    /* (keys and values: the key head this query head reads) */
    const int gc = (which > 0 ? pipeline_kv_head(p, head) : head) * hd + c;
    const struct matrix *qkv[3] = { &p->st.queries, &p->st.keys, &p->st.values };
    /* Across sentences, keys and values are made from the source's rows. */
    const bool from_source = which > 0 && p->cfg.cross;
    const float *x = p->qkv_given ? NULL : from_source ? matrix_row(&p->source, i) : matrix_row(&p->inputs, i);
    const char *xname = from_source ? "x_src" : "x";
    const char *row = which > 0 ? inspect_key(p, i) : inspect_token(p, i);
    char v[24];
    char b[24];

    if (i >= qkv[which]->rows) {
        emit(o, "there are only %d %s: this row has no %s.\n", qkv[which]->rows,
             which == 0 ? "queries" : "keys", names[which]);
        return;
    }
    emit(o, "%s[%s][%d] (head %d) = %s\n", names[which], which ? inspect_key(p, i) : inspect_token(p, i), c, head,
         inspect_num(v, MAT_AT(qkv[which], i, gc)));
    if (p->qkv_given) {
        emit(o, "given: read from %s.csv.\n", which == 0 ? "queries" : which == 1 ? "keys" : "values");
        return;
    }
    if (pipeline_decoder(p) != NULL) {
        const struct decoder_block *blk = &pipeline_decoder(p)->model->dec.blocks[p->layer];
        const struct decoder_linear *l = which == 0 ? &blk->q : which == 1 ? &blk->k : &blk->v;
        emit(o, "%s[%s] . column %d of %s:\n",
             decoder_pre_norms(p->decoder) ? "ln1" : "x", inspect_token(p, i), gc, params[which]);
        inspect_linear(o, matrix_row(&p->block.ln1, i), l, gc, max_terms);
        inspect_bias(o, l, gc);
        return;
    }
    if (!attention_variant_has_weights(p->cfg.variant)) {
        emit(o, "no weights: the input x[%s][%d] itself.\n", inspect_token(p, i), gc);
        return;
    }
    {
        /* The weight and the row (or column) of it that makes this column, whatever the layout. */
        struct param_column pc;
        if (params_column(&p->params, (enum param_role)which, head, hd, c, &pc) != 0) {
            emit(o, "no parameter makes this column.\n");
            return;
        }
        if (pc.weight->transposed) {
            emit(o, "%s[%s] . column %d of %s:\n", xname, row, pc.out, params[which]);
            inspect_products(o, x, 1, pc.weight->m.data + pc.out, pc.weight->m.cols, s->d_in,
                          max_terms);
        } else {
            emit(o, "%s[%s] . row %d of %s (%s):\n", xname, row, pc.out, params[which],
                 pc.weight->name);
            inspect_products(o, x, 1, matrix_row(&pc.weight->m, pc.out), 1, s->d_in, max_terms);
        }
        if (pc.bias != NULL)
            emit(o, " + bias %s", inspect_num(b, pc.bias->m.data[pc.out]));
        emit(o, "\n");
    }
}

/* The uniform number behind dropout's decision e, and the decision. */
void
inspect_draw(struct out *o, const struct pipeline *p, size_t e)
{
    const struct attention_stages *st = &p->st;
    char c[24];

    if (st->keep[e])
        emit(o, "draw u = %.4f < 1 - p = %g: kept, scaled by 1/(1-p) = %s\n", (double)st->draw[e],
             1.0 - p->cfg.dropout, inspect_num(c, st->dropout_scale));
    else
        emit(o, "draw u = %.4f >= 1 - p = %g: dropped, set to 0\n", (double)st->draw[e],
             1.0 - p->cfg.dropout);
}

/* Spells out head's context column c of row i. */
static void
context_sum(struct out *o, const struct pipeline *p, int head, int i, int c, int max_terms)
{
    const struct attention_stages *st = &p->st;
    const int hd = st->shape.head_dim;
    struct matrix dropped = attention_head(st, st->dropped, head);
    char v[24];

    emit(o, "z[%s][%d] (head %d) = sum_j a'[%s][j] * v[j][%d] = %s\n", inspect_token(p, i), c, head,
         inspect_token(p, i), c, inspect_num(v, MAT_AT(&st->context, i, head * hd + c)));
    inspect_products(o, matrix_row(&dropped, i), 1,
                     st->values.data + pipeline_kv_head(p, head) * hd + c, st->values.cols, st->nk,
                     max_terms);
    emit(o, "\n");
}

static void
inspect_output(struct out *o, const struct cell_at *at)
{
    const struct pipeline *p = at->p;
    const int i = at->row;
    const int c = at->col;
    const int max_terms = at->max_terms;
    const struct param *w = params_find(&p->params, PARAM_OUT, 0, false);
    const struct param *b = params_find(&p->params, PARAM_OUT, 0, true);
    char v[24];

    emit(o, "out[%s][%d] = %s\n", inspect_token(p, i), c, inspect_num(v, MAT_AT(&p->st.output, i, c)));
    if (pipeline_decoder(p) != NULL) {
        const struct decoder_linear *l = &pipeline_decoder(p)->model->dec.blocks[p->layer].o;
        emit(o, "z[%s] . column %d of W_o (%s):\n", inspect_token(p, i), c,
             decoder_part_name(&pipeline_decoder(p)->model->dec, ROLE_ATTN_OUT));
        inspect_linear(o, matrix_row(&p->st.context, i), l, c, max_terms);
        inspect_bias(o, l, c);
        return;
    }
    if (w == NULL) {
        emit(o, "no output projection: the context itself.\n");
        return;
    }
    emit(o, "z[%s] . row %d of %s:\n", inspect_token(p, i), c, w->name);
    inspect_products(o, matrix_row(&p->st.context, i), 1, matrix_row(&w->m, c), 1, w->m.cols,
                  max_terms);
    emit(o, " + bias %s\n", inspect_num(v, b->m.data[c]));
}

/* nn.MultiheadAttention's averaged weights: each head's term. */
static void
inspect_average(struct out *o, const struct cell_at *at)
{
    const struct pipeline *p = at->p;
    const struct attention_stages *st = &p->st;
    const int i = at->row;
    const int j = at->col;
    char a[24];

    emit(o, "avg[%s][%s] = %s = (", inspect_token(p, i), inspect_key(p, j), inspect_num(a, MAT_AT(&st->averaged, i, j)));
    for (int h = 0; h < st->shape.heads && h < at->max_terms; h++) {
        struct matrix d = attention_head(st, st->dropped, h);
        emit(o, "%s%s", h ? " + " : "", inspect_num(a, MAT_AT(&d, i, j)));
    }
    emit(o, "%s) / %d\n", st->shape.heads > at->max_terms ? " + ..." : "", st->shape.heads);
    emit(o, "Each term is one head's weight after dropout (a'), head 0 first.\n");
}

/* The notes' dropout of the output: (nq, d_output), keep and draw shaped the same. */
static void
inspect_outdrop(struct out *o, const struct cell_at *at)
{
    const struct pipeline *p = at->p;
    const struct attention_stages *st = &p->st;
    const int i = at->row;
    const int c = at->col;
    const size_t e = (size_t)i * (size_t)st->shape.d_output + (size_t)c;
    char a[24];
    char b[24];
    char d[24];

    if (!st->dropout_on) {
        emit(o, "out'[%s][%d] = out %s: %s.\n", inspect_token(p, i), c, inspect_num(a, MAT_AT(&st->output, i, c)),
             p->cfg.train ? "p = 0, nothing is dropped" : "evaluation mode, nothing is dropped");
        return;
    }
    inspect_draw(o, p, e);
    emit(o, "out'[%s][%d] = %s%s%s = %s\n", inspect_token(p, i), c, inspect_num(a, MAT_AT(&st->output, i, c)),
         o->times, st->keep[e] ? inspect_num(d, st->dropout_scale) : "0",
         inspect_num(b, MAT_AT(&st->output_dropped, i, c)));
    emit(o, "The weights were not dropped: this is where the notes' class puts its dropout.\n");
}

static void
inspect_context(struct out *o, const struct cell_at *at)
{
    context_sum(o, at->p, at->head, at->row, at->col, at->max_terms);
}

static void
inspect_concat(struct out *o, const struct cell_at *at)
{
    const int hd = at->p->st.shape.head_dim;

    emit(o, "column %d is head %d's context column %d.\n", at->col, at->col / hd, at->col % hd);
    context_sum(o, at->p, at->col / hd, at->row, at->col % hd, at->max_terms);
}

/* A transformer block's parts explain their own cells: render/parts/. */

/* One inspector per view stage, named after its row of VIEW_STAGE_LIST. */
static void (*const inspectors[])(struct out *o, const struct cell_at *c) = {
#define VIEW_STAGE_INSPECTOR(e, id, key, name, brief, title, per_head, stage, role) [e] = inspect_##id,
    VIEW_STAGE_LIST(VIEW_STAGE_INSPECTOR)
#undef VIEW_STAGE_INSPECTOR
};
_Static_assert(sizeof inspectors / sizeof inspectors[0] == VIEW_STAGE_COUNT,
               "one inspector per stage");

void
inspect_cell(const struct pipeline *p, enum view_stage s, int head, int row, int col,
             bool mask_matrix, int max_terms, bool utf8, char *buf, size_t size)
{
    struct out o = { buf, size, 0, utf8 ? " \xc3\x97 " : " * " };
    const struct cell_at at = { p, head, row, col, mask_matrix, max_terms < 2 ? 2 : max_terms };

    buf[0] = '\0';
    if ((unsigned)s < VIEW_STAGE_COUNT)
        inspectors[s](&o, &at);
}

void
inspect_param_cell(const struct pipeline *p, enum view_stage s, int head, int row, int col,
                   char *buf, size_t size)
{
    static const char *const role_names[] = { "query", "key", "value", "output" };
    struct out o = { buf, size, 0, " * " };
    const int hd = p->st.shape.head_dim;
    const enum param_role role = s == VIEW_OUTPUT ? PARAM_OUT : (enum param_role)(col / hd);
    const int c = s == VIEW_OUTPUT ? col : col % hd;
    struct param_column pc;
    const struct param *w;
    const struct param *cell;
    char x[24];
    char label[16];
    int in;

    buf[0] = '\0';
    if (params_column(&p->params, role, head, hd, c, &pc) != 0)
        return;
    w = pc.weight;
    in = param_in_features(w);
    if (s == VIEW_OUTPUT)
        snprintf(label, sizeof label, "d%d", c);
    else
        snprintf(label, sizeof label, "%c%d", "qkv"[role], c);
    cell = row < in ? w : pc.bias;
    if (cell == NULL)
        return;
    if (row < in) {
        const int r = w->transposed ? row : pc.out;
        const int k = w->transposed ? pc.out : row;
        emit(&o, "%s[%d][%d] = %s\n", w->name, r, k, inspect_num(x, param_weight_at(w, row, pc.out)));
        emit(&o, "%s column %s%s = %s's columns times this column: this cell weighs %s's d%d\n",
             role_names[role], label, s == VIEW_QKV && p->st.shape.heads > 1 ? " of this head" : "",
             s == VIEW_OUTPUT ? "z" : "x", s == VIEW_OUTPUT ? "z" : "x", row);
    } else {
        emit(&o, "%s[%d] = %s\n", cell->name, pc.out, inspect_num(x, cell->m.data[pc.out]));
        emit(&o, "added to %s column %s of every token\n", role_names[role], label);
    }
    if (p->params_given)
        emit(&o, "loaded with --weights\n");
    else if (cell->init == PARAM_INIT_RAND)
        emit(&o, "drawn by torch.rand (uniform in [0, 1)) after torch.manual_seed(%llu)\n",
             (unsigned long long)p->cfg.seed);
    else
        emit(&o, "drawn after torch.manual_seed(%llu) by nn.Linear's %s: uniform in +-1/sqrt(%d) "
                 "= +-%s\n",
             (unsigned long long)p->cfg.seed,
             cell->init == PARAM_INIT_KAIMING ? "kaiming_uniform_(a=sqrt(5))" : "bias init",
             cell->fan_in, inspect_num(x, 1.0f / sqrtf((float)cell->fan_in)));
    if (row < in) {
        if (w->transposed)
            emit(&o, "stored (in, out) = (%d, %d) and used as x W: shown as stored", w->m.rows,
                 w->m.cols);
        else
            emit(&o, "nn.Linear stores it (out, in) = (%d, %d) and computes %s W^T: shown "
                     "transposed, a row per column of %s",
                 w->m.rows, w->m.cols, s == VIEW_OUTPUT ? "z" : "x", s == VIEW_OUTPUT ? "z" : "x");
    }
}

/* The block of the layer shown (only a model has these stages). */
const struct decoder_block *
inspect_block_of(const struct pipeline *p)
{
    return &pipeline_decoder(p)->model->dec.blocks[p->layer];
}

const char *
inspect_part(const struct pipeline *p, enum arch_role role)
{
    return decoder_part_name(&pipeline_decoder(p)->model->dec, role);
}
