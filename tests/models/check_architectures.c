/*
 * check_architectures.c: every architecture after GPT-2 (check_gpt2.c has
 * GPT-2's): Llama, Qwen2 and Qwen3, Gemma 2 and 3, Olmo 3, from Hugging
 * Face folders, the book's files and GGUF (src/core/architectures/, the
 * decoder's RMSNorm, RoPE, grouped-query attention, QK-norm, SwiGLU, GeGLU,
 * sliding windows and caps) against PyTorch.
 *
 * tests/fixtures/decoders/ holds tiny random models of each architecture and
 * what a float32 PyTorch forward of them computes (tests/oracle/
 * llama_fixtures.py wrote both, with Debian's python3-torch, following
 * Hugging Face's modeling_llama / _qwen2 / _qwen3): Llama with grouped
 * keys (F32, tied), Llama 3's RoPE stretch with every bias and 80 tokens
 * (BF16), Qwen2's biased projections, Qwen3's QK-norm and wide heads, and
 * the book's Qwen3 names in a torch.save file.  Every stage of every layer
 * must agree to 1e-5 * max(1, |PyTorch's value|), with the model's own
 * knobs and with the mask and scaling off, a temperature and two heads
 * ablated; an edit's run (decoder_forward_from) must be bit for bit the
 * whole forward's; the config audit refuses what it does not compute.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attnscope/decoder/decoder.h"
#include "attnscope/architectures/windowed.h"
#include "attnscope/architectures/llama.h"
#include "attnscope/kernels/parallel.h"
#include "expected.h"
#include "gguf_edit.h"
#include "llama_random.h"
#include "pth_writer.h"
#include "shown_stage.h"
#include "testutil.h"

#define TOL 1e-5
#define MAX_IDS 128

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
    bool book = strstr(name, "book") != NULL;
    bool gguf = strstr(name, "gguf") != NULL;

    snprintf(f->dir, sizeof f->dir, "%s/%s", test_path("tests/fixtures/decoders"), name);
    snprintf(path, sizeof path, "%s/expected.txt", f->dir);
    expected_load(&f->e, path);
    snprintf(path, sizeof path, "%s/model.%s", f->dir, gguf ? "gguf" : "pth");
    ck_assert_msg(architecture_load(&f->m, f->dir,
                                    &(struct arch_options){ book || gguf ? path : NULL, 0, false }, &err) ==
                      ATTN_OK,
                  "%s: %s", name,
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

/* Stage name of layer l (count floats at got) against its line from `from` on, when it has one. */
static void
stage(const struct fixture *f, const char *from, const char *name, int l, const float *got,
      size_t count)
{
    char what[4400];
    const char *at = line_of(from, name, l);

    ck_assert_msg(got != NULL, "%s layer %d: no buffer", name, l);
    ck_assert_int_eq((size_t)next_number(&at), count);
    snprintf(what, sizeof what, "%s: %s layer %d", f->dir, name, l);
    compare(what, got, at, count, TOL);
}

/* Whether the section from `from` has a line for stage name. */
static bool
has(const char *from, const char *name, int l)
{
    char key[64];
    const char *end = strstr(from + 1, "\nknobs ");

    snprintf(key, sizeof key, "\n%s %d ", name, l);
    {
        const char *hit = strstr(from, key);
        return hit != NULL && (end == NULL || hit < end || from > end);
    }
}

/* The sinks' shares of r's shown layer l (H, n) against the section from `from`, when it has them. */
static void
sink_shares(const struct fixture *f, const char *from, const struct decoder_run *r, int l)
{
    const size_t H = (size_t)f->m.cfg.n_head, n = (size_t)f->n;
    float *got;

    if (!f->m.cfg.sinks)
        return;
    got = malloc(H * n * sizeof *got);
    ck_assert_ptr_nonnull(got);
    for (size_t h = 0; h < H; h++)
        for (size_t i = 0; i < n; i++)
            got[h * n + i] = decoder_sink_share(&f->m, r, (int)h, (int)i);
    stage(f, from, "sink", l, got, H * n);
    free(got);
}

/* The top next tokens and the final norm of r against the section from `from`. */
static void
outputs(const struct fixture *f, const char *from, const struct decoder_run *r)
{
    const char *at;

    compare("final", r->final, line_of(from, "final", -1), (size_t)f->n * f->m.cfg.d_model, TOL);
    at = line_of(from, "top", -1);
    next_number(&at);
    for (int i = 0; i < f->n * f->top; i++)
        ck_assert_msg(r->top_ids[i] == (int)next_number(&at), "%s: top token %d differs", f->dir,
                      i);
    compare("next-token probabilities", r->top_probs, at, (size_t)f->n * f->top, TOL);
}

/*
 * Every stage of layer l against the fixture: the norms the blocks have
 * (before attention and the MLP, or of their outputs, or both); a long
 * text's fixture keeps only q, k, the weights, the context and the output.
 */
static void
layer_stages(const struct fixture *f, const struct decoder_run *r, int l)
{
    const struct decoder_layer_stages *s = &r->layers[l];
    const struct decoder_config *c = &f->m.cfg;
    const size_t n = (size_t)f->n, C = (size_t)c->d_model, F = (size_t)c->d_mlp;
    const size_t Q = (size_t)decoder_q_width(c), K = (size_t)decoder_kv_width(c);
    const size_t hnn = (size_t)c->n_head * n * n;
    const bool whole = has(f->e.text, "resid1", l);

    stage(f, f->e.text, "q", l, s->q, n * Q);
    stage(f, f->e.text, "k", l, s->k, n * K);
    {
        float *w = shown_stage(c, r, s->weights);
        stage(f, f->e.text, "weights", l, w, hnn);
        free(w);
    }
    stage(f, f->e.text, "context", l, s->context, n * Q);
    stage(f, f->e.text, "resid2", l, s->resid2, n * C);
    sink_shares(f, f->e.text, r, l);
    ck_assert_msg(whole || strstr(f->dir, "long") != NULL, "%s: layer %d's stages", f->dir, l);
    if (!whole)
        return;
    if (decoder_pre_norms(c)) {
        stage(f, f->e.text, "norm1", l, s->norm1, n * C);
        stage(f, f->e.text, "norm2", l, s->norm2, n * C);
    } else
        ck_assert(s->norm1 == NULL && s->norm2 == NULL && !has(f->e.text, "norm1", l));
    if (decoder_post_norms(c)) {
        stage(f, f->e.text, "attn_normed", l, s->attn_normed, n * C);
        stage(f, f->e.text, "mlp_normed", l, s->mlp_normed, n * C);
    } else
        ck_assert(s->attn_normed == NULL && !has(f->e.text, "attn_normed", l));
    stage(f, f->e.text, "q_proj", l, s->q_proj, n * Q);
    stage(f, f->e.text, "k_proj", l, s->k_proj, n * K);
    stage(f, f->e.text, "v", l, s->v, n * K);
    if (c->qk_norm) {
        stage(f, f->e.text, "q_normed", l, s->q_normed, n * Q);
        stage(f, f->e.text, "k_normed", l, s->k_normed, n * K);
    } else
        ck_assert_ptr_null(s->q_normed);
    if (has(f->e.text, "scores", l)) {
        static const char *const names[] = { "scores", "scaled" };
        float *got[] = { shown_stage(c, r, s->scores), shown_stage(c, r, s->scaled) };
        for (int i = 0; i < 2; i++) {
            char what[4400];
            const char *at = line_of(f->e.text, names[i], l);
            ck_assert_int_eq((size_t)next_number(&at), hnn);
            snprintf(what, sizeof what, "%s: %s layer %d", f->dir, names[i], l);
            compare_rows(what, got[i], at, hnn, n, TOL);
            free(got[i]);
        }
    }
    stage(f, f->e.text, "attn", l, s->attn, n * C);
    stage(f, f->e.text, "resid1", l, s->resid1, n * C);
    if (decoder_sparse(c, l)) {
        /* A mixture of experts: the router, and what each token's experts were weighted by. */
        const size_t E = (size_t)c->moe.n_experts;
        ck_assert(!has(f->e.text, "gate", l));
        stage(f, f->e.text, "router_logits", l, s->router_logits, n * E);
        stage(f, f->e.text, "router", l, s->router, n * E);
        stage(f, f->e.text, "routed", l, s->routed, n * E);
    } else {
        ck_assert(!has(f->e.text, "router", l));
        stage(f, f->e.text, "gate", l, s->gate, n * F);
        stage(f, f->e.text, "up", l, s->up, n * F);
        stage(f, f->e.text, "act", l, s->act, n * F);
    }
    stage(f, f->e.text, "mlp", l, s->mlp, n * C);
}

