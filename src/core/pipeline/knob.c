/* knob.c: the knob table (see knob.h). */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/pipeline/knob.h"
#include "attnscope/pipeline/pipeline.h"
#include "knob_internal.h"

/* ------------------------------------------------------------ variant */

static int
parse_variant(struct attention_config *c, const char *option, const char *text, char *err,
              size_t size)
{
    enum attn_variant v;

    if (attention_variant_parse(text, &v) != 0)
        return attn_fail_text(err, size,
                    "%s: '%s' is not a variant; choose simple, v1, v2, causal, wrapper or mha",
                    option, text);
    attention_config_set_variant(c, v);
    return 0;
}

static int
step_variant(struct attention_config *c, int dir, const struct pipeline *p, char *msg, size_t size)
{
    int v = ((int)c->variant + dir + ATTN_VARIANT_COUNT) % ATTN_VARIANT_COUNT;

    if (p->qkv_given) {
        snprintf(msg, size, "Q, K and V are given directly: only simple (no weights) applies");
        return -1;
    }
    /* Across sentences, the variants with weights only (simple has none to project with). */
    while (c->cross && !attention_variant_has_weights((enum attn_variant)v))
        v = (v + dir + ATTN_VARIANT_COUNT) % ATTN_VARIANT_COUNT;
    attention_config_set_variant(c, (enum attn_variant)v);
    if (attention_variant_info(c->variant)->proj == PROJ_LINEAR_SPLIT && c->d_out % c->heads != 0)
        c->d_out = c->heads * (c->d_out / c->heads > 0 ? c->d_out / c->heads : 1);
    /* notes and nn-mha split d_in into their heads: the most heads up to these that divide it. */
    while (attention_variant_splits_d_in(c->variant) && p->d_in % c->heads != 0)
        c->heads--;
    return 1;
}

static bool
bar_variant(const struct pipeline *p, char *full, char *terse)
{
    snprintf(full, KNOB_TEXT_MAX, "%s", attention_variant_name(p->cfg.variant));
    snprintf(terse, KNOB_TEXT_MAX, "%s", full);
    return true;
}

static void
said_variant(const struct pipeline *p, char *msg, size_t size)
{
    /* The book draws SelfAttention_v2's weights after torch.manual_seed(789) (listing 3.2). */
    const bool v2_book_seed = strcmp(attention_variant_name(p->cfg.variant), "v2") == 0 &&
                              p->cfg.seed != 789;

    snprintf(msg, size, "variant %s: %s (%s)%s", attention_variant_name(p->cfg.variant),
             attention_variant_class(p->cfg.variant), attention_variant_description(p->cfg.variant),
             v2_book_seed ? "; seed kept: the book's v2 uses seed 789 (: seed 789)" : "");
}

/* --------------------------------------------------------------- d_out */

static int
parse_d_out(struct attention_config *c, const char *option, const char *text, char *err, size_t size)
{
    return knob_parse_int(option, text, 1, ATTN_MAX_DIM, &c->d_out, err, size);
}

static int
step_d_out(struct attention_config *c, int dir, const struct pipeline *p, char *msg, size_t size)
{
    (void)p;
    if (!attention_variant_has_weights(c->variant)) {
        snprintf(msg, size, "%s has no weights: its d_out is d_in", attention_variant_name(c->variant));
        return -1;
    }
    if (attention_variant_splits_d_in(c->variant)) {
        snprintf(msg, size, "%s's width is d_in, the embeddings': h splits it into heads",
                 attention_variant_name(c->variant));
        return -1;
    }
    if (attention_variant_info(c->variant)->proj == PROJ_LINEAR_SPLIT) {
        int hd = c->d_out / c->heads + dir;
        if (hd < 1)
            return 0;
        c->d_out = c->heads * hd;
    } else {
        if (c->d_out + dir < 1)
            return 0;
        c->d_out += dir;
    }
    return 1;
}

static bool
bar_d_out(const struct pipeline *p, char *full, char *terse)
{
    int d_out = attention_variant_has_weights(p->cfg.variant) &&
                        !attention_variant_splits_d_in(p->cfg.variant)
                    ? p->cfg.d_out
                    : p->d_in;

    snprintf(full, KNOB_TEXT_MAX, "d_out %d", d_out);
    snprintf(terse, KNOB_TEXT_MAX, "%d", d_out);
    return true;
}

