/*
 * windowed_config.c: the config.json of the families with sliding windows
 * (see windowed.h): Gemma 3's text model (gemma3_text), Gemma 2 (gemma2) and
 * Olmo 3 (olmo3),
 * read and audited as the Llama family's are (llama_config.c): every key
 * that changes the computation honoured or refused by name.
 *
 * What they add to the Llama-style decoder, as Hugging Face's
 * modeling_gemma3 and modeling_olmo3 compute it:
 * - layer_types: which layers see only the last sliding_window keys (older
 *   Gemma configs give sliding_window_pattern instead: every pattern-th
 *   layer is full; Olmo 3's default is every fourth);
 * - RoPE per kind of layer: the full layers with rope_theta and its
 *   rope_scaling (Gemma 3's linear, Olmo 3's YaRN), the sliding ones
 *   unstretched with Gemma's rope_local_base_freq (Olmo's rope_theta);
 *   transformers 5 spells both as rope_parameters.full_attention and
 *   .sliding_attention;
 * - Gemma 3: embeddings times sqrt(hidden_size), RMSNorm by 1 + w, four
 *   norms a block, per-head QK-norm, scores divided by
 *   sqrt(query_pre_attn_scalar), GELU-tanh gated MLP, a tied head,
 *   final_logit_softcapping;
 * - Olmo 3: post-norm blocks, QK-norm over the whole projection width;
 * - gpt-oss: a sink logit per head in every softmax, biases on q, k, v and
 *   o (attention_bias, true by default), one YaRN for both kinds of layer
 *   (rope_scaling, else GptOssConfig's default), every layer a mixture of
 *   experts (num_local_experts, num_experts_per_tok, swiglu_limit).
 */
#include "config.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "attnscope/architectures/windowed.h"
#include "attnscope/files/jsonfile.h"

/* The architecture model_type names when it is one this file reads, else NULL. */
static const struct architecture *
window_of(const char *model_type)
{
    return architecture_of_kin(model_type, &arch_gemma3);
}

/* Whether a key is there with a value other than null. */
static bool
given(json_t *root, const char *key)
{
    json_t *v = json_object_get(root, key);

    return v != NULL && !json_is_null(v);
}

/* Gemma's activation must be GELU's tanh approximation, Olmo's SiLU. */
static enum attn_status
activation(json_t *root, const char *path, bool gemma, struct attn_error *err)
{
    static const char *const keys[] = { "hidden_activation", "hidden_act" };

    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        json_t *v = json_object_get(root, keys[i]);
        const char *name = json_is_string(v) ? json_string_value(v) : "not a string";
        if (v == NULL || json_is_null(v))
            continue;
        if (gemma ? strcmp(name, "gelu_pytorch_tanh") != 0 && strcmp(name, "gelu_new") != 0
                  : strcmp(name, "silu") != 0)
            return attn_fail(err, ATTN_EPARSE, "%s: \"%s\" is %s; attnscope computes %s", path,
                             keys[i], name,
                             gemma ? "Gemma's MLP with gelu_pytorch_tanh" : "SwiGLU with silu");
    }
    return ATTN_OK;
}

/* The keys that would change the computation in a way attnscope does not compute: refused. */
static enum attn_status
refusals(json_t *root, const char *path, struct attn_error *err)
{
    int bidirectional;

    if (arch_config_refuse_partial(root, path, err) != ATTN_OK)
        return ATTN_EPARSE;
    if ((bidirectional = jsonfile_bool(root, path, "use_bidirectional_attention", false, err)) != 0) {
        if (bidirectional > 0)
            attn_fail(err, ATTN_EPARSE,
                      "%s: \"use_bidirectional_attention\" is true: attnscope computes the "
                      "causal decoder",
                      path);
        return ATTN_EPARSE;
    }
    return ATTN_OK;
}

/*
 * Which layers slide: layer_types, else the pattern (Gemma 3's
 * sliding_window_pattern, 6 unless given; Gemma 2's 2, Olmo's 4): layer i
 * full when (i + 1) is a multiple of it.
 */
static enum attn_status
layer_kinds(struct decoder_config *c, json_t *root, const char *path, const struct architecture *a,
            struct attn_error *err)
{
    json_t *types = json_object_get(root, "layer_types");
    bool any = false;
    int pattern = a->parts.sliding_pattern;

