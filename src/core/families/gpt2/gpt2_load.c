/* gpt2_load.c: config.json and the weights of a GPT-2 folder (see gpt2.h). */
#include "config.h"

#include <jansson.h>
#include <sys/mman.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attnscope/families/gpt2/gpt2.h"
#include "attnscope/files/jsonfile.h"
#include "attnscope/files/tensors.h"

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

/* The boolean field name of config.json (def when absent); -1 with err set. */
static int
config_bool(json_t *root, const char *path, const char *name, bool def, struct attn_error *err)
{
    json_t *v = json_object_get(root, name);

    if (v == NULL || json_is_null(v))
        return def;
    if (!json_is_boolean(v)) {
        attn_fail(err, ATTN_EPARSE, "%s: \"%s\" is not true or false", path, name);
        return -1;
    }
    return json_is_true(v);
}

/*
 * The activations GPT-2's configs name that attnscope computes: the tanh
 * approximation of GELU under its three names (gelu_fast is the same
 * function written another way; in float32 they agree to a few ulp).
 */
static const char *const tanh_gelus[] = { "gelu_new", "gelu_pytorch_tanh", "gelu_fast" };

enum attn_status
gpt2_config_load(struct decoder_config *c, const char *path, struct attn_error *err)
{
    json_t *root = jsonfile_load(path, JSONFILE_CONFIG_MAX, err);
    json_t *v;
    int flag;
    enum attn_status rc = ATTN_EPARSE;

    memset(c, 0, sizeof *c);
    if (root == NULL)
        return err != NULL ? err->status : ATTN_EPARSE;
    if (!json_is_object(root)) {
        attn_fail(err, ATTN_EPARSE, "%s: not a JSON object", path);
        goto done;
    }
    v = json_object_get(root, "model_type");
    if (v != NULL && (!json_is_string(v) || strcmp(json_string_value(v), "gpt2") != 0)) {
        attn_fail(err, ATTN_EPARSE, "%s: model_type %s is not supported yet; supported: gpt2", path,
                  json_is_string(v) ? json_string_value(v) : "(not a string)");
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
    if (v != NULL) {
        bool known = false;
        for (size_t i = 0; json_is_string(v) && i < sizeof tanh_gelus / sizeof tanh_gelus[0]; i++)
            known = known || strcmp(json_string_value(v), tanh_gelus[i]) == 0;
        if (!known) {
            attn_fail(err, ATTN_EPARSE,
                      "%s: \"activation_function\" is %s; attnscope computes GPT-2's GELU, the tanh "
                      "approximation (gelu_new, gelu_pytorch_tanh, gelu_fast)",
                      path, json_is_string(v) ? json_string_value(v) : "not a string");
            goto done;
        }
    }
    if ((flag = config_bool(root, path, "scale_attn_weights", true, err)) < 0)
        goto done;
    c->scale_attn_weights = flag;
    if ((flag = config_bool(root, path, "scale_attn_by_inverse_layer_idx", false, err)) < 0)
        goto done;
    c->scale_by_layer = flag;
    if ((flag = config_bool(root, path, "tie_word_embeddings", true, err)) < 0)
        goto done;
    c->tied = flag;
    /* Only where the products are scaled and cast: float32 throughout gives the same numbers. */
    if (config_bool(root, path, "reorder_and_upcast_attn", false, err) < 0)
        goto done;
    if ((flag = config_bool(root, path, "add_cross_attention", false, err)) != 0) {
        if (flag > 0)
            attn_fail(err, ATTN_EPARSE,
                      "%s: \"add_cross_attention\" is true: that GPT-2 reads an encoder's output "
                      "beside its text, which attnscope does not have",
                      path);
        goto done;
    }
    rc = ATTN_OK;
done:
    json_decref(root);
    return rc;
}

/* ------------------------------------------------------------ the tensors */

/* What loading keeps beside the model: where the tensors are, and which were read. */
struct loader {
    struct decoder_model *m;
    struct tensor_source src;
    char prefix[16];     /* "" or "transformer." (Hugging Face's layout) */
    json_t *read;        /* name -> where in the weights' memory (a tensor read for several views) */
};

/* Transparent huge pages come in this size (x86-64, arm64 with 4 KiB pages). */
#define HUGE_PAGE ((size_t)2 << 20)

/*
 * The weights' memory: one mapping as large as every tensor of the files
 * as float32, aligned to huge pages and marked for them (a 500 MB model
 * is faulted in as 250 pages instead of 125,000); what a model does not
 * read is never touched, so it costs address space only.
 */
static enum attn_status
weights_reserve(struct loader *ld, struct attn_error *err)
{
    struct decoder_model *m = ld->m;
    size_t floats = tensors_total_floats(&ld->src);
    size_t count = 0;
    size_t len;
    unsigned char *map;

    for (int i = 0; i < ld->src.shard_count; i++)
        count += (size_t)ld->src.shards[i].count;
    floats += 16 * count; /* (each aligned to 64 bytes) */
    if (floats > (SIZE_MAX - 2 * HUGE_PAGE) / sizeof(float))
        return attn_fail(err, ATTN_ENOMEM, "%s: too large for this machine", m->source);
    len = floats * sizeof(float) + HUGE_PAGE;
    map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
               -1, 0);
    if (map == MAP_FAILED)
        return attn_fail(err, ATTN_ENOMEM, "%s: out of memory for %zu MiB of weights", m->source,
                         (floats * sizeof(float)) >> 20);
    m->weights_map = map;
    m->weights_map_bytes = len;
    m->weights_next = map + (HUGE_PAGE - (uintptr_t)map % HUGE_PAGE) % HUGE_PAGE;
#ifdef MADV_HUGEPAGE
    (void)madvise(m->weights_next, len - (size_t)(m->weights_next - map), MADV_HUGEPAGE);
#endif
    return ATTN_OK;
}

