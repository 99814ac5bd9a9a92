/* compare.c: two trained models over the same text (see compare.h). */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/base/progress.h"
#include "attnscope/families/model/compare.h"
#include "attnscope/families/model/family_model.h"
#include "attnscope/families/model/headmap.h"
#include "attnscope/kernels/parallel.h"

static const char *const side_names[COMPARE_SIDES] = { "first", "second", "difference" };

const char *
compare_side_name(enum compare_side side)
{
    return (unsigned)side < COMPARE_SIDES ? side_names[side] : "?";
}

void
compare_init(struct compare *c, struct pipeline *a, struct pipeline *b)
{
    memset(c, 0, sizeof *c);
    c->a = a;
    c->b = b;
}

void
compare_destroy(struct compare *c)
{
    free(c->diff);
    free(c->changed);
    free(c->kl);
    memset(c, 0, sizeof *c);
}

const struct pipeline *
compare_side_pipeline(const struct compare *c, enum compare_side side)
{
    return side == COMPARE_SECOND ? c->b : c->a;
}

static const char *
name_of(const struct family_model_state *g)
{
    return g->model->name;
}

enum attn_status
compare_check_models(const struct model *ma, const struct model *mb, struct attn_error *err)
{
    const struct decoder_config *ca = &ma->dec.cfg, *cb = &mb->dec.cfg;
    {
        /* The sizes every stage's shape is made of, in the order a reader meets them. */
        const struct {
            const char *what;
            int x, y;
        } sizes[] = {
            { "layers", ca->n_layer, cb->n_layer },
            { "heads", ca->n_head, cb->n_head },
            { "key and value heads", decoder_kv_heads(ca), decoder_kv_heads(cb) },
            { "head size", decoder_head_dim(ca), decoder_head_dim(cb) },
            { "width (d_model)", ca->d_model, cb->d_model },
            { "MLP width", ca->d_mlp, cb->d_mlp },
            { "experts", ca->moe.n_experts, cb->moe.n_experts },
            { "experts a token", ca->moe.n_experts_used, cb->moe.n_experts_used },
            { "expert width", ca->moe.d_expert, cb->moe.d_expert },
            { "outputs (vocabulary or classes)", decoder_outputs(ca), decoder_outputs(cb) },
        };
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
            if (sizes[k].x != sizes[k].y)
                return attn_fail(err, ATTN_EVALUE, "%s: %d in %s, %d in %s: not the same shapes",
                                 sizes[k].what, sizes[k].x, ma->name, sizes[k].y, mb->name);
    }
    return ATTN_OK;
}

enum attn_status
compare_check(const struct pipeline *a, const struct pipeline *b, struct attn_error *err)
{
    const struct family_model_state *ga = pipeline_decoder(a);
    const struct family_model_state *gb = pipeline_decoder(b);

    enum attn_status st;

    if (ga == NULL || gb == NULL)
        return attn_fail(err, ATTN_EVALUE, "only two trained models can be compared");
    st = compare_check_models(ga->model, gb->model, err);
    if (st != ATTN_OK)
        return st;
    if (ga->run.n != gb->run.n)
        return attn_fail(err, ATTN_EVALUE,
                         "the text is %d tokens to %s and %d to %s: their tokenizers differ",
                         ga->run.n, name_of(ga), gb->run.n, name_of(gb));
    for (int i = 0; i < ga->run.n; i++)
        if (ga->ids[i] != gb->ids[i])
            return attn_fail(err, ATTN_EVALUE,
                             "token %d is id %d '%s' to %s and id %d '%s' to %s: their "
                             "tokenizers differ",
                             i, ga->ids[i], a->tokens.text[i], name_of(ga), gb->ids[i],
                             b->tokens.text[i], name_of(gb));
    for (int s = 0; s < STAGE_COUNT; s++) {
        const bool x = pipeline_stage_present(a, (enum pipeline_stage)s);
        const bool y = pipeline_stage_present(b, (enum pipeline_stage)s);
        if (x != y)
            return attn_fail(err, ATTN_EVALUE, "stage %s: %s has it, %s has not",
                             pipeline_stage_name((enum pipeline_stage)s), x ? name_of(ga) : name_of(gb),
                             x ? name_of(gb) : name_of(ga));
    }
    return ATTN_OK;
}

