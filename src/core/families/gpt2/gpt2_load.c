/*
 * gpt2_load.c: a GPT-2's weights, whatever file and names hold them (see
 * gpt2.h): the layout the names say, the sizes (gpt2_config.c), then every
 * tensor checked and read into the model's own memory.
 */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attnscope/base/progress.h"
#include "attnscope/decoder/weights.h"
#include "attnscope/families/gpt2/gpt2.h"
#include "attnscope/files/fileio.h"
#include "attnscope/files/tensors.h"

/*
 * A layout of names for GPT-2's Conv1D blocks (Hugging Face's and
 * OpenAI's): the same tensors, (in, out), under other names.
 */
struct conv_names {
    const char *wte, *wpe, *lnf_scale, *lnf_shift;
    const char *block;              /* the block's prefix, with %d for its number */
    const char *ln1_scale, *ln1_shift, *ln2_scale, *ln2_shift;
    const char *c_attn, *c_proj, *c_fc, *mlp_proj;
    const char *weight, *bias;      /* a linear's two tensors' suffixes */
    bool leading_one;               /* weights stored (1, in, out) */
};

static const struct conv_names hf_names = {
    "wte.weight", "wpe.weight", "ln_f.weight", "ln_f.bias", "h.%d.",
    "ln_1.weight", "ln_1.bias", "ln_2.weight", "ln_2.bias",
    "attn.c_attn", "attn.c_proj", "mlp.c_fc", "mlp.c_proj", ".weight", ".bias", false,
};

static const struct conv_names openai_names = {
    "model/wte", "model/wpe", "model/ln_f/g", "model/ln_f/b", "model/h%d/",
    "ln_1/g", "ln_1/b", "ln_2/g", "ln_2/b",
    "attn/c_attn", "attn/c_proj", "mlp/c_fc", "mlp/c_proj", "/w", "/b", true,
};

/* What loading keeps beside the model: the tensors, and the layout of their names. */
struct loader {
    struct weights_loader w;
    const struct conv_names *conv; /* Hugging Face's or OpenAI's names; NULL: the book's */
    bool qkv_bias;       /* the book's layout: the queries, keys and values have biases */
};

/*
 * A Conv1D of the block's prefix (in, out_all), used from column col for
 * out columns (c_attn holds Q, K and V side by side).
 */
static int
conv1d(struct loader *ld, struct decoder_linear *l, const char *block, const char *name, int in,
       int out_all, int col, int out, struct attn_error *err)
{
    const struct conv_names *nm = ld->conv;
    char w[160];
    char b[160];
    const float *wv;
    const float *bv;

    snprintf(w, sizeof w, "%s%s%s", block, name, nm->weight);
    snprintf(b, sizeof b, "%s%s%s", block, name, nm->bias);
    if ((wv = weights_matrix(&ld->w, w, nm->leading_one, in, out_all, err)) == NULL ||
        (bv = weights_vector(&ld->w, b, out_all, err)) == NULL)
        return -1;
    *l = (struct decoder_linear){ .w = wv + col, .b = bv + col, .in = in, .out = out, .ld = out_all };
    return 0;
}


static int
load_block_conv(struct loader *ld, int i, struct attn_error *err)
{
    const struct conv_names *nm = ld->conv;
    const struct decoder_config *c = &ld->w.m->cfg;
    const int C = c->n_embd;
    struct decoder_block *b = &ld->w.m->blocks[i];
    char blk[48];
    char n[160];

    snprintf(blk, sizeof blk, nm->block, i);
#define NAME(s) (snprintf(n, sizeof n, "%s%s", blk, (s)), n)
    if ((b->norm1.scale = weights_vector(&ld->w, NAME(nm->ln1_scale), C, err)) == NULL ||
        (b->norm1.shift = weights_vector(&ld->w, NAME(nm->ln1_shift), C, err)) == NULL ||
        conv1d(ld, &b->q, blk, nm->c_attn, C, 3 * C, 0, C, err) != 0 ||
        conv1d(ld, &b->k, blk, nm->c_attn, C, 3 * C, C, C, err) != 0 ||
        conv1d(ld, &b->v, blk, nm->c_attn, C, 3 * C, 2 * C, C, err) != 0 ||
        conv1d(ld, &b->o, blk, nm->c_proj, C, C, 0, C, err) != 0 ||
        (b->norm2.scale = weights_vector(&ld->w, NAME(nm->ln2_scale), C, err)) == NULL ||
        (b->norm2.shift = weights_vector(&ld->w, NAME(nm->ln2_shift), C, err)) == NULL ||
        conv1d(ld, &b->up, blk, nm->c_fc, C, c->n_inner, 0, c->n_inner, err) != 0 ||
        conv1d(ld, &b->down, blk, nm->mlp_proj, c->n_inner, C, 0, C, err) != 0)
        return -1;
#undef NAME
    return 0;
}

