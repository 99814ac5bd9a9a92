/*
 * architecture.c: finding a model's architecture and reading its weights
 * by one walk over the architecture's name table (see architecture.h).
 */
#include "config.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/architectures/architecture.h"
#include "attnscope/formats/gguf.h"
#include "attnscope/base/progress.h"
#include "attnscope/files/fileio.h"
#include "attnscope/files/jsonfile.h"

static bool
listed(const char *const *list, const char *name)
{
    for (size_t i = 0; list != NULL && list[i] != NULL; i++)
        if (name != NULL && strcmp(list[i], name) == 0)
            return true;
    return false;
}

const struct architecture *
architecture_of_type(const char *model_type)
{
    for (size_t i = 0; architectures[i] != NULL; i++)
        if (listed(architectures[i]->model_types, model_type) ||
            listed(architectures[i]->classes, model_type))
            return architectures[i];
    return NULL;
}

const struct architecture *
architecture_of_kin(const char *model_type, const struct architecture *kin)
{
    const struct architecture *a = model_type != NULL ? architecture_of_type(model_type) : NULL;

    return a != NULL && a->describe == kin->describe ? a : NULL;
}

void
arch_parts_apply(const struct architecture *a, struct decoder_config *c)
{
    const struct arch_parts *p = &a->parts;

    c->positions = p->positions;
    c->norm = p->norm;
    c->mlp = p->mlp;
    c->block_norms = p->block_norms;
    c->qk_norm = p->qk_norm;
    c->qk_norm_full = p->qk_norm_full;
    c->norm_plus_one = p->norm_plus_one;
    c->scale_attn_weights = true;
    c->eps = (float)p->eps;
    c->rope_theta = p->rope_theta;
    c->rope_local_theta = p->rope_theta;
    c->tied = p->tied;
    c->attn_scalar = p->query_scalar;
    c->final_softcap = p->final_softcap;
    c->attn_softcap = p->attn_softcap;
    /* Hugging Face's embed_scale: hidden_size ** 0.5, a float32 tensor. */
    c->embed_scale = p->embed_scaled && c->d_model > 0 ? (float)sqrt((double)c->d_model) : 0.0f;
    if (p->all_biased)
        c->bias.qkv = c->bias.o = c->bias.mlp = true;
    if (p->qkv_biased)
        c->bias.qkv = true;
    c->bias.qkv = c->bias.qkv || p->attention_bias;
    c->bias.o = c->bias.o || p->attention_bias;
    c->sinks = p->sinks;
    c->sliding_rope_full = p->sliding_rope_full;
    if (p->rope_default != NULL)
        c->rope_scaling = *p->rope_default;
    if (p->moe != NULL && p->moe->limit != NULL) {
        c->moe.router_topk_softmax = c->moe.bias_experts = true;
        c->moe.swiglu_limit = p->moe->limit_default;
        c->moe.swiglu_alpha = 1.702;
    }
}

const char *
architecture_types(char *buf, size_t size)
{
    size_t at = 0;

    buf[0] = '\0';
    for (size_t i = 0; architectures[i] != NULL; i++)
        for (size_t t = 0; architectures[i]->model_types[t] != NULL; t++)
            attn_appendf(buf, size, &at, "%s%s", at > 0 ? ", " : "",
                         architectures[i]->model_types[t]);
    return buf;
}

/* The layout of arch whose marker the tensors have, its prefix into prefix; NULL: none. */
static const struct arch_layout_of *
layout_in(const struct tensor_source *src, const struct architecture *arch, char *prefix,
          size_t size)
{
    for (int l = 0; l < arch->layout_count; l++) {
        const struct arch_layout_of *lo = &arch->layouts[l];
        for (size_t p = 0; p < sizeof lo->prefixes / sizeof lo->prefixes[0]; p++) {
            char name[224];
            const char *pre = lo->prefixes[p] != NULL ? lo->prefixes[p] : "";
            if (p > 0 && lo->prefixes[p] == NULL)
                break;
            snprintf(name, sizeof name, "%s%s", pre, lo->marker);
            if (tensors_find(src, name) != NULL) {
                if (prefix != NULL)
                    snprintf(prefix, size, "%s", pre);
                return lo;
            }
        }
    }
    return NULL;
}

