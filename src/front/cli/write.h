/*
 * write.h: --generate on the command line: the model writes, --print shows
 * each token as it comes (its id, probability and rank before and after the
 * cuts), then the whole text.
 */
#ifndef ATTNSCOPE_WRITE_H
#define ATTNSCOPE_WRITE_H

#include <stdio.h>

#include "attnscope/families/model/generate.h"
#include "front/cli/cli.h"
#include "front/cli/print.h"

/* The writing's options from the command line's knobs (seed included) and end (NULL: none). */
void write_options_of(const struct attention_config *cfg, const struct generate_end *end,
                      struct generate_options *o);

/*
 * The end tokens of a writing on m: --eos's (an id, a token's text looked
 * up in m's tokenizer, or none) when given, else the model's own
 * (m->dec.end_tokens: generation_config.json's eos_token_id, a GGUF's eos
 * and eot; none for the book's .pth), end->from naming which.  ATTN_EVALUE
 * naming the option when no token is so spelled or the id is past the head.
 */
/*
 * An Ollama model's params (m->params) as the writing's defaults: its
 * temperature, top_k and top_p where the command line gave none.
 */
void write_take_params(struct cli_options *o, const struct model *m);

enum attn_status write_end_of(const struct write_eos *asked, const struct model *m,
                              struct generate_end *end, struct attn_error *err);

/*
 * Writes up to count tokens after p's text (p a model's pipeline built
 * from src), g ready (generation_init).  With out not NULL, what --print
 * shows, as it is written.  Ctrl-C stops between tokens (or inside one:
 * that token is not written): ATTN_ESTOPPED, what was written kept in g
 * and p.  *seconds: the forwards' time (what the tokens cost).  second
 * (--compare; NULL: none): another model's pipeline of the same text,
 * kept on the writer's text, each step's compared_prob the probability it
 * gave the token written.
 */
enum attn_status write_tokens(FILE *out, struct generation *g, struct pipeline *p,
                              struct pipeline *second, const struct pipeline_source *src, int count,
                              const struct print_options *po, double *seconds,
                              struct attn_error *err);

/* What was written, as --print shows it after the fact: the table of every token, the text. */
void write_print_steps(FILE *out, const struct generation *g, const struct print_options *po);

/* The whole text after the writing, as --print ends (text; csv: nothing). */
void write_print_text(FILE *out, const struct generation *g, const struct print_options *po);

#endif
