/*
 * explain.c: titles, formulas and explanations of the stages (see explain.h).
 *
 * The explanations are attnscope's own, written from the material of the
 * book's chapter 3 and the team's lecture notes.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "render/explain.h"

struct stage_info {
    char key;
    const char *name;
    const char *brief;
};

static const struct stage_info stages[] = {
#define VIEW_STAGE_INFO(e, key, name, brief) { key, name, brief },
    VIEW_STAGE_LIST(VIEW_STAGE_INFO)
#undef VIEW_STAGE_INFO
};

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

bool
explain_stage_present(const struct pipeline *p, enum view_stage s)
{
    if (s == VIEW_EMBEDDINGS)
        return !p->qkv_given;
    return s != VIEW_POSITIONAL || (p->cfg.positional && !p->qkv_given);
}

bool
explain_stage_per_head(enum view_stage s)
{
    return s == VIEW_QKV || s == VIEW_SCORES || s == VIEW_MASK || s == VIEW_SCALED ||
           s == VIEW_WEIGHTS || s == VIEW_DROPOUT || s == VIEW_CONTEXT;
}

enum pipeline_stage
explain_pipeline_stage(enum view_stage s, bool show_mask_matrix)
{
    switch (s) {
    case VIEW_EMBEDDINGS:
        return STAGE_INPUTS;
    case VIEW_POSITIONAL:
        return STAGE_POSITIONAL;
    case VIEW_QKV:
        return STAGE_QUERIES;
    case VIEW_SCORES:
        return STAGE_SCORES;
    case VIEW_MASK:
        return show_mask_matrix ? STAGE_SCORES : STAGE_MASKED;
    case VIEW_SCALED:
        return STAGE_SCALED;
    case VIEW_WEIGHTS:
        return STAGE_WEIGHTS;
    case VIEW_DROPOUT:
        return STAGE_DROPPED;
    case VIEW_CONTEXT:
    case VIEW_CONCAT:
        return STAGE_CONTEXT;
    case VIEW_OUTPUT:
    default:
        return STAGE_OUTPUT;
    }
}

const char *
explain_title(enum view_stage s)
{
    static const char *const titles[] = {
        "Tokens and embeddings", "Positional encoding", "Queries, keys and values",
        "Attention scores",      "Causal mask",         "Scaling",
        "Attention weights",     "Dropout",             "Context vectors",
        "Heads concatenated",    "Output projection",
    };
    return (unsigned)s < VIEW_STAGE_COUNT ? titles[s] : "?";
}

void
explain_formula(const struct pipeline *p, enum view_stage s, char *buf, size_t size)
{
    const struct attention_config *c = &p->cfg;
    const char *bias = c->qkv_bias ? " + b" : "";

    switch (s) {
    case VIEW_EMBEDDINGS:
        snprintf(buf, size, "x_i = E[token_i]%s", c->positional ? " + PE(i)" : "");
        break;
    case VIEW_POSITIONAL:
        snprintf(buf, size, "PE(i,2k) = sin(i/10000^(2k/d)), PE(i,2k+1) = cos(...)");
        break;
    case VIEW_QKV:
        if (p->qkv_given)
            snprintf(buf, size, "Q, K, V given");
        else if (c->variant == ATTN_SIMPLE)
            snprintf(buf, size, "Q = K = V = x");
        else if (c->variant == ATTN_V1)
            snprintf(buf, size, "Q = x W_q,  K = x W_k,  V = x W_v");
        else
            snprintf(buf, size, "Q = x W_q^T%s,  K = x W_k^T%s,  V = x W_v^T%s", bias, bias, bias);
        break;
    case VIEW_SCORES:
        snprintf(buf, size, "w_ij = q_i . k_j");
        break;
    case VIEW_MASK:
        snprintf(buf, size, c->mask == ATTN_MASK_CAUSAL ? "w_ij = -inf where j > i" : "no mask");
        break;
    case VIEW_SCALED:
        if (c->scale && c->temperature != 1.0)
            snprintf(buf, size, "w_ij / (sqrt(d_k) T) = w_ij / %.4g", (double)p->st.divisor);
        else if (c->scale)
            snprintf(buf, size, "w_ij / sqrt(%s) = w_ij / sqrt(%d)", c->scale_dim ? "n" : "d_k",
                     c->scale_dim ? c->scale_dim : p->st.shape.head_dim);
        else if (c->temperature != 1.0)
            snprintf(buf, size, "w_ij / T = w_ij / %g", c->temperature);
        else
            snprintf(buf, size, "w_ij (not scaled)");
        break;
    case VIEW_WEIGHTS:
        snprintf(buf, size, "a_ij = exp(s_ij) / sum_k exp(s_ik)");
        break;
    case VIEW_DROPOUT:
        if (p->st.dropout_on)
            snprintf(buf, size, "a'_ij = a_ij * keep_ij / (1 - p),  p = %g", c->dropout);
        else
            snprintf(buf, size, "a'_ij = a_ij (no dropout)");
        break;
    case VIEW_CONTEXT:
        snprintf(buf, size, "z_i = sum_j a'_ij v_j");
        break;
    case VIEW_CONCAT:
        snprintf(buf, size, p->st.shape.heads > 1 ? "Z = [Z_0 | Z_1 | ... ]" : "Z = Z_0");
        break;
    case VIEW_OUTPUT:
    default:
        snprintf(buf, size, c->variant == ATTN_MHA ? "out = Z W_o^T + b_o" : "out = Z");
        break;
    }
}

void
explain_text(const struct pipeline *p, enum view_stage s, char *buf, size_t size)
{
    const struct attention_config *c = &p->cfg;
    int made_up = 0;

    for (int t = 0; t < p->st.nq; t++)
        made_up += p->made_up[t];
    switch (s) {
    case VIEW_EMBEDDINGS:
        snprintf(buf, size,
                 "Each token becomes a row of %d numbers, its embedding, looked up in the "
                 "vocabulary. Everything attention does works on these rows.%s%s",
                 p->d_in,
                 made_up ? " Tokens marked * are not in the vocabulary: their vectors are made up "
                           "from the word itself."
                         : "",
                 c->positional ? " The positional encoding is added next." : "");
        break;
    case VIEW_POSITIONAL:
        snprintf(buf, size,
                 "Attention alone is blind to word order: shuffle the tokens and each gets the "
                 "same context. Adding a different wave pattern to each position lets the model "
                 "tell first from third. Position 0 adds sin 0 = 0 and cos 0 = 1.");
        break;
    case VIEW_QKV:
        if (p->qkv_given)
            snprintf(buf, size,
                     "Here queries, keys and values are given directly (%d queries, %d keys): a "
                     "query asks, the keys are what it is compared with, the values what it gets "
                     "back in proportion to the matches.",
                     p->st.nq, p->st.nk);
        else if (c->variant == ATTN_SIMPLE)
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
        break;
    case VIEW_SCORES:
        snprintf(buf, size,
                 "How well query i matches key j: the dot product of the two vectors, large "
                 "when they point the same way. Row i is what token i looks at, before any "
                 "normalisation.");
        break;
    case VIEW_MASK:
        if (c->mask == ATTN_MASK_CAUSAL)
            snprintf(buf, size,
                     "A language model predicts the next token, so no token may see the ones "
                     "after it. Their scores become -inf, which softmax turns into exactly 0. "
                     "Press M to see the mask itself, m to switch it off.");
        else
            snprintf(buf, size,
                     "The mask is off: every token sees every other, the future included. "
                     "Press m to hide the future again.");
        break;
    case VIEW_SCALED:
        if (c->scale)
            snprintf(buf, size,
                     "Dot products grow with d_k; large scores make softmax nearly one-hot and "
                     "learning stalls. Dividing by sqrt(d_k) keeps the scores where softmax "
                     "stays soft. Press / to switch it off and compare the weights.");
        else
            snprintf(buf, size,
                     "Scaling is off: the scores reach softmax undivided, so rows come out "
                     "peakier than they should. Press / to divide by sqrt(d_k) again.");
        break;
    case VIEW_WEIGHTS:
        snprintf(buf, size,
                 "Softmax turns each row into proportions that sum to 1: exponentiate, then "
                 "divide by the row's sum. The row's maximum is subtracted first (as PyTorch "
                 "does), which changes nothing but keeps exp from overflowing.");
        break;
    case VIEW_DROPOUT:
        if (p->st.dropout_on)
            snprintf(buf, size,
                     "In training, dropout zeroes each weight with probability p and multiplies "
                     "the survivors by 1/(1-p): the expected total stays the same, but a row no "
                     "longer sums to 1. Press r for a new mask, t for evaluation mode.");
        else if (!c->train)
            snprintf(buf, size,
                     "Evaluation mode: dropout does nothing and the weights pass unchanged. "
                     "Press t for training mode.");
        else
            snprintf(buf, size,
                     "Dropout is off (p = 0): the weights pass unchanged. Press o to raise p.");
        break;
    case VIEW_CONTEXT:
        snprintf(buf, size,
                 "Each token's new vector: all the values, mixed in the proportions of its row "
                 "of weights. A token that attends strongly to another takes on much of that "
                 "token's value.");
        break;
    case VIEW_CONCAT:
        if (p->st.shape.heads > 1)
            snprintf(buf, size,
                     "Each head attended in its own way, with %s. Their context vectors are put "
                     "side by side: %d heads of %d column%s.",
                     c->variant == ATTN_WRAPPER ? "its own projections"
                                                : "its own slice of the projections",
                     p->st.shape.heads, p->st.shape.head_dim, p->st.shape.head_dim == 1 ? "" : "s");
        else
            snprintf(buf, size, "This variant has one head: there is nothing to concatenate.");
        break;
    case VIEW_OUTPUT:
    default:
        if (c->variant == ATTN_MHA)
            snprintf(buf, size,
                     "A last linear layer mixes the heads' outputs so that what different heads "
                     "found can combine. This is what MultiHeadAttention returns.");
        else
            snprintf(buf, size,
                     "%s has no output projection: its output is the context.",
                     attention_variant_class(c->variant));
        break;
    }
}
