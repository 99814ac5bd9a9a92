/* inspect.c: the arithmetic behind a cell (see inspect.h). */
#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "attnscope/families/gpt2/family_gpt2.h"
#include "render/heatmap.h"
#include "render/inspect.h"

struct out {
    char *buf;
    size_t size;
    size_t len;
    const char *times;
};

/* Appends to the inspector's text. */
#define emit(o, ...) attn_appendf((o)->buf, (o)->size, &(o)->len, __VA_ARGS__)

/* A number as the inspector shows it: 4 decimals, or 4 significant digits when large. */
static const char *
num(char *buf, float v)
{
    if (isfinite(v) && fabsf(v) >= 10000.0f)
        snprintf(buf, 24, "%.4g", (double)v);
    else
        heatmap_format(buf, 24, v, 23, 4);
    return buf;
}

/* Spells out sum_k a[k] * b[k] (strided), eliding past max_terms. */
static void
emit_products(struct out *o, const float *a, int sa, const float *b, int sb, int n, int max_terms)
{
    char x[24];
    char y[24];

    for (int k = 0; k < n; k++) {
        if (k == max_terms && n > max_terms + 1) {
            emit(o, " + ... (%d terms in all)", n);
            return;
        }
        emit(o, "%s%s%s%s", k ? " + " : "", num(x, a[(size_t)k * (size_t)sa]), o->times,
             num(y, b[(size_t)k * (size_t)sb]));
    }
}

/* Where the inspected cell is. */
struct cell_at {
    const struct pipeline *p;
    int head;
    int row;
    int col;
    bool mask_matrix;
    int max_terms;
};

/* The label of query (row) i. */
static const char *
token(const struct pipeline *p, int i)
{
    return p->query_labels[i];
}

/* The label of key (column) j. */
static const char *
key(const struct pipeline *p, int j)
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
    const struct gpt2_state *g = pipeline_gpt2(p);

    if (g != NULL) {
        emit(o, "wte[%d][%d] = %s\n", g->ids[i], j, num(e, MAT_AT(&p->embeddings, i, j)));
        emit(o, "the row of token id %d ('%s') in the token embedding.\n", g->ids[i], token(p, i));
        emit(o, "The next stage adds wpe[%d][%d] = %s: x = %s.\n", i, j,
             num(pe, MAT_AT(&p->positional, i, j)),
             num(v, MAT_AT(&p->embeddings, i, j) + MAT_AT(&p->positional, i, j)));
        {
            /* How the tokenizer made this token (the book's chapter 2). */
            char story[512];
            if (bpe_token_story(&g->model->bpe, g->ids[i], story, sizeof story) > 0)
                emit(o, "the token: %s\n", story);
        }
        return;
    }
    if (p->cfg.positional)
        emit(o, "embedding E[%s][%d] = %s\n", token(p, i), j, num(e, MAT_AT(&p->embeddings, i, j)));
    else
        emit(o, "input x[%s][%d] = %s\n", token(p, i), j, num(v, MAT_AT(&p->inputs, i, j)));
    if (p->made_up[i])
        emit(o, "'%s' is not in the vocabulary: its vector is made up from a hash of the word.\n",
             token(p, i));
    else
        emit(o, "from the vocabulary's row for '%s'.\n", token(p, i));
    if (p->cfg.positional)
        emit(o, "The next stage adds %s(%d, %d) = %s: x = %s.\n",
             p->cfg.positional_learned ? "P" : "PE", i, j,
             num(pe, MAT_AT(&p->positional, i, j)), num(v, MAT_AT(&p->inputs, i, j)));
}

