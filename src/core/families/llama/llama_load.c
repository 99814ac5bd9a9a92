/*
 * llama_load.c: a Llama-style model's weights (see llama.h), under Hugging
 * Face's names or the book's, read through decoder/weights.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/base/progress.h"
#include "attnscope/decoder/weights.h"
#include "attnscope/families/llama/llama.h"
#include "attnscope/files/fileio.h"

/* A layout of names: Hugging Face's (modeling_llama, _qwen2, _qwen3) or the book's notebooks'. */
struct names {
    const char *embed, *final_norm, *head;
    const char *block; /* with %d for the layer */
    const char *norm1, *norm2;
    const char *q, *k, *v, *o, *q_norm, *k_norm;
    const char *gate, *up, *down;
    const char *weight, *bias; /* a linear's tensors' suffixes */
};

static const struct names hf_names = {
    "embed_tokens.weight", "norm.weight", "lm_head.weight", "layers.%d.",
    "input_layernorm.weight", "post_attention_layernorm.weight",
    "self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj",
    "self_attn.q_norm.weight", "self_attn.k_norm.weight",
    "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj", ".weight", ".bias",
};

/* The book's Qwen3 (ch05/11: its own RMSNorm's "scale"); its Llama 3.2 uses nn.RMSNorm's "weight". */
static const struct names book_names = {
    "tok_emb.weight", "final_norm.scale", "out_head.weight", "trf_blocks.%d.",
    "norm1.scale", "norm2.scale",
    "att.W_query", "att.W_key", "att.W_value", "att.out_proj",
    "att.q_norm.scale", "att.k_norm.scale",
    "ff.fc1", "ff.fc2", "ff.fc3", ".weight", ".bias",
};
static const struct names book_llama_names = {
    "tok_emb.weight", "final_norm.weight", "out_head.weight", "trf_blocks.%d.",
    "norm1.weight", "norm2.weight",
    "att.W_query", "att.W_key", "att.W_value", "att.out_proj",
    "att.q_norm.scale", "att.k_norm.scale",
    "ff.fc1", "ff.fc2", "ff.fc3", ".weight", ".bias",
};

struct loader {
    struct weights_loader w;
    const struct names *nm;
    struct llama_config cfg;
};

/* The name of a block's tensor into buf. */
static const char *
block_name(const struct loader *ld, int layer, const char *part, const char *suffix, char *buf,
           size_t size)
{
    char blk[48];

    snprintf(blk, sizeof blk, ld->nm->block, layer);
    snprintf(buf, size, "%s%s%s", blk, part, suffix);
    return buf;
}

/* nn.Linear (out, in) of block layer and its bias when has_bias. */
static int
linear(struct loader *ld, struct decoder_linear *l, int layer, const char *part, int in, int out,
       bool has_bias, struct attn_error *err)
{
    char name[160];

    return weights_linear(&ld->w, l, block_name(ld, layer, part, "", name, sizeof name), in, out,
                          has_bias, err);
}

static int
load_block(struct loader *ld, int i, struct attn_error *err)
{
    const struct llama_config *lc = &ld->cfg;
    const struct decoder_config *c = &lc->dec;
    const int C = c->n_embd, F = c->n_inner, hd = decoder_head_dim(c);
    const int Q = decoder_q_width(c), K = decoder_kv_width(c);
    struct decoder_block *b = &ld->w.m->blocks[i];
    char n[160];

    if ((b->norm1.scale = weights_vector(&ld->w, block_name(ld, i, ld->nm->norm1, "", n, sizeof n),
                                         C, err)) == NULL ||
        linear(ld, &b->q, i, ld->nm->q, C, Q, lc->qkv_bias, err) != 0 ||
        linear(ld, &b->k, i, ld->nm->k, C, K, lc->qkv_bias, err) != 0 ||
        linear(ld, &b->v, i, ld->nm->v, C, K, lc->qkv_bias, err) != 0 ||
        linear(ld, &b->o, i, ld->nm->o, Q, C, lc->o_bias, err) != 0 ||
        (b->norm2.scale = weights_vector(&ld->w, block_name(ld, i, ld->nm->norm2, "", n, sizeof n),
                                         C, err)) == NULL ||
        linear(ld, &b->gate, i, ld->nm->gate, C, F, lc->mlp_bias, err) != 0 ||
        linear(ld, &b->up, i, ld->nm->up, C, F, lc->mlp_bias, err) != 0 ||
        linear(ld, &b->down, i, ld->nm->down, F, C, lc->mlp_bias, err) != 0)
        return -1;
    if (c->qk_norm &&
        ((b->q_norm.scale = weights_vector(
              &ld->w, block_name(ld, i, ld->nm->q_norm, "", n, sizeof n), hd, err)) == NULL ||
         (b->k_norm.scale = weights_vector(
              &ld->w, block_name(ld, i, ld->nm->k_norm, "", n, sizeof n), hd, err)) == NULL))
        return -1;
    return 0;
}

