/*
 * llama.c: Llama, Qwen2 and Qwen3 as architectures (see llama.h and
 * architecture.h): their name tables under Hugging Face's names and the
 * book's notebooks', and where their sizes come from (llama_config.c reads
 * config.json; the book's files have none).
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "attnscope/architectures/llama.h"
#include "attnscope/files/fileio.h"

/*
 * Llama's and Qwen3's rows are architecture_names.c's (arch_llama_rows,
 * arch_qwen3_rows: Hugging Face's, the book's and the GGUF's names); a
 * mixture adds its router and experts to them.
 */
#define EXPERT_ROW(role, hf) { role, { [ARCH_HF] = { "layers.%d." hf ".weight", NULL } } }
/* Qwen3-MoE: in a sparse layer the router (mlp.gate) and each expert's SwiGLU (the second %d). */
static const struct arch_name qwen3_moe_names[] = {
    { ROLE_FFN_ROUTER, { [ARCH_HF] = { "layers.%d.mlp.gate.weight", "layers.%d.mlp.gate.bias" } } },
    EXPERT_ROW(ROLE_EXPERT_GATE, "mlp.experts.%d.gate_proj"),
    EXPERT_ROW(ROLE_EXPERT_UP, "mlp.experts.%d.up_proj"),
    EXPERT_ROW(ROLE_EXPERT_DOWN, "mlp.experts.%d.down_proj"),
};
/* Mixtral: the router and experts under block_sparse_moe (w1 gate, w3 up, w2 down). */
static const struct arch_name mixtral_names[] = {
    { ROLE_FFN_ROUTER, { [ARCH_HF] = { "layers.%d.block_sparse_moe.gate.weight",
                                       "layers.%d.block_sparse_moe.gate.bias" } } },
    EXPERT_ROW(ROLE_EXPERT_GATE, "block_sparse_moe.experts.%d.w1"),
    EXPERT_ROW(ROLE_EXPERT_UP, "block_sparse_moe.experts.%d.w3"),
    EXPERT_ROW(ROLE_EXPERT_DOWN, "block_sparse_moe.experts.%d.w2"),
};

/* Each marked by a tensor the others lack (Qwen3's q_norm; the book's Llama's nn.RMSNorm). */
static const struct arch_layout_of llama_layouts[] = {
    { ARCH_HF, "layers.0.self_attn.q_proj.weight", { "model.", "" }, STORE_OUT_IN,
      DECODER_NAMES_HF, false },
    { ARCH_BOOK, "trf_blocks.0.norm1.weight", { "" }, STORE_OUT_IN, DECODER_NAMES_BOOK, false },
    { ARCH_GGUF, "blk.0.attn_q.weight", { "" }, STORE_OUT_IN, DECODER_NAMES_GGUF, true },
};
static const struct arch_layout_of qwen2_layouts[] = {
    { ARCH_HF, "layers.0.self_attn.q_proj.bias", { "model.", "" }, STORE_OUT_IN,
      DECODER_NAMES_HF, false },
    { ARCH_GGUF, "blk.0.attn_q.bias", { "" }, STORE_OUT_IN, DECODER_NAMES_GGUF, false },
};
static const struct arch_layout_of mixtral_layouts[] = {
    { ARCH_HF, "layers.0.block_sparse_moe.gate.weight", { "model.", "" }, STORE_OUT_IN,
      DECODER_NAMES_HF, false },
    { ARCH_GGUF, "blk.0.ffn_gate_inp.weight", { "" }, STORE_OUT_IN, DECODER_NAMES_GGUF, true },
};

