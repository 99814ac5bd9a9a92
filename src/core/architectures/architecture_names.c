/*
 * architecture_names.c: the tensor names architectures share: llama.cpp's
 * GGUF name of every role, the rows Llama and Qwen3 write that others build
 * on, and each architecture's table made from its base and its differences
 * (see architecture.h).
 */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/architectures/architecture.h"

/* llama.cpp's names (its LLM_TENSOR_NAMES): a linear's bias beside its weight. */
#define GGUF_LINEAR(name) { "blk.%d." name ".weight", "blk.%d." name ".bias" }
#define GGUF_ONE(name) { "blk.%d." name ".weight", NULL }
const struct arch_tensor arch_gguf_names[ARCH_ROLES] = {
    [ROLE_TOKEN_EMBD] = { "token_embd.weight", NULL },
    [ROLE_POS_EMBD] = { "position_embd.weight", NULL },
    [ROLE_OUTPUT_NORM] = { "output_norm.weight", NULL },
    [ROLE_OUTPUT] = { "output.weight", NULL },
    [ROLE_ATTN_NORM] = GGUF_ONE("attn_norm"),
    [ROLE_ATTN_QKV] = GGUF_LINEAR("attn_qkv"),
    [ROLE_ATTN_Q] = GGUF_LINEAR("attn_q"),
    [ROLE_ATTN_K] = GGUF_LINEAR("attn_k"),
    [ROLE_ATTN_V] = GGUF_LINEAR("attn_v"),
    [ROLE_ATTN_OUT] = GGUF_LINEAR("attn_output"),
    [ROLE_ATTN_Q_NORM] = GGUF_ONE("attn_q_norm"),
    [ROLE_ATTN_K_NORM] = GGUF_ONE("attn_k_norm"),
    [ROLE_FFN_NORM] = GGUF_ONE("ffn_norm"),
    [ROLE_ATTN_POST_NORM] = GGUF_ONE("post_attention_norm"),
    [ROLE_FFN_POST_NORM] = GGUF_ONE("post_ffw_norm"),
    [ROLE_FFN_GATE] = GGUF_LINEAR("ffn_gate"),
    [ROLE_FFN_UP] = GGUF_LINEAR("ffn_up"),
    [ROLE_FFN_DOWN] = GGUF_LINEAR("ffn_down"),
    [ROLE_FFN_ROUTER] = GGUF_LINEAR("ffn_gate_inp"),
    [ROLE_EXPERT_GATE] = GGUF_ONE("ffn_gate_exps"),
    [ROLE_EXPERT_UP] = GGUF_ONE("ffn_up_exps"),
    [ROLE_EXPERT_DOWN] = GGUF_ONE("ffn_down_exps"),
    [ROLE_EXPERT_GATE_UP] = { NULL, NULL },
    [ROLE_SHARED_GATE] = GGUF_ONE("ffn_gate_shexp"),
    [ROLE_SHARED_UP] = GGUF_ONE("ffn_up_shexp"),
    [ROLE_SHARED_DOWN] = GGUF_ONE("ffn_down_shexp"),
    [ROLE_SHARED_ROUTER] = GGUF_ONE("ffn_gate_inp_shexp"),
    [ROLE_ATTN_SINKS] = GGUF_ONE("attn_sinks"),
    /* (llama.cpp's qwen35 names for Gated DeltaNet's) */
    [ROLE_GDN_QKV] = GGUF_ONE("attn_qkv"),
    [ROLE_GDN_Z] = GGUF_ONE("attn_gate"),
    [ROLE_GDN_B] = GGUF_ONE("ssm_beta"),
    [ROLE_GDN_A] = GGUF_ONE("ssm_alpha"),
    [ROLE_GDN_CONV] = GGUF_ONE("ssm_conv1d"),
    [ROLE_GDN_DT_BIAS] = { "blk.%d.ssm_dt.bias", NULL },
    [ROLE_GDN_A_LOG] = { "blk.%d.ssm_a", NULL },
    [ROLE_GDN_NORM] = GGUF_ONE("ssm_norm"),
    [ROLE_GDN_OUT] = GGUF_ONE("ssm_out"),
    /* (llama.cpp's gemma4 names) */
    [ROLE_PLE_EMBD] = { "per_layer_token_embd.weight", NULL },
    [ROLE_PLE_MODEL_PROJ] = { "per_layer_model_proj.weight", NULL },
    [ROLE_PLE_PROJ_NORM] = { "per_layer_proj_norm.weight", NULL },
    [ROLE_PLE_GATE] = GGUF_ONE("inp_gate"),
    [ROLE_PLE_PROJ] = GGUF_ONE("proj"),
    [ROLE_PLE_NORM] = GGUF_ONE("post_norm"),
    [ROLE_LAYER_SCALAR] = GGUF_ONE("layer_output_scale"),
};

/*
 * A role's names in Hugging Face's layout (model.layers.N.) and the book's
 * (trf_blocks.N.); the GGUF's are arch_gguf_names'.  NORM is what the
 * book's RMSNorm calls its scale: "weight" in its Llama, "scale" in its
 * Qwen3.
 */
