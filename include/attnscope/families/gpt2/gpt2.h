/*
 * gpt2.h: a GPT-2 model from the files users have (issue 11).
 *
 * A model folder holds config.json and model.safetensors.  Two layouts of
 * tensor names are read, decided by the names alone: Hugging Face's
 * (`wte.weight`, `h.N.attn.c_attn.weight` stored (in, out) as GPT-2's Conv1D
 * computes x W + b; with or without a `transformer.` prefix) and the book's
 * GPTModel (`tok_emb.weight`, `trf_blocks.N.att.W_query.weight` stored
 * (out, in) as nn.Linear computes x W^T + b).  Every tensor's shape is
 * checked against config.json before the model is used.  The weights are
 * read into the model's own memory (converted exactly from F16 and BF16)
 * and the files closed: a file changed on disk afterwards changes nothing.
 */
#ifndef ATTNSCOPE_GPT2_H
#define ATTNSCOPE_GPT2_H

#include <stdbool.h>
#include <stddef.h>

#include "attnscope/files/safetensors.h"
#include "attnscope/base/status.h"

struct gpt2_config {
    int n_layer;
    int n_head;
    int n_embd;
    int n_positions; /* the longest text (n_ctx in older files) */
    int vocab_size;
    int n_inner;     /* the MLP's width: 4 n_embd unless config.json says */
    float eps;       /* layer_norm_epsilon */
    bool scale_attn_weights; /* divide the scores by sqrt(head size) (true unless it says) */
    bool scale_by_layer;     /* scale_attn_by_inverse_layer_idx: also by layer + 1 */
    bool tied;               /* tie_word_embeddings: the logits through wte (true unless it says) */
};

/* Reads and checks config.json; errors name the file and the field. */
enum attn_status gpt2_config_load(struct gpt2_config *c, const char *path,
                                  struct attn_error *err);

/* y = x W + b with W as the file stores it: (in, out) rows of ld floats, or (out, in) when out_in. */
struct gpt2_linear {
    const float *w;
    const float *b;
    int in, out;
    int ld;
    bool out_in;
};

struct gpt2_block {
    const float *ln1_g, *ln1_b;
    struct gpt2_linear q, k, v; /* each n_embd -> n_embd, the heads side by side */
    struct gpt2_linear attn_out;
    const float *ln2_g, *ln2_b;
    struct gpt2_linear fc, fc_out;
};

enum gpt2_layout { GPT2_LAYOUT_HF, GPT2_LAYOUT_BOOK };

struct gpt2_model {
    struct gpt2_config cfg;
    enum gpt2_layout layout;
    char prefix[16];            /* "" or "transformer." (Hugging Face's layout) */
    struct safetensors *shards; /* model.safetensors, or the files its index names (while loading) */
    int shard_count;
    void *shard_of;             /* (json_t *) tensor name -> shard, from the index (while loading) */
    void *tensors_read;         /* (json_t *) name -> where in weights_map (while loading) */
    int files_read;             /* how many weights files the model was read from */
    char weights_path[4096];    /* model.safetensors or model.safetensors.index.json */
    const float *wte;           /* (vocab_size, n_embd) */
    const float *wpe;           /* (n_positions, n_embd) */
    struct gpt2_block *blocks;  /* (n_layer) */
    const float *lnf_g, *lnf_b;
    const float *lm_head;       /* (vocab_size, n_embd): wte when tied */
    void *weights_map;          /* the weights, read from the files: one mapping, freed with the model */
    size_t weights_map_bytes;
    unsigned char *weights_next; /* where the next tensor goes in it */
};

/*
 * Loads dir/config.json and dir/model.safetensors (or, for a checkpoint in
 * shards, the files dir/model.safetensors.index.json's weight_map names,
 * each tensor checked to be in its shard); nothing is left half-loaded on
 * failure.
 */
enum attn_status gpt2_load(struct gpt2_model *m, const char *dir, struct attn_error *err);
void gpt2_destroy(struct gpt2_model *m);

