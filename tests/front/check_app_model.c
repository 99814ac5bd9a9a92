/*
 * check_app_model.c: the interactive view on a trained model, driven
 * without a terminal: its layers, knobs, cells, ablations, the model map,
 * the sentence view and the predictions, new sentences, x, a stopped
 * recompute, a file changed on disk, twelve heads, shared key heads, every
 * head's heatmap at any size, 300 layers.
 */
#include "config.h"

#include <math.h>

#include "attnscope/families/model/headmap.h"
#include "app_harness.h"

START_TEST(a_model_steps_through_its_layers)
{
    char *text;
    struct pipeline_view v;
    float first;

    ck_assert_int_eq(a.pipe.layers, 2);
    text = frame_text(100, 30);
    ck_assert_msg(strstr(text, "tiny ,.:layer 0 of 0-1 s:seed 123 m:causal /:scaled <>:T 1 j:greedy") != NULL, "%s",
                  text);
    ck_assert_msg(strstr(text, "v:mha") == NULL, "the book's knobs on a model's bar: %s", text);
    /* The next token after the text, from every stage: the likeliest, as --print gives it. */
    ck_assert_msg(strstr(text, "(9 of 24 tokens)  next: \xc2\xb7st 7%") != NULL, "%s", text);
    free(text);
    keys("6");
    pipeline_stage_view(&a.pipe, STAGE_WEIGHTS, 0, &v);
    first = MAT_AT(&v.m, 3, 1);
    keys(".");
    ck_assert_int_eq(a.pipe.layer, 1);
    ck_assert_ptr_nonnull(strstr(a.message, "layer 1 of 0-1"));
    pipeline_stage_view(&a.pipe, STAGE_WEIGHTS, 0, &v);
    ck_assert(MAT_AT(&v.m, 3, 1) != first); /* another layer's weights */
    text = frame_text(100, 30);
    ck_assert_msg(strstr(text, "Layer 1: Attention weights, head 0 of 2 (9 x 9)") != NULL, "%s", text);
    free(text);
    keys(".");
    ck_assert_int_eq(a.pipe.layer, 1);
    ck_assert_ptr_nonnull(strstr(a.message, "layer 1 is the last"));
    keys(",,");
    ck_assert_int_eq(a.pipe.layer, 0);
    ck_assert_ptr_nonnull(strstr(a.message, "layer 0 is the first"));
    pipeline_stage_view(&a.pipe, STAGE_WEIGHTS, 0, &v);
    ck_assert(MAT_AT(&v.m, 3, 1) == first);
}
END_TEST

/* The colour scale's line of a frame ("min a max b   scale lo hi (all 2 heads)"), copied. */
static char *
scale_line(const char *text)
{
    const char *at = strstr(text, "(all ");
    const char *start, *end;

    if (at == NULL)
        at = strstr(text, "(both heads)");
    ck_assert_msg(at != NULL, "no scale's legend: %s", text);
    for (start = at; start > text && start[-1] != '\n'; start--)
        ;
    end = strchr(at, '\n');
    return strndup(start, end != NULL ? (size_t)(end - start) : strlen(start));
}

/*
 * Issue 50, item 1: a layer stepped to takes its own colour scale, on the
 * screen and in the figure (the range was kept per stage, so layer 1 was
 * drawn on layer 0's).
 */
START_TEST(a_layer_stepped_to_takes_its_own_scale)
{
    struct app b;
    struct model m;
    char *text, *fresh, *here, *there;

    keys("3"); /* the scores: a diverging scale, every head's */
    text = frame_text(100, 30);
    there = scale_line(text);
    free(text);
    keys(".");
    text = frame_text(100, 30);
    here = scale_line(text);
    free(text);
    app_on_model(&b, &m, test_path("tests/fixtures/gpt2/tiny"), NULL, "The cat sat on the mat.");
    app_key(&b, '.'); /* (layer 1 first, then its scores: a scale never made for layer 0) */
    app_key(&b, '3');
    fresh = frame_of(&b, 100, 30);
    ck_assert_msg(strstr(fresh, here) != NULL, "after '.': %s\nopened there: %s", here, fresh);
    ck_assert_msg(strcmp(here, there) != 0, "both layers on one scale: %s", here);
    free(fresh);
    /* and back: layer 0's own again */
    keys(",");
    text = frame_text(100, 30);
    free(here);
    here = scale_line(text);
    ck_assert_str_eq(here, there);
    free(text);
    free(here);
    free(there);
    app_destroy(&b);
    model_close(&m);
}
END_TEST

/*
 * Issue 50, item 2: a model's stage text never offers a key the model
 * refuses, and the scaled stage speaks of the model's own divisor
 * (minigemma: sqrt(query_pre_attn_scalar), not "d for wider heads").
 */
static void
offered_keys_apply(const char *model_dir, const char *text_in)
{
    static const char stages[] = "1234567890";
    struct app b;
    struct model m;

    app_on_model(&b, &m, test_path(model_dir), NULL, text_in);
    for (const char *s = stages; *s; s++) {
        char *text;
        const char *at;
        app_key(&b, (unsigned char)*s);
        text = frame_of(&b, 160, 50);
        for (at = text; (at = strstr(at, "ress ")) != NULL; at += 5) {
            int step;
            const struct knob *k;
            if (at[5] == '\0' || (at[6] != ' ' && at[6] != ',' && at[6] != '.'))
                continue; /* ("press Enter", a word, not a key) */
            k = knob_for_key((unsigned char)at[5], &step);
            if (k == NULL)
                continue; /* (a view's key: m, M, /, ... are knobs; the rest move) */
            ck_assert_msg(knob_applies(k, &b.pipe), "%s, stage key %c offers '%c', refused: ...%.60s",
                          model_dir, *s, at[5], at - 20 > text ? at - 20 : text);
        }
        free(text);
    }
    app_destroy(&b);
    model_close(&m);
}

START_TEST(a_models_text_offers_only_its_keys)
{
    struct app b;
    struct model m;
    char *text;

    offered_keys_apply("samples/models/minigemma", "cat map sun");
    offered_keys_apply("samples/models/minigpt", "The cat sat");
    offered_keys_apply("tests/fixtures/gpt2/tiny", "The cat sat");
    app_on_model(&b, &m, test_path("samples/models/minigemma"), NULL, "cat map sun");
    app_key(&b, '5');
    text = frame_of(&b, 100, 30);
    ck_assert_msg(strstr(text, "sqrt(query_pre_attn_scalar)") != NULL, "%s", text);
    ck_assert_msg(strstr(text, "d_k is 1") == NULL && strstr(text, "wider heads") == NULL, "%s",
                  text);
    free(text);
    app_destroy(&b);
    model_close(&m);
}
END_TEST

