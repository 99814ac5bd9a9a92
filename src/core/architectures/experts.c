/*
 * experts.c: a sparse layer's router and experts read (see architecture.h's
 * arch_read_experts), in the three ways files keep them:
 * - one tensor per expert and projection (Hugging Face's Qwen3-MoE, OLMoE,
 *   Mixtral: mlp.experts.E.gate_proj ...);
 * - each projection of every expert stacked in one tensor (a GGUF's
 *   ffn_gate_exps, (experts, rows, cols) in ggml's blocks or floats; gpt-oss's
 *   biases beside them, (experts, rows));
 * - transformers' own stacking (Qwen3.5-MoE's hub checkpoints): gate_up_proj
 *   (experts, 2 width, in), an expert's gate its first width rows and its up
 *   the rest, and down_proj (experts, in, width);
 * - gpt-oss's Hugging Face tensors: gate and up in one gate_up_proj,
 *   interleaved (gate the even outputs), stored in -> out, (experts, in,
 *   2 width), and down_proj (experts, width, in); or, in its hub checkpoint,
 *   each as MXFP4: NAME_blocks (experts, out, in / 32, 16) of 4-bit codes,
 *   value 2j in byte j's low nibble, 2j + 1 in its high one, and NAME_scales
 *   (experts, out, in / 32) of E8M0 exponents (transformers'
 *   convert_moe_packed_tensors).  Those are put into ggml's MXFP4 blocks
 *   (the exponent, then value j in byte j's low nibble and j + 16 in its
 *   high one: the same numbers, quants.h), kept so in the model's memory.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/architectures/architecture.h"
#include "attnscope/decoder/weights.h"
#include "attnscope/formats/quants.h"

/* Whether ld's layout keeps each projection of a layer's experts in one tensor (a GGUF's). */
static bool
stacked(const struct arch_loader *ld)
{
    int count;
    const struct arch_name *rows = arch_rows(ld->arch, &count);

    for (int i = 0; i < count; i++)
        if (rows[i].role == ROLE_EXPERT_UP) {
            const char *w = rows[i].in[ld->layout->layout].weight;
            const char *first = w != NULL ? strstr(w, "%d") : NULL;
            return first != NULL && strstr(first + 2, "%d") == NULL;
        }
    return false;
}

/* The experts' biases of role in layer i, (E, width) floats, or NULL (none: 0 returned). */
static int
experts_bias(struct arch_loader *ld, enum arch_role role, int i, int width, const float **bias,
             struct attn_error *err)
{
    const struct decoder_config *c = &ld->w.m->cfg;
    char name[160];

    *bias = NULL;
    if (!c->moe.bias_experts)
        return 0;
    if (arch_name(ld, role, i, true, name, sizeof name) == NULL) {
        attn_fail(err, ATTN_EPARSE, "%s: %s's names in this layout have no experts' biases",
                  ld->w.m->source, ld->arch->name);
        return -1;
    }
    return (*bias = weights_matrix(&ld->w, name, false, c->moe.n_experts, width, err)) == NULL ? -1
                                                                                          : 0;
}

/* Layer i's experts from its three stacked tensors, expert e a slice of each. */
static int
read_stacked(struct arch_loader *ld, struct decoder_block *b, int i, struct attn_error *err)
{
    const struct decoder_config *c = &ld->w.m->cfg;
    const int C = c->d_model, E = c->moe.n_experts, FE = c->moe.d_expert;
    const struct {
        enum arch_role role;
        int rows, cols;
    } parts[3] = { { ROLE_EXPERT_GATE, FE, C }, { ROLE_EXPERT_UP, FE, C },
                   { ROLE_EXPERT_DOWN, C, FE } };

    for (int k = 0; k < 3; k++) {
        struct weights_matrix wm;
        const float *bias;
        char name[160];
        if (arch_name(ld, parts[k].role, i, false, name, sizeof name) == NULL ||
            weights_experts_any(&ld->w, name, E, parts[k].rows, parts[k].cols, &wm, err) != 0 ||
            experts_bias(ld, parts[k].role, i, parts[k].rows, &bias, err) != 0)
            return -1;
        for (int e = 0; e < E; e++) {
            struct decoder_linear *l = k == 0 ? &b->experts[e].gate
                                       : k == 1 ? &b->experts[e].up
                                                : &b->experts[e].down;
            decoder_linear_of(&wm, parts[k].cols, e * parts[k].rows, parts[k].rows,
                              bias != NULL ? bias + (size_t)e * (size_t)parts[k].rows : NULL, l);
        }
    }
    return 0;
}

