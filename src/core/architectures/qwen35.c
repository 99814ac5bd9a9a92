/*
 * qwen35.c: Qwen3.5 and Qwen3.6 (Hugging Face's Qwen3_5ForCausalLM, and
 * Qwen3_5ForConditionalGeneration's text model): three Gated DeltaNet
 * layers (decoder/gdn.c) to one of gated full attention, as its
 * layer_types say.  Its parts are Qwen3's with every RMSNorm zero-centred
 * (1 + w; the gated norm's plain w), RoPE on the first quarter of each
 * head (partial_rotary_factor), and the query projection giving each head
 * an output gate beside its query (attn_output_gate).
 *
 * Read from config.json, flat or under text_config (its tensors under
 * model.language_model., the vision tower's model.visual.* and the
 * multi-token head's mtp.* beside them, never read).  Its rope_parameters'
 * mrope_section splits the rotated columns among three position ids (time,
 * height, width): for text the three are the token's position, so the
 * rotation is RoPE's, whatever the sections.
 *
 * Or from a GGUF as llama.cpp's converter writes one (general.architecture
 * qwen35): its norms stored with the 1 added (the gated norm's not),
 * A_log stored as -exp(A_log) (ssm_a), the convolution squeezed to
 * (channels, taps), the value heads tiled across the key heads (value
 * head j reads key head j % k_heads), the layers' kinds in
 * attention.recurrent_layers (else every full_attention_interval-th full),
 * and the multi-token head's layers past the model's own, counted in
 * block_count and named by nextn_predict_layers: never read.  Qwen3-Next's
 * GGUF (qwen3next) keeps its value heads grouped, and ssm_ba fused.
 */
#include "config.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/architectures/qwen35.h"
#include "attnscope/decoder/mixer.h"
#include "attnscope/files/fileio.h"
#include "attnscope/files/jsonfile.h"
#include "attnscope/formats/gguf.h"

#define GDN_ROW(role, hf) { role, { [ARCH_HF] = { "layers.%d.linear_attn." hf, NULL } } }
/* Its differences from Qwen3's rows: the linear-attention layers' tensors. */
#define QWEN35_ROWS                                                                          \
    GDN_ROW(ROLE_GDN_QKV, "in_proj_qkv.weight"), GDN_ROW(ROLE_GDN_Z, "in_proj_z.weight"),     \
    GDN_ROW(ROLE_GDN_B, "in_proj_b.weight"),     GDN_ROW(ROLE_GDN_A, "in_proj_a.weight"),     \
    GDN_ROW(ROLE_GDN_CONV, "conv1d.weight"),     GDN_ROW(ROLE_GDN_DT_BIAS, "dt_bias"),        \
    GDN_ROW(ROLE_GDN_A_LOG, "A_log"),            GDN_ROW(ROLE_GDN_NORM, "norm.weight"),       \
    GDN_ROW(ROLE_GDN_OUT, "out_proj.weight"),                                                \
    /* (its norm before the MLP is llama.cpp's post_attention_norm, as Qwen3-Next's) */       \
    { ROLE_FFN_NORM,                                                                         \
      { [ARCH_HF] = { "layers.%d.post_attention_layernorm.weight", NULL },                   \
        [ARCH_GGUF] = { "blk.%d.post_attention_norm.weight", NULL } } }
static const struct arch_name qwen35_names[] = { QWEN35_ROWS };

/*
 * Qwen3.5-MoE's: every layer's MLP a mixture, its gate mlp.gate choosing, each
 * expert's projections (or all of them stacked: the keys' names), and a
 * shared expert behind its own sigmoid gate.
 */
#define MLP_ROW(role, hf) { role, { [ARCH_HF] = { "layers.%d.mlp." hf ".weight", NULL } } }
static const struct arch_name qwen35_moe_names[] = {
    QWEN35_ROWS,
    MLP_ROW(ROLE_FFN_ROUTER, "gate"),
    MLP_ROW(ROLE_EXPERT_GATE, "experts.%d.gate_proj"),
    MLP_ROW(ROLE_EXPERT_UP, "experts.%d.up_proj"),
    MLP_ROW(ROLE_EXPERT_DOWN, "experts.%d.down_proj"),
    MLP_ROW(ROLE_SHARED_GATE, "shared_expert.gate_proj"),
    MLP_ROW(ROLE_SHARED_UP, "shared_expert.up_proj"),
    MLP_ROW(ROLE_SHARED_DOWN, "shared_expert.down_proj"),
    MLP_ROW(ROLE_SHARED_ROUTER, "shared_expert_gate"),
};

