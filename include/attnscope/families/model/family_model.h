/*
 * family_model.h: what the trained-model family keeps beyond the stages
 * every family shares: the token ids and the forward pass (decoder.h)
 * behind them, for the front ends' token ids and next-token predictions.
 */
#ifndef ATTNSCOPE_FAMILY_MODEL_H
#define ATTNSCOPE_FAMILY_MODEL_H

#include <stdbool.h>

#include "attnscope/models/model.h"
#include "attnscope/pipeline/pipeline.h"

struct generation;

struct family_model_state {
    const struct model *model; /* borrowed from the pipeline's source */
    int *ids;                  /* (n) the token ids, <|endoftext|> first with bos */
    bool bos;
    struct decoder_run run;       /* every stage of every layer, the top next tokens */
    char *labels;              /* the tokens' display text */
    int ablated_heads;         /* heads whose context the source zeroed (pipeline_source) */
    /* What the run was made with, so that an edit can take its unchanged rows over. */
    struct decoder_knobs knobs;     /* (knobs.ablated: ablated, below) */
    unsigned char *ablated;         /* (n_layer * n_head) a copy of the source's, or NULL */
    unsigned char *experts_off;     /* (n_layer * n_experts) a copy of the source's, or NULL */
    int experts_off_count;          /* how many of them are off */
    int top;
    bool no_attention;              /* the source's: the shown layer's n x n stages not made */
    int from;                       /* the first row this run computed (0: all of them) */
    int from_layer;                 /* the first layer it computed (an ablation's; 0: all) */
    float *measures;                /* every head's measures (headmap.h), made when first
                                       asked for, or NULL */
    /*
     * The writing this text came from (generate.h: its last draw, its
     * cache's costs), set by the writing when it builds the pipeline, or
     * NULL.  Borrowed: the writing outlives the pipelines it builds.
     */
    const struct generation *writing;
    /*
     * A comparison this pipeline is the first of (compare.h), set by
     * whoever compares it with a second model (a lesson's step: its
     * narration quotes the second's numbers and the difference), or NULL.
     * Borrowed.
     */
    struct compare *compared;
};

/*
 * The experts token position of p's shown layer was sent to, the router's
 * first choice first (as torch.topk ranked them), into experts and the
 * weight each one's output was multiplied by into weights (n_experts_used
 * of each); returns how many, 0 when the shown layer is not sparse.
 */
int family_model_routes(const struct pipeline *p, int position, int *experts, float *weights);

/* p's model state, or NULL when p is not a trained model's. */
const struct family_model_state *pipeline_decoder(const struct pipeline *p);

/*
 * Every position's next tokens of p's run made, those its source left for
 * later (pipeline_source.next_later): what reads them all (the next-token
 * screen and table, the export, a lesson's numbers) asks first.  A cache
 * in p's state, as the head measures are.  0, or -1 when they could not
 * be made (no memory, stopped): those rows' first id stays
 * DECODER_NEXT_LATER.  p not a model's: 0.
 */
int family_model_next_tokens(const struct pipeline *p);

/* What a pipeline of n tokens of this model holds beside the weights (its estimate). */
size_t family_model_pipeline_bytes(const struct decoder_config *c, int n, int top);

/*
 * The weights packed once for the products, when they and what packing
 * holds beside them (decoder_pack_transient_bytes) take at most four fifths
 * of this machine's memory: for a front end that runs many forwards (the
 * view: every edit and knob).  Packing GPT-2 small takes about 0.3 s, which
 * one forward (--print) does not win back, so --print and --export do not
 * pack; the products then pack as they go, with the same bits.  Packed a
 * layer at a time (decoder_pack_replacing), each layer's copies given back
 * as its packs are made (a bfloat16 matrix packed over itself): the packs
 * take the weights' place rather than adding a second copy, even while
 * they are made.  true when everything was packed.  The view also makes
 * what is still read from the files its own (decoder_pin_mapped: a file
 * saved over then changes nothing); a process that writes and ends
 * (--generate with --print or --export) need not: family_model_pack_for_writing.
 */
bool family_model_pack_if_room(struct decoder_model *m);
bool family_model_pack_for_writing(struct decoder_model *m);

/*
 * The same packing on a thread of its own while the model is used as it is
 * (the view draws its first frame meanwhile: a model opens as fast as
 * --print's; the products pack as they go until then, the same bits).
 * family_model_pack_settle, without waiting, puts the packs in once they
 * are made, then makes what is still read from the files the process's own
 * (decoder_pin_mapped); true when it did.  Call it only
 * while no forward runs on m (the view: between keys).
 */
void family_model_pack_meanwhile(struct decoder_model *m);
bool family_model_pack_settle(struct decoder_model *m);

/* The knobs of cfg that a trained model has (mask, scaling, temperature). */
void family_model_knobs_of(const struct attention_config *cfg, struct decoder_knobs *k);

#endif
