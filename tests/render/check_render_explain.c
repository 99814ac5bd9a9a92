/*
 * check_render_explain.c: what the renderer says of a stage and a cell
 * (render/explain.c, inspect.c, parts/): every view stage named,
 * explained and inspected for the book's variants, a trained GPT-2 and a
 * Llama-style model; captions and texts that follow the configuration;
 * packed weights read back as the float32 ones.
 */
#include "config.h"

#include "attnscope/formats/quants.h"
#include "render_harness.h"
#include "render/parts/parts.h"

START_TEST(inspector_spells_out_each_stage)
{
    struct attention_config cfg;
    struct pipeline p;
    char buf[4096];

    attention_config_init(&cfg);
    cfg.dropout = 0.5;
    run(&p, &cfg, "Your journey starts with one step");
    inspect_cell(&p, VIEW_SCORES, 0, 1, 0, false, 4, false, buf, sizeof buf);
    ck_assert_msg(strstr(buf, "score[journey][Your] = q_journey . k_Your") != NULL, "%s", buf);
    inspect_cell(&p, VIEW_WEIGHTS, 1, 2, 1, false, 6, false, buf, sizeof buf);
    ck_assert_msg(strstr(buf, "weight[starts][journey]") != NULL && strstr(buf, "sum ") != NULL, "%s",
                  buf);
    inspect_cell(&p, VIEW_DROPOUT, 0, 1, 1, false, 4, false, buf, sizeof buf);
    ck_assert_msg(strstr(buf, "draw u = ") != NULL && strstr(buf, "sums to") != NULL, "%s", buf);
    inspect_cell(&p, VIEW_MASK, 0, 1, 4, false, 4, false, buf, sizeof buf);
    ck_assert_msg(strstr(buf, "hidden, the score becomes -inf") != NULL, "%s", buf);
    inspect_cell(&p, VIEW_CONTEXT, 1, 3, 0, false, 3, false, buf, sizeof buf);
    ck_assert_msg(strstr(buf, "... (6 terms in all)") != NULL, "%s", buf);
    pipeline_destroy(&p);

    cfg.dropout = 0.0;
    run(&p, &cfg, "Your journey starts with one step");
    inspect_cell(&p, VIEW_OUTPUT, 0, 0, 0, false, 4, true, buf, sizeof buf);
    ck_assert_msg(strstr(buf, "out[Your][0] = 0.3190") != NULL && strstr(buf, "\xc3\x97") != NULL,
                  "%s", buf);
    pipeline_destroy(&p);
}
END_TEST

/* With the positional encoding the view goes as it is computed: E, then E + PE (issue 13, item 4). */
START_TEST(positional_encoding_in_the_order_it_is_computed)
{
    struct attention_config cfg;
    struct pipeline p;
    struct view v;
    char buf[2048];
    char *text;

    attention_config_init(&cfg);
    cfg.positional = true;
    run(&p, &cfg, "Your journey starts with one step");
    ck_assert_int_eq(explain_pipeline_stage(&p, VIEW_EMBEDDINGS, false), STAGE_EMBEDDINGS);
    ck_assert_int_eq(explain_pipeline_stage(&p, VIEW_POSITIONAL, false), STAGE_INPUTS);
    view_init(&v);
    v.stage = VIEW_EMBEDDINGS;
    text = rendered(&p, &v, 100, 30, false);
    /* Your's d1: 0.15 as looked up, 1.15 with cos 0 = 1 added. */
    ck_assert_msg(strstr(text, "0.1500") != NULL && strstr(text, "1.1500") == NULL, "%s", text);
    free(text);
    v.stage = VIEW_POSITIONAL;
    text = rendered(&p, &v, 100, 30, false);
    ck_assert_msg(strstr(text, "1.1500") != NULL, "%s", text);
    free(text);
    view_destroy(&v);
    explain_text(&p, VIEW_EMBEDDINGS, buf, sizeof buf);
    ck_assert_msg(strstr(buf, "The next stage adds the positional encoding") != NULL, "%s", buf);
    inspect_cell(&p, VIEW_POSITIONAL, 0, 1, 0, false, 4, false, buf, sizeof buf);
    ck_assert_msg(strstr(buf, "x[journey][0] = E 0.5500 + PE(1, 0) 0.8415 = 1.3915") != NULL, "%s",
                  buf);
    pipeline_destroy(&p);
    /* Without it, stage 1 is the inputs themselves. */
    cfg.positional = false;
    run(&p, &cfg, "Your journey starts with one step");
    ck_assert_int_eq(explain_pipeline_stage(&p, VIEW_EMBEDDINGS, false), STAGE_INPUTS);
    pipeline_destroy(&p);
}
END_TEST

/* Off the script a lesson's narration is dimmed: it no longer matches the screen (item 19). */
START_TEST(narration_dims_off_the_script)
{
    struct attention_config cfg;
    struct pipeline p;
    struct view v;
    char *text;
    const char *styles;
    const char *at;
    int row = 0;

    attention_config_init(&cfg);
    run(&p, &cfg, "Your journey starts with one step");
    view_init(&v);
    v.stage = VIEW_WEIGHTS;
    v.narration = "Narration about the weights.";
    v.walk_title = "Lesson";
    v.step_title = "Step";
    v.steps = 1;
    for (int following = 1; following >= 0; following--) {
        v.following = following;
        text = rendered(&p, &v, 100, 30, true);
        at = strstr(text, "Narration about");
        ck_assert_ptr_nonnull(at);
        for (const char *c = text; c < at; c++)
            row += *c == '\n';
        /* The same row of the style dump: 'd' is dim, '.' plain text. */
        styles = strstr(text, "--- styles\n") + strlen("--- styles\n");
        for (int r = 0; r < row; r++)
            styles = strchr(styles, '\n') + 1;
        ck_assert_msg(styles[0] == (following ? '.' : 'd'), "following %d: style '%c'", following,
                      styles[0]);
        free(text);
        row = 0;
    }
    view_destroy(&v);
    pipeline_destroy(&p);
}
END_TEST

/* The mask text on a variant without a mask does not say "again" (issue 13, item 19). */
START_TEST(mask_text_fits_the_variant)
{
    struct attention_config cfg;
    struct pipeline p;
    char buf[1024];

    attention_config_init(&cfg);
    attention_config_set_variant(&cfg, ATTN_SIMPLE);
    run(&p, &cfg, "Your journey starts with one step");
    explain_text(&p, VIEW_MASK, buf, sizeof buf);
    ck_assert_msg(strstr(buf, "has no mask") != NULL && strstr(buf, "again") == NULL, "%s", buf);
    pipeline_destroy(&p);
    attention_config_init(&cfg);
    cfg.mask = ATTN_MASK_NONE; /* mha with its mask switched off */
    run(&p, &cfg, "Your journey starts with one step");
    explain_text(&p, VIEW_MASK, buf, sizeof buf);
    ck_assert_msg(strstr(buf, "hide the future again") != NULL, "%s", buf);
    pipeline_destroy(&p);
}
END_TEST

/* Column labels that would be cut alike ("to" for tok0 ... tok29) show their position (item 11). */
START_TEST(cut_labels_show_positions)
{
    struct attention_config cfg;
    struct pipeline p;
    struct view v;
    char sentence[400];
    size_t used = 0;
    char *text;

    for (int i = 0; i < 30; i++)
        used += (size_t)snprintf(sentence + used, sizeof sentence - used, "%stok%d", i ? " " : "", i);
    attention_config_init(&cfg);
    run(&p, &cfg, sentence);
    view_init(&v);
    v.stage = VIEW_WEIGHTS;
    text = rendered(&p, &v, 100, 30, false);
    ck_assert_msg(strstr(text, " 10 11 12 ") != NULL && strstr(text, " to to ") == NULL, "%s", text);
    free(text);
    view_destroy(&v);
    pipeline_destroy(&p);
}
END_TEST

/*
 * Words cut to two columns that would read alike ("st" for starts and step)
 * are abbreviated apart, not numbered (issue 38, item 13).
 */
START_TEST(cut_words_are_abbreviated_apart)
{
    struct attention_config cfg;
    struct pipeline p;
    struct view v;
    char *text;

    attention_config_init(&cfg);
    run(&p, &cfg, "Your journey starts with one step");
    view_init(&v);
    v.stage = VIEW_WEIGHTS;
    v.grid_heads = true;
    text = rendered(&p, &v, 56, 24, false);
    ck_assert_msg(strstr(text, "Yo jo ss wi on sp") != NULL, "%s", text);
    free(text);
    view_destroy(&v);
    pipeline_destroy(&p);
}
END_TEST

/*
 * Q K V's lettered columns too narrow for q0 ... q31: each group's letter at
 * its start, then its numbers every few columns, never "q q q" (issue 38,
 * item 15).
 */
