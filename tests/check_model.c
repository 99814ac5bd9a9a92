/*
 * check_model.c: a trained model through the family seam (model.c,
 * family_decoder.c, export_model): what the front ends see.
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

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attnscope/families/decoder/model_export.h"
#include "attnscope/pipeline/export.h"
#include "attnscope/families/decoder/family_decoder.h"
#include "attnscope/families/decoder/headmap.h"
#include "attnscope/families/decoder/model.h"
#include "attnscope/files/fileio.h"
#include "attnscope/files/jsonfile.h"
#include "attnscope/pipeline/pipeline.h"
#include "attnscope/base/utf8.h"
#include "expected.h"
#include "testutil.h"

#define TINY "tests/fixtures/gpt2/tiny"

static struct model tiny;
static struct expected want;

static void
setup(void)
{
    struct attn_error err;
    char path[4096];

    ck_assert_msg(model_open(&tiny, test_path(TINY), NULL, &err) == ATTN_OK, "%s", err.msg);
    snprintf(path, sizeof path, "%s", test_path(TINY "/expected.txt"));
    expected_load(&want, path);
}

static void
teardown(void)
{
    model_close(&tiny);
    free(want.text);
}

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

static const char *absolute(const char *rel);

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
    src.family = &family_decoder;
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
    const struct family_decoder_state *g = pipeline_decoder(&p);
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
        check_stage(&p, c, "ln1", STAGE_LN1);
        check_stage(&p, c, "q", STAGE_QUERIES);
        check_stage(&p, c, "k", STAGE_KEYS);
        check_stage(&p, c, "v", STAGE_VALUES);
        check_stage(&p, c, "context", STAGE_CONTEXT);
        check_stage(&p, c, "attn", STAGE_OUTPUT);
        check_stage(&p, c, "resid1", STAGE_RESIDUAL1);
        check_stage(&p, c, "ln2", STAGE_LN2);
        check_stage(&p, c, "fc", STAGE_FC);
        check_stage(&p, c, "gelu", STAGE_GELU);
        check_stage(&p, c, "mlp", STAGE_MLP);
    }
    {
        struct pipeline_view f;
        pipeline_stage_view(&p, STAGE_FINAL, 0, &f);
        compare("final", f.m.data, line_of(c, "final", -1), matrix_size(&f.m), 1e-5);
    }
    /* The logit lens at the last position: each layer read through ln_f and wte. */
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
            s != STAGE_SWIGLU)
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
        ck_assert(!pipeline_stage_present(&p, STAGE_LN1));
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

START_TEST(texts_the_model_cannot_read)
{
    struct attention_config cfg;
    struct pipeline_source src;
    struct pipeline p;
    struct attn_error err;
    char long_text[400];

    attention_config_init(&cfg);
    memset(&src, 0, sizeof src);
    src.family = &family_decoder;
    src.model = &tiny;
    src.top = 3;
    /* 30 words: more than the 24 positions. */
    long_text[0] = '\0';
    for (int i = 0; i < 30; i++)
        strcat(long_text, " cat");
    src.sentence = long_text;
    ck_assert_int_eq(pipeline_create(&p, &cfg, &src, &err), ATTN_ELIMIT);
    ck_assert_msg(strstr(err.msg, "more than 24 tokens") && strstr(err.msg, "at most 24") &&
                      strstr(err.msg, "n_positions"),
                  "%s", err.msg);
    /*
     * A megabyte of letters in one word: refused at once.  Encoding stops one
     * token past the room, and a piece's merges take O(n log n): the old
     * encoder spent three minutes on it (and the view did not answer).
     */
    {
        char *word = malloc((1 << 20) + 2);
        unsigned seed = 1;
        int *ids;
        int count;
        ck_assert_ptr_nonnull(word);
        word[0] = ' ';
        for (int i = 1; i <= 1 << 20; i++) {
            seed = seed * 1103515245u + 12345u;
            word[i] = (char)('a' + (seed >> 16) % 26);
        }
        word[(1 << 20) + 1] = '\0';
        src.sentence = word;
        ck_assert_int_eq(pipeline_create(&p, &cfg, &src, &err), ATTN_ELIMIT);
        ck_assert_msg(strstr(err.msg, "more than 24 tokens"), "%s", err.msg);
        /* Without a limit the whole word is encoded, and spells the word back. */
        ck_assert_int_eq(bpe_encode(&tiny.bpe, word, strlen(word), 0, &ids, &count, &err), ATTN_OK);
        {
            size_t at = 0;
            for (int i = 0; i < count; i++) {
                char bytes[64];
                int n = bpe_token_bytes(&tiny.bpe, ids[i], bytes, sizeof bytes);
                ck_assert(n > 0 && memcmp(word + at, bytes, (size_t)n) == 0);
                at += (size_t)n;
            }
            ck_assert_uint_eq(at, strlen(word));
        }
        free(ids);
        free(word);
    }
    src.sentence = "";
    ck_assert_int_eq(pipeline_create(&p, &cfg, &src, &err), ATTN_EVALUE);
    ck_assert_msg(strstr(err.msg, "empty"), "%s", err.msg);
    /* <|endoftext|> alone is a text. */
    src.bos = true;
    ck_assert_int_eq(pipeline_create(&p, &cfg, &src, &err), ATTN_OK);
    ck_assert_int_eq(p.tokens.count, 1);
    ck_assert_str_eq(p.tokens.text[0], "<|endoftext|>");
    pipeline_destroy(&p);
    src.sentence = "caf\xc3";
    src.bos = false;
    ck_assert_int_ne(pipeline_create(&p, &cfg, &src, &err), ATTN_OK);
    cfg.temperature = 0.0;
    src.sentence = "cat";
    ck_assert_int_eq(pipeline_create(&p, &cfg, &src, &err), ATTN_EVALUE);
}
END_TEST

