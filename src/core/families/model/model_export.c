/* model_export.c: a trained model's files (see model_export.h). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/base/progress.h"
#include "attnscope/base/utf8.h"
#include "attnscope/families/model/compare.h"
#include "attnscope/families/model/family_model.h"
#include "attnscope/families/model/generate.h"
#include "attnscope/families/model/model_export.h"
#include "attnscope/families/model/headmap.h"
#include "attnscope/files/csvio.h"
#include "attnscope/files/fileio.h"
#include "attnscope/files/fileio_batch.h"


/*
 * A token's text as a CSV field that is always valid UTF-8 (Python's csv,
 * pandas and spreadsheets read it): its characters as they are, a
 * backslash as \\, a newline, tab or carriage return as \n \t \r, and
 * every other control byte and every byte that is not part of a whole
 * UTF-8 character (GPT-2 splits characters into byte tokens) as \xHH.
 * Unambiguous: the bytes come back by undoing the escapes.
 */
static void
write_token_text(FILE *f, const struct bpe *bpe, int id)
{
    int n;
    const char *raw = bpe_token_raw(bpe, id, &n);
    char *text = malloc(4 * (size_t)n + 1);
    size_t at = 0;

    if (raw == NULL || text == NULL) {
        free(text);
        return;
    }
    for (int i = 0; i < n;) {
        const unsigned char c = (unsigned char)raw[i];
        int len = utf8_length((const unsigned char *)raw + i, (size_t)(n - i));
        if (c == '\\' || c == '\n' || c == '\t' || c == '\r') {
            text[at++] = '\\';
            text[at++] = c == '\\' ? '\\' : c == '\n' ? 'n' : c == '\t' ? 't' : 'r';
            i++;
        } else if (len == 0 || c < 0x20 || c == 0x7f) {
            at += (size_t)sprintf(text + at, "\\x%02X", c);
            i++;
        } else {
            memcpy(text + at, raw + i, (size_t)len);
            at += (size_t)len;
            i += len;
        }
    }
    text[at] = '\0';
    csvio_write_field(f, text);
    free(text);
}

/* What an output of the head is: a token (write_token_text), or a classifier's class name. */
static void
write_output_text(FILE *f, const struct model *m, int id)
{
    char name[64];

    if (model_is_classifier(m))
        csvio_write_field(f, model_output_display(m, id, name, sizeof name));
    else
        write_token_text(f, &m->bpe, id);
}

/* tokens.csv: position,id,token, the token as the text it stands for (write_token_text). */
static enum attn_status
write_model_tokens(struct fileio_batch *b, const struct family_model_state *g, struct attn_error *err)
{
    FILE *f;
    enum attn_status st = fileio_batch_open(b, "tokens.csv", &f, err);

    if (st != ATTN_OK)
        return st;
    fputs("position,id,token\n", f);
    for (int i = 0; i < g->run.n; i++) {
        fprintf(f, "%d,%d,", i, g->ids[i]);
        write_token_text(f, &g->model->bpe, g->ids[i]);
        fputc('\n', f);
    }
    return fileio_batch_close(b, err);
}

/* next.csv: position,rank,id,token,probability, the top K after every position. */
static enum attn_status
write_model_next(struct fileio_batch *b, const struct pipeline *p, struct attn_error *err)
{
    const struct family_model_state *g = pipeline_decoder(p);
    FILE *f;
    char value[32];
    enum attn_status st;

    if (family_model_next_tokens(p) != 0)
        return attn_fail(err, ATTN_ENOMEM, "out of memory for the next tokens");
    st = fileio_batch_open(b, "next.csv", &f, err);
    if (st != ATTN_OK)
        return st;
    fputs(model_is_classifier(g->model) ? "position,rank,id,class,probability\n"
                                        : "position,rank,id,token,probability\n",
          f);
    for (int i = 0; i < g->run.n; i++)
        for (int t = 0; t < g->run.top; t++) {
            const int id = g->run.top_ids[(size_t)i * g->run.top + t];
            fprintf(f, "%d,%d,%d,", i, t + 1, id);
            write_output_text(f, g->model, id);
            csvio_format_value(value, sizeof value, g->run.top_probs[(size_t)i * g->run.top + t]);
            fprintf(f, ",%s\n", value);
        }
    return fileio_batch_close(b, err);
}

