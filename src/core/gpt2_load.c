/* gpt2_load.c: config.json and the weights of a GPT-2 folder (see gpt2.h). */
#include "config.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attnscope/gpt2.h"

/* The integer field name of config.json, at least min; -1 with err set. */
static int
config_int(json_t *root, const char *path, const char *name, const char *alias, int min,
           struct attn_error *err)
{
    json_t *v = json_object_get(root, name);

    if (v == NULL && alias != NULL)
        v = json_object_get(root, alias);
    if (v == NULL) {
        attn_fail(err, ATTN_EPARSE, "%s: \"%s\" is missing", path, name);
        return -1;
    }
    if (!json_is_integer(v) || json_integer_value(v) < min || json_integer_value(v) > 1 << 24) {
        attn_fail(err, ATTN_EPARSE, "%s: \"%s\" is not a whole number from %d to %d", path, name,
                  min, 1 << 24);
        return -1;
    }
    return (int)json_integer_value(v);
}

enum attn_status
gpt2_config_load(struct gpt2_config *c, const char *path, struct attn_error *err)
{
    json_error_t jerr;
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
    json_t *v;
    enum attn_status rc = ATTN_EPARSE;

    memset(c, 0, sizeof *c);
    if (root == NULL) {
        if (jerr.line > 0)
            return attn_fail(err, ATTN_EPARSE, "%s:%d:%d: not JSON: %s", path, jerr.line,
                             jerr.column, jerr.text);
        return attn_fail(err, ATTN_EIO, "%s: %s", path, jerr.text);
    }
    if (!json_is_object(root)) {
        attn_fail(err, ATTN_EPARSE, "%s: not a JSON object", path);
        goto done;
    }
    if ((c->n_layer = config_int(root, path, "n_layer", NULL, 1, err)) < 0 ||
        (c->n_head = config_int(root, path, "n_head", NULL, 1, err)) < 0 ||
        (c->n_embd = config_int(root, path, "n_embd", NULL, 1, err)) < 0 ||
        (c->n_positions = config_int(root, path, "n_positions", "n_ctx", 1, err)) < 0 ||
        (c->vocab_size = config_int(root, path, "vocab_size", NULL, 1, err)) < 0)
        goto done;
    if (c->n_embd % c->n_head != 0) {
        attn_fail(err, ATTN_EPARSE, "%s: n_embd %d is not a multiple of n_head %d", path, c->n_embd,
                  c->n_head);
        goto done;
    }
    v = json_object_get(root, "n_inner");
    c->n_inner = 4 * c->n_embd;
    if (v != NULL && !json_is_null(v) &&
        (c->n_inner = config_int(root, path, "n_inner", NULL, 1, err)) < 0)
        goto done;
    v = json_object_get(root, "layer_norm_epsilon");
    c->eps = 1e-5f;
    if (v != NULL) {
        /* Positive as the float it is used as (1e-51 is 0 there). */
        if (!json_is_number(v) || !((float)json_number_value(v) > 0.0f) ||
            json_number_value(v) > 1) {
            attn_fail(err, ATTN_EPARSE, "%s: \"layer_norm_epsilon\" is not a small positive number",
                      path);
            goto done;
        }
        c->eps = (float)json_number_value(v);
    }
    v = json_object_get(root, "activation_function");
    if (v != NULL && (!json_is_string(v) || (strcmp(json_string_value(v), "gelu_new") != 0 &&
                                             strcmp(json_string_value(v), "gelu_pytorch_tanh") != 0))) {
        attn_fail(err, ATTN_EPARSE,
                  "%s: \"activation_function\" is %s; attnscope computes GPT-2's gelu_new (the tanh "
                  "approximation)",
                  path, json_is_string(v) ? json_string_value(v) : "not a string");
        goto done;
    }
    rc = ATTN_OK;
done:
    json_decref(root);
    return rc;
}

/* ------------------------------------------------------------ the tensors */

