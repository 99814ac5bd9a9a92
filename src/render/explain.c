/*
 * explain.c: the view's stage table, titles, formulas and explanations
 * (see explain.h).
 *
 * The explanations are attnscope's own, written from the material of the
 * book's chapter 3 and the lecture notes the README names (Zhitomirsky's
 * "Transformers", a Greek course's "Attention mechanisms").
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "attnscope/decoder/mixer.h"
#include "attnscope/families/model/family_model.h"
#include "render/explain.h"
#include "render/parts/parts.h"

/* Whether p is a trained model's (GPT-2): its stages read differently. */
static bool
is_model(const struct pipeline *p)
{
    return pipeline_decoder(p) != NULL;
}

/* What a model's files call role's tensor ("c_attn", "q_proj", "W_query"). */
static const char *
part(const struct pipeline *p, enum arch_role role)
{
    return decoder_part_name(&pipeline_decoder(p)->model->dec, role);
}

/* Whether the model's queries, keys and values come out of one matrix (GPT-2's c_attn). */
static bool
fused_qkv(const struct pipeline *p)
{
    return pipeline_decoder(p)->model->dec.part_names[ROLE_ATTN_QKV][0] != '\0';
}

static void
formula_embeddings(const struct pipeline *p, char *buf, size_t size)
{
    const struct attention_config *c = &p->cfg;

    if (is_model(p))
        snprintf(buf, size, "%s[id_i]", part(p, ROLE_TOKEN_EMBD));
    else
        snprintf(buf, size, c->positional ? "E[token_i]" : "x_i = E[token_i]");
}

static void
formula_positional(const struct pipeline *p, char *buf, size_t size)
{
    if (is_model(p) && p->layer == 0)
        snprintf(buf, size, "x_i = %s[id_i] + %s[i]", part(p, ROLE_TOKEN_EMBD), part(p, ROLE_POS_EMBD));
    else if (is_model(p))
        snprintf(buf, size, "x = the output of the block before (residual2)");
    else if (p->cfg.positional_learned)
        snprintf(buf, size, "x_i = E[token_i] + P[i], P = nn.Embedding(n, d_in).weight");
    else
        snprintf(buf, size, "x_i = E[token_i] + PE(i), PE(i,2k) = sin(i/10000^(2k/d)), "
                            "PE(i,2k+1) = cos(...)");
}

/*
 * A model's projections: GPT-2's Conv1D (x W + b, the weights stored in by
 * out) after its layer norm; a Llama's nn.Linear layers (x W^T, a bias
 * only where the model has one: Qwen2) after RMSNorm, named by its files
 * (W_q, or the book's W_query).
 */
static void
formula_model_qkv(const struct pipeline *p, char *buf, size_t size)
{
    const bool book = pipeline_decoder(p)->model->dec.names == DECODER_NAMES_BOOK;
    /* (Olmo's post-norm: the block's input itself) */
    const char *norm = p->decoder != NULL && !decoder_pre_norms(p->decoder) ? "x"
                       : norm_is_rms(p)                                          ? "RMSNorm(x)"
                                                                         : "LN1(x)";
    const char *t = inspect_block_of(p)->q.out_in ? "^T" : "";
    const bool bias = inspect_block_of(p)->q.b != NULL;

    snprintf(buf, size, "Q = %s %s%s%s,  K = %s %s%s%s,  V = %s %s%s%s", norm,
             book ? "W_query" : "W_q", t, bias ? " + b_q" : "", norm, book ? "W_key" : "W_k", t,
             bias ? " + b_k" : "", norm, book ? "W_value" : "W_v", t, bias ? " + b_v" : "");
}