/* count floats of the reserved memory, 64-byte aligned. */
static float *
weights_alloc(struct decoder_model *m, size_t count)
{
    unsigned char *at = m->weights_next;
    unsigned char *end = (unsigned char *)m->weights_map + m->weights_map_bytes;

    if (at == NULL || (size_t)(end - at) < count * sizeof(float))
        return NULL;
    m->weights_next = at + (count * sizeof(float) + 63) / 64 * 64;
    return (float *)(void *)at;
}

/* The tensor name (after the layout's prefix), or NULL. */
static const struct tensor_info *
find(const struct loader *ld, const char *name)
{
    char full[128];

    snprintf(full, sizeof full, "%s%s", ld->prefix, name);
    return tensors_find(&ld->src, full);
}

/*
 * The tensor name (after the layout's prefix) as float32 of the given
 * shape, read into memory of the model's own; NULL with err set.
 */
static const float *
tensor(struct loader *ld, const char *name, int ndim, int d0, int d1, struct attn_error *err)
{
    struct decoder_model *m = ld->m;
    char full[128];
    const struct tensor_info *t;
    const char *file;
    float *v;

    snprintf(full, sizeof full, "%s%s", ld->prefix, name);
    t = tensors_find(&ld->src, full);
    if (t == NULL) {
        attn_fail(err, ATTN_EPARSE, "%s: no tensor '%s'", m->source, full);
        return NULL;
    }
    file = tensors_file_of(&ld->src, t);
    if (t->ndim != ndim || t->shape[0] != d0 || (ndim == 2 && t->shape[1] != d1)) {
        char shape[64];
        int at = 0;
        for (int d = 0; d < t->ndim && at < (int)sizeof shape - 24; d++)
            at += snprintf(shape + at, sizeof shape - (size_t)at, "%s%lld", d ? ", " : "",
                           (long long)t->shape[d]);
        if (ndim == 2)
            attn_fail(err, ATTN_ESHAPE, "%s: tensor '%s' is (%s); config.json makes it (%d, %d)",
                      file, full, shape, d0, d1);
        else
            attn_fail(err, ATTN_ESHAPE, "%s: tensor '%s' is (%s); config.json makes it (%d)",
                      file, full, shape, d0);
        return NULL;
    }
    /* A tensor read for several layers' views (c_attn holds Q, K and V) is read once. */
    {
        json_t *known = json_object_get(ld->read, full);
        if (known != NULL)
            return (const float *)(const void *)((unsigned char *)m->weights_map +
                                                 json_integer_value(known));
    }
    v = weights_alloc(m, t->numel);
    if (v == NULL) {
        attn_fail(err, ATTN_ENOMEM, "%s: out of memory for tensor '%s' (%zu values)", file, full,
                  t->numel);
        return NULL;
    }
    if (tensors_read_f32(&ld->src, t, v, err) != ATTN_OK)
        return NULL;
    if (json_object_set_new(ld->read, full,
                            json_integer((json_int_t)((unsigned char *)v -
                                                      (unsigned char *)m->weights_map))) != 0) {
        attn_fail(err, ATTN_ENOMEM, "%s: out of memory", file);
        return NULL;
    }
    return v;
}

