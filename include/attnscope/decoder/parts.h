/*
 * parts.h: the parts a decoder block is built from (decoder.h), each a
 * function over named buffers in llm.c's style, outputs first in mind:
 * decoder_forward() is a flat list of calls to them.  A part spreads its
 * rows or heads over threads; every element is computed the same way
 * whichever thread makes it, so any thread count gives the same bits.
 * Shapes: n tokens, C = d_model, F = d_mlp, H = n_head, d the head size
 * (decoder_head_dim), Q = H d the queries' width, K the keys' and values'
 * (decoder_kv_width).
 */
#ifndef ATTNSCOPE_DECODER_PARTS_H
#define ATTNSCOPE_DECODER_PARTS_H

#include <stdbool.h>
#include <stddef.h>

#include "attnscope/decoder/decoder.h"

/*
 * The positions first .. first + n - 1: tok (n, C) = tok_embed[ids], pos (n, C) =
 * pos_embed[first ..], embed = tok + pos (learned); with RoPE embed = tok and pos
 * is not written.
 */
void part_positions(const struct decoder_model *m, const int *ids, int n, float *tok, float *pos,
                    float *embed, int first);

/* y (n, C) = the norm (cfg->norm) of each row of x (n, C) with w. */
void part_norm(const struct decoder_config *c, const struct decoder_norm_weights *w,
               const float *x, int n, float *y, int threads);

/*
 * RoPE on x (n rows of `heads` heads of d) at positions first ..: each
 * head's pair (t, t + d/2) turned by the angle position * m->rope_freq[t]
 * (rope_freq_local[t] in a sliding layer), the angle in float32 and its
 * cosine and sine rounded from double (times YaRN's attention factor in a
 * full layer of a model that has it).
 */
void part_rope(const struct decoder_model *m, int layer, const float *x, int n, int heads,
               int first, float *y, int threads);

/*
 * From a projection's output to what the scores read: QK-norm into normed
 * (when the model has it), then RoPE (when it has it) into out.
 */
void part_turn(const struct decoder_model *m, int layer, const struct decoder_norm_weights *norm,
               const float *proj, int n, int heads, int first, float *normed, float *out,
               int threads);

/*
 * One row of scores into masked, scaled and weights as rowops_softmax makes
 * them (the keys first .. end - 1 visible, the others -inf), the scaled
 * ones capped first when c has attn_softcap (Gemma 2: cap tanh(x / cap),
 * each step in float32 as Hugging Face's eager attention takes it; the
 * hidden keys stay -inf, as its mask is added after the cap).  sink (a
 * head's sink logit, or NULL): it joins the softmax and is dropped after it.
 */
void part_softmax(const struct decoder_config *c, const float *scores, float *masked,
                  float *scaled, float *weights, int n, int first, int end, float divisor,
                  const float *sink);
/*
 * The part of a row's softmax its sink took, from the row's n scaled
 * scores (hidden keys -inf) as part_softmax left them: the same sums.
 */
float part_sink_share(const float *scaled, int n, float sink);

/* (A linear, y = x W + b, is decoder_linear_apply: storage/linear.c, the seam over its storage.) */

/*
 * The attention of one block on x (n, C): its queries, keys and values
 * (QK-norm and RoPE between the projections and q and k when the model
 * has them; query head h reads key and value head decoder_kv_head_of),
 * each head's context (zeroed for an ablated head) and the output
 * projection, into s's buffers.  Each head's scores and softmax weights
 * are made a block of PART_ATTENTION_ROWS queries at a time in scratch and
 * not kept (decoder_layer_attention makes them again, the same bits, for
 * the layer shown); under the causal mask a block's scores and context
 * stop at its last query's key.  divisor: what the scores are divided by;
 * scratch: H times part_attention_scratch(rows the buffers hold), a head's
 * part scratch_stride floats from the last.
 */
