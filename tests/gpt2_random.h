/*
 * gpt2_random.h: a GPT-2 model of random weights held in memory, for the
 * benchmark (tests/bench/bench.c) and check_gpt2's thread test (not the
 * loader: the forward pass is what these measure or check); and such a
 * model written as a folder of any shape (gpt2_random_folder), for tests of
 * the loader and the program on shapes no fixture has (tests/gpt2-folder
 * writes one for the scripts).
 */
#ifndef ATTNSCOPE_TESTS_GPT2_RANDOM_H
#define ATTNSCOPE_TESTS_GPT2_RANDOM_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "attnscope/architectures/gpt2.h"

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

static inline struct decoder_linear
gpt2_random_linear(int in, int out, float scale, unsigned *seed)
{
    return (struct decoder_linear){ .w = gpt2_random_floats((size_t)in * (size_t)out, scale, seed),
                                    .b = gpt2_random_floats((size_t)out, scale, seed),
                                    .in = in,
                                    .out = out,
                                    .ld = out };
}

/* m gets cfg and random weights (Conv1D layout, the embedding tied); free with gpt2_random_free. */
static inline void
gpt2_random_model(struct decoder_model *m, const struct decoder_config *cfg, float scale, unsigned seed)
{
    const int C = cfg->d_model;

    memset(m, 0, sizeof *m);
    m->cfg = *cfg;
    m->tok_embed = gpt2_random_floats((size_t)cfg->vocab_size * C, scale, &seed);
    m->pos_embed = gpt2_random_floats((size_t)cfg->n_ctx * C, scale, &seed);
    m->lm_head = m->tok_embed;
    m->final_norm.scale = gpt2_random_floats(C, scale, &seed);
    m->final_norm.shift = gpt2_random_floats(C, scale, &seed);
    m->blocks = calloc((size_t)cfg->n_layer, sizeof *m->blocks);
    if (m->blocks == NULL) {
        fprintf(stderr, "out of memory for a random model\n");
        exit(1);
    }
    for (int l = 0; l < cfg->n_layer; l++) {
        struct decoder_block *b = &m->blocks[l];
        b->norm1.scale = gpt2_random_floats(C, scale, &seed);
        b->norm1.shift = gpt2_random_floats(C, scale, &seed);
        b->q = gpt2_random_linear(C, C, scale, &seed);
        b->k = gpt2_random_linear(C, C, scale, &seed);
        b->v = gpt2_random_linear(C, C, scale, &seed);
        b->o = gpt2_random_linear(C, C, scale, &seed);
        b->norm2.scale = gpt2_random_floats(C, scale, &seed);
        b->norm2.shift = gpt2_random_floats(C, scale, &seed);
        b->up = gpt2_random_linear(C, cfg->d_mlp, scale, &seed);
        b->down = gpt2_random_linear(cfg->d_mlp, C, scale, &seed);
    }
}

static inline void
gpt2_random_free(struct decoder_model *m)
{
    free((void *)m->tok_embed);
    free((void *)m->pos_embed);
    free((void *)m->final_norm.scale);
    free((void *)m->final_norm.shift);
    for (int l = 0; l < m->cfg.n_layer; l++) {
        struct decoder_block *b = &m->blocks[l];
        const struct decoder_linear *lin[] = { &b->q, &b->k, &b->v, &b->o, &b->up, &b->down };
        free((void *)b->norm1.scale);
        free((void *)b->norm1.shift);
        free((void *)b->norm2.scale);
        free((void *)b->norm2.shift);
        for (int i = 0; i < 6; i++) {
            free((void *)lin[i]->w);
            free((void *)lin[i]->b);
            linalg_packed_destroy((struct linalg_packed *)&lin[i]->packed);
        }
    }
    linalg_packed_destroy(&m->head_packed);
    free(m->blocks);
    memset(m, 0, sizeof *m);
}

/*
 * folder (made if absent) gets config.json for cfg (with extra, a text of
 * further "key": value pairs, or NULL) and model.safetensors of random F32
 * weights in Hugging Face's names and Conv1D's (in, out) shapes, written
 * byte by byte from the format's description.  The tokenizer is the
 * caller's to add.  0, or -1 (errno) when a file cannot be written.
 */
