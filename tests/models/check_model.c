/*
 * check_model.c: a trained model through the family seam (model.c,
 * family_model.c, export_model): what the front ends see.
 *
 * tests/fixtures/gpt2/tiny/ is a 2-layer GPT-2 with its own byte-level BPE
 * vocabulary, and expected.txt what a float32 PyTorch forward of it
 * computes for one sentence under the knobs a trained model keeps (causal
 * or not, scaled or not, a temperature, <|endoftext|> first); both were
 * written by tests/oracle/gpt2_tiny_model.py with Debian's python3-torch.
 * Every stage of every layer, read through pipeline_stage_view() as the
 * front ends read it, must agree to 1e-5 (relative past 1).
 */
#include "config.h"

#include "model_harness.h"

/* The sentence expected.txt was made for. */
static char *
sentence(void)
{
    const char *at = strstr(want.text, "sentence ");
    size_t n;
    char *s;

    ck_assert_ptr_nonnull(at);
    at += strlen("sentence ");
    n = strcspn(at, "\n");
    s = malloc(n + 1);
    memcpy(s, at, n);
    s[n] = '\0';
    return s;
}

/* The tiny model under another config.json (a case's "config" line), and its folder. */
static struct model configured;
static char *configured_dir;

/*
 * The model a case runs: the tiny one, or, for a case with a config line,
 * the same weights and tokenizer beside that config.json in a folder of
 * its own (freed by drop_configured()).
 */
static const struct model *
case_model(const char *c)
{
    const char *line = strchr(c, '\n');
    const char *const files[] = { "model.safetensors", "vocab.json", "merges.txt" };
    struct attn_error err;
    char path[PATH_MAX + 64];
    size_t n;

    if (line == NULL || strncmp(line + 1, "config ", 7) != 0)
        return &tiny;
    line += 8;
    n = strcspn(line, "\n");
    configured_dir = strdup(test_tmpdir());
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char from[PATH_MAX + 64];
        snprintf(from, sizeof from, "%s/%s", absolute(TINY), files[i]);
        snprintf(path, sizeof path, "%s/%s", configured_dir, files[i]);
        ck_assert_int_eq(symlink(from, path), 0);
    }
    test_write_file(configured_dir, "config.json", line, n);
    ck_assert_msg(model_open(&configured, configured_dir, NULL, &err) == ATTN_OK, "%s", err.msg);
    return &configured;
}

static void
drop_configured(void)
{
    if (configured_dir == NULL)
        return;
    model_close(&configured);
    test_remove_dir(configured_dir);
    free(configured_dir);
    configured_dir = NULL;
}

/* A pipeline of the tiny model for case's knobs; returns where the case starts in expected.txt. */
static const char *
run_case(const char *name, struct pipeline *p, const char *text)
{
    struct attention_config cfg;
    struct pipeline_source src;
    struct attn_error err;
    char key[64];
    const char *at;

    snprintf(key, sizeof key, "\ncase %s ", name);
    at = strstr(want.text, key);
    ck_assert_msg(at != NULL, "no case %s", name);
    at += 1;
    attention_config_init(&cfg);
    {
        const char *k = at + strlen(key) - 1;
        cfg.mask = next_number(&k) != 0 ? ATTN_MASK_CAUSAL : ATTN_MASK_NONE;
        cfg.scale = next_number(&k) != 0;
        cfg.temperature = next_number(&k);
        static unsigned char ablated[64];
        memset(&src, 0, sizeof src);
        src.bos = next_number(&k) != 0;
        /* Then "L.H" for each head ablated, to the end of the line. */
        memset(ablated, 0, sizeof ablated);
        while (*k == ' ') {
            char *end;
            long l = strtol(k, &end, 10);
            if (end == k || *end != '.')
                break;
            ablated[l * tiny.dec.cfg.n_head + strtol(end + 1, &end, 10)] = 1;
            src.ablated = ablated;
            k = end;
        }
    }
    src.sentence = text;
    src.family = &family_model;
    src.model = case_model(at);
    src.top = 4;
    ck_assert_msg(pipeline_create(p, &cfg, &src, &err) == ATTN_OK, "%s: %s", name, err.msg);
    return at;
}

/* Compares a stage of p's current layer (every head of a per-head one) with the line key. */
static void
check_stage(const struct pipeline *p, const char *c, const char *key, enum pipeline_stage s)
{
    const char *at = line_of(c, key, p->layer);
    char what[96];

    for (int h = 0; h < (pipeline_stage_per_head(s) ? p->st.shape.heads : 1); h++) {
        struct pipeline_view v;
        pipeline_stage_view(p, s, h, &v);
        snprintf(what, sizeof what, "layer %d %s head %d", p->layer, key, h);
        for (int i = 0; i < v.m.rows; i++) {
            char row[128];
            snprintf(row, sizeof row, "%s row %d", what, i);
            /* compare() reads on from at: one row at a time, in order. */
            for (int j = 0; j < v.m.cols; j++) {
                double w = next_number(&at);
                double got = MAT_AT(&v.m, i, j);
                double scale = fabs(w) > 1.0 ? fabs(w) : 1.0;
                ck_assert_msg(fabs(got - w) <= 1e-5 * scale, "%s col %d: %.9g, PyTorch %.9g", row,
                              j, got, w);
            }
        }
    }
}

/* masked and scaled are worked out from the scores: -inf where hidden, divided by the divisor. */
static void
check_masked_scaled(const struct pipeline *p)
{
    for (int h = 0; h < p->st.shape.heads; h++) {
        struct pipeline_view sc, ma, sd;
        pipeline_stage_view(p, STAGE_SCORES, h, &sc);
        pipeline_stage_view(p, STAGE_MASKED, h, &ma);
        pipeline_stage_view(p, STAGE_SCALED, h, &sd);
        for (int i = 0; i < sc.m.rows; i++)
            for (int j = 0; j < sc.m.cols; j++) {
                bool hidden = p->cfg.mask == ATTN_MASK_CAUSAL && j > i;
                float s = MAT_AT(&sc.m, i, j);
                if (hidden) {
                    ck_assert(isinf(MAT_AT(&ma.m, i, j)) && MAT_AT(&ma.m, i, j) < 0);
                    ck_assert(isinf(MAT_AT(&sd.m, i, j)) && MAT_AT(&sd.m, i, j) < 0);
                } else {
                    ck_assert(MAT_AT(&ma.m, i, j) == s);
                    ck_assert(fabsf(MAT_AT(&sd.m, i, j) - s / p->st.divisor) <= 1e-6f * fabsf(s));
                }
            }
    }
}

