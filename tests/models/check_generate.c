/*
 * check_generate.c: a trained model writing, token for token as PyTorch's
 * book generate writes (tests/fixtures/generate/cases.txt, written by
 * tests/oracle/generate_fixtures.py): greedy and sampled, with top-k,
 * top-p and an end token, on the book's GPTModel .pth past its context,
 * Hugging Face GPT-2 folders, Llama, Qwen2 and Qwen3.  Then what the
 * writing promises beside the tokens: the cache computes one row a token,
 * taking a token back and writing again draws the same, the window slides.
 */
#include "config.h"

#include <math.h>

#include "attnscope/families/model/family_model.h"
#include "attnscope/families/model/generate.h"
#include "attnscope/models/model.h"
#include "gguf_edit.h"
#include "testutil.h"

struct gen_case {
    char name[64], model[256];
    int heads;
    struct generate_options o;
    int count;
    int prompt[64], n_prompt;
    int want[128], n_want;
    double margin[128];
    int n_margin;
};

/* The whitespace-separated numbers after a line's first word, as ints or doubles. */
static int
read_ints(const char *line, int *out, int max)
{
    int n = 0, used;
    const char *at = line + strcspn(line, " \n");

    while (n < max && sscanf(at, " %d%n", &out[n], &used) == 1) {
        n++;
        at += used;
    }
    return n;
}

static int
read_doubles(const char *line, double *out, int max)
{
    int n = 0, used;
    const char *at = line + strcspn(line, " \n");

    while (n < max && sscanf(at, " %lf%n", &out[n], &used) == 1) {
        n++;
        at += used;
    }
    return n;
}

/* The next case of f, or false at its end. */
static bool
next_case(FILE *f, struct gen_case *c)
{
    char line[8192];
    unsigned long long seed;
    int used = 0;
    int eos;

    do {
        if (fgets(line, sizeof line, f) == NULL)
            return false;
    } while (line[0] == '#');
    memset(c, 0, sizeof *c);
    generate_options_init(&c->o);
    ck_assert_msg(sscanf(line, "case %63s %255s %d %lf %d %lf %llu %d %d --%n", c->name, c->model,
                         &c->heads, &c->o.sample.temperature, &c->o.sample.top_k,
                         &c->o.sample.top_p, &seed, &eos, &c->count, &used) == 9,
                  "bad case line: %s", line);
    c->o.seed = seed;
    generate_end_one(&c->o.end, eos, "--eos");
    c->n_prompt = read_ints(line + used - 2, c->prompt, 64);
    ck_assert(fgets(line, sizeof line, f) != NULL && strncmp(line, "ids", 3) == 0);
    c->n_want = read_ints(line, c->want, 128);
    ck_assert(fgets(line, sizeof line, f) != NULL && strncmp(line, "margin", 6) == 0);
    c->n_margin = read_doubles(line, c->margin, 128);
    return true;
}

/* A pipeline of m over ids, as the view and --print build one. */
static void
build(struct pipeline *p, const struct model *m, const int *ids, int n)
{
    struct attention_config cfg;
    struct attn_error err;
    struct pipeline_source src = {
        .family = &family_model, .model = m, .top = 5, .ids = ids, .n_ids = n,
    };

    attention_config_init(&cfg);
    ck_assert_msg(pipeline_create(p, &cfg, &src, &err) == ATTN_OK, "%s", err.msg);
}

static const struct pipeline_source *
base_of(const struct model *m)
{
    static struct pipeline_source src;

    memset(&src, 0, sizeof src);
    src.family = &family_model;
    src.model = m;
    src.top = 5;
    return &src;
}