#define LLAMA_LINEAR(role, hf, book)                                                       \
    { role,                                                                                \
      { [ARCH_HF] = { "layers.%d." hf ".weight", "layers.%d." hf ".bias" },              \
        [ARCH_BOOK] = { "trf_blocks.%d." book ".weight", "trf_blocks.%d." book ".bias" } } }
#define LLAMA_ROWS(norm)                                                                   \
    { ROLE_TOKEN_EMBD,                                                                     \
      { [ARCH_HF] = { "embed_tokens.weight", NULL }, [ARCH_BOOK] = { "tok_emb.weight", NULL } } }, \
    { ROLE_OUTPUT_NORM,                                                                    \
      { [ARCH_HF] = { "norm.weight", NULL }, [ARCH_BOOK] = { "final_norm." norm, NULL } } }, \
    { ROLE_OUTPUT,                                                                         \
      { [ARCH_HF] = { "lm_head.weight", NULL }, [ARCH_BOOK] = { "out_head.weight", NULL } } }, \
    { ROLE_ATTN_NORM,                                                                      \
      { [ARCH_HF] = { "layers.%d.input_layernorm.weight", NULL },                         \
        [ARCH_BOOK] = { "trf_blocks.%d.norm1." norm, NULL } } },                           \
    LLAMA_LINEAR(ROLE_ATTN_Q, "self_attn.q_proj", "att.W_query"),                          \
    LLAMA_LINEAR(ROLE_ATTN_K, "self_attn.k_proj", "att.W_key"),                            \
    LLAMA_LINEAR(ROLE_ATTN_V, "self_attn.v_proj", "att.W_value"),                          \
    LLAMA_LINEAR(ROLE_ATTN_OUT, "self_attn.o_proj", "att.out_proj"),                       \
    { ROLE_ATTN_Q_NORM,                                                                    \
      { [ARCH_HF] = { "layers.%d.self_attn.q_norm.weight", NULL },                        \
        [ARCH_BOOK] = { "trf_blocks.%d.att.q_norm.scale", NULL } } },                      \
    { ROLE_ATTN_K_NORM,                                                                    \
      { [ARCH_HF] = { "layers.%d.self_attn.k_norm.weight", NULL },                        \
        [ARCH_BOOK] = { "trf_blocks.%d.att.k_norm.scale", NULL } } },                      \
    { ROLE_FFN_NORM,                                                                       \
      { [ARCH_HF] = { "layers.%d.post_attention_layernorm.weight", NULL },                \
        [ARCH_BOOK] = { "trf_blocks.%d.norm2." norm, NULL } } },                           \
    LLAMA_LINEAR(ROLE_FFN_GATE, "mlp.gate_proj", "ff.fc1"),                                \
    LLAMA_LINEAR(ROLE_FFN_UP, "mlp.up_proj", "ff.fc2"),                                    \
    LLAMA_LINEAR(ROLE_FFN_DOWN, "mlp.down_proj", "ff.fc3")

const struct arch_name arch_llama_rows[ARCH_LLAMA_ROWS] = { LLAMA_ROWS("weight") };
const struct arch_name arch_qwen3_rows[ARCH_QWEN3_ROWS] = { LLAMA_ROWS("scale") };
/* (the count the header gives is the rows written: a row more or less does not compile) */
_Static_assert(sizeof((const struct arch_name[]){ LLAMA_ROWS("weight") }) ==
                   ARCH_LLAMA_ROWS * sizeof(struct arch_name),
               "ARCH_LLAMA_ROWS counts the rows");

/* ------------------------------------------------------------ composing */

/* Each architecture's composed table, made the first time it is asked for. */
#define COMPOSED_MAX 64
static struct composed {
    const struct architecture *arch;
    struct arch_name rows[ARCH_ROLES];
    int count;
} composed[COMPOSED_MAX];
static int composed_count;
static pthread_mutex_t composing = PTHREAD_MUTEX_INITIALIZER;

/* row's GGUF names filled from the map where it gives none; ARCH_NO_TENSOR made NULL. */
static struct arch_name
filled(const struct arch_name *row)
{
    struct arch_name r = *row;

    if (r.in[ARCH_GGUF].weight == NULL && (unsigned)r.role < ARCH_ROLES)
        r.in[ARCH_GGUF] = arch_gguf_names[r.role];
    for (int l = 0; l < ARCH_LAYOUTS; l++) {
        if (r.in[l].weight != NULL && r.in[l].weight[0] == '\0')
            r.in[l].weight = NULL;
        if (r.in[l].bias != NULL && r.in[l].bias[0] == '\0')
            r.in[l].bias = NULL;
    }
    return r;
}

/* The row of role in rows, or NULL. */
static const struct arch_name *
row_of(const struct arch_name *rows, int count, enum arch_role role)
{
    for (int i = 0; i < count; i++)
        if (rows[i].role == role)
            return &rows[i];
    return NULL;
}

