/* attention_config.c: knobs, their defaults and their checks (see attention_config.h). */
#include "config.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "attnscope/attention/attention_config.h"

static const struct attn_variant_info variants[] = {
#define ATTN_VARIANT_INFO(e, name, cls, desc, proj, heads, mask, scaled, drop) \
    [e] = { name, cls, desc, proj, heads, mask, scaled, drop },
    ATTN_VARIANT_LIST(ATTN_VARIANT_INFO)
#undef ATTN_VARIANT_INFO
};
_Static_assert(sizeof variants / sizeof variants[0] == ATTN_VARIANT_COUNT, "one row per variant");

const struct attn_variant_info *
attention_variant_info(enum attn_variant v)
{
    return &variants[(unsigned)v < ATTN_VARIANT_COUNT ? v : ATTN_SIMPLE];
}

bool
attention_variant_has_weights(enum attn_variant v)
{
    return attention_variant_info(v)->proj != PROJ_NONE;
}

bool
attention_variant_splits_d_in(enum attn_variant v)
{
    enum attn_projection proj = attention_variant_info(v)->proj;

    return proj == PROJ_LINEAR_LISTS || proj == PROJ_IN_PROJ;
}

bool
attention_variant_averages(enum attn_variant v)
{
    return attention_variant_info(v)->proj == PROJ_IN_PROJ;
}

bool
attention_variant_has_out_proj(enum attn_variant v)
{
    enum attn_projection proj = attention_variant_info(v)->proj;

    return proj == PROJ_LINEAR_SPLIT || attention_variant_splits_d_in(v);
}

const char *
attention_variant_name(enum attn_variant v)
{
    return (unsigned)v < ATTN_VARIANT_COUNT ? variants[v].name : "?";
}

const char *
attention_variant_class(enum attn_variant v)
{
    return (unsigned)v < ATTN_VARIANT_COUNT ? variants[v].cls : "?";
}

const char *
attention_variant_description(enum attn_variant v)
{
    return (unsigned)v < ATTN_VARIANT_COUNT ? variants[v].desc : "?";
}

int
attention_variant_parse(const char *name, enum attn_variant *v)
{
    for (int i = 0; i < ATTN_VARIANT_COUNT; i++) {
        if (strcmp(name, variants[i].name) == 0) {
            *v = (enum attn_variant)i;
            return 0;
        }
    }
    return -1;
}

void
attention_config_init(struct attention_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->d_out = 2;
    cfg->heads = 2;
    cfg->seed = 123;
    cfg->dropout = 0.0;
    cfg->train = true;
    cfg->qkv_bias = false;
    cfg->temperature = 1.0;
    cfg->positional = false;
    cfg->positional_learned = false;
    cfg->rng_path = RNG_PATH_DEFAULT;
    cfg->sample_temperature = 0.0;
    cfg->top_k = 0;
    cfg->top_p = 1.0;
    attention_config_set_variant(cfg, ATTN_MHA);
}

void
attention_config_set_variant(struct attention_config *cfg, enum attn_variant variant)
{
    cfg->variant = variant;
    cfg->mask = cfg->cross ? ATTN_MASK_NONE : attention_variant_info(variant)->mask;
    cfg->scale = attention_variant_info(variant)->scaled;
}

static bool
uses_heads(enum attn_variant v)
{
    return attention_variant_info(v)->heads;
}

