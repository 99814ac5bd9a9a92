/*
 * sinks.c: learned attention sinks (gpt-oss's, computed by part_softmax) as
 * every screen and output says them: the weights stage's formula and
 * sentence, a weight's arithmetic with the sink in its sum, the sink's
 * column beside a head's weights, and each row's share for --print.  On a
 * model without sinks (or with them switched off) each of these writes
 * nothing and says so.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>

#include "attnscope/families/model/family_model.h"
#include "render/grid.h"
#include "render/heatmap.h"
#include "render/palette.h"
#include "render/parts/parts.h"

/* The shown pipeline's model state when its sinks are on, else NULL. */
static const struct family_model_state *
with_sinks(const struct pipeline *p)
{
    const struct family_model_state *g = p != NULL ? pipeline_decoder(p) : NULL;

    return g != NULL && g->model->dec.cfg.sinks && !g->run.sinks_off && g->run.shown >= 0 ? g
                                                                                          : NULL;
}

bool
sinks_shown(const struct pipeline *p)
{
    return with_sinks(p) != NULL;
}

float
sinks_share(const struct pipeline *p, int head, int i)
{
    const struct family_model_state *g = with_sinks(p);

    return g != NULL ? decoder_sink_share(&g->model->dec, &g->run, head, i) : 0.0f;
}

/* Head's sink logit in the shown layer. */
static float
sink_logit(const struct family_model_state *g, int head)
{
    return g->model->dec.blocks[g->run.shown].sinks[head];
}

bool
sinks_formula(const struct pipeline *p, char *buf, size_t size)
{
    if (!sinks_shown(p))
        return false;
    snprintf(buf, size, "a_ij = exp(s_ij) / (sum_k exp(s_ik) + exp(sink_h))");
    return true;
}

bool
sinks_text(const struct pipeline *p, char *buf, size_t size)
{
    const struct family_model_state *g = pipeline_decoder(p);

    if (g == NULL || !g->model->dec.cfg.sinks)
        return false;
    if (g->run.sinks_off) {
        snprintf(buf, size,
                 "This model's heads have attention sinks, switched off here (B, --no-sinks): "
                 "their logits are -inf, so each row's weights sum to 1 as in any softmax. B "
                 "brings them back.");
        return true;
    }
    snprintf(buf, size,
             "Softmax with a sink: each head's learned logit joins every row's sum and is "
             "dropped after it, so a row's weights sum to 1 minus the sink's share (the sink "
             "column): what the head gave to nothing. B switches the sinks off.");
    return true;
}

bool
sinks_inspect(struct out *o, const struct cell_at *at, double max, double sum, float score)
{
    const struct family_model_state *g = with_sinks(at->p);
    double sink, m;
    char a[24], b[24], c[24], d[24], e[24];

    if (g == NULL)
        return false;
    sink = (double)sink_logit(g, at->head);
    m = sink > max ? sink : max;
    /* (the keys' sum taken from their max to the max of keys and sink) */
    sum = sum * exp(max - m) + exp(sink - m);
    emit(o, "\nand the head's sink, logit %s: over the keys and the sink the max is %s and the "
            "sum of exp(x - max) is %s, so the weight is exp(%s - max) / %s. The sink took %s "
            "of the row: its weights sum to 1 minus that.\n",
         inspect_num(a, (float)sink), inspect_num(b, (float)m), inspect_num(c, (float)sum),
         inspect_num(d, score), inspect_num(c, (float)sum),
         inspect_num(e, sinks_share(at->p, at->head, at->row)));
    return true;
}

int
sinks_margin_width(const struct pipeline *p)
{
    return sinks_shown(p) ? SINKS_MARGIN : 0;
}

void
sinks_draw_margin(struct grid *g, const struct pipeline *p, int head,
                  const struct heatmap_geometry *geo, int x, int w)
{
    char buf[16];

    if (!sinks_shown(p) || w < 5 || geo->vis_rows <= 0)
        return;
    grid_put(g, x, geo->y0 - 1, w, style_role(ROLE_DIM), "sink");
    for (int r = 0; r < geo->vis_rows; r++) {
        const int i = geo->row0 + r;
        if (i >= pipeline_decoder(p)->run.n)
            break;
        snprintf(buf, sizeof buf, "%.3f", (double)sinks_share(p, head, i));
        grid_put(g, x, geo->y0 + r * geo->row_h, w, style_role(ROLE_TEXT), buf + (buf[0] == '0'));
    }
}
