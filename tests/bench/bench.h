/*
 * bench.h: what the benchmark's files share (bench.c: the dispatch, the
 * timing, the core and the view; bench_models.c: trained models' shapes):
 * not part of attnscope.
 */
#ifndef ATTNSCOPE_BENCH_H
#define ATTNSCOPE_BENCH_H

#include <stdio.h>

#include "attnscope/decoder/decoder.h"
#include "attnscope/pipeline/pipeline.h"
#include "front/app/app.h"
#include "tui/tui.h"

#define MAX_REPS 101

/* GPT-2 small's shapes, for every GPT-2 measurement here. */
static const struct decoder_config gpt2_small __attribute__((unused)) = {
    .n_layer = 12, .n_head = 12, .d_model = 768, .n_ctx = 1024, .vocab_size = 50257,
    .d_mlp = 4 * 768, .eps = 1e-5f, .scale_attn_weights = true, .scale_by_layer = false,
    .tied = true,
};

/* The wall clock, in seconds. */
double bench_now(void);
/* The CPU time of the whole process (every thread), in seconds. */
double bench_cpu_now(void);
/* qsort's comparison of two doubles. */
int bench_cmp_double(const void *a, const void *b);
/* Prints "name median min max" in milliseconds, then extra. */
void bench_report(const char *name, double *t, int n, const char *extra);
/* The view on src, drawing into out (the terminal's size from COLUMNS and LINES); NULL: said. */
struct tui *bench_open_view(struct app *a, const struct attention_config *cfg,
                            const struct pipeline_source *src, FILE *in, FILE *out);
/*
 * A model folder's view at 200x50 on a text of about n tokens (ten-token
 * sentences its tokenizer reads), the weights packed as the view packs
 * them, drawing into a scratch file: what the view benchmarks time keys in.
 */
struct bench_view {
    struct model m;
    struct attention_config cfg;
    struct pipeline_source src;
    FILE *in, *out;
    char *sentence;
    struct app a;
    struct tui *t;
};
int bench_view_open(struct bench_view *b, const char *dir, int n); /* 0, or -1 said */
void bench_view_close(struct bench_view *b);

/* The commands bench_models.c runs (bench.c's opening comment says what each measures). */
int cmd_gpt2_folder(const char *dir);
int cmd_gpt2(int n, int reps);
int cmd_gpt2_edit(int n, int reps);
int cmd_gpt2_view(const char *dir, int n, int reps);
int cmd_llama_folder(const char *dir, const char *shape);
int cmd_llama(const char *dir, int n, int reps);
int cmd_llama_open(const char *dir, const char *mode, int n);
/* bench_generate.c */
int cmd_generate(const char *dir, int n, int count, int rounds);
int cmd_bpe_tokenizer(const char *vocab_dir, int size, const char *out);
int cmd_generate_view(const char *dir, int n, int reps);

#endif