static void
said_d_out(const struct pipeline *p, char *msg, size_t size)
{
    const struct attention_config *c = &p->cfg;

    enum attn_projection proj = attention_variant_info(c->variant)->proj;

    snprintf(msg, size, "d_out %d%s", c->d_out,
             proj == PROJ_LINEAR_SPLIT      ? " (split into the heads)"
             : proj == PROJ_LINEAR_PER_HEAD ? " per head"
                                            : "");
}

/* ---------------------------------------------------------------- bias */

static int
step_qkv_bias(struct attention_config *c, int dir, const struct pipeline *p, char *msg, size_t size)
{
    (void)dir;
    (void)p;
    if (attention_variant_splits_d_in(c->variant)) {
        snprintf(msg, size, "%s always has its biases (nn-mha's start at zero)",
                 attention_variant_name(c->variant));
        return -1;
    }
    c->qkv_bias = !c->qkv_bias;
    return 1;
}

static bool
bar_qkv_bias(const struct pipeline *p, char *full, char *terse)
{
    const bool on = p->cfg.qkv_bias || attention_variant_splits_d_in(p->cfg.variant);

    snprintf(full, KNOB_TEXT_MAX, "%s", on ? "bias" : "no bias");
    snprintf(terse, KNOB_TEXT_MAX, "%s", full);
    return true;
}

/* --------------------------------------------------------------- heads */

static int
parse_heads(struct attention_config *c, const char *option, const char *text, char *err, size_t size)
{
    return knob_parse_int(option, text, 1, ATTN_MAX_HEADS, &c->heads, err, size);
}

static int
step_heads(struct attention_config *c, int dir, const struct pipeline *p, char *msg, size_t size)
{
    if (!attention_variant_info(c->variant)->heads) {
        snprintf(msg, size,
                 "only wrapper, mha, notes and nn-mha have several heads: press v to change the variant");
        return -1;
    }
    if (attention_variant_splits_d_in(c->variant)) {
        /* The next head count that divides d_in (d_model, embed_dim), if any. */
        int h = c->heads + dir;
        while (h >= 1 && h <= p->d_in && p->d_in % h != 0)
            h += dir;
        if (h < 1 || h > p->d_in || h > ATTN_MAX_HEADS)
            return 0;
        c->heads = h;
        return 1;
    }
    if (c->heads + dir < 1)
        return 0;
    if (attention_variant_info(c->variant)->proj == PROJ_LINEAR_SPLIT)
        c->d_out = (c->d_out / c->heads) * (c->heads + dir);
    c->heads += dir;
    return 1;
}

static bool
bar_heads(const struct pipeline *p, char *full, char *terse)
{
    snprintf(full, KNOB_TEXT_MAX, "heads %d", p->st.shape.heads);
    snprintf(terse, KNOB_TEXT_MAX, "%d", p->st.shape.heads);
    return true;
}

static void
said_heads(const struct pipeline *p, char *msg, size_t size)
{
    const struct attention_config *c = &p->cfg;
    const char *why = attention_variant_info(c->variant)->proj == PROJ_LINEAR_SPLIT
                          ? " (d_out grows with them)"
                      : attention_variant_splits_d_in(c->variant) ? " (each d_in / heads wide)"
                                                                  : "";

    snprintf(msg, size, "%d head%s%s", c->heads, c->heads == 1 ? "" : "s", why);
}

/* ---------------------------------------------------------------- seed */

static int
parse_seed(struct attention_config *c, const char *option, const char *text, char *err, size_t size)
{
    return knob_parse_u64(option, text, &c->seed, err, size);
}

static int
step_seed(struct attention_config *c, int dir, const struct pipeline *p, char *msg, size_t size)
{
    (void)p;
    (void)msg;
    (void)size;
    c->seed += (uint64_t)(int64_t)dir;
    return 1;
}

static bool
bar_seed(const struct pipeline *p, char *full, char *terse)
{
    snprintf(full, KNOB_TEXT_MAX, "seed %llu", (unsigned long long)p->cfg.seed);
    snprintf(terse, KNOB_TEXT_MAX, "%llu", (unsigned long long)p->cfg.seed);
    return true;
}

bool
knob_is_model(const struct pipeline *p)
{
    return p != NULL && p->family != NULL && (p->family->stages & FAMILY_STAGE(STAGE_PRE_ATTN_NORM));
}

