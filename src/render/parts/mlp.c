/*
 * mlp.c: the MLP of a decoder block explained (up, GELU, down): what each
 * stage does, and a cell as its row's products with the weights, or GELU
 * at the cell.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>

#include "attnscope/families/model/family_model.h"
#include "attnscope/kernels/rowops.h"
#include "render/parts/parts.h"

/* Whether the MLP is gated (gate, up, down): SwiGLU's, or Gemma's GeGLU. */
static bool
gated(const struct pipeline *p)
{
    return p->decoder != NULL && decoder_gated(p->decoder);
}

/* Whether the gate goes through GELU (Gemma) rather than SiLU. */
static bool
geglu(const struct pipeline *p)
{
    return p->decoder != NULL && p->decoder->mlp == DECODER_MLP_GEGLU;
}

/* What the MLP's first layers read: ln2, or (Olmo's post-norm) residual1 itself. */
static const char *
mlp_input(const struct pipeline *p)
{
    return p->decoder != NULL && !decoder_pre_norms(p->decoder) ? "residual1" : "ln2";
}

void
text_gate(const struct pipeline *p, char *buf, size_t size)
{
    snprintf(buf, size,
             "%s MLP has two first layers side by side. This one, the gate (%s), "
             "widens each row from %d to %d numbers; after %s it decides how much of the "
             "other one (up, %s) passes, number by number.",
             geglu(p) ? "Gemma's" : "SwiGLU's", inspect_part(p, ROLE_FFN_GATE), p->d_in,
             p->decoder != NULL ? p->decoder->d_mlp : 0, geglu(p) ? "GELU" : "SiLU",
             inspect_part(p, ROLE_FFN_UP));
}

void
text_geglu(const struct pipeline *p, char *buf, size_t size)
{
    (void)p;
    snprintf(buf, size,
             "GELU(gate) x up: GELU (its tanh approximation, as GPT-2's) is near 0 for negative "
             "gates and near x for positive ones, so each gate number opens or shuts its up "
             "number. The cell panel shows both.");
}

void
text_swiglu(const struct pipeline *p, char *buf, size_t size)
{
    (void)p;
    snprintf(buf, size,
             "SiLU(gate) x up: SiLU(x) = x / (1 + e^-x) is near 0 for negative gates and near x "
             "for positive ones, so each gate number opens or shuts its up number. The cell "
             "panel shows both.");
}

void
text_fc(const struct pipeline *p, char *buf, size_t size)
{
    const struct family_model_state *g = pipeline_decoder(p);

    if (gated(p)) {
        snprintf(buf, size,
                 "The MLP works on each token alone. Its up projection (%s) widens each row "
                 "from %d to %d numbers, beside the gate.",
                 inspect_part(p, ROLE_FFN_UP), p->d_in, p->decoder->d_mlp);
        return;
    }
    snprintf(buf, size,
             "The MLP works on each token alone (no token looks at another here). Its first "
             "linear layer widens each row from %d to %d numbers.",
             p->d_in, g != NULL ? g->model->dec.cfg.d_mlp : 0);
}

void
text_gelu(const struct pipeline *p, char *buf, size_t size)
{
    (void)p;
    snprintf(buf, size,
             "GELU, a smooth ReLU: large positive numbers pass, large negative ones become "
             "about 0, and near 0 it bends smoothly. GPT-2 uses its tanh approximation; the "
             "cell panel shows it at this cell.");
}

void
text_mlp(const struct pipeline *p, char *buf, size_t size)
{
    if (moe_text_mlp(p, buf, size)) /* (moe.c) */
        return;
    if (gated(p)) {
        snprintf(buf, size,
                 "The down projection (%s) brings each row back to the stream's width. "
                 "Gate, up and down hold about two thirds of the model's parameters.",
                 inspect_part(p, ROLE_FFN_DOWN));
        return;
    }
    snprintf(buf, size,
             "The MLP's second linear layer brings each row back to the stream's width. With "
             "the first and GELU between them, it is where most of GPT-2's parameters are.");
}

