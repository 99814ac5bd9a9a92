/*
 * family_book.c: the book's chapter-3 classes as a model family (see
 * family.h): the word tokenizer and a vocabulary (with made-up vectors for
 * words it lacks), the sinusoidal encoding, parameters drawn in PyTorch's
 * construction order (or loaded), and the attention passes of attention.c.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "attnscope/pipeline/family.h"
#include "attnscope/pipeline/pipeline.h"
#include "attnscope/attention/posenc.h"

/* Copies n labels into one block the pipeline owns; returns NULL when out of memory. */
static const char **
copy_labels(const char *const *labels, int n, char **storage, size_t *used, size_t cap)
{
    const char **out = malloc((size_t)n * sizeof *out);

    if (out == NULL)
        return NULL;
    for (int i = 0; i < n; i++) {
        size_t len = strlen(labels[i]) + 1;
        if (*used + len > cap) {
            free(out);
            return NULL;
        }
        memcpy(*storage + *used, labels[i], len);
        out[i] = *storage + *used;
        *used += len;
    }
    return out;
}

/* Q, K and V given: no sentence, no embeddings, no weights. */
static enum attn_status
create_from_qkv(struct pipeline *p, const struct attention_config *cfg, const struct qkv_given *g,
                struct attn_error *err)
{
    const int nq = g->q.rows;
    const int nk = g->k.rows;
    size_t cap = 0;
    size_t used = 0;
    enum attn_status st;
    struct rng r;
    const char **q_labels;
    const char **k_labels;

    p->qkv_given = true;
    p->d_in = g->q.cols;
    if (attention_variant_has_weights(cfg->variant))
        return attn_fail(err, ATTN_EVALUE,
                         "--qkv gives Q, K and V directly: it works with --variant simple only");
    st = attention_config_check(cfg, p->d_in, err);
    if (st != ATTN_OK)
        return st;
    for (int i = 0; i < nq; i++)
        cap += strlen(g->q_labels[i]) + 1;
    for (int j = 0; j < nk; j++)
        cap += strlen(g->k_labels[j]) + 1;
    p->label_storage = malloc(cap);
    p->made_up = calloc((size_t)nq, 1);
    if (p->label_storage == NULL || p->made_up == NULL)
        return attn_fail(err, ATTN_ENOMEM, "out of memory");
    q_labels = copy_labels(g->q_labels, nq, &p->label_storage, &used, cap);
    k_labels = copy_labels(g->k_labels, nk, &p->label_storage, &used, cap);
    p->query_labels = q_labels;
    p->key_labels = k_labels;
    if (q_labels == NULL || k_labels == NULL)
        return attn_fail(err, ATTN_ENOMEM, "out of memory");
    st = params_create(&p->params, cfg, p->d_in, err);
    if (st != ATTN_OK)
        return st;
    st = attention_stages_create(&p->st, cfg, p->d_in, nq, nk, err);
    if (st != ATTN_OK)
        return st;
    memcpy(p->st.queries.data, g->q.data, matrix_size(&g->q) * sizeof(float));
    memcpy(p->st.keys.data, g->k.data, matrix_size(&g->k) * sizeof(float));
    memcpy(p->st.values.data, g->v.data, matrix_size(&g->v) * sizeof(float));
    rng_seed(&r, cfg->seed);
    p->rng_after_params = r;
    attention_attend(&p->st, cfg, &p->params, &r);
    return ATTN_OK;
}

/*
 * Q, K and V for p's inputs, copying the rows of prev whose input row is the
 * same (an edit leaves most tokens as they were).  A row's projection
 * depends on that row alone, and every element of a product is computed
 * the same way whatever rows it is computed with, so the copy is exact.
 */
