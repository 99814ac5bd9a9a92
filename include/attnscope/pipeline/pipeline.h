/*
 * pipeline.h: a sentence in, every stage of attention out.
 *
 * A struct pipeline owns everything one configuration computes: the tokens,
 * the embeddings (and positional encoding), the parameters and the stage
 * buffers.  Front ends build a new pipeline when a knob or the sentence
 * changes and swap it in only when it succeeds, so a bad input never loses
 * what is on screen.  Stages are reached by name through
 * pipeline_stage_view(), the single accessor the TUI, --print, --export and
 * the tests all use.
 */
#ifndef ATTNSCOPE_PIPELINE_H
#define ATTNSCOPE_PIPELINE_H

#include <stdbool.h>
#include <stddef.h>

#include "attnscope/attention/attention.h"
#include "attnscope/attention/attention_config.h"
#include "attnscope/pipeline/family.h"
#include "attnscope/attention/params.h"
#include "attnscope/attention/qkv.h"
#include "attnscope/decoder/decoder.h"
#include "attnscope/kernels/rng.h"
#include "attnscope/base/status.h"
#include "attnscope/text/tokenizer.h"
#include "attnscope/text/vocab.h"

struct model;

/*
 * The stages, in pipeline order: one row each, and every list, name table
 * and accessor is made from these rows (src/core/pipeline/pipeline_stage.c).
 * X(enum, id, per-head, cells, needs)
 *   id     the stage's name (--stage, --export's file names) and the suffix
 *          of its functions in pipeline_stage.c (stage_view_ID, formula_ID):
 *          a row whose functions are missing does not compile.
 *   cells  what the numbers are (enum stage_cells): signed values, or
 *          weights (proportions) with masked and, after dropout, dropped cells.
 *   needs  when a pipeline has the stage (enum stage_needs).
 */
