/*
 * family_model.c: every trained model (GPT-2, Llama, Qwen) behind the family seam (family.h).
 *
 * create tokenizes the sentence with the model's BPE, runs the forward
 * pass (decoder.h: every layer's keys, values and output kept, and the
 * shown layer's every stage) and points the pipeline's shared stages
 * (inputs, queries ... output) and its block stages (ln1 ... residual2) at
 * the layer shown.  Switching layers (pipeline_select_layer) makes the new
 * layer's stages again from its input (decoder_show_layer) and moves those
 * views.  An edit (rebuild) computes only the rows from its first changed
 * token on, in the shown run's memory when it has room.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attnscope/base/sysmem.h"
#include "attnscope/decoder/mixer.h"
#include "attnscope/families/model/family_model.h"
#include "attnscope/kernels/topk.h"
#include "attnscope/kernels/rowops.h"

static struct family_model_state *
state(const struct pipeline *p)
{
    return (struct family_model_state *)p->family_state;
}

const struct family_model_state *
pipeline_decoder(const struct pipeline *p)
{
    return p != NULL && p->family == &family_model ? state(p) : NULL;
}

void
family_model_knobs_of(const struct attention_config *cfg, struct decoder_knobs *k)
{
    k->causal = cfg->mask != ATTN_MASK_NONE;
    k->scaled = cfg->scale;
    k->temperature = cfg->temperature;
    k->ablated = NULL;
    k->last_logits = NULL;
}

/* The first token as the model's own tokenizer names it, for a message; "" without --bos. */
static const char *
first_shown(const struct model *m, bool bos, char *buf, size_t size)
{
    if (!bos || m->first_token < 0)
        return "";
    return model_token_display(m, m->first_token, buf, size);
}

/* The sentence's ids, the model's first token first with bos; errors say what to change. */
static enum attn_status
encode(const struct pipeline_source *src, int **ids, int *n, struct attn_error *err)
{
    const struct model *m = src->model;
    const int limit = m->dec.cfg.n_ctx;
    const char *text = src->sentence != NULL ? src->sentence : "";
    int *got = NULL;
    int count = 0;
    enum attn_status st;
    char first[MODEL_TOKEN_DISPLAY_MAX(64)] = "";

    *ids = NULL;
    *n = 0;
    if (src->bos && m->first_token < 0)
        return attn_fail(err, ATTN_EVALUE,
                         "--bos: %s's vocabulary has no first token (no bos_token_id in its "
                         "config, no <|endoftext|>)",
                         m->name);
    if (text[0] != '\0') {
        /* Encoding stops one past the room: enough to say the text is too long. */
        const int room = limit - (src->bos ? 1 : 0);
        st = room > 0 ? bpe_encode(&m->bpe, text, strlen(text), room, &got, &count, err)
                      : ATTN_ELIMIT;
        if (st == ATTN_ELIMIT)
            return attn_fail(err, ATTN_ELIMIT,
                             "the text is more than %d tokens%s%s; %s reads at most %d (%s): "
                             "shorten it",
                             room, src->bos ? " beside " : "",
                             first_shown(m, src->bos, first, sizeof first), m->name, limit,
                             m->dec.context_from);
        if (st != ATTN_OK)
            return st;
    }
    if (count + (src->bos ? 1 : 0) == 0) {
        free(got);
        return attn_fail(err, ATTN_EVALUE, "the text is empty: give %s something to read",
                         m->name);
    }
    if (count + (src->bos ? 1 : 0) > limit) {
        free(got);
        return attn_fail(err, ATTN_ELIMIT,
                         "the text is %d tokens%s%s; %s reads at most %d (%s): shorten it",
                         count + (src->bos ? 1 : 0), src->bos ? " with " : "",
                         first_shown(m, src->bos, first, sizeof first), m->name, limit,
                         m->dec.context_from);
    }
    /*
     * A tokenizer may list tokens past the embedding's rows (Gemma 3's
     * 262,145 for 262,144: its <image_soft_token> is the vision model's), as
     * Hugging Face loads the pair; a text that uses one cannot be read.
     */
    for (int i = 0; i < count; i++)
        if (got[i] >= m->dec.cfg.vocab_size) {
            char shown[MODEL_TOKEN_DISPLAY_MAX(64)];
            const int id = got[i];
            free(got);
            return attn_fail(err, ATTN_EVALUE,
                             "the text's token %d, %s (id %d), is past %s's vocabulary: its "
                             "embedding has %d rows (%s); the tokenizer lists %d tokens",
                             i, model_token_display(m, id, shown, sizeof shown), id, m->name,
                             m->dec.cfg.vocab_size, m->dec.described_by, m->bpe.vocab_size);
        }
    *ids = malloc(((size_t)count + 1) * sizeof **ids);
    if (*ids == NULL) {
        free(got);
        return attn_fail(err, ATTN_ENOMEM, "out of memory");
    }
    if (src->bos)
        (*ids)[0] = m->first_token;
    if (count > 0)
        memcpy(*ids + (src->bos ? 1 : 0), got, (size_t)count * sizeof *got);
    *n = count + (src->bos ? 1 : 0);
    free(got);
    return ATTN_OK;
}

