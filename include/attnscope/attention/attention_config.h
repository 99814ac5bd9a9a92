/*
 * attention_config.h: every knob a learner can turn, in one struct.
 *
 * The six variants are the classes of the book's chapter 3; each draws its
 * parameters in the order the PyTorch class does, so one seed gives the same
 * numbers in attnscope and in PyTorch.
 */
#ifndef ATTNSCOPE_ATTENTION_CONFIG_H
#define ATTNSCOPE_ATTENTION_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include "attnscope/kernels/rng.h"
#include "attnscope/base/status.h"

/*
 * The variants, one row each: what sets them apart is data in the row, so
 * code asks what a variant has (weights? heads? an output projection?)
 * rather than which one it is.
 * X(enum, name, book class, one-line description, projections, heads,
 *   default mask, scaled by default, where dropout acts)
 *   projections  PROJ_NONE (Q = K = V = x), PROJ_RAND (torch.rand matrices,
 *                x @ W), PROJ_LINEAR (nn.Linear, x W^T + b), PROJ_LINEAR_PER_HEAD
 *                (an nn.Linear set per head), PROJ_LINEAR_SPLIT (one set split
 *                into heads, then an output projection), PROJ_LINEAR_LISTS
 *                (per-head nn.Linear with bias in three lists, then an output
 *                projection), PROJ_IN_PROJ (torch.nn.MultiheadAttention's
 *                in_proj_weight, one (3 d_in, d_in) matrix, split into heads, then
 *                out_proj)
 *   heads        whether --heads applies
 *   dropout      ATTN_DROP_WEIGHTS (the attention weights, as the book's
 *                classes) or ATTN_DROP_OUTPUT (the output projection's result)
 */
#define ATTN_VARIANT_LIST(X)                                                              \
    X(ATTN_SIMPLE, "simple", "no class, section 3.3",                                     \
      "no weights: queries = keys = values = the inputs, no scaling", PROJ_NONE, false,    \
      ATTN_MASK_NONE, false, ATTN_DROP_WEIGHTS)                                                              \
    X(ATTN_V1, "v1", "SelfAttention_v1", "torch.rand weight matrices, x @ W", PROJ_RAND,  \
      false, ATTN_MASK_NONE, true, ATTN_DROP_WEIGHTS)                                                        \
    X(ATTN_V2, "v2", "SelfAttention_v2", "nn.Linear projections", PROJ_LINEAR, false,     \
      ATTN_MASK_NONE, true, ATTN_DROP_WEIGHTS)                                                               \
    X(ATTN_CAUSAL, "causal", "CausalAttention",                                           \
      "nn.Linear projections, causal mask, dropout", PROJ_LINEAR, false, ATTN_MASK_CAUSAL, \
      true, ATTN_DROP_WEIGHTS)                                                                               \
    X(ATTN_WRAPPER, "wrapper", "MultiHeadAttentionWrapper",                               \
      "independent CausalAttention heads, concatenated", PROJ_LINEAR_PER_HEAD, true,      \
      ATTN_MASK_CAUSAL, true, ATTN_DROP_WEIGHTS)                                                             \
    X(ATTN_MHA, "mha", "MultiHeadAttention",                                              \
      "d_out split into heads, then an output projection", PROJ_LINEAR_SPLIT, true,       \
      ATTN_MASK_CAUSAL, true, ATTN_DROP_WEIGHTS)                                       \
    X(ATTN_NOTES, "notes", "MultiHeadAttention of the lecture notes (mha.py)",            \
      "a biased nn.Linear per head for Q, K, V; no mask; dropout on the output",          \
      PROJ_LINEAR_LISTS, true, ATTN_MASK_NONE, true, ATTN_DROP_OUTPUT)                   \
    X(ATTN_NN_MHA, "nn-mha", "torch.nn.MultiheadAttention",                               \
      "PyTorch's own class: in_proj split into heads, out_proj; weights averaged",        \
      PROJ_IN_PROJ, true, ATTN_MASK_NONE, true, ATTN_DROP_WEIGHTS)

enum attn_mask {
    ATTN_MASK_NONE,
    ATTN_MASK_CAUSAL /* query i sees keys 0..i only */
};

/* What a variant's nn.Dropout is applied to. */
enum attn_dropout_at {
    ATTN_DROP_WEIGHTS, /* the attention weights, before the context */
    ATTN_DROP_OUTPUT   /* the output projection's result (the notes' class) */
};

enum attn_variant {
#define ATTN_VARIANT_ENUM(e, name, cls, desc, proj, heads, mask, scaled, drop) e,
    ATTN_VARIANT_LIST(ATTN_VARIANT_ENUM)
#undef ATTN_VARIANT_ENUM
    ATTN_VARIANT_COUNT
};

/* Documented limits (doc/attnscope.1), checked by attention_config_check. */
#define ATTN_MAX_DIM 8192
#define ATTN_MAX_HEADS 256
#define ATTN_MAX_DROPOUT_PASS 1000000
/*
 * Numbers drawn for the forward calls before --dropout-pass's, at most
 * (2^32; about a second on a 2 GHz core): 1,000 tokens and 2 heads reach
 * it at pass 2,147, the book's 6 tokens never do.
 */
#define ATTN_MAX_DROPOUT_SKIP (UINT64_C(1) << 32)