static void
said_seed(const struct pipeline *p, char *msg, size_t size)
{
    if (knob_is_model(p)) {
        snprintf(msg, size, "seed %llu: torch.manual_seed(%llu) before the next token is written",
                 (unsigned long long)p->cfg.seed, (unsigned long long)p->cfg.seed);
        return;
    }
    snprintf(msg, size, "seed %llu%s", (unsigned long long)p->cfg.seed,
             p->params_given ? " (the loaded weights stay; dropout redraws)" : "");
}

/* ------------------------------------------------------------- dropout */

static int
parse_dropout(struct attention_config *c, const char *option, const char *text, char *err,
              size_t size)
{
    if (knob_parse_real(option, text, &c->dropout, err, size) != 0)
        return -1;
    if (!(c->dropout >= 0.0 && c->dropout < 1.0))
        return attn_fail_text(err, size, "%s %s: p must be at least 0 and below 1", option, text);
    return 0;
}

static int
step_dropout(struct attention_config *c, int dir, const struct pipeline *p, char *msg, size_t size)
{
    double tenths = round(c->dropout * 10.0) + dir;

    (void)p;
    (void)msg;
    (void)size;
    if (tenths < 0 || tenths > 9)
        return 0;
    c->dropout = tenths / 10.0;
    return 1;
}

static bool
bar_dropout(const struct pipeline *p, char *full, char *terse)
{
    snprintf(full, KNOB_TEXT_MAX, "p %.1f", p->cfg.dropout);
    snprintf(terse, KNOB_TEXT_MAX, "%.1f", p->cfg.dropout);
    return true;
}

static void
said_dropout(const struct pipeline *p, char *msg, size_t size)
{
    const struct attention_config *c = &p->cfg;

    snprintf(msg, size, "dropout p = %.1f%s", c->dropout,
             c->dropout > 0 && !c->train ? " (evaluation mode: press t to train)" : "");
}

/* -------------------------------------------------------- dropout pass */

static int
parse_dropout_pass(struct attention_config *c, const char *option, const char *text, char *err,
                   size_t size)
{
    return knob_parse_int(option, text, 0, ATTN_MAX_DROPOUT_PASS, &c->dropout_pass, err, size);
}

/* r: the next forward call's mask; R: back to the first. */
static int
step_dropout_pass(struct attention_config *c, int dir, const struct pipeline *p, char *msg,
                  size_t size)
{
    (void)p;
    (void)msg;
    (void)size;
    if (dir > 0 && c->dropout_pass >= ATTN_MAX_DROPOUT_PASS)
        return 0;
    c->dropout_pass = dir > 0 ? c->dropout_pass + 1 : 0;
    return 1;
}

static void
said_dropout_pass(const struct pipeline *p, char *msg, size_t size)
{
    if (!p->st.dropout_on)
        snprintf(msg, size, "no dropout to redraw: raise p with o%s", p->cfg.train ? "" : " and press t");
    else
        snprintf(msg, size, "dropout mask of forward call %d", p->cfg.dropout_pass + 1);
}

/* ------------------------------------------------------- on/off knobs */

static int
parse_mask(struct attention_config *c, const char *option, const char *text, char *err, size_t size)
{
    if (strcmp(text, "causal") == 0)
        c->mask = ATTN_MASK_CAUSAL;
    else if (strcmp(text, "none") == 0)
        c->mask = ATTN_MASK_NONE;
    else
        return attn_fail_text(err, size, "%s: '%s' is not a mask; choose causal or none", option, text);
    return 0;
}

static int
step_mask(struct attention_config *c, int dir, const struct pipeline *p, char *msg, size_t size)
{
    (void)dir;
    (void)p;
    if (c->cross) {
        snprintf(msg, size, "across sentences there is no mask: the target sees every source token");
        return -1;
    }
    c->mask = c->mask == ATTN_MASK_CAUSAL ? ATTN_MASK_NONE : ATTN_MASK_CAUSAL;
    return 1;
}

static bool
bar_mask(const struct pipeline *p, char *full, char *terse)
{
    snprintf(full, KNOB_TEXT_MAX, "%s", p->cfg.mask == ATTN_MASK_CAUSAL ? "causal" : "no mask");
    snprintf(terse, KNOB_TEXT_MAX, "%s", full);
    return true;
}

