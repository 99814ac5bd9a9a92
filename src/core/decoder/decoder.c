/*
 * decoder.c: a decoder described by its parts: its sizes and their checks,
 * RoPE's frequencies, reading one weight or embedding row back whatever
 * holds it, and freeing it (see decoder.h; the forward is
 * decoder_forward.c, the stages made on demand decoder_layer.c, packing
 * decoder_pack.c).
 */
#include "config.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "attnscope/base/progress.h"
#include "attnscope/decoder/decoder.h"
#include "attnscope/decoder/mixer.h"
#include "attnscope/decoder/parts.h"
#include "attnscope/decoder/run.h"
#include "attnscope/files/filemap.h"
#include "attnscope/formats/quants.h"
#include "attnscope/formats/tensor.h"
#include "attnscope/kernels/linalg.h"
#include "attnscope/kernels/parallel.h"
#include "attnscope/kernels/rowops.h"
#include "attnscope/kernels/workspace.h"
#include "decoder_internal.h"

int
decoder_outputs(const struct decoder_config *c)
{
    return c->n_classes > 0 ? c->n_classes : c->vocab_size;
}

/*
 * What the arithmetic divides by, raises to or caps with: finite, and
 * positive where it divides.  Each reader refuses a bad value by its key
 * first (architecture.h's bounds); this holds whatever gave the numbers.
 */
static enum attn_status
check_numbers(const struct decoder_config *c, const char *source, const char *from,
              struct attn_error *err)
{
    const bool rope = c->positions == DECODER_POSITIONS_ROPE;
    const bool stretched =
        c->rope_scaling.linear || c->rope_scaling.llama3 || c->rope_scaling.yarn;
    const struct {
        bool used;
        double value, least;
        bool above; /* above least, or at least least */
        const char *what;
    } numbers[] = {
        { true, c->eps, 0.0, true, "the norms' epsilon" },
        { rope, c->rope_theta, 0.0, true, "RoPE's base" },
        { rope && c->sliding_window > 0, c->rope_local_theta, 0.0, true,
          "the sliding layers' RoPE base" },
        { rope && stretched, c->rope_scaling.factor, 0.0, true, "RoPE's stretch" },
        { true, c->attn_scalar, 0.0, false, "the scores' divisor" },
        { true, c->final_softcap, 0.0, false, "the logits' cap" },
        { true, c->attn_softcap, 0.0, false, "the scores' cap" },
        { true, c->embed_scale, 0.0, false, "the embeddings' scale" },
    };

    for (size_t i = 0; i < sizeof numbers / sizeof numbers[0]; i++) {
        const double x = numbers[i].value;
        if (numbers[i].used &&
            !(isfinite(x) && (numbers[i].above ? x > numbers[i].least : x >= numbers[i].least)))
            return attn_fail(err, ATTN_EPARSE, "%s: %s is %g (from %s): it must be finite and %s",
                             source, numbers[i].what, x, from,
                             numbers[i].above ? "positive" : "not negative");
    }
    if (c->sliding_window < 0)
        return attn_fail(err, ATTN_EPARSE, "%s: a window of %d keys (from %s)", source,
                         c->sliding_window, from);
    return ATTN_OK;
}

/*
 * Every layer's mixer one attnscope has; Gated DeltaNet's sizes whole (value
 * heads sharing the key heads evenly) when a layer has it; a partial RoPE
 * an even part of the head.
 */
static enum attn_status
check_mixers(const struct decoder_config *c, const char *source, const char *from,
             struct attn_error *err)
{
    const struct decoder_gdn *g = &c->gdn;
    bool gdn = false;