/* The first architecture of the table whose layout the tensors at path have; NULL: none. */
static const struct architecture *
claimed_by(const struct tensor_source *src)
{
    for (size_t i = 0; architectures[i] != NULL; i++)
        if (layout_in(src, architectures[i], NULL, 0) != NULL)
            return architectures[i];
    return NULL;
}

/* The type a config names: model_type, else one of its architectures' classes; NULL: neither. */
static const char *
type_in(json_t *root, const struct architecture **arch)
{
    json_t *v = json_object_get(root, "model_type");
    json_t *classes = json_object_get(root, "architectures");

    *arch = NULL;
    if (json_is_string(v)) {
        *arch = architecture_of_type(json_string_value(v));
        return json_string_value(v);
    }
    for (size_t a = 0; json_is_array(classes) && a < json_array_size(classes); a++) {
        json_t *c = json_array_get(classes, a);
        if (json_is_string(c) && (*arch = architecture_of_type(json_string_value(c))) != NULL)
            return json_string_value(c);
    }
    return NULL;
}

/*
 * The architecture of the open weights src: a GGUF file's general.architecture
 * (-1, err set, when none reads it), else the first whose layout's marker
 * the tensors have (NULL when none: the loader then says what it looked for).
 */
static int
architecture_of_tensors(const struct tensor_source *src, const struct architecture **arch,
                        struct attn_error *err)
{
    const struct gguf *g = tensors_gguf(src);
    const char *name;
    char names[160];

    if (g == NULL) {
        *arch = claimed_by(src);
        return 0;
    }
    name = gguf_string(g, "general.architecture");
    /*
     * llama.cpp's name for an architecture: its gguf name, else its own or a
     * config's model_type (gemma3, qwen3); one name for two (llama: Llama, and
     * Mixtral when the file has experts) told apart by ARCH.expert_count.
     */
    if (name != NULL) {
        char key[160];
        int64_t experts = 0;
        snprintf(key, sizeof key, "%s.expert_count", name);
        if (!gguf_int(g, key, &experts))
            experts = 0;
        /* (a second pass without the experts: its reader then refuses them by name) */
        for (int pass = 0; pass < 2; pass++)
            for (size_t i = 0; architectures[i] != NULL; i++) {
                const struct architecture *a = architectures[i];
                const char *gname = a->gguf != NULL ? a->gguf : a->name;
                if ((strcmp(gname, name) == 0 ||
                     (a->gguf == NULL && listed(a->model_types, name))) &&
                    (pass == 1 || (a->parts.moe != NULL) == (experts > 0))) {
                    *arch = a;
                    return 0;
                }
            }
    }
    attn_fail(err, ATTN_EPARSE, "%s: general.architecture %s%s%s is not one attnscope reads yet (%s)",
              g->path, name != NULL ? "'" : "", name != NULL ? name : "missing",
              name != NULL ? "'" : "", architecture_types(names, sizeof names));
    return -1;
}

/*
 * A config.json's quantization_config names how its weights are stored:
 * attnscope reads MXFP4 (gpt-oss's experts as OpenAI ships them) and
 * weights stored whole; any other method (awq, gptq, fp8, bitsandbytes)
 * would be read as numbers it is not, so it is refused by name.
 */
static bool
quantization_refused(json_t *root, const char *path, struct attn_error *err)
{
    static const char *const read[] = { "mxfp4" };
    json_t *q = json_object_get(root, "quantization_config");
    json_t *method = json_object_get(q, "quant_method");
    char shown[64];

    if (q == NULL || json_is_null(q))
        return false;
    if (!json_is_object(q) || !json_is_string(method)) {
        attn_fail(err, ATTN_EPARSE, "%s: quantization_config: give an object with a "
                                    "quant_method (attnscope reads mxfp4)", path);
        return true;
    }
    for (size_t i = 0; i < sizeof read / sizeof read[0]; i++)
        if (strcmp(json_string_value(method), read[i]) == 0)
            return false;
    attn_escape_text(shown, sizeof shown, json_string_value(method));
    attn_fail(err, ATTN_EPARSE,
              "%s: quantization_config's quant_method '%s' is not one attnscope reads (it reads "
              "mxfp4, and weights kept in F32, F16 or BF16): give the model unquantized, or a "
              "GGUF of it",
              path, shown);
    return true;
}