/*
 * heads.csv: the model map, a row per layer and head with every measure
 * (headmap.h): layer,head,entropy,previous,first,self,induction (and sink, a model with
 * learned sinks).
 */
static enum attn_status
write_model_heads(struct fileio_batch *b, const struct pipeline *p, struct attn_error *err)
{
    const int heads = head_map_heads(p);
    const size_t cells = (size_t)p->layers * (size_t)heads;
    float *m = malloc((size_t)MEASURE_COUNT * cells * sizeof *m);
    FILE *f;
    enum attn_status st;

    if (m == NULL)
        return attn_fail(err, ATTN_ENOMEM, "out of memory for the model map");
    for (int k = 0; k < MEASURE_COUNT; k++)
        head_measures(p, (enum head_measure)k, m + (size_t)k * cells);
    st = fileio_batch_open(b, "heads.csv", &f, err);
    if (st == ATTN_OK) {
        fputs("layer,head", f);
        for (int k = 0; k < MEASURE_COUNT; k++)
            if (head_measure_present(p, (enum head_measure)k))
                fprintf(f, ",%s", head_measure_name((enum head_measure)k));
        fputc('\n', f);
        for (int l = 0; l < p->layers; l++)
            for (int h = 0; h < heads; h++) {
                fprintf(f, "%d,%d", l, h);
                for (int k = 0; k < MEASURE_COUNT; k++) {
                    char value[32];
                    if (!head_measure_present(p, (enum head_measure)k))
                        continue;
                    csvio_format_value(value, sizeof value,
                                       m[(size_t)k * cells + (size_t)l * (size_t)heads + (size_t)h]);
                    fprintf(f, ",%s", value);
                }
                fputc('\n', f);
            }
        st = fileio_batch_close(b, err);
    }
    free(m);
    return st;
}

/* How many tokens the logit lens keeps per layer in lens.csv. */
#define EXPORT_LENS_K 5

/*
 * lens.csv: the logit lens after position: each layer's stream read
 * through ln_f and the unembedding, its likeliest tokens
 * (position,layer,rank,id,token,probability).
 */
static enum attn_status
write_model_lens(struct fileio_batch *b, const struct family_model_state *g, int position,
                 struct attn_error *err)
{
    const int layers = g->model->dec.cfg.n_layer;
    const int outputs = decoder_outputs(&g->model->dec.cfg);
    const int k = EXPORT_LENS_K < outputs ? EXPORT_LENS_K : outputs;
    int *ids = malloc((size_t)layers * (size_t)k * sizeof *ids);
    float *probs = malloc((size_t)layers * (size_t)k * sizeof *probs);
    FILE *f;
    enum attn_status st = ids != NULL && probs != NULL
                              ? decoder_logit_lens(&g->model->dec, &g->run, position, k, ids, probs,
                                                err)
                              : attn_fail(err, ATTN_ENOMEM, "out of memory for the logit lens");

    if (st == ATTN_OK)
        st = fileio_batch_open(b, "lens.csv", &f, err);
    if (st == ATTN_OK) {
        fputs(model_is_classifier(g->model) ? "position,layer,rank,id,class,probability\n"
                                            : "position,layer,rank,id,token,probability\n",
              f);
        for (int l = 0; l < layers; l++)
            for (int t = 0; t < k; t++) {
                char value[32];
                const int id = ids[(size_t)l * (size_t)k + (size_t)t];
                fprintf(f, "%d,%d,%d,%d,", position, l, t + 1, id);
                write_output_text(f, g->model, id);
                csvio_format_value(value, sizeof value, probs[(size_t)l * (size_t)k + (size_t)t]);
                fprintf(f, ",%s\n", value);
            }
        st = fileio_batch_close(b, err);
    }
    free(ids);
    free(probs);
    return st;
}

