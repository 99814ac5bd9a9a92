/*
 * deltanet.c: Gated DeltaNet (Qwen3.5's linear attention) explained, and
 * the output gate of its full-attention layers: what each stage does, and
 * a cell as the numbers that made it (a projection's products, the
 * convolution's taps, beta's sigmoid, the decay, the state's read, the
 * gated norm).
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "attnscope/decoder/mixer.h"
#include "attnscope/families/model/family_model.h"
#include "render/parts/parts.h"

/* The shown layer's linear-attention sizes. */
static const struct decoder_gdn *
sizes(const struct pipeline *p)
{
    static const struct decoder_gdn none = { 1, 1, 1, 1, 1, false };

    return p->decoder != NULL && p->decoder->gdn.v_heads > 0 ? &p->decoder->gdn : &none;
}

/* Output col of l for the row x, summed in order (the panel's number; the forward's own is kept). */
static float
column_dot(const struct decoder_linear *l, const float *x, int col)
{
    float sum = 0.0f;

    for (int k = 0; k < l->in; k++)
        sum += x[k] * decoder_linear_at(l, k, col);
    return sum;
}

static float
sigmoid(float x)
{
    return 1.0f / (1.0f + expf(-x));
}

/* A projection's cell: ln1's row times a column of the weights. */
static void
projected(struct out *o, const struct cell_at *at, const char *name, const struct decoder_linear *l,
          float got)
{
    char v[24];

    emit(o, "%s[%s][%d] = %s\n", name, inspect_token(at->p, at->row), at->col, inspect_num(v, got));
    emit(o, "ln1[%s] . column %d of the weights:\n", inspect_token(at->p, at->row), at->col);
    inspect_linear(o, matrix_row(&at->p->block.ln1, at->row), l, at->col, at->max_terms);
    inspect_bias(o, l, at->col);
}

/* ------------------------------------------------------- the output gate */

void
text_attn_gate(const struct pipeline *p, char *buf, size_t size)
{
    snprintf(buf, size,
             "This layer's query projection (%s) gives each head twice its width: the query, "
             "and beside it a gate of the same width. The gate does not score keys; after "
             "attention it decides how much of each head's context number passes on.",
             inspect_part(p, ROLE_ATTN_Q));
}

void
inspect_attn_gate(struct out *o, const struct cell_at *at)
{
    const struct pipeline *p = at->p;
    const int d = p->st.shape.head_dim > 0 ? p->st.shape.head_dim : 1;
    char v[24];

    /* (the gate of head h, column j, is row 2 d h + d + j of q_proj) */
    emit(o, "attn_gate[%s][%d] = %s: head %d's gate, column %d of q_proj's %d\n",
         inspect_token(p, at->row), at->col, inspect_num(v, MAT_AT(&p->block.attn_gate, at->row, at->col)),
         at->col / d, 2 * d * (at->col / d) + d + at->col % d, 2 * p->st.queries.cols);
    emit(o, "ln1[%s] . that column of the weights:\n", inspect_token(p, at->row));
    inspect_linear(o, matrix_row(&p->block.ln1, at->row), &inspect_block_of(p)->q,
                   2 * d * (at->col / d) + d + at->col % d, at->max_terms);
    inspect_bias(o, &inspect_block_of(p)->q, 2 * d * (at->col / d) + d + at->col % d);
}

void
text_gated(const struct pipeline *p, char *buf, size_t size)
{
    (void)p;
    snprintf(buf, size,
             "Each context number times sigmoid(its gate): a gate far below 0 shuts it (about "
             "0), far above 0 lets it through whole. What passes is what the output projection "
             "reads.");
}

void
inspect_gated(struct out *o, const struct cell_at *at)
{
    const struct pipeline *p = at->p;
    const float c = MAT_AT(&p->st.context, at->row, at->col);
    const float g = MAT_AT(&p->block.attn_gate, at->row, at->col);
    char a[24], b[24], s[24], v[24];

    emit(o, "gated[%s][%d] = context %s%ssigmoid(gate %s) = %s%s%s = %s\n",
         inspect_token(p, at->row), at->col, inspect_num(a, c), o->times, inspect_num(b, g),
         inspect_num(a, c), o->times, inspect_num(s, sigmoid(g)),
         inspect_num(v, MAT_AT(&p->block.gated, at->row, at->col)));
}

/* ------------------------------------------------------- Gated DeltaNet */

