/*
 * architecture_config.c: what the architectures' config.json readers share
 * (see architecture.h): numbers within bounds, the sizes, the model type,
 * and RoPE's stretches (Hugging Face's modeling_rope_utils: default,
 * llama3, linear, yarn), each refused by name when it cannot be computed.
 */
#include "config.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "attnscope/architectures/architecture.h"
#include "attnscope/files/jsonfile.h"

const char *
arch_config_type(json_t *root)
{
    json_t *v = json_object_get(root, "model_type");
    json_t *arch = json_object_get(root, "architectures");

    if (json_is_string(v))
        return json_string_value(v);
    for (size_t a = 0; json_is_array(arch) && a < json_array_size(arch); a++) {
        const char *name = json_string_value(json_array_get(arch, a));
        const struct architecture *found = name != NULL ? architecture_of_type(name) : NULL;
        if (found != NULL)
            return found->model_types[0];
    }
    return NULL;
}

static const struct {
    double lo, hi;
} bounds[] = {
#define ARCH_BOUND_ROW(name, lo, hi) [ARCH_BOUND_##name] = { lo, hi },
    ARCH_BOUND_LIST(ARCH_BOUND_ROW)
#undef ARCH_BOUND_ROW
};

bool
arch_bound_check(double x, enum arch_bound b, const char *file, const char *key,
                 struct attn_error *err)
{
    if (x >= bounds[b].lo && x <= bounds[b].hi)
        return true;
    attn_fail(err, ATTN_EPARSE, "%s: %s is %g, not a number from %g to %g", file, key, x,
              bounds[b].lo, bounds[b].hi);
    return false;
}

double
arch_config_number(json_t *obj, const char *path, const char *name, double def, enum arch_bound b,
                   struct attn_error *err)
{
    json_t *v = json_object_get(obj, name);
    char key[128];

    if (v == NULL || json_is_null(v))
        return def;
    snprintf(key, sizeof key, "\"%s\"", name);
    if (!json_is_number(v)) {
        attn_fail(err, ATTN_EPARSE, "%s: %s is not a number from %g to %g", path, key,
                  bounds[b].lo, bounds[b].hi);
        return NAN;
    }
    return arch_bound_check(json_number_value(v), b, path, key, err) ? json_number_value(v) : NAN;
}

/*
 * The kind of a RoPE object (its rope_type, or its older spelling type), or
 * NULL when it names none ("(not a string)", which no kind is, for a value
 * of another type).
 */
const char *
arch_config_rope_kind(json_t *o)
{
    json_t *kind = json_object_get(o, "rope_type");

    if (kind == NULL)
        kind = json_object_get(o, "type");
    if (kind == NULL || json_is_null(kind))
        return NULL;
    return json_is_string(kind) ? json_string_value(kind) : "(not a string)";
}

/* YaRN's numbers (Hugging Face's _compute_yarn_parameters): absent ones as it defaults them. */
static enum attn_status
rope_yarn(json_t *sc, const char *path, const char *name, int max_positions,
          struct decoder_rope_scaling *r, struct attn_error *err)
{
    int truncate;

