/*
 * pipeline_formula.c: each stage's formula as the screens print it above
 * its matrix (formula_ID for every row of PIPELINE_STAGE_LIST in
 * pipeline.h; a row without its formula is a compile error), in the words
 * of the pipeline's own model.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "attnscope/decoder/mixer.h"
#include "attnscope/pipeline/pipeline.h"

/* ----------------------------------------------------------------- formulas */

/* Whether p is a trained model's (its stages are a transformer block's). */
static bool
is_model(const struct pipeline *p)
{
    return p->family != NULL && (p->family->stages & FAMILY_STAGE(STAGE_PRE_ATTN_NORM)) != 0;
}

static const char *
formula_embeddings(const struct pipeline *p)
{
    if (is_model(p))
        return p->cfg.positional ? "wte[token id]" : "embedding[token id]";
    return "vocabulary[token]";
}

static const char *
formula_positional(const struct pipeline *p)
{
    return is_model(p) ? "wpe[position]" : p->cfg.positional_learned ? "nn.Embedding(n, d_in)" : "PE(pos, i)";
}

static const char *
formula_inputs(const struct pipeline *p)
{
    if (is_model(p) && !p->cfg.positional)
        return p->layer == 0 ? "x = embeddings (positions turn the queries and keys: RoPE)"
                             : "x = the block before's residual2";
    if (is_model(p))
        return p->layer == 0 ? "x = embeddings + positional" : "x = the block before's residual2";
    return !p->cfg.positional ? "x = embeddings"
           : p->cfg.positional_learned ? "x = embeddings + P" : "x = embeddings + PE";
}

static const char *
formula_source(const struct pipeline *p)
{
    return p->cfg.positional ? "x_src = embeddings + PE (the source sentence)"
                             : "x_src = embeddings (the source sentence)";
}

/* Whether a model's norms are RMSNorm (Llama's), not LayerNorm. */
static bool
rms(const struct pipeline *p)
{
    return p->decoder != NULL && p->decoder->norm == DECODER_NORM_RMS;
}

/* Whether the model's RMSNorm scales by 1 + w (Gemma). */
static bool
plus_one(const struct pipeline *p)
{
    return p->decoder != NULL && p->decoder->norm_plus_one;
}

/* Whether the model has no norms before attention and the MLP (Olmo's post-norm). */
static bool
post_only(const struct pipeline *p)
{
    return p->decoder != NULL && !decoder_pre_norms(p->decoder);
}

static const char *
formula_ln1(const struct pipeline *p)
{
    if (plus_one(p))
        return "RMSNorm(x) = x / sqrt(mean(x^2) + eps) * (1 + w)";
    return rms(p) ? "RMSNorm(x) = x / sqrt(mean(x^2) + eps) * g"
                  : "LayerNorm(x) = (x - mean) / sqrt(var + eps) * g + b";
}

static const char *
formula_output_normed(const struct pipeline *p)
{
    return plus_one(p) ? "RMSNorm(output) = output / sqrt(mean(output^2) + eps) * (1 + w)"
                       : "RMSNorm(output) = output / sqrt(mean(output^2) + eps) * g";
}

static const char *
formula_mlp_normed(const struct pipeline *p)
{
    return plus_one(p) ? "RMSNorm(mlp) = mlp / sqrt(mean(mlp^2) + eps) * (1 + w)"
                       : "RMSNorm(mlp) = mlp / sqrt(mean(mlp^2) + eps) * g";
}

static const char *
formula_geglu(const struct pipeline *p)
{
    (void)p;
    return "GELU(gate) * fc, GELU's tanh approximation";
}

static const char *
formula_queries_normed(const struct pipeline *p)
{
    (void)p;
    return "RMSNorm of each head's queries (q_norm), before RoPE";
}

static const char *
formula_keys_normed(const struct pipeline *p)
{
    (void)p;
    return "RMSNorm of each head's keys (k_norm), before RoPE";
}