START_TEST(tokens_match_pytorch)
{
    FILE *f = fopen(test_path("tests/fixtures/generate/cases.txt"), "r");
    struct gen_case c;
    int cases = 0, tokens = 0, ties = 0;

    ck_assert_msg(f != NULL, "cannot open tests/fixtures/generate/cases.txt");
    while (next_case(f, &c)) {
        static struct model m;
        struct model_options mo = { c.heads, NULL, false, NULL };
        struct generation g;
        struct pipeline p;
        struct attn_error err;
        bool ended = false;
        int step;

        ck_assert_msg(model_open(&m, test_path(c.model), &mo, &err) == ATTN_OK, "%s: %s", c.name,
                      err.msg);
        build(&p, &m, c.prompt, c.n_prompt);
        ck_assert_msg(generation_init(&g, &m, &c.o, &err) == ATTN_OK, "%s", err.msg);
        ck_assert_msg(generation_begin(&g, &p, &p.cfg, base_of(&m), 0, &err) == ATTN_OK, "%s",
                      err.msg);
        for (step = 0; step < c.count && !ended; step++) {
            ck_assert_msg(generation_write(&g, &p, &p.cfg, base_of(&m), &ended, &err) == ATTN_OK,
                          "%s step %d: %s", c.name, step, err.msg);
            if (ended)
                break;
            ck_assert_msg(step < c.n_want, "%s: wrote past PyTorch's end at step %d", c.name,
                          step);
            if (g.ids[g.n - 1] != c.want[step]) {
                /* Allowed only where PyTorch's own choice was a tie within float rounding. */
                ck_assert_msg(c.margin[step] < 2e-6,
                              "%s step %d: wrote %d, PyTorch %d (its margin %g: no tie)", c.name,
                              step, g.ids[g.n - 1], c.want[step], c.margin[step]);
                ties++;
                break;
            }
            tokens++;
        }
        if (step == c.count || ended) {
            /* Stopped where PyTorch stopped: by the end token, or after count. */
            ck_assert_msg(g.written == c.n_want, "%s: wrote %d tokens, PyTorch %d", c.name,
                          g.written, c.n_want);
            ck_assert(ended == (c.o.end.n > 0 && c.n_want < c.count));
        }
        generation_destroy(&g);
        pipeline_destroy(&p);
        model_close(&m);
        cases++;
    }
    fclose(f);
    ck_assert_int_ge(cases, 20);
    ck_assert_int_ge(tokens, 700);
    ck_assert_int_eq(ties, 0); /* (none in these cases: a tie found would be shown above) */
}
END_TEST

/* The cache: a written token computes one row; past the context the window slides, all recomputed. */
START_TEST(one_row_a_token_until_the_window_slides)
{
    static struct model m;
    struct model_options mo = { 2, NULL, false, NULL };
    const int prompt[4] = { 6109, 3626, 6100, 345 };
    struct generate_options o;
    struct generation g;
    struct pipeline p;
    struct attn_error err;
    bool ended;

    ck_assert_msg(model_open(&m, test_path("samples/models/chapter5/model.pth"), &mo, &err) ==
                      ATTN_OK,
                  "%s", err.msg);
    build(&p, &m, prompt, 4);
    generate_options_init(&o);
    o.sample.temperature = 1.0;
    ck_assert_int_eq(generation_init(&g, &m, &o, &err), ATTN_OK);
    ck_assert_int_eq(generation_begin(&g, &p, &p.cfg, base_of(&m), 0, &err), ATTN_OK);
    for (int i = 0; i < 60; i++) {
        ck_assert_int_eq(generation_write(&g, &p, &p.cfg, base_of(&m), &ended, &err), ATTN_OK);
        ck_assert(!ended);
        ck_assert_msg(g.steps[i].computed == 1, "step %d computed %d rows", i,
                      g.steps[i].computed);
        ck_assert(!g.steps[i].slid);
        ck_assert_int_eq(g.steps[i].position, 4 + i);
    }
    ck_assert_int_eq(pipeline_decoder(&p)->run.n, 64); /* the context, full */
    ck_assert_int_eq(g.first, 0);
    ck_assert_int_eq(generation_write(&g, &p, &p.cfg, base_of(&m), &ended, &err), ATTN_OK);
    ck_assert(g.steps[60].slid);
    ck_assert_int_eq(g.steps[60].computed, 64);
    ck_assert_int_eq(g.first, 1);
    ck_assert_int_eq(pipeline_decoder(&p)->run.n, 64);
    /* The window shown is the text's last 64 ids. */
    ck_assert_mem_eq(pipeline_decoder(&p)->ids, g.ids + 1, 64 * sizeof(int));
    ck_assert_uint_eq(generation_cache_bytes(&m.dec.cfg, 64), 2u * 2 * 64 * 16 * 4);
    generation_destroy(&g);
    pipeline_destroy(&p);
    model_close(&m);
}
END_TEST