static void
formula_qkv(const struct pipeline *p, char *buf, size_t size)
{
    const struct attention_config *c = &p->cfg;
    const bool lists = attention_variant_info(c->variant)->proj == PROJ_LINEAR_LISTS;
    const char *bias = c->qkv_bias || lists ? " + b" : "";

    if (is_model(p))
        formula_model_qkv(p, buf, size);
    else if (p->qkv_given)
        snprintf(buf, size, "Q, K, V given");
    else if (!attention_variant_has_weights(c->variant))
        snprintf(buf, size, "Q = K = V = x");
    else if (c->cross && attention_variant_info(c->variant)->proj == PROJ_RAND)
        snprintf(buf, size, "Q = x W_q,  K = x_src W_k,  V = x_src W_v");
    else if (c->cross)
        snprintf(buf, size, "Q = x W_q^T%s,  K = x_src W_k^T%s,  V = x_src W_v^T%s", bias, bias, bias);
    else if (attention_variant_info(c->variant)->proj == PROJ_RAND)
        snprintf(buf, size, "Q = x W_q,  K = x W_k,  V = x W_v");
    else if (lists)
        snprintf(buf, size, "Q_h = x W_Qh^T + b_Qh,  K_h = x W_Kh^T + b_Kh,  V_h = x W_Vh^T + b_Vh");
    else
        snprintf(buf, size, "Q = x W_q^T%s,  K = x W_k^T%s,  V = x W_v^T%s", bias, bias, bias);
}

static void
formula_context(const struct pipeline *p, char *buf, size_t size)
{
    /* Without dropout on them (a model's, the notes'), the weights themselves. */
    snprintf(buf, size, is_model(p) || p->st.shape.dropout_output ? "z_i = sum_j a_ij v_j"
                                                                   : "z_i = sum_j a'_ij v_j");
}

static void
formula_concat(const struct pipeline *p, char *buf, size_t size)
{
    snprintf(buf, size, p->st.shape.heads > 1 ? "Z = [Z_0 | Z_1 | ... ]" : "Z = Z_0");
}

static void
formula_output(const struct pipeline *p, char *buf, size_t size)
{
    const struct attention_config *c = &p->cfg;

    if (is_model(p) && p->decoder != NULL &&
        (decoder_mixer_of(p->decoder, p->layer) == &decoder_mixer_gdn ||
         p->decoder->attn_gate))
        /* (what its projection reads: the gated norm's output, or the gated context) */
        snprintf(buf, size, "out = %s", pipeline_stage_formula(p, STAGE_OUTPUT));
    else if (is_model(p))
        snprintf(buf, size, "out = Z W_o%s%s", inspect_block_of(p)->o.out_in ? "^T" : "",
                 inspect_block_of(p)->o.b != NULL ? " + b_o" : "");
    else
        snprintf(buf, size,
                 attention_variant_has_out_proj(c->variant) ? "out = Z W_o^T + b_o" : "out = Z");
}

static void
text_embeddings(const struct pipeline *p, char *buf, size_t size)
{
    const struct attention_config *c = &p->cfg;
    int made_up = 0;

    if (is_model(p) && p->decoder != NULL && p->decoder->embed_scale != 0.0f) {
        snprintf(buf, size,
                 "Each token id picks its row of %d numbers from the token embedding (%s), "
                 "times sqrt(%d) = %.4g: Gemma scales the rows it shares with the output head. "
                 "No position is added: RoPE turns the queries and keys instead.",
                 p->d_in, part(p, ROLE_TOKEN_EMBD), p->d_in, (double)p->decoder->embed_scale);
        return;
    }
    if (is_model(p) && !p->cfg.positional) {
        snprintf(buf, size,
                 "Each token id picks its row of %d numbers from the token embedding "
                 "(%s), learned in training. Nothing says where the token is: RoPE "
                 "turns every layer's queries and keys by position instead. , and . step "
                 "through the layers.",
                 p->d_in, part(p, ROLE_TOKEN_EMBD));
        return;
    }
    if (is_model(p)) {
        snprintf(buf, size,
                 "Each token id picks its row of %d numbers from the token embedding %s, learned "
                 "in training. The next stage adds the position embedding; , and . step through "
                 "the layers.",
                 p->d_in, part(p, ROLE_TOKEN_EMBD));
        return;
    }
    for (int t = 0; t < p->st.nq; t++)
        made_up += p->made_up[t];
    snprintf(buf, size,
             "Each token becomes a row of %d numbers, its embedding, looked up in the "
             "vocabulary. Everything attention does works on these rows.%s%s",
             p->d_in,
             made_up ? " Tokens marked * are not in the vocabulary: their vectors are made up "
                       "from the word itself."
                     : "",
             c->positional ? " The next stage adds the positional encoding to them." : "");
}

