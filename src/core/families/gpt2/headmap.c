/* headmap.c: one number per head of a trained model (see headmap.h). */
#include "config.h"

#include <math.h>
#include <string.h>

#include "attnscope/families/gpt2/family_gpt2.h"
#include "attnscope/families/gpt2/headmap.h"

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
static float
measure(enum head_measure m, const float *w, const int *ids, int n)
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

int
head_measures(const struct pipeline *p, enum head_measure m, float *out)
{
    const struct gpt2_state *g = pipeline_gpt2(p);
    const int heads = p->st.shape.heads;
    const int n = p->st.nq;

    if (g == NULL)
        return -1;
    for (int l = 0; l < p->layers; l++)
        for (int h = 0; h < heads; h++)
            out[l * heads + h] =
                measure(m, g->run.layers[l].weights + (size_t)h * (size_t)n * (size_t)n, g->ids, n);
    return 0;
}