/* (a config.json names it: its marker is Qwen3's, which comes first in the registry) */
static const struct arch_layout_of qwen3_moe_layouts[] = {
    { ARCH_HF, "layers.0.self_attn.q_norm.weight", { "model.", "" }, STORE_OUT_IN,
      DECODER_NAMES_HF, false },
    { ARCH_GGUF, "blk.0.ffn_gate_inp.weight", { "" }, STORE_OUT_IN, DECODER_NAMES_GGUF, false },
};
static const struct arch_layout_of qwen3_layouts[] = {
    { ARCH_HF, "layers.0.self_attn.q_norm.weight", { "model.", "" }, STORE_OUT_IN,
      DECODER_NAMES_HF, false },
    { ARCH_BOOK, "trf_blocks.0.att.q_norm.scale", { "" }, STORE_OUT_IN, DECODER_NAMES_BOOK, false },
    { ARCH_GGUF, "blk.0.attn_q_norm.weight", { "" }, STORE_OUT_IN, DECODER_NAMES_GGUF, false },
};

/*
 * The book's files have no config.json: the sizes from the tensors' shapes,
 * the rest from the book's settings (ch05/11's QWEN_CONFIG_06_B, ch05/07's
 * LLAMA32_CONFIG): Qwen3's head size is its q_norm's, Llama 3.2 1B's and
 * 3B's are known by their width.
 */
static enum attn_status
book_sizes(struct arch_loader *ld, struct attn_error *err)
{
    struct decoder_model *m = ld->w.m;
    struct decoder_config *c = &m->cfg;
    const bool qwen3 = ld->arch == &arch_qwen3;
    const int64_t q_rows = arch_dim(ld, ROLE_ATTN_Q, 0, 0);
    const int64_t k_rows = arch_dim(ld, ROLE_ATTN_K, 0, 0);
    char name[160];

    memset(c, 0, sizeof *c);
    c->vocab_size = (int)arch_dim(ld, ROLE_TOKEN_EMBD, 0, 0);
    c->d_model = (int)arch_dim(ld, ROLE_TOKEN_EMBD, 0, 1);
    c->n_layer = arch_count_layers(ld);
    c->d_mlp = (int)arch_dim(ld, ROLE_FFN_GATE, 0, 0);
    arch_parts_apply(ld->arch, c);
    c->tied = false; /* (the book's out_head is its own tensor, even when it was tied) */
    if (qwen3) {
        c->head_dim = (int)arch_dim(ld, ROLE_ATTN_Q_NORM, 0, 0); /* (weights_dim: < 2^31) */
        c->rope_theta = 1000000.0;
        c->eps = 1e-6f;
        c->n_ctx = 40960;
        snprintf(m->heads_from, sizeof m->heads_from,
                 "the head size from q_norm, the rest from the book's Qwen3 settings (ch05/11)");
        snprintf(m->context_from, sizeof m->context_from, "the book's Qwen3 settings");
    } else {
        c->head_dim = c->d_model == 2048 ? 64 : c->d_model == 3072 ? 128 : 0;
        c->rope_theta = 500000.0;
        c->eps = 1e-5f;
        c->n_ctx = 131072;
        c->rope_scaling = (struct decoder_rope_scaling){
            .llama3 = true, .factor = 32.0, .low_freq_factor = 1.0, .high_freq_factor = 4.0,
            .original_max = 8192 };
        snprintf(m->heads_from, sizeof m->heads_from,
                 "the book's Llama 3.2 settings for this width (ch05/07)");
        snprintf(m->context_from, sizeof m->context_from, "the book's Llama 3.2 settings");
    }
    if (c->head_dim <= 0)
        return attn_fail(err, ATTN_EPARSE,
                         "%s: the book's names, but no config.json beside it and not the book's "
                         "Qwen3 or Llama 3.2 1B/3B (width %d): put the model's config.json "
                         "beside it",
                         m->source, c->d_model);
    if (q_rows % c->head_dim != 0 || k_rows % c->head_dim != 0)
        return attn_fail(err, ATTN_EPARSE,
                         "%s: %s has %lld rows and %s %lld: not whole heads of %d columns (%s)",
                         m->source, arch_name(ld, ROLE_ATTN_Q, 0, false, name, sizeof name),
                         (long long)q_rows, "the keys'", (long long)k_rows, c->head_dim,
                         m->heads_from);
    c->n_head = (int)(q_rows / c->head_dim);
    c->n_kv_head = (int)(k_rows / c->head_dim);
    if (c->n_kv_head < 1)
        return attn_fail(err, ATTN_EPARSE,
                         "%s: 0 key heads (from the keys' %lld rows): a model has at least one",
                         m->source, (long long)k_rows);
    c->bias.qkv = arch_name(ld, ROLE_ATTN_Q, 0, true, name, sizeof name) != NULL &&
                  weights_find(&ld->w, name) != NULL;
    snprintf(m->described_by, sizeof m->described_by, "the tensors' shapes");
    ld->w.sizes_from = "the tensors' shapes";
    return ATTN_OK;
}