/* test_path(rel) made absolute, for symbolic links made elsewhere. */
static const char *
absolute(const char *rel)
{
    static char buf[PATH_MAX];

    ck_assert_msg(realpath(test_path(rel), buf) != NULL, "%s is missing", rel);
    return buf;
}

/* Reads a whole small file into buf. */
static void
slurp(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "r");
    size_t n;

    ck_assert_msg(f != NULL, "%s is missing", path);
    n = fread(buf, 1, size - 1, f);
    buf[n] = '\0';
    fclose(f);
}

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

/* A copy of the tiny model's weights and config in dir/name, without its tokenizer files. */
static const char *
model_copy(const char *where, const char *name)
{
    static char out[300];
    char from[4096];
    char to[700];

    snprintf(out, sizeof out, "%.200s/%.60s", where, name);
    ck_assert_int_eq(mkdir(out, 0777), 0);
    snprintf(from, sizeof from, "%s", absolute(TINY "/config.json"));
    snprintf(to, sizeof to, "%s/config.json", out);
    ck_assert_int_eq(symlink(from, to), 0);
    snprintf(from, sizeof from, "%s", absolute(TINY "/model.safetensors"));
    snprintf(to, sizeof to, "%s/model.safetensors", out);
    ck_assert_int_eq(symlink(from, to), 0);
    return out;
}

/* The tiny vocabulary as tokenizer.json, merges as "a b" strings or ["a", "b"] pairs. */
static void
write_tokenizer_json(const char *folder, bool pairs, int merges)
{
    char vocab[8192];
    char merges_txt[4096];
    char *json = malloc(65536);
    size_t len = 0;
    char path[4096];
    const char *line;
    int count = 0;

    snprintf(path, sizeof path, "%s", test_path(TINY "/vocab.json"));
    slurp(path, vocab, sizeof vocab);
    snprintf(path, sizeof path, "%s", test_path(TINY "/merges.txt"));
    slurp(path, merges_txt, sizeof merges_txt);
    len += (size_t)sprintf(json + len, "{\"version\":\"1.0\",\"model\":{\"type\":\"BPE\",\"vocab\":%s,"
                                       "\"merges\":[", vocab);
    line = strchr(merges_txt, '\n') + 1; /* after #version */
    while (*line && count < merges) {
        const char *end = strchr(line, '\n');
        const char *space = memchr(line, ' ', (size_t)(end - line));
        if (pairs)
            len += (size_t)sprintf(json + len, "%s[\"%.*s\",\"%.*s\"]", count ? "," : "",
                                   (int)(space - line), line, (int)(end - space - 1), space + 1);
        else
            len += (size_t)sprintf(json + len, "%s\"%.*s\"", count ? "," : "", (int)(end - line),
                                   line);
        count++;
        line = end + 1;
    }
    len += (size_t)sprintf(json + len, "]}}");
    test_write_file(folder, "tokenizer.json", json, len);
    free(json);
}

/* Whether len bytes are UTF-8 throughout. */
static bool
all_utf8(const char *s, size_t len)
{
    for (size_t i = 0; i < len;) {
        int l = utf8_length((const unsigned char *)s + i, len - i);
        if (l == 0)
            return false;
        i += (size_t)l;
    }
    return true;
}

/* Undoes export's token escapes (\\ \n \t \r \xHH) of field into out; its length. */
static size_t
unescape(const char *field, size_t n, char *out)
{
    size_t at = 0;

    for (size_t i = 0; i < n; i++) {
        if (field[i] != '\\') {
            out[at++] = field[i];
        } else if (field[i + 1] == 'x') {
            unsigned v;
            ck_assert_int_eq(sscanf(field + i + 2, "%2X", &v), 1);
            out[at++] = (char)v;
            i += 3;
        } else {
            char c = field[++i];
            out[at++] = c == 'n' ? '\n' : c == 't' ? '\t' : c == 'r' ? '\r' : c;
        }
    }
    return at;
}

/*
 * Exported CSV files are valid UTF-8 whatever the text (issue 23, item 10):
 * GPT-2 cuts CJK characters and emoji into byte tokens; each is written
 * with \xHH escapes, and undoing them gives back the text's bytes.
 */
START_TEST(exported_tokens_are_utf8)
{
    const char *text = "Kat \xe6\x97\xa5 \xf0\x9f\x91\x8d\ta\\b,\"\n";
    const char *tmp = test_tmpdir();
    char out[300];
    char path[400];
    static char csv[1 << 16];
    char joined[512];
    size_t got = 0;
    struct attention_config cfg;
    struct pipeline_source src;
    struct pipeline p;
    struct attn_error err;
    int written;
    char *line;

    attention_config_init(&cfg);
    memset(&src, 0, sizeof src);
    src.family = &family_decoder;
    src.model = &tiny;
    src.top = 4;
    src.sentence = text;
    ck_assert_msg(pipeline_create(&p, &cfg, &src, &err) == ATTN_OK, "%s", err.msg);
    snprintf(out, sizeof out, "%.200s/utf8", tmp);
    ck_assert_msg(export_model(&p, NULL, 0, out, &written, &err) == ATTN_OK, "%s", err.msg);
    snprintf(path, sizeof path, "%s/next.csv", out);
    slurp(path, csv, sizeof csv);
    ck_assert(all_utf8(csv, strlen(csv)));
    snprintf(path, sizeof path, "%s/tokens.csv", out);
    slurp(path, csv, sizeof csv);
    ck_assert_msg(all_utf8(csv, strlen(csv)), "%s", csv);
    ck_assert_ptr_nonnull(strstr(csv, "\\xE6"));
    /* The third field of every row, unescaped and joined: the text itself. */
    line = strchr(csv, '\n') + 1;
    while (*line != '\0') {
        char *f = strchr(strchr(line, ',') + 1, ',') + 1;
        char *end = strchr(f, '\n');
        if (*f == '"') {
            /* (quoted: a field with a comma or quote; quotes doubled) */
            char plain[256];
            size_t k = 0;
            for (f++; !(f[0] == '"' && f[1] != '"'); f++) {
                plain[k++] = *f;
                if (f[0] == '"')
                    f++;
            }
            got += unescape(plain, k, joined + got);
            end = strchr(f, '\n');
        } else {
            got += unescape(f, (size_t)(end - f), joined + got);
        }
        line = end + 1;
    }
    ck_assert_uint_eq(got, strlen(text));
    ck_assert(memcmp(joined, text, got) == 0);
    pipeline_destroy(&p);
    test_remove_dir(tmp);
}
END_TEST

