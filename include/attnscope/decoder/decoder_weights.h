/*
 * decoder_weights.h: a decoder's weights (see decoder.h): its linear maps as
 * the file stores them (float, bfloat16, half or quantized blocks, packed
 * once for the kernels), each block's, the model that holds them, and the
 * products over them.
 */
#ifndef ATTNSCOPE_DECODER_MODEL_WEIGHTS_H
#define ATTNSCOPE_DECODER_MODEL_WEIGHTS_H

#include <stdbool.h>
#include <stddef.h>

#include "attnscope/base/status.h"
#include "attnscope/decoder/decoder_config.h"
#include "attnscope/kernels/linalg.h"
#include "attnscope/storage/linear.h"

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

/*
 * A Gated DeltaNet layer's own weights (decoder_gdn; its output projection
 * is the block's o): the queries', keys' and values' projection side by
 * side (in_proj_qkv), the output gate's (in_proj_z), beta's and the
 * decay's (in_proj_b, in_proj_a: one per value head), the convolution's
 * taps (conv channels, conv taps each), dt_bias and A_log (a value head's
 * each), the gated norm's scale (a value head's width).
 */
struct decoder_gdn_weights {
    struct decoder_linear qkv, z, b, a;
    const float *conv, *dt_bias, *a_log, *norm;
    bool a_negated; /* a_log holds -exp(A_log) (llama.cpp's ssm_a), not A_log */
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
    /* Its shared expert (moe.d_shared wide) and that expert's gate (d_model -> 1), or empty. */
    struct decoder_expert shared;
    struct decoder_linear shared_gate;
    const float *sinks; /* (n_head) each head's sink logit (cfg.sinks), or NULL */
    struct decoder_gdn_weights gdn; /* a linear-attention layer's; else empty */
    /*
     * Gemma 4's per-layer embedding in this layer (cfg.ple_dim): its gate
     * (d_model -> ple_dim), projection (ple_dim -> d_model) and the norm of
     * that; and the layer's output scalar (cfg.layer_scalar; else 1).
     */
    struct decoder_linear ple_gate, ple_proj;
    struct decoder_norm_weights ple_norm;
    float scalar;
};

/*
 * The linears of a block, in the order they are packed: q k v o gate up
 * down, Gated DeltaNet's qkv z b a (DECODER_BLOCK_LINEARS of them), then in a model with experts its
 * router and each expert's gate, up and down, then a shared expert's gate,
 * up and down and its own gate when it has one: decoder_block_linears(c) in
 * all, the same for every layer; decoder_block_linear gives NULL for one a
 * layer lacks (a dense layer's experts).
 */
#define DECODER_BLOCK_LINEARS 11
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
    ROLE_SHARED_GATE, /* the shared expert's gate, up and down projections */
    ROLE_SHARED_UP,
    ROLE_SHARED_DOWN,
    ROLE_SHARED_ROUTER, /* the shared expert's own gate: (1, width), or (width) in a GGUF */
    ROLE_ATTN_SINKS,  /* (n_head) the sinks' logits */
    /* A Gated DeltaNet layer's (decoder_gdn_weights): */
    ROLE_GDN_QKV,     /* its queries', keys' and values' projection */
    ROLE_GDN_Z,       /* the output gate's */
    ROLE_GDN_B,       /* beta's */
    ROLE_GDN_A,       /* the decay's */
    ROLE_GDN_CONV,    /* the convolution's taps (channels, 1, taps) */
    ROLE_GDN_DT_BIAS, /* (value heads) */
    ROLE_GDN_A_LOG,   /* (value heads) */
    ROLE_GDN_NORM,    /* the gated norm's scale (a value head's width) */
    ROLE_GDN_OUT,     /* its output projection */
    /* Gemma 4's per-layer embeddings (cfg.ple_dim) and layer scalars: */
    ROLE_PLE_EMBD,       /* (vocab, n_layer ple_dim) every layer's columns of each token */
    ROLE_PLE_MODEL_PROJ, /* the embedding's projection (n_layer ple_dim, width) */
    ROLE_PLE_PROJ_NORM,  /* that projection's norm (ple_dim) */
    ROLE_PLE_GATE,       /* a layer's gate (ple_dim, width) */
    ROLE_PLE_PROJ,       /* its projection back (width, ple_dim) */
    ROLE_PLE_NORM,       /* the norm of that (width) */
    ROLE_LAYER_SCALAR,   /* the layer's output scalar (1) */
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
    char left_alone[160];        /* what the file holds beside the text model, never read (a
                                    vision tower's tensors, a multi-token head's), or "" */
    char context_from[80];       /* what gave the longest text ("n_positions in config.json",
                                    "pos_emb's rows", "the book's Qwen3 settings") */
    int files_read;              /* how many files they were read from */
    const float *tok_embed;      /* the token embedding (vocab_size, d_model): GPT-2's tok_embed */
    const uint16_t *tok_embed16; /* or it as bfloat16 (kept so, tok_embed NULL) */
    const float *pos_embed;      /* learned positions (n_ctx, d_model): pos_embed; NULL with RoPE */
    float rope_freq[DECODER_HEAD_DIM_MAX / 2]; /* RoPE's (decoder_rope_frequencies) */
    float rope_freq_local[DECODER_HEAD_DIM_MAX / 2]; /* the sliding layers' */
    struct decoder_block *blocks; /* (n_layer) */
    /*
     * Gemma 4's per-layer embeddings (cfg.ple_dim): the table (vocab_size,
     * n_layer ple_dim) as the file keeps it, the embedding's projection and
     * its norm; empty without.
     */
    const float *ple_embed;
    const uint16_t *ple_embed16;
    const unsigned char *ple_embedq;
    int ple_embedq_type;
    struct decoder_linear ple_model_proj;
    struct decoder_norm_weights ple_proj_norm;
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
 * Puts every matrix of m the int8 arithmetic reads (quantized Q4_0, Q8_0,
 * Q4_K or Q6_K) into it: llama.cpp's arithmetic (linalg.h), opt-in, never
 * the default; the rest stay exact.  Returns how many it put, *of of how
 * many matrices (the linears and the head).
 */
int decoder_use_int8(struct decoder_model *m, int *of);


/*
 * Row id of a (rows, width) table kept as float32 f, bfloat16 h or
 * quantized blocks q of qtype (whichever is not NULL) into row; false when
 * none is (the token embedding, Gemma 4's per-layer table).
 */
bool decoder_table_row(const float *f, const uint16_t *h, const unsigned char *q, int qtype,
                       int width, int id, float *row);
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


#endif
