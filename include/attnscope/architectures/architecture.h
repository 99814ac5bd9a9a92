/*
 * architecture.h: a trained decoder's architecture as a description: the
 * config.json model_types it claims, the file layouts its weights come
 * in, a name table (a row per role, the tensor's name in each layout, in
 * the spirit of llama.cpp's LLM_TENSOR_NAMES), its config reader and the
 * parts it uses (decoder.h).  Reading a model is one walk over the table
 * (architecture_read); an architecture supplies only what differs.
 *
 * Adding an architecture is a file (its table, its config reader, its
 * describe) and a row in architectures[] (architectures.c); adding a
 * layout is a column of every table that has it and a row of each
 * architecture's layouts; adding a part is its kind in decoder.h and its
 * roles here.
 */
#ifndef ATTNSCOPE_ARCHITECTURE_H
#define ATTNSCOPE_ARCHITECTURE_H

#include <jansson.h>
#include <stdbool.h>

#include "attnscope/base/status.h"
#include "attnscope/decoder/decoder.h"
#include "attnscope/decoder/weights.h"

/* The layouts of tensor names a model's files come in: a table's columns. */
enum arch_layout {
    ARCH_HF,     /* Hugging Face's (safetensors, pytorch_model.bin) */
    ARCH_BOOK,   /* the book's notebooks' (torch.save of its GPTModel, Llama 3.2, Qwen3) */
    ARCH_OPENAI, /* OpenAI's TensorFlow checkpoint of GPT-2 */
    ARCH_GGUF,   /* llama.cpp's GGUF (token_embd, blk.N.attn_q ...): its metadata gives the sizes */
    ARCH_LAYOUTS
};

/* The roles of a decoder's tensors (a table's rows) are decoder.h's enum arch_role. */

/* A role's tensors in one layout: the weight (a norm's scale) and its bias (a norm's shift). */
struct arch_tensor {
    const char *weight;
    const char *bias; /* NULL: the layout has none for this role */
};

/*
 * A row of a name table: a role, and its tensors in each layout.  A row
 * that gives no GGUF name takes llama.cpp's for its role (arch_gguf_names);
 * ARCH_NO_TENSOR says the layout has none where that map has one.
 */
struct arch_name {
    enum arch_role role;
    struct arch_tensor in[ARCH_LAYOUTS];
};
#define ARCH_NO_TENSOR ""

/* llama.cpp's name of every role's tensors in a GGUF (blk.N.attn_q.weight ...), one map. */
extern const struct arch_tensor arch_gguf_names[ARCH_ROLES];
/*
 * The rows architectures build on (architecture_names.c): Llama's (Llama,
 * Qwen2, Mixtral, gpt-oss) and Qwen3's (its book's norms' "scale";
 * Qwen3-MoE, OLMoE).
 */
#define ARCH_LLAMA_ROWS 14
#define ARCH_QWEN3_ROWS 14
extern const struct arch_name arch_llama_rows[ARCH_LLAMA_ROWS];
extern const struct arch_name arch_qwen3_rows[ARCH_QWEN3_ROWS];

/* How a layout stores a linear's matrix. */
enum arch_storage {
    STORE_OUT_IN,     /* (out, in): nn.Linear, y = x W^T + b */
    STORE_IN_OUT,     /* (in, out): GPT-2's Conv1D, y = x W + b */
    STORE_ONE_IN_OUT, /* (1, in, out): OpenAI's Conv1D */
};

/* One layout an architecture's files come in. */
struct arch_layout_of {
    enum arch_layout layout;
    const char *marker;        /* a tensor only this layout has (found with a prefix below) */
    const char *prefixes[3];   /* put before every name but the head's ("", "model.") */
    enum arch_storage storage;
    enum decoder_names names;  /* what the screens call its tensors */
    /*
     * The queries' and keys' rows of each head stored with RoPE's pairs
     * side by side (llama.cpp's conversion of the llama architecture
     * permutes them so: row 2b + a of a head is Hugging Face's row
     * a d/2 + b); put back as they were when read.
     */
    bool pairs_interleaved;
};

struct arch_options {
    const char *weights; /* a weights file to read; NULL: the folder's (tensors.h) */
    int heads;           /* --heads: the head count where no file gives it (0: none) */
    bool widen;          /* quantized matrices widened to float32 when read (else kept) */
};

struct architecture;

