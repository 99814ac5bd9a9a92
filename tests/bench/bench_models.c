/*
 * bench_models.c: the benchmark's trained models: GPT-2 small's shapes
 * (its forward, an edit, the view on a folder) and the Llama-style shapes
 * (a folder of random weights, its forward, opening it), random weights
 * of the real shapes.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "attnscope/architectures/architecture.h"
#include "attnscope/families/model/family_model.h"
#include "attnscope/models/model.h"
#include "attnscope/formats/tensor.h"
#include "attnscope/kernels/linalg.h"
#include "attnscope/kernels/parallel.h"
#include "../gpt2_random.h"
#include "../llama_random.h"
#include "bench.h"

/* ------------------------------------------------------------------- gpt2 */


/*
 * A GPT-2 small folder of random weights, as Hugging Face lays it out, for
 * timing attnscope --model as a whole process.  The tokenizer files are the
 * caller's to add (GPT-2's real ones: samples/tokenizers/gpt2).
 */
int
cmd_gpt2_folder(const char *dir)
{
    return gpt2_random_folder(dir, &gpt2_small, 0.1f, 1, NULL) == 0 ? 0 : 1;
}

int
cmd_gpt2(int n, int reps)
{
    struct decoder_model m;
    double times[MAX_REPS];
    double cpu[MAX_REPS];
    /* GPT-2 small's shapes, in memory (the loader is not what is timed). */
    const struct decoder_config cfg = gpt2_small;

    if (n < 1 || n > 1024)
        return 1;
    gpt2_random_model(&m, &cfg, 0.1f, 1);
    /* Packed once, as the view does (BENCH_NO_PACK=1: packed on every product, as before). */
    if (getenv("BENCH_NO_PACK") == NULL && !decoder_pack(&m))
        return 1;
    if (reps > MAX_REPS)
        reps = MAX_REPS;
    for (int r = 0; r < reps; r++) {
        int *ids = malloc((size_t)n * sizeof *ids);
        struct decoder_run run;
        struct attn_error err;
        double t0, c0;
        for (int i = 0; i < n; i++)
            ids[i] = (i * 7919) % 50257;
        t0 = bench_now();
        c0 = bench_cpu_now();
        if (decoder_forward(&m, ids, n, getenv("BENCH_TOP") ? atoi(getenv("BENCH_TOP")) : 5, NULL, &run, &err) != ATTN_OK) {
            fprintf(stderr, "bench: %s\n", err.msg);
            return 1;
        }
        times[r] = bench_now() - t0;
        cpu[r] = bench_cpu_now() - c0;
        decoder_run_destroy(&run);
        free(ids);
    }
    {
        char name[32];
        char extra[32];
        qsort(cpu, (size_t)reps, sizeof *cpu, bench_cmp_double);
        snprintf(name, sizeof name, "gpt2_%d", n);
        snprintf(extra, sizeof extra, "%.3f", cpu[reps / 2] * 1e3);
        bench_report(name, times, reps, extra);
    }
    return 0; /* (the model's memory goes with the process) */
}

/*
 * What the view does when a token is appended to n: the forward of the new
 * row in every layer (in the shown run's memory, which the view's runs
 * leave room in), then the shown layer's scores, weights, masked and
 * scaled scores made again for the screen.  Each repetition appends one
 * more (n, n + 1, ...), the edited run the next one's shown, as in the
 * view; the time of both together, and the forward's beside it.
 */