/* Layer i's experts from transformers' stacked gate_up_proj and down_proj (the keys' names). */
static int
read_halves(struct arch_loader *ld, struct decoder_block *b, int i, struct attn_error *err)
{
    const struct decoder_config *c = &ld->w.m->cfg;
    const struct arch_moe_keys *k = ld->arch->parts.moe;
    const int C = c->d_model, E = c->moe.n_experts, FE = c->moe.d_expert;
    struct weights_matrix gate_up, down;
    char name[160];

    snprintf(name, sizeof name, k->stacked_gate_up, i);
    if (weights_experts_any(&ld->w, name, E, 2 * FE, C, &gate_up, err) != 0)
        return -1;
    snprintf(name, sizeof name, k->stacked_down, i);
    if (weights_experts_any(&ld->w, name, E, C, FE, &down, err) != 0)
        return -1;
    /* (what the screens call them: each expert's rows of the two) */
    snprintf(ld->w.m->part_names[ROLE_EXPERT_GATE], sizeof ld->w.m->part_names[0],
             "gate_up_proj[:%d]", FE);
    snprintf(ld->w.m->part_names[ROLE_EXPERT_UP], sizeof ld->w.m->part_names[0],
             "gate_up_proj[%d:]", FE);
    snprintf(ld->w.m->part_names[ROLE_EXPERT_DOWN], sizeof ld->w.m->part_names[0], "down_proj");
    for (int e = 0; e < E; e++) {
        decoder_linear_of(&gate_up, C, 2 * e * FE, FE, NULL, &b->experts[e].gate);
        decoder_linear_of(&gate_up, C, 2 * e * FE + FE, FE, NULL, &b->experts[e].up);
        decoder_linear_of(&down, FE, e * C, C, NULL, &b->experts[e].down);
    }
    return 0;
}

/*
 * Layer i's shared expert and its gate: (1, in) as nn.Linear keeps it, or
 * a GGUF's vector of in (llama.cpp's ffn_gate_inp_shexp).
 */
static int
read_shared(struct arch_loader *ld, struct decoder_block *b, int i, struct attn_error *err)
{
    const struct decoder_config *c = &ld->w.m->cfg;
    const int C = c->d_model, FS = c->moe.d_shared;
    const struct tensor_info *t;
    const float *v;
    char name[160];

    if (arch_read_linear(ld, &b->shared.gate, ROLE_SHARED_GATE, i, C, FS, false, err) != 0 ||
        arch_read_linear(ld, &b->shared.up, ROLE_SHARED_UP, i, C, FS, false, err) != 0 ||
        arch_read_linear(ld, &b->shared.down, ROLE_SHARED_DOWN, i, FS, C, false, err) != 0)
        return -1;
    if (arch_name(ld, ROLE_SHARED_ROUTER, i, false, name, sizeof name) == NULL ||
        (t = weights_find(&ld->w, name)) == NULL || t->ndim != 1)
        return arch_read_linear(ld, &b->shared_gate, ROLE_SHARED_ROUTER, i, C, 1, false, err);
    if ((v = weights_vector(&ld->w, name, C, err)) == NULL)
        return -1;
    b->shared_gate = (struct decoder_linear){ .w = v, .in = C, .out = 1, .ld = C, .out_in = true };
    return 0;
}

/*
 * rows x cols values in Hugging Face's MXFP4 (blocks of 16 bytes, a scale
 * byte each) as ggml's blocks (17 bytes each) into out.
 */
static void
mxfp4_from_pairs(const unsigned char *blocks, const unsigned char *scales, size_t groups,
                 unsigned char *out)
{
    for (size_t g = 0; g < groups; g++) {
        const unsigned char *in = blocks + g * 16;
        unsigned char *o = out + g * 17;
        o[0] = scales[g];
        for (int j = 0; j < 16; j++) {
            /* value v's code: byte v / 2, its high nibble when v is odd */
            const int lo = in[j / 2] >> (4 * (j % 2)) & 0x0f;
            const int hi = in[(j + 16) / 2] >> (4 * ((j + 16) % 2)) & 0x0f;
            o[1 + j] = (unsigned char)(lo | hi << 4);
        }
    }
}

/*
 * One of gpt-oss's Hugging Face projections of every expert of layer i
 * (role: gate_up_proj or down_proj), out outputs of in each: in float
 * (stored in -> out) or as NAME_blocks and NAME_scales (out -> in, put
 * into ggml's MXFP4); expert e's into linear (its stride apart) with its
 * bias.
 */