static void
check_case(const char *name)
{
    struct fixture f;
    struct decoder_run r;
    struct attn_error err;
    const char *at;
    const char *knobs_line;

    fixture_open(&f, name);
    {
        const struct decoder_config *c = &f.m.cfg;
        const size_t n = (size_t)f.n, C = (size_t)c->d_model;
        const size_t Q = (size_t)decoder_q_width(c);
        const size_t hnn = (size_t)c->n_head * n * n;
        at = line_of(f.e.text, "freq", -1);
        ck_assert_int_eq((int)next_number(&at), decoder_head_dim(c) / 2);
        compare("RoPE's frequencies", f.m.rope_freq, at, (size_t)decoder_head_dim(c) / 2, 1e-7);
        ck_assert_msg(decoder_forward(&f.m, f.ids, f.n, f.top, NULL, &r, &err) == ATTN_OK, "%s",
                      err.msg);
        at = line_of(f.e.text, "embed", -1);
        compare("embed", r.embed, at, n * C, TOL);
        if (strstr(f.e.text, "\nfreq_local ") != NULL || c->sliding_window > 0) {
            at = line_of(f.e.text, "freq_local", -1);
            ck_assert_int_eq((int)next_number(&at), decoder_head_dim(c) / 2);
            compare("the sliding layers' frequencies", f.m.rope_freq_local, at,
                    (size_t)decoder_head_dim(c) / 2, 1e-7);
        }
        for (int l = 0; l < c->n_layer; l++) {
            ck_assert_msg(decoder_show_layer(&f.m, &r, l, &err) == ATTN_OK, "%s", err.msg);
            layer_stages(&f, &r, l);
        }
        outputs(&f, f.e.text, &r);
        decoder_run_destroy(&r);

        /* The knobs: no mask, no scaling, a temperature, heads ablated. */
        knobs_line = strstr(f.e.text, "\nknobs ");
        ck_assert_ptr_nonnull(knobs_line);
        {
            unsigned char *ablated = calloc((size_t)c->n_layer * (size_t)c->n_head, 1);
            struct decoder_knobs k = { .ablated = ablated };
            char *end;
            at = knobs_line + strlen("\nknobs ");
            k.causal = next_number(&at) != 0;
            k.scaled = next_number(&at) != 0;
            k.temperature = next_number(&at);
            while (*at == ' ' || *at == ',') {
                long layer = strtol(at + 1, &end, 10);
                long head = strtol(end + 1, &end, 10);
                ablated[layer * c->n_head + head] = 1;
                at = end;
            }
            ck_assert_msg(decoder_forward(&f.m, f.ids, f.n, f.top, &k, &r, &err) == ATTN_OK,
                          "%s", err.msg);
            for (int l = 0; l < c->n_layer; l++) {
                ck_assert_msg(decoder_show_layer(&f.m, &r, l, &err) == ATTN_OK, "%s", err.msg);
                float *w = shown_stage(c, &r, r.layers[l].weights);
                stage(&f, knobs_line, "weights", l, w, hnn);
                free(w);
                stage(&f, knobs_line, "context", l, r.layers[l].context, n * Q);
                sink_shares(&f, knobs_line, &r, l);
                if (decoder_sparse(c, l))
                    stage(&f, knobs_line, "routed", l, r.layers[l].routed,
                          n * (size_t)c->moe.n_experts);
                stage(&f, knobs_line, "resid2", l, r.layers[l].resid2, n * C);
            }
            outputs(&f, knobs_line, &r);
            decoder_run_destroy(&r);
            free(ablated);
        }
        /* The expert knob: experts switched off, their router logits -inf (a mixture's). */
        knobs_line = strstr(f.e.text, "\nexperts_off ");
        if (knobs_line != NULL) {
            const size_t E = (size_t)c->moe.n_experts;
            unsigned char *off = calloc((size_t)c->n_layer * E, 1);
            struct decoder_knobs k = { .causal = true, .scaled = true, .temperature = 1.0,
                                       .experts_off = off };
            char *end;
            at = knobs_line + strlen("\nexperts_off");
            while (*at == ' ' || *at == ',') {
                long layer = strtol(at + 1, &end, 10);
                long expert = strtol(end + 1, &end, 10);
                off[(size_t)layer * E + (size_t)expert] = 1;
                at = end;
            }
            ck_assert_msg(decoder_forward(&f.m, f.ids, f.n, f.top, &k, &r, &err) == ATTN_OK,
                          "%s", err.msg);
            for (int l = 0; l < c->n_layer; l++) {
                ck_assert_msg(decoder_show_layer(&f.m, &r, l, &err) == ATTN_OK, "%s", err.msg);
                if (decoder_sparse(c, l)) {
                    stage(&f, knobs_line, "routed", l, r.layers[l].routed, n * E);
                    /* (no token sent to an expert switched off) */
                    for (size_t i = 0; i < n; i++)
                        for (size_t e = 0; e < E; e++)
                            ck_assert(!off[(size_t)l * E + e] ||
                                      r.layers[l].routed[i * E + e] == 0.0f);
                }
                stage(&f, knobs_line, "resid2", l, r.layers[l].resid2, n * C);
            }
            outputs(&f, knobs_line, &r);
            decoder_run_destroy(&r);
            free(off);
        }
        /* The sinks switched off: their logits -inf, every row's weights summing to 1. */
        knobs_line = strstr(f.e.text, "\nsinks_off");
        ck_assert(c->sinks == (knobs_line != NULL));
        if (knobs_line != NULL) {
            struct decoder_knobs k = { .causal = true, .scaled = true, .temperature = 1.0,
                                       .sinks_off = true };
            ck_assert_msg(decoder_forward(&f.m, f.ids, f.n, f.top, &k, &r, &err) == ATTN_OK,
                          "%s", err.msg);
            for (int l = 0; l < c->n_layer; l++) {
                ck_assert_msg(decoder_show_layer(&f.m, &r, l, &err) == ATTN_OK, "%s", err.msg);
                float *w = shown_stage(c, &r, r.layers[l].weights);
                stage(&f, knobs_line, "weights", l, w, hnn);
                free(w);
                sink_shares(&f, knobs_line, &r, l);
                stage(&f, knobs_line, "resid2", l, r.layers[l].resid2, n * C);
            }
            outputs(&f, knobs_line, &r);
            decoder_run_destroy(&r);
        }
    }
    fixture_close(&f);
}

/*
 * Qwen3-MoE (issue 52): a router's softmax, each token's two likeliest of six
 * experts renormalised, their SwiGLUs weighted and summed in expert order; a
 * dense layer between (mlp_only_layers), and a layer whose experts 1 and 3
 * tie on every token.  Every stage against modeling_qwen3_moe's forward.
 */
START_TEST(qwen3_moe_routes_each_token_to_its_experts)
{
    check_case("qwen3-moe");
}
END_TEST

/*
 * OLMoE (QK-norm over the whole projection, every layer sparse, 3 of 8
 * experts weighted by their probabilities as they are) and Mixtral (Llama's
 * attention, 2 of 4 experts always renormalised, block_sparse_moe's names):
 * against modeling_olmoe's and modeling_mixtral's forwards.
 */
START_TEST(olmoe_and_mixtral_route_as_their_blocks_do)
{
    check_case("olmoe");
    check_case("mixtral");
}
END_TEST

/*
 * gpt-oss (modeling_gpt_oss): a sink logit per head joined to every row's
 * softmax and dropped after it (each row's share checked), biases on q, k,
 * v and o, every other layer sliding with the full layers' YaRN, the
 * router's top k logits softmaxed among themselves, the experts' gate and
 * up interleaved in one tensor and their SwiGLU clamped; the sinks switched
 * off.  In float32, and as the hub checkpoint keeps the experts: MXFP4
 * blocks and scales (the rest bfloat16); and that one as llama.cpp converts
 * it (tests/oracle/gguf_models.py's gpt_oss: ggml's MXFP4 blocks, gate and up
 * apart, the sinks, router and norms under its names).
 */
START_TEST(gpt_oss_sinks_and_clamped_experts)
{
    check_case("gpt-oss");
    check_case("gpt-oss-mxfp4");
    check_case("gpt-oss-gguf"); /* (llama.cpp's layout: gate and up apart, ggml's MXFP4) */
}
END_TEST

/*
 * The three as llama.cpp's converter writes them (tests/oracle/gguf_models.py):
 * each layer's experts stacked in one tensor per projection, read as slices;
 * qwen3moe's experts as wide as expert_feed_forward_length, Mixtral under
 * llama with expert_count (its q and k rows put back); the same numbers.
 */
/*
 * A mixture's experts packed as the dense linears are (their quantized or
 * bfloat16 blocks in the products' panels, a layer at a time, the copies
 * given back): the same bits as unpacked, in every layer and the next
 * tokens; from a Hugging Face folder (BF16, mapped) and from GGUF (stacked
 * experts, each packed from its slice).
 */
static void same_forward(const struct fixture *f, const struct decoder_model *x,
                         const struct decoder_model *y, const char *what);

static void
moe_packed_case(const char *name, bool replacing)
{
    struct fixture f;
    struct decoder_model packed;
    struct attn_error err;
    const char *gguf = strstr(name, "gguf") != NULL ? "model.gguf" : NULL;
    char path[4400];

    fixture_open(&f, name);
    snprintf(path, sizeof path, "%s/%s", f.dir, gguf != NULL ? gguf : "");
    ck_assert(architecture_load(&packed, f.dir, &(struct arch_options){ gguf != NULL ? path : NULL, 0, false },
                                &err) == ATTN_OK);
    ck_assert(replacing ? decoder_pack_replacing(&packed) : decoder_pack(&packed));
    for (int l = 0; l < packed.cfg.n_layer; l++)
        if (decoder_sparse(&packed.cfg, l)) {
            ck_assert_msg(packed.blocks[l].router.packed.data != NULL, "%s: layer %d's router", name, l);
            for (int e = 0; e < packed.cfg.moe.n_experts; e++) {
                const struct decoder_expert *x = &packed.blocks[l].experts[e];
                ck_assert_msg(x->gate.packed.data != NULL &&
                                  (x->fused || x->up.packed.data != NULL) &&
                                  x->down.packed.data != NULL,
                              "%s: layer %d expert %d not packed", name, l, e);
            }
        }
    same_forward(&f, &f.m, &packed, name);
    decoder_destroy(&packed);
    fixture_close(&f);
}

START_TEST(packed_experts_give_the_same_bits)
{
    moe_packed_case("olmoe", true);
    moe_packed_case("qwen3-moe", false);
    moe_packed_case("mixtral-gguf", true);
    /* gpt-oss's MXFP4 (each block's power of two a half's): the hub's fused, llama.cpp's apart */
    moe_packed_case("gpt-oss-mxfp4", false);
    moe_packed_case("gpt-oss-gguf", true);
}
END_TEST

START_TEST(mixtures_open_from_gguf)
{
    check_case("qwen3-moe-sparse");
    check_case("qwen3-moe-gguf");
    check_case("olmoe-gguf");
    check_case("mixtral-gguf");
}
END_TEST

START_TEST(llama_with_grouped_keys)
{
    check_case("llama-gqa");
}
END_TEST

START_TEST(llama3_stretch_and_biases_over_80_tokens)
{
    check_case("llama3-scaled");
}
END_TEST

START_TEST(qwen2)
{
    check_case("qwen2");
}
END_TEST

START_TEST(qwen3_qk_norm_and_wide_heads)
{
    check_case("qwen3");
}
END_TEST

