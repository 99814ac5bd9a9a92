/* architecture_gguf.c: a model's description from GGUF metadata (see architecture.h). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/architectures/architecture.h"
#include "attnscope/formats/gguf.h"
#include "attnscope/formats/tensors.h"

enum attn_status
arch_gguf_count(const struct gguf *g, const char *arch, const char *key, bool required, int least,
                int *v, struct attn_error *err)
{
    char name[128];
    int64_t n;

    snprintf(name, sizeof name, "%s.%s", arch, key);
    if (gguf_find(g, name) == NULL) {
        if (required)
            return attn_fail(err, ATTN_EPARSE, "%s: no %s in its metadata", g->path, name);
        return ATTN_OK;
    }
    if (!gguf_int(g, name, &n))
        return attn_fail(err, ATTN_EPARSE, "%s: %s is not a whole number", g->path, name);
    if (n < least || n > (1 << 30))
        return attn_fail(err, ATTN_EPARSE, "%s: %s is %lld, not a count from %d to 2^30", g->path,
                         name, (long long)n, least);
    *v = (int)n;
    return ATTN_OK;
}

enum attn_status
arch_gguf_number(const struct gguf *g, const char *arch, const char *key, enum arch_bound b,
                 double *v, struct attn_error *err)
{
    char name[128];
    double x;

    snprintf(name, sizeof name, "%s.%s", arch, key);
    if (gguf_find(g, name) == NULL)
        return ATTN_OK;
    if (!gguf_float(g, name, &x))
        return attn_fail(err, ATTN_EPARSE, "%s: %s is not a number", g->path, name);
    if (!arch_bound_check(x, b, g->path, name, err))
        return err->status;
    *v = x;
    return ATTN_OK;
}

/*
 * The heads, before anything divides by them: the query heads shared
 * evenly by the key heads, and the width a multiple of the heads unless a
 * head's size is given.
 */
static enum attn_status
check_heads(const struct gguf *g, const char *arch, const struct decoder_config *c,
            struct attn_error *err)
{
    if (c->n_kv_head > 0 && c->n_head % c->n_kv_head != 0)
        return attn_fail(err, ATTN_EPARSE,
                         "%s: %s.attention.head_count %d is not a multiple of "
                         "%s.attention.head_count_kv %d",
                         g->path, arch, c->n_head, arch, c->n_kv_head);
    if (c->head_dim == 0 && c->d_model % c->n_head != 0)
        return attn_fail(err, ATTN_EPARSE,
                         "%s: %s.embedding_length %d is not a multiple of "
                         "%s.attention.head_count %d, and no %s.attention.key_length is given",
                         g->path, arch, c->d_model, arch, c->n_head, arch);
    return ATTN_OK;
}

/*
 * ARCH.attention.head_count_kv into c->n_kv_head: one count, or one a layer
 * (Ollama's converter writes it so, 0 on a layer without attention: a
 * Qwen3.5's DeltaNet layers), whose attention layers all share one count.
 */
static enum attn_status
kv_heads(const struct gguf *g, const char *arch, struct decoder_config *c, struct attn_error *err)
{
    char name[128];
    const struct gguf_kv *kv;
    int64_t n = 0;

    snprintf(name, sizeof name, "%s.attention.head_count_kv", arch);
    if ((kv = gguf_find(g, name)) == NULL || kv->type != GGUF_ARRAY)
        return arch_gguf_count(g, arch, "attention.head_count_kv", false, 1, &c->n_kv_head, err);
    if (kv->ints == NULL || kv->count != (size_t)c->n_layer)
        return attn_fail(err, ATTN_EPARSE,
                         "%s: %s is a list of %zu, not a count for each of its %d layers",
                         g->path, name, kv->count, c->n_layer);
    for (int l = 0; l < c->n_layer; l++) {
        const int64_t v = kv->ints[l];
        if (v < 0 || v > (1 << 30) || (v != 0 && n != 0 && v != n))
            return attn_fail(err, ATTN_EPARSE,
                             "%s: %s[%d] is %lld%s", g->path, name, l, (long long)v,
                             v < 0 || v > (1 << 30)
                                 ? ", not a count"
                                 : ": attnscope reads one count of key heads for every attention "
                                   "layer");
        n = v != 0 ? v : n;
    }
    if (n == 0)
        return attn_fail(err, ATTN_EPARSE, "%s: %s is 0 on every layer: no layer attends",
                         g->path, name);
    c->n_kv_head = (int)n;
    return ATTN_OK;
}