/*
 * A token of 300 bytes keeps its text and its length (issue 23, item 12):
 * a vocabulary whose merges double "a" up to 256, then add 32, 8 and 4.
 */
START_TEST(a_token_of_300_bytes_keeps_its_text)
{
    static const char *const chain[][2] = {
        { "a", "a" }, { "aa", "aa" }, { "4", "4" }, { "8", "8" }, { "16", "16" }, { "32", "32" },
        { "64", "64" }, { "128", "128" }, { "256", "32" }, { "288", "8" }, { "296", "4" },
    };
    const char *tmp = test_tmpdir();
    char folder[300];
    static char vocab[1 << 16];
    static char merges[1 << 14];
    static char piece[2][400];
    static char text[400];
    size_t vlen = 0;
    size_t mlen = 0;
    struct model m;
    struct attention_config cfg;
    struct pipeline_source src;
    struct pipeline p;
    struct attn_error err;
    int id = 0;

    snprintf(folder, sizeof folder, "%s", model_copy(tmp, "long"));
    vlen += (size_t)snprintf(vocab + vlen, sizeof vocab - vlen, "{");
    for (int c = 0; c < 256; c++)
        vlen += (size_t)snprintf(vocab + vlen, sizeof vocab - vlen, "%s\"%s\":%d", c ? "," : "",
                                 tiny.bpe.byte_char[c][0] == '"'    ? "\\\""
                                 : tiny.bpe.byte_char[c][0] == '\\' ? "\\\\"
                                                                    : tiny.bpe.byte_char[c],
                                 id++);
    mlen += (size_t)snprintf(merges, sizeof merges, "#version: 0.2\n");
    for (size_t k = 0; k < sizeof chain / sizeof chain[0]; k++) {
        /* Numbers stand for that many a's. */
        for (int s = 0; s < 2; s++) {
            int n = chain[k][s][0] == 'a' ? (int)strlen(chain[k][s]) : atoi(chain[k][s]);
            memset(piece[s], 'a', (size_t)n);
            piece[s][n] = '\0';
        }
        mlen += (size_t)snprintf(merges + mlen, sizeof merges - mlen, "%s %s\n", piece[0], piece[1]);
        vlen += (size_t)snprintf(vocab + vlen, sizeof vocab - vlen, ",\"%s%s\":%d", piece[0],
                                 piece[1], id++);
    }
    snprintf(vocab + vlen, sizeof vocab - vlen, "}");
    test_write_text(folder, "vocab.json", vocab);
    test_write_text(folder, "merges.txt", merges);
    ck_assert_msg(model_open(&m, folder, NULL, &err) == ATTN_OK, "%s", err.msg);
    text[0] = ' ';
    memset(text + 1, 'a', 300);
    text[301] = '\0';
    attention_config_init(&cfg);
    memset(&src, 0, sizeof src);
    src.family = &family_decoder;
    src.model = &m;
    src.top = 2;
    src.sentence = text;
    ck_assert_msg(pipeline_create(&p, &cfg, &src, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_int_eq(p.tokens.count, 2);
    ck_assert_int_eq(p.tokens.length[1], 300);
    ck_assert_int_eq(p.tokens.offset[1], 1);
    ck_assert_str_eq(p.tokens.text[1], text + 1);
    pipeline_destroy(&p);
    model_close(&m);
    test_remove_dir(tmp);
}
END_TEST

START_TEST(tokenizers_in_every_form)
{
    const char *tmp = test_tmpdir();
    char base[200];
    char path[700];
    char from[4096];
    struct model m;
    struct attn_error err;
    int *ids;
    int *want_ids;
    int n;
    int want_n;
    const char *text = "The dog sat on the log, and the cat sat on the mat.";

    snprintf(base, sizeof base, "%.190s", tmp);
    ck_assert_int_eq(bpe_encode(&tiny.bpe, text, strlen(text), 0, &want_ids, &want_n, &err), ATTN_OK);
    for (int form = 0; form < 3; form++) {
        const char *d = model_copy(base, form == 0 ? "strings" : form == 1 ? "pairs" : "openai");
        char folder[300];
        snprintf(folder, sizeof folder, "%s", d);
        if (form < 2) {
            write_tokenizer_json(folder, form == 1, 1000);
        } else {
            /* OpenAI's names, as the book's chapter 5 downloads them. */
            snprintf(from, sizeof from, "%s", absolute(TINY "/vocab.json"));
            snprintf(path, sizeof path, "%s/encoder.json", folder);
            ck_assert_int_eq(symlink(from, path), 0);
            snprintf(from, sizeof from, "%s", absolute(TINY "/merges.txt"));
            snprintf(path, sizeof path, "%s/vocab.bpe", folder);
            ck_assert_int_eq(symlink(from, path), 0);
        }
        ck_assert_msg(model_open(&m, folder, NULL, &err) == ATTN_OK, "%s", err.msg);
        ck_assert_str_eq(strrchr(m.tokenizer, '/') + 1, form < 2 ? "tokenizer.json" : "encoder.json");
        ck_assert_int_eq(m.bpe.merges, tiny.bpe.merges);
        ck_assert_int_eq(bpe_encode(&m.bpe, text, strlen(text), 0, &ids, &n, &err), ATTN_OK);
        ck_assert_int_eq(n, want_n);
        ck_assert(memcmp(ids, want_ids, (size_t)n * sizeof *ids) == 0);
        free(ids);
        model_close(&m);
    }
    /* No merges at all is refused, not a tokenizer that spells every word byte by byte. */
    {
        const char *d = model_copy(base, "nomerges");
        char folder[300];
        snprintf(folder, sizeof folder, "%s", d);
        write_tokenizer_json(folder, true, 0);
        ck_assert_int_ne(model_open(&m, folder, NULL, &err), ATTN_OK);
        ck_assert_msg(strstr(err.msg, "tokenizer.json") && strstr(err.msg, "no merges"), "%s",
                      err.msg);
    }
    free(want_ids);
    test_remove_dir(tmp);
}
END_TEST

START_TEST(bad_model_folders_say_what_is_wrong)
{
    const char *tmp = test_tmpdir();
    char base[200];
    char folder[300];
    char from[4096];
    char path[700];
    struct model m;
    struct attn_error err;

    snprintf(base, sizeof base, "%.190s", tmp);
    /* Weights but no tokenizer, and no copy of GPT-2's anywhere to borrow. */
    setenv("ATTNSCOPE_TOKENIZERS", base, 1);
    setenv("TIKTOKEN_CACHE_DIR", "", 1);
    setenv("HF_HUB_CACHE", base, 1);
    ck_assert_int_ne(model_open(&m, test_path("tests/fixtures/gpt2/hf-f32"), NULL, &err), ATTN_OK);
    ck_assert_msg(strstr(err.msg, "no tokenizer") && strstr(err.msg, "vocab.json") &&
                      strstr(err.msg, "encoder.json") && strstr(err.msg, "tokenizer.json") &&
                      strstr(err.msg, "no copy of GPT-2's"),
                  "%s", err.msg);
    /* The copy installed with attnscope is GPT-2's: too wide for this model, which is said. */
    setenv("ATTNSCOPE_TOKENIZERS", test_path("samples/tokenizers"), 1);
    ck_assert_int_ne(model_open(&m, test_path("tests/fixtures/gpt2/hf-f32"), NULL, &err), ATTN_OK);
    ck_assert_msg(strstr(err.msg, "gpt2/encoder.json: 50257 tokens, but the model's vocabulary "
                                  "(config.json) has 32") &&
                      strstr(err.msg, "put the model's own beside its weights"),
                  "%s", err.msg);
    setenv("ATTNSCOPE_TOKENIZERS", test_path("samples/tokenizers"), 1); /* as make check sets it */
    unsetenv("TIKTOKEN_CACHE_DIR");
    unsetenv("HF_HUB_CACHE");
    /* Half a pair. */
    snprintf(folder, sizeof folder, "%s", model_copy(base, "half"));
    snprintf(from, sizeof from, "%s", absolute(TINY "/vocab.json"));
    snprintf(path, sizeof path, "%s/vocab.json", folder);
    ck_assert_int_eq(symlink(from, path), 0);
    ck_assert_int_ne(model_open(&m, folder, NULL, &err), ATTN_OK);
    ck_assert_msg(strstr(err.msg, "merges.txt: missing"), "%s", err.msg);
    /* A tokenizer with more tokens than the model has embeddings. */
    snprintf(folder, sizeof folder, "%s", model_copy(base, "wide"));
    {
        char vocab[8192];
        char *brace;
        slurp(test_path(TINY "/vocab.json"), vocab, sizeof vocab);
        brace = strrchr(vocab, '}');
        strcpy(brace, ",\"extra\":317}");
        test_write_text(folder, "vocab.json", vocab);
        snprintf(from, sizeof from, "%s", absolute(TINY "/merges.txt"));
        snprintf(path, sizeof path, "%s/merges.txt", folder);
        ck_assert_int_eq(symlink(from, path), 0);
    }
    ck_assert_int_ne(model_open(&m, folder, NULL, &err), ATTN_OK);
    ck_assert_msg(strstr(err.msg, "318 tokens, but the model's vocabulary (config.json) has 317"),
                  "%s", err.msg);
    /* A name that is neither a folder nor in the cache. */
    setenv("HF_HUB_CACHE", base, 1);
    ck_assert_int_ne(model_open(&m, "no-such-model", NULL, &err), ATTN_OK);
    ck_assert_msg(strstr(err.msg, "no-such-model") && strstr(err.msg, "Hugging Face cache"), "%s",
                  err.msg);
    ck_assert_int_ne(model_open(&m, "./nowhere/at-all", NULL, &err), ATTN_OK);
    ck_assert_msg(strstr(err.msg, "no such file or folder"), "%s", err.msg);
    unsetenv("HF_HUB_CACHE");
    test_remove_dir(tmp);
}
END_TEST

/* dir/models--ID/snapshots/REV holding the tiny model, and refs/main naming REV when ref. */
static void
cache_entry(const char *hub, const char *id, const char *rev, bool ref)
{
    char path[1200];
    char repo[700];

    snprintf(repo, sizeof repo, "%s/models--%s", hub, id);
    ck_assert_int_eq(mkdir(repo, 0777), 0);
    snprintf(path, sizeof path, "%s/snapshots", repo);
    ck_assert_int_eq(mkdir(path, 0777), 0);
    snprintf(path, sizeof path, "%s/snapshots/%s", repo, rev);
    ck_assert_int_eq(symlink(absolute(TINY), path), 0);
    if (ref) {
        snprintf(path, sizeof path, "%s/refs", repo);
        ck_assert_int_eq(mkdir(path, 0777), 0);
        char rel[200];
        snprintf(rel, sizeof rel, "models--%.100s/refs/main", id);
        test_write_text(hub, rel, rev);
    }
}

/* A folder in tmp holding copies (not links) of the tiny model's files. */
static const char *
tiny_copy(const char *tmp, const char *name)
{
    static char out[300];
    char cmd[5000];

    snprintf(out, sizeof out, "%.200s/%.60s", tmp, name);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s' && cp '%s'/config.json '%s'/model.safetensors '%s'/vocab.json "
                              "'%s'/merges.txt '%s'/",
             out, absolute(TINY), absolute(TINY), absolute(TINY), absolute(TINY), out);
    ck_assert_int_eq(system(cmd), 0);
    return out;
}

/* model_open(folder) fails with a message holding said and naming file. */
static void
refused(const char *folder, const char *file, const char *said)
{
    struct model m;
    struct attn_error err;

    ck_assert_int_ne(model_open(&m, folder, NULL, &err), ATTN_OK);
    ck_assert_msg(strstr(err.msg, said) != NULL && (file == NULL || strstr(err.msg, file) != NULL),
                  "want '%s' (%s): %s", said, file != NULL ? file : "", err.msg);
}

/* Replaces folder/name by a FIFO, or by a symbolic link to target when target is not NULL. */
static void
replace_by(const char *folder, const char *name, const char *target)
{
    char path[600];

    snprintf(path, sizeof path, "%s/%s", folder, name);
    ck_assert_int_eq(unlink(path), 0);
    if (target == NULL)
        ck_assert_int_eq(mkfifo(path, 0600), 0);
    else
        ck_assert_int_eq(symlink(target, path), 0);
}

/*
 * Issue 23, item 5 and 17: every file of a model that is a FIFO is refused
 * at once (open() on one waits for a writer forever), and what is wrong is
 * said: a FIFO, a loop of links or a device is not "missing", a folder
 * named config.json is not "not JSON".
 */
START_TEST(files_that_are_not_files_are_named)
{
    const char *tmp = test_tmpdir();
    const char *names[] = { "model.safetensors", "config.json", "vocab.json", "merges.txt" };
    char path[600];
    const char *f;

    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char sub[32];
        snprintf(sub, sizeof sub, "fifo%zu", i);
        f = tiny_copy(tmp, sub);
        replace_by(f, names[i], NULL);
        refused(f, names[i], "is a FIFO, not a file");
    }
    f = tiny_copy(tmp, "loop");
    snprintf(path, sizeof path, "%s/vocab.json", f);
    replace_by(f, "vocab.json", path);
    refused(f, "vocab.json", "a loop of symbolic links");
    f = tiny_copy(tmp, "zero");
    replace_by(f, "vocab.json", "/dev/zero");
    refused(f, "vocab.json", "is a device, not a file");
    f = tiny_copy(tmp, "dangling");
    replace_by(f, "merges.txt", "/nonexistent/blob");
    refused(f, "merges.txt", "is a symbolic link to nothing");
    f = tiny_copy(tmp, "folder");
    snprintf(path, sizeof path, "%s/config.json", f);
    ck_assert_int_eq(unlink(path), 0);
    ck_assert_int_eq(mkdir(path, 0755), 0);
    refused(f, "config.json", "is a folder, not a file");
    /* A shard index, and a shard, as FIFOs. */
    f = tiny_copy(tmp, "index");
    snprintf(path, sizeof path, "%s/model.safetensors", f);
    ck_assert_int_eq(unlink(path), 0);
    snprintf(path, sizeof path, "%s/model.safetensors.index.json", f);
    ck_assert_int_eq(mkfifo(path, 0600), 0);
    refused(f, "model.safetensors.index.json", "is a FIFO, not a file");
    ck_assert_int_eq(unlink(path), 0);
    test_write_text(f, "model.safetensors.index.json",
                    "{\"weight_map\":{\"wte.weight\":\"model-00001.safetensors\"}}");
    snprintf(path, sizeof path, "%s/model-00001.safetensors", f);
    ck_assert_int_eq(mkfifo(path, 0600), 0);
    refused(f, "model-00001.safetensors", "is a FIFO, not a file");
    test_remove_dir(tmp);
}
END_TEST

