/*
 * attention.c: what the screens say of softmax attention's own stages, the
 * n x n ones: the scores, the mask, the scaling, the weights and their
 * dropout (each stage's formula, its text and a cell's arithmetic, named
 * after its VIEW_STAGE_LIST row as explain.c's and inspect.c's tables take
 * them).  A mixer of another kind says its own stages in a file of its own.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "attnscope/families/model/family_model.h"
#include "render/heatmap.h"
#include "render/parts/parts.h"

/* ------------------------------------------------------------ formulas */

void
formula_scores(const struct pipeline *p, char *buf, size_t size)
{
    (void)p;
    snprintf(buf, size, "w_ij = q_i . k_j");
}

void
formula_mask(const struct pipeline *p, char *buf, size_t size)
{
    const struct attention_config *c = &p->cfg;

    if (p->window > 0)
        snprintf(buf, size, "w_ij = -inf where j > i or j <= i - %d (the window)", p->window);
    else
        snprintf(buf, size, c->mask == ATTN_MASK_CAUSAL ? "w_ij = -inf where j > i" : "no mask");
}

void
formula_scaled(const struct pipeline *p, char *buf, size_t size)
{
    struct pipeline_scaling sc;

    pipeline_scaling_of(p, &sc);
    if (softcap_formula(p, &sc, buf, size)) /* (render/parts/softcap.c) */
        return;
    if (sc.symbol != NULL && sc.temperature)
        snprintf(buf, size, "w_ij / (%s T) = w_ij / %.4g", sc.symbol, (double)sc.divisor);
    else if (sc.symbol != NULL)
        snprintf(buf, size, "w_ij / %s = w_ij / %s", sc.symbol, sc.spelled);
    else if (sc.temperature)
        snprintf(buf, size, "w_ij / T = w_ij / %g", p->cfg.temperature);
    else
        snprintf(buf, size, "w_ij (not scaled)");
}

void
formula_weights(const struct pipeline *p, char *buf, size_t size)
{
    if (sinks_formula(p, buf, size)) /* (render/parts/sinks.c) */
        return;
    snprintf(buf, size, "a_ij = exp(s_ij) / sum_k exp(s_ik)");
}

void
formula_dropout(const struct pipeline *p, char *buf, size_t size)
{
    const struct attention_config *c = &p->cfg;

    if (p->st.dropout_on)
        snprintf(buf, size, "a'_ij = a_ij * keep_ij / (1 - p),  p = %g", c->dropout);
    else
        snprintf(buf, size, "a'_ij = a_ij (no dropout)");
}

/* --------------------------------------------------------------- texts */

void
text_scores(const struct pipeline *p, char *buf, size_t size)
{
    (void)p;
    snprintf(buf, size,
             "How well query i matches key j: the dot product of the two vectors, large "
             "when they point the same way. Row i is what token i looks at, before any "
             "normalisation.");
}

/* The full layers of a model with sliding ones, "layer 5, 11, 17, 23 ..." (the first few). */
static const char *
full_layers(const struct decoder_config *c, char *buf, size_t size)
{
    size_t at = 0;
    int shown = 0;

    buf[0] = '\0';
    for (int l = 0; l < c->n_layer && shown < 4; l++)
        if (decoder_window(c, l) == 0)
            attn_appendf(buf, size, &at, "%s%d", shown++ ? ", " : "layer ", l);
    if (shown == 4)
        attn_appendf(buf, size, &at, " ...");
    return buf;
}

void
text_mask(const struct pipeline *p, char *buf, size_t size)
{
    const struct attention_config *c = &p->cfg;
    char full[64];

    if (c->cross)
        snprintf(buf, size,
                 "Across sentences there is no mask: the whole source is known (an encoder read "
                 "it), so every target token may look at every source token. The decoder's own "
                 "self-attention, over the target, is where the causal mask belongs.");
    else if (p->window > 0)
        snprintf(buf, size,
                 "This layer slides: each token sees only the last %d tokens, itself included; "
                 "older keys get -inf as the future does. A full layer every few (here %s) sees "
                 "everything, so what a sliding layer drops can still arrive. Its KV cache holds "
                 "only %d rows, a ring (the kv cache stage shows it).",
                 p->window, p->decoder != NULL ? full_layers(p->decoder, full, sizeof full) : "",
                 p->window);
    else if (c->mask == ATTN_MASK_CAUSAL)
        snprintf(buf, size,
                 "A language model predicts the next token, so no token may see the ones "
                 "after it. Their scores become -inf, which softmax turns into exactly 0. "
                 "M toggles the mask itself, m switches the mask off.");
    else if (attention_variant_info(c->variant)->proj == PROJ_LINEAR_LISTS)
        snprintf(buf, size,
                 "The notes' class has no mask: every token sees every other, the future "
                 "included, as an encoder does (a decoder masks its own self-attention). "
                 "Press m to add the causal mask the book's classes use.");
    else if (attention_variant_info(c->variant)->mask == ATTN_MASK_NONE)
        snprintf(buf, size,
                 "%s has no mask: every token sees every other, the future included. "
                 "Press m to add a causal mask, as CausalAttention does.",
                 attention_variant_info(c->variant)->cls);
    else
        snprintf(buf, size,
                 "The mask is off: every token sees every other, the future included. "
                 "Press m to hide the future again.");
}

