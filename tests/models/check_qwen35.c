/*
 * check_qwen35.c: Qwen3.5 opened from Hugging Face's folders (flat
 * Qwen3_5ForCausalLM, and the whole model's Qwen3_5ForConditionalGeneration
 * with text_config and its vision and MTP tensors beside), every stage of
 * its Gated DeltaNet layers and of its gated full-attention layer against
 * tests/oracle/qwen35_fixtures.py's PyTorch forward (1e-5), an edit and two
 * threads giving the same bits, and its config's refusals naming the key.
 */
#include "config.h"

#include <check.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attnscope/architectures/architecture.h"
#include "attnscope/decoder/decoder.h"
#include "attnscope/decoder/mixer.h"
#include "attnscope/families/model/family_model.h"
#include "attnscope/families/model/headmap.h"
#include "attnscope/families/model/switches.h"
#include "attnscope/kernels/parallel.h"
#include "attnscope/models/model.h"
#include "attnscope/pipeline/export.h"
#include "attnscope/pipeline/pipeline.h"
#include "expected.h"
#include "gguf_edit.h"
#include "shown_stage.h"
#include "testutil.h"

#define TOL 1e-5
#define MAX_IDS 64

struct fixture {
    char dir[4200];
    struct decoder_model m;
    struct expected e;
    int ids[MAX_IDS];
    int n, top;
};

static void
fixture_open(struct fixture *f, const char *name)
{
    char path[4400];
    struct attn_error err;
    const char *at;

    snprintf(f->dir, sizeof f->dir, "%s/%s", test_path("tests/fixtures/decoders"), name);
    snprintf(path, sizeof path, "%s/expected.txt", f->dir);
    expected_load(&f->e, path);
    ck_assert_msg(architecture_load(&f->m, f->dir, NULL, &err) == ATTN_OK, "%s: %s", name,
                  err.msg);
    at = line_of(f->e.text, "ids", -1);
    f->n = (int)next_number(&at);
    ck_assert_int_le(f->n, MAX_IDS);
    for (int i = 0; i < f->n; i++)
        f->ids[i] = (int)next_number(&at);
    at = line_of(f->e.text, "top", -1);
    f->top = (int)next_number(&at);
}

static void
fixture_close(struct fixture *f)
{
    decoder_destroy(&f->m);
    free(f->e.text);
}

/* Stage name of layer l (count floats at got) against its line. */
static void
stage(const struct fixture *f, const char *name, int l, const float *got, size_t count)
{
    char what[4400];
    const char *at = line_of(f->e.text, name, l);

    ck_assert_msg(got != NULL, "%s layer %d: no buffer", name, l);
    ck_assert_int_eq((size_t)next_number(&at), count);
    snprintf(what, sizeof what, "%s: %s layer %d", f->dir, name, l);
    compare(what, got, at, count, TOL);
}

/* The shown DeltaNet layer's (Hv, n, n) effective attention, rows next to one another. */
static float *
effective_rows(const struct decoder_config *c, const struct decoder_run *r, const float *all)
{
    const size_t n = (size_t)r->n, ld = (size_t)r->attention_ld, Hv = (size_t)c->gdn.v_heads;
    float *out = malloc((Hv * n * n + 1) * sizeof *out);

    ck_assert_ptr_nonnull(out);
    ck_assert_ptr_nonnull(all);
    for (size_t h = 0; h < Hv; h++)
        for (size_t i = 0; i < n; i++)
            memcpy(out + (h * n + i) * n, all + (h * ld + i) * ld, n * sizeof *out);
    return out;
}

/* A Gated DeltaNet layer's every step. */
static void
deltanet_stages(const struct fixture *f, const struct decoder_run *r, int l)
{
    const struct decoder_layer_stages *s = &r->layers[l];
    const struct decoder_config *c = &f->m.cfg;
    const size_t n = (size_t)f->n, Kq = (size_t)decoder_gdn_key_width(c);
    const size_t Vw = (size_t)decoder_gdn_value_width(c), D = (size_t)decoder_gdn_conv_width(c);
    const size_t Hv = (size_t)c->gdn.v_heads;

    stage(f, "gdn_mixed", l, s->gdn.mixed, n * D);
    stage(f, "gdn_conv", l, s->gdn.conv, n * D);
    stage(f, "gdn_q", l, s->gdn.q, n * Kq);
    stage(f, "gdn_k", l, s->gdn.k, n * Kq);
    stage(f, "gdn_z", l, s->gdn.z, n * Vw);
    stage(f, "gdn_beta", l, s->gdn.beta, n * Hv);
    stage(f, "gdn_decay", l, s->gdn.decay, n * Hv);
    stage(f, "gdn_out", l, s->gdn.out, n * Vw);
    stage(f, "gdn_normed", l, s->gdn.normed, n * Vw);
    ck_assert_ptr_null(s->weights);
    {
        /* The effective attention: the oracle's from the products of the updates, in double. */
        float *m = effective_rows(c, r, s->gdn.effective);
        stage(f, "effective", l, m, Hv * n * n);
        free(m);
    }
}

/* The gated full-attention layer's: the query and its gate apart, RoPE on a quarter. */
static void
attention_stages(const struct fixture *f, const struct decoder_run *r, int l)
{
    const struct decoder_layer_stages *s = &r->layers[l];
    const struct decoder_config *c = &f->m.cfg;
    const size_t n = (size_t)f->n, Q = (size_t)decoder_q_width(c);
    const size_t K = (size_t)decoder_kv_width(c);
    float *w = shown_stage(c, r, s->weights);

    stage(f, "q_proj", l, s->q_proj, n * Q);
    stage(f, "q_gate", l, s->q_gate, n * Q);
    stage(f, "k_proj", l, s->k_proj, n * K);
    stage(f, "v", l, s->v, n * K);
    stage(f, "q_normed", l, s->q_normed, n * Q);
    stage(f, "k_normed", l, s->k_normed, n * K);
    stage(f, "q", l, s->q, n * Q);
    stage(f, "k", l, s->k, n * K);
    stage(f, "weights", l, w, (size_t)c->n_head * n * n);
    stage(f, "context", l, s->context, n * Q);
    stage(f, "gated", l, s->gated, n * Q);
    free(w);
}