/* What reading a model keeps: the tensors, the architecture and its layout. */
struct arch_loader {
    struct weights_loader w;
    const struct architecture *arch;
    const struct arch_layout_of *layout;
    int expert; /* the expert a name's second %d means (ROLE_EXPERT_*) */
};

/*
 * A mixture of experts' config keys (each architecture names them its own
 * way): how many experts, each one's width, whether the chosen weights are
 * divided by their sum (NULL: always, Mixtral's) and that key's default,
 * and whether some layers are dense (decoder_sparse_step, mlp_only_layers).
 */
struct arch_moe_keys {
    const char *count;   /* "num_experts", "num_local_experts" */
    const char *width;   /* "moe_intermediate_size", "intermediate_size" */
    const char *norm;    /* "norm_topk_prob", or NULL: always divided */
    bool norm_default;
    bool dense_layers;   /* decoder_sparse_step and mlp_only_layers read (Qwen3-MoE's) */
    bool gguf_norm;      /* a GGUF's chosen weights renormalised (llama.cpp's build_moe_ffn
                            norm_w for the architecture) */
    /*
     * gpt-oss's: the router's top k logits softmaxed among themselves, biases
     * on the router and every expert, and the experts' SwiGLU clamped at the
     * key limit ("swiglu_limit", its default limit_default; alpha from
     * "swiglu_alpha", 1.702); NULL: none of these.
     */
    const char *limit;
    double limit_default;
    /*
     * A shared expert's width (Qwen3-Next's and Qwen3.5-MoE's
     * "shared_expert_intermediate_size"; a GGUF's
     * expert_shared_feed_forward_length), or NULL: none.
     */
    const char *shared;
    /*
     * Hugging Face's names (the layer's %d) of every expert's projections
     * stacked as transformers keeps them: gate_up (experts, 2 width, in), each
     * expert's gate its first width rows and its up the rest, and down
     * (experts, in, width); used when the file has them (Qwen3.5-MoE's hub
     * checkpoints), else the per-expert names.  NULL: never stacked so.
     */
    const char *stacked_gate_up, *stacked_down;
};

/*
 * The parts an architecture's blocks are built from, the same in every file
 * format it comes in, and the defaults of the config keys that choose among
 * them: what each reader (config.json, the book's files, a GGUF's metadata)
 * starts from (arch_parts_apply) before it fills in the sizes.  A new
 * architecture of known parts is a row of these, not a reader.
 */
struct arch_parts {
    enum decoder_positions positions;
    enum decoder_norm norm;
    enum decoder_mlp mlp;
    enum decoder_block_norms block_norms;
    bool qk_norm;        /* an RMSNorm over each head's queries and keys (Qwen3, Gemma 3) */
    bool qk_norm_full;   /* over the whole queries' and keys' width (Olmo 3) */
    bool norm_plus_one;  /* RMSNorm scales by 1 + w (Gemma) */
    bool embed_scaled;   /* the token embeddings times sqrt(width) (Gemma) */
    bool all_biased;     /* every linear has a bias, whatever the file says (GPT-2) */
    bool qkv_biased;     /* q, k and v have biases and the output none; attention_bias not read
                            (Qwen2) */
    bool mlp_bias_key;   /* mlp_bias read from config.json (Llama) */
    int head_dim;        /* head_dim's default; 0: width / heads */
    double eps;          /* the norms' epsilon when the config has none */
    double rope_theta;   /* rope_theta's default */
    bool rope_local_key; /* the sliding layers' base from rope_local_base_freq (Gemma 3); else
                            they turn with rope_theta */
    int sliding_pattern; /* sliding_window_pattern's default: every this many layers one full */
    bool tied;           /* tie_word_embeddings' default */
    double query_scalar; /* query_pre_attn_scalar's default (Gemma); 0: the key is not read */
    double final_softcap, attn_softcap; /* their keys' defaults (Gemma 2's 30 and 50) */
    /* Its MLP a mixture of experts in the layers its config says: the keys that size it. */
    const struct arch_moe_keys *moe;
    /* Its config's sliding_window is used when set (Mistral's, Mixtral's): refused then. */
    bool window_key;
    bool attention_bias; /* attention_bias's default (gpt-oss: true) */
    bool sinks;          /* a learned sink logit per head in every softmax (gpt-oss) */
    bool sliding_rope_full; /* its sliding layers turn with the full layers' RoPE (gpt-oss) */
    /*
     * The stretch of RoPE when its config says none (gpt-oss's YaRN: factor
     * 32 over 4096 positions, not truncated), which a GGUF's rope.scaling.type
     * "yarn" is read as too; NULL: none.
     */
    const struct decoder_rope_scaling *rope_default;
    /* GGUF keys (ARCH.key) that its describe reads itself, not refused by the common reader. */
    const char *const *gguf_own_keys;
};