/* One block's stages for n tokens, each row-major; H = n_head, C = n_embd, F = n_inner. */
struct gpt2_layer_stages {
    float *ln1;     /* (n, C) ln_1's output */
    float *q;       /* (n, C) queries, the heads side by side (head h: columns h*C/H ...) */
    float *k;       /* (n, C) keys */
    float *v;       /* (n, C) values */
    float *scores;  /* (H, n, n) q k^T, before the mask and the scaling */
    float *weights; /* (H, n, n) softmax of the masked scores / sqrt(C/H) */
    float *context; /* (n, C) the weights times the values, heads side by side */
    float *attn;    /* (n, C) c_proj (out_proj) of the context */
    float *resid1;  /* (n, C) the block's input + attn */
    float *ln2;     /* (n, C) ln_2's output */
    float *fc;      /* (n, F) c_fc */
    float *gelu;    /* (n, F) GELU, the tanh approximation (gelu_new) */
    float *mlp;     /* (n, C) c_proj of the MLP */
    float *resid2;  /* (n, C) resid1 + mlp: the block's output */
};

/* A forward pass over n tokens: every stage of every layer, and the top next tokens. */
struct gpt2_run {
    int n;
    int top;                          /* next tokens kept per position */
    float *tok;                       /* (n, C) wte[id]: the token embeddings */
    float *pos;                       /* (n, C) wpe[position]: the position embeddings */
    float *embed;                     /* (n, C) tok + pos: the first block's input */
    struct gpt2_layer_stages *layers; /* (n_layer) */
    float *final;                     /* (n, C) ln_f's output */
    int *top_ids;                     /* (n, top) the likeliest next tokens, likeliest first */
    float *top_probs;                 /* (n, top) their probabilities */
    float *arena;                     /* one allocation behind every buffer */
    void *arena_map;                  /* the mapping it is carved from (munmap), or NULL */
    size_t arena_map_bytes;
};

/*
 * What a learner may change in the attention of a trained model (NULL in
 * gpt2_forward: GPT-2's own: causal, scaled, T = 1).  The scores are
 * divided by sqrt(head size) * temperature when scaled, by the temperature
 * alone otherwise.
 */
struct gpt2_knobs {
    bool causal;       /* query i sees keys 0..i only */
    bool scaled;       /* divide the scores by sqrt(head size) */
    double temperature; /* > 0 */
    /*
     * (n_layer * n_head) 1 where a head is ablated: its context is zeroed
     * before c_proj, as if the head had attended to nothing; NULL: none.
     */
    const unsigned char *ablated;
};

/*
 * The number layer's scores are divided by under k (NULL: the model's own):
 * sqrt(head size) unless config.json's scale_attn_weights is false, times
 * layer + 1 when its scale_attn_by_inverse_layer_idx is true (as Hugging
 * Face's GPT-2 divides), times the temperature; 1 when k turns scaling off.
 */
float gpt2_divisor(const struct gpt2_model *m, const struct gpt2_knobs *k, int layer);

/*
 * Runs the model over ids (n of them, each below vocab_size, n at most
 * n_positions), keeping the top next tokens of every position.  With k
 * NULL: causal, scaled by 1/sqrt(head size), no dropout: GPT-2 as Hugging
 * Face's and the book's code compute it in evaluation mode.  r is the caller's to
 * gpt2_run_destroy() when this returns ATTN_OK.
 */
enum attn_status gpt2_forward(const struct gpt2_model *m, const int *ids, int n, int top,
                              const struct gpt2_knobs *k, struct gpt2_run *r,
                              struct attn_error *err);
void gpt2_run_destroy(struct gpt2_run *r);

/*
 * The logit lens: every layer's residual stream at position read through
 * ln_f and the unembedding as if it were the last layer's, its k likeliest
 * next tokens: ids and probs hold n_layer * k each (layer by layer).  The
 * last layer's are the model's own prediction; the layer where the answer
 * settles is where the model "knew" it.
 */
enum attn_status gpt2_logit_lens(const struct gpt2_model *m, const struct gpt2_run *r,
                                 int position, int k, int *ids, float *probs,
                                 struct attn_error *err);

/* The bytes gpt2_forward allocates for n tokens keeping top next tokens each. */
size_t gpt2_run_bytes(const struct gpt2_config *c, int n, int top);

#endif