/*
 * FOLDER/kv_cache.csv: the shown layer's KV cache as a written token reads
 * it (slot,position,id,token,head,k0..,v0..): a row per row kept and key
 * head, a sliding layer's ring slot by slot (generation_cache_rows).
 */
static enum attn_status
write_model_cache(struct fileio_batch *b, const struct pipeline *p,
                  const struct family_model_state *g, const char *folder, struct attn_error *err)
{
    const struct decoder_config *c = &g->model->dec.cfg;
    const struct matrix *keys = p->block.k_rotated.data != NULL ? &p->block.k_rotated : &p->st.keys;
    const int n = keys->rows, hd = p->st.shape.head_dim;
    const int rows = generation_cache_rows(c, p->layer, n);
    char path[64];
    FILE *f;
    enum attn_status st;

    snprintf(path, sizeof path, "%s/kv_cache.csv", folder);
    st = fileio_batch_open(b, path, &f, err);
    if (st != ATTN_OK)
        return st;
    fputs("slot,position,id,token,head", f);
    for (int w = 0; w < 2; w++)
        for (int d = 0; d < hd; d++)
            fprintf(f, ",%c%d", w == 0 ? 'k' : 'v', d);
    fputc('\n', f);
    for (int r = 0; r < rows; r++) {
        const int i = generation_cache_position(c, p->layer, n, r);
        for (int h = 0; h < decoder_kv_heads(c); h++) {
            fprintf(f, "%d,%d,%d,", r, i, g->ids[i]);
            write_token_text(f, &g->model->bpe, g->ids[i]);
            fprintf(f, ",%d", h);
            for (int w = 0; w < 2; w++) {
                const float *row = matrix_row(w == 0 ? keys : &p->st.values, i) + (size_t)h * (size_t)hd;
                for (int d = 0; d < hd; d++) {
                    char value[32];
                    csvio_format_value(value, sizeof value, row[d]);
                    fprintf(f, ",%s", value);
                }
            }
            fputc('\n', f);
        }
    }
    return fileio_batch_close(b, err);
}

/*
 * FOLDER/experts.csv: the shown sparse layer's routing, a row per token and
 * chosen expert (position,token,rank,expert,weight): rank 0 the router's
 * first choice, weight what that expert's output was multiplied by.
 */
static enum attn_status
write_model_experts(struct fileio_batch *b, const struct pipeline *p,
                    const struct family_model_state *g, const char *folder, struct attn_error *err)
{
    const struct decoder_config *c = &g->model->dec.cfg;
    int experts[DECODER_EXPERTS_USED_MAX];
    float weights[DECODER_EXPERTS_USED_MAX];
    char path[64];
    FILE *f;
    enum attn_status st;

    if (c->moe.n_experts_used > DECODER_EXPERTS_USED_MAX)
        return attn_fail(err, ATTN_ELIMIT, "%d experts a token: experts.csv lists at most %d",
                         c->moe.n_experts_used, DECODER_EXPERTS_USED_MAX);
    snprintf(path, sizeof path, "%s/experts.csv", folder);
    st = fileio_batch_open(b, path, &f, err);
    if (st != ATTN_OK)
        return st;
    fputs("position,token,rank,expert,weight\n", f);
    for (int i = 0; i < p->block.router.rows; i++) {
        const int k = family_model_routes(p, i, experts, weights);
        for (int t = 0; t < k; t++) {
            char value[32];
            fprintf(f, "%d,", i);
            write_token_text(f, &g->model->bpe, g->ids[i]);
            csvio_format_value(value, sizeof value, weights[t]);
            fprintf(f, ",%d,%d,%s\n", t, experts[t], value);
        }
    }
    return fileio_batch_close(b, err);
}

