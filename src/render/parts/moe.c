/*
 * moe.c: a mixture of experts explained (a sparse layer's router and the
 * weighted sum of its experts): what the router stage shows, a router cell
 * from its logit to the weight it gives its expert, and an output cell of
 * the MLP as the chosen experts' outputs each times its weight.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "attnscope/families/model/family_model.h"
#include "render/parts/parts.h"

/* Whether the shown layer's MLP is a mixture of experts. */
bool
moe_shown(const struct pipeline *p)
{
    return p->decoder != NULL && decoder_sparse(p->decoder, p->layer);
}

void
text_router(const struct pipeline *p, char *buf, size_t size)
{
    const struct decoder_config *c = p->decoder;

    if (!moe_shown(p)) {
        snprintf(buf, size, "This layer's MLP is one MLP for every token: it has no router.");
        return;
    }
    {
        size_t len = 0;
        attn_appendf(buf, size, &len,
                     "A mixture of experts: the router (%s) scores each token against %d experts, "
                     "a softmax makes the scores probabilities, and only the %d likeliest (marked) "
                     "run for that token; their outputs are added, each times its weight (%s). ",
                     inspect_part(p, ROLE_FFN_ROUTER), c->moe.n_experts, c->moe.n_experts_used,
                     c->moe.router_topk_softmax
                         ? "a softmax over the chosen logits alone: their probabilities divided "
                           "by their sum"
                     : c->moe.norm_topk ? "its probability divided by the sum of the chosen ones"
                                    : "its probability as it is");
        moe_load_text(p, buf, size, &len);
    }
}

void
moe_load_text(const struct pipeline *p, char *buf, size_t size, size_t *len)
{
    const struct matrix *routed = &p->block.routed;
    const int E = routed->cols;
    int *load = calloc((size_t)(E > 0 ? E : 1), sizeof *load);
    int shown = 0, idle = 0;

    if (load == NULL || routed->data == NULL) {
        free(load);
        return;
    }
    for (int i = 0; i < routed->rows; i++)
        for (int e = 0; e < E; e++)
            load[e] += MAT_AT(routed, i, e) > 0.0f;
    attn_appendf(buf, size, len, "Load (tokens sent):");
    /* the busiest first, eight at most */
    for (; shown < 8; shown++) {
        int best = -1;
        for (int e = 0; e < E; e++)
            if (load[e] > 0 && (best < 0 || load[e] > load[best]))
                best = e;
        if (best < 0)
            break;
        attn_appendf(buf, size, len, "%s e%d %d", shown > 0 ? "," : "", best, load[best]);
        load[best] = -load[best]; /* (taken) */
    }
    for (int e = 0; e < E; e++) {
        idle += load[e] == 0;
        if (load[e] > 0)
            shown++;
    }
    if (shown > 8)
        attn_appendf(buf, size, len, ", %d more", shown - 8);
    if (idle > 0)
        attn_appendf(buf, size, len, "; %d expert%s none", idle, idle == 1 ? "" : "s");
    attn_appendf(buf, size, len, ".");
    free(load);
}

/* Where expert e stands in token i's order (0: the router's first choice), and whether chosen. */
static int
rank_of(const struct pipeline *p, int i, int e, bool *chosen)
{
    int experts[DECODER_EXPERTS_USED_MAX];
    float weights[DECODER_EXPERTS_USED_MAX];
    const int k = family_model_routes(p, i, experts, weights);
    int above = 0;

    for (int t = 0; t < k; t++)
        if (experts[t] == e) {
            *chosen = true;
            return t;
        }
    *chosen = false;
    for (int f = 0; f < p->block.router.cols; f++)
        above += MAT_AT(&p->block.router, i, f) > MAT_AT(&p->block.router, i, e);
    return above;
}