/*
 * Issue 23, items 14, 9 and 17: a config.json past its cap is refused
 * before it is read, naming the cap; config keys that change the
 * computation and are not computed are refused by name; n_layer past the
 * file names the first missing tensor; tie_word_embeddings false needs
 * lm_head.weight.
 */
START_TEST(config_files_are_capped_and_audited)
{
    const char *tmp = test_tmpdir();
    char *big = malloc(JSONFILE_CONFIG_MAX + 1024);
    const char *f;
    char text[1024];
    char base[400];

    ck_assert_ptr_nonnull(big);
    slurp(test_path(TINY "/config.json"), base, sizeof base);
    *strrchr(base, '}') = '\0';
    f = tiny_copy(tmp, "big");
    /* A valid config.json one padding string past the cap. */
    snprintf(big, 512, "%s, \"pad\": \"", base);
    memset(big + strlen(big), 'x', JSONFILE_CONFIG_MAX - strlen(big) + 8);
    strcpy(big + JSONFILE_CONFIG_MAX + 8, "\"}");
    test_write_text(f, "config.json", big);
    refused(f, "config.json", "attnscope reads at most 4194304 of such a file");
    free(big);
    f = tiny_copy(tmp, "keys");
    {
        /* Each a change of the tiny model's config.json (what it says, then what is refused). */
        static const char *const change[][3] = {
            { "\"n_inner\": null", "\"n_inner\": null, \"add_cross_attention\": true",
              "\"add_cross_attention\" is true" },
            { "gelu_new", "relu", "\"activation_function\" is relu" },
            { "\"gpt2\"", "\"gemma3\"", "model_type gemma3 is not supported yet; supported: gpt2" },
            { "\"n_inner\": null", "\"n_inner\": null, \"scale_attn_weights\": \"yes\"",
              "\"scale_attn_weights\" is not true or false" },
        };
        for (size_t k = 0; k < sizeof change / sizeof change[0]; k++) {
            char *at;
            snprintf(text, sizeof text, "%s}", base);
            at = strstr(text, change[k][0]);
            ck_assert_ptr_nonnull(at);
            {
                char tail[512];
                snprintf(tail, sizeof tail, "%s", at + strlen(change[k][0]));
                snprintf(at, sizeof text - (size_t)(at - text), "%s%s", change[k][1], tail);
            }
            test_write_text(f, "config.json", text);
            refused(f, "config.json", change[k][2]);
        }
    }
    snprintf(text, sizeof text, "%s, \"tie_word_embeddings\": false}", base);
    test_write_text(f, "config.json", text);
    refused(f, "model.safetensors", "no tensor 'lm_head.weight', which config.json's");
    snprintf(text, sizeof text, "%s}", base);
    {
        char *n = strstr(text, "\"n_layer\": 2");
        ck_assert_ptr_nonnull(n);
        memcpy(n, "\"n_layer\": 9", strlen("\"n_layer\": 9"));
    }
    test_write_text(f, "config.json", text);
    refused(f, "model.safetensors", "no tensor 'h.2.ln_1.weight': config.json says 9 layers");
    test_remove_dir(tmp);
}
END_TEST