enum attn_status
compare_follow(struct compare *c, struct attn_error *err)
{
    if (c->a->layer < 0 || c->b->layer == c->a->layer)
        return ATTN_OK;
    return pipeline_select_layer(c->b, c->a->layer, err);
}

enum attn_status
compare_stage_view(struct compare *c, enum compare_side side, enum pipeline_stage s, int head,
                   struct pipeline_view *v, struct attn_error *err)
{
    struct pipeline_view vb;
    enum attn_status st;
    size_t need;

    if (!pipeline_stage_present(c->a, s) || !pipeline_stage_present(c->b, s))
        return attn_fail(err, ATTN_EVALUE, "stage %s is not both models'", pipeline_stage_name(s));
    if (side == COMPARE_FIRST) {
        pipeline_stage_view(c->a, s, head, v);
        return ATTN_OK;
    }
    st = compare_follow(c, err);
    if (st != ATTN_OK)
        return st;
    pipeline_stage_view(c->b, s, head, &vb);
    if (side == COMPARE_SECOND) {
        *v = vb;
        return ATTN_OK;
    }
    pipeline_stage_view(c->a, s, head, v);
    if (v->m.rows != vb.m.rows || v->m.cols != vb.m.cols)
        return attn_fail(err, ATTN_EVALUE, "stage %s is %d x %d in one model, %d x %d in the other",
                         pipeline_stage_name(s), v->m.rows, v->m.cols, vb.m.rows, vb.m.cols);
    need = (size_t)v->m.rows * (size_t)v->m.cols;
    if (need > c->diff_cap) {
        float *bigger = realloc(c->diff, need * sizeof *bigger);
        if (bigger == NULL)
            return attn_fail(err, ATTN_ENOMEM, "out of memory for the difference of %s",
                             pipeline_stage_name(s));
        c->diff = bigger;
        c->diff_cap = need;
    }
    for (int i = 0; i < v->m.rows; i++)
        for (int j = 0; j < v->m.cols; j++) {
            const float x = MAT_AT(&v->m, i, j), y = MAT_AT(&vb.m, i, j);
            /* A cell masked in both (-inf) stays masked: inf - inf would be NaN. */
            c->diff[(size_t)i * (size_t)v->m.cols + (size_t)j] =
                isinf(x) && x == y ? x : y - x;
        }
    v->m = matrix_view(c->diff, v->m.rows, v->m.cols);
    return ATTN_OK;
}

/* p log2(p / m), 0 for p = 0. */
static double
js_term(double p, double m)
{
    return p > 0.0 ? p * log2(p / m) : 0.0;
}

/*
 * The Jensen-Shannon divergence in bits of two rows of n weights; with
 * sinks, what each row leaves of 1 (the sink's share) is one more outcome.
 */
static double
js_divergence(const float *p, const float *q, int n, bool sinks)
{
    double d = 0.0, rest_p = 1.0, rest_q = 1.0;

    for (int j = 0; j < n; j++) {
        const double m = 0.5 * ((double)p[j] + (double)q[j]);
        d += 0.5 * (js_term(p[j], m) + js_term(q[j], m));
        rest_p -= p[j];
        rest_q -= q[j];
    }
    if (sinks) {
        rest_p = rest_p > 0.0 ? rest_p : 0.0;
        rest_q = rest_q > 0.0 ? rest_q : 0.0;
        d += 0.5 * (js_term(rest_p, 0.5 * (rest_p + rest_q)) +
                    js_term(rest_q, 0.5 * (rest_p + rest_q)));
    }
    return d;
}

struct changed_job {
    const struct head_map_layer *a, *b; /* the layer's heads in each model */
    int layer, heads;
    bool sinks;
    float *out; /* (layers * heads) */
    bool failed;
};