/* A source token's input: its vocabulary's vector (and its position's encoding). */
static void
inspect_source(struct out *o, const struct cell_at *at)
{
    const struct pipeline *p = at->p;
    const int i = at->row;
    const int j = at->col;
    char v[24];

    emit(o, "x_src[%s][%d] = %s\n", key(p, i), j, num(v, MAT_AT(&p->source, i, j)));
    if (p->source_made_up[i])
        emit(o, "'%s' is not in the source's vocabulary: its vector is made up from a hash of "
                "the word.\n", key(p, i));
    else
        emit(o, "from the source vocabulary's row for '%s'%s.\n", key(p, i),
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

    if (pipeline_gpt2(p) != NULL) {
        if (p->layer > 0) {
            emit(o, "x[%s][%d] = %s\n", token(p, i), j, num(x, MAT_AT(&p->inputs, i, j)));
            emit(o, "the output (residual2) of layer %d for this token.\n", p->layer - 1);
            return;
        }
        emit(o, "x[%s][%d] = wte %s + wpe[%d][%d] %s = %s\n", token(p, i), j,
             num(e, MAT_AT(&p->embeddings, i, j)), i, j, num(v, MAT_AT(&p->positional, i, j)),
             num(x, MAT_AT(&p->inputs, i, j)));
        emit(o, "wpe was learned in training: row %d is what position %d adds.\n", i, i);
        return;
    }
    if (p->cfg.positional_learned) {
        emit(o, "x[%s][%d] = E %s + P[%d][%d] %s = %s\n", token(p, i), j,
             num(e, MAT_AT(&p->embeddings, i, j)), i, j, num(v, MAT_AT(&p->positional, i, j)),
             num(x, MAT_AT(&p->inputs, i, j)));
        emit(o, "P = nn.Embedding(%d, %d).weight, drawn from seed %llu after the weights, as "
                "torch.randn draws: row %d is what position %d adds.\n",
             p->positional.rows, p->d_in, (unsigned long long)p->cfg.seed, i, i);
        return;
    }
    emit(o, "x[%s][%d] = E %s + PE(%d, %d) %s = %s\n", token(p, i), j,
         num(e, MAT_AT(&p->embeddings, i, j)), i, j, num(v, MAT_AT(&p->positional, i, j)),
         num(x, MAT_AT(&p->inputs, i, j)));
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
    const int gc = head * hd + c;
    const struct matrix *qkv[3] = { &p->st.queries, &p->st.keys, &p->st.values };
    /* Across sentences, keys and values are made from the source's rows. */
    const bool from_source = which > 0 && p->cfg.cross;
    const float *x = p->qkv_given ? NULL : from_source ? matrix_row(&p->source, i) : matrix_row(&p->inputs, i);
    const char *xname = from_source ? "x_src" : "x";
    const char *row = which > 0 ? key(p, i) : token(p, i);
    char v[24];
    char b[24];

    if (i >= qkv[which]->rows) {
        emit(o, "there are only %d %s: this row has no %s.\n", qkv[which]->rows,
             which == 0 ? "queries" : "keys", names[which]);
        return;
    }
    emit(o, "%s[%s][%d] (head %d) = %s\n", names[which], which ? key(p, i) : token(p, i), c, head,
         num(v, MAT_AT(qkv[which], i, gc)));
    if (p->qkv_given) {
        emit(o, "given: read from %s.csv.\n", which == 0 ? "queries" : which == 1 ? "keys" : "values");
        return;
    }
    if (pipeline_gpt2(p) != NULL) {
        const struct decoder_block *blk = &pipeline_gpt2(p)->model->dec.blocks[p->layer];
        const struct decoder_linear *l = which == 0 ? &blk->q : which == 1 ? &blk->k : &blk->v;
        emit(o, "ln1[%s] . column %d of %s:\n", token(p, i), gc, params[which]);
        emit_products(o, matrix_row(&p->block.ln1, i), 1,
                      l->out_in ? l->w + (size_t)gc * (size_t)l->ld : l->w + gc,
                      l->out_in ? 1 : l->ld, l->in, max_terms);
        emit(o, " + bias %s\n", num(b, l->b[gc]));
        return;
    }
    if (!attention_variant_has_weights(p->cfg.variant)) {
        emit(o, "no weights: the input x[%s][%d] itself.\n", token(p, i), gc);
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
            emit_products(o, x, 1, pc.weight->m.data + pc.out, pc.weight->m.cols, s->d_in,
                          max_terms);
        } else {
            emit(o, "%s[%s] . row %d of %s (%s):\n", xname, row, pc.out, params[which],
                 pc.weight->name);
            emit_products(o, x, 1, matrix_row(&pc.weight->m, pc.out), 1, s->d_in, max_terms);
        }
        if (pc.bias != NULL)
            emit(o, " + bias %s", num(b, pc.bias->m.data[pc.out]));
        emit(o, "\n");
    }
}