void
text_delta_qkv(const struct pipeline *p, char *buf, size_t size)
{
    const struct decoder_gdn *g = sizes(p);

    snprintf(buf, size,
             "A Gated DeltaNet layer: linear attention, no softmax. One projection (%s) gives "
             "every token %d queries and %d keys of %d, and %d values of %d, side by side. "
             "Instead of comparing every query with every key, each value head keeps a state "
             "that the tokens write into, one after another.",
             inspect_part(p, ROLE_GDN_QKV), g->k_heads, g->k_heads, g->k_dim, g->v_heads,
             g->v_dim);
}

void
inspect_delta_qkv(struct out *o, const struct cell_at *at)
{
    projected(o, at, "delta_qkv", &inspect_block_of(at->p)->gdn.qkv,
              MAT_AT(&at->p->block.delta_qkv, at->row, at->col));
}

void
text_delta_conv(const struct pipeline *p, char *buf, size_t size)
{
    snprintf(buf, size,
             "A short causal convolution: each number becomes a weighted sum of itself and the "
             "same number of the %d tokens before (its own %d weights), then SiLU. It is the "
             "only place a token sees its neighbours directly; the state sees the rest.",
             sizes(p)->conv - 1, sizes(p)->conv);
}

void
inspect_delta_conv(struct out *o, const struct cell_at *at)
{
    const struct pipeline *p = at->p;
    const struct decoder_gdn_weights *w = &inspect_block_of(p)->gdn;
    const int taps = sizes(p)->conv;
    float sum = 0.0f;
    char a[24], b[24], v[24];

    emit(o, "delta_conv[%s][%d] = SiLU(", inspect_token(p, at->row), at->col);
    for (int i = 0; i < taps; i++) {
        const int src = at->row - (taps - 1) + i;
        const float x = src >= 0 ? MAT_AT(&p->block.delta_qkv, src, at->col) : 0.0f;
        sum += w->conv[(size_t)at->col * (size_t)taps + (size_t)i] * x;
        emit(o, "%s%s%s%s", i > 0 ? " + " : "",
             inspect_num(a, w->conv[(size_t)at->col * (size_t)taps + (size_t)i]), o->times,
             src >= 0 ? inspect_num(b, x) : "0 (before the text)");
    }
    emit(o, ")\n= SiLU(%s) = %s\n", inspect_num(a, sum),
         inspect_num(v, MAT_AT(&p->block.delta_conv, at->row, at->col)));
}

void
text_delta_q(const struct pipeline *p, char *buf, size_t size)
{
    snprintf(buf, size,
             "The queries, from the convolution, each head's scaled to length 1 and then "
             "divided by sqrt(%d): a query asks the state along one direction.",
             sizes(p)->k_dim);
}

void
text_delta_k(const struct pipeline *p, char *buf, size_t size)
{
    (void)p;
    snprintf(buf, size,
             "The keys, each head's scaled to length 1: a token writes its value into the "
             "state along its key, replacing what the state held in that direction.");
}

/* A normed query's or key's cell: the convolved number over its head's length. */
static void
normed_cell(struct out *o, const struct cell_at *at, bool query)
{
    const struct pipeline *p = at->p;
    const struct decoder_gdn *g = sizes(p);
    const int head = at->col / g->k_dim, Kq = g->k_heads * g->k_dim;
    const int col = (query ? 0 : Kq) + at->col;
    const float *row = matrix_row(&p->block.delta_conv, at->row) + (query ? 0 : Kq) +
                       (size_t)head * (size_t)g->k_dim;
    float sq = 0.0f;
    char a[24], b[24], v[24];

    for (int i = 0; i < g->k_dim; i++)
        sq += row[i] * row[i];
    emit(o, "%s[%s][%d] = delta_conv column %d %s / sqrt(%s + 1e-6)%s = %s\n",
         query ? "delta_q" : "delta_k", inspect_token(p, at->row), at->col, col,
         inspect_num(a, MAT_AT(&p->block.delta_conv, at->row, col)), inspect_num(b, sq),
         query ? " / sqrt(d_k)" : "",
         inspect_num(v, MAT_AT(query ? &p->block.delta_q : &p->block.delta_k, at->row, at->col)));
    emit(o, "(%s's sum of squares over head %d's %d numbers)\n", inspect_token(p, at->row), head,
         g->k_dim);
}

void
inspect_delta_q(struct out *o, const struct cell_at *at)
{
    normed_cell(o, at, true);
}

void
inspect_delta_k(struct out *o, const struct cell_at *at)
{
    normed_cell(o, at, false);
}

void
text_beta(const struct pipeline *p, char *buf, size_t size)
{
    (void)p;
    snprintf(buf, size,
             "beta, one number per token and value head, between 0 and 1: how much the token "
             "writes. Near 1 its value replaces what the state held along its key; near 0 the "
             "token leaves the state as it was.");
}

