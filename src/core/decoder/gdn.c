/*
 * gdn.c: Gated DeltaNet, Qwen3.5's linear attention, as a mixer (mixer.h).
 * Each value head keeps a state S of k_dim x v_dim that every token first
 * shrinks by its decay, then corrects towards its value along its key (the
 * delta rule), and its output is the state read along its query:
 *
 *   S = e^g S;  S += k (beta (v - S^T k))^T;  o = S^T q
 *
 * The steps are Hugging Face's Qwen3_5GatedDeltaNet in float32, its
 * recurrent form (torch_recurrent_gated_delta_rule; the chunked form it
 * runs on a prompt gives the same numbers to rounding): in_proj_qkv, a
 * causal depthwise convolution through SiLU, q and k L2-normed (eps 1e-6,
 * inside the root), q / sqrt(k_dim), beta = sigmoid(b), g = -exp(A_log)
 * softplus(a + dt_bias), the recurrence, an RMSNorm of o times w times
 * silu(z), out_proj.  Each value head's state, and the convolution's
 * last taps - 1 inputs, are kept between runs (keeps_state): a run whose
 * first new row is the one they have read up to (a token written, an edit
 * of the last tokens after one of the whole) goes on from them, reading
 * neither the prompt nor its projections again; any other run makes them
 * again from the first token.  The two give the same bits.
 */
#include "config.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/decoder/decoder.h"
#include "attnscope/decoder/mixer.h"
#include "attnscope/kernels/deltarule.h"
#include "attnscope/kernels/parallel.h"
#include "decoder_internal.h"

/* torch's softplus (beta 1, threshold 20): x itself above the threshold. */
static float
softplus(float x)
{
    return x > 20.0f ? x : log1pf(expf(x));
}

static float
silu(float x)
{
    return x / (1.0f + expf(-x));
}

/* x * rsqrt(sum(x^2) + eps) over w floats, in place (Hugging Face's l2norm). */
static void
l2norm(float *x, int w, float scale)
{
    float sq = 0.0f, inv;

    for (int i = 0; i < w; i++)
        sq += x[i] * x[i];
    inv = 1.0f / sqrtf(sq + 1e-6f);
    for (int i = 0; i < w; i++)
        x[i] = x[i] * inv * scale;
}

struct gdn_job {
    const struct part_attention_args *a;
    struct decoder_layer_stages *s;
    float *states; /* (v_heads, k_dim, v_dim): each head's state as it goes */
    /* (taps - 1, channels) the projections of the rows from - taps + 1 .. from - 1 (0: none) */
    const float *window;
};

/* The convolution's input at row src of job j: this run's, the kept window's, or none. */
static const float *
mixed_row(const struct gdn_job *j, int src)
{
    const struct decoder_config *c = j->a->c;
    const int D = decoder_gdn_conv_width(c), from = j->a->from;

    if (src >= from)
        return j->s->gdn.mixed + (size_t)src * D;
    if (src < 0)
        return NULL;
    return j->window + (size_t)(src - from + c->gdn.conv - 1) * D;
}

/*
 * Rows begin .. end: the convolution of the projections over the taps
 * before each row (zeros before the text), through SiLU; the queries and
 * keys normed; beta and the decay.
 */