/* The source's own ids (a text a model has written), checked as an encoded text's are. */
static enum attn_status
given_ids(const struct pipeline_source *src, int **ids, int *n, struct attn_error *err)
{
    const struct model *m = src->model;

    *ids = NULL;
    *n = 0;
    if (src->n_ids < 1)
        return attn_fail(err, ATTN_EVALUE, "the text is empty: give %s something to read",
                         m->name);
    if (src->n_ids > m->dec.cfg.n_ctx)
        return attn_fail(err, ATTN_ELIMIT, "the text is %d tokens; %s reads at most %d (%s)",
                         src->n_ids, m->name, m->dec.cfg.n_ctx, m->dec.context_from);
    /* (A model's own rows count: one may write an id its tokenizer has no text for, "<id>".) */
    for (int i = 0; i < src->n_ids; i++)
        if (src->ids[i] < 0 || src->ids[i] >= m->dec.cfg.vocab_size)
            return attn_fail(err, ATTN_EVALUE, "token %d has id %d; %s's embedding has %d rows", i,
                             src->ids[i], m->name, m->dec.cfg.vocab_size);
    *ids = malloc((size_t)src->n_ids * sizeof **ids);
    if (*ids == NULL)
        return attn_fail(err, ATTN_ENOMEM, "out of memory");
    memcpy(*ids, src->ids, (size_t)src->n_ids * sizeof **ids);
    *n = src->n_ids;
    return ATTN_OK;
}

size_t
family_model_pipeline_bytes(const struct decoder_config *c, int n, int top)
{
    const size_t nn = (size_t)n;

    /* The forward's buffers (with the shown layer's), the tokens' text. */
    return decoder_run_bytes(c, n, top) + nn * 64;
}

/* Whether packing m fits the four fifths of memory the view budgets (pack_if_room's rule). */
static bool
room_to_pack(const struct decoder_model *m)
{
    const size_t have = sysmem_total();

    return have == 0 || decoder_weights_bytes(m) + decoder_pack_transient_bytes(m) <= have / 10 * 8;
}

bool
family_model_pack_if_room(struct decoder_model *m)
{
    /* Packed a layer at a time, each layer's copies given back as its packs are made (or packed
       over them): the packs replace the weights, adding only a layer or the largest matrix
       while they are made; that must fit the four fifths of memory the view budgets. */
    const bool packed = room_to_pack(m) && decoder_pack_replacing(m);

    /* (what the view reads from the files is then its own: a file saved over changes nothing) */
    decoder_pin_mapped(m);
    return packed;
}

bool
family_model_pack_for_writing(struct decoder_model *m)
{
    /* (the files' pages stay the files': a half-precision model's 2.5 GB are not copied) */
    return room_to_pack(m) && decoder_pack_replacing(m);
}

void
family_model_pack_meanwhile(struct decoder_model *m)
{
    if (m->packer != NULL)
        return;
    if (!room_to_pack(m)) {
        decoder_pin_mapped(m);
        return;
    }
    m->packer = decoder_packer_start(m);
    if (m->packer == NULL) /* (no thread: packed now) */
        (void)family_model_pack_if_room(m);
}

bool
family_model_pack_settle(struct decoder_model *m)
{
    if (m->packer == NULL)
        return false;
    /* (the layers packed so far put in at once: the packs replace the weights as they come) */
    (void)decoder_packer_adopt_ready(m->packer, m);
    if (!decoder_packer_done(m->packer))
        return false;
    (void)decoder_packer_adopt(m->packer, m);
    m->packer = NULL;
    decoder_pin_mapped(m);
    return true;
}