/* Whether key (after "ARCH.") is one a's describe reads itself. */
static bool
own_key(const struct architecture *a, const char *key)
{
    for (int o = 0; a->parts.gguf_own_keys != NULL && a->parts.gguf_own_keys[o] != NULL; o++)
        if (strcmp(key, a->parts.gguf_own_keys[o]) == 0)
            return true;
    return false;
}

/*
 * Keys that change the computation in ways attnscope does not make: refused
 * by name; a linear RoPE stretch (Gemma 3's) read into c.
 */
static enum attn_status
refuse_unmade(const struct gguf *g, const struct architecture *a, struct decoder_config *c,
              struct attn_error *err)
{
    const char *arch = a->gguf != NULL ? a->gguf : a->name;
    static const char *const unmade[] = { "expert_count", "attention.sliding_window",
                                          "attention.clamp_kqv", "attention.max_alibi_bias",
                                          "logit_scale", "attn_logit_softcapping",
                                          "final_logit_softcapping", NULL };
    char name[128];
    int64_t n;
    double x;
    const char *s;

    for (int k = 0; unmade[k] != NULL; k++) {
        bool own = own_key(a, unmade[k]);
        own = own || (a->parts.moe != NULL && strcmp(unmade[k], "expert_count") == 0);
        if (own)
            continue;
        snprintf(name, sizeof name, "%s.%s", arch, unmade[k]);
        if (gguf_find(g, name) != NULL &&
            !(gguf_int(g, name, &n) && n == 0) && !(gguf_float(g, name, &x) && x == 0.0))
            return attn_fail(err, ATTN_EPARSE, "%s: %s is set, which attnscope does not compute yet",
                             g->path, name);
    }
    snprintf(name, sizeof name, "%s.attention.causal", arch);
    if (gguf_int(g, name, &n) && n == 0)
        return attn_fail(err, ATTN_EPARSE, "%s: %s is false: attnscope shows causal decoders",
                         g->path, name);
    snprintf(name, sizeof name, "%s.rope.scaling.type", arch);
    if ((s = gguf_string(g, name)) != NULL && strcmp(s, "linear") == 0) {
        /* Gemma 3 4B's: every frequency divided by the factor */
        snprintf(name, sizeof name, "%s.rope.scaling.factor", arch);
        x = NAN;
        if (arch_gguf_number(g, arch, "rope.scaling.factor", ARCH_BOUND_STRETCH, &x, err) !=
            ATTN_OK)
            return err->status;
        if (isnan(x))
            return attn_fail(err, ATTN_EPARSE, "%s: a linear rope.scaling.type without %s",
                             g->path, name);
        c->rope_scaling.linear = true;
        c->rope_scaling.factor = x;
    } else if (s != NULL && strcmp(s, "yarn") == 0 && a->parts.rope_default != NULL &&
               a->parts.rope_default->yarn) {
        /*
         * gpt-oss's: YaRN as its config has it (the architecture's default: betas 32 and 1,
         * not truncated), the factor and the original context the metadata's
         */
        double f = NAN, original = NAN;
        c->rope_scaling = *a->parts.rope_default;
        if (arch_gguf_number(g, arch, "rope.scaling.factor", ARCH_BOUND_STRETCH_UP, &f, err) !=
                ATTN_OK ||
            arch_gguf_number(g, arch, "rope.scaling.original_context_length", ARCH_BOUND_POSITIONS,
                             &original, err) != ATTN_OK)
            return err->status;
        if (isnan(f) || isnan(original))
            return attn_fail(err, ATTN_EPARSE,
                             "%s: a yarn rope.scaling.type without %s.rope.scaling.factor and "
                             ".original_context_length",
                             g->path, arch);
        c->rope_scaling.factor = f;
        c->rope_scaling.original_max = (int)original;
        c->rope_scaling.attention_factor = 0.1 * log(f) + 1.0;
    } else if (s != NULL && strcmp(s, "none") != 0)
        return attn_fail(err, ATTN_EPARSE,
                         "%s: %s is '%s', which attnscope does not compute (none, linear, or "
                         "Llama 3's factors in rope_freqs.weight)",
                         g->path, name, s);
    snprintf(name, sizeof name, "%s.rope.dimension_count", arch);
    if (c->positions == DECODER_POSITIONS_ROPE && !own_key(a, "rope.dimension_count") &&
        gguf_int(g, name, &n) && n != decoder_head_dim(c))
        return attn_fail(err, ATTN_EPARSE,
                         "%s: %s is %lld: RoPE over part of each head (of %d) is not computed yet",
                         g->path, name, (long long)n, decoder_head_dim(c));
    snprintf(name, sizeof name, "%s.attention.value_length", arch);
    if (gguf_int(g, name, &n) && n != decoder_head_dim(c))
        return attn_fail(err, ATTN_EPARSE, "%s: %s is %lld, unlike the keys' %d", g->path, name,
                         (long long)n, decoder_head_dim(c));
    return ATTN_OK;
}