int
cmd_gpt2_edit(int n, int reps)
{
    struct decoder_model m;
    double times[MAX_REPS], core[MAX_REPS];
    const struct decoder_config cfg = gpt2_small;
    int *ids;
    struct decoder_run shown;
    struct attn_error err;

    if (reps > MAX_REPS)
        reps = MAX_REPS;
    if (n < 1 || n + reps > cfg.n_ctx)
        return 1;
    ids = malloc(((size_t)n + (size_t)reps) * sizeof *ids);
    if (ids == NULL)
        return 1;
    gpt2_random_model(&m, &cfg, 0.1f, 1);
    if (!decoder_pack(&m))
        return 1;
    for (int i = 0; i < n + reps; i++)
        ids[i] = (i * 7919) % 50257;
    if (decoder_forward_from(&m, ids, n, 5, NULL, NULL, 0, &shown, &err) != ATTN_OK ||
        decoder_show_layer(&m, &shown, 0, &err) != ATTN_OK)
        return 1;
    for (int r = 0; r < reps; r++) {
        struct decoder_run edited;
        double t0 = bench_now(), t1;
        if (decoder_forward_from(&m, ids, n + r + 1, 5, NULL, &shown, n + r, &edited, &err) !=
            ATTN_OK) {
            fprintf(stderr, "bench: %s\n", err.msg);
            return 1;
        }
        t1 = bench_now();
        if (decoder_show_layer(&m, &edited, 0, &err) != ATTN_OK) {
            fprintf(stderr, "bench: %s\n", err.msg);
            return 1;
        }
        times[r] = bench_now() - t0;
        core[r] = t1 - t0;
        decoder_run_destroy(&shown); /* empty when the edit took its memory over */
        shown = edited;
    }
    {
        char name[32], extra[32];
        qsort(core, (size_t)reps, sizeof *core, bench_cmp_double);
        snprintf(name, sizeof name, "gpt2_edit_%d", n);
        snprintf(extra, sizeof extra, "%.3f", core[reps / 2] * 1e3);
        bench_report(name, times, reps, extra);
    }
    return 0;
}

/*
 * The view's edit, whole: the keys a user presses to append a word to a
 * long text, the rebuild (tokenizing, the forward from the first changed
 * token, the shown layer's stages), and the frame drawn.  Each repetition
 * appends one more word, so that the run grows as it does in the view.
 */
int
bench_view_open(struct bench_view *b, const char *dir, int n)
{
    static const char words[] = " the quick brown fox jumps over the lazy dog.";
    struct attn_error err;
    size_t len = 0;

    memset(b, 0, sizeof *b);
    b->in = fopen("/dev/null", "r");
    b->out = tmpfile();
    if (b->in == NULL || b->out == NULL)
        return -1;
    if (model_open(&b->m, dir, NULL, &err) != ATTN_OK) {
        fprintf(stderr, "bench: %s\n", err.msg);
        return -1;
    }
    (void)family_model_pack_if_room(&b->m.dec); /* as the view does */
    /* Ten tokens a repetition: GPT-2's BPE reads each " word" and the "." as one. */
    b->sentence = malloc((size_t)n * sizeof words / 10 + sizeof words);
    if (b->sentence == NULL)
        return -1;
    b->sentence[0] = '\0';
    while (len + sizeof words <= (size_t)n * (sizeof words - 1) / 10) {
        memcpy(b->sentence + len, words, sizeof words);
        len += sizeof words - 1;
    }
    setenv("COLUMNS", "200", 1);
    setenv("LINES", "50", 1);
    setenv("TERM", "xterm-256color", 1);
    attention_config_init(&b->cfg);
    b->src.sentence = b->sentence;
    b->src.family = &family_model;
    b->src.model = &b->m;
    b->src.top = 5;
    b->t = bench_open_view(&b->a, &b->cfg, &b->src, b->in, b->out);
    return b->t != NULL ? 0 : -1;
}

void
bench_view_close(struct bench_view *b)
{
    tui_close(b->t);
    app_destroy(&b->a);
    model_close(&b->m);
    free(b->sentence);
    fclose(b->in);
    fclose(b->out);
}