START_TEST(lettered_columns_are_numbered_by_group)
{
    struct attention_config cfg;
    struct pipeline p;
    struct view v;
    char *text;

    attention_config_init(&cfg);
    cfg.d_out = 64;
    run(&p, &cfg, "Your journey starts with one step");
    view_init(&v);
    v.stage = VIEW_QKV;
    text = rendered(&p, &v, 100, 30, false);
    ck_assert_msg(strstr(text, " q ") != NULL && strstr(text, " k ") != NULL, "%s", text);
    ck_assert_msg(strstr(text, " q q ") == NULL && strstr(text, " k k ") == NULL, "%s", text);
    free(text);
    view_destroy(&v);
    pipeline_destroy(&p);
}
END_TEST

/* A knob that changes nothing here says why and what to press (issue 13, item 10). */
START_TEST(scaling_by_one_says_so)
{
    struct attention_config cfg;
    struct pipeline p;
    char buf[1024];
    int key_dir;
    const struct knob *slash = knob_for_key('/', &key_dir);

    ck_assert_ptr_nonnull(slash);
    attention_config_init(&cfg); /* mha, d_out 2, 2 heads: d_k 1 */
    run(&p, &cfg, "Your journey starts with one step");
    explain_text(&p, VIEW_SCALED, buf, sizeof buf);
    ck_assert_msg(strstr(buf, "Here d_k is 1 and sqrt(1) = 1, so / changes nothing") != NULL, "%s", buf);
    knob_said(slash, &p, buf, sizeof buf);
    ck_assert_msg(strstr(buf, "sqrt(1) = 1 changes nothing here") != NULL, "%s", buf);
    pipeline_destroy(&p);
    cfg.d_out = 8; /* d_k 4 */
    run(&p, &cfg, "Your journey starts with one step");
    explain_text(&p, VIEW_SCALED, buf, sizeof buf);
    ck_assert_msg(strstr(buf, "changes nothing") == NULL, "%s", buf);
    knob_said(slash, &p, buf, sizeof buf);
    ck_assert_str_eq(buf, "scores divided by sqrt(d_k)");
    pipeline_destroy(&p);
}
END_TEST

/* A made-up token keeps its '*' on every stage, not only the embeddings (issue 13, item 6). */
START_TEST(made_up_tokens_stay_marked)
{
    struct attention_config cfg;
    struct pipeline p;
    struct view v;
    char *text;

    attention_config_init(&cfg);
    run(&p, &cfg, "Your journey starts with one leap");
    view_init(&v);
    for (int s = 0; s < VIEW_STAGE_COUNT; s++) {
        if (!explain_stage_present(&p, (enum view_stage)s))
            continue;
        v.stage = (enum view_stage)s;
        text = rendered(&p, &v, 100, 30, false);
        ck_assert_msg(strstr(text, "\nleap*") != NULL, "stage %s: %s",
                      explain_stage_name((enum view_stage)s), text);
        free(text);
    }
    view_destroy(&v);
    pipeline_destroy(&p);
}
END_TEST

/* Given Q, K, V with fewer queries than keys: the missing query cells are blank, not NaN (item 5). */
START_TEST(absent_queries_are_blank_not_nan)
{
    struct qkv_given q;
    struct attention_config cfg;
    struct pipeline p;
    struct pipeline_source src = { .qkv = &q };
    struct attn_error err;
    struct heatmap_spec spec;
    struct view v;
    char *text;

    ck_assert_msg(qkv_load(&q, test_path("samples/soft-dictionary"), &err) == ATTN_OK, "%s", err.msg);
    attention_config_init(&cfg);
    attention_config_set_variant(&cfg, ATTN_SIMPLE);
    cfg.scale_dim = 4;
    ck_assert_msg(pipeline_create(&p, &cfg, &src, &err) == ATTN_OK, "%s", err.msg);
    view_init(&v);
    v.stage = VIEW_QKV;
    ck_assert_int_eq(view_stage_spec(&v, &p, VIEW_QKV, 0, &spec), 0);
    ck_assert_int_eq(spec.m->rows, 4);
    ck_assert_int_eq(heatmap_kind(&spec, 3, 0), HEAT_ABSENT); /* query 4 does not exist */
    ck_assert_int_eq(heatmap_kind(&spec, 3, 3), HEAT_VALUE);  /* key 4 does */
    ck_assert_int_eq(heatmap_kind(&spec, 2, 0), HEAT_VALUE);
    text = rendered(&p, &v, 100, 30, false);
    ck_assert_msg(strstr(text, "nan") == NULL && strstr(text, "NaN") == NULL, "%s", text);
    free(text);
    view_destroy(&v);
    pipeline_destroy(&p);
    qkv_destroy(&q);
}
END_TEST

/* A row with an infinite score is nan, and the panel says why instead of "sums to 1". */
START_TEST(inspector_explains_nan_rows)
{
    const char *csv = "token,d0,d1,d2\nbig,1e30,1e30,1e30\nsmall,-1e30,2e30,1e30\n";
    struct attention_config cfg;
    struct pipeline p;
    struct vocab big;
    struct pipeline_source src = { .sentence = "big small big", .vocab = &big };
    struct attn_error err;
    char buf[4096];

    test_tmpdir_setup();
    ck_assert_int_eq(vocab_load_csv(&big, test_write_file(dir, "big.csv", csv, strlen(csv)), &err),
                     ATTN_OK);
    attention_config_init(&cfg);
    attention_config_set_variant(&cfg, ATTN_SIMPLE);
    ck_assert_msg(pipeline_create(&p, &cfg, &src, &err) == ATTN_OK, "%s", err.msg);
    inspect_cell(&p, VIEW_WEIGHTS, 0, 0, 0, false, 4, false, buf, sizeof buf);
    ck_assert_msg(strstr(buf, "sum to 1") == NULL, "%s", buf);
    ck_assert_msg(strstr(buf, "the largest score is +inf and exp(inf - inf) is nan") != NULL, "%s",
                  buf);
    pipeline_destroy(&p);
    vocab_destroy(&big);
    test_tmpdir_teardown();
}
END_TEST

/* The core's formula, the view's and the inspector's describe one divisor. */
START_TEST(scaling_is_described_once)
{
    static const struct {
        int scale_dim;
        double temperature;
        bool scale;
        const char *core, *view, *inspector;
    } cases[] = {
        { 16, 2.0, true, "masked / (sqrt(--scale-dim) T)", "w_ij / (sqrt(--scale-dim) T) = w_ij / 8",
          "divided by sqrt(--scale-dim) = sqrt(16) times the temperature." },
        { 16, 1.0, true, "masked / sqrt(--scale-dim)", "w_ij / sqrt(--scale-dim) = w_ij / sqrt(16)",
          "divided by sqrt(--scale-dim) = sqrt(16)." },
        { 0, 1.0, true, "masked / sqrt(d_k)", "w_ij / sqrt(d_k) = w_ij / sqrt(1)",
          "divided by sqrt(d_k) = sqrt(1)." },
        { 0, 2.0, false, "masked / T", "w_ij / T = w_ij / 2", "scaling is off: divided by T only." },
    };

    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        struct attention_config cfg;
        struct pipeline p;
        char buf[1024];

        attention_config_init(&cfg);
        cfg.scale_dim = cases[k].scale_dim;
        cfg.temperature = cases[k].temperature;
        cfg.scale = cases[k].scale;
        run(&p, &cfg, "Your journey starts with one step");
        ck_assert_str_eq(pipeline_stage_formula(&p, STAGE_SCALED), cases[k].core);
        explain_formula(&p, VIEW_SCALED, buf, sizeof buf);
        ck_assert_str_eq(buf, cases[k].view);
        inspect_cell(&p, VIEW_SCALED, 0, 1, 0, false, 4, false, buf, sizeof buf);
        ck_assert_msg(strstr(buf, cases[k].inspector) != NULL, "case %zu: %s", k, buf);
        pipeline_destroy(&p);
    }
}
END_TEST

/* Stage s of p has a formula, an explanation and an inspector for cell (row, col) of head. */
static void
expect_explained(const struct pipeline *p, enum view_stage s, int head, int row, int col)
{
    const char *name = explain_stage_name(s);
    char buf[2048];

    explain_formula(p, s, buf, sizeof buf);
    ck_assert_msg(buf[0] != '\0', "stage %s has no formula", name);
    explain_text(p, s, buf, sizeof buf);
    ck_assert_msg(strlen(buf) > 40, "stage %s has no explanation", name);
    inspect_cell(p, s, head, row, col, false, 4, false, buf, sizeof buf);
    ck_assert_msg(buf[0] != '\0', "stage %s has no inspector", name);
}