/* Taking tokens back restores the text, the window and the generator: writing again draws the same. */
START_TEST(undo_then_write_draws_the_same)
{
    static struct model m;
    const int prompt[3] = { 116, 256, 267 };
    struct generate_options o;
    struct generation g;
    struct pipeline p;
    struct attn_error err;
    int first[40];
    bool ended;

    ck_assert_msg(model_open(&m, test_path("tests/fixtures/gpt2/tiny"), NULL, &err) == ATTN_OK,
                  "%s", err.msg);
    build(&p, &m, prompt, 3);
    generate_options_init(&o);
    o.sample.temperature = 1.3;
    o.sample.top_p = 0.9;
    o.seed = 77;
    ck_assert_int_eq(generation_init(&g, &m, &o, &err), ATTN_OK);
    ck_assert_int_eq(generation_begin(&g, &p, &p.cfg, base_of(&m), 0, &err), ATTN_OK);
    /* Past the tiny model's context of 24, then back before it. */
    for (int i = 0; i < 40; i++) {
        ck_assert_int_eq(generation_write(&g, &p, &p.cfg, base_of(&m), &ended, &err), ATTN_OK);
        first[i] = g.ids[g.n - 1];
    }
    ck_assert_int_eq(g.first, 43 - 24);
    for (int i = 0; i < 30; i++)
        ck_assert_int_eq(generation_undo(&g, &p, &p.cfg, base_of(&m), &err), ATTN_OK);
    ck_assert_int_eq(g.written, 10);
    ck_assert_int_eq(g.n, 13);
    ck_assert_int_eq(g.first, 0);
    ck_assert_int_eq(pipeline_decoder(&p)->run.n, 13);
    ck_assert_mem_eq(pipeline_decoder(&p)->ids, g.ids, 13 * sizeof(int));
    for (int i = 10; i < 40; i++) {
        ck_assert_int_eq(generation_write(&g, &p, &p.cfg, base_of(&m), &ended, &err), ATTN_OK);
        ck_assert_int_eq(g.ids[g.n - 1], first[i]);
    }
    /* Back to the prompt, and no further. */
    while (g.written > 0)
        ck_assert_int_eq(generation_undo(&g, &p, &p.cfg, base_of(&m), &err), ATTN_OK);
    ck_assert_int_eq(generation_undo(&g, &p, &p.cfg, base_of(&m), &err), ATTN_EVALUE);
    ck_assert_msg(strstr(err.msg, "nothing written") != NULL, "%s", err.msg);
    ck_assert_int_eq(generation_write(&g, &p, &p.cfg, base_of(&m), &ended, &err), ATTN_OK);
    ck_assert_int_eq(g.ids[g.n - 1], first[0]);
    generation_destroy(&g);
    pipeline_destroy(&p);
    model_close(&m);
}
END_TEST

/* The end token: not written; taking its draw back draws it again; bad options named. */
START_TEST(end_token_and_refusals)
{
    static struct model m;
    struct model_options mo = { 2, NULL, false, NULL };
    const int prompt[4] = { 6109, 3626, 6100, 345 };
    struct generate_options o;
    struct generation g;
    struct pipeline p;
    struct attn_error err;
    bool ended = false;

    ck_assert_msg(model_open(&m, test_path("samples/models/chapter5/model.pth"), &mo, &err) ==
                      ATTN_OK,
                  "%s", err.msg);
    build(&p, &m, prompt, 4);
    generate_options_init(&o);
    generate_end_one(&o.end, 198, "--eos"); /* greedy writes "\n" first */
    ck_assert_int_eq(generation_init(&g, &m, &o, &err), ATTN_OK);
    ck_assert_int_eq(generation_begin(&g, &p, &p.cfg, base_of(&m), 0, &err), ATTN_OK);
    ck_assert_int_eq(generation_write(&g, &p, &p.cfg, base_of(&m), &ended, &err), ATTN_OK);
    ck_assert(ended);
    ck_assert_int_eq(g.written, 0);
    ck_assert_int_eq(g.end.id, 198);
    ck_assert_int_eq(generation_write(&g, &p, &p.cfg, base_of(&m), &ended, &err), ATTN_EVALUE);
    ck_assert_msg(strstr(err.msg, "the end token 198 (--eos)") != NULL, "%s", err.msg);
    ck_assert_int_eq(generation_undo(&g, &p, &p.cfg, base_of(&m), &err), ATTN_OK);
    ck_assert(!g.ended);
    ck_assert_int_eq(generation_write(&g, &p, &p.cfg, base_of(&m), &ended, &err), ATTN_OK);
    ck_assert(ended);
    generation_destroy(&g);

    generate_options_init(&o);
    o.sample.top_k = 50258;
    ck_assert_int_eq(generation_init(&g, &m, &o, &err), ATTN_EVALUE);
    ck_assert_msg(strstr(err.msg, "--top-k 50258") != NULL, "%s", err.msg);
    generate_options_init(&o);
    generate_end_one(&o.end, 50257, "--eos");
    ck_assert_int_eq(generation_init(&g, &m, &o, &err), ATTN_EVALUE);
    ck_assert_msg(strstr(err.msg, "--eos 50257") != NULL, "%s", err.msg);
    pipeline_destroy(&p);
    model_close(&m);
}
END_TEST