int
architecture_find(const char *dir, const char *weights, const struct architecture **arch,
                  struct attn_error *err)
{
    char path[4200];

    *arch = NULL;
    if (snprintf(path, sizeof path, "%s/config.json", dir) >= (int)sizeof path) {
        attn_fail(err, ATTN_EIO, "%s: the folder's name is too long", dir);
        return -1;
    }
    /*
     * The tensors opened (once) only where they say it: without a config.json,
     * or a GGUF file named beside one (its magic read first: a folder's
     * config.json is not passed over for a safetensors file's header).
     */
    if (fileio_absent(path) || (weights != NULL && gguf_file_is(weights))) {
        struct tensor_source src;
        int rc;
        memset(&src, 0, sizeof src);
        /* (weights that cannot be read are the first thing to say: a damaged GGUF is its own
           problem, not a missing tokenizer's) */
        if (tensors_open(&src, weights != NULL ? weights : dir, err) != ATTN_OK)
            return -1;
        rc = architecture_of_tensors(&src, arch, err);
        tensors_close(&src);
        return rc;
    }
    {
        json_t *root = jsonfile_load(path, JSONFILE_CONFIG_MAX, err);
        const char *type;
        char names[160];
        if (root == NULL)
            return -1;
        type = type_in(root, arch);
        /*
         * A config without a type is GPT-2's (the book's GPT_CONFIG saved as
         * JSON, old files): the registry's first (architectures.c).
         */
        if (type == NULL)
            *arch = architectures[0];
        if (*arch == NULL) {
            attn_fail(err, ATTN_EPARSE, "%s: model_type %s is not supported yet; supported: %s",
                      path, type, architecture_types(names, sizeof names));
            json_decref(root);
            return -1;
        }
        if (quantization_refused(root, path, err)) {
            json_decref(root);
            return -1;
        }
        json_decref(root);
        return 0;
    }
}

/* ---------------------------------------------------------------- the walk */

/* role's norm for layer: its scale, and its shift when it is a LayerNorm. */
static int
read_norm(struct arch_loader *ld, struct decoder_norm_weights *n, enum arch_role role, int layer,
          int width, struct attn_error *err)
{
    char w[160], b[160];

    if (arch_name(ld, role, layer, false, w, sizeof w) == NULL ||
        (n->scale = weights_vector(&ld->w, w, width, err)) == NULL)
        return -1;
    if (ld->w.m->cfg.norm != DECODER_NORM_LAYER)
        return 0;
    return arch_name(ld, role, layer, true, b, sizeof b) == NULL ||
                   (n->shift = weights_vector(&ld->w, b, width, err)) == NULL
               ? -1
               : 0;
}

/*
 * Rows (or, stored in-out, columns) from..from+out of role's matrix of
 * all outputs into l: a linear of in -> out, with its bias when has_bias.
 */