static void
changed_heads(void *ctx, int h0, int h1)
{
    struct changed_job *j = ctx;
    const int n = j->a->g->run.n;
    const size_t nn = (size_t)n * (size_t)n;
    const size_t sa = head_map_layer_scratch(j->a), sb = head_map_layer_scratch(j->b);
    float *wa = malloc((2 * nn + sa + sb + 1) * sizeof *wa);
    float *wb = wa + nn + sa;

    if (wa == NULL) {
        j->failed = true;
        return;
    }
    for (int h = h0; h < h1; h++) {
        double sum = 0.0;
        (void)head_map_layer_head(j->a, h, wa, wa + nn);
        (void)head_map_layer_head(j->b, h, wb, wb + nn);
        for (int i = 0; i < n; i++)
            sum += js_divergence(wa + (size_t)i * (size_t)n, wb + (size_t)i * (size_t)n, n,
                                 j->sinks && !j->a->deltanet);
        j->out[(size_t)j->layer * (size_t)j->heads + (size_t)h] = (float)(sum / n);
    }
    free(wa);
}

static bool
run_has_sinks(const struct family_model_state *g)
{
    return g->model->dec.cfg.sinks && !g->run.sinks_off;
}

int
compare_heads_changed(struct compare *c, float *out)
{
    const struct family_model_state *ga = pipeline_decoder(c->a);
    const struct family_model_state *gb = pipeline_decoder(c->b);
    const int heads = head_map_heads(c->a);
    const size_t count = (size_t)c->a->layers * (size_t)heads;

    if (ga == NULL || gb == NULL || ga->run.lean || gb->run.lean)
        return -1;
    if (c->changed == NULL || c->changed_a != c->a->generation ||
        c->changed_b != c->b->generation) {
        struct changed_job job = { NULL, NULL, 0, heads, run_has_sinks(ga) || run_has_sinks(gb),
                                   NULL, false };
        job.out = malloc((count + 1) * sizeof *job.out);
        if (job.out == NULL)
            return -1;
        for (size_t e = 0; e < count; e++)
            job.out[e] = NAN; /* (a head one model's layer lacks) */
        for (int l = 0; l < c->a->layers && !job.failed; l++) {
            struct head_map_layer la, lb;
            int both;
            job.layer = l;
            job.failed = progress_stopped(); /* (Esc in the view: made again when next asked) */
            if (job.failed)
                break;
            if (head_map_layer_open(&la, c->a, l) != 0 || head_map_layer_open(&lb, c->b, l) != 0) {
                head_map_layer_close(&la);
                job.failed = true;
                break;
            }
            job.a = &la;
            job.b = &lb;
            both = la.heads < lb.heads ? la.heads : lb.heads;
            if (both > heads)
                both = heads;
            if (la.deltanet == lb.deltanet && both > 0)
                parallel_for(both, 8L * ga->run.n * ga->run.n * c->a->st.shape.head_dim,
                             parallel_threads(), changed_heads, &job);
            head_map_layer_close(&la);
            head_map_layer_close(&lb);
        }
        if (job.failed) {
            free(job.out);
            return -1;
        }
        free(c->changed);
        c->changed = job.out;
        c->changed_a = c->a->generation;
        c->changed_b = c->b->generation;
    }
    memcpy(out, c->changed, count * sizeof *out);
    return 0;
}

int
compare_most_changed(const float *changed, int count, int k, int *top)
{
    int found = 0;

    for (; found < k && found < count; found++) {
        int best = -1;
        for (int e = 0; e < count; e++) {
            bool taken = false;
            for (int t = 0; t < found && !taken; t++)
                taken = top[t] == e;
            if (!taken && (best < 0 || changed[e] > changed[best]))
                best = e;
        }
        top[found] = best;
    }
    return found;
}

/* A row of logits' largest and the log of its sum of exponentials after that (doubles). */
static void
row_normaliser(const float *logits, int v, double *max, double *lse)
{
    double m = -INFINITY, sum = 0.0;

    for (int j = 0; j < v; j++)
        m = logits[j] > m ? logits[j] : m;
    for (int j = 0; j < v; j++)
        sum += exp((double)logits[j] - m);
    *max = m;
    *lse = log(sum);
}

/* Rows of positions in one block of the next tokens' comparison. */
#define KL_BLOCK 8