/* The case's token ids, next tokens, ln_f and each layer's stages (all, or the three kept). */
static void
check_case(const char *name, bool every_stage)
{
    char *text = sentence();
    struct pipeline p;
    const char *c = run_case(name, &p, text);
    const struct family_model_state *g = pipeline_decoder(&p);
    const char *at = line_of(c, "ids", -1);
    const int n = (int)next_number(&at);
    int top;

    ck_assert_ptr_nonnull(g);
    ck_assert_int_eq(p.tokens.count, n);
    for (int i = 0; i < n; i++)
        ck_assert_int_eq(g->ids[i], (int)next_number(&at));
    ck_assert_int_eq(p.layers, tiny.dec.cfg.n_layer);
    for (int l = p.layers - 1; l >= 0; l--) {
        struct pipeline_view in;
        ck_assert_int_eq(pipeline_select_layer(&p, l, NULL), ATTN_OK);
        ck_assert_int_eq(p.layer, l);
        check_stage(&p, c, "scores", STAGE_SCORES);
        check_stage(&p, c, "weights", STAGE_WEIGHTS);
        check_stage(&p, c, "resid2", STAGE_RESIDUAL2);
        check_masked_scaled(&p);
        /* A block's input is the one before's output (the embeddings' sum for the first). */
        pipeline_stage_view(&p, STAGE_INPUTS, 0, &in);
        if (l > 0) {
            ck_assert_int_eq(pipeline_select_layer(&p, l - 1, NULL), ATTN_OK);
            {
                struct pipeline_view out;
                pipeline_stage_view(&p, STAGE_RESIDUAL2, 0, &out);
                ck_assert(memcmp(in.m.data, out.m.data, matrix_size(&out.m) * sizeof(float)) == 0);
            }
            ck_assert_int_eq(pipeline_select_layer(&p, l, NULL), ATTN_OK);
        } else {
            struct pipeline_view e, pos;
            pipeline_stage_view(&p, STAGE_EMBEDDINGS, 0, &e);
            pipeline_stage_view(&p, STAGE_POSITIONAL, 0, &pos);
            for (size_t k = 0; k < matrix_size(&in.m); k++)
                ck_assert(in.m.data[k] == e.m.data[k] + pos.m.data[k]);
        }
        if (!every_stage)
            continue;
        check_stage(&p, c, "ln1", STAGE_PRE_ATTN_NORM);
        check_stage(&p, c, "q", STAGE_QUERIES);
        check_stage(&p, c, "k", STAGE_KEYS);
        check_stage(&p, c, "v", STAGE_VALUES);
        check_stage(&p, c, "context", STAGE_CONTEXT);
        check_stage(&p, c, "attn", STAGE_OUTPUT);
        check_stage(&p, c, "resid1", STAGE_RESIDUAL1);
        check_stage(&p, c, "ln2", STAGE_PRE_MLP_NORM);
        check_stage(&p, c, "fc", STAGE_UP);
        check_stage(&p, c, "gelu", STAGE_GELU);
        check_stage(&p, c, "mlp", STAGE_MLP);
    }
    {
        struct pipeline_view f;
        pipeline_stage_view(&p, STAGE_FINAL, 0, &f);
        compare("final", f.m.data, line_of(c, "final", -1), matrix_size(&f.m), 1e-5);
    }
    /* The logit lens at the last position: each layer read through ln_f and tok_embed. */
    for (int l = 0; l < p.layers; l++) {
        int lid[2 * 3];
        float lp[2 * 3];
        char what[48];
        ck_assert_int_eq(decoder_logit_lens(&g->model->dec, &g->run, n - 1, 3, lid, lp, NULL), ATTN_OK);
        at = line_of(c, "lens", l);
        for (int t = 0; t < 3; t++)
            ck_assert_int_eq(lid[l * 3 + t], (int)next_number(&at));
        snprintf(what, sizeof what, "%s lens layer %d", name, l);
        compare(what, lp + l * 3, at, 3, 1e-5);
    }
    at = line_of(c, "top", -1);
    top = (int)next_number(&at);
    ck_assert_int_eq(g->run.top, top);
    for (int i = 0; i < n * top; i++)
        ck_assert_msg(g->run.top_ids[i] == (int)next_number(&at), "%s: next token %d differs",
                      name, i);
    compare("next-token probabilities", g->run.top_probs, at, (size_t)n * top, 1e-5);
    pipeline_destroy(&p);
    drop_configured();
    free(text);
}

START_TEST(every_stage_agrees_with_pytorch)
{
    check_case("gpt2", true);
    check_case("bos", true);
}
END_TEST

START_TEST(the_knobs_that_apply_recompute)
{
    check_case("no-mask", false);
    check_case("no-scale", false);
    check_case("temperature", false);
    check_case("ablate", false);
}
END_TEST

/*
 * config.json's keys that change attention are honoured: scale_attn_weights
 * false (no division), scale_attn_by_inverse_layer_idx (also by layer + 1),
 * both at once with a temperature; PyTorch agrees on every layer.  The
 * divisor and its description follow the layer shown.
 */
START_TEST(config_keys_that_change_attention)
{
    struct pipeline p;
    struct pipeline_scaling sc;
    char *text = sentence();
    const char *c;

    check_case("config-unscaled", false);
    check_case("config-by-layer", false);
    check_case("config-by-layer-only", false);
    c = run_case("config-by-layer", &p, text);
    (void)c;
    ck_assert_int_eq(pipeline_select_layer(&p, 1, NULL), ATTN_OK);
    ck_assert(p.st.divisor == (float)(sqrt(8.0) * 2.0));
    pipeline_scaling_of(&p, &sc);
    ck_assert_str_eq(sc.symbol, "sqrt(d_k) (l+1)");
    ck_assert_str_eq(sc.spelled, "sqrt(8) x 2");
    pipeline_destroy(&p);
    drop_configured();
    c = run_case("config-by-layer-only", &p, text);
    pipeline_scaling_of(&p, &sc);
    ck_assert_str_eq(sc.symbol, "(l+1)");
    ck_assert_str_eq(sc.spelled, "1");
    ck_assert(p.st.divisor == 2.0f);
    pipeline_destroy(&p);
    drop_configured();
    free(text);
}
END_TEST

/* An ablated head's context is zero in its layer, and nothing else of that layer's attention moves. */
START_TEST(ablation_zeroes_one_head)
{
    char *text = sentence();
    struct pipeline with;
    struct pipeline without;
    struct pipeline_view a;
    struct pipeline_view b;

    run_case("ablate", &with, text);
    run_case("gpt2", &without, text);
    ck_assert_int_eq(pipeline_decoder(&with)->ablated_heads, 2);
    /* Layer 0, head 1 ablated: its columns of the context are 0, head 0's are untouched. */
    pipeline_stage_view(&with, STAGE_CONTEXT, 0, &a);
    pipeline_stage_view(&without, STAGE_CONTEXT, 0, &b);
    for (int i = 0; i < a.m.rows; i++)
        for (int c = 0; c < 8; c++) {
            ck_assert(MAT_AT(&a.m, i, 8 + c) == 0.0f);
            ck_assert(MAT_AT(&a.m, i, c) == MAT_AT(&b.m, i, c));
        }
    /* The weights it would have used are still shown: ablation acts after them. */
    pipeline_stage_view(&with, STAGE_WEIGHTS, 1, &a);
    pipeline_stage_view(&without, STAGE_WEIGHTS, 1, &b);
    ck_assert(memcmp(a.m.data, b.m.data, matrix_size(&a.m) * sizeof(float)) == 0);
    pipeline_destroy(&with);
    pipeline_destroy(&without);
    free(text);
}
END_TEST

