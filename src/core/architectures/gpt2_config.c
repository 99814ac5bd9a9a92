/*
 * gpt2_config.c: what gives a GPT-2's sizes (see gpt2.h): Hugging Face's
 * config.json, the same file holding the book's GPT_CONFIG keys, OpenAI's
 * hparams.json, and the head count where no file says it.
 */
#include "config.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "attnscope/architectures/gpt2.h"
#include "attnscope/files/jsonfile.h"

/*
 * The activations GPT-2's configs name that attnscope computes: the tanh
 * approximation of GELU under its three names (gelu_fast is the same
 * function written another way; in float32 they agree to a few ulp).
 */
static const char *const tanh_gelus[] = { "gelu_new", "gelu_pytorch_tanh", "gelu_fast" };

void
gpt2_config_defaults(struct decoder_config *c)
{
    arch_parts_apply(&arch_gpt2, c);
    c->d_mlp = 4 * c->d_model;
}

/* Checks the sizes read, and the width the heads must divide. */
static enum attn_status
check_sizes(const struct decoder_config *c, const char *path, struct attn_error *err)
{
    if (c->d_model % c->n_head != 0)
        return attn_fail(err, ATTN_EPARSE, "%s: n_embd %d is not a multiple of n_head %d", path,
                         c->d_model, c->n_head);
    return ATTN_OK;
}

/*
 * The book's GPT_CONFIG_124M saved as JSON (vocab_size, context_length,
 * emb_dim, n_heads, n_layers, drop_rate, qkv_bias): the sizes under the
 * book's names.  The GPTModel it describes ties nothing.
 */
static enum attn_status
book_config(struct decoder_config *c, json_t *root, const char *path, struct attn_error *err)
{
    if ((c->n_layer = jsonfile_int(root, path, "n_layers", NULL, 1, err)) < 0 ||
        (c->n_head = jsonfile_int(root, path, "n_heads", NULL, 1, err)) < 0 ||
        (c->d_model = jsonfile_int(root, path, "emb_dim", NULL, 1, err)) < 0 ||
        (c->n_ctx = jsonfile_int(root, path, "context_length", NULL, 1, err)) < 0 ||
        (c->vocab_size = jsonfile_int(root, path, "vocab_size", NULL, 1, err)) < 0 ||
        jsonfile_bool(root, path, "qkv_bias", false, err) < 0)
        return ATTN_EPARSE;
    gpt2_config_defaults(c);
    c->tied = false;
    return check_sizes(c, path, err);
}

