/*
 * decoder_run.h: a decoder's forward and what a run keeps (see decoder.h):
 * each layer's stages, the knobs a run is made under (ablated heads, experts
 * off, sinks off), the forward from scratch or from the rows an edit kept,
 * a layer shown again, and the readers of a run's stages.
 */
#ifndef ATTNSCOPE_DECODER_RUN_STATE_H
#define ATTNSCOPE_DECODER_RUN_STATE_H

#include <stdbool.h>
#include <stddef.h>

#include "attnscope/base/status.h"
#include "attnscope/decoder/decoder_config.h"
#include "attnscope/decoder/decoder_weights.h"

/*
 * One block's stages for n tokens, each row-major; H = n_head, C = d_model,
 * F = d_mlp.  A run keeps, for every layer, what an edit's recompute and
 * the next layer read: the keys, the values and the block's output.  The
 * other stages are the shown layer's only (decoder_show_layer makes them,
 * the same bits the forward made); for the other layers they are NULL.
 */
struct decoder_layer_stages {
    float *norm1;   /* (n, C) the first norm's output (GPT-2's ln_1); post-norm: NULL */
    /*
     * The projections' outputs, Q = n_head * d and K = n_kv_head * d wide
     * (head h: columns h*d ...); with neither QK-norm nor RoPE they are q
     * and k themselves.
     */
    float *q_proj;  /* (n, Q) */
    float *k_proj;  /* (n, K) */
    float *q_normed; /* (n, Q) after QK-norm (before RoPE), or NULL */
    float *k_normed; /* (n, K) */
    float *q;       /* (n, Q) the queries the scores read: after QK-norm and RoPE */
    float *k;       /* (n, K) the keys likewise: kept for every layer */
    float *v;       /* (n, K) values: kept for every layer */
    /*
     * The shown layer's (H, n, n) stages, laid out with room for the run's
     * attention_ld tokens: head h's row i at (h * ld + i) * ld (ld = n in a
     * run made for n tokens only).
     */
    float *scores;  /* (H, n, n) q k^T, before the mask and the scaling */
    float *masked;  /* (H, n, n) the scores, -inf where the causal mask hides a key */
    float *scaled;  /* (H, n, n) the masked scores divided (decoder_divisor), then capped when
                       the model caps them (attn_softcap) */
    float *weights; /* (H, n, n) softmax of the masked, scaled scores */
    float *context; /* (n, Q) the weights times the values, heads side by side */
    /*
     * With an output gate (attn_gate): each head's gate, the second half of
     * its q_proj columns (q_proj holds the queries only), and the context
     * times sigmoid(gate), what the output projection reads; else NULL.
     */
    float *q_full;  /* (n, 2 Q) the projection's output, a head's query then its gate */
    float *q_gate;  /* (n, Q) */
    float *gated;   /* (n, Q) */
    /*
     * A Gated DeltaNet layer's steps (gdn.c), Kq = k_heads k_dim, Vw =
     * v_heads v_dim, Hv = v_heads; NULL in a model without it (in its
     * attention layers they hold nothing).
     */
    struct decoder_gdn_stages {
        float *mixed;  /* (n, 2 Kq + Vw) in_proj_qkv's output: queries, keys, values */
        float *conv;   /* (n, 2 Kq + Vw) its causal convolution, through SiLU */
        float *q, *k;  /* (n, Kq) the queries and keys L2-normed (the queries / sqrt(k_dim)) */
        float *z;      /* (n, Vw) the output gate's projection */
        float *beta;   /* (n, Hv) sigmoid(b): how much each token writes */
        float *decay;  /* (n, Hv) g = -exp(A_log) softplus(a + dt_bias): log of the forgetting */
        float *out;    /* (n, Vw) o = S q, each value head's read of its state */
        float *normed; /* (n, Vw) o RMS-normed times w, times silu(z) */
        /*
         * The shown layer's (Hv, n, n) effective attention M (laid out as
         * the scores are): o_t = sum_s M[t, s] v_s; NULL in another layer.
         */
        float *effective;
    } gdn;
    float *attn;    /* (n, C) the output projection of the context */
    float *attn_normed; /* (n, C) attn normed (sandwich and post-norm), or NULL */
    float *resid1;  /* (n, C) the block's input + attn (attn_normed) */
    float *norm2;   /* (n, C) the second norm's output (GPT-2's ln_2); post-norm: NULL */
    float *gate;    /* (n, F) SwiGLU's gate projection, or NULL */
    float *up;      /* (n, F) the MLP's up projection (GPT-2's c_fc) */
    float *act;     /* (n, F) its activation: GELU(up), or SiLU(gate) * up */
    /*
     * A sparse layer's router, E = n_experts: its logits, their softmax, and
     * the weight each expert's output was multiplied by (0 for an expert the
     * token did not choose); NULL in a model without experts.  In a sparse
     * layer gate, up and act hold nothing.
     */
    float *router_logits; /* (n, E) */
    float *router;        /* (n, E) */
    float *routed;        /* (n, E) */
    /*
     * A shared expert's (moe.d_shared > 0): its gate's sigmoid, one a token,
     * and its output times that, which mlp holds added to the routed sum.
     */
    float *shared_gate;   /* (n, 1) */
    float *shared;        /* (n, C) */
    float *mlp;     /* (n, C) the down projection (GPT-2's c_proj of the MLP); a sparse layer:
                       the experts' weighted sum */
    float *mlp_normed; /* (n, C) mlp normed (sandwich and post-norm), or NULL */
    /*
     * Gemma 4's per-layer embedding in the layer (cfg.ple_dim; else NULL):
     * GELU(gate(x)) times the layer's per-layer input, its projection back,
     * and that normed (what the layer adds before its scalar).
     */
    float *ple_act;    /* (n, P) */
    float *ple_out;    /* (n, C) */
    float *ple_normed; /* (n, C) */
    float *resid2;  /* (n, C) resid1 + mlp (mlp_normed): the block's output: kept for every
                       layer */
    /*
     * What a mixer that keeps a state of its own (decoder_mixer.keeps_state:
     * Gated DeltaNet's states and its convolution's last inputs) keeps
     * between runs, its kept_floats; and how many rows it has read: a run
     * from that row on continues it, any other makes it again from row 0
     * (-1: none is valid).  NULL and 0 at an attention layer.
     */
    float *kept;
    int kept_rows;
};