void
text_scaled(const struct pipeline *p, char *buf, size_t size)
{
    const struct attention_config *c = &p->cfg;
    struct pipeline_scaling sc;

    pipeline_scaling_of(p, &sc);
    if (softcap_text(p, buf, size))
        return;
    if (p->decoder != NULL && sc.dim > 0 && sc.symbol != NULL &&
        strcmp(sc.symbol, "sqrt(query_pre_attn_scalar)") == 0) {
        /* A model's own divisor: its config's number, not the head's width (no d or u here). */
        if (sc.root_of == 1)
            snprintf(buf, size,
                     "This model divides by sqrt(query_pre_attn_scalar), its config's number "
                     "in place of d_k: here sqrt(1) = 1, so dividing changes nothing (its heads "
                     "are %d wide). Press / to see that it does not.",
                     p->st.shape.head_dim);
        else
            snprintf(buf, size,
                     "Dot products grow with the vectors' width; this model divides by "
                     "sqrt(query_pre_attn_scalar) = %s, a number its config sets (its heads are "
                     "%d wide), to keep softmax soft. Press / to switch it off and compare.",
                     sc.spelled, p->st.shape.head_dim);
        return;
    }
    if (sc.root_of == 1 && p->decoder != NULL && c->scale)
        /* (a model's heads one wide: its weights fix d_k, no knob widens them) */
        snprintf(buf, size,
                 "Dot products grow with d_k, and dividing by sqrt(d_k) keeps softmax soft. "
                 "This model's heads are 1 wide and sqrt(1) = 1, so / changes nothing here.");
    else if (sc.root_of == 1 && !p->qkv_given)
        /* The defaults' d_k is 1: the knob would seem broken. */
        snprintf(buf, size,
                 "Dot products grow with d_k, and dividing by sqrt(d_k) keeps softmax soft. "
                 "Here d_k is 1 and sqrt(1) = 1, so / changes nothing: press d for wider heads "
                 "(d_k = d_out / heads) or u to divide by sqrt(N), then / to compare.");
    else if (c->scale)
        snprintf(buf, size,
                 "Dot products grow with d_k; large scores make softmax nearly one-hot and "
                 "learning stalls. Dividing by sqrt(d_k) keeps the scores where softmax "
                 "stays soft. Press / to switch it off and compare the weights.");
    else
        snprintf(buf, size,
                 "Scaling is off: the scores reach softmax undivided, so rows come out "
                 "peakier than they should. Press / to divide by %s again.",
                 p->decoder != NULL && p->scale_scalar > 0.0 ? "sqrt(query_pre_attn_scalar)"
                                                             : "sqrt(d_k)");
}

void
text_weights(const struct pipeline *p, char *buf, size_t size)
{
    if (sinks_text(p, buf, size))
        return;
    snprintf(buf, size,
             "Softmax turns each row into proportions that sum to 1: exponentiate, then "
             "divide by the row's sum. The row's maximum is subtracted first (as PyTorch "
             "does), which changes nothing but keeps exp from overflowing.");
}

void
text_dropout(const struct pipeline *p, char *buf, size_t size)
{
    const struct attention_config *c = &p->cfg;

    if (p->st.dropout_on)
        snprintf(buf, size,
                 "In training, dropout zeroes each weight with probability p and multiplies "
                 "the survivors by 1/(1-p): the expected total stays the same, but a row no "
                 "longer sums to 1. Press r for a new mask, t for evaluation mode.");
    else if (!c->train)
        snprintf(buf, size,
                 "Evaluation mode: dropout does nothing and the weights pass unchanged. "
                 "Press t for training mode.");
    else
        snprintf(buf, size,
                 "Dropout is off (p = 0): the weights pass unchanged. Press o to raise p.");
}

/* ---------------------------------------------------------- a cell's sum */

void
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

    emit(o, "score[%s][%s] = q_%s . k_%s = %s\n", inspect_token(p, i), inspect_key(p, j), inspect_token(p, i),
         inspect_key(p, j), inspect_num(v, MAT_AT(&scores, i, j)));
    if (p->block.q_rotated.data != NULL)
        emit(o, "(the queries and keys after RoPE%s; key head %d)\n",
             p->block.q_normed.data != NULL ? " and QK-norm" : "", pipeline_kv_head(p, head));
    inspect_products(o, matrix_row(pipeline_scored_queries(p), i) + head * hd, 1,
                     matrix_row(pipeline_scored_keys(p), j) + pipeline_kv_head(p, head) * hd, 1, hd,
                     max_terms);
    emit(o, "\n");
}