struct attention_config {
    enum attn_variant variant;
    int d_out;            /* per head for wrapper, in total for mha; simple and notes ignore it */
    int heads;            /* wrapper, mha, notes and nn-mha; the others have one head */
    uint64_t seed;        /* torch.manual_seed(seed) before the parameters are drawn */
    double dropout;       /* p, in [0, 1) */
    bool train;           /* dropout acts in training mode only */
    enum attn_mask mask;
    bool cross;           /* cross-attention: queries from the sentence (the target), keys and
                             values from a source sentence (--source); no mask */
    bool scale;           /* divide the scores by sqrt(d_k) */
    int scale_dim;        /* divide by sqrt(scale_dim) instead of sqrt(d_k); 0: d_k */
    bool qkv_bias;        /* nn.Linear(..., bias=qkv_bias) for W_query, W_key, W_value */
    double temperature;   /* softmax(scores / (sqrt(d_k) * T)); T > 0 */
    bool positional;      /* add a positional encoding to the embeddings: ... */
    bool positional_learned; /* ... nn.Embedding(n, d_in) drawn after the weights, else sinusoidal */
    enum rng_path rng_path;
    bool dropout_reseed;  /* torch.manual_seed(dropout_seed) just before dropout, as the book does */
    uint64_t dropout_seed;
    int dropout_pass;     /* the mask of the (dropout_pass + 1)-th forward call */
    /* How a trained model chooses the tokens it writes (generate.h; seed seeds the draws): */
    double sample_temperature; /* the book's generate's temperature; 0: greedy (argmax) */
    int top_k;            /* keep the top_k likeliest; 0: no cut */
    double top_p;         /* keep the likeliest whose probabilities reach top_p; 1: no cut */
};

/*
 * The defaults of the command line: mha, d_out 2, 2 heads, seed 123, no
 * dropout, training mode, the variant's mask and scaling, T = 1, the
 * default generator path.
 */
void attention_config_init(struct attention_config *cfg);

/* Sets the variant and the mask (none across sentences) and scaling its class uses. */
void attention_config_set_variant(struct attention_config *cfg, enum attn_variant variant);

/*
 * Checks the knobs against each other and the limits, for d_in-dimensional
 * embeddings.  Messages name the command-line option to change.
 */
enum attn_status attention_config_check(const struct attention_config *cfg, int d_in,
                                        struct attn_error *err);

/* How a variant projects its inputs into Q, K and V. */
enum attn_projection {
    PROJ_NONE,            /* no weights: Q = K = V = x */
    PROJ_RAND,            /* torch.rand (in, out) matrices, x @ W */
    PROJ_LINEAR,          /* nn.Linear (out, in), x W^T (+ b) */
    PROJ_LINEAR_PER_HEAD, /* one nn.Linear set per head, concatenated; d_out per head */
    PROJ_LINEAR_SPLIT,    /* one nn.Linear set split into heads, then out_proj; d_out in total */
    PROJ_LINEAR_LISTS,    /* nn.Linear(d_in, d_in / heads) with bias per head, all Q, all K,
                             all V, then mha_linear (d_in, d_in); d_out is d_in */
    PROJ_IN_PROJ,         /* nn.MultiheadAttention(d_in, heads): out_proj drawn as nn.Linear
                             (its bias then zeroed), in_proj_weight (3 d_in, d_in) by
                             xavier_uniform_, in_proj_bias zero; d_out is d_in */
};

struct attn_variant_info {
    const char *name;
    const char *cls;
    const char *desc;
    enum attn_projection proj;
    bool heads;                  /* --heads applies */
    enum attn_mask mask;         /* the class's mask */
    bool scaled;                 /* the class divides by sqrt(d_k) */
    enum attn_dropout_at dropout_at; /* what its nn.Dropout drops */
};

/* The row of variant v (an unknown v gets the simple variant's). */
const struct attn_variant_info *attention_variant_info(enum attn_variant v);
/* Whether the variant has weights (every one but simple). */
bool attention_variant_has_weights(enum attn_variant v);
/* Whether the variant's heads split d_in itself (notes, nn-mha), which d_out does not set. */
bool attention_variant_splits_d_in(enum attn_variant v);
/* Whether the variant also gives the heads' weights averaged (nn-mha, as PyTorch returns them). */
bool attention_variant_averages(enum attn_variant v);
/* Whether the variant ends with an output projection (mha, notes, nn-mha). */
bool attention_variant_has_out_proj(enum attn_variant v);

const char *attention_variant_name(enum attn_variant v);
const char *attention_variant_class(enum attn_variant v);
const char *attention_variant_description(enum attn_variant v);
/* Returns 0 and sets *v if name is a variant's name, -1 otherwise. */
int attention_variant_parse(const char *name, enum attn_variant *v);

/* The shapes a configuration implies (all derived, never set by hand). */
struct attention_shape {
    int d_in;
    int heads;        /* 1 unless wrapper or mha */
    int head_dim;     /* columns of Q, K and V per head (d_k) */
    int d_qkv;        /* heads * head_dim: the width of Q, K, V and context */
    int d_output;     /* the width of the output: d_out for mha, d_in for notes, d_qkv otherwise */
    int sets;         /* independent projection sets: heads for wrapper, 0 for simple, else 1 */
    int d_set;        /* columns each projection set produces */
    bool dropout_on;  /* train && dropout > 0 */
    bool dropout_output; /* dropout acts on the output, not the weights (notes) */
    int dropout_calls;/* separate nn.Dropout calls per forward: heads for wrapper, else 1 */
    double divisor;   /* scaled = masked / divisor */
};

void attention_shape_of(const struct attention_config *cfg, int d_in, struct attention_shape *s);

#endif