static void
gdn_rows(void *ctx, int begin, int end)
{
    const struct gdn_job *j = ctx;
    const struct decoder_config *c = j->a->c;
    const struct decoder_gdn_weights *w = &j->a->b->gdn;
    const struct decoder_layer_stages *s = j->s;
    const int D = decoder_gdn_conv_width(c), Kq = decoder_gdn_key_width(c);
    const int taps = c->gdn.conv, Hv = c->gdn.v_heads, dk = c->gdn.k_dim;

    for (int t = begin + j->a->from; t < end + j->a->from; t++) {
        float *conv = s->gdn.conv + (size_t)t * D;
        const float *in[DECODER_GDN_CONV_MAX];
        for (int i = 0; i < taps; i++)
            in[i] = mixed_row(j, t - (taps - 1) + i);
        for (int ch = 0; ch < D; ch++) {
            float sum = 0.0f;
            for (int i = 0; i < taps; i++)
                if (in[i] != NULL)
                    sum += w->conv[(size_t)ch * taps + i] * in[i][ch];
            conv[ch] = silu(sum);
        }
        memcpy(s->gdn.q + (size_t)t * Kq, conv, (size_t)Kq * sizeof *conv);
        memcpy(s->gdn.k + (size_t)t * Kq, conv + Kq, (size_t)Kq * sizeof *conv);
        for (int h = 0; h < c->gdn.k_heads; h++) {
            l2norm(s->gdn.q + (size_t)t * Kq + (size_t)h * dk, dk, 1.0f);
            /* (the recurrent form's q / sqrt(d), after the norm, as its own step) */
            for (int i = 0; i < dk; i++)
                s->gdn.q[(size_t)t * Kq + (size_t)h * dk + i] /= sqrtf((float)dk);
            l2norm(s->gdn.k + (size_t)t * Kq + (size_t)h * dk, dk, 1.0f);
        }
        for (int h = 0; h < Hv; h++) {
            const float b = s->gdn.beta[(size_t)t * Hv + h]; /* (b's projection, made in place) */
            const float a = s->gdn.decay[(size_t)t * Hv + h];
            s->gdn.beta[(size_t)t * Hv + h] = 1.0f / (1.0f + expf(-b));
            const float A = w->a_negated ? w->a_log[h] : -expf(w->a_log[h]);
            s->gdn.decay[(size_t)t * Hv + h] = A * softplus(a + w->dt_bias[h]);
        }
    }
}

/*
 * Value heads h0 .. h1: each one's state from the kept one (zeros at row
 * 0) over the rows from a->from on, its read o at each, then o's gated
 * norm.  S is held (k_dim, v_dim) as Hugging Face's, in the job's states.
 */
static void
gdn_heads(void *ctx, int h0, int h1)
{
    const struct gdn_job *j = ctx;
    const struct decoder_config *c = j->a->c;
    const struct decoder_gdn_weights *w = &j->a->b->gdn;
    const struct decoder_layer_stages *s = j->s;
    const int n = j->a->n, Hv = c->gdn.v_heads, dk = c->gdn.k_dim, dv = c->gdn.v_dim;
    const int D = decoder_gdn_conv_width(c), Kq = decoder_gdn_key_width(c);
    const int Vw = decoder_gdn_value_width(c);
    const size_t state = (size_t)dk * (size_t)dv;
    float *S = j->states + (size_t)h0 * state;

    for (int h = h0; h < h1; h++) {
        const int kh = decoder_gdn_key_head(c, h);
        if (j->a->from == 0)
            memset(S, 0, (size_t)dk * (size_t)dv * sizeof *S);
        for (int t = j->a->from; t < n; t++) {
            const float *q = s->gdn.q + (size_t)t * Kq + (size_t)kh * dk;
            const float *k = s->gdn.k + (size_t)t * Kq + (size_t)kh * dk;
            const float *v = s->gdn.conv + (size_t)t * D + 2 * (size_t)Kq + (size_t)h * dv;
            const float *z = s->gdn.z + (size_t)t * Vw + (size_t)h * dv;
            float *o = s->gdn.out + (size_t)t * Vw + (size_t)h * dv;
            float *y = s->gdn.normed + (size_t)t * Vw + (size_t)h * dv;
            double sq = 0.0;
            float inv;

            /* (y holds delta until the norm writes it) */
            deltarule_step(S, o, y, q, k, v, expf(s->gdn.decay[(size_t)t * Hv + h]),
                           s->gdn.beta[(size_t)t * Hv + h], dk, dv);
            /* (an ablated head: its read zeroed, its state kept going) */
            if (j->a->ablated != NULL && j->a->ablated[h])
                memset(o, 0, (size_t)dv * sizeof *o);
            /* Qwen3_5RMSNormGated: o rsqrt(mean(o^2) + eps), times w, times silu(z). */
            for (int jv = 0; jv < dv; jv++)
                sq += (double)o[jv] * (double)o[jv];
            inv = 1.0f / sqrtf((float)(sq / dv) + c->eps);
            for (int jv = 0; jv < dv; jv++)
                y[jv] = w->norm[jv] * (o[jv] * inv) * silu(z[jv]);
        }
        S += state;
    }
}

