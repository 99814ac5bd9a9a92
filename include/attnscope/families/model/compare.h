/*
 * compare.h: two trained models over the same text, side by side.
 *
 * The first model's pipeline and the second's are built from the same
 * source (the text, the knobs); a comparison borrows both and gives every
 * stage three ways: the first's, the second's, and their difference
 * (second minus first, cell by cell).  The second always shows the
 * first's layer: a view of it or of the difference moves it there first.
 *
 * Where they differ most:
 *   heads changed  per layer and head, the mean over query rows of the
 *                  Jensen-Shannon divergence (in bits, 0 to 1) between the
 *                  two models' weights rows; a row's sink share (gpt-oss)
 *                  counts as one more outcome
 *   next tokens    per position, the Kullback-Leibler divergence
 *                  KL(first || second) of the two next-token
 *                  distributions, over the whole vocabulary (nats)
 *   logit lens     the layer from which on the two likeliest tokens differ
 *                  at every layer (where the predictions part for good)
 *
 * Two pipelines can be compared only when the text gives both the same
 * token ids and every stage the same shape: compare_check says which ids
 * or sizes differ, by name; nothing is ever aligned silently.
 */
#ifndef ATTNSCOPE_COMPARE_H
#define ATTNSCOPE_COMPARE_H

#include <stdbool.h>
#include <stddef.h>

#include "attnscope/base/status.h"
#include "attnscope/pipeline/pipeline.h"

/* Which of the three a view shows. */
enum compare_side {
    COMPARE_FIRST,
    COMPARE_SECOND,
    COMPARE_DIFFERENCE, /* second minus first */
    COMPARE_SIDES
};

/* "first", "second", "difference". */
const char *compare_side_name(enum compare_side side);

struct compare {
    struct pipeline *a; /* borrowed: the first model's */
    struct pipeline *b; /* borrowed: the second model's, the same text */
    /* The difference view's numbers (grown as needed). */
    float *diff;
    size_t diff_cap;
    /* The heads' divergences, made once for a and b of these generations. */
    float *changed;
    unsigned long changed_a, changed_b;
    /* The next tokens' divergences, likewise. */
    float *kl;
    unsigned long kl_a, kl_b;
};

/* c compares a with b (not yet checked: compare_check). */
void compare_init(struct compare *c, struct pipeline *a, struct pipeline *b);
void compare_destroy(struct compare *c);

/*
 * ATTN_OK when a and b, both trained models' pipelines, can be compared:
 * the same token ids, the same sizes (layers, heads, key and value heads,
 * head size, width, MLP width, experts, outputs) and the same stages.
 * Otherwise ATTN_EVALUE and err names what differs and each model's value
 * ("heads: 4 in minillama, 8 in other"; the first position whose ids
 * differ, with both tokens).
 */
enum attn_status compare_check(const struct pipeline *a, const struct pipeline *b,
                               struct attn_error *err);

/*
 * The sizes alone, of two models opened (before any pipeline of theirs is
 * made: the knobs' per-head arrays are sized by the first): ATTN_OK or
 * ATTN_EVALUE naming the size that differs.
 */
struct model;
enum attn_status compare_check_models(const struct model *ma, const struct model *mb,
                                      struct attn_error *err);

/* The second model shows the first's layer (made when it does not). */
enum attn_status compare_follow(struct compare *c, struct attn_error *err);

/*
 * Stage s (head, for a per-head stage) of side: the first's view, the
 * second's, or the difference into c's memory, with the first's labels.
 * A cell both models mask (-inf in both, as masked scores are) stays -inf.
 * ATTN_EVALUE when a stage is not both models'; ATTN_ENOMEM.
 */
enum attn_status compare_stage_view(struct compare *c, enum compare_side side,
                                    enum pipeline_stage s, int head, struct pipeline_view *v,
                                    struct attn_error *err);

/* The model whose numbers side shows (the first's for the difference). */
const struct pipeline *compare_side_pipeline(const struct compare *c, enum compare_side side);

/*
 * Every head's change, row by layer (layers * heads floats): the mean over
 * query rows of the Jensen-Shannon divergence in bits between the two
 * models' weights.  Made once per pair of pipelines (each layer's weights
 * made again in both); -1 when memory runs out or a run kept no layer.
 */
int compare_heads_changed(struct compare *c, float *out);

/*
 * The k entries of changed (count of them: compare_heads_changed's) that
 * are largest, largest first, an earlier one first on a tie, into top;
 * returns how many (k, or count when fewer).
 */
int compare_most_changed(const float *changed, int count, int k, int *top);

/* What compare_heads_changed measures, in a line (its text and files say it). */
#define COMPARE_HEADS_MEASURE \
    "the mean over rows of the Jensen-Shannon divergence (bits) between the two models' weights"

/*
 * Per position (n floats), KL(first || second) in nats of the two
 * next-token distributions over every output (each position's logits made
 * again from the final stream, a block of rows at a time); made once per
 * pair of pipelines, kept in c.
 */
enum attn_status compare_next_kl(struct compare *c, float *kl, struct attn_error *err);

/*
 * The probability the second model gives token id after position (its
 * softmax over every output): what a token the first wrote was worth to
 * the second.  NAN when memory runs out.
 */
float compare_second_prob(const struct compare *c, int position, int id);

/*
 * The logit lens of both after position: each model's likeliest token at
 * every layer and its probability (the caller's arrays, n_layer each: [0]
 * the first's, [1] the second's), and parted, the layer from which on the
 * two differ at every layer, or -1 when the last layers agree.
 */
struct compare_lens {
    int *ids[2];
    float *probs[2];
    int parted;
};
enum attn_status compare_lens_parting(const struct compare *c, int position,
                                      struct compare_lens *lens, struct attn_error *err);

#endif