/* Every layer has its input norm; the text model's tensors are under language_model. */
static const struct arch_layout_of qwen35_layouts[] = {
    { ARCH_HF, "layers.0.input_layernorm.weight", { "model.language_model.", "model.", "" },
      STORE_OUT_IN, DECODER_NAMES_HF, false },
    { ARCH_GGUF, "blk.0.attn_norm.weight", { "" }, STORE_OUT_IN, DECODER_NAMES_GGUF, false },
};

/* The keys the text config is read from: text_config's, or the file's own when flat. */
static json_t *
text_of(json_t *root)
{
    json_t *t = json_object_get(root, "text_config");

    return json_is_object(t) ? t : root;
}

/* Which layers are Gated DeltaNet: layer_types, else every full_attention_interval-th is full. */
static enum attn_status
layer_kinds(json_t *text, const char *path, struct decoder_config *c, struct attn_error *err)
{
    json_t *types = json_object_get(text, "layer_types");
    int every = 4;

    if (c->n_layer > DECODER_LAYERS_SLIDING_MAX)
        return attn_fail(err, ATTN_EPARSE, "%s: %d layers: attnscope keeps the kinds of at most %d",
                         path, c->n_layer, DECODER_LAYERS_SLIDING_MAX);
    if (types != NULL && !json_is_null(types)) {
        if (!json_is_array(types) || json_array_size(types) != (size_t)c->n_layer)
            return attn_fail(err, ATTN_EPARSE,
                             "%s: \"layer_types\" is not a list of %d kinds, one a layer", path,
                             c->n_layer);
        for (int l = 0; l < c->n_layer; l++) {
            const char *k = json_string_value(json_array_get(types, (size_t)l));
            if (k != NULL && strcmp(k, "linear_attention") == 0)
                c->mixer[l] = DECODER_MIXER_GDN;
            else if (k != NULL && strcmp(k, "full_attention") == 0)
                c->mixer[l] = DECODER_MIXER_ATTENTION;
            else
                return attn_fail(err, ATTN_EPARSE,
                                 "%s: \"layer_types\"[%d] is %s: Qwen3.5's layers are "
                                 "linear_attention or full_attention",
                                 path, l, k != NULL ? k : "not a string");
        }
        return ATTN_OK;
    }
    if (json_object_get(text, "full_attention_interval") != NULL &&
        (every = jsonfile_int(text, path, "full_attention_interval", NULL, 1, err)) < 0)
        return ATTN_EPARSE;
    for (int l = 0; l < c->n_layer; l++)
        c->mixer[l] = (l + 1) % every != 0 ? DECODER_MIXER_GDN : DECODER_MIXER_ATTENTION;
    return ATTN_OK;
}

/* An int key of text, def when absent (Qwen3_5TextConfig's defaults); -1 with err set. */
static int
int_key(json_t *text, const char *path, const char *key, int def, struct attn_error *err)
{
    return json_object_get(text, key) == NULL ? def : jsonfile_int(text, path, key, NULL, 1, err);
}

/* RoPE: its base, no stretch, the first partial_rotary_factor of each head (0.25 by default). */
static enum attn_status
rope(json_t *text, const char *path, struct decoder_config *c, struct attn_error *err)
{
    json_t *params = json_object_get(text, "rope_parameters");
    json_t *from = json_is_object(params) && json_object_get(params, "partial_rotary_factor")
                       ? params
                       : text;
    double part;

    if (arch_config_rope_read(text, path, false, c, err) != ATTN_OK)
        return ATTN_EPARSE;
    if (c->rope_scaling.llama3 || c->rope_scaling.linear || c->rope_scaling.yarn)
        return attn_fail(err, ATTN_EPARSE,
                         "%s: a stretched RoPE in Qwen3.5's config is not supported yet", path);
    part = arch_config_number(from, path, "partial_rotary_factor", 0.25, ARCH_BOUND_FRACTION, err);
    if (isnan(part))
        return ATTN_EPARSE;
    /* (Hugging Face's int(head_dim * partial_rotary_factor)) */
    c->rope_dim = (int)(decoder_head_dim(c) * part);
    if (c->rope_dim < 2 || c->rope_dim % 2 != 0)
        return attn_fail(err, ATTN_EPARSE,
                         "%s: \"partial_rotary_factor\" %g of heads of %d turns %d columns: RoPE "
                         "turns pairs",
                         path, part, decoder_head_dim(c), c->rope_dim);
    return ATTN_OK;
}