struct architecture {
    const char *name;               /* "gpt2", "qwen3": the decoder_model's architecture */
    const char *title;              /* how screens name it: "GPT-2", "Qwen3" */
    const char *const *model_types; /* the config.json model_types it reads (NULL-ended) */
    const char *const *classes;     /* the config.json architectures' classes it reads */
    const struct arch_layout_of *layouts;
    int layout_count;
    const struct arch_name *names;  /* its name table */
    int name_count;
    bool keep_bf16;    /* its bfloat16 matrices stay bfloat16 in memory (half of float32) */
    bool own_tokenizer; /* its tokenizer is its own (a Llama's); else GPT-2's may be borrowed */
    /*
     * The sizes into ld->w.m->cfg (and what gave them: described_by,
     * context_from, heads_from, bos_token), from the folder's config file,
     * or the tensors' shapes where there is none; ld->w.sizes_from set.
     */
    enum attn_status (*describe)(struct arch_loader *ld, const char *dir,
                                 const struct arch_options *o, struct attn_error *err);
    struct arch_parts parts; /* its parts, in every format alike */
    /*
     * A GGUF's general.architecture for it when not its name (Qwen3-MoE's
     * "qwen3moe"; Mixtral's "llama", told from Llama by its expert_count).
     */
    const char *gguf;
    /*
     * The rows it builds on, and names its differences from: its rows are
     * base's, each replaced by a row of names of the same role, then names'
     * others (as Hugging Face's modular files write a model as another's
     * diff).  NULL: names alone.
     */
    const struct arch_name *base;
    int base_count;
    /*
     * The tensors of a layer whose mixer is not attention (Qwen3.5's Gated
     * DeltaNet: arch_read_gdn), into b; 0, or -1 with err set.  NULL: every
     * layer attends.
     */
    int (*read_mixer)(struct arch_loader *ld, struct decoder_block *b, int layer,
                      struct attn_error *err);
};

/*
 * a's name table as it reads files: base's rows with its own differences,
 * every GGUF name filled in from arch_gguf_names, ARCH_NO_TENSOR made NULL;
 * made once, kept for the process (a's address names it: an architecture
 * is a static table, never one made and freed).
 */
const struct arch_name *arch_rows(const struct architecture *a, int *count);

/*
 * c's parts from a's list (the kinds, the flags, the defaults a reader then
 * overrides from its file); the sizes are left as they are.
 */
void arch_parts_apply(const struct architecture *a, struct decoder_config *c);

/* Every architecture attnscope reads, in the order files are matched to them; NULL-ended. */
extern const struct architecture *const architectures[];

/* The architecture reading config.json's model_type (or its architectures' class); NULL. */
const struct architecture *architecture_of_type(const char *model_type);
/* The model_types every architecture reads, ", " between them, into buf. */
const char *architecture_types(char *buf, size_t size);
/*
 * The architecture model_type names when it is kin's kind (read by the same
 * describe: the config reader of kin's family asks whether a type is its
 * own), else NULL.
 */
const struct architecture *architecture_of_kin(const char *model_type,
                                               const struct architecture *kin);

/*
 * The architecture of the model in dir (or the weights file o->weights):
 * config.json's model_type names it (GPT-2 when the config has none);
 * without a config.json, the first whose layout's marker the tensors have
 * (NULL when none: the loader then says what it looked for).  -1 with err
 * set for a config that cannot be read or a model_type no architecture
 * reads.
 */
int architecture_find(const char *dir, const char *weights, const struct architecture **arch,
                      struct attn_error *err);

/*
 * Reads the model in dir (or o->weights) as arch (architecture_find's, or
 * NULL to find it): the layout its names say, its sizes (arch->describe,
 * then decoder_config_check), every tensor of the table checked against
 * the sizes and read into the model's own memory.  Nothing is left
 * half-loaded on failure.  o may be NULL.
 */
