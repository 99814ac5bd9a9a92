/*
 * switches.h: a trained model's switches, one table.  A switch turns
 * something of the model off to show what it did: a head's context
 * zeroed (--ablate L.H), an expert no token is sent to (--expert-off L.E),
 * the attention sinks' logits -inf (--no-sinks).  Each row says its option,
 * how its value is written, what --help says of it and the view's key; the
 * command line, a lesson's options and the view parse, check and apply
 * every switch through the table, and a new switch is a row here, its
 * check, and what the source and the run do with it.
 */
#ifndef ATTNSCOPE_FAMILIES_MODEL_SWITCHES_H
#define ATTNSCOPE_FAMILIES_MODEL_SWITCHES_H

#include <stdbool.h>
#include <stddef.h>

#include "attnscope/base/status.h"
#include "attnscope/pipeline/pipeline.h"

struct model;

enum model_switch_id { SWITCH_ABLATE, SWITCH_EXPERT_OFF, SWITCH_NO_SINKS, SWITCH_COUNT };

/* The (layer, index) pairs one switch may be given. */
#define SWITCH_GIVEN_MAX 64

/*
 * The switches as given (the command line's, a lesson step's): parsed, in
 * the order given, not yet checked against a model.  A switch without a
 * value (--no-sinks) is given when its count is above 0.
 */
struct model_switches_given {
    int count[SWITCH_COUNT];
    int at[SWITCH_COUNT][SWITCH_GIVEN_MAX][2];
};

/* What the switches given make of one model: a mask per switch that has one (NULL: none). */
struct model_switch_masks {
    unsigned char *mask[SWITCH_COUNT];
};

struct model_switch {
    const char *option;  /* its long option, without the dashes: "ablate" */
    const char *metavar; /* "L.H": a layer and an index; NULL: the option takes no value */
    const char *what;    /* the index's name, "a head" */
    const char *example; /* a value to show in an error: "5.1" */
    const char *help;    /* --help's words */
    int key;             /* the view's key (0: none) */
    /*
     * The pairs given checked against m: *mask (layers x the layer's
     * heads or experts) 1 where the switch is on, NULL when none is
     * given; ATTN_EVALUE naming the option when one is not m's.
     */
    enum attn_status (*check)(const struct model *m, const int (*at)[2], int count,
                              unsigned char **mask, struct attn_error *err);
};

extern const struct model_switch model_switch_table[SWITCH_COUNT];

/* The switch whose option is name ("ablate"), or -1. */
int model_switch_find(const char *name);
/* arg for switch id into g: 0, or -1 with err naming the option and how to write it. */
int model_switch_parse(struct model_switches_given *g, enum model_switch_id id, const char *arg,
                       char *err, size_t size);
/* The first switch given in g, or -1: none. */
int model_switch_given(const struct model_switches_given *g);
/*
 * Every switch given in g checked against m (in the table's order, the
 * first refusal said) and put in src; the masks are out's, freed by
 * model_switch_masks_free whatever this returns.
 */
enum attn_status model_switches_apply(const struct model *m, const struct model_switches_given *g,
                                      struct model_switch_masks *out, struct pipeline_source *src,
                                      struct attn_error *err);
/* What g and its masks (model_switches_apply's) set in a source: its masks and flags. */
void model_switches_source(const struct model_switches_given *g,
                           const struct model_switch_masks *masks, struct pipeline_source *src);
void model_switch_masks_free(struct model_switch_masks *masks);
/*
 * The view's flip of switch id on m at (layer, index): a head zeroed or
 * back, an expert off or back, the sinks (*flag) off or back.  1 flipped
 * (the mask made when there was none); 0 refused, why says why (the sinks
 * of a model without any; an expert a token needs to stay on); -1 out of
 * memory.  Flipping again undoes it.
 */
int model_switch_flip(const struct model *m, struct model_switch_masks *masks, bool *flag,
                      enum model_switch_id id, int layer, int index, char *why, size_t size);
/* Whether (layer, index) of switch id is on in masks (or *flag for one without a mask). */
bool model_switch_on(const struct model *m, const struct model_switch_masks *masks, bool flag,
                     enum model_switch_id id, int layer, int index);

#endif
