/*
 * attention.h: the attention pipeline, every stage kept.
 *
 * struct attention_stages holds one named buffer per stage, all carved out of
 * one allocation (sized once by attention_stages_create).  The forward pass
 * fills them in order:
 *
 *   queries, keys, values   inputs projected (or the inputs themselves)
 *   scores                  Q_h K_h^T, per head
 *   masked                  scores with -inf where the mask forbids
 *   scaled                  masked / divisor (sqrt(d_k) * T, or T unscaled)
 *   weights                 row softmax of scaled (max-subtracted)
 *   dropped                 dropout of weights in training mode, else a copy
 *   averaged                the heads' dropped weights averaged (nn-mha only)
 *   context                 dropped_h V_h, heads side by side
 *   output                  out_proj(context) for mha and notes, else a copy of context
 *   output_dropped          dropout(output) for notes (whose dropout acts there), else output
 *
 * Shapes: nq query tokens, nk key tokens (equal unless Q, K and V are given
 * directly), H heads of d_k = head_dim columns each.
 */
#ifndef ATTNSCOPE_ATTENTION_H
#define ATTNSCOPE_ATTENTION_H

#include <stdbool.h>
#include <stddef.h>

#include "attnscope/attention/attention_config.h"
#include "attnscope/kernels/matrix.h"
#include "attnscope/attention/params.h"
#include "attnscope/kernels/rng.h"
#include "attnscope/base/status.h"

/* The stage buffers of one configuration may not need more than this. */
#define ATTN_MAX_STAGE_BYTES ((size_t)2 << 30)

struct attention_stages {
    struct attention_shape shape;
    int nq;                  /* query tokens: rows of every stage */
    int nk;                  /* key tokens: columns of the per-head stages */
    float divisor;           /* scaled = masked / divisor, in float as PyTorch divides */
    bool dropout_on;         /* draw and keep hold the dropout decisions */
    float dropout_scale;     /* fl(1 / fl(1 - p)): what kept weights are multiplied by */

    struct matrix queries;   /* (nq, d_qkv) all heads side by side */
    struct matrix keys;      /* (nk, d_qkv) */
    struct matrix values;    /* (nk, d_qkv) */
    int ld;                  /* floats from a row of a per-head stage to the next (>= nk) */
    size_t head_floats;      /* floats from one head's (nq, nk) stage to the next's */
    float *scores;           /* (H, nq, nk), each head's rows ld floats apart */
    float *masked;           /* (H, nq, nk) */
    float *scaled;           /* (H, nq, nk) */
    float *weights;          /* (H, nq, nk) */
    float *dropped;          /* (H, nq, nk) */
    float *draw;             /* the uniform number behind each keep/drop, or NULL: (H, nq, nk),
                                or (nq, d_output) when dropout acts on the output */
    unsigned char *keep;     /* 1 kept, 0 dropped, or NULL; shaped as draw */
    struct matrix averaged;  /* (nq, nk) sum_h dropped_h / H, or empty */
    struct matrix context;   /* (nq, d_qkv) */
    struct matrix output;    /* (nq, d_output) */
    struct matrix output_dropped; /* (nq, d_output) */

    void *arena;
    size_t arena_bytes;
};

/*
 * Refuses a --dropout-pass whose earlier forward calls draw more than
 * ATTN_MAX_DROPOUT_SKIP numbers for nq x nk weights in s's heads (skipping
 * them is linear in their count), naming the largest pass that fits.
 */
enum attn_status attention_dropout_check(const struct attention_config *cfg,
                                         const struct attention_shape *s, int nq, int nk,
                                         struct attn_error *err);

/* The bytes attention_stages_create would allocate, for limits and reports. */
size_t attention_stages_bytes(const struct attention_config *cfg, int d_in, int nq, int nk);

/* Sizes and allocates the stage buffers; refuses past ATTN_MAX_STAGE_BYTES. */
enum attn_status attention_stages_create(struct attention_stages *st,
                                         const struct attention_config *cfg, int d_in,
                                         int nq, int nk, struct attn_error *err);
void attention_stages_destroy(struct attention_stages *st);

/* One head's view of a per-head stage buffer: (nq, nk). */
struct matrix attention_head(const struct attention_stages *st, const float *stage, int head);

/*
 * The keys query i may see, first to end - 1, out of nk: every mask is a
 * range per row (no mask: all keys; causal: keys 0 to i), which the softmax
 * and the context products use to skip what is hidden.
 */
void attention_mask_range(const struct attention_config *cfg, int i, int nk, int *first, int *end);

/* True when the mask forbids query i from seeing key j. */
bool attention_masked(const struct attention_config *cfg, int i, int j);

/*
 * Q from q_in (nq, d_in), K and V from kv_in (nk, d_in; the same matrix
 * unless attending across sentences) and the parameters: x W^T + b for
 * nn.Linear, x W for SelfAttention_v1, the inputs themselves for simple.
 */
void attention_project(struct attention_stages *st, const struct attention_config *cfg,
                       const struct matrix *q_in, const struct matrix *kv_in,
                       const struct attention_params *ps);

/*
 * Every stage after the projections, from the queries, keys and values
 * already in st.  r is the generator as it stands after the parameters were
 * drawn; dropout draws from it (after cfg's reseed and skipped passes).
 */
void attention_attend(struct attention_stages *st, const struct attention_config *cfg,
                      const struct attention_params *ps, struct rng *r);

/* Row-wise softmax of x (rows, cols) into y, max-subtracted as PyTorch does. */
void attention_softmax_rows(const float *x, float *y, int rows, int cols);

/*
 * mean (nq, nk, no room between rows) = the sum over st's heads of one of
 * its per-head stages (laid out as attention_head reads it), each cell's
 * heads added in order in float, then / heads: the averaged stage
 * (nn.MultiheadAttention's weights), and the mean of the heads the sentence
 * view and handouts show (pipeline_stage_heads_mean).
 */
void attention_heads_mean(float *mean, const struct attention_stages *st, const float *stage);

#endif
