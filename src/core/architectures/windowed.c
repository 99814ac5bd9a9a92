/*
 * windowed.c: Gemma 3 (its text model), Gemma 2 and Olmo 3, the decoders
 * whose layers slide over windows, as architectures (see
 * windowed.h and architecture.h): their name tables under Hugging Face's
 * names and the book's notebooks' (ch05/12's Gemma 3, ch05/13's Olmo 3:
 * tok_emb, blocks.N.att.W_query, ff.fc1 the gate, fc2 up, fc3 down), and
 * their sizes from config.json (windowed_config.c), which both layouts need:
 * the book's files have no settings of their own a layer's kind could be
 * read from; and Gemma 3's GGUF files as llama.cpp writes them (their
 * metadata and llama.cpp's constants).
 */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "attnscope/architectures/windowed.h"
#include "attnscope/files/fileio.h"
#include "attnscope/formats/gguf.h"
#include "attnscope/formats/tensors.h"

/*
 * A role's names in Hugging Face's layout and the book's; a GGUF's are
 * llama.cpp's for the role (arch_gguf_names).
 */
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

/*
 * gpt-oss: Llama's rows (its HF names) and what differs: a sink per head,
 * the norm before the MLP named post_attention_norm in a GGUF (llama.cpp's
 * post_attention_norm), the router mlp.router with a bias, the experts' gate
 * and up in one Hugging Face tensor (gate_up_proj, or its MXFP4 _blocks and
 * _scales) and apart in a GGUF, every expert projection with a bias.
 */
static const struct arch_name gpt_oss_names[] = {
    { ROLE_ATTN_SINKS, { [ARCH_HF] = { "layers.%d.self_attn.sinks", NULL } } },
    { ROLE_FFN_NORM, { [ARCH_HF] = { "layers.%d.post_attention_layernorm.weight", NULL },
                       [ARCH_GGUF] = { "blk.%d.post_attention_norm.weight", NULL } } },
    { ROLE_FFN_ROUTER, { [ARCH_HF] = { "layers.%d.mlp.router.weight", "layers.%d.mlp.router.bias" } } },
    { ROLE_EXPERT_GATE_UP, { [ARCH_HF] = { "layers.%d.mlp.experts.gate_up_proj",
                                           "layers.%d.mlp.experts.gate_up_proj_bias" } } },
    { ROLE_EXPERT_GATE, { [ARCH_GGUF] = { "blk.%d.ffn_gate_exps.weight", "blk.%d.ffn_gate_exps.bias" } } },
    { ROLE_EXPERT_UP, { [ARCH_GGUF] = { "blk.%d.ffn_up_exps.weight", "blk.%d.ffn_up_exps.bias" } } },
    { ROLE_EXPERT_DOWN, { [ARCH_HF] = { "layers.%d.mlp.experts.down_proj",
                                        "layers.%d.mlp.experts.down_proj_bias" },
                          [ARCH_GGUF] = { "blk.%d.ffn_down_exps.weight", "blk.%d.ffn_down_exps.bias" } } },
};
static const struct arch_layout_of gpt_oss_layouts[] = {
    { ARCH_HF, "layers.0.self_attn.sinks", { "model.", "" }, STORE_OUT_IN, DECODER_NAMES_HF, false },
    { ARCH_GGUF, "blk.0.attn_sinks.weight", { "" }, STORE_OUT_IN, DECODER_NAMES_GGUF, false },
};