static int
read_linear_part(struct arch_loader *ld, struct decoder_linear *l, enum arch_role role, int layer,
                 int in, int all, int from, int out, bool has_bias, struct attn_error *err)
{
    char w[160], b[160];
    const float *bv = NULL;

    if (arch_name(ld, role, layer, false, w, sizeof w) == NULL) {
        attn_fail(err, ATTN_EPARSE, "%s: %s's names have no tensor for this part", ld->w.m->source,
                  ld->arch->name);
        return -1;
    }
    if (has_bias) {
        if (arch_name(ld, role, layer, true, b, sizeof b) == NULL) {
            attn_fail(err, ATTN_EPARSE, "%s: %s's names in this layout have no bias for %s",
                      ld->w.m->source, ld->arch->name, w);
            return -1;
        }
        if ((bv = weights_vector(&ld->w, b, all, err)) == NULL)
            return -1;
        bv += from;
    }
    if (ld->layout->storage == STORE_OUT_IN) {
        struct weights_matrix wm;
        if (weights_matrix_any(&ld->w, w, all, in, &wm, err) != 0)
            return -1;
        decoder_linear_of(&wm, in, from, out, bv, l);
        return 0;
    }
    {
        const float *f = weights_matrix(&ld->w, w, ld->layout->storage == STORE_ONE_IN_OUT, in,
                                        all, err);
        if (f == NULL)
            return -1;
        *l = (struct decoder_linear){ .w = f + from, .b = bv, .in = in, .out = out, .ld = all };
        return 0;
    }
}

int
arch_read_linear(struct arch_loader *ld, struct decoder_linear *l, enum arch_role role, int layer,
                 int in, int out, bool has_bias, struct attn_error *err)
{
    return read_linear_part(ld, l, role, layer, in, out, 0, out, has_bias, err);
}

/*
 * The rows of l (heads of hd, stored out by in) put back from RoPE's pairs
 * side by side (row 2b + a of a head) to Hugging Face's halves (row
 * a hd/2 + b), its bias too.  The memory is the model's own, read a moment
 * ago.
 */
static int
unpermute_rows(const struct decoder_linear *l, int heads, int hd, struct attn_error *err)
{
    /* A row's bytes (elem 1): float32, bfloat16 or quantized blocks. */
    size_t row;
    const size_t elem = 1;
    unsigned char *w = decoder_linear_rows(l, &row);
    unsigned char *tmp = malloc((size_t)hd * row * elem);

    if (tmp == NULL) {
        attn_fail(err, ATTN_ENOMEM, "out of memory putting back a head's rows");
        return -1;
    }
    for (int h = 0; h < heads; h++) {
        unsigned char *head = w + (size_t)h * (size_t)hd * row * elem;
        memcpy(tmp, head, (size_t)hd * row * elem);
        for (int a = 0; a < 2; a++)
            for (int b = 0; b < hd / 2; b++)
                memcpy(head + ((size_t)a * (size_t)(hd / 2) + (size_t)b) * row * elem,
                       tmp + ((size_t)(2 * b + a)) * row * elem, row * elem);
        if (l->b != NULL) {
            float *bias = (float *)(uintptr_t)l->b + (size_t)h * (size_t)hd;
            float *copy = (float *)(void *)tmp;
            memcpy(copy, bias, (size_t)hd * sizeof *copy);
            for (int a = 0; a < 2; a++)
                for (int b = 0; b < hd / 2; b++)
                    bias[a * (hd / 2) + b] = copy[2 * b + a];
        }
    }
    free(tmp);
    return 0;
}

/* Queries, keys and values: one matrix of the three side by side, or three of their own. */
static int
read_qkv(struct arch_loader *ld, struct decoder_block *b, int i, struct attn_error *err)
{
    const struct decoder_config *c = &ld->w.m->cfg;
    const int C = c->d_model, Q = decoder_layer_q_width(c, i), K = decoder_layer_kv_width(c, i);
    const bool bias = c->bias.qkv;
    char name[160];

    if (decoder_kv_source(c, i) != i) /* (a layer that shares: its queries only) */
        return arch_read_linear(ld, &b->q, ROLE_ATTN_Q, i, C, Q, bias, err) != 0 ? -1 : 0;
    if (arch_name(ld, ROLE_ATTN_QKV, i, false, name, sizeof name) != NULL)
        return read_linear_part(ld, &b->q, ROLE_ATTN_QKV, i, C, Q + 2 * K, 0, Q, bias, err) ||
                       read_linear_part(ld, &b->k, ROLE_ATTN_QKV, i, C, Q + 2 * K, Q, K, bias,
                                        err) ||
                       read_linear_part(ld, &b->v, ROLE_ATTN_QKV, i, C, Q + 2 * K, Q + K, K, bias,
                                        err)
                   ? -1
                   : 0;
    /* (with an output gate, q_proj is each head's query and gate: twice as wide) */
    if (arch_read_linear(ld, &b->q, ROLE_ATTN_Q, i, C, c->attn_gate ? 2 * Q : Q, bias, err) ||
        arch_read_linear(ld, &b->k, ROLE_ATTN_K, i, C, K, bias, err) ||
        arch_read_linear(ld, &b->v, ROLE_ATTN_V, i, C, K, bias, err))
        return -1;
    if (ld->layout->pairs_interleaved)
        return unpermute_rows(&b->q, c->n_head, decoder_layer_head_dim(c, i), err) ||
                       unpermute_rows(&b->k, decoder_layer_kv_heads(c, i),
                                      decoder_layer_head_dim(c, i), err)
                   ? -1
                   : 0;
    return 0;
}

