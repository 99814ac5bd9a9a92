/*
 * headmap.h: what each head of a trained model does, one number per head.
 *
 * Over the tokens of the text, for every layer and head, from the weights
 * the forward pass kept:
 *   entropy    how spread a query's attention is: the mean over queries of
 *              -sum_j w_ij ln w_ij (nats; 0: all on one key)
 *   previous   the mean weight on the token just before (queries 1 ..):
 *              a previous-token head scores near 1
 *   first      the mean weight on the first token (queries 1 ..): where
 *              GPT-2 rests attention it has no use for
 *   self       the mean weight on the query's own token (queries 1 ..)
 *   induction  for queries whose token appeared before, the weight on the
 *              tokens that followed its earlier occurrences (A B ... A ->
 *              B), averaged over those queries: an induction head copies
 *              what came next last time.  NaN when no token repeats.
 */
#ifndef ATTNSCOPE_HEADMAP_H
#define ATTNSCOPE_HEADMAP_H

#include "attnscope/pipeline/pipeline.h"

#define HEAD_MEASURE_LIST(X)                                                       \
    X(MEASURE_ENTROPY, "entropy", "attention entropy (nats): low is focused")      \
    X(MEASURE_PREVIOUS, "previous", "weight on the previous token")                \
    X(MEASURE_FIRST, "first", "weight on the first token (an attention sink)")                         \
    X(MEASURE_SELF, "self", "weight on the token itself")                          \
    X(MEASURE_INDUCTION, "induction", "weight on what followed the token before")     \
    X(MEASURE_SINK, "sink", "weight given to the learned sink, to nothing (gpt-oss)")

enum head_measure {
#define HEAD_MEASURE_ENUM(e, name, desc) e,
    HEAD_MEASURE_LIST(HEAD_MEASURE_ENUM)
#undef HEAD_MEASURE_ENUM
    MEASURE_COUNT
};

const char *head_measure_name(enum head_measure m);
/* Whether p's model has measure m (the sink's: a model with learned sinks only). */
bool head_measure_present(const struct pipeline *p, enum head_measure m);
const char *head_measure_description(enum head_measure m);
/* The measure called name ("previous"): 0 with *m set, or -1. */
int head_measure_parse(const char *name, enum head_measure *m);

/*
 * The measure of every head of every layer of p (a trained model's), row
 * by layer: out holds p->layers * heads floats.  Returns 0, or -1 when p
 * is not a model's or memory runs out.  The first call makes every
 * head's weights again, layer by layer (the forward keeps none but the
 * shown layer's), and every measure of them, kept with p for the next.
 */
int head_measures(const struct pipeline *p, enum head_measure m, float *out);

#endif