static void
formula_source(const struct pipeline *p, char *buf, size_t size)
{
    snprintf(buf, size, p->cfg.positional ? "x_src_j = E_src[token_j] + PE(j)" : "x_src_j = E_src[token_j]");
}

static void
text_source(const struct pipeline *p, char *buf, size_t size)
{
    snprintf(buf, size,
             "Cross-attention reads two sentences. The target's tokens (the rows from here on) "
             "ask: their queries. The source's tokens, these %d rows, answer: their keys and "
             "values, made with the same W_key and W_value. So every weight matrix is %d x %d, "
             "target by source.%s",
             p->source.rows, p->st.nq, p->st.nk,
             p->cfg.positional ? " Each sentence counts its own positions from 0." : "");
}

static void
text_positional(const struct pipeline *p, char *buf, size_t size)
{
    if (is_model(p)) {
        if (p->layer == 0)
            snprintf(buf, size,
                     "%s learns its positions instead of computing waves: the position "
                     "embedding %s has a row per position, added to the token's embedding. Shown: "
                     "the sum, what the first block reads.",
                     pipeline_decoder(p)->model->dec.title, part(p, ROLE_POS_EMBD));
        else
            snprintf(buf, size,
                     "What block %d reads: the residual stream, the embeddings plus every earlier "
                     "block's attention and MLP output. The block normalises it (%s) before "
                     "making its queries, keys and values.",
                     p->layer, part(p, ROLE_ATTN_NORM));
        return;
    }
    if (p->cfg.positional_learned) {
        snprintf(buf, size,
                 "Attention alone is blind to word order. A learned positional embedding (GPT-2's "
                 "and the book's chapter 2) gives each position its own row of %d numbers, "
                 "trained with the model; untrained, as here, they are torch.randn's numbers, "
                 "drawn from the seed after the weights. Shown: the embeddings plus those rows.",
                 p->d_in);
        return;
    }
    snprintf(buf, size,
             "Attention alone is blind to word order. Adding a different wave to each "
             "position lets the model tell first from third. Shown: the embeddings plus the "
             "encoding, the inputs Q, K and V are made from (the cell panel splits them); "
             "position 0 adds sin 0 = 0 and cos 0 = 1.");
}

/* A model's queries, keys and values: from its parts and its files' names. */
static void
text_model_qkv(const struct pipeline *p, char *buf, size_t size)
{
    const struct decoder_config *c = p->decoder;
    const int kv = decoder_kv_heads(c);
    const bool grouped = kv < c->n_head;
    size_t len = 0;

    buf[0] = '\0';
    if (fused_qkv(p)) {
        snprintf(buf, size,
                 "The block normalises its input (%s), then one learned layer, %s, gives "
                 "every token a query, a key and a value for each of the %d heads at once. "
                 "Shown: this head's columns of each (Tab: the next head).",
                 part(p, ROLE_ATTN_NORM), part(p, ROLE_ATTN_QKV), c->n_head);
        return;
    }
    if (p->decoder != NULL && !decoder_pre_norms(p->decoder))
        attn_appendf(buf, size, &len, "The block's input itself (no norm before: post-norm)");
    else
        attn_appendf(buf, size, &len, "%s (%s)", part(p, ROLE_ATTN_NORM),
                     norm_is_rms(p) ? "RMSNorm" : "layer norm");
    attn_appendf(buf, size, &len, ", then three layers %s, %s, %s and %s: ",
                 inspect_block_of(p)->q.b != NULL ? "with a bias" : "without bias",
                 part(p, ROLE_ATTN_Q), part(p, ROLE_ATTN_K), part(p, ROLE_ATTN_V));
    if (grouped)
        attn_appendf(buf, size, &len,
                     "%d query heads, %d key and value heads each shared by %d of them "
                     "(grouped-query attention).",
                     c->n_head, kv, c->n_head / kv);
    else
        attn_appendf(buf, size, &len, "a query, a key and a value for each of the %d heads.",
                     c->n_head);
    if (c->qk_norm)
        attn_appendf(buf, size, &len, " %s and %s, then RoPE, come next.",
                     part(p, ROLE_ATTN_Q_NORM), part(p, ROLE_ATTN_K_NORM));
    else if (c->positions == DECODER_POSITIONS_ROPE)
        attn_appendf(buf, size, &len, " RoPE comes next.");
    attn_appendf(buf, size, &len, " Shown: this head's columns%s (Tab: next head).",
                 grouped ? " and its key head's" : " of each");
}