/* Which names the file uses (and Hugging Face's "model." prefix); -1 with err set. */
static int
choose_layout(struct loader *ld, struct attn_error *err)
{
    struct decoder_model *m = ld->w.m;

    m->names = DECODER_NAMES_HF;
    ld->nm = &hf_names;
    if (tensors_find(&ld->w.src, "model.embed_tokens.weight") != NULL) {
        snprintf(ld->w.prefix, sizeof ld->w.prefix, "model.");
        return 0;
    }
    if (tensors_find(&ld->w.src, "embed_tokens.weight") != NULL)
        return 0;
    if (tensors_find(&ld->w.src, "tok_emb.weight") != NULL &&
        tensors_find(&ld->w.src, "trf_blocks.0.ff.fc1.weight") != NULL) {
        m->names = DECODER_NAMES_BOOK;
        ld->nm = tensors_find(&ld->w.src, "trf_blocks.0.norm1.weight") != NULL ? &book_llama_names
                                                                            : &book_names;
        return 0;
    }
    attn_fail(err, ATTN_EPARSE,
              "%s: neither a Llama-style model's tensor names (model.embed_tokens.weight, "
              "model.layers.0.self_attn.q_proj.weight, ...) nor the book's (tok_emb.weight, "
              "trf_blocks.0.att.W_query.weight, trf_blocks.0.ff.fc1.weight, ...)",
              m->source);
    return -1;
}

/* How many blocks the file has (weights_count_blocks by each block's query projection). */
static int
count_blocks(const struct loader *ld)
{
    char format[128];

    snprintf(format, sizeof format, "%s%s%s", ld->nm->block, ld->nm->q, ld->nm->weight);
    return weights_count_blocks(&ld->w, format, 1 << 16);
}

/*
 * The book's files have no config.json: the sizes from the tensors' shapes,
 * the rest from the book's settings (ch05/11's QWEN_CONFIG_06_B, ch05/07's
 * LLAMA32_CONFIG): Qwen3 when the file has QK-norm (its head size is the
 * norm's), else Llama 3.2 1B or 3B, known by their width.
 */