static int
load_block_book(struct loader *ld, int i, struct attn_error *err)
{
    const struct decoder_config *c = &ld->w.m->cfg;
    const int C = c->n_embd;
    const bool qb = ld->qkv_bias;
    struct decoder_block *b = &ld->w.m->blocks[i];
    char n[96];

#define NAME(s) (snprintf(n, sizeof n, "trf_blocks.%d.%s", i, (s)), n)
    if ((b->norm1.scale = weights_vector(&ld->w, NAME("norm1.scale"), C, err)) == NULL ||
        (b->norm1.shift = weights_vector(&ld->w, NAME("norm1.shift"), C, err)) == NULL ||
        weights_linear(&ld->w, &b->q, NAME("att.W_query"), C, C, qb, err) != 0 ||
        weights_linear(&ld->w, &b->k, NAME("att.W_key"), C, C, qb, err) != 0 ||
        weights_linear(&ld->w, &b->v, NAME("att.W_value"), C, C, qb, err) != 0 ||
        weights_linear(&ld->w, &b->o, NAME("att.out_proj"), C, C, true, err) != 0 ||
        (b->norm2.scale = weights_vector(&ld->w, NAME("norm2.scale"), C, err)) == NULL ||
        (b->norm2.shift = weights_vector(&ld->w, NAME("norm2.shift"), C, err)) == NULL ||
        weights_linear(&ld->w, &b->up, NAME("ff.layers.0"), C, c->n_inner, true, err) != 0 ||
        weights_linear(&ld->w, &b->down, NAME("ff.layers.2"), c->n_inner, C, true, err) != 0)
        return -1;
#undef NAME
    return 0;
}

/* Which layout the names say (and Hugging Face's prefix); -1 when none. */
static int
choose_layout(struct loader *ld, struct attn_error *err)
{
    struct decoder_model *m = ld->w.m;

    ld->conv = &hf_names;
    m->names = DECODER_NAMES_HF;
    if (tensors_find(&ld->w.src, "tok_emb.weight") != NULL) {
        m->names = DECODER_NAMES_BOOK;
        ld->conv = NULL;
        return 0;
    }
    if (tensors_find(&ld->w.src, "model/wte") != NULL) {
        m->names = DECODER_NAMES_OPENAI;
        ld->conv = &openai_names;
        return 0;
    }
    if (tensors_find(&ld->w.src, "wte.weight") != NULL)
        return 0;
    if (tensors_find(&ld->w.src, "transformer.wte.weight") != NULL) {
        snprintf(ld->w.prefix, sizeof ld->w.prefix, "transformer.");
        return 0;
    }
    attn_fail(err, ATTN_EPARSE,
              "%s: neither GPT-2's tensor names (wte.weight, h.0.attn.c_attn.weight, ...; OpenAI's "
              "model/wte, model/h0/attn/c_attn/w, ...) nor the book's GPTModel's (tok_emb.weight, "
              "trf_blocks.0.att.W_query.weight, ...)",
              m->source);
    return -1;
}

/* The name of block i's first tensor in the layout (for counting the blocks). */
static void
first_of_block(const struct loader *ld, int i, char *name, size_t size)
{
    char blk[48];

    if (ld->conv == NULL) {
        snprintf(name, size, "trf_blocks.%d.norm1.scale", i);
        return;
    }
    snprintf(blk, sizeof blk, ld->conv->block, i);
    snprintf(name, size, "%s%s", blk, ld->conv->ln1_scale);
}

/* How many blocks the file has, below hi (weights_count_blocks by each block's first tensor). */
static int
count_blocks(const struct loader *ld, int hi)
{
    char format[128];

    if (ld->conv == NULL)
        snprintf(format, sizeof format, "trf_blocks.%%d.norm1.scale");
    else
        snprintf(format, sizeof format, "%s%s", ld->conv->block, ld->conv->ln1_scale);
    return weights_count_blocks(&ld->w, format, hi);
}

/*
 * Before a block is allocated: the tensors of the last layer the sizes
 * name are in the file, or the first layer that is missing is named (a
 * config.json of 16 million layers beside a file of two is "no tensor
 * h.2...", not "out of memory").
 */
static int
check_layers(struct loader *ld, struct attn_error *err)
{
    const struct decoder_model *m = ld->w.m;
    char name[128];
    int have;

    first_of_block(ld, m->cfg.n_layer - 1, name, sizeof name);
    if (weights_find(&ld->w, name) != NULL)
        return 0;
    have = count_blocks(ld, m->cfg.n_layer - 1);
    first_of_block(ld, have, name, sizeof name);
    attn_fail(err, ATTN_EPARSE, "%s: no tensor '%s%s': %s says n_layer %d, the file has %d",
              m->source, ld->w.prefix, name, ld->w.sizes_from, m->cfg.n_layer, have);
    return -1;
}