/*
 * FOLDER/sinks.csv: a layer with learned sinks, the part of each row's
 * softmax each head's sink took (head,position,token,share): a row's
 * weights sum to 1 minus it.  Nothing without sinks (or with them off).
 */
static enum attn_status
write_model_sinks(struct fileio_batch *b, const struct family_model_state *g, const char *folder,
                  struct attn_error *err)
{
    const struct decoder_model *m = &g->model->dec;
    char path[64];
    FILE *f;
    enum attn_status st;

    if (!m->cfg.sinks || g->run.sinks_off)
        return ATTN_OK;
    snprintf(path, sizeof path, "%s/sinks.csv", folder);
    st = fileio_batch_open(b, path, &f, err);
    if (st != ATTN_OK)
        return st;
    fputs("head,position,token,share\n", f);
    for (int h = 0; h < m->cfg.n_head; h++)
        for (int i = 0; i < g->run.n; i++) {
            char value[32];
            fprintf(f, "%d,%d,", h, i);
            write_token_text(f, &g->model->bpe, g->ids[i]);
            csvio_format_value(value, sizeof value, decoder_sink_share(m, &g->run, h, i));
            fprintf(f, ",%s\n", value);
        }
    return fileio_batch_close(b, err);
}

/*
 * The selected stages (all present ones when sel is NULL): each layer's
 * into its folder, a layer at a time (moving to a layer works out its
 * masked scores), then the model-wide ones at the top.
 */
/* Stage s (one head, or every head: -1) of a comparison's difference into folder. */
static enum attn_status
write_difference(struct fileio_batch *b, struct compare *cmp, enum pipeline_stage s, int head,
                 const char *folder, struct attn_error *err)
{
    int first, last;
    enum attn_status st = ATTN_OK;

    export_heads_of(cmp->a, s, head, &first, &last);
    for (int h = first; h <= last && st == ATTN_OK; h++) {
        struct pipeline_view v;
        st = compare_stage_view(cmp, COMPARE_DIFFERENCE, s, h, &v, err);
        if (st == ATTN_OK)
            st = export_write_view(b, &v, s, h, folder, err);
    }
    return st;
}

/* Stage s of p, or of cmp's difference (cmp not NULL: p is its first), into folder (NULL: top). */
static enum attn_status
write_one_stage(struct fileio_batch *b, struct pipeline *p, struct compare *cmp,
                enum pipeline_stage s, int head, const char *folder, struct attn_error *err)
{
    return cmp != NULL ? write_difference(b, cmp, s, head, folder, err)
                       : export_write_stage(b, p, s, head, folder, err);
}

static enum attn_status
write_model_stages(struct fileio_batch *b, struct pipeline *p, struct compare *cmp,
                   const struct pipeline_selection *sel, int count, struct attn_error *err)
{
    enum attn_status st = ATTN_OK;
    const int n = sel != NULL ? count : STAGE_COUNT;

    progress_begin("exporting", p->layers);
    for (int l = 0; l < p->layers && st == ATTN_OK; l++) {
        char folder[32];
        if (progress_stopped()) {
            st = attn_fail(err, ATTN_ESTOPPED, "export stopped at layer %d of %d: nothing was written",
                           l, p->layers);
            break;
        }
        progress_step(l);
        snprintf(folder, sizeof folder, "layer%d", l);
        st = pipeline_select_layer(p, l, err);
        for (int i = 0; i < n && st == ATTN_OK; i++) {
            enum pipeline_stage s = sel != NULL ? sel[i].stage : (enum pipeline_stage)i;
            if (s == PIPELINE_SELECT_CACHE && pipeline_decoder(p) != NULL && cmp == NULL) {
                st = write_model_cache(b, p, pipeline_decoder(p), folder, err);
                continue;
            }
            /* (a stage only some layers have, a DeltaNet layer's or a sparse one's: theirs) */
            if ((unsigned)s < STAGE_COUNT && (sel == NULL || sel[i].param == NULL) &&
                pipeline_stage_present(p, s) && pipeline_stage_per_layer(p, s)) {
                st = write_one_stage(b, p, cmp, s, sel != NULL ? sel[i].head : -1, folder, err);
                if (cmp != NULL)
                    continue; /* (the routes and sinks are each model's own) */
                if (st == ATTN_OK && s == STAGE_ROUTER && pipeline_stage_present(p, s))
                    st = write_model_experts(b, p, pipeline_decoder(p), folder, err);
                if (st == ATTN_OK && s == STAGE_WEIGHTS)
                    st = write_model_sinks(b, pipeline_decoder(p), folder, err);
            }
        }
    }
    for (int i = 0; i < n && st == ATTN_OK; i++) {
        enum pipeline_stage s = sel != NULL ? sel[i].stage : (enum pipeline_stage)i;
        if ((unsigned)s < STAGE_COUNT &&
            (sel != NULL ? sel[i].param == NULL : pipeline_stage_present(p, s)) &&
            !pipeline_stage_per_layer(p, s))
            st = write_one_stage(b, p, cmp, s, sel != NULL ? sel[i].head : -1, NULL, err);
    }
    progress_end();
    return st;
}