static int
book_sizes(struct loader *ld, struct attn_error *err)
{
    struct decoder_model *m = ld->w.m;
    struct llama_config *lc = &ld->cfg;
    struct decoder_config *c = &lc->dec;
    char n[160];
    int64_t q_rows, k_rows, hd;

    memset(lc, 0, sizeof *lc);
    lc->bos_token = -1;
    c->vocab_size = (int)weights_dim(&ld->w, ld->nm->embed, 0);
    c->n_embd = (int)weights_dim(&ld->w, ld->nm->embed, 1);
    c->n_layer = count_blocks(ld);
    c->n_inner = (int)weights_dim(&ld->w, block_name(ld, 0, ld->nm->gate, ld->nm->weight, n,
                                                     sizeof n), 0);
    q_rows = weights_dim(&ld->w, block_name(ld, 0, ld->nm->q, ld->nm->weight, n, sizeof n), 0);
    k_rows = weights_dim(&ld->w, block_name(ld, 0, ld->nm->k, ld->nm->weight, n, sizeof n), 0);
    hd = weights_dim(&ld->w, block_name(ld, 0, ld->nm->q_norm, "", n, sizeof n), 0);
    c->positions = DECODER_POSITIONS_ROPE;
    c->norm = DECODER_NORM_RMS;
    c->mlp = DECODER_MLP_SWIGLU;
    c->scale_attn_weights = true;
    c->tied = false; /* (the book's out_head is its own tensor, even when it was tied) */
    if (hd > 0) {
        snprintf(lc->model_type, sizeof lc->model_type, "qwen3");
        c->qk_norm = true;
        c->head_dim = (int)hd; /* (weights_dim: at most INT32_MAX) */
        c->rope_theta = 1000000.0;
        c->eps = 1e-6f;
        c->n_positions = 40960;
        snprintf(m->heads_from, sizeof m->heads_from,
                 "the head size from q_norm, the rest from the book's Qwen3 settings (ch05/11)");
        snprintf(m->context_from, sizeof m->context_from, "the book's Qwen3 settings");
    } else {
        snprintf(lc->model_type, sizeof lc->model_type, "llama");
        c->head_dim = c->n_embd == 2048 ? 64 : c->n_embd == 3072 ? 128 : 0;
        c->rope_theta = 500000.0;
        c->eps = 1e-5f;
        c->n_positions = 131072;
        c->rope_scaling = (struct decoder_rope_scaling){ true, 32.0, 1.0, 4.0, 8192 };
        snprintf(m->heads_from, sizeof m->heads_from,
                 "the book's Llama 3.2 settings for this width (ch05/07)");
        snprintf(m->context_from, sizeof m->context_from, "the book's Llama 3.2 settings");
    }
    if (hd <= 0 && c->head_dim == 0) {
        attn_fail(err, ATTN_EPARSE,
                  "%s: the book's names, but no config.json beside it and not the book's Qwen3 "
                  "or Llama 3.2 1B/3B (width %d): put the model's config.json beside it",
                  m->source, c->n_embd);
        return -1;
    }
    if (c->head_dim < 1 || q_rows % c->head_dim != 0 || k_rows % c->head_dim != 0) {
        attn_fail(err, ATTN_EPARSE,
                  "%s: %s has %lld rows and %s %lld: not whole heads of %lld columns (%s)",
                  m->source, ld->nm->q, (long long)q_rows, ld->nm->k, (long long)k_rows,
                  (long long)c->head_dim, m->heads_from);
        return -1;
    }
    c->n_head = (int)(q_rows / c->head_dim);
    c->n_kv_head = (int)(k_rows / c->head_dim);
    if (c->n_kv_head < 1) {
        attn_fail(err, ATTN_EPARSE, "%s: 0 key heads (from %s's %lld rows): a model has at least "
                  "one", m->source, ld->nm->k, (long long)k_rows);
        return -1;
    }
    lc->qkv_bias = weights_find(&ld->w, block_name(ld, 0, ld->nm->q, ld->nm->bias, n, sizeof n)) !=
                   NULL;
    snprintf(m->described_by, sizeof m->described_by, "the tensors' shapes");
    ld->w.sizes_from = "the tensors' shapes";
    return 0;
}

/* The sizes: config.json in dir, else (the book's files) the tensors'. */
static int
describe(struct loader *ld, const char *dir, struct attn_error *err)
{
    char path[4096];

    if (snprintf(path, sizeof path, "%s/config.json", dir) >= (int)sizeof path) {
        attn_fail(err, ATTN_EIO, "%s: the folder's name is too long", dir);
        return -1;
    }
    if (fileio_absent(path)) {
        if (ld->w.m->names == DECODER_NAMES_BOOK)
            return book_sizes(ld, err);
        attn_fail(err, ATTN_EPARSE, "%s: no config.json beside the weights", dir);
        return -1;
    }
    if (llama_config_load(&ld->cfg, path, err) != ATTN_OK)
        return -1;
    snprintf(ld->w.m->described_by, sizeof ld->w.m->described_by, "config.json");
    snprintf(ld->w.m->context_from, sizeof ld->w.m->context_from,
             "max_position_embeddings in config.json");
    return 0;
}