static int
read_fused_part(struct arch_loader *ld, struct decoder_block *b, int i, enum arch_role role,
                int in, int out, struct attn_error *err)
{
    const struct decoder_config *c = &ld->w.m->cfg;
    const int E = c->moe.n_experts;
    struct weights_matrix wm = { 0 };
    const float *bias = NULL;
    char name[160], part[192];
    bool blocks = false;
    unsigned char *mx = NULL;

    if (arch_name(ld, role, i, false, name, sizeof name) == NULL) {
        attn_fail(err, ATTN_EPARSE, "%s: %s's names have no tensor for this part", ld->w.m->source,
                  ld->arch->name);
        return -1;
    }
    if (experts_bias(ld, role, i, out, &bias, err) != 0)
        return -1;
    snprintf(part, sizeof part, "%s_blocks", name);
    blocks = weights_find(&ld->w, name) == NULL && weights_find(&ld->w, part) != NULL;
    if (!blocks) {
        if (weights_experts_any(&ld->w, name, E, in, out, &wm, err) != 0)
            return -1;
        if (wm.q != NULL) {
            attn_fail(err, ATTN_EPARSE, "%s: %s: quantized blocks stored in -> out",
                      ld->w.m->source, name);
            return -1;
        }
    } else {
        const int G = in / 32;
        const int64_t bshape[4] = { E, out, G, 16 }, sshape[3] = { E, out, G };
        const size_t groups = (size_t)E * (size_t)out * (size_t)G;
        const unsigned char *raw, *sc;
        if (in % 32 != 0) {
            attn_fail(err, ATTN_EPARSE, "%s: %s: %d inputs are not whole MXFP4 blocks of 32",
                      ld->w.m->source, part, in);
            return -1;
        }
        if ((raw = weights_bytes(&ld->w, part, 4, bshape, err)) == NULL)
            return -1;
        snprintf(part, sizeof part, "%s_scales", name);
        if ((sc = weights_bytes(&ld->w, part, 3, sshape, err)) == NULL ||
            (mx = weights_room(&ld->w, groups * 17, err)) == NULL)
            return -1;
        mxfp4_from_pairs(raw, sc, groups, mx);
    }
    for (int e = 0; e < E; e++) {
        struct decoder_expert *x = &b->experts[e];
        struct decoder_linear *l = role == ROLE_EXPERT_DOWN ? &x->down : &x->gate;
        const size_t at = (size_t)e * (size_t)in * (size_t)out;
        const float *be = bias != NULL ? bias + (size_t)e * (size_t)out : NULL;
        if (blocks)
            *l = (struct decoder_linear){ .wq = mx + at / 32 * 17, .wq_type = TENSOR_MXFP4,
                                          .b = be, .in = in, .out = out, .ld = in,
                                          .out_in = true };
        else
            *l = (struct decoder_linear){ .w = wm.f != NULL ? wm.f + at : NULL,
                                          .w16 = wm.h != NULL ? wm.h + at : NULL,
                                          .b = be, .in = in, .out = out, .ld = out,
                                          .out_in = false };
        x->fused = true;
    }
    return 0;
}

int
arch_read_experts(struct arch_loader *ld, struct decoder_block *b, int i, struct attn_error *err)
{
    const struct decoder_config *c = &ld->w.m->cfg;
    const struct arch_moe_keys *k = ld->arch->parts.moe;
    const int C = c->d_model, E = c->moe.n_experts, FE = c->moe.d_expert;
    char name[160];

    if (arch_read_linear(ld, &b->router, ROLE_FFN_ROUTER, i, C, E, c->moe.bias_experts, err) != 0)
        return -1;
    if ((b->experts = calloc((size_t)E, sizeof *b->experts)) == NULL) {
        attn_fail(err, ATTN_ENOMEM, "out of memory for layer %d's %d experts", i, E);
        return -1;
    }
    if (c->moe.d_shared > 0 && read_shared(ld, b, i, err) != 0)
        return -1;
    if (k != NULL && k->stacked_gate_up != NULL && ld->layout->layout == ARCH_HF) {
        snprintf(name, sizeof name, k->stacked_gate_up, i);
        if (weights_find(&ld->w, name) != NULL)
            return read_halves(ld, b, i, err);
    }
    if (arch_name(ld, ROLE_EXPERT_GATE_UP, i, false, name, sizeof name) != NULL)
        return read_fused_part(ld, b, i, ROLE_EXPERT_GATE_UP, C, 2 * FE, err) != 0 ||
                       read_fused_part(ld, b, i, ROLE_EXPERT_DOWN, FE, C, err) != 0
                   ? -1
                   : 0;
    if (stacked(ld))
        return read_stacked(ld, b, i, err);
    for (int e = 0; e < E; e++) {
        struct decoder_expert *x = &b->experts[e];
        ld->expert = e;
        if (arch_read_linear(ld, &x->gate, ROLE_EXPERT_GATE, i, C, FE, c->moe.bias_experts, err) != 0 ||
            arch_read_linear(ld, &x->up, ROLE_EXPERT_UP, i, C, FE, c->moe.bias_experts, err) != 0 ||
            arch_read_linear(ld, &x->down, ROLE_EXPERT_DOWN, i, FE, C, c->moe.bias_experts, err) != 0)
            return -1;
    }
    ld->expert = 0;
    return 0;
}