START_TEST(qwen3_under_the_books_names)
{
    check_case("qwen3-book");
}
END_TEST

START_TEST(llama32_under_the_books_names)
{
    check_case("llama-book");
}
END_TEST

/*
 * GGUF files as llama.cpp's converter writes them (tests/oracle/gguf_models.py):
 * the same models as the safetensors fixtures give the same stages (llama's
 * q and k rows put back from llama.cpp's pair order, Llama 3's stretch from
 * rope_freqs.weight, Qwen2's biases, an untied head), and a Qwen3 whose
 * matrices are quantized in eight types agrees with PyTorch over the weights
 * as gguf-py dequantizes them.
 */
/*
 * Gemma 3 (tests/oracle/window_fixtures.py): its four norms a block by
 * 1 + w, scaled embeddings, per-head QK-norm, query_pre_attn_scalar, GeGLU,
 * a sliding window of 3 keys in three layers of four with their own RoPE
 * base, the full layer's linear stretch, the mask kept under the knobs.
 */
START_TEST(gemma3_sliding_windows)
{
    check_case("gemma3-window");
}
END_TEST

/* 80 tokens, a window of 20: the band within and across blocks of 64 queries. */
START_TEST(gemma3_a_window_across_blocks)
{
    check_case("gemma3-long");
}
END_TEST

/* An older config: the layers' kinds from sliding_window_pattern; the logits capped. */
START_TEST(gemma3_a_pattern_and_capped_logits)
{
    check_case("gemma3-pattern");
}
END_TEST

/* Olmo 3: post-norm blocks, QK-norm over the whole width, YaRN in its full layers only. */
START_TEST(olmo3_post_norm_and_yarn)
{
    check_case("olmo3-yarn");
}
END_TEST

/*
 * gemma3-pattern as llama.cpp's converter writes it (tests/oracle/gguf_models.py):
 * its norms stored as 1 + w, the window and pattern, the sliding layers' RoPE base and
 * the cap in the metadata; the same stages as the Hugging Face folder's.
 */
START_TEST(gemma3_from_a_gguf_file)
{
    check_case("gemma3-gguf");
}
END_TEST

/*
 * Gemma 2: no QK-norm, every other layer sliding by default, one RoPE base,
 * the scaled scores capped (attn_logit_softcapping 2, low enough to bite)
 * before the mask, under the knobs too (unscaled, T = 0.8), the logits capped.
 */
START_TEST(gemma2_capped_scores)
{
    check_case("gemma2-capped");
}
END_TEST

/* transformers 5's rope_parameters by layer type, YaRN's default attention factor. */
START_TEST(olmo3_rope_parameters_by_kind)
{
    check_case("olmo3-params");
}
END_TEST

START_TEST(gguf_files_as_llama_cpp_writes_them)
{
    check_case("qwen3-gguf");
    check_case("llama-gguf");
    check_case("llama3-gguf");
    check_case("qwen2-gguf");
}
END_TEST

START_TEST(a_quantized_gguf_agrees_with_its_dequantized_weights)
{
    check_case("qwen3-q-gguf");
}
END_TEST

/*
 * An edit: the run of the text less its last three tokens, then the whole
 * text from it (decoder_forward_from, whose new rows turn at their own
 * positions), is bit for bit the whole text's forward, in every layer kept
 * and in the shown layer's every stage; and 1 and 2 threads agree to the bit.
 */
/* f's tokens whole on one thread against the first `from` and then the rest on two (an edit). */
static void
edit_case(const char *name, int from, int shown)
{
    struct fixture f;
    struct decoder_run whole, part, edit;
    struct attn_error err;

    fixture_open(&f, name);
    {
        const struct decoder_config *c = &f.m.cfg;
        const size_t n = (size_t)f.n;
        parallel_set_threads(1);
        ck_assert(decoder_forward(&f.m, f.ids, f.n, f.top, NULL, &whole, &err) == ATTN_OK);
        parallel_set_threads(2);
        ck_assert(decoder_forward(&f.m, f.ids, from, f.top, NULL, &part, &err) == ATTN_OK);
        ck_assert(decoder_forward_from(&f.m, f.ids, f.n, f.top, NULL, &part, from, &edit,
                                       &err) == ATTN_OK);
        for (int l = 0; l < c->n_layer; l++) {
            ck_assert_msg(memcmp(whole.layers[l].k, edit.layers[l].k,
                                 n * (size_t)decoder_kv_width(c) * sizeof(float)) == 0,
                          "%s from %d: layer %d's keys", name, from, l);
            ck_assert_msg(memcmp(whole.layers[l].resid2, edit.layers[l].resid2,
                                 n * (size_t)c->d_model * sizeof(float)) == 0,
                          "%s from %d: layer %d's output", name, from, l);
        }
        ck_assert(decoder_show_layer(&f.m, &whole, shown, &err) == ATTN_OK);
        ck_assert(decoder_show_layer(&f.m, &edit, shown, &err) == ATTN_OK);
        ck_assert(memcmp(whole.layers[shown].q_normed, edit.layers[shown].q_normed,
                         n * (size_t)decoder_q_width(c) * sizeof(float)) == 0);
        {
            float *a = shown_stage(c, &whole, whole.layers[shown].weights);
            float *b = shown_stage(c, &edit, edit.layers[shown].weights);
            ck_assert(memcmp(a, b, (size_t)c->n_head * n * n * sizeof(float)) == 0);
            free(a);
            free(b);
        }
        ck_assert(memcmp(whole.top_probs, edit.top_probs, n * (size_t)f.top * sizeof(float)) == 0);
        decoder_run_destroy(&whole);
        decoder_run_destroy(&part);
        decoder_run_destroy(&edit);
        parallel_set_threads(0);
    }
    fixture_close(&f);
}

START_TEST(an_edit_and_threads_change_no_bit)
{
    edit_case("qwen3", 6, 1);
}
END_TEST

/*
 * Under a sliding window likewise: rows attended one at a time (an
 * appended token, two), a block begun part way (from 50: keys from 30
 * where its block's first query sees them) and a block whose band starts
 * past key 0 (64 .. 79 read keys 45 ..), in the sliding layer shown.
 */
START_TEST(a_window_edited_changes_no_bit)
{
    edit_case("gemma3-long", 79, 0);
    edit_case("gemma3-long", 78, 0);
    edit_case("gemma3-long", 50, 0);
    edit_case("gemma3-window", 4, 1);
}
END_TEST

/* x's and y's forwards of f's tokens: every layer's output and the next tokens bit for bit. */
static void
same_forward(const struct fixture *f, const struct decoder_model *x, const struct decoder_model *y,
             const char *what)
{
    struct decoder_run a, b;
    struct attn_error err;
    const size_t tops = (size_t)f->n * (size_t)f->top;

    ck_assert(decoder_forward(x, f->ids, f->n, f->top, NULL, &a, &err) == ATTN_OK);
    ck_assert(decoder_forward(y, f->ids, f->n, f->top, NULL, &b, &err) == ATTN_OK);
    for (int l = 0; l < x->cfg.n_layer; l++)
        ck_assert_msg(memcmp(a.layers[l].resid2, b.layers[l].resid2,
                             (size_t)f->n * (size_t)x->cfg.d_model * sizeof(float)) == 0,
                      "%s: layer %d", what, l);
    ck_assert_msg(memcmp(a.top_probs, b.top_probs, tops * sizeof(float)) == 0, "%s", what);
    ck_assert_msg(memcmp(a.top_ids, b.top_ids, tops * sizeof(int)) == 0, "%s", what);
    decoder_run_destroy(&a);
    decoder_run_destroy(&b);
}

/*
 * Packing a layer at a time as the view does (decoder_pack_replacing): a
 * bfloat16 matrix whose pack fits its own memory is packed over it, the
 * others beside their copies, which are then given back; the same bits as
 * the unpacked model in every layer kept and in the next tokens, read from
 * the packs alone.  qwen2's and qwen3's matrices are 16, 24 or 32 wide:
 * some fill whole panels and some are padded, whatever the kernel.
 */
static void
pack_replacing_case(const char *name, bool tied, bool mapped)
{
    struct fixture f;
    struct decoder_model packed;
    struct attn_error err;
    const uint16_t *q16;

    fixture_open(&f, name);
    /* (ATTNSCOPE_MMAP=0: every tensor copied into the model's memory, as before mapping) */
    if (!mapped)
        setenv("ATTNSCOPE_MMAP", "0", 1);
    ck_assert(architecture_load(&packed, f.dir, &(struct arch_options){ NULL, 0, false }, &err) == ATTN_OK);
    unsetenv("ATTNSCOPE_MMAP");
    ck_assert_int_eq(packed.map_count, mapped ? 1 : 0);
    ck_assert_uint_eq(packed.weights_mapped > 0, mapped);
    /* (a bfloat16 file: its matrices kept so, then packed so) */
    ck_assert_ptr_nonnull(q16 = packed.blocks[0].q.w16);
    ck_assert_ptr_nonnull(packed.tok_embed16);
    ck_assert(decoder_pack_replacing(&packed));
    ck_assert(packed.blocks[0].q.packed.bf16 && packed.head_packed.bf16);
    ck_assert_ptr_null(packed.blocks[0].q.w16);
    ck_assert_ptr_null(packed.blocks[1].gate.w16);
    ck_assert_ptr_null(packed.lm_head16);
    if (tied)
        ck_assert_ptr_null(packed.tok_embed16); /* (the token rows are read from the head's pack) */
    else
        ck_assert_ptr_nonnull(packed.tok_embed16);
    /*
     * Over its copy exactly when its rows fill whole panels (the kernel's width: 4, 16 or 32);
     * a matrix read in place from the file is packed beside it, its pages given back.
     */
    for (int l = 0; l < packed.cfg.n_layer; l++)
        for (int i = 0; i < DECODER_BLOCK_LINEARS; i++) {
            const struct decoder_linear *d = decoder_block_linear(&packed.blocks[l], i);
            if (d->packed.data != NULL)
                ck_assert_msg(d->packed.in_place == (!mapped && d->out % d->packed.nr == 0),
                              "%s layer %d linear %d", name, l, i);
        }
    if (strcmp(name, "qwen3") == 0 && !mapped) /* (32 queries wide: whole panels on every kernel) */
        ck_assert(packed.blocks[0].q.packed.in_place && packed.blocks[0].q.packed.data == q16);
    same_forward(&f, &f.m, &packed, name);
    decoder_destroy(&packed);
    fixture_close(&f);
}

