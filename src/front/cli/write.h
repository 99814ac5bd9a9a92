/*
 * write.h: --generate on the command line: the model writes, --print shows
 * each token as it comes (its id, probability and rank before and after the
 * cuts), then the whole text.
 */
#ifndef ATTNSCOPE_WRITE_H
#define ATTNSCOPE_WRITE_H

#include <stdio.h>

#include "attnscope/families/decoder/generate.h"
#include "front/cli/print.h"

/* The writing's options from the command line's knobs (seed included) and --eos. */
void write_options_of(const struct attention_config *cfg, int eos, struct generate_options *o);

/*
 * Writes up to count tokens after p's text (p a model's pipeline built
 * from src), g ready (generation_init).  With out not NULL, what --print
 * shows, as it is written.  Ctrl-C stops between tokens (or inside one:
 * that token is not written): ATTN_ESTOPPED, what was written kept in g
 * and p.  *seconds: the forwards' time (what the tokens cost).
 */
enum attn_status write_tokens(FILE *out, struct generation *g, struct pipeline *p,
                              const struct pipeline_source *src, int count,
                              const struct print_options *po, double *seconds,
                              struct attn_error *err);

/* What was written, as --print shows it after the fact: the table of every token, the text. */
void write_print_steps(FILE *out, const struct generation *g, const struct print_options *po);

/* The whole text after the writing, as --print ends (text; csv: nothing). */
void write_print_text(FILE *out, const struct generation *g, const struct print_options *po);

#endif