/* The pipeline of the model at path on text, showing its layer 1. */
static void
model_at_on_layer_1(struct pipeline *p, const struct attention_config *cfg, struct model *m,
                    const char *path, const char *text)
{
    struct pipeline_source src;
    struct attn_error err;

    ck_assert_msg(model_open(m, path, NULL, &err) == ATTN_OK, "%s", err.msg);
    memset(&src, 0, sizeof src);
    src.sentence = text;
    src.family = &family_model;
    src.model = m;
    src.top = 2;
    ck_assert_msg(pipeline_create(p, cfg, &src, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_int_eq(pipeline_select_layer(p, 1, &err), ATTN_OK);
}

/* The pipeline of the model in the folder rel (from the top of the tree), as above. */
static void
model_on_layer_1(struct pipeline *p, const struct attention_config *cfg, struct model *m,
                 const char *rel, const char *text)
{
    model_at_on_layer_1(p, cfg, m, test_path(rel), text);
}

/*
 * The stage bar shows the variant's class (issue 38, item 11): simple has no
 * mask, scaling, dropout, concatenation or output projection, v2 scales,
 * causal masks and drops, wrapper concatenates, mha projects; a knob that
 * turns one on brings its stage back.
 */
START_TEST(the_stages_are_the_variants)
{
    static const struct {
        enum attn_variant v;
        bool mask, scaled, dropout, concat, output;
    } want[] = {
        { ATTN_SIMPLE, false, false, false, false, false },
        { ATTN_V2, false, true, false, false, false },
        { ATTN_CAUSAL, true, true, true, false, false },
        { ATTN_WRAPPER, true, true, true, true, false },
        { ATTN_MHA, true, true, true, true, true },
    };
    struct attention_config cfg;
    struct pipeline p;

    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        attention_config_init(&cfg);
        attention_config_set_variant(&cfg, want[i].v);
        run(&p, &cfg, "Your journey starts with one step");
        ck_assert_int_eq(explain_stage_present(&p, VIEW_MASK), want[i].mask);
        ck_assert_int_eq(explain_stage_present(&p, VIEW_SCALED), want[i].scaled);
        ck_assert_int_eq(explain_stage_present(&p, VIEW_DROPOUT), want[i].dropout);
        ck_assert_int_eq(explain_stage_present(&p, VIEW_CONCAT), want[i].concat);
        ck_assert_int_eq(explain_stage_present(&p, VIEW_OUTPUT), want[i].output);
        ck_assert(explain_stage_present(&p, VIEW_WEIGHTS));
        ck_assert(explain_stage_present(&p, VIEW_CONTEXT));
        pipeline_destroy(&p);
    }
    /* Breaking simple: a mask, scaling and dropout turned on are shown. */
    attention_config_init(&cfg);
    attention_config_set_variant(&cfg, ATTN_SIMPLE);
    cfg.mask = ATTN_MASK_CAUSAL;
    cfg.scale = true;
    cfg.dropout = 0.5;
    run(&p, &cfg, "Your journey starts with one step");
    ck_assert(explain_stage_present(&p, VIEW_MASK));
    ck_assert(explain_stage_present(&p, VIEW_SCALED));
    ck_assert(explain_stage_present(&p, VIEW_DROPOUT));
    pipeline_destroy(&p);
}
END_TEST

/* Every view stage has its name, title, formula and inspector, and names round-trip. */
/* A stage of a mixer beyond softmax attention (Qwen3.5's gate, Gated DeltaNet): check_qwen35's. */
static bool
mixers_own(enum view_stage s)
{
    return (PIPELINE_MIXER_STAGES & FAMILY_STAGE(explain_pipeline_stage(NULL, s, false))) != 0;
}

START_TEST(every_view_stage_is_complete)
{
    struct attention_config cfg;
    struct pipeline p;
    char buf[2048];
    char names[512];

    attention_config_init(&cfg);
    cfg.positional = true;
    run(&p, &cfg, "Your journey starts with one step");
    explain_stage_names(" ", names, sizeof names);
    for (int s = 0; s < VIEW_STAGE_COUNT; s++) {
        enum view_stage back;
        const char *name = explain_stage_name((enum view_stage)s);
        ck_assert_int_eq(explain_stage_parse(name, &back), 0);
        ck_assert_int_eq(back, s);
        ck_assert_msg(strstr(names, name) != NULL, "%s not in '%s'", name, names);
        if (PIPELINE_BLOCK_STAGES & FAMILY_STAGE(explain_pipeline_stage(&p, (enum view_stage)s, false))) {
            /* A transformer block's own: a trained model's (below), not the book's. */
            ck_assert(!explain_stage_present(&p, (enum view_stage)s));
            continue;
        }
        if (s == VIEW_OUTDROP || s == VIEW_AVERAGE || s == VIEW_SOURCE || s == VIEW_CACHE) {
            /*
             * The notes' class alone drops its output, nn-mha alone averages, a source is
             * cross-attention's (below), a KV cache a trained model's.
             */
            ck_assert(!explain_stage_present(&p, (enum view_stage)s));
            continue;
        }
        ck_assert(explain_stage_present(&p, (enum view_stage)s));
        {
            char title[160];
            ck_assert_str_ne(explain_title(NULL, (enum view_stage)s, title, sizeof title), "?");
        }
        expect_explained(&p, (enum view_stage)s, 0, 1, 0);
    }
    pipeline_destroy(&p);
    attention_config_set_variant(&cfg, ATTN_NOTES);
    cfg.heads = 3;
    cfg.dropout = 0.5;
    run(&p, &cfg, "Your journey starts with one step");
    ck_assert(explain_stage_present(&p, VIEW_OUTDROP));
    ck_assert(!explain_stage_present(&p, VIEW_DROPOUT));
    expect_explained(&p, VIEW_OUTDROP, 0, 2, 1);
    inspect_cell(&p, VIEW_OUTDROP, 0, 2, 1, false, 4, false, buf, sizeof buf);
    ck_assert_msg(strstr(buf, p.st.keep[2 * 3 + 1] ? "kept, scaled by 1/(1-p) = 2" : "dropped, set to 0"),
                  "%s", buf);
    explain_text(&p, VIEW_MASK, buf, sizeof buf);
    ck_assert_ptr_nonnull(strstr(buf, "no mask"));
    pipeline_destroy(&p);
    attention_config_set_variant(&cfg, ATTN_NN_MHA);
    run(&p, &cfg, "Your journey starts with one step");
    ck_assert(explain_stage_present(&p, VIEW_AVERAGE));
    expect_explained(&p, VIEW_AVERAGE, 0, 2, 1);
    inspect_cell(&p, VIEW_AVERAGE, 0, 2, 1, false, 4, false, buf, sizeof buf);
    ck_assert_msg(strstr(buf, ") / 3\n") != NULL, "%s", buf);
    inspect_cell(&p, VIEW_QKV, 1, 2, 1, false, 4, false, buf, sizeof buf); /* head 1's k0 */
    ck_assert_msg(strstr(buf, "row 4 of W_k (in_proj_weight)") != NULL, "%s", buf);
    pipeline_destroy(&p);
    /* Across sentences: the source's stage, keys spelled from its rows, no mask said plainly. */
    {
        struct pipeline_source src = {
            .sentence = "with one step",
            .vocab = &book,
            .source = "Your journey starts with one",
        };
        struct attn_error err;
        cfg.cross = true;
        attention_config_set_variant(&cfg, ATTN_MHA);
        cfg.heads = 2;
        cfg.d_out = 4;
        ck_assert_msg(pipeline_create(&p, &cfg, &src, &err) == ATTN_OK, "%s", err.msg);
        ck_assert(explain_stage_present(&p, VIEW_SOURCE));
        expect_explained(&p, VIEW_SOURCE, 0, 4, 1);
        inspect_cell(&p, VIEW_SOURCE, 0, 4, 1, false, 4, false, buf, sizeof buf);
        /* 0.25 + PE(4, 1) = cos 4: each sentence counts its positions from 0. */
        ck_assert_msg(strstr(buf, "x_src[one][1] = -0.4036") != NULL && strstr(buf, "plus PE") != NULL, "%s", buf);
        inspect_cell(&p, VIEW_QKV, 0, 4, 2, false, 4, false, buf, sizeof buf); /* the source's 'one': k0 */
        ck_assert_msg(strstr(buf, "k[one][0] (head 0)") != NULL && strstr(buf, "x_src[one] . row 0 of W_k") != NULL,
                      "%s", buf);
        explain_formula(&p, VIEW_QKV, buf, sizeof buf);
        ck_assert_str_eq(buf, "Q = x W_q^T,  K = x_src W_k^T,  V = x_src W_v^T");
        explain_text(&p, VIEW_MASK, buf, sizeof buf);
        ck_assert_ptr_nonnull(strstr(buf, "Across sentences there is no mask"));
        cfg.cross = false;
    }
    ck_assert_int_eq(explain_stage_parse("nope", &(enum view_stage){ 0 }), -1);
    ck_assert_int_eq(explain_stage_parse("", &(enum view_stage){ 0 }), -1);
    pipeline_destroy(&p);
}
END_TEST

/* A trained model has every view stage but dropout, each explained and inspected. */
START_TEST(a_trained_models_stages_are_explained)
{
    struct attention_config cfg;
    struct pipeline p;
    char buf[2048];

    attention_config_init(&cfg);
    {
        static struct model tiny;
        model_on_layer_1(&p, &cfg, &tiny, "tests/fixtures/gpt2/tiny", "The cat sat on the mat.");
        for (int s = 0; s < VIEW_STAGE_COUNT; s++) {
            const char *name = explain_stage_name((enum view_stage)s);
            if (s == VIEW_DROPOUT || s == VIEW_OUTDROP || s == VIEW_AVERAGE || s == VIEW_SOURCE ||
                s == VIEW_QNORM || s == VIEW_KNORM || s == VIEW_QROPE || s == VIEW_KROPE ||
                s == VIEW_GATE || s == VIEW_SWIGLU || s == VIEW_GEGLU || s == VIEW_OUTNORM ||
                s == VIEW_MLPNORM || s == VIEW_ROUTER || s == VIEW_SHARED ||
                mixers_own((enum view_stage)s)) {
                ck_assert(!explain_stage_present(&p, (enum view_stage)s));
                continue;
            }
            ck_assert_msg(explain_stage_present(&p, (enum view_stage)s), "%s", name);
            expect_explained(&p, (enum view_stage)s, 1, 2, 3);
        }
        /* The inspector's numbers are the stages' own (layer norm: spelled from its row). */
        inspect_cell(&p, VIEW_PRE_MLP_NORM, 0, 2, 3, false, 4, false, buf, sizeof buf);
        ck_assert_msg(strstr(buf, "ln2[\xc2\xb7sat][3] = ") && strstr(buf, "row residual1: mean "),
                      "%s", buf);
        inspect_cell(&p, VIEW_RESIDUAL2, 0, 2, 3, false, 4, false, buf, sizeof buf);
        ck_assert_msg(strstr(buf, "the last block's output: ln_f reads it"), "%s", buf);
        {
            char want[64];
            char got[32];
            snprintf(got, sizeof got, "%.4f", (double)MAT_AT(&p.block.gelu, 2, 3));
            snprintf(want, sizeof want, ") = %s", got);
            inspect_cell(&p, VIEW_GELU, 0, 2, 3, false, 4, false, buf, sizeof buf);
            ck_assert_msg(strstr(buf, want) != NULL, "%s (want '%s')", buf, want);
        }
        pipeline_destroy(&p);
        model_close(&tiny);
    }
}
END_TEST

/*
 * A Gated DeltaNet layer (Qwen3.5's, the whole model's folder: four value
 * heads, two attention heads): each of its stages explained and inspected;
 * the effective attention has the value heads' count, and a cell's panel
 * takes it apart into the decay and the corrections that give its number.
 */
START_TEST(a_deltanet_layer_is_explained)
{
    struct attention_config cfg;
    struct pipeline p;
    struct attn_error err;
    static struct model q;
    struct pipeline_view v;
    char buf[2048], want[96], num[32];

    attention_config_init(&cfg);
    model_on_layer_1(&p, &cfg, &q, "tests/fixtures/decoders/qwen35-vl", "our journey");
    ck_assert_int_eq(pipeline_select_layer(&p, 0, &err), ATTN_OK);
    for (int s = 0; s < VIEW_STAGE_COUNT; s++)
        if (mixers_own((enum view_stage)s) && s != VIEW_ATTN_GATE && s != VIEW_GATED) {
            ck_assert_msg(explain_stage_present(&p, (enum view_stage)s), "%s",
                          explain_stage_name((enum view_stage)s));
            expect_explained(&p, (enum view_stage)s, 1, 5, 2);
        }
    ck_assert(!explain_stage_present(&p, VIEW_WEIGHTS));
    ck_assert_int_eq(explain_stage_heads(&p, VIEW_EFFECTIVE), p.decoder->gdn.v_heads);
    ck_assert_int_gt(p.decoder->gdn.v_heads, p.st.shape.heads);
    /* head 3 (beyond the attention heads), query 5, token 2: its number, then its parts' */
    pipeline_stage_view(&p, STAGE_EFFECTIVE, 3, &v);
    heatmap_format(num, sizeof num, MAT_AT(&v.m, 5, 2), 23, 4);
    inspect_cell(&p, VIEW_EFFECTIVE, 3, 5, 2, false, 4, false, buf, sizeof buf);
    snprintf(want, sizeof want, "] = %s: how much of ", num);
    ck_assert_msg(strstr(buf, want) != NULL, "%s (want '%s')", buf, want);
    snprintf(want, sizeof want, ") = %s\n", num);
    ck_assert_msg(strstr(buf, "the 3 tokens since: decay e^(") != NULL && strstr(buf, want) != NULL,
                  "%s (want '%s')", buf, want);
    ck_assert_msg(strstr(buf, "the largest, times the decay:") != NULL, "%s", buf);
    inspect_cell(&p, VIEW_EFFECTIVE, 3, 2, 5, false, 4, false, buf, sizeof buf);
    ck_assert_msg(strstr(buf, "comes later: the state has not read it yet") != NULL, "%s", buf);
    inspect_cell(&p, VIEW_EFFECTIVE, 3, 4, 4, false, 4, false, buf, sizeof buf);
    ck_assert_msg(strstr(buf, "its own token: no decay") != NULL, "%s", buf);
    /* beta's and the decay's columns are the value heads */
    pipeline_stage_view(&p, STAGE_DECAY, 0, &v);
    ck_assert_int_eq(v.m.cols, 4);
    ck_assert(v.col_labels != NULL);
    ck_assert_str_eq(v.col_labels[3], "h3");
    /* The residual adds what the layer's mixer gave: DeltaNet's here, attention's at layer 3. */
    ck_assert_str_eq(explain_title(&p, VIEW_RESIDUAL1, buf, sizeof buf),
                     "Residual: the block's input plus Gated DeltaNet's output");
    ck_assert_int_eq(pipeline_select_layer(&p, 3, &err), ATTN_OK);
    ck_assert_str_eq(explain_title(&p, VIEW_RESIDUAL1, buf, sizeof buf),
                     "Residual: the block's input plus attention");
    pipeline_destroy(&p);
    model_close(&q);
}
END_TEST

/*
 * A mixture of experts (issue 52): a sparse layer shows the router and its
 * MLP as the experts' sum, not one gate and up; a cell of the router says
 * its logit, its probability and whether its expert was chosen, with the
 * weight; a cell of the MLP lists the chosen experts' weights and outputs.
 * The dense layer between shows its gate and up, and no router.
 */
START_TEST(a_sparse_layer_shows_its_router)
{
    struct attention_config cfg;
    struct pipeline p;
    struct attn_error err;
    static struct model moe;
    int experts[DECODER_EXPERTS_USED_MAX];
    float weights[DECODER_EXPERTS_USED_MAX];
    char buf[2048], title[160], want[96];
    int k;

    attention_config_init(&cfg);
    model_on_layer_1(&p, &cfg, &moe, "tests/fixtures/decoders/qwen3-moe", "the cat sat on the mat.");
    /* layer 1 is dense (mlp_only_layers) */
    ck_assert(!explain_stage_present(&p, VIEW_ROUTER));
    ck_assert(explain_stage_present(&p, VIEW_UP) && explain_stage_present(&p, VIEW_GATE));
    ck_assert_int_eq(pipeline_select_layer(&p, 0, &err), ATTN_OK);
    ck_assert(explain_stage_present(&p, VIEW_ROUTER) && explain_stage_present(&p, VIEW_MLP));
    ck_assert(!explain_stage_present(&p, VIEW_UP) && !explain_stage_present(&p, VIEW_GATE) &&
              !explain_stage_present(&p, VIEW_SWIGLU));
    ck_assert_str_eq(explain_title(&p, VIEW_ROUTER, title, sizeof title),
                     "Router: each token's experts (gate)");
    ck_assert_str_eq(explain_title(&p, VIEW_MLP, title, sizeof title),
                     "MLP: the chosen experts' outputs, weighted and added");
    explain_text(&p, VIEW_ROUTER, buf, sizeof buf);
    ck_assert_msg(strstr(buf, "against 6 experts") && strstr(buf, "only the 2 likeliest"), "%s",
                  buf);
    /* each expert's load: the tokens sent to it, the busiest first, summing to 2 a token */
    {
        const char *at = strstr(buf, "Load (tokens sent): e");
        int total = 0, last = 1 << 30;
        char *end;
        ck_assert_msg(at != NULL, "%s", buf);
        at += strlen("Load (tokens sent):");
        while (*at == ' ' || *at == ',') {
            long load;
            at += *at == ',' ? 3 : 2; /* past ", e" or " e" */
            strtol(at, &end, 10);
            load = strtol(end, &end, 10);
            ck_assert_int_le(load, last);
            last = (int)load;
            total += (int)load;
            at = end;
        }
        ck_assert_int_eq(total, 2 * p.block.routed.rows);
    }
    /* the chosen cells marked: two a row, exactly where the weights went */
    {
        struct stagemap sm;
        struct heatmap_spec spec;
        memset(&sm, 0, sizeof sm);
        stagemap_spec(&sm, &p, STAGE_ROUTER, 0, false, true, true, &spec);
        for (int i = 0; i < p.block.router.rows; i++) {
            int chosen = 0;
            for (int e = 0; e < 6; e++) {
                const bool mark = heatmap_kind(&spec, i, e) == HEAT_CHOSEN;
                chosen += mark;
                ck_assert(mark == (MAT_AT(&p.block.routed, i, e) > 0.0f));
            }
            ck_assert_int_eq(chosen, 2);
        }
    }
    k = family_model_routes(&p, 3, experts, weights);
    ck_assert_int_eq(k, 2);
    ck_assert_float_eq_tol(weights[0] + weights[1], 1.0f, 1e-6f);
    inspect_cell(&p, VIEW_ROUTER, 0, 3, experts[0], false, 4, false, buf, sizeof buf);
    snprintf(want, sizeof want, "chosen, the router's choice 1 of 2: its output is weighted %.4f",
             (double)weights[0]);
    ck_assert_msg(strstr(buf, want) && strstr(buf, "row e"), "%s (want '%s')", buf, want);
    for (int e = 0; e < 6; e++)
        if (e != experts[0] && e != experts[1]) {
            inspect_cell(&p, VIEW_ROUTER, 0, 3, e, false, 4, false, buf, sizeof buf);
            snprintf(want, sizeof want, "expert e%d does not run for this token", e);
            ck_assert_msg(strstr(buf, want) != NULL, "%s", buf);
            break;
        }
    inspect_cell(&p, VIEW_MLP, 0, 3, 5, false, 4, false, buf, sizeof buf);
    snprintf(want, sizeof want, "  e%d: %.4f * ", experts[0], (double)weights[0]);
    ck_assert_msg(strstr(buf, want) != NULL, "%s (want '%s')", buf, want);
    snprintf(want, sizeof want, " = %.4f, the sum over the token's 2 experts",
             (double)MAT_AT(&p.block.mlp, 3, 5));
    ck_assert_msg(strstr(buf, want) != NULL, "%s (want '%s')", buf, want);
    pipeline_destroy(&p);
    model_close(&moe);
}
END_TEST

/*
 * Qwen3.5-MoE's shared expert: its own stage, whose text gives its width
 * and the gates' range and whose cell panel is the gate times the expert's
 * output, recomputed; the MLP's panel adds it to the chosen experts'.
 */
START_TEST(a_shared_expert_is_a_stage_of_its_own)
{
    struct attention_config cfg;
    struct pipeline p;
    static struct model moe;
    char buf[2048];
    const char *at;
    float gate, out;

    attention_config_init(&cfg);
    model_on_layer_1(&p, &cfg, &moe, "tests/fixtures/decoders/qwen35-moe", "abcab");
    ck_assert(explain_stage_present(&p, VIEW_SHARED) && explain_stage_present(&p, VIEW_ROUTER));
    explain_text(&p, VIEW_SHARED, buf, sizeof buf);
    ck_assert_msg(strstr(buf, "A shared expert: one more SwiGLU MLP of 24") != NULL, "%s", buf);
    explain_formula(&p, VIEW_SHARED, buf, sizeof buf);
    ck_assert_msg(strstr(buf, "sigmoid(ln2 w_shared_gate)") == buf, "%s", buf);
    inspect_cell(&p, VIEW_SHARED, 0, 2, 7, false, 4, false, buf, sizeof buf);
    at = strstr(buf, "= gate ");
    ck_assert_msg(at != NULL, "%s", buf);
    ck_assert_int_eq(sscanf(at, "= gate %f * the shared expert's output %f", &gate, &out), 2);
    ck_assert_float_gt(gate, 0.0f);
    ck_assert_float_lt(gate, 1.0f);
    ck_assert_float_eq_tol(gate, MAT_AT(&p.block.shared_gate, 2, 0), 1e-4f);
    ck_assert_float_eq_tol(gate * out, MAT_AT(&p.block.shared, 2, 7), 1e-4f);
    inspect_cell(&p, VIEW_MLP, 0, 2, 7, false, 4, false, buf, sizeof buf);
    ck_assert_msg(strstr(buf, "plus the shared expert's: ") != NULL, "%s", buf);
    explain_text(&p, VIEW_MLP, buf, sizeof buf);
    ck_assert_msg(strstr(buf, "the shared expert's output") != NULL, "%s", buf);
    pipeline_destroy(&p);
    model_close(&moe);
}
END_TEST

/*
 * gpt-oss (issue 52): the weights stage's formula and text put the sink in
 * the softmax, a weight's panel its logit in the sum and the row's share,
 * which is 1 minus the row's weights; the router says the softmax over the
 * chosen logits; an MLP cell's panel lists the chosen experts' outputs,
 * recomputed through the fused, biased, clamped SwiGLU, whose weighted sum is
 * the cell.
 */
START_TEST(gpt_oss_cells_say_the_sink_and_the_clamped_experts)
{
    struct attention_config cfg;
    struct pipeline p;
    static struct model oss;
    int experts[DECODER_EXPERTS_USED_MAX];
    float weights[DECODER_EXPERTS_USED_MAX];
    char buf[4096], want[128];
    double sum = 0.0, recomputed = 0.0;
    struct pipeline_view w;

    attention_config_init(&cfg);
    model_on_layer_1(&p, &cfg, &oss, "tests/fixtures/decoders/gpt-oss", "the cat sat on the mat.");
    explain_formula(&p, VIEW_WEIGHTS, buf, sizeof buf);
    ck_assert_str_eq(buf, "a_ij = exp(s_ij) / (sum_k exp(s_ik) + exp(sink_h))");
    explain_text(&p, VIEW_WEIGHTS, buf, sizeof buf);
    ck_assert_msg(strstr(buf, "Softmax with a sink") != NULL, "%s", buf);
    pipeline_stage_view(&p, STAGE_WEIGHTS, 2, &w);
    for (int j = 0; j < w.m.cols; j++)
        sum += MAT_AT(&w.m, 4, j);
    ck_assert_float_eq_tol(1.0 - sum, sinks_share(&p, 2, 4), 1e-6);
    ck_assert_float_gt(sinks_share(&p, 2, 4), 0.001f);
    inspect_cell(&p, VIEW_WEIGHTS, 2, 4, 1, false, 4, false, buf, sizeof buf);
    snprintf(want, sizeof want, "The sink took %.4f of the row", (double)sinks_share(&p, 2, 4));
    ck_assert_msg(strstr(buf, want) != NULL, "%s (want '%s')", buf, want);
    explain_text(&p, VIEW_ROUTER, buf, sizeof buf);
    ck_assert_msg(strstr(buf, "a softmax over the chosen logits alone") != NULL, "%s", buf);
    {
        const int k = family_model_routes(&p, 3, experts, weights);
        const char *at;
        ck_assert_int_eq(k, 2);
        inspect_cell(&p, VIEW_MLP, 0, 3, 5, false, 4, false, buf, sizeof buf);
        for (int t = 0; t < k; t++) {
            float wt, y;
            snprintf(want, sizeof want, "  e%d: ", experts[t]);
            at = strstr(buf, want);
            ck_assert_msg(at != NULL, "%s (want '%s')", buf, want);
            ck_assert_int_eq(sscanf(at + strlen(want), "%f * %f", &wt, &y), 2);
            recomputed += (double)wt * y;
        }
        ck_assert_msg(fabs(recomputed - MAT_AT(&p.block.mlp, 3, 5)) < 2e-4, "%s: %g, not %g", buf,
                      recomputed, (double)MAT_AT(&p.block.mlp, 3, 5));
    }
    pipeline_destroy(&p);
    model_close(&oss);
}
END_TEST

/*
 * A Llama-style model (Qwen3's parts: RMSNorm, QK-norm, RoPE, grouped keys,
 * SwiGLU) has its own stages and no positional encoding or GELU, each
 * explained and inspected; the RoPE cell's pair and angle, and its score at
 * distance 0 is the score the weights came from.
 */
START_TEST(a_llama_models_stages_are_explained)
{
    struct attention_config cfg;
    struct pipeline p;
    char buf[2048];

    attention_config_init(&cfg);
    {
        static struct model qwen;
        char want[64], got[32];
        struct matrix scores;
        model_on_layer_1(&p, &cfg, &qwen, "tests/fixtures/decoders/qwen3", "the cat sat on the mat.");
        for (int s = 0; s < VIEW_STAGE_COUNT; s++) {
            const char *name = explain_stage_name((enum view_stage)s);
            if (s == VIEW_DROPOUT || s == VIEW_OUTDROP || s == VIEW_AVERAGE || s == VIEW_SOURCE ||
                s == VIEW_POSITIONAL || s == VIEW_GELU || s == VIEW_OUTNORM ||
                s == VIEW_MLPNORM || s == VIEW_GEGLU || s == VIEW_ROUTER || s == VIEW_SHARED ||
                mixers_own((enum view_stage)s)) {
                ck_assert_msg(!explain_stage_present(&p, (enum view_stage)s), "%s", name);
                continue;
            }
            ck_assert_msg(explain_stage_present(&p, (enum view_stage)s), "%s", name);
            expect_explained(&p, (enum view_stage)s, 3, 2, 3);
        }
        inspect_cell(&p, VIEW_PRE_ATTN_NORM, 0, 2, 3, false, 4, false, buf, sizeof buf);
        ck_assert_msg(strstr(buf, "mean square") != NULL, "%s", buf);
        /* Head 3's column 2 of row 4: pair 2, position 4; its own key at distance 0. */
        inspect_cell(&p, VIEW_QROPE, 0, 4, 3 * 8 + 2, false, 4, false, buf, sizeof buf);
        ck_assert_msg(strstr(buf, "pair 2: (x[2], x[6])") && strstr(buf, "angle = position 4"),
                      "%s", buf);
        scores = attention_head(&p.st, p.st.scores, 3);
        snprintf(got, sizeof got, "%.4f", (double)MAT_AT(&scores, 4, 4));
        snprintf(want, sizeof want, "d 0: %s", got);
        ck_assert_msg(strstr(buf, want) != NULL, "%s (want '%s')", buf, want);
        snprintf(got, sizeof got, "%.4f", (double)MAT_AT(&p.block.swiglu, 2, 3));
        snprintf(want, sizeof want, " = %s", got);
        inspect_cell(&p, VIEW_SWIGLU, 0, 2, 3, false, 4, false, buf, sizeof buf);
        ck_assert_msg(strstr(buf, want) != NULL, "%s (want '%s')", buf, want);
        /*
         * The map's sink measure (the weight on the first token) from every layer's
         * weights made again, wider queries (32) than the stream (16) included.
         */
        {
            float first[3 * 4];
            double mean = 0.0;
            struct matrix w = attention_head(&p.st, p.st.weights, 3);
            ck_assert_int_eq(head_measures(&p, MEASURE_FIRST, first), 0);
            for (int i = 1; i < w.rows; i++)
                mean += MAT_AT(&w, i, 0);
            mean /= w.rows - 1;
            ck_assert_msg(fabs(first[1 * 4 + 3] - mean) < 1e-6, "%g vs %g",
                          (double)first[1 * 4 + 3], mean);
        }
        /* The scores' cell reads the turned queries and keys of head 3's key head (1). */
        inspect_cell(&p, VIEW_SCORES, 3, 4, 2, false, 4, false, buf, sizeof buf);
        ck_assert_msg(strstr(buf, "after RoPE and QK-norm; key head 1") != NULL, "%s", buf);
        pipeline_destroy(&p);
        model_close(&qwen);
    }
}
END_TEST

/* Everything the view says of every stage p shows at layer 1: titles, formulas, texts, two cells. */
static char *
everything_said(struct pipeline *p)
{
    size_t size = 1 << 18, len = 0;
    char *all = calloc(size, 1);
    char buf[4096];

    ck_assert_ptr_nonnull(all);
    for (int layer = 0; layer < 2; layer++) {
        struct attn_error err;
        ck_assert_int_eq(pipeline_select_layer(p, layer, &err), ATTN_OK);
        for (int s = 0; s < VIEW_STAGE_COUNT; s++) {
            if (!explain_stage_present(p, (enum view_stage)s))
                continue;
            attn_appendf(all, size, &len, "\n[%s] %s\n", explain_stage_name((enum view_stage)s),
                         explain_title(p, (enum view_stage)s, buf, sizeof buf));
            explain_formula(p, (enum view_stage)s, buf, sizeof buf);
            attn_appendf(all, size, &len, "%s\n", buf);
            explain_text(p, (enum view_stage)s, buf, sizeof buf);
            attn_appendf(all, size, &len, "%s\n", buf);
            for (int h = 0; h < 2; h++) {
                inspect_cell(p, (enum view_stage)s, h, 2, 1 + h, false, 4, false, buf, sizeof buf);
                attn_appendf(all, size, &len, "%s\n", buf);
            }
        }
    }
    return all;
}

/* Whether all says word (as wanted); on failure the stage that says it, or all, goes to stderr. */
static void
expect_said(const char *all, const char *model_dir, const char *word, bool want)
{
    const char *at = strstr(all, word);

    if ((at != NULL) == want)
        return;
    if (at != NULL) {
        const char *stage = at;
        while (stage > all && !(stage[0] == '[' && stage[-1] == '\n'))
            stage--;
        fprintf(stderr, "%s: %.*s\n", model_dir, (int)(at - stage) + 40, stage);
    } else {
        fprintf(stderr, "%s\n", all);
    }
    ck_abort_msg("%s %s '%s'", model_dir, want ? "never says" : "says", word);
}

/* A cell's panel says " = V" for the value V the stage holds there (4 decimals). */
static void
panel_has_value(const struct pipeline *p, enum view_stage s, const struct matrix *m, int row,
                int col)
{
    char buf[2048], want[64];

    snprintf(want, sizeof want, " = %.4f", (double)MAT_AT(m, row, col));
    inspect_cell(p, s, 0, row, col, false, 4, false, buf, sizeof buf);
    ck_assert_msg(strstr(buf, want) != NULL, "%s: %s (want '%s')", explain_stage_name(s), buf,
                  want);
}

/*
 * Gemma 3 and Olmo 3 (issue 40): their stages are there or not as their
 * parts are, each explained; a sliding layer's mask is titled, drawn and
 * explained as the band it is (the view's predicate hides exactly the
 * scores the forward made -inf), a full layer's as the causal mask and
 * titled a full layer beside the sliding ones' title (issue 50, item 12); the
 * new stages' cells are their values, worked out.
 */
START_TEST(a_sliding_models_stages_are_explained)
{
    static const struct {
        const char *dir;
        bool pre; /* ln1 and ln2 */
        bool geglu;
        int window, full, slide; /* the window, a full layer and a sliding one */
    } cases[] = {
        { "tests/fixtures/decoders/gemma3-window", true, true, 3, 2, 1 },
        { "tests/fixtures/decoders/olmo3-yarn", false, false, 4, 3, 1 },
        { "tests/fixtures/decoders/gemma2-capped", true, true, 3, 1, 2 },
    };
    struct attention_config cfg;

    attention_config_init(&cfg);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        static struct model m;
        struct pipeline p;
        struct attn_error err;
        char buf[2048];
        struct matrix masked;

        model_on_layer_1(&p, &cfg, &m, cases[k].dir, "the thin in the then the");
        ck_assert_int_eq(explain_stage_present(&p, VIEW_PRE_ATTN_NORM), cases[k].pre);
        ck_assert_int_eq(explain_stage_present(&p, VIEW_PRE_MLP_NORM), cases[k].pre);
        ck_assert(explain_stage_present(&p, VIEW_OUTNORM) && explain_stage_present(&p, VIEW_MLPNORM));
        ck_assert_int_eq(explain_stage_present(&p, VIEW_GEGLU), cases[k].geglu);
        ck_assert_int_eq(explain_stage_present(&p, VIEW_SWIGLU), !cases[k].geglu);
        ck_assert(!explain_stage_present(&p, VIEW_GELU));
        for (int s = 0; s < VIEW_STAGE_COUNT; s++)
            if (explain_stage_present(&p, (enum view_stage)s))
                /* (the kv cache of a sliding layer 1 has its window's rows: 3 or 4) */
                expect_explained(&p, (enum view_stage)s, 1, s == VIEW_CACHE ? 2 : 5, 3);
        /* A sliding layer: the band, in the title, the formula, the cells and the matrix. */
        ck_assert_int_eq(pipeline_select_layer(&p, cases[k].slide, &err), ATTN_OK);
        ck_assert_int_eq(p.window, cases[k].window);
        ck_assert_str_eq(explain_title(&p, VIEW_MASK, buf, sizeof buf),
                         cases[k].window == 3 ? "Sliding-window mask: the last 3 keys"
                                              : "Sliding-window mask: the last 4 keys");
        if (p.decoder->attn_softcap > 0.0) {
            /* Gemma 2's cap: in the formula, and a cell worked out to its value. */
            struct matrix scaled = attention_head(&p.st, p.st.scaled, 0);
            char want[64];
            explain_formula(&p, VIEW_SCALED, buf, sizeof buf);
            ck_assert_msg(strstr(buf, "2 tanh(") != NULL, "%s", buf);
            inspect_cell(&p, VIEW_SCALED, 0, 4, 3, false, 4, false, buf, sizeof buf);
            snprintf(want, sizeof want, "capped: 2 tanh(");
            ck_assert_msg(strstr(buf, want) != NULL, "%s", buf);
            snprintf(want, sizeof want, ") = %.4f", (double)MAT_AT(&scaled, 4, 3));
            ck_assert_msg(strstr(buf, want) != NULL, "%s (want '%s')", buf, want);
        }
        masked = attention_head(&p.st, p.st.masked, 1);
        for (int i = 0; i < masked.rows; i++)
            for (int j = 0; j < masked.cols; j++)
                ck_assert_msg((isinf(MAT_AT(&masked, i, j)) != 0) == pipeline_masked(&p, i, j),
                              "%s: (%d, %d)", cases[k].dir, i, j);
        ck_assert(pipeline_masked(&p, 5, 5 - cases[k].window) && !pipeline_masked(&p, 5, 6 - cases[k].window));
        inspect_cell(&p, VIEW_MASK, 1, 5, 0, false, 4, false, buf, sizeof buf);
        ck_assert_msg(strstr(buf, "is 5 tokens back") && strstr(buf, "this layer sees the last"),
                      "%s", buf);
        inspect_cell(&p, VIEW_MASK, 1, 5, 5, false, 4, false, buf, sizeof buf);
        ck_assert_msg(strstr(buf, "0 tokens back") && strstr(buf, "visible"), "%s", buf);
        explain_text(&p, VIEW_MASK, buf, sizeof buf);
        ck_assert_msg(strstr(buf, "This layer slides") != NULL, "%s", buf);
        /* Its KV cache: a ring of the window, said and inspected (issue 50, item 5). */
        {
            char want[64];
            snprintf(want, sizeof want, "keeps a ring of %d slots", cases[k].window);
            explain_text(&p, VIEW_CACHE, buf, sizeof buf);
            ck_assert_msg(strstr(buf, want) != NULL, "%s", buf);
            inspect_cell(&p, VIEW_CACHE, 0, 0, 0, false, 4, false, buf, sizeof buf);
            /* slot 0 holds the one position of the last window that is 0 mod window */
            for (int i = p.st.keys.rows - cases[k].window; i < p.st.keys.rows; i++)
                if (i % cases[k].window == 0)
                    snprintf(want, sizeof want, "slot 0 of the ring: position %d went there", i);
            ck_assert_msg(strstr(buf, want) != NULL, "%s", buf);
        }
        /* The new stages' cells, each its value worked out. */
        panel_has_value(&p, VIEW_OUTNORM, &p.block.output_normed, 2, 3);
        panel_has_value(&p, VIEW_MLPNORM, &p.block.mlp_normed, 2, 3);
        panel_has_value(&p, VIEW_RESIDUAL1, &p.block.residual1, 2, 3);
        panel_has_value(&p, VIEW_RESIDUAL2, &p.block.residual2, 2, 3);
        panel_has_value(&p, cases[k].geglu ? VIEW_GEGLU : VIEW_SWIGLU, &p.block.swiglu, 2, 3);
        inspect_cell(&p, VIEW_RESIDUAL1, 0, 2, 3, false, 4, false, buf, sizeof buf);
        ck_assert_msg(strstr(buf, "output_normed") != NULL, "%s", buf);
        inspect_cell(&p, VIEW_OUTNORM, 0, 2, 3, false, 4, false, buf, sizeof buf);
        ck_assert_msg((strstr(buf, "(1 + w[3]") != NULL) == cases[k].geglu, "%s", buf);
        /* A full layer: the causal mask, every key before. */
        ck_assert_int_eq(pipeline_select_layer(&p, cases[k].full, &err), ATTN_OK);
        ck_assert_int_eq(p.window, 0);
        ck_assert_str_eq(explain_title(&p, VIEW_MASK, buf, sizeof buf),
                         "Causal mask, a full layer: every key before");
        ck_assert(!pipeline_masked(&p, 5, 0));
        pipeline_destroy(&p);
        model_close(&m);
    }
}
END_TEST

