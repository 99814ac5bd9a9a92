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

/* The model types this family reads, and the class Hugging Face names for each. */
static const char *const known[] = { "llama", "qwen2", "qwen3" };
#define KNOWN_COUNT (sizeof known / sizeof known[0])

bool
llama_knows(const char *model_type)
{
    for (size_t i = 0; model_type != NULL && i < KNOWN_COUNT; i++)
        if (strcmp(model_type, known[i]) == 0)
            return true;
    return false;
}

/*
 * RoPE's scaling: none, "default", Llama 3's stretch, linear or YaRN; any
 * other kind refused by name.  It is rope_scaling, or (transformers 5's
 * spelling) rope_parameters, which holds rope_theta beside it: the same
 * kinds are honoured and refused under either name, and the two may not
 * disagree.
 */
static enum attn_status
rope_scaling(struct decoder_config *c, json_t *root, const char *path, struct attn_error *err)
{
    json_t *params = json_object_get(root, "rope_parameters");
    json_t *sc;
    const char *name;

    if (arch_config_rope_pick(root, path, &sc, &name, err) != ATTN_OK)
        return err->status;
    if (sc == NULL || json_is_null(sc))
        return ATTN_OK;
    if (!json_is_object(sc))
        return attn_fail(err, ATTN_EPARSE, "%s: \"%s\" is not an object or null", path, name);
    /* (rope_parameters may hold rope_theta alone: the default rotation.) */
    if (arch_config_rope_kind(sc) == NULL && sc != params)
        return attn_fail(err, ATTN_EPARSE, "%s: \"rope_scaling\" has no \"rope_type\"", path);
    return arch_config_rope(sc, path, name, c->n_positions, &c->rope_scaling, err);
}

/* The keys that would change the computation in a way attnscope does not compute: refused. */
static enum attn_status
refusals(json_t *root, const char *path, struct attn_error *err)
{
    json_t *v = json_object_get(root, "hidden_act");
    json_t *types = json_object_get(root, "layer_types");
    double partial;
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
    partial = arch_config_number(root, path, "partial_rotary_factor", 1.0, ARCH_BOUND_FRACTION, err);
    if (isnan(partial))
        return ATTN_EPARSE;
    if (partial != 1.0)
        return attn_fail(err, ATTN_EPARSE,
                         "%s: \"partial_rotary_factor\" is %g: rotating part of each head is not "
                         "supported yet",
                         path, partial);
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
    const char *type = lc->model_type;
    json_t *params;
    double theta, eps;
    int flag;

    if (refusals(root, path, err) != ATTN_OK || rope_scaling(c, root, path, err) != ATTN_OK)
        return ATTN_EPARSE;
    c->positions = DECODER_POSITIONS_ROPE;
    c->norm = DECODER_NORM_RMS;
    c->mlp = DECODER_MLP_SWIGLU;
    c->scale_attn_weights = true;
    c->qk_norm = strcmp(type, "qwen3") == 0;
    /* rope_theta, or (transformers 5) inside rope_parameters. */
    params = json_object_get(root, "rope_parameters");
    theta = arch_config_number(json_is_object(params) && json_object_get(params, "rope_theta") != NULL ? params
                                                                                           : root,
                   path, "rope_theta", 10000.0, ARCH_BOUND_ROPE_BASE, err);
    eps = arch_config_number(root, path, "rms_norm_eps", 1e-6, ARCH_BOUND_NORM_EPS, err);
    if (isnan(theta) || isnan(eps))
        return ATTN_EPARSE;
    c->rope_theta = theta;
    c->eps = (float)eps;
    if ((flag = jsonfile_bool(root, path, "tie_word_embeddings", false, err)) < 0)
        return ATTN_EPARSE;
    c->tied = flag;
    if (strcmp(type, "qwen2") == 0) {
        /* Qwen2's queries, keys and values always have biases, its output projection none. */
        c->bias_qkv = true;
    } else {
        if ((flag = jsonfile_bool(root, path, "attention_bias", false, err)) < 0)
            return ATTN_EPARSE;
        c->bias_qkv = c->bias_o = flag;
    }
    if (strcmp(type, "llama") == 0) {
        if ((flag = jsonfile_bool(root, path, "mlp_bias", false, err)) < 0)
            return ATTN_EPARSE;
        c->bias_mlp = flag;
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
    /* Qwen3's head_dim defaults to 128 (Qwen3Config); Llama's and Qwen2's to hidden / heads. */
    if (arch_config_sizes(root, path, strcmp(type, "qwen3") == 0 ? 128 : 0, c, err) != ATTN_OK ||
        llama_parts(lc, root, path, err) != ATTN_OK)
        goto done;
    /* The token --bos puts first (Llama 3's <|begin_of_text|>); a list or null: none. */
    lc->bos_token = arch_config_bos(root, c->vocab_size);
    rc = ATTN_OK;
done:
    json_decref(root);
    return rc;
}