enum attn_status
export_model_view(struct pipeline *p, enum export_model_what what, enum pipeline_stage s, int head,
                  int position, const char *dir, int *written, struct attn_error *err)
{
    const struct family_model_state *g = pipeline_decoder(p);
    struct fileio_batch b;
    enum attn_status st;
    char folder[32];

    if (written != NULL)
        *written = 0;
    if (g == NULL)
        return attn_fail(err, ATTN_EVALUE, "not a trained model's pipeline");
    if (position < 0 || position >= g->run.n)
        position = g->run.n - 1;
    st = fileio_batch_begin(&b, dir, err);
    if (st != ATTN_OK)
        return st;
    snprintf(folder, sizeof folder, "layer%d", p->layer);
    switch (what) {
    case EXPORT_MODEL_STAGE:
        /* One layer's stage goes in its layer's folder, as --export puts it. */
        st = pipeline_stage_per_layer(p, s) ? export_write_stage(&b, p, s, head, folder, err)
                                            : export_write_stage(&b, p, s, head, NULL, err);
        if (st == ATTN_OK && s == STAGE_ROUTER)
            st = write_model_experts(&b, p, g, folder, err);
        if (st == ATTN_OK && s == STAGE_WEIGHTS)
            st = write_model_sinks(&b, g, folder, err);
        break;
    case EXPORT_MODEL_QKV:
        st = export_write_stage(&b, p, STAGE_QUERIES, -1, folder, err);
        if (st == ATTN_OK)
            st = export_write_stage(&b, p, STAGE_KEYS, -1, folder, err);
        if (st == ATTN_OK)
            st = export_write_stage(&b, p, STAGE_VALUES, -1, folder, err);
        break;
    case EXPORT_MODEL_CACHE:
        st = export_write_stage(&b, p,
                                pipeline_stage_present(p, STAGE_KEYS_ROTATED) ? STAGE_KEYS_ROTATED
                                                                              : STAGE_KEYS,
                                -1, folder, err);
        if (st == ATTN_OK)
            st = export_write_stage(&b, p, STAGE_VALUES, -1, folder, err);
        break;
    case EXPORT_MODEL_MAP:
        st = write_model_heads(&b, p, err);
        break;
    case EXPORT_MODEL_NEXT:
        st = write_model_next(&b, p, err);
        if (st == ATTN_OK)
            st = write_model_lens(&b, g, position, err);
        break;
    }
    return export_finish(&b, st, written, err);
}

/*
 * generated.csv: step,position,id,token,probability, a row per written
 * token, the token as tokens.csv writes it, the probability it was drawn
 * with; beside a second model, second_probability, what it gave the token
 * (generate_step.compared_prob).
 */