/*
 * A linear layer NAME.weight and NAME.bias, in -> out: stored (in, out_all)
 * and used from column col (Hugging Face's Conv1D; c_attn holds Q, K and V
 * side by side), or stored (out, in) when out_in (nn.Linear, the book's).
 */
static int
load_linear(struct loader *ld, struct decoder_linear *l, const char *name, int in, int out,
            bool out_in, int out_all, int col, struct attn_error *err)
{
    char w[96];
    char b[96];
    const float *wv;
    const float *bv;

    snprintf(w, sizeof w, "%s.weight", name);
    snprintf(b, sizeof b, "%s.bias", name);
    wv = out_in ? tensor(ld, w, 2, out, in, err) : tensor(ld, w, 2, in, out_all, err);
    if (wv == NULL || (bv = tensor(ld, b, 1, out_in ? out : out_all, 0, err)) == NULL)
        return -1;
    *l = out_in ? (struct decoder_linear){ wv, bv, in, out, in, true }
                : (struct decoder_linear){ wv + col, bv + col, in, out, out_all, false };
    return 0;
}

/* Hugging Face's Conv1D, (in, out_all), its columns from col. */
static int
conv1d(struct loader *ld, struct decoder_linear *l, const char *name, int in, int out_all, int col,
       int out, struct attn_error *err)
{
    return load_linear(ld, l, name, in, out, false, out_all, col, err);
}

/* nn.Linear, (out, in): the book's GPTModel. */
static int
linear(struct loader *ld, struct decoder_linear *l, const char *name, int in, int out,
       struct attn_error *err)
{
    return load_linear(ld, l, name, in, out, true, out, 0, err);
}

static int
load_block_hf(struct loader *ld, int i, struct attn_error *err)
{
    const struct decoder_config *c = &ld->m->cfg;
    const int C = c->n_embd;
    struct decoder_block *b = &ld->m->blocks[i];
    char n[96];

#define NAME(s) (snprintf(n, sizeof n, "h.%d.%s", i, (s)), n)
    if ((b->norm1.scale = tensor(ld, NAME("ln_1.weight"), 1, C, 0, err)) == NULL ||
        (b->norm1.shift = tensor(ld, NAME("ln_1.bias"), 1, C, 0, err)) == NULL ||
        conv1d(ld, &b->q, NAME("attn.c_attn"), C, 3 * C, 0, C, err) != 0 ||
        conv1d(ld, &b->k, NAME("attn.c_attn"), C, 3 * C, C, C, err) != 0 ||
        conv1d(ld, &b->v, NAME("attn.c_attn"), C, 3 * C, 2 * C, C, err) != 0 ||
        conv1d(ld, &b->o, NAME("attn.c_proj"), C, C, 0, C, err) != 0 ||
        (b->norm2.scale = tensor(ld, NAME("ln_2.weight"), 1, C, 0, err)) == NULL ||
        (b->norm2.shift = tensor(ld, NAME("ln_2.bias"), 1, C, 0, err)) == NULL ||
        conv1d(ld, &b->up, NAME("mlp.c_fc"), C, c->n_inner, 0, c->n_inner, err) != 0 ||
        conv1d(ld, &b->down, NAME("mlp.c_proj"), c->n_inner, C, 0, C, err) != 0)
        return -1;
#undef NAME
    return 0;
}

