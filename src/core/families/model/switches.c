/* switches.c: a trained model's switches, one table (see switches.h). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/decoder/decoder.h"
#include "attnscope/models/model.h"
#include "attnscope/decoder/mixer.h"
#include "attnscope/families/model/switches.h"

/*
 * Whether head is past layer's own of c (a Gated DeltaNet layer numbers its
 * value heads, an attention layer its heads), said into why.
 */
static bool
no_head(const struct decoder_config *c, int layer, int head, char *why, size_t size)
{
    const int heads = decoder_layer_heads(c, layer);

    if (head < heads)
        return false;
    attn_fail_text(why, size, "layer %d (%s) has %s 0 to %d", layer,
                   decoder_mixer_of(c, layer)->name,
                   decoder_attends(c, layer) ? "heads" : "value heads", heads - 1);
    return true;
}

/*
 * --ablate L.H: each head in m, one mask of layers x head slots; a Gated
 * DeltaNet layer's head is a value head, whose read is zeroed.
 */
static enum attn_status
check_ablate(const struct model *m, const int (*at)[2], int count, unsigned char **mask,
             struct attn_error *err)
{
    const int layers = m->dec.cfg.n_layer;
    const int heads = decoder_head_slots(&m->dec.cfg);

    for (int i = 0; i < count; i++)
        if (at[i][0] >= layers || at[i][1] >= heads)
            return attn_fail(err, ATTN_EVALUE, "--ablate %d.%d: %s has layers 0 to %d and heads 0 to %d",
                             at[i][0], at[i][1], m->name, layers - 1, heads - 1);
    for (int i = 0; i < count; i++) {
        char why[160];
        if (no_head(&m->dec.cfg, at[i][0], at[i][1], why, sizeof why))
            return attn_fail(err, ATTN_EVALUE, "--ablate %d.%d: %s's %s", at[i][0], at[i][1],
                             m->name, why);
    }
    if ((*mask = calloc((size_t)layers * (size_t)heads, 1)) == NULL)
        return attn_fail(err, ATTN_ENOMEM, "out of memory");
    for (int i = 0; i < count; i++)
        (*mask)[at[i][0] * heads + at[i][1]] = 1;
    return ATTN_OK;
}

/*
 * --expert-off L.E: a sparse layer's expert of m, and in every layer as
 * many left on as a token is sent to.
 */
static enum attn_status
check_expert_off(const struct model *m, const int (*at)[2], int count, unsigned char **mask,
                 struct attn_error *err)
{
    const struct decoder_config *c = &m->dec.cfg;
    int on = 0;
    int l;

    if (c->moe.n_experts == 0)
        return attn_fail(err, ATTN_EVALUE, "--expert-off %d.%d: %s is not a mixture of experts",
                         at[0][0], at[0][1], m->name);
    for (int i = 0; i < count; i++) {
        if (at[i][0] >= c->n_layer || at[i][1] >= c->moe.n_experts)
            return attn_fail(err, ATTN_EVALUE,
                             "--expert-off %d.%d: %s has layers 0 to %d and experts 0 to %d",
                             at[i][0], at[i][1], m->name, c->n_layer - 1, c->moe.n_experts - 1);
        if (!decoder_sparse(c, at[i][0]))
            return attn_fail(err, ATTN_EVALUE,
                             "--expert-off %d.%d: layer %d of %s has one MLP, no experts",
                             at[i][0], at[i][1], at[i][0], m->name);
    }
    if ((*mask = calloc((size_t)c->n_layer * (size_t)c->moe.n_experts, 1)) == NULL)
        return attn_fail(err, ATTN_ENOMEM, "out of memory");
    for (int i = 0; i < count; i++)
        (*mask)[at[i][0] * c->moe.n_experts + at[i][1]] = 1;
    if ((l = decoder_experts_too_few(c, *mask, &on)) >= 0)
        return attn_fail(err, ATTN_EVALUE,
                         "--expert-off: layer %d would keep %d experts on; each token is sent "
                         "to %d",
                         l, on, c->moe.n_experts_used);
    return ATTN_OK;
}

/* --no-sinks: a model with learned sinks; no mask (the source says it). */
static enum attn_status
check_no_sinks(const struct model *m, const int (*at)[2], int count, unsigned char **mask,
               struct attn_error *err)
{
    (void)at;
    (void)count;
    *mask = NULL;
    if (!m->dec.cfg.sinks)
        return attn_fail(err, ATTN_EVALUE,
                         "--no-sinks: %s has no attention sinks (a model with learned sinks, "
                         "gpt-oss, has)",
                         m->name);
    return ATTN_OK;
}

const struct model_switch model_switch_table[SWITCH_COUNT] = {
    [SWITCH_ABLATE] = { "ablate", "L.H", "a head", "5.1",
                        "with --model: zero the context of head H of layer L (repeatable), to see "
                        "what it does",
                        'a', check_ablate },
    [SWITCH_EXPERT_OFF] = { "expert-off", "L.E", "an expert", "3.7",
                            "with a mixture of experts: switch expert E of layer L off "
                            "(repeatable): its router logit -inf, so no token is sent to it",
                            'a', check_expert_off },
    [SWITCH_NO_SINKS] = { "no-sinks", NULL, NULL, NULL,
                          "with a model of learned attention sinks (gpt-oss): switch them off "
                          "(their logits -inf), so every row's weights sum to 1",
                          'B', check_no_sinks },
};