/* The tie: the file's own (the whole model's) over text_config's; the two disagreeing refused. */
static int
tie(json_t *root, json_t *text, const char *path, struct attn_error *err)
{
    const int outer = root != text && json_object_get(root, "tie_word_embeddings") != NULL
                          ? jsonfile_bool(root, path, "tie_word_embeddings", false, err)
                          : -2;
    const int inner = jsonfile_bool(text, path, "tie_word_embeddings", false, err);

    if (outer == -1 || inner < 0)
        return -1;
    if (outer >= 0 && json_object_get(text, "tie_word_embeddings") != NULL && outer != inner) {
        attn_fail(err, ATTN_EPARSE,
                  "%s: \"tie_word_embeddings\" is %s, and %s in text_config: which holds is not "
                  "clear",
                  path, outer ? "true" : "false", inner ? "true" : "false");
        return -1;
    }
    return outer >= 0 ? outer : inner;
}

/*
 * The sizes; in a mixture, its experts too, and the MLP's width the
 * experts' when the config gives none (Qwen3.5-MoE's has no
 * intermediate_size: every layer is sparse).
 */
static enum attn_status
sizes(const struct architecture *a, json_t *text, const char *path, struct decoder_config *c,
      struct attn_error *err)
{
    json_t *t = text;
    enum attn_status rc;

    if (a->parts.moe != NULL && json_object_get(text, "intermediate_size") == NULL &&
        json_object_get(text, a->parts.moe->width) != NULL) {
        if ((t = json_copy(text)) == NULL)
            return attn_fail(err, ATTN_ENOMEM, "out of memory reading %s", path);
        json_object_set(t, "intermediate_size", json_object_get(text, a->parts.moe->width));
    }
    rc = arch_config_sizes(t, path, 256, c, err);
    if (t != text)
        json_decref(t);
    if (rc != ATTN_OK || a->parts.moe == NULL)
        return rc;
    return arch_config_experts(a->parts.moe, c, text, path, err);
}

/* The text model's description from config.json at path. */
static enum attn_status
describe_config(struct arch_loader *ld, json_t *root, const char *path, struct attn_error *err)
{
    struct decoder_model *m = ld->w.m;
    struct decoder_config *c = &m->cfg;
    json_t *text = text_of(root);
    json_t *act = json_object_get(text, "hidden_act");
    double eps;
    int flag;

    memset(c, 0, sizeof *c);
    if (sizes(ld->arch, text, path, c, err) != ATTN_OK)
        return ATTN_EPARSE;
    arch_parts_apply(ld->arch, c);
    if (act != NULL && (!json_is_string(act) || strcmp(json_string_value(act), "silu") != 0))
        return attn_fail(err, ATTN_EPARSE,
                         "%s: \"hidden_act\" is %s; Qwen3.5's MLP and convolution are silu's",
                         path, json_is_string(act) ? json_string_value(act) : "not a string");
    eps = arch_config_number(text, path, "rms_norm_eps", 1e-6, ARCH_BOUND_NORM_EPS, err);
    if (isnan(eps) || rope(text, path, c, err) != ATTN_OK || layer_kinds(text, path, c, err))
        return ATTN_EPARSE;
    c->eps = (float)eps;
    if ((flag = tie(root, text, path, err)) < 0)
        return ATTN_EPARSE;
    c->tied = flag;
    if ((flag = jsonfile_bool(text, path, "attention_bias", false, err)) < 0)
        return ATTN_EPARSE;
    if (flag)
        return attn_fail(err, ATTN_EPARSE,
                         "%s: \"attention_bias\" is true: Qwen3.5's projections have no biases "
                         "in attnscope yet",
                         path);
    if ((flag = jsonfile_bool(text, path, "attn_output_gate", true, err)) < 0)
        return ATTN_EPARSE;
    c->attn_gate = flag;
    if ((c->gdn.k_heads = int_key(text, path, "linear_num_key_heads", 16, err)) < 0 ||
        (c->gdn.v_heads = int_key(text, path, "linear_num_value_heads", 32, err)) < 0 ||
        (c->gdn.k_dim = int_key(text, path, "linear_key_head_dim", 128, err)) < 0 ||
        (c->gdn.v_dim = int_key(text, path, "linear_value_head_dim", 128, err)) < 0 ||
        (c->gdn.conv = int_key(text, path, "linear_conv_kernel_dim", 4, err)) < 0)
        return ATTN_EPARSE;
    m->bos_token = arch_config_bos(text, c->vocab_size);
    return ATTN_OK;
}