/* a on a Gated DeltaNet layer ablates the value head shown: its read zeroed, and a brings it back. */
START_TEST(a_deltanet_head_is_ablated_and_restored)
{
    struct app b;
    struct model m;
    const struct family_model_state *g;
    float before;

    app_on_model(&b, &m, test_path("samples/models/miniqwen35"), NULL, "cat map sun cat map");
    g = pipeline_decoder(&b.pipe);
    ck_assert(!decoder_attends(&m.dec.cfg, b.pipe.layer));
    before = g->run.top_probs[0];
    app_key(&b, 'a');
    g = pipeline_decoder(&b.pipe);
    ck_assert_int_eq(g->ablated_heads, 1);
    ck_assert_msg(strstr(b.message, "head 0 of layer 0 ablated (its read of the state zeroed); "
                                    "key head 0 stays, 1 other head reads it") != NULL,
                  "%s", b.message);
    ck_assert(g->run.top_probs[0] != before);
    app_key(&b, 'a');
    g = pipeline_decoder(&b.pipe);
    ck_assert_int_eq(g->ablated_heads, 0);
    ck_assert_float_eq(g->run.top_probs[0], before);
    app_destroy(&b);
    model_close(&m);
}
END_TEST

START_TEST(a_model_keeps_only_the_knobs_it_has)
{
    struct pipeline_view v;
    const unsigned long before = a.pipe.generation;

    /* The book's knobs say they do not apply, and change nothing. */
    keys("v");
    ck_assert(a.view.message_is_error);
    ck_assert_ptr_nonnull(strstr(a.message, "--variant does not apply to a trained model"));
    keys("h");
    ck_assert_ptr_nonnull(strstr(a.message, "--heads does not apply"));
    ck_assert_int_eq(a.pipe.generation, before);
    keys("W");
    ck_assert_ptr_nonnull(strstr(a.message, "a trained model's stay in its file"));
    keys("w"); /* the lessons: a model's as well as the book's */
    ck_assert(a.view.picker);
    app_key(&a, APP_KEY_ESCAPE);
    ck_assert(!a.view.picker);
    /* The mask recomputes every layer, and the layer shown stays. */
    keys(".m");
    ck_assert_int_eq(a.pipe.layer, 1);
    ck_assert_int_eq(a.pipe.cfg.mask, ATTN_MASK_NONE);
    pipeline_stage_view(&a.pipe, STAGE_WEIGHTS, 1, &v);
    ck_assert(MAT_AT(&v.m, 0, 5) > 0.0f); /* the first token sees the future now */
}
END_TEST

START_TEST(a_model_explains_its_cells)
{
    char *text;

    keys("2");
    text = frame_text(100, 30);
    ck_assert_msg(strstr(text, "ln1[The] . column 0 of W_q:") != NULL, "%s", text);
    ck_assert_msg(strstr(text, "Q = LN1(x) W_q + b_q") != NULL, "%s", text);
    free(text);
    keys("0");
    text = frame_text(100, 30);
    ck_assert_msg(strstr(text, "z[The] . column 0 of W_o (c_proj):") != NULL, "%s", text);
    free(text);
    keys("1");
    text = frame_text(100, 30);
    ck_assert_msg(strstr(text, "wte[274][0] =") != NULL && strstr(text, "The next stage adds wpe[0][0]"),
                  "%s", text);
    /* And how the tokenizer made it: 'The' is T, h, e merged by rank. */
    ck_assert_msg(strstr(text, "the token: bytes 54 68 65; as characters T h e; merged by rank:") != NULL,
                  "%s", text);
    free(text);
    keys(". ");
    text = frame_text(100, 30);
    ck_assert_msg(strstr(text, "Layer 1: The block's input (9 x 16)") != NULL &&
                      strstr(text, "the output (residual2) of layer 0 for this token") != NULL,
                  "%s", text);
    free(text);
}
END_TEST

/* a ablates the head shown; the predictions change, and come back bit for bit with a again. */
START_TEST(a_model_head_is_ablated_and_restored)
{
    const struct family_model_state *g = pipeline_decoder(&a.pipe);
    const size_t count = (size_t)g->run.n * (size_t)g->run.top;
    float *before = malloc(count * sizeof *before);
    char *text;

    memcpy(before, g->run.top_probs, count * sizeof *before);
    keys("6.");
    app_key(&a, APP_KEY_TAB); /* layer 1, head 1 */
    keys("a");
    g = pipeline_decoder(&a.pipe);
    ck_assert_int_eq(g->ablated_heads, 1);
    ck_assert_int_eq(a.pipe.layer, 1);
    ck_assert_ptr_nonnull(strstr(a.message, "head 1 of layer 1 ablated (its context zeroed)"));
    ck_assert(memcmp(before, g->run.top_probs, count * sizeof *before) != 0);
    text = frame_text(100, 30);
    ck_assert_msg(strstr(text, "a:1 head off") != NULL, "%s", text);
    free(text);
    keys("a");
    g = pipeline_decoder(&a.pipe);
    ck_assert_int_eq(g->ablated_heads, 0);
    ck_assert_ptr_nonnull(strstr(a.message, "head 1 of layer 1 back"));
    ck_assert(memcmp(before, g->run.top_probs, count * sizeof *before) == 0);
    free(before);
}
END_TEST

/*
 * a on a mixture's router (issue 52): the expert under the cursor switched
 * off in the layer shown; no token is sent to it, the predictions are a
 * fresh forward's with that expert off (the layers before it taken over),
 * and a again brings them back bit for bit.  The last experts a token needs
 * stay on.
 */
/*
 * gpt-oss's sinks (issue 52): the weights stage draws each row's share in a
 * sink column beside the head, B switches them off (the next tokens those of
 * a forward made whole with them off; the column gone, the rows summing to 1)
 * and back, the model map's Tab reaches the sink measure; on a model without
 * sinks B says so and changes nothing.
 */