enum attn_status
gpt2_config_load(struct decoder_config *c, const char *path, struct attn_error *err)
{
    json_t *root = jsonfile_load(path, JSONFILE_CONFIG_MAX, err);
    json_t *v;
    int flag;
    double eps;
    enum attn_status rc = ATTN_EPARSE;

    memset(c, 0, sizeof *c);
    if (root == NULL)
        return err != NULL ? err->status : ATTN_EPARSE;
    if (!json_is_object(root)) {
        attn_fail(err, ATTN_EPARSE, "%s: not a JSON object", path);
        goto done;
    }
    if (json_object_get(root, "emb_dim") != NULL && json_object_get(root, "n_embd") == NULL) {
        rc = book_config(c, root, path, err);
        goto done;
    }
    v = json_object_get(root, "model_type");
    if (v != NULL &&
        (!json_is_string(v) || strcmp(json_string_value(v), arch_gpt2.model_types[0]) != 0)) {
        attn_fail(err, ATTN_EPARSE, "%s: model_type %s is not supported yet; supported: %s", path,
                  json_is_string(v) ? json_string_value(v) : "(not a string)",
                  arch_gpt2.model_types[0]);
        goto done;
    }
    if ((c->n_layer = jsonfile_int(root, path, "n_layer", NULL, 1, err)) < 0 ||
        (c->n_head = jsonfile_int(root, path, "n_head", NULL, 1, err)) < 0 ||
        (c->d_model = jsonfile_int(root, path, "n_embd", NULL, 1, err)) < 0 ||
        (c->n_ctx = jsonfile_int(root, path, "n_positions", "n_ctx", 1, err)) < 0 ||
        (c->vocab_size = jsonfile_int(root, path, "vocab_size", NULL, 1, err)) < 0)
        goto done;
    if (check_sizes(c, path, err) != ATTN_OK)
        goto done;
    gpt2_config_defaults(c);
    v = json_object_get(root, "n_inner");
    if (v != NULL && !json_is_null(v) &&
        (c->d_mlp = jsonfile_int(root, path, "n_inner", NULL, 1, err)) < 0)
        goto done;
    eps = arch_config_number(root, path, "layer_norm_epsilon", c->eps, ARCH_BOUND_NORM_EPS, err);
    if (isnan(eps))
        goto done;
    c->eps = (float)eps;
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
    if ((flag = jsonfile_bool(root, path, "scale_attn_weights", true, err)) < 0)
        goto done;
    c->scale_attn_weights = flag;
    if ((flag = jsonfile_bool(root, path, "scale_attn_by_inverse_layer_idx", false, err)) < 0)
        goto done;
    c->scale_by_layer = flag;
    if ((flag = jsonfile_bool(root, path, "tie_word_embeddings", true, err)) < 0)
        goto done;
    c->tied = flag;
    /* Only where the products are scaled and cast: float32 throughout gives the same numbers. */
    if (jsonfile_bool(root, path, "reorder_and_upcast_attn", false, err) < 0)
        goto done;
    if ((flag = jsonfile_bool(root, path, "add_cross_attention", false, err)) != 0) {
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


enum attn_status
gpt2_hparams_load(struct decoder_config *c, const char *path, struct attn_error *err)
{
    json_t *root = jsonfile_load(path, JSONFILE_CONFIG_MAX, err);
    enum attn_status rc = ATTN_EPARSE;

    memset(c, 0, sizeof *c);
    if (root == NULL)
        return err != NULL ? err->status : ATTN_EPARSE;
    if (!json_is_object(root))
        attn_fail(err, ATTN_EPARSE, "%s: not a JSON object", path);
    else if ((c->n_layer = jsonfile_int(root, path, "n_layer", NULL, 1, err)) >= 0 &&
             (c->n_head = jsonfile_int(root, path, "n_head", NULL, 1, err)) >= 0 &&
             (c->d_model = jsonfile_int(root, path, "n_embd", NULL, 1, err)) >= 0 &&
             (c->n_ctx = jsonfile_int(root, path, "n_ctx", NULL, 1, err)) >= 0 &&
             (c->vocab_size = jsonfile_int(root, path, "n_vocab", NULL, 1, err)) >= 0) {
        gpt2_config_defaults(c);
        rc = check_sizes(c, path, err);
    }
    json_decref(root);
    return rc;
}

/* GPT-2's sizes and their head counts (small, medium, large, XL). */
static const struct {
    int n_embd, n_head;
    const char *name;
} gpt2_sizes[] = { { 768, 12, "124M" }, { 1024, 16, "355M" }, { 1280, 20, "774M" },
                   { 1600, 25, "1558M" } };

int
gpt2_heads(int file_heads, const char *file, int wanted, int n_embd, const char *source,
           char *note, size_t note_size, struct attn_error *err)
{
    if (file_heads > 0) {
        if (wanted > 0 && wanted != file_heads) {
            attn_fail(err, ATTN_EVALUE, "--heads %d: %s says the model has %d heads", wanted, file,
                      file_heads);
            return -1;
        }
        return file_heads;
    }
    if (wanted > 0) {
        if (n_embd % wanted != 0) {
            attn_fail(err, ATTN_EVALUE, "--heads %d: the model's width (n_embd) %d is not a "
                                        "multiple of it",
                      wanted, n_embd);
            return -1;
        }
        snprintf(note, note_size, "%d heads (--heads)", wanted);
        return wanted;
    }
    for (size_t i = 0; i < sizeof gpt2_sizes / sizeof gpt2_sizes[0]; i++)
        if (gpt2_sizes[i].n_embd == n_embd) {
            snprintf(note, note_size,
                     "%d heads, as GPT-2 %s has at n_embd %d (no file says; --heads N to change)",
                     gpt2_sizes[i].n_head, gpt2_sizes[i].name, n_embd);
            return gpt2_sizes[i].n_head;
        }
    attn_fail(err, ATTN_EVALUE,
              "%s: how many heads the model has is in no file beside it (config.json, "
              "hparams.json), and n_embd %d is none of GPT-2's sizes: give it with --heads N "
              "(the n_heads of the GPT_CONFIG it was trained with)",
              source, n_embd);
    return -1;
}