    for (int l = 0; l < c->n_layer && l < DECODER_LAYERS_SLIDING_MAX; l++) {
        if (decoder_mixer(c->mixer[l]) == NULL)
            return attn_fail(err, ATTN_EPARSE,
                             "%s: layer %d's mixer is number %d (from %s): attnscope has no such "
                             "mixer",
                             source, l, c->mixer[l], from);
        gdn = gdn || c->mixer[l] == DECODER_MIXER_GDN;
    }
    if (gdn && (g->k_heads < 1 || g->v_heads < 1 || g->k_dim < 1 || g->v_dim < 1 ||
                g->conv < 1 || g->conv > DECODER_GDN_CONV_MAX || g->v_heads % g->k_heads != 0 ||
                (int64_t)g->v_heads * g->v_dim > INT32_MAX / 8 ||
                (int64_t)g->k_heads * g->k_dim > INT32_MAX / 8))
        return attn_fail(err, ATTN_EPARSE,
                         "%s: linear attention of %d key heads of %d and %d value heads of %d, "
                         "a convolution of %d taps (from %s): each at least 1 (at most %d taps), "
                         "the value heads a multiple of the key heads",
                         source, g->k_heads, g->k_dim, g->v_heads, g->v_dim, g->conv, from,
                         DECODER_GDN_CONV_MAX);
    if (c->rope_dim < 0 || c->rope_dim % 2 != 0 || c->rope_dim > decoder_head_dim(c))
        return attn_fail(err, ATTN_EPARSE,
                         "%s: RoPE on %d columns of heads of %d (from %s): an even part of the "
                         "head",
                         source, c->rope_dim, decoder_head_dim(c), from);
    return ATTN_OK;
}

/* Gemma 4's sizes: the full layers' heads, the shared layers and the per-layer embeddings. */
static enum attn_status
check_shared(const struct decoder_config *c, const char *source, const char *from,
             struct attn_error *err)
{
    const int hd = c->lw.full_head_dim, kv = c->lw.full_kv_head;

    if (hd < 0 || (hd > 0 && (hd % 2 != 0 || hd > DECODER_HEAD_DIM_MAX)) || kv < 0 ||
        (kv > 0 && c->n_head % kv != 0) || c->lw.rope_angles < 0 ||
        c->lw.rope_angles > (hd > 0 ? hd : decoder_head_dim(c)) / 2)
        return attn_fail(err, ATTN_EPARSE,
                         "%s: full layers of heads of %d, %d key heads, %d pairs turned (from "
                         "%s): an even head of at most %d, key heads that divide the %d query "
                         "heads, at most half the head turned",
                         source, hd, kv, c->lw.rope_angles, from, DECODER_HEAD_DIM_MAX, c->n_head);
    if (c->lw.kv_shared < 0 || c->lw.kv_shared >= c->n_layer || c->lw.d_mlp_shared < 0 || c->lw.ple_dim < 0)
        return attn_fail(err, ATTN_EPARSE,
                         "%s: %d of %d layers sharing keys and values, an MLP of %d there, "
                         "per-layer embeddings of %d (from %s): fewer shared than the layers, "
                         "none negative",
                         source, c->lw.kv_shared, c->n_layer, c->lw.d_mlp_shared, c->lw.ple_dim, from);
    for (int l = c->n_layer - c->lw.kv_shared; c->lw.kv_shared > 0 && l < c->n_layer; l++)
        if (decoder_kv_source(c, l) == l)
            return attn_fail(err, ATTN_EPARSE,
                             "%s: layer %d shares the keys and values of an earlier %s layer "
                             "(from %s), and no layer before the shared ones is one",
                             source, l, decoder_window(c, l) > 0 ? "sliding" : "full", from);
    return ATTN_OK;
}

