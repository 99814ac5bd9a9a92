/*
 * explain.h: the screens' stages and what each of them says.
 *
 * The interactive view walks these stages in order; digits 1-9 and 0 jump to
 * the ten fixed ones, and the positional encoding (only when it is on) sits
 * between the first two.  Each stage has a title, a formula for the current
 * variant, and two or three sentences a learner can follow.
 */
#ifndef ATTNSCOPE_RENDER_EXPLAIN_H
#define ATTNSCOPE_RENDER_EXPLAIN_H

#include <stdbool.h>
#include <stddef.h>

#include "attnscope/pipeline/pipeline.h"

/*
 * The view's stages, one row each; every name table, key binding and
 * mapping of the view is made from these rows.
 * X(enum, id, digit key or 0, name in the stage bar, shorter name, title,
 *   per-head, the pipeline stage it shows, the model's tensor whose work it
 *   shows (its name in the model's files joins the title), or ARCH_ROLES)
 *   id  the name walkthroughs use (stage: qkv) and the suffix of the stage's
 *       functions: formula_ID and text_ID in explain.c, inspect_ID in
 *       inspect.c; a row without them does not compile.
 * A view stage is present when its pipeline stage is.
 */
#define VIEW_STAGE_LIST(X)                                                                     \
    X(VIEW_EMBEDDINGS, embeddings, '1', "embed", "emb", "Tokens and embeddings", false,          \
      STAGE_INPUTS, ARCH_ROLES)                                                                            \
    X(VIEW_POSITIONAL, positional, 0, "pos", "pos", "Positional encoding", false,                \
      STAGE_POSITIONAL, ARCH_ROLES)                                                                        \
    X(VIEW_SOURCE, source, 0, "source", "src", "The source sentence (keys and values)", false,   \
      STAGE_SOURCE, ARCH_ROLES)                                                                            \
    X(VIEW_PRE_ATTN_NORM, ln1, 0, "ln1", "ln1", "Layer norm", false, STAGE_PRE_ATTN_NORM, ROLE_ATTN_NORM)                    \
    X(VIEW_QKV, qkv, '2', "Q K V", "QKV", "Queries, keys and values", true, STAGE_QUERIES, ARCH_ROLES)      \
    X(VIEW_QNORM, qnorm, 0, "q-norm", "qn", "QK-norm: each head's queries normed", false,        \
      STAGE_QUERIES_NORMED, ARCH_ROLES)                                                                    \
    X(VIEW_KNORM, knorm, 0, "k-norm", "kn", "QK-norm: each head's keys normed", false,           \
      STAGE_KEYS_NORMED, ARCH_ROLES)                                                                       \
    X(VIEW_QROPE, qrope, 0, "q RoPE", "qr", "RoPE: the queries turned by their position", false, \
      STAGE_QUERIES_ROTATED, ARCH_ROLES)                                                                   \
    X(VIEW_KROPE, krope, 0, "k RoPE", "kr", "RoPE: the keys turned by their position", false,    \
      STAGE_KEYS_ROTATED, ARCH_ROLES)                                                                      \
    X(VIEW_CACHE, cache, 0, "kv cache", "kv", "KV cache: the keys and values kept for the next "   \
      "token", true, STAGE_KEYS, ARCH_ROLES)                                                                 \
    X(VIEW_SCORES, scores, '3', "scores", "score", "Attention scores", true, STAGE_SCORES, ARCH_ROLES)      \
    X(VIEW_MASK, mask, '4', "mask", "mask", "Causal mask", true, STAGE_MASKED, ARCH_ROLES)                  \
    X(VIEW_SCALED, scaled, '5', "scale", "scale", "Scaling", true, STAGE_SCALED, ARCH_ROLES)               \
    X(VIEW_WEIGHTS, weights, '6', "softmax", "soft", "Attention weights", true, STAGE_WEIGHTS, ARCH_ROLES) \
    X(VIEW_DROPOUT, dropout, '7', "dropout", "drop", "Dropout", true, STAGE_DROPPED, ARCH_ROLES)           \
    X(VIEW_AVERAGE, average, 0, "average", "avg", "Heads averaged (the weights PyTorch returns)", \
      false, STAGE_AVERAGED, ARCH_ROLES)                                                                   \
    X(VIEW_CONTEXT, context, '8', "context", "ctx", "Context vectors", true, STAGE_CONTEXT, ARCH_ROLES)    \
    X(VIEW_CONCAT, concat, '9', "concat", "cat", "Heads concatenated", false, STAGE_CONTEXT, ARCH_ROLES)   \
    X(VIEW_ATTN_GATE, attn_gate, 0, "gate", "gate", "The output gate, beside each query", false, \
      STAGE_ATTN_GATE, ROLE_ATTN_Q)                                                           \
    X(VIEW_GATED, gated, 0, "gated", "gtd", "The context through its gate", false, STAGE_GATED, \
      ARCH_ROLES)                                                                             \
    X(VIEW_DELTA_QKV, delta_qkv, 0, "Q K V", "QKV", "Linear attention: queries, keys, values", \
      false, STAGE_DELTA_QKV, ROLE_GDN_QKV)                                                   \
    X(VIEW_DELTA_CONV, delta_conv, 0, "conv", "conv", "A short convolution over the tokens", \
      false, STAGE_DELTA_CONV, ROLE_GDN_CONV)                                                 \
    X(VIEW_DELTA_Q, delta_q, 0, "q", "q", "Linear attention: the queries, normed", false,   \
      STAGE_DELTA_Q, ARCH_ROLES)                                                              \
    X(VIEW_DELTA_K, delta_k, 0, "k", "k", "Linear attention: the keys, normed", false,      \
      STAGE_DELTA_K, ARCH_ROLES)                                                              \
    X(VIEW_BETA, beta, 0, "beta", "beta", "How much each token writes", false, STAGE_BETA,  \
      ROLE_GDN_B)                                                                             \
    X(VIEW_DECAY, decay, 0, "decay", "decay", "How fast each head forgets", false,          \
      STAGE_DECAY, ROLE_GDN_A)                                                                \
    X(VIEW_EFFECTIVE, effective, 0, "M", "M", "Linear attention as attention: what each token " \
      "gives each query", true, STAGE_EFFECTIVE, ARCH_ROLES)                                   \
    X(VIEW_DELTA_READ, delta_read, 0, "read", "read", "The state read by each query", false, \
      STAGE_DELTA_READ, ARCH_ROLES)                                                           \
    X(VIEW_DELTA_NORMED, delta_normed, 0, "gated norm", "gnorm", "The read, normed and gated", \
      false, STAGE_DELTA_NORMED, ROLE_GDN_NORM)                                               \
    X(VIEW_OUTPUT, output, '0', "output", "out", "Output projection", false, STAGE_OUTPUT, ARCH_ROLES)      \
    X(VIEW_OUTDROP, outdrop, 0, "out drop", "odrop", "Dropout on the output", false,           \
      STAGE_OUTPUT_DROPPED, ARCH_ROLES)                                                                    \
    X(VIEW_OUTNORM, outnorm, 0, "out norm", "onorm", "RMSNorm of attention's output", false,     \
      STAGE_OUTPUT_NORMED, ROLE_ATTN_POST_NORM)                                                                     \
    X(VIEW_RESIDUAL1, residual1, 0, "res1", "res1", "Residual: the block's input plus attention",   \
      false, STAGE_RESIDUAL1, ARCH_ROLES)                                                                  \
    X(VIEW_PRE_MLP_NORM, ln2, 0, "ln2", "ln2", "Layer norm", false, STAGE_PRE_MLP_NORM, ROLE_FFN_NORM)                    \
    X(VIEW_ROUTER, router, 0, "router", "rtr", "Router: each token's experts", false,          \
      STAGE_ROUTER, ROLE_FFN_ROUTER)                                                           \
    X(VIEW_SHARED, shared, 0, "shared", "shex", "The shared expert, for every token", false,  \
      STAGE_SHARED, ROLE_SHARED_DOWN)                                                          \
    X(VIEW_GATE, gate, 0, "gate", "gate", "MLP: the gate", false, STAGE_GATE, ROLE_FFN_GATE)        \
    X(VIEW_UP, fc, 0, "fc", "fc", "MLP: the first linear layer", false, STAGE_UP, ROLE_FFN_UP) \
    X(VIEW_GELU, gelu, 0, "gelu", "gelu", "MLP: GELU", false, STAGE_GELU, ARCH_ROLES)                      \
    X(VIEW_SWIGLU, swiglu, 0, "swiglu", "glu", "MLP: SiLU(gate) times up", false, STAGE_SWIGLU, ARCH_ROLES)  \
    X(VIEW_GEGLU, geglu, 0, "geglu", "glu", "MLP: GELU(gate) times up", false, STAGE_GEGLU, ARCH_ROLES)      \
    X(VIEW_MLP, mlp, 0, "mlp", "mlp", "MLP: the second linear layer", false,           \
      STAGE_MLP, ROLE_FFN_DOWN)                                                                               \
    X(VIEW_MLPNORM, mlpnorm, 0, "mlp norm", "mnorm", "RMSNorm of the MLP's output", false,       \
      STAGE_MLP_NORMED, ROLE_FFN_POST_NORM)                                                                        \
    X(VIEW_RESIDUAL2, residual2, 0, "res2", "res2", "Residual: the block's output", false,      \
      STAGE_RESIDUAL2, ARCH_ROLES)                                                                         \
    X(VIEW_FINAL, final, 0, "ln_f", "lnf", "Final norm, after the last block",     \
      false, STAGE_FINAL, ROLE_OUTPUT_NORM)