    static const char *const refused[] = { "mscale", "mscale_all_dim" };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
        if (json_object_get(sc, refused[i]) != NULL && !json_is_null(json_object_get(sc, refused[i])))
            return attn_fail(err, ATTN_EPARSE, "%s: \"%s\" of type yarn: \"%s\" is not supported yet",
                             path, name, refused[i]);
    r->yarn = true;
    r->factor = arch_config_number(sc, path, "factor", NAN, ARCH_BOUND_STRETCH_UP, err);
    r->original_max = (int)arch_config_number(sc, path, "original_max_position_embeddings", max_positions, ARCH_BOUND_POSITIONS, err);
    r->beta_fast = arch_config_number(sc, path, "beta_fast", 32.0, ARCH_BOUND_ROPE_TUNING, err);
    r->beta_slow = arch_config_number(sc, path, "beta_slow", 1.0, ARCH_BOUND_ROPE_TUNING, err);
    if (isnan(r->beta_fast) || isnan(r->beta_slow) || r->original_max < 1)
        return ATTN_EPARSE;
    if (isnan(r->factor))
        return json_object_get(sc, "factor") == NULL
                   ? attn_fail(err, ATTN_EPARSE, "%s: \"%s\" of type yarn has no factor", path,
                               name)
                   : ATTN_EPARSE;
    /* Hugging Face stretches by max_position_embeddings / original when both are given. */
    if (json_object_get(sc, "original_max_position_embeddings") != NULL &&
        fabs((double)max_positions / r->original_max - r->factor) > 1e-9)
        return attn_fail(err, ATTN_EPARSE,
                         "%s: \"%s\": factor %g, but max_position_embeddings %d / "
                         "original_max_position_embeddings %d is %g: which one stretches is "
                         "not clear",
                         path, name, r->factor, max_positions, r->original_max,
                         (double)max_positions / r->original_max);
    r->attention_factor = arch_config_number(sc, path, "attention_factor",
                                 r->factor <= 1.0 ? 1.0 : 0.1 * log(r->factor) + 1.0, ARCH_BOUND_ROPE_TUNING,
                                 err);
    if (isnan(r->attention_factor) ||
        (truncate = jsonfile_bool(sc, path, "truncate", true, err)) < 0)
        return ATTN_EPARSE;
    r->truncate = truncate;
    return ATTN_OK;
}

/* Llama 3's four numbers, every one needed. */
static enum attn_status
rope_llama3(json_t *sc, const char *path, const char *name, struct decoder_rope_scaling *r,
            struct attn_error *err)
{
    static const char *const keys[] = { "factor", "low_freq_factor", "high_freq_factor",
                                        "original_max_position_embeddings" };