static enum attn_status
decoder_family_estimate(const struct attention_config *cfg, const struct pipeline_source *src,
              size_t *bytes, struct attn_error *err)
{
    int *ids;
    int n;
    enum attn_status st;

    (void)cfg;
    if (src->model == NULL)
        return attn_fail(err, ATTN_EVALUE, "no model to run");
    st = src->ids != NULL ? given_ids(src, &ids, &n, err) : encode(src, &ids, &n, err);
    if (st != ATTN_OK)
        return st;
    free(ids);
    /* The rows of room a generation asks for are allocated with the text's. */
    if (src->room > 0)
        n = n + src->room < src->model->dec.cfg.n_ctx ? n + src->room
                                                            : src->model->dec.cfg.n_ctx;
    *bytes = family_model_pipeline_bytes(&src->model->dec.cfg, n, src->top);
    return ATTN_OK;
}

/*
 * Four fifths of the machine's memory less the model's weights (read into
 * memory of their own): the stages must fit beside them, and beside the
 * stages of the pipeline shown while a new one is built (pipeline.c).
 */
static size_t
decoder_family_budget(const struct pipeline_source *src, const char **what)
{
    const size_t have = sysmem_total();
    const size_t room = have / 10 * 8;
    const struct decoder_model *d = src->model != NULL ? &src->model->dec : NULL;
    const size_t weights = d == NULL ? 0 : decoder_weights_bytes(d);

    *what = "the room beside the model's weights (and their packed copy) in four fifths of this "
            "machine's memory";
    if (have == 0)
        return SIZE_MAX;
    return room > weights ? room - weights : 0;
}

/* The tokens' text as the pipeline keeps it: display forms, offsets in the sentence. */
static enum attn_status
make_tokens(struct pipeline *p, const struct model *m, const int *ids, int n, bool bos,
            struct attn_error *err)
{
    struct token_list *t = &p->tokens;
    size_t bytes = 0;
    size_t widest = 0;
    int offset = 0;
    char *shown;
    char *at;

    /* Room for the longest token's display (a token may stand for hundreds of bytes). */
    for (int i = 0; i < n; i++) {
        int len;
        bpe_token_raw(&m->bpe, ids[i], &len);
        if (MODEL_TOKEN_DISPLAY_MAX(len) > widest)
            widest = MODEL_TOKEN_DISPLAY_MAX(len);
    }
    widest += MODEL_TOKEN_DISPLAY_MAX(strlen("<|endoftext|>"));
    shown = malloc(widest);
    if (shown == NULL)
        return attn_fail(err, ATTN_ENOMEM, "out of memory");
    for (int i = 0; i < n; i++)
        bytes += strlen(model_token_display(m, ids[i], shown, widest)) + 1;
    t->text = calloc((size_t)n, sizeof *t->text);
    t->offset = calloc((size_t)n, sizeof *t->offset);
    t->length = calloc((size_t)n, sizeof *t->length);
    t->storage = malloc(bytes);
    p->made_up = calloc((size_t)n, 1);
    if (t->text == NULL || t->offset == NULL || t->length == NULL || t->storage == NULL ||
        p->made_up == NULL) {
        free(shown);
        return attn_fail(err, ATTN_ENOMEM, "out of memory");
    }
    t->count = n;
    at = t->storage;
    for (int i = 0; i < n; i++) {
        int len = 0;
        if (!(bos && i == 0))
            bpe_token_raw(&m->bpe, ids[i], &len);
        t->text[i] = at;
        at += sprintf(at, "%s", model_token_display(m, ids[i], shown, widest)) + 1;
        t->offset[i] = offset;
        t->length[i] = len;
        offset += t->length[i];
    }
    free(shown);
    return pipeline_label_tokens(p, err);
}

static struct matrix
view(float *data, int rows, int cols)
{
    return matrix_view(data, rows, cols);
}

/* The mask's window and the divisor of layer's scores, as the pipeline says them. */
static void
layer_scaling(struct pipeline *p, const struct family_model_state *s, int layer)
{
    struct decoder_knobs k;

    p->window = s->run.causal ? decoder_window(&s->model->dec.cfg, layer) : 0;
    family_model_knobs_of(&p->cfg, &k);
    p->st.divisor = decoder_divisor(&s->model->dec, &k, layer);
    p->st.shape.divisor = p->st.divisor;
}