/* The tensor called name in any shard (and its shard), or NULL. */
static const struct st_tensor *
find(const struct gpt2_model *m, const char *name, const struct safetensors **in)
{
    for (int i = 0; i < m->shard_count; i++) {
        const struct st_tensor *t = safetensors_find(&m->shards[i], name);
        if (t != NULL) {
            if (in != NULL)
                *in = &m->shards[i];
            return t;
        }
    }
    return NULL;
}

/* The tensor name (after the layout's prefix) as float32 of the given shape; NULL with err set. */
static const float *
tensor(struct gpt2_model *m, const char *name, int ndim, int d0, int d1, struct attn_error *err)
{
    char full[128];
    const struct st_tensor *t;
    const struct safetensors *st = NULL;
    float *copy;
    const float *v;

    snprintf(full, sizeof full, "%s%s", m->prefix, name);
    t = find(m, full, &st);
    if (t == NULL) {
        attn_fail(err, ATTN_EPARSE, "%s: no tensor '%s'", m->weights_path, full);
        return NULL;
    }
    if (t->ndim != ndim || t->shape[0] != d0 || (ndim == 2 && t->shape[1] != d1)) {
        char shape[64];
        int at = 0;
        for (int d = 0; d < t->ndim && at < (int)sizeof shape - 24; d++)
            at += snprintf(shape + at, sizeof shape - (size_t)at, "%s%lld", d ? ", " : "",
                           (long long)t->shape[d]);
        if (ndim == 2)
            attn_fail(err, ATTN_ESHAPE, "%s: tensor '%s' is (%s); config.json makes it (%d, %d)",
                      st->path, full, shape, d0, d1);
        else
            attn_fail(err, ATTN_ESHAPE, "%s: tensor '%s' is (%s); config.json makes it (%d)",
                      st->path, full, shape, d0);
        return NULL;
    }
    v = safetensors_f32(st, t, &copy, err);
    if (v != NULL && copy != NULL) {
        float **more = realloc(m->owned, ((size_t)m->owned_count + 1) * sizeof *more);
        if (more == NULL) {
            free(copy);
            attn_fail(err, ATTN_ENOMEM, "%s: out of memory", st->path);
            return NULL;
        }
        m->owned = more;
        m->owned[m->owned_count++] = copy;
    }
    return v;
}

/*
 * A linear layer NAME.weight and NAME.bias, in -> out: stored (in, out_all)
 * and used from column col (Hugging Face's Conv1D; c_attn holds Q, K and V
 * side by side), or stored (out, in) when out_in (nn.Linear, the book's).
 */
static int
load_linear(struct gpt2_model *m, struct gpt2_linear *l, const char *name, int in, int out,
            bool out_in, int out_all, int col, struct attn_error *err)
{
    char w[96];
    char b[96];
    const float *wv;
    const float *bv;

    snprintf(w, sizeof w, "%s.weight", name);
    snprintf(b, sizeof b, "%s.bias", name);
    wv = out_in ? tensor(m, w, 2, out, in, err) : tensor(m, w, 2, in, out_all, err);
    if (wv == NULL || (bv = tensor(m, b, 1, out_in ? out : out_all, 0, err)) == NULL)
        return -1;
    *l = out_in ? (struct gpt2_linear){ wv, bv, in, out, in, true }
                : (struct gpt2_linear){ wv + col, bv + col, in, out, out_all, false };
    return 0;
}

/* Hugging Face's Conv1D, (in, out_all), its columns from col. */
static int
conv1d(struct gpt2_model *m, struct gpt2_linear *l, const char *name, int in, int out_all, int col,
       int out, struct attn_error *err)
{
    return load_linear(m, l, name, in, out, false, out_all, col, err);
}

/* nn.Linear, (out, in): the book's GPTModel. */
static int
linear(struct gpt2_model *m, struct gpt2_linear *l, const char *name, int in, int out,
       struct attn_error *err)
{
    return load_linear(m, l, name, in, out, true, out, 0, err);
}