START_TEST(b_switches_the_sinks_off)
{
    struct app b;
    struct model m;
    struct pipeline fresh;
    struct pipeline_source src;
    struct attn_error err;
    const struct family_model_state *g;
    float *before;
    size_t count;
    char *text, want[32];

    app_on_model(&b, &m, test_path("tests/fixtures/decoders/gpt-oss"), NULL, "the cat sat");
    g = pipeline_decoder(&b.pipe);
    count = (size_t)g->run.n * (size_t)g->run.top;
    before = malloc(count * sizeof *before);
    memcpy(before, g->run.top_probs, count * sizeof *before);
    app_key(&b, '6');
    ck_assert_int_eq(b.view.stage, VIEW_WEIGHTS);
    text = frame_of(&b, 120, 36);
    snprintf(want, sizeof want, "%.3f", (double)decoder_sink_share(&m.dec, &g->run, 0, 2));
    ck_assert_msg(strstr(text, "t#8 sink") != NULL && strstr(text, want + (want[0] == '0')) != NULL,
                  "%s (want %s)", text, want);
    free(text);
    app_key(&b, 'B');
    g = pipeline_decoder(&b.pipe);
    ck_assert_msg(strstr(b.message, "attention sinks off") != NULL, "%s", b.message);
    ck_assert(g->run.sinks_off);
    text = frame_of(&b, 120, 36);
    ck_assert_msg(strstr(text, "B:sinks off ") != NULL && strstr(text, "B:sinks off ") <
                                                             strchr(text, '\n'),
                  "%s", text);
    free(text);
    app_source(&b, b.sentence, b.source, b.switches.mask[SWITCH_ABLATE], &src);
    ck_assert(src.sinks_off);
    src.sinks_off = true;
    ck_assert_msg(pipeline_create(&fresh, &b.cfg, &src, &err) == ATTN_OK, "%s", err.msg);
    ck_assert(memcmp(pipeline_decoder(&fresh)->run.top_probs, g->run.top_probs,
                     count * sizeof *before) == 0);
    ck_assert(memcmp(before, g->run.top_probs, count * sizeof *before) != 0);
    pipeline_destroy(&fresh);
    text = frame_of(&b, 120, 36);
    ck_assert_msg(strstr(text, "t#8 sink") == NULL, "%s", text);
    free(text);
    app_key(&b, 'B');
    g = pipeline_decoder(&b.pipe);
    ck_assert_msg(strstr(b.message, "attention sinks back on") != NULL, "%s", b.message);
    ck_assert(memcmp(before, g->run.top_probs, count * sizeof *before) == 0);
    /* the map: Tab from entropy reaches the sink measure before the heatmaps */
    app_key(&b, 'L');
    for (int k = 0; k < MEASURE_SINK; k++)
        app_key(&b, APP_KEY_TAB);
    ck_assert_int_eq(b.view.map_measure, MEASURE_SINK);
    free(before);
    app_destroy(&b);
    model_close(&m);

    app_on_model(&b, &m, test_path("tests/fixtures/decoders/qwen3-moe"), NULL, "the cat");
    app_key(&b, 'B');
    ck_assert_msg(strstr(b.message, "this one has none") != NULL, "%s", b.message);
    ck_assert(!pipeline_decoder(&b.pipe)->run.sinks_off);
    /* without sinks, Tab passes the sink measure by: induction, then every head's heatmap */
    app_key(&b, 'L');
    for (int k = 0; k < MEASURE_SINK; k++)
        app_key(&b, APP_KEY_TAB);
    ck_assert_int_eq(b.view.map_measure, VIEW_MAP_HEATMAPS);
    app_destroy(&b);
    model_close(&m);
}
END_TEST

START_TEST(a_switches_an_expert_off_on_the_router)
{
    struct app b;
    struct model m;
    struct pipeline fresh;
    struct pipeline_source src;
    struct attn_error err;
    const struct family_model_state *g;
    unsigned char *off;
    float *before;
    size_t count;

    app_on_model(&b, &m, test_path("tests/fixtures/decoders/qwen3-moe"), NULL,
                 "the cat sat on the mat.");
    g = pipeline_decoder(&b.pipe);
    count = (size_t)g->run.n * (size_t)g->run.top;
    before = malloc(count * sizeof *before);
    memcpy(before, g->run.top_probs, count * sizeof *before);
    app_key(&b, '.');
    app_key(&b, '.'); /* layer 2: sparse */
    b.view.stage = VIEW_ROUTER;
    b.view.cursor_col = 2;
    {
        /*
         * The router's own logit for the cursor's token before the switch:
         * the panel gives it once the expert is off (issue 62, item 4), and
         * the knob bar says an expert is off.
         */
        char *text, want[96];
        snprintf(want, sizeof want, "the router's own logit would be %.4f",
                 (double)MAT_AT(&b.pipe.block.router_logits, b.view.cursor_row, 2));
        app_key(&b, 'a');
        text = frame_of(&b, 120, 40);
        ck_assert_msg(strstr(text, want) != NULL, "%s (want %s)", text, want);
        ck_assert_msg(strstr(text, "a:1 expert off ") != NULL && strstr(text, "a:1 expert off ") <
                                                                    strchr(text, '\n'),
                      "%s", text);
        free(text);
    }
    g = pipeline_decoder(&b.pipe);
    ck_assert_msg(strstr(b.message, "expert 2 of layer 2 switched off") != NULL, "%s", b.message);
    ck_assert_int_eq(g->experts_off_count, 1);
    for (int i = 0; i < g->run.n; i++)
        ck_assert(MAT_AT(&b.pipe.block.routed, i, 2) == 0.0f);
    /* the same as a forward made whole with the expert off */
    off = calloc((size_t)m.dec.cfg.n_layer * (size_t)m.dec.cfg.moe.n_experts, 1);
    off[2 * m.dec.cfg.moe.n_experts + 2] = 1;
    app_source(&b, b.sentence, b.source, b.switches.mask[SWITCH_ABLATE], &src);
    src.experts_off = off;
    ck_assert_msg(pipeline_create(&fresh, &b.cfg, &src, &err) == ATTN_OK, "%s", err.msg);
    ck_assert(memcmp(pipeline_decoder(&fresh)->run.top_probs, g->run.top_probs,
                     count * sizeof *before) == 0);
    ck_assert(memcmp(before, g->run.top_probs, count * sizeof *before) != 0);
    pipeline_destroy(&fresh);
    free(off);
    app_key(&b, 'a');
    g = pipeline_decoder(&b.pipe);
    ck_assert_msg(strstr(b.message, "expert 2 of layer 2 back on") != NULL, "%s", b.message);
    ck_assert(memcmp(before, g->run.top_probs, count * sizeof *before) == 0);
    /* four of six off: the two a token is sent to stay */
    for (int e = 0; e < 5; e++) {
        b.view.cursor_col = e;
        app_key(&b, 'a');
    }
    ck_assert_msg(strstr(b.message, "expert 4 stays on: each token is sent to 2 of the 2 on") !=
                      NULL,
                  "%s", b.message);
    free(before);
    app_destroy(&b);
    model_close(&m);
}
END_TEST

/* L: the model map; Tab picks the measure, the arrows a head, Enter opens it. */
START_TEST(the_model_map_opens_a_head)
{
    char *text;
    float want[4];

    keys("L");
    ck_assert(a.view.screen == SCREEN_MAP);
    app_key(&a, APP_KEY_TAB);
    ck_assert_int_eq(a.view.map_measure, MEASURE_PREVIOUS);
    app_key(&a, APP_KEY_DOWN);
    app_key(&a, APP_KEY_RIGHT);
    app_key(&a, APP_KEY_DOWN); /* stays on the last layer */
    text = frame_text(100, 30);
    ck_assert_msg(strstr(text, "Model map: previous, weight on the previous token (2 layers x 2 heads)"),
                  "%s", text);
    ck_assert_int_eq(head_measures(&a.pipe, MEASURE_PREVIOUS, want), 0);
    {
        char line[64];
        snprintf(line, sizeof line, "layer 1, head 1: previous %.4f", (double)want[3]);
        ck_assert_msg(strstr(text, line) != NULL, "%s (want '%s')", text, line);
    }
    free(text);
    app_key(&a, APP_KEY_ENTER);
    ck_assert(a.view.screen != SCREEN_MAP);
    ck_assert_int_eq(a.pipe.layer, 1);
    ck_assert_int_eq(a.view.head, 1);
    ck_assert_int_eq(a.view.stage, VIEW_WEIGHTS);
    keys("L");
    app_key(&a, APP_KEY_ESCAPE);
    ck_assert(a.view.screen != SCREEN_MAP);
}
END_TEST

