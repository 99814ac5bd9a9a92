/* generate.c: a trained model writing, one token after another (see generate.h). */
#include "config.h"

#include <math.h>

#include <stdlib.h>
#include <string.h>

#include "attnscope/base/clock.h"
#include "attnscope/families/model/family_model.h"
#include "attnscope/families/model/generate.h"
#include "attnscope/decoder/mixer.h"

void
generate_options_init(struct generate_options *o)
{
    o->sample.temperature = 0.0;
    o->sample.top_k = 0;
    o->sample.top_p = 1.0;
    o->seed = GENERATE_SEED;
    generate_end_one(&o->end, -1, "");
}

void
generate_end_one(struct generate_end *e, int id, const char *from)
{
    memset(e, 0, sizeof *e);
    if (id >= 0) {
        e->id[0] = id;
        e->n = 1;
    }
    snprintf(e->from, sizeof e->from, "%s", from);
}

bool
generate_end_has(const struct generate_end *e, int id)
{
    for (int i = 0; i < e->n; i++)
        if (e->id[i] == id)
            return true;
    return false;
}

enum attn_status
generation_init(struct generation *g, const struct model *m, const struct generate_options *o,
                struct attn_error *err)
{
    const int outputs = decoder_outputs(&m->dec.cfg);
    enum attn_status st;

    memset(g, 0, sizeof *g);
    if (model_is_classifier(m))
        return attn_fail(err, ATTN_EVALUE,
                         "%s is a classifier: its head scores %d classes, not next tokens, so "
                         "it cannot write (--generate)",
                         m->name, outputs);
    st = sample_check(&o->sample, outputs, err);
    if (st != ATTN_OK)
        return st;
    if (o->end.n < 0 || o->end.n > GENERATE_EOS_MAX)
        return attn_fail(err, ATTN_EVALUE, "%d end tokens: at most %d", o->end.n,
                         GENERATE_EOS_MAX);
    for (int i = 0; i < o->end.n; i++)
        if (o->end.id[i] < 0 || o->end.id[i] >= outputs)
            return attn_fail(err, ATTN_EVALUE, "%s %d: give a token id from 0 to %d, or none",
                             o->end.from[0] != '\0' ? o->end.from : "--eos", o->end.id[i],
                             outputs - 1);
    g->model = m;
    g->o = *o;
    g->outputs = outputs;
    g->context = m->dec.cfg.n_ctx;
    g->logits = malloc((size_t)outputs * sizeof *g->logits);
    g->next_logits = malloc((size_t)outputs * sizeof *g->next_logits);
    g->work = malloc(3 * (size_t)outputs * sizeof *g->work);
    if (g->logits == NULL || g->next_logits == NULL || g->work == NULL) {
        generation_destroy(g);
        return attn_fail(err, ATTN_ENOMEM, "out of memory for the next token's %d logits",
                         outputs);
    }
    rng_seed(&g->gen, o->seed);
    return ATTN_OK;
}

void
generation_destroy(struct generation *g)
{
    free(g->ids);
    free(g->logits);
    free(g->next_logits);
    free(g->work);
    free(g->steps);
    free(g->before);
    memset(g, 0, sizeof *g);
}

void
generation_source(const struct generation *g, const struct pipeline_source *base,
                  const struct pipeline *p, struct pipeline_source *src)
{
    *src = *base;
    src->ids = g->ids + g->first;
    src->n_ids = g->n - g->first;
    src->bos = g->bos && g->first == 0;
    src->last_logits = g->next_logits;
    src->top = base->top > 0 ? base->top : 1; /* (the head runs only for a run that keeps some) */
    src->layer = p != NULL ? p->layer : base->layer;
    src->room = g->room;
}

void
generation_rebuilt(struct generation *g, struct pipeline *p)
{
    float *t = g->logits;

    g->logits = g->next_logits;
    g->next_logits = t;
    if (pipeline_decoder(p) != NULL)
        ((struct family_model_state *)p->family_state)->writing = g;
}

enum attn_status
generation_follow(const struct generation *g, struct pipeline *p,
                  const struct attention_config *cfg, const struct pipeline_source *base,
                  struct attn_error *err)
{
    struct pipeline next;
    struct pipeline_source src;
    enum attn_status st;

    generation_source(g, base, p, &src);
    src.last_logits = NULL; /* (the writer's logits are its own) */
    st = pipeline_rebuild(&next, p, cfg, &src, err);
    if (st != ATTN_OK)
        return st;
    pipeline_destroy(p);
    *p = next;
    return ATTN_OK;
}

