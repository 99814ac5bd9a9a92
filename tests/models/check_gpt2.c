/*
 * check_gpt2.c: GPT-2 from its files (src/core/architectures/gpt2.c and architecture.c, the
 * decoder's forward).
 *
 * tests/fixtures/gpt2/ holds tiny models and what a float32 PyTorch forward
 * of them computes (tests/oracle/gpt2_fixtures.py wrote both, with Debian's
 * python3-torch): several shapes, F32, F16 and BF16, Hugging Face's names
 * with and without the `transformer.` prefix, a saved lm_head, and the
 * book's GPTModel names.  Every layer's attention weights must agree to
 * 1e-5, hidden states, ln_f's output and the next-token probabilities to
 * 1e-5 relative, and the top next tokens must be the same.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>

#include <unistd.h>

#include "attnscope/base/progress.h"
#include "attnscope/architectures/gpt2.h"
#include "attnscope/kernels/linalg.h"
#include "attnscope/formats/safetensors.h"
#include "expected.h"
#include "gpt2_random.h"
#include "shown_stage.h"
#include "testutil.h"

static void
check_case(const char *name)
{
    char dirpath[4096];
    char path[4300];
    struct decoder_model m;
    struct decoder_run r;
    struct attn_error err;
    struct expected e;
    const char *at;
    int ids[64];
    int n;
    int top;

    snprintf(dirpath, sizeof dirpath, "%s", test_path("tests/fixtures/gpt2"));
    snprintf(path, sizeof path, "%s/%s/expected.txt", dirpath, name);
    expected_load(&e, path);
    snprintf(path, sizeof path, "%s/%s", dirpath, name);
    ck_assert_msg(architecture_load(&m, path, NULL, &err) == ATTN_OK, "%s: %s", name, err.msg);
    at = line_of(e.text, "ids", -1);
    n = (int)next_number(&at);
    for (int i = 0; i < n; i++)
        ids[i] = (int)next_number(&at);
    at = line_of(e.text, "top", -1);
    top = (int)next_number(&at);
    ck_assert_msg(decoder_forward(&m, ids, n, top, NULL, &r, &err) == ATTN_OK, "%s", err.msg);
    for (int l = 0; l < m.cfg.n_layer; l++) {
        char what[64];
        at = line_of(e.text, "weights", l);
        ck_assert_int_eq((int)next_number(&at), m.cfg.n_head);
        snprintf(what, sizeof what, "%s weights layer %d", name, l);
        ck_assert_msg(decoder_show_layer(&m, &r, l, &err) == ATTN_OK, "%s",
                      err.msg);
        {
            float *w = shown_stage(&m.cfg, &r, r.layers[l].weights);
            compare(what, w, at, (size_t)m.cfg.n_head * n * n, 1e-5);
            free(w);
        }
        snprintf(what, sizeof what, "%s resid2 layer %d", name, l);
        compare(what, r.layers[l].resid2, line_of(e.text, "resid2", l), (size_t)n * m.cfg.d_model, 1e-5);
    }
    compare("final", r.final, line_of(e.text, "final", -1), (size_t)n * m.cfg.d_model, 1e-5);
    at = line_of(e.text, "top", -1);
    next_number(&at);
    for (int i = 0; i < n * top; i++)
        ck_assert_msg(r.top_ids[i] == (int)next_number(&at), "%s: top token %d differs", name, i);
    compare("next-token probabilities", r.top_probs, at, (size_t)n * top, 1e-5);
    decoder_run_destroy(&r);
    decoder_destroy(&m);
    free(e.text);
}

/*
 * GPT-2's q, k and v are columns of one tensor (c_attn): packing a layer at
 * a time and giving each layer's f32 pages back once all three are packed
 * (decoder_pack_replacing) leaves every layer's output and the next tokens
 * bit for bit those of the f32 weights.
 */
START_TEST(packing_in_place_keeps_c_attn_whole)
{
    struct decoder_model plain, packed;
    struct decoder_run a, b;
    struct attn_error err;
    const int ids[] = { 3, 17, 5, 5, 0, 21, 9 };
    const int n = 7;
    char folder[4096];

    snprintf(folder, sizeof folder, "%s", test_path("tests/fixtures/gpt2/hf-prefix-f16"));
    ck_assert(architecture_load(&plain, folder, NULL, &err) == ATTN_OK);
    ck_assert(architecture_load(&packed, folder, NULL, &err) == ATTN_OK);
    ck_assert(decoder_pack_replacing(&packed));
    ck_assert_ptr_null(packed.blocks[1].k.w);
    ck_assert(decoder_forward(&plain, ids, n, 3, NULL, &a, &err) == ATTN_OK);
    ck_assert(decoder_forward(&packed, ids, n, 3, NULL, &b, &err) == ATTN_OK);
    for (int l = 0; l < plain.cfg.n_layer; l++)
        ck_assert(memcmp(a.layers[l].resid2, b.layers[l].resid2,
                         (size_t)n * (size_t)plain.cfg.d_model * sizeof(float)) == 0);
    ck_assert(memcmp(a.top_probs, b.top_probs, (size_t)n * 3 * sizeof(float)) == 0);
    decoder_run_destroy(&a);
    decoder_run_destroy(&b);
    decoder_destroy(&plain);
    decoder_destroy(&packed);
}
END_TEST

START_TEST(agrees_with_pytorch)
{
    check_case("hf-f32");
    check_case("hf-prefix-f16");
    check_case("hf-bf16-head");
    check_case("book-f32");
    check_case("hf-vocab-f16");
}
END_TEST

/*
 * Threads split the columns of every product; each element is computed the
 * same way whichever thread does it, so 1, 2, 3 and 7 threads give the same
 * bits in every stage (a model large enough that the products are split,
 * at column boundaries that are not the kernels' block widths).
 */
/*
 * A destroyed run's memory is reused by the next (decoder.c's spare): the
 * spare is filled with NaN bytes first, and the run made in it must be
 * bit for bit the run made in fresh memory, every stage of every layer.
 */