void
inspect_router(struct out *o, const struct cell_at *at)
{
    const struct pipeline *p = at->p;
    const struct decoder_config *c = p->decoder;
    const int i = at->row, e = at->col;
    const float logit = MAT_AT(&p->block.router_logits, i, e);
    const float prob = MAT_AT(&p->block.router, i, e);
    const float w = MAT_AT(&p->block.routed, i, e);
    float max = -INFINITY;
    double sum = 0.0;
    bool chosen;
    int rank;
    char a[24], b[24], d[24];

    if (!moe_shown(p))
        return;
    for (int f = 0; f < c->moe.n_experts; f++)
        max = fmaxf(max, MAT_AT(&p->block.router_logits, i, f));
    for (int f = 0; f < c->moe.n_experts; f++)
        sum += exp((double)(MAT_AT(&p->block.router_logits, i, f) - max));
    emit(o, "router[%s][e%d] = e^(logit %s - max %s) / %.4g = %s\n", inspect_token(p, i), e,
         inspect_num(a, logit), inspect_num(b, max), sum, inspect_num(d, prob));
    if (isinf(logit) && logit < 0.0f) {
        /* The router's own logit, made as the product makes it: a chain in order of k, then the bias. */
        const struct decoder_linear *r = &inspect_block_of(p)->router;
        const float *x = matrix_row(&p->block.ln2, i);
        float own = 0.0f;
        for (int k = 0; k < r->in; k++)
            own = fmaf(x[k], decoder_linear_at(r, k, e), own);
        if (r->b != NULL)
            own += r->b[e];
        emit(o, "expert e%d is switched off (a, --expert-off): its logit is set to -inf, so no "
                "token is sent to it; the router's own logit would be %s, made as follows.\n",
             e, inspect_num(a, own));
    }
    emit(o, "the logit: ln2[%s] . row e%d of the router:\n", inspect_token(p, i), e);
    inspect_linear(o, matrix_row(&p->block.ln2, i), &inspect_block_of(p)->router, e,
                   at->max_terms);
    inspect_bias(o, &inspect_block_of(p)->router, e);
    rank = rank_of(p, i, e, &chosen);
    if (chosen && c->moe.router_topk_softmax)
        emit(o, "chosen, the router's choice %d of %d: its output is weighted %s (the softmax of "
                "its logit over the %d chosen logits: %s divided by the chosen probabilities' "
                "sum).\n",
             rank + 1, c->moe.n_experts_used, inspect_num(a, w), c->moe.n_experts_used,
             inspect_num(b, prob));
    else if (chosen && c->moe.norm_topk)
        emit(o, "chosen, the router's choice %d of %d: its output is weighted %s (%s divided "
                "by the sum of the %d chosen probabilities).\n",
             rank + 1, c->moe.n_experts_used, inspect_num(a, w), inspect_num(b, prob),
             c->moe.n_experts_used);
    else if (chosen)
        emit(o, "chosen, the router's choice %d of %d: its output is weighted by its "
                "probability, %s.\n",
             rank + 1, c->moe.n_experts_used, inspect_num(a, w));
    else
        emit(o, "not chosen (%d experts are likelier; %d run): expert e%d does not run for "
                "this token.\n",
             rank, c->moe.n_experts_used, e);
}

static float expert_cell(const struct decoder_config *c, const struct decoder_expert *x,
                         int width, const float *in, int col);

bool
moe_text_mlp(const struct pipeline *p, char *buf, size_t size)
{
    if (!moe_shown(p))
        return false;
    snprintf(buf, size,
             "The layer's MLP is its experts: each token's output is the sum of its %d chosen "
             "experts' outputs (each a SwiGLU MLP of %d: gate, up, down%s), each times the weight "
             "the router gave it. The other experts do not run for that token.%s",
             p->decoder->moe.n_experts_used, p->decoder->moe.d_expert,
             p->decoder->moe.swiglu_limit > 0.0
                 ? "; gpt-oss's: gate and up clamped, (up + 1) gate sigmoid(1.702 gate), biases"
                 : "",
             p->decoder->moe.d_shared > 0
                 ? " Then the shared expert's output (the stage before) is added: it runs for "
                   "every token."
                 : "");
    return true;
}

void
text_shared(const struct pipeline *p, char *buf, size_t size)
{
    const struct matrix *g = &p->block.shared_gate;
    size_t len = 0;
    float lo = INFINITY, hi = -INFINITY;

    if (!moe_shown(p) || g->data == NULL) {
        snprintf(buf, size, "This layer has no shared expert.");
        return;
    }
    for (int i = 0; i < g->rows; i++) {
        lo = fminf(lo, MAT_AT(g, i, 0));
        hi = fmaxf(hi, MAT_AT(g, i, 0));
    }
    attn_appendf(buf, size, &len,
                 "A shared expert: one more SwiGLU MLP of %d that every token goes through, "
                 "whichever experts the router chose, its output times a gate of its own, "
                 "sigmoid(ln2 . %s), one number a token (here from %.3f to %.3f). The MLP's "
                 "output is the routed experts' sum plus this.",
                 p->decoder->moe.d_shared, inspect_part(p, ROLE_SHARED_ROUTER), (double)lo,
                 (double)hi);
}