static void
said_mask(const struct pipeline *p, char *msg, size_t size)
{
    snprintf(msg, size, "%s",
             p->cfg.mask == ATTN_MASK_CAUSAL ? "causal mask on" : "mask off: tokens see the future");
}

static void
said_scale(const struct pipeline *p, char *msg, size_t size)
{
    struct pipeline_scaling sc;

    pipeline_scaling_of(p, &sc);
    if (sc.root_of == 1)
        snprintf(msg, size, "scaling %s, but sqrt(1) = 1 changes nothing here: d widens the heads, "
                            "u divides by sqrt(N)",
                 sc.symbol != NULL ? "on" : "off");
    else if (sc.symbol != NULL)
        snprintf(msg, size, "scores divided by %s", sc.symbol);
    else
        snprintf(msg, size, "scaling off: softmax gets raw scores");
}

/* ----------------------------------------------------------- scale-dim */

/* --scale-dim N divides by sqrt(N); it also turns scaling on unless --no-scale says otherwise. */
static int
parse_scale_dim(struct attention_config *c, const char *option, const char *text, char *err,
                size_t size)
{
    if (knob_parse_int(option, text, 1, ATTN_MAX_DIM, &c->scale_dim, err, size) != 0)
        return -1;
    c->scale = true;
    return 0;
}

/* u U: the number under the square root doubles or halves; below 1 it is d_k again. */
static int
step_scale_dim(struct attention_config *c, int dir, const struct pipeline *p, char *msg, size_t size)
{
    int from = c->scale_dim > 0 ? c->scale_dim : p->st.shape.head_dim;
    long to = dir > 0 ? 2L * from : from / 2;

    if (!c->scale) {
        snprintf(msg, size, "scaling is off: press / to divide the scores first");
        return -1;
    }
    if (to > ATTN_MAX_DIM)
        return 0;
    if (to < 1 || to == p->st.shape.head_dim) {
        if (c->scale_dim == 0)
            return 0;
        to = 0;
    }
    c->scale_dim = (int)to;
    return 1;
}

static bool
bar_scale_dim(const struct pipeline *p, char *full, char *terse)
{
    if (p->cfg.scale_dim <= 0)
        return false;
    snprintf(full, KNOB_TEXT_MAX, "sqrt(%d)", p->cfg.scale_dim);
    snprintf(terse, KNOB_TEXT_MAX, "%d", p->cfg.scale_dim);
    return true;
}

static void
said_scale_dim(const struct pipeline *p, char *msg, size_t size)
{
    if (p->cfg.scale_dim > 0)
        snprintf(msg, size, "scores divided by sqrt(%d) instead of sqrt(d_k) = sqrt(%d)",
                 p->cfg.scale_dim, p->st.shape.head_dim);
    else
        snprintf(msg, size, "scores divided by sqrt(d_k) = sqrt(%d) again", p->st.shape.head_dim);
}

/* --------------------------------------------------------- temperature */

static int
parse_temperature(struct attention_config *c, const char *option, const char *text, char *err,
                  size_t size)
{
    if (knob_parse_real(option, text, &c->temperature, err, size) != 0)
        return -1;
    if (!(c->temperature > 0.0))
        return attn_fail_text(err, size, "%s %s: T must be above 0", option, text);
    return 0;
}

static int
step_temperature(struct attention_config *c, int dir, const struct pipeline *p, char *msg,
                 size_t size)
{
    static const double steps[] = { 0.1, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 5.0, 10.0 };
    const int n = (int)(sizeof steps / sizeof steps[0]);
    int k = 0;

    (void)p;
    (void)msg;
    (void)size;
    while (k < n - 1 && steps[k] < c->temperature - 1e-9)
        k++;
    k += dir;
    if (k < 0 || k >= n)
        return 0;
    c->temperature = steps[k];
    return 1;
}

static bool
bar_temperature(const struct pipeline *p, char *full, char *terse)
{
    attn_shortest(terse, KNOB_TEXT_MAX, p->cfg.temperature);
    snprintf(full, KNOB_TEXT_MAX, "T %s", terse);
    return true;
}

static void
said_temperature(const struct pipeline *p, char *msg, size_t size)
{
    double t = p->cfg.temperature;

    snprintf(msg, size, "softmax temperature %g: %s", t,
             t < 1 ? "sharper rows" : t > 1 ? "flatter rows" : "as the book");
}

