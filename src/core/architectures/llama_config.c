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
static const struct {
    const char *model_type, *architecture;
} known[] = {
    { "llama", "LlamaForCausalLM" },
    { "qwen2", "Qwen2ForCausalLM" },
    { "qwen3", "Qwen3ForCausalLM" },
};
#define KNOWN_COUNT (sizeof known / sizeof known[0])

bool
llama_knows(const char *model_type)
{
    for (size_t i = 0; model_type != NULL && i < KNOWN_COUNT; i++)
        if (strcmp(model_type, known[i].model_type) == 0)
            return true;
    return false;
}

/* The model type a config names: model_type, else its architectures' class; NULL: neither. */
static const char *
type_of(json_t *root)
{
    json_t *v = json_object_get(root, "model_type");
    json_t *arch = json_object_get(root, "architectures");

    if (json_is_string(v))
        return json_string_value(v);
    for (size_t a = 0; json_is_array(arch) && a < json_array_size(arch); a++)
        for (size_t i = 0; i < KNOWN_COUNT; i++)
            if (json_is_string(json_array_get(arch, a)) &&
                strcmp(json_string_value(json_array_get(arch, a)), known[i].architecture) == 0)
                return known[i].model_type;
    return NULL;
}

/* The number name (def when absent or null), within lo .. hi; NAN with err set. */
static double
number(json_t *obj, const char *path, const char *name, double def, double lo, double hi,
       struct attn_error *err)
{
    json_t *v = json_object_get(obj, name);

    if (v == NULL || json_is_null(v))
        return def;
    if (!json_is_number(v) || !(json_number_value(v) >= lo && json_number_value(v) <= hi)) {
        attn_fail(err, ATTN_EPARSE, "%s: \"%s\" is not a number from %g to %g", path, name, lo,
                  hi);
        return NAN;
    }
    return json_number_value(v);
}

/*
 * The kind of a RoPE object (its rope_type, or its older spelling type), or
 * NULL when it names none ("(not a string)", which no kind is, for a value
 * of another type).
 */
static const char *
rope_kind(json_t *o)
{
    json_t *kind = json_object_get(o, "rope_type");

    if (kind == NULL)
        kind = json_object_get(o, "type");
    if (kind == NULL || json_is_null(kind))
        return NULL;
    return json_is_string(kind) ? json_string_value(kind) : "(not a string)";
}

/*
 * RoPE's scaling: none, "default", or Llama 3's stretch; any other kind
 * refused by name.  It is rope_scaling, or (transformers 5's spelling)
 * rope_parameters, which holds rope_theta beside it: the same kinds are
 * honoured and refused under either name, and the two may not disagree.
 */