static int
load_block_hf(struct gpt2_model *m, int i, struct attn_error *err)
{
    const int C = m->cfg.n_embd;
    struct gpt2_block *b = &m->blocks[i];
    char n[96];

#define NAME(s) (snprintf(n, sizeof n, "h.%d.%s", i, (s)), n)
    if ((b->ln1_g = tensor(m, NAME("ln_1.weight"), 1, C, 0, err)) == NULL ||
        (b->ln1_b = tensor(m, NAME("ln_1.bias"), 1, C, 0, err)) == NULL ||
        conv1d(m, &b->q, NAME("attn.c_attn"), C, 3 * C, 0, C, err) != 0 ||
        conv1d(m, &b->k, NAME("attn.c_attn"), C, 3 * C, C, C, err) != 0 ||
        conv1d(m, &b->v, NAME("attn.c_attn"), C, 3 * C, 2 * C, C, err) != 0 ||
        conv1d(m, &b->attn_out, NAME("attn.c_proj"), C, C, 0, C, err) != 0 ||
        (b->ln2_g = tensor(m, NAME("ln_2.weight"), 1, C, 0, err)) == NULL ||
        (b->ln2_b = tensor(m, NAME("ln_2.bias"), 1, C, 0, err)) == NULL ||
        conv1d(m, &b->fc, NAME("mlp.c_fc"), C, m->cfg.n_inner, 0, m->cfg.n_inner, err) != 0 ||
        conv1d(m, &b->fc_out, NAME("mlp.c_proj"), m->cfg.n_inner, C, 0, C, err) != 0)
        return -1;
#undef NAME
    return 0;
}

static int
load_block_book(struct gpt2_model *m, int i, struct attn_error *err)
{
    const int C = m->cfg.n_embd;
    struct gpt2_block *b = &m->blocks[i];
    char n[96];

#define NAME(s) (snprintf(n, sizeof n, "trf_blocks.%d.%s", i, (s)), n)
    if ((b->ln1_g = tensor(m, NAME("norm1.scale"), 1, C, 0, err)) == NULL ||
        (b->ln1_b = tensor(m, NAME("norm1.shift"), 1, C, 0, err)) == NULL ||
        linear(m, &b->q, NAME("att.W_query"), C, C, err) != 0 ||
        linear(m, &b->k, NAME("att.W_key"), C, C, err) != 0 ||
        linear(m, &b->v, NAME("att.W_value"), C, C, err) != 0 ||
        linear(m, &b->attn_out, NAME("att.out_proj"), C, C, err) != 0 ||
        (b->ln2_g = tensor(m, NAME("norm2.scale"), 1, C, 0, err)) == NULL ||
        (b->ln2_b = tensor(m, NAME("norm2.shift"), 1, C, 0, err)) == NULL ||
        linear(m, &b->fc, NAME("ff.layers.0"), C, m->cfg.n_inner, err) != 0 ||
        linear(m, &b->fc_out, NAME("ff.layers.2"), m->cfg.n_inner, C, err) != 0)
        return -1;
#undef NAME
    return 0;
}

/* Which layout the names say, and Hugging Face's prefix; -1 when neither. */
static int
choose_layout(struct gpt2_model *m, struct attn_error *err)
{
    if (find(m, "tok_emb.weight", NULL) != NULL) {
        m->layout = GPT2_LAYOUT_BOOK;
        return 0;
    }
    m->layout = GPT2_LAYOUT_HF;
    if (find(m, "wte.weight", NULL) != NULL)
        return 0;
    if (find(m, "transformer.wte.weight", NULL) != NULL) {
        snprintf(m->prefix, sizeof m->prefix, "transformer.");
        return 0;
    }
    attn_fail(err, ATTN_EPARSE,
              "%s: neither GPT-2's tensor names (wte.weight, h.0.attn.c_attn.weight, ...) nor the "
              "book's GPTModel's (tok_emb.weight, trf_blocks.0.att.W_query.weight, ...)",
              m->weights_path);
    return -1;
}

/*
 * Without model.safetensors, the weights files attnscope does not read:
 * pickled PyTorch files (loading them runs code) and TensorFlow checkpoints.
 * Says which file to get instead; ATTN_OK when there are none of those.
 */