static void
text_qkv(const struct pipeline *p, char *buf, size_t size)
{
    const struct attention_config *c = &p->cfg;

    if (is_model(p))
        text_model_qkv(p, buf, size);
    else if (p->qkv_given)
        snprintf(buf, size,
                 "Here queries, keys and values are given directly (%d queries, %d keys): a "
                 "query asks, the keys are what it is compared with, the values what it gets "
                 "back in proportion to the matches.",
                 p->st.nq, p->st.nk);
    else if (c->cross)
        snprintf(buf, size,
                 "Queries come from the target's rows, keys and values from the source's, "
                 "through the same three learned matrices. A row here pairs target token i "
                 "(its query) with source token i (its key and value).%s",
                 p->st.shape.heads > 1 ? " Shown: this head's columns (Tab: the next head)." : "");
    else if (attention_variant_info(c->variant)->proj == PROJ_LINEAR_LISTS)
        snprintf(buf, size,
                 "Every head has its own three nn.Linear layers with a bias, each d_model / "
                 "heads = %d wide, kept in three lists: all the query layers were made first, "
                 "then the keys', then the values'. Shown: this head's (Tab: the next head).",
                 p->st.shape.head_dim);
    else if (!attention_variant_has_weights(c->variant))
        snprintf(buf, size,
                 "This variant has no trainable weights: each token's embedding serves as "
                 "its query (what it looks for), its key (what it offers to be found by) and "
                 "its value (what it passes on).");
    else
        snprintf(buf, size,
                 "Three learned matrices give every token three roles: a query (what it "
                 "looks for), a key (what it can be found by) and a value (what it passes "
                 "on).%s",
                 p->st.shape.heads > 1 ? " Shown: this head's columns of each (Tab: the next head)."
                                       : "");
}

static void
text_outdrop(const struct pipeline *p, char *buf, size_t size)
{
    if (p->st.dropout_on)
        snprintf(buf, size,
                 "The notes' class drops the output, not the weights: each value of the "
                 "projection is zeroed with probability p, the rest multiplied by 1/(1-p). "
                 "The weights and the context above are untouched. Press r for a new mask.");
    else
        snprintf(buf, size,
                 "The notes' class applies its dropout here, to the projection's output (the "
                 "book's classes drop weights). It is %s: the output passes unchanged.%s",
                 p->cfg.train ? "off (p = 0)" : "evaluation mode",
                 p->cfg.train ? " Press o to raise p." : " Press t for training mode.");
}

static void
formula_outdrop(const struct pipeline *p, char *buf, size_t size)
{
    if (p->st.dropout_on)
        snprintf(buf, size, "out'_ic = out_ic * keep_ic / (1 - p),  p = %g", p->cfg.dropout);
    else
        snprintf(buf, size, "out' = out (no dropout)");
}

static void
formula_average(const struct pipeline *p, char *buf, size_t size)
{
    snprintf(buf, size, "avg_ij = (a'_0,ij + ... + a'_%d,ij) / %d", p->st.shape.heads - 1,
             p->st.shape.heads);
}

static void
text_average(const struct pipeline *p, char *buf, size_t size)
{
    snprintf(buf, size,
             "nn.MultiheadAttention returns the heads' weights averaged (average_attn_weights=True, "
             "its default): one matrix for %d head%s. The output does not use it: each head's "
             "own weights made the context. Tab on the dropout stage shows each head.",
             p->st.shape.heads, p->st.shape.heads == 1 ? "" : "s");
}

static void
text_context(const struct pipeline *p, char *buf, size_t size)
{
    (void)p;
    snprintf(buf, size,
             "Each token's new vector: all the values, mixed in the proportions of its row "
             "of weights. A token that attends strongly to another takes on much of that "
             "token's value.");
}