static enum attn_status
rope_scaling(struct decoder_config *c, json_t *root, const char *path, struct attn_error *err)
{
    json_t *sc = json_object_get(root, "rope_scaling");
    json_t *params = json_object_get(root, "rope_parameters");
    const char *name = "rope_scaling";
    const char *kind;
    struct decoder_rope_scaling *r = &c->rope_scaling;

    if (params != NULL && !json_is_null(params) && !json_is_object(params))
        return attn_fail(err, ATTN_EPARSE, "%s: \"rope_parameters\" is not an object or null",
                         path);
    if (sc == NULL || json_is_null(sc)) {
        sc = params;
        name = "rope_parameters";
    } else if (json_is_object(sc) && json_is_object(params) && rope_kind(params) != NULL &&
               (rope_kind(sc) == NULL || strcmp(rope_kind(sc), rope_kind(params)) != 0)) {
        return attn_fail(err, ATTN_EPARSE,
                         "%s: \"rope_scaling\" (%s) and \"rope_parameters\" (%s) disagree", path,
                         rope_kind(sc) != NULL ? rope_kind(sc) : "no rope_type",
                         rope_kind(params));
    }
    if (sc == NULL || json_is_null(sc))
        return ATTN_OK;
    if (!json_is_object(sc))
        return attn_fail(err, ATTN_EPARSE, "%s: \"%s\" is not an object or null", path, name);
    kind = rope_kind(sc);
    if (kind == NULL) {
        /* (rope_parameters may hold rope_theta alone: the default rotation.) */
        if (sc == params)
            return ATTN_OK;
        return attn_fail(err, ATTN_EPARSE, "%s: \"rope_scaling\" has no \"rope_type\"", path);
    }
    if (strcmp(kind, "default") == 0)
        return ATTN_OK;
    if (strcmp(kind, "llama3") != 0)
        return attn_fail(err, ATTN_EPARSE,
                         "%s: \"%s\" of type %s is not supported yet; supported: default, llama3",
                         path, name, kind);
    r->llama3 = true;
    {
        static const char *const keys[] = { "factor", "low_freq_factor", "high_freq_factor",
                                            "original_max_position_embeddings" };
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
            if (json_object_get(sc, keys[i]) == NULL)
                return attn_fail(err, ATTN_EPARSE,
                                 "%s: \"%s\" of type llama3 needs factor, low_freq_factor, "
                                 "high_freq_factor and original_max_position_embeddings (no %s)",
                                 path, name, keys[i]);
    }
    r->factor = number(sc, path, "factor", NAN, 1.0, 1e6, err);
    r->low_freq_factor = number(sc, path, "low_freq_factor", NAN, 1e-6, 1e6, err);
    r->high_freq_factor = number(sc, path, "high_freq_factor", NAN, 1e-6, 1e6, err);
    r->original_max = (int)number(sc, path, "original_max_position_embeddings", 0, 1, 1 << 24,
                                  err);
    if (isnan(r->factor) || isnan(r->low_freq_factor) || isnan(r->high_freq_factor) ||
        r->original_max < 1)
        return ATTN_EPARSE; /* (number said which) */
    if (!(r->high_freq_factor > r->low_freq_factor))
        return attn_fail(err, ATTN_EPARSE,
                         "%s: \"%s\": high_freq_factor must be above low_freq_factor", path,
                         name);
    return ATTN_OK;
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
                      "%s: \"use_sliding_window\" is true: attention within a sliding window is "
                      "not supported yet",
                      path);
        return ATTN_EPARSE;
    }
    partial = number(root, path, "partial_rotary_factor", 1.0, 0.0, 1.0, err);
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

/* The sizes, and that they fit together. */
static enum attn_status
sizes(struct llama_config *lc, json_t *root, const char *path, struct attn_error *err)
{
    struct decoder_config *c = &lc->dec;
    json_t *hd = json_object_get(root, "head_dim");

    if ((c->n_embd = jsonfile_int(root, path, "hidden_size", NULL, 1, err)) < 0 ||
        (c->n_inner = jsonfile_int(root, path, "intermediate_size", NULL, 1, err)) < 0 ||
        (c->n_layer = jsonfile_int(root, path, "num_hidden_layers", NULL, 1, err)) < 0 ||
        (c->n_head = jsonfile_int(root, path, "num_attention_heads", NULL, 1, err)) < 0 ||
        (c->vocab_size = jsonfile_int(root, path, "vocab_size", NULL, 1, err)) < 0 ||
        (c->n_positions = jsonfile_int(root, path, "max_position_embeddings", NULL, 1, err)) < 0)
        return ATTN_EPARSE;
    c->n_kv_head = c->n_head;
    if (json_object_get(root, "num_key_value_heads") != NULL &&
        !json_is_null(json_object_get(root, "num_key_value_heads")) &&
        (c->n_kv_head = jsonfile_int(root, path, "num_key_value_heads", NULL, 1, err)) < 0)
        return ATTN_EPARSE;
    if (c->n_head % c->n_kv_head != 0)
        return attn_fail(err, ATTN_EPARSE,
                         "%s: num_attention_heads %d is not a multiple of num_key_value_heads %d",
                         path, c->n_head, c->n_kv_head);
    /* Qwen3's head_dim defaults to 128 (Qwen3Config); Llama's and Qwen2's to hidden / heads. */
    c->head_dim = strcmp(lc->model_type, "qwen3") == 0 ? 128 : 0;
    if (hd != NULL && !json_is_null(hd) &&
        (c->head_dim = jsonfile_int(root, path, "head_dim", NULL, 2, err)) < 0)
        return ATTN_EPARSE;
    if (c->head_dim == 0) {
        if (c->n_embd % c->n_head != 0)
            return attn_fail(err, ATTN_EPARSE,
                             "%s: hidden_size %d is not a multiple of num_attention_heads %d, and "
                             "no head_dim is given",
                             path, c->n_embd, c->n_head);
        c->head_dim = c->n_embd / c->n_head;
    }
    if (c->head_dim % 2 != 0 || c->head_dim > DECODER_HEAD_DIM_MAX)
        return attn_fail(err, ATTN_EPARSE,
                         "%s: head_dim %d: RoPE turns pairs of an even head of at most %d", path,
                         c->head_dim, DECODER_HEAD_DIM_MAX);
    return ATTN_OK;
}