/*
 * A mixture's experts from ARCH.expert_count, expert_used_count and (each
 * one's width) expert_feed_forward_length, else feed_forward_length; every
 * layer sparse, the chosen weights renormalised as llama.cpp's build_moe_ffn
 * does for the architecture.  Shared experts, a scale on the weights and a
 * gating other than the softmax are refused by name.
 */
static enum attn_status
gguf_experts(const struct gguf *g, const struct architecture *a, const char *arch,
             struct decoder_config *c, struct attn_error *err)
{
    char name[128];
    int64_t n;
    double x;

    c->moe.d_expert = c->d_mlp;
    if (arch_gguf_count(g, arch, "expert_count", true, 1, &c->moe.n_experts, err) != ATTN_OK ||
        arch_gguf_count(g, arch, "expert_used_count", true, 1, &c->moe.n_experts_used, err) !=
            ATTN_OK ||
        arch_gguf_count(g, arch, "expert_feed_forward_length", false, 1, &c->moe.d_expert, err) !=
            ATTN_OK)
        return err->status;
    if (c->moe.d_expert == 0)
        return attn_fail(err, ATTN_EPARSE, "%s: no %s.expert_feed_forward_length nor "
                         "%s.feed_forward_length: how wide its experts are is not said",
                         g->path, arch, arch);
    snprintf(name, sizeof name, "%s.expert_shared_count", arch);
    /* (a shared expert is its architecture's: one, its width this key's, else the MLP's) */
    if (gguf_int(g, name, &n) && n != 0 && (a->parts.moe->shared == NULL || n != 1))
        return attn_fail(err, ATTN_EPARSE, "%s: %s is %lld: %s are not computed yet", g->path,
                         name, (long long)n,
                         a->parts.moe->shared == NULL ? "shared experts" : "more than one");
    if (a->parts.moe->shared != NULL &&
        arch_gguf_count(g, arch, "expert_shared_feed_forward_length", false, 1, &c->moe.d_shared,
                        err) != ATTN_OK)
        return err->status;
    snprintf(name, sizeof name, "%s.expert_weights_scale", arch);
    if (gguf_float(g, name, &x) && x != 0.0 && x != 1.0)
        return attn_fail(err, ATTN_EPARSE, "%s: %s is %g: a scale on the experts' weights is "
                         "not computed yet", g->path, name, x);
    snprintf(name, sizeof name, "%s.expert_gating_func", arch);
    /* (gpt-oss's top k softmaxed among themselves is its architecture's, whatever this says) */
    if (a->parts.moe->limit == NULL && gguf_int(g, name, &n) && n != 1)
        return attn_fail(err, ATTN_EPARSE, "%s: %s is %lld: only the softmax gating (1) is "
                         "computed", g->path, name, (long long)n);
    if (c->moe.n_experts_used > c->moe.n_experts)
        return attn_fail(err, ATTN_EPARSE, "%s: %s.expert_used_count %d is more than its %d "
                         "experts", g->path, arch, c->moe.n_experts_used, c->moe.n_experts);
    if (c->n_layer > DECODER_LAYERS_SLIDING_MAX)
        return attn_fail(err, ATTN_EPARSE, "%s: %d layers of experts: attnscope keeps the kinds "
                         "of at most %d", g->path, c->n_layer, DECODER_LAYERS_SLIDING_MAX);
    c->moe.norm_topk = a->parts.moe->gguf_norm;
    for (int l = 0; l < c->n_layer; l++)
        c->moe.sparse[l] = true;
    return ATTN_OK;
}