/* Each marked by a tensor the other lacks (Gemma's pre_feedforward_layernorm). */
static const struct arch_layout_of gemma3_layouts[] = {
    { ARCH_HF, "layers.0.pre_feedforward_layernorm.weight", { "model.", "" }, STORE_OUT_IN,
      DECODER_NAMES_HF, false },
    { ARCH_BOOK, "blocks.0.pre_feedforward_layernorm.scale", { "" }, STORE_OUT_IN,
      DECODER_NAMES_BOOK, false },
    { ARCH_GGUF, "blk.0.post_ffw_norm.weight", { "" }, STORE_OUT_IN, DECODER_NAMES_GGUF, false },
};
/* Gemma 2: Hugging Face's folders only (its q_norm and k_norm rows unused: it has none). */
static const struct arch_layout_of gemma2_layouts[] = {
    { ARCH_HF, "layers.0.pre_feedforward_layernorm.weight", { "model.", "" }, STORE_OUT_IN,
      DECODER_NAMES_HF, false },
};
static const struct arch_layout_of olmo3_layouts[] = {
    { ARCH_HF, "layers.0.post_feedforward_layernorm.weight", { "model.", "" }, STORE_OUT_IN,
      DECODER_NAMES_HF, false },
    { ARCH_BOOK, "blocks.0.post_feedforward_layernorm.weight", { "" }, STORE_OUT_IN,
      DECODER_NAMES_BOOK, false },
};

/*
 * A Gemma 3 GGUF file (llama.cpp's conversion): the sizes as every GGUF's
 * (gguf_describe), Gemma's parts, and what llama.cpp keeps in the metadata
 * or, where it does not, in its code (src/models/gemma3.cpp): the window,
 * the layers' pattern (every sixth full unless
 * gemma3.attention.sliding_window_pattern says), the sliding layers' RoPE
 * base (10,000 unless rope.freq_base_swa says), the query scale (the head
 * size's root; 27B's: hidden / heads), the logits' cap.  The norms are
 * stored with the 1 of (1 + w) already added: they scale by their weights.
 */
static enum attn_status
gemma_gguf(struct arch_loader *ld, struct attn_error *err)
{
    struct decoder_config *c = &ld->w.m->cfg;
    const struct gguf *g = tensors_gguf(&ld->w.src);
    const struct gguf_kv *kinds;
    int64_t pattern = ld->arch->parts.sliding_pattern;

    if (gguf_describe(ld, err) != ATTN_OK) /* (the parts are the architecture's: arch_parts) */
        return err->status;
    c->norm_plus_one = false; /* (llama.cpp's conversion stores Gemma's norms as 1 + w) */
    c->attn_scalar = c->n_layer == 62 ? (double)(c->d_model / c->n_head) : decoder_head_dim(c);
    c->rope_local_theta = 10000.0;
    if (arch_gguf_number(g, ld->arch->name, "rope.freq_base_swa", ARCH_BOUND_ROPE_BASE,
                         &c->rope_local_theta, err) != ATTN_OK ||
        arch_gguf_number(g, ld->arch->name, "final_logit_softcapping", ARCH_BOUND_SOFTCAP,
                         &c->final_softcap, err) != ATTN_OK ||
        arch_gguf_count(g, ld->arch->name, "attention.sliding_window", false, 1, &c->sliding_window,
                        err) != ATTN_OK)
        return err->status;
    if (c->sliding_window == 0)
        return ATTN_OK;
    if (c->n_layer > DECODER_LAYERS_SLIDING_MAX)
        return attn_fail(err, ATTN_EPARSE, "%s: gemma3.attention.sliding_window over %d "
                                           "layers: attnscope keeps the kinds of at most %d",
                         g->path, c->n_layer, DECODER_LAYERS_SLIDING_MAX);
    kinds = gguf_find(g, "gemma3.attention.sliding_window_pattern");
    if (kinds != NULL && kinds->ints != NULL) {
        /* A list of the layers' kinds, true where a layer slides (llama.cpp's get_arr). */
        if (kinds->count != (size_t)c->n_layer)
            return attn_fail(err, ATTN_EPARSE,
                             "%s: gemma3.attention.sliding_window_pattern lists %zu layers of %d",
                             g->path, kinds->count, c->n_layer);
        for (int l = 0; l < c->n_layer; l++)
            c->sliding[l] = kinds->ints[l] != 0;
        return ATTN_OK;
    }
    if (kinds != NULL &&
        (!gguf_int(g, "gemma3.attention.sliding_window_pattern", &pattern) || pattern < 0))
        return attn_fail(err, ATTN_EPARSE,
                         "%s: gemma3.attention.sliding_window_pattern is neither a count nor a "
                         "list of the layers' kinds",
                         g->path);
    for (int l = 0; l < c->n_layer; l++) /* (llama.cpp's set_swa_pattern; 0: every layer) */
        c->sliding[l] = pattern == 0 || (l + 1) % pattern != 0;
    return ATTN_OK;
}