enum attn_status
llama_config_load(struct llama_config *lc, const char *path, struct attn_error *err)
{
    json_t *root = jsonfile_load(path, JSONFILE_CONFIG_MAX, err);
    struct decoder_config *c = &lc->dec;
    json_t *params;
    const char *type;
    double theta, eps;
    int flag;
    enum attn_status rc = ATTN_EPARSE;

    memset(lc, 0, sizeof *lc);
    lc->bos_token = -1;
    if (root == NULL)
        return err != NULL ? err->status : ATTN_EPARSE;
    if (!json_is_object(root)) {
        attn_fail(err, ATTN_EPARSE, "%s: not a JSON object", path);
        goto done;
    }
    type = type_of(root);
    if (!llama_knows(type)) {
        char names[160];
        attn_fail(err, ATTN_EPARSE, "%s: model_type %s is not supported yet; supported: %s", path,
                  type != NULL ? type : "(none)", architecture_types(names, sizeof names));
        goto done;
    }
    snprintf(lc->model_type, sizeof lc->model_type, "%s", type);
    if (sizes(lc, root, path, err) != ATTN_OK || refusals(root, path, err) != ATTN_OK ||
        rope_scaling(c, root, path, err) != ATTN_OK)
        goto done;
    c->positions = DECODER_POSITIONS_ROPE;
    c->norm = DECODER_NORM_RMS;
    c->mlp = DECODER_MLP_SWIGLU;
    c->scale_attn_weights = true;
    c->qk_norm = strcmp(type, "qwen3") == 0;
    /* rope_theta, or (transformers 5) inside rope_parameters. */
    params = json_object_get(root, "rope_parameters");
    theta = number(json_is_object(params) && json_object_get(params, "rope_theta") != NULL ? params
                                                                                           : root,
                   path, "rope_theta", 10000.0, 1.0, 1e12, err);
    eps = number(root, path, "rms_norm_eps", 1e-6, 1e-30, 1.0, err);
    if (isnan(theta) || isnan(eps))
        goto done;
    c->rope_theta = theta;
    c->eps = (float)eps;
    if ((flag = jsonfile_bool(root, path, "tie_word_embeddings", false, err)) < 0)
        goto done;
    c->tied = flag;
    if (strcmp(type, "qwen2") == 0) {
        /* Qwen2's queries, keys and values always have biases, its output projection none. */
        c->bias_qkv = true;
    } else {
        if ((flag = jsonfile_bool(root, path, "attention_bias", false, err)) < 0)
            goto done;
        c->bias_qkv = c->bias_o = flag;
    }
    if (strcmp(type, "llama") == 0) {
        if ((flag = jsonfile_bool(root, path, "mlp_bias", false, err)) < 0)
            goto done;
        c->bias_mlp = flag;
    }
    /* The token --bos puts first (Llama 3's <|begin_of_text|>); a list or null: none. */
    {
        json_t *bos = json_object_get(root, "bos_token_id");
        if (json_is_integer(bos) && json_integer_value(bos) >= 0 &&
            json_integer_value(bos) < c->vocab_size)
            lc->bos_token = (int)json_integer_value(bos);
    }
    rc = ATTN_OK;
done:
    json_decref(root);
    return rc;
}