/* A mixture's (Qwen3.5-MoE's): the router, the weights it gave, the shared expert and its gate. */
static void
mixture_stages(const struct fixture *f, const struct decoder_run *r, int l)
{
    const struct decoder_layer_stages *s = &r->layers[l];
    const struct decoder_config *c = &f->m.cfg;
    const size_t n = (size_t)f->n, E = (size_t)c->moe.n_experts;

    stage(f, "router_logits", l, s->router_logits, n * E);
    stage(f, "router", l, s->router, n * E);
    stage(f, "routed", l, s->routed, n * E);
    stage(f, "shared_gate", l, s->shared_gate, n);
    stage(f, "shared", l, s->shared, n * (size_t)c->d_model);
}

/* Every layer shown in turn, each of its stages against the fixture, then the outputs. */
static void
check_case(const char *name)
{
    struct fixture f;
    struct decoder_run r;
    struct attn_error err;
    const char *at;

    fixture_open(&f, name);
    {
        const struct decoder_config *c = &f.m.cfg;
        const size_t n = (size_t)f.n, C = (size_t)c->d_model, F = (size_t)c->d_mlp;
        ck_assert(decoder_forward(&f.m, f.ids, f.n, f.top, NULL, &r, &err) == ATTN_OK);
        at = line_of(f.e.text, "kinds", -1);
        ck_assert_int_eq((int)next_number(&at), c->n_layer);
        for (int l = 0; l < c->n_layer; l++) {
            const struct decoder_layer_stages *s = &r.layers[l];
            const bool gdn = next_number(&at) != 0;
            ck_assert_msg(decoder_attends(c, l) == !gdn, "%s: layer %d's kind", name, l);
            ck_assert_msg(decoder_show_layer(&f.m, &r, l, &err) == ATTN_OK, "%s", err.msg);
            stage(&f, "norm1", l, s->norm1, n * C);
            if (gdn)
                deltanet_stages(&f, &r, l);
            else
                attention_stages(&f, &r, l);
            stage(&f, "attn", l, s->attn, n * C);
            stage(&f, "resid1", l, s->resid1, n * C);
            stage(&f, "norm2", l, s->norm2, n * C);
            if (decoder_sparse(c, l))
                mixture_stages(&f, &r, l);
            else {
                stage(&f, "gate", l, s->gate, n * F);
                stage(&f, "up", l, s->up, n * F);
                stage(&f, "act", l, s->act, n * F);
            }
            stage(&f, "mlp", l, s->mlp, n * C);
            stage(&f, "resid2", l, s->resid2, n * C);
        }
        compare("final", r.final, line_of(f.e.text, "final", -1), n * C, TOL);
        at = line_of(f.e.text, "top", -1);
        next_number(&at);
        for (size_t i = 0; i < n * (size_t)f.top; i++)
            ck_assert_msg(r.top_ids[i] == (int)next_number(&at), "%s: top token %zu", name, i);
        compare("next-token probabilities", r.top_probs, at, n * (size_t)f.top, TOL);
        decoder_run_destroy(&r);
    }
    fixture_close(&f);
}

START_TEST(a_flat_qwen35_every_stage)
{
    check_case("qwen35");
}
END_TEST

START_TEST(the_whole_models_text_every_stage)
{
    struct fixture f;

    check_case("qwen35-vl");
    fixture_open(&f, "qwen35-vl");
    /* (two value heads to a key head; an untied head; the kinds from the interval) */
    ck_assert_int_eq(f.m.cfg.gdn.v_heads, 2 * f.m.cfg.gdn.k_heads);
    ck_assert(!f.m.cfg.tied);
    ck_assert_int_eq(f.m.cfg.rope_dim, 2);
    ck_assert_str_eq(f.m.title, "Qwen3.5");
    fixture_close(&f);
}
END_TEST

/*
 * Qwen3.5-MoE's whole model (Qwen3.6-35B-A3B's form): every MLP a mixture,
 * its experts stacked as the hub keeps them, a shared expert behind a
 * sigmoid gate; two experts' router rows the same in layer 0 (a tie).
 */
START_TEST(a_mixture_with_a_shared_expert_every_stage)
{
    struct fixture f;

    check_case("qwen35-moe");
    fixture_open(&f, "qwen35-moe");
    ck_assert_str_eq(f.m.title, "Qwen3.5-MoE");
    ck_assert_int_eq(f.m.cfg.moe.n_experts, 4);
    ck_assert_int_eq(f.m.cfg.moe.n_experts_used, 2);
    ck_assert_int_eq(f.m.cfg.moe.d_expert, 16);
    ck_assert_int_eq(f.m.cfg.moe.d_shared, 24);
    ck_assert(f.m.cfg.moe.norm_topk);
    for (int l = 0; l < f.m.cfg.n_layer; l++)
        ck_assert(decoder_sparse(&f.m.cfg, l));
    /* (the vision tower's tensors beside the text model's, said so) */
    ck_assert_ptr_nonnull(strstr(f.m.left_alone, "vision tower"));
    fixture_close(&f);
    /* The same model as llama.cpp's converter writes it: qwen35moe, no feed_forward_length. */
    check_case("qwen35moe-gguf");
    fixture_open(&f, "qwen35moe-gguf");
    ck_assert_str_eq(f.m.title, "Qwen3.5-MoE");
    ck_assert_int_eq(f.m.cfg.moe.d_shared, 24);
    ck_assert_int_eq(f.m.cfg.d_mlp, 16);
    ck_assert(f.m.cfg.moe.norm_topk);
    ck_assert(f.m.cfg.gdn.tiled);
    fixture_close(&f);
}
END_TEST

/*
 * Qwen3-Next: each DeltaNet layer's projections fused per key head
 * (in_proj_qkvz, in_proj_ba), one tensor an expert, layer 1 dense
 * (mlp_only_layers): every stage as Qwen3.5's, the value heads grouped.
 */
START_TEST(qwen3_next_fused_projections_every_stage)
{
    struct fixture f;

    check_case("qwen3-next");
    fixture_open(&f, "qwen3-next");
    ck_assert_str_eq(f.m.title, "Qwen3-Next");
    ck_assert(!f.m.cfg.gdn.tiled);
    ck_assert(decoder_sparse(&f.m.cfg, 0) && !decoder_sparse(&f.m.cfg, 1));
    ck_assert(decoder_sparse(&f.m.cfg, 2) && decoder_sparse(&f.m.cfg, 3));
    ck_assert_int_eq(f.m.cfg.d_mlp, 40);
    ck_assert_int_eq(f.m.cfg.moe.d_shared, 24);
    ck_assert_int_eq(f.m.cfg.rope_dim, 4);
    fixture_close(&f);
}
END_TEST