void
inspect_shared(struct out *o, const struct cell_at *at)
{
    const struct pipeline *p = at->p;
    const struct decoder_config *c = p->decoder;
    const struct decoder_block *b;
    const float *x;
    double raw = 0.0;
    char v[24], a[24], d[24];

    if (!moe_shown(p) || p->block.shared_gate.data == NULL)
        return;
    b = inspect_block_of(p);
    x = matrix_row(&p->block.ln2, at->row);
    for (int k = 0; k < c->d_model; k++)
        raw += (double)x[k] * decoder_linear_at(&b->shared_gate, k, 0);
    emit(o, "shared[%s][%d] = %s = gate %s%sthe shared expert's output %s (recomputed here in "
            "double sums, to a few units in the last place)\n",
         inspect_token(p, at->row), at->col,
         inspect_num(v, MAT_AT(&p->block.shared, at->row, at->col)),
         inspect_num(a, MAT_AT(&p->block.shared_gate, at->row, 0)), o->times,
         inspect_num(d, expert_cell(c, &b->shared, c->moe.d_shared, x, at->col)));
    emit(o, "the gate: sigmoid(ln2[%s] . %s) = sigmoid(%.6g)\n", inspect_token(p, at->row),
         inspect_part(p, ROLE_SHARED_ROUTER), raw);
}

/*
 * Expert x's output column col for input row in (d_model): down(SiLU(gate in) * up in), or
 * gpt-oss's (its gate and up interleaved in one linear, biases, the clamped SwiGLU).
 */
static float
expert_cell(const struct decoder_config *c, const struct decoder_expert *x, int width,
            const float *in, int col)
{
    const float limit = (float)c->moe.swiglu_limit, alpha = (float)c->moe.swiglu_alpha;
    double out = x->down.b != NULL ? (double)x->down.b[col] : 0.0;

    for (int f = 0; f < width; f++) {
        const int gf = x->fused ? 2 * f : f, uf = x->fused ? 2 * f + 1 : f;
        const struct decoder_linear *up = x->fused ? &x->gate : &x->up;
        float g = x->gate.b != NULL ? x->gate.b[gf] : 0.0f;
        float u = up->b != NULL ? up->b[uf] : 0.0f;
        float act;
        for (int j = 0; j < c->d_model; j++) {
            g += in[j] * decoder_linear_at(&x->gate, j, gf);
            u += in[j] * decoder_linear_at(up, j, uf);
        }
        if (limit > 0.0f) { /* (GptOssExperts: the gate clamped above, up both ways) */
            g = g < limit ? g : limit;
            u = u < -limit ? -limit : u > limit ? limit : u;
            act = (u + 1.0f) * g / (1.0f + expf(-(g * alpha)));
        } else
            act = g / (1.0f + expf(-g)) * u;
        out += (double)act * decoder_linear_at(&x->down, f, col);
    }
    return (float)out;
}

bool
moe_inspect_mlp(struct out *o, const struct cell_at *at)
{
    const struct pipeline *p = at->p;
    const struct decoder_config *c = p->decoder;
    const struct decoder_block *b;
    int experts[DECODER_EXPERTS_USED_MAX];
    float weights[DECODER_EXPERTS_USED_MAX];
    int k;
    char v[24], a[24], d[24];

    if (!moe_shown(p))
        return false;
    b = inspect_block_of(p);
    k = family_model_routes(p, at->row, experts, weights);
    emit(o, "mlp[%s][%d] = %s, the sum over the token's %d experts of weight%sexpert output "
            "(recomputed here in double sums, to a few units in the last place):\n",
         inspect_token(p, at->row), at->col,
         inspect_num(v, MAT_AT(&p->block.mlp, at->row, at->col)), k, o->times);
    for (int t = 0; t < k; t++) {
        const float y = expert_cell(c, &b->experts[experts[t]], c->moe.d_expert,
                                    matrix_row(&p->block.ln2, at->row), at->col);
        emit(o, "  e%d: %s%s%s\n", experts[t], inspect_num(a, weights[t]), o->times,
             inspect_num(d, y));
    }
    if (p->block.shared.data != NULL)
        emit(o, "  plus the shared expert's: %s\n",
             inspect_num(a, MAT_AT(&p->block.shared, at->row, at->col)));
    return true;
}
