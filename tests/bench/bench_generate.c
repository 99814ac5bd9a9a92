/*
 * bench_generate.c: the benchmark's writing (generate.h): a model folder
 * writing count tokens after a text of n, as --generate does, and a token
 * written in the view (G) to the frame drawn.  Not part of attnscope.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "attnscope/families/model/family_model.h"
#include "attnscope/families/model/generate.h"
#include "attnscope/models/model.h"
#include "bench.h"

/*
 * --generate's path: the folder's model packed, a text of n token ids, then
 * count tokens written greedily, each timed (the forward of its row in
 * every layer, what --generate's summary counts); rounds times over, each
 * round after the first taking the tokens back first (more samples of the
 * same work on a noisy machine).  n + count must stay within the context (a
 * token that slid the window would be a whole forward).  Reports the median
 * token, and the tokens a second over all of them.
 */
int
cmd_generate(const char *dir, int n, int count, int rounds)
{
    struct model m;
    struct attention_config cfg;
    struct pipeline_source src;
    struct pipeline p;
    struct generate_options o;
    struct generation g;
    struct attn_error err;
    double times[MAX_REPS], rebuilds[MAX_REPS], total = 0.0;
    int *ids;
    bool ended;

    if (count < 1 || rounds < 1 || (size_t)count * (size_t)rounds > MAX_REPS)
        return 1;
    /* (BENCH_INT8=1: the opt-in int8 arithmetic, as --arith int8 asks) */
    if (model_open(&m, dir,
                   &(struct model_options){ 0, NULL, false,
                                            getenv("BENCH_INT8") != NULL ? "BENCH_INT8" : NULL },
                   &err) != ATTN_OK) {
        fprintf(stderr, "bench: %s\n", err.msg);
        return 1;
    }
    (void)family_model_pack_for_writing(&m.dec); /* as --generate does */
    ids = malloc((size_t)n * sizeof *ids);
    if (ids == NULL)
        return 1;
    for (int i = 0; i < n; i++)
        ids[i] = (i * 7919) % m.dec.cfg.vocab_size;
    attention_config_init(&cfg);
    memset(&src, 0, sizeof src);
    src.family = &family_model;
    src.model = &m;
    src.top = 5;
    src.ids = ids;
    src.n_ids = n;
    src.room = count; /* (as --generate asks) */
    src.layer = getenv("BENCH_SHOWN") != NULL ? 0 : PIPELINE_NO_LAYER; /* as --print writes */
    if (pipeline_create(&p, &cfg, &src, &err) != ATTN_OK) {
        fprintf(stderr, "bench: %s\n", err.msg);
        return 1;
    }
    src.ids = NULL;
    generate_options_init(&o);
    if (generation_init(&g, &m, &o, &err) != ATTN_OK ||
        generation_begin(&g, &p, &cfg, &src, count, &err) != ATTN_OK) {
        fprintf(stderr, "bench: %s\n", err.msg);
        return 1;
    }
    for (int r = 0; r < rounds; r++) {
        /* (a round after the first takes its tokens back first: the same text, the same work) */
        for (int i = 0; r > 0 && i < count; i++)
            if (generation_undo(&g, &p, &cfg, &src, &err) != ATTN_OK) {
                fprintf(stderr, "bench: %s\n", err.msg);
                return 1;
            }
        for (int i = 0; i < count; i++) {
            const int at = r * count + i;
            double t0 = bench_now();
            if (generation_write(&g, &p, &cfg, &src, &ended, &err) != ATTN_OK) {
                fprintf(stderr, "bench: %s\n", err.msg);
                return 1;
            }
            times[at] = bench_now() - t0;
            rebuilds[at] = g.steps[g.written - 1].seconds;
            total += times[at];
            if (g.steps[g.written - 1].computed != 1) {
                fprintf(stderr, "bench: token %d computed %d rows, not one\n", i,
                        g.steps[g.written - 1].computed);
                return 1;
            }
        }
    }
    count *= rounds;
    qsort(rebuilds, (size_t)count, sizeof *rebuilds, bench_cmp_double);
    /* (what the kv cache stage compares the cached token with: the window computed whole) */
    if (generation_measure_uncached(&g, &err) != ATTN_OK) {
        fprintf(stderr, "bench: %s\n", err.msg);
        return 1;
    }
    {
        char name[48], extra[96];
        snprintf(name, sizeof name, "generate_%d", n);
        snprintf(extra, sizeof extra, "%.2f\t%zu\t%.3f\t%.3f", count / total,
                 generation_cache_bytes(&m.dec.cfg, g.n - g.first), rebuilds[count / 2] * 1e3,
                 g.uncached_seconds * 1e3);
        bench_report(name, times, count, extra);
    }
    generation_destroy(&g);
    pipeline_destroy(&p);
    model_close(&m);
    free(ids);
    return 0;
}