/* Every weight of l within Q8_0's rounding of ref's (a block's scale, an fp16, over 127 levels). */
static void
within_q8_0(const struct decoder_linear *l, const struct decoder_linear *ref, const char *what)
{
    ck_assert_int_eq(l->in, ref->in);
    ck_assert_int_eq(l->out, ref->out);
    ck_assert_ptr_nonnull(l->wq);
    for (int o = 0; o < ref->out; o++)
        for (int b = 0; b < ref->in; b += 32) {
            float top = 0.0f;
            for (int i = b; i < b + 32 && i < ref->in; i++)
                top = fmaxf(top, fabsf(decoder_linear_at(ref, i, o)));
            for (int i = b; i < b + 32 && i < ref->in; i++)
                ck_assert_msg(fabsf(decoder_linear_at(l, i, o) - decoder_linear_at(ref, i, o)) <=
                                  0.6f * top / 127.0f,
                              "%s: row %d column %d: %g, not %g's Q8_0", what, o, i,
                              (double)decoder_linear_at(l, i, o),
                              (double)decoder_linear_at(ref, i, o));
        }
}

/*
 * Qwen3-Next as llama.cpp's converter writes it (qwen3next): attn_qkv and
 * attn_gate apart, ssm_ba as in_proj_ba, the value heads grouped (not tiled
 * as its Qwen3.5's are); the older form with in_proj_qkvz whole (ssm_in);
 * every stage against the Hugging Face fixture's forward.  Then the file
 * llama-quantize made of it in Q8_0: the b and a taken from ssm_ba's blocks
 * (and the rest) the float file's weights within Q8_0's rounding.
 */
START_TEST(qwen3_next_from_a_gguf_every_stage)
{
    static const char *const forms[] = { "qwen3next-gguf", "qwen3next-legacy-gguf" };
    struct decoder_model q8;
    struct attn_error err;
    struct fixture f;
    char path[4400];

    check_case("qwen3-next-moe");
    for (int k = 0; k < 2; k++) {
        check_case(forms[k]);
        fixture_open(&f, forms[k]);
        ck_assert_str_eq(f.m.title, "Qwen3-Next");
        ck_assert(!f.m.cfg.gdn.tiled);
        for (int l = 0; l < f.m.cfg.n_layer; l++)
            ck_assert(decoder_sparse(&f.m.cfg, l));
        ck_assert_int_eq(f.m.cfg.moe.d_shared, 24);
        ck_assert_int_eq(f.m.cfg.rope_dim, 4);
        fixture_close(&f);
    }
    fixture_open(&f, "qwen3next-gguf");
    snprintf(path, sizeof path, "%s/qwen3next-q8-gguf", test_path("tests/fixtures/decoders"));
    ck_assert_msg(architecture_load(&q8, path, NULL, &err) == ATTN_OK, "%s", err.msg);
    for (int l = 0; l < 3; l++) { /* (the DeltaNet layers) */
        const struct decoder_gdn_weights *g = &q8.blocks[l].gdn, *r = &f.m.blocks[l].gdn;
        within_q8_0(&g->b, &r->b, "b");
        within_q8_0(&g->a, &r->a, "a");
        within_q8_0(&g->qkv, &r->qkv, "qkv");
        within_q8_0(&g->z, &r->z, "z");
    }
    decoder_destroy(&q8);
    fixture_close(&f);
}
END_TEST

/*
 * Its kinds not three to one (layer_types), two value heads to a key head
 * of the same width, a whole MTP layer beside; then the same model as
 * llama.cpp's converter writes it (tests/oracle/gguf_models.py): its
 * numbers the same, each value head's where the file tiles it.
 */
START_TEST(a_gguf_as_llama_cpp_converts_it)
{
    struct fixture f;

    check_case("qwen35-gqa");
    check_case("qwen35-gguf");
    fixture_open(&f, "qwen35-gguf");
    /* (the MTP layer past the model's own is not one of its layers) */
    ck_assert_int_eq(f.m.cfg.n_layer, 4);
    ck_assert(f.m.cfg.gdn.tiled);
    ck_assert_int_eq(f.m.cfg.gdn.v_heads, 2 * f.m.cfg.gdn.k_heads);
    ck_assert_int_eq(decoder_gdn_key_head(&f.m.cfg, 1), 1);
    ck_assert_int_eq(f.m.cfg.rope_dim, 4);
    ck_assert(!f.m.cfg.norm_plus_one);
    ck_assert(!f.m.cfg.tied);
    fixture_close(&f);
    fixture_open(&f, "qwen35-gqa");
    ck_assert(!f.m.cfg.gdn.tiled);
    ck_assert_int_eq(decoder_gdn_key_head(&f.m.cfg, 1), 0);
    fixture_close(&f);
}
END_TEST

/*
 * The text less its last four tokens, then the whole from it on two threads,
 * against the whole on one: the same bits in every layer (the DeltaNet
 * layers going on from the state and window the first run kept), and an
 * appended token's too.
 */
/* Whether run a's and b's layer outputs and next tokens are the same bits over n rows. */
static bool
same_run(const struct decoder_config *c, const struct decoder_run *a, const struct decoder_run *b,
         size_t n)
{
    for (int l = 0; l < c->n_layer; l++)
        if (memcmp(a->layers[l].resid2, b->layers[l].resid2,
                   n * (size_t)c->d_model * sizeof(float)) != 0)
            return false;
    return memcmp(a->top_probs, b->top_probs, n * (size_t)a->top * sizeof(float)) == 0 &&
           memcmp(a->top_ids, b->top_ids, n * (size_t)a->top * sizeof(int)) == 0;
}

/*
 * Writing: the text's last six tokens appended one at a time, each run
 * from the one before (in its memory when it has room, else copied): each
 * the whole forward's bits, every DeltaNet layer's state having read every
 * row (kept_rows); then an edit of an earlier token, whose state is made
 * again from row 0, and a token appended after it: the same bits again.
 */