/*
 * A gpt-oss GGUF file (llama.cpp's conversion): the sizes as every GGUF's,
 * its window (gpt-oss.attention.sliding_window) over every other layer from
 * the first (llama.cpp's swa pattern 2), its YaRN as its config's (the
 * default the architecture carries: the same factor and context the
 * metadata names, read and checked).
 */
static enum attn_status
gpt_oss_gguf(struct arch_loader *ld, struct attn_error *err)
{
    struct decoder_config *c = &ld->w.m->cfg;
    const struct gguf *g = tensors_gguf(&ld->w.src);
    const char *arch = ld->arch->gguf;

    if (gguf_describe(ld, err) != ATTN_OK ||
        arch_gguf_count(g, arch, "attention.sliding_window", true, 1, &c->sliding_window, err) !=
            ATTN_OK)
        return err->status;
    if (c->n_layer > DECODER_LAYERS_SLIDING_MAX)
        return attn_fail(err, ATTN_EPARSE, "%s: %d layers: attnscope keeps the kinds of at most %d",
                         g->path, c->n_layer, DECODER_LAYERS_SLIDING_MAX);
    for (int l = 0; l < c->n_layer; l++)
        c->sliding[l] = l % 2 == 0;
    return ATTN_OK;
}

/* The sizes and the parts from config.json in dir (or a GGUF's metadata). */
static enum attn_status
window_describe(struct arch_loader *ld, const char *dir, const struct arch_options *o,
                struct attn_error *err)
{
    struct decoder_model *m = ld->w.m;
    struct windowed_config lc;
    char path[4096];

