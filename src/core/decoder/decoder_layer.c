/*
 * decoder_layer.c: the stages the forward does not keep, made again when
 * they are asked for: a layer shown, a head's weights, the logit lens (see
 * decoder.h).
 */
#include "config.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "attnscope/base/progress.h"
#include "attnscope/decoder/decoder.h"
#include "attnscope/decoder/mixer.h"
#include "attnscope/decoder/parts.h"
#include "attnscope/decoder/run.h"
#include "attnscope/formats/tensor.h"
#include "attnscope/kernels/linalg.h"
#include "attnscope/kernels/parallel.h"
#include "attnscope/kernels/rowops.h"
#include "decoder_internal.h"

const float *
decoder_run_sink(const struct decoder_model *m, const struct decoder_run *r, int layer, int head)
{
    const struct decoder_block *b = &m->blocks[layer];

    return m->cfg.sinks && !r->sinks_off && b->sinks != NULL ? &b->sinks[head] : NULL;
}

float
decoder_sink_share(const struct decoder_model *m, const struct decoder_run *r, int head, int i)
{
    const int layer = r->shown;
    const float *sink = layer >= 0 ? decoder_run_sink(m, r, layer, head) : NULL;
    const size_t ld = (size_t)r->attention_ld;

    if (sink == NULL || r->layers[layer].scaled == NULL)
        return 0.0f;
    return part_sink_share(r->layers[layer].scaled + ((size_t)head * ld + (size_t)i) * ld, r->n,
                           *sink);
}

/*
 * Where one head's (n, n) stages go, rows ld floats apart; masked and scaled
 * NULL: into scratch's 2n floats.
 */
struct head_out {
    float *scores, *masked, *scaled, *weights;
    size_t ld;
};

struct layer_job {
    const struct decoder_model *m;
    const struct decoder_run *r;
    int layer, keep;
    float *stages[RUN_ATTENTION_STAGES]; /* scores, masked, scaled, weights */
};

/*
 * One head's (n, n) stages from the queries q, the first keep rows and
 * columns already there (an edit's, made in place): the columns from keep
 * on of those rows (scores; under the causal mask every one of them hidden),
 * then the rows from keep on, whole.
 */
static void
head_attention(const struct decoder_model *m, const struct decoder_run *r, int layer, int head,
               const float *q, int keep, const struct head_out *o, float *scratch)
{
    const int n = r->n;
    const int Q = decoder_layer_q_width(&m->cfg, layer);
    const int K = decoder_layer_kv_width(&m->cfg, layer);
    const int hd = decoder_layer_head_dim(&m->cfg, layer);
    const float *k =
        r->layers[layer].k + (size_t)decoder_layer_kv_head_of(&m->cfg, layer, head) * hd;
    const int window = r->causal ? decoder_window(&m->cfg, layer) : 0;
    const size_t ld = o->ld;

    q += (size_t)head * hd;
    if (keep > 0) {
        linalg_gemm_nt(keep, n - keep, hd, q, Q, k + (size_t)keep * K, K, o->scores + keep,
                       (int)ld);
        for (int i = 0; i < keep; i++) {
            const size_t row = (size_t)i * ld;
            for (int j = keep; j < n; j++) {
                o->masked[row + j] = -INFINITY;
                o->scaled[row + j] = -INFINITY;
                o->weights[row + j] = 0.0f;
            }
        }
    }
    linalg_gemm_nt(n - keep, n, hd, q + (size_t)keep * Q, Q, k, K, o->scores + (size_t)keep * ld,
                   (int)ld);
    for (int i = keep; i < n; i++) {
        const size_t row = (size_t)i * ld;
        part_softmax(&m->cfg, o->scores + row, o->masked != NULL ? o->masked + row : scratch,
                     o->scaled != NULL ? o->scaled + row : scratch + n, o->weights + row, n,
                     decoder_first_key(window, i), r->causal ? i + 1 : n, r->divisors[layer],
                     decoder_run_sink(m, r, layer, head));
    }
}

void
decoder_head_weights(const struct decoder_model *m, const struct decoder_run *r, int layer,
                     int head, const float *q, float *w, float *scratch)
{
    const struct head_out o = { scratch + 2 * (size_t)r->n, NULL, NULL, w, (size_t)r->n };

    head_attention(m, r, layer, head, q, 0, &o, scratch);
}

size_t
decoder_queries_floats(const struct decoder_config *c, int n)
{
    const int Q = decoder_q_width_max(c) * (c->attn_gate ? 2 : 1);

    return (size_t)n * (size_t)(Q > c->d_model ? Q : c->d_model);
}

