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
 * The rows Llama and Qwen3 share: Hugging Face's names (the head lm_head,
 * the rest under model. or not), and the book's (ch05/07's Llama 3.2,
 * ch05/11's Qwen3: tok_emb, trf_blocks.N.att.W_query, ff.fc1 the gate,
 * fc2 up, fc3 down) with the book's norms' weight NORM: nn.RMSNorm's
 * "weight" in its Llama, its own RMSNorm's "scale" in its Qwen3.
 */
#define LLAMA_LINEAR(role, hf, book, gguf)                                                 \
    { role,                                                                                \
      { [ARCH_HF] = { "layers.%d." hf ".weight", "layers.%d." hf ".bias" },              \
        [ARCH_BOOK] = { "trf_blocks.%d." book ".weight", "trf_blocks.%d." book ".bias" },  \
        [ARCH_GGUF] = { "blk.%d." gguf ".weight", "blk.%d." gguf ".bias" } } }
#define LLAMA_NAMES(norm)                                                                  \
    { ROLE_TOKEN_EMBD,                                                                     \
      { [ARCH_HF] = { "embed_tokens.weight", NULL }, [ARCH_BOOK] = { "tok_emb.weight", NULL },   \
        [ARCH_GGUF] = { "token_embd.weight", NULL } } },                                   \
    { ROLE_OUTPUT_NORM,                                                                    \
      { [ARCH_HF] = { "norm.weight", NULL }, [ARCH_BOOK] = { "final_norm." norm, NULL },     \
        [ARCH_GGUF] = { "output_norm.weight", NULL } } },                                  \
    { ROLE_OUTPUT,                                                                         \
      { [ARCH_HF] = { "lm_head.weight", NULL }, [ARCH_BOOK] = { "out_head.weight", NULL },    \
        [ARCH_GGUF] = { "output.weight", NULL } } },                                       \
    { ROLE_ATTN_NORM,                                                                      \
      { [ARCH_HF] = { "layers.%d.input_layernorm.weight", NULL },                         \
        [ARCH_BOOK] = { "trf_blocks.%d.norm1." norm, NULL },                               \
        [ARCH_GGUF] = { "blk.%d.attn_norm.weight", NULL } } },                             \
    LLAMA_LINEAR(ROLE_ATTN_Q, "self_attn.q_proj", "att.W_query", "attn_q"),                \
    LLAMA_LINEAR(ROLE_ATTN_K, "self_attn.k_proj", "att.W_key", "attn_k"),                  \
    LLAMA_LINEAR(ROLE_ATTN_V, "self_attn.v_proj", "att.W_value", "attn_v"),                \
    LLAMA_LINEAR(ROLE_ATTN_OUT, "self_attn.o_proj", "att.out_proj", "attn_output"),        \
    { ROLE_ATTN_Q_NORM,                                                                    \
      { [ARCH_HF] = { "layers.%d.self_attn.q_norm.weight", NULL },                        \
        [ARCH_BOOK] = { "trf_blocks.%d.att.q_norm.scale", NULL },                          \
        [ARCH_GGUF] = { "blk.%d.attn_q_norm.weight", NULL } } },                           \
    { ROLE_ATTN_K_NORM,                                                                    \
      { [ARCH_HF] = { "layers.%d.self_attn.k_norm.weight", NULL },                        \
        [ARCH_BOOK] = { "trf_blocks.%d.att.k_norm.scale", NULL },                          \
        [ARCH_GGUF] = { "blk.%d.attn_k_norm.weight", NULL } } },                           \
    { ROLE_FFN_NORM,                                                                       \
      { [ARCH_HF] = { "layers.%d.post_attention_layernorm.weight", NULL },                \
        [ARCH_BOOK] = { "trf_blocks.%d.norm2." norm, NULL },                               \
        [ARCH_GGUF] = { "blk.%d.ffn_norm.weight", NULL } } },                              \
    LLAMA_LINEAR(ROLE_FFN_GATE, "mlp.gate_proj", "ff.fc1", "ffn_gate"),                    \
    LLAMA_LINEAR(ROLE_FFN_UP, "mlp.up_proj", "ff.fc2", "ffn_up"),                          \
    LLAMA_LINEAR(ROLE_FFN_DOWN, "mlp.down_proj", "ff.fc3", "ffn_down")

static const struct arch_name llama_names[] = { LLAMA_NAMES("weight") };
static const struct arch_name qwen3_names[] = { LLAMA_NAMES("scale") };
/*
 * Qwen3-MoE: Qwen3's rows, and in a sparse layer the router (mlp.gate) and
 * each expert's SwiGLU (mlp.experts.E.gate_proj ...: the second %d).
 */
