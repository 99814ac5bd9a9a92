/*
 * ple.c: Gemma 4's per-layer embeddings (see parts.h): each token's own
 * small input for every layer, made once beside the embedding, and what
 * each layer adds from it after its MLP, then its scalar.  As
 * modeling_gemma4.py's Gemma4TextModel.project_per_layer_inputs and
 * Gemma4TextDecoderLayer compute them, in float32.
 */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/decoder/parts.h"
#include "attnscope/kernels/rowops.h"

int
part_ple_inputs(const struct decoder_model *m, const int *ids, int n, const float *embed,
                float *ple, int threads)
{
    const struct decoder_config *c = &m->cfg;
    const int P = c->lw.ple_dim, width = c->n_layer * P;
    /* (Python's scalars, each rounded to float32 as torch's multiply by one does) */
    const float proj_scale = (float)(1.0 / sqrt((double)c->d_model));
    const float tok_scale = (float)sqrt((double)P);
    const float half = (float)(1.0 / sqrt(2.0));
    /* (an RMSNorm of P columns: part_norm's over rows as wide as a config's width) */
    const struct decoder_config rms = { .norm = DECODER_NORM_RMS, .eps = c->eps, .d_model = P };
    float *row = malloc((size_t)width * sizeof *row);

    if (row == NULL)
        return -1;
    decoder_linear_apply(&m->ple_model_proj, embed, n, ple, threads);
    for (size_t e = 0; e < (size_t)n * (size_t)width; e++)
        ple[e] *= proj_scale;
    part_norm(&rms, &m->ple_proj_norm, ple, n * c->n_layer, ple, threads);
    for (int i = 0; i < n; i++) {
        float *out = ple + (size_t)i * (size_t)width;
        (void)decoder_table_row(m->ple_embed, m->ple_embed16, m->ple_embedq, m->ple_embedq_type,
                                width, ids[i], row);
        for (int e = 0; e < width; e++)
            out[e] = (out[e] + row[e] * tok_scale) * half;
    }
    free(row);
    return 0;
}

void
part_layer_out(const struct decoder_model *m, int layer, const float *ple, int n,
               struct decoder_layer_stages *s, int from, int threads)
{
    const struct decoder_config *c = &m->cfg;
    const struct decoder_block *b = &m->blocks[layer];
    const int P = c->lw.ple_dim, C = c->d_model;
    const size_t at = (size_t)from * (size_t)C, rows = (size_t)(n - from);
    float *out = s->resid2 + at;

    if (P > 0) {
        float *act = s->ple_act + (size_t)from * (size_t)P;
        const size_t width = (size_t)c->n_layer * (size_t)P;
        decoder_linear_apply(&b->ple_gate, out, (int)rows, act, threads);
        rowops_gelu(act, act, rows * (size_t)P);
        for (size_t i = 0; i < rows; i++)
            for (int p = 0; p < P; p++)
                act[i * (size_t)P + (size_t)p] *=
                    ple[((size_t)from + i) * width + (size_t)layer * (size_t)P + (size_t)p];
        decoder_linear_apply(&b->ple_proj, act, (int)rows, s->ple_out + at, threads);
        part_norm(c, &b->ple_norm, s->ple_out + at, (int)rows, s->ple_normed + at, threads);
        for (size_t e = 0; e < rows * (size_t)C; e++)
            out[e] += s->ple_normed[at + e];
    }
    if (c->lw.layer_scalar)
        for (size_t e = 0; e < rows * (size_t)C; e++)
            out[e] *= b->scalar;
}
