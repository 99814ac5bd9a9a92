/*
 * decoder.h: a decoder-only transformer, described by the parts its blocks
 * are built from (TransformerLens' config, llama.cpp's per-architecture
 * builders from shared blocks), and its forward pass.
 *
 * A description (struct decoder_config) names each part's kind and the
 * sizes: the positions (learned absolute embeddings added to the tokens'),
 * the norms (LayerNorm: mean, variance, scale, shift), the attention
 * (multi-head, a key and value head per query head, scaled by sqrt(head
 * size)), the MLP (up, GELU in its tanh approximation, down), the residual
 * adds around attention and MLP, a final norm and the logits (through the
 * token embedding when tied).  GPT-2 is such a description
 * (architectures/gpt2.h describes it: an architecture); one with other
 * parts (RMSNorm, rotary positions, grouped keys and values, a gated MLP)
 * adds their kinds to the enums and their code to parts.c, not a forward
 * of its own.  The weights are the model's, in its own memory.
 *
 * A run keeps what an edit and the next layer need (each layer's keys,
 * values and output) and one layer's every stage, the shown one; another
 * layer's are made again when it is shown (decoder_show_layer), the same
 * bits.  The run's memory lives in run.c.
 */
#ifndef ATTNSCOPE_DECODER_H
#define ATTNSCOPE_DECODER_H

#include <stdbool.h>
#include <stddef.h>

#include "attnscope/base/status.h"
#include "attnscope/kernels/linalg.h"

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
    bool bias_qkv, bias_o, bias_mlp;
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
     * Attention sinks (gpt-oss): a learned logit per head joins every row's
     * softmax and is dropped after it, so the row's weights sum to less than
     * 1; the rest is what the head gave to nothing.
     */
    bool sinks;
    /* The sliding layers turn q and k as the full ones do (gpt-oss: one YaRN for both). */
    bool sliding_rope_full;
    /*
     * 0: the last norm's output scores the vocabulary (next tokens); else
     * it scores this many classes through a head of their own with a bias
     * (the book's chapter 6 classifier: spam or not).
     */
    int n_classes;
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

/* Each head's width: head_dim, or d_model / n_head. */
int decoder_head_dim(const struct decoder_config *c);
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
/* Whether c's MLP is gated (SwiGLU or GeGLU). */
bool decoder_gated(const struct decoder_config *c);

/* What each position's output scores: vocab_size next tokens, or n_classes classes. */
int decoder_outputs(const struct decoder_config *c);

/*
 * y = x W + b with W as the file stores it: (in, out) rows of ld floats, or
 * (out, in) when out_in; b NULL: no bias (the book's qkv_bias=False).
 */
struct decoder_linear {
    const float *w;
    /*
     * Or the weights as bfloat16 patterns (a bfloat16 model's, kept as they
     * ship: half the memory), in w's layout, w then NULL; the products widen
     * them exactly, the same bits as converting them first.
     */
    const uint16_t *w16;
    /*
     * Or ggml's quantized blocks (a GGUF file's, kept as they ship: about
     * its file's size), stored (out, in) with ld = in, wq_type their dtype
     * (tensor.h); the products widen a slice of rows at a time, the same
     * bits as widening them all first.  w and w16 then NULL.
     */
    const unsigned char *wq;
    int wq_type;
    const float *b;
    int in, out;
    int ld;
    bool out_in;
    /*
     * w packed once in the products' own layout (decoder_pack), or empty:
     * the products then pack w on every call.  The same bits either way.
     */
    struct linalg_packed packed;
    /*
     * Its products in the opt-in int8 arithmetic (--arith int8,
     * decoder_use_int8): llama.cpp's, not the exact one; from its pack or
     * its blocks alike (the same bits).
     */
    bool int8;
};

/* A norm's weights: LayerNorm's scale (gamma) and shift (beta); RMSNorm's scale (no shift). */
struct decoder_norm_weights {
    const float *scale, *shift;
};

/*
 * One expert of a mixture: a SwiGLU MLP of d_expert (Qwen3MoeMLP); or, when
 * fused, gate holds gate and up interleaved (2 d_expert outputs, gate's at
 * the even ones: gpt-oss's gate_up_proj) and up is empty.
 */
struct decoder_expert {
    struct decoder_linear gate, up, down;
    bool fused;
};