/* The map's last choice: every head's weights as a small heatmap, each cell the core's weight. */
START_TEST(the_model_map_draws_every_head_when_it_fits)
{
    const int n = a.pipe.st.nq;
    const int heads = a.pipe.st.shape.heads;
    const int shown = a.pipe.layer;
    const size_t hnn = (size_t)heads * (size_t)n * (size_t)n;
    float *weights = malloc((size_t)a.pipe.layers * hnn * sizeof *weights);
    struct grid gr;
    char *text;
    int cells = 0;

    /* Every layer's weights as the stage screen shows them (the map makes its own). */
    ck_assert_ptr_nonnull(weights);
    for (int l = 0; l < a.pipe.layers; l++) {
        ck_assert(pipeline_select_layer(&a.pipe, l, NULL) == ATTN_OK);
        for (int h = 0; h < heads; h++) {
            struct pipeline_view v;
            pipeline_stage_view(&a.pipe, STAGE_WEIGHTS, h, &v);
            for (int i = 0; i < n; i++)
                memcpy(weights + ((size_t)(l * heads + h) * n + i) * n, matrix_row(&v.m, i),
                       (size_t)n * sizeof *weights);
        }
    }
    ck_assert(pipeline_select_layer(&a.pipe, shown, NULL) == ATTN_OK);

    keys("L");
    app_key(&a, APP_KEY_BACKTAB);
    ck_assert_int_eq(a.view.map_measure, VIEW_MAP_HEATMAPS);
    ck_assert_int_eq(grid_create(&gr, 100, 30), 0);
    app_render(&a, &gr);
    for (int l = 0; l < a.pipe.layers; l++)
        for (int h = 0; h < heads; h++)
            for (int i = 0; i < n; i++)
                for (int j = 0; j <= i; j++) {
                    /* Layers down from row 7, heads across from column 9, a blank between. */
                    const struct cell *c = grid_at(&gr, 9 + h * (n + 1) + j, 7 + l * (n + 1) + i);
                    const float w = weights[((size_t)(l * heads + h) * n + i) * n + j];
                    ck_assert_int_eq(c->role, ROLE_HEAT);
                    ck_assert_int_eq(c->level, (int)(w * 255.0f + 0.5f));
                    cells++;
                }
    ck_assert_int_eq(cells, a.pipe.layers * heads * n * (n + 1) / 2);
    /* Above the diagonal the causal mask hides the keys: nothing drawn. */
    ck_assert_int_ne(grid_at(&gr, 9 + 1, 7)->role, ROLE_HEAT);
    grid_destroy(&gr);
    free(weights);
    text = frame_text(100, 30);
    ck_assert_msg(strstr(text, "Model map: the weights of every head (2 layers x 2 heads)") != NULL,
                  "%s", text);
    free(text);
    /* Where they do not fit, pooled; where not even that, the map says what they need. */
    text = frame_text(50, 16);
    ck_assert_msg(strstr(text, "tokens a cell (max-pooled)") != NULL, "%s", text);
    free(text);
    app_key(&a, APP_KEY_TAB);
    ck_assert_int_eq(a.view.map_measure, MEASURE_ENTROPY);
}
END_TEST

/* T: the sentence view, shaded by the query's weights; the list says which keys weigh most. */
START_TEST(the_sentence_view_follows_the_query)
{
    char *text;
    char want[96];
    struct pipeline_view v;

    keys("T");
    ck_assert(a.view.screen == SCREEN_SENTENCE);
    for (int i = 0; i < 3; i++)
        app_key(&a, APP_KEY_RIGHT); /* '·on' */
    app_key(&a, APP_KEY_TAB);   /* head 1 */
    keys(".");                  /* layer 1 */
    ck_assert_int_eq(a.pipe.layer, 1);
    text = frame_text(100, 30);
    ck_assert_msg(strstr(text, "What '\xc2\xb7on' attends to: layer 1, head 1 of 2") != NULL, "%s",
                  text);
    /* The heaviest key first, with the weight the stage holds. */
    pipeline_stage_view(&a.pipe, STAGE_WEIGHTS, 1, &v);
    {
        int best = 0;
        for (int j = 1; j <= 3; j++)
            if (MAT_AT(&v.m, 3, j) > MAT_AT(&v.m, 3, best))
                best = j;
        snprintf(want, sizeof want, "most weight: %s %.2f", a.pipe.key_labels[best],
                 (double)MAT_AT(&v.m, 3, best));
    }
    ck_assert_msg(strstr(text, want) != NULL, "%s (want '%s')", text, want);
    ck_assert_msg(strstr(text, "The cat sat on the mat.") != NULL, "the text itself: %s", text);
    free(text);
    /* g: the mean of the layer's heads. */
    keys("g");
    text = frame_text(100, 30);
    ck_assert_msg(strstr(text, "What '\xc2\xb7on' attends to: layer 1, the mean of the 2 heads") != NULL,
                  "%s", text);
    {
        struct pipeline_view v0;
        struct pipeline_view v1;
        pipeline_stage_view(&a.pipe, STAGE_WEIGHTS, 0, &v0);
        pipeline_stage_view(&a.pipe, STAGE_WEIGHTS, 1, &v1);
        snprintf(want, sizeof want, "The %.2f",
                 (double)((MAT_AT(&v0.m, 3, 0) + MAT_AT(&v1.m, 3, 0)) / 2.0f));
        ck_assert_msg(strstr(text, want) != NULL, "%s (want '%s')", text, want);
    }
    free(text);
    keys("g");
    /* Home, End, PgDn, PgUp move the query by jumps, within the text (issue 27, item 14). */
    app_key(&a, APP_KEY_END);
    ck_assert_int_eq(a.view.cursor_row, a.pipe.st.nq - 1);
    app_key(&a, APP_KEY_HOME);
    ck_assert_int_eq(a.view.cursor_row, 0);
    app_key(&a, APP_KEY_PAGE_DOWN);
    ck_assert_int_eq(a.view.cursor_row, a.pipe.st.nq - 1 < 20 ? a.pipe.st.nq - 1 : 20);
    app_key(&a, APP_KEY_PAGE_UP);
    ck_assert_int_eq(a.view.cursor_row, 0);
    /* e edits the sentence here too (issue 27, item 10: a lesson says so on this screen). */
    keys("e");
    ck_assert(a.view.editing && a.view.screen == SCREEN_SENTENCE);
    app_key(&a, APP_KEY_END);
    keys(" Yes");
    app_key(&a, APP_KEY_ENTER);
    ck_assert(!a.view.editing && a.view.screen == SCREEN_SENTENCE);
    ck_assert_ptr_nonnull(strstr(a.sentence, "mat. Yes"));
    app_key(&a, APP_KEY_ESCAPE);
    ck_assert(a.view.screen != SCREEN_SENTENCE);
}
END_TEST