/*
 * The convolution's last taps - 1 inputs after the run's n rows, into the
 * kept window in place: from the rows this run made, or from the window's
 * own later rows (row i reads row i + n - from, never one already written).
 */
static void
keep_window(const struct gdn_job *j, float *window)
{
    const struct decoder_config *c = j->a->c;
    const int D = decoder_gdn_conv_width(c), taps = c->gdn.conv, n = j->a->n;

    for (int i = 0; i < taps - 1; i++) {
        const float *row = mixed_row(j, n - (taps - 1) + i);
        if (row != NULL)
            memmove(window + (size_t)i * D, row, (size_t)D * sizeof *row);
        else
            memset(window + (size_t)i * D, 0, (size_t)D * sizeof *window);
    }
}

static void
gdn_forward(const struct part_attention_args *a, struct decoder_layer_stages *s, int threads)
{
    const struct decoder_config *c = a->c;
    const struct decoder_gdn_weights *w = &a->b->gdn;
    const int n = a->n, Hv = c->gdn.v_heads, from = a->from, C = c->d_model;
    const int D = decoder_gdn_conv_width(c), Vw = decoder_gdn_value_width(c);
    const size_t states = (size_t)Hv * (size_t)c->gdn.k_dim * (size_t)c->gdn.v_dim;

    if (a->kept == NULL || a->kept_rows == NULL) {
        /* (every run carves its state, keeps_state: without one the numbers say so) */
        for (size_t e = (size_t)from * (size_t)C; e < (size_t)n * (size_t)C; e++)
            s->attn[e] = NAN;
        return;
    }
    struct gdn_job job = { a, s, a->kept, a->kept + states };
    *a->kept_rows = -1; /* (until the state has read every row) */
    /* The rows from `from` on: the state and the window hold what the rows before left. */
    decoder_linear_apply(&w->qkv, a->x + (size_t)from * C, n - from, s->gdn.mixed + (size_t)from * D,
                         threads);
    decoder_linear_apply(&w->z, a->x + (size_t)from * C, n - from, s->gdn.z + (size_t)from * Vw,
                         threads);
    decoder_linear_apply(&w->b, a->x + (size_t)from * C, n - from, s->gdn.beta + (size_t)from * Hv,
                         threads);
    decoder_linear_apply(&w->a, a->x + (size_t)from * C, n - from,
                         s->gdn.decay + (size_t)from * Hv, threads);
    parallel_for(n - from, 4L * c->gdn.conv * D, threads, gdn_rows, &job);
    parallel_for(Hv, 4L * (n - from) * c->gdn.k_dim * c->gdn.v_dim, threads, gdn_heads, &job);
    keep_window(&job, a->kept + states);
    decoder_linear_apply(&a->b->o, s->gdn.normed + (size_t)from * Vw, n - from,
                         s->attn + (size_t)from * C, threads);
    *a->kept_rows = n;
}

/* A state per value head and the convolution's last inputs: the same at any length. */
static size_t
gdn_kept(const struct decoder_config *c, int layer, int n)
{
    (void)layer;
    (void)n;
    return (size_t)c->gdn.v_heads * (size_t)c->gdn.k_dim * (size_t)c->gdn.v_dim +
           (size_t)(c->gdn.conv - 1) * (size_t)decoder_gdn_conv_width(c);
}

/* ------------------------------------------------- the effective attention */

/*
 * x . y over w floats in 8 partial sums added in a fixed order: the same
 * bits whether or not the compiler puts the lanes in one register.
 */
static float
lane_dot(const float *x, const float *y, int w)
{
    float lane[8] = { 0 };
    int i = 0;

    for (; i + 8 <= w; i += 8)
        for (int e = 0; e < 8; e++)
            lane[e] += x[i + e] * y[i + e];
    for (; i < w; i++)
        lane[i & 7] += x[i] * y[i];
    return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
}