/* The stages of the shown layer's mixer beyond attention's: the output gate, Gated DeltaNet's. */
static void
mixer_views(struct pipeline *p, const struct decoder_config *c,
            const struct decoder_layer_stages *l, int n)
{
    const int Q = decoder_q_width(c), Kq = decoder_gdn_key_width(c);
    const int Vw = decoder_gdn_value_width(c), D = decoder_gdn_conv_width(c);
    const int Hv = c->gdn.v_heads;
    const bool gdn = decoder_mixer_of(c, p->layer) == &decoder_mixer_gdn;
    const struct matrix none = { 0 };

    p->block.attn_gate = l->q_gate != NULL ? view(l->q_gate, n, Q) : none;
    p->block.gated = l->gated != NULL ? view(l->gated, n, Q) : none;
    p->block.delta_qkv = gdn ? view(l->gdn.mixed, n, D) : none;
    p->block.delta_conv = gdn ? view(l->gdn.conv, n, D) : none;
    p->block.delta_q = gdn ? view(l->gdn.q, n, Kq) : none;
    p->block.delta_k = gdn ? view(l->gdn.k, n, Kq) : none;
    p->block.beta = gdn ? view(l->gdn.beta, n, Hv) : none;
    p->block.decay = gdn ? view(l->gdn.decay, n, Hv) : none;
    p->block.delta_read = gdn ? view(l->gdn.out, n, Vw) : none;
    p->block.delta_normed = gdn ? view(l->gdn.normed, n, Vw) : none;
    p->block.effective = gdn ? l->gdn.effective : NULL;
}

static enum attn_status
decoder_family_select_layer(struct pipeline *p, int layer, struct attn_error *err)
{
    struct family_model_state *s = state(p);
    const struct decoder_config *c = &s->model->dec.cfg;
    const struct decoder_layer_stages *l = &s->run.layers[layer];
    const int n = s->run.n;
    const int C = c->d_model;
    const int F = c->d_mlp;
    const int Q = decoder_q_width(c);
    const int K = decoder_kv_width(c);
    const bool gated = decoder_gated(c);
    const struct matrix none = { 0 };
    /* The layer's every stage, its scores, masked and scaled scores and weights. */
    enum attn_status st =
        decoder_show_layer_stages(&s->model->dec, &s->run, layer, !s->no_attention, err);

    if (st != ATTN_OK)
        return st;
    p->inputs = view(layer == 0 ? s->run.embed : s->run.layers[layer - 1].resid2, n, C);
    /* (post-norm: attention reads the block's input itself, what the Q K V cells show) */
    p->block.ln1 = decoder_pre_norms(c) ? view(l->norm1, n, C) : p->inputs;
    layer_scaling(p, s, layer);
    p->st.queries = view(l->q_proj, n, Q);
    p->st.keys = view(l->k_proj, n, K);
    p->st.values = view(l->v, n, K);
    p->block.q_normed = l->q_normed != NULL ? view(l->q_normed, n, Q) : none;
    p->block.k_normed = l->k_normed != NULL ? view(l->k_normed, n, K) : none;
    p->block.q_rotated = c->positions == DECODER_POSITIONS_ROPE ? view(l->q, n, Q) : none;
    p->block.k_rotated = c->positions == DECODER_POSITIONS_ROPE ? view(l->k, n, K) : none;
    p->st.ld = s->run.attention_ld;
    p->st.head_floats = (size_t)s->run.attention_ld * (size_t)s->run.attention_ld;
    p->st.scores = l->scores;
    p->st.weights = l->weights;
    p->st.dropped = l->weights; /* no dropout: what the context is made from */
    p->st.masked = l->masked;
    p->st.scaled = l->scaled;
    p->st.context = view(l->context, n, Q);
    p->st.output = view(l->attn, n, C);
    p->block.residual1 = view(l->resid1, n, C);
    p->block.ln2 = decoder_pre_norms(c) ? view(l->norm2, n, C) : p->block.residual1;
    p->block.output_normed = l->attn_normed != NULL ? view(l->attn_normed, n, C) : none;
    p->block.mlp_normed = l->mlp_normed != NULL ? view(l->mlp_normed, n, C) : none;
    p->block.gate = gated ? view(l->gate, n, F) : none;
    p->block.fc = view(l->up, n, F);
    p->block.gelu = gated ? none : view(l->act, n, F);
    p->block.swiglu = gated ? view(l->act, n, F) : none;
    p->block.mlp = view(l->mlp, n, C);
    p->block.residual2 = view(l->resid2, n, C);
    p->block.router_logits =
        decoder_sparse(c, layer) ? view(l->router_logits, n, c->moe.n_experts) : none;
    p->block.router = decoder_sparse(c, layer) ? view(l->router, n, c->moe.n_experts) : none;
    p->block.routed = decoder_sparse(c, layer) ? view(l->routed, n, c->moe.n_experts) : none;
    p->block.expert_labels = (const char *const *)s->model->expert_labels;
    if (decoder_sparse(c, layer) && c->moe.d_shared > 0) {
        p->block.shared = view(l->shared, n, C);
        p->block.shared_gate = view(l->shared_gate, n, 1);
    } else
        p->block.shared = p->block.shared_gate = none;
    mixer_views(p, c, l, n);
    return ATTN_OK;
}