void
inspect_beta(struct out *o, const struct cell_at *at)
{
    const struct pipeline *p = at->p;
    const struct decoder_linear *l = &inspect_block_of(p)->gdn.b;
    const float x = column_dot(l, matrix_row(&p->block.ln1, at->row), at->col);
    char a[24], v[24];

    emit(o, "beta[%s][h%d] = sigmoid(b %s) = %s\n", inspect_token(p, at->row), at->col,
         inspect_num(a, x), inspect_num(v, MAT_AT(&p->block.beta, at->row, at->col)));
    emit(o, "b: ln1[%s] . column %d of %s:\n", inspect_token(p, at->row), at->col,
         inspect_part(p, ROLE_GDN_B));
    inspect_linear(o, matrix_row(&p->block.ln1, at->row), l, at->col, at->max_terms);
    inspect_bias(o, l, at->col);
}

void
text_decay(const struct pipeline *p, char *buf, size_t size)
{
    (void)p;
    snprintf(buf, size,
             "The decay g, at most 0: before each token writes, the whole state is multiplied "
             "by e^g. Near 0 the head remembers; far below 0 it forgets what came before. Each "
             "value head has its own rate (A_log) and each token moves it (a).");
}

void
inspect_decay(struct out *o, const struct cell_at *at)
{
    const struct pipeline *p = at->p;
    const struct decoder_gdn_weights *w = &inspect_block_of(p)->gdn;
    const float a = column_dot(&w->a, matrix_row(&p->block.ln1, at->row), at->col);
    const float g = MAT_AT(&p->block.decay, at->row, at->col);
    char x[24], y[24], z[24], v[24], e[24];

    emit(o, "decay[%s][h%d] = -exp(A_log %s)%ssoftplus(a %s + dt_bias %s) = %s\n",
         inspect_token(p, at->row), at->col, inspect_num(x, w->a_log[at->col]), o->times,
         inspect_num(y, a), inspect_num(z, w->dt_bias[at->col]), inspect_num(v, g));
    emit(o, "the state is kept times e^g = %s at this token: %s\n", inspect_num(e, expf(g)),
         expf(g) > 0.9f ? "it remembers" : expf(g) < 0.2f ? "it forgets almost everything" : "it fades");
}

void
text_effective(const struct pipeline *p, char *buf, size_t size)
{
    (void)p;
    snprintf(buf, size,
             "No scores here, but the layer still mixes the tokens: each read is exactly a sum "
             "of the tokens' values, o_t = sum_s M[t,s] v_s. M is what each earlier token gives "
             "the query: its beta, its key against the query, shrunk by every decay since and "
             "corrected by every later token that wrote along a key like its own. Unlike "
             "softmax weights it can be negative and a row need not sum to 1: blue takes away, "
             "red adds.");
}

/* The corrections of the tokens between, largest first, the first few named. */
static void
largest_corrections(struct out *o, const struct cell_at *at, const double *c, int count,
                    double decay)
{
    enum { SHOWN = 3 };
    int best[SHOWN], found = 0;
    char v[24];

    for (int k = 0; k < SHOWN && k < count; k++) {
        int pick = -1;
        for (int r = 0; r < count; r++) {
            bool taken = false;
            for (int e = 0; e < found; e++)
                taken = taken || best[e] == r;
            if (!taken && (pick < 0 || fabs(c[r]) > fabs(c[pick])))
                pick = r;
        }
        best[found++] = pick;
    }
    emit(o, "the largest, times the decay:");
    for (int k = 0; k < found; k++)
        emit(o, "%s %s %s", k > 0 ? "," : "", inspect_token(at->p, at->row - best[k]),
             inspect_num(v, (float)(c[best[k]] * decay)));
    emit(o, "%s\n", count > found ? ", ..." : "");
}