static enum attn_status
refuse_other_formats(const char *dir, struct attn_error *err)
{
    static const char *const others[] = { "pytorch_model.bin", "model.pth", "model.pt",
                                          "tf_model.h5", "model.ckpt.index", "checkpoint" };
    char path[4096];

    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, others[i]);
        if (access(path, F_OK) == 0)
            return attn_fail(err, ATTN_EPARSE,
                             "%s: attnscope reads safetensors, not %s (pickled files run code "
                             "when loaded): get model.safetensors from the model's Hugging Face "
                             "page, or save the weights with safetensors' save_file",
                             path, i < 3 ? "PyTorch's pickle format" : "TensorFlow checkpoints");
    }
    return ATTN_OK;
}

/*
 * The shards a model.safetensors.index.json names in its weight_map (plain
 * file names beside it), each opened once, and every tensor of the map
 * checked to be in the shard it names.
 */
static enum attn_status
open_shards(struct gpt2_model *m, const char *dir, struct attn_error *err)
{
    const char *index = m->weights_path;
    json_error_t jerr;
    json_t *root = json_load_file(index, JSON_REJECT_DUPLICATES, &jerr);
    json_t *map;
    const char *name;
    json_t *file;
    enum attn_status rc = ATTN_EPARSE;

    if (root == NULL) {
        if (jerr.line > 0)
            return attn_fail(err, ATTN_EPARSE, "%s:%d:%d: not JSON: %s", index, jerr.line,
                             jerr.column, jerr.text);
        return attn_fail(err, ATTN_EIO, "%s: %s", index, jerr.text);
    }
    map = json_object_get(root, "weight_map");
    if (!json_is_object(map) || json_object_size(map) == 0 || json_object_size(map) > 100000) {
        attn_fail(err, ATTN_EPARSE, "%s: no \"weight_map\" of tensor names and their files",
                  index);
        goto done;
    }
    m->shards = calloc(json_object_size(map), sizeof *m->shards);
    if (m->shards == NULL) {
        rc = attn_fail(err, ATTN_ENOMEM, "%s: out of memory", index);
        goto done;
    }
    json_object_foreach(map, name, file)
    {
        const char *f = json_is_string(file) ? json_string_value(file) : NULL;
        char path[4096];
        const struct safetensors *in = NULL;
        int shard = -1;
        if (f == NULL || f[0] == '\0' || f[0] == '.' || strchr(f, '/') != NULL) {
            attn_fail(err, ATTN_EPARSE, "%s: tensor '%s' is mapped to %s, not a file beside it",
                      index, name, f != NULL ? f : "something that is not a file name");
            goto done;
        }
        snprintf(path, sizeof path, "%s/%s", dir, f);
        for (int i = 0; i < m->shard_count && shard < 0; i++)
            if (strcmp(m->shards[i].path, path) == 0)
                shard = i;
        if (shard < 0) {
            if ((rc = safetensors_open(&m->shards[m->shard_count], path, err)) != ATTN_OK)
                goto done;
            shard = m->shard_count++;
            rc = ATTN_EPARSE;
        }
        if (find(m, name, &in) == NULL || in != &m->shards[shard]) {
            attn_fail(err, ATTN_EPARSE, "%s: tensor '%s' is mapped to %s, which lacks it", index,
                      name, f);
            goto done;
        }
    }
    rc = ATTN_OK;
done:
    json_decref(root);
    return rc;
}