/*
 * The layers' kinds from recurrent_layers (one a layer, the MTP's past
 * them), else from head_count_kv when it is one count a layer (Ollama's:
 * 0 on a DeltaNet layer), else the interval.
 */
static enum attn_status
gguf_kinds(const struct gguf *g, const char *arch, struct decoder_config *c, int all,
           struct attn_error *err)
{
    char key[80];
    const struct gguf_kv *kinds, *kv;
    int every = 4;

    snprintf(key, sizeof key, "%s.attention.recurrent_layers", arch);
    kinds = gguf_find(g, key);
    snprintf(key, sizeof key, "%s.attention.head_count_kv", arch);
    kv = gguf_find(g, key);

    if (c->n_layer > DECODER_LAYERS_SLIDING_MAX)
        return attn_fail(err, ATTN_EPARSE, "%s: %d layers: attnscope keeps the kinds of at most %d",
                         g->path, c->n_layer, DECODER_LAYERS_SLIDING_MAX);
    if (kinds != NULL) {
        if (kinds->ints == NULL || kinds->count != (size_t)all)
            return attn_fail(err, ATTN_EPARSE,
                             "%s: %s.attention.recurrent_layers is not a list of %d bools, "
                             "one a layer of %s.block_count",
                             g->path, arch, all, arch);
        for (int l = 0; l < c->n_layer; l++)
            c->mixer[l] = kinds->ints[l] != 0 ? DECODER_MIXER_GDN : DECODER_MIXER_ATTENTION;
        return ATTN_OK;
    }
    if (kv != NULL && kv->ints != NULL && kv->count == (size_t)all) {
        for (int l = 0; l < c->n_layer; l++)
            c->mixer[l] = kv->ints[l] == 0 ? DECODER_MIXER_GDN : DECODER_MIXER_ATTENTION;
        return ATTN_OK;
    }
    if (arch_gguf_count(g, arch, "full_attention_interval", false, 1, &every, err) != ATTN_OK)
        return err->status;
    for (int l = 0; l < c->n_layer; l++)
        c->mixer[l] = (l + 1) % every != 0 ? DECODER_MIXER_GDN : DECODER_MIXER_ATTENTION;
    return ATTN_OK;
}

/* A GGUF's description: every GGUF's sizes, then Gated DeltaNet's and what llama.cpp changed. */
static enum attn_status
describe_gguf(struct arch_loader *ld, struct attn_error *err)
{
    struct decoder_config *c = &ld->w.m->cfg;
    const struct gguf *g = tensors_gguf(&ld->w.src);
    const char *arch = ld->arch->gguf;
    const struct gguf_kv *reordered;
    char key[80];
    int nextn = 0, inner = 0, all;

    if (gguf_describe(ld, err) != ATTN_OK)
        return err->status;
    all = c->n_layer;
    if (arch_gguf_count(g, arch, "nextn_predict_layers", false, 0, &nextn, err) != ATTN_OK)
        return err->status;
    if (nextn >= all)
        return attn_fail(err, ATTN_EPARSE,
                         "%s: %s.nextn_predict_layers %d leaves none of its %d layers", g->path,
                         arch, nextn, all);
    c->n_layer = all - nextn; /* (the MTP head's layers: never run) */
    c->rope_dim = decoder_head_dim(c);
    if (arch_gguf_count(g, arch, "ssm.conv_kernel", true, 1, &c->gdn.conv, err) ||
        arch_gguf_count(g, arch, "ssm.state_size", true, 1, &c->gdn.k_dim, err) ||
        arch_gguf_count(g, arch, "ssm.group_count", true, 1, &c->gdn.k_heads, err) ||
        arch_gguf_count(g, arch, "ssm.time_step_rank", true, 1, &c->gdn.v_heads, err) ||
        arch_gguf_count(g, arch, "ssm.inner_size", true, 1, &inner, err) ||
        arch_gguf_count(g, arch, "rope.dimension_count", false, 2, &c->rope_dim, err))
        return err->status;
    if (inner % c->gdn.v_heads != 0)
        return attn_fail(err, ATTN_EPARSE,
                         "%s: %s.ssm.inner_size %d is not a multiple of %s.ssm.time_step_rank %d",
                         g->path, arch, inner, arch, c->gdn.v_heads);
    c->gdn.v_dim = inner / c->gdn.v_heads;
    if (c->rope_dim > decoder_head_dim(c) || c->rope_dim % 2 != 0)
        return attn_fail(err, ATTN_EPARSE,
                         "%s: %s.rope.dimension_count %d: RoPE turns pairs of a head's %d "
                         "columns",
                         g->path, arch, c->rope_dim, decoder_head_dim(c));
    /* (llama.cpp's converter tiles the value heads; Ollama's says so, or that it did not) */
    snprintf(key, sizeof key, "%s.ssm.v_head_reordered", arch);
    reordered = gguf_find(g, key);
    if (reordered != NULL && reordered->type != GGUF_BOOL)
        return attn_fail(err, ATTN_EPARSE, "%s: %s is not a bool", g->path, key);
    /* (its Qwen3-Next converter groups them, as Hugging Face does) */
    c->gdn.tiled = reordered != NULL ? reordered->i != 0 : ld->arch != &arch_qwen3_next;
    c->attn_gate = true;     /* (llama.cpp's qwen35 always gates) */
    c->norm_plus_one = false; /* (its norms are stored with the 1 added) */
    /* (a shared expert whose width the metadata does not say: llama.cpp's n_ff, as it reads it) */
    if (c->moe.n_experts > 0 && c->moe.d_shared == 0 &&
        weights_find(&ld->w, "blk.0.ffn_up_shexp.weight") != NULL)
        c->moe.d_shared = c->d_mlp;
    return gguf_kinds(g, arch, c, all, err);
}

