/*
 * decoder_config.h: what a decoder is made of (see decoder.h): the kinds of
 * its parts (positions, norms, MLP, where the norms sit), its sizes, and
 * what follows from them (head widths, windows, RoPE's frequencies).
 */
#ifndef ATTNSCOPE_DECODER_CONFIG_H
#define ATTNSCOPE_DECODER_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "attnscope/base/status.h"

/*
 * How positions enter: learned absolute embeddings added to the tokens'
 * (GPT-2's pos_embed), or rotary embeddings (RoPE): each head's queries and keys
 * turned, pair (i, i + d/2) by the angle position * theta^(-2i/d), before
 * their scores (Llama's rotate-half form; nothing is added to the tokens).
 */
enum decoder_positions { DECODER_POSITIONS_LEARNED, DECODER_POSITIONS_ROPE };
/*
 * The norms: LayerNorm (the mean subtracted, divided by the root of the
 * biased variance + eps, scaled and shifted), or RMSNorm (divided by the
 * root of the mean square + eps, scaled).
 */
enum decoder_norm { DECODER_NORM_LAYER, DECODER_NORM_RMS };
/*
 * The MLP: up, GELU (the tanh approximation), down; or SwiGLU:
 * down(SiLU(gate) * up); or GeGLU (Gemma): down(GELU(gate) * up), GELU in
 * its tanh approximation.
 */
enum decoder_mlp { DECODER_MLP_GELU, DECODER_MLP_SWIGLU, DECODER_MLP_GEGLU };
/*
 * Where a block's norms sit: before attention and before the MLP (GPT-2,
 * Llama: "pre-norm"); there and also on attention's and the MLP's outputs
 * before each residual add (Gemma 3's four norms: "sandwich"); or only on
 * those outputs (Olmo 2 and 3: "post-norm", the block's input read as it
 * is).
 */
enum decoder_block_norms { DECODER_PRE_NORM, DECODER_SANDWICH_NORM, DECODER_POST_NORM };

/*
 * The stretch of the rotary frequencies (rope_scaling): Llama 3's ("llama3"),
 * linear (every frequency divided by factor: Gemma 3's global layers), or
 * YaRN ("yarn": Olmo 3's; the frequencies between beta_fast and beta_slow
 * rotations over original_max blended from factor's division to none, and
 * cos and sin times attention_factor).
 */
struct decoder_rope_scaling {
    bool llama3;              /* false: the frequencies as theta gives them */
    bool linear, yarn;
    double factor;            /* the long wavelengths' frequencies divided by this */
    double low_freq_factor;   /* wavelengths above original / low are long */
    double high_freq_factor;  /* wavelengths below original / high are short: kept */
    int original_max;         /* original_max_position_embeddings */
    double beta_fast, beta_slow; /* YaRN's rotation bounds (32 and 1 unless the config says) */
    double attention_factor;  /* YaRN's scale of cos and sin */
    bool truncate;            /* YaRN's bounds rounded outwards to whole dimensions */
};

/* The most layers a model with sliding windows may have (its per-layer kinds are kept). */
#define DECODER_LAYERS_SLIDING_MAX 512

/* The widest head RoPE turns (its frequencies are kept in the model). */
#define DECODER_HEAD_DIM_MAX 1024
/* The most experts a token is sent to (Qwen3-30B-A3B's 8, OLMoE's 8). */
#define DECODER_EXPERTS_USED_MAX 64
/*
 * A mixture of experts (struct decoder_config's moe), in place of the MLP in
 * the layers marked sparse.
 */
struct decoder_moe {
    /*
     * A mixture of experts in place of the MLP in the layers marked sparse
     * (Qwen3-MoE's, OLMoE's, Mixtral's): a router (d_model -> n_experts)
     * whose softmax picks each token's n_experts_used likeliest experts,
     * their probabilities divided by their sum when norm_topk, and the
     * token's output the sum of those experts' SwiGLU MLPs (d_expert wide)
     * each times its weight.  n_experts 0: none.
     */
    int n_experts, n_experts_used, d_expert;
    bool norm_topk;
    bool sparse[DECODER_LAYERS_SLIDING_MAX];
    /*
     * gpt-oss's mixture: the router's top k logits chosen and softmaxed among
     * themselves (GptOssTopKRouter; the same as their probabilities divided
     * by their sum, to rounding), and each expert's activation its clamped
     * SwiGLU: gate = min(gate, limit), up = clamp(up, -limit, limit),
     * (up + 1) gate sigmoid(alpha gate) (GptOssExperts).  swiglu_limit 0:
     * SiLU(gate) up.
     */
    bool router_topk_softmax;
    double swiglu_limit, swiglu_alpha;
    bool bias_experts; /* the router and every expert's projections have biases (gpt-oss) */
    /*
     * A shared expert beside the routed ones (Qwen3-Next's, Qwen3.5-MoE's):
     * a SwiGLU MLP of d_shared every token goes through, its output times
     * sigmoid(x . w) of its own gate (one number a token) and added to the
     * routed experts' sum.  0: none.
     */
    int d_shared;
};