/*
 * A GGUF's quantized matrices kept as their blocks (what a model opens
 * with: about its file's size) and widened to float32 when read (widen):
 * the same bits in every layer and the next tokens, a single weight (the
 * cell panel's) the same, on one thread and two; and the kept model holds
 * about a third of the memory here (Q4_K to Q8_0 blocks against floats).
 */
START_TEST(quantized_blocks_kept_change_no_bit)
{
    struct fixture f;
    struct decoder_model wide;
    struct attn_error err;
    char path[4400];

    fixture_open(&f, "qwen3-q-gguf");
    snprintf(path, sizeof path, "%s/model.gguf", f.dir);
    ck_assert_msg(architecture_load(&wide, f.dir, &(struct arch_options){ path, 0, true }, &err) ==
                      ATTN_OK,
                  "%s", err.msg);
    ck_assert_ptr_nonnull(f.m.blocks[0].q.wq);
    ck_assert_ptr_null(f.m.blocks[0].q.w);
    ck_assert_ptr_null(wide.blocks[0].q.wq);
    ck_assert_ptr_nonnull(wide.blocks[0].q.w);
    ck_assert_msg(decoder_weights_bytes(&f.m) * 3 < decoder_weights_bytes(&wide), "%zu vs %zu",
                  decoder_weights_bytes(&f.m), decoder_weights_bytes(&wide));
    for (int l = 0; l < 2; l++)
        for (int i = 0; i < DECODER_BLOCK_LINEARS; i++) {
            const struct decoder_linear *k = decoder_block_linear(&f.m.blocks[l], i);
            const struct decoder_linear *w = decoder_block_linear(&wide.blocks[l], i);
            if (k->in == 0) /* (a part the model lacks: Gated DeltaNet's in attention layers) */
                continue;
            for (int c = 0; c < 5; c++) {
                const int in = (c * 97) % k->in, out = (c * 131 + l) % k->out;
                const float a = decoder_linear_at(k, in, out), b = decoder_linear_at(w, in, out);
                ck_assert_msg(memcmp(&a, &b, sizeof a) == 0, "layer %d linear %d (%d, %d)", l, i,
                              in, out);
            }
        }
    for (int threads = 1; threads <= 2; threads++) {
        parallel_set_threads(threads);
        same_forward(&f, &f.m, &wide, "qwen3-q-gguf");
    }
    parallel_set_threads(0);
    decoder_destroy(&wide);
    fixture_close(&f);
}
END_TEST

/*
 * A GGUF's quantized matrices packed in panels (linalg_pack_q: the view's
 * and writing's way, issue 49), a layer at a time and on a thread of its
 * own, each layer's blocks given back: the same bits as the blocks
 * widened as they are read, for the whole text (the tiles) and for one
 * token (the one-row kernel), on one thread and two; the packs hold about
 * what the blocks held.
 */
START_TEST(quantized_packs_change_no_bit)
{
    struct fixture f;
    struct decoder_model packed, meanwhile;
    struct decoder_packer *p;
    struct attn_error err;
    char path[4400];
    size_t before;

    fixture_open(&f, "qwen3-q-gguf");
    snprintf(path, sizeof path, "%s/model.gguf", f.dir);
    ck_assert(architecture_load(&packed, f.dir, &(struct arch_options){ path, 0, false }, &err) ==
              ATTN_OK);
    ck_assert(architecture_load(&meanwhile, f.dir, &(struct arch_options){ path, 0, false }, &err) ==
              ATTN_OK);
    /* the blocks the packs replace (the head tied: the embedding's) */
    before = (size_t)decoder_outputs(&packed.cfg) *
             decoder_quant_row_bytes(packed.lm_headq_type, packed.cfg.d_model);
    for (int l = 0; l < packed.cfg.n_layer; l++)
        for (int i = 0; i < DECODER_BLOCK_LINEARS; i++) {
            const struct decoder_linear *d = decoder_block_linear(&packed.blocks[l], i);
            if (d->wq != NULL)
                before += (size_t)d->out * decoder_quant_row_bytes(d->wq_type, d->in);
        }
    ck_assert(decoder_pack_replacing(&packed));
    for (int l = 0; l < packed.cfg.n_layer; l++)
        for (int i = 0; i < DECODER_BLOCK_LINEARS; i++) {
            const struct decoder_linear *d = decoder_block_linear(&packed.blocks[l], i);
            if (d->in == 0 || (i == 4 && !decoder_gated(&packed.cfg)))
                continue;
            ck_assert_msg(d->wq == NULL && d->packed.q != LINALG_QNONE, "layer %d linear %d", l, i);
        }
    /* (the panels' formats hold what the blocks held, a few percent more where a K-quant's
       packed 6-bit scales are unpacked to bytes; a small matrix's rows padded to 64) */
    ck_assert_msg(decoder_packed_bytes(&packed) <= before + before / 10, "%zu bytes, were %zu",
                  decoder_packed_bytes(&packed), before);
    ck_assert_ptr_nonnull(p = decoder_packer_start(&meanwhile));
    /* (the layers put in as they are packed, a forward between: part packed, part blocks) */
    do {
        (void)decoder_packer_adopt_ready(p, &meanwhile);
        same_forward(&f, &f.m, &meanwhile, "adopted a layer at a time");
    } while (!decoder_packer_done(p));
    ck_assert(decoder_packer_adopt(p, &meanwhile));
    for (int threads = 1; threads <= 2; threads++) {
        struct fixture one = f;
        parallel_set_threads(threads);
        same_forward(&f, &f.m, &packed, "packed");
        same_forward(&f, &f.m, &meanwhile, "packed meanwhile");
        one.n = 1; /* (a single token: the one-row kernel) */
        same_forward(&one, &f.m, &packed, "one token, packed");
    }
    parallel_set_threads(0);
    decoder_destroy(&packed);
    decoder_destroy(&meanwhile);
    fixture_close(&f);
}
END_TEST

/*
 * The opt-in int8 arithmetic (--arith int8): put in the matrices it reads
 * (qwen3-q-gguf's Q8_0, Q4_0, Q4_K and Q6_K), not the others (Q4_1, Q5_0,
 * Q5_1, Q2_K, Q3_K, Q5_K); the same bits from the blocks and from the
 * packs, on one thread and two, for the text and for one token; near the
 * exact forward but not it; and a model never asked for it stays exact.
 */
START_TEST(the_int8_arithmetic_is_the_same_whichever_serves)
{
    struct fixture f;
    struct decoder_model blocks, packed;
    struct decoder_run exact, int8;
    struct attn_error err;
    char path[4400];
    int of, put = 0, want = 0;

    fixture_open(&f, "qwen3-q-gguf");
    snprintf(path, sizeof path, "%s/model.gguf", f.dir);
    ck_assert(architecture_load(&blocks, f.dir, &(struct arch_options){ path, 0, false }, &err) ==
              ATTN_OK);
    ck_assert(architecture_load(&packed, f.dir, &(struct arch_options){ path, 0, false }, &err) ==
              ATTN_OK);
    for (int l = 0; l < blocks.cfg.n_layer; l++)
        for (int i = 0; i < DECODER_BLOCK_LINEARS; i++) {
            const struct decoder_linear *d = decoder_block_linear(&blocks.blocks[l], i);
            want += d->in > 0 && (d->wq_type == TENSOR_Q8_0 || d->wq_type == TENSOR_Q4_0 ||
                                  d->wq_type == TENSOR_Q4_K || d->wq_type == TENSOR_Q6_K);
        }
    want += blocks.lm_headq_type == TENSOR_Q8_0 || blocks.lm_headq_type == TENSOR_Q4_0 ||
            blocks.lm_headq_type == TENSOR_Q4_K || blocks.lm_headq_type == TENSOR_Q6_K;
    put = decoder_use_int8(&blocks, &of);
    ck_assert_int_eq(put, want);
    ck_assert_msg(put > 0 && put < of, "%d of %d", put, of);
    ck_assert_int_eq(decoder_use_int8(&packed, &of), want);
    ck_assert(decoder_pack_replacing(&packed));
    for (int threads = 1; threads <= 2; threads++) {
        struct fixture one = f;
        parallel_set_threads(threads);
        same_forward(&f, &blocks, &packed, "int8: blocks and packs");
        one.n = 1;
        same_forward(&one, &blocks, &packed, "int8: one token");
    }
    parallel_set_threads(0);
    ck_assert(decoder_forward(&f.m, f.ids, f.n, f.top, NULL, &exact, &err) == ATTN_OK);
    ck_assert(decoder_forward(&blocks, f.ids, f.n, f.top, NULL, &int8, &err) == ATTN_OK);
    {
        const size_t tops = (size_t)f.n * (size_t)f.top;
        float worst = 0.0f;
        for (size_t i = 0; i < tops; i++)
            worst = fmaxf(worst, fabsf(exact.top_probs[i] - int8.top_probs[i]));
        ck_assert_msg(worst > 0.0f && worst < 0.02f, "int8 %g from the exact", (double)worst);
    }
    /* (the model opened plainly: every matrix exact, check_case's numbers) */
    ck_assert(!f.m.head_int8);
    for (int l = 0; l < f.m.cfg.n_layer; l++)
        for (int i = 0; i < DECODER_BLOCK_LINEARS; i++)
            ck_assert(!decoder_block_linear(&f.m.blocks[l], i)->int8);
    decoder_run_destroy(&exact);
    decoder_run_destroy(&int8);
    decoder_destroy(&blocks);
    decoder_destroy(&packed);
    fixture_close(&f);
}
END_TEST