enum attn_status
decoder_config_check(const struct decoder_config *c, const char *source, const char *from,
                     struct attn_error *err)
{
    const struct {
        int value;
        const char *what;
    } counts[] = {
        { c->n_layer, "layers" },        { c->n_head, "query heads" },
        { c->d_model, "columns of width" }, { c->vocab_size, "tokens in the vocabulary" },
        { c->n_ctx, "positions" }, { c->d_mlp, "columns in the MLP" },
    };
    const int kv = decoder_kv_heads(c);
    int hd;

    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
        if (counts[i].value < 1)
            return attn_fail(err, ATTN_EPARSE, "%s: %d %s (from %s): a model has at least one",
                             source, counts[i].value, counts[i].what, from);
    if (c->sliding_window > 0 && c->n_layer > DECODER_LAYERS_SLIDING_MAX)
        return attn_fail(err, ATTN_EPARSE,
                         "%s: %d layers with sliding windows (from %s): attnscope keeps the "
                         "kinds of at most %d",
                         source, c->n_layer, from, DECODER_LAYERS_SLIDING_MAX);
    if (c->n_kv_head < 0 || kv < 1)
        return attn_fail(err, ATTN_EPARSE, "%s: %d key heads (from %s): a model has at least one",
                         source, c->n_kv_head, from);
    if (c->n_head % kv != 0)
        return attn_fail(err, ATTN_EPARSE,
                         "%s: %d query heads do not share %d key heads evenly (from %s)", source,
                         c->n_head, kv, from);
    if (c->head_dim < 0 || (c->head_dim == 0 && c->d_model % c->n_head != 0))
        return attn_fail(err, ATTN_EPARSE,
                         "%s: the width %d is not a multiple of the %d heads, and no head size "
                         "is given (from %s)",
                         source, c->d_model, c->n_head, from);
    hd = decoder_head_dim(c);
    if (hd < 1)
        return attn_fail(err, ATTN_EPARSE, "%s: head size %d (from %s): a head has a column",
                         source, hd, from);
    /* RoPE's frequencies are kept in the model, one per pair of a head's columns. */
    if (c->positions == DECODER_POSITIONS_ROPE && (hd % 2 != 0 || hd > DECODER_HEAD_DIM_MAX))
        return attn_fail(err, ATTN_EPARSE,
                         "%s: head size %d (from %s): RoPE turns pairs of columns, of a head of "
                         "at most %d",
                         source, hd, from, DECODER_HEAD_DIM_MAX);
    if (c->moe.n_experts < 0 ||
        (c->moe.n_experts > 0 && (c->moe.n_experts_used < 1 || c->moe.n_experts_used > c->moe.n_experts ||
                              c->moe.n_experts_used > DECODER_EXPERTS_USED_MAX ||
                              c->moe.d_expert < 1 || c->n_layer > DECODER_LAYERS_SLIDING_MAX)))
        return attn_fail(err, ATTN_EPARSE,
                         "%s: %d experts, %d chosen per token, each %d wide, over %d layers "
                         "(from %s): a mixture chooses 1 to all of its experts (at most %d), "
                         "each at least a column wide, in at most %d layers",
                         source, c->moe.n_experts, c->moe.n_experts_used, c->moe.d_expert, c->n_layer, from,
                         DECODER_EXPERTS_USED_MAX, DECODER_LAYERS_SLIDING_MAX);
    if (check_mixers(c, source, from, err) != ATTN_OK ||
        check_shared(c, source, from, err) != ATTN_OK)
        return ATTN_EPARSE;
    if ((int64_t)c->n_head * (hd > c->lw.full_head_dim ? hd : c->lw.full_head_dim) > INT32_MAX / 4)
        return attn_fail(err, ATTN_EPARSE, "%s: %d heads of %d columns (from %s) is too wide",
                         source, c->n_head, hd, from);
    return check_numbers(c, source, from, err);
}

int
decoder_head_dim(const struct decoder_config *c)
{
    return c->head_dim > 0 ? c->head_dim : c->d_model / c->n_head;
}

int
decoder_kv_heads(const struct decoder_config *c)
{
    return c->n_kv_head > 0 ? c->n_kv_head : c->n_head;
}

int
decoder_kv_head_of(const struct decoder_config *c, int h)
{
    /* Hugging Face's repeat_kv: key head j is repeated for query heads j g .. j g + g - 1. */
    return h / (c->n_head / decoder_kv_heads(c));
}

int
decoder_q_width(const struct decoder_config *c)
{
    return c->n_head * decoder_head_dim(c);
}

int
decoder_kv_width(const struct decoder_config *c)
{
    return decoder_kv_heads(c) * decoder_head_dim(c);
}

/* Whether layer is one of Gemma 4's full-attention layers with heads of their own. */
static bool
own_full_heads(const struct decoder_config *c, int layer)
{
    return c->lw.full_head_dim > 0 && layer >= 0 && layer < c->n_layer &&
           !(layer < DECODER_LAYERS_SLIDING_MAX && c->sliding[layer]);
}