/* A forward pass over n tokens: what every layer needs kept, the shown layer, the top next tokens. */
struct decoder_run {
    int n;
    int top;                             /* next tokens kept per position */
    int cap;                             /* the rows the buffers hold (n .. n_ctx): an
                                            edit that appends up to cap grows the run in place */
    float *tok;                          /* (n, C) tok_embed[id]: the token embeddings */
    float *pos;                          /* (n, C) pos_embed[position]: the position embeddings
                                            (NULL with RoPE) */
    float *embed;                        /* (n, C) tok + pos (tok with RoPE): the first
                                            block's input */
    /*
     * Gemma 4's per-layer inputs (cfg.ple_dim; else NULL): (n, n_layer, P),
     * each token's row of the per-layer table (scaled) and the embedding's
     * projection (scaled, normed), their sum times 1 / sqrt(2).
     */
    float *ple;
    struct decoder_layer_stages *layers; /* (n_layer) */
    float *final;                        /* (n, C) the final norm's output */
    int *top_ids;                        /* (n, top) the likeliest next tokens (or classes),
                                            likeliest first; a row whose first is
                                            DECODER_NEXT_LATER is not made yet
                                            (decoder_knobs.next_later) */
    float *top_probs;                    /* (n, top) their probabilities */
    int shown;                           /* the layer whose every stage is kept, or -1 */
    /*
     * A lean run (decoder_knobs.lean) kept no layer: every layer's keys and
     * values were made in one layer's memory, their outputs in two, and no
     * layer is shown; only the final stream and the top next tokens are
     * its.  A layer shown, the lens and an edit are refused or start over.
     */
    bool lean;
    /* What the forward was run with, so that a layer can be made again when asked for. */
    bool next_later; /* decoder_knobs.next_later */
    bool causal;
    float *divisors;                     /* (n_layer) each layer's decoder_divisor */
    unsigned char *ablated;              /* (n_layer * decoder_head_slots) the knobs' ablated heads,
                                            or NULL */
    unsigned char *experts_off;          /* (n_layer * n_experts) the knobs' experts off, or NULL */
    bool sinks_off;                      /* the knobs' sinks_off */
    float *last_logits;                  /* the knobs' last_logits: where the last row's go */
    float *slots;                        /* the shown layer's stages and the forward's own */
    /*
     * The shown layer's (H, n, n) scores, masked and scaled scores and
     * weights: four arrays, each a quarter of attention_floats, made by
     * decoder_show_layer.  They hold layer attention_layer's with room for
     * attention_ld tokens: head h's row i starts at (h * attention_ld + i)
     * * attention_ld, so that tokens appended or taken away move nothing.
     * The first attention_rows rows and columns are this run's (an edit in
     * place carries the rows before its first changed token over: only
     * the others are made again).
     */
    float *attention;
    size_t attention_floats;
    int attention_ld, attention_rows, attention_layer;
    float *arena;                        /* one allocation behind the buffers of n rows */
    void *arena_map;                     /* the mapping it is carved from (munmap), or NULL */
    size_t arena_map_bytes;
};