#define PIPELINE_STAGE_LIST(X)                                            \
    X(STAGE_EMBEDDINGS, embeddings, false, CELLS_VALUES, NEEDS_POSITIONAL) \
    X(STAGE_POSITIONAL, positional, false, CELLS_VALUES, NEEDS_POSITIONAL) \
    X(STAGE_INPUTS, inputs, false, CELLS_VALUES, NEEDS_SENTENCE)           \
    X(STAGE_SOURCE, source, false, CELLS_VALUES, NEEDS_SOURCE)             \
    X(STAGE_PRE_ATTN_NORM, ln1, false, CELLS_VALUES, NEEDS_PRE_NORM)                 \
    X(STAGE_QUERIES, queries, false, CELLS_VALUES, NEEDS_NOTHING)          \
    X(STAGE_KEYS, keys, false, CELLS_VALUES, NEEDS_NOTHING)                \
    X(STAGE_VALUES, values, false, CELLS_VALUES, NEEDS_NOTHING)            \
    X(STAGE_QUERIES_NORMED, queries_normed, false, CELLS_VALUES, NEEDS_QK_NORM) \
    X(STAGE_KEYS_NORMED, keys_normed, false, CELLS_VALUES, NEEDS_QK_NORM)  \
    X(STAGE_QUERIES_ROTATED, queries_rotated, false, CELLS_VALUES, NEEDS_ROPE) \
    X(STAGE_KEYS_ROTATED, keys_rotated, false, CELLS_VALUES, NEEDS_ROPE)   \
    X(STAGE_SCORES, scores, true, CELLS_VALUES, NEEDS_NOTHING)             \
    X(STAGE_MASKED, masked, true, CELLS_VALUES, NEEDS_NOTHING)             \
    X(STAGE_SCALED, scaled, true, CELLS_VALUES, NEEDS_NOTHING)             \
    X(STAGE_WEIGHTS, weights, true, CELLS_WEIGHTS, NEEDS_NOTHING)          \
    X(STAGE_DROPPED, dropped, true, CELLS_DROPPED, NEEDS_WEIGHT_DROPOUT)   \
    X(STAGE_AVERAGED, averaged, false, CELLS_WEIGHTS, NEEDS_AVERAGE)       \
    X(STAGE_CONTEXT, context, false, CELLS_VALUES, NEEDS_NOTHING)          \
    X(STAGE_ATTN_GATE, attn_gate, false, CELLS_VALUES, NEEDS_ATTN_GATE)    \
    X(STAGE_GATED, gated, false, CELLS_VALUES, NEEDS_ATTN_GATE)            \
    X(STAGE_DELTA_QKV, delta_qkv, false, CELLS_VALUES, NEEDS_DELTANET)     \
    X(STAGE_DELTA_CONV, delta_conv, false, CELLS_VALUES, NEEDS_DELTANET)   \
    X(STAGE_DELTA_Q, delta_q, false, CELLS_VALUES, NEEDS_DELTANET)         \
    X(STAGE_DELTA_K, delta_k, false, CELLS_VALUES, NEEDS_DELTANET)         \
    X(STAGE_BETA, beta, false, CELLS_VALUES, NEEDS_DELTANET)               \
    X(STAGE_DECAY, decay, false, CELLS_VALUES, NEEDS_DELTANET)             \
    X(STAGE_EFFECTIVE, effective, true, CELLS_SIGNED, NEEDS_DELTANET)      \
    X(STAGE_DELTA_READ, delta_read, false, CELLS_VALUES, NEEDS_DELTANET)   \
    X(STAGE_DELTA_NORMED, delta_normed, false, CELLS_VALUES, NEEDS_DELTANET) \
    X(STAGE_OUTPUT, output, false, CELLS_VALUES, NEEDS_NOTHING)            \
    X(STAGE_OUTPUT_DROPPED, output_dropped, false, CELLS_DROPPED_VALUES,   \
      NEEDS_OUTPUT_DROPOUT)                                                \
    X(STAGE_OUTPUT_NORMED, output_normed, false, CELLS_VALUES, NEEDS_POST_NORM) \
    X(STAGE_RESIDUAL1, residual1, false, CELLS_VALUES, NEEDS_NOTHING)      \
    X(STAGE_PRE_MLP_NORM, ln2, false, CELLS_VALUES, NEEDS_PRE_NORM)                 \
    X(STAGE_GATE, gate, false, CELLS_VALUES, NEEDS_GATED)                  \
    X(STAGE_UP, fc, false, CELLS_VALUES, NEEDS_NOTHING)                    \
    X(STAGE_GELU, gelu, false, CELLS_VALUES, NEEDS_UNGATED)                \
    X(STAGE_SWIGLU, swiglu, false, CELLS_VALUES, NEEDS_SWIGLU)             \
    X(STAGE_GEGLU, geglu, false, CELLS_VALUES, NEEDS_GEGLU)                \
    X(STAGE_ROUTER, router, false, CELLS_VALUES, NEEDS_EXPERTS)            \
    X(STAGE_SHARED, shared, false, CELLS_VALUES, NEEDS_SHARED_EXPERT)      \
    X(STAGE_MLP, mlp, false, CELLS_VALUES, NEEDS_NOTHING)                  \
    X(STAGE_MLP_NORMED, mlp_normed, false, CELLS_VALUES, NEEDS_POST_NORM)  \
    X(STAGE_RESIDUAL2, residual2, false, CELLS_VALUES, NEEDS_NOTHING)      \
    X(STAGE_FINAL, final, false, CELLS_VALUES, NEEDS_NOTHING)

/*
 * The stages of a transformer block beyond attention, and ln_f after the
 * last block: a trained model's (family_model), never the book's classes'.
 */
#define PIPELINE_BLOCK_STAGES                                                            \
    (FAMILY_STAGE(STAGE_PRE_ATTN_NORM) | FAMILY_STAGE(STAGE_RESIDUAL1) | FAMILY_STAGE(STAGE_PRE_MLP_NORM) | \
     FAMILY_STAGE(STAGE_UP) | FAMILY_STAGE(STAGE_GELU) | FAMILY_STAGE(STAGE_MLP) |       \
     FAMILY_STAGE(STAGE_RESIDUAL2) | FAMILY_STAGE(STAGE_FINAL) |                         \
     FAMILY_STAGE(STAGE_QUERIES_NORMED) | FAMILY_STAGE(STAGE_KEYS_NORMED) |              \
     FAMILY_STAGE(STAGE_QUERIES_ROTATED) | FAMILY_STAGE(STAGE_KEYS_ROTATED) |            \
     FAMILY_STAGE(STAGE_GATE) | FAMILY_STAGE(STAGE_SWIGLU) | FAMILY_STAGE(STAGE_GEGLU) |  \
     FAMILY_STAGE(STAGE_OUTPUT_NORMED) | FAMILY_STAGE(STAGE_MLP_NORMED) |                \
     FAMILY_STAGE(STAGE_ROUTER) | FAMILY_STAGE(STAGE_SHARED) | PIPELINE_MIXER_STAGES)