static enum attn_status
write_generated(struct fileio_batch *b, const struct generation *gen, struct attn_error *err)
{
    FILE *f;
    char value[32];
    bool compared = false;
    enum attn_status st = fileio_batch_open(b, "generated.csv", &f, err);

    if (st != ATTN_OK)
        return st;
    for (int i = 0; i < gen->written; i++)
        compared = compared || !isnan(gen->steps[i].compared_prob);
    fputs(compared ? "step,position,id,token,probability,second_probability\n"
                   : "step,position,id,token,probability\n",
          f);
    for (int i = 0; i < gen->written; i++) {
        const struct generate_step *s = &gen->steps[i];
        fprintf(f, "%d,%d,%d,", i + 1, s->position, s->choice.id);
        write_token_text(f, &gen->model->bpe, s->choice.id);
        csvio_format_value(value, sizeof value, s->choice.prob);
        fprintf(f, ",%s", value);
        if (compared) {
            csvio_format_value(value, sizeof value, s->compared_prob);
            fprintf(f, ",%s", value);
        }
        fputc('\n', f);
    }
    return fileio_batch_close(b, err);
}

enum attn_status
export_model(struct pipeline *p, const struct pipeline_selection *sel, int count, const char *dir,
             int *written, struct attn_error *err)
{
    return export_model_written(p, sel, count, NULL, dir, written, err);
}

/*
 * heads-changed.csv: layer,head,measure, every head's change between a
 * comparison's two models (compare_heads_changed).
 */
static enum attn_status
write_heads_changed(struct fileio_batch *b, struct compare *c, struct attn_error *err)
{
    const int heads = head_map_heads(c->a);
    float *m = malloc(((size_t)c->a->layers * (size_t)heads + 1) * sizeof *m);
    FILE *f;
    enum attn_status st;

    if (m == NULL || compare_heads_changed(c, m) != 0) {
        free(m);
        return attn_fail(err, ATTN_ENOMEM, "out of memory for the heads' changes");
    }
    st = fileio_batch_open(b, "heads-changed.csv", &f, err);
    if (st == ATTN_OK) {
        fputs("layer,head,measure\n", f);
        for (int l = 0; l < c->a->layers; l++)
            for (int h = 0; h < heads; h++) {
                char value[32];
                csvio_format_value(value, sizeof value, m[(size_t)l * (size_t)heads + (size_t)h]);
                fprintf(f, "%d,%d,%s\n", l, h, value);
            }
        st = fileio_batch_close(b, err);
    }
    free(m);
    return st;
}

/* next-kl.csv: position,token,kl, KL(first || second) of the next tokens (compare_next_kl). */
static enum attn_status
write_next_kl(struct fileio_batch *b, struct compare *c, struct attn_error *err)
{
    const struct family_model_state *g = pipeline_decoder(c->a);
    const int n = g->run.n;
    float *kl = malloc(((size_t)n + 1) * sizeof *kl);
    FILE *f;
    enum attn_status st;

    if (kl == NULL)
        return attn_fail(err, ATTN_ENOMEM, "out of memory for the next tokens' divergence");
    st = compare_next_kl(c, kl, err);
    if (st == ATTN_OK)
        st = fileio_batch_open(b, "next-kl.csv", &f, err);
    if (st == ATTN_OK) {
        fputs("position,token,kl\n", f);
        for (int i = 0; i < n; i++) {
            char value[32];
            fprintf(f, "%d,", i);
            write_token_text(f, &g->model->bpe, g->ids[i]);
            csvio_format_value(value, sizeof value, kl[i]);
            fprintf(f, ",%s\n", value);
        }
        st = fileio_batch_close(b, err);
    }
    free(kl);
    return st;
}

/*
 * What one folder of an export holds: a model's own files (with a
 * comparison's measures beside them when cmp is given), or the
 * difference's stages (difference: p is cmp's first).
 */