int
decoder_layer_head_dim(const struct decoder_config *c, int layer)
{
    return own_full_heads(c, layer) ? c->lw.full_head_dim : decoder_head_dim(c);
}

int
decoder_layer_kv_heads(const struct decoder_config *c, int layer)
{
    return own_full_heads(c, layer) && c->lw.full_kv_head > 0 ? c->lw.full_kv_head
                                                           : decoder_kv_heads(c);
}

int
decoder_layer_q_width(const struct decoder_config *c, int layer)
{
    return c->n_head * decoder_layer_head_dim(c, layer);
}

int
decoder_layer_kv_width(const struct decoder_config *c, int layer)
{
    return decoder_layer_kv_heads(c, layer) * decoder_layer_head_dim(c, layer);
}

int
decoder_layer_kv_head_of(const struct decoder_config *c, int layer, int h)
{
    return h / (c->n_head / decoder_layer_kv_heads(c, layer));
}

int
decoder_layer_mlp(const struct decoder_config *c, int layer)
{
    return c->lw.d_mlp_shared > 0 && c->lw.kv_shared > 0 && layer >= c->n_layer - c->lw.kv_shared
               ? c->lw.d_mlp_shared
               : c->d_mlp;
}

/* The largest of what f gives for every layer. */
static int
widest(const struct decoder_config *c, int (*f)(const struct decoder_config *, int))
{
    int most = f(c, 0);

    for (int l = 1; l < c->n_layer; l++)
        if (f(c, l) > most)
            most = f(c, l);
    return most;
}

int
decoder_q_width_max(const struct decoder_config *c)
{
    return widest(c, decoder_layer_q_width);
}

int
decoder_kv_width_max(const struct decoder_config *c)
{
    return widest(c, decoder_layer_kv_width);
}

int
decoder_mlp_max(const struct decoder_config *c)
{
    return widest(c, decoder_layer_mlp);
}

int
decoder_kv_source(const struct decoder_config *c, int layer)
{
    const int first = c->n_layer - c->lw.kv_shared;

    if (c->lw.kv_shared <= 0 || layer < first || layer >= c->n_layer)
        return layer;
    for (int l = first - 1; l >= 0; l--)
        if ((decoder_window(c, l) > 0) == (decoder_window(c, layer) > 0))
            return l;
    return layer; /* (decoder_config_check refuses a shared layer with no such layer before) */
}

/* The unstretched frequencies of base theta: 1 / theta^(2t / d), each step in float32. */
static void
rope_default(double theta, int d, float *freq)
{
    for (int t = 0; t < d / 2; t++)
        freq[t] = 1.0f / powf((float)theta, (float)(2 * t) / (float)d);
}

/* Llama 3's stretch (Hugging Face's _compute_llama3_parameters), in float32. */
static float
rope_llama3(const struct decoder_rope_scaling *sc, float inv)
{
    /* Long wavelengths' frequencies divided by factor, short ones kept, the ones between blended. */
    const float factor = (float)sc->factor;
    const float wavelen = (float)(2.0 * M_PI) / inv;
    const double low_wavelen = sc->original_max / sc->low_freq_factor;
    const double high_wavelen = sc->original_max / sc->high_freq_factor;
    const float low = (wavelen > (float)low_wavelen) ? inv / factor : inv;

    if (!(wavelen < (float)high_wavelen) && !(wavelen > (float)low_wavelen)) {
        const float smooth = ((float)sc->original_max / wavelen - (float)sc->low_freq_factor) /
                             (float)(sc->high_freq_factor - sc->low_freq_factor);
        return (1.0f - smooth) * low / factor + smooth * low;
    }
    return low;
}

/* YaRN's dimension that turns `rotations` times over the original context (in double). */
static double
yarn_dim(double rotations, int d, double theta, int original)
{
    return (d * log(original / (rotations * 2.0 * M_PI))) / (2.0 * log(theta));
}

/*
 * YaRN (Hugging Face's _compute_yarn_parameters): below dimension low the
 * frequencies are kept, above high divided by factor, a linear ramp between;
 * the float32 steps as torch takes them.
 */