/*
 * What the weights hold beside the text model, into m->left_alone: the
 * vision tower (model.visual.*, Ollama's v.*) and the multi-token head
 * (mtp.*; llama.cpp's, the blk.N.* past the model's own layers).  Once the
 * sizes are read.
 */
static void
say_left_alone(struct arch_loader *ld)
{
    int vision = 0, mtp = 0;
    char v[48] = "", h[48] = "";

    for (int i = 0; i < tensors_count(&ld->w.src); i++) {
        const char *name = tensors_at(&ld->w.src, i)->name;
        vision += strncmp(name, "model.visual.", 13) == 0 || strncmp(name, "v.", 2) == 0;
        mtp += strncmp(name, "mtp.", 4) == 0 ||
               (strncmp(name, "blk.", 4) == 0 && atoi(name + 4) >= ld->w.m->cfg.n_layer);
    }
    if (vision > 0)
        snprintf(v, sizeof v, "the vision tower's %d tensors", vision);
    if (mtp > 0)
        snprintf(h, sizeof h, "the multi-token head's %d tensors", mtp);
    snprintf(ld->w.m->left_alone, sizeof ld->w.m->left_alone, "%s%s%s", v,
             vision > 0 && mtp > 0 ? " and " : "", h);
}

/* The sizes from config.json, or from a GGUF's metadata. */
static enum attn_status
qwen35_describe(struct arch_loader *ld, const char *dir, const struct arch_options *o,
                struct attn_error *err)
{
    struct decoder_model *m = ld->w.m;
    char path[4096];
    json_t *root;
    enum attn_status rc;

    (void)o;
    if (ld->layout->layout == ARCH_GGUF) {
        if (describe_gguf(ld, err) != ATTN_OK)
            return err->status;
        say_left_alone(ld);
        return ATTN_OK;
    }
    if (snprintf(path, sizeof path, "%s/config.json", dir) >= (int)sizeof path)
        return attn_fail(err, ATTN_EIO, "%s: the folder's name is too long", dir);
    if (fileio_absent(path))
        return attn_fail(err, ATTN_EPARSE, "%s: no config.json beside the weights", dir);
    if ((root = jsonfile_load(path, JSONFILE_CONFIG_MAX, err)) == NULL)
        return err->status;
    rc = json_is_object(root) ? describe_config(ld, root, path, err)
                              : attn_fail(err, ATTN_EPARSE, "%s: not a JSON object", path);
    json_decref(root);
    if (rc != ATTN_OK)
        return rc;
    say_left_alone(ld);
    snprintf(m->described_by, sizeof m->described_by, "config.json");
    snprintf(m->context_from, sizeof m->context_from, "max_position_embeddings in config.json");
    ld->w.sizes_from = "config.json";
    return ATTN_OK;
}

/* A vector of role's for layer i, of n floats; NULL with err set. */
static const float *
vector(struct arch_loader *ld, enum arch_role role, int i, int n, struct attn_error *err)
{
    char name[160];

    if (arch_name(ld, role, i, false, name, sizeof name) == NULL) {
        attn_fail(err, ATTN_EPARSE, "%s: %s's names have no tensor for this part",
                  ld->w.m->source, ld->arch->name);
        return NULL;
    }
    return weights_vector(&ld->w, name, n, err);
}

