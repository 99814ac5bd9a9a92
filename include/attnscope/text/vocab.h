/*
 * vocab.h: where token embeddings come from.
 *
 * A vocabulary maps tokens to d-dimensional vectors.  It is either built in
 * (the six words of the book's sentence "Your journey starts with one step",
 * so attnscope works from any folder) or read from a CSV file of rows
 * `token,v1,...,vd` with an optional header row whose first cell is `token`.
 * Lookup is exact first, then ignoring ASCII case.  A token the vocabulary
 * lacks gets a made-up vector derived from the token alone (see
 * vocab_made_up_vector), and is flagged so every view can say so.
 */
#ifndef ATTNSCOPE_VOCAB_H
#define ATTNSCOPE_VOCAB_H

#include <stdio.h>

#include "attnscope/kernels/matrix.h"
#include "attnscope/base/status.h"
#include "attnscope/text/tokenizer.h"

#define VOCAB_MAX_DIM 8192

struct vocab {
    char *source;     /* "built-in" or the CSV file's path */
    int dim;          /* d_in */
    int count;
    char **token;     /* (count) */
    float *vector;    /* (count, dim) */
    int *slot;        /* (slots) open-addressing index: token index + 1, 0 if free */
    int slots;
};

enum attn_status vocab_builtin(struct vocab *v, struct attn_error *err);
enum attn_status vocab_load_csv(struct vocab *v, const char *path, struct attn_error *err);

struct csvio_table;
/* The vocabulary a parsed CSV table holds (what vocab_load_csv() does after reading). */
enum attn_status vocab_from_table(struct vocab *v, const struct csvio_table *t,
                                  struct attn_error *err);
void vocab_destroy(struct vocab *v);

/* The index of token, or -1 when the vocabulary lacks it. */
int vocab_find(const struct vocab *v, const char *token);

/*
 * The made-up vector of a token: dim numbers in [0, 1], rounded to two
 * decimals like the book's embeddings, drawn with attnscope's Mersenne Twister
 * from a seed that is a 64-bit FNV-1a hash of the token with ASCII letters
 * lower-cased.  The same token gives the same vector on every machine.
 */
void vocab_made_up_vector(const char *token, int dim, float *out);

/*
 * Fills out (tokens->count, v->dim) with each token's vector; made_up[i] is
 * set to 1 where the vector was made up, 0 where the vocabulary had it.
 */
void vocab_embed(const struct vocab *v, const struct token_list *tokens,
                 struct matrix *out, unsigned char *made_up);

/* Writes the vocabulary as CSV (with its header row). */
enum attn_status vocab_write_csv(FILE *f, const struct vocab *v);

#endif
