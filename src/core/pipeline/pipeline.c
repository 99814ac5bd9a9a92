/*
 * pipeline.c: sentence -> every stage (see pipeline.h), through the
 * pipeline's model family (family.h).
 */
#include "config.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/pipeline/knob.h"
#include "attnscope/pipeline/pipeline.h"

/* Shared by every pipeline of every thread: a computation's number is never reused. */
static _Atomic unsigned long generations;

/* Makes p empty for a computation of cfg by family f. */
static void
begin(struct pipeline *p, const struct family *f, const struct attention_config *cfg)
{
    memset(p, 0, sizeof *p);
    p->family = f;
    p->generation = atomic_fetch_add(&generations, 1) + 1;
    p->cfg = *cfg;
    p->layers = 1;
}

/*
 * What f would allocate for cfg and src, refused past PIPELINE_MAX_BYTES
 * together with held bytes that stay allocated meanwhile (the pipeline a
 * rebuild replaces).  Before any allocation.
 */
static enum attn_status
check_budget(const struct family *f, const struct attention_config *cfg,
             const struct pipeline_source *src, size_t held, size_t *bytes,
             struct attn_error *err)
{
    enum attn_status st;
    const char *what = "";
    const size_t limit = f->budget != NULL ? f->budget(src, &what) : PIPELINE_MAX_BYTES;

    *bytes = 0;
    if (f->estimate == NULL)
        return ATTN_OK;
    st = f->estimate(cfg, src, bytes, err);
    if (st != ATTN_OK)
        return st;
    if (*bytes <= limit - (held < limit ? held : limit))
        return ATTN_OK;
    if (f->budget != NULL && held == 0)
        return attn_fail(err, ATTN_ELIMIT,
                         "this text needs %zu MiB of stage buffers; %s is %zu MiB: shorten it",
                         *bytes >> 20, what, limit >> 20);
    if (f->budget != NULL)
        return attn_fail(err, ATTN_ELIMIT,
                         "this needs %zu MiB of stage buffers beside the %zu MiB of what is shown "
                         "(kept until the new ones are built); %s is %zu MiB: shorten the text",
                         *bytes >> 20, held >> 20, what, limit >> 20);
    if (held == 0)
        return attn_fail(err, ATTN_ELIMIT,
                         "this configuration needs %zu MiB (parameters, inputs and stage "
                         "buffers); attnscope's limit is %zu MiB: use fewer tokens, heads or "
                         "dimensions",
                         *bytes >> 20, PIPELINE_MAX_BYTES >> 20);
    return attn_fail(err, ATTN_ELIMIT,
                     "this configuration needs %zu MiB beside the %zu MiB of the one shown "
                     "(kept until the new one is built); attnscope's limit is %zu MiB: make "
                     "one of them smaller",
                     *bytes >> 20, held >> 20, PIPELINE_MAX_BYTES >> 20);
    return ATTN_OK;
}

enum attn_status
pipeline_create_as(struct pipeline *p, const struct family *f, const struct attention_config *cfg,
                   const struct pipeline_source *src, struct attn_error *err)
{
    enum attn_status st;
    size_t bytes;

    memset(p, 0, sizeof *p);
    st = check_budget(f, cfg, src, 0, &bytes, err);
    if (st != ATTN_OK)
        return st;
    begin(p, f, cfg);
    p->bytes = bytes;
    st = f->create(p, cfg, src, err);
    if (st != ATTN_OK)
        pipeline_destroy(p);
    return st;
}

enum attn_status
pipeline_rebuild_as(struct pipeline *p, struct pipeline *prev, const struct family *f,
                    const struct attention_config *cfg, const struct pipeline_source *src,
                    struct attn_error *err)
{
    enum attn_status st;
    size_t bytes;