/* QK-norm's scales: a head's width, or (Olmo) the queries' and the keys' whole widths. */
static int
read_qk_norms(struct arch_loader *ld, struct decoder_block *b, int i, struct attn_error *err)
{
    const struct decoder_config *c = &ld->w.m->cfg;
    const int hd = decoder_layer_head_dim(c, i);
    char name[160];

    if (arch_name(ld, ROLE_ATTN_Q_NORM, i, false, name, sizeof name) == NULL ||
        (b->q_norm.scale = weights_vector(&ld->w, name,
                                          c->qk_norm_full ? decoder_q_width(c) : hd, err)) ==
            NULL)
        return -1;
    if (decoder_kv_source(c, i) != i) /* (a layer that shares makes no keys to norm) */
        return 0;
    return arch_name(ld, ROLE_ATTN_K_NORM, i, false, name, sizeof name) == NULL ||
                   (b->k_norm.scale = weights_vector(&ld->w, name,
                                                     c->qk_norm_full ? decoder_kv_width(c) : hd,
                                                     err)) == NULL
               ? -1
               : 0;
}

/* Layer i: its norms, its attention, its MLP, each the parts the description names. */
static int
read_layer(struct arch_loader *ld, int i, struct attn_error *err)
{
    const struct decoder_config *c = &ld->w.m->cfg;
    const int C = c->d_model, F = decoder_layer_mlp(c, i), Q = decoder_layer_q_width(c, i);
    const bool pre = decoder_pre_norms(c), post = decoder_post_norms(c);
    struct decoder_block *b = &ld->w.m->blocks[i];

    if (pre && read_norm(ld, &b->norm1, ROLE_ATTN_NORM, i, C, err) != 0)
        return -1;
    if (!decoder_attends(c, i)) { /* (a mixer of its own: its architecture reads its tensors) */
        if (ld->arch->read_mixer == NULL)
            return attn_fail(err, ATTN_EPARSE, "%s: layer %d's mixer has no reader in %s",
                             ld->w.m->source, i, ld->arch->name),
                   -1;
        if (ld->arch->read_mixer(ld, b, i, err) != 0)
            return -1;
    } else if (read_qkv(ld, b, i, err) != 0 ||
               arch_read_linear(ld, &b->o, ROLE_ATTN_OUT, i, Q, C, c->bias.o, err) != 0 ||
               (c->qk_norm && read_qk_norms(ld, b, i, err) != 0))
        return -1;
    if ((pre && read_norm(ld, &b->norm2, ROLE_FFN_NORM, i, C, err) != 0) ||
        (post && (read_norm(ld, &b->attn_post, ROLE_ATTN_POST_NORM, i, C, err) != 0 ||
                  read_norm(ld, &b->mlp_post, ROLE_FFN_POST_NORM, i, C, err) != 0)))
        return -1;
    if (c->sinks) {
        char name[160];
        if (arch_name(ld, ROLE_ATTN_SINKS, i, false, name, sizeof name) == NULL ||
            (b->sinks = weights_vector(&ld->w, name, c->n_head, err)) == NULL)
            return -1;
    }
    if (decoder_sparse(c, i))
        return arch_read_experts(ld, b, i, err);
    if (decoder_gated(c) && arch_read_linear(ld, &b->gate, ROLE_FFN_GATE, i, C, F, c->bias.mlp, err) != 0)
        return -1;
    return arch_read_linear(ld, &b->up, ROLE_FFN_UP, i, C, F, c->bias.mlp, err) != 0 ||
                   arch_read_linear(ld, &b->down, ROLE_FFN_DOWN, i, F, C, c->bias.mlp, err) != 0
               ? -1
               : 0;
}