static void
inspect_scores(struct out *o, const struct cell_at *at)
{
    const struct pipeline *p = at->p;
    const int head = at->head;
    const int i = at->row;
    const int j = at->col;
    const int max_terms = at->max_terms;
    const struct attention_shape *s = &p->st.shape;
    const int hd = s->head_dim;
    struct matrix scores = attention_head(&p->st, p->st.scores, head);
    char v[24];

    emit(o, "score[%s][%s] = q_%s . k_%s = %s\n", token(p, i), key(p, j), token(p, i),
         key(p, j), num(v, MAT_AT(&scores, i, j)));
    emit_products(o, matrix_row(&p->st.queries, i) + head * hd, 1,
                  matrix_row(&p->st.keys, j) + head * hd, 1, hd, max_terms);
    emit(o, "\n");
}

static void
inspect_mask(struct out *o, const struct cell_at *at)
{
    const struct pipeline *p = at->p;
    const int head = at->head;
    const int i = at->row;
    const int j = at->col;
    const bool mask_matrix = at->mask_matrix;
    struct matrix masked = attention_head(&p->st, p->st.masked, head);
    char v[24];
    bool hidden = attention_masked(&p->cfg, i, j);

    if (p->cfg.mask == ATTN_MASK_NONE)
        emit(o, "no mask: '%s' sees '%s'%s.\n", token(p, i), key(p, j),
             j > i ? ", a token after it" : "");
    else if (hidden)
        emit(o, "'%s' comes after '%s' (%d > %d): hidden, the score becomes -inf.\n", key(p, j),
             token(p, i), j, i);
    else
        emit(o, "'%s' is at or before '%s' (%d <= %d): visible, the score stays.\n", key(p, j),
             token(p, i), j, i);
    if (!mask_matrix)
        emit(o, "masked[%s][%s] = %s\n", token(p, i), key(p, j), num(v, MAT_AT(&masked, i, j)));
}

static void
inspect_scaled(struct out *o, const struct cell_at *at)
{
    const struct pipeline *p = at->p;
    const int head = at->head;
    const int i = at->row;
    const int j = at->col;
    struct matrix masked = attention_head(&p->st, p->st.masked, head);
    struct matrix scaled = attention_head(&p->st, p->st.scaled, head);
    struct pipeline_scaling sc;
    char a[24];
    char b[24];
    char c[24];

    emit(o, "scaled[%s][%s] = %s / %s = %s\n", token(p, i), key(p, j),
         num(a, MAT_AT(&masked, i, j)), num(b, p->st.divisor), num(c, MAT_AT(&scaled, i, j)));
    pipeline_scaling_of(p, &sc);
    if (sc.symbol != NULL)
        emit(o, "divided by %s = %s%s.\n", sc.symbol, sc.spelled,
             sc.temperature ? " times the temperature" : "");
    else
        emit(o, "scaling is off%s.\n", sc.temperature ? ": divided by T only" : "");
}

static void
inspect_weights(struct out *o, const struct cell_at *at)
{
    const struct pipeline *p = at->p;
    const int head = at->head;
    const int i = at->row;
    const int j = at->col;
    const int max_terms = at->max_terms;
    struct matrix scaled = attention_head(&p->st, p->st.scaled, head);
    struct matrix weights = attention_head(&p->st, p->st.weights, head);
    const float *row = matrix_row(&scaled, i);
    const int n = scaled.cols;
    float max = -INFINITY;
    double sum = 0.0;
    char a[24];
    char b[24];
    char c[24];
    int shown = 0;

    for (int k = 0; k < n; k++)
        if (row[k] > max)
            max = row[k];
    for (int k = 0; k < n; k++)
        sum += exp((double)row[k] - (double)max);
    emit(o, "weight[%s][%s] = exp(%s - max) / sum = %s\n", token(p, i), key(p, j),
         num(a, row[j]), num(b, MAT_AT(&weights, i, j)));
    emit(o, "row '%s': max %s; exp(s - max) per key:\n", token(p, i), num(a, max));
    for (int k = 0; k < n && shown < max_terms; k++) {
        if (n > max_terms && k != j && k > max_terms - 2)
            continue;
        emit(o, "%s%s %s", shown ? ", " : "", key(p, k),
             row[k] == -INFINITY ? "0 (-inf)" : num(c, (float)exp((double)row[k] - (double)max)));
        shown++;
    }
    if (shown < n)
        emit(o, ", ... (%d keys)", n);
    if (isnan(sum) || isinf(max))
        /* exp(inf - inf) or 0/0: the row is NaN, in PyTorch too; say why instead of "sums to 1". */
        emit(o, "\nsum %s: %s, so every weight in the row is nan (PyTorch's softmax "
                "gives nan too). Smaller inputs or a larger divisor keep scores finite.\n",
             num(a, (float)sum),
             max == INFINITY    ? "the largest score is +inf and exp(inf - inf) is nan"
             : max == -INFINITY ? "every score in the row is -inf and 0 / 0 is nan"
                                : "a score in the row is nan");
    else
        emit(o, "\nsum %s; the row's weights sum to 1.\n", num(a, (float)sum));
}

