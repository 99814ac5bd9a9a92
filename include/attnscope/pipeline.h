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

#include "attnscope/attention.h"
#include "attnscope/attention_config.h"
#include "attnscope/params.h"
#include "attnscope/qkv.h"
#include "attnscope/rng.h"
#include "attnscope/status.h"
#include "attnscope/tokenizer.h"
#include "attnscope/vocab.h"

/* X(enum, name, per-head, formula) in pipeline order. */
#define PIPELINE_STAGE_LIST(X)                                        \
    X(STAGE_EMBEDDINGS, "embeddings", false, "vocabulary[token]")     \
    X(STAGE_POSITIONAL, "positional", false, "PE(pos, i)")            \
    X(STAGE_INPUTS, "inputs", false, "x = embeddings (+ PE)")         \
    X(STAGE_QUERIES, "queries", false, "Q = x W_q^T")                 \
    X(STAGE_KEYS, "keys", false, "K = x W_k^T")                       \
    X(STAGE_VALUES, "values", false, "V = x W_v^T")                   \
    X(STAGE_SCORES, "scores", true, "Q_h K_h^T")                      \
    X(STAGE_MASKED, "masked", true, "scores, -inf where j > i")       \
    X(STAGE_SCALED, "scaled", true, "masked / sqrt(d_k)")             \
    X(STAGE_WEIGHTS, "weights", true, "softmax(scaled) by row")       \
    X(STAGE_DROPPED, "dropped", true, "dropout(weights)")             \
    X(STAGE_CONTEXT, "context", false, "dropped_h V_h, concatenated") \
    X(STAGE_OUTPUT, "output", false, "context W_o^T + b_o")

enum pipeline_stage {
#define PIPELINE_STAGE_ENUM(e, name, per_head, formula) e,
    PIPELINE_STAGE_LIST(PIPELINE_STAGE_ENUM)
#undef PIPELINE_STAGE_ENUM
    STAGE_COUNT
};

struct pipeline_source {
    const char *sentence;
    const struct vocab *vocab;              /* borrowed */
    const struct attention_params *weights; /* borrowed; NULL: draw from the seed */
    const struct qkv_given *qkv;            /* borrowed; not NULL: Q, K, V given, no sentence */
};

struct pipeline {
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
    struct attention_params params;
    bool params_given;               /* loaded (--weights), not drawn */
    struct rng rng_after_params;     /* the generator where dropout starts */
    struct attention_stages st;
};

/*
 * Runs the whole pipeline for cfg on src.  On failure p is left empty (safe
 * to destroy) and err says why.
 */
enum attn_status pipeline_create(struct pipeline *p, const struct attention_config *cfg,
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

/* A stage's matrix and labels, as every front end shows it. */
struct pipeline_view {
    struct matrix m;                /* a view: never destroyed */
    const char *const *row_labels;  /* (m.rows) query tokens */
    const char *const *col_labels;  /* (m.cols) key tokens, or NULL: "d0", "d1", ... */
    int col_group;                  /* columns per head (0: no heads across the columns) */
};

const char *pipeline_stage_name(enum pipeline_stage s);
/* The stage's formula under p's variant ("Q = x W_q^T", "out = context"). */
const char *pipeline_stage_formula(const struct pipeline *p, enum pipeline_stage s);
bool pipeline_stage_per_head(enum pipeline_stage s);
/* Returns 0 and sets *s if name is a stage's name, -1 otherwise. */
int pipeline_stage_parse(const char *name, enum pipeline_stage *s);

/* Whether p has this stage (embeddings and positional exist only with PE on). */
bool pipeline_stage_present(const struct pipeline *p, enum pipeline_stage s);

/* The view of stage s (for per-head stages, of head; otherwise head is ignored). */
void pipeline_stage_view(const struct pipeline *p, enum pipeline_stage s, int head,
                         struct pipeline_view *v);

/* What a stage name given by the user (--stage) picks out. */
struct pipeline_selection {
    enum pipeline_stage stage;
    int head;                 /* -1: every head of a per-head stage */
    const struct param *param; /* not NULL: this parameter instead of a stage */
};

/*
 * Resolves name: a stage ("weights"), one head of a per-head stage
 * ("weights.h1") or a parameter ("W_query.weight").  Returns 0, or -1 when
 * p has nothing by that name.
 */
int pipeline_select(const struct pipeline *p, const char *name, struct pipeline_selection *sel);

#endif
