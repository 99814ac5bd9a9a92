/*
 * knob_internal.h: what knob.c (the table, most knobs), knob_writing.c
 * (the writing's knobs) and knob_use.c (parsing, the calls) share.  Not for use outside src/core/pipeline.
 */
#ifndef ATTNSCOPE_KNOB_INTERNAL_H
#define ATTNSCOPE_KNOB_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attnscope/attention/attention_config.h"

struct pipeline;

/* text as a finite number into *out: 0, or -1 with err saying why, naming option */
int knob_parse_real(const char *option, const char *text, double *out, char *err, size_t size);
/* text as a whole number of 64 bits (a seed) into *out: 0, or -1 with err saying why */
int knob_parse_u64(const char *option, const char *text, uint64_t *out, char *err, size_t size);
/* On or off, for options that stand for one of the two: whether text is "on". */
bool knob_is_on(const char *text);
/* Whether p is a trained model's pipeline: it has a transformer block's stages. */
bool knob_is_model(const struct pipeline *p);

/* The writing's knobs (knob_writing.c): parse, step, bar text and what is said of each. */
int knob_parse_sample_temperature(struct attention_config *c, const char *option, const char *text,
                                  char *err, size_t size);
int knob_step_sample_temperature(struct attention_config *c, int dir, const struct pipeline *p,
                                 char *msg, size_t size);
bool knob_bar_sample_temperature(const struct pipeline *p, char *full, char *terse);
void knob_said_sample_temperature(const struct pipeline *p, char *msg, size_t size);
int knob_parse_top_k(struct attention_config *c, const char *option, const char *text, char *err,
                     size_t size);
int knob_step_top_k(struct attention_config *c, int dir, const struct pipeline *p, char *msg,
                    size_t size);
bool knob_bar_top_k(const struct pipeline *p, char *full, char *terse);
void knob_said_top_k(const struct pipeline *p, char *msg, size_t size);
int knob_parse_top_p(struct attention_config *c, const char *option, const char *text, char *err,
                     size_t size);
bool knob_bar_top_p(const struct pipeline *p, char *full, char *terse);
void knob_said_top_p(const struct pipeline *p, char *msg, size_t size);

#endif
