/*
 * run.h: the memory of a decoder's run (decoder.h's struct decoder_run),
 * the decoder's own: one arena carved into what every layer keeps, the
 * shown layer's slot and the forward's working slot, the scratch of the
 * logits and the attention; kept and reused from run to run, moved into an
 * edit's run, and given back.
 */
#ifndef ATTNSCOPE_DECODER_RUN_H
#define ATTNSCOPE_DECODER_RUN_H

#include <stddef.h>

#include "attnscope/decoder/decoder.h"

/* The slot whose stages are the shown layer's, and the forward's own for the other layers. */
enum run_slot { RUN_SLOT_SHOWN, RUN_SLOT_WORK };

/* The vocabulary is scored in slices of this many tokens: the products pack each slice once. */
#define RUN_LOGIT_SLICE 2048

/*
 * A run with room for cap rows, n of them used, its layer list and knobs'
 * memory allocated; lean: one layer's keys and values for all, two outputs
 * taken in turn, no shown slot (decoder_run.lean).  -1 when out of memory
 * (r destroyed).
 */
int run_carve(const struct decoder_config *c, int n, int cap, int top, bool lean,
              struct decoder_run *r);

/* The stages of slot for layer: the slot's buffers, the layer's kept keys, values and output. */
void run_slot(const struct decoder_config *c, const struct decoder_run *r, enum run_slot slot,
              int layer, struct decoder_layer_stages *s);

/* r->layers as r->shown says: the shown layer's every stage, the others' kept ones only. */
void run_expose(const struct decoder_config *c, struct decoder_run *r);

/* Where r's scratch is: a slice of logits per row, and H times part_attention_scratch(cap). */
void run_scratch(const struct decoder_config *c, const struct decoder_run *r, float **logits,
                 float **attention);

/*
 * The rows before from of everything prev keeps (and of its shown layer,
 * which r shows too) copied into r, a run of the same model; -1 when out
 * of memory.
 */
int run_take_rows(const struct decoder_config *c, const struct decoder_run *prev, int from,
                  struct decoder_run *r);

/*
 * prev's rows from .. prev->n - 1, put aside while an edit computes over
 * them in prev's memory, so that a stop or a failure gives prev back.
 */
struct run_aside {
    float *rows;
    int *ids;
    void *list; /* the buffers' list, had before: putting back cannot fail */
};
/* -1 when out of memory (nothing put aside). */
int run_aside_save(const struct decoder_config *c, const struct decoder_run *prev, int from,
                   struct run_aside *a);
/* Puts them back into prev and frees them. */
void run_aside_restore(const struct decoder_config *c, struct decoder_run *prev, int from,
                       struct run_aside *a);
void run_aside_free(struct run_aside *a);

/*
 * r over prev's memory for n rows (prev->cap >= n), with a layer list and
 * knobs' memory of its own (and no (H, n, n) stages until
 * run_carry_attention); prev is not changed.  -1 when out of memory.
 */
int run_adopt(const struct decoder_config *c, const struct decoder_run *prev, int n,
              struct decoder_run *r);
/*
 * Frees what a run has of its own beside the memory it shares (its layer
 * list, knobs, (H, n, n) stages) and empties it: an adopting r when the
 * edit fails, or prev once r has adopted its memory.
 */
void run_unadopt(struct decoder_run *r);

/* The (H, n, n) stages of the shown layer: scores, masked, scaled, weights, in that order. */
#define RUN_ATTENTION_STAGES 4
/* The floats of one layer's (H, n, n) stages over n tokens. */
size_t run_attention_floats(const struct decoder_config *c, int n);

/*
 * r's memory for layer's (H, n, n) stages, RUN_ATTENTION_STAGES arrays a
 * quarter of r->attention_floats apart, each with room for
 * r->attention_ld >= r->n tokens (rows attention_ld floats apart): the
 * rows and columns r->attention_rows kept (an edit's, when they are the
 * same layer's and still fit; where they were), none kept for another
 * layer.  -1 when out of memory (none kept).
 */
int run_attention(const struct decoder_config *c, struct decoder_run *r, int layer);

/*
 * Hands prev's (H, n, n) stages over to r, an edit of it made in place
 * whose first changed token is from: the rows and columns before it are
 * r's too when r shows the same layer.
 */
void run_carry_attention(struct decoder_run *prev, int from, struct decoder_run *r);

#endif