START_TEST(packing_in_place_changes_no_bit)
{
    for (int mapped = 0; mapped < 2; mapped++) {
        pack_replacing_case("qwen2", false, mapped);
        pack_replacing_case("qwen3", true, mapped);
    }
}
END_TEST

/*
 * Packing on a thread of its own while the model is used (the view's first
 * frame): a forward meanwhile, unpacked, and after the packs are put in
 * have the bits of the model read plainly; a packer stopped early leaves
 * the model as it was.
 */
START_TEST(packing_meanwhile_changes_no_bit)
{
    struct fixture f;
    struct decoder_model packed;
    struct attn_error err;
    struct decoder_packer *p;

    fixture_open(&f, "qwen3");
    ck_assert(architecture_load(&packed, f.dir, &(struct arch_options){ NULL, 0, false }, &err) == ATTN_OK);
    ck_assert_ptr_nonnull(p = decoder_packer_start(&packed));
    same_forward(&f, &f.m, &packed, "while packing");
    ck_assert(decoder_packer_adopt(p, &packed));
    ck_assert(packed.blocks[0].q.packed.bf16 && packed.head_packed.data != NULL);
    ck_assert_ptr_null(packed.blocks[0].q.w16);
    ck_assert_ptr_null(packed.lm_head16);
    same_forward(&f, &f.m, &packed, "packed meanwhile");
    decoder_destroy(&packed);
    ck_assert(architecture_load(&packed, f.dir, &(struct arch_options){ NULL, 0, false }, &err) == ATTN_OK);
    decoder_packer_cancel(decoder_packer_start(&packed));
    ck_assert_ptr_nonnull(packed.blocks[0].q.w16);
    ck_assert_ptr_null(packed.blocks[0].q.packed.data);
    same_forward(&f, &f.m, &packed, "a packer stopped");
    decoder_destroy(&packed);
    fixture_close(&f);
}
END_TEST

/*
 * A model read in place from its file (mapped), the file cut short under
 * it (a checkpoint saved over it): the next forward reads zeros where the
 * pages were, is refused naming the file (not killed by SIGBUS), and the
 * process goes on.  Pinned first (what the view does once it has packed),
 * the same truncation changes no bit.
 */
START_TEST(a_mapped_file_cut_short_is_refused_not_fatal)
{
    char cmd[9000], path[4200];
    struct fixture f;
    struct decoder_model m;
    struct decoder_run r, again;
    struct attn_error err;

    fixture_open(&f, "qwen3");
    for (int pinned = 0; pinned < 2; pinned++) {
        snprintf(cmd, sizeof cmd, "rm -rf '%s/copy' && cp -r '%s' '%s/copy'", dir, f.dir, dir);
        ck_assert_int_eq(system(cmd), 0);
        snprintf(path, sizeof path, "%s/copy", dir);
        ck_assert_msg(architecture_load(&m, path, &(struct arch_options){ NULL, 0, false }, &err) ==
                          ATTN_OK, "%s", err.msg);
        ck_assert_int_eq(m.map_count, 1);
        ck_assert_msg(decoder_forward(&m, f.ids, f.n, f.top, NULL, &r, &err) == ATTN_OK, "%s",
                      err.msg);
        if (pinned)
            decoder_pin_mapped(&m);
        snprintf(path, sizeof path, "%s/copy/model.safetensors", dir);
        ck_assert_int_eq(truncate(path, 100), 0);
        if (!pinned) {
            ck_assert_int_eq(decoder_forward(&m, f.ids, f.n, f.top, NULL, &again, &err), ATTN_EIO);
            ck_assert_msg(strstr(err.msg, path) != NULL && strstr(err.msg, "became shorter") != NULL,
                          "%s", err.msg);
            /* (it stays refused: the pages are gone) */
            ck_assert_int_eq(decoder_check_files(&m, &err), ATTN_EIO);
        } else {
            ck_assert_msg(decoder_forward(&m, f.ids, f.n, f.top, NULL, &again, &err) == ATTN_OK,
                          "%s", err.msg);
            ck_assert_int_eq(memcmp(r.final, again.final,
                                    (size_t)f.n * (size_t)m.cfg.d_model * sizeof(float)), 0);
            decoder_run_destroy(&again);
        }
        decoder_run_destroy(&r);
        decoder_destroy(&m);
    }
    fixture_close(&f);
}
END_TEST

/* A float32 copy of n bfloat16 patterns (freed by the caller). */
static float *
widened(const uint16_t *h, size_t n)
{
    float *f = malloc(n * sizeof *f);

    ck_assert_ptr_nonnull(f);
    for (size_t i = 0; i < n; i++) {
        const uint32_t bits = (uint32_t)h[i] << 16;
        memcpy(&f[i], &bits, sizeof f[i]);
    }
    return f;
}

/*
 * A bfloat16 model keeps its matrices bfloat16 (half the bytes of its
 * float32 copy) and its products widen them as they load them: every layer
 * and the next tokens have the bits of the same model with its matrices
 * converted to float32 first, packed or not.
 */
START_TEST(bf16_weights_kept_give_the_bits_of_converting_first)
{
    struct fixture f;
    struct decoder_model wide;
    float *owned[2 + 64 * DECODER_BLOCK_LINEARS];
    int count = 0;
    size_t values = 0;

    fixture_open(&f, "qwen3");
    wide = f.m;
    wide.weights_map = NULL; /* (the copy borrows f.m's memory, mappings and blocks) */
    wide.maps = NULL;
    wide.map_count = 0;
    wide.blocks = malloc((size_t)f.m.cfg.n_layer * sizeof *wide.blocks);
    ck_assert_ptr_nonnull(wide.blocks);
    ck_assert_int_le(f.m.cfg.n_layer, 64);
    memcpy(wide.blocks, f.m.blocks, (size_t)f.m.cfg.n_layer * sizeof *wide.blocks);
    ck_assert_ptr_nonnull(f.m.tok_embed16);
    ck_assert_ptr_null(f.m.tok_embed);
    values = (size_t)f.m.cfg.vocab_size * (size_t)f.m.cfg.d_model;
    wide.tok_embed = wide.lm_head = owned[count++] = widened(f.m.tok_embed16, values);
    wide.tok_embed16 = wide.lm_head16 = NULL;
    for (int l = 0; l < f.m.cfg.n_layer; l++)
        for (int i = 0; i < DECODER_BLOCK_LINEARS; i++) {
            struct decoder_linear *d = decoder_block_linear(&wide.blocks[l], i);
            if (d->in == 0) /* (a part the model lacks) */
                continue;
            ck_assert_ptr_null(d->w);
            ck_assert_ptr_nonnull(d->w16);
            d->w = owned[count++] = widened(d->w16, (size_t)d->out * (size_t)d->ld);
            d->w16 = NULL;
            values += (size_t)d->out * (size_t)d->in;
        }
    /* What was read is the matrices at two bytes each and the norms' floats (64-byte aligned). */
    ck_assert_uint_ge(f.m.weights_used + f.m.weights_mapped, values * 2);
    ck_assert_uint_lt(f.m.weights_used + f.m.weights_mapped, values * 2 + values / 8);
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) { /* packed: bfloat16 panels against float32 ones */
            ck_assert(decoder_pack(&f.m) && decoder_pack(&wide));
            ck_assert_uint_eq(decoder_packed_bytes(&f.m) * 2, decoder_packed_bytes(&wide));
        }
        same_forward(&f, &f.m, &wide, pass == 0 ? "bf16 kept" : "bf16 kept, packed");
    }
    /* The weights one at a time, as the cell panels read them, from either copy. */
    ck_assert(decoder_linear_at(&f.m.blocks[1].down, 3, 2) ==
              decoder_linear_at(&wide.blocks[1].down, 3, 2));
    {
        float r1[256], r2[256];
        ck_assert_int_le(f.m.cfg.d_model, 256);
        decoder_token_row(&f.m, 5, r1);
        decoder_token_row(&wide, 5, r2);
        ck_assert(memcmp(r1, r2, (size_t)f.m.cfg.d_model * sizeof(float)) == 0);
    }
    for (int l = 0; l < f.m.cfg.n_layer; l++)
        for (int i = 0; i < DECODER_BLOCK_LINEARS; i++)
            linalg_packed_destroy(&decoder_block_linear(&wide.blocks[l], i)->packed);
    linalg_packed_destroy(&wide.head_packed);
    for (int i = 0; i < count; i++)
        free(owned[i]);
    free(wide.blocks);
    fixture_close(&f);
}
END_TEST

/*
 * The logit lens reads every layer through the final norm and the head in
 * one product: its last layer is the forward's own next tokens at that
 * position, bit for bit, with the head kept bfloat16 unpacked and packed.
 */
START_TEST(the_lens_last_layer_is_the_next_tokens)
{
    struct fixture f;
    struct decoder_run r;
    struct attn_error err;
    int ids[64 * 8];
    float probs[64 * 8];

    fixture_open(&f, "llama3-scaled");
    ck_assert_int_le(f.m.cfg.n_layer * f.top, 64 * 8);
    for (int pass = 0; pass < 2; pass++) {
        const int last = f.m.cfg.n_layer - 1;
        if (pass == 1)
            ck_assert(decoder_pack(&f.m));
        ck_assert(decoder_forward(&f.m, f.ids, f.n, f.top, NULL, &r, &err) == ATTN_OK);
        for (int pos = 0; pos < f.n; pos += f.n - 1) {
            ck_assert(decoder_logit_lens(&f.m, &r, pos, f.top, ids, probs, &err) == ATTN_OK);
            ck_assert(memcmp(ids + (size_t)last * f.top, r.top_ids + (size_t)pos * f.top,
                             (size_t)f.top * sizeof(int)) == 0);
            ck_assert_msg(memcmp(probs + (size_t)last * f.top, r.top_probs + (size_t)pos * f.top,
                                 (size_t)f.top * sizeof(float)) == 0,
                          "pass %d, position %d", pass, pos);
        }
        decoder_run_destroy(&r);
    }
    fixture_close(&f);
}
END_TEST