#define PART_ATTENTION_ROWS 64
size_t part_attention_scratch(int cap);
struct part_attention_args {
    const struct decoder_model *m; /* (RoPE's frequencies) */
    const struct decoder_config *c;
    const struct decoder_block *b;
    const float *x;
    int n;
    bool causal;
    float divisor;
    const unsigned char *ablated; /* (H) 1 where the head's context is zeroed, or NULL */
    float *scratch;
    size_t scratch_stride;
    /*
     * The first row to compute (0: all).  Rows before it are given in s,
     * as a causal model leaves them when only later tokens change: their
     * queries, keys, values, context and output.
     */
    int from;
    int layer;  /* (its RoPE: a sliding layer's frequencies are its own) */
    int window; /* the keys a query sees under the causal mask (decoder_window); 0: all */
    const float *sinks; /* (H) each head's sink logit, or NULL: none (or switched off) */
    /*
     * A mixer's own kept state (decoder_mixer.keeps_state) and the rows it
     * has read (the layer's, updated by the forward); from is that count, or
     * 0 (made again).  NULL for the others.
     */
    float *kept;
    int *kept_rows;
};
void part_attention(const struct part_attention_args *a, struct decoder_layer_stages *s,
                    int threads);

/*
 * The MLP on x (n, C): up (n, F), its activation act (n, F): GELU(up), or
 * with SwiGLU SiLU(gate) * up (gate (n, F) its own projection; unused by
 * GELU), or with GeGLU GELU(gate) * up, down (n, C) into out.
 */
void part_mlp(const struct decoder_config *c, const struct decoder_block *b, int layer,
              const float *x, int n, float *gate, float *up, float *act, float *out, int threads);

/*
 * A mixture of experts on x (n, C) in place of the MLP: the router's logits
 * (n, E), their softmax probs, each token's n_experts_used likeliest
 * experts and their weights in routed (n, E; 0 where not chosen), divided
 * by their sum when norm_topk; out (n, C) the sum of the chosen experts'
 * SwiGLU outputs each times its weight, added in increasing expert order as
 * Hugging Face's index_add_ does.  Only the chosen experts' rows are
 * computed.  off (E, or NULL): experts switched off, their logits -inf.
 */
void part_moe(const struct decoder_config *c, const struct decoder_block *b, const float *x, int n,
              const unsigned char *off, float *logits, float *probs, float *routed, float *out,
              int threads);

/*
 * A shared expert on x (n, C) beside the routed ones (moe.d_shared > 0):
 * its gate's sigmoid(x . w) into gate (n), its SwiGLU output times that
 * into shared (n, C), and shared added to out (n, C), the routed experts'
 * sum, as Qwen2MoeSparseMoeBlock adds them.
 */
void part_shared_expert(const struct decoder_config *c, const struct decoder_block *b,
                        const float *x, int n, float *gate, float *shared, float *out,
                        int threads);

/* y = a + b, count floats: a residual add. */
void part_residual(const float *a, const float *b, size_t count, float *y);

/*
 * Gemma 4's per-layer inputs of n tokens ids (cfg.ple_dim P): embed (n, C),
 * the scaled embedding, through the model's projection times 1 / sqrt(C),
 * each layer's P columns RMS-normed, plus the token's row of the per-layer
 * table times sqrt(P), the sum times 1 / sqrt(2), into ple (n, n_layer P).
 * 0, or -1 out of memory.
 */
int part_ple_inputs(const struct decoder_model *m, const int *ids, int n, const float *embed,
                    float *ple, int threads);
/*
 * The end of layer's block on rows from .. n - 1 of s->resid2, in place:
 * with per-layer embeddings, + norm(proj(GELU(gate(x)) * the layer's
 * columns of ple)) (s->ple_act, ple_out, ple_normed); then times the
 * layer's scalar (cfg.layer_scalar).
 */
void part_layer_out(const struct decoder_model *m, int layer, const float *ple, int n,
                    struct decoder_layer_stages *s, int from, int threads);

#endif