struct decoder_block {
    struct decoder_norm_weights norm1;
    struct decoder_linear q;       /* d_model -> the queries' width, the heads side by side */
    struct decoder_linear k, v;    /* d_model -> the keys' and values' width */
    struct decoder_norm_weights q_norm, k_norm; /* QK-norm's (head size) scales, or NULL */
    struct decoder_linear o;       /* the attention's output projection: queries' width -> d_model */
    struct decoder_norm_weights norm2;
    /* The norms of attention's and the MLP's outputs (sandwich and post-norm), or NULL. */
    struct decoder_norm_weights attn_post, mlp_post;
    struct decoder_linear gate;    /* SwiGLU's gate (d_model -> d_mlp); unused by GELU */
    struct decoder_linear up, down; /* the MLP */
    /* A sparse layer's: the router (d_model -> n_experts, no bias) and its n_experts experts. */
    struct decoder_linear router;
    struct decoder_expert *experts;
    const float *sinks; /* (n_head) each head's sink logit (cfg.sinks), or NULL */
};

/*
 * The linears of a block, in the order they are packed: q k v o gate up
 * down (DECODER_BLOCK_LINEARS of them), then in a model with experts its
 * router and each expert's gate, up and down: decoder_block_linears(c) in
 * all, the same for every layer; decoder_block_linear gives NULL for one a
 * layer lacks (a dense layer's experts).
 */
#define DECODER_BLOCK_LINEARS 7
int decoder_block_linears(const struct decoder_config *c);
struct decoder_linear *decoder_block_linear(struct decoder_block *b, int i);

/*
 * The roles of a decoder's tensors: the rows of an architecture's name
 * table (architecture.h).  Per layer roles have %d for the layer in their
 * names.  A role a layout lacks is NULL there.
 */
enum arch_role {
    ROLE_TOKEN_EMBD,  /* (vocab, width) */
    ROLE_POS_EMBD,    /* (context, width): learned positions */
    ROLE_OUTPUT_NORM, /* the final norm */
    ROLE_OUTPUT,      /* (outputs, width): the head, read without the layout's prefix */
    ROLE_ATTN_NORM,   /* the norm before attention */
    ROLE_ATTN_QKV,    /* queries, keys and values in one matrix (GPT-2's c_attn) */
    ROLE_ATTN_Q,
    ROLE_ATTN_K,
    ROLE_ATTN_V,
    ROLE_ATTN_OUT,
    ROLE_ATTN_Q_NORM, /* QK-norm's scales (a head's width) */
    ROLE_ATTN_K_NORM,
    ROLE_FFN_NORM,    /* the norm before the MLP */
    ROLE_ATTN_POST_NORM, /* the norm of attention's output (Gemma 3, Olmo 3) */
    ROLE_FFN_POST_NORM,  /* the norm of the MLP's output */
    ROLE_FFN_GATE,    /* SwiGLU's gate */
    ROLE_FFN_UP,
    ROLE_FFN_DOWN,
    ROLE_FFN_ROUTER,  /* a sparse layer's router (experts, width) */
    ROLE_EXPERT_GATE, /* expert e's gate, up and down: a second %d for e in their names */
    ROLE_EXPERT_UP,
    ROLE_EXPERT_DOWN,
    ROLE_EXPERT_GATE_UP, /* gate and up in one tensor, interleaved (gpt-oss's gate_up_proj) */
    ROLE_ATTN_SINKS,  /* (n_head) the sinks' logits */
    ARCH_ROLES
};

/* Whose names the weights were read under: Hugging Face's, the book's GPTModel's, OpenAI's. */
enum decoder_names { DECODER_NAMES_HF, DECODER_NAMES_BOOK, DECODER_NAMES_OPENAI, DECODER_NAMES_GGUF };