void
attention_shape_of(const struct attention_config *cfg, int d_in, struct attention_shape *s)
{
    memset(s, 0, sizeof *s);
    s->d_in = d_in;
    s->heads = uses_heads(cfg->variant) ? cfg->heads : 1;
    switch (attention_variant_info(cfg->variant)->proj) {
    case PROJ_NONE:
        s->head_dim = d_in;
        s->sets = 0;
        break;
    case PROJ_LINEAR_PER_HEAD:
        s->head_dim = cfg->d_out;
        s->sets = s->heads;
        break;
    case PROJ_LINEAR_SPLIT:
        s->head_dim = s->heads > 0 ? cfg->d_out / s->heads : 0;
        s->sets = 1;
        break;
    case PROJ_LINEAR_LISTS:
        /* d = d_model // num_heads, d_model the embeddings' width. */
        s->head_dim = s->heads > 0 ? d_in / s->heads : 0;
        s->sets = s->heads;
        break;
    case PROJ_IN_PROJ:
        /* head_dim = embed_dim // num_heads, embed_dim the embeddings' width. */
        s->head_dim = s->heads > 0 ? d_in / s->heads : 0;
        s->sets = 1;
        break;
    case PROJ_RAND:
    case PROJ_LINEAR:
        s->head_dim = cfg->d_out;
        s->sets = 1;
        break;
    }
    s->d_qkv = s->heads * s->head_dim;
    s->d_set = s->sets > 0 ? s->d_qkv / s->sets : 0;
    s->d_output = !attention_variant_has_out_proj(cfg->variant) ? s->d_qkv
                  : attention_variant_splits_d_in(cfg->variant)      ? d_in
                                                                     : cfg->d_out;
    s->dropout_on = cfg->train && cfg->dropout > 0.0;
    s->dropout_output = attention_variant_info(cfg->variant)->dropout_at == ATTN_DROP_OUTPUT;
    /* Each head of the wrapper is a module of its own with its own nn.Dropout. */
    s->dropout_calls = s->sets > 1 && !s->dropout_output ? s->heads : 1;
    /* keys.shape[-1] ** 0.5 in the book; the temperature divides as well. */
    s->divisor = (cfg->scale ? sqrt((double)(cfg->scale_dim > 0 ? cfg->scale_dim : s->head_dim)) : 1.0) *
                 cfg->temperature;
}

/* The head counts that divide width, as "1, 2, 4", for a message. */
static void
head_counts_dividing(int width, char *buf, size_t size)
{
    size_t used = 0;

    buf[0] = '\0';
    for (int h = 1; h <= width && h <= ATTN_MAX_HEADS && used + 16 < size; h++)
        if (width % h == 0)
            attn_appendf(buf, size, &used, "%s%d", used ? ", " : "", h);
}