static void
project_changed_rows(struct pipeline *p, const struct pipeline *prev,
                     const struct attention_config *cfg)
{
    const int n = p->inputs.rows;
    const int d = p->d_in;
    const int w = p->st.shape.d_qkv;
    struct matrix *out[3] = { &p->st.queries, &p->st.keys, &p->st.values };
    const struct matrix *old[3] = { &prev->st.queries, &prev->st.keys, &prev->st.values };
    int *changed = malloc((size_t)n * sizeof *changed);
    int count = 0;
    bool comparable = prev->st.shape.d_qkv == w && prev->st.nq == prev->inputs.rows;

    if (changed == NULL || !comparable) {
        free(changed);
        attention_project(&p->st, cfg, &p->inputs, &p->inputs, &p->params);
        return;
    }
    for (int i = 0; i < n; i++) {
        if (i < prev->inputs.rows &&
            memcmp(matrix_row(&p->inputs, i), matrix_row(&prev->inputs, i), (size_t)d * sizeof(float)) == 0) {
            for (int k = 0; k < 3; k++)
                memcpy(matrix_row(out[k], i), matrix_row(old[k], i), (size_t)w * sizeof(float));
        } else {
            changed[count++] = i;
        }
    }
    if (count == n) {
        attention_project(&p->st, cfg, &p->inputs, &p->inputs, &p->params);
    } else if (count > 0) {
        struct attention_stages part;
        struct matrix rows;
        if (matrix_create(&rows, count, d, NULL) != ATTN_OK ||
            attention_stages_create(&part, cfg, d, count, count, NULL) != ATTN_OK) {
            matrix_destroy(&rows);
            attention_project(&p->st, cfg, &p->inputs, &p->inputs, &p->params);
        } else {
            for (int c = 0; c < count; c++)
                memcpy(matrix_row(&rows, c), matrix_row(&p->inputs, changed[c]), (size_t)d * sizeof(float));
            attention_project(&part, cfg, &rows, &rows, &p->params);
            {
                const struct matrix *got[3] = { &part.queries, &part.keys, &part.values };
                for (int c = 0; c < count; c++)
                    for (int k = 0; k < 3; k++)
                        memcpy(matrix_row(out[k], changed[c]), matrix_row(got[k], c),
                               (size_t)w * sizeof(float));
            }
            attention_stages_destroy(&part);
            matrix_destroy(&rows);
        }
    }
    free(changed);
}

/* x += the positional encoding or embedding pe (the same shape). */
static void
add_positions(struct matrix *x, const struct matrix *pe)
{
    for (size_t e = 0; e < matrix_size(x); e++)
        x->data[e] += pe->data[e];
}

/* The source's tokens; the tokenizer's refusal says it was the source. */
static enum attn_status
split_source(const char *text, struct token_list *tl, struct attn_error *err)
{
    struct attn_error sub;
    enum attn_status st = tokenizer_split(text, tl, &sub);

    if (st != ATTN_OK)
        return attn_fail(err, st, "--source: %s", sub.msg);
    return ATTN_OK;
}

/*
 * Cross-attention's source sentence: its tokens (the keys' labels), its
 * embeddings from its vocabulary (src->source_vocab, else the target's)
 * and, with the sinusoidal encoding on, its own positions from 0.
 */
static enum attn_status
make_source(struct pipeline *p, const struct attention_config *cfg, const struct pipeline_source *src,
            struct attn_error *err)
{
    const struct vocab *vocab = src->source_vocab != NULL ? src->source_vocab : src->vocab;
    enum attn_status st;
    struct matrix pe;