/* The toy has no vocabulary head: writing is refused by name. */
/*
 * Logits that are not numbers name the model's file and where its weights
 * are not numbers (issue 48: "logit 0 of 520 is nan" named nothing): a
 * GGUF whose first Q8_0 block of layer 0's queries has a NaN scale.
 */
START_TEST(logits_that_are_not_numbers_name_the_file_and_the_tensor)
{
    static struct model m;
    const unsigned char nan16[2] = { 0x00, 0x7e }; /* half precision's NaN */
    const char *tmp = test_tmpdir();
    char path[400];
    struct generation g;
    struct generate_options o;
    struct pipeline p;
    struct attention_config cfg;
    struct pipeline_source src;
    struct attn_error err;
    bool ended;

    snprintf(path, sizeof path, "%s/model.gguf", tmp);
    gguf_edit(test_path("tests/fixtures/decoders/qwen3-tok-gguf/model.gguf"), path, "general.name",
              ge_string("nan"));
    ck_assert_uint_eq(gguf_edit_tensor(path, "blk.0.attn_q.weight", 0, nan16, 2), 8); /* Q8_0 */
    ck_assert_msg(model_open(&m, path, NULL, &err) == ATTN_OK, "%s", err.msg);
    attention_config_init(&cfg);
    memset(&src, 0, sizeof src);
    src.family = &family_model;
    src.model = &m;
    src.top = 3;
    src.sentence = "the cat";
    ck_assert_msg(pipeline_create(&p, &cfg, &src, &err) == ATTN_OK, "%s", err.msg);
    generate_options_init(&o);
    ck_assert_int_eq(generation_init(&g, &m, &o, &err), ATTN_OK);
    ck_assert_int_eq(generation_begin(&g, &p, &p.cfg, &src, 0, &err), ATTN_OK);
    ck_assert_int_eq(generation_write(&g, &p, &p.cfg, &src, &ended, &err), ATTN_EVALUE);
    ck_assert_msg(strstr(err.msg, path) != NULL && strstr(err.msg, "is nan") != NULL &&
                      strstr(err.msg, "layer 0's attn_q holds a value that is not finite (row 0, "
                                      "column 0; its Q8_0 blocks widened") != NULL,
                  "%s", err.msg);
    generation_destroy(&g);
    pipeline_destroy(&p);
    model_close(&m);
    test_remove_dir(tmp);
}
END_TEST

START_TEST(the_toy_cannot_write)
{
    static struct model m;
    struct model_options mo = { 2, NULL, false, NULL };
    struct attention_config cfg;
    struct generate_options o;
    struct generation g;
    struct pipeline toy;
    struct attn_error err;
    struct vocab book;
    struct pipeline_source src = { .sentence = "Your journey starts with one step",
                                   .vocab = &book };

    ck_assert_int_eq(vocab_builtin(&book, NULL), ATTN_OK);
    ck_assert_msg(model_open(&m, test_path("samples/models/chapter5/model.pth"), &mo, &err) ==
                      ATTN_OK,
                  "%s", err.msg);
    attention_config_init(&cfg);
    ck_assert_int_eq(pipeline_create(&toy, &cfg, &src, &err), ATTN_OK);
    generate_options_init(&o);
    ck_assert_int_eq(generation_init(&g, &m, &o, &err), ATTN_OK);
    ck_assert_int_eq(generation_begin(&g, &toy, &cfg, &src, 0, &err), ATTN_EVALUE);
    ck_assert_msg(strstr(err.msg, "needs a trained model") != NULL, "%s", err.msg);
    generation_destroy(&g);
    pipeline_destroy(&toy);
    vocab_destroy(&book);
    model_close(&m);
}
END_TEST

/*
 * A sliding layer's cache is a ring of its window (issue 50, item 5): its
 * rows, which position each slot holds (i mod window, the last window
 * positions exactly once), and the bytes the rings save.
 */
