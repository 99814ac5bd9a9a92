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

#include "attnscope/pipeline.h"

/* X(enum, digit key or 0 for none, name in the stage bar, shorter name) */
#define VIEW_STAGE_LIST(X)                    \
    X(VIEW_EMBEDDINGS, '1', "embed", "emb")   \
    X(VIEW_POSITIONAL, 0, "pos", "pos")       \
    X(VIEW_QKV, '2', "Q K V", "QKV")          \
    X(VIEW_SCORES, '3', "scores", "score")    \
    X(VIEW_MASK, '4', "mask", "mask")         \
    X(VIEW_SCALED, '5', "scale", "scale")     \
    X(VIEW_WEIGHTS, '6', "softmax", "soft")   \
    X(VIEW_DROPOUT, '7', "dropout", "drop")   \
    X(VIEW_CONTEXT, '8', "context", "ctx")    \
    X(VIEW_CONCAT, '9', "concat", "cat")      \
    X(VIEW_OUTPUT, '0', "output", "out")

enum view_stage {
#define VIEW_STAGE_ENUM(e, key, name, brief) e,
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

/* Whether p shows stage s (the positional encoding only when it is on). */
bool explain_stage_present(const struct pipeline *p, enum view_stage s);

/* Whether the stage has one matrix per head. */
bool explain_stage_per_head(enum view_stage s);

/* The pipeline stage whose numbers a view stage shows (QKV shows three). */
enum pipeline_stage explain_pipeline_stage(enum view_stage s, bool show_mask_matrix);

/* The title ("Attention weights"). */
const char *explain_title(enum view_stage s);

/* The formula for p's variant and knobs, written into buf. */
void explain_formula(const struct pipeline *p, enum view_stage s, char *buf, size_t size);

/* Two or three sentences about the stage under p's knobs, written into buf. */
void explain_text(const struct pipeline *p, enum view_stage s, char *buf, size_t size);

#endif