/* N: the next tokens after each position and the logit lens, as the core has them. */
START_TEST(the_predictions_view)
{
    const struct family_model_state *g = pipeline_decoder(&a.pipe);
    char *text;
    char want[64];
    char tok[64];

    keys("N");
    ck_assert(a.view.screen == SCREEN_NEXT);
    text = frame_text(100, 30);
    ck_assert_msg(strstr(text, "Next tokens: the likeliest after each position") != NULL, "%s", text);
    model_token_display(&tiny, g->run.top_ids[8 * 3], tok, sizeof tok);
    snprintf(want, sizeof want, " %.40s %.3f", tok, (double)g->run.top_probs[8 * 3]);
    ck_assert_msg(strstr(text, want) != NULL, "%s (want '%s')", text, want);
    /* The logit lens after the cursor's position: the first token's, then (End) the last's. */
    ck_assert_msg(strstr(text, "Logit lens after 'The' (position 0)") != NULL, "%s", text);
    free(text);
    app_key(&a, APP_KEY_END);
    text = frame_text(100, 30);
    ck_assert_msg(strstr(text, "Logit lens after '.'") != NULL && strstr(text, "layer   1 ") != NULL,
                  "%s", text);
    free(text);
    app_key(&a, APP_KEY_ESCAPE);
    ck_assert(a.view.screen != SCREEN_NEXT);
    /* w chooses a lesson from the predictions and the map too (issue 50, item 4: lesson 15
       lands on N, where w did nothing) */
    keys("Nw");
    ck_assert(a.view.picker);
    app_key(&a, APP_KEY_ESCAPE);
    keys("Lw");
    ck_assert(a.view.picker);
}
END_TEST

/*
 * The sentence view wraps before a word, never before the punctuation that
 * goes with it (issue 27, item 14): at every width no line of the text
 * starts with a token that has no space of its own.
 */
