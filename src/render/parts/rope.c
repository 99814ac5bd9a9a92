/*
 * rope.c: QK-norm and rotary positions explained (Llama, Qwen): what each
 * stage does, a normed cell from its head's root mean square, and a turned
 * cell from its pair, angle, cosine and sine, with what the turn does to a
 * score: the same query and key placed at several distances.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>

#include "attnscope/families/model/family_model.h"
#include "render/parts/parts.h"

static const struct decoder_model *
model_of(const struct pipeline *p)
{
    return &pipeline_decoder(p)->model->dec;
}

/* Whether the layer shown turns with the sliding layers' own RoPE (unstretched, its own base). */
static bool
sliding(const struct pipeline *p)
{
    return decoder_rope_local(&model_of(p)->cfg, p->layer);
}

/* The shown layer's frequencies, and the factor its cos and sin are multiplied by (YaRN's). */
static const float *
layer_freq(const struct pipeline *p, float *factor)
{
    const struct decoder_model *m = model_of(p);

    *factor = !sliding(p) && m->cfg.rope_scaling.yarn ? (float)m->cfg.rope_scaling.attention_factor
                                                      : 1.0f;
    return sliding(p) ? m->rope_freq_local : m->rope_freq;
}

/* The shown layer's RoPE base. */
static double
layer_theta(const struct pipeline *p)
{
    const struct decoder_config *c = &model_of(p)->cfg;

    return sliding(p) && c->rope_local_theta > 0.0 ? c->rope_local_theta : c->rope_theta;
}

void
text_qnorm(const struct pipeline *p, char *buf, size_t size)
{
    if (model_of(p)->cfg.qk_norm_full) {
        snprintf(buf, size,
                 "QK-norm (%s): each query's %d numbers, all heads together, are divided by "
                 "their root mean square and scaled by %s's weights, before RoPE. Scores then "
                 "cannot grow just because a query got long.",
                 model_of(p)->title, p->st.shape.heads * p->st.shape.head_dim,
                 inspect_part(p, ROLE_ATTN_Q_NORM));
        return;
    }
    snprintf(buf, size,
             "QK-norm (%s): each head's %d numbers of every query are divided by their root "
             "mean square and scaled by %s's %d weights, before RoPE. Scores then cannot grow "
             "just because a query got long.",
             model_of(p)->title, p->st.shape.head_dim, inspect_part(p, ROLE_ATTN_Q_NORM),
             p->st.shape.head_dim);
}

void
text_knorm(const struct pipeline *p, char *buf, size_t size)
{
    snprintf(buf, size,
             "The keys get the same per-head RMSNorm with their own weights (%s), one per key "
             "head: %d of them here, each shared by %d query heads.",
             inspect_part(p, ROLE_ATTN_K_NORM),
             p->decoder != NULL ? decoder_kv_heads(p->decoder) : p->st.shape.heads,
             p->decoder != NULL ? p->decoder->n_head / decoder_kv_heads(p->decoder) : 1);
}

void
text_qrope(const struct pipeline *p, char *buf, size_t size)
{
    snprintf(buf, size,
             "RoPE: instead of adding a position to the token, each query is turned. Column i and "
             "column i + d/2 of a head form a pair, rotated by the angle position x theta^(-2i/d) "
             "(theta %g%s): early pairs turn fast, late ones slowly. The cursor's partner is "
             "underlined; the cell panel turns the pair.",
             layer_theta(p),
             sliding(p) ? ", this sliding layer's"
             : model_of(p)->cfg.rope_scaling.yarn ? ", then YaRN's stretch"
                                                   : "");
}

void
text_krope(const struct pipeline *p, char *buf, size_t size)
{
    (void)p;
    snprintf(buf, size,
             "The keys are turned the same way. A query at position m and a key at position n "
             "then score as if only n - m mattered: the turns cancel except for their "
             "difference, so attention sees how far apart tokens are, not where they are.");
}

/* QK-norm at a cell: the head's slice of the projection, its root mean square, the weight. */
static void
qk_norm_cell(struct out *o, const struct cell_at *at, bool keys)
{
    const struct pipeline *p = at->p;
    const struct decoder_block *b = inspect_block_of(p);
    const int hd = p->st.shape.head_dim;
    const int head = at->col / hd;
    const struct matrix *in = keys ? &p->st.keys : &p->st.queries;
    const struct matrix *out = keys ? &p->block.k_normed : &p->block.q_normed;

    if (p->decoder->qk_norm_full) { /* (Olmo: the whole row, every head at once) */
        inspect_rms_cell(o, at, keys ? "k_norm" : "q_norm", keys ? "k" : "q",
                         matrix_row(in, at->row), in->cols,
                         keys ? b->k_norm.scale : b->q_norm.scale, p->decoder->eps, at->col,
                         MAT_AT(out, at->row, at->col));
        return;
    }
    emit(o, "%s head %d, its column %d:\n", keys ? "key" : "query", head, at->col % hd);
    inspect_rms_cell(o, at, keys ? "k_norm" : "q_norm", keys ? "k" : "q",
                     matrix_row(in, at->row) + (size_t)head * hd, hd,
                     keys ? b->k_norm.scale : b->q_norm.scale, p->decoder->eps, at->col % hd,
                     MAT_AT(out, at->row, at->col));
}