/* The stages of the layers' mixers beyond softmax attention's (Qwen3.5's gate, Gated DeltaNet). */
#define PIPELINE_MIXER_STAGES                                                            \
    (FAMILY_STAGE(STAGE_ATTN_GATE) | FAMILY_STAGE(STAGE_GATED) |                         \
     FAMILY_STAGE(STAGE_DELTA_QKV) | FAMILY_STAGE(STAGE_DELTA_CONV) |                    \
     FAMILY_STAGE(STAGE_DELTA_Q) | FAMILY_STAGE(STAGE_DELTA_K) | FAMILY_STAGE(STAGE_BETA) | \
     FAMILY_STAGE(STAGE_DECAY) | FAMILY_STAGE(STAGE_EFFECTIVE) |                         \
     FAMILY_STAGE(STAGE_DELTA_READ) |                                                     \
     FAMILY_STAGE(STAGE_DELTA_NORMED))

enum pipeline_stage {
#define PIPELINE_STAGE_ENUM(e, id, per_head, cells, needs) e,
    PIPELINE_STAGE_LIST(PIPELINE_STAGE_ENUM)
#undef PIPELINE_STAGE_ENUM
    STAGE_COUNT
};

/* What a stage's numbers are, which decides how they are drawn. */
enum stage_cells {
    CELLS_VALUES,  /* any real numbers */
    CELLS_WEIGHTS, /* proportions in [0, 1]; cells the mask hides are masked */
    CELLS_DROPPED, /* weights after dropout: masked cells and dropped ones */
    CELLS_DROPPED_VALUES, /* values after dropout (the notes' output): dropped ones */
    CELLS_SIGNED,  /* a causal mixing of any sign, rows not summing to 1 (Gated DeltaNet's
                      effective attention): the mask's cells masked, colours around 0 */
};

/* When a pipeline has a stage. */
enum stage_needs {
    NEEDS_NOTHING,    /* always */
    NEEDS_SENTENCE,   /* a sentence (not --qkv) */
    NEEDS_POSITIONAL, /* a sentence and the positional encoding on */
    NEEDS_WEIGHT_DROPOUT, /* a variant whose dropout acts on the weights (all but notes) */
    NEEDS_OUTPUT_DROPOUT, /* a variant whose dropout acts on the output (notes) */
    NEEDS_AVERAGE,        /* a variant that averages its heads' weights (nn-mha) */
    NEEDS_SOURCE,         /* a source sentence (cross-attention) */
    NEEDS_QK_NORM,        /* a model whose queries and keys are normed per head (Qwen3) */
    NEEDS_ROPE,           /* a model with rotary positions (Llama, Qwen) */
    NEEDS_GATED,          /* a model with a gated MLP (SwiGLU, GeGLU) */
    NEEDS_UNGATED,        /* a model whose MLP is up, GELU, down (GPT-2) */
    NEEDS_SWIGLU,         /* a model whose gate goes through SiLU (Llama) */
    NEEDS_GEGLU,          /* a model whose gate goes through GELU (Gemma) */
    NEEDS_PRE_NORM,       /* a model with norms before attention and the MLP (all but Olmo) */
    NEEDS_POST_NORM,      /* a model that norms attention's and the MLP's outputs (Gemma, Olmo) */
    NEEDS_EXPERTS,        /* the shown layer of a model is a mixture of experts */
    NEEDS_SHARED_EXPERT,  /* ... with a shared expert beside the routed ones (Qwen3.5-MoE) */
    NEEDS_ATTN_GATE,      /* the shown layer attends through an output gate (Qwen3.5) */
    NEEDS_DELTANET,       /* the shown layer's mixer is Gated DeltaNet (Qwen3.5) */
};