    (void)o;
    if (ld->layout->layout == ARCH_GGUF)
        return ld->arch == &arch_gpt_oss ? gpt_oss_gguf(ld, err) : gemma_gguf(ld, err);
    if (snprintf(path, sizeof path, "%s/config.json", dir) >= (int)sizeof path)
        return attn_fail(err, ATTN_EIO, "%s: the folder's name is too long", dir);
    if (fileio_absent(path))
        return attn_fail(err, ATTN_EPARSE,
                         "%s: no config.json beside the weights: %s's layers are of two kinds, "
                         "which only its config says (put the model's config.json beside it)",
                         dir, ld->arch->title);
    if (windowed_config_load(&lc, path, err) != ATTN_OK)
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
static const char *const gemma2_types[] = { "gemma2", NULL };
static const char *const gemma2_classes[] = { "Gemma2ForCausalLM", NULL };
static const char *const olmo3_types[] = { "olmo3", NULL };
static const char *const olmo3_classes[] = { "Olmo3ForCausalLM", NULL };

#define COUNT(a) (int)(sizeof(a) / sizeof(a)[0])

/* Gemma 3's window and cap in a GGUF: gemma_gguf reads them. */
static const char *const gemma3_gguf_keys[] = { "attention.sliding_window",
                                                "final_logit_softcapping", NULL };

/* Both ship in bfloat16: their matrices stay so, half the memory of float32. */
const struct architecture arch_gemma3 = {
    "gemma3",     "Gemma 3",           gemma3_types,   gemma3_classes, gemma3_layouts,
    COUNT(gemma3_layouts), gemma3_names, COUNT(gemma3_names), true, true, window_describe,
    .parts = { .positions = DECODER_POSITIONS_ROPE, .norm = DECODER_NORM_RMS,
               .mlp = DECODER_MLP_GEGLU, .block_norms = DECODER_SANDWICH_NORM, .qk_norm = true,
               .norm_plus_one = true, .embed_scaled = true, .head_dim = 256, .eps = 1e-6,
               .rope_theta = 1000000.0, .rope_local_key = true, .sliding_pattern = 6,
               .tied = true, .query_scalar = 256.0, .gguf_own_keys = gemma3_gguf_keys },
};
const struct architecture arch_gemma2 = {
    "gemma2",     "Gemma 2",           gemma2_types,   gemma2_classes, gemma2_layouts,
    COUNT(gemma2_layouts), gemma3_names, COUNT(gemma3_names), true, true, window_describe,
    /* (Gemma 2 has no QK-norm; its scores are capped instead: Gemma2Config's 50, logits 30) */
    .parts = { .positions = DECODER_POSITIONS_ROPE, .norm = DECODER_NORM_RMS,
               .mlp = DECODER_MLP_GEGLU, .block_norms = DECODER_SANDWICH_NORM,
               .norm_plus_one = true, .embed_scaled = true, .head_dim = 256, .eps = 1e-6,
               .rope_theta = 10000.0, .sliding_pattern = 2, .tied = true, .query_scalar = 256.0,
               .final_softcap = 30.0, .attn_softcap = 50.0 },
};
const struct architecture arch_olmo3 = {
    "olmo3",     "Olmo 3",           olmo3_types,   olmo3_classes, olmo3_layouts,
    COUNT(olmo3_layouts), olmo3_names, COUNT(olmo3_names), true, true, window_describe,
    .parts = { .positions = DECODER_POSITIONS_ROPE, .norm = DECODER_NORM_RMS,
               .mlp = DECODER_MLP_SWIGLU, .block_norms = DECODER_POST_NORM, .qk_norm = true,
               .qk_norm_full = true, .eps = 1e-5, .rope_theta = 10000.0, .sliding_pattern = 4 },
};

static const char *const gpt_oss_types[] = { "gpt_oss", NULL };
static const char *const gpt_oss_classes[] = { "GptOssForCausalLM", NULL };
static const char *const gpt_oss_gguf_keys[] = { "attention.sliding_window", NULL };
/* GptOssExperts' clamp (GptOssConfig's swiglu_limit), its router and experts biased. */
static const struct arch_moe_keys gpt_oss_keys = { "num_local_experts", "intermediate_size", NULL,
                                                   false, false, false, "swiglu_limit", 7.0,
                                                   NULL, NULL, NULL };
/* GptOssConfig's rope_parameters when none is given (YaRN, not truncated). */
static const struct decoder_rope_scaling gpt_oss_yarn = {
    .yarn = true, .factor = 32.0, .original_max = 4096, .beta_fast = 32.0, .beta_slow = 1.0,
    .attention_factor = 1.3465735902799727 /* 0.1 ln 32 + 1 */, .truncate = false };

const struct architecture arch_gpt_oss = {
    "gpt_oss", "gpt-oss", gpt_oss_types, gpt_oss_classes, gpt_oss_layouts, COUNT(gpt_oss_layouts),
    gpt_oss_names, COUNT(gpt_oss_names), true, true, window_describe,
    .base = arch_llama_rows, .base_count = ARCH_LLAMA_ROWS,
    .parts = { .positions = DECODER_POSITIONS_ROPE, .norm = DECODER_NORM_RMS,
               .mlp = DECODER_MLP_SWIGLU, .block_norms = DECODER_PRE_NORM, .eps = 1e-5,
               .rope_theta = 150000.0, .sliding_pattern = 2, .moe = &gpt_oss_keys,
               .attention_bias = true, .sinks = true, .sliding_rope_full = true,
               .rope_default = &gpt_oss_yarn, .gguf_own_keys = gpt_oss_gguf_keys },
    .gguf = "gpt-oss",
};