enum attn_status
gguf_describe(struct arch_loader *ld, struct attn_error *err)
{
    struct decoder_model *m = ld->w.m;
    struct decoder_config *c = &m->cfg;
    const struct gguf *g = tensors_gguf(&ld->w.src);
    const char *arch = ld->arch->gguf != NULL ? ld->arch->gguf : ld->arch->name;
    const bool biased = ld->arch->parts.all_biased;
    char name[160];
    double x;
    int64_t n;

    if (g == NULL)
        return attn_fail(err, ATTN_EPARSE, "%s: llama.cpp's tensor names outside a GGUF file",
                         m->source);
    memset(c, 0, sizeof *c);
    if (arch_gguf_count(g, arch, "block_count", true, 1, &c->n_layer, err) != ATTN_OK ||
        arch_gguf_count(g, arch, "embedding_length", true, 1, &c->d_model, err) != ATTN_OK ||
        arch_gguf_count(g, arch, "feed_forward_length", ld->arch->parts.moe == NULL, 1, &c->d_mlp,
                        err) != ATTN_OK ||
        arch_gguf_count(g, arch, "attention.head_count", true, 1, &c->n_head, err) != ATTN_OK ||
        kv_heads(g, arch, c, err) != ATTN_OK ||
        arch_gguf_count(g, arch, "attention.key_length", false, 1, &c->head_dim, err) !=
            ATTN_OK ||
        arch_gguf_count(g, arch, "context_length", true, 1, &c->n_ctx, err) != ATTN_OK ||
        check_heads(g, arch, c, err) != ATTN_OK)
        return err->status;
    /* The architecture's parts; the numbers are the metadata's (llama.cpp's defaults) below. */
    arch_parts_apply(ld->arch, c);
    /* (a config's default stretch is not a GGUF's: its metadata says, as llama.cpp reads it) */
    memset(&c->rope_scaling, 0, sizeof c->rope_scaling);
    c->attn_scalar = 0.0;
    c->final_softcap = c->attn_softcap = 0.0;
    c->rope_theta = 10000.0;
    if (arch_gguf_number(g, arch, "rope.freq_base", ARCH_BOUND_ROPE_BASE, &c->rope_theta, err) !=
        ATTN_OK)
        return err->status;
    snprintf(name, sizeof name, "attention.layer_norm%s_epsilon",
             c->norm == DECODER_NORM_LAYER ? "" : "_rms");
    x = NAN;
    if (arch_gguf_number(g, arch, name, ARCH_BOUND_NORM_EPS, &x, err) != ATTN_OK)
        return err->status;
    if (isnan(x))
        return attn_fail(err, ATTN_EPARSE, "%s: no %s.%s in its metadata", g->path, arch, name);
    c->eps = (float)x;
    c->vocab_size = (int)arch_dim(ld, ROLE_TOKEN_EMBD, 0, 0);
    c->tied = !arch_has(ld, ROLE_OUTPUT, 0);
    c->bias.qkv = biased || (arch_name(ld, ROLE_ATTN_Q, 0, true, name, sizeof name) != NULL &&
                           weights_find(&ld->w, name) != NULL);
    c->bias.o = biased || (arch_name(ld, ROLE_ATTN_OUT, 0, true, name, sizeof name) != NULL &&
                         weights_find(&ld->w, name) != NULL);
    c->bias.mlp = biased || (arch_name(ld, ROLE_FFN_UP, 0, true, name, sizeof name) != NULL &&
                           weights_find(&ld->w, name) != NULL);
    if (refuse_unmade(g, ld->arch, c, err) != ATTN_OK)
        return err->status;
    if (ld->arch->parts.moe != NULL && gguf_experts(g, ld->arch, arch, c, err) != ATTN_OK)
        return err->status;
    if (c->d_mlp == 0) /* (every layer's MLP a mixture: llama.cpp's n_ff then unused) */
        c->d_mlp = c->moe.d_expert;
    m->bos_token = gguf_int(g, "tokenizer.ggml.bos_token_id", &n) && n >= 0 && n < INT32_MAX
                       ? (int)n
                       : -1;
    /* Its chat template, for --chat (the model's own text, kept as written). */
    {
        const char *t = gguf_string(g, "tokenizer.chat_template");
        const struct gguf_kv *kv = gguf_find(g, "tokenizer.chat_template");
        /* (a template of another type is said to be so when --chat asks, never refused here) */
        snprintf(m->chat_template_type, sizeof m->chat_template_type, "%s",
                 kv != NULL && t == NULL ? gguf_type_name(kv->type) : "");
        free(m->chat_template);
        if ((m->chat_template = t != NULL ? strdup(t) : NULL) == NULL && t != NULL)
            return attn_fail(err, ATTN_ENOMEM, "out of memory for %s's chat template", g->path);
    }
    /* The end tokens: the eos and, when another, the end of a turn (eot), as llama.cpp stops. */
    m->n_end_tokens = 0;
    m->end_from[0] = '\0';
    {
        static const char *const keys[] = { "tokenizer.ggml.eos_token_id",
                                            "tokenizer.ggml.eot_token_id" };
        for (int k = 0; k < 2; k++)
            if (gguf_int(g, keys[k], &n) && n >= 0 && n < c->vocab_size &&
                (m->n_end_tokens == 0 || m->end_tokens[0] != (int)n)) {
                m->end_tokens[m->n_end_tokens++] = (int)n;
                snprintf(m->end_from + strlen(m->end_from), sizeof m->end_from - strlen(m->end_from),
                         "%s%s", k > 0 && m->n_end_tokens > 1 ? " and " : "its GGUF's ", keys[k]);
            }
    }
    snprintf(m->described_by, sizeof m->described_by, "its GGUF metadata");
    snprintf(m->context_from, sizeof m->context_from, "%s.context_length in its metadata", arch);
    ld->w.sizes_from = "its GGUF metadata";
    return ATTN_OK;
}