/* The token embedding or the head (vocab x width) as the model keeps it (weights_matrix_any). */
static int
read_embedding(struct arch_loader *ld, const char *name, const float **f, const uint16_t **h,
               const unsigned char **q, int *qtype, struct attn_error *err)
{
    const struct decoder_config *c = &ld->w.m->cfg;
    struct weights_matrix wm;

    if (weights_matrix_any(&ld->w, name, c->vocab_size, c->d_model, &wm, err) != 0)
        return -1;
    *f = wm.f;
    *h = wm.h;
    *q = wm.q;
    *qtype = wm.qtype;
    return 0;
}

/*
 * The head: tied to the embedding, a classifier's own (fewer rows, with a
 * bias), or its own matrix.  Hugging Face keeps lm_head beside the model's
 * prefix, so the head is read without the layout's.
 */
static int
read_head(struct arch_loader *ld, struct attn_error *err)
{
    struct decoder_model *m = ld->w.m;
    const struct decoder_config *c = &m->cfg;
    char saved[sizeof ld->w.prefix];
    char w[160], b[160];
    int rc = -1;

    m->lm_head = m->tok_embed;
    m->lm_head16 = m->tok_embed16;
    m->lm_headq = m->tok_embedq;
    m->lm_headq_type = m->tok_embedq_type;
    if (c->tied && c->n_classes == 0)
        return 0;
    if (arch_name(ld, ROLE_OUTPUT, 0, false, w, sizeof w) == NULL) {
        attn_fail(err, ATTN_EPARSE, "%s: %s says the head is not tied to the embedding, and these "
                                    "names have no head",
                  m->source, ld->w.sizes_from);
        return -1;
    }
    memcpy(saved, ld->w.prefix, sizeof saved);
    ld->w.prefix[0] = '\0';
    if (weights_find(&ld->w, w) == NULL)
        attn_fail(err, ATTN_EPARSE, "%s: no tensor '%s', which %s%s asks for", m->source, w,
                  ld->w.sizes_from,
                  strcmp(ld->w.sizes_from, "config.json") == 0
                      ? "'s \"tie_word_embeddings\": false"
                      : " (a head not tied to the embedding)");
    else if (c->n_classes > 0)
        rc = (m->lm_head = weights_matrix(&ld->w, w, false, c->n_classes, c->d_model, err)) ==
                         NULL ||
                     arch_name(ld, ROLE_OUTPUT, 0, true, b, sizeof b) == NULL ||
                     (m->head_bias = weights_vector(&ld->w, b, c->n_classes, err)) == NULL
                 ? -1
                 : 0;
    else
        rc = read_embedding(ld, w, &m->lm_head, &m->lm_head16, &m->lm_headq, &m->lm_headq_type, err);
    memcpy(ld->w.prefix, saved, sizeof saved);
    return rc;
}

/* Every tensor the description names: the embeddings, the final norm, each layer, the head. */
static int
read_tensors(struct arch_loader *ld, struct attn_error *err)
{
    struct decoder_model *m = ld->w.m;
    const struct decoder_config *c = &m->cfg;
    char name[160];

    if (arch_name(ld, ROLE_TOKEN_EMBD, 0, false, name, sizeof name) == NULL ||
        read_embedding(ld, name, &m->tok_embed, &m->tok_embed16, &m->tok_embedq, &m->tok_embedq_type, err) != 0)
        return -1;
    switch (c->positions) {
    case DECODER_POSITIONS_LEARNED:
        if (arch_name(ld, ROLE_POS_EMBD, 0, false, name, sizeof name) == NULL ||
            (m->pos_embed = weights_matrix(&ld->w, name, false, c->n_ctx, c->d_model, err)) ==
                NULL)
            return -1;
        break;
    case DECODER_POSITIONS_ROPE:
        break;
    }
    if (read_norm(ld, &m->final_norm, ROLE_OUTPUT_NORM, 0, c->d_model, err) != 0)
        return -1;
    progress_begin("reading the weights", c->n_layer);
    for (int i = 0; i < c->n_layer; i++) {
        if (read_layer(ld, i, err) != 0) {
            progress_end();
            return -1;
        }
        progress_step(i + 1);
    }
    progress_end();
    return read_head(ld, err);
}