/*
 * A model's screens speak of its own parts, by its files' names (issue 38,
 * item 2): a Qwen3's Q K V stage is not GPT-2's "LN1(x) W_q + b_q" through
 * c_attn but RMSNorm and q_proj, k_proj, v_proj with no bias; Qwen2's have
 * a bias; the book's files say W_query and norm1; GPT-2 keeps its own.
 */
START_TEST(a_models_words_are_its_own)
{
    static const char *const gpt2_only[] = { "c_attn", "c_proj", "c_fc", "ln_1", "ln_2", "ln_f",
                                             "wte", "wpe", "LN1", "ayer norm", NULL };
    static const char *const hf_llama[] = { "q_proj", "k_proj", "v_proj", "o_proj",
                                            "input_layernorm", "post_attention_layernorm",
                                            "embed_tokens", "gate_proj", "up_proj", "down_proj",
                                            NULL };
    static const char *const book_names[] = { "W_query", "W_key", "W_value", "out_proj", "norm1",
                                        "norm2", "tok_emb", "final_norm", NULL };
    static const struct {
        const char *dir;
        const char *const *must, *const *must_not, *const *must_not_too;
        const char *qkv; /* in the Q K V stage's formula */
    } cases[] = {
        { "tests/fixtures/gpt2/tiny", gpt2_only, hf_llama, NULL, "Q = LN1(x) W_q + b_q" },
        { "tests/fixtures/decoders/qwen3", hf_llama, gpt2_only, book_names,
          "Q = RMSNorm(x) W_q^T,  K = RMSNorm(x) W_k^T," },
        { "tests/fixtures/decoders/qwen2", hf_llama, gpt2_only, book_names,
          "Q = RMSNorm(x) W_q^T + b_q,  K = RMSNorm(x) W_k^T + b_k," },
        { "tests/fixtures/decoders/qwen3-book", book_names, gpt2_only, hf_llama,
          "Q = RMSNorm(x) W_query^T,  K = RMSNorm(x) W_key^T," },
        { "tests/fixtures/decoders/llama-book", book_names, gpt2_only, hf_llama,
          "Q = RMSNorm(x) W_query^T," },
    };
    struct attention_config cfg;

    attention_config_init(&cfg);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        static struct model m;
        struct pipeline p;
        char buf[2048];
        char *all;

        char tmp[4200] = "";

        if (strstr(cases[k].dir, "-book") != NULL) {
            /* The book's files: model.pth (and the Llama's config.json), the fixtures' tokenizer. */
            char from[4200], to[4300], top[PATH_MAX];
            ck_assert_ptr_nonnull(realpath(test_path(""), top));
            snprintf(tmp, sizeof tmp, "%s", test_tmpdir());
            snprintf(from, sizeof from, "%s/%s/model.pth", top, cases[k].dir);
            snprintf(to, sizeof to, "%s/model.pth", tmp);
            ck_assert_int_eq(symlink(from, to), 0);
            snprintf(from, sizeof from, "%s/%s/config.json", top, cases[k].dir);
            snprintf(to, sizeof to, "%s/config.json", tmp);
            ck_assert(access(from, R_OK) != 0 || symlink(from, to) == 0);
            snprintf(from, sizeof from, "%s/tests/fixtures/decoders/qwen3/tokenizer.json", top);
            snprintf(to, sizeof to, "%s/tokenizer.json", tmp);
            ck_assert_int_eq(symlink(from, to), 0);
            model_at_on_layer_1(&p, &cfg, &m, tmp, "the cat sat on the mat.");
        } else {
            model_on_layer_1(&p, &cfg, &m, cases[k].dir, "the cat sat on the mat.");
        }
        all = everything_said(&p);
        for (size_t i = 0; cases[k].must[i] != NULL; i++)
            expect_said(all, cases[k].dir, cases[k].must[i], true);
        for (size_t i = 0; cases[k].must_not[i] != NULL; i++)
            expect_said(all, cases[k].dir, cases[k].must_not[i], false);
        for (size_t i = 0; cases[k].must_not_too != NULL && cases[k].must_not_too[i] != NULL; i++)
            expect_said(all, cases[k].dir, cases[k].must_not_too[i], false);
        explain_formula(&p, VIEW_QKV, buf, sizeof buf);
        ck_assert_msg(strstr(buf, cases[k].qkv) != NULL, "%s: %s", cases[k].dir, buf);
        free(all);
        pipeline_destroy(&p);
        model_close(&m);
        if (tmp[0] != '\0')
            test_remove_dir(tmp);
    }
}
END_TEST