void
inspect_effective(struct out *o, const struct cell_at *at)
{
    const struct pipeline *p = at->p;
    const struct decoder_gdn_rows rows = { p->block.delta_q.data, p->block.delta_k.data,
                                           p->block.beta.data, p->block.decay.data };
    struct pipeline_view pv;
    struct decoder_gdn_cell cell;
    double *corr = NULL;
    char a[24], b[24], c[24], d[24], v[24];

    pipeline_stage_view(p, STAGE_EFFECTIVE, at->head, &pv);
    emit(o, "M[%s][%s] = %s: how much of %s's value head %d reads at %s\n",
         inspect_token(p, at->row), inspect_key(p, at->col),
         inspect_num(v, MAT_AT(&pv.m, at->row, at->col)), inspect_key(p, at->col), at->head,
         inspect_token(p, at->row));
    if (at->col > at->row) {
        emit(o, "%s comes later: the state has not read it yet (0)\n", inspect_key(p, at->col));
        return;
    }
    if (at->row > at->col)
        corr = malloc((size_t)(at->row - at->col) * sizeof *corr);
    if ((at->row > at->col && corr == NULL) ||
        decoder_gdn_effective_cell(p->decoder, &rows, at->head, at->row, at->col, corr, &cell) != 0) {
        free(corr);
        emit(o, "(out of memory for its parts)\n");
        return;
    }
    emit(o, "%s wrote with beta %s; its key . this query = %s: beta k.q = %s\n",
         inspect_key(p, at->col), inspect_num(a, (float)cell.beta), inspect_num(b, (float)cell.kq),
         inspect_num(c, (float)cell.plain_undecayed));
    if (cell.between == 0) {
        emit(o, "its own token: no decay and no correction since it wrote\n");
        free(corr);
        return;
    }
    emit(o, "the %d token%s since: decay e^(%s) = %s, corrections %s\n", cell.between,
         cell.between == 1 ? "" : "s", inspect_num(a, (float)cell.log_decay),
         inspect_num(b, (float)cell.decay), inspect_num(c, (float)cell.corrected));
    emit(o, "M = %s%s(%s + %s) = %s\n", inspect_num(a, (float)cell.decay), o->times,
         inspect_num(b, (float)cell.plain_undecayed), inspect_num(c, (float)cell.corrected),
         inspect_num(d, (float)cell.value));
    emit(o, "(a later token corrects it where its key is like %s's: it overwrites that "
            "direction of the state)\n", inspect_key(p, at->col));
    largest_corrections(o, at, corr, cell.between, cell.decay);
    free(corr);
}

void
text_delta_read(const struct pipeline *p, char *buf, size_t size)
{
    const struct decoder_gdn *g = sizes(p);

    snprintf(buf, size,
             "Each value head's state S (%d x %d) after the token, read along its query: o = "
             "S q. The token first shrinks S by e^g, then corrects it towards its value along "
             "its key (the delta rule: S += beta (v - S k) k^T). The state is the same size "
             "however long the text: this is all the layer keeps.",
             g->k_dim, g->v_dim);
}

void
inspect_delta_read(struct out *o, const struct cell_at *at)
{
    const struct pipeline *p = at->p;
    const struct decoder_gdn *g = sizes(p);
    char v[24], b[24], e[24];

    emit(o, "delta_read[%s][%d] = %s: value head %d's state read along query head %d\n",
         inspect_token(p, at->row), at->col,
         inspect_num(v, MAT_AT(&p->block.delta_read, at->row, at->col)), at->col / g->v_dim,
         g->tiled ? at->col / g->v_dim % g->k_heads : at->col / g->v_dim / (g->v_heads / g->k_heads));
    emit(o, "this token wrote with beta %s after a decay e^g = %s\n",
         inspect_num(b, MAT_AT(&p->block.beta, at->row, at->col / g->v_dim)),
         inspect_num(e, expf(MAT_AT(&p->block.decay, at->row, at->col / g->v_dim))));
}

void
text_delta_normed(const struct pipeline *p, char *buf, size_t size)
{
    (void)p;
    snprintf(buf, size,
             "Each head's read RMS-normed, times its norm's weights, then times SiLU of an "
             "output gate z (%s) the token makes for itself: what the output projection reads.",
             inspect_part(p, ROLE_GDN_Z));
}

void
inspect_delta_normed(struct out *o, const struct cell_at *at)
{
    const struct pipeline *p = at->p;
    const struct decoder_gdn *g = sizes(p);
    const struct decoder_gdn_weights *w = &inspect_block_of(p)->gdn;
    const int head = at->col / g->v_dim;
    const float *read = matrix_row(&p->block.delta_read, at->row) + (size_t)head * (size_t)g->v_dim;
    const float z = column_dot(&w->z, matrix_row(&p->block.ln1, at->row), at->col);
    double sq = 0.0;
    char a[24], b[24], c[24], d[24], v[24];

    for (int i = 0; i < g->v_dim; i++)
        sq += (double)read[i] * (double)read[i];
    emit(o, "delta_normed[%s][%d] = o %s / rms %s%sw %s%sSiLU(z %s) = %s\n",
         inspect_token(p, at->row), at->col, inspect_num(a, read[at->col % g->v_dim]),
         inspect_num(b, (float)sqrt(sq / g->v_dim + p->decoder->eps)), o->times,
         inspect_num(c, w->norm[at->col % g->v_dim]), o->times, inspect_num(d, z),
         inspect_num(v, MAT_AT(&p->block.delta_normed, at->row, at->col)));
}