static void
decoder_family_destroy(struct pipeline *p)
{
    struct family_model_state *s = state(p);

    /* The shared fields are views into the run: nothing of theirs to free. */
    memset(&p->embeddings, 0, sizeof p->embeddings);
    memset(&p->positional, 0, sizeof p->positional);
    memset(&p->inputs, 0, sizeof p->inputs);
    memset(&p->st, 0, sizeof p->st);
    memset(&p->block, 0, sizeof p->block);
    if (s != NULL) {
        decoder_run_destroy(&s->run);
        free(s->ids);
        free(s->ablated);
        free(s->experts_off);
        free(s->measures);
        free(s);
    }
    p->family_state = NULL;
}

/*
 * Whether prev's run was made by the same model with the same knobs (the
 * sinks on or off among them), top and <|endoftext|>, the heads ablated aside: then its rows before an
 * edit's first changed token, and its layers before the first whose
 * ablated heads changed, are what a forward would compute again (a lean
 * run kept none of them).
 */
static bool
same_computation(const struct family_model_state *prev, const struct family_model_state *s)
{
    return prev != NULL && !prev->run.lean && prev->model == s->model && prev->bos == s->bos &&
           prev->top == s->top && prev->knobs.causal == s->knobs.causal &&
           prev->knobs.scaled == s->knobs.scaled &&
           prev->knobs.temperature == s->knobs.temperature &&
           prev->knobs.sinks_off == s->knobs.sinks_off &&
           prev->knobs.next_later == s->knobs.next_later;
}

/*
 * The forward of s's ids, taking from prev what an edit or an ablation left
 * alone: the layers before the first ablated head that changed (the text
 * the same), or the rows before the first changed token (the heads the
 * same), or nothing.
 */
static enum attn_status
run_from(struct family_model_state *prev, struct family_model_state *s, int n, const struct decoder_knobs *k,
         struct attn_error *err)
{
    const struct decoder_model *d = &s->model->dec;
    int layer;

    if (!same_computation(prev, s))
        return decoder_forward_from(d, s->ids, n, s->top, k, NULL, 0, &s->run, err);
    layer = decoder_first_ablated_change(&d->cfg, prev->ablated, s->ablated);
    {
        const int experts = decoder_first_expert_change(&d->cfg, prev->experts_off, s->experts_off);
        layer = experts < layer ? experts : layer;
    }
    if (layer < d->cfg.n_layer) {
        if (prev->run.n == n && memcmp(prev->ids, s->ids, (size_t)n * sizeof *s->ids) == 0) {
            s->from_layer = layer;
            return decoder_forward_layers(d, s->ids, n, s->top, k, &prev->run, layer, &s->run,
                                          err);
        }
        return decoder_forward_from(d, s->ids, n, s->top, k, NULL, 0, &s->run, err);
    }
    s->from = decoder_common_rows(&prev->run, prev->ids, s->ids, n);
    return decoder_forward_from(d, s->ids, n, s->top, k, s->from > 0 ? &prev->run : NULL, s->from,
                                &s->run, err);
}

/*
 * create, or (prev not NULL) rebuild: the rows an edit left alone taken
 * from prev's run, or computed over in its memory (decoder_forward_from).
 * Everything that can fail comes before the forward: once it has taken
 * prev's memory over, only the new pipeline can show it.
 */