/* A linear layer's cell: the input row times a column of the weights, plus the bias. */
static void
linear_cell(struct out *o, const struct cell_at *at, const char *name, const char *in_name,
            const struct matrix *in, const struct decoder_linear *l, float got)
{
    const int c = at->col;
    char v[24];

    emit(o, "%s[%s][%d] = %s\n", name, inspect_token(at->p, at->row), c, inspect_num(v, got));
    emit(o, "%s[%s] . column %d of the weights:\n", in_name, inspect_token(at->p, at->row), c);
    inspect_linear(o, matrix_row(in, at->row), l, c, at->max_terms);
    inspect_bias(o, l, c);
}

void
inspect_fc(struct out *o, const struct cell_at *at)
{
    const struct pipeline *p = at->p;

    linear_cell(o, at, gated(p) ? "up" : "fc", mlp_input(p), &p->block.ln2,
                &inspect_block_of(p)->up, MAT_AT(&p->block.fc, at->row, at->col));
}

void
inspect_mlp(struct out *o, const struct cell_at *at)
{
    const struct pipeline *p = at->p;

    if (moe_inspect_mlp(o, at)) /* (moe.c) */
        return;
    linear_cell(o, at, "mlp", geglu(p) ? "geglu" : gated(p) ? "swiglu" : "gelu",
                gated(p) ? &p->block.swiglu : &p->block.gelu, &inspect_block_of(p)->down,
                MAT_AT(&p->block.mlp, at->row, at->col));
}

void
inspect_gate(struct out *o, const struct cell_at *at)
{
    const struct pipeline *p = at->p;

    linear_cell(o, at, "gate", mlp_input(p), &p->block.ln2, &inspect_block_of(p)->gate,
                MAT_AT(&p->block.gate, at->row, at->col));
}

void
inspect_swiglu(struct out *o, const struct cell_at *at)
{
    const struct pipeline *p = at->p;
    const float g = MAT_AT(&p->block.gate, at->row, at->col);
    const float u = MAT_AT(&p->block.fc, at->row, at->col);
    const float silu = g / (1.0f + expf(-g));
    char a[24], b[24], c[24], v[24];

    emit(o, "swiglu[%s][%d] = SiLU(gate %s)%sup %s = %s\n", inspect_token(p, at->row), at->col,
         inspect_num(a, g), o->times, inspect_num(b, u),
         inspect_num(v, MAT_AT(&p->block.swiglu, at->row, at->col)));
    emit(o, "SiLU(x) = x / (1 + e^-x) = %s: %s\n", inspect_num(c, silu),
         g > 2.0f    ? "the gate is open, about x itself"
         : g < -3.0f ? "the gate is shut, about 0"
                     : "the gate is half open");
}

void
inspect_geglu(struct out *o, const struct cell_at *at)
{
    const struct pipeline *p = at->p;
    const float g = MAT_AT(&p->block.gate, at->row, at->col);
    const float u = MAT_AT(&p->block.fc, at->row, at->col);
    float gelu;
    char a[24], b[24], c[24], v[24];

    rowops_gelu(&g, &gelu, 1);
    emit(o, "geglu[%s][%d] = GELU(gate %s)%sup %s = %s\n", inspect_token(p, at->row), at->col,
         inspect_num(a, g), o->times, inspect_num(b, u),
         inspect_num(v, MAT_AT(&p->block.swiglu, at->row, at->col)));
    emit(o, "GELU(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) = %s: %s\n",
         inspect_num(c, gelu),
         g > 2.0f    ? "the gate is open, about x itself"
         : g < -3.0f ? "the gate is shut, about 0"
                     : "the gate is half open");
}

void
inspect_gelu(struct out *o, const struct cell_at *at)
{
    const struct pipeline *p = at->p;
    const float x = MAT_AT(&p->block.fc, at->row, at->col);
    char a[24];
    char v[24];

    emit(o, "gelu[%s][%d] = GELU(fc %s) = %s\n", inspect_token(p, at->row), at->col, inspect_num(a, x),
         inspect_num(v, MAT_AT(&p->block.gelu, at->row, at->col)));
    emit(o, "GELU(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))\n");
    emit(o, "%s\n", x > 2.0f    ? "large and positive: about x itself."
                     : x < -3.0f ? "large and negative: about 0."
                                 : "near 0: the curve bends between 0 and x.");
}