/*
 * jansson running out of memory says so, naming the file (issue 23, item
 * 14: the message was "config.json: "): a vocab.json of many small tokens
 * under an address-space limit, in a child process.
 */
START_TEST(json_out_of_memory_is_said)
{
#if defined(__SANITIZE_ADDRESS__)
    /* (AddressSanitizer reserves terabytes of address space: RLIMIT_AS cannot be used) */
    return;
#endif
    const char *tmp = test_tmpdir();
    const size_t n = 400000;
    char *vocab = malloc(n * 32 + 16);
    size_t at = 0;
    char path[400];
    pid_t pid;
    int status;

    ck_assert_ptr_nonnull(vocab);
    vocab[at++] = '{';
    for (size_t i = 0; i < n; i++)
        at += (size_t)sprintf(vocab + at, "%s\"t%zu\":%zu", i ? "," : "", i, i);
    vocab[at++] = '}';
    vocab[at] = '\0';
    test_write_text(tmp, "vocab.json", vocab);
    free(vocab);
    snprintf(path, sizeof path, "%s/vocab.json", tmp);
    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        struct rlimit small;
        struct attn_error err;
        json_t *root;
        small.rlim_cur = small.rlim_max = test_address_space() + ((rlim_t)24 << 20);
        if (setrlimit(RLIMIT_AS, &small) != 0)
            _exit(3);
        root = jsonfile_load(path, JSONFILE_VOCAB_MAX, &err);
        if (root != NULL)
            _exit(4); /* (the limit was not low enough to test anything) */
        _exit(strstr(err.msg, "vocab.json: out of memory") != NULL ? 0 : 1);
    }
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child: %d", WEXITSTATUS(status));
    test_remove_dir(tmp);
}
END_TEST