/*
 * count rows of wm (C wide) into the model's own memory, row rows[k] its
 * k-th, as l: a fused projection's parts put back where Qwen3.5 keeps them.
 * A quantized row is its blocks, moved whole.
 */
static int
gather_rows(struct arch_loader *ld, const struct weights_matrix *wm, int C, const int *rows,
            int count, struct decoder_linear *l, struct attn_error *err)
{
    const size_t row = wm->f != NULL   ? (size_t)C * sizeof(float)
                       : wm->h != NULL ? (size_t)C * sizeof(uint16_t)
                                       : decoder_quant_row_bytes(wm->qtype, C);
    const unsigned char *src = wm->f != NULL   ? (const unsigned char *)wm->f
                               : wm->h != NULL ? (const unsigned char *)wm->h
                                               : wm->q;
    struct weights_matrix moved = *wm;
    unsigned char *dst;

    if (src == NULL || row == 0)
        return attn_fail(err, ATTN_EPARSE, "%s: a fused projection in a form attnscope does "
                         "not take apart", ld->w.m->source), -1;
    if ((dst = weights_room(&ld->w, (size_t)count * row, err)) == NULL)
        return -1;
    for (int k = 0; k < count; k++)
        memcpy(dst + (size_t)k * row, src + (size_t)rows[k] * row, row);
    moved.f = wm->f != NULL ? (const float *)(void *)dst : NULL;
    moved.h = wm->h != NULL ? (const uint16_t *)(void *)dst : NULL;
    moved.q = wm->q != NULL && moved.f == NULL && moved.h == NULL ? dst : NULL;
    decoder_linear_of(&moved, C, 0, count, NULL, l);
    return 0;
}

/*
 * The b and a of in_proj_ba (Hugging Face's; llama.cpp's ssm_ba, the same
 * rows), named: each key head's value heads' b, then their a, gathered into
 * g's b and a (value heads grouped by key head).
 */
static int
split_ba(struct arch_loader *ld, struct decoder_gdn_weights *g, const char *name, int *rows,
         struct attn_error *err)
{
    const struct decoder_config *c = &ld->w.m->cfg;
    const int C = c->d_model, kh = c->gdn.k_heads, per = c->gdn.v_heads / c->gdn.k_heads;
    struct weights_matrix ba;

    if (weights_matrix_any(&ld->w, name, kh * 2 * per, C, &ba, err) != 0)
        return -1;
    for (int part = 0; part < 2; part++) { /* b, a */
        int n = 0;
        for (int h = 0; h < kh; h++)
            for (int r = 0; r < per; r++)
                rows[n++] = h * 2 * per + part * per + r;
        if (gather_rows(ld, &ba, C, rows, n, part == 0 ? &g->b : &g->a, err) != 0)
            return -1;
    }
    return 0;
}

/*
 * Qwen3-Next's in_proj_qkvz and in_proj_ba of layer i (Qwen3NextGatedDeltaNet's
 * fix_query_key_value_ordering, restated), or a GGUF's: llama.cpp's converter
 * writes attn_qkv and attn_gate apart and ssm_ba as in_proj_ba (its older one
 * in_proj_qkvz as it is, ssm_in).  In in_proj_qkvz each key head's rows are
 * its q (k_dim), its k (k_dim), then its value heads' v and z (per v_dim
 * each); gathered into Qwen3.5's qkv (every q, every k, every v) and z, the
 * value heads grouped by key head as Hugging Face groups them.
 */