static void
rope_yarn(const struct decoder_config *c, int d, float *freq)
{
    const struct decoder_rope_scaling *sc = &c->rope_scaling;
    double low = yarn_dim(sc->beta_fast, d, c->rope_theta, sc->original_max);
    double high = yarn_dim(sc->beta_slow, d, c->rope_theta, sc->original_max);

    if (sc->truncate) {
        low = floor(low);
        high = ceil(high);
    }
    low = low > 0.0 ? low : 0.0;
    high = high < d - 1 ? high : (double)(d - 1);
    if (low == high)
        high += 0.001; /* (as Hugging Face keeps the ramp from dividing by zero) */
    for (int t = 0; t < d / 2; t++) {
        const float pos = powf((float)c->rope_theta, (float)(2 * t) / (float)d);
        const float extrapolated = 1.0f / pos;
        const float interpolated = 1.0f / ((float)sc->factor * pos);
        float ramp = ((float)t - (float)low) / (float)(high - low);
        float keep;
        ramp = ramp < 0.0f ? 0.0f : ramp > 1.0f ? 1.0f : ramp;
        keep = 1.0f - ramp;
        freq[t] = interpolated * (1.0f - keep) + extrapolated * keep;
    }
}

void
decoder_rope_frequencies(const struct decoder_config *c, float *freq)
{
    const int d = decoder_rope_dim(c);
    const struct decoder_rope_scaling *sc = &c->rope_scaling;

    if (sc->yarn) {
        rope_yarn(c, d, freq);
        return;
    }
    if (c->lw.rope_angles > 0) {
        /* Proportional (Gemma 4's full layers): the first pairs over the whole head, then none. */
        const int whole = c->lw.full_head_dim > 0 ? c->lw.full_head_dim : decoder_head_dim(c);
        rope_default(c->rope_theta, whole, freq);
        for (int t = c->lw.rope_angles; t < whole / 2; t++)
            freq[t] = 0.0f;
        for (int t = 0; sc->linear && t < c->lw.rope_angles; t++)
            freq[t] /= (float)sc->factor;
        return;
    }
    rope_default(c->rope_theta, d, freq);
    for (int t = 0; t < d / 2; t++) {
        if (sc->llama3)
            freq[t] = rope_llama3(sc, freq[t]);
        else if (sc->linear)
            freq[t] /= (float)sc->factor;
    }
}

void
decoder_rope_frequencies_local(const struct decoder_config *c, float *freq)
{
    if (c->sliding_rope_full) { /* (gpt-oss: the sliding layers' are the full ones') */
        decoder_rope_frequencies(c, freq);
        return;
    }
    rope_default(c->rope_local_theta > 0.0 ? c->rope_local_theta : c->rope_theta,
                 decoder_rope_dim(c), freq);
}

int
decoder_window(const struct decoder_config *c, int layer)
{
    return c->sliding_window > 0 && layer >= 0 && layer < DECODER_LAYERS_SLIDING_MAX &&
                   c->sliding[layer]
               ? c->sliding_window
               : 0;
}

int
decoder_first_key(int window, int i)
{
    return window > 0 && i - window + 1 > 0 ? i - window + 1 : 0;
}

bool
decoder_pre_norms(const struct decoder_config *c)
{
    return c->block_norms != DECODER_POST_NORM;
}

bool
decoder_post_norms(const struct decoder_config *c)
{
    return c->block_norms != DECODER_PRE_NORM;
}

bool
decoder_rope_local(const struct decoder_config *c, int layer)
{
    return decoder_window(c, layer) > 0 && !c->sliding_rope_full;
}

bool
decoder_sparse(const struct decoder_config *c, int layer)
{
    return c->moe.n_experts > 0 && layer >= 0 && layer < c->n_layer &&
           layer < DECODER_LAYERS_SLIDING_MAX && c->moe.sparse[layer];
}

int
decoder_kept_rows(const struct decoder_config *c, int layer, int n)
{
    const int w = decoder_window(c, layer);

    return w > 0 && n > w ? w : n;
}

int
decoder_experts_on(const struct decoder_config *c, const unsigned char *off, int layer)
{
    int on = 0;

    for (int e = 0; e < c->moe.n_experts; e++)
        on += off == NULL || !off[(size_t)layer * (size_t)c->moe.n_experts + (size_t)e];
    return on;
}