/*
 * Gated DeltaNet (Qwen3.5's linear attention, decoder/gdn.c), the mixer of
 * the layers whose mixer[] is DECODER_MIXER_GDN: k_heads key heads of
 * k_dim (the queries' heads too) and v_heads value heads of v_dim, value
 * head j reading key head j / (v_heads / k_heads) as Hugging Face groups
 * them, or j % k_heads where tiled (llama.cpp's GGUF lays the value heads
 * across the key heads: decoder_gdn_key_head); a causal depthwise
 * convolution of conv taps over the queries, keys and values.  v_heads 0:
 * none.
 */
struct decoder_gdn {
    int k_heads, v_heads, k_dim, v_dim, conv;
    bool tiled;
};
#define DECODER_GDN_CONV_MAX 16

/*
 * What differs from layer to layer, or one layer takes from another
 * (Gemma 4's; all 0 in every other model): struct decoder_config's lw.
 */
struct decoder_layerwise {
    /*
     * Gemma 4's full-attention layers (those not marked sliding): heads of
     * their own width (global_head_dim) and, where given, their own count
     * of key heads (num_global_key_value_heads); 0: head_dim's, n_kv_head's.
     * Their RoPE is proportional when rope_angles > 0: only the first
     * rope_angles of a head's d / 2 pairs (t, t + d / 2) turned, by
     * 1 / theta^(2t / d) over the whole head; the rest left as they are.
     */
    int full_head_dim, full_kv_head, rope_angles;
    /*
     * Keys and values shared across layers (Gemma 4's num_kv_shared_layers):
     * the last kv_shared layers make no keys or values of their own and read
     * those of the last layer before them of their own kind (sliding or
     * full); their MLPs are d_mlp_shared wide (use_double_wide_mlp: twice
     * d_mlp; 0: d_mlp).  0: none shared.
     */
    int kv_shared, d_mlp_shared;
    bool v_norm;     /* the values RMS-normed per head, without a weight (Gemma 4) */
    /*
     * Per-layer embeddings (Gemma 4's hidden_size_per_layer_input): each
     * token's ple_dim columns for every layer from a table of their own
     * (times sqrt(ple_dim)), plus the embedding's projection (times
     * 1 / sqrt(d_model), RMS-normed), the sum times 1 / sqrt(2); each
     * layer after its MLP adds proj(GELU(gate(x)) * its columns), normed.
     * 0: none.
     */
    int ple_dim;
    bool layer_scalar; /* each layer's output times a scalar of its own (Gemma 4's layer_scalar) */
};

/* The most end tokens a model names (Llama 3 Instruct: three). */
#define DECODER_END_MAX 8