/*
 * A model's pipeline built with no layer shown: its stages are empty until
 * pipeline_select_layer() makes one (what --generate writes through: the
 * shown layer's n x n stages are made once, at the end, not for every
 * token).  Only the family's own state (pipeline_decoder) may be read before.
 */
#define PIPELINE_NO_LAYER (-1)

struct pipeline_source {
    const char *sentence;
    const struct vocab *vocab;              /* borrowed */
    const struct attention_params *weights; /* borrowed; NULL: draw from the seed */
    const struct qkv_given *qkv;            /* borrowed; not NULL: Q, K, V given, no sentence */
    const struct family *family;            /* the model family; NULL: the book's */
    const struct model *model;              /* borrowed; a trained model's files (family_model) */
    int top;                                /* next tokens kept per position (a model) */
    bool bos;                               /* put <|endoftext|> first (a model) */
    const unsigned char *ablated;           /* (layers * heads) 1: a head zeroed (a model), or NULL */
    const unsigned char *experts_off;       /* (layers * experts) 1: an expert switched off (a
                                               mixture's router never chooses it), or NULL */
    bool sinks_off;                         /* a model's attention sinks switched off (their
                                               logits -inf: each row's weights sum to 1) */
    const char *source;                     /* cross-attention: the source sentence, or NULL */
    const struct vocab *source_vocab;       /* borrowed; its vocabulary (NULL: vocab's) */
    /*
     * A model's text as token ids instead of the sentence (generation: the
     * ids written are the model's own, which the sentence's text would not
     * always tokenize back to), n_ids of them, <|endoftext|> included when
     * there; NULL: the sentence.
     */
    const int *ids;
    int n_ids;
    float *last_logits; /* a model's: where its last position's logits go, or NULL */
    int layer;          /* a model's: the layer shown first (out of range: 0), or
                           PIPELINE_NO_LAYER */
    int room;           /* a model's: rows of room beyond the text's for appends (0: the run's
                           default, DECODER_ROOM; -1, DECODER_NO_ROOM: none) */
    bool no_attention;  /* a model's: the shown layer's (H, n, n) stages (scores, masked,
                           scaled, weights) not made, their views empty: --print of stages
                           that do not show them */
    bool lean;          /* a model's: no layer kept, none selected (decoder_knobs.lean):
                           --print of the tokens and next tokens only */
    bool next_later;    /* a model's: the forward makes the last position's next tokens, the
                           others' when asked for (family_model_next_tokens): the front ends */
};

/* A transformer block's own stages, of the layer shown (views; a model only). */
struct pipeline_block {
    struct matrix ln1;       /* (n, C) */
    struct matrix residual1; /* (n, C) the block's input + the attention's output */
    struct matrix ln2;       /* (n, C) */
    struct matrix fc;        /* (n, F) */
    struct matrix gelu;      /* (n, F) */
    struct matrix mlp;       /* (n, C) */
    struct matrix residual2; /* (n, C) the block's output */
    struct matrix final;     /* (n, C) ln_f's output, after the last block */
    /* Llama-style parts (empty where the model has none of them): */
    struct matrix q_normed;  /* (n, H d) the queries after QK-norm */
    struct matrix k_normed;  /* (n, K d) the keys after QK-norm */
    struct matrix q_rotated; /* (n, H d) the queries after RoPE: what the scores read */
    struct matrix k_rotated; /* (n, K d) the keys after RoPE */
    struct matrix gate;      /* (n, F) SwiGLU's gate projection */
    struct matrix swiglu;    /* (n, F) SiLU(gate) * fc, or Gemma's GELU(gate) * fc */
    /* Gemma's and Olmo's norms of attention's and the MLP's outputs (empty without): */
    struct matrix output_normed; /* (n, C) */
    struct matrix mlp_normed;    /* (n, C) */
    /*
     * A sparse layer's router (empty elsewhere): (n, E) the probabilities
     * its softmax gave each expert, the weights each chosen expert's output
     * was multiplied by (0 where not chosen), and the experts' names.
     */
    struct matrix router_logits;
    struct matrix router;
    struct matrix routed;
    const char *const *expert_labels; /* (E) "e0", "e1", ... */
    /* Its shared expert's output times its gate (n, C), and that gate (n, 1); or empty. */
    struct matrix shared, shared_gate;
    /* An attention layer's output gate (n, H d) and the context times sigmoid(it) (n, H d). */
    struct matrix attn_gate, gated;
    /*
     * A Gated DeltaNet layer's steps (decoder_gdn_stages): the projection
     * and its convolution (n, 2 Kq + Vw), the normed queries and keys (n,
     * Kq), beta and the decay (n, Hv), each value head's read o (n, Vw) and
     * its gated norm (n, Vw).
     */
    struct matrix delta_qkv, delta_conv, delta_q, delta_k, beta, decay, delta_read,
        delta_normed;
    /*
     * Its (Hv, n, n) effective attention M, laid out as the scores (st.ld):
     * o_t = sum_s M[t, s] v_s; NULL when not made.
     */
    const float *effective;
};