int
cmd_gpt2_view(const char *dir, int n, int reps)
{
    double times[MAX_REPS];
    struct bench_view b;

    if (reps > MAX_REPS)
        reps = MAX_REPS;
    if (bench_view_open(&b, dir, n) != 0)
        return 1;
    app_key(&b.a, '6'); /* the weights */
    tui_frame(b.t, &b.a);
    printf("gpt2_view_tokens\t%d\n", b.a.pipe.tokens.count);
    for (int r = 0; r < reps; r++) {
        static const char word[] = " cat";
        double t0;
        app_key(&b.a, 'e');
        app_key(&b.a, APP_KEY_END);
        for (const char *c = word; *c != '\0'; c++)
            app_key(&b.a, (unsigned char)*c);
        t0 = bench_now();
        app_key(&b.a, APP_KEY_ENTER);
        tui_frame(b.t, &b.a);
        times[r] = bench_now() - t0;
    }
    {
        char name[32];
        snprintf(name, sizeof name, "gpt2_view_%d", n);
        bench_report(name, times, reps, NULL);
    }
    printf("gpt2_view_tokens_after\t%d\n", b.a.pipe.tokens.count);
    /* A head ablated and brought back (a) on the last layer, then on the first. */
    for (int layer = b.m.dec.cfg.n_layer - 1; layer >= 0; layer -= b.m.dec.cfg.n_layer - 1) {
        char name[48];
        while (b.a.pipe.layer != layer) {
            app_key(&b.a, b.a.pipe.layer < layer ? '.' : ',');
            tui_frame(b.t, &b.a);
        }
        for (int r = 0; r < reps; r++) {
            double t0 = bench_now();
            app_key(&b.a, 'a');
            tui_frame(b.t, &b.a);
            times[r] = bench_now() - t0;
        }
        snprintf(name, sizeof name, "gpt2_view_ablate_layer%d_%d", layer, n);
        bench_report(name, times, reps, NULL);
        if (layer == 0)
            break;
    }
    bench_view_close(&b);
    return 0;
}

/* ------------------------------------------------------------------ llama */

int
cmd_llama_folder(const char *dir, const char *shape)
{
    const struct llama_shape *s = llama_shape_find(shape);

    if (s == NULL) {
        fprintf(stderr, "bench: no shape %s (%s)\n", shape, llama_shape_names());
        return 2;
    }
    return llama_random_folder(dir, s, 0.05f, 1) == 0 ? 0 : 1;
}

/* n bfloat16 patterns widened into a float32 array of the bench's own (never freed: the model's). */
static const float *
widened(const uint16_t *h, size_t n)
{
    float *f = malloc(n * sizeof *f);

    if (f == NULL) {
        fprintf(stderr, "bench: out of memory\n");
        exit(1);
    }
    for (size_t i = 0; i < n; i++)
        f[i] = tensor_bf16_to_f32(h[i]);
    return f;
}

/*
 * BENCH_F32: the model's bfloat16 matrices as float32 copies, as attnscope
 * kept them before it kept bfloat16 (the comparison in doc/performance.md).
 */
static void
widen_model(struct decoder_model *m)
{
    const size_t table = (size_t)m->cfg.vocab_size * (size_t)m->cfg.d_model;

    for (int l = 0; l < m->cfg.n_layer; l++)
        for (int i = 0; i < DECODER_BLOCK_LINEARS; i++) {
            struct decoder_linear *d = decoder_block_linear(&m->blocks[l], i);
            if (d->w16 != NULL)
                d->w = widened(d->w16, (size_t)d->out * (size_t)d->ld), d->w16 = NULL;
        }
    if (m->tok_embed16 != NULL) {
        const bool tied = m->lm_head16 == m->tok_embed16;
        m->tok_embed = widened(m->tok_embed16, table), m->tok_embed16 = NULL;
        if (tied)
            m->lm_head = m->tok_embed, m->lm_head16 = NULL;
    }
    if (m->lm_head16 != NULL)
        m->lm_head = widened(m->lm_head16, table), m->lm_head16 = NULL;
}

/* The Llama-style model in dir into m (its matrices widened under BENCH_F32); 0 or 1. */
static int
open_llama(const char *dir, struct decoder_model *m)
{
    struct attn_error err;

    /* (a .gguf file: read as a file in its folder, as --model reads it) */
    const size_t len = strlen(dir);
    const bool gguf = len > 5 && strcmp(dir + len - 5, ".gguf") == 0;
    char folder[4096];

    snprintf(folder, sizeof folder, "%s", dir);
    if (gguf) {
        char *slash = strrchr(folder, '/');
        if (slash != NULL)
            *slash = '\0';
        else
            snprintf(folder, sizeof folder, ".");
    }
    if (architecture_load(m, folder, &(struct arch_options){ gguf ? dir : NULL, 0, false }, &err) !=
        ATTN_OK) {
        fprintf(stderr, "bench: %s\n", err.msg);
        return 1;
    }
    if (getenv("BENCH_F32") != NULL)
        widen_model(m);
    return 0;
}