/* ----------------------------------------------------------------- rng */

static int
parse_rng(struct attention_config *c, const char *option, const char *text, char *err, size_t size)
{
    if (strcmp(text, "default") == 0)
        c->rng_path = RNG_PATH_DEFAULT;
    else if (strcmp(text, "mkl") == 0)
        c->rng_path = RNG_PATH_MKL;
    else
        return attn_fail_text(err, size, "%s: '%s' is not a generator path; choose default or mkl", option, text);
    return 0;
}

static int
step_rng(struct attention_config *c, int dir, const struct pipeline *p, char *msg, size_t size)
{
    (void)dir;
    (void)p;
    (void)msg;
    (void)size;
    c->rng_path = c->rng_path == RNG_PATH_MKL ? RNG_PATH_DEFAULT : RNG_PATH_MKL;
    return 1;
}

static bool
bar_rng(const struct pipeline *p, char *full, char *terse)
{
    snprintf(terse, KNOB_TEXT_MAX, "%s", p->cfg.rng_path == RNG_PATH_MKL ? "mkl" : "std");
    snprintf(full, KNOB_TEXT_MAX, "rng %s", terse);
    return true;
}

static void
said_rng(const struct pipeline *p, char *msg, size_t size)
{
    snprintf(msg, size, "%s",
             p->cfg.rng_path == RNG_PATH_MKL ? "dropout as an MKL build of PyTorch draws it"
                                             : "dropout as a default build of PyTorch draws it");
}

/* -------------------------------------------------------- positional */

/* --positional: the sinusoidal encoding; --learned-positional: nn.Embedding(n, d_in). */
static int
parse_positional(struct attention_config *c, const char *option, const char *text, char *err,
                 size_t size)
{
    (void)option;
    (void)err;
    (void)size;
    c->positional = strcmp(text, "off") != 0;
    c->positional_learned = strcmp(text, "learned") == 0;
    return 0;
}

/* P: none, then sinusoidal, then learned (P again: none). */
static int
step_positional(struct attention_config *c, int dir, const struct pipeline *p, char *msg,
                size_t size)
{
    (void)dir;
    if (p->qkv_given) {
        snprintf(msg, size, "Q, K and V are given directly: there are no embeddings to add positions to");
        return -1;
    }
    if (!c->positional) {
        c->positional = true;
        c->positional_learned = false;
    } else if (!c->positional_learned) {
        c->positional_learned = true;
    } else {
        c->positional = false;
        c->positional_learned = false;
    }
    return 1;
}

static bool
bar_positional(const struct pipeline *p, char *full, char *terse)
{
    const struct attention_config *c = &p->cfg;

    snprintf(terse, KNOB_TEXT_MAX, "%s", !c->positional ? "no PE" : c->positional_learned ? "learned PE" : "PE");
    snprintf(full, KNOB_TEXT_MAX, "%s", terse);
    return true;
}

static void
said_positional(const struct pipeline *p, char *msg, size_t size)
{
    const struct attention_config *c = &p->cfg;

    snprintf(msg, size, "%s",
             !c->positional ? "positional encoding off"
             : c->positional_learned
                 ? "learned positional embedding added: nn.Embedding(n, d_in), drawn after the weights"
                 : "sinusoidal positional encoding added");
}

/* -------------------------------------------------------- dropout seed */

static int
parse_dropout_seed(struct attention_config *c, const char *option, const char *text, char *err,
                   size_t size)
{
    c->dropout_reseed = true;
    return knob_parse_u64(option, text, &c->dropout_seed, err, size);
}

/* ---------------------------------------------------------------- table */

#define FIELD(f) offsetof(struct attention_config, f), sizeof(((struct attention_config *)0)->f)
#define FIELDS(f) FIELD(f), FIELD(f)