int
model_switch_find(const char *name)
{
    for (int i = 0; i < SWITCH_COUNT; i++)
        if (strcmp(model_switch_table[i].option, name) == 0)
            return i;
    return -1;
}

/*
 * L.N, two whole numbers from 0 written in digits alone around one dot
 * (strtol would take "0." and "0. 1" and " 3.1"); false otherwise.
 */
static bool
layer_dot(const char *arg, int out[2])
{
    const char *p = arg;

    for (int part = 0; part < 2; part++) {
        long v = 0;
        const char *start = p;
        while (*p >= '0' && *p <= '9' && v <= 100000)
            v = v * 10 + (*p++ - '0');
        if (p == start || v > 100000 || *p != (part == 0 ? '.' : '\0'))
            return false;
        out[part] = (int)v;
        p++;
    }
    return true;
}

int
model_switch_parse(struct model_switches_given *g, enum model_switch_id id, const char *arg,
                   char *err, size_t size)
{
    const struct model_switch *s = &model_switch_table[id];
    int v[2];

    if (s->metavar == NULL) {
        g->count[id] = 1;
        return 0;
    }
    if (!layer_dot(arg, v))
        return attn_fail_text(err, size, "--%s %s: give a layer and %s, from 0: --%s %s", s->option,
                              arg, s->what, s->option, s->example);
    if (g->count[id] == SWITCH_GIVEN_MAX)
        return attn_fail_text(err, size, "--%s: at most %d of them", s->option, SWITCH_GIVEN_MAX);
    g->at[id][g->count[id]][0] = v[0];
    g->at[id][g->count[id]][1] = v[1];
    g->count[id]++;
    return 0;
}

int
model_switch_given(const struct model_switches_given *g)
{
    for (int i = 0; i < SWITCH_COUNT; i++)
        if (g->count[i] > 0)
            return i;
    return -1;
}

enum attn_status
model_switches_apply(const struct model *m, const struct model_switches_given *g,
                     struct model_switch_masks *out, struct pipeline_source *src,
                     struct attn_error *err)
{
    memset(out, 0, sizeof *out);
    for (int i = 0; i < SWITCH_COUNT; i++)
        if (g->count[i] > 0) {
            const enum attn_status st = model_switch_table[i].check(
                m, (const int(*)[2])g->at[i], g->count[i], &out->mask[i], err);
            if (st != ATTN_OK)
                return st;
        }
    model_switches_source(g, out, src);
    return ATTN_OK;
}

void
model_switches_source(const struct model_switches_given *g,
                      const struct model_switch_masks *masks, struct pipeline_source *src)
{
    src->ablated = masks->mask[SWITCH_ABLATE];
    src->experts_off = masks->mask[SWITCH_EXPERT_OFF];
    src->sinks_off = g->count[SWITCH_NO_SINKS] > 0;
}

void
model_switch_masks_free(struct model_switch_masks *masks)
{
    for (int i = 0; i < SWITCH_COUNT; i++) {
        free(masks->mask[i]);
        masks->mask[i] = NULL;
    }
}

/* How many flags a layer of switch id's mask has (heads, experts); 0: no mask. */
static int
per_layer(const struct model *m, enum model_switch_id id)
{
    return id == SWITCH_ABLATE       ? decoder_head_slots(&m->dec.cfg)
           : id == SWITCH_EXPERT_OFF ? m->dec.cfg.moe.n_experts
                                     : 0;
}

bool
model_switch_on(const struct model *m, const struct model_switch_masks *masks, bool flag,
                enum model_switch_id id, int layer, int index)
{
    const int per = per_layer(m, id);

    if (per == 0)
        return flag;
    return masks->mask[id] != NULL && masks->mask[id][(size_t)layer * (size_t)per + (size_t)index];
}

int
model_switch_flip(const struct model *m, struct model_switch_masks *masks, bool *flag,
                  enum model_switch_id id, int layer, int index, char *why, size_t size)
{
    const struct decoder_config *c = &m->dec.cfg;
    const int per = per_layer(m, id);
    size_t at;

    if (size > 0)
        why[0] = '\0';
    if (id == SWITCH_NO_SINKS) {
        if (!c->sinks) {
            attn_fail_text(why, size, "B switches attention sinks off: a model with learned "
                                      "sinks has them (gpt-oss), and this one has none");
            return 0;
        }
        *flag = !*flag;
        return 1;
    }
    if (layer < 0 || layer >= c->n_layer || index < 0 || index >= per)
        return 0;
    if (id == SWITCH_ABLATE && no_head(c, layer, index, why, size))
        return 0;
    if (masks->mask[id] == NULL &&
        (masks->mask[id] = calloc((size_t)c->n_layer * (size_t)per, 1)) == NULL)
        return -1;
    at = (size_t)layer * (size_t)per + (size_t)index;
    if (id == SWITCH_EXPERT_OFF && !masks->mask[id][at]) {
        const int on = decoder_experts_on(c, masks->mask[id], layer);
        if (on - 1 < c->moe.n_experts_used) {
            attn_fail_text(why, size, "expert %d stays on: each token is sent to %d of the %d on",
                           index, c->moe.n_experts_used, on);
            return 0;
        }
    }
    masks->mask[id][at] ^= 1;
    return 1;
}