struct decoder_config {
    enum decoder_positions positions;
    enum decoder_norm norm;
    enum decoder_mlp mlp;
    int n_layer;
    int n_head;
    int d_model;     /* the width of the residual stream (GPT-2's d_model, hidden_size) */
    int n_ctx;       /* the longest text (n_ctx, max_position_embeddings) */
    int vocab_size;
    int d_mlp;       /* the MLP's width (d_mlp, intermediate_size) */
    /*
     * Grouped-query attention: this many key and value heads, each read by
     * n_head / n_kv_head query heads in turn (query head h reads h / (n_head
     * / n_kv_head)); 0: one per query head.
     */
    int n_kv_head;
    int head_dim;    /* each head's width; 0: d_model / n_head */
    bool qk_norm;    /* an RMSNorm over each head's queries and keys before RoPE (Qwen3) */
    bool qk_norm_full; /* QK-norm over the whole queries' and keys' width, not per head (Olmo) */
    double rope_theta;                   /* RoPE's base (10000 unless the config says) */
    /*
     * The columns of each head RoPE turns, the first ones (Qwen3.5's
     * partial_rotary_factor: a quarter), the pairs (t, t + rope_dim / 2) and
     * the frequencies over rope_dim; 0: the whole head.
     */
    int rope_dim;
    struct decoder_rope_scaling rope_scaling;
    /*
     * Sliding-window attention: query i sees keys i - sliding_window < j <= i
     * in the layers marked sliding (Hugging Face's layer_types); 0: none.
     * Those layers turn q and k with rope_local_theta, unstretched (Gemma
     * 3's rope_local_base_freq; Olmo 3's rope_theta without its YaRN).
     */
    int sliding_window;
    bool sliding[DECODER_LAYERS_SLIDING_MAX];
    double rope_local_theta;
    enum decoder_block_norms block_norms;
    bool norm_plus_one;      /* RMSNorm scales by 1 + w (Gemma's zero-centred weights) */
    float embed_scale;       /* the token embeddings times this (Gemma: sqrt(d_model)); 0: none */
    double attn_scalar;      /* the scores divided by sqrt(this) (Gemma's query_pre_attn_scalar);
                                0: the head size */
    double final_softcap;    /* logits = cap tanh(logits / cap) (final_logit_softcapping); 0: none */
    double attn_softcap;     /* the scaled scores = cap tanh(scaled / cap) before the softmax,
                                the masked ones left -inf (attn_logit_softcapping); 0: none */
    float eps;       /* the norms' epsilon */
    bool scale_attn_weights; /* divide the scores by sqrt(head size) */
    bool scale_by_layer;     /* and by the layer's number + 1 (GPT-2's inverse layer index) */
    bool tied;               /* the logits through the token embedding */
    /* Which linears have biases: the queries', keys' and values'; the attention's output; the MLP's. */
    struct decoder_biases {
        bool qkv, o, mlp;
    } bias;
    struct decoder_moe moe; /* a mixture of experts in place of the MLP; n_experts 0: none */
    /*
     * Attention sinks (gpt-oss): a learned logit per head joins every row's
     * softmax and is dropped after it, so the row's weights sum to less than
     * 1; the rest is what the head gave to nothing.
     */
    bool sinks;
    /*
     * The query projection gives each head its query and an output gate of
     * the same width side by side (Qwen3.5's attn_output_gate): the
     * context times sigmoid(gate) before the output projection.
     */
    bool attn_gate;
    struct decoder_gdn gdn; /* the linear-attention layers' sizes; v_heads 0: none */
    /* The sliding layers turn q and k as the full ones do (gpt-oss: one YaRN for both). */
    bool sliding_rope_full;
    /*
     * 0: the last norm's output scores the vocabulary (next tokens); else
     * it scores this many classes through a head of their own with a bias
     * (the book's chapter 6 classifier: spam or not).
     */
    /*
     * What mixes the tokens in each layer (mixer.h's table): 0, softmax
     * attention, in every layer of every architecture so far.
     */
    unsigned char mixer[DECODER_LAYERS_SLIDING_MAX];
    int n_classes;
    struct decoder_layerwise lw; /* Gemma 4's: what differs by layer or is shared; zeros: none */
};

/*
 * Whether c's sizes fit together, whatever gave them (a config file or the
 * tensors' shapes): at least one layer, head, key head, token, position
 * and MLP column; the query heads sharing the key heads evenly; a head
 * size given or dividing the width; with RoPE, an even head of at most
 * DECODER_HEAD_DIM_MAX.  ATTN_EPARSE with "SOURCE: ... (from FROM)" when
 * not: source names the file, from what gave the sizes.
 */
enum attn_status decoder_config_check(const struct decoder_config *c, const char *source,
                                      const char *from, struct attn_error *err);

/* Each head's width: head_dim, or d_model / n_head (a sliding layer's, where full ones differ). */
int decoder_head_dim(const struct decoder_config *c);
/*
 * Layer's own: its heads' width, key heads, queries' and keys' widths, the
 * key head query head h reads, and its MLP's width (Gemma 4's full and
 * shared layers differ from the others).
 */
int decoder_layer_head_dim(const struct decoder_config *c, int layer);
int decoder_layer_kv_heads(const struct decoder_config *c, int layer);
int decoder_layer_q_width(const struct decoder_config *c, int layer);
int decoder_layer_kv_width(const struct decoder_config *c, int layer);
int decoder_layer_kv_head_of(const struct decoder_config *c, int layer, int h);
int decoder_layer_mlp(const struct decoder_config *c, int layer);
/* The widest of any layer: queries, keys, MLP (what a buffer for every layer holds). */
int decoder_q_width_max(const struct decoder_config *c);
int decoder_kv_width_max(const struct decoder_config *c);
int decoder_mlp_max(const struct decoder_config *c);
/*
 * The layer whose keys and values layer reads: itself, or for a layer that
 * shares (kv_shared), the last layer before the shared ones of its kind.
 */