const struct knob knob_table[] = {
    [KNOB_VARIANT] = {
        "variant", RECOMPUTE_ALL, KNOB_GROUP_ATTENTION, 0,
        { { "variant", "NAME", NULL,
            "simple | v1 | v2 | causal | wrapper | mha (default) | notes | nn-mha" } },
        parse_variant, 'v', 'V', "v V",
        "next / previous variant (simple v1 v2 causal wrapper mha notes nn-mha)",
        step_variant, "v", bar_variant, said_variant, FIELDS(variant) },
    [KNOB_D_OUT] = {
        "d_out", RECOMPUTE_ALL, KNOB_GROUP_ATTENTION, 1,
        { { "d-out", "N", NULL,
            "output size: per head for wrapper, in total for mha (default 2); notes and nn-mha "
            "keep d_in" } },
        parse_d_out, 'd', 'D', "d D", "d_out up / down (mha: a column more or less per head)",
        step_d_out, "d", bar_d_out, said_d_out, FIELDS(d_out) },
    [KNOB_HEADS] = {
        "heads", RECOMPUTE_ALL, KNOB_GROUP_ATTENTION, 1,
        { { "heads", "N", NULL,
            "heads of wrapper, mha, notes and nn-mha (default 2; notes' and nn-mha's divide d_in)" } },
        parse_heads, 'h', 'H', "h H", "heads up / down (wrapper, mha, notes, nn-mha)",
        step_heads, "h", bar_heads, said_heads, FIELDS(heads) },
    [KNOB_SEED] = {
        "seed", RECOMPUTE_ALL, KNOB_GROUP_ATTENTION, 1,
        { { "seed", "N", NULL,
            "torch.manual_seed before the parameters are drawn, or with --model before the "
            "first token is written (default 123, as the book)" } },
        parse_seed, 's', 'S', "s S", "seed up / down",
        step_seed, "s", bar_seed, said_seed, FIELDS(seed) },
    [KNOB_DROPOUT] = {
        "dropout", RECOMPUTE_ATTENTION, KNOB_GROUP_ATTENTION, 1,
        { { "dropout", "P", NULL, "dropout on the attention weights, 0 <= P < 1 (default 0)" } },
        parse_dropout, 'o', 'O', "o O", "dropout p up / down by 0.1",
        step_dropout, "o", bar_dropout, said_dropout, FIELDS(dropout) },
    [KNOB_DROPOUT_PASS] = {
        "dropout pass", RECOMPUTE_ATTENTION, KNOB_GROUP_ATTENTION, 1,
        { { "dropout-pass", "K", NULL, "the mask of the (K+1)-th forward call (default 0)" } },
        parse_dropout_pass, 'r', 'R', "r R", "draw the next dropout mask / back to the first",
        step_dropout_pass, NULL, NULL, said_dropout_pass, FIELDS(dropout_pass) },
    [KNOB_TRAIN] = {
        "training mode", RECOMPUTE_ATTENTION, KNOB_GROUP_ATTENTION, 1,
        { { "eval", NULL, "off", "evaluation mode: dropout off (--train is the default)" },
          { "train", NULL, "on", NULL } },
        NULL, 't', 0, "t", "training / evaluation mode",
        NULL, "t", NULL, NULL, FIELDS(train),
        { "train", "eval", "training mode: dropout acts", "evaluation mode: dropout off" } },
    [KNOB_MASK] = {
        "mask", RECOMPUTE_ATTENTION, KNOB_GROUP_ATTENTION, 2,
        { { "mask", "causal|none", NULL, "default: causal for causal, wrapper and mha; none otherwise" } },
        parse_mask, 'm', 0, "m", "causal mask on / off",
        step_mask, "m", bar_mask, said_mask, FIELDS(mask) },
    [KNOB_SCALE] = {
        "scaling", RECOMPUTE_ATTENTION, KNOB_GROUP_ATTENTION, 2,
        { { "no-scale", NULL, "off", "do not divide the scores by sqrt(d_k) (--scale to force it)" },
          { "scale", NULL, "on", NULL } },
        NULL, '/', 0, "/", "scaling by 1/sqrt(d_k) on / off",
        NULL, "/", NULL, said_scale, FIELDS(scale), { "scaled", "unscaled", NULL, NULL } },
    [KNOB_SCALE_DIM] = {
        "scale dimension", RECOMPUTE_ATTENTION, KNOB_GROUP_ATTENTION, 1,
        { { "scale-dim", "N", NULL, "divide by sqrt(N) instead of sqrt(d_k)" } },
        parse_scale_dim, 'u', 'U', "u U", "divide by sqrt(N) for N twice / half as large (back to d_k)",
        step_scale_dim, "u", bar_scale_dim, said_scale_dim, FIELD(scale_dim), FIELD(scale) },
    [KNOB_TEMPERATURE] = {
        "temperature", RECOMPUTE_ATTENTION, KNOB_GROUP_ATTENTION, 1,
        { { "temperature", "T", NULL, "softmax(scores / (sqrt(d_k) * T)) (default 1)" } },
        parse_temperature, '>', '<', "> <", "softmax temperature up / down",
        step_temperature, "<>", bar_temperature, said_temperature, FIELDS(temperature) },
    [KNOB_POSITIONAL] = {
        "positional encoding", RECOMPUTE_INPUTS, KNOB_GROUP_INPUT, 1,
        { { "positional", NULL, "on", "add the sinusoidal positional encoding" },
          { "learned-positional", NULL, "learned",
            "add a learned positional embedding instead: nn.Embedding(n, d_in), drawn from the "
            "seed after the weights (torch.randn's numbers)" } },
        parse_positional, 'P', 0, "P", "positional encoding: none, sinusoidal, learned",
        step_positional, "P", bar_positional, said_positional, FIELD(positional),
        FIELD(positional_learned),
        { "PE", "no PE", "positional encoding added", "positional encoding off" } },
    [KNOB_RNG] = {
        "generator path", RECOMPUTE_ATTENTION, KNOB_GROUP_ATTENTION, 1,
        { { "rng", "default|mkl", NULL,
            "how dropout draws its mask: PyTorch built without MKL (default) or with it (older "
            "x86-64 wheels)" } },
        parse_rng, 'k', 0, "k", "generator path: default / MKL",
        step_rng, "k", bar_rng, said_rng, FIELDS(rng_path) },
    [KNOB_BIAS] = {
        "bias", RECOMPUTE_ALL, KNOB_GROUP_ATTENTION, 1,
        { { "qkv-bias", NULL, "on", "give W_query, W_key and W_value a bias" } },
        NULL, 'b', 0, "b", "bias in W_query, W_key, W_value on / off",
        step_qkv_bias, "b", bar_qkv_bias, NULL, FIELDS(qkv_bias),
        { "bias", "no bias", "W_query, W_key, W_value with a bias", "no bias in W_query, W_key, W_value" } },
    [KNOB_DROPOUT_SEED] = {
        "dropout seed", RECOMPUTE_ATTENTION, KNOB_GROUP_ATTENTION, 1,
        { { "dropout-seed", "N", NULL, "reseed the generator just before dropout, as the book does" } },
        parse_dropout_seed, 0, 0, NULL, NULL,
        NULL, NULL, NULL, NULL, FIELD(dropout_seed), FIELD(dropout_reseed) },
    [KNOB_SAMPLE_TEMPERATURE] = {
        "sample temperature", RECOMPUTE_NOTHING, KNOB_GROUP_WRITING, 1,
        { { "sample-temperature", "T", NULL,
            "the book's generate's temperature: 0 (default) writes the likeliest token "
            "(argmax); above 0, softmax(logits / T) and a draw (torch.multinomial)" } },
        knob_parse_sample_temperature, 'j', 'J', "j J",
        "with --model: the writing's temperature up / down (0 is greedy)",
        knob_step_sample_temperature, "j", knob_bar_sample_temperature, knob_said_sample_temperature,
        FIELDS(sample_temperature) },
    [KNOB_TOP_K] = {
        "top-k", RECOMPUTE_NOTHING, KNOB_GROUP_WRITING, 1,
        { { "top-k", "K", NULL,
            "draw only from the K likeliest tokens (torch.topk; ties with the K-th kept)" } },
        knob_parse_top_k, 'y', 'Y', "y Y", "with --model: top-k up / down (off, 1, 3, 5, 10, 25, 50, 100)",
        knob_step_top_k, "y", knob_bar_top_k, knob_said_top_k, FIELDS(top_k) },
    [KNOB_TOP_P] = {
        "top-p", RECOMPUTE_NOTHING, KNOB_GROUP_WRITING, 1,
        { { "top-p", "P", NULL,
            "draw only from the likeliest tokens whose probabilities reach P, 0 < P <= 1 "
            "(Hugging Face's TopPLogitsWarper, after the temperature)" } },
        knob_parse_top_p, 0, 0, NULL, NULL,
        NULL, "", knob_bar_top_p, knob_said_top_p, FIELDS(top_p) },
};
_Static_assert(sizeof knob_table / sizeof knob_table[0] == KNOB_COUNT, "one row per knob");
