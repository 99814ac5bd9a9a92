/*
 * gpt2_random.h: a GPT-2 model of random weights held in memory, for the
 * benchmark (tests/bench/bench.c) and check_gpt2's thread test.  Not the
 * loader: the forward pass is what these measure or check.
 */
#ifndef ATTNSCOPE_TESTS_GPT2_RANDOM_H
#define ATTNSCOPE_TESTS_GPT2_RANDOM_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/gpt2.h"

/* n numbers in [-scale/2, scale/2) from a linear congruential generator; exits when out of memory. */
static inline float *
gpt2_random_floats(size_t n, float scale, unsigned *seed)
{
    float *x = malloc(n * sizeof *x);

    if (x == NULL) {
        fprintf(stderr, "out of memory for a random model\n");
        exit(1);
    }
    for (size_t i = 0; i < n; i++) {
        *seed = *seed * 1103515245u + 12345u;
        x[i] = ((float)(*seed >> 8) / 16777216.0f - 0.5f) * scale;
    }
    return x;
}

static inline struct gpt2_linear
gpt2_random_linear(int in, int out, float scale, unsigned *seed)
{
    return (struct gpt2_linear){ gpt2_random_floats((size_t)in * (size_t)out, scale, seed),
                                 gpt2_random_floats((size_t)out, scale, seed), in, out, out, false };
}

/* m gets cfg and random weights (Conv1D layout, the embedding tied); free with gpt2_random_free. */
static inline void
gpt2_random_model(struct gpt2_model *m, const struct gpt2_config *cfg, float scale, unsigned seed)
{
    const int C = cfg->n_embd;

    memset(m, 0, sizeof *m);
    m->cfg = *cfg;
    m->wte = gpt2_random_floats((size_t)cfg->vocab_size * C, scale, &seed);
    m->wpe = gpt2_random_floats((size_t)cfg->n_positions * C, scale, &seed);
    m->lm_head = m->wte;
    m->lnf_g = gpt2_random_floats(C, scale, &seed);
    m->lnf_b = gpt2_random_floats(C, scale, &seed);
    m->blocks = calloc((size_t)cfg->n_layer, sizeof *m->blocks);
    if (m->blocks == NULL) {
        fprintf(stderr, "out of memory for a random model\n");
        exit(1);
    }
    for (int l = 0; l < cfg->n_layer; l++) {
        struct gpt2_block *b = &m->blocks[l];
        b->ln1_g = gpt2_random_floats(C, scale, &seed);
        b->ln1_b = gpt2_random_floats(C, scale, &seed);
        b->q = gpt2_random_linear(C, C, scale, &seed);
        b->k = gpt2_random_linear(C, C, scale, &seed);
        b->v = gpt2_random_linear(C, C, scale, &seed);
        b->attn_out = gpt2_random_linear(C, C, scale, &seed);
        b->ln2_g = gpt2_random_floats(C, scale, &seed);
        b->ln2_b = gpt2_random_floats(C, scale, &seed);
        b->fc = gpt2_random_linear(C, cfg->n_inner, scale, &seed);
        b->fc_out = gpt2_random_linear(cfg->n_inner, C, scale, &seed);
    }
}

static inline void
gpt2_random_free(struct gpt2_model *m)
{
    free((void *)m->wte);
    free((void *)m->wpe);
    free((void *)m->lnf_g);
    free((void *)m->lnf_b);
    for (int l = 0; l < m->cfg.n_layer; l++) {
        struct gpt2_block *b = &m->blocks[l];
        const struct gpt2_linear *lin[] = { &b->q, &b->k, &b->v, &b->attn_out, &b->fc, &b->fc_out };
        free((void *)b->ln1_g);
        free((void *)b->ln1_b);
        free((void *)b->ln2_g);
        free((void *)b->ln2_b);
        for (int i = 0; i < 6; i++) {
            free((void *)lin[i]->w);
            free((void *)lin[i]->b);
        }
    }
    free(m->blocks);
    memset(m, 0, sizeof *m);
}

#endif
