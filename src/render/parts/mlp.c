/*
 * mlp.c: the MLP of a decoder block explained (up, GELU, down): what each
 * stage does, and a cell as its row's products with the weights, or GELU
 * at the cell.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>

#include "attnscope/families/gpt2/family_gpt2.h"
#include "render/parts/parts.h"

void
text_fc(const struct pipeline *p, char *buf, size_t size)
{
    const struct gpt2_state *g = pipeline_gpt2(p);

    snprintf(buf, size,
             "The MLP works on each token alone (no token looks at another here). Its first "
             "linear layer widens each row from %d to %d numbers.",
             p->d_in, g != NULL ? g->model->dec.cfg.n_inner : 0);
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
    (void)p;
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
    emit(o, " + bias %s\n", inspect_num(v, l->b[c]));
}

void
inspect_fc(struct out *o, const struct cell_at *at)
{
    const struct pipeline *p = at->p;

    linear_cell(o, at, "fc", "ln2", &p->block.ln2, &inspect_block_of(p)->up,
                MAT_AT(&p->block.fc, at->row, at->col));
}

void
inspect_mlp(struct out *o, const struct cell_at *at)
{
    const struct pipeline *p = at->p;

    linear_cell(o, at, "mlp", "gelu", &p->block.gelu, &inspect_block_of(p)->down,
                MAT_AT(&p->block.mlp, at->row, at->col));
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