/* The sizes: config.json in dir, else (the book's files) the tensors'. */
static enum attn_status
llama_describe(struct arch_loader *ld, const char *dir, const struct arch_options *o,
               struct attn_error *err)
{
    struct decoder_model *m = ld->w.m;
    struct llama_config lc;
    char path[4096];

    (void)o;
    if (ld->layout->layout == ARCH_GGUF)
        return gguf_describe(ld, err);
    if (snprintf(path, sizeof path, "%s/config.json", dir) >= (int)sizeof path)
        return attn_fail(err, ATTN_EIO, "%s: the folder's name is too long", dir);
    if (fileio_absent(path)) {
        if (ld->layout->layout == ARCH_BOOK)
            return book_sizes(ld, err);
        return attn_fail(err, ATTN_EPARSE, "%s: no config.json beside the weights", dir);
    }
    if (llama_config_load(&lc, path, err) != ATTN_OK)
        return err->status;
    m->cfg = lc.dec;
    m->bos_token = lc.bos_token;
    snprintf(m->described_by, sizeof m->described_by, "config.json");
    snprintf(m->context_from, sizeof m->context_from, "max_position_embeddings in config.json");
    return ATTN_OK;
}

static const char *const llama_types[] = { "llama", NULL };
static const char *const llama_classes[] = { "LlamaForCausalLM", NULL };
static const char *const qwen2_types[] = { "qwen2", NULL };
static const char *const qwen2_classes[] = { "Qwen2ForCausalLM", NULL };
static const char *const qwen3_types[] = { "qwen3", NULL };
static const char *const qwen3_classes[] = { "Qwen3ForCausalLM", NULL };
static const char *const qwen3_moe_types[] = { "qwen3_moe", NULL };
static const char *const olmoe_types[] = { "olmoe", NULL };
static const char *const olmoe_classes[] = { "OlmoeForCausalLM", NULL };
static const char *const mixtral_types[] = { "mixtral", NULL };
static const char *const mixtral_classes[] = { "MixtralForCausalLM", NULL };

/* Each mixture's keys (Qwen3MoeConfig's, OlmoeConfig's, MixtralConfig's). */
static const struct arch_moe_keys qwen3_moe_keys = { "num_experts", "moe_intermediate_size",
                                                     "norm_topk_prob", false, true, true, NULL, 0.0,
                                                     NULL, NULL, NULL };
static const struct arch_moe_keys olmoe_keys = { "num_experts", "intermediate_size",
                                                 "norm_topk_prob", false, false, false, NULL,
                                                 0.0, NULL, NULL, NULL };
static const struct arch_moe_keys mixtral_keys = { "num_local_experts", "intermediate_size", NULL,
                                                   true, false, true, NULL, 0.0, NULL, NULL,
                                                   NULL };
static const char *const qwen3_moe_classes[] = { "Qwen3MoeForCausalLM", NULL };

#define COUNT(a) (int)(sizeof(a) / sizeof(a)[0])