/* p rebuilt from the generation's window; the new logits swapped in.  p as it was on failure. */
static enum attn_status
rebuild(struct generation *g, struct pipeline *p, const struct attention_config *cfg,
        const struct pipeline_source *base, struct attn_error *err)
{
    struct pipeline next;
    struct pipeline_source src;
    enum attn_status st;

    generation_source(g, base, p, &src);
    st = pipeline_rebuild(&next, p, cfg, &src, err);
    if (st != ATTN_OK)
        return st;
    pipeline_destroy(p);
    *p = next;
    generation_rebuilt(g, p);
    return ATTN_OK;
}

/* Room for `need` tokens and as many steps; -1: no memory. */
static int
reserve(struct generation *g, int need)
{
    while (need > g->cap) {
        const int cap = g->cap > 0 ? 2 * g->cap : 64;
        int *ids = realloc(g->ids, (size_t)cap * sizeof *ids);
        struct generate_step *steps;
        struct rng *before;
        if (ids == NULL)
            return -1;
        g->ids = ids;
        steps = realloc(g->steps, (size_t)cap * sizeof *steps);
        if (steps == NULL)
            return -1;
        g->steps = steps;
        before = realloc(g->before, ((size_t)cap + 1) * sizeof *before);
        if (before == NULL)
            return -1;
        g->before = before;
        g->cap = cap;
    }
    return 0;
}

/* The first token of the window over ids[0 .. n): the last `context` of them. */
static int
window_start(const struct generation *g, int n)
{
    return n > g->context ? n - g->context : 0;
}

enum attn_status
generation_begin(struct generation *g, struct pipeline *p, const struct attention_config *cfg,
                 const struct pipeline_source *base, int room, struct attn_error *err)
{
    const struct family_model_state *s = pipeline_decoder(p);
    enum attn_status st;

    if (s == NULL)
        return attn_fail(err, ATTN_EVALUE, "writing needs a trained model (--model): the "
                                           "book's classes have no vocabulary to write from");
    if (s->model != g->model)
        return attn_fail(err, ATTN_EVALUE, "the text shown is another model's");
    g->n = 0;
    g->written = 0;
    g->ended = false;
    if (reserve(g, s->run.n) != 0)
        return attn_fail(err, ATTN_ENOMEM, "out of memory for the text");
    memcpy(g->ids, s->ids, (size_t)s->run.n * sizeof *g->ids);
    g->n = g->prompt = s->run.n;
    g->bos = s->bos;
    g->first = 0;
    g->room = room;
    rng_seed(&g->gen, g->o.seed);
    st = rebuild(g, p, cfg, base, err);
    if (st != ATTN_OK)
        g->n = g->prompt = 0;
    return st;
}

enum attn_status
generation_write(struct generation *g, struct pipeline *p, const struct attention_config *cfg,
                 const struct pipeline_source *base, bool *ended, struct attn_error *err)
{
    struct generate_step step;
    const int first = g->first;
    enum attn_status st;
    double t0;

    *ended = false;
    if (g->n < 1)
        return attn_fail(err, ATTN_EVALUE, "nothing to continue: no text yet");
    if (g->ended)
        return attn_fail(err, ATTN_EVALUE,
                         "the model chose the end token %d (%s): take it back to write on",
                         g->end.id, g->o.end.from[0] != '\0' ? g->o.end.from : "--eos");
    if (reserve(g, g->n + 1) != 0)
        return attn_fail(err, ATTN_ENOMEM, "out of memory for the text");
    g->before[g->written] = g->gen;
    st = sample_choose(&g->o.sample, &g->gen, g->logits, g->outputs, g->work, &step.choice, err);
    if (st == ATTN_EVALUE) {
        /* Logits that are not numbers: which file, and where its weights are not numbers. */
        char said[sizeof err->msg], where[256];
        snprintf(said, sizeof said, "%s", err->msg);
        if (decoder_find_nonfinite(&g->model->dec, where, sizeof where))
            return attn_fail(err, st, "%s: %s; %s", g->model->dec.source, said, where);
        return attn_fail(err, st, "%s: %s", g->model->dec.source, said);
    }
    if (st != ATTN_OK)
        return st;
    if (generate_end_has(&g->o.end, step.choice.id)) {
        g->ended = true;
        g->end = step.choice;
        *ended = true;
        return ATTN_OK;
    }
    g->ids[g->n++] = step.choice.id;
    g->first = window_start(g, g->n);
    t0 = clock_seconds();
    st = rebuild(g, p, cfg, base, err);
    if (st != ATTN_OK) {
        g->n--;
        g->first = first;
        g->gen = g->before[g->written];
        return st;
    }
    step.seconds = clock_seconds() - t0;
    step.position = g->n - 1;
    step.slid = g->first != first;
    step.computed = pipeline_decoder(p)->run.n - pipeline_decoder(p)->from;
    step.compared_prob = NAN;
    g->steps[g->written++] = step;
    return ATTN_OK;
}