int decoder_kv_source(const struct decoder_config *c, int layer);
/* The key and value heads: n_kv_head, or n_head. */
int decoder_kv_heads(const struct decoder_config *c);
/* The key and value head query head h reads. */
int decoder_kv_head_of(const struct decoder_config *c, int h);
/* The queries' width (n_head * head size) and the keys' and values' (n_kv_head * head size). */
int decoder_q_width(const struct decoder_config *c);
int decoder_kv_width(const struct decoder_config *c);

/*
 * RoPE's frequencies of c into freq (head size / 2 of them), as Hugging
 * Face's Llama makes them in float32: 1 / theta^(2i/d), then llama3's,
 * linear or YaRN's stretch when c has it.
 */
void decoder_rope_frequencies(const struct decoder_config *c, float *freq);
/* The sliding layers' frequencies: rope_local_theta's, unstretched (the full ones' when
   sliding_rope_full). */
void decoder_rope_frequencies_local(const struct decoder_config *c, float *freq);

/* The window layer sees (sliding_window), or 0 for a layer that sees every key before it. */
int decoder_window(const struct decoder_config *c, int layer);
/*
 * The first key query i sees under the causal mask in a window of that many
 * keys (i - window + 1, or 0 once the window reaches the start; window 0:
 * every key before it, 0).
 */
int decoder_first_key(int window, int i);
/* Whether c's blocks have a norm before attention and the MLP (all but post-norm). */
bool decoder_pre_norms(const struct decoder_config *c);
/* Whether c's blocks norm attention's and the MLP's outputs (sandwich and post-norm). */
bool decoder_post_norms(const struct decoder_config *c);
/* Whether layer turns q and k with the sliding layers' own frequencies (rope_freq_local). */
bool decoder_rope_local(const struct decoder_config *c, int layer);
/* Whether layer's MLP is a mixture of experts. */
bool decoder_sparse(const struct decoder_config *c, int layer);
/*
 * The key and value rows layer keeps for n tokens: n, or a sliding layer's
 * window once the text is longer (a ring).
 */
int decoder_kept_rows(const struct decoder_config *c, int layer, int n);
/*
 * The experts of layer left on by off (n_layer x n_experts flags, 1: off;
 * NULL: none off), and the first layer whose experts on are fewer than a
 * token is sent to (n_experts_used), with *on their count; -1: none.  The
 * one rule every switch of experts keeps (--expert-off, a in the view).
 */
int decoder_experts_on(const struct decoder_config *c, const unsigned char *off, int layer);
int decoder_experts_too_few(const struct decoder_config *c, const unsigned char *off, int *on);
/* The columns of a head RoPE turns: rope_dim, or the whole head. */
int decoder_rope_dim(const struct decoder_config *c);
/* Gated DeltaNet's widths: the keys' (and queries') k_heads k_dim, the values' v_heads v_dim,
   the convolved channels 2 keys + values. */
int decoder_gdn_key_width(const struct decoder_config *c);
/* The key head a Gated DeltaNet value head h reads, as the file lays them out. */
int decoder_gdn_key_head(const struct decoder_config *c, int h);
int decoder_gdn_value_width(const struct decoder_config *c);
int decoder_gdn_conv_width(const struct decoder_config *c);
/* Whether layer's mixer is softmax attention (its q, k, v and weights), not another kind. */
bool decoder_attends(const struct decoder_config *c, int layer);
/* Layer's own heads: its attention heads, or a Gated DeltaNet layer's value heads. */
int decoder_layer_heads(const struct decoder_config *c, int layer);
/*
 * The heads a layer's switches are numbered over, the same in every layer
 * (the stride of an ablation mask, n_layer of them): the attention heads,
 * or Gated DeltaNet's value heads when a model has more.
 */
int decoder_head_slots(const struct decoder_config *c);

/* Whether c's MLP is gated (SwiGLU or GeGLU). */
bool decoder_gated(const struct decoder_config *c);

/* What each position's output scores: vocab_size next tokens, or n_classes classes. */
int decoder_outputs(const struct decoder_config *c);

#endif