START_TEST(writing_token_by_token_is_the_whole_forward)
{
    static const char *const cases[] = { "qwen35", "qwen35-gguf" };

    for (size_t k = 0; k < 2; k++) {
        struct fixture f;
        struct decoder_run run, next, whole;
        struct attn_error err;
        int ids[MAX_IDS];
        fixture_open(&f, cases[k]);
        const struct decoder_config *c = &f.m.cfg;
        ck_assert(decoder_forward(&f.m, f.ids, f.n - 6, f.top, NULL, &run, &err) == ATTN_OK);
        for (int n = f.n - 5; n <= f.n; n++) {
            ck_assert(decoder_forward_from(&f.m, f.ids, n, f.top, NULL, &run, n - 1, &next,
                                           &err) == ATTN_OK);
            decoder_run_destroy(&run);
            run = next;
            ck_assert(decoder_forward(&f.m, f.ids, n, f.top, NULL, &whole, &err) == ATTN_OK);
            ck_assert_msg(same_run(c, &whole, &run, (size_t)n), "%s: %d tokens written",
                          cases[k], n);
            decoder_run_destroy(&whole);
            for (int l = 0; l < c->n_layer; l++)
                ck_assert_int_eq(run.layers[l].kept_rows, decoder_attends(c, l) ? 0 : n);
        }
        /* token 2 changed: every DeltaNet state is made again from the start */
        memcpy(ids, f.ids, (size_t)f.n * sizeof *ids);
        ids[2] = (ids[2] + 1) % c->vocab_size;
        ck_assert(decoder_forward_from(&f.m, ids, f.n - 1, f.top, NULL, &run, 2, &next, &err) ==
                  ATTN_OK);
        decoder_run_destroy(&run);
        ck_assert(decoder_forward_from(&f.m, ids, f.n, f.top, NULL, &next, f.n - 1, &run, &err) ==
                  ATTN_OK);
        decoder_run_destroy(&next);
        ck_assert(decoder_forward(&f.m, ids, f.n, f.top, NULL, &whole, &err) == ATTN_OK);
        ck_assert_msg(same_run(c, &whole, &run, (size_t)f.n), "%s: an edit, then a token",
                      cases[k]);
        decoder_run_destroy(&whole);
        decoder_run_destroy(&run);
        fixture_close(&f);
    }
}
END_TEST

/* Gated DeltaNet's forward, counting its calls (the mixer below). */
static int gdn_calls;

static void
counted_gdn(const struct part_attention_args *a, struct decoder_layer_stages *s, int threads)
{
    gdn_calls++;
    decoder_mixer_gdn.forward(a, s, threads);
}

/*
 * A run of no new rows (the same text again, as a writing's start makes it
 * to take its logits): no layer is made again, not a DeltaNet layer from
 * row 0 (its state has read the last row, so going on from it is not
 * possible); the whole forward's bits, its state still the one that read
 * every row, and a token appended after it the whole forward's bits too.
 */
START_TEST(a_run_of_no_new_rows_makes_no_layer)
{
    struct fixture f;
    struct decoder_run ref, prev, same, next;
    struct attn_error err;
    struct decoder_mixer counting = decoder_mixer_gdn;
    int id, deltanet = 0;

    counting.forward = counted_gdn;
    id = decoder_mixer_add(&counting);
    ck_assert_int_ge(id, 0);
    fixture_open(&f, "qwen35");
    struct decoder_config *c = &f.m.cfg;
    for (int l = 0; l < c->n_layer; l++)
        if (c->mixer[l] == DECODER_MIXER_GDN) {
            c->mixer[l] = (unsigned char)id;
            deltanet++;
        }
    ck_assert_int_gt(deltanet, 0);
    ck_assert(decoder_forward(&f.m, f.ids, f.n - 1, f.top, NULL, &ref, &err) == ATTN_OK);
    ck_assert(decoder_forward(&f.m, f.ids, f.n - 1, f.top, NULL, &prev, &err) == ATTN_OK);
    ck_assert_int_eq(gdn_calls, 2 * deltanet);
    gdn_calls = 0;
    ck_assert(decoder_forward_from(&f.m, f.ids, f.n - 1, f.top, NULL, &prev, f.n - 1, &same,
                                   &err) == ATTN_OK);
    ck_assert_int_eq(gdn_calls, 0);
    ck_assert(same_run(c, &ref, &same, (size_t)f.n - 1));
    for (int l = 0; l < c->n_layer; l++)
        ck_assert_int_eq(same.layers[l].kept_rows, decoder_attends(c, l) ? 0 : f.n - 1);
    decoder_run_destroy(&ref);
    ck_assert(decoder_forward_from(&f.m, f.ids, f.n, f.top, NULL, &same, f.n - 1, &next, &err) ==
              ATTN_OK);
    ck_assert_int_eq(gdn_calls, deltanet); /* (the appended row only: each layer once) */
    ck_assert(decoder_forward(&f.m, f.ids, f.n, f.top, NULL, &ref, &err) == ATTN_OK);
    ck_assert(same_run(c, &ref, &next, (size_t)f.n));
    decoder_run_destroy(&ref);
    decoder_run_destroy(&same);
    decoder_run_destroy(&next);
    fixture_close(&f);
}
END_TEST

