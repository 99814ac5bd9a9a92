/* pipeline.c: sentence -> every stage (see pipeline.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "attnscope/pipeline.h"
#include "attnscope/posenc.h"

struct stage_info {
    const char *name;
    bool per_head;
    const char *formula;
};

static const struct stage_info stages[] = {
#define PIPELINE_STAGE_INFO(e, name, per_head, formula) { name, per_head, formula },
    PIPELINE_STAGE_LIST(PIPELINE_STAGE_INFO)
#undef PIPELINE_STAGE_INFO
};

const char *
pipeline_stage_name(enum pipeline_stage s)
{
    return (unsigned)s < STAGE_COUNT ? stages[s].name : "?";
}

const char *
pipeline_stage_formula(enum pipeline_stage s)
{
    return (unsigned)s < STAGE_COUNT ? stages[s].formula : "?";
}

bool
pipeline_stage_per_head(enum pipeline_stage s)
{
    return (unsigned)s < STAGE_COUNT && stages[s].per_head;
}

int
pipeline_stage_parse(const char *name, enum pipeline_stage *s)
{
    for (int i = 0; i < STAGE_COUNT; i++) {
        if (strcmp(name, stages[i].name) == 0) {
            *s = (enum pipeline_stage)i;
            return 0;
        }
    }
    return -1;
}

bool
pipeline_stage_present(const struct pipeline *p, enum pipeline_stage s)
{
    if (s == STAGE_EMBEDDINGS || s == STAGE_POSITIONAL)
        return p->cfg.positional;
    return (unsigned)s < STAGE_COUNT;
}

void
pipeline_stage_view(const struct pipeline *p, enum pipeline_stage s, int head,
                    struct pipeline_view *v)
{
    const struct attention_stages *st = &p->st;
    const char *const *tokens = (const char *const *)p->tokens.text;

    memset(v, 0, sizeof *v);
    v->row_labels = tokens;
    switch (s) {
    case STAGE_EMBEDDINGS:
        v->m = p->embeddings;
        break;
    case STAGE_POSITIONAL:
        v->m = p->positional;
        break;
    case STAGE_INPUTS:
        v->m = p->inputs;
        break;
    case STAGE_QUERIES:
        v->m = st->queries;
        v->col_group = st->shape.heads > 1 ? st->shape.head_dim : 0;
        break;
    case STAGE_KEYS:
        v->m = st->keys;
        v->col_group = st->shape.heads > 1 ? st->shape.head_dim : 0;
        break;
    case STAGE_VALUES:
        v->m = st->values;
        v->col_group = st->shape.heads > 1 ? st->shape.head_dim : 0;
        break;
    case STAGE_SCORES:
    case STAGE_MASKED:
    case STAGE_SCALED:
    case STAGE_WEIGHTS:
    case STAGE_DROPPED: {
        const float *buf = s == STAGE_SCORES   ? st->scores
                           : s == STAGE_MASKED ? st->masked
                           : s == STAGE_SCALED ? st->scaled
                           : s == STAGE_WEIGHTS ? st->weights
                                                : st->dropped;
        if (head < 0 || head >= st->shape.heads)
            head = 0;
        v->m = attention_head(st, buf, head);
        v->col_labels = tokens;
        break;
    }
    case STAGE_CONTEXT:
        v->m = st->context;
        v->col_group = st->shape.heads > 1 ? st->shape.head_dim : 0;
        break;
    case STAGE_OUTPUT:
    default:
        v->m = st->output;
        break;
    }
}

enum attn_status
pipeline_create(struct pipeline *p, const struct attention_config *cfg,
                const struct pipeline_source *src, struct attn_error *err)
{
    const struct vocab *vocab = src->vocab;
    enum attn_status st;
    struct rng r;
    int n;

    memset(p, 0, sizeof *p);
    p->cfg = *cfg;
    p->d_in = vocab->dim;
    st = attention_config_check(cfg, vocab->dim, err);
    if (st != ATTN_OK)
        return st;
    st = tokenizer_split(src->sentence, &p->tokens, err);
    if (st != ATTN_OK)
        return st;
    n = p->tokens.count;

    p->made_up = calloc((size_t)n, 1);
    if (p->made_up == NULL) {
        st = attn_fail(err, ATTN_ENOMEM, "out of memory");
        goto fail;
    }
    st = matrix_create(&p->embeddings, n, p->d_in, err);
    if (st == ATTN_OK)
        st = matrix_create(&p->inputs, n, p->d_in, err);
    if (st == ATTN_OK && cfg->positional)
        st = matrix_create(&p->positional, n, p->d_in, err);
    if (st != ATTN_OK)
        goto fail;
    vocab_embed(vocab, &p->tokens, &p->embeddings, p->made_up);
    memcpy(p->inputs.data, p->embeddings.data, matrix_size(&p->inputs) * sizeof(float));
    if (cfg->positional) {
        posenc_sinusoidal(&p->positional);
        for (size_t e = 0; e < matrix_size(&p->inputs); e++)
            p->inputs.data[e] += p->positional.data[e];
    }

    st = params_create(&p->params, cfg, p->d_in, err);
    if (st != ATTN_OK)
        goto fail;
    rng_seed(&r, cfg->seed);
    if (src->weights != NULL) {
        /* Loaded parameters draw nothing: dropout starts from a fresh seed. */
        if (!params_same_layout(&p->params, src->weights)) {
            st = attn_fail(err, ATTN_ESHAPE,
                           "the given weights do not fit --variant %s with d_in %d, --d-out %d "
                           "and --heads %d",
                           attention_variant_name(cfg->variant), p->d_in, cfg->d_out, cfg->heads);
            goto fail;
        }
        params_destroy(&p->params);
        st = params_copy(&p->params, src->weights, err);
        if (st != ATTN_OK)
            goto fail;
        p->params_given = true;
    } else {
        params_draw(&p->params, &r);
    }
    p->rng_after_params = r;

    st = attention_stages_create(&p->st, cfg, p->d_in, n, n, err);
    if (st != ATTN_OK)
        goto fail;
    attention_project(&p->st, cfg, &p->inputs, &p->params);
    attention_attend(&p->st, cfg, &p->params, &r);
    return ATTN_OK;

fail:
    pipeline_destroy(p);
    return st;
}

void
pipeline_destroy(struct pipeline *p)
{
    if (p == NULL)
        return;
    token_list_destroy(&p->tokens);
    free(p->made_up);
    matrix_destroy(&p->embeddings);
    matrix_destroy(&p->positional);
    matrix_destroy(&p->inputs);
    params_destroy(&p->params);
    attention_stages_destroy(&p->st);
    memset(p, 0, sizeof *p);
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
    if (dot != NULL && dot[1] == 'h' && dot[2] >= '0' && dot[2] <= '9' &&
        (size_t)(dot - name) < sizeof base) {
        char *end;
        long h = strtol(dot + 2, &end, 10);
        memcpy(base, name, (size_t)(dot - name));
        base[dot - name] = '\0';
        if (*end == '\0' && pipeline_stage_parse(base, &sel->stage) == 0 &&
            pipeline_stage_per_head(sel->stage) && h < p->st.shape.heads) {
            sel->head = (int)h;
            return 0;
        }
    }
    return -1;
}