enum attn_status
gguf_rope_factors(struct arch_loader *ld, struct attn_error *err)
{
    struct decoder_model *m = ld->w.m;
    const struct tensor_info *t = tensors_find(&ld->w.src, "rope_freqs.weight");
    const int half = decoder_head_dim(&m->cfg) / 2;
    float *f;

    if (t == NULL || m->cfg.positions != DECODER_POSITIONS_ROPE)
        return ATTN_OK;
    if (t->numel != (size_t)half)
        return attn_fail(err, ATTN_EPARSE, "%s: rope_freqs.weight has %zu factors for heads of %d",
                         m->source, t->numel, 2 * half);
    if ((f = malloc((size_t)half * sizeof *f)) == NULL)
        return attn_fail(err, ATTN_ENOMEM, "%s: out of memory", m->source);
    if (tensors_read_f32(&ld->w.src, t, f, err) != ATTN_OK) {
        free(f);
        return err->status;
    }
    for (int i = 0; i < half; i++)
        if (!(f[i] > 0.0f && isfinite(f[i]) && isfinite(m->rope_freq[i] / f[i]))) {
            attn_fail(err, ATTN_EPARSE,
                      "%s: rope_freqs.weight's factor %d is %g: each frequency is divided by a "
                      "positive number, to a finite one",
                      m->source, i, (double)f[i]);
            free(f);
            return err->status;
        }
    for (int i = 0; i < half; i++)
        m->rope_freq[i] /= f[i];
    free(f);
    return ATTN_OK;
}
