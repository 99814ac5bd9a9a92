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
 * A model with Gated DeltaNet layers (Qwen3.5) measures their value heads
 * too, on each query's share of its effective attention, |M_ts| / sum_s
 * |M_ts| (how much of what it reads comes from each token), and has two
 * measures more, for every head:
 *   reach      how far back a head reads: the mean over queries (1 ..) of
 *              sum_j w_ij (i - j), in tokens
 *   memory     a DeltaNet head's half-life: ln 2 / the mean of -g over the
 *              tokens, the tokens after which half of a write is left
 *              (the corrections aside); NaN for a softmax head
 * The map has as many columns as the layer with most heads (head_map_heads);
 * a layer with fewer has NaN in the rest.
 */
#ifndef ATTNSCOPE_HEADMAP_H
#define ATTNSCOPE_HEADMAP_H

#include "attnscope/decoder/mixer.h"
#include "attnscope/pipeline/pipeline.h"

#define HEAD_MEASURE_LIST(X)                                                       \
    X(MEASURE_ENTROPY, "entropy", "attention entropy (nats): low is focused")      \
    X(MEASURE_PREVIOUS, "previous", "weight on the previous token")                \
    X(MEASURE_FIRST, "first", "weight on the first token (an attention sink)")                         \
    X(MEASURE_SELF, "self", "weight on the token itself")                          \
    X(MEASURE_INDUCTION, "induction", "weight on what followed the token before")     \
    X(MEASURE_SINK, "sink", "weight given to the learned sink, to nothing (gpt-oss)")   \
    X(MEASURE_REACH, "reach", "how far back the head reads (tokens, weighted)")        \
    X(MEASURE_MEMORY, "memory", "a linear-attention head's half-life (tokens)")

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

/* The map's columns: the most heads a layer of p has (a DeltaNet layer's value heads). */
int head_map_heads(const struct pipeline *p);
/* The heads of p's layer: its attention heads, or its mixer's own (a DeltaNet layer's). */
int head_map_layer_heads(const struct pipeline *p, int layer);

/*
 * One layer's heads as the map reads them: softmax weights made again from
 * the layer's queries and kept keys, or a DeltaNet head's shares of its
 * effective attention (made again from the layer's input).
 */
struct family_model_state;
struct head_map_layer {
    const struct family_model_state *g;
    int layer, heads;
    bool deltanet;
    float *q;    /* an attention layer's queries (and scratch) */
    float *made; /* a DeltaNet layer's rows, made again (NULL: the shown layer's own) */
    struct decoder_gdn_rows rows;
};
/* 0, or -1 out of memory (nothing to close). */
int head_map_layer_open(struct head_map_layer *hl, const struct pipeline *p, int layer);
/* head_map_layer_scratch(n) floats a head needs beside its (n, n) w. */
size_t head_map_layer_scratch(const struct head_map_layer *hl);
/* Head h's (n, n) into w (scratch as above); -1 for a head the layer lacks. */
int head_map_layer_head(const struct head_map_layer *hl, int h, float *w, float *scratch);
void head_map_layer_close(struct head_map_layer *hl);

#endif