struct pipeline {
    const struct family *family;     /* how the stages are computed */
    unsigned long generation;        /* new for every computation: caches key on it */
    struct attention_config cfg;
    struct token_list tokens;        /* the sentence's tokens; empty when Q, K, V are given */
    unsigned char *made_up;          /* (nq) 1 where the vocabulary lacked the token */
    bool qkv_given;                  /* Q, K and V came from files: no inputs, no weights */
    const char *const *query_labels; /* (nq) the rows of every stage */
    const char *const *key_labels;   /* (nk) the columns of the per-head stages */
    char *label_storage;             /* the labels' text when Q, K, V are given */
    int d_in;
    struct matrix embeddings;        /* (n, d_in) */
    struct matrix positional;        /* (n, d_in); empty unless cfg.positional */
    struct matrix inputs;            /* (n, d_in) embeddings + positional */
    struct token_list source_tokens; /* cross-attention: the source's tokens (the keys' rows) */
    unsigned char *source_made_up;   /* (nk) 1 where its vocabulary lacked the token */
    char *source_label_storage;      /* the source's labels, when it repeats a token */
    struct matrix source;            /* (nk, d_in) the source's embeddings + positional */
    struct attention_params params;
    bool params_given;               /* loaded (--weights), not drawn */
    struct rng rng_after_params;     /* the generator where dropout starts */
    struct attention_stages st;
    size_t bytes;                    /* what it holds, as its family estimated (0: unknown) */
    int layers;                      /* the model's blocks (1 for the book's classes) */
    int layer;                       /* the block the stages show, from 0 */
    struct pipeline_block block;     /* its own stages (a model's) */
    /*
     * How a trained model scales its scores, where it differs from the
     * book's sqrt(d_k) (GPT-2's scale_attn_weights and
     * scale_attn_by_inverse_layer_idx): no square root, and a division by
     * the layer's number + 1.  Both false for the book's classes.
     */
    bool scale_without_root;
    bool scale_by_layer;
    double scale_scalar;             /* Gemma's query_pre_attn_scalar: sqrt(it), not sqrt(d_k) */
    /*
     * The shown layer's sliding window: a query sees the last `window` keys
     * (its own included) under the causal mask; 0: every key before it.
     */
    int window;
    /* A trained model's parts (which norm, positions, MLP, the sizes), or NULL: the book's. */
    const struct decoder_config *decoder;
    void *family_state;              /* what the family keeps beyond these fields */
};

/*
 * The most memory one configuration may take (parameters, inputs, stage
 * buffers), checked before anything is allocated.  In the view, a knob that
 * rebuilds the pipeline holds the old one until the new one is built, so
 * there the two together must fit: the peak is what is counted.
 */
#define PIPELINE_MAX_BYTES ((size_t)2 << 30)

/*
 * Runs the whole pipeline for cfg on src, with src's family (the book's
 * classes when src->family is NULL).  On failure p is left empty (safe to
 * destroy) and err says why.  The registry (families/families.c) defines
 * this and pipeline_rebuild: it is the one that knows the default family;
 * they hand it to pipeline_create_as and pipeline_rebuild_as.
 */
enum attn_status pipeline_create(struct pipeline *p, const struct attention_config *cfg,
                                 const struct pipeline_source *src, struct attn_error *err);