static int
read_fused(struct arch_loader *ld, struct decoder_gdn_weights *g, int i, struct attn_error *err)
{
    const struct decoder_config *c = &ld->w.m->cfg;
    const bool gguf = ld->layout->layout == ARCH_GGUF;
    const int C = c->d_model, kh = c->gdn.k_heads, per = c->gdn.v_heads / c->gdn.k_heads;
    const int dk = c->gdn.k_dim, pv = per * c->gdn.v_dim, G = 2 * dk + 2 * pv;
    const int D = decoder_gdn_conv_width(c);
    struct weights_matrix qkvz;
    char name[160];
    int *rows = malloc((size_t)(D + 2 * c->gdn.v_heads) * sizeof *rows), n = 0, rc = -1;

    if (rows == NULL)
        return attn_fail(err, ATTN_ENOMEM, "out of memory"), -1;
    snprintf(name, sizeof name, gguf ? "blk.%d.ssm_ba.weight" : "layers.%d.linear_attn.in_proj_ba.weight", i);
    if (split_ba(ld, g, name, rows, err) != 0)
        goto done;
    snprintf(name, sizeof name, "blk.%d.ssm_in.weight", i);
    if (gguf && weights_find(&ld->w, name) == NULL) { /* (attn_qkv and attn_gate apart) */
        rc = arch_read_linear(ld, &g->qkv, ROLE_GDN_QKV, i, C, D, false, err) ||
                     arch_read_linear(ld, &g->z, ROLE_GDN_Z, i, C, c->gdn.v_heads * c->gdn.v_dim,
                                      false, err)
                 ? -1
                 : 0;
        goto done;
    }
    if (!gguf)
        snprintf(name, sizeof name, "layers.%d.linear_attn.in_proj_qkvz.weight", i);
    if (weights_matrix_any(&ld->w, name, kh * G, C, &qkvz, err) != 0)
        goto done;
    for (int part = 0; part < 3; part++) /* q, k, v */
        for (int h = 0; h < kh; h++)
            for (int r = 0; r < (part < 2 ? dk : pv); r++)
                rows[n++] = h * G + part * dk + r;
    if (gather_rows(ld, &qkvz, C, rows, n, &g->qkv, err) != 0)
        goto done;
    n = 0;
    for (int h = 0; h < kh; h++)
        for (int r = 0; r < pv; r++)
            rows[n++] = h * G + 2 * dk + pv + r;
    rc = gather_rows(ld, &qkvz, C, rows, n, &g->z, err);
done:
    free(rows);
    return rc;
}

int
arch_read_gdn(struct arch_loader *ld, struct decoder_block *b, int i, struct attn_error *err)
{
    const struct decoder_config *c = &ld->w.m->cfg;
    struct decoder_gdn_weights *g = &b->gdn;
    const int C = c->d_model, D = decoder_gdn_conv_width(c), Vw = decoder_gdn_value_width(c);
    const int Hv = c->gdn.v_heads;
    const bool gguf = ld->layout->layout == ARCH_GGUF;
    char name[160];

    snprintf(name, sizeof name,
             gguf ? "blk.%d.ssm_ba.weight" : "layers.%d.linear_attn.in_proj_qkvz.weight", i);
    if (weights_find(&ld->w, name) != NULL) { /* (Qwen3-Next's fused projections) */
        if (read_fused(ld, g, i, err) != 0 ||
            arch_read_linear(ld, &b->o, ROLE_GDN_OUT, i, Vw, C, false, err))
            return -1;
    } else if (arch_read_linear(ld, &g->qkv, ROLE_GDN_QKV, i, C, D, false, err) ||
               arch_read_linear(ld, &g->z, ROLE_GDN_Z, i, C, Vw, false, err) ||
               arch_read_linear(ld, &g->b, ROLE_GDN_B, i, C, Hv, false, err) ||
               arch_read_linear(ld, &g->a, ROLE_GDN_A, i, C, Hv, false, err) ||
               arch_read_linear(ld, &b->o, ROLE_GDN_OUT, i, Vw, C, false, err))
        return -1;
    /* (nn.Conv1d's weight: (channels, 1, taps); llama.cpp's squeezed to (channels, taps)) */
    if (arch_name(ld, ROLE_GDN_CONV, i, false, name, sizeof name) == NULL ||
        (g->conv = gguf ? weights_tensor(&ld->w, name, 2, (const int64_t[]){ D, c->gdn.conv }, err)
                        : weights_tensor(&ld->w, name, 3,
                                         (const int64_t[]){ D, 1, c->gdn.conv }, err)) == NULL)
        return -1;
    g->a_negated = gguf; /* (llama.cpp's ssm_a: -exp(A_log)) */
    /* (Ollama's converter names dt_bias blk.N.ssm_dt, without llama.cpp's .bias) */
    snprintf(name, sizeof name, "blk.%d.ssm_dt", i);
    if (gguf && weights_find(&ld->w, name) != NULL)
        g->dt_bias = weights_vector(&ld->w, name, Hv, err);
    else
        g->dt_bias = vector(ld, ROLE_GDN_DT_BIAS, i, Hv, err);
    return g->dt_bias == NULL ||
                   (g->a_log = vector(ld, ROLE_GDN_A_LOG, i, Hv, err)) == NULL ||
                   (g->norm = vector(ld, ROLE_GDN_NORM, i, c->gdn.v_dim, err)) == NULL
               ? -1
               : 0;
}

static const char *const qwen35_types[] = { "qwen3_5", "qwen3_5_text", NULL };
static const char *const qwen35_moe_types[] = { "qwen3_5_moe", "qwen3_5_moe_text", NULL };
static const char *const qwen35_moe_classes[] = { "Qwen3_5MoeForConditionalGeneration",
                                                  "Qwen3_5MoeForCausalLM", NULL };