static inline int
gpt2_random_folder(const char *folder, const struct decoder_config *cfg, float scale, unsigned seed,
                   const char *extra)
{
    static const struct {
        const char *suffix;
        int d0, d1; /* in units: 1 C, 3 3C, 4 F; d1 0: one dimension */
    } parts[] = {
        { "ln_1.weight", 1, 0 },      { "ln_1.bias", 1, 0 },          { "attn.c_attn.weight", 1, 3 },
        { "attn.c_attn.bias", 3, 0 }, { "attn.c_proj.weight", 1, 1 }, { "attn.c_proj.bias", 1, 0 },
        { "ln_2.weight", 1, 0 },      { "ln_2.bias", 1, 0 },          { "mlp.c_fc.weight", 1, 4 },
        { "mlp.c_fc.bias", 4, 0 },    { "mlp.c_proj.weight", 4, 1 },  { "mlp.c_proj.bias", 1, 0 },
    };
    const size_t C = (size_t)cfg->d_model;
    const size_t units[5] = { 0, C, 0, 3 * C, (size_t)cfg->d_mlp };
    const size_t nt = 4 + 12 * (size_t)cfg->n_layer;
    char(*name)[48] = malloc(nt * sizeof *name);
    size_t(*shape)[2] = malloc(nt * sizeof *shape);
    size_t cap = 128 * nt + 64;
    char *header = malloc(cap);
    char path[4096];
    size_t len = 0;
    size_t at = 0;
    size_t k = 0;
    FILE *f;

    if (name == NULL || shape == NULL || header == NULL ||
        (mkdir(folder, 0777) != 0 && errno != EEXIST)) {
        free(name);
        free(shape);
        free(header);
        return -1;
    }
#define GPT2_TENSOR(n, a, b) \
    (snprintf(name[k], sizeof name[k], "%s", (n)), shape[k][0] = (a), shape[k][1] = (b), k++)
    GPT2_TENSOR("wte.weight", (size_t)cfg->vocab_size, C);
    GPT2_TENSOR("wpe.weight", (size_t)cfg->n_ctx, C);
    for (int l = 0; l < cfg->n_layer; l++)
        for (size_t p = 0; p < sizeof parts / sizeof parts[0]; p++) {
            char n[48];
            snprintf(n, sizeof n, "h.%d.%s", l, parts[p].suffix);
            GPT2_TENSOR(n, units[parts[p].d0], units[parts[p].d1]);
        }
    GPT2_TENSOR("ln_f.weight", C, 0);
    GPT2_TENSOR("ln_f.bias", C, 0);
#undef GPT2_TENSOR
    len += (size_t)snprintf(header + len, cap - len, "{");
    for (size_t i = 0; i < nt; i++) {
        size_t bytes = shape[i][0] * (shape[i][1] ? shape[i][1] : 1) * 4;
        if (shape[i][1])
            len += (size_t)snprintf(header + len, cap - len,
                                    "%s\"%s\":{\"dtype\":\"F32\",\"shape\":[%zu,%zu],"
                                    "\"data_offsets\":[%zu,%zu]}",
                                    i ? "," : "", name[i], shape[i][0], shape[i][1], at, at + bytes);
        else
            len += (size_t)snprintf(header + len, cap - len,
                                    "%s\"%s\":{\"dtype\":\"F32\",\"shape\":[%zu],"
                                    "\"data_offsets\":[%zu,%zu]}",
                                    i ? "," : "", name[i], shape[i][0], at, at + bytes);
        at += bytes;
    }
    len += (size_t)snprintf(header + len, cap - len, "}");
    while (len % 8 != 0)
        header[len++] = ' ';
    snprintf(path, sizeof path, "%s/model.safetensors", folder);
    f = fopen(path, "wb");
    if (f != NULL) {
        for (int b = 0; b < 8; b++)
            fputc((int)(((uint64_t)len >> (8 * b)) & 255), f);
        fwrite(header, 1, len, f);
        for (size_t i = 0; i < nt; i++) {
            size_t count = shape[i][0] * (shape[i][1] ? shape[i][1] : 1);
            float *x = gpt2_random_floats(count, scale, &seed);
            fwrite(x, sizeof *x, count, f);
            free(x);
        }
        if (fclose(f) != 0)
            f = NULL;
    }
    free(name);
    free(shape);
    free(header);
    if (f == NULL)
        return -1;
    snprintf(path, sizeof path, "%s/config.json", folder);
    f = fopen(path, "w");
    if (f == NULL)
        return -1;
    fprintf(f,
            "{\"model_type\": \"gpt2\", \"n_layer\": %d, \"n_head\": %d, \"n_embd\": %d, "
            "\"n_positions\": %d, \"vocab_size\": %d, \"n_inner\": %d, "
            "\"layer_norm_epsilon\": 1e-05%s%s}\n",
            cfg->n_layer, cfg->n_head, cfg->d_model, cfg->n_ctx, cfg->vocab_size,
            cfg->d_mlp, extra != NULL ? ", " : "", extra != NULL ? extra : "");
    return fclose(f) == 0 ? 0 : -1;
}

/*
 * gpt2_random_folder with a tokenizer: vocab.json and merges.txt copied in
 * from the folder tokenizer (the tiny fixture's, whose 317 tokens fit a
 * vocabulary of 317 or more).  0, or -1 when a file cannot be written.
 */
static inline int
gpt2_random_folder_with(const char *folder, const struct decoder_config *cfg, float scale,
                        unsigned seed, const char *tokenizer)
{
    char cmd[3 * 4096 + 64];

    if (gpt2_random_folder(folder, cfg, scale, seed, NULL) != 0)
        return -1;
    snprintf(cmd, sizeof cmd, "cp '%s/vocab.json' '%s/merges.txt' '%s/'", tokenizer, tokenizer,
             folder);
    return system(cmd) == 0 ? 0 : -1;
}

#endif
