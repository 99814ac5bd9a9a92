/*
 * norm.c: the norms of a decoder block explained (ln1 and ln2 before
 * attention and the MLP, the final norm after the last block): what they
 * do, and a cell worked out from its row's mean and variance.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>

#include "attnscope/families/model/family_model.h"
#include "render/parts/parts.h"

bool
norm_is_rms(const struct pipeline *p)
{
    return p->decoder != NULL && p->decoder->norm == DECODER_NORM_RMS;
}

const char *
norm_final_said(const struct pipeline *p)
{
    return norm_is_rms(p) ? "the final norm" : "ln_f";
}

void
text_ln1(const struct pipeline *p, char *buf, size_t size)
{
    if (p->decoder != NULL && p->decoder->norm_plus_one) {
        snprintf(buf, size,
                 "RMSNorm (%s): each token's row divided by its root mean square, then scaled "
                 "by 1 + w (Gemma stores w centred on 0). The first of a block's four norms: "
                 "attention reads these rows.",
                 inspect_part(p, ROLE_ATTN_NORM));
        return;
    }
    if (norm_is_rms(p)) {
        snprintf(buf, size,
                 "RMSNorm (%s): each token's row is divided by its root mean square, then scaled "
                 "by one learned vector (no mean subtracted, no shift: Llama's cheaper norm). "
                 "Attention reads these rows: the %d numbers of every token start on one scale.",
                 inspect_part(p, ROLE_ATTN_NORM), p->d_in);
        return;
    }
    snprintf(buf, size,
             "Layer norm (%s): each token's row is shifted to mean 0 and scaled to variance 1, "
             "then stretched and shifted by two learned vectors (g and b). Attention reads these "
             "rows, not the raw stream: the %d numbers of every token start on the same scale.",
             inspect_part(p, ROLE_ATTN_NORM), p->d_in);
}

/* The norms of attention's and the MLP's outputs (Gemma's and Olmo's), what they do. */
void
text_outnorm(const struct pipeline *p, char *buf, size_t size)
{
    snprintf(buf, size,
             "%s normalises attention's output (%s) before it joins the stream: what attention "
             "adds comes at one scale whatever the heads made.%s",
             p->decoder != NULL && decoder_pre_norms(p->decoder) ? "Gemma's third norm"
                                                                 : "Olmo's post-norm",
             inspect_part(p, ROLE_ATTN_POST_NORM),
             p->decoder != NULL && decoder_pre_norms(p->decoder)
                 ? " With ln1 it sandwiches attention."
                 : " No norm came before: Q K V read the stream itself.");
}

void
text_mlpnorm(const struct pipeline *p, char *buf, size_t size)
{
    snprintf(buf, size,
             "The MLP's output normed the same way (%s), with its own weights, before the second "
             "residual add: each block's two contributions reach the stream already rescaled.",
             inspect_part(p, ROLE_FFN_POST_NORM));
}

void
text_ln2(const struct pipeline *p, char *buf, size_t size)
{
    if (norm_is_rms(p)) {
        snprintf(buf, size,
                 "A second RMSNorm (%s), with its own scale, before the MLP: the stream with "
                 "attention's contribution in it, rescaled row by row.",
                 inspect_part(p, ROLE_FFN_NORM));
        return;
    }
    snprintf(buf, size,
             "A second layer norm (%s), with its own g and b, before the MLP: the same rescaling "
             "of each row as %s, now of the stream with attention's contribution in it.",
             inspect_part(p, ROLE_FFN_NORM), inspect_part(p, ROLE_ATTN_NORM));
}

void
text_final(const struct pipeline *p, char *buf, size_t size)
{
    if (norm_is_rms(p)) {
        snprintf(buf, size,
                 "After the last block one more RMSNorm (%s); each row times the output matrix "
                 "(the token embedding when tied) gives a logit for every token of the "
                 "vocabulary, and their softmax the next-token probabilities.",
                 inspect_part(p, ROLE_OUTPUT_NORM));
        return;
    }
    snprintf(buf, size,
             "After the last block one more layer norm (%s); each row times the token "
             "embedding %s gives a score (logit) for every token of the vocabulary, and their "
             "softmax the next-token probabilities (--print shows the likeliest).",
             inspect_part(p, ROLE_OUTPUT_NORM), inspect_part(p, ROLE_TOKEN_EMBD));
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
    inv = (float)(1.0 / sqrt(var + (double)pipeline_decoder(at->p)->model->dec.cfg.eps));
    emit(o, "%s[%s][%d] = %s\n", name, inspect_token(at->p, at->row), j, inspect_num(v, got));
    emit(o, "row %s: mean %s, variance %s (over its %d numbers)\n", from, inspect_num(m, (float)mean),
         inspect_num(s2, (float)var), c);
    inspect_num(z, (float)(x[j] - mean) * inv);
    emit(o, "(%s - mean) / sqrt(variance + eps) = %s;\n%s%sg[%d] %s + b[%d] %s\n", inspect_num(v, x[j]), z, z,
         o->times, j, inspect_num(gv, g[j]), j, inspect_num(bv, b[j]));
}