/* config.json's audit: what attnscope does not compute is refused by name. */
static void
refused(const char *json, const char *says)
{
    const char *path = test_write_text(dir, "config.json", json);
    struct llama_config c;
    struct attn_error err;

    ck_assert_int_ne(llama_config_load(&c, path, &err), ATTN_OK);
    ck_assert_msg(strstr(err.msg, says) != NULL, "'%s' does not say '%s'", err.msg, says);
}

/* The same for Gemma 3's and Olmo 3's configs. */
static void
refused_window(const char *json, const char *says)
{
    const char *path = test_write_text(dir, "config.json", json);
    struct windowed_config c;
    struct attn_error err;

    ck_assert_int_ne(windowed_config_load(&c, path, &err), ATTN_OK);
    ck_assert_msg(strstr(err.msg, says) != NULL, "'%s' does not say '%s'", err.msg, says);
}

#define SIZES                                                                           \
    "\"hidden_size\": 16, \"intermediate_size\": 8, \"num_hidden_layers\": 1, "        \
    "\"num_attention_heads\": 4, \"num_key_value_heads\": 2, \"vocab_size\": 10, "      \
    "\"max_position_embeddings\": 32"

START_TEST(the_audit_refuses_by_name)
{
    refused("{\"model_type\": \"gemma3\", " SIZES "}",
            "model_type gemma3 is not supported yet; supported: gpt2, llama, qwen2, qwen3, "
            "gemma3_text, olmo3, gemma2");
    refused("{\"model_type\": \"llama\", " SIZES ", \"rope_scaling\": {\"rope_type\": \"dynamic\", "
            "\"factor\": 4}}",
            "rope_scaling\" of type dynamic is not supported yet; supported: default, llama3, "
            "linear, yarn");
    refused("{\"model_type\": \"qwen2\", " SIZES ", \"use_sliding_window\": true}",
            "use_sliding_window");
    /* (issue 60: a mixture of no experts was read for a dense MLP's tensors, and refused by them) */
    refused("{\"model_type\": \"qwen3_moe\", " SIZES ", \"num_experts\": 0, "
            "\"num_experts_per_tok\": 1, \"moe_intermediate_size\": 8}",
            "\"num_experts\" is 0: a mixture of experts needs 1 expert or more");
    refused("{\"model_type\": \"mixtral\", " SIZES ", \"num_local_experts\": 0, "
            "\"num_experts_per_tok\": 1}",
            "\"num_local_experts\" is 0: a mixture of experts needs 1 expert or more");
    refused_window("{\"model_type\": \"gpt_oss\", " SIZES ", \"num_local_experts\": 0, "
                   "\"num_experts_per_tok\": 1, \"sliding_window\": 4}",
                   "\"num_local_experts\" is 0: a mixture of experts needs 1 expert or more");
    refused("{\"model_type\": \"llama\", " SIZES ", \"hidden_act\": \"gelu\"}", "hidden_act");
    refused("{\"model_type\": \"llama\", " SIZES ", \"partial_rotary_factor\": 0.5}",
            "partial_rotary_factor");
    refused("{\"model_type\": \"qwen3\", " SIZES ", \"layer_types\": [\"sliding_attention\"]}",
            "layer_types");
    refused("{\"model_type\": \"llama\", \"hidden_size\": 16, \"intermediate_size\": 8, "
            "\"num_hidden_layers\": 1, \"num_attention_heads\": 4, \"num_key_value_heads\": 3, "
            "\"vocab_size\": 10, \"max_position_embeddings\": 32}",
            "not a multiple of num_key_value_heads 3");
    refused("{\"model_type\": \"llama\", " SIZES ", \"rope_scaling\": {\"rope_type\": \"llama3\"}}",
            "llama3 needs factor");
    /* transformers 5's spelling, rope_parameters: the same kinds refused (issue 35: silently
       read as plain RoPE), and a disagreement with rope_scaling refused. */
    refused("{\"model_type\": \"llama\", " SIZES ", \"rope_parameters\": {\"rope_type\": \"longrope\", "
            "\"factor\": 4, \"rope_theta\": 10000}}",
            "\"rope_parameters\" of type longrope is not supported yet");
    refused("{\"model_type\": \"qwen2\", " SIZES ", \"rope_parameters\": {\"rope_type\": \"linear\"}}",
            "\"rope_parameters\" of type linear has no factor");
    /* YaRN: its numbers read, or refused by name. */
    refused_window("{\"model_type\": \"olmo3\", " SIZES ", \"rope_scaling\": {\"rope_type\": \"yarn\", "
            "\"factor\": 8, \"original_max_position_embeddings\": 8}}",
            "factor 8, but max_position_embeddings 32 / original_max_position_embeddings 8 is 4");
    refused_window("{\"model_type\": \"olmo3\", " SIZES ", \"rope_scaling\": {\"rope_type\": \"yarn\", "
            "\"factor\": 4, \"mscale\": 1}}",
            "\"mscale\" is not supported yet");
    /* Gemma 3's and Olmo 3's keys. */
    refused_window("{\"model_type\": \"gemma3_text\", " SIZES ", \"use_bidirectional_attention\": true}",
            "use_bidirectional_attention");
    refused_window("{\"model_type\": \"gemma3_text\", " SIZES ", \"hidden_activation\": \"gelu\"}",
            "\"hidden_activation\" is gelu");
    refused_window("{\"model_type\": \"olmo3\", " SIZES ", \"hidden_act\": \"gelu\"}", "hidden_act");
    refused_window("{\"model_type\": \"olmo3\", " SIZES ", \"layer_types\": [\"full_attention\", "
            "\"sliding_attention\"]}",
            "\"layer_types\" is not a list of num_hidden_layers (1) kinds");
    refused_window("{\"model_type\": \"olmo3\", " SIZES ", \"layer_types\": [\"chunked_attention\"]}",
            "\"layer_types\"[0] is chunked_attention");
    refused_window("{\"model_type\": \"olmo3\", " SIZES ", \"layer_types\": [\"sliding_attention\"], "
            "\"sliding_window\": null}",
            "no \"sliding_window\" says how far they see");
    refused_window("{\"model_type\": \"gemma3_text\", " SIZES ", \"sliding_window\": 4, "
            "\"rope_parameters\": {\"sliding_attention\": {\"rope_type\": \"linear\", "
            "\"factor\": 2}}}",
            "\"rope_parameters.sliding_attention\" of type linear");
    refused_window("{\"model_type\": \"gemma3_text\", " SIZES ", \"sliding_window\": 4, "
            "\"rope_scaling\": {\"rope_type\": \"linear\", \"factor\": 2}, "
            "\"rope_parameters\": {\"full_attention\": {\"rope_type\": \"default\"}}}",
            "both \"rope_scaling\" and \"rope_parameters\" by kind");
    refused("{\"model_type\": \"llama\", " SIZES ", \"rope_parameters\": {\"rope_type\": 3}}",
            "of type (not a string) is not supported yet");
    refused("{\"model_type\": \"llama\", " SIZES ", \"rope_scaling\": {\"rope_type\": \"default\"}, "
            "\"rope_parameters\": {\"rope_type\": \"llama3\"}}",
            "\"rope_scaling\" (default) and \"rope_parameters\" (llama3) disagree");
    /* One RoPE reader for every architecture (issue 51): Gemma's refuses the same file the
       Llama reader refuses (it read linear x2 and said nothing). */
    refused_window("{\"model_type\": \"gemma3_text\", " SIZES ", \"sliding_window\": 4, "
                   "\"rope_scaling\": {\"rope_type\": \"linear\", \"factor\": 2}, "
                   "\"rope_parameters\": {\"rope_type\": \"yarn\", \"factor\": 2, "
                   "\"rope_theta\": 10000}}",
                   "\"rope_scaling\" (linear) and \"rope_parameters\" (yarn) disagree");
    /* ... and every refusal of the one reader holds for both families: a rope_scaling without
       a kind (the windowed reader took it as plain RoPE). */
    refused("{\"model_type\": \"llama\", " SIZES ", \"rope_scaling\": {\"factor\": 2}}",
            "\"rope_scaling\" has no \"rope_type\"");
    refused_window("{\"model_type\": \"olmo3\", " SIZES ", \"rope_scaling\": {\"factor\": 2}}",
                   "\"rope_scaling\" has no \"rope_type\"");
    /* rope_parameters by kind of layer read by the Llama family's reader too (the same code). */
    refused("{\"model_type\": \"llama\", " SIZES ", \"rope_parameters\": {\"full_attention\": "
            "{\"rope_type\": \"longrope\"}}}",
            "\"rope_parameters.full_attention\" of type longrope is not supported yet");
}
END_TEST

/* The architectures' defaults: Qwen3's head of 128, Qwen2's biases, Llama's tied flag. */
START_TEST(the_config_says_what_it_changes)
{
    const char *path;
    struct llama_config c;
    struct attn_error err;

    path = test_write_text(dir, "config.json",
                           "{\"architectures\": [\"Qwen3ForCausalLM\"], " SIZES
                           ", \"tie_word_embeddings\": true, \"rope_parameters\": "
                           "{\"rope_theta\": 1000000, \"rope_type\": \"default\"}}");
    ck_assert_int_eq(llama_config_load(&c, path, &err), ATTN_OK);
    ck_assert_str_eq(c.model_type, "qwen3");
    ck_assert_int_eq(c.dec.head_dim, 128);
    ck_assert(c.dec.qk_norm && c.dec.tied && !c.dec.bias.qkv);
    ck_assert(c.dec.rope_theta == 1e6);
    /* bos_token_id (what --bos puts first), when it is a token of the vocabulary. */
    path = test_write_text(dir, "config.json",
                           "{\"model_type\": \"llama\", " SIZES ", \"bos_token_id\": 7}");
    ck_assert_int_eq(llama_config_load(&c, path, &err), ATTN_OK);
    ck_assert_int_eq(c.bos_token, 7);
    path = test_write_text(dir, "config.json", "{\"model_type\": \"qwen2\", " SIZES "}");
    ck_assert_int_eq(llama_config_load(&c, path, &err), ATTN_OK);
    ck_assert(c.dec.bias.qkv && !c.dec.bias.o && !c.dec.qk_norm && !c.dec.tied);
    ck_assert_int_eq(c.bos_token, -1);
    ck_assert_int_eq(decoder_head_dim(&c.dec), 4);
    ck_assert_int_eq(decoder_kv_head_of(&c.dec, 3), 1);
    ck_assert(c.dec.rope_theta == 10000.0);
    /* A Llama 3.x config as transformers 5 saves it: the stretch read from rope_parameters. */
    path = test_write_text(dir, "config.json",
                           "{\"model_type\": \"llama\", " SIZES ", \"rope_parameters\": "
                           "{\"rope_type\": \"llama3\", \"rope_theta\": 500000.0, \"factor\": 32.0, "
                           "\"low_freq_factor\": 1.0, \"high_freq_factor\": 4.0, "
                           "\"original_max_position_embeddings\": 8192}}");
    ck_assert_int_eq(llama_config_load(&c, path, &err), ATTN_OK);
    ck_assert(c.dec.rope_scaling.llama3 && c.dec.rope_scaling.factor == 32.0);
    ck_assert_int_eq(c.dec.rope_scaling.original_max, 8192);
    ck_assert(c.dec.rope_theta == 500000.0);
}
END_TEST