static void
text_concat(const struct pipeline *p, char *buf, size_t size)
{
    if (p->st.shape.heads > 1)
        snprintf(buf, size,
                 "Each head attended in its own way, with %s. Their context vectors are put "
                 "side by side: %d heads of %d column%s.",
                 p->st.shape.sets > 1 ? "its own projections"
                                            : "its own slice of the projections",
                 p->st.shape.heads, p->st.shape.head_dim, p->st.shape.head_dim == 1 ? "" : "s");
    else
        snprintf(buf, size, "This variant has one head: there is nothing to concatenate.");
}

static void
text_output(const struct pipeline *p, char *buf, size_t size)
{
    const struct attention_config *c = &p->cfg;

    if (is_model(p)) {
        snprintf(buf, size,
                 "%s, a linear layer, mixes the heads' context vectors. Its output is %sadded "
                 "to the block's input (the residual), then the MLP follows; the sum of both is "
                 "what the next layer reads.",
                 part(p, ROLE_ATTN_OUT),
                 p->decoder != NULL && decoder_post_norms(p->decoder) ? "normed, then " : "");
        return;
    }
    if (p->st.shape.dropout_output)
        snprintf(buf, size,
                 "mha_linear, a last linear layer, mixes the heads' outputs so that what "
                 "different heads found can combine. The notes' class then applies dropout "
                 "to it (next stage).");
    else if (attention_variant_has_out_proj(c->variant))
        snprintf(buf, size,
                 "A last linear layer mixes the heads' outputs so that what different heads "
                 "found can combine. This is what MultiHeadAttention returns.");
    else
        snprintf(buf, size,
                 "%s has no output projection: its output is the context.",
                 attention_variant_class(c->variant));
}

/* ---------------------------------------------- a transformer block's own */

/* The block stages' formulas are the pipeline's own. */
#define BLOCK_FORMULA(id, stage)                                                \
    static void formula_##id(const struct pipeline *p, char *buf, size_t size) \
    {                                                                           \
        snprintf(buf, size, "%s", pipeline_stage_formula(p, stage));           \
    }
BLOCK_FORMULA(ln1, STAGE_PRE_ATTN_NORM)
BLOCK_FORMULA(residual1, STAGE_RESIDUAL1)
BLOCK_FORMULA(ln2, STAGE_PRE_MLP_NORM)
BLOCK_FORMULA(qnorm, STAGE_QUERIES_NORMED)
BLOCK_FORMULA(knorm, STAGE_KEYS_NORMED)
BLOCK_FORMULA(qrope, STAGE_QUERIES_ROTATED)
BLOCK_FORMULA(krope, STAGE_KEYS_ROTATED)
BLOCK_FORMULA(gate, STAGE_GATE)
BLOCK_FORMULA(router, STAGE_ROUTER)
BLOCK_FORMULA(shared, STAGE_SHARED)
BLOCK_FORMULA(attn_gate, STAGE_ATTN_GATE)
BLOCK_FORMULA(gated, STAGE_GATED)
BLOCK_FORMULA(delta_qkv, STAGE_DELTA_QKV)
BLOCK_FORMULA(delta_conv, STAGE_DELTA_CONV)
BLOCK_FORMULA(delta_q, STAGE_DELTA_Q)
BLOCK_FORMULA(delta_k, STAGE_DELTA_K)
BLOCK_FORMULA(beta, STAGE_BETA)
BLOCK_FORMULA(decay, STAGE_DECAY)
BLOCK_FORMULA(effective, STAGE_EFFECTIVE)
BLOCK_FORMULA(delta_read, STAGE_DELTA_READ)
BLOCK_FORMULA(delta_normed, STAGE_DELTA_NORMED)

BLOCK_FORMULA(fc, STAGE_UP)
BLOCK_FORMULA(gelu, STAGE_GELU)
BLOCK_FORMULA(swiglu, STAGE_SWIGLU)
BLOCK_FORMULA(geglu, STAGE_GEGLU)
BLOCK_FORMULA(outnorm, STAGE_OUTPUT_NORMED)
BLOCK_FORMULA(mlpnorm, STAGE_MLP_NORMED)
BLOCK_FORMULA(mlp, STAGE_MLP)
BLOCK_FORMULA(residual2, STAGE_RESIDUAL2)
BLOCK_FORMULA(final, STAGE_FINAL)
#undef BLOCK_FORMULA