/* These models ship in bfloat16: their matrices stay so, half the memory of float32. */
const struct architecture arch_llama = {
    "llama",     "Llama",            llama_types,        llama_classes, llama_layouts, COUNT(llama_layouts),
    NULL, 0, true,          true,          llama_describe,
    .parts = { .positions = DECODER_POSITIONS_ROPE, .norm = DECODER_NORM_RMS, .mlp = DECODER_MLP_SWIGLU,
                .block_norms = DECODER_PRE_NORM, .eps = 1e-6, .rope_theta = 10000.0, .mlp_bias_key = true },
    .base = arch_llama_rows, .base_count = ARCH_LLAMA_ROWS,
};
const struct architecture arch_qwen2 = {
    "qwen2",     "Qwen2",            qwen2_types,        qwen2_classes, qwen2_layouts, COUNT(qwen2_layouts),
    NULL, 0, true,          true,          llama_describe,
    .parts = { .positions = DECODER_POSITIONS_ROPE, .norm = DECODER_NORM_RMS, .mlp = DECODER_MLP_SWIGLU,
                .block_norms = DECODER_PRE_NORM, .eps = 1e-6, .rope_theta = 10000.0, .qkv_biased = true },
    .base = arch_llama_rows, .base_count = ARCH_LLAMA_ROWS,
};
const struct architecture arch_qwen3 = {
    "qwen3",     "Qwen3",            qwen3_types,        qwen3_classes, qwen3_layouts, COUNT(qwen3_layouts),
    NULL, 0, true,          true,          llama_describe,
    .parts = { .positions = DECODER_POSITIONS_ROPE, .norm = DECODER_NORM_RMS, .mlp = DECODER_MLP_SWIGLU,
                .block_norms = DECODER_PRE_NORM, .eps = 1e-6, .rope_theta = 10000.0, .qk_norm = true, .head_dim = 128 },
    .base = arch_qwen3_rows, .base_count = ARCH_QWEN3_ROWS,
};
const struct architecture arch_qwen3_moe = {
    "qwen3_moe", "Qwen3-MoE", qwen3_moe_types, qwen3_moe_classes, qwen3_moe_layouts,
    COUNT(qwen3_moe_layouts), qwen3_moe_names, COUNT(qwen3_moe_names), true, true,
    llama_describe,
    .parts = { .positions = DECODER_POSITIONS_ROPE, .norm = DECODER_NORM_RMS,
               .mlp = DECODER_MLP_SWIGLU, .block_norms = DECODER_PRE_NORM, .eps = 1e-6,
               .rope_theta = 10000.0, .qk_norm = true, .head_dim = 128, .moe = &qwen3_moe_keys },
    .gguf = "qwen3moe",
    .base = arch_qwen3_rows, .base_count = ARCH_QWEN3_ROWS,
};
const struct architecture arch_olmoe = {
    "olmoe", "OLMoE", olmoe_types, olmoe_classes, qwen3_moe_layouts, COUNT(qwen3_moe_layouts),
    qwen3_moe_names, COUNT(qwen3_moe_names), true, true, llama_describe,
    /* (QK-norm over the whole projection, as Olmo's) */
    .parts = { .positions = DECODER_POSITIONS_ROPE, .norm = DECODER_NORM_RMS,
               .mlp = DECODER_MLP_SWIGLU, .block_norms = DECODER_PRE_NORM, .eps = 1e-5,
               .rope_theta = 10000.0, .qk_norm = true, .qk_norm_full = true,
               .moe = &olmoe_keys },
    .base = arch_qwen3_rows, .base_count = ARCH_QWEN3_ROWS,
};
const struct architecture arch_mixtral = {
    "mixtral", "Mixtral", mixtral_types, mixtral_classes, mixtral_layouts, COUNT(mixtral_layouts),
    mixtral_names, COUNT(mixtral_names), true, true, llama_describe,
    .parts = { .positions = DECODER_POSITIONS_ROPE, .norm = DECODER_NORM_RMS,
               .mlp = DECODER_MLP_SWIGLU, .block_norms = DECODER_PRE_NORM, .eps = 1e-5,
               .rope_theta = 1000000.0, .moe = &mixtral_keys, .window_key = true },
    .gguf = "llama",
    .base = arch_llama_rows, .base_count = ARCH_LLAMA_ROWS,
};