/* An explanation longer than its rows ends in '…' on the last one, not cut without a word. */
START_TEST(a_cut_explanation_says_so)
{
    struct attention_config cfg;
    struct pipeline p;
    struct view v;
    static struct model m;
    char *text;
    const char *line;

    attention_config_init(&cfg);
    model_on_layer_1(&p, &cfg, &m, "tests/fixtures/decoders/qwen3", "the cat sat on the mat.");
    view_init(&v);
    v.stage = VIEW_QKV;
    text = rendered(&p, &v, 60, 20, false); /* 2 rows for a text of 5 at this width */
    line = strstr(text, "input_layernorm (RMSNorm)");
    ck_assert_msg(line != NULL, "%s", text);
    line = strchr(line, '\n') + 1;
    ck_assert_msg(strstr(line, "\xe2\x80\xa6\n") == strchr(line, '\n') - 3, "%s", text);
    free(text);
    view_destroy(&v);
    pipeline_destroy(&p);
    model_close(&m);
}
END_TEST

/*
 * On the RoPE stages the cursor's partner (column t + d/2 of its head, or
 * t - d/2) is underlined, cell and label, as the text says (issue 38,
 * item 15: "Enter on a cell shows its pair" changed nothing visible).
 */
START_TEST(ropes_pair_is_marked)
{
    struct attention_config cfg;
    struct pipeline p;
    struct view v;
    static struct model m;
    struct grid g;
    /* Query head 1's column 1 -> 5 (4 heads of 8); key head 1's column 6 -> 2 (2 key heads). */
    static const int cursor[][2] = { { 2, 8 + 1 }, { 3, 8 + 6 } };
    static const int partner[] = { 8 + 5, 8 + 2 };
    static const int cols[] = { 4 * 8, 2 * 8 };
    char buf[2048];

    attention_config_init(&cfg);
    model_on_layer_1(&p, &cfg, &m, "tests/fixtures/decoders/qwen3", "the cat sat on the mat.");
    view_init(&v);
    v.colour = v.utf8 = true;
    explain_text(&p, VIEW_QROPE, buf, sizeof buf);
    ck_assert_msg(strstr(buf, "partner is underlined") != NULL, "%s", buf);
    for (int k = 0; k < 2; k++) {
        const struct heatmap_geometry *geo = &v.frame.geo[0];
        v.stage = k == 0 ? VIEW_QROPE : VIEW_KROPE;
        v.cursor_row = cursor[k][0];
        v.cursor_col = cursor[k][1];
        ck_assert_int_eq(grid_create(&g, 200, 40), 0);
        render_frame(&v, &p, &g);
        for (int c = 0; c < cols[k]; c++) {
            const int x = geo->x0 + (c - geo->col0) * geo->cell_w;
            const int y = geo->y0 + (cursor[k][0] - geo->row0) * geo->row_h;
            const bool under = (grid_at(&g, x, y)->attr & ATTR_UNDERLINE) != 0;
            const bool label = (grid_at(&g, x + geo->cell_w - 1, geo->y0 - 1)->attr & ATTR_UNDERLINE) != 0;
            ck_assert_msg(under == (c == partner[k] || c == cursor[k][1]), "stage %d column %d", k, c);
            ck_assert_msg(label == (c == partner[k] || c == cursor[k][1]), "stage %d label %d", k, c);
        }
        grid_destroy(&g);
    }
    view_destroy(&v);
    pipeline_destroy(&p);
    model_close(&m);
}
END_TEST