/*
 * What a learner may change in the attention of a trained model (NULL in
 * decoder_forward: the model's own: causal, scaled, T = 1).
 */
struct decoder_knobs {
    bool causal;        /* query i sees keys 0..i only */
    bool scaled;        /* divide the scores as the model does */
    double temperature; /* > 0 */
    /*
     * (n_layer * decoder_head_slots) 1 where a head is ablated: its context
     * is zeroed before the output projection, as if it had attended to
     * nothing (a Gated DeltaNet layer's value head: its read o zeroed before
     * the gated norm, its state still kept); NULL: none.
     */
    const unsigned char *ablated;
    /*
     * (n_layer * n_experts) 1 where an expert is switched off: its router
     * logit set to -inf before the softmax (as masking it in PyTorch would),
     * so no token is sent to it; NULL: none.
     */
    const unsigned char *experts_off;
    bool sinks_off;     /* the attention sinks' logits -inf: every row's weights sum to 1 */
    /*
     * Not a knob but an output, for generation: when not NULL, the last
     * position's logits, every output's (decoder_outputs), are written here
     * as the head makes them (the product read once for the top tokens and
     * for the draw).  Needs the run's top above 0.
     */
    float *last_logits;
    /*
     * Not a knob either: the rows of room beyond n a run made anew gets, so
     * that appends grow it in place (generation asks for what it will
     * write); 0: DECODER_ROOM; DECODER_NO_ROOM: none (--print, which never
     * appends, keeps no row it will not fill).  Never past n_ctx.
     */
    int room;
    /*
     * Not a knob: keep no layer (decoder_run.lean), for what reads only the
     * final stream and the next tokens (--print of tokens and next): at 512
     * tokens of Qwen3-0.6B the layers' keys, values and outputs (176 MB) and
     * the shown layer's slot (50 MB) are not held.  The same bits.
     */
    bool lean;
    /*
     * Not a knob: the forward makes the last position's next tokens only,
     * the other rows' when a front end asks (decoder_run_next_tokens): at
     * 512 tokens of Llama 3.2 1B the head's other 511 rows are a fifth of
     * the forward, and the view's first frame and --print of other stages
     * show none of them.  The same bits, whenever made.
     */
    bool next_later;
};