enum attn_status pipeline_create_as(struct pipeline *p, const struct family *f,
                                    const struct attention_config *cfg,
                                    const struct pipeline_source *src, struct attn_error *err);
void pipeline_destroy(struct pipeline *p);

/*
 * Like pipeline_create, but when prev's parameters are the ones cfg would
 * draw (same variant, sizes, seed and bias, or the same given weights) they
 * are moved from prev instead of drawn again.  On failure prev is as it was.
 */
enum attn_status pipeline_rebuild(struct pipeline *p, struct pipeline *prev,
                                  const struct attention_config *cfg,
                                  const struct pipeline_source *src, struct attn_error *err);
enum attn_status pipeline_rebuild_as(struct pipeline *p, struct pipeline *prev,
                                     const struct family *f, const struct attention_config *cfg,
                                     const struct pipeline_source *src, struct attn_error *err);

/*
 * Whether going from p's knobs to cfg changes only the stages after the
 * projections (mask, scaling, temperature, dropout, training mode, the
 * generator path, the dropout pass or seed).
 */
bool pipeline_attend_only(const struct pipeline *p, const struct attention_config *cfg);

/*
 * Recomputes p's stages from the scores on, for cfg, when
 * pipeline_attend_only(p, cfg).  On failure (a bad knob, or no memory for
 * the buffers cfg needs) p is as it was.
 */
enum attn_status pipeline_reattend(struct pipeline *p, const struct attention_config *cfg,
                                   struct attn_error *err);

/*
 * Shows block layer (from 0, below p->layers) in every per-layer stage:
 * the stage views then read that layer's numbers.  ATTN_OK, or an error
 * naming the range.
 */
enum attn_status pipeline_select_layer(struct pipeline *p, int layer, struct attn_error *err);

/* Whether stage s has one matrix per layer (the block's stages of a model). */
bool pipeline_stage_per_layer(const struct pipeline *p, enum pipeline_stage s);

/*
 * Gives p's tokens their labels: each token's text, "text#i" for a text
 * the sentence has more than once (for the families' create).
 */
enum attn_status pipeline_label_tokens(struct pipeline *p, struct attn_error *err);

/*
 * The same labels for any token list: *labels is tl's own text, or points
 * into *storage (the caller frees it) when a text repeats.
 */
enum attn_status pipeline_label_list(const struct token_list *tl, char **storage,
                                     const char *const **labels, struct attn_error *err);

/* A stage's matrix and labels, as every front end shows it. */
struct pipeline_view {
    struct matrix m;                /* a view: never destroyed */
    const char *const *row_labels;  /* (m.rows) query tokens */
    const char *const *col_labels;  /* (m.cols) key tokens, or NULL: "d0", "d1", ... */
    const unsigned char *row_marked; /* (m.rows) 1: a made-up token's row, or NULL */
    int col_group;                  /* columns per head (0: no heads across the columns) */
};

const char *pipeline_stage_name(enum pipeline_stage s);
/* The stage's formula under p's variant and knobs ("Q = x W_q^T", "out = context"). */
const char *pipeline_stage_formula(const struct pipeline *p, enum pipeline_stage s);
bool pipeline_stage_per_head(enum pipeline_stage s);
/*
 * The heads of stage s at p's shown layer: the layer's attention heads, a
 * mixer's own (a DeltaNet layer's value heads for effective); 1 for a
 * stage that is not per head.
 */
int pipeline_stage_heads(const struct pipeline *p, enum pipeline_stage s);
enum stage_cells pipeline_stage_cells(enum pipeline_stage s);
/* Returns 0 and sets *s if name is a stage's name, -1 otherwise. */
int pipeline_stage_parse(const char *name, enum pipeline_stage *s);

/* Whether p has this stage (embeddings and positional exist only with PE on). */
bool pipeline_stage_present(const struct pipeline *p, enum pipeline_stage s);

/*
 * The names of the stages p has, in pipeline order, separated by sep, into
 * buf (for messages and the usage text); returns buf.
 */
char *pipeline_stage_names(const struct pipeline *p, const char *sep, char *buf, size_t size);