/*
 * Qwen3_5MoeTextConfig's: the chosen weights always divided by their sum
 * (Qwen3VLMoeTextTopKRouter; it has no norm_topk_prob), every layer sparse
 * (no decoder_sparse_step nor mlp_only_layers), a shared expert.
 */
static const struct arch_moe_keys qwen35_moe_keys = {
    "num_experts", "moe_intermediate_size", NULL, true, false, true, NULL, 0.0,
    "shared_expert_intermediate_size", "layers.%d.mlp.experts.gate_up_proj",
    "layers.%d.mlp.experts.down_proj",
};
static const char *const qwen35_classes[] = { "Qwen3_5ForConditionalGeneration",
                                              "Qwen3_5ForCausalLM", NULL };

/* The GGUF keys its describe reads itself (RoPE over a quarter of each head). */
static const char *const qwen35_gguf_own[] = { "rope.dimension_count", NULL };

/* The parts of every architecture here, its mixture's keys (or NULL) the one difference. */
#define QWEN35_PARTS(moe_keys)                                                                \
    { .positions = DECODER_POSITIONS_ROPE, .norm = DECODER_NORM_RMS,                           \
      .mlp = DECODER_MLP_SWIGLU, .block_norms = DECODER_PRE_NORM, .eps = 1e-6,                 \
      .rope_theta = 10000000.0, .qk_norm = true, .norm_plus_one = true, .head_dim = 256,       \
      .gguf_own_keys = qwen35_gguf_own, .moe = (moe_keys) }

/* Shipped in bfloat16: its matrices stay so. */
const struct architecture arch_qwen35 = {
    "qwen3_5", "Qwen3.5", qwen35_types, qwen35_classes, qwen35_layouts,
    (int)(sizeof qwen35_layouts / sizeof qwen35_layouts[0]), qwen35_names,
    (int)(sizeof qwen35_names / sizeof qwen35_names[0]), true, true, qwen35_describe,
    .parts = QWEN35_PARTS(NULL),
    .gguf = "qwen35",
    .base = arch_qwen3_rows, .base_count = ARCH_QWEN3_ROWS, .read_mixer = arch_read_gdn,
};

static const char *const qwen3_next_types[] = { "qwen3_next", NULL };
static const char *const qwen3_next_classes[] = { "Qwen3NextForCausalLM", NULL };
/*
 * Qwen3NextConfig's: norm_topk_prob (true by default), its sparse layers
 * every decoder_sparse_step-th less mlp_only_layers (the others an MLP of
 * intermediate_size), a shared expert; experts one tensor each, or stacked.
 */
static const struct arch_moe_keys qwen3_next_keys = {
    "num_experts", "moe_intermediate_size", "norm_topk_prob", true, true, true, NULL, 0.0,
    "shared_expert_intermediate_size", "layers.%d.mlp.experts.gate_up_proj",
    "layers.%d.mlp.experts.down_proj",
};

/* Qwen3-Next: Qwen3.5-MoE's layers with the DeltaNet projections fused (read_fused). */
const struct architecture arch_qwen3_next = {
    "qwen3_next", "Qwen3-Next", qwen3_next_types, qwen3_next_classes, qwen35_layouts,
    (int)(sizeof qwen35_layouts / sizeof qwen35_layouts[0]), qwen35_moe_names,
    (int)(sizeof qwen35_moe_names / sizeof qwen35_moe_names[0]), true, true, qwen35_describe,
    .parts = QWEN35_PARTS(&qwen3_next_keys),
    .gguf = "qwen3next",
    .base = arch_qwen3_rows, .base_count = ARCH_QWEN3_ROWS, .read_mixer = arch_read_gdn,
};

/* Qwen3.5-MoE and Qwen3.6-35B-A3B: Qwen3.5's layers, each MLP a mixture with a shared expert. */
const struct architecture arch_qwen35_moe = {
    "qwen3_5_moe", "Qwen3.5-MoE", qwen35_moe_types, qwen35_moe_classes, qwen35_layouts,
    (int)(sizeof qwen35_layouts / sizeof qwen35_layouts[0]), qwen35_moe_names,
    (int)(sizeof qwen35_moe_names / sizeof qwen35_moe_names[0]), true, true, qwen35_describe,
    .parts = QWEN35_PARTS(&qwen35_moe_keys),
    .gguf = "qwen35moe",
    .base = arch_qwen3_rows, .base_count = ARCH_QWEN3_ROWS, .read_mixer = arch_read_gdn,
};