START_TEST(an_edit_and_threads_change_no_bit)
{
    static const char *const cases[] = { "qwen35", "qwen35-vl" };

    for (size_t k = 0; k < 2; k++) {
        struct fixture f;
        struct decoder_run whole, part, edit;
        struct attn_error err;
        fixture_open(&f, cases[k]);
        const struct decoder_config *c = &f.m.cfg;
        const size_t n = (size_t)f.n;
        parallel_set_threads(1);
        ck_assert(decoder_forward(&f.m, f.ids, f.n, f.top, NULL, &whole, &err) == ATTN_OK);
        parallel_set_threads(2);
        /* (with room past its text, as a view's run has: the edit is made in its memory and
           keeps the shown layer's rows before it) */
        ck_assert(decoder_forward_from(&f.m, f.ids, f.n - 4, f.top, NULL, NULL, 0, &part, &err) ==
                  ATTN_OK);
        ck_assert(decoder_show_layer(&f.m, &part, 0, &err) == ATTN_OK);
        {
            /* (the kept rows' columns past their text not zero, as reused memory may hold:
               the edit's longer rows must write them) */
            const size_t ld = (size_t)part.attention_ld;
            float *e = part.layers[0].gdn.effective;
            for (size_t h = 0; h < (size_t)c->gdn.v_heads; h++)
                for (size_t i = 0; i < n - 4; i++)
                    for (size_t j = n - 4; j < ld; j++)
                        e[(h * ld + i) * ld + j] = NAN;
        }
        ck_assert(decoder_forward_from(&f.m, f.ids, f.n, f.top, NULL, &part, f.n - 4, &edit,
                                       &err) == ATTN_OK);
        ck_assert_msg(same_run(c, &whole, &edit, n), "%s: an edit on two threads", cases[k]);
        {
            /* The shown layer's effective attention: the rows before the edit kept, the rest
               made on two threads, the same bits as the whole made on one. */
            const size_t cells = (size_t)c->gdn.v_heads * n * n;
            float *a, *b;
            ck_assert_int_eq(edit.attention_rows, f.n - 4); /* (the rows before the edit kept) */
            ck_assert(decoder_show_layer(&f.m, &edit, 0, &err) == ATTN_OK);
            ck_assert_int_eq(edit.attention_rows, f.n);
            b = effective_rows(c, &edit, edit.layers[0].gdn.effective);
            parallel_set_threads(1);
            ck_assert(decoder_show_layer(&f.m, &whole, 0, &err) == ATTN_OK);
            a = effective_rows(c, &whole, whole.layers[0].gdn.effective);
            ck_assert_msg(memcmp(a, b, cells * sizeof *a) == 0, "%s: effective after the edit",
                          cases[k]);
            free(a);
            free(b);
        }
        decoder_run_destroy(&whole);
        decoder_run_destroy(&part);
        decoder_run_destroy(&edit);
        parallel_set_threads(0);
        fixture_close(&f);
    }
}
END_TEST

/*
 * The flat fixture's config.json with key's value replaced by value (JSON),
 * beside a link to its weights, in a folder of the test's own: its path into out.
 */
static void
edited_config(const char *key, const char *value, char *out, size_t size)
{
    char src[8800], needle[128], *at, *end;
    struct expected text;
    FILE *f;

    snprintf(src, sizeof src, "%s/qwen35/config.json", test_path("tests/fixtures/decoders"));
    expected_load(&text, src);
    snprintf(out, size, "%s/edited", dir);
    (void)mkdir(out, 0755);
    snprintf(needle, sizeof needle, "\"%s\": ", key);
    at = strstr(text.text, needle);
    ck_assert_msg(at != NULL, "no %s", key);
    at += strlen(needle);
    end = at;
    if (*end == '[')
        end = strchr(end, ']') + 1;
    else
        while (*end != ',' && *end != '\n' && *end != '}')
            end++;
    snprintf(src, sizeof src, "%s/config.json", out);
    f = fopen(src, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "%.*s%s%s", (int)(at - text.text), text.text, value, end);
    fclose(f);
    free(text.text);
    snprintf(src, sizeof src, "%s/model.safetensors", out);
    if (access(src, F_OK) != 0) {
        char weights[4400], whole[PATH_MAX];
        snprintf(weights, sizeof weights, "%s/qwen35/model.safetensors",
                 test_path("tests/fixtures/decoders"));
        ck_assert(realpath(weights, whole) != NULL);
        ck_assert(symlink(whole, src) == 0);
    }
}

START_TEST(the_config_refuses_by_name)
{
    static const struct {
        const char *key, *value, *says;
    } cases[] = {
        { "layer_types", "[\"linear_attention\", \"mamba\", \"linear_attention\", \"full_attention\"]",
          "\"layer_types\"[1] is mamba" },
        { "layer_types", "[\"linear_attention\"]", "not a list of 4 kinds" },
        { "linear_num_value_heads", "3", "a multiple of the key heads" },
        { "hidden_act", "\"gelu\"", "\"hidden_act\" is gelu" },
        { "partial_rotary_factor", "0.1", "turns 1 columns" },
        { "attention_bias", "true", "\"attention_bias\" is true" },
    };

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char d[4400];
        struct decoder_model m;
        struct attn_error err;
        edited_config(cases[i].key, cases[i].value, d, sizeof d);
        ck_assert_msg(architecture_load(&m, d, NULL, &err) != ATTN_OK, "%s accepted",
                      cases[i].key);
        ck_assert_msg(strstr(err.msg, cases[i].says) != NULL && strstr(err.msg, "config.json"),
                      "%s: %s", cases[i].key, err.msg);
    }
}
END_TEST

/*
 * Through the pipeline every front end reads: a DeltaNet layer has its own
 * stages and none of attention's, their numbers the fixture's; --export
 * writes them; the full layer has its gate and gated context.
 */
/*
 * The GGUF at path copied (case i, into the test's folder) with key given
 * v: refused, the message saying says and naming the copy.
 */
static void
expect_edit_refused(const char *path, size_t i, const char *key, struct ge_value v,
                    const char *says)
{
    struct decoder_model m;
    struct attn_error err;
    char edited[3000];

    snprintf(edited, sizeof edited, "%s/case%zu.gguf", dir, i);
    gguf_edit(path, edited, key, v);
    memset(&err, 0, sizeof err);
    ck_assert_msg(architecture_load(&m, dir, &(struct arch_options){ edited, 0, false }, &err) !=
                      ATTN_OK,
                  "%s: case %zu opened", key, i);
    ck_assert_msg(strstr(err.msg, says) != NULL && strstr(err.msg, edited) != NULL, "%s: %s", key,
                  err.msg);
}

/*
 * A GGUF's keys refused by name, each in a copy of qwen35-gguf with that
 * key changed; recurrent_layers taken away leaves the interval's kinds,
 * whose layer 1 then lacks its DeltaNet tensors (named).
 */