enum attn_status
generation_undo(struct generation *g, struct pipeline *p, const struct attention_config *cfg,
                const struct pipeline_source *base, struct attn_error *err)
{
    const int first = g->first;
    enum attn_status st;

    if (g->ended) {
        /* The end token was drawn, not written: only the draw is taken back. */
        g->ended = false;
        g->gen = g->before[g->written];
        return ATTN_OK;
    }
    if (g->written < 1)
        return attn_fail(err, ATTN_EVALUE, "nothing written to take back: the prompt stays");
    g->n--;
    g->first = window_start(g, g->n);
    st = rebuild(g, p, cfg, base, err);
    if (st != ATTN_OK) {
        g->n++;
        g->first = first;
        return st;
    }
    g->written--;
    g->gen = g->before[g->written];
    return ATTN_OK;
}

enum attn_status
generation_measure_uncached(struct generation *g, struct attn_error *err)
{
    const struct decoder_model *d = &g->model->dec;
    struct decoder_knobs k = { .causal = true, .scaled = true, .temperature = 1.0 };
    struct decoder_run r;
    enum attn_status st;
    double t0;

    if (g->n < 1)
        return attn_fail(err, ATTN_EVALUE, "nothing to measure: no text yet");
    t0 = clock_seconds();
    st = decoder_forward(d, g->ids + g->first, g->n - g->first, 1, &k, &r, err);
    if (st != ATTN_OK)
        return st;
    g->uncached_seconds = clock_seconds() - t0;
    g->uncached_n = g->n - g->first;
    decoder_run_destroy(&r);
    return ATTN_OK;
}

int
generation_cache_rows(const struct decoder_config *c, int layer, int n)
{
    return decoder_kept_rows(c, layer, n);
}

int
generation_cache_position(const struct decoder_config *c, int layer, int n, int slot)
{
    const int rows = generation_cache_rows(c, layer, n);
    const int first = n - rows; /* the oldest position kept */

    if (rows == n)
        return slot;
    /* The ring: position i sits in slot i mod rows; slot s holds the one kept position there. */
    return first + ((slot - first % rows) % rows + rows) % rows;
}

size_t
generation_cache_bytes(const struct decoder_config *c, int n)
{
    size_t floats = 0;

    /* What each layer's mixer keeps: attention its keys and values. */
    for (int l = 0; l < c->n_layer; l++)
        floats += decoder_mixer_of(c, l)->kept_floats(c, l, n);
    return floats * sizeof(float);
}

size_t
generation_cache_bytes_full(const struct decoder_config *c, int n)
{
    return 2 * (size_t)c->n_layer * (size_t)n * (size_t)decoder_kv_width(c) * sizeof(float);
}

char *
generation_text(const struct generation *g, int from, int to)
{
    size_t len = 0, cap = 256;
    char *text = malloc(cap);
    const int end = to < 0 || to > g->n ? g->n : to;

    for (int i = from < 0 ? 0 : from; text != NULL && i < end; i++) {
        char shown[MODEL_TOKEN_DISPLAY_MAX(64)];
        int n = 0;
        const char *bytes = bpe_token_raw(&g->model->bpe, g->ids[i], &n);
        if (bytes == NULL) {
            model_token_display(g->model, g->ids[i], shown, sizeof shown);
            bytes = shown;
            n = (int)strlen(shown);
        }
        if (len + (size_t)n + 1 > cap) {
            char *more;
            while (len + (size_t)n + 1 > cap)
                cap *= 2;
            more = realloc(text, cap);
            if (more == NULL) {
                free(text);
                return NULL;
            }
            text = more;
        }
        memcpy(text + len, bytes, (size_t)n);
        len += (size_t)n;
    }
    if (text != NULL)
        text[len] = '\0';
    return text;
}