#define DECODER_NO_ROOM (-1)
/* A row of decoder_run.top_ids not made yet (its first id). */
#define DECODER_NEXT_LATER (-2)

/*
 * The number layer's scores are divided by under k (NULL: the model's own):
 * sqrt(head size) unless scale_attn_weights is false, times layer + 1 when
 * scale_by_layer (as Hugging Face's GPT-2 divides), times the temperature;
 * 1 when k turns scaling off.
 */
float decoder_divisor(const struct decoder_model *m, const struct decoder_knobs *k, int layer);

/*
 * Runs the model over ids (n of them, each below vocab_size, n at most
 * n_ctx), keeping the top next tokens of every position.  With k
 * NULL: causal, scaled as the model scales, no dropout (evaluation mode).
 * r is the caller's to decoder_run_destroy() when this returns ATTN_OK.
 */
enum attn_status decoder_forward(const struct decoder_model *m, const int *ids, int n, int top,
                                 const struct decoder_knobs *k, struct decoder_run *r,
                                 struct attn_error *err);

/*
 * The rows ids and prev's ids (prev_ids, prev->n of them) share from the
 * start: where an edit's first changed token is.
 */
int decoder_common_rows(const struct decoder_run *prev, const int *prev_ids, const int *ids, int n);

/*
 * decoder_forward, taking rows 0 .. from - 1 of every stage from prev, a
 * run of the same model and knobs whose ids agree with ids up to from
 * (decoder_common_rows): in a causal model those rows cannot change, so
 * only the rows from `from` on are computed in every layer, with the
 * logits only for them.  The same bits as decoder_forward (check_gpt2).
 * Without the causal mask, or with another top, everything is computed.
 *
 * When prev has room for n rows (its cap) r takes prev's memory over and
 * computes the new rows in place: prev is then empty (destroying it is
 * safe and frees nothing of r's).  On failure, or when stopped, prev is as
 * it was.  A run made here has room for DECODER_ROOM more rows than it
 * holds, so that the edits after it that append grow it in place.
 */
#define DECODER_ROOM 64
enum attn_status decoder_forward_from(const struct decoder_model *m, const int *ids, int n, int top,
                                      const struct decoder_knobs *k, struct decoder_run *prev,
                                      int from, struct decoder_run *r, struct attn_error *err);

/*
 * decoder_forward where prev, a run of the same model, ids and top, was
 * made with knobs that differ from k only in the heads ablated at `layer`
 * and after (decoder_first_ablated_change): the layers before it cannot
 * change, so only the layers from `layer` on are computed, over every row
 * (the others copied from prev, which is left as it was).  The same bits as
 * decoder_forward (check_gpt2).
 */
enum attn_status decoder_forward_layers(const struct decoder_model *m, const int *ids, int n,
                                        int top, const struct decoder_knobs *k,
                                        const struct decoder_run *prev, int layer,
                                        struct decoder_run *r, struct attn_error *err);
/*
 * The first layer whose ablated heads differ between a and b ((n_layer *
 * n_head) each, NULL: none ablated), or n_layer when none does.
 */
int decoder_first_ablated_change(const struct decoder_config *c, const unsigned char *a,
                                 const unsigned char *b);
/* Likewise the first layer whose experts switched off differ ((n_layer * n_experts) each). */
int decoder_first_expert_change(const struct decoder_config *c, const unsigned char *a,
                                const unsigned char *b);

/*
 * Makes layer the shown one: its every stage (r->layers[layer]), computed
 * again from its input when it was not kept (a twelfth of a forward for
 * GPT-2 small), and its (H, n, n) scores, masked and scaled scores and
 * weights from them, the same bits the forward's context was made from;
 * the layer shown before keeps only its keys, values and output.  An
 * edit's run (decoder_forward_from) keeps the same layer's stages, and
 * when it was made in place, the rows and columns of those four before the
 * first changed token: only the rest is made (an appended token: a row
 * and a column per head).
 */
