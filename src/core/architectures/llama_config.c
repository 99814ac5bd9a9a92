/*
 * llama_config.c: a Llama-style config.json read and audited (see llama.h):
 * the sizes, and every key that changes the computation honoured or
 * refused by name.
 */
#include "config.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "attnscope/architectures/llama.h"
#include "attnscope/files/jsonfile.h"

/* The architecture model_type names when it is one this file reads, else NULL. */
static const struct architecture *
llama_of(const char *model_type)
{
    return architecture_of_kin(model_type, &arch_llama);
}

bool
llama_knows(const char *model_type)
{
    return llama_of(model_type) != NULL;
}

/* The keys that would change the computation in a way attnscope does not compute: refused. */
static enum attn_status
refusals(json_t *root, const char *path, struct attn_error *err)
{
    json_t *v = json_object_get(root, "hidden_act");
    json_t *types = json_object_get(root, "layer_types");
    int sliding;

    if (v != NULL && (!json_is_string(v) || strcmp(json_string_value(v), "silu") != 0))
        return attn_fail(err, ATTN_EPARSE,
                         "%s: \"hidden_act\" is %s; attnscope computes SwiGLU with silu", path,
                         json_is_string(v) ? json_string_value(v) : "not a string");
    if ((sliding = jsonfile_bool(root, path, "use_sliding_window", false, err)) != 0) {
        if (sliding > 0)
            attn_fail(err, ATTN_EPARSE,
                      "%s: \"use_sliding_window\" is true: attnscope reads sliding windows in "
                      "Gemma's and Olmo 3's configs (layer_types), not in Qwen2's",
                      path);
        return ATTN_EPARSE;
    }
    if (arch_config_refuse_partial(root, path, err) != ATTN_OK)
        return ATTN_EPARSE;
    for (size_t i = 0; json_is_array(types) && i < json_array_size(types); i++) {
        json_t *t = json_array_get(types, i);
        if (!json_is_string(t) || strcmp(json_string_value(t), "full_attention") != 0)
            return attn_fail(err, ATTN_EPARSE,
                             "%s: \"layer_types\"[%zu] is %s: only full attention is supported "
                             "yet",
                             path, i, json_is_string(t) ? json_string_value(t) : "not a string");
    }
    return ATTN_OK;
}

/* Llama's, Qwen2's and Qwen3's parts, and the keys that change them. */
static enum attn_status
llama_parts(struct llama_config *lc, json_t *root, const char *path, struct attn_error *err)
{
    struct decoder_config *c = &lc->dec;
    const struct architecture *a = llama_of(lc->model_type);
    double eps;
    int flag;

    arch_parts_apply(a, c);
    if (refusals(root, path, err) != ATTN_OK ||
        arch_config_rope_read(root, path, a->parts.rope_local_key, c, err) != ATTN_OK)
        return ATTN_EPARSE;
    eps = arch_config_number(root, path, "rms_norm_eps", a->parts.eps, ARCH_BOUND_NORM_EPS, err);
    if (isnan(eps))
        return ATTN_EPARSE;
    c->eps = (float)eps;
    if ((flag = jsonfile_bool(root, path, "tie_word_embeddings", a->parts.tied, err)) < 0)
        return ATTN_EPARSE;
    c->tied = flag;
    if (!a->parts.qkv_biased) { /* (Qwen2's q, k and v always have biases, its output none) */
        if ((flag = jsonfile_bool(root, path, "attention_bias", false, err)) < 0)
            return ATTN_EPARSE;
        c->bias.qkv = c->bias.o = flag;
    }
    if (a->parts.moe != NULL && arch_config_experts(a->parts.moe, c, root, path, err) != ATTN_OK)
        return ATTN_EPARSE;
    if (a->parts.window_key && json_is_integer(json_object_get(root, "sliding_window")))
        return attn_fail(err, ATTN_EPARSE,
                         "%s: \"sliding_window\" is set: attnscope reads sliding windows in "
                         "Gemma's and Olmo 3's configs (layer_types), not in %s's",
                         path, a->title);
    if (a->parts.mlp_bias_key) {
        if ((flag = jsonfile_bool(root, path, "mlp_bias", false, err)) < 0)
            return ATTN_EPARSE;
        c->bias.mlp = flag;
    }
    return ATTN_OK;
}

enum attn_status
llama_config_load(struct llama_config *lc, const char *path, struct attn_error *err)
{
    json_t *root = jsonfile_load(path, JSONFILE_CONFIG_MAX, err);
    struct decoder_config *c = &lc->dec;
    const char *type;
    enum attn_status rc = ATTN_EPARSE;

    memset(lc, 0, sizeof *lc);
    lc->bos_token = -1;
    if (root == NULL)
        return err != NULL ? err->status : ATTN_EPARSE;
    if (!json_is_object(root)) {
        attn_fail(err, ATTN_EPARSE, "%s: not a JSON object", path);
        goto done;
    }
    type = arch_config_type(root);
    if (!llama_knows(type)) {
        char names[160];
        attn_fail(err, ATTN_EPARSE, "%s: model_type %s is not supported yet; supported: %s", path,
                  type != NULL ? type : "(none)", architecture_types(names, sizeof names));
        goto done;
    }
    snprintf(lc->model_type, sizeof lc->model_type, "%s", type);
    /* head_dim's default: Qwen3's 128 (Qwen3Config); Llama's and Qwen2's hidden / heads. */
    if (arch_config_sizes(root, path, llama_of(type)->parts.head_dim, c, err) != ATTN_OK ||
        llama_parts(lc, root, path, err) != ATTN_OK)
        goto done;
    /* The token --bos puts first (Llama 3's <|begin_of_text|>); a list or null: none. */
    lc->bos_token = arch_config_bos(root, c->vocab_size);
    rc = ATTN_OK;
done:
    json_decref(root);
    return rc;
}