static enum attn_status
decoder_family_build(struct pipeline *p, struct family_model_state *prev, const struct attention_config *cfg,
           const struct pipeline_source *src, struct attn_error *err)
{
    const struct model *m = src->model;
    struct decoder_knobs k;
    struct family_model_state *s;
    const struct decoder_config *c;
    enum attn_status st;
    int n;

    if (m == NULL)
        return attn_fail(err, ATTN_EVALUE, "no model to run");
    if (!(cfg->temperature > 0.0))
        return attn_fail(err, ATTN_EVALUE, "--temperature must be above 0");
    c = &m->dec.cfg;
    s = calloc(1, sizeof *s);
    if (s == NULL)
        return attn_fail(err, ATTN_ENOMEM, "out of memory");
    p->family_state = s;
    s->model = m;
    s->bos = src->bos;
    st = src->ids != NULL ? given_ids(src, &s->ids, &n, err) : encode(src, &s->ids, &n, err);
    if (st != ATTN_OK)
        return st;
    family_model_knobs_of(cfg, &k);
    k.ablated = src->ablated;
    k.experts_off = c->moe.n_experts > 0 ? src->experts_off : NULL;
    k.sinks_off = c->sinks && src->sinks_off;
    k.last_logits = src->last_logits;
    k.room = src->room;
    k.lean = src->lean;
    k.next_later = src->next_later;
    for (int e = 0; src->ablated != NULL && e < c->n_layer * decoder_head_slots(c); e++)
        s->ablated_heads += src->ablated[e] != 0;
    s->knobs = k;
    s->knobs.ablated = NULL;
    s->knobs.experts_off = NULL;
    s->top = src->top;
    s->no_attention = src->no_attention;
    if (src->ablated != NULL) {
        s->ablated = malloc((size_t)c->n_layer * (size_t)decoder_head_slots(c));
        if (s->ablated == NULL)
            return attn_fail(err, ATTN_ENOMEM, "out of memory");
        memcpy(s->ablated, src->ablated, (size_t)c->n_layer * (size_t)decoder_head_slots(c));
    }
    if (k.experts_off != NULL) {
        const size_t all = (size_t)c->n_layer * (size_t)c->moe.n_experts;
        if ((s->experts_off = malloc(all)) == NULL)
            return attn_fail(err, ATTN_ENOMEM, "out of memory");
        memcpy(s->experts_off, k.experts_off, all);
        for (size_t e = 0; e < all; e++)
            s->experts_off_count += s->experts_off[e] != 0;
    }
    st = make_tokens(p, m, s->ids, n, src->bos, err);
    if (st != ATTN_OK)
        return st;
    st = run_from(prev, s, n, &k, err);
    if (st != ATTN_OK)
        return st;
    /* The knobs as this family reads them: the embeddings and (learned) positions are there. */
    p->decoder = c;
    p->cfg.positional = c->positions == DECODER_POSITIONS_LEARNED;
    if (c->positions == DECODER_POSITIONS_ROPE) /* (Qwen2's biased projections, in the formula) */
        p->cfg.qkv_bias = m->dec.blocks[0].q.b != NULL;
    p->cfg.dropout = 0.0;
    p->d_in = c->d_model;
    p->layers = c->n_layer;
    p->embeddings = view(s->run.tok, n, c->d_model);
    if (p->cfg.positional)
        p->positional = view(s->run.pos, n, c->d_model);
    p->block.final = view(s->run.final, n, c->d_model);
    p->st.nq = p->st.nk = n;
    p->scale_without_root = !c->scale_attn_weights;
    p->scale_by_layer = c->scale_by_layer;
    p->scale_scalar = c->attn_scalar;
    p->st.dropout_scale = 1.0f;
    p->st.shape.d_in = c->d_model;
    p->st.shape.heads = c->n_head;
    p->st.shape.head_dim = decoder_head_dim(c);
    p->st.shape.d_qkv = decoder_q_width(c);
    p->st.shape.d_output = c->d_model;
    p->st.shape.sets = 1;
    p->st.shape.d_set = 3 * c->d_model;
    p->st.shape.dropout_calls = 1;
    if (s->run.lean) {
        /* No layer kept: the first's mask and scaling stand for the model in a header. */
        p->layer = 0;
        layer_scaling(p, s, 0);
        return ATTN_OK;
    }
    if (src->layer == PIPELINE_NO_LAYER) {
        p->layer = PIPELINE_NO_LAYER; /* (pipeline_select_layer makes one when asked) */
        return ATTN_OK;
    }
    p->layer = src->layer > 0 && src->layer < c->n_layer ? src->layer : 0;
    return decoder_family_select_layer(p, p->layer, err);
}