/*
 * The sizes from the tensors themselves, where no file gives them: the
 * blocks counted, the width, vocabulary and context from the embeddings,
 * the MLP's width from its first linear; the heads from --heads or GPT-2's
 * sizes (gpt2_heads).
 */
static int
infer_sizes(struct loader *ld, const struct gpt2_options *o, struct attn_error *err)
{
    struct decoder_model *m = ld->w.m;
    struct decoder_config *c = &m->cfg;
    const bool book = ld->conv == NULL;
    const bool one = !book && ld->conv->leading_one;
    char fc[128];
    int64_t v;
    int64_t ctx;
    int64_t width;
    int64_t inner;

    memset(c, 0, sizeof *c);
    v = weights_dim(&ld->w, book ? "tok_emb.weight" : ld->conv->wte, 0);
    width = weights_dim(&ld->w, book ? "tok_emb.weight" : ld->conv->wte, 1);
    ctx = weights_dim(&ld->w, book ? "pos_emb.weight" : ld->conv->wpe, 0);
    if (book) {
        snprintf(fc, sizeof fc, "trf_blocks.0.ff.layers.0.weight");
    } else {
        char blk[48];
        snprintf(blk, sizeof blk, ld->conv->block, 0);
        snprintf(fc, sizeof fc, "%s%s%s", blk, ld->conv->c_fc, ld->conv->weight);
    }
    inner = weights_dim(&ld->w, fc, book ? 0 : (one ? 2 : 1));
    c->n_layer = count_blocks(ld, 1 << 24);
    if (v < 1 || width < 1 || ctx < 1 || inner < 1 || c->n_layer < 1) {
        attn_fail(err, ATTN_EPARSE,
                  "%s: no config.json or hparams.json beside it, and its tensors do not give the "
                  "model's sizes (the embeddings, a first block)",
                  m->source);
        return -1;
    }
    c->vocab_size = (int)v;
    c->n_embd = (int)width;
    c->n_positions = (int)ctx;
    if ((c->n_head = gpt2_heads(0, NULL, o != NULL ? o->heads : 0, c->n_embd, m->source,
                                m->heads_from, sizeof m->heads_from, err)) < 0)
        return -1;
    gpt2_config_defaults(c);
    c->n_inner = (int)inner;
    c->tied = !book;
    snprintf(m->context_from, sizeof m->context_from, "%s's rows",
             book ? "pos_emb.weight" : ld->conv->wpe);
    snprintf(m->described_by, sizeof m->described_by, "the tensors' shapes");
    ld->w.sizes_from = "the tensors' shapes";
    return 0;
}

/*
 * The sizes: the folder's config.json, else its hparams.json, else the
 * tensors' (infer_sizes); --heads checked against a file's count.
 */
static int
describe(struct loader *ld, const char *dir, const struct gpt2_options *o, struct attn_error *err)
{
    struct decoder_model *m = ld->w.m;
    static const char *const files[] = { "config.json", "hparams.json" };
    char path[4096];
    char note[128];

    for (int i = 0; i < 2; i++) {
        enum attn_status rc;
        if (snprintf(path, sizeof path, "%s/%s", dir, files[i]) >= (int)sizeof path) {
            attn_fail(err, ATTN_EIO, "%s: the folder's name is too long", dir);
            return -1;
        }
        if (fileio_absent(path))
            continue;
        rc = i == 0 ? gpt2_config_load(&m->cfg, path, err) : gpt2_hparams_load(&m->cfg, path, err);
        if (rc != ATTN_OK)
            return -1;
        if (gpt2_heads(m->cfg.n_head, path, o != NULL ? o->heads : 0, m->cfg.n_embd, m->source,
                       note, sizeof note, err) < 0)
            return -1;
        snprintf(m->described_by, sizeof m->described_by, "%s", files[i]);
        snprintf(m->context_from, sizeof m->context_from, "%s in %s",
                 i == 0 ? "n_positions" : "n_ctx", files[i]);
        ld->w.sizes_from = files[i];
        return 0;
    }
    return infer_sizes(ld, o, err);
}