int
decoder_experts_too_few(const struct decoder_config *c, const unsigned char *off, int *on)
{
    for (int l = 0; l < c->n_layer; l++)
        if (decoder_sparse(c, l) && (*on = decoder_experts_on(c, off, l)) < c->moe.n_experts_used)
            return l;
    return -1;
}

bool
decoder_gated(const struct decoder_config *c)
{
    return c->mlp != DECODER_MLP_GELU;
}

int
decoder_rope_dim(const struct decoder_config *c)
{
    return c->rope_dim > 0 ? c->rope_dim : decoder_head_dim(c);
}

int
decoder_gdn_key_width(const struct decoder_config *c)
{
    return c->gdn.k_heads * c->gdn.k_dim;
}

int
decoder_gdn_key_head(const struct decoder_config *c, int h)
{
    return c->gdn.tiled ? h % c->gdn.k_heads : h / (c->gdn.v_heads / c->gdn.k_heads);
}

int
decoder_gdn_value_width(const struct decoder_config *c)
{
    return c->gdn.v_heads * c->gdn.v_dim;
}

int
decoder_gdn_conv_width(const struct decoder_config *c)
{
    return 2 * decoder_gdn_key_width(c) + decoder_gdn_value_width(c);
}

bool
decoder_attends(const struct decoder_config *c, int layer)
{
    return layer < 0 || layer >= DECODER_LAYERS_SLIDING_MAX ||
           c->mixer[layer] == DECODER_MIXER_ATTENTION;
}

int
decoder_layer_heads(const struct decoder_config *c, int layer)
{
    return decoder_attends(c, layer) ? c->n_head : c->gdn.v_heads;
}

int
decoder_head_slots(const struct decoder_config *c)
{
    return c->gdn.v_heads > c->n_head ? c->gdn.v_heads : c->n_head;
}

struct decoder_linear *
decoder_block_linear(struct decoder_block *b, int i)
{
    struct decoder_linear *all[DECODER_BLOCK_LINEARS] = {
        &b->q, &b->k, &b->v, &b->o, &b->gate, &b->up, &b->down,
        &b->gdn.qkv, &b->gdn.z, &b->gdn.b, &b->gdn.a,
    };
    if (i >= 0 && i < DECODER_BLOCK_LINEARS)
        return all[i];
    if (b->experts == NULL || i < DECODER_BLOCK_LINEARS)
        return NULL;
    if (i == DECODER_BLOCK_LINEARS)
        return &b->router;
    i -= DECODER_BLOCK_LINEARS + 1; /* (the router's out is the experts' count) */
    if (i / 3 >= b->router.out) {
        /* (then the shared expert's three and its gate, when it has them) */
        struct decoder_linear *shared[4] = { &b->shared.gate, &b->shared.up, &b->shared.down,
                                             &b->shared_gate };
        i -= 3 * b->router.out;
        return i < 4 && b->shared_gate.out > 0 ? shared[i] : NULL;
    }
    return i % 3 == 0 ? &b->experts[i / 3].gate : i % 3 == 1 ? &b->experts[i / 3].up
                                                             : &b->experts[i / 3].down;
}

int
decoder_block_linears(const struct decoder_config *c)
{
    return DECODER_BLOCK_LINEARS + (c->moe.n_experts > 0 ? 1 + 3 * c->moe.n_experts : 0) +
           (c->moe.n_experts > 0 && c->moe.d_shared > 0 ? 4 : 0);
}



