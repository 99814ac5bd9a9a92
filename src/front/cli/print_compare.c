/* print_compare.c: --print of two models compared (see print.h). */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/families/model/headmap.h"
#include "attnscope/families/model/family_model.h"
#include "attnscope/files/csvio.h"
#include "front/cli/print.h"

/* A model's name as printed: a folder's name may hold any byte, escapes never go out raw. */
struct shown_name {
    char s[1024];
};

static struct shown_name
name_of(const struct pipeline *p)
{
    struct shown_name n;

    attn_escape_text(n.s, sizeof n.s, pipeline_decoder(p)->model->name);
    return n;
}

/* A selection of each model in turn, each under a line naming it. */
static void
print_both(FILE *out, struct compare *c, const struct pipeline_selection *sel,
           const struct print_options *po)
{
    for (int side = COMPARE_FIRST; side <= COMPARE_SECOND; side++) {
        const struct pipeline *p = compare_side_pipeline(c, (enum compare_side)side);
        if (po->format == PRINT_TEXT)
            fprintf(out, "%s (%s):\n", compare_side_name((enum compare_side)side), name_of(p).s);
        else if (po->format == PRINT_CSV)
            fprintf(out, "# %s (%s)\n", compare_side_name((enum compare_side)side), name_of(p).s);
        print_model_selection(out, p, sel, po);
    }
}

/* Each position's KL(first || second) of the next tokens, with each model's likeliest token. */
static void
print_next_kl(FILE *out, struct compare *c, const struct print_options *po)
{
    const struct family_model_state *ga = pipeline_decoder(c->a), *gb = pipeline_decoder(c->b);
    const int n = ga->run.n;
    float *kl = malloc(((size_t)n + 1) * sizeof *kl);
    struct attn_error err;
    char x[256], y[256];

    (void)family_model_next_tokens(c->a);
    (void)family_model_next_tokens(c->b);
    if (kl == NULL || compare_next_kl(c, kl, &err) != ATTN_OK) {
        fprintf(out, "next tokens compared: %s\n\n", kl == NULL ? "out of memory" : err.msg);
        free(kl);
        return;
    }
    if (po->format == PRINT_CSV) {
        fputs("# next tokens compared\nposition,token,kl\n", out);
        for (int i = 0; i < n; i++) {
            char value[32];
            fprintf(out, "%d,", i);
            csvio_write_field(out, c->a->tokens.text[i]);
            csvio_format_value(value, sizeof value, kl[i]);
            fprintf(out, ",%s\n", value);
        }
        fputc('\n', out);
        free(kl);
        return;
    }
    fprintf(out, "next tokens compared: KL(first || second) in nats over all %d outputs, and "
                 "each model's likeliest\n",
            decoder_outputs(&ga->model->dec.cfg));
    for (int i = 0; i < n; i++) {
        fprintf(out, "  %4d  ", i);
        print_label(out, c->a->tokens.text[i], LABEL_MAX_WIDTH, 0);
        fprintf(out, "  KL %.*f", po->digits, (double)kl[i]);
        if (ga->run.top > 0)
            fprintf(out, "  %s / %s",
                    model_output_display(ga->model, ga->run.top_ids[(size_t)i * ga->run.top], x,
                                         sizeof x),
                    model_output_display(gb->model, gb->run.top_ids[(size_t)i * gb->run.top], y,
                                         sizeof y));
        fputc('\n', out);
    }
    fputc('\n', out);
    free(kl);
}

/* How much each head's attention changed, a table of layers x heads, then the most changed. */
static void
print_heads_changed(FILE *out, struct compare *c, const struct print_options *po)
{
    const int layers = c->a->layers, heads = head_map_heads(c->a);
    const size_t count = (size_t)layers * (size_t)heads;
    struct matrix m;
    char title[256];

    if (matrix_create(&m, layers, heads, NULL) != ATTN_OK || compare_heads_changed(c, m.data) != 0) {
        fputs("heads changed: out of memory\n\n", out);
        matrix_destroy(&m);
        return;
    }
    snprintf(title, sizeof title, "heads changed: %s (layers x heads)", COMPARE_HEADS_MEASURE);
    print_layers_table(out, title, &m, po);
    if (po->format == PRINT_TEXT) {
        /* The five that changed most, most first (a layer's earlier head first on a tie). */
        int most[5];
        const int shown = compare_most_changed(m.data, (int)count, 5, most);
        fputs("most changed:", out);
        for (int k = 0; k < shown; k++)
            fprintf(out, "  %d.%d %.*f", most[k] / heads, most[k] % heads, po->digits,
                    (double)m.data[most[k]]);
        fputs("\n\n", out);
    }
    matrix_destroy(&m);
}

