/*
 * print_parts.c: what a decoder part adds to --print's tables (see
 * print.h): a mixture's experts after the router's table, the sinks' shares
 * after the weights'.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/families/model/family_model.h"
#include "front/cli/print.h"
#include "render/parts/parts.h"

/*
 * After the router's table, where each token went: the chosen experts in
 * the router's order and their weights, as experts.csv lists them.
 */
void
print_model_experts(FILE *out, const struct pipeline *p, const struct family_model_state *g)
{
    const struct decoder_config *c = &g->model->dec.cfg;
    int experts[DECODER_EXPERTS_USED_MAX];
    float weights[DECODER_EXPERTS_USED_MAX];

    fprintf(out, "layer %d, each token's %d of %d experts, the router's first choice first "
                 "(weight: what its output is multiplied by%s)\n",
            p->layer, c->moe.n_experts_used, c->moe.n_experts,
            c->moe.router_topk_softmax ? ", the softmax of the chosen logits among themselves"
            : c->moe.norm_topk         ? ", the chosen probabilities divided by their sum"
                                   : "");
    for (int i = 0; i < p->block.router.rows; i++) {
        const int k = family_model_routes(p, i, experts, weights);
        fprintf(out, "  %4d  ", i);
        print_label(out, p->query_labels[i], LABEL_MAX_WIDTH, 0);
        for (int t = 0; t < k; t++)
            fprintf(out, "  e%d %.4f", experts[t], (double)weights[t]);
        fputc('\n', out);
    }
    {
        char load[512];
        size_t len = 0;
        load[0] = '\0';
        moe_load_text(p, load, sizeof load, &len);
        fprintf(out, "  %s\n\n", load);
    }
}

/*
 * After the weights' tables, a layer with learned sinks: each head's share
 * of each row, the part its sink took (a row's weights sum to 1 minus it).
 */
void
print_model_sinks(FILE *out, const struct pipeline *p, const struct print_options *po)
{
    const int heads = p->st.shape.heads, n = p->st.nq;
    struct matrix m;
    struct table t;
    char title[160];
    char **rows = calloc((size_t)heads, sizeof *rows);

    if (!sinks_shown(p) || rows == NULL || matrix_create(&m, heads, n, NULL) != ATTN_OK) {
        free(rows);
        return;
    }
    for (int h = 0; h < heads; h++) {
        if ((rows[h] = malloc(16)) != NULL)
            snprintf(rows[h], 16, "h%d", h);
        for (int i = 0; i < n; i++)
            MAT_AT(&m, h, i) = sinks_share(p, h, i);
    }
    snprintf(title, sizeof title, "layer %d, the sinks' shares (heads x queries): the part of "
                                  "each row's softmax its head's sink took", p->layer);
    memset(&t, 0, sizeof t);
    t.title = title;
    t.m = &m;
    t.rows = (const char *const *)rows;
    t.cols = (const char *const *)p->query_labels;
    print_table(out, &t, po);
    for (int h = 0; h < heads; h++)
        free(rows[h]);
    free(rows);
    matrix_destroy(&m);
}