enum attn_status
compare_next_kl(struct compare *c, float *out, struct attn_error *err)
{
    const struct family_model_state *ga = pipeline_decoder(c->a);
    const struct family_model_state *gb = pipeline_decoder(c->b);
    const int v = decoder_outputs(&ga->model->dec.cfg);
    const int n = ga->run.n;
    const int threads = parallel_threads();
    float *la, *lb, *kl;

    if (c->kl != NULL && c->kl_a == c->a->generation && c->kl_b == c->b->generation) {
        memcpy(out, c->kl, (size_t)n * sizeof *out);
        return ATTN_OK;
    }
    la = malloc(2 * (size_t)KL_BLOCK * (size_t)v * sizeof *la);
    kl = malloc(((size_t)n + 1) * sizeof *kl);
    if (la == NULL || kl == NULL) {
        free(la);
        free(kl);
        return attn_fail(err, ATTN_ENOMEM, "out of memory for the next tokens' divergence");
    }
    lb = la + (size_t)KL_BLOCK * (size_t)v;
    for (int r0 = 0; r0 < n; r0 += KL_BLOCK) {
        const int rows = n - r0 < KL_BLOCK ? n - r0 : KL_BLOCK;
        if (progress_stopped()) { /* (Esc in the view) */
            free(la);
            free(kl);
            return attn_fail(err, ATTN_ESTOPPED, "stopped comparing the next tokens");
        }
        decoder_run_logits(&ga->model->dec, &ga->run, r0, rows, 0, v, la, threads);
        decoder_run_logits(&gb->model->dec, &gb->run, r0, rows, 0, v, lb, threads);
        for (int i = 0; i < rows; i++) {
            const float *x = la + (size_t)i * (size_t)v, *y = lb + (size_t)i * (size_t)v;
            double ma, za, mb, zb, d = 0.0;
            row_normaliser(x, v, &ma, &za);
            row_normaliser(y, v, &mb, &zb);
            for (int j = 0; j < v; j++) {
                const double lpa = (double)x[j] - ma - za, lpb = (double)y[j] - mb - zb;
                d += exp(lpa) * (lpa - lpb);
            }
            kl[r0 + i] = (float)(d > 0.0 ? d : 0.0);
        }
    }
    free(la);
    free(c->kl);
    c->kl = kl;
    c->kl_a = c->a->generation;
    c->kl_b = c->b->generation;
    memcpy(out, kl, (size_t)n * sizeof *out);
    return ATTN_OK;
}

float
compare_second_prob(const struct compare *c, int position, int id)
{
    const struct family_model_state *gb = pipeline_decoder(c->b);
    const int v = decoder_outputs(&gb->model->dec.cfg);
    float *logits;
    double m, z, p;

    if (position < 0 || position >= gb->run.n || id < 0 || id >= v)
        return NAN;
    logits = malloc((size_t)v * sizeof *logits);
    if (logits == NULL)
        return NAN;
    decoder_run_logits(&gb->model->dec, &gb->run, position, 1, 0, v, logits, parallel_threads());
    row_normaliser(logits, v, &m, &z);
    p = exp((double)logits[id] - m - z);
    free(logits);
    return (float)p;
}

enum attn_status
compare_lens_parting(const struct compare *c, int position, struct compare_lens *lens,
                     struct attn_error *err)
{
    const struct family_model_state *ga = pipeline_decoder(c->a);
    const struct family_model_state *gb = pipeline_decoder(c->b);
    const int layers = c->a->layers;
    const int *ids_a = lens->ids[0], *ids_b = lens->ids[1];
    int *layer = &lens->parted;
    enum attn_status st;

    st = decoder_logit_lens(&ga->model->dec, &ga->run, position, 1, lens->ids[0], lens->probs[0],
                            err);
    if (st == ATTN_OK)
        st = decoder_logit_lens(&gb->model->dec, &gb->run, position, 1, lens->ids[1],
                                lens->probs[1], err);
    /* From the last layer back, while the two differ: where they parted for good. */
    *layer = -1;
    for (int l = layers - 1; st == ATTN_OK && l >= 0 && ids_a[l] != ids_b[l]; l--)
        *layer = l;
    return st;
}