struct decoder_model {
    struct decoder_config cfg;
    enum decoder_names names;
    /*
     * What the screens call each role's tensor: the name its files give it
     * with the layer and the parameter left off ("c_attn", "q_proj",
     * "W_query", "ff.layers.0"), "" where they have none (architecture_read
     * fills them; decoder_part_name reads them).
     */
    char part_names[ARCH_ROLES][32];
    char source[4096];           /* the weights' file (for messages) */
    char format[176];            /* its format ("safetensors", "TensorFlow checkpoint", "GGUF: Q4_K
                                    168 tensors, Q6_K 29, F32 57", "PyTorch
                                    state dict (its model_state_dict)") */
    char architecture[16];       /* "gpt2", "llama", "qwen2", "qwen3" */
    char title[24];              /* how screens name it: "GPT-2", "Llama", "Qwen3" */
    int bos_token;               /* the config's bos_token_id (what --bos puts first), or -1 */
    /*
     * The tokens its own files say end a text, which stop the writing by
     * default (generation_config.json's eos_token_id, an int or a list; a
     * GGUF's tokenizer.ggml.eos_token_id and eot_token_id), and which key
     * named them; none for the book's files.
     */
    int end_tokens[DECODER_END_MAX];
    int n_end_tokens;
    char end_from[96];
    char *chat_template;         /* a GGUF's tokenizer.chat_template (the model's), or NULL */
    char chat_template_type[16]; /* its type when there but not a string ("UINT32"), else "" */
    char described_by[64];       /* what gave the sizes: "config.json", "hparams.json" or
                                    "the tensors' shapes" */
    char heads_from[160];        /* where no file gives the head count, what did, or "" */
    char context_from[80];       /* what gave the longest text ("n_positions in config.json",
                                    "pos_emb's rows", "the book's Qwen3 settings") */
    int files_read;              /* how many files they were read from */
    const float *tok_embed;      /* the token embedding (vocab_size, d_model): GPT-2's tok_embed */
    const uint16_t *tok_embed16; /* or it as bfloat16 (kept so, tok_embed NULL) */
    const float *pos_embed;      /* learned positions (n_ctx, d_model): pos_embed; NULL with RoPE */
    float rope_freq[DECODER_HEAD_DIM_MAX / 2]; /* RoPE's (decoder_rope_frequencies) */
    float rope_freq_local[DECODER_HEAD_DIM_MAX / 2]; /* the sliding layers' */
    struct decoder_block *blocks; /* (n_layer) */
    struct decoder_norm_weights final_norm;
    const float *lm_head;        /* (outputs, d_model): tok_embed when tied; a classifier's own head */
    const uint16_t *lm_head16;   /* or it as bfloat16 (tok_embed16 when tied) */
    const unsigned char *tok_embedq, *lm_headq; /* or either as quantized blocks (wq's rules) */
    int tok_embedq_type, lm_headq_type;
    const float *head_bias;      /* (outputs) a classifier head's bias, or NULL */
    struct linalg_packed head_packed; /* lm_head packed once (decoder_pack), or empty */
    bool head_int8;              /* the head's products in the int8 arithmetic (decoder_use_int8) */
    void *weights_map;           /* the weights' memory: one mapping, freed with the model */
    size_t weights_map_bytes;
    size_t weights_used;         /* the bytes of it the weights were read into */
    size_t weights_released;     /* the bytes of it given back (decoder_release_unpacked) */
    unsigned char *weights_next; /* where the next tensor goes in it (while loading) */
    struct filemap **maps;       /* the files whose pages some weights are (filemap.h), */
    int map_count;               /*   closed with the model */
    size_t weights_mapped;       /* the bytes of weights read from them in place */
    struct decoder_packer *packer; /* packing meanwhile (decoder_packer_start), or NULL */
};

/*
 * ATTN_OK, or ATTN_EIO naming the file when one of m's mapped files became
 * shorter while its weights were read from it (filemap.h): what every
 * computation from m says once it is done, its result dropped.
 */
enum attn_status decoder_check_files(const struct decoder_model *m, struct attn_error *err);

/*
 * What screens call role's tensor in m: its files' own short name, or a
 * description ("the query projection") for a model whose files named none.
 */
const char *decoder_part_name(const struct decoder_model *m, enum arch_role role);

/*
 * Where m's weights hold a value that is not finite (NaN or infinite; a
 * quantized block whose scale is one widens to such values), said into
 * what ("layer 3's q_proj holds ..."): the token embedding, every layer's
 * norms, linears and biases, the final norm, in that order.  False when
 * every one is finite.  A pass over every weight: for a computation that
 * has already gone wrong (logits that are not numbers), not for every
 * open.
 */
bool decoder_find_nonfinite(const struct decoder_model *m, char *what, size_t size);