START_TEST(a_sliding_layer_keeps_a_ring_of_its_window)
{
    struct decoder_config c;

    memset(&c, 0, sizeof c);
    c.n_layer = 3;
    c.n_head = 4;
    c.n_kv_head = 2;
    c.head_dim = 8;
    c.d_model = 32;
    c.sliding_window = 4;
    c.sliding[0] = c.sliding[2] = true;
    ck_assert_int_eq(generation_cache_rows(&c, 0, 3), 3); /* inside the window: every row */
    ck_assert_int_eq(generation_cache_rows(&c, 0, 17), 4);
    ck_assert_int_eq(generation_cache_rows(&c, 1, 17), 17); /* a full layer keeps them all */
    for (int n = 1; n <= 23; n++) {
        const int rows = generation_cache_rows(&c, 2, n);
        bool seen[32] = { false };
        for (int slot = 0; slot < rows; slot++) {
            const int i = generation_cache_position(&c, 2, n, slot);
            ck_assert_msg(i >= n - rows && i < n && !seen[i], "n %d slot %d: %d", n, slot, i);
            ck_assert_int_eq(i % 4, rows < n ? slot : i % 4);
            ck_assert_int_eq(rows < n ? i % rows : i, slot);
            seen[i] = true;
        }
    }
    ck_assert_int_eq(generation_cache_position(&c, 0, 17, 0), 16); /* 16 overwrote 12 */
    ck_assert_int_eq(generation_cache_position(&c, 0, 17, 1), 13);
    /* 2 x (4 + 17 + 4) rows x 16 floats x 4 bytes, against 2 x 3 x 17 rows */
    ck_assert_uint_eq(generation_cache_bytes(&c, 17), (size_t)2 * 25 * 16 * 4);
    ck_assert_uint_eq(generation_cache_bytes_full(&c, 17), (size_t)2 * 51 * 16 * 4);
    ck_assert_uint_eq(generation_cache_bytes(&c, 4), generation_cache_bytes_full(&c, 4));
}
END_TEST

/*
 * The end tokens a model's own files name (issue 50, item 7), which the
 * writing stops at unless --eos says otherwise: generation_config.json's
 * eos_token_id as an id or a list, config.json's when there is no
 * generation config, a GGUF's eos and eot; a bad one refused by file and
 * key; the book's .pth none.  And a token found by its text.
 */
