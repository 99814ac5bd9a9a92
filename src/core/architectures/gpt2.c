/*
 * gpt2.c: GPT-2 as an architecture (see gpt2.h and architecture.h): its
 * name table in the three layouts its files come in, and where its sizes
 * come from (gpt2_config.c reads the files).
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "attnscope/architectures/gpt2.h"
#include "attnscope/files/fileio.h"

/*
 * GPT-2's tensors: Hugging Face's Conv1D blocks (in, out), OpenAI's
 * TensorFlow checkpoint (the same, (1, in, out), the norms' g and b), the
 * book's GPTModel (nn.Linear (out, in), queries, keys and values apart,
 * its LayerNorm's scale and shift).  Hugging Face's head, when not tied,
 * is lm_head; the book's out_head (a classifier's has a bias).  The GGUF's
 * names are llama.cpp's for each role (arch_gguf_names) but the norms',
 * which have a shift, and the queries', keys' and values' apart, which a
 * GGUF's GPT-2 keeps in one attn_qkv.
 */
static const struct arch_name gpt2_names[] = {
    { ROLE_TOKEN_EMBD,
      { [ARCH_HF] = { "wte.weight", NULL }, [ARCH_BOOK] = { "tok_emb.weight", NULL },
        [ARCH_OPENAI] = { "model/wte", NULL } } },
    { ROLE_POS_EMBD,
      { [ARCH_HF] = { "wpe.weight", NULL }, [ARCH_BOOK] = { "pos_emb.weight", NULL },
        [ARCH_OPENAI] = { "model/wpe", NULL } } },
    { ROLE_OUTPUT_NORM,
      { [ARCH_HF] = { "ln_f.weight", "ln_f.bias" },
        [ARCH_BOOK] = { "final_norm.scale", "final_norm.shift" },
        [ARCH_OPENAI] = { "model/ln_f/g", "model/ln_f/b" },
        [ARCH_GGUF] = { "output_norm.weight", "output_norm.bias" } } },
    { ROLE_OUTPUT,
      { [ARCH_HF] = { "lm_head.weight", NULL }, [ARCH_BOOK] = { "out_head.weight", "out_head.bias" } } },
    { ROLE_ATTN_NORM,
      { [ARCH_HF] = { "h.%d.ln_1.weight", "h.%d.ln_1.bias" },
        [ARCH_BOOK] = { "trf_blocks.%d.norm1.scale", "trf_blocks.%d.norm1.shift" },
        [ARCH_OPENAI] = { "model/h%d/ln_1/g", "model/h%d/ln_1/b" },
        [ARCH_GGUF] = { "blk.%d.attn_norm.weight", "blk.%d.attn_norm.bias" } } },
    { ROLE_ATTN_QKV,
      { [ARCH_HF] = { "h.%d.attn.c_attn.weight", "h.%d.attn.c_attn.bias" },
        [ARCH_OPENAI] = { "model/h%d/attn/c_attn/w", "model/h%d/attn/c_attn/b" } } },
    { ROLE_ATTN_Q,
      { [ARCH_BOOK] = { "trf_blocks.%d.att.W_query.weight", "trf_blocks.%d.att.W_query.bias" },
        [ARCH_GGUF] = { ARCH_NO_TENSOR, NULL } } },
    { ROLE_ATTN_K,
      { [ARCH_BOOK] = { "trf_blocks.%d.att.W_key.weight", "trf_blocks.%d.att.W_key.bias" },
        [ARCH_GGUF] = { ARCH_NO_TENSOR, NULL } } },
    { ROLE_ATTN_V,
      { [ARCH_BOOK] = { "trf_blocks.%d.att.W_value.weight", "trf_blocks.%d.att.W_value.bias" },
        [ARCH_GGUF] = { ARCH_NO_TENSOR, NULL } } },
    { ROLE_ATTN_OUT,
      { [ARCH_HF] = { "h.%d.attn.c_proj.weight", "h.%d.attn.c_proj.bias" },
        [ARCH_BOOK] = { "trf_blocks.%d.att.out_proj.weight", "trf_blocks.%d.att.out_proj.bias" },
        [ARCH_OPENAI] = { "model/h%d/attn/c_proj/w", "model/h%d/attn/c_proj/b" } } },
    { ROLE_FFN_NORM,
      { [ARCH_HF] = { "h.%d.ln_2.weight", "h.%d.ln_2.bias" },
        [ARCH_BOOK] = { "trf_blocks.%d.norm2.scale", "trf_blocks.%d.norm2.shift" },
        [ARCH_OPENAI] = { "model/h%d/ln_2/g", "model/h%d/ln_2/b" },
        [ARCH_GGUF] = { "blk.%d.ffn_norm.weight", "blk.%d.ffn_norm.bias" } } },
    { ROLE_FFN_UP,
      { [ARCH_HF] = { "h.%d.mlp.c_fc.weight", "h.%d.mlp.c_fc.bias" },
        [ARCH_BOOK] = { "trf_blocks.%d.ff.layers.0.weight", "trf_blocks.%d.ff.layers.0.bias" },
        [ARCH_OPENAI] = { "model/h%d/mlp/c_fc/w", "model/h%d/mlp/c_fc/b" } } },
    { ROLE_FFN_DOWN,
      { [ARCH_HF] = { "h.%d.mlp.c_proj.weight", "h.%d.mlp.c_proj.bias" },
        [ARCH_BOOK] = { "trf_blocks.%d.ff.layers.2.weight", "trf_blocks.%d.ff.layers.2.bias" },
        [ARCH_OPENAI] = { "model/h%d/mlp/c_proj/w", "model/h%d/mlp/c_proj/b" } } },
};