START_TEST(the_gguf_refuses_by_name)
{
    static const struct {
        const char *key;
        struct ge_value v;
        const char *says;
    } cases[] = {
        { "qwen35.ssm.inner_size", { GE_U32, { 30 }, 4 }, "not a multiple of qwen35.ssm.time_step_rank 4" },
        { "qwen35.nextn_predict_layers", { GE_U32, { 5 }, 4 }, "leaves none of its 5 layers" },
        { "qwen35.rope.dimension_count", { GE_U32, { 3 }, 4 }, "RoPE turns pairs" },
        { "qwen35.ssm.state_size", { -1, { 0 }, 0 }, "no qwen35.ssm.state_size" },
        { "qwen35.attention.recurrent_layers", { GE_U32, { 1 }, 4 }, "not a list of 5 bools" },
        { "qwen35.attention.recurrent_layers", { -1, { 0 }, 0 }, "blk.1.attn_qkv.weight" },
    };
    char path[4200];

    snprintf(path, sizeof path, "%s/qwen35-gguf/model.gguf", test_path("tests/fixtures/decoders"));
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect_edit_refused(path, i, cases[i].key, cases[i].v, cases[i].says);
}
END_TEST

/*
 * The same model as Ollama's own converter writes its library's qwen3.5
 * blobs (tests/oracle/gguf_models.py's qwen35_ollama): the layers' kinds
 * only in head_count_kv, one count a layer (not three to one), dt_bias as
 * blk.N.ssm_dt, the value heads tiled as ssm.v_head_reordered says, the
 * MTP head's and a vision tower's tensors beside: every stage the same
 * numbers as llama.cpp's form, what is not read said; then its keys
 * changed, each refused by name, or (v_head_reordered false) read so.
 */
START_TEST(ollamas_own_form_opens)
{
    static const uint32_t uneven[] = { 0, 2, 0, 1 }, none[] = { 0, 0, 0, 0 }, three[] = { 0, 2, 0 };
    static const struct {
        const char *key;
        struct ge_value v;
        const char *says;
    } cases[] = {
        { "qwen35.attention.head_count_kv", { 0 }, "head_count_kv[3] is 1: attnscope reads one" },
        { "qwen35.attention.head_count_kv", { 0 }, "is 0 on every layer: no layer attends" },
        { "qwen35.attention.head_count_kv", { 0 }, "a list of 3, not a count for each of its 4" },
        { "qwen35.ssm.v_head_reordered", { GE_U32, { 1 }, 4 }, "v_head_reordered is not a bool" },
    };
    struct fixture f;
    struct decoder_model m;
    struct attn_error err;
    char edited[3000], path[4200];

    check_case("qwen35-ollama");
    fixture_open(&f, "qwen35-ollama");
    ck_assert_int_eq(f.m.cfg.n_layer, 4);
    ck_assert_int_eq(f.m.cfg.n_kv_head, 2);
    for (int l = 0; l < 4; l++)
        ck_assert_int_eq(decoder_attends(&f.m.cfg, l), l % 2 == 1);
    ck_assert(f.m.cfg.gdn.tiled);
    ck_assert_str_eq(f.m.left_alone,
                     "the vision tower's 5 tensors and the multi-token head's 15 tensors");
    fixture_close(&f);
    snprintf(path, sizeof path, "%s/qwen35-ollama/model.gguf", test_path("tests/fixtures/decoders"));
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect_edit_refused(path, i, cases[i].key,
                            i == 0   ? ge_u32s(uneven, 4)
                            : i == 1 ? ge_u32s(none, 4)
                            : i == 2 ? ge_u32s(three, 3)
                                     : cases[i].v,
                            cases[i].says);
    snprintf(edited, sizeof edited, "%s/grouped.gguf", dir);
    gguf_edit(path, edited, "qwen35.ssm.v_head_reordered", (struct ge_value){ GE_BOOL, { 0 }, 1 });
    ck_assert_msg(architecture_load(&m, dir, &(struct arch_options){ edited, 0, false }, &err) ==
                      ATTN_OK,
                  "%s", err.msg);
    ck_assert(!m.cfg.gdn.tiled);
    ck_assert_int_eq(decoder_gdn_key_head(&m.cfg, 1), 0);
    decoder_destroy(&m);
}
END_TEST

/* The pipeline's source for model m on fixture f's ids, showing layer first. */
static void
model_source(struct pipeline_source *src, const struct model *m, const struct fixture *f,
             int layer)
{
    memset(src, 0, sizeof *src);
    src->family = &family_model;
    src->model = m;
    src->ids = f->ids;
    src->n_ids = f->n;
    src->top = f->top;
    src->layer = layer;
}