START_TEST(a_reused_arena_changes_no_bit)
{
    const int C = 96;
    const int n = 29;
    const struct decoder_config cfg = {
        .n_layer = 3, .n_head = 4, .d_model = C, .n_ctx = 64, .vocab_size = 701,
        .d_mlp = 4 * C, .eps = 1e-5f, .scale_attn_weights = true, .scale_by_layer = false,
        .tied = true,
    };
    struct decoder_model m;
    struct decoder_run fresh, other, reused;
    struct attn_error err;
    int ids[29], ids2[29];
    void *other_map;

    gpt2_random_model(&m, &cfg, 0.2f, 11);
    for (int i = 0; i < n; i++) {
        ids[i] = (i * 613) % 701;
        ids2[i] = (i * 37 + 5) % 701;
    }
    decoder_release_spare();
    ck_assert_msg(decoder_forward(&m, ids, n, 5, NULL, &fresh, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_msg(decoder_forward(&m, ids2, n, 5, NULL, &other, &err) == ATTN_OK, "%s", err.msg);
    other_map = other.arena_map;
    memset(other.arena_map, 0xff, other.arena_map_bytes); /* NaN everywhere */
    decoder_run_destroy(&other);
    ck_assert_msg(decoder_forward(&m, ids, n, 5, NULL, &reused, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_ptr_eq(reused.arena_map, other_map); /* the spare was taken */
    ck_assert(memcmp(fresh.embed, reused.embed, (size_t)n * C * sizeof(float)) == 0);
    for (int l = 0; l < cfg.n_layer; l++) {
        const struct decoder_layer_stages *a = &fresh.layers[l], *b = &reused.layers[l];
        const size_t nc = (size_t)n * C * sizeof(float), nn = (size_t)4 * n * n * sizeof(float);
        ck_assert(decoder_show_layer(&m, &fresh, l, &err) == ATTN_OK);
        ck_assert(decoder_show_layer(&m, &reused, l, &err) == ATTN_OK);
        const size_t nf = (size_t)n * 4 * C * sizeof(float);
        ck_assert(memcmp(a->norm1, b->norm1, nc) == 0 && memcmp(a->q, b->q, nc) == 0 &&
                  memcmp(a->k, b->k, nc) == 0 && memcmp(a->v, b->v, nc) == 0);
        {
            float *sa = shown_stage(&cfg, &fresh, a->scores), *sb = shown_stage(&cfg, &reused, b->scores);
            float *wa = shown_stage(&cfg, &fresh, a->weights), *wb = shown_stage(&cfg, &reused, b->weights);
            ck_assert_msg(memcmp(sa, sb, nn) == 0, "scores of layer %d", l);
            ck_assert_msg(memcmp(wa, wb, nn) == 0, "weights of layer %d", l);
            free(sa), free(sb), free(wa), free(wb);
        }
        ck_assert(memcmp(a->context, b->context, nc) == 0 && memcmp(a->attn, b->attn, nc) == 0 &&
                  memcmp(a->resid1, b->resid1, nc) == 0 && memcmp(a->norm2, b->norm2, nc) == 0);
        ck_assert(memcmp(a->up, b->up, nf) == 0 && memcmp(a->act, b->act, nf) == 0);
        ck_assert(memcmp(a->mlp, b->mlp, nc) == 0 && memcmp(a->resid2, b->resid2, nc) == 0);
    }
    ck_assert(memcmp(fresh.final, reused.final, (size_t)n * C * sizeof(float)) == 0);
    ck_assert(memcmp(fresh.top_ids, reused.top_ids, (size_t)n * 5 * sizeof(int)) == 0);
    ck_assert(memcmp(fresh.top_probs, reused.top_probs, (size_t)n * 5 * sizeof(float)) == 0);
    decoder_run_destroy(&reused);
    /* The weights packed once (decoder_pack, as the view does): the same bits again. */
    ck_assert(decoder_pack(&m));
    ck_assert_ptr_nonnull(m.blocks[0].up.packed.data);
    ck_assert_ptr_nonnull(m.head_packed.data);
    for (int threads = 1; threads <= 3; threads += 2) {
        char value[8];
        snprintf(value, sizeof value, "%d", threads);
        setenv("ATTNSCOPE_THREADS", value, 1);
        ck_assert_msg(decoder_forward(&m, ids, n, 5, NULL, &reused, &err) == ATTN_OK, "%s",
                      err.msg);
        for (int l = 0; l < cfg.n_layer; l++) {
            const struct decoder_layer_stages *a = &fresh.layers[l], *b = &reused.layers[l];
            const size_t nc = (size_t)n * C * sizeof(float);
            const size_t nf = (size_t)n * 4 * C * sizeof(float);
            ck_assert(decoder_show_layer(&m, &fresh, l, &err) == ATTN_OK);
            ck_assert(decoder_show_layer(&m, &reused, l, &err) == ATTN_OK);
            ck_assert_msg(memcmp(a->q, b->q, nc) == 0 && memcmp(a->v, b->v, nc) == 0 &&
                              memcmp(a->attn, b->attn, nc) == 0 && memcmp(a->up, b->up, nf) == 0 &&
                              memcmp(a->mlp, b->mlp, nc) == 0 &&
                              memcmp(a->resid2, b->resid2, nc) == 0,
                          "packed weights, %d threads: layer %d differs", threads, l);
        }
        ck_assert(memcmp(fresh.top_ids, reused.top_ids, (size_t)n * 5 * sizeof(int)) == 0);
        ck_assert(memcmp(fresh.top_probs, reused.top_probs, (size_t)n * 5 * sizeof(float)) == 0);
        decoder_run_destroy(&reused);
    }
    unsetenv("ATTNSCOPE_THREADS");
    decoder_run_destroy(&fresh);
    decoder_release_spare();
    gpt2_random_free(&m);
}
END_TEST

/* Whether the shown layer's (H, n, n) stage x of a and y of b hold the same bits. */
static bool
same_stage(const struct decoder_config *c, const struct decoder_run *a, const float *x,
           const struct decoder_run *b, const float *y)
{
    float *xs = shown_stage(c, a, x), *ys = shown_stage(c, b, y);
    const bool same =
        memcmp(xs, ys, (size_t)c->n_head * (size_t)a->n * (size_t)a->n * sizeof *xs) == 0;

    free(xs);
    free(ys);
    return same;
}

/*
 * Whether every stage of every layer of a and b is the same, bit for bit,
 * the scores and weights made for each layer in turn.
 */
static bool
same_runs(const struct decoder_model *m, struct decoder_run *a, struct decoder_run *b, char *why,
          size_t size)
{
    const struct decoder_config *c = &m->cfg;
    const size_t n = (size_t)a->n, C = (size_t)c->d_model, F = (size_t)c->d_mlp;
    const size_t nc = n * C * sizeof(float), nf = n * F * sizeof(float);

    if (a->n != b->n || a->top != b->top)
        return snprintf(why, size, "sizes differ"), false;
    if (memcmp(a->tok, b->tok, nc) || memcmp(a->pos, b->pos, nc) || memcmp(a->embed, b->embed, nc))
        return snprintf(why, size, "embeddings differ"), false;
    /* b's shown layer first, as b kept it (showing another makes that one again). */
    for (int i = 0; i < c->n_layer; i++) {
        const int l = (b->shown + i) % c->n_layer;
        const struct decoder_layer_stages *x = &a->layers[l], *y = &b->layers[l];
        if (decoder_show_layer(m, a, l, NULL) != ATTN_OK ||
            decoder_show_layer(m, b, l, NULL) != ATTN_OK)
            return snprintf(why, size, "layer %d: no memory for the weights", l), false;
        {
            const float *xs[] = { x->norm1, x->q, x->k, x->v, x->context, x->attn, x->resid1,
                                  x->norm2, x->mlp, x->resid2 };
            const float *ys[] = { y->norm1, y->q, y->k, y->v, y->context, y->attn, y->resid1,
                                  y->norm2, y->mlp, y->resid2 };
            for (size_t e = 0; e < sizeof xs / sizeof xs[0]; e++)
                if (memcmp(xs[e], ys[e], nc) != 0)
                    return snprintf(why, size, "layer %d, stage %zu differs", l, e), false;
        }
        if (memcmp(x->up, y->up, nf) || memcmp(x->act, y->act, nf))
            return snprintf(why, size, "layer %d: the MLP differs", l), false;
        if (!same_stage(c, a, x->scores, b, y->scores))
            return snprintf(why, size, "layer %d: scores differ", l), false;
        if (!same_stage(c, a, x->masked, b, y->masked) || !same_stage(c, a, x->scaled, b, y->scaled))
            return snprintf(why, size, "layer %d: masked or scaled scores differ", l), false;
        if (!same_stage(c, a, x->weights, b, y->weights))
            return snprintf(why, size, "layer %d: weights differ", l), false;
    }
    if (memcmp(a->final, b->final, nc))
        return snprintf(why, size, "final differs"), false;
    if (memcmp(a->top_ids, b->top_ids, n * (size_t)a->top * sizeof(int)) ||
        memcmp(a->top_probs, b->top_probs, n * (size_t)a->top * sizeof(float)))
        return snprintf(why, size, "next tokens differ"), false;
    return true;
}

/*
 * An edit recomputes only the rows from its first changed token
 * (decoder_forward_from): after random edits (appending, changing a token
 * anywhere, the first included, cutting the end, nothing), with the
 * weights packed or not, ablated heads, the mask off, every stage of every
 * layer is bit for bit what a whole forward gives.  The edits follow each
 * other as in the view (each run the next edit's prev), so most are made in
 * the previous run's memory, and some outgrow it.
 */
START_TEST(an_edit_recomputes_only_what_changed)
{
    const int C = 64;
    const struct decoder_config cfg = {
        .n_layer = 3, .n_head = 4, .d_model = C, .n_ctx = 200, .vocab_size = 509,
        .d_mlp = 4 * C, .eps = 1e-5f, .scale_attn_weights = true, .scale_by_layer = true,
        .tied = true,
    };
    struct decoder_model m;
    struct attn_error err;
    unsigned seed = 99;
    int ids[200], next[200];
    int n = 17;
    unsigned char ablated[12] = { 0 };
    char why[128];
    int partial = 0, in_place = 0, grown = 0, carried = 0;
    struct decoder_run prev;
    struct decoder_knobs k = { .causal = true, .scaled = true, .temperature = 1.0 };

    gpt2_random_model(&m, &cfg, 0.2f, 5);
    for (int i = 0; i < n; i++)
        ids[i] = (i * 131 + 7) % 509;
    ck_assert_msg(decoder_forward(&m, ids, n, 3, &k, &prev, &err) == ATTN_OK, "%s", err.msg);
    for (int trial = 0; trial < 80; trial++) {
        struct decoder_run whole, inc;
        const void *prev_map;
        int m2 = n;
        int from;
        seed = seed * 1103515245u + 12345u;
        if (trial == 30)
            ck_assert(decoder_pack(&m));
        if (trial >= 60) {
            /* The knobs change: prev made afresh with them. */
            if (trial < 70) {
                ablated[(seed >> 8) % 12] = 1; /* some heads off, the same in both runs */
                k.ablated = ablated;
            } else {
                k.causal = false; /* every row reads every key: all of it is computed */
            }
            decoder_run_destroy(&prev);
            ck_assert_msg(decoder_forward(&m, ids, n, 3, &k, &prev, &err) == ATTN_OK, "%s",
                          err.msg);
        }
        memcpy(next, ids, sizeof ids);
        switch ((seed >> 16) % 6) {
        case 0: /* append one to three tokens */
        case 5:
            for (int e = 0, more = 1 + (int)((seed >> 4) % 3); e < more && m2 < 200; e++)
                next[m2++] = (int)((seed >> (e + 3)) % 509);
            break;
        case 1: /* change one token, anywhere */
            next[(seed >> 5) % (unsigned)n] = (int)((seed >> 9) % 509);
            break;
        case 2: /* change the first */
            next[0] = (next[0] + 1) % 509;
            break;
        case 3: /* cut the end */
            m2 = n > 2 ? n - 1 - (int)((seed >> 6) % 2) : n;
            break;
        default: /* nothing */
            break;
        }
        if (trial == 12) { /* a paste: more than the run has room for, a later layer shown */
            memcpy(next, ids, sizeof ids);
            m2 = n;
            for (int e = 0; e < DECODER_ROOM + 5 && m2 < 200; e++)
                next[m2++] = (e * 17 + 3) % 509;
        }
        if ((seed >> 20) % 3 == 0) /* another layer shown, as the view's L key does */
            ck_assert(decoder_show_layer(&m, &prev, (int)((seed >> 22) % 3), &err) ==
                      ATTN_OK);
        if (trial == 12)
            ck_assert(decoder_show_layer(&m, &prev, 2, &err) == ATTN_OK);
        from = decoder_common_rows(&prev, ids, next, m2);
        prev_map = prev.arena_map;
        ck_assert_msg(decoder_forward(&m, next, m2, 3, &k, &whole, &err) == ATTN_OK, "%s", err.msg);
        ck_assert_msg(decoder_forward_from(&m, next, m2, 3, &k, &prev, from, &inc, &err) == ATTN_OK,
                      "%s", err.msg);
        /* The shown layer's (H, n, n) rows before the edit kept, the rest made (same_runs). */
        carried += inc.attention_rows > 0;
        ck_assert_msg(same_runs(&m, &whole, &inc, why, sizeof why),
                      "trial %d (%d -> %d tokens, from %d): %s", trial, n, m2, from, why);
        partial += from > 0 && k.causal;
        if (inc.arena_map == prev_map) {
            in_place++;
            ck_assert_ptr_null(prev.arena_map); /* prev's memory is inc's now */
        }
        grown += m2 > n && inc.arena_map != prev_map && from > 0 && k.causal;
        decoder_run_destroy(&prev);
        decoder_run_destroy(&whole);
        prev = inc;
        memcpy(ids, next, sizeof ids);
        n = m2;
        if (n >= 180) {
            n = 12;
            decoder_run_destroy(&prev);
            ck_assert(decoder_forward(&m, ids, n, 3, &k, &prev, &err) == ATTN_OK);
        }
    }
    decoder_run_destroy(&prev);
    ck_assert_int_ge(partial, 40); /* most edits took rows over */
    ck_assert_int_ge(in_place, 30); /* most of them in the run's own memory */
    ck_assert_int_ge(grown, 1);     /* and the paste outgrew it */
    ck_assert_int_ge(carried, 20);  /* the shown layer's rows before the edit made once */
    decoder_release_spare();
    gpt2_random_free(&m);
}
END_TEST

/*
 * An ablation changed recomputes from its layer (decoder_forward_layers):
 * every stage of every layer is a whole forward's, bit for bit, and the
 * layers before it are prev's, not made again: with layer 0's weights
 * swapped for layer 1's after prev was made, layer 0 is still prev's.
 */
START_TEST(an_ablation_recomputes_from_its_layer)
{
    const int C = 64;
    const struct decoder_config cfg = {
        .n_layer = 3, .n_head = 4, .d_model = C, .n_ctx = 96, .vocab_size = 307,
        .d_mlp = 4 * C, .eps = 1e-5f, .scale_attn_weights = true, .scale_by_layer = true,
        .tied = true,
    };
    struct decoder_model m;
    struct attn_error err;
    struct decoder_run prev, whole, layered, kept;
    int ids[70];
    unsigned char none[12] = { 0 }, some[12] = { 0 };
    char why[128];
    struct decoder_knobs k = { .causal = true, .scaled = true, .temperature = 1.0 };
    const size_t nc = 70 * (size_t)C * sizeof(float);

    gpt2_random_model(&m, &cfg, 0.2f, 17);
    for (int i = 0; i < 70; i++)
        ids[i] = (i * 37 + 11) % 307;
    /* Which layer an ablation changes first: none and all-zero are the same. */
    ck_assert_int_eq(decoder_first_ablated_change(&cfg, NULL, none), 3);
    some[2 * 4 + 3] = 1;
    ck_assert_int_eq(decoder_first_ablated_change(&cfg, NULL, some), 2);
    ck_assert_int_eq(decoder_first_ablated_change(&cfg, some, none), 2);
    some[1 * 4 + 0] = 1;
    ck_assert_int_eq(decoder_first_ablated_change(&cfg, some, none), 1);
    ck_assert(decoder_forward(&m, ids, 70, 3, &k, &prev, &err) == ATTN_OK);
    for (int layer = 1; layer <= 2; layer++) {
        memset(some, 0, sizeof some);
        some[layer * 4 + 1] = 1;
        k.ablated = some;
        ck_assert(decoder_forward(&m, ids, 70, 3, &k, &whole, &err) == ATTN_OK);
        ck_assert(decoder_forward_layers(&m, ids, 70, 3, &k, &prev, layer, &layered, &err) ==
                  ATTN_OK);
        ck_assert_msg(same_runs(&m, &whole, &layered, why, sizeof why), "from layer %d: %s",
                      layer, why);
        decoder_run_destroy(&whole);
        decoder_run_destroy(&layered);
    }
    /* Layer 0 with other weights: a run from layer 1 keeps prev's layer 0 all the same. */
    {
        const struct decoder_norm_weights own = m.blocks[0].norm1;
        m.blocks[0].norm1 = m.blocks[1].norm1;
        ck_assert(decoder_forward_layers(&m, ids, 70, 3, &k, &prev, 1, &kept, &err) == ATTN_OK);
        ck_assert(decoder_forward(&m, ids, 70, 3, &k, &whole, &err) == ATTN_OK);
        m.blocks[0].norm1 = own;
        ck_assert(memcmp(kept.layers[0].resid2, prev.layers[0].resid2, nc) == 0);
        ck_assert(memcmp(kept.layers[0].k, prev.layers[0].k, nc) == 0);
        ck_assert(memcmp(whole.layers[0].resid2, prev.layers[0].resid2, nc) != 0);
        decoder_run_destroy(&kept);
        decoder_run_destroy(&whole);
    }
    decoder_run_destroy(&prev);
    decoder_release_spare();
    gpt2_random_free(&m);
}
END_TEST

/*
 * An edit made in the previous run's memory that is stopped (Esc in the
 * view) or fails leaves that run as it was: every row it had, bit for bit.
 */
START_TEST(a_stopped_edit_leaves_the_run_shown)
{
    const int C = 64;
    const struct decoder_config cfg = {
        .n_layer = 2, .n_head = 4, .d_model = C, .n_ctx = 128, .vocab_size = 301,
        .d_mlp = 4 * C, .eps = 1e-5f, .scale_attn_weights = true, .scale_by_layer = false,
        .tied = true,
    };
    struct decoder_model m;
    struct attn_error err;
    struct decoder_run shown, copy, edited;
    int ids[40], next[40];
    char why[128];
    const void *map;

    gpt2_random_model(&m, &cfg, 0.2f, 23);
    for (int i = 0; i < 40; i++)
        ids[i] = next[i] = (i * 29 + 1) % 301;
    next[10] = 7; /* rows 10 .. 29 change */
    ck_assert(decoder_forward_from(&m, ids, 30, 4, NULL, NULL, 0, &shown, &err) == ATTN_OK);
    ck_assert(decoder_forward(&m, ids, 30, 4, NULL, &copy, &err) == ATTN_OK);
    ck_assert_int_ge(shown.cap, 30 + DECODER_ROOM);
    map = shown.arena_map;
    progress_stop();
    ck_assert_int_eq(decoder_forward_from(&m, next, 35, 4, NULL, &shown, 10, &edited, &err),
                     ATTN_ESTOPPED);
    progress_reset();
    ck_assert_ptr_eq(shown.arena_map, map);
    ck_assert_int_eq(shown.n, 30);
    ck_assert_msg(same_runs(&m, &shown, &copy, why, sizeof why), "%s", why);
    /* Not stopped, the edit is made in the same memory. */
    ck_assert(decoder_forward_from(&m, next, 35, 4, NULL, &shown, 10, &edited, &err) == ATTN_OK);
    ck_assert_ptr_eq(edited.arena_map, map);
    decoder_run_destroy(&shown);
    decoder_run_destroy(&copy);
    ck_assert(decoder_forward(&m, next, 35, 4, NULL, &copy, &err) == ATTN_OK);
    ck_assert_msg(same_runs(&m, &edited, &copy, why, sizeof why), "%s", why);
    decoder_run_destroy(&edited);
    decoder_run_destroy(&copy);
    decoder_release_spare();
    gpt2_random_free(&m);
}
END_TEST

/* Whether the stages of layer l of a and b, made in a's and b's own ways, are the same bits. */
static void
expect_same_layer(const struct decoder_config *c, const struct decoder_run *a,
                  const struct decoder_run *b, int l)
{
    const struct decoder_layer_stages *x = &a->layers[l], *y = &b->layers[l];
    const size_t nc = (size_t)a->n * c->d_model * sizeof(float);
    const size_t nf = (size_t)a->n * c->d_mlp * sizeof(float);
    const float *const xs[] = { x->norm1, x->q,      x->k,     x->v,   x->context,
                                x->attn,  x->resid1, x->norm2, x->mlp, x->resid2 };
    const float *const ys[] = { y->norm1, y->q,      y->k,     y->v,   y->context,
                                y->attn,  y->resid1, y->norm2, y->mlp, y->resid2 };

    for (size_t e = 0; e < sizeof xs / sizeof xs[0]; e++)
        ck_assert_msg(xs[e] != NULL && memcmp(xs[e], ys[e], nc) == 0, "layer %d stage %zu", l, e);
    ck_assert(memcmp(x->up, y->up, nf) == 0 && memcmp(x->act, y->act, nf) == 0);
}

/*
 * A run keeps each layer's keys, values and output, and the shown layer's
 * every stage; another layer shown is made again from its input, the same
 * bits the forward made (compared with a run that kept it).  The scores
 * and weights made for the layer shown are what its context was made from:
 * each head's weights times its values give the kept context (the same
 * sums: the weights past a query's key are 0), and the masked and scaled
 * scores are the softmax's.
 */
START_TEST(the_layer_shown_is_made_again_the_same)
{
    const int C = 96;
    const int n = 150; /* three blocks of queries, the last a part */
    const struct decoder_config cfg = {
        .n_layer = 2, .n_head = 3, .d_model = C, .n_ctx = 160, .vocab_size = 211,
        .d_mlp = 4 * C, .eps = 1e-5f, .scale_attn_weights = true, .scale_by_layer = true,
        .tied = true,
    };
    const int hd = C / 3;
    const size_t nc = (size_t)n * C;
    struct decoder_model m;
    struct attn_error err;
    struct decoder_run r, kept;
    int ids[150];
    unsigned char ablated[6] = { 0, 0, 1, 0, 0, 0 }; /* layer 0's head 2 */
    const struct decoder_knobs k = { .causal = true, .scaled = true, .temperature = 1.0, .ablated = ablated };
    float *ctx = malloc(nc * sizeof *ctx);
    float *q = malloc(2 * nc * sizeof *q);
    float *one = malloc(((size_t)n * n * 2 + 2 * (size_t)n) * sizeof *one);

    ck_assert(ctx != NULL && q != NULL && one != NULL);
    gpt2_random_model(&m, &cfg, 0.3f, 31);
    for (int i = 0; i < n; i++)
        ids[i] = (i * 7 + 3) % 211;
    ck_assert(decoder_forward(&m, ids, n, 2, &k, &r, &err) == ATTN_OK);
    ck_assert(decoder_forward(&m, ids, n, 2, &k, &kept, &err) == ATTN_OK);
    /* Layer 0 shown; layer 1 keeps its keys, values and output only; no scores yet. */
    ck_assert_int_eq(r.shown, 0);
    ck_assert(r.layers[0].norm1 != NULL && r.layers[0].scores == NULL);
    ck_assert(r.layers[1].norm1 == NULL && r.layers[1].q == NULL && r.layers[1].up == NULL);
    ck_assert(r.layers[1].k != NULL && r.layers[1].v != NULL && r.layers[1].resid2 != NULL);
    for (int l = 1; l >= 0; l--) {
        const struct decoder_layer_stages *s = &r.layers[l];
        /* The queries of a layer not shown, made again: the shown layer's to the bit. */
        ck_assert_int_ne(r.shown, l);
        decoder_layer_queries(&m, &r, l, q, q + nc);
        ck_assert(decoder_show_layer(&m, &r, l, &err) == ATTN_OK);
        ck_assert(memcmp(q, s->q, nc * sizeof *q) == 0);
        ck_assert(r.layers[1 - l].weights == NULL && r.layers[1 - l].norm1 == NULL);
        /* (the four stages, each head's rows one after another) */
        float *weights = shown_stage(&cfg, &r, s->weights), *scores = shown_stage(&cfg, &r, s->scores);
        float *masked = shown_stage(&cfg, &r, s->masked), *scaled = shown_stage(&cfg, &r, s->scaled);
        for (int h = 0; h < 3; h++) {
            const float *w = weights + (size_t)h * n * n;
            linalg_gemm_nn(n, hd, n, w, n, s->v + h * hd, C, ctx + h * hd, C);
            if (l == 0 && h == 2) /* the ablated head's context is zeroed */
                for (int i = 0; i < n; i++)
                    memset(ctx + (size_t)i * C + h * hd, 0, (size_t)hd * sizeof *ctx);
            decoder_head_weights(&m, &r, l, h, q, one, one + (size_t)n * n);
            ck_assert_msg(memcmp(one, w, (size_t)n * n * sizeof *w) == 0, "layer %d head %d", l,
                          h);
            for (int i = 0; i + 1 < n; i++) {
                const size_t at = ((size_t)h * n + (size_t)i) * n;
                ck_assert(w[(size_t)i * n + (size_t)n - 1] == 0.0f); /* masked: no weight */
                ck_assert(isinf(masked[at + n - 1]) && isinf(scaled[at + n - 1]));
                ck_assert(masked[at] == scores[at]);
                ck_assert(scaled[at] == masked[at] / r.divisors[l]);
            }
        }
        free(weights), free(scores), free(masked), free(scaled);
        ck_assert_msg(memcmp(ctx, s->context, nc * sizeof *ctx) == 0,
                      "layer %d: the weights shown did not make the context", l);
    }
    /* Layer 0, made again after layer 1 was shown, is the forward's own (kept in `kept`). */
    expect_same_layer(&cfg, &r, &kept, 0);
    decoder_run_destroy(&r);
    decoder_run_destroy(&kept);
    decoder_release_spare();
    gpt2_random_free(&m);
    free(ctx);
    free(q);
    free(one);
}
END_TEST

/*
 * An appended token moves no kept row of the shown layer's (H, n, n)
 * stages: they stay at their addresses (each head's rows attention_ld
 * floats apart, the run's room), the same bits; only the new row and
 * column are written, and the whole agrees with a run made afresh.
 */
START_TEST(an_appended_token_moves_no_kept_row)
{
    const int C = 48, n = 20;
    const struct decoder_config cfg = {
        .n_layer = 2, .n_head = 3, .d_model = C, .n_ctx = 128, .vocab_size = 211,
        .d_mlp = 4 * C, .eps = 1e-5f, .scale_attn_weights = true, .scale_by_layer = false,
        .tied = true,
    };
    struct decoder_model m;
    struct attn_error err;
    struct decoder_run r, inc, whole;
    int ids[21];
    float *before[4];
    const float *at[4];
    char why[128];

    gpt2_random_model(&m, &cfg, 0.3f, 41);
    for (int i = 0; i < 21; i++)
        ids[i] = (i * 29 + 7) % 211;
    /* (made as the view makes it, with room to grow: decoder_forward makes none) */
    ck_assert(decoder_forward_from(&m, ids, n, 2, NULL, NULL, 0, &r, &err) == ATTN_OK);
    ck_assert(decoder_show_layer(&m, &r, 0, &err) == ATTN_OK);
    const int ld = r.attention_ld;
    ck_assert_int_ge(ld, n + 1); /* room for the appended token */
    {
        const struct decoder_layer_stages *s = &r.layers[0];
        const float *stages[4] = { s->scores, s->masked, s->scaled, s->weights };
        for (int a = 0; a < 4; a++) {
            at[a] = stages[a];
            before[a] = shown_stage(&cfg, &r, stages[a]);
        }
    }
    ck_assert(decoder_forward_from(&m, ids, n + 1, 2, NULL, &r, n, &inc, &err) == ATTN_OK);
    ck_assert_int_eq(inc.attention_rows, n); /* carried over, not made again */
    ck_assert(decoder_show_layer(&m, &inc, 0, &err) == ATTN_OK);
    ck_assert_int_eq(inc.attention_ld, ld);
    {
        const struct decoder_layer_stages *s = &inc.layers[0];
        const float *stages[4] = { s->scores, s->masked, s->scaled, s->weights };
        for (int a = 0; a < 4; a++) {
            ck_assert_ptr_eq(stages[a], at[a]);
            for (int h = 0; h < cfg.n_head; h++)
                for (int i = 0; i < n; i++)
                    ck_assert_msg(memcmp(before[a] + ((size_t)h * n + i) * n,
                                         at[a] + ((size_t)h * ld + i) * ld, n * sizeof(float)) == 0,
                                  "stage %d head %d row %d moved or changed", a, h, i);
            free(before[a]);
        }
    }
    ck_assert(decoder_forward(&m, ids, n + 1, 2, NULL, &whole, &err) == ATTN_OK);
    ck_assert_msg(same_runs(&m, &whole, &inc, why, sizeof why), "%s", why);
    decoder_run_destroy(&inc);
    decoder_run_destroy(&whole);
    decoder_run_destroy(&r);
    decoder_release_spare();
    gpt2_random_free(&m);
}
END_TEST

START_TEST(threads_give_the_same_bits)
{
    const int C = 192;
    const int n = 37;
    const struct decoder_config cfg = {
        .n_layer = 2, .n_head = 4, .d_model = C, .n_ctx = 64, .vocab_size = 3001,
        .d_mlp = 4 * C, .eps = 1e-5f, .scale_attn_weights = true, .scale_by_layer = false,
        .tied = true,
    };
    struct decoder_model m;
    int ids[37];
    struct decoder_run one;
    struct attn_error err;
    const int counts[] = { 2, 3, 7 };

    gpt2_random_model(&m, &cfg, 0.2f, 7);
    for (int i = 0; i < n; i++)
        ids[i] = (i * 613) % 3001;
    setenv("ATTNSCOPE_THREADS", "1", 1);
    ck_assert_msg(decoder_forward(&m, ids, n, 5, NULL, &one, &err) == ATTN_OK, "%s", err.msg);
    for (size_t t = 0; t < sizeof counts / sizeof counts[0]; t++) {
        struct decoder_run more;
        char value[8];
        snprintf(value, sizeof value, "%d", counts[t]);
        setenv("ATTNSCOPE_THREADS", value, 1);
        ck_assert_msg(decoder_forward(&m, ids, n, 5, NULL, &more, &err) == ATTN_OK, "%s", err.msg);
        for (int l = 0; l < 2; l++) {
            ck_assert(decoder_show_layer(&m, &one, l, &err) == ATTN_OK);
            ck_assert(decoder_show_layer(&m, &more, l, &err) == ATTN_OK);
            ck_assert(memcmp(one.layers[l].q, more.layers[l].q, (size_t)n * C * sizeof(float)) == 0);
            ck_assert(memcmp(one.layers[l].up, more.layers[l].up, (size_t)n * 4 * C * sizeof(float)) == 0);
            ck_assert(memcmp(one.layers[l].resid2, more.layers[l].resid2, (size_t)n * C * sizeof(float)) == 0);
        }
        ck_assert(memcmp(one.final, more.final, (size_t)n * C * sizeof(float)) == 0);
        ck_assert(memcmp(one.top_ids, more.top_ids, (size_t)n * 5 * sizeof(int)) == 0);
        ck_assert(memcmp(one.top_probs, more.top_probs, (size_t)n * 5 * sizeof(float)) == 0);
        decoder_run_destroy(&more);
    }
    unsetenv("ATTNSCOPE_THREADS");
    decoder_run_destroy(&one);
    gpt2_random_free(&m);
}
END_TEST

/* Copies the fixture case into dir/name, with its config.json replaced when config is not NULL. */
static const char *
model_copy(const char *name, const char *config)
{
    static char out[256];
    char src[4096];
    char cmd[10000];

    snprintf(out, sizeof out, "%s/%s", dir, name);
    snprintf(src, sizeof src, "%s", test_path("tests/fixtures/gpt2/hf-f32"));
    snprintf(cmd, sizeof cmd, "mkdir -p '%s' && cp '%s/model.safetensors' '%s/config.json' '%s/'",
             out, src, src, out);
    ck_assert_int_eq(system(cmd), 0);
    if (config != NULL) {
        char file[128];
        snprintf(file, sizeof file, "%.64s/config.json", name);
        test_write_text(dir, file, config);
    }
    return out;
}

static void
expect_load_error(const char *model_dir, const char *want)
{
    struct decoder_model m;
    struct attn_error err;

    ck_assert_int_ne(architecture_load(&m, model_dir, NULL, &err), ATTN_OK);
    ck_assert_msg(strstr(err.msg, want) != NULL, "'%s' not in: %s", want, err.msg);
    ck_assert_ptr_null(m.blocks); /* nothing half-loaded */
}

START_TEST(bad_folders_say_what_is_wrong)
{
    const char *good = "{\"n_layer\":2,\"n_head\":2,\"n_embd\":8,\"vocab_size\":32,\"n_positions\":16}";
    struct decoder_model m;
    struct attn_error err;
    struct decoder_run r;
    int ids[20] = { 0 };

    expect_load_error(dir, "no weights (looked for model.safetensors");
    /* A weights file too short to be one says so, naming it. */
    {
        char pickled[512];
        snprintf(pickled, sizeof pickled, "%s/pickled", dir);
        ck_assert_int_eq(mkdir(pickled, 0755), 0);
        test_write_text(dir, "pickled/config.json", good);
        test_write_text(dir, "pickled/pytorch_model.bin", "PK");
        expect_load_error(pickled, "pytorch_model.bin: 2 bytes: not a weights file");
    }
    expect_load_error(model_copy("noconf", "{\"n_layer\":2}"), "config.json: \"n_head\" is missing");
    expect_load_error(model_copy("json", "{\"n_layer\":"), "config.json:1:11: not JSON");
    expect_load_error(model_copy("heads", "{\"n_layer\":2,\"n_head\":3,\"n_embd\":8,"
                                          "\"vocab_size\":32,\"n_positions\":16}"),
                      "n_embd 8 is not a multiple of n_head 3");
    expect_load_error(model_copy("relu", "{\"n_layer\":2,\"n_head\":2,\"n_embd\":8,\"vocab_size\":32,"
                                         "\"n_positions\":16,\"activation_function\":\"relu\"}"),
                      "\"activation_function\" is relu");
    /* 1e-51 is positive as JSON's double and 0 as the float layer norm adds (found by fuzzing). */
    expect_load_error(model_copy("eps", "{\"n_layer\":2,\"n_head\":2,\"n_embd\":8,\"vocab_size\":32,"
                                        "\"n_positions\":16,\"layer_norm_epsilon\":1e-51}"),
                      "\"layer_norm_epsilon\" is 1e-51, not a number from 1e-30 to 1");
    expect_load_error(model_copy("wide", "{\"n_layer\":2,\"n_head\":2,\"n_embd\":16,"
                                         "\"vocab_size\":32,\"n_positions\":16}"),
                      "tensor 'wte.weight' is (32, 8); config.json makes it (32, 16)");
    expect_load_error(model_copy("deep", "{\"n_layer\":3,\"n_head\":2,\"n_embd\":8,"
                                         "\"vocab_size\":32,\"n_positions\":16}"),
                      "no tensor 'h.2.ln_1.weight'");
    /* The forward refuses what the model cannot read. */
    ck_assert_int_eq(architecture_load(&m, model_copy("ok", good), NULL, &err), ATTN_OK);
    ck_assert_int_eq(decoder_forward(&m, ids, 17, 3, NULL, &r, &err), ATTN_ELIMIT);
    ck_assert_ptr_nonnull(strstr(err.msg, "17 tokens: the model reads 1 to 16 (n_positions)"));
    ids[1] = 32;
    ck_assert_int_eq(decoder_forward(&m, ids, 2, 3, NULL, &r, &err), ATTN_EVALUE);
    ck_assert_ptr_nonnull(strstr(err.msg, "token 1 has id 32; the vocabulary has 32"));
    decoder_destroy(&m);
}
END_TEST

/*
 * Writes the tensors of st whose index has parity `half` (0 or 1) as the
 * safetensors file dir/name, and their names into index (the weight_map's
 * entries, JSON), the data copied byte for byte.
 */
static void
write_shard(const struct safetensors *st, int half, const char *name, char *index, size_t size)
{
    char header[16384];
    size_t len = 0;
    size_t at = 0;
    char path[512];
    FILE *f;

    len += (size_t)snprintf(header + len, sizeof header - len, "{");
    for (int i = half; i < st->cat.count; i += 2) {
        const struct tensor_info *t = &st->cat.tensors[i];
        size_t bytes = t->end - t->begin;
        len += (size_t)snprintf(header + len, sizeof header - len,
                                "%s\"%s\":{\"dtype\":\"%s\",\"shape\":[", len > 1 ? "," : "",
                                t->name, tensor_dtype_name(t->dtype));
        for (int d = 0; d < t->ndim; d++)
            len += (size_t)snprintf(header + len, sizeof header - len, "%s%lld", d ? "," : "",
                                    (long long)t->shape[d]);
        len += (size_t)snprintf(header + len, sizeof header - len, "],\"data_offsets\":[%zu,%zu]}",
                                at, at + bytes);
        at += bytes;
        snprintf(index + strlen(index), size - strlen(index), "%s\"%s\":\"%s\"",
                 index[strlen(index) - 1] == '{' ? "" : ",", t->name, name);
    }
    len += (size_t)snprintf(header + len, sizeof header - len, "}");
    while (len % 8 != 0)
        header[len++] = ' ';
    snprintf(path, sizeof path, "%s/sharded/%s", dir, name);
    f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    for (int b = 0; b < 8; b++)
        fputc((int)(((uint64_t)len >> (8 * b)) & 255), f);
    fwrite(header, 1, len, f);
    for (int i = half; i < st->cat.count; i += 2) {
        size_t bytes = st->cat.tensors[i].end - st->cat.tensors[i].begin;
        char *buf = malloc(bytes + 1);
        ck_assert_ptr_nonnull(buf);
        ck_assert_int_eq(pread(st->fd, buf, bytes, (off_t)(st->data_start + st->cat.tensors[i].begin)),
                         (ssize_t)bytes);
        fwrite(buf, 1, bytes, f);
        free(buf);
    }
    fclose(f);
}

/* A checkpoint in two shards and an index loads as the one file does: the same bits. */
START_TEST(sharded_checkpoints_load)
{
    struct decoder_model whole;
    struct decoder_model parts;
    struct decoder_run a;
    struct decoder_run b;
    struct safetensors file;
    struct attn_error err;
    char index[8192] = "{\"metadata\":{},\"weight_map\":{";
    char folder[300];
    const int ids[] = { 3, 1, 4, 1, 5 };

    ck_assert_int_eq(architecture_load(&whole, test_path("tests/fixtures/gpt2/hf-f32"), NULL, &err), ATTN_OK);
    snprintf(folder, sizeof folder, "%s/sharded", dir);
    ck_assert_int_eq(mkdir(folder, 0755), 0);
    ck_assert_int_eq(safetensors_open(&file, test_path("tests/fixtures/gpt2/hf-f32/model.safetensors"),
                                      &err),
                     ATTN_OK);
    write_shard(&file, 0, "model-00001-of-00002.safetensors", index, sizeof index);
    write_shard(&file, 1, "model-00002-of-00002.safetensors", index, sizeof index);
    safetensors_close(&file);
    strcat(index, "}}");
    test_write_text(dir, "sharded/model.safetensors.index.json", index);
    {
        char cmd[5000];
        snprintf(cmd, sizeof cmd, "cp '%s/config.json' '%s/'",
                 test_path("tests/fixtures/gpt2/hf-f32"), folder);
        ck_assert_int_eq(system(cmd), 0);
    }
    ck_assert_msg(architecture_load(&parts, folder, NULL, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_int_eq(parts.files_read, 2);
    ck_assert_int_eq(decoder_forward(&whole, ids, 5, 3, NULL, &a, &err), ATTN_OK);
    ck_assert_int_eq(decoder_forward(&parts, ids, 5, 3, NULL, &b, &err), ATTN_OK);
    ck_assert(memcmp(a.final, b.final, 5 * (size_t)whole.cfg.d_model * sizeof(float)) == 0);
    ck_assert(memcmp(a.top_ids, b.top_ids, 15 * sizeof(int)) == 0);
    decoder_run_destroy(&a);
    decoder_run_destroy(&b);
    decoder_destroy(&parts);
    /* A map naming a shard without the tensor, or a path: refused, naming the index. */
    test_write_text(dir, "sharded/model.safetensors.index.json",
                    "{\"weight_map\":{\"wte.weight\":\"model-00002-of-00002.safetensors\"}}");
    ck_assert_int_ne(architecture_load(&parts, folder, NULL, &err), ATTN_OK);
    ck_assert_msg(strstr(err.msg, "model.safetensors.index.json: tensor 'wte.weight' is mapped to "
                                  "model-00002-of-00002.safetensors, which lacks it") != NULL,
                  "%s", err.msg);
    test_write_text(dir, "sharded/model.safetensors.index.json",
                    "{\"weight_map\":{\"wte.weight\":\"../elsewhere.safetensors\"}}");
    ck_assert_int_ne(architecture_load(&parts, folder, NULL, &err), ATTN_OK);
    ck_assert_msg(strstr(err.msg, "not a file beside it") != NULL, "%s", err.msg);
    test_write_text(dir, "sharded/model.safetensors.index.json", "{\"weight_map\":{}}");
    ck_assert_int_ne(architecture_load(&parts, folder, NULL, &err), ATTN_OK);
    ck_assert_msg(strstr(err.msg, "no \"weight_map\"") != NULL, "%s", err.msg);
    decoder_destroy(&whole);
}
END_TEST

static Suite *
gpt2_suite(void)
{
    Suite *s = suite_create("gpt2");
    TCase *tc = tcase_create("gpt2");
    /* (a hang guard, not a timing: CK_TIMEOUT_MULTIPLIER scales it under the sanitizers) */
    tcase_set_timeout(tc, 30);

    tcase_add_checked_fixture(tc, test_tmpdir_setup, test_tmpdir_teardown);
    tcase_add_test(tc, agrees_with_pytorch);
    tcase_add_test(tc, packing_in_place_keeps_c_attn_whole);
    tcase_add_test(tc, bad_folders_say_what_is_wrong);
    tcase_add_test(tc, threads_give_the_same_bits);
    tcase_add_test(tc, a_reused_arena_changes_no_bit);
    tcase_add_test(tc, an_edit_recomputes_only_what_changed);
    tcase_add_test(tc, an_appended_token_moves_no_kept_row);
    tcase_add_test(tc, a_stopped_edit_leaves_the_run_shown);
    tcase_add_test(tc, an_ablation_recomputes_from_its_layer);
    tcase_add_test(tc, the_layer_shown_is_made_again_the_same);
    tcase_add_test(tc, sharded_checkpoints_load);
    suite_add_tcase(s, tc);
    return s;
}

TEST_MAIN(gpt2_suite)