static int
load_tensors(struct loader *ld, struct attn_error *err)
{
    struct decoder_model *m = ld->w.m;
    const struct decoder_config *c = &m->cfg;
    char saved[sizeof ld->w.prefix];
    int rc;

    if (weights_matrix_kept(&ld->w, ld->nm->embed, c->vocab_size, c->n_embd, &m->wte, &m->wte16,
                            err) != 0 ||
        (m->final_norm.scale = weights_vector(&ld->w, ld->nm->final_norm, c->n_embd, err)) == NULL)
        return -1;
    progress_begin("reading the weights", c->n_layer);
    for (int i = 0; i < c->n_layer; i++) {
        if (load_block(ld, i, err) != 0) {
            progress_end();
            return -1;
        }
        progress_step(i + 1);
    }
    progress_end();
    m->lm_head = m->wte;
    m->lm_head16 = m->wte16;
    if (c->tied)
        return 0;
    /* Hugging Face's lm_head has no "model." prefix. */
    memcpy(saved, ld->w.prefix, sizeof saved);
    ld->w.prefix[0] = '\0';
    rc = weights_matrix_kept(&ld->w, ld->nm->head, c->vocab_size, c->n_embd, &m->lm_head,
                             &m->lm_head16, err);
    memcpy(ld->w.prefix, saved, sizeof saved);
    return rc;
}

enum attn_status
llama_load(struct decoder_model *m, const char *dir, const char *weights, struct attn_error *err)
{
    struct loader ld;
    char n[160];
    enum attn_status rc = ATTN_EPARSE;

    memset(m, 0, sizeof *m);
    memset(&ld, 0, sizeof ld);
    if (weights_open(&ld.w, m, weights != NULL ? weights : dir, err) != ATTN_OK)
        return err->status;
    /* These models ship in bfloat16: their matrices stay so, half the memory of float32. */
    ld.w.keep_bf16 = true;
    if (choose_layout(&ld, err) != 0 || describe(&ld, dir, err) != 0 ||
        decoder_config_check(&ld.cfg.dec, m->source, ld.w.sizes_from, err) != ATTN_OK)
        goto fail;
    m->cfg = ld.cfg.dec;
    m->bos_token = ld.cfg.bos_token;
    snprintf(m->architecture, sizeof m->architecture, "%s", ld.cfg.model_type);
    if (m->cfg.n_layer > 0 &&
        weights_find(&ld.w, block_name(&ld, m->cfg.n_layer - 1, ld.nm->q, ld.nm->weight, n,
                                       sizeof n)) == NULL) {
        attn_fail(err, ATTN_EPARSE, "%s: no tensor '%s%s': %s says %d layers, the file has %d",
                  m->source, ld.w.prefix, n, ld.w.sizes_from, m->cfg.n_layer, count_blocks(&ld));
        goto fail;
    }
    decoder_rope_frequencies(&m->cfg, m->rope_freq);
    if ((rc = weights_reserve(&ld.w, err)) != ATTN_OK)
        goto fail;
    rc = ATTN_EPARSE;
    if (load_tensors(&ld, err) != 0)
        goto fail;
    weights_close(&ld.w);
    return ATTN_OK;
fail:
    rc = err->status != ATTN_OK ? err->status : rc;
    weights_close(&ld.w);
    decoder_destroy(m);
    return rc;
}

bool
llama_claims(const char *path)
{
    struct tensor_source src;
    struct attn_error err = { 0 };
    bool yes;

    memset(&src, 0, sizeof src);
    if (tensors_open(&src, path, &err) != ATTN_OK)
        return false;
    yes = tensors_find(&src, "model.layers.0.self_attn.q_proj.weight") != NULL ||
          tensors_find(&src, "layers.0.self_attn.q_proj.weight") != NULL ||
          tensors_find(&src, "trf_blocks.0.ff.fc1.weight") != NULL;
    tensors_close(&src);
    return yes;
}