static int
load_block_book(struct loader *ld, int i, struct attn_error *err)
{
    const struct decoder_config *c = &ld->m->cfg;
    const int C = c->n_embd;
    struct decoder_block *b = &ld->m->blocks[i];
    char n[96];

#define NAME(s) (snprintf(n, sizeof n, "trf_blocks.%d.%s", i, (s)), n)
    if ((b->norm1.scale = tensor(ld, NAME("norm1.scale"), 1, C, 0, err)) == NULL ||
        (b->norm1.shift = tensor(ld, NAME("norm1.shift"), 1, C, 0, err)) == NULL ||
        linear(ld, &b->q, NAME("att.W_query"), C, C, err) != 0 ||
        linear(ld, &b->k, NAME("att.W_key"), C, C, err) != 0 ||
        linear(ld, &b->v, NAME("att.W_value"), C, C, err) != 0 ||
        linear(ld, &b->o, NAME("att.out_proj"), C, C, err) != 0 ||
        (b->norm2.scale = tensor(ld, NAME("norm2.scale"), 1, C, 0, err)) == NULL ||
        (b->norm2.shift = tensor(ld, NAME("norm2.shift"), 1, C, 0, err)) == NULL ||
        linear(ld, &b->up, NAME("ff.layers.0"), C, c->n_inner, err) != 0 ||
        linear(ld, &b->down, NAME("ff.layers.2"), c->n_inner, C, err) != 0)
        return -1;
#undef NAME
    return 0;
}