    if (src->source == NULL)
        return attn_fail(err, ATTN_EVALUE, "--source: no source sentence was given");
    if (vocab->dim != p->d_in)
        return attn_fail(err, ATTN_ESHAPE,
                         "the source's vocabulary has %d dimensions and the target's %d: "
                         "cross-attention needs one width",
                         vocab->dim, p->d_in);
    st = split_source(src->source, &p->source_tokens, err);
    if (st == ATTN_OK)
        st = pipeline_label_list(&p->source_tokens, &p->source_label_storage, &p->key_labels, err);
    if (st != ATTN_OK)
        return st;
    p->source_made_up = calloc((size_t)p->source_tokens.count, 1);
    if (p->source_made_up == NULL)
        return attn_fail(err, ATTN_ENOMEM, "out of memory");
    st = matrix_create(&p->source, p->source_tokens.count, p->d_in, err);
    if (st != ATTN_OK)
        return st;
    vocab_embed(vocab, &p->source_tokens, &p->source, p->source_made_up);
    if (!cfg->positional)
        return ATTN_OK;
    st = matrix_create(&pe, p->source_tokens.count, p->d_in, err);
    if (st != ATTN_OK)
        return st;
    posenc_sinusoidal(&pe);
    add_positions(&p->source, &pe);
    matrix_destroy(&pe);
    return ATTN_OK;
}

/*
 * The learned positional embedding, as a PyTorch model holding
 * nn.Embedding(n, d_in) after its attention module would have it: drawn
 * with torch.randn's numbers from the generator where the weights left it
 * (so switching it on changes no weight; dropout draws after it).
 */
static void
learned_positions(struct pipeline *p, const struct attention_config *cfg, struct rng *r)
{
    if (!cfg->positional || !cfg->positional_learned)
        return;
    rng_normal_f32(r, p->positional.data, matrix_size(&p->positional), 0.0, 1.0);
    add_positions(&p->inputs, &p->positional);
}

/* A sentence: tokens, embeddings, parameters (drawn, given or moved from prev), every stage. */
static enum attn_status
create_from_sentence(struct pipeline *p, const struct attention_config *cfg,
                     const struct pipeline_source *src, struct pipeline *prev,
                     struct attn_error *err)
{
    const struct vocab *vocab = src->vocab;
    const struct matrix *kv;
    enum attn_status st;
    struct rng r;
    int n;
    int nk;

    p->d_in = vocab->dim;
    st = attention_config_check(cfg, vocab->dim, err);
    if (st != ATTN_OK)
        return st;
    st = tokenizer_split(src->sentence, &p->tokens, err);
    if (st != ATTN_OK)
        return st;
    n = p->tokens.count;
    st = pipeline_label_tokens(p, err);
    if (st != ATTN_OK)
        return st;

    p->made_up = calloc((size_t)n, 1);
    if (p->made_up == NULL)
        return attn_fail(err, ATTN_ENOMEM, "out of memory");
    st = matrix_create(&p->embeddings, n, p->d_in, err);
    if (st == ATTN_OK)
        st = matrix_create(&p->inputs, n, p->d_in, err);
    if (st == ATTN_OK && cfg->positional)
        st = matrix_create(&p->positional, n, p->d_in, err);
    if (st != ATTN_OK)
        return st;
    vocab_embed(vocab, &p->tokens, &p->embeddings, p->made_up);
    memcpy(p->inputs.data, p->embeddings.data, matrix_size(&p->inputs) * sizeof(float));
    if (cfg->positional && !cfg->positional_learned) {
        posenc_sinusoidal(&p->positional);
        add_positions(&p->inputs, &p->positional);
    }
    if (cfg->cross) {
        st = make_source(p, cfg, src, err);
        if (st != ATTN_OK)
            return st;
    }
    nk = cfg->cross ? p->source.rows : n;
    kv = cfg->cross ? &p->source : &p->inputs;