/*
 * Before a layer is allocated: the last layer the sizes name is in the
 * file, or the first that is missing is named (a config.json of 16 million
 * layers beside a file of two is "no tensor h.2...", not "out of memory").
 */
static int
check_layers(struct arch_loader *ld, struct attn_error *err)
{
    const struct decoder_model *m = ld->w.m;
    const enum arch_role role = arch_layer_role(ld);
    char name[160];
    int have;

    if (arch_has(ld, role, m->cfg.n_layer - 1))
        return 0;
    have = arch_count_layers(ld);
    arch_name(ld, role, have, false, name, sizeof name);
    attn_fail(err, ATTN_EPARSE, "%s: no tensor '%s%s': %s says %d layers, the file has %d",
              m->source, ld->w.prefix, name, ld->w.sizes_from, m->cfg.n_layer, have);
    return -1;
}

/* The names the architectures read, for a file that has none of them. */
static void
markers(char *buf, size_t size)
{
    size_t at = 0;

    buf[0] = '\0';
    for (size_t i = 0; architectures[i] != NULL; i++)
        for (int l = 0; l < architectures[i]->layout_count; l++)
            attn_appendf(buf, size, &at, "%s%s (%s)", at > 0 ? ", " : "",
                         architectures[i]->layouts[l].marker, architectures[i]->name);
}

/* The tensor that marks arch's GGUF layout, "blk.0.ffn_gate_inp.weight" (or its first's). */
static const char *
gguf_marker(const struct architecture *arch)
{
    for (int l = 0; l < arch->layout_count; l++)
        if (arch->layouts[l].layout == ARCH_GGUF)
            return arch->layouts[l].marker;
    return arch->layouts[0].marker;
}

/* The architecture and layout of the file ld reads; -1 with err set when its names are none. */
static int
choose(struct arch_loader *ld, const struct architecture *arch, struct attn_error *err)
{
    char names[1024];

    if (arch == NULL)
        arch = claimed_by(&ld->w.src);
    if (arch != NULL &&
        (ld->layout = layout_in(&ld->w.src, arch, ld->w.prefix, sizeof ld->w.prefix)) != NULL) {
        ld->arch = arch;
        ld->w.m->names = ld->layout->names;
        arch_name_parts(ld);
        ld->w.keep_bf16 = arch->keep_bf16;
        return 0;
    }
    if (arch != NULL && arch->gguf != NULL && arch->parts.moe != NULL &&
        tensors_gguf(&ld->w.src) != NULL) {
        /* (a name two architectures share, told apart by the count: say which key chose) */
        char key[160];
        int64_t experts = 0;
        snprintf(key, sizeof key, "%s.expert_count", arch->gguf);
        if (gguf_int(tensors_gguf(&ld->w.src), key, &experts) &&
            strcmp(arch->gguf, arch->name) != 0) {
            attn_fail(err, ATTN_EPARSE,
                      "%s: %s is %lld, which makes a %s file %s's, but it has no %s's tensors "
                      "(no %s): remove the key, or give the experts",
                      ld->w.m->source, key, (long long)experts, arch->gguf, arch->title,
                      arch->title, gguf_marker(arch));
            return -1;
        }
    }
    markers(names, sizeof names);
    if (arch != NULL)
        attn_fail(err, ATTN_EPARSE, "%s: not %s's tensor names (it has none of: %s)",
                  ld->w.m->source, arch->name, names);
    else
        attn_fail(err, ATTN_EPARSE, "%s: no architecture's tensor names (it has none of: %s)",
                  ld->w.m->source, names);
    return -1;
}