/* Which layout the names say, and Hugging Face's prefix; -1 when neither. */
static int
choose_layout(struct loader *ld, struct attn_error *err)
{
    struct decoder_model *m = ld->m;

    if (tensors_find(&ld->src, "tok_emb.weight") != NULL) {
        m->names = DECODER_NAMES_BOOK;
        return 0;
    }
    m->names = DECODER_NAMES_HF;
    if (tensors_find(&ld->src, "wte.weight") != NULL)
        return 0;
    if (tensors_find(&ld->src, "transformer.wte.weight") != NULL) {
        snprintf(ld->prefix, sizeof ld->prefix, "transformer.");
        return 0;
    }
    attn_fail(err, ATTN_EPARSE,
              "%s: neither GPT-2's tensor names (wte.weight, h.0.attn.c_attn.weight, ...) nor the "
              "book's GPTModel's (tok_emb.weight, trf_blocks.0.att.W_query.weight, ...)",
              m->source);
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
 * Before a block is allocated: the tensors of the last layer config.json
 * names are in the file, or the first layer that is missing is named (a
 * config.json of 16 million layers beside a file of two is "no tensor
 * h.2...", not "out of memory").
 */
static int
check_layers(struct loader *ld, struct attn_error *err)
{
    const struct decoder_model *m = ld->m;
    const char *first = m->names == DECODER_NAMES_HF ? "h.%d.ln_1.weight" : "trf_blocks.%d.norm1.scale";
    char name[96];
    int lo = 0;
    int hi = m->cfg.n_layer - 1;

    snprintf(name, sizeof name, first, hi);
    if (find(ld, name) != NULL)
        return 0;
    /* The first missing layer (layers are numbered from 0 without gaps in a real file). */
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        snprintf(name, sizeof name, first, mid);
        if (find(ld, name) != NULL)
            lo = mid + 1;
        else
            hi = mid;
    }
    snprintf(name, sizeof name, first, lo);
    attn_fail(err, ATTN_EPARSE, "%s: no tensor '%s%s': config.json says n_layer %d, the file has %d",
              m->source, ld->prefix, name, m->cfg.n_layer, lo);
    return -1;
}

/* The model-wide tensors and every block, in the layout the names say. */
static int
load_tensors(struct loader *ld, struct attn_error *err)
{
    struct decoder_model *m = ld->m;
    const struct decoder_config *c = &m->cfg;

    if (m->names == DECODER_NAMES_BOOK) {
        if ((m->wte = tensor(ld, "tok_emb.weight", 2, c->vocab_size, c->n_embd, err)) == NULL ||
            (m->wpe = tensor(ld, "pos_emb.weight", 2, c->n_positions, c->n_embd, err)) == NULL ||
            (m->final_norm.scale = tensor(ld, "final_norm.scale", 1, c->n_embd, 0, err)) == NULL ||
            (m->final_norm.shift = tensor(ld, "final_norm.shift", 1, c->n_embd, 0, err)) == NULL ||
            (m->lm_head = tensor(ld, "out_head.weight", 2, c->vocab_size, c->n_embd, err)) == NULL)
            return -1;
        for (int i = 0; i < c->n_layer; i++)
            if (load_block_book(ld, i, err) != 0)
                return -1;
        return 0;
    }
    if ((m->wte = tensor(ld, "wte.weight", 2, c->vocab_size, c->n_embd, err)) == NULL ||
        (m->wpe = tensor(ld, "wpe.weight", 2, c->n_positions, c->n_embd, err)) == NULL ||
        (m->final_norm.scale = tensor(ld, "ln_f.weight", 1, c->n_embd, 0, err)) == NULL ||
        (m->final_norm.shift = tensor(ld, "ln_f.bias", 1, c->n_embd, 0, err)) == NULL)
        return -1;
    for (int i = 0; i < c->n_layer; i++)
        if (load_block_hf(ld, i, err) != 0)
            return -1;
    /*
     * GPT-2 ties its output to the token embedding (a saved lm_head.weight is then that copy,
     * and Hugging Face uses wte); tie_word_embeddings false reads lm_head.weight (no prefix).
     */
    m->lm_head = m->wte;
    if (!c->tied) {
        char saved[sizeof ld->prefix];
        if (tensors_find(&ld->src, "lm_head.weight") == NULL) {
            attn_fail(err, ATTN_EPARSE,
                      "%s: no tensor 'lm_head.weight', which config.json's "
                      "\"tie_word_embeddings\": false asks for",
                      m->source);
            return -1;
        }
        memcpy(saved, ld->prefix, sizeof saved);
        ld->prefix[0] = '\0';
        m->lm_head = tensor(ld, "lm_head.weight", 2, c->vocab_size, c->n_embd, err);
        memcpy(ld->prefix, saved, sizeof saved);
        if (m->lm_head == NULL)
            return -1;
    }
    return 0;
}

enum attn_status
gpt2_load(struct decoder_model *m, const char *dir, struct attn_error *err)
{
    struct loader ld;
    char path[4096];
    enum attn_status rc;

    memset(m, 0, sizeof *m);
    memset(&ld, 0, sizeof ld);
    ld.m = m;
    snprintf(path, sizeof path, "%s/config.json", dir);
    if ((rc = gpt2_config_load(&m->cfg, path, err)) != ATTN_OK)
        return rc;
    /* GPT-2 as a decoder: learned positions, LayerNorm, multi-head attention, a GELU MLP. */
    m->cfg.positions = DECODER_POSITIONS_LEARNED;
    m->cfg.norm = DECODER_NORM_LAYER;
    m->cfg.mlp = DECODER_MLP_GELU;
    rc = tensors_open(&ld.src, dir, err);
    if (rc == ATTN_EABSENT) {
        if (refuse_other_formats(dir, err) != ATTN_OK)
            return err->status;
        snprintf(path, sizeof path, "%s/model.safetensors", dir);
        return attn_fail(err, ATTN_EIO, "%s: cannot open: No such file or directory", path);
    }
    if (rc != ATTN_OK)
        return rc;
    snprintf(m->source, sizeof m->source, "%s", ld.src.path);
    rc = ATTN_EPARSE;
    ld.read = json_object();
    if (ld.read == NULL) {
        rc = attn_fail(err, ATTN_ENOMEM, "%s: out of memory", m->source);
        goto fail;
    }
    if (choose_layout(&ld, err) != 0 || check_layers(&ld, err) != 0 ||
        (rc = weights_reserve(&ld, err)) != ATTN_OK)
        goto fail;
    m->blocks = calloc((size_t)m->cfg.n_layer, sizeof *m->blocks);
    if (m->blocks == NULL) {
        rc = attn_fail(err, ATTN_ENOMEM, "%s: out of memory", m->source);
        goto fail;
    }
    if (load_tensors(&ld, err) != 0)
        goto fail;
    /* Every weight is in memory of the model's own: the files close. */
    m->files_read = ld.src.shard_count;
    tensors_close(&ld.src);
    json_decref(ld.read);
    return ATTN_OK;
fail:
    rc = err->status != ATTN_OK ? err->status : rc;
    tensors_close(&ld.src);
    json_decref(ld.read);
    decoder_destroy(m);
    return rc;
}