const char *
decoder_part_name(const struct decoder_model *m, enum arch_role role)
{
    static const char *const described[ARCH_ROLES] = {
        [ROLE_TOKEN_EMBD] = "the token embedding",   [ROLE_POS_EMBD] = "the position embedding",
        [ROLE_OUTPUT_NORM] = "the final norm",       [ROLE_OUTPUT] = "the output head",
        [ROLE_ATTN_NORM] = "the first norm",         [ROLE_ATTN_QKV] = "the QKV projection",
        [ROLE_ATTN_Q] = "the query projection",      [ROLE_ATTN_K] = "the key projection",
        [ROLE_ATTN_V] = "the value projection",      [ROLE_ATTN_OUT] = "the output projection",
        [ROLE_ATTN_Q_NORM] = "the query norm",       [ROLE_ATTN_K_NORM] = "the key norm",
        [ROLE_FFN_NORM] = "the second norm",         [ROLE_FFN_GATE] = "the gate",
        [ROLE_FFN_UP] = "the MLP's first layer",     [ROLE_FFN_DOWN] = "the MLP's second layer",
        [ROLE_ATTN_POST_NORM] = "the attention's output norm",
        [ROLE_FFN_POST_NORM] = "the MLP's output norm",
        [ROLE_FFN_ROUTER] = "the router",            [ROLE_EXPERT_GATE] = "an expert's gate",
        [ROLE_EXPERT_UP] = "an expert's up projection",
        [ROLE_EXPERT_DOWN] = "an expert's down projection",
        [ROLE_EXPERT_GATE_UP] = "an expert's gate and up projection",
        [ROLE_SHARED_GATE] = "the shared expert's gate",
        [ROLE_SHARED_UP] = "the shared expert's up projection",
        [ROLE_SHARED_DOWN] = "the shared expert's down projection",
        [ROLE_SHARED_ROUTER] = "the shared expert's own gate",
        [ROLE_ATTN_SINKS] = "the attention sinks",
        [ROLE_GDN_QKV] = "the linear attention's QKV projection",
        [ROLE_GDN_Z] = "the linear attention's output gate",
        [ROLE_GDN_B] = "beta's projection",          [ROLE_GDN_A] = "the decay's projection",
        [ROLE_GDN_CONV] = "the convolution",         [ROLE_GDN_DT_BIAS] = "dt_bias",
        [ROLE_GDN_A_LOG] = "A_log",                  [ROLE_GDN_NORM] = "the gated norm",
        [ROLE_GDN_OUT] = "the linear attention's output projection",
        [ROLE_PLE_EMBD] = "the per-layer embeddings",
        [ROLE_PLE_MODEL_PROJ] = "the per-layer projection of the embedding",
        [ROLE_PLE_PROJ_NORM] = "the per-layer projection's norm",
        [ROLE_PLE_GATE] = "the per-layer input gate",
        [ROLE_PLE_PROJ] = "the per-layer projection",
        [ROLE_PLE_NORM] = "the per-layer output norm",
        [ROLE_LAYER_SCALAR] = "the layer scalar",
    };

    if ((unsigned)role >= ARCH_ROLES)
        return "?";
    return m != NULL && m->part_names[role][0] != '\0' ? m->part_names[role] : described[role];
}


static int
vector_nonfinite(const float *v, int n)
{
    for (int i = 0; v != NULL && i < n; i++)
        if (!isfinite(v[i]))
            return i;
    return -1;
}