/* The uniform number behind dropout's decision e, and the decision. */
static void
emit_draw(struct out *o, const struct pipeline *p, size_t e)
{
    const struct attention_stages *st = &p->st;
    char c[24];

    if (st->keep[e])
        emit(o, "draw u = %.4f < 1 - p = %g: kept, scaled by 1/(1-p) = %s\n", (double)st->draw[e],
             1.0 - p->cfg.dropout, num(c, st->dropout_scale));
    else
        emit(o, "draw u = %.4f >= 1 - p = %g: dropped, set to 0\n", (double)st->draw[e],
             1.0 - p->cfg.dropout);
}

static void
inspect_dropout(struct out *o, const struct cell_at *at)
{
    const struct pipeline *p = at->p;
    const int head = at->head;
    const int i = at->row;
    const int j = at->col;
    const struct attention_stages *st = &p->st;
    struct matrix weights = attention_head(st, st->weights, head);
    struct matrix dropped = attention_head(st, st->dropped, head);
    size_t e = (size_t)head * (size_t)st->nq * (size_t)st->nk + (size_t)i * (size_t)st->nk + (size_t)j;
    double before = 0.0;
    double after = 0.0;
    char a[24];
    char b[24];
    char c[24];

    if (!st->dropout_on) {
        emit(o, "dropped[%s][%s] = weight %s: %s.\n", token(p, i), key(p, j),
             num(a, MAT_AT(&weights, i, j)),
             p->cfg.train ? "p = 0, nothing is dropped" : "evaluation mode, nothing is dropped");
        return;
    }
    for (int k = 0; k < st->nk; k++) {
        before += MAT_AT(&weights, i, k);
        after += MAT_AT(&dropped, i, k);
    }
    emit_draw(o, p, e);
    emit(o, "dropped[%s][%s] = %s%s%s = %s\n", token(p, i), key(p, j),
         num(a, MAT_AT(&weights, i, j)), o->times, st->keep[e] ? num(c, st->dropout_scale) : "0",
         num(b, MAT_AT(&dropped, i, j)));
    emit(o, "row '%s' sums to %s now (it was %s).\n", token(p, i), num(a, (float)after),
         num(b, (float)before));
}