    if (prev != NULL) {
        /* The same parameters as before: taken over, not drawn again. */
        p->params = prev->params;
        memset(&prev->params, 0, sizeof prev->params);
        p->params_given = prev->params_given;
        p->rng_after_params = prev->rng_after_params;
        r = prev->rng_after_params;
        learned_positions(p, cfg, &r);
        st = attention_stages_create(&p->st, cfg, p->d_in, n, nk, err);
        if (st != ATTN_OK)
            return st;
        if (cfg->cross)
            attention_project(&p->st, cfg, &p->inputs, kv, &p->params);
        else
            project_changed_rows(p, prev, cfg);
        attention_attend(&p->st, cfg, &p->params, &r);
        return ATTN_OK;
    }
    st = params_create(&p->params, cfg, p->d_in, err);
    if (st != ATTN_OK)
        return st;
    rng_seed(&r, cfg->seed);
    if (src->weights != NULL) {
        /* Loaded parameters draw nothing: dropout starts from a fresh seed. */
        if (!params_same_layout(&p->params, src->weights))
            return attn_fail(err, ATTN_ESHAPE,
                             "the given weights do not fit --variant %s with d_in %d, --d-out %d "
                             "and --heads %d",
                             attention_variant_name(cfg->variant), p->d_in, cfg->d_out, cfg->heads);
        params_destroy(&p->params);
        st = params_copy(&p->params, src->weights, err);
        if (st != ATTN_OK)
            return st;
        p->params_given = true;
    } else {
        params_draw(&p->params, &r);
    }
    p->rng_after_params = r;
    learned_positions(p, cfg, &r);

    st = attention_stages_create(&p->st, cfg, p->d_in, n, nk, err);
    if (st != ATTN_OK)
        return st;
    attention_project(&p->st, cfg, &p->inputs, kv, &p->params);
    attention_attend(&p->st, cfg, &p->params, &r);
    return ATTN_OK;
}

/* Whether cfg draws exactly the parameters prev holds. */
static bool
same_parameters(const struct pipeline *prev, const struct attention_config *cfg,
                const struct pipeline_source *src)
{
    const struct attention_config *c = &prev->cfg;

    if (prev->qkv_given || src->qkv != NULL || prev->d_in != src->vocab->dim)
        return false;
    if (c->variant != cfg->variant || c->qkv_bias != cfg->qkv_bias)
        return false;
    if (attention_variant_has_weights(cfg->variant) && c->d_out != cfg->d_out)
        return false;
    if (attention_variant_info(cfg->variant)->heads && c->heads != cfg->heads)
        return false;
    if (prev->params_given)
        return src->weights != NULL && params_same_layout(&prev->params, src->weights);
    return src->weights == NULL && c->seed == cfg->seed;
}

/* Parameters, embeddings, inputs (and the positional encoding) and every stage buffer. */
static enum attn_status
book_estimate(const struct attention_config *cfg, const struct pipeline_source *src,
              size_t *bytes, struct attn_error *err)
{
    int d_in;
    int nq;
    int nk;
    enum attn_status st;
    size_t inputs = 0;

    if (src->qkv != NULL) {
        d_in = src->qkv->q.cols;
        nq = src->qkv->q.rows;
        nk = src->qkv->k.rows;
        inputs = matrix_size(&src->qkv->q) + matrix_size(&src->qkv->k) + matrix_size(&src->qkv->v);
    } else {
        struct token_list tl;
        d_in = src->vocab->dim;
        st = tokenizer_split(src->sentence, &tl, err);
        if (st != ATTN_OK)
            return st;
        nq = nk = tl.count;
        token_list_destroy(&tl);
        inputs = (cfg->positional ? 3 : 2) * (size_t)nq * (size_t)d_in;
        if (cfg->cross && src->source != NULL) {
            /* The source's inputs (its encoding is added from a matrix freed at once). */
            st = split_source(src->source, &tl, err);
            if (st != ATTN_OK)
                return st;
            nk = tl.count;
            token_list_destroy(&tl);
            inputs += (size_t)nk * (size_t)d_in;
        }
    }
    st = attention_config_check(cfg, d_in, err);
    if (st != ATTN_OK)
        return st;
    *bytes = params_bytes(cfg, d_in) + inputs * sizeof(float) +
             attention_stages_bytes(cfg, d_in, nq, nk);
    return ATTN_OK;
}

static enum attn_status
book_create(struct pipeline *p, const struct attention_config *cfg, const struct pipeline_source *src,
            struct attn_error *err)
{
    return src->qkv != NULL ? create_from_qkv(p, cfg, src->qkv, err)
                            : create_from_sentence(p, cfg, src, NULL, err);
}

