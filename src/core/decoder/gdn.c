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
 * silu(z), out_proj.  The state is made again from the first token on
 * every run (whole): nothing is kept between runs but the block's output.
 */
#include "config.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/decoder/decoder.h"
#include "attnscope/decoder/mixer.h"
#include "attnscope/kernels/parallel.h"

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
};

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

    for (int t = begin; t < end; t++) {
        float *conv = s->gdn.conv + (size_t)t * D;
        for (int ch = 0; ch < D; ch++) {
            float sum = 0.0f;
            for (int i = 0; i < taps; i++) {
                const int src = t - (taps - 1) + i;
                if (src >= 0)
                    sum += w->conv[(size_t)ch * taps + i] * s->gdn.mixed[(size_t)src * D + ch];
            }
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
 * Value heads h0 .. h1: each one's state from the first token on, its read
 * o at every row, then o's gated norm.  S is held (k_dim, v_dim) as
 * Hugging Face's, in the job's states.
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
        memset(S, 0, (size_t)dk * (size_t)dv * sizeof *S);
        for (int t = 0; t < n; t++) {
            const float *q = s->gdn.q + (size_t)t * Kq + (size_t)kh * dk;
            const float *k = s->gdn.k + (size_t)t * Kq + (size_t)kh * dk;
            const float *v = s->gdn.conv + (size_t)t * D + 2 * (size_t)Kq + (size_t)h * dv;
            const float decay = expf(s->gdn.decay[(size_t)t * Hv + h]);
            const float beta = s->gdn.beta[(size_t)t * Hv + h];
            float *o = s->gdn.out + (size_t)t * Vw + (size_t)h * dv;
            for (size_t e = 0; e < (size_t)dk * (size_t)dv; e++)
                S[e] *= decay;
            for (int jv = 0; jv < dv; jv++) {
                float mem = 0.0f, delta;
                for (int i = 0; i < dk; i++)
                    mem += S[(size_t)i * dv + jv] * k[i];
                delta = (v[jv] - mem) * beta;
                for (int i = 0; i < dk; i++)
                    S[(size_t)i * dv + jv] += k[i] * delta;
            }
            for (int jv = 0; jv < dv; jv++) {
                float sum = 0.0f;
                for (int i = 0; i < dk; i++)
                    sum += S[(size_t)i * dv + jv] * q[i];
                o[jv] = sum;
            }
            {
                /* Qwen3_5RMSNormGated: o rsqrt(mean(o^2) + eps), times w, times silu(z). */
                const float *z = s->gdn.z + (size_t)t * Vw + (size_t)h * dv;
                float *y = s->gdn.normed + (size_t)t * Vw + (size_t)h * dv;
                double sq = 0.0;
                float inv;
                for (int jv = 0; jv < dv; jv++)
                    sq += (double)o[jv] * (double)o[jv];
                inv = 1.0f / sqrtf((float)(sq / dv) + c->eps);
                for (int jv = 0; jv < dv; jv++)
                    y[jv] = w->norm[jv] * (o[jv] * inv) * silu(z[jv]);
            }
        }
        S += state;
    }
}

static void
gdn_forward(const struct part_attention_args *a, struct decoder_layer_stages *s, int threads)
{
    const struct decoder_config *c = a->c;
    const struct decoder_gdn_weights *w = &a->b->gdn;
    const int n = a->n, Hv = c->gdn.v_heads;
    const size_t states = (size_t)Hv * (size_t)c->gdn.k_dim * (size_t)c->gdn.v_dim;
    struct gdn_job job = { a, s, malloc(states * sizeof(float)) };

    if (job.states == NULL) { /* (the run's numbers say so: not numbers) */
        for (size_t e = 0; e < (size_t)n * (size_t)c->d_model; e++)
            s->attn[e] = NAN;
        return;
    }

    /* (whole: every row from the first, a->from is 0) */
    decoder_linear_apply(&w->qkv, a->x, n, s->gdn.mixed, threads);
    decoder_linear_apply(&w->z, a->x, n, s->gdn.z, threads);
    decoder_linear_apply(&w->b, a->x, n, s->gdn.beta, threads);
    decoder_linear_apply(&w->a, a->x, n, s->gdn.decay, threads);
    parallel_for(n, 4L * c->gdn.conv * decoder_gdn_conv_width(c), threads, gdn_rows, &job);
    parallel_for(Hv, 4L * n * c->gdn.k_dim * c->gdn.v_dim, threads, gdn_heads, &job);
    free(job.states);
    decoder_linear_apply(&a->b->o, s->gdn.normed, n, s->attn, threads);
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

const struct decoder_mixer decoder_mixer_gdn = {
    "Gated DeltaNet", "a state per value head and the convolution's last inputs", gdn_forward,
    gdn_kept, false, true,
};