static const char *
formula_queries_rotated(const struct pipeline *p)
{
    return p->decoder != NULL && p->decoder->qk_norm
               ? "RoPE(q_norm(Q), position): pairs (i, i + d/2) turned by pos theta^(-2i/d)"
               : "RoPE(Q, position): pairs (i, i + d/2) turned by pos theta^(-2i/d)";
}

static const char *
formula_keys_rotated(const struct pipeline *p)
{
    return p->decoder != NULL && p->decoder->qk_norm
               ? "RoPE(k_norm(K), position): pairs (i, i + d/2) turned by pos theta^(-2i/d)"
               : "RoPE(K, position): pairs (i, i + d/2) turned by pos theta^(-2i/d)";
}

static const char *
formula_gate(const struct pipeline *p)
{
    return post_only(p) ? "residual1 W_gate" : "ln2 W_gate";
}

static const char *
formula_swiglu(const struct pipeline *p)
{
    (void)p;
    return "SiLU(gate) * fc, SiLU(x) = x / (1 + e^-x)";
}

/* The projection of Q, K or V (k = 0, 1, 2) under p's variant. */
static const char *
projection(const struct pipeline *p, int k)
{
    static const char *const plain[] = { "Q = x", "K = x", "V = x" };
    static const char *const rand[] = { "Q = x W_q", "K = x W_k", "V = x W_v" };
    static const char *const lin[] = { "Q = x W_q^T", "K = x W_k^T", "V = x W_v^T" };
    static const char *const lin_b[] = { "Q = x W_q^T + b_q", "K = x W_k^T + b_k",
                                         "V = x W_v^T + b_v" };

    static const char *const model[] = { "Q = ln1 W_q + b_q", "K = ln1 W_k + b_k",
                                         "V = ln1 W_v + b_v" };

    static const char *const rotary[] = { "Q = ln1 W_q^T", "K = ln1 W_k^T", "V = ln1 W_v^T" };
    static const char *const rotary_b[] = { "Q = ln1 W_q^T + b_q", "K = ln1 W_k^T + b_k",
                                            "V = ln1 W_v^T + b_v" };

    if (p->qkv_given)
        return "given";
    if (is_model(p) && post_only(p)) /* (Olmo: the block's input itself) */
        return p->cfg.qkv_bias ? lin_b[k] : lin[k];
    if (is_model(p) && p->decoder != NULL && p->decoder->positions == DECODER_POSITIONS_ROPE)
        return p->cfg.qkv_bias ? rotary_b[k] : rotary[k];
    if (is_model(p))
        return model[k];
    switch (attention_variant_info(p->cfg.variant)->proj) {
    case PROJ_NONE:
        return plain[k];
    case PROJ_RAND:
        return rand[k];
    case PROJ_LINEAR_LISTS:
    case PROJ_IN_PROJ:
        return lin_b[k]; /* the notes' nn.Linear layers and in_proj keep their biases */
    case PROJ_LINEAR:
    case PROJ_LINEAR_PER_HEAD:
    case PROJ_LINEAR_SPLIT:
        break;
    }
    return p->cfg.qkv_bias ? lin_b[k] : lin[k];
}

static const char *
formula_queries(const struct pipeline *p)
{
    return projection(p, 0);
}

static const char *
formula_keys(const struct pipeline *p)
{
    return projection(p, 1);
}

static const char *
formula_values(const struct pipeline *p)
{
    return projection(p, 2);
}

static const char *
formula_scores(const struct pipeline *p)
{
    /* Without weights Q = K = x (section 3.3's dot products); one head: no _h. */
    if (!p->qkv_given && !attention_variant_has_weights(p->cfg.variant))
        return p->cfg.cross ? "x x_src^T" : "x x^T";
    return p->st.shape.heads > 1 ? "Q_h K_h^T" : "Q K^T";
}

static const char *
formula_masked(const struct pipeline *p)
{
    if (p->cfg.mask == ATTN_MASK_NONE)
        return "scores (no mask)";
    /* (a sliding layer's: its window's width is in the header and the title) */
    return p->window > 0 ? "scores, -inf where j > i or j <= i - window" : "scores, -inf where j > i";
}

