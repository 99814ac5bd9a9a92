/* headmap.c: one number per head of a trained model (see headmap.h). */
#include "config.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/families/model/family_model.h"
#include "attnscope/decoder/mixer.h"
#include "attnscope/families/model/headmap.h"
#include "attnscope/kernels/parallel.h"

static const char *const names[] = {
#define HEAD_MEASURE_NAME(e, name, desc) [e] = name,
    HEAD_MEASURE_LIST(HEAD_MEASURE_NAME)
#undef HEAD_MEASURE_NAME
};

static const char *const descriptions[] = {
#define HEAD_MEASURE_DESC(e, name, desc) [e] = desc,
    HEAD_MEASURE_LIST(HEAD_MEASURE_DESC)
#undef HEAD_MEASURE_DESC
};

const char *
head_measure_name(enum head_measure m)
{
    return (unsigned)m < MEASURE_COUNT ? names[m] : "?";
}

const char *
head_measure_description(enum head_measure m)
{
    return (unsigned)m < MEASURE_COUNT ? descriptions[m] : "?";
}

int
head_measure_parse(const char *name, enum head_measure *m)
{
    for (int k = 0; k < MEASURE_COUNT; k++)
        if (strcmp(names[k], name) == 0) {
            *m = (enum head_measure)k;
            return 0;
        }
    return -1;
}

/* One head's measure from its (n, n) weights w and the token ids. */
/* Whether some layer of c has a mixer with heads of its own (Gated DeltaNet's). */
static bool
own_heads(const struct decoder_config *c)
{
    for (int l = 0; c != NULL && l < c->n_layer; l++)
        if (decoder_mixer_of(c, l)->heads != NULL)
            return true;
    return false;
}

bool
head_measure_present(const struct pipeline *p, enum head_measure m)
{
    if (m == MEASURE_SINK)
        return p->decoder != NULL && p->decoder->sinks;
    if (m == MEASURE_REACH || m == MEASURE_MEMORY)
        return own_heads(p->decoder);
    return true;
}

int
head_map_layer_heads(const struct pipeline *p, int layer)
{
    const struct decoder_mixer *m;

    if (p->decoder == NULL)
        return p->st.shape.heads;
    m = decoder_mixer_of(p->decoder, layer);
    return m->heads != NULL ? m->heads(p->decoder) : m->attention_stages ? p->decoder->n_head : 0;
}

int
head_map_heads(const struct pipeline *p)
{
    int most = p->st.shape.heads;

    for (int l = 0; p->decoder != NULL && l < p->layers; l++)
        if (head_map_layer_heads(p, l) > most)
            most = head_map_layer_heads(p, l);
    return most;
}

int
head_map_layer_open(struct head_map_layer *hl, const struct pipeline *p, int layer)
{
    const struct family_model_state *g = pipeline_decoder(p);
    const struct decoder_config *c = &g->model->dec.cfg;

    memset(hl, 0, sizeof *hl);
    hl->g = g;
    hl->layer = layer;
    hl->heads = head_map_layer_heads(p, layer);
    hl->deltanet = decoder_mixer_of(c, layer) == &decoder_mixer_gdn;
    if (hl->deltanet)
        return decoder_gdn_layer_rows(&g->model->dec, &g->run, layer, &hl->made, &hl->rows);
    if (hl->heads > 0) {
        const size_t nc = decoder_queries_floats(c, g->run.n);
        hl->q = malloc((2 * nc + 1) * sizeof *hl->q);
        if (hl->q == NULL)
            return -1;
        decoder_layer_queries(&g->model->dec, &g->run, layer, hl->q, hl->q + nc);
    }
    return 0;
}

size_t
head_map_layer_scratch(const struct head_map_layer *hl)
{
    const size_t n = (size_t)hl->g->run.n, dk = (size_t)hl->g->model->dec.cfg.gdn.k_dim;
    const size_t weights = n * n + 2 * n;

    return weights > dk ? weights : dk;
}

int
head_map_layer_head(const struct head_map_layer *hl, int h, float *w, float *scratch)
{
    const int n = hl->g->run.n;

    if (h < 0 || h >= hl->heads)
        return -1;
    if (!hl->deltanet) {
        decoder_head_weights(&hl->g->model->dec, &hl->g->run, hl->layer, h, hl->q, w, scratch);
        return 0;
    }
    decoder_gdn_effective_head(&hl->g->model->dec.cfg, &hl->rows, h, n, 0, w, (size_t)n, scratch);
    /* Each query's shares of what it reads: |M| over its row's sum of |M|. */
    for (int i = 0; i < n; i++) {
        float *row = w + (size_t)i * (size_t)n;
        double sum = 0.0;
        for (int j = 0; j < n; j++)
            sum += fabs((double)row[j]);
        for (int j = 0; j < n; j++)
            row[j] = sum > 0.0 ? (float)(fabs((double)row[j]) / sum) : 0.0f;
    }
    return 0;
}

void
head_map_layer_close(struct head_map_layer *hl)
{
    free(hl->q);
    free(hl->made);
    memset(hl, 0, sizeof *hl);
}