void
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

    if (pipeline_out_of_window(p, i, j))
        emit(o, "'%s' is %d tokens back from '%s'; this layer sees the last %d: hidden, the "
                "score becomes -inf.\n",
             inspect_key(p, j), i - j, inspect_token(p, i), p->window);
    else if (p->cfg.mask == ATTN_MASK_NONE)
        emit(o, "no mask: '%s' sees '%s'%s.\n", inspect_token(p, i), inspect_key(p, j),
             j > i ? ", a token after it" : "");
    else if (hidden)
        emit(o, "'%s' comes after '%s' (%d > %d): hidden, the score becomes -inf.\n", inspect_key(p, j),
             inspect_token(p, i), j, i);
    else if (p->window > 0)
        emit(o, "'%s' is %d tokens back from '%s', within the last %d this layer sees: visible, "
                "the score stays.\n",
             inspect_key(p, j), i - j, inspect_token(p, i), p->window);
    else
        emit(o, "'%s' is at or before '%s' (%d <= %d): visible, the score stays.\n", inspect_key(p, j),
             inspect_token(p, i), j, i);
    if (!mask_matrix)
        emit(o, "masked[%s][%s] = %s\n", inspect_token(p, i), inspect_key(p, j), inspect_num(v, MAT_AT(&masked, i, j)));
}

void
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

    if (!softcap_inspect(o, at, MAT_AT(&masked, i, j), MAT_AT(&scaled, i, j)))
        emit(o, "scaled[%s][%s] = %s / %s = %s\n", inspect_token(p, i), inspect_key(p, j),
             inspect_num(a, MAT_AT(&masked, i, j)), inspect_num(b, p->st.divisor),
             inspect_num(c, MAT_AT(&scaled, i, j)));
    pipeline_scaling_of(p, &sc);
    if (sc.symbol != NULL)
        emit(o, "divided by %s = %s%s.\n", sc.symbol, sc.spelled,
             sc.temperature ? " times the temperature" : "");
    else
        emit(o, "scaling is off%s.\n", sc.temperature ? ": divided by T only" : "");
}

void
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
    emit(o, "weight[%s][%s] = exp(%s - max) / sum = %s\n", inspect_token(p, i), inspect_key(p, j),
         inspect_num(a, row[j]), inspect_num(b, MAT_AT(&weights, i, j)));
    emit(o, "row '%s': max %s; exp(s - max) per key:\n", inspect_token(p, i), inspect_num(a, max));
    for (int k = 0; k < n && shown < max_terms; k++) {
        if (n > max_terms && k != j && k > max_terms - 2)
            continue;
        emit(o, "%s%s %s", shown ? ", " : "", inspect_key(p, k),
             row[k] == -INFINITY ? "0 (-inf)" : inspect_num(c, (float)exp((double)row[k] - (double)max)));
        shown++;
    }
    if (shown < n)
        emit(o, ", ... (%d keys)", n);
    if (isnan(sum) || isinf(max))
        /* exp(inf - inf) or 0/0: the row is NaN, in PyTorch too; say why instead of "sums to 1". */
        emit(o, "\nsum %s: %s, so every weight in the row is nan (PyTorch's softmax "
                "gives nan too). Smaller inputs or a larger divisor keep scores finite.\n",
             inspect_num(a, (float)sum),
             max == INFINITY    ? "the largest score is +inf and exp(inf - inf) is nan"
             : max == -INFINITY ? "every score in the row is -inf and 0 / 0 is nan"
                                : "a score in the row is nan");
    else if (!sinks_inspect(o, at, (double)max, sum, row[j])) /* (render/parts/sinks.c) */
        emit(o, "\nsum %s; the row's weights sum to 1.\n", inspect_num(a, (float)sum));
}

void
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
        emit(o, "dropped[%s][%s] = weight %s: %s.\n", inspect_token(p, i), inspect_key(p, j),
             inspect_num(a, MAT_AT(&weights, i, j)),
             p->cfg.train ? "p = 0, nothing is dropped" : "evaluation mode, nothing is dropped");
        return;
    }
    for (int k = 0; k < st->nk; k++) {
        before += MAT_AT(&weights, i, k);
        after += MAT_AT(&dropped, i, k);
    }
    inspect_draw(o, p, e);
    emit(o, "dropped[%s][%s] = %s%s%s = %s\n", inspect_token(p, i), inspect_key(p, j),
         inspect_num(a, MAT_AT(&weights, i, j)), o->times, st->keep[e] ? inspect_num(c, st->dropout_scale) : "0",
         inspect_num(b, MAT_AT(&dropped, i, j)));
    emit(o, "row '%s' sums to %s now (it was %s).\n", inspect_token(p, i), inspect_num(a, (float)after),
         inspect_num(b, (float)before));
}