/*
 * A quantized GGUF's weight in the cell panel (issue 39, item 6): the type
 * the file keeps and the first weight made from its block's scale and
 * integer.
 */
START_TEST(a_quantized_weight_says_its_block)
{
    struct attention_config cfg;
    struct pipeline p;
    static struct model m;
    char buf[4096];
    char want[96];
    float scale, min;
    int level;
    const struct decoder_linear *q;

    attention_config_init(&cfg);
    model_on_layer_1(&p, &cfg, &m, "tests/fixtures/decoders/qwen3-tok-gguf", "the cat sat");
    q = &m.dec.blocks[1].q;
    ck_assert_ptr_nonnull(q->wq);
    inspect_cell(&p, VIEW_QKV, 0, 1, 0, false, 4, true, buf, sizeof buf);
    (void)quant_explain(QUANT_Q8_0, q->wq, 0, &scale, &min, &level);
    snprintf(want, sizeof want, "Q8_0 blocks of 32; the first, %.4f = %.4f \xc3\x97 %d)",
             (double)decoder_linear_at(q, 0, 0), (double)scale, level);
    ck_assert_msg(strstr(buf, want) != NULL, "%s (want '%s')", buf, want);
    pipeline_destroy(&p);
    model_close(&m);
}
END_TEST

/*
 * Packed weights that replace the f32 ones (the view's, decoder_release_unpacked)
 * read the same: the next tokens, the logit lens, and every cell of every
 * stage of every layer as the inspector spells it out (the products through
 * W_q, W_k, W_v, W_o and the MLP read single weights from the pack), the
 * same text as from the f32 weights.
 */