START_TEST(the_stages_reach_every_front_end)
{
    static struct model m;
    struct fixture f;
    struct pipeline p;
    struct pipeline_source src;
    struct attention_config cfg;
    struct attn_error err;
    struct pipeline_view v;
    char path[4400];
    int written = 0;

    fixture_open(&f, "qwen35");
    ck_assert_msg(model_open(&m, f.dir, NULL, &err) == ATTN_OK, "%s", err.msg);
    model_source(&src, &m, &f, 0);
    attention_config_init(&cfg);
    ck_assert_msg(pipeline_create(&p, &cfg, &src, &err) == ATTN_OK, "%s", err.msg);
    ck_assert(!pipeline_stage_present(&p, STAGE_QUERIES));
    ck_assert(!pipeline_stage_present(&p, STAGE_WEIGHTS));
    ck_assert(!pipeline_stage_present(&p, STAGE_ATTN_GATE));
    for (int s = STAGE_DELTA_QKV; s <= STAGE_DELTA_NORMED; s++)
        ck_assert_msg(pipeline_stage_present(&p, (enum pipeline_stage)s), "%s",
                      pipeline_stage_name((enum pipeline_stage)s));
    pipeline_stage_view(&p, STAGE_BETA, 0, &v);
    stage(&f, "gdn_beta", 0, v.m.data, (size_t)f.n * (size_t)m.dec.cfg.gdn.v_heads);
    ck_assert_int_eq(pipeline_stage_heads(&p, STAGE_EFFECTIVE), m.dec.cfg.gdn.v_heads);
    ck_assert_int_eq(pipeline_stage_cells(STAGE_EFFECTIVE), CELLS_SIGNED);
    {
        /* Each head's view is its n x n, the oracle's numbers (head 1's row 3 here). */
        const char *at = line_of(f.e.text, "effective", 0);
        const int n = f.n;
        float want = 0.0f;
        pipeline_stage_view(&p, STAGE_EFFECTIVE, 1, &v);
        ck_assert_int_eq(v.m.rows, n);
        ck_assert_int_eq(v.m.cols, n);
        next_number(&at);
        for (int e = 0; e <= (1 * n + 3) * n + 2; e++)
            want = (float)next_number(&at);
        ck_assert_double_eq_tol(MAT_AT(&v.m, 3, 2), want, TOL);
        ck_assert_float_eq(MAT_AT(&v.m, 2, 3), 0.0f); /* (a later token: nothing yet) */
    }
    pipeline_stage_view(&p, STAGE_DELTA_READ, 0, &v);
    stage(&f, "gdn_out", 0, v.m.data, (size_t)f.n * (size_t)decoder_gdn_value_width(&m.dec.cfg));
    ck_assert_msg(export_all(&p, dir, &written, &err) == ATTN_OK, "%s", err.msg);
    snprintf(path, sizeof path, "%s/decay.csv", dir);
    ck_assert_int_eq(access(path, R_OK), 0);
    snprintf(path, sizeof path, "%s/effective.h1.csv", dir);
    ck_assert_int_eq(access(path, R_OK), 0);
    snprintf(path, sizeof path, "%s/queries.csv", dir);
    ck_assert_int_ne(access(path, F_OK), 0);
    ck_assert_int_eq(pipeline_select_layer(&p, 3, &err), ATTN_OK);
    ck_assert(pipeline_stage_present(&p, STAGE_WEIGHTS));
    ck_assert(!pipeline_stage_present(&p, STAGE_BETA));
    pipeline_stage_view(&p, STAGE_GATED, 0, &v);
    stage(&f, "gated", 3, v.m.data, (size_t)f.n * (size_t)decoder_q_width(&m.dec.cfg));
    ck_assert_str_eq(pipeline_stage_formula(&p, STAGE_OUTPUT), "gated W_o");
    pipeline_destroy(&p);
    {
        /* A DeltaNet layer's heads are its value heads: each ablated, on the command line and
           in the view, as the full layer's are; one past them refused. */
        struct model_switches_given g;
        struct model_switch_masks masks;
        char why[256];
        bool flag = false;
        memset(&g, 0, sizeof g);
        memset(&masks, 0, sizeof masks);
        ck_assert_int_eq(model_switch_parse(&g, SWITCH_ABLATE, "0.1", why, sizeof why), 0);
        ck_assert_msg(model_switches_apply(&m, &g, &masks, &src, &err) == ATTN_OK, "%s", err.msg);
        ck_assert(masks.mask[SWITCH_ABLATE][1]);
        model_switch_masks_free(&masks);
        memset(&g, 0, sizeof g);
        memset(&masks, 0, sizeof masks);
        ck_assert_int_eq(model_switch_parse(&g, SWITCH_ABLATE, "0.2", why, sizeof why), 0);
        ck_assert(model_switches_apply(&m, &g, &masks, &src, &err) != ATTN_OK);
        ck_assert_str_eq(err.msg, "--ablate 0.2: qwen35 has layers 0 to 3 and heads 0 to 1");
        model_switch_masks_free(&masks);
        memset(&masks, 0, sizeof masks);
        ck_assert_int_eq(model_switch_flip(&m, &masks, &flag, SWITCH_ABLATE, 1, 0, why, sizeof why), 1);
        ck_assert_int_eq(model_switch_flip(&m, &masks, &flag, SWITCH_ABLATE, 3, 1, why, sizeof why), 1);
        ck_assert_int_eq(model_switch_flip(&m, &masks, &flag, SWITCH_ABLATE, 3, 2, why, sizeof why), 0);
        model_switch_masks_free(&masks);
    }
    model_close(&m);
    fixture_close(&f);
}
END_TEST

/*
 * A DeltaNet value head ablated: its read zeroed, so its gated norm adds
 * nothing, the other heads' reads the same bits, the layer's output and
 * the next tokens changed; on qwen35-vl (four value heads, two attention
 * heads) heads 2 and 3 of a DeltaNet layer are its own, a full layer's
 * head 2 is past its heads, refused by name.
 */
START_TEST(a_deltanet_head_ablated_reads_nothing)
{
    struct fixture f;
    struct decoder_run whole, cut;
    struct decoder_knobs k;
    struct attn_error err;
    unsigned char *off;

    fixture_open(&f, "qwen35-vl");
    {
        const struct decoder_config *c = &f.m.cfg;
        const int slots = decoder_head_slots(c), dv = c->gdn.v_dim;
        const size_t Vw = (size_t)decoder_gdn_value_width(c);
        ck_assert_int_eq(slots, 4);
        ck_assert_int_eq(decoder_layer_heads(c, 1), 4);
        ck_assert_int_eq(decoder_layer_heads(c, 3), 2);
        off = calloc((size_t)c->n_layer * (size_t)slots, 1);
        ck_assert_ptr_nonnull(off);
        off[1 * slots + 3] = 1; /* layer 1's value head 3 */
        k = (struct decoder_knobs){ .causal = true, .scaled = true, .temperature = 1.0 };
        ck_assert(decoder_forward(&f.m, f.ids, f.n, f.top, NULL, &whole, &err) == ATTN_OK);
        k.ablated = off;
        ck_assert(decoder_forward(&f.m, f.ids, f.n, f.top, &k, &cut, &err) == ATTN_OK);
        for (int l = 0; l < 2; l++)
            ck_assert(decoder_show_layer(&f.m, l == 0 ? &whole : &cut, 1, &err) == ATTN_OK);
        for (int t = 0; t < f.n; t++) {
            const float *a = whole.layers[1].gdn.out + (size_t)t * Vw;
            const float *b = cut.layers[1].gdn.out + (size_t)t * Vw;
            ck_assert(memcmp(a, b, 3 * (size_t)dv * sizeof *a) == 0);
            for (int j = 0; j < dv; j++) {
                ck_assert_float_eq(b[3 * dv + j], 0.0f);
                ck_assert_float_eq(cut.layers[1].gdn.normed[(size_t)t * Vw + 3 * (size_t)dv + j],
                                   0.0f);
            }
        }
        ck_assert(memcmp(whole.layers[0].resid2, cut.layers[0].resid2,
                         (size_t)f.n * (size_t)c->d_model * sizeof(float)) == 0);
        ck_assert(memcmp(whole.layers[1].attn, cut.layers[1].attn,
                         (size_t)f.n * (size_t)c->d_model * sizeof(float)) != 0);
        ck_assert(memcmp(whole.top_probs, cut.top_probs,
                         (size_t)f.n * (size_t)f.top * sizeof(float)) != 0);
        decoder_run_destroy(&whole);
        decoder_run_destroy(&cut);
        free(off);
    }
    fixture_close(&f);
}
END_TEST