/*
 * The book's Llama 3.2 file alone: its sizes come from the book's settings,
 * known for Llama 3.2 1B's and 3B's widths only; another width asks for
 * the config.json.
 */
START_TEST(the_books_llama_without_a_config_is_known_by_its_width)
{
    char from[4300], to[4300], cmd[9000];
    struct decoder_model m;
    struct attn_error err;

    snprintf(from, sizeof from, "%s/model.pth", test_path("tests/fixtures/decoders/llama-book"));
    snprintf(to, sizeof to, "%s/llama3.2-1B-instruct.pth", dir);
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", from, to);
    ck_assert_int_eq(system(cmd), 0);
    ck_assert_int_ne(architecture_load(&m, dir, &(struct arch_options){ to, 0, false }, &err), ATTN_OK);
    ck_assert_msg(strstr(err.msg, "not the book's Qwen3 or Llama 3.2 1B/3B (width 16)") &&
                      strstr(err.msg, "config.json"),
                  "%s", err.msg);
    {
        /* Its names alone say it is the book's Llama (no config.json to say so). */
        const struct architecture *a;
        ck_assert_int_eq(architecture_find(dir, to, &a, &err), 0);
        ck_assert_ptr_eq(a, &arch_llama);
    }
}
END_TEST

/*
 * A book's Qwen3 state dict of 2 layers whose sizes are C wide, q query
 * and k key rows of a head of hd (q_norm's length), written at path.
 */
static void
write_book_qwen3(const char *path, int C, int q, int k, int hd)
{
    enum { V = 12, F = 8, L = 2 };
    struct pth_tensor t[3 + 11 * L];
    static char names[11 * L][64];
    int n = 0;

    t[n++] = (struct pth_tensor){ "tok_emb.weight", 2, { V, C } };
    t[n++] = (struct pth_tensor){ "final_norm.scale", 1, { C } };
    t[n++] = (struct pth_tensor){ "out_head.weight", 2, { V, C } };
    for (int l = 0; l < L; l++) {
        static const char *const part[11] = {
            "norm1.scale", "att.W_query.weight", "att.W_key.weight", "att.W_value.weight",
            "att.out_proj.weight", "att.q_norm.scale", "att.k_norm.scale", "norm2.scale",
            "ff.fc1.weight", "ff.fc2.weight", "ff.fc3.weight",
        };
        const int64_t shapes[11][2] = { { C, 0 }, { q, C }, { k, C }, { k, C }, { C, q },
                                        { hd, 0 }, { hd, 0 }, { C, 0 }, { F, C }, { F, C },
                                        { C, F } };
        for (int p = 0; p < 11; p++) {
            char *name = names[l * 11 + p];
            snprintf(name, 64, "trf_blocks.%d.%s", l, part[p]);
            t[n++] = (struct pth_tensor){ name, shapes[p][1] > 0 ? 2 : 1,
                                          { shapes[p][0], shapes[p][1] } };
        }
    }
    ck_assert_int_eq(pth_write(path, t, n, 3), 0);
}

/*
 * The sizes a book's file gives by its shapes pass config.json's checks:
 * a head of at most DECODER_HEAD_DIM_MAX, even (RoPE turns pairs), at
 * least one query and one key head, the query heads sharing the key heads
 * evenly.  Each of these crashed or computed silently wrong (issue 35).
 */
START_TEST(a_books_shapes_are_checked_as_a_config_is)
{
    static const struct {
        int C, q, k, hd;
        const char *want;
    } bad[] = {
        { 16, 4096, 2048, 2048, "head size 2048" },   /* wrote past rope_freq[512] */
        { 16, 0, 8, 4, "0 query heads" },             /* SIGFPE and SIGSEGV in the view */
        { 16, 6, 6, 3, "head size 3" },               /* RoPE's last column zeroed */
        { 16, 12, 8, 4, "3 query heads do not share 2 key heads" },
        { 16, 8, 0, 4, "0 key heads" },
    };
    char path[4300];

    snprintf(path, sizeof path, "%s/qwen3.pth", dir);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct decoder_model m;
        struct attn_error err = { 0 };
        write_book_qwen3(path, bad[i].C, bad[i].q, bad[i].k, bad[i].hd);
        ck_assert_int_ne(architecture_load(&m, dir, &(struct arch_options){ path, 0, false }, &err), ATTN_OK);
        ck_assert_msg(strstr(err.msg, bad[i].want) != NULL && strstr(err.msg, "qwen3.pth"),
                      "case %zu: %s", i, err.msg);
    }
    /* The same writer's sound file loads: 2 query heads of 4 sharing 1 key head. */
    {
        struct decoder_model m;
        struct attn_error err = { 0 };
        write_book_qwen3(path, 16, 8, 4, 4);
        ck_assert_msg(architecture_load(&m, dir, &(struct arch_options){ path, 0, false }, &err) == ATTN_OK, "%s", err.msg);
        ck_assert_int_eq(m.cfg.n_head, 2);
        ck_assert_int_eq(m.cfg.n_kv_head, 1);
        ck_assert_int_eq(m.cfg.head_dim, 4);
        decoder_destroy(&m);
    }
}
END_TEST

/*
 * A model larger than the machine's memory is refused before a byte of its
 * weights is read, naming both numbers, and its bfloat16 matrices are
 * counted as the two bytes each they are held in (issue 35: a sparse 28
 * GiB bfloat16 Llama was read until the kernel killed attnscope, and a
 * 3.74 GiB one was reserved as 7,656 MiB of float32).  The folder is
 * sparse: 368 GiB that take no disk.
 */
START_TEST(a_model_larger_than_memory_is_refused_before_reading)
{
    const struct llama_shape huge = { "huge", "llama", 65536, 65536, 2, 512, 512, 128, 1 << 20,
                                      4096, 10000.0, 1e-5, 0, 0, 0, 0, 0, 0 };
    struct llama_tensor *t = malloc(64 * sizeof *t);
    const size_t count = llama_tensors(&huge, t);
    char folder[3000], want[64];
    struct decoder_model m;
    struct attn_error err = { 0 };
    size_t held = 0;

    for (size_t i = 0; i < count; i++) {
        const size_t bytes = t[i].d1 ? t[i].d0 * t[i].d1 * 2 : t[i].d0 * 4;
        held += (bytes + 63) / 64 * 64;
    }
    free(t);
    snprintf(folder, sizeof folder, "%s/huge", dir);
    ck_assert_int_eq(llama_folder_write(folder, &huge, 0.0f, 1, 1), 0);
    ck_assert_int_ne(architecture_load(&m, folder, &(struct arch_options){ NULL, 0, false }, &err), ATTN_OK);
    snprintf(want, sizeof want, "its weights take %zu MiB in memory", held >> 20);
    ck_assert_msg(strstr(err.msg, want) && strstr(err.msg, "MiB available (of ") &&
                      strstr(err.msg, "huge/model.safetensors"),
                  "%s (want: %s)", err.msg, want);
}
END_TEST

/*
 * A GGUF's numbers are checked as config.json's are (issue 48): a head
 * count of 0 or one that does not divide (llama.cpp's GPT-2 and Gemma 3
 * files divided by it before any check: SIGFPE), a RoPE base, an epsilon,
 * a stretch, a window or a cap out of its range, NaN or infinite, a
 * factor of rope_freqs.weight that is 0 or NaN: each refused naming the
 * file, the key and the value, never opened to compute nonsense.
 */