void
decoder_layer_queries(const struct decoder_model *m, const struct decoder_run *r, int layer,
                      float *q, float *scratch)
{
    const struct decoder_config *c = &m->cfg;
    const struct decoder_block *b = &m->blocks[layer];
    const int threads = parallel_threads();
    const size_t count = (size_t)r->n * (size_t)decoder_layer_q_width(c, layer);

    if (layer == r->shown) {
        memcpy(q, r->layers[layer].q, count * sizeof *q);
        return;
    }
    if (decoder_pre_norms(c)) {
        part_norm(c, &b->norm1, decoder_layer_input(r, layer), r->n, scratch, threads);
        decoder_linear_apply(&b->q, scratch, r->n, q, threads);
    } else /* (post-norm: the block's input itself) */
        decoder_linear_apply(&b->q, decoder_layer_input(r, layer), r->n, q, threads);
    if (c->attn_gate) { /* (each head's query, its gate left behind: moved down in order) */
        const size_t hd = (size_t)decoder_layer_head_dim(c, layer);
        for (size_t e = 0; e < (size_t)r->n * (size_t)c->n_head; e++)
            memmove(q + e * hd, q + 2 * e * hd, hd * sizeof *q);
    }
    /* QK-norm into scratch (the norm's output is read by then), RoPE back into q. */
    if (c->qk_norm || c->positions == DECODER_POSITIONS_ROPE)
        part_turn(m, layer, &b->q_norm, q, r->n, c->n_head, 0, scratch, q, threads);
}

static void
layer_heads(void *ctx, int h0, int h1)
{
    const struct layer_job *j = ctx;
    const size_t ld = (size_t)j->r->attention_ld;

    for (int h = h0; h < h1; h++) {
        const size_t at = (size_t)h * ld * ld;
        const struct head_out o = { j->stages[0] + at, j->stages[1] + at, j->stages[2] + at,
                                    j->stages[3] + at, ld };
        head_attention(j->m, j->r, j->layer, h, j->r->layers[j->layer].q, j->keep, &o, NULL);
    }
}

void
decoder_stage_copy(const struct decoder_config *c, const struct decoder_run *r, const float *stage,
                   float *out)
{
    const size_t n = (size_t)r->n, ld = (size_t)r->attention_ld;

    for (size_t h = 0; h < (size_t)c->n_head; h++)
        for (size_t i = 0; i < n; i++)
            memcpy(out + (h * n + i) * n, stage + (h * ld + i) * ld, n * sizeof *out);
}

enum attn_status
decoder_show_layer(const struct decoder_model *m, struct decoder_run *r, int layer,
                   struct attn_error *err)
{
    return decoder_show_layer_stages(m, r, layer, true, err);
}

enum attn_status
decoder_show_layer_stages(const struct decoder_model *m, struct decoder_run *r, int layer,
                          bool attention, struct attn_error *err)
{
    const struct decoder_config *c = &m->cfg;
    const int n = r->n;
    struct decoder_layer_stages *l;
    const struct decoder_mixer *mixer;
    struct layer_job job = { m, r, layer, 0, { NULL } };

    if (layer < 0 || layer >= c->n_layer || r->layers == NULL)
        return attn_fail(err, ATTN_EVALUE, "layer %d: the model has %d", layer, c->n_layer);
    if (r->lean)
        return attn_fail(err, ATTN_EVALUE, "layer %d: this run kept no layer (made for the next "
                                           "tokens only)", layer);
    if (layer != r->shown) {
        /* Not kept: the layer again from its input, every row, into the shown slot. */
        struct decoder_layer_stages s;
        float *logits, *scratch;
        run_scratch(c, r, &logits, &scratch);
        r->shown = layer;
        run_slot(c, r, RUN_SLOT_SHOWN, layer, &s);
        decoder_run_block(m, r, layer, decoder_layer_input(r, layer), 0, &s, scratch, parallel_threads());
        run_expose(c, r);
    }
    mixer = decoder_mixer_of(c, layer);
    l = &r->layers[layer];
    l->gdn.effective = NULL;
    if (!attention || (!mixer->attention_stages && mixer->show == NULL)) {
        /* (its scores, masked, scaled scores and weights not made: nothing will show them, or
           the layer's mixer has none) */
        l->scores = l->masked = l->scaled = l->weights = NULL;
        return decoder_check_files(m, err);
    }
    if (run_attention(c, r, layer) != 0)
        return attn_fail(err, ATTN_ENOMEM, "out of memory for the attention of layer %d", layer);
    /* Only a causal run's rows are kept by an edit (decoder_forward_from). */
    job.keep = r->causal ? r->attention_rows : 0;
    if (!mixer->attention_stages) {
        /* The mixer's own per-head stage, where attention's scores would be. */
        l->scores = l->masked = l->scaled = l->weights = NULL;
        if (mixer->show(c, l, n, job.keep, r->attention, (size_t)r->attention_ld,
                        parallel_threads()) != 0)
            return attn_fail(err, ATTN_ENOMEM, "out of memory for the heads of layer %d", layer);
        r->attention_rows = n;
        l->gdn.effective = r->attention;
        return decoder_check_files(m, err);
    }
    for (int a = 0; a < RUN_ATTENTION_STAGES; a++)
        job.stages[a] = r->attention + (size_t)a * (r->attention_floats / RUN_ATTENTION_STAGES);
    if (job.keep < n)
        parallel_for(c->n_head, 2L * (n - job.keep) * n * decoder_layer_head_dim(c, layer),
                     parallel_threads(), layer_heads, &job);
    r->attention_rows = n;
    l = &r->layers[layer];
    l->scores = job.stages[0];
    l->masked = job.stages[1];
    l->scaled = job.stages[2];
    l->weights = job.stages[3];
    return decoder_check_files(m, err);
}