enum attn_status decoder_show_layer(const struct decoder_model *m, struct decoder_run *r,
                                    int layer, struct attn_error *err);
/* The same, the (H, n, n) stages made only when attention is set (else left NULL). */
enum attn_status decoder_show_layer_stages(const struct decoder_model *m, struct decoder_run *r,
                                           int layer, bool attention, struct attn_error *err);

/*
 * One of the shown layer's (H, n, n) stages of r (r->layers[shown].scores,
 * masked, scaled or weights: rows r->attention_ld floats apart) into out,
 * H * n * n floats with no room between rows.
 */
void decoder_stage_copy(const struct decoder_config *c, const struct decoder_run *r,
                        const float *stage, float *out);

/*
 * The queries (n, Q) of layer into q, made again from its input when it is
 * not the shown layer (the norm, and QK-norm, into scratch): what
 * decoder_head_weights reads.  q and scratch each hold
 * decoder_queries_floats(c, n) floats.
 */
size_t decoder_queries_floats(const struct decoder_config *c, int n);
void decoder_layer_queries(const struct decoder_model *m, const struct decoder_run *r, int layer,
                           float *q, float *scratch);

/*
 * One head's (n, n) attention weights of layer into w, from its queries q
 * (decoder_layer_queries) and its kept keys, as decoder_show_layer makes
 * them; scratch holds n * n + 2n floats.
 */
void decoder_head_weights(const struct decoder_model *m, const struct decoder_run *r, int layer,
                          int head, const float *q, float *w, float *scratch);

/* Head's sink logit in layer as r's knobs have it: NULL without sinks or with them off. */
const float *decoder_run_sink(const struct decoder_model *m, const struct decoder_run *r,
                              int layer, int head);
/*
 * The part of row i's softmax head's sink took in the shown layer of r (0
 * without one): its exponential over the sum of the visible scaled scores'
 * and its own, as the forward's softmax made them.
 */
float decoder_sink_share(const struct decoder_model *m, const struct decoder_run *r, int head,
                         int i);
void decoder_run_destroy(struct decoder_run *r);
/*
 * A destroyed run's memory is kept for the next run (decoder.c: already
 * faulted in, it is reused without the kernel zeroing it); this gives it
 * back to the system.
 */
void decoder_release_spare(void);

/*
 * The logit lens: every layer's residual stream at position read through
 * the final norm and the unembedding as if it were the last layer's, its k
 * likeliest next tokens: ids and probs hold n_layer * k each (layer by
 * layer).  The last layer's are the model's own prediction.
 */
enum attn_status decoder_logit_lens(const struct decoder_model *m, const struct decoder_run *r,
                                    int position, int k, int *ids, float *probs,
                                    struct attn_error *err);

/*
 * The next tokens of r's rows the forward left for later (decoder_knobs
 * next_later), made now from the final stream it kept: every row's then
 * what a forward making them all gives.  ATTN_OK when every row is made;
 * else (no memory, stopped) the rows not made stay so.
 */
enum attn_status decoder_run_next_tokens(const struct decoder_model *m, struct decoder_run *r,
                                         struct attn_error *err);

/*
 * The logits of rows row0 .. row0 + rows - 1 of r (its final stream through
 * the head, capped and biased as the forward's next tokens are) for
 * outputs v0 .. v0 + vb - 1 into logits (rows, vb): what a comparison of two
 * models reads whole (compare.h), where the forward keeps only the top.
 */
void decoder_run_logits(const struct decoder_model *m, const struct decoder_run *r, int row0,
                        int rows, int v0, int vb, float *logits, int threads);

/*
 * The bytes a run of n tokens keeping top next tokens each takes, with one
 * layer shown (decoder_show_layer).
 */
size_t decoder_run_bytes(const struct decoder_config *c, int n, int top);

#endif