START_TEST(a_models_files_name_its_end_tokens)
{
    static struct model m;
    struct attn_error err;
    const char *tmp = test_tmpdir();
    static const char *const parts[] = { "config.json", "model.safetensors", "vocab.json",
                                         "merges.txt" };
    char path[4608], from[4608];
    const struct model_options mo = { 2, NULL, false, NULL };

    /* config.json alone: its eos_token_id (519, the shipped minigpt's <|endoftext|>) */
    ck_assert_msg(model_open(&m, test_path("samples/models/minigpt"), NULL, &err) == ATTN_OK, "%s",
                  err.msg);
    ck_assert_int_eq(m.dec.n_end_tokens, 1);
    ck_assert_int_eq(m.dec.end_tokens[0], 519);
    ck_assert_str_eq(m.dec.end_from, "config.json's eos_token_id");
    ck_assert_int_eq(model_token_find(&m, "<|endoftext|>"), 519);
    ck_assert_int_eq(model_token_find(&m, "\xc4\xa0sun"), model_token_find(&m, " sun")); /* Ġsun */
    ck_assert_int_ge(model_token_find(&m, " sun"), 0);
    ck_assert_int_eq(model_token_find(&m, "no such token"), -1);
    model_close(&m);
    /* generation_config.json wins, and may hold a list */
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        char *abs = realpath(test_path("samples/models/minigpt"), NULL);
        ck_assert_ptr_nonnull(abs);
        snprintf(from, sizeof from, "%s/%s", abs, parts[i]);
        free(abs);
        snprintf(path, sizeof path, "%s/%s", tmp, parts[i]);
        ck_assert_int_eq(symlink(from, path), 0);
    }
    test_write_file(tmp, "generation_config.json", "{\"eos_token_id\": [519, 7]}",
                    strlen("{\"eos_token_id\": [519, 7]}"));
    ck_assert_msg(model_open(&m, tmp, NULL, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_int_eq(m.dec.n_end_tokens, 2);
    ck_assert_int_eq(m.dec.end_tokens[1], 7);
    ck_assert_str_eq(m.dec.end_from, "generation_config.json's eos_token_id");
    model_close(&m);
    test_write_file(tmp, "generation_config.json", "{\"eos_token_id\": \"</s>\"}",
                    strlen("{\"eos_token_id\": \"</s>\"}"));
    ck_assert_int_eq(model_open(&m, tmp, NULL, &err), ATTN_EPARSE);
    ck_assert_msg(strstr(err.msg, "generation_config.json: eos_token_id: give a token id from 0 "
                                  "to") != NULL, "%s", err.msg);
    /* a GGUF: tokenizer.ggml.eos_token_id, then eot_token_id when another */
    snprintf(path, sizeof path, "%s/eos.gguf", tmp);
    gguf_edit(test_path("samples/models/minillama-q4/model.gguf"), path,
              "tokenizer.ggml.eos_token_id", ge_u32(519));
    snprintf(from, sizeof from, "%s/eot.gguf", tmp);
    gguf_edit(path, from, "tokenizer.ggml.eot_token_id", ge_u32(3));
    ck_assert_msg(model_open(&m, from, NULL, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_int_eq(m.dec.n_end_tokens, 2);
    ck_assert_int_eq(m.dec.end_tokens[0], 519);
    ck_assert_int_eq(m.dec.end_tokens[1], 3);
    ck_assert_str_eq(m.dec.end_from,
                     "its GGUF's tokenizer.ggml.eos_token_id and tokenizer.ggml.eot_token_id");
    model_close(&m);
    /* its chat template too (issue 50, item 8): tokenizer.chat_template, said from where */
    {
        const char *kind = NULL;
        char *turn;
        char chatted[4608];
        snprintf(chatted, sizeof chatted, "%s/chat.gguf", tmp);
        gguf_edit(path, chatted, "tokenizer.chat_template",
                  ge_string("{% for m in messages %}<|start_header_id|>{{ m.role }}"
                            "<|end_header_id|>\n\n{{ m.content | trim }}<|eot_id|>{% endfor %}"));
        ck_assert_msg(model_open(&m, chatted, NULL, &err) == ATTN_OK, "%s", err.msg);
        ck_assert_str_eq(m.chat_from, "its GGUF's tokenizer.chat_template");
        turn = model_chat(&m, " cat ", "1 Jan 2026", &kind, &err);
        ck_assert_msg(turn != NULL, "%s", err.msg);
        ck_assert_str_eq(kind, "Llama 3");
        ck_assert_str_eq(turn, "<|start_header_id|>user<|end_header_id|>\n\ncat<|eot_id|>"
                               "<|start_header_id|>assistant<|end_header_id|>\n\n");
        free(turn);
        model_close(&m);
        ck_assert_msg(model_open(&m, path, NULL, &err) == ATTN_OK, "%s", err.msg);
        ck_assert_ptr_null(model_chat(&m, "cat", "", &kind, &err));
        ck_assert_msg(strstr(err.msg, "has no chat template") != NULL, "%s", err.msg);
        model_close(&m);
        /* (issue 60: one of another type was "has no chat template"; the file still opens) */
        gguf_edit(path, chatted, "tokenizer.chat_template", ge_u32(7));
        ck_assert_msg(model_open(&m, chatted, NULL, &err) == ATTN_OK, "%s", err.msg);
        ck_assert_ptr_null(model_chat(&m, "cat", "", &kind, &err));
        ck_assert_msg(strstr(err.msg, "its GGUF's tokenizer.chat_template is there, but of type "
                                      "UINT32, not a STRING") != NULL,
                      "%s", err.msg);
        model_close(&m);
    }
    /* the book's .pth: none, as the book's generate */
    ck_assert_msg(model_open(&m, test_path("samples/models/chapter5/model.pth"), &mo, &err) ==
                      ATTN_OK, "%s", err.msg);
    ck_assert_int_eq(m.dec.n_end_tokens, 0);
    model_close(&m);
    test_remove_dir(tmp);
}
END_TEST

static Suite *
generate_suite(void)
{
    Suite *s = suite_create("generate");
    TCase *tc = tcase_create("pytorch");

    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, tokens_match_pytorch);
    tcase_add_test(tc, one_row_a_token_until_the_window_slides);
    tcase_add_test(tc, undo_then_write_draws_the_same);
    tcase_add_test(tc, end_token_and_refusals);
    tcase_add_test(tc, the_toy_cannot_write);
    tcase_add_test(tc, a_sliding_layer_keeps_a_ring_of_its_window);
    tcase_add_test(tc, a_models_files_name_its_end_tokens);
    tcase_add_test(tc, logits_that_are_not_numbers_name_the_file_and_the_tensor);
    suite_add_tcase(s, tc);
    return s;
}

TEST_MAIN(generate_suite)