int
cmd_llama(const char *dir, int n, int reps)
{
    struct decoder_model m;
    struct attn_error err;
    double times[MAX_REPS], cpu[MAX_REPS];
    const char *slash = strrchr(dir, '/');
    int *ids;

    if (open_llama(dir, &m) != 0)
        return 1;
    if (getenv("BENCH_NO_PACK") == NULL && !decoder_pack(&m))
        return 1;
    (void)decoder_release_unpacked(&m);
    if (reps > MAX_REPS)
        reps = MAX_REPS;
    if (n < 1 || n > m.cfg.n_ctx || (ids = malloc((size_t)n * sizeof *ids)) == NULL)
        return 1;
    for (int i = 0; i < n; i++)
        ids[i] = (i * 7919) % m.cfg.vocab_size;
    for (int r = 0; r < reps; r++) {
        struct decoder_run run;
        const double t0 = bench_now(), c0 = bench_cpu_now();
        if (decoder_forward(&m, ids, n, 5, NULL, &run, &err) != ATTN_OK) {
            fprintf(stderr, "bench: %s\n", err.msg);
            return 1;
        }
        times[r] = bench_now() - t0;
        cpu[r] = bench_cpu_now() - c0;
        decoder_run_destroy(&run);
    }
    {
        char name[96], extra[32];
        qsort(cpu, (size_t)reps, sizeof *cpu, bench_cmp_double);
        snprintf(name, sizeof name, "%s_%d", slash != NULL ? slash + 1 : dir, n);
        snprintf(extra, sizeof extra, "%.3f", cpu[reps / 2] * 1e3);
        bench_report(name, times, reps, extra);
    }
    free(ids);
    decoder_destroy(&m);
    return 0;
}

/* The kB /proc/self/status gives for field ("VmHWM:", "VmRSS:"), or -1. */
static long
status_kb(const char *field)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;

    while (f != NULL && fgets(line, sizeof line, f) != NULL)
        if (strncmp(line, field, strlen(field)) == 0)
            kb = strtol(line + strlen(field), NULL, 10);
    if (f != NULL)
        fclose(f);
    return kb;
}

/*
 * What opening a Llama-style model costs: read (as the model keeps it;
 * BENCH_F32 widens its matrices first), packed a layer at a time as the
 * view does (unless mode is "print": --print and --export never pack),
 * one forward of n tokens; the seconds of each, the weights' bytes, and the
 * process's peak and steady resident set.
 */
int
cmd_llama_open(const char *dir, const char *mode, int n)
{
    struct decoder_model m;
    struct decoder_run run;
    struct attn_error err;
    const bool view = strcmp(mode, "print") != 0;
    double t0 = bench_now(), t_load, t_pack, t_fwd;
    int *ids;

    if (open_llama(dir, &m) != 0)
        return 1;
    t_load = bench_now() - t0;
    t0 = bench_now();
    if (view && !decoder_pack_replacing(&m))
        fprintf(stderr, "bench: not everything was packed\n");
    t_pack = bench_now() - t0;
    if (n < 1 || n > m.cfg.n_ctx || (ids = malloc((size_t)n * sizeof *ids)) == NULL)
        return 1;
    for (int i = 0; i < n; i++)
        ids[i] = (i * 7919) % m.cfg.vocab_size;
    t0 = bench_now();
    if (decoder_forward(&m, ids, n, 5, NULL, &run, &err) != ATTN_OK) {
        fprintf(stderr, "bench: %s\n", err.msg);
        return 1;
    }
    t_fwd = bench_now() - t0;
    printf("open\t%s\t%s\tn %d\tload %.1f s\tpack %.1f s\tforward %.2f s\tweights %zu MiB\t"
           "VmHWM %ld kB\tVmRSS %ld kB\n",
           dir, view ? "view" : "print", n, t_load, t_pack, t_fwd, decoder_weights_bytes(&m) >> 20,
           status_kb("VmHWM:"), status_kb("VmRSS:"));
    decoder_run_destroy(&run);
    free(ids);
    decoder_destroy(&m);
    return 0;
}