START_TEST(a_gguf_number_is_checked_as_a_config_is)
{
    const struct {
        const char *fixture, *key;
        struct ge_value v;
        const char *says;
    } cases[] = {
#define LL "tests/fixtures/decoders/llama3-gguf"
#define GE "tests/fixtures/decoders/gemma3-gguf"
#define G2 "tests/fixtures/formats/gguf"
#define OS "tests/fixtures/decoders/gpt-oss-gguf"
#define QM "tests/fixtures/decoders/qwen3-moe-gguf"
        { LL, "llama.attention.head_count", ge_u32(0),
          "llama.attention.head_count is 0, not a count from 1 to 2^30" },
        { G2, "gpt2.attention.head_count", ge_u32(0),
          "gpt2.attention.head_count is 0, not a count from 1" },
        { GE, "gemma3.attention.head_count", ge_u32(0),
          "gemma3.attention.head_count is 0, not a count from 1" },
        { G2, "gpt2.attention.head_count", ge_u32(3),
          "gpt2.embedding_length 16 is not a multiple of gpt2.attention.head_count 3" },
        { LL, "llama.attention.head_count_kv", ge_u32(3),
          "llama.attention.head_count 2 is not a multiple of llama.attention.head_count_kv 3" },
        { LL, "llama.attention.head_count_kv", ge_u32(0),
          "llama.attention.head_count_kv is 0" },
        { LL, "llama.rope.freq_base", ge_f32(0.0f),
          "llama.rope.freq_base is 0, not a number from 1 to 1e+12" },
        { LL, "llama.rope.freq_base", ge_i32(-1),
          "llama.rope.freq_base is -1, not a number" },
        { LL, "llama.rope.freq_base", ge_f32(NAN),
          "llama.rope.freq_base is nan, not a number" },
        { LL, "llama.rope.freq_base", ge_f32(INFINITY),
          "llama.rope.freq_base is inf, not a number" },
        { LL, "llama.attention.layer_norm_rms_epsilon", ge_f32(NAN),
          "llama.attention.layer_norm_rms_epsilon is nan" },
        { LL, "llama.attention.layer_norm_rms_epsilon", ge_f32(-1e-4f),
          "llama.attention.layer_norm_rms_epsilon is -0.0001" },
        { G2, "gpt2.attention.layer_norm_epsilon", ge_f32(0.0f),
          "gpt2.attention.layer_norm_epsilon is 0, not a number from 1e-30 to 1" },
        { LL, "llama.rope.freq_base", ge_string("ten"), "llama.rope.freq_base is not a number" },
        { GE, "gemma3.rope.scaling.factor", ge_f32(INFINITY),
          "gemma3.rope.scaling.factor is inf, not a number from 1e-06 to 1e+06" },
        { GE, "gemma3.rope.freq_base_swa", ge_f32(0.0f),
          "gemma3.rope.freq_base_swa is 0" },
        { GE, "gemma3.rope.freq_base_swa", ge_f32(NAN),
          "gemma3.rope.freq_base_swa is nan" },
        { GE, "gemma3.attention.sliding_window", ge_u32(0),
          "gemma3.attention.sliding_window is 0, not a count from 1" },
        { GE, "gemma3.attention.sliding_window", ge_i32(-2),
          "gemma3.attention.sliding_window is -2, not a count from 1" },
        { GE, "gemma3.attention.sliding_window", ge_f32(3.0f),
          "gemma3.attention.sliding_window is not a whole number" },
        { GE, "gemma3.final_logit_softcapping", ge_f32(NAN),
          "gemma3.final_logit_softcapping is nan, not a number from 0 to 1e+12" },
        { OS, "gpt-oss.rope.scaling.factor", ge_f32(0.5f),
          "gpt-oss.rope.scaling.factor is 0.5, not a number from 1 to 1e+06" },
        { OS, "gpt-oss.rope.scaling.original_context_length", ge_removed(),
          "a yarn rope.scaling.type without gpt-oss.rope.scaling.factor and "
          ".original_context_length" },
        { OS, "gpt-oss.rope.scaling.type", ge_string("longrope"),
          "gpt-oss.rope.scaling.type is 'longrope'" },
        { OS, "gpt-oss.attention.sliding_window", ge_removed(), "gpt-oss.attention.sliding_window" },
        /* (issue 60: a count of 0 named a tensor the file never had; a Llama with experts, the key
           that made it Mixtral) */
        { QM, "qwen3moe.expert_count", ge_u32(0), "qwen3moe.expert_count is 0, not a count from 1" },
        { OS, "gpt-oss.expert_count", ge_u32(0), "gpt-oss.expert_count is 0, not a count from 1" },
        { LL, "llama.expert_count", ge_u32(4),
          "llama.expert_count is 4, which makes a llama file Mixtral's, but it has no Mixtral's tensors (no blk.0.ffn_gate_inp.weight)" },
#undef QM
#undef OS
#undef LL
#undef GE
#undef G2
    };
    char edited[3000], path[4200];
    struct decoder_model m;
    struct attn_error err;

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(edited, sizeof edited, "%s/case%zu.gguf", dir, i);
        snprintf(path, sizeof path, "%s/model.gguf", test_path(cases[i].fixture));
        if (strstr(cases[i].key, "scaling.factor") != NULL) {
            /* a linear stretch, as Gemma 3 4B's, whose factor is bad */
            char step[3000];
            snprintf(step, sizeof step, "%s/linear.gguf", dir);
            gguf_edit(path, step, "gemma3.rope.scaling.type", ge_string("linear"));
            snprintf(path, sizeof path, "%s", step);
        }
        gguf_edit(path, edited, cases[i].key, cases[i].v);
        memset(&err, 0, sizeof err);
        ck_assert_msg(architecture_load(&m, dir, &(struct arch_options){ edited, 0, false }, &err) !=
                          ATTN_OK,
                      "%s = case %zu opened", cases[i].key, i);
        ck_assert_msg(strstr(err.msg, cases[i].says) != NULL && strstr(err.msg, edited) != NULL,
                      "case %zu: '%s' does not say '%s' and name the file", i, err.msg,
                      cases[i].says);
    }
    /* Llama 3's stretch kept as factors: one of them 0, then NaN. */
    for (int k = 0; k < 2; k++) {
        snprintf(edited, sizeof edited, "%s/factors%d.gguf", dir, k);
        snprintf(path, sizeof path, "%s/model.gguf", test_path("tests/fixtures/decoders/llama3-gguf"));
        gguf_edit(path, edited, "general.name", ge_string("edited"));
        gguf_edit_f32(edited, "rope_freqs.weight", 3, k == 0 ? 0.0f : NAN);
        ck_assert_int_ne(architecture_load(&m, dir, &(struct arch_options){ edited, 0, false }, &err),
                         ATTN_OK);
        ck_assert_msg(strstr(err.msg, k == 0 ? "rope_freqs.weight's factor 3 is 0"
                                             : "rope_freqs.weight's factor 3 is nan") != NULL,
                      "%s", err.msg);
    }
    /* A gpt-oss GGUF naming no stretch turns without one (a config's default YaRN is not a GGUF's). */
    snprintf(edited, sizeof edited, "%s/plain-rope.gguf", dir);
    snprintf(path, sizeof path, "%s/model.gguf", test_path("tests/fixtures/decoders/gpt-oss-gguf"));
    gguf_edit(path, edited, "gpt-oss.rope.scaling.type", ge_removed());
    ck_assert_msg(architecture_load(&m, dir, &(struct arch_options){ edited, 0, false }, &err) ==
                      ATTN_OK,
                  "%s", err.msg);
    ck_assert(!m.cfg.rope_scaling.yarn && m.cfg.sinks && m.cfg.sliding_rope_full);
    decoder_destroy(&m);
    /* The file unedited opens: the checks refuse only what is wrong. */
    snprintf(edited, sizeof edited, "%s/plain.gguf", dir);
    snprintf(path, sizeof path, "%s/model.gguf", test_path("tests/fixtures/decoders/gemma3-gguf"));
    gguf_edit(path, edited, "general.name", ge_string("edited"));
    ck_assert_msg(architecture_load(&m, dir, &(struct arch_options){ edited, 0, false }, &err) ==
                      ATTN_OK,
                  "%s", err.msg);
    decoder_destroy(&m);
}
END_TEST

static Suite *
llama_suite(void)
{
    Suite *s = suite_create("architectures");
    TCase *t = tcase_create("core");

    tcase_set_timeout(t, 120);
    tcase_add_test(t, llama_with_grouped_keys);
    tcase_add_test(t, qwen3_moe_routes_each_token_to_its_experts);
    tcase_add_test(t, olmoe_and_mixtral_route_as_their_blocks_do);
    tcase_add_test(t, mixtures_open_from_gguf);
    tcase_add_test(t, packed_experts_give_the_same_bits);
    tcase_add_test(t, gpt_oss_sinks_and_clamped_experts);
    tcase_add_test(t, llama3_stretch_and_biases_over_80_tokens);
    tcase_add_test(t, qwen2);
    tcase_add_test(t, qwen3_qk_norm_and_wide_heads);
    tcase_add_test(t, qwen3_under_the_books_names);
    tcase_add_test(t, llama32_under_the_books_names);
    tcase_add_test(t, gemma3_sliding_windows);
    tcase_add_test(t, gemma3_a_window_across_blocks);
    tcase_add_test(t, gemma3_a_pattern_and_capped_logits);
    tcase_add_test(t, olmo3_post_norm_and_yarn);
    tcase_add_test(t, olmo3_rope_parameters_by_kind);
    tcase_add_test(t, gemma3_from_a_gguf_file);
    tcase_add_test(t, gemma2_capped_scores);
    tcase_add_test(t, gguf_files_as_llama_cpp_writes_them);
    tcase_add_test(t, a_quantized_gguf_agrees_with_its_dequantized_weights);
    tcase_add_test(t, quantized_blocks_kept_change_no_bit);
    tcase_add_test(t, quantized_packs_change_no_bit);
    tcase_add_test(t, the_int8_arithmetic_is_the_same_whichever_serves);
    tcase_add_test(t, an_edit_and_threads_change_no_bit);
    tcase_add_test(t, a_window_edited_changes_no_bit);
    tcase_add_test(t, packing_in_place_changes_no_bit);
    tcase_add_test(t, packing_meanwhile_changes_no_bit);
    tcase_add_test(t, bf16_weights_kept_give_the_bits_of_converting_first);
    tcase_add_test(t, the_lens_last_layer_is_the_next_tokens);
    suite_add_tcase(s, t);
    t = tcase_create("config");
    /* (a hang guard, not a timing: CK_TIMEOUT_MULTIPLIER scales it under the sanitizers) */
    tcase_set_timeout(t, 60);
    tcase_add_checked_fixture(t, test_tmpdir_setup, test_tmpdir_teardown);
    tcase_add_test(t, the_audit_refuses_by_name);
    tcase_add_test(t, a_gguf_number_is_checked_as_a_config_is);
    tcase_add_test(t, the_config_says_what_it_changes);
    tcase_add_test(t, the_books_llama_without_a_config_is_known_by_its_width);
    tcase_add_test(t, a_books_shapes_are_checked_as_a_config_is);
    tcase_add_test(t, a_model_larger_than_memory_is_refused_before_reading);
    tcase_add_test(t, a_mapped_file_cut_short_is_refused_not_fatal);
    suite_add_tcase(s, t);
    return s;
}

TEST_MAIN(llama_suite)