enum attn_status architecture_read(struct decoder_model *m, const struct architecture *arch,
                                   const char *dir, const struct arch_options *o,
                                   struct attn_error *err);

/* architecture_find, then architecture_read. */
enum attn_status architecture_load(struct decoder_model *m, const char *dir,
                                   const struct arch_options *o, struct attn_error *err);

/*
 * The name of role's weight (or bias) in ld's layout, for layer (ignored
 * by the model-wide roles), into buf; NULL when the layout has none.  The
 * layout's prefix is not in it (weights_* add it).
 */
const char *arch_name(const struct arch_loader *ld, enum arch_role role, int layer, bool bias,
                      char *buf, size_t size);

/*
 * role's linear of layer (in -> out, its bias when has_bias) into l, as the
 * layout stores it; 0, or -1 with err set.
 */
int arch_read_linear(struct arch_loader *ld, struct decoder_linear *l, enum arch_role role,
                     int layer, int in, int out, bool has_bias, struct attn_error *err);
/*
 * A sparse layer's router and experts (experts.c): one tensor per expert's
 * projection (Hugging Face's Qwen3-MoE), or each projection of every
 * expert in one (a GGUF's; gpt-oss's gate_up_proj, in float or in MXFP4's
 * blocks and scales); the biases when the model has them.
 */
int arch_read_experts(struct arch_loader *ld, struct decoder_block *b, int i,
                      struct attn_error *err);

/*
 * A mixture of experts under its architecture's keys (k) from a config.json
 * (root, read from path): how many experts and how wide,
 * num_experts_per_tok, whether the chosen weights are divided by their sum,
 * which layers are sparse, gpt-oss's limit; ATTN_EPARSE naming the key.
 */
enum attn_status arch_config_experts(const struct arch_moe_keys *k, struct decoder_config *c,
                                     json_t *root, const char *path, struct attn_error *err);

/* Whether the file has role's weight for layer in ld's layout. */
bool arch_has(const struct arch_loader *ld, enum arch_role role, int layer);

/* The size of dimension d of role's weight for layer, or -1. */
int64_t arch_dim(const struct arch_loader *ld, enum arch_role role, int layer, int d);

/* How many layers the file has (counted by each layer's first role of the table). */
int arch_count_layers(const struct arch_loader *ld);
/* The first per-layer role of ld's table its layout has: what counts the layers. */
enum arch_role arch_layer_role(const struct arch_loader *ld);
/* The screens' short name of every role ld's layout has, into the model (its part_names). */
void arch_name_parts(struct arch_loader *ld);

/*
 * The range each number of a model's settings must keep, whichever file
 * says it (a config.json key, a GGUF's metadata): one row each, read by
 * every reader, so that a value refused in one format is refused in the
 * other.  A number outside its row's range, NaN or infinite, is refused
 * with its key's name and value.
 */
#define ARCH_BOUND_LIST(X)                                                                   \
    X(ROPE_BASE, 1.0, 1e12)      /* RoPE's theta: rope_theta, ARCH.rope.freq_base */         \
    X(NORM_EPS, 1e-30, 1.0)      /* a norm's epsilon */                                      \
    X(STRETCH, 1e-6, 1e6)        /* a linear stretch of RoPE's frequencies */                \
    X(STRETCH_UP, 1.0, 1e6)      /* Llama 3's and YaRN's factor */                           \
    X(ROPE_TUNING, 1e-6, 1e6)    /* their other numbers (low/high factors, betas, scale) */  \
    X(SOFTCAP, 0.0, 1e12)        /* a cap on the logits or the scores; 0: none */            \
    X(QUERY_SCALAR, 1e-6, 1e12)  /* Gemma's query_pre_attn_scalar */                         \
    X(FRACTION, 0.0, 1.0)        /* partial_rotary_factor */                                 \
    X(POSITIONS, 1, 1 << 24)     /* a RoPE stretch's original context */

enum arch_bound {
#define ARCH_BOUND_ENUM(name, lo, hi) ARCH_BOUND_##name,
    ARCH_BOUND_LIST(ARCH_BOUND_ENUM)
#undef ARCH_BOUND_ENUM
};

/*
 * Whether x keeps bound b; when not, err says so: "FILE: KEY is X, not a
 * number from LO to HI" (key as the file spells it).
 */
bool arch_bound_check(double x, enum arch_bound b, const char *file, const char *key,
                      struct attn_error *err);