static void
compose(const struct architecture *a, struct composed *c)
{
    c->arch = a;
    c->count = 0;
    for (int i = 0; i < a->base_count && c->count < ARCH_ROLES; i++) {
        const struct arch_name *own = row_of(a->names, a->name_count, a->base[i].role);
        c->rows[c->count++] = filled(own != NULL ? own : &a->base[i]);
    }
    for (int i = 0; i < a->name_count && c->count < ARCH_ROLES; i++)
        if (row_of(a->base, a->base_count, a->names[i].role) == NULL)
            c->rows[c->count++] = filled(&a->names[i]);
}

const struct arch_name *
arch_rows(const struct architecture *a, int *count)
{
    struct composed *c = NULL;

    pthread_mutex_lock(&composing);
    for (int i = 0; i < composed_count && c == NULL; i++)
        if (composed[i].arch == a)
            c = &composed[i];
    if (c == NULL && composed_count < COMPOSED_MAX) {
        c = &composed[composed_count];
        compose(a, c);
        composed_count++;
    }
    pthread_mutex_unlock(&composing);
    if (c == NULL) {
        /* (more architectures than the cache holds: made again, for this thread) */
        static _Thread_local struct composed spare;
        compose(a, &spare);
        c = &spare;
    }
    *count = c->count;
    return c->rows;
}

/* ------------------------------------------------------------ the names of a file */

const char *
arch_name(const struct arch_loader *ld, enum arch_role role, int layer, bool bias, char *buf,
          size_t size)
{
    int count;
    const struct arch_name *rows = arch_rows(ld->arch, &count);

    for (int i = 0; i < count; i++)
        if (rows[i].role == role) {
            const struct arch_tensor *t = &rows[i].in[ld->layout->layout];
            const char *format = bias ? t->bias : t->weight;
            if (format == NULL)
                return NULL;
            snprintf(buf, size, format, layer, ld->expert);
            return buf;
        }
    return NULL;
}

bool
arch_has(const struct arch_loader *ld, enum arch_role role, int layer)
{
    char name[160];

    return arch_name(ld, role, layer, false, name, sizeof name) != NULL &&
           weights_find(&ld->w, name) != NULL;
}

int64_t
arch_dim(const struct arch_loader *ld, enum arch_role role, int layer, int d)
{
    char name[160];

    return arch_name(ld, role, layer, false, name, sizeof name) != NULL
               ? weights_dim(&ld->w, name, d)
               : -1;
}

/* The first per-layer role of the table that ld's layout has: what counts the layers. */
enum arch_role
arch_layer_role(const struct arch_loader *ld)
{
    int count;
    const struct arch_name *rows = arch_rows(ld->arch, &count);

    for (int i = 0; i < count; i++) {
        const struct arch_tensor *t = &rows[i].in[ld->layout->layout];
        if (t->weight != NULL && strstr(t->weight, "%d") != NULL)
            return rows[i].role;
    }
    return ROLE_ATTN_NORM;
}

int
arch_count_layers(const struct arch_loader *ld)
{
    const enum arch_role role = arch_layer_role(ld);
    int count;
    const struct arch_name *rows = arch_rows(ld->arch, &count);

    for (int i = 0; i < count; i++)
        if (rows[i].role == role && rows[i].in[ld->layout->layout].weight)
            return weights_count_blocks(&ld->w, rows[i].in[ld->layout->layout].weight, 1 << 24);
    return 0;
}

/*
 * The short name of a tensor named format: the layer's part ("h.%d.",
 * "model/h%d/") and the parameter's ("weight", "/g") left off, then its
 * last part ("attn.c_attn" -> "c_attn"), or the whole when that is a
 * number (the book's "ff.layers.0").
 */
static void
short_name(const char *format, char *buf, size_t size)
{
    const char *from = strstr(format, "%d");
    const char *end = format + strlen(format);
    const char *last;

    from = from != NULL ? from + 3 : format; /* past "%d." or "%d/" */
    if (from > end)
        from = end;
    for (const char *s = end; s > from; s--)
        if (s[-1] == '.' || s[-1] == '/') {
            /* "model/wte" keeps its last part: a name only, no parameter. */
            if (strcmp(s, "weight") == 0 || strcmp(s, "bias") == 0 || strcmp(s, "scale") == 0 ||
                strcmp(s, "shift") == 0 || strlen(s) == 1)
                end = s - 1;
            break;
        }
    for (last = end; last > from && last[-1] != '.' && last[-1] != '/'; last--)
        ;
    if (last < end && last[0] >= '0' && last[0] <= '9')
        last = from;
    snprintf(buf, size, "%.*s", (int)(end - last), last);
}

/* The screens' name of every role ld's layout has (decoder_model's part_names). */
void
arch_name_parts(struct arch_loader *ld)
{
    struct decoder_model *m = ld->w.m;

    int count;
    const struct arch_name *rows = arch_rows(ld->arch, &count);

    memset(m->part_names, 0, sizeof m->part_names);
    for (int i = 0; i < count; i++) {
        const char *w = rows[i].in[ld->layout->layout].weight;
        if (w != NULL)
            short_name(w, m->part_names[rows[i].role], sizeof m->part_names[rows[i].role]);
    }
}