/* The book's out_head: the vocabulary's logits, or (fewer rows, with a bias) a classifier's. */
static int
load_book_head(struct loader *ld, struct attn_error *err)
{
    struct decoder_model *m = ld->w.m;
    struct decoder_config *c = &m->cfg;
    const int64_t rows = weights_dim(&ld->w, "out_head.weight", 0);

    if (rows > 0 && rows < c->vocab_size && weights_find(&ld->w, "out_head.bias") != NULL) {
        c->n_classes = (int)rows;
        if ((m->lm_head = weights_matrix(&ld->w, "out_head.weight", false, c->n_classes, c->n_embd, err)) ==
                NULL ||
            (m->head_bias = weights_vector(&ld->w, "out_head.bias", c->n_classes, err)) == NULL)
            return -1;
        return 0;
    }
    m->lm_head = weights_matrix(&ld->w, "out_head.weight", false, c->vocab_size, c->n_embd, err);
    return m->lm_head == NULL ? -1 : 0;
}

/*
 * GPT-2 ties its output to the token embedding (a saved lm_head.weight is
 * then that copy, and Hugging Face uses wte); tie_word_embeddings false
 * reads lm_head.weight (no prefix).
 */
static int
load_conv_head(struct loader *ld, struct attn_error *err)
{
    struct decoder_model *m = ld->w.m;
    const struct decoder_config *c = &m->cfg;
    char saved[sizeof ld->w.prefix];

    m->lm_head = m->wte;
    if (c->tied)
        return 0;
    if (tensors_find(&ld->w.src, "lm_head.weight") == NULL) {
        attn_fail(err, ATTN_EPARSE,
                  "%s: no tensor 'lm_head.weight', which config.json's \"tie_word_embeddings\": "
                  "false asks for",
                  m->source);
        return -1;
    }
    memcpy(saved, ld->w.prefix, sizeof saved);
    ld->w.prefix[0] = '\0';
    m->lm_head = weights_matrix(&ld->w, "lm_head.weight", false, c->vocab_size, c->n_embd, err);
    memcpy(ld->w.prefix, saved, sizeof saved);
    return m->lm_head == NULL ? -1 : 0;
}

/* The model-wide tensors and every block, in the layout the names say. */
static int
load_tensors(struct loader *ld, struct attn_error *err)
{
    struct decoder_model *m = ld->w.m;
    const struct decoder_config *c = &m->cfg;
    const struct conv_names *nm = ld->conv;
    const bool book = nm == NULL;

    if ((m->wte = weights_matrix(&ld->w, book ? "tok_emb.weight" : nm->wte, false, c->vocab_size, c->n_embd,
                         err)) == NULL ||
        (m->wpe = weights_matrix(&ld->w, book ? "pos_emb.weight" : nm->wpe, false, c->n_positions, c->n_embd,
                         err)) == NULL ||
        (m->final_norm.scale = weights_vector(&ld->w, book ? "final_norm.scale" : nm->lnf_scale, c->n_embd,
                                      err)) == NULL ||
        (m->final_norm.shift = weights_vector(&ld->w, book ? "final_norm.shift" : nm->lnf_shift, c->n_embd,
                                      err)) == NULL)
        return -1;
    progress_begin("reading the weights", c->n_layer);
    for (int i = 0; i < c->n_layer; i++) {
        if ((book ? load_block_book(ld, i, err) : load_block_conv(ld, i, err)) != 0) {
            progress_end();
            return -1;
        }
        progress_step(i + 1);
    }
    progress_end();
    return book ? load_book_head(ld, err) : load_conv_head(ld, err);
}

enum attn_status
gpt2_load(struct decoder_model *m, const char *dir, const struct gpt2_options *o,
          struct attn_error *err)
{
    struct loader ld;
    enum attn_status rc = ATTN_EPARSE;

    memset(m, 0, sizeof *m);
    memset(&ld, 0, sizeof ld);
    if (weights_open(&ld.w, m, o != NULL && o->weights != NULL ? o->weights : dir, err) != ATTN_OK)
        return err->status;
    if (choose_layout(&ld, err) != 0)
        goto fail;
    /* The book's queries have biases when the file has them (GPT_CONFIG's qkv_bias). */
    ld.qkv_bias = tensors_find(&ld.w.src, "trf_blocks.0.att.W_query.bias") != NULL;
    if (describe(&ld, dir, o, err) != 0 ||
        decoder_config_check(&m->cfg, m->source, ld.w.sizes_from, err) != ATTN_OK ||
        check_layers(&ld, err) != 0 ||
        (rc = weights_reserve(&ld.w, err)) != ATTN_OK)
        goto fail;
    rc = ATTN_EPARSE;
    if (load_tensors(&ld, err) != 0)
        goto fail;
    snprintf(m->architecture, sizeof m->architecture, "gpt2");
    m->bos_token = -1;
    /* Every weight is in memory of the model's own: the files close. */
    weights_close(&ld.w);
    return ATTN_OK;
fail:
    rc = err->status != ATTN_OK ? err->status : rc;
    weights_close(&ld.w);
    decoder_destroy(m);
    return rc;
}