/*
 * The model map on a hybrid: a column for each of the DeltaNet layers' value
 * heads (four, where the full layer has two: nan beyond them); a DeltaNet
 * head's measures read each query's shares of its effective attention, here
 * checked against the oracle's M of qwen35-vl's layer 1 (the self and reach
 * of head 3); its memory from its decays; the same numbers whichever layer
 * is shown (a layer not shown is made again from its input).
 */
START_TEST(the_model_map_reads_deltanet_heads)
{
    static struct model m;
    struct fixture f;
    struct pipeline p;
    struct pipeline_source src;
    struct attention_config cfg;
    struct attn_error err;
    float self[16], reach[16], memory[16], again[16];

    fixture_open(&f, "qwen35-vl");
    ck_assert_msg(model_open(&m, f.dir, NULL, &err) == ATTN_OK, "%s", err.msg);
    model_source(&src, &m, &f, 3);
    attention_config_init(&cfg);
    ck_assert_msg(pipeline_create(&p, &cfg, &src, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_int_eq(head_map_heads(&p), 4);
    ck_assert(head_measure_present(&p, MEASURE_REACH) && head_measure_present(&p, MEASURE_MEMORY));
    ck_assert_int_eq(head_measures(&p, MEASURE_SELF, self), 0);
    ck_assert_int_eq(head_measures(&p, MEASURE_REACH, reach), 0);
    ck_assert_int_eq(head_measures(&p, MEASURE_MEMORY, memory), 0);
    ck_assert(isnan(self[3 * 4 + 2]) && isnan(memory[3 * 4 + 0]) && !isnan(self[3 * 4 + 1]));
    {
        /* The oracle's M of layer 1, head 3: self and reach from its shares. */
        const int n = f.n, h = 3;
        const char *at = line_of(f.e.text, "effective", 1);
        double *M = malloc((size_t)4 * n * n * sizeof *M), want_self = 0.0, want_reach = 0.0;
        ck_assert_ptr_nonnull(M);
        ck_assert_int_eq((int)next_number(&at), 4 * n * n);
        for (int e = 0; e < 4 * n * n; e++)
            M[e] = next_number(&at);
        for (int i = 1; i < n; i++) {
            const double *row = M + ((size_t)h * n + i) * n;
            double sum = 0.0;
            for (int j = 0; j < n; j++)
                sum += fabs(row[j]);
            want_self += fabs(row[i]) / sum;
            for (int j = 0; j < i; j++)
                want_reach += fabs(row[j]) / sum * (i - j);
        }
        ck_assert_double_eq_tol(self[1 * 4 + h], want_self / (n - 1), 1e-4);
        ck_assert_double_eq_tol(reach[1 * 4 + h], want_reach / (n - 1), 1e-4);
        free(M);
    }
    {
        /* memory: ln 2 over the mean of -g, the oracle's decays of layer 1 */
        const char *at = line_of(f.e.text, "gdn_decay", 1);
        double sum = 0.0;
        const int n = f.n, Hv = 4;
        ck_assert_int_eq((int)next_number(&at), n * Hv);
        for (int e = 0; e < n * Hv; e++) {
            const double g = next_number(&at);
            if (e % Hv == 2)
                sum -= g;
        }
        ck_assert_double_eq_tol(memory[1 * 4 + 2], log(2.0) / (sum / n), 1e-4);
    }
    pipeline_destroy(&p);
    src.layer = 1; /* (layer 1 shown: its own rows, not made again) */
    ck_assert_msg(pipeline_create(&p, &cfg, &src, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_int_eq(head_measures(&p, MEASURE_SELF, again), 0);
    for (int e = 0; e < 16; e++)
        ck_assert_msg((isnan(again[e]) && isnan(self[e])) || again[e] == self[e], "cell %d", e);
    {
        /* The mean over the four value heads (more than the two attention heads), cell (5, 2). */
        float *mean = malloc((size_t)f.n * (size_t)f.n * sizeof *mean), want = 0.0f;
        struct pipeline_view hv;
        ck_assert_ptr_nonnull(mean);
        ck_assert_int_eq(pipeline_stage_heads_mean(&p, STAGE_EFFECTIVE, mean), 0);
        for (int h = 0; h < 4; h++) {
            pipeline_stage_view(&p, STAGE_EFFECTIVE, h, &hv);
            want += MAT_AT(&hv.m, 5, 2);
        }
        ck_assert_float_eq(mean[5 * f.n + 2], want / 4.0f);
        free(mean);
    }
    pipeline_destroy(&p);
    model_close(&m);
    fixture_close(&f);
}
END_TEST

static Suite *
qwen35_suite(void)
{
    Suite *s = suite_create("qwen35");
    TCase *t = tcase_create("forward");

    tcase_set_timeout(t, 60);
    tcase_add_test(t, a_flat_qwen35_every_stage);
    tcase_add_test(t, the_whole_models_text_every_stage);
    tcase_add_test(t, a_gguf_as_llama_cpp_converts_it);
    tcase_add_test(t, a_mixture_with_a_shared_expert_every_stage);
    tcase_add_test(t, a_deltanet_head_ablated_reads_nothing);
    tcase_add_test(t, qwen3_next_fused_projections_every_stage);
    tcase_add_test(t, qwen3_next_from_a_gguf_every_stage);
    tcase_add_test(t, a_run_of_no_new_rows_makes_no_layer);
    tcase_add_test(t, an_edit_and_threads_change_no_bit);
    tcase_add_test(t, writing_token_by_token_is_the_whole_forward);
    suite_add_tcase(s, t);
    t = tcase_create("config");
    tcase_set_timeout(t, 60);
    tcase_add_checked_fixture(t, test_tmpdir_setup, test_tmpdir_teardown);
    tcase_add_test(t, the_config_refuses_by_name);
    tcase_add_test(t, the_gguf_refuses_by_name);
    tcase_add_test(t, ollamas_own_form_opens);
    tcase_add_test(t, the_stages_reach_every_front_end);
    tcase_add_test(t, the_model_map_reads_deltanet_heads);
    suite_add_tcase(s, t);
    return s;
}

TEST_MAIN(qwen35_suite)