struct view_stage_desc {
    const char *id;
    char key;
    const char *name;
    const char *brief;
    const char *title;
    bool per_head;
    enum pipeline_stage stage;
    enum arch_role role;
    void (*formula)(const struct pipeline *p, char *buf, size_t size);
    void (*text)(const struct pipeline *p, char *buf, size_t size);
};

static const struct view_stage_desc stages[] = {
#define VIEW_STAGE_DESC(e, id, key, name, brief, title, per_head, stage, role) \
    [e] = { #id, key, name, brief, title, per_head, stage, role, formula_##id, text_##id },
    VIEW_STAGE_LIST(VIEW_STAGE_DESC)
#undef VIEW_STAGE_DESC
};
_Static_assert(sizeof stages / sizeof stages[0] == VIEW_STAGE_COUNT, "one descriptor per stage");

char
explain_stage_key(enum view_stage s)
{
    return (unsigned)s < VIEW_STAGE_COUNT ? stages[s].key : 0;
}

int
explain_stage_for_key(int key, enum view_stage *s)
{
    for (int i = 0; i < VIEW_STAGE_COUNT; i++) {
        if (stages[i].key != 0 && stages[i].key == key) {
            *s = (enum view_stage)i;
            return 0;
        }
    }
    return -1;
}

const char *
explain_stage_short(enum view_stage s, bool brief)
{
    if ((unsigned)s >= VIEW_STAGE_COUNT)
        return "?";
    return brief ? stages[s].brief : stages[s].name;
}

const char *
explain_stage_name(enum view_stage s)
{
    return (unsigned)s < VIEW_STAGE_COUNT ? stages[s].id : "?";
}

char *
explain_stage_names(const char *sep, char *buf, size_t size)
{
    size_t len = 0;

    if (size > 0)
        buf[0] = '\0';
    for (int i = 0; i < VIEW_STAGE_COUNT && len < size; i++) {
        int n = snprintf(buf + len, size - len, "%s%s", i ? sep : "", stages[i].id);
        if (n < 0)
            break;
        len += (size_t)n;
    }
    return buf;
}

int
explain_stage_parse(const char *name, enum view_stage *s)
{
    for (int i = 0; i < VIEW_STAGE_COUNT; i++) {
        if (strcmp(name, stages[i].id) == 0) {
            *s = (enum view_stage)i;
            return 0;
        }
    }
    return -1;
}

/*
 * Whether the book's class of p's variant has stage s, or a knob put it
 * there: simple, v1 and v2 (SelfAttention_v1/v2) have no mask and no
 * dropout, simple no scaling, a single head nothing to concatenate, and
 * only mha, notes and nn-mha an output projection.  (The core computes
 * every stage for every variant, --print and --export included; the
 * screen shows the class's.)
 */
static bool
book_class_has(const struct pipeline *p, enum view_stage s)
{
    const struct attn_variant_info *vi = attention_variant_info(p->cfg.variant);
    const bool multi = vi->heads;

    switch (s) {
    case VIEW_MASK:
        return vi->mask != ATTN_MASK_NONE || p->cfg.mask != ATTN_MASK_NONE;
    case VIEW_SCALED:
        return vi->scaled || p->cfg.scale || p->cfg.temperature != 1.0;
    case VIEW_DROPOUT:
        return vi->mask != ATTN_MASK_NONE || multi || p->cfg.dropout > 0.0;
    case VIEW_CONCAT:
        return multi;
    case VIEW_OUTPUT:
        return attention_variant_has_out_proj(p->cfg.variant);
    default:
        return true;
    }
}

bool
explain_stage_present(const struct pipeline *p, enum view_stage s)
{
    /* The KV cache is a trained model's: the book's classes read a sentence once. */
    if (s == VIEW_CACHE && !is_model(p))
        return false;
    if ((unsigned)s >= VIEW_STAGE_COUNT || !pipeline_stage_present(p, stages[s].stage))
        return false;
    return is_model(p) || p->qkv_given || book_class_has(p, s);
}

bool
explain_stage_per_head(enum view_stage s)
{
    return (unsigned)s < VIEW_STAGE_COUNT && stages[s].per_head;
}

int
explain_stage_heads(const struct pipeline *p, enum view_stage s)
{
    const enum pipeline_stage ps = explain_pipeline_stage(p, s, false);

    /* (Q K V, the context and the cache are split by head in the columns of one matrix) */
    return explain_stage_per_head(s) && pipeline_stage_per_head(ps) ? pipeline_stage_heads(p, ps)
                                                                   : p->st.shape.heads;
}

enum pipeline_stage
explain_pipeline_stage(const struct pipeline *p, enum view_stage s, bool show_mask_matrix)
{
    /* The mask as a matrix of its own is drawn over the scores it hides. */
    if (s == VIEW_MASK && show_mask_matrix)
        return STAGE_SCORES;
    /*
     * With the positional encoding, in the order it is computed: the
     * embeddings as looked up, then the inputs with the encoding added (the
     * encoding alone is in the cell explanation and --print).
     */
    if (p != NULL && p->cfg.positional && !p->qkv_given) {
        if (s == VIEW_EMBEDDINGS)
            return STAGE_EMBEDDINGS;
        if (s == VIEW_POSITIONAL)
            return STAGE_INPUTS;
    }
    return (unsigned)s < VIEW_STAGE_COUNT ? stages[s].stage : STAGE_OUTPUT;
}

/* The tensor a model's stage s shows the work of (ARCH_ROLES: none): its row's. */
static enum arch_role
role_of(enum view_stage s)
{
    return (unsigned)s < VIEW_STAGE_COUNT ? stages[s].role : ARCH_ROLES;
}

const char *
explain_title(const struct pipeline *p, enum view_stage s, char *buf, size_t size)
{
    const char *title = (unsigned)s < VIEW_STAGE_COUNT ? stages[s].title : "?";
    const char *norm = "Layer norm";

    if (s == VIEW_MASK && p != NULL && p->window > 0) {
        snprintf(buf, size, "Sliding-window mask: the last %d keys", p->window);
        return buf;
    }
    if (s == VIEW_MASK && p != NULL && is_model(p) && p->decoder != NULL &&
        p->decoder->sliding_window > 0) {
        /* A full layer of a model that slides elsewhere: say so beside the sliding title. */
        snprintf(buf, size, "Causal mask, a full layer: every key before");
        return buf;
    }
    if (s == VIEW_MLP && p != NULL && is_model(p) && moe_shown(p)) {
        snprintf(buf, size, "MLP: the chosen experts' outputs, weighted and added");
        return buf;
    }
    if (s == VIEW_RESIDUAL1 && p != NULL && is_model(p) && p->decoder != NULL &&
        !decoder_attends(p->decoder, p->layer)) {
        /* (a layer another mixer mixes: Gated DeltaNet's output, not attention's) */
        snprintf(buf, size, "Residual: the block's input plus %s's output",
                 decoder_mixer_of(p->decoder, p->layer)->name);
        return buf;
    }
    if (p == NULL || !is_model(p) || role_of(s) == ARCH_ROLES) {
        snprintf(buf, size, "%s", title);
        return buf;
    }
    if (norm_is_rms(p))
        norm = "RMSNorm";
    if (s == VIEW_PRE_ATTN_NORM || s == VIEW_PRE_MLP_NORM)
        snprintf(buf, size, "%s (%s)", norm, part(p, role_of(s)));
    else if (s == VIEW_FINAL)
        snprintf(buf, size, "Final %s (%s), after the last block", norm_is_rms(p) ? norm : "layer norm",
                 part(p, role_of(s)));
    else
        snprintf(buf, size, "%s (%s)", title, part(p, role_of(s)));
    return buf;
}

void
explain_formula(const struct pipeline *p, enum view_stage s, char *buf, size_t size)
{
    buf[0] = '\0';
    if ((unsigned)s < VIEW_STAGE_COUNT)
        stages[s].formula(p, buf, size);
}

void
explain_text(const struct pipeline *p, enum view_stage s, char *buf, size_t size)
{
    buf[0] = '\0';
    if ((unsigned)s < VIEW_STAGE_COUNT)
        stages[s].text(p, buf, size);
}
