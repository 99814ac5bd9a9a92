/*
 * mixer.h: what mixes the tokens in a decoder layer, as a slot the block
 * calls (see decoder.h).  Softmax attention, with its masks, softcap and
 * sinks, is one mixer; a layer of another kind (a linear recurrence with a
 * state, a latent cache, a cache shared with another layer) is another,
 * named by the layer's entry in struct decoder_config's mixer.
 *
 * A mixer says what it computes (forward: the rows from .. n - 1 of its
 * output, s->attn (n, C), from its input a->x (n, C)), what it keeps
 * between tokens (kept_floats: for n tokens of layer, in floats; the cache
 * screen and --generate's summary read it), and in words what that is.
 */
#ifndef ATTNSCOPE_DECODER_MIXER_H
#define ATTNSCOPE_DECODER_MIXER_H

#include <stdbool.h>
#include <stddef.h>

#include "attnscope/decoder/decoder_config.h"
#include "attnscope/decoder/decoder_run.h"
#include "attnscope/decoder/parts.h"

/* The mixers a process can hold: the built-in ones and those added. */
#define DECODER_MIXERS_MAX 8

struct decoder_mixer {
    const char *name;  /* "attention" */
    const char *keeps; /* "keys and values": what kept_floats counts */
    void (*forward)(const struct part_attention_args *a, struct decoder_layer_stages *s,
                    int threads);
    size_t (*kept_floats)(const struct decoder_config *c, int layer, int n);
    /*
     * Whether its layers' stages are attention's (the queries, keys and
     * values, the (H, n, n) scores, masked, scaled and weights, which
     * decoder_show_layer makes from the queries and keys, the context);
     * false: it makes only its output (s->attn), the (H, n, n) stages stay
     * NULL, and the pipeline has none of attention's stages at its layers.
     */
    bool attention_stages;
    /*
     * Whether it reads every row of its input, whatever row a run starts
     * from (it keeps no rows of its own between runs: a recurrence made
     * again from the start): the block then norms every row for it, and
     * its forward is called from row 0.
     */
    bool whole;
    /*
     * Whether it keeps a state of its own between runs, of kept_floats(c,
     * layer, 0) floats, the same at any length (struct
     * decoder_layer_stages' kept, handed in as part_attention_args' kept):
     * a run whose first new row is the one the state has read up to calls
     * its forward from that row, any other from row 0 (every row normed).
     */
    bool keeps_state;
    /*
     * A mixer with a per-head stage of its own for the shown layer (Gated
     * DeltaNet's effective attention): its heads (heads(c), each an n x n
     * matrix, rows the queries and columns the tokens read), made by show
     * into out for the rows keep .. n - 1 (head h's row i at (h ld + i) ld)
     * from the layer's stages l; 0 or -1 when out of memory.  NULL: none.
     */
    int (*heads)(const struct decoder_config *c);
    int (*show)(const struct decoder_config *c, const struct decoder_layer_stages *l, int n,
                int keep, float *out, size_t ld, int threads);
};

/* The built-in mixers' ids (struct decoder_config's mixer[layer]). */
enum { DECODER_MIXER_ATTENTION = 0, DECODER_MIXER_GDN = 1 };

/* Gated DeltaNet (gdn.c): Qwen3.5's linear attention, its state kept between runs. */
extern const struct decoder_mixer decoder_mixer_gdn;

/*
 * One cell M[t, s] of a DeltaNet value head's effective attention, taken
 * apart: M[t, s] = beta_s k_s^T P q_t, where P is the product over the
 * tokens r in (s, t] of e^(g_r) (I - beta_r k_r k_r^T).  The decays are
 * numbers, so M = e^(sum g) (beta_s k_s . q_t + the sum of each token r's
 * correction c_r), c_r = -beta_s beta_r (k_r . u_r)(k_s . k_r), u_r the
 * query as the corrections of the tokens after r left it.  In double.
 */
struct decoder_gdn_cell {
    double beta;            /* beta_s: how strongly token s wrote its value */
    double kq;              /* k_s . q_t: the cell of plain linear attention */
    double plain_undecayed; /* beta_s k_s . q_t */
    int between;            /* t - s: the tokens whose decay and correction it went through */
    double log_decay;       /* the sum of g_r over r in (s, t] */
    double decay;           /* e^ of it: how much of token s's write is left at t */
    double corrected;       /* the sum of the corrections c_r */
    double value;           /* decay (plain_undecayed + corrected): the cell */
};

/* A DeltaNet layer's rows: q and k (n, k_heads k_dim), beta and the decay (n, v_heads). */
struct decoder_gdn_rows {
    const float *q, *k, *beta, *decay;
};

/*
 * Value head h's effective attention M, rows keep .. n - 1 of out (row t at
 * out + t ld; tokens after t 0), walk k_dim floats of scratch.
 */
void decoder_gdn_effective_head(const struct decoder_config *c, const struct decoder_gdn_rows *rows,
                                int h, int n, int keep, float *out, size_t ld, float *walk);
/*
 * DeltaNet layer's rows of run r: the shown layer's own, or made again from
 * the layer's input into *made (the caller frees it; NULL when shown).
 * 0, or -1 out of memory.
 */
struct decoder_model;
int decoder_gdn_layer_rows(const struct decoder_model *m, const struct decoder_run *r, int layer,
                           float **made, struct decoder_gdn_rows *rows);

/*
 * Head h's cell (t, s) of rows (all 0 where s > t), and each token r's
 * correction into corrections[t - r] (t - s of them; NULL: not wanted).
 * 0, or -1 out of memory.
 */
int decoder_gdn_effective_cell(const struct decoder_config *c, const struct decoder_gdn_rows *rows,
                               int h, int t, int s, double *corrections,
                               struct decoder_gdn_cell *cell);

/* Layer's mixer: c->mixer[layer]'s (decoder_config_check refuses an id no mixer has). */
const struct decoder_mixer *decoder_mixer_of(const struct decoder_config *c, int layer);
/* The mixer of id, or NULL. */
const struct decoder_mixer *decoder_mixer(int id);
/*
 * Adds a mixer to the table, before any forward uses it (a test's, or a
 * kind a build adds): its id, or -1 when the table is full.
 */
int decoder_mixer_add(const struct decoder_mixer *m);

#endif