/* A DeltaNet head's half-life in tokens: ln 2 over the mean of -g (its log-decay). */
static float
half_life(const struct head_map_layer *hl, int h)
{
    const int n = hl->g->run.n, Hv = hl->g->model->dec.cfg.gdn.v_heads;
    double sum = 0.0;

    if (!hl->deltanet || n == 0)
        return NAN;
    for (int t = 0; t < n; t++)
        sum -= (double)hl->rows.decay[(size_t)t * Hv + h];
    return sum > 0.0 ? (float)(log(2.0) / (sum / n)) : INFINITY;
}

static float
measure(enum head_measure m, const float *w, const int *ids, int n, bool sinks)
{
    double sum = 0.0;
    int rows = 0;

    for (int i = 0; i < n; i++) {
        const float *row = w + (size_t)i * (size_t)n;
        double v = 0.0;
        bool counted = true;
        switch (m) {
        case MEASURE_ENTROPY:
            for (int j = 0; j < n; j++)
                if (row[j] > 0.0f)
                    v -= (double)row[j] * log((double)row[j]);
            break;
        case MEASURE_PREVIOUS:
            counted = i > 0;
            v = counted ? (double)row[i - 1] : 0.0;
            break;
        case MEASURE_FIRST:
            counted = i > 0;
            v = (double)row[0];
            break;
        case MEASURE_SELF:
            counted = i > 0;
            v = (double)row[i];
            break;
        case MEASURE_INDUCTION:
            /* Keys j that follow an earlier occurrence of token i: ids[j - 1] == ids[i]. */
            counted = false;
            for (int j = 1; j < i; j++)
                if (ids[j - 1] == ids[i]) {
                    v += (double)row[j];
                    counted = true;
                }
            break;
        case MEASURE_REACH:
            counted = i > 0;
            for (int j = 0; j < i; j++)
                v += (double)row[j] * (double)(i - j);
            break;
        case MEASURE_MEMORY: /* (a head's decay, not its weights: half_life) */
            return NAN;
        case MEASURE_SINK:
            /* what the row's weights leave of 1: the sink's part (none without sinks) */
            v = 1.0;
            for (int j = 0; j < n; j++)
                v -= (double)row[j];
            v = sinks ? v : 0.0;
            break;
        case MEASURE_COUNT:
            return NAN;
        }
        if (counted) {
            sum += v;
            rows++;
        }
    }
    return rows > 0 ? (float)(sum / rows) : NAN;
}

/* Every measure of heads h0..h1 of one layer, each head's map weights made again. */
struct measure_job {
    const struct head_map_layer *hl;
    int layer, heads;
    float *out; /* (MEASURE_COUNT, layers * heads) */
    size_t per_measure;
    bool failed;
};

static void
measure_heads(void *ctx, int h0, int h1)
{
    struct measure_job *j = ctx;
    const struct family_model_state *g = j->hl->g;
    const int n = g->run.n;
    const size_t nn = (size_t)n * (size_t)n;
    float *w = malloc((nn + head_map_layer_scratch(j->hl) + 1) * sizeof *w);

    if (w == NULL) {
        j->failed = true;
        return;
    }
    for (int h = h0; h < h1; h++) {
        float *at = j->out + (size_t)(j->layer * j->heads + h);
        (void)head_map_layer_head(j->hl, h, w, w + nn);
        for (int k = 0; k < MEASURE_COUNT; k++)
            at[(size_t)k * j->per_measure] =
                k == MEASURE_MEMORY
                    ? half_life(j->hl, h)
                    : measure((enum head_measure)k, w, g->ids, n,
                              g->model->dec.cfg.sinks && !g->run.sinks_off && !j->hl->deltanet);
        if (j->hl->deltanet) /* (no sink: what a DeltaNet head leaves is not given to one) */
            at[(size_t)MEASURE_SINK * j->per_measure] = NAN;
    }
    free(w);
}

int
head_measures(const struct pipeline *p, enum head_measure m, float *out)
{
    const struct family_model_state *shown = pipeline_decoder(p);
    /*
     * The measures are made once per pipeline, when first asked for, and
     * kept in its state: a cache, which is why a const pipeline's state is
     * written (the pipeline's family_state is the same object).
     */
    struct family_model_state *g = shown != NULL ? p->family_state : NULL;
    const int heads = head_map_heads(p);
    const size_t per_measure = (size_t)p->layers * (size_t)heads;

    if (g == NULL || g->run.lean) /* (a lean run kept no layer to measure) */
        return -1;
    if (g->measures == NULL) {
        struct measure_job job = { NULL, 0, heads, NULL, per_measure, false };
        job.out = malloc((MEASURE_COUNT * per_measure + 1) * sizeof *job.out);
        if (job.out == NULL)
            return -1;
        for (size_t e = 0; e < MEASURE_COUNT * per_measure; e++)
            job.out[e] = NAN; /* (a head a layer lacks stays nan) */
        for (int l = 0; l < p->layers && !job.failed; l++) {
            struct head_map_layer hl;
            job.layer = l;
            if (head_map_layer_open(&hl, p, l) != 0) {
                job.failed = true;
                break;
            }
            job.hl = &hl;
            if (hl.heads > 0)
                parallel_for(hl.heads, 4L * g->run.n * g->run.n * p->st.shape.head_dim,
                             parallel_threads(), measure_heads, &job);
            head_map_layer_close(&hl);
        }
        if (job.failed) {
            free(job.out);
            return -1;
        }
        g->measures = job.out;
    }
    memcpy(out, g->measures + (size_t)m * per_measure, per_measure * sizeof *out);
    return 0;
}