START_TEST(names_are_found_in_the_hugging_face_cache)
{
    const char *tmp = test_tmpdir();
    char base[200];
    char hub[400];
    struct model_place place;
    struct attn_error err;

    snprintf(base, sizeof base, "%.190s", tmp);
    snprintf(hub, sizeof hub, "%s/hub", base);
    ck_assert_int_eq(mkdir(hub, 0777), 0);
    cache_entry(hub, "org--tiny", "abc123", true);
    cache_entry(hub, "openai-community--gpt2", "def456", false);
    unsetenv("HF_HUB_CACHE");
    setenv("HF_HOME", base, 1);
    ck_assert_int_eq(model_locate("org/tiny", &place, &err), ATTN_OK);
    ck_assert_msg(strstr(place.dir, "models--org--tiny/snapshots/abc123") != NULL, "%s", place.dir);
    ck_assert_str_eq(place.name, "tiny");
    /* A bare name is looked for where GPT-2 now lives too; no refs/main: the snapshot there. */
    ck_assert_int_eq(model_locate("gpt2", &place, &err), ATTN_OK);
    ck_assert_msg(strstr(place.dir, "models--openai-community--gpt2/snapshots/def456") != NULL, "%s",
                  place.dir);
    ck_assert_str_eq(place.name, "gpt2");
    /* $HF_HUB_CACHE first. */
    setenv("HF_HUB_CACHE", hub, 1);
    unsetenv("HF_HOME");
    ck_assert_int_eq(model_locate("org/tiny", &place, &err), ATTN_OK);
    ck_assert_int_ne(model_locate("org/other", &place, &err), ATTN_OK);
    ck_assert_int_ne(model_locate("../tiny", &place, &err), ATTN_OK);
    unsetenv("HF_HUB_CACHE");
    /* A model that ships with attnscope is found by its folder's name ($ATTNSCOPE_MODELS first). */
    {
        char models[4096];
        snprintf(models, sizeof models, "%s", absolute("tests/fixtures/gpt2"));
        setenv("ATTNSCOPE_MODELS", models, 1);
        ck_assert_int_eq(model_locate("tiny", &place, &err), ATTN_OK);
        ck_assert_msg(strstr(place.dir, "tests/fixtures/gpt2/tiny") != NULL, "%s", place.dir);
        ck_assert_str_eq(place.name, "tiny");
        unsetenv("ATTNSCOPE_MODELS");
    }
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
    src.family = &family_decoder;
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
    const struct family_decoder_state *g = pipeline_decoder(p);
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
 * Issue 23, item 17: the cache's messages name the cache looked in (not
 * ~/.cache when HF_HUB_CACHE is set), an incomplete download is called
 * incomplete, and a folder here named like a cached model says that it
 * shadows it (or gives way to it when it is not a model).
 */
