/*
 * residual.c: the residual adds of a decoder block explained (after
 * attention and after the MLP): what they do, and a cell as its sum.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>

#include "attnscope/families/model/family_model.h"
#include "render/parts/parts.h"

/* Whether the block norms attention's and the MLP's outputs before adding them (Gemma, Olmo). */
static bool
post(const struct pipeline *p)
{
    return p->decoder != NULL && decoder_post_norms(p->decoder);
}

void
text_residual1(const struct pipeline *p, char *buf, size_t size)
{
    snprintf(buf, size,
             "The residual connection: attention's %s is added to the block's input, not "
             "put in its place. What a block adds is a change to the stream; what it leaves "
             "alone passes through to the next block.",
             post(p) ? "normed output (output_normed)" : "output");
}

void
text_residual2(const struct pipeline *p, char *buf, size_t size)
{
    if (p->layer + 1 == p->layers)
        snprintf(buf, size,
                 "The second residual: the MLP's %soutput added to the stream. This is the "
                 "block's output, the last: the final norm (%s) reads it.",
                 post(p) ? "normed " : "",
                 inspect_part(p, ROLE_OUTPUT_NORM));
    else
        snprintf(buf, size,
                 "The second residual: the MLP's %soutput added to the stream. This is the "
                 "block's output, what layer %d reads.",
                 post(p) ? "normed " : "",
                 p->layer + 1);
}

/* A sum of two stages at one cell. */
static void
sum_cell(struct out *o, const struct cell_at *at, const char *name, const char *a_name,
         const struct matrix *a, const char *b_name, const struct matrix *b, const struct matrix *sum)
{
    char x[24];
    char y[24];
    char z[24];

    emit(o, "%s[%s][%d] = %s %s + %s %s = %s\n", name, inspect_token(at->p, at->row), at->col, a_name,
         inspect_num(x, MAT_AT(a, at->row, at->col)), b_name, inspect_num(y, MAT_AT(b, at->row, at->col)),
         inspect_num(z, MAT_AT(sum, at->row, at->col)));
}

void
inspect_residual1(struct out *o, const struct cell_at *at)
{
    const struct pipeline *p = at->p;

    if (post(p))
        sum_cell(o, at, "residual1", "x", &p->inputs, "output_normed", &p->block.output_normed,
                 &p->block.residual1);
    else
        sum_cell(o, at, "residual1", "x", &p->inputs, "out", &p->st.output, &p->block.residual1);
    emit(o, "the block's input, plus what attention adds to it.\n");
}

void
inspect_residual2(struct out *o, const struct cell_at *at)
{
    const struct pipeline *p = at->p;

    sum_cell(o, at, "residual2", "residual1", &p->block.residual1, post(p) ? "mlp_normed" : "mlp",
             post(p) ? &p->block.mlp_normed : &p->block.mlp, &p->block.residual2);
    if (p->layer + 1 < p->layers)
        emit(o, "what layer %d reads.\n", p->layer + 1);
    else
        emit(o, "the last block's output: %s reads it.\n", inspect_part(p, ROLE_OUTPUT_NORM));
}