static enum attn_status
book_rebuild(struct pipeline *p, struct pipeline *prev, const struct attention_config *cfg,
             const struct pipeline_source *src, struct attn_error *err)
{
    enum attn_status st;
    struct attention_params kept;

    if (!same_parameters(prev, cfg, src) || attention_config_check(cfg, src->vocab->dim, NULL) != ATTN_OK)
        return book_create(p, cfg, src, err);
    kept = prev->params;
    st = create_from_sentence(p, cfg, src, prev, err);
    if (st != ATTN_OK && prev->params.p == NULL) {
        /* Give the parameters back before the half-built pipeline goes. */
        prev->params = kept;
        memset(&p->params, 0, sizeof p->params);
    }
    return st;
}

static enum attn_status
book_reattend(struct pipeline *p, const struct attention_config *cfg, struct attn_error *err)
{
    struct attention_stages next;
    enum attn_status st;
    struct rng r;

    st = attention_config_check(cfg, p->d_in, err);
    if (st != ATTN_OK)
        return st;
    if (attention_stages_bytes(cfg, p->d_in, p->st.nq, p->st.nk) !=
            attention_stages_bytes(&p->cfg, p->d_in, p->st.nq, p->st.nk) ||
        (cfg->mask == ATTN_MASK_NONE) != (p->cfg.mask == ATTN_MASK_NONE)) {
        /* Different buffers (a stage now shares or stops sharing one): new ones, same Q, K, V. */
        const size_t more = attention_stages_bytes(cfg, p->d_in, p->st.nq, p->st.nk);
        const size_t less = attention_stages_bytes(&p->cfg, p->d_in, p->st.nq, p->st.nk);
        if (p->bytes > 0 && (p->bytes > PIPELINE_MAX_BYTES || more > PIPELINE_MAX_BYTES - p->bytes))
            return attn_fail(err, ATTN_ELIMIT,
                             "these stage buffers need %zu MiB beside the %zu MiB shown (kept until "
                             "they are made); attnscope's limit is %zu MiB",
                             more >> 20, p->bytes >> 20, PIPELINE_MAX_BYTES >> 20);
        st = attention_stages_create(&next, cfg, p->d_in, p->st.nq, p->st.nk, err);
        if (st != ATTN_OK)
            return st;
        memcpy(next.queries.data, p->st.queries.data, matrix_size(&p->st.queries) * sizeof(float));
        memcpy(next.keys.data, p->st.keys.data, matrix_size(&p->st.keys) * sizeof(float));
        memcpy(next.values.data, p->st.values.data, matrix_size(&p->st.values) * sizeof(float));
        attention_stages_destroy(&p->st);
        p->st = next;
        if (p->bytes > 0)
            p->bytes = p->bytes - less + more;
    } else {
        /* The same buffers: only the knobs' numbers change. */
        struct attention_shape shape;
        attention_shape_of(cfg, p->d_in, &shape);
        st = attention_dropout_check(cfg, &shape, p->st.nq, p->st.nk, err);
        if (st != ATTN_OK)
            return st;
        p->st.shape = shape;
        p->st.divisor = (float)shape.divisor;
        p->st.dropout_on = shape.dropout_on;
        p->st.dropout_scale = shape.dropout_on ? rng_dropout_scale(cfg->dropout) : 1.0f;
    }
    p->cfg = *cfg;
    r = p->rng_after_params;
    attention_attend(&p->st, cfg, &p->params, &r);
    return ATTN_OK;
}

/* Every stage of PIPELINE_STAGE_LIST but a transformer block's own. */
const struct family family_book = {
    "book",
    "the attention classes of chapter 3 of \"Build a Large Language Model (From Scratch)\"",
    (FAMILY_STAGE(STAGE_COUNT) - 1) & ~PIPELINE_BLOCK_STAGES,
    book_create,
    book_rebuild,
    book_reattend,
    NULL,
    book_estimate,
    NULL,
    0,
    NULL,
};