/* Spells out head's context column c of row i. */
static void
context_sum(struct out *o, const struct pipeline *p, int head, int i, int c, int max_terms)
{
    const struct attention_stages *st = &p->st;
    const int hd = st->shape.head_dim;
    struct matrix dropped = attention_head(st, st->dropped, head);
    char v[24];

    emit(o, "z[%s][%d] (head %d) = sum_j a'[%s][j] * v[j][%d] = %s\n", token(p, i), c, head,
         token(p, i), c, num(v, MAT_AT(&st->context, i, head * hd + c)));
    emit_products(o, matrix_row(&dropped, i), 1, st->values.data + head * hd + c, st->shape.d_qkv,
                  st->nk, max_terms);
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

    emit(o, "out[%s][%d] = %s\n", token(p, i), c, num(v, MAT_AT(&p->st.output, i, c)));
    if (pipeline_gpt2(p) != NULL) {
        const struct decoder_linear *l = &pipeline_gpt2(p)->model->dec.blocks[p->layer].o;
        emit(o, "z[%s] . column %d of W_o (c_proj):\n", token(p, i), c);
        emit_products(o, matrix_row(&p->st.context, i), 1,
                      l->out_in ? l->w + (size_t)c * (size_t)l->ld : l->w + c, l->out_in ? 1 : l->ld,
                      l->in, max_terms);
        emit(o, " + bias %s\n", num(v, l->b[c]));
        return;
    }
    if (w == NULL) {
        emit(o, "no output projection: the context itself.\n");
        return;
    }
    emit(o, "z[%s] . row %d of %s:\n", token(p, i), c, w->name);
    emit_products(o, matrix_row(&p->st.context, i), 1, matrix_row(&w->m, c), 1, w->m.cols,
                  max_terms);
    emit(o, " + bias %s\n", num(v, b->m.data[c]));
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

    emit(o, "avg[%s][%s] = %s = (", token(p, i), key(p, j), num(a, MAT_AT(&st->averaged, i, j)));
    for (int h = 0; h < st->shape.heads && h < at->max_terms; h++) {
        struct matrix d = attention_head(st, st->dropped, h);
        emit(o, "%s%s", h ? " + " : "", num(a, MAT_AT(&d, i, j)));
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
        emit(o, "out'[%s][%d] = out %s: %s.\n", token(p, i), c, num(a, MAT_AT(&st->output, i, c)),
             p->cfg.train ? "p = 0, nothing is dropped" : "evaluation mode, nothing is dropped");
        return;
    }
    emit_draw(o, p, e);
    emit(o, "out'[%s][%d] = %s%s%s = %s\n", token(p, i), c, num(a, MAT_AT(&st->output, i, c)),
         o->times, st->keep[e] ? num(d, st->dropout_scale) : "0",
         num(b, MAT_AT(&st->output_dropped, i, c)));
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

/* ---------------------------------------------- a transformer block's own */

/* The block of the layer shown (only a model has these stages). */
static const struct decoder_block *
block_of(const struct pipeline *p)
{
    return &pipeline_gpt2(p)->model->dec.blocks[p->layer];
}

/*
 * Layer norm at one cell: the row's mean and variance (over its c numbers,
 * as the forward pass takes them), the normalised value, then g and b.
 */
static void
layer_norm_cell(struct out *o, const struct cell_at *at, const char *name, const char *from,
                const float *x, int c, const float *g, const float *b, float got)
{
    const int j = at->col;
    double mean = 0.0;
    double var = 0.0;
    float inv;
    char v[24];
    char m[24];
    char s2[24];
    char z[24];
    char gv[24];
    char bv[24];

    for (int k = 0; k < c; k++)
        mean += (double)x[k];
    mean /= c;
    for (int k = 0; k < c; k++)
        var += ((double)x[k] - mean) * ((double)x[k] - mean);
    var /= c;
    inv = (float)(1.0 / sqrt(var + (double)pipeline_gpt2(at->p)->model->dec.cfg.eps));
    emit(o, "%s[%s][%d] = %s\n", name, token(at->p, at->row), j, num(v, got));
    emit(o, "row %s: mean %s, variance %s (over its %d numbers)\n", from, num(m, (float)mean),
         num(s2, (float)var), c);
    num(z, (float)(x[j] - mean) * inv);
    emit(o, "(%s - mean) / sqrt(variance + eps) = %s;\n%s%sg[%d] %s + b[%d] %s\n", num(v, x[j]), z, z,
         o->times, j, num(gv, g[j]), j, num(bv, b[j]));
}

static void
inspect_ln1(struct out *o, const struct cell_at *at)
{
    const struct pipeline *p = at->p;
    const struct decoder_block *blk = block_of(p);

    layer_norm_cell(o, at, "ln1", "x (the block's input)", matrix_row(&p->inputs, at->row),
                    p->inputs.cols, blk->norm1.scale, blk->norm1.shift, MAT_AT(&p->block.ln1, at->row, at->col));
}

static void
inspect_ln2(struct out *o, const struct cell_at *at)
{
    const struct pipeline *p = at->p;
    const struct decoder_block *blk = block_of(p);

    layer_norm_cell(o, at, "ln2", "residual1", matrix_row(&p->block.residual1, at->row),
                    p->block.residual1.cols, blk->norm2.scale, blk->norm2.shift,
                    MAT_AT(&p->block.ln2, at->row, at->col));
}

static void
inspect_final(struct out *o, const struct cell_at *at)
{
    const struct pipeline *p = at->p;
    const struct decoder_model *m = &pipeline_gpt2(p)->model->dec;
    const struct decoder_run *r = &pipeline_gpt2(p)->run;
    const float *x = r->layers[m->cfg.n_layer - 1].resid2 + (size_t)at->row * (size_t)m->cfg.n_embd;

    layer_norm_cell(o, at, "ln_f", "residual2 of the last layer", x, m->cfg.n_embd, m->final_norm.scale,
                    m->final_norm.shift, MAT_AT(&p->block.final, at->row, at->col));
}

/* A sum of two stages at one cell. */
static void
sum_cell(struct out *o, const struct cell_at *at, const char *name, const char *a_name,
         const struct matrix *a, const char *b_name, const struct matrix *b, const struct matrix *sum)
{
    char x[24];
    char y[24];
    char z[24];

    emit(o, "%s[%s][%d] = %s %s + %s %s = %s\n", name, token(at->p, at->row), at->col, a_name,
         num(x, MAT_AT(a, at->row, at->col)), b_name, num(y, MAT_AT(b, at->row, at->col)),
         num(z, MAT_AT(sum, at->row, at->col)));
}

static void
inspect_residual1(struct out *o, const struct cell_at *at)
{
    const struct pipeline *p = at->p;

    sum_cell(o, at, "residual1", "x", &p->inputs, "out", &p->st.output, &p->block.residual1);
    emit(o, "the block's input, plus what attention adds to it.\n");
}

static void
inspect_residual2(struct out *o, const struct cell_at *at)
{
    const struct pipeline *p = at->p;

    sum_cell(o, at, "residual2", "residual1", &p->block.residual1, "mlp", &p->block.mlp,
             &p->block.residual2);
    if (p->layer + 1 < p->layers)
        emit(o, "what layer %d reads.\n", p->layer + 1);
    else
        emit(o, "the last block's output: ln_f reads it.\n");
}

/* A linear layer's cell: the input row times a column of the weights, plus the bias. */
static void
linear_cell(struct out *o, const struct cell_at *at, const char *name, const char *in_name,
            const struct matrix *in, const struct decoder_linear *l, float got)
{
    const int c = at->col;
    char v[24];

    emit(o, "%s[%s][%d] = %s\n", name, token(at->p, at->row), c, num(v, got));
    emit(o, "%s[%s] . column %d of the weights:\n", in_name, token(at->p, at->row), c);
    emit_products(o, matrix_row(in, at->row), 1,
                  l->out_in ? l->w + (size_t)c * (size_t)l->ld : l->w + c, l->out_in ? 1 : l->ld,
                  l->in, at->max_terms);
    emit(o, " + bias %s\n", num(v, l->b[c]));
}

static void
inspect_fc(struct out *o, const struct cell_at *at)
{
    const struct pipeline *p = at->p;

    linear_cell(o, at, "fc", "ln2", &p->block.ln2, &block_of(p)->up,
                MAT_AT(&p->block.fc, at->row, at->col));
}

static void
inspect_mlp(struct out *o, const struct cell_at *at)
{
    const struct pipeline *p = at->p;

    linear_cell(o, at, "mlp", "gelu", &p->block.gelu, &block_of(p)->down,
                MAT_AT(&p->block.mlp, at->row, at->col));
}

static void
inspect_gelu(struct out *o, const struct cell_at *at)
{
    const struct pipeline *p = at->p;
    const float x = MAT_AT(&p->block.fc, at->row, at->col);
    char a[24];
    char v[24];

    emit(o, "gelu[%s][%d] = GELU(fc %s) = %s\n", token(p, at->row), at->col, num(a, x),
         num(v, MAT_AT(&p->block.gelu, at->row, at->col)));
    emit(o, "GELU(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))\n");
    emit(o, "%s\n", x > 2.0f    ? "large and positive: about x itself."
                     : x < -3.0f ? "large and negative: about 0."
                                 : "near 0: the curve bends between 0 and x.");
}

/* One inspector per view stage, named after its row of VIEW_STAGE_LIST. */
static void (*const inspectors[])(struct out *o, const struct cell_at *c) = {
#define VIEW_STAGE_INSPECTOR(e, id, key, name, brief, title, per_head, stage) [e] = inspect_##id,
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
        emit(&o, "%s[%d][%d] = %s\n", w->name, r, k, num(x, param_weight_at(w, row, pc.out)));
        emit(&o, "%s column %s%s = %s's columns times this column: this cell weighs %s's d%d\n",
             role_names[role], label, s == VIEW_QKV && p->st.shape.heads > 1 ? " of this head" : "",
             s == VIEW_OUTPUT ? "z" : "x", s == VIEW_OUTPUT ? "z" : "x", row);
    } else {
        emit(&o, "%s[%d] = %s\n", cell->name, pc.out, num(x, cell->m.data[pc.out]));
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
             cell->fan_in, num(x, 1.0f / sqrtf((float)cell->fan_in)));
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