START_TEST(packed_weights_read_as_the_f32_ones)
{
    const struct decoder_config shape = {
        .n_layer = 2, .n_head = 4, .d_model = 64, .n_ctx = 32, .vocab_size = 317,
        .d_mlp = 256, .eps = 1e-5f, .scale_attn_weights = true, .scale_by_layer = false,
        .tied = true,
    };
    const char *tmp = test_tmpdir();
    char folder[600], want[4096], got[4096];
    struct model plain, packed;
    struct pipeline a, b;
    struct attention_config cfg;
    struct pipeline_source src;
    struct attn_error err;
    int ids_a[2 * 5], ids_b[2 * 5];
    float probs_a[2 * 5], probs_b[2 * 5];

    snprintf(folder, sizeof folder, "%s/packed", tmp);
    ck_assert_int_eq(
        gpt2_random_folder_with(folder, &shape, 0.2f, 7, test_path("tests/fixtures/gpt2/tiny")), 0);
    ck_assert_msg(model_open(&plain, folder, NULL, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_msg(model_open(&packed, folder, NULL, &err) == ATTN_OK, "%s", err.msg);
    ck_assert(decoder_pack(&packed.dec));
    /* Every linear's weights (16 KiB and more) and the embedding: whole pages given back. */
    ck_assert_uint_ge(decoder_release_unpacked(&packed.dec), 2 * 4 * 4096);
    ck_assert(packed.dec.tok_embed == NULL && packed.dec.lm_head == NULL);
    ck_assert(packed.dec.blocks[1].q.w == NULL && packed.dec.blocks[1].down.w == NULL);
    attention_config_init(&cfg);
    memset(&src, 0, sizeof src);
    src.sentence = "the cat sat on the mat";
    src.family = &family_model;
    src.top = 3;
    src.model = &plain;
    ck_assert_msg(pipeline_create(&a, &cfg, &src, &err) == ATTN_OK, "%s", err.msg);
    src.model = &packed;
    ck_assert_msg(pipeline_create(&b, &cfg, &src, &err) == ATTN_OK, "%s", err.msg);
    for (int l = 0; l < shape.n_layer; l++) {
        const int n = a.tokens.count;
        const int cells[][2] = { { 0, 0 }, { 1, 1 }, { n - 1, 3 } };
        ck_assert(pipeline_select_layer(&a, l, &err) == ATTN_OK);
        ck_assert(pipeline_select_layer(&b, l, &err) == ATTN_OK);
        for (int s = 0; s < VIEW_STAGE_COUNT; s++) {
            if (!explain_stage_present(&a, (enum view_stage)s))
                continue;
            for (size_t c = 0; c < sizeof cells / sizeof cells[0]; c++) {
                inspect_cell(&a, (enum view_stage)s, 1, cells[c][0], cells[c][1], false, 64, false,
                             want, sizeof want);
                inspect_cell(&b, (enum view_stage)s, 1, cells[c][0], cells[c][1], false, 64, false,
                             got, sizeof got);
                ck_assert_msg(strcmp(want, got) == 0, "layer %d, %s (%d, %d):\n%s\nagainst\n%s",
                              l, explain_stage_name((enum view_stage)s), cells[c][0], cells[c][1],
                              got, want);
            }
        }
    }
    {
        const struct decoder_run *ra = &pipeline_decoder(&a)->run, *rb = &pipeline_decoder(&b)->run;
        ck_assert_int_eq(ra->n, rb->n);
        ck_assert(memcmp(ra->top_ids, rb->top_ids, (size_t)ra->n * 3 * sizeof(int)) == 0);
        ck_assert(memcmp(ra->top_probs, rb->top_probs, (size_t)ra->n * 3 * sizeof(float)) == 0);
        ck_assert(decoder_logit_lens(&plain.dec, ra, 2, 5, ids_a, probs_a, &err) == ATTN_OK);
        ck_assert(decoder_logit_lens(&packed.dec, rb, 2, 5, ids_b, probs_b, &err) == ATTN_OK);
        ck_assert(memcmp(ids_a, ids_b, sizeof ids_a) == 0);
        ck_assert(memcmp(probs_a, probs_b, sizeof probs_a) == 0);
    }
    pipeline_destroy(&a);
    pipeline_destroy(&b);
    model_close(&plain);
    model_close(&packed);
    test_remove_dir(tmp);
}
END_TEST

static Suite *
render_explain_suite(void)
{
    Suite *s = suite_create("render_explain");
    TCase *units = tcase_create("units");

    tcase_set_timeout(units, 120);
    tcase_add_checked_fixture(units, setup, teardown);
    tcase_add_test(units, inspector_spells_out_each_stage);
    tcase_add_test(units, a_deltanet_layer_is_explained);
    tcase_add_test(units, scaling_is_described_once);
    tcase_add_test(units, inspector_explains_nan_rows);
    tcase_add_test(units, positional_encoding_in_the_order_it_is_computed);
    tcase_add_test(units, absent_queries_are_blank_not_nan);
    tcase_add_test(units, made_up_tokens_stay_marked);
    tcase_add_test(units, scaling_by_one_says_so);
    tcase_add_test(units, cut_labels_show_positions);
    tcase_add_test(units, mask_text_fits_the_variant);
    tcase_add_test(units, narration_dims_off_the_script);
    tcase_add_test(units, every_view_stage_is_complete);
    tcase_add_test(units, the_stages_are_the_variants);
    tcase_add_test(units, cut_words_are_abbreviated_apart);
    tcase_add_test(units, lettered_columns_are_numbered_by_group);
    tcase_add_test(units, a_trained_models_stages_are_explained);
    tcase_add_test(units, a_llama_models_stages_are_explained);
    tcase_add_test(units, a_sparse_layer_shows_its_router);
    tcase_add_test(units, a_shared_expert_is_a_stage_of_its_own);
    tcase_add_test(units, gpt_oss_cells_say_the_sink_and_the_clamped_experts);
    tcase_add_test(units, packed_weights_read_as_the_f32_ones);
    tcase_add_test(units, a_models_words_are_its_own);
    tcase_add_test(units, a_sliding_models_stages_are_explained);
    tcase_add_test(units, a_cut_explanation_says_so);
    tcase_add_test(units, ropes_pair_is_marked);
    tcase_add_test(units, a_quantized_weight_says_its_block);
    suite_add_tcase(s, units);
    return s;
}

TEST_MAIN(render_explain_suite)