    memset(p, 0, sizeof *p);
    st = check_budget(f, cfg, src, prev != NULL ? prev->bytes : 0, &bytes, err);
    if (st != ATTN_OK)
        return st;
    if (prev == NULL || prev->family != f || f->rebuild == NULL)
        return pipeline_create_as(p, f, cfg, src, err);
    begin(p, f, cfg);
    p->bytes = bytes;
    st = f->rebuild(p, prev, cfg, src, err);
    if (st != ATTN_OK)
        pipeline_destroy(p);
    return st;
}

bool
pipeline_attend_only(const struct pipeline *p, const struct attention_config *cfg)
{
    return p->family != NULL && p->family->reattend != NULL &&
           knob_differ_at_most(&p->cfg, cfg, RECOMPUTE_ATTENTION);
}

enum attn_status
pipeline_reattend(struct pipeline *p, const struct attention_config *cfg, struct attn_error *err)
{
    enum attn_status st;

    if (!pipeline_attend_only(p, cfg))
        return attn_fail(err, ATTN_EVALUE, "more than the attention's knobs changed");
    st = p->family->reattend(p, cfg, err);
    if (st == ATTN_OK)
        p->generation = atomic_fetch_add(&generations, 1) + 1;
    return st;
}

void
pipeline_destroy(struct pipeline *p)
{
    if (p == NULL)
        return;
    if (p->family != NULL && p->family->destroy != NULL)
        p->family->destroy(p);
    token_list_destroy(&p->tokens);
    free(p->made_up);
    if (p->qkv_given) {
        free((void *)p->query_labels);
        free((void *)p->key_labels);
    }
    free(p->label_storage);
    token_list_destroy(&p->source_tokens);
    free(p->source_made_up);
    free(p->source_label_storage);
    matrix_destroy(&p->source);
    matrix_destroy(&p->embeddings);
    matrix_destroy(&p->positional);
    matrix_destroy(&p->inputs);
    params_destroy(&p->params);
    attention_stages_destroy(&p->st);
    memset(p, 0, sizeof *p);
}

static const char *const *sort_text; /* for by_text: qsort has no context argument in C11 */

static int
by_text(const void *a, const void *b)
{
    int ia = *(const int *)a;
    int ib = *(const int *)b;
    int c = strcmp(sort_text[ia], sort_text[ib]);

    return c != 0 ? c : (ia > ib) - (ia < ib);
}

/*
 * The rows' and columns' labels: each token, and "token#i" (i its position)
 * for each repeat of a token after its first, so that "the" at 0 and
 * "the#6" can be told apart on screen, in explanations, in CSV headers and
 * in lessons' cell: lines.  Without repeats the labels are the tokens
 * themselves.
 */
enum attn_status
pipeline_label_tokens(struct pipeline *p, struct attn_error *err)
{
    enum attn_status st = pipeline_label_list(&p->tokens, &p->label_storage, &p->query_labels, err);

    p->key_labels = p->query_labels;
    return st;
}

enum attn_status
pipeline_label_list(const struct token_list *tl, char **storage, const char *const **labels_out,
                    struct attn_error *err)
{
    const int n = tl->count;
    const char *const *text = (const char *const *)tl->text;
    int *order = malloc((size_t)n * sizeof *order);
    unsigned char *repeated = calloc((size_t)n, 1);
    size_t bytes = (size_t)n * sizeof(char *);
    int repeats = 0;
    char **labels;
    char *at;