enum attn_status
gpt2_load(struct gpt2_model *m, const char *dir, struct attn_error *err)
{
    char path[4096];
    enum attn_status rc;

    memset(m, 0, sizeof *m);
    snprintf(path, sizeof path, "%s/config.json", dir);
    if ((rc = gpt2_config_load(&m->cfg, path, err)) != ATTN_OK)
        return rc;
    snprintf(m->weights_path, sizeof m->weights_path, "%s/model.safetensors", dir);
    if (access(m->weights_path, F_OK) != 0) {
        snprintf(path, sizeof path, "%s/model.safetensors.index.json", dir);
        if (access(path, F_OK) == 0) {
            snprintf(m->weights_path, sizeof m->weights_path, "%s", path);
            rc = open_shards(m, dir, err);
            if (rc != ATTN_OK) {
                gpt2_destroy(m);
                return rc;
            }
        } else if (refuse_other_formats(dir, err) != ATTN_OK) {
            return err->status;
        }
    }
    if (m->shard_count == 0) {
        m->shards = calloc(1, sizeof *m->shards);
        if (m->shards == NULL)
            return attn_fail(err, ATTN_ENOMEM, "out of memory");
        if ((rc = safetensors_open(&m->shards[0], m->weights_path, err)) != ATTN_OK) {
            gpt2_destroy(m);
            return rc;
        }
        m->shard_count = 1;
    }
    snprintf(path, sizeof path, "%s", m->weights_path);
    rc = ATTN_EPARSE;
    if (choose_layout(m, err) != 0)
        goto fail;
    m->blocks = calloc((size_t)m->cfg.n_layer, sizeof *m->blocks);
    if (m->blocks == NULL) {
        rc = attn_fail(err, ATTN_ENOMEM, "%s: out of memory", path);
        goto fail;
    }
    if (m->layout == GPT2_LAYOUT_HF) {
        const struct st_tensor *head;
        if ((m->wte = tensor(m, "wte.weight", 2, m->cfg.vocab_size, m->cfg.n_embd, err)) == NULL ||
            (m->wpe = tensor(m, "wpe.weight", 2, m->cfg.n_positions, m->cfg.n_embd, err)) == NULL ||
            (m->lnf_g = tensor(m, "ln_f.weight", 1, m->cfg.n_embd, 0, err)) == NULL ||
            (m->lnf_b = tensor(m, "ln_f.bias", 1, m->cfg.n_embd, 0, err)) == NULL)
            goto fail;
        for (int i = 0; i < m->cfg.n_layer; i++)
            if (load_block_hf(m, i, err) != 0)
                goto fail;
        /* GPT-2 ties its output to the token embedding; a saved lm_head.weight is that copy. */
        head = find(m, "lm_head.weight", NULL);
        m->lm_head = m->wte;
        if (head != NULL) {
            char saved[16];
            memcpy(saved, m->prefix, sizeof saved);
            m->prefix[0] = '\0';
            m->lm_head = tensor(m, "lm_head.weight", 2, m->cfg.vocab_size, m->cfg.n_embd, err);
            memcpy(m->prefix, saved, sizeof saved);
            if (m->lm_head == NULL)
                goto fail;
        }
    } else {
        if ((m->wte = tensor(m, "tok_emb.weight", 2, m->cfg.vocab_size, m->cfg.n_embd, err)) == NULL ||
            (m->wpe = tensor(m, "pos_emb.weight", 2, m->cfg.n_positions, m->cfg.n_embd, err)) == NULL ||
            (m->lnf_g = tensor(m, "final_norm.scale", 1, m->cfg.n_embd, 0, err)) == NULL ||
            (m->lnf_b = tensor(m, "final_norm.shift", 1, m->cfg.n_embd, 0, err)) == NULL ||
            (m->lm_head = tensor(m, "out_head.weight", 2, m->cfg.vocab_size, m->cfg.n_embd, err)) ==
                NULL)
            goto fail;
        for (int i = 0; i < m->cfg.n_layer; i++)
            if (load_block_book(m, i, err) != 0)
                goto fail;
    }
    return ATTN_OK;
fail:
    rc = err->status != ATTN_OK ? err->status : rc;
    gpt2_destroy(m);
    return rc;
}

void
gpt2_destroy(struct gpt2_model *m)
{
    for (int i = 0; i < m->owned_count; i++)
        free(m->owned[i]);
    free(m->owned);
    free(m->blocks);
    for (int i = 0; i < m->shard_count; i++)
        safetensors_close(&m->shards[i]);
    free(m->shards);
    memset(m, 0, sizeof *m);
}