START_TEST(the_stages_a_model_has)
{
    char *text = sentence();
    struct pipeline p;
    struct pipeline_selection sel;
    char names[512];

    run_case("gpt2", &p, text);
    /* No dropout in a trained model's forward; every block stage, and the book's names. */
    ck_assert(!pipeline_stage_present(&p, STAGE_DROPPED));
    ck_assert(!pipeline_stage_present(&p, STAGE_OUTPUT_DROPPED));
    ck_assert(!pipeline_stage_present(&p, STAGE_AVERAGED));
    for (int s = 0; s < STAGE_COUNT; s++)
        if (s != STAGE_DROPPED && s != STAGE_OUTPUT_DROPPED && s != STAGE_AVERAGED &&
            s != STAGE_SOURCE && s != STAGE_QUERIES_NORMED && s != STAGE_KEYS_NORMED &&
            s != STAGE_QUERIES_ROTATED && s != STAGE_KEYS_ROTATED && s != STAGE_GATE &&
            s != STAGE_SWIGLU && s != STAGE_GEGLU && s != STAGE_OUTPUT_NORMED &&
            s != STAGE_MLP_NORMED && s != STAGE_ROUTER && s != STAGE_SHARED &&
            !(PIPELINE_MIXER_STAGES & FAMILY_STAGE(s)))
            ck_assert_msg(pipeline_stage_present(&p, (enum pipeline_stage)s), "%s",
                          pipeline_stage_name((enum pipeline_stage)s));
    ck_assert_str_eq(pipeline_stage_names(&p, " ", names, sizeof names),
                     "embeddings positional inputs ln1 queries keys values scores masked scaled "
                     "weights context output residual1 ln2 fc gelu mlp residual2 final");
    ck_assert(pipeline_stage_per_layer(&p, STAGE_WEIGHTS));
    ck_assert(!pipeline_stage_per_layer(&p, STAGE_FINAL));
    ck_assert(!pipeline_stage_per_layer(&p, STAGE_EMBEDDINGS));
    ck_assert_int_eq(pipeline_select(&p, "tokens", &sel), 0);
    ck_assert(sel.stage == PIPELINE_SELECT_TOKENS);
    ck_assert_int_eq(pipeline_select(&p, "next", &sel), 0);
    ck_assert(sel.stage == PIPELINE_SELECT_NEXT);
    ck_assert_int_eq(pipeline_select(&p, "weights.h1", &sel), 0);
    ck_assert_int_eq(pipeline_select(&p, "weights.h2", &sel), PIPELINE_SELECT_NO_HEAD);
    ck_assert_int_eq(pipeline_select(&p, "nothing.h2", &sel), -1);
    ck_assert_int_eq(pipeline_select(&p, "dropped", &sel), -1);
    ck_assert_int_eq(pipeline_select_layer(&p, 2, NULL), ATTN_EVALUE);
    ck_assert_int_eq(pipeline_select_layer(&p, -1, NULL), ATTN_EVALUE);
    /* Labels tell repeated tokens apart, and spaces show. */
    ck_assert_str_eq(p.tokens.text[1], "\xc2\xb7" "cat");
    ck_assert_str_eq(p.query_labels[4], "\xc2\xb7the"); /* its first time: plain */
    {
        int later = -1;
        char label[32];
        for (int i = 5; i < p.tokens.count && later < 0; i++)
            if (strcmp(p.tokens.text[i], "\xc2\xb7the") == 0)
                later = i;
        ck_assert_int_gt(later, 4);
        snprintf(label, sizeof label, "\xc2\xb7the#%d", later);
        ck_assert_str_eq(p.query_labels[later], label);
    }
    pipeline_destroy(&p);
    /* The book's classes have none of a block's stages, and nothing for tokens or next. */
    {
        struct attention_config cfg;
        struct pipeline_source src;
        struct vocab v;
        struct attn_error err;
        attention_config_init(&cfg);
        ck_assert_int_eq(vocab_builtin(&v, &err), ATTN_OK);
        memset(&src, 0, sizeof src);
        src.sentence = "Your journey starts";
        src.vocab = &v;
        ck_assert_int_eq(pipeline_create(&p, &cfg, &src, &err), ATTN_OK);
        ck_assert(!pipeline_stage_present(&p, STAGE_PRE_ATTN_NORM));
        ck_assert(!pipeline_stage_present(&p, STAGE_FINAL));
        ck_assert_int_eq(pipeline_select(&p, "tokens", &sel), -1);
        ck_assert_int_eq(pipeline_select(&p, "ln1", &sel), -1);
        ck_assert_int_eq(p.layers, 1);
        pipeline_destroy(&p);
        vocab_destroy(&v);
    }
    free(text);
}
END_TEST

/*
 * The model map's measures, each against its definition worked out here
 * from the weights as pipeline_stage_view shows them, on a text with
 * repeats (" the", " sat", " on": induction has rows to measure).
 */
START_TEST(head_measures_are_their_definitions)
{
    char *text = sentence();
    struct pipeline p;
    float got[MEASURE_COUNT][4];
    const int *ids;

    run_case("gpt2", &p, text);
    ids = pipeline_decoder(&p)->ids;
    for (int k = 0; k < MEASURE_COUNT; k++)
        ck_assert_int_eq(head_measures(&p, (enum head_measure)k, got[k]), 0);
    for (int l = 0; l < 2; l++) {
        ck_assert_int_eq(pipeline_select_layer(&p, l, NULL), ATTN_OK);
        for (int h = 0; h < 2; h++) {
            struct pipeline_view v;
            const int n = p.tokens.count;
            double ent = 0, prev = 0, first = 0, self = 0, ind = 0;
            int ind_rows = 0;
            pipeline_stage_view(&p, STAGE_WEIGHTS, h, &v);
            for (int i = 0; i < n; i++) {
                double e = 0, row_ind = 0;
                bool repeats = false;
                for (int j = 0; j <= i; j++) {
                    double w = MAT_AT(&v.m, i, j);
                    if (w > 0)
                        e -= w * log(w);
                    if (j >= 1 && j < i && ids[j - 1] == ids[i]) {
                        row_ind += w;
                        repeats = true;
                    }
                }
                ent += e / n;
                if (i >= 1) {
                    prev += MAT_AT(&v.m, i, i - 1) / (n - 1);
                    first += MAT_AT(&v.m, i, 0) / (n - 1);
                    self += MAT_AT(&v.m, i, i) / (n - 1);
                }
                if (repeats) {
                    ind += row_ind;
                    ind_rows++;
                }
            }
            ck_assert_int_gt(ind_rows, 0);
            ck_assert_float_eq_tol(got[MEASURE_ENTROPY][l * 2 + h], ent, 1e-5);
            ck_assert_float_eq_tol(got[MEASURE_PREVIOUS][l * 2 + h], prev, 1e-6);
            ck_assert_float_eq_tol(got[MEASURE_FIRST][l * 2 + h], first, 1e-6);
            ck_assert_float_eq_tol(got[MEASURE_SELF][l * 2 + h], self, 1e-6);
            ck_assert_float_eq_tol(got[MEASURE_INDUCTION][l * 2 + h], ind / ind_rows, 1e-6);
        }
    }
    pipeline_destroy(&p);
    /* No repeated token: induction has nothing to measure. */
    run_case("gpt2", &p, "The cat sat.");
    ck_assert_int_eq(head_measures(&p, MEASURE_INDUCTION, got[0]), 0);
    ck_assert(isnan(got[0][0]));
    pipeline_destroy(&p);
    free(text);
}
END_TEST