static enum attn_status
decoder_family_create(struct pipeline *p, const struct attention_config *cfg,
            const struct pipeline_source *src, struct attn_error *err)
{
    return decoder_family_build(p, NULL, cfg, src, err);
}

/* An edit: the rows before its first changed token taken over from prev (a causal model's). */
static enum attn_status
decoder_family_rebuild(struct pipeline *p, struct pipeline *prev, const struct attention_config *cfg,
             const struct pipeline_source *src, struct attn_error *err)
{
    return decoder_family_build(p, prev != NULL && prev->family == &family_model ? state(prev) : NULL, cfg,
                      src, err);
}

int
family_model_routes(const struct pipeline *p, int position, int *experts, float *weights)
{
    const struct family_model_state *g = pipeline_decoder(p);
    const struct decoder_config *c = g != NULL ? &g->model->dec.cfg : NULL;
    double *pairs;
    int k;

    if (c == NULL || !decoder_sparse(c, p->layer) || p->block.router.data == NULL ||
        position < 0 || position >= p->block.router.rows)
        return 0;
    if ((pairs = malloc(2 * (size_t)c->moe.n_experts * sizeof *pairs)) == NULL)
        return 0;
    k = c->moe.n_experts_used;
    topk_largest(matrix_row(&p->block.router, position), c->moe.n_experts, k, experts, pairs);
    for (int t = 0; t < k; t++)
        weights[t] = MAT_AT(&p->block.routed, position, experts[t]);
    free(pairs);
    return k;
}

/* Stages a trained model has: all but the dropout's. */
const struct family family_model = {
    "decoder",
    "a trained decoder from its files (GPT-2, Llama, Qwen): every block's stages, layer by layer",
    (FAMILY_STAGE(STAGE_COUNT) - 1) & ~FAMILY_STAGE(STAGE_DROPPED) &
        ~FAMILY_STAGE(STAGE_OUTPUT_DROPPED),
    decoder_family_create,
    decoder_family_rebuild,
    NULL,
    decoder_family_destroy,
    decoder_family_estimate,
    decoder_family_select_layer,
    FAMILY_STAGE(STAGE_INPUTS) | FAMILY_STAGE(STAGE_PRE_ATTN_NORM) | FAMILY_STAGE(STAGE_QUERIES) |
        FAMILY_STAGE(STAGE_KEYS) | FAMILY_STAGE(STAGE_VALUES) | FAMILY_STAGE(STAGE_SCORES) |
        FAMILY_STAGE(STAGE_MASKED) | FAMILY_STAGE(STAGE_SCALED) | FAMILY_STAGE(STAGE_WEIGHTS) |
        FAMILY_STAGE(STAGE_CONTEXT) | FAMILY_STAGE(STAGE_OUTPUT) | FAMILY_STAGE(STAGE_RESIDUAL1) |
        FAMILY_STAGE(STAGE_PRE_MLP_NORM) | FAMILY_STAGE(STAGE_UP) | FAMILY_STAGE(STAGE_GELU) |
        FAMILY_STAGE(STAGE_MLP) | FAMILY_STAGE(STAGE_RESIDUAL2) |
        FAMILY_STAGE(STAGE_QUERIES_NORMED) | FAMILY_STAGE(STAGE_KEYS_NORMED) |
        FAMILY_STAGE(STAGE_QUERIES_ROTATED) | FAMILY_STAGE(STAGE_KEYS_ROTATED) |
        FAMILY_STAGE(STAGE_GATE) | FAMILY_STAGE(STAGE_SWIGLU) | FAMILY_STAGE(STAGE_GEGLU) |
        FAMILY_STAGE(STAGE_OUTPUT_NORMED) | FAMILY_STAGE(STAGE_MLP_NORMED) |
        FAMILY_STAGE(STAGE_ROUTER) | FAMILY_STAGE(STAGE_SHARED) | PIPELINE_MIXER_STAGES,
    decoder_family_budget,
};

int
family_model_next_tokens(const struct pipeline *p)
{
    const struct family_model_state *shown = pipeline_decoder(p);
    /* (the rows made are kept in p's state: a cache, which is why a const pipeline's is written) */
    struct family_model_state *g = shown != NULL ? p->family_state : NULL;
    struct attn_error err;

    if (g == NULL)
        return 0;
    return decoder_run_next_tokens(&g->model->dec, &g->run, &err) == ATTN_OK ? 0 : -1;
}