static const struct arch_layout_of gpt2_layouts[] = {
    { ARCH_HF, "wte.weight", { "", "transformer." }, STORE_IN_OUT, DECODER_NAMES_HF, false },
    { ARCH_OPENAI, "model/wte", { "" }, STORE_ONE_IN_OUT, DECODER_NAMES_OPENAI, false },
    { ARCH_BOOK, "trf_blocks.0.ff.layers.0.weight", { "" }, STORE_OUT_IN, DECODER_NAMES_BOOK, false },
    { ARCH_GGUF, "blk.0.attn_qkv.weight", { "" }, STORE_OUT_IN, DECODER_NAMES_GGUF, false },
};

/*
 * The sizes from the tensors themselves, where no file gives them: the
 * layers counted, the width, vocabulary and context from the embeddings,
 * the MLP's width from its first linear; the heads from --heads or GPT-2's
 * sizes (gpt2_heads).
 */
static enum attn_status
infer_sizes(struct arch_loader *ld, const struct arch_options *o, struct attn_error *err)
{
    struct decoder_model *m = ld->w.m;
    struct decoder_config *c = &m->cfg;
    const bool book = ld->layout->layout == ARCH_BOOK;
    /* The MLP's width: the up projection's outputs, its rows or its columns as stored. */
    const int up_out = ld->layout->storage == STORE_OUT_IN       ? 0
                       : ld->layout->storage == STORE_ONE_IN_OUT ? 2
                                                                 : 1;
    const int64_t v = arch_dim(ld, ROLE_TOKEN_EMBD, 0, 0);
    const int64_t width = arch_dim(ld, ROLE_TOKEN_EMBD, 0, 1);
    const int64_t ctx = arch_dim(ld, ROLE_POS_EMBD, 0, 0);
    const int64_t inner = arch_dim(ld, ROLE_FFN_UP, 0, up_out);
    char name[160];

    memset(c, 0, sizeof *c);
    c->n_layer = arch_count_layers(ld);
    if (v < 1 || width < 1 || ctx < 1 || inner < 1 || c->n_layer < 1)
        return attn_fail(err, ATTN_EPARSE,
                         "%s: no config.json or hparams.json beside it, and its tensors do not "
                         "give the model's sizes (the embeddings, a first block)",
                         m->source);
    c->vocab_size = (int)v;
    c->d_model = (int)width;
    c->n_ctx = (int)ctx;
    if ((c->n_head = gpt2_heads(0, NULL, o->heads, c->d_model, m->source, m->heads_from,
                                sizeof m->heads_from, err)) < 0)
        return ATTN_EPARSE;
    gpt2_config_defaults(c);
    c->d_mlp = (int)inner;
    c->tied = !book;
    snprintf(m->context_from, sizeof m->context_from, "%s's rows",
             arch_name(ld, ROLE_POS_EMBD, 0, false, name, sizeof name));
    snprintf(m->described_by, sizeof m->described_by, "the tensors' shapes");
    ld->w.sizes_from = "the tensors' shapes";
    return ATTN_OK;
}