enum attn_status
attention_config_check(const struct attention_config *cfg, int d_in, struct attn_error *err)
{
    if ((unsigned)cfg->variant >= ATTN_VARIANT_COUNT)
        return attn_fail(err, ATTN_EVALUE, "--variant: unknown variant");
    if (d_in < 1 || d_in > ATTN_MAX_DIM)
        return attn_fail(err, ATTN_EVALUE, "the embeddings have %d dimensions; 1 to %d are allowed",
                         d_in, ATTN_MAX_DIM);
    if (attention_variant_has_weights(cfg->variant) && (cfg->d_out < 1 || cfg->d_out > ATTN_MAX_DIM))
        return attn_fail(err, ATTN_EVALUE, "--d-out %d: give a size from 1 to %d", cfg->d_out,
                         ATTN_MAX_DIM);
    if (uses_heads(cfg->variant) && (cfg->heads < 1 || cfg->heads > ATTN_MAX_HEADS))
        return attn_fail(err, ATTN_EVALUE, "--heads %d: give a count from 1 to %d", cfg->heads,
                         ATTN_MAX_HEADS);
    if (attention_variant_info(cfg->variant)->proj == PROJ_LINEAR_SPLIT && cfg->d_out % cfg->heads != 0) {
        /* Say what would work: the nearest d_out for these heads, and heads that divide d_out. */
        int below = cfg->d_out / cfg->heads * cfg->heads;
        int above = below + cfg->heads;
        char divisors[128];
        head_counts_dividing(cfg->d_out, divisors, sizeof divisors);
        char sizes[32];
        if (below > 0)
            snprintf(sizes, sizeof sizes, "%d or %d", below, above);
        else
            snprintf(sizes, sizeof sizes, "%d", above);
        return attn_fail(err, ATTN_EVALUE,
                         "--heads %d does not divide --d-out %d: mha splits d_out into equal heads "
                         "(try --d-out %s, or --heads %s)",
                         cfg->heads, cfg->d_out, sizes, divisors);
    }
    if (cfg->cross && !attention_variant_has_weights(cfg->variant))
        return attn_fail(err, ATTN_EVALUE,
                         "--source: --variant %s has no weights to take queries from one sentence "
                         "and keys and values from the other; choose v1, v2, causal, wrapper, mha, "
                         "notes or nn-mha",
                         attention_variant_name(cfg->variant));
    if (cfg->cross && cfg->mask == ATTN_MASK_CAUSAL)
        return attn_fail(err, ATTN_EVALUE,
                         "--mask causal: a causal mask hides a sentence's later tokens from its "
                         "own; across sentences (--source) every source token is seen: use "
                         "--mask none");
    if (cfg->cross && cfg->positional && cfg->positional_learned)
        return attn_fail(err, ATTN_EVALUE,
                         "--learned-positional: with --source each sentence would need its own "
                         "nn.Embedding; use --positional (each sentence from position 0)");
    if (attention_variant_splits_d_in(cfg->variant) && d_in % cfg->heads != 0) {
        char divisors[128];
        head_counts_dividing(d_in, divisors, sizeof divisors);
        return attn_fail(err, ATTN_EVALUE,
                         "--heads %d does not divide the embeddings' %d dimensions: %s splits "
                         "%s = d_in into equal heads (try --heads %s)",
                         cfg->heads, d_in, attention_variant_name(cfg->variant),
                         cfg->variant == ATTN_NOTES ? "d_model" : "embed_dim", divisors);
    }
    if (attention_variant_info(cfg->variant)->proj == PROJ_LINEAR_PER_HEAD &&
        (long)cfg->d_out * cfg->heads > ATTN_MAX_DIM)
        return attn_fail(err, ATTN_EVALUE,
                         "--d-out %d x --heads %d: the wrapper's concatenated width is over %d",
                         cfg->d_out, cfg->heads, ATTN_MAX_DIM);
    if (!(cfg->dropout >= 0.0 && cfg->dropout < 1.0))
        return attn_fail(err, ATTN_EVALUE, "--dropout %g: p must be at least 0 and below 1",
                         cfg->dropout);
    if (!(cfg->temperature > 0.0) || !isfinite(cfg->temperature))
        return attn_fail(err, ATTN_EVALUE, "--temperature %g: T must be a positive number",
                         cfg->temperature);
    {
        /* The divisor is used in float32: it must stay a positive, finite float there. */
        struct attention_shape s;
        float divisor;
        attention_shape_of(cfg, d_in, &s);
        divisor = (float)s.divisor;
        if (!(isfinite(divisor) && divisor >= FLT_MIN))
            return attn_fail(err, ATTN_EVALUE,
                             "--temperature %g: the scores would be divided by %g, which float32 "
                             "cannot hold; give a T from 1e-30 to 1e30",
                             cfg->temperature, s.divisor);
    }
    if (cfg->dropout_pass < 0 || cfg->dropout_pass > ATTN_MAX_DROPOUT_PASS)
        return attn_fail(err, ATTN_EVALUE, "dropout pass %d: give 0 to %d", cfg->dropout_pass,
                         ATTN_MAX_DROPOUT_PASS);
    if (cfg->scale_dim < 0 || cfg->scale_dim > ATTN_MAX_DIM)
        return attn_fail(err, ATTN_EVALUE, "--scale-dim %d: give 1 to %d", cfg->scale_dim,
                         ATTN_MAX_DIM);
    if ((unsigned)cfg->rng_path > RNG_PATH_MKL)
        return attn_fail(err, ATTN_EVALUE, "--rng: unknown generator path");
    return ATTN_OK;
}