static const char *
formula_scaled(const struct pipeline *p)
{
    struct pipeline_scaling sc;

    pipeline_scaling_of(p, &sc);
    if (p->decoder != NULL && p->decoder->attn_softcap > 0.0) /* (Gemma 2's) */
        return "cap tanh(masked / divisor / cap): attn_logit_softcapping";
    if (sc.symbol == NULL)
        return sc.temperature ? "masked / T" : "masked (not scaled)";
    if (p->decoder != NULL && p->scale_scalar > 0.0 && p->cfg.scale_dim == 0)
        return sc.temperature ? "masked / (sqrt(query_pre_attn_scalar) T)"
                              : "masked / sqrt(query_pre_attn_scalar)";
    if (p->cfg.scale_dim > 0)
        return sc.temperature ? "masked / (sqrt(--scale-dim) T)" : "masked / sqrt(--scale-dim)";
    return sc.temperature ? "masked / (sqrt(d_k) T)" : "masked / sqrt(d_k)";
}

static const char *
formula_weights(const struct pipeline *p)
{
    struct pipeline_scaling sc;

    /* What softmax is given: the scaled scores only when something divided them. */
    pipeline_scaling_of(p, &sc);
    if (sc.symbol != NULL || sc.temperature)
        return "softmax(scaled) by row";
    return p->cfg.mask == ATTN_MASK_NONE ? "softmax(scores) by row" : "softmax(masked) by row";
}

static const char *
formula_dropped(const struct pipeline *p)
{
    return p->st.dropout_on ? "dropout(weights)" : "weights (no dropout)";
}

static const char *
formula_averaged(const struct pipeline *p)
{
    (void)p;
    return "sum_h dropped_h / H (nn.MultiheadAttention's returned weights)";
}

static const char *
formula_context(const struct pipeline *p)
{
    /* What V multiplies: the weights (a model, or dropout on the output), else the dropped ones. */
    const bool weights = is_model(p) || p->st.shape.dropout_output;

    if (!p->qkv_given && !attention_variant_has_weights(p->cfg.variant))
        return weights ? "weights x (V = x)" : "dropped x (V = x)";
    if (p->st.shape.heads > 1)
        return weights ? "weights_h V_h, concatenated" : "dropped_h V_h, concatenated";
    return weights ? "weights V" : "dropped V";
}

static const char *
formula_attn_gate(const struct pipeline *p)
{
    (void)p;
    return "ln1 W_q, each head's second half: its output gate";
}

static const char *
formula_gated(const struct pipeline *p)
{
    (void)p;
    return "context * sigmoid(attn_gate)";
}

static const char *
formula_delta_qkv(const struct pipeline *p)
{
    (void)p;
    return "ln1 W_qkv: queries | keys | values";
}

static const char *
formula_delta_conv(const struct pipeline *p)
{
    (void)p;
    return "SiLU(sum over the last taps of delta_qkv, one filter per channel)";
}

static const char *
formula_delta_q(const struct pipeline *p)
{
    (void)p;
    return "q / |q| / sqrt(d_k), from delta_conv";
}

static const char *
formula_delta_k(const struct pipeline *p)
{
    (void)p;
    return "k / |k|, from delta_conv";
}

static const char *
formula_beta(const struct pipeline *p)
{
    (void)p;
    return "sigmoid(ln1 W_b)";
}

static const char *
formula_decay(const struct pipeline *p)
{
    (void)p;
    return "g = -exp(A_log) softplus(ln1 W_a + dt_bias)";
}

static const char *
formula_effective(const struct pipeline *p)
{
    (void)p;
    return "M[t,s] = beta_s k_s . (prod over r in (s,t] of e^g_r (I - beta_r k_r k_r^T)) q_t";
}

static const char *
formula_delta_read(const struct pipeline *p)
{
    (void)p;
    return "S = e^g S (I - beta k k^T) + beta v k^T;  o = S q";
}