void
decoder_gdn_effective_head(const struct decoder_config *c, const struct decoder_gdn_rows *rows,
                           int h, int n, int keep, float *out, size_t ld, float *walk)
{
    const int Hv = c->gdn.v_heads, dk = c->gdn.k_dim, Kq = decoder_gdn_key_width(c);
    const int kh = decoder_gdn_key_head(c, h);

    /*
     * Row t: M[t, s] = beta_s k_s . r_s, r_t = q_t walked back one token at
     * a time, r_{s-1} = e^(g_s) (r_s - beta_s k_s (k_s . r_s)): the decay
     * and the delta correction of token s on the way from s to t.  The rows
     * kept (before keep) get the new columns, keep .. n - 1: all after them.
     */
    for (int t = 0; t < keep; t++)
        memset(out + (size_t)t * ld + keep, 0, (size_t)(n - keep) * sizeof *out);
    for (int t = keep; t < n; t++) {
        float *row = out + (size_t)t * ld;
        memcpy(walk, rows->q + (size_t)t * Kq + (size_t)kh * dk, (size_t)dk * sizeof *walk);
        for (int src = t; src >= 0; src--) {
            const float *k = rows->k + (size_t)src * Kq + (size_t)kh * dk;
            const float beta = rows->beta[(size_t)src * Hv + h];
            const float kr = lane_dot(k, walk, dk);
            row[src] = beta * kr;
            if (src > 0) {
                const float e = expf(rows->decay[(size_t)src * Hv + h]);
                const float bkr = beta * kr;
                for (int i = 0; i < dk; i++)
                    walk[i] = e * (walk[i] - bkr * k[i]);
            }
        }
        for (int src = t + 1; src < n; src++)
            row[src] = 0.0f;
    }
}

struct effective_job {
    const struct decoder_config *c;
    struct decoder_gdn_rows rows;
    int n, keep;
    float *out;
    size_t ld;
    float *walk; /* (v_heads, k_dim): each head's walk */
};

static void
effective_heads(void *ctx, int h0, int h1)
{
    const struct effective_job *j = ctx;

    for (int h = h0; h < h1; h++)
        decoder_gdn_effective_head(j->c, &j->rows, h, j->n, j->keep,
                                   j->out + (size_t)h * j->ld * j->ld, j->ld,
                                   j->walk + (size_t)h * j->c->gdn.k_dim);
}

static int
gdn_heads_count(const struct decoder_config *c)
{
    return c->gdn.v_heads;
}

static int
gdn_show(const struct decoder_config *c, const struct decoder_layer_stages *l, int n, int keep,
         float *out, size_t ld, int threads)
{
    struct effective_job job = { c, { l->gdn.q, l->gdn.k, l->gdn.beta, l->gdn.decay }, n, keep,
                                 out, ld, NULL };

    if (keep >= n)
        return 0;
    job.walk = malloc((size_t)c->gdn.v_heads * (size_t)c->gdn.k_dim * sizeof *job.walk);
    if (job.walk == NULL)
        return -1;
    parallel_for(c->gdn.v_heads, 2L * (n - keep) * n * c->gdn.k_dim, threads, effective_heads,
                 &job);
    free(job.walk);
    return 0;
}