enum view_stage {
#define VIEW_STAGE_ENUM(e, id, key, name, brief, title, per_head, stage, role) e,
    VIEW_STAGE_LIST(VIEW_STAGE_ENUM)
#undef VIEW_STAGE_ENUM
    VIEW_STAGE_COUNT
};

/* The digit that jumps to s, or 0. */
char explain_stage_key(enum view_stage s);
/* The stage a digit jumps to; returns -1 for other characters. */
int explain_stage_for_key(int key, enum view_stage *s);
/* The stage's name in the stage bar; brief: the shorter one. */
const char *explain_stage_short(enum view_stage s, bool brief);
/* The stage's name in walkthroughs ("qkv"). */
const char *explain_stage_name(enum view_stage s);
/* Every stage's walkthrough name, separated by sep, into buf; returns buf. */
char *explain_stage_names(const char *sep, char *buf, size_t size);
/* Returns 0 and sets *s if name is a stage's walkthrough name, -1 otherwise. */
int explain_stage_parse(const char *name, enum view_stage *s);

/* Whether p shows stage s (the positional encoding only when it is on). */
bool explain_stage_present(const struct pipeline *p, enum view_stage s);

/* Whether the stage has one matrix per head. */
bool explain_stage_per_head(enum view_stage s);
/*
 * The heads Tab goes through on view stage s at p's shown layer: a per-head
 * stage's own (pipeline_stage_heads: a DeltaNet layer's value heads for
 * its effective attention), else the layer's attention heads.
 */
int explain_stage_heads(const struct pipeline *p, enum view_stage s);

/*
 * The pipeline stage whose numbers a view stage shows on p (QKV shows
 * three); p may be NULL for the row's own stage.
 */
enum pipeline_stage explain_pipeline_stage(const struct pipeline *p, enum view_stage s,
                                           bool show_mask_matrix);

/*
 * The title ("Attention weights") into buf, returned; a model's (p, or NULL
 * for the stage's own) names its norm and the tensor its files give
 * ("RMSNorm (input_layernorm)", "MLP: the first linear layer (c_fc)").
 */
const char *explain_title(const struct pipeline *p, enum view_stage s, char *buf, size_t size);

/* The formula for p's variant and knobs, written into buf. */
void explain_formula(const struct pipeline *p, enum view_stage s, char *buf, size_t size);

/* Two or three sentences about the stage under p's knobs, written into buf. */
void explain_text(const struct pipeline *p, enum view_stage s, char *buf, size_t size);

#endif