    r->llama3 = true;
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (json_object_get(sc, keys[i]) == NULL)
            return attn_fail(err, ATTN_EPARSE,
                             "%s: \"%s\" of type llama3 needs factor, low_freq_factor, "
                             "high_freq_factor and original_max_position_embeddings (no %s)",
                             path, name, keys[i]);
    r->factor = arch_config_number(sc, path, "factor", NAN, ARCH_BOUND_STRETCH_UP, err);
    r->low_freq_factor = arch_config_number(sc, path, "low_freq_factor", NAN, ARCH_BOUND_ROPE_TUNING, err);
    r->high_freq_factor = arch_config_number(sc, path, "high_freq_factor", NAN, ARCH_BOUND_ROPE_TUNING, err);
    r->original_max = (int)arch_config_number(sc, path, "original_max_position_embeddings", 0, ARCH_BOUND_POSITIONS,
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

enum attn_status
arch_config_rope_pick(json_t *root, const char *path, json_t **sc, const char **name,
                      struct attn_error *err)
{
    json_t *scaling = json_object_get(root, "rope_scaling");
    json_t *params = json_object_get(root, "rope_parameters");

    *sc = NULL;
    *name = "rope_scaling";
    if (params != NULL && !json_is_null(params) && !json_is_object(params))
        return attn_fail(err, ATTN_EPARSE, "%s: \"rope_parameters\" is not an object or null",
                         path);
    if (scaling == NULL || json_is_null(scaling)) {
        *sc = params != NULL && !json_is_null(params) ? params : NULL;
        *name = "rope_parameters";
        return ATTN_OK;
    }
    if (json_is_object(scaling) && json_is_object(params) && arch_config_rope_kind(params) != NULL &&
        (arch_config_rope_kind(scaling) == NULL ||
         strcmp(arch_config_rope_kind(scaling), arch_config_rope_kind(params)) != 0))
        return attn_fail(err, ATTN_EPARSE,
                         "%s: \"rope_scaling\" (%s) and \"rope_parameters\" (%s) disagree", path,
                         arch_config_rope_kind(scaling) != NULL ? arch_config_rope_kind(scaling)
                                                                : "no rope_type",
                         arch_config_rope_kind(params));
    *sc = scaling;
    return ATTN_OK;
}

enum attn_status
arch_config_rope(json_t *sc, const char *path, const char *name, int max_positions,
                  struct decoder_rope_scaling *r, struct attn_error *err)
{
    const char *kind = arch_config_rope_kind(sc);

    memset(r, 0, sizeof *r);
    if (kind == NULL || strcmp(kind, "default") == 0)
        return ATTN_OK;
    if (strcmp(kind, "llama3") == 0)
        return rope_llama3(sc, path, name, r, err);
    if (strcmp(kind, "yarn") == 0)
        return rope_yarn(sc, path, name, max_positions, r, err);
    if (strcmp(kind, "linear") == 0) {
        r->linear = true;
        r->factor = arch_config_number(sc, path, "factor", NAN, ARCH_BOUND_STRETCH, err);
        if (isnan(r->factor))
            return json_object_get(sc, "factor") == NULL
                       ? attn_fail(err, ATTN_EPARSE, "%s: \"%s\" of type linear has no factor",
                                   path, name)
                       : ATTN_EPARSE;
        return ATTN_OK;
    }
    return attn_fail(err, ATTN_EPARSE,
                     "%s: \"%s\" of type %s is not supported yet; supported: default, llama3, "
                     "linear, yarn",
                     path, name, kind);
}

enum attn_status
arch_config_sizes(json_t *root, const char *path, int head_dim, struct decoder_config *c,
                  struct attn_error *err)
{
    json_t *hd = json_object_get(root, "head_dim");

    if ((c->d_model = jsonfile_int(root, path, "hidden_size", NULL, 1, err)) < 0 ||
        (c->d_mlp = jsonfile_int(root, path, "intermediate_size", NULL, 1, err)) < 0 ||
        (c->n_layer = jsonfile_int(root, path, "num_hidden_layers", NULL, 1, err)) < 0 ||
        (c->n_head = jsonfile_int(root, path, "num_attention_heads", NULL, 1, err)) < 0 ||
        (c->vocab_size = jsonfile_int(root, path, "vocab_size", NULL, 1, err)) < 0 ||
        (c->n_ctx = jsonfile_int(root, path, "max_position_embeddings", NULL, 1, err)) < 0)
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
    c->head_dim = head_dim;
    if (hd != NULL && !json_is_null(hd) &&
        (c->head_dim = jsonfile_int(root, path, "head_dim", NULL, 2, err)) < 0)
        return ATTN_EPARSE;
    if (c->head_dim == 0) {
        if (c->d_model % c->n_head != 0)
            return attn_fail(err, ATTN_EPARSE,
                             "%s: hidden_size %d is not a multiple of num_attention_heads %d, and "
                             "no head_dim is given",
                             path, c->d_model, c->n_head);
        c->head_dim = c->d_model / c->n_head;
    }
    if (c->head_dim % 2 != 0 || c->head_dim > DECODER_HEAD_DIM_MAX)
        return attn_fail(err, ATTN_EPARSE,
                         "%s: head_dim %d: RoPE turns pairs of an even head of at most %d", path,
                         c->head_dim, DECODER_HEAD_DIM_MAX);
    return ATTN_OK;
}


int
arch_config_bos(json_t *root, int vocab_size)
{
    json_t *bos = json_object_get(root, "bos_token_id");

    return json_is_integer(bos) && json_integer_value(bos) >= 0 &&
                   json_integer_value(bos) < vocab_size
               ? (int)json_integer_value(bos)
               : -1;
}

/*
 * transformers 5's rope_parameters by kind of layer: the full layers' theta
 * and stretch, the sliding layers' theta (unstretched, as both families
 * turn them).
 */
static enum attn_status
rope_by_kind(struct decoder_config *c, json_t *params, const char *path, struct attn_error *err)
{
    json_t *full = json_object_get(params, "full_attention");
    json_t *sliding = json_object_get(params, "sliding_attention");

    if ((full != NULL && !json_is_object(full)) || (sliding != NULL && !json_is_object(sliding)))
        return attn_fail(err, ATTN_EPARSE,
                         "%s: \"rope_parameters\"' full_attention and sliding_attention are not "
                         "objects",
                         path);
    if (full != NULL) {
        c->rope_theta = arch_config_number(full, path, "rope_theta", c->rope_theta, ARCH_BOUND_ROPE_BASE, err);
        if (isnan(c->rope_theta) ||
            arch_config_rope(full, path, "rope_parameters.full_attention", c->n_ctx,
                              &c->rope_scaling, err) != ATTN_OK)
            return ATTN_EPARSE;
    }
    if (sliding != NULL) {
        const char *kind = arch_config_rope_kind(sliding);
        if (kind != NULL && strcmp(kind, "default") != 0)
            return attn_fail(err, ATTN_EPARSE,
                             "%s: \"rope_parameters.sliding_attention\" of type %s: attnscope "
                             "turns sliding layers unstretched (default)",
                             path, kind);
        c->rope_local_theta =
            arch_config_number(sliding, path, "rope_theta", c->rope_local_theta, ARCH_BOUND_ROPE_BASE, err);
        if (isnan(c->rope_local_theta))
            return ATTN_EPARSE;
    }
    return ATTN_OK;
}

enum attn_status
arch_config_rope_read(json_t *root, const char *path, bool local_key, struct decoder_config *c,
                      struct attn_error *err)
{
    json_t *params = json_object_get(root, "rope_parameters");
    json_t *scaling = json_object_get(root, "rope_scaling");
    json_t *sc;
    const char *name;

    /* The bases: rope_theta (or inside rope_parameters), and the sliding layers' own. */
    c->rope_theta = arch_config_number(json_is_object(params) &&
                                               json_object_get(params, "rope_theta") != NULL
                                           ? params
                                           : root,
                                       path, "rope_theta", c->rope_theta, ARCH_BOUND_ROPE_BASE,
                                       err);
    c->rope_local_theta = local_key ? arch_config_number(root, path, "rope_local_base_freq",
                                                         10000.0, ARCH_BOUND_ROPE_BASE, err)
                                    : c->rope_theta;
    if (isnan(c->rope_theta) || isnan(c->rope_local_theta))
        return ATTN_EPARSE;
    if (params != NULL && !json_is_null(params) && !json_is_object(params))
        return attn_fail(err, ATTN_EPARSE, "%s: \"rope_parameters\" is not an object or null",
                         path);
    if (json_is_object(params) && (json_object_get(params, "full_attention") != NULL ||
                                   json_object_get(params, "sliding_attention") != NULL)) {
        if (scaling != NULL && !json_is_null(scaling))
            return attn_fail(err, ATTN_EPARSE,
                             "%s: both \"rope_scaling\" and \"rope_parameters\" by kind of "
                             "layer: which one holds is not clear",
                             path);
        return rope_by_kind(c, params, path, err);
    }
    /* The stretch: rope_scaling or rope_parameters, the one choice with its refusals. */
    if (arch_config_rope_pick(root, path, &sc, &name, err) != ATTN_OK)
        return err->status;
    if (sc == NULL || json_is_null(sc))
        return ATTN_OK;
    if (!json_is_object(sc))
        return attn_fail(err, ATTN_EPARSE, "%s: \"%s\" is not an object or null", path, name);
    /* (rope_parameters may hold rope_theta alone: the default rotation) */
    if (arch_config_rope_kind(sc) == NULL && sc != params)
        return attn_fail(err, ATTN_EPARSE, "%s: \"rope_scaling\" has no \"rope_type\"", path);
    return arch_config_rope(sc, path, name, c->n_ctx, &c->rope_scaling, err);
}

enum attn_status
arch_config_refuse_partial(json_t *root, const char *path, struct attn_error *err)
{
    const double partial =
        arch_config_number(root, path, "partial_rotary_factor", 1.0, ARCH_BOUND_FRACTION, err);

    if (isnan(partial))
        return ATTN_EPARSE;
    if (partial != 1.0)
        return attn_fail(err, ATTN_EPARSE,
                         "%s: \"partial_rotary_factor\" is %g: rotating part of each head is not "
                         "supported yet",
                         path, partial);
    return ATTN_OK;
}

/*
 * A mixture of experts under its architecture's keys (k): how many experts
 * and how wide, num_experts_per_tok, whether the chosen weights are divided
 * by their sum, and which layers are sparse: every one, or (Qwen3MoeConfig)
 * layer i when it is not in mlp_only_layers and (i + 1) is a multiple of
 * decoder_sparse_step (1 unless given), as Qwen3MoeDecoderLayer chooses.
 */
enum attn_status
arch_config_experts(const struct arch_moe_keys *k, struct decoder_config *c, json_t *root, const char *path,
        struct attn_error *err)
{
    json_t *dense = k->dense_layers ? json_object_get(root, "mlp_only_layers") : NULL;
    int step = 1, flag;

    /* (0 experts is no mixture: its layers would be read for an MLP the file never had) */
    if (json_is_integer(json_object_get(root, k->count)) &&
        json_integer_value(json_object_get(root, k->count)) == 0)
        return attn_fail(err, ATTN_EPARSE,
                         "%s: \"%s\" is 0: a mixture of experts needs 1 expert or more", path,
                         k->count);
    if ((c->moe.n_experts = jsonfile_int(root, path, k->count, NULL, 1, err)) < 0 ||
        (c->moe.n_experts_used = jsonfile_int(root, path, "num_experts_per_tok", NULL, 1, err)) < 0 ||
        (c->moe.d_expert = jsonfile_int(root, path, k->width, NULL, 1, err)) < 0)
        return ATTN_EPARSE;
    if (k->dense_layers && json_object_get(root, "decoder_sparse_step") != NULL &&
        (step = jsonfile_int(root, path, "decoder_sparse_step", NULL, 1, err)) < 0)
        return ATTN_EPARSE;
    if ((flag = k->norm != NULL ? jsonfile_bool(root, path, k->norm, k->norm_default, err)
                                : (int)k->norm_default) < 0)
        return ATTN_EPARSE;
    c->moe.norm_topk = flag;
    if (c->moe.n_experts > 0 && c->moe.n_experts_used > c->moe.n_experts)
        return attn_fail(err, ATTN_EPARSE,
                         "%s: \"num_experts_per_tok\" is %d, more than the %d experts", path,
                         c->moe.n_experts_used, c->moe.n_experts);
    if (c->n_layer > DECODER_LAYERS_SLIDING_MAX)
        return attn_fail(err, ATTN_EPARSE, "%s: %d layers: attnscope keeps the kinds of at most %d",
                         path, c->n_layer, DECODER_LAYERS_SLIDING_MAX);
    if (dense != NULL && !json_is_null(dense) && !json_is_array(dense))
        return attn_fail(err, ATTN_EPARSE, "%s: \"mlp_only_layers\" is not a list", path);
    for (int l = 0; l < c->n_layer; l++)
        c->moe.sparse[l] = c->moe.n_experts > 0 && (l + 1) % step == 0;
    for (size_t i = 0; json_is_array(dense) && i < json_array_size(dense); i++) {
        json_t *v = json_array_get(dense, i);
        if (!json_is_integer(v) || json_integer_value(v) < 0 ||
            json_integer_value(v) >= c->n_layer)
            return attn_fail(err, ATTN_EPARSE,
                             "%s: \"mlp_only_layers\"[%zu] is not a layer of 0 to %d", path, i,
                             c->n_layer - 1);
        c->moe.sparse[json_integer_value(v)] = false;
    }
    if (k->shared != NULL &&
        (c->moe.d_shared = jsonfile_int(root, path, k->shared, NULL, 1, err)) < 0)
        return ATTN_EPARSE;
    if (k->limit != NULL) { /* gpt-oss's clamped SwiGLU */
        c->moe.swiglu_limit = arch_config_number(root, path, k->limit, k->limit_default,
                                             ARCH_BOUND_ROPE_TUNING, err);
        c->moe.swiglu_alpha = arch_config_number(root, path, "swiglu_alpha", 1.702,
                                             ARCH_BOUND_ROPE_TUNING, err);
        if (isnan(c->moe.swiglu_limit) || isnan(c->moe.swiglu_alpha))
            return ATTN_EPARSE;
    }
    /* (OLMoE's: its queries, keys and values clamped after QK-norm, a step not computed yet) */
    if (json_object_get(root, "clip_qkv") != NULL && !json_is_null(json_object_get(root, "clip_qkv")))
        return attn_fail(err, ATTN_EPARSE,
                         "%s: \"clip_qkv\" is set: clamping the queries, keys and values is not "
                         "supported yet",
                         path);
    return ATTN_OK;
}