/* Both logit lenses after the last token, and the layer from which they differ. */
static void
print_lens_parting(FILE *out, struct compare *c)
{
    const int layers = c->a->layers;
    int *ids = malloc(2 * (size_t)layers * sizeof *ids);
    float *probs = malloc(2 * (size_t)layers * sizeof *probs);
    struct compare_lens lens = { { ids, ids + layers }, { probs, probs + layers }, -1 };
    struct attn_error err;
    char x[256], y[256];

    if (ids == NULL || probs == NULL ||
        compare_lens_parting(c, c->a->tokens.count - 1, &lens, &err) != ATTN_OK) {
        fprintf(out, "logit lens compared: %s\n\n",
                ids == NULL || probs == NULL ? "out of memory" : err.msg);
    } else if (lens.parted < 0) {
        fprintf(out, "logit lens compared: the two agree on the likeliest token at the last "
                     "layer\n\n");
    } else {
        fprintf(out, "logit lens compared: the likeliest tokens part at layer %d (from there to "
                     "the last, the first says %s, the second %s)\n\n",
                lens.parted,
                model_output_display(pipeline_decoder(c->a)->model, ids[layers - 1], x, sizeof x),
                model_output_display(pipeline_decoder(c->b)->model, ids[2 * layers - 1], y,
                                     sizeof y));
    }
    free(ids);
    free(probs);
}

void
print_compared_selection(FILE *out, struct compare *c, const struct pipeline_selection *sel,
                         const struct print_options *po)
{
    if (po->side == 1 + COMPARE_FIRST || po->side == 1 + COMPARE_SECOND) {
        /* (--side: one model's own, as it prints alone) */
        print_model_selection(out, compare_side_pipeline(c, (enum compare_side)(po->side - 1)),
                              sel, po);
        return;
    }
    if (sel->stage == PIPELINE_SELECT_TOKENS) {
        print_model_selection(out, c->a, sel, po); /* (the same ids: checked) */
    } else if (sel->stage == PIPELINE_SELECT_NEXT) {
        print_both(out, c, sel, po);
        print_next_kl(out, c, po);
    } else if (sel->stage == PIPELINE_SELECT_HEADS) {
        print_heads_changed(out, c, po);
    } else if (sel->stage == PIPELINE_SELECT_LENS) {
        print_both(out, c, sel, po);
        print_lens_parting(out, c);
    } else if (sel->param != NULL || (unsigned)sel->stage >= STAGE_COUNT) {
        print_both(out, c, sel, po);
    } else {
        const int heads = pipeline_stage_heads(c->a, sel->stage);
        const int h0 = sel->head < 0 ? 0 : sel->head;
        const int h1 = sel->head < 0 ? heads : sel->head + 1;
        for (int h = h0; h < h1; h++)
            for (int side = 0; side < COMPARE_SIDES; side++)
                if (po->side == 0 || po->side == 1 + side)
                    print_stage_of(out, c->a, c, (enum compare_side)side, sel->stage, h, po);
    }
}

void
print_compared(FILE *out, struct compare *c, const struct print_options *po)
{
    (void)compare_follow(c, NULL); /* (the second's header names the first's layer) */
    if (po->format == PRINT_TEXT || po->heatmap) {
        print_model_header(out, c->a, pipeline_decoder(c->a));
        print_model_header(out, c->b, pipeline_decoder(c->b));
        fprintf(out, "compared: first %s, second %s; each stage three ways: the first's, the "
                     "second's, their difference (second - first)\n\n",
                name_of(c->a).s, name_of(c->b).s);
    }
    if (po->count == 0) {
        const struct pipeline_selection shown[] = {
            { PIPELINE_SELECT_TOKENS, -1, NULL },
            { STAGE_WEIGHTS, -1, NULL },
            { PIPELINE_SELECT_NEXT, -1, NULL },
        };
        for (size_t i = 0; i < sizeof shown / sizeof shown[0]; i++)
            print_compared_selection(out, c, &shown[i], po);
        return;
    }
    for (int i = 0; i < po->count; i++)
        print_compared_selection(out, c, &po->chosen[i], po);
}