int
decoder_gdn_layer_rows(const struct decoder_model *m, const struct decoder_run *r, int layer,
                       float **made, struct decoder_gdn_rows *rows)
{
    const struct decoder_config *c = &m->cfg;
    const struct decoder_block *b = &m->blocks[layer];
    const int n = r->n, threads = parallel_threads();
    const size_t C = (size_t)c->d_model, D = (size_t)decoder_gdn_conv_width(c);
    const size_t Kq = (size_t)decoder_gdn_key_width(c), Hv = (size_t)c->gdn.v_heads;
    struct decoder_layer_stages s;
    struct part_attention_args args;
    struct gdn_job job;
    float *x;

    *made = NULL;
    if (layer == r->shown) {
        const struct decoder_layer_stages *l = &r->layers[layer];
        *rows = (struct decoder_gdn_rows){ l->gdn.q, l->gdn.k, l->gdn.beta, l->gdn.decay };
        return 0;
    }
    x = malloc((size_t)n * (C + 2 * D + 2 * Kq + 2 * Hv) * sizeof *x + 1);
    if (x == NULL)
        return -1;
    memset(&s, 0, sizeof s);
    s.gdn.mixed = x + (size_t)n * C;
    s.gdn.conv = s.gdn.mixed + (size_t)n * D;
    s.gdn.q = s.gdn.conv + (size_t)n * D;
    s.gdn.k = s.gdn.q + (size_t)n * Kq;
    s.gdn.beta = s.gdn.k + (size_t)n * Kq;
    s.gdn.decay = s.gdn.beta + (size_t)n * Hv;
    /* The forward's own steps up to beta and the decay, from row 0 (no state needed). */
    part_norm(c, &b->norm1, decoder_layer_input(r, layer), n, x, threads);
    decoder_linear_apply(&b->gdn.qkv, x, n, s.gdn.mixed, threads);
    decoder_linear_apply(&b->gdn.b, x, n, s.gdn.beta, threads);
    decoder_linear_apply(&b->gdn.a, x, n, s.gdn.decay, threads);
    args = (struct part_attention_args){ .m = m, .c = c, .b = b, .n = n };
    job = (struct gdn_job){ &args, &s, NULL, NULL };
    parallel_for(n, 4L * c->gdn.conv * (long)D, threads, gdn_rows, &job);
    *made = x;
    *rows = (struct decoder_gdn_rows){ s.gdn.q, s.gdn.k, s.gdn.beta, s.gdn.decay };
    return 0;
}

int
decoder_gdn_effective_cell(const struct decoder_config *c, const struct decoder_gdn_rows *rows,
                           int h, int t, int s, double *corrections, struct decoder_gdn_cell *cell)
{
    const int Hv = c->gdn.v_heads, dk = c->gdn.k_dim, Kq = decoder_gdn_key_width(c);
    const int kh = decoder_gdn_key_head(c, h);
    const float *q = rows->q + (size_t)t * Kq + (size_t)kh * dk;
    const float *ks = rows->k + (size_t)s * Kq + (size_t)kh * dk;
    double *u, g = 0.0, ksq = 0.0, sum = 0.0;

    memset(cell, 0, sizeof *cell);
    if (s > t || s < 0)
        return 0;
    u = malloc((size_t)dk * sizeof *u);
    if (u == NULL)
        return -1;
    cell->beta = rows->beta[(size_t)s * Hv + h];
    for (int i = 0; i < dk; i++) {
        u[i] = q[i];
        ksq += (double)ks[i] * q[i];
    }
    cell->kq = ksq;
    cell->plain_undecayed = cell->beta * ksq;
    /* u: the walk without its decays; token r's correction moves beta_s k_s . u by c_r. */
    for (int r = t; r > s; r--) {
        const float *kr = rows->k + (size_t)r * Kq + (size_t)kh * dk;
        const double br = rows->beta[(size_t)r * Hv + h];
        double kru = 0.0, ksr = 0.0;
        for (int i = 0; i < dk; i++) {
            kru += (double)kr[i] * u[i];
            ksr += (double)ks[i] * kr[i];
        }
        const double cr = -cell->beta * br * kru * ksr;
        if (corrections != NULL)
            corrections[t - r] = cr;
        sum += cr;
        for (int i = 0; i < dk; i++)
            u[i] -= br * kr[i] * kru;
        g += rows->decay[(size_t)r * Hv + h];
    }
    free(u);
    cell->between = t - s;
    cell->log_decay = g;
    cell->decay = exp(g);
    cell->corrected = sum;
    cell->value = cell->decay * (cell->plain_undecayed + sum);
    return 0;
}

const struct decoder_mixer decoder_mixer_gdn = {
    "Gated DeltaNet", "a state per value head and the convolution's last inputs", gdn_forward,
    gdn_kept, false, false, true, gdn_heads_count, gdn_show,
};