    if (c->n_layer > DECODER_LAYERS_SLIDING_MAX)
        return attn_fail(err, ATTN_EPARSE, "%s: %d layers: attnscope keeps the kinds of at most %d",
                         path, c->n_layer, DECODER_LAYERS_SLIDING_MAX);
    if (types != NULL && !json_is_null(types)) {
        if (!json_is_array(types) || json_array_size(types) != (size_t)c->n_layer)
            return attn_fail(err, ATTN_EPARSE,
                             "%s: \"layer_types\" is not a list of num_hidden_layers (%d) kinds",
                             path, c->n_layer);
        for (int i = 0; i < c->n_layer; i++) {
            json_t *t = json_array_get(types, (size_t)i);
            const char *kind = json_is_string(t) ? json_string_value(t) : "not a string";
            if (strcmp(kind, "sliding_attention") != 0 && strcmp(kind, "full_attention") != 0)
                return attn_fail(err, ATTN_EPARSE,
                                 "%s: \"layer_types\"[%d] is %s; attnscope computes "
                                 "sliding_attention and full_attention",
                                 path, i, kind);
            c->sliding[i] = strcmp(kind, "sliding_attention") == 0;
            any = any || c->sliding[i];
        }
    } else {
        static const char *const keys[] = { "sliding_window_pattern", "_sliding_window_pattern" };
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
            if (given(root, keys[k]) &&
                (pattern = jsonfile_int(root, path, keys[k], NULL, 1, err)) < 0)
                return ATTN_EPARSE;
        for (int i = 0; i < c->n_layer; i++) {
            c->sliding[i] = (i + 1) % pattern != 0;
            any = any || c->sliding[i];
        }
    }
    if (!any)
        return ATTN_OK;
    /* (absent: both configs' default, 4096; null: no window a sliding layer could use) */
    c->sliding_window = 4096;
    if (json_object_get(root, "sliding_window") == NULL)
        return ATTN_OK;
    if (!given(root, "sliding_window"))
        return attn_fail(err, ATTN_EPARSE,
                         "%s: sliding layers, but no \"sliding_window\" says how far they see",
                         path);
    if ((c->sliding_window = jsonfile_int(root, path, "sliding_window", NULL, 1, err)) < 0)
        return ATTN_EPARSE;
    return ATTN_OK;
}

/* The parts, and the keys that change them. */
static enum attn_status
parts(struct windowed_config *gc, json_t *root, const char *path, struct attn_error *err)
{
    struct decoder_config *c = &gc->dec;
    const struct architecture *a = window_of(gc->model_type);
    const bool gemma = a->parts.mlp == DECODER_MLP_GEGLU;
    /* (gpt-oss: its MLP a mixture, every layer; its scores' divisor the head size's root) */
    double eps, scalar = 0.0, cap, attn_cap;
    int flag;

    arch_parts_apply(a, c);
    if (activation(root, path, gemma, err) != ATTN_OK || refusals(root, path, err) != ATTN_OK ||
        layer_kinds(c, root, path, a, err) != ATTN_OK || arch_config_rope_read(root, path, a->parts.rope_local_key, c, err) != ATTN_OK)
        return ATTN_EPARSE;
    if (a->parts.query_scalar > 0.0)
        scalar = arch_config_number(root, path, "query_pre_attn_scalar", a->parts.query_scalar,
                                    ARCH_BOUND_QUERY_SCALAR, err);
    /* (Gemma's caps; Olmo's config has none, and its modeling reads none) */
    cap = gemma ? arch_config_number(root, path, "final_logit_softcapping", a->parts.final_softcap,
                                     ARCH_BOUND_SOFTCAP, err)
                : 0.0;
    attn_cap = gemma ? arch_config_number(root, path, "attn_logit_softcapping",
                                          a->parts.attn_softcap, ARCH_BOUND_SOFTCAP, err)
                     : 0.0;
    eps = arch_config_number(root, path, "rms_norm_eps", a->parts.eps, ARCH_BOUND_NORM_EPS, err);
    if (isnan(eps) || isnan(scalar) || isnan(cap) || isnan(attn_cap))
        return ATTN_EPARSE;
    c->eps = (float)eps;
    c->attn_scalar = scalar;
    c->final_softcap = cap;
    c->attn_softcap = attn_cap;
    if ((flag = jsonfile_bool(root, path, "tie_word_embeddings", a->parts.tied, err)) < 0)
        return ATTN_EPARSE;
    c->tied = flag;
    if ((flag = jsonfile_bool(root, path, "attention_bias", a->parts.attention_bias, err)) < 0)
        return ATTN_EPARSE;
    c->bias.qkv = c->bias.o = flag;
    if (a->parts.moe != NULL && arch_config_experts(a->parts.moe, c, root, path, err) != ATTN_OK)
        return ATTN_EPARSE;
    return ATTN_OK;
}

enum attn_status
windowed_config_load(struct windowed_config *gc, const char *path, struct attn_error *err)
{
    json_t *root = jsonfile_load(path, JSONFILE_CONFIG_MAX, err);
    const char *type;
    enum attn_status rc = ATTN_EPARSE;

    memset(gc, 0, sizeof *gc);
    gc->bos_token = -1;
    if (root == NULL)
        return err != NULL ? err->status : ATTN_EPARSE;
    type = json_is_object(root) ? arch_config_type(root) : NULL;
    if (window_of(type) == NULL) {
        attn_fail(err, ATTN_EPARSE, "%s: model_type %s, not %s, %s, %s or %s", path,
                  type != NULL ? type : "(none)", arch_gemma3.model_types[0],
                  arch_gemma2.model_types[0], arch_olmo3.model_types[0],
                  arch_gpt_oss.model_types[0]);
        goto done;
    }
    snprintf(gc->model_type, sizeof gc->model_type, "%s", type);
    /* head_dim's default: Gemma's 256 (Gemma3TextConfig, Gemma2Config); Olmo 3's hidden / heads. */
    if (arch_config_sizes(root, path, window_of(type)->parts.head_dim, &gc->dec,
                          err) != ATTN_OK ||
        parts(gc, root, path, err) != ATTN_OK)
        goto done;
    gc->bos_token = arch_config_bos(root, gc->dec.vocab_size);
    rc = ATTN_OK;
done:
    json_decref(root);
    return rc;
}