START_TEST(the_sentence_view_wraps_with_the_punctuation)
{
    keys("e");
    app_key(&a, APP_KEY_CTRL('u'));
    keys("The cat sat, the dog ran, the log fell.");
    app_key(&a, APP_KEY_ENTER);
    ck_assert_msg(!a.view.editing, "%s", a.message);
    keys("T");
    app_key(&a, APP_KEY_END); /* the last query: every word seen, most with a weight beside it */
    a.view.colour = false;
    for (int w = 50; w <= 80; w++) {
        char *text = frame_text(w, 20);
        /* The text's lines: from the line after the keys under the title to "most weight". */
        char *line = strstr(text, "attends to");
        int lines = 0;
        ck_assert_ptr_nonnull(line);
        line = strchr(strchr(line, '\n') + 1, '\n') + 1;
        for (; line != NULL && *line != '\0' && strncmp(line, "most weight", 11) != 0;
             line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
            lines += *line != '\n',
            ck_assert_msg(*line != ',' && *line != '.', "%d columns: a line starts with '%c':\n%s",
                          w, *line, text);
        ck_assert_int_ge(lines, 1);
        free(text);
    }
}
END_TEST

/*
 * What does not fit says so (issue 27, item 17): a stage bar with stages
 * beyond the screen ends in " >", numbered columns too narrow for "d10"
 * show their numbers every few columns, never a row of bare "d".
 */
START_TEST(cut_bars_and_headers_say_so)
{
    char *text;
    char *line;

    keys("1");
    text = frame_text(50, 20);
    line = strstr(text, " 1 emb");
    ck_assert_ptr_nonnull(line);
    ck_assert_msg(strstr(line, " >\n") != NULL && strstr(line, " >\n") < strchr(line, '\n') + 1,
                  "%s", text);
    ck_assert_msg(strstr(text, " d d ") == NULL, "%s", text);
    ck_assert_msg(strstr(text, " 0 ") != NULL && strstr(text, " 10") != NULL, "%s", text);
    free(text);
}
END_TEST

START_TEST(a_model_takes_new_sentences)
{
    keys(".e");
    ck_assert(a.view.editing);
    app_key(&a, APP_KEY_CTRL('u'));
    keys("The dog sat.");
    app_key(&a, APP_KEY_ENTER);
    ck_assert(!a.view.editing);
    ck_assert_int_eq(a.pipe.tokens.count, 4);
    ck_assert_str_eq(a.pipe.tokens.text[1], "\xc2\xb7" "dog");
    ck_assert_int_eq(a.pipe.layer, 1); /* the layer shown stays */
    /* Longer than the model's 24 positions: refused, the last good text stays. */
    keys("e");
    app_key(&a, APP_KEY_CTRL('u'));
    for (int i = 0; i < 30; i++)
        keys(" cat");
    app_key(&a, APP_KEY_ENTER);
    ck_assert_int_eq(a.pipe.tokens.count, 4);
    ck_assert_ptr_nonnull(strstr(a.message, "reads at most 24"));
    /* What was typed is still in the editor, to be shortened (issue 23, item 13). */
    ck_assert(a.view.editing);
    ck_assert_uint_eq(strlen(a.edit), 4 * 30);
    app_key(&a, APP_KEY_BACKSPACE);
    ck_assert_uint_eq(strlen(a.edit), 4 * 30 - 1);
    app_key(&a, APP_KEY_ESCAPE);
    ck_assert(!a.view.editing);
    /* X writes the model's export: every layer. */
    keys("X");
    {
        char path[600];
        snprintf(path, sizeof path, "%s/layer1/weights.h1.csv", dir);
        ck_assert_msg(access(path, R_OK) == 0, "%s", a.message);
    }
}
END_TEST

/* Whether dir/rel can be read. */
static bool
readable(const char *rel)
{
    char path[700];

    snprintf(path, sizeof path, "%s/%s", dir, rel);
    return access(path, R_OK) == 0;
}

/* Lines in dir/rel. */
static int
lines_of(const char *rel)
{
    char path[700];
    FILE *f;
    int n = 0;
    int c;

    snprintf(path, sizeof path, "%s/%s", dir, rel);
    f = fopen(path, "r");
    ck_assert_msg(f != NULL, "%s", path);
    while ((c = fgetc(f)) != EOF)
        n += c == '\n';
    fclose(f);
    return n;
}

/*
 * x on a model writes what the screen shows under the names --export uses
 * (issue 23, item 4): a layer's stage in its layer's folder, so that x on
 * layer 1 then x on layer 0 keeps both; the map as heads.csv; the
 * predictions as next.csv and lens.csv; the sentence view the head shown.
 */
START_TEST(x_on_a_model_names_the_layer_and_the_screen)
{
    keys("6.x");
    ck_assert_msg(readable("layer1/weights.h0.csv") && readable("layer1/weights.h1.csv"), "%s",
                  a.message);
    ck_assert_ptr_nonnull(strstr(a.message, "layer1/weights.h0.csv"));
    keys(",x");
    ck_assert(readable("layer0/weights.h1.csv"));
    ck_assert(readable("layer1/weights.h1.csv")); /* the other layer's file stays */
    ck_assert(!readable("weights.h1.csv"));
    keys("2x");
    ck_assert(readable("layer0/queries.csv") && readable("layer0/values.csv"));
    keys("Lx");
    ck_assert_msg(readable("heads.csv"), "%s", a.message);
    ck_assert_int_eq(lines_of("heads.csv"), 1 + 2 * 2);
    app_key(&a, APP_KEY_ESCAPE);
    keys("Nx");
    ck_assert(readable("next.csv") && readable("lens.csv"));
    ck_assert_int_eq(lines_of("lens.csv"), 1 + 2 * 5);
    app_key(&a, APP_KEY_ESCAPE);
    keys("T");
    app_key(&a, APP_KEY_TAB);
    keys(".x");
    ck_assert_msg(readable("layer1/weights.h1.csv"), "%s", a.message);
    ck_assert_msg(strstr(a.message, "layer1/weights.h1.csv") != NULL, "%s", a.message);
    /* Everything written before is still there. */
    ck_assert(readable("layer0/weights.h0.csv") && readable("heads.csv"));
}
END_TEST

/*
 * A computation stopped from the terminal (Esc: progress_stop()) keeps
 * what was shown and says so; nothing else changes.
 */
START_TEST(a_stopped_recompute_keeps_what_was_shown)
{
    const unsigned long before = a.pipe.generation;

    progress_stop();
    keys("m");
    progress_reset();
    ck_assert_int_eq(a.pipe.generation, before);
    ck_assert(a.view.message_is_error);
    ck_assert_msg(strstr(a.message, "stopped") != NULL && strstr(a.message, "what was shown stays"),
                  "%s", a.message);
    ck_assert_int_eq(a.cfg.mask, ATTN_MASK_CAUSAL);
    keys("m");
    ck_assert_int_ne(a.pipe.generation, before);
}
END_TEST

/*
 * A model whose file is truncated or saved over while the view is open
 * (a training run in another window): m recomputes from the weights read
 * at the start, with the same numbers (issue 23, item 1: this was a
 * SIGBUS).
 */
START_TEST(a_model_file_changed_on_disk_changes_nothing)
{
    struct model m;
    struct app b;
    struct pipeline_view v;
    char folder[600];
    char path[700];
    char cmd[6000];
    float before;

    snprintf(folder, sizeof folder, "%s/copy", dir);
    snprintf(cmd, sizeof cmd, "cp -r '%s' '%s'", test_path("samples/models/minigpt"), folder);
    ck_assert_int_eq(system(cmd), 0);
    app_on_model(&b, &m, folder, NULL, "cat map sun cat map sun");
    pipeline_stage_view(&b.pipe, STAGE_WEIGHTS, 0, &v);
    before = MAT_AT(&v.m, 2, 1);
    snprintf(path, sizeof path, "%s/model.safetensors", folder);
    ck_assert_int_eq(truncate(path, 0), 0);
    app_key(&b, 'm');
    app_key(&b, 'm');
    ck_assert(!b.view.message_is_error);
    pipeline_stage_view(&b.pipe, STAGE_WEIGHTS, 0, &v);
    ck_assert(MAT_AT(&v.m, 2, 1) == before);
    app_destroy(&b);
    model_close(&m);
}
END_TEST

/*
 * The predictions follow the cursor's position (Up, Down, Home, End), say
 * which positions they show, read the logit lens after that position, and
 * with a head ablated give the predictions without it beside (issue 27,
 * item 3).
 */
START_TEST(the_predictions_follow_the_position_and_compare_an_ablation)
{
    struct model m;
    struct app b;
    char *text;
    char want[400];
    const struct family_model_state *g;
    int before_id;
    float before_prob;

    open_twelve_by_twelve(&b, &m);
    g = pipeline_decoder(&b.pipe);
    app_key(&b, 'N');
    app_key(&b, APP_KEY_END);
    ck_assert_int_eq(b.view.cursor_row, 14);
    app_key(&b, APP_KEY_UP);
    app_key(&b, APP_KEY_UP);
    ck_assert_int_eq(b.view.cursor_row, 12);
    text = frame_of(&b, 100, 30);
    snprintf(want, sizeof want, "Logit lens after '%s' (position 12)", b.pipe.query_labels[12]);
    ck_assert_msg(strstr(text, want), "%s", text);
    ck_assert_msg(strstr(text, " 12\u25b8 "), "%s", text);
    ck_assert_msg(strstr(text, "positions ") && strstr(text, " of 15"), "%s", text);
    free(text);
    app_key(&b, APP_KEY_HOME);
    ck_assert_int_eq(b.view.cursor_row, 0);
    text = frame_of(&b, 100, 30);
    ck_assert_msg(strstr(text, "   0\u25b8 ") || strstr(text, "  0\u25b8 "), "%s", text);
    ck_assert_msg(strstr(text, "positions 0-"), "%s", text);
    free(text);

    /* Ablate layer 0's head 1; the comparison is the forward without it, at the cursor. */
    before_id = g->run.top_ids[0];
    before_prob = g->run.top_probs[0];
    app_key(&b, APP_KEY_ESCAPE);
    app_key(&b, APP_KEY_TAB);
    app_key(&b, 'a');
    app_key(&b, 'N');
    app_settle(&b);
    ck_assert_int_eq(b.base_n, 15);
    ck_assert_int_eq(b.base_ids[0], before_id);
    ck_assert(b.base_probs[0] == before_prob);
    text = frame_of(&b, 120, 40);
    {
        char shown[128];
        model_output_display(&m, before_id, shown, sizeof shown);
        /* the intact model's first, then the ablated one's: the arrow's way */
        snprintf(want, sizeof want, "intact \u2192 heads ablated: %s %.3f\u2192", shown,
                 (double)before_prob);
        ck_assert_msg(strstr(text, want), "%s", text);
        ck_assert_msg(strstr(text, "\u2192?") == NULL, "a number belongs there: %s", text);
    }
    free(text);
    app_key(&b, APP_KEY_ESCAPE);
    app_key(&b, 'a'); /* back: nothing to compare */
    app_key(&b, 'N');
    app_settle(&b);
    text = frame_of(&b, 120, 40);
    ck_assert_msg(strstr(text, "heads ablated:") == NULL, "%s", text);
    free(text);
    app_destroy(&b);
    model_close(&m);
}
END_TEST

/* ':' takes where to go as the command line says it: 5.1, stage, view, query (issue 27, item 11). */
/* N, T and L reach their screens from every screen, not only from the stages (issue 38, item 9). */
START_TEST(screen_keys_work_from_every_screen)
{
    struct model m;
    struct app b;

    open_twelve_by_twelve(&b, &m);
    app_key(&b, 'T');
    ck_assert_int_eq(b.view.screen, SCREEN_SENTENCE);
    app_key(&b, 'N'); /* not the letter jump to a word starting with n */
    ck_assert_int_eq(b.view.screen, SCREEN_NEXT);
    app_key(&b, 'L');
    ck_assert_int_eq(b.view.screen, SCREEN_MAP);
    app_key(&b, 'T');
    ck_assert_int_eq(b.view.screen, SCREEN_SENTENCE);
    app_key(&b, 'L');
    ck_assert_int_eq(b.view.screen, SCREEN_MAP);
    app_key(&b, 'N');
    ck_assert_int_eq(b.view.screen, SCREEN_NEXT);
    app_key(&b, 'T');
    ck_assert_int_eq(b.view.screen, SCREEN_SENTENCE);
    app_key(&b, 's'); /* a lower-case letter still jumps to the next word it starts ("sat") */
    ck_assert_int_eq(b.view.screen, SCREEN_SENTENCE);
    ck_assert_msg(strstr(b.pipe.query_labels[b.view.cursor_row], "sat") != NULL, "%s",
                  b.pipe.query_labels[b.view.cursor_row]);
    app_destroy(&b);
    model_close(&m);
}
END_TEST

/*
 * minigpt's induction heads ablated (as lesson 8 does): after the second
 * "map" the intact model's likeliest token falls out of the ablated
 * model's top three, and the comparison says below what, never "?".
 */
START_TEST(an_ablated_token_past_the_top_is_bounded)
{
    struct model m;
    struct app b;
    char *text, *line;

    app_on_model(&b, &m, test_path("samples/models/minigpt"), NULL,
                 "cat map sun red fox ink owl jam cat map sun red fox ink owl jam");
    app_key(&b, '6');
    app_key(&b, '.');
    app_key(&b, APP_KEY_TAB); /* layer 1, head 1 */
    app_key(&b, 'a');
    app_key(&b, APP_KEY_TAB); /* head 2 */
    app_key(&b, 'a');
    ck_assert_int_eq(pipeline_decoder(&b.pipe)->ablated_heads, 2);
    app_key(&b, 'N');
    app_settle(&b);
    app_key(&b, APP_KEY_HOME);
    for (int i = 0; i < 9; i++) /* the second "map" */
        app_key(&b, APP_KEY_DOWN);
    text = frame_of(&b, 120, 40);
    line = strstr(text, "intact \u2192 heads ablated: ");
    ck_assert_msg(line != NULL, "%s", text);
    /* the intact model's likeliest, now below the ablated model's top three */
    line = strstr(line + strlen("intact \u2192 heads ablated: "), "\u2192");
    ck_assert_msg(line != NULL && strncmp(line, "\u2192<0.0", 6) == 0, "%s", text);
    ck_assert_msg(strstr(text, "\u2192?") == NULL, "%s", text);
    free(text);
    app_destroy(&b);
    model_close(&m);
}
END_TEST

START_TEST(a_head_is_reached_by_typing_it)
{
    struct model m;
    struct app b;

    open_twelve_by_twelve(&b, &m);
    for (const char *c = ":5.1"; *c; c++)
        app_key(&b, (unsigned char)*c);
    app_key(&b, APP_KEY_ENTER);
    ck_assert_msg(b.pipe.layer == 5 && b.view.head == 1, "%s", b.message);
    ck_assert_str_eq(b.message, "layer 5, head 1");
    for (const char *c = ":stage scores.h3"; *c; c++)
        app_key(&b, (unsigned char)*c);
    app_key(&b, APP_KEY_ENTER);
    ck_assert_int_eq(b.view.stage, VIEW_SCORES);
    ck_assert_int_eq(b.view.head, 3);
    ck_assert_int_eq(b.pipe.layer, 5);
    for (const char *c = ":query 4"; *c; c++)
        app_key(&b, (unsigned char)*c);
    app_key(&b, APP_KEY_ENTER);
    ck_assert_int_eq(b.view.cursor_row, 4);
    for (const char *c = ":12.0"; *c; c++)
        app_key(&b, (unsigned char)*c);
    app_key(&b, APP_KEY_ENTER);
    ck_assert_msg(strstr(b.message, "layer out of range; the layers are 0-11"), "%s", b.message);
    ck_assert(b.view.editing); /* the line stays, to be mended */
    ck_assert_int_eq(b.pipe.layer, 5);
    app_key(&b, APP_KEY_ESCAPE);
    /* Said as typed, whole (issue 35: "1.99" was "--head 99", a huge layer 9223372036854775807,
       "-1.0" went to layer 1). */
    {
        static const char *const typed[][2] = {
            { ":1.99", "head 1.99: head out of range" },
            { ":99999999999999999999.1", "head 99999999999999999999.1: give a head" },
            { ":-1.0", "head -1.0: give a head" },
            { ":1.-2", "head 1.-2: give a head" },
        };
        for (size_t t = 0; t < sizeof typed / sizeof typed[0]; t++) {
            for (const char *c = typed[t][0]; *c; c++)
                app_key(&b, (unsigned char)*c);
            app_key(&b, APP_KEY_ENTER);
            ck_assert_msg(b.message != NULL && strstr(b.message, typed[t][1]) == b.message,
                          "%s: %s", typed[t][0], b.message);
            ck_assert_int_eq(b.pipe.layer, 5);
            app_key(&b, APP_KEY_ESCAPE);
        }
    }
    for (const char *c = ":view map"; *c; c++)
        app_key(&b, (unsigned char)*c);
    app_key(&b, APP_KEY_ENTER);
    ck_assert_int_eq(b.view.screen, SCREEN_MAP);
    app_destroy(&b);
    model_close(&m);
}
END_TEST

/*
 * Grouped keys in the view (minillama: 4 query heads, 2 key heads): the grid
 * names the key head beside each query head, and ablating a head says its
 * key head stays for the head that shares it.
 */
START_TEST(shared_key_heads_are_named)
{
    struct model m;
    struct app b;
    char *text;

    app_on_model(&b, &m, test_path("samples/models/minillama"), NULL, "cat map sun cat map sun");
    app_key(&b, '6');
    app_key(&b, 'g');
    text = frame_of(&b, 120, 40);
    ck_assert_msg(strstr(text, "head 0 k0 *") && strstr(text, "head 1 k0") &&
                      strstr(text, "head 2 k1") && strstr(text, "head 3 k1"),
                  "%s", text);
    free(text);
    app_key(&b, 'a');
    ck_assert_ptr_nonnull(b.view.message);
    ck_assert_msg(strstr(b.message, "head 0 of layer 0 ablated (its context zeroed); key head "
                                    "0 stays, 1 other head reads it"),
                  "%s", b.message);
    app_destroy(&b);
    model_close(&m);
}
END_TEST

/*
 * The model map reaches every layer of a 300-layer model (issue 23, item
 * 11: it stopped at 255 while the bar said 0-299).
 */
START_TEST(the_model_map_reaches_every_layer)
{
    const struct decoder_config shape = {
        .n_layer = 300, .n_head = 2, .d_model = 8, .n_ctx = 16, .vocab_size = 317,
        .d_mlp = 32, .eps = 1e-5f, .scale_attn_weights = true, .scale_by_layer = false,
        .tied = true,
    };
    struct model m;
    struct app b;
    char folder[600];
    char *text;

    snprintf(folder, sizeof folder, "%s/deep", dir);
    ck_assert_int_eq(
        gpt2_random_folder_with(folder, &shape, 0.2f, 3, test_path("tests/fixtures/gpt2/tiny")), 0);
    app_on_model(&b, &m, folder, NULL, "the cat sat");
    app_key(&b, 'L');
    for (int i = 0; i < 320; i++)
        app_key(&b, APP_KEY_DOWN);
    ck_assert_int_eq(b.view.map_row, 299);
    {
        struct grid g;
        FILE *f;
        size_t len = 0;
        text = NULL;
        f = open_memstream(&text, &len);
        ck_assert_int_eq(grid_create(&g, 100, 30), 0);
        app_render(&b, &g);
        grid_dump_text(&g, f);
        fclose(f);
        grid_destroy(&g);
    }
    ck_assert_msg(strstr(text, "layer 299") != NULL && strstr(text, "300 layers x 2 heads") != NULL,
                  "%s", text);
    /* The layers left out are said, with the keys that reach them (issue 38, item 4). */
    ck_assert_msg(strstr(text, " of 0-299 (Up Down PgUp PgDn)") != NULL, "%s", text);
    free(text);
    app_key(&b, APP_KEY_ENTER);
    ck_assert_int_eq(b.pipe.layer, 299);
    /* The logit lens shows the last layers, says so, and , walks up to the first. */
    app_key(&b, 'N');
    text = frame_of(&b, 100, 30);
    ck_assert_msg(strstr(text, " of 0-299 (, .): each layer") != NULL, "%s", text);
    ck_assert_msg(strstr(text, "layer 299 ") != NULL && strstr(text, "layer   0 ") == NULL, "%s",
                  text);
    free(text);
    for (int i = 0; i < 299; i++)
        app_key(&b, ',');
    ck_assert_int_eq(b.pipe.layer, 0);
    text = frame_of(&b, 100, 30);
    ck_assert_msg(strstr(text, ", layers 0-") != NULL && strstr(text, "layer   0 ") != NULL, "%s",
                  text);
    free(text);
    app_destroy(&b);
    model_close(&m);
}
END_TEST

/* A GGUF file's view says what it opened: the quantization mix (issue 39, item 5). */
START_TEST(a_gguf_says_what_it_holds)
{
    static struct model m;
    struct app b;

    app_on_model(&b, &m, test_path("tests/fixtures/decoders/qwen3-tok-gguf/model.gguf"), NULL, "the cat");
    ck_assert_msg(b.view.message != NULL &&
                      strstr(b.view.message, "model.gguf, GGUF: Q8_0 14 tensors, F32 10; its "
                                             "tokenizer inside.") != NULL,
                  "%s", b.view.message != NULL ? b.view.message : "(none)");
    app_destroy(&b);
    model_close(&m);
}
END_TEST

/*
 * A folder holding a GGUF and a tokenizer.json beside it (in the test's own
 * folder): the view names the file it read.
 */
START_TEST(a_gguf_folder_names_its_tokenizer_file)
{
    static struct model m;
    struct app b;
    char path[512], gguf[512], real[PATH_MAX];

    snprintf(gguf, sizeof gguf, "%s/model.gguf", dir);
    ck_assert_int_eq(
        symlink(realpath(test_path("tests/fixtures/decoders/qwen3-tok-gguf/model.gguf"), real), gguf),
        0);
    snprintf(path, sizeof path, "%s/tokenizer.json", dir);
    ck_assert_int_eq(symlink(realpath(test_path("tests/fixtures/decoders/qwen3/tokenizer.json"), real),
                             path),
                     0);
    app_on_model(&b, &m, dir, NULL, "the cat");
    ck_assert_msg(b.view.message != NULL &&
                      strstr(b.view.message, "its tokenizer from tokenizer.json.") != NULL,
                  "%s", b.view.message != NULL ? b.view.message : "(none)");
    app_destroy(&b);
    model_close(&m);
}
END_TEST

static Suite *
app_model_suite(void)
{
    Suite *s = suite_create("app_model");
    TCase *tc;

    tc = tcase_create("book");
    tcase_set_timeout(tc, 60);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, shared_key_heads_are_named);
    tcase_add_test(tc, a_head_is_reached_by_typing_it);
    tcase_add_test(tc, an_ablated_token_past_the_top_is_bounded);
    tcase_add_test(tc, screen_keys_work_from_every_screen);
    tcase_add_test(tc, the_predictions_follow_the_position_and_compare_an_ablation);
    suite_add_tcase(s, tc);
    tc = tcase_create("model");
    tcase_set_timeout(tc, 60);
    tcase_add_checked_fixture(tc, setup_model, teardown_model);
    tcase_add_test(tc, a_model_steps_through_its_layers);
    tcase_add_test(tc, a_layer_stepped_to_takes_its_own_scale);
    tcase_add_test(tc, a_models_text_offers_only_its_keys);
    tcase_add_test(tc, a_deltanet_head_is_ablated_and_restored);
    tcase_add_test(tc, a_gguf_says_what_it_holds);
    tcase_add_test(tc, a_gguf_folder_names_its_tokenizer_file);
    tcase_add_test(tc, a_model_keeps_only_the_knobs_it_has);
    tcase_add_test(tc, a_model_explains_its_cells);
    tcase_add_test(tc, a_model_takes_new_sentences);
    tcase_add_test(tc, a_model_head_is_ablated_and_restored);
    tcase_add_test(tc, a_switches_an_expert_off_on_the_router);
    tcase_add_test(tc, b_switches_the_sinks_off);
    tcase_add_test(tc, the_model_map_opens_a_head);
    tcase_add_test(tc, the_model_map_draws_every_head_when_it_fits);
    tcase_add_test(tc, the_sentence_view_follows_the_query);
    tcase_add_test(tc, the_predictions_view);
    tcase_add_test(tc, the_sentence_view_wraps_with_the_punctuation);
    tcase_add_test(tc, cut_bars_and_headers_say_so);
    tcase_add_test(tc, x_on_a_model_names_the_layer_and_the_screen);
    tcase_add_test(tc, a_stopped_recompute_keeps_what_was_shown);
    tcase_add_test(tc, a_model_file_changed_on_disk_changes_nothing);
    tcase_add_test(tc, the_model_map_reaches_every_layer);
    suite_add_tcase(s, tc);
    return s;
}

TEST_MAIN(app_model_suite)