/* The view of stage s (for per-head stages, of head; otherwise head is ignored). */
void pipeline_stage_view(const struct pipeline *p, enum pipeline_stage s, int head,
                         struct pipeline_view *v);

/*
 * The mean over the heads of per-head stage s into mean, (nq, nk) with no
 * room between rows: each cell's heads summed in order in float, then
 * divided by H (as attention_heads_mean makes nn-mha's average).  -1 for a
 * stage that is not per head.
 */
int pipeline_stage_heads_mean(const struct pipeline *p, enum pipeline_stage s, float *mean);

/* The key and value head query head h reads (grouped-query attention); h itself without groups. */
int pipeline_kv_head(const struct pipeline *p, int h);
/*
 * The queries and keys the scores are made of: turned by RoPE (after
 * QK-norm) when the model has them, else the projections' queries and keys.
 */
const struct matrix *pipeline_scored_queries(const struct pipeline *p);
const struct matrix *pipeline_scored_keys(const struct pipeline *p);

/*
 * What the scores are divided by, in words and numbers: the one description
 * of the scaling that formulas and the inspector all use.
 */
struct pipeline_scaling {
    const char *symbol; /* "sqrt(d_k)", "sqrt(--scale-dim)", "sqrt(d_k) (l+1)", "(l+1)",
                           "sqrt(query_pre_attn_scalar)", or NULL */
    int dim;            /* the number under the square root (when symbol has one; else 0) */
    char spelled[48];   /* what symbol stands for here: "sqrt(16)", "sqrt(16) x 3", "3" */
    int root_of;        /* the number under it, on or off: 1 means scaling changes nothing */
    bool temperature;   /* divided by the temperature too */
    float divisor;      /* what the scores are divided by */
};
void pipeline_scaling_of(const struct pipeline *p, struct pipeline_scaling *sc);

/*
 * Whether the mask hides key j from query i in the layer shown: the causal
 * mask (attention_masked), and under it a sliding layer's window, which
 * hides the keys window or more tokens back.
 */
bool pipeline_masked(const struct pipeline *p, int i, int j);
/* Whether key j is hidden from query i by the window alone (before it, not after). */
bool pipeline_out_of_window(const struct pipeline *p, int i, int j);
/* The same in a window of that many keys (another layer's: the model map's heads). */
bool pipeline_window_hides(const struct pipeline *p, int window, int i, int j);

/* What a stage name given by the user (--stage) picks out. */
struct pipeline_selection {
    enum pipeline_stage stage;
    int head;                 /* -1: every head of a per-head stage */
    const struct param *param; /* not NULL: this parameter instead of a stage */
};

/*
 * What --stage tokens and --stage next select on a trained model: its
 * tokens with their ids, and its next-token predictions (not stages: they
 * have no matrix of numbers).
 */
#define PIPELINE_SELECT_TOKENS ((enum pipeline_stage)STAGE_COUNT)
#define PIPELINE_SELECT_NEXT ((enum pipeline_stage)(STAGE_COUNT + 1))
/* And --stage heads: the model map, one number per head (headmap.h). */
#define PIPELINE_SELECT_HEADS ((enum pipeline_stage)(STAGE_COUNT + 2))
/* And --stage lens: the logit lens after the last token (decoder_logit_lens). */
#define PIPELINE_SELECT_LENS ((enum pipeline_stage)(STAGE_COUNT + 3))
/*
 * And --stage kv (or cache): each layer's KV cache, the keys as the scores
 * read them and the values, a sliding layer's ring of its window
 * (generation_cache_rows).
 */
#define PIPELINE_SELECT_CACHE ((enum pipeline_stage)(STAGE_COUNT + 4))

/*
 * Resolves name: a stage ("weights"), one head of a per-head stage
 * ("weights.h1"), a parameter ("W_query.weight"), or on a trained model
 * "tokens", "next", "heads", "lens" and "kv" (or "cache").  Returns 0, -1 when p has nothing by that
 * name, or PIPELINE_SELECT_NO_HEAD when it names a head p does not have
 * (heads are 0 .. p->st.shape.heads - 1).
 */
#define PIPELINE_SELECT_NO_HEAD (-2)
int pipeline_select(const struct pipeline *p, const char *name, struct pipeline_selection *sel);

#endif