void
inspect_qnorm(struct out *o, const struct cell_at *at)
{
    qk_norm_cell(o, at, false);
}

void
inspect_knorm(struct out *o, const struct cell_at *at)
{
    qk_norm_cell(o, at, true);
}

/* x (a head's d numbers) turned to position pos, its pair t's two values into *lo, *hi. */
static void
turn_pair(const float *freq, float factor, const float *x, int d, int t, int pos, float *lo,
          float *hi)
{
    const int half = d / 2;
    const float angle = (float)pos * freq[t];
    const float c = (float)cos((double)angle) * factor, s = (float)sin((double)angle) * factor;

    *lo = x[t] * c - x[t + half] * s;
    *hi = x[t + half] * c + x[t] * s;
}

/* The dot product of a and b (d numbers each) after turning a to pa and b to pb. */
static double
turned_dot(const float *freq, float factor, const float *a, const float *b, int d, int pa, int pb)
{
    double sum = 0.0;

    for (int t = 0; t < d / 2; t++) {
        float a0, a1, b0, b1;
        turn_pair(freq, factor, a, d, t, pa, &a0, &a1);
        turn_pair(freq, factor, b, d, t, pb, &b0, &b1);
        sum += (double)a0 * b0 + (double)a1 * b1;
    }
    return sum;
}

static void
rope_cell(struct out *o, const struct cell_at *at, bool keys)
{
    const struct pipeline *p = at->p;
    const struct decoder_model *m = model_of(p);
    const int hd = p->st.shape.head_dim;
    const int half = hd / 2;
    const int head = at->col / hd;
    const int c = at->col % hd;
    const int t = c % half;
    const int pos = at->row;
    /* What is turned: the projection, or its QK-norm. */
    const struct matrix *in = keys ? (p->block.k_normed.data != NULL ? &p->block.k_normed : &p->st.keys)
                                   : (p->block.q_normed.data != NULL ? &p->block.q_normed : &p->st.queries);
    const struct matrix *out = keys ? &p->block.k_rotated : &p->block.q_rotated;
    const float *x = matrix_row(in, at->row) + (size_t)head * hd;
    float factor;
    const float *freqs = layer_freq(p, &factor);
    const float freq = freqs[t];
    const float angle = (float)pos * freq;
    const float cs = (float)cos((double)angle) * factor, sn = (float)sin((double)angle) * factor;
    const char *name = keys ? "k" : "q";
    char a[24], b[24], v[24], w[24];

    emit(o, "%s_rot[%s][%d] (head %d, column %d) = %s\n", name, inspect_token(p, at->row), at->col,
         head, c, inspect_num(v, MAT_AT(out, at->row, at->col)));
    emit(o, "pair %d: (x[%d], x[%d]) = (%s, %s)\n", t, t, t + half, inspect_num(a, x[t]),
         inspect_num(b, x[t + half]));
    emit(o, "angle = position %d x theta^(-2 x %d / %d) = %d x %.6g = %s rad%s\n", pos, t, hd, pos,
         (double)freq, inspect_num(v, angle),
         sliding(p)                     ? " (this sliding layer's base, unstretched)"
         : m->cfg.rope_scaling.llama3   ? " (the frequency after Llama 3's stretch)"
         : m->cfg.rope_scaling.yarn     ? " (the frequency after YaRN's stretch)"
         : m->cfg.rope_scaling.linear   ? " (the frequency divided by the linear stretch)"
                                        : "");
    if (factor != 1.0f)
        emit(o, "cos %s, sin %s (each times YaRN's attention factor %.6g)\n", inspect_num(a, cs),
             inspect_num(b, sn), (double)factor);
    else
        emit(o, "cos %s, sin %s\n", inspect_num(a, cs), inspect_num(b, sn));
    if (c < half)
        emit(o, "x[%d] cos - x[%d] sin = %s%s%s - %s%s%s\n", t, t + half, inspect_num(a, x[t]),
             o->times, inspect_num(b, cs), inspect_num(v, x[t + half]), o->times,
             inspect_num(w, sn));
    else
        emit(o, "x[%d] cos + x[%d] sin = %s%s%s + %s%s%s\n", t + half, t,
             inspect_num(a, x[t + half]), o->times, inspect_num(b, cs), inspect_num(v, x[t]),
             o->times, inspect_num(w, sn));
    if (!keys && p->block.k_rotated.data != NULL) {
        /* What the turn does: this token's query against its own key placed further back. */
        const struct matrix *k_in =
            p->block.k_normed.data != NULL ? &p->block.k_normed : &p->st.keys;
        const float *k = matrix_row(k_in, at->row) + (size_t)pipeline_kv_head(p, head) * hd;
        static const int dist[] = { 0, 1, 2, 4, 8, 16, 64, 256 };
        emit(o, "this query . its own key placed d tokens back (RoPE sees only d):\n");
        for (size_t i = 0; i < sizeof dist / sizeof dist[0]; i++)
            emit(o, "%sd %d: %s", i ? ", " : "", dist[i],
                 inspect_num(v, (float)turned_dot(freqs, factor, x, k, hd, pos + dist[i], pos)));
        emit(o, "\n");
    }
}

void
inspect_qrope(struct out *o, const struct cell_at *at)
{
    rope_cell(o, at, false);
}

void
inspect_krope(struct out *o, const struct cell_at *at)
{
    rope_cell(o, at, true);
}