/*
 * architecture_config.c: what the config.json readers share.  The number
 * name of obj (def when absent or null) within bound b, NAN with err set
 * naming the file and the key; the model type a config names (model_type,
 * else the model type of an architecture reading one of its classes), or
 * NULL; the kind a RoPE object names (rope_type or type), or NULL.
 */
double arch_config_number(json_t *obj, const char *path, const char *name, double def,
                          enum arch_bound b, struct attn_error *err);
const char *arch_config_type(json_t *root);
const char *arch_config_rope_kind(json_t *o);
/*
 * A RoPE object (rope_scaling's, or one of rope_parameters', called name in
 * messages) into r: default, llama3, linear or yarn (whose original
 * context defaults to max_positions); any other kind refused by name.
 */
enum attn_status arch_config_rope(json_t *sc, const char *path, const char *name,
                                  int max_positions, struct decoder_rope_scaling *r,
                                  struct attn_error *err);
/*
 * Which object holds the stretch, for every architecture's reader:
 * rope_scaling, or (transformers 5's spelling, flat) rope_parameters, into
 * *sc (NULL: none) and *name.  Refused: rope_parameters that is not an
 * object or null, and the two naming kinds that disagree.
 */
enum attn_status arch_config_rope_pick(json_t *root, const char *path, json_t **sc,
                                       const char **name, struct attn_error *err);
/*
 * RoPE from a config, the one reader every architecture's uses: rope_theta
 * (or inside rope_parameters; c->rope_theta is the default), the sliding
 * layers' base (rope_local_base_freq when local_key, else rope_theta),
 * rope_parameters by kind of layer, else the stretch under rope_scaling or
 * rope_parameters (arch_config_rope_pick, arch_config_rope), with one set
 * of refusals: which is not an object, a rope_scaling without rope_type,
 * both spellings disagreeing, a kind not computed, a stretch on sliding
 * layers.
 */
/* partial_rotary_factor other than 1 refused by name (every reader's: not computed yet). */
enum attn_status arch_config_refuse_partial(json_t *root, const char *path, struct attn_error *err);
enum attn_status arch_config_rope_read(json_t *root, const char *path, bool local_key,
                                       struct decoder_config *c, struct attn_error *err);
/*
 * The sizes every Hugging Face config gives (hidden_size,
 * intermediate_size, num_hidden_layers, num_attention_heads,
 * num_key_value_heads, vocab_size, max_position_embeddings, head_dim: the
 * default head_dim, or 0 for hidden / heads) into c, checked to fit.
 */
enum attn_status arch_config_sizes(json_t *root, const char *path, int head_dim,
                                   struct decoder_config *c, struct attn_error *err);
/* The token --bos puts first: bos_token_id when it is one of the vocabulary's, else -1. */
int arch_config_bos(json_t *root, int vocab_size);

/*
 * architecture_gguf.c: a model's description from a GGUF file's metadata, for
 * every architecture that reads the GGUF layout (llama, qwen2, qwen3,
 * gpt2): the sizes under ARCH.* (block_count, embedding_length,
 * feed_forward_length, attention.head_count and head_count_kv,
 * attention.key_length, context_length, rope.freq_base, the norms'
 * epsilon), the parts the architecture has, a head tied when the file has
 * no output.weight.  Every key that would change the computation is
 * honoured or refused by name (rope.scaling.type other than none, a
 * partial rotation, a sliding window, experts, attention that is not
 * causal, a value width unlike the key's).
 */
enum attn_status gguf_describe(struct arch_loader *ld, struct attn_error *err);
struct gguf;
/*
 * ARCH.key of g's metadata into *v, left as it is when absent: a count
 * from least to 2^30 (required: its absence refused), or a number within
 * bound b; anything else refused with the key's name and value.
 */
enum attn_status arch_gguf_count(const struct gguf *g, const char *arch, const char *key,
                                 bool required, int least, int *v, struct attn_error *err);
enum attn_status arch_gguf_number(const struct gguf *g, const char *arch, const char *key,
                                  enum arch_bound b, double *v, struct attn_error *err);

/*
 * After the weights are read: Llama 3's stretched frequencies, which
 * llama.cpp keeps as a tensor of factors (rope_freqs.weight: each
 * frequency divided by its factor) instead of rope_scaling's numbers.
 */
enum attn_status gguf_rope_factors(struct arch_loader *ld, struct attn_error *err);

#endif