/* Frees what the model holds (its weights and blocks); safe on a model of zeros. */
void decoder_destroy(struct decoder_model *m);

/*
 * Packs every linear's weights and the output head once, in the layout the
 * matrix products read (linalg_pack), so that a forward does not repack
 * them on every call (a third of a 64-token GPT-2 forward).  A copy beside
 * the weights, of their type (GPT-2 small's floats: 475 MB more; a
 * bfloat16 model's linears stay bfloat16).  Returns
 * false, leaving the model as it was, when memory runs out; the forward
 * then packs as it goes, with the same bits.
 */
bool decoder_pack(struct decoder_model *m);
/* The bytes the model's packs hold beside its weights (0 before decoder_pack; none for a pack
   made over its own copy). */
size_t decoder_packed_bytes(const struct decoder_model *m);
/*
 * The bytes of weights the model holds: what was read (less what was given
 * back) and the packs.
 */
size_t decoder_weights_bytes(const struct decoder_model *m);
/*
 * The most decoder_pack_replacing holds beside the weights while it packs
 * (an upper bound): a layer's packs before its copies are given back, or
 * the largest matrix (the output head) copied aside or packed beside.
 */
size_t decoder_pack_transient_bytes(const struct decoder_model *m);

/*
 * After decoder_pack: gives the f32 copies of what was packed (every
 * linear's weights, and the token embedding when it is the output head)
 * back to the system, so that the packed ones replace them rather than add
 * to them (GPT-2 small: 475 MB).  Their pointers become NULL; everything
 * reads them through decoder_linear_at and decoder_token_row, the same
 * numbers.  Returns the bytes given back (m->weights_released).
 */
size_t decoder_release_unpacked(struct decoder_model *m);

/*
 * decoder_pack and decoder_release_unpacked at once, a layer at a time:
 * each layer's f32 copies are given back as soon as its packs are made, so
 * that opening never holds the whole model twice (the peak is the packs
 * and one layer's copies).  When memory runs out, what is packed stays
 * packed and the rest is read from its f32 copies (the same bits); returns
 * whether everything was packed.
 */
bool decoder_pack_replacing(struct decoder_model *m);

/*
 * The weights still read from a mapped file (what was not packed: an
 * untied embedding, GPT-2's positions) made the process's own pages, so
 * that the file truncated or saved over later changes nothing (the view
 * calls it once it has packed; --print reads the file as it computes, and
 * refuses a run the file shrank under: decoder_check_files).
 */
void decoder_pin_mapped(struct decoder_model *m);

/*
 * Packing while the model is in use (the view's first frame is drawn from
 * the weights as they are, unpacked: the same bits): decoder_packer_start
 * packs every linear and the head on a thread of its own into packs m does
 * not see, reading m's weights only; decoder_packer_done says, without
 * waiting, whether it has finished; decoder_packer_adopt waits for it, and
 * when every pack was made puts them in m and gives back the weights they
 * replace (as decoder_pack_replacing does).  m must not be read by anyone
 * else while it is adopted, nor destroyed before.  Adopting frees p.
 */
struct decoder_packer;
struct decoder_packer *decoder_packer_start(const struct decoder_model *m);
bool decoder_packer_done(const struct decoder_packer *p);
bool decoder_packer_adopt(struct decoder_packer *p, struct decoder_model *m);
/*
 * Without waiting: the layers the thread has finished put into m so far,
 * each layer's weights given back as it is (so that packing meanwhile
 * holds little more than the model: the packs replace it a layer at a
 * time); the layers put in, in all.  Only while nothing computes from m.
 */
int decoder_packer_adopt_ready(struct decoder_packer *p, struct decoder_model *m);
/* Stops it as soon as the matrix it is packing is done, and frees it and its packs. */
void decoder_packer_cancel(struct decoder_packer *p);

/*
 * A linear (linear.c, the one seam over its storage): y (n, out) = x (n,
 * in) W + b, W as the file stores it (its pack, float32, bfloat16 or
 * quantized blocks: the same bits whichever serves).
 */
void decoder_linear_apply(const struct decoder_linear *l, const float *x, int n, float *y,
                          int threads);
