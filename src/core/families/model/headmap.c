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
bool
head_measure_present(const struct pipeline *p, enum head_measure m)
{
    return m != MEASURE_SINK || (p->decoder != NULL && p->decoder->sinks);
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

/* Every measure of heads h0..h1 of one layer, each head's weights made again (decoder.h). */
struct measure_job {
    const struct family_model_state *g;
    int layer, heads;
    const float *q; /* (n, C) the layer's queries */
    float *out; /* (MEASURE_COUNT, layers * heads) */
    size_t per_measure;
    bool failed;
};

static void
measure_heads(void *ctx, int h0, int h1)
{
    struct measure_job *j = ctx;
    const int n = j->g->run.n;
    const size_t nn = (size_t)n * (size_t)n;
    float *w = malloc((2 * nn + 2 * (size_t)n) * sizeof *w);

    if (w == NULL) {
        j->failed = true;
        return;
    }
    for (int h = h0; h < h1; h++) {
        decoder_head_weights(&j->g->model->dec, &j->g->run, j->layer, h, j->q, w, w + nn);
        for (int k = 0; k < MEASURE_COUNT; k++)
            j->out[(size_t)k * j->per_measure + (size_t)(j->layer * j->heads + h)] =
                measure((enum head_measure)k, w, j->g->ids, n,
                        j->g->model->dec.cfg.sinks && !j->g->run.sinks_off);
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
    const int heads = p->st.shape.heads;
    const size_t per_measure = (size_t)p->layers * (size_t)heads;

    if (g == NULL || g->run.lean) /* (a lean run kept no layer to measure) */
        return -1;
    if (g->measures == NULL) {
        const size_t nc = decoder_queries_floats(&g->model->dec.cfg, g->run.n);
        struct measure_job job = { g, 0, heads, NULL, NULL, per_measure, false };
        float *q = malloc((2 * nc + 1) * sizeof *q);
        job.out = malloc((MEASURE_COUNT * per_measure + 1) * sizeof *job.out);
        job.q = q;
        if (job.out == NULL || q == NULL) {
            free(job.out);
            free(q);
            return -1;
        }
        for (int l = 0; l < p->layers && !job.failed; l++) {
            job.layer = l;
            if (!decoder_mixer_of(&g->model->dec.cfg, l)->attention_stages) {
                /* (a layer whose mixer has no softmax weights has none to measure: nan) */
                for (int k = 0; k < MEASURE_COUNT; k++)
                    for (int h = 0; h < heads; h++)
                        job.out[(size_t)k * per_measure + (size_t)(l * heads + h)] = NAN;
                continue;
            }
            decoder_layer_queries(&g->model->dec, &g->run, l, q, q + nc);
            parallel_for(heads, 4L * g->run.n * g->run.n * p->st.shape.head_dim,
                         parallel_threads(), measure_heads, &job);
        }
        free(q);
        if (job.failed) {
            free(job.out);
            return -1;
        }
        g->measures = job.out;
    }
    memcpy(out, g->measures + (size_t)m * per_measure, per_measure * sizeof *out);
    return 0;
}