/*
 * The view's G on a text of about n tokens (the folder's tokenizer reading
 * ten-token sentences): the token written, its rows in every layer, the
 * shown layer's new row and column in every head, and the frame drawn at
 * 200x50, reps times; the weights stage shown, as a user watching the new
 * row would.
 */
int
cmd_generate_view(const char *dir, int n, int reps)
{
    double times[MAX_REPS];
    struct bench_view b;

    if (reps > MAX_REPS)
        reps = MAX_REPS;
    if (bench_view_open(&b, dir, n) != 0)
        return 1;
    app_key(&b.a, '6'); /* the weights */
    app_key(&b.a, 'G'); /* (the writing begun: the prompt's logits) */
    tui_frame(b.t, &b.a);
    printf("generate_view_tokens\t%d\n", b.a.pipe.tokens.count);
    for (int r = 0; r < reps; r++) {
        double t0 = bench_now();
        app_key(&b.a, 'G');
        tui_frame(b.t, &b.a);
        times[r] = bench_now() - t0;
    }
    {
        char name[32];
        snprintf(name, sizeof name, "generate_view_%d", n);
        bench_report(name, times, reps, NULL);
    }
    bench_view_close(&b);
    return 0;
}

/*
 * A byte-level BPE tokenizer.json of `size` tokens for a benchmark folder
 * whose vocabulary has no tokenizer of its own (SmolLM2-135M's shape: 49,152
 * tokens): GPT-2's first size tokens (ids 0-255 its bytes, id 256 + r the
 * token merge r makes) and its first size - 256 merges, so that every merge
 * makes a token the file has.  Not SmolLM2's own tokenizer: its ids stand in
 * for them, as the weights are random.
 */
int
cmd_bpe_tokenizer(const char *vocab_dir, int size, const char *out)
{
    char path[4096];
    json_error_t jerr;
    json_t *encoder, *vocab = json_object(), *merges = json_array(), *root, *model;
    const char *token;
    json_t *id;
    FILE *f;
    char line[1024];
    int count = 0;

    snprintf(path, sizeof path, "%s/encoder.json", vocab_dir);
    encoder = json_load_file(path, 0, &jerr);
    if (encoder == NULL) {
        fprintf(stderr, "bench: %s: %s\n", path, jerr.text);
        return 1;
    }
    json_object_foreach(encoder, token, id)
        if (json_integer_value(id) < size)
            json_object_set(vocab, token, id);
    snprintf(path, sizeof path, "%s/vocab.bpe", vocab_dir);
    f = fopen(path, "r");
    if (f == NULL) {
        fprintf(stderr, "bench: cannot read %s\n", path);
        return 1;
    }
    while (count < size - 256 && fgets(line, sizeof line, f) != NULL) {
        line[strcspn(line, "\n")] = '\0';
        if (strncmp(line, "#version", 8) == 0 || line[0] == '\0') /* ("# #" is a merge) */
            continue;
        json_array_append_new(merges, json_string(line));
        count++;
    }
    fclose(f);
    model = json_pack("{s:s, s:o, s:o, s:b}", "type", "BPE", "vocab", vocab, "merges", merges,
                      "byte_fallback", 0);
    root = json_pack("{s:s, s:[], s:{s:s, s:b, s:b, s:b}, s:{s:s, s:b, s:b, s:b}, s:o}", "version",
                     "1.0", "added_tokens", "pre_tokenizer", "type", "ByteLevel",
                     "add_prefix_space", 0, "trim_offsets", 1, "use_regex", 1, "decoder", "type",
                     "ByteLevel", "add_prefix_space", 1, "trim_offsets", 1, "use_regex", 1,
                     "model", model);
    json_decref(encoder);
    if (root == NULL || json_dump_file(root, out, JSON_COMPACT) != 0) {
        fprintf(stderr, "bench: cannot write %s\n", out);
        return 1;
    }
    json_decref(root);
    return 0;
}
