/*
 * gemma.c: Gemma 3 (its text model) and Olmo 3 as architectures (see
 * gemma.h and architecture.h): their name tables under Hugging Face's
 * names and the book's notebooks' (ch05/12's Gemma 3, ch05/13's Olmo 3:
 * tok_emb, blocks.N.att.W_query, ff.fc1 the gate, fc2 up, fc3 down), and
 * their sizes from config.json (gemma_config.c), which both layouts need:
 * the book's files have no settings of their own a layer's kind could be
 * read from.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "attnscope/architectures/gemma.h"
#include "attnscope/files/fileio.h"

#define WINDOW_LINEAR(role, hf, book)                                                      \
    { role,                                                                                \
      { [ARCH_HF] = { "layers.%d." hf ".weight", "layers.%d." hf ".bias" },              \
        [ARCH_BOOK] = { "blocks.%d." book ".weight", "blocks.%d." book ".bias" } } }
/* A norm: Hugging Face's NAME.weight, the book's NAME.SCALE (Gemma's "scale", Olmo's "weight"). */
#define WINDOW_NORM(role, name, scale)                                                     \
    { role,                                                                                \
      { [ARCH_HF] = { "layers.%d." name ".weight", NULL },                                \
        [ARCH_BOOK] = { "blocks.%d." name "." scale, NULL } } }
#define WINDOW_NAMES(scale)                                                                \
    { ROLE_TOKEN_EMBD,                                                                     \
      { [ARCH_HF] = { "embed_tokens.weight", NULL }, [ARCH_BOOK] = { "tok_emb.weight", NULL } } }, \
    { ROLE_OUTPUT_NORM,                                                                    \
      { [ARCH_HF] = { "norm.weight", NULL }, [ARCH_BOOK] = { "final_norm." scale, NULL } } }, \
    { ROLE_OUTPUT,                                                                         \
      { [ARCH_HF] = { "lm_head.weight", NULL }, [ARCH_BOOK] = { "out_head.weight", NULL } } }, \
    WINDOW_LINEAR(ROLE_ATTN_Q, "self_attn.q_proj", "att.W_query"),                         \
    WINDOW_LINEAR(ROLE_ATTN_K, "self_attn.k_proj", "att.W_key"),                           \
    WINDOW_LINEAR(ROLE_ATTN_V, "self_attn.v_proj", "att.W_value"),                         \
    WINDOW_LINEAR(ROLE_ATTN_OUT, "self_attn.o_proj", "att.out_proj"),                      \
    { ROLE_ATTN_Q_NORM,                                                                    \
      { [ARCH_HF] = { "layers.%d.self_attn.q_norm.weight", NULL },                        \
        [ARCH_BOOK] = { "blocks.%d.att.q_norm." scale, NULL } } },                         \
    { ROLE_ATTN_K_NORM,                                                                    \
      { [ARCH_HF] = { "layers.%d.self_attn.k_norm.weight", NULL },                        \
        [ARCH_BOOK] = { "blocks.%d.att.k_norm." scale, NULL } } },                         \
    WINDOW_NORM(ROLE_ATTN_POST_NORM, "post_attention_layernorm", scale),                   \
    WINDOW_NORM(ROLE_FFN_POST_NORM, "post_feedforward_layernorm", scale),                  \
    WINDOW_LINEAR(ROLE_FFN_GATE, "mlp.gate_proj", "ff.fc1"),                               \
    WINDOW_LINEAR(ROLE_FFN_UP, "mlp.up_proj", "ff.fc2"),                                   \
    WINDOW_LINEAR(ROLE_FFN_DOWN, "mlp.down_proj", "ff.fc3")

/* Gemma 3's four norms a block: Olmo 3's two and the two before attention and the MLP. */
static const struct arch_name gemma3_names[] = {
    WINDOW_NORM(ROLE_ATTN_NORM, "input_layernorm", "scale"),
    WINDOW_NORM(ROLE_FFN_NORM, "pre_feedforward_layernorm", "scale"),
    WINDOW_NAMES("scale"),
};
static const struct arch_name olmo3_names[] = { WINDOW_NAMES("weight") };

/* Each marked by a tensor the other lacks (Gemma's pre_feedforward_layernorm). */
static const struct arch_layout_of gemma3_layouts[] = {
    { ARCH_HF, "layers.0.pre_feedforward_layernorm.weight", { "model.", "" }, STORE_OUT_IN,
      DECODER_NAMES_HF, false },
    { ARCH_BOOK, "blocks.0.pre_feedforward_layernorm.scale", { "" }, STORE_OUT_IN,
      DECODER_NAMES_BOOK, false },
};
static const struct arch_layout_of olmo3_layouts[] = {
    { ARCH_HF, "layers.0.post_feedforward_layernorm.weight", { "model.", "" }, STORE_OUT_IN,
      DECODER_NAMES_HF, false },
    { ARCH_BOOK, "blocks.0.post_feedforward_layernorm.weight", { "" }, STORE_OUT_IN,
      DECODER_NAMES_BOOK, false },
};

/* The sizes and the parts from config.json in dir. */
static enum attn_status
window_describe(struct arch_loader *ld, const char *dir, const struct arch_options *o,
                struct attn_error *err)
{
    struct decoder_model *m = ld->w.m;
    struct gemma_config lc;
    char path[4096];

    (void)o;
    if (snprintf(path, sizeof path, "%s/config.json", dir) >= (int)sizeof path)
        return attn_fail(err, ATTN_EIO, "%s: the folder's name is too long", dir);
    if (fileio_absent(path))
        return attn_fail(err, ATTN_EPARSE,
                         "%s: no config.json beside the weights: %s's layers are of two kinds, "
                         "which only its config says (put the model's config.json beside it)",
                         dir, ld->arch->title);
    if (gemma_config_load(&lc, path, err) != ATTN_OK)
        return err->status;
    if (strcmp(lc.model_type, ld->arch->model_types[0]) != 0)
        return attn_fail(err, ATTN_EPARSE, "%s: model_type %s beside %s's tensor names", path,
                         lc.model_type, ld->arch->title);
    m->cfg = lc.dec;
    m->bos_token = lc.bos_token;
    snprintf(m->described_by, sizeof m->described_by, "config.json");
    snprintf(m->context_from, sizeof m->context_from, "max_position_embeddings in config.json");
    ld->w.sizes_from = "config.json";
    return ATTN_OK;
}

static const char *const gemma3_types[] = { "gemma3_text", NULL };
static const char *const gemma3_classes[] = { "Gemma3ForCausalLM", NULL };
static const char *const olmo3_types[] = { "olmo3", NULL };
static const char *const olmo3_classes[] = { "Olmo3ForCausalLM", NULL };

#define COUNT(a) (int)(sizeof(a) / sizeof(a)[0])

/* Both ship in bfloat16: their matrices stay so, half the memory of float32. */
const struct architecture arch_gemma3 = {
    "gemma3",     "Gemma 3",           gemma3_types,   gemma3_classes, gemma3_layouts,
    COUNT(gemma3_layouts), gemma3_names, COUNT(gemma3_names), true, true, window_describe,
};
const struct architecture arch_olmo3 = {
    "olmo3",     "Olmo 3",           olmo3_types,   olmo3_classes, olmo3_layouts,
    COUNT(olmo3_layouts), olmo3_names, COUNT(olmo3_names), true, true, window_describe,
};