void
inspect_rms_cell(struct out *o, const struct cell_at *at, const char *name, const char *from,
                 const float *x, int c, const float *g, float eps, int j, float got)
{
    double sq = 0.0;
    float inv;
    char v[24], m[24], z[24], gv[24];

    for (int k = 0; k < c; k++)
        sq += (double)x[k] * (double)x[k];
    inv = 1.0f / sqrtf((float)(sq / c) + eps);
    emit(o, "%s[%s][%d] = %s\n", name, inspect_token(at->p, at->row), at->col, inspect_num(v, got));
    emit(o, "row %s: mean square %s (over its %d numbers), root %s\n", from,
         inspect_num(m, (float)(sq / c)), c, inspect_num(z, (float)sqrt(sq / c)));
    inspect_num(z, x[j] * inv);
    if (at->p->decoder != NULL && at->p->decoder->norm_plus_one) {
        /* (Gemma: the weight is stored centred on 0 and scales by 1 + w) */
        emit(o, "%s / sqrt(mean square + eps) = %s;\n%s%s(1 + w[%d] %s)\n", inspect_num(v, x[j]),
             z, z, o->times, j, inspect_num(gv, g[j]));
        return;
    }
    emit(o, "%s / sqrt(mean square + eps) = %s;\n%s%sg[%d] %s\n", inspect_num(v, x[j]), z, z,
         o->times, j, inspect_num(gv, g[j]));
}

void
inspect_ln1(struct out *o, const struct cell_at *at)
{
    const struct pipeline *p = at->p;
    const struct decoder_block *blk = inspect_block_of(p);

    if (norm_is_rms(p)) {
        inspect_rms_cell(o, at, "ln1", "x (the block's input)", matrix_row(&p->inputs, at->row),
                         p->inputs.cols, blk->norm1.scale, p->decoder->eps, at->col,
                         MAT_AT(&p->block.ln1, at->row, at->col));
        return;
    }

    layer_norm_cell(o, at, "ln1", "x (the block's input)", matrix_row(&p->inputs, at->row),
                    p->inputs.cols, blk->norm1.scale, blk->norm1.shift, MAT_AT(&p->block.ln1, at->row, at->col));
}

void
inspect_ln2(struct out *o, const struct cell_at *at)
{
    const struct pipeline *p = at->p;
    const struct decoder_block *blk = inspect_block_of(p);

    if (norm_is_rms(p)) {
        inspect_rms_cell(o, at, "ln2", "residual1", matrix_row(&p->block.residual1, at->row),
                         p->block.residual1.cols, blk->norm2.scale, p->decoder->eps, at->col,
                         MAT_AT(&p->block.ln2, at->row, at->col));
        return;
    }
    layer_norm_cell(o, at, "ln2", "residual1", matrix_row(&p->block.residual1, at->row),
                    p->block.residual1.cols, blk->norm2.scale, blk->norm2.shift,
                    MAT_AT(&p->block.ln2, at->row, at->col));
}

void
inspect_outnorm(struct out *o, const struct cell_at *at)
{
    const struct pipeline *p = at->p;

    inspect_rms_cell(o, at, "output_normed", "output", matrix_row(&p->st.output, at->row),
                     p->st.output.cols, inspect_block_of(p)->attn_post.scale, p->decoder->eps,
                     at->col, MAT_AT(&p->block.output_normed, at->row, at->col));
}

void
inspect_mlpnorm(struct out *o, const struct cell_at *at)
{
    const struct pipeline *p = at->p;

    inspect_rms_cell(o, at, "mlp_normed", "mlp", matrix_row(&p->block.mlp, at->row),
                     p->block.mlp.cols, inspect_block_of(p)->mlp_post.scale, p->decoder->eps,
                     at->col, MAT_AT(&p->block.mlp_normed, at->row, at->col));
}

void
inspect_final(struct out *o, const struct cell_at *at)
{
    const struct pipeline *p = at->p;
    const struct decoder_model *m = &pipeline_decoder(p)->model->dec;
    const struct decoder_run *r = &pipeline_decoder(p)->run;
    const float *x = r->layers[m->cfg.n_layer - 1].resid2 + (size_t)at->row * (size_t)m->cfg.d_model;

    if (norm_is_rms(p)) {
        inspect_rms_cell(o, at, inspect_part(p, ROLE_OUTPUT_NORM), "residual2 of the last layer", x,
                         m->cfg.d_model,
                         m->final_norm.scale, m->cfg.eps, at->col,
                         MAT_AT(&p->block.final, at->row, at->col));
        return;
    }

    layer_norm_cell(o, at, inspect_part(p, ROLE_OUTPUT_NORM), "residual2 of the last layer", x, m->cfg.d_model, m->final_norm.scale,
                    m->final_norm.shift, MAT_AT(&p->block.final, at->row, at->col));
}