bool
decoder_find_nonfinite(const struct decoder_model *m, char *what, size_t size)
{
    static const enum arch_role roles[DECODER_BLOCK_LINEARS] = {
        ROLE_ATTN_Q, ROLE_ATTN_K, ROLE_ATTN_V, ROLE_ATTN_OUT,
        ROLE_FFN_GATE, ROLE_FFN_UP, ROLE_FFN_DOWN,
        ROLE_GDN_QKV, ROLE_GDN_Z, ROLE_GDN_B, ROLE_GDN_A,
    };
    const struct decoder_config *c = &m->cfg;
    const int hd = decoder_head_dim(c);
    const int qk = c->qk_norm_full ? decoder_q_width(c) : hd;
    float *row = malloc((size_t)c->d_model * sizeof *row);
    bool found = false;

    if (row == NULL)
        return false;
    for (int id = 0; id < c->vocab_size && !found; id++) {
        int at;
        decoder_token_row(m, id, row);
        if ((at = vector_nonfinite(row, c->d_model)) >= 0) {
            snprintf(what, size, "%s holds %g (row %d, column %d)",
                     decoder_part_name(m, ROLE_TOKEN_EMBD), (double)row[at], id, at);
            found = true;
        }
    }
    for (int id = 0; !c->tied && id < decoder_outputs(c) && !found; id++) {
        /* (an untied head: its own rows, in whichever form it is kept) */
        int at;
        decoder_head_row(m, id, row);
        if ((at = vector_nonfinite(row, c->d_model)) >= 0) {
            snprintf(what, size, "%s holds %g (row %d, column %d)",
                     decoder_part_name(m, ROLE_OUTPUT), (double)row[at], id, at);
            found = true;
        }
    }
    free(row);
    if (!found && m->pos_embed != NULL && vector_nonfinite(m->pos_embed, c->n_ctx * c->d_model) >= 0) {
        snprintf(what, size, "%s holds a value that is not finite",
                 decoder_part_name(m, ROLE_POS_EMBD));
        found = true;
    }
    for (int l = 0; l < c->n_layer && !found; l++) {
        struct decoder_block *b = &m->blocks[l];
        const struct {
            const float *v;
            int n;
            enum arch_role role;
        } norms[] = {
            { b->norm1.scale, c->d_model, ROLE_ATTN_NORM },   { b->norm1.shift, c->d_model, ROLE_ATTN_NORM },
            { b->norm2.scale, c->d_model, ROLE_FFN_NORM },    { b->norm2.shift, c->d_model, ROLE_FFN_NORM },
            { b->q_norm.scale, qk, ROLE_ATTN_Q_NORM },       { b->k_norm.scale, qk, ROLE_ATTN_K_NORM },
            { b->attn_post.scale, c->d_model, ROLE_ATTN_POST_NORM },
            { b->mlp_post.scale, c->d_model, ROLE_FFN_POST_NORM },
        };
        for (size_t k = 0; k < sizeof norms / sizeof norms[0] && !found; k++) {
            const int at = vector_nonfinite(norms[k].v, norms[k].n);
            if (at >= 0) {
                snprintf(what, size, "layer %d's %s holds %g (at %d)", l,
                         decoder_part_name(m, norms[k].role), (double)norms[k].v[at], at);
                found = true;
            }
        }
        for (int i = 0; i < DECODER_BLOCK_LINEARS && !found; i++) {
            const struct decoder_linear *lin = decoder_block_linear(b, i);
            int r, col;
            char how[64] = "";
            if (lin->in == 0 || !decoder_linear_nonfinite(lin, &r, &col))
                continue;
            if (decoder_linear_blocks(lin) != NULL)
                snprintf(how, sizeof how, "; its %s blocks widened: a block's scale is not a number",
                         decoder_linear_blocks(lin));
            if (r < 0)
                snprintf(what, size, "layer %d's %s's bias holds a value that is not finite (at %d)",
                         l, decoder_part_name(m, roles[i]), col);
            else
                snprintf(what, size, "layer %d's %s holds a value that is not finite (row %d, "
                                     "column %d%s)",
                         l, decoder_part_name(m, roles[i]), r, col, how);
            found = true;
        }
    }
    if (!found && vector_nonfinite(m->final_norm.scale, c->d_model) >= 0) {
        snprintf(what, size, "%s holds a value that is not finite",
                 decoder_part_name(m, ROLE_OUTPUT_NORM));
        found = true;
    }
    return found;
}

enum attn_status
decoder_check_files(const struct decoder_model *m, struct attn_error *err)
{
    for (int i = 0; i < m->map_count; i++) {
        const enum attn_status st = filemap_check(m->maps[i], err);
        if (st != ATTN_OK)
            return st;
    }
    return ATTN_OK;
}

void
decoder_destroy(struct decoder_model *m)
{
    decoder_packer_cancel(m->packer); /* (its thread reads m: stopped and waited for) */
    decoder_unpack(m);
    if (m->weights_map != NULL)
        munmap(m->weights_map, m->weights_map_bytes);
    for (int i = 0; i < m->map_count; i++)
        filemap_close(m->maps[i]);
    free(m->maps);
    for (int l = 0; m->blocks != NULL && l < m->cfg.n_layer; l++)
        free(m->blocks[l].experts);
    free(m->blocks);
    free(m->chat_template);
    memset(m, 0, sizeof *m);
}