static const char *
formula_delta_normed(const struct pipeline *p)
{
    (void)p;
    return "RMSNorm(o) w * SiLU(ln1 W_z)";
}

static const char *
formula_output(const struct pipeline *p)
{
    if (p->decoder != NULL && decoder_mixer_of(p->decoder, p->layer) == &decoder_mixer_gdn)
        return "delta_normed W_out";
    if (p->decoder != NULL && p->decoder->attn_gate)
        return "gated W_o";
    if (is_model(p))
        return "context W_o + b_o";
    return attention_variant_has_out_proj(p->cfg.variant) ? "context W_o^T + b_o"
                                                          : "context (no output projection)";
}

static const char *
formula_output_dropped(const struct pipeline *p)
{
    return p->st.dropout_on ? "dropout(output)" : "output (no dropout)";
}

static const char *
formula_residual1(const struct pipeline *p)
{
    return p->decoder != NULL && decoder_post_norms(p->decoder) ? "x + output_normed"
                                                               : "x + output";
}

static const char *
formula_ln2(const struct pipeline *p)
{
    return rms(p) ? "RMSNorm(residual1)" : "LayerNorm(residual1)";
}

static const char *
formula_router(const struct pipeline *p)
{
    if (p->decoder != NULL && p->decoder->moe.router_topk_softmax) /* (gpt-oss's, with its bias) */
        return "softmax(ln2 W_router + b); each token's top k logits softmaxed among themselves";
    return p->decoder != NULL && p->decoder->moe.norm_topk
               ? "softmax(ln2 W_router); each token's top k, divided by their sum"
               : "softmax(ln2 W_router); each token's top k weigh their experts";
}

static const char *
formula_shared(const struct pipeline *p)
{
    (void)p;
    return "sigmoid(ln2 w_shared_gate) (SiLU(ln2 W_gate) * ln2 W_up) W_down, the shared "
           "expert's";
}

static const char *
formula_fc(const struct pipeline *p)
{
    if (post_only(p))
        return "residual1 W_up";
    return p->decoder != NULL && decoder_gated(p->decoder) ? "ln2 W_up" : "ln2 W_fc + b_fc";
}

static const char *
formula_gelu(const struct pipeline *p)
{
    (void)p;
    return "0.5 fc (1 + tanh(sqrt(2/pi) (fc + 0.044715 fc^3)))";
}

static const char *
formula_mlp(const struct pipeline *p)
{
    if (p->decoder != NULL && decoder_sparse(p->decoder, p->layer))
        return "sum over the chosen experts e of routed_e (swiglu_e W_down_e)";
    if (p->decoder != NULL && p->decoder->mlp == DECODER_MLP_GEGLU)
        return "geglu W_down";
    return p->decoder != NULL && p->decoder->mlp == DECODER_MLP_SWIGLU ? "swiglu W_down"
                                                                       : "gelu W_proj + b_proj";
}

static const char *
formula_residual2(const struct pipeline *p)
{
    return p->decoder != NULL && decoder_post_norms(p->decoder) ? "residual1 + mlp_normed"
                                                               : "residual1 + mlp";
}

static const char *
formula_final(const struct pipeline *p)
{
    return rms(p) ? "RMSNorm(the last residual2)" : "LayerNorm(the last residual2) (ln_f)";
}

/* ------------------------------------------------------------------ table */

static const char *(*const formulas[])(const struct pipeline *p) = {
#define PIPELINE_STAGE_FORMULA(e, id, per_head, cells, needs) [e] = formula_##id,
    PIPELINE_STAGE_LIST(PIPELINE_STAGE_FORMULA)
#undef PIPELINE_STAGE_FORMULA
};
_Static_assert(sizeof formulas / sizeof formulas[0] == STAGE_COUNT, "one formula per stage");

const char *
pipeline_stage_formula(const struct pipeline *p, enum pipeline_stage s)
{
    return (unsigned)s < STAGE_COUNT ? formulas[s](p) : "?";
}