static int
lines_in(const char *text)
{
    int n = 0;

    for (const char *c = text; *c; c++)
        n += *c == '\n';
    return n;
}

START_TEST(exports_every_layer)
{
    const char *tmp = test_tmpdir();
    char out[600];
    char path[700];
    char text[8192];
    struct pipeline p;
    struct attn_error err;
    struct pipeline_selection sel[2];
    int written;
    char *s = sentence();

    snprintf(out, sizeof out, "%s/export", tmp);
    run_case("gpt2", &p, s);
    ck_assert_int_eq(pipeline_select_layer(&p, 1, NULL), ATTN_OK);
    ck_assert_msg(export_model(&p, NULL, 0, out, &written, &err) == ATTN_OK, "%s", err.msg);
    /* tokens, embeddings, positional, final, next, and per layer 17 stages (4 of them per head). */
    ck_assert_int_eq(written, 5 + 2 * (13 + 4 * 2));
    ck_assert_int_eq(p.layer, 1); /* back where it was */
    snprintf(path, sizeof path, "%s/tokens.csv", out);
    slurp(path, text, sizeof text);
    ck_assert_int_eq(strncmp(text, "position,id,token\n0,274,The\n1,267,\" cat\"\n", 41), 0);
    ck_assert_int_eq(lines_in(text), 1 + p.tokens.count);
    snprintf(path, sizeof path, "%s/next.csv", out);
    slurp(path, text, sizeof text);
    ck_assert_int_eq(strncmp(text, "position,rank,id,token,probability\n0,1,", 39), 0);
    ck_assert_int_eq(lines_in(text), 1 + 4 * p.tokens.count);
    snprintf(path, sizeof path, "%s/layer0/weights.h1.csv", out);
    slurp(path, text, sizeof text);
    ck_assert_int_eq(strncmp(text, ",The,\xc2\xb7" "cat,", 10), 0);
    ck_assert_int_eq(lines_in(text), 1 + p.tokens.count);
    snprintf(path, sizeof path, "%s/layer1/residual2.csv", out);
    ck_assert_int_eq(access(path, R_OK), 0);
    snprintf(path, sizeof path, "%s/final.csv", out);
    ck_assert_int_eq(access(path, R_OK), 0);
    /* Again into the same folder, now holding layer folders: replaced, nothing left over. */
    ck_assert_msg(export_model(&p, NULL, 0, out, &written, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_int_eq(test_count_entries(out, NULL), 5 + 2 + 1); /* (+ its manifest) */
    /* --stage tokens --stage weights.h0: tokens.csv and each layer's head 0. */
    ck_assert_int_eq(pipeline_select(&p, "tokens", &sel[0]), 0);
    ck_assert_int_eq(pipeline_select(&p, "weights.h0", &sel[1]), 0);
    snprintf(out, sizeof out, "%s/some", tmp);
    ck_assert_msg(export_model(&p, sel, 2, out, &written, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_int_eq(written, 3);
    snprintf(path, sizeof path, "%s/layer1/weights.h0.csv", out);
    ck_assert_int_eq(access(path, R_OK), 0);
    snprintf(path, sizeof path, "%s/layer1/weights.h1.csv", out);
    ck_assert_int_ne(access(path, R_OK), 0);
    pipeline_destroy(&p);
    free(s);
    test_remove_dir(tmp);
}
END_TEST

/*
 * minigpt, the model that ships (samples/models/minigpt, made by
 * tests/oracle/train_minigpt.py): found by its name, it has a previous-token
 * head in layer 0 and induction heads in layer 1 by the map's own measures
 * (the values train_minigpt.py printed: 0.999; 0.983 and 0.965), predicts a
 * repeated random sequence, and no longer does without its induction heads;
 * without the previous-token head the induction heads lose their way.
 */
#define MINIGPT_TEXT "cat map sun red fox ink owl jam cat map sun red fox ink owl jam"

static void
minigpt_run(struct model *m, const unsigned char *ablated, struct pipeline *p)
{
    struct attention_config cfg;
    struct pipeline_source src;
    struct attn_error err;

    attention_config_init(&cfg);
    memset(&src, 0, sizeof src);
    src.sentence = MINIGPT_TEXT;
    src.family = &family_model;
    src.model = m;
    src.top = 3;
    src.bos = true;
    src.ablated = ablated;
    ck_assert_msg(pipeline_create(p, &cfg, &src, &err) == ATTN_OK, "%s", err.msg);
}

/* The mean probability of the likeliest next word in the repeat (after positions 10-15). */
static double
repeat_probability(const struct pipeline *p, int *right)
{
    const struct family_model_state *g = pipeline_decoder(p);
    double sum = 0;

    *right = 0;
    for (int i = 10; i < 16; i++) {
        const int *top = g->run.top_ids + (size_t)i * (size_t)g->run.top;
        *right += top[0] == g->ids[i + 1];
        sum += g->run.top_probs[(size_t)i * (size_t)g->run.top];
    }
    return sum / 6;
}

/* A model that ships with attnscope, found by its name (samples/models). */
static void
open_shipped(struct model *m, const char *name)
{
    struct attn_error err;

    setenv("ATTNSCOPE_MODELS", absolute("samples/models"), 1);
    ck_assert_msg(model_open(m, name, NULL, &err) == ATTN_OK, "%s", err.msg);
    unsetenv("ATTNSCOPE_MODELS");
}

START_TEST(minigpt_has_a_previous_token_and_induction_heads)
{
    struct model m;
    struct pipeline p;
    unsigned char ablated[8] = { 0 };
    float prev[8];
    float ind[8];
    int right;
    double before;
    double after;

    open_shipped(&m, "minigpt");
    ck_assert_str_eq(m.name, "minigpt");
    ck_assert_int_eq(m.dec.cfg.n_layer, 2);
    ck_assert_int_eq(m.dec.cfg.n_head, 4);
    minigpt_run(&m, NULL, &p);
    ck_assert_int_eq(p.st.nq, 17); /* <|endoftext|> and 16 words, each one token */
    ck_assert_int_eq(head_measures(&p, MEASURE_PREVIOUS, prev), 0);
    ck_assert_int_eq(head_measures(&p, MEASURE_INDUCTION, ind), 0);
    /* Head 0.0 looks one token back, the others of layer 0 do not. */
    ck_assert_float_ge(prev[0], 0.99f);
    for (int h = 1; h < 4; h++)
        ck_assert_float_lt(prev[h], 0.2f);
    /* Heads 1.1 and 1.2 look at what followed the token last time; 1.0 and 1.3 do not. */
    ck_assert_float_ge(ind[4 + 1], 0.95f);
    ck_assert_float_ge(ind[4 + 2], 0.95f);
    ck_assert_float_lt(ind[4 + 0], 0.2f);
    ck_assert_float_lt(ind[4 + 3], 0.2f);
    before = repeat_probability(&p, &right);
    ck_assert_int_eq(right, 6);
    ck_assert_float_ge(before, 0.95);
    pipeline_destroy(&p);

    /* Without both induction heads the repeat is a guess. */
    ablated[4 + 1] = ablated[4 + 2] = 1;
    minigpt_run(&m, ablated, &p);
    after = repeat_probability(&p, &right);
    printf("minigpt: the repeat's next word at %.4f, %.4f without heads 1.1 and 1.2\n", before,
           after);
    ck_assert_int_lt(right, 3);
    ck_assert_float_lt(after, 0.3);
    pipeline_destroy(&p);

    /* Without the previous-token head, the induction heads do not find their key (K-composition). */
    memset(ablated, 0, sizeof ablated);
    ablated[0] = 1;
    minigpt_run(&m, ablated, &p);
    ck_assert_int_eq(head_measures(&p, MEASURE_INDUCTION, ind), 0);
    ck_assert_float_lt(ind[4 + 1], 0.2f);
    ck_assert_float_lt(ind[4 + 2], 0.2f);
    pipeline_destroy(&p);
    model_close(&m);
}
END_TEST

/*
 * minillama, the Llama-style model that ships (samples/models/minillama, made
 * by tests/oracle/train_minillama.py: RoPE, 4 query heads sharing 2 key
 * heads, RMSNorm, SwiGLU, its tokenizer.json with Qwen's pre-tokenizer):
 * found by its name, the map's measures are those train_minillama.py printed
 * (head 0.3 looks one back: 0.739; head 1.3 is an induction head: 0.853),
 * it predicts the repeat, and without head 1.3 it loses nearly half of it.
 */
START_TEST(minillama_has_a_previous_token_and_an_induction_head)
{
    struct model m;
    struct pipeline p;
    unsigned char ablated[8] = { 0 };
    float prev[8];
    float ind[8];
    int right;
    double before;
    double after;

    open_shipped(&m, "minillama");
    ck_assert_str_eq(m.dec.architecture, "llama");
    ck_assert_int_eq(decoder_kv_heads(&m.dec.cfg), 2);
    ck_assert(m.dec.cfg.positions == DECODER_POSITIONS_ROPE);
    minigpt_run(&m, NULL, &p);
    ck_assert_int_eq(p.st.nq, 17); /* <|endoftext|> (an added token) and 16 words */
    ck_assert_int_eq(head_measures(&p, MEASURE_PREVIOUS, prev), 0);
    ck_assert_int_eq(head_measures(&p, MEASURE_INDUCTION, ind), 0);
    ck_assert_msg(fabsf(prev[3] - 0.739f) < 5e-4f, "previous 0.3: %g", (double)prev[3]);
    for (int h = 0; h < 3; h++)
        ck_assert_float_lt(prev[h], 0.2f);
    ck_assert_msg(fabsf(ind[4 + 3] - 0.853f) < 5e-4f, "induction 1.3: %g", (double)ind[4 + 3]);
    for (int h = 0; h < 3; h++)
        ck_assert_float_lt(ind[4 + h], 0.2f);
    before = repeat_probability(&p, &right);
    ck_assert_int_ge(right, 5);
    pipeline_destroy(&p);
    ablated[4 + 3] = 1;
    minigpt_run(&m, ablated, &p);
    after = repeat_probability(&p, &right);
    printf("minillama: the repeat's next word at %.4f, %.4f without head 1.3\n", before, after);
    /* (0.999 -> 0.543: the other heads recover some of it, the induction head most) */
    ck_assert_float_ge(before, 0.99);
    ck_assert_float_lt(after, 0.6);
    pipeline_destroy(&p);
    model_close(&m);
}
END_TEST

/*
 * miniqwen35, the Qwen3.5-style hybrid that ships (samples/models/miniqwen35,
 * made by tests/oracle/train_miniqwen35.py): three Gated DeltaNet layers to
 * one of full attention.  It predicts the repeat, and the copying is a
 * DeltaNet layer's: without layer 1's four value heads it is gone, without
 * the full layer's four heads it stays.  The map's induction measure of
 * layer 1's heads 0 and 1 (their shares of |M| on what followed the earlier
 * copy) is the one the script printed: 0.3055 and 0.2957.
 */
START_TEST(miniqwen35_copies_in_a_deltanet_layer)
{
    struct model m;
    struct pipeline p;
    unsigned char ablated[16] = { 0 };
    float ind[16];
    int right;
    double before, without_deltanet, without_full;

    open_shipped(&m, "miniqwen35");
    ck_assert_str_eq(m.dec.architecture, "qwen3_5");
    for (int l = 0; l < 4; l++)
        ck_assert(decoder_attends(&m.dec.cfg, l) == (l == 3));
    minigpt_run(&m, NULL, &p);
    ck_assert_int_eq(head_measures(&p, MEASURE_INDUCTION, ind), 0);
    ck_assert_msg(fabsf(ind[4 + 0] - 0.3055f) < 5e-4f, "induction 1.0: %g", (double)ind[4]);
    ck_assert_msg(fabsf(ind[4 + 1] - 0.2957f) < 5e-4f, "induction 1.1: %g", (double)ind[5]);
    before = repeat_probability(&p, &right);
    ck_assert_int_eq(right, 6);
    pipeline_destroy(&p);
    for (int h = 0; h < 4; h++)
        ablated[4 + h] = 1;
    minigpt_run(&m, ablated, &p);
    without_deltanet = repeat_probability(&p, &right);
    pipeline_destroy(&p);
    memset(ablated, 0, sizeof ablated);
    for (int h = 0; h < 4; h++)
        ablated[12 + h] = 1;
    minigpt_run(&m, ablated, &p);
    without_full = repeat_probability(&p, &right);
    ck_assert_int_eq(right, 6);
    printf("miniqwen35: the repeat's next word at %.4f, %.4f without layer 1's heads, %.4f "
           "without layer 3's\n", before, without_deltanet, without_full);
    ck_assert_float_ge(before, 0.95);
    ck_assert_float_lt(without_deltanet, 0.1);
    ck_assert_float_ge(without_full, 0.9);
    pipeline_destroy(&p);
    model_close(&m);
}
END_TEST

/*
 * minigemma, the Gemma-3-style model that ships (samples/models/minigemma,
 * made by tests/oracle/train_minigemma.py): its layer 0 slides over 4 keys,
 * layer 1 is full.  The map's measures are those the script printed: two
 * previous-token heads in the sliding layer (0.749, 0.858), no induction
 * there at all (the copy is 8 tokens back, twice the window: the band's
 * weights are exactly 0 there), two induction heads in the full layer
 * (0.956, 0.962); it predicts the repeat, and without both induction heads
 * it loses most of it.
 */
START_TEST(minigemma_copies_in_its_full_layer_only)
{
    struct model m;
    struct pipeline p;
    unsigned char ablated[8] = { 0 };
    float prev[8];
    float ind[8];
    int right;
    double before;
    double after;

    open_shipped(&m, "minigemma");
    ck_assert_str_eq(m.dec.architecture, "gemma3");
    ck_assert_int_eq(decoder_window(&m.dec.cfg, 0), 4);
    ck_assert_int_eq(decoder_window(&m.dec.cfg, 1), 0);
    minigpt_run(&m, NULL, &p);
    ck_assert_int_eq(p.st.nq, 17);
    ck_assert_int_eq(head_measures(&p, MEASURE_PREVIOUS, prev), 0);
    ck_assert_int_eq(head_measures(&p, MEASURE_INDUCTION, ind), 0);
    ck_assert_msg(fabsf(prev[0] - 0.749f) < 5e-4f, "previous 0.0: %g", (double)prev[0]);
    ck_assert_msg(fabsf(prev[2] - 0.858f) < 5e-4f, "previous 0.2: %g", (double)prev[2]);
    for (int h = 0; h < 4; h++)
        ck_assert_msg(ind[h] == 0.0f, "induction 0.%d: %g", h, (double)ind[h]);
    ck_assert_msg(fabsf(ind[4 + 0] - 0.956f) < 5e-4f, "induction 1.0: %g", (double)ind[4]);
    ck_assert_msg(fabsf(ind[4 + 3] - 0.962f) < 5e-4f, "induction 1.3: %g", (double)ind[7]);
    before = repeat_probability(&p, &right);
    ck_assert_int_ge(right, 5);
    pipeline_destroy(&p);
    ablated[4 + 0] = ablated[4 + 3] = 1;
    minigpt_run(&m, ablated, &p);
    after = repeat_probability(&p, &right);
    printf("minigemma: the repeat's next word at %.4f, %.4f without heads 1.0 and 1.3\n", before,
           after);
    ck_assert_float_ge(before, 0.9);
    ck_assert_float_lt(after, before / 2);
    pipeline_destroy(&p);
    model_close(&m);
}
END_TEST

/* A source for the tiny model: GPT-2's family, 4 next tokens kept, sentence. */
static void
tiny_source(struct pipeline_source *src, const char *sentence)
{
    memset(src, 0, sizeof *src);
    src->family = &family_model;
    src->model = &tiny;
    src->top = 4;
    src->sentence = sentence;
}

/*
 * --print of stages no attention stage feeds (no_attention): the shown
 * layer's scores and weights are not made, and every other stage, the
 * next tokens and another layer shown are the same bits as a pipeline
 * that made them.
 */
START_TEST(a_print_without_attention_stages_changes_no_bit)
{
    struct attention_config cfg;
    struct pipeline_source src;
    struct pipeline full, lean;
    struct attn_error err;

    attention_config_init(&cfg);
    tiny_source(&src, "the cat sat on the mat and the cat");
    ck_assert_msg(pipeline_create(&full, &cfg, &src, &err) == ATTN_OK, "%s", err.msg);
    src.no_attention = true;
    ck_assert_msg(pipeline_create(&lean, &cfg, &src, &err) == ATTN_OK, "%s", err.msg);
    for (int l = 0; l < tiny.dec.cfg.n_layer; l++) {
        const struct decoder_run *a = &pipeline_decoder(&full)->run;
        const struct decoder_run *b = &pipeline_decoder(&lean)->run;
        const size_t n = (size_t)a->n, C = (size_t)tiny.dec.cfg.d_model;
        ck_assert(pipeline_select_layer(&full, l, &err) == ATTN_OK);
        ck_assert(pipeline_select_layer(&lean, l, &err) == ATTN_OK);
        ck_assert_ptr_nonnull(full.st.weights);
        ck_assert_ptr_null(lean.st.weights);
        ck_assert_ptr_null(lean.st.scores);
        ck_assert(memcmp(a->layers[l].context, b->layers[l].context, n * C * sizeof(float)) == 0);
        ck_assert(memcmp(a->layers[l].resid2, b->layers[l].resid2, n * C * sizeof(float)) == 0);
        ck_assert(memcmp(a->top_probs, b->top_probs, n * 4 * sizeof(float)) == 0);
        ck_assert(memcmp(a->top_ids, b->top_ids, n * 4 * sizeof(int)) == 0);
    }
    pipeline_destroy(&lean);
    pipeline_destroy(&full);
}
END_TEST

/*
 * A lean run (--print of the tokens and next tokens) keeps no layer: one
 * layer's keys and values, two outputs in turn, no shown slot.  The final
 * stream and the next tokens are the same bits; a layer, the lens and the
 * heads' measures are refused, not read from what the last layers left;
 * an edit of it starts over and agrees with a run made afresh.
 */
START_TEST(a_lean_print_keeps_no_layer_and_changes_no_bit)
{
    struct attention_config cfg;
    struct pipeline_source src;
    struct pipeline full, lean, edited, fresh;
    struct attn_error err;
    float measured[64];

    attention_config_init(&cfg);
    tiny_source(&src, "the cat sat on the mat and the cat");
    ck_assert_msg(pipeline_create(&full, &cfg, &src, &err) == ATTN_OK, "%s", err.msg);
    src.lean = true;
    ck_assert_msg(pipeline_create(&lean, &cfg, &src, &err) == ATTN_OK, "%s", err.msg);
    {
        const struct decoder_run *a = &pipeline_decoder(&full)->run;
        const struct decoder_run *b = &pipeline_decoder(&lean)->run;
        const size_t n = (size_t)a->n, C = (size_t)tiny.dec.cfg.d_model;
        int ids[8];
        float probs[8];
        ck_assert(!a->lean && b->lean);
        ck_assert_uint_lt(b->arena_map_bytes, a->arena_map_bytes);
        ck_assert(memcmp(a->final, b->final, n * C * sizeof(float)) == 0);
        ck_assert(memcmp(a->top_probs, b->top_probs, n * 4 * sizeof(float)) == 0);
        ck_assert(memcmp(a->top_ids, b->top_ids, n * 4 * sizeof(int)) == 0);
        /* The header's layer, mask and divisor are the first layer's, as the full run says. */
        ck_assert_int_eq(lean.layer, 0);
        ck_assert(lean.st.divisor == full.st.divisor && lean.window == full.window);
        ck_assert_int_eq(decoder_logit_lens(&tiny.dec, b, (int)n - 1, 2, ids, probs, &err),
                         ATTN_EVALUE);
        ck_assert_ptr_nonnull(strstr(err.msg, "kept none"));
    }
    ck_assert_int_eq(pipeline_select_layer(&lean, 1, &err), ATTN_EVALUE);
    ck_assert_ptr_nonnull(strstr(err.msg, "kept no layer"));
    ck_assert_int_eq(head_measures(&lean, MEASURE_PREVIOUS, measured), -1);
    /* An edit of the lean pipeline (as a view would make it) starts over: a fresh run's bits. */
    src.lean = false;
    src.sentence = "the cat sat on the mat and the dog";
    ck_assert_msg(pipeline_rebuild(&edited, &lean, &cfg, &src, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_msg(pipeline_create(&fresh, &cfg, &src, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_int_eq(pipeline_decoder(&edited)->from, 0);
    for (int l = 0; l < tiny.dec.cfg.n_layer; l++) {
        ck_assert(pipeline_select_layer(&edited, l, &err) == ATTN_OK);
        ck_assert(pipeline_select_layer(&fresh, l, &err) == ATTN_OK);
        ck_assert(same_heads(&edited, &fresh, STAGE_WEIGHTS));
        ck_assert(memcmp(edited.block.residual2.data, fresh.block.residual2.data,
                         matrix_size(&fresh.block.residual2) * sizeof(float)) == 0);
    }
    pipeline_destroy(&fresh);
    pipeline_destroy(&edited);
    pipeline_destroy(&lean);
    pipeline_destroy(&full);
}
END_TEST

/*
 * The next tokens left for later (pipeline_source.next_later, the view's
 * and --print's of other stages): the forward makes the last position's;
 * the others' are DECODER_NEXT_LATER until family_model_next_tokens, then
 * every row is what the forward making them all gives, bit for bit, also
 * after an edit that took the rows before it over (some of them made,
 * some not).
 */
START_TEST(the_next_tokens_left_for_later_are_the_same_bits)
{
    struct attention_config cfg;
    struct pipeline_source src;
    struct pipeline full, later, edited, fresh;
    struct attn_error err;

    attention_config_init(&cfg);
    tiny_source(&src, "the cat sat on the mat");
    ck_assert_msg(pipeline_create(&full, &cfg, &src, &err) == ATTN_OK, "%s", err.msg);
    src.next_later = true;
    ck_assert_msg(pipeline_create(&later, &cfg, &src, &err) == ATTN_OK, "%s", err.msg);
    {
        const struct decoder_run *a = &pipeline_decoder(&full)->run;
        const struct decoder_run *b = &pipeline_decoder(&later)->run;
        const size_t n = (size_t)a->n, top = (size_t)a->top;
        ck_assert_uint_gt(n, 2);
        for (size_t i = 0; i + 1 < n; i++)
            ck_assert_int_eq(b->top_ids[i * top], DECODER_NEXT_LATER);
        ck_assert(memcmp(a->top_ids + (n - 1) * top, b->top_ids + (n - 1) * top, top * sizeof(int)) == 0);
        ck_assert(memcmp(a->top_probs + (n - 1) * top, b->top_probs + (n - 1) * top,
                         top * sizeof(float)) == 0);
        ck_assert_int_eq(family_model_next_tokens(&later), 0);
        ck_assert(memcmp(a->top_ids, b->top_ids, n * top * sizeof(int)) == 0);
        ck_assert(memcmp(a->top_probs, b->top_probs, n * top * sizeof(float)) == 0);
    }
    /* An edit of a pipeline whose rows were not all made: the rows it takes over stay so. */
    src.sentence = "the cat sat on the mat and the cat";
    ck_assert_msg(pipeline_rebuild(&edited, &full, &cfg, &src, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_int_eq(pipeline_decoder(&edited)->from, 0); /* (full made every row: not the same) */
    pipeline_destroy(&edited);
    src.sentence = "the cat sat on the mat";
    pipeline_destroy(&later);
    ck_assert_msg(pipeline_create(&later, &cfg, &src, &err) == ATTN_OK, "%s", err.msg);
    src.sentence = "the cat sat on the mat and the cat";
    ck_assert_msg(pipeline_rebuild(&edited, &later, &cfg, &src, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_int_eq(pipeline_decoder(&edited)->from, later.tokens.count);
    src.next_later = false;
    ck_assert_msg(pipeline_create(&fresh, &cfg, &src, &err) == ATTN_OK, "%s", err.msg);
    {
        const struct decoder_run *a = &pipeline_decoder(&fresh)->run;
        const struct decoder_run *b = &pipeline_decoder(&edited)->run;
        const size_t n = (size_t)a->n, top = (size_t)a->top;
        ck_assert_int_eq(b->top_ids[0], DECODER_NEXT_LATER);
        ck_assert_int_eq(family_model_next_tokens(&edited), 0);
        ck_assert(memcmp(a->top_ids, b->top_ids, n * top * sizeof(int)) == 0);
        ck_assert(memcmp(a->top_probs, b->top_probs, n * top * sizeof(float)) == 0);
    }
    pipeline_destroy(&fresh);
    pipeline_destroy(&edited);
    pipeline_destroy(&later);
    pipeline_destroy(&full);
}
END_TEST

/*
 * The view's edit (pipeline_rebuild) takes the rows before the first
 * changed token over from the pipeline shown, and gives what a new
 * pipeline gives; a knob change computes everything again.
 */
START_TEST(an_edit_takes_the_unchanged_rows_over)
{
    struct attention_config cfg;
    struct pipeline_source src;
    struct pipeline first, edited, fresh, knob;
    struct attn_error err;

    attention_config_init(&cfg);
    tiny_source(&src, "the cat sat on the mat");
    ck_assert_msg(pipeline_create(&first, &cfg, &src, &err) == ATTN_OK, "%s", err.msg);
    src.sentence = "the cat sat on the mat and the cat";
    ck_assert_msg(pipeline_rebuild(&edited, &first, &cfg, &src, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_msg(pipeline_create(&fresh, &cfg, &src, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_int_eq(pipeline_decoder(&first)->from, 0);
    ck_assert_int_eq(pipeline_decoder(&edited)->from, first.tokens.count);
    ck_assert_int_eq(pipeline_decoder(&fresh)->from, 0);
    {
        const struct decoder_run *a = &pipeline_decoder(&edited)->run;
        const struct decoder_run *b = &pipeline_decoder(&fresh)->run;
        const struct decoder_config *c = &tiny.dec.cfg;
        const size_t n = (size_t)a->n;
        ck_assert_int_eq(a->n, b->n);
        for (int l = 0; l < c->n_layer; l++) {
            /* The layer's scores and weights as the view makes them, in each pipeline. */
            ck_assert(pipeline_select_layer(&edited, l, &err) == ATTN_OK);
            ck_assert(pipeline_select_layer(&fresh, l, &err) == ATTN_OK);
            ck_assert(same_heads(&edited, &fresh, STAGE_SCORES));
            ck_assert(same_heads(&edited, &fresh, STAGE_WEIGHTS));
            ck_assert(same_heads(&edited, &fresh, STAGE_MASKED));
            ck_assert(memcmp(a->layers[l].resid2, b->layers[l].resid2,
                             n * (size_t)c->d_model * sizeof(float)) == 0);
        }
        ck_assert(memcmp(a->top_probs, b->top_probs, n * 4 * sizeof(float)) == 0);
        ck_assert(memcmp(a->top_ids, b->top_ids, n * 4 * sizeof(int)) == 0);
    }
    /* The mask off: every row reads every key, so nothing is taken over. */
    cfg.mask = ATTN_MASK_NONE;
    ck_assert_msg(pipeline_rebuild(&knob, &edited, &cfg, &src, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_int_eq(pipeline_decoder(&knob)->from, 0);
    pipeline_destroy(&knob);
    pipeline_destroy(&first);
    pipeline_destroy(&edited);
    pipeline_destroy(&fresh);
}
END_TEST

/*
 * An ablation changed in the view recomputes from its layer: the layers
 * before the first whose ablated heads changed are taken over from the
 * pipeline shown, and every stage of every layer is what a new pipeline
 * with those heads ablated gives; putting the head back does the same.
 */
START_TEST(an_ablation_recomputes_from_its_layer)
{
    const struct decoder_config *c = &tiny.dec.cfg;
    const int last = c->n_layer - 1;
    unsigned char *ablated = calloc((size_t)c->n_layer * (size_t)c->n_head, 1);
    struct attention_config cfg;
    struct pipeline_source src;
    struct pipeline first, off, fresh, back;
    struct attn_error err;

    ck_assert(ablated != NULL && c->n_layer >= 2);
    attention_config_init(&cfg);
    tiny_source(&src, "the cat sat on the mat and the dog");
    ck_assert_msg(pipeline_create(&first, &cfg, &src, &err) == ATTN_OK, "%s", err.msg);
    ablated[(size_t)last * (size_t)c->n_head + 1] = 1; /* head 1 of the last layer */
    src.ablated = ablated;
    ck_assert_msg(pipeline_rebuild(&off, &first, &cfg, &src, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_msg(pipeline_create(&fresh, &cfg, &src, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_int_eq(pipeline_decoder(&off)->from_layer, last);
    ck_assert_int_eq(pipeline_decoder(&fresh)->from_layer, 0);
    for (int l = 0; l < c->n_layer; l++) {
        const size_t n = (size_t)off.tokens.count;
        const size_t nc = n * (size_t)c->d_model * sizeof(float);
        ck_assert(pipeline_select_layer(&off, l, &err) == ATTN_OK);
        ck_assert(pipeline_select_layer(&fresh, l, &err) == ATTN_OK);
        ck_assert(same_heads(&off, &fresh, STAGE_WEIGHTS));
        ck_assert(memcmp(off.st.context.data, fresh.st.context.data, nc) == 0);
        ck_assert_msg(memcmp(off.block.residual2.data, fresh.block.residual2.data, nc) == 0,
                      "layer %d", l);
    }
    {
        const struct decoder_run *a = &pipeline_decoder(&off)->run;
        const struct decoder_run *b = &pipeline_decoder(&fresh)->run;
        const size_t n = (size_t)a->n;
        ck_assert(memcmp(a->top_probs, b->top_probs, n * 4 * sizeof(float)) == 0);
        ck_assert(memcmp(a->top_ids, b->top_ids, n * 4 * sizeof(int)) == 0);
        /* The ablated head changed the prediction's probabilities. */
        ck_assert(memcmp(a->top_probs, pipeline_decoder(&first)->run.top_probs,
                         n * 4 * sizeof(float)) != 0);
    }
    /* The head back: from the same layer, and the first pipeline's numbers again. */
    src.ablated = NULL;
    ck_assert_msg(pipeline_rebuild(&back, &off, &cfg, &src, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_int_eq(pipeline_decoder(&back)->from_layer, last);
    ck_assert(memcmp(pipeline_decoder(&back)->run.top_probs, pipeline_decoder(&first)->run.top_probs,
                     (size_t)back.tokens.count * 4 * sizeof(float)) == 0);
    pipeline_destroy(&back);
    pipeline_destroy(&first);
    pipeline_destroy(&off);
    pipeline_destroy(&fresh);
    free(ablated);
}
END_TEST

static Suite *
model_suite(void)
{
    Suite *s = suite_create("model");
    TCase *tc = tcase_create("tiny");
    /* (a hang guard, not a timing: CK_TIMEOUT_MULTIPLIER scales it under the sanitizers) */
    tcase_set_timeout(tc, 30);

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, every_stage_agrees_with_pytorch);
    tcase_add_test(tc, an_edit_takes_the_unchanged_rows_over);
    tcase_add_test(tc, the_next_tokens_left_for_later_are_the_same_bits);
    tcase_add_test(tc, a_print_without_attention_stages_changes_no_bit);
    tcase_add_test(tc, a_lean_print_keeps_no_layer_and_changes_no_bit);
    tcase_add_test(tc, an_ablation_recomputes_from_its_layer);
    tcase_add_test(tc, the_knobs_that_apply_recompute);
    tcase_add_test(tc, config_keys_that_change_attention);
    tcase_add_test(tc, ablation_zeroes_one_head);
    tcase_add_test(tc, the_stages_a_model_has);
    tcase_add_test(tc, head_measures_are_their_definitions);
    tcase_add_test(tc, exports_every_layer);
    tcase_add_test(tc, minigpt_has_a_previous_token_and_induction_heads);
    tcase_add_test(tc, minillama_has_a_previous_token_and_an_induction_head);
    tcase_add_test(tc, minigemma_copies_in_its_full_layer_only);
    tcase_add_test(tc, miniqwen35_copies_in_a_deltanet_layer);
    suite_add_tcase(s, tc);
    return s;
}

TEST_MAIN(model_suite)