static enum attn_status
export_folder(struct pipeline *p, struct compare *cmp, bool difference,
              const struct pipeline_selection *sel, int count, const struct generation *gen,
              const char *dir, int *written, struct attn_error *err)
{
    const struct family_model_state *g = pipeline_decoder(p);
    const int shown = p->layer;
    struct compare *diff = difference ? cmp : NULL;
    struct fileio_batch b;
    enum attn_status st;

    if (written != NULL)
        *written = 0;
    if (g == NULL)
        return attn_fail(err, ATTN_EVALUE, "not a trained model's pipeline");
    st = fileio_batch_begin(&b, dir, err);
    if (st != ATTN_OK)
        return st;
    if (sel == NULL || count == 0) {
        /* A whole model: the layer folders an earlier export made are replaced. */
        fileio_batch_replaces(&b);
        if (!difference)
            st = write_model_tokens(&b, g, err);
        if (st == ATTN_OK)
            st = write_model_stages(&b, p, diff, NULL, 0, err);
        if (st == ATTN_OK && g->run.top > 0 && !difference)
            st = write_model_next(&b, p, err);
        if (st == ATTN_OK && cmp != NULL && !difference)
            st = write_heads_changed(&b, cmp, err);
        if (st == ATTN_OK && cmp != NULL && !difference && g->run.top > 0)
            st = write_next_kl(&b, cmp, err);
    } else {
        for (int i = 0; i < count && st == ATTN_OK && !difference; i++) {
            if (sel[i].stage == PIPELINE_SELECT_TOKENS)
                st = write_model_tokens(&b, g, err);
            else if (sel[i].stage == PIPELINE_SELECT_NEXT)
                st = write_model_next(&b, p, err);
            else if (sel[i].stage == PIPELINE_SELECT_HEADS)
                st = write_model_heads(&b, p, err);
            else if (sel[i].stage == PIPELINE_SELECT_LENS)
                st = write_model_lens(&b, g, g->run.n - 1, err);
            if (st == ATTN_OK && cmp != NULL && sel[i].stage == PIPELINE_SELECT_HEADS)
                st = write_heads_changed(&b, cmp, err);
            if (st == ATTN_OK && cmp != NULL && sel[i].stage == PIPELINE_SELECT_NEXT)
                st = write_next_kl(&b, cmp, err);
        }
        if (st == ATTN_OK)
            st = write_model_stages(&b, p, diff, sel, count, err);
    }
    if (st == ATTN_OK && gen != NULL && !difference)
        st = write_generated(&b, gen, err);
    if (p->layer != shown && pipeline_select_layer(p, shown, NULL) != ATTN_OK)
        st = attn_fail(err, ATTN_ENOMEM, "out of memory");
    return export_finish(&b, st, written, err);
}

enum attn_status
export_model_written(struct pipeline *p, const struct pipeline_selection *sel, int count,
                     const struct generation *gen, const char *dir, int *written,
                     struct attn_error *err)
{
    return export_folder(p, NULL, false, sel, count, gen, dir, written, err);
}

enum attn_status
export_model_compared(struct compare *c, const struct pipeline_selection *sel, int count,
                      const struct generation *gen, const char *dir, int *written,
                      struct attn_error *err)
{
    char sub[4096];
    int got = 0;
    enum attn_status st = export_folder(c->a, c, false, sel, count, gen, dir, written, err);

    if (st == ATTN_OK) {
        snprintf(sub, sizeof sub, "%s/compare", dir);
        st = export_folder(c->b, NULL, false, sel, count, NULL, sub, &got, err);
        if (written != NULL)
            *written += got;
    }
    if (st == ATTN_OK) {
        snprintf(sub, sizeof sub, "%s/difference", dir);
        st = export_folder(c->a, c, true, sel, count, NULL, sub, &got, err);
        if (written != NULL)
            *written += got;
    }
    /* (the second shows the first's layer again: the export moved it through every layer) */
    if (st == ATTN_OK)
        st = compare_follow(c, err);
    return st;
}
