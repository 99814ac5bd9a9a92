/*
 * inputs.h: what a pipeline is computed from, loaded in one place.
 *
 * The vocabulary (a CSV file or the built-in one), Q/K/V given as files and
 * weights saved by --export: main.c, walkthrough steps and the tests load
 * them through inputs_load(), in one order, with one set of messages.
 */
#ifndef ATTNSCOPE_INPUTS_H
#define ATTNSCOPE_INPUTS_H

#include <stdbool.h>
#include <stdint.h>

#include "attnscope/attention/params.h"
#include "attnscope/pipeline/pipeline.h"
#include "attnscope/attention/qkv.h"
#include "attnscope/text/vocab.h"

struct inputs {
    struct vocab vocab;
    bool have_vocab;
    struct vocab source_vocab;       /* --source-embeddings: the source sentence's */
    bool have_source_vocab;
    struct qkv_given qkv;
    bool have_qkv;
    struct attention_params weights; /* laid out for cfg's variant, then read */
    bool have_weights;
};

/* Where the inputs come from; NULL: none (the built-in vocabulary). */
struct inputs_paths {
    const char *embeddings; /* -e */
    const char *qkv;        /* --qkv */
    const char *weights;    /* --weights */
    const char *source_embeddings; /* --source-embeddings */
};

/*
 * Loads the vocabulary (and the source's, which must be as wide), then Q/K/V, then the weights for cfg (whose shape
 * depends on the vocabulary's width).  A weights folder that describes
 * itself (model.csv) sets cfg's variant, d_out, heads and bias, unless an
 * option in knobs_given (bits of enum knob_id) asked for another value:
 * that is an error naming both.  On failure in is empty and err names
 * the file, or, when cfg itself is refused before the weights are read, the
 * option; *options_fault (may be NULL) says which.
 */
enum attn_status inputs_load(struct inputs *in, struct attention_config *cfg,
                             const struct inputs_paths *paths, uint64_t knobs_given,
                             bool *options_fault, struct attn_error *err);
void inputs_destroy(struct inputs *in);

struct model;


/* The pipeline source for sentence (and source, across sentences, or NULL) and the loaded inputs. */
struct pipeline_source inputs_source(const struct inputs *in, const char *sentence,
                                     const char *source);

/*
 * The text of -f FILE or --source-file FILE (option names it in messages;
 * "-": standard input) in *text (the caller frees), without one final
 * newline (an editor's, not the user's).  0, or -1 with err set.
 */
int inputs_read_text(const char *option, const char *path, char **text, struct attn_error *err);

#endif