    *labels_out = text;
    if (order == NULL || repeated == NULL) {
        free(order);
        free(repeated);
        return attn_fail(err, ATTN_ENOMEM, "out of memory");
    }
    for (int i = 0; i < n; i++)
        order[i] = i;
    sort_text = text;
    qsort(order, (size_t)n, sizeof *order, by_text);
    /* Sorted by text, then position: each repeat after the first takes its position. */
    for (int k = 1; k < n; k++)
        if (strcmp(text[order[k - 1]], text[order[k]]) == 0)
            repeated[order[k]] = 1;
    free(order);
    for (int i = 0; i < n; i++) {
        repeats += repeated[i];
        bytes += strlen(text[i]) + 1 + (repeated[i] ? 12 : 0);
    }
    if (repeats == 0) {
        free(repeated);
        return ATTN_OK;
    }
    /* One block: the pointers, then the text (freed with label_storage). */
    *storage = malloc(bytes);
    if (*storage == NULL) {
        free(repeated);
        return attn_fail(err, ATTN_ENOMEM, "out of memory");
    }
    labels = (char **)(void *)*storage;
    at = *storage + (size_t)n * sizeof(char *);
    for (int i = 0; i < n; i++) {
        labels[i] = at;
        if (repeated[i])
            at += (size_t)sprintf(at, "%s#%d", text[i], i) + 1;
        else
            at += (size_t)sprintf(at, "%s", text[i]) + 1;
    }
    free(repeated);
    *labels_out = (const char *const *)labels;
    return ATTN_OK;
}

enum attn_status
pipeline_select_layer(struct pipeline *p, int layer, struct attn_error *err)
{
    enum attn_status st;

    if (layer < 0 || layer >= p->layers)
        return attn_fail(err, ATTN_EVALUE, "layer %d: the model has layers 0 to %d", layer,
                         p->layers - 1);
    if (layer == p->layer || p->family->select_layer == NULL)
        return ATTN_OK;
    st = p->family->select_layer(p, layer, err);
    if (st == ATTN_OK)
        p->layer = layer;
    return st;
}

bool
pipeline_stage_per_layer(const struct pipeline *p, enum pipeline_stage s)
{
    return (unsigned)s < STAGE_COUNT && p->family != NULL &&
           (p->family->layer_stages & FAMILY_STAGE(s)) != 0;
}

int
pipeline_select(const struct pipeline *p, const char *name, struct pipeline_selection *sel)
{
    char base[64];
    const char *dot = strrchr(name, '.');

    sel->param = NULL;
    sel->head = -1;
    sel->stage = STAGE_INPUTS;
    for (int i = 0; i < p->params.count; i++) {
        if (strcmp(p->params.p[i].name, name) == 0) {
            sel->param = &p->params.p[i];
            return 0;
        }
    }
    if (pipeline_stage_parse(name, &sel->stage) == 0)
        return pipeline_stage_present(p, sel->stage) ? 0 : -1;
    if (p->layers > 1 || pipeline_stage_present(p, STAGE_PRE_ATTN_NORM)) {
        if (strcmp(name, "tokens") == 0 || strcmp(name, "next") == 0 ||
            strcmp(name, "heads") == 0 || strcmp(name, "lens") == 0) {
            sel->stage = name[0] == 't'   ? PIPELINE_SELECT_TOKENS
                         : name[0] == 'n' ? PIPELINE_SELECT_NEXT
                         : name[0] == 'h' ? PIPELINE_SELECT_HEADS
                                          : PIPELINE_SELECT_LENS;
            return 0;
        }
        if (strcmp(name, "kv") == 0 || strcmp(name, "cache") == 0) {
            sel->stage = PIPELINE_SELECT_CACHE;
            return 0;
        }
    }
    if (dot != NULL && dot[1] == 'h' && dot[2] >= '0' && dot[2] <= '9' &&
        (size_t)(dot - name) < sizeof base) {
        char *end;
        long h = strtol(dot + 2, &end, 10);
        memcpy(base, name, (size_t)(dot - name));
        base[dot - name] = '\0';
        if (*end == '\0' && pipeline_stage_parse(base, &sel->stage) == 0 &&
            pipeline_stage_per_head(sel->stage) && pipeline_stage_present(p, sel->stage)) {
            if (h >= pipeline_stage_heads(p, sel->stage))
                return PIPELINE_SELECT_NO_HEAD;
            sel->head = (int)h;
            return 0;
        }
    }
    return -1;
}