/*
 * Puts every matrix of m the int8 arithmetic reads (quantized Q4_0, Q8_0,
 * Q4_K or Q6_K) into it: llama.cpp's arithmetic (linalg.h), opt-in, never
 * the default; the rest stay exact.  Returns how many it put, *of of how
 * many matrices (the linears and the head).
 */
int decoder_use_int8(struct decoder_model *m, int *of);

/* A weight's (or else a bias's, *row -1) first value that is not finite; whether there is one. */
bool decoder_linear_nonfinite(const struct decoder_linear *l, int *row, int *col);
/* The dtype's name of l's quantized blocks ("Q4_K"), or NULL when l is not kept quantized. */
const char *decoder_linear_blocks(const struct decoder_linear *l);
/*
 * The bytes of l's rows (stored out by in) as it keeps them, and one row's
 * size: for putting rows back in another order where they lie.
 */
unsigned char *decoder_linear_rows(const struct decoder_linear *l, size_t *row_bytes);
/*
 * Weight (in, out) of l, whatever its storage (float32, bfloat16, quantized
 * blocks, or its pack once the copy is released): the seam callers read a
 * weight through, never l->w, w16 or wq themselves.
 */
float decoder_linear_at(const struct decoder_linear *l, int in, int out);
/*
 * Whether l's weights are quantized blocks (in the file's layout or packed);
 * then *type is their dtype (tensor.h) and the block that holds weight (0,
 * out) says how it is made: *scale times *level, then minus (or plus, for
 * the _1 types) *min when *has_min.  The same numbers either way.
 */
bool decoder_linear_block(const struct decoder_linear *l, int out, int *type, float *scale,
                          float *min, int *level, bool *has_min);

/* Row id of the token embedding (d_model floats) into row. */
void decoder_token_row(const struct decoder_model *m, int id, float *row);
/* Row id of the head (the output id's d_model weights) into row, whatever its storage. */
void decoder_head_row(const struct decoder_model *m, int id, float *row);
/*
 * logits (n, vb) = x (n, d_model) times the head's outputs v0 .. v0 + vb - 1,
 * through its pack or as kept (NaN when a quantized head finds no memory);
 * no cap or scale yet.
 */
void decoder_head_logits(const struct decoder_model *m, const float *x, int n, int v0, int vb,
                         float *logits, int threads);

/* Rows r0 .. r0 + count - 1 of quantized (., in) blocks q of dtype type, widened into out. */
void decoder_quant_rows(const unsigned char *q, int type, int in, int r0, int count, float *out);
/* The bytes of one row of in values of quantized dtype type. */
size_t decoder_quant_row_bytes(int type, int in);

/*
 * y (n, out) = x (n, in) . W^T for W (out, in) quantized blocks: a slice of
 * W's rows widened at a time (on the threads) and multiplied as float32;
 * y's leading dimension ldy.  The same bits as widening W first.  -1 when
 * memory runs out.
 */
int decoder_gemm_quant(const unsigned char *q, int type, int n, int out, int in, const float *x,
                       float *y, int ldy, int threads);
/*
 * The same product in the int8 arithmetic (decoder_use_int8) for a type it
 * reads: a slice of W's rows put into panels at a time, the same bits as
 * from W's pack.  -1 for another type or when memory runs out.
 */
int decoder_gemm_quant_int8(const unsigned char *q, int type, int n, int out, int in,
                            const float *x, float *y, int ldy, int threads);

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
    float *mlp;     /* (n, C) the down projection (GPT-2's c_proj of the MLP); a sparse layer:
                       the experts' weighted sum */
    float *mlp_normed; /* (n, C) mlp normed (sandwich and post-norm), or NULL */
    float *resid2;  /* (n, C) resid1 + mlp (mlp_normed): the block's output: kept for every
                       layer */
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
    struct decoder_layer_stages *layers; /* (n_layer) */
    float *final;                        /* (n, C) the final norm's output */
    int *top_ids;                        /* (n, top) the likeliest next tokens (or classes),
                                            likeliest first */
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
    bool causal;
    float *divisors;                     /* (n_layer) each layer's decoder_divisor */
    unsigned char *ablated;              /* (n_layer * n_head) the knobs' ablated heads, or NULL */
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
     * (n_layer * n_head) 1 where a head is ablated: its context is zeroed
     * before the output projection, as if it had attended to nothing; NULL: none.
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
};

#define DECODER_NO_ROOM (-1)

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