static const struct arch_name qwen3_moe_names[] = {
    LLAMA_NAMES("scale"),
    LLAMA_LINEAR(ROLE_FFN_ROUTER, "mlp.gate", "ff.gate", "ffn_gate_inp"),
    { ROLE_EXPERT_GATE, { [ARCH_HF] = { "layers.%d.mlp.experts.%d.gate_proj.weight", NULL },
                          [ARCH_GGUF] = { "blk.%d.ffn_gate_exps.weight", NULL } } },
    { ROLE_EXPERT_UP, { [ARCH_HF] = { "layers.%d.mlp.experts.%d.up_proj.weight", NULL },
                          [ARCH_GGUF] = { "blk.%d.ffn_up_exps.weight", NULL } } },
    { ROLE_EXPERT_DOWN, { [ARCH_HF] = { "layers.%d.mlp.experts.%d.down_proj.weight", NULL },
                          [ARCH_GGUF] = { "blk.%d.ffn_down_exps.weight", NULL } } },
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
/* Mixtral: Llama's rows, and the router and experts under block_sparse_moe (w1 gate, w3 up). */
static const struct arch_name mixtral_names[] = {
    LLAMA_NAMES("weight"),
    LLAMA_LINEAR(ROLE_FFN_ROUTER, "block_sparse_moe.gate", "ff.gate", "ffn_gate_inp"),
    { ROLE_EXPERT_GATE, { [ARCH_HF] = { "layers.%d.block_sparse_moe.experts.%d.w1.weight", NULL },
                          [ARCH_GGUF] = { "blk.%d.ffn_gate_exps.weight", NULL } } },
    { ROLE_EXPERT_UP, { [ARCH_HF] = { "layers.%d.block_sparse_moe.experts.%d.w3.weight", NULL },
                          [ARCH_GGUF] = { "blk.%d.ffn_up_exps.weight", NULL } } },
    { ROLE_EXPERT_DOWN, { [ARCH_HF] = { "layers.%d.block_sparse_moe.experts.%d.w2.weight", NULL },
                          [ARCH_GGUF] = { "blk.%d.ffn_down_exps.weight", NULL } } },
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
    c->bias_qkv = arch_name(ld, ROLE_ATTN_Q, 0, true, name, sizeof name) != NULL &&
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
                                                     "norm_topk_prob", false, true, true, NULL, 0.0 };
static const struct arch_moe_keys olmoe_keys = { "num_experts", "intermediate_size",
                                                 "norm_topk_prob", false, false, false, NULL,
                                                 0.0 };
static const struct arch_moe_keys mixtral_keys = { "num_local_experts", "intermediate_size", NULL,
                                                   true, false, true, NULL, 0.0 };
static const char *const qwen3_moe_classes[] = { "Qwen3MoeForCausalLM", NULL };

#define COUNT(a) (int)(sizeof(a) / sizeof(a)[0])

/* These models ship in bfloat16: their matrices stay so, half the memory of float32. */
const struct architecture arch_llama = {
    "llama",     "Llama",            llama_types,        llama_classes, llama_layouts, COUNT(llama_layouts),
    llama_names, COUNT(llama_names), true,          true,          llama_describe,
    .parts = { .positions = DECODER_POSITIONS_ROPE, .norm = DECODER_NORM_RMS, .mlp = DECODER_MLP_SWIGLU,
                .block_norms = DECODER_PRE_NORM, .eps = 1e-6, .rope_theta = 10000.0, .mlp_bias_key = true },
};
const struct architecture arch_qwen2 = {
    "qwen2",     "Qwen2",            qwen2_types,        qwen2_classes, qwen2_layouts, COUNT(qwen2_layouts),
    llama_names, COUNT(llama_names), true,          true,          llama_describe,
    .parts = { .positions = DECODER_POSITIONS_ROPE, .norm = DECODER_NORM_RMS, .mlp = DECODER_MLP_SWIGLU,
                .block_norms = DECODER_PRE_NORM, .eps = 1e-6, .rope_theta = 10000.0, .qkv_biased = true },
};
const struct architecture arch_qwen3 = {
    "qwen3",     "Qwen3",            qwen3_types,        qwen3_classes, qwen3_layouts, COUNT(qwen3_layouts),
    qwen3_names, COUNT(qwen3_names), true,          true,          llama_describe,
    .parts = { .positions = DECODER_POSITIONS_ROPE, .norm = DECODER_NORM_RMS, .mlp = DECODER_MLP_SWIGLU,
                .block_norms = DECODER_PRE_NORM, .eps = 1e-6, .rope_theta = 10000.0, .qk_norm = true, .head_dim = 128 },
};
const struct architecture arch_qwen3_moe = {
    "qwen3_moe", "Qwen3-MoE", qwen3_moe_types, qwen3_moe_classes, qwen3_moe_layouts,
    COUNT(qwen3_moe_layouts), qwen3_moe_names, COUNT(qwen3_moe_names), true, true,
    llama_describe,
    .parts = { .positions = DECODER_POSITIONS_ROPE, .norm = DECODER_NORM_RMS,
               .mlp = DECODER_MLP_SWIGLU, .block_norms = DECODER_PRE_NORM, .eps = 1e-6,
               .rope_theta = 10000.0, .qk_norm = true, .head_dim = 128, .moe = &qwen3_moe_keys },
    .gguf = "qwen3moe",
};
const struct architecture arch_olmoe = {
    "olmoe", "OLMoE", olmoe_types, olmoe_classes, qwen3_moe_layouts, COUNT(qwen3_moe_layouts),
    qwen3_moe_names, COUNT(qwen3_moe_names), true, true, llama_describe,
    /* (QK-norm over the whole projection, as Olmo's) */
    .parts = { .positions = DECODER_POSITIONS_ROPE, .norm = DECODER_NORM_RMS,
               .mlp = DECODER_MLP_SWIGLU, .block_norms = DECODER_PRE_NORM, .eps = 1e-5,
               .rope_theta = 10000.0, .qk_norm = true, .qk_norm_full = true,
               .moe = &olmoe_keys },
};
const struct architecture arch_mixtral = {
    "mixtral", "Mixtral", mixtral_types, mixtral_classes, mixtral_layouts, COUNT(mixtral_layouts),
    mixtral_names, COUNT(mixtral_names), true, true, llama_describe,
    .parts = { .positions = DECODER_POSITIONS_ROPE, .norm = DECODER_NORM_RMS,
               .mlp = DECODER_MLP_SWIGLU, .block_norms = DECODER_PRE_NORM, .eps = 1e-5,
               .rope_theta = 1000000.0, .moe = &mixtral_keys, .window_key = true },
    .gguf = "llama",
};