/*
 * What the book's GPTModel says only in its tensors: its head is its own
 * out_head, whether its queries,
 * keys and values have biases (GPT_CONFIG's qkv_bias), and whether its
 * out_head has fewer rows than the vocabulary, with a bias (chapter 6's
 * classifier of that many classes).
 */
static void
book_extras(struct arch_loader *ld)
{
    struct decoder_config *c = &ld->w.m->cfg;
    char name[160];
    const int64_t rows = arch_dim(ld, ROLE_OUTPUT, 0, 0);

    c->tied = false; /* (the GPTModel's out_head is its own, whatever a config says) */
    c->bias.qkv = arch_name(ld, ROLE_ATTN_Q, 0, true, name, sizeof name) != NULL &&
                  weights_find(&ld->w, name) != NULL;
    if (rows > 0 && rows < c->vocab_size &&
        arch_name(ld, ROLE_OUTPUT, 0, true, name, sizeof name) != NULL &&
        weights_find(&ld->w, name) != NULL)
        c->n_classes = (int)rows;
}

/*
 * The sizes: the folder's config.json, else its hparams.json, else the
 * tensors' (infer_sizes); --heads checked against a file's count.
 */
static enum attn_status
gpt2_describe(struct arch_loader *ld, const char *dir, const struct arch_options *o,
              struct attn_error *err)
{
    struct decoder_model *m = ld->w.m;
    static const char *const files[] = { "config.json", "hparams.json" };
    char path[4096];
    char note[128];
    enum attn_status rc = ATTN_EABSENT;

    if (ld->layout->layout == ARCH_GGUF)
        return gguf_describe(ld, err);
    for (int i = 0; i < 2 && rc == ATTN_EABSENT; i++) {
        if (snprintf(path, sizeof path, "%s/%s", dir, files[i]) >= (int)sizeof path)
            return attn_fail(err, ATTN_EIO, "%s: the folder's name is too long", dir);
        if (fileio_absent(path))
            continue;
        rc = i == 0 ? gpt2_config_load(&m->cfg, path, err) : gpt2_hparams_load(&m->cfg, path, err);
        if (rc != ATTN_OK)
            return rc;
        if (gpt2_heads(m->cfg.n_head, path, o->heads, m->cfg.d_model, m->source, note,
                       sizeof note, err) < 0)
            return ATTN_EPARSE;
        snprintf(m->described_by, sizeof m->described_by, "%s", files[i]);
        snprintf(m->context_from, sizeof m->context_from, "%s in %s",
                 i == 0 ? "n_positions" : "n_ctx", files[i]);
        ld->w.sizes_from = files[i];
    }
    if (rc == ATTN_EABSENT && (rc = infer_sizes(ld, o, err)) != ATTN_OK)
        return rc;
    /* Every linear of GPT-2 has a bias (the book's queries, keys and values where they do). */
    m->cfg.bias.qkv = m->cfg.bias.o = m->cfg.bias.mlp = true;
    if (ld->layout->layout == ARCH_BOOK)
        book_extras(ld);
    return ATTN_OK;
}

static const char *const gpt2_types[] = { "gpt2", NULL };
static const char *const gpt2_classes[] = { "GPT2LMHeadModel", NULL };

const struct architecture arch_gpt2 = {
    "gpt2",
    "GPT-2",
    gpt2_types,
    gpt2_classes,
    gpt2_layouts,
    sizeof gpt2_layouts / sizeof gpt2_layouts[0],
    gpt2_names,
    sizeof gpt2_names / sizeof gpt2_names[0],
    false,
    false,
    gpt2_describe,
    .parts = { .positions = DECODER_POSITIONS_LEARNED, .norm = DECODER_NORM_LAYER,
               .mlp = DECODER_MLP_GELU, .block_norms = DECODER_PRE_NORM, .all_biased = true,
               .eps = 1e-5, .rope_theta = 10000.0, .tied = true },
};