START_TEST(the_cache_says_where_and_what)
{
    const char *tmp = test_tmpdir();
    char hub[400];
    char path[1200];
    char cwd[4096];
    struct model_place place;
    struct attn_error err;

    snprintf(hub, sizeof hub, "%.300s/hub", tmp);
    ck_assert_int_eq(mkdir(hub, 0777), 0);
    setenv("HF_HUB_CACHE", hub, 1);
    ck_assert_int_ne(model_locate("nowhere", &place, &err), ATTN_OK);
    ck_assert_msg(strstr(err.msg, hub) != NULL, "%s", err.msg);
    /* A snapshot whose files are links to blobs that are not there. */
    snprintf(path, sizeof path, "%s/models--org--broken/snapshots/abc", hub);
    {
        char cmd[2600];
        snprintf(cmd, sizeof cmd, "mkdir -p '%s' && ln -s ../../blobs/missing '%s/config.json'", path,
                 path);
        ck_assert_int_eq(system(cmd), 0);
    }
    ck_assert_int_ne(model_locate("org/broken", &place, &err), ATTN_OK);
    ck_assert_msg(strstr(err.msg, "models--org--broken is in the Hugging Face cache") != NULL &&
                      strstr(err.msg, "incomplete download") != NULL && strstr(err.msg, hub) != NULL,
                  "%s", err.msg);
    /* refs/main naming a snapshot that is not there: refused by name, not another read (issue
       35: the newest other snapshot, of other sizes, was read in its place). */
    cache_entry(hub, "org--moved", "old", false);
    snprintf(path, sizeof path, "%s/models--org--moved/refs", hub);
    ck_assert_int_eq(mkdir(path, 0777), 0);
    test_write_text(hub, "models--org--moved/refs/main", "f00d\n");
    ck_assert_int_ne(model_locate("org/moved", &place, &err), ATTN_OK);
    ck_assert_msg(strstr(err.msg, "models--org--moved is in the Hugging Face cache, but its "
                                  "refs/main names the snapshot f00d") != NULL,
                  "%s", err.msg);
    /* A folder here named like a cached model: read, and said to shadow it. */
    cache_entry(hub, "org--tiny", "r1", true);
    ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
    snprintf(path, sizeof path, "%s", absolute(TINY));
    ck_assert_int_eq(chdir(tmp), 0);
    ck_assert_int_eq(mkdir("org", 0777), 0);
    ck_assert_int_eq(symlink(path, "org/tiny"), 0);
    ck_assert_int_eq(model_locate("org/tiny", &place, &err), ATTN_OK);
    ck_assert_str_eq(place.dir, "org/tiny");
    ck_assert_msg(strstr(place.note, "not the model org/tiny in") != NULL, "%s", place.note);
    /* A folder here that is not a model gives way to the cached one, and says so. */
    ck_assert_int_eq(unlink("org/tiny"), 0);
    ck_assert_int_eq(mkdir("org/tiny", 0777), 0);
    ck_assert_int_eq(model_locate("org/tiny", &place, &err), ATTN_OK);
    ck_assert_msg(strstr(place.dir, "models--org--tiny/snapshots/r1") != NULL, "%s", place.dir);
    ck_assert_msg(strstr(place.note, "without config.json") != NULL, "%s", place.note);
    ck_assert_int_eq(chdir(cwd), 0);
    unsetenv("HF_HUB_CACHE");
    test_remove_dir(tmp);
}
END_TEST

/* A source for the tiny model: GPT-2's family, 4 next tokens kept, sentence. */
static void
tiny_source(struct pipeline_source *src, const char *sentence)
{
    memset(src, 0, sizeof *src);
    src->family = &family_decoder;
    src->model = &tiny;
    src->top = 4;
    src->sentence = sentence;
}

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
            const size_t hnn = (size_t)c->n_head * n * n * sizeof(float);
            /* The layer's scores and weights as the view makes them, in each pipeline. */
            ck_assert(pipeline_select_layer(&edited, l, &err) == ATTN_OK);
            ck_assert(pipeline_select_layer(&fresh, l, &err) == ATTN_OK);
            ck_assert(memcmp(edited.st.scores, fresh.st.scores, hnn) == 0);
            ck_assert(memcmp(edited.st.weights, fresh.st.weights, hnn) == 0);
            ck_assert(memcmp(edited.st.masked, fresh.st.masked, hnn) == 0);
            ck_assert(memcmp(a->layers[l].resid2, b->layers[l].resid2,
                             n * (size_t)c->n_embd * sizeof(float)) == 0);
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
        const size_t hnn = (size_t)c->n_head * n * n * sizeof(float);
        const size_t nc = n * (size_t)c->n_embd * sizeof(float);
        ck_assert(pipeline_select_layer(&off, l, &err) == ATTN_OK);
        ck_assert(pipeline_select_layer(&fresh, l, &err) == ATTN_OK);
        ck_assert(memcmp(off.st.weights, fresh.st.weights, hnn) == 0);
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