/*
 * RoPE's frequencies as the numbers made them (a base, a stretch, a
 * GGUF's factors): each finite and positive, or refused.  The numbers each
 * passed their bounds; what they make together must too.
 */
static int
check_frequencies(const struct decoder_model *m, const char *from, struct attn_error *err)
{
    const int half = decoder_rope_dim(&m->cfg) / 2;

    for (int i = 0; m->cfg.positions == DECODER_POSITIONS_ROPE && i < half; i++)
        if ((!(m->rope_freq[i] > 0.0f && isfinite(m->rope_freq[i])) &&
             (m->cfg.lw.rope_angles == 0 || i < m->cfg.lw.rope_angles)) ||
            (m->cfg.sliding_window > 0 &&
             !(m->rope_freq_local[i] > 0.0f && isfinite(m->rope_freq_local[i])))) {
            attn_fail(err, ATTN_EPARSE,
                      "%s: RoPE's frequency %d is %g (from %s): the base and the stretch make "
                      "no usable angle",
                      m->source, i,
                      (double)(isfinite(m->rope_freq[i]) && m->rope_freq[i] > 0.0f
                                   ? m->rope_freq_local[i]
                                   : m->rope_freq[i]),
                      from);
            return -1;
        }
    return 0;
}

enum attn_status
architecture_read(struct decoder_model *m, const struct architecture *arch, const char *dir,
                  const struct arch_options *o, struct attn_error *err)
{
    static const struct arch_options none = { NULL, 0, false };
    struct arch_loader ld;
    enum attn_status rc = ATTN_EPARSE;

    if (o == NULL)
        o = &none;
    memset(m, 0, sizeof *m);
    memset(&ld, 0, sizeof ld);
    m->bos_token = -1;
    if (weights_open(&ld.w, m, o->weights != NULL ? o->weights : dir, err) != ATTN_OK)
        return err->status;
    if (choose(&ld, arch, err) != 0)
        goto fail;
    ld.w.keep_quant = ld.layout->layout == ARCH_GGUF && !o->widen; /* (only GGUF's are quantized) */
    if (ld.arch->describe(&ld, dir, o, err) != ATTN_OK ||
        decoder_config_check(&m->cfg, m->source, ld.w.sizes_from, err) != ATTN_OK ||
        check_layers(&ld, err) != 0)
        goto fail;
    snprintf(m->architecture, sizeof m->architecture, "%s", ld.arch->name);
    snprintf(m->title, sizeof m->title, "%s", ld.arch->title);
    if (m->cfg.positions == DECODER_POSITIONS_ROPE) {
        decoder_rope_frequencies(&m->cfg, m->rope_freq);
        decoder_rope_frequencies_local(&m->cfg, m->rope_freq_local);
    }
    if ((rc = weights_reserve(&ld.w, err)) != ATTN_OK)
        goto fail;
    rc = ATTN_EPARSE;
    if (read_tensors(&ld, err) != 0 ||
        (ld.layout->layout == ARCH_GGUF && gguf_rope_factors(&ld, err) != ATTN_OK) ||
        check_frequencies(m, ld.w.sizes_from, err) != 0)
        goto fail;
    /* Every weight is in memory of the model's own: the files close. */
    weights_close(&ld.w);
    return ATTN_OK;
fail:
    rc = err->status != ATTN_OK ? err->status : rc;
    weights_close(&ld.w);
    decoder_destroy(m);
    return rc;
}

enum attn_status
architecture_load(struct decoder_model *m, const char *dir, const struct arch_options *o,
                  struct attn_error *err)
{
    const struct architecture *arch;

    memset(m, 0, sizeof *m); /* (a model of zeros when the weights cannot be read) */
    m->bos_token = -1;
    if (architecture_find(dir, o != NULL ? o->weights : NULL, &arch, err) != 0)
        return err->status;
    return architecture_read(m, arch, dir, o, err);
}