/* Copies the file at from to the file at to; 0 or -1. */
static int
copy_file(const char *from, const char *to)
{
    char *data;
    size_t len;
    struct attn_error err;
    FILE *f;
    int rc;

    if (fileio_read_all(from, (size_t)64 << 20, &data, &len, &err) != ATTN_OK)
        return -1;
    f = fopen(to, "wb");
    rc = f != NULL && fwrite(data, 1, len, f) == len ? 0 : -1;
    if (f != NULL && fclose(f) != 0)
        rc = -1;
    free(data);
    return rc;
}

/*
 * tiktoken's cache is in the temporary folder, which any local user can
 * write to: GPT-2's files found there are read only when they are OpenAI's
 * (their SHA-256 sums), others passed over with a note (issue 35: a
 * planted encoder.json made "Hello" 31373 instead of 15496 for a bare
 * model.pth).  OpenAI's own files there are read.
 */
START_TEST(a_planted_tokenizer_is_passed_over)
{
    const char *tmp = test_tmpdir();
    static const char encoder[] = "6c7ea1a7e38e3a7f062df639a5b80947f075ffe6";
    static const char merges[] = "6d1cbeee0f20b3d9449abfede4726ed8212e3aee";
    const struct model_options o = { 2, NULL };
    char path[600], cache[400];
    struct model m;
    struct attn_error err;
    int *ids, n;

    snprintf(cache, sizeof cache, "%s/data-gym-cache", tmp);
    ck_assert_int_eq(mkdir(cache, 0777), 0);
    setenv("TMPDIR", tmp, 1);
    unsetenv("TIKTOKEN_CACHE_DIR");
    unsetenv("DATA_GYM_CACHE_DIR");
    /* OpenAI's files, as tiktoken names them: read from there. */
    snprintf(path, sizeof path, "%s/%s", cache, encoder);
    ck_assert_int_eq(copy_file(test_path("samples/tokenizers/gpt2/encoder.json"), path), 0);
    snprintf(path, sizeof path, "%s/%s", cache, merges);
    ck_assert_int_eq(copy_file(test_path("samples/tokenizers/gpt2/vocab.bpe"), path), 0);
    ck_assert_msg(model_open(&m, test_path("samples/models/chapter5/model.pth"), &o, &err) ==
                      ATTN_OK,
                  "%s", err.msg);
    ck_assert_msg(strstr(m.about, "tokenizer: GPT-2's, from tiktoken's cache"), "%s", m.about);
    ck_assert_msg(strstr(m.note, "passed over") == NULL, "%s", m.note);
    model_close(&m);
    /* The same names holding other ids: passed over for the copy installed with attnscope. */
    {
        char *text;
        size_t len;
        char *at;
        snprintf(path, sizeof path, "%s/%s", cache, encoder);
        ck_assert_int_eq(fileio_read_all(path, (size_t)64 << 20, &text, &len, &err), ATTN_OK);
        at = strstr(text, "\"Hello\": 15496");
        ck_assert_ptr_nonnull(at);
        memcpy(at, "\"Hello\": 31373", 14);
        at = strstr(text, "\"Hi\": 17250");
        ck_assert_ptr_nonnull(at);
        memcpy(at, "\"Hi\": 15496", 11);
        test_write_file(cache, encoder, text, len);
        free(text);
    }
    ck_assert_msg(model_open(&m, test_path("samples/models/chapter5/model.pth"), &o, &err) ==
                      ATTN_OK,
                  "%s", err.msg);
    ck_assert_msg(strstr(m.note, "GPT-2's tokenizer in ") && strstr(m.note, "data-gym-cache was "
                                                                            "passed over: its "
                                                                            "files are not "
                                                                            "OpenAI's"),
                  "%s", m.note);
    ck_assert_msg(strstr(m.about, "as installed with attnscope"), "%s", m.about);
    ck_assert_int_eq(bpe_encode(&m.bpe, "Hello", 5, 0, &ids, &n, &err), ATTN_OK);
    ck_assert_int_eq(n, 1);
    ck_assert_int_eq(ids[0], 15496);
    free(ids);
    model_close(&m);
    unsetenv("TMPDIR");
    test_remove_dir(tmp);
}
END_TEST

static Suite *
model_suite(void)
{
    Suite *s = suite_create("model");
    TCase *tc = tcase_create("tiny");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, every_stage_agrees_with_pytorch);
    tcase_add_test(tc, an_edit_takes_the_unchanged_rows_over);
    tcase_add_test(tc, an_ablation_recomputes_from_its_layer);
    tcase_add_test(tc, the_knobs_that_apply_recompute);
    tcase_add_test(tc, config_keys_that_change_attention);
    tcase_add_test(tc, ablation_zeroes_one_head);
    tcase_add_test(tc, the_stages_a_model_has);
    tcase_add_test(tc, texts_the_model_cannot_read);
    tcase_add_test(tc, head_measures_are_their_definitions);
    tcase_add_test(tc, exports_every_layer);
    tcase_add_test(tc, tokenizers_in_every_form);
    tcase_add_test(tc, exported_tokens_are_utf8);
    tcase_add_test(tc, a_token_of_300_bytes_keeps_its_text);
    tcase_add_test(tc, bad_model_folders_say_what_is_wrong);
    tcase_add_test(tc, a_planted_tokenizer_is_passed_over);
    tcase_add_test(tc, names_are_found_in_the_hugging_face_cache);
    tcase_add_test(tc, files_that_are_not_files_are_named);
    tcase_add_test(tc, config_files_are_capped_and_audited);
    tcase_add_test(tc, json_out_of_memory_is_said);
    tcase_add_test(tc, the_cache_says_where_and_what);
    tcase_add_test(tc, minigpt_has_a_previous_token_and_induction_heads);
    tcase_add_test(tc, minillama_has_a_previous_token_and_an_induction_head);
    suite_add_tcase(s, tc);
    return s;
}

TEST_MAIN(model_suite)
